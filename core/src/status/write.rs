//! The write side of the status topic (spec §2.1, §2.2, §3.3, §3.4, §3.6): the exact records a
//! Java worker produces, byte for byte, and the bookkeeping of Java's `send` that decides which
//! writes happen and which failed writes are retried.
//!
//! Every record goes to the default partitioner (`partition: None`, murmur2 of the key bytes,
//! see [`crate::offsets::default_partition`]): a writer MUST use Java's partitioner so that all
//! writes of a key land on one partition (spec §3.9).
//!
//! A Java worker's status write runs as follows, and a transport drives the same steps:
//!
//! 1. [`StatusLog::prepare_put`] (Java's `put` / `putSafe` up to the send). `None`: nothing to
//!    write.
//! 2. Produce [`PendingStatusWrite::record`]. Success: done; the status becomes visible once it
//!    is read back.
//! 3. On a retriable error, ask [`StatusLog::should_retry`]; `true`: produce the identical record
//!    again (Java does this forever, from a single background thread), `false`: drop it. On any
//!    other error, drop it (Java logs "Failed to write status update").

use alloc::string::String;
use alloc::vec::Vec;

use super::keys::{
    CONNECTOR_STATUS_PREFIX, TASK_STATUS_PREFIX, TOPIC_STATUS_PREFIX, TOPIC_STATUS_SEPARATOR,
};
use super::types::{Status, StatusState, TopicStatus};
use super::{EntryMeta, StatusLog};
use crate::json::write_str;
use crate::plan::WritePlan;
pub use crate::record::ProducerRecord;

/// `status-connector-<connector>`.
pub fn connector_key(connector: &str) -> String {
    alloc::format!("{CONNECTOR_STATUS_PREFIX}{connector}")
}

/// `status-task-<connector>-<task>`, the task number in decimal (`-` for negatives).
pub fn task_key(connector: &str, task: i32) -> String {
    alloc::format!("{TASK_STATUS_PREFIX}{connector}-{task}")
}

/// `status-topic-<topic>:connector-<connector>`.
pub fn topic_key(topic: &str, connector: &str) -> String {
    alloc::format!("{TOPIC_STATUS_PREFIX}{topic}{TOPIC_STATUS_SEPARATOR}{connector}")
}

/// A connector or task status a worker wants to write (Java's `ConnectorStatus` /
/// `TaskStatus` passed to `put` or `putSafe`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct StatusUpdate {
    /// The connector.
    pub connector: String,
    /// The task number, or `None` for the connector's own status.
    pub task: Option<i32>,
    /// The new state; [`StatusState::Destroyed`] writes a tombstone.
    pub state: StatusState,
    /// The failure trace, if any.
    pub trace: Option<String>,
    /// This worker's id (its advertised REST `host:port`).
    pub worker_id: String,
    /// This worker's current group generation.
    pub generation: i32,
    /// The plugin version (Kafka 4.1+, KIP-891), written as the fifth member `"version"`:
    /// `null` when `None`, as Kafka 4.4.0's writer always writes it (checked by the Java
    /// oracle; Kafka 4.0 wrote four members).
    pub version: Option<String>,
}

impl StatusUpdate {
    /// A connector status without trace or version.
    pub fn for_connector(
        connector: impl Into<String>,
        state: StatusState,
        worker_id: impl Into<String>,
        generation: i32,
    ) -> Self {
        Self {
            connector: connector.into(),
            task: None,
            state,
            trace: None,
            worker_id: worker_id.into(),
            generation,
            version: None,
        }
    }

    /// A task status without trace or version.
    pub fn for_task(
        connector: impl Into<String>,
        task: i32,
        state: StatusState,
        worker_id: impl Into<String>,
        generation: i32,
    ) -> Self {
        Self {
            task: Some(task),
            ..Self::for_connector(connector, state, worker_id, generation)
        }
    }

    /// The same update with a failure trace.
    #[must_use]
    pub fn with_trace(self, trace: impl Into<String>) -> Self {
        Self {
            trace: Some(trace.into()),
            ..self
        }
    }

    /// The same update with a plugin version.
    #[must_use]
    pub fn with_version(self, version: impl Into<String>) -> Self {
        Self {
            version: Some(version.into()),
            ..self
        }
    }

    /// The record key.
    pub fn key(&self) -> String {
        match self.task {
            None => connector_key(&self.connector),
            Some(task) => task_key(&self.connector, task),
        }
    }

    /// The value: `None` (a tombstone) for [`StatusState::Destroyed`], otherwise Jackson's
    /// compact JSON in schema order, e.g.
    /// `{"state":"RUNNING","trace":null,"worker_id":"localhost:8083","generation":1,"version":null}`.
    pub fn value(&self) -> Option<String> {
        if self.state == StatusState::Destroyed {
            return None;
        }
        let mut out = String::from("{\"state\":\"");
        out.push_str(self.state.as_str());
        out.push_str("\",\"trace\":");
        match &self.trace {
            Some(trace) => write_str(&mut out, trace),
            None => out.push_str("null"),
        }
        out.push_str(",\"worker_id\":");
        write_str(&mut out, &self.worker_id);
        out.push_str(&alloc::format!(",\"generation\":{}", self.generation));
        out.push_str(",\"version\":");
        match &self.version {
            Some(version) => write_str(&mut out, version),
            None => out.push_str("null"),
        }
        out.push('}');
        Some(out)
    }

