//! One machine for any of the three topics, speaking bytes and JSON text: what a runtime that
//! embeds the core through a foreign interface (the Python package, the C ABI, the Go package
//! over it) needs, and nothing more. The runtime does the IO (its own Kafka client); this does
//! the state, with the answers of `connect-state replay --format json`.
//!
//! No logic of its own: each call forwards to the topic's machine and renders through the
//! core's JSON views, so the bindings stay thin adapters (they convert types and errors).
//!
//! ```
//! use connect_state_ops::embed::{Handled, Machine, TopicKind};
//!
//! let mut m = Machine::new(TopicKind::Config);
//! let config = br#"{"properties":{"connector.class":"FileStreamSource","tasks.max":"1"}}"#;
//! let handled = m.handle_record(Some(b"connector-orders"), Some(config), 0, 0, None).unwrap();
//! assert_eq!(handled, Handled::Applied);
//! m.mark_caught_up();
//! while let Some(event) = m.poll_event_json() { println!("{event}"); }
//! let snapshot: String = m.snapshot_json(); // the contract of `replay --format json`
//! let again = Machine::restore(TopicKind::Config, &m.checkpoint()).unwrap();
//! assert_eq!(again.snapshot_json(), snapshot);
//! ```

use engine::config::{ConfigEventJson, ConfigLog, ConfigSnapshotJson};
use engine::offsets::{OffsetEventJson, OffsetLog, OffsetSnapshotJson};
use engine::skips::{SkipCounts, SkipKind};
use engine::status::{StatusEventJson, StatusLog, StatusSnapshotJson};
use engine::{Record, RecordOutcome};
use serde_json::{json, Map, Value};

pub use engine::TopicKind;

pub mod history;
pub mod writes;

/// The version of the JSON contract the snapshots, events and diagnostics are written in
/// (DESIGN.md's, that of `connect-state replay --format json`). Within a version members are
/// only ever added (a reader ignores members it does not know); a member removed, renamed or
/// given another meaning makes a new version. Every binding exposes it.
pub const CONTRACT_VERSION: u32 = 1;

/// A machine of one topic.
#[derive(Debug, Clone)]
pub enum Machine {
    /// The config topic's (`KafkaConfigBackingStore`).
    Config(ConfigLog),
    /// The status topic's (`KafkaStatusBackingStore`).
    Status(StatusLog),
    /// The offsets topic's (`KafkaOffsetBackingStore`).
    Offsets(OffsetLog),
}

/// What [`Machine::handle_record`] did with a record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Handled {
    /// Applied.
    Applied,
    /// Skipped, as Java skips it, for this reason (counted in the diagnostics).
    Skipped(String),
}

/// Why a call failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EmbedError {
    /// The record cannot be a Kafka record (a negative offset or partition, a key too long).
    #[error("{0}")]
    Record(String),
    /// The checkpoint is corrupt, truncated, of another version or of another topic.
    #[error("{0}")]
    Checkpoint(String),
    /// A write Java would refuse (a connector that is not stopped, an offset that is not a
    /// map, an unknown state name, an empty session key, a topic without partitions).
    #[error("{0}")]
    Write(String),
}

/// Calls `$body` with the machine of whichever topic, bound to `$m`.
macro_rules! each {
    ($self:expr, $m:ident => $body:expr) => {
        match $self {
            Machine::Config($m) => $body,
            Machine::Status($m) => $body,
            Machine::Offsets($m) => $body,
        }
    };
}

impl Machine {
    /// A fresh machine for `topic`, reading its start-up catch-up (no events until
    /// [`Machine::mark_caught_up`]).
    pub fn new(topic: TopicKind) -> Self {
        match topic {
            TopicKind::Config => Self::Config(ConfigLog::new()),
            TopicKind::Status => Self::Status(StatusLog::default()),
            TopicKind::Offsets => Self::Offsets(OffsetLog::new()),
        }
    }

