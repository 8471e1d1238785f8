//! `sort` (`-n -g -h -V -f -r -u -s -b -k -t -o -c -z`) and `uniq`
//! (`-c -d -u -i -f -s -w`). Collation is bytewise: the sandbox's locale is
//! C.UTF-8, where code point order is byte order.

use std::cmp::Ordering;

use super::Process;
use super::args::{HasArg, Spec};
use crate::errors::strerror;

/// How one key compares.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Order {
    numeric: bool,
    general: bool,
    human: bool,
    version: bool,
    month: bool,
    fold: bool,
    reverse: bool,
    skip_start_blanks: bool,
    skip_end_blanks: bool,
    dictionary: bool,
    ignore_nonprinting: bool,
}

impl Order {
    fn is_default(&self) -> bool {
        *self == Self::default()
    }

    fn apply(&mut self, letter: char) -> bool {
        match letter {
            'n' => self.numeric = true,
            'g' => self.general = true,
            'h' => self.human = true,
            'V' => self.version = true,
            'f' => self.fold = true,
            'r' => self.reverse = true,
            'd' => self.dictionary = true,
            'i' => self.ignore_nonprinting = true,
            'b' => {
                self.skip_start_blanks = true;
                self.skip_end_blanks = true;
            }
            'M' => self.month = true,
            'R' => {}
            _ => return false,
        }
        true
    }
}

/// `-k SF[.SC][OPTS][,EF[.EC][OPTS]]`, zero-based words and characters.
#[derive(Debug, Clone, Copy)]
struct Key {
    start_field: usize,
    start_char: usize,
    /// Fields to skip for the end (`None`: end of line).
    end_field: Option<usize>,
    end_char: usize,
    order: Order,
}

const SORT_SPEC: Spec<'static> = Spec {
    short: "nghVfrubdisMRzck:t:o:S:T:C",
    long: &[
        ("numeric-sort", 'n', HasArg::No),
        ("general-numeric-sort", 'g', HasArg::No),
        ("human-numeric-sort", 'h', HasArg::No),
        ("version-sort", 'V', HasArg::No),
        ("ignore-case", 'f', HasArg::No),
        ("reverse", 'r', HasArg::No),
        ("unique", 'u', HasArg::No),
        ("ignore-leading-blanks", 'b', HasArg::No),
        ("dictionary-order", 'd', HasArg::No),
        ("ignore-nonprinting", 'i', HasArg::No),
        ("stable", 's', HasArg::No),
        ("month-sort", 'M', HasArg::No),
        ("random-sort", 'R', HasArg::No),
        ("zero-terminated", 'z', HasArg::No),
        ("check", 'c', HasArg::Optional),
        ("key", 'k', HasArg::Yes),
        ("field-separator", 't', HasArg::Yes),
        ("output", 'o', HasArg::Yes),
        ("buffer-size", 'S', HasArg::Yes),
        ("temporary-directory", 'T', HasArg::Yes),
        ("parallel", 'P', HasArg::Yes),
    ],
};

/// Everything a comparison needs.
struct Sorter {
    keys: Vec<Key>,
    global: Order,
    tab: Option<u8>,
    stable: bool,
    unique: bool,
}

