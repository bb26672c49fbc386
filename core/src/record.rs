//! The input every state machine consumes, and what handling one record produced.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

/// One record read from a topic: borrowed key and value bytes, offset, partition and (when
/// known) timestamp.
///
/// `value: None` is a tombstone (a Kafka null value). `key: None` is a record without a key,
/// which brokers refuse on compacted topics but dumps may still contain. The state machines
/// never look at the timestamp (Java's stores do not either); history and time cuts do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record<'a> {
    /// The key bytes, as written (Connect writes UTF-8 strings).
    pub key: Option<&'a [u8]>,
    /// The value bytes; `None` is a tombstone.
    pub value: Option<&'a [u8]>,
    /// The record's offset in its partition.
    pub offset: i64,
    /// The partition the record was read from.
    pub partition: i32,
    /// The record's timestamp in milliseconds since the epoch, as the broker or the dump gives
    /// it; `None` when unknown.
    pub timestamp: Option<i64>,
}

impl<'a> Record<'a> {
    /// A keyed record on partition 0.
    pub fn new(key: &'a [u8], value: Option<&'a [u8]>, offset: i64) -> Self {
        Self {
            key: Some(key),
            value,
            offset,
            partition: 0,
            timestamp: None,
        }
    }

    /// The same record on another partition.
    #[must_use]
    pub fn with_partition(self, partition: i32) -> Self {
        Self { partition, ..self }
    }

    /// The same record with a timestamp (ms since the epoch).
    #[must_use]
    pub fn with_timestamp(self, timestamp: Option<i64>) -> Self {
        Self { timestamp, ..self }
    }

    /// The record with its own copies of the key and value.
    pub fn to_owned(&self) -> OwnedRecord {
        OwnedRecord {
            key: self.key.map(<[u8]>::to_vec),
            value: self.value.map(<[u8]>::to_vec),
            offset: self.offset,
            partition: self.partition,
            timestamp: self.timestamp,
        }
    }
}

/// A [`Record`] that owns its key and value: what a dump line held, a generator made, a reader
/// kept. The one owned form every crate of the workspace uses (a transport's fetch hands over
/// a batch whose records share one buffer, the store's `RecordBatch`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OwnedRecord {
    /// The key bytes, `None` for a record without key.
    pub key: Option<Vec<u8>>,
    /// The value bytes; `None` is a tombstone.
    pub value: Option<Vec<u8>>,
    /// The record's offset in its partition (offsets never change; compaction leaves gaps).
    pub offset: i64,
    /// The partition it was read from.
    pub partition: i32,
    /// The record's timestamp (ms since the epoch), `None` when unknown.
    pub timestamp: Option<i64>,
}

impl OwnedRecord {
    /// The record as the machines consume it.
    pub fn as_record(&self) -> Record<'_> {
        Record {
            key: self.key.as_deref(),
            value: self.value.as_deref(),
            offset: self.offset,
            partition: self.partition,
            timestamp: self.timestamp,
        }
    }

    /// The record to write again, to the partition it was read from (a record without key
    /// gets an empty one: a producer record always has one).
    pub fn into_producer_record(self) -> ProducerRecord {
        ProducerRecord {
            key: self.key.unwrap_or_default(),
            value: self.value,
            partition: Some(self.partition),
        }
    }

    /// Key plus value bytes.
    pub fn raw_len(&self) -> usize {
        self.key.as_ref().map_or(0, Vec::len) + self.value.as_ref().map_or(0, Vec::len)
    }
}

/// What happened to a record that was accepted for handling.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RecordOutcome<S> {
    /// The record was applied to the state (possibly as a no-op, exactly as Java applies it).
    Applied,
    /// The record was skipped, as Java skips it; the reason says why. The skip is also counted in
    /// the machine's diagnostics.
    Skipped(S),
    /// A [`Layer`](crate::machine::Layer) kept the record from the machine it wraps (a record
    /// past an `--as-of` cut): nothing changed, and it is no skip Java would make.
    Withheld,
}

impl<S> RecordOutcome<S> {
    /// Whether the record was applied.
    pub fn is_applied(&self) -> bool {
        matches!(self, Self::Applied)
    }
}

/// A record the caller should never have passed: the state is left untouched.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RecordError {
    /// Offsets start at 0.
    NegativeOffset {
        /// The offending offset.
        offset: i64,
    },
    /// Partitions start at 0.
    NegativePartition {
        /// The offending partition.
        partition: i32,
    },
    /// A key longer than Kafka allows (its length is a 32-bit field on the wire).
    KeyTooLong {
        /// The key's length in bytes.
        len: usize,
    },
}

impl fmt::Display for RecordError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NegativeOffset { offset } => write!(f, "record offset {offset} is negative"),
            Self::NegativePartition { partition } => {
                write!(f, "record partition {partition} is negative")
            }
            Self::KeyTooLong { len } => {
                write!(f, "record key of {len} bytes is longer than Kafka allows")
            }
        }
    }
}

impl core::error::Error for RecordError {}

/// One record a writer must produce: key and value bytes exactly as Java writes them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProducerRecord {
    /// The key bytes.
    pub key: Vec<u8>,
    /// The value bytes (compact JSON); `None` is a tombstone.
    pub value: Option<Vec<u8>>,
    /// `None`: the partition Java's default partitioner picks (murmur2 of the key bytes, see
    /// [`crate::offsets::default_partition`]). `Some(p)`: exactly partition `p`, e.g. a tombstone
    /// that must reach the partition where the record it deletes lives.
    pub partition: Option<i32>,
}

impl ProducerRecord {
    /// A record for the default partitioner from UTF-8 key and value text.
    pub fn from_strings(key: String, value: Option<String>) -> Self {
        Self {
            key: key.into_bytes(),
            value: value.map(String::into_bytes),
            partition: None,
        }
    }
}
