//! `date [-u] [-d STRING] [-r FILE] [-I[FMT]] [-R] [+FORMAT]` in UTC, the
//! sandbox's only time zone. `-d` reads GNU's date grammar (`datetime`):
//! `@SECS`, ISO 8601 with zones, `Mar 1 2026`, weekdays, and relative
//! items such as `+1 day`, `next monday` or `3 hours ago`.

use std::time::SystemTime;

use super::Process;
use super::args::{HasArg, Spec};
use crate::errors::strerror;
use crate::programs::timefmt::{self, Civil};

const DAYS: [&str; 7] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];
const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

/// GNU date's default output format.
const DEFAULT_FORMAT: &str = "%a %b %e %H:%M:%S %Z %Y";

/// An instant: seconds and nanoseconds since the epoch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Instant {
    secs: i64,
    nanos: u32,
}

pub(crate) fn date(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let spec = Spec {
        short: "d:f:I::r:Rus:",
        long: &[
            ("date", 'd', HasArg::Yes),
            ("file", 'f', HasArg::Yes),
            ("iso-8601", 'I', HasArg::Optional),
            ("reference", 'r', HasArg::Yes),
            ("rfc-email", 'R', HasArg::No),
            ("rfc-3339", 'T', HasArg::Yes),
            ("utc", 'u', HasArg::No),
            ("universal", 'u', HasArg::No),
            ("set", 's', HasArg::Yes),
            ("debug", 'D', HasArg::No),
        ],
    };
    // getopt's optional value (`-Iseconds`) must be attached; Spec has no
    // syntax for it, so `-I` is handled before parsing.
    let mut iso: Option<String> = None;
    let mut rest = vec![argv.first().cloned().unwrap_or_default()];
    for a in argv.iter().skip(1) {
        if let Some(v) = a.strip_prefix("-I") {
            iso = Some(if v.is_empty() {
                "date".to_string()
            } else {
                v.to_string()
            });
        } else {
            rest.push(a.clone());
        }
    }
    let args = match super::parse_args(p, &spec, &rest, 1) {
        Ok(a) => a,
        Err(status) => return status,
    };
    if args.has('I') {
        iso = Some(args.value('I').unwrap_or("date").to_string());
    }
    if args.has('s') {
        p.error("cannot set date: Operation not permitted");
        return 1;
    }
    let now = now();
    let when = if let Some(text) = args.value('d') {
        match parse_date(text, now) {
            Some(t) => t,
            None => {
                p.error(&format!("invalid date {}", p.quote(text)));
                return 1;
            }
        }
    } else if let Some(file) = args.value('r') {
        match std::fs::metadata(p.resolve(file)).and_then(|m| m.modified()) {
            Ok(t) => from_system(t),
            Err(e) => {
                p.error(&format!("{file}: {}", strerror(&e)));
                return 1;
            }
        }
    } else {
        now
    };
    let mut format = DEFAULT_FORMAT.to_string();
    for op in &args.operands {
        if let Some(f) = op.strip_prefix('+') {
            if args.operands.len() > 1 {
                let extra = args.operands.get(1).cloned().unwrap_or_default();
                return super::usage(p, &format!("extra operand {}", p.quote(&extra)), 1);
            }
            format = f.to_string();
        } else {
            p.error(&format!("invalid date {}", p.quote(op)));
            return 1;
        }
    }
    if let Some(kind) = &iso {
        format = match kind.as_str() {
            "date" | "d" => "%Y-%m-%d".to_string(),
            "hours" | "h" => "%Y-%m-%dT%H%:z".to_string(),
            "minutes" | "m" => "%Y-%m-%dT%H:%M%:z".to_string(),
            "seconds" | "s" => "%Y-%m-%dT%H:%M:%S%:z".to_string(),
            "ns" | "n" => "%Y-%m-%dT%H:%M:%S,%N%:z".to_string(),
            other => {
                p.error(&format!(
                    "invalid argument {} for '--iso-8601'",
                    p.quote(other)
                ));
                return 1;
            }
        };
    }
    if args.has('R') {
        format = "%a, %d %b %Y %H:%M:%S %z".to_string();
    }
    if let Some(kind) = args.value('T') {
        format = match kind {
            "date" => "%Y-%m-%d",
            "ns" => "%Y-%m-%d %H:%M:%S.%N%:z",
            _ => "%Y-%m-%d %H:%M:%S%:z",
        }
        .to_string();
    }
    if let Some(file) = args.value('f') {
        // `-f FILE`: one date a line, each printed or reported.
        let data = if file == "-" {
            p.io.stdin.borrow_mut().read_all()
        } else {
            match std::fs::read(p.resolve(file)) {
                Ok(d) => d,
                Err(e) => {
                    p.error(&format!("{file}: {}", strerror(&e)));
                    return 1;
                }
            }
        };
        let mut status = 0;
        for line in String::from_utf8_lossy(&data).lines() {
            match parse_date(line, now) {
                Some(t) => {
                    p.out(format!("{}\n", strftime(&format, t)).as_bytes());
                }
                None => {
                    p.error(&format!("invalid date {}", p.quote(line)));
                    status = 1;
                }
            }
        }
        return status;
    }
    p.out(format!("{}\n", strftime(&format, when)).as_bytes());
    0
}

