//! The interpreter: shell state and the entry points that run text.
//!
//! `Shell` is the whole state of one bash process: variables, functions,
//! working folder, positional parameters, options. A subshell, a pipeline
//! stage or a command substitution is a clone of it, which is how their
//! changes stay local without fork(2). The working folder is kept here as a
//! logical path and every file access resolves against it, so clones never
//! share a process-wide cwd.
//!
//! The work is split by concept: `exec` walks lists and compound commands,
//! `simple` runs one simple command, `pipeline` connects stages,
//! `redirect` builds a command's descriptors, `expand`/`param`/`arith`/`glob`
//! turn words into fields.

mod alias;
mod arith;
mod assign;
mod callstack;
mod cond;
mod exec;
mod expand;
mod extglob;
mod glob;
pub(crate) mod jobs;
mod param;
mod pipeline;
mod procsub;
mod prompt;
mod redirect;
pub(crate) mod script;
mod simple;
mod transform;
mod trap;
pub(crate) mod vars;
mod wellknown;
mod xtrace;

use std::collections::HashMap;
use std::path::PathBuf;
use std::rc::Rc;

use brush_parser::ast;

use crate::errors::{ShellError, Unwind};
use crate::host::Host;
use crate::streams::Io;
use vars::Vars;

pub(crate) use arith::parse_number;
pub(crate) use callstack::Function;
pub(crate) use glob::escape_into as escape_glob;
pub(crate) use glob::pattern_matches;
pub(crate) use simple::PathHit;

/// The paths a glob pattern matches from the shell's folder, sorted.
pub(crate) fn expand_glob(shell: &Shell, pattern: &str) -> Vec<String> {
    glob::expand_path(&shell.cwd, pattern, shell.opts.dotglob)
}

/// Deepest nesting of function calls, subshells, substitutions and
/// scripts. Each level costs interpreter stack, and the wasm stack is
/// small, so runaway recursion must stop with an error before it overflows.
pub(crate) const MAX_NESTING: usize = 128;

/// `$$`. There are no processes; a fixed, plausible number keeps `$$`
/// usable in temporary file names.
pub(crate) const SHELL_PID: u32 = 2;

/// Where subshells' `$BASHPID`s start.
const FIRST_SUBSHELL_PID: u32 = 1000;

/// Options set with `set -e`, `set -u`, `set -o pipefail`, `set -x`.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Options {
    pub(crate) errexit: bool,
    pub(crate) nounset: bool,
    pub(crate) pipefail: bool,
    pub(crate) xtrace: bool,
    /// `shopt -s nullglob`: a pattern matching nothing expands to nothing.
    pub(crate) nullglob: bool,
    /// `shopt -s failglob`: a pattern matching nothing is an error.
    pub(crate) failglob: bool,
    /// `shopt -s dotglob`: `*` matches names starting with a dot.
    pub(crate) dotglob: bool,
    /// `set -f`: no pathname expansion at all.
    pub(crate) noglob: bool,
    /// `set -E`: functions and subshells inherit the ERR trap.
    pub(crate) errtrace: bool,
    /// `set -T`: functions and subshells inherit DEBUG and RETURN.
    pub(crate) functrace: bool,
    /// `set -C`: `>` refuses to overwrite an existing regular file.
    pub(crate) noclobber: bool,
}

