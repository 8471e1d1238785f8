//! Streams of output: `seq [-s SEP] [-w] [-f FMT] [FIRST [INCR]] LAST`,
//! `yes [STRING]...` and `tee [-a] [FILE]...`. `seq` and `yes` write as
//! they go and stop as soon as the reader is gone or a `timeout` expires.

use std::io::Write;

use super::Process;
use super::args::{HasArg, Spec};

/// Bytes gathered before each write.
const BATCH: usize = 16 * 1024;

const SEQ_SPEC: Spec<'static> = Spec {
    short: "s:wf:",
    long: &[
        ("separator", 's', HasArg::Yes),
        ("equal-width", 'w', HasArg::No),
        ("format", 'f', HasArg::Yes),
    ],
};

/// A parsed operand: its value and how many decimals it was written with.
#[derive(Debug, Clone, Copy)]
struct Num {
    value: f64,
    int: Option<i64>,
    precision: usize,
}

fn parse_num(text: &str) -> Option<Num> {
    let t = text.trim_start();
    let lower = t.to_ascii_lowercase();
    if lower.contains("nan") || lower.contains("inf") || lower.contains('x') {
        return None;
    }
    let value: f64 = t.strip_prefix('+').unwrap_or(t).parse().ok()?;
    let (mantissa, exp) = match lower.split_once('e') {
        Some((m, e)) => (m.to_string(), e.parse::<i64>().ok()?),
        None => (lower.clone(), 0),
    };
    let frac = mantissa.split_once('.').map_or(0, |(_, f)| f.len());
    let precision = usize::try_from((i64::try_from(frac).unwrap_or(0) - exp).max(0)).unwrap_or(0);
    let int = if precision == 0 && value.abs() < 9.0e15 && value.fract() == 0.0 {
        Some(value as i64)
    } else {
        None
    };
    Some(Num {
        value,
        int,
        precision,
    })
}

pub(crate) fn seq(p: &mut Process<'_>, argv: &[String]) -> i32 {
    // Negative numbers are operands, not options.
    let mut rest: Vec<String> = Vec::new();
    let mut operands: Vec<String> = Vec::new();
    let args = argv.get(1..).unwrap_or_default();
    let mut i = 0;
    while let Some(a) = args.get(i) {
        let numeric = a.len() > 1
            && a.starts_with('-')
            && a.chars()
                .nth(1)
                .is_some_and(|c| c.is_ascii_digit() || c == '.');
        if numeric || !a.starts_with('-') || a == "-" {
            operands.push(a.clone());
        } else if a == "--" {
            operands.extend(args.get(i + 1..).unwrap_or_default().iter().cloned());
            break;
        } else {
            rest.push(a.clone());
            if matches!(a.as_str(), "-s" | "-f" | "--separator" | "--format")
                && let Some(v) = args.get(i + 1)
            {
                rest.push(v.clone());
                i += 1;
            }
        }
        i += 1;
    }
    let mut full = vec!["seq".to_string()];
    full.extend(rest);
    let parsed = match super::parse_args(p, &SEQ_SPEC, &full, 1) {
        Ok(a) => a,
        Err(status) => return status,
    };
    if operands.is_empty() {
        return super::usage(p, "missing operand", 1);
    }
    if operands.len() > 3 {
        let extra = operands.get(3).cloned().unwrap_or_default();
        return super::usage(p, &format!("extra operand {}", p.quote(&extra)), 1);
    }
    let mut nums = Vec::new();
    for op in &operands {
        match parse_num(op) {
            Some(n) => nums.push(n),
            None => {
                return super::usage(
                    p,
                    &format!("invalid floating point argument: {}", p.quote(op)),
                    1,
                );
            }
        }
    }
    let one = Num {
        value: 1.0,
        int: Some(1),
        precision: 0,
    };
    let (first, step, last) = match nums.as_slice() {
        [l] => (one, one, *l),
        [f, l] => (*f, one, *l),
        [f, s, l] => (*f, *s, *l),
        _ => return 1,
    };
    if step.value == 0.0 {
        let shown = operands.get(1).cloned().unwrap_or_default();
        return super::usage(
            p,
            &format!("invalid Zero increment value: {}", p.quote(&shown)),
            1,
        );
    }
    let sep = parsed.value('s').unwrap_or("\n").to_string();
    let format = parsed.value('f').map(str::to_string);
    if let Some(f) = &format
        && let Err(msg) = check_format(f)
    {
        p.error(&msg.replace("{}", &p.quote(f)));
        return 1;
    }
    let precision = first.precision.max(step.precision);
    let width = if parsed.has('w') {
        [first.value, last.value]
            .iter()
            .map(|v| format!("{:.*}", precision, v).len())
            .max()
            .unwrap_or(0)
    } else {
        0
    };
    let render = |v: f64, iv: Option<i64>| -> String {
        if let Some(f) = &format {
            return apply_format(f, v);
        }
        let text = match iv {
            Some(i) if precision == 0 => i.to_string(),
            _ => format!("{:.*}", precision, v),
        };
        if text.len() < width {
            let (sign, digits) = match text.strip_prefix('-') {
                Some(d) => ("-", d),
                None => ("", text.as_str()),
            };
            format!("{sign}{}{digits}", "0".repeat(width - text.len()))
        } else {
            text
        }
    };
    let mut buf = String::new();
    let mut count: u64 = 0;
    let mut wrote_any = false;
    let ints = match (first.int, step.int, last.int) {
        (Some(a), Some(b), Some(c)) if precision == 0 => Some((a, b, c)),
        _ => None,
    };
    loop {
        let (value, ivalue) = match ints {
            Some((a, b, c)) => {
                let Some(v) = i64::try_from(count)
                    .ok()
                    .and_then(|n| n.checked_mul(b))
                    .and_then(|d| a.checked_add(d))
                else {
                    break;
                };
                if (b > 0 && v > c) || (b < 0 && v < c) {
                    break;
                }
                (v as f64, Some(v))
            }
            None => {
                let v = first.value + count as f64 * step.value;
                // Compare at the printed precision, as GNU's long double does.
                let scale = 10f64.powi(i32::try_from(precision.min(15)).unwrap_or(0)) * 1e3;
                let (rv, rl) = ((v * scale).round(), (last.value * scale).round());
                if (step.value > 0.0 && rv > rl) || (step.value < 0.0 && rv < rl) {
                    break;
                }
                (v, None)
            }
        };
        if wrote_any {
            buf.push_str(&sep);
        }
        wrote_any = true;
        buf.push_str(&render(value, ivalue));
        count += 1;
        if buf.len() >= BATCH {
            if !p.out(buf.as_bytes()) || super::deadline_passed() {
                return 1;
            }
            buf.clear();
        }
    }
    if wrote_any {
        buf.push('\n');
    }
    p.out(buf.as_bytes());
    0
}

