//! [`Journal`]: the offsets topic's keyed records while a start-up read applies them, kept in
//! the order they were read and settled into the live keys once, when the read is caught up.
//!
//! A start-up read applies every record of the topic (a million at the bench's default scale),
//! and nearly every one is a new key. Finding out that a key is new takes a search of an index
//! of every key read so far, and with a million keys that search is a cache miss or two a
//! record, which no reordering of the work hid: a fifth of the offsets topic's replay went to
//! the index it loaded into ([`LoadingTable`](super::loading::LoadingTable), which a history
//! still uses), and a start-up read waits on the thread that applies that topic. The journal
//! searches nothing. It appends each record, and at the catch-up ([`settle`]) sorts the records
//! by slot hash, which reads memory in order, and settles each slot hash's records in the order
//! they were read.
//!
//! Settling gives exactly the state applying the records one by one gives: a record changes
//! only the keys under its own slot hash (a key's slot hash is a function of its bytes, and
//! the partition tracking compares only keys under one slot hash), so the records of one slot
//! hash can be applied apart from all others, in their read order. Most slot hashes hold the
//! records of one key, whose state is its last record (a value: live, tracked when it is a
//! `[connector, {partition}]` key, as a key alone under its slot hash is; a tombstone: gone).
//! The few holding several keys are applied record by record, by the same step the apply uses
//! on the indexed and shared forms.

use alloc::vec::Vec;

use super::live::{LiveKeys, StoredOffset};

/// The keyed records of a start-up read, in read order.
#[derive(Default)]
pub(super) struct Journal {
    entries: Vec<Entry>,
}

/// A record of a key, as the offsets topic's apply step hands it to the live keys.
#[derive(Clone, Copy)]
pub(crate) struct KeyedWrite<'a> {
    /// The key bytes.
    pub(crate) key: &'a [u8],
    /// The key's slot hash.
    pub(crate) slot: u64,
    /// The value, `None` for a tombstone.
    pub(crate) value: Option<&'a [u8]>,
    /// Where the record was read: partition and offset.
    pub(crate) position: (i32, i64),
    /// Whether the key is a `[connector, {partition}]` key, whose partition is tracked.
    pub(crate) partition_key: bool,
}

/// The journal holds `u32::MAX` records: a record past them has no place in its order.
#[derive(Debug)]
pub(super) struct Full;

/// One record of the journal.
#[derive(Clone)]
pub(super) struct Entry {
    /// The record's slot hash, key, value (empty for a tombstone) and place; tracked when it
    /// is a value of a `[connector, {partition}]` key (what it is when its key is alone under
    /// its slot hash).
    pub(super) record: StoredOffset,
    /// Whether it is a tombstone.
    pub(super) tombstone: bool,
    /// Whether its key is a `[connector, {partition}]` key, whose partition is tracked.
    pub(super) partition_key: bool,
    /// Its place in the journal: the order it was read (and its record allocated) in.
    at: u32,
}

impl Entry {
    /// The record's value, `None` for a tombstone.
    pub(super) fn value(&self) -> Option<&[u8]> {
        (!self.tombstone).then(|| self.record.value())
    }
}

impl Journal {
    /// Appends `write`. Keys longer than [`MAX_KEY_LEN`](super::live::MAX_KEY_LEN) are
    /// refused before this is called. Fails, appending nothing, when the journal holds
    /// `u32::MAX` records.
    pub(super) fn append(&mut self, write: &KeyedWrite<'_>) -> Result<(), Full> {
        let at = u32::try_from(self.entries.len()).map_err(|_| Full)?;
        let tracked = write.partition_key && write.value.is_some();
        let bytes = write.value.unwrap_or_default();
        if let Some(record) =
            StoredOffset::new(write.slot, write.key, bytes, write.position, tracked)
        {
            self.entries.push(Entry {
                record,
                tombstone: write.value.is_none(),
                partition_key: write.partition_key,
                at,
            });
        }
        Ok(())
    }

    /// The records in read order.
    pub(super) fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// The live keys' latest records, in the persistent set's order (by slot hash, then key
    /// bytes). Call it once, at the catch-up; see the [module docs](self).
    pub(super) fn settle(self) -> Vec<StoredOffset> {
        settle(self.entries)
    }
}

/// [`Journal::settle`] of `entries`, given in read order.
///
/// The records a later one supersedes (or a tombstone removes) are freed here, at the end of
/// the read, in the middle of the memory of the records read before and after them: freed but
/// still resident, about 6% of the state at the bench's default scale. So the live records
/// read last, as many as were freed, are copied once more: the allocator puts the copies in
/// the freed places, and the memory the last records were read into, now unused, goes back
/// to the system. (A key's later records usually come after most of the topic's first
/// records, as updates do.)
pub(super) fn settle(mut entries: Vec<Entry>) -> Vec<StoredOffset> {
    let read = entries.len();
    // By slot hash, each one's records in read order (`at` is unique); in place, with no
    // buffer beside the list.
    entries.sort_unstable_by_key(|entry| (entry.record.slot_hash(), entry.at));
    let mut live = Settled::default();
    let mut group: Vec<Entry> = Vec::new();
    for entry in entries {
        if group
            .last()
            .is_some_and(|last| last.record.slot_hash() != entry.record.slot_hash())
        {
            live.add_slot(&mut group);
        }
        group.push(entry);
    }
    live.add_slot(&mut group);
    let Settled {
        mut records,
        read_at,
    } = live;
    let freed = read.saturating_sub(records.len());
    // Positions fit `u32` (see `Journal::append`).
    let last_read = u32::try_from(read.saturating_sub(freed)).unwrap_or(u32::MAX);
    for (record, at) in records.iter_mut().zip(read_at) {
        if at >= last_read {
            *record = record.copied();
        }
    }
    records
}

/// The live records settled so far, in storage order, and where each was read.
#[derive(Default)]
struct Settled {
    records: Vec<StoredOffset>,
    /// Each record's place in the journal ([`Entry::at`]); zero for records the settling
    /// allocated itself (those of keys sharing a slot hash), which are never copied.
    read_at: Vec<u32>,
}

impl Settled {
    /// Adds what the records of one slot hash (`group`, in read order) leave live, sorted by
    /// key bytes, and empties `group`.
    fn add_slot(&mut self, group: &mut Vec<Entry>) {
        // One record (nearly every slot hash) reads nothing behind its pointer.
        let one_key = group
            .windows(2)
            .all(|pair| pair[0].record.key() == pair[1].record.key());
        if one_key {
            if let Some(last) = group.pop().filter(|last| !last.tombstone) {
                self.records.push(last.record);
                self.read_at.push(last.at);
            }
            group.clear();
            return;
        }
        // Keys sharing a slot hash: applied one by one, as the apply step does.
        let mut keys = LiveKeys::indexed();
        for entry in group.drain(..) {
            let record = &entry.record;
            super::apply_to_data(
                &mut keys,
                Some(record.key()),
                record.slot_hash(),
                entry.partition_key,
                entry.value(),
                (record.partition(), record.offset()),
            );
        }
        let settled = keys.into_sorted_keyed();
        self.read_at.extend(settled.iter().map(|_| 0));
        self.records.extend(settled);
    }
}