fn now() -> Instant {
    from_system(SystemTime::now())
}

fn from_system(t: SystemTime) -> Instant {
    let secs = timefmt::epoch_secs(t);
    let nanos = t
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    Instant { secs, nanos }
}

/// `-d` strings: GNU's date grammar (see `datetime`).
fn parse_date(text: &str, now: Instant) -> Option<Instant> {
    super::datetime::parse(text, now.secs, now.nanos).map(|(secs, nanos)| Instant { secs, nanos })
}

/// A time (seconds, nanoseconds) formatted by strftime(3) rules, in UTC
/// (`ls --time-style=+FORMAT`, `find -printf %T`).
pub(crate) fn format_time(format: &str, secs: i64, nanos: u32) -> String {
    strftime(format, Instant { secs, nanos })
}

/// The current time formatted by strftime(3) rules (prompt `\D{...}`).
pub(crate) fn format_now(format: &str) -> String {
    strftime(format, now())
}

/// C strftime in UTC, with GNU's `-`, `_`, `0`, `^` flags and widths.
fn strftime(format: &str, t: Instant) -> String {
    let c = timefmt::civil_from_secs(t.secs);
    let days = t.secs.div_euclid(86_400);
    let weekday = usize::try_from((days + 4).rem_euclid(7)).unwrap_or(0);
    let yday = days - timefmt::days_from_civil(c.year, 1, 1);
    let mut out = String::new();
    let mut chars = format.chars().peekable();
    while let Some(ch) = chars.next() {
        if ch != '%' {
            out.push(ch);
            continue;
        }
        let mut flag = None;
        while let Some(&f) = chars.peek().filter(|f| "-_0^#".contains(**f)) {
            flag = Some(f);
            chars.next();
        }
        let mut width = String::new();
        while let Some(&d) = chars.peek().filter(|d| d.is_ascii_digit()) {
            width.push(d);
            chars.next();
        }
        let mut colons = 0;
        while chars.peek() == Some(&':') {
            colons += 1;
            chars.next();
        }
        let Some(conv) = chars.next() else {
            out.push('%');
            break;
        };
        let width: Option<usize> = width.parse().ok();
        if conv == 'N' {
            // The width of %N is its number of digits.
            let digits = format!("{:09}", t.nanos);
            let w = width.unwrap_or(9).min(super::MAX_FIELD_WIDTH);
            out.push_str(&format!("{:0<w$}", digits.get(..w.min(9)).unwrap_or("")));
            continue;
        }
        let (text, numeric, default_pad) = field(conv, colons, &c, t, weekday, yday);
        // `#` swaps case: names upper, `%p`/`%Z` lower.
        let text = match (flag, conv) {
            (Some('#'), 'p' | 'Z') => text.map(|t| t.to_lowercase()),
            (Some('#'), 'a' | 'A' | 'b' | 'B' | 'h') => text.map(|t| t.to_uppercase()),
            _ => text,
        };
        let Some(text) = text else {
            out.push('%');
            out.push_str(&":".repeat(colons));
            out.push(conv);
            continue;
        };
        out.push_str(&pad(&text, numeric, default_pad, flag, width));
    }
    out
}

