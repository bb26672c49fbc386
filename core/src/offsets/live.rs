//! [`LiveKeys`]: the offsets topic's data map (raw key bytes to the latest record), stored with
//! one allocation per key, grouped by a hash of what the key means.
//!
//! Java keeps the data map and, per connector, the set of source partitions it has seen
//! (`connectorPartitions`). Storing that set apart would cost as much again as the data, so it
//! lives in the data map: every key carries a *slot hash* (for a `[connector, {partition}]` key,
//! 32 bits of the connector name and 32 of the partition's content, so equal partitions and a
//! connector's keys sit together) and a *tracked* flag, set on the key that added its partition
//! to the set. A partition is in its connector's set exactly when one live key with its content
//! is tracked (the key that added it stays live until a tombstone for that content removes the
//! partition from the set too).

use alloc::vec::Vec;
use core::cmp::Ordering;
use core::fmt;
use core::ops::Bound;

use serde::{Deserialize, Serialize};
use triomphe::ThinArc;

use crate::checkpoint::ByteString;
use crate::persistent::{Comparable, PSet};

use super::journal::{Journal, KeyedWrite};
use super::loading::{Declined, Full, LoadingTable};
use super::stack_bytes::StackBytes;

/// The longest key the storage holds: Kafka's own limit (a key length is an `int32`).
pub(crate) const MAX_KEY_LEN: usize = i32::MAX as usize;
/// The tracked flag, kept in the top bit of the key length (keys are at most `i32::MAX`
/// bytes): Java's per-connector partition sets cost no separate map, which keeps the bench's
/// `offsets_memory_ratio` row (1.89x) under its 2x goal; a set apart would cost about as much
/// as the data again.
const TRACKED: u32 = 1 << 31;
/// The slot hash's length in a checkpoint, where it leads the key and value bytes.
const HASH_LEN: usize = 8;

/// The record of one live key: where it lives, and its key and raw value bytes (kept in one
/// buffer, since a topic can hold millions).
///
/// Sixteen bytes in a tree node: the slot hash and one thin pointer. Everything else is in the
/// pointer's one allocation, so the nodes a snapshot shares and a write copies stay small.
#[derive(Clone)]
pub struct StoredOffset {
    /// The slot hash, beside the entry in the tree node: a lookup's linear scan of a node
    /// compares hashes without following any entry's pointer, and reads the key bytes only on
    /// a hash tie.
    hash: u64,
    /// Where the record was read and how its bytes split ([`Place`]), then the key bytes and
    /// the value bytes.
    ///
    /// Reference-counted: a write after a snapshot copies the tree nodes on its path, and each
    /// entry of a copied node is then a count, not a copy of its bytes (the bench's
    /// `tail_with_snapshot_ratio` went from 3.7x with a `Box` to 2.2x). `triomphe`'s thin
    /// pointer keeps the length in the allocation (one word in the node instead of two) and
    /// has no weak count: the offsets state fell from 223 to about 205 bytes per live entry.
    record: ThinArc<Place, u8>,
}

/// Where a live key's latest record was read, and where its key ends in the bytes.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Place {
    /// The record's offset in its partition.
    offset: i64,
    /// The key length; the top bit is the tracked flag.
    key_len: u32,
    /// The record's topic partition.
    partition: i32,
}

// What the nodes hold per entry (see `record`).
const _: () = assert!(core::mem::size_of::<StoredOffset>() == 16);

impl PartialEq for StoredOffset {
    fn eq(&self, other: &Self) -> bool {
        self.hash == other.hash
            && self.record.header.header == other.record.header.header
            && self.record.slice == other.record.slice
    }
}

impl Eq for StoredOffset {}

impl StoredOffset {
    /// A record of `key` and `value` read at `offset` of `partition`, with its tracked flag
    /// set as given (in the one allocation: a record that becomes tracked is not copied).
    pub(super) fn new(
        hash: u64,
        key: &[u8],
        value: &[u8],
        (partition, offset): (i32, i64),
        tracked: bool,
    ) -> Option<Self> {
        let key_len = u32::try_from(key.len())
            .ok()
            .filter(|len| len & TRACKED == 0)?;
        let place = Place {
            offset,
            key_len: if tracked { key_len | TRACKED } else { key_len },
            partition,
        };
        // Key and value side by side on the stack (most records are a few hundred bytes),
        // then one copy into the allocation: triomphe's iterator constructor wrote the bytes
        // one at a time.
        let mut bytes = StackBytes::<512>::default();
        bytes.push(key);
        bytes.push(value);
        Some(Self {
            hash,
            record: ThinArc::from_header_and_slice(place, bytes.bytes()),
        })
    }

    /// A record of `place` over `bytes` (key, then value), if the key length fits them.
    fn from_parts(hash: u64, place: Place, bytes: &[u8]) -> Option<Self> {
        let key_len = (place.key_len & !TRACKED) as usize;
        (key_len <= bytes.len()).then(|| Self {
            hash,
            record: ThinArc::from_header_and_slice(place, bytes),
        })
    }

    fn place(&self) -> Place {
        self.record.header.header
    }

    // The accessors below slice without fallbacks: `new` and `from_parts` build the bytes as
    // key, then value, and refuse a key length beyond them, so an out-of-range slice is a bug
    // here and panics rather than reading as empty.

    /// The topic partition the latest record of the key was read from.
    pub fn partition(&self) -> i32 {
        self.place().partition
    }

    /// That record's offset in its partition.
    pub fn offset(&self) -> i64 {
        self.place().offset
    }

