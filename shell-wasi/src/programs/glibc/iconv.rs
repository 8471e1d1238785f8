//! `iconv [-c] [-f FROM] [-t TO[//TRANSLIT][//IGNORE]] [-o FILE] [-l]
//! [FILE...]`: glibc's converter for the character sets agents meet:
//! UTF-8, UTF-16 and UTF-32 (with or without byte order), UCS-2/4,
//! ASCII, ISO-8859-1 to -16, the Windows code pages 1250-1258, CP437,
//! CP850, KOI8-R/U and Mac Roman. Errors read as glibc's (`illegal input
//! sequence at position N`), as do `-c`, `//IGNORE` and `//TRANSLIT`.

use super::Process;
use super::iconv_tables::{TABLES, TRANSLIT, Table};
use crate::errors::strerror;

/// A character set.
#[derive(Clone, Copy)]
enum Charset {
    Utf8,
    /// Little-endian unless `big`; `bom`: written with a byte order mark
    /// and read by one.
    Utf16 {
        big: bool,
        bom: bool,
    },
    Utf32 {
        big: bool,
        bom: bool,
    },
    Ascii,
    Latin1,
    Table(&'static Table),
}

/// Names compared without case, dashes, underscores or spaces.
fn normal(name: &str) -> String {
    name.chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .map(|c| c.to_ascii_uppercase())
        .collect()
}

fn charset(name: &str) -> Option<Charset> {
    let n = normal(name);
    let is = |names: &[&str]| names.iter().any(|a| normal(a) == n);
    let charset = if is(&["UTF-8", "UTF8"]) {
        Charset::Utf8
    } else if is(&["UTF-16"]) {
        Charset::Utf16 {
            big: false,
            bom: true,
        }
    } else if is(&["UTF-16LE", "UCS-2", "UCS-2LE", "UNICODELITTLE"]) {
        Charset::Utf16 {
            big: false,
            bom: false,
        }
    } else if is(&["UTF-16BE", "UCS-2BE", "UNICODEBIG"]) {
        Charset::Utf16 {
            big: true,
            bom: false,
        }
    } else if is(&["UTF-32", "WCHAR_T"]) {
        Charset::Utf32 {
            big: false,
            bom: true,
        }
    } else if is(&["UTF-32LE", "UCS-4LE"]) {
        Charset::Utf32 {
            big: false,
            bom: false,
        }
    } else if is(&["UTF-32BE", "UCS-4", "UCS-4BE", "ISO-10646", "UCS4"]) {
        Charset::Utf32 {
            big: true,
            bom: false,
        }
    } else if is(&[
        "ASCII",
        "US-ASCII",
        "ANSI_X3.4-1968",
        "646",
        "US",
        "ISO646-US",
        "CP367",
    ]) {
        Charset::Ascii
    } else if is(&[
        "ISO-8859-1",
        "ISO_8859-1",
        "LATIN1",
        "L1",
        "ISO88591",
        "CP819",
        "IBM819",
    ]) {
        Charset::Latin1
    } else {
        return TABLES
            .iter()
            .find(|t| t.names.iter().any(|a| normal(a) == n))
            .map(Charset::Table);
    };
    Some(charset)
}

/// What decoding found at a byte offset.
enum Decoded {
    Char(char),
    /// An invalid sequence of this many bytes.
    Invalid(usize),
    /// The input ends inside a character.
    Incomplete,
}

/// Decodes one character at `data[pos..]`; its length.
fn decode_at(cs: Charset, data: &[u8], pos: usize) -> (Decoded, usize) {
    let rest = data.get(pos..).unwrap_or_default();
    match cs {
        Charset::Utf8 => {
            let want = match rest[0] {
                0x00..=0x7f => 1,
                0xc2..=0xdf => 2,
                0xe0..=0xef => 3,
                0xf0..=0xf4 => 4,
                _ => return (Decoded::Invalid(1), 1),
            };
            if rest.len() < want {
                // A truncated but so far valid sequence.
                return match std::str::from_utf8(rest) {
                    Err(e) if e.error_len().is_none() => (Decoded::Incomplete, rest.len()),
                    _ => (Decoded::Invalid(1), 1),
                };
            }
            match std::str::from_utf8(&rest[..want]) {
                Ok(s) => (Decoded::Char(s.chars().next().unwrap_or('\0')), want),
                Err(_) => (Decoded::Invalid(1), 1),
            }
        }
        Charset::Utf16 { big, .. } => {
            let unit = |i: usize| -> Option<u16> {
                let b = rest.get(i..i + 2)?;
                Some(if big {
                    u16::from_be_bytes([b[0], b[1]])
                } else {
                    u16::from_le_bytes([b[0], b[1]])
                })
            };
            let Some(u) = unit(0) else {
                return (Decoded::Incomplete, rest.len());
            };
            if (0xd800..0xdc00).contains(&u) {
                let Some(l) = unit(2) else {
                    return (Decoded::Incomplete, rest.len());
                };
                if !(0xdc00..0xe000).contains(&l) {
                    return (Decoded::Invalid(2), 2);
                }
                let c = 0x10000 + ((u32::from(u) - 0xd800) << 10) + (u32::from(l) - 0xdc00);
                return (
                    char::from_u32(c).map_or(Decoded::Invalid(4), Decoded::Char),
                    4,
                );
            }
            (
                char::from_u32(u32::from(u)).map_or(Decoded::Invalid(2), Decoded::Char),
                2,
            )
        }
        Charset::Utf32 { big, .. } => {
            let Some(b) = rest.get(..4) else {
                return (Decoded::Incomplete, rest.len());
            };
            let v = if big {
                u32::from_be_bytes([b[0], b[1], b[2], b[3]])
            } else {
                u32::from_le_bytes([b[0], b[1], b[2], b[3]])
            };
            (
                char::from_u32(v).map_or(Decoded::Invalid(4), Decoded::Char),
                4,
            )
        }
        Charset::Ascii => {
            let b = rest[0];
            if b < 0x80 {
                (Decoded::Char(char::from(b)), 1)
            } else {
                (Decoded::Invalid(1), 1)
            }
        }
        Charset::Latin1 => (Decoded::Char(char::from(rest[0])), 1),
        Charset::Table(t) => {
            let b = rest[0];
            if b < 0x80 {
                return (Decoded::Char(char::from(b)), 1);
            }
            let cp = t.high[usize::from(b - 0x80)];
            match char::from_u32(u32::from(cp)).filter(|_| cp != 0) {
                Some(c) => (Decoded::Char(c), 1),
                None => (Decoded::Invalid(1), 1),
            }
        }
    }
}

/// The bytes of `c` in `cs`, if it has them.
fn encode(cs: Charset, c: char, out: &mut Vec<u8>) -> bool {
    let cp = u32::from(c);
    match cs {
        Charset::Utf8 => {
            let mut buf = [0u8; 4];
            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
        }
        Charset::Utf16 { big, .. } => {
            let mut buf = [0u16; 2];
            for u in c.encode_utf16(&mut buf) {
                out.extend_from_slice(&if big {
                    u.to_be_bytes()
                } else {
                    u.to_le_bytes()
                });
            }
        }
        Charset::Utf32 { big, .. } => {
            out.extend_from_slice(&if big {
                cp.to_be_bytes()
            } else {
                cp.to_le_bytes()
            });
        }
        Charset::Ascii => {
            if cp >= 0x80 {
                return false;
            }
            out.push(cp as u8);
        }
        Charset::Latin1 => {
            if cp > 0xff {
                return false;
            }
            out.push(cp as u8);
        }
        Charset::Table(t) => {
            if cp < 0x80 {
                out.push(cp as u8);
            } else {
                let Some(i) = t.high.iter().position(|&h| h != 0 && u32::from(h) == cp) else {
                    return false;
                };
                out.push(0x80 + i as u8);
            }
        }
    }
    true
}

struct Options {
    from: Charset,
    to: Charset,
    translit: bool,
    ignore: bool,
    omit: bool,
}

/// How a conversion ended.
enum Failure {
    /// `illegal input sequence at position N`
    Illegal(usize),
    Incomplete,
}

/// Converts `data`; the output so far, and whether it failed, with
/// `//IGNORE`'s deferred failure.
fn convert(o: &Options, data: &[u8]) -> (Vec<u8>, Option<Failure>) {
    let mut out = Vec::with_capacity(data.len());
    if let Charset::Utf16 { bom: true, .. } = o.to {
        out.extend_from_slice(&[0xff, 0xfe]);
    }
    if let Charset::Utf32 { bom: true, .. } = o.to {
        out.extend_from_slice(&[0xff, 0xfe, 0, 0]);
    }
    let mut from = o.from;
    let mut pos = 0;
    // A byte order mark picks the order of UTF-16 and UTF-32 input.
    match from {
        Charset::Utf16 { bom: true, .. } => match data.get(..2) {
            Some([0xff, 0xfe]) => pos = 2,
            Some([0xfe, 0xff]) => {
                pos = 2;
                from = Charset::Utf16 {
                    big: true,
                    bom: true,
                };
            }
            _ => {}
        },
        Charset::Utf32 { bom: true, .. } => match data.get(..4) {
            Some([0xff, 0xfe, 0, 0]) => pos = 4,
            Some([0, 0, 0xfe, 0xff]) => {
                pos = 4;
                from = Charset::Utf32 {
                    big: true,
                    bom: true,
                };
            }
            _ => {}
        },
        _ => {}
    }
    let mut skipped = false;
    while pos < data.len() {
        let (d, len) = decode_at(from, data, pos);
        match d {
            Decoded::Incomplete => return (out, Some(Failure::Incomplete)),
            Decoded::Invalid(n) => {
                if o.omit || o.ignore {
                    skipped |= o.ignore && !o.omit;
                    pos += n;
                    continue;
                }
                return (out, Some(Failure::Illegal(pos)));
            }
            Decoded::Char(c) => {
                if !encode(o.to, c, &mut out) {
                    if o.translit {
                        let t = TRANSLIT
                            .binary_search_by_key(&u32::from(c), |e| e.0)
                            .ok()
                            .map_or("?", |i| TRANSLIT[i].1);
                        let mut tmp = Vec::new();
                        if t.chars().all(|tc| encode(o.to, tc, &mut tmp)) {
                            out.extend_from_slice(&tmp);
                        } else {
                            encode(o.to, '?', &mut out);
                        }
                    } else if o.ignore && !o.omit {
                        skipped = true;
                    } else if !o.omit {
                        return (out, Some(Failure::Illegal(pos)));
                    }
                }
                pos += len;
            }
        }
    }
    (out, skipped.then_some(Failure::Illegal(data.len())))
}

/// Every name iconv -l lists.
fn all_names() -> Vec<&'static str> {
    let mut names = vec![
        "ANSI_X3.4-1968",
        "ASCII",
        "ISO-8859-1",
        "LATIN1",
        "UCS-2",
        "UCS-2BE",
        "UCS-2LE",
        "UCS-4",
        "UCS-4BE",
        "UCS-4LE",
        "US-ASCII",
        "UTF-16",
        "UTF-16BE",
        "UTF-16LE",
        "UTF-32",
        "UTF-32BE",
        "UTF-32LE",
        "UTF-8",
        "UTF8",
    ];
    for t in TABLES {
        names.extend(t.names.iter().copied());
    }
    names.sort_unstable();
    names.dedup();
    names
}

