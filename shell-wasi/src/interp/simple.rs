//! One simple command: expansion, redirections, assignments, and the
//! lookup bash does — function, builtin, then a program (a utility or a
//! script file).

use std::rc::Rc;

use brush_parser::ast;

use super::{Shell, normalize};
use crate::errors::Unwind;
use crate::host::{FsError, Host, S_IFDIR, S_IFMT};
use crate::streams::Io;
use crate::utils::{self, Process};

/// Folders where the sandbox pretends its utilities live.
const UTILITY_DIRS: [&str; 5] = ["/usr/bin", "/bin", "/usr/local/bin", "/usr/sbin", "/sbin"];

/// The parts of a simple command, in source order.
#[derive(Default)]
struct Parts<'a> {
    assignments: Vec<&'a ast::Assignment>,
    words: Vec<ast::Word>,
    redirects: Vec<&'a ast::IoRedirect>,
    /// `<(cmd)` / `>(cmd)` arguments: where in `words` their file name goes.
    substitutions: Vec<(
        usize,
        &'a ast::ProcessSubstitutionKind,
        &'a ast::SubshellCommand,
    )>,
}

impl<'a> Parts<'a> {
    /// A process substitution's place among the words, filled in when the
    /// command runs.
    fn substitution(
        &mut self,
        kind: &'a ast::ProcessSubstitutionKind,
        sub: &'a ast::SubshellCommand,
    ) {
        self.substitutions.push((self.words.len(), kind, sub));
        self.words.push(ast::Word {
            value: String::new(),
            loc: None,
        });
    }
}

fn split_items(cmd: &ast::SimpleCommand) -> Parts<'_> {
    let mut parts = Parts::default();
    for item in cmd.prefix.iter().flat_map(|p| p.0.iter()) {
        match item {
            ast::CommandPrefixOrSuffixItem::AssignmentWord(a, _) => parts.assignments.push(a),
            ast::CommandPrefixOrSuffixItem::IoRedirect(r) => parts.redirects.push(r),
            ast::CommandPrefixOrSuffixItem::Word(w) => parts.words.push(w.clone()),
            ast::CommandPrefixOrSuffixItem::ProcessSubstitution(kind, sub) => {
                parts.substitution(kind, sub);
            }
        }
    }
    if let Some(w) = &cmd.word_or_name {
        parts.words.push(w.clone());
    }
    for item in cmd.suffix.iter().flat_map(|s| s.0.iter()) {
        match item {
            // After the command name, `X=1` is an ordinary argument.
            ast::CommandPrefixOrSuffixItem::AssignmentWord(_, w)
            | ast::CommandPrefixOrSuffixItem::Word(w) => {
                parts.words.push(w.clone());
            }
            ast::CommandPrefixOrSuffixItem::IoRedirect(r) => parts.redirects.push(r),
            ast::CommandPrefixOrSuffixItem::ProcessSubstitution(kind, sub) => {
                parts.substitution(kind, sub);
            }
        }
    }
    parts
}

/// The first source line a simple command mentions.
fn first_line(cmd: &ast::SimpleCommand) -> Option<usize> {
    let prefix_word = cmd.prefix.as_ref().and_then(|p| {
        p.0.iter().find_map(|item| match item {
            ast::CommandPrefixOrSuffixItem::AssignmentWord(_, w)
            | ast::CommandPrefixOrSuffixItem::Word(w) => w.loc.clone(),
            _ => None,
        })
    });
    prefix_word
        .or_else(|| cmd.word_or_name.as_ref().and_then(|w| w.loc.clone()))
        .map(|span| span.start.line)
}

impl Shell {
    pub(crate) fn run_simple(&mut self, cmd: &ast::SimpleCommand, io: &Io) -> Result<i32, Unwind> {
        if let Some(line) = first_line(cmd) {
            self.location.line = line;
        }
        self.subst_status = None;
        let mut parts = split_items(cmd);
        let (mut pending, mut files) = (Vec::new(), Vec::new());
        for (at, kind, sub) in std::mem::take(&mut parts.substitutions) {
            let path = self.process_substitution(kind, sub, io, &mut pending, &mut files)?;
            if let Some(word) = parts.words.get_mut(at) {
                word.value = crate::utils::quoting::single_quote(&path);
            }
        }
        let result = self.run_simple_parts(&parts, io);
        self.finish_process_substitutions(pending, files, io)?;
        result
    }

