//! Value types of the status topic: states, connector/task statuses and topic statuses.

use alloc::string::String;
use core::fmt;

use serde::{Deserialize, Serialize};

/// The state of a connector or task: Java's `AbstractStatus.State` (spec §2.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum StatusState {
    /// Not assigned to any worker (written when a connector or task shuts down).
    Unassigned,
    /// Running.
    Running,
    /// Paused.
    Paused,
    /// Failed; the status usually carries a trace.
    Failed,
    /// Being restarted (KIP-745).
    Restarting,
    /// Stopped (KIP-875); only ever written for connectors, but accepted for tasks on read.
    Stopped,
    /// Deleted. Never serialised: writing it produces a tombstone. Accepted on read, as Java's
    /// `State.valueOf` accepts it.
    Destroyed,
}

impl StatusState {
    /// Every state, in Java's declaration order.
    pub const ALL: [Self; 7] = [
        Self::Unassigned,
        Self::Running,
        Self::Paused,
        Self::Failed,
        Self::Restarting,
        Self::Stopped,
        Self::Destroyed,
    ];

    /// The name on the wire and in Java (`RUNNING`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Unassigned => "UNASSIGNED",
            Self::Running => "RUNNING",
            Self::Paused => "PAUSED",
            Self::Failed => "FAILED",
            Self::Restarting => "RESTARTING",
            Self::Stopped => "STOPPED",
            Self::Destroyed => "DESTROYED",
        }
    }

    /// Java's `State.valueOf(name)`: exact, case-sensitive.
    pub fn from_java_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.as_str() == name)
    }
}

impl fmt::Display for StatusState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A connector or task status as read back from the topic (Java's `ConnectorStatus` /
/// `TaskStatus` without the id, which is the map key).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Status {
    /// The state.
    pub state: StatusState,
    /// The failure trace (a Java stack trace), if any.
    pub trace: Option<String>,
    /// The worker that wrote it (`host:port`). `None` when the record had no `worker_id` member
    /// or a `null` one, which Java accepts (spec §6 item 4).
    pub worker_id: Option<String>,
    /// The writer's group generation (Java `int`; a wider integer is truncated as
    /// `Long.intValue` does).
    pub generation: i32,
    /// The plugin version (`version` member, Kafka 4.1+, KIP-891), when the record carries it
    /// as a string. Kafka 4.0 ignores the member.
    pub version: Option<String>,
}

/// A KIP-558 active-topic record as read (Java's `TopicStatus`).
///
/// Its fields come from the value; the store indexes it by the topic and connector of the
/// **key**, and Java never cross-checks the two (spec §2.4).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct TopicStatus {
    /// The topic name (`name`).
    pub name: String,
    /// The connector name (`connector`).
    pub connector: String,
    /// The task that first recorded the topic (`task`).
    pub task: i32,
    /// When the worker first saw the topic as active, epoch milliseconds (`discoverTimestamp`).
    pub discover_timestamp: i64,
}

impl TopicStatus {
    /// Builds a topic status.
    pub fn new(
        name: impl Into<String>,
        connector: impl Into<String>,
        task: i32,
        discover_timestamp: i64,
    ) -> Self {
        Self {
            name: name.into(),
            connector: connector.into(),
            task,
            discover_timestamp,
        }
    }
}