    /// The raw value bytes.
    pub fn value(&self) -> &[u8] {
        &self.record.slice[self.key_end()..]
    }

    /// The raw key bytes (empty for the null key).
    pub(crate) fn key(&self) -> &[u8] {
        &self.record.slice[..self.key_end()]
    }

    /// Whether this key added its partition to its connector's set.
    pub(crate) fn is_tracked(&self) -> bool {
        self.place().key_len & TRACKED != 0
    }

    /// The same record with the tracked flag set or cleared: a new allocation when the flag
    /// changes (rare: a tracked key's content tombstoned while another key holds it).
    fn with_tracked(self, tracked: bool) -> Self {
        if self.is_tracked() == tracked {
            return self;
        }
        let mut place = self.place();
        place.key_len = if tracked {
            place.key_len | TRACKED
        } else {
            place.key_len & !TRACKED
        };
        Self {
            hash: self.hash,
            record: ThinArc::from_header_and_slice(place, &self.record.slice),
        }
    }

    /// The same record in a new allocation (see [`settle`](super::journal::settle)).
    pub(super) fn copied(&self) -> Self {
        Self {
            hash: self.hash,
            record: ThinArc::from_header_and_slice(self.place(), &self.record.slice),
        }
    }

    fn key_end(&self) -> usize {
        (self.place().key_len & !TRACKED) as usize
    }

    /// The slot hash.
    pub(super) fn slot_hash(&self) -> u64 {
        self.hash
    }

    /// Whether this is the record of `key`, whose slot hash is `hash`.
    pub(super) fn is(&self, hash: u64, key: &[u8]) -> bool {
        self.hash == hash && self.key() == key
    }

    /// The storage order: by slot hash, then key bytes (read only on a hash tie).
    pub(super) fn slot_order(&self, other: &Self) -> Ordering {
        self.hash
            .cmp(&other.hash)
            .then_with(|| self.key().cmp(other.key()))
    }
}

impl fmt::Debug for StoredOffset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StoredOffset")
            .field("partition", &self.partition())
            .field("offset", &self.offset())
            .field("value", &self.value())
            .field("tracked", &self.is_tracked())
            .finish()
    }
}

/// A [`StoredOffset`] ordered by its slot hash, then its key bytes, for the set.
#[derive(Clone)]
struct BySlot(StoredOffset);

impl PartialEq for BySlot {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for BySlot {}

impl PartialOrd for BySlot {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for BySlot {
    /// The hashes first; either record's key bytes (behind a pointer, most often not in the
    /// cache) are read only on a tie: a build's check that the sorted records are in order
    /// read every key when this took the left one's key first.
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.slot_order(&other.0)
    }
}

/// A slot hash and key bytes to find among the stored entries: the hash first (an integer,
/// held beside each entry in the tree node), the key bytes (in the entry's allocation) only on
/// a tie.
#[derive(Clone, Copy)]
struct SlotOf<'a> {
    hash: u64,
    key: &'a [u8],
}

impl Comparable<BySlot> for SlotOf<'_> {
    fn compare(&self, stored: &BySlot) -> Ordering {
        self.hash
            .cmp(&stored.0.hash)
            .then_with(|| self.key.cmp(stored.0.key()))
    }
}

/// Raw key bytes (`None`: a record without key) to the latest record, grouped by slot hash.
/// Equality compares keys, records and tracked flags (not the form the records are held in).
#[derive(Default)]
pub(crate) struct LiveKeys {
    null_key: Option<StoredOffset>,
    keyed: Keyed,
}

/// Where the keyed records are held.
enum Keyed {
    /// While the topic is read from its start: the records in read order, settled at the
    /// catch-up (see [`Journal`]).
    Journal(Journal),
    /// While the topic is read from its start by a reader that asks about keys record by
    /// record (a history telling each record): a hash table, fast to write and never shared
    /// (see [`LoadingTable`]).
    Loading(LoadingTable),
    /// Once caught up ([`LiveKeys::share`]), or restored from a checkpoint: the persistent
    /// set, which snapshots share in O(1) and a write copies only the path of.
    Shared(PSet<BySlot>),
}

impl Default for Keyed {
    fn default() -> Self {
        Self::Journal(Journal::default())
    }
}

/// One of three iterators over the same items, for methods that read any form.
enum Forms<J, L, S> {
    Journal(J),
    Loading(L),
    Shared(S),
}

impl<T, J, L, S> Iterator for Forms<J, L, S>
where
    J: Iterator<Item = T>,
    L: Iterator<Item = T>,
    S: Iterator<Item = T>,
{
    type Item = T;

    fn next(&mut self) -> Option<T> {
        match self {
            Self::Journal(records) => records.next(),
            Self::Loading(records) => records.next(),
            Self::Shared(records) => records.next(),
        }
    }

    /// Exact when all are: a checkpoint's sequence of live keys is written with its length.
    fn size_hint(&self) -> (usize, Option<usize>) {
        match self {
            Self::Journal(records) => records.size_hint(),
            Self::Loading(records) => records.size_hint(),
            Self::Shared(records) => records.size_hint(),
        }
    }
}

impl LiveKeys {
    /// Empty, in the indexed form for loading: for a reader that asks about keys record by
    /// record while the topic is read from its start (see [`index_while_loading`]).
    ///
    /// [`index_while_loading`]: Self::index_while_loading
    pub(crate) fn indexed() -> Self {
        Self {
            null_key: None,
            keyed: Keyed::Loading(LoadingTable::default()),
        }
    }

