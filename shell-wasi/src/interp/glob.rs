//! Glob patterns (`*`, `?`, `[...]`, backslash escapes): matching for
//! `case`, `[[ == ]]` and `${x#pat}`, and pathname expansion.

/// Escapes `text` so that it matches only itself inside a pattern.
pub(crate) fn escape_into(text: &str, pattern: &mut String) {
    for c in text.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '\\' | '(' | ')' | '|') {
            pattern.push('\\');
        }
        pattern.push(c);
    }
}

/// True if the whole of `text` matches `pattern`.
pub(crate) fn pattern_matches(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    if super::extglob::has_extglob(&p)
        && let Some(matched) = super::extglob::matches(&p, &t)
    {
        return matched;
    }
    match_from(&p, &t)
}

/// Iterative matcher with single-star backtracking: linear in practice
/// and without recursion, so hostile patterns cannot blow the stack.
fn match_from(p: &[char], t: &[char]) -> bool {
    let (mut pi, mut ti) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        match p.get(pi) {
            Some('*') => {
                star = Some((pi, ti));
                pi += 1;
                continue;
            }
            Some(&c) => {
                if let Some(len) = match_one(p, pi, c, t[ti]) {
                    pi += len;
                    ti += 1;
                    continue;
                }
            }
            None => {}
        }
        match star {
            Some((sp, st)) => {
                pi = sp + 1;
                ti = st + 1;
                star = Some((sp, st + 1));
            }
            None => return false,
        }
    }
    p.get(pi..)
        .is_some_and(|rest| rest.iter().all(|&c| c == '*'))
}

/// If the pattern element at `pi` (starting with `c`) matches `ch`,
/// returns how many pattern characters it spans.
fn match_one(p: &[char], pi: usize, c: char, ch: char) -> Option<usize> {
    match c {
        '?' => Some(1),
        '\\' => match p.get(pi + 1) {
            Some(&escaped) if escaped == ch => Some(2),
            Some(_) => None,
            None => (ch == '\\').then_some(1),
        },
        '[' => match bracket(p, pi + 1, ch) {
            Some((true, len)) => Some(len + 1),
            Some((false, _)) => None,
            // An unclosed `[` is an ordinary character.
            None => (ch == '[').then_some(1),
        },
        _ => (c == ch).then_some(1),
    }
}

/// Matches a bracket expression starting after `[`. Returns whether it
/// matched and how many characters it spans including the closing `]`.
pub(super) fn bracket(p: &[char], start: usize, ch: char) -> Option<(bool, usize)> {
    let mut i = start;
    let negate = matches!(p.get(i), Some('!' | '^'));
    if negate {
        i += 1;
    }
    let mut matched = false;
    let mut first = true;
    loop {
        let c = *p.get(i)?;
        if c == ']' && !first {
            break;
        }
        first = false;
        if c == '[' && p.get(i + 1) == Some(&':') {
            let rest: String = p.get(i + 2..)?.iter().collect();
            let end = rest.find(":]")?;
            let class = rest.get(..end)?;
            matched |= class_matches(class, ch);
            i += 2 + class.chars().count() + 2;
            continue;
        }
        let (lo, next) = if c == '\\' {
            (*p.get(i + 1)?, i + 2)
        } else {
            (c, i + 1)
        };
        if p.get(next) == Some(&'-') && p.get(next + 1).is_some_and(|&e| e != ']') {
            let hi = *p.get(next + 1)?;
            matched |= lo <= ch && ch <= hi;
            i = next + 2;
        } else {
            matched |= lo == ch;
            i = next;
        }
    }
    Some((matched != negate, i + 1 - start))
}

fn class_matches(class: &str, ch: char) -> bool {
    match class {
        "alpha" => ch.is_alphabetic(),
        "digit" => ch.is_ascii_digit(),
        "alnum" => ch.is_alphanumeric(),
        "upper" => ch.is_uppercase(),
        "lower" => ch.is_lowercase(),
        "space" => ch.is_whitespace(),
        "blank" => ch == ' ' || ch == '\t',
        "punct" => ch.is_ascii_punctuation(),
        "xdigit" => ch.is_ascii_hexdigit(),
        "cntrl" => ch.is_control(),
        "print" => !ch.is_control(),
        "graph" => !ch.is_control() && ch != ' ',
        _ => false,
    }
}

