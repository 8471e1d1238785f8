//! `csplit [-f PREFIX] [-b FORMAT] [-n DIGITS] [-k] [-s] [-z]
//! [--suppress-matched] FILE PATTERN...`: cuts a file at line numbers and
//! at lines matching `/RE/[OFFSET]` (or skips to them with `%RE%`),
//! repeated with `{N}` or `{*}`, printing each piece's size. Ported from
//! GNU coreutils 9.1, including which pieces are removed on error.

use regex::bytes::Regex;

use super::Process;
use super::args::{HasArg, Spec};
use crate::errors::strerror;
use crate::programs::quoting::{quote_if_needed, single_quote};
use crate::programs::textproc::posix_regex::{Dialect, translate};

const SPEC: Spec<'static> = Spec {
    short: "f:b:kn:sqz",
    long: &[
        ("digits", 'n', HasArg::Yes),
        ("quiet", 'q', HasArg::No),
        ("silent", 's', HasArg::No),
        ("keep-files", 'k', HasArg::No),
        ("elide-empty-files", 'z', HasArg::No),
        ("prefix", 'f', HasArg::Yes),
        ("suffix-format", 'b', HasArg::Yes),
        ("suppress-matched", 'M', HasArg::No),
    ],
};

/// One pattern operand.
struct Control {
    /// The operand as written, for messages.
    text: String,
    regex: Option<Regex>,
    /// `%RE%`: skip the piece instead of writing it.
    ignore: bool,
    offset: i64,
    lines_required: u64,
    repeat: u64,
    forever: bool,
}

/// Why splitting stopped early: GNU's cleanup_fatal (1) or a `{*}` that
/// ran out of input (0).
enum Stop {
    Fatal,
    Done,
}

/// A `printf` conversion for the piece numbers (`-b '%03d.txt'`).
struct Suffix {
    before: String,
    after: String,
    left: bool,
    zero: bool,
    alt: bool,
    plus: bool,
    space: bool,
    width: usize,
    precision: Option<usize>,
    conv: char,
}

impl Suffix {
    fn digits(n: usize) -> Self {
        Self {
            before: String::new(),
            after: String::new(),
            left: false,
            zero: true,
            alt: false,
            plus: false,
            space: false,
            width: n,
            precision: None,
            conv: 'd',
        }
    }

    /// Parses a suffix format, or returns GNU's message.
    fn parse(format: &str) -> Result<Self, String> {
        let mut s = Self::digits(0);
        s.zero = false;
        let chars: Vec<char> = format.chars().collect();
        let mut i = 0;
        let mut seen = false;
        let mut out = String::new();
        while let Some(&c) = chars.get(i) {
            i += 1;
            if c != '%' {
                out.push(c);
                continue;
            }
            if chars.get(i) == Some(&'%') {
                i += 1;
                out.push('%');
                continue;
            }
            if seen {
                return Err("too many % conversion specifications in suffix".into());
            }
            seen = true;
            let mut thousands = false;
            while let Some(&f) = chars.get(i) {
                match f {
                    '-' => s.left = true,
                    '0' => s.zero = true,
                    '#' => s.alt = true,
                    '+' => s.plus = true,
                    ' ' => s.space = true,
                    '\'' => thousands = true,
                    _ => break,
                }
                i += 1;
            }
            let mut width = String::new();
            while let Some(d) = chars.get(i).filter(|c| c.is_ascii_digit()) {
                width.push(*d);
                i += 1;
            }
            s.width = width.parse().unwrap_or(0).min(super::MAX_FIELD_WIDTH);
            if chars.get(i) == Some(&'.') {
                i += 1;
                let mut prec = String::new();
                while let Some(d) = chars.get(i).filter(|c| c.is_ascii_digit()) {
                    prec.push(*d);
                    i += 1;
                }
                s.precision = Some(prec.parse().unwrap_or(0).min(super::MAX_FIELD_WIDTH));
            }
            let conv = chars.get(i).copied();
            i += 1;
            match conv {
                Some('d' | 'i' | 'u') => {
                    if s.alt {
                        return Err(format!(
                            "invalid flags in conversion specification: %#{}",
                            conv.unwrap_or('d')
                        ));
                    }
                }
                Some('o' | 'x' | 'X') => {
                    if thousands {
                        return Err(format!(
                            "invalid flags in conversion specification: %'{}",
                            conv.unwrap_or('x')
                        ));
                    }
                }
                None => return Err("missing conversion specifier in suffix".into()),
                Some(c) => {
                    return Err(format!("invalid conversion specifier in suffix: {c}"));
                }
            }
            s.conv = conv.unwrap_or('d');
            s.before = std::mem::take(&mut out);
        }
        if !seen {
            return Err("missing % conversion specification in suffix".into());
        }
        s.after = out;
        Ok(s)
    }