/// The state of one (sub)shell.
#[derive(Clone)]
pub struct Shell {
    pub(crate) vars: Vars,
    pub(crate) funcs: HashMap<String, Rc<Function>>,
    /// Function calls and sourced files running, innermost last.
    pub(crate) frames: Vec<callstack::Frame>,
    /// The positional parameters below the first frame (`BASH_ARGV`).
    pub(crate) main_args: Vec<String>,
    /// Absolute, logical working folder (what `pwd` prints).
    pub(crate) cwd: String,
    /// `$?`.
    pub(crate) status: i32,
    /// `$1`, `$2`, ...
    pub(crate) positional: Vec<String>,
    /// `$0`, also the name in error messages of `-c` text.
    pub(crate) arg0: String,
    pub(crate) host: Rc<dyn Host>,
    pub(crate) opts: Options,
    /// Current nesting (see `MAX_NESTING`).
    pub(crate) depth: usize,
    /// Loops we are inside, for `break`/`continue`.
    pub(crate) loops: u32,
    /// Functions we are inside, for `return` and `local`.
    pub(crate) functions: u32,
    /// Set while running an `if`/`while` condition or the left of `&&`,
    /// where `set -e` does not apply.
    pub(crate) in_condition: u32,
    /// Where messages say the error is: `bash: line 3: ...`.
    pub(crate) location: Location,
    /// Status of the last `$(...)` of the current simple command, which is
    /// the status of a command made only of assignments.
    pub(crate) subst_status: Option<i32>,
    /// Running a script file rather than `-c` text (changes messages).
    pub(crate) is_script: bool,
    /// Files being `source`d, where `return` is allowed.
    pub(crate) sourcing: u32,
    /// `trap '...' EXIT`: run when this shell ends.
    pub(crate) exit_trap: Option<String>,
    /// `trap '...' ERR`: run after a command fails, where `set -e` would
    /// look (not in conditions, not inside functions unless `set -E`).
    pub(crate) err_trap: Option<String>,
    /// Set while the ERR trap runs, so its own failures do not re-trigger it.
    pub(crate) in_err_trap: bool,
    /// The EXIT trap came from the parent shell: `trap -p` shows it, but
    /// this subshell does not run it.
    pub(crate) exit_trap_inherited: bool,
    /// The ERR trap came from the parent shell without `set -E`: shown,
    /// not run.
    pub(crate) err_trap_inherited: bool,
    /// `trap '...' DEBUG`: run before each command.
    pub(crate) debug_trap: Option<String>,
    /// `trap '...' RETURN`: run when a function or sourced file ends.
    pub(crate) return_trap: Option<String>,
    /// Whether DEBUG runs here (not in functions and subshells without
    /// `set -T`).
    pub(crate) debug_enabled: bool,
    /// Traps running now: they do not trigger DEBUG or RETURN themselves.
    pub(crate) in_trap: u32,
    /// `pushd`'s saved folders, oldest first.
    pub(crate) dir_stack: Vec<String>,
    /// Process substitutions so far, for their files' names.
    pub(crate) psub_count: u64,
    /// When the shell started, for `$SECONDS`.
    pub(crate) started: std::time::Instant,
    /// `getopts`' place inside a group of options (`-abc`): the `OPTIND`
    /// it was at and the next character's index.
    pub(crate) getopts_pos: (usize, usize),
    /// Which arguments of the running declaration builtin were written as
    /// compound assignments `x=(...)` (see `simple::expand_declaration`).
    pub(crate) compound_args: Vec<usize>,
    /// How many `eval`, `source`, trap and `$( )` levels deep this is
    /// (the `+` count of `set -x`), from 1.
    pub(crate) trace_level: usize,
    /// `$BASH_SUBSHELL`: how many subshells deep this shell is.
    pub(crate) subshell_level: u32,
    /// Descriptors `exec` opened or moved without a command (`exec 3<f`,
    /// `exec 2>/dev/null`), for the commands after it.
    pub(crate) exec_fds: std::collections::BTreeMap<i32, crate::streams::Fd>,
    /// Builtins `enable -n` turned off.
    pub(crate) disabled_builtins: std::collections::BTreeSet<String>,
    /// Per running function, the options `local -` saved.
    pub(crate) local_opts: Vec<Option<Options>>,
    /// `hash`: where programs were found.
    pub(crate) hashed: std::collections::BTreeMap<String, crate::builtins::hash::Hashed>,
    /// `alias name=value`.
    pub(crate) aliases: std::collections::BTreeMap<String, String>,
    /// Aliases whose expansion is running (not expanded again inside).
    pub(crate) expanding_aliases: Vec<String>,
    /// The `shopt` options that are on, except the glob ones in `opts`.
    pub(crate) shopts: std::collections::BTreeSet<String>,
    /// Background jobs started with `&`, oldest first.
    pub(crate) jobs: Vec<jobs::Job>,
    /// `$!`: the process id of the last background job.
    pub(crate) last_bg_pid: Option<u32>,
    /// `umask`: what files this shell creates leave out (the host applies
    /// it; see `rejoin`).
    pub(crate) umask: u32,
    /// `$BASHPID`: `$$` in the shell itself, another number in each
    /// subshell and command substitution.
    pub(crate) bashpid: u32,
    /// The last `$BASHPID` given to a subshell, shared by every copy.
    pub(crate) pids: Rc<std::cell::Cell<u32>>,
    /// Set when the text run last ended with `exit` (or a fatal error).
    pub(crate) exited: bool,
}