pub(crate) fn sort(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let args = match super::parse_args(p, &SORT_SPEC, argv, 2) {
        Ok(a) => a,
        Err(status) => return status,
    };
    let mut global = Order::default();
    let mut keys = Vec::new();
    let mut tab = None;
    for opt in &args.opts {
        let value = opt.value.as_deref().unwrap_or("");
        match opt.key {
            'k' => match parse_key(value) {
                Ok(k) => keys.push(k),
                Err(KeyError::Zero) => {
                    p.error(&format!(
                        "field number is zero: invalid field specification {}",
                        p.quote(value)
                    ));
                    return 2;
                }
                Err(KeyError::BadNumber) => {
                    p.error(&format!(
                        "invalid number at field start: invalid count at start of {}",
                        p.quote(value)
                    ));
                    return 2;
                }
                Err(KeyError::BadOption) => {
                    p.error(&format!(
                        "stray character in field spec: invalid field specification {}",
                        p.quote(value)
                    ));
                    return 2;
                }
            },
            't' => {
                let bytes = value.as_bytes();
                match bytes {
                    [b] => tab = Some(*b),
                    [] => {
                        p.error("empty tab");
                        return 2;
                    }
                    _ if value == "\\0" => tab = Some(0),
                    _ => {
                        p.error(&format!("multi-character tab {}", p.quote(value)));
                        return 2;
                    }
                }
            }
            c => {
                global.apply(c);
            }
        }
    }
    if !global.is_default() || keys.is_empty() {
        // Keys without their own ordering options take the global ones.
        for key in &mut keys {
            if key.order.is_default() {
                key.order = global;
            }
        }
    }
    if keys.is_empty() && !global.is_default() {
        keys.push(Key {
            start_field: 0,
            start_char: 0,
            end_field: None,
            end_char: 0,
            order: global,
        });
    }
    let sorter = Sorter {
        keys,
        global,
        tab,
        stable: args.has('s'),
        unique: args.has('u'),
    };
    let sep = if args.has('z') { 0 } else { b'\n' };
    let mut names = args.operands.clone();
    if names.is_empty() {
        names.push("-".to_string());
    }
    let mut data = Vec::new();
    for name in &names {
        match super::read_input(p, name) {
            Ok(mut d) => {
                if !d.is_empty() && d.last() != Some(&sep) {
                    d.push(sep);
                }
                data.extend_from_slice(&d);
            }
            Err(e) => {
                let shown = if e.kind() == std::io::ErrorKind::IsADirectory {
                    format!("read failed: {name}")
                } else {
                    format!("cannot read: {name}")
                };
                p.error(&format!("{shown}: {}", strerror(&e)));
                return 2;
            }
        }
    }
    let mut lines = super::split_lines(&data, sep);
    if args.has('c') || args.has('C') {
        return check(
            p,
            &sorter,
            &lines,
            names.first().map_or("-", String::as_str),
            args.has('C'),
        );
    }
    lines.sort_by(|a, b| sorter.compare(a, b));
    if sorter.unique {
        lines.dedup_by(|b, a| sorter.compare_keys(a, b) == Ordering::Equal);
    }
    let mut out = Vec::with_capacity(data.len());
    for line in lines {
        out.extend_from_slice(line);
        out.push(sep);
    }
    if let Some(target) = args.value('o') {
        return match std::fs::write(p.resolve(target), &out) {
            Ok(()) => 0,
            Err(e) => {
                p.error(&format!("open failed: {target}: {}", strerror(&e)));
                2
            }
        };
    }
    super::write_all(p, &out);
    0
}

/// `sort -c`: the first line out of order.
fn check(p: &Process<'_>, sorter: &Sorter, lines: &[&[u8]], name: &str, quiet: bool) -> i32 {
    for (i, pair) in lines.windows(2).enumerate() {
        let (Some(a), Some(b)) = (pair.first(), pair.get(1)) else {
            continue;
        };
        let ord = sorter.compare(a, b);
        if ord == Ordering::Greater || (sorter.unique && ord == Ordering::Equal) {
            if !quiet {
                p.out(b"");
                p.io.err_line(&format!(
                    "sort: {name}:{}: disorder: {}",
                    i + 2,
                    String::from_utf8_lossy(b)
                ));
            }
            return 1;
        }
    }
    0
}

/// Why a `-k` spec was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum KeyError {
    Zero,
    BadNumber,
    BadOption,
}

fn parse_key(spec: &str) -> Result<Key, KeyError> {
    let (start, end) = match spec.split_once(',') {
        Some((s, e)) => (s, Some(e)),
        None => (spec, None),
    };
    let mut order = Order::default();
    let mut start_blanks = false;
    let (sf, sc, opts) = parse_pos(start)?;
    for c in opts.chars() {
        if c == 'b' {
            start_blanks = true;
        } else if !order.apply(c) {
            return Err(KeyError::BadOption);
        }
    }
    if sf == 0 {
        return Err(KeyError::Zero);
    }
    let mut key = Key {
        start_field: sf - 1,
        start_char: sc.map_or(0, |c| c.saturating_sub(1)),
        end_field: None,
        end_char: 0,
        order,
    };
    let mut end_blanks = false;
    if let Some(end) = end {
        let (ef, ec, opts) = parse_pos(end)?;
        if ef == 0 {
            return Err(KeyError::Zero);
        }
        for c in opts.chars() {
            if c == 'b' {
                end_blanks = true;
            } else if !key.order.apply(c) {
                return Err(KeyError::BadOption);
            }
        }
        key.end_field = Some(ef - 1);
        key.end_char = ec.unwrap_or(0);
    }
    key.order.skip_start_blanks |= start_blanks;
    key.order.skip_end_blanks |= end_blanks;
    Ok(key)
}

