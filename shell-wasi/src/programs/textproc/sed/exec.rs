//! Running a parsed sed program over lines: the cycle, addresses and
//! ranges, the pattern and hold spaces, and the append queue.

use std::collections::BTreeMap;

use regex::bytes::Regex;

use super::script::{Addr, Cmd, Command, Piece, Re, Subst};

/// One input line and whether it ended with a newline.
pub(super) struct Line {
    pub(super) text: Vec<u8>,
    pub(super) newline: bool,
}

/// What a run asks the driver to do afterwards.
#[derive(Default)]
pub(super) struct Outcome {
    /// `q`/`Q` with this exit status stopped the run.
    pub(super) quit: Option<i32>,
}

/// State that lives across files (hold space, `w` files, last regex).
pub(super) struct Runner<'p> {
    program: &'p [Command],
    quiet: bool,
    hold: Vec<u8>,
    last_re: Option<Regex>,
    /// Contents of `w` files, written when the run ends.
    pub(super) wfiles: BTreeMap<String, Vec<u8>>,
    /// Files `r` reads, by the driver (relative names resolved there).
    pub(super) read_file: &'p dyn Fn(&str) -> Option<Vec<u8>>,
    /// Per command: the end of an active range.
    ranges: Vec<Option<RangeEnd>>,
}

#[derive(Clone, Copy)]
enum RangeEnd {
    Line(u64),
    Open,
}

/// The part of the state that belongs to one stream of lines.
struct Stream<'l> {
    lines: &'l [Line],
    next: usize,
    line_no: u64,
    file_name: &'l str,
    missing_newline: bool,
}

impl Stream<'_> {
    fn is_last(&self) -> bool {
        self.next >= self.lines.len()
    }
}

impl<'p> Runner<'p> {
    pub(super) fn new(
        program: &'p [Command],
        quiet: bool,
        read_file: &'p dyn Fn(&str) -> Option<Vec<u8>>,
    ) -> Self {
        Self {
            program,
            quiet,
            hold: Vec::new(),
            last_re: None,
            wfiles: BTreeMap::new(),
            read_file,
            ranges: vec![None; program.len()],
        }
    }

