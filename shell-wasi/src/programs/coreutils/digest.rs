//! `md5sum`, `sha1sum`, `sha224sum`, `sha256sum`, `sha384sum`,
//! `sha512sum`, `b2sum` (`-l BITS`) and the digest side of `cksum -a`:
//! `HASH  NAME` lines (or `ALGO (NAME) = HASH` with `--tag`), GNU's
//! escaping of names with backslashes or newlines, `-z`, and `-c`
//! checking with `--quiet`, `--status`, `--strict`, `--ignore-missing`,
//! `-w` and GNU's summary warnings.

use blake2::digest::{Update, VariableOutput};
use sha2::Digest;

use super::Process;
use super::args::{HasArg, Parsed, Spec};
use crate::errors::strerror;

/// Which digest a utility computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Algo {
    Md5,
    Sha1,
    Sha224,
    Sha256,
    Sha384,
    Sha512,
    /// BLAKE2b with this many output bytes (1..=64).
    Blake2b(usize),
    Sm3,
}

impl Algo {
    pub(crate) fn digest(self, data: &[u8]) -> Vec<u8> {
        match self {
            Self::Md5 => md5::Md5::digest(data).to_vec(),
            Self::Sha1 => sha1::Sha1::digest(data).to_vec(),
            Self::Sha224 => sha2::Sha224::digest(data).to_vec(),
            Self::Sha256 => sha2::Sha256::digest(data).to_vec(),
            Self::Sha384 => sha2::Sha384::digest(data).to_vec(),
            Self::Sha512 => sha2::Sha512::digest(data).to_vec(),
            Self::Blake2b(len) => {
                let mut out = vec![0u8; len];
                if let Ok(mut h) = blake2::Blake2bVar::new(len) {
                    h.update(data);
                    let _ = h.finalize_variable(&mut out);
                }
                out
            }
            Self::Sm3 => sm3::Sm3::digest(data).to_vec(),
        }
    }

    fn hex(self, data: &[u8]) -> String {
        self.digest(data)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    fn hex_len(self) -> usize {
        match self {
            Self::Md5 => 32,
            Self::Sha1 => 40,
            Self::Sha224 => 56,
            Self::Sha256 | Self::Sm3 => 64,
            Self::Sha384 => 96,
            Self::Sha512 => 128,
            Self::Blake2b(len) => len * 2,
        }
    }

    /// The name `--tag` lines start with.
    fn tag(self) -> String {
        match self {
            Self::Md5 => "MD5".into(),
            Self::Sha1 => "SHA1".into(),
            Self::Sha224 => "SHA224".into(),
            Self::Sha256 => "SHA256".into(),
            Self::Sha384 => "SHA384".into(),
            Self::Sha512 => "SHA512".into(),
            Self::Blake2b(64) => "BLAKE2b".into(),
            Self::Blake2b(len) => format!("BLAKE2b-{}", len * 8),
            Self::Sm3 => "SM3".into(),
        }
    }
}

pub(crate) fn md5sum(p: &mut Process<'_>, argv: &[String]) -> i32 {
    run(p, argv, Algo::Md5)
}

pub(crate) fn sha1sum(p: &mut Process<'_>, argv: &[String]) -> i32 {
    run(p, argv, Algo::Sha1)
}

pub(crate) fn sha224sum(p: &mut Process<'_>, argv: &[String]) -> i32 {
    run(p, argv, Algo::Sha224)
}

pub(crate) fn sha256sum(p: &mut Process<'_>, argv: &[String]) -> i32 {
    run(p, argv, Algo::Sha256)
}

pub(crate) fn sha384sum(p: &mut Process<'_>, argv: &[String]) -> i32 {
    run(p, argv, Algo::Sha384)
}

pub(crate) fn sha512sum(p: &mut Process<'_>, argv: &[String]) -> i32 {
    run(p, argv, Algo::Sha512)
}

pub(crate) fn b2sum(p: &mut Process<'_>, argv: &[String]) -> i32 {
    run(p, argv, Algo::Blake2b(64))
}

const SPEC: Spec<'static> = Spec {
    short: "bctwzl:",
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
        ("length", 'l', HasArg::Yes),
    ],
};

/// `-l BITS` for BLAKE2b: bytes, or GNU's two messages.
pub(crate) fn blake2_length(p: &Process<'_>, text: &str) -> Result<usize, i32> {
    let bits = text.trim().parse::<u64>().ok().filter(|&b| b <= 512);
    match bits {
        Some(0) => Ok(64),
        Some(b) if b % 8 == 0 => Ok(usize::try_from(b / 8).unwrap_or(64)),
        Some(_) => {
            p.error(&format!("invalid length: {}", p.quote(text)));
            p.error("length is not a multiple of 8");
            Err(1)
        }
        None => {
            p.error(&format!("invalid length: {}", p.quote(text)));
            p.error(&format!(
                "maximum digest length for {} is 512 bits",
                p.quote("BLAKE2b")
            ));
            Err(1)
        }
    }
}

