//! One partition: segments of records with fixed offsets, transaction states, fetch and the
//! cleaner of `spec/compaction.md` §1.

use std::collections::{BTreeMap, BTreeSet};

use connect_state_store::{FetchedBatch, RecordBatch};
use engine::Record;

use crate::config::TopicConfig;

/// Which records a reader sees and where its log ends (Kafka's `isolation.level`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Isolation {
    /// Sees every appended data record, including those of open and aborted transactions; the
    /// log ends at the high watermark. Kafka's consumer default.
    #[default]
    ReadUncommitted,
    /// Sees plain records and records of committed transactions only; the log ends at the last
    /// stable offset (the first offset of the earliest open transaction, else the high
    /// watermark).
    ReadCommitted,
}

/// The state of a transaction, as its records in one partition see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxnState {
    /// Neither committed nor aborted yet.
    Open,
    /// A commit marker was written.
    Committed,
    /// An abort marker was written (explicit abort, or the producer was fenced).
    Aborted,
}

/// What a record in the log is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecordKind {
    /// A data record written outside any transaction.
    Plain,
    /// A data record written inside a transaction in the given state.
    Transactional(TxnState),
    /// A control marker ending a transaction: it occupies one offset and no reader ever gets it.
    Marker {
        /// `true` for a commit marker, `false` for an abort marker.
        committed: bool,
    },
}

/// One record still present in a partition, for inspection by tests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogRecord {
    /// Its offset, fixed at append time.
    pub offset: i64,
    /// The key bytes (`None` for markers and keyless records).
    pub key: Option<Vec<u8>>,
    /// The value bytes (`None` for tombstones and markers).
    pub value: Option<Vec<u8>>,
    /// The logical clock when it was appended.
    pub timestamp_ms: i64,
    /// Plain, transactional (with the transaction's state) or a control marker.
    pub kind: RecordKind,
}

/// What a stored entry is; transaction states live in [`PartitionLog::txns`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Entry {
    Data { txn: Option<u64> },
    Marker { committed: bool },
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Stored {
    offset: i64,
    key: Option<Vec<u8>>,
    value: Option<Vec<u8>>,
    timestamp_ms: i64,
    entry: Entry,
    /// For a tombstone kept by a cleaning pass: the clock from which a later pass removes it.
    delete_after_ms: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Segment {
    base: i64,
    records: Vec<Stored>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct PartitionTxn {
    first_offset: i64,
    state: TxnState,
}

/// What one cleaning pass decided for one record below the horizon.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Decision {
    Keep,
    Remove,
    /// Keep, and start the tombstone's `delete.retention.ms` clock.
    KeepTombstone,
}

/// One partition of a topic. Offsets are assigned once and never change; cleaning only removes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PartitionLog {
    /// Never empty; the last segment is the active one.
    segments: Vec<Segment>,
    next_offset: i64,
    /// Every transaction that still has a record (or is open) in this partition.
    txns: BTreeMap<u64, PartitionTxn>,
}

impl PartitionLog {
    pub(crate) fn new() -> Self {
        Self {
            segments: vec![Segment {
                base: 0,
                records: Vec::new(),
            }],
            next_offset: 0,
            txns: BTreeMap::new(),
        }
    }

    /// Appends one data record (inside transaction `txn` if given) and returns its offset.
    pub(crate) fn append(
        &mut self,
        key: Option<Vec<u8>>,
        value: Option<Vec<u8>>,
        now_ms: i64,
        txn: Option<u64>,
        segment_records: u64,
    ) -> i64 {
        let offset = self.push(key, value, now_ms, Entry::Data { txn }, segment_records);
        if let Some(id) = txn {
            self.txns.entry(id).or_insert(PartitionTxn {
                first_offset: offset,
                state: TxnState::Open,
            });
        }
        offset
    }

    /// Ends open transaction `txn` here with a control marker; `None` when it has no open
    /// records in this partition.
    pub(crate) fn end_txn(
        &mut self,
        txn: u64,
        committed: bool,
        now_ms: i64,
        segment_records: u64,
    ) -> Option<i64> {
        let entry = self.txns.get_mut(&txn)?;
        if entry.state != TxnState::Open {
            return None;
        }
        entry.state = if committed {
            TxnState::Committed
        } else {
            TxnState::Aborted
        };
        Some(self.push(
            None,
            None,
            now_ms,
            Entry::Marker { committed },
            segment_records,
        ))
    }

