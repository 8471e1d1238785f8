//! `enable [-n] [-a|-s] [name...]`: turning builtins off (a disabled one
//! is looked up as a program instead) and on, and listing them.

use crate::errors::Unwind;
use crate::interp::Shell;
use crate::streams::Io;

/// The POSIX special builtins this shell has (`enable -s`).
const SPECIAL: &[&str] = &[
    ".", ":", "break", "continue", "eval", "exec", "exit", "export", "readonly", "return", "set",
    "shift", "source", "trap", "unset",
];

pub(crate) fn enable(shell: &mut Shell, io: &Io, argv: &[String]) -> Result<i32, Unwind> {
    let (mut disable, mut all, mut special) = (false, false, false);
    let mut names = Vec::new();
    for arg in argv.iter().skip(1) {
        match arg.as_str() {
            "-n" => disable = true,
            "-a" => all = true,
            "-s" => special = true,
            "-p" => {}
            a if a.starts_with('-') && a.len() > 1 => {
                shell.report(io, &format!("enable: {a}: invalid option"));
                io.err_line("enable: usage: enable [-a] [-dnps] [-f filename] [name ...]");
                return Ok(2);
            }
            name => names.push(name.to_string()),
        }
    }
    if names.is_empty() {
        list(shell, io, disable, all, special);
        return Ok(0);
    }
    let mut status = 0;
    for name in names {
        if super::lookup(&name).is_none() {
            shell.report(io, &format!("enable: {name}: not a shell builtin"));
            status = 1;
        } else if disable {
            shell.disabled_builtins.insert(name);
        } else {
            shell.disabled_builtins.remove(&name);
        }
    }
    Ok(status)
}

fn list(shell: &Shell, io: &Io, disabled_only: bool, all: bool, special: bool) {
    let mut out = String::new();
    for name in super::builtin_names() {
        let off = shell.disabled_builtins.contains(&name);
        let shown = (all || off == disabled_only) && (!special || SPECIAL.contains(&name.as_str()));
        if shown {
            let flag = if off { "-n " } else { "" };
            out.push_str(&format!("enable {flag}{name}\n"));
        }
    }
    io.out(out.as_bytes());
}
