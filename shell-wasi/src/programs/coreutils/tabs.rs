//! `expand [-i] [-t LIST]` and `unexpand [-a] [--first-only] [-t LIST]`:
//! tabs to spaces and back, over bytes as GNU 9.1 does, with its tab-stop
//! lists (`4,8,12`, `/N` and `+N` for the stops after the last one).

use super::Process;
use super::args::{HasArg, Parsed, Spec};

/// The tab stops: one size, or explicit columns with what follows them.
#[derive(Debug, Default)]
struct Stops {
    size: u64,
    list: Vec<u64>,
    extend: u64,
    increment: u64,
}

impl Stops {
    /// Parses one `-t` value into `self`; GNU's message on error.
    fn parse(&mut self, text: &str, quote: &dyn Fn(&str) -> String) -> Result<(), String> {
        let bytes = text.as_bytes();
        let mut value: Option<u64> = None;
        let (mut extend, mut increment) = (false, false);
        let mut i = 0;
        while i <= bytes.len() {
            let c = bytes.get(i).copied();
            match c {
                None | Some(b',' | b' ' | b'\t') => {
                    if let Some(v) = value.take() {
                        self.push(v, extend, increment)?;
                    }
                    if c.is_none() {
                        break;
                    }
                }
                Some(b'/' | b'+') => {
                    if value.is_some() {
                        let what = if c == Some(b'/') { '/' } else { '+' };
                        return Err(format!(
                            "'{what}' specifier not at start of number: {}",
                            quote(text.get(i..).unwrap_or_default())
                        ));
                    }
                    extend = c == Some(b'/');
                    increment = c == Some(b'+');
                }
                Some(d @ b'0'..=b'9') => {
                    let v = value.unwrap_or(0);
                    match v
                        .checked_mul(10)
                        .and_then(|v| v.checked_add(u64::from(d - b'0')))
                    {
                        Some(n) => value = Some(n),
                        None => {
                            let digits: String = text
                                .get(i..)
                                .unwrap_or_default()
                                .chars()
                                .take_while(char::is_ascii_digit)
                                .collect();
                            return Err(format!("tab stop is too large {}", quote(&digits)));
                        }
                    }
                }
                Some(_) => {
                    return Err(format!(
                        "tab size contains invalid character(s): {}",
                        quote(text.get(i..).unwrap_or_default())
                    ));
                }
            }
            i += 1;
        }
        Ok(())
    }

    fn push(&mut self, v: u64, extend: bool, increment: bool) -> Result<(), String> {
        if extend {
            if self.extend != 0 {
                return Err("'/' specifier only allowed with the last value".into());
            }
            self.extend = v;
        } else if increment {
            if self.increment != 0 {
                return Err("'+' specifier only allowed with the last value".into());
            }
            self.increment = v;
        } else {
            self.list.push(v);
        }
        Ok(())
    }

    /// GNU's finalize_tab_stops.
    fn finish(&mut self) -> Result<(), String> {
        let mut prev = 0;
        for &t in &self.list {
            if t == 0 {
                return Err("tab size cannot be 0".into());
            }
            if t <= prev {
                return Err("tab sizes must be ascending".into());
            }
            prev = t;
        }
        if self.increment != 0 && self.extend != 0 {
            return Err("'/' specifier is mutually exclusive with '+'".into());
        }
        if self.list.is_empty() {
            self.size = [self.extend, self.increment, 8]
                .into_iter()
                .find(|&v| v != 0)
                .unwrap_or(8);
        } else if self.list.len() == 1 && self.extend == 0 && self.increment == 0 {
            self.size = self.list[0];
        }
        Ok(())
    }

    /// The next tab column after `column`, or `None` past the last stop.
    fn next(&self, column: u64, index: &mut usize) -> Option<u64> {
        if self.size != 0 {
            return Some(column + (self.size - column % self.size));
        }
        while let Some(&t) = self.list.get(*index) {
            if column < t {
                return Some(t);
            }
            *index += 1;
        }
        if self.extend != 0 {
            return Some(column + (self.extend - column % self.extend));
        }
        if self.increment != 0 {
            let end = self.list.last().copied().unwrap_or(0);
            return Some(column + (self.increment - (column - end) % self.increment));
        }
        None
    }
}

/// `-4` and `-4,8` are old spellings of `-t 4` and `-t 4,8`.
fn digit_options(argv: &[String]) -> Vec<String> {
    let mut out = Vec::with_capacity(argv.len());
    let mut operands = false;
    for (i, a) in argv.iter().enumerate() {
        if i > 0 && !operands && a == "--" {
            operands = true;
        }
        let old = i > 0
            && !operands
            && a.len() > 1
            && a.starts_with('-')
            && a.as_bytes().get(1).is_some_and(u8::is_ascii_digit);
        if old {
            out.push(format!("--old-tabs={}", a.get(1..).unwrap_or_default()));
        } else {
            out.push(a.clone());
        }
    }
    out
}

fn stops(p: &Process<'_>, args: &Parsed) -> Result<Stops, i32> {
    let mut stops = Stops::default();
    let quote = |t: &str| p.quote(t);
    for opt in &args.opts {
        if matches!(opt.key, 't' | 'T') {
            let value = opt.value.as_deref().unwrap_or_default();
            if let Err(msg) = stops.parse(value, &quote) {
                p.error(&msg);
                return Err(1);
            }
        }
    }
    if let Err(msg) = stops.finish() {
        p.error(&msg);
        return Err(1);
    }
    Ok(stops)
}