    fn format(&self, n: usize) -> String {
        let mut digits = match self.conv {
            'o' => format!("{n:o}"),
            'x' => format!("{n:x}"),
            'X' => format!("{n:X}"),
            _ => n.to_string(),
        };
        if let Some(p) = self.precision
            && digits.len() < p
        {
            digits = format!("{}{digits}", "0".repeat(p - digits.len()));
        }
        let prefix = match self.conv {
            'o' if self.alt && !digits.starts_with('0') => "0",
            'x' if self.alt && n != 0 => "0x",
            'X' if self.alt && n != 0 => "0X",
            'd' | 'i' if self.plus => "+",
            'd' | 'i' if self.space => " ",
            _ => "",
        };
        let body_len = prefix.len() + digits.len();
        let pad = self.width.saturating_sub(body_len);
        let body = if self.left {
            format!("{prefix}{digits}{}", " ".repeat(pad))
        } else if self.zero && self.precision.is_none() {
            format!("{prefix}{}{digits}", "0".repeat(pad))
        } else {
            format!("{}{prefix}{digits}", " ".repeat(pad))
        };
        format!("{}{body}{}", self.before, self.after)
    }
}

/// The splitting state: GNU's buffer of lines reduced to indices.
struct Splitter<'p, 'a, 'd> {
    p: &'p Process<'a>,
    lines: Vec<&'d [u8]>,
    /// Index of the first line not yet removed.
    next: usize,
    /// The last line looked at (1-based), GNU's current_line.
    current: i64,
    prefix: String,
    suffix: Suffix,
    created: usize,
    output: Option<(String, Vec<u8>)>,
    counts: Vec<u8>,
    quiet: bool,
    elide: bool,
    keep: bool,
    suppress_matched: bool,
}