/// `F[.C]OPTS`.
fn parse_pos(text: &str) -> Result<(usize, Option<usize>, &str), KeyError> {
    let digits = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let field: usize = text
        .get(..digits)
        .and_then(|d| d.parse().ok())
        .ok_or(KeyError::BadNumber)?;
    let rest = text.get(digits..).unwrap_or("");
    if let Some(rest) = rest.strip_prefix('.') {
        let d = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        let ch: usize = rest
            .get(..d)
            .and_then(|d| d.parse().ok())
            .ok_or(KeyError::BadNumber)?;
        return Ok((field, Some(ch), rest.get(d..).unwrap_or("")));
    }
    Ok((field, None, rest))
}

fn is_blank(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

impl Sorter {
    fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        if !self.keys.is_empty() {
            let ord = self.compare_keys(a, b);
            if ord != Ordering::Equal || self.unique || self.stable {
                return ord;
            }
        }
        let ord = a.cmp(b);
        if self.global.reverse {
            ord.reverse()
        } else {
            ord
        }
    }

    fn compare_keys(&self, a: &[u8], b: &[u8]) -> Ordering {
        if self.keys.is_empty() {
            return a.cmp(b);
        }
        for key in &self.keys {
            let ka = self.extract(a, key);
            let kb = self.extract(b, key);
            let ord = compare_key(ka, kb, key.order);
            let ord = if key.order.reverse {
                ord.reverse()
            } else {
                ord
            };
            if ord != Ordering::Equal {
                return ord;
            }
        }
        Ordering::Equal
    }

    /// GNU's begfield/limfield.
    fn extract<'l>(&self, line: &'l [u8], key: &Key) -> &'l [u8] {
        let lim = line.len();
        let at = |i: usize| line.get(i).copied().unwrap_or(0);
        let mut ptr = 0;
        let mut words = key.start_field;
        while ptr < lim && words > 0 {
            words -= 1;
            ptr = self.skip_field(line, ptr);
            if let Some(tab) = self.tab
                && ptr < lim
                && at(ptr) == tab
            {
                ptr += 1;
            }
        }
        if key.order.skip_start_blanks {
            while ptr < lim && is_blank(at(ptr)) {
                ptr += 1;
            }
        }
        let start = (ptr + key.start_char).min(lim);
        let end = match key.end_field {
            None => lim,
            Some(ef) => {
                let mut eword = if key.end_char == 0 { ef + 1 } else { ef };
                let mut ptr = 0;
                while ptr < lim && eword > 0 {
                    eword -= 1;
                    ptr = self.skip_field(line, ptr);
                    if let Some(tab) = self.tab
                        && ptr < lim
                        && at(ptr) == tab
                        && (eword > 0 || key.end_char != 0)
                    {
                        ptr += 1;
                    }
                }
                if key.end_char != 0 {
                    if key.order.skip_end_blanks {
                        while ptr < lim && is_blank(at(ptr)) {
                            ptr += 1;
                        }
                    }
                    ptr = (ptr + key.end_char).min(lim);
                }
                ptr
            }
        };
        line.get(start..end.max(start)).unwrap_or_default()
    }

    /// Moves past one field (not its trailing separator).
    fn skip_field(&self, line: &[u8], mut ptr: usize) -> usize {
        let lim = line.len();
        let at = |i: usize| line.get(i).copied().unwrap_or(0);
        match self.tab {
            Some(tab) => {
                while ptr < lim && at(ptr) != tab {
                    ptr += 1;
                }
            }
            None => {
                while ptr < lim && is_blank(at(ptr)) {
                    ptr += 1;
                }
                while ptr < lim && !is_blank(at(ptr)) {
                    ptr += 1;
                }
            }
        }
        ptr
    }
}

fn compare_key(a: &[u8], b: &[u8], order: Order) -> Ordering {
    if order.numeric {
        return numeric_cmp(a, b);
    }
    if order.human {
        return human_cmp(a, b);
    }
    if order.general {
        return general_cmp(a, b);
    }
    if order.version {
        return version_cmp(a, b);
    }
    if order.month {
        return month_of(a).cmp(&month_of(b));
    }
    if order.fold || order.dictionary || order.ignore_nonprinting {
        let keep = |c: &u8| {
            (!order.dictionary || c.is_ascii_alphanumeric() || is_blank(*c))
                && (!order.ignore_nonprinting || (0x20..0x7f).contains(c))
        };
        let map = |c: &u8| {
            if order.fold {
                c.to_ascii_uppercase()
            } else {
                *c
            }
        };
        return a
            .iter()
            .filter(|c| keep(c))
            .map(map)
            .cmp(b.iter().filter(|c| keep(c)).map(map));
    }
    a.cmp(b)
}

