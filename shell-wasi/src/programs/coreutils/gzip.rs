//! `gzip`, `gunzip` and `zcat` (GNU gzip 1.12): `-c -d -k -f -v -t -l -q
//! -S SUF -1..-9`. Files are replaced by `FILE.gz` (and back) unless `-k`
//! or `-c`; stdin goes to stdout. The header stores the file's base name
//! and mtime (nothing for stdin); deflate comes from `flate2`'s pure-Rust
//! backend. Messages and exit codes (1 error, 2 warning) are gzip's.

use std::io::Write;

use flate2::{Compress, Compression, Crc, Decompress, FlushDecompress, Status};

use super::Process;
use super::args::{HasArg, Spec};
use crate::errors::strerror;
use crate::host::{S_IFDIR, S_IFLNK, S_IFMT};

/// gzip's exit status for warnings.
const WARNING: i32 = 2;

/// The most a decompressed stream may grow to (the pipe budget).
const MAX_OUTPUT: usize = crate::streams::MAX_PIPE_BYTES;

pub(crate) fn gzip(p: &mut Process<'_>, argv: &[String]) -> i32 {
    run(p, argv, false, false)
}

pub(crate) fn gunzip(p: &mut Process<'_>, argv: &[String]) -> i32 {
    run(p, argv, true, false)
}

pub(crate) fn zcat(p: &mut Process<'_>, argv: &[String]) -> i32 {
    run(p, argv, true, true)
}

const SPEC: Spec<'static> = Spec {
    short: "cdfhklLnNqrS:tvV123456789",
    long: &[
        ("stdout", 'c', HasArg::No),
        ("to-stdout", 'c', HasArg::No),
        ("decompress", 'd', HasArg::No),
        ("uncompress", 'd', HasArg::No),
        ("force", 'f', HasArg::No),
        ("keep", 'k', HasArg::No),
        ("list", 'l', HasArg::No),
        ("no-name", 'n', HasArg::No),
        ("name", 'N', HasArg::No),
        ("quiet", 'q', HasArg::No),
        ("suffix", 'S', HasArg::Yes),
        ("test", 't', HasArg::No),
        ("verbose", 'v', HasArg::No),
        ("fast", '1', HasArg::No),
        ("best", '9', HasArg::No),
    ],
};

/// What one run was asked to do.
struct Opts {
    decompress: bool,
    stdout: bool,
    force: bool,
    keep: bool,
    list: bool,
    test: bool,
    verbose: bool,
    quiet: bool,
    level: u32,
    suffix: String,
}

fn run(p: &mut Process<'_>, argv: &[String], decompress: bool, stdout: bool) -> i32 {
    p.prefix = "gzip".to_string();
    let args = match SPEC.parse(argv.get(1..).unwrap_or_default()) {
        Ok(a) => a,
        Err(msg) => {
            p.error(&msg);
            p.io.err_line("Try `gzip --help' for more information.");
            return 1;
        }
    };
    let mut level = 6;
    let (mut verbose, mut quiet) = (false, false);
    for o in &args.opts {
        match o.key {
            c @ '1'..='9' => level = c.to_digit(10).unwrap_or(6),
            'v' => (verbose, quiet) = (true, false),
            'q' => (verbose, quiet) = (false, true),
            _ => {}
        }
    }
    let suffix = args.value('S').unwrap_or(".gz").to_string();
    if suffix.is_empty() || suffix.contains('/') {
        p.error(&format!("invalid suffix '{suffix}'"));
        return 1;
    }
    let list = args.has('l');
    let test = args.has('t');
    let opts = Opts {
        decompress: decompress || args.has('d') || list || test,
        stdout: stdout || args.has('c') || test,
        force: args.has('f'),
        keep: args.has('k'),
        list,
        test,
        verbose,
        quiet,
        level,
        suffix,
    };
    let mut names = args.operands.clone();
    if names.is_empty() {
        names.push("-".to_string());
    }
    let mut status = 0;
    let mut totals = (0u64, 0u64, 0usize);
    for name in &names {
        let s = if opts.list {
            list_one(p, &opts, name, &mut totals)
        } else if name == "-" {
            stdin_one(p, &opts)
        } else {
            file_one(p, &opts, name)
        };
        status = merge(status, s);
    }
    if opts.list && totals.2 > 1 {
        let (c, u, _) = totals;
        let line = format!("{c:>19} {u:>19} {} (totals)\n", ratio(u, c, 0));
        p.out(line.as_bytes());
    }
    status
}

