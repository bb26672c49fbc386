//! The offsets topic: [`OffsetLog`], the sans-IO equivalent of Java's `KafkaOffsetBackingStore`,
//! with the KIP-131 reader a source connector gets ([`OffsetSnapshot::offsets`]), KIP-875
//! listings, alter and reset record sets ([`kip875`]), and the buffered task writer
//! ([`OffsetWriter`]).
//!
//! Offsets are stored by **raw key bytes**, exactly as Java stores them: a lookup hits only when
//! the JSON text of `[connector, partition]` is byte-identical, member order included (spec
//! §4.9). [`OrderedMap`] carries a partition's member order for that reason.

mod json_view;
pub mod kip875;
mod live;
mod murmur2;
mod ordered;
mod partition_key;
mod writer;

use alloc::boxed::Box;
use alloc::collections::{BTreeMap, BTreeSet, VecDeque};
use alloc::string::String;
use alloc::vec::Vec;

use serde::{Deserialize, Serialize};

pub use json_view::{OffsetEventJson, OffsetSnapshotJson};
pub use live::StoredOffset;
pub use murmur2::{default_partition, murmur2, to_positive};
pub use ordered::{offset_key, offset_value, validate_value, FormatError, OrderedMap};
pub use partition_key::KeyProblem;
pub use writer::{FlushBatch, FlushCompletion, OffsetWriter, WriterError};

use crate::checkpoint::{self, CheckpointError, TopicKind};
use crate::json::{self, JsonObject, JsonValue};
use crate::position::{Position, Positions};
use crate::sync::Arc;
use crate::{Record, RecordError, RecordOutcome};
use live::LiveKeys;
use partition_key::KeyShape;

/// The known source partitions of one connector (Java: `Set<Map<String, Object>>`, compared with
/// `Map.equals`), each with the member order of the key that first added it, which decides the
/// Java `HashMap` order it is serialized in again.
///
/// Stored compactly, since a topic can hold millions: a partition is its
/// [`CompactPartition`] encoding (equal maps have equal bytes), its member order a permutation
/// of the sorted member names (empty when the key had them sorted).
type PartitionSet = BTreeMap<CompactPartition, Box<[u32]>>;

/// A source partition map as bytes: its bincode encoding, members sorted by name. The encoding
/// is deterministic and exact (doubles by their bits), so two maps are equal exactly when their
/// encodings are.
type CompactPartition = Box<[u8]>;

fn compact_partition(partition: &JsonObject) -> CompactPartition {
    // A map of strings, numbers, booleans, lists and maps: bincode cannot fail on it.
    bincode::serde::encode_to_vec(partition, bincode::config::standard())
        .unwrap_or_default()
        .into_boxed_slice()
}

fn expand_partition(bytes: &[u8]) -> Option<JsonObject> {
    bincode::serde::decode_from_slice(bytes, bincode::config::standard())
        .ok()
        .map(|(partition, _)| partition)
}

/// The permutation taking the sorted member names of `partition` to `names`, or an empty one
/// when they are sorted already (or are not the map's names, which the key scanner reports
/// only for keys it could not scan: sorted order is then the fallback, as before).
fn member_permutation(partition: &JsonObject, names: &[String]) -> Box<[u32]> {
    let sorted: Vec<&String> = partition.keys().collect();
    if names.len() != sorted.len() || names.iter().zip(&sorted).all(|(a, b)| a == *b) {
        return Box::default();
    }
    names
        .iter()
        .map(|n| sorted.iter().position(|s| *s == n).map(|i| i as u32))
        .collect::<Option<Box<[u32]>>>()
        .unwrap_or_default()
}

/// The member names of `partition` in the order `permutation` records.
fn names_in_order<'a>(partition: &'a JsonObject, permutation: &[u32]) -> Vec<&'a str> {
    let sorted: Vec<&'a str> = partition.keys().map(String::as_str).collect();
    if permutation.len() != sorted.len() {
        return sorted;
    }
    permutation
        .iter()
        .map(|&i| sorted.get(i as usize).copied().unwrap_or_default())
        .collect()
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
struct Tables {
    /// Raw key bytes (`None`: a record without key) to the latest value.
    data: Arc<LiveKeys>,
    connector_partitions: Arc<BTreeMap<String, Arc<PartitionSet>>>,
}

