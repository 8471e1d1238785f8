//! Running shell scripts as programs: `./f`, `bash f`, `sh -c ...`.
//!
//! A script is a new bash process: a fresh `Shell` that inherits only the
//! exported variables and the working folder, never the caller's
//! functions or unexported variables.

use std::rc::Rc;

use super::Shell;
use crate::host::Host;
use crate::streams::Io;

/// What a `#!` line asks for.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Interpreter {
    /// bash or sh, or no `#!` at all (bash runs those itself).
    Shell,
    /// `#!/usr/bin/env NAME` for something else.
    Env(String),
    /// `#!/path/to/interpreter` for something else.
    Path(String),
    /// Not text: execve would fail with ENOEXEC.
    Binary,
}

/// Interpreters this shell stands in for.
const SHELLS: [&str; 2] = ["bash", "sh"];

pub(crate) fn interpreter(bytes: &[u8]) -> Interpreter {
    let Some(rest) = bytes.strip_prefix(b"#!") else {
        let head = bytes.get(..bytes.len().min(80)).unwrap_or_default();
        return if head.contains(&0) {
            Interpreter::Binary
        } else {
            Interpreter::Shell
        };
    };
    let line_end = rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
    let line = String::from_utf8_lossy(rest.get(..line_end).unwrap_or_default()).into_owned();
    let mut words = line.split_whitespace();
    let Some(program) = words.next() else {
        return Interpreter::Shell;
    };
    let base = program.rsplit('/').next().unwrap_or(program);
    if base == "env" {
        let target = words.find(|w| !w.starts_with('-')).unwrap_or("");
        return if SHELLS.contains(&target) {
            Interpreter::Shell
        } else {
            Interpreter::Env(target.to_string())
        };
    }
    if SHELLS.contains(&base) {
        return Interpreter::Shell;
    }
    Interpreter::Path(program.to_string())
}

impl Shell {
    /// A new bash process started from a program with `env` and `cwd`.
    pub(crate) fn spawn(
        host: &Rc<dyn Host>,
        env: &[(String, String)],
        cwd: &str,
        arg0: String,
        args: Vec<String>,
        depth: usize,
    ) -> Self {
        let mut shell = Self::new(Rc::clone(host), env, arg0, args);
        shell.cwd = cwd.to_string();
        let _ = shell.vars.set("PWD", cwd.to_string());
        shell.depth = depth;
        shell
    }
}

/// Runs `text` as the script `path` with arguments, like `bash path args`.
pub(crate) fn run_script(parent: &Shell, path: &str, text: &str, args: &[String], io: &Io) -> i32 {
    if parent.depth + 1 >= super::MAX_NESTING {
        parent.report(io, &crate::errors::ShellError::NestingLimit.to_string());
        return 1;
    }
    let env = parent.child_env();
    let mut child = Shell::spawn(
        &parent.host,
        &env,
        &parent.cwd,
        path.to_string(),
        args.to_vec(),
        parent.depth + 1,
    );
    child.is_script = true;
    child.run_toplevel(text, io)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_shebangs() {
        assert_eq!(interpreter(b"#!/bin/bash\necho"), Interpreter::Shell);
        assert_eq!(interpreter(b"#!/usr/bin/env bash\n"), Interpreter::Shell);
        assert_eq!(interpreter(b"echo hi\n"), Interpreter::Shell);
        assert_eq!(
            interpreter(b"#!/usr/bin/env python3\n"),
            Interpreter::Env("python3".into())
        );
        assert_eq!(
            interpreter(b"#!/usr/bin/python3\n"),
            Interpreter::Path("/usr/bin/python3".into())
        );
        assert_eq!(interpreter(b"\x7fELF\0\0"), Interpreter::Binary);
    }
}
