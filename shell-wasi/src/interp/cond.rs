//! `[[ ... ]]`: like `test`, but operands are expanded without splitting,
//! `==`/`!=` take patterns, `-eq` and friends take arithmetic, and `&&`,
//! `||` short-circuit.

use brush_parser::ast::{self, BinaryPredicate, ExtendedTestExpr};

use super::Shell;
use crate::errors::{ShellError, Unwind};
use crate::streams::Io;
use crate::utils::quoting::trace_quote;
use crate::utils::test::{TestContext, binary, unary};

/// Why a `[[ ]]` could not be decided.
enum CondError {
    Shell(ShellError),
    Message(String),
    /// Undecidable without a message (an invalid `=~` regex: status 2).
    Status(i32),
}

impl From<ShellError> for CondError {
    fn from(err: ShellError) -> Self {
        Self::Shell(err)
    }
}

impl Shell {
    pub(crate) fn run_extended_test(
        &mut self,
        expr: &ExtendedTestExpr,
        io: &Io,
    ) -> Result<i32, Unwind> {
        match self.eval_cond(expr, io) {
            Ok(true) => Ok(0),
            Ok(false) => Ok(1),
            Err(CondError::Shell(err)) => Err(self.fail(io, &err)),
            Err(CondError::Message(msg)) => {
                self.report(io, &msg);
                Ok(2)
            }
            Err(CondError::Status(status)) => Ok(status),
        }
    }

    fn eval_cond(&mut self, expr: &ExtendedTestExpr, io: &Io) -> Result<bool, CondError> {
        Ok(match expr {
            ExtendedTestExpr::And(a, b) => self.eval_cond(a, io)? && self.eval_cond(b, io)?,
            ExtendedTestExpr::Or(a, b) => self.eval_cond(a, io)? || self.eval_cond(b, io)?,
            ExtendedTestExpr::Not(e) => !self.eval_cond(e, io)?,
            ExtendedTestExpr::Parenthesized(e) => self.eval_cond(e, io)?,
            ExtendedTestExpr::UnaryTest(op, word) => {
                let operand = self.expand_string(word, io)?;
                self.xtrace(&format!("[[ {op} {} ]]", trace_quote(&operand)), io);
                self.with_test_context(|ctx| unary(op, &operand, ctx))
            }
            ExtendedTestExpr::BinaryTest(op, left, right) => {
                self.eval_binary(op, left, right, io)?
            }
        })
    }

    fn eval_binary(
        &mut self,
        op: &BinaryPredicate,
        left: &ast::Word,
        right: &ast::Word,
        io: &Io,
    ) -> Result<bool, CondError> {
        use BinaryPredicate as B;
        match op {
            B::StringExactlyMatchesPattern | B::StringExactlyMatchesString => {
                let l = self.expand_string(left, io)?;
                let pattern = self.expand_pattern(right, io)?;
                self.trace_binary(&l, op, &pattern, io);
                return Ok(super::pattern_matches(&pattern, &l));
            }
            B::StringDoesNotExactlyMatchPattern | B::StringDoesNotExactlyMatchString => {
                let l = self.expand_string(left, io)?;
                let pattern = self.expand_pattern(right, io)?;
                self.trace_binary(&l, op, &pattern, io);
                return Ok(!super::pattern_matches(&pattern, &l));
            }
            B::StringMatchesRegex => {
                let l = self.expand_string(left, io)?;
                let regex = self.regex_from_word(right, io)?;
                return self.regex_match(&l, &regex);
            }
            // brush-parser's name for `=~` with a wholly quoted right side,
            // which bash matches literally.
            B::StringContainsSubstring => {
                let l = self.expand_string(left, io)?;
                let r = self.expand_string(right, io)?;
                let literal = crate::utils::textproc::posix_regex::escape(&r);
                return self.regex_match(&l, &literal);
            }
            B::ArithmeticEqualTo
            | B::ArithmeticNotEqualTo
            | B::ArithmeticLessThan
            | B::ArithmeticLessThanOrEqualTo
            | B::ArithmeticGreaterThan
            | B::ArithmeticGreaterThanOrEqualTo => {
                let l = self.arith_expand_eval(&left.value, io)?.to_string();
                let r = self.arith_expand_eval(&right.value, io)?.to_string();
                return self.plain_binary(op, &l, &r);
            }
            _ => {}
        }
        let l = self.expand_string(left, io)?;
        let r = self.expand_string(right, io)?;
        self.trace_binary(&l, op, &r, io);
        self.plain_binary(op, &l, &r)
    }

    /// `set -x` for one binary test, operands expanded.
    fn trace_binary(&self, l: &str, op: &BinaryPredicate, r: &str, io: &Io) {
        if self.opts.xtrace {
            self.xtrace(
                &format!("[[ {} {op} {} ]]", trace_quote(l), trace_quote(r)),
                io,
            );
        }
    }

    /// The right side of `=~` as regex text: unquoted parts are a POSIX
    /// extended regex, quoted parts match literally (as in bash).
    fn regex_from_word(&mut self, word: &ast::Word, io: &Io) -> Result<String, CondError> {
        use crate::utils::textproc::posix_regex::{Dialect, escape, translate};
        let mut ere = String::new();
        for part in self.word_parts(&word.value, io)? {
            if let super::expand::Part::Text { text, quoted, .. } = part {
                if quoted {
                    ere.push_str(&escape(&text));
                } else {
                    let translated =
                        translate(&text, Dialect::Extended).map_err(|_| CondError::Status(2))?;
                    ere.push_str(&translated);
                }
            }
        }
        Ok(ere)
    }

    /// Matches and fills `BASH_REMATCH` (whole match, then each group;
    /// emptied when nothing matches).
    fn regex_match(&mut self, text: &str, regex: &str) -> Result<bool, CondError> {
        // POSIX `.` matches a newline too; `nocasematch` ignores case.
        let flags = if self.shopt_on("nocasematch") {
            "(?si)"
        } else {
            "(?s)"
        };
        let Ok(re) = regex::Regex::new(&format!("{flags}{regex}")) else {
            return Err(CondError::Status(2));
        };
        let groups: Vec<String> = match re.captures(text) {
            Some(caps) => caps
                .iter()
                .map(|m| m.map_or(String::new(), |m| m.as_str().to_string()))
                .collect(),
            None => Vec::new(),
        };
        let matched = !groups.is_empty();
        let map = groups.into_iter().enumerate().collect();
        self.vars
            .set_value("BASH_REMATCH", super::vars::Value::Indexed(map))?;
        Ok(matched)
    }

    fn plain_binary(&self, op: &BinaryPredicate, l: &str, r: &str) -> Result<bool, CondError> {
        self.with_test_context(|ctx| binary(op, l, r, ctx))
            .map_err(CondError::Message)
    }

    /// Runs `f` with what `test` and `[[ ]]` need to know of the shell.
    pub(crate) fn with_test_context<T>(&self, f: impl FnOnce(&TestContext<'_>) -> T) -> T {
        let vars = &self.vars;
        let is_set = |name: &str| vars.is_set(name);
        let is_nameref = |name: &str| vars.get_raw(name).is_some_and(|v| v.nameref);
        let option_on = |name: &str| crate::builtins::vars::option_on(self, name);
        let ctx = TestContext {
            cwd: &self.cwd,
            host: self.host.as_ref(),
            is_set: &is_set,
            is_nameref: &is_nameref,
            option_on: &option_on,
        };
        f(&ctx)
    }
}
