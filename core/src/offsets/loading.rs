//! [`LoadingTable`]: the offsets topic's keyed records while the topic is read from its start
//! by a reader that asks about keys record by record (a history telling each record), in a
//! hash-indexed list, before [`LiveKeys`](super::live::LiveKeys) moves them into its
//! persistent set. A start-up read that asks nothing journals its records instead
//! ([`Journal`](super::journal::Journal): no search per record), and the journal's settling
//! applies the records of keys sharing a slot hash through this table.
//!
//! A start-up read applies every record of the topic (a million at the bench's default scale)
//! and takes no snapshot until it is caught up. In the persistent B-tree each of those records
//! descends five or six levels of small nodes, most of them outside the processor's caches,
//! and makes each node on the way unique: the descent was half of the offsets replay. Here a
//! key is found through a hash index in two or three cache misses. Once caught up, the list is
//! sorted in place into the tree's order and the tree is built in one pass
//! (`LiveKeys::share`), which is what snapshots and tail updates need.
//!
//! The records sit in one dense list and the index holds 32-bit positions in it, each beside
//! 32 bits of its record's hash (as `indexmap` does, with narrower positions): a hash table
//! of the records themselves would be twice the list's size (its load factor and control
//! bytes), and the memory a start-up read leaves behind it, freed but still resident until the
//! allocator returns it, counts in the bench's `offsets_memory_ratio` (≤ 2x the raw bytes) and
//! its ratio to Java's heap (≤ 0.3x). Most records are a new key alone under its slot hash,
//! stored after one search of the index ([`LoadingTable::put_if_alone`]).

use alloc::vec::Vec;
use core::hash::BuildHasher;

use foldhash::fast::FixedState;
use hashbrown::hash_table::{Entry, VacantEntry};
use hashbrown::HashTable;

use super::live::StoredOffset;

/// The keyed records of a topic being read from its start, by slot hash and key bytes.
#[derive(Default)]
pub(super) struct LoadingTable {
    /// The records, in no particular order (a removal moves the last one into its place).
    records: Vec<StoredOffset>,
    /// Each record's position in `records`, found by its slot hash.
    index: HashTable<Position>,
}

/// A record's place in the index: its position in the list and 32 bits of its mixed slot hash
/// ([`index_hash`]).
///
/// The hash bits let the index grow without reading a single record: hashbrown moves its
/// entries to the larger table in bucket order, each entry's bucket computed from these bits
/// alone. Reading each record's slot hash instead (from the list, in index order or in list
/// order) cost a cache miss per record at every doubling, 8% of the offsets replay. They also
/// tell most keys sharing a bucket's tag apart without reading the list.
#[derive(Clone, Copy)]
struct Position {
    at: u32,
    hash: u32,
}

/// The 32 bits of `slot` the index is hashed by. The slot hash's top 32 bits are the
/// connector's and its low ones the partition's, so it is mixed first (with a fixed seed: the
/// core has no randomness).
fn index_hash(slot: u64) -> u32 {
    (FixedState::default().hash_one(slot) >> 32) as u32
}

/// The hash hashbrown is given for an entry's 32 bits: it takes its bucket from the low bits
/// and its tag from the top seven, so the bits are spread over the whole word (an odd
/// multiplier: the low bits, and so the bucket, still follow the hash's low bits alone).
fn table_hash(hash: u32) -> u64 {
    u64::from(hash).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// The index's entry of the first record under `hash` that `matches`, or the free bucket a new
/// one goes to (the index grows first when it has no room left).
fn search<'t>(
    index: &'t mut HashTable<Position>,
    records: &[StoredOffset],
    hash: u32,
    matches: impl Fn(&StoredOffset) -> bool,
) -> Entry<'t, Position> {
    index.entry(
        table_hash(hash),
        |p| p.hash == hash && records.get(p.at as usize).is_some_and(&matches),
        |p| table_hash(p.hash),
    )
}

/// Stores a new `record` at the end of `records`, its position in the index's free bucket
/// `room`; hands it back when the list holds `u32::MAX` records.
fn push_new(
    records: &mut Vec<StoredOffset>,
    room: VacantEntry<'_, Position>,
    hash: u32,
    record: StoredOffset,
) -> Result<(), Full> {
    let Ok(at) = u32::try_from(records.len()) else {
        return Err(Full(record));
    };
    room.insert(Position { at, hash });
    records.push(record);
    Ok(())
}

