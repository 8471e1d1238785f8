//! `cd`, `pushd`, `popd`, `dirs`: the working folder is shell state, kept logically (`..` strips a
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
        Ok(_) if shell.host.access(&full, 1).is_err() => {
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

/// The folder stack as `dirs` shows it: the working folder first, then
/// the saved ones, newest first.
fn stack(shell: &Shell) -> Vec<String> {
    std::iter::once(shell.cwd.clone())
        .chain(shell.dir_stack.iter().rev().cloned())
        .collect()
}

/// `~` for `$HOME`, as `dirs` prints without `-l`.
fn tilde(shell: &Shell, dir: &str) -> String {
    match shell
        .vars
        .scalar("HOME")
        .filter(|h| !h.is_empty() && *h != "/")
    {
        Some(home) if dir == home => "~".to_string(),
        Some(home) => match dir.strip_prefix(home).filter(|r| r.starts_with('/')) {
            Some(rest) => format!("~{rest}"),
            None => dir.to_string(),
        },
        None => dir.to_string(),
    }
}

fn print_stack(shell: &Shell, io: &Io, long: bool, per_line: bool, numbered: bool) {
    let dirs: Vec<String> = stack(shell)
        .iter()
        .map(|d| if long { d.clone() } else { tilde(shell, d) })
        .collect();
    let text = if numbered {
        dirs.iter()
            .enumerate()
            .map(|(i, d)| format!("{i:2}  {d}\n"))
            .collect()
    } else if per_line {
        dirs.iter().map(|d| format!("{d}\n")).collect()
    } else {
        format!("{}\n", dirs.join(" "))
    };
    io.out(text.as_bytes());
}

/// `dirs [-c] [-l] [-p] [-v]`.
pub(crate) fn dirs(shell: &mut Shell, io: &Io, argv: &[String]) -> Result<i32, Unwind> {
    let (mut long, mut per_line, mut numbered) = (false, false, false);
    for arg in argv.iter().skip(1) {
        match arg.as_str() {
            "-c" => shell.dir_stack.clear(),
            "-l" => long = true,
            "-p" => per_line = true,
            "-v" => numbered = true,
            a => {
                shell.report(io, &format!("dirs: {a}: invalid option"));
                io.err_line("dirs: usage: dirs [-clpv] [+N] [-N]");
                return Ok(2);
            }
        }
    }
    if !argv.iter().any(|a| a == "-c") {
        print_stack(shell, io, long, per_line, numbered);
    }
    Ok(0)
}

/// `pushd DIR`: saves the working folder and changes to DIR; `pushd`
/// alone swaps the two top folders.
pub(crate) fn pushd(shell: &mut Shell, io: &Io, argv: &[String]) -> Result<i32, Unwind> {
    let target = match argv.get(1) {
        Some(dir) => dir.clone(),
        None => match shell.dir_stack.pop() {
            Some(top) => top,
            None => {
                shell.report(io, "pushd: no other directory");
                return Ok(1);
            }
        },
    };
    let before = shell.cwd.clone();
    let status = cd(shell, io, &["cd".to_string(), target])?;
    if status != 0 {
        return Ok(status);
    }
    shell.dir_stack.push(before);
    print_stack(shell, io, false, false, false);
    Ok(0)
}

/// `popd`: back to the most recently saved folder.
pub(crate) fn popd(shell: &mut Shell, io: &Io, _argv: &[String]) -> Result<i32, Unwind> {
    let Some(top) = shell.dir_stack.pop() else {
        shell.report(io, "popd: directory stack empty");
        return Ok(1);
    };
    let status = cd(shell, io, &["cd".to_string(), top])?;
    if status == 0 {
        print_stack(shell, io, false, false, false);
    }
    Ok(status)
}