impl Splitter<'_, '_, '_> {
    fn name(&self, n: usize) -> String {
        format!("{}{}", self.prefix, self.suffix.format(n))
    }

    fn remove_line(&mut self) -> Option<&[u8]> {
        let line = *self.lines.get(self.next)?;
        self.next += 1;
        let number = i64::try_from(self.next).unwrap_or(i64::MAX);
        if self.current < number {
            self.current = number;
        }
        Some(line)
    }

    fn find_line(&self, number: i64) -> Option<&[u8]> {
        let index = usize::try_from(number.checked_sub(1)?).ok()?;
        self.lines.get(index).copied()
    }

    fn first_available(&self) -> Result<i64, Stop> {
        if self.next >= self.lines.len() {
            self.p.error("input disappeared");
            return Err(Stop::Fatal);
        }
        Ok(i64::try_from(self.next + 1).unwrap_or(i64::MAX))
    }

    fn no_more_lines(&self) -> bool {
        self.find_line(self.current + 1).is_none()
    }

    fn create(&mut self) -> Result<(), Stop> {
        let name = self.name(self.created);
        if let Err(e) = std::fs::write(self.p.resolve(&name), b"") {
            self.p
                .error(&format!("{}: {}", quote_if_needed(&name), strerror(&e)));
            return Err(self.fatal());
        }
        self.created += 1;
        self.output = Some((name, Vec::new()));
        Ok(())
    }

    fn save(&mut self, line: &[u8]) {
        if let Some((_, buf)) = self.output.as_mut() {
            buf.extend_from_slice(line);
        }
    }

    fn close(&mut self) {
        let Some((name, data)) = self.output.take() else {
            return;
        };
        if data.is_empty() && self.elide {
            let _ = std::fs::remove_file(self.p.resolve(&name));
            self.created -= 1;
            return;
        }
        if let Err(e) = std::fs::write(self.p.resolve(&name), &data) {
            self.p.error(&format!(
                "write error for {}: {}",
                single_quote(&name),
                strerror(&e)
            ));
        }
        if !self.quiet {
            self.counts.extend(format!("{}\n", data.len()).bytes());
        }
    }

    /// GNU's cleanup_fatal: the open piece is closed (and counted), then
    /// every piece is removed unless `-k`.
    fn fatal(&mut self) -> Stop {
        self.close();
        if !self.keep {
            for i in (0..self.created).rev() {
                let _ = std::fs::remove_file(self.p.resolve(&self.name(i)));
            }
            self.created = 0;
        }
        Stop::Fatal
    }

    fn dump_rest(&mut self) {
        while let Some(line) = self.remove_line() {
            let line = line.to_vec();
            self.save(&line);
        }
    }

    fn line_error(&mut self, c: &Control, repetition: u64) -> Stop {
        let rep = if repetition > 0 {
            format!(" on repetition {repetition}")
        } else {
            String::new()
        };
        let shown = self.p.quote(&c.lines_required.to_string());
        self.p
            .error(&format!("{shown}: line number out of range{rep}"));
        self.fatal()
    }

    fn process_line_count(&mut self, c: &Control, repetition: u64) -> Result<(), Stop> {
        let last = c.lines_required.saturating_mul(repetition + 1);
        let last = i64::try_from(last).unwrap_or(i64::MAX);
        self.create()?;
        if self.no_more_lines() && self.suppress_matched {
            return Err(self.line_error(c, repetition));
        }
        let mut number = self.first_available()?;
        while number < last {
            number += 1;
            match self.remove_line() {
                Some(line) => {
                    let line = line.to_vec();
                    self.save(&line);
                }
                None => return Err(self.line_error(c, repetition)),
            }
        }
        self.close();
        if self.suppress_matched {
            self.remove_line();
        }
        if self.no_more_lines() && !self.suppress_matched {
            return Err(self.line_error(c, repetition));
        }
        Ok(())
    }

    fn regexp_error(&mut self, c: &Control, repetition: u64) -> Stop {
        let rep = if repetition > 0 {
            format!(" on repetition {repetition}")
        } else {
            String::new()
        };
        self.p
            .error(&format!("{}: match not found{rep}", self.p.quote(&c.text)));
        if !c.ignore {
            self.dump_rest();
            self.close();
        }
        self.fatal()
    }

    fn matches(c: &Control, line: &[u8]) -> bool {
        let body = line.strip_suffix(b"\n").unwrap_or(line);
        c.regex.as_ref().is_some_and(|re| re.is_match(body))
    }

    fn process_regexp(&mut self, c: &Control, repetition: u64) -> Result<(), Stop> {
        if !c.ignore {
            self.create()?;
        }
        loop {
            self.current += 1;
            let Some(line) = self.find_line(self.current) else {
                if c.forever {
                    if !c.ignore {
                        self.dump_rest();
                        self.close();
                    }
                    return Err(Stop::Done);
                }
                return Err(self.regexp_error(c, repetition));
            };
            if Self::matches(c, line) {
                break;
            }
            // Before a positive offset lines go out as they are read.
            if c.offset >= 0
                && let Some(line) = self.remove_line()
            {
                let line = line.to_vec();
                if !c.ignore {
                    self.save(&line);
                }
            }
        }
        let break_line = self.current + c.offset;
        self.write_to(break_line, c)?;
        if !c.ignore {
            self.close();
        }
        if c.offset > 0 {
            self.current = break_line;
        }
        if self.suppress_matched {
            self.remove_line();
        }
        Ok(())
    }

    /// Writes the lines before `last` (1-based) to the open piece.
    fn write_to(&mut self, last: i64, c: &Control) -> Result<(), Stop> {
        let first = self.first_available()?;
        if first > last {
            self.p.error(&format!(
                "{}: line number out of range",
                self.p.quote(&c.text)
            ));
            return Err(self.fatal());
        }
        for _ in 0..(last - first) {
            match self.remove_line() {
                Some(line) => {
                    let line = line.to_vec();
                    if !c.ignore {
                        self.save(&line);
                    }
                }
                None => {
                    self.p.error(&format!(
                        "{}: line number out of range",
                        self.p.quote(&c.text)
                    ));
                    return Err(self.fatal());
                }
            }
        }
        Ok(())
    }

    fn run(&mut self, controls: &[Control]) -> Result<(), Stop> {
        for c in controls {
            let mut j = 0;
            while c.forever || j <= c.repeat {
                if c.regex.is_some() {
                    self.process_regexp(c, j)?;
                } else {
                    self.process_line_count(c, j)?;
                }
                j += 1;
            }
        }
        self.create()?;
        self.dump_rest();
        self.close();
        Ok(())
    }
}