    fn run_simple_parts(&mut self, parts: &Parts<'_>, io: &Io) -> Result<i32, Unwind> {
        let argv = match self.expand_words(&parts.words, io) {
            Ok(argv) => argv,
            Err(err) => return Err(self.fail(io, &err)),
        };
        let cmd_io = match self.open_redirects(&parts.redirects, io)? {
            Ok(cmd_io) => cmd_io,
            Err(status) => return Ok(status),
        };
        if argv.is_empty() {
            for a in &parts.assignments {
                self.assign(a, io)?;
                if self.opts.xtrace {
                    self.trace_assignment(a, io);
                }
            }
            flush_redirected(&cmd_io, io);
            return Ok(self.subst_status.unwrap_or(0));
        }
        let saved = self.temporary_assignments(&parts.assignments, io)?;
        self.trace(&argv, io);
        let result = self.dispatch(&argv, &cmd_io);
        for (name, var) in saved.into_iter().rev() {
            self.vars.restore(&name, var);
        }
        // `$_`: the last argument of the previous simple command.
        if let Some(last) = argv.last() {
            let _ = self.vars.set("_", last.clone());
        }
        flush_redirected(&cmd_io, io);
        result
    }

    /// `X=1 cmd`: the variables are set and exported for this command only.
    fn temporary_assignments(
        &mut self,
        assignments: &[&ast::Assignment],
        io: &Io,
    ) -> Result<Vec<(String, Option<super::vars::Var>)>, Unwind> {
        let mut saved = Vec::new();
        for a in assignments {
            let name = assignment_name(a).to_string();
            saved.push((name.clone(), self.vars.get(&name).cloned()));
            self.assign(a, io)?;
            self.vars.mark_exported(&name);
        }
        Ok(saved)
    }

    /// `name=value`, `name+=value`, `name=(a b)`, `name[i]=value`.
    pub(crate) fn assign(&mut self, a: &ast::Assignment, io: &Io) -> Result<(), Unwind> {
        let result = match (&a.name, &a.value) {
            (ast::AssignmentName::VariableName(name), ast::AssignmentValue::Scalar(w))
                if self.vars.is_integer(name) =>
            {
                // `declare -i`: the value is arithmetic; `+=` adds.
                self.expand_string(w, io).and_then(|text| {
                    let n = self.arith_expand_eval(&text, io)?;
                    let n = if a.append {
                        let old = self.vars.scalar(name).unwrap_or("0");
                        old.parse::<i64>().unwrap_or(0).wrapping_add(n)
                    } else {
                        n
                    };
                    self.vars.set(name, n.to_string())
                })
            }
            (ast::AssignmentName::VariableName(name), ast::AssignmentValue::Scalar(w)) => {
                self.expand_string(w, io).and_then(|value| {
                    let value = if a.append {
                        format!("{}{value}", self.vars.scalar(name).unwrap_or(""))
                    } else {
                        value
                    };
                    self.vars.set(name, value)
                })
            }
            (ast::AssignmentName::VariableName(name), ast::AssignmentValue::Array(items)) => {
                self.assign_array(name, items, a.append, io)
            }
            (
                ast::AssignmentName::ArrayElementName(name, index),
                ast::AssignmentValue::Scalar(w),
            ) if self.vars.is_assoc(name) => self.assoc_key(index, io).and_then(|key| {
                let value = self.expand_string(w, io)?;
                let value = if a.append {
                    format!("{}{value}", self.vars.get_key(name, &key).unwrap_or(""))
                } else {
                    value
                };
                self.vars.set_key(name, key, value)
            }),
            (
                ast::AssignmentName::ArrayElementName(name, index),
                ast::AssignmentValue::Scalar(w),
            ) => self.arith_expand_eval(index, io).and_then(|i| {
                // The subscript is full arithmetic (`a[i++]`, `a[${x[0]}]`);
                // negative counts back from the end.
                let value = self.expand_string(w, io)?;
                let len = match self.vars.get(name).map(|v| &v.value) {
                    Some(super::vars::Value::Indexed(m)) => {
                        m.keys().next_back().map_or(0, |k| k + 1)
                    }
                    Some(_) => 1,
                    None => 0,
                };
                let i = if i < 0 {
                    i + i64::try_from(len).unwrap_or(0)
                } else {
                    i
                };
                let i = usize::try_from(i).map_err(|_| {
                    crate::errors::ShellError::BadSubstitution(format!("{name}[{index}]"))
                })?;
                let value = if a.append {
                    let old = match self.vars.get(name).map(|v| &v.value) {
                        Some(super::vars::Value::Indexed(m)) => m.get(&i).cloned(),
                        Some(super::vars::Value::Scalar(s)) if i == 0 => Some(s.clone()),
                        _ => None,
                    };
                    format!("{}{value}", old.unwrap_or_default())
                } else {
                    value
                };
                self.vars.set_element(name, i, value)
            }),
            (ast::AssignmentName::ArrayElementName(name, _), ast::AssignmentValue::Array(_)) => {
                Err(crate::errors::ShellError::BadSubstitution(name.clone()))
            }
        };
        result.map_err(|err| self.fail(io, &err))
    }

