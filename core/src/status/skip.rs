//! Why a status-topic record was skipped, and what Java does with the same record.

use core::fmt;

use serde::{Deserialize, Serialize};

use crate::json::JsonError;

/// Why a status-topic record was not applied. Every skip is also counted by
/// [`StatusSkipKind`]. In every case Java leaves its caches untouched too (spec §1, §2.4, §3.2).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum StatusSkip {
    /// The record's offset is below the next expected offset of its partition (a redelivery).
    Duplicate {
        /// The partition's next expected offset.
        next_expected: i64,
    },
    /// The value of a connector, task or topic record is not JSON (Java: the converter's
    /// `DataException`, logged as "Failed to deserialize …" and the record ignored).
    InvalidJson(JsonError),
    /// The record has no key. Java's read callback throws a NullPointerException here and loses
    /// the rest of the poll batch (spec §1.1, §6 item 8); we skip just this record, as the spec
    /// recommends, treating it like an unknown key.
    NullKey,
    /// No known key prefix: Java logs "Discarding record with invalid key" (spec §1.1).
    UnknownKey,
    /// The key is exactly `status-connector-` (empty connector name, spec §1.2).
    InvalidConnectorKey,
    /// A `status-task-` key that Java's parser rejects (spec §1.3).
    InvalidTaskKey,
    /// A `status-topic-` key that Java's parser rejects (spec §1.4).
    InvalidTopicKey {
        /// Which check failed.
        reason: &'static str,
    },
    /// A connector or task value Java cannot turn into a status (spec §2.4).
    UnparsableStatus {
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A topic value Java cannot turn into a `TopicStatus` (spec §2.4).
    UnparsableTopicStatus {
        /// What is wrong with it.
        reason: &'static str,
    },
    /// KAFKA-12525: an `UNASSIGNED` task status whose generation is not newer than the cached
    /// `RUNNING` one is ignored as stale (spec §3.2).
    StaleUnassigned,
}

impl StatusSkip {
    /// The counter this skip is counted under.
    pub fn kind(&self) -> StatusSkipKind {
        match self {
            Self::Duplicate { .. } => StatusSkipKind::Duplicate,
            Self::InvalidJson(_) => StatusSkipKind::InvalidJson,
            Self::NullKey => StatusSkipKind::NullKey,
            Self::UnknownKey => StatusSkipKind::UnknownKey,
            Self::InvalidConnectorKey => StatusSkipKind::InvalidConnectorKey,
            Self::InvalidTaskKey => StatusSkipKind::InvalidTaskKey,
            Self::InvalidTopicKey { .. } => StatusSkipKind::InvalidTopicKey,
            Self::UnparsableStatus { .. } => StatusSkipKind::UnparsableStatus,
            Self::UnparsableTopicStatus { .. } => StatusSkipKind::UnparsableTopicStatus,
            Self::StaleUnassigned => StatusSkipKind::StaleUnassigned,
        }
    }

    /// Whether Java would throw out of its read callback here (only for a null key). Such
    /// records are where Java's behaviour depends on consumer batching; we skip just the record.
    pub fn java_throws(&self) -> bool {
        matches!(self, Self::NullKey)
    }
}

impl fmt::Display for StatusSkip {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Duplicate { next_expected } => {
                write!(f, "duplicate record (next expected offset {next_expected})")
            }
            Self::InvalidJson(e) => write!(f, "value could not be converted: {e}"),
            Self::NullKey => f.write_str("record has no key"),
            Self::UnknownKey => f.write_str("unknown key"),
            Self::InvalidConnectorKey => f.write_str("connector status key has an empty name"),
            Self::InvalidTaskKey => f.write_str("task status key could not be parsed"),
            Self::InvalidTopicKey { reason } => write!(f, "invalid topic status key: {reason}"),
            Self::UnparsableStatus { reason } => write!(f, "unparsable status: {reason}"),
            Self::UnparsableTopicStatus { reason } => {
                write!(f, "unparsable topic status: {reason}")
            }
            Self::StaleUnassigned => {
                f.write_str("stale UNASSIGNED task status ignored (KAFKA-12525)")
            }
        }
    }
}

/// The counter a status skip is counted under.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub enum StatusSkipKind {
    /// See [`StatusSkip::Duplicate`].
    Duplicate,
    /// See [`StatusSkip::InvalidJson`].
    InvalidJson,
    /// See [`StatusSkip::NullKey`].
    NullKey,
    /// See [`StatusSkip::UnknownKey`].
    UnknownKey,
    /// See [`StatusSkip::InvalidConnectorKey`].
    InvalidConnectorKey,
    /// See [`StatusSkip::InvalidTaskKey`].
    InvalidTaskKey,
    /// See [`StatusSkip::InvalidTopicKey`].
    InvalidTopicKey,
    /// See [`StatusSkip::UnparsableStatus`].
    UnparsableStatus,
    /// See [`StatusSkip::UnparsableTopicStatus`].
    UnparsableTopicStatus,
    /// See [`StatusSkip::StaleUnassigned`].
    StaleUnassigned,
}

impl StatusSkipKind {
    /// A stable snake_case name, used in JSON output.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Duplicate => "duplicate",
            Self::InvalidJson => "invalid_json",
            Self::NullKey => "null_key",
            Self::UnknownKey => "unknown_key",
            Self::InvalidConnectorKey => "invalid_connector_key",
            Self::InvalidTaskKey => "invalid_task_key",
            Self::InvalidTopicKey => "invalid_topic_key",
            Self::UnparsableStatus => "unparsable_status",
            Self::UnparsableTopicStatus => "unparsable_topic_status",
            Self::StaleUnassigned => "stale_unassigned",
        }
    }
}

crate::skips::skip_reason!(StatusSkip, StatusSkipKind);