/// GNU's parse_patterns; `Err` is the message (exit 1).
fn parse_patterns(p: &Process<'_>, operands: &[String]) -> Result<Vec<Control>, String> {
    let mut controls: Vec<Control> = Vec::new();
    let mut last_val = 0u64;
    let mut i = 0;
    while let Some(arg) = operands.get(i) {
        let mut c = Control {
            text: arg.clone(),
            regex: None,
            ignore: false,
            offset: 0,
            lines_required: 0,
            repeat: 0,
            forever: false,
        };
        if let Some(delim) = arg.chars().next().filter(|&d| d == '/' || d == '%') {
            let body = arg.get(1..).unwrap_or_default();
            let Some(close) = body.rfind(delim) else {
                return Err(format!("{arg}: closing delimiter '{delim}' missing"));
            };
            let pattern = body.get(..close).unwrap_or_default();
            let translated = translate(pattern, Dialect::Basic)
                .map_err(|e| format!("{}: invalid regular expression: {e}", p.quote(arg)))?;
            let re = Regex::new(&translated).map_err(|_| {
                format!(
                    "{}: invalid regular expression: Invalid regular expression",
                    p.quote(arg)
                )
            })?;
            c.regex = Some(re);
            c.ignore = delim == '%';
            let offset = body.get(close + 1..).unwrap_or_default();
            if !offset.is_empty() {
                c.offset = offset
                    .trim_start()
                    .parse::<i64>()
                    .map_err(|_| format!("{}: integer expected after delimiter", p.quote(arg)))?;
            }
        } else {
            let val = crate::programs::size::parse_size(arg, "")
                .ok()
                .filter(|&v| i64::try_from(v).is_ok())
                .ok_or_else(|| format!("{}: invalid pattern", p.quote(arg)))?;
            if val == 0 {
                return Err(format!("{arg}: line number must be greater than zero"));
            }
            if val < last_val {
                return Err(format!(
                    "line number {} is smaller than preceding line number, {last_val}",
                    p.quote(arg)
                ));
            }
            if val == last_val {
                p.error(&format!(
                    "warning: line number {} is the same as preceding line number",
                    p.quote(arg)
                ));
            }
            last_val = val;
            c.lines_required = val;
        }
        if let Some(next) = operands.get(i + 1).filter(|n| n.starts_with('{')) {
            i += 1;
            let Some(inner) = next.strip_suffix('}') else {
                return Err(format!(
                    "{}: '}}' is required in repeat count",
                    p.quote(next)
                ));
            };
            let inner = inner.get(1..).unwrap_or_default();
            if inner == "*" {
                c.forever = true;
            } else {
                c.repeat = crate::programs::size::parse_size(inner, "")
                    .ok()
                    .filter(|&v| i64::try_from(v).is_ok())
                    .ok_or_else(|| {
                        format!(
                            "{}}}: integer required between '{{' and '}}'",
                            p.quote(next.trim_end_matches('}'))
                        )
                    })?;
            }
        }
        controls.push(c);
        i += 1;
    }
    Ok(controls)
}

pub(crate) fn csplit(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let args = match super::parse_args(p, &SPEC, argv, 1) {
        Ok(a) => a,
        Err(status) => return status,
    };
    if args.operands.len() < 2 {
        if args.operands.is_empty() {
            return super::usage(p, "missing operand", 1);
        }
        let last = argv.last().cloned().unwrap_or_default();
        return super::usage(p, &format!("missing operand after {}", p.quote(&last)), 1);
    }
    let digits = match args.value('n') {
        None => 2,
        Some(v) => match super::size_operand(p, v, "", (0, i32::MAX as u64), "invalid number") {
            Ok(n) => usize::try_from(n).unwrap_or(2).min(super::MAX_FIELD_WIDTH),
            Err(status) => return status,
        },
    };
    let suffix = match args.value('b') {
        None => Suffix::digits(digits),
        Some(f) => match Suffix::parse(f) {
            Ok(s) => s,
            Err(msg) => {
                p.error(&msg);
                return 1;
            }
        },
    };
    let file = &args.operands[0];
    let data = match super::read_input(p, file) {
        Ok(d) => d,
        Err(e) => {
            p.error(&format!(
                "cannot open {} for reading: {}",
                single_quote(file),
                strerror(&e)
            ));
            return 1;
        }
    };
    let controls = match parse_patterns(p, &args.operands[1..]) {
        Ok(c) => c,
        Err(msg) => {
            p.error(&msg);
            return 1;
        }
    };
    let mut s = Splitter {
        p,
        lines: data.split_inclusive(|&b| b == b'\n').collect(),
        next: 0,
        current: 0,
        prefix: args.value('f').unwrap_or("xx").to_string(),
        suffix,
        created: 0,
        output: None,
        counts: Vec::new(),
        quiet: args.has('s') || args.has('q'),
        elide: args.has('z'),
        keep: args.has('k'),
        suppress_matched: args.has('M'),
    };
    let status = match s.run(&controls) {
        Ok(()) | Err(Stop::Done) => 0,
        Err(Stop::Fatal) => 1,
    };
    let counts = std::mem::take(&mut s.counts);
    super::write_all(p, &counts);
    status
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suffix_formats() {
        assert_eq!(Suffix::digits(2).format(3), "03");
        assert_eq!(Suffix::parse("%03d.txt").expect("ok").format(7), "007.txt");
        assert_eq!(Suffix::parse("_%x").expect("ok").format(255), "_ff");
        assert!(Suffix::parse("%s").is_err());
        assert!(Suffix::parse("none").is_err());
    }
}
