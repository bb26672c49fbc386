//! The status topic: [`StatusLog`], the sans-IO equivalent of Java's `KafkaStatusBackingStore`,
//! with KIP-558 topic tracking.
//!
//! Feed every record of the topic to [`StatusLog::handle_record`] (in offset order within each
//! partition; partitions may interleave arbitrarily); call [`StatusLog::mark_caught_up`] once the
//! initial read to the end offsets is done; after every `handle_*` call drain
//! [`StatusLog::poll_event`]. [`StatusLog::snapshot`] gives what Java's `get`/`getAll`/`getTopic`
//! return. The write side ([`StatusLog::prepare_put`], [`StatusLog::should_retry`],
//! [`StatusLog::deletion_records`], [`write`](mod@write)) and KIP-558's REST views
//! ([`StatusSnapshot::active_topics`], [`StatusSnapshot::reset_active_topics`]) build the exact records a
//! Java worker would produce.
//!
//! ```
//! use connect_state_core::status::{StatusLog, StatusState};
//! use connect_state_core::Record;
//!
//! let mut log = StatusLog::new();
//! let running = br#"{"state":"RUNNING","trace":null,"worker_id":"w:8083","generation":1}"#;
//! log.handle_record(Record::new(b"status-connector-orders", Some(running), 0).with_partition(3))
//!     .unwrap();
//! log.mark_caught_up();
//! log.handle_record(Record::new(b"status-task-orders-0", Some(running), 0).with_partition(1))
//!     .unwrap();
//! while let Some(event) = log.poll_event() {
//!     println!("{event:?}");
//! }
//! let snapshot = log.snapshot();
//! assert_eq!(snapshot.connector("orders").unwrap().state, StatusState::Running);
//! assert_eq!(snapshot.tasks("orders").count(), 1);
//! ```

mod diagnostics;
mod event;
mod history;
mod java_layout;
mod json_view;
mod keys;
mod skip;
mod snapshot;
mod tracking;
mod types;
mod values;
pub mod write;

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;

use serde::{Deserialize, Serialize};

pub use diagnostics::StatusDiagnostics;
pub use event::StatusEvent;
pub use history::StatusBefore;
pub use json_view::{StatusEventJson, StatusSnapshotJson};
pub use keys::{
    CONNECTOR_STATUS_PREFIX, TASK_STATUS_PREFIX, TOPIC_STATUS_PREFIX, TOPIC_STATUS_SEPARATOR,
};
pub use skip::{StatusSkip, StatusSkipKind};
pub use snapshot::StatusSnapshot;
pub use tracking::{ActiveTopics, TopicTracking, TopicTrackingError};
pub use types::{Status, StatusState, TopicStatus};

/// The connector and task a status-topic key names, when it is a task status key
/// (`status-task-C-N`), read exactly as the status machine reads it.
pub fn task_of_key(key: &[u8]) -> Option<(String, i32)> {
    match keys::dispatch(&keys::key_string(key)) {
        keys::StatusKey::Task { connector, task } => Some((connector.into_owned(), task)),
        _ => None,
    }
}
pub use write::{can_write_safely, PendingStatusWrite, StatusUpdate};

use crate::config::TaskId;
use crate::machine::{Events, Topic, TopicLog};
use crate::name::Name;
use crate::persistent::ToKey;
use crate::skips::SkipCounts;
use crate::sync::Arc;
use crate::TopicKind;
use crate::{Record, RecordOutcome};
use keys::StatusKey;
use snapshot::{Tables, TaskRow, TopicRow};

/// What handling a status record did.
pub type StatusOutcome = RecordOutcome<StatusSkip>;

/// The write-side half of Java's `CacheEntry` (`sequence`, `deleted`) plus the store-wide
/// `generation`: what `send` and its retry callback consult (spec §3.3).
///
/// A Java entry exists for every key with a cached value, and for every key this worker sent a
/// status for, until a tombstone is read. Entries created by reads are implicit here (their
/// sequence is 0 until a write); an `EntryMeta` is created by the first write. Java's `deleted`
/// flag is modelled by the incarnation: a tombstone removes the entry, and a later write creates a
/// new one with a fresh incarnation, so a pending write whose incarnation is gone was deleted.
///
/// A restarted Java worker starts with none of this, so checkpoints do not carry it.
#[derive(Debug, Clone, Default)]
struct WriteBook {
    /// Java's store-wide `generation`: that of the most recent status passed to `send`.
    generation: i32,
    next_incarnation: u64,
    connectors: BTreeMap<String, EntryMeta>,
    tasks: BTreeMap<String, BTreeMap<i32, EntryMeta>>,
}

