//! `xz`, `unxz`, `xzcat`, `lzma`, `unlzma` and `lzcat` (xz-utils 5.4):
//! `-z -d -t -l -k -f -c -q -v -0..-9 -e -T N -S SUF -F FORMAT`, files
//! replaced by `FILE.xz` (or `.lzma`) and back unless `-k`/`-c`, with
//! xz's messages (`xz: FILE: File format not recognized`) and statuses
//! (1 error, 2 warning).

use super::codec::{DecodeError, Format, decode, detect, encode};
use super::{Process, copy_mode, exists, read_operand, write_file};
use crate::programs::coreutils::args::{HasArg, Spec};
use crate::programs::coreutils::write_all;

const SPEC: Spec<'static> = Spec {
    short: "zdtlkfcqvheT:S:F:M:0123456789V",
    long: &[
        ("compress", 'z', HasArg::No),
        ("decompress", 'd', HasArg::No),
        ("uncompress", 'd', HasArg::No),
        ("test", 't', HasArg::No),
        ("list", 'l', HasArg::No),
        ("keep", 'k', HasArg::No),
        ("force", 'f', HasArg::No),
        ("stdout", 'c', HasArg::No),
        ("to-stdout", 'c', HasArg::No),
        ("quiet", 'q', HasArg::No),
        ("verbose", 'v', HasArg::No),
        ("help", 'h', HasArg::No),
        ("extreme", 'e', HasArg::No),
        ("threads", 'T', HasArg::Yes),
        ("suffix", 'S', HasArg::Yes),
        ("format", 'F', HasArg::Yes),
        ("memlimit", 'M', HasArg::Yes),
        ("memory", 'M', HasArg::Yes),
        ("check", 'C', HasArg::Yes),
        ("single-stream", '1', HasArg::No),
        ("no-sparse", 'n', HasArg::No),
        ("fast", 'a', HasArg::No),
        ("best", 'b', HasArg::No),
        ("version", 'V', HasArg::No),
    ],
};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Compress,
    Decompress,
    Test,
    List,
}

struct Opts {
    mode: Mode,
    stdout: bool,
    keep: bool,
    force: bool,
    quiet: bool,
    verbose: bool,
    level: u32,
    /// Which format to write, and which to accept (`None`: xz or lzma).
    format: Option<Format>,
    suffix: Option<String>,
}

pub(crate) fn xz(p: &mut Process<'_>, argv: &[String]) -> i32 {
    run(p, argv, Mode::Compress, false, None)
}

pub(crate) fn unxz(p: &mut Process<'_>, argv: &[String]) -> i32 {
    run(p, argv, Mode::Decompress, false, None)
}

pub(crate) fn xzcat(p: &mut Process<'_>, argv: &[String]) -> i32 {
    run(p, argv, Mode::Decompress, true, None)
}

pub(crate) fn lzma(p: &mut Process<'_>, argv: &[String]) -> i32 {
    run(p, argv, Mode::Compress, false, Some(Format::Lzma))
}

pub(crate) fn unlzma(p: &mut Process<'_>, argv: &[String]) -> i32 {
    run(p, argv, Mode::Decompress, false, Some(Format::Lzma))
}

pub(crate) fn lzcat(p: &mut Process<'_>, argv: &[String]) -> i32 {
    run(p, argv, Mode::Decompress, true, Some(Format::Lzma))
}

fn try_help(p: &Process<'_>) -> i32 {
    p.error(&format!("Try `{} --help' for more information.", p.prefix));
    1
}

fn run(
    p: &mut Process<'_>,
    argv: &[String],
    mode: Mode,
    stdout: bool,
    format: Option<Format>,
) -> i32 {
    let args = match SPEC.parse(argv.get(1..).unwrap_or_default()) {
        Ok(a) => a,
        Err(msg) => {
            p.error(&msg);
            return try_help(p);
        }
    };
    let mut o = Opts {
        mode,
        stdout,
        keep: false,
        force: false,
        quiet: false,
        verbose: false,
        level: 6,
        format,
        suffix: None,
    };
    for opt in &args.opts {
        let v = opt.value.as_deref().unwrap_or_default();
        match opt.key {
            'z' => o.mode = Mode::Compress,
            'd' => o.mode = Mode::Decompress,
            't' => o.mode = Mode::Test,
            'l' => o.mode = Mode::List,
            'k' => o.keep = true,
            'f' => o.force = true,
            'c' => o.stdout = true,
            'q' => o.quiet = true,
            'v' => o.verbose = true,
            'a' => o.level = 0,
            'b' => o.level = 9,
            d @ '0'..='9' => o.level = d.to_digit(10).unwrap_or(6),
            'S' => o.suffix = Some(v.trim_start_matches('.').to_string()),
            'F' => {
                o.format = match v {
                    "auto" => None,
                    "xz" => Some(Format::Xz),
                    "lzma" | "alone" => Some(Format::Lzma),
                    _ => {
                        p.error(&format!("{v}: Unknown file format type"));
                        return 1;
                    }
                }
            }
            'h' => {
                p.out(format!("Usage: {} [OPTION]... [FILE]...\nCompress or decompress FILEs in the .xz format.\n", p.prefix).as_bytes());
                return 0;
            }
            'V' => {
                p.out(b"xz (XZ Utils) 5.4.1\nliblzma 5.4.1\n");
                return 0;
            }
            _ => {}
        }
    }
    let files = args.operands.clone();
    if o.mode == Mode::List {
        if files.is_empty() {
            p.error("--list does not support reading from standard input");
            return 1;
        }
        return super::xz_list::list(p, &files);
    }
    if files.is_empty() {
        return one(p, &o, None);
    }
    let mut status = 0;
    for f in &files {
        let s = if f == "-" {
            one(p, &o, None)
        } else {
            one(p, &o, Some(f))
        };
        status = status.max(s);
    }
    status
}

