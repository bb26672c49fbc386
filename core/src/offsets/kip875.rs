//! KIP-875: the per-connector offsets listing and the exact records of alter and reset requests
//! (spec §4.10), plus Java's precondition check.

use alloc::collections::btree_map::Entry;
use alloc::collections::{BTreeMap, BTreeSet};
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};

use super::ordered::{offset_key, offset_value, Content, FormatError, OrderedMap};
use super::{default_partition, OffsetSnapshot, StoredOffset};
use crate::config::{ConfigSnapshot, TargetState};
use crate::json::java_map::hash_map_order_by_hash;
use crate::json::{write_value, JsonObject, Natural};
use crate::plan::{ProducerKind, WritePlan};
use crate::record::ProducerRecord;

/// One entry of a listing: `{"partition": {...}, "offset": {...} | null}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectorOffset {
    /// The partition, in the member order Java would serialize it (its `HashMap` order).
    pub partition: OrderedMap,
    /// The stored offset, or `None`, in the member order Java's REST answer has (its
    /// `HashMap` order).
    pub offset: Option<OrderedMap>,
}

/// `GET /connectors/{c}/offsets` for a source connector: `{"offsets":[...]}`, sorted by
/// partition (Java's order is unspecified).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConnectorOffsets {
    /// The entries.
    pub offsets: Vec<ConnectorOffset>,
}

/// Lists a connector's offsets as the KIP-875 GET does: every known partition of the
/// connector, re-serialized in Java `HashMap` order and looked up by those key bytes. A
/// partition whose stored key used another member order therefore shows `"offset": null`, as
/// in Java (spec §6 item 2).
pub fn list(offsets: &OffsetSnapshot, connector: &str) -> ConnectorOffsets {
    let (partitions, _) = offsets.tracked_page(connector, 0, usize::MAX);
    listing(offsets, connector, likely_records(&partitions))
}

/// Tracked partitions (from [`OffsetSnapshot::tracked_page`]) as [`listing`] takes them.
fn likely_records<'a>(
    tracked: &'a [(OrderedMap, &'a StoredOffset)],
) -> impl Iterator<Item = (&'a OrderedMap, Option<&'a StoredOffset>)> {
    tracked
        .iter()
        .map(|(partition, stored)| (partition, Some(*stored)))
}

/// One page of [`list`]: the entries `skip..skip + take` of the listing, and how many
/// partitions the connector has. Only the page's partitions are re-serialized and looked up,
/// so a page of a connector with millions of partitions costs a sort of its keys.
pub fn list_page(
    offsets: &OffsetSnapshot,
    connector: &str,
    skip: usize,
    take: usize,
) -> (ConnectorOffsets, usize) {
    let (partitions, total) = offsets.tracked_page(connector, skip, take);
    (
        listing(offsets, connector, likely_records(&partitions)),
        total,
    )
}

/// Looks `partitions` up in `offsets` and sorts the entries by partition. A partition may come
/// with the record of `offsets` that likely holds it (see [`OffsetSnapshot::read_offsets`]).
fn listing<'a, 'p>(
    offsets: &'a OffsetSnapshot,
    connector: &str,
    partitions: impl IntoIterator<Item = (&'p OrderedMap, Option<&'a StoredOffset>)>,
) -> ConnectorOffsets {
    let (read, _omitted) = offsets.read_offsets(connector, partitions);
    let mut entries: Vec<ConnectorOffset> = read
        .into_iter()
        .map(|answer| {
            // Java's converter fills the offset's `HashMap` in the stored text's member order,
            // which decides the order of names that share a bucket (found by the oracle).
            let names = answer
                .record
                .and_then(|stored| super::partition_key::top_level_member_names(stored.value()))
                .unwrap_or_default();
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            ConnectorOffset {
                offset: answer.offset.map(|o| OrderedMap::java_hash_map(&o, &names)),
                partition: answer.partition,
            }
        })
        .collect();
    // Already in order when the partitions came sorted (a listing of one topic): the sort then
    // compares neighbours only.
    entries.sort_by(|a, b| a.partition.content().cmp(&b.partition.content()));
    ConnectorOffsets { offsets: entries }
}

