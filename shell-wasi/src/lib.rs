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

mod builtins;
mod errors;
pub mod host;
mod interp;
mod streams;
mod utils;

use std::io::Write;
use std::rc::Rc;

pub use host::{FakeHost, Host};
pub use interp::Shell;

use streams::{Io, Sink, Source};

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
    utils::names()
}

/// Runs the invocation to completion: the shell starts in `$PWD`, runs
/// the text, hands its state to the host and returns the exit status.
pub fn run(
    inv: Invocation,
    host: Rc<dyn Host>,
    stdout: Box<dyn Write>,
    stderr: Box<dyn Write>,
) -> i32 {
    let io = Io {
        stdin: match inv.stdin {
            Some(bytes) => Source::bytes(bytes),
            None => Source::process(),
        },
        stdout: Sink::stream(stdout),
        stderr: Sink::stream(stderr),
        extra: Default::default(),
    };
    let mut shell = Shell::new(Rc::clone(&host), &inv.env, inv.arg0, inv.args);
    let status = shell.run_toplevel(&inv.script, &io);
    host.save_state(&shell.cwd, &shell.child_env());
    io.flush();
    status
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