/// What handling an offsets record did. Every record is applied (the data map is updated byte
/// by byte, whatever the key); only duplicates are skipped.
pub type OffsetOutcome = RecordOutcome<OffsetSkip>;

/// Why an offsets record was not applied.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum OffsetSkip {
    /// Below the next expected offset of its partition: a redelivery.
    Duplicate {
        /// The partition's next expected offset.
        next_expected: i64,
    },
}

/// A change to the live offsets, queued once the reader is caught up (Java has no listener for
/// this topic; the events are additive).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum OffsetEvent {
    /// A key got a new value.
    Updated {
        /// The raw key.
        key: Option<Vec<u8>>,
        /// The topic partition it was read from.
        partition: i32,
    },
    /// A tombstone removed a key.
    Removed {
        /// The raw key.
        key: Option<Vec<u8>>,
        /// The topic partition it was read from.
        partition: i32,
    },
}

/// Diagnostics of an offsets reader.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OffsetDiagnostics {
    duplicates: u64,
    untracked_keys: u64,
    null_partition_keys: u64,
}

impl OffsetDiagnostics {
    /// Redelivered records dropped.
    pub fn duplicates(&self) -> u64 {
        self.duplicates
    }

    /// Records whose key Java's `processPartitionKey` warns about and does not track (not JSON,
    /// not a `[name, map]` list, ...). Their bytes are still stored, as in Java.
    pub fn untracked_keys(&self) -> u64 {
        self.untracked_keys
    }

