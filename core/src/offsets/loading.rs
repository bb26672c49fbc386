//! [`LoadingTable`]: the offsets topic's keyed records while the topic is read from its start,
//! in a hash-indexed list, before [`LiveKeys`](super::live::LiveKeys) moves them into its
//! persistent set.
//!
//! A start-up read applies every record of the topic (a million at the bench's default scale)
//! and takes no snapshot until it is caught up. In the persistent B-tree each of those records
//! descends five or six levels of small nodes, most of them outside the processor's caches,
//! and makes each node on the way unique: the descent was half of the offsets replay. Here a
//! key is found through a hash index in two or three cache misses. Once caught up, the list is
//! sorted in place into the tree's order and the tree is built in one pass
//! (`LiveKeys::share`), which is what snapshots and tail updates need.
//!
//! The records sit in one dense list and the index holds 32-bit positions in it (as `indexmap`
//! does, with narrower positions): a hash table of the records themselves would be twice the
//! list's size (its load factor and control bytes), and the memory a start-up read leaves
//! behind it, freed but still resident until the allocator returns it, counts in the bench's
//! `offsets_memory_ratio` (≤ 2x the raw bytes) and its ratio to Java's heap (≤ 0.3x).

use alloc::vec::Vec;
use core::hash::BuildHasher;

use foldhash::fast::FixedState;
use hashbrown::HashTable;

use super::live::StoredOffset;

/// The keyed records of a topic being read from its start, by slot hash and key bytes.
#[derive(Default)]
pub(super) struct LoadingTable {
    /// The records, in no particular order (a removal moves the last one into its place).
    records: Vec<StoredOffset>,
    /// Each record's position in `records`, found by its slot hash.
    index: HashTable<u32>,
}

/// Where the index looks for a slot hash. The slot hash's top 32 bits are the connector's and
/// its low ones the partition's; hashbrown reads its tag from the top bits and its bucket from
/// the low ones, so the slot hash is mixed first (with a fixed seed: the core has no
/// randomness).
fn index_hash(slot: u64) -> u64 {
    FixedState::default().hash_one(slot)
}

/// The table is full: a record past `u32::MAX` positions has no place in its index.
#[derive(Debug)]
pub(super) struct Full(pub(super) StoredOffset);

impl LoadingTable {
    /// How many keys are stored.
    pub(super) fn len(&self) -> usize {
        self.records.len()
    }

    /// The position of the record of `key`, whose slot hash is `hash`.
    fn position(&self, hash: u64, key: &[u8]) -> Option<usize> {
        let records = &self.records;
        self.index
            .find(index_hash(hash), |&at| {
                records.get(at as usize).is_some_and(|r| r.is(hash, key))
            })
            .map(|&at| at as usize)
    }

    /// The record of `key`, whose slot hash is `hash`.
    pub(super) fn get(&self, hash: u64, key: &[u8]) -> Option<&StoredOffset> {
        self.records.get(self.position(hash, key)?)
    }

    /// The record of `key`, to change in place (its slot hash and key bytes must stay).
    pub(super) fn get_mut(&mut self, hash: u64, key: &[u8]) -> Option<&mut StoredOffset> {
        let at = self.position(hash, key)?;
        self.records.get_mut(at)
    }

    /// Stores `record`, replacing the record of an equal key; a new key when the table holds
    /// `u32::MAX` records is handed back.
    pub(super) fn put(&mut self, record: StoredOffset) -> Result<(), Full> {
        let hash = record.slot_hash();
        if let Some(at) = self.position(hash, record.key()) {
            if let Some(stored) = self.records.get_mut(at) {
                *stored = record;
            }
            return Ok(());
        }
        let Ok(at) = u32::try_from(self.records.len()) else {
            return Err(Full(record));
        };
        if self.index.len() == self.index.capacity() {
            self.grow_index();
        }
        let records = &self.records;
        self.index.insert_unique(index_hash(hash), at, |&other| {
            records
                .get(other as usize)
                .map_or(0, |r| index_hash(r.slot_hash()))
        });
        self.records.push(record);
        Ok(())
    }

    /// Rebuilds the index with twice the room, reading the records in their order (growing in
    /// place would read them in the index's order, a cache miss each).
    fn grow_index(&mut self) {
        let room = (self.index.capacity() * 2).max(16);
        let mut index = HashTable::with_capacity(room);
        for (at, record) in (0u32..).zip(&self.records) {
            // The room is there: the hasher is not asked.
            index.insert_unique(index_hash(record.slot_hash()), at, |_| 0);
        }
        self.index = index;
    }

    /// Whether no key but `key` (stored or not) has the slot hash `hash`.
    pub(super) fn is_alone(&self, hash: u64, key: &[u8]) -> bool {
        self.with_hash(hash).all(|stored| stored.key() == key)
    }

    /// Removes the record of `key`: the last record takes its place.
    pub(super) fn remove(&mut self, hash: u64, key: &[u8]) {
        let records = &self.records;
        let Ok(found) = self.index.find_entry(index_hash(hash), |&at| {
            records.get(at as usize).is_some_and(|r| r.is(hash, key))
        }) else {
            return;
        };
        let (at, _) = found.remove();
        let (at, last) = (at as usize, self.records.len().saturating_sub(1));
        self.records.swap_remove(at);
        if let Some(moved) = self.records.get(at) {
            // `at` was not the last: the record moved from the end is now found at `at`.
            let moved_hash = index_hash(moved.slot_hash());
            if let Some(position) = self
                .index
                .find_mut(moved_hash, |&other| other as usize == last)
            {
                // `at` was a position in the index: it fits.
                *position = u32::try_from(at).unwrap_or(u32::MAX);
            }
        }
    }

    /// The records whose slot hash is `hash`, in no particular order.
    pub(super) fn with_hash(&self, hash: u64) -> impl Iterator<Item = &StoredOffset> + '_ {
        self.index
            .iter_hash(index_hash(hash))
            .filter_map(|&at| self.records.get(at as usize))
            .filter(move |stored| stored.slot_hash() == hash)
    }

    /// Every record, in no particular order.
    pub(super) fn iter(&self) -> impl Iterator<Item = &StoredOffset> + '_ {
        self.records.iter()
    }

    /// The records in the persistent set's order: by slot hash, then key bytes.
    pub(super) fn sorted(&self) -> Vec<&StoredOffset> {
        let mut records: Vec<&StoredOffset> = self.records.iter().collect();
        records.sort_unstable_by(|a, b| a.slot_order(b));
        records
    }

    /// The records, sorted in place into the persistent set's order; the index is freed
    /// first.
    pub(super) fn into_sorted(self) -> Vec<StoredOffset> {
        let Self { mut records, index } = self;
        drop(index);
        // Keys are unique: an unstable sort keeps nothing it should not.
        records.sort_unstable_by(StoredOffset::slot_order);
        records
    }
}