/// One `%` directive with flags, width and precision: `f`, `e`, `g`.
fn check_format(f: &str) -> Result<(), String> {
    let directives = f.replace("%%", "").matches('%').count();
    match directives {
        0 => Err("format {} has no % directive".to_string()),
        1 => Ok(()),
        _ => Err("format {} has too many % directives".to_string()),
    }
}

fn apply_format(f: &str, v: f64) -> String {
    let mut out = String::new();
    let mut chars = f.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        if chars.peek() == Some(&'%') {
            chars.next();
            out.push('%');
            continue;
        }
        let mut flags = String::new();
        while let Some(&f) = chars.peek().filter(|c| "-+ #0'".contains(**c)) {
            flags.push(f);
            chars.next();
        }
        let mut width = String::new();
        while let Some(&d) = chars.peek().filter(|c| c.is_ascii_digit()) {
            width.push(d);
            chars.next();
        }
        let mut prec: Option<usize> = None;
        if chars.peek() == Some(&'.') {
            chars.next();
            let mut digits = String::new();
            while let Some(&d) = chars.peek().filter(|c| c.is_ascii_digit()) {
                digits.push(d);
                chars.next();
            }
            prec = Some(
                digits
                    .parse::<usize>()
                    .unwrap_or(0)
                    .min(super::MAX_FIELD_WIDTH),
            );
        }
        while chars.peek().is_some_and(|c| *c == 'L' || *c == 'l') {
            chars.next();
        }
        let conv = chars.next().unwrap_or('g');
        out.push_str(&pad_number(
            &format_float(v, conv, prec, flags.contains('#')),
            &flags,
            width.parse().unwrap_or(0),
        ));
    }
    out
}