fn run(p: &mut Process<'_>, argv: &[String], algo: Algo) -> i32 {
    let args = match super::parse_args(p, &SPEC, argv, 1) {
        Ok(a) => a,
        Err(status) => return status,
    };
    let mut algo = algo;
    if let Some(l) = args.value('l') {
        if !matches!(algo, Algo::Blake2b(_)) {
            return super::usage(p, "invalid option -- 'l'", 1);
        }
        match blake2_length(p, l) {
            Ok(len) => algo = Algo::Blake2b(len),
            Err(status) => return status,
        }
    }
    let tag = args.has('T');
    if tag && args.has('c') {
        return super::usage(
            p,
            "the --tag option is meaningless when verifying checksums",
            1,
        );
    }
    if let Err(status) = meaningful_only_when_checking(p, &args) {
        return status;
    }
    digest_files(p, &args, algo, tag)
}

/// Prints or checks the digests of the operands (stdin when none); the
/// shared body of the `*sum` programs and `cksum -a`.
pub(crate) fn digest_files(p: &Process<'_>, args: &Parsed, algo: Algo, tag: bool) -> i32 {
    if args.has('c') {
        return check_files(p, args, Some(algo));
    }
    let mut names = args.operands.clone();
    if names.is_empty() {
        names.push("-".to_string());
    }
    let marker = if args.has('b') { "*" } else { " " };
    let end = if args.has('z') { '\0' } else { '\n' };
    let mut status = 0;
    let mut out = String::new();
    for name in &names {
        match super::read_input(p, name) {
            Ok(data) => {
                let hash = algo.hex(&data);
                // Names with a backslash or newline are escaped, and the
                // line starts with a backslash to say so (not with -z).
                let escape = end == '\n' && name.contains(['\\', '\n']);
                let shown = if escape {
                    name.replace('\\', "\\\\").replace('\n', "\\n")
                } else {
                    name.clone()
                };
                let lead = if escape { "\\" } else { "" };
                if tag {
                    out.push_str(&format!("{lead}{} ({shown}) = {hash}{end}", algo.tag()));
                } else {
                    out.push_str(&format!("{lead}{hash} {marker}{shown}{end}"));
                }
            }
            Err(e) => {
                super::write_all(p, std::mem::take(&mut out).as_bytes());
                super::file_error(p, name, &e);
                status = 1;
            }
        }
    }
    super::write_all(p, out.as_bytes());
    status
}

/// GNU refuses the checking options when not checking.
pub(crate) fn meaningful_only_when_checking(p: &Process<'_>, args: &Parsed) -> Result<(), i32> {
    if args.has('c') {
        return Ok(());
    }
    for (key, option) in [
        ('i', "--ignore-missing"),
        ('s', "--status"),
        ('w', "--warn"),
    ] {
        if args.has(key) {
            let msg = format!("the {option} option is meaningful only when verifying checksums");
            return Err(super::usage(p, &msg, 1));
        }
    }
    Ok(())
}

fn plural(n: usize, one: &str, many: &str) -> String {
    if n == 1 {
        one.to_string()
    } else {
        many.to_string()
    }
}

/// `-c`: verifies every listed checksum; with no algorithm (`cksum -c`)
/// each line's tag names its own.
pub(crate) fn check_files(p: &Process<'_>, args: &Parsed, algo: Option<Algo>) -> i32 {
    let mut names = args.operands.clone();
    if names.is_empty() {
        names.push("-".to_string());
    }
    let mut status = 0;
    for name in &names {
        status = status.max(check(p, algo, name, args));
    }
    status
}

