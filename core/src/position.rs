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
///
/// A record at offset `i64::MAX` leaves no next offset; the partition is then marked
/// [`PAST_LAST`], after which every record on it is a duplicate.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Positions {
    next: BTreeMap<i32, i64>,
}

/// The stored "next offset" of a partition whose record at `i64::MAX` was read. Offsets are
/// never negative, so the value cannot mean anything else (and checkpoints keep their format).
const PAST_LAST: i64 = i64::MIN;

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
        if *next == PAST_LAST || record.offset < *next {
            return Ok(Position::Duplicate {
                next_expected: visible(*next),
            });
        }
        *next = record.offset.checked_add(1).unwrap_or(PAST_LAST);
        Ok(Position::Fresh)
    }

    /// The next offset expected on `partition` (0 when nothing was read from it; `i64::MAX`
    /// once the record at `i64::MAX` was read, although that one is not expected again).
    pub(crate) fn next_offset(&self, partition: i32) -> i64 {
        self.next.get(&partition).copied().map_or(0, visible)
    }
}

/// A stored next offset as callers see it.
fn visible(next: i64) -> i64 {
    if next == PAST_LAST {
        i64::MAX
    } else {
        next
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(offset: i64) -> Record<'static> {
        Record::new(b"k", None, offset)
    }

    /// Issue 14: the next offset once saturated at `i64::MAX`, so a record there was applied
    /// every time it came; the duplicate rule holds at every offset.
    #[test]
    fn the_duplicate_rule_holds_at_the_last_offset() {
        let mut positions = Positions::default();
        assert!(matches!(
            positions.advance(&at(i64::MAX - 1)),
            Ok(Position::Fresh)
        ));
        assert_eq!(positions.next_offset(0), i64::MAX);
        assert!(matches!(
            positions.advance(&at(i64::MAX)),
            Ok(Position::Fresh)
        ));
        for offset in [i64::MAX, 0, i64::MAX - 1] {
            assert!(matches!(
                positions.advance(&at(offset)),
                Ok(Position::Duplicate {
                    next_expected: i64::MAX
                })
            ));
        }
        assert_eq!(positions.next_offset(0), i64::MAX);
        assert_eq!(positions.next_offset(1), 0);
    }
}