    /// Runs the program over `lines`, appending the output to `out`.
    /// Line numbers start after `first_line_no`.
    pub(super) fn run(
        &mut self,
        lines: &[Line],
        file_name: &str,
        first_line_no: u64,
        out: &mut Vec<u8>,
    ) -> (Outcome, u64) {
        let mut s = Stream {
            lines,
            next: 0,
            line_no: first_line_no,
            file_name,
            missing_newline: false,
        };
        let mut outcome = Outcome::default();
        let mut pattern: Vec<u8> = Vec::new();
        let mut keep_pattern = false;
        'cycle: loop {
            if !keep_pattern {
                let Some(line) = read(&mut s) else {
                    break;
                };
                pattern = line;
            }
            keep_pattern = false;
            let mut appends: Vec<Vec<u8>> = Vec::new();
            let mut tflag = false;
            let mut pc = 0;
            let mut autoprint = !self.quiet;
            while let Some(command) = self.program.get(pc) {
                pc += 1;
                if !self.selected(pc - 1, command, &pattern, &s) {
                    if let Cmd::Block(end) = command.cmd {
                        pc = end + 1;
                    }
                    continue;
                }
                match &command.cmd {
                    Cmd::Block(_) | Cmd::EndBlock | Cmd::Label => {}
                    Cmd::Equals => out.extend_from_slice(format!("{}\n", s.line_no).as_bytes()),
                    Cmd::Append(text) => appends.push(text.clone()),
                    Cmd::Insert(text) => out.extend_from_slice(text),
                    Cmd::Change(text) => {
                        let mid_range = command.a2.is_some()
                            && !command.negate
                            && self.ranges.get(pc - 1).is_some_and(Option::is_some);
                        if !mid_range {
                            out.extend_from_slice(text);
                        }
                        autoprint = false;
                        break;
                    }
                    Cmd::Branch(target) => match target {
                        Some(t) => pc = *t,
                        None => break,
                    },
                    Cmd::BranchIf(target) | Cmd::BranchUnless(target) => {
                        let want = matches!(command.cmd, Cmd::BranchIf(_));
                        if tflag == want {
                            tflag = false;
                            match target {
                                Some(t) => pc = *t,
                                None => break,
                            }
                        }
                    }
                    Cmd::Delete => {
                        autoprint = false;
                        break;
                    }
                    Cmd::DeleteFirst => {
                        if let Some(i) = pattern.iter().position(|&b| b == b'\n') {
                            pattern.drain(..=i);
                            keep_pattern = true;
                        }
                        flush_appends(out, &appends);
                        continue 'cycle;
                    }
                    Cmd::Get => pattern = self.hold.clone(),
                    Cmd::GetAppend => {
                        pattern.push(b'\n');
                        pattern.extend_from_slice(&self.hold);
                    }
                    Cmd::Hold => self.hold = pattern.clone(),
                    Cmd::HoldAppend => {
                        self.hold.push(b'\n');
                        self.hold.extend_from_slice(&pattern);
                    }
                    Cmd::Exchange => std::mem::swap(&mut pattern, &mut self.hold),
                    Cmd::List => list(out, &pattern),
                    Cmd::Next => {
                        if s.is_last() {
                            // GNU prints the pattern space and stops.
                            outcome.quit = Some(0);
                            break;
                        }
                        if autoprint {
                            emit(out, &pattern, &s);
                        }
                        flush_appends(out, &appends);
                        appends.clear();
                        if let Some(line) = read(&mut s) {
                            pattern = line;
                        }
                    }
                    Cmd::NextAppend => {
                        if s.is_last() {
                            outcome.quit = Some(0);
                            break;
                        }
                        flush_appends(out, &appends);
                        appends.clear();
                        if let Some(line) = read(&mut s) {
                            pattern.push(b'\n');
                            pattern.extend_from_slice(&line);
                        }
                    }
                    Cmd::Print => emit_line(out, &pattern),
                    Cmd::PrintFirst => {
                        let first = pattern.split(|&b| b == b'\n').next().unwrap_or_default();
                        emit_line(out, first);
                    }
                    Cmd::Quit(code) => {
                        outcome.quit = Some(*code);
                        break;
                    }
                    Cmd::QuitSilent(code) => {
                        outcome.quit = Some(*code);
                        autoprint = false;
                        appends.clear();
                        break;
                    }
                    Cmd::ReadFile(name) => {
                        if let Some(data) = (self.read_file)(name) {
                            appends.push(data);
                        }
                    }
                    Cmd::Write(name) => {
                        let mut line = pattern.clone();
                        line.push(b'\n');
                        self.write_to(name, &line, out);
                    }
                    Cmd::Subst(sub) => {
                        if self.substitute(sub, &mut pattern) {
                            tflag = true;
                            for _ in 0..sub.print {
                                emit_line(out, &pattern);
                            }
                            if let Some(name) = &sub.write {
                                let mut line = pattern.clone();
                                line.push(b'\n');
                                self.write_to(name, &line, out);
                            }
                        }
                    }
                    Cmd::Translate(map) => {
                        let text = String::from_utf8_lossy(&pattern);
                        let mapped: String = text
                            .chars()
                            .map(|c| map.iter().find(|(a, _)| *a == c).map_or(c, |(_, b)| *b))
                            .collect();
                        pattern = mapped.into_bytes();
                    }
                    Cmd::Zap => pattern.clear(),
                    Cmd::FileName => {
                        out.extend_from_slice(s.file_name.as_bytes());
                        out.push(b'\n');
                    }
                }
            }
            if autoprint {
                emit(out, &pattern, &s);
            }
            flush_appends(out, &appends);
            if outcome.quit.is_some() {
                break;
            }
        }
        (outcome, s.line_no)
    }

    fn write_to(&mut self, name: &str, bytes: &[u8], out: &mut Vec<u8>) {
        if name == "/dev/stdout" {
            out.extend_from_slice(bytes);
        } else {
            self.wfiles
                .entry(name.to_string())
                .or_default()
                .extend_from_slice(bytes);
        }
    }

    fn resolve_re(&mut self, re: &Re) -> Option<Regex> {
        match re {
            Re::Compiled(r) => {
                self.last_re = Some(r.clone());
                Some(r.clone())
            }
            Re::Last => self.last_re.clone(),
        }
    }

    fn addr_matches(&mut self, addr: &Addr, pattern: &[u8], s: &Stream<'_>) -> bool {
        match addr {
            Addr::Line(n) => s.line_no == *n,
            Addr::Last => s.is_last(),
            Addr::Regex(re) => self.resolve_re(re).is_some_and(|r| r.is_match(pattern)),
            Addr::Step(first, step) => {
                if *step == 0 {
                    s.line_no == *first
                } else {
                    s.line_no >= *first && (s.line_no - first).is_multiple_of(*step)
                }
            }
            Addr::Zero => false,
            Addr::Plus(_) | Addr::Multiple(_) => false,
        }
    }

    /// Whether command `i` applies to this line, updating its range.
    fn selected(&mut self, i: usize, c: &Command, pattern: &[u8], s: &Stream<'_>) -> bool {
        let hit = match (&c.a1, &c.a2) {
            (None, _) => true,
            (Some(a1), None) => self.addr_matches(a1, pattern, s),
            (Some(a1), Some(a2)) => {
                let active = self.ranges.get(i).copied().flatten();
                match active {
                    Some(end) => {
                        let ends = match (end, a2) {
                            (RangeEnd::Line(n), _) => s.line_no >= n,
                            (RangeEnd::Open, Addr::Multiple(m)) => {
                                *m == 0 || s.line_no.is_multiple_of(*m)
                            }
                            (RangeEnd::Open, a2) => self.addr_matches(a2, pattern, s),
                        };
                        if ends && let Some(slot) = self.ranges.get_mut(i) {
                            *slot = None;
                        }
                        true
                    }
                    None => {
                        let zero = matches!(a1, Addr::Zero);
                        let starts = (zero && s.line_no == 1) || self.addr_matches(a1, pattern, s);
                        if !starts {
                            false
                        } else {
                            let end = match a2 {
                                Addr::Line(n) if *n > s.line_no => Some(RangeEnd::Line(*n)),
                                Addr::Line(_) => None,
                                Addr::Plus(n) if *n > 0 => Some(RangeEnd::Line(s.line_no + n)),
                                Addr::Plus(_) => None,
                                Addr::Multiple(m) => {
                                    if *m == 0 || s.line_no.is_multiple_of(*m) {
                                        None
                                    } else {
                                        Some(RangeEnd::Open)
                                    }
                                }
                                Addr::Regex(_) if zero => {
                                    if self.addr_matches(a2, pattern, s) {
                                        None
                                    } else {
                                        Some(RangeEnd::Open)
                                    }
                                }
                                Addr::Last if s.is_last() => None,
                                _ => Some(RangeEnd::Open),
                            };
                            if let Some(slot) = self.ranges.get_mut(i) {
                                *slot = end;
                            }
                            true
                        }
                    }
                }
            }
        };
        hit != c.negate
    }

    /// `s///`: true when a replacement was made.
    fn substitute(&mut self, sub: &Subst, pattern: &mut Vec<u8>) -> bool {
        let Some(re) = self.resolve_re(&sub.re) else {
            return false;
        };
        let mut out = Vec::with_capacity(pattern.len());
        let mut pos = 0;
        let mut start = 0;
        let mut count = 0usize;
        let mut did = false;
        let mut prev_end: Option<usize> = None;
        while start <= pattern.len() {
            let Some(caps) = re.captures_at(pattern, start) else {
                break;
            };
            let Some(m) = caps.get(0) else {
                break;
            };
            let empty = m.start() == m.end();
            if empty && prev_end == Some(m.start()) {
                // No empty match right after the previous match.
                start = next_char(pattern, m.start());
                if start > pattern.len() {
                    break;
                }
                continue;
            }
            count += 1;
            if count >= sub.nth {
                out.extend_from_slice(pattern.get(pos..m.start()).unwrap_or_default());
                expand(&mut out, &sub.replacement, &caps);
                pos = m.end();
                did = true;
                if !sub.global {
                    break;
                }
            }
            prev_end = Some(m.end());
            start = if empty {
                next_char(pattern, m.end())
            } else {
                m.end()
            };
        }
        if did {
            out.extend_from_slice(pattern.get(pos..).unwrap_or_default());
            *pattern = out;
        }
        did
    }
}

