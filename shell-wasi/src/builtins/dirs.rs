//! `cd`: the working folder is shell state, kept logically (`..` strips a
//! component, symlinks are not resolved), as bash does without `-P`.

use crate::errors::Unwind;
use crate::host::{S_IFDIR, S_IFMT};
use crate::interp::{Shell, normalize};
use crate::streams::Io;

pub(crate) fn cd(shell: &mut Shell, io: &Io, argv: &[String]) -> Result<i32, Unwind> {
    let args: Vec<&String> = argv
        .iter()
        .skip(1)
        .filter(|a| !matches!(a.as_str(), "-L" | "-P" | "--"))
        .collect();
    if args.len() > 1 {
        shell.report(io, "cd: too many arguments");
        return Ok(1);
    }
    let mut print = false;
    let target = match args.first().map(|s| s.as_str()) {
        None => match shell.vars.scalar("HOME") {
            Some(home) => home.to_string(),
            None => {
                shell.report(io, "cd: HOME not set");
                return Ok(1);
            }
        },
        Some("-") => match shell.vars.scalar("OLDPWD") {
            Some(old) => {
                print = true;
                old.to_string()
            }
            None => {
                shell.report(io, "cd: OLDPWD not set");
                return Ok(1);
            }
        },
        Some(dir) => dir.to_string(),
    };
    if target.is_empty() {
        return Ok(0);
    }
    let full = normalize(&shell.cwd, &target);
    match shell.host.get_mode(&full, true) {
        Ok(mode) if mode & S_IFMT != S_IFDIR => {
            shell.report(io, &format!("cd: {target}: Not a directory"));
            return Ok(1);
        }
        Ok(mode) if mode & 0o100 == 0 => {
            shell.report(io, &format!("cd: {target}: Permission denied"));
            return Ok(1);
        }
        Ok(_) => {}
        Err(err) => {
            shell.report(io, &format!("cd: {target}: {}", err.message()));
            return Ok(1);
        }
    }
    let old = std::mem::replace(&mut shell.cwd, full.clone());
    let _ = shell.vars.set("OLDPWD", old);
    let _ = shell.vars.set("PWD", full.clone());
    if print {
        io.out(format!("{full}\n").as_bytes());
    }
    Ok(0)
}
