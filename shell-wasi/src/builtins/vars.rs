//! Builtins over variables and options: `export`, `unset`, `readonly`,
//! `local`, `declare`, `set`, `shift`, `let`.

use crate::errors::Unwind;
use crate::interp::Shell;
use crate::interp::vars::{Value, is_name};
use crate::streams::Io;

fn invalid_identifier(shell: &Shell, io: &Io, builtin: &str, arg: &str) {
    shell.report(io, &format!("{builtin}: `{arg}': not a valid identifier"));
}

pub(crate) fn unset(shell: &mut Shell, io: &Io, argv: &[String]) -> Result<i32, Unwind> {
    let mut functions = false;
    let mut explicit_var = false;
    let mut raw = false;
    let mut status = 0;
    for arg in argv.iter().skip(1) {
        match arg.as_str() {
            "-f" => functions = true,
            "-v" => {
                functions = false;
                explicit_var = true;
            }
            "-n" => {
                functions = false;
                raw = true;
            }
            a if a.starts_with('-') => {
                shell.report(io, &format!("unset: {a}: invalid option"));
                io.err_line("unset: usage: unset [-f] [-v] [-n] [name ...]");
                return Ok(2);
            }
            name if functions => {
                shell.funcs.remove(name);
            }
            name => {
                // Functions may have names no variable can (`[`).
                let removed_function =
                    !explicit_var && !is_name(name) && shell.funcs.remove(name).is_some();
                let base = name.split('[').next().unwrap_or(name);
                let element = name
                    .strip_prefix(base)
                    .and_then(|r| r.strip_prefix('['))
                    .and_then(|r| r.strip_suffix(']'));
                let result = match element {
                    Some(sub) => unset_element(shell, io, base, sub),
                    None if raw => shell.vars.unset_raw(name),
                    // Without `-v`, a name that is no variable may be a function.
                    None if !explicit_var
                        && shell.vars.get_raw(name).is_none()
                        && shell.funcs.contains_key(name) =>
                    {
                        shell.funcs.remove(name);
                        Ok(())
                    }
                    None => shell.vars.unset(name),
                };
                if !is_name(base) && !removed_function {
                    invalid_identifier(shell, io, "unset", name);
                    status = 1;
                } else if result.is_err() {
                    shell.report(
                        io,
                        &format!("unset: {name}: cannot unset: readonly variable"),
                    );
                    status = 1;
                }
            }
        }
    }
    Ok(status)
}

/// `unset 'a[sub]'`: an associative key as written, else an arithmetic
/// index (negative counts back from the end).
fn unset_element(
    shell: &mut Shell,
    io: &Io,
    name: &str,
    sub: &str,
) -> Result<(), crate::errors::ShellError> {
    if shell.vars.is_assoc(name) || sub == "@" || sub == "*" {
        return shell.vars.unset_element(name, sub);
    }
    let index = shell.arith_expand_eval(sub, io)?;
    shell.vars.unset_element(name, &index.to_string())
}

pub(crate) fn set(shell: &mut Shell, io: &Io, argv: &[String]) -> Result<i32, Unwind> {
    let args = argv.get(1..).unwrap_or_default();
    if args.is_empty() {
        let mut out = String::new();
        for name in shell.vars.names() {
            if let Some(Value::Scalar(v)) = shell
                .vars
                .get_raw(&name)
                .filter(|v| !v.valueless)
                .map(|v| &v.value)
            {
                out.push_str(&format!(
                    "{name}={}\n",
                    crate::programs::quoting::set_quote(v)
                ));
            }
        }
        io.out(out.as_bytes());
        return Ok(0);
    }
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        if arg == "--" {
            shell.positional = args.get(i + 1..).unwrap_or_default().to_vec();
            return Ok(0);
        }
        // `set -`: ends the options and turns off `-x` and `-v`; the rest,
        // if any, are the positional parameters.
        if arg == "-" {
            shell.opts.xtrace = false;
            let rest = args.get(i + 1..).unwrap_or_default();
            if !rest.is_empty() {
                shell.positional = rest.to_vec();
            }
            return Ok(0);
        }
        if (arg == "-o" || arg == "+o") && args.get(i + 1).is_none() {
            list_options(shell, io, arg == "+o");
            return Ok(0);
        }
        if arg == "-o" || arg == "+o" {
            i += 1;
            if let Some(name) = args.get(i)
                && !shell.set_option_flag(&format!("{arg} {name}"))
            {
                shell.report(io, &format!("set: {name}: invalid option name"));
                return Ok(1);
            }
        } else if (arg.starts_with('-') || arg.starts_with('+')) && arg.len() > 1 {
            let sign = arg.chars().next().unwrap_or('-');
            for c in arg.chars().skip(1) {
                // `set -euo pipefail`: an `o` in a group takes the next
                // argument as its option name.
                if c == 'o' {
                    i += 1;
                    let Some(name) = args.get(i) else { break };
                    if !shell.set_option_flag(&format!("{sign}o {name}")) {
                        shell.report(io, &format!("set: {name}: invalid option name"));
                        return Ok(1);
                    }
                    continue;
                }
                if !shell.set_option_flag(&format!("{sign}{c}")) {
                    shell.report(io, &format!("set: {sign}{c}: invalid option"));
                    io.err_line("set: usage: set [-abefhkmnptuvxBCEHPT] [-o option-name] [--] [-] [arg ...]");
                    return Ok(2);
                }
            }
        } else {
            shell.positional = args.get(i..).unwrap_or_default().to_vec();
            return Ok(0);
        }
        i += 1;
    }
    Ok(0)
}

