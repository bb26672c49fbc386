//! The offsets topic: [`OffsetLog`], the sans-IO equivalent of Java's `KafkaOffsetBackingStore`,
//! with the KIP-131 reader a source connector gets ([`OffsetSnapshot::offsets`]), KIP-875
//! listings, alter and reset record sets ([`kip875`]), and the buffered task writer
//! ([`OffsetWriter`]).
//!
//! Offsets are stored by **raw key bytes**, exactly as Java stores them: a lookup hits only when
//! the JSON text of `[connector, partition]` is byte-identical, member order included (spec
//! §4.9). [`OrderedMap`] carries a partition's member order for that reason.

mod history;
pub use history::OffsetBefore;
mod journal;
mod json_view;
mod key_layout;
pub mod kip875;
mod live;
mod loading;
mod murmur2;
mod ordered;
mod partition_key;
mod stack_bytes;
mod writer;

use alloc::borrow::Cow;
use alloc::collections::BTreeSet;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use serde::{Deserialize, Serialize};

pub use json_view::{OffsetEventJson, OffsetSnapshotJson, OffsetSnapshotJsonWith};
pub use live::StoredOffset;
pub use murmur2::{default_partition, murmur2, to_positive};
pub use ordered::{
    offset_key, offset_value, renamed_key, validate_value, Content, FormatError, OrderedMap,
};
pub use partition_key::KeyProblem;
pub use writer::{FlushBatch, FlushCompletion, OffsetWriter, WriterError, FLUSH_ERROR};

use crate::json::{self, JsonObject, JsonValue, Members};
use crate::machine::{Events, Topic, TopicLog};
use crate::name::Name;
use crate::persistent::{PSet, ToKey};
use crate::skips::SkipCounts;
use crate::sync::Arc;
use crate::TopicKind;
use crate::{Record, RecordError, RecordOutcome};
use live::LiveKeys;
use partition_key::{KeyShape, KeyView, PartitionKey};
use stack_bytes::StackBytes;

/// A source partition map as bytes: the bincode encoding of the map Java holds, members sorted
/// by name. The encoding is deterministic and exact (doubles by their bits), so two maps are
/// equal exactly when their encodings are; the slot hash is taken of it, so that equal
/// partitions in any member order share a slot (the partition sets live in the data map: see
/// [`live`]). Written from the members as read, without building the map.
fn compact_partition(partition: &Members<'_>) -> StackBytes<256> {
    // On the stack while it fits: a source partition map is a few dozen bytes, and the
    // offsets machine encodes one for every record.
    let mut encoding = StackBytes::default();
    // Strings, numbers, booleans, lists and maps into a writer that always takes them, with no
    // size limit configured: bincode has no error to report for them.
    bincode::serde::encode_into_writer(
        json::SortedObject(partition),
        &mut encoding,
        bincode::config::standard(),
    )
    .expect("bincode encodes a JSON map into a growing buffer without error");
    encoding
}

/// 32 bits of a hash, for slot hashes.
fn hash32(bytes: &[u8]) -> u32 {
    murmur2(bytes) as u32
}

/// The owned `[connector, {partition}]` key of `bytes`, read in full: for the rare records
/// whose slot hash another tracked key shares.
fn owned_partition_key(bytes: &[u8]) -> Option<PartitionKey> {
    match partition_key::classify(Some(bytes)) {
        KeyShape::Partition(key) => Some(key),
        KeyShape::NullPartition | KeyShape::Ignored(_) => None,
    }
}

/// Which live key added the partition of `bytes` (a `[connector, {partition}]` key) to its
/// connector's set, if the partition is in the set: `Some(true)` when it is `bytes` (the
/// record's own key) itself, `Some(false)` when it is another key with the same connector and
/// content (compared by parsing, among the tracked keys sharing the slot hash).
fn tracked_by(data: &LiveKeys, slot: u64, bytes: &[u8]) -> Option<bool> {
    let mut owned: Option<Option<PartitionKey>> = None;
    data.with_hash(slot)
        .filter(|stored| stored.is_tracked())
        .find_map(|stored| {
            if stored.key() == bytes {
                return Some(true);
            }
            // Another key with the slot hash (rare): compare contents as Java's maps.
            let key = owned.get_or_insert_with(|| owned_partition_key(bytes));
            same_partition(stored, key.as_ref()).then_some(false)
        })
}

/// Whether `stored`'s key names `key`'s connector and partition.
fn same_partition(stored: &StoredOffset, key: Option<&PartitionKey>) -> bool {
    key.is_some_and(|key| {
        matches!(
            partition_key::classify(Some(stored.key())),
            KeyShape::Partition(other)
                if other.connector == key.connector && other.partition == key.partition
        )
    })
}