    /// `m=([k]=v ...)` (or `+=`) for an associative array.
    fn assign_assoc(
        &mut self,
        name: &str,
        items: &[(Option<ast::Word>, ast::Word)],
        append: bool,
        io: &Io,
    ) -> Result<(), crate::errors::ShellError> {
        let mut pairs = Vec::new();
        for (key, value) in items {
            if let Some(k) = key {
                pairs.push((
                    self.assoc_key(&k.value, io)?,
                    self.expand_string(value, io)?,
                ));
            }
        }
        if !append {
            self.vars.set_value(
                name,
                super::vars::Value::Assoc(std::collections::BTreeMap::new()),
            )?;
        }
        for (key, value) in pairs {
            self.vars.set_key(name, key, value)?;
        }
        Ok(())
    }

    /// An associative array's subscript: expanded as a string, not
    /// evaluated as arithmetic.
    pub(crate) fn assoc_key(
        &mut self,
        index: &str,
        io: &Io,
    ) -> Result<String, crate::errors::ShellError> {
        let parts = self.word_parts(index, io)?;
        Ok(super::expand::join_parts(&parts))
    }

    fn assign_array(
        &mut self,
        name: &str,
        items: &[(Option<ast::Word>, ast::Word)],
        append: bool,
        io: &Io,
    ) -> Result<(), crate::errors::ShellError> {
        use super::vars::Value;
        if self.vars.is_assoc(name) {
            return self.assign_assoc(name, items, append, io);
        }
        // Expand everything first: the words may read the array itself.
        let mut elements: Vec<(Option<usize>, String)> = Vec::new();
        for (key, value) in items {
            match key {
                Some(k) => {
                    let i = super::arith::eval_index(self, &k.value)?;
                    let i = usize::try_from(i).unwrap_or(0);
                    elements.push((Some(i), self.expand_string(value, io)?));
                }
                None => {
                    for field in self.expand_words(std::slice::from_ref(value), io)? {
                        elements.push((None, field));
                    }
                }
            }
        }
        let mut next = match (append, self.vars.get(name).map(|v| &v.value)) {
            (true, Some(Value::Indexed(m))) => m.keys().next_back().map_or(0, |k| k + 1),
            (true, Some(Value::Scalar(_))) => 1,
            _ => {
                self.vars
                    .set_value(name, Value::Indexed(std::collections::BTreeMap::new()))?;
                0
            }
        };
        // `a+=(x)` adds in place: appending in a loop stays linear.
        for (index, value) in elements {
            next = index.unwrap_or(next);
            self.vars.set_element(name, next, value)?;
            next += 1;
        }
        Ok(())
    }

