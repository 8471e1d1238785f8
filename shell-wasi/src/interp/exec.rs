//! Walking the syntax tree: lists, `&&`/`||`, and compound commands
//! (`if`, loops, `case`, groups, subshells, `(( ))`, `[[ ]]`).

use brush_parser::ast;

use super::Shell;
use crate::errors::Unwind;
use crate::streams::Io;

/// What a loop does after one pass of its body.
enum LoopStep {
    Next,
    Stop,
}

impl Shell {
    /// Runs `a; b & c` items in order; `b &` starts in the background
    /// (see `jobs.rs`) and the list goes on at once.
    pub(crate) fn run_list(&mut self, list: &ast::CompoundList, io: &Io) -> Result<i32, Unwind> {
        let mut status = 0;
        for item in &list.0 {
            status = match item.1 {
                ast::SeparatorOperator::Async => self.run_async(&item.0, io),
                ast::SeparatorOperator::Sequence => self.run_and_or(&item.0, io)?,
            };
            self.status = status;
        }
        Ok(status)
    }

    pub(crate) fn run_and_or(&mut self, list: &ast::AndOrList, io: &Io) -> Result<i32, Unwind> {
        // Every pipeline but the last of `a && b || c` is a condition for
        // `set -e`; only a failure of the last one may exit the shell.
        let guarded = !list.additional.is_empty();
        if guarded {
            self.in_condition += 1;
        }
        let first = self.run_pipeline(&list.first, io);
        if guarded {
            self.in_condition -= 1;
        }
        let mut status = first?;
        let last_index = list.additional.len();
        for (i, next) in list.additional.iter().enumerate() {
            self.status = status;
            let (run, pipeline) = match next {
                ast::AndOr::And(p) => (status == 0, p),
                ast::AndOr::Or(p) => (status != 0, p),
            };
            if !run {
                continue;
            }
            let is_last = i + 1 == last_index;
            if !is_last {
                self.in_condition += 1;
            }
            let result = self.run_pipeline(pipeline, io);
            if !is_last {
                self.in_condition -= 1;
            }
            status = result?;
        }
        Ok(status)
    }

    /// Runs the ERR trap after a failure, where `set -e` would act.
    pub(crate) fn run_err_trap(
        &mut self,
        status: i32,
        negated: bool,
        io: &Io,
    ) -> Result<(), Unwind> {
        let applies = status != 0
            && self.in_condition == 0
            && !negated
            && !self.in_err_trap
            && !self.err_trap_inherited
            && (self.functions == 0 || self.opts.errtrace);
        let Some(trap) = self.err_trap.clone().filter(|_| applies) else {
            return Ok(());
        };
        self.in_err_trap = true;
        let result = self.run_trap_text(&trap, io);
        self.in_err_trap = false;
        self.status = status;
        match result {
            Err(Unwind::Exit(code)) => Err(Unwind::Exit(code)),
            _ => Ok(()),
        }
    }

    /// Exits on failure under `set -e`, outside conditions.
    pub(crate) fn check_errexit(&self, status: i32, negated: bool) -> Result<(), Unwind> {
        if self.opts.errexit && status != 0 && self.in_condition == 0 && !negated {
            return Err(Unwind::Exit(status));
        }
        Ok(())
    }

    /// Runs one element of a pipeline.
    pub(crate) fn run_command(&mut self, cmd: &ast::Command, io: &Io) -> Result<i32, Unwind> {
        match cmd {
            ast::Command::Simple(simple) => self.run_simple(simple, io),
            ast::Command::Compound(compound, redirects) => {
                let Some(redirects) = redirects else {
                    return self.run_compound(compound, io);
                };
                let items: Vec<&ast::IoRedirect> = redirects.0.iter().collect();
                let cmd_io = match self.open_redirects(&items, io)? {
                    Ok(cmd_io) => cmd_io,
                    Err(status) => return Ok(status),
                };
                let result = self.run_compound(compound, &cmd_io);
                cmd_io.flush();
                result
            }
            ast::Command::Function(def) => {
                self.define_function(def);
                Ok(0)
            }
            ast::Command::ExtendedTest(test, _) => {
                if self.before_command(|| format!("[[ {} ]]", test.expr), io)? {
                    return Ok(0);
                }
                self.run_extended_test(&test.expr, io)
            }
        }
    }

