//! `od [-A RADIX] [-t TYPE]... [-c] [-v] [-N BYTES] [-j BYTES] [FILE...]`:
//! GNU's octal dump for the types scripts use (`x1`, `o1`, `d1`, `u1`,
//! `c`, `a`, and the 2-byte `o2` `x2` `d2` `u2`; `z` adds the text), with
//! repeated lines collapsed to `*` unless `-v`.

use super::Process;
use super::args::{HasArg, Spec};

/// Bytes per output line, as GNU's default.
const LINE: usize = 16;

/// One `-t` type.
#[derive(Clone, Copy)]
struct Kind {
    /// `o`, `x`, `d`, `u`, `c` or `a`.
    letter: char,
    /// Bytes per element.
    size: usize,
}

impl Kind {
    /// Characters one element takes, its leading space included.
    fn width(self) -> usize {
        match (self.letter, self.size) {
            ('c' | 'a', _) => 4,
            ('x', n) => 2 * n + 1,
            ('o', 1) | ('u', 1) => 4,
            ('d', 1) => 5,
            ('o', _) => 7,
            ('u', _) => 6,
            ('d', _) => 7,
            _ => 4,
        }
    }

    /// One element at least `width` wide (all types of a dump line up).
    fn format_in(self, chunk: &[u8], width: usize) -> String {
        let text = self.format(chunk);
        format!("{text:>width$}")
    }

    fn format(self, chunk: &[u8]) -> String {
        let mut raw = [0u8; 8];
        for (slot, b) in raw.iter_mut().zip(chunk) {
            *slot = *b;
        }
        let value = u64::from_le_bytes(raw);
        let pad = self.width() - 1;
        match self.letter {
            'x' => format!(" {value:0pad$x}"),
            'o' => format!(" {value:0pad$o}"),
            'u' => format!(" {value:>pad$}"),
            'd' => {
                let bits = self.size * 8;
                let signed = if bits < 64 && value >= 1 << (bits - 1) {
                    value as i64 - (1i64 << bits)
                } else {
                    value as i64
                };
                format!(" {signed:>pad$}")
            }
            'c' => format!(" {:>3}", char_name(chunk.first().copied().unwrap_or(0))),
            _ => format!(" {:>3}", ascii_name(chunk.first().copied().unwrap_or(0))),
        }
    }
}

/// `-c`: C escapes, printable characters, else three octal digits.
fn char_name(b: u8) -> String {
    match b {
        0 => "\\0".into(),
        7 => "\\a".into(),
        8 => "\\b".into(),
        9 => "\\t".into(),
        10 => "\\n".into(),
        11 => "\\v".into(),
        12 => "\\f".into(),
        13 => "\\r".into(),
        32..=126 => (b as char).to_string(),
        _ => format!("{b:03o}"),
    }
}

/// `-t a`: named characters, high bit ignored.
fn ascii_name(b: u8) -> String {
    const NAMES: [&str; 33] = [
        "nul", "soh", "stx", "etx", "eot", "enq", "ack", "bel", "bs", "ht", "nl", "vt", "ff", "cr",
        "so", "si", "dle", "dc1", "dc2", "dc3", "dc4", "nak", "syn", "etb", "can", "em", "sub",
        "esc", "fs", "gs", "rs", "us", "sp",
    ];
    let b = b & 0x7f;
    match b {
        0..=32 => NAMES[usize::from(b)].into(),
        127 => "del".into(),
        _ => (b as char).to_string(),
    }
}

fn parse_kind(text: &str) -> Option<(Kind, bool)> {
    let (body, z) = match text.strip_suffix('z') {
        Some(b) => (b, true),
        None => (text, false),
    };
    let mut chars = body.chars();
    let letter = chars.next()?;
    let rest: String = chars.collect();
    let size = match (letter, rest.as_str()) {
        ('c' | 'a', "") => 1,
        ('o' | 'x' | 'd' | 'u', "") => 4,
        ('o' | 'x' | 'd' | 'u', "C") => 1,
        ('o' | 'x' | 'd' | 'u', "S") => 2,
        ('o' | 'x' | 'd' | 'u', "I") => 4,
        ('o' | 'x' | 'd' | 'u', "L") => 8,
        ('o' | 'x' | 'd' | 'u', n) => match n.parse::<usize>().ok()? {
            s @ (1 | 2 | 4 | 8) => s,
            _ => return None,
        },
        _ => return None,
    };
    Some((Kind { letter, size }, z))
}

