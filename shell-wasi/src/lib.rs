//! The sandbox's shell: a bash-compatible interpreter that runs
//! `sh -c 'COMMAND'` inside a WASI 0.2 component, with no processes.
//!
//! This crate owns everything between the command string and the exit
//! status: parsing (delegated to brush-parser), expansion, execution of
//! pipelines in-process, redirections, builtins, and the utilities an
//! agent expects in `/usr/bin` (`ls`, `cat`, `curl`, ...), each matching
//! GNU/bash output and exit codes. It does not own the filesystem or the
//! sandbox: files are WASI files, and mode bits and the hand-over of the
//! working folder and exported variables to the next command go through
//! the `Host` trait (`host.rs`), backed by the sandbox's own imports.

#![warn(missing_docs)]

mod builtins;
mod errors;
pub mod host;
mod interp;
mod programs;
mod streams;

use std::io::Write;
use std::rc::Rc;

pub use host::{FakeHost, Host};
pub use interp::Shell;

use streams::{Io, Sink, Source, Terminal, Which};

/// One `sh -c` invocation.
#[derive(Debug, Clone, Default)]
pub struct Invocation {
    /// The command string.
    pub script: String,
    /// `$0` (bash's default when none is given is `bash`).
    pub arg0: String,
    /// `$1`, `$2`, ...
    pub args: Vec<String>,
    /// The environment the host gives.
    pub env: Vec<(String, String)>,
    /// Bytes on stdin; `None` reads the process's stdin when needed.
    pub stdin: Option<Vec<u8>>,
}

/// Why the command line could not be understood.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageError(pub String);

impl Invocation {
    /// Reads `ARGV0 -c STRING [NAME [ARGS...]]`.
    pub fn from_args(argv: &[String], env: Vec<(String, String)>) -> Result<Self, UsageError> {
        let mut rest = argv.iter().skip(1);
        match rest.next().map(String::as_str) {
            Some("-c") => {}
            _ => {
                return Err(UsageError(
                    "usage: sh -c COMMAND [NAME [ARGS...]]".to_string(),
                ));
            }
        }
        let Some(script) = rest.next() else {
            return Err(UsageError(
                "bash: -c: option requires an argument".to_string(),
            ));
        };
        let arg0 = rest.next().cloned().unwrap_or_else(|| "bash".to_string());
        Ok(Self {
            script: script.clone(),
            arg0,
            args: rest.cloned().collect(),
            env,
            stdin: None,
        })
    }
}

/// The utilities built into the shell, sorted: the host lists them in the
/// sandbox's `/usr/bin` so `ls`, `test -x` and `which` agree with the shell.
pub fn utility_names() -> Vec<&'static str> {
    programs::names()
}

/// Runs the shell as a program of the sandbox, from its whole argv:
/// `sh -c TEXT` (a command of the session: its state goes to the next
/// one), a background job (`--ephemeral-job`, see `interp/jobs.rs`), or
/// any other argv — `bash FILE`, `bash -e -c TEXT`, `ls -l`, `./script` —
/// run as one simple command, as exec(2) would run it (how another
/// program's `subprocess.run(["ls"])` reaches the shell's utilities).
pub fn run_argv(
    argv: &[String],
    env: Vec<(String, String)>,
    host: Rc<dyn Host>,
    stdout: Box<dyn Write>,
    stderr: Box<dyn Write>,
) -> i32 {
    if argv.get(1).map(String::as_str) == Some(interp::jobs::JOB_FLAG) {
        return run_job(argv, env, host, stdout, stderr);
    }
    if let Ok(inv) = Invocation::from_args(argv, env.clone()) {
        return run(inv, host, stdout, stderr);
    }
    let Some((arg0, args)) = argv.split_first() else {
        return 0;
    };
    // `"$0" "$@"` runs argv exactly as given: a utility, a path, or the
    // `bash` program with its own options. Nothing of it is saved for the
    // session's next command.
    let inv = Invocation {
        script: "\"$0\" \"$@\"".to_string(),
        arg0: arg0.clone(),
        args: args.to_vec(),
        env,
        stdin: None,
    };
    run_detached(inv, host, stdout, stderr)
}

/// `bash --ephemeral-job STATE FUNCTIONS JOB LINE ARG0 [ARGS...]`: a
/// background job of another shell. STATE (variables, options: text) is
/// run quietly first, FUNCTIONS (JSON) defined, then JOB (a syntax tree,
/// JSON) as if at line LINE of its parent's text.
fn run_job(
    argv: &[String],
    env: Vec<(String, String)>,
    host: Rc<dyn Host>,
    stdout: Box<dyn Write>,
    stderr: Box<dyn Write>,
) -> i32 {
    let (Some(state), Some(functions), Some(job), Some(line), Some(arg0)) = (
        argv.get(2),
        argv.get(3),
        argv.get(4),
        argv.get(5),
        argv.get(6),
    ) else {
        let _ = { stderr }.write_all(b"bash: --ephemeral-job: missing arguments\n");
        return 2;
    };
    let args = argv.get(7..).unwrap_or_default().to_vec();
    let terminal = Terminal::new(stdout, stderr);
    let io = Io {
        stdin: Source::bytes(Vec::new()),
        stdout: Sink::stream(&terminal, Which::Stdout),
        stderr: Sink::stream(&terminal, Which::Stderr),
        extra: Default::default(),
    };
    let mut shell = Shell::new(Rc::clone(&host), &env, arg0.clone(), args);
    let status = shell.run_job(state, functions, job, line.parse().unwrap_or(1), &io);
    report_pipe_limit(host.as_ref(), &io);
    io.flush();
    status
}