/// The index after the character at `i` (one past the end at the end).
fn next_char(text: &[u8], i: usize) -> usize {
    let mut j = i + 1;
    while text.get(j).is_some_and(|b| (b & 0xC0) == 0x80) {
        j += 1;
    }
    j
}

/// Writes a replacement with `&`, `\N` and GNU's case conversions.
fn expand(out: &mut Vec<u8>, pieces: &[Piece], caps: &regex::bytes::Captures<'_>) {
    // Case state: persistent (`\U`/`\L`) and one-shot (`\u`/`\l`).
    let mut mode: Option<char> = None;
    let mut once: Option<char> = None;
    let push = |out: &mut Vec<u8>, bytes: &[u8], mode: Option<char>, once: &mut Option<char>| {
        if mode.is_none() && once.is_none() {
            out.extend_from_slice(bytes);
            return;
        }
        let text = String::from_utf8_lossy(bytes);
        for c in text.chars() {
            let c2: String = match once.take() {
                Some('u') => c.to_uppercase().collect(),
                Some('l') => c.to_lowercase().collect(),
                _ => match mode {
                    Some('U') => c.to_uppercase().collect(),
                    Some('L') => c.to_lowercase().collect(),
                    _ => c.to_string(),
                },
            };
            out.extend_from_slice(c2.as_bytes());
        }
    };
    for piece in pieces {
        match piece {
            Piece::Text(t) => push(out, t, mode, &mut once),
            Piece::Whole => {
                let m = caps.get(0).map(|m| m.as_bytes()).unwrap_or_default();
                push(out, m, mode, &mut once);
            }
            Piece::Group(g) => {
                let m = caps.get(*g).map(|m| m.as_bytes()).unwrap_or_default();
                push(out, m, mode, &mut once);
            }
            Piece::Case(c) => match c {
                'U' | 'L' => {
                    mode = Some(*c);
                    once = None;
                }
                'E' => {
                    mode = None;
                    once = None;
                }
                _ => once = Some(*c),
            },
        }
    }
}

