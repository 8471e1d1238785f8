//! Background jobs: `cmd &` runs as a process of its own — a new instance
//! of this shell, started by the host (`process.spawn`) and handed this
//! shell's state as text — while this one goes on. `$!`, `wait`, `jobs`
//! and `kill` follow them.
//!
//! The state is what a subshell would see: variables (as `declare -p`
//! prints them), options, aliases, the umask, the working folder, `$0` and
//! the positional parameters as text; functions and the job's own command
//! as their syntax trees (JSON), so nothing is lost in printing them. The job's stdin is empty, as for a
//! background job of a non-interactive bash. Its output goes straight to
//! this shell's stdout/stderr when those are the process's own; into a
//! pipe or a file it is collected and written there when the job is
//! waited for.

use brush_parser::ast;

use super::{Function, Shell};
use crate::errors::Unwind;
use crate::host::{Output, ProgramRequest, ProgramResult};
use crate::streams::{Io, Sink, SinkRef, Source};

/// The first argument that makes the shell run a job (see `lib.rs`).
pub(crate) const JOB_FLAG: &str = "--ephemeral-job";

/// Process ids of jobs run in place (see `run_async_in_place`).
const FIRST_IN_PLACE_PID: u32 = 1000;

/// Variables a new shell defines itself, or computes: never handed over.
const OWN_VARIABLES: &[&str] = &[
    "BASH",
    "BASHOPTS",
    "BASHPID",
    "BASH_ARGC",
    "BASH_ARGV",
    "BASH_COMMAND",
    "BASH_EXECUTION_STRING",
    "BASH_LINENO",
    "BASH_REMATCH",
    "BASH_SOURCE",
    "BASH_SUBSHELL",
    "BASH_VERSINFO",
    "BASH_VERSION",
    "DIRSTACK",
    "EPOCHREALTIME",
    "EPOCHSECONDS",
    "EUID",
    "FUNCNAME",
    "GROUPS",
    "HISTCMD",
    "LINENO",
    "PIPESTATUS",
    "PPID",
    "RANDOM",
    "SECONDS",
    "SHELLOPTS",
    "SHLVL",
    "SRANDOM",
    "UID",
    "_",
];

/// One background job of this shell.
#[derive(Clone)]
pub(crate) struct Job {
    /// `%1`, `%2`, …
    pub(crate) number: usize,
    pub(crate) pid: u32,
    /// The command as `jobs` shows it.
    pub(crate) text: String,
    /// Its exit status once it has been waited for.
    pub(crate) status: Option<i32>,
    /// Where its collected output goes, when it was not the terminal's.
    sinks: Option<(SinkRef, SinkRef)>,
    /// Whether its output is the terminal's: the shell waits for it
    /// before it ends, as a reader of the pipe would until EOF.
    holds_terminal: bool,
    /// `jobs` has reported it as done (it is then forgotten there).
    pub(crate) reported: bool,
}

impl Shell {
    /// `and_or &`: starts it in the background; the status is 0, as bash's.
    pub(crate) fn run_async(&mut self, and_or: &ast::AndOrList, io: &Io) -> i32 {
        if !self.host.can_spawn() {
            return self.run_async_in_place(and_or, io);
        }
        // What this shell printed so far comes before anything the job prints.
        io.flush();
        let text = and_or.to_string();
        let (out_mode, err_mode) = (
            io.stdout.borrow().host_output(),
            io.stderr.borrow().host_output(),
        );
        let to_terminal = out_mode == Output::Inherit || err_mode == Output::Inherit;
        let (functions, job) = match (self.functions_json(), serde_json::to_string(and_or)) {
            (Ok(f), Ok(j)) => (f, j),
            (Err(e), _) | (_, Err(e)) => {
                io.err_line(&format!(
                    "{}: fork: cannot hand over the job: {e}",
                    self.location.name
                ));
                return 1;
            }
        };
        let mut argv = vec![
            "bash".to_string(),
            JOB_FLAG.to_string(),
            self.state_script(),
            functions,
            job,
            (self.location.base + self.location.line).to_string(),
            self.arg0.clone(),
        ];
        argv.extend(self.positional.iter().cloned());
        let mut request = ProgramRequest::new(argv, self.child_env(), self.cwd.clone());
        request.stdout = out_mode;
        request.stderr = err_mode;
        request.stderr_to_stdout =
            out_mode == Output::Capture && std::rc::Rc::ptr_eq(&io.stdout, &io.stderr);
        match self.host.spawn_program(&request) {
            Ok(pid) => {
                let number = self.jobs.iter().map(|j| j.number).max().unwrap_or(0) + 1;
                self.jobs.push(Job {
                    number,
                    pid,
                    text: format!("{text} &"),
                    status: None,
                    sinks: Some((io.stdout.clone(), io.stderr.clone())),
                    holds_terminal: to_terminal && !detached(and_or),
                    reported: false,
                });
                self.last_bg_pid = Some(pid);
                0
            }
            Err(msg) => {
                io.err_line(&format!("{}: fork: {msg}", self.location.name));
                1
            }
        }
    }

