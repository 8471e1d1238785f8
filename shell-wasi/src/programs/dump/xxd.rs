//! `xxd [-a] [-b] [-c COLS] [-C] [-d] [-e] [-g BYTES] [-i] [-l LEN]
//! [-n NAME] [-o OFF] [-p] [-r] [-s [+-]SEEK] [-u] [INFILE [OUTFILE]]`:
//! Debian 12's xxd (vim, 2022-01-14): the classic dump, plain hex, C
//! include style, binary and little-endian dumps, and `-r` back to bytes
//! with xxd's own parser (its handling of garbage and of gaps included).

use super::Process;
use crate::errors::strerror;
use crate::programs::quoting::quote_if_needed;

/// Widest line xxd allows.
const MAX_COLS: usize = 256;

const USAGE: &str = "Usage:
       xxd [options] [infile [outfile]]
    or
       xxd -r [-s [-]offset] [-c cols] [-ps] [infile [outfile]]
Options:
    -a          toggle autoskip: A single '*' replaces nul-lines. Default off.
    -b          binary digit dump (incompatible with -ps,-i,-r). Default hex.
    -C          capitalize variable names in C include file style (-i).
    -c cols     format <cols> octets per line. Default 16 (-i: 12, -ps: 30).
    -E          show characters in EBCDIC. Default ASCII.
    -e          little-endian dump (incompatible with -ps,-i,-r).
    -g bytes    number of octets per group in normal output. Default 2 (-e: 4).
    -h          print this summary.
    -i          output in C include file style.
    -l len      stop after <len> octets.
    -n name     set the variable name used in C include output (-i).
    -o off      add <off> to the displayed file position.
    -ps         output in postscript plain hexdump style.
    -r          reverse operation: convert (or patch) hexdump into binary.
    -r -s off   revert with <off> added to file positions found in hexdump.
    -d          show offset in decimal instead of hex.
    -s [+][-]seek  start at <seek> bytes abs. (or +: rel.) infile offset.
    -u          use upper case hex letters.
    -v          show version: \"xxd 2022-01-14 by Juergen Weigert et al.\".";

#[derive(Clone, Copy, PartialEq, Eq)]
enum Style {
    Hex,
    Plain,
    Include,
    Bits,
    LittleEndian,
}

struct Options {
    style: Style,
    autoskip: bool,
    cols: Option<usize>,
    group: Option<usize>,
    upper: bool,
    capitalize: bool,
    decimal: bool,
    reverse: bool,
    len: Option<u64>,
    seek: Option<(char, i64)>,
    offset: i64,
    name: Option<String>,
    files: Vec<String>,
}

/// xxd's strtol: a C integer (decimal, 0x hex or 0 octal) with sign.
fn number(text: &str) -> Option<i64> {
    let t = text.trim_start();
    let (neg, t) = match t.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    let (radix, digits) = if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        (16, h)
    } else if t.len() > 1 && t.starts_with('0') {
        (8, &t[1..])
    } else {
        (10, t)
    };
    let end = digits
        .find(|c: char| !c.is_digit(radix))
        .unwrap_or(digits.len());
    let v = i64::from_str_radix(digits.get(..end)?, radix).unwrap_or(0);
    Some(if neg { -v } else { v })
}