fn read(s: &mut Stream<'_>) -> Option<Vec<u8>> {
    let line = s.lines.get(s.next)?;
    s.next += 1;
    s.line_no += 1;
    s.missing_newline = !line.newline;
    Some(line.text.clone())
}

/// The pattern space at the end of a cycle: its newline only if the
/// input line had one.
fn emit(out: &mut Vec<u8>, pattern: &[u8], s: &Stream<'_>) {
    out.extend_from_slice(pattern);
    if !(s.missing_newline && s.is_last()) {
        out.push(b'\n');
    }
}

fn emit_line(out: &mut Vec<u8>, text: &[u8]) {
    out.extend_from_slice(text);
    out.push(b'\n');
}

fn flush_appends(out: &mut Vec<u8>, appends: &[Vec<u8>]) {
    for a in appends {
        out.extend_from_slice(a);
    }
}

/// `l`: the pattern space with C escapes, folded at 70 columns.
fn list(out: &mut Vec<u8>, pattern: &[u8]) {
    const WIDTH: usize = 70;
    let mut col = 0;
    for &b in pattern {
        let piece = match b {
            b'\\' => "\\\\".to_string(),
            0x07 => "\\a".to_string(),
            0x08 => "\\b".to_string(),
            0x0c => "\\f".to_string(),
            b'\n' => "\\n".to_string(),
            b'\r' => "\\r".to_string(),
            b'\t' => "\\t".to_string(),
            0x0b => "\\v".to_string(),
            0x20..=0x7e => (b as char).to_string(),
            _ => format!("\\{b:03o}"),
        };
        if col + piece.len() > WIDTH - 1 {
            out.extend_from_slice(b"\\\n");
            col = 0;
        }
        out.extend_from_slice(piece.as_bytes());
        col += piece.len();
    }
    out.extend_from_slice(b"$\n");
}
