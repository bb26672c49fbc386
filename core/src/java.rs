//! Exact reproductions of the `java.lang` / `java.util` behaviour that Kafka Connect's record
//! handling depends on.
//!
//! Java Connect parses task keys with `String.split("-")` and `Integer.parseInt` and stores session
//! keys with `java.util.Base64`. Each of these has quirks (Unicode digits, dropped trailing empty
//! strings, optional padding) that a faithful re-implementation must reproduce, so they live
//! here, tested against the Java semantics rather than against the nearest Rust standard-library
//! function. (`String.hashCode()` and `HashMap` order live in [`crate::json::java_map`].)

use alloc::borrow::Cow;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

/// The code point of the zero digit of every block of Unicode decimal digits (general category
/// `Nd`), sorted ascending. Every block is ten consecutive code points with values 0 to 9.
///
/// Generated with Python 3.11's `unicodedata`, i.e. from Unicode 14.0. Java 17 uses Unicode 13
/// and Java 21 Unicode 15; the few differences between those versions are digit blocks of
/// rarely-used scripts, nearly all outside the Basic Multilingual Plane (which
/// `Integer.parseInt` never accepts anyway, see [`parse_int`]).
const ND_ZEROS: &[u32] = &[
    0x0030, 0x0660, 0x06F0, 0x07C0, 0x0966, 0x09E6, 0x0A66, 0x0AE6, 0x0B66, 0x0BE6, 0x0C66, 0x0CE6,
    0x0D66, 0x0DE6, 0x0E50, 0x0ED0, 0x0F20, 0x1040, 0x1090, 0x17E0, 0x1810, 0x1946, 0x19D0, 0x1A80,
    0x1A90, 0x1B50, 0x1BB0, 0x1C40, 0x1C50, 0xA620, 0xA8D0, 0xA900, 0xA9D0, 0xA9F0, 0xAA50, 0xABF0,
    0xFF10, 0x104A0, 0x10D30, 0x11066, 0x110F0, 0x11136, 0x111D0, 0x112F0, 0x11450, 0x114D0,
    0x11650, 0x116C0, 0x11730, 0x118E0, 0x11950, 0x11C50, 0x11D50, 0x11DA0, 0x16A60, 0x16AC0,
    0x16B50, 0x1D7CE, 0x1D7D8, 0x1D7E2, 0x1D7EC, 0x1D7F6, 0x1E140, 0x1E2F0, 0x1E950, 0x1FBF0,
];

/// Java's `Character.digit(codePoint, 10)`: the value of a Unicode decimal digit (`Nd`), or
/// `None`. For radix 10 Java accepts no letters (ASCII or fullwidth letters only count for
/// radices above 10), and other numeric characters such as `²` or `½` are not digits.
fn decimal_digit(c: char) -> Option<u8> {
    // ASCII first (every digit Java writes): the same answer as the block search below, whose
    // first block is `'0'`, without the search.
    if c.is_ascii_digit() {
        return u8::try_from(c).ok().map(|d| d - b'0');
    }
    let cp = u32::from(c);
    let block = ND_ZEROS.partition_point(|&zero| zero <= cp);
    let zero = *ND_ZEROS.get(block.checked_sub(1)?)?;
    let value = cp - zero;
    if value < 10 {
        u8::try_from(value).ok()
    } else {
        None
    }
}

/// Java's `Integer.parseInt(s, 10)`.
///
/// Accepts an optional single leading `+` or `-`, then one or more decimal digits of any script
/// (Unicode category `Nd`, e.g. `١` or `５`), leading zeros included, whose value fits in an
/// `i32`. Java reads the string one UTF-16 code unit at a time and a lone surrogate is never a
/// digit, so digits outside the Basic Multilingual Plane (e.g. `𝟏`) are rejected, as Java does.
/// Returns `None` where Java throws `NumberFormatException`.
pub(crate) fn parse_int(s: &str) -> Option<i32> {
    let (negative, digits) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if digits.is_empty() {
        return None;
    }
    // Accumulate negatively, like Java, so that `i32::MIN` is representable.
    let mut acc: i32 = 0;
    for c in digits.chars() {
        if u32::from(c) > 0xFFFF {
            return None;
        }
        let digit = decimal_digit(c)?;
        acc = acc.checked_mul(10)?.checked_sub(i32::from(digit))?;
    }
    if negative {
        Some(acc)
    } else {
        acc.checked_neg()
    }
}

/// Java's `StringDeserializer` (how both stores read record keys): UTF-8, each malformed
/// sequence replaced by U+FFFD. Valid text (every key Java writes) is borrowed after one
/// vectorized check; `from_utf8_lossy`'s own scan is several times slower.
pub(crate) fn string_deserializer(bytes: &[u8]) -> Cow<'_, str> {
    match simdutf8::basic::from_utf8(bytes) {
        Ok(text) => Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(bytes),
    }
}

