//! Source partitions and offsets as Java serializes them: maps whose member order is the order
//! of the Java `Map` being written (spec §4.1, §4.9), and `OffsetUtils.validateFormat`.

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use super::partition_key::{self, KeyShape};
use crate::json::java_map::hash_map_order;
use crate::json::{write_str, write_value, JsonObject, JsonValue};

/// An [`OrderedMap`]'s members sorted by name, borrowed: equal and ordered exactly as the
/// maps' [`OrderedMap::to_object`]s are (names are distinct).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Content<'a>(Vec<&'a (String, JsonValue)>);

/// A map with a member order: a source partition or an offset as a Java `Map` iterates it.
///
/// Java matches offsets by the exact key bytes, so the member order of a partition decides which
/// record a lookup hits. Build one with [`OrderedMap::new`] for the caller's own order (a
/// connector's `LinkedHashMap`), or [`OrderedMap::java_hash_map`] for a map that came from JSON
/// (Java's `JsonConverter` builds a `HashMap`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct OrderedMap {
    members: Vec<(String, JsonValue)>,
}

impl OrderedMap {
    /// Members in the given order. A repeated name keeps its first position and its last value,
    /// as `LinkedHashMap.put` does.
    pub fn new<K: Into<String>>(members: impl IntoIterator<Item = (K, JsonValue)>) -> Self {
        let members = members.into_iter();
        let mut out: Vec<(String, JsonValue)> = Vec::with_capacity(members.size_hint().0);
        let mut index: BTreeMap<String, usize> = BTreeMap::new();
        for (name, value) in members {
            let name = name.into();
            match index.get(&name).and_then(|&i| out.get_mut(i)) {
                Some(slot) => slot.1 = value,
                None => {
                    index.insert(name.clone(), out.len());
                    out.push((name, value));
                }
            }
        }
        // A source partition is held per entry, millions at a time: no spare room.
        out.shrink_to_fit();
        Self { members: out }
    }

    /// The members of `object` in the iteration order of a Java `HashMap` filled by `put` in
    /// `insertion_order` (names of `object`; names missing from it are appended in sorted order).
    pub fn java_hash_map(object: &JsonObject, insertion_order: &[&str]) -> Self {
        // `hash_map_order` keeps the first occurrence of a repeated name.
        let names: Vec<&str> = insertion_order
            .iter()
            .copied()
            .filter(|n| object.contains_key(*n))
            .chain(object.keys().map(String::as_str))
            .collect();
        let mut members: Vec<(String, JsonValue)> = hash_map_order(&names)
            .into_iter()
            .filter_map(|i| {
                let name = *names.get(i)?;
                Some((String::from(name), object.get(name)?.clone()))
            })
            .collect();
        members.shrink_to_fit();
        Self { members }
    }

    /// The members, in order.
    pub fn members(&self) -> &[(String, JsonValue)] {
        &self.members
    }

    /// The same members as an (unordered) object, for order-insensitive comparison: Java's
    /// `Map.equals`.
    pub fn to_object(&self) -> JsonObject {
        self.members.iter().cloned().collect()
    }

    /// The map's content without its order, borrowed: compares as [`OrderedMap::to_object`]
    /// does (Java's `Map.equals`) without copying a member.
    pub fn content(&self) -> Content<'_> {
        let mut members: Vec<&(String, JsonValue)> = self.members.iter().collect();
        members.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        Content(members)
    }

    /// Java's `Map.hashCode()` of the map (Jackson's values).
    pub fn hash_code(&self) -> i32 {
        crate::json::java_map::members_hash_code(self.members.iter().map(|(n, v)| (n, v)))
    }

    /// Appends the map as compact JSON in member order, as Jackson writes a Java map.
    pub(crate) fn write_json(&self, out: &mut String) {
        out.push('{');
        for (i, (name, value)) in self.members.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            write_str(out, name);
            out.push(':');
            write_value(out, value);
        }
        out.push('}');
    }

    /// `OffsetUtils.validateFormat` for a map: every value is null or primitive.
    pub fn validate(&self) -> Result<(), FormatError> {
        for (name, value) in &self.members {
            let kind = match value {
                JsonValue::Array(_) => "ARRAY",
                JsonValue::Object(_) => "MAP",
                // A value Connect has no schema type for: Java names its class.
                JsonValue::BigInteger(_) => "class java.math.BigInteger",
                _ => continue,
            };
            return Err(FormatError::NonPrimitiveValue {
                field: name.clone(),
                kind,
            });
        }
        Ok(())
    }
}

/// A partition or offset that `OffsetUtils.validateFormat` rejects, with Java's message.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum FormatError {
    /// Not a map (Java: "Offsets must be specified as a Map").
    NotAMap,
    /// A nested map or list value.
    NonPrimitiveValue {
        /// The member holding it.
        field: String,
        /// Connect's schema type of the value (`MAP` or `ARRAY`), or its Java class where it
        /// has none (`class java.math.BigInteger`).
        kind: &'static str,
    },
}

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotAMap => f.write_str("Offsets must be specified as a Map"),
            Self::NonPrimitiveValue { field, kind } => write!(
                f,
                "Offsets may only contain primitive types as values, but field {field} contains {kind}"
            ),
        }
    }
}

