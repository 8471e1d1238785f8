//! `hexdump [-bcCdovx] [-e FORMAT] [-f FILE] [-n LEN] [-s OFFSET]
//! [FILE...]` and `hd` (`hexdump -C`): util-linux 2.38's hexdump, built
//! on its format engine. Every option is a set of format strings
//! (`"%07.7_ax " 8/2 "%04x " "\n"`), applied in turn to each block of
//! input; identical blocks are squeezed into `*` unless `-v`; short
//! final blocks print blanks where bytes are missing.

use super::Process;
use crate::errors::strerror;

/// One conversion and the text after it.
#[derive(Debug, Clone)]
struct Pr {
    conv: Conv,
    /// The printf flags and width/precision before the conversion.
    flags: String,
    width: Option<usize>,
    precision: Option<usize>,
    /// Text before the conversion (only for the first of a unit).
    text: String,
    /// Bytes consumed.
    bcnt: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Conv {
    /// Literal text only.
    Text,
    /// `%_a[dox]`: the offset of the block.
    Address(char),
    /// `%_A[dox]`: the final offset, printed once at the end.
    EndAddress(char),
    /// `%d %i %o %u %x %X`.
    Int(char),
    /// `%c`.
    Char,
    /// `%_c`: like od -c.
    OdChar,
    /// `%_p`: the byte, or `.`.
    Printable,
    /// `%_u`: US-ASCII names.
    Names,
    /// `%e %f %g %E %G`.
    Float(char),
    /// Blanks where bytes are missing (bpad).
    Blank,
}

/// `N/M "format"`: a unit repeated N times, M bytes per conversion.
#[derive(Debug, Clone)]
struct Unit {
    reps: usize,
    reps_set: bool,
    bcnt: Option<usize>,
    prs: Vec<Pr>,
    /// Trailing whitespace of the last conversion, dropped on the last
    /// repetition when reps > 1.
    strip_last: bool,
}

type Format = Vec<Unit>;

fn unit_bytes(u: &Unit) -> usize {
    u.prs.iter().map(|p| p.bcnt).sum::<usize>()
}

/// Parses one `-e` string into units.
fn parse_format(text: &str) -> Result<Format, String> {
    let mut units = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        while chars.get(i).is_some_and(|c| c.is_whitespace()) {
            i += 1;
        }
        if i >= chars.len() {
            break;
        }
        let mut reps = 1;
        let mut reps_set = false;
        let mut bcnt = None;
        if chars[i].is_ascii_digit() {
            let start = i;
            while chars.get(i).is_some_and(char::is_ascii_digit) {
                i += 1;
            }
            reps = chars[start..i]
                .iter()
                .collect::<String>()
                .parse()
                .unwrap_or(1);
            reps_set = true;
            while chars.get(i).is_some_and(|c| c.is_whitespace()) {
                i += 1;
            }
        }
        if chars.get(i) == Some(&'/') {
            i += 1;
            while chars.get(i).is_some_and(|c| c.is_whitespace()) {
                i += 1;
            }
            let start = i;
            while chars.get(i).is_some_and(char::is_ascii_digit) {
                i += 1;
            }
            if start == i {
                return Err(format!("bad byte count for conversion character {}", text));
            }
            bcnt = chars[start..i].iter().collect::<String>().parse().ok();
            while chars.get(i).is_some_and(|c| c.is_whitespace()) {
                i += 1;
            }
        }
        if chars.get(i) != Some(&'"') {
            return Err(format!("bad format {{{text}}}"));
        }
        i += 1;
        let start = i;
        while i < chars.len() && chars[i] != '"' {
            if chars[i] == '\\' {
                i += 1;
            }
            i += 1;
        }
        if i >= chars.len() {
            return Err(format!("missing closing quote in {text}"));
        }
        let body: String = chars[start..i].iter().collect();
        i += 1;
        let prs = parse_prs(&unescape(&body), bcnt)?;
        units.push(Unit {
            reps,
            reps_set,
            bcnt,
            prs,
            strip_last: false,
        });
    }
    Ok(units)
}

