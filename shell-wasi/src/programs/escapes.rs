//! Backslash escapes: `$'...'`, `echo -e`, printf formats and `%b`.
//!
//! The three dialects differ only in octal syntax and in `\c`, so one
//! decoder takes the dialect as a parameter.

/// Which escape dialect to decode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dialect {
    /// `$'...'`: `\NNN` octal, `\cX` is a control character.
    AnsiC,
    /// `echo -e` and printf's `%b`: `\0NNN` octal, `\c` stops all output.
    Echo,
    /// A printf format: `\NNN` octal; `\c` is literal.
    Printf,
}

/// Decoded bytes, and whether `\c` asked to stop output here.
pub(crate) struct Decoded {
    pub(crate) bytes: Vec<u8>,
    pub(crate) stop: bool,
}

/// `$'...'` text decoded to a string.
pub(crate) fn decode_ansi_c(text: &str) -> String {
    String::from_utf8_lossy(&decode(text, Dialect::AnsiC).bytes).into_owned()
}

pub(crate) fn decode(text: &str, dialect: Dialect) -> Decoded {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b != b'\\' || i + 1 >= bytes.len() {
            out.push(b);
            i += 1;
            continue;
        }
        let (consumed, stop) = decode_one(bytes, i + 1, dialect, &mut out);
        if stop {
            return Decoded {
                bytes: out,
                stop: true,
            };
        }
        i += 1 + consumed;
    }
    Decoded {
        bytes: out,
        stop: false,
    }
}

/// Decodes the escape whose letter is at `at`; returns the bytes consumed
/// after the backslash and whether output must stop.
fn decode_one(bytes: &[u8], at: usize, dialect: Dialect, out: &mut Vec<u8>) -> (usize, bool) {
    let c = bytes[at];
    let simple = match c {
        b'a' => Some(0x07),
        b'b' => Some(0x08),
        b'e' | b'E' => Some(0x1b),
        b'f' => Some(0x0c),
        b'n' => Some(b'\n'),
        b'r' => Some(b'\r'),
        b't' => Some(b'\t'),
        b'v' => Some(0x0b),
        b'\\' => Some(b'\\'),
        b'\'' if dialect != Dialect::Echo => Some(b'\''),
        b'"' if dialect != Dialect::Echo => Some(b'"'),
        b'?' if dialect == Dialect::AnsiC => Some(b'?'),
        _ => None,
    };
    if let Some(byte) = simple {
        out.push(byte);
        return (1, false);
    }
    match c {
        b'c' if dialect == Dialect::Echo => (1, true),
        b'c' if dialect == Dialect::AnsiC && at + 1 < bytes.len() => {
            out.push(bytes[at + 1] & 0x1f);
            (2, false)
        }
        b'x' => match hex_value(bytes, at + 1, 2) {
            Some((value, len)) => {
                out.push(u8::try_from(value).unwrap_or(0));
                (1 + len, false)
            }
            None => {
                out.extend_from_slice(b"\\x");
                (1, false)
            }
        },
        b'u' | b'U' => {
            let max = if c == b'u' { 4 } else { 8 };
            match hex_value(bytes, at + 1, max) {
                Some((value, len)) => {
                    let ch = char::from_u32(value).unwrap_or('\u{fffd}');
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                    (1 + len, false)
                }
                None => {
                    out.push(b'\\');
                    out.push(c);
                    (1, false)
                }
            }
        }
        b'0'..=b'7' => {
            // echo and %b want `\0NNN` (the 0 is a prefix); the others
            // read up to three octal digits directly.
            let (start, max) = if dialect == Dialect::Echo {
                if c == b'0' {
                    (at + 1, 3)
                } else {
                    return unknown(c, out);
                }
            } else {
                (at, 3)
            };
            let (value, len) = octal_value(bytes, start, max);
            out.push(u8::try_from(value & 0xff).unwrap_or(0));
            (start - at + len, false)
        }
        _ => unknown(c, out),
    }
}

/// An unknown escape stays as written.
fn unknown(c: u8, out: &mut Vec<u8>) -> (usize, bool) {
    out.push(b'\\');
    out.push(c);
    (1, false)
}

fn hex_value(bytes: &[u8], start: usize, max: usize) -> Option<(u32, usize)> {
    let mut value = 0u32;
    let mut len = 0;
    while len < max {
        let Some(d) = bytes
            .get(start + len)
            .and_then(|&b| char::from(b).to_digit(16))
        else {
            break;
        };
        value = value * 16 + d;
        len += 1;
    }
    (len > 0).then_some((value, len))
}

fn octal_value(bytes: &[u8], start: usize, max: usize) -> (u32, usize) {
    let mut value = 0u32;
    let mut len = 0;
    while len < max {
        let Some(d) = bytes
            .get(start + len)
            .and_then(|&b| char::from(b).to_digit(8))
        else {
            break;
        };
        value = value * 8 + d;
        len += 1;
    }
    (value, len)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ansi_c_quotes() {
        assert_eq!(decode_ansi_c("a\\tb\\x41\\101\\u00e9"), "a\tbAA\u{e9}");
    }

    #[test]
    fn echo_stops_at_backslash_c() {
        let d = decode("a\\cb", Dialect::Echo);
        assert_eq!(d.bytes, b"a");
        assert!(d.stop);
        assert_eq!(decode("\\0101", Dialect::Echo).bytes, b"A");
    }

    #[test]
    fn printf_octal() {
        assert_eq!(decode("\\101\\n", Dialect::Printf).bytes, b"A\n");
    }
}
