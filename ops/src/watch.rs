//! Watching a cluster as it is tailed: each topic's machine is a [`History`] that tells a
//! shared [`Recent`] what every record changed, so a server keeps each connector's recent
//! history (the dashboard's timeline) and when each task last reported (for alerts), with no
//! second state: the watched machine *is* the replay machine.

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use engine::checkpoint::CheckpointError;
use engine::history::{ChangeKind, Chronicle, History};
use engine::{Record, RecordError, RecordOutcome, TopicMachine};

use crate::history::{Entry, Narrator, Options, TopicKind};

/// How many entries [`Recent`] keeps per connector by default.
pub const DEFAULT_RECENT_ENTRIES: usize = 20;

/// Each connector's latest history entries, the cluster-wide ones, and when each task's status
/// was last written. Bounded: at most `limit` entries per connector (and cluster-wide), one
/// time per task.
#[derive(Debug)]
pub struct Recent {
    narrator: Narrator,
    limit: usize,
    connectors: BTreeMap<String, VecDeque<Entry>>,
    cluster: VecDeque<Entry>,
    task_reports: BTreeMap<(String, i32), i64>,
    live_offsets: BTreeMap<String, u64>,
}

impl Recent {
    /// Keeps `limit` entries per connector (at least one); secrets masked.
    pub fn new(limit: usize) -> Self {
        Self {
            narrator: Narrator::new(Options::default()),
            limit: limit.max(1),
            connectors: BTreeMap::new(),
            cluster: VecDeque::new(),
            task_reports: BTreeMap::new(),
            live_offsets: BTreeMap::new(),
        }
    }

    /// A shared one, for the watched machines of the three topics.
    pub fn shared(limit: usize) -> SharedRecent {
        Arc::new(Mutex::new(Self::new(limit)))
    }

    fn tell(
        &mut self,
        topic: TopicKind,
        record: &Record<'_>,
        changes: Option<Vec<engine::history::Change>>,
    ) {
        if topic == TopicKind::Status && changes.is_some() {
            if let (Some(key), Some(ts)) = (record.key, record.timestamp) {
                if let Some(task) = engine::status::task_of_key(key) {
                    match record.value {
                        Some(_) => {
                            self.task_reports.insert(task, ts);
                        }
                        None => {
                            self.task_reports.remove(&task);
                        }
                    }
                }
            }
        }
        for change in changes.iter().flatten() {
            let Some(connector) = &change.connector else {
                continue;
            };
            match change.kind {
                ChangeKind::OffsetWritten { new_key: true } => {
                    *self.live_offsets.entry(connector.clone()).or_default() += 1;
                }
                ChangeKind::OffsetRemoved { was_live: true } => {
                    if let Some(n) = self.live_offsets.get_mut(connector) {
                        *n = n.saturating_sub(1);
                    }
                }
                _ => {}
            }
        }
        let (connectors, cluster, limit) = (&mut self.connectors, &mut self.cluster, self.limit);
        let mut keep = |entry: Entry| {
            let list = match &entry.connector {
                Some(c) => connectors.entry(c.clone()).or_default(),
                None => &mut *cluster,
            };
            if list.len() == limit {
                list.pop_front();
            }
            list.push_back(entry);
            Ok(())
        };
        // Only a record without timestamp under a time bound fails, and there are no bounds.
        let _ = self.narrator.narrate(topic, record, changes, &mut keep);
    }

    /// A connector's recent entries, oldest first (by record timestamp; the topics are read
    /// one after the other), its open offsets run with them (as it would be told if it ended
    /// now).
    pub fn of_connector(&self, connector: &str) -> Vec<Entry> {
        let mut entries: Vec<Entry> = self
            .connectors
            .get(connector)
            .map(|list| list.iter().cloned().collect())
            .unwrap_or_default();
        entries.extend(
            self.narrator
                .open_runs()
                .into_iter()
                .filter(|e| e.connector.as_deref() == Some(connector)),
        );
        entries.sort_by_key(|e| e.position.timestamp);
        entries
    }

    /// The recent cluster-wide entries (session keys, logger levels), oldest first.
    pub fn of_cluster(&self) -> Vec<Entry> {
        self.cluster.iter().cloned().collect()
    }

    /// Live offsets keys per connector (its source partitions; a partition written under two
    /// byte forms of its key counts twice), kept as records are read so a scrape does not
    /// parse every key.
    pub fn source_partitions(&self) -> &BTreeMap<String, u64> {
        &self.live_offsets
    }

    /// When each task's status was last written (record timestamps, ms), by connector and task.
    pub fn task_reports(&self) -> &BTreeMap<(String, i32), i64> {
        &self.task_reports
    }
}

/// A [`Recent`] the three watched machines share.
pub type SharedRecent = Arc<Mutex<Recent>>;