    /// Moves the keyed records into the persistent set (the journal settled, or the loading
    /// table sorted, then built in one pass: O(n log n), once). Call it when the start-up
    /// read is caught up; from then on snapshots are O(1). Later calls change nothing.
    pub(crate) fn share(&mut self) {
        let sorted = match &mut self.keyed {
            Keyed::Journal(journal) => core::mem::take(journal).settle(),
            Keyed::Loading(table) => core::mem::take(table).into_sorted(),
            Keyed::Shared(_) => return,
        };
        self.keyed = Keyed::Shared(sorted.into_iter().map(BySlot).collect());
    }

    /// Moves journaled records into the indexed loading table, so that the reads of a reader
    /// asking about keys record by record ([`get`](Self::get), [`with_hash`](Self::with_hash))
    /// take one search each. Call it before the first record; the shared form stays as it is.
    pub(crate) fn index_while_loading(&mut self) {
        if let Keyed::Journal(journal) = &mut self.keyed {
            let mut table = LoadingTable::default();
            for record in core::mem::take(journal).settle() {
                if let Err(Full(record)) = table.put(record) {
                    // Four billion keys: the set takes them from here.
                    let mut records = table.into_sorted();
                    records.push(record);
                    self.keyed = Keyed::Shared(records.into_iter().map(BySlot).collect());
                    return;
                }
            }
            self.keyed = Keyed::Loading(table);
        }
    }

    /// Whether records go to the journal ([`journal`](Self::journal)) rather than through
    /// [`upsert`](Self::upsert), [`upsert_partition_key`](Self::upsert_partition_key) and
    /// [`remove`](Self::remove).
    pub(crate) fn is_journaling(&self) -> bool {
        matches!(self.keyed, Keyed::Journal(_))
    }

    /// Appends `write` to the journal; the partition tracking is settled with the journal
    /// (see [`Journal`]). Call it while [`is_journaling`](Self::is_journaling) (otherwise, and
    /// past the journal's size, the record is applied as the apply step applies it); for the
    /// null key use `upsert` and `remove`.
    pub(crate) fn journal(&mut self, write: KeyedWrite<'_>) {
        if let Keyed::Journal(journal) = &mut self.keyed {
            if journal.append(&write).is_ok() {
                return;
            }
            // Four billion records: the indexed table takes them from here.
            self.index_while_loading();
        }
        let KeyedWrite {
            key,
            slot,
            value,
            position,
            partition_key,
        } = write;
        super::apply_to_data(self, Some(key), slot, partition_key, value, position);
    }

    /// The keyed records, sorted in the persistent set's order (by slot hash, then key
    /// bytes): the journal settled, the loading table sorted, the set's own order.
    pub(super) fn into_sorted_keyed(self) -> Vec<StoredOffset> {
        match self.keyed {
            Keyed::Journal(journal) => journal.settle(),
            Keyed::Loading(table) => table.into_sorted(),
            Keyed::Shared(set) => set.iter().map(|e| e.0.clone()).collect(),
        }
    }

    /// Calls `f` with the keyed records in storage order (by slot hash, then key bytes): the
    /// set's own order, the loading table sorted, or a copy of the journal settled (exact
    /// tracked flags: for clones, comparisons and checkpoints).
    fn with_storage_order<R>(
        &self,
        f: impl FnOnce(&mut dyn Iterator<Item = &StoredOffset>) -> R,
    ) -> R {
        match &self.keyed {
            Keyed::Journal(journal) => {
                let settled = super::journal::settle(journal.entries().to_vec());
                f(&mut settled.iter())
            }
            Keyed::Loading(table) => f(&mut table.sorted().into_iter()),
            Keyed::Shared(set) => f(&mut set.iter().map(|e| &e.0)),
        }
    }

    /// Whether the keyed records are still in a form for loading (journal or table).
    #[cfg(test)]
    pub(crate) fn is_loading(&self) -> bool {
        !matches!(self.keyed, Keyed::Shared(_))
    }