/// Java's `CacheEntry` minus the value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct EntryMeta {
    sequence: i32,
    incarnation: u64,
}

/// The status topic's own state, which [`StatusLog`] drives: the read-back caches
/// (checkpoints hold them, with the engine's positions and skip counters) and the write-side
/// bookkeeping (they do not: a restarted Java worker starts without it too).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct StatusTopic {
    tables: Tables,
    #[serde(skip)]
    book: WriteBook,
}

/// The status-topic state machine. See the [module docs](self) for the drive loop.
pub type StatusLog = TopicLog<StatusTopic>;

impl Topic for StatusTopic {
    type Event = StatusEvent;
    type Skip = StatusSkip;
    type Snapshot = StatusSnapshot;
    type Diagnostics = StatusDiagnostics;
    const KIND: TopicKind = TopicKind::Status;

    /// Java's read callback: dispatch on the key, then look at the value.
    fn apply(
        &mut self,
        record: &Record<'_>,
        events: &mut Events<'_, StatusEvent>,
    ) -> Result<(), StatusSkip> {
        let key_bytes = record.key.ok_or(StatusSkip::NullKey)?;
        let key = keys::key_string(key_bytes);
        match keys::dispatch(&key) {
            StatusKey::Connector(c) => self.on_connector(c, record.value, events),
            StatusKey::Task { connector, task } => {
                self.on_task(&connector, task, record.value, events)
            }
            StatusKey::Topic { topic, connector } => {
                self.on_topic(topic, &connector, record.value, events)
            }
            StatusKey::InvalidConnector => Err(StatusSkip::InvalidConnectorKey),
            StatusKey::InvalidTask => Err(StatusSkip::InvalidTaskKey),
            StatusKey::InvalidTopic(reason) => Err(StatusSkip::InvalidTopicKey { reason }),
            StatusKey::Unknown => Err(StatusSkip::UnknownKey),
        }
    }

    /// What Java's `get`/`getAll`/`getTopic` return, O(1).
    fn snapshot(&self) -> StatusSnapshot {
        StatusSnapshot(Arc::new(self.tables.clone()))
    }

    /// Skip counters, orphan task statuses, topic statuses of connectors without a status.
    /// O(1); the lists are computed when iterated.
    fn diagnostics(&self, skipped: &SkipCounts<StatusSkipKind>) -> StatusDiagnostics {
        StatusDiagnostics {
            skipped: skipped.clone(),
            snapshot: self.snapshot(),
        }
    }
}

impl StatusLog {
    /// Java's `connectors()`: every connector name with a cache entry, sorted. Besides the names
    /// with a status read back (those of the snapshot), it includes names this machine only
    /// wrote for through [`prepare_put`](Self::prepare_put), until a tombstone for them is read
    /// (spec §3.1, §6 item 3). The leader's deleted-connector clean-up iterates this.
    pub fn known_connectors(&self) -> Vec<String> {
        let read = self.topic.tables.connectors.keys();
        let written = self.topic.book.connectors.keys();
        let mut names: Vec<String> = read
            .map(|name| String::from(name.as_str()))
            .chain(written.cloned())
            .collect();
        names.sort_unstable();
        names.dedup();
        names
    }
}

/// The event's share of a status just read, when events are queued: otherwise no share is
/// taken (a reference count raised and dropped again for every record of a replay).
fn shared_for_event(status: &Arc<Status>, events: &Events<'_, StatusEvent>) -> Option<Arc<Status>> {
    events.enabled().then(|| status.clone())
}

impl StatusTopic {
    fn on_connector(
        &mut self,
        c: &str,
        value: Option<&[u8]>,
        events: &mut Events<'_, StatusEvent>,
    ) -> Result<(), StatusSkip> {
        let Some(bytes) = value else {
            self.remove_connector(c, events);
            return Ok(());
        };
        let status = Arc::new(values::status(bytes)?);
        let for_event = shared_for_event(&status, events);
        // No staleness check for connectors: the last record read wins (spec §3.2).
        self.tables.connectors.set(&Name::key(c), status);
        if let Some(status) = for_event {
            events.emit(|| StatusEvent::ConnectorStatusChanged {
                connector: c.into(),
                status,
            });
        }
        Ok(())
    }

