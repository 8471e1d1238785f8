//! POSIX regular expressions (BRE and ERE, with GNU's extensions) written
//! in the `regex` crate's syntax, shared by `grep`, `sed` and `awk`.
//!
//! The translation is textual: bracket expressions are copied with the
//! characters `regex` treats specially escaped, BRE's `\(`, `\{`, `\|`,
//! `\+`, `\?` become their ERE meaning and its bare `(`, `{`, `|`, `+`,
//! `?` become literals. Back-references (`\1` in a pattern) have no
//! equivalent in `regex` and are reported as unsupported; the
//! replacement side of `sed s///` handles its own `\1`.

/// Which POSIX dialect a pattern is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dialect {
    /// Basic (grep, sed without -E).
    Basic,
    /// Extended (grep -E, sed -E).
    Extended,
    /// awk's ERE: backslash escapes such as `\t` and `\/` are decoded.
    Awk,
}

/// Why a pattern could not be translated, worded as GNU grep says it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PatternError {
    UnmatchedBracket,
    UnmatchedParen,
    UnmatchedBrace,
    UnmatchedCloseParen,
    TrailingBackslash,
    InvalidBackReference,
}

impl std::fmt::Display for PatternError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::UnmatchedBracket => write!(f, "Unmatched [, [^, [:, [., or [="),
            Self::UnmatchedParen => write!(f, "Unmatched ( or \\("),
            Self::UnmatchedBrace => write!(f, "Unmatched \\{{"),
            Self::UnmatchedCloseParen => write!(f, "Unmatched ) or \\)"),
            Self::TrailingBackslash => write!(f, "Trailing backslash"),
            Self::InvalidBackReference => write!(f, "Invalid back reference"),
        }
    }
}

/// `text` as a literal in `regex` syntax.
pub(crate) fn escape(text: &str) -> String {
    regex::escape(text)
}

/// Translates a POSIX pattern into `regex` syntax.
pub(crate) fn translate(pattern: &str, dialect: Dialect) -> Result<String, PatternError> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut out = String::with_capacity(pattern.len() + 8);
    let mut i = 0;
    let mut depth = 0usize;
    // True where `*` would be literal (start of pattern or group, after `|`).
    let mut at_start = true;
    let basic = dialect == Dialect::Basic;
    while let Some(&c) = chars.get(i) {
        let was_start = at_start;
        at_start = false;
        match c {
            '\\' => {
                let Some(&n) = chars.get(i + 1) else {
                    return Err(PatternError::TrailingBackslash);
                };
                i += 2;
                match n {
                    '(' if basic => {
                        depth += 1;
                        out.push('(');
                        at_start = true;
                    }
                    ')' if basic => {
                        if depth == 0 {
                            return Err(PatternError::UnmatchedCloseParen);
                        }
                        depth -= 1;
                        out.push(')');
                    }
                    '|' if basic => {
                        out.push('|');
                        at_start = true;
                    }
                    '{' if basic => {
                        i = interval(&chars, i, &mut out, true)?;
                    }
                    '+' | '?' if basic => out.push(n),
                    '1'..='9' => return Err(PatternError::InvalidBackReference),
                    '<' | '>' | 'b' | 'B' | 'w' | 'W' | 's' | 'S' => {
                        out.push('\\');
                        out.push(n);
                    }
                    '`' => out.push_str("\\A"),
                    '\'' => out.push_str("\\z"),
                    'n' => out.push_str("\\n"),
                    't' if dialect == Dialect::Awk => out.push_str("\\t"),
                    'r' if dialect == Dialect::Awk => out.push_str("\\r"),
                    _ => push_literal(&mut out, n),
                }
                continue;
            }
            '[' => {
                i = bracket(&chars, i, &mut out)?;
                continue;
            }
            '*' if was_start => push_literal(&mut out, '*'),
            '*' => out.push('*'),
            '^' => {
                if basic && !was_start {
                    push_literal(&mut out, '^');
                } else {
                    out.push('^');
                    at_start = true;
                }
            }
            '$' => {
                let next = chars
                    .get(i + 1..i + 3)
                    .map(|s| s.iter().collect::<String>());
                let at_end = i + 1 == chars.len()
                    || !basic
                    || next.as_deref() == Some("\\)")
                    || next.as_deref() == Some("\\|");
                if at_end {
                    out.push('$');
                } else {
                    push_literal(&mut out, '$');
                }
            }
            '(' | ')' | '|' | '+' | '?' | '{' if basic => push_literal(&mut out, c),
            '.' => out.push('.'),
            '(' => {
                depth += 1;
                out.push('(');
                at_start = true;
            }
            ')' => {
                if depth == 0 {
                    // GNU ERE treats an unmatched `)` as a literal.
                    push_literal(&mut out, ')');
                } else {
                    depth -= 1;
                    out.push(')');
                }
            }
            '|' => {
                out.push('|');
                at_start = true;
            }
            '+' | '?' if was_start => push_literal(&mut out, c),
            '+' | '?' => out.push(c),
            '{' => {
                if was_start {
                    push_literal(&mut out, '{');
                } else {
                    i = interval(&chars, i + 1, &mut out, false)?;
                    continue;
                }
            }
            _ => push_literal(&mut out, c),
        }
        i += 1;
    }
    if depth > 0 {
        return Err(PatternError::UnmatchedParen);
    }
    Ok(out)
}