    /// The latest journaled record of each live key among `entries` (read order), in no
    /// particular order: what the readers answer while journaling (a scan; nothing reads the
    /// keys record by record then, see [`index_while_loading`](Self::index_while_loading)).
    /// The tracked flags are those the records were journaled with, exact except where keys
    /// share a slot hash: the tracking is settled with the journal, and the changes that
    /// depend on it ([`upsert_partition_key`](Self::upsert_partition_key),
    /// [`set_tracked`](Self::set_tracked)) settle the journal into the table first.
    fn journaled_live<'a>(
        entries: impl Iterator<Item = &'a super::journal::Entry>,
    ) -> Vec<&'a StoredOffset> {
        let mut latest: Vec<(usize, &super::journal::Entry)> = entries.enumerate().collect();
        // By key, the latest record last.
        latest.sort_by(|(i, a), (j, b)| a.record.slot_order(&b.record).then_with(|| i.cmp(j)));
        let mut live = Vec::new();
        for (at, (_, entry)) in latest.iter().enumerate() {
            let last_of_key = latest
                .get(at + 1)
                .is_none_or(|(_, next)| next.record.slot_order(&entry.record).is_ne());
            if last_of_key && !entry.tombstone {
                live.push(&entry.record);
            }
        }
        live
    }

    /// The latest record of `key`, whose slot hash is `hash`.
    pub(crate) fn get(&self, key: Option<&[u8]>, hash: u64) -> Option<&StoredOffset> {
        match (key, &self.keyed) {
            (None, _) => self.null_key.as_ref(),
            (Some(key), Keyed::Journal(journal)) => journal
                .entries()
                .iter()
                .rev()
                .find(|entry| entry.record.is(hash, key))
                .filter(|entry| !entry.tombstone)
                .map(|entry| &entry.record),
            (Some(key), Keyed::Loading(table)) => table.get(hash, key),
            (Some(key), Keyed::Shared(set)) => set.get(&SlotOf { hash, key }).map(|e| &e.0),
        }
    }

    /// Stores `record` under its key bytes, replacing the key's record.
    fn put(&mut self, record: StoredOffset) {
        match &mut self.keyed {
            Keyed::Journal(_) => {
                self.index_while_loading();
                self.put(record);
            }
            Keyed::Loading(table) => {
                if let Err(Full(record)) = table.put(record) {
                    // Four billion keys: the set takes them from here.
                    self.share();
                    self.put(record);
                }
            }
            // One search: an insert replaces the stored entry of an equal slot.
            Keyed::Shared(set) => {
                set.insert(BySlot(record));
            }
        }
    }

    /// Stores a new record of `key` (slot hash `hash`), replacing the key's record and
    /// tracked flag. Keys longer than [`MAX_KEY_LEN`] are refused before this is called.
    pub(crate) fn upsert(
        &mut self,
        key: Option<&[u8]>,
        hash: u64,
        value: &[u8],
        position: (i32, i64),
        tracked: bool,
    ) {
        let Some(record) =
            StoredOffset::new(hash, key.unwrap_or_default(), value, position, tracked)
        else {
            return;
        };
        match key {
            None => self.null_key = Some(record),
            Some(_) => self.put(record),
        }
    }

    /// Stores a new record of a `[connector, {partition}]` key (slot hash `hash`), tracked
    /// unless `tracked` (asked of the state before the change) says otherwise. When no other
    /// key shares the slot hash, the key is tracked whatever `tracked` would say (no other key
    /// can have added its partition), and the store takes one search without asking; most
    /// records are such keys.
    pub(crate) fn upsert_partition_key(
        &mut self,
        key: &[u8],
        hash: u64,
        value: &[u8],
        position: (i32, i64),
        tracked: impl FnOnce(&Self) -> bool,
    ) {
        let Some(record) = StoredOffset::new(hash, key, value, position, true) else {
            return;
        };
        if self.is_journaling() {
            self.index_while_loading();
        }
        let record = match &mut self.keyed {
            Keyed::Journal(_) => record,
            Keyed::Loading(table) => match table.put_if_alone(record) {
                Ok(()) => return,
                Err(Declined::Shared(record)) => record,
                Err(Declined::Full(record)) => {
                    // Four billion keys: the set takes them from here, and the general path
                    // below stores this one.
                    self.share();
                    record
                }
            },
            Keyed::Shared(set) => {
                match set.insert_if_alone(BySlot(record), |stored| stored.0.hash == hash) {
                    Ok(_) => return,
                    Err(BySlot(record)) => record,
                }
            }
        };
        let tracked = tracked(self);
        self.put(record.with_tracked(tracked));
    }

    /// Removes `key` (a tombstone).
    pub(crate) fn remove(&mut self, key: Option<&[u8]>, hash: u64) {
        match (key, &mut self.keyed) {
            (None, _) => self.null_key = None,
            (Some(key), Keyed::Journal(_)) => {
                self.index_while_loading();
                self.remove(Some(key), hash);
            }
            (Some(key), Keyed::Loading(table)) => table.remove(hash, key),
            (Some(key), Keyed::Shared(set)) => {
                set.remove(&SlotOf { hash, key });
            }
        }
    }

    /// Sets or clears the tracked flag of a live `key` (in place: the flag is not part of the
    /// slot the records are found by).
    pub(crate) fn set_tracked(&mut self, key: &[u8], hash: u64, tracked: bool) {
        match &mut self.keyed {
            Keyed::Journal(_) => {
                self.index_while_loading();
                self.set_tracked(key, hash, tracked);
            }
            Keyed::Loading(table) => {
                if let Some(stored) = table.get_mut(hash, key) {
                    *stored = stored.clone().with_tracked(tracked);
                }
            }
            Keyed::Shared(set) => {
                set.update(&SlotOf { hash, key }, |stored| {
                    let record = stored.0.clone().with_tracked(tracked);
                    stored.0 = record;
                });
            }
        }
    }

    /// The keyed records whose slot hash is `hash`: by key bytes once shared, in no particular
    /// order while loading (the callers look for the one tracked key of a partition, which
    /// is unique). While journaling, a scan of the journal (see
    /// [`journaled_live`](Self::journaled_live)).
    pub(crate) fn with_hash(&self, hash: u64) -> impl Iterator<Item = &StoredOffset> + '_ {
        match &self.keyed {
            Keyed::Journal(journal) => Forms::Journal(
                Self::journaled_live(
                    journal
                        .entries()
                        .iter()
                        .filter(|entry| entry.record.slot_hash() == hash),
                )
                .into_iter(),
            ),
            Keyed::Loading(table) => Forms::Loading(table.with_hash(hash)),
            Keyed::Shared(set) => Forms::Shared(hash_range(set, hash, hash.checked_add(1))),
        }
    }

    /// The keyed records whose slot hash starts with the 32 bits `high`, in storage order (by
    /// slot hash, then key bytes). A scan of every record while loading.
    pub(crate) fn with_high_bits(&self, high: u32) -> impl Iterator<Item = &StoredOffset> + '_ {
        let start = u64::from(high) << 32;
        let end = high.checked_add(1).map(|next| u64::from(next) << 32);
        match &self.keyed {
            Keyed::Journal(journal) => {
                let mut records = Self::journaled_live(
                    journal
                        .entries()
                        .iter()
                        .filter(|entry| entry.record.slot_hash() >> 32 == u64::from(high)),
                );
                records.sort_unstable_by(|a, b| a.slot_order(b));
                Forms::Journal(records.into_iter())
            }
            Keyed::Loading(table) => {
                let mut records: Vec<&StoredOffset> = table
                    .iter()
                    .filter(|record| record.slot_hash() >> 32 == u64::from(high))
                    .collect();
                records.sort_unstable_by(|a, b| a.slot_order(b));
                Forms::Loading(records.into_iter())
            }
            Keyed::Shared(set) => Forms::Shared(hash_range(set, start, end)),
        }
    }

    /// Every live key and its record, the null key first, then by key bytes. Sorts: O(n log n).
    pub(crate) fn iter(&self) -> impl Iterator<Item = (Option<&[u8]>, &StoredOffset)> + '_ {
        let mut keyed: Vec<&StoredOffset> = match &self.keyed {
            Keyed::Journal(journal) => Self::journaled_live(journal.entries().iter()),
            Keyed::Loading(table) => table.iter().collect(),
            Keyed::Shared(set) => set.iter().map(|e| &e.0).collect(),
        };
        keyed.sort_unstable_by(|a, b| a.key().cmp(b.key()));
        let null = self.null_key.iter().map(|record| (None, record));
        null.chain(keyed.into_iter().map(|record| (Some(record.key()), record)))
    }

    /// How many keys are live.
    pub(crate) fn len(&self) -> usize {
        let keyed = match &self.keyed {
            Keyed::Journal(journal) => Self::journaled_live(journal.entries().iter()).len(),
            Keyed::Loading(table) => table.len(),
            Keyed::Shared(set) => set.len(),
        };
        keyed + usize::from(self.null_key.is_some())
    }
}

