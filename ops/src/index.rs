//! The key index: a layer over a topic machine that remembers where the latest record of every
//! key lives, so that findings can cite their evidence (`doctor`, `offsets`, `serve`'s
//! monitor).

use engine::persistent::PMap;
use engine::{Layer, Record, RecordError, RecordOutcome, TopicMachine};

/// Where the latest record of every key read lives: an immutable value, O(1) to take from an
/// [`Indexed`] machine and to clone (a persistent map, as the snapshots are).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct KeyIndex {
    latest: PMap<Vec<u8>, (i32, i64)>,
}

impl KeyIndex {
    /// `(partition, offset)` of the latest record read with this key.
    pub fn latest(&self, key: &str) -> Option<(i32, i64)> {
        self.latest.get(key.as_bytes()).copied()
    }

    /// Keys read that start with `prefix`, as text (lossy), each with its latest position.
    pub fn keys_with_prefix<'a>(
        &'a self,
        prefix: &'a str,
    ) -> impl Iterator<Item = (String, (i32, i64))> + 'a {
        self.latest
            .range::<[u8], _>((
                std::ops::Bound::Included(prefix.as_bytes()),
                std::ops::Bound::Unbounded,
            ))
            .take_while(move |(k, _)| k.starts_with(prefix.as_bytes()))
            .map(|(k, at)| (String::from_utf8_lossy(k).into_owned(), *at))
    }

    /// Notes that the latest record of `key` is at `at`.
    fn note(&mut self, key: &[u8], at: (i32, i64)) {
        match self.latest.get_mut(key) {
            Some(latest) => *latest = at,
            None => {
                self.latest.insert(key.to_vec(), at);
            }
        }
    }
}

/// A topic machine that also records, for every key, the partition and offset of its latest
/// record. Feed it exactly as the machine it wraps.
#[derive(Debug, Default, Clone)]
pub struct Indexed<M> {
    /// The wrapped machine.
    pub machine: M,
    index: KeyIndex,
    unindexed: bool,
    newest_timestamp: Option<i64>,
}

impl<M> Indexed<M> {
    /// `machine` with an empty index.
    pub fn new(machine: M) -> Self {
        Self {
            machine,
            index: KeyIndex::default(),
            unindexed: false,
            newest_timestamp: None,
        }
    }

    /// `machine` without an index: nothing is remembered (findings cite no records), for a
    /// topic whose keys are too many to index, such as a large offsets topic a server tails.
    pub fn unindexed(machine: M) -> Self {
        Self {
            unindexed: true,
            ..Self::new(machine)
        }
    }

    /// The index as it stands (O(1)).
    pub fn index(&self) -> KeyIndex {
        self.index.clone()
    }

    /// `(partition, offset)` of the latest record read with this key.
    pub fn latest(&self, key: &str) -> Option<(i32, i64)> {
        self.index.latest(key)
    }

    /// The newest record timestamp read (ms since the epoch), if any record had one.
    pub fn newest_timestamp(&self) -> Option<i64> {
        self.newest_timestamp
    }
}

impl<M: TopicMachine> Layer for Indexed<M> {
    type Inner = M;

    fn inner(&self) -> &M {
        &self.machine
    }

    fn inner_mut(&mut self) -> &mut M {
        &mut self.machine
    }

    /// The machine handles the record; then its key's latest position is the record's, and
    /// its timestamp the newest if it is.
    fn on_record(&mut self, record: Record<'_>) -> Result<RecordOutcome<M::Skip>, RecordError> {
        let outcome = self.machine.handle_record(record)?;
        if let Some(ts) = record.timestamp {
            self.newest_timestamp = Some(self.newest_timestamp.map_or(ts, |n| n.max(ts)));
        }
        if let Some(key) = record.key.filter(|_| !self.unindexed) {
            self.index.note(key, (record.partition, record.offset));
        }
        Ok(outcome)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::config::ConfigLog;

    #[test]
    fn the_index_keeps_each_keys_latest_position_and_is_a_value() {
        let mut indexed = Indexed::new(ConfigLog::new());
        let value = br#"{"properties":{"tasks.max":"1"}}"#;
        indexed
            .handle_record(Record::new(b"connector-a", Some(value), 0))
            .unwrap();
        indexed
            .handle_record(Record::new(b"connector-b", Some(value), 1))
            .unwrap();
        let before = indexed.index();
        indexed
            .handle_record(Record::new(b"connector-a", Some(value), 2))
            .unwrap();
        assert_eq!(before.latest("connector-a"), Some((0, 0)));
        assert_eq!(indexed.latest("connector-a"), Some((0, 2)));
        let keys: Vec<String> = indexed
            .index()
            .keys_with_prefix("connector-")
            .map(|(k, _)| k)
            .collect();
        assert_eq!(keys, ["connector-a", "connector-b"]);
        assert!(indexed.snapshot().contains("a"));
        let mut unindexed = Indexed::unindexed(ConfigLog::new());
        unindexed
            .handle_record(Record::new(b"connector-a", Some(value), 0))
            .unwrap();
        assert_eq!(unindexed.latest("connector-a"), None);
    }
}
