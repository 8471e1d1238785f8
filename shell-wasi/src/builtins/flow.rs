//! Builtins that steer execution: `exit`, `return`, `break`, `continue`,
//! `eval`, `source`, `exec`, and the no-ops.

use crate::errors::Unwind;
use crate::interp::Shell;
use crate::streams::Io;

pub(crate) fn colon(_shell: &mut Shell, _io: &Io, _argv: &[String]) -> Result<i32, Unwind> {
    Ok(0)
}

/// `trap ACTION SIGNAL...`: only EXIT (or 0) has meaning without
/// processes; other signals are accepted and never delivered.
pub(crate) fn trap(shell: &mut Shell, io: &Io, argv: &[String]) -> Result<i32, Unwind> {
    let args = argv.get(1..).unwrap_or_default();
    if args.is_empty() || args.first().is_some_and(|a| a == "-p") {
        let mut out = String::new();
        let traps = [
            (&shell.exit_trap, "EXIT"),
            (&shell.debug_trap, "DEBUG"),
            (&shell.err_trap, "ERR"),
            (&shell.return_trap, "RETURN"),
        ];
        let wanted: Vec<&String> = args.iter().skip(1).collect();
        for (action, name) in traps {
            if !wanted.is_empty() && !wanted.iter().any(|w| w.as_str() == name) {
                continue;
            }
            if let Some(action) = action {
                let quoted = crate::programs::quoting::single_quote(action);
                out.push_str(&format!("trap -- {quoted} {name}\n"));
            }
        }
        io.out(out.as_bytes());
        return Ok(0);
    }
    let (action, signals) = match args.split_first() {
        Some((action, signals)) if !signals.is_empty() => (action.as_str(), signals),
        _ => ("-", args),
    };
    for signal in signals {
        let action = (action != "-").then(|| action.to_string());
        match signal.as_str() {
            "EXIT" | "0" | "SIGEXIT" => {
                shell.exit_trap = action;
                shell.exit_trap_inherited = false;
            }
            "ERR" => {
                shell.err_trap = action;
                shell.err_trap_inherited = false;
            }
            "DEBUG" => shell.debug_trap = action,
            "RETURN" => shell.return_trap = action,
            _ => {}
        }
    }
    Ok(0)
}

/// `umask [-p] [-S] [MODE]`: the shell's umask, which the host applies to
/// what this shell and the programs it starts create.
pub(crate) fn umask(shell: &mut Shell, io: &Io, argv: &[String]) -> Result<i32, Unwind> {
    let (mut symbolic, mut reusable) = (false, false);
    let mut args = argv.iter().skip(1).peekable();
    while let Some(a) = args.peek() {
        match a.as_str() {
            "-S" => symbolic = true,
            "-p" => reusable = true,
            "-pS" | "-Sp" => (symbolic, reusable) = (true, true),
            "--" => {
                args.next();
                break;
            }
            a if a.starts_with('-') && a.len() > 1 => {
                shell.report(io, &format!("umask: {a}: invalid option"));
                io.err_line("umask: usage: umask [-p] [-S] [mode]");
                return Ok(2);
            }
            _ => break,
        }
        args.next();
    }
    let Some(mode) = args.next() else {
        let shown = if symbolic {
            symbolic_umask(shell.umask)
        } else {
            format!("{:04o}", shell.umask)
        };
        let prefix = match (reusable, symbolic) {
            (true, true) => "umask -S ",
            (true, false) => "umask ",
            _ => "",
        };
        io.out(format!("{prefix}{shown}\n").as_bytes());
        return Ok(0);
    };
    let parsed = if mode.starts_with(|c: char| c.is_ascii_digit()) {
        u32::from_str_radix(mode, 8)
            .ok()
            .filter(|m| *m <= 0o7777)
            .ok_or_else(|| format!("{mode}: octal number out of range"))
    } else {
        apply_symbolic(shell.umask, mode)
    };
    match parsed {
        Ok(mask) => {
            shell.umask = mask & 0o777;
            shell.host.set_umask(shell.umask);
            if symbolic {
                io.out(format!("{}\n", symbolic_umask(shell.umask)).as_bytes());
            }
            Ok(0)
        }
        Err(msg) => {
            // bash names neither the line nor the script here.
            io.err_line(&format!("{}: umask: {msg}", shell.location.name));
            Ok(1)
        }
    }
}

