//! gnulib's set_fields: `1,3-5,7-` field lists as `numfmt --field` (and
//! cut) read them, with their messages.

/// Inclusive ranges of 1-based fields; `u64::MAX` is an open end.
pub(crate) type FieldRanges = Vec<(u64, u64)>;

/// Why a list was refused: GNU's message, and the text it quotes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FieldError {
    pub(crate) message: &'static str,
    pub(crate) quoted: Option<String>,
}

impl From<&'static str> for FieldError {
    fn from(message: &'static str) -> Self {
        Self {
            message,
            quoted: None,
        }
    }
}

/// Parses a field list; a lone `-` means every field when `allow_dash`.
/// GNU prints the error with the usage hint.
pub(crate) fn set_fields(text: &str, allow_dash: bool) -> Result<FieldRanges, FieldError> {
    let mut ranges = Vec::new();
    let bytes = text.as_bytes();
    let (mut initial, mut value) = (1u64, 0u64);
    let (mut lhs, mut rhs, mut dash) = (false, false, false);
    let mut i = 0;
    if allow_dash && text == "-" {
        value = 1;
        lhs = true;
        dash = true;
        i = 1;
    }
    let mut num_start = 0;
    let mut in_digits = false;
    loop {
        let c = bytes.get(i).copied();
        match c {
            Some(b'-') => {
                in_digits = false;
                if dash {
                    return Err("invalid field range".into());
                }
                dash = true;
                if lhs && value == 0 {
                    return Err("fields are numbered from 1".into());
                }
                initial = if lhs { value } else { 1 };
                value = 0;
            }
            None | Some(b',' | b' ' | b'\t') => {
                in_digits = false;
                if dash {
                    dash = false;
                    if !lhs && !rhs {
                        if !allow_dash {
                            return Err("invalid range with no endpoint: -".into());
                        }
                        initial = 1;
                    }
                    if !rhs {
                        ranges.push((initial, u64::MAX));
                    } else {
                        if value < initial {
                            return Err("invalid decreasing range".into());
                        }
                        ranges.push((initial, value));
                    }
                } else {
                    if value == 0 {
                        return Err("fields are numbered from 1".into());
                    }
                    ranges.push((value, value));
                }
                value = 0;
                if c.is_none() {
                    break;
                }
                lhs = false;
                rhs = false;
            }
            Some(d @ b'0'..=b'9') => {
                if !in_digits {
                    num_start = i;
                }
                in_digits = true;
                if dash {
                    rhs = true;
                } else {
                    lhs = true;
                }
                match value
                    .checked_mul(10)
                    .and_then(|v| v.checked_add(u64::from(d - b'0')))
                    .filter(|&v| v != u64::MAX)
                {
                    Some(v) => value = v,
                    None => {
                        let digits: String = text
                            .get(num_start..)
                            .unwrap_or_default()
                            .chars()
                            .take_while(char::is_ascii_digit)
                            .collect();
                        return Err(FieldError {
                            message: "field number {} is too large",
                            quoted: Some(digits),
                        });
                    }
                }
            }
            Some(_) => {
                return Err(FieldError {
                    message: "invalid field value {}",
                    quoted: Some(text.get(i..).unwrap_or_default().to_string()),
                });
            }
        }
        i += 1;
    }
    if ranges.is_empty() {
        return Err("missing list of fields".into());
    }
    Ok(ranges)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_and_errors() {
        assert_eq!(set_fields("1,3-4", false), Ok(vec![(1, 1), (3, 4)]));
        assert_eq!(set_fields("-", true), Ok(vec![(1, u64::MAX)]));
        assert_eq!(set_fields("2-", false), Ok(vec![(2, u64::MAX)]));
        assert_eq!(
            set_fields("0", false),
            Err("fields are numbered from 1".into())
        );
        assert!(set_fields("3-1", false).is_err());
    }
}