/// Runs `inv` like [`run`], but hands nothing to the host afterwards.
fn run_detached(
    inv: Invocation,
    host: Rc<dyn Host>,
    stdout: Box<dyn Write>,
    stderr: Box<dyn Write>,
) -> i32 {
    let terminal = Terminal::new(stdout, stderr);
    let io = Io {
        stdin: match inv.stdin {
            Some(bytes) => Source::bytes(bytes),
            None => Source::process(),
        },
        stdout: Sink::stream(&terminal, Which::Stdout),
        stderr: Sink::stream(&terminal, Which::Stderr),
        extra: Default::default(),
    };
    let mut shell = Shell::new(Rc::clone(&host), &inv.env, inv.arg0, inv.args);
    let status = shell.run_toplevel(&inv.script, &io);
    report_pipe_limit(host.as_ref(), &io);
    io.flush();
    status
}

/// Runs the invocation to completion: the shell starts in `$PWD`, runs
/// the text, hands its state to the host and returns the exit status.
pub fn run(
    inv: Invocation,
    host: Rc<dyn Host>,
    stdout: Box<dyn Write>,
    stderr: Box<dyn Write>,
) -> i32 {
    let terminal = Terminal::new(stdout, stderr);
    let io = Io {
        stdin: match inv.stdin {
            Some(bytes) => Source::bytes(bytes),
            None => Source::process(),
        },
        stdout: Sink::stream(&terminal, Which::Stdout),
        stderr: Sink::stream(&terminal, Which::Stderr),
        extra: Default::default(),
    };
    let mut shell = Shell::new(Rc::clone(&host), &inv.env, inv.arg0, inv.args);
    let status = shell.run_toplevel(&inv.script, &io);
    host.save_state(&shell.cwd, &shell.child_env());
    report_pipe_limit(host.as_ref(), &io);
    io.flush();
    status
}

/// Says on stderr, and to the host as the limit `pipe`, that a pipe filled
/// its buffer and the rest of a stream was cut.
fn report_pipe_limit(host: &dyn Host, io: &Io) {
    if streams::take_pipe_filled() {
        io.err_line(&format!(
            "ephemeral: a pipe filled its {} MiB buffer (the stages of a pipeline run one after \
             another): what came after was cut (limit: pipe)",
            streams::MAX_PIPE_BYTES >> 20
        ));
        host.limit_hit("pipe");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `cd sub && export X=1` must reach the host for the next command.
    #[test]
    fn state_is_saved_for_the_next_command() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().to_string_lossy().into_owned();
        let host = Rc::new(FakeHost::new());
        let inv = Invocation {
            script: "mkdir sub && cd sub && export X=1 && Y=2".to_string(),
            arg0: "bash".to_string(),
            env: vec![("PWD".to_string(), path.clone())],
            stdin: Some(Vec::new()),
            ..Invocation::default()
        };
        let status = run(
            inv,
            host.clone(),
            Box::new(std::io::sink()),
            Box::new(std::io::sink()),
        );
        assert_eq!(status, 0);
        let (cwd, exported) = host.saved_state().expect("saved");
        assert_eq!(cwd, format!("{path}/sub"));
        assert!(exported.contains(&("X".to_string(), "1".to_string())));
        assert!(!exported.iter().any(|(k, _)| k == "Y"));
    }

    /// Every write, with the stream it went to, in the order written.
    type WriteLog = Rc<std::cell::RefCell<Vec<(&'static str, Vec<u8>)>>>;

    /// Records every write with the stream it went to, in one log.
    struct Logged(&'static str, WriteLog);

    impl Write for Logged {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.1.borrow_mut().push((self.0, buf.to_vec()));
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// What a command wrote to stdout and stderr reaches them in the order
    /// written, whatever the buffering: `2>&1` downstream must merge them
    /// as bash's output would be.
    #[test]
    fn stdout_and_stderr_keep_their_order() {
        let dir = tempfile::tempdir().expect("tempdir");
        let log = Rc::new(std::cell::RefCell::new(Vec::new()));
        let inv = Invocation {
            script:
                "echo out; echo err >&2; echo out2; ls /nonexistent-x; printf 'a'; printf 'b' >&2"
                    .to_string(),
            arg0: "bash".to_string(),
            env: vec![("PWD".to_string(), dir.path().to_string_lossy().into_owned())],
            stdin: Some(Vec::new()),
            ..Invocation::default()
        };
        run(
            inv,
            Rc::new(FakeHost::new()),
            Box::new(Logged("out", log.clone())),
            Box::new(Logged("err", log.clone())),
        );
        let merged: Vec<(&str, String)> = log
            .borrow()
            .iter()
            .map(|(s, b)| (*s, String::from_utf8_lossy(b).into_owned()))
            .collect();
        let want = [
            ("out", "out\n"),
            ("err", "err\n"),
            ("out", "out2\n"),
            (
                "err",
                "ls: cannot access '/nonexistent-x': No such file or directory\n",
            ),
            ("out", "a"),
            ("err", "b"),
        ];
        let want: Vec<(&str, String)> = want.iter().map(|(s, t)| (*s, t.to_string())).collect();
        assert_eq!(merged, want);
    }

    #[test]
    fn arguments_follow_sh_dash_c() {
        let argv: Vec<String> = ["sh", "-c", "echo $0 $1", "name", "one"]
            .iter()
            .map(ToString::to_string)
            .collect();
        let inv = Invocation::from_args(&argv, Vec::new()).expect("parse");
        assert_eq!(
            (inv.script.as_str(), inv.arg0.as_str(), inv.args.len()),
            ("echo $0 $1", "name", 1)
        );
        assert!(Invocation::from_args(&argv[..1], Vec::new()).is_err());
    }
}
