//! `chmod [-R] MODE FILE...` with octal and symbolic modes. The mode bits
//! live in the host (WASI has none), reached through `Host`.

use super::Process;
use super::quoting::single_quote;
use crate::host::{S_IFDIR, S_IFMT};

/// The umask the sandbox behaves as having; `chmod +w` without a "who"
/// is filtered by it, as in GNU chmod.
const UMASK: u32 = 0o022;

/// One `[ugoa]*[+-=][rwxXst]*` clause.
#[derive(Debug, Clone)]
struct Clause {
    who: u32,
    explicit_who: bool,
    op: char,
    perms: String,
}

/// A parsed mode argument.
#[derive(Debug, Clone)]
enum Mode {
    Octal(u32),
    Symbolic(Vec<Clause>),
}

pub(crate) fn chmod(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let mut recursive = false;
    let mut verbose = false;
    let mut rest = Vec::new();
    for arg in argv.get(1..).unwrap_or_default() {
        match arg.as_str() {
            "-R" | "--recursive" => recursive = true,
            "-v" | "--verbose" | "-c" | "--changes" => verbose = true,
            "-f" | "--silent" | "--quiet" => {}
            _ => rest.push(arg.clone()),
        }
    }
    let Some(mode_text) = rest.first() else {
        p.error("missing operand");
        p.try_help("chmod");
        return 1;
    };
    let Some(mode) = parse_mode(mode_text) else {
        p.error(&format!("invalid mode: {}", p.quote(mode_text)));
        p.try_help("chmod");
        return 1;
    };
    let files = rest.get(1..).unwrap_or_default();
    if files.is_empty() {
        p.error(&format!("missing operand after {}", p.quote(mode_text)));
        p.try_help("chmod");
        return 1;
    }
    let mut status = 0;
    for name in files {
        status |= change(p, name, &mode, recursive, verbose);
    }
    status
}

fn change(p: &Process<'_>, name: &str, mode: &Mode, recursive: bool, verbose: bool) -> i32 {
    let path = p.host_path(name);
    let current = match p.host.get_mode(&path, true) {
        Ok(m) => m,
        Err(e) => {
            p.error(&format!(
                "cannot access {}: {}",
                single_quote(name),
                e.message()
            ));
            return 1;
        }
    };
    let is_dir = current & S_IFMT == S_IFDIR;
    let new = apply(mode, current & 0o7777, is_dir);
    if let Err(e) = p.host.set_mode(&path, new) {
        p.error(&format!(
            "changing permissions of {}: {}",
            single_quote(name),
            e.message()
        ));
        return 1;
    }
    if verbose && new != current & 0o7777 {
        p.out(
            format!(
                "mode of {} changed from {:04o} to {:04o}\n",
                single_quote(name),
                current & 0o7777,
                new
            )
            .as_bytes(),
        );
    }
    let mut status = 0;
    if recursive && is_dir {
        let Ok(entries) = std::fs::read_dir(p.resolve(name)) else {
            return 1;
        };
        let mut names: Vec<String> = entries
            .filter_map(Result::ok)
            .filter_map(|e| e.file_name().into_string().ok())
            .collect();
        names.sort();
        for child in names {
            status |= change(
                p,
                &format!("{}/{child}", name.trim_end_matches('/')),
                mode,
                recursive,
                verbose,
            );
        }
    }
    status
}

/// The permission bits a mode operand (`700`, `g+w`) gives a folder
/// `mkdir -m` makes: applied to `a=rwx`, as GNU's mkdir does.
pub(crate) fn mode_for_new(text: &str, is_dir: bool) -> Option<u32> {
    parse_mode(text).map(|m| apply(&m, 0o777, is_dir))
}

/// A mode as `install -m` and `mkdir -m` compute it: applied to 0, with
/// no umask filtering of clauses that name no class.
pub(crate) fn absolute_mode(text: &str, is_dir: bool) -> Option<u32> {
    let mut mode = parse_mode(text)?;
    if let Mode::Symbolic(clauses) = &mut mode {
        for c in clauses.iter_mut() {
            c.explicit_who = true;
        }
    }
    Some(apply(&mode, 0, is_dir))
}

fn parse_mode(text: &str) -> Option<Mode> {
    if !text.is_empty() && text.chars().all(|c| c.is_digit(8)) {
        let value = u32::from_str_radix(text, 8).ok()?;
        return (value <= 0o7777).then_some(Mode::Octal(value));
    }
    let mut clauses = Vec::new();
    for part in text.split(',') {
        let who_len = part.find(['+', '-', '='])?;
        let (who_text, rest) = part.split_at(who_len);
        let mut who = 0;
        for c in who_text.chars() {
            who |= match c {
                'u' => 0o4700,
                'g' => 0o2070,
                'o' => 0o1007,
                'a' => 0o7777,
                _ => return None,
            };
        }
        // `+x-w` chains several operations on one "who".
        let mut ops = rest.chars().peekable();
        while let Some(op) = ops.next() {
            if !matches!(op, '+' | '-' | '=') {
                return None;
            }
            let mut perms = String::new();
            while let Some(&c) = ops.peek() {
                if matches!(c, '+' | '-' | '=') {
                    break;
                }
                if !"rwxXstugo".contains(c) {
                    return None;
                }
                perms.push(c);
                ops.next();
            }
            let explicit_who = !who_text.is_empty();
            clauses.push(Clause {
                who: if explicit_who { who } else { 0o7777 },
                explicit_who,
                op,
                perms,
            });
        }
    }
    (!clauses.is_empty()).then_some(Mode::Symbolic(clauses))
}

fn apply(mode: &Mode, current: u32, is_dir: bool) -> u32 {
    let clauses = match mode {
        Mode::Octal(value) => return *value,
        Mode::Symbolic(c) => c,
    };
    let mut bits = current;
    for clause in clauses {
        let mut perm = 0;
        for c in clause.perms.chars() {
            perm |= match c {
                'r' => 0o444,
                'w' => 0o222,
                'x' => 0o111,
                'X' if is_dir || bits & 0o111 != 0 => 0o111,
                's' => 0o6000,
                't' => 0o1000,
                'u' => copy_class((bits >> 6) & 7),
                'g' => copy_class((bits >> 3) & 7),
                'o' => copy_class(bits & 7),
                _ => 0,
            };
        }
        let mut mask = clause.who;
        if !clause.explicit_who {
            mask &= !UMASK;
        }
        let change = perm & mask;
        bits = match clause.op {
            '+' => bits | change,
            '-' => bits & !change,
            _ => (bits & !clause.who) | change,
        };
    }
    bits
}

/// `g=u`: the three bits of one class copied to all classes.
fn copy_class(bits: u32) -> u32 {
    bits | (bits << 3) | (bits << 6)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(text: &str, current: u32) -> u32 {
        apply(&parse_mode(text).expect("mode"), current, false)
    }

    #[test]
    fn symbolic_modes() {
        assert_eq!(run("+x", 0o644), 0o755);
        assert_eq!(run("u+x", 0o644), 0o744);
        assert_eq!(run("go-r", 0o644), 0o600);
        assert_eq!(run("a=r", 0o755), 0o444);
        assert_eq!(run("+w", 0o444), 0o644);
        assert_eq!(run("u+x,g+w", 0o644), 0o764);
        assert_eq!(run("755", 0o644), 0o755);
    }

    #[test]
    fn bad_modes_are_refused() {
        assert!(parse_mode("999").is_none());
        assert!(parse_mode("q+x").is_none());
        assert!(parse_mode("").is_none());
    }
}