/// Java's `s.split("-")` (a regex split with limit 0).
///
/// Splits on every `-` and keeps leading empty strings, but drops all trailing empty strings, so
/// `"a--b-"` gives `["a", "", "b"]` and `"--"` gives `[]`. When there is no `-` at all the
/// result is the input itself, so `""` gives `[""]`.
pub(crate) fn split_dash(s: &str) -> Vec<&str> {
    if !s.contains('-') {
        return vec![s];
    }
    let mut parts: Vec<&str> = s.split('-').collect();
    while parts.last().is_some_and(|part| part.is_empty()) {
        parts.pop();
    }
    parts
}

/// The test reference for task keys: Java's reading of `key` as `key.split("-")`, with the
/// connector made of the parts after the first `prefix_parts` and before the last (joined by
/// `-`), the last part read by `Integer.parseInt`, and `None` with fewer than `prefix_parts + 2`
/// parts. Config task keys have one prefix part (`task`), status task keys two (`status-task`).
#[cfg(test)]
pub(crate) fn task_key_by_split(key: &str, prefix_parts: usize) -> Option<(String, i32)> {
    let parts = split_dash(key);
    if parts.len() < prefix_parts + 2 {
        return None;
    }
    let (last, rest) = parts.split_last()?;
    Some((rest.get(prefix_parts..)?.join("-"), parse_int(last)?))
}

/// Java's `java.util.Base64` basic codec (standard alphabet, RFC 4648), as the `base64`
/// crate configured to Java's decoder rules:
///
/// - every character must be in `A-Z a-z 0-9 + /` or be padding; whitespace, line breaks, `-`,
///   `_` and non-ASCII characters are errors;
/// - padding is optional (a final unit of two or three characters decodes as if padded), but
///   when present it must be exactly right (`xx==` or `xxx=`) and nothing may follow it;
/// - a final unit of a single character is an error;
/// - the unused low bits of the final unit are not checked (`QR==` decodes like `QQ==`);
/// - the encoder pads with `=` and breaks no lines.
///
/// The crate's lenient padding mode also takes partial padding (`AQ=`), which Java refuses, so
/// input that ends in `=` is decoded with canonical padding required and other input with no
/// padding allowed. Each rule has a case in this module's tests.
const fn java_base64(padding: base64::engine::DecodePaddingMode) -> base64::engine::GeneralPurpose {
    base64::engine::GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        base64::engine::GeneralPurposeConfig::new()
            .with_encode_padding(true)
            .with_decode_padding_mode(padding)
            .with_decode_allow_trailing_bits(true),
    )
}

const PADDED: base64::engine::GeneralPurpose =
    java_base64(base64::engine::DecodePaddingMode::RequireCanonical);
const UNPADDED: base64::engine::GeneralPurpose =
    java_base64(base64::engine::DecodePaddingMode::RequireNone);

/// Java's `Base64.getDecoder().decode(s)`; `Err` where Java throws `IllegalArgumentException`.
pub(crate) fn base64_decode(s: &str) -> Result<Vec<u8>, base64::DecodeError> {
    let engine = if s.ends_with('=') { &PADDED } else { &UNPADDED };
    base64::Engine::decode(engine, s)
}