/// The records of `set` with a slot hash from `start` up to `end` (excluded; `None`: no end).
fn hash_range(
    set: &PSet<BySlot>,
    start: u64,
    end: Option<u64>,
) -> impl Iterator<Item = &StoredOffset> {
    // The empty key comes first among the keys of a hash.
    let start = SlotOf {
        hash: start,
        key: &[],
    };
    set.range::<SlotOf<'_>, _>((Bound::Included(&start), Bound::Unbounded))
        .map(|e| &e.0)
        .take_while(move |record| end.is_none_or(|end| record.slot_hash() < end))
}

impl Clone for LiveKeys {
    /// O(1) once shared: the clone shares every node. While loading, the clone is built in
    /// the shared form, O(n log n) (a snapshot taken before the start-up read is caught up).
    fn clone(&self) -> Self {
        let keyed = match &self.keyed {
            Keyed::Shared(set) => Keyed::Shared(set.clone()),
            _ => Keyed::Shared(
                self.with_storage_order(|records| records.cloned().map(BySlot).collect()),
            ),
        };
        Self {
            null_key: self.null_key.clone(),
            keyed,
        }
    }
}

impl PartialEq for LiveKeys {
    fn eq(&self, other: &Self) -> bool {
        self.null_key == other.null_key
            && self.with_storage_order(|mine| other.with_storage_order(|theirs| mine.eq(theirs)))
    }
}

impl Eq for LiveKeys {}

impl fmt::Debug for LiveKeys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

/// A live key's bytes as a checkpoint writes them: slot hash (big-endian), key, value.
struct WireBytes(Vec<u8>);

impl Serialize for WireBytes {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        ByteString(&self.0[..]).serialize(serializer)
    }
}

/// A live key's bytes as a checkpoint reads them: the slot hash, and the key and value bytes
/// (`None` when there are fewer bytes than a hash).
struct Hashed(Option<(u64, Vec<u8>)>);

impl From<&[u8]> for Hashed {
    fn from(bytes: &[u8]) -> Self {
        Self(
            bytes
                .split_first_chunk::<HASH_LEN>()
                .map(|(hash, rest)| (u64::from_be_bytes(*hash), rest.to_vec())),
        )
    }
}

/// One live key in a checkpoint.
#[derive(Serialize, Deserialize)]
struct Wire<B> {
    keyed: bool,
    partition: i32,
    key_len: u32,
    offset: i64,
    bytes: B,
}

impl Serialize for LiveKeys {
    /// A sequence of live keys: the null key first, then in storage order.
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.with_storage_order(|keyed| {
            let null = self.null_key.iter().map(|record| (false, record));
            let keyed = keyed.map(|record| (true, record));
            serializer.collect_seq(null.chain(keyed).map(|(keyed, record)| {
                // The checkpoint's form (format 6): the slot hash leads the key and value bytes.
                let hash = record.hash.to_be_bytes();
                let key_and_value = &record.record.slice;
                Wire {
                    keyed,
                    partition: record.partition(),
                    key_len: record.place().key_len,
                    offset: record.offset(),
                    bytes: WireBytes(hash.iter().chain(key_and_value).copied().collect()),
                }
            }))
        })
    }
}