/// Errors (1) win over warnings (2).
fn merge(a: i32, b: i32) -> i32 {
    if a == 1 || b == 1 { 1 } else { a.max(b) }
}

/// `%5.1f%%` of how much smaller `packed` is than `plain`, where `packed`
/// includes `overhead` bytes of header and trailer.
fn ratio(plain: u64, packed: u64, overhead: u64) -> String {
    let payload = packed.saturating_sub(overhead);
    #[allow(clippy::cast_precision_loss)]
    let r = if plain == 0 {
        0.0
    } else {
        100.0 * (plain as f64 - payload as f64) / plain as f64
    };
    format!("{r:5.1}%")
}

/// A decompression failure, worded as gzip does (after its newline).
fn bad_data(p: &Process<'_>, opts: &Opts, name: &str, msg: &str) {
    if !opts.quiet {
        p.io.err(b"\n");
        p.error(&format!("{name}: {msg}"));
    }
}

fn stdin_one(p: &Process<'_>, opts: &Opts) -> i32 {
    let data = p.io.stdin.borrow_mut().read_all();
    if opts.decompress {
        return match decompress_all(&data) {
            Ok(d) => {
                if !opts.test {
                    super::write_all(p, &d.data);
                } else if opts.verbose {
                    p.io.err(b" OK\n");
                }
                if d.trailing {
                    bad_data(
                        p,
                        opts,
                        "stdin",
                        "decompression OK, trailing garbage ignored",
                    );
                    return WARNING;
                }
                0
            }
            Err(e) => {
                bad_data(p, opts, "stdin", e.message());
                1
            }
        };
    }
    let packed = compress(&data, opts.level, None, 0);
    if opts.verbose {
        let overhead = 18;
        let r = ratio(data.len() as u64, packed.len() as u64, overhead);
        p.io.err_line(&format!("stdin:\t{r}"));
    }
    super::write_all(p, &packed);
    0
}

/// The suffixes gunzip recognises, and what each becomes.
fn strip_suffix<'n>(name: &'n str, opts: &Opts) -> Option<(&'n str, &'static str)> {
    let base = name.rsplit('/').next().unwrap_or(name);
    if let Some(stem) = name.strip_suffix(opts.suffix.as_str())
        && base.len() > opts.suffix.len()
    {
        return Some((stem, ""));
    }
    for (suf, repl) in [
        (".gz", ""),
        (".tgz", ".tar"),
        (".taz", ".tar"),
        ("-gz", ""),
        (".z", ""),
        ("-z", ""),
        ("_z", ""),
        (".Z", ""),
    ] {
        if let Some(stem) = name.strip_suffix(suf)
            && base.len() > suf.len()
        {
            return Some((stem, repl));
        }
    }
    None
}

/// The file a decompressing operand names: itself, or `NAME.gz`.
fn find_compressed(p: &Process<'_>, opts: &Opts, name: &str) -> Result<String, String> {
    if p.resolve(name).symlink_metadata().is_ok() || strip_suffix(name, opts).is_some() {
        return Ok(name.to_string());
    }
    let mut first = None;
    for suf in [opts.suffix.as_str(), ".gz", ".z", "-z", "_z", ".Z"] {
        let candidate = format!("{name}{suf}");
        if p.resolve(&candidate).symlink_metadata().is_ok() {
            return Ok(candidate);
        }
        first.get_or_insert(candidate);
    }
    Err(first.unwrap_or_else(|| name.to_string()))
}