    /// Where no process can be started (a native test host): the job runs
    /// to its end in a subshell first, and is then a finished job.
    fn run_async_in_place(&mut self, and_or: &ast::AndOrList, io: &Io) -> i32 {
        let mut child = self.subshell();
        let status = match child.run_and_or(and_or, io) {
            Ok(status) => status,
            Err(Unwind::Exit(s) | Unwind::Abort(s) | Unwind::Return(s)) => s,
            Err(Unwind::Break(_) | Unwind::Continue(_)) => child.status,
        };
        let status = child.finish_subshell(status, io);
        self.rejoin(&child);
        let pid = FIRST_IN_PLACE_PID + u32::try_from(self.jobs.len()).unwrap_or(0);
        let number = self.jobs.iter().map(|j| j.number).max().unwrap_or(0) + 1;
        self.jobs.push(Job {
            number,
            pid,
            text: format!("{and_or} &"),
            status: Some(status),
            sinks: None,
            holds_terminal: false,
            reported: false,
        });
        self.last_bg_pid = Some(pid);
        0
    }

    /// Waits for job `pid` to end and returns its status; `None` if it is
    /// not a job of this shell. Its collected output is written out then.
    pub(crate) fn wait_for_job(&mut self, pid: u32) -> Option<i32> {
        let index = self.jobs.iter().position(|j| j.pid == pid)?;
        if let Some(status) = self.jobs[index].status {
            self.jobs[index].reported = true;
            return Some(status);
        }
        let status = match self.host.wait_program(pid, None) {
            Ok(Some(done)) => self.job_ended(index, &done),
            // The wait itself was cut short (the command's own deadline):
            // the job's status is unknown, as after a signal.
            Ok(None) | Err(_) => 128 + 9,
        };
        // A waited-for job leaves the job list (`jobs`), as in bash; its
        // status is still known to a later `wait`.
        self.jobs[index].status = Some(status);
        self.jobs[index].reported = true;
        Some(status)
    }

    /// Whether job `index` has ended, without waiting; records its status.
    pub(crate) fn poll_job(&mut self, index: usize) -> Option<i32> {
        let job = self.jobs.get(index)?;
        if job.status.is_some() {
            return job.status;
        }
        match self.host.wait_program(job.pid, Some(0)) {
            Ok(Some(done)) => {
                let status = self.job_ended(index, &done);
                self.jobs[index].status = Some(status);
                Some(status)
            }
            Ok(None) => None,
            // Unknown to the host: it ended and was collected elsewhere.
            Err(_) => {
                self.jobs[index].status = Some(0);
                Some(0)
            }
        }
    }

    /// Writes what a job's output collected into where it was to go (what
    /// went straight to the terminal came back empty).
    fn job_ended(&self, index: usize, done: &ProgramResult) -> i32 {
        if let Some((out, err)) = &self.jobs[index].sinks {
            if !done.stdout.is_empty() {
                let _ = out.borrow_mut().write_bytes(&done.stdout);
            }
            if !done.stderr.is_empty() {
                let _ = err.borrow_mut().write_bytes(&done.stderr);
            }
        }
        done.status
    }

