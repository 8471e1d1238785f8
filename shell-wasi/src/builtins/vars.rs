//! Builtins over variables and options: `export`, `unset`, `readonly`,
//! `local`, `declare`, `set`, `shift`, `let`.

use crate::errors::Unwind;
use crate::interp::Shell;
use crate::interp::vars::{Value, Var, is_name};
use crate::streams::Io;
use crate::utils::quoting::double_quote;

/// `NAME=VALUE` or `NAME` as given to export/readonly/local/declare.
fn split_assignment(arg: &str) -> (&str, Option<&str>) {
    match arg.split_once('=') {
        Some((name, value)) => (name, Some(value)),
        None => (arg, None),
    }
}

fn invalid_identifier(shell: &Shell, io: &Io, builtin: &str, arg: &str) {
    shell.report(io, &format!("{builtin}: `{arg}': not a valid identifier"));
}

/// `declare -x NAME="value"` lines, as `export -p` and `declare -p` print.
fn declaration(name: &str, var: &Var) -> String {
    let mut flags = String::new();
    if var.nameref {
        flags.push('n');
    }
    match var.value {
        Value::Indexed(_) => flags.push('a'),
        Value::Assoc(_) => flags.push('A'),
        Value::Scalar(_) => {}
    }
    if var.integer {
        flags.push('i');
    }
    if var.readonly {
        flags.push('r');
    }
    if var.exported {
        flags.push('x');
    }
    let flags = if flags.is_empty() {
        "--".to_string()
    } else {
        format!("-{flags}")
    };
    match &var.value {
        Value::Scalar(s) => format!("declare {flags} {name}={}\n", double_quote(s)),
        Value::Indexed(map) => {
            let items: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("[{k}]={}", double_quote(v)))
                .collect();
            format!("declare {flags} {name}=({})\n", items.join(" "))
        }
        Value::Assoc(map) => {
            // bash ends the list with a space here.
            let items: String = map
                .iter()
                .map(|(k, v)| format!("[{k}]={} ", double_quote(v)))
                .collect();
            format!("declare {flags} {name}=({items})\n")
        }
    }
}

pub(crate) fn export(shell: &mut Shell, io: &Io, argv: &[String]) -> Result<i32, Unwind> {
    let mut unexport = false;
    let mut status = 0;
    let mut names = Vec::new();
    for arg in argv.iter().skip(1) {
        match arg.as_str() {
            "-n" => unexport = true,
            "-p" | "-f" | "--" => {}
            _ => names.push(arg.clone()),
        }
    }
    if names.is_empty() {
        let mut out = String::new();
        for name in shell.vars.names() {
            if let Some(var) = shell.vars.get(&name).filter(|v| v.exported) {
                out.push_str(&declaration(&name, var));
            }
        }
        io.out(out.as_bytes());
        return Ok(0);
    }
    for arg in names {
        let (name, value) = split_assignment(&arg);
        if !is_name(name) {
            invalid_identifier(shell, io, "export", &arg);
            status = 1;
            continue;
        }
        if unexport {
            shell.vars.unexport(name);
            continue;
        }
        if let Some(value) = value
            && let Err(err) = shell.vars.set(name, value.to_string())
        {
            shell.report(io, &err.to_string());
            status = 1;
            continue;
        }
        shell.vars.mark_exported(name);
    }
    Ok(status)
}

