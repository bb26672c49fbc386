//! What a store needs from a log, and nothing more: the one trait both transports implement.

use std::collections::BTreeMap;

use async_trait::async_trait;
use engine::ProducerRecord;

use crate::batch::RecordBatch;

/// The answer to one fetch.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FetchedBatch {
    /// Records at or after the requested offset, in offset order (possibly none).
    pub records: RecordBatch,
    /// Where the next fetch of this partition starts: past every record and gap (compacted
    /// records, transaction markers, filtered aborted records) the broker skipped.
    pub next_offset: i64,
}

/// A topic's description.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicDescription {
    /// The number of partitions.
    pub partitions: i32,
    /// The `cleanup.policy` setting, as the broker reports it.
    pub cleanup_policy: String,
}

/// A topic to create.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewTopic {
    /// The topic name.
    pub name: String,
    /// Partitions (1 for the config topic).
    pub partitions: i32,
    /// Replication factor (`None` = the broker's default).
    pub replication_factor: Option<i16>,
    /// Topic settings; `cleanup.policy=compact` is always among them.
    pub configs: BTreeMap<String, String>,
}

/// How a batch is produced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProduceMode {
    /// Plain sends, acknowledged by every in-sync replica, waited on in order.
    Plain,
    /// One transaction of the fenced leader producer: all records or none become visible.
    Transactional,
}

/// Why a transport call failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TransportError {
    /// The topic does not exist.
    #[error("topic {topic} does not exist")]
    UnknownTopic {
        /// The topic.
        topic: String,
    },
    /// The partition does not exist.
    #[error("partition {partition} of topic {topic} does not exist")]
    UnknownPartition {
        /// The topic.
        topic: String,
        /// The partition.
        partition: i32,
    },
    /// A produce failed; records before `written` may have been appended.
    #[error("producing to {topic} failed after {written} of {total} records: {reason}")]
    ProduceFailed {
        /// The topic.
        topic: String,
        /// Records appended before the failure (0 for a transactional batch).
        written: usize,
        /// Records in the batch.
        total: usize,
        /// What went wrong.
        reason: String,
    },
    /// A transactional producer was fenced by a newer one.
    #[error("the transactional producer for {topic} was fenced by a newer instance")]
    Fenced {
        /// The topic.
        topic: String,
    },
    /// Reading a partition failed (after the transport's own retries).
    #[error("fetching {topic} partition {partition} from offset {offset} failed: {reason}")]
    Fetch {
        /// The topic.
        topic: String,
        /// The partition.
        partition: i32,
        /// The offset the fetch started at.
        offset: i64,
        /// What went wrong.
        reason: String,
    },
    /// The broker could not be reached or answered with an error.
    #[error("broker error on {topic}: {reason}")]
    Broker {
        /// The topic.
        topic: String,
        /// What went wrong.
        reason: String,
    },
}

impl TransportError {
    /// The same error with its free-text reason (if it has one) passed through `f`, e.g. to
    /// redact what a client library's message echoes.
    #[must_use]
    pub fn map_reason(mut self, f: impl FnOnce(&str) -> String) -> Self {
        match &mut self {
            Self::ProduceFailed { reason, .. }
            | Self::Fetch { reason, .. }
            | Self::Broker { reason, .. } => *reason = f(reason),
            Self::UnknownTopic { .. } | Self::UnknownPartition { .. } | Self::Fenced { .. } => {}
        }
        self
    }
}

/// The operations the generic stores need from a log. Both the in-memory simulator and the
/// Kafka transport implement it.
#[async_trait]
pub trait Transport: Send + Sync {
    /// Describes a topic; `Ok(None)` when it does not exist.
    async fn describe_topic(&self, topic: &str)
        -> Result<Option<TopicDescription>, TransportError>;

    /// Creates a topic.
    async fn create_topic(&self, topic: &NewTopic) -> Result<(), TransportError>;

    /// The end offset of every partition, sampled now: the high watermark, or the last stable
    /// offset for a `read_committed` reader.
    async fn end_offsets(&self, topic: &str) -> Result<BTreeMap<i32, i64>, TransportError>;

    /// Says where a read about to fetch several partitions of `topic` starts in each
    /// (`(partition, from)`): a transport that reads in the background may start reading them
    /// all now, so that each [`fetch`](Self::fetch) in turn finds its records on their way
    /// (the Kafka one assigns them at once: a partition assigned in the middle of a read waits
    /// for the fetch request in flight). A failure here is left for the fetches to report. The
    /// default ignores it.
    async fn expect_fetches(&self, topic: &str, starts: &[(i32, i64)]) {
        let _ = (topic, starts);
    }

    /// Fetches up to `max_records` records of one partition starting at `from`.
    async fn fetch(
        &self,
        topic: &str,
        partition: i32,
        from: i64,
        max_records: usize,
    ) -> Result<FetchedBatch, TransportError>;

    /// Takes back the records of a [`fetch`](Self::fetch) once they are applied, for a later
    /// fetch to fill again (clearing them first): the store hands back every batch it applied.
    /// A transport that copies records out of a client library's buffers (the Kafka one) keeps
    /// a few, so that a read reuses their memory; the default drops them.
    fn recycle(&self, records: RecordBatch) {
        drop(records);
    }

    /// Produces a batch (records without a partition go where Java's default partitioner puts
    /// them) and returns each record's `(partition, offset)`.
    async fn produce(
        &self,
        topic: &str,
        records: &[ProducerRecord],
        mode: ProduceMode,
    ) -> Result<Vec<(i32, i64)>, TransportError>;
}
