//! The wrappers Debian's gzip, bzip2 and xz-utils install around grep,
//! diff, cmp and the pagers: `zgrep`, `zegrep`, `zfgrep`, `zdiff`,
//! `zcmp`, `zless`, `zmore` and their `bz*`, `xz*` and `lz*` twins. Each
//! decompresses its files as `gzip -cdfq` (or `bzip2`, `xz`) would,
//! passing plain files through, and runs the sandbox's own program on
//! the result; the pagers print, as `less` does without a terminal.

use super::codec::{Format, decode, decode_any, detect};
use super::{OperandError, Process, read_operand};
use crate::streams::{Io, Sink, Source};

/// Which decompressor a family runs.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Family {
    Gzip,
    Bzip2,
    Xz,
}

impl Family {
    fn of(name: &str) -> (Self, &str) {
        let base = name.rsplit('/').next().unwrap_or(name);
        if let Some(rest) = base.strip_prefix("bz") {
            (Self::Bzip2, rest)
        } else if let Some(rest) = base.strip_prefix("xz").or_else(|| base.strip_prefix("lz")) {
            (Self::Xz, rest)
        } else {
            (Self::Gzip, base.strip_prefix('z').unwrap_or(base))
        }
    }

    /// The decompressor named in messages.
    fn tool(self) -> &'static str {
        match self {
            Self::Gzip => "gzip",
            Self::Bzip2 => "bzip2",
            Self::Xz => "xz",
        }
    }

    /// `-cdfq`: its own format decoded, anything else as it is.
    fn decompress(self, name: &str, data: &[u8]) -> Result<Vec<u8>, String> {
        let own = match self {
            Self::Gzip => Some(Format::Gzip),
            Self::Bzip2 => Some(Format::Bzip2),
            // xzgrep picks the tool by suffix, then xz for the rest.
            Self::Xz if name.ends_with(".gz") || name.ends_with(".bz2") => None,
            Self::Xz => detect(data).filter(|f| matches!(f, Format::Xz | Format::Lzma)),
        };
        let result = match own {
            Some(f) if detect(data) == Some(f) => decode(f, data),
            Some(_) => Ok(data.to_vec()),
            None => decode_any(data),
        };
        result.map_err(|_| format!("{name}: unexpected end of file"))
    }
}

/// Runs a program of the sandbox on `stdin`, its stdout captured.
fn capture(p: &Process<'_>, argv: &[String], stdin: Vec<u8>) -> (i32, Vec<u8>) {
    let Some(name) = argv.first() else {
        return (2, Vec::new());
    };
    let Some(util) = crate::programs::find(p.host, name) else {
        return (127, Vec::new());
    };
    let out = Sink::memory();
    let io = Io {
        stdin: Source::bytes(stdin),
        stdout: std::rc::Rc::clone(&out),
        stderr: std::rc::Rc::clone(&p.io.stderr),
        extra: Default::default(),
    };
    let mut child = Process::new(name, p.cwd, p.env, p.host, &io, p.depth + 1);
    let status = util(&mut child, argv);
    let bytes = out.borrow_mut().take();
    (status, bytes)
}

fn load(p: &Process<'_>, family: Family, name: &str) -> Result<Vec<u8>, i32> {
    let data = if name == "-" {
        p.io.stdin.borrow_mut().read_all()
    } else {
        match read_operand(p, name) {
            Ok(d) => d,
            Err(OperandError::Directory) => {
                p.io.err_line(&format!("{}: {name} is a directory", family.tool()));
                return Err(2);
            }
            Err(OperandError::Io(e)) => {
                p.io.err_line(&format!("{}: {name}: {e}", family.tool()));
                return Err(2);
            }
        }
    };
    family.decompress(name, &data).map_err(|msg| {
        p.io.err_line(&format!("{}: {msg}", family.tool()));
        2
    })
}

