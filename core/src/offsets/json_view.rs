//! The stable JSON contract of the offsets snapshot (DESIGN.md, "Output").

use alloc::string::String;

use serde::ser::{SerializeMap, SerializeSeq, SerializeStruct};
use serde::{Serialize, Serializer};

use super::{kip875, OffsetSnapshot};
use crate::json::{JsonObject, Natural};

/// Serializes an [`OffsetSnapshot`] as
/// `{"entries": [{"partition", "key", "value"}], "connector_partitions": {...}, "connectors": {...}}`:
/// live raw keys sorted by key (key and value as text; invalid UTF-8 replaced by U+FFFD),
/// every tracked partition per connector, and each connector's KIP-875 listing.
#[derive(Debug, Clone, Copy)]
pub struct OffsetSnapshotJson<'a>(pub &'a OffsetSnapshot);

struct Entries<'a>(&'a OffsetSnapshot);

impl Serialize for Entries<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.0.len()))?;
        for (key, stored) in self.0.entries() {
            seq.serialize_element(&EntryJson {
                partition: stored.partition(),
                key: key.map(|k| String::from_utf8_lossy(k).into_owned()),
                value: String::from_utf8_lossy(stored.value()).into_owned(),
            })?;
        }
        seq.end()
    }
}

struct EntryJson {
    partition: i32,
    key: Option<String>,
    value: String,
}

impl Serialize for EntryJson {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("Entry", 3)?;
        st.serialize_field("partition", &self.partition)?;
        st.serialize_field("key", &self.key)?;
        st.serialize_field("value", &self.value)?;
        st.end()
    }
}

struct ObjectJson<'a>(&'a JsonObject);

impl Serialize for ObjectJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (name, value) in self.0 {
            map.serialize_entry(name, &Natural(value))?;
        }
        map.end()
    }
}

struct Partitions<'a>(&'a OffsetSnapshot);

impl Serialize for Partitions<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        for connector in self.0.connectors() {
            let partitions: alloc::vec::Vec<JsonObject> =
                self.0.connector_partitions(connector).collect();
            let list: alloc::vec::Vec<ObjectJson<'_>> = partitions.iter().map(ObjectJson).collect();
            map.serialize_entry(connector, &list)?;
        }
        map.end()
    }
}

struct Listings<'a>(&'a OffsetSnapshot);

impl Serialize for Listings<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        for connector in self.0.connectors() {
            map.serialize_entry(connector, &kip875::list(self.0, connector))?;
        }
        map.end()
    }
}

impl Serialize for OffsetSnapshotJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("OffsetSnapshot", 3)?;
        st.serialize_field("entries", &Entries(self.0))?;
        st.serialize_field("connector_partitions", &Partitions(self.0))?;
        st.serialize_field("connectors", &Listings(self.0))?;
        st.end()
    }
}

/// Serializes an [`OffsetEvent`](super::OffsetEvent) as
/// `{"type":"offset_updated"|"offset_removed","partition":P,"key":"<key text>"|null}`.
#[derive(Debug, Clone, Copy)]
pub struct OffsetEventJson<'a>(pub &'a super::OffsetEvent);

impl Serialize for OffsetEventJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let (kind, key, partition) = match self.0 {
            super::OffsetEvent::Updated { key, partition } => ("offset_updated", key, partition),
            super::OffsetEvent::Removed { key, partition } => ("offset_removed", key, partition),
        };
        let mut st = s.serialize_struct("OffsetEvent", 3)?;
        st.serialize_field("type", kind)?;
        st.serialize_field("partition", partition)?;
        st.serialize_field(
            "key",
            &key.as_ref()
                .map(|k| String::from_utf8_lossy(k).into_owned()),
        )?;
        st.end()
    }
}