/// The table is full: a record past `u32::MAX` positions has no place in its index.
#[derive(Debug)]
pub(super) struct Full(pub(super) StoredOffset);

/// Why [`LoadingTable::put_if_alone`] handed a record back.
#[derive(Debug)]
pub(super) enum Declined {
    /// Another key has the record's slot hash.
    Shared(StoredOffset),
    /// The table holds `u32::MAX` records.
    Full(StoredOffset),
}

impl LoadingTable {
    /// How many keys are stored.
    pub(super) fn len(&self) -> usize {
        self.records.len()
    }

    /// The position of the record of `key`, whose slot hash is `slot`.
    fn position(&self, slot: u64, key: &[u8]) -> Option<usize> {
        let (records, hash) = (&self.records, index_hash(slot));
        self.index
            .find(table_hash(hash), |p| {
                p.hash == hash && records.get(p.at as usize).is_some_and(|r| r.is(slot, key))
            })
            .map(|p| p.at as usize)
    }

    /// The record of `key`, whose slot hash is `slot`.
    pub(super) fn get(&self, slot: u64, key: &[u8]) -> Option<&StoredOffset> {
        self.records.get(self.position(slot, key)?)
    }

    /// The record of `key`, to change in place (its slot hash and key bytes must stay).
    pub(super) fn get_mut(&mut self, slot: u64, key: &[u8]) -> Option<&mut StoredOffset> {
        let at = self.position(slot, key)?;
        self.records.get_mut(at)
    }

    /// Stores `record`, replacing the record of an equal key; a new key when the table holds
    /// `u32::MAX` records is handed back.
    pub(super) fn put(&mut self, record: StoredOffset) -> Result<(), Full> {
        let (slot, hash) = (record.slot_hash(), index_hash(record.slot_hash()));
        let Self { records, index } = self;
        match search(index, records, hash, |r| r.is(slot, record.key())) {
            Entry::Occupied(stored) => {
                if let Some(stored) = records.get_mut(stored.get().at as usize) {
                    *stored = record;
                }
                Ok(())
            }
            Entry::Vacant(room) => push_new(records, room, hash, record),
        }
    }

    /// Stores `record` if no other key has its slot hash, replacing the record of its own key;
    /// hands it back otherwise. Most records of an offsets topic are a new key alone under its
    /// slot hash: those take one search of the index.
    pub(super) fn put_if_alone(&mut self, record: StoredOffset) -> Result<(), Declined> {
        let (slot, hash) = (record.slot_hash(), index_hash(record.slot_hash()));
        let Self { records, index } = self;
        // Any record under the same slot hash.
        if let Entry::Vacant(room) = search(index, records, hash, |r| r.slot_hash() == slot) {
            return push_new(records, room, hash, record).map_err(|Full(r)| Declined::Full(r));
        }
        // The slot hash is taken: by this key alone (an update), or by others.
        if self.is_alone(slot, record.key()) {
            self.put(record).map_err(|Full(r)| Declined::Full(r))
        } else {
            Err(Declined::Shared(record))
        }
    }

    /// Whether no key but `key` (stored or not) has the slot hash `slot`.
    pub(super) fn is_alone(&self, slot: u64, key: &[u8]) -> bool {
        self.with_hash(slot).all(|stored| stored.key() == key)
    }

    /// Removes the record of `key`: the last record takes its place.
    pub(super) fn remove(&mut self, slot: u64, key: &[u8]) {
        let (records, hash) = (&self.records, index_hash(slot));
        let Ok(found) = self.index.find_entry(table_hash(hash), |p| {
            p.hash == hash && records.get(p.at as usize).is_some_and(|r| r.is(slot, key))
        }) else {
            return;
        };
        let (removed, _) = found.remove();
        let (at, last) = (removed.at as usize, self.records.len().saturating_sub(1));
        self.records.swap_remove(at);
        if let Some(moved) = self.records.get(at) {
            // `at` was not the last: the record moved from the end is now found at `at`.
            let moved_hash = index_hash(moved.slot_hash());
            if let Some(position) = self
                .index
                .find_mut(table_hash(moved_hash), |p| p.at as usize == last)
            {
                position.at = removed.at;
            }
        }
    }

