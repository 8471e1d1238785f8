//! `numfmt [--from=UNIT] [--to=UNIT] [--round=M] [--suffix=S]
//! [--padding=N] [--field=LIST] [--format=FMT] [--header[=N]] [-d C]
//! [--invalid=MODE] [--from-unit=N] [--to-unit=N] [NUMBER...]`: numbers to
//! and from SI/IEC units, ported from GNU coreutils 9.1. GNU computes in
//! x87 `long double`; this uses `f64`, which agrees for every value of up
//! to 15 significant digits.

use super::Process;
use super::args::{HasArg, Spec};
use super::fields::{FieldRanges, set_fields};

const SPEC: Spec<'static> = Spec {
    short: "d:z",
    long: &[
        ("from", 'F', HasArg::Yes),
        ("from-unit", 'U', HasArg::Yes),
        ("to", 'T', HasArg::Yes),
        ("to-unit", 'u', HasArg::Yes),
        ("round", 'R', HasArg::Yes),
        ("padding", 'P', HasArg::Yes),
        ("suffix", 'S', HasArg::Yes),
        ("grouping", 'G', HasArg::No),
        ("delimiter", 'd', HasArg::Yes),
        ("field", 'f', HasArg::Yes),
        ("debug", 'D', HasArg::No),
        ("header", 'H', HasArg::Optional),
        ("format", 'm', HasArg::Yes),
        ("invalid", 'I', HasArg::Yes),
        ("zero-terminated", 'z', HasArg::No),
    ],
};

/// Digits a `long double` holds exactly (LDBL_DIG).
const MAX_UNSCALED_DIGITS: u32 = 18;
/// More digits than `999Y` has.
const MAX_ACCEPTABLE_DIGITS: u32 = 27;
/// numfmt's status for a conversion error.
const CONVERSION_ERROR: i32 = 2;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scale {
    None,
    Auto,
    Si,
    Iec,
    IecI,
}

