//! The call stack bash exposes: `FUNCNAME`, `BASH_SOURCE`, `BASH_LINENO`
//! and the `caller` builtin. Function calls and `source` push frames; a
//! script (not `-c` text) has a bottom frame called `main`.

use brush_parser::ast;

use super::Shell;
use super::vars::Value;

/// A defined function and where its text came from (serialisable, so a
/// background job gets its shell's functions exactly: see `jobs.rs`).
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub(crate) struct Function {
    pub(crate) def: ast::FunctionDefinition,
    /// `BASH_SOURCE` inside it: the file it was defined in
    /// (`environment` for `-c` text, as bash 5.2 says).
    pub(crate) source: String,
    /// Added to its line numbers (text of `eval` or `$( )`).
    pub(crate) base: usize,
    /// The line its definition starts on (`declare -F` with extdebug).
    pub(crate) line: usize,
}

/// One function call or `source`.
#[derive(Debug, Clone)]
pub(crate) struct Frame {
    pub(crate) func: String,
    pub(crate) source: String,
    /// The line it was called from, in the frame below.
    pub(crate) call_line: usize,
    /// Its arguments (`BASH_ARGV`).
    pub(crate) args: Vec<String>,
}

/// The three arrays, innermost first.
struct Stack {
    funcs: Vec<String>,
    sources: Vec<String>,
    lines: Vec<usize>,
}

impl Shell {
    /// The file running now (`""` for `-c` text).
    pub(crate) fn current_source(&self) -> String {
        match self.frames.last() {
            Some(frame) => frame.source.clone(),
            None if self.is_script => self.arg0.clone(),
            None => String::new(),
        }
    }

    /// Remembers a function definition with where it was written.
    pub(crate) fn define_function(&mut self, def: &ast::FunctionDefinition) {
        let line = def.fname.loc.as_ref().map_or(0, |l| l.start.line);
        let source = match self.current_source() {
            s if s.is_empty() => "environment".to_string(),
            s => s,
        };
        let function = Function {
            def: def.clone(),
            source,
            base: self.location.base,
            line: self.location.base + line,
        };
        self.funcs
            .insert(def.fname.value.clone(), std::rc::Rc::new(function));
    }

    /// Enters a function or sourced file.
    pub(crate) fn push_frame(&mut self, func: &str, source: &str, args: &[String]) {
        let call_line = self.location.base + self.location.line;
        if self.frames.is_empty() {
            self.main_args.clone_from(&self.positional);
        }
        self.frames.push(Frame {
            func: func.to_string(),
            source: source.to_string(),
            call_line,
            args: args.to_vec(),
        });
        self.publish_stack();
    }

    pub(crate) fn pop_frame(&mut self) {
        self.frames.pop();
        self.publish_stack();
    }

    fn stack(&self) -> Stack {
        let mut stack = Stack {
            funcs: self.frames.iter().rev().map(|f| f.func.clone()).collect(),
            sources: self.frames.iter().rev().map(|f| f.source.clone()).collect(),
            lines: self.frames.iter().rev().map(|f| f.call_line).collect(),
        };
        if self.is_script {
            stack.funcs.push("main".to_string());
            stack.sources.push(self.arg0.clone());
            stack.lines.push(0);
        }
        stack
    }

    /// Sets the arrays from the frames. `FUNCNAME` exists only while a
    /// function runs.
    pub(crate) fn publish_stack(&mut self) {
        let stack = self.stack();
        let array = |items: Vec<String>| Value::Indexed(items.into_iter().enumerate().collect());
        let in_function = self.frames.iter().any(|f| f.func != "source");
        if in_function {
            let _ = self.vars.set_value("FUNCNAME", array(stack.funcs));
        } else {
            // Declared, without elements, as bash has it outside functions.
            *self.vars.raw_mut("FUNCNAME") = super::vars::Var {
                value: Value::Indexed(Default::default()),
                valueless: true,
                ..Default::default()
            };
        }
        let _ = self.vars.set_value("BASH_SOURCE", array(stack.sources));
        let lines = stack.lines.iter().map(ToString::to_string).collect();
        let _ = self.vars.set_value("BASH_LINENO", array(lines));
        self.publish_args();
    }

    /// `BASH_ARGC` (argument counts) and `BASH_ARGV` (the arguments, last
    /// first), innermost frame first, ending with the shell's own. Without
    /// extdebug only sourced files (whose argument is their name) count.
    fn publish_args(&mut self) {
        let mut counts = Vec::new();
        let mut argv = Vec::new();
        let all = self.shopt_on("extdebug");
        let frames: Vec<&Vec<String>> = self
            .frames
            .iter()
            .filter(|f| all || f.func == "source")
            .map(|f| &f.args)
            .collect();
        if frames.is_empty() && !all {
            let empty = Value::Indexed(Default::default());
            let _ = self.vars.set_value("BASH_ARGC", empty.clone());
            let _ = self.vars.set_value("BASH_ARGV", empty);
            return;
        }
        let frames = frames.into_iter();
        let main = std::iter::once(if self.frames.is_empty() {
            &self.positional
        } else {
            &self.main_args
        });
        for args in frames.rev().chain(main) {
            counts.push(args.len().to_string());
            argv.extend(args.iter().rev().cloned());
        }
        let array = |items: Vec<String>| Value::Indexed(items.into_iter().enumerate().collect());
        let _ = self.vars.set_value("BASH_ARGC", array(counts));
        let _ = self.vars.set_value("BASH_ARGV", array(argv));
    }

    /// What `caller` prints: `LINE FILE`, or `LINE FUNC FILE` for
    /// `caller N`; `None` when there is no such frame.
    pub(crate) fn caller_text(&self, n: Option<usize>) -> Option<String> {
        if self.frames.is_empty() && !self.is_script {
            return None;
        }
        let stack = self.stack();
        match n {
            None => {
                let line = stack.lines.first().copied().unwrap_or(0);
                let file = stack.sources.get(1).map_or("NULL", String::as_str);
                Some(format!("{line} {file}"))
            }
            Some(n) => {
                let line = stack.lines.get(n)?;
                let func = stack.funcs.get(n.checked_add(1)?)?;
                let file = stack.sources.get(n + 1)?;
                Some(format!("{line} {func} {file}"))
            }
        }
    }
}
