//! [`PartitionReader`]: one partition of a topic read batch by batch up to an end offset, for a
//! reader that takes records itself instead of handing them to a machine (`history` merges
//! the partitions of three topics in time order). It moves on as a store's read does, with
//! the same check that a fetch made progress ([`advance`]).

use std::sync::Arc;

use crate::transport::Transport;
use crate::StoreError;
use engine::OwnedRecord;

/// Where a read of `partition` goes on after a fetch from `position` that says the next offset
/// is `next` (the larger of the batch's and the machine's): there, or [`StoreError::Stalled`]
/// when it did not move (a broker that answers without progress would loop forever).
pub(crate) fn advance(
    topic: &str,
    partition: i32,
    position: i64,
    end: i64,
    next: i64,
) -> Result<i64, StoreError> {
    if next <= position {
        return Err(StoreError::Stalled {
            topic: topic.to_string(),
            partition,
            position,
            end,
        });
    }
    Ok(next)
}

/// One partition of a topic, read from an offset to the end offset it had when the reader was
/// made, a batch at a time.
pub struct PartitionReader<T: ?Sized> {
    transport: Arc<T>,
    topic: String,
    partition: i32,
    next: i64,
    end: i64,
    batch: usize,
}

impl<T: Transport + ?Sized> PartitionReader<T> {
    /// A reader of `partition` of `topic` from `from` up to (not including) `end`, fetching up
    /// to `batch` records at a time.
    pub fn new(
        transport: Arc<T>,
        topic: impl Into<String>,
        partition: i32,
        from: i64,
        end: i64,
        batch: usize,
    ) -> Self {
        Self {
            transport,
            topic: topic.into(),
            partition,
            next: from,
            end,
            batch: batch.max(1),
        }
    }

    /// The next records of the partition below the end, in offset order; empty once the end
    /// is reached (records a compaction removed are skipped, as the broker skips them).
    pub async fn next_batch(&mut self) -> Result<Vec<OwnedRecord>, StoreError> {
        while self.next < self.end {
            let wanted = usize::try_from(self.end - self.next)
                .unwrap_or(usize::MAX)
                .min(self.batch);
            let batch = self
                .transport
                .fetch(&self.topic, self.partition, self.next, wanted)
                .await?;
            self.next = advance(
                &self.topic,
                self.partition,
                self.next,
                self.end,
                batch.next_offset,
            )?;
            let end = self.end;
            let records: Vec<OwnedRecord> = batch
                .records
                .iter()
                .filter(|r| r.offset < end)
                .map(|r| r.to_owned())
                .collect();
            self.transport.recycle(batch.records);
            if !records.is_empty() {
                return Ok(records);
            }
        }
        Ok(Vec::new())
    }

    /// The topic read.
    pub fn topic(&self) -> &str {
        &self.topic
    }
}