    /// The record, for the default partitioner.
    pub fn record(&self) -> ProducerRecord {
        ProducerRecord::from_strings(self.key(), self.value())
    }
}

/// Java's `CacheEntry.canWriteSafely(status)`: whether a `putSafe` of `update` may overwrite the
/// cached status. True when nothing was read for the key, when the cached status was written by
/// the same worker, or when its generation is not newer than the update's. So a safe write is
/// refused exactly when another worker's status with a strictly newer generation was read.
///
/// A cached status without a worker id (accepted on read, spec §6 item 4) makes Java throw a
/// NullPointerException on the caller's thread. Here it counts as "another worker", so the
/// generations decide.
pub fn can_write_safely(cached: Option<&Status>, update: &StatusUpdate) -> bool {
    cached.is_none_or(|cached| {
        cached.worker_id.as_deref() == Some(update.worker_id.as_str())
            || cached.generation <= update.generation
    })
}

/// A connector or task status write that [`StatusLog::prepare_put`] let through: the record to
/// produce and what Java's send callback remembers to decide on retries.
///
/// It is only meaningful for the [`StatusLog`] that prepared it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingStatusWrite {
    record: ProducerRecord,
    update: StatusUpdate,
    sequence: i32,
    safe: bool,
    incarnation: u64,
}

/// Java's log line when a status write fails (it retries or drops it; nothing is thrown).
pub const STATUS_WRITE_ERROR: &str = "Failed to write status update";

impl PendingStatusWrite {
    /// The write as a plan: the one record from the log's producer, not read back (Java sends
    /// status updates without waiting to read them).
    #[must_use]
    pub fn plan(&self) -> WritePlan {
        WritePlan::single(alloc::vec![self.record.clone()], false, STATUS_WRITE_ERROR)
    }

    /// The record to produce; a retry produces exactly the same one.
    pub fn record(&self) -> &ProducerRecord {
        &self.record
    }

    /// The record, by value.
    pub fn into_record(self) -> ProducerRecord {
        self.record
    }

    /// The status being written.
    pub fn update(&self) -> &StatusUpdate {
        &self.update
    }

    /// The entry's sequence number taken by this write (Java's `++entry.sequence`, wrapping).
    pub fn sequence(&self) -> i32 {
        self.sequence
    }

    /// The generation of this write.
    pub fn generation(&self) -> i32 {
        self.update.generation
    }

    /// Whether this is a `putSafe`.
    pub fn is_safe(&self) -> bool {
        self.safe
    }
}

/// A topic status record (`put(TopicStatus)`):
/// `{"topic":{"name":..,"connector":..,"task":..,"discoverTimestamp":..}}` under
/// `status-topic-<name>:connector-<connector>`. There is no sequence or generation bookkeeping;
/// Java retries a retriable failure forever.
pub fn topic_status_record(status: &TopicStatus) -> ProducerRecord {
    ProducerRecord::from_strings(
        topic_key(&status.name, &status.connector),
        Some(topic_status_value(status)),
    )
}

/// The value of a topic status record, e.g.
/// `{"topic":{"name":"foo-topic","connector":"foo-source","task":0,"discoverTimestamp":1589972451234}}`.
pub fn topic_status_value(status: &TopicStatus) -> String {
    let mut out = String::from("{\"topic\":{\"name\":");
    write_str(&mut out, &status.name);
    out.push_str(",\"connector\":");
    write_str(&mut out, &status.connector);
    out.push_str(&alloc::format!(
        ",\"task\":{},\"discoverTimestamp\":{}}}}}",
        status.task,
        status.discover_timestamp
    ));
    out
}

/// Java's `deleteTopic(connector, topic)`: the tombstone of a topic status.
pub fn topic_tombstone(connector: &str, topic: &str) -> ProducerRecord {
    ProducerRecord::from_strings(topic_key(topic, connector), None)
}

impl StatusLog {
    /// The cached (read-back) status of a connector (`task: None`) or task.
    fn cached(&self, connector: &str, task: Option<i32>) -> Option<&Status> {
        let t = &self.topic.tables;
        match task {
            None => t.connectors.get(connector),
            Some(n) => t.tasks.get(connector).and_then(|row| row.get(&n)),
        }
        .map(|s| &**s)
    }

