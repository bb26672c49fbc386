//! Per-partition read positions, used to drop redelivered records.

use alloc::vec::Vec;
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
    /// By partition, ascending. Searched for every record: a topic has a few dozen partitions,
    /// and a binary search of one short list costs less than a `BTreeMap`'s walk of its nodes
    /// (5% of the offsets topic's replay). Checkpoints hold it as the map it was ([`as_map`]).
    #[serde(with = "as_map")]
    next: Vec<(i32, i64)>,
}

/// The positions in a checkpoint: a map from partition to next offset, in partition order, as
/// a `BTreeMap` writes it (so checkpoints keep their format).
mod as_map {
    use alloc::collections::BTreeMap;
    use alloc::vec::Vec;

    use serde::{Deserialize, Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(
        next: &[(i32, i64)],
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        serializer.collect_map(next.iter().map(|(partition, offset)| (partition, offset)))
    }

    /// A map read back: sorted and free of repeated partitions, whatever the input's order.
    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Vec<(i32, i64)>, D::Error> {
        Ok(BTreeMap::<i32, i64>::deserialize(deserializer)?
            .into_iter()
            .collect())
    }
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
        let at = match self
            .next
            .binary_search_by_key(&record.partition, |&(p, _)| p)
        {
            Ok(at) => at,
            Err(at) => {
                self.next.insert(at, (record.partition, 0));
                at
            }
        };
        let Some((_, next)) = self.next.get_mut(at) else {
            // Found or inserted at `at` just above.
            return Ok(Position::Fresh);
        };
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
        self.next
            .binary_search_by_key(&partition, |&(p, _)| p)
            .ok()
            .and_then(|at| self.next.get(at))
            .map_or(0, |&(_, next)| visible(next))
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

    /// Checkpoints hold the positions as the `BTreeMap` they were held in: the same bytes,
    /// and those bytes read back to the same positions.
    #[test]
    fn checkpoints_keep_the_map_format() {
        #[derive(Serialize)]
        struct Before {
            next: alloc::collections::BTreeMap<i32, i64>,
        }
        let mut positions = Positions::default();
        for (partition, offset) in [(7, 3), (0, 9), (24, 0), (3, i64::MAX), (0, 10)] {
            let _ = positions.advance(&Record {
                partition,
                ..at(offset)
            });
        }
        let before = Before {
            next: [(0, 11), (3, PAST_LAST), (7, 4), (24, 1)]
                .into_iter()
                .collect(),
        };
        let config = bincode::config::standard();
        let bytes = bincode::serde::encode_to_vec(&positions, config).unwrap();
        assert_eq!(
            bytes,
            bincode::serde::encode_to_vec(&before, config).unwrap()
        );
        let (back, _): (Positions, usize) =
            bincode::serde::decode_from_slice(&bytes, config).unwrap();
        assert_eq!(back, positions);
        assert_eq!(back.next_offset(3), i64::MAX);
        assert_eq!(back.next_offset(24), 1);
        assert_eq!(back.next_offset(5), 0);
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
