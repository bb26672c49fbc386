//! `OffsetStorageWriter` (spec §4.5) as a sans-IO state machine: a task records offsets, then
//! flushes them in batches; completions of an older flush are ignored.

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use super::ordered::{offset_key, offset_value, FormatError, OrderedMap};
use crate::json::JsonObject;
use crate::plan::WritePlan;
use crate::record::ProducerRecord;

/// Pending offsets keyed like Java's `HashMap<Map, Map>`: by the partition's content, keeping
/// the member order of the first partition object recorded for it.
type Pending = BTreeMap<JsonObject, (OrderedMap, Option<OrderedMap>)>;

/// The buffered offset writer of one task (or one KIP-875 request), for one connector's
/// namespace.
///
/// Call [`offset`](Self::offset) as records are acknowledged; to commit, call
/// [`begin_flush`](Self::begin_flush), then [`do_flush`](Self::do_flush), produce its records,
/// and report the outcome with [`complete_flush`](Self::complete_flush). On a failure to
/// serialize, or to give up, call [`cancel_flush`](Self::cancel_flush): the offsets go back into
/// the buffer and are retried by the next flush.
#[derive(Debug, Clone)]
pub struct OffsetWriter {
    namespace: String,
    data: Pending,
    to_flush: Option<Pending>,
    current_flush_id: u64,
}

/// Why a flush could not start.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum WriterError {
    /// A flush is in progress (Java: "OffsetStorageWriter is already flushing").
    AlreadyFlushing,
    /// `do_flush` without `begin_flush`.
    NotFlushing,
    /// A partition or offset that Java's `validateFormat` rejects; the flush stays in progress
    /// until [`OffsetWriter::cancel_flush`].
    InvalidFormat(FormatError),
}

impl fmt::Display for WriterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::AlreadyFlushing => f.write_str("OffsetStorageWriter is already flushing"),
            Self::NotFlushing => f.write_str("no flush is in progress"),
            Self::InvalidFormat(e) => write!(f, "failed to serialize offsets: {e}"),
        }
    }
}

impl core::error::Error for WriterError {}

/// The records of one flush, to produce (in any order) and then report on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlushBatch {
    /// Identifies the flush in [`OffsetWriter::complete_flush`].
    pub flush_id: u64,
    /// One record per partition: the key in the partition's member order, the offset value or a
    /// tombstone.
    pub records: Vec<ProducerRecord>,
}

/// Java's log message when a source task's offsets flush fails (`WorkerSourceTask`).
pub const FLUSH_ERROR: &str = "Failed to flush offsets to storage";

impl FlushBatch {
    /// The flush as a plan: its records as one batch from the log's producer, not read back
    /// (Java waits for the acknowledgements only). Report the outcome with
    /// [`OffsetWriter::complete_flush`].
    #[must_use]
    pub fn plan(&self) -> WritePlan {
        WritePlan::single(self.records.clone(), false, FLUSH_ERROR)
    }
}

/// What reporting a flush's outcome did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlushCompletion {
    /// The flush succeeded; the writer accepts a new one.
    Committed,
    /// The flush failed; its offsets are back in the buffer.
    Failed,
    /// A completion of an older, cancelled flush: ignored (Java does not call back either).
    Stale,
}

impl OffsetWriter {
    /// A writer for the connector `namespace`.
    pub fn new(namespace: impl Into<String>) -> Self {
        Self {
            namespace: namespace.into(),
            data: Pending::new(),
            to_flush: None,
            current_flush_id: 0,
        }
    }

    /// Records the latest offset of a partition (`None` = delete it). The last call per
    /// partition wins.
    pub fn offset(&mut self, partition: OrderedMap, offset: Option<OrderedMap>) {
        let content = partition.to_object();
        match self.data.get_mut(&content) {
            Some(slot) => slot.1 = offset,
            None => {
                self.data.insert(content, (partition, offset));
            }
        }
    }

    /// Whether a flush is in progress.
    pub fn is_flushing(&self) -> bool {
        self.to_flush.is_some()
    }

    /// Starts a flush: `Ok(false)` when there is nothing to write (no flush starts), `Ok(true)`
    /// when the buffered offsets were set aside for [`do_flush`](Self::do_flush).
    pub fn begin_flush(&mut self) -> Result<bool, WriterError> {
        if self.to_flush.is_some() {
            return Err(WriterError::AlreadyFlushing);
        }
        if self.data.is_empty() {
            return Ok(false);
        }
        self.to_flush = Some(core::mem::take(&mut self.data));
        Ok(true)
    }

    /// Serializes the set-aside offsets into records. On a format error the flush stays in
    /// progress: call [`cancel_flush`](Self::cancel_flush), as Java's callers must.
    pub fn do_flush(&mut self) -> Result<FlushBatch, WriterError> {
        let to_flush = self.to_flush.as_ref().ok_or(WriterError::NotFlushing)?;
        let mut records = Vec::with_capacity(to_flush.len());
        for (partition, offset) in to_flush.values() {
            let key =
                offset_key(&self.namespace, Some(partition)).map_err(WriterError::InvalidFormat)?;
            let value = offset_value(offset.as_ref()).map_err(WriterError::InvalidFormat)?;
            records.push(ProducerRecord {
                key,
                value,
                partition: None,
            });
        }
        Ok(FlushBatch {
            flush_id: self.current_flush_id,
            records,
        })
    }

