//! Why a [`crate::MemoryCluster`] operation was refused.

use core::fmt;

/// Why an operation on the [`crate::MemoryCluster`] was refused. A refused operation changes
/// nothing (every operation validates before it appends).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum LogError {
    /// The topic does not exist.
    UnknownTopic {
        /// The topic.
        topic: String,
    },
    /// The partition does not exist.
    UnknownPartition {
        /// The topic.
        topic: String,
        /// The partition.
        partition: i32,
    },
    /// A topic of that name exists already.
    TopicExists {
        /// The topic.
        topic: String,
    },
    /// A topic configuration value is out of range.
    InvalidConfig {
        /// What is wrong.
        reason: String,
    },
    /// The producer handle is older than the newest `init_transactions` of its transactional
    /// id: a zombie. It can never write again.
    Fenced {
        /// The transactional id.
        transactional_id: String,
    },
    /// A transaction call came in the wrong state (append or commit without `begin`, `begin`
    /// while a transaction is open, or a handle this cluster never issued).
    InvalidTransactionState {
        /// What is wrong.
        reason: String,
    },
}

impl fmt::Display for LogError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UnknownTopic { topic } => write!(f, "topic {topic} does not exist"),
            Self::UnknownPartition { topic, partition } => {
                write!(f, "partition {partition} of topic {topic} does not exist")
            }
            Self::TopicExists { topic } => write!(f, "topic {topic} already exists"),
            Self::InvalidConfig { reason } => write!(f, "invalid topic config: {reason}"),
            Self::Fenced { transactional_id } => write!(
                f,
                "producer of transactional id {transactional_id} was fenced by a newer instance"
            ),
            Self::InvalidTransactionState { reason } => {
                write!(f, "invalid transaction state: {reason}")
            }
        }
    }
}

impl core::error::Error for LogError {}