fn file_one(p: &Process<'_>, opts: &Opts, operand: &str) -> i32 {
    let name = if opts.decompress {
        match find_compressed(p, opts, operand) {
            Ok(n) => n,
            Err(shown) => {
                p.error(&format!("{shown}: No such file or directory"));
                return 1;
            }
        }
    } else {
        operand.to_string()
    };
    let host_path = p.host_path(&name);
    let mode = match p.host.get_mode(&host_path, false) {
        Ok(m) => m,
        Err(e) => {
            p.error(&format!("{name}: {}", e.message()));
            return 1;
        }
    };
    if mode & S_IFMT == S_IFLNK && !opts.force {
        p.error(&format!("{name}: Too many levels of symbolic links"));
        return 1;
    }
    let path = p.resolve(&name);
    if path.is_dir() || mode & S_IFMT == S_IFDIR {
        if !opts.quiet {
            p.error(&format!("{name} is a directory -- ignored"));
        }
        return WARNING;
    }
    let target = if opts.decompress {
        match strip_suffix(&name, opts) {
            Some((stem, repl)) => format!("{stem}{repl}"),
            None if opts.stdout => String::new(),
            None => {
                if !opts.quiet {
                    p.error(&format!("{name}: unknown suffix -- ignored"));
                }
                return WARNING;
            }
        }
    } else {
        if strip_suffix(&name, opts).is_some() {
            if !opts.quiet {
                p.error(&format!(
                    "{name} already has {} suffix -- unchanged",
                    opts.suffix
                ));
            }
            return 0;
        }
        format!("{name}{}", opts.suffix)
    };
    let data = match std::fs::read(&path) {
        Ok(d) => d,
        Err(e) => {
            p.error(&format!("{name}: {}", strerror(&e)));
            return 1;
        }
    };
    let meta = std::fs::metadata(&path).ok();
    let mtime = meta
        .as_ref()
        .and_then(|m| m.modified().ok())
        .map_or(0, crate::programs::timefmt::epoch_secs);
    let (output, plain_len, packed_len, trailing) = if opts.decompress {
        match decompress_all(&data) {
            Ok(d) => {
                let len = d.data.len() as u64;
                (d.data, len, data.len() as u64, d.trailing)
            }
            Err(e) => {
                bad_data(p, opts, &name, e.message());
                return 1;
            }
        }
    } else {
        let base = name.rsplit('/').next().unwrap_or(&name);
        let packed = compress(&data, opts.level, Some(base.as_bytes()), mtime);
        let len = packed.len() as u64;
        (packed, data.len() as u64, len, false)
    };
    let overhead = if opts.decompress {
        header_len(&data).unwrap_or(10) as u64 + 8
    } else {
        let base = name.rsplit('/').next().unwrap_or(&name);
        18 + base.len() as u64 + 1
    };
    let mut status = 0;
    if opts.stdout {
        if opts.verbose {
            let r = ratio(plain_len, packed_len, overhead);
            let text = if opts.test {
                format!("{name}:\t OK\n")
            } else {
                format!("{name}:\t{r} -- replaced with stdout\n")
            };
            p.io.err(text.as_bytes());
        }
        if !opts.test {
            super::write_all(p, &output);
        }
    } else {
        let out_path = p.resolve(&target);
        if out_path.symlink_metadata().is_ok() {
            if !opts.force {
                p.error(&format!("{target} already exists;\tnot overwritten"));
                return WARNING;
            }
            if let Err(e) = std::fs::remove_file(&out_path) {
                p.error(&format!("{target}: {}", strerror(&e)));
                return 1;
            }
        }
        let written = std::fs::File::create(&out_path).and_then(|mut f| {
            f.write_all(&output)?;
            if let Some(m) = meta.as_ref().and_then(|m| m.modified().ok()) {
                let _ = f.set_modified(m);
            }
            Ok(())
        });
        if let Err(e) = written {
            p.error(&format!("{target}: {}", strerror(&e)));
            return 1;
        }
        let _ = p.host.set_mode(&p.host_path(&target), mode & 0o7777);
        if opts.verbose {
            let r = ratio(plain_len, packed_len, overhead);
            p.io.err_line(&format!("{name}:\t{r} -- replaced with {target}"));
        }
        if !opts.keep
            && let Err(e) = std::fs::remove_file(&path)
        {
            p.error(&format!("{name}: {}", strerror(&e)));
            status = 1;
        }
    }
    if trailing {
        bad_data(p, opts, &name, "decompression OK, trailing garbage ignored");
        status = merge(status, WARNING);
    }
    status
}