/// `1.2 KiB`, as xz prints sizes.
fn size(n: usize) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < units.len() {
        v /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", units[unit])
    }
}

fn verbose_line(p: &Process<'_>, name: &str, packed: usize, plain: usize) {
    let ratio = if plain == 0 {
        "---".to_string()
    } else {
        let r = packed as f64 / plain as f64;
        if r > 9.999 {
            "> 9.999".to_string()
        } else {
            format!("= {r:.3}")
        }
    };
    let ratio = if ratio == "---" {
        "= ---".to_string()
    } else {
        ratio
    };
    p.io.err_line(&format!(
        "{name}: {} / {} {ratio}",
        size(packed),
        size(plain)
    ));
}

fn decode_error(p: &Process<'_>, name: &str, e: &DecodeError) -> i32 {
    let msg = match e {
        DecodeError::NotRecognized => "File format not recognized",
        DecodeError::Truncated => "Unexpected end of input",
        DecodeError::Corrupt(_) => "Compressed data is corrupt",
        DecodeError::TooLarge => "Memory usage limit reached",
    };
    p.error(&format!("{name}: {msg}"));
    1
}

/// The decoder for data: the format it says it is, if that is allowed.
fn decode_as(o: &Opts, data: &[u8]) -> Result<Vec<u8>, DecodeError> {
    match (o.format, detect(data)) {
        (None, Some(f @ (Format::Xz | Format::Lzma))) => decode(f, data),
        (Some(f), Some(g)) if f == g => decode(f, data),
        (Some(Format::Lzma), _) => decode(Format::Lzma, data),
        _ => Err(DecodeError::NotRecognized),
    }
}

fn suffixes(o: &Opts) -> Vec<(String, &'static str)> {
    let mut list: Vec<(String, &'static str)> = match o.format {
        Some(Format::Lzma) => vec![(".lzma".into(), ""), (".tlz".into(), ".tar")],
        _ => vec![
            (".xz".into(), ""),
            (".txz".into(), ".tar"),
            (".lzma".into(), ""),
            (".tlz".into(), ".tar"),
        ],
    };
    if let Some(s) = &o.suffix {
        list.insert(0, (format!(".{s}"), ""));
    }
    list
}

fn one(p: &Process<'_>, o: &Opts, file: Option<&str>) -> i32 {
    let name = file.unwrap_or("(stdin)");
    let data = match file {
        None => p.io.stdin.borrow_mut().read_all(),
        Some(f) => match read_operand(p, f) {
            Ok(d) => d,
            Err(super::OperandError::Directory) => {
                p.error(&format!("{f}: Is a directory, skipping"));
                return 2;
            }
            Err(super::OperandError::Io(e)) => {
                p.error(&format!("{f}: {e}"));
                return 1;
            }
        },
    };
    let to_stdout = o.stdout || file.is_none();
    match o.mode {
        Mode::Compress => {
            let format = o.format.unwrap_or(Format::Xz);
            let ext = o.suffix.clone().unwrap_or_else(|| {
                if format == Format::Lzma {
                    "lzma".into()
                } else {
                    "xz".into()
                }
            });
            if !to_stdout
                && let Some((s, _)) = suffixes(o).iter().find(|(s, _)| name.ends_with(s.as_str()))
            {
                p.error(&format!("{name}: File already has `{s}' suffix, skipping"));
                return 2;
            }
            let packed = encode(format, &data, o.level);
            if o.verbose {
                verbose_line(p, name, packed.len(), data.len());
            }
            if to_stdout {
                write_all(p, &packed);
                return 0;
            }
            finish(p, o, name, &format!("{name}.{ext}"), &packed)
        }
        Mode::Test => match decode_as(o, &data) {
            Ok(plain) => {
                if o.verbose {
                    verbose_line(p, name, data.len(), plain.len());
                }
                0
            }
            Err(e) => decode_error(p, name, &e),
        },
        Mode::Decompress | Mode::List => {
            let plain = match decode_as(o, &data) {
                Ok(plain) => plain,
                Err(e) => return decode_error(p, name, &e),
            };
            if o.verbose {
                verbose_line(p, name, data.len(), plain.len());
            }
            if to_stdout {
                write_all(p, &plain);
                return 0;
            }
            let Some(out_name) = suffixes(o).iter().find_map(|(s, repl)| {
                name.strip_suffix(s.as_str())
                    .filter(|stem| !stem.is_empty())
                    .map(|stem| format!("{stem}{repl}"))
            }) else {
                p.error(&format!("{name}: Filename has an unknown suffix, skipping"));
                return 2;
            };
            finish(p, o, name, &out_name, &plain)
        }
    }
}

fn finish(p: &Process<'_>, o: &Opts, name: &str, out_name: &str, bytes: &[u8]) -> i32 {
    if exists(p, out_name) && !o.force {
        p.error(&format!("{out_name}: File exists"));
        return 1;
    }
    if let Err(e) = write_file(p, out_name, bytes) {
        p.error(&format!("{out_name}: {e}"));
        return 1;
    }
    copy_mode(p, name, out_name);
    if !o.keep {
        let _ = std::fs::remove_file(p.resolve(name));
    }
    0
}
