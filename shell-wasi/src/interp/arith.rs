//! Arithmetic: `$(( ))`, `(( ))`, `for (( ))`, array indices and
//! `${x:off:len}`. brush-parser builds the expression tree; evaluation,
//! with bash's 64-bit wrapping integers, is ours.

use brush_parser::ast::{
    ArithmeticExpr, ArithmeticTarget, BinaryOperator, UnaryAssignmentOperator, UnaryOperator,
};

use super::Shell;
use super::vars::Vars;
use crate::errors::ShellError;
use crate::streams::Io;

/// How deep a variable may refer to another expression (`a=b; b=a+1`).
const MAX_INDIRECTION: usize = 32;
/// Deepest parenthesis nesting accepted before parsing.
const MAX_PARENS: usize = 64;

impl Shell {
    /// Expands `$x` and `$(...)` in arithmetic text, then evaluates it.
    pub(crate) fn arith_expand_eval(&mut self, text: &str, io: &Io) -> Result<i64, ShellError> {
        let parts = self.word_parts(text, io)?;
        let expanded = super::expand::join_parts(&parts);
        let mut eval = Evaluator {
            vars: Access::Write(&mut self.vars),
            depth: 0,
        };
        eval.eval_text(&expanded)
    }
}

/// Evaluates an array index such as `i+1` without side effects: the
/// evaluator only reads the variables (copying them would make `a[$i]=x`
/// in a loop quadratic).
pub(crate) fn eval_index(shell: &Shell, index: &str) -> Result<i64, ShellError> {
    let text = substitute_simple_vars(&shell.vars, index);
    if let Some(n) = parse_number(text.trim()) {
        return Ok(n);
    }
    let mut eval = Evaluator {
        vars: Access::Read(&shell.vars),
        depth: 0,
    };
    eval.eval_text(&text)
}

/// An associative array's subscript from its raw text: variables
/// substituted, surrounding quotes removed (`m[$k]`, `m["$k"]`, `m[key]`).
pub(crate) fn subscript_key(vars: &Vars, index: &str) -> String {
    let text = substitute_simple_vars(vars, index);
    let unquoted = text
        .strip_prefix('"')
        .and_then(|t| t.strip_suffix('"'))
        .or_else(|| text.strip_prefix('\'').and_then(|t| t.strip_suffix('\'')));
    unquoted.map_or(text.clone(), str::to_string)
}

/// The text of a parsed subscript, for associative arrays (whose keys
/// are strings: the `$k` in `m[$k]` was substituted before parsing).
fn index_text(index: &ArithmeticExpr) -> String {
    index.to_string()
}

/// `$name` and `${name}` replaced by their values (index expressions
/// only; full expansion needs a mutable shell).
fn substitute_simple_vars(vars: &Vars, text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(pos) = rest.find('$') {
        out.push_str(rest.get(..pos).unwrap_or(""));
        let after = rest.get(pos + 1..).unwrap_or("");
        let (name, skip) = if let Some(inner) = after.strip_prefix('{') {
            let end = inner.find('}').unwrap_or(inner.len());
            (inner.get(..end).unwrap_or(""), end + 2)
        } else {
            let end = after
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(after.len());
            (after.get(..end).unwrap_or(""), end)
        };
        out.push_str(vars.scalar(name).unwrap_or("0"));
        rest = after.get(skip..).unwrap_or("");
    }
    out.push_str(rest);
    out
}

struct Evaluator<'a> {
    vars: Access<'a>,
    depth: usize,
}

/// What an evaluation may do to the variables: index expressions only
/// read them; `$(( ))` and `(( ))` may assign.
enum Access<'a> {
    Read(&'a Vars),
    Write(&'a mut Vars),
}

impl Access<'_> {
    fn vars(&self) -> &Vars {
        match self {
            Access::Read(v) => v,
            Access::Write(v) => v,
        }
    }
}

fn error(expr: &str, detail: &str) -> ShellError {
    ShellError::Arithmetic {
        expr: expr.trim_start().to_string(),
        detail: detail.to_string(),
    }
}

