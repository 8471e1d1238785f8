//! Parsing a sed script into a flat program: each command carries its
//! addresses, and `{`/`}` and branches are resolved to command indices.
//! Errors are worded as GNU sed 4.9 words them (`-e expression #1, char
//! N: ...`).

use regex::bytes::Regex;

use super::super::posix_regex::{self, Dialect};

/// A compiled regex, or `//` (the last regex used).
#[derive(Debug, Clone)]
pub(super) enum Re {
    Last,
    Compiled(Regex),
}

#[derive(Debug, Clone)]
pub(super) enum Addr {
    Line(u64),
    Last,
    Regex(Re),
    /// `first~step`.
    Step(u64, u64),
    /// `addr1,+N` (only as the second address).
    Plus(u64),
    /// `addr1,~N` (only as the second address).
    Multiple(u64),
    /// `0,/re/`: the first address of a range that may end on line 1.
    Zero,
}

/// One piece of a replacement.
#[derive(Debug, Clone)]
pub(super) enum Piece {
    Text(Vec<u8>),
    Whole,
    Group(usize),
    /// `\U`, `\L`, `\u`, `\l`, `\E`.
    Case(char),
}

#[derive(Debug, Clone)]
pub(super) struct Subst {
    pub(super) re: Re,
    pub(super) replacement: Vec<Piece>,
    pub(super) global: bool,
    pub(super) nth: usize,
    pub(super) print: usize,
    pub(super) write: Option<String>,
    pub(super) eval: bool,
}

#[derive(Debug, Clone)]
pub(super) enum Cmd {
    Block(usize),
    EndBlock,
    Equals,
    Append(Vec<u8>),
    Insert(Vec<u8>),
    Change(Vec<u8>),
    Branch(Option<usize>),
    BranchIf(Option<usize>),
    BranchUnless(Option<usize>),
    Label,
    Delete,
    DeleteFirst,
    Get,
    GetAppend,
    Hold,
    HoldAppend,
    List,
    Next,
    NextAppend,
    Print,
    PrintFirst,
    Quit(i32),
    QuitSilent(i32),
    ReadFile(String),
    Subst(Box<Subst>),
    Write(String),
    Exchange,
    Translate(Vec<(char, char)>),
    Zap,
    FileName,
}

#[derive(Debug, Clone)]
pub(super) struct Command {
    pub(super) a1: Option<Addr>,
    pub(super) a2: Option<Addr>,
    pub(super) negate: bool,
    pub(super) cmd: Cmd,
}

/// A script error with GNU's wording.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct ScriptError(pub(super) String);

struct Parser<'a> {
    chars: Vec<char>,
    pos: usize,
    extended: bool,
    expr_no: usize,
    labels: &'a mut Vec<(String, usize)>,
    jumps: &'a mut Vec<(usize, String)>,
    blocks: &'a mut Vec<usize>,
    program: &'a mut Vec<Command>,
}

/// Parses all `-e` pieces (joined by newlines as GNU does) into a program.
pub(super) fn parse(pieces: &[String], extended: bool) -> Result<Vec<Command>, ScriptError> {
    let mut program = Vec::new();
    let mut labels = Vec::new();
    let mut jumps = Vec::new();
    let mut blocks = Vec::new();
    for (n, piece) in pieces.iter().enumerate() {
        let mut parser = Parser {
            chars: piece.chars().collect(),
            pos: 0,
            extended,
            expr_no: n + 1,
            labels: &mut labels,
            jumps: &mut jumps,
            blocks: &mut blocks,
            program: &mut program,
        };
        parser.run()?;
    }
    if !blocks.is_empty() {
        return Err(ScriptError(
            "-e expression #1, char 0: unmatched `{'".to_string(),
        ));
    }
    for (at, label) in jumps {
        let Some(&(_, target)) = labels.iter().find(|(l, _)| *l == label) else {
            return Err(ScriptError(format!(
                "can't find label for jump to `{label}'"
            )));
        };
        if let Some(cmd) = program.get_mut(at) {
            match &mut cmd.cmd {
                Cmd::Branch(t) | Cmd::BranchIf(t) | Cmd::BranchUnless(t) => *t = Some(target),
                _ => {}
            }
        }
    }
    Ok(program)
}