    /// `set -x` for an assignment: `+ name=value` as assigned.
    fn trace_assignment(&self, a: &ast::Assignment, io: &Io) {
        let name = assignment_name(a);
        if let Some(value) = self.vars.scalar(name)
            && matches!(a.value, ast::AssignmentValue::Scalar(_))
        {
            let value = crate::utils::quoting::trace_quote(value);
            io.err_line(&format!("+ {name}={value}"));
        }
    }

    /// `set -x`: the expanded command on stderr.
    fn trace(&self, argv: &[String], io: &Io) {
        if self.opts.xtrace {
            let words: Vec<String> = argv
                .iter()
                .map(|a| crate::utils::quoting::trace_quote(a))
                .collect();
            io.err_line(&format!("+ {}", words.join(" ")));
        }
    }

    /// Runs a command by name: function, builtin, then program.
    pub(crate) fn dispatch(&mut self, argv: &[String], io: &Io) -> Result<i32, Unwind> {
        let Some(name) = argv.first() else {
            return Ok(0);
        };
        if let Some(func) = self.funcs.get(name).cloned() {
            return self.call_function(&func, argv, io);
        }
        if let Some(builtin) = crate::builtins::lookup(name) {
            return builtin(self, io, argv);
        }
        Ok(self.run_program(argv, io))
    }

    /// What bash would exec(2): a utility, or a file with a path.
    pub(crate) fn run_program(&mut self, argv: &[String], io: &Io) -> i32 {
        let Some(name) = argv.first() else {
            return 0;
        };
        if name.contains('/') {
            return self.run_path(argv, io);
        }
        match utils::find(&self.host, name) {
            Some(util) => self.run_utility(util, argv, io),
            None => {
                self.report(io, &format!("{name}: command not found"));
                127
            }
        }
    }

    pub(crate) fn run_utility(&mut self, util: utils::UtilityFn, argv: &[String], io: &Io) -> i32 {
        let env = self.child_env();
        let name = argv.first().cloned().unwrap_or_default();
        let mut process = Process::new(&name, &self.cwd, &env, &self.host, io, self.depth);
        util(&mut process, argv)
    }

    fn call_function(
        &mut self,
        def: &Rc<ast::FunctionDefinition>,
        argv: &[String],
        io: &Io,
    ) -> Result<i32, Unwind> {
        if let Err(err) = self.enter() {
            return Err(self.fail(io, &err));
        }
        let args = argv.get(1..).unwrap_or_default().to_vec();
        let saved_args = std::mem::replace(&mut self.positional, args);
        let saved_location = self.location.clone();
        if !self.is_script {
            // bash names -c functions' errors "environment: line N".
            self.location.name = "environment".to_string();
        }
        // `FUNCNAME`: the calling functions, innermost first.
        let name = argv.first().cloned().unwrap_or_default();
        let saved_funcname = self.vars.get("FUNCNAME").cloned();
        let mut stack = saved_funcname
            .as_ref()
            .map(|v| v.value.elements())
            .unwrap_or_default();
        stack.insert(0, name);
        let _ = self.vars.set_value(
            "FUNCNAME",
            super::vars::Value::Indexed(stack.into_iter().enumerate().collect()),
        );
        self.vars.push_scope();
        self.functions += 1;
        let result = self.run_function_body(&def.body, io);
        self.functions -= 1;
        self.vars.pop_scope();
        self.vars.restore("FUNCNAME", saved_funcname);
        self.location = saved_location;
        self.positional = saved_args;
        self.depth -= 1;
        match result {
            Err(Unwind::Return(status)) => Ok(status),
            other => other,
        }
    }

    fn run_function_body(&mut self, body: &ast::FunctionBody, io: &Io) -> Result<i32, Unwind> {
        let Some(redirects) = &body.1 else {
            return self.run_compound(&body.0, io);
        };
        let items: Vec<&ast::IoRedirect> = redirects.0.iter().collect();
        let cmd_io = match self.open_redirects(&items, io)? {
            Ok(cmd_io) => cmd_io,
            Err(status) => return Ok(status),
        };
        let result = self.run_compound(&body.0, &cmd_io);
        flush_redirected(&cmd_io, io);
        result
    }