/// A decimal number's parts: sign, integer digits without leading zeros,
/// fraction digits without trailing zeros.
fn decimal(text: &[u8]) -> (bool, &[u8], &[u8]) {
    let mut i = 0;
    while text.get(i).copied().is_some_and(is_blank) {
        i += 1;
    }
    let neg = text.get(i) == Some(&b'-');
    if neg {
        i += 1;
    }
    let start = i;
    while text.get(i).is_some_and(u8::is_ascii_digit) {
        i += 1;
    }
    let mut int = text.get(start..i).unwrap_or_default();
    while let [b'0', rest @ ..] = int {
        int = rest;
    }
    let mut frac: &[u8] = &[];
    if text.get(i) == Some(&b'.') {
        let fs = i + 1;
        let mut j = fs;
        while text.get(j).is_some_and(u8::is_ascii_digit) {
            j += 1;
        }
        frac = text.get(fs..j).unwrap_or_default();
        while let [rest @ .., b'0'] = frac {
            frac = rest;
        }
    }
    let zero = int.is_empty() && frac.is_empty();
    (neg && !zero, int, frac)
}

fn numeric_cmp(a: &[u8], b: &[u8]) -> Ordering {
    let (na, ia, fa) = decimal(a);
    let (nb, ib, fb) = decimal(b);
    let magnitude = ia.len().cmp(&ib.len()).then(ia.cmp(ib)).then(fa.cmp(fb));
    match (na, nb) {
        (false, false) => magnitude,
        (true, true) => magnitude.reverse(),
        (true, false) => Ordering::Less,
        (false, true) => Ordering::Greater,
    }
}

/// `-M`: 0 for a non-month, else 1 (JAN) to 12 (DEC), leading blanks
/// skipped and case ignored.
fn month_of(key: &[u8]) -> u8 {
    const NAMES: [&[u8]; 12] = [
        b"JAN", b"FEB", b"MAR", b"APR", b"MAY", b"JUN", b"JUL", b"AUG", b"SEP", b"OCT", b"NOV",
        b"DEC",
    ];
    let start = key.iter().position(|c| !is_blank(*c)).unwrap_or(key.len());
    let word = key
        .get(start..start + 3)
        .unwrap_or_default()
        .to_ascii_uppercase();
    NAMES
        .iter()
        .position(|n| *n == word.as_slice())
        .map_or(0, |i| u8::try_from(i + 1).unwrap_or(0))
}

fn human_cmp(a: &[u8], b: &[u8]) -> Ordering {
    let suffix = |t: &[u8]| -> usize {
        let mut i = 0;
        while t.get(i).copied().is_some_and(is_blank) {
            i += 1;
        }
        if t.get(i) == Some(&b'-') {
            i += 1;
        }
        while t.get(i).is_some_and(|c| c.is_ascii_digit() || *c == b'.') {
            i += 1;
        }
        t.get(i)
            .and_then(|c| {
                b"KMGTPEZYRQ"
                    .iter()
                    .position(|s| s == c || (*c == b'k' && *s == b'K'))
            })
            .map_or(0, |p| p + 1)
    };
    let (na, _, _) = decimal(a);
    let (nb, _, _) = decimal(b);
    let by_suffix = suffix(a).cmp(&suffix(b));
    let by_suffix = match (na, nb) {
        (true, true) => by_suffix.reverse(),
        (true, false) => return Ordering::Less,
        (false, true) => return Ordering::Greater,
        _ => by_suffix,
    };
    by_suffix.then_with(|| numeric_cmp(a, b))
}

fn general_cmp(a: &[u8], b: &[u8]) -> Ordering {
    let parse = |t: &[u8]| -> Option<f64> {
        let s = String::from_utf8_lossy(t);
        let s = s.trim_start();
        let end = s
            .char_indices()
            .map(|(i, c)| i + c.len_utf8())
            .rfind(|&i| s.get(..i).is_some_and(|p| p.parse::<f64>().is_ok()))?;
        s.get(..end)?.parse().ok()
    };
    match (parse(a), parse(b)) {
        (None, None) => Ordering::Equal,
        (None, Some(_)) => Ordering::Less,
        (Some(_), None) => Ordering::Greater,
        (Some(x), Some(y)) => x.partial_cmp(&y).unwrap_or(Ordering::Equal),
    }
}

