//! `tr [-cdst] SET1 [SET2]`: bytewise, with GNU's set syntax — escapes
//! (`\n`, `\\`, `\NNN`), ranges (`a-z`), classes (`[:upper:]`), repeats
//! (`[x*]`, `[x*N]`) and equivalence classes (`[=c=]`).

use super::Process;
use super::args::{HasArg, Spec};

const SPEC: Spec<'static> = Spec {
    short: "cCdst",
    long: &[
        ("complement", 'c', HasArg::No),
        ("delete", 'd', HasArg::No),
        ("squeeze-repeats", 's', HasArg::No),
        ("truncate-set1", 't', HasArg::No),
    ],
};

/// One element of a parsed set.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Item {
    Bytes(Vec<u8>),
    /// `[c*N]`; `None` fills SET2 up to SET1's length.
    Repeat(u8, Option<usize>),
}

pub(crate) fn tr(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let args = match super::parse_args(p, &SPEC, argv, 1) {
        Ok(a) => a,
        Err(status) => return status,
    };
    let complement = args.has('c') || args.has('C');
    let delete = args.has('d');
    let squeeze = args.has('s');
    let ops = &args.operands;
    let needed = if delete && squeeze {
        2
    } else if delete || (squeeze && ops.len() < 2) {
        1
    } else {
        2
    };
    if ops.is_empty() {
        return super::usage(p, "missing operand", 1);
    }
    if ops.len() < needed {
        let last = ops.last().cloned().unwrap_or_default();
        p.error(&format!("missing operand after {}", p.quote(&last)));
        let why = if squeeze {
            "Two strings must be given when both deleting and squeezing repeats."
        } else {
            "Two strings must be given when translating."
        };
        p.io.err_line(why);
        p.try_help("tr");
        return 1;
    }
    if ops.len() > needed {
        let extra = ops.get(needed).cloned().unwrap_or_default();
        let mut msg = format!("extra operand {}", p.quote(&extra));
        if delete && needed == 1 {
            msg.push_str("\nOnly one string may be given when deleting without squeezing repeats.");
        }
        return super::usage(p, &msg, 1);
    }
    let set1_items = match parse_set(ops.first().map_or("", String::as_str)) {
        Ok(s) => s,
        Err(m) => {
            p.error(&m);
            return 1;
        }
    };
    let mut set1 = flatten(&set1_items, 0);
    if complement {
        let mut member = [false; 256];
        for &b in &set1 {
            member[usize::from(b)] = true;
        }
        set1 = (0..=255u8).filter(|b| !member[usize::from(*b)]).collect();
    }
    let set2 = match ops.get(1) {
        Some(text) => match parse_set(text) {
            Ok(items) => Some(flatten(&items, set1.len())),
            Err(m) => {
                p.error(&m);
                return 1;
            }
        },
        None => None,
    };
    let data = p.io.stdin.borrow_mut().read_all();
    let translating = !delete && set2.is_some();
    let mut map: [u8; 256] = std::array::from_fn(|i| u8::try_from(i).unwrap_or(0));
    if translating {
        let mut set2 = set2.clone().unwrap_or_default();
        if set2.is_empty() && !set1.is_empty() {
            p.error("when not truncating set1, string2 must be non-empty");
            return 1;
        }
        if args.has('t') {
            set1.truncate(set2.len());
        } else if let Some(&last) = set2.last() {
            while set2.len() < set1.len() {
                set2.push(last);
            }
        }
        for (a, b) in set1.iter().zip(&set2) {
            map[usize::from(*a)] = *b;
        }
    }
    let mut in_set1 = [false; 256];
    for &b in &set1 {
        in_set1[usize::from(b)] = true;
    }
    let squeeze_set: Vec<u8> = if squeeze {
        if delete || translating {
            set2.clone().unwrap_or_default()
        } else {
            set1.clone()
        }
    } else {
        Vec::new()
    };
    let mut in_squeeze = [false; 256];
    for &b in &squeeze_set {
        in_squeeze[usize::from(b)] = true;
    }
    let mut out = Vec::with_capacity(data.len());
    let mut last: Option<u8> = None;
    for &b in &data {
        if delete && in_set1[usize::from(b)] {
            continue;
        }
        let c = if translating { map[usize::from(b)] } else { b };
        if squeeze && in_squeeze[usize::from(c)] && last == Some(c) {
            continue;
        }
        out.push(c);
        last = Some(c);
    }
    super::write_all(p, &out);
    0
}

/// The bytes a set stands for; `fill` is SET1's length for `[c*]`.
fn flatten(items: &[Item], fill: usize) -> Vec<u8> {
    let fixed: usize = items
        .iter()
        .map(|i| match i {
            Item::Bytes(b) => b.len(),
            Item::Repeat(_, Some(n)) => *n,
            Item::Repeat(_, None) => 0,
        })
        .sum();
    let mut out = Vec::new();
    for item in items {
        match item {
            Item::Bytes(b) => out.extend_from_slice(b),
            Item::Repeat(c, Some(n)) => out.extend(std::iter::repeat_n(*c, (*n).min(1 << 20))),
            Item::Repeat(c, None) => {
                out.extend(std::iter::repeat_n(*c, fill.saturating_sub(fixed)));
            }
        }
    }
    out
}

