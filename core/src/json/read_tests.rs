//! Tests of the Jackson-compatible reader.
use super::*;
use alloc::collections::BTreeMap;
use alloc::string::ToString;
use alloc::vec;

fn ok(input: &[u8]) -> JsonValue {
    match parse(input) {
        Ok(Some(v)) => v,
        other => panic!("{:?}: {other:?}", String::from_utf8_lossy(input)),
    }
}

fn err(input: &[u8]) -> JsonError {
    match parse(input) {
        Err(e) => e,
        other => panic!(
            "{:?} should fail: {other:?}",
            String::from_utf8_lossy(input)
        ),
    }
}

fn kind(input: &[u8]) -> JsonErrorKind {
    err(input).kind
}

fn long(n: i64) -> JsonValue {
    JsonValue::Long(n)
}

fn double(v: f64) -> JsonValue {
    JsonValue::Double(JavaDouble::new(v))
}

fn string(s: &str) -> JsonValue {
    JsonValue::String(s.to_string())
}

fn obj(members: &[(&str, JsonValue)]) -> JsonValue {
    JsonValue::Object(
        members
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect::<BTreeMap<_, _>>(),
    )
}

fn bits(v: &JsonValue) -> u64 {
    match v {
        JsonValue::Double(d) => d.get().to_bits(),
        other => panic!("not a double: {other:?}"),
    }
}

// ---- missing node, null, BOM ----

#[test]
fn empty_and_whitespace_are_missing() {
    assert_eq!(parse(b""), Ok(None));
    assert_eq!(parse(b" "), Ok(None));
    assert_eq!(parse(b" \t\r\n  \n"), Ok(None));
    assert_eq!(parse(b"\xEF\xBB\xBF "), Ok(None));
    assert_eq!(parse(b"\xEF\xBB\xBF\r\n\t "), Ok(None));
}

#[test]
fn other_whitespace_is_rejected() {
    assert_eq!(kind(b"\x0B"), JsonErrorKind::UnexpectedByte(0x0B));
    assert_eq!(kind(b"\x0C1"), JsonErrorKind::UnexpectedByte(0x0C));
    assert_eq!(kind(b"\xC2\xA01"), JsonErrorKind::UnexpectedByte(0xC2));
    assert_eq!(kind(b"[1,\x0B2]"), JsonErrorKind::UnexpectedByte(0x0B));
}

#[test]
fn literal_null_is_not_missing() {
    assert_eq!(parse(b"null"), Ok(Some(JsonValue::Null)));
    assert_eq!(parse(b"  null  "), Ok(Some(JsonValue::Null)));
}

#[test]
fn bom_is_skipped() {
    assert_eq!(ok(b"\xEF\xBB\xBF{\"a\":1}"), obj(&[("a", long(1))]));
    assert_eq!(ok(b"\xEF\xBB\xBF1"), long(1));
    assert_eq!(ok(b"\xEF\xBB\xBF null"), JsonValue::Null);
}

#[test]
fn bom_needs_four_bytes_and_only_one_is_skipped() {
    // Jackson only looks for a BOM when at least 4 bytes are available.
    assert_eq!(
        err(b"\xEF\xBB\xBF"),
        JsonError::new(0, JsonErrorKind::UnexpectedByte(0xEF))
    );
    assert_eq!(
        kind(b"\xEF\xBB\xBF\xEF\xBB\xBF{}"),
        JsonErrorKind::UnexpectedByte(0xEF)
    );
    // A BOM not at the start is not whitespace.
    assert_eq!(
        kind(b" \xEF\xBB\xBF{}"),
        JsonErrorKind::UnexpectedByte(0xEF)
    );
}

#[test]
fn utf16_input_is_rejected() {
    assert!(parse(b"\xFE\xFF\x00{\x00}").is_err());
    assert!(parse(b"\x00{\x00}").is_err());
    assert!(parse(b"1\x00").is_err());
}

// ---- trailing content ----