    /// The topic it reads.
    pub fn topic(&self) -> TopicKind {
        match self {
            Self::Config(_) => TopicKind::Config,
            Self::Status(_) => TopicKind::Status,
            Self::Offsets(_) => TopicKind::Offsets,
        }
    }

    /// Applies one record (`value: None` is a tombstone, `key: None` a record without key).
    /// Drain [`Machine::poll_event_json`] after each call.
    pub fn handle_record(
        &mut self,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
        offset: i64,
        partition: i32,
        timestamp: Option<i64>,
    ) -> Result<Handled, EmbedError> {
        let record = Record {
            key,
            value,
            offset,
            partition,
            timestamp,
        };
        fn outcome<S: core::fmt::Debug + core::fmt::Display>(outcome: RecordOutcome<S>) -> Handled {
            match outcome {
                RecordOutcome::Applied => Handled::Applied,
                RecordOutcome::Skipped(reason) => Handled::Skipped(reason.to_string()),
                // Only layers withhold records, and an embedded machine has none.
                RecordOutcome::Withheld => Handled::Skipped("withheld".into()),
            }
        }
        each!(self, m => m
            .handle_record(record)
            .map(outcome)
            .map_err(|e| EmbedError::Record(e.to_string())))
    }

    /// The config log, when this is the config topic's machine (for [`writes`]).
    pub fn as_config(&self) -> Option<&ConfigLog> {
        match self {
            Self::Config(m) => Some(m),
            _ => None,
        }
    }

    /// The status log, when this is the status topic's machine (for [`writes::put_status`],
    /// which keeps Java's write-side bookkeeping in it).
    pub fn as_status_mut(&mut self) -> Option<&mut StatusLog> {
        match self {
            Self::Status(m) => Some(m),
            _ => None,
        }
    }

    /// The offsets log, when this is the offsets topic's machine (for [`writes`]).
    pub fn as_offsets(&self) -> Option<&OffsetLog> {
        match self {
            Self::Offsets(m) => Some(m),
            _ => None,
        }
    }

    /// Ends the start-up read: from now on records produce events.
    pub fn mark_caught_up(&mut self) {
        each!(self, m => m.mark_caught_up());
    }

    /// Whether [`Machine::mark_caught_up`] was called.
    pub fn is_caught_up(&self) -> bool {
        each!(self, m => m.is_caught_up())
    }

    /// The next event in the JSON contract (`{"type": ..., ...}`), `None` when drained.
    pub fn poll_event_json(&mut self) -> Option<String> {
        let text = |value: serde_json::Result<String>| value.unwrap_or_default();
        match self {
            Self::Config(m) => m
                .poll_event()
                .map(|e| text(serde_json::to_string(&ConfigEventJson(&e)))),
            Self::Status(m) => m
                .poll_event()
                .map(|e| text(serde_json::to_string(&StatusEventJson(&e)))),
            Self::Offsets(m) => m
                .poll_event()
                .map(|e| text(serde_json::to_string(&OffsetEventJson(&e)))),
        }
    }

    /// The snapshot in the JSON contract, exactly as `connect-state replay --format json`
    /// prints it (compact).
    pub fn snapshot_json(&self) -> String {
        let text = match self {
            Self::Config(m) => serde_json::to_string(&ConfigSnapshotJson(&m.snapshot())),
            Self::Status(m) => serde_json::to_string(&StatusSnapshotJson(&m.snapshot())),
            Self::Offsets(m) => serde_json::to_string(&OffsetSnapshotJson(&m.snapshot())),
        };
        // The views serialize strings and numbers only: writing them cannot fail.
        text.unwrap_or_default()
    }