fn list_one(p: &Process<'_>, opts: &Opts, operand: &str, totals: &mut (u64, u64, usize)) -> i32 {
    let (name, data) = if operand == "-" {
        ("stdin".to_string(), p.io.stdin.borrow_mut().read_all())
    } else {
        let name = match find_compressed(p, opts, operand) {
            Ok(n) => n,
            Err(shown) => {
                p.error(&format!("{shown}: No such file or directory"));
                return 1;
            }
        };
        match std::fs::read(p.resolve(&name)) {
            Ok(d) => (name, d),
            Err(e) => {
                p.error(&format!("{name}: {}", strerror(&e)));
                return 1;
            }
        }
    };
    let Some(hlen) = header_len(&data) else {
        bad_data(p, opts, &name, "not in gzip format");
        return 1;
    };
    let plain = data
        .len()
        .checked_sub(4)
        .and_then(|i| data.get(i..))
        .and_then(|b| <[u8; 4]>::try_from(b).ok())
        .map_or(0, |b| u64::from(u32::from_le_bytes(b)));
    let packed = data.len() as u64;
    if totals.2 == 0 {
        p.out(b"         compressed        uncompressed  ratio uncompressed_name\n");
    }
    let shown = if operand == "-" {
        String::new()
    } else {
        strip_suffix(&name, opts).map_or_else(|| name.clone(), |(s, r)| format!("{s}{r}"))
    };
    let r = ratio(plain, packed, hlen as u64 + 8);
    p.out(format!("{packed:>19} {plain:>19} {r} {shown}\n").as_bytes());
    totals.0 += packed;
    totals.1 += plain;
    totals.2 += 1;
    0
}

/// A gzip member: RFC 1952 header (name and mtime when given), raw
/// deflate, CRC-32 and length.
pub(crate) fn compress(data: &[u8], level: u32, name: Option<&[u8]>, mtime: i64) -> Vec<u8> {
    let mut out = vec![0x1f, 0x8b, 8, if name.is_some() { 8 } else { 0 }];
    let mtime = u32::try_from(mtime).unwrap_or(0);
    out.extend_from_slice(&mtime.to_le_bytes());
    out.push(match level {
        9 => 2,
        1 => 4,
        _ => 0,
    });
    out.push(3);
    if let Some(n) = name {
        out.extend(n.iter().copied().filter(|&b| b != 0));
        out.push(0);
    }
    let mut enc = Compress::new(Compression::new(level), false);
    let mut body = Vec::with_capacity(data.len() / 2 + 64);
    let mut input = data;
    loop {
        if body.capacity() - body.len() < 1024 {
            body.reserve(body.len().max(4096));
        }
        let before = enc.total_in();
        let status = enc.compress_vec(input, &mut body, flate2::FlushCompress::Finish);
        let used = usize::try_from(enc.total_in() - before).unwrap_or(0);
        input = input.get(used..).unwrap_or_default();
        match status {
            Ok(Status::StreamEnd) | Err(_) => break,
            Ok(_) => {}
        }
    }
    out.extend_from_slice(&body);
    let mut crc = Crc::new();
    crc.update(data);
    out.extend_from_slice(&crc.sum().to_le_bytes());
    out.extend_from_slice(&crc.amount().to_le_bytes());
    out
}

/// Why data would not decompress.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum GzError {
    NotGzip,
    Eof,
    Format,
    Crc,
    Length,
    TooLarge,
}

impl GzError {
    pub(crate) fn message(self) -> &'static str {
        match self {
            Self::NotGzip => "not in gzip format",
            Self::Eof => "unexpected end of file",
            Self::Format => "invalid compressed data--format violated",
            Self::Crc => "invalid compressed data--crc error",
            Self::Length => "invalid compressed data--length error",
            Self::TooLarge => "File too large",
        }
    }
}

/// Decompressed members, and whether junk followed them.
pub(crate) struct Decoded {
    pub(crate) data: Vec<u8>,
    pub(crate) trailing: bool,
}

/// The length of the gzip header at the start of `data`.
fn header_len(data: &[u8]) -> Option<usize> {
    if data.get(..2)? != [0x1f, 0x8b] {
        return None;
    }
    let flags = *data.get(3)?;
    let mut i = 10;
    if data.len() < i {
        return None;
    }
    if flags & 4 != 0 {
        let xlen = usize::from(*data.get(i)?) | usize::from(*data.get(i + 1)?) << 8;
        i += 2 + xlen;
    }
    for bit in [8, 16] {
        if flags & bit != 0 {
            let end = data.get(i..)?.iter().position(|&b| b == 0)?;
            i += end + 1;
        }
    }
    if flags & 2 != 0 {
        i += 2;
    }
    (i <= data.len()).then_some(i)
}

