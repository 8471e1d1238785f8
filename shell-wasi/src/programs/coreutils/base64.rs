//! `base64 [-d] [-i] [-w COLS] [FILE]`: RFC 4648 with GNU's 76-column
//! wrapping; decoding skips newlines and stops with `invalid input`.

use super::Process;
use super::args::{HasArg, Spec};

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// GNU's default line length.
const DEFAULT_WRAP: usize = 76;

pub(crate) fn base64(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let spec = Spec {
        short: "diw:",
        long: &[
            ("decode", 'd', HasArg::No),
            ("ignore-garbage", 'i', HasArg::No),
            ("wrap", 'w', HasArg::Yes),
        ],
    };
    let args = match super::parse_args(p, &spec, argv, 1) {
        Ok(a) => a,
        Err(status) => return status,
    };
    let wrap = match args.value('w') {
        None => DEFAULT_WRAP,
        Some(v) => match v.parse::<usize>() {
            Ok(w) => w,
            Err(_) => {
                p.error(&format!("invalid wrap size: {}", p.quote(v)));
                return 1;
            }
        },
    };
    if args.operands.len() > 1 {
        let extra = args.operands.get(1).cloned().unwrap_or_default();
        return super::usage(p, &format!("extra operand {}", p.quote(&extra)), 1);
    }
    let name = args
        .operands
        .first()
        .cloned()
        .unwrap_or_else(|| "-".to_string());
    let data = match super::read_input(p, &name) {
        Ok(d) => d,
        Err(e) => {
            super::file_error(p, &name, &e);
            return 1;
        }
    };
    if args.has('d') {
        let (bytes, ok) = decode(&data, args.has('i'));
        super::write_all(p, &bytes);
        if !ok {
            p.error("invalid input");
            return 1;
        }
        return 0;
    }
    let encoded = encode(&data);
    let mut out = Vec::with_capacity(encoded.len() + encoded.len() / 64 + 1);
    if wrap == 0 {
        out.extend_from_slice(&encoded);
    } else {
        for line in encoded.chunks(wrap) {
            out.extend_from_slice(line);
            out.push(b'\n');
        }
    }
    if wrap != 0 && encoded.is_empty() {
        out.clear();
    }
    super::write_all(p, &out);
    0
}

pub(crate) fn encode(data: &[u8]) -> Vec<u8> {
    let sym = |i: u32| {
        ALPHABET
            .get(usize::try_from(i & 63).unwrap_or(0))
            .copied()
            .unwrap_or(b'=')
    };
    let mut out = Vec::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let b = |i: usize| u32::from(chunk.get(i).copied().unwrap_or(0));
        let n = (b(0) << 16) | (b(1) << 8) | b(2);
        out.push(sym(n >> 18));
        out.push(sym(n >> 12));
        out.push(if chunk.len() > 1 { sym(n >> 6) } else { b'=' });
        out.push(if chunk.len() > 2 { sym(n) } else { b'=' });
    }
    out
}

/// Decodes what it can; false when the input was not valid base64.
pub(crate) fn decode(data: &[u8], ignore_garbage: bool) -> (Vec<u8>, bool) {
    let value = |c: u8| {
        ALPHABET
            .iter()
            .position(|&a| a == c)
            .and_then(|v| u32::try_from(v).ok())
    };
    let mut out = Vec::with_capacity(data.len() / 4 * 3);
    let mut acc: u32 = 0;
    let mut bits = 0;
    let mut pad = 0;
    let mut quads = 0;
    for &c in data {
        if c == b'\n' || c == b'\r' {
            continue;
        }
        if c == b'=' {
            pad += 1;
            quads += 1;
            continue;
        }
        let Some(v) = value(c) else {
            if ignore_garbage {
                continue;
            }
            return (out, false);
        };
        if pad > 0 {
            return (out, false);
        }
        quads += 1;
        acc = (acc << 6) | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push(u8::try_from((acc >> bits) & 0xff).unwrap_or(0));
        }
    }
    (out, quads % 4 == 0 && pad <= 2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        assert_eq!(encode(b"hi\n"), b"aGkK");
        assert_eq!(encode(b"x"), b"eA==");
        assert_eq!(decode(b"aGkK\n", false), (b"hi\n".to_vec(), true));
        assert_eq!(decode(b"aGk", false), (b"hi".to_vec(), false));
        assert!(!decode(b"!!", false).1);
    }
}
