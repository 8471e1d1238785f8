//! `printf`/`sprintf` formatting with C's conversions (`%d %i %o %x %X
//! %u %c %s %e %E %f %F %g %G %%`), flags, width and precision. As in
//! mawk, integer conversions saturate at 32-bit limits.

use super::value::Value;

/// Largest magnitude mawk's integer conversions keep.
const MAX_INT: f64 = 2_147_483_647.0;

/// Formats `args` by `fmt`; missing arguments format as empty or zero.
pub(super) fn sprintf(fmt: &str, args: &[Value], convfmt: &str) -> String {
    let chars: Vec<char> = fmt.chars().collect();
    let mut out = String::new();
    let mut next_arg = args.iter();
    let mut i = 0;
    while let Some(&c) = chars.get(i) {
        i += 1;
        if c != '%' {
            out.push(c);
            continue;
        }
        if chars.get(i) == Some(&'%') {
            out.push('%');
            i += 1;
            continue;
        }
        let start = i;
        let mut flags = String::new();
        while let Some(&f) = chars.get(i).filter(|f| "-+ #0".contains(**f)) {
            flags.push(f);
            i += 1;
        }
        let mut width: Option<usize> = None;
        if chars.get(i) == Some(&'*') {
            i += 1;
            let w = next_arg.next().map_or(0.0, Value::num) as i64;
            if w < 0 {
                flags.push('-');
            }
            width = Some(w.unsigned_abs() as usize);
        } else {
            let mut w = String::new();
            while let Some(&d) = chars.get(i).filter(|d| d.is_ascii_digit()) {
                w.push(d);
                i += 1;
            }
            if !w.is_empty() {
                width = w.parse().ok();
            }
        }
        let mut precision: Option<usize> = None;
        if chars.get(i) == Some(&'.') {
            i += 1;
            if chars.get(i) == Some(&'*') {
                i += 1;
                precision = Some(next_arg.next().map_or(0.0, Value::num).max(0.0) as usize);
            } else {
                let mut p = String::new();
                while let Some(&d) = chars.get(i).filter(|d| d.is_ascii_digit()) {
                    p.push(d);
                    i += 1;
                }
                precision = Some(p.parse().unwrap_or(0));
            }
        }
        // Length modifiers are accepted and ignored.
        while chars
            .get(i)
            .is_some_and(|c| matches!(c, 'h' | 'l' | 'L' | 'q' | 'j' | 'z'))
        {
            i += 1;
        }
        let Some(&conv) = chars.get(i) else {
            out.push('%');
            out.extend(chars.get(start..).unwrap_or_default());
            break;
        };
        i += 1;
        let width = width.map(|w| w.min(1 << 20));
        let precision = precision.map(|p| p.min(1 << 10));
        let arg = next_arg.next();
        let body = match conv {
            'd' | 'i' => {
                let n = clamp_int(arg.map_or(0.0, Value::num));
                int_body(n.unsigned_abs().to_string(), n < 0, &flags, precision)
            }
            'o' | 'x' | 'X' | 'u' => {
                let n = clamp_int(arg.map_or(0.0, Value::num));
                let u = if n < 0 {
                    (n as i32) as u32 as u64
                } else {
                    n as u64
                };
                let digits = match conv {
                    'o' => format!("{u:o}"),
                    'x' => format!("{u:x}"),
                    'X' => format!("{u:X}"),
                    _ => u.to_string(),
                };
                let digits = if flags.contains('#') && u != 0 {
                    match conv {
                        'o' => format!("0{digits}"),
                        'x' => format!("0x{digits}"),
                        'X' => format!("0X{digits}"),
                        _ => digits,
                    }
                } else {
                    digits
                };
                int_body(digits, false, &flags.replace(['+', ' '], ""), precision)
            }
            'c' => match arg {
                Some(v @ (Value::Num(_) | Value::Uninit)) => {
                    let code = v.num() as u32;
                    char::from_u32(code).map(String::from).unwrap_or_default()
                }
                Some(v) => v
                    .string(convfmt)
                    .chars()
                    .next()
                    .map(String::from)
                    .unwrap_or_default(),
                None => String::new(),
            },
            's' => {
                let s = arg.map(|v| v.string(convfmt)).unwrap_or_default();
                match precision {
                    Some(p) => s.chars().take(p).collect(),
                    None => s,
                }
            }
            'e' | 'E' | 'f' | 'F' | 'g' | 'G' => {
                let x = arg.map_or(0.0, Value::num);
                float_body(x, conv, &flags, precision.unwrap_or(6))
            }
            other => {
                // Unknown conversions print as written.
                let mut s: String = String::from("%");
                s.extend(chars.get(start..i - 1).unwrap_or_default());
                s.push(other);
                out.push_str(&s);
                continue;
            }
        };
        let numeric = !matches!(conv, 's' | 'c');
        out.push_str(&pad(
            body,
            width,
            &flags,
            numeric && precision.is_none() || matches!(conv, 'e' | 'E' | 'f' | 'F' | 'g' | 'G'),
        ));
    }
    out
}

fn clamp_int(x: f64) -> i64 {
    if x.is_nan() {
        return 0;
    }
    x.clamp(-MAX_INT, MAX_INT) as i64
}

