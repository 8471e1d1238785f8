//! Time as the API shows it: RFC 3339 UTC with milliseconds. The store
//! keeps milliseconds since the Unix epoch.

use chrono::{DateTime, SecondsFormat, Utc};

/// Now, in milliseconds since the Unix epoch.
pub fn now_ms() -> i64 {
    Utc::now().timestamp_millis()
}

/// `ms` since the Unix epoch, as RFC 3339 UTC with milliseconds.
pub fn rfc3339(ms: i64) -> String {
    DateTime::<Utc>::from_timestamp_millis(ms)
        .unwrap_or_default()
        .to_rfc3339_opts(SecondsFormat::Millis, true)
}

#[cfg(test)]
mod tests {
    #[test]
    fn formats_with_milliseconds_in_utc() {
        assert_eq!(
            super::rfc3339(1_759_849_320_123),
            "2025-10-07T15:02:00.123Z"
        );
    }
}