/// The "NAME: line N" part of bash's error messages.
#[derive(Debug, Clone)]
pub(crate) struct Location {
    /// `bash` (really `$0`) for `-c` text, the script path for scripts,
    /// `environment` inside functions of `-c` text (bash's own quirk).
    pub(crate) name: String,
    /// Line of the command running, 1-based, within the current text.
    pub(crate) line: usize,
    /// Added to `line`: where the current text starts inside the outer one.
    pub(crate) base: usize,
}

impl Shell {
    /// A new shell as `bash -c` starts it: environment variables become
    /// exported shell variables and the working folder is `$PWD` if that
    /// is a folder.
    pub fn new(
        host: Rc<dyn Host>,
        env: &[(String, String)],
        arg0: String,
        args: Vec<String>,
    ) -> Self {
        let mut vars = Vars::from_env(env);
        let cwd = initial_cwd(vars.scalar("PWD"));
        let _ = vars.set("PWD", cwd.clone());
        if vars.scalar("IFS").is_none() {
            let _ = vars.set("IFS", " \t\n".to_string());
        }
        wellknown::init(&mut vars, &arg0);
        let location = Location {
            name: arg0.clone(),
            line: 1,
            base: 0,
        };
        Self {
            vars,
            funcs: HashMap::new(),
            frames: Vec::new(),
            main_args: Vec::new(),
            cwd,
            status: 0,
            positional: args,
            arg0,
            host,
            opts: Options::default(),
            depth: 0,
            loops: 0,
            functions: 0,
            in_condition: 0,
            location,
            subst_status: None,
            is_script: false,
            sourcing: 0,
            exit_trap: None,
            err_trap: None,
            in_err_trap: false,
            exit_trap_inherited: false,
            err_trap_inherited: false,
            debug_trap: None,
            return_trap: None,
            debug_enabled: true,
            in_trap: 0,
            getopts_pos: (1, 1),
            started: std::time::Instant::now(),
            psub_count: 0,
            dir_stack: Vec::new(),
            compound_args: Vec::new(),
            trace_level: 1,
            subshell_level: 0,
            exec_fds: std::collections::BTreeMap::new(),
            disabled_builtins: std::collections::BTreeSet::new(),
            local_opts: Vec::new(),
            hashed: std::collections::BTreeMap::new(),
            aliases: std::collections::BTreeMap::new(),
            expanding_aliases: Vec::new(),
            shopts: crate::builtins::shopt::DEFAULT_ON
                .iter()
                .map(|s| s.to_string())
                .collect(),
            jobs: Vec::new(),
            last_bg_pid: None,
            umask: 0o022,
            bashpid: SHELL_PID,
            pids: Rc::new(std::cell::Cell::new(FIRST_SUBSHELL_PID)),
            exited: false,
        }
    }

    /// Runs `-c` text (or a script) to the end, then its EXIT trap, and
    /// returns the exit status.
    pub(crate) fn run_toplevel(&mut self, text: &str, io: &Io) -> i32 {
        self.publish_stack();
        if !self.is_script {
            let _ = self.vars.set("BASH_EXECUTION_STRING", text.to_string());
        }
        let status = self.run_lines(text, io);
        self.finish_job(status, io)
    }

    /// How a shell ends: its EXIT trap runs (and may change the status),
    /// then it waits for the jobs still writing to its output.
    pub(crate) fn finish_job(&mut self, status: i32, io: &Io) -> i32 {
        let status = match self.exit_trap.take() {
            None => status,
            Some(trap) => {
                self.status = status;
                match self.run_text(&trap, io) {
                    Err(Unwind::Exit(code)) => code,
                    _ => status,
                }
            }
        };
        // What this shell printed is out before what its jobs still print.
        io.flush();
        self.wait_for_terminal_jobs();
        status
    }

    fn run_lines(&mut self, text: &str, io: &Io) -> i32 {
        let program = match parse_program(text) {
            Ok(p) => p,
            Err(msg) => {
                if let Some(status) = self.run_open_heredoc(text, io) {
                    return status;
                }
                return self.run_until_syntax_error(text, msg, io);
            }
        };
        self.run_commands(&program, io)
    }