/// The listing of a connector whose own offsets topic (`offsets.storage.topic`) is read next to
/// the worker's, as Java's `ConnectorOffsetBackingStore` with both stores gives it: the
/// partitions are the union of both topics' sets, and every offset is the **connector topic's**
/// answer, `null` included. Java overlays the connector store's result on the worker store's,
/// and the connector store answers every requested key, so the documented fallback to the
/// worker topic never supplies a value (spec §6 item 1); we keep that behaviour.
pub fn list_combined(
    connector_topic: &OffsetSnapshot,
    worker_topic: &OffsetSnapshot,
    connector: &str,
) -> ConnectorOffsets {
    let worker = worker_topic.connector_partitions_java_order(connector);
    let (own, _) = connector_topic.tracked_page(connector, 0, usize::MAX);
    let known: BTreeSet<Content<'_>> = worker.iter().map(OrderedMap::content).collect();
    let partitions = worker
        .iter()
        .map(|partition| (partition, None))
        .chain(likely_records(&own).filter(|(partition, _)| !known.contains(&partition.content())));
    listing(connector_topic, connector, partitions)
}

/// Where a record for `key` goes: the partition where the key's live record was read, so a
/// tombstone deletes it even when a non-murmur2 writer put it there; otherwise where Java's
/// default partitioner puts it. (A key whose history a mix of partitioners split across several
/// partitions keeps its older copies elsewhere: like Java's, this reader only knows the last.)
fn target_partition(offsets: &OffsetSnapshot, key: &[u8], topic_partitions: i32) -> Option<i32> {
    offsets
        .get(Some(key))
        .map(StoredOffset::partition)
        .or_else(|| default_partition(key, topic_partitions))
}

/// Why an alter or reset cannot be built. (Java's REST layer answers 404, 400 or 500; the CLI's
/// `rest` module maps each.)
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ModifyOffsetsError {
    /// The connector has no config.
    NotFound {
        /// The connector.
        connector: String,
    },
    /// The connector is not STOPPED with zero tasks.
    NotStopped {
        /// The connector.
        connector: String,
    },
    /// An alter request without offsets.
    NoOffsets,
    /// A partition or offset that Java's `validateFormat` rejects.
    InvalidFormat(FormatError),
    /// The offsets topic has no partitions to write to.
    NoTopicPartitions,
}

impl fmt::Display for ModifyOffsetsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotFound { connector } => write!(f, "Connector {connector} not found"),
            Self::NotStopped { connector } => write!(
                f,
                "Connectors must be in the STOPPED state before their offsets can be modified. \
                 This can be done for the specified connector by issuing a 'PUT' request to the \
                 '/connectors/{connector}/stop' endpoint"
            ),
            Self::NoOffsets => {
                f.write_str("Partitions / offsets need to be provided for an alter offsets request")
            }
            Self::InvalidFormat(e) => write!(f, "{e}"),
            Self::NoTopicPartitions => f.write_str("the offsets topic has no partitions"),
        }
    }
}

impl core::error::Error for ModifyOffsetsError {}

/// Java's precondition for alter and reset: the connector exists, its target state is STOPPED
/// and its task count is 0.
pub fn check_modifiable(
    config: &ConfigSnapshot,
    connector: &str,
) -> Result<(), ModifyOffsetsError> {
    if !config.contains(connector) {
        return Err(ModifyOffsetsError::NotFound {
            connector: connector.into(),
        });
    }
    if config.target_state(connector) != Some(TargetState::Stopped)
        || config.task_count(connector) != 0
    {
        return Err(ModifyOffsetsError::NotStopped {
            connector: connector.into(),
        });
    }
    Ok(())
}

/// Java's message when writing an alter or reset fails (`Worker.modifySourceConnectorOffsets`).
pub fn modify_error(connector: &str) -> String {
    alloc::format!("Failed to modify offsets for source connector {connector}")
}

/// [`reset_records`] as the write Java's worker makes: one batch (one transaction when the
/// worker has exactly-once source support: run it with `fenced`), not read back.
pub fn reset_plan(
    offsets: &OffsetSnapshot,
    connector: &str,
    topic_partitions: i32,
) -> Result<WritePlan, ModifyOffsetsError> {
    let records = reset_records(offsets, connector, topic_partitions)?;
    Ok(WritePlan::batch(
        ProducerKind::Privileged,
        records,
        false,
        modify_error(connector),
    ))
}

