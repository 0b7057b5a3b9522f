//! UTC timestamps as Zerto writes them (ISO-8601, `Z` suffix), in one place.

use std::time::{Duration, SystemTime};

use anyhow::Context as _;

/// Formats a time as ISO-8601 UTC with second precision, e.g. `2026-11-29T10:00:00Z`.
pub fn format_utc(t: SystemTime) -> String {
    humantime::format_rfc3339_seconds(t).to_string()
}

/// Formats a time as ISO-8601 UTC with millisecond precision, e.g. `2026-11-29T10:00:00.250Z`.
pub fn format_utc_millis(t: SystemTime) -> String {
    humantime::format_rfc3339_millis(t).to_string()
}

/// Parses an ISO-8601 UTC time (`2026-11-29T10:00:00Z`, fractional seconds allowed; a
/// missing `Z` is read as UTC).
pub fn parse_utc(text: &str) -> anyhow::Result<SystemTime> {
    let trimmed = text.trim();
    humantime::parse_rfc3339_weak(trimmed.trim_end_matches('Z')).with_context(|| {
        format!("{trimmed:?} is not an ISO-8601 UTC time such as 2026-11-29T10:00:00Z")
    })
}

/// An ISO-8601 UTC time, or a duration before `now` (`2h`, `30m`, `1d`): what `log --since`
/// and `recover --before` take.
pub fn parse_utc_or_ago(text: &str, now: SystemTime) -> anyhow::Result<SystemTime> {
    if let Ok(time) = parse_utc(text) {
        return Ok(time);
    }
    let ago = humantime::parse_duration(text.trim()).map_err(|_| {
        anyhow::anyhow!(
            "{:?}: give an ISO-8601 UTC time (2026-03-02T09:00:00Z) or a duration ago (2h, 30m, 1d)",
            text.trim()
        )
    })?;
    now.checked_sub(ago)
        .ok_or_else(|| anyhow::anyhow!("{:?} is too long ago", text.trim()))
}

/// Seconds (with fractions) between two times, zero when `later` is not later.
pub fn secs_between(earlier: SystemTime, later: SystemTime) -> f64 {
    later
        .duration_since(earlier)
        .unwrap_or(Duration::ZERO)
        .as_secs_f64()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_zerto_timestamps() {
        let t = parse_utc("2019-07-11T16:51:07.022Z").expect("parses");
        assert_eq!(format_utc_millis(t), "2019-07-11T16:51:07.022Z");
        assert_eq!(format_utc(t), "2019-07-11T16:51:07Z");
        assert_eq!(
            parse_utc("2019-07-11T16:51:07").expect("parses"),
            parse_utc("2019-07-11T16:51:07Z").expect("parses")
        );
    }

    #[test]
    fn rejects_garbage_with_the_value() {
        let err = parse_utc("yesterday").unwrap_err().to_string();
        assert!(err.contains("\"yesterday\""), "{err}");
    }
}