    /// Text whose last here-document has no closing line: bash warns and
    /// takes the body to the end of the text. `None` when that is not the
    /// trouble with the text.
    fn run_open_heredoc(&mut self, text: &str, io: &Io) -> Option<i32> {
        let (start, delim) = open_heredoc(text)?;
        // A `$(`, `${`, `$[` or backquote on the here-document's line or
        // before it may be left open, which is another trouble, and
        // brush-parser 0.4's tokenizer panics on it once the here-document
        // is closed: leave such text to the syntax error.
        let nested = |l: &str| ["$(", "${", "$[", "`"].iter().any(|c| l.contains(c));
        let head = text.lines().take(start).any(nested);
        if head || text.matches('(').count() > text.matches(')').count() {
            return None;
        }
        let closed = format!("{}\n{delim}\n", text.trim_end_matches('\n'));
        let program = parse_program(&closed).ok()?;
        let warning = format!(
            "{}: line {}: warning: here-document at line {start} delimited by end-of-file (wanted `{delim}')",
            self.location.name,
            text.lines().count()
        );
        // The commands before the one with the here-document run first.
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        let head: String = lines.get(..start - 1).unwrap_or_default().concat();
        if start > 1
            && let Ok(before) = parse_program(&head)
        {
            let status = self.run_commands(&before, io);
            if self.exited {
                return Some(status);
            }
            let rest: String = lines.get(start - 1..).unwrap_or_default().concat();
            let rest = format!("{}\n{delim}\n", rest.trim_end_matches('\n'));
            if let Ok(after) = parse_program(&rest) {
                io.err_line(&warning);
                self.location.base = start - 1;
                let status = self.run_commands(&after, io);
                self.location.base = 0;
                return Some(status);
            }
            return None;
        }
        io.err_line(&warning);
        Some(self.run_commands(&program, io))
    }

    /// Text with a syntax error: bash reads and runs one complete command
    /// at a time, so the commands before the bad one run, then the error
    /// is reported (its line counted in the whole text) and the shell
    /// ends with status 2.
    fn run_until_syntax_error(&mut self, text: &str, whole: SyntaxError, io: &Io) -> i32 {
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        let mut done = 0;
        for k in (1..lines.len()).rev() {
            let head: String = lines[..k].concat();
            let continued = head.trim_end_matches('\n').ends_with('\\');
            if continued {
                continue;
            }
            if let Ok(program) = parse_program(&head) {
                done = k;
                let status = self.run_commands(&program, io);
                if self.exited {
                    return status;
                }
                break;
            }
        }
        let msg = if done == 0 {
            whole
        } else {
            let rest: String = lines[done..].concat();
            match parse_program(&rest) {
                Err(mut e) => {
                    e.line += done;
                    e
                }
                Ok(_) => whole,
            }
        };
        io.err(msg.render(&self.syntax_label()).as_bytes());
        2
    }

    fn run_commands(&mut self, program: &ast::Program, io: &Io) -> i32 {
        self.exited = false;
        for command in &program.complete_commands {
            let io = &self.with_exec_fds(io);
            match self.run_list(command, io) {
                Ok(status) => self.status = status,
                Err(Unwind::Exit(status)) => {
                    self.exited = true;
                    return status;
                }
                Err(Unwind::Abort(status)) => self.status = status,
                // `break` outside a loop, `return` outside a function: bash
                // already complained; carry on with the status.
                Err(Unwind::Break(_) | Unwind::Continue(_)) => {}
                Err(Unwind::Return(status)) => self.status = status,
            }
        }
        self.status
    }

    /// Runs text inside the current shell (`eval`, `source`, `$(...)`):
    /// control flow propagates to the caller.
    pub(crate) fn run_text(&mut self, text: &str, io: &Io) -> Result<i32, Unwind> {
        let program = match parse_program(text) {
            Ok(p) => p,
            Err(msg) => {
                io.err(msg.render(&self.syntax_label()).as_bytes());
                return Ok(2);
            }
        };
        let mut status = 0;
        for command in &program.complete_commands {
            let io = &self.with_exec_fds(io);
            status = self.run_list(command, io)?;
            self.status = status;
        }
        Ok(status)
    }

    /// `io` with the standard descriptors `exec` replaced.
    pub(crate) fn with_exec_fds(&self, io: &Io) -> Io {
        let mut io = io.clone();
        for (fd, entry) in self.exec_fds.range(..3) {
            match (fd, entry) {
                (0, crate::streams::Fd::In(source)) => io.stdin = source.clone(),
                (1, crate::streams::Fd::Out(sink)) => io.stdout = sink.clone(),
                (2, crate::streams::Fd::Out(sink)) => io.stderr = sink.clone(),
                _ => {}
            }
        }
        io
    }

