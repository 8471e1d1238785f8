//! Quoting names in messages and output the way GNU tools and bash do.

/// GNU quote(): curly quotes in a UTF-8 locale, ASCII quotes otherwise,
/// with backslashes and control characters written as C escapes.
pub(crate) fn quote(text: &str, env: &[(String, String)]) -> String {
    let mut body = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' => body.push_str("\\\\"),
            '\n' => body.push_str("\\n"),
            '\t' => body.push_str("\\t"),
            '\r' => body.push_str("\\r"),
            '\u{7}' => body.push_str("\\a"),
            '\u{8}' => body.push_str("\\b"),
            '\u{b}' => body.push_str("\\v"),
            '\u{c}' => body.push_str("\\f"),
            c if c.is_ascii_control() => body.push_str(&format!("\\{:03o}", c as u32)),
            c => body.push(c),
        }
    }
    if utf8_locale(env) {
        format!("\u{2018}{body}\u{2019}")
    } else {
        format!("'{body}'")
    }
}

/// True when `LC_ALL`, `LC_CTYPE` or `LANG` (first one set) names UTF-8.
fn utf8_locale(env: &[(String, String)]) -> bool {
    let get = |name: &str| {
        env.iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
            .filter(|v| !v.is_empty())
    };
    let locale = get("LC_ALL")
        .or_else(|| get("LC_CTYPE"))
        .or_else(|| get("LANG"))
        .unwrap_or("");
    let lower = locale.to_ascii_lowercase();
    lower.contains("utf-8") || lower.contains("utf8")
}

/// GNU quotef(): a file name bare when it is shell-safe, else quoted
/// (`cat: 'a b': No such file or directory`).
pub(crate) fn quote_if_needed(name: &str) -> String {
    if !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || "_-./:=@%+,~^".contains(c))
    {
        name.to_string()
    } else {
        single_quote(name)
    }
}

/// `'text'` with embedded quotes escaped, as `${x@Q}` and `printf %q`
/// style output for words needing it.
pub(crate) fn single_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

/// A word as `set -x` shows it: bare when safe, single-quoted otherwise.
pub(crate) fn trace_quote(word: &str) -> String {
    if !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-./:=@%+,".contains(c))
    {
        word.to_string()
    } else {
        single_quote(word)
    }
}

/// A value as `set` lists it: bare when safe, else single-quoted, or
/// `$'...'` with control characters.
pub(crate) fn set_quote(word: &str) -> String {
    if word.chars().any(char::is_control) {
        ansi_c_quote(word)
    } else if word == "'" {
        "\\'".to_string()
    } else {
        trace_quote(word)
    }
}

/// printf `%q`: backslash-escapes shell metacharacters.
pub(crate) fn shell_escape(word: &str) -> String {
    if word.is_empty() {
        return "''".to_string();
    }
    let mut out = String::new();
    for c in word.chars() {
        if c.is_ascii_alphanumeric() || "_-./:=@%+,".contains(c) || !c.is_ascii() {
            out.push(c);
        } else if c == '\n' {
            return format!(
                "$'{}'",
                word.replace('\\', "\\\\")
                    .replace('\'', "\\'")
                    .replace('\n', "\\n")
            );
        } else {
            out.push('\\');
            out.push(c);
        }
    }
    out
}

/// `declare -p`/`export -p` value quoting: double quotes, with `"`, `\`,
/// `$` and `` ` `` escaped.
pub(crate) fn double_quote(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        if matches!(c, '"' | '\\' | '$' | '`') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

/// A value as `declare -p` shows it: double-quoted, or `$'...'` when it
/// holds control characters (which double quotes would print raw).
pub(crate) fn declare_quote(text: &str) -> String {
    if text.chars().any(|c| c.is_control()) {
        ansi_c_quote(text)
    } else {
        double_quote(text)
    }
}

/// `$'...'` with bash's escapes for control characters.
pub(crate) fn ansi_c_quote(text: &str) -> String {
    let mut out = String::from("$'");
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{1b}' => out.push_str("\\E"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            c if c.is_control() && (c as u32) < 0x100 => {
                out.push_str(&format!("\\{:03o}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_follow_locale() {
        let utf8 = vec![("LANG".to_string(), "C.UTF-8".to_string())];
        assert_eq!(quote("a", &utf8), "\u{2018}a\u{2019}");
        assert_eq!(quote("a", &[]), "'a'");
    }

    #[test]
    fn escapes_for_shell() {
        assert_eq!(shell_escape("a b"), "a\\ b");
        assert_eq!(single_quote("it's"), "'it'\\''s'");
        assert_eq!(double_quote("a\"$"), "\"a\\\"\\$\"");
    }
}