pub(crate) fn zgrep(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let invoked = argv.first().cloned().unwrap_or_default();
    let (family, rest) = Family::of(&invoked);
    let grep = match rest {
        "egrep" => vec!["grep".to_string(), "-E".to_string()],
        "fgrep" => vec!["grep".to_string(), "-F".to_string()],
        _ => vec!["grep".to_string()],
    };
    // grep's options with a value, so the pattern is found correctly.
    const WITH_VALUE: &str = "efmABCdD";
    let mut opts: Vec<String> = Vec::new();
    let mut operands: Vec<String> = Vec::new();
    let mut have_pattern = false;
    let (mut list, mut count, mut no_name, mut with_name) = (false, false, false, false);
    let mut args = argv.iter().skip(1);
    let mut only_operands = false;
    while let Some(a) = args.next() {
        if only_operands || !a.starts_with('-') || a == "-" {
            operands.push(a.clone());
            continue;
        }
        if a == "--" {
            only_operands = true;
            continue;
        }
        if a.starts_with("--") {
            match a.as_str() {
                "--files-with-matches" => list = true,
                "--count" => count = true,
                "--no-filename" => no_name = true,
                "--with-filename" => with_name = true,
                _ => {}
            }
            have_pattern |= a.starts_with("--regexp=") || a.starts_with("--file=");
            if a != "--with-filename" {
                opts.push(a.clone());
            }
            continue;
        }
        // The names are added here, not by grep (which reads stdin).
        let kept: String = a.chars().filter(|&c| c != 'H').collect();
        if kept.len() > 1 {
            opts.push(kept);
        }
        for (i, c) in a.chars().skip(1).enumerate() {
            match c {
                'l' => list = true,
                'c' => count = true,
                'h' => no_name = true,
                'H' => with_name = true,
                _ => {}
            }
            if WITH_VALUE.contains(c) {
                if c == 'e' || c == 'f' {
                    have_pattern = true;
                }
                if i + 2 == a.len()
                    && let Some(v) = args.next()
                {
                    opts.push(v.clone());
                }
                break;
            }
        }
    }
    if !have_pattern {
        if operands.is_empty() {
            p.io.err_line(&format!(
                "/usr/bin/{invoked}: 188: 1: missing pattern; try `/usr/bin/{invoked} --help' for help"
            ));
            return 2;
        }
        opts.push("-e".to_string());
        opts.push(operands.remove(0));
    }
    if operands.is_empty() {
        operands.push("-".to_string());
    }
    let prefix = !no_name && (with_name || operands.len() > 1);
    let mut status = 1;
    let mut out = Vec::new();
    for name in &operands {
        let data = match load(p, family, name) {
            Ok(d) => d,
            Err(s) => {
                status = s.max(status);
                continue;
            }
        };
        let mut cmd = grep.clone();
        cmd.extend(opts.iter().cloned());
        let (s, found) = capture(p, &cmd, data);
        let shown = if name == "-" {
            "(standard input)"
        } else {
            name.as_str()
        };
        if list {
            if s == 0 {
                out.extend(format!("{shown}\n").bytes());
            }
        } else if prefix && (!found.is_empty() || count) {
            for line in found.split_inclusive(|&b| b == b'\n') {
                out.extend(format!("{shown}:").bytes());
                out.extend_from_slice(line);
            }
        } else {
            out.extend_from_slice(&found);
        }
        status = match (status, s) {
            (_, 0) if status != 2 => 0,
            (2, _) | (_, 2) => 2,
            (st, _) => st,
        };
    }
    crate::programs::coreutils::write_all(p, &out);
    status
}

/// `zless`, `zmore`: the decompressed files, one after the other.
pub(crate) fn zmore(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let (family, pager) = Family::of(argv.first().map_or("zmore", String::as_str));
    let more = pager == "more";
    let mut names: Vec<String> = argv
        .iter()
        .skip(1)
        .filter(|a| !a.starts_with('-') || a.as_str() == "-")
        .cloned()
        .collect();
    if names.is_empty() {
        names.push("-".to_string());
    }
    let mut status = 0;
    let headers = more && names.len() > 1;
    for n in &names {
        match load(p, family, n) {
            Ok(d) => {
                if headers {
                    let h = format!("::::::::::::::\n{n}\n::::::::::::::\n");
                    crate::programs::coreutils::write_all(p, h.as_bytes());
                }
                crate::programs::coreutils::write_all(p, &d);
            }
            Err(s) => status = s,
        }
    }
    status
}

/// `zdiff`, `zcmp`: diff or cmp of the decompressed files. As in the
/// real scripts, the first file is `/dev/fd/5` and the second `-` when
/// both are compressed; with one file, FILE.gz is compared with FILE.
pub(crate) fn zdiff(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let invoked = argv.first().cloned().unwrap_or_default();
    let (family, rest) = Family::of(&invoked);
    let tool = if rest == "cmp" { "cmp" } else { "diff" };
    let (opts, files): (Vec<String>, Vec<String>) = argv
        .iter()
        .skip(1)
        .cloned()
        .partition(|a| a.starts_with('-') && a != "-");
    let (first, second) = match files.as_slice() {
        [one] => {
            let stem = [".gz", ".bz2", ".xz", ".lzma", ".z", ".Z"]
                .iter()
                .find_map(|s| one.strip_suffix(s))
                .unwrap_or(one);
            (one.clone(), stem.to_string())
        }
        [a, b] => (a.clone(), b.clone()),
        _ => {
            p.io.err_line(&format!(
                "{invoked}: invalid number of operands; try `{invoked} --help' for help"
            ));
            return 2;
        }
    };
    let a = match load(p, family, &first) {
        Ok(d) => d,
        Err(s) => return s,
    };
    let second_raw = read_operand(p, &second).ok();
    let compressed = second_raw.as_deref().and_then(detect).is_some();
    let mut cmd = vec![tool.to_string()];
    cmd.extend(opts);
    if compressed {
        let b = match load(p, family, &second) {
            Ok(d) => d,
            Err(s) => return s,
        };
        // The first goes through a scratch file shown as /dev/fd/5.
        // A scratch file under $TMPDIR (WASI has no temp_dir or pid).
        let tmp = p.var("TMPDIR").filter(|t| !t.is_empty()).unwrap_or("/tmp");
        let tag = {
            use std::hash::{BuildHasher, Hasher};
            let mut h = std::collections::hash_map::RandomState::new().build_hasher();
            h.write_usize(a.len());
            h.finish()
        };
        let scratch = p.resolve(&format!("{tmp}/zdiff.{tag:016x}"));
        let scratch_name = scratch.to_string_lossy().into_owned();
        if std::fs::write(&scratch, &a).is_err() {
            p.io.err_line(&format!("{invoked}: cannot create a temporary file"));
            return 2;
        }
        cmd.push(scratch_name.clone());
        cmd.push("-".to_string());
        let (status, out) = capture(p, &cmd, b);
        let _ = std::fs::remove_file(&scratch);
        let text = String::from_utf8_lossy(&out).replace(&scratch_name, "/dev/fd/5");
        crate::programs::coreutils::write_all(p, text.as_bytes());
        return status;
    }
    cmd.push("-".to_string());
    cmd.push(second);
    let (status, out) = capture(p, &cmd, a);
    crate::programs::coreutils::write_all(p, &out);
    status
}