    /// Whether `shopt NAME` is on (options kept outside `opts`).
    pub(crate) fn shopt_on(&self, name: &str) -> bool {
        self.shopts.contains(name)
    }

    pub(crate) fn sourcing(&self) -> bool {
        self.sourcing > 0
    }

    /// Applies `-e`, `+x`, `-o pipefail`, ... Returns false if unknown.
    pub(crate) fn set_option_flag(&mut self, flag: &str) -> bool {
        let on = flag.starts_with('-');
        let name = flag.trim_start_matches(['-', '+']).trim_start_matches("o ");
        match name {
            "e" | "errexit" => self.opts.errexit = on,
            "u" | "nounset" => self.opts.nounset = on,
            "x" | "xtrace" => self.opts.xtrace = on,
            "pipefail" => self.opts.pipefail = on,
            "f" | "noglob" => self.opts.noglob = on,
            "E" | "errtrace" => self.opts.errtrace = on,
            "T" | "functrace" => self.opts.functrace = on,
            "C" | "noclobber" => self.opts.noclobber = on,
            "a" | "allexport" => self.vars.allexport = on,
            // Accepted and without effect here.
            "h" | "B" | "H" | "v" | "verbose" | "posix" | "m" | "monitor" | "hashall"
            | "braceexpand" | "histexpand" => {}
            _ => return false,
        }
        true
    }

    /// How syntax errors name the text: `bash: -c` or the script's path.
    fn syntax_label(&self) -> String {
        if self.is_script {
            self.arg0.clone()
        } else {
            format!("{}: -c", self.arg0)
        }
    }

    /// Prints `bash: line N: MESSAGE` to the given stderr.
    pub(crate) fn report(&self, io: &Io, msg: &str) {
        io.err_line(&format!("{}: {msg}", self.prefix()));
    }

    /// `bash: line N` for the command running now.
    pub(crate) fn prefix(&self) -> String {
        let loc = &self.location;
        format!("{}: line {}", loc.name, loc.base + loc.line)
    }

    /// Reports an expansion error and turns it into control flow.
    pub(crate) fn fail(&self, io: &Io, err: &ShellError) -> Unwind {
        self.report(io, &err.to_string());
        match err.unwind() {
            // bash 5.2 ends `-c` text with 127 on an unset parameter, but
            // with 1 when `set -e` is on (as in `set -euo pipefail`).
            // A script file (`bash script.sh`) ends with 1 as well.
            // So does a subshell.
            Unwind::Exit(127) if self.opts.errexit || self.is_script || self.subshell_level > 0 => {
                Unwind::Exit(1)
            }
            other => other,
        }
    }

    /// Enters one nesting level, or fails when too deep.
    pub(crate) fn enter(&mut self) -> Result<(), ShellError> {
        if self.depth >= MAX_NESTING {
            return Err(ShellError::NestingLimit);
        }
        self.depth += 1;
        Ok(())
    }

    /// An absolute path for `path` as seen from the working folder.
    pub(crate) fn resolve(&self, path: &str) -> PathBuf {
        resolve_in(&self.cwd, path)
    }

    /// The environment a child program gets.
    /// After a subshell (a clone) ended: the host's umask is this shell's
    /// again, whatever the subshell's `umask` set.
    pub(crate) fn rejoin(&self, child: &Shell) {
        if child.umask != self.umask {
            self.host.set_umask(self.umask);
        }
    }

    pub(crate) fn child_env(&self) -> Vec<(String, String)> {
        self.vars.exported()
    }
}

/// `path` resolved against `cwd` when relative.
pub(crate) fn resolve_in(cwd: &str, path: &str) -> PathBuf {
    if path.starts_with('/') {
        PathBuf::from(path)
    } else {
        PathBuf::from(cwd).join(path)
    }
}

/// `path` made absolute and free of `.`/`..`, without touching the
/// filesystem; what the host's metadata calls expect.
pub(crate) fn normalize(cwd: &str, path: &str) -> String {
    let joined = resolve_in(cwd, path);
    let mut parts: Vec<String> = Vec::new();
    for comp in joined.to_string_lossy().split('/') {
        match comp {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            other => parts.push(other.to_string()),
        }
    }
    format!("/{}", parts.join("/"))
}

