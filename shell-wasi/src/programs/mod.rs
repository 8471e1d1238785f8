//! The programs of the sandbox's `/usr/bin`, implemented in-process.
//!
//! A utility sees only what a real process would: its arguments, the
//! exported environment, the working folder, the host and three
//! descriptors (`Process`). It cannot change the shell, which is why `cd`
//! and `export` are builtins and these are not. Several are also bash
//! builtins (`echo`, `printf`, `pwd`, `test`, `true`, `false`); the builtin
//! table reuses them with bash's error prefix.

pub(crate) mod bc;
pub(crate) mod cat;
pub(crate) mod chmod;
pub(crate) mod compress;
pub(crate) mod coreutils;
pub(crate) mod devices;
pub(crate) mod dump;
pub(crate) mod echo;
pub(crate) mod env;
pub(crate) mod escapes;
pub(crate) mod external;
pub(crate) mod fileops;
pub(crate) mod glibc;
pub(crate) mod ident;
pub(crate) mod ls;
pub(crate) mod net;
pub(crate) mod printf;
pub(crate) mod procps;
pub(crate) mod quoting;
pub(crate) mod shell;
pub(crate) mod size;
pub(crate) mod test;
pub(crate) mod textproc;
pub(crate) mod timefmt;
pub(crate) mod which;
pub(crate) mod zip;

use std::path::PathBuf;
use std::rc::Rc;

use crate::host::Host;
use crate::streams::Io;

/// A utility's entry point: `argv[0]` is the name it was invoked by.
pub(crate) type UtilityFn = fn(&mut Process<'_>, &[String]) -> i32;

/// Everything a utility may touch.
pub(crate) struct Process<'a> {
    /// How error messages start: `ls` or `bash: line 1: printf`.
    pub(crate) prefix: String,
    pub(crate) cwd: &'a str,
    pub(crate) env: &'a [(String, String)],
    pub(crate) host: &'a Rc<dyn Host>,
    pub(crate) io: &'a Io,
    /// Nesting of the shell that started us (for `bash -c` in `bash -c`).
    pub(crate) depth: usize,
}

impl<'a> Process<'a> {
    pub(crate) fn new(
        name: &str,
        cwd: &'a str,
        env: &'a [(String, String)],
        host: &'a Rc<dyn Host>,
        io: &'a Io,
        depth: usize,
    ) -> Self {
        Self {
            prefix: name.to_string(),
            cwd,
            env,
            host,
            io,
            depth,
        }
    }

    /// Writes to stdout; false once the reader is gone.
    pub(crate) fn out(&self, bytes: &[u8]) -> bool {
        self.io.out(bytes)
    }

    /// `PREFIX: MESSAGE` on stderr.
    pub(crate) fn error(&self, msg: &str) {
        self.io.err_line(&format!("{}: {msg}", self.prefix));
    }

    /// GNU's usage hint after a bad option.
    pub(crate) fn try_help(&self, name: &str) {
        self.io
            .err_line(&format!("Try '{name} --help' for more information."));
    }

    pub(crate) fn var(&self, name: &str) -> Option<&str> {
        self.env
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// Whether `name` is this process's own stdin (`-`, `/dev/stdin`,
    /// `/dev/fd/0`): in a pipeline that is the previous stage's output,
    /// which only the shell holds, not the filesystem.
    pub(crate) fn is_stdin(name: &str) -> bool {
        matches!(name, "-" | "/dev/stdin" | "/dev/fd/0")
    }

    /// A path as the process sees it.
    pub(crate) fn resolve(&self, path: &str) -> PathBuf {
        crate::interp::resolve_in(self.cwd, path)
    }

    /// Absolute, normalized path for the host's metadata calls.
    pub(crate) fn host_path(&self, path: &str) -> String {
        crate::interp::normalize(self.cwd, path)
    }

    /// `‘name’` or `'name'`, as GNU's quote() does in this locale.
    pub(crate) fn quote(&self, text: &str) -> String {
        quoting::quote(text, self.env)
    }
}

/// A table of utilities, sorted by name for binary search. Each family of
/// utilities (`coreutils/`, `textproc/`, …) keeps its own table, so they
/// grow independently.
pub(crate) type Table = &'static [(&'static str, UtilityFn)];

