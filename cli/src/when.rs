//! Points of a log on the command line (`--as-of`, `--since`, `--until`): an offset, or a
//! time, and how times are shown.

use connect_state_ops::cut::Point;

/// The largest offset from UTC a time may give: 23:59, as RFC 3339 and ISO 8601 allow.
const MAX_UTC_OFFSET_SECONDS: i32 = 23 * 3600 + 59 * 60;

/// Parses `OFFSET|TIME`: a non-negative integer is an offset; anything else is an RFC 3339
/// time with its offset from UTC (`2026-12-01T09:30:00Z`, `2026-12-01T10:30:00.250+01:00`), an
/// RFC 9557 time in an IANA time zone (`2026-12-01T09:30:00[America/New_York]`, the zone's
/// rules applied; with an offset too, the two must agree), or a date and time without either
/// (`2026-12-01 09:30:00`, `2026-12-01`), read as UTC. Unknown zones and offsets beyond
/// +/-23:59 are refused. The time zone database is built into the binary, so a machine
/// without `/usr/share/zoneinfo` reads zones the same way.
pub fn parse_point(text: &str) -> Result<Point, String> {
    let text = text.trim();
    if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        return text
            .parse::<i64>()
            .map(Point::Offset)
            .map_err(|_| format!("offset {text} is larger than Kafka's offsets go"));
    }
    let ms = parse_time(text).map_err(|why| {
        format!(
            "expected an offset (e.g. 120) or an RFC 3339 time (e.g. 2026-12-01T09:30:00Z, or \
             2026-12-01T09:30:00[America/New_York]), got '{text}': {why}"
        )
    })?;
    if ms < 0 {
        return Err(format!("'{text}' is before 1970"));
    }
    Ok(Point::Time(ms))
}

/// Milliseconds since the epoch of an RFC 3339 / RFC 9557 time.
fn parse_time(text: &str) -> Result<i64, String> {
    use jiff::fmt::temporal::{Pieces, PiecesOffset};

    let pieces = Pieces::parse(text).map_err(|e| e.to_string())?;
    let offset = match pieces.offset() {
        Some(PiecesOffset::Numeric(numeric)) => {
            let seconds = numeric.offset().seconds();
            if seconds.abs() > MAX_UTC_OFFSET_SECONDS {
                return Err(format!(
                    "the offset from UTC {} is beyond +/-23:59",
                    numeric.offset()
                ));
            }
            Some(seconds)
        }
        Some(PiecesOffset::Zulu) => Some(0),
        Some(_) | None => None,
    };
    if let Some(annotation) = pieces.time_zone_annotation() {
        // The zone must exist; jiff then applies its rules (and, with an offset too, refuses
        // one the zone did not have then).
        annotation.to_time_zone().map_err(|e| e.to_string())?;
        let zoned: jiff::Zoned = text.parse().map_err(|e: jiff::Error| e.to_string())?;
        return Ok(zoned.timestamp().as_millisecond());
    }
    let civil = pieces
        .date()
        .to_datetime(pieces.time().unwrap_or(jiff::civil::Time::midnight()));
    Ok(civil_ms(civil) - i64::from(offset.unwrap_or(0)) * 1000)
}

/// Milliseconds from 1970-01-01T00:00 to `civil`, both read in the same zone: counted by
/// hand, because jiff's timestamps stop a day short of 9999-12-31T23:59:59.
fn civil_ms(civil: jiff::civil::DateTime) -> i64 {
    let epoch = jiff::civil::date(1970, 1, 1);
    let days = civil
        .date()
        .since((jiff::Unit::Day, epoch))
        .map_or(0, |span| i64::from(span.get_days()));
    let time = civil.time();
    let seconds =
        i64::from(time.hour()) * 3600 + i64::from(time.minute()) * 60 + i64::from(time.second());
    days * 86_400_000 + seconds * 1000 + i64::from(time.millisecond())
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
        // The last instant RFC 3339 can write.
        assert_eq!(
            parse_point("9999-12-31T23:59:59Z"),
            Ok(Point::Time(253_402_300_799_000))
        );
        assert_eq!(
            parse_point("9999-12-31T23:59:59.999+00:00"),
            Ok(Point::Time(253_402_300_799_999))
        );
        assert_eq!(show_time(1_796_117_400_250), "2026-12-01T09:30:00.250Z");
    }

    #[test]
    fn time_zones_are_applied_or_refused() {
        // New York is five hours behind UTC in December, four in July.
        assert_eq!(
            parse_point("2026-12-01T09:30:00[America/New_York]"),
            Ok(Point::Time(1_796_135_400_000))
        );
        assert_eq!(
            parse_point("2026-07-01T09:30:00[America/New_York]"),
            parse_point("2026-07-01T13:30:00Z")
        );
        assert_eq!(
            parse_point("2026-12-01T09:30:00-05:00[America/New_York]"),
            Ok(Point::Time(1_796_135_400_000))
        );
        let disagreeing = parse_point("2026-12-01T09:30:00+01:00[America/New_York]");
        assert!(disagreeing.is_err(), "{disagreeing:?}");
        let unknown = parse_point("2026-12-01T09:30:00[Mars/Olympus]").unwrap_err();
        assert!(unknown.contains("Mars/Olympus"), "{unknown}");
        let beyond = parse_point("2026-12-01T09:30:00+25:00").unwrap_err();
        assert!(beyond.contains("23:59"), "{beyond}");
        assert!(parse_point("2026-12-01T09:30:00+24:00").is_err());
        assert_eq!(
            parse_point("2026-12-01T09:30:00-23:59"),
            Ok(Point::Time(1_796_117_400_000 + (23 * 60 + 59) * 60_000))
        );
    }
}
