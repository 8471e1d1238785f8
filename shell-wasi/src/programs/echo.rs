//! `echo` as bash's builtin behaves: `-n`, `-e`, `-E`, no `--`.

use super::Process;
use super::escapes::{Dialect, decode};

pub(crate) fn echo(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let args = argv.get(1..).unwrap_or_default();
    let (mut newline, mut escapes) = (true, false);
    let mut start = 0;
    // Options count only while every letter is one of n, e, E.
    for arg in args {
        let Some(letters) = arg.strip_prefix('-') else {
            break;
        };
        if letters.is_empty() || !letters.chars().all(|c| matches!(c, 'n' | 'e' | 'E')) {
            break;
        }
        for c in letters.chars() {
            match c {
                'n' => newline = false,
                'e' => escapes = true,
                _ => escapes = false,
            }
        }
        start += 1;
    }
    let mut out = Vec::new();
    for (i, arg) in args.iter().skip(start).enumerate() {
        if i > 0 {
            out.push(b' ');
        }
        if escapes {
            let decoded = decode(arg, Dialect::Echo);
            out.extend_from_slice(&decoded.bytes);
            if decoded.stop {
                p.out(&out);
                return 0;
            }
        } else {
            out.extend_from_slice(arg.as_bytes());
        }
    }
    if newline {
        out.push(b'\n');
    }
    p.out(&out);
    0
}