/// gnulib's filevercmp: suffixes aside, Debian version ordering.
pub(crate) fn version_cmp(a: &[u8], b: &[u8]) -> Ordering {
    if a == b {
        return Ordering::Equal;
    }
    match (a.is_empty(), b.is_empty()) {
        (true, _) => return Ordering::Less,
        (_, true) => return Ordering::Greater,
        _ => {}
    }
    for special in [&b"."[..], b".."] {
        match (a == special, b == special) {
            (true, _) => return Ordering::Less,
            (_, true) => return Ordering::Greater,
            _ => {}
        }
    }
    match (a.first() == Some(&b'.'), b.first() == Some(&b'.')) {
        (true, false) => return Ordering::Less,
        (false, true) => return Ordering::Greater,
        _ => {}
    }
    let (a2, b2) = if a.first() == Some(&b'.') {
        (
            a.get(1..).unwrap_or_default(),
            b.get(1..).unwrap_or_default(),
        )
    } else {
        (a, b)
    };
    let pa = a2.get(..suffix_start(a2)).unwrap_or(a2);
    let pb = b2.get(..suffix_start(b2)).unwrap_or(b2);
    let ord = if pa == pb {
        Ordering::Equal
    } else {
        verrevcmp(pa, pb)
    };
    ord.then_with(|| verrevcmp(a2, b2)).then_with(|| a.cmp(b))
}

/// gnulib's file_prefixlen: where a `(\.[A-Za-z~][A-Za-z0-9~]*)*$`
/// suffix starts.
fn suffix_start(s: &[u8]) -> usize {
    let n = s.len();
    let mut prefix = 0;
    let mut i = 0;
    while i < n {
        i += 1;
        prefix = i;
        while i + 1 < n
            && s.get(i) == Some(&b'.')
            && s.get(i + 1)
                .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'~')
        {
            i += 2;
            while s
                .get(i)
                .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'~')
            {
                i += 1;
            }
        }
    }
    prefix
}

fn verrevcmp(a: &[u8], b: &[u8]) -> Ordering {
    let order = |c: Option<u8>| -> i32 {
        match c {
            None => 0,
            Some(c) if c.is_ascii_digit() => 0,
            Some(c) if c.is_ascii_alphabetic() => i32::from(c),
            Some(b'~') => -1,
            Some(c) => i32::from(c) + 256,
        }
    };
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        let mut first_diff = 0;
        while (i < a.len() && !a.get(i).is_some_and(u8::is_ascii_digit))
            || (j < b.len() && !b.get(j).is_some_and(u8::is_ascii_digit))
        {
            let ac = order(a.get(i).copied().filter(|_| i < a.len()));
            let bc = order(b.get(j).copied().filter(|_| j < b.len()));
            if ac != bc {
                return ac.cmp(&bc);
            }
            i += 1;
            j += 1;
        }
        while a.get(i) == Some(&b'0') {
            i += 1;
        }
        while b.get(j) == Some(&b'0') {
            j += 1;
        }
        while a.get(i).is_some_and(u8::is_ascii_digit) && b.get(j).is_some_and(u8::is_ascii_digit) {
            if first_diff == 0 {
                first_diff =
                    i32::from(*a.get(i).unwrap_or(&0)) - i32::from(*b.get(j).unwrap_or(&0));
            }
            i += 1;
            j += 1;
        }
        if a.get(i).is_some_and(u8::is_ascii_digit) {
            return Ordering::Greater;
        }
        if b.get(j).is_some_and(u8::is_ascii_digit) {
            return Ordering::Less;
        }
        if first_diff != 0 {
            return first_diff.cmp(&0);
        }
    }
    Ordering::Equal
}

const UNIQ_SPEC: Spec<'static> = Spec {
    short: "cdDuif:s:w:z",
    long: &[
        ("count", 'c', HasArg::No),
        ("repeated", 'd', HasArg::No),
        ("all-repeated", 'D', HasArg::Optional),
        ("unique", 'u', HasArg::No),
        ("ignore-case", 'i', HasArg::No),
        ("skip-fields", 'f', HasArg::Yes),
        ("skip-chars", 's', HasArg::Yes),
        ("check-chars", 'w', HasArg::Yes),
        ("zero-terminated", 'z', HasArg::No),
    ],
};

