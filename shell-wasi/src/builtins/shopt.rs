//! `shopt [-s|-u] [-p] [-q] [OPTNAME...]`: bash's own options. The glob
//! options change what the shell does; the rest are accepted and listed
//! (their default behaviour is what the shell has anyway).

use crate::errors::Unwind;
use crate::interp::Shell;
use crate::streams::Io;

/// Every option name bash 5.2 knows, sorted, for listing and validation.
pub(crate) const NAMES: &[&str] = &[
    "assoc_expand_once",
    "autocd",
    "cdable_vars",
    "cdspell",
    "checkhash",
    "checkjobs",
    "checkwinsize",
    "cmdhist",
    "compat31",
    "compat32",
    "compat40",
    "compat41",
    "compat42",
    "compat43",
    "compat44",
    "complete_fullquote",
    "direxpand",
    "dirspell",
    "dotglob",
    "execfail",
    "expand_aliases",
    "extdebug",
    "extglob",
    "extquote",
    "failglob",
    "force_fignore",
    "globasciiranges",
    "globskipdots",
    "globstar",
    "gnu_errfmt",
    "histappend",
    "histreedit",
    "histverify",
    "hostcomplete",
    "huponexit",
    "inherit_errexit",
    "interactive_comments",
    "lastpipe",
    "lithist",
    "localvar_inherit",
    "localvar_unset",
    "login_shell",
    "mailwarn",
    "no_empty_cmd_completion",
    "nocaseglob",
    "nocasematch",
    "noexpand_translation",
    "nullglob",
    "patsub_replacement",
    "progcomp",
    "progcomp_alias",
    "promptvars",
    "restricted_shell",
    "shift_verbose",
    "sourcepath",
    "varredir_close",
    "xpg_echo",
];

/// Options on by default in `bash -c`.
pub(crate) const DEFAULT_ON: &[&str] = &[
    "checkwinsize",
    "cmdhist",
    "complete_fullquote",
    "extquote",
    "force_fignore",
    "globasciiranges",
    "globskipdots",
    "hostcomplete",
    "interactive_comments",
    "patsub_replacement",
    "progcomp",
    "promptvars",
    "sourcepath",
];

pub(crate) fn is_on(shell: &Shell, name: &str) -> bool {
    match name {
        "nullglob" => shell.opts.nullglob,
        "failglob" => shell.opts.failglob,
        "dotglob" => shell.opts.dotglob,
        other => shell.shopts.contains(other),
    }
}

fn set(shell: &mut Shell, name: &str, on: bool) {
    match name {
        "nullglob" => shell.opts.nullglob = on,
        "failglob" => shell.opts.failglob = on,
        "dotglob" => shell.opts.dotglob = on,
        other if on => {
            shell.shopts.insert(other.to_string());
        }
        other => {
            shell.shopts.remove(other);
        }
    }
}

pub(crate) fn shopt(shell: &mut Shell, io: &Io, argv: &[String]) -> Result<i32, Unwind> {
    let (mut mode, mut print, mut quiet, mut set_o) = (None, false, false, false);
    let mut names = Vec::new();
    for arg in argv.iter().skip(1) {
        match arg.as_str() {
            "-s" => mode = Some(true),
            "-u" => mode = Some(false),
            "-p" => print = true,
            "-q" => quiet = true,
            "-o" => set_o = true,
            a if a.starts_with('-') => {
                shell.report(io, &format!("shopt: {a}: invalid option"));
                io.err_line("shopt: usage: shopt [-pqsu] [-o] [optname ...]");
                return Ok(2);
            }
            name => names.push(name.to_string()),
        }
    }
    if set_o {
        return Ok(set_options(shell, io, &names, mode, print, quiet));
    }
    let mut status = 0;
    for name in &names {
        if !NAMES.contains(&name.as_str()) {
            shell.report(io, &format!("shopt: {name}: invalid shell option name"));
            status = 1;
        }
    }
    let names: Vec<String> = names
        .into_iter()
        .filter(|n| NAMES.contains(&n.as_str()))
        .collect();
    if let Some(on) = mode {
        for name in &names {
            set(shell, name, on);
        }
        if !print {
            return Ok(status);
        }
    }
    let listed: Vec<String> = if names.is_empty() {
        NAMES
            .iter()
            .filter(|n| mode.is_none_or(|on| is_on(shell, n) == on))
            .map(|n| n.to_string())
            .collect()
    } else {
        names
    };
    let mut out = String::new();
    for name in &listed {
        let on = is_on(shell, name);
        if !on && status == 0 && mode.is_none() {
            status = 1;
        }
        if print {
            out.push_str(&format!("shopt {} {name}\n", if on { "-s" } else { "-u" }));
        } else {
            out.push_str(&format!("{name:<15}\t{}\n", if on { "on" } else { "off" }));
        }
    }
    if !quiet {
        io.out(out.as_bytes());
    }
    Ok(status)
}

/// `shopt -o`: the options of `set -o`, listed as `set -o NAME` commands
/// with `-p`.
fn set_options(
    shell: &mut Shell,
    io: &Io,
    names: &[String],
    mode: Option<bool>,
    print: bool,
    quiet: bool,
) -> i32 {
    let known = super::vars::option_names();
    let mut status = 0;
    let mut listed = Vec::new();
    for name in names {
        if known.contains(&name.as_str()) {
            listed.push(name.as_str());
        } else {
            shell.report(io, &format!("shopt: {name}: invalid option name"));
            status = 1;
        }
    }
    if let Some(on) = mode {
        for name in &listed {
            shell.set_option_flag(&format!("{}o {name}", if on { '-' } else { '+' }));
        }
        if !print {
            return status;
        }
    }
    if names.is_empty() {
        listed = known.to_vec();
    }
    let mut out = String::new();
    for name in listed {
        let on = super::vars::option_on(shell, name);
        if !on && mode.is_none() && !names.is_empty() {
            status = 1;
        }
        if print {
            out.push_str(&format!("set {}o {name}\n", if on { '-' } else { '+' }));
        } else {
            out.push_str(&format!("{name:<15}\t{}\n", if on { "on" } else { "off" }));
        }
    }
    if !quiet {
        io.out(out.as_bytes());
    }
    status
}