impl core::error::Error for FormatError {}

/// `OffsetUtils.validateFormat` for a value as JSON gave it: null or a map of primitives.
pub fn validate_value(value: &JsonValue) -> Result<(), FormatError> {
    match value {
        JsonValue::Null => Ok(()),
        // Java validates the map the converter built: a `HashMap`, in its iteration order.
        JsonValue::Object(members) => OrderedMap::java_hash_map(members, &[]).validate(),
        _ => Err(FormatError::NotAMap),
    }
}

/// The key bytes of `[connector, partition]`, as Java's converter writes them: compact JSON, the
/// partition's members in its order, `null` for no partition. Validates the partition first.
pub fn offset_key(connector: &str, partition: Option<&OrderedMap>) -> Result<Vec<u8>, FormatError> {
    // Room for the usual key (a connector name, a member or two) without growing.
    let mut out = String::with_capacity(connector.len() + 96);
    out.push('[');
    write_str(&mut out, connector);
    out.push(',');
    match partition {
        Some(p) => {
            p.validate()?;
            p.write_json(&mut out);
        }
        None => out.push_str("null"),
    }
    out.push(']');
    Ok(out.into_bytes())
}

/// The key of the same source partition for another connector: `[connector, partition]` with
/// the partition's members in the order `key` lists them (first occurrences, the last value of
/// a repeated name), as the connector's tasks write it (their map's order is the one the key
/// was written in). `None` when `key` is not `[name, {partition}]` or the partition is one Java
/// cannot write (a member holding a list or a map).
pub fn renamed_key(key: &[u8], connector: &str) -> Option<Vec<u8>> {
    let KeyShape::Partition(parsed) = partition_key::classify(Some(key)) else {
        return None;
    };
    let names = partition_key::member_order(key);
    let members = names
        .into_iter()
        .filter_map(|name| parsed.partition.get(&name).cloned().map(|v| (name, v)));
    offset_key(connector, Some(&OrderedMap::new(members))).ok()
}

/// The value bytes of an offset (`None` for a tombstone). Validates it first.
pub fn offset_value(offset: Option<&OrderedMap>) -> Result<Option<Vec<u8>>, FormatError> {
    let Some(offset) = offset else {
        return Ok(None);
    };
    offset.validate()?;
    let mut out = String::new();
    offset.write_json(&mut out);
    Ok(Some(out.into_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    fn s(v: &str) -> JsonValue {
        JsonValue::String(v.into())
    }

    #[test]
    fn keys_keep_the_callers_order() {
        let p = OrderedMap::new([("filename", s("orders.csv"))]);
        assert_eq!(
            offset_key("my-file-source", Some(&p)).unwrap(),
            br#"["my-file-source",{"filename":"orders.csv"}]"#
        );
        assert_eq!(offset_key("conn", None).unwrap(), br#"["conn",null]"#);
        let p = OrderedMap::new([
            ("b", JsonValue::Long(1)),
            ("a", JsonValue::Null),
            ("b", JsonValue::Long(2)),
        ]);
        assert_eq!(
            offset_key("c", Some(&p)).unwrap(),
            br#"["c",{"b":2,"a":null}]"#
        );
    }

    #[test]
    fn json_maps_use_java_hash_map_order() {
        let mut obj = JsonObject::new();
        obj.insert("kafka_topic".into(), s("t"));
        obj.insert("kafka_partition".into(), JsonValue::Long(3));
        let p = OrderedMap::java_hash_map(&obj, &["kafka_topic", "kafka_partition"]);
        assert_eq!(
            offset_key("sink", Some(&p)).unwrap(),
            br#"["sink",{"kafka_partition":3,"kafka_topic":"t"}]"#
        );
        let mut obj = JsonObject::new();
        for k in ["database", "table", "shard"] {
            obj.insert(k.into(), JsonValue::Long(0));
        }
        let map = OrderedMap::java_hash_map(&obj, &["database", "table", "shard"]);
        let names: Vec<&str> = map.members().iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["database", "shard", "table"]);
    }

    #[test]
    fn validation_has_javas_messages() {
        let nested = OrderedMap::new([("a", JsonValue::Array(Vec::new()))]);
        assert_eq!(
            offset_key("c", Some(&nested)).unwrap_err().to_string(),
            "Offsets may only contain primitive types as values, but field a contains ARRAY"
        );
        assert_eq!(
            validate_value(&JsonValue::Long(1)),
            Err(FormatError::NotAMap)
        );
        assert_eq!(validate_value(&JsonValue::Null), Ok(()));
        assert_eq!(
            FormatError::NotAMap.to_string(),
            "Offsets must be specified as a Map"
        );
        assert_eq!(offset_value(None).unwrap(), None);
        let pos = OrderedMap::new([("position", JsonValue::Long(20))]);
        assert_eq!(
            offset_value(Some(&pos)).unwrap().unwrap(),
            br#"{"position":20}"#
        );
    }
}