/// Every operand's bytes, one after the other (stdin for none or `-`).
fn inputs(p: &Process<'_>, operands: &[String]) -> (Vec<u8>, i32) {
    let mut data = Vec::new();
    let mut status = 0;
    let names = if operands.is_empty() {
        vec!["-".to_string()]
    } else {
        operands.to_vec()
    };
    for name in &names {
        match super::read_input(p, name) {
            Ok(d) => data.extend(d),
            Err(e) => {
                super::file_error(p, name, &e);
                status = 1;
            }
        }
    }
    (data, status)
}

pub(crate) fn expand(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let spec = Spec {
        short: "it:",
        long: &[
            ("initial", 'i', HasArg::No),
            ("tabs", 't', HasArg::Yes),
            ("old-tabs", 'T', HasArg::Yes),
        ],
    };
    let args = match super::parse_args(p, &spec, &digit_options(argv), 1) {
        Ok(a) => a,
        Err(status) => return status,
    };
    let stops = match stops(p, &args) {
        Ok(s) => s,
        Err(status) => return status,
    };
    let all = !args.has('i');
    let (data, status) = inputs(p, &args.operands);
    let mut out = Vec::with_capacity(data.len());
    for line in data.split_inclusive(|&b| b == b'\n') {
        let (mut column, mut index, mut convert) = (0u64, 0usize, true);
        for &c in line {
            if convert {
                match c {
                    b'\t' => {
                        let next = stops.next(column, &mut index).unwrap_or(column + 1);
                        while column + 1 < next {
                            out.push(b' ');
                            column += 1;
                        }
                        column += 1;
                        out.push(b' ');
                        continue;
                    }
                    8 => {
                        column = column.saturating_sub(1);
                        index = index.saturating_sub(1);
                    }
                    _ => column += 1,
                }
                convert &= all || c == b' ';
            }
            out.push(c);
        }
    }
    super::write_all(p, &out);
    status
}

pub(crate) fn unexpand(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let spec = Spec {
        short: "at:",
        long: &[
            ("all", 'a', HasArg::No),
            ("first-only", 'F', HasArg::No),
            ("tabs", 't', HasArg::Yes),
            ("old-tabs", 'T', HasArg::Yes),
        ],
    };
    let args = match super::parse_args(p, &spec, &digit_options(argv), 1) {
        Ok(a) => a,
        Err(status) => return status,
    };
    let stops = match stops(p, &args) {
        Ok(s) => s,
        Err(status) => return status,
    };
    let all = (args.has('a') || args.has('t')) && !args.has('F');
    let (data, status) = inputs(p, &args.operands);
    let mut out = Vec::with_capacity(data.len());
    for line in data.split_inclusive(|&b| b == b'\n') {
        unexpand_line(line, &stops, all, &mut out);
    }
    super::write_all(p, &out);
    status
}

/// GNU's unexpand loop for one line (with its newline, if any).
fn unexpand_line(line: &[u8], stops: &Stops, all: bool, out: &mut Vec<u8>) {
    let mut convert = true;
    let (mut column, mut index) = (0u64, 0usize);
    let mut one_blank_before_stop = false;
    let mut prev_blank = true;
    let mut pending: Vec<u8> = Vec::new();
    for &byte in line {
        let mut c = byte;
        if convert {
            let blank = c == b' ' || c == b'\t';
            if blank {
                match stops.next(column, &mut index) {
                    None => convert = false,
                    Some(next) => {
                        if c == b'\t' {
                            column = next;
                            if let Some(first) = pending.first_mut() {
                                *first = b'\t';
                            }
                        } else {
                            column += 1;
                            if !(prev_blank && column == next) {
                                if column == next {
                                    one_blank_before_stop = true;
                                }
                                pending.push(c);
                                prev_blank = true;
                                continue;
                            }
                            c = b'\t';
                            if let Some(first) = pending.first_mut() {
                                *first = b'\t';
                            }
                        }
                        // Pending blanks are dropped, unless it was a
                        // single blank just before the previous stop.
                        pending.truncate(usize::from(one_blank_before_stop));
                    }
                }
            } else if c == 8 {
                column = column.saturating_sub(1);
                index = index.saturating_sub(1);
            } else {
                column += 1;
            }
            if !pending.is_empty() {
                if pending.len() > 1 && one_blank_before_stop {
                    pending[0] = b'\t';
                }
                out.extend_from_slice(&pending);
                pending.clear();
                one_blank_before_stop = false;
            }
            prev_blank = blank;
            convert &= all || blank;
        }
        out.push(c);
    }
    // End of input without a newline flushes the pending blanks too.
    if pending.len() > 1 && one_blank_before_stop {
        pending[0] = b'\t';
    }
    out.extend_from_slice(&pending);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stops(text: &str) -> Stops {
        let mut s = Stops::default();
        s.parse(text, &|t| t.to_string()).expect("parse");
        s.finish().expect("finish");
        s
    }

    #[test]
    fn stop_lists() {
        let s = stops("4,10");
        let mut i = 0;
        assert_eq!(s.next(0, &mut i), Some(4));
        assert_eq!(s.next(5, &mut i), Some(10));
        assert_eq!(s.next(11, &mut i), None);
        let s = stops("2,+3");
        let mut i = 0;
        assert_eq!(s.next(2, &mut i), Some(5));
    }

    #[test]
    fn unexpand_leading_blanks() {
        let mut out = Vec::new();
        unexpand_line(b"        x  y\n", &stops("8"), false, &mut out);
        assert_eq!(out, b"\tx  y\n");
    }
}
