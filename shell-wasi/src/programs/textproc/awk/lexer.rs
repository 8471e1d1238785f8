//! awk's tokens. A `/` starts a regex literal unless the previous token
//! ends an operand (then it divides), as in the one-true-awk grammar.

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Tok {
    Num(f64),
    Str(String),
    Regex(String),
    Name(String),
    /// A name written right before `(`: a function call.
    FuncName(String),
    Builtin(String),
    Keyword(&'static str),
    Op(&'static str),
    Newline,
    Eof,
}

const KEYWORDS: &[&str] = &[
    "BEGIN", "END", "function", "func", "if", "else", "while", "for", "do", "break", "continue",
    "next", "nextfile", "exit", "return", "delete", "in", "getline", "print", "printf",
];

pub(super) const BUILTINS: &[&str] = &[
    "atan2", "close", "cos", "exp", "fflush", "gsub", "index", "int", "length", "log", "match",
    "rand", "sin", "split", "sprintf", "sqrt", "srand", "sub", "substr", "system", "tolower",
    "toupper",
];

/// Operators, longest first.
const OPS: &[&str] = &[
    "&&", "||", "==", "<=", ">=", "!=", "++", "--", "+=", "-=", "*=", "/=", "%=", "^=", ">>", "!~",
    "{", "}", "(", ")", "[", "]", ";", ",", "+", "-", "*", "/", "%", "^", "!", ">", "<", "|", "?",
    ":", "~", "$", "=",
];

/// Tokens with the line each starts on.
pub(super) fn lex(src: &str) -> Result<Vec<(Tok, usize)>, String> {
    let chars: Vec<char> = src.chars().collect();
    let mut toks: Vec<(Tok, usize)> = Vec::new();
    let mut i = 0;
    let mut line = 1;
    while let Some(&c) = chars.get(i) {
        match c {
            ' ' | '\t' | '\r' => i += 1,
            '\\' if chars.get(i + 1) == Some(&'\n') => {
                i += 2;
                line += 1;
            }
            '\\' if chars.get(i + 1) == Some(&'\r') && chars.get(i + 2) == Some(&'\n') => {
                i += 3;
                line += 1;
            }
            '\n' => {
                toks.push((Tok::Newline, line));
                line += 1;
                i += 1;
            }
            '#' => {
                while chars.get(i).is_some_and(|&c| c != '\n') {
                    i += 1;
                }
            }
            '"' => {
                i += 1;
                let mut s = String::new();
                loop {
                    let Some(&c) = chars.get(i) else {
                        return Err(runaway(line, &s));
                    };
                    i += 1;
                    match c {
                        '"' => break,
                        '\n' => {
                            return Err(runaway(line, &s));
                        }
                        '\\' => {
                            let (ch, used) = escape(&chars, i);
                            i += used;
                            if let Some(ch) = ch {
                                s.push(ch);
                            }
                        }
                        _ => s.push(c),
                    }
                }
                toks.push((Tok::Str(s), line));
            }
            '/' if !ends_operand(toks.last().map(|t| &t.0)) => {
                i += 1;
                let mut s = String::new();
                let mut in_bracket = false;
                loop {
                    let Some(&c) = chars.get(i) else {
                        return Err(format!("line {line}: runaway regular expression /{s} ..."));
                    };
                    i += 1;
                    match c {
                        '\n' => {
                            return Err(format!(
                                "line {line}: runaway regular expression /{s} ..."
                            ));
                        }
                        '\\' => {
                            if chars.get(i) == Some(&'/') {
                                s.push('/');
                            } else {
                                s.push('\\');
                                if let Some(&n) = chars.get(i) {
                                    s.push(n);
                                }
                            }
                            i += 1;
                        }
                        '[' => {
                            in_bracket = true;
                            s.push(c);
                            if chars.get(i) == Some(&'^') {
                                s.push('^');
                                i += 1;
                            }
                            if chars.get(i) == Some(&']') {
                                s.push(']');
                                i += 1;
                            }
                        }
                        ']' => {
                            in_bracket = false;
                            s.push(c);
                        }
                        '/' if !in_bracket => break,
                        _ => s.push(c),
                    }
                }
                toks.push((Tok::Regex(s), line));
            }
            c if c.is_ascii_digit()
                || (c == '.' && chars.get(i + 1).is_some_and(char::is_ascii_digit)) =>
            {
                let start = i;
                if c == '0'
                    && matches!(chars.get(i + 1), Some('x' | 'X'))
                    && chars.get(i + 2).is_some_and(char::is_ascii_hexdigit)
                {
                    i += 2;
                    while chars.get(i).is_some_and(char::is_ascii_hexdigit) {
                        i += 1;
                    }
                    let text: String = chars.get(start + 2..i).unwrap_or_default().iter().collect();
                    toks.push((
                        Tok::Num(i64::from_str_radix(&text, 16).unwrap_or(0) as f64),
                        line,
                    ));
                    continue;
                }
                while chars
                    .get(i)
                    .is_some_and(|c| c.is_ascii_digit() || *c == '.')
                {
                    i += 1;
                }
                if matches!(chars.get(i), Some('e' | 'E')) {
                    let mut j = i + 1;
                    if matches!(chars.get(j), Some('+' | '-')) {
                        j += 1;
                    }
                    if chars.get(j).is_some_and(char::is_ascii_digit) {
                        i = j;
                        while chars.get(i).is_some_and(char::is_ascii_digit) {
                            i += 1;
                        }
                    }
                }
                let text: String = chars.get(start..i).unwrap_or_default().iter().collect();
                toks.push((Tok::Num(super::value::str_to_num(&text)), line));
            }
            c if c.is_alphabetic() || c == '_' => {
                let start = i;
                while chars
                    .get(i)
                    .is_some_and(|c| c.is_alphanumeric() || *c == '_')
                {
                    i += 1;
                }
                let word: String = chars.get(start..i).unwrap_or_default().iter().collect();
                let tok = if let Some(k) = KEYWORDS.iter().find(|k| **k == word) {
                    Tok::Keyword(if *k == "func" { "function" } else { k })
                } else if BUILTINS.contains(&word.as_str()) {
                    Tok::Builtin(word)
                } else if chars.get(i) == Some(&'(') {
                    Tok::FuncName(word)
                } else {
                    Tok::Name(word)
                };
                toks.push((tok, line));
            }
            _ => {
                let rest: String = chars
                    .get(i..i + 3)
                    .unwrap_or_else(|| chars.get(i..).unwrap_or_default())
                    .iter()
                    .collect();
                let Some(op) = OPS.iter().find(|op| rest.starts_with(**op)) else {
                    return Err(format!("line {line}: syntax error at or near {c}"));
                };
                i += op.chars().count();
                toks.push((Tok::Op(op), line));
            }
        }
    }
    toks.push((Tok::Eof, line));
    Ok(toks)
}

/// mawk shows at most ten characters of an unterminated string.
fn runaway(line: usize, s: &str) -> String {
    let shown: String = s.chars().take(10).collect();
    format!("line {line}: runaway string constant \"{shown} ...")
}

fn ends_operand(t: Option<&Tok>) -> bool {
    match t {
        Some(Tok::Num(_) | Tok::Str(_) | Tok::Name(_) | Tok::Regex(_)) => true,
        Some(Tok::Builtin(_)) => true,
        Some(Tok::Op(op)) => matches!(*op, ")" | "]" | "$" | "++" | "--"),
        Some(Tok::Keyword(k)) => *k == "getline",
        _ => false,
    }
}

/// A string escape after its backslash: the char and how many chars it used.
fn escape(chars: &[char], i: usize) -> (Option<char>, usize) {
    let Some(&c) = chars.get(i) else {
        return (Some('\\'), 0);
    };
    match c {
        'n' => (Some('\n'), 1),
        't' => (Some('\t'), 1),
        'r' => (Some('\r'), 1),
        '\\' => (Some('\\'), 1),
        '"' => (Some('"'), 1),
        '/' => (Some('/'), 1),
        'a' => (Some('\u{7}'), 1),
        'b' => (Some('\u{8}'), 1),
        'f' => (Some('\u{c}'), 1),
        'v' => (Some('\u{b}'), 1),
        '\n' => (None, 1),
        '0'..='7' => {
            let mut n = 0u32;
            let mut used = 0;
            while used < 3
                && let Some(d) = chars.get(i + used).and_then(|c| c.to_digit(8))
            {
                n = n * 8 + d;
                used += 1;
            }
            (char::from_u32(n), used)
        }
        other => {
            // Unknown escapes keep their backslash (mawk does).
            let _ = other;
            (Some('\\'), 0)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slash_is_regex_or_division_by_context() {
        let toks: Vec<Tok> = lex("a / b; /x/")
            .unwrap_or_default()
            .into_iter()
            .map(|t| t.0)
            .collect();
        assert_eq!(toks.get(1), Some(&Tok::Op("/")));
        assert_eq!(toks.get(4), Some(&Tok::Regex("x".to_string())));
    }

    #[test]
    fn strings_decode_escapes() {
        let toks = lex("\"a\\tb\\\"\"").unwrap_or_default();
        assert_eq!(
            toks.first().map(|t| t.0.clone()),
            Some(Tok::Str("a\tb\"".to_string()))
        );
    }
}