fn initial_cwd(pwd: Option<&str>) -> String {
    if let Some(pwd) = pwd
        && pwd.starts_with('/')
        && std::path::Path::new(pwd).is_dir()
    {
        return normalize("/", pwd);
    }
    std::env::current_dir()
        .ok()
        .and_then(|p| p.to_str().map(str::to_string))
        .unwrap_or_else(|| "/".to_string())
}

/// A syntax error, rendered as bash renders it.
pub(crate) struct SyntaxError {
    line: usize,
    message: String,
    /// The offending line, which bash echoes for "unexpected token".
    echo_line: Option<String>,
}

impl SyntaxError {
    fn render(&self, label: &str) -> String {
        let mut out = format!("{label}: line {}: {}\n", self.line, self.message);
        if let Some(line) = &self.echo_line {
            out.push_str(&format!("{label}: line {}: `{line}'\n", self.line));
        }
        out
    }
}

/// Deepest bracket nesting accepted before parsing: the parser recurses
/// per level and must not overflow the stack on hostile input.
const MAX_SYNTAX_DEPTH: usize = 100;

/// Parses shell text with brush-parser, mapping its errors to bash's words.
pub(crate) fn parse_program(text: &str) -> Result<ast::Program, SyntaxError> {
    if syntax_depth(text) > MAX_SYNTAX_DEPTH {
        return Err(SyntaxError {
            line: 1,
            message: "syntax error: nesting too deep".to_string(),
            echo_line: None,
        });
    }
    if let Some(number) = oversized_io_number(text) {
        // brush-parser 0.4 panics (unwrap on an overflowing parse) on a
        // descriptor number too big for an int; refuse it first.
        return Err(SyntaxError {
            line: 1,
            message: format!("{number}: Bad file descriptor"),
            echo_line: None,
        });
    }
    let options = parser_options();
    let mut parser = brush_parser::Parser::new(std::io::BufReader::new(text.as_bytes()), &options);
    parser.parse_program().map_err(|e| syntax_error(text, &e))
}

pub(crate) fn parser_options() -> brush_parser::ParserOptions {
    brush_parser::ParserOptions {
        // bash parses `@(a|b)` only after `shopt -s extglob`, which runs
        // after this text is parsed; accepting it always is the useful
        // side of that difference.
        enable_extended_globbing: true,
        ..Default::default()
    }
}

/// A run of digits written right before `<` or `>`, outside quotes, that
/// does not fit a descriptor number (`i32`).
fn oversized_io_number(text: &str) -> Option<String> {
    let (mut quote, mut escaped, mut digits) = (None, false, String::new());
    let mut at_word_start = true;
    for c in text.chars() {
        let word_start_next = c.is_whitespace() || matches!(c, ';' | '|' | '&' | '(' | ')');
        if escaped {
            escaped = false;
        } else {
            match (quote, c) {
                (_, '\\') if quote != Some('\'') => escaped = true,
                (None, '\'' | '"') => quote = Some(c),
                (Some(q), c) if c == q => quote = None,
                (None, '0'..='9') if at_word_start || !digits.is_empty() => {
                    digits.push(c);
                    at_word_start = false;
                    continue;
                }
                (None, '<' | '>') if !digits.is_empty() && digits.parse::<i32>().is_err() => {
                    return Some(digits);
                }
                _ => {}
            }
        }
        digits.clear();
        at_word_start = word_start_next;
    }
    None
}