/// The live key that added the partition of `bytes` to its connector's set, if the partition
/// is in the set (see [`tracked_by`]).
fn tracking_key(data: &LiveKeys, slot: u64, bytes: &[u8]) -> Option<Vec<u8>> {
    let mut owned: Option<Option<PartitionKey>> = None;
    data.with_hash(slot)
        .filter(|stored| stored.is_tracked())
        .find(|stored| {
            stored.key() == bytes
                || same_partition(
                    stored,
                    owned
                        .get_or_insert_with(|| owned_partition_key(bytes))
                        .as_ref(),
                )
        })
        .map(|stored| stored.key().to_vec())
}

/// The slot hash of a `[connector, {partition}]` key: the connector's 32 bits, then the
/// partition content's, so that a connector's keys sit together and equal partitions (in any
/// member order or spelling) share a slot hash.
fn partition_slot(connector: &str, partition: &Members<'_>) -> u64 {
    slot_of(connector, compact_partition(partition).bytes())
}

/// The slot hash of a connector and its partition's encoding ([`compact_partition`]).
fn slot_of(connector: &str, encoded_partition: &[u8]) -> u64 {
    (u64::from(hash32(connector.as_bytes())) << 32) | u64::from(hash32(encoded_partition))
}

/// What the apply step needs of a key's shape: for a `[connector, {partition}]` key, the
/// connector (the partition is read again, in full, only on a slot hash shared with another
/// tracked key).
enum KeyClass<'a> {
    /// `[connector, {partition}]`.
    Partition(Cow<'a, str>),
    /// `[connector, null]`.
    NullPartition,
    /// Any other key.
    Ignored,
}

/// How a key is classified for partition tracking, and its slot hash. A key in Java's layout
/// is encoded as it is read ([`key_layout::read_encoded`]); any other is read into its
/// members first.
fn classify_with_slot(key: Option<&[u8]>) -> (KeyClass<'_>, u64) {
    let mut encoding = StackBytes::default();
    if let Some(connector) = key.and_then(|key| key_layout::read_encoded(key, &mut encoding)) {
        let slot = slot_of(connector, encoding.bytes());
        return (KeyClass::Partition(Cow::Borrowed(connector)), slot);
    }
    match partition_key::view(key) {
        KeyView::Partition(k) => {
            let slot = partition_slot(&k.connector, &k.partition);
            (KeyClass::Partition(k.connector), slot)
        }
        shape => {
            let class = match shape {
                KeyView::NullPartition => KeyClass::NullPartition,
                _ => KeyClass::Ignored,
            };
            // Untracked keys are never looked up by content: any spread will do.
            (class, u64::from(hash32(key.unwrap_or_default())) << 32)
        }
    }
}

/// Java's consume callback's changes to the data map and the partition sets
/// (`processPartitionKey` step 7, then the byte-wise data map), for a record of `key` (slot
/// hash `slot`; `partition_key`: a `[connector, {partition}]` key) with `value` (`None`: a
/// tombstone) read at `position`. The apply step calls it for every record on the indexed and
/// shared forms, and a journal's settling for the records of keys sharing a slot hash.
fn apply_to_data(
    data: &mut LiveKeys,
    key: Option<&[u8]>,
    slot: u64,
    partition_key: bool,
    value: Option<&[u8]>,
    position: (i32, i64),
) {
    // The tracking below asks about the slot hash's other keys: a journal settles first (the
    // null key is kept apart from it).
    if key.is_some() {
        data.index_while_loading();
    }
    match value {
        Some(value) => {
            // The set gains the partition unless some key with its content already added it;
            // the key that did stays tracked. (Keys of other shapes are never tracked.)
            match (partition_key, key) {
                (true, Some(bytes)) => {
                    data.upsert_partition_key(bytes, slot, value, position, |data| {
                        tracked_by(data, slot, bytes).unwrap_or(true)
                    });
                }
                _ => data.upsert(key, slot, value, position, false),
            }
        }
        None => {
            // A tombstone: the partition leaves the set, whichever key added it.
            if let (true, Some(bytes)) = (partition_key, key) {
                if let Some(tracking) = tracking_key(data, slot, bytes) {
                    data.set_tracked(&tracking, slot, false);
                }
            }
            data.remove(key, slot);
        }
    }
}

