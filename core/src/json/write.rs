//! Writing: compact JSON as Jackson's `UTF8JsonGenerator` writes it.

use alloc::string::String;
use core::fmt::Write as _;

use serde::ser::{SerializeMap, SerializeSeq};

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
/// A finite `Double` is written as Java's `Double.toString` (JDK 19 and later) would, see
/// [`java_double_to_string`]: `1.0`, `-0.0`, `3.14`, `1.0E20`, `2.5E-8`. That is always valid
/// JSON and always contains a `.`, so it reads back as the same `Double`, not a `Long`.
/// Non-finite values (NaN, ±infinity) are written as the strings `"NaN"`, `"Infinity"` and
/// `"-Infinity"`, as Jackson does by default (`WRITE_NAN_AS_STRINGS`).
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
        JsonValue::BigInteger(digits) => out.push_str(digits),
        JsonValue::Double(d) => {
            let d = d.get();
            if d.is_finite() {
                push_java_double(out, d);
            } else {
                write_str(out, &java_double_to_string(d));
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

/// Java's `Double.toString(d)` as of JDK 19 (JDK-4511638, Raffaello Giulietti's shortest
/// decimal algorithm), which is what Jackson writes for a `double`.
///
/// The digits are those of the shortest decimal that rounds to `d`; if several decimals of that
/// length round to `d`, the one closest to `d`, and of two equally close ones the one whose last
/// digit is even. These are the digits of Rust's shortest round-trip formatting except in two
/// cases, which this function corrects:
///
/// * an exact tie, where Rust picks the larger digit and Java the even one (`274211171985320.125`
///   is `2.7421117198532012E14` in Java, `2.7421117198532013e14` in Rust);
/// * a shortest decimal of a single digit, where Java instead picks the closest decimal of at
///   most two digits that still rounds to `d`. That only changes a few tiny subnormals
///   (`Double.MIN_VALUE` is `4.9E-324`, not `5.0E-324`; twice it is `9.9E-324`).
///
/// The layout:
///
/// * zero is `0.0` or `-0.0`;
/// * if 10<sup>-3</sup> ≤ |d| < 10<sup>7</sup>, plain decimal notation with at least one digit
///   after the point: `1.0`, `3.14`, `0.001`, `100.0`, `9999999.0`;
/// * otherwise computerized scientific notation: one digit, a point, at least one more digit,
///   `E` and the exponent, with `-` but never `+`: `1.0E7`, `1.0E-5`, `1.23456789123E8`,
///   `1.7976931348623157E308`;
/// * `NaN`, `Infinity` and `-Infinity` as in Java (which [`write_value`] writes as JSON strings,
///   as Jackson does).
///
/// JDK 18 and earlier used a different algorithm that sometimes printed more digits than needed
/// (JDK 17 prints `2e23` as `1.9999999999999998E23` and `1e23` as `9.999999999999999E22`, where
/// JDK 19+ prints `2.0E23` and `1.0E23`); this function follows JDK 19+.
pub fn java_double_to_string(d: f64) -> String {
    let mut out = String::new();
    if d.is_nan() {
        out.push_str("NaN");
    } else if d.is_infinite() {
        out.push_str(if d > 0.0 { "Infinity" } else { "-Infinity" });
    } else {
        push_java_double(&mut out, d);
    }
    out
}

/// A positive decimal `d₀.d₁d₂… × 10^exponent` of at most 17 digits, as digit values.
#[derive(Clone, Copy)]
struct SciDecimal {
    /// Significant digits (0 to 9), most significant first; `len` of them are used.
    digits: [u8; 17],
    /// Number of digits used, 1 to 17.
    len: usize,
    /// Decimal exponent of the first digit.
    exponent: i32,
}

impl SciDecimal {
    /// Parses Rust's `{:e}` / `{:.1e}` output for a non-negative finite `f64`, e.g. `1.25e-7`,
    /// `5e-324`, `0e0`. Drops trailing zero digits (keeping at least one).
    fn parse(text: &str) -> Option<Self> {
        let (mantissa, exponent) = text.split_once('e')?;
        let exponent = exponent.parse::<i32>().ok()?;
        let mut digits = [0; 17];
        let mut len = 0;
        for b in mantissa.bytes().filter(|&b| b != b'.') {
            if !b.is_ascii_digit() {
                return None;
            }
            *digits.get_mut(len)? = b - b'0';
            len += 1;
        }
        while len > 1 && digits.get(len - 1) == Some(&0) {
            len -= 1;
        }
        (len > 0).then_some(Self {
            digits,
            len,
            exponent,
        })
    }

    /// The used digits.
    fn digits(&self) -> &[u8] {
        self.digits.get(..self.len).unwrap_or_default()
    }

    /// The digits as an integer (at most 17 digits, so it fits).
    fn significand(&self) -> u64 {
        self.digits()
            .iter()
            .fold(0, |acc, &digit| acc * 10 + u64::from(digit))
    }

    /// The same decimal with its last digit replaced by `digit`.
    fn with_last_digit(mut self, digit: u8) -> Self {
        if let Some(last) = self.digits.get_mut(self.len - 1) {
            *last = digit;
        }
        self
    }

    /// Whether this decimal, read back as an `f64`, is `x`. Uses `scratch` as a buffer.
    fn reads_as(&self, x: f64, scratch: &mut String) -> bool {
        scratch.clear();
        scratch.extend(self.digits().iter().map(|&digit| char::from(b'0' + digit)));
        let _ = write!(
            scratch,
            "e{}",
            i64::from(self.exponent) + 1 - self.len as i64
        );
        scratch.parse::<f64>() == Ok(x)
    }
}

/// Whether the positive finite `x` equals `c × 10^p` exactly.
fn equals_decimal(x: f64, c: u64, p: i32) -> bool {
    /// Splits `n` into its odd part and its power of two; `None` for 0.
    fn odd_and_twos(n: u128) -> Option<(u128, i64)> {
        (n != 0).then(|| (n >> n.trailing_zeros(), i64::from(n.trailing_zeros())))
    }
    let bits = x.to_bits();
    let biased = i64::try_from((bits >> 52) & 0x7ff).unwrap_or(0);
    let fraction = bits & ((1 << 52) - 1);
    // x = m × 2^q.
    let (m, q) = if biased == 0 {
        (fraction, -1074)
    } else {
        (fraction | (1 << 52), biased - 1075)
    };
    let five_pow = |k: u32| 5u128.checked_pow(k);
    // Compare the odd parts and the powers of two of both sides. An overflow means an odd part
    // beyond 2^128, which the other side (below 2^64) cannot match.
    let sides = if p >= 0 {
        // m × 2^q == (c × 5^p) × 2^p
        let lhs = odd_and_twos(u128::from(m)).map(|(odd, twos)| (odd, twos + q));
        let rhs = five_pow(p.unsigned_abs())
            .and_then(|f| f.checked_mul(u128::from(c)))
            .and_then(odd_and_twos)
            .map(|(odd, twos)| (odd, twos + i64::from(p)));
        (lhs, rhs)
    } else {
        // (m × 5^k) × 2^(q + k) == c, with k = -p
        let k = p.unsigned_abs();
        let lhs = five_pow(k)
            .and_then(|f| f.checked_mul(u128::from(m)))
            .and_then(odd_and_twos)
            .map(|(odd, twos)| (odd, twos + q + i64::from(k)));
        (lhs, odd_and_twos(u128::from(c)))
    };
    matches!(sides, (Some(lhs), Some(rhs)) if lhs == rhs)
}

/// Java's choice among the decimals that round to the positive finite `x`, given Rust's
/// shortest one. `scratch` is a buffer.
fn java_decimal(x: f64, shortest: SciDecimal, scratch: &mut String) -> SciDecimal {
    let last = shortest.digits().last().copied().unwrap_or(0);
    if shortest.len == 1 {
        // Java's rule for a one-digit shortest decimal: the closest decimal of at most two
        // digits that still rounds to `x`. `{:.1e}` is `x` correctly rounded to two digits.
        scratch.clear();
        let _ = write!(scratch, "{x:.1e}");
        if let Some(two) = SciDecimal::parse(scratch) {
            if two.reads_as(x, scratch) {
                return two;
            }
        }
    } else if last % 2 == 1 {
        // An odd last digit may have won a tie that Java gives to the even neighbour. The
        // neighbours ending in 0 are shorter decimals, so cannot round to `x`.
        let n = u32::try_from(shortest.len).unwrap_or(u32::MAX);
        let p = shortest.exponent.saturating_sub_unsigned(n);
        for neighbour in [last - 1, last + 1] {
            if neighbour == 0 || neighbour == 10 {
                continue;
            }
            // The midpoint between `shortest` and the neighbour, one digit longer.
            let midpoint = shortest.significand() * 10 + u64::from(last + neighbour) * 5
                - u64::from(last) * 10;
            let candidate = shortest.with_last_digit(neighbour);
            if equals_decimal(x, midpoint, p) && candidate.reads_as(x, scratch) {
                return candidate;
            }
        }
    }
    shortest
}

/// Appends `Double.toString(d)` for a finite `d`; see [`java_double_to_string`].
fn push_java_double(out: &mut String, d: f64) {
    if d.is_sign_negative() {
        out.push('-');
    }
    let x = d.abs();
    // Rust's `{:e}` gives the shortest round-trip digits, closest to `x` among the shortest.
    let mut scratch = String::new();
    let _ = write!(scratch, "{x:e}");
    let Some(shortest) = SciDecimal::parse(&scratch) else {
        // Unreachable: `{:e}` of a finite `f64` always parses.
        let _ = write!(out, "{x:?}");
        return;
    };
    let decimal = java_decimal(x, shortest, &mut scratch);
    let digits = decimal.digits();
    let exponent = decimal.exponent;
    let push_digits = |out: &mut String, digits: &[u8]| {
        out.extend(digits.iter().map(|&digit| char::from(b'0' + digit)));
    };
    if (-3..7).contains(&exponent) {
        if exponent >= 0 {
            // `exponent` is 0..=6 here.
            let int_len = exponent.unsigned_abs() as usize + 1;
            let (int_part, frac_part) = digits.split_at(int_len.min(digits.len()));
            push_digits(out, int_part);
            for _ in int_part.len()..int_len {
                out.push('0');
            }
            out.push('.');
            if frac_part.is_empty() {
                out.push('0');
            } else {
                push_digits(out, frac_part);
            }
        } else {
            out.push_str("0.");
            for _ in 1..exponent.unsigned_abs() {
                out.push('0');
            }
            push_digits(out, digits);
        }
    } else {
        let (first, rest) = digits.split_at(1.min(digits.len()));
        push_digits(out, first);
        out.push('.');
        if rest.is_empty() {
            out.push('0');
        } else {
            push_digits(out, rest);
        }
        let _ = write!(out, "E{exponent}");
    }
}

/// The newtype name [`Natural`] serializes a non-finite double under (its text inside), so a
/// serializer other than a JSON writer can tell it from a string.
pub const JAVA_DOUBLE: &str = "JavaDouble";

/// Serializes a [`JsonValue`] as natural JSON, so that e.g. a `serde_json` serializer writes
/// ordinary JSON: `Null` → unit, `Bool` → bool, `Long` → `i64`, `Double` → `f64` (a non-finite
/// one as the string Jackson writes, `"NaN"`, `"Infinity"`, `"-Infinity"`, wrapped in the
/// newtype [`JAVA_DOUBLE`], which JSON writers print as the string), `String` → str,
/// `Array` → sequence, `Object` → map (in `BTreeMap` order).

#[derive(Debug, Clone, Copy)]
pub struct Natural<'a>(pub &'a JsonValue);

impl serde::Serialize for Natural<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            JsonValue::Null => serializer.serialize_unit(),
            JsonValue::Bool(b) => serializer.serialize_bool(*b),
            JsonValue::Long(n) => serializer.serialize_i64(*n),
            JsonValue::Double(d) if d.get().is_finite() => serializer.serialize_f64(d.get()),
            // JSON has no non-finite numbers: Jackson (so Java's REST answers) writes them as
            // the strings `"NaN"`, `"Infinity"` and `"-Infinity"`.
            // As the newtype `JAVA_DOUBLE` around the text: JSON writers print the text, and a
            // serializer that builds values can still tell the double from a string.
            JsonValue::Double(d) => {
                serializer.serialize_newtype_struct(JAVA_DOUBLE, &java_double_to_string(d.get()))
            }
            // Never in a state (only in a request, which validation refuses): its digits.
            JsonValue::BigInteger(digits) => serializer.serialize_str(digits),
            JsonValue::String(s) => serializer.serialize_str(s),
            JsonValue::Array(items) => {
                let mut seq = serializer.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(&Natural(item))?;
                }
                seq.end()
            }
            JsonValue::Object(members) => {
                let mut map = serializer.serialize_map(Some(members.len()))?;
                for (name, value) in members {
                    map.serialize_entry(name, &Natural(value))?;
                }
                map.end()
            }
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

    #[test]
    fn natural_json_writes_non_finite_doubles_as_jackson_does() {
        let value = JsonValue::Array(vec![
            JsonValue::Double(JavaDouble::new(f64::INFINITY)),
            JsonValue::Double(JavaDouble::new(f64::NEG_INFINITY)),
            JsonValue::Double(JavaDouble::new(f64::NAN)),
            JsonValue::Double(JavaDouble::new(1.5)),
        ]);
        let text = serde_json::to_string(&Natural(&value)).unwrap();
        assert_eq!(text, r#"["Infinity","-Infinity","NaN",1.5]"#);
    }

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
    #[allow(clippy::approx_constant)] // 3.14 is a formatting example, not an approximation of π.
    fn java_double_to_string_examples() {
        // Every expected string checked against `Double.toString` on JDK 25.
        let cases: &[(f64, &str)] = &[
            (1.0, "1.0"),
            (3.14, "3.14"),
            (0.001, "0.001"),
            (9_999_999.0, "9999999.0"),
            (100.0, "100.0"),
            (1e7, "1.0E7"),
            (1e20, "1.0E20"),
            (1e-5, "1.0E-5"),
            (1.234_567_891_23e8, "1.23456789123E8"),
            (f64::from_bits(1), "4.9E-324"),
            (f64::MAX, "1.7976931348623157E308"),
            (0.0, "0.0"),
            (-0.0, "-0.0"),
            (2e23, "2.0E23"),
            (1e23, "1.0E23"),
            (2e-3, "0.002"),
            (f64::MIN_POSITIVE, "2.2250738585072014E-308"),
            (9.999_999_999_999_998e-4, "9.999999999999998E-4"),
            (9_999_999.999_999_998, "9999999.999999998"),
            (123_456.789, "123456.789"),
            (1e-4, "1.0E-4"),
            (0.01, "0.01"),
            (1_234_567.0, "1234567.0"),
            (12_345_678.0, "1.2345678E7"),
            (-1.5, "-1.5"),
            (-1e-7, "-1.0E-7"),
            (1e300, "1.0E300"),
            (1e16, "1.0E16"),
            (1e15, "1.0E15"),
            (2.5e-8, "2.5E-8"),
            (123_456.0, "123456.0"),
            (0.1, "0.1"),
            (f64::MIN, "-1.7976931348623157E308"),
        ];
        for &(x, expected) in cases {
            assert_eq!(java_double_to_string(x), expected, "{x:e}");
        }
        assert_eq!(java_double_to_string(f64::NAN), "NaN");
        assert_eq!(java_double_to_string(f64::INFINITY), "Infinity");
        assert_eq!(java_double_to_string(f64::NEG_INFINITY), "-Infinity");
    }

    #[test]
    fn java_double_to_string_tiny_subnormals() {
        // Bit patterns and `Double.toString` from JDK 25. Where the shortest decimal has one
        // digit (5E-324, 1E-323, 5E-323, ...), Java prints the closest two-digit decimal.
        let cases: &[(u64, &str)] = &[
            (0x0000_0000_0000_0001, "4.9E-324"),
            (0x0000_0000_0000_0002, "9.9E-324"),
            (0x0000_0000_0000_0003, "1.5E-323"),
            (0x0000_0000_0000_0004, "2.0E-323"),
            (0x0000_0000_0000_0005, "2.5E-323"),
            (0x0000_0000_0000_0006, "3.0E-323"),
            (0x0000_0000_0000_0007, "3.5E-323"),
            (0x0000_0000_0000_0008, "4.0E-323"),
            (0x0000_0000_0000_0009, "4.4E-323"),
            (0x0000_0000_0000_000a, "4.9E-323"),
            (0x0000_0000_0000_000b, "5.4E-323"),
            (0x0000_0000_0000_000c, "5.9E-323"),
            (0x0000_0000_0000_000d, "6.4E-323"),
            (0x0000_0000_0000_000e, "6.9E-323"),
            (0x0000_0000_0000_000f, "7.4E-323"),
            (0x0000_0000_0000_0010, "7.9E-323"),
            (0x0000_0000_0000_0011, "8.4E-323"),
            (0x0000_0000_0000_0012, "8.9E-323"),
            (0x0000_0000_0000_0013, "9.4E-323"),
            (0x0000_0000_0000_0014, "9.9E-323"),
            (0x0000_0000_0000_0015, "1.04E-322"),
            (0x0000_0000_0000_0016, "1.1E-322"),
            (0x0000_0000_0000_0064, "4.94E-322"),
            (0x0000_0000_0000_03e8, "4.94E-321"),
            (0x000f_ffff_ffff_ffff, "2.225073858507201E-308"),
            (0x0010_0000_0000_0000, "2.2250738585072014E-308"),
        ];
        for &(bits, expected) in cases {
            assert_eq!(java_double_to_string(f64::from_bits(bits)), expected);
            assert_eq!(
                java_double_to_string(-f64::from_bits(bits)),
                alloc::format!("-{expected}")
            );
        }
    }

    #[test]
    fn java_double_to_string_breaks_ties_to_even() {
        // Values exactly halfway between two shortest candidates: Rust's `{:e}` picks the
        // larger, Java (JDK 25, checked) the even one. `0x42ef2c986ffcf504` is exactly
        // 274211171985320.125.
        let cases: &[(u64, &str)] = &[
            (0x42ef_2c98_6ffc_f504, "2.7421117198532012E14"),
            (0x428b_4848_64c1_9740, "3.7496582697469062E12"),
            (0xc2d2_e95f_448d_aca8, "-8.317414003269062E13"),
            (0x431b_a39a_a774_3691, "1.9449272502225002E15"),
            (0x431b_a39a_a774_368f, "1.9449272502224998E15"),
            (0x42a0_90e3_9a1d_4120, "9.107239931552562E12"),
            // A tie that Rust already breaks to the even digit.
            (0x4202_302c_d042_7000, "9.764706824304688E9"),
        ];
        for &(bits, expected) in cases {
            assert_eq!(java_double_to_string(f64::from_bits(bits)), expected);
        }
    }

    #[test]
    fn equals_decimal_is_exact() {
        assert!(equals_decimal(0.5, 5, -1));
        assert!(!equals_decimal(0.1, 1, -1));
        assert!(equals_decimal(1e22, 1, 22));
        assert!(!equals_decimal(1e23, 1, 23));
        assert!(equals_decimal(1024.0, 1024, 0));
        assert!(equals_decimal(1024.0, 1_024_000, -3));
        assert!(equals_decimal(3.0, 3, 0));
        assert!(!equals_decimal(3.0, 31, -1));
        assert!(equals_decimal(
            f64::from_bits(0x42ef_2c98_6ffc_f504),
            274_211_171_985_320_125,
            -3
        ));
        assert!(!equals_decimal(
            f64::from_bits(0x42ef_2c98_6ffc_f504),
            274_211_171_985_320_120,
            -3
        ));
        assert!(!equals_decimal(f64::from_bits(1), 5, -324));
        assert!(!equals_decimal(f64::MAX, 17_976_931_348_623_157, 292));
        assert!(equals_decimal(1.0 / 1_048_576.0, 95_367_431_640_625, -20));
    }

    #[test]
    fn java_double_to_string_matches_jdk_on_random_values() {
        // Generated on JDK 25: `Double.toString(Double.longBitsToDouble(bits))`. The first
        // half are raw pseudo-random bit patterns, the second half have exponents in the
        // plain-notation range, a third of them rounded to three decimals.
        let cases: &[(u64, &str)] = &[
            (0x78dc_9d8b_3d1c_c268, "1.5480179122499093E274"),
            (0x3765_a806_006f_4597, "7.768831538443401E-42"),
            (0xe188_6fbb_935f_a5da, "-6.871094291431805E161"),
            (0x9c3a_48ce_9260_cea1, "-1.0627242699973108E-172"),
            (0xe0f9_7869_c8a2_b29c, "-1.3987911687496372E159"),
            (0x59f0_49c4_3768_4abb, "1.722780633595131E125"),
            (0x593c_5f3b_74a6_692e, "7.326359604958008E121"),
            (0x002b_58fb_e69b_d065, "7.60630197975802E-308"),
            (0xe3d5_777d_13f6_3e10, "-8.295906971604649E172"),
            (0x0d0c_6af1_81ca_5a1f, "8.128739460034257E-246"),
            (0x53a1_1850_d2b9_b9c2, "7.131770044880004E94"),
            (0x5e15_3296_db1e_6669, "1.6543405489336727E145"),
            (0x59df_da45_57aa_98c4, "8.422545982875955E124"),
            (0x46a5_9646_1c41_97c3, "2.1891826208209425E32"),
            (0x74c0_2258_b1b7_eb96, "2.36577190937183E254"),
            (0xe18c_f09b_18e9_54ad, "-8.137372815382827E161"),
            (0xc349_4378_be1e_36b8, "-1.422212056510808E16"),
            (0xa5c5_dc35_d8f4_67a7, "-1.0091736411268788E-126"),
            (0xd164_20f8_41fc_92aa, "-1.2219865782791271E84"),
            (0xa009_a34c_b281_9f31, "-2.3902014027699847E-154"),
            (0xf161_4cd9_d9ae_cbec, "-1.40817843633734E238"),
            (0xb26e_708a_b2a7_6dcb, "-9.032544978611292E-66"),
            (0x6a56_8b3b_9974_82fe, "1.76703725601529E204"),
            (0x3840_8c73_63b4_89f5, "9.726413891720656E-38"),
            (0x410d_57f1_0c49_ba5e, "240382.131"),
            (0x4090_4a6e_ce53_d613, "1042.6082089518939"),
            (0xc038_4105_1066_8fa6, "-24.253983521499002"),
            (0xbf50_624d_d2f1_a9fc, "-0.001"),
            (0x3f5c_8ea8_a4e0_5948, "0.0017429968752416692"),
            (0xc01b_1bac_9609_eaf7, "-6.77702555118116"),
            (0xc07a_f635_3f7c_ed91, "-431.388"),
            (0x3f98_f14d_fe83_3301, "0.024358004245004675"),
            (0xc12f_9825_c659_f77c, "-1035282.8874051417"),
            (0x3fcb_c6a7_ef9d_b22d, "0.217"),
            (0xc0d0_522e_931f_790e, "-16712.727729671686"),
            (0xc169_a163_0e23_bac5, "-1.343772044186152E7"),
            (0x4021_6c8b_4395_8106, "8.712"),
            (0xbf3b_f421_a181_8b7f, "-4.2653866831281884E-4"),
            (0x405b_1baa_844c_07a2, "108.43228251862323"),
            (0x412e_4218_79db_22d1, "991500.238"),
            (0xbfae_8eaf_3493_d9a4, "-0.05968234555068655"),
            (0x4004_8bde_ead1_1f23, "2.5682962746685845"),
            (0x3f50_624d_d2f1_a9fc, "0.001"),
            (0x3f51_58ba_16a7_6b0d, "0.001058751799624505"),
            (0x3f72_7df4_2b81_c598, "0.0045146501434926364"),
            (0x40a6_35e8_f5c2_8f5c, "2842.955"),
            (0x4144_ac26_c846_fc8a, "2709581.5646663355"),
            (0xc03e_8c37_577c_5b91, "-30.547719447956812"),
        ];
        for &(bits, expected) in cases {
            assert_eq!(java_double_to_string(f64::from_bits(bits)), expected);
        }
    }

    #[test]
    fn java_double_to_string_round_trips() {
        // 1000 finite pseudo-random bit patterns from an LCG (Knuth's MMIX constants).
        let mut state: u64 = 0x2545_f491_4f6c_dd1d;
        let mut checked = 0;
        while checked < 1000 {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let x = f64::from_bits(state);
            if !x.is_finite() {
                continue;
            }
            checked += 1;
            let text = java_double_to_string(x);
            assert_eq!(
                text.parse::<f64>().map(f64::to_bits),
                Ok(x.to_bits()),
                "{text}"
            );
            assert!(text.contains('.') && !text.contains(['+', 'e']), "{text}");
            let plain = (1e-3..1e7).contains(&x.abs());
            assert_eq!(!text.contains('E'), plain, "{text}");
            // And through the JSON writer and reader.
            let json = v(&double(x));
            assert_eq!(json, text);
            assert_eq!(parse(json.as_bytes()), Ok(Some(double(x))), "{json}");
        }
    }

    #[test]
    fn write_value_doubles() {
        assert_eq!(v(&double(1.0)), "1.0");
        assert_eq!(v(&double(1.5)), "1.5");
        assert_eq!(v(&double(-0.0)), "-0.0");
        assert_eq!(v(&double(100.0)), "100.0");
        assert_eq!(v(&double(1e300)), "1.0E300");
        assert_eq!(v(&double(2.5e-8)), "2.5E-8");
        assert_eq!(v(&double(f64::from_bits(1))), "4.9E-324");
        assert_eq!(v(&double(f64::MAX)), "1.7976931348623157E308");
        // Java would write NaN / Infinity / -Infinity, which is not JSON.
        assert_eq!(v(&double(f64::NAN)), "\"NaN\"");
        assert_eq!(v(&double(f64::INFINITY)), "\"Infinity\"");
        assert_eq!(v(&double(f64::NEG_INFINITY)), "\"-Infinity\"");
        for x in [
            1.0,
            1e300,
            1e16,
            2.5e-8,
            123456.0,
            5e-324,
            -1e-7,
            1.0e15,
            1e7,
            9_999_999.0,
        ] {
            let text = v(&double(x));
            assert!(text.contains('.'), "{text}");
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
