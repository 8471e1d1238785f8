//! `cat [-AbeEnstTuv] [FILE|-]...`.

use super::Process;
use super::quoting::quote_if_needed;
use crate::errors::strerror;

/// Bytes handed to the output sink per write.
const CHUNK: usize = 64 * 1024;

/// GNU cat's display options.
#[derive(Default, Clone, Copy)]
struct Show {
    number: bool,
    nonblank: bool,
    ends: bool,
    tabs: bool,
    nonprinting: bool,
    squeeze: bool,
}

/// The numbering and blank-line state that carries from file to file.
#[derive(Default)]
struct State {
    line_no: usize,
    mid_line: bool,
    blank_run: usize,
}

pub(crate) fn cat(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let (flags, mut operands) = super::parse_flags(argv.get(1..).unwrap_or_default());
    let mut show = Show::default();
    for flag in &flags {
        match flag.as_str() {
            "n" | "--number" => show.number = true,
            "b" | "--number-nonblank" => show.nonblank = true,
            "E" | "--show-ends" => show.ends = true,
            "T" | "--show-tabs" => show.tabs = true,
            "v" | "--show-nonprinting" => show.nonprinting = true,
            "s" | "--squeeze-blank" => show.squeeze = true,
            "A" | "--show-all" => {
                show.ends = true;
                show.tabs = true;
                show.nonprinting = true;
            }
            "e" => {
                show.ends = true;
                show.nonprinting = true;
            }
            "t" => {
                show.tabs = true;
                show.nonprinting = true;
            }
            "u" => {}
            other => {
                if let Some(long) = other.strip_prefix("--") {
                    p.error(&format!("unrecognized option '--{long}'"));
                } else {
                    p.error(&format!("invalid option -- '{other}'"));
                }
                p.try_help("cat");
                return 1;
            }
        }
    }
    if show.nonblank {
        show.number = false;
    }
    let plain = !(show.number
        || show.nonblank
        || show.ends
        || show.tabs
        || show.nonprinting
        || show.squeeze);
    let mut state = State::default();
    if operands.is_empty() {
        operands.push("-".to_string());
    }
    let mut status = 0;
    for name in &operands {
        let data = if Process::is_stdin(name) {
            p.io.stdin.borrow_mut().read_all()
        } else {
            let path = p.resolve(name);
            if path.is_dir() {
                p.error(&format!("{}: Is a directory", quote_if_needed(name)));
                status = 1;
                continue;
            }
            let read = if super::devices::is_device(p, name) {
                super::devices::read_device(&path, |_| false)
            } else {
                std::fs::read(path)
            };
            match read {
                Ok(d) => d,
                Err(e) => {
                    p.error(&format!("{}: {}", quote_if_needed(name), strerror(&e)));
                    status = 1;
                    continue;
                }
            }
        };
        let data = if plain {
            data
        } else {
            decorate(&data, show, &mut state)
        };
        for chunk in data.chunks(CHUNK) {
            if !p.out(chunk) {
                return 1;
            }
        }
    }
    status
}

/// `-n`/`-b` line numbers (`%6d\t`), `-s` squeezing, `-E` line ends
/// (`$`), `-T` tabs (`^I`) and `-v` control and high bytes (`^M`, `M-^@`).
fn decorate(data: &[u8], show: Show, state: &mut State) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len() + data.len() / 8);
    for line in data.split_inclusive(|&b| b == b'\n') {
        let (body, newline) = match line.strip_suffix(b"\n") {
            Some(body) => (body, true),
            None => (line, false),
        };
        if !state.mid_line {
            if body.is_empty() && newline {
                state.blank_run += 1;
                if show.squeeze && state.blank_run > 1 {
                    continue;
                }
            } else {
                state.blank_run = 0;
            }
            if show.number || (show.nonblank && !body.is_empty()) {
                state.line_no += 1;
                out.extend_from_slice(format!("{:>6}\t", state.line_no).as_bytes());
            }
        }
        for &c in body {
            visible(&mut out, c, show);
        }
        if newline {
            if show.ends {
                out.push(b'$');
            }
            out.push(b'\n');
        }
        state.mid_line = !newline;
    }
    out
}

/// One byte as `cat -v`/`-T` show it.
fn visible(out: &mut Vec<u8>, c: u8, show: Show) {
    if c == b'\t' {
        if show.tabs {
            out.extend_from_slice(b"^I");
        } else {
            out.push(c);
        }
        return;
    }
    if !show.nonprinting {
        out.push(c);
        return;
    }
    let low = if c >= 128 {
        out.extend_from_slice(b"M-");
        c - 128
    } else {
        c
    };
    match low {
        0..=31 => {
            out.push(b'^');
            out.push(low + 64);
        }
        127 => out.extend_from_slice(b"^?"),
        _ => out.push(low),
    }
}
