//! `awk` (also `mawk`, `gawk`, `nawk`): a POSIX awk interpreter that
//! follows mawk 1.3.4, Debian's default awk — byte-oriented strings,
//! integers printed as integers only within 32 bits, `%d` saturating.
//! The program is lexed (`lexer.rs`), parsed into a tree (`parser.rs`)
//! and walked (`eval.rs`); values and conversions live in `value.rs`,
//! printf in `format.rs`. gawk extensions (`gensub`, `asort`, `@`…) are
//! not provided.

mod eval;
mod format;
mod lexer;
mod parser;
mod value;

use super::read_source;
use crate::programs::Process;
use value::Value;

const USAGE: &str = "usage: mawk [-F value] [-v var=value] [--] 'program text' [file ...]\nusage: mawk [-F value] [-v var=value] [-f program-file] [--] [file ...]";

pub(crate) fn awk(p: &mut Process<'_>, argv: &[String]) -> i32 {
    p.prefix = "awk".to_string();
    let args = argv.get(1..).unwrap_or_default();
    let mut fs: Option<String> = None;
    let mut assigns: Vec<(String, String)> = Vec::new();
    let mut sources: Vec<String> = Vec::new();
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        if arg == "--" {
            i += 1;
            break;
        }
        if !arg.starts_with('-') || arg == "-" {
            break;
        }
        i += 1;
        let (flag, inline) = arg.split_at(2.min(arg.len()));
        let value = |i: &mut usize| -> Option<String> {
            if !inline.is_empty() {
                return Some(inline.to_string());
            }
            let v = args.get(*i).cloned();
            *i += 1;
            v
        };
        match flag {
            "-F" => match value(&mut i) {
                Some(v) => fs = Some(v),
                None => return usage(p, "option requires an argument -- F"),
            },
            "-v" => match value(&mut i) {
                Some(v) => match v.split_once('=') {
                    Some((name, val)) => assigns.push((name.to_string(), val.to_string())),
                    None => {
                        p.error(&format!("improper assignment: -v {v}"));
                        return 2;
                    }
                },
                None => return usage(p, "option requires an argument -- v"),
            },
            "-f" => match value(&mut i) {
                Some(v) => match read_source(p, &v) {
                    Ok(data) => sources.push(String::from_utf8_lossy(&data).into_owned()),
                    Err(_) => {
                        p.error(&format!("cannot open {v} (No such file or directory)"));
                        return 2;
                    }
                },
                None => return usage(p, "option requires an argument -- f"),
            },
            "-W" => {
                let v = value(&mut i).unwrap_or_default();
                if v.starts_with('v') {
                    p.out(b"mawk 1.3.4 20200120\n");
                    return 0;
                }
            }
            "--" if arg == "--version" => {
                p.out(b"mawk 1.3.4 20200120\n");
                return 0;
            }
            _ => {
                p.error(&format!("not an option: {arg}"));
                return 2;
            }
        }
    }
    let mut operands: Vec<String> = args.get(i..).unwrap_or_default().to_vec();
    if sources.is_empty() {
        if operands.is_empty() {
            p.io.err_line(USAGE);
            return 2;
        }
        sources.push(operands.remove(0));
    }
    let text = sources.join("\n");
    let program = match lexer::lex(&text).and_then(parser::parse) {
        Ok(prog) => prog,
        Err(msg) => {
            p.error(&msg);
            return 2;
        }
    };
    let mut interp = eval::Interp::new(p, &program, operands);
    if let Some(fs) = fs {
        let fs = if fs == "t" {
            "\t".to_string()
        } else {
            unescape(&fs)
        };
        interp.set_global("FS", Value::Str(fs));
    }
    for (name, val) in assigns {
        interp.set_global(&name, Value::from_input(unescape(&val)));
    }
    interp.run()
}

fn usage(p: &Process<'_>, msg: &str) -> i32 {
    p.error(msg);
    p.io.err_line(USAGE);
    2
}

/// Escape sequences in `-v` values, `-F` and command-line assignments.
pub(super) fn unescape(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('\\') => out.push('\\'),
            Some('"') => out.push('"'),
            Some('/') => out.push('/'),
            Some('a') => out.push('\u{7}'),
            Some('b') => out.push('\u{8}'),
            Some('f') => out.push('\u{c}'),
            Some('v') => out.push('\u{b}'),
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}