    pub(crate) fn run_compound(
        &mut self,
        cmd: &ast::CompoundCommand,
        io: &Io,
    ) -> Result<i32, Unwind> {
        use ast::CompoundCommand as C;
        match cmd {
            C::BraceGroup(group) => self.run_list(&group.list, io),
            C::Subshell(sub) => self.run_subshell(&sub.list, io),
            C::IfClause(clause) => self.run_if(clause, io),
            C::WhileClause(clause) => self.run_while(clause, io, true),
            C::UntilClause(clause) => self.run_while(clause, io, false),
            C::ForClause(clause) => self.run_for(clause, io),
            C::CaseClause(clause) => {
                if self.before_command(|| format!("case {} in ", clause.value), io)? {
                    return Ok(0);
                }
                self.run_case(clause, io)
            }
            C::Arithmetic(arith) => {
                let text = &arith.expr.value;
                if self.before_command(|| format!("(( {text} ))"), io)? {
                    return Ok(0);
                }
                self.run_arith_command(text, io)
            }
            C::ArithmeticForClause(clause) => self.run_arith_for(clause, io),
            C::Coprocess(_) => {
                self.report(io, "coproc: not supported in this sandbox");
                Ok(1)
            }
        }
    }

    /// `( ... )`: a clone of the shell; nothing it changes comes back.
    pub(crate) fn run_subshell(
        &mut self,
        list: &ast::CompoundList,
        io: &Io,
    ) -> Result<i32, Unwind> {
        if let Err(err) = self.enter() {
            return Err(self.fail(io, &err));
        }
        let mut child = self.subshell();
        let status = match child.run_list(list, io) {
            Ok(status) => status,
            Err(Unwind::Exit(status) | Unwind::Abort(status) | Unwind::Return(status)) => status,
            Err(Unwind::Break(_) | Unwind::Continue(_)) => child.status,
        };
        let status = child.finish_subshell(status, io);
        self.rejoin(&child);
        self.depth -= 1;
        Ok(status)
    }

    /// Runs a condition list, where `set -e` is suspended.
    fn run_condition(&mut self, list: &ast::CompoundList, io: &Io) -> Result<i32, Unwind> {
        self.in_condition += 1;
        let result = self.run_list(list, io);
        self.in_condition -= 1;
        result
    }

    fn run_if(&mut self, clause: &ast::IfClauseCommand, io: &Io) -> Result<i32, Unwind> {
        if self.run_condition(&clause.condition, io)? == 0 {
            return self.run_list(&clause.then, io);
        }
        for branch in clause.elses.iter().flatten() {
            match &branch.condition {
                Some(cond) => {
                    if self.run_condition(cond, io)? == 0 {
                        return self.run_list(&branch.body, io);
                    }
                }
                None => return self.run_list(&branch.body, io),
            }
        }
        Ok(0)
    }

    /// Runs a loop body once, turning `break`/`continue` into loop steps.
    fn loop_body(
        &mut self,
        body: &ast::CompoundList,
        io: &Io,
        status: &mut i32,
    ) -> Result<LoopStep, Unwind> {
        self.loops += 1;
        let result = self.run_list(body, io);
        self.loops -= 1;
        match result {
            Ok(s) => {
                *status = s;
                Ok(LoopStep::Next)
            }
            Err(Unwind::Break(n)) if n > 1 => Err(Unwind::Break(n - 1)),
            Err(Unwind::Break(_)) => Ok(LoopStep::Stop),
            Err(Unwind::Continue(n)) if n > 1 => Err(Unwind::Continue(n - 1)),
            Err(Unwind::Continue(_)) => Ok(LoopStep::Next),
            Err(other) => Err(other),
        }
    }

    fn run_while(
        &mut self,
        clause: &ast::WhileOrUntilClauseCommand,
        io: &Io,
        want_success: bool,
    ) -> Result<i32, Unwind> {
        let mut status = 0;
        loop {
            let cond = self.run_condition(&clause.0, io)?;
            if (cond == 0) != want_success {
                break;
            }
            if let LoopStep::Stop = self.loop_body(&clause.1.list, io, &mut status)? {
                break;
            }
        }
        Ok(status)
    }

