//! `printf FORMAT [ARGS]` as bash's builtin: the format is reused until
//! the arguments run out; `%b` and `%q` are bash's additions.

use super::Process;
use super::escapes::{Dialect, decode};

/// One parsed `%` conversion.
#[derive(Debug, Default, Clone)]
struct Spec {
    left: bool,
    zero: bool,
    plus: bool,
    space: bool,
    alt: bool,
    width: Option<usize>,
    precision: Option<usize>,
    conv: char,
    /// `%(FORMAT)T`: bash's strftime conversion.
    time_format: Option<String>,
}

/// Formatting state: the arguments left and whether any was bad.
struct Args<'a> {
    items: &'a [String],
    next: usize,
    failed: bool,
}

impl<'a> Args<'a> {
    fn take(&mut self) -> Option<&'a str> {
        let item = self.items.get(self.next)?;
        self.next += 1;
        Some(item.as_str())
    }
}

pub(crate) fn printf(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let mut args = argv.get(1..).unwrap_or_default();
    if args.first().is_some_and(|a| a == "--") {
        args = args.get(1..).unwrap_or_default();
    }
    let Some(format) = args.first() else {
        p.io.err_line("printf: usage: printf [-v var] format [arguments]");
        return 2;
    };
    let mut state = Args {
        items: args.get(1..).unwrap_or_default(),
        next: 0,
        failed: false,
    };
    let mut out = Vec::new();
    loop {
        let before = state.next;
        let stop = render(p, format, &mut state, &mut out);
        if stop || state.next == before || state.next >= state.items.len() {
            break;
        }
    }
    p.out(&out);
    i32::from(state.failed)
}

/// Renders the format once. Returns true if `\c` in `%b` stopped output.
fn render(p: &Process<'_>, format: &str, args: &mut Args<'_>, out: &mut Vec<u8>) -> bool {
    let mut rest = format;
    while !rest.is_empty() {
        let Some(pos) = rest.find(['%', '\\']) else {
            out.extend_from_slice(rest.as_bytes());
            break;
        };
        out.extend_from_slice(rest.get(..pos).unwrap_or("").as_bytes());
        rest = rest.get(pos..).unwrap_or("");
        if rest.starts_with('\\') {
            let len = escape_len(rest);
            out.extend_from_slice(&decode(rest.get(..len).unwrap_or(rest), Dialect::Printf).bytes);
            rest = rest.get(len..).unwrap_or("");
            continue;
        }
        if let Some(after) = rest.strip_prefix("%%") {
            out.push(b'%');
            rest = after;
            continue;
        }
        let Some((mut spec, len)) = parse_spec(rest) else {
            // An incomplete `%` at the end is printed as is.
            out.extend_from_slice(rest.as_bytes());
            break;
        };
        rest = rest.get(len..).unwrap_or("");
        resolve_stars(&mut spec, rest, args);
        if convert(p, &spec, args, out) {
            return true;
        }
    }
    false
}

/// Bytes of one backslash escape in a format (so it decodes alone).
fn escape_len(s: &str) -> usize {
    let bytes = s.as_bytes();
    match bytes.get(1) {
        None => 1,
        Some(b'x') => {
            2 + bytes
                .iter()
                .skip(2)
                .take(2)
                .take_while(|b| b.is_ascii_hexdigit())
                .count()
        }
        Some(b'u') => {
            2 + bytes
                .iter()
                .skip(2)
                .take(4)
                .take_while(|b| b.is_ascii_hexdigit())
                .count()
        }
        Some(b'U') => {
            2 + bytes
                .iter()
                .skip(2)
                .take(8)
                .take_while(|b| b.is_ascii_hexdigit())
                .count()
        }
        Some(b'0'..=b'7') => {
            1 + bytes
                .iter()
                .skip(1)
                .take(3)
                .take_while(|b| (b'0'..=b'7').contains(b))
                .count()
        }
        Some(c) => 1 + char::from(*c).len_utf8().min(s.len() - 1),
    }
}

