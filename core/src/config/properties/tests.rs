use super::*;
use crate::json::{parse, parse_properties, FlatMember, PropertiesRead};
use alloc::format;
use alloc::vec;
use proptest::prelude::*;

fn sample() -> Properties {
    [
        ("tasks.max", JsonValue::String("2".into())),
        ("b", JsonValue::Long(5)),
        ("a", JsonValue::String(String::new())),
        ("é", JsonValue::Null),
        ("a", JsonValue::String("last".into())),
        ("list", JsonValue::Array(vec![JsonValue::Bool(true)])),
    ]
    .into_iter()
    .collect()
}

/// The members of `{"properties": TEXT}` as the one-pass reader reads them.
fn members(text: &str) -> Vec<FlatMember<'_>> {
    // Leaked so that the members can borrow it for the test's length.
    let document: &'static str = alloc::format!("{{\"properties\": {text}}}").leak();
    match parse_properties(document.as_bytes(), Vec::new()) {
        Ok(PropertiesRead::Members(members)) => members,
        other => panic!("no properties in {text}: {other:?}"),
    }
}

/// `text` parsed as a map, as Java holds it.
fn map(text: &str) -> JsonObject {
    match parse(text.as_bytes()) {
        Ok(Some(JsonValue::Object(map))) => map,
        other => panic!("not an object: {other:?}"),
    }
}

#[test]
fn members_as_read_lay_out_as_the_parsed_map() {
    let texts = [
        r#"{"tasks.max": "2", "b": 5, "a": "", "\u00e9": null, "a": "last", "list": [true, {"x": "y"}]}"#,
        r#"{}"#,
        r#"{"only": "one"}"#,
        r#"{"z": "1", "y": "2\n", "x": 3.5, "z": {"nested": ["a"]}}"#,
    ];
    let mut shapes = Shapes::default();
    // Twice: the second time every document fits a kept shape.
    for text in texts.iter().chain(texts.iter()) {
        let laid_out = shapes.lay_out(members(text));
        assert_eq!(laid_out, Properties::from(map(text)), "{text}");
        assert_eq!(laid_out.to_object(), map(text), "{text}");
    }
}

