//! `head` and `tail`: `-n [-|+]N`, `-c [-|+]N`, `-q`, `-v`, the old `-N`
//! form, and `==> NAME <==` headers for several files. `tail -f` prints
//! what is there and says that following is not possible here: nothing
//! else can write to the file while a command runs.

use super::args::{HasArg, Spec};
use super::{Process, read_input_until};
use crate::errors::strerror;
use crate::programs::quoting::single_quote;

/// What to print of each input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Amount {
    /// The first (head) or last (tail) N lines or bytes.
    Count(u64),
    /// head `-n -N`: all but the last N.
    AllBut(u64),
    /// tail `-n +N`: from the Nth on.
    From(u64),
}

const SPEC: Spec<'static> = Spec {
    short: "n:c:qvfFs:z",
    long: &[
        ("lines", 'n', HasArg::Yes),
        ("bytes", 'c', HasArg::Yes),
        ("quiet", 'q', HasArg::No),
        ("silent", 'q', HasArg::No),
        ("verbose", 'v', HasArg::No),
        ("follow", 'f', HasArg::Optional),
        ("retry", 'R', HasArg::No),
        ("sleep-interval", 's', HasArg::Yes),
        ("pid", 'p', HasArg::Yes),
        ("zero-terminated", 'z', HasArg::No),
    ],
};

/// `N` with GNU's multiplier suffixes (`b`, `K`, `kB`, `M`, `MiB`, ...).
pub(crate) fn parse_size(text: &str) -> Option<u64> {
    let digits_end = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (num, suffix) = text.split_at(digits_end);
    let n: u64 = if num.is_empty() {
        return None;
    } else {
        num.parse().ok().or(Some(u64::MAX))?
    };
    let power = |base: u64, exp: u32| base.checked_pow(exp);
    let mult = match suffix {
        "" => Some(1),
        "b" => Some(512),
        _ => {
            let mut chars = suffix.chars();
            let letter = chars.next()?;
            let exp = "KMGTPEZY".find(letter.to_ascii_uppercase())?;
            if letter == 'k' && chars.as_str().is_empty() {
                Some(1024)
            } else {
                let exp = u32::try_from(exp).ok()? + 1;
                match chars.as_str() {
                    "" | "iB" => power(1024, exp),
                    "B" => power(1000, exp),
                    _ => return None,
                }
            }
        }
    }?;
    Some(n.saturating_mul(mult))
}

/// Turns the obsolete `-5` / `+5` / `-5c` first argument into `-n`/`-c`.
fn obsolete_form(args: &[String], allow_plus: bool) -> Vec<String> {
    let mut out: Vec<String> = args.to_vec();
    let Some(first) = args.get(1) else {
        return out;
    };
    let (sign, body) = if let Some(b) = first.strip_prefix('-') {
        ('-', b)
    } else if let Some(b) = first.strip_prefix('+').filter(|_| allow_plus) {
        ('+', b)
    } else {
        return out;
    };
    let digits: String = body.chars().take_while(char::is_ascii_digit).collect();
    let rest = body.get(digits.len()..).unwrap_or_default();
    if digits.is_empty() || !matches!(rest, "" | "l" | "c" | "b" | "k" | "m") {
        return out;
    }
    let flag = if rest == "c" { "-c" } else { "-n" };
    let value = if sign == '+' {
        format!("+{digits}")
    } else {
        digits
    };
    out.splice(1..2, [flag.to_string(), value]);
    out
}

pub(crate) fn head(p: &mut Process<'_>, argv: &[String]) -> i32 {
    run(p, &obsolete_form(argv, false), false)
}

pub(crate) fn tail(p: &mut Process<'_>, argv: &[String]) -> i32 {
    run(p, &obsolete_form(argv, true), true)
}