/// True if an unescaped `*`, `?` or `[` occurs.
fn has_magic(component: &str) -> bool {
    let mut escaped = false;
    for c in component.chars() {
        if escaped {
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if matches!(c, '*' | '?' | '[') {
            return true;
        }
    }
    let chars: Vec<char> = component.chars().collect();
    super::extglob::has_extglob(&chars)
}

/// Removes pattern escapes from a literal component.
fn unescape(component: &str) -> String {
    let mut out = String::new();
    let mut escaped = false;
    for c in component.chars() {
        if c == '\\' && !escaped {
            escaped = true;
            continue;
        }
        escaped = false;
        out.push(c);
    }
    out
}

/// Pathname expansion: every existing path matching `pattern`, sorted,
/// written as the pattern was (relative stays relative).
pub(crate) fn expand_path(cwd: &str, pattern: &str, dotglob: bool) -> Vec<String> {
    expand_path_with(cwd, pattern, dotglob, false)
}

/// `expand_path`, with `shopt -s globstar`'s `**`: a component `**`
/// matches the folder itself and every folder below it (and, last,
/// every file below it too).
pub(crate) fn expand_path_with(
    cwd: &str,
    pattern: &str,
    dotglob: bool,
    globstar: bool,
) -> Vec<String> {
    let absolute = pattern.starts_with('/');
    let mut candidates = vec![if absolute {
        "/".to_string()
    } else {
        String::new()
    }];
    let components: Vec<&str> = pattern.split('/').filter(|c| !c.is_empty()).collect();
    for (i, component) in components.iter().enumerate() {
        let last = i + 1 == components.len();
        let mut next = Vec::new();
        if globstar && *component == "**" {
            for base in &candidates {
                let mut below = Vec::new();
                descendants(cwd, base, dotglob, !last, &mut below);
                if last {
                    if !base.is_empty() {
                        next.push(base.clone());
                    }
                    next.extend(below);
                } else {
                    next.push(base.clone());
                    next.extend(below.into_iter().map(|p| format!("{p}/")));
                }
            }
            candidates = next;
            continue;
        }
        for base in &candidates {
            if has_magic(component) {
                next.extend(matching_entries(cwd, base, component, dotglob));
            } else {
                let path = format!("{base}{}", unescape(component));
                let exists = last
                    || super::resolve_in(cwd, if path.is_empty() { "." } else { &path }).is_dir();
                if exists {
                    next.push(path);
                }
            }
        }
        if !last {
            next = next.into_iter().map(|p| format!("{p}/")).collect();
        }
        candidates = next;
    }
    let dirs_only = pattern.ends_with('/');
    let mut found: Vec<String> = candidates
        .into_iter()
        .filter(|p| std::fs::symlink_metadata(super::resolve_in(cwd, p)).is_ok())
        // `*/` names folders only.
        .filter(|p| !dirs_only || super::resolve_in(cwd, p).is_dir())
        .map(|p| {
            if pattern.ends_with('/') && !p.ends_with('/') {
                format!("{p}/")
            } else {
                p
            }
        })
        .collect();
    found.sort();
    found
}

/// Every entry below folder `base` (only folders with `dirs_only`),
/// without following links to folders; dot names only with `dotglob`.
fn descendants(cwd: &str, base: &str, dotglob: bool, dirs_only: bool, out: &mut Vec<String>) {
    let dir = super::resolve_in(cwd, if base.is_empty() { "." } else { base });
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut names: Vec<(String, bool)> = entries
        .filter_map(Result::ok)
        .filter_map(|e| {
            let is_dir = e.file_type().is_ok_and(|t| t.is_dir());
            e.file_name().into_string().ok().map(|n| (n, is_dir))
        })
        .filter(|(name, _)| dotglob || !name.starts_with('.'))
        .collect();
    names.sort();
    for (name, is_dir) in names {
        let path = format!("{base}{name}");
        if is_dir {
            out.push(path.clone());
            descendants(cwd, &format!("{path}/"), dotglob, dirs_only, out);
        } else if !dirs_only {
            out.push(path);
        }
    }
}

/// Entries of folder `base` whose name matches `component`; dot files
/// only when the pattern itself starts with a dot.
fn matching_entries(cwd: &str, base: &str, component: &str, dotglob: bool) -> Vec<String> {
    let dir = super::resolve_in(cwd, if base.is_empty() { "." } else { base });
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<String> = entries
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|name| {
            let dot_ok = component.starts_with('.') || (dotglob && name != "." && name != "..");
            !name.starts_with('.') || dot_ok
        })
        .filter(|name| pattern_matches(component, name))
        .map(|name| format!("{base}{name}"))
        .collect();
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_globs() {
        assert!(pattern_matches("*.txt", "a.txt"));
        assert!(!pattern_matches("*.txt", "a.txt.bak"));
        assert!(pattern_matches("a?c", "abc"));
        assert!(pattern_matches("[a-c]x", "bx"));
        assert!(!pattern_matches("[!a-c]x", "bx"));
        assert!(pattern_matches("[[:digit:]]*", "9lives"));
        assert!(pattern_matches("\\*", "*"));
        assert!(!pattern_matches("\\*", "a"));
        assert!(pattern_matches("*", ""));
        assert!(pattern_matches("a*b*c", "aXXbYYc"));
    }

    #[test]
    fn hostile_patterns_finish() {
        let pattern = "*a".repeat(200);
        assert!(!pattern_matches(&pattern, &"a".repeat(150)));
    }

    #[test]
    fn expands_paths() {
        let dir = tempfile::tempdir().expect("tempdir");
        for name in ["b.txt", "a.txt", ".h.txt", "c.md"] {
            std::fs::write(dir.path().join(name), b"").expect("write");
        }
        let cwd = dir.path().to_string_lossy().into_owned();
        assert_eq!(expand_path(&cwd, "*.txt", false), vec!["a.txt", "b.txt"]);
        assert!(expand_path(&cwd, "*.none", false).is_empty());
    }
}