/// `-c FILE`: verifies each checksum line.
fn check(p: &Process<'_>, algo: Option<Algo>, list: &str, args: &Parsed) -> i32 {
    let data = match super::read_input(p, list) {
        Ok(d) => d,
        Err(e) => {
            super::file_error(p, list, &e);
            return 1;
        }
    };
    let quiet = args.has('q');
    let silent = args.has('s');
    let warn = args.has('w');
    let ignore_missing = args.has('i');
    let shown_list = if list == "-" { "standard input" } else { list };
    let (mut ok_lines, mut matched, mut failed, mut unreadable, mut malformed) = (0, 0, 0, 0, 0);
    let text = String::from_utf8_lossy(&data);
    let mut out = String::new();
    for (number, line) in text.lines().enumerate() {
        let Some((line_algo, hash, name)) = parse_line(line, algo) else {
            malformed += 1;
            if warn {
                p.error(&format!(
                    "{shown_list}: {}: improperly formatted {} checksum line",
                    number + 1,
                    algo.map_or("", algo_name)
                ));
            }
            continue;
        };
        ok_lines += 1;
        match super::read_input(p, &name) {
            Ok(content) => {
                if line_algo.hex(&content).eq_ignore_ascii_case(&hash) {
                    matched += 1;
                    if !quiet && !silent {
                        out.push_str(&format!("{name}: OK\n"));
                    }
                } else {
                    failed += 1;
                    if !silent {
                        out.push_str(&format!("{name}: FAILED\n"));
                    }
                }
            }
            Err(e) if ignore_missing && e.kind() == std::io::ErrorKind::NotFound => {
                ok_lines -= 1;
            }
            Err(e) => {
                unreadable += 1;
                if !silent {
                    super::write_all(p, std::mem::take(&mut out).as_bytes());
                    p.error(&format!("{name}: {}", strerror(&e)));
                    out.push_str(&format!("{name}: FAILED open or read\n"));
                }
            }
        }
    }
    super::write_all(p, out.as_bytes());
    if ok_lines == 0 && (matched + failed + unreadable) == 0 {
        if ignore_missing && malformed == 0 && !text.is_empty() {
            p.error(&format!("{shown_list}: no file was verified"));
        } else {
            p.error(&format!(
                "{shown_list}: no properly formatted checksum lines found"
            ));
        }
        return 1;
    }
    if !silent {
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

/// How GNU names the algorithm in `-w` warnings.
fn algo_name(algo: Algo) -> &'static str {
    match algo {
        Algo::Md5 => "MD5",
        Algo::Sha1 => "SHA1",
        Algo::Sha224 => "SHA224",
        Algo::Sha256 => "SHA256",
        Algo::Sha384 => "SHA384",
        Algo::Sha512 => "SHA512",
        Algo::Blake2b(_) => "BLAKE2b",
        Algo::Sm3 => "SM3",
    }
}

/// The algorithm a `--tag` line names (`SHA256`, `BLAKE2b-128`).
fn tag_algo(tag: &str) -> Option<Algo> {
    Some(match tag {
        "MD5" => Algo::Md5,
        "SHA1" => Algo::Sha1,
        "SHA224" => Algo::Sha224,
        "SHA256" => Algo::Sha256,
        "SHA384" => Algo::Sha384,
        "SHA512" => Algo::Sha512,
        "SM3" => Algo::Sm3,
        "BLAKE2b" => Algo::Blake2b(64),
        t => {
            let bits: usize = t.strip_prefix("BLAKE2b-")?.parse().ok()?;
            if bits == 0 || !bits.is_multiple_of(8) || bits > 512 {
                return None;
            }
            Algo::Blake2b(bits / 8)
        }
    })
}

/// `\`-escaped names back to their bytes.
fn unescape(name: &str) -> String {
    let mut out = String::new();
    let mut chars = name.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('n') => out.push('\n'),
                Some('\\') => out.push('\\'),
                Some(other) => {
                    out.push('\\');
                    out.push(other);
                }
                None => out.push('\\'),
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// `HASH  NAME`, `HASH *NAME`, or the BSD `ALGO (NAME) = HASH`; the
/// algorithm is the program's, or for BLAKE2b the line's own length.
fn parse_line(line: &str, algo: Option<Algo>) -> Option<(Algo, String, String)> {
    let (escaped, line) = match line.strip_prefix('\\') {
        Some(rest) => (true, rest),
        None => (false, line),
    };
    let name_of = |n: &str| if escaped { unescape(n) } else { n.to_string() };
    let hex = |h: &str| !h.is_empty() && h.chars().all(|c| c.is_ascii_hexdigit());
    if let Some((head, hash)) = line.rsplit_once(") = ")
        && let Some((tag, name)) = head.split_once(" (")
    {
        let tagged = tag_algo(tag)?;
        let line_algo = match algo {
            None => tagged,
            Some(Algo::Blake2b(_)) if matches!(tagged, Algo::Blake2b(_)) => tagged,
            Some(a) if a == tagged => a,
            Some(_) => return None,
        };
        return (hex(hash) && hash.len() == line_algo.hex_len())
            .then(|| (line_algo, hash.to_string(), name_of(name)));
    }
    let hash_len = line.chars().take_while(char::is_ascii_hexdigit).count();
    let line_algo = match algo? {
        Algo::Blake2b(64) if hash_len % 2 == 0 && hash_len <= 128 && hash_len > 0 => {
            Algo::Blake2b(hash_len / 2)
        }
        a => a,
    };
    let hash = line.get(..line_algo.hex_len())?;
    if !hex(hash) {
        return None;
    }
    let rest = line.get(line_algo.hex_len()..)?;
    let name = rest
        .strip_prefix("  ")
        .or_else(|| rest.strip_prefix(" *"))?;
    (!name.is_empty()).then(|| (line_algo, hash.to_string(), name_of(name)))
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
        assert_eq!(
            Algo::Blake2b(16).hex(b"hello\n"),
            "ea41b4de6c03f13a95758b28dd75693e"
        );
    }

    #[test]
    fn check_lines_parse() {
        let h = "d41d8cd98f00b204e9800998ecf8427e";
        let parsed = |l: &str| parse_line(l, Some(Algo::Md5)).map(|(_, h, n)| (h, n));
        assert_eq!(
            parsed(&format!("{h}  a b")),
            Some((h.to_string(), "a b".to_string()))
        );
        assert_eq!(
            parsed(&format!("{h} *x")),
            Some((h.to_string(), "x".to_string()))
        );
        assert_eq!(parsed("abc  nope"), None);
        assert_eq!(
            parse_line(
                "ea41b4de6c03f13a95758b28dd75693e  f",
                Some(Algo::Blake2b(64))
            )
            .map(|l| l.0),
            Some(Algo::Blake2b(16))
        );
    }
}