/// One possibly escaped byte at `i`; returns it and the next index.
fn unescape(s: &[u8], i: usize) -> (u8, usize) {
    let Some(&c) = s.get(i) else {
        return (0, i + 1);
    };
    if c != b'\\' {
        return (c, i + 1);
    }
    let Some(&n) = s.get(i + 1) else {
        return (b'\\', i + 1);
    };
    let simple = match n {
        b'n' => Some(b'\n'),
        b't' => Some(b'\t'),
        b'r' => Some(b'\r'),
        b'a' => Some(7),
        b'b' => Some(8),
        b'f' => Some(12),
        b'v' => Some(11),
        b'0'..=b'7' => None,
        other => Some(other),
    };
    if let Some(b) = simple {
        return (b, i + 2);
    }
    let mut value: u32 = 0;
    let mut j = i + 1;
    while j < i + 4 && s.get(j).is_some_and(|d| (b'0'..=b'7').contains(d)) {
        let next = value * 8 + u32::from(s.get(j).copied().unwrap_or(b'0') - b'0');
        if next > 255 {
            break;
        }
        value = next;
        j += 1;
    }
    (u8::try_from(value).unwrap_or(0), j)
}

fn class(name: &str) -> Option<Vec<u8>> {
    let pick = |f: fn(&u8) -> bool| (0..=255u8).filter(f).collect::<Vec<u8>>();
    Some(match name {
        "alpha" => pick(u8::is_ascii_alphabetic),
        "digit" => pick(u8::is_ascii_digit),
        "alnum" => pick(u8::is_ascii_alphanumeric),
        "upper" => pick(u8::is_ascii_uppercase),
        "lower" => pick(u8::is_ascii_lowercase),
        "space" => pick(|c| matches!(c, b' ' | b'\t' | b'\n' | 11 | 12 | b'\r')),
        "blank" => vec![b'\t', b' '],
        "punct" => pick(u8::is_ascii_punctuation),
        "print" => pick(|c| (32..127).contains(c)),
        "graph" => pick(u8::is_ascii_graphic),
        "cntrl" => pick(u8::is_ascii_control),
        "xdigit" => pick(u8::is_ascii_hexdigit),
        _ => return None,
    })
}

fn parse_set(text: &str) -> Result<Vec<Item>, String> {
    let s = text.as_bytes();
    let mut items = Vec::new();
    let mut i = 0;
    while i < s.len() {
        if s.get(i) == Some(&b'[')
            && let Some(rest) = text.get(i + 1..)
        {
            {
                if let Some(body) = rest.strip_prefix(':')
                    && let Some(end) = body.find(":]")
                {
                    let name = body.get(..end).unwrap_or_default();
                    let bytes = class(name)
                        .ok_or_else(|| format!("invalid character class \u{2018}{name}\u{2019}"))?;
                    items.push(Item::Bytes(bytes));
                    i += 1 + 1 + end + 2;
                    continue;
                }
                if let Some(body) = rest.strip_prefix('=')
                    && let Some(end) = body.find("=]")
                {
                    items.push(Item::Bytes(
                        body.get(..end).unwrap_or_default().as_bytes().to_vec(),
                    ));
                    i += 1 + 1 + end + 2;
                    continue;
                }
                // `[c*N]`
                let (c, after) = unescape(s, i + 1);
                if s.get(after) == Some(&b'*')
                    && let Some(close) = s
                        .get(after + 1..)
                        .and_then(|r| r.iter().position(|&b| b == b']'))
                {
                    let count_text = text.get(after + 1..after + 1 + close).unwrap_or_default();
                    let count = if count_text.is_empty() {
                        None
                    } else {
                        let parsed = if count_text.starts_with('0') {
                            usize::from_str_radix(count_text, 8).ok()
                        } else {
                            count_text.parse().ok()
                        };
                        match parsed {
                            Some(0) => None,
                            Some(n) => Some(n),
                            None => {
                                return Err(format!(
                                    "invalid repeat count \u{2018}{count_text}\u{2019} in [c*n] construct"
                                ));
                            }
                        }
                    };
                    items.push(Item::Repeat(c, count));
                    i = after + 2 + close;
                    continue;
                }
            }
        }
        let (c, next) = unescape(s, i);
        if s.get(next) == Some(&b'-') && next + 1 < s.len() {
            let (hi, after) = unescape(s, next + 1);
            if hi < c {
                return Err(format!(
                    "range-endpoints of \u{2018}{}-{}\u{2019} are in reverse collating sequence order",
                    char::from(c),
                    char::from(hi)
                ));
            }
            items.push(Item::Bytes((c..=hi).collect()));
            i = after;
            continue;
        }
        items.push(Item::Bytes(vec![c]));
        i = next;
    }
    Ok(items)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sets_expand() {
        assert_eq!(flatten(&parse_set("a-c\\n").unwrap(), 0), b"abc\n");
        assert_eq!(flatten(&parse_set("[:digit:]").unwrap(), 0), b"0123456789");
        assert_eq!(flatten(&parse_set("[x*]").unwrap(), 3), b"xxx");
        assert_eq!(flatten(&parse_set("\\101").unwrap(), 0), b"A");
        assert!(parse_set("z-a").is_err());
    }
}
