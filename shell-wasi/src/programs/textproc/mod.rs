//! The text processors agents lean on: `grep`, `sed`, `awk`, `jq`.
//!
//! Each follows the tool installed on the reference machine (GNU grep
//! 3.8, GNU sed 4.9, mawk 1.3.4 as `awk`, jq 1.6) in output bytes, exit
//! status and error wording. Regular expressions are POSIX patterns
//! translated for the `regex` crate (`posix_regex.rs`), so none of them
//! can backtrack catastrophically.

mod awk;
mod grep;
mod jq;
pub(crate) mod posix_regex;
mod sed;

use super::{Process, Table};
use crate::errors::strerror;

/// This family's utilities, sorted by name.
pub(crate) const TABLE: Table = &[
    ("awk", awk::awk),
    ("egrep", grep::grep),
    ("fgrep", grep::grep),
    ("gawk", awk::awk),
    ("grep", grep::grep),
    ("jq", jq::jq),
    ("mawk", awk::awk),
    ("nawk", awk::awk),
    ("sed", sed::sed),
];

/// The bytes of an input operand: `-` is stdin, anything else a file
/// relative to the process's folder. `Err` is the strerror text.
pub(crate) fn read_source(p: &Process<'_>, name: &str) -> Result<Vec<u8>, String> {
    if name == "-" || name == "/dev/stdin" {
        return Ok(p.io.stdin.borrow_mut().read_all());
    }
    let path = p.resolve(name);
    if path.is_dir() {
        return Err("Is a directory".to_string());
    }
    std::fs::read(path).map_err(|e| strerror(&e).to_string())
}

/// fnmatch(3) without flags: `*`, `?` and `[...]` over a file name.
pub(crate) fn glob_match(glob: &str, name: &str) -> bool {
    let g: Vec<char> = glob.chars().collect();
    let n: Vec<char> = name.chars().collect();
    glob_at(&g, &n)
}

fn glob_at(g: &[char], n: &[char]) -> bool {
    match g.split_first() {
        None => n.is_empty(),
        Some(('*', rest)) => (0..=n.len()).any(|i| glob_at(rest, n.get(i..).unwrap_or_default())),
        Some(('?', rest)) => !n.is_empty() && glob_at(rest, n.get(1..).unwrap_or_default()),
        Some(('[', rest)) => {
            let Some((&c, n_rest)) = n.split_first() else {
                return false;
            };
            let Some(close) = rest.iter().skip(1).position(|&x| x == ']').map(|i| i + 1) else {
                return c == '[' && glob_at(rest, n_rest);
            };
            let set = rest.get(..close).unwrap_or_default();
            let (negate, set) = match set.split_first() {
                Some(('!' | '^', s)) => (true, s),
                _ => (false, set),
            };
            let mut hit = false;
            let mut i = 0;
            while let Some(&a) = set.get(i) {
                if set.get(i + 1) == Some(&'-')
                    && let Some(&b) = set.get(i + 2)
                {
                    hit |= a <= c && c <= b;
                    i += 3;
                } else {
                    hit |= a == c;
                    i += 1;
                }
            }
            hit != negate && glob_at(rest.get(close + 1..).unwrap_or_default(), n_rest)
        }
        Some(('\\', rest)) if !rest.is_empty() => {
            n.first() == rest.first()
                && glob_at(
                    rest.get(1..).unwrap_or_default(),
                    n.get(1..).unwrap_or_default(),
                )
        }
        Some((c, rest)) => n.first() == Some(c) && glob_at(rest, n.get(1..).unwrap_or_default()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_like_fnmatch() {
        assert!(glob_match("*.rs", "main.rs"));
        assert!(!glob_match("*.rs", "main.rsx"));
        assert!(glob_match("a?[0-9]", "ab7"));
        assert!(glob_match("[!a]*", "bc"));
        assert!(!glob_match("[!a]*", "ac"));
    }
}