    /// Reports the outcome of the flush `flush_id`.
    pub fn complete_flush(&mut self, flush_id: u64, succeeded: bool) -> FlushCompletion {
        if flush_id != self.current_flush_id || self.to_flush.is_none() {
            return FlushCompletion::Stale;
        }
        if succeeded {
            self.current_flush_id += 1;
            self.to_flush = None;
            FlushCompletion::Committed
        } else {
            self.cancel_flush();
            FlushCompletion::Failed
        }
    }

    /// Abandons the flush in progress: its offsets go back into the buffer, where offsets
    /// recorded since [`begin_flush`](Self::begin_flush) take precedence.
    pub fn cancel_flush(&mut self) {
        if let Some(mut to_flush) = self.to_flush.take() {
            // Java's `toFlush.putAll(data)`: a newer offset replaces the value but an existing
            // entry keeps its partition object (and so its member order).
            for (content, (partition, offset)) in core::mem::take(&mut self.data) {
                match to_flush.get_mut(&content) {
                    Some(slot) => slot.1 = offset,
                    None => {
                        to_flush.insert(content, (partition, offset));
                    }
                }
            }
            self.data = to_flush;
            self.current_flush_id += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::JsonValue;
    use alloc::vec;

    fn part(f: &str) -> OrderedMap {
        OrderedMap::new([("file", JsonValue::String(f.into()))])
    }

    fn pos(n: i64) -> Option<OrderedMap> {
        Some(OrderedMap::new([("pos", JsonValue::Long(n))]))
    }

    #[test]
    fn flush_cycle() {
        let mut w = OffsetWriter::new("c");
        assert_eq!(w.begin_flush(), Ok(false), "nothing to flush");
        w.offset(part("a"), pos(1));
        w.offset(part("a"), pos(2));
        w.offset(part("b"), None);
        assert_eq!(w.begin_flush(), Ok(true));
        assert_eq!(w.begin_flush(), Err(WriterError::AlreadyFlushing));
        let batch = w.do_flush().unwrap();
        assert_eq!(batch.records.len(), 2);
        assert_eq!(batch.records[0].key, br#"["c",{"file":"a"}]"#);
        assert_eq!(
            batch.records[0].value.as_deref(),
            Some(&br#"{"pos":2}"#[..])
        );
        assert_eq!(batch.records[1].value, None);
        // As a plan: the batch's records, one produce step, no read-back, Java's message.
        let plan = batch.plan();
        assert_eq!(plan.steps.len(), 1);
        assert_eq!(plan.steps[0].error_message, FLUSH_ERROR);
        assert!(plan.records().eq(batch.records.iter()));
        assert_eq!(
            w.complete_flush(batch.flush_id, true),
            FlushCompletion::Committed
        );
        assert!(!w.is_flushing());
        assert_eq!(w.begin_flush(), Ok(false));
    }

    #[test]
    fn failures_requeue_and_newer_offsets_win() {
        let mut w = OffsetWriter::new("c");
        w.offset(part("a"), pos(1));
        w.offset(part("b"), pos(1));
        w.begin_flush().unwrap();
        let batch = w.do_flush().unwrap();
        w.offset(part("a"), pos(5));
        assert_eq!(
            w.complete_flush(batch.flush_id, false),
            FlushCompletion::Failed
        );
        assert_eq!(
            w.complete_flush(batch.flush_id, true),
            FlushCompletion::Stale
        );
        w.begin_flush().unwrap();
        let retry = w.do_flush().unwrap();
        assert_ne!(retry.flush_id, batch.flush_id);
        let values: Vec<_> = retry
            .records
            .iter()
            .map(|r| r.value.clone().unwrap())
            .collect();
        assert_eq!(
            values,
            vec![br#"{"pos":5}"#.to_vec(), br#"{"pos":1}"#.to_vec()]
        );
        w.cancel_flush();
        assert_eq!(
            w.complete_flush(retry.flush_id, true),
            FlushCompletion::Stale
        );
    }

    #[test]
    fn cancel_keeps_the_flushed_partitions_member_order() {
        let ab = || OrderedMap::new([("a", JsonValue::Long(1)), ("b", JsonValue::Long(2))]);
        let ba = || OrderedMap::new([("b", JsonValue::Long(2)), ("a", JsonValue::Long(1))]);
        let mut w = OffsetWriter::new("c");
        w.offset(ab(), pos(1));
        w.begin_flush().unwrap();
        w.offset(ba(), pos(2));
        w.cancel_flush();
        w.begin_flush().unwrap();
        let batch = w.do_flush().unwrap();
        assert_eq!(batch.records.len(), 1);
        assert_eq!(batch.records[0].key, br#"["c",{"a":1,"b":2}]"#);
        assert_eq!(
            batch.records[0].value.as_deref(),
            Some(&br#"{"pos":2}"#[..])
        );
    }

    #[test]
    fn invalid_partitions_leave_the_flush_open_until_cancelled() {
        let mut w = OffsetWriter::new("c");
        w.offset(OrderedMap::new([("x", JsonValue::Array(vec![]))]), pos(1));
        w.begin_flush().unwrap();
        assert!(matches!(w.do_flush(), Err(WriterError::InvalidFormat(_))));
        assert!(w.is_flushing());
        w.cancel_flush();
        assert!(!w.is_flushing());
        assert_eq!(w.do_flush(), Err(WriterError::NotFlushing));
    }
}