/// Decompresses every member of `data`.
pub(crate) fn decompress_all(data: &[u8]) -> Result<Decoded, GzError> {
    let mut out = Vec::new();
    let mut rest = data;
    let mut first = true;
    loop {
        if !first && (rest.is_empty() || rest.iter().all(|&b| b == 0)) {
            return Ok(Decoded {
                data: out,
                trailing: false,
            });
        }
        if rest.len() < 2 && first {
            return Err(GzError::Eof);
        }
        if rest.get(..2) != Some(&[0x1f, 0x8b]) {
            if first {
                return Err(GzError::NotGzip);
            }
            return Ok(Decoded {
                data: out,
                trailing: true,
            });
        }
        if rest.get(2).is_some_and(|&m| m != 8) {
            return Err(GzError::Format);
        }
        let hlen = header_len(rest).ok_or(GzError::Eof)?;
        let body = rest.get(hlen..).unwrap_or_default();
        let start = out.len();
        let used = inflate(body, &mut out)?;
        let trailer = body.get(used..used + 8).ok_or(GzError::Eof)?;
        let want_crc = trailer.get(..4).and_then(|b| <[u8; 4]>::try_from(b).ok());
        let want_len = trailer.get(4..).and_then(|b| <[u8; 4]>::try_from(b).ok());
        let mut crc = Crc::new();
        crc.update(out.get(start..).unwrap_or_default());
        if want_crc.map(u32::from_le_bytes) != Some(crc.sum()) {
            return Err(GzError::Crc);
        }
        if want_len.map(u32::from_le_bytes) != Some(crc.amount()) {
            return Err(GzError::Length);
        }
        rest = body.get(used + 8..).unwrap_or_default();
        first = false;
    }
}

/// Inflates one raw deflate stream onto `out`; returns the bytes used.
fn inflate(body: &[u8], out: &mut Vec<u8>) -> Result<usize, GzError> {
    let mut dec = Decompress::new(false);
    loop {
        if out.capacity() - out.len() < 4096 {
            out.reserve(out.len().clamp(8192, 1 << 22));
        }
        if out.len() > MAX_OUTPUT {
            return Err(GzError::TooLarge);
        }
        let consumed = usize::try_from(dec.total_in()).unwrap_or(usize::MAX);
        let input = body.get(consumed..).ok_or(GzError::Format)?;
        let before_out = dec.total_out();
        let status = dec
            .decompress_vec(input, out, FlushDecompress::None)
            .map_err(|_| GzError::Format)?;
        match status {
            Status::StreamEnd => {
                return usize::try_from(dec.total_in()).map_err(|_| GzError::Format);
            }
            _ => {
                let progressed = dec.total_out() != before_out
                    || usize::try_from(dec.total_in()).unwrap_or(0) != consumed;
                if !progressed && out.capacity() > out.len() {
                    return Err(GzError::Eof);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_detects_damage() {
        let data = b"hello hello hello\n".repeat(100);
        let packed = compress(&data, 6, Some(b"f"), 5);
        assert_eq!(packed.get(..4), Some(&[0x1f, 0x8b, 8, 8][..]));
        assert_eq!(header_len(&packed), Some(12));
        let d = decompress_all(&packed).expect("valid");
        assert_eq!(d.data, data);
        assert!(!d.trailing);
        let mut two = compress(b"ab", 1, None, 0);
        two.extend(compress(b"cd", 9, None, 0));
        assert_eq!(decompress_all(&two).map(|d| d.data), Ok(b"abcd".to_vec()));
        two.extend_from_slice(b"junk");
        assert!(decompress_all(&two).is_ok_and(|d| d.trailing));
        assert_eq!(decompress_all(b"").err(), Some(GzError::Eof));
        assert_eq!(decompress_all(b"hello").err(), Some(GzError::NotGzip));
        let cut = packed.get(..packed.len() - 3).unwrap_or_default();
        assert_eq!(decompress_all(cut).err(), Some(GzError::Eof));
        let mut bad = packed.clone();
        if let Some(b) = bad.last_mut() {
            *b ^= 1;
        }
        assert!(decompress_all(&bad).is_err());
        for n in 0..packed.len() {
            let _ = decompress_all(packed.get(..n).unwrap_or_default());
        }
    }

    #[test]
    fn ratio_is_printf_like() {
        assert_eq!(ratio(2, 24, 20), "-100.0%");
        assert_eq!(ratio(100, 60, 10), " 50.0%");
        assert_eq!(ratio(0, 20, 20), "  0.0%");
    }
}
