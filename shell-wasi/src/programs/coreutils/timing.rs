//! `sleep DURATION...` and `timeout DURATION COMMAND [ARG]...`.
//!
//! Sleeping happens in slices of at most `SLICE` so that the host's own
//! deadline can stop the component between them. In the sandbox `timeout`
//! runs its command as a process of its own with a deadline the host
//! enforces (`process.run` with `timeout-ms`), so any program stops at it.
//! Where no process can be started (native tests), it sets a deadline that
//! `sleep`, `yes` and `seq` honour, and reports 124 when the command ran
//! past it.

use std::time::{Duration, Instant};

use super::Process;
use crate::host::{Output, ProgramRequest};

/// Longest single `thread::sleep`.
const SLICE: Duration = Duration::from_millis(50);

/// Longest duration accepted (GNU caps at the largest timespec; a day
/// count this large is "forever" for a sandbox run).
const MAX_SECS: f64 = 1e9;

/// `1.5`, `2s`, `3m`, `1h`, `1d`, `inf`.
fn parse_duration(text: &str) -> Option<f64> {
    let (num, unit) = match text.char_indices().last() {
        Some((i, c)) if "smhd".contains(c) => (text.get(..i)?, c),
        _ => (text, 's'),
    };
    let value: f64 = if num == "inf" || num == "infinity" {
        MAX_SECS
    } else {
        if num.is_empty() || num.starts_with(['+', '-']) && num.len() == 1 {
            return None;
        }
        num.parse().ok()?
    };
    if value.is_nan() || value < 0.0 {
        return None;
    }
    let mult = match unit {
        'm' => 60.0,
        'h' => 3600.0,
        'd' => 86_400.0,
        _ => 1.0,
    };
    Some((value * mult).min(MAX_SECS))
}

/// Sleeps `secs`, waking early when an enclosing `timeout` expires.
/// Returns false when cut short.
fn nap(secs: f64) -> bool {
    let end = Instant::now() + Duration::from_secs_f64(secs);
    let stop = match super::deadline() {
        Some(d) if d < end => d,
        _ => end,
    };
    loop {
        let now = Instant::now();
        if now >= stop {
            return stop == end;
        }
        std::thread::sleep((stop - now).min(SLICE));
    }
}

pub(crate) fn sleep(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let args: Vec<&String> = argv
        .get(1..)
        .unwrap_or_default()
        .iter()
        .filter(|a| *a != "--")
        .collect();
    if args.is_empty() {
        return super::usage(p, "missing operand", 1);
    }
    let mut total = 0.0;
    let mut bad = false;
    for a in &args {
        match parse_duration(a) {
            Some(s) => total += s,
            None => {
                p.error(&format!("invalid time interval {}", p.quote(a)));
                bad = true;
            }
        }
    }
    if bad {
        let name = p.prefix.clone();
        p.try_help(&name);
        return 1;
    }
    // What was printed before the pause must be out before it.
    p.io.flush();
    if nap(total.min(MAX_SECS)) { 0 } else { 124 }
}

