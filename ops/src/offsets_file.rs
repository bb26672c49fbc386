//! The KIP-875 offsets document (`{"offsets":[{"partition":{..},"offset":{..}}]}`), read as
//! Java's REST layer reads a request body: member order kept, numbers as Jackson reads them.
//! `connect-state offsets import` reads its files with it; the write differential tests read
//! request bodies with it.

use engine::json::JsonValue;
use engine::offsets::OrderedMap;
use serde::de::{Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;

/// A JSON object with its members in file order, each value's text as written.
struct Ordered(Vec<(String, Box<RawValue>)>);

impl<'de> Deserialize<'de> for Ordered {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Ordered;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Ordered, A::Error> {
                let mut members = Vec::new();
                while let Some((k, v)) = map.next_entry::<String, Box<RawValue>>()? {
                    members.push((k, v));
                }
                Ok(Ordered(members))
            }
        }
        d.deserialize_map(V)
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OffsetsFile {
    offsets: Option<Entries>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    #[serde(default)]
    partition: Option<Ordered>,
    #[serde(default)]
    offset: Option<Ordered>,
}

/// The entries, each converted as it is deserialized (its members' raw text is not kept).
struct Entries(Vec<OffsetsEntry>);

impl<'de> Deserialize<'de> for Entries {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Entries;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a list of offsets entries")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Entries, A::Error> {
                let mut read = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1 << 16));
                while let Some(entry) = seq.next_element::<Entry>()? {
                    let map = |m: Option<Ordered>| {
                        m.map(ordered_map)
                            .transpose()
                            .map_err(serde::de::Error::custom)
                    };
                    read.push((map(entry.partition)?, map(entry.offset)?));
                }
                Ok(Entries(read))
            }
        }
        d.deserialize_seq(V)
    }
}

/// One entry of a KIP-875 offsets document: the partition (`None`: `null` or not given) and
/// the offset (`None`: a tombstone).
pub type OffsetsEntry = (Option<OrderedMap>, Option<OrderedMap>);

/// Reads a KIP-875 offsets document as Connect's REST layer reads a `PATCH` body: objects keep
/// their member order, values are read as Jackson's default `ObjectMapper` reads them
/// ([`engine::json::parse_rest`]: an integer beyond `long` is a `BigInteger`), and what follows
/// the document is ignored, as Jackson ignores it. What Java refuses in offsets (a
/// `BigInteger`, a list, a map) is refused by the core's alter in Java's order, after Java's
/// collapse of the request (an offset a later entry replaces is never looked at).
pub fn parse_offsets_file(text: &str) -> Result<Vec<OffsetsEntry>, String> {
    let mut reader = serde_json::Deserializer::from_str(text);
    let file = OffsetsFile::deserialize(&mut reader).map_err(|e| {
        format!("not a KIP-875 offsets document ({{\"offsets\":[{{\"partition\":{{..}},\"offset\":{{..}}}}]}}): {e}")
    })?;
    // No entries (`[]` or `null`): the core refuses them with Java's message.
    Ok(file.offsets.map(|entries| entries.0).unwrap_or_default())
}

/// The object as Jackson's `LinkedHashMap`: a repeated name keeps its first position and its
/// last value, and only the values kept are read (a replaced one is never looked at).
fn ordered_map(object: Ordered) -> Result<OrderedMap, String> {
    let mut members: Vec<(String, Box<RawValue>)> = Vec::with_capacity(object.0.len());
    let mut index: std::collections::BTreeMap<String, usize> = std::collections::BTreeMap::new();
    for (name, raw) in object.0 {
        match index.get(&name) {
            Some(&at) => members[at].1 = raw,
            None => {
                index.insert(name.clone(), members.len());
                members.push((name, raw));
            }
        }
    }
    let members = members
        .into_iter()
        .map(|(name, raw)| {
            let value = java_value(&name, raw.get())?;
            Ok((name, value))
        })
        .collect::<Result<Vec<_>, String>>()?;
    Ok(OrderedMap::new(members))
}