/// Parses `%[flags][width][.precision]conv` at the start of `s`.
/// `*` widths are recorded as `usize::MAX` and resolved later.
fn parse_spec(s: &str) -> Option<(Spec, usize)> {
    let mut spec = Spec::default();
    let chars: Vec<char> = s.chars().collect();
    let mut i = 1;
    while let Some(&c) = chars.get(i) {
        match c {
            '-' => spec.left = true,
            '0' => spec.zero = true,
            '+' => spec.plus = true,
            ' ' => spec.space = true,
            '#' => spec.alt = true,
            _ => break,
        }
        i += 1;
    }
    let (width, next) = number_or_star(&chars, i);
    spec.width = width;
    i = next;
    if chars.get(i) == Some(&'.') {
        let (precision, next) = number_or_star(&chars, i + 1);
        spec.precision = Some(precision.unwrap_or(0));
        i = next;
    }
    if chars.get(i) == Some(&'(') {
        let close = chars.iter().skip(i).position(|&c| c == ')')? + i;
        spec.time_format = Some(chars.get(i + 1..close)?.iter().collect());
        i = close + 1;
        if chars.get(i) != Some(&'T') {
            return None;
        }
    }
    // Length modifiers mean nothing here.
    while chars
        .get(i)
        .is_some_and(|c| matches!(c, 'h' | 'l' | 'L' | 'j' | 'z' | 't'))
    {
        i += 1;
    }
    spec.conv = *chars.get(i)?;
    let byte_len: usize = chars.get(..=i)?.iter().map(|c| c.len_utf8()).sum();
    Some((spec, byte_len))
}

fn number_or_star(chars: &[char], start: usize) -> (Option<usize>, usize) {
    if chars.get(start) == Some(&'*') {
        return (Some(usize::MAX), start + 1);
    }
    let digits: String = chars
        .iter()
        .skip(start)
        .take_while(|c| c.is_ascii_digit())
        .collect();
    let next = start + digits.len();
    (digits.parse().ok(), next)
}

/// `%*d`: width and precision taken from the arguments.
fn resolve_stars(spec: &mut Spec, _rest: &str, args: &mut Args<'_>) {
    if spec.width == Some(usize::MAX) {
        let w = args
            .take()
            .and_then(|a| a.trim().parse::<i64>().ok())
            .unwrap_or(0);
        if w < 0 {
            spec.left = true;
        }
        spec.width = usize::try_from(w.unsigned_abs()).ok();
    }
    if spec.precision == Some(usize::MAX) {
        let prec = args
            .take()
            .and_then(|a| a.trim().parse::<i64>().ok())
            .unwrap_or(0);
        spec.precision = usize::try_from(prec).ok();
    }
}

/// Formats one conversion. Returns true when `%b` hit `\c`.
fn convert(p: &Process<'_>, spec: &Spec, args: &mut Args<'_>, out: &mut Vec<u8>) -> bool {
    let arg = args.take();
    let text = match spec.conv {
        's' => {
            let s = arg.unwrap_or("");
            match spec.precision {
                Some(n) => s.chars().take(n).collect(),
                None => s.to_string(),
            }
        }
        'b' => {
            let decoded = decode(arg.unwrap_or(""), Dialect::Echo);
            let s = String::from_utf8_lossy(&decoded.bytes).into_owned();
            out.extend_from_slice(pad(spec, s, false).as_bytes());
            return decoded.stop;
        }
        'q' => super::quoting::shell_escape(arg.unwrap_or("")),
        'T' if spec.time_format.is_some() => {
            // No argument, -1 and -2 mean now (-2: when the shell started).
            let now = std::time::SystemTime::now();
            let secs = match arg {
                None => -1,
                Some(a) => int_arg(p, Some(a), &mut args.failed),
            };
            let (secs, nanos) = if (-2..0).contains(&secs) {
                let nanos = now
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.subsec_nanos());
                (super::timefmt::epoch_secs(now), nanos)
            } else {
                (secs, 0)
            };
            let format = spec.time_format.as_deref().unwrap_or("");
            let format = if format.is_empty() { "%X" } else { format };
            let text = super::coreutils::date::format_time(format, secs, nanos);
            match spec.precision {
                Some(n) => text.chars().take(n).collect(),
                None => text,
            }
        }
        'c' => arg
            .and_then(|a| a.chars().next())
            .map(String::from)
            .unwrap_or_default(),
        'd' | 'i' => format_signed(spec, int_arg(p, arg, &mut args.failed)),
        'u' | 'o' | 'x' | 'X' => format_unsigned(spec, int_arg(p, arg, &mut args.failed)),
        'f' | 'F' | 'e' | 'E' | 'g' | 'G' => {
            format_float(spec, float_arg(p, arg, &mut args.failed))
        }
        other => {
            p.error(&format!("`{other}': invalid format character"));
            args.failed = true;
            return true;
        }
    };
    let numeric = matches!(
        spec.conv,
        'd' | 'i' | 'u' | 'o' | 'x' | 'X' | 'f' | 'F' | 'e' | 'E' | 'g' | 'G'
    );
    out.extend_from_slice(pad(spec, text, numeric).as_bytes());
    false
}

