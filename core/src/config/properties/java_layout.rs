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

/// Fills `members` (emptied first) with the `(name, value)` pairs of the `properties` map of
/// `bytes`, in document order, repeated names included, if `bytes` are in Java's layout; `None`
/// (with `members` in any state) to read them in full.
pub(super) fn read<'a>(bytes: &'a [u8], members: &mut Vec<(&'a str, &'a str)>) -> Option<()> {
    members.clear();
    // Config values run to a kilobyte: one vectorized check beats one check per string.
    let mut text = Cursor::of_text(simdutf8::basic::from_utf8(bytes).ok()?);
    text.literal(b"{\"properties\":{\"")?;
    loop {
        let name = text.string()?;
        text.literal(b":\"")?;
        members.push((name, text.string()?));
        if text.literal(b",\"").is_none() {
            break;
        }
    }
    // The general reader stops at the document's end too: what follows is never read.
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

    proptest! {
        /// Whatever the fast path accepts, the general reader reads to the same configuration.
        #[test]
        fn accepted_values_read_the_same_both_ways(text in document()) {
            if let Some(fast) = Shapes::default().read_java_layout(text.as_bytes()) {
                prop_assert_eq!(Some(fast), general(text.as_bytes()), "{}", text);
            }
        }

        /// What Java writes (plain strings, repeated names included) is always accepted, and
        /// reads the same both ways.
        #[test]
        fn java_layout_is_accepted(
            members in prop::collection::vec(("[a-z.]{0,12}", r"[ -!#-\[\]-~é✓]{0,40}"), 1..30)
        ) {
            let body: Vec<String> = members.iter().map(|(n, v)| format!("\"{n}\":\"{v}\"")).collect();
            let text = format!("{{\"properties\":{{{}}}}}", body.join(","));
            let fast = Shapes::default().read_java_layout(text.as_bytes());
            prop_assert!(fast.is_some(), "declined Java's layout: {}", text);
            prop_assert_eq!(fast, general(text.as_bytes()), "{}", text);
        }
    }
}