    fn push(
        &mut self,
        key: Option<Vec<u8>>,
        value: Option<Vec<u8>>,
        now_ms: i64,
        entry: Entry,
        segment_records: u64,
    ) -> i64 {
        let offset = self.next_offset;
        if self.active().base.abs_diff(offset) >= segment_records {
            self.segments.push(Segment {
                base: offset,
                records: Vec::new(),
            });
        }
        self.next_offset = offset.saturating_add(1);
        let active = self.segments.len() - 1;
        self.segments[active].records.push(Stored {
            offset,
            key,
            value,
            timestamp_ms: now_ms,
            entry,
            delete_after_ms: None,
        });
        offset
    }

    fn active(&self) -> &Segment {
        // `segments` is never empty: `new` creates one and nothing removes segments.
        self.segments
            .last()
            .expect("a partition always has an active segment")
    }

    /// Starts a new active segment at the high watermark, unless the active one is empty.
    pub(crate) fn roll(&mut self) {
        if self.active().base < self.next_offset {
            self.segments.push(Segment {
                base: self.next_offset,
                records: Vec::new(),
            });
        }
    }

    /// The offset the next append gets.
    pub(crate) fn high_watermark(&self) -> i64 {
        self.next_offset
    }

    /// The first offset of the earliest open transaction, else the high watermark.
    pub(crate) fn last_stable_offset(&self) -> i64 {
        self.txns
            .values()
            .filter(|t| t.state == TxnState::Open)
            .map(|t| t.first_offset)
            .min()
            .unwrap_or(self.next_offset)
    }

    /// Where a reader of this isolation level stops.
    pub(crate) fn end_offset(&self, isolation: Isolation) -> i64 {
        match isolation {
            Isolation::ReadUncommitted => self.high_watermark(),
            Isolation::ReadCommitted => self.last_stable_offset(),
        }
    }

    /// The base offset of every segment, oldest first; the last is the active segment.
    pub(crate) fn segment_bases(&self) -> Vec<i64> {
        self.segments.iter().map(|s| s.base).collect()
    }

    fn txn_state(&self, txn: u64) -> TxnState {
        // Cleaning prunes only transactions no record refers to, so the lookup always
        // succeeds for a stored record; `Committed` is the harmless answer otherwise.
        self.txns.get(&txn).map_or(TxnState::Committed, |t| t.state)
    }

    fn kind(&self, record: &Stored) -> RecordKind {
        match record.entry {
            Entry::Data { txn: None } => RecordKind::Plain,
            Entry::Data { txn: Some(id) } => RecordKind::Transactional(self.txn_state(id)),
            Entry::Marker { committed } => RecordKind::Marker { committed },
        }
    }

    fn iter(&self) -> impl Iterator<Item = &Stored> {
        self.segments.iter().flat_map(|s| s.records.iter())
    }

    fn iter_from(&self, from: i64) -> impl Iterator<Item = &Stored> {
        let first = self
            .segments
            .partition_point(|s| s.base <= from)
            .saturating_sub(1);
        self.segments[first..].iter().flat_map(move |s| {
            let start = s.records.partition_point(|r| r.offset < from);
            s.records[start..].iter()
        })
    }

    /// Every record still present, markers included.
    pub(crate) fn records(&self) -> Vec<LogRecord> {
        self.iter()
            .map(|r| LogRecord {
                offset: r.offset,
                key: r.key.clone(),
                value: r.value.clone(),
                timestamp_ms: r.timestamp_ms,
                kind: self.kind(r),
            })
            .collect()
    }

    /// Up to `max_records` visible records with offset `>= from` below the end offset of
    /// `isolation`; `next_offset` is past everything returned or skipped.
    pub(crate) fn fetch(
        &self,
        partition: i32,
        from: i64,
        max_records: usize,
        isolation: Isolation,
    ) -> FetchedBatch {
        let from = from.max(0);
        let end = self.end_offset(isolation);
        let mut records = RecordBatch::new();
        if max_records == 0 || from >= end {
            return FetchedBatch {
                records,
                next_offset: from,
            };
        }
        for stored in self.iter_from(from) {
            if stored.offset >= end {
                break;
            }
            let visible = match self.kind(stored) {
                RecordKind::Plain => true,
                RecordKind::Transactional(state) => {
                    isolation == Isolation::ReadUncommitted || state == TxnState::Committed
                }
                RecordKind::Marker { .. } => false,
            };
            if visible {
                records.push(Record {
                    partition,
                    offset: stored.offset,
                    key: stored.key.as_deref(),
                    value: stored.value.as_deref(),
                    timestamp: Some(stored.timestamp_ms),
                });
                if records.len() == max_records {
                    return FetchedBatch {
                        records,
                        next_offset: stored.offset.saturating_add(1),
                    };
                }
            }
        }
        FetchedBatch {
            records,
            next_offset: end,
        }
    }

