//! The KIP-875 offsets document (`{"offsets":[{"partition":{..},"offset":{..}}]}`), read as
//! Java's REST layer reads a request body: member order kept, numbers as Jackson reads them.
//! `connect-state offsets import` reads its files with it; the write differential tests read
//! request bodies with it.

use engine::json::{JsonErrorKind, JsonValue};
use std::collections::BTreeMap;

use engine::offsets::{Content, OrderedMap};
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

/// An entry as read: the partition, or why Java refuses it; the offset, or why Java would
/// refuse it if it is validated.
type Read = (
    Result<Option<OrderedMap>, String>,
    Result<Option<OrderedMap>, String>,
);

/// The entries, each read as it is deserialized (its members' raw text is not kept).
struct Entries(Vec<Read>);

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
                    read.push((
                        entry.partition.map(ordered_map).transpose(),
                        entry.offset.map(ordered_map).transpose(),
                    ));
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
/// ([`engine::json::parse_rest`]), and what follows the document is ignored, as Jackson
/// ignores it. A value Java cannot hold in offsets (an integer beyond `long`, which Jackson
/// makes a `BigInteger`) is refused with Java's own message, unless it is in an offset a later
/// entry for the same partition replaces (Java collapses the request before it validates);
/// arrays and objects are refused later by the core, as Java refuses them. Each entry is
/// converted as it is read, and nothing is copied after.
pub fn parse_offsets_file(text: &str) -> Result<Vec<OffsetsEntry>, String> {
    let mut reader = serde_json::Deserializer::from_str(text);
    let file = OffsetsFile::deserialize(&mut reader).map_err(|e| {
        format!("not a KIP-875 offsets document ({{\"offsets\":[{{\"partition\":{{..}},\"offset\":{{..}}}}]}}): {e}")
    })?;
    // No entries (`[]` or `null`): the core refuses them with Java's message.
    let read = file.offsets.map(|entries| entries.0).unwrap_or_default();
    let mut partitions = Vec::with_capacity(read.len());
    let mut offsets = Vec::with_capacity(read.len());
    for (partition, offset) in read {
        partitions.push(partition?);
        offsets.push(offset);
    }
    // The last entry of each partition (by content) is the one Java validates.
    let last: BTreeMap<Option<Content<'_>>, usize> = partitions
        .iter()
        .enumerate()
        .map(|(i, p)| (p.as_ref().map(OrderedMap::content), i))
        .collect();
    let replaced: Vec<bool> = partitions
        .iter()
        .enumerate()
        .map(|(i, p)| last.get(&p.as_ref().map(OrderedMap::content)) != Some(&i))
        .collect();
    drop(last);
    partitions
        .into_iter()
        .zip(offsets)
        .zip(replaced)
        .map(|((partition, offset), replaced)| match offset {
            Ok(offset) => Ok((partition, offset)),
            Err(_) if replaced => Ok((partition, None)),
            Err(e) => Err(e),
        })
        .collect()
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
        Err(e) if e.kind == JsonErrorKind::IntegerBeyondLong => {
            // Java's `OffsetUtils.validateFormat`, which sees a `BigInteger`, or the list or
            // map holding one.
            let held = match text.trim_start().as_bytes().first() {
                Some(b'[') => "ARRAY".to_string(),
                Some(b'{') => "MAP".to_string(),
                _ => "class java.math.BigInteger".to_string(),
            };
            Err(format!(
                "Offsets may only contain primitive types as values, but field {name} contains \
                 {held}"
            ))
        }
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

    /// Issue 14: numbers as Java's REST layer reads them, checked against the Java oracle.
    #[test]
    fn numbers_are_read_as_java_reads_them_or_refused_with_javas_message() {
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
                first_offset_value(&body(beyond)).unwrap_err(),
                "Offsets may only contain primitive types as values, but field o contains \
                 class java.math.BigInteger",
                "{beyond}"
            );
        }
        let err = first_offset_value(&body("[18446744073709551615]")).unwrap_err();
        assert!(err.ends_with("field o contains ARRAY"), "{err}");
        let partition = r#"{"offsets":[{"partition":{"id":18446744073709551615},"offset":null}]}"#;
        assert!(parse_offsets_file(partition)
            .unwrap_err()
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
        assert_eq!(
            parse_offsets_file(replaced).unwrap()[1]
                .1
                .as_ref()
                .unwrap()
                .members()[0]
                .1,
            JsonValue::Long(2)
        );
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