/// Java's `Base64.getEncoder().encodeToString(bytes)`.
pub(crate) fn base64_encode(bytes: &[u8]) -> String {
    base64::Engine::encode(&PADDED, bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_int_matches_java() {
        let cases: &[(&str, Option<i32>)] = &[
            ("0", Some(0)),
            ("1", Some(1)),
            ("+3", Some(3)),
            ("01", Some(1)),
            ("-5", Some(-5)),
            ("-0", Some(0)),
            ("000000000000000000042", Some(42)),
            ("١", Some(1)),
            ("٣٢", Some(32)),
            ("５", Some(5)),
            ("३", Some(3)),
            ("1٢３", Some(123)),
            ("2147483647", Some(i32::MAX)),
            ("-2147483648", Some(i32::MIN)),
            ("+2147483647", Some(i32::MAX)),
            ("2147483648", None),
            ("-2147483649", None),
            ("99999999999999999999", None),
            ("", None),
            ("+", None),
            ("-", None),
            ("+-1", None),
            ("--1", None),
            ("1a", None),
            (" 1", None),
            ("1 ", None),
            ("bar", None),
            ("a", None),
            ("Ａ", None),
            ("²", None),
            ("½", None),
            ("1.0", None),
            ("𝟏", None),         // U+1D7CF: Nd, but outside the BMP
            ("\u{104A1}", None), // Osmanya one: Nd, but outside the BMP
        ];
        for &(input, expected) in cases {
            assert_eq!(parse_int(input), expected, "parse_int({input:?})");
        }
    }

    #[test]
    fn decimal_digit_covers_every_block() {
        for &zero in ND_ZEROS {
            for value in 0..10u8 {
                let c = char::from_u32(zero + u32::from(value)).unwrap();
                assert_eq!(decimal_digit(c), Some(value), "{c:?}");
            }
            if let Some(before) = char::from_u32(zero - 1) {
                if !ND_ZEROS.contains(&(zero - 10)) {
                    assert_eq!(decimal_digit(before), None, "{before:?}");
                }
            }
        }
        assert!(ND_ZEROS.windows(2).all(|w| w[0] + 10 <= w[1]));
        assert_eq!(decimal_digit('\0'), None);
        assert_eq!(decimal_digit('/'), None);
        assert_eq!(decimal_digit(':'), None);
        assert_eq!(decimal_digit(char::MAX), None);
    }

    #[test]
    fn split_dash_matches_java() {
        let cases: &[(&str, &[&str])] = &[
            ("task-foo-1-", &["task", "foo", "1"]),
            ("a--b", &["a", "", "b"]),
            ("-a", &["", "a"]),
            ("--", &[]),
            ("-", &[]),
            ("", &[""]),
            ("a", &["a"]),
            ("a-", &["a"]),
            ("a---", &["a"]),
            ("-a-", &["", "a"]),
            ("--a", &["", "", "a"]),
            ("task-my-conn-12", &["task", "my", "conn", "12"]),
            ("task--1", &["task", "", "1"]),
            ("task-a--b-0", &["task", "a", "", "b", "0"]),
            ("task-foo--1", &["task", "foo", "", "1"]),
        ];
        for &(input, expected) in cases {
            assert_eq!(split_dash(input), expected, "split_dash({input:?})");
        }
    }

    #[test]
    fn base64_decode_accepts_what_java_accepts() {
        let one_to_32: Vec<u8> = (1..=32).collect();
        let cases: &[(&str, &[u8])] = &[
            ("", &[]),
            ("AQID", &[1, 2, 3]),
            ("AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA=", &one_to_32),
            ("AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA", &one_to_32),
            ("AQ", &[1]),
            ("AQ==", &[1]),
            ("AQI", &[1, 2]),
            ("AQI=", &[1, 2]),
            ("QUI=", b"AB"),
            ("QQ==", b"A"),
            ("QR==", &[0x41]),
            ("QR", &[0x41]),
            ("QUJ=", b"AB"),
            ("+/+/", &[0xFB, 0xFF, 0xBF]),
            ("AQIDAQ==", &[1, 2, 3, 1]),
        ];
        for &(input, expected) in cases {
            assert_eq!(
                base64_decode(input).as_deref(),
                Ok(expected),
                "base64_decode({input:?})"
            );
        }
    }

    #[test]
    fn base64_decode_rejects_what_java_rejects() {
        // The positions are where Java's decoder stops; the crate reports its own, so only the
        // refusal is compared.
        let cases: &[(&str, usize)] = &[
            ("AQ=", 2),
            ("AQ=x", 2),
            ("A", 0),
            ("=", 0),
            ("==", 0),
            ("A=", 1),
            ("A==", 1),
            ("A===", 1),
            ("AQIDA", 4),
            ("AQIDA=", 5),
            ("AQID=", 4),
            ("AQID==", 4),
            ("QUI==", 4),
            ("AQ===", 4),
            ("AQ==AQ==", 4),
            ("AQ==\n", 4),
            ("QUI=A", 4),
            ("AQ-D", 2),
            ("AQ_D", 2),
            ("AQ D", 2),
            ("AQID\n", 4),
            ("AQID\r\nAQID", 4),
            (" AQID", 0),
            ("AQé=", 2),
            ("AQ😀", 2),
        ];
        for &(input, _java_position) in cases {
            assert!(
                base64_decode(input).is_err(),
                "base64_decode({input:?}) accepted"
            );
        }
    }

    #[test]
    fn base64_encode_known_values() {
        assert_eq!(base64_encode(b""), "");
        assert_eq!(base64_encode(b"A"), "QQ==");
        assert_eq!(base64_encode(b"AB"), "QUI=");
        assert_eq!(base64_encode(b"ABC"), "QUJD");
        assert_eq!(base64_encode(&[0xFB, 0xFF, 0xBF]), "+/+/");
        let one_to_32: Vec<u8> = (1..=32).collect();
        assert_eq!(
            base64_encode(&one_to_32),
            "AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA="
        );
    }

    #[test]
    fn base64_round_trips() {
        for len in 0..20u8 {
            let bytes: Vec<u8> = (0..len)
                .map(|i| i.wrapping_mul(97).wrapping_add(200))
                .collect();
            let encoded = base64_encode(&bytes);
            assert_eq!(encoded.len(), bytes.len().div_ceil(3) * 4);
            assert_eq!(base64_decode(&encoded), Ok(bytes.clone()), "{encoded}");
            let unpadded = encoded.trim_end_matches('=');
            assert_eq!(base64_decode(unpadded), Ok(bytes), "{unpadded}");
        }
    }
}
