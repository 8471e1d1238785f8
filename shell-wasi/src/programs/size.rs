//! Sizes as GNU writes and reads them: `-h` output shared by `ls`, `du`
//! and `df`, and gnulib's xstrtoumax (`10K`, `1MB`, `2GiB`, `3b`) for the
//! size operands of `split`, `truncate` and `csplit`.

/// Powers of 1024, one decimal below 10, always rounded up; a value that
/// rounds up to 1024 moves to the next unit (`1.0G`, not `1024M`).
pub(crate) fn human(bytes: u64) -> String {
    if bytes < 1024 {
        return bytes.to_string();
    }
    let units = ['K', 'M', 'G', 'T', 'P', 'E'];
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < units.len() {
        value /= 1024.0;
        unit += 1;
    }
    let letter = units.get(unit).copied().unwrap_or('E');
    if value < 10.0 {
        let tenths = (value * 10.0).ceil() / 10.0;
        if tenths >= 10.0 {
            format!("{}{letter}", tenths.ceil())
        } else {
            format!("{tenths:.1}{letter}")
        }
    } else if value.ceil() >= 1024.0 && unit + 1 < units.len() {
        let next = units.get(unit + 1).copied().unwrap_or('E');
        format!("1.0{next}")
    } else {
        format!("{}{letter}", value.ceil())
    }
}

/// Why a size operand was refused (gnulib's strtol_error).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SizeError {
    /// Not a number, or a suffix not allowed: GNU prints no errno text.
    Invalid,
    /// Too large: `Value too large for defined data type`.
    Overflow,
}

/// gnulib's xstrtoumax: decimal digits (after blanks and a `+`), then at
/// most one suffix from `suffixes`. `K` `M` `G` `T` `P` `E` `Z` `Y` are
/// powers of 1024, or of 1000 with a `B` (`KB`), or of 1024 with `iB`
/// when `suffixes` contains `0`; `b` is 512, `c` 1, `w` 2, `B` 1024. A
/// suffix alone counts one of it (`k` is 1024).
pub(crate) fn parse_size(text: &str, suffixes: &str) -> Result<u64, SizeError> {
    let t = text.trim_start_matches([' ', '\t', '\n', '\x0b', '\x0c', '\r']);
    if t.starts_with('-') {
        return Err(SizeError::Invalid);
    }
    let t = t.strip_prefix('+').unwrap_or(t);
    let digits = t.bytes().take_while(u8::is_ascii_digit).count();
    let (number, rest) = t.split_at(digits);
    let mut value: u64 = if number.is_empty() {
        match rest.chars().next() {
            Some(c) if suffixes.contains(c) => 1,
            _ => return Err(SizeError::Invalid),
        }
    } else {
        let mut v: u64 = 0;
        let mut overflow = false;
        for d in number.bytes() {
            match v
                .checked_mul(10)
                .and_then(|v| v.checked_add(u64::from(d - b'0')))
            {
                Some(n) => v = n,
                None => overflow = true,
            }
        }
        if overflow {
            // Overflow is only reported once the suffix is known valid.
            return match rest.chars().next() {
                Some(c) if !suffixes.contains(c) => Err(SizeError::Invalid),
                _ => Err(SizeError::Overflow),
            };
        }
        v
    };
    let Some(first) = rest.chars().next() else {
        return Ok(value);
    };
    if !suffixes.contains(first) {
        return Err(SizeError::Invalid);
    }
    let mut base: u64 = 1024;
    let mut used = 1;
    if suffixes.contains('0') && "EGgkKMmPTtYZ".contains(first) {
        match rest.get(1..) {
            Some(r) if r.starts_with("iB") => used += 2,
            Some(r) if r.starts_with('B') || r.starts_with('D') => {
                base = 1000;
                used += 1;
            }
            _ => {}
        }
    }
    let power: u32 = match first {
        'b' => {
            value = value.checked_mul(512).ok_or(SizeError::Overflow)?;
            0
        }
        'B' => 1,
        'c' => 0,
        'w' => {
            value = value.checked_mul(2).ok_or(SizeError::Overflow)?;
            0
        }
        'k' | 'K' => 1,
        'M' | 'm' => 2,
        'G' | 'g' => 3,
        'T' | 't' => 4,
        'P' => 5,
        'E' => 6,
        'Z' => 7,
        'Y' => 8,
        _ => return Err(SizeError::Invalid),
    };
    if rest.len() > used {
        return Err(SizeError::Invalid);
    }
    let factor = base.checked_pow(power).ok_or(SizeError::Overflow)?;
    value.checked_mul(factor).ok_or(SizeError::Overflow)
}

#[cfg(test)]
mod tests {
    use super::{SizeError, human, parse_size};

    #[test]
    fn sizes_parse_like_xstrtoumax() {
        let s = "bEGKkMmPTYZ0";
        assert_eq!(parse_size("10", s), Ok(10));
        assert_eq!(parse_size("1k", s), Ok(1024));
        assert_eq!(parse_size("1KB", s), Ok(1000));
        assert_eq!(parse_size("1KiB", s), Ok(1024));
        assert_eq!(parse_size("2b", s), Ok(1024));
        assert_eq!(parse_size("k", s), Ok(1024));
        assert_eq!(parse_size("1x", s), Err(SizeError::Invalid));
        assert_eq!(parse_size("1Ki", s), Err(SizeError::Invalid));
        assert_eq!(parse_size("-1", s), Err(SizeError::Invalid));
        assert_eq!(parse_size("99E", s), Err(SizeError::Overflow));
    }

    #[test]
    fn sizes_round_up_like_gnu() {
        assert_eq!(human(14), "14");
        assert_eq!(human(1024), "1.0K");
        assert_eq!(human(1536), "1.5K");
        assert_eq!(human(12 * 1024), "12K");
        assert_eq!(human((1 << 30) - (16 << 10)), "1.0G");
    }
}