/// Every table the shell looks a program up in.
const TABLES: &[Table] = &[
    UTILITIES,
    bc::TABLE,
    compress::TABLE,
    coreutils::TABLE,
    dump::TABLE,
    glibc::TABLE,
    procps::TABLE,
    textproc::TABLE,
    zip::TABLE,
];

/// The shell's own first utilities. Sorted for binary search.
const UTILITIES: Table = &[
    ("[", test::bracket),
    ("bash", shell::bash),
    ("cat", cat::cat),
    ("chmod", chmod::chmod),
    ("curl", net::curl),
    ("echo", echo::echo),
    ("env", env::env),
    ("false", ident::false_),
    ("id", ident::id),
    // A pager with no terminal prints its input, as less does when piped.
    ("less", cat::cat),
    ("ls", ls::ls),
    ("mkdir", fileops::mkdir),
    // The sandbox's offline pip lives in python3 (`python3 -m pip`).
    ("pip", external::pip),
    ("pip3", external::pip),
    ("printenv", env::printenv),
    ("printf", printf::printf),
    ("pwd", ident::pwd),
    ("rm", fileops::rm),
    ("rmdir", fileops::rmdir),
    ("sh", shell::bash),
    // Debian's sqlite3 command line, run by python3's sqlite3 module.
    ("sqlite3", external::sqlite3),
    ("test", test::test),
    ("touch", fileops::touch),
    ("true", ident::true_),
    ("wget", net::wget),
    ("which", which::which),
    ("whoami", ident::whoami),
];

/// The utility called `name`, if the sandbox has one.
pub(crate) fn lookup(name: &str) -> Option<UtilityFn> {
    TABLES.iter().find_map(|table| {
        table
            .binary_search_by(|(n, _)| n.cmp(&name))
            .ok()
            .and_then(|i| table.get(i))
            .map(|(_, f)| *f)
    })
}

/// Every utility name, sorted: what the sandbox's `/usr/bin` holds.
pub(crate) fn names() -> Vec<&'static str> {
    let mut all: Vec<&str> = TABLES
        .iter()
        .flat_map(|t| t.iter().map(|(n, _)| *n))
        .collect();
    all.sort_unstable();
    all
}

/// The program called `name`: one of ours, or one the host runs as its own
/// component (`python3`, …).
pub(crate) fn find(host: &Rc<dyn Host>, name: &str) -> Option<UtilityFn> {
    lookup(name).or_else(|| {
        host.programs()
            .iter()
            .any(|p| p == name)
            .then_some(external::run as UtilityFn)
    })
}

/// Splits GNU-style arguments into short flags and operands: `-la` is
/// `l`, `a`; `--` ends options; `-` alone is an operand. Long options are
/// returned with their `--`.
pub(crate) fn parse_flags(args: &[String]) -> (Vec<String>, Vec<String>) {
    let mut flags = Vec::new();
    let mut operands = Vec::new();
    let mut only_operands = false;
    for arg in args {
        if only_operands || arg == "-" || !arg.starts_with('-') {
            operands.push(arg.clone());
        } else if arg == "--" {
            only_operands = true;
        } else if arg.starts_with("--") {
            flags.push(arg.clone());
        } else {
            flags.extend(arg.chars().skip(1).map(String::from));
        }
    }
    (flags, operands)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_are_sorted_and_disjoint() {
        for table in TABLES {
            assert!(table.windows(2).all(|w| w[0].0 < w[1].0));
        }
        let mut all: Vec<&str> = TABLES
            .iter()
            .flat_map(|t| t.iter().map(|(n, _)| *n))
            .collect();
        let total = all.len();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), total, "a name is in two tables");
        assert!(lookup("ls").is_some());
        assert!(lookup("python3").is_none());
    }

    #[test]
    fn flags_split_gnu_style() {
        let args: Vec<String> = ["-la", "x", "--", "-r"]
            .iter()
            .map(ToString::to_string)
            .collect();
        let (flags, operands) = parse_flags(&args);
        assert_eq!(flags, vec!["l", "a"]);
        assert_eq!(operands, vec!["x", "-r"]);
    }
}