/// Parses xxd's own option syntax (`-c8`, `-c 8`, `-cols 8`, `-ps`).
fn options(p: &Process<'_>, argv: &[String]) -> Result<Options, i32> {
    let mut o = Options {
        style: Style::Hex,
        autoskip: false,
        cols: None,
        group: None,
        upper: false,
        capitalize: false,
        decimal: false,
        reverse: false,
        len: None,
        seek: None,
        offset: 0,
        name: None,
        files: Vec::new(),
    };
    let usage = || {
        p.io.err_line(USAGE);
        1
    };
    let mut i = 1;
    while let Some(arg) = argv.get(i) {
        i += 1;
        if !arg.starts_with('-') || arg == "-" || !o.files.is_empty() {
            o.files.push(arg.clone());
            continue;
        }
        if arg == "--" {
            o.files
                .extend(argv.get(i..).unwrap_or_default().iter().cloned());
            break;
        }
        let body = &arg[1..];
        // An option's value: the rest of this word, or the next word.
        let mut value = |skip: usize| -> Result<String, i32> {
            let rest = body.get(skip..).unwrap_or_default();
            if !rest.is_empty() {
                return Ok(rest.to_string());
            }
            let next = argv.get(i).cloned().ok_or_else(usage)?;
            i += 1;
            Ok(next)
        };
        match body.chars().next() {
            Some('a') => o.autoskip = !o.autoskip,
            Some('b') => o.style = Style::Bits,
            Some('e') => o.style = Style::LittleEndian,
            Some('u') => o.upper = true,
            Some('p') => o.style = Style::Plain,
            Some('i') => o.style = Style::Include,
            Some('C') => o.capitalize = true,
            Some('d') => o.decimal = true,
            Some('r') => o.reverse = true,
            Some('E') => {}
            Some('v') => {
                p.io.err_line("xxd 2022-01-14 by Juergen Weigert et al.");
                return Err(0);
            }
            Some('c') => {
                let skip = if body.starts_with("cols") { 4 } else { 1 };
                o.cols = Some(usize::try_from(number(&value(skip)?).unwrap_or(0)).unwrap_or(0));
            }
            Some('g') => {
                let skip = if body.starts_with("groupsize") { 9 } else { 1 };
                o.group = Some(usize::try_from(number(&value(skip)?).unwrap_or(0)).unwrap_or(0));
            }
            Some('l') => {
                let skip = if body.starts_with("len") { 3 } else { 1 };
                o.len = Some(u64::try_from(number(&value(skip)?).unwrap_or(0)).unwrap_or(0));
            }
            Some('o') => o.offset = number(&value(1)?).unwrap_or(0),
            Some('n') => {
                let skip = if body.starts_with("name") { 4 } else { 1 };
                o.name = Some(value(skip)?);
            }
            Some('s') => {
                let v = value(1)?;
                let t = v.trim_start();
                let mode = if t.starts_with('+') {
                    '+'
                } else if t.starts_with('-') {
                    '-'
                } else {
                    ' '
                };
                let n = number(t.trim_start_matches('+')).unwrap_or(0);
                o.seek = Some((mode, n));
            }
            Some('h') => {
                p.io.err_line(USAGE);
                return Err(0);
            }
            _ => return Err(usage()),
        }
    }
    if o.files.len() > 2 {
        return Err(usage());
    }
    Ok(o)
}

pub(crate) fn xxd(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let o = match options(p, argv) {
        Ok(o) => o,
        Err(status) => return status,
    };
    let input = o.files.first().map_or("-", String::as_str);
    // With -l (and no seek from the end) only what is shown is read, so
    // `xxd -l 16 /dev/urandom` ends.
    let limit = match (o.len, o.seek, o.reverse) {
        (Some(l), None, false) => Some(l),
        (Some(l), Some((m, n)), false) if m != '-' && n >= 0 => Some(l + n as u64),
        _ => None,
    };
    let data = match super::super::coreutils::read_input_limited(p, input, limit) {
        Ok(d) => d,
        Err(e) => {
            p.error(&format!("{}: {}", quote_if_needed(input), strerror(&e)));
            return 2;
        }
    };
    let result = if o.reverse {
        Ok(reverse(&o, &data))
    } else {
        dump(p, &o, &data, input)
    };
    let out = match result {
        Ok(out) => out,
        Err(status) => return status,
    };
    match o.files.get(1) {
        Some(file) if file != "-" => {
            if let Err(e) = std::fs::write(p.resolve(file), out) {
                p.error(&format!("{}: {}", quote_if_needed(file), strerror(&e)));
                return 3;
            }
        }
        _ => {
            super::super::coreutils::write_all(p, &out);
        }
    }
    0
}

/// The bytes from the seek position on, at most `-l` of them, and the
/// offset the first one has.
fn window<'d>(o: &Options, data: &'d [u8]) -> (&'d [u8], u64) {
    let len = data.len() as i64;
    let start = match o.seek {
        None => 0,
        Some(('-', n)) => (len + n).max(0),
        Some((_, n)) => n.max(0),
    };
    let start = usize::try_from(start.min(len)).unwrap_or(0);
    let rest = data.get(start..).unwrap_or_default();
    let take = o.len.map_or(rest.len(), |l| {
        usize::try_from(l).unwrap_or(usize::MAX).min(rest.len())
    });
    (rest.get(..take).unwrap_or_default(), start as u64)
}

/// A C identifier from a file name, as xxd -i makes it.
fn c_name(o: &Options, file: &str) -> String {
    let base = o.name.clone().unwrap_or_else(|| file.to_string());
    let mut out = String::new();
    if o.name.is_none() && base.starts_with(|c: char| c.is_ascii_digit()) {
        out.push_str("__");
    }
    for c in base.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(if o.capitalize {
                c.to_ascii_uppercase()
            } else {
                c
            });
        } else {
            out.push('_');
        }
    }
    out
}

