//! `wc [-lwmcL] [FILE]...` with GNU's column widths: as wide as the
//! digits of the inputs' total size, at least 7 when one is not a regular
//! file (stdin here is always a pipe), and bare for one count of one file.

use super::Process;
use super::args::{HasArg, Spec};
use crate::programs::quoting::quote_if_needed;

const SPEC: Spec<'static> = Spec {
    short: "lwmcL",
    long: &[
        ("lines", 'l', HasArg::No),
        ("words", 'w', HasArg::No),
        ("chars", 'm', HasArg::No),
        ("bytes", 'c', HasArg::No),
        ("max-line-length", 'L', HasArg::No),
        ("total", 'T', HasArg::Yes),
        ("files0-from", 'F', HasArg::Yes),
    ],
};

/// The counts of one input.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Counts {
    lines: u64,
    words: u64,
    chars: u64,
    bytes: u64,
    max_line: u64,
}

pub(crate) fn wc(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let args = match super::parse_args(p, &SPEC, argv, 1) {
        Ok(a) => a,
        Err(status) => return status,
    };
    let mut show = [
        args.has('l'),
        args.has('w'),
        args.has('m'),
        args.has('c'),
        args.has('L'),
    ];
    if !show.iter().any(|&s| s) {
        show = [true, true, false, true, false];
    }
    let total_mode = args.value('T').unwrap_or("auto").to_string();
    if !matches!(total_mode.as_str(), "auto" | "always" | "only" | "never") {
        p.error(&format!(
            "invalid argument {} for '--total'",
            p.quote(&total_mode)
        ));
        return 1;
    }
    let mut names = args.operands.clone();
    let from_stdin = names.is_empty();
    if from_stdin {
        names.push("-".to_string());
    }
    let shown_count = show.iter().filter(|&&s| s).count();
    // GNU sizes columns from stat(2) before reading anything.
    let width = if names.len() == 1 && shown_count == 1 {
        1
    } else {
        let mut minimum = 1;
        let mut regular_total: u64 = 0;
        for name in &names {
            if name == "-" {
                minimum = 7;
                continue;
            }
            match std::fs::metadata(p.resolve(name)) {
                Ok(m) if m.is_file() => regular_total = regular_total.saturating_add(m.len()),
                Ok(_) => minimum = 7,
                Err(_) => {}
            }
        }
        regular_total.to_string().len().max(minimum)
    };
    let mut status = 0;
    let mut total = Counts::default();
    let mut out = String::new();
    for name in &names {
        let counts = match super::read_input(p, name) {
            Ok(data) => count(&data),
            Err(e) if e.kind() == std::io::ErrorKind::IsADirectory => {
                p.error(&format!("{}: Is a directory", quote_if_needed(name)));
                status = 1;
                Counts::default()
            }
            Err(e) => {
                super::file_error(p, name, &e);
                status = 1;
                continue;
            }
        };
        total.lines += counts.lines;
        total.words += counts.words;
        total.chars += counts.chars;
        total.bytes += counts.bytes;
        total.max_line = total.max_line.max(counts.max_line);
        if total_mode != "only" {
            let label = if from_stdin {
                None
            } else {
                Some(name.as_str())
            };
            line(&mut out, counts, show, width, label);
        }
    }
    let print_total = match total_mode.as_str() {
        "always" | "only" => true,
        "never" => false,
        _ => names.len() > 1,
    };
    if print_total {
        let label = if total_mode == "only" {
            None
        } else {
            Some("total")
        };
        let width = if total_mode == "only" { 1 } else { width };
        line(&mut out, total, show, width, label);
    }
    p.out(out.as_bytes());
    status
}

fn line(out: &mut String, c: Counts, show: [bool; 5], width: usize, label: Option<&str>) {
    let values = [c.lines, c.words, c.chars, c.bytes, c.max_line];
    let mut fields = Vec::new();
    for (value, on) in values.iter().zip(show) {
        if on {
            fields.push(format!("{value:>width$}"));
        }
    }
    out.push_str(&fields.join(" "));
    if let Some(label) = label {
        out.push(' ');
        out.push_str(label);
    }
    out.push('\n');
}

fn count(data: &[u8]) -> Counts {
    let mut c = Counts {
        bytes: data.len() as u64,
        ..Counts::default()
    };
    let text = String::from_utf8_lossy(data);
    let mut in_word = false;
    let mut col: u64 = 0;
    for ch in text.chars() {
        c.chars += 1;
        match ch {
            '\n' => {
                c.lines += 1;
                c.max_line = c.max_line.max(col);
                col = 0;
            }
            '\t' => col = (col / 8 + 1) * 8,
            '\r' | '\x0c' => col = 0,
            ch if !ch.is_control() => col += 1,
            _ => {}
        }
        if ch.is_whitespace() {
            in_word = false;
        } else if !in_word {
            in_word = true;
            c.words += 1;
        }
    }
    c.max_line = c.max_line.max(col);
    // Invalid UTF-8 bytes are not characters.
    if text.contains('\u{fffd}') {
        c.chars = std::str::from_utf8(data).map_or_else(
            |_| {
                data.iter()
                    .filter(|&&b| b & 0xc0 != 0x80 && b < 0x80 || b >= 0xc0)
                    .count() as u64
            },
            |s| s.chars().count() as u64,
        );
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_like_gnu() {
        let c = count(b"hello world\nfoo\n");
        assert_eq!((c.lines, c.words, c.bytes, c.max_line), (2, 3, 16, 11));
        assert_eq!(count(b"no newline").lines, 0);
        assert_eq!(count("h\u{e9}\n".as_bytes()).chars, 3);
    }
}