fn unescape(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('a') => out.push('\u{7}'),
            Some('b') => out.push('\u{8}'),
            Some('f') => out.push('\u{c}'),
            Some('v') => out.push('\u{b}'),
            Some('0') => out.push('\0'),
            Some(o) => {
                out.push('\\');
                out.push(o);
            }
            None => out.push('\\'),
        }
    }
    out
}

/// Splits a unit's format into conversions, each with the text after it.
fn parse_prs(fmt: &str, bcnt: Option<usize>) -> Result<Vec<Pr>, String> {
    let chars: Vec<char> = fmt.chars().collect();
    let mut prs: Vec<Pr> = Vec::new();
    let mut text = String::new();
    let mut i = 0;
    let push_text = |prs: &mut Vec<Pr>, t: &str| {
        if let Some(last) = prs.last_mut() {
            last.text.push_str(t);
        } else {
            prs.push(Pr {
                conv: Conv::Text,
                flags: String::new(),
                width: None,
                precision: None,
                text: t.to_string(),
                bcnt: 0,
            });
        }
    };
    while i < chars.len() {
        if chars[i] != '%' {
            text.push(chars[i]);
            i += 1;
            continue;
        }
        if chars.get(i + 1) == Some(&'%') {
            text.push('%');
            i += 2;
            continue;
        }
        push_text(&mut prs, &std::mem::take(&mut text));
        i += 1;
        let mut flags = String::new();
        while let Some(&f) = chars.get(i).filter(|c| "-+ #0".contains(**c)) {
            flags.push(f);
            i += 1;
        }
        let mut width = String::new();
        while let Some(&d) = chars.get(i).filter(|c| c.is_ascii_digit()) {
            width.push(d);
            i += 1;
        }
        let mut precision = None;
        if chars.get(i) == Some(&'.') {
            i += 1;
            let mut p = String::new();
            while let Some(&d) = chars.get(i).filter(|c| c.is_ascii_digit()) {
                p.push(d);
                i += 1;
            }
            precision = Some(p.parse().unwrap_or(0));
        }
        let c = chars.get(i).copied().ok_or("bad conversion character %")?;
        i += 1;
        let (conv, default_bytes) = match c {
            '_' => {
                let k = chars.get(i).copied().unwrap_or(' ');
                i += 1;
                match k {
                    'a' | 'A' => {
                        let base = chars.get(i).copied().unwrap_or('x');
                        if "dox".contains(base) {
                            i += 1;
                        } else {
                            return Err(format!("bad conversion character %_{k}{base}"));
                        }
                        if k == 'a' {
                            (Conv::Address(base), 0)
                        } else {
                            (Conv::EndAddress(base), 0)
                        }
                    }
                    'c' => (Conv::OdChar, 1),
                    'p' => (Conv::Printable, 1),
                    'u' => (Conv::Names, 1),
                    other => return Err(format!("bad conversion character %_{other}")),
                }
            }
            'd' | 'i' | 'o' | 'u' | 'x' | 'X' => (Conv::Int(c), bcnt.unwrap_or(4)),
            'c' => (Conv::Char, 1),
            'e' | 'E' | 'f' | 'g' | 'G' => (Conv::Float(c), bcnt.unwrap_or(8)),
            other => return Err(format!("bad conversion character %{other}")),
        };
        prs.push(Pr {
            conv,
            flags,
            width: (!width.is_empty()).then(|| width.parse().unwrap_or(0)),
            precision,
            text: String::new(),
            bcnt: default_bytes,
        });
    }
    push_text(&mut prs, &text);
    Ok(prs)
}

/// C printf of one value with the conversion's flags.
fn pad(pr: &Pr, body: &str, numeric: bool) -> String {
    let width = pr.width.unwrap_or(0).min(4096);
    let left = pr.flags.contains('-');
    let zero = pr.flags.contains('0') && !left && numeric;
    let len = body.chars().count();
    if len >= width {
        return body.to_string();
    }
    let fill = width - len;
    if left {
        format!("{body}{}", " ".repeat(fill))
    } else if zero {
        let (sign, digits) = match body.strip_prefix(['-', '+', ' ']) {
            Some(rest) => (&body[..1], rest),
            None => ("", body),
        };
        format!("{sign}{}{digits}", "0".repeat(fill))
    } else {
        format!("{}{body}", " ".repeat(fill))
    }
}

