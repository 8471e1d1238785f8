//! Calendar arithmetic in UTC (the sandbox's only time zone) for `ls -l`
//! and `touch -d`: Howard Hinnant's days-from-civil algorithms.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// GNU ls: files older than this (half a Gregorian year) show the year.
const SIX_MONTHS_SECS: i64 = 31_556_952 / 2;

/// A broken-down UTC time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Civil {
    pub(crate) year: i64,
    pub(crate) month: u32,
    pub(crate) day: u32,
    pub(crate) hour: u32,
    pub(crate) minute: u32,
    pub(crate) second: u32,
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
pub(crate) fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The UTC calendar time of seconds since the epoch.
pub(crate) fn civil_from_secs(secs: i64) -> Civil {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = u32::try_from(doy - (153 * mp + 2) / 5 + 1).unwrap_or(1);
    let month = u32::try_from(if mp < 10 { mp + 3 } else { mp - 9 }).unwrap_or(1);
    let year = yoe + era * 400 + i64::from(month <= 2);
    let rem = u32::try_from(rem).unwrap_or(0);
    Civil {
        year,
        month,
        day,
        hour: rem / 3600,
        minute: rem / 60 % 60,
        second: rem % 60,
    }
}

/// Seconds since the epoch of a system time (negative before 1970).
pub(crate) fn epoch_secs(t: SystemTime) -> i64 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
        Err(e) => -i64::try_from(e.duration().as_secs()).unwrap_or(i64::MAX),
    }
}

pub(crate) fn system_time(secs: i64) -> SystemTime {
    if secs >= 0 {
        UNIX_EPOCH + Duration::from_secs(secs.unsigned_abs())
    } else {
        UNIX_EPOCH - Duration::from_secs(secs.unsigned_abs())
    }
}

/// The date column of `ls -l`: `Oct  7 15:02` when recent, `Oct  7  2025`
/// when older than six months or in the future (GNU's rule).
pub(crate) fn ls_date(mtime: i64, now: i64) -> String {
    let c = civil_from_secs(mtime);
    let month = MONTHS
        .get(usize::try_from(c.month).unwrap_or(1).saturating_sub(1))
        .copied()
        .unwrap_or("Jan");
    let recent = mtime > now - SIX_MONTHS_SECS && mtime <= now;
    if recent {
        format!("{month} {:>2} {:02}:{:02}", c.day, c.hour, c.minute)
    } else {
        format!("{month} {:>2}  {}", c.day, c.year)
    }
}

/// `touch -t [[CC]YY]MMDDhhmm[.ss]`.
pub(crate) fn parse_stamp(text: &str, now: i64) -> Option<i64> {
    let (main, secs) = match text.split_once('.') {
        Some((m, s)) => (m, s.parse::<i64>().ok()?),
        None => (text, 0),
    };
    if !main.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let num = |s: &str| s.parse::<u32>().ok();
    let (year, rest) = match main.len() {
        8 => (civil_from_secs(now).year, main),
        10 => {
            let yy = i64::from(num(main.get(..2)?)?);
            (if yy < 69 { 2000 + yy } else { 1900 + yy }, main.get(2..)?)
        }
        12 => (i64::from(num(main.get(..4)?)?), main.get(4..)?),
        _ => return None,
    };
    let month = num(rest.get(..2)?)?;
    let day = num(rest.get(2..4)?)?;
    let hour = i64::from(num(rest.get(4..6)?)?);
    let minute = i64::from(num(rest.get(6..8)?)?);
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || minute > 59 {
        return None;
    }
    Some(days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + secs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_round_trip() {
        let secs = days_from_civil(2026, 10, 7) * 86_400 + 15 * 3600 + 2 * 60;
        let c = civil_from_secs(secs);
        assert_eq!(
            (c.year, c.month, c.day, c.hour, c.minute),
            (2026, 10, 7, 15, 2)
        );
    }

    #[test]
    fn ls_dates_follow_gnu_rule() {
        let now = days_from_civil(2026, 10, 7) * 86_400 + 16 * 3600;
        let recent = now - 3600 + 120;
        assert_eq!(ls_date(recent, now), "Oct  7 15:02");
        let old = days_from_civil(2025, 1, 2) * 86_400;
        assert_eq!(ls_date(old, now), "Jan  2  2025");
        assert_eq!(ls_date(now + 86_400, now), "Oct  8  2026");
    }

    #[test]
    fn parses_touch_dates() {
        assert_eq!(
            parse_stamp("202001020304", 0),
            Some(days_from_civil(2020, 1, 2) * 86_400 + 3 * 3600 + 4 * 60)
        );
        assert_eq!(parse_stamp("nonsense", 0), None);
    }
}