/// [`alter_records`] as the write Java's worker makes (see [`reset_plan`]).
pub fn alter_plan(
    offsets: &OffsetSnapshot,
    connector: &str,
    entries: &[(Option<OrderedMap>, Option<OrderedMap>)],
    topic_partitions: i32,
) -> Result<WritePlan, ModifyOffsetsError> {
    let records = alter_records(offsets, connector, entries, topic_partitions)?;
    Ok(WritePlan::batch(
        ProducerKind::Privileged,
        records,
        false,
        modify_error(connector),
    ))
}

/// The records of `DELETE /connectors/{c}/offsets`: one tombstone per known partition, keyed in
/// Java `HashMap` order. Empty when no partition is known (Java then writes nothing). Java
/// resets through the same path as an alter (a `HashMap` of every known partition to `null`,
/// validated and normalised in its hash order), so a known partition Java cannot write (one
/// holding a list or a map) refuses the reset as Java refuses it (found by the oracle). Check
/// [`check_modifiable`] first.
pub fn reset_records(
    offsets: &OffsetSnapshot,
    connector: &str,
    topic_partitions: i32,
) -> Result<Vec<ProducerRecord>, ModifyOffsetsError> {
    let entries: Vec<(Option<OrderedMap>, Option<OrderedMap>)> = offsets
        .connector_partitions_java_order(connector)
        .into_iter()
        .map(|p| (Some(p), None))
        .collect();
    if entries.is_empty() {
        return Ok(Vec::new());
    }
    alter_records(offsets, connector, &entries, topic_partitions)
}

/// The records of `PATCH /connectors/{c}/offsets`: each partition and offset normalised as Java
/// does (serialized and read back, so both are `HashMap`s: members in `HashMap` order), a `None`
/// offset being a tombstone. A `None` partition (`"partition": null` or none given) is keyed
/// `["c",null]` as Java keys it, although no reader takes such a key back. Check
/// [`check_modifiable`] first.
pub fn alter_records(
    offsets: &OffsetSnapshot,
    connector: &str,
    entries: &[(Option<OrderedMap>, Option<OrderedMap>)],
    topic_partitions: i32,
) -> Result<Vec<ProducerRecord>, ModifyOffsetsError> {
    if entries.is_empty() {
        return Err(ModifyOffsetsError::NoOffsets);
    }
    // Java collects the request into a `HashMap<Map, Map>` first (equal partitions collapse
    // into the first, holding the last offset), then validates what is left: an offset that a
    // later entry replaced is never validated (found by the Java oracle). Each slot is the
    // index of a partition's first entry and of its last; nothing is copied.
    let mut slots: Vec<(usize, usize)> = Vec::new();
    {
        let mut by_content: BTreeMap<Option<Content<'_>>, usize> = BTreeMap::new();
        for (i, (partition, _)) in entries.iter().enumerate() {
            match by_content.entry(partition.as_ref().map(OrderedMap::content)) {
                Entry::Vacant(vacant) => {
                    vacant.insert(slots.len());
                    slots.push((i, i));
                }
                Entry::Occupied(seen) => slots[*seen.get()].1 = i,
            }
        }
    }
    // Java iterates that `HashMap` in its hash order to validate and normalise each entry
    // (`Worker.normalizeSourceConnectorOffsets`: the partition, then the offset), so the first
    // invalid entry in that order is the one refused.
    let hashes: Vec<i32> = slots
        .iter()
        .map(|&(first, _)| entries[first].0.as_ref().map_or(0, OrderedMap::hash_code))
        .collect();
    let hash_order = hash_map_order_by_hash(&hashes);
    drop(hashes);
    for &slot in &hash_order {
        let (first, last) = slots[slot];
        for map in [&entries[first].0, &entries[last].1].into_iter().flatten() {
            map.validate().map_err(ModifyOffsetsError::InvalidFormat)?;
        }
    }
    // Java's second collapse: it puts each normalised entry into a new `HashMap` in that same
    // order, so partitions equal only once normalised (`-0.0` and `1e-400` both read back as
    // `0.0`) become one, holding the offset of the slot iterated last (found by the Java
    // oracle). The entries stay in request order (first occurrence).
    let partitions: Vec<Option<OrderedMap>> = slots
        .iter()
        .map(|&(first, _)| entries[first].0.as_ref().map(normalise))
        .collect();
    let mut winner: BTreeMap<Option<Content<'_>>, usize> = BTreeMap::new();
    for &slot in &hash_order {
        winner.insert(partitions[slot].as_ref().map(OrderedMap::content), slot);
    }
    drop(hash_order);
    let mut records = Vec::with_capacity(winner.len());
    for partition in &partitions {
        // The first slot of a normalised partition writes it, with the winner's offset.
        let Some(last) = winner.remove(&partition.as_ref().map(OrderedMap::content)) else {
            continue;
        };
        let offset = entries[slots[last].1].1.as_ref().map(normalise);
        records.push(record(
            offsets,
            connector,
            partition.as_ref(),
            offset.as_ref(),
            topic_partitions,
        )?);
    }
    Ok(records)
}