    fn run_for(&mut self, clause: &ast::ForClauseCommand, io: &Io) -> Result<i32, Unwind> {
        let values = match &clause.values {
            Some(words) => match self.expand_words(words, io) {
                Ok(v) => v,
                Err(err) => return Err(self.fail(io, &err)),
            },
            None => self.positional.clone(),
        };
        let mut status = 0;
        let name = &clause.variable_name;
        let text = || match &clause.values {
            Some(words) => {
                let words: Vec<&str> = words.iter().map(|w| w.value.as_str()).collect();
                format!("for {name} in {}", words.join(" "))
            }
            None => format!("for {name}"),
        };
        for value in values {
            self.location.line = clause.loc.start.line;
            if self.before_command(text, io)? {
                continue;
            }
            if self.opts.xtrace {
                self.xtrace(&text(), io);
            }
            // A nameref loop variable is pointed at each word in turn.
            if self.vars.get_raw(name).is_some_and(|v| v.nameref) {
                if let Err(msg) = self.vars.set_nameref(name, Some(&value)) {
                    self.report(io, &msg);
                    return Ok(1);
                }
            } else if let Err(err) = self.vars.set(name, value) {
                return Err(self.fail(io, &err));
            }
            if let LoopStep::Stop = self.loop_body(&clause.body.list, io, &mut status)? {
                break;
            }
        }
        Ok(status)
    }

    fn run_arith_for(
        &mut self,
        clause: &ast::ArithmeticForClauseCommand,
        io: &Io,
    ) -> Result<i32, Unwind> {
        if let Some(init) = &clause.initializer
            && self.traced_arith(&init.value, io)?.is_none()
        {
            return Ok(1);
        }
        let mut status = 0;
        loop {
            if let Some(cond) = &clause.condition {
                match self.traced_arith(&cond.value, io)? {
                    None => return Ok(1),
                    Some(0) => break,
                    Some(_) => {}
                }
            }
            if let LoopStep::Stop = self.loop_body(&clause.body.list, io, &mut status)? {
                break;
            }
            if let Some(update) = &clause.updater
                && self.traced_arith(&update.value, io)?.is_none()
            {
                return Ok(1);
            }
        }
        Ok(status)
    }

    /// One part of `for (( ; ; ))`, traced as `(( part ))`.
    fn traced_arith(&mut self, text: &str, io: &Io) -> Result<Option<i64>, Unwind> {
        self.xtrace(&format!("(( {} ))", text.trim()), io);
        self.arith_command_value(text, "((", io)
    }

    /// The value of the arithmetic of `(( ))` or `let`: a bad expression
    /// is reported as `NAME: EXPR: ...` and makes the command fail
    /// (`None`), where `$(( ))` would abandon the whole line.
    pub(crate) fn arith_command_value(
        &mut self,
        text: &str,
        name: &str,
        io: &Io,
    ) -> Result<Option<i64>, Unwind> {
        match self.arith_expand_eval(text, io) {
            Ok(v) => Ok(Some(v)),
            Err(err @ crate::errors::ShellError::Arithmetic { .. }) => {
                self.report(io, &format!("{name}: {err}"));
                Ok(None)
            }
            Err(err) => Err(self.fail(io, &err)),
        }
    }

    /// `(( expr ))`: status 0 when the value is non-zero.
    fn run_arith_command(&mut self, text: &str, io: &Io) -> Result<i32, Unwind> {
        self.xtrace(&format!("(( {text} ))"), io);
        match self.arith_command_value(text, "((", io)? {
            Some(value) => Ok(i32::from(value == 0)),
            None => Ok(1),
        }
    }

    fn run_case(&mut self, clause: &ast::CaseClauseCommand, io: &Io) -> Result<i32, Unwind> {
        let subject = match self.expand_string(&clause.value, io) {
            Ok(s) => s,
            Err(err) => return Err(self.fail(io, &err)),
        };
        self.xtrace(
            &format!(
                "case {} in",
                crate::programs::quoting::trace_quote(&subject)
            ),
            io,
        );
        let mut status = 0;
        let mut fall_through = false;
        for item in &clause.cases {
            if !fall_through && !self.case_item_matches(item, &subject, io)? {
                continue;
            }
            if let Some(cmd) = &item.cmd {
                status = self.run_list(cmd, io)?;
            }
            match item.post_action {
                ast::CaseItemPostAction::ExitCase => return Ok(status),
                ast::CaseItemPostAction::UnconditionallyExecuteNextCaseItem => fall_through = true,
                ast::CaseItemPostAction::ContinueEvaluatingCases => fall_through = false,
            }
        }
        Ok(status)
    }

    fn case_item_matches(
        &mut self,
        item: &ast::CaseItem,
        subject: &str,
        io: &Io,
    ) -> Result<bool, Unwind> {
        for pattern in &item.patterns {
            let pattern = match self.expand_pattern(pattern, io) {
                Ok(p) => p,
                Err(err) => return Err(self.fail(io, &err)),
            };
            if super::pattern_matches(&pattern, subject) {
                return Ok(true);
            }
        }
        Ok(false)
    }
}
