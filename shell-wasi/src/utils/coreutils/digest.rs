//! `md5sum`, `sha1sum`, `sha256sum`, `sha512sum`: `HASH  NAME` lines,
//! `-b` (`*NAME`), and `-c` checking with `--quiet`, `--status`,
//! `--strict` and GNU's summary warnings.

use sha2::Digest;

use super::Process;
use super::args::{HasArg, Spec};
use crate::errors::strerror;

/// Which algorithm a utility computes.
#[derive(Debug, Clone, Copy)]
enum Algo {
    Md5,
    Sha1,
    Sha256,
    Sha512,
}

impl Algo {
    fn hex(self, data: &[u8]) -> String {
        let bytes: Vec<u8> = match self {
            Self::Md5 => md5::Md5::digest(data).to_vec(),
            Self::Sha1 => sha1::Sha1::digest(data).to_vec(),
            Self::Sha256 => sha2::Sha256::digest(data).to_vec(),
            Self::Sha512 => sha2::Sha512::digest(data).to_vec(),
        };
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    fn hex_len(self) -> usize {
        match self {
            Self::Md5 => 32,
            Self::Sha1 => 40,
            Self::Sha256 => 64,
            Self::Sha512 => 128,
        }
    }
}

pub(crate) fn md5sum(p: &mut Process<'_>, argv: &[String]) -> i32 {
    run(p, argv, Algo::Md5)
}

pub(crate) fn sha1sum(p: &mut Process<'_>, argv: &[String]) -> i32 {
    run(p, argv, Algo::Sha1)
}

pub(crate) fn sha256sum(p: &mut Process<'_>, argv: &[String]) -> i32 {
    run(p, argv, Algo::Sha256)
}

pub(crate) fn sha512sum(p: &mut Process<'_>, argv: &[String]) -> i32 {
    run(p, argv, Algo::Sha512)
}

const SPEC: Spec<'static> = Spec {
    short: "bctwz",
    long: &[
        ("binary", 'b', HasArg::No),
        ("check", 'c', HasArg::No),
        ("text", 't', HasArg::No),
        ("warn", 'w', HasArg::No),
        ("zero", 'z', HasArg::No),
        ("quiet", 'q', HasArg::No),
        ("status", 's', HasArg::No),
        ("strict", 'S', HasArg::No),
        ("tag", 'T', HasArg::No),
        ("ignore-missing", 'i', HasArg::No),
    ],
};

fn run(p: &mut Process<'_>, argv: &[String], algo: Algo) -> i32 {
    let args = match super::parse_args(p, &SPEC, argv, 1) {
        Ok(a) => a,
        Err(status) => return status,
    };
    let mut names = args.operands.clone();
    if names.is_empty() {
        names.push("-".to_string());
    }
    if args.has('c') {
        let mut status = 0;
        for name in &names {
            status = status.max(check(p, algo, name, &args));
        }
        return status;
    }
    let marker = if args.has('b') { "*" } else { " " };
    let mut status = 0;
    for name in &names {
        match super::read_input(p, name) {
            Ok(data) => {
                let line = format!("{} {marker}{name}\n", algo.hex(&data));
                if !p.out(line.as_bytes()) {
                    return status;
                }
            }
            Err(e) => {
                super::file_error(p, name, &e);
                status = 1;
            }
        }
    }
    status
}

/// `-c FILE`: verifies each `HASH  NAME` line.
fn check(p: &Process<'_>, algo: Algo, list: &str, args: &super::args::Parsed) -> i32 {
    let data = match super::read_input(p, list) {
        Ok(d) => d,
        Err(e) => {
            super::file_error(p, list, &e);
            return 1;
        }
    };
    let quiet = args.has('q');
    let silent = args.has('s');
    let shown_list = if list == "-" { "standard input" } else { list };
    let (mut ok_lines, mut failed, mut unreadable, mut malformed) = (0, 0, 0, 0);
    let text = String::from_utf8_lossy(&data);
    for line in text.lines() {
        let Some((hash, name)) = parse_line(line, algo.hex_len()) else {
            malformed += 1;
            continue;
        };
        ok_lines += 1;
        match super::read_input(p, name) {
            Ok(content) => {
                if algo.hex(&content).eq_ignore_ascii_case(hash) {
                    if !quiet && !silent {
                        p.out(format!("{name}: OK\n").as_bytes());
                    }
                } else {
                    failed += 1;
                    if !silent {
                        p.out(format!("{name}: FAILED\n").as_bytes());
                    }
                }
            }
            Err(e) => {
                unreadable += 1;
                if !silent {
                    p.error(&format!("{name}: {}", strerror(&e)));
                    p.out(format!("{name}: FAILED open or read\n").as_bytes());
                }
            }
        }
    }
    if ok_lines == 0 {
        p.error(&format!(
            "{shown_list}: no properly formatted checksum lines found"
        ));
        return 1;
    }
    if !silent {
        let plural = |n: usize, one: &str, many: &str| {
            if n == 1 {
                one.to_string()
            } else {
                many.to_string()
            }
        };
        if malformed > 0 {
            p.error(&format!(
                "WARNING: {malformed} {} improperly formatted",
                plural(malformed, "line is", "lines are")
            ));
        }
        if unreadable > 0 {
            p.error(&format!(
                "WARNING: {unreadable} listed {} could not be read",
                plural(unreadable, "file", "files")
            ));
        }
        if failed > 0 {
            p.error(&format!(
                "WARNING: {failed} computed {} did NOT match",
                plural(failed, "checksum", "checksums")
            ));
        }
    }
    let strict_fail = args.has('S') && malformed > 0;
    i32::from(failed > 0 || unreadable > 0 || strict_fail)
}

/// `HASH  NAME`, `HASH *NAME`, or the BSD `ALGO (NAME) = HASH`.
fn parse_line(line: &str, hex_len: usize) -> Option<(&str, &str)> {
    if let Some((head, hash)) = line.rsplit_once(") = ")
        && let Some((_, name)) = head.split_once(" (")
    {
        return (hash.len() == hex_len).then_some((hash, name));
    }
    let hash = line.get(..hex_len)?;
    if !hash.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    let rest = line.get(hex_len..)?;
    let name = rest
        .strip_prefix("  ")
        .or_else(|| rest.strip_prefix(" *"))?;
    (!name.is_empty()).then_some((hash, name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_digests() {
        assert_eq!(Algo::Md5.hex(b""), "d41d8cd98f00b204e9800998ecf8427e");
        assert_eq!(
            Algo::Sha1.hex(b"hi\n"),
            "55ca6286e3e4f4fba5d0448333fa99fc5a404a73"
        );
        assert_eq!(Algo::Sha256.hex(b"").len(), 64);
    }

    #[test]
    fn check_lines_parse() {
        let h = "d41d8cd98f00b204e9800998ecf8427e";
        assert_eq!(parse_line(&format!("{h}  a b"), 32), Some((h, "a b")));
        assert_eq!(parse_line(&format!("{h} *x"), 32), Some((h, "x")));
        assert_eq!(parse_line("abc  nope", 32), None);
    }
}
