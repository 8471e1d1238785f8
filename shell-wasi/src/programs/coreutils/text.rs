//! Column tools: `cut` (`-b -c -f -d -s --complement --output-delimiter`)
//! and `fold` (`-w -s -b`). `cut -c` counts bytes, as GNU's does.

use super::Process;
use super::args::{HasArg, Spec};

const CUT_SPEC: Spec<'static> = Spec {
    short: "b:c:f:d:snz",
    long: &[
        ("bytes", 'b', HasArg::Yes),
        ("characters", 'c', HasArg::Yes),
        ("fields", 'f', HasArg::Yes),
        ("delimiter", 'd', HasArg::Yes),
        ("only-delimited", 's', HasArg::No),
        ("complement", 'C', HasArg::No),
        ("output-delimiter", 'O', HasArg::Yes),
        ("zero-terminated", 'z', HasArg::No),
    ],
};

/// Inclusive 1-based ranges; `usize::MAX` is an open end.
type Ranges = Vec<(usize, usize)>;

/// Parses `N`, `N-`, `-M`, `N-M`, comma or blank separated.
fn parse_list(text: &str, fields: bool) -> Result<Ranges, String> {
    let what = if fields {
        "field"
    } else {
        "byte/character position"
    };
    let mut ranges = Vec::new();
    for part in text.split([',', ' ']) {
        if part.is_empty() {
            return Err(if fields {
                "fields are numbered from 1".to_string()
            } else {
                "byte/character positions are numbered from 1".to_string()
            });
        }
        let num = |s: &str| -> Result<usize, String> {
            let n: usize = s
                .parse()
                .map_err(|_| format!("invalid {what} value \u{2018}{part}\u{2019}"))?;
            if n == 0 {
                return Err(if fields {
                    "fields are numbered from 1".to_string()
                } else {
                    "byte/character positions are numbered from 1".to_string()
                });
            }
            Ok(n)
        };
        let range = match part.split_once('-') {
            None => {
                let n = num(part)?;
                (n, n)
            }
            Some(("", "")) => return Err("invalid range with no endpoint: -".to_string()),
            Some(("", hi)) => (1, num(hi)?),
            Some((lo, "")) => (num(lo)?, usize::MAX),
            Some((lo, hi)) => {
                let (lo, hi) = (num(lo)?, num(hi)?);
                if hi < lo {
                    return Err("invalid decreasing range".to_string());
                }
                (lo, hi)
            }
        };
        ranges.push(range);
    }
    Ok(ranges)
}

fn selected(ranges: &Ranges, n: usize, complement: bool) -> bool {
    ranges.iter().any(|&(lo, hi)| lo <= n && n <= hi) != complement
}

pub(crate) fn cut(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let args = match super::parse_args(p, &CUT_SPEC, argv, 1) {
        Ok(a) => a,
        Err(status) => return status,
    };
    let lists: Vec<&super::args::Opt> = args
        .opts
        .iter()
        .filter(|o| matches!(o.key, 'b' | 'c' | 'f'))
        .collect();
    let Some(list) = lists.last() else {
        return super::usage(
            p,
            "you must specify a list of bytes, characters, or fields",
            1,
        );
    };
    if lists.iter().any(|o| o.key != list.key) {
        return super::usage(p, "only one list may be specified", 1);
    }
    let fields = list.key == 'f';
    let ranges = match parse_list(list.value.as_deref().unwrap_or(""), fields) {
        Ok(r) => r,
        Err(msg) => {
            let msg = msg.replace(['\u{2018}', '\u{2019}'], "'");
            let msg = if msg.contains("value '") {
                let (head, tail) = msg.split_once('\'').unwrap_or((&msg, ""));
                format!("{head}{}", p.quote(tail.trim_end_matches('\'')))
            } else {
                msg
            };
            return super::usage(p, &msg, 1);
        }
    };
    let delim = match args.value('d') {
        None => b'\t',
        Some(d) => match d.as_bytes() {
            [b] => *b,
            [] => 0,
            _ => return super::usage(p, "the delimiter must be a single character", 1),
        },
    };
    if !fields && (args.has('d') || args.has('s')) {
        let msg = if args.has('d') {
            "an input delimiter may be specified only when operating on fields"
        } else {
            "suppressing non-delimited lines makes sense\n\tonly when operating on fields"
        };
        return super::usage(p, msg, 1);
    }
    let out_delim: Vec<u8> = match args.value('O') {
        Some(d) => d.as_bytes().to_vec(),
        None => vec![delim],
    };
    let complement = args.has('C');
    let only_delimited = args.has('s');
    let sep = if args.has('z') { 0 } else { b'\n' };
    let mut names = args.operands.clone();
    if names.is_empty() {
        names.push("-".to_string());
    }
    let mut status = 0;
    for name in &names {
        let data = match super::read_input(p, name) {
            Ok(d) => d,
            Err(e) => {
                super::file_error(p, name, &e);
                status = 1;
                continue;
            }
        };
        let mut out = Vec::with_capacity(data.len());
        for line in super::split_lines(&data, sep) {
            if fields {
                if !line.contains(&delim) {
                    if !only_delimited {
                        out.extend_from_slice(line);
                        out.push(sep);
                    }
                    continue;
                }
                let mut first = true;
                for (i, field) in line.split(|&b| b == delim).enumerate() {
                    if selected(&ranges, i + 1, complement) {
                        if !first {
                            out.extend_from_slice(&out_delim);
                        }
                        first = false;
                        out.extend_from_slice(field);
                    }
                }
            } else {
                let mut prev_selected = false;
                let mut any = false;
                for (i, b) in line.iter().enumerate() {
                    let on = selected(&ranges, i + 1, complement);
                    if on {
                        if any && !prev_selected && args.has('O') {
                            out.extend_from_slice(&out_delim);
                        }
                        out.push(*b);
                        any = true;
                    }
                    prev_selected = on;
                }
            }
            out.push(sep);
        }
        if !super::write_all(p, &out) {
            return status;
        }
    }
    status
}