/// The option names `set -o` knows, sorted.
const SET_OPTIONS: [&str; 27] = [
    "allexport",
    "braceexpand",
    "emacs",
    "errexit",
    "errtrace",
    "functrace",
    "hashall",
    "histexpand",
    "history",
    "ignoreeof",
    "interactive-comments",
    "keyword",
    "monitor",
    "noclobber",
    "noexec",
    "noglob",
    "nolog",
    "notify",
    "nounset",
    "onecmd",
    "physical",
    "pipefail",
    "posix",
    "privileged",
    "verbose",
    "vi",
    "xtrace",
];

/// The option names `set -o` knows (`compgen -A setopt`).
pub(crate) fn option_names() -> &'static [&'static str] {
    &SET_OPTIONS
}

/// Whether the `set -o` option `name` is on.
pub(crate) fn option_on(shell: &Shell, name: &str) -> bool {
    match name {
        "allexport" => shell.vars.allexport,
        "errexit" => shell.opts.errexit,
        "errtrace" => shell.opts.errtrace,
        "functrace" => shell.opts.functrace,
        "noclobber" => shell.opts.noclobber,
        "noglob" => shell.opts.noglob,
        "nounset" => shell.opts.nounset,
        "pipefail" => shell.opts.pipefail,
        "xtrace" => shell.opts.xtrace,
        "braceexpand" | "hashall" | "interactive-comments" => true,
        _ => false,
    }
}

/// `set -o` (a table) and `set +o` (commands that restore the settings).
fn list_options(shell: &Shell, io: &Io, as_commands: bool) {
    let on = |name: &str| option_on(shell, name);
    let mut out = String::new();
    for name in SET_OPTIONS {
        if as_commands {
            out.push_str(&format!(
                "set {}o {name}\n",
                if on(name) { '-' } else { '+' }
            ));
        } else {
            out.push_str(&format!(
                "{name:<15}\t{}\n",
                if on(name) { "on" } else { "off" }
            ));
        }
    }
    io.out(out.as_bytes());
}

pub(crate) fn shift(shell: &mut Shell, io: &Io, argv: &[String]) -> Result<i32, Unwind> {
    let n = match argv.get(1).map(|a| a.parse::<usize>()) {
        None => 1,
        Some(Ok(n)) => n,
        Some(Err(_)) => {
            let arg = argv.get(1).cloned().unwrap_or_default();
            shell.report(io, &format!("shift: {arg}: numeric argument required"));
            return Ok(1);
        }
    };
    if n > shell.positional.len() {
        return Ok(1);
    }
    shell.positional.drain(..n);
    Ok(0)
}

pub(crate) fn let_(shell: &mut Shell, io: &Io, argv: &[String]) -> Result<i32, Unwind> {
    let mut last = 0;
    for expr in argv.iter().skip(1) {
        match shell.arith_command_value(expr, "let", io)? {
            Some(v) => last = v,
            None => return Ok(1),
        }
    }
    Ok(i32::from(last == 0))
}