impl Parser<'_> {
    fn err(&self, msg: &str) -> ScriptError {
        ScriptError(format!(
            "-e expression #{}, char {}: {msg}",
            self.expr_no, self.pos
        ))
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn next(&mut self) -> Option<char> {
        let c = self.peek();
        if c.is_some() {
            self.pos += 1;
        }
        c
    }

    fn skip_ws(&mut self) {
        while self.peek().is_some_and(|c| c == ' ' || c == '\t') {
            self.pos += 1;
        }
    }

    fn run(&mut self) -> Result<(), ScriptError> {
        loop {
            while self.peek().is_some_and(|c| c.is_whitespace() || c == ';') {
                self.pos += 1;
            }
            let Some(c) = self.peek() else {
                return Ok(());
            };
            if c == '#' {
                while self.peek().is_some_and(|c| c != '\n') {
                    self.pos += 1;
                }
                continue;
            }
            self.command()?;
        }
    }

    fn number(&mut self) -> u64 {
        let mut n: u64 = 0;
        while let Some(d) = self.peek().and_then(|c| c.to_digit(10)) {
            n = n.saturating_mul(10).saturating_add(u64::from(d));
            self.pos += 1;
        }
        n
    }

    fn address(&mut self) -> Result<Option<Addr>, ScriptError> {
        match self.peek() {
            Some(c) if c.is_ascii_digit() => {
                let n = self.number();
                if self.peek() == Some('~') {
                    self.pos += 1;
                    let step = self.number();
                    return Ok(Some(Addr::Step(n, step)));
                }
                Ok(Some(if n == 0 { Addr::Zero } else { Addr::Line(n) }))
            }
            Some('$') => {
                self.pos += 1;
                Ok(Some(Addr::Last))
            }
            Some('/') | Some('\\') => {
                let delim = if self.next() == Some('\\') {
                    self.next()
                        .ok_or_else(|| self.err("unterminated address regex"))?
                } else {
                    '/'
                };
                let body = self
                    .delimited(delim)
                    .ok_or_else(|| self.err("unterminated address regex"))?;
                let mut icase = false;
                while let Some(f) = self.peek() {
                    match f {
                        'I' => icase = true,
                        'M' => {}
                        _ => break,
                    }
                    self.pos += 1;
                }
                Ok(Some(Addr::Regex(self.regex(&body, icase)?)))
            }
            _ => Ok(None),
        }
    }

    /// Text up to an unescaped `delim`; `\delim` becomes `delim` (or stays
    /// escaped when the delimiter is special in regexes), `\n` a newline,
    /// `\t` a tab (also `\r`, `\f`, `\v`, `\a`).
    fn delimited(&mut self, delim: char) -> Option<String> {
        let mut out = String::new();
        let mut in_bracket = false;
        loop {
            let c = self.next()?;
            if c == '\\' {
                let n = self.next()?;
                if n == delim && delim != '\n' {
                    let special =
                        "$*.[]^".contains(delim) || (self.extended && "|+?(){}".contains(delim));
                    if special {
                        out.push('\\');
                    }
                    out.push(delim);
                } else if n == 'n' && !in_bracket {
                    out.push('\n');
                } else if let Some(ctl) = match n {
                    't' => Some('\t'),
                    'r' => Some('\r'),
                    'f' => Some('\x0c'),
                    'v' => Some('\x0b'),
                    'a' => Some('\x07'),
                    _ => None,
                } {
                    // GNU's escapes for control characters in regexes.
                    out.push(ctl);
                } else {
                    out.push('\\');
                    out.push(n);
                }
                continue;
            }
            if c == delim && !in_bracket {
                return Some(out);
            }
            if c == '[' && !in_bracket {
                in_bracket = true;
                out.push(c);
                if self.peek() == Some('^') {
                    out.push('^');
                    self.pos += 1;
                }
                if self.peek() == Some(']') {
                    out.push(']');
                    self.pos += 1;
                }
                continue;
            }
            if c == ']' && in_bracket {
                in_bracket = false;
            }
            out.push(c);
        }
    }

    fn regex(&self, body: &str, icase: bool) -> Result<Re, ScriptError> {
        if body.is_empty() {
            return Ok(Re::Last);
        }
        let dialect = if self.extended {
            Dialect::Extended
        } else {
            Dialect::Basic
        };
        let translated =
            posix_regex::translate(body, dialect).map_err(|e| self.err(&e.to_string()))?;
        let flags = if icase { "(?si)" } else { "(?s)" };
        regex::bytes::RegexBuilder::new(&format!("{flags}{translated}"))
            .size_limit(64 << 20)
            .build()
            .map(Re::Compiled)
            .map_err(|e| self.err(&e.to_string()))
    }

    /// The rest of the line (for labels and file names).
    fn rest_of_line(&mut self, stop_at_semicolon: bool) -> String {
        self.skip_ws();
        let mut out = String::new();
        while let Some(c) = self.peek() {
            if c == '\n' || (stop_at_semicolon && (c == ';' || c == '}')) {
                break;
            }
            out.push(c);
            self.pos += 1;
        }
        if stop_at_semicolon {
            out.truncate(out.trim_end().len());
        }
        out
    }

    /// `a`, `i`, `c` text: `a\` newline text, or GNU's one-line `a text`.
    fn text_arg(&mut self) -> Vec<u8> {
        self.skip_ws();
        if self.peek() == Some('\\') {
            self.pos += 1;
            if self.peek() == Some('\n') {
                self.pos += 1;
            } else {
                self.skip_ws();
            }
        }
        let mut out = String::new();
        while let Some(c) = self.next() {
            if c == '\\' {
                match self.next() {
                    Some('\n') => out.push('\n'),
                    Some('t') => out.push('\t'),
                    Some(n) => out.push(n),
                    None => break,
                }
                continue;
            }
            if c == '\n' {
                break;
            }
            out.push(c);
        }
        out.push('\n');
        out.into_bytes()
    }

    fn end_of_command(&mut self) -> Result<(), ScriptError> {
        self.skip_ws();
        match self.peek() {
            None | Some('\n') | Some(';') => {
                if self.peek().is_some() {
                    self.pos += 1;
                }
                Ok(())
            }
            Some('}') | Some('#') => Ok(()),
            Some(_) => {
                self.pos += 1;
                Err(self.err("extra characters after command"))
            }
        }
    }

    fn command(&mut self) -> Result<(), ScriptError> {
        let a1 = self.address()?;
        let mut a2 = None;
        if a1.is_some() {
            self.skip_ws();
        }
        if self.peek() == Some(',') {
            self.pos += 1;
            self.skip_ws();
            a2 = match self.peek() {
                Some('+') => {
                    self.pos += 1;
                    Some(Addr::Plus(self.number()))
                }
                Some('~') => {
                    self.pos += 1;
                    Some(Addr::Multiple(self.number()))
                }
                _ => self.address()?,
            };
            if a2.is_none() || a1.is_none() {
                return Err(self.err("unexpected `,'"));
            }
        }
        if matches!(a2, Some(Addr::Zero))
            || (matches!(a1, Some(Addr::Zero)) && !matches!(a2, Some(Addr::Regex(_))))
        {
            return Err(self.err("invalid usage of line address 0"));
        }
        self.skip_ws();
        let mut negate = false;
        while self.peek() == Some('!') {
            negate = true;
            self.pos += 1;
            self.skip_ws();
        }
        let Some(c) = self.next() else {
            return Err(self.err("missing command"));
        };
        let index = self.program.len();
        let cmd = match c {
            '{' => {
                self.blocks.push(index);
                Cmd::Block(0)
            }
            '}' => {
                let Some(open) = self.blocks.pop() else {
                    return Err(self.err("unexpected `}'"));
                };
                if let Some(Command {
                    cmd: Cmd::Block(end),
                    ..
                }) = self.program.get_mut(open)
                {
                    *end = index;
                }
                self.program.push(Command {
                    a1,
                    a2,
                    negate,
                    cmd: Cmd::EndBlock,
                });
                return self.end_of_command();
            }
            '=' => Cmd::Equals,
            'a' => Cmd::Append(self.text_arg()),
            'i' => Cmd::Insert(self.text_arg()),
            'c' => Cmd::Change(self.text_arg()),
            ':' => {
                if a1.is_some() {
                    return Err(self.err(": doesn't want any addresses"));
                }
                let label = self.rest_of_line(true);
                if label.is_empty() {
                    return Err(self.err("\":\" lacks a label"));
                }
                self.labels.push((label, index));
                Cmd::Label
            }
            'b' | 't' | 'T' => {
                let label = self.rest_of_line(true);
                if !label.is_empty() {
                    self.jumps.push((index, label));
                }
                match c {
                    'b' => Cmd::Branch(None),
                    't' => Cmd::BranchIf(None),
                    _ => Cmd::BranchUnless(None),
                }
            }
            'd' => Cmd::Delete,
            'D' => Cmd::DeleteFirst,
            'g' => Cmd::Get,
            'G' => Cmd::GetAppend,
            'h' => Cmd::Hold,
            'H' => Cmd::HoldAppend,
            'l' => Cmd::List,
            'n' => Cmd::Next,
            'N' => Cmd::NextAppend,
            'p' => Cmd::Print,
            'P' => Cmd::PrintFirst,
            'x' => Cmd::Exchange,
            'z' => Cmd::Zap,
            'F' => Cmd::FileName,
            'q' | 'Q' => {
                self.skip_ws();
                let code = i32::try_from(self.number()).unwrap_or(i32::MAX);
                if c == 'q' {
                    Cmd::Quit(code)
                } else {
                    Cmd::QuitSilent(code)
                }
            }
            'r' | 'R' => Cmd::ReadFile(self.rest_of_line(false)),
            'w' | 'W' => Cmd::Write(self.rest_of_line(false)),
            's' => Cmd::Subst(Box::new(self.substitute()?)),
            'y' => self.translate()?,
            other => return Err(self.err(&format!("unknown command: `{other}'"))),
        };
        self.program.push(Command {
            a1,
            a2,
            negate,
            cmd,
        });
        if matches!(
            c,
            '{' | 'a' | 'i' | 'c' | ':' | 'b' | 't' | 'T' | 'r' | 'R' | 'w' | 'W'
        ) {
            return Ok(());
        }
        self.end_of_command()
    }

    fn substitute(&mut self) -> Result<Subst, ScriptError> {
        let delim = self
            .next()
            .ok_or_else(|| self.err("unterminated `s' command"))?;
        let pattern = self
            .delimited(delim)
            .ok_or_else(|| self.err("unterminated `s' command"))?;
        let replacement = self.replacement(delim)?;
        let mut s = Subst {
            re: Re::Last,
            replacement,
            global: false,
            nth: 1,
            print: 0,
            write: None,
            eval: false,
        };
        let mut icase = false;
        let mut nth_given = false;
        loop {
            match self.peek() {
                Some('g') => s.global = true,
                Some('p') => s.print += 1,
                Some('i' | 'I') => icase = true,
                Some('m' | 'M') => {}
                Some('e') => s.eval = true,
                Some(d) if d.is_ascii_digit() => {
                    let n = self.number();
                    if n == 0 {
                        return Err(self.err("number option to `s' command may not be zero"));
                    }
                    if nth_given {
                        return Err(self.err("multiple number options to `s' command"));
                    }
                    nth_given = true;
                    s.nth = usize::try_from(n).unwrap_or(usize::MAX);
                    continue;
                }
                Some('w') => {
                    self.pos += 1;
                    s.write = Some(self.rest_of_line(false));
                    break;
                }
                None | Some('\n' | ';' | '}' | '#' | ' ' | '\t') => break,
                Some(_) => {
                    self.pos += 1;
                    return Err(self.err("unknown option to `s'"));
                }
            }
            self.pos += 1;
        }
        s.re = self.regex(&pattern, icase)?;
        Ok(s)
    }

    fn replacement(&mut self, delim: char) -> Result<Vec<Piece>, ScriptError> {
        let mut pieces = Vec::new();
        let mut text = Vec::new();
        let flush = |text: &mut Vec<u8>, pieces: &mut Vec<Piece>| {
            if !text.is_empty() {
                pieces.push(Piece::Text(std::mem::take(text)));
            }
        };
        loop {
            let Some(c) = self.next() else {
                return Err(self.err("unterminated `s' command"));
            };
            if c == delim {
                flush(&mut text, &mut pieces);
                return Ok(pieces);
            }
            match c {
                '\\' => {
                    let Some(n) = self.next() else {
                        return Err(self.err("unterminated `s' command"));
                    };
                    match n {
                        '0'..='9' => {
                            flush(&mut text, &mut pieces);
                            let g = n.to_digit(10).unwrap_or(0) as usize;
                            pieces.push(if g == 0 {
                                Piece::Whole
                            } else {
                                Piece::Group(g)
                            });
                        }
                        'n' => text.push(b'\n'),
                        't' => text.push(b'\t'),
                        'U' | 'L' | 'u' | 'l' | 'E' => {
                            flush(&mut text, &mut pieces);
                            pieces.push(Piece::Case(n));
                        }
                        '\n' => text.push(b'\n'),
                        other => {
                            let mut buf = [0u8; 4];
                            text.extend_from_slice(other.encode_utf8(&mut buf).as_bytes());
                        }
                    }
                }
                '&' => {
                    flush(&mut text, &mut pieces);
                    pieces.push(Piece::Whole);
                }
                other => {
                    let mut buf = [0u8; 4];
                    text.extend_from_slice(other.encode_utf8(&mut buf).as_bytes());
                }
            }
        }
    }

    fn translate(&mut self) -> Result<Cmd, ScriptError> {
        let delim = self
            .next()
            .ok_or_else(|| self.err("unterminated `y' command"))?;
        let read = |p: &mut Self| -> Result<Vec<char>, ScriptError> {
            let mut out = Vec::new();
            loop {
                let c = p.next().ok_or_else(|| p.err("unterminated `y' command"))?;
                if c == delim {
                    return Ok(out);
                }
                if c == '\\' {
                    match p.next() {
                        Some('n') => out.push('\n'),
                        Some('t') => out.push('\t'),
                        Some(n) => out.push(n),
                        None => return Err(p.err("unterminated `y' command")),
                    }
                } else {
                    out.push(c);
                }
            }
        };
        let from = read(self)?;
        let to = read(self)?;
        if from.len() != to.len() {
            return Err(self.err("strings for `y' command are different lengths"));
        }
        Ok(Cmd::Translate(from.into_iter().zip(to).collect()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_one(s: &str) -> Result<Vec<Command>, ScriptError> {
        parse(&[s.to_string()], false)
    }

    #[test]
    fn errors_use_gnu_wording() {
        let msg = |s| parse_one(s).err().map(|e| e.0).unwrap_or_default();
        assert_eq!(
            msg("s/a/b"),
            "-e expression #1, char 5: unterminated `s' command"
        );
        assert_eq!(msg("k"), "-e expression #1, char 1: unknown command: `k'");
        assert_eq!(
            msg("s/a/b/q"),
            "-e expression #1, char 7: unknown option to `s'"
        );
        assert_eq!(msg("p}"), "-e expression #1, char 2: unexpected `}'");
        assert_eq!(msg("b foo"), "can't find label for jump to `foo'");
        assert_eq!(
            msg("pq"),
            "-e expression #1, char 2: extra characters after command"
        );
    }

    #[test]
    fn blocks_and_labels_resolve() {
        let prog = parse_one(":a;N;$!ba;s/\\n/ /g").unwrap_or_default();
        assert_eq!(prog.len(), 4);
        assert!(matches!(
            prog.get(2).map(|c| &c.cmd),
            Some(Cmd::Branch(Some(0)))
        ));
    }
}
