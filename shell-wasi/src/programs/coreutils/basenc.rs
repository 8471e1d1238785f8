//! `base32 [-d] [-i] [-w COLS] [FILE]` and `basenc --base64|--base64url|
//! --base32|--base32hex|--base16|--base2msbf|--base2lsbf|--z85`: the
//! encodings of GNU coreutils 9.1's basenc, wrapped at 76 columns, with
//! gnulib's decoders (base32 in whole 8-character groups, output up to
//! the first bad character, then `invalid input`).

use super::Process;
use super::args::{HasArg, Spec};

const SPEC: Spec<'static> = Spec {
    short: "diw:",
    long: &[
        ("decode", 'd', HasArg::No),
        ("ignore-garbage", 'i', HasArg::No),
        ("wrap", 'w', HasArg::Yes),
        ("base64", '6', HasArg::No),
        ("base64url", 'u', HasArg::No),
        ("base32", '3', HasArg::No),
        ("base32hex", 'h', HasArg::No),
        ("base16", '1', HasArg::No),
        ("base2msbf", 'm', HasArg::No),
        ("base2lsbf", 'l', HasArg::No),
        ("z85", 'z', HasArg::No),
    ],
};

const BASE32: &[u8; 32] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
const BASE32HEX: &[u8; 32] = b"0123456789ABCDEFGHIJKLMNOPQRSTUV";
const BASE16: &[u8; 16] = b"0123456789ABCDEF";
const Z85: &[u8; 85] =
    b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";

#[derive(Clone, Copy, PartialEq, Eq)]
enum Encoding {
    Base64,
    Base64Url,
    Base32,
    Base32Hex,
    Base16,
    Base2Msbf,
    Base2Lsbf,
    Z85,
}

impl Encoding {
    /// Whether `c` may appear in an encoding (kept by `-i`).
    fn is_symbol(self, c: u8) -> bool {
        match self {
            Self::Base64 => c.is_ascii_alphanumeric() || c == b'+' || c == b'/',
            Self::Base64Url => c.is_ascii_alphanumeric() || c == b'-' || c == b'_',
            Self::Base32 => BASE32.contains(&c),
            Self::Base32Hex => BASE32HEX.contains(&c),
            Self::Base16 => BASE16.contains(&c),
            Self::Base2Msbf | Self::Base2Lsbf => c == b'0' || c == b'1',
            Self::Z85 => Z85.contains(&c),
        }
    }

    /// The encoded text, or `None` when the input cannot be encoded.
    fn encode(self, data: &[u8]) -> Option<Vec<u8>> {
        Some(match self {
            Self::Base64 => super::base64::encode(data),
            Self::Base64Url => super::base64::encode(data)
                .into_iter()
                .map(|c| match c {
                    b'+' => b'-',
                    b'/' => b'_',
                    c => c,
                })
                .collect(),
            Self::Base32 => base32_encode(data, BASE32),
            Self::Base32Hex => base32_encode(data, BASE32HEX),
            Self::Base16 => data
                .iter()
                .flat_map(|b| [BASE16[usize::from(b >> 4)], BASE16[usize::from(b & 15)]])
                .collect(),
            Self::Base2Msbf => data
                .iter()
                .flat_map(|b| (0..8).rev().map(move |i| b'0' + ((b >> i) & 1)))
                .collect(),
            Self::Base2Lsbf => data
                .iter()
                .flat_map(|b| (0..8).map(move |i| b'0' + ((b >> i) & 1)))
                .collect(),
            Self::Z85 => {
                if !data.len().is_multiple_of(4) {
                    return None;
                }
                let mut out = Vec::with_capacity(data.len() / 4 * 5);
                for chunk in data.chunks(4) {
                    let mut n = chunk.iter().fold(0u32, |n, &b| (n << 8) | u32::from(b));
                    let mut five = [0u8; 5];
                    for slot in five.iter_mut().rev() {
                        *slot = Z85[(n % 85) as usize];
                        n /= 85;
                    }
                    out.extend_from_slice(&five);
                }
                out
            }
        })
    }