pub(crate) fn unset(shell: &mut Shell, io: &Io, argv: &[String]) -> Result<i32, Unwind> {
    let mut functions = false;
    let mut raw = false;
    let mut status = 0;
    for arg in argv.iter().skip(1) {
        match arg.as_str() {
            "-f" => functions = true,
            "-v" => functions = false,
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
                let base = name.split('[').next().unwrap_or(name);
                let element = name
                    .strip_prefix(base)
                    .and_then(|r| r.strip_prefix('['))
                    .and_then(|r| r.strip_suffix(']'));
                let result = match element {
                    Some(sub) => shell.vars.unset_element(base, sub),
                    None if raw => {
                        shell.vars.unset_raw(name);
                        Ok(())
                    }
                    None => shell.vars.unset(name),
                };
                if !is_name(base) {
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

pub(crate) fn readonly(shell: &mut Shell, io: &Io, argv: &[String]) -> Result<i32, Unwind> {
    let mut status = 0;
    for arg in argv.iter().skip(1).filter(|a| !a.starts_with('-')) {
        let (name, value) = split_assignment(arg);
        if !is_name(name) {
            invalid_identifier(shell, io, "readonly", arg);
            status = 1;
            continue;
        }
        if let Some(value) = value {
            if let Err(err) = shell.vars.set(name, value.to_string()) {
                shell.report(io, &err.to_string());
                status = 1;
                continue;
            }
        } else if shell.vars.get(name).is_none() {
            let _ = shell.vars.set(name, String::new());
        }
        shell.vars.set_readonly(name);
    }
    Ok(status)
}

pub(crate) fn local(shell: &mut Shell, io: &Io, argv: &[String]) -> Result<i32, Unwind> {
    if shell.functions == 0 {
        shell.report(io, "local: can only be used in a function");
        return Ok(1);
    }
    declare_names(shell, io, "local", argv.get(1..).unwrap_or_default(), true)
}

pub(crate) fn declare(shell: &mut Shell, io: &Io, argv: &[String]) -> Result<i32, Unwind> {
    let args = argv.get(1..).unwrap_or_default();
    let print = args.iter().any(|a| a == "-p");
    let names: Vec<&String> = args
        .iter()
        .filter(|a| !a.starts_with('-') && !a.starts_with('+'))
        .collect();
    if print || names.is_empty() {
        let wanted: Vec<String> = if names.is_empty() {
            shell.vars.names()
        } else {
            names.iter().map(|s| s.to_string()).collect()
        };
        let mut out = String::new();
        let mut status = 0;
        for name in wanted {
            match shell.vars.get_raw(&name) {
                Some(var) => out.push_str(&declaration(&name, var)),
                None => {
                    shell.report(io, &format!("declare: {name}: not found"));
                    status = 1;
                }
            }
        }
        io.out(out.as_bytes());
        return Ok(status);
    }
    let in_function = shell.functions > 0 && !args.iter().any(|a| a == "-g");
    declare_names(shell, io, "declare", args, in_function)
}

/// `declare -A name` or `declare -A name=([k]=v ...)`.
fn declare_assoc(
    shell: &mut Shell,
    name: &str,
    value: Option<&str>,
) -> Result<(), crate::errors::ShellError> {
    if !shell.vars.is_assoc(name) || value.is_some() {
        shell
            .vars
            .set_value(name, Value::Assoc(std::collections::BTreeMap::new()))?;
    }
    let Some(items) = value
        .and_then(|v| v.strip_prefix('('))
        .and_then(|v| v.strip_suffix(')'))
    else {
        return Ok(());
    };
    for item in items.split_whitespace() {
        let Some((key, val)) = item.strip_prefix('[').and_then(|i| i.split_once("]=")) else {
            continue;
        };
        shell.vars.set_key(name, key.to_string(), val.to_string())?;
    }
    Ok(())
}

/// The work of `local` and `declare NAME[=VALUE]` with `-x -r -a -A` flags.
fn declare_names(
    shell: &mut Shell,
    io: &Io,
    builtin: &str,
    args: &[String],
    make_local: bool,
) -> Result<i32, Unwind> {
    let flags: String = args
        .iter()
        .filter(|a| a.starts_with('-'))
        .flat_map(|a| a.chars().skip(1))
        .collect();
    let removed: String = args
        .iter()
        .filter(|a| a.starts_with('+'))
        .flat_map(|a| a.chars().skip(1))
        .collect();
    let mut status = 0;
    for arg in args
        .iter()
        .filter(|a| !a.starts_with('-') && !a.starts_with('+'))
    {
        let (name, value) = split_assignment(arg);
        // `declare name+=value` appends, as an assignment does.
        let (name, append) = match name.strip_suffix('+') {
            Some(base) if value.is_some() => (base, true),
            _ => (name, false),
        };
        if !is_name(name) {
            invalid_identifier(shell, io, builtin, arg);
            status = 1;
            continue;
        }
        if make_local {
            shell.vars.make_local(name);
        }
        if removed.contains('i') {
            shell.vars.set_integer(name, false);
        }
        let integer = flags.contains('i') || shell.vars.is_integer(name);
        let value = match value {
            Some(v) if integer && !v.starts_with('(') => {
                let previous = if append {
                    shell.vars.scalar(name).unwrap_or("0").to_string()
                } else {
                    String::new()
                };
                match shell.arith_expand_eval(v, io) {
                    Ok(n) if append => {
                        Some((previous.parse::<i64>().unwrap_or(0).wrapping_add(n)).to_string())
                    }
                    Ok(n) => Some(n.to_string()),
                    Err(err) => {
                        shell.report(io, &err.to_string());
                        status = 1;
                        continue;
                    }
                }
            }
            Some(v) if append => Some(format!("{}{v}", shell.vars.scalar(name).unwrap_or(""))),
            Some(v) => Some(v.to_string()),
            None => None,
        };
        let value = value.as_deref();
        let result = match value {
            _ if flags.contains('n') => shell.vars.set_nameref(name, value.unwrap_or("")),
            _ if flags.contains('A') => declare_assoc(shell, name, value),
            // `declare a=(x y)` makes an array even without `-a`.
            Some(v) if flags.contains('a') || (v.starts_with('(') && v.ends_with(')')) => {
                let items = v.trim_start_matches('(').trim_end_matches(')');
                let map = items
                    .split_whitespace()
                    .map(str::to_string)
                    .enumerate()
                    .collect();
                shell.vars.set_value(name, Value::Indexed(map))
            }
            Some(v) => shell.vars.set(name, v.to_string()),
            None if make_local => shell.vars.set(name, String::new()),
            // The attribute needs a variable to live on.
            None if flags.contains('i') && shell.vars.get(name).is_none() => {
                shell.vars.set(name, String::new())
            }
            None => Ok(()),
        };
        if let Err(err) = result {
            shell.report(io, &err.to_string());
            status = 1;
            continue;
        }
        if flags.contains('x') {
            shell.vars.mark_exported(name);
        }
        if flags.contains('i') {
            shell.vars.set_integer(name, true);
        }
        if flags.contains('r') {
            shell.vars.set_readonly(name);
        }
    }
    Ok(status)
}

pub(crate) fn set(shell: &mut Shell, io: &Io, argv: &[String]) -> Result<i32, Unwind> {
    let args = argv.get(1..).unwrap_or_default();
    if args.is_empty() {
        let mut out = String::new();
        for name in shell.vars.names() {
            if let Some(Value::Scalar(v)) = shell.vars.get(&name).map(|v| &v.value) {
                out.push_str(&format!(
                    "{name}={}\n",
                    crate::utils::quoting::trace_quote(v)
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

/// `set -o` (a table) and `set +o` (commands that restore the settings).
fn list_options(shell: &Shell, io: &Io, as_commands: bool) {
    let on = |name: &str| match name {
        "errexit" => shell.opts.errexit,
        "errtrace" => shell.opts.errtrace,
        "noglob" => shell.opts.noglob,
        "nounset" => shell.opts.nounset,
        "pipefail" => shell.opts.pipefail,
        "xtrace" => shell.opts.xtrace,
        "braceexpand" | "hashall" | "interactive-comments" => true,
        _ => false,
    };
    let mut out = String::new();
    for name in [
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
    ] {
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
        last = shell.eval_arith_text(expr, io)?;
    }
    Ok(i32::from(last == 0))
}