    /// The job a `%N`, `%%`, `%+`, `%-` or `%name` spec names (its index).
    pub(crate) fn job_index(&self, spec: &str) -> Option<usize> {
        let rest = spec.strip_prefix('%')?;
        let live: Vec<usize> = (0..self.jobs.len())
            .filter(|&i| !self.jobs[i].reported)
            .collect();
        match rest {
            "" | "%" | "+" => live.last().copied(),
            "-" => live.iter().rev().nth(1).or(live.last()).copied(),
            _ => {
                if let Ok(n) = rest.parse::<usize>() {
                    return live.iter().copied().find(|&i| self.jobs[i].number == n);
                }
                let (contains, needle) = match rest.strip_prefix('?') {
                    Some(n) => (true, n),
                    None => (false, rest),
                };
                live.iter().copied().rev().find(|&i| {
                    let text = &self.jobs[i].text;
                    if contains {
                        text.contains(needle)
                    } else {
                        text.starts_with(needle)
                    }
                })
            }
        }
    }

    /// Before this shell ends: waits for the jobs still writing to its
    /// stdout, as a reader of that pipe would wait for its end.
    pub(crate) fn wait_for_terminal_jobs(&mut self) {
        let pids: Vec<u32> = self
            .jobs
            .iter()
            .filter(|j| j.holds_terminal && j.status.is_none())
            .map(|j| j.pid)
            .collect();
        for pid in pids {
            self.wait_for_job(pid);
        }
    }

    /// In a new shell: takes over its parent's `state` (text, run
    /// quietly) and `functions` (JSON), then runs the `job` (JSON) as a
    /// subshell at `line` of the parent's text.
    pub(crate) fn run_job(
        &mut self,
        state: &str,
        functions: &str,
        job: &str,
        line: usize,
        io: &Io,
    ) -> i32 {
        let (functions, job) = match (
            serde_json::from_str::<Vec<(String, Function)>>(functions),
            serde_json::from_str::<ast::AndOrList>(job),
        ) {
            (Ok(f), Ok(j)) => (f, j),
            (Err(e), _) | (_, Err(e)) => {
                io.err_line(&format!("bash: --ephemeral-job: {e}"));
                return 2;
            }
        };
        for (name, function) in functions {
            self.funcs.insert(name, std::rc::Rc::new(function));
        }
        let quiet = Io {
            stdin: Source::bytes(Vec::new()),
            stdout: Sink::null(),
            stderr: Sink::null(),
            extra: Default::default(),
        };
        let _ = self.run_text(state, &quiet);
        self.subshell_level += 1;
        self.status = 0;
        self.location.base = line.saturating_sub(1);
        self.location.line = 1;
        let status = match self.run_and_or(&job, io) {
            Ok(status) => status,
            Err(Unwind::Exit(s) | Unwind::Abort(s) | Unwind::Return(s)) => s,
            Err(Unwind::Break(_) | Unwind::Continue(_)) => self.status,
        };
        self.finish_job(status, io)
    }

    /// This shell's functions, as JSON for a job.
    fn functions_json(&self) -> Result<String, serde_json::Error> {
        let mut funcs: Vec<(&String, &Function)> =
            self.funcs.iter().map(|(n, f)| (n, f.as_ref())).collect();
        funcs.sort_by(|a, b| a.0.cmp(b.0));
        serde_json::to_string(&funcs)
    }

    /// This shell's state as text a new shell runs before the job: what
    /// a subshell would inherit.
    fn state_script(&self) -> String {
        let mut text = String::new();
        let mut names = self.vars.names();
        names.sort();
        for name in names {
            if OWN_VARIABLES.contains(&name.as_str()) {
                continue;
            }
            if let Some(var) = self.vars.get(&name) {
                text.push_str(&crate::builtins::declaration(&name, var));
            }
        }
        for (name, value) in &self.aliases {
            text.push_str(&format!(
                "alias {name}={}\n",
                crate::programs::quoting::single_quote(value)
            ));
        }
        text.push_str(&format!("umask {:04o}\n", self.umask));
        text.push_str(&self.options_script());
        text
    }