fn syntax_depth(text: &str) -> usize {
    let (mut depth, mut max) = (0usize, 0usize);
    for b in text.bytes() {
        match b {
            b'(' | b'{' | b'[' => {
                depth += 1;
                max = max.max(depth);
            }
            b')' | b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    max
}

fn syntax_error(text: &str, err: &brush_parser::ParseError) -> SyntaxError {
    use brush_parser::ParseError as P;
    use brush_parser::TokenizerError as T;
    let end_line = text.matches('\n').count() + 1;
    match err {
        P::ParsingNear(pos)
            if let Some((line, token)) =
                stray_closer(text).filter(|(l, _)| *l <= pos.line.max(1)) =>
        {
            let line_text = text.lines().nth(line - 1).unwrap_or("");
            SyntaxError {
                line,
                message: format!("syntax error near unexpected token `{token}'"),
                echo_line: Some(line_text.to_string()),
            }
        }
        P::ParsingNear(pos) => {
            let token = token_at(text, pos.index);
            let line_text = text.lines().nth(pos.line.saturating_sub(1)).unwrap_or("");
            SyntaxError {
                line: pos.line.max(1),
                message: format!("syntax error near unexpected token `{token}'"),
                echo_line: Some(line_text.to_string()),
            }
        }
        P::ParsingAtEndOfInput if let Some((line, token)) = stray_closer(text) => {
            let line_text = text.lines().nth(line - 1).unwrap_or("");
            SyntaxError {
                line,
                message: format!("syntax error near unexpected token `{token}'"),
                echo_line: Some(line_text.to_string()),
            }
        }
        P::ParsingAtEndOfInput => SyntaxError {
            line: end_line + usize::from(!text.ends_with('\n')),
            message: "syntax error: unexpected end of file".to_string(),
            echo_line: None,
        },
        P::Tokenizing { inner, position } => {
            let mut line = position.as_ref().map_or(end_line, |p| p.line.max(1));
            // brush-parser says `}` for an open `$(` too; bash reports that
            // one at the end of the text.
            let open_paren = text
                .rfind("$(")
                .is_some_and(|p| text.rfind("${").is_none_or(|b| b < p));
            if matches!(inner, T::UnterminatedCommandSubstitution)
                || (matches!(inner, T::UnterminatedVariable | T::UnterminatedExpansion)
                    && open_paren)
            {
                line = end_line + usize::from(!text.ends_with('\n'));
            }
            let quote = match inner {
                T::UnterminatedSingleQuote(_) | T::UnterminatedAnsiCQuote(_) => Some('\''),
                T::UnterminatedDoubleQuote(_) => Some('"'),
                T::UnterminatedBackquote(_) => Some('`'),
                T::UnterminatedCommandSubstitution => Some(')'),
                T::UnterminatedVariable | T::UnterminatedExpansion if open_paren => Some(')'),
                T::UnterminatedVariable | T::UnterminatedExpansion => Some('}'),
                _ => None,
            };
            let message = match quote {
                Some(q) => format!("unexpected EOF while looking for matching `{q}'"),
                None => "syntax error: unexpected end of file".to_string(),
            };
            SyntaxError {
                line,
                message,
                echo_line: None,
            }
        }
    }
}

/// The first reserved word that closes a compound command none opened
/// (`fi` after a complete `if`, a second `done`, a lone `}`), with its
/// line: brush-parser reports those as an early end of input.
fn stray_closer(text: &str) -> Option<(usize, String)> {
    let mut stack: Vec<&str> = Vec::new();
    let mut line = 1;
    let mut command_start = true;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            '\n' => {
                line += 1;
                command_start = true;
            }
            // After `)` comes a function's body (`f() {`).
            ';' | '&' | '|' | '(' | ')' => command_start = true,
            ' ' | '\t' => {}
            '#' if command_start => {
                while chars.peek().is_some_and(|(_, c)| *c != '\n') {
                    chars.next();
                }
            }
            '\'' | '"' | '`' => {
                // Quoted text: skip to the closing quote, counting lines.
                let mut escaped = false;
                for (_, q) in chars.by_ref() {
                    if q == '\n' {
                        line += 1;
                    }
                    if escaped {
                        escaped = false;
                    } else if q == '\\' && c != '\'' {
                        escaped = true;
                    } else if q == c {
                        break;
                    }
                }
                command_start = false;
            }
            '<' if text.get(i..).is_some_and(|t| t.starts_with("<<")) => return None,
            _ => {
                let start = i;
                let mut end = i + c.len_utf8();
                while let Some(&(j, d)) = chars.peek() {
                    if d.is_whitespace() || ";&|()<>'\"`".contains(d) {
                        break;
                    }
                    end = j + d.len_utf8();
                    chars.next();
                }
                let word = text.get(start..end).unwrap_or("");
                if !command_start {
                    continue;
                }
                // The stack holds what each open compound command waits
                // for: `then` after `if`, `fi` after `then`, `do` after a
                // loop's head, `done` after `do`, `}` after `{`.
                let stray = || Some((line, word.to_string()));
                match word {
                    "if" => {
                        stack.push("if");
                        command_start = true;
                    }
                    "while" | "until" => {
                        stack.push("loop");
                        command_start = true;
                    }
                    "for" | "select" => {
                        stack.push("loop");
                        command_start = false;
                    }
                    "{" | "!" => {
                        if word == "{" {
                            stack.push("{");
                        }
                        command_start = true;
                    }
                    "then" => {
                        if stack.last() != Some(&"if") {
                            return stray();
                        }
                        *stack.last_mut()? = "then";
                        command_start = true;
                    }
                    "elif" => {
                        if stack.last() != Some(&"then") {
                            return stray();
                        }
                        *stack.last_mut()? = "if";
                        command_start = true;
                    }
                    "else" => {
                        if stack.last() != Some(&"then") {
                            return stray();
                        }
                        *stack.last_mut()? = "else";
                        command_start = true;
                    }
                    "fi" => {
                        if !matches!(stack.last(), Some(&"then" | &"else")) {
                            return stray();
                        }
                        stack.pop();
                        command_start = false;
                    }
                    "do" => {
                        if stack.last() != Some(&"loop") {
                            return stray();
                        }
                        *stack.last_mut()? = "do";
                        command_start = true;
                    }
                    "done" | "}" => {
                        let want = if word == "done" { "do" } else { "{" };
                        if stack.last() != Some(&want) {
                            return stray();
                        }
                        stack.pop();
                        command_start = false;
                    }
                    "esac" => return stray(),
                    // `function f {`: too rare to follow here.
                    "function" => return None,
                    _ => command_start = false,
                }
                if word == "case" {
                    // Patterns are not commands; give up on the rest.
                    return None;
                }
            }
        }
    }
    None
}