impl Evaluator<'_> {
    fn eval_text(&mut self, text: &str) -> Result<i64, ShellError> {
        if text.trim().is_empty() {
            return Ok(0);
        }
        if text.matches('(').count() > MAX_PARENS {
            return Err(error(text, "expression nested too deeply"));
        }
        let expr = brush_parser::arithmetic::parse(text).map_err(|_| {
            if let Some(word) = bad_number(text) {
                return error(
                    &word,
                    &format!("value too great for base (error token is \"{word}\")"),
                );
            }
            let token = error_token(text);
            error(
                text,
                &format!("syntax error: operand expected (error token is \"{token}\")"),
            )
        })?;
        self.eval(&expr, text)
    }

    fn eval(&mut self, e: &ArithmeticExpr, text: &str) -> Result<i64, ShellError> {
        Ok(match e {
            ArithmeticExpr::Literal(n) => *n,
            ArithmeticExpr::Reference(target) => self.read(target, text)?,
            ArithmeticExpr::UnaryOp(op, inner) => {
                let v = self.eval(inner, text)?;
                match op {
                    UnaryOperator::UnaryPlus => v,
                    UnaryOperator::UnaryMinus => v.wrapping_neg(),
                    UnaryOperator::BitwiseNot => !v,
                    UnaryOperator::LogicalNot => i64::from(v == 0),
                }
            }
            ArithmeticExpr::BinaryOp(op, left, right) => self.binary(*op, left, right, text)?,
            ArithmeticExpr::Conditional(cond, then, otherwise) => {
                if self.eval(cond, text)? != 0 {
                    self.eval(then, text)?
                } else {
                    self.eval(otherwise, text)?
                }
            }
            ArithmeticExpr::Assignment(target, value) => {
                let v = self.eval(value, text)?;
                self.write(target, v, text)?;
                v
            }
            ArithmeticExpr::BinaryAssignment(op, target, value) => {
                let current = self.read(target, text)?;
                let operand = self.eval(value, text)?;
                let v = apply(*op, current, operand, text)?;
                self.write(target, v, text)?;
                v
            }
            ArithmeticExpr::UnaryAssignment(op, target) => {
                let current = self.read(target, text)?;
                let (new, result) = match op {
                    UnaryAssignmentOperator::PrefixIncrement => {
                        (current.wrapping_add(1), current.wrapping_add(1))
                    }
                    UnaryAssignmentOperator::PrefixDecrement => {
                        (current.wrapping_sub(1), current.wrapping_sub(1))
                    }
                    UnaryAssignmentOperator::PostfixIncrement => (current.wrapping_add(1), current),
                    UnaryAssignmentOperator::PostfixDecrement => (current.wrapping_sub(1), current),
                };
                self.write(target, new, text)?;
                result
            }
        })
    }

    fn binary(
        &mut self,
        op: BinaryOperator,
        left: &ArithmeticExpr,
        right: &ArithmeticExpr,
        text: &str,
    ) -> Result<i64, ShellError> {
        // `&&` and `||` short-circuit: `(( x && y++ ))`.
        match op {
            BinaryOperator::LogicalAnd => {
                return Ok(i64::from(
                    self.eval(left, text)? != 0 && self.eval(right, text)? != 0,
                ));
            }
            BinaryOperator::LogicalOr => {
                return Ok(i64::from(
                    self.eval(left, text)? != 0 || self.eval(right, text)? != 0,
                ));
            }
            _ => {}
        }
        let l = self.eval(left, text)?;
        let r = self.eval(right, text)?;
        apply(op, l, r, text)
    }

    fn read(&mut self, target: &ArithmeticTarget, text: &str) -> Result<i64, ShellError> {
        let raw = match target {
            ArithmeticTarget::Variable(name) => self.vars.vars().scalar(name).map(str::to_string),
            ArithmeticTarget::ArrayElement(name, index) if self.vars.vars().is_assoc(name) => {
                let key = subscript_key(self.vars.vars(), &index_text(index));
                self.vars.vars().get_key(name, &key).map(str::to_string)
            }
            ArithmeticTarget::ArrayElement(name, index) => {
                let i = self.eval(index, text)?;
                match self.vars.vars().get(name).map(|v| &v.value) {
                    Some(super::vars::Value::Indexed(map)) => {
                        usize::try_from(i).ok().and_then(|i| map.get(&i)).cloned()
                    }
                    Some(super::vars::Value::Scalar(s)) if i == 0 => Some(s.clone()),
                    _ => None,
                }
            }
        };
        let Some(raw) = raw else { return Ok(0) };
        if let Some(n) = parse_number(raw.trim()) {
            return Ok(n);
        }
        // A variable holding an expression is evaluated in turn.
        if self.depth >= MAX_INDIRECTION {
            return Err(error(&raw, "expression recursion level exceeded"));
        }
        self.depth += 1;
        let v = self.eval_text(&raw);
        self.depth -= 1;
        v
    }

    fn write(
        &mut self,
        target: &ArithmeticTarget,
        value: i64,
        text: &str,
    ) -> Result<(), ShellError> {
        if let ArithmeticTarget::ArrayElement(name, index) = target
            && self.vars.vars().is_assoc(name)
        {
            let key = subscript_key(self.vars.vars(), &index_text(index));
            let Access::Write(vars) = &mut self.vars else {
                return Err(error(text, "attempted assignment to non-variable"));
            };
            return vars.set_key(name, key, value.to_string());
        }
        let index = match target {
            ArithmeticTarget::Variable(_) => None,
            ArithmeticTarget::ArrayElement(_, index) => {
                let i = self.eval(index, text)?;
                Some(usize::try_from(i).map_err(|_| error(text, "bad array subscript"))?)
            }
        };
        let Access::Write(vars) = &mut self.vars else {
            return Err(error(text, "attempted assignment to non-variable"));
        };
        match (target, index) {
            (ArithmeticTarget::ArrayElement(name, _), Some(i)) => {
                vars.set_element(name, i, value.to_string())
            }
            (ArithmeticTarget::Variable(name) | ArithmeticTarget::ArrayElement(name, _), _) => {
                vars.set(name, value.to_string())
            }
        }
    }
}