/// Sign and precision for an integer's digits.
fn int_body(digits: String, negative: bool, flags: &str, precision: Option<usize>) -> String {
    let mut digits = digits;
    if let Some(p) = precision {
        if p == 0 && digits == "0" {
            digits.clear();
        }
        while digits.len() < p {
            digits.insert(0, '0');
        }
    }
    let sign = if negative {
        "-"
    } else if flags.contains('+') {
        "+"
    } else if flags.contains(' ') {
        " "
    } else {
        ""
    };
    format!("{sign}{digits}")
}

/// Pads to `width`: left-justified with `-`, zero-filled after the sign
/// with `0` (numbers only), else spaces on the left.
fn pad(body: String, width: Option<usize>, flags: &str, zero_ok: bool) -> String {
    let Some(w) = width else {
        return body;
    };
    let len = body.chars().count();
    if len >= w {
        return body;
    }
    let fill = w - len;
    if flags.contains('-') {
        return format!("{body}{}", " ".repeat(fill));
    }
    if flags.contains('0') && zero_ok && !body.contains("inf") && !body.contains("nan") {
        let sign_len = usize::from(body.starts_with(['-', '+', ' ']));
        let prefix_len = if body
            .get(sign_len..sign_len + 2)
            .is_some_and(|p| p.eq_ignore_ascii_case("0x"))
        {
            sign_len + 2
        } else {
            sign_len
        };
        let (head, tail) = body.split_at(prefix_len.min(body.len()));
        return format!("{head}{}{tail}", "0".repeat(fill));
    }
    format!("{}{body}", " ".repeat(fill))
}

/// `%e`, `%f`, `%g` and their capitals.
pub(super) fn float_body(x: f64, conv: char, flags: &str, precision: usize) -> String {
    let upper = conv.is_ascii_uppercase();
    let sign = if x.is_sign_negative() {
        "-"
    } else if flags.contains('+') {
        "+"
    } else if flags.contains(' ') {
        " "
    } else {
        ""
    };
    let a = x.abs();
    let body = if x.is_nan() {
        "nan".to_string()
    } else if a.is_infinite() {
        "inf".to_string()
    } else {
        match conv.to_ascii_lowercase() {
            'f' => format!("{a:.precision$}"),
            'e' => exp_form(a, precision),
            _ => g_form(a, precision, flags.contains('#')),
        }
    };
    let body = if upper { body.to_uppercase() } else { body };
    let sign = if x.is_nan() && !x.is_sign_negative() {
        ""
    } else {
        sign
    };
    format!("{sign}{body}")
}

/// `d.ddde+XX` with at least two exponent digits.
fn exp_form(a: f64, precision: usize) -> String {
    let s = format!("{a:.precision$e}");
    let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let sign = if exp < 0 { '-' } else { '+' };
    format!("{mantissa}e{sign}{:02}", exp.abs())
}

/// C's `%g`: `%e` or `%f` by the exponent, trailing zeros removed.
fn g_form(a: f64, precision: usize, alt: bool) -> String {
    let p = if precision == 0 { 1 } else { precision };
    if a == 0.0 {
        return if alt {
            format!("{:.*}", p - 1, 0.0)
        } else {
            "0".to_string()
        };
    }
    // The exponent after rounding to p significant digits.
    let rounded = format!("{a:.prec$e}", prec = p - 1);
    let exp: i32 = rounded
        .split_once('e')
        .and_then(|(_, e)| e.parse().ok())
        .unwrap_or(0);
    let body = if exp < -4 || exp >= p as i32 {
        exp_form(a, p - 1)
    } else {
        let decimals = (p as i32 - 1 - exp).max(0) as usize;
        format!("{a:.decimals$}")
    };
    if alt {
        return body;
    }
    strip_zeros(&body)
}

fn strip_zeros(s: &str) -> String {
    let (mantissa, exp) = match s.find('e') {
        Some(i) => s.split_at(i),
        None => (s, ""),
    };
    let mantissa = if mantissa.contains('.') {
        mantissa.trim_end_matches('0').trim_end_matches('.')
    } else {
        mantissa
    };
    format!("{mantissa}{exp}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(fmt: &str, args: &[Value]) -> String {
        sprintf(fmt, args, "%.6g")
    }

    #[test]
    fn c_conversions() {
        assert_eq!(
            f(
                "%5.2f|%-5s|%05d|%x",
                &[
                    Value::Num(3.14259),
                    Value::Str("ab".into()),
                    Value::Num(42.0),
                    Value::Num(255.0)
                ]
            ),
            " 3.14|ab   |00042|ff"
        );
        assert_eq!(
            f(
                "%e %g %g",
                &[Value::Num(1234.5), Value::Num(0.0001234), Value::Num(1e20)]
            ),
            "1.234500e+03 0.0001234 1e+20"
        );
        assert_eq!(
            f(
                "%d %c %c",
                &[Value::Num(3e9), Value::Num(65.0), Value::Str("hi".into())]
            ),
            "2147483647 A h"
        );
        assert_eq!(f("%s and %d%%", &[]), " and 0%");
        assert_eq!(f("%.6g", &[Value::Num(0.1 + 0.2)]), "0.3");
        assert_eq!(f("%+.3e", &[Value::Num(-0.000123)]), "-1.230e-04");
    }
}
