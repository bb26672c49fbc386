//! Connector and task config values in the exact layout a Java worker writes them, read without
//! the general JSON reader.
//!
//! Java's `KafkaConfigBackingStore` serializes a configuration through the `JsonConverter` with
//! schemas off: compact JSON, a struct of one map, `{"properties":{"name":"value",...}}`, the
//! properties in the map's order, every value a string. Nearly every connector and task config
//! record has that layout, and matching it directly (one UTF-8 check of the whole value, then
//! the text between the strings) takes a fraction of the general reader's walk, which handles
//! every layout and every JSON value. Anything else (whitespace, a BOM, an escape, a value that
//! is not a string, a long string, an empty or missing map, other members) is declined, and the
//! general reader reads the value. Every value this accepts reads the same both ways (the tests
//! check it against the general path over generated variations of the layout).

use alloc::vec::Vec;

use crate::json::layout::Cursor;

/// A cursor past the opening Java writes (`{"properties":{`), the whole value checked as UTF-8
/// once ([`Cursor::new`]); `None` for any other opening or text that is not UTF-8.
pub(super) fn open(bytes: &[u8]) -> Option<Cursor<'_>> {
    let mut text = Cursor::new(bytes)?;
    text.literal(b"{\"properties\":{")?;
    Some(text)
}

/// Reads the members after [`open`]: fills `members` (emptied first) with their `(name, value)`
/// pairs in document order, repeated names included; `None` (with `members` in any state) when
/// they are not in Java's layout.
pub(super) fn members<'a>(
    mut text: Cursor<'a>,
    members: &mut Vec<(&'a str, &'a str)>,
) -> Option<()> {
    members.clear();
    text.literal(b"\"")?;
    loop {
        let name = text.string()?;
        text.literal(b":\"")?;
        members.push((name, text.string()?));
        if text.literal(b",\"").is_none() {
            break;
        }
    }
    close(text)
}

/// Reads the members after [`open`] when they are those that `prefixes` (see [`prefix`])
/// introduce, in that order, every one with a string value: fills `values` (emptied first) with
/// the values in document order; `None` (with `values` in any state) otherwise.
pub(super) fn values<'a, 'p>(
    mut text: Cursor<'a>,
    prefixes: impl Iterator<Item = &'p [u8]>,
    values: &mut Vec<&'a str>,
) -> Option<()> {
    values.clear();
    for prefix in prefixes {
        text.literal(prefix)?;
        values.push(text.string()?);
    }
    close(text)
}

/// Appends to `out` the text Java writes before the value of member `at` named `name`:
/// `"name":"`, after a comma for every member but the first. `None` (with `out` in any state)
/// when the name has a character Java escapes: then a document's text is not the name's bytes.
pub(super) fn prefix(out: &mut Vec<u8>, at: usize, name: &str) -> Option<()> {
    if name.bytes().any(|b| b == b'"' || b == b'\\' || b < 0x20) {
        return None;
    }
    if at > 0 {
        out.push(b',');
    }
    out.push(b'"');
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b"\":\"");
    Some(())
}

/// The end of the map and of the document. The general reader stops at the document's end
/// too: what follows is never read.
fn close(mut text: Cursor<'_>) -> Option<()> {
    text.literal(b"}}")
}

#[cfg(test)]
mod tests {
    use alloc::format;
    use alloc::string::String;
    use alloc::vec::Vec;

    use proptest::prelude::*;

    use super::super::Shapes;
    use crate::json::layout::part;
    use crate::json::{parse_properties, PropertiesRead};

    /// Variations of a property's name.
    fn name() -> BoxedStrategy<String> {
        part(
            &[
                r#""connector.class""#,
                r#""tasks.max""#,
                r#""name""#,
                r#""topics""#,
                r#""task.class""#,
            ],
            &[
                r#""""#,
                r#""ta\u0073ks.max""#,
                r#""name ""#,
                r#""näme""#,
                r#""tab	here""#,
                "1",
            ],
        )
    }

    /// Variations of a property's value.
    fn value() -> BoxedStrategy<String> {
        part(
            &[
                r#""org.apache.kafka.connect.file.FileStreamSourceConnector""#,
                r#""1""#,
                r#""jdbc:postgresql://db:5432/warehouse""#,
                r#""${file:/etc/secrets:password}""#,
                r#""""#,
            ],
            &[
                r#""line\nbreak""#,
                r#""ünïcode ✓""#,
                r#""quote\"d""#,
                "1",
                "-2.5",
                "true",
                "null",
                "[]",
                r#"{"a":"b"}"#,
            ],
        )
    }

    /// Variations of the text between the members and around the map.
    fn between() -> BoxedStrategy<String> {
        part(&[","], &[", ", " ,", ",,", "}", ""])
    }

