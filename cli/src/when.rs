//! Points of a log on the command line (`--as-of`, `--since`, `--until`): an offset, or a
//! time, and how times are shown.

use connect_state_ops::cut::Point;

/// Parses `OFFSET|TIME`: a non-negative integer is an offset; anything else is an RFC 3339
/// time with its offset from UTC (`2026-12-01T09:30:00Z`, `2026-12-01T10:30:00.250+01:00`), or
/// a date and time without one (`2026-12-01 09:30:00`, `2026-12-01`), read as UTC.
pub fn parse_point(text: &str) -> Result<Point, String> {
    let text = text.trim();
    if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        return text
            .parse::<i64>()
            .map(Point::Offset)
            .map_err(|_| format!("offset {text} is larger than Kafka's offsets go"));
    }
    let instant = text.parse::<jiff::Timestamp>().or_else(|with_offset| {
        // No offset from UTC given: a civil date and time, read as UTC.
        text.parse::<jiff::civil::DateTime>()
            .and_then(|civil| civil.to_zoned(jiff::tz::TimeZone::UTC))
            .map(|zoned| zoned.timestamp())
            .map_err(|_| with_offset)
    });
    let instant = instant.map_err(|e| {
        format!(
            "expected an offset (e.g. 120) or an RFC 3339 time (e.g. 2026-12-01T09:30:00Z), \
             got '{text}': {e}"
        )
    })?;
    let ms = instant.as_millisecond();
    if ms < 0 {
        return Err(format!("'{text}' is before 1970"));
    }
    Ok(Point::Time(ms))
}

/// A record timestamp (ms since the epoch) as RFC 3339 UTC with milliseconds.
pub fn show_time(ms: i64) -> String {
    match jiff::Timestamp::from_millisecond(ms) {
        Ok(instant) => format!("{instant:.3}"),
        Err(_) => format!("{ms} ms"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_and_times() {
        assert_eq!(parse_point("120"), Ok(Point::Offset(120)));
        assert_eq!(
            parse_point("2026-12-01T09:30:00Z"),
            Ok(Point::Time(1_796_117_400_000))
        );
        assert_eq!(
            parse_point("2026-12-01T10:30:00.250+01:00"),
            Ok(Point::Time(1_796_117_400_250))
        );
        assert_eq!(
            parse_point("2026-12-01 09:30:00"),
            Ok(Point::Time(1_796_117_400_000)),
            "no offset from UTC: UTC"
        );
        assert_eq!(
            parse_point("2026-12-01"),
            Ok(Point::Time(1_796_083_200_000))
        );
        assert!(parse_point("yesterday").unwrap_err().contains("RFC 3339"));
        assert!(parse_point("1969-12-31T00:00:00Z")
            .unwrap_err()
            .contains("1970"));
        assert!(parse_point("-5").is_err());
        assert!(parse_point("99999999999999999999").is_err());
        assert_eq!(show_time(1_796_117_400_250), "2026-12-01T09:30:00.250Z");
    }
}
