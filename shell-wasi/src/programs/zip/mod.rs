//! Info-ZIP's `zip` 3.0 and `unzip` 6.00, as Debian 12 installs them: the
//! archives agents download or hand over, made and opened in the
//! sandbox's own filesystem. The format is the `zip` crate's; the
//! command lines, messages, listings and exit codes are Info-ZIP's.
//! Members are Deflated or Stored; times are the DOS times in UTC (the
//! sandbox's only time zone); extraction never leaves its folder.

mod create;
mod extract;

use super::Table;
use super::timefmt::{Civil, civil_from_secs, days_from_civil};

/// This family's programs, sorted by name.
pub(crate) const TABLE: Table = &[("unzip", extract::unzip), ("zip", create::zip)];

/// The biggest archive made or read (the pipe budget).
const MAX_ARCHIVE: usize = crate::streams::MAX_PIPE_BYTES;

/// Info-ZIP's compression ratio of `size` bytes stored in `packed`,
/// rounded as its `percent()` does; negative when the member grew.
fn percent(size: u64, packed: u64) -> i64 {
    let (n, m) = (i128::from(size), i128::from(packed));
    if n == 0 {
        return 0;
    }
    // C's truncating division, as in Info-ZIP's util.c.
    i64::try_from((1 + 200 * (n - m) / n) / 2).unwrap_or(0)
}

/// The DOS time of seconds since the epoch (1980 at the earliest).
fn dos_time(secs: i64) -> ::zip::DateTime {
    let c = civil_from_secs(secs);
    let small = |v: u32| u8::try_from(v).unwrap_or(0);
    u16::try_from(c.year)
        .ok()
        .and_then(|year| {
            ::zip::DateTime::from_date_and_time(
                year,
                small(c.month),
                small(c.day),
                small(c.hour),
                small(c.minute),
                small(c.second),
            )
            .ok()
        })
        .unwrap_or_default()
}

/// Seconds since the epoch of a member's DOS time.
fn epoch_of(t: ::zip::DateTime) -> i64 {
    let days = days_from_civil(
        i64::from(t.year()),
        u32::from(t.month()),
        u32::from(t.day()),
    );
    days * 86_400 + i64::from(t.hour()) * 3600 + i64::from(t.minute()) * 60 + i64::from(t.second())
}

/// `2024-03-05 10:20`, the date and time columns of `unzip -l`.
fn listing_time(t: Option<::zip::DateTime>) -> String {
    let c = t.map_or(
        Civil {
            year: 1980,
            month: 1,
            day: 1,
            hour: 0,
            minute: 0,
            second: 0,
        },
        |t| civil_from_secs(epoch_of(t)),
    );
    format!(
        "{:04}-{:02}-{:02} {:02}:{:02}",
        c.year, c.month, c.day, c.hour, c.minute
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratios_round_as_info_zip_does() {
        assert_eq!(percent(36, 17), 53);
        assert_eq!(percent(37, 18), 51);
        assert_eq!(percent(1, 1), 0);
        assert_eq!(percent(0, 0), 0);
        assert_eq!(percent(1, 3), -199);
    }

    #[test]
    fn dos_times_round_trip_to_two_seconds() {
        let secs = 1_709_634_030; // 2024-03-05 10:20:30 UTC
        assert_eq!(epoch_of(dos_time(secs)), secs);
        assert_eq!(listing_time(Some(dos_time(secs))), "2024-03-05 10:20");
        assert_eq!(epoch_of(dos_time(0)), epoch_of(::zip::DateTime::default()));
    }
}