    fn open() -> BoxedStrategy<String> {
        part(
            &[r#"{"properties":{"#],
            &[
                r#"{ "properties":{"#,
                r#"{"properties": {"#,
                r#"{"Properties":{"#,
                r#"{"properties":["#,
                "\u{feff}{\"properties\":{",
                r#"{"tasks":1,"properties":{"#,
            ],
        )
    }

    fn close() -> BoxedStrategy<String> {
        part(
            &["}}"],
            &["} }", "}", "}}trailing", r#"},"tasks":2}"#, "}}}", "]}"],
        )
    }

    /// A generated value: mostly Java's layout, sometimes varied at one or more places.
    fn document() -> impl Strategy<Value = String> {
        let member = (name(), value()).prop_map(|(n, v)| format!("{n}:{v}"));
        (
            open(),
            prop::collection::vec((member, between()), 0..12),
            close(),
        )
            .prop_map(|(open, members, close)| {
                let mut text = open;
                let last = members.len().saturating_sub(1);
                for (at, (member, between)) in members.into_iter().enumerate() {
                    text.push_str(&member);
                    if at < last {
                        text.push_str(&between);
                    }
                }
                text.push_str(&close);
                text
            })
    }

    /// The configuration the general reader lays out of `bytes`, if any.
    fn general(bytes: &[u8]) -> Option<super::super::Properties> {
        match parse_properties(bytes, Vec::new()) {
            Ok(PropertiesRead::Members(members)) => Some(Shapes::default().lay_out(members)),
            _ => None,
        }
    }

    #[test]
    fn java_writes_this_layout_and_it_reads_as_the_general_reader_reads_it() {
        let written = br#"{"properties":{"name":"a","connector.class":"FileStreamSource","tasks.max":"1","name":"b"}}"#;
        let mut shapes = Shapes::default();
        let fast = shapes
            .read_java_layout(written)
            .expect("Java's layout is read");
        assert_eq!(Some(&fast), general(written).as_ref());
        assert_eq!(fast.get_str("name"), Some("b"));
        assert_eq!(fast.len(), 3);
        // The same names in the same order share the names' allocation.
        let again = shapes.read_java_layout(written).expect("read again");
        assert!(fast.shares_names_with(&again));
    }

    #[test]
    fn a_known_name_with_an_escape_is_not_matched_as_its_bytes() {
        let mut shapes = Shapes::default();
        // Learned from the general reader: the name is `a"b`.
        let escaped = br#"{"properties": {"a\"b":"x"}}"#;
        assert!(shapes.read_java_layout(escaped).is_none());
        let learned = general(escaped).expect("valid");
        assert_eq!(learned.get_str("a\"b"), Some("x"));
        assert_eq!(shapes.lay_out(members_of(escaped)), learned);
        // Its bytes unescaped are not JSON, and not a document of that shape.
        let raw = br#"{"properties":{"a"b":"x"}}"#;
        assert!(shapes.read_java_layout(raw).is_none());
        assert!(general(raw).is_none());
    }

    fn members_of(bytes: &[u8]) -> Vec<crate::json::FlatMember<'_>> {
        match parse_properties(bytes, Vec::new()) {
            Ok(PropertiesRead::Members(members)) => members,
            other => panic!("not a configuration: {other:?}"),
        }
    }

    proptest! {
        /// Whatever the fast path accepts, the general reader reads to the same configuration.
        #[test]
        fn accepted_values_read_the_same_both_ways(text in document()) {
            if let Some(fast) = Shapes::default().read_java_layout(text.as_bytes()) {
                prop_assert_eq!(Some(fast), general(text.as_bytes()), "{}", text);
            }
        }

        /// What Java writes (plain strings, repeated names included) is always accepted, and
        /// reads the same both ways, the names read one by one the first time and as a known
        /// shape the second.
        #[test]
        fn java_layout_is_accepted(
            members in prop::collection::vec(("[a-z.]{0,12}", r"[ -!#-\[\]-~é✓]{0,40}"), 1..30),
            others in prop::collection::vec(r"[ -!#-\[\]-~é✓]{0,40}", 30),
        ) {
            let mut shapes = Shapes::default();
            let first = java_text(members.iter().map(|(n, v)| (n.as_str(), v.as_str())));
            let second = java_text(members.iter().zip(&others).map(|((n, _), v)| (n.as_str(), v.as_str())));
            for text in [first, second] {
                let fast = shapes.read_java_layout(text.as_bytes());
                prop_assert!(fast.is_some(), "declined Java's layout: {}", text);
                prop_assert_eq!(fast, general(text.as_bytes()), "{}", text);
            }
        }

        /// A document of a known shape changed at one place reads as the general reader reads
        /// it, or is declined.
        #[test]
        fn a_known_shape_changed_reads_the_same_or_is_declined(
            members in prop::collection::vec(("[a-z.]{0,6}", "[a-z ]{0,6}"), 1..8),
            at in any::<prop::sample::Index>(),
            edit in prop::sample::select(&["", " ", "\\", "\"", ",", ":", "}", "{", "1", "\\u0041", "\n", "é"][..]),
            delete in 0usize..3,
        ) {
            let mut shapes = Shapes::default();
            let text = java_text(members.iter().map(|(n, v)| (n.as_str(), v.as_str())));
            prop_assert!(shapes.read_java_layout(text.as_bytes()).is_some());
            let mut changed = text.clone();
            let mut place = at.index(changed.len() + 1);
            while !changed.is_char_boundary(place) {
                place -= 1;
            }
            let cut = (place + delete).min(changed.len());
            if changed.is_char_boundary(cut) {
                changed.replace_range(place..cut, edit);
            }
            if let Some(fast) = shapes.read_java_layout(changed.as_bytes()) {
                prop_assert_eq!(Some(fast), general(changed.as_bytes()), "{}", changed);
            }
        }
    }

    /// A value as Java writes it, of plain `(name, value)` strings.
    fn java_text<'a>(members: impl Iterator<Item = (&'a str, &'a str)>) -> String {
        let body: Vec<String> = members.map(|(n, v)| format!("\"{n}\":\"{v}\"")).collect();
        format!("{{\"properties\":{{{}}}}}", body.join(","))
    }
}