    /// What Java does not keep, as JSON: `{"skipped": {reason: count}, ...}` and, per topic,
    /// inconsistent connectors (config), task statuses without a connector status (status),
    /// keys that are not `[connector, partition]` (offsets).
    pub fn diagnostics_json(&self) -> String {
        fn skipped<K: SkipKind>(counts: &SkipCounts<K>) -> Value {
            Value::Object(
                counts
                    .iter()
                    .map(|(kind, n)| (kind.as_str().to_string(), json!(n)))
                    .collect(),
            )
        }
        let value = match self {
            Self::Config(m) => {
                let d = m.diagnostics();
                let inconsistent: Map<String, Value> = d
                    .inconsistencies()
                    .map(|(c, why)| {
                        let why = json!({"commit_offset": why.commit_offset,
                            "task_count": why.task_count, "missing_tasks": why.missing_tasks,
                            "missing_count": why.missing_count});
                        (c.to_string(), why)
                    })
                    .collect();
                json!({"skipped": skipped(d.skipped()), "inconsistent": inconsistent})
            }
            Self::Status(m) => {
                let d = m.diagnostics();
                let orphans: Vec<Value> = d
                    .orphan_task_statuses()
                    .map(|(c, task, _)| json!({"connector": c, "task": task}))
                    .collect();
                json!({"skipped": skipped(d.skipped()), "orphan_task_statuses": orphans})
            }
            Self::Offsets(m) => {
                let d = m.diagnostics();
                json!({"skipped": skipped(d.skipped()), "untracked_keys": d.untracked_keys(),
                       "null_partition_keys": d.null_partition_keys()})
            }
        };
        value.to_string()
    }

    /// The whole machine as checkpoint bytes (versioned and checked; see
    /// [`Machine::restore`]).
    pub fn checkpoint(&self) -> Vec<u8> {
        each!(self, m => m.checkpoint())
    }

    /// A machine of `topic` from [`Machine::checkpoint`] bytes; not caught up (read the tail,
    /// then [`Machine::mark_caught_up`]). Refuses corrupt, truncated or foreign bytes.
    pub fn restore(topic: TopicKind, bytes: &[u8]) -> Result<Self, EmbedError> {
        let refused =
            |e: engine::checkpoint::CheckpointError| EmbedError::Checkpoint(e.to_string());
        Ok(match topic {
            TopicKind::Config => Self::Config(ConfigLog::restore(bytes).map_err(refused)?),
            TopicKind::Status => Self::Status(StatusLog::restore(bytes).map_err(refused)?),
            TopicKind::Offsets => Self::Offsets(OffsetLog::restore(bytes).map_err(refused)?),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_machine_answers_in_the_json_contract() {
        let mut m = Machine::new(TopicKind::Config);
        let config = br#"{"properties":{"connector.class":"S"}}"#;
        assert_eq!(
            m.handle_record(Some(b"connector-a"), Some(config), 0, 0, None),
            Ok(Handled::Applied)
        );
        assert!(matches!(
            m.handle_record(Some(b"connector-b"), Some(b"{"), 1, 0, None),
            Ok(Handled::Skipped(_))
        ));
        m.mark_caught_up();
        let paused = br#"{"state":"PAUSED"}"#;
        m.handle_record(Some(b"target-state-a"), Some(paused), 2, 0, None)
            .unwrap();
        let event: Value = serde_json::from_str(&m.poll_event_json().unwrap()).unwrap();
        assert_eq!(event["type"], "target_state_changed");
        assert_eq!(m.poll_event_json(), None);
        let snapshot: Value = serde_json::from_str(&m.snapshot_json()).unwrap();
        assert_eq!(snapshot["connectors"], json!(["a"]));
        let diagnostics: Value = serde_json::from_str(&m.diagnostics_json()).unwrap();
        assert_eq!(diagnostics["skipped"]["invalid_json"], 1);
        let restored = Machine::restore(TopicKind::Config, &m.checkpoint()).unwrap();
        assert_eq!(restored.snapshot_json(), m.snapshot_json());
        assert!(Machine::restore(TopicKind::Status, &m.checkpoint()).is_err());
        assert!(Machine::restore(TopicKind::Config, b"garbage").is_err());
        assert!(matches!(
            m.handle_record(Some(b"k"), None, -1, 0, None),
            Err(EmbedError::Record(_))
        ));
    }
}