pub(crate) fn timeout(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let args = argv.get(1..).unwrap_or_default();
    let mut i = 0;
    let mut preserve = false;
    let mut signal = "TERM".to_string();
    while let Some(a) = args.get(i) {
        match a.as_str() {
            "--preserve-status" => preserve = true,
            "--foreground" | "-v" | "--verbose" => {}
            "-s" | "--signal" | "-k" | "--kill-after" => {
                i += 1;
                if a == "-s" || a == "--signal" {
                    signal = args.get(i).cloned().unwrap_or_default();
                }
            }
            "--" => {
                i += 1;
                break;
            }
            s if s.starts_with("--signal=") => signal = s.get(9..).unwrap_or("").to_string(),
            s if s.starts_with("--kill-after=") => {}
            s if s.starts_with("-s") => signal = s.get(2..).unwrap_or("").to_string(),
            s if s.starts_with("-k") => {}
            s if s.starts_with('-') && s.len() > 1 => {
                let msg = if s.starts_with("--") {
                    format!("unrecognized option '{s}'")
                } else {
                    format!("invalid option -- '{}'", s.get(1..2).unwrap_or(""))
                };
                return super::usage(p, &msg, 125);
            }
            _ => break,
        }
        i += 1;
    }
    let rest = args.get(i..).unwrap_or_default();
    let (Some(duration), Some(_)) = (rest.first(), rest.get(1)) else {
        if let Some(d) = rest.first() {
            p.error(&format!("missing operand after {}", p.quote(d)));
        }
        let name = p.prefix.clone();
        p.try_help(&name);
        return 125;
    };
    let Some(secs) = parse_duration(duration) else {
        return super::usage(
            p,
            &format!("invalid time interval {}", p.quote(duration)),
            125,
        );
    };
    let command = rest.get(1..).unwrap_or_default().to_vec();
    let signal_number = match signal.trim_start_matches("SIG") {
        "KILL" | "9" => 9,
        "INT" | "2" => 2,
        "HUP" | "1" => 1,
        _ => 15,
    };
    if p.host.can_spawn() {
        return timeout_as_process(p, &command, secs, preserve, signal_number);
    }
    let start = Instant::now();
    let limit = if secs == 0.0 {
        None
    } else {
        Some(start + Duration::from_secs_f64(secs))
    };
    let outer = super::deadline();
    let effective = match (limit, outer) {
        (Some(l), Some(o)) => Some(l.min(o)),
        (l, o) => l.or(o),
    };
    let saved = super::set_deadline(effective);
    let status = super::run_child(p, &command, None);
    super::set_deadline(saved);
    let Some(status) = status else {
        let name = command.first().cloned().unwrap_or_default();
        p.error(&format!(
            "failed to run command {}: No such file or directory",
            p.quote(&name)
        ));
        return 127;
    };
    if limit.is_some_and(|l| Instant::now() >= l) {
        return if preserve { 128 + signal_number } else { 124 };
    }
    status
}

/// `timeout` in the sandbox: the command runs as its own process, which
/// the host stops at the deadline whatever it is doing.
fn timeout_as_process(
    p: &mut Process<'_>,
    command: &[String],
    secs: f64,
    preserve: bool,
    signal: i32,
) -> i32 {
    let name = command.first().cloned().unwrap_or_default();
    let exists = if name.contains('/') {
        p.resolve(&name).exists()
    } else {
        crate::programs::find(p.host, &name).is_some()
    };
    if !exists {
        p.error(&format!(
            "failed to run command {}: No such file or directory",
            p.quote(&name)
        ));
        return 127;
    }
    p.io.flush();
    let mut request = ProgramRequest::new(command.to_vec(), p.env.to_vec(), p.cwd.to_string());
    request.stdin = p.io.stdin.borrow_mut().read_all();
    request.stdout = p.io.stdout.borrow().host_output();
    request.stderr = p.io.stderr.borrow().host_output();
    request.stderr_to_stdout =
        request.stdout == Output::Capture && std::rc::Rc::ptr_eq(&p.io.stdout, &p.io.stderr);
    let limit = (secs > 0.0).then(|| Duration::from_secs_f64(secs));
    request.timeout_ms = limit.map(|l| u64::try_from(l.as_millis()).unwrap_or(u64::MAX).max(1));
    let started = Instant::now();
    match p.host.run_program(&request) {
        Ok(done) => {
            p.out(&done.stdout);
            p.io.err(&done.stderr);
            let timed_out = limit.is_some_and(|l| started.elapsed() >= l) && done.status == 124;
            if timed_out && preserve {
                128 + signal
            } else {
                done.status
            }
        }
        Err(msg) => {
            p.error(&format!("failed to run command {}: {msg}", p.quote(&name)));
            126
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse() {
        assert_eq!(parse_duration("1.5"), Some(1.5));
        assert_eq!(parse_duration("2m"), Some(120.0));
        assert_eq!(parse_duration("x"), None);
        assert_eq!(parse_duration("-1"), None);
        assert_eq!(parse_duration(""), None);
    }

    #[test]
    fn deadline_cuts_naps_short() {
        let saved = super::super::set_deadline(Some(Instant::now() + Duration::from_millis(20)));
        let started = Instant::now();
        assert!(!nap(5.0));
        assert!(started.elapsed() < Duration::from_secs(1));
        super::super::set_deadline(saved);
    }
}