/// The line and delimiter of the last here-document of `text` when no
/// later line closes it (`cat <<EOF` and the text ends).
fn open_heredoc(text: &str) -> Option<(usize, String)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut open: Option<(usize, String, bool)> = None;
    for (n, line) in lines.iter().enumerate() {
        if let Some((_, delim, strip)) = &open {
            let body = if *strip {
                line.trim_start_matches('\t')
            } else {
                line
            };
            if body == delim {
                open = None;
            }
            continue;
        }
        // `<<WORD`, `<<-WORD`, `<< 'WORD'`, `<<"WORD"` (not `<<<`).
        let Some(at) = line.find("<<").filter(|&i| !line[i..].starts_with("<<<")) else {
            continue;
        };
        let rest = &line[at + 2..];
        let strip = rest.starts_with('-');
        let rest = rest.trim_start_matches('-').trim_start();
        let word: String = rest
            .chars()
            .take_while(|c| !c.is_whitespace() && !";|&<>()".contains(*c))
            .filter(|c| !matches!(c, '\'' | '"' | '\\'))
            .collect();
        if !word.is_empty() {
            open = Some((n + 1, word, strip));
        }
    }
    open.map(|(line, delim, _)| (line, delim))
}

/// The token starting at byte `index`: an operator or a word.
fn token_at(text: &str, index: usize) -> String {
    let rest = text.get(index..).unwrap_or("");
    for op in [
        ";;&", ";;", ";&", "&&", "||", ">>", "<<", "(", ")", ";", "&", "|", "<", ">",
    ] {
        if rest.starts_with(op) {
            return op.to_string();
        }
    }
    let word: String = rest
        .chars()
        .take_while(|c| !c.is_whitespace() && !";&|()<>".contains(*c))
        .collect();
    if word.is_empty() {
        "newline".to_string()
    } else {
        word
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_resolves_dots() {
        assert_eq!(normalize("/tmp/a", "../b/./c"), "/tmp/b/c");
        assert_eq!(normalize("/tmp", "/x/.."), "/");
    }

    #[test]
    fn oversized_descriptor_numbers_are_refused_not_crashed_on() {
        assert!(parse_program("\n888888888888<8888888888888").is_err());
        assert!(parse_program("echo 99999999999>x").is_err());
        assert!(parse_program("echo '99999999999>x'").is_ok());
        assert!(parse_program("echo 2>/dev/null").is_ok());
        assert!(parse_program("echo a99999999999>x").is_ok());
    }

    #[test]
    fn syntax_errors_name_the_token() {
        let err = parse_program("echo a; )").expect_err("error");
        assert_eq!(
            err.render("bash: -c"),
            "bash: -c: line 1: syntax error near unexpected token `)'\nbash: -c: line 1: `echo a; )'\n"
        );
    }

    #[test]
    fn hostile_nesting_is_refused() {
        let text = "(".repeat(10_000);
        assert!(parse_program(&text).is_err());
    }
}
