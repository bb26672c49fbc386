//! The key index: a topic machine wrapper that remembers where the latest record of every key
//! lives, so that findings can cite their evidence (`doctor`, `offsets`).

use std::collections::BTreeMap;

use engine::{Record, RecordError, RecordOutcome, TopicMachine};

/// A topic machine that also records, for every key, the partition and offset of its latest
/// record. Feed it exactly as the machine it wraps.
#[derive(Debug, Default, Clone)]
pub struct Indexed<M> {
    /// The wrapped machine.
    pub machine: M,
    latest: BTreeMap<Vec<u8>, (i32, i64)>,
    unindexed: bool,
}

impl<M> Indexed<M> {
    /// `machine` with an empty index.
    pub fn new(machine: M) -> Self {
        Self {
            machine,
            latest: BTreeMap::new(),
            unindexed: false,
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
            .range(prefix.as_bytes().to_vec()..)
            .take_while(move |(k, _)| k.starts_with(prefix.as_bytes()))
            .map(|(k, at)| (String::from_utf8_lossy(k).into_owned(), *at))
    }
}

impl<M: TopicMachine> TopicMachine for Indexed<M> {
    type Event = M::Event;
    type Skip = M::Skip;
    type Snapshot = M::Snapshot;
    type Diagnostics = M::Diagnostics;

    fn handle_record(
        &mut self,
        record: Record<'_>,
    ) -> Result<RecordOutcome<Self::Skip>, RecordError> {
        let outcome = self.machine.handle_record(record)?;
        if let Some(key) = record.key.filter(|_| !self.unindexed) {
            self.latest
                .insert(key.to_vec(), (record.partition, record.offset));
        }
        Ok(outcome)
    }
    fn mark_caught_up(&mut self) {
        self.machine.mark_caught_up();
    }
    fn is_caught_up(&self) -> bool {
        self.machine.is_caught_up()
    }
    fn poll_event(&mut self) -> Option<Self::Event> {
        self.machine.poll_event()
    }
    fn snapshot(&self) -> Self::Snapshot {
        self.machine.snapshot()
    }
    fn next_fetch_offset(&self, partition: i32) -> i64 {
        self.machine.next_fetch_offset(partition)
    }
    fn diagnostics(&self) -> M::Diagnostics {
        self.machine.diagnostics()
    }
    fn checkpoint(&self) -> Vec<u8> {
        self.machine.checkpoint()
    }
    /// The machine restored; the key index starts empty (checkpoints do not hold it), so it
    /// covers the records read after.
    fn restore(bytes: &[u8]) -> Result<Self, engine::checkpoint::CheckpointError> {
        Ok(Self::new(M::restore(bytes)?))
    }
}