    /// The records whose slot hash is `slot`, in no particular order.
    pub(super) fn with_hash(&self, slot: u64) -> impl Iterator<Item = &StoredOffset> + '_ {
        let hash = index_hash(slot);
        self.index
            .iter_hash(table_hash(hash))
            .filter(move |p| p.hash == hash)
            .filter_map(|p| self.records.get(p.at as usize))
            .filter(move |stored| stored.slot_hash() == slot)
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

#[cfg(test)]
mod tests {
    use alloc::collections::BTreeMap;
    use alloc::vec::Vec;

    use super::{Declined, LoadingTable, StoredOffset};

    /// A record of key `k` whose slot hash is shared by every eighth key (`k % 8` is not part
    /// of it), so that many keys share one.
    fn record(k: u32, value: u32) -> StoredOffset {
        let slot = u64::from(k / 8);
        let key = k.to_le_bytes();
        StoredOffset::new(slot, &key, &value.to_le_bytes(), (0, 0), false).unwrap()
    }

    /// A key's slot hash, as `record` gives it.
    fn slot(k: u32) -> u64 {
        u64::from(k / 8)
    }

    #[test]
    fn finds_every_key_after_growing_and_removing() {
        let mut table = LoadingTable::default();
        let mut model = BTreeMap::new();
        // Enough keys for the index to double a dozen times; every third key written twice,
        // every seventh removed.
        for k in 0..40_000u32 {
            table.put(record(k, k)).unwrap();
            model.insert(k, k);
            if k % 3 == 0 {
                table.put(record(k, k + 1)).unwrap();
                model.insert(k, k + 1);
            }
            if k % 7 == 0 {
                let gone = k / 2;
                table.remove(slot(gone), &gone.to_le_bytes());
                model.remove(&gone);
            }
        }
        assert_eq!(table.len(), model.len());
        for k in 0..40_000u32 {
            let found = table
                .get(slot(k), &k.to_le_bytes())
                .map(|r| r.value().to_vec());
            assert_eq!(
                found,
                model.get(&k).map(|v| v.to_le_bytes().to_vec()),
                "key {k}"
            );
        }
        // Each slot hash lists exactly its live keys.
        for s in 0..5_000u32 {
            let mut listed: Vec<Vec<u8>> = table
                .with_hash(u64::from(s))
                .map(|r| r.key().to_vec())
                .collect();
            listed.sort();
            let mut expected: Vec<Vec<u8>> = model
                .keys()
                .filter(|&&k| k / 8 == s)
                .map(|k| k.to_le_bytes().to_vec())
                .collect();
            expected.sort();
            assert_eq!(listed, expected, "slot hash {s}");
        }
        let sorted = table.into_sorted();
        assert!(sorted.windows(2).all(|w| w[0].slot_order(&w[1]).is_lt()));
        assert_eq!(sorted.len(), model.len());
    }

    #[test]
    fn puts_a_record_only_when_no_other_key_has_its_slot_hash() {
        let mut table = LoadingTable::default();
        assert!(table.put_if_alone(record(8, 1)).is_ok(), "a new key alone");
        assert!(
            table.put_if_alone(record(8, 2)).is_ok(),
            "its own key again"
        );
        assert_eq!(
            table.get(slot(8), &8u32.to_le_bytes()).unwrap().value(),
            2u32.to_le_bytes()
        );
        match table.put_if_alone(record(9, 3)) {
            Err(Declined::Shared(back)) => assert_eq!(back.key(), 9u32.to_le_bytes()),
            other => panic!("key 9 shares key 8's slot hash: {other:?}"),
        }
        assert_eq!(table.len(), 1, "a declined record is not stored");
        table.put(record(9, 3)).unwrap();
        match table.put_if_alone(record(8, 4)) {
            Err(Declined::Shared(_)) => {}
            other => panic!("key 8 is no longer alone: {other:?}"),
        }
        table.remove(slot(9), &9u32.to_le_bytes());
        assert!(table.put_if_alone(record(8, 5)).is_ok(), "alone again");
        assert_eq!(table.len(), 1);
    }
}