/// The member names of `partition` in the key's order, or sorted when the key scanner could
/// not tell (it reports no order, or names that are not the map's).
fn names_in_order<'a>(partition: &'a JsonObject, order: &'a [String]) -> Vec<&'a str> {
    let sorted: Vec<&'a str> = partition.keys().map(String::as_str).collect();
    let mut listed: Vec<&str> = order.iter().map(String::as_str).collect();
    listed.sort_unstable();
    if listed != sorted {
        return sorted;
    }
    order.iter().map(String::as_str).collect()
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
struct Tables {
    /// Raw key bytes (`None`: a record without key) to the latest value; the tracked flags
    /// hold the connectors' partition sets (see [`live`]).
    data: LiveKeys,
    /// Connectors that have (or had) tracked partitions: Java's `connectorPartitions` keys.
    connectors: PSet<Name>,
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

/// What an [`OffsetSkip`] is counted under.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub enum OffsetSkipKind {
    /// [`OffsetSkip::Duplicate`].
    Duplicate,
}

impl fmt::Display for OffsetSkip {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Duplicate { next_expected } => {
                write!(f, "duplicate record (next expected offset {next_expected})")
            }
        }
    }
}

impl OffsetSkip {
    /// The kind this skip is counted under.
    pub fn kind(&self) -> OffsetSkipKind {
        match self {
            Self::Duplicate { .. } => OffsetSkipKind::Duplicate,
        }
    }
}

impl OffsetSkipKind {
    /// The kind's snake-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Duplicate => "duplicate",
        }
    }
}

crate::skips::skip_reason!(OffsetSkip, OffsetSkipKind);

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
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OffsetDiagnostics {
    skipped: SkipCounts<OffsetSkipKind>,
    untracked_keys: u64,
    null_partition_keys: u64,
}

impl OffsetDiagnostics {
    /// Records skipped, per reason.
    pub fn skipped(&self) -> &SkipCounts<OffsetSkipKind> {
        &self.skipped
    }

    /// Redelivered records dropped.
    pub fn duplicates(&self) -> u64 {
        self.skipped.get(OffsetSkipKind::Duplicate)
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

/// The offsets topic's own state, which [`OffsetLog`] drives: the data map, the connectors'
/// partition sets and the counters of keys Java does not track. Checkpoints hold it (with the
/// engine's positions and skip counters).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OffsetTopic {
    tables: Tables,
    untracked_keys: u64,
    null_partition_keys: u64,
}

impl OffsetTopic {
    /// Whether the live keys are still in a form for loading, journal or table (see [`live`]).
    #[cfg(test)]
    pub(crate) fn is_loading(&self) -> bool {
        self.tables.data.is_loading()
    }
}

/// The offsets-topic state machine. Same drive loop as
/// [`ConfigLog`](crate::config::ConfigLog): `handle_record`, then drain `poll_event`.
pub type OffsetLog = TopicLog<OffsetTopic>;

impl Topic for OffsetTopic {
    type Event = OffsetEvent;
    type Skip = OffsetSkip;
    type Snapshot = OffsetSnapshot;
    type Diagnostics = OffsetDiagnostics;
    const KIND: TopicKind = TopicKind::Offsets;

    /// Keys longer than Kafka's limit are refused before anything changes.
    fn check(record: &Record<'_>) -> Result<(), RecordError> {
        match record.key.map(<[u8]>::len) {
            Some(len) if len > live::MAX_KEY_LEN => Err(RecordError::KeyTooLong { len }),
            _ => Ok(()),
        }
    }

    /// Java's consume callback (spec §4.3): the partition tracking of `processPartitionKey`,
    /// then the byte-wise data map (a tombstone removes the key).
    fn apply(
        &mut self,
        record: &Record<'_>,
        events: &mut Events<'_, OffsetEvent>,
    ) -> Result<(), OffsetSkip> {
        let (shape, slot) = classify_with_slot(record.key);
        let connector = match shape {
            KeyClass::Partition(connector) => Some(connector),
            KeyClass::NullPartition => {
                self.null_partition_keys += 1;
                None
            }
            KeyClass::Ignored => {
                self.untracked_keys += 1;
                None
            }
        };
        if let Some(connector) = &connector {
            let connector = Name::key(connector);
            if !self.tables.connectors.contains(&connector) {
                self.tables.connectors.insert(connector.to_key());
            }
        }
        let data = &mut self.tables.data;
        let position = (record.partition, record.offset);
        match record.key {
            Some(key) if data.is_journaling() => data.journal(journal::KeyedWrite {
                key,
                slot,
                value: record.value,
                position,
                partition_key: connector.is_some(),
            }),
            key => apply_to_data(data, key, slot, connector.is_some(), record.value, position),
        }
        if events.enabled() {
            let (key, partition) = (record.key.map(<[u8]>::to_vec), record.partition);
            events.emit(|| match record.value {
                Some(_) => OffsetEvent::Updated { key, partition },
                None => OffsetEvent::Removed { key, partition },
            });
        }
        Ok(())
    }

