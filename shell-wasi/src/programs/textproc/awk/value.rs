//! awk values: numbers, strings, and "strnums" (input that looks like a
//! number, compared numerically), with awk's conversions between them.

use super::format::sprintf;

#[derive(Debug, Clone)]
pub(super) enum Value {
    Uninit,
    Num(f64),
    Str(String),
    /// Input text (a field, `getline var`, `-v`) that looks numeric.
    StrNum(String, f64),
}

impl Value {
    /// A value from input: a strnum when the text looks like a number.
    pub(super) fn from_input(s: String) -> Self {
        match looks_numeric(&s) {
            Some(n) => Value::StrNum(s, n),
            None => Value::Str(s),
        }
    }

    pub(super) fn num(&self) -> f64 {
        match self {
            Value::Uninit => 0.0,
            Value::Num(n) | Value::StrNum(_, n) => *n,
            Value::Str(s) => str_to_num(s),
        }
    }

    /// The string form, numbers converted with `fmt` (CONVFMT or OFMT).
    pub(super) fn string(&self, fmt: &str) -> String {
        match self {
            Value::Uninit => String::new(),
            Value::Num(n) => num_to_string(*n, fmt),
            Value::Str(s) | Value::StrNum(s, _) => s.clone(),
        }
    }

    pub(super) fn truthy(&self) -> bool {
        match self {
            Value::Uninit => false,
            Value::Num(n) => *n != 0.0,
            Value::StrNum(_, n) => *n != 0.0,
            Value::Str(s) => !s.is_empty(),
        }
    }

    /// Compared as numbers (both numeric or strnum/uninit) or strings.
    pub(super) fn is_numeric(&self) -> bool {
        matches!(self, Value::Num(_) | Value::StrNum(..) | Value::Uninit)
    }
}

/// A number as awk prints it: integers plainly, others with `fmt`.
pub(super) fn num_to_string(n: f64, fmt: &str) -> String {
    if n.is_nan() {
        return if n.is_sign_negative() { "-nan" } else { "nan" }.to_string();
    }
    if n.is_infinite() {
        return if n < 0.0 { "-inf" } else { "inf" }.to_string();
    }
    // mawk prints integral values as integers only within 32 bits.
    if n == n.trunc() && n.abs() <= 2_147_483_647.0 {
        return format!("{}", n as i64);
    }
    sprintf(fmt, &[Value::Num(n)], "%.6g")
}

/// awk's string-to-number: the longest numeric prefix, else 0.
pub(super) fn str_to_num(s: &str) -> f64 {
    let t = s.trim_start_matches([' ', '\t', '\n', '\r', '\u{b}', '\u{c}']);
    let b = t.as_bytes();
    let mut i = 0;
    if matches!(b.first(), Some(b'+' | b'-')) {
        i += 1;
    }
    let lower = t.get(i..i + 3).map(str::to_ascii_lowercase);
    if lower.as_deref() == Some("inf") || lower.as_deref() == Some("nan") {
        // mawk reads these through strtod.
        let sign = if b.first() == Some(&b'-') { -1.0 } else { 1.0 };
        return if lower.as_deref() == Some("inf") {
            sign * f64::INFINITY
        } else {
            f64::NAN
        };
    }
    if t.get(i..i + 2)
        .is_some_and(|p| p.eq_ignore_ascii_case("0x"))
    {
        let hex: String = t
            .get(i + 2..)
            .unwrap_or("")
            .chars()
            .take_while(char::is_ascii_hexdigit)
            .collect();
        if !hex.is_empty() {
            let v = i64::from_str_radix(&hex, 16)
                .map(|v| v as f64)
                .unwrap_or(0.0);
            return if b.first() == Some(&b'-') { -v } else { v };
        }
    }
    let start = i;
    while b.get(i).is_some_and(u8::is_ascii_digit) {
        i += 1;
    }
    if b.get(i) == Some(&b'.') {
        i += 1;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
    }
    if i == start || (i == start + 1 && b.get(start) == Some(&b'.')) {
        return 0.0;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        let mut j = i + 1;
        if matches!(b.get(j), Some(b'+' | b'-')) {
            j += 1;
        }
        if b.get(j).is_some_and(u8::is_ascii_digit) {
            while b.get(j).is_some_and(u8::is_ascii_digit) {
                j += 1;
            }
            i = j;
        }
    }
    t.get(..i)
        .and_then(|p| p.parse::<f64>().ok())
        .unwrap_or(0.0)
}

/// The number a whole input string spells (blanks around allowed).
pub(super) fn looks_numeric(s: &str) -> Option<f64> {
    let t = s.trim_matches([' ', '\t', '\n', '\r']);
    if t.is_empty() {
        return None;
    }
    let body = t.strip_prefix(['+', '-']).unwrap_or(t);
    let first = body.chars().next()?;
    if !(first.is_ascii_digit() || first == '.') {
        return None;
    }
    if !body
        .chars()
        .all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '+' | '-'))
    {
        return None;
    }
    t.parse::<f64>().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_convert_by_prefix() {
        assert_eq!(str_to_num("12abc"), 12.0);
        assert_eq!(str_to_num(" -3.5e2x"), -350.0);
        assert_eq!(str_to_num("abc"), 0.0);
        assert_eq!(str_to_num("."), 0.0);
    }

    #[test]
    fn numbers_print_like_awk() {
        assert_eq!(num_to_string(3.0, "%.6g"), "3");
        assert_eq!(num_to_string(0.1 + 0.2, "%.6g"), "0.3");
        assert_eq!(num_to_string(1e20, "%.6g"), "1e+20");
        assert_eq!(num_to_string(2147483648.0, "%.6g"), "2.14748e+09");
    }

    #[test]
    fn input_numbers_are_strnums() {
        assert!(matches!(Value::from_input(" 10 ".into()), Value::StrNum(_, n) if n == 10.0));
        assert!(matches!(Value::from_input("10x".into()), Value::Str(_)));
    }
}