    /// Java's `remove(connector)`: the connector entry and the whole task row go (their entries
    /// marked deleted); topic statuses stay (spec §3.5).
    fn remove_connector(&mut self, c: &str, events: &mut Events<'_, StatusEvent>) {
        let t = &mut self.tables;
        t.connectors.remove(c);
        let row = t.tasks.remove(c);
        self.book.connectors.remove(c);
        self.book.tasks.remove(c);
        for task in row.iter().flat_map(|row| row.keys()) {
            events.emit(|| StatusEvent::TaskRemoved {
                id: TaskId::new(c, *task),
            });
        }
        events.emit(|| StatusEvent::ConnectorRemoved {
            connector: c.into(),
        });
    }

    fn on_task(
        &mut self,
        c: &str,
        task: i32,
        value: Option<&[u8]>,
        events: &mut Events<'_, StatusEvent>,
    ) -> Result<(), StatusSkip> {
        let Some(bytes) = value else {
            self.remove_task(c, task);
            events.emit(|| StatusEvent::TaskRemoved {
                id: TaskId::new(c, task),
            });
            return Ok(());
        };
        let status = Arc::new(values::status(bytes)?);
        let for_event = shared_for_event(&status, events);
        let t = &mut self.tables;
        // One search of the connectors' rows (the replay's most frequent record).
        let key = Name::key(c);
        match t.tasks.get_mut(&key) {
            // One search of the row: a task's status is replaced in place.
            Some(row) => match row.get_mut(&task) {
                Some(cell) => {
                    if is_stale_unassigned(Some(cell), &status) {
                        return Err(StatusSkip::StaleUnassigned);
                    }
                    *cell = status;
                }
                None => {
                    row.insert(task, status);
                }
            },
            None => {
                let mut row = TaskRow::new();
                row.insert(task, status);
                t.tasks.insert(key.to_key(), row);
            }
        }
        if let Some(status) = for_event {
            events.emit(|| StatusEvent::TaskStatusChanged {
                id: TaskId::new(c, task),
                status,
            });
        }
        Ok(())
    }

    /// Java's `remove(ConnectorTaskId)`: the cell goes (its entry marked deleted) and the row
    /// with it when it becomes empty.
    fn remove_task(&mut self, c: &str, task: i32) {
        let t = &mut self.tables;
        if t.tasks.get(c).is_some_and(|row| row.contains_key(&task)) {
            if let Some(row) = t.tasks.get_mut(c) {
                row.remove(&task);
                if row.is_empty() {
                    t.tasks.remove(c);
                }
            }
        }
        if let Some(row) = self.book.tasks.get_mut(c) {
            row.remove(&task);
            if row.is_empty() {
                self.book.tasks.remove(c);
            }
        }
    }

    fn on_topic(
        &mut self,
        topic: &str,
        connector: &str,
        value: Option<&[u8]>,
        events: &mut Events<'_, StatusEvent>,
    ) -> Result<(), StatusSkip> {
        let t = &mut self.tables;
        let Some(bytes) = value else {
            // Java's `topics.get(c).remove(t)`: the inner map stays, even when empty.
            if t.topics
                .get(connector)
                .is_some_and(|row| row.contains_key(topic))
            {
                if let Some(row) = t.topics.get_mut(connector) {
                    row.remove(topic);
                }
            }
            events.emit(|| StatusEvent::TopicRemoved {
                connector: connector.into(),
                topic: topic.into(),
            });
            return Ok(());
        };
        let status = Arc::new(values::topic_status(bytes)?);
        let row = t
            .topics
            .get_or_insert_with(&Name::key(connector), TopicRow::new);
        row.set(&Name::key(topic), status);
        events.emit(|| StatusEvent::TopicActive {
            connector: connector.into(),
            topic: topic.into(),
        });
        Ok(())
    }
}

/// The KAFKA-12525 read filter (spec §3.2): an incoming `UNASSIGNED` is stale when the cached
/// status is `RUNNING` with a generation at least as new. Worker ids are not compared.
fn is_stale_unassigned(cached: Option<&Status>, incoming: &Status) -> bool {
    incoming.state == StatusState::Unassigned
        && cached
            .is_some_and(|c| c.state == StatusState::Running && c.generation >= incoming.generation)
}

#[cfg(test)]
mod tests;
