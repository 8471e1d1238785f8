//! `cat [-n] [-E] [-A] [FILE|-]...`.

use super::Process;
use super::quoting::quote_if_needed;
use crate::errors::strerror;

/// Bytes handed to the output sink per write.
const CHUNK: usize = 64 * 1024;

pub(crate) fn cat(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let (flags, mut operands) = super::parse_flags(argv.get(1..).unwrap_or_default());
    let mut number = false;
    let mut ends = false;
    for flag in &flags {
        match flag.as_str() {
            "n" | "--number" => number = true,
            "E" | "--show-ends" => ends = true,
            "A" | "--show-all" => ends = true,
            "u" => {}
            other => {
                p.error(&format!(
                    "invalid option -- '{}'",
                    other.trim_start_matches('-')
                ));
                p.try_help("cat");
                return 1;
            }
        }
    }
    if operands.is_empty() {
        operands.push("-".to_string());
    }
    let mut status = 0;
    let mut line_no = 0usize;
    for name in &operands {
        let data = if name == "-" {
            p.io.stdin.borrow_mut().read_all()
        } else {
            let path = p.resolve(name);
            if path.is_dir() {
                p.error(&format!("{}: Is a directory", quote_if_needed(name)));
                status = 1;
                continue;
            }
            match std::fs::read(path) {
                Ok(d) => d,
                Err(e) => {
                    p.error(&format!("{}: {}", quote_if_needed(name), strerror(&e)));
                    status = 1;
                    continue;
                }
            }
        };
        let data = if number || ends {
            decorate(&data, number, ends, &mut line_no)
        } else {
            data
        };
        for chunk in data.chunks(CHUNK) {
            if !p.out(chunk) {
                return 1;
            }
        }
    }
    status
}

/// `-n` line numbers (`%6d\t`) and `-E` line ends (`$`).
fn decorate(data: &[u8], number: bool, ends: bool, line_no: &mut usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len() + data.len() / 8);
    for line in data.split_inclusive(|&b| b == b'\n') {
        if number {
            *line_no += 1;
            out.extend_from_slice(format!("{:>6}\t", line_no).as_bytes());
        }
        match line.strip_suffix(b"\n") {
            Some(body) => {
                out.extend_from_slice(body);
                if ends {
                    out.push(b'$');
                }
                out.push(b'\n');
            }
            None => out.extend_from_slice(line),
        }
    }
    out
}
