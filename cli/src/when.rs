//! Points of a log on the command line (`--as-of`, `--since`, `--until`): an offset, or a
//! time, and how times are shown.

use connect_state_ops::cut::Point;

/// Parses `OFFSET|TIME`: a non-negative integer is an offset; anything else is an RFC 3339
/// time (`2026-12-01T09:30:00Z`, `2026-12-01T09:30:00.250+01:00`, or `2026-12-01 09:30:00`,
/// read as UTC).
pub fn parse_point(text: &str) -> Result<Point, String> {
    let text = text.trim();
    if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        return text
            .parse::<i64>()
            .map(Point::Offset)
            .map_err(|_| format!("offset {text} is larger than Kafka's offsets go"));
    }
    let time = humantime::parse_rfc3339_weak(text).map_err(|e| {
        format!(
            "expected an offset (e.g. 120) or an RFC 3339 time (e.g. 2026-12-01T09:30:00Z), \
             got '{text}': {e}"
        )
    })?;
    let ms = time
        .duration_since(std::time::UNIX_EPOCH)
        .map_err(|_| format!("'{text}' is before 1970"))?
        .as_millis();
    i64::try_from(ms)
        .map(Point::Time)
        .map_err(|_| format!("'{text}' is too far in the future"))
}

/// A record timestamp (ms since the epoch) as RFC 3339 UTC with milliseconds.
pub fn show_time(ms: i64) -> String {
    match u64::try_from(ms) {
        Ok(ms) => humantime::format_rfc3339_millis(
            std::time::UNIX_EPOCH + std::time::Duration::from_millis(ms),
        )
        .to_string(),
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
            Ok(Point::Time(1_764_581_400_000))
        );
        assert_eq!(
            parse_point("2026-12-01T10:30:00.250+01:00"),
            Ok(Point::Time(1_764_581_400_250))
        );
        assert!(parse_point("yesterday").unwrap_err().contains("RFC 3339"));
        assert!(parse_point("-5").is_err());
        assert!(parse_point("99999999999999999999").is_err());
        assert_eq!(show_time(1_764_581_400_250), "2026-12-01T09:30:00.250Z");
    }
}