const FOLD_SPEC: Spec<'static> = Spec {
    short: "bsw:",
    long: &[
        ("bytes", 'b', HasArg::No),
        ("spaces", 's', HasArg::No),
        ("width", 'w', HasArg::Yes),
    ],
};

pub(crate) fn fold(p: &mut Process<'_>, argv: &[String]) -> i32 {
    // `fold -20` is `fold -w 20`.
    let argv: Vec<String> = argv
        .iter()
        .map(|a| {
            if a.len() > 1 && a.starts_with('-') && a.chars().skip(1).all(|c| c.is_ascii_digit()) {
                format!("-w{}", a.get(1..).unwrap_or_default())
            } else {
                a.clone()
            }
        })
        .collect();
    let args = match super::parse_args(p, &FOLD_SPEC, &argv, 1) {
        Ok(a) => a,
        Err(status) => return status,
    };
    let width = match args.value('w').map(str::parse::<usize>) {
        None => 80,
        Some(Ok(w)) if w > 0 => w,
        Some(_) => {
            let v = args.value('w').unwrap_or_default();
            p.error(&format!("invalid number of columns: {}", p.quote(v)));
            return 1;
        }
    };
    let spaces = args.has('s');
    let count_bytes = args.has('b');
    let mut names = args.operands.clone();
    if names.is_empty() {
        names.push("-".to_string());
    }
    let mut status = 0;
    for name in &names {
        let data = match super::read_input(p, name) {
            Ok(d) => d,
            Err(e) => {
                super::file_error(p, name, &e);
                status = 1;
                continue;
            }
        };
        let mut out = Vec::with_capacity(data.len());
        for line in data.split_inclusive(|&b| b == b'\n') {
            fold_line(line, width, spaces, count_bytes, &mut out);
        }
        if !super::write_all(p, &out) {
            return status;
        }
    }
    status
}

fn fold_line(line: &[u8], width: usize, spaces: bool, count_bytes: bool, out: &mut Vec<u8>) {
    let advance = |col: usize, b: u8| -> usize {
        if count_bytes {
            return col + 1;
        }
        match b {
            b'\t' => (col / 8 + 1) * 8,
            b'\x08' => col.saturating_sub(1),
            b'\r' => 0,
            _ => col + 1,
        }
    };
    let mut buf: Vec<u8> = Vec::new();
    let mut col = 0;
    for &b in line {
        if b == b'\n' {
            buf.push(b);
            continue;
        }
        let next = advance(col, b);
        if next > width && !buf.is_empty() {
            let split = if spaces {
                buf.iter()
                    .rposition(|&c| c == b' ' || c == b'\t')
                    .map(|i| i + 1)
            } else {
                None
            };
            match split {
                Some(at) if at < buf.len() || at == buf.len() => {
                    let rest = buf.split_off(at);
                    out.extend_from_slice(&buf);
                    out.push(b'\n');
                    buf = rest;
                    col = buf.iter().fold(0, |c, &x| advance(c, x));
                }
                _ => {
                    out.extend_from_slice(&buf);
                    out.push(b'\n');
                    buf.clear();
                    col = 0;
                }
            }
        }
        buf.push(b);
        col = advance(col, b);
    }
    out.extend_from_slice(&buf);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_parse() {
        assert_eq!(
            parse_list("1,3-4,6-", true),
            Ok(vec![(1, 1), (3, 4), (6, usize::MAX)])
        );
        assert!(parse_list("0", true).is_err());
        assert!(parse_list("3-1", false).is_err());
    }

    #[test]
    fn folds() {
        let mut out = Vec::new();
        fold_line(b"abcdefgh\n", 3, false, false, &mut out);
        assert_eq!(out, b"abc\ndef\ngh\n");
        let mut out = Vec::new();
        fold_line(b"ab cd ef\n", 5, true, false, &mut out);
        assert_eq!(out, b"ab \ncd ef\n");
    }
}
