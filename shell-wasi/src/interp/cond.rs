//! `[[ ... ]]`: like `test`, but operands are expanded without splitting,
//! `==`/`!=` take patterns, `-eq` and friends take arithmetic, and `&&`,
//! `||` short-circuit.

use brush_parser::ast::{self, BinaryPredicate, ExtendedTestExpr};

use super::Shell;
use crate::errors::{ShellError, Unwind};
use crate::programs::test::{TestContext, binary, unary};
use crate::streams::Io;

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
            // `set -x` shows `!` before a single test, not before `( )`.
            ExtendedTestExpr::Not(e) => match &**e {
                ExtendedTestExpr::UnaryTest(..) | ExtendedTestExpr::BinaryTest(..) => {
                    !self.eval_test(e, "! ", io)?
                }
                _ => !self.eval_cond(e, io)?,
            },
            ExtendedTestExpr::Parenthesized(e) => self.eval_cond(e, io)?,
            _ => self.eval_test(expr, "", io)?,
        })
    }

    /// One unary or binary test; `neg` is what `set -x` shows before it.
    fn eval_test(
        &mut self,
        expr: &ExtendedTestExpr,
        neg: &str,
        io: &Io,
    ) -> Result<bool, CondError> {
        match expr {
            ExtendedTestExpr::UnaryTest(op, word) => {
                let operand = self.expand_string(word, io)?;
                if self.opts.xtrace {
                    self.xtrace(&format!("[[ {neg}{op} {operand} ]]"), io);
                }
                Ok(self.with_test_context(|ctx| unary(op, &operand, ctx)))
            }
            ExtendedTestExpr::BinaryTest(op, left, right) => {
                self.eval_binary(op, left, right, neg, io)
            }
            other => self.eval_cond(other, io),
        }
    }

    fn eval_binary(
        &mut self,
        op: &BinaryPredicate,
        left: &ast::Word,
        right: &ast::Word,
        neg: &str,
        io: &Io,
    ) -> Result<bool, CondError> {
        use BinaryPredicate as B;
        match op {
            B::StringExactlyMatchesPattern | B::StringExactlyMatchesString => {
                let l = self.expand_string(left, io)?;
                let (pattern, shown) = self.pattern_and_trace(right, io)?;
                self.trace_binary(neg, &l, op, &shown, io);
                return Ok(super::pattern_matches(&pattern, &l));
            }
            B::StringDoesNotExactlyMatchPattern | B::StringDoesNotExactlyMatchString => {
                let l = self.expand_string(left, io)?;
                let (pattern, shown) = self.pattern_and_trace(right, io)?;
                self.trace_binary(neg, &l, op, &shown, io);
                return Ok(!super::pattern_matches(&pattern, &l));
            }
            B::StringMatchesRegex => {
                let l = self.expand_string(left, io)?;
                let regex = self.regex_from_word(right, io)?;
                if self.opts.xtrace {
                    let shown = self.expand_string(right, io)?;
                    self.trace_binary(neg, &l, op, &shown, io);
                }
                return self.regex_match(&l, &regex);
            }
            // brush-parser's name for `=~` with a wholly quoted right side,
            // which bash matches literally.
            B::StringContainsSubstring => {
                let l = self.expand_string(left, io)?;
                let r = self.expand_string(right, io)?;
                if self.opts.xtrace {
                    self.xtrace(&format!("[[ {neg}{l} =~ {r} ]]"), io);
                }
                let literal = crate::programs::textproc::posix_regex::escape(&r);
                return self.regex_match(&l, &literal);
            }
            B::ArithmeticEqualTo
            | B::ArithmeticNotEqualTo
            | B::ArithmeticLessThan
            | B::ArithmeticLessThanOrEqualTo
            | B::ArithmeticGreaterThan
            | B::ArithmeticGreaterThanOrEqualTo => {
                if self.opts.xtrace {
                    let l = self.expand_string(left, io)?;
                    let r = self.expand_string(right, io)?;
                    self.trace_binary(neg, &l, op, &r, io);
                }
                let l = self.arith_expand_eval(&left.value, io)?.to_string();
                let r = self.arith_expand_eval(&right.value, io)?.to_string();
                return self.plain_binary(op, &l, &r);
            }
            _ => {}
        }
        let l = self.expand_string(left, io)?;
        let r = self.expand_string(right, io)?;
        self.trace_binary(neg, &l, op, &r, io);
        self.plain_binary(op, &l, &r)
    }

    /// `set -x` for one binary test, operands expanded and shown as they
    /// are (bash does not quote inside `[[ ]]`).
    fn trace_binary(&self, neg: &str, l: &str, op: &BinaryPredicate, r: &str, io: &Io) {
        if self.opts.xtrace {
            self.xtrace(&format!("[[ {neg}{l} {op} {r} ]]"), io);
        }
    }

    /// The right side of `=~` as regex text: unquoted parts are a POSIX
    /// extended regex, quoted parts match literally (as in bash).
    fn regex_from_word(&mut self, word: &ast::Word, io: &Io) -> Result<String, CondError> {
        use crate::programs::textproc::posix_regex::{Dialect, translate};
        // The whole word is one ERE (a group may hold a quoted `\.`):
        // quoted characters are escaped into it, then it is translated.
        let mut source = String::new();
        for part in self.word_parts(&word.value, io)? {
            if let super::expand::Part::Text { text, quoted, .. } = part {
                if quoted {
                    for c in text.chars() {
                        if "\\.[]()*+?{}|^$".contains(c) {
                            source.push('\\');
                        }
                        source.push(c);
                    }
                } else {
                    source.push_str(&text);
                }
            }
        }
        translate(&source, Dialect::Extended).map_err(|_| CondError::Status(2))
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