#[test]
fn documents_with_the_same_names_in_the_same_order_share_them() {
    let mut shapes = Shapes::default();
    let first = shapes.lay_out(members(r#"{"b": "1", "a": "2", "c": "3"}"#));
    let same = shapes.lay_out(members(r#"{"b": "x", "a": "y", "c": "z"}"#));
    let reordered = shapes.lay_out(members(r#"{"a": "y", "b": "x", "c": "z"}"#));
    let fewer = shapes.lay_out(members(r#"{"b": "x", "a": "y"}"#));
    let renamed = shapes.lay_out(members(r#"{"b": "x", "a": "y", "d": "z"}"#));
    assert!(first.shares_names_with(&same));
    assert!(!same.shares_names_with(&reordered) && same == reordered);
    assert!(!first.shares_names_with(&fewer) && !first.shares_names_with(&renamed));
    assert_eq!(renamed.get_str("d"), Some("z"));
    assert_eq!(fewer.len(), 2);
    // A repeated name keeps its last value, shape or not.
    let repeated = r#"{"k": "1", "j": "2", "k": "3"}"#;
    let once = shapes.lay_out(members(repeated));
    let again = shapes.lay_out(members(repeated));
    assert!(once.shares_names_with(&again));
    assert_eq!(again.to_object(), map(repeated));
    assert_eq!(again.len(), 2);
}

#[test]
fn the_members_buffer_keeps_its_allocation_from_record_to_record() {
    let mut shapes = Shapes::default();
    let text = r#"{"a": "1", "b": "2", "c": "3"}"#;
    let document = alloc::format!("{{\"properties\": {text}}}");
    let mut capacity = None;
    for _ in 0..3 {
        let buffer = shapes.members_buffer();
        assert!(buffer.is_empty());
        if let Some(capacity) = capacity {
            assert_eq!(buffer.capacity(), capacity);
        }
        let Ok(PropertiesRead::Members(members)) = parse_properties(document.as_bytes(), buffer)
        else {
            panic!("no properties");
        };
        capacity = Some(members.capacity());
        assert_eq!(shapes.lay_out(members).to_object(), map(text));
    }
}

#[test]
fn more_shapes_than_are_kept_still_lay_out_right() {
    let mut shapes = Shapes::default();
    let texts: Vec<String> = (0..40)
        .map(|i| format!(r#"{{"n{i}": "{i}", "common": "c", "m{}": 1}}"#, i % 7))
        .collect();
    for round in 0..3 {
        for text in &texts {
            assert_eq!(
                shapes.lay_out(members(text)).to_object(),
                map(text),
                "round {round}"
            );
        }
    }
    // Texts longer than two-byte positions hold, before and after a short one.
    let long = "x".repeat(40_000);
    let wide = format!(r#"{{"a": "{long}", "b": "short", "c": "{long}", "d": 7}}"#);
    for _ in 0..2 {
        let laid_out = shapes.lay_out(members(&wide));
        assert_eq!(laid_out.to_object(), map(&wide));
        assert_eq!(round_trip(&laid_out).unwrap(), laid_out);
    }
    // A document too large to keep its shape is laid out all the same.
    let large: String = (0..5000)
        .map(|i| format!(r#""p{i}": "{i}""#))
        .collect::<Vec<_>>()
        .join(",");
    let large = format!("{{{large}}}");
    let laid_out = shapes.lay_out(members(&large));
    assert_eq!(laid_out.len(), 5000);
    assert_eq!(laid_out.to_object(), map(&large));
}

fn round_trip(p: &Properties) -> Result<Properties, bincode::error::DecodeError> {
    let bytes = bincode::serde::encode_to_vec(p, bincode::config::standard()).unwrap();
    bincode::serde::decode_from_slice(&bytes, bincode::config::standard()).map(|(v, _)| v)
}

#[test]
fn behaves_like_the_map_it_was_built_from() {
    let p = sample();
    assert_eq!(p.len(), 5);
    assert!(!p.is_empty() && Properties::new().is_empty());
    let names: Vec<&str> = p.iter().map(|(n, _)| n).collect();
    assert_eq!(names, ["a", "b", "list", "tasks.max", "é"]);
    assert_eq!(p.get("a"), Some(PropertyValue::String("last")));
    assert_eq!(p.get_str("tasks.max"), Some("2"));
    assert_eq!(p.get("b"), Some(PropertyValue::Other(&JsonValue::Long(5))));
    assert_eq!(p.get_str("b"), None);
    assert_eq!(p.get("é"), Some(PropertyValue::Other(&JsonValue::Null)));
    assert_eq!(p.get("c"), None);
    assert!(p.contains_key("list") && !p.contains_key(""));
    let back: Properties = p.to_object().into();
    assert_eq!(back, p);
    assert_eq!(
        format!("{:?}", Properties::from_iter([("k", JsonValue::Long(1))])),
        r#"{"k": Other(Long(1))}"#
    );
}

#[test]
fn equality_is_map_equality() {
    let one: Properties = [("x", JsonValue::String("1".into()))].into_iter().collect();
    let other: Properties = [("x", JsonValue::Long(1))].into_iter().collect();
    let empty_string: Properties = [("x", JsonValue::String(String::new()))]
        .into_iter()
        .collect();
    let null: Properties = [("x", JsonValue::Null)].into_iter().collect();
    let renamed: Properties = [("y", JsonValue::String("1".into()))].into_iter().collect();
    assert_ne!(one, other);
    assert_ne!(empty_string, null);
    assert_ne!(one, renamed);
    assert_eq!(sample(), sample().to_object().into_iter().collect());
}

#[test]
fn checkpoint_form_round_trips() {
    let long_value = "v".repeat(70_000);
    let wide: Properties = [("k", JsonValue::String(long_value))].into_iter().collect();
    for p in [sample(), Properties::new(), wide] {
        assert_eq!(round_trip(&p).unwrap(), p);
    }
}

/// A layout of `numbers` of `width` bytes, then `text`.
fn layout(width: u8, numbers: &[u64], text: &[u8]) -> Vec<u8> {
    let mut bytes = vec![width];
    for n in numbers {
        bytes.extend_from_slice(&n.to_le_bytes()[..usize::from(width).min(8)]);
    }
    bytes.extend_from_slice(text);
    bytes
}

/// Decodes a hand-made checkpoint form: the names' layout, the other values, the values'.
fn forged(
    names: &[u8],
    others: &[(usize, JsonValue)],
    values: &[u8],
) -> Result<Properties, bincode::error::DecodeError> {
    let wire = (ByteString(names), OthersRef(others), ByteString(values));
    let bytes = bincode::serde::encode_to_vec(&wire, bincode::config::standard()).unwrap();
    bincode::serde::decode_from_slice(&bytes, bincode::config::standard()).map(|(p, _)| p)
}

#[test]
fn forged_checkpoint_forms_are_refused() {
    let expected: Properties = [("a", JsonValue::String("b".into()))].into_iter().collect();
    let names_a = layout(2, &[1, 1], b"a");
    assert_eq!(
        forged(&names_a, &[], &layout(2, &[1], b"b")).unwrap(),
        expected
    );
    let null = (0, JsonValue::Null);
    assert_eq!(
        forged(
            &names_a,
            core::slice::from_ref(&null),
            &layout(2, &[0], b"")
        )
        .unwrap(),
        [("a", JsonValue::Null)].into_iter().collect()
    );
    let values_b = layout(2, &[1], b"b");
    let refused = [
        // Names: a width other than 2, 4 or 8, or wider than needed.
        forged(&layout(3, &[1, 1], b"a"), &[], &values_b),
        forged(&layout(4, &[1, 1], b"a"), &[], &values_b),
        // A count beyond the bytes, ends out of order or beyond the text, unused text.
        forged(&layout(2, &[2, 1], b"a"), &[], &values_b),
        forged(&layout(8, &[u64::MAX], b""), &[], &values_b),
        forged(
            &layout(2, &[2, 2, 1], b"ab"),
            &[],
            &layout(2, &[1, 1], b"b"),
        ),
        forged(&layout(2, &[1, 2], b"a"), &[], &values_b),
        forged(&layout(2, &[1, 1], b"ab"), &[], &values_b),
        // Names not UTF-8, cut inside a character, not strictly ascending.
        forged(&layout(2, &[1, 1], b"\xff"), &[], &values_b),
        forged(
            &layout(2, &[2, 1, 2], "é".as_bytes()),
            &[],
            &layout(2, &[1, 1], b"b"),
        ),
        forged(
            &layout(2, &[2, 1, 2], b"ba"),
            &[],
            &layout(2, &[1, 1], b"b"),
        ),
        forged(
            &layout(2, &[2, 1, 2], b"aa"),
            &[],
            &layout(2, &[1, 1], b"b"),
        ),
        // Values: fewer ends than names, wider than needed, beyond the text, unused text.
        forged(&names_a, &[], &layout(2, &[], b"")),
        forged(&names_a, &[], &layout(4, &[1], b"b")),
        forged(&names_a, &[], &layout(2, &[2], b"b")),
        forged(&names_a, &[], &layout(2, &[1], b"bc")),
        forged(&names_a, &[], &layout(2, &[1], b"\xff")),
        // Other values: out of range, with a text, a string, not ascending.
        forged(&names_a, &[(1, JsonValue::Null)], &layout(2, &[0], b"")),
        forged(&names_a, core::slice::from_ref(&null), &values_b),
        forged(
            &names_a,
            &[(0, JsonValue::String("s".into()))],
            &layout(2, &[0], b""),
        ),
        forged(
            &layout(2, &[2, 1, 2], b"ab"),
            &[(1, JsonValue::Null), null.clone()],
            &layout(2, &[0, 0], b""),
        ),
        // Nothing at all.
        forged(&[], &[], &[]),
    ];
    for (i, result) in refused.into_iter().enumerate() {
        assert!(result.is_err(), "case {i} was accepted: {result:?}");
    }
}

/// Names from a small set, so that documents repeat names, orders and whole shapes.
fn document() -> impl Strategy<Value = String> {
    let name = prop::sample::select(vec![
        "a",
        "b",
        "tasks.max",
        "transforms.route.type",
        "é",
        "",
    ]);
    let value = prop_oneof![
        "([a-z]|\\\\n){0,6}".prop_map(|s| format!("\"{s}\"")),
        Just(String::from("null")),
        Just(String::from("12")),
        Just(String::from("[true, {\"x\": 1}]")),
    ];
    prop::collection::vec((name, value), 0..8).prop_map(|members| {
        let members: Vec<String> = members
            .into_iter()
            .map(|(n, v)| format!("\"{n}\": {v}"))
            .collect();
        format!("{{{}}}", members.join(", "))
    })
}

proptest! {
    /// However the kept shapes come and go, every document lays out as the map it parses to.
    #[test]
    fn laid_out_documents_are_their_maps(texts in prop::collection::vec(document(), 1..40)) {
        let mut shapes = Shapes::default();
        for text in &texts {
            let laid_out = shapes.lay_out(members(text));
            prop_assert_eq!(laid_out.to_object(), map(text));
            prop_assert_eq!(round_trip(&laid_out).unwrap(), laid_out);
        }
    }
}