/// One conversion: its text, whether it is a number, and its padding.
fn field(
    conv: char,
    colons: usize,
    c: &Civil,
    t: Instant,
    weekday: usize,
    yday: i64,
) -> (Option<String>, bool, Option<(char, usize)>) {
    let month_name = MONTHS
        .get(usize::try_from(c.month).unwrap_or(1).saturating_sub(1))
        .copied()
        .unwrap_or("January");
    let day_name = DAYS.get(weekday).copied().unwrap_or("Sunday");
    let hour12 = if c.hour.is_multiple_of(12) {
        12
    } else {
        c.hour % 12
    };
    let num = |v: i64, w: usize| (Some(v.to_string()), true, Some(('0', w)));
    let space = |v: i64, w: usize| (Some(v.to_string()), true, Some((' ', w)));
    let text = |s: String| (Some(s), false, None);
    // ISO 8601 week-based year and week.
    let iso = || {
        let wd = i64::try_from((weekday + 6) % 7).unwrap_or(0);
        let thursday = yday - wd + 3;
        let year_len =
            |y: i64| timefmt::days_from_civil(y + 1, 1, 1) - timefmt::days_from_civil(y, 1, 1);
        if thursday < 0 {
            let prev = c.year - 1;
            let t2 = thursday + year_len(prev);
            (prev, t2 / 7 + 1)
        } else if thursday >= year_len(c.year) {
            (c.year + 1, 1)
        } else {
            (c.year, thursday / 7 + 1)
        }
    };
    match conv {
        'Y' => (Some(c.year.to_string()), true, None),
        'C' => num(c.year.div_euclid(100), 2),
        'y' => num(c.year.rem_euclid(100), 2),
        'm' => num(i64::from(c.month), 2),
        'q' => num(i64::from(c.month.div_ceil(3)), 1),
        'd' => num(i64::from(c.day), 2),
        'e' => space(i64::from(c.day), 2),
        'H' => num(i64::from(c.hour), 2),
        'k' => space(i64::from(c.hour), 2),
        'I' => num(i64::from(hour12), 2),
        'l' => space(i64::from(hour12), 2),
        'M' => num(i64::from(c.minute), 2),
        'S' => num(i64::from(c.second), 2),
        'j' => num(yday + 1, 3),
        'u' => num(
            i64::try_from(if weekday == 0 { 7 } else { weekday }).unwrap_or(7),
            1,
        ),
        'w' => num(i64::try_from(weekday).unwrap_or(0), 1),
        's' => (Some(t.secs.to_string()), true, None),
        'N' => (Some(format!("{:09}", t.nanos)), true, None),
        'U' => num((yday + 7 - i64::try_from(weekday).unwrap_or(0)) / 7, 2),
        'W' => num(
            (yday + 7 - i64::try_from((weekday + 6) % 7).unwrap_or(0)) / 7,
            2,
        ),
        'G' => (Some(iso().0.to_string()), true, None),
        'g' => num(iso().0.rem_euclid(100), 2),
        'V' => num(iso().1, 2),
        'a' => text(day_name.get(..3).unwrap_or(day_name).to_string()),
        'A' => text(day_name.to_string()),
        'b' | 'h' => text(month_name.get(..3).unwrap_or(month_name).to_string()),
        'B' => text(month_name.to_string()),
        'p' => text(if c.hour < 12 { "AM" } else { "PM" }.to_string()),
        'P' => text(if c.hour < 12 { "am" } else { "pm" }.to_string()),
        'Z' => text("UTC".to_string()),
        'z' => text(
            match colons {
                1 => "+00:00",
                2 => "+00:00:00",
                3 => "+00",
                _ => "+0000",
            }
            .to_string(),
        ),
        'n' => text("\n".to_string()),
        't' => text("\t".to_string()),
        '%' => text("%".to_string()),
        'T' => text(strftime("%H:%M:%S", t)),
        'R' => text(strftime("%H:%M", t)),
        'D' | 'x' => text(strftime("%m/%d/%y", t)),
        'F' => text(strftime("%Y-%m-%d", t)),
        'X' => text(strftime("%H:%M:%S", t)),
        'r' => text(strftime("%I:%M:%S %p", t)),
        'c' => text(strftime("%a %b %e %H:%M:%S %Y", t)),
        _ => (None, false, None),
    }
}

fn pad(
    text: &str,
    numeric: bool,
    default_pad: Option<(char, usize)>,
    flag: Option<char>,
    width: Option<usize>,
) -> String {
    let text = if flag == Some('^') {
        text.to_uppercase()
    } else {
        text.to_string()
    };
    let (default_fill, default_width) = default_pad.unwrap_or(('0', 0));
    let (fill, w) = match flag {
        Some('-') => return text,
        Some('_') => (' ', width.unwrap_or(default_width)),
        Some('0') => ('0', width.unwrap_or(default_width)),
        _ if !numeric => (' ', width.unwrap_or(0)),
        _ => (default_fill, width.unwrap_or(default_width)),
    };
    let w = w.min(super::MAX_FIELD_WIDTH);
    let len = text.chars().count();
    if len >= w {
        text
    } else {
        format!("{}{text}", fill.to_string().repeat(w - len))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(secs: i64) -> Instant {
        Instant { secs, nanos: 0 }
    }

    #[test]
    fn formats_like_gnu() {
        assert_eq!(
            strftime(DEFAULT_FORMAT, at(0)),
            "Thu Jan  1 00:00:00 UTC 1970"
        );
        assert_eq!(
            strftime("%F %T %j %u %p %-d %_m %03d", at(1_709_647_629)),
            "2024-03-05 14:07:09 065 2 PM 5  3 005"
        );
        assert_eq!(strftime("%G %V %U %W", at(0)), "1970 01 00 00");
    }

    #[test]
    fn parses_dates() {
        let now = at(1_704_067_200);
        assert_eq!(parse_date("@5", now), Some(at(5)));
        assert_eq!(
            parse_date("2024-02-28 +1 day", now).map(|t| t.secs),
            Some(1_709_164_800)
        );
        assert_eq!(
            parse_date("2024-01-10 3 days ago", now).map(|t| t.secs),
            Some(1_704_585_600)
        );
        assert_eq!(parse_date("garbage", now), None);
    }
}
