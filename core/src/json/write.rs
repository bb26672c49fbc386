//! Writing: compact JSON as Jackson's `UTF8JsonGenerator` writes it.

use alloc::string::String;
use core::fmt::Write as _;

use super::value::JsonValue;

/// Uppercase hex digits, as Jackson writes them in `\uXXXX` escapes.
const HEX: &[u8; 16] = b"0123456789ABCDEF";

/// Appends `s` as a quoted JSON string, escaped exactly like Jackson's UTF-8 generator:
///
/// * `"` → `\"` and `\` → `\\`; `/` is not escaped;
/// * U+0008 → `\b`, U+0009 → `\t`, U+000A → `\n`, U+000C → `\f`, U+000D → `\r`;
/// * every other character below U+0020 → `\u00XX` with uppercase hex (`\u001F`);
/// * DEL and all other BMP characters (é, U+2028, U+FFFD, …) are written raw as UTF-8;
/// * supplementary characters (U+10000 and up) → their UTF-16 surrogate pair as two uppercase
///   `\uXXXX` escapes (😀 → `\uD83D\uDE00`), because Jackson escapes each surrogate `char`.
pub fn write_str(out: &mut String, s: &str) {
    out.reserve(s.len() + 2);
    out.push('"');
    let bytes = s.as_bytes();
    // Start of the pending run of characters that are copied unchanged.
    let mut plain = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let short = match b {
            b'"' => b'"',
            b'\\' => b'\\',
            0x08 => b'b',
            0x09 => b't',
            0x0A => b'n',
            0x0C => b'f',
            0x0D => b'r',
            0x00..=0x1F => 0,
            // The lead byte of a 4-byte sequence: a supplementary character.
            0xF0..=0xFF => 1,
            _ => continue,
        };
        out.push_str(s.get(plain..i).unwrap_or_default());
        match short {
            0 => push_unicode_escape(out, u16::from(b)),
            1 => {
                let c = s.get(i..).and_then(|rest| rest.chars().next());
                let mut units = [0u16; 2];
                for &unit in c.map_or(&[][..], |c| &*c.encode_utf16(&mut units)) {
                    push_unicode_escape(out, unit);
                }
                plain = i + c.map_or(1, char::len_utf8);
                continue;
            }
            _ => {
                out.push('\\');
                out.push(char::from(short));
            }
        }
        plain = i + 1;
    }
    out.push_str(s.get(plain..).unwrap_or_default());
    out.push('"');
}

/// Appends `\uXXXX` with uppercase hex digits.
fn push_unicode_escape(out: &mut String, unit: u16) {
    out.push_str("\\u");
    for shift in [12u16, 8, 4, 0] {
        let digit = HEX
            .get(usize::from((unit >> shift) & 0xF))
            .copied()
            .unwrap_or(b'0');
        out.push(char::from(digit));
    }
}

