//! Why a config-topic record was skipped, and what Java does with the same record.

use core::fmt;

use serde::{Deserialize, Serialize};

use crate::json::JsonError;

/// Why a config-topic record was not applied. Every skip is also counted by [`ConfigSkipKind`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConfigSkip {
    /// The record's offset is below the next expected offset of its partition (a redelivery).
    /// Nothing changes, not even the offset.
    Duplicate {
        /// The partition's next expected offset.
        next_expected: i64,
    },
    /// The value is not JSON. As in Java, the snapshot offset is **not** advanced (spec §3.1).
    InvalidJson(JsonError),
    /// The record has no key (brokers refuse these on compacted topics).
    NullKey,
    /// No known key prefix (spec §1.4).
    UnknownKey,
    /// A `task-` key that Java's parser rejects (spec §1.3).
    UnparseableTaskKey,
    /// A tombstone for a record type Connect never deletes.
    UnexpectedTombstone,
    /// The value is not the shape this record type needs.
    WrongFormat {
        /// What was expected.
        expected: &'static str,
    },
    /// A target state that is not exactly `STARTED`, `PAUSED` or `STOPPED` (spec §3.5).
    InvalidTargetState,
    /// A `tasks` or `task-count` member that is not an integer. Java throws a ConnectException
    /// here and drops the rest of the consumer batch; we skip only this record (spec §3.10).
    InvalidTaskCount,
    /// A session key whose Base64 is invalid or whose key is empty. Java throws an
    /// IllegalArgumentException (failing start-up, or in-flight writes at run time); we skip only
    /// this record (spec §3.10).
    InvalidSessionKey,
    /// A commit for a connector that has no config: Java's KAFKA-16837 guard drops the
    /// connector's buffered and applied task state and ignores the commit (spec §3.4 step 1).
    CommitForMissingConnector,
}

impl ConfigSkip {
    /// The counter this skip is counted under.
    pub fn kind(&self) -> ConfigSkipKind {
        match self {
            Self::Duplicate { .. } => ConfigSkipKind::Duplicate,
            Self::InvalidJson(_) => ConfigSkipKind::InvalidJson,
            Self::NullKey => ConfigSkipKind::NullKey,
            Self::UnknownKey => ConfigSkipKind::UnknownKey,
            Self::UnparseableTaskKey => ConfigSkipKind::UnparseableTaskKey,
            Self::UnexpectedTombstone => ConfigSkipKind::UnexpectedTombstone,
            Self::WrongFormat { .. } => ConfigSkipKind::WrongFormat,
            Self::InvalidTargetState => ConfigSkipKind::InvalidTargetState,
            Self::InvalidTaskCount => ConfigSkipKind::InvalidTaskCount,
            Self::InvalidSessionKey => ConfigSkipKind::InvalidSessionKey,
            Self::CommitForMissingConnector => ConfigSkipKind::CommitForMissingConnector,
        }
    }

    /// Whether Java would throw out of its record handler here (spec §3.10; a null key is
    /// Java's NullPointerException). Such records are where Java's behaviour depends on
    /// consumer batching; we always skip just the record.
    pub fn java_throws(&self) -> bool {
        matches!(
            self,
            Self::InvalidTaskCount | Self::InvalidSessionKey | Self::NullKey
        )
    }
}

impl fmt::Display for ConfigSkip {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Duplicate { next_expected } => {
                write!(f, "duplicate record (next expected offset {next_expected})")
            }
            Self::InvalidJson(e) => write!(f, "value could not be converted: {e}"),
            Self::NullKey => f.write_str("record has no key"),
            Self::UnknownKey => f.write_str("unknown key"),
            Self::UnparseableTaskKey => f.write_str("task key could not be parsed"),
            Self::UnexpectedTombstone => f.write_str("unexpected tombstone"),
            Self::WrongFormat { expected } => write!(f, "wrong format: expected {expected}"),
            Self::InvalidTargetState => f.write_str("invalid target state"),
            Self::InvalidTaskCount => f.write_str("task count is not an integer"),
            Self::InvalidSessionKey => f.write_str("session key is not valid Base64 or is empty"),
            Self::CommitForMissingConnector => {
                f.write_str("commit for a connector with no config (its task state was dropped)")
            }
        }
    }
}

/// The counter a skip is counted under.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub enum ConfigSkipKind {
    /// See [`ConfigSkip::Duplicate`].
    Duplicate,
    /// See [`ConfigSkip::InvalidJson`].
    InvalidJson,
    /// See [`ConfigSkip::NullKey`].
    NullKey,
    /// See [`ConfigSkip::UnknownKey`].
    UnknownKey,
    /// See [`ConfigSkip::UnparseableTaskKey`].
    UnparseableTaskKey,
    /// See [`ConfigSkip::UnexpectedTombstone`].
    UnexpectedTombstone,
    /// See [`ConfigSkip::WrongFormat`].
    WrongFormat,
    /// See [`ConfigSkip::InvalidTargetState`].
    InvalidTargetState,
    /// See [`ConfigSkip::InvalidTaskCount`].
    InvalidTaskCount,
    /// See [`ConfigSkip::InvalidSessionKey`].
    InvalidSessionKey,
    /// See [`ConfigSkip::CommitForMissingConnector`].
    CommitForMissingConnector,
}

impl ConfigSkipKind {
    /// A stable snake_case name, used in JSON output.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Duplicate => "duplicate",
            Self::InvalidJson => "invalid_json",
            Self::NullKey => "null_key",
            Self::UnknownKey => "unknown_key",
            Self::UnparseableTaskKey => "unparseable_task_key",
            Self::UnexpectedTombstone => "unexpected_tombstone",
            Self::WrongFormat => "wrong_format",
            Self::InvalidTargetState => "invalid_target_state",
            Self::InvalidTaskCount => "invalid_task_count",
            Self::InvalidSessionKey => "invalid_session_key",
            Self::CommitForMissingConnector => "commit_for_missing_connector",
        }
    }
}

crate::skips::skip_reason!(ConfigSkip, ConfigSkipKind);
