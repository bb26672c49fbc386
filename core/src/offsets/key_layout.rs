//! Offsets keys in the exact layout a Java worker writes them, read without the general JSON
//! reader.
//!
//! A source task's offsets are keyed by `[connector, partition]`, serialized through the
//! `JsonConverter` with schemas off: compact JSON, the partition's members in its map's order,
//! `["jdbc-source",{"protocol":"1","table":"public.orders"}]`. Nearly every key of an offsets
//! topic has that layout with string and integer members, and matching it directly takes a
//! fraction of the general reader's walk (the key is read for every record). Anything else
//! (whitespace, a BOM, an escape, a number that is not a plain integer, a nested value, a
//! `null` partition, bytes after the array) is declined, and [`super::partition_key::view`]
//! reads the key in full. Every key this accepts reads the same both ways (the tests check it
//! against the general path over generated variations of the layout).

use alloc::borrow::Cow;
use alloc::vec::Vec;

use super::partition_key::PartitionView;
use crate::json::layout::Cursor;
use crate::json::{JsonValue, Members, Value};

/// The connector and partition a key in Java's layout names, or `None` to read it in full.
pub(super) fn read(bytes: &[u8]) -> Option<PartitionView<'_>> {
    let mut text = Cursor::new(bytes);
    text.literal(b"[\"")?;
    let connector = text.string()?;
    text.literal(b",{")?;
    let mut partition: Members<'_> = Vec::new();
    if text.literal(b"}").is_none() {
        loop {
            text.literal(b"\"")?;
            let name = text.string()?;
            text.literal(b":")?;
            let value = if text.literal(b"\"").is_some() {
                Value::String(Cow::Borrowed(text.string()?))
            } else {
                Value::Scalar(JsonValue::Long(text.integer()?))
            };
            // Repeated names are kept in document order, as the general reader keeps them.
            partition.push((Cow::Borrowed(name), value));
            if text.literal(b"}").is_some() {
                break;
            }
            text.literal(b",")?;
        }
    }
    text.literal(b"]")?;
    // The general reader ignores what follows the array; declining it keeps this reader's
    // promise simple (the whole key is Java's layout).
    text.at_end().then_some(PartitionView {
        connector: Cow::Borrowed(connector),
        partition,
    })
}

#[cfg(test)]
mod tests {
    use alloc::format;
    use alloc::string::String;
    use alloc::vec::Vec;

    use proptest::prelude::*;

    use super::read;
    use crate::json::layout::part;
    use crate::offsets::partition_key::{view_in_full, KeyView};

    fn name() -> BoxedStrategy<String> {
        part(
            &[r#""filename""#, r#""table""#, r#""é""#, r#""""#, r#""a b""#],
            &[
                r#""a\nb""#,
                r#""\u0061""#,
                r#""a\"b""#,
                "\"\u{1}\"",
                "null",
                "1",
                r#""unterminated"#,
            ],
        )
    }

    fn member_value() -> BoxedStrategy<String> {
        part(
            &[
                r#""/var/spool/a.csv""#,
                r#""1""#,
                r#""wörk""#,
                r#""""#,
                "0",
                "7",
                "-5",
                "999999999999999999",
                "-999999999999999999",
            ],
            &[
                "-0",
                "01",
                "-01",
                "1.0",
                "1e3",
                "9999999999999999999",
                "99999999999999999999999",
                "true",
                "null",
                "[]",
                r#"{"a":1}"#,
                r#""x\u00e9""#,
                "-",
                "",
            ],
        )
    }

    fn connector() -> BoxedStrategy<String> {
        part(
            &[
                r#""file-source-0001""#,
                r#""c""#,
                r#""""#,
                r#""connecteur é""#,
            ],
            &[r#""a\\b""#, "null", "7", r#"{"a":1}"#],
        )
    }

    /// Java's layout with its parts varied, members repeated, whitespace, a null or missing
    /// partition, another length, and bytes before or after the array.
    fn key() -> impl Strategy<Value = Vec<u8>> {
        (
            connector(),
            prop::collection::vec((name(), member_value()), 0..4),
            prop_oneof![6 => Just(0usize), 1 => 1usize..8],
            prop::sample::select(&["", " ", "x", "]", "\u{ff}"][..]),
        )
            .prop_map(|(connector, members, twist, after)| {
                let mut members: Vec<String> =
                    members.iter().map(|(n, v)| format!("{n}:{v}")).collect();
                if twist == 1 && !members.is_empty() {
                    members.push(members[0].clone());
                }
                let space = if twist == 2 { " " } else { "" };
                let partition = match twist {
                    3 => String::from("null"),
                    4 => String::from("[]"),
                    _ => format!("{{{}}}", members.join(&format!(",{space}"))),
                };
                let elements = match twist {
                    5 => format!("{connector},{partition},1"),
                    6 => connector.clone(),
                    _ => format!("{connector},{space}{partition}"),
                };
                let mut bytes = format!("[{elements}]{after}").into_bytes();
                if twist == 7 {
                    bytes.splice(0..0, [0xEF, 0xBB, 0xBF]);
                }
                bytes
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2_000))]

        /// What the layout reader accepts, the general reader reads the same.
        #[test]
        fn the_layout_reads_as_the_general_reader(bytes in key()) {
            if let Some(partition) = read(&bytes) {
                prop_assert_eq!(KeyView::Partition(partition), view_in_full(&bytes));
            }
        }
    }

    #[test]
    fn java_writes_what_the_layout_reads() {
        use crate::json::JsonValue;
        use crate::offsets::{offset_key, OrderedMap};
        let partitions = [
            OrderedMap::new([("filename", JsonValue::String("/data/é.csv".into()))]),
            OrderedMap::new([
                ("protocol", JsonValue::String("1".into())),
                ("table", JsonValue::String("public.orders".into())),
            ]),
            OrderedMap::new([
                ("topic", JsonValue::String("orders".into())),
                ("partition", JsonValue::Long(-3)),
            ]),
            OrderedMap::new([("offset", JsonValue::Long(i64::MAX / 10))]),
            OrderedMap::new::<&str>([]),
        ];
        for partition in partitions {
            let key = offset_key("file-source", Some(&partition)).expect("a valid partition");
            let read_here = read(&key).map(KeyView::Partition);
            assert_eq!(read_here, Some(view_in_full(&key)), "{partition:?}");
        }
        // An escape, a double, a boolean or a null partition: the general reader reads them.
        for key in [
            &br#"["a\tb",{"x":1}]"#[..],
            br#"["c",{"x":1.5}]"#,
            br#"["c",{"x":true}]"#,
            br#"["c",null]"#,
        ] {
            assert_eq!(read(key), None, "{}", String::from_utf8_lossy(key));
        }
    }
}