/// Appends `v` as compact JSON (no whitespace), the way Jackson writes a tree: object members in
/// `BTreeMap` (sorted) order, strings escaped by [`write_str`], `Long` in decimal.
///
/// A `Double` is written as Rust's shortest round-trip representation (`{:?}`), which is not
/// necessarily what Java's `Double.toString` would print (`1e300` instead of `1.0E300`, `1e16`
/// instead of `1.0E16`) but always reads back as the same `f64` and is always valid JSON: a
/// finite value always contains `.` or `e` (`1.0`, `-0.0`, `2.5e-8`), so it reads back as a
/// `Double`, not a `Long`. Non-finite values (NaN, ±infinity), which JSON cannot represent, are
/// written as `null`.
///
/// Recursion depth equals the nesting depth of `v`; values produced by
/// [`parse`](super::read::parse) are at most 1000 deep.
pub fn write_value(out: &mut String, v: &JsonValue) {
    match v {
        JsonValue::Null => out.push_str("null"),
        JsonValue::Bool(true) => out.push_str("true"),
        JsonValue::Bool(false) => out.push_str("false"),
        JsonValue::Long(n) => {
            // Writing to a String cannot fail.
            let _ = write!(out, "{n}");
        }
        JsonValue::Double(d) => {
            let d = d.get();
            if d.is_finite() {
                let start = out.len();
                let _ = write!(out, "{d:?}");
                let written = out.get(start..).unwrap_or_default();
                if !written.contains(['.', 'e', 'E']) {
                    out.push_str(".0");
                }
            } else {
                out.push_str("null");
            }
        }
        JsonValue::String(s) => write_str(out, s),
        JsonValue::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(out, item);
            }
            out.push(']');
        }
        JsonValue::Object(members) => {
            out.push('{');
            for (i, (name, value)) in members.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_str(out, name);
                out.push(':');
                write_value(out, value);
            }
            out.push('}');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::read::parse;
    use crate::json::value::{JavaDouble, JsonObject};
    use alloc::string::ToString;
    use alloc::vec;

    fn s(text: &str) -> String {
        let mut out = String::new();
        write_str(&mut out, text);
        out
    }

    fn v(value: &JsonValue) -> String {
        let mut out = String::new();
        write_value(&mut out, value);
        out
    }

    fn double(x: f64) -> JsonValue {
        JsonValue::Double(JavaDouble::new(x))
    }

    fn obj(members: &[(&str, JsonValue)]) -> JsonValue {
        JsonValue::Object(
            members
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect::<JsonObject>(),
        )
    }

    #[test]
    fn plain_strings() {
        assert_eq!(s(""), r#""""#);
        assert_eq!(s("abc"), r#""abc""#);
        assert_eq!(s("a b"), r#""a b""#);
    }

    #[test]
    fn quote_and_backslash() {
        assert_eq!(s("x\"y"), r#""x\"y""#);
        assert_eq!(s("a\\b"), r#""a\\b""#);
        assert_eq!(s("\"\\\""), r#""\"\\\"""#);
    }

    #[test]
    fn slash_is_not_escaped() {
        assert_eq!(s("a/b</script>"), r#""a/b</script>""#);
    }

    #[test]
    fn short_escapes() {
        assert_eq!(s("\u{8}\t\n\u{c}\r"), r#""\b\t\n\f\r""#);
    }

    #[test]
    fn other_control_characters_use_uppercase_hex() {
        assert_eq!(s("\u{0}"), r#""\u0000""#);
        assert_eq!(s("\u{1}"), r#""\u0001""#);
        assert_eq!(s("\u{b}"), r#""\u000B""#);
        assert_eq!(s("\u{e}"), r#""\u000E""#);
        assert_eq!(s("\u{1f}"), r#""\u001F""#);
        assert_eq!(s("a\u{1f}b\u{1a}c"), r#""a\u001Fb\u001Ac""#);
    }

    #[test]
    fn del_and_non_ascii_bmp_are_raw() {
        assert_eq!(s("\u{7f}"), "\"\u{7f}\"");
        assert_eq!(s("\u{80}\u{9f}"), "\"\u{80}\u{9f}\"");
        assert_eq!(s("é"), "\"é\"");
        assert_eq!(s("caf\u{e9} \u{20ac}"), "\"caf\u{e9} \u{20ac}\"");
        assert_eq!(s("\u{2028}\u{2029}"), "\"\u{2028}\u{2029}\"");
        assert_eq!(
            s("\u{fffd}\u{ffff}\u{feff}"),
            "\"\u{fffd}\u{ffff}\u{feff}\""
        );
    }

    #[test]
    fn supplementary_characters_are_escaped_surrogate_pairs() {
        assert_eq!(s("😀"), r#""\uD83D\uDE00""#);
        assert_eq!(s("a😀b"), r#""a\uD83D\uDE00b""#);
        assert_eq!(s("\u{10000}"), r#""\uD800\uDC00""#);
        assert_eq!(s("\u{10FFFF}"), r#""\uDBFF\uDFFF""#);
        assert_eq!(s("é😀é\n😀"), "\"é\\uD83D\\uDE00é\\n\\uD83D\\uDE00\"");
    }

    #[test]
    fn scalars() {
        assert_eq!(v(&JsonValue::Null), "null");
        assert_eq!(v(&JsonValue::Bool(true)), "true");
        assert_eq!(v(&JsonValue::Bool(false)), "false");
        assert_eq!(v(&JsonValue::Long(0)), "0");
        assert_eq!(v(&JsonValue::Long(-42)), "-42");
        assert_eq!(v(&JsonValue::Long(i64::MIN)), "-9223372036854775808");
        assert_eq!(v(&JsonValue::Long(i64::MAX)), "9223372036854775807");
    }

    #[test]
    fn doubles_are_valid_json_with_a_point_or_exponent() {
        assert_eq!(v(&double(1.0)), "1.0");
        assert_eq!(v(&double(1.5)), "1.5");
        assert_eq!(v(&double(-0.0)), "-0.0");
        assert_eq!(v(&double(0.1)), "0.1");
        assert_eq!(v(&double(100.0)), "100.0");
        assert_eq!(v(&double(1e300)), "1e300");
        assert_eq!(v(&double(1e16)), "1e16");
        assert_eq!(v(&double(2.5e-8)), "2.5e-8");
        assert_eq!(v(&double(f64::MAX)), "1.7976931348623157e308");
        assert_eq!(v(&double(f64::NAN)), "null");
        assert_eq!(v(&double(f64::INFINITY)), "null");
        assert_eq!(v(&double(f64::NEG_INFINITY)), "null");
        for x in [1.0, 1e300, 1e16, 2.5e-8, 123456.0, 5e-324, -1e-7, 1.0e15] {
            let text = v(&double(x));
            assert!(text.contains(['.', 'e']), "{text}");
            assert_eq!(parse(text.as_bytes()), Ok(Some(double(x))), "{text}");
        }
    }

    #[test]
    fn containers_are_compact_and_sorted() {
        assert_eq!(
            v(&obj(&[("a", JsonValue::String("x\"y".into()))])),
            r#"{"a":"x\"y"}"#
        );
        assert_eq!(v(&JsonValue::Array(vec![])), "[]");
        assert_eq!(v(&obj(&[])), "{}");
        let value = obj(&[
            (
                "b",
                JsonValue::Array(vec![JsonValue::Long(1), JsonValue::Null, double(2.5)]),
            ),
            ("a", obj(&[("z\n", JsonValue::Bool(true))])),
            ("😀", JsonValue::String("/".into())),
        ]);
        assert_eq!(
            v(&value),
            r#"{"a":{"z\n":true},"b":[1,null,2.5],"\uD83D\uDE00":"/"}"#
        );
    }

    #[test]
    fn round_trip() {
        let values = [
            JsonValue::Null,
            JsonValue::Bool(true),
            JsonValue::Long(i64::MIN),
            double(0.1),
            double(-1e-300),
            double(1e300),
            JsonValue::String("\u{0}\u{1f}\u{7f}\"\\/\u{8}\u{c}\n\r\té\u{2028}😀\u{fffd}".into()),
            obj(&[
                (
                    "connector.class",
                    JsonValue::String("org.example.Sink".into()),
                ),
                ("tasks.max", JsonValue::String("3".into())),
                (
                    "",
                    JsonValue::Array(vec![JsonValue::Long(-1), double(2.5), obj(&[])]),
                ),
                (
                    "n\u{1}😀",
                    JsonValue::Array(vec![JsonValue::Array(vec![JsonValue::Null])]),
                ),
            ]),
        ];
        for value in values {
            let text = v(&value);
            assert_eq!(parse(text.as_bytes()), Ok(Some(value.clone())), "{text}");
        }
    }

    #[test]
    fn negative_zero_reads_back_as_positive_zero() {
        // Like Java Connect: the reader goes through BigDecimal, which has no negative zero.
        let text = v(&double(-0.0));
        assert_eq!(parse(text.as_bytes()), Ok(Some(double(0.0))));
    }
}