    /// The highest horizon a cleaning pass may use now: the start of the active segment, capped
    /// by the first record younger than `min.compaction.lag.ms` and by the last stable offset.
    /// 0 (nothing cleanable) when the topic does not compact.
    pub(crate) fn cleanable_horizon(&self, now_ms: i64, config: &TopicConfig) -> i64 {
        if !config.compacts() {
            return 0;
        }
        let lag_bound = self
            .iter()
            .find(|r| now_ms.saturating_sub(r.timestamp_ms) < config.min_compaction_lag_ms)
            .map_or(self.next_offset, |r| r.offset);
        self.active()
            .base
            .min(lag_bound)
            .min(self.last_stable_offset())
    }

    /// One cleaning pass at `requested` (clamped to `0..=cleanable_horizon`; `None` = the
    /// cleanable horizon). Returns the horizon used and the number of records removed.
    pub(crate) fn clean(
        &mut self,
        requested: Option<i64>,
        now_ms: i64,
        config: &TopicConfig,
    ) -> (i64, usize) {
        let limit = self.cleanable_horizon(now_ms, config);
        let horizon = requested.map_or(limit, |h| h.clamp(0, limit));
        let decisions = self.decide(horizon, now_ms);
        let delete_after = now_ms.saturating_add(config.delete_retention_ms);
        let mut decisions = decisions.into_iter();
        let mut removed = 0;
        for segment in &mut self.segments {
            segment.records.retain_mut(|record| {
                if record.offset >= horizon {
                    return true;
                }
                match decisions.next() {
                    Some(Decision::Remove) => {
                        removed += 1;
                        false
                    }
                    Some(Decision::KeepTombstone) => {
                        record.delete_after_ms = Some(delete_after);
                        true
                    }
                    Some(Decision::Keep) | None => true,
                }
            });
        }
        self.prune_txns();
        (horizon, removed)
    }

    /// The decision for every record below `horizon`, in offset order.
    fn decide(&self, horizon: i64, now_ms: i64) -> Vec<Decision> {
        let below = || self.iter().take_while(|r| r.offset < horizon);
        let survives = |r: &Stored| match self.kind(r) {
            RecordKind::Plain | RecordKind::Transactional(TxnState::Committed) => true,
            // Open transactions lie at or beyond the last stable offset, so never below the
            // horizon; aborted records and markers are dropped.
            RecordKind::Transactional(_) | RecordKind::Marker { .. } => false,
        };
        let mut latest: BTreeMap<&[u8], i64> = BTreeMap::new();
        for record in below().filter(|r| survives(r)) {
            if let Some(key) = &record.key {
                latest.insert(key, record.offset);
            }
        }
        below()
            .map(|record| {
                if !survives(record) {
                    return Decision::Remove;
                }
                let Some(key) = &record.key else {
                    // Keyless records are never compacted away.
                    return Decision::Keep;
                };
                if latest
                    .get(key.as_slice())
                    .is_some_and(|&o| o > record.offset)
                {
                    return Decision::Remove;
                }
                match (record.value.is_none(), record.delete_after_ms) {
                    (false, _) => Decision::Keep,
                    (true, None) => Decision::KeepTombstone,
                    (true, Some(after)) if now_ms >= after => Decision::Remove,
                    (true, Some(_)) => Decision::Keep,
                }
            })
            .collect()
    }

    /// Forgets finished transactions no record refers to any more.
    fn prune_txns(&mut self) {
        let referenced: BTreeSet<u64> = self
            .iter()
            .filter_map(|r| match r.entry {
                Entry::Data { txn } => txn,
                Entry::Marker { .. } => None,
            })
            .collect();
        self.txns
            .retain(|id, t| t.state == TxnState::Open || referenced.contains(id));
    }
}
