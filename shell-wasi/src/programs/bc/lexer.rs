//! bc's tokens, as GNU bc 1.07.1's scanner makes them: numbers with
//! their leading zeros and trailing point removed, lowercase names and
//! keywords, strings, `/* */` and `#` comments, backslash-newlines
//! skipped, and the line count the error messages use.

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Tok {
    Number(String),
    Name(String),
    /// A string's raw text, without its quotes.
    Str(String),
    /// `=`, or the operator of `+=`, `-=`, …
    Assign(Option<char>),
    Rel(&'static str),
    Incr(bool),
    And,
    Or,
    Not,
    /// `+ - * / % ^ ( ) [ ] { } , ;` and `*`/`&` before array parameters.
    Punct(char),
    Newline,
    Eof,
}

/// A token and the line count once it was read.
#[derive(Debug, Clone)]
pub(crate) struct Token {
    pub(crate) tok: Tok,
    pub(crate) line: usize,
}

pub(crate) struct Lexer<'a> {
    src: &'a [u8],
    pos: usize,
    pub(crate) line: usize,
    /// `illegal character` and comment errors, with their line.
    pub(crate) errors: Vec<(usize, String)>,
}

impl<'a> Lexer<'a> {
    pub(crate) fn new(src: &'a str) -> Self {
        Self {
            src: src.as_bytes(),
            pos: 0,
            line: 1,
            errors: Vec::new(),
        }
    }

    /// The text not yet read.
    pub(crate) fn rest(&self) -> std::borrow::Cow<'_, str> {
        String::from_utf8_lossy(self.src.get(self.pos..).unwrap_or_default())
    }

    fn peek(&self, k: usize) -> Option<u8> {
        self.src.get(self.pos + k).copied()
    }

    pub(crate) fn next_token(&mut self) -> Token {
        let tok = self.scan();
        Token {
            tok,
            line: self.line,
        }
    }

    fn is_digit(c: u8) -> bool {
        c.is_ascii_digit() || c.is_ascii_uppercase()
    }

    fn scan(&mut self) -> Tok {
        loop {
            let Some(c) = self.peek(0) else {
                return Tok::Eof;
            };
            match c {
                b' ' | b'\t' | b'\r' => self.pos += 1,
                b'\\' if self.peek(1) == Some(b'\n') => {
                    self.pos += 2;
                    self.line += 1;
                }
                b'\n' => {
                    self.pos += 1;
                    self.line += 1;
                    return Tok::Newline;
                }
                b'#' => {
                    while self.peek(0).is_some_and(|c| c != b'\n') {
                        self.pos += 1;
                    }
                }
                b'/' if self.peek(1) == Some(b'*') => {
                    self.pos += 2;
                    loop {
                        match self.peek(0) {
                            None => {
                                self.errors
                                    .push((self.line, "end of file in comment".into()));
                                return Tok::Eof;
                            }
                            Some(b'*') if self.peek(1) == Some(b'/') => {
                                self.pos += 2;
                                break;
                            }
                            Some(b'\n') => {
                                self.line += 1;
                                self.pos += 1;
                            }
                            Some(_) => self.pos += 1,
                        }
                    }
                }
                b'"' => {
                    self.pos += 1;
                    let start = self.pos;
                    while let Some(c) = self.peek(0) {
                        if c == b'"' {
                            break;
                        }
                        if c == b'\n' {
                            self.line += 1;
                        }
                        self.pos += 1;
                    }
                    let text = String::from_utf8_lossy(&self.src[start..self.pos]).into_owned();
                    if self.peek(0).is_none() {
                        self.errors
                            .push((self.line, "end of file in string".into()));
                        return Tok::Eof;
                    }
                    self.pos += 1;
                    return Tok::Str(text);
                }
                c if Self::is_digit(c)
                    || (c == b'.' && self.peek(1).is_some_and(Self::is_digit)) =>
                {
                    return self.number();
                }
                b'.' => {
                    self.pos += 1;
                    return Tok::Name("last".into());
                }
                c if c.is_ascii_lowercase() => {
                    let start = self.pos;
                    while self
                        .peek(0)
                        .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'_')
                    {
                        self.pos += 1;
                    }
                    return Tok::Name(
                        String::from_utf8_lossy(&self.src[start..self.pos]).into_owned(),
                    );
                }
                _ => {
                    if let Some(t) = self.operator() {
                        return t;
                    }
                    let ch = self.src[self.pos..]
                        .iter()
                        .take(4)
                        .copied()
                        .collect::<Vec<u8>>();
                    let shown = String::from_utf8_lossy(&ch).chars().next().unwrap_or('?');
                    self.pos += shown.len_utf8().max(1);
                    let shown = if shown.is_control() || !shown.is_ascii() {
                        format!("^{}", char::from(c.wrapping_add(64) & 0x7f))
                    } else {
                        shown.to_string()
                    };
                    self.errors
                        .push((self.line, format!("illegal character: {shown}")));
                }
            }
        }
    }

    fn number(&mut self) -> Tok {
        let mut text = String::new();
        let mut seen_point = false;
        while let Some(c) = self.peek(0) {
            if Self::is_digit(c) {
                text.push(char::from(c));
                self.pos += 1;
            } else if c == b'.' && !seen_point {
                seen_point = true;
                text.push('.');
                self.pos += 1;
            } else if c == b'\\' && self.peek(1) == Some(b'\n') {
                self.pos += 2;
                self.line += 1;
            } else {
                break;
            }
        }
        if text.ends_with('.') {
            text.pop();
        }
        let trimmed = text.trim_start_matches('0');
        let text = if trimmed.is_empty() {
            "0".to_string()
        } else {
            trimmed.to_string()
        };
        Tok::Number(text)
    }

    fn operator(&mut self) -> Option<Tok> {
        let c = self.peek(0)?;
        let n = self.peek(1);
        let two = |s: &mut Self, t: Tok| {
            s.pos += 2;
            Some(t)
        };
        match (c, n) {
            (b'&', Some(b'&')) => return two(self, Tok::And),
            (b'|', Some(b'|')) => return two(self, Tok::Or),
            (b'+', Some(b'+')) => return two(self, Tok::Incr(true)),
            (b'-', Some(b'-')) => return two(self, Tok::Incr(false)),
            (b'=', Some(b'=')) => return two(self, Tok::Rel("==")),
            (b'<', Some(b'=')) => return two(self, Tok::Rel("<=")),
            (b'>', Some(b'=')) => return two(self, Tok::Rel(">=")),
            (b'!', Some(b'=')) => return two(self, Tok::Rel("!=")),
            (b'+' | b'-' | b'*' | b'/' | b'%' | b'^', Some(b'=')) => {
                return two(self, Tok::Assign(Some(char::from(c))));
            }
            _ => {}
        }
        self.pos += 1;
        Some(match c {
            b'=' => Tok::Assign(None),
            b'<' => Tok::Rel("<"),
            b'>' => Tok::Rel(">"),
            b'!' => Tok::Not,
            b'+' | b'-' | b'*' | b'/' | b'%' | b'^' | b'(' | b')' | b'[' | b']' | b'{' | b'}'
            | b',' | b';' | b'&' => Tok::Punct(char::from(c)),
            _ => {
                self.pos -= 1;
                return None;
            }
        })
    }
}
