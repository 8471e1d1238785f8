//! `wait`, `jobs`, `kill`, `disown`, `fg` and `bg`: following the
//! shell's background jobs (`interp/jobs.rs`), with bash's messages.
//! A non-interactive bash has no job control, so `fg` and `bg` refuse.

use crate::errors::Unwind;
use crate::interp::Shell;
use crate::streams::Io;

/// Signal names by number, as `kill -l` lists them (Linux x86-64).
const SIGNALS: &[&str] = &[
    "HUP", "INT", "QUIT", "ILL", "TRAP", "ABRT", "BUS", "FPE", "KILL", "USR1", "SEGV", "USR2",
    "PIPE", "ALRM", "TERM", "STKFLT", "CHLD", "CONT", "STOP", "TSTP", "TTIN", "TTOU", "URG",
    "XCPU", "XFSZ", "VTALRM", "PROF", "WINCH", "IO", "PWR", "SYS",
];
/// SIGTERM: what `kill` sends when not told otherwise.
const SIGTERM: u32 = 15;

/// A signal from `9`, `KILL`, `SIGKILL` or `kill`.
fn signal_number(spec: &str) -> Option<u32> {
    if let Ok(n) = spec.parse::<u32>() {
        return (n <= 64).then_some(n);
    }
    let upper = spec.to_ascii_uppercase();
    let name = upper.strip_prefix("SIG").unwrap_or(&upper);
    SIGNALS
        .iter()
        .position(|s| *s == name)
        .and_then(|i| u32::try_from(i + 1).ok())
}

/// How `jobs` and `wait -n` name a finished job's end.
fn ended_as(status: i32) -> String {
    match status {
        0 => "Done".to_string(),
        s if s > 128 => match SIGNALS.get(usize::try_from(s - 129).unwrap_or(usize::MAX)) {
            Some(&"TERM") => "Terminated".to_string(),
            Some(&"KILL") => "Killed".to_string(),
            Some(&"INT") => "Interrupt".to_string(),
            Some(&"HUP") => "Hangup".to_string(),
            Some(name) => name.to_string(),
            None => format!("Exit {s}"),
        },
        s => format!("Exit {s}"),
    }
}

/// `wait [-n] [-f] [-p VAR] [ID...]`.
pub(crate) fn wait(shell: &mut Shell, io: &Io, argv: &[String]) -> Result<i32, Unwind> {
    io.flush();
    let mut args = argv.iter().skip(1).peekable();
    let (mut next, mut var) = (false, None);
    while let Some(arg) = args.peek() {
        match arg.as_str() {
            "-n" => next = true,
            "-f" => {}
            "-p" => {
                args.next();
                var = args.peek().map(|s| s.to_string());
            }
            "--" => {
                args.next();
                break;
            }
            a if a.starts_with('-') && a.len() > 1 => {
                shell.report(io, &format!("wait: {a}: invalid option"));
                io.err_line("wait: usage: wait [-fn] [-p var] [id ...]");
                return Ok(2);
            }
            _ => break,
        }
        args.next();
    }
    let ids: Vec<String> = args.cloned().collect();
    if next {
        return Ok(wait_next(shell, var.as_deref()));
    }
    if ids.is_empty() {
        let pids: Vec<u32> = shell.jobs.iter().map(|j| j.pid).collect();
        for pid in pids {
            shell.wait_for_job(pid);
        }
        return Ok(0);
    }
    let mut status = 0;
    for id in ids {
        status = match resolve(shell, &id) {
            Ok(pid) => match shell.wait_for_job(pid) {
                Some(s) => {
                    if let Some(v) = &var {
                        let _ = shell.vars.set(v, pid.to_string());
                    }
                    s
                }
                None => {
                    shell.report(io, &format!("wait: pid {pid} is not a child of this shell"));
                    127
                }
            },
            Err(msg) => {
                shell.report(io, &format!("wait: {msg}"));
                127
            }
        };
    }
    Ok(status)
}