fn int_body(pr: &Pr, conv: char, value: u64, signed: i64) -> String {
    let mut digits = match conv {
        'd' | 'i' => signed.unsigned_abs().to_string(),
        'o' => format!("{value:o}"),
        'u' => value.to_string(),
        'x' => format!("{value:x}"),
        _ => format!("{value:X}"),
    };
    if let Some(p) = pr.precision
        && digits.len() < p
    {
        digits = format!("{}{digits}", "0".repeat(p - digits.len()));
    }
    let alt = pr.flags.contains('#');
    let prefix = match conv {
        'o' if alt && !digits.starts_with('0') => "0",
        'x' if alt && value != 0 => "0x",
        'X' if alt && value != 0 => "0X",
        _ => "",
    };
    let sign = if matches!(conv, 'd' | 'i') {
        if signed < 0 {
            "-"
        } else if pr.flags.contains('+') {
            "+"
        } else if pr.flags.contains(' ') {
            " "
        } else {
            ""
        }
    } else {
        ""
    };
    format!("{sign}{prefix}{digits}")
}

const NAMES: [&str; 33] = [
    "nul", "soh", "stx", "etx", "eot", "enq", "ack", "bel", "bs", "ht", "lf", "vt", "ff", "cr",
    "so", "si", "dle", "dc1", "dc2", "dc3", "dc4", "nak", "syn", "etb", "can", "em", "sub", "esc",
    "fs", "gs", "rs", "us", "sp",
];