    /// Records with a `[name, null]` key (tracked nowhere, silently, as in Java).
    pub fn null_partition_keys(&self) -> u64 {
        self.null_partition_keys
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
struct MachineState {
    tables: Tables,
    positions: Positions,
    diagnostics: OffsetDiagnostics,
}

/// The offsets-topic state machine. Same drive loop as
/// [`ConfigLog`](crate::config::ConfigLog): `handle_record`, then drain `poll_event`.
#[derive(Debug, Clone, Default)]
pub struct OffsetLog {
    state: MachineState,
    caught_up: bool,
    events: VecDeque<OffsetEvent>,
}

impl OffsetLog {
    /// A reader at the start of every partition, not caught up.
    pub fn new() -> Self {
        Self::default()
    }

    /// Marks the start-up read to the end offsets as done: later records queue events.
    pub fn mark_caught_up(&mut self) {
        self.caught_up = true;
    }

    /// Whether [`mark_caught_up`](Self::mark_caught_up) was called.
    pub fn is_caught_up(&self) -> bool {
        self.caught_up
    }

    /// Applies one record as Java's consume callback does (spec §4.3): the partition tracking of
    /// `processPartitionKey`, then the byte-wise data map (a tombstone removes the key).
    ///
    /// Call it for every record, in offset order within each partition (any interleaving of
    /// partitions). Drain [`poll_event`](Self::poll_event) afterwards. On `Err` nothing changed.
    pub fn handle_record(&mut self, record: Record<'_>) -> Result<OffsetOutcome, RecordError> {
        check_key(&record)?;
        if let Position::Duplicate { next_expected } = self.state.positions.advance(&record)? {
            self.state.diagnostics.duplicates += 1;
            return Ok(RecordOutcome::Skipped(OffsetSkip::Duplicate {
                next_expected,
            }));
        }
        self.track_partition(&record);
        let data = Arc::make_mut(&mut self.state.tables.data);
        match record.value {
            Some(value) => {
                let key = record.key.unwrap_or_default();
                // Checked by `check_key` before anything changed.
                if let Some(stored) = StoredOffset::new(key, value, record.partition, record.offset)
                {
                    data.insert(record.key, stored);
                }
            }
            None => data.remove(record.key),
        }
        if self.caught_up {
            let (key, partition) = (record.key.map(<[u8]>::to_vec), record.partition);
            self.events.push_back(match record.value {
                Some(_) => OffsetEvent::Updated { key, partition },
                None => OffsetEvent::Removed { key, partition },
            });
        }
        Ok(RecordOutcome::Applied)
    }

    /// `processPartitionKey` step 7: add or remove the partition in the connector's set.
    fn track_partition(&mut self, record: &Record<'_>) {
        match partition_key::classify(record.key) {
            KeyShape::Partition(key) => {
                let sets = Arc::make_mut(&mut self.state.tables.connector_partitions);
                let set = Arc::make_mut(sets.entry(key.connector).or_default());
                let compact = compact_partition(&key.partition);
                if record.value.is_some() {
                    set.entry(compact)
                        .or_insert_with(|| member_permutation(&key.partition, &key.member_order));
                } else {
                    set.remove(&compact);
                }
            }
            KeyShape::NullPartition => self.state.diagnostics.null_partition_keys += 1,
            KeyShape::Ignored(_) => self.state.diagnostics.untracked_keys += 1,
        }
    }

    /// The next event, oldest first.
    #[must_use]
    pub fn poll_event(&mut self) -> Option<OffsetEvent> {
        self.events.pop_front()
    }

    /// An immutable view, O(1).
    pub fn snapshot(&self) -> OffsetSnapshot {
        OffsetSnapshot(Arc::new(self.state.tables.clone()))
    }

    /// The next offset to fetch from `partition`.
    pub fn next_fetch_offset(&self, partition: i32) -> i64 {
        self.state.positions.next_offset(partition)
    }

    /// Diagnostics beyond Java's state.
    pub fn diagnostics(&self) -> &OffsetDiagnostics {
        &self.state.diagnostics
    }

    /// The whole machine as a versioned, checksummed checkpoint.
    pub fn checkpoint(&self) -> Vec<u8> {
        checkpoint::encode(TopicKind::Offsets, &self.state, None)
    }

    /// [`checkpoint`](Self::checkpoint) stamped with the caller's time (ms), so that
    /// [`checkpoint::check_fresh`](crate::checkpoint::check_fresh) can refuse it once it is older
    /// than the topic's tombstone retention.
    pub fn checkpoint_at(&self, taken_at_ms: i64) -> Vec<u8> {
        checkpoint::encode(TopicKind::Offsets, &self.state, Some(taken_at_ms))
    }

    /// Restores a reader from a checkpoint; it is not caught up.
    pub fn restore(bytes: &[u8]) -> Result<Self, CheckpointError> {
        Ok(Self {
            state: checkpoint::decode(TopicKind::Offsets, bytes)?,
            caught_up: false,
            events: VecDeque::new(),
        })
    }
}

/// An immutable view of the offsets topic. O(1) to clone.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OffsetSnapshot(Arc<Tables>);

/// Why the reader left a requested partition out of its answer (Java logs these as CRITICAL).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Omitted {
    /// The partition could not be serialized into a key.
    InvalidPartition(FormatError),
    /// The stored value is not JSON.
    ValueNotJson,
    /// The stored value is not null or a map of primitives.
    InvalidValue(FormatError),
}

/// What `OffsetStorageReader.offsets(partitions)` returns, plus what it left out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OffsetLookup {
    /// Each requested partition (duplicates by key bytes collapsed, first kept) and its offset,
    /// `None` when nothing is stored.
    pub offsets: Vec<(OrderedMap, Option<JsonObject>)>,
    /// Partitions left out, and why.
    pub omitted: Vec<(OrderedMap, Omitted)>,
}

impl OffsetSnapshot {
    /// The latest value stored under exactly these key bytes.
    pub fn get(&self, key: Option<&[u8]>) -> Option<&StoredOffset> {
        self.0.data.get(key)
    }