/// A word of the expression that starts like a number but is not one in
/// its base (`08`, `10#z`), which bash reports as too great for the base.
fn bad_number(text: &str) -> Option<String> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '#' || c == '_' || c == '@'))
        .find(|w| {
            w.starts_with(|c: char| c.is_ascii_digit())
                && parse_number(w).is_none()
                && !w.eq_ignore_ascii_case("0x")
        })
        .map(str::to_string)
}

/// bash reports the text from the operator where parsing gave up; the
/// last operator is a good approximation.
fn error_token(text: &str) -> &str {
    let trimmed = text.trim();
    let start = trimmed.rfind(|c: char| !(c.is_alphanumeric() || c == '_' || c.is_whitespace()));
    start.and_then(|i| trimmed.get(i..)).unwrap_or(trimmed)
}

fn apply(op: BinaryOperator, l: i64, r: i64, text: &str) -> Result<i64, ShellError> {
    use BinaryOperator as B;
    Ok(match op {
        B::Power => {
            if r < 0 {
                return Err(error(text, "exponent less than 0 (error token is \"0\")"));
            }
            l.wrapping_pow(u32::try_from(r).unwrap_or(u32::MAX))
        }
        B::Multiply => l.wrapping_mul(r),
        B::Divide | B::Modulo => {
            if r == 0 {
                let token = text
                    .trim_start()
                    .rsplit(['/', '%'])
                    .next()
                    .unwrap_or("0")
                    .trim_start()
                    .to_string();
                return Err(error(
                    text,
                    &format!("division by 0 (error token is \"{token}\")"),
                ));
            }
            if matches!(op, B::Divide) {
                l.wrapping_div(r)
            } else {
                l.wrapping_rem(r)
            }
        }
        B::Comma => r,
        B::Add => l.wrapping_add(r),
        B::Subtract => l.wrapping_sub(r),
        B::ShiftLeft => l.wrapping_shl(u32::try_from(r & 63).unwrap_or(0)),
        B::ShiftRight => l.wrapping_shr(u32::try_from(r & 63).unwrap_or(0)),
        B::LessThan => i64::from(l < r),
        B::LessThanOrEqualTo => i64::from(l <= r),
        B::GreaterThan => i64::from(l > r),
        B::GreaterThanOrEqualTo => i64::from(l >= r),
        B::Equals => i64::from(l == r),
        B::NotEquals => i64::from(l != r),
        B::BitwiseAnd => l & r,
        B::BitwiseXor => l ^ r,
        B::BitwiseOr => l | r,
        B::LogicalAnd => i64::from(l != 0 && r != 0),
        B::LogicalOr => i64::from(l != 0 || r != 0),
    })
}

/// An integer as bash reads it: decimal, `0x` hex, leading-0 octal,
/// `base#digits`.
pub(crate) fn parse_number(s: &str) -> Option<i64> {
    let (neg, body) = match s.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    if body.is_empty() {
        return None;
    }
    let value = if let Some(hex) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        i64::from_str_radix(hex, 16).ok()?
    } else if let Some((base, digits)) = body.split_once('#') {
        let base: u32 = base.parse().ok()?;
        if !(2..=36).contains(&base) {
            return None;
        }
        i64::from_str_radix(digits, base).ok()?
    } else if body.len() > 1 && body.starts_with('0') {
        i64::from_str_radix(body, 8).ok()?
    } else {
        body.parse().ok()?
    };
    Some(if neg { value.wrapping_neg() } else { value })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eval(text: &str) -> Result<i64, ShellError> {
        let mut vars = Vars::default();
        vars.set("x", "5".into()).expect("set");
        vars.set("e", "x*2".into()).expect("set");
        Evaluator {
            vars: Access::Write(&mut vars),
            depth: 0,
        }
        .eval_text(text)
    }

    #[test]
    fn evaluates() {
        assert_eq!(eval("1 + 2 * 3").ok(), Some(7));
        assert_eq!(eval("x ** 2").ok(), Some(25));
        assert_eq!(eval("e + 1").ok(), Some(11));
        assert_eq!(eval("x > 3 ? 1 : 0").ok(), Some(1));
        assert_eq!(eval("x++ + x").ok(), Some(11));
        assert!(eval("1 / 0").is_err());
    }

    #[test]
    fn self_reference_is_bounded() {
        let mut vars = Vars::default();
        vars.set("a", "a+1".into()).expect("set");
        assert!(
            Evaluator {
                vars: Access::Write(&mut vars),
                depth: 0
            }
            .eval_text("a")
            .is_err()
        );
    }

    #[test]
    fn numbers_in_bases() {
        assert_eq!(parse_number("0x1f"), Some(31));
        assert_eq!(parse_number("010"), Some(8));
        assert_eq!(parse_number("2#101"), Some(5));
        assert_eq!(parse_number("abc"), None);
    }
}