    /// What decodes, and whether all of it did.
    fn decode(self, text: &[u8]) -> (Vec<u8>, bool) {
        match self {
            Self::Base64 => super::base64::decode(text, false),
            Self::Base64Url => {
                if text.iter().any(|&c| c == b'+' || c == b'/') {
                    return (Vec::new(), false);
                }
                let mapped: Vec<u8> = text
                    .iter()
                    .map(|&c| match c {
                        b'-' => b'+',
                        b'_' => b'/',
                        c => c,
                    })
                    .collect();
                super::base64::decode(&mapped, false)
            }
            Self::Base32 => base32_decode(text, BASE32),
            Self::Base32Hex => base32_decode(text, BASE32HEX),
            Self::Base16 => {
                let digits: Vec<u8> = text.iter().copied().filter(|&c| c != b'\n').collect();
                let mut out = Vec::new();
                for pair in digits.chunks(2) {
                    let v = |c: u8| BASE16.iter().position(|&d| d == c);
                    match (
                        pair.first().and_then(|&c| v(c)),
                        pair.get(1).and_then(|&c| v(c)),
                    ) {
                        (Some(h), Some(l)) => out.push(u8::try_from(h * 16 + l).unwrap_or(0)),
                        _ => return (out, false),
                    }
                }
                (out, true)
            }
            Self::Base2Msbf | Self::Base2Lsbf => {
                let bits: Vec<u8> = text.iter().copied().filter(|&c| c != b'\n').collect();
                let mut out = Vec::new();
                for byte in bits.chunks(8) {
                    if byte.len() < 8 || byte.iter().any(|&c| c != b'0' && c != b'1') {
                        return (out, false);
                    }
                    let value = |i: usize| byte[i] - b'0';
                    let b = (0..8).fold(0u8, |acc, i| {
                        if self == Self::Base2Msbf {
                            (acc << 1) | value(i)
                        } else {
                            acc | (value(i) << i)
                        }
                    });
                    out.push(b);
                }
                (out, true)
            }
            Self::Z85 => {
                let chars: Vec<u8> = text.iter().copied().filter(|&c| c != b'\n').collect();
                let mut out = Vec::new();
                if !chars.len().is_multiple_of(5) {
                    return (out, false);
                }
                for five in chars.chunks(5) {
                    let mut n: u64 = 0;
                    for &c in five {
                        let Some(v) = Z85.iter().position(|&z| z == c) else {
                            return (out, false);
                        };
                        n = n * 85 + v as u64;
                    }
                    let Ok(n) = u32::try_from(n) else {
                        return (out, false);
                    };
                    out.extend_from_slice(&n.to_be_bytes());
                }
                (out, true)
            }
        }
    }
}

fn base32_encode(data: &[u8], alphabet: &[u8; 32]) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len().div_ceil(5) * 8);
    for chunk in data.chunks(5) {
        let mut block = [0u8; 5];
        block[..chunk.len()].copy_from_slice(chunk);
        let n = block.iter().fold(0u64, |n, &b| (n << 8) | u64::from(b));
        let symbols = match chunk.len() {
            1 => 2,
            2 => 4,
            3 => 5,
            4 => 7,
            _ => 8,
        };
        for i in 0..8 {
            if i < symbols {
                out.push(alphabet[((n >> (35 - 5 * i)) & 31) as usize]);
            } else {
                out.push(b'=');
            }
        }
    }
    out
}

/// gnulib's base32 decoding: newlines dropped, then whole groups of 8,
/// each written out as far as it is valid.
fn base32_decode(text: &[u8], alphabet: &[u8; 32]) -> (Vec<u8>, bool) {
    let chars: Vec<u8> = text.iter().copied().filter(|&c| c != b'\n').collect();
    let value = |c: u8| alphabet.iter().position(|&a| a == c).map(|v| v as u8);
    let mut out = Vec::new();
    for group in chars.chunks(8) {
        if group.len() < 8 {
            return (out, false);
        }
        // How many symbols carry data before the padding, and the bytes
        // they make.
        let data_len = group.iter().position(|&c| c == b'=').unwrap_or(8);
        let bytes_for = [0, 0, 1, 1, 2, 3, 3, 4, 5];
        if ![2, 4, 5, 7, 8].contains(&data_len) || group[data_len..].iter().any(|&c| c != b'=') {
            // Decode what precedes the first bad symbol.
            let valid = group.iter().take_while(|&&c| value(c).is_some()).count();
            let vals: Vec<u8> = group[..valid].iter().filter_map(|&c| value(c)).collect();
            out.extend(bits_to_bytes(&vals, bytes_for[valid.min(8)]));
            return (out, false);
        }
        let vals: Vec<Option<u8>> = group[..data_len].iter().map(|&c| value(c)).collect();
        if let Some(bad) = vals.iter().position(Option::is_none) {
            let good: Vec<u8> = vals[..bad].iter().flatten().copied().collect();
            out.extend(bits_to_bytes(&good, bytes_for[bad]));
            return (out, false);
        }
        let good: Vec<u8> = vals.iter().flatten().copied().collect();
        out.extend(bits_to_bytes(&good, bytes_for[data_len]));
    }
    (out, true)
}