impl<'de> Deserialize<'de> for LiveKeys {
    /// Refuses a key length beyond its bytes, a null key with key bytes or a tracked flag, and
    /// a repeated key. (Slot hashes are taken as written: the checkpoint's checksum guards
    /// them.)
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let wires = Vec::<Wire<ByteString<Hashed>>>::deserialize(deserializer)?;
        let mut live = Self::default();
        let mut keyed = Vec::with_capacity(wires.len());
        for wire in wires {
            let Some((hash, bytes)) = wire.bytes.0 .0 else {
                return Err(D::Error::custom("a live key is shorter than its slot hash"));
            };
            let place = Place {
                offset: wire.offset,
                key_len: wire.key_len,
                partition: wire.partition,
            };
            let Some(record) = StoredOffset::from_parts(hash, place, &bytes) else {
                return Err(D::Error::custom("a live key is longer than its bytes"));
            };
            if !wire.keyed {
                if wire.key_len != 0 || live.null_key.is_some() {
                    return Err(D::Error::custom("the null key is malformed or repeated"));
                }
                live.null_key = Some(record);
            } else {
                keyed.push(BySlot(record));
            }
        }
        let count = keyed.len();
        // Checkpoints list keys in storage order: the set is built in bulk.
        let set: PSet<BySlot> = keyed.into_iter().collect();
        if set.len() != count {
            return Err(D::Error::custom("a live key is repeated"));
        }
        live.keyed = Keyed::Shared(set);
        Ok(live)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    fn values(live: &LiveKeys) -> Vec<(Option<Vec<u8>>, Vec<u8>, i64)> {
        live.iter()
            .map(|(k, r)| (k.map(<[u8]>::to_vec), r.value().to_vec(), r.offset()))
            .collect()
    }

    #[test]
    fn keeps_the_latest_record_per_key_listed_in_key_order() {
        let mut live = LiveKeys::default();
        // Hashes out of key order: listings still come sorted by key bytes.
        live.upsert(Some(b"b"), 1, b"1", (0, 0), false);
        live.upsert(Some(b"a"), 9, b"2", (0, 1), false);
        live.upsert(None, 0, b"3", (0, 2), false);
        live.upsert(Some(b"b"), 1, b"4", (0, 3), false);
        assert_eq!(live.len(), 3);
        let expected = vec![
            (None, b"3".to_vec(), 2),
            (Some(b"a".to_vec()), b"2".to_vec(), 1),
            (Some(b"b".to_vec()), b"4".to_vec(), 3),
        ];
        assert_eq!(values(&live), expected);
        live.remove(Some(b"a"), 9);
        live.remove(None, 0);
        assert_eq!(live.len(), 1);
        assert_eq!(
            live.get(Some(b"b"), 1).map(StoredOffset::value),
            Some(&b"4"[..])
        );
        assert!(
            live.get(Some(b"b"), 2).is_none(),
            "found only under its own hash"
        );
        assert!(live.get(Some(b"a"), 9).is_none() && live.get(None, 0).is_none());
    }

    /// An empty store in each form: loading (a hash table), and shared (the persistent set).
    fn both_forms() -> [LiveKeys; 2] {
        let mut shared = LiveKeys::default();
        shared.share();
        [LiveKeys::indexed(), shared]
    }