/// Copies `c` so that `regex` reads it literally.
fn push_literal(out: &mut String, c: char) {
    if regex_syntax_special(c) {
        out.push('\\');
    }
    out.push(c);
}

fn regex_syntax_special(c: char) -> bool {
    matches!(
        c,
        '\\' | '.'
            | '+'
            | '*'
            | '?'
            | '('
            | ')'
            | '|'
            | '['
            | ']'
            | '{'
            | '}'
            | '^'
            | '$'
            | '#'
            | '&'
            | '-'
            | '~'
    )
}

/// An interval `{m,n}` starting after its `{` at `i`; in ERE a brace that
/// does not start a valid interval is a literal. Returns the index after.
fn interval(
    chars: &[char],
    i: usize,
    out: &mut String,
    basic: bool,
) -> Result<usize, PatternError> {
    let mut j = i;
    let mut body = String::new();
    while let Some(&c) = chars.get(j) {
        if c.is_ascii_digit() || c == ',' {
            body.push(c);
            j += 1;
        } else {
            break;
        }
    }
    let close = if basic {
        chars.get(j) == Some(&'\\') && chars.get(j + 1) == Some(&'}')
    } else {
        chars.get(j) == Some(&'}')
    };
    let valid = close && !body.is_empty() && body.matches(',').count() <= 1 && body != ",";
    if !valid {
        if basic {
            return Err(PatternError::UnmatchedBrace);
        }
        push_literal(out, '{');
        return Ok(i);
    }
    out.push('{');
    if body.starts_with(',') {
        out.push('0');
    }
    out.push_str(&body);
    out.push('}');
    Ok(if basic { j + 2 } else { j + 1 })
}

/// A bracket expression starting at `chars[i] == '['`. Returns the index
/// after its closing `]`.
fn bracket(chars: &[char], i: usize, out: &mut String) -> Result<usize, PatternError> {
    let mut j = i + 1;
    out.push('[');
    if chars.get(j) == Some(&'^') {
        out.push('^');
        j += 1;
    }
    if chars.get(j) == Some(&']') {
        out.push_str("\\]");
        j += 1;
    }
    loop {
        let Some(&c) = chars.get(j) else {
            return Err(PatternError::UnmatchedBracket);
        };
        match c {
            ']' => {
                out.push(']');
                return Ok(j + 1);
            }
            '[' if matches!(chars.get(j + 1), Some(':' | '=' | '.')) => {
                let kind = chars.get(j + 1).copied().unwrap_or(':');
                let mut k = j + 2;
                let mut name = String::new();
                loop {
                    match (chars.get(k), chars.get(k + 1)) {
                        (Some(&a), Some(&']')) if a == kind => break,
                        (Some(&a), _) => {
                            name.push(a);
                            k += 1;
                        }
                        (None, _) => return Err(PatternError::UnmatchedBracket),
                    }
                }
                if kind == ':' {
                    out.push_str(&format!("[:{name}:]"));
                } else {
                    for ch in name.chars() {
                        push_literal(out, ch);
                    }
                }
                j = k + 2;
            }
            '-' => {
                // A range dash stays; one at the edges is literal.
                let edge =
                    chars.get(j + 1) == Some(&']') || out.ends_with('[') || out.ends_with('^');
                if edge {
                    out.push_str("\\-");
                } else {
                    out.push('-');
                }
                j += 1;
            }
            '\\' | '[' | '&' | '~' | '^' => {
                out.push('\\');
                out.push(c);
                j += 1;
            }
            _ => {
                out.push(c);
                j += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn basic(p: &str) -> String {
        translate(p, Dialect::Basic).unwrap_or_else(|e| format!("ERR {e}"))
    }

    #[test]
    fn bre_groups_and_literals() {
        assert_eq!(basic("\\(a\\|b\\)\\+"), "(a|b)+");
        assert_eq!(basic("a+(b)"), "a\\+\\(b\\)");
        assert_eq!(basic("*x"), "\\*x");
        assert_eq!(basic("a\\{2,\\}"), "a{2,}");
        assert_eq!(basic("a^b$"), "a\\^b$");
        assert_eq!(basic("a$b"), "a\\$b");
    }

    #[test]
    fn brackets_escape_regex_specials() {
        assert_eq!(basic("[]a\\]"), "[\\]a\\\\]");
        assert_eq!(basic("[[:digit:]-]"), "[[:digit:]\\-]");
        assert_eq!(basic("[a-z&]"), "[a-z\\&]");
    }

    #[test]
    fn ere_braces_and_errors() {
        let ere = |p| translate(p, Dialect::Extended);
        assert_eq!(ere("a{1"), Ok("a\\{1".to_string()));
        assert_eq!(ere("a{,2}"), Ok("a{0,2}".to_string()));
        assert_eq!(ere("(a"), Err(PatternError::UnmatchedParen));
        assert_eq!(basic("a\\{1"), "ERR Unmatched \\{");
        assert_eq!(basic("[a"), "ERR Unmatched [, [^, [:, [., or [=");
    }
}