/// `wait -n`: the next job to end (polling the running ones).
fn wait_next(shell: &mut Shell, var: Option<&str>) -> i32 {
    loop {
        let running: Vec<usize> = (0..shell.jobs.len())
            .filter(|&i| shell.jobs[i].status.is_none())
            .collect();
        if running.is_empty() {
            return 127;
        }
        for i in running {
            if let Some(status) = shell.poll_job(i) {
                if let Some(v) = var {
                    let pid = shell.jobs[i].pid.to_string();
                    let _ = shell.vars.set(v, pid);
                }
                shell.jobs[i].reported = true;
                return status;
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// A job spec (`%1`) or a process id, as the process id.
fn resolve(shell: &Shell, id: &str) -> Result<u32, String> {
    if id.starts_with('%') {
        return shell
            .job_index(id)
            .map(|i| shell.jobs[i].pid)
            .ok_or_else(|| format!("{id}: no such job"));
    }
    id.parse::<u32>()
        .map_err(|_| format!("`{id}': not a pid or valid job spec"))
}

/// `jobs [-lprs] [SPEC...]`.
pub(crate) fn jobs(shell: &mut Shell, io: &Io, argv: &[String]) -> Result<i32, Unwind> {
    let (mut long, mut pids_only, mut running_only, mut stopped_only) =
        (false, false, false, false);
    let mut specs = Vec::new();
    for arg in argv.iter().skip(1) {
        match arg.strip_prefix('-') {
            Some(flags) if !flags.is_empty() && !arg.starts_with('%') => {
                for f in flags.chars() {
                    match f {
                        'l' => long = true,
                        'p' => pids_only = true,
                        'r' => running_only = true,
                        's' => stopped_only = true,
                        'n' => {}
                        _ => {
                            shell.report(io, &format!("jobs: -{f}: invalid option"));
                            io.err_line("jobs: usage: jobs [-lnprs] [jobspec ...] or jobs -x command [args]");
                            return Ok(2);
                        }
                    }
                }
            }
            _ => specs.push(arg.clone()),
        }
    }
    let mut indices: Vec<usize> = Vec::new();
    if specs.is_empty() {
        indices.extend((0..shell.jobs.len()).filter(|&i| !shell.jobs[i].reported));
    } else {
        for spec in &specs {
            match shell.job_index(spec) {
                Some(i) => indices.push(i),
                None => {
                    shell.report(io, &format!("jobs: {spec}: no such job"));
                    return Ok(1);
                }
            }
        }
    }
    let live: Vec<usize> = (0..shell.jobs.len())
        .filter(|&i| !shell.jobs[i].reported)
        .collect();
    let current = live.last().copied();
    let previous = live.iter().rev().nth(1).copied();
    let mut out = String::new();
    for i in indices {
        let status = shell.poll_job(i);
        if stopped_only || (running_only && status.is_some()) {
            continue;
        }
        let job = &shell.jobs[i];
        if pids_only {
            out.push_str(&format!("{}\n", job.pid));
            continue;
        }
        let mark = if Some(i) == current {
            '+'
        } else if Some(i) == previous {
            '-'
        } else {
            ' '
        };
        let (state, text) = match status {
            None => ("Running".to_string(), job.text.clone()),
            Some(s) => (ended_as(s), job.text.trim_end_matches(" &").to_string()),
        };
        let pid = if long {
            format!("{} ", job.pid)
        } else {
            String::new()
        };
        out.push_str(&format!("[{}]{mark}  {pid}{state:<24}{text}\n", job.number));
        if status.is_some() {
            shell.jobs[i].reported = true;
        }
    }
    io.out(out.as_bytes());
    Ok(0)
}

/// `kill [-s SIG | -n NUM | -SIG] ID...` and `kill -l [SIG...]`.
pub(crate) fn kill(shell: &mut Shell, io: &Io, argv: &[String]) -> Result<i32, Unwind> {
    let args = argv.get(1..).unwrap_or_default();
    let usage = |shell: &Shell| {
        shell.report(
            io,
            "kill: usage: kill [-s sigspec | -n signum | -sigspec] pid | jobspec ... or kill -l [sigspec]",
        );
    };
    let Some(first) = args.first() else {
        usage(shell);
        return Ok(2);
    };
    if first == "-l" || first == "-L" {
        return Ok(list_signals(shell, io, &args[1..]));
    }
    let (signal, ids) = match first.as_str() {
        "-s" | "-n" => match args.get(1) {
            Some(spec) => (signal_number(spec).ok_or(spec.clone()), &args[2..]),
            None => {
                shell.report(io, &format!("kill: {first}: option requires an argument"));
                return Ok(2);
            }
        },
        "--" => (Ok(SIGTERM), &args[1..]),
        f if f.starts_with('-') && f.len() > 1 => {
            (signal_number(&f[1..]).ok_or(f[1..].to_string()), &args[1..])
        }
        _ => (Ok(SIGTERM), args),
    };
    let signal = match signal {
        Ok(s) => s,
        Err(spec) => {
            shell.report(io, &format!("kill: {spec}: invalid signal specification"));
            return Ok(1);
        }
    };
    if ids.is_empty() {
        usage(shell);
        return Ok(2);
    }
    let mut status = 0;
    for id in ids {
        if let Err(msg) = kill_one(shell, id, signal) {
            shell.report(io, &format!("kill: {msg}"));
            status = 1;
        }
    }
    Ok(status)
}

fn kill_one(shell: &mut Shell, id: &str, signal: u32) -> Result<(), String> {
    let pid = match resolve(shell, id) {
        Ok(pid) => pid,
        Err(_) if !id.starts_with('%') => {
            return Err(format!("{id}: arguments must be process or job IDs"));
        }
        Err(msg) => return Err(msg),
    };
    if pid == crate::interp::SHELL_PID {
        // This shell itself: it ends as a process killed by the signal.
        if signal == 0 {
            return Ok(());
        }
        return Err(format!("({pid}) - Operation not permitted"));
    }
    shell
        .host
        .kill_program(pid, signal)
        .map_err(|_| format!("({pid}) - No such process"))
}

/// `kill -l`: every signal, or the names/numbers asked for.
fn list_signals(shell: &Shell, io: &Io, specs: &[String]) -> i32 {
    if specs.is_empty() {
        let mut out = String::new();
        for (i, name) in SIGNALS.iter().enumerate() {
            let cell = format!("{:>2}) SIG{name}", i + 1);
            out.push_str(&cell);
            out.push(if (i + 1) % 5 == 0 || i + 1 == SIGNALS.len() {
                '\n'
            } else {
                '\t'
            });
        }
        io.out(out.as_bytes());
        return 0;
    }
    let mut status = 0;
    for spec in specs {
        match spec.parse::<i64>() {
            Ok(n) => {
                // An exit status above 128 names the signal that caused it.
                let n = if n > 128 { n - 128 } else { n };
                match usize::try_from(n - 1).ok().and_then(|i| SIGNALS.get(i)) {
                    Some(name) => io.out(format!("{name}\n").as_bytes()),
                    None => {
                        shell.report(io, &format!("kill: {spec}: invalid signal specification"));
                        status = 1;
                        true
                    }
                };
            }
            Err(_) => match signal_number(spec) {
                Some(n) => {
                    io.out(format!("{n}\n").as_bytes());
                }
                None => {
                    shell.report(io, &format!("kill: {spec}: invalid signal specification"));
                    status = 1;
                }
            },
        }
    }
    status
}

/// `disown [-ar] [SPEC...]`: the job is forgotten by this shell.
pub(crate) fn disown(shell: &mut Shell, io: &Io, argv: &[String]) -> Result<i32, Unwind> {
    let specs: Vec<&String> = argv
        .iter()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let all = argv.iter().skip(1).any(|a| a.contains('a'));
    if specs.is_empty() {
        if all {
            shell.jobs.clear();
        } else if let Some(i) = shell.job_index("%+") {
            shell.jobs.remove(i);
        } else {
            shell.report(io, "disown: current: no such job");
            return Ok(1);
        }
        return Ok(0);
    }
    for spec in specs {
        match shell.job_index(spec) {
            Some(i) => {
                shell.jobs.remove(i);
            }
            None => {
                shell.report(io, &format!("disown: {spec}: no such job"));
                return Ok(1);
            }
        }
    }
    Ok(0)
}

/// `fg` and `bg`: a non-interactive shell has no job control.
pub(crate) fn no_job_control(shell: &mut Shell, io: &Io, argv: &[String]) -> Result<i32, Unwind> {
    let name = argv.first().map_or("fg", String::as_str);
    shell.report(io, &format!("{name}: no job control"));
    Ok(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signals_by_name_and_number() {
        assert_eq!(signal_number("9"), Some(9));
        assert_eq!(signal_number("KILL"), Some(9));
        assert_eq!(signal_number("sigterm"), Some(15));
        assert_eq!(signal_number("BOGUS"), None);
        assert_eq!(ended_as(0), "Done");
        assert_eq!(ended_as(143), "Terminated");
        assert_eq!(ended_as(137), "Killed");
        assert_eq!(ended_as(3), "Exit 3");
    }
}
