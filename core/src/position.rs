//! Per-partition read positions, used to drop redelivered records.

use alloc::collections::BTreeMap;
use serde::{Deserialize, Serialize};

use crate::{Record, RecordError};

/// The next offset expected on each partition seen so far.
///
/// A broker may hand back a record twice (a retried fetch, a rewind after a rebalance, a resent
/// batch after compaction). Java applies whatever its consumer returns; the consumer never goes
/// back, so neither do we: a record below the next expected offset of its partition is a
/// duplicate and is dropped before it can be applied twice.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Positions {
    next: BTreeMap<i32, i64>,
}

/// The result of checking a record's position.
pub(crate) enum Position {
    /// The record is new: handle it.
    Fresh,
    /// The record was seen before; `next_expected` is the partition's next offset.
    Duplicate { next_expected: i64 },
}

impl Positions {
    /// Checks a record's offset and, when it is fresh, advances the partition past it.
    pub(crate) fn advance(&mut self, record: &Record<'_>) -> Result<Position, RecordError> {
        if record.offset < 0 {
            return Err(RecordError::NegativeOffset {
                offset: record.offset,
            });
        }
        if record.partition < 0 {
            return Err(RecordError::NegativePartition {
                partition: record.partition,
            });
        }
        let next = self.next.entry(record.partition).or_insert(0);
        if record.offset < *next {
            return Ok(Position::Duplicate {
                next_expected: *next,
            });
        }
        *next = record.offset.saturating_add(1);
        Ok(Position::Fresh)
    }

    /// The next offset expected on `partition` (0 when nothing was read from it).
    pub(crate) fn next_offset(&self, partition: i32) -> i64 {
        self.next.get(&partition).copied().unwrap_or(0)
    }
}
