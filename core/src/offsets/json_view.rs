//! The stable JSON contract of the offsets snapshot (DESIGN.md, "Output").

use alloc::borrow::Cow;
use alloc::string::String;
use core::cell::RefCell;

use serde::ser::{Error as _, SerializeMap, SerializeSeq, SerializeStruct};
use serde::{Serialize, Serializer};

use super::kip875::{self, ConnectorOffsets};
use super::OffsetSnapshot;
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
                key: key.map(String::from_utf8_lossy),
                value: String::from_utf8_lossy(stored.value()),
            })?;
        }
        seq.end()
    }
}

/// One live key, its text borrowed from the record unless invalid UTF-8 had to be replaced.
struct EntryJson<'a> {
    partition: i32,
    key: Option<Cow<'a, str>>,
    value: Cow<'a, str>,
}

impl Serialize for EntryJson<'_> {
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

/// Each connector's KIP-875 listing, in [`OffsetSnapshot::connectors`] order, from `listing`.
struct Listings<'a, F>(&'a OffsetSnapshot, RefCell<F>);

impl<F: FnMut(&str) -> Option<ConnectorOffsets>> Serialize for Listings<'_, F> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        let mut listing = self.1.borrow_mut();
        for connector in self.0.connectors() {
            let Some(offsets) = listing(connector) else {
                return Err(S::Error::custom(
                    "the connectors' listings ended before the connectors",
                ));
            };
            map.serialize_entry(connector, &offsets)?;
        }
        map.end()
    }
}

/// The snapshot document, its listings from `listing`.
fn serialize_snapshot<S: Serializer>(
    snapshot: &OffsetSnapshot,
    listing: impl FnMut(&str) -> Option<ConnectorOffsets>,
    s: S,
) -> Result<S::Ok, S::Error> {
    let mut st = s.serialize_struct("OffsetSnapshot", 3)?;
    st.serialize_field("entries", &Entries(snapshot))?;
    st.serialize_field("connector_partitions", &Partitions(snapshot))?;
    st.serialize_field("connectors", &Listings(snapshot, RefCell::new(listing)))?;
    st.end()
}

impl Serialize for OffsetSnapshotJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        serialize_snapshot(self.0, |connector| Some(kip875::list(self.0, connector)), s)
    }
}

/// [`OffsetSnapshotJson`] with the connectors' KIP-875 listings given instead of computed as
/// they are written: `listings` yields [`kip875::list`] of each connector of
/// [`OffsetSnapshot::connectors`], in that order (a caller computes them on other threads
/// meanwhile: the listings are most of the time a large snapshot takes to write). The document
/// is the same; serializing it fails if `listings` ends before the connectors do. Serialize it
/// once: the listings are taken as they are written.
pub struct OffsetSnapshotJsonWith<'a, I> {
    snapshot: &'a OffsetSnapshot,
    listings: RefCell<I>,
}

impl<'a, I: Iterator<Item = ConnectorOffsets>> OffsetSnapshotJsonWith<'a, I> {
    /// The document of `snapshot` with `listings` as its connectors' listings.
    pub fn new(snapshot: &'a OffsetSnapshot, listings: I) -> Self {
        Self {
            snapshot,
            listings: RefCell::new(listings),
        }
    }
}

impl<I: Iterator<Item = ConnectorOffsets>> Serialize for OffsetSnapshotJsonWith<'_, I> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut listings = self.listings.borrow_mut();
        serialize_snapshot(self.snapshot, |_| listings.next(), s)
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