    /// Java's `getOrAdd`: the write-side entry of a key, created if absent.
    fn entry_meta(&mut self, connector: &str, task: Option<i32>) -> &mut EntryMeta {
        let book = &mut self.topic.book;
        let fresh = EntryMeta {
            sequence: 0,
            incarnation: book.next_incarnation,
        };
        let entry = match task {
            None => book.connectors.entry(connector.into()).or_insert(fresh),
            Some(n) => book
                .tasks
                .entry(connector.into())
                .or_default()
                .entry(n)
                .or_insert(fresh),
        };
        if entry.incarnation == book.next_incarnation {
            book.next_incarnation = book.next_incarnation.wrapping_add(1);
        }
        entry
    }

    /// The write-side entry of a key, if Java would still hold that entry object.
    fn existing_meta(&self, connector: &str, task: Option<i32>) -> Option<EntryMeta> {
        match task {
            None => self.topic.book.connectors.get(connector),
            Some(n) => self
                .topic
                .book
                .tasks
                .get(connector)
                .and_then(|row| row.get(&n)),
        }
        .copied()
    }

    /// Java's `put` (`safe = false`) or `putSafe` (`safe = true`) up to the asynchronous send
    /// (spec §3.3 steps 1-3):
    ///
    /// 1. the key's cache entry is created if absent, so the connector appears in
    ///    [`known_connectors`](Self::known_connectors) even if nothing is written;
    /// 2. the store generation becomes `update.generation`, even if the write is then refused;
    /// 3. a safe write that [`can_write_safely`] refuses returns `None` (silently, as in Java);
    /// 4. otherwise the entry's sequence is incremented and the write is returned.
    ///
    /// The cached status itself does not change: writes become visible when read back.
    pub fn prepare_put(&mut self, update: StatusUpdate, safe: bool) -> Option<PendingStatusWrite> {
        self.entry_meta(&update.connector, update.task);
        self.topic.book.generation = update.generation;
        if safe && !can_write_safely(self.cached(&update.connector, update.task), &update) {
            return None;
        }
        let entry = self.entry_meta(&update.connector, update.task);
        entry.sequence = entry.sequence.wrapping_add(1);
        let (sequence, incarnation) = (entry.sequence, entry.incarnation);
        Some(PendingStatusWrite {
            record: update.record(),
            update,
            sequence,
            safe,
            incarnation,
        })
    }

    /// Java's send callback after a **retriable** failure (spec §3.3): whether to produce the
    /// identical record again. The retry is abandoned when
    ///
    /// * the key's entry was deleted (a tombstone for it, or for its connector, was read since
    ///   the write was prepared), or
    /// * a status of another generation has been passed to
    ///   [`prepare_put`](Self::prepare_put) since, or
    /// * for a safe write: [`can_write_safely`] now refuses it, or a newer write to the same key
    ///   was prepared.
    ///
    /// After a non-retriable failure Java never retries.
    pub fn should_retry(&self, pending: &PendingStatusWrite) -> bool {
        let update = &pending.update;
        let Some(entry) = self.existing_meta(&update.connector, update.task) else {
            return false;
        };
        if entry.incarnation != pending.incarnation {
            return false;
        }
        if update.generation != self.topic.book.generation {
            return false;
        }
        !pending.safe
            || (can_write_safely(self.cached(&update.connector, update.task), update)
                && entry.sequence == pending.sequence)
    }

    /// The records of Java's `onDeletion(connector)` (spec §3.4, §3.6): a tombstone for every
    /// task status cached for the connector (ascending task number), then the connector's
    /// tombstone. Pure: use [`prepare_deletion`](Self::prepare_deletion) to also do Java's
    /// `send` bookkeeping.
    pub fn deletion_records(&self, connector: &str) -> Vec<ProducerRecord> {
        let tasks = self.topic.tables.tasks.get(connector);
        tasks
            .into_iter()
            .flat_map(|row| row.keys())
            .map(|task| ProducerRecord::from_strings(task_key(connector, *task), None))
            .chain(core::iter::once(ProducerRecord::from_strings(
                connector_key(connector),
                None,
            )))
            .collect()
    }

    /// Java's `onDeletion(connector)` through `put`: a `DESTROYED` status (a tombstone) for
    /// every task status cached for the connector (ascending), then for the connector, each
    /// through [`prepare_put`](Self::prepare_put) with this worker's id and generation. The
    /// records are those of [`deletion_records`](Self::deletion_records).
    pub fn prepare_deletion(
        &mut self,
        connector: &str,
        worker_id: &str,
        generation: i32,
    ) -> Vec<PendingStatusWrite> {
        let tasks: Vec<i32> = self
            .topic
            .tables
            .tasks
            .get(connector)
            .map(|row| row.keys().copied().collect())
            .unwrap_or_default();
        let updates = tasks
            .into_iter()
            .map(|n| {
                StatusUpdate::for_task(connector, n, StatusState::Destroyed, worker_id, generation)
            })
            .chain(core::iter::once(StatusUpdate::for_connector(
                connector,
                StatusState::Destroyed,
                worker_id,
                generation,
            )));
        updates
            .filter_map(|update| self.prepare_put(update, false))
            .collect()
    }
}