/// Java's normalisation round trip (`Worker.normalizeSourceConnectorOffsets`): the map is
/// written with `JsonConverter` and read back, so it becomes a `HashMap` filled in the order it
/// was written, and each value is what the converter reads from its own text (a `-0.0` comes
/// back as `0.0`: the converter reads decimals through `BigDecimal`, found by the Java oracle).
fn normalise(map: &OrderedMap) -> OrderedMap {
    let names: Vec<&str> = map.members().iter().map(|(n, _)| n.as_str()).collect();
    let reread: JsonObject = map
        .to_object()
        .into_iter()
        .map(|(name, value)| {
            let mut text = String::new();
            write_value(&mut text, &value);
            // Our writer's output always reads back; keep the value if it ever did not.
            let value = crate::json::parse(text.as_bytes())
                .ok()
                .flatten()
                .unwrap_or(value);
            (name, value)
        })
        .collect();
    OrderedMap::java_hash_map(&reread, &names)
}

/// The record that writes `offset` (`None`: a tombstone) for `partition`, on the partition of
/// the offsets topic where its key lives (or Java's partitioner puts it).
fn record(
    offsets: &OffsetSnapshot,
    connector: &str,
    partition: Option<&OrderedMap>,
    offset: Option<&OrderedMap>,
    topic_partitions: i32,
) -> Result<ProducerRecord, ModifyOffsetsError> {
    let key = offset_key(connector, partition).map_err(ModifyOffsetsError::InvalidFormat)?;
    let value = offset_value(offset).map_err(ModifyOffsetsError::InvalidFormat)?;
    let target = target_partition(offsets, &key, topic_partitions)
        .ok_or(ModifyOffsetsError::NoTopicPartitions)?;
    Ok(ProducerRecord {
        key,
        value,
        partition: Some(target),
    })
}

/// The success message of an alter (`reset == false`) or reset, when the connector's
/// `alterOffsets` returned `false` (the default), as Java words it.
pub fn success_message(reset: bool) -> String {
    let verb = if reset { "reset" } else { "altered" };
    format!(
        "The Connect framework-managed offsets for this connector have been {verb} successfully. \
         However, if this connector manages offsets externally, they will need to be manually \
         {verb} in the system that the connector uses."
    )
}

struct OrderedJson<'a>(&'a OrderedMap);

impl Serialize for OrderedJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.members().len()))?;
        for (name, value) in self.0.members() {
            map.serialize_entry(name, &Natural(value))?;
        }
        map.end()
    }
}

impl Serialize for ConnectorOffset {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(2))?;
        map.serialize_entry("partition", &OrderedJson(&self.partition))?;
        map.serialize_entry("offset", &self.offset.as_ref().map(OrderedJson))?;
        map.end()
    }
}

impl Serialize for ConnectorOffsets {
    /// `{"offsets":[{"partition":{...},"offset":{...}|null}]}`.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        struct Entries<'a>(&'a [ConnectorOffset]);
        impl Serialize for Entries<'_> {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let mut seq = s.serialize_seq(Some(self.0.len()))?;
                for e in self.0 {
                    seq.serialize_element(e)?;
                }
                seq.end()
            }
        }
        let mut map = s.serialize_map(Some(1))?;
        map.serialize_entry("offsets", &Entries(&self.offsets))?;
        map.end()
    }
}