/// Applies the width: left or right, spaces or (numbers) zeros after the sign.
fn pad(spec: &Spec, text: String, numeric: bool) -> String {
    let width = spec.width.unwrap_or(0);
    let len = text.chars().count();
    if len >= width {
        return text;
    }
    let fill = width - len;
    if spec.left {
        return format!("{text}{}", " ".repeat(fill));
    }
    if spec.zero
        && numeric
        && (spec.precision.is_none() || matches!(spec.conv, 'f' | 'F' | 'e' | 'E' | 'g' | 'G'))
    {
        let sign_len = usize::from(text.starts_with(['-', '+', ' ']));
        let (sign, digits) = text.split_at(sign_len);
        return format!("{sign}{}{digits}", "0".repeat(fill));
    }
    format!("{}{text}", " ".repeat(fill))
}

/// An integer argument: decimal, `0x` hex, `0` octal, `'c` (a character
/// code). Bad input is reported and its numeric prefix used.
fn int_arg(p: &Process<'_>, arg: Option<&str>, failed: &mut bool) -> i64 {
    let Some(raw) = arg else { return 0 };
    let s = raw.trim_start();
    if let Some(c) = s.strip_prefix(['\'', '"']).and_then(|r| r.chars().next()) {
        return i64::from(u32::from(c));
    }
    if s.is_empty() {
        return 0;
    }
    if let Some(n) = crate::interp::parse_number(s) {
        return n;
    }
    p.error(&format!("{raw}: invalid number"));
    *failed = true;
    let prefix: String = s
        .chars()
        .enumerate()
        .take_while(|(i, c)| c.is_ascii_digit() || (*i == 0 && (*c == '-' || *c == '+')))
        .map(|(_, c)| c)
        .collect();
    prefix.parse().unwrap_or(0)
}

fn float_arg(p: &Process<'_>, arg: Option<&str>, failed: &mut bool) -> f64 {
    let Some(raw) = arg else { return 0.0 };
    let s = raw.trim();
    if let Some(c) = s.strip_prefix(['\'', '"']).and_then(|r| r.chars().next()) {
        return f64::from(u32::from(c));
    }
    if let Ok(v) = s.parse::<f64>() {
        return v;
    }
    if let Some(n) = crate::interp::parse_number(s) {
        return n as f64;
    }
    p.error(&format!("{raw}: invalid number"));
    *failed = true;
    0.0
}

fn format_signed(spec: &Spec, n: i64) -> String {
    let mut digits = n.unsigned_abs().to_string();
    if let Some(prec) = spec.precision {
        if digits.len() < prec {
            digits = format!("{}{digits}", "0".repeat(prec - digits.len()));
        }
        if prec == 0 && n == 0 {
            digits.clear();
        }
    }
    let sign = if n < 0 {
        "-"
    } else if spec.plus {
        "+"
    } else if spec.space {
        " "
    } else {
        ""
    };
    format!("{sign}{digits}")
}