pub(crate) fn od(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let spec = Spec {
        short: "A:t:cvN:j:bdox",
        long: &[
            ("address-radix", 'A', HasArg::Yes),
            ("format", 't', HasArg::Yes),
            ("output-duplicates", 'v', HasArg::No),
            ("read-bytes", 'N', HasArg::Yes),
            ("skip-bytes", 'j', HasArg::Yes),
        ],
    };
    let args = match super::parse_args(p, &spec, argv, 1) {
        Ok(a) => a,
        Err(status) => return status,
    };
    let radix = args.value('A').unwrap_or("o").to_string();
    if !matches!(radix.as_str(), "o" | "x" | "d" | "n") {
        p.error(&format!(
            "invalid output address radix '{radix}'; it must be one character from [doxn]"
        ));
        return 1;
    }
    let mut kinds = Vec::new();
    let mut text = false;
    for t in args.values('t') {
        match parse_kind(t) {
            Some((kind, z)) => {
                kinds.push(kind);
                text |= z;
            }
            None => {
                let bad = t.chars().next().unwrap_or(' ');
                p.error(&format!(
                    "invalid character '{bad}' in type string {}",
                    p.quote(t)
                ));
                return 1;
            }
        }
    }
    for (flag, kind) in [
        ('c', "c"),
        ('b', "o1"),
        ('d', "u2"),
        ('o', "o2"),
        ('x', "x2"),
    ] {
        if args.has(flag)
            && let Some((k, _)) = parse_kind(kind)
        {
            kinds.push(k);
        }
    }
    if kinds.is_empty() {
        kinds.push(Kind {
            letter: 'o',
            size: 2,
        });
    }
    let number = |key: char| args.value(key).and_then(|v| v.parse::<usize>().ok());
    let mut data = Vec::new();
    let names = if args.operands.is_empty() {
        vec!["-".to_string()]
    } else {
        args.operands.clone()
    };
    for name in &names {
        match super::read_input(p, name) {
            Ok(bytes) => data.extend(bytes),
            Err(e) => {
                super::file_error(p, name, &e);
                return 1;
            }
        }
    }
    let skip = number('j').unwrap_or(0).min(data.len());
    let mut data = data.split_off(skip);
    if let Some(n) = number('N') {
        data.truncate(n);
    }
    let out = dump(&data, skip, &kinds, text, &radix, args.has('v'));
    super::write_all(p, out.as_bytes());
    0
}

fn address(radix: &str, at: usize) -> String {
    match radix {
        "x" => format!("{at:06x}"),
        "d" => format!("{at:07}"),
        "n" => String::new(),
        _ => format!("{at:07o}"),
    }
}

fn dump(data: &[u8], start: usize, kinds: &[Kind], text: bool, radix: &str, all: bool) -> String {
    // With several types, every column is as wide as the widest needs.
    let per_byte = kinds
        .iter()
        .map(|k| k.width().div_ceil(k.size))
        .max()
        .unwrap_or(4);
    let mut out = String::new();
    let mut previous: Option<&[u8]> = None;
    let mut starred = false;
    for (i, line) in data.chunks(LINE).enumerate() {
        let at = start + i * LINE;
        if !all && line.len() == LINE && previous == Some(line) {
            if !starred {
                out.push_str("*\n");
                starred = true;
            }
            continue;
        }
        starred = false;
        previous = Some(line);
        for (n, kind) in kinds.iter().enumerate() {
            out.push_str(&if n == 0 {
                address(radix, at)
            } else {
                " ".repeat(address(radix, at).len())
            });
            let width = if kinds.len() > 1 {
                per_byte * kind.size
            } else {
                kind.width()
            };
            let fields: String = line
                .chunks(kind.size)
                .map(|c| kind.format_in(c, width))
                .collect();
            out.push_str(&fields);
            if text && n == 0 {
                let full = LINE / kind.size * width;
                out.push_str(&" ".repeat(full.saturating_sub(fields.len())));
                let shown: String = line
                    .iter()
                    .map(|&b| {
                        if (32..127).contains(&b) {
                            b as char
                        } else {
                            '.'
                        }
                    })
                    .collect();
                out.push_str(&format!("  >{shown}<"));
            }
            out.push('\n');
        }
    }
    if radix != "n" {
        out.push_str(&address(radix, start + data.len()));
        out.push('\n');
    }
    out
}
