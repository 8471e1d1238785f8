//! Prompt expansion, `${x@P}`: bash's backslash escapes (`\w`, `\u`,
//! `\D{fmt}`, `\nnn`, ...), then, with `shopt promptvars` (the default),
//! parameter expansion, command substitution and arithmetic as inside
//! double quotes.

use super::Shell;
use crate::errors::ShellError;
use crate::streams::Io;

impl Shell {
    /// The prompt `text` expands to.
    pub(crate) fn expand_prompt(&mut self, text: &str, io: &Io) -> Result<String, ShellError> {
        let promptvars = self.shopt_on("promptvars");
        let decoded = self.decode_prompt(text, promptvars);
        if !promptvars {
            return Ok(decoded);
        }
        // A here-document body expands as double quotes do, except that
        // `\"` keeps its backslash there; drop it first.
        self.expand_heredoc(&unescape_double_quotes(&decoded), io)
    }

    /// The first pass: backslash escapes. With `promptvars`, text that
    /// comes from the escapes is protected from the second pass.
    fn decode_prompt(&self, text: &str, promptvars: bool) -> String {
        let protect = |s: String| if promptvars { backslash_quote(&s) } else { s };
        let mut out = String::new();
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            if c != '\\' {
                out.push(c);
                continue;
            }
            let Some(e) = chars.next() else {
                out.push('\\');
                break;
            };
            match e {
                'a' => out.push('\u{7}'),
                'e' => out.push('\u{1b}'),
                'n' => out.push('\n'),
                'r' => out.push('\r'),
                '\\' => out.push('\\'),
                '[' | ']' => {}
                '$' if promptvars => out.push_str("\\$"),
                '$' => out.push('$'),
                '0'..='7' => {
                    let mut value = e.to_digit(8).unwrap_or(0);
                    for _ in 0..2 {
                        match chars.peek().and_then(|d| d.to_digit(8)) {
                            Some(d) => {
                                value = value * 8 + d;
                                chars.next();
                            }
                            None => break,
                        }
                    }
                    let byte = char::from_u32(value & 0xff).unwrap_or('?');
                    out.push_str(&protect(byte.to_string()));
                }
                'D' if chars.peek() == Some(&'{') => {
                    chars.next();
                    let format: String = chars.by_ref().take_while(|c| *c != '}').collect();
                    let format = if format.is_empty() { "%X" } else { &format };
                    out.push_str(&protect(now(format)));
                }
                other => match self.prompt_field(other) {
                    Some(field) => out.push_str(&protect(field)),
                    None => {
                        out.push('\\');
                        out.push(other);
                    }
                },
            }
        }
        out
    }

    /// What `\X` stands for, for the escapes that insert a value.
    fn prompt_field(&self, escape: char) -> Option<String> {
        Some(match escape {
            'd' => now("%a %b %d"),
            't' => now("%H:%M:%S"),
            'T' => now("%I:%M:%S"),
            '@' => now("%I:%M %p"),
            'A' => now("%H:%M"),
            'h' => crate::programs::coreutils::sys::HOSTNAME
                .split('.')
                .next()
                .unwrap_or_default()
                .to_string(),
            'H' => crate::programs::coreutils::sys::HOSTNAME.to_string(),
            'u' => crate::programs::ident::USER.to_string(),
            's' => self
                .arg0
                .rsplit('/')
                .next()
                .unwrap_or(&self.arg0)
                .to_string(),
            'v' => "5.2".to_string(),
            'V' => "5.2.15".to_string(),
            'w' => self.prompt_dir(false),
            'W' => self.prompt_dir(true),
            '#' | 'j' => "0".to_string(),
            '!' => "1".to_string(),
            'l' => "tty".to_string(),
            _ => return None,
        })
    }

    /// `\w` (the working folder, `~` for `$HOME`) or `\W` (its last part).
    fn prompt_dir(&self, last_only: bool) -> String {
        let home = self.vars.scalar("HOME").unwrap_or_default();
        let cwd = self.cwd.as_str();
        if !home.is_empty() && (cwd == home || cwd.starts_with(&format!("{home}/"))) {
            if last_only && cwd == home {
                return "~".to_string();
            }
            if !last_only {
                return format!("~{}", cwd.get(home.len()..).unwrap_or_default());
            }
        }
        if last_only && cwd != "/" {
            return cwd.rsplit('/').next().unwrap_or(cwd).to_string();
        }
        cwd.to_string()
    }
}

fn now(format: &str) -> String {
    crate::programs::coreutils::date::format_now(format)
}

/// Backslashes before the characters special inside double quotes.
fn backslash_quote(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if matches!(c, '$' | '`' | '"' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// `\"` to `"`, leaving other backslash pairs whole.
fn unescape_double_quotes(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('"') => out.push('"'),
            Some(next) => {
                out.push('\\');
                out.push(next);
            }
            None => out.push('\\'),
        }
    }
    out
}
