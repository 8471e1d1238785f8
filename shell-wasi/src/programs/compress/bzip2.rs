//! `bzip2`, `bunzip2` and `bzcat` (bzip2 1.0.8): `-c -d -z -k -f -t -q
//! -v -s -1..-9`, flags and files in any order, `FILE` replaced by
//! `FILE.bz2` and back (`.tbz`/`.tbz2` to `.tar`) unless `-k`/`-c`, and
//! bzip2's messages and exit codes (1 for files, 2 for bad data).

use super::codec::{DecodeError, Format, decode, encode};
use super::{Process, copy_mode, exists, read_operand, write_file};
use crate::programs::coreutils::write_all;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Compress,
    Decompress,
    Test,
}

struct Opts {
    mode: Mode,
    stdout: bool,
    keep: bool,
    force: bool,
    quiet: bool,
    verbose: bool,
    level: u32,
    /// Longest file name, for bzip2's aligned `-v` lines (at least 7).
    longest: usize,
}

const HELP: &str = "bzip2, a block-sorting file compressor.  Version 1.0.8, 13-Jul-2019.

   usage: bzip2 [flags and input files in any order]

   -h --help           print this message
   -d --decompress     force decompression
   -z --compress       force compression
   -k --keep           keep (don't delete) input files
   -f --force          overwrite existing output files
   -t --test           test compressed file integrity
   -c --stdout         output to standard out
   -q --quiet          suppress noncritical error messages
   -v --verbose        be verbose (a 2nd -v gives more)
   -L --license        display software version & license
   -V --version        display software version & license
   -s --small          use less memory (at most 2500k)
   -1 .. -9            set block size to 100k .. 900k
   --fast              alias for -1
   --best              alias for -9

   If invoked as `bzip2', default action is to compress.
              as `bunzip2',  default action is to decompress.
              as `bzcat', default action is to decompress to stdout.

   If no file names are given, bzip2 compresses or decompresses
   from standard input to standard output.  You can combine
   short flags, so `-v -4' means the same as -v4 or -4v, &c.
";

pub(crate) fn bzip2(p: &mut Process<'_>, argv: &[String]) -> i32 {
    run(p, argv, Mode::Compress, false)
}

pub(crate) fn bunzip2(p: &mut Process<'_>, argv: &[String]) -> i32 {
    run(p, argv, Mode::Decompress, false)
}

pub(crate) fn bzcat(p: &mut Process<'_>, argv: &[String]) -> i32 {
    run(p, argv, Mode::Decompress, true)
}

fn run(p: &mut Process<'_>, argv: &[String], mode: Mode, stdout: bool) -> i32 {
    let mut o = Opts {
        mode,
        stdout,
        keep: false,
        force: false,
        quiet: false,
        verbose: false,
        level: 9,
        longest: 7,
    };
    let mut files = Vec::new();
    let mut flags_done = false;
    for arg in argv.iter().skip(1) {
        if flags_done || !arg.starts_with('-') || arg == "-" {
            files.push(arg.clone());
            continue;
        }
        let set = |o: &mut Opts, c: char| -> bool {
            match c {
                'c' => o.stdout = true,
                'd' => o.mode = Mode::Decompress,
                'z' => o.mode = Mode::Compress,
                'k' => o.keep = true,
                'f' => o.force = true,
                't' => o.mode = Mode::Test,
                'q' => o.quiet = true,
                'v' => o.verbose = true,
                's' => {}
                '1'..='9' => o.level = c.to_digit(10).unwrap_or(9),
                _ => return false,
            }
            true
        };
        let ok = match arg.as_str() {
            "--" => {
                flags_done = true;
                true
            }
            "--stdout" => set(&mut o, 'c'),
            "--decompress" => set(&mut o, 'd'),
            "--compress" => set(&mut o, 'z'),
            "--keep" => set(&mut o, 'k'),
            "--force" => set(&mut o, 'f'),
            "--test" => set(&mut o, 't'),
            "--quiet" => set(&mut o, 'q'),
            "--verbose" => set(&mut o, 'v'),
            "--small" | "--repetitive-fast" | "--repetitive-best" => true,
            "--fast" => set(&mut o, '1'),
            "--best" => set(&mut o, '9'),
            "--help" | "-h" => {
                p.io.err(HELP.as_bytes());
                return 0;
            }
            "--version" | "--license" | "-V" | "-L" => {
                p.io.err(b"bzip2, a block-sorting file compressor.  Version 1.0.8, 13-Jul-2019.\n");
                return 0;
            }
            a if a.starts_with("--") => false,
            a => a.chars().skip(1).all(|c| c != 'h' && set(&mut o, c)),
        };
        if !ok {
            p.error(&format!("Bad flag `{arg}'"));
            p.io.err(HELP.as_bytes());
            p.io.err(b"\n");
            return 1;
        }
    }
    o.longest = files.iter().map(String::len).max().unwrap_or(0).max(7);
    if files.is_empty() {
        return stdin_one(p, &o);
    }
    let mut status = 0;
    for f in &files {
        status = status.max(file_one(p, &o, f));
    }
    status
}

fn pad(o: &Opts, name: &str) -> String {
    " ".repeat(o.longest.saturating_sub(name.len()))
}

/// bzip2's `-v` line after compressing.
fn stats(o: &Opts, name: &str, plain: usize, packed: usize) -> String {
    let (i, out) = (plain as f64, packed as f64);
    if plain == 0 {
        return format!("  {name}: {}no data compressed.\n", pad(o, name));
    }
    format!(
        "  {name}: {}{:6.3}:1, {:6.3} bits/byte, {:5.2}% saved, {plain} in, {packed} out.\n",
        pad(o, name),
        i / out,
        8.0 * out / i,
        100.0 * (1.0 - out / i)
    )
}

fn corrupt(p: &Process<'_>, name: &str, err: &DecodeError, out_name: &str) -> i32 {
    // bzip2 prints errno after its guess; reading stdin left ENOTTY.
    let errno = if name == "(stdin)" {
        format!("{}: Inappropriate ioctl for device\n", p.prefix)
    } else {
        String::new()
    };
    match err {
        DecodeError::NotRecognized => p.error(&format!("{name} is not a bzip2 file.")),
        DecodeError::TooLarge => p.error(&format!("{name}: File too large.")),
        DecodeError::Truncated | DecodeError::Corrupt(_) => {
            let reason = if *err == DecodeError::Truncated {
                "Compressed file ends unexpectedly;\n\tperhaps it is corrupted?  *Possible* reason follows."
            } else {
                "Data integrity error when decompressing."
            };
            p.io.err(
                format!(
                    "\n{}: {reason}\n{errno}\tInput file = {name}, output file = {out_name}\n\nIt is possible that the compressed file(s) have become corrupted.\nYou can use the -tvv option to test integrity of such files.\n\nYou can use the `bzip2recover' program to attempt to recover\ndata from undamaged sections of corrupted files.\n\n",
                    p.prefix
                )
                .as_bytes(),
            );
        }
    }
    2
}

fn stdin_one(p: &Process<'_>, o: &Opts) -> i32 {
    let data = p.io.stdin.borrow_mut().read_all();
    match o.mode {
        Mode::Compress => {
            let packed = encode(Format::Bzip2, &data, o.level);
            if o.verbose {
                p.io.err(stats(o, "(stdin)", data.len(), packed.len()).as_bytes());
            }
            write_all(p, &packed);
            0
        }
        Mode::Decompress | Mode::Test => match decode(Format::Bzip2, &data) {
            Ok(plain) => {
                if o.mode == Mode::Decompress {
                    write_all(p, &plain);
                } else if o.verbose {
                    p.io.err(format!("  (stdin): {}ok\n", pad(o, "(stdin)")).as_bytes());
                }
                0
            }
            Err(DecodeError::NotRecognized) if data.is_empty() => {
                corrupt(p, "(stdin)", &DecodeError::Truncated, "(stdout)")
            }
            Err(e) => corrupt(p, "(stdin)", &e, "(stdout)"),
        },
    }
}

/// The decompressed name for `name`, or bzip2's guess.
fn plain_name(p: &Process<'_>, o: &Opts, name: &str) -> String {
    for (suffix, repl) in [
        (".bz2", ""),
        (".bz", ""),
        (".tbz2", ".tar"),
        (".tbz", ".tar"),
    ] {
        if let Some(stem) = name.strip_suffix(suffix)
            && !stem.is_empty()
        {
            return format!("{stem}{repl}");
        }
    }
    if !o.quiet {
        p.error(&format!(
            "Can't guess original name for {name} -- using {name}.out"
        ));
    }
    format!("{name}.out")
}

fn file_one(p: &Process<'_>, o: &Opts, name: &str) -> i32 {
    let data = match read_operand(p, name) {
        Ok(d) => d,
        Err(super::OperandError::Directory) => {
            p.error(&format!("Input file {name} is a directory."));
            return 1;
        }
        Err(super::OperandError::Io(e)) => {
            p.error(&format!("Can't open input file {name}: {e}."));
            return 1;
        }
    };
    match o.mode {
        Mode::Compress => {
            if !o.stdout
                && let Some(suffix) = [".bz2", ".bz", ".tbz2", ".tbz"]
                    .iter()
                    .find(|s| name.ends_with(**s))
            {
                if !o.quiet {
                    p.error(&format!("Input file {name} already has {suffix} suffix."));
                }
                return 1;
            }
            let packed = encode(Format::Bzip2, &data, o.level);
            if o.verbose {
                p.io.err(stats(o, name, data.len(), packed.len()).as_bytes());
            }
            if o.stdout {
                write_all(p, &packed);
                return 0;
            }
            finish(p, o, name, &format!("{name}.bz2"), &packed)
        }
        Mode::Test => match decode(Format::Bzip2, &data) {
            Ok(_) => {
                if o.verbose {
                    p.io.err(format!("  {name}: {}ok\n", pad(o, name)).as_bytes());
                }
                0
            }
            Err(DecodeError::NotRecognized) => {
                p.error(&format!(
                    "{name}: bad magic number (file not created by bzip2)"
                ));
                p.io.err(b"\nYou can use the `bzip2recover' program to attempt to recover\ndata from undamaged sections of corrupted files.\n\n");
                2
            }
            Err(e) => corrupt(p, name, &e, "(none)"),
        },
        Mode::Decompress => {
            let out_name = if o.stdout {
                "(stdout)".to_string()
            } else {
                plain_name(p, o, name)
            };
            match decode(Format::Bzip2, &data) {
                Ok(plain) => {
                    if o.verbose {
                        p.io.err(format!("  {name}: {}done\n", pad(o, name)).as_bytes());
                    }
                    if o.stdout {
                        write_all(p, &plain);
                        return 0;
                    }
                    finish(p, o, name, &out_name, &plain)
                }
                Err(e) => corrupt(p, name, &e, &out_name),
            }
        }
    }
}

/// Writes `out_name`, carries the mode over and removes the input.
fn finish(p: &Process<'_>, o: &Opts, name: &str, out_name: &str, bytes: &[u8]) -> i32 {
    if exists(p, out_name) && !o.force {
        p.error(&format!("Output file {out_name} already exists."));
        return 1;
    }
    if let Err(e) = write_file(p, out_name, bytes) {
        p.error(&format!("Can't create output file {out_name}: {e}."));
        return 1;
    }
    copy_mode(p, name, out_name);
    if !o.keep {
        let _ = std::fs::remove_file(p.resolve(name));
    }
    0
}
