//! `expr`: GNU's expression evaluator for old-style scripts: `|`, `&`,
//! comparisons, `+ - * / %`, `:` (anchored regex match), `length`,
//! `substr`, `index`, `match`, and parentheses. Exit status 0 when the
//! result is neither null nor 0, 1 when it is, 2 on a bad expression.

use super::Process;

/// An evaluation failure and GNU's wording for it.
struct Fail(String);

struct Parser<'a> {
    args: &'a [String],
    at: usize,
}

impl<'a> Parser<'a> {
    fn peek(&self) -> Option<&'a str> {
        self.args.get(self.at).map(String::as_str)
    }

    fn next(&mut self) -> Result<&'a str, Fail> {
        let word = self.peek().ok_or_else(|| {
            Fail("syntax error: missing argument after ‘".to_string() + self.prev() + "’")
        })?;
        self.at += 1;
        Ok(word)
    }

    fn prev(&self) -> &'a str {
        self.args
            .get(self.at.wrapping_sub(1))
            .map_or("", String::as_str)
    }

    fn or(&mut self) -> Result<String, Fail> {
        let mut left = self.and()?;
        while self.peek() == Some("|") {
            self.at += 1;
            let right = self.and()?;
            if is_null(&left) {
                left = if is_null(&right) { "0".into() } else { right };
            }
        }
        Ok(left)
    }

    fn and(&mut self) -> Result<String, Fail> {
        let mut left = self.compare()?;
        while self.peek() == Some("&") {
            self.at += 1;
            let right = self.compare()?;
            if is_null(&left) || is_null(&right) {
                left = "0".into();
            }
        }
        Ok(left)
    }

    fn compare(&mut self) -> Result<String, Fail> {
        let mut left = self.sum()?;
        while let Some(op @ ("<" | "<=" | "=" | "==" | "!=" | ">=" | ">")) = self.peek() {
            self.at += 1;
            let right = self.sum()?;
            let ord = match (left.parse::<i128>(), right.parse::<i128>()) {
                (Ok(a), Ok(b)) => a.cmp(&b),
                _ => left.cmp(&right),
            };
            let truth = match op {
                "<" => ord.is_lt(),
                "<=" => ord.is_le(),
                "=" | "==" => ord.is_eq(),
                "!=" => ord.is_ne(),
                ">=" => ord.is_ge(),
                _ => ord.is_gt(),
            };
            left = u8::from(truth).to_string();
        }
        Ok(left)
    }

    fn sum(&mut self) -> Result<String, Fail> {
        let mut left = self.product()?;
        while let Some(op @ ("+" | "-")) = self.peek() {
            self.at += 1;
            let right = self.product()?;
            let (a, b) = (int(&left)?, int(&right)?);
            let value = if op == "+" {
                a.checked_add(b)
            } else {
                a.checked_sub(b)
            };
            left = value
                .ok_or_else(|| Fail("result too large".into()))?
                .to_string();
        }
        Ok(left)
    }

    fn product(&mut self) -> Result<String, Fail> {
        let mut left = self.matching()?;
        while let Some(op @ ("*" | "/" | "%")) = self.peek() {
            self.at += 1;
            let right = self.matching()?;
            let (a, b) = (int(&left)?, int(&right)?);
            if op != "*" && b == 0 {
                return Err(Fail("division by zero".into()));
            }
            let value = match op {
                "*" => a.checked_mul(b),
                "/" => a.checked_div(b),
                _ => a.checked_rem(b),
            };
            left = value
                .ok_or_else(|| Fail("result too large".into()))?
                .to_string();
        }
        Ok(left)
    }

    fn matching(&mut self) -> Result<String, Fail> {
        let mut left = self.primary()?;
        while self.peek() == Some(":") {
            self.at += 1;
            let pattern = self.primary()?;
            left = regex_match(&left, &pattern)?;
        }
        Ok(left)
    }

    fn primary(&mut self) -> Result<String, Fail> {
        match self.next()? {
            "(" => {
                let value = self.or()?;
                match self.next() {
                    Ok(")") => Ok(value),
                    _ => Err(Fail("syntax error: expecting ‘)’".into())),
                }
            }
            "length" => Ok(self.primary()?.chars().count().to_string()),
            "match" => {
                let text = self.primary()?;
                let pattern = self.primary()?;
                regex_match(&text, &pattern)
            }
            "substr" => {
                let text = self.primary()?;
                let (pos, len) = (self.primary()?, self.primary()?);
                let (Ok(pos), Ok(len)) = (pos.parse::<usize>(), len.parse::<usize>()) else {
                    return Ok(String::new());
                };
                Ok(text
                    .chars()
                    .skip(pos.saturating_sub(1))
                    .take(if pos == 0 { 0 } else { len })
                    .collect())
            }
            "index" => {
                let text = self.primary()?;
                let chars = self.primary()?;
                let at = text
                    .chars()
                    .position(|c| chars.contains(c))
                    .map_or(0, |i| i + 1);
                Ok(at.to_string())
            }
            "+" => self.next().map(str::to_string),
            word => Ok(word.to_string()),
        }
    }
}

fn is_null(value: &str) -> bool {
    value.is_empty() || value.parse::<i128>().is_ok_and(|n| n == 0)
}

fn int(value: &str) -> Result<i128, Fail> {
    value
        .parse::<i128>()
        .map_err(|_| Fail("non-integer argument".into()))
}

/// `STRING : REGEX`: anchored at the start; the first `\( \)` group's text,
/// else the number of characters matched.
fn regex_match(text: &str, pattern: &str) -> Result<String, Fail> {
    use crate::programs::textproc::posix_regex::{Dialect, translate};
    let translated = translate(pattern, Dialect::Basic)
        .map_err(|_| Fail("Invalid regular expression".into()))?;
    let re = regex::Regex::new(&format!("^(?:{translated})"))
        .map_err(|_| Fail("Invalid regular expression".into()))?;
    let Some(caps) = re.captures(text) else {
        return Ok(if re.captures_len() > 1 {
            String::new()
        } else {
            "0".into()
        });
    };
    Ok(match caps.get(1) {
        Some(group) => group.as_str().to_string(),
        None if re.captures_len() > 1 => String::new(),
        None => caps
            .get(0)
            .map_or(0, |m| m.as_str().chars().count())
            .to_string(),
    })
}

pub(crate) fn expr(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let args = argv.get(1..).unwrap_or_default();
    if args.is_empty() {
        p.error("missing operand");
        p.try_help("expr");
        return 2;
    }
    let mut parser = Parser { args, at: 0 };
    let result = parser.or().and_then(|value| match parser.peek() {
        None => Ok(value),
        Some(extra) => Err(Fail(format!("syntax error: unexpected argument ‘{extra}’"))),
    });
    match result {
        Ok(value) => {
            p.out(format!("{value}\n").as_bytes());
            i32::from(is_null(&value))
        }
        Err(Fail(message)) => {
            p.error(&message);
            2
        }
    }
}