fn render(pr: &Pr, bytes: &[u8], address: u64) -> String {
    let value = || {
        let mut v: u64 = 0;
        for (i, &b) in bytes.iter().take(pr.bcnt.min(8)).enumerate() {
            v |= u64::from(b) << (8 * i);
        }
        v
    };
    let signed = || {
        let v = value();
        match pr.bcnt {
            1 => i64::from(v as u8 as i8),
            2 => i64::from(v as u16 as i16),
            4 => i64::from(v as u32 as i32),
            _ => v as i64,
        }
    };
    let body = match pr.conv {
        Conv::Text | Conv::EndAddress(_) => return pr.text.clone(),
        Conv::Blank => pad(pr, "", false),
        Conv::Address(base) => {
            let conv = match base {
                'd' => 'u',
                'o' => 'o',
                _ => 'x',
            };
            pad(pr, &int_body(pr, conv, address, address as i64), true)
        }
        Conv::Int(c) => pad(pr, &int_body(pr, c, value(), signed()), true),
        Conv::Char => pad(
            pr,
            &char::from(bytes.first().copied().unwrap_or(0)).to_string(),
            false,
        ),
        Conv::Printable => {
            let b = bytes.first().copied().unwrap_or(0);
            let c = if (32..127).contains(&b) {
                char::from(b)
            } else {
                '.'
            };
            pad(pr, &c.to_string(), false)
        }
        Conv::OdChar => {
            let b = bytes.first().copied().unwrap_or(0);
            let s = match b {
                0 => "\\0".to_string(),
                7 => "\\a".to_string(),
                8 => "\\b".to_string(),
                12 => "\\f".to_string(),
                10 => "\\n".to_string(),
                13 => "\\r".to_string(),
                9 => "\\t".to_string(),
                11 => "\\v".to_string(),
                32..=126 => char::from(b).to_string(),
                _ => format!("{b:03o}"),
            };
            pad(pr, &s, false)
        }
        Conv::Names => {
            let b = bytes.first().copied().unwrap_or(0);
            let s = match b {
                0..=32 => NAMES[usize::from(b)].to_string(),
                127 => "del".to_string(),
                33..=126 => char::from(b).to_string(),
                _ => format!("{b:x}"),
            };
            pad(pr, &s, false)
        }
        Conv::Float(c) => {
            let v = if pr.bcnt == 4 {
                f64::from(f32::from_bits(value() as u32))
            } else {
                f64::from_bits(value())
            };
            let p = pr.precision.unwrap_or(6);
            let s = match c {
                'f' => format!("{v:.p$}"),
                'e' | 'E' => {
                    let s = format!("{v:.p$e}");
                    let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
                    let e: i32 = e.parse().unwrap_or(0);
                    let out = format!("{m}e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs());
                    if c == 'E' { out.to_uppercase() } else { out }
                }
                _ => {
                    let s = crate::programs::printf::general_format(v.abs(), p, c == 'G', false);
                    if v < 0.0 { format!("-{s}") } else { s }
                }
            };
            pad(pr, &s, true)
        }
    };
    format!("{body}{}", pr.text)
}

/// util-linux's rewrite(): byte counts, the fill-the-block rule for the
/// last unit, and which trailing whitespace the last repetition drops.
fn finish_formats(formats: &mut [Format]) -> usize {
    for f in formats.iter_mut() {
        for u in f.iter_mut() {
            if let Some(b) = u.bcnt {
                for pr in u
                    .prs
                    .iter_mut()
                    .filter(|p| matches!(p.conv, Conv::Int(_) | Conv::Float(_)))
                {
                    pr.bcnt = b;
                }
            }
        }
    }
    let block = formats
        .iter()
        .map(|f| f.iter().map(|u| u.reps * unit_bytes(u)).sum::<usize>())
        .max()
        .unwrap_or(0);
    for f in formats.iter_mut() {
        let total: usize = f.iter().map(|u| u.reps * unit_bytes(u)).sum();
        if let Some(last) = f.last_mut() {
            let bytes = unit_bytes(last);
            if !last.reps_set && bytes > 0 && total < block {
                last.reps += (block - total) / bytes;
            }
        }
        for u in f.iter_mut() {
            if u.reps > 1 {
                u.strip_last = true;
            }
        }
    }
    block
}

/// Text without its trailing blanks (for the last repetition).
fn without_trailing_space(s: &str) -> &str {
    s.trim_end_matches([' ', '\t'])
}

struct Dumper {
    formats: Vec<Format>,
    block: usize,
    squeeze: bool,
}

impl Dumper {
    fn run(&mut self, data: &[u8], skip: u64) -> Vec<u8> {
        let mut out = String::new();
        if self.block == 0 {
            return Vec::new();
        }
        let mut address = skip;
        let mut prev: Option<&[u8]> = None;
        let mut starred = false;
        let mut end_address = None;
        for block in data.chunks(self.block) {
            if self.squeeze && block.len() == self.block && prev == Some(block) {
                if !starred {
                    out.push_str("*\n");
                    starred = true;
                }
                address += self.block as u64;
                continue;
            }
            starred = false;
            prev = Some(block);
            let mut padded = block.to_vec();
            padded.resize(self.block, 0);
            let valid = block.len();
            if valid < self.block {
                end_address = Some(address + valid as u64);
            }
            for f in &mut self.formats {
                let mut offset = 0usize;
                for u in f.iter_mut() {
                    if u.prs.iter().any(|p| matches!(p.conv, Conv::EndAddress(_))) {
                        break;
                    }
                    for rep in 0..u.reps {
                        let n = u.prs.len();
                        for (k, pr) in u.prs.iter_mut().enumerate() {
                            if offset >= valid
                                && !matches!(pr.conv, Conv::Text | Conv::Address(_) | Conv::Blank)
                                && pr.bcnt > 0
                            {
                                pr.conv = Conv::Blank;
                                pr.flags.retain(|c| c == '-');
                                pr.precision = None;
                            }
                            let at = address + offset as u64;
                            let bytes = padded.get(offset..).unwrap_or_default();
                            if u.strip_last && rep + 1 == u.reps && k + 1 == n {
                                // The last repetition drops the trailing
                                // blanks of its format text.
                                let mut last = pr.clone();
                                last.text = without_trailing_space(&pr.text).to_string();
                                out.push_str(&render(&last, bytes, at));
                            } else {
                                out.push_str(&render(pr, bytes, at));
                            }
                            offset += pr.bcnt;
                        }
                    }
                }
            }
            address += valid as u64;
        }
        let total = end_address.unwrap_or(address);
        if total > 0 || !data.is_empty() {
            for f in &self.formats {
                for u in f {
                    for pr in &u.prs {
                        if let Conv::EndAddress(base) = pr.conv {
                            let conv = match base {
                                'd' => 'u',
                                'o' => 'o',
                                _ => 'x',
                            };
                            let body = pad(pr, &int_body(pr, conv, total, total as i64), true);
                            out.push_str(&body);
                            out.push_str(&pr.text);
                        }
                    }
                }
            }
        }
        out.into_bytes()
    }
}

/// The formats of the classic options.
fn preset(option: char) -> &'static [&'static str] {
    match option {
        'b' => &[r#""%07.7_Ax\n""#, r#""%07.7_ax " 16/1 "%03o " "\n""#],
        'c' => &[r#""%07.7_Ax\n""#, r#""%07.7_ax " 16/1 "%3_c " "\n""#],
        'C' => &[
            r#""%08.8_Ax\n""#,
            r#""%08.8_ax  " 8/1 "%02x " "  " 8/1 "%02x " "#,
            r#""  |" 16/1 "%_p" "|\n""#,
        ],
        'd' => &[r#""%07.7_Ax\n""#, r#""%07.7_ax " 8/2 "  %05u " "\n""#],
        'o' => &[r#""%07.7_Ax\n""#, r#""%07.7_ax " 8/2 " %06o " "\n""#],
        'x' => &[r#""%07.7_Ax\n""#, r#""%07.7_ax " 8/2 "   %04x " "\n""#],
        _ => &[r#""%07.7_Ax\n""#, r#""%07.7_ax " 8/2 "%04x " "\n""#],
    }
}

pub(crate) fn hd(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let mut args = vec![argv.first().cloned().unwrap_or_default(), "-C".to_string()];
    args.extend(argv.iter().skip(1).cloned());
    hexdump(p, &args)
}

pub(crate) fn hexdump(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let mut format_texts: Vec<String> = Vec::new();
    let mut length: Option<u64> = None;
    let mut skip: u64 = 0;
    let mut squeeze = true;
    let mut files = Vec::new();
    let mut i = 1;
    let usage = |p: &Process<'_>, msg: &str| {
        p.error(msg);
        p.io.err_line("Try 'hexdump --help' for more information.");
        1
    };
    while let Some(arg) = argv.get(i) {
        i += 1;
        if arg == "--" {
            files.extend(argv.get(i..).unwrap_or_default().iter().cloned());
            break;
        }
        if !arg.starts_with('-') || arg == "-" {
            files.push(arg.clone());
            continue;
        }
        let short: Vec<char> = if let Some(body) = arg.strip_prefix("--") {
            let (name, value) = body
                .split_once('=')
                .map_or((body, None), |(k, v)| (k, Some(v)));
            let Some(c) = long_option(name) else {
                return usage(p, &format!("unrecognized option '{arg}'"));
            };
            if let Some(v) = value {
                let r = handle_value(p, c, v, &mut format_texts, &mut length, &mut skip);
                if r != 0 {
                    return r;
                }
                continue;
            }
            vec![c]
        } else {
            arg.chars().skip(1).collect()
        };
        let mut j = 0;
        while let Some(&c) = short.get(j) {
            j += 1;
            match c {
                'b' | 'c' | 'C' | 'd' | 'o' | 'x' => {
                    format_texts.extend(preset(c).iter().map(ToString::to_string));
                }
                'v' => squeeze = false,
                'L' => {}
                'e' | 'f' | 'n' | 's' => {
                    let rest: String = short.get(j..).unwrap_or_default().iter().collect();
                    let value = if rest.is_empty() {
                        let Some(v) = argv.get(i) else {
                            return usage(p, &format!("option requires an argument -- '{c}'"));
                        };
                        i += 1;
                        v.clone()
                    } else {
                        rest
                    };
                    let r = handle_value(p, c, &value, &mut format_texts, &mut length, &mut skip);
                    if r != 0 {
                        return r;
                    }
                    break;
                }
                other => return usage(p, &format!("invalid option -- '{other}'")),
            }
        }
    }
    if format_texts.is_empty() {
        format_texts.extend(preset('h').iter().map(ToString::to_string));
    }
    let mut formats = Vec::new();
    for t in &format_texts {
        match parse_format(t) {
            Ok(f) => formats.push(f),
            Err(msg) => {
                p.error(&msg);
                return 1;
            }
        }
    }
    let block = finish_formats(&mut formats);
    let mut data = Vec::new();
    let mut status = 0;
    let mut failed = 0;
    let names = if files.is_empty() {
        vec!["-".to_string()]
    } else {
        files.clone()
    };
    let limit = length.map(|l| l.saturating_add(skip));
    for name in &names {
        match super::super::coreutils::read_input_limited(p, name, limit) {
            Ok(d) => data.extend(d),
            Err(e) => {
                p.error(&format!("{name}: {}", strerror(&e)));
                status = 1;
                failed += 1;
            }
        }
    }
    if failed == names.len() && !files.is_empty() {
        p.error("all input file arguments failed");
        return 1;
    }
    let start = usize::try_from(skip).unwrap_or(usize::MAX).min(data.len());
    let mut view = data.get(start..).unwrap_or_default();
    if let Some(l) = length {
        view = view
            .get(..usize::try_from(l).unwrap_or(usize::MAX).min(view.len()))
            .unwrap_or_default();
    }
    let mut dumper = Dumper {
        formats,
        block,
        squeeze,
    };
    let out = dumper.run(view, skip);
    super::super::coreutils::write_all(p, &out);
    status
}

/// The short letter of an unambiguous long option.
fn long_option(name: &str) -> Option<char> {
    const LONG: &[(&str, char)] = &[
        ("one-byte-octal", 'b'),
        ("one-byte-char", 'c'),
        ("canonical", 'C'),
        ("two-bytes-decimal", 'd'),
        ("two-bytes-octal", 'o'),
        ("two-bytes-hex", 'x'),
        ("format", 'e'),
        ("format-file", 'f'),
        ("length", 'n'),
        ("skip", 's'),
        ("no-squeezing", 'v'),
    ];
    if let Some((_, c)) = LONG.iter().find(|(n, _)| *n == name) {
        return Some(*c);
    }
    let matches: Vec<char> = LONG
        .iter()
        .filter(|(n, _)| !name.is_empty() && n.starts_with(name))
        .map(|(_, c)| *c)
        .collect();
    (matches.len() == 1).then(|| matches[0])
}

fn handle_value(
    p: &Process<'_>,
    c: char,
    value: &str,
    formats: &mut Vec<String>,
    length: &mut Option<u64>,
    skip: &mut u64,
) -> i32 {
    match c {
        'e' => formats.push(value.to_string()),
        'f' => match super::super::coreutils::read_input(p, value) {
            Ok(d) => {
                for line in String::from_utf8_lossy(&d).lines() {
                    if !line.trim().is_empty() && !line.trim_start().starts_with('#') {
                        formats.push(line.to_string());
                    }
                }
            }
            Err(e) => {
                p.error(&format!("{value}: {}", strerror(&e)));
                return 1;
            }
        },
        'n' | 's' => match crate::programs::size::parse_size(value, "bEGKkMmPTYZ0") {
            Ok(v) if c == 'n' => *length = Some(v),
            Ok(v) => *skip = v,
            Err(_) => {
                let what = if c == 'n' { "length" } else { "offset" };
                p.error(&format!("failed to parse {what}: '{value}'"));
                return 1;
            }
        },
        _ => {}
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dump(option: char, data: &[u8]) -> String {
        let mut formats: Vec<Format> = preset(option)
            .iter()
            .map(|t| parse_format(t).expect("preset parses"))
            .collect();
        let block = finish_formats(&mut formats);
        let mut d = Dumper {
            formats,
            block,
            squeeze: true,
        };
        String::from_utf8(d.run(data, 0)).expect("utf-8")
    }

    #[test]
    fn canonical_dump() {
        assert_eq!(
            dump('C', b"hi\n"),
            "00000000  68 69 0a                                          |hi.|\n00000003\n"
        );
        assert_eq!(
            dump('h', b"abc"),
            "0000000 6261 0063                              \n0000003\n"
        );
    }
}
