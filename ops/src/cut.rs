//! Time travel: the state of a topic as it was at a point of its log (`--as-of`).
//!
//! A [`Cut`] decides, record by record, which records the machines see: every record up to
//! the point, none after. The machines themselves are unchanged; they simply stop at the cut.
//!
//! * [`Point::Offset`] applies to the config topic (one partition): the record at that offset
//!   is included, later ones are not.
//! * [`Point::Time`] applies per partition, to any topic: a partition's records are included
//!   up to the first one whose timestamp is later than the time (records with exactly that
//!   timestamp are included); from there on the partition is cut, so the state is always a
//!   prefix of each partition, the state a worker had read then.
//!
//! Status and offsets topics have many partitions and no order between them, so an offset
//! names no point of theirs: a cut by offset refuses them ([`Cut::new`]).

use std::collections::BTreeSet;

use engine::{Layer, Record, RecordError, RecordOutcome, TopicMachine};

use engine::TopicKind;

/// Where a cut is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Point {
    /// The config topic up to and including this offset.
    Offset(i64),
    /// Each partition up to this time (ms since the epoch), inclusive.
    Time(i64),
}

/// Decides which records of one topic are before the cut.
#[derive(Debug, Clone)]
pub struct Cut {
    as_of: Point,
    topic: TopicKind,
    cut_partitions: BTreeSet<i32>,
    dropped: u64,
}

impl Cut {
    /// A cut of `topic`'s records. Refuses an offset cut of the status or offsets topic.
    pub fn new(as_of: Point, topic: TopicKind) -> Result<Self, String> {
        if let (Point::Offset(offset), TopicKind::Status | TopicKind::Offsets) = (as_of, topic) {
            return Err(format!(
                "--as-of {offset}: an offset names a point of the config topic only; the {} \
                 topic has many partitions, so give a time (e.g. 2026-12-01T09:30:00Z)",
                topic.name()
            ));
        }
        Ok(Self {
            as_of,
            topic,
            cut_partitions: BTreeSet::new(),
            dropped: 0,
        })
    }

    /// Whether `record` is before the cut (and so is applied). Call it for every record in
    /// read order; once a partition's record is past a time cut, the rest of the partition is
    /// too. Fails for a record without timestamp under a time cut.
    pub fn admits(&mut self, record: &Record<'_>) -> Result<bool, String> {
        let before = !self.cut_partitions.contains(&record.partition)
            && match self.as_of {
                Point::Offset(offset) => record.offset <= offset,
                Point::Time(time) => {
                    let ts = record.timestamp.ok_or_else(|| {
                        format!(
                            "the {} record at offset {} (partition {}) has no timestamp, so a \
                             time cut cannot place it{}",
                            self.topic.name(),
                            record.offset,
                            record.partition,
                            if self.topic == TopicKind::Config {
                                ": cut the config topic by offset instead"
                            } else {
                                ""
                            }
                        )
                    })?;
                    ts <= time
                }
            };
        if !before {
            self.cut_partitions.insert(record.partition);
            self.dropped += 1;
        }
        Ok(before)
    }

    /// How many records were past the cut.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }
}

/// A machine that sees only the records before a cut (none: every record): for stores that
/// read a live topic to its end. A record past the cut is [`RecordOutcome::Withheld`] and
/// changes nothing. A record the cut cannot place (no timestamp) is withheld too, and the first
/// such problem is kept for [`into_inner`](Self::into_inner), which gives the machine back.
pub struct CutMachine<M> {
    inner: M,
    cut: Option<Cut>,
    refused: Option<String>,
}

impl<M> CutMachine<M> {
    /// `inner` behind `cut`.
    pub fn new(inner: M, cut: Option<Cut>) -> Self {
        Self {
            inner,
            cut,
            refused: None,
        }
    }

    /// The first record the cut could not place, if any (it was withheld).
    pub fn refused(&self) -> Option<&str> {
        self.refused.as_deref()
    }

    /// The machine, and the first record the cut could not place (if any).
    pub fn into_inner(self) -> (M, Option<String>) {
        (self.inner, self.refused)
    }
}

impl<M: TopicMachine> Layer for CutMachine<M> {
    type Inner = M;

    fn inner(&self) -> &M {
        &self.inner
    }

    fn inner_mut(&mut self) -> &mut M {
        &mut self.inner
    }

    fn on_record(&mut self, record: Record<'_>) -> Result<RecordOutcome<M::Skip>, RecordError> {
        let Some(cut) = self.cut.as_mut() else {
            return self.inner.handle_record(record);
        };
        match cut.admits(&record) {
            Ok(true) => self.inner.handle_record(record),
            Ok(false) => Ok(RecordOutcome::Withheld),
            Err(problem) => {
                self.refused.get_or_insert(problem);
                Ok(RecordOutcome::Withheld)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(offset: i64, partition: i32, ts: Option<i64>) -> Record<'static> {
        Record::new(b"k", None, offset)
            .with_partition(partition)
            .with_timestamp(ts)
    }

    #[test]
    fn an_offset_cut_includes_its_offset_and_refuses_many_partition_topics() {
        let mut cut = Cut::new(Point::Offset(3), TopicKind::Config).unwrap();
        let admitted: Vec<bool> = (0..6)
            .map(|o| cut.admits(&at(o, 0, None)).unwrap())
            .collect();
        assert_eq!(admitted, [true, true, true, true, false, false]);
        assert_eq!(cut.dropped(), 2);
        for topic in [TopicKind::Status, TopicKind::Offsets] {
            let refused = Cut::new(Point::Offset(3), topic).unwrap_err();
            assert!(refused.contains("give a time"), "{refused}");
        }
    }

    #[test]
    fn a_time_cut_keeps_a_prefix_of_each_partition() {
        let mut cut = Cut::new(Point::Time(100), TopicKind::Status).unwrap();
        assert!(cut.admits(&at(0, 0, Some(50))).unwrap());
        assert!(
            cut.admits(&at(0, 1, Some(100))).unwrap(),
            "the time itself is included"
        );
        assert!(!cut.admits(&at(1, 0, Some(101))).unwrap());
        // An earlier timestamp after the cut stays cut: the state is a prefix.
        assert!(!cut.admits(&at(2, 0, Some(60))).unwrap());
        assert!(
            cut.admits(&at(1, 1, Some(99))).unwrap(),
            "partition 1 is not cut yet"
        );
        let problem = cut.admits(&at(2, 1, None)).unwrap_err();
        assert!(problem.contains("no timestamp"), "{problem}");
    }
}