/// The value of member `name`, as Java's REST layer reads `text`.
fn java_value(name: &str, text: &str) -> Result<JsonValue, String> {
    match engine::json::parse_rest(text.as_bytes()) {
        Ok(value) => Ok(value.unwrap_or(JsonValue::Null)),
        Err(e) => Err(format!("the value of {name:?}: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::json::JavaDouble;

    fn first_offset_value(text: &str) -> Result<JsonValue, String> {
        let entries = parse_offsets_file(text)?;
        Ok(entries[0].1.as_ref().unwrap().members()[0].1.clone())
    }

    #[test]
    fn offsets_files_keep_member_order_and_null_offsets() {
        let entries = parse_offsets_file(
            r#"{"offsets":[{"partition":{"z":1,"a":"x"},"offset":{"pos":2.5}},
                           {"partition":{"file":"b"},"offset":null},
                           {"partition":null,"offset":{"o":1}},
                           {"offset":{"o":1}}]}"#,
        )
        .unwrap();
        let partition = entries[0].0.as_ref().unwrap();
        let names: Vec<&str> = partition
            .members()
            .iter()
            .map(|(n, _)| n.as_str())
            .collect();
        assert_eq!(names, ["z", "a"]);
        assert_eq!(partition.members()[0].1, JsonValue::Long(1));
        assert!(matches!(
            entries[0].1.as_ref().unwrap().members()[0].1,
            JsonValue::Double(_)
        ));
        assert!(entries[1].1.is_none());
        // Java keys a null or missing partition `["c",null]`.
        assert!(entries[2].0.is_none() && entries[3].0.is_none());
    }

    #[test]
    fn offsets_files_read_decimals_exactly() {
        let value = first_offset_value(
            r#"{"offsets":[{"partition":{},"offset":{"f":7864155298368167.0}}]}"#,
        );
        assert_eq!(
            value,
            Ok(JsonValue::Double(JavaDouble::new(7_864_155_298_368_167.0)))
        );
    }

    /// The refusal of an alter of `text`, as the core's alter (after this reader) gives it.
    fn refusal(text: &str) -> Option<String> {
        let entries = parse_offsets_file(text).ok()?;
        let snapshot = engine::offsets::OffsetSnapshot::default();
        engine::offsets::kip875::alter_records(&snapshot, "c", &entries, 25)
            .err()
            .map(|e| e.to_string())
    }

    /// Issue 14: numbers as Java's REST layer reads them, checked against the Java oracle;
    /// issue 23: a `BigInteger` is refused in its member's turn (a list before it is refused
    /// first), after the collapse.
    #[test]
    fn numbers_are_read_as_java_reads_them_and_refused_in_javas_order() {
        let body = |value: &str| {
            format!(r#"{{"offsets":[{{"partition":{{}},"offset":{{"o":{value}}}}}]}}"#)
        };
        for beyond in [
            "18446744073709551615",
            "9223372036854775808",
            "-9223372036854775809",
            "123456789012345678901234567890",
        ] {
            assert_eq!(
                first_offset_value(&body(beyond)),
                Ok(JsonValue::BigInteger(beyond.into()))
            );
            assert_eq!(
                refusal(&body(beyond)).as_deref(),
                Some(
                    "Offsets may only contain primitive types as values, but field o contains \
                     class java.math.BigInteger"
                ),
                "{beyond}"
            );
        }
        let list = refusal(&body("[18446744073709551615]")).unwrap();
        assert!(list.ends_with("field o contains ARRAY"), "{list}");
        // Java's order: the list comes before the BigInteger in the offset (found by the oracle).
        let both =
            r#"{"offsets":[{"partition":null,"offset":{"f":[1],"g":18446744073709551615}}]}"#;
        assert!(refusal(both).unwrap().ends_with("field f contains ARRAY"));
        let partition = r#"{"offsets":[{"partition":{"id":18446744073709551615},"offset":null}]}"#;
        assert!(refusal(partition)
            .unwrap()
            .contains("field id contains class java.math.BigInteger"));
        assert_eq!(
            first_offset_value(&body("9223372036854775807")),
            Ok(JsonValue::Long(i64::MAX))
        );
        assert_eq!(first_offset_value(&body("-0")), Ok(JsonValue::Long(0)));
        assert_eq!(
            first_offset_value(&body("1e400")),
            Ok(JsonValue::Double(JavaDouble::new(f64::INFINITY)))
        );
        assert!(first_offset_value(&body("007")).is_err());
        // An offset a later entry for the same partition replaces is never validated by Java.
        let replaced = r#"{"offsets":[{"partition":{"f":1},"offset":{"o":18446744073709551615}},
                                     {"partition":{"f":1},"offset":{"o":2}}]}"#;
        assert_eq!(refusal(replaced), None);
        // Jackson ignores what follows the document.
        assert_eq!(
            first_offset_value(&format!("{} trailing", body("1"))),
            Ok(JsonValue::Long(1))
        );
    }

    #[test]
    fn malformed_offsets_files_say_what_is_expected() {
        for bad in [
            "",
            "[]",
            r#"{"offsets":{}}"#,
            r#"{"offsets":[{"partition":{},"x":1}]}"#,
            r#"{"offsets":[],"extra":1}"#,
        ] {
            let err = parse_offsets_file(bad).unwrap_err();
            assert!(err.contains("KIP-875"), "{bad}: {err}");
        }
        assert_eq!(parse_offsets_file(r#"{"offsets":null}"#), Ok(vec![]));
    }
}