fn dump(p: &Process<'_>, o: &Options, data: &[u8], input: &str) -> Result<Vec<u8>, i32> {
    let (bytes, start) = window(o, data);
    let default_cols = match o.style {
        Style::Plain => 30,
        Style::Include => 12,
        Style::Bits => 6,
        _ => 16,
    };
    let cols = match o.cols {
        Some(0) | None => default_cols,
        Some(c) => c,
    };
    if cols > MAX_COLS && !matches!(o.style, Style::Plain | Style::Include) {
        p.error("invalid number of columns (max. 256).");
        return Err(1);
    }
    let hexdigits: &[u8; 16] = if o.upper {
        b"0123456789ABCDEF"
    } else {
        b"0123456789abcdef"
    };
    let hex = |b: u8| {
        [
            hexdigits[usize::from(b >> 4)],
            hexdigits[usize::from(b & 15)],
        ]
    };
    let mut out = Vec::new();
    match o.style {
        Style::Plain => {
            for (i, &b) in bytes.iter().enumerate() {
                out.extend_from_slice(&hex(b));
                if (i + 1) % cols == 0 {
                    out.push(b'\n');
                }
            }
            if bytes.len() % cols != 0 {
                out.push(b'\n');
            }
        }
        Style::Include => {
            let named = input != "-";
            let name = c_name(o, input);
            if named {
                out.extend(format!("unsigned char {name}[] = {{\n").bytes());
            }
            let prefix = if o.upper { "0X" } else { "0x" };
            for (i, &b) in bytes.iter().enumerate() {
                if i % cols == 0 {
                    out.extend_from_slice(b"  ");
                }
                out.extend(prefix.bytes());
                out.extend_from_slice(&hex(b));
                if i + 1 == bytes.len() {
                    out.push(b'\n');
                } else if (i + 1) % cols == 0 {
                    out.extend_from_slice(b",\n");
                } else {
                    out.extend_from_slice(b", ");
                }
            }
            if named {
                out.extend(format!("}};\nunsigned int {name}_len = {};\n", bytes.len()).bytes());
            }
        }
        _ => lines(o, bytes, start, cols, &hex, &mut out),
    }
    Ok(out)
}

/// The classic dump, line by line, with `-a`'s squeezing of zero lines.
fn lines(
    o: &Options,
    bytes: &[u8],
    start: u64,
    cols: usize,
    hex: &dyn Fn(u8) -> [u8; 2],
    out: &mut Vec<u8>,
) {
    let bits = o.style == Style::Bits;
    let little = o.style == Style::LittleEndian;
    let default_group = if bits {
        1
    } else if little {
        4
    } else {
        2
    };
    let mut group = match o.group {
        None => default_group,
        Some(0) => cols,
        Some(g) => g,
    };
    if little && !group.is_power_of_two() {
        group = default_group;
    }
    let group = group.clamp(1, cols.max(1));
    let grplen = if bits { 8 * group + 1 } else { 2 * group + 1 };
    let mut squeeze = Squeeze::default();
    let mut last_line = Vec::new();
    for (n, chunk) in bytes.chunks(cols).enumerate() {
        let addr = start as i64 + o.offset + (n * cols) as i64;
        let head = if o.decimal {
            format!("{addr:08}:")
        } else {
            format!("{:08x}:", addr as u64)
        };
        let addrlen = head.len();
        let ascii_at = addrlen + 3 + (grplen * cols - 1) / group;
        let mut line = vec![b' '; ascii_at + cols + 1];
        line[..addrlen].copy_from_slice(head.as_bytes());
        for (i, &b) in chunk.iter().enumerate() {
            let x = if little { i ^ (group - 1) } else { i };
            let c = addrlen + 1 + (grplen * x) / group;
            if bits {
                for bit in 0..8 {
                    if let Some(slot) = line.get_mut(c + bit) {
                        *slot = b'0' + ((b >> (7 - bit)) & 1);
                    }
                }
            } else if let Some(slots) = line.get_mut(c..c + 2) {
                slots.copy_from_slice(&hex(b));
            }
            line[ascii_at + i] = if (32..127).contains(&b) { b } else { b'.' };
        }
        line.truncate(ascii_at + chunk.len());
        line.push(b'\n');
        let nonzero = chunk.iter().filter(|&&b| b != 0).count();
        let full = chunk.len() == cols;
        let nz = if !full || !o.autoskip {
            1
        } else {
            i64::try_from(nonzero).unwrap_or(1)
        };
        squeeze.line(&line, nz, out);
        last_line = line;
    }
    if o.autoskip && !bytes.is_empty() && bytes.len().is_multiple_of(cols) {
        squeeze.line(&last_line, -1, out);
    }
}