    /// An immutable view: O(1) once caught up; before, the live keys are settled out of their
    /// journal (or sorted out of their loading table) into the view (O(n log n)).
    fn snapshot(&self) -> OffsetSnapshot {
        OffsetSnapshot(Arc::new(self.tables.clone()))
    }

    /// The live keys leave their form for loading (the journal settled, or the loading
    /// table sorted) for the persistent set snapshots share.
    fn caught_up(&mut self) {
        self.tables.data.share();
    }

    /// A history asks whether each record's key is live before applying it: the live keys
    /// move from the journal into the indexed loading table, which answers in one search.
    fn asked_while_loading(&mut self) {
        self.tables.data.index_while_loading();
    }

    fn diagnostics(&self, skipped: &SkipCounts<OffsetSkipKind>) -> OffsetDiagnostics {
        OffsetDiagnostics {
            skipped: skipped.clone(),
            untracked_keys: self.untracked_keys,
            null_partition_keys: self.null_partition_keys,
        }
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
        let (_, slot) = classify_with_slot(key);
        self.0.data.get(key, slot)
    }

    /// Every live key and its record, sorted by key bytes (a null key first). Sorts the keys
    /// first: O(n log n).
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
        self.0.connectors.iter().map(Name::as_str)
    }

    /// Java's `connectorPartitions(name)`: the connector's known partitions, sorted.
    pub fn connector_partitions(&self, connector: &str) -> impl Iterator<Item = JsonObject> {
        let mut partitions: Vec<JsonObject> = self
            .tracked(connector)
            .map(|(key, _)| key.partition)
            .collect();
        partitions.sort_unstable();
        partitions.into_iter()
    }

    /// The live records of the connector's partitions (those
    /// [`connector_partitions`](Self::connector_partitions) lists): each key's bytes and its stored record, sorted by
    /// key bytes. What a backup carries of the connector: the exact records to write again.
    pub fn connector_records(&self, connector: &str) -> Vec<(&[u8], &StoredOffset)> {
        let mut records: Vec<(&[u8], &StoredOffset)> = self
            .0
            .data
            .with_high_bits(hash32(connector.as_bytes()))
            .filter(|stored| stored.is_tracked())
            .filter(|stored| {
                matches!(
                    partition_key::view(Some(stored.key())),
                    partition_key::KeyView::Partition(key) if key.connector == connector
                )
            })
            .map(|stored| (stored.key(), stored))
            .collect();
        records.sort_unstable_by_key(|(key, _)| *key);
        records
    }

    /// The connector's partitions as Java re-serializes them (in `HashMap` order), sorted by
    /// content.
    pub fn connector_partitions_java_order(&self, connector: &str) -> Vec<OrderedMap> {
        self.connector_partitions_page(connector, 0, usize::MAX).0
    }

    /// The partitions `skip..skip + take` of
    /// [`connector_partitions_java_order`](Self::connector_partitions_java_order), and how many there are in all; only those are
    /// re-serialized.
    pub fn connector_partitions_page(
        &self,
        connector: &str,
        skip: usize,
        take: usize,
    ) -> (Vec<OrderedMap>, usize) {
        let (page, total) = self.tracked_page(connector, skip, take);
        (
            page.into_iter().map(|(partition, _)| partition).collect(),
            total,
        )
    }

    /// [`connector_partitions_page`](Self::connector_partitions_page), each partition with the
    /// record of the key that added it: the record a lookup of the partition finds when that
    /// key is already in Java's member order (see [`read_offsets`](Self::read_offsets)).
    pub(crate) fn tracked_page(
        &self,
        connector: &str,
        skip: usize,
        take: usize,
    ) -> (Vec<(OrderedMap, &StoredOffset)>, usize) {
        let mut tracked: Vec<(PartitionKey, &StoredOffset)> = self.tracked(connector).collect();
        tracked.sort_unstable_by(|a, b| a.0.partition.cmp(&b.0.partition));
        let page = tracked
            .iter()
            .skip(skip)
            .take(take)
            .map(|(k, stored)| {
                let order = partition_key::member_order(stored.key());
                let names = names_in_order(&k.partition, &order);
                (OrderedMap::java_hash_map(&k.partition, &names), *stored)
            })
            .collect();
        (page, tracked.len())
    }

