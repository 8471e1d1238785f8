//! `uptime` as procps-ng 4.0.2 prints it. The sandbox booted when it was
//! made (`btime` of its `/proc/stat`); it has no logged-in users and runs
//! one thing, so its load is what `/proc/loadavg` says.

use std::time::SystemTime;

use super::Process;
use crate::programs::coreutils::args::{HasArg, Spec};
use crate::programs::timefmt::{civil_from_secs, epoch_secs};

pub(crate) fn uptime(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let spec = Spec {
        short: "psV",
        long: &[
            ("pretty", 'p', HasArg::No),
            ("since", 's', HasArg::No),
            ("help", 'h', HasArg::No),
            ("version", 'V', HasArg::No),
        ],
    };
    let args = match super::parse_command_line(p, &spec, argv, &IDENTITY) {
        Ok(args) => args,
        Err(status) => return status,
    };
    let now = epoch_secs(SystemTime::now());
    let boot = boot_time().unwrap_or(now).min(now);
    let line = if args.has('s') {
        since(boot)
    } else if args.has('p') {
        pretty(now - boot)
    } else {
        classic(now, now - boot, &load_average())
    };
    p.out(format!("{line}\n").as_bytes());
    0
}

/// The `btime` line of `/proc/stat`: when the sandbox was made.
fn boot_time() -> Option<i64> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    stat.lines()
        .find_map(|l| l.strip_prefix("btime "))
        .and_then(|v| v.trim().parse().ok())
}

/// The first three figures of `/proc/loadavg`.
fn load_average() -> String {
    let text = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let figures: Vec<f64> = text
        .split_whitespace()
        .take(3)
        .filter_map(|f| f.parse().ok())
        .collect();
    let get = |i: usize| figures.get(i).copied().unwrap_or(0.0);
    format!("{:.2}, {:.2}, {:.2}", get(0), get(1), get(2))
}

/// ` 10:04:05 up 3 min,  0 user,  load average: 0.00, 0.00, 0.00`
fn classic(now: i64, up: i64, load: &str) -> String {
    let t = civil_from_secs(now);
    let mut line = format!(" {:02}:{:02}:{:02} up ", t.hour, t.minute, t.second);
    let days = up / 86_400;
    if days > 0 {
        line += &format!("{days} {}, ", if days > 1 { "days" } else { "day" });
    }
    let (hours, minutes) = (up / 3600 % 24, up / 60 % 60);
    if hours > 0 {
        line += &format!("{hours:2}:{minutes:02}, ");
    } else {
        line += &format!("{minutes} min, ");
    }
    // No one is logged in to a sandbox (procps 4.0.2 says "user" for 0).
    line + &format!("{:2} user,  load average: {load}", 0)
}

/// `up 1 hour, 5 minutes` (`up 0 minutes` at first).
fn pretty(up: i64) -> String {
    let parts = [
        (up / (86_400 * 7), "week"),
        (up / 86_400 % 7, "day"),
        (up / 3600 % 24, "hour"),
        (up / 60 % 60, "minute"),
    ];
    let named: Vec<String> = parts
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, unit)| format!("{n} {unit}{}", if *n == 1 { "" } else { "s" }))
        .collect();
    if named.is_empty() {
        "up 0 minutes".to_string()
    } else {
        format!("up {}", named.join(", "))
    }
}

/// `2026-12-03 05:31:07`
fn since(boot: i64) -> String {
    let t = civil_from_secs(boot);
    format!(
        "{:04}-{:02}-{:02} {:02}:{:02}:{:02}",
        t.year, t.month, t.day, t.hour, t.minute, t.second
    )
}

const IDENTITY: super::Identity = super::Identity {
    name: "uptime",
    help_key: 'h',
    help: HELP,
};

const HELP: &str = "
Usage:
 uptime [options]

Options:
 -p, --pretty   show uptime in pretty format
 -h, --help     display this help and exit
 -s, --since    system up since
 -V, --version  output version information and exit

For more details see uptime(1).
";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classic_line_as_procps_prints_it() {
        // 2026-12-03 05:59:45, up 11 h 32 min.
        let now = 1_796_277_585;
        let load = "1.24, 3.69, 11.33";
        assert_eq!(
            classic(now, 11 * 3600 + 32 * 60, load),
            " 05:59:45 up 11:32,  0 user,  load average: 1.24, 3.69, 11.33"
        );
        assert_eq!(
            classic(now, 125, "0.00, 0.00, 0.00"),
            " 05:59:45 up 2 min,  0 user,  load average: 0.00, 0.00, 0.00"
        );
        assert!(classic(now, 2 * 86_400 + 3600, load).contains(" up 2 days,  1:00, "));
    }

    #[test]
    fn pretty_and_since() {
        assert_eq!(pretty(30), "up 0 minutes");
        assert_eq!(pretty(3600 + 60), "up 1 hour, 1 minute");
        assert_eq!(pretty(8 * 86_400 + 120), "up 1 week, 1 day, 2 minutes");
        assert_eq!(since(0), "1970-01-01 00:00:00");
    }
}