/// `u=rwx,g=rx,o=rx`: the permissions a umask leaves.
fn symbolic_umask(mask: u32) -> String {
    let allowed = !mask & 0o777;
    ["u", "g", "o"]
        .iter()
        .enumerate()
        .map(|(i, who)| {
            let bits = (allowed >> (6 - 3 * i)) & 7;
            let perms: String = [(4, 'r'), (2, 'w'), (1, 'x')]
                .iter()
                .filter(|(b, _)| bits & b != 0)
                .map(|(_, c)| *c)
                .collect();
            format!("{who}={perms}")
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// A symbolic mode (`u=rwx,g=,o=`, `g+w`, `a-x`) applied to what `mask`
/// allows; the new mask.
fn apply_symbolic(mask: u32, mode: &str) -> Result<u32, String> {
    let mut allowed = !mask & 0o777;
    for clause in mode.split(',') {
        let ops_at = clause
            .find(['=', '+', '-'])
            .ok_or_else(|| invalid_operator(clause))?;
        let (who, rest) = clause.split_at(ops_at);
        let mut who_bits = 0;
        for c in who.chars() {
            who_bits |= match c {
                'u' => 0o700,
                'g' => 0o070,
                'o' => 0o007,
                'a' => 0o777,
                _ => return Err(format!("`{c}': invalid symbolic mode operator")),
            };
        }
        if who_bits == 0 {
            who_bits = 0o777;
        }
        let mut chars = rest.chars().peekable();
        while let Some(op) = chars.next() {
            let mut perm = 0;
            while let Some(&c) = chars.peek().filter(|c| !"=+-".contains(**c)) {
                perm |= match c {
                    'r' => 0o444,
                    'w' => 0o222,
                    'x' => 0o111,
                    _ => return Err(format!("`{c}': invalid symbolic mode character")),
                };
                chars.next();
            }
            let bits = perm & who_bits;
            match op {
                '=' => allowed = (allowed & !who_bits) | bits,
                '+' => allowed |= bits,
                _ => allowed &= !bits,
            }
        }
    }
    Ok(!allowed & 0o777)
}

fn invalid_operator(clause: &str) -> String {
    let c = clause.chars().find(|c| !"ugoa".contains(*c)).unwrap_or(' ');
    format!("`{c}': invalid symbolic mode operator")
}

/// A status argument: `exit 300` is 44, like the kernel's 8 bits.
fn status_arg(shell: &Shell, io: &Io, name: &str, arg: &str) -> Option<i32> {
    match arg.trim().parse::<i64>() {
        Ok(n) => Some(i32::try_from(n & 0xff).unwrap_or(0)),
        Err(_) => {
            shell.report(io, &format!("{name}: {arg}: numeric argument required"));
            None
        }
    }
}

pub(crate) fn exit(shell: &mut Shell, io: &Io, argv: &[String]) -> Result<i32, Unwind> {
    if argv.len() > 2 {
        shell.report(io, "exit: too many arguments");
        return Ok(1);
    }
    let status = match argv.get(1) {
        Some(arg) => status_arg(shell, io, "exit", arg).unwrap_or(2),
        None => shell.status,
    };
    Err(Unwind::Exit(status))
}

pub(crate) fn return_(shell: &mut Shell, io: &Io, argv: &[String]) -> Result<i32, Unwind> {
    if shell.functions == 0 && !shell.sourcing() {
        shell.report(
            io,
            "return: can only `return' from a function or sourced script",
        );
        return Ok(2);
    }
    let status = match argv.get(1) {
        Some(arg) => status_arg(shell, io, "return", arg).unwrap_or(2),
        None => shell.status,
    };
    Err(Unwind::Return(status))
}

fn loop_count(shell: &Shell, io: &Io, name: &str, argv: &[String]) -> Result<u32, i32> {
    let Some(arg) = argv.get(1) else { return Ok(1) };
    match arg.parse::<u32>() {
        Ok(n) if n >= 1 => Ok(n),
        Ok(_) => {
            shell.report(io, &format!("{name}: {arg}: loop count out of range"));
            Err(1)
        }
        Err(_) => {
            shell.report(io, &format!("{name}: {arg}: numeric argument required"));
            Err(128)
        }
    }
}

pub(crate) fn break_(shell: &mut Shell, io: &Io, argv: &[String]) -> Result<i32, Unwind> {
    if shell.loops == 0 {
        shell.report(
            io,
            "break: only meaningful in a `for', `while', or `until' loop",
        );
        return Ok(0);
    }
    match loop_count(shell, io, "break", argv) {
        Ok(n) => Err(Unwind::Break(n.min(shell.loops))),
        Err(status) => Ok(status),
    }
}

pub(crate) fn continue_(shell: &mut Shell, io: &Io, argv: &[String]) -> Result<i32, Unwind> {
    if shell.loops == 0 {
        shell.report(
            io,
            "continue: only meaningful in a `for', `while', or `until' loop",
        );
        return Ok(0);
    }
    match loop_count(shell, io, "continue", argv) {
        Ok(n) => Err(Unwind::Continue(n.min(shell.loops))),
        Err(status) => Ok(status),
    }
}

pub(crate) fn eval(shell: &mut Shell, io: &Io, argv: &[String]) -> Result<i32, Unwind> {
    let text = argv.get(1..).unwrap_or_default().join(" ");
    if text.trim().is_empty() {
        return Ok(0);
    }
    if let Err(err) = shell.enter() {
        return Err(shell.fail(io, &err));
    }
    // Line numbers in the text count from the `eval`'s line.
    let saved_location = shell.location.clone();
    shell.location.base += shell.location.line.saturating_sub(1);
    shell.location.line = 1;
    shell.trace_level += 1;
    let result = shell.run_text(&text, io);
    shell.trace_level -= 1;
    shell.location = saved_location;
    shell.depth -= 1;
    result
}

/// `source FILE [ARGS]`: runs the file in this shell; `return` ends it.
pub(crate) fn source(shell: &mut Shell, io: &Io, argv: &[String]) -> Result<i32, Unwind> {
    let name = argv.first().map_or("source", String::as_str);
    let Some(file) = argv.get(1) else {
        shell.report(io, &format!("{name}: filename argument required"));
        io.err_line(&format!("{name}: usage: {name} filename [arguments]"));
        return Ok(2);
    };
    let text = match std::fs::read(shell.resolve(file)) {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(e) => {
            shell.report(io, &format!("{file}: {}", crate::errors::strerror(&e)));
            return Ok(1);
        }
    };
    if let Err(err) = shell.enter() {
        return Err(shell.fail(io, &err));
    }
    let args = argv.get(2..).unwrap_or_default().to_vec();
    let saved = (!args.is_empty()).then(|| std::mem::replace(&mut shell.positional, args));
    shell.sourcing += 1;
    // A sourced file's own `BASH_ARGV` entry is its name, without arguments.
    let frame_args = match argv.get(2..) {
        Some(args) if !args.is_empty() => args.to_vec(),
        _ => vec![file.clone()],
    };
    shell.push_frame("source", file, &frame_args);
    let saved_location = shell.location.clone();
    shell.location = crate::interp::Location {
        name: file.clone(),
        line: 1,
        base: 0,
    };
    shell.trace_level += 1;
    let result = shell.run_text(&text, io);
    shell.trace_level -= 1;
    if matches!(result, Ok(_) | Err(Unwind::Return(_))) {
        shell.run_return_trap(io)?;
    }
    shell.location = saved_location;
    shell.pop_frame();
    shell.sourcing -= 1;
    if let Some(saved) = saved {
        shell.positional = saved;
    }
    shell.depth -= 1;
    match result {
        Err(Unwind::Return(status)) => Ok(status),
        other => other,
    }
}

/// `exec CMD`: runs the command, then the shell ends with its status.
/// (Without a command, redirections would become permanent; this shell
/// accepts that form but applies them to nothing.)
pub(crate) fn exec(shell: &mut Shell, io: &Io, argv: &[String]) -> Result<i32, Unwind> {
    let command = argv.get(1..).unwrap_or_default();
    if command.is_empty() {
        return Ok(0);
    }
    let status = shell.run_program(command, io);
    Err(Unwind::Exit(status))
}