/// The first `count` bytes spelled by 5-bit symbol values.
fn bits_to_bytes(values: &[u8], count: usize) -> Vec<u8> {
    let mut n: u64 = 0;
    for (i, &v) in values.iter().enumerate().take(8) {
        n |= u64::from(v) << (35 - 5 * i);
    }
    (0..count).map(|i| (n >> (32 - 8 * i)) as u8).collect()
}

pub(crate) fn base32(p: &mut Process<'_>, argv: &[String]) -> i32 {
    run(p, argv, Some(Encoding::Base32))
}

pub(crate) fn basenc(p: &mut Process<'_>, argv: &[String]) -> i32 {
    run(p, argv, None)
}

fn run(p: &mut Process<'_>, argv: &[String], fixed: Option<Encoding>) -> i32 {
    let spec_short = Spec {
        short: SPEC.short,
        long: &SPEC.long[..3],
    };
    let spec = if fixed.is_some() { &spec_short } else { &SPEC };
    let args = match super::parse_args(p, spec, argv, 1) {
        Ok(a) => a,
        Err(status) => return status,
    };
    let mut encoding = fixed;
    for opt in &args.opts {
        let chosen = match opt.key {
            '6' => Encoding::Base64,
            'u' => Encoding::Base64Url,
            '3' => Encoding::Base32,
            'h' => Encoding::Base32Hex,
            '1' => Encoding::Base16,
            'm' => Encoding::Base2Msbf,
            'l' => Encoding::Base2Lsbf,
            'z' => Encoding::Z85,
            _ => continue,
        };
        encoding = Some(chosen);
    }
    let Some(encoding) = encoding else {
        return super::usage(p, "missing encoding type", 1);
    };
    let wrap = match args.value('w') {
        None => 76,
        Some(v) => match v.parse::<usize>() {
            Ok(w) => w,
            Err(_) => {
                p.error(&format!("invalid wrap size: {}", p.quote(v)));
                return 1;
            }
        },
    };
    if let Some(extra) = args.operands.get(1) {
        return super::usage(p, &format!("extra operand {}", p.quote(extra)), 1);
    }
    let name = args.operands.first().map_or("-", String::as_str);
    let data = match super::read_input(p, name) {
        Ok(d) => d,
        Err(e) => {
            super::file_error(p, name, &e);
            return 1;
        }
    };
    if args.has('d') {
        let text: Vec<u8> = if args.has('i') {
            data.into_iter()
                .filter(|&c| encoding.is_symbol(c) || c == b'=')
                .collect()
        } else {
            data
        };
        let (bytes, ok) = encoding.decode(&text);
        super::write_all(p, &bytes);
        if !ok {
            p.error("invalid input");
            return 1;
        }
        return 0;
    }
    let Some(encoded) = encoding.encode(&data) else {
        p.error("invalid input (length must be multiple of 4 characters)");
        return 1;
    };
    let mut out = Vec::with_capacity(encoded.len() + encoded.len() / 64 + 1);
    if wrap == 0 {
        out.extend_from_slice(&encoded);
    } else {
        for line in encoded.chunks(wrap) {
            out.extend_from_slice(line);
            out.push(b'\n');
        }
    }
    super::write_all(p, &out);
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base32_round_trips() {
        assert_eq!(base32_encode(b"hello", BASE32), b"NBSWY3DP");
        assert_eq!(base32_encode(b"hi", BASE32), b"NBUQ====");
        assert_eq!(base32_decode(b"NBUQ====\n", BASE32), (b"hi".to_vec(), true));
        assert_eq!(base32_decode(b"NBUQ", BASE32), (Vec::new(), false));
        assert_eq!(base32_decode(b"NBU!Q===", BASE32), (b"h".to_vec(), false));
    }

    #[test]
    fn z85_matches_the_spec_example() {
        let data = [0x86, 0x4F, 0xD2, 0x6F, 0xB5, 0x59, 0xF7, 0x5B];
        assert_eq!(Encoding::Z85.encode(&data), Some(b"HelloWorld".to_vec()));
    }
}