/// Locks a shared [`Recent`] (a panic while it was held leaves it usable: it is only lists).
pub fn lock(recent: &SharedRecent) -> MutexGuard<'_, Recent> {
    recent.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A topic's machine that tells a shared [`Recent`] what each record changed. It is a
/// [`History`] (the replay machine itself, caught up from the start), driven as a store drives
/// any machine; it queues no events.
pub struct Watched<T: Chronicle> {
    history: History<T>,
    topic: TopicKind,
    recent: SharedRecent,
}

impl<T: Chronicle> Watched<T> {
    /// A machine at the start of `topic`, telling `recent`.
    pub fn new(topic: TopicKind, recent: SharedRecent) -> Self {
        Self {
            history: History::new(),
            topic,
            recent,
        }
    }

    /// The history it wraps.
    pub fn history(&self) -> &History<T> {
        &self.history
    }
}

impl<T: Chronicle + Clone> Clone for Watched<T>
where
    T::Event: Clone,
{
    fn clone(&self) -> Self {
        Self {
            history: History::from_log(self.history.log().clone()),
            topic: self.topic,
            recent: Arc::clone(&self.recent),
        }
    }
}

impl<T: Chronicle> TopicMachine for Watched<T> {
    type Event = std::convert::Infallible;
    type Skip = T::Skip;
    type Snapshot = T::Snapshot;
    type Diagnostics = T::Diagnostics;

    fn handle_record(&mut self, record: Record<'_>) -> Result<RecordOutcome<T::Skip>, RecordError> {
        let (outcome, changes) = self.history.apply(record)?;
        let changes = outcome.is_applied().then_some(changes);
        lock(&self.recent).tell(self.topic, &record, changes);
        Ok(outcome)
    }
    fn mark_caught_up(&mut self) {}
    fn is_caught_up(&self) -> bool {
        true
    }
    fn poll_event(&mut self) -> Option<Self::Event> {
        None
    }
    fn snapshot(&self) -> T::Snapshot {
        self.history.log().snapshot()
    }
    fn next_fetch_offset(&self, partition: i32) -> i64 {
        self.history.log().next_fetch_offset(partition)
    }
    fn diagnostics(&self) -> T::Diagnostics {
        self.history.log().diagnostics()
    }
    fn checkpoint(&self) -> Vec<u8> {
        self.history.log().checkpoint()
    }
    /// A restored watched machine tells a [`Recent`] of its own.
    fn restore(bytes: &[u8]) -> Result<Self, CheckpointError> {
        let log = engine::machine::TopicLog::<T>::restore(bytes)?;
        Ok(Self {
            history: History::from_log(log),
            topic: TopicKind::Config,
            recent: Recent::shared(DEFAULT_RECENT_ENTRIES),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::config::ConfigTopic;
    use engine::status::StatusTopic;

    #[test]
    fn recent_keeps_the_latest_entries_per_connector_and_task_reports() {
        let recent = Recent::shared(2);
        let mut config = Watched::<ConfigTopic>::new(TopicKind::Config, Arc::clone(&recent));
        for (offset, state) in ["PAUSED", "STOPPED", "PAUSED"].iter().enumerate() {
            if offset == 0 {
                let value = br#"{"properties":{"tasks.max":"1"}}"#;
                config
                    .handle_record(Record::new(b"connector-c", Some(value), 0))
                    .unwrap();
            }
            let value = format!(r#"{{"state":"{state}","state.v2":"{state}"}}"#);
            let record = Record::new(b"target-state-c", Some(value.as_bytes()), offset as i64 + 1);
            config.handle_record(record).unwrap();
        }
        let kinds: Vec<&str> = lock(&recent)
            .of_connector("c")
            .iter()
            .map(|e| e.kind)
            .collect();
        assert_eq!(
            kinds,
            ["target_state_changed", "target_state_changed"],
            "two kept"
        );
        assert_eq!(
            config.snapshot().target_state("c").map(|s| s.as_str()),
            Some("PAUSED")
        );

        let mut status = Watched::<StatusTopic>::new(TopicKind::Status, Arc::clone(&recent));
        let running = br#"{"state":"RUNNING","trace":null,"worker_id":"w","generation":1}"#;
        let record = Record::new(b"status-task-c-0", Some(running), 0).with_timestamp(Some(42));
        status.handle_record(record).unwrap();
        let again = Record::new(b"status-task-c-0", Some(running), 1).with_timestamp(Some(50));
        status.handle_record(again).unwrap();
        assert_eq!(
            lock(&recent).task_reports().get(&("c".to_string(), 0)),
            Some(&50),
            "a status written again is a report too"
        );
        let gone = Record::new(b"status-task-c-0", None, 2).with_timestamp(Some(60));
        status.handle_record(gone).unwrap();
        assert!(lock(&recent).task_reports().is_empty());
    }
}