impl Scale {
    fn base(self) -> f64 {
        if matches!(self, Self::Iec | Self::IecI) {
            1024.0
        } else {
            1000.0
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Round {
    Up,
    Down,
    FromZero,
    TowardsZero,
    Nearest,
}

impl Round {
    /// GNU's simple_round; the sum with 0.0 turns -0 into 0 as the
    /// integer round trip does.
    fn apply(self, v: f64) -> f64 {
        let r = match self {
            Self::Up => v.ceil(),
            Self::Down => v.floor(),
            Self::FromZero if v < 0.0 => v.floor(),
            Self::FromZero => v.ceil(),
            Self::TowardsZero => v.trunc(),
            Self::Nearest if v < 0.0 => (v - 0.5).trunc(),
            Self::Nearest => (v + 0.5).trunc(),
        };
        r + 0.0
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Invalid {
    Abort,
    Fail,
    Warn,
    Ignore,
}

/// gnulib's simple_strtod errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sse {
    Ok,
    PrecisionLoss,
    Overflow,
    InvalidNumber,
    ForbiddenSuffix,
    InvalidSuffix,
    MissingI,
}

impl Sse {
    fn ok(self) -> bool {
        matches!(self, Self::Ok | Self::PrecisionLoss)
    }
}

struct Numfmt {
    from: Scale,
    to: Scale,
    round: Round,
    invalid: Invalid,
    suffix: Option<String>,
    from_unit: u64,
    to_unit: u64,
    padding: usize,
    left: bool,
    zero_padding: usize,
    precision: Option<usize>,
    prefix: String,
    format_suffix: String,
    delimiter: Option<u8>,
    eol: u8,
    fields: Option<FieldRanges>,
    debug: bool,
    auto_padding: bool,
}

/// Stops the run: abort mode's first conversion error (status 2).
struct Abort;

/// A parsed integer part: value, negative, bytes used.
fn strtod_int(s: &[u8]) -> (Sse, f64, bool, usize) {
    let negative = s.first() == Some(&b'-');
    let mut i = usize::from(negative);
    let (mut value, mut digits, mut found) = (0.0f64, 0u32, false);
    let mut e = Sse::Ok;
    while let Some(&c) = s.get(i).filter(|c| c.is_ascii_digit()) {
        let d = c - b'0';
        found = true;
        if value != 0.0 || d != 0 {
            digits += 1;
        }
        if digits > MAX_UNSCALED_DIGITS {
            e = Sse::PrecisionLoss;
        }
        if digits > MAX_ACCEPTABLE_DIGITS {
            return (Sse::Overflow, 0.0, negative, i);
        }
        value = value * 10.0 + f64::from(d);
        i += 1;
    }
    if !found && s.get(i) != Some(&b'.') {
        return (Sse::InvalidNumber, 0.0, negative, i);
    }
    (e, if negative { -value } else { value }, negative, i)
}

/// `[-]DIGITS[.DIGITS]`: value, precision, bytes used.
fn strtod_float(s: &[u8]) -> (Sse, f64, usize, usize) {
    let (mut e, mut value, negative, mut end) = strtod_int(s);
    if !e.ok() {
        return (e, value, 0, end);
    }
    let mut precision = 0;
    if s.get(end) == Some(&b'.') {
        end += 1;
        let rest = s.get(end..).unwrap_or_default();
        let (e2, frac, neg_frac, used) = strtod_int(rest);
        if !e2.ok() {
            return (e2, value, 0, end + used);
        }
        if e2 == Sse::PrecisionLoss {
            e = e2;
        }
        if neg_frac {
            return (Sse::InvalidNumber, value, 0, end);
        }
        let scaled = frac / 10f64.powi(i32::try_from(used).unwrap_or(i32::MAX));
        value = if negative {
            value - scaled
        } else {
            value + scaled
        };
        precision = used;
        end += used;
    }
    (e, value, precision, end)
}

/// `[-]DIGITS[.DIGITS]` as an exact decimal (mantissa, digits after the
/// point), for printing unscaled numbers without binary rounding.
fn exact_decimal(text: &str) -> Option<(i128, u32)> {
    let (negative, body) = match text.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, text),
    };
    let (int, frac) = body.split_once('.').unwrap_or((body, ""));
    if int.len() + frac.len() > 30
        || !int.bytes().chain(frac.bytes()).all(|c| c.is_ascii_digit())
        || (int.is_empty() && frac.is_empty())
    {
        return None;
    }
    let digits = format!("{int}{frac}");
    let m: i128 = if digits.is_empty() {
        0
    } else {
        digits.parse().ok()?
    };
    Some((
        if negative { -m } else { m },
        u32::try_from(frac.len()).ok()?,
    ))
}

/// An exact decimal rounded to `precision` digits and printed as
/// `%0W.Pf` would print it.
fn format_exact(m: i128, scale: u32, precision: usize, round: Round, zero: usize) -> String {
    let target = u32::try_from(precision).unwrap_or(u32::MAX);
    let mut m = m;
    if target < scale {
        let div = 10i128.pow(scale - target);
        let (q, r) = (m.div_euclid(div), m.rem_euclid(div));
        // q is the floor; decide by the mode whether to step up.
        let up = match round {
            Round::Up => r != 0,
            Round::Down => false,
            Round::FromZero => r != 0 && m > 0,
            Round::TowardsZero => r != 0 && m < 0,
            Round::Nearest => {
                if m >= 0 {
                    2 * r >= div
                } else {
                    2 * r > div
                }
            }
        };
        m = q + i128::from(up);
    } else {
        m *= 10i128.pow((target - scale).min(30));
    }
    let negative = m < 0;
    let digits = m.unsigned_abs().to_string();
    let p = precision.min(30);
    let padded = format!("{digits:0>width$}", width = p + 1);
    let (int, frac) = padded.split_at(padded.len() - p);
    let body = if p > 0 {
        format!("{int}.{frac}")
    } else {
        int.to_string()
    };
    let sign = if negative { "-" } else { "" };
    let width = zero.saturating_sub(sign.len());
    format!("{sign}{body:0>width$}")
}

fn suffix_power(c: u8) -> Option<i32> {
    b"KMGTPEZY"
        .iter()
        .position(|&s| s == c)
        .and_then(|i| i32::try_from(i + 1).ok())
}

impl Numfmt {
    /// GNU's simple_strtod_human: value, precision, bytes used.
    fn strtod_human(&self, s: &[u8]) -> (Sse, f64, usize, usize) {
        let mut base = self.from.base();
        let (e, mut value, mut precision, mut end) = strtod_float(s);
        if !e.ok() {
            return (e, value, precision, end);
        }
        let mut power = 0;
        if end < s.len() {
            while matches!(s.get(end), Some(b' ' | b'\t')) {
                end += 1;
            }
            let Some(p) = s.get(end).copied().and_then(suffix_power) else {
                return (Sse::InvalidSuffix, value, precision, end);
            };
            if self.from == Scale::None {
                return (Sse::ForbiddenSuffix, value, precision, end);
            }
            power = p;
            end += 1;
            if self.from == Scale::Auto && s.get(end) == Some(&b'i') {
                base = 1024.0;
                end += 1;
            }
            precision = 0;
        }
        if self.from == Scale::IecI {
            if s.get(end) == Some(&b'i') {
                end += 1;
            } else {
                return (Sse::MissingI, value, precision, end);
            }
        }
        if power > 0 {
            value *= base.powi(power);
        }
        (e, value, precision, end)
    }

    /// `error (conv_exit_code, …)`: a message, and in abort mode the end.
    fn conversion_error(&self, p: &Process<'_>, msg: &str) -> Result<(), Abort> {
        if self.invalid == Invalid::Ignore {
            return Ok(());
        }
        p.error(msg);
        if self.invalid == Invalid::Abort {
            return Err(Abort);
        }
        Ok(())
    }

    fn parse_number(&self, p: &Process<'_>, text: &str) -> Result<Option<(f64, usize)>, Abort> {
        let bytes = text.as_bytes();
        let (e, value, precision, end) = self.strtod_human(bytes);
        let q = p.quote(text);
        let msg = match e {
            Sse::Ok | Sse::PrecisionLoss => None,
            Sse::Overflow => Some(format!("value too large to be converted: {q}")),
            Sse::InvalidNumber => Some(format!("invalid number: {q}")),
            Sse::ForbiddenSuffix => Some(format!(
                "rejecting suffix in input: {q} (consider using --from)"
            )),
            Sse::InvalidSuffix => Some(format!("invalid suffix in input: {q}")),
            Sse::MissingI => Some(format!("missing 'i' suffix in input: {q} (e.g Ki/Mi/Gi)")),
        };
        if let Some(msg) = msg {
            self.conversion_error(p, &msg)?;
            return Ok(None);
        }
        if end < bytes.len() {
            let rest = String::from_utf8_lossy(bytes.get(end..).unwrap_or_default());
            self.conversion_error(
                p,
                &format!("invalid suffix in input {q}: {}", p.quote(&rest)),
            )?;
            return Ok(None);
        }
        if e == Sse::PrecisionLoss && self.debug {
            p.error(&format!("large input value {q}: possible precision loss"));
        }
        Ok(Some((value, precision)))
    }

    /// GNU's double_to_human.
    fn to_human(&self, val: f64, precision: usize) -> String {
        let zero = self.zero_padding;
        if self.to == Scale::None {
            let scale = 10f64.powi(i32::try_from(precision).unwrap_or(i32::MAX));
            let v = self.round.apply(val * scale) / scale;
            return format!("{v:0zero$.precision$}");
        }
        let base = self.to.base();
        let (mut v, mut power) = (val, 0u32);
        while v.abs() >= base {
            power += 1;
            v /= base;
        }
        let adjust = match self.precision {
            Some(p) => (power as usize * 3).min(p),
            None => usize::from(v.abs() < 10.0),
        };
        let scale = 10f64.powi(i32::try_from(adjust).unwrap_or(i32::MAX));
        v = self.round.apply(v * scale) / scale;
        if v.abs() >= base {
            v /= base;
            power += 1;
        }
        let show_point = v != 0.0 && v.abs() < 10.0 && power > 0;
        let prec = self.precision.unwrap_or(usize::from(show_point));
        let unit = match power {
            0 => "",
            p => ["K", "M", "G", "T", "P", "E", "Z", "Y"]
                .get(p as usize - 1)
                .copied()
                .unwrap_or("(error)"),
        };
        let mut out = format!("{v:0zero$.prec$}{unit}");
        if self.to == Scale::IecI && power > 0 {
            out.push('i');
        }
        out
    }

    /// GNU's prepare_padded_number, or `None` when the value cannot be
    /// printed.
    fn render(
        &self,
        p: &Process<'_>,
        (val, precision): (f64, usize),
        exact: Option<(i128, u32)>,
        padding: usize,
    ) -> Result<Option<String>, Abort> {
        let used = self.precision.unwrap_or(precision);
        let mut x = 0u32;
        let mut t = val;
        while t.abs() >= 10.0 && t.is_finite() {
            x += 1;
            t /= 10.0;
        }
        let g = {
            let s = crate::programs::printf::general_format(val.abs(), 6, false, false);
            if val < 0.0 { format!("-{s}") } else { s }
        };
        if self.to == Scale::None && x as usize + used > MAX_UNSCALED_DIGITS as usize {
            let msg = if used > 0 {
                format!(
                    "value/precision too large to be printed: '{g}/{used}' (consider using --to)"
                )
            } else {
                format!("value too large to be printed: '{g}' (consider using --to)")
            };
            self.conversion_error(p, &msg)?;
            return Ok(None);
        }
        if x > MAX_ACCEPTABLE_DIGITS - 1 {
            self.conversion_error(
                p,
                &format!("value too large to be printed: '{g}' (cannot handle values > 999Y)"),
            )?;
            return Ok(None);
        }
        let mut buf = match exact {
            Some((m, scale)) if self.to == Scale::None => {
                format_exact(m, scale, used, self.round, self.zero_padding)
            }
            _ => self.to_human(val, used),
        };
        if let Some(s) = &self.suffix {
            buf.push_str(s);
        }
        let len = buf.chars().count();
        if padding > len {
            let fill = " ".repeat(padding - len);
            buf = if self.left {
                format!("{buf}{fill}")
            } else {
                format!("{fill}{buf}")
            };
        }
        Ok(Some(format!("{}{buf}{}", self.prefix, self.format_suffix)))
    }

    fn included(&self, field: u64) -> bool {
        match &self.fields {
            None => field == 1,
            Some(r) => r.iter().any(|&(lo, hi)| lo <= field && field <= hi),
        }
    }

    /// One field: converted, or copied when not selected or invalid.
    fn field(
        &self,
        p: &Process<'_>,
        text: &str,
        field: u64,
        out: &mut String,
    ) -> Result<bool, Abort> {
        if !self.included(field) {
            out.push_str(text);
            return Ok(true);
        }
        let mut text = text;
        if let Some(s) = &self.suffix
            && text.len() > s.len()
            && let Some(t) = text.strip_suffix(s.as_str())
        {
            text = t;
        }
        let trimmed = text.trim_start_matches([' ', '\t']);
        let padding = if self.auto_padding {
            if trimmed.len() != text.len() || field > 1 {
                text.len()
            } else {
                0
            }
        } else {
            self.padding
        };
        let rendered = match self.parse_number(p, trimmed)? {
            None => None,
            Some((mut val, precision)) => {
                let mut exact = exact_decimal(trimmed);
                if self.from_unit != 1 || self.to_unit != 1 {
                    val = val * self.from_unit as f64 / self.to_unit as f64;
                    exact = None;
                }
                self.render(p, (val, precision), exact, padding)?
            }
        };
        match rendered {
            Some(r) => {
                out.push_str(&r);
                Ok(true)
            }
            None => {
                out.push_str(text);
                Ok(false)
            }
        }
    }

    /// GNU's process_line: fields keep their leading blanks, and the
    /// separator after each is written as one space (or the delimiter).
    fn line(
        &self,
        p: &Process<'_>,
        line: &str,
        newline: bool,
        out: &mut String,
    ) -> Result<bool, Abort> {
        let bytes = line.as_bytes();
        let is_sep = |c: u8| match self.delimiter {
            Some(d) => c == d,
            None => c == b' ' || c == b'\t' || c == b'\n',
        };
        let mut valid = true;
        let mut start = 0;
        let mut field = 0u64;
        loop {
            field += 1;
            let mut end = start;
            if self.delimiter.is_none() {
                while end < bytes.len() && is_sep(bytes[end]) {
                    end += 1;
                }
            }
            while end < bytes.len() && !is_sep(bytes[end]) {
                end += 1;
            }
            let text = line.get(start..end).unwrap_or_default();
            valid &= self.field(p, text, field, out)?;
            if end >= bytes.len() {
                break;
            }
            out.push(char::from(self.delimiter.unwrap_or(b' ')));
            start = end + 1;
        }
        if newline {
            out.push(char::from(self.eol));
        }
        Ok(valid)
    }
}

/// `--from-unit`, `--to-unit`: `K` is 1000, `Ki` 1024.
fn unit_size(p: &Process<'_>, text: &str) -> Result<u64, i32> {
    let invalid = || {
        p.error(&format!("invalid unit size: {}", p.quote(text)));
        1
    };
    let (number, base) = if let Some(t) = text.strip_suffix('i') {
        if t.ends_with(|c: char| c.is_ascii_digit()) || t.is_empty() {
            return Err(invalid());
        }
        (t, 1024u64)
    } else {
        (text, 1000u64)
    };
    let digits = number.bytes().take_while(u8::is_ascii_digit).count();
    let (n, suffix) = number.split_at(digits);
    let n: u64 = if n.is_empty() && !suffix.is_empty() {
        1
    } else {
        n.parse().map_err(|_| invalid())?
    };
    let value = match suffix {
        "" => Some(n),
        s if s.len() == 1 => suffix_power(s.as_bytes()[0])
            .and_then(|pw| base.checked_pow(u32::try_from(pw).unwrap_or(99)))
            .and_then(|m| n.checked_mul(m)),
        _ => None,
    };
    match value {
        Some(v) if v > 0 => Ok(v),
        _ => Err(invalid()),
    }
}

/// `--format`: sets the padding, precision and text around the number.
fn parse_format(p: &Process<'_>, fmt: &str, n: &mut Numfmt) -> Result<(), i32> {
    let fail = |msg: String| {
        p.error(&msg);
        1
    };
    let q = p.quote(fmt);
    let b = fmt.as_bytes();
    let mut i = 0;
    // GNU counts one byte of prefix for each `%%` too, and copies that
    // many bytes of the format: `%%%f` has the prefix `%`.
    let mut prefix_len = 0;
    loop {
        match (b.get(i), b.get(i + 1)) {
            (None, _) => return Err(fail(format!("format {q} has no % directive"))),
            (Some(b'%'), Some(b'%')) => i += 2,
            (Some(b'%'), _) => break,
            (Some(_), _) => i += 1,
        }
        prefix_len += 1;
    }
    let prefix = String::from_utf8_lossy(b.get(..prefix_len).unwrap_or_default()).into_owned();
    i += 1;
    let mut zero = false;
    loop {
        let skip = b
            .get(i..)
            .unwrap_or_default()
            .iter()
            .take_while(|&&c| c == b' ')
            .count();
        i += skip;
        match b.get(i) {
            Some(b'\'') => {
                i += 1;
            }
            Some(b'0') => {
                zero = true;
                i += 1;
            }
            _ if skip == 0 => break,
            _ => {}
        }
    }
    let start = i;
    if matches!(b.get(i), Some(b'-' | b'+')) {
        i += 1;
    }
    while b.get(i).is_some_and(u8::is_ascii_digit) {
        i += 1;
    }
    let width_text = fmt.get(start..i).unwrap_or_default();
    let pad: i64 = if width_text.is_empty() || width_text == "-" || width_text == "+" {
        i = if width_text.is_empty() { i } else { start };
        0
    } else {
        width_text
            .parse()
            .map_err(|_| fail(format!("invalid format {q} (width overflow)")))?
    };
    if pad != 0 {
        let width = usize::try_from(pad.unsigned_abs())
            .unwrap_or(usize::MAX)
            .min(super::MAX_FIELD_WIDTH);
        if pad < 0 {
            n.left = true;
            n.padding = width;
        } else if zero {
            n.zero_padding = width;
        } else {
            n.padding = width;
        }
    }
    if b.get(i).is_none() {
        return Err(fail(format!("format {q} ends in %")));
    }
    if b.get(i) == Some(&b'.') {
        i += 1;
        let digits = b
            .get(i..)
            .unwrap_or_default()
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count();
        let bad = matches!(b.get(i), Some(b' ' | b'\t' | b'+' | b'-'));
        let text = fmt.get(i..i + digits).unwrap_or_default();
        if bad {
            return Err(fail(format!("invalid precision in format {q}")));
        }
        n.precision = Some(
            text.parse::<usize>()
                .unwrap_or(0)
                .min(super::MAX_FIELD_WIDTH),
        );
        i += digits;
    }
    if b.get(i) != Some(&b'f') {
        return Err(fail(format!(
            "invalid format {q}, directive must be %[0]['][-][N][.][N]f"
        )));
    }
    i += 1;
    let suffix = fmt.get(i..).unwrap_or_default().to_string();
    let mut j = i;
    while let Some(&c) = b.get(j) {
        if c == b'%' && b.get(j + 1) != Some(&b'%') {
            return Err(fail(format!("format {q} has too many % directives")));
        }
        j += if c == b'%' { 2 } else { 1 };
    }
    n.prefix = prefix;
    n.format_suffix = suffix;
    Ok(())
}

fn settings(p: &Process<'_>, args: &super::args::Parsed) -> Result<(Numfmt, u64), i32> {
    let mut n = Numfmt {
        from: Scale::None,
        to: Scale::None,
        round: Round::FromZero,
        invalid: Invalid::Abort,
        suffix: None,
        from_unit: 1,
        to_unit: 1,
        padding: 0,
        left: false,
        zero_padding: 0,
        precision: None,
        prefix: String::new(),
        format_suffix: String::new(),
        delimiter: None,
        eol: b'\n',
        fields: None,
        debug: false,
        auto_padding: false,
    };
    let mut header = 0u64;
    let mut format = None;
    let mut grouping = false;
    let scales = [Scale::None, Scale::Auto, Scale::Si, Scale::Iec, Scale::IecI];
    for opt in &args.opts {
        let v = opt.value.as_deref().unwrap_or_default();
        match opt.key {
            'F' => {
                let i = super::argmatch(p, "--from", v, &["none", "auto", "si", "iec", "iec-i"])?;
                n.from = scales[i];
            }
            'T' => {
                let i = super::argmatch(p, "--to", v, &["none", "si", "iec", "iec-i"])?;
                n.to = [Scale::None, Scale::Si, Scale::Iec, Scale::IecI][i];
            }
            'U' => n.from_unit = unit_size(p, v)?,
            'u' => n.to_unit = unit_size(p, v)?,
            'R' => {
                let i = super::argmatch(
                    p,
                    "--round",
                    v,
                    &["up", "down", "from-zero", "towards-zero", "nearest"],
                )?;
                n.round = [
                    Round::Up,
                    Round::Down,
                    Round::FromZero,
                    Round::TowardsZero,
                    Round::Nearest,
                ][i];
            }
            'G' => grouping = true,
            'P' => match v.trim_start().parse::<i64>() {
                Ok(w) if w != 0 => {
                    n.left = w < 0;
                    n.padding = usize::try_from(w.unsigned_abs())
                        .unwrap_or(usize::MAX)
                        .min(super::MAX_FIELD_WIDTH);
                }
                _ => {
                    p.error(&format!("invalid padding value {}", p.quote(v)));
                    return Err(1);
                }
            },
            'f' => {
                if n.fields.is_some() {
                    p.error("multiple field specifications");
                    return Err(1);
                }
                n.fields = Some(set_fields(v, true).map_err(|e| {
                    let msg = match e.quoted {
                        Some(q) => e.message.replace("{}", &p.quote(&q)),
                        None => e.message.to_string(),
                    };
                    super::usage(p, &msg, 1)
                })?);
            }
            'd' => {
                if v.len() > 1 {
                    p.error("the delimiter must be a single character");
                    return Err(1);
                }
                n.delimiter = Some(v.bytes().next().unwrap_or(0));
            }
            'z' => n.eol = 0,
            'S' => n.suffix = Some(v.to_string()),
            'D' => n.debug = true,
            'H' => {
                header = match opt.value.as_deref() {
                    None => 1,
                    Some(h) => match crate::programs::size::parse_size(h, "") {
                        Ok(h) if h > 0 => h,
                        _ => {
                            p.error(&format!("invalid header value {}", p.quote(h)));
                            return Err(1);
                        }
                    },
                };
            }
            'm' => format = Some(v.to_string()),
            'I' => {
                let i = super::argmatch(p, "--invalid", v, &["abort", "fail", "warn", "ignore"])?;
                n.invalid = [
                    Invalid::Abort,
                    Invalid::Fail,
                    Invalid::Warn,
                    Invalid::Ignore,
                ][i];
            }
            _ => {}
        }
    }
    if format.is_some() && grouping {
        p.error("--grouping cannot be combined with --format");
        return Err(1);
    }
    if n.debug
        && n.from == Scale::None
        && n.to == Scale::None
        && !grouping
        && n.padding == 0
        && format.is_none()
    {
        p.error("no conversion option specified");
    }
    if let Some(f) = &format {
        parse_format(p, f, &mut n)?;
    }
    if grouping {
        if n.to != Scale::None {
            p.error("grouping cannot be combined with --to");
            return Err(1);
        }
        if n.debug {
            // C.UTF-8 and C have no thousands separator.
            p.error("grouping has no effect in this locale");
        }
    }
    n.auto_padding = n.padding == 0 && n.delimiter.is_none();
    Ok((n, header))
}

pub(crate) fn numfmt(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let args = match super::parse_args(p, &SPEC, argv, 1) {
        Ok(a) => a,
        Err(status) => return status,
    };
    let (n, mut header) = match settings(p, &args) {
        Ok(v) => v,
        Err(status) => return status,
    };
    let mut out = String::new();
    let mut valid = true;
    let mut aborted = false;
    if args.operands.is_empty() {
        let data = p.io.stdin.borrow_mut().read_all();
        let text = String::from_utf8_lossy(&data);
        for line in text.split_inclusive(char::from(n.eol)) {
            if header > 0 {
                header -= 1;
                out.push_str(line);
                continue;
            }
            let (body, newline) = match line.strip_suffix(char::from(n.eol)) {
                Some(b) => (b, true),
                None => (line, false),
            };
            match n.line(p, body, newline, &mut out) {
                Ok(v) => valid &= v,
                Err(Abort) => {
                    aborted = true;
                    break;
                }
            }
        }
    } else {
        if n.debug && header > 0 {
            p.error("--header ignored with command-line input");
        }
        for arg in &args.operands {
            match n.line(p, arg, true, &mut out) {
                Ok(v) => valid &= v,
                Err(Abort) => {
                    aborted = true;
                    break;
                }
            }
        }
    }
    super::write_all(p, out.as_bytes());
    if aborted {
        return CONVERSION_ERROR;
    }
    if n.debug && !valid {
        p.error("failed to convert some of the input numbers");
    }
    if !valid && matches!(n.invalid, Invalid::Abort | Invalid::Fail) {
        return CONVERSION_ERROR;
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_and_fraction_parse() {
        let (e, v, prec, used) = strtod_float(b"12.50x");
        assert_eq!((e, v, prec, used), (Sse::Ok, 12.5, 2, 5));
        assert_eq!(strtod_float(b"abc").0, Sse::InvalidNumber);
    }

    #[test]
    fn exact_decimals_round_by_mode() {
        let (m, s) = exact_decimal("2.25").expect("exact");
        assert_eq!(format_exact(m, s, 1, Round::FromZero, 0), "2.3");
        assert_eq!(format_exact(m, s, 1, Round::Down, 0), "2.2");
        let (m, s) = exact_decimal("-2.25").expect("exact");
        assert_eq!(format_exact(m, s, 1, Round::FromZero, 0), "-2.3");
        assert_eq!(format_exact(m, s, 1, Round::TowardsZero, 0), "-2.2");
        assert_eq!(format_exact(m, s, 0, Round::Up, 0), "-2");
        assert_eq!(format_exact(7, 0, 2, Round::Up, 8), "00007.00");
    }

    #[test]
    fn rounding_keeps_zero_positive() {
        assert!(Round::Up.apply(-0.4).is_sign_positive());
        assert_eq!(Round::Nearest.apply(2.5), 3.0);
        assert_eq!(Round::Down.apply(-1.5), -2.0);
    }
}