pub(crate) fn iconv(p: &mut Process<'_>, argv: &[String]) -> i32 {
    use super::super::coreutils::args::{HasArg, Spec};
    let spec = Spec {
        short: "f:t:o:cls",
        long: &[
            ("from-code", 'f', HasArg::Yes),
            ("to-code", 't', HasArg::Yes),
            ("output", 'o', HasArg::Yes),
            ("list", 'l', HasArg::No),
            ("silent", 's', HasArg::No),
            ("verbose", 'v', HasArg::No),
        ],
    };
    let args = match spec.parse(argv.get(1..).unwrap_or_default()) {
        Ok(a) => a,
        Err(msg) => {
            p.error(&msg);
            p.io.err_line("Try `iconv --help' or `iconv --usage' for more information.");
            return 64;
        }
    };
    if args.has('l') {
        let text: String = all_names().iter().map(|n| format!("{n}//\n")).collect();
        p.out(text.as_bytes());
        return 0;
    }
    let from_spec = args.value('f').unwrap_or("UTF-8").to_string();
    let to_spec = args.value('t').unwrap_or("UTF-8").to_string();
    let mut parts = to_spec.split("//");
    let to_name = parts.next().unwrap_or_default().to_string();
    let (mut translit, mut ignore) = (false, false);
    for suffix in parts {
        for s in suffix.split(',') {
            match normal(s).as_str() {
                "TRANSLIT" => translit = true,
                "IGNORE" => ignore = true,
                _ => {}
            }
        }
    }
    let from_name = from_spec.split("//").next().unwrap_or_default();
    let (Some(from), Some(to)) = (
        charset(if from_name.is_empty() {
            "UTF-8"
        } else {
            from_name
        }),
        charset(if to_name.is_empty() {
            "UTF-8"
        } else {
            &to_name
        }),
    ) else {
        p.error("failed to start conversion processing: No such file or directory");
        return 1;
    };
    let o = Options {
        from,
        to,
        translit,
        ignore,
        omit: args.has('c'),
    };
    let names = if args.operands.is_empty() {
        vec!["-".to_string()]
    } else {
        args.operands.clone()
    };
    let mut output = Vec::new();
    let mut status = 0;
    for name in &names {
        let data = match super::super::coreutils::read_input(p, name) {
            Ok(d) => d,
            Err(e) => {
                p.error(&format!(
                    "cannot open input file `{name}': {}",
                    strerror(&e)
                ));
                status = 1;
                continue;
            }
        };
        let (bytes, failure) = convert(&o, &data);
        output.extend(bytes);
        match failure {
            None => {}
            Some(Failure::Illegal(at)) => {
                p.error(&format!("illegal input sequence at position {at}"));
                status = 1;
                break;
            }
            Some(Failure::Incomplete) => {
                p.error("incomplete character or shift sequence at end of buffer");
                status = 1;
                break;
            }
        }
    }
    match args.value('o') {
        Some(file) => {
            if let Err(e) = std::fs::write(p.resolve(file), &output) {
                p.error(&format!("cannot open output file: {}", strerror(&e)));
                return 1;
            }
        }
        None => {
            super::super::coreutils::write_all(p, &output);
        }
    }
    status
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(from: &str, to: &str, data: &[u8]) -> (Vec<u8>, bool) {
        let o = Options {
            from: charset(from).expect("from"),
            to: charset(to).expect("to"),
            translit: false,
            ignore: false,
            omit: false,
        };
        let (out, f) = convert(&o, data);
        (out, f.is_none())
    }

    #[test]
    fn conversions() {
        assert_eq!(
            run("latin1", "utf8", b"caf\xe9"),
            ("café".as_bytes().to_vec(), true)
        );
        assert_eq!(
            run("UTF-8", "UTF-16", b"hi"),
            (vec![0xff, 0xfe, b'h', 0, b'i', 0], true)
        );
        assert!(!run("UTF-8", "ASCII", "é".as_bytes()).1);
        assert_eq!(
            run("CP1252", "UTF-8", b"\x80"),
            ("€".as_bytes().to_vec(), true)
        );
        assert!(TRANSLIT.windows(2).all(|w| w[0].0 < w[1].0));
    }
}