    /// The connector's tracked partitions (each as the key that added it, and that key's
    /// record), in storage order.
    fn tracked<'a, 'c>(
        &'a self,
        connector: &'c str,
    ) -> impl Iterator<Item = (PartitionKey, &'a StoredOffset)> + use<'a, 'c> {
        self.0
            .data
            .with_high_bits(hash32(connector.as_bytes()))
            .filter(|stored| stored.is_tracked())
            .filter_map(
                move |stored| match partition_key::classify(Some(stored.key())) {
                    KeyShape::Partition(key) if key.connector == connector => Some((key, stored)),
                    _ => None,
                },
            )
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
        let (read, omitted) = self.read_offsets(connector, partitions.iter().map(|p| (p, None)));
        OffsetLookup {
            offsets: read
                .into_iter()
                .map(|answer| (answer.partition, answer.offset))
                .collect(),
            omitted,
        }
    }

    /// [`offsets`](Self::offsets), each answer with the record its offset was read from (the
    /// KIP-875 listing orders the offset's members by that record's text). A partition may come
    /// with a record of this snapshot that is likely the one under its key (the tracked key
    /// that added it): when the key bytes are that record's, the record is the answer without a
    /// search of the state.
    ///
    /// Both of Java's collapses (a key already looked up; a map equal to one already answered)
    /// find their earlier entry through a hash (the key's murmur2, the map's `hashCode`) and
    /// compare in full only on a tie: a connector's partitions share long prefixes, which an
    /// ordered set of keys or maps compared byte by byte at every step of every search.
    pub(crate) fn read_offsets<'a, 'p>(
        &'a self,
        connector: &str,
        partitions: impl IntoIterator<Item = (&'p OrderedMap, Option<&'a StoredOffset>)>,
    ) -> (Vec<ReadOffset<'a>>, Vec<(OrderedMap, Omitted)>) {
        let mut read: Vec<ReadOffset<'a>> = Vec::new();
        let mut omitted = Vec::new();
        let mut keys: Vec<Vec<u8>> = Vec::new();
        let mut key_index: BTreeSet<(i32, usize)> = BTreeSet::new();
        // Java's answer is a `HashMap` keyed by the requested maps: equal maps (in any member
        // order) collapse into the first one requested, holding the value read last.
        let mut content_index: BTreeSet<(i32, usize)> = BTreeSet::new();
        for (partition, likely) in partitions {
            let key = match offset_key(connector, Some(partition)) {
                Ok(key) => key,
                Err(e) => {
                    omitted.push((partition.clone(), Omitted::InvalidPartition(e)));
                    continue;
                }
            };
            let key_hash = murmur2(&key);
            let mut same_hash = key_index.range((key_hash, 0)..=(key_hash, usize::MAX));
            if same_hash.any(|&(_, i)| keys.get(i) == Some(&key)) {
                continue;
            }
            let record = match likely {
                Some(stored) if stored.key() == key.as_slice() => Some(stored),
                _ => self.get(Some(&key)),
            };
            key_index.insert((key_hash, keys.len()));
            keys.push(key);
            let offset = match record.map(|stored| read_offset(stored.value())) {
                None => None,
                Some(Ok(offset)) => offset,
                Some(Err(why)) => {
                    omitted.push((partition.clone(), why));
                    continue;
                }
            };
            let content_hash = partition.hash_code();
            let content = partition.content();
            let earlier = content_index
                .range((content_hash, 0)..=(content_hash, usize::MAX))
                .map(|&(_, i)| i)
                .find(|&i| {
                    read.get(i)
                        .is_some_and(|a| a.partition.content() == content)
                });
            match earlier.and_then(|i| read.get_mut(i)) {
                Some(answer) => {
                    answer.offset = offset;
                    answer.record = record;
                }
                None => {
                    content_index.insert((content_hash, read.len()));
                    read.push(ReadOffset {
                        partition: partition.clone(),
                        offset,
                        record,
                    });
                }
            }
        }
        (read, omitted)
    }
}

/// One answer of [`OffsetSnapshot::read_offsets`].
pub(crate) struct ReadOffset<'a> {
    /// The requested partition (the first of the equal ones).
    pub(crate) partition: OrderedMap,
    /// Its offset: `None` when nothing is stored or the value is null.
    pub(crate) offset: Option<JsonObject>,
    /// The record the offset was read from.
    pub(crate) record: Option<&'a StoredOffset>,
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

#[cfg(test)]
mod tests;
