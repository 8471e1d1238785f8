//! One simple command: expansion, redirections, assignments, and the
//! lookup bash does — function, builtin, then a program (a utility or a
//! script file).

use std::rc::Rc;

use brush_parser::ast;

use super::{Shell, normalize};
use crate::errors::Unwind;
use crate::host::{FsError, Host, S_IFDIR, S_IFMT};
use crate::programs::{self, Process};
use crate::streams::Io;

/// Folders where the sandbox pretends its utilities live.
const UTILITY_DIRS: [&str; 5] = ["/usr/bin", "/bin", "/usr/local/bin", "/usr/sbin", "/sbin"];

/// The parts of a simple command, in source order.
#[derive(Default)]
struct Parts<'a> {
    assignments: Vec<&'a ast::Assignment>,
    words: Vec<ast::Word>,
    redirects: Vec<&'a ast::IoRedirect>,
    /// Which `words` were written as assignments after the command name
    /// (`declare x=$y`), and whether as a compound `x=(...)`.
    assignment_words: Vec<(usize, bool)>,
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
            // After the command name, `X=1` is an ordinary argument,
            // except to the declaration builtins.
            ast::CommandPrefixOrSuffixItem::AssignmentWord(a, w) => {
                let compound = matches!(a.value, ast::AssignmentValue::Array(_));
                parts.assignment_words.push((parts.words.len(), compound));
                parts.words.push(w.clone());
            }
            ast::CommandPrefixOrSuffixItem::Word(w) => {
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
        if let Some(result) = self.run_alias(cmd, io) {
            return result;
        }
        if self.before_command(|| cmd.to_string(), io)? {
            return Ok(0);
        }
        let mut parts = split_items(cmd);
        let (mut pending, mut files) = (Vec::new(), Vec::new());
        for (at, kind, sub) in std::mem::take(&mut parts.substitutions) {
            let path = self.process_substitution(kind, sub, io, &mut pending, &mut files)?;
            if let Some(word) = parts.words.get_mut(at) {
                word.value = crate::programs::quoting::single_quote(&path);
            }
        }
        let result = self.run_simple_parts(&parts, io);
        for warning in self.vars.take_warnings() {
            self.report(io, &warning);
        }
        self.finish_process_substitutions(pending, files, io)?;
        result
    }

    fn run_simple_parts(&mut self, parts: &Parts<'_>, io: &Io) -> Result<i32, Unwind> {
        let declaration = is_declaration(parts)
            && !parts
                .words
                .first()
                .is_some_and(|w| self.disabled_builtins.contains(&w.value));
        let expanded = if declaration {
            self.expand_declaration(parts, io)
        } else {
            self.expand_words(&parts.words, io)
        };
        let argv = match expanded {
            Ok(argv) => argv,
            // A failed expansion in a declaration is a failed assignment.
            Err(err) => match self.fail(io, &err) {
                Unwind::Exit(127) if declaration => return Err(Unwind::Exit(1)),
                other => return Err(other),
            },
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
            // An assignment-only command leaves `$_` empty.
            self.set_last_argument(String::new());
            let _ = flush_redirected(&cmd_io, io);
            return Ok(self.subst_status.unwrap_or(0));
        }
        let saved = self.temporary_assignments(&parts.assignments, io)?;
        self.xtrace_words(&argv, io);
        self.xtrace_declared(&argv, io);
        let result = self.dispatch(&argv, &cmd_io);
        if argv.len() == 1 && argv.first().is_some_and(|a| a == "exec") {
            self.keep_exec_fds(&cmd_io, io);
        }
        self.compound_args.clear();
        for (name, var) in saved.into_iter().rev() {
            self.vars.restore(&name, var);
        }
        if let Some(last) = argv.last() {
            self.set_last_argument(last.clone());
        }
        match flush_redirected(&cmd_io, io) {
            Ok(()) => result,
            Err(e) => Ok(self.report_write_error(&argv, &e, io)),
        }
    }

    /// A command's redirected output could not be written (`> /dev/full`,
    /// a full disk): said as bash says it for a builtin, as GNU tools say
    /// it for a program; the command fails.
    fn report_write_error(&self, argv: &[String], e: &std::io::Error, io: &Io) -> i32 {
        let name = argv.first().map_or("", String::as_str);
        // WASI's stream writes fail as EIO whatever the cause; a sandbox
        // whose quota is spent is out of space, as a full disk.
        let full = self
            .host
            .disk_usage()
            .is_some_and(|(used, max, _, _)| used >= max);
        let why = match crate::errors::strerror(e) {
            "Input/output error" if full => "No space left on device",
            other => other,
        };
        if crate::builtins::lookup(name).is_some() && !self.funcs.contains_key(name) {
            self.report(io, &format!("{name}: write error: {why}"));
        } else {
            io.err_line(&format!("{name}: write error: {why}"));
        }
        1
    }

    /// `exec` with only redirections: what they set stays for later
    /// commands.
    fn keep_exec_fds(&mut self, cmd_io: &Io, io: &Io) {
        use crate::streams::Fd;
        if !Rc::ptr_eq(&cmd_io.stdin, &io.stdin) {
            self.exec_fds.insert(0, Fd::In(cmd_io.stdin.clone()));
        }
        if !Rc::ptr_eq(&cmd_io.stdout, &io.stdout) {
            self.exec_fds.insert(1, Fd::Out(cmd_io.stdout.clone()));
        }
        if !Rc::ptr_eq(&cmd_io.stderr, &io.stderr) {
            self.exec_fds.insert(2, Fd::Out(cmd_io.stderr.clone()));
        }
        self.exec_fds
            .retain(|fd, _| *fd <= 2 || cmd_io.extra.contains_key(fd));
        for (fd, entry) in &cmd_io.extra {
            self.exec_fds.insert(*fd, entry.clone());
        }
    }

    /// `$_`: the last argument of the previous simple command (no longer
    /// exported once the shell sets it).
    fn set_last_argument(&mut self, value: String) {
        let _ = self.vars.set("_", value);
        if let Some(var) = self.vars.attrs_mut("_") {
            var.exported = false;
        }
    }

    /// The words of `declare`, `local`, `export`, ... : an operand written
    /// as an assignment is one field, neither split nor globbed, and a
    /// compound `x=(...)` stays text for the builtin to parse (its kind
    /// depends on the options).
    fn expand_declaration(
        &mut self,
        parts: &Parts<'_>,
        io: &Io,
    ) -> Result<Vec<String>, crate::errors::ShellError> {
        let mut argv = Vec::new();
        self.compound_args.clear();
        for (i, word) in parts.words.iter().enumerate() {
            match parts.assignment_words.iter().find(|(at, _)| *at == i) {
                Some((_, true)) => {
                    self.compound_args.push(argv.len());
                    argv.push(word.value.clone());
                }
                Some((_, false)) => argv.push(self.expand_string(word, io)?),
                None => argv.extend(self.expand_words(std::slice::from_ref(word), io)?),
            }
        }
        Ok(argv)
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
            if self.opts.xtrace {
                self.trace_assignment(a, io);
            }
            self.vars.mark_exported(&name);
        }
        Ok(saved)
    }

    /// `set -x` for an assignment: `+ name=value` as assigned.
    fn trace_assignment(&self, a: &ast::Assignment, io: &Io) {
        let name = assignment_name(a);
        if let Some(value) = self.vars.scalar(name)
            && matches!(a.value, ast::AssignmentValue::Scalar(_))
        {
            let value = crate::programs::quoting::trace_quote(value);
            self.xtrace(&format!("{name}={value}"), io);
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
        if let Some(builtin) = crate::builtins::lookup(name)
            && !self.disabled_builtins.contains(name)
        {
            return builtin(self, io, argv);
        }
        Ok(self.run_program(argv, io))
    }

    /// Where `$PATH` finds `name`: the sandbox's utilities are the files
    /// of `/usr/bin` and `/bin`; other folders hold the user's programs.
    /// Without `PATH`, only the utilities.
    pub(crate) fn search_path(&self, name: &str) -> Option<PathHit> {
        let is_utility = programs::find(&self.host, name).is_some();
        let Some(path) = self.vars.scalar("PATH") else {
            return is_utility.then_some(PathHit::Utility);
        };
        // A file found without the execute bit is what bash tries (and
        // reports) when no folder has an executable one.
        let mut not_executable = None;
        for dir in path.split(':') {
            let dir = if dir.is_empty() { "." } else { dir };
            let home = matches!(dir.trim_end_matches('/'), "/usr/bin" | "/bin");
            if home {
                if is_utility {
                    return Some(PathHit::Utility);
                }
                continue;
            }
            let full = normalize(&self.cwd, &format!("{dir}/{name}"));
            let Ok(mode) = self.host.get_mode(&full, true) else {
                continue;
            };
            let shown = format!("{}/{name}", dir.trim_end_matches('/'));
            if mode & S_IFMT == crate::host::S_IFREG {
                if mode & 0o111 != 0 {
                    return Some(PathHit::File(shown));
                }
                not_executable.get_or_insert(shown);
            }
        }
        not_executable.map(PathHit::File)
    }

    /// What bash would exec(2): a utility, or a file with a path.
    pub(crate) fn run_program(&mut self, argv: &[String], io: &Io) -> i32 {
        let Some(name) = argv.first() else {
            return 0;
        };
        if name.contains('/') {
            return self.run_path(argv, io);
        }
        let found = match self.search_path(name) {
            Some(PathHit::File(path)) => {
                self.hashed
                    .entry(name.clone())
                    .or_insert_with(|| crate::builtins::hash::Hashed {
                        path: path.clone(),
                        hits: 0,
                    })
                    .hits += 1;
                let mut argv = argv.to_vec();
                argv[0] = path;
                return self.run_path(&argv, io);
            }
            Some(PathHit::Utility) => programs::find(&self.host, name),
            None => None,
        };
        match found {
            Some(util) => {
                self.hashed
                    .entry(name.clone())
                    .or_insert_with(|| crate::builtins::hash::Hashed {
                        path: format!("/usr/bin/{name}"),
                        hits: 0,
                    })
                    .hits += 1;
                self.run_utility(util, argv, io)
            }
            None => {
                self.report(io, &format!("{name}: command not found"));
                127
            }
        }
    }

    pub(crate) fn run_utility(
        &mut self,
        util: programs::UtilityFn,
        argv: &[String],
        io: &Io,
    ) -> i32 {
        let env = self.child_env();
        let name = argv.first().cloned().unwrap_or_default();
        let mut process = Process::new(&name, &self.cwd, &env, &self.host, io, self.depth);
        util(&mut process, argv)
    }

    fn call_function(
        &mut self,
        func: &Rc<super::Function>,
        argv: &[String],
        io: &Io,
    ) -> Result<i32, Unwind> {
        if let Err(err) = self.enter() {
            return Err(self.fail(io, &err));
        }
        let args = argv.get(1..).unwrap_or_default().to_vec();
        let name = argv.first().cloned().unwrap_or_default();
        self.push_frame(&name, &func.source, &args);
        let saved_args = std::mem::replace(&mut self.positional, args);
        let saved_location = self.location.clone();
        // Messages name the file the function came from (bash says
        // "environment" for `-c` text).
        self.location.name = func.source.clone();
        self.location.base = func.base;
        self.vars.push_scope();
        self.local_opts.push(None);
        self.functions += 1;
        let result = self.run_traced_body(func, io);
        self.functions -= 1;
        if let Some(Some(opts)) = self.local_opts.pop() {
            self.opts = opts;
        }
        self.vars.pop_scope();
        self.location = saved_location;
        self.pop_frame();
        self.positional = saved_args;
        self.depth -= 1;
        match result {
            Err(Unwind::Return(status)) => Ok(status),
            other => other,
        }
    }

    /// A function body with its traps: without `set -T` the DEBUG and
    /// RETURN traps of the caller do not apply inside; a RETURN trap the
    /// function sets does, as it returns.
    fn run_traced_body(&mut self, func: &super::Function, io: &Io) -> Result<i32, Unwind> {
        let traced = self.traces_functions();
        let saved_debug = self.debug_enabled;
        let return_before = self.return_trap.clone();
        let result = if !traced {
            self.debug_enabled = false;
            self.run_function_body(&func.def.body, io)
        } else {
            let command = self.vars.scalar("BASH_COMMAND").unwrap_or("").to_string();
            if self.debug_trap.is_some() && self.debug_trap(&command, io)? {
                Ok(0)
            } else {
                self.run_function_body(&func.def.body, io)
            }
        };
        if traced || self.return_trap != return_before {
            self.run_return_trap(io)?;
        }
        self.debug_enabled = saved_debug;
        result
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
        let _ = flush_redirected(&cmd_io, io);
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
                match programs::find(&self.host, &program) {
                    Some(util) => self.run_utility(util, &new_argv, io),
                    None => {
                        let quoted = crate::programs::quoting::quote(&program, &self.child_env());
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
fn utility_at(host: &Rc<dyn Host>, path: &str) -> Option<programs::UtilityFn> {
    let (dir, name) = path.rsplit_once('/')?;
    if UTILITY_DIRS.contains(&dir) {
        programs::find(host, name)
    } else {
        None
    }
}

/// Flushes file sinks a command's redirections opened, so the next
/// command sees the bytes; the shared stdout keeps its chunking. The
/// error is that of a redirected stdout that could not be written.
fn flush_redirected(cmd_io: &Io, io: &Io) -> std::io::Result<()> {
    for entry in cmd_io.extra.values() {
        if let crate::streams::Fd::Out(sink) = entry {
            let _ = sink.borrow_mut().flush();
        }
    }
    if !Rc::ptr_eq(&cmd_io.stderr, &io.stderr) {
        let _ = cmd_io.stderr.borrow_mut().flush();
    }
    if !Rc::ptr_eq(&cmd_io.stdout, &io.stdout) {
        return cmd_io.stdout.borrow_mut().flush();
    }
    Ok(())
}

/// Whether the command is a declaration builtin, whose assignment-like
/// operands expand as assignments do.
fn is_declaration(parts: &Parts<'_>) -> bool {
    !parts.assignment_words.is_empty()
        && parts.words.first().is_some_and(|w| {
            matches!(
                w.value.as_str(),
                "declare" | "typeset" | "local" | "export" | "readonly"
            )
        })
}

fn assignment_name(a: &ast::Assignment) -> &str {
    match &a.name {
        ast::AssignmentName::VariableName(n) | ast::AssignmentName::ArrayElementName(n, _) => n,
    }
}

/// What a `PATH` search found.
pub(crate) enum PathHit {
    /// The utility of that name (in `/usr/bin`).
    Utility,
    /// A program file, as `PATH` names it.
    File(String),
}