fn run(p: &mut Process<'_>, argv: &[String], is_tail: bool) -> i32 {
    let args = match super::parse_args(p, &SPEC, argv, 1) {
        Ok(a) => a,
        Err(status) => return status,
    };
    let mut bytes_mode = false;
    let mut amount = Amount::Count(10);
    let mut verbose = None;
    for opt in &args.opts {
        match opt.key {
            'n' | 'c' => {
                bytes_mode = opt.key == 'c';
                let value = opt.value.clone().unwrap_or_default();
                match parse_amount(&value, is_tail) {
                    Some(a) => amount = a,
                    None => {
                        let what = if bytes_mode { "bytes" } else { "lines" };
                        p.error(&format!("invalid number of {what}: {}", p.quote(&value)));
                        return 1;
                    }
                }
            }
            'q' => verbose = Some(false),
            'v' => verbose = Some(true),
            'f' | 'F' if is_tail => {}
            'f' | 'F' | 's' | 'R' | 'p' => {
                return super::usage(p, &format!("invalid option -- '{}'", opt.key), 1);
            }
            _ => {}
        }
    }
    let follow = is_tail && args.has('f') || args.has('F');
    let sep = if args.has('z') { 0 } else { b'\n' };
    let mut operands = args.operands.clone();
    if operands.is_empty() {
        operands.push("-".to_string());
    }
    let headers = verbose.unwrap_or(operands.len() > 1);
    let mut status = 0;
    let mut first = true;
    for name in &operands {
        // A device (`/dev/urandom`) is read only as far as head needs.
        let needed = |data: &[u8]| match (is_tail, amount) {
            (false, Amount::Count(n)) if bytes_mode => data.len() as u64 >= n,
            (false, Amount::Count(n)) => data.iter().filter(|b| **b == sep).count() as u64 >= n,
            _ => false,
        };
        let data = match read_input_until(p, name, needed) {
            Ok(d) => d,
            Err(e) if e.kind() == std::io::ErrorKind::IsADirectory => {
                if headers {
                    print_header(p, name, &mut first);
                }
                p.error(&format!(
                    "error reading {}: Is a directory",
                    single_quote(name)
                ));
                status = 1;
                continue;
            }
            Err(e) => {
                p.error(&format!(
                    "cannot open {} for reading: {}",
                    single_quote(name),
                    strerror(&e)
                ));
                status = 1;
                continue;
            }
        };
        if headers {
            print_header(p, name, &mut first);
        }
        let slice = select(&data, amount, bytes_mode, is_tail, sep);
        if !super::write_all(p, slice) {
            return status;
        }
    }
    if follow {
        p.error("cannot follow files in this sandbox: printed their current contents");
    }
    status
}

fn print_header(p: &Process<'_>, name: &str, first: &mut bool) {
    let shown = if name == "-" { "standard input" } else { name };
    let lead = if *first { "" } else { "\n" };
    *first = false;
    p.out(format!("{lead}==> {shown} <==\n").as_bytes());
}

fn parse_amount(value: &str, is_tail: bool) -> Option<Amount> {
    if let Some(rest) = value.strip_prefix('+') {
        let n = parse_size(rest)?;
        return Some(if is_tail {
            Amount::From(n)
        } else {
            Amount::Count(n)
        });
    }
    if let Some(rest) = value.strip_prefix('-') {
        let n = parse_size(rest)?;
        return Some(if is_tail {
            Amount::Count(n)
        } else {
            Amount::AllBut(n)
        });
    }
    parse_size(value).map(Amount::Count)
}

/// The part of `data` to print.
fn select(data: &[u8], amount: Amount, bytes: bool, is_tail: bool, sep: u8) -> &[u8] {
    let len = data.len();
    let clamp = |n: u64| usize::try_from(n).unwrap_or(usize::MAX).min(len);
    if bytes {
        let (start, end) = match (amount, is_tail) {
            (Amount::Count(n), false) => (0, clamp(n)),
            (Amount::AllBut(n), _) => (0, len - clamp(n)),
            (Amount::Count(n), true) => (len - clamp(n), len),
            (Amount::From(n), _) => (clamp(n.saturating_sub(1)), len),
        };
        return data.get(start..end).unwrap_or_default();
    }
    // Offsets just past each separator.
    let ends: Vec<usize> = data
        .iter()
        .enumerate()
        .filter(|&(_, &b)| b == sep)
        .map(|(i, _)| i + 1)
        .collect();
    let total_lines = ends.len() + usize::from(data.last().is_some_and(|&b| b != sep));
    let line_start = |k: usize| -> usize {
        if k == 0 {
            0
        } else {
            ends.get(k - 1).copied().unwrap_or(len)
        }
    };
    let (start, end) = match (amount, is_tail) {
        (Amount::Count(n), false) => (0, line_start(clamp_lines(n, total_lines))),
        (Amount::AllBut(n), _) => (0, line_start(total_lines - clamp_lines(n, total_lines))),
        (Amount::Count(n), true) => (line_start(total_lines - clamp_lines(n, total_lines)), len),
        (Amount::From(n), _) => (
            line_start(clamp_lines(n.saturating_sub(1), total_lines)),
            len,
        ),
    };
    data.get(start..end).unwrap_or_default()
}

fn clamp_lines(n: u64, total: usize) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX).min(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selects_lines_and_bytes() {
        let d = b"1\n2\n3\n4";
        assert_eq!(select(d, Amount::Count(2), false, false, b'\n'), b"1\n2\n");
        assert_eq!(select(d, Amount::Count(2), false, true, b'\n'), b"3\n4");
        assert_eq!(select(d, Amount::From(3), false, true, b'\n'), b"3\n4");
        assert_eq!(
            select(d, Amount::AllBut(1), false, false, b'\n'),
            b"1\n2\n3\n"
        );
        assert_eq!(select(d, Amount::Count(3), true, false, b'\n'), b"1\n2");
        assert_eq!(select(d, Amount::Count(99), false, true, b'\n'), d);
    }

    #[test]
    fn sizes_and_obsolete_form() {
        assert_eq!(parse_size("2K"), Some(2048));
        assert_eq!(parse_size("1kB"), Some(1000));
        assert_eq!(parse_size("x"), None);
        let argv: Vec<String> = ["tail", "-3", "f"]
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(obsolete_form(&argv, true), vec!["tail", "-n", "3", "f"]);
    }
}