    /// Every live key and its record, sorted by key bytes (a null key first).
    pub fn entries(&self) -> impl Iterator<Item = (Option<&[u8]>, &StoredOffset)> + '_ {
        self.0.data.iter()
    }

    /// How many keys are live.
    pub fn len(&self) -> usize {
        self.0.data.len()
    }

    /// Whether no key is live.
    pub fn is_empty(&self) -> bool {
        self.0.data.len() == 0
    }

    /// Connectors that have (or had) tracked partitions.
    pub fn connectors(&self) -> impl Iterator<Item = &str> + '_ {
        self.0.connector_partitions.keys().map(String::as_str)
    }

    /// Java's `connectorPartitions(name)`: the connector's known partitions, sorted.
    pub fn connector_partitions(&self, connector: &str) -> impl Iterator<Item = JsonObject> {
        let mut partitions: Vec<JsonObject> = self
            .tracked(connector)
            .map(|(partition, _)| partition)
            .collect();
        partitions.sort_unstable();
        partitions.into_iter()
    }

    /// The connector's partitions as Java re-serializes them (in `HashMap` order), sorted by
    /// content.
    pub fn connector_partitions_java_order(&self, connector: &str) -> Vec<OrderedMap> {
        let mut tracked: Vec<(JsonObject, &[u32])> = self.tracked(connector).collect();
        tracked.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        tracked
            .iter()
            .map(|(p, permutation)| OrderedMap::java_hash_map(p, &names_in_order(p, permutation)))
            .collect()
    }

    /// The connector's tracked partitions, expanded, in storage order.
    fn tracked(&self, connector: &str) -> impl Iterator<Item = (JsonObject, &[u32])> + '_ {
        self.0
            .connector_partitions
            .get(connector)
            .into_iter()
            .flat_map(|set| set.iter())
            .filter_map(|(p, permutation)| Some((expand_partition(p)?, &**permutation)))
    }

    /// `OffsetStorageReader.offset(partition)` for `connector` (KIP-131): `None` when nothing is
    /// stored, when the value is null, or when it cannot be read.
    pub fn offset(&self, connector: &str, partition: &OrderedMap) -> Option<JsonObject> {
        self.offsets(connector, core::slice::from_ref(partition))
            .offsets
            .into_iter()
            .next()
            .and_then(|(_, offset)| offset)
    }

    /// `OffsetStorageReader.offsets(partitions)` for `connector` (KIP-131, spec §4.6): each
    /// partition is serialized in its own member order and looked up by exact key bytes.
    pub fn offsets(&self, connector: &str, partitions: &[OrderedMap]) -> OffsetLookup {
        let mut lookup = OffsetLookup::default();
        let mut seen_keys: BTreeSet<Vec<u8>> = BTreeSet::new();
        // Java's answer is a `HashMap` keyed by the requested maps: equal maps (in any member
        // order) collapse into the first one requested, holding the value read last.
        let mut by_content: BTreeMap<JsonObject, usize> = BTreeMap::new();
        for partition in partitions {
            let key = match offset_key(connector, Some(partition)) {
                Ok(key) => key,
                Err(e) => {
                    lookup
                        .omitted
                        .push((partition.clone(), Omitted::InvalidPartition(e)));
                    continue;
                }
            };
            if !seen_keys.insert(key.clone()) {
                continue;
            }
            let offset = match self.get(Some(&key)) {
                None => Ok(None),
                Some(stored) => read_offset(stored.value()),
            };
            match offset {
                Ok(offset) => {
                    let content = partition.to_object();
                    match by_content
                        .get(&content)
                        .and_then(|&i| lookup.offsets.get_mut(i))
                    {
                        Some(slot) => slot.1 = offset,
                        None => {
                            by_content.insert(content, lookup.offsets.len());
                            lookup.offsets.push((partition.clone(), offset));
                        }
                    }
                }
                Err(why) => lookup.omitted.push((partition.clone(), why)),
            }
        }
        lookup
    }
}

/// Converts stored value bytes as the reader does: JSON, then null or a map of primitives.
fn read_offset(value: &[u8]) -> Result<Option<JsonObject>, Omitted> {
    match json::parse(value) {
        Err(_) => Err(Omitted::ValueNotJson),
        Ok(None | Some(JsonValue::Null)) => Ok(None),
        Ok(Some(v)) => {
            validate_value(&v).map_err(Omitted::InvalidValue)?;
            match v {
                JsonValue::Object(map) => Ok(Some(map)),
                _ => Err(Omitted::InvalidValue(FormatError::NotAMap)),
            }
        }
    }
}

/// Refuses a key longer than Kafka allows (its length is a 32-bit field on the wire), which
/// the compact storage cannot hold.
fn check_key(record: &Record<'_>) -> Result<(), RecordError> {
    match record.key.map(<[u8]>::len) {
        Some(len) if u32::try_from(len).is_err() => Err(RecordError::KeyTooLong { len }),
        _ => Ok(()),
    }
}

crate::machine::delegate_topic_machine!(OffsetLog, OffsetEvent, OffsetSkip, OffsetSnapshot);

#[cfg(test)]
mod tests;