/// xxd's xxdline: with `-a`, a run of all-zero lines shows as its first
/// line, `*`, and its last line.
#[derive(Default)]
struct Squeeze {
    zero_seen: i32,
    saved: Vec<u8>,
}

impl Squeeze {
    fn line(&mut self, l: &[u8], nz: i64, out: &mut Vec<u8>) {
        if nz == 0 && self.zero_seen == 1 {
            self.saved = l.to_vec();
        }
        let first_zero = self.zero_seen == 0;
        if nz == 0 {
            self.zero_seen += 1;
        }
        if nz != 0 || first_zero {
            if nz != 0 {
                if nz < 0 {
                    self.zero_seen -= 1;
                }
                if self.zero_seen == 2 {
                    out.extend_from_slice(&self.saved);
                }
                if self.zero_seen > 2 {
                    out.extend_from_slice(b"*\n");
                }
            }
            if nz >= 0 || self.zero_seen > 0 {
                out.extend_from_slice(l);
            }
            if nz != 0 {
                self.zero_seen = 0;
            }
        }
    }
}

fn hex_value(c: u8) -> i32 {
    match c {
        b'0'..=b'9' => i32::from(c - b'0'),
        b'a'..=b'f' => i32::from(c - b'a' + 10),
        b'A'..=b'F' => i32::from(c - b'A' + 10),
        _ => -1,
    }
}

/// xxd -r (huntype): hex back to bytes; gaps in the offsets are zeros.
fn reverse(o: &Options, text: &[u8]) -> Vec<u8> {
    let plain = o.style == Style::Plain;
    let cols = o.cols.filter(|&c| c > 0).unwrap_or(16);
    let base_off = match o.seek {
        Some((_, n)) => n,
        None => 0,
    };
    let mut out: Vec<u8> = Vec::new();
    let (mut n1, mut n2) = (-1i32, 0i32);
    let mut ignore = true;
    let mut p = cols;
    let mut want_off: i64 = 0;
    let mut i = 0;
    while let Some(&c0) = text.get(i) {
        i += 1;
        let mut c = c0;
        if c == b'\r' || (plain && c == b' ') {
            continue;
        }
        let n3 = n2;
        n2 = n1;
        n1 = hex_value(c);
        if n1 == -1 && ignore {
            continue;
        }
        ignore = false;
        if !plain && p >= cols {
            if n1 < 0 {
                p = 0;
                continue;
            }
            want_off = (want_off << 4) | i64::from(n1);
            continue;
        }
        let target = usize::try_from(base_off + want_off).unwrap_or(0);
        if out.len() < target {
            out.resize(target, 0);
        }
        if n2 >= 0 && n1 >= 0 {
            let byte = u8::try_from((n2 << 4) | n1).unwrap_or(0);
            if target < out.len() {
                out[target] = byte;
            } else {
                out.push(byte);
            }
            want_off += 1;
            n1 = -1;
            p += 1;
            if !plain && p >= cols {
                // The rest of the line is the text column.
                while let Some(&d) = text.get(i) {
                    i += 1;
                    if d == b'\n' {
                        c = b'\n';
                        break;
                    }
                }
            }
        } else if n1 < 0 && n2 < 0 && n3 < 0 {
            while let Some(&d) = text.get(i) {
                i += 1;
                if d == b'\n' {
                    c = b'\n';
                    break;
                }
            }
        }
        if c == b'\n' {
            if !plain {
                want_off = 0;
            }
            p = cols;
            ignore = true;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts() -> Options {
        Options {
            style: Style::Hex,
            autoskip: false,
            cols: None,
            group: None,
            upper: false,
            capitalize: false,
            decimal: false,
            reverse: true,
            len: None,
            seek: None,
            offset: 0,
            name: None,
            files: Vec::new(),
        }
    }

    #[test]
    fn reverse_reads_the_classic_dump() {
        let text = b"00000000: 6869 0a                                  hi.\n";
        assert_eq!(reverse(&opts(), text), b"hi\n");
        let mut plain = opts();
        plain.style = Style::Plain;
        assert_eq!(reverse(&plain, b"6869\n0a\n"), b"hi\n");
    }

    #[test]
    fn numbers_read_like_strtol() {
        assert_eq!(number("0x10"), Some(16));
        assert_eq!(number("010"), Some(8));
        assert_eq!(number("-5"), Some(-5));
    }
}