fn format_unsigned(spec: &Spec, n: i64) -> String {
    // Negative numbers wrap to their two's complement, as in C.
    let u = n as u64;
    let mut digits = match spec.conv {
        'o' => format!("{u:o}"),
        'x' => format!("{u:x}"),
        'X' => format!("{u:X}"),
        _ => u.to_string(),
    };
    if let Some(prec) = spec.precision
        && digits.len() < prec
    {
        digits = format!("{}{digits}", "0".repeat(prec - digits.len()));
    }
    if spec.alt && u != 0 {
        digits = match spec.conv {
            'o' if !digits.starts_with('0') => format!("0{digits}"),
            'x' => format!("0x{digits}"),
            'X' => format!("0X{digits}"),
            _ => digits,
        };
    }
    digits
}

fn format_float(spec: &Spec, v: f64) -> String {
    let prec = spec.precision.unwrap_or(6);
    let upper = spec.conv.is_ascii_uppercase();
    let body = if !v.is_finite() {
        let s = if v.is_nan() { "nan" } else { "inf" };
        if upper {
            s.to_uppercase()
        } else {
            s.to_string()
        }
    } else {
        match spec.conv.to_ascii_lowercase() {
            'e' => exp_format(v.abs(), prec, upper),
            'g' => general_format(v.abs(), prec, upper, spec.alt),
            _ => format!("{:.*}", prec, v.abs()),
        }
    };
    // C keeps the sign of -0.0.
    let sign = if v.is_sign_negative() && !v.is_nan() {
        "-"
    } else if spec.plus {
        "+"
    } else if spec.space {
        " "
    } else {
        ""
    };
    format!("{sign}{body}")
}

/// C's `%e`: `d.dddddde+XX`, at least two exponent digits.
fn exp_format(v: f64, prec: usize, upper: bool) -> String {
    let s = format!("{:.*e}", prec, v);
    let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let e = if upper { 'E' } else { 'e' };
    let sign = if exp < 0 { '-' } else { '+' };
    format!("{mantissa}{e}{sign}{:02}", exp.unsigned_abs())
}

/// C's `%g`: `%e` or `%f` by exponent, trailing zeros removed.
pub(crate) fn general_format(v: f64, prec: usize, upper: bool, alt: bool) -> String {
    let p = if prec == 0 { 1 } else { prec };
    let exp = if v == 0.0 {
        0
    } else {
        let s = format!("{:.*e}", p - 1, v);
        s.split_once('e')
            .and_then(|(_, e)| e.parse::<i32>().ok())
            .unwrap_or(0)
    };
    let p_i = i32::try_from(p).unwrap_or(i32::MAX);
    let s = if exp < -4 || exp >= p_i {
        exp_format(v, p - 1, upper)
    } else {
        let decimals = usize::try_from(p_i - 1 - exp).unwrap_or(0);
        format!("{:.*}", decimals, v)
    };
    if alt {
        return s;
    }
    strip_zeros(&s)
}

fn strip_zeros(s: &str) -> String {
    let (mantissa, exp) = match s.find(['e', 'E']) {
        Some(i) => s.split_at(i),
        None => (s, ""),
    };
    if !mantissa.contains('.') {
        return s.to_string();
    }
    let trimmed = mantissa.trim_end_matches('0').trim_end_matches('.');
    format!("{trimmed}{exp}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(s: &str) -> Spec {
        parse_spec(s).expect("spec").0
    }

    #[test]
    fn formats_numbers_like_c() {
        assert_eq!(
            pad(&spec("%05d"), format_signed(&spec("%05d"), 42), true),
            "00042"
        );
        assert_eq!(format_unsigned(&spec("%x"), 255), "ff");
        assert_eq!(format_float(&spec("%.2f"), 1.23456), "1.23");
        assert_eq!(format_float(&spec("%e"), 1.5), "1.500000e+00");
        assert_eq!(format_float(&spec("%g"), 0.0001), "0.0001");
        assert_eq!(format_float(&spec("%g"), 1e-5), "1e-05");
        assert_eq!(format_float(&spec("%g"), 123456789.0), "1.23457e+08");
        assert_eq!(format_float(&spec("%g"), 100.0), "100");
    }

    #[test]
    fn pads_strings() {
        assert_eq!(pad(&spec("%5s"), "hi".into(), false), "   hi");
        assert_eq!(pad(&spec("%-4s"), "ab".into(), false), "ab  ");
    }
}