    /// `./f`, `/tmp/x.sh`, `/usr/bin/ls`: checks the mode bits like
    /// execve(2) would, then runs the file as a script.
    fn run_path(&mut self, argv: &[String], io: &Io) -> i32 {
        let path = argv.first().cloned().unwrap_or_default();
        let full = normalize(&self.cwd, &path);
        // `/usr/bin/ls` is the utility itself (its file there is a stub).
        if let Some(util) = utility_at(&self.host, &full) {
            return self.run_utility(util, argv, io);
        }
        let mode = match self.host.get_mode(&full, true) {
            Ok(mode) => mode,
            Err(FsError::NoEntry) => {
                self.report(io, &format!("{path}: No such file or directory"));
                return 127;
            }
            Err(err) => {
                self.report(io, &format!("{path}: {}", err.message()));
                return 126;
            }
        };
        if mode & S_IFMT == S_IFDIR {
            self.report(io, &format!("{path}: Is a directory"));
            return 126;
        }
        if mode & 0o111 == 0 {
            self.report(io, &format!("{path}: Permission denied"));
            return 126;
        }
        match std::fs::read(self.resolve(&path)) {
            Ok(bytes) => self.exec_file(&path, &bytes, argv, io),
            Err(err) => {
                self.report(io, &format!("{path}: {}", crate::errors::strerror(&err)));
                126
            }
        }
    }

    /// Runs an executable file according to its `#!` line.
    fn exec_file(&mut self, path: &str, bytes: &[u8], argv: &[String], io: &Io) -> i32 {
        let args = argv.get(1..).unwrap_or_default();
        match super::script::interpreter(bytes) {
            super::script::Interpreter::Shell => {
                let text = String::from_utf8_lossy(bytes);
                super::script::run_script(self, path, &text, args, io)
            }
            super::script::Interpreter::Binary => {
                self.report(
                    io,
                    &format!("{path}: cannot execute binary file: Exec format error"),
                );
                126
            }
            super::script::Interpreter::Env(program) => {
                let mut new_argv = vec![program.clone(), path.to_string()];
                new_argv.extend_from_slice(args);
                match utils::find(&self.host, &program) {
                    Some(util) => self.run_utility(util, &new_argv, io),
                    None => {
                        let quoted = crate::utils::quoting::quote(&program, &self.child_env());
                        io.err_line(&format!(
                            "/usr/bin/env: {quoted}: No such file or directory"
                        ));
                        127
                    }
                }
            }
            super::script::Interpreter::Path(interp) => {
                let mut new_argv = vec![interp.clone(), path.to_string()];
                new_argv.extend_from_slice(args);
                match utility_at(&self.host, &interp) {
                    Some(util) => self.run_utility(util, &new_argv, io),
                    None => {
                        self.report(
                            io,
                            &format!(
                                "{path}: {interp}: bad interpreter: No such file or directory"
                            ),
                        );
                        126
                    }
                }
            }
        }
    }
}

/// The utility a path like `/usr/bin/ls` names, if the sandbox has it.
fn utility_at(host: &Rc<dyn Host>, path: &str) -> Option<utils::UtilityFn> {
    let (dir, name) = path.rsplit_once('/')?;
    if UTILITY_DIRS.contains(&dir) {
        utils::find(host, name)
    } else {
        None
    }
}

/// Flushes file sinks a command's redirections opened, so the next
/// command sees the bytes; the shared stdout keeps its chunking.
fn flush_redirected(cmd_io: &Io, io: &Io) {
    if !Rc::ptr_eq(&cmd_io.stdout, &io.stdout) {
        let _ = cmd_io.stdout.borrow_mut().flush();
    }
    if !Rc::ptr_eq(&cmd_io.stderr, &io.stderr) {
        let _ = cmd_io.stderr.borrow_mut().flush();
    }
}

fn assignment_name(a: &ast::Assignment) -> &str {
    match &a.name {
        ast::AssignmentName::VariableName(n) | ast::AssignmentName::ArrayElementName(n, _) => n,
    }
}