    fn keys<'a>(records: impl Iterator<Item = &'a StoredOffset>) -> Vec<Vec<u8>> {
        records.map(|r| r.key().to_vec()).collect()
    }

    #[test]
    fn tracked_flags_are_set_by_writes_and_hash_ranges_select_keys() {
        for mut live in both_forms() {
            let near = (7u64 << 32) | 5;
            live.upsert(Some(b"y"), near, b"1", (0, 1), false);
            live.upsert(Some(b"x"), near, b"1", (0, 0), false);
            live.upsert(Some(b"z"), (7 << 32) | 6, b"1", (0, 2), false);
            live.upsert(Some(b"w"), 8 << 32, b"1", (0, 3), false);
            live.upsert(Some(b"v"), u64::MAX, b"1", (0, 4), false);
            live.set_tracked(b"x", near, true);
            assert!(live.get(Some(b"x"), near).unwrap().is_tracked());
            live.upsert(Some(b"x"), near, b"2", (0, 5), true);
            let x = live.get(Some(b"x"), near).unwrap();
            assert!(x.is_tracked() && x.value() == b"2" && x.key() == b"x");
            assert!(!live.get(Some(b"y"), near).unwrap().is_tracked());
            // A hash's keys in no particular order while loading; a connector's in storage
            // order in both forms.
            let mut with_near = keys(live.with_hash(near));
            with_near.sort();
            assert_eq!(with_near, [b"x".to_vec(), b"y".to_vec()]);
            assert_eq!(
                keys(live.with_high_bits(7)),
                [b"x".to_vec(), b"y".to_vec(), b"z".to_vec()]
            );
            assert_eq!(keys(live.with_hash(u64::MAX)), [b"v".to_vec()]);
            assert_eq!(keys(live.with_high_bits(u32::MAX)), [b"v".to_vec()]);
            live.set_tracked(b"x", near, false);
            assert!(!live.get(Some(b"x"), near).unwrap().is_tracked());
        }
    }

    #[test]
    fn a_partition_key_is_tracked_unless_another_key_shares_its_slot() {
        for mut live in both_forms() {
            let mut asked = 0;
            live.upsert_partition_key(b"a", 1, b"1", (0, 0), |_| unreachable!("alone"));
            // The same key again is still alone.
            live.upsert_partition_key(b"a", 1, b"2", (0, 1), |_| unreachable!("alone"));
            live.upsert_partition_key(b"b", 1, b"3", (0, 2), |_| {
                asked += 1;
                false
            });
            assert_eq!(asked, 1);
            assert!(live.get(Some(b"a"), 1).unwrap().is_tracked());
            let b = live.get(Some(b"b"), 1).unwrap();
            assert!(!b.is_tracked() && b.value() == b"3");
            live.remove(Some(b"a"), 1);
            live.upsert_partition_key(b"b", 1, b"4", (0, 3), |_| unreachable!("alone"));
            assert!(live.get(Some(b"b"), 1).unwrap().is_tracked());
            assert_eq!(live.len(), 1);
        }
    }

    #[test]
    fn sharing_keeps_every_record_and_flag_and_the_checkpoint_form() {
        let mut loading = LiveKeys::default();
        for i in 0..500u64 {
            let key = alloc::format!("key-{i}");
            // Few slot hashes: many keys share one, in both halves of the hash.
            let hash = ((i % 7) << 32) | (i % 5);
            loading.upsert(Some(key.as_bytes()), hash, b"v", (0, i as i64), i % 3 == 0);
        }
        loading.upsert(None, 0, b"null", (1, 0), false);
        for i in (0..500u64).step_by(4) {
            let key = alloc::format!("key-{i}");
            loading.remove(Some(key.as_bytes()), ((i % 7) << 32) | (i % 5));
        }
        let config = bincode::config::standard();
        let before = bincode::serde::encode_to_vec(&loading, config).unwrap();
        let snapshot = loading.clone();
        assert!(matches!(snapshot.keyed, Keyed::Shared(_)));
        let mut shared = loading.clone();
        loading.share();
        assert!(matches!(loading.keyed, Keyed::Shared(_)));
        shared.share();
        assert_eq!(loading, snapshot);
        assert_eq!(loading.len(), 376);
        assert_eq!(
            bincode::serde::encode_to_vec(&loading, config).unwrap(),
            before
        );
        let (restored, _): (LiveKeys, usize) =
            bincode::serde::decode_from_slice(&before, config).unwrap();
        assert_eq!(restored, shared);
    }

    /// An operation on the live keys, over a few keys.
    #[derive(Debug, Clone)]
    enum Op {
        Upsert(u8, bool),
        UpsertPartition(u8, bool),
        Remove(u8),
        SetTracked(u8, bool),
    }

    fn op() -> impl proptest::strategy::Strategy<Value = Op> {
        use proptest::prelude::*;
        let key = 0u8..8;
        prop_oneof![
            (key.clone(), any::<bool>()).prop_map(|(k, t)| Op::Upsert(k, t)),
            (key.clone(), any::<bool>()).prop_map(|(k, t)| Op::UpsertPartition(k, t)),
            key.clone().prop_map(Op::Remove),
            (key, any::<bool>()).prop_map(|(k, t)| Op::SetTracked(k, t)),
        ]
    }

    /// Whether `one` and `other` answer alike for every key of the proptests: `get` (with the
    /// tracked flags when `flags`), `with_hash` (in any order) and `with_high_bits`.
    fn readers_agree(
        one: &LiveKeys,
        other: &LiveKeys,
        flags: bool,
    ) -> Result<(), proptest::test_runner::TestCaseError> {
        for k in 0..8u8 {
            let found = |live: &LiveKeys| {
                live.get(Some(&[k]), slot(k))
                    .map(|r| (r.value().to_vec(), flags && r.is_tracked()))
            };
            proptest::prop_assert_eq!(found(one), found(other));
            let same_hash = |live: &LiveKeys| {
                let mut listed = keys(live.with_hash(slot(k)));
                listed.sort();
                listed
            };
            proptest::prop_assert_eq!(same_hash(one), same_hash(other));
        }
        for high in 0..2u32 {
            proptest::prop_assert_eq!(
                keys(one.with_high_bits(high)),
                keys(other.with_high_bits(high))
            );
        }
        Ok(())
    }

    /// A key's slot hash (a function of its bytes, as in the topic): keys `k` and `k + 4`
    /// share one; two connectors' high bits, with equal low bits across them.
    fn slot(k: u8) -> u64 {
        let h = k % 4;
        (u64::from(h / 2) << 32) | u64::from(h % 2)
    }

    proptest::proptest! {
        /// The loading table and the persistent set answer every question alike after every
        /// operation, and the table, shared, equals the set.
        #[test]
        fn both_forms_hold_the_same_records(ops in proptest::collection::vec(op(), 0..60)) {
            let [mut loading, mut shared] = both_forms();
            for (i, op) in ops.iter().enumerate() {
                let position = (0, i as i64);
                let value = [i as u8];
                for live in [&mut loading, &mut shared] {
                    match *op {
                        Op::Upsert(k, t) => live.upsert(Some(&[k]), slot(k), &value, position, t),
                        Op::UpsertPartition(k, t) => {
                            live.upsert_partition_key(&[k], slot(k), &value, position, |_| t)
                        }
                        Op::Remove(k) => live.remove(Some(&[k]), slot(k)),
                        Op::SetTracked(k, t) => live.set_tracked(&[k], slot(k), t),
                    }
                }
                proptest::prop_assert_eq!(loading.len(), shared.len());
                proptest::prop_assert!(loading == shared);
                readers_agree(&loading, &shared, true)?;
            }
            let listed = |live: &LiveKeys| {
                live.iter().map(|(k, r)| (k.map(<[u8]>::to_vec), r.value().to_vec())).collect::<Vec<_>>()
            };
            proptest::prop_assert_eq!(listed(&loading), listed(&shared));
            loading.share();
            proptest::prop_assert!(loading == shared);
        }
    }

    /// A record of the journal proptest: key `k` (keys `k` and `k + 4` share a slot hash; keys
    /// below 4 are `[connector, {partition}]` keys), a value or a tombstone.
    fn write() -> impl proptest::strategy::Strategy<Value = (u8, Option<u8>)> {
        use proptest::prelude::*;
        (0u8..8, proptest::option::weighted(0.75, any::<u8>()))
    }

    proptest::proptest! {
        /// The journal, settled, holds what applying the records one by one to the indexed
        /// table and to the persistent set holds (tracked flags included), after every record;
        /// its readers answer alike for keys and values.
        #[test]
        fn the_journal_settles_as_records_applied_one_by_one(
            writes in proptest::collection::vec(write(), 0..60),
        ) {
            let mut journal = LiveKeys::default();
            let [mut indexed, mut shared] = both_forms();
            for (i, &(k, value)) in writes.iter().enumerate() {
                let (position, value) = ((0, i as i64), value.map(|v| [v]));
                let value = value.as_ref().map(|v| &v[..]);
                let partition_key = k < 4;
                journal.journal(KeyedWrite { key: &[k], slot: slot(k), value, position, partition_key });
                proptest::prop_assert!(journal.is_journaling());
                for live in [&mut indexed, &mut shared] {
                    super::super::apply_to_data(live, Some(&[k]), slot(k), partition_key, value, position);
                }
                proptest::prop_assert!(journal == indexed && journal == shared);
                proptest::prop_assert_eq!(journal.len(), indexed.len());
                // A journal's readers carry the tracked flags journaled: values and keys only.
                readers_agree(&journal, &shared, false)?;
            }
            let listed = |live: &LiveKeys| {
                live.iter().map(|(k, r)| (k.map(<[u8]>::to_vec), r.value().to_vec())).collect::<Vec<_>>()
            };
            proptest::prop_assert_eq!(listed(&journal), listed(&indexed));
            let checkpoint = |live: &LiveKeys| {
                bincode::serde::encode_to_vec(live, bincode::config::standard()).unwrap()
            };
            proptest::prop_assert_eq!(checkpoint(&journal), checkpoint(&shared));
            journal.share();
            proptest::prop_assert!(journal == shared);
            proptest::prop_assert_eq!(checkpoint(&journal), checkpoint(&shared));
        }
    }

    #[test]
    fn a_journal_moves_into_the_table_when_asked_and_settles_once_shared() {
        let mut live = LiveKeys::default();
        let write =
            |key: &'static [u8], slot, value: Option<&'static [u8]>, offset, partition_key| {
                KeyedWrite {
                    key,
                    slot,
                    value,
                    position: (0, offset),
                    partition_key,
                }
            };
        live.journal(write(b"a", 1, Some(b"1"), 0, true));
        live.journal(write(b"a", 1, Some(b"2"), 1, true));
        live.journal(write(b"b", 2, None, 2, false));
        assert!(live.is_journaling());
        assert_eq!(
            live.get(Some(b"a"), 1).map(StoredOffset::value),
            Some(&b"2"[..])
        );
        assert_eq!(live.len(), 1);
        live.index_while_loading();
        assert!(!live.is_journaling() && live.is_loading());
        let record = live.get(Some(b"a"), 1).expect("a is live");
        assert_eq!(
            (record.value(), record.offset(), record.is_tracked()),
            (&b"2"[..], 1, true)
        );
        // Records after the move go through the table.
        live.journal(write(b"c", 3, Some(b"3"), 3, false));
        assert_eq!(live.len(), 2);
        live.share();
        assert!(!live.is_loading());
        assert_eq!(
            live.get(Some(b"c"), 3).map(StoredOffset::value),
            Some(&b"3"[..])
        );
    }

    #[test]
    fn equality_compares_records_and_flags_not_only_keys() {
        let mut one = LiveKeys::default();
        let mut two = LiveKeys::default();
        one.upsert(Some(b"k"), 3, b"1", (0, 0), false);
        two.upsert(Some(b"k"), 3, b"2", (0, 0), false);
        assert_ne!(one, two);
        two.upsert(Some(b"k"), 3, b"1", (0, 0), false);
        assert_eq!(one, two);
        two.set_tracked(b"k", 3, true);
        assert_ne!(one, two);
    }

    #[test]
    fn checkpoint_form_round_trips_and_refuses_malformed_keys() {
        let mut live = LiveKeys::default();
        live.upsert(None, 0, b"n", (0, 0), false);
        live.upsert(Some(b"key"), 4, b"value", (1, 1), false);
        live.set_tracked(b"key", 4, true);
        let config = bincode::config::standard();
        let bytes = bincode::serde::encode_to_vec(&live, config).unwrap();
        let (back, _): (LiveKeys, usize) =
            bincode::serde::decode_from_slice(&bytes, config).unwrap();
        assert_eq!(back, live);

        let wire = |keyed: bool, key_len: u32, bytes: &'static [u8]| Wire {
            keyed,
            partition: 0,
            key_len,
            offset: 0,
            bytes: ByteString(bytes),
        };
        let decode = |wires: Vec<Wire<ByteString<&'static [u8]>>>| {
            let bytes = bincode::serde::encode_to_vec(&wires, config).unwrap();
            bincode::serde::decode_from_slice::<LiveKeys, _>(&bytes, config)
        };
        let hashed_kv = b"\0\0\0\0\0\0\0\x01kv";
        assert!(decode(vec![
            wire(true, 1, hashed_kv),
            wire(false, 0, b"\0\0\0\0\0\0\0\0v")
        ])
        .is_ok());
        for bad in [
            vec![wire(true, 3, hashed_kv)],
            vec![wire(true, 0, b"short")],
            vec![wire(false, 1, hashed_kv)],
            vec![wire(false, TRACKED, hashed_kv)],
            vec![wire(false, 0, hashed_kv), wire(false, 0, hashed_kv)],
            vec![wire(true, 1, hashed_kv), wire(true, 1, hashed_kv)],
        ] {
            assert!(decode(bad).is_err());
        }
    }
}
