//! Value types of the config topic: target states, task ids, session keys, property maps.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use serde::{Deserialize, Serialize};

/// A connector's target state (spec §3.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum TargetState {
    /// Running (the default for a connector with no target-state record).
    Started,
    /// Paused: tasks stay assigned but do not process.
    Paused,
    /// Stopped (KIP-875): no tasks. Written as `PAUSED` in the legacy `state` member.
    Stopped,
}

impl TargetState {
    /// The name on the wire and in Java (`STARTED`, `PAUSED`, `STOPPED`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Started => "STARTED",
            Self::Paused => "PAUSED",
            Self::Stopped => "STOPPED",
        }
    }

    /// Parses a state name with Java's exact, case-sensitive match.
    pub fn from_java_name(name: &str) -> Option<Self> {
        match name {
            "STARTED" => Some(Self::Started),
            "PAUSED" => Some(Self::Paused),
            "STOPPED" => Some(Self::Stopped),
            _ => None,
        }
    }

    /// The value of the legacy `state` member: STOPPED is downgraded to PAUSED for old readers.
    pub fn legacy(self) -> Self {
        match self {
            Self::Stopped => Self::Paused,
            other => other,
        }
    }
}

impl fmt::Display for TargetState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A task of a connector: Java's `ConnectorTaskId`. Ordered by connector, then task number.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct TaskId {
    /// The connector's name.
    pub connector: String,
    /// The task number (0-based; any `i32` Java's key parser accepts).
    pub task: i32,
}

impl TaskId {
    /// Builds a task id.
    pub fn new(connector: impl Into<String>, task: i32) -> Self {
        Self {
            connector: connector.into(),
            task,
        }
    }
}

impl fmt::Display for TaskId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.connector, self.task)
    }
}

/// The cluster's session key (KIP-507), used to sign inter-worker requests.
#[derive(Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SessionKey {
    /// The Base64 text exactly as read from the record (Java keeps only the decoded bytes; the
    /// JSON contract shows them re-encoded, as Java would).
    pub encoded: String,
    /// The decoded key bytes (never empty).
    pub key: Vec<u8>,
    /// The MAC algorithm name, e.g. `HmacSHA256` (not validated, as in Java).
    pub algorithm: String,
    /// Creation time, epoch milliseconds.
    pub creation_timestamp: i64,
}

impl fmt::Debug for SessionKey {
    /// Hides the key material, as Java's `ClusterConfigState.toString` does.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SessionKey")
            .field("key", &"<hidden>")
            .field("algorithm", &self.algorithm)
            .field("creation_timestamp", &self.creation_timestamp)
            .finish()
    }
}
