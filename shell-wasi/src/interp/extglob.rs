//! Extended glob patterns (`shopt -s extglob`): `?(a|b)`, `*(a|b)`,
//! `+(a|b)`, `@(a|b)` and `!(a|b)`, matched by backtracking over a parsed
//! pattern. Backtracking can explode on hostile patterns, so the work and
//! the depth are bounded: past the bound the pattern does not match.

use super::glob::bracket;

/// Most matching steps for one text.
const MAX_STEPS: usize = 200_000;
/// Deepest recursion (about one level per character matched): the wasm
/// stack is small, so texts longer than this rarely match extended
/// patterns that consume them character by character.
const MAX_DEPTH: usize = 256;

enum Node {
    Lit(char),
    Any,
    Star,
    /// A bracket expression, `[` through `]`.
    Class(Vec<char>),
    /// `?(...)`, `*(...)`, `+(...)`, `@(...)`, `!(...)`: the operator and
    /// the alternatives.
    Group(char, Vec<Vec<Node>>),
}

/// What must match after a sequence of nodes.
enum Cont<'a> {
    /// The text must end exactly here.
    End(usize),
    Then(&'a [Node], &'a Cont<'a>),
    /// One more repetition of a `*(...)`/`+(...)` group ended; the last
    /// one started at `start`.
    Again {
        alts: &'a [Vec<Node>],
        start: usize,
        next: &'a Cont<'a>,
    },
}

/// True if `pattern` uses an extended operator (unescaped `X(`).
pub(crate) fn has_extglob(pattern: &[char]) -> bool {
    let mut escaped = false;
    for (i, c) in pattern.iter().enumerate() {
        if escaped {
            escaped = false;
        } else if *c == '\\' {
            escaped = true;
        } else if "?*+@!".contains(*c) && pattern.get(i + 1) == Some(&'(') {
            return true;
        }
    }
    false
}

/// Matches the whole of `text`; `None` if the pattern is malformed.
pub(crate) fn matches(pattern: &[char], text: &[char]) -> Option<bool> {
    let mut i = 0;
    let nodes = parse_seq(pattern, &mut i, false)?;
    if i != pattern.len() {
        return None;
    }
    let mut m = Matcher {
        t: text,
        steps: 0,
        depth: 0,
    };
    Some(m.run(&nodes, 0, &Cont::End(text.len())))
}

fn parse_seq(p: &[char], i: &mut usize, in_group: bool) -> Option<Vec<Node>> {
    let mut nodes = Vec::new();
    while let Some(&c) = p.get(*i) {
        if in_group && (c == '|' || c == ')') {
            return Some(nodes);
        }
        if "?*+@!".contains(c) && p.get(*i + 1) == Some(&'(') {
            *i += 2;
            nodes.push(parse_group(p, i, c)?);
            continue;
        }
        *i += 1;
        nodes.push(match c {
            '\\' => {
                let next = p.get(*i).copied().unwrap_or('\\');
                *i += 1;
                Node::Lit(next)
            }
            '*' => Node::Star,
            '?' => Node::Any,
            '[' => match bracket(p, *i, 'x') {
                Some((_, len)) => {
                    let class = p.get(*i - 1..*i + len)?.to_vec();
                    *i += len;
                    Node::Class(class)
                }
                None => Node::Lit('['),
            },
            c => Node::Lit(c),
        });
    }
    (!in_group).then_some(nodes)
}

fn parse_group(p: &[char], i: &mut usize, op: char) -> Option<Node> {
    let mut alts = Vec::new();
    loop {
        alts.push(parse_seq(p, i, true)?);
        match p.get(*i) {
            Some('|') => *i += 1,
            Some(')') => {
                *i += 1;
                return Some(Node::Group(op, alts));
            }
            _ => return None,
        }
    }
}

struct Matcher<'t> {
    t: &'t [char],
    steps: usize,
    depth: usize,
}

impl Matcher<'_> {
    fn run(&mut self, nodes: &[Node], ti: usize, k: &Cont) -> bool {
        self.steps += 1;
        if self.steps > MAX_STEPS || self.depth > MAX_DEPTH {
            return false;
        }
        self.depth += 1;
        let result = self.run_node(nodes, ti, k);
        self.depth -= 1;
        result
    }

    fn run_node(&mut self, nodes: &[Node], ti: usize, k: &Cont) -> bool {
        let Some((first, rest)) = nodes.split_first() else {
            return self.cont(k, ti);
        };
        let len = self.t.len();
        let ch = self.t.get(ti).copied();
        match first {
            Node::Lit(c) => ch == Some(*c) && self.run(rest, ti + 1, k),
            Node::Any => ch.is_some() && self.run(rest, ti + 1, k),
            Node::Class(class) => {
                ch.and_then(|c| bracket(class, 1, c))
                    .is_some_and(|(m, _)| m)
                    && self.run(rest, ti + 1, k)
            }
            Node::Star => (ti..=len).any(|e| self.run(rest, e, k)),
            Node::Group(op, alts) => {
                let next = Cont::Then(rest, k);
                self.group(*op, alts, ti, rest, k, &next)
            }
        }
    }

    fn group(
        &mut self,
        op: char,
        alts: &[Vec<Node>],
        ti: usize,
        rest: &[Node],
        k: &Cont,
        next: &Cont,
    ) -> bool {
        let again = Cont::Again {
            alts,
            start: ti,
            next,
        };
        match op {
            '@' => alts.iter().any(|a| self.run(a, ti, next)),
            '?' => self.run(rest, ti, k) || alts.iter().any(|a| self.run(a, ti, next)),
            '*' => self.run(rest, ti, k) || alts.iter().any(|a| self.run(a, ti, &again)),
            '+' => alts.iter().any(|a| self.run(a, ti, &again)),
            _ => (ti..=self.t.len()).any(|e| {
                !alts.iter().any(|a| self.run(a, ti, &Cont::End(e))) && self.run(rest, e, k)
            }),
        }
    }

    fn cont(&mut self, k: &Cont, ti: usize) -> bool {
        match k {
            Cont::End(e) => ti == *e,
            Cont::Then(nodes, next) => self.run(nodes, ti, next),
            Cont::Again { alts, start, next } => {
                if self.cont(next, ti) {
                    return true;
                }
                // Another repetition, only if this one consumed something.
                let again = Cont::Again {
                    alts,
                    start: ti,
                    next,
                };
                ti > *start && alts.iter().any(|a| self.run(a, ti, &again))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(p: &str, t: &str) -> bool {
        let p: Vec<char> = p.chars().collect();
        let t: Vec<char> = t.chars().collect();
        matches(&p, &t).unwrap_or(false)
    }

    #[test]
    fn operators() {
        assert!(m("a*(b)c", "abbc"));
        assert!(m("a*(b)c", "ac"));
        assert!(!m("a+(b)c", "ac"));
        assert!(m("ab?(c).txt", "ab.txt"));
        assert!(m("@(abc|abd).txt", "abd.txt"));
        assert!(m("!(a*)", "def"));
        assert!(!m("!(a*)", "abc"));
        assert!(m("!(*d)d", "d"));
        assert!(m("+([0-9])", "8675309"));
        assert!(m("+(\\()", "(("));
    }

    #[test]
    fn hostile_patterns_end() {
        let text = "a".repeat(3000) + "b";
        assert!(!m("*(*(*(a)))c", &text));
    }
}