#[test]
fn trailing_garbage_is_ignored() {
    assert_eq!(ok(br#"{"tasks":2} xyz"#), obj(&[("tasks", long(2))]));
    assert_eq!(ok(b"{}}"), obj(&[]));
    assert_eq!(ok(b"[]]"), JsonValue::Array(vec![]));
    assert_eq!(ok(b"{}{\"a\":"), obj(&[]));
    assert_eq!(ok(b"\"a\"b"), string("a"));
    assert_eq!(ok(b"\"a\"\xFF\x00"), string("a"));
    assert_eq!(ok(b"[1]\xFF"), JsonValue::Array(vec![long(1)]));
    assert_eq!(ok(b"null,"), JsonValue::Null);
    assert_eq!(ok(b"true]"), JsonValue::Bool(true));
    assert_eq!(ok(b"false}"), JsonValue::Bool(false));
    assert_eq!(ok(b"true:"), JsonValue::Bool(true));
    assert_eq!(ok(b"true x"), JsonValue::Bool(true));
    assert_eq!(ok(b"12 xyz"), long(12));
    assert_eq!(ok(b"12\n}"), long(12));
    assert_eq!(ok(b"1.5\t]"), double(1.5));
    assert_eq!(ok(b"1e2\r\n,"), double(100.0));
}

#[test]
fn top_level_number_needs_whitespace_after_it() {
    assert_eq!(
        err(b"123abc"),
        JsonError::new(3, JsonErrorKind::UnexpectedByte(b'a'))
    );
    assert_eq!(kind(b"123}"), JsonErrorKind::UnexpectedByte(b'}'));
    assert_eq!(kind(b"123,"), JsonErrorKind::UnexpectedByte(b','));
    assert_eq!(kind(b"123\""), JsonErrorKind::UnexpectedByte(b'"'));
    assert_eq!(kind(b"1.5x"), JsonErrorKind::UnexpectedByte(b'x'));
    assert_eq!(kind(b"1e5_"), JsonErrorKind::UnexpectedByte(b'_'));
    assert_eq!(kind(b"-0/"), JsonErrorKind::UnexpectedByte(b'/'));
    assert_eq!(kind(b"7\x00"), JsonErrorKind::UnexpectedByte(0));
    // Inside containers the normal grammar applies.
    assert_eq!(ok(b"[1]"), JsonValue::Array(vec![long(1)]));
    assert_eq!(ok(b"{\"a\":1}"), obj(&[("a", long(1))]));
    assert_eq!(kind(b"[1a]"), JsonErrorKind::UnexpectedByte(b'a'));
    assert_eq!(kind(b"{\"a\":1x}"), JsonErrorKind::UnexpectedByte(b'x'));
}

#[test]
fn literal_followed_by_identifier_character() {
    for input in [
        &b"truex"[..],
        b"true1",
        b"true_",
        b"true\x7F",
        b"nullnull",
        b"falsey",
        b"[truex]",
        b"{\"a\":nullx}",
        "true\u{e9}".as_bytes(),
        "null\u{20AC}".as_bytes(),
        b"true\xC0\x80", // overlong NUL: an identifier-ignorable character for Java
    ] {
        assert_eq!(kind(input), JsonErrorKind::InvalidLiteral, "{input:?}");
    }
    assert_eq!(ok("true\u{a0}".as_bytes()), JsonValue::Bool(true));
    assert_eq!(ok("true\u{2028}".as_bytes()), JsonValue::Bool(true));
    // Java truncates U+1F600 to the private-use char U+F600: not an identifier part.
    assert_eq!(ok("true\u{1F600}".as_bytes()), JsonValue::Bool(true));
    // Jackson only checks characters from '0' up: '$' (0x24) ends the literal.
    assert_eq!(ok(b"true$"), JsonValue::Bool(true));
    assert_eq!(ok(b"null;"), JsonValue::Null);
    assert_eq!(ok(b"null@"), JsonValue::Null);
    assert_eq!(ok(b"null~"), JsonValue::Null);
    assert_eq!(kind(b"true\xFF"), JsonErrorKind::InvalidUtf8);
    assert_eq!(kind(b"true\xC3"), JsonErrorKind::UnexpectedEnd);
}

#[test]
fn literals() {
    assert_eq!(ok(b"true"), JsonValue::Bool(true));
    assert_eq!(ok(b"false"), JsonValue::Bool(false));
    for input in [
        &b"tru"[..],
        b"nul",
        b"fals",
        b"trUe",
        b"f",
        b"nil",
        b"[tru]",
    ] {
        assert_eq!(kind(input), JsonErrorKind::InvalidLiteral, "{input:?}");
    }
    assert_eq!(kind(b"undefined"), JsonErrorKind::UnexpectedByte(b'u'));
    assert_eq!(kind(b"True"), JsonErrorKind::UnexpectedByte(b'T'));
    assert_eq!(kind(b"NULL"), JsonErrorKind::UnexpectedByte(b'N'));
}

// ---- numbers ----

#[test]
fn integers() {
    assert_eq!(ok(b"0"), long(0));
    assert_eq!(ok(b"-0"), long(0));
    assert_eq!(ok(b"42"), long(42));
    assert_eq!(ok(b"-42"), long(-42));
    assert_eq!(ok(b"9223372036854775807"), long(i64::MAX));
    assert_eq!(ok(b"-9223372036854775808"), long(i64::MIN));
}

#[test]
fn leading_zeros_are_allowed() {
    assert_eq!(ok(b"007"), long(7));
    assert_eq!(ok(b"-00"), long(0));
    assert_eq!(ok(b"00"), long(0));
    assert_eq!(ok(b"-007"), long(-7));
    assert_eq!(ok(b"[01,002]"), JsonValue::Array(vec![long(1), long(2)]));
    assert_eq!(ok(b"00.5"), double(0.5));
    assert_eq!(ok(b"-001.25e1"), double(-12.5));
}

#[test]
fn integers_wrap_like_big_integer_long_value() {
    assert_eq!(ok(b"9223372036854775808"), long(i64::MIN));
    assert_eq!(ok(b"-9223372036854775809"), long(i64::MAX));
    assert_eq!(ok(b"18446744073709551615"), long(-1));
    assert_eq!(ok(b"18446744073709551616"), long(0));
    assert_eq!(ok(b"18446744073709551618"), long(2));
    assert_eq!(ok(b"-18446744073709551618"), long(-2));
    assert_eq!(ok(b"-18446744073709551616"), long(0));
    // 10^20 mod 2^64 = 7766279631452241920
    assert_eq!(
        ok(b"100000000000000000000"),
        long(7_766_279_631_452_241_920)
    );
    assert_eq!(
        ok(b"-100000000000000000000"),
        long(-7_766_279_631_452_241_920)
    );
    assert_eq!(ok(b"000000000000000000000000000000042"), long(42));
}

#[test]
fn floats() {
    assert_eq!(ok(b"1.5"), double(1.5));
    assert_eq!(ok(b"-1.5"), double(-1.5));
    assert_eq!(ok(b"1e2"), double(100.0));
    assert_eq!(ok(b"1E2"), double(100.0));
    assert_eq!(ok(b"1E+2"), double(100.0));
    assert_eq!(ok(b"1e-2"), double(0.01));
    assert_eq!(ok(b"1.0"), double(1.0));
    assert_eq!(ok(b"0.1"), double(0.1));
    assert_eq!(ok(b"2.5e-3"), double(0.0025));
    assert_eq!(ok(b"1e007"), double(1e7));
    assert_eq!(
        ok(b"123456789012345678901234567890.0"),
        double(1.2345678901234568e29)
    );
    assert_eq!(ok(b"0.30000000000000004"), double(0.30000000000000004));
    assert_eq!(ok(b"4.9e-324"), double(4.9e-324));
    assert_eq!(ok(b"1.7976931348623157e308"), double(f64::MAX));
}

#[test]
fn float_overflow_and_underflow() {
    assert_eq!(ok(b"1e400"), double(f64::INFINITY));
    assert_eq!(ok(b"-1e400"), double(f64::NEG_INFINITY));
    assert_eq!(ok(b"1e-400"), double(0.0));
    // A nonzero decimal that underflows keeps its sign (BigDecimal.doubleValue).
    assert_eq!(bits(&ok(b"-1e-400")), (-0.0f64).to_bits());
    // An exponent BigDecimal rejects: Jackson falls back to Double.parseDouble.
    assert_eq!(ok(b"1e2147483648"), double(f64::INFINITY));
    assert_eq!(ok(b"1e99999999999999999999"), double(f64::INFINITY));
    assert_eq!(ok(b"1e-99999999999999999999"), double(0.0));
}

#[test]
fn zero_decimals_lose_their_sign_like_big_decimal() {
    let plus_zero = 0.0f64.to_bits();
    let minus_zero = (-0.0f64).to_bits();
    assert_eq!(bits(&ok(b"0.0")), plus_zero);
    assert_eq!(bits(&ok(b"-0.0")), plus_zero);
    assert_eq!(bits(&ok(b"-0e5")), plus_zero);
    assert_eq!(bits(&ok(b"-000.000E-7")), plus_zero);
    assert_eq!(ok(b"[-0.0]"), JsonValue::Array(vec![double(0.0)]));
    // When BigDecimal rejects the exponent, Double.parseDouble keeps the sign.
    assert_eq!(bits(&ok(b"-0e2147483648")), minus_zero);
    assert_eq!(bits(&ok(b"-0.0e-2147483647")), minus_zero);
    assert_eq!(bits(&ok(b"-0e-2147483647")), plus_zero);
    assert_eq!(bits(&ok(b"-0e00000000000002147483647")), plus_zero);
}

#[test]
fn big_decimal_exponent_rules() {
    assert!(big_decimal_accepts(0, None));
    assert!(big_decimal_accepts(0, Some((false, b"2147483647"))));
    assert!(!big_decimal_accepts(0, Some((false, b"2147483648"))));
    assert!(big_decimal_accepts(0, Some((true, b"2147483647"))));
    // exp = -2147483648 fits an int, but the scale 0 - exp does not.
    assert!(!big_decimal_accepts(0, Some((true, b"2147483648"))));
    assert!(big_decimal_accepts(1, Some((false, b"2147483647"))));
    assert!(!big_decimal_accepts(1, Some((true, b"2147483647"))));
    assert!(big_decimal_accepts(0, Some((false, b"000000000000000001"))));
    assert!(!big_decimal_accepts(0, Some((false, b"10000000000"))));
    assert!(big_decimal_accepts(5, Some((true, b"0"))));
}

#[test]
fn rejected_numbers() {
    for input in [
        &b"-"[..],
        b"-x",
        b"-.5",
        b"1.",
        b"1.e5",
        b"1e",
        b"1e+",
        b"1E-",
        b"-Infinity",
        b"[1.]",
        b"[1e]",
        b"[-]",
        b"1.5.",
    ] {
        let e = err(input);
        assert!(
            matches!(
                e.kind,
                JsonErrorKind::InvalidNumber | JsonErrorKind::UnexpectedByte(_)
            ),
            "{input:?}: {e:?}"
        );
    }
    assert_eq!(kind(b"1."), JsonErrorKind::InvalidNumber);
    assert_eq!(kind(b"1e"), JsonErrorKind::InvalidNumber);
    assert_eq!(kind(b"-"), JsonErrorKind::InvalidNumber);
    assert_eq!(kind(b"+1"), JsonErrorKind::UnexpectedByte(b'+'));
    assert_eq!(kind(b".5"), JsonErrorKind::UnexpectedByte(b'.'));
    assert_eq!(kind(b"NaN"), JsonErrorKind::UnexpectedByte(b'N'));
    assert_eq!(kind(b"Infinity"), JsonErrorKind::UnexpectedByte(b'I'));
    assert_eq!(kind(b"0x1F"), JsonErrorKind::UnexpectedByte(b'x'));
    assert_eq!(kind(b"[0x1F]"), JsonErrorKind::UnexpectedByte(b'x'));
    assert_eq!(kind(b"[+1]"), JsonErrorKind::UnexpectedByte(b'+'));
    assert_eq!(kind(b"[.5]"), JsonErrorKind::UnexpectedByte(b'.'));
    assert_eq!(kind(b"1.5.3"), JsonErrorKind::UnexpectedByte(b'.'));
}

#[test]
fn number_length_limit() {
    let digits = |n: usize| "9".repeat(n);
    assert!(matches!(ok(digits(1000).as_bytes()), JsonValue::Long(_)));
    assert_eq!(kind(digits(1001).as_bytes()), JsonErrorKind::NumberTooLong);
    // Leading zeros of the integer part are not counted; the sign is not counted.
    let padded = alloc::format!("-{}{}", "0".repeat(5000), digits(1000));
    assert!(matches!(ok(padded.as_bytes()), JsonValue::Long(_)));
    // Floats count integer, fraction and exponent digits.
    let f = alloc::format!("1.{}e10", "5".repeat(997));
    assert!(matches!(ok(f.as_bytes()), JsonValue::Double(_)));
    let f = alloc::format!("1.{}e10", "5".repeat(998));
    assert_eq!(kind(f.as_bytes()), JsonErrorKind::NumberTooLong);
    let f = alloc::format!("0.{}", "0".repeat(1000));
    assert_eq!(kind(f.as_bytes()), JsonErrorKind::NumberTooLong);
    let f = alloc::format!("0.{}", "0".repeat(999));
    assert_eq!(bits(&ok(f.as_bytes())), 0);
}

// ---- strings ----

#[test]
fn plain_strings() {
    assert_eq!(ok(b"\"\""), string(""));
    assert_eq!(ok(b"\"abc\""), string("abc"));
    assert_eq!(
        ok("\"h\u{e9}llo \u{1F600} \u{2028}\"".as_bytes()),
        string("h\u{e9}llo \u{1F600} \u{2028}")
    );
    assert_eq!(ok(b"\"\x7F\""), string("\u{7f}"));
    assert_eq!(ok(b"\"a/b\""), string("a/b"));
}

#[test]
fn all_escapes() {
    assert_eq!(
        ok(br#""\"\\\/\b\f\n\r\t""#),
        string("\"\\/\u{8}\u{c}\n\r\t")
    );
    assert_eq!(
        ok(br#""\u0041\u00e9\u00E9\u20ac\u0000""#),
        string("A\u{e9}\u{e9}\u{20ac}\0")
    );
    assert_eq!(ok(br#""x\u001Fy""#), string("x\u{1f}y"));
    assert_eq!(ok(br#""\uFFFF""#), string("\u{ffff}"));
    assert_eq!(
        ok("\"\u{e9}\\n\u{e9}\"".as_bytes()),
        string("\u{e9}\n\u{e9}")
    );
}

#[test]
fn invalid_escapes() {
    for input in [
        &br#""\a""#[..],
        br#""\'""#,
        br#""\x41""#,
        br#""\U0041""#,
        br#""\u004""#,
        br#""\u00G1""#,
        br#""\ ""#,
        b"\"\\\xC3\xA9\"",
    ] {
        assert_eq!(kind(input), JsonErrorKind::InvalidEscape, "{input:?}");
    }
    assert_eq!(kind(br#""\"#), JsonErrorKind::UnexpectedEnd);
    assert_eq!(kind(br#""\u00"#), JsonErrorKind::UnexpectedEnd);
    assert_eq!(
        err(br#""ab\q""#),
        JsonError::new(4, JsonErrorKind::InvalidEscape)
    );
}

#[test]
fn surrogate_pairs_and_lone_surrogates() {
    assert_eq!(ok(br#""\uD83D\uDE00""#), string("\u{1F600}"));
    assert_eq!(ok(br#""\ud83d\ude00""#), string("\u{1F600}"));
    assert_eq!(ok(br#""\uD83D""#), string("\u{FFFD}"));
    assert_eq!(ok(br#""\uDE00""#), string("\u{FFFD}"));
    assert_eq!(ok(br#""a\uD83Db""#), string("a\u{FFFD}b"));
    assert_eq!(ok(br#""\uD83D\n""#), string("\u{FFFD}\n"));
    assert_eq!(ok(br#""\uD83D\uD83D\uDE00""#), string("\u{FFFD}\u{1F600}"));
    assert_eq!(ok(br#""\uDE00\uD83D""#), string("\u{FFFD}\u{FFFD}"));
    assert_eq!(ok(br#""\uD83D\u0041""#), string("\u{FFFD}A"));
    // A high surrogate escape followed by a raw supplementary character.
    assert_eq!(
        ok("\"\\uD83D\u{1F600}\"".as_bytes()),
        string("\u{FFFD}\u{1F600}")
    );
    // Lone surrogates in member names too.
    assert_eq!(ok(br#"{"\uD800":1}"#), obj(&[("\u{FFFD}", long(1))]));
}

#[test]
fn raw_control_characters_are_rejected() {
    assert_eq!(
        err(b"\"a\x01b\""),
        JsonError::new(2, JsonErrorKind::ControlCharacterInString)
    );
    assert_eq!(kind(b"\"\n\""), JsonErrorKind::ControlCharacterInString);
    assert_eq!(kind(b"\"\t\""), JsonErrorKind::ControlCharacterInString);
    assert_eq!(kind(b"\"\x00\""), JsonErrorKind::ControlCharacterInString);
    assert_eq!(
        kind(b"\"\\n\x1F\""),
        JsonErrorKind::ControlCharacterInString
    );
    assert_eq!(
        kind(b"{\"a\x1Fb\":1}"),
        JsonErrorKind::ControlCharacterInString
    );
}

#[test]
fn invalid_utf8_is_rejected() {
    for input in [
        &b"\"\xFF\""[..],
        b"\"\x80\"",
        b"\"\xBF\"",
        b"\"\xF8\x88\x80\x80\x80\"",
        b"\"\xC3(\"",
        b"\"\xE2\x82(\"",
        b"\"\xC3\"",
        b"\"a\xC3\\n\"",
        b"\"\xE2\x82\x01\"",
        b"{\"\xFF\":1}",
        b"{\"a\xC3\":1}",
    ] {
        assert_eq!(kind(input), JsonErrorKind::InvalidUtf8, "{input:?}");
    }
    assert_eq!(
        err(b"\"ab\xFF\""),
        JsonError::new(3, JsonErrorKind::InvalidUtf8)
    );
    assert_eq!(kind(b"\"\xE2\x82"), JsonErrorKind::UnexpectedEnd);
}

#[test]
fn jackson_lenient_utf8() {
    // Overlong encodings decode to their value.
    assert_eq!(ok(b"\"\xC1\x81\""), string("A"));
    assert_eq!(ok(b"\"\xC0\x80\""), string("\0"));
    assert_eq!(ok(b"\"\xE0\x81\x81\""), string("A"));
    // Encoded surrogates are UTF-16 units: lone ones become U+FFFD, pairs combine
    // (CESU-8), also with escapes.
    assert_eq!(ok(b"\"\xED\xA0\x80\""), string("\u{FFFD}"));
    assert_eq!(ok(b"\"\xED\xA0\xBD\xED\xB8\x80\""), string("\u{1F600}"));
    assert_eq!(ok(b"\"\xED\xA0\xBD\\uDE00\""), string("\u{1F600}"));
    assert_eq!(ok(b"\"\\uD83D\xED\xB8\x80\""), string("\u{1F600}"));
    assert_eq!(
        ok(b"{\"\xED\xA0\xBD\xED\xB8\x80\":1}"),
        obj(&[("\u{1F600}", long(1))])
    );
    // Beyond U+10FFFF: two low surrogates.
    assert_eq!(ok(b"\"\xF4\x90\x80\x80\""), string("\u{FFFD}\u{FFFD}"));
    assert_eq!(ok(b"\"\xF7\xBF\xBF\xBF\""), string("\u{FFFD}\u{FFFD}"));
    // Overlong 4-byte forms: `|` for values, `+` for names.
    assert_eq!(ok(b"\"\xF0\x80\x80\x80\""), string("\u{FFC0}\u{FFFD}"));
    assert_eq!(
        ok(b"{\"\xF0\x80\x80\x80\":1}"),
        obj(&[("\u{D7C0}\u{FFFD}", long(1))])
    );
    // Valid text around invalid-but-accepted sequences survives.
    assert_eq!(
        ok("\"\u{e9}\u{1F600}\u{20AC}\\n\u{e9}\"".as_bytes()),
        string("\u{e9}\u{1F600}\u{20AC}\n\u{e9}")
    );
    assert_eq!(
        ok("\"\u{e9}\u{20AC}\u{e9}\u{1F600}\u{20AC}\u{e9}\"".as_bytes()),
        string("\u{e9}\u{20AC}\u{e9}\u{1F600}\u{20AC}\u{e9}")
    );
    assert_eq!(
        ok(b"\"\xC3\xA9\xC0\x80\xC3\xA9\""),
        string("\u{e9}\0\u{e9}")
    );
}

#[test]
fn unterminated_strings() {
    assert_eq!(kind(b"\""), JsonErrorKind::UnexpectedEnd);
    assert_eq!(kind(b"\"abc"), JsonErrorKind::UnexpectedEnd);
    assert_eq!(kind(b"\"abc\\\""), JsonErrorKind::UnexpectedEnd);
    assert_eq!(kind(b"{\"abc"), JsonErrorKind::UnexpectedEnd);
}

#[test]
fn string_and_name_length_limits() {
    let name = "n".repeat(50_000);
    let input = alloc::format!("{{\"{name}\":1}}");
    assert!(ok(input.as_bytes())
        .as_object()
        .is_some_and(|o| o.contains_key(&name)));
    let input = alloc::format!("{{\"{name}x\":1}}");
    assert_eq!(kind(input.as_bytes()), JsonErrorKind::NameTooLong);
    // Escapes count as their UTF-8 re-encoding: \u00e9 is 2 bytes.
    let input = alloc::format!("{{\"{}\\u00e9\":1}}", "n".repeat(49_998));
    assert!(parse(input.as_bytes()).is_ok());
    let input = alloc::format!("{{\"{}\\u00e9\":1}}", "n".repeat(49_999));
    assert_eq!(kind(input.as_bytes()), JsonErrorKind::NameTooLong);
    // String values: 20,000,000 UTF-16 units.
    let value = "v".repeat(MAX_STRING_LEN);
    let input = alloc::format!("\"{value}\"");
    assert!(parse(input.as_bytes()).is_ok());
    let input = alloc::format!("[\"{value}\\n\"]");
    assert_eq!(kind(input.as_bytes()), JsonErrorKind::StringTooLong);
    // More than 20M bytes but not more than 20M UTF-16 units.
    let value = "\u{e9}".repeat(MAX_STRING_LEN / 2 + 1);
    let input = alloc::format!("\"{value}\"");
    assert!(parse(input.as_bytes()).is_ok());
}

// ---- containers ----

#[test]
fn objects_and_arrays() {
    assert_eq!(ok(b"{}"), obj(&[]));
    assert_eq!(ok(b"[]"), JsonValue::Array(vec![]));
    assert_eq!(ok(b" { } "), obj(&[]));
    assert_eq!(ok(b"[ ]"), JsonValue::Array(vec![]));
    assert_eq!(
        ok(br#" { "a" : [ 1 , 2.5 , "x" , true , false , null , { } , [ ] ] , "b" : { "c" : { "d" : [ [ ] ] } } } "#),
        obj(&[
            (
                "a",
                JsonValue::Array(vec![
                    long(1),
                    double(2.5),
                    string("x"),
                    JsonValue::Bool(true),
                    JsonValue::Bool(false),
                    JsonValue::Null,
                    obj(&[]),
                    JsonValue::Array(vec![]),
                ])
            ),
            (
                "b",
                obj(&[("c", obj(&[("d", JsonValue::Array(vec![JsonValue::Array(vec![])]))]))])
            ),
        ])
    );
    assert_eq!(
        ok(b"{\n\t\"connector.class\":\"x\",\r\n\"tasks.max\":\"1\"}"),
        obj(&[("connector.class", string("x")), ("tasks.max", string("1"))])
    );
}

#[test]
fn duplicate_names_last_wins() {
    assert_eq!(ok(br#"{"a":1,"a":2}"#), obj(&[("a", long(2))]));
    assert_eq!(
        ok(br#"{"a":{"x":1},"b":0,"a":[3]}"#),
        obj(&[("a", JsonValue::Array(vec![long(3)])), ("b", long(0))])
    );
    assert_eq!(
        ok(br#"{"a":1,"\u0061":null}"#),
        obj(&[("a", JsonValue::Null)])
    );
}

#[test]
fn malformed_containers() {
    for (input, expected) in [
        (&b"[1,]"[..], JsonErrorKind::UnexpectedByte(b']')),
        (b"{\"a\":1,}", JsonErrorKind::UnexpectedByte(b'}')),
        (b"[,1]", JsonErrorKind::UnexpectedByte(b',')),
        (b"[1 2]", JsonErrorKind::UnexpectedByte(b'2')),
        (b"[1,,2]", JsonErrorKind::UnexpectedByte(b',')),
        (b"{\"a\" 1}", JsonErrorKind::UnexpectedByte(b'1')),
        (b"{\"a\":}", JsonErrorKind::UnexpectedByte(b'}')),
        (b"{a:1}", JsonErrorKind::UnexpectedByte(b'a')),
        (b"{'a':1}", JsonErrorKind::UnexpectedByte(b'\'')),
        (b"['a']", JsonErrorKind::UnexpectedByte(b'\'')),
        (b"{1:1}", JsonErrorKind::UnexpectedByte(b'1')),
        (b"{\"a\":1]", JsonErrorKind::UnexpectedByte(b']')),
        (b"[1}", JsonErrorKind::UnexpectedByte(b'}')),
        (b"[", JsonErrorKind::UnexpectedEnd),
        (b"[1", JsonErrorKind::UnexpectedEnd),
        (b"[1,", JsonErrorKind::UnexpectedEnd),
        (b"{", JsonErrorKind::UnexpectedEnd),
        (b"{\"a\"", JsonErrorKind::UnexpectedEnd),
        (b"{\"a\":", JsonErrorKind::UnexpectedEnd),
        (b"{\"a\":1", JsonErrorKind::UnexpectedEnd),
        (b"]", JsonErrorKind::UnexpectedByte(b']')),
        (b"}", JsonErrorKind::UnexpectedByte(b'}')),
        (b",", JsonErrorKind::UnexpectedByte(b',')),
        (b":", JsonErrorKind::UnexpectedByte(b':')),
        (b"/* c */ {}", JsonErrorKind::UnexpectedByte(b'/')),
        (b"[1 // c\n]", JsonErrorKind::UnexpectedByte(b'/')),
        (b"# c\n{}", JsonErrorKind::UnexpectedByte(b'#')),
    ] {
        assert_eq!(
            kind(input),
            expected,
            "{:?}",
            String::from_utf8_lossy(input)
        );
    }
    assert_eq!(
        err(b"[1,]"),
        JsonError::new(3, JsonErrorKind::UnexpectedByte(b']'))
    );
}

#[test]
fn nesting_limit() {
    let nested = |n: usize| alloc::format!("{}{}", "[".repeat(n), "]".repeat(n));
    assert!(parse(nested(1000).as_bytes()).is_ok());
    assert_eq!(
        err(nested(1001).as_bytes()),
        JsonError::new(1000, JsonErrorKind::TooDeep)
    );
    let objects = |n: usize| alloc::format!("{}1{}", "{\"a\":".repeat(n), "}".repeat(n));
    assert!(parse(objects(1000).as_bytes()).is_ok());
    assert_eq!(kind(objects(1001).as_bytes()), JsonErrorKind::TooDeep);
    // An empty container still counts as a level.
    let input = alloc::format!("{}{{}}{}", "[".repeat(1000), "]".repeat(1000));
    assert_eq!(kind(input.as_bytes()), JsonErrorKind::TooDeep);
}

#[test]
fn very_deep_nesting_is_an_error_not_a_stack_overflow() {
    assert_eq!(kind("[".repeat(100_000).as_bytes()), JsonErrorKind::TooDeep);
    assert_eq!(
        kind("{\"a\":".repeat(100_000).as_bytes()),
        JsonErrorKind::TooDeep
    );
    assert_eq!(
        kind("[{\"a\":".repeat(100_000).as_bytes()),
        JsonErrorKind::TooDeep
    );
}

#[test]
fn error_display() {
    assert_eq!(
        err(b"{\"a\":1x}").to_string(),
        "invalid JSON at byte 6: unexpected character 'x'"
    );
    assert_eq!(
        err(b"[\x01]").to_string(),
        "invalid JSON at byte 1: unexpected byte 0x01"
    );
    assert_eq!(
        err(b"[").to_string(),
        "invalid JSON at byte 1: unexpected end of input"
    );
    let e: &dyn core::error::Error = &err(b"x");
    assert!(e.to_string().starts_with("invalid JSON at byte 0"));
}

#[test]
fn never_panics_on_truncations_of_valid_documents() {
    let doc = "\u{feff}{\"a\":[1,-2.5e-3,\"\\uD83D\\uDE00\u{e9}\\n\",true,false,null,{\"b\":{}}],\"c\":007}";
    let bytes = doc.as_bytes();
    for end in 0..=bytes.len() {
        let _ = parse(&bytes[..end]);
        for start in 0..end {
            let _ = parse(&bytes[start..end]);
        }
    }
    assert!(parse(bytes).is_ok());
}

#[test]
fn never_panics_on_arbitrary_bytes() {
    // A small deterministic generator over an alphabet rich in JSON syntax.
    let alphabet: &[u8] = b"{}[]\",:\\/ -+.eE0123456789truefalsnu\t\n\x00\x1F\x7F\xC0\xC3\xA9\xED\xA0\xF0\x9F\x98\x80\xFFbx";
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut buf = Vec::new();
    for _ in 0..20_000 {
        buf.clear();
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let len = (state % 24) as usize;
        for _ in 0..len {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            buf.push(alphabet[(state % alphabet.len() as u64) as usize]);
        }
        let _ = parse(&buf);
    }
}

/// The REST layer's reader (`parse_rest`): Jackson's default `ObjectMapper`, checked against
/// the Java oracle's `alterOffsets` (issue 14).
#[test]
fn the_rest_dialect_reads_what_jackson_reads_as_biginteger_and_refuses_what_it_refuses() {
    let kind = |text: &str| parse_rest(text.as_bytes()).unwrap_err().kind;
    let value = |text: &str| parse_rest(text.as_bytes()).unwrap().unwrap();
    for beyond in [
        "18446744073709551615",
        "9223372036854775808",
        "-9223372036854775809",
        "123456789012345678901234567890",
    ] {
        assert_eq!(
            value(beyond),
            JsonValue::BigInteger(beyond.into()),
            "{beyond}"
        );
    }
    assert_eq!(
        value("[18446744073709551615]"),
        JsonValue::Array(alloc::vec![JsonValue::BigInteger(
            "18446744073709551615".into()
        )])
    );
    assert_eq!(value("9223372036854775807"), JsonValue::Long(i64::MAX));
    assert_eq!(value("-9223372036854775808"), JsonValue::Long(i64::MIN));
    assert_eq!(value("-0"), JsonValue::Long(0));
    assert_eq!(kind("007"), JsonErrorKind::LeadingZero);
    assert_eq!(kind("-01.5"), JsonErrorKind::LeadingZero);
    assert_eq!(value("0.5"), JsonValue::Double(JavaDouble::new(0.5)));
    assert_eq!(
        value("1e400"),
        JsonValue::Double(JavaDouble::new(f64::INFINITY))
    );
    assert_eq!(value("1E3"), JsonValue::Double(JavaDouble::new(1000.0)));
    // A double keeps the sign of zero; the converter's BigDecimal does not.
    let JsonValue::Double(zero) = value("-0.0") else {
        panic!("a double")
    };
    assert!(zero.get().is_sign_negative());
    let JsonValue::Double(zero) = parse(b"-0.0").unwrap().unwrap() else {
        panic!("a double")
    };
    assert!(zero.get().is_sign_positive());
    // The converter's dialect keeps the low 64 bits, as before.
    assert_eq!(
        parse(b"18446744073709551615").unwrap(),
        Some(JsonValue::Long(-1))
    );
    assert_eq!(parse(b"007").unwrap(), Some(JsonValue::Long(7)));
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2048))]

    /// The word-at-a-time scan finds what a byte-at-a-time scan finds, from any start.
    #[test]
    fn plain_runs_end_where_a_bytewise_scan_ends(
        bytes in proptest::collection::vec(
            proptest::prop_oneof![
                proptest::prelude::Just(b'"'),
                proptest::prelude::Just(b'\\'),
                0u8..0x20,
                0x20u8..=0xFF,
                0x20u8..=0xFF,
                0x20u8..=0xFF,
            ],
            0..40,
        ),
        start in 0usize..48,
    ) {
        let bytewise = bytes
            .iter()
            .enumerate()
            .skip(start)
            .find(|&(_, &b)| b == b'"' || b == b'\\' || b < 0x20)
            .map_or(bytes.len().max(start), |(i, _)| i);
        proptest::prop_assert_eq!(scan_plain(&bytes, start), bytewise);
    }
}