pub(crate) fn uniq(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let args = match super::parse_args(p, &UNIQ_SPEC, argv, 1) {
        Ok(a) => a,
        Err(status) => return status,
    };
    let number = |key: char, what: &str| -> Result<usize, String> {
        match args.value(key) {
            None => Ok(0),
            Some(v) => v
                .parse::<usize>()
                .map_err(|_| format!("{}: invalid number of {what}", p.quote(v))),
        }
    };
    let (skip_fields, skip_chars) =
        match (number('f', "fields to skip"), number('s', "bytes to skip")) {
            (Ok(f), Ok(s)) => (f, s),
            (Err(m), _) | (_, Err(m)) => {
                p.error(&m);
                return 1;
            }
        };
    let check_chars = match args.value('w') {
        None => None,
        Some(v) => match v.parse::<usize>() {
            Ok(n) => Some(n),
            Err(_) => {
                p.error(&format!(
                    "{}: invalid number of bytes to compare",
                    p.quote(v)
                ));
                return 1;
            }
        },
    };
    if args.operands.len() > 2 {
        let extra = args.operands.get(2).cloned().unwrap_or_default();
        return super::usage(p, &format!("extra operand {}", p.quote(&extra)), 1);
    }
    let input = args
        .operands
        .first()
        .cloned()
        .unwrap_or_else(|| "-".to_string());
    let data = match super::read_input(p, &input) {
        Ok(d) => d,
        Err(e) => {
            super::file_error(p, &input, &e);
            return 1;
        }
    };
    let sep = if args.has('z') { 0 } else { b'\n' };
    let fold = args.has('i');
    let key = |line: &[u8]| -> Vec<u8> {
        let mut i = 0;
        for _ in 0..skip_fields {
            while line.get(i).copied().is_some_and(is_blank) {
                i += 1;
            }
            while line.get(i).is_some_and(|c| !is_blank(*c)) {
                i += 1;
            }
        }
        i = (i + skip_chars).min(line.len());
        let rest = line.get(i..).unwrap_or_default();
        let rest = match check_chars {
            Some(n) => rest.get(..n.min(rest.len())).unwrap_or(rest),
            None => rest,
        };
        if fold {
            rest.to_ascii_lowercase()
        } else {
            rest.to_vec()
        }
    };
    let (count, dups, uniques, all_dups) =
        (args.has('c'), args.has('d'), args.has('u'), args.has('D'));
    let mut out = Vec::new();
    let lines = super::split_lines(&data, sep);
    let mut i = 0;
    while let Some(first) = lines.get(i) {
        let k = key(first);
        let mut j = i + 1;
        while lines.get(j).is_some_and(|l| key(l) == k) {
            j += 1;
        }
        let n = j - i;
        if all_dups {
            if n > 1 {
                for line in lines.get(i..j).unwrap_or_default() {
                    out.extend_from_slice(line);
                    out.push(sep);
                }
            }
        } else if (!dups || n > 1) && (!uniques || n == 1) {
            if count {
                out.extend_from_slice(format!("{n:>7} ").as_bytes());
            }
            out.extend_from_slice(first);
            out.push(sep);
        }
        i = j;
    }
    if let Some(target) = args.operands.get(1) {
        if let Err(e) = std::fs::write(p.resolve(target), &out) {
            super::file_error(p, target, &e);
            return 1;
        }
        return 0;
    }
    super::write_all(p, &out);
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sorter(keys: &[&str], tab: Option<u8>) -> Sorter {
        Sorter {
            keys: keys.iter().filter_map(|k| parse_key(k).ok()).collect(),
            global: Order::default(),
            tab,
            stable: false,
            unique: false,
        }
    }

    #[test]
    fn numbers_compare_as_numbers() {
        assert_eq!(numeric_cmp(b"10", b"9"), Ordering::Greater);
        assert_eq!(numeric_cmp(b"-1", b"0"), Ordering::Less);
        assert_eq!(numeric_cmp(b"-0", b"0"), Ordering::Equal);
        assert_eq!(numeric_cmp(b"1.5", b"1.25"), Ordering::Greater);
        assert_eq!(human_cmp(b"2K", b"1M"), Ordering::Less);
        assert_eq!(version_cmp(b"a-1.10", b"a-1.9"), Ordering::Greater);
    }

    #[test]
    fn keys_are_gnu_fields() {
        let s = sorter(&["2,2"], Some(b','));
        let k = s.keys.first().copied().unwrap();
        assert_eq!(s.extract(b"a,b,c", &k), b"b");
        let s = sorter(&["2"], None);
        let k = s.keys.first().copied().unwrap();
        assert_eq!(s.extract(b"a  b c", &k), b"  b c");
    }
}