/// C's `%f`, `%e`, `%g` (and upper-case forms) of a value.
pub(crate) fn format_float(v: f64, conv: char, prec: Option<usize>, alt: bool) -> String {
    let p = prec.unwrap_or(6);
    let text = match conv.to_ascii_lowercase() {
        'f' => format!("{v:.p$}"),
        'e' => c_exp(v, p),
        'a' => format!("{v}"),
        _ => {
            let p = if p == 0 { 1 } else { p };
            if v == 0.0 {
                "0".to_string()
            } else {
                let exp = v.abs().log10().floor() as i64;
                // Rounding can carry into the next power of ten.
                let exp = {
                    let s = c_exp(v, p - 1);
                    s.rsplit_once('e')
                        .and_then(|(_, e)| e.parse::<i64>().ok())
                        .unwrap_or(exp)
                };
                let p_i = i64::try_from(p).unwrap_or(6);
                if exp < -4 || exp >= p_i {
                    let s = c_exp(v, p - 1);
                    if alt {
                        s
                    } else {
                        let (m, e) = s.split_once('e').unwrap_or((&s, ""));
                        format!("{}e{e}", trim_zeros(m))
                    }
                } else {
                    let decimals = usize::try_from(p_i - 1 - exp).unwrap_or(0);
                    let s = format!("{v:.decimals$}");
                    if alt { s } else { trim_zeros(&s) }
                }
            }
        }
    };
    if conv.is_ascii_uppercase() {
        text.to_ascii_uppercase()
    } else {
        text
    }
}

fn trim_zeros(s: &str) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s.to_string()
    }
}

/// `%.pe`: mantissa and a two-digit signed exponent.
fn c_exp(v: f64, p: usize) -> String {
    let s = format!("{v:.p$e}");
    let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
    let e: i64 = e.parse().unwrap_or(0);
    let sign = if e < 0 { '-' } else { '+' };
    format!("{m}e{sign}{:02}", e.abs())
}

fn pad_number(text: &str, flags: &str, width: usize) -> String {
    let mut t = text.to_string();
    if flags.contains('+') && !t.starts_with('-') {
        t.insert(0, '+');
    } else if flags.contains(' ') && !t.starts_with('-') {
        t.insert(0, ' ');
    }
    let width = width.min(super::MAX_FIELD_WIDTH);
    let len = t.chars().count();
    if len >= width {
        return t;
    }
    let fill = width - len;
    if flags.contains('-') {
        format!("{t}{}", " ".repeat(fill))
    } else if flags.contains('0') {
        let split = usize::from(t.starts_with(['-', '+', ' ']));
        let (sign, digits) = t.split_at(split);
        format!("{sign}{}{digits}", "0".repeat(fill))
    } else {
        format!("{}{t}", " ".repeat(fill))
    }
}

pub(crate) fn yes(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let words: Vec<String> = argv
        .get(1..)
        .unwrap_or_default()
        .iter()
        .filter(|a| *a != "--")
        .cloned()
        .collect();
    let line = if words.is_empty() {
        "y\n".to_string()
    } else {
        format!("{}\n", words.join(" "))
    };
    let repeat = (BATCH / line.len()).max(1);
    let chunk = line.repeat(repeat);
    while p.out(chunk.as_bytes()) {
        if super::deadline_passed() {
            return 124;
        }
    }
    1
}

const TEE_SPEC: Spec<'static> = Spec {
    short: "aip",
    long: &[
        ("append", 'a', HasArg::No),
        ("ignore-interrupts", 'i', HasArg::No),
        ("output-error", 'p', HasArg::Optional),
    ],
};

pub(crate) fn tee(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let args = match super::parse_args(p, &TEE_SPEC, argv, 1) {
        Ok(a) => a,
        Err(status) => return status,
    };
    let mut status = 0;
    let mut files = Vec::new();
    for name in &args.operands {
        if name == "-" {
            continue;
        }
        let file = std::fs::OpenOptions::new()
            .create(true)
            .write(true)
            .append(args.has('a'))
            .truncate(!args.has('a'))
            .open(p.resolve(name));
        match file {
            Ok(f) => files.push((name.clone(), f)),
            Err(e) => {
                super::file_error(p, name, &e);
                status = 1;
            }
        }
    }
    let data = p.io.stdin.borrow_mut().read_all();
    for (name, file) in &mut files {
        if let Err(e) = file.write_all(&data) {
            super::file_error(p, name, &e);
            status = 1;
        }
    }
    super::write_all(p, &data);
    status
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_like_c() {
        assert_eq!(format_float(1.0, 'g', None, false), "1");
        assert_eq!(format_float(0.5, 'g', None, false), "0.5");
        assert_eq!(format_float(1e10, 'g', None, false), "1e+10");
        assert_eq!(format_float(123_456_789.0, 'g', None, false), "1.23457e+08");
        assert_eq!(apply_format("%03g", 2.0), "002");
        assert_eq!(apply_format("%.2f%%", 2.0), "2.00%");
    }

    #[test]
    fn operands_keep_precision() {
        assert_eq!(parse_num("1.50").map(|n| n.precision), Some(2));
        assert_eq!(parse_num("1e2").map(|n| n.int), Some(Some(100)));
        assert!(parse_num("abc").is_none());
    }
}