    /// `set` and `shopt` lines that give a new shell this one's options.
    fn options_script(&self) -> String {
        let o = &self.opts;
        let set_flags = [
            (o.errexit, "e"),
            (o.nounset, "u"),
            (o.noglob, "f"),
            (o.errtrace, "E"),
            (o.functrace, "T"),
        ];
        let mut text = String::new();
        for (on, flag) in set_flags {
            if on {
                text.push_str(&format!("set -{flag}\n"));
            }
        }
        if o.pipefail {
            text.push_str("set -o pipefail\n");
        }
        for (on, name) in [
            (o.nullglob, "nullglob"),
            (o.failglob, "failglob"),
            (o.dotglob, "dotglob"),
        ] {
            if on {
                text.push_str(&format!("shopt -s {name}\n"));
            }
        }
        let defaults = crate::builtins::shopt::DEFAULT_ON;
        for name in &self.shopts {
            if !defaults.contains(&name.as_str()) {
                text.push_str(&format!("shopt -s {name}\n"));
            }
        }
        for name in defaults {
            if !self.shopts.contains(*name) {
                text.push_str(&format!("shopt -u {name}\n"));
            }
        }
        // Last, so the hand-over itself is not traced.
        if o.xtrace {
            text.push_str("set -x\n");
        }
        text
    }
}

/// Whether a job's own redirections send both its stdout and stderr
/// elsewhere (`cmd > log 2>&1 &`), so it does not hold the terminal: true
/// only when every pipeline's last command redirects both.
fn detached(and_or: &ast::AndOrList) -> bool {
    let pipelines =
        std::iter::once(&and_or.first).chain(and_or.additional.iter().map(|next| match next {
            ast::AndOr::And(p) | ast::AndOr::Or(p) => p,
        }));
    pipelines
        .map(|p| p.seq.last().map(redirects).unwrap_or_default())
        .all(|r| both_redirected(&r))
}

/// The redirections written on a command itself.
fn redirects(cmd: &ast::Command) -> Vec<&ast::IoRedirect> {
    use ast::CommandPrefixOrSuffixItem as Item;
    match cmd {
        ast::Command::Simple(simple) => {
            let prefix = simple.prefix.iter().flat_map(|p| p.0.iter());
            let suffix = simple.suffix.iter().flat_map(|s| s.0.iter());
            prefix
                .chain(suffix)
                .filter_map(|item| match item {
                    Item::IoRedirect(r) => Some(r),
                    _ => None,
                })
                .collect()
        }
        ast::Command::Compound(_, Some(list)) | ast::Command::ExtendedTest(_, Some(list)) => {
            list.0.iter().collect()
        }
        _ => Vec::new(),
    }
}

/// Whether, after `redirects` in order, neither fd 1 nor fd 2 is the
/// original stdout/stderr any more.
fn both_redirected(redirects: &[&ast::IoRedirect]) -> bool {
    use ast::{IoFileRedirectKind as Kind, IoFileRedirectTarget as Target};
    // Where each descriptor points: `true` = away from the terminal.
    let (mut out, mut err) = (false, false);
    for r in redirects {
        match r {
            ast::IoRedirect::OutputAndError(..) => (out, err) = (true, true),
            ast::IoRedirect::File(fd, kind, target) => {
                let fd = fd.unwrap_or(match kind {
                    Kind::Read | Kind::ReadAndWrite | Kind::DuplicateInput => 0,
                    _ => 1,
                });
                let away = match (kind, target) {
                    (Kind::DuplicateOutput, Target::Fd(1)) => out,
                    (Kind::DuplicateOutput, Target::Fd(2)) => err,
                    (Kind::DuplicateOutput, Target::Duplicate(w)) => match w.value.as_str() {
                        "1" => out,
                        "2" => err,
                        _ => true,
                    },
                    (Kind::Write | Kind::Append | Kind::Clobber | Kind::DuplicateOutput, _) => true,
                    _ => continue,
                };
                match fd {
                    1 => out = away,
                    2 => err = away,
                    _ => {}
                }
            }
            _ => {}
        }
    }
    out && err
}
