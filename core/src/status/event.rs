//! Events of the status topic.
//!
//! Java's `KafkaStatusBackingStore` has no listener: the herder polls the caches. These events
//! are additive, so that an embedder can follow changes without diffing snapshots. They fire
//! only after [`StatusLog::mark_caught_up`](super::StatusLog::mark_caught_up), once per record
//! that changed (or, for tombstones, would change) the caches.

use alloc::string::String;

use super::types::Status;
use crate::config::TaskId;
use crate::sync::Arc;

/// One change to the read-back caches.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum StatusEvent {
    /// A connector status was read and stored (also when equal to the previous one).
    ConnectorStatusChanged {
        /// The connector.
        connector: String,
        /// Its new status.
        status: Arc<Status>,
    },
    /// A connector tombstone was read (whether or not a status was cached). It is preceded by a
    /// [`TaskRemoved`](Self::TaskRemoved) for every task status it dropped.
    ConnectorRemoved {
        /// The connector.
        connector: String,
    },
    /// A task status was read and stored (not fired for a stale `UNASSIGNED`, which is skipped).
    TaskStatusChanged {
        /// The task.
        id: TaskId,
        /// Its new status.
        status: Arc<Status>,
    },
    /// A task tombstone was read (whether or not a status was cached), or a connector tombstone
    /// dropped this task's status.
    TaskRemoved {
        /// The task.
        id: TaskId,
    },
    /// A topic status was read and stored (KIP-558), by the key's connector and topic.
    TopicActive {
        /// The connector of the key.
        connector: String,
        /// The topic of the key.
        topic: String,
    },
    /// A topic status tombstone was read (whether or not the topic was cached).
    TopicRemoved {
        /// The connector of the key.
        connector: String,
        /// The topic of the key.
        topic: String,
    },
}
