//! [`MemoryCluster`]: topics of compacted partitions, a logical clock, transactional producers
//! and a seeded random source, all driven synchronously by the caller.

use std::collections::{BTreeMap, BTreeSet};

use connect_state_store::FetchedBatch;
use engine::offsets::default_partition;
use engine::ProducerRecord;

use crate::config::TopicConfig;
use crate::error::LogError;
use crate::log::{Isolation, LogRecord, PartitionLog};
use crate::transaction::{ProducerHandle, Producers};

/// A key and a value to append as is (`None` key: keyless record; `None` value: tombstone).
pub type KeyValue = (Option<Vec<u8>>, Option<Vec<u8>>);

/// What one cleaning pass of one partition did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cleaned {
    /// The partition cleaned.
    pub partition: i32,
    /// The horizon used: records at or beyond it were untouched.
    pub horizon: i64,
    /// How many records the pass removed.
    pub removed: usize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Topic {
    config: TopicConfig,
    partitions: Vec<PartitionLog>,
}

/// The whole simulated cluster: a pure, synchronous, deterministic log model.
///
/// Nothing happens on its own: time moves only through [`advance_clock`](Self::advance_clock),
/// cleaning only through the `clean*` calls, and the only randomness (in
/// [`clean_random`](Self::clean_random)) comes from the seed given to [`new`](Self::new). Two
/// clusters built with the same seed and given the same calls are equal (`==`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryCluster {
    now_ms: i64,
    rng: fastrand::Rng,
    topics: BTreeMap<String, Topic>,
    producers: Producers,
}

impl MemoryCluster {
    /// An empty cluster whose clock reads 0 and whose random choices are fixed by `seed`.
    pub fn new(seed: u64) -> Self {
        Self {
            now_ms: 0,
            rng: fastrand::Rng::with_seed(seed),
            topics: BTreeMap::new(),
            producers: Producers::default(),
        }
    }

    /// The logical clock in milliseconds; every append is stamped with it.
    pub fn now_ms(&self) -> i64 {
        self.now_ms
    }

    /// Moves the logical clock forward by `ms` (saturating). Call it to let
    /// `min.compaction.lag.ms` and `delete.retention.ms` elapse; changes nothing else.
    pub fn advance_clock(&mut self, ms: u64) {
        let ms = i64::try_from(ms).unwrap_or(i64::MAX);
        self.now_ms = self.now_ms.saturating_add(ms);
    }

    /// Creates a topic of `config.partitions` empty partitions.
    ///
    /// # Errors
    ///
    /// [`LogError::TopicExists`] (the existing topic is unchanged) or
    /// [`LogError::InvalidConfig`].
    pub fn create_topic(&mut self, name: &str, config: TopicConfig) -> Result<(), LogError> {
        config.validate()?;
        if self.topics.contains_key(name) {
            return Err(LogError::TopicExists {
                topic: name.to_owned(),
            });
        }
        let count = usize::try_from(config.partitions).unwrap_or(0);
        let partitions = (0..count).map(|_| PartitionLog::new()).collect();
        self.topics
            .insert(name.to_owned(), Topic { config, partitions });
        Ok(())
    }

    /// The configuration of a topic, `None` if it does not exist.
    pub fn describe_topic(&self, name: &str) -> Option<&TopicConfig> {
        self.topics.get(name).map(|t| &t.config)
    }

    fn topic(&self, name: &str) -> Result<&Topic, LogError> {
        self.topics.get(name).ok_or_else(|| LogError::UnknownTopic {
            topic: name.to_owned(),
        })
    }

    fn partition(&self, topic: &str, partition: i32) -> Result<&PartitionLog, LogError> {
        let t = self.topic(topic)?;
        usize::try_from(partition)
            .ok()
            .and_then(|p| t.partitions.get(p))
            .ok_or_else(|| unknown_partition(topic, partition))
    }

    /// The partition's log and its topic's config, for a mutation.
    fn partition_mut(
        &mut self,
        topic: &str,
        partition: i32,
    ) -> Result<(&TopicConfig, &mut PartitionLog), LogError> {
        let t = self
            .topics
            .get_mut(topic)
            .ok_or_else(|| LogError::UnknownTopic {
                topic: topic.to_owned(),
            })?;
        let log = usize::try_from(partition)
            .ok()
            .and_then(|p| t.partitions.get_mut(p))
            .ok_or_else(|| unknown_partition(topic, partition))?;
        Ok((&t.config, log))
    }

    /// The partition `record` goes to: its explicit partition, else Java's default partitioner
    /// (murmur2 of the key bytes modulo the partition count).
    ///
    /// # Errors
    ///
    /// Unknown topic, or an explicit partition the topic does not have.
    pub fn partition_for(&self, topic: &str, record: &ProducerRecord) -> Result<i32, LogError> {
        let t = self.topic(topic)?;
        let count = t.config.partitions;
        let partition = match record.partition {
            Some(p) => p,
            // `count >= 1` (validated at creation), so the partitioner always answers.
            None => default_partition(&record.key, count).unwrap_or(0),
        };
        if (0..count).contains(&partition) {
            Ok(partition)
        } else {
            Err(unknown_partition(topic, partition))
        }
    }

    fn partitions_for(
        &self,
        topic: &str,
        records: &[ProducerRecord],
    ) -> Result<Vec<i32>, LogError> {
        records
            .iter()
            .map(|r| self.partition_for(topic, r))
            .collect()
    }

    /// Appends `records` in order to one partition, outside any transaction, and returns their
    /// offsets. Call it for raw appends (keyless records included); rolls segments as they fill.
    ///
    /// # Errors
    ///
    /// Unknown topic or partition; nothing is appended then.
    pub fn append(
        &mut self,
        topic: &str,
        partition: i32,
        records: &[KeyValue],
    ) -> Result<Vec<i64>, LogError> {
        let now = self.now_ms;
        let (config, log) = self.partition_mut(topic, partition)?;
        let segment = config.segment_records;
        Ok(records
            .iter()
            .map(|(k, v)| log.append(k.clone(), v.clone(), now, None, segment))
            .collect())
    }

    /// Appends producer records in order outside any transaction, each to the partition
    /// [`partition_for`](Self::partition_for) picks, and returns each `(partition, offset)`.
    ///
    /// # Errors
    ///
    /// Unknown topic or an explicit partition out of range; nothing is appended then.
    pub fn send(
        &mut self,
        topic: &str,
        records: &[ProducerRecord],
    ) -> Result<Vec<(i32, i64)>, LogError> {
        let partitions = self.partitions_for(topic, records)?;
        let now = self.now_ms;
        let mut placed = Vec::with_capacity(records.len());
        for (record, partition) in records.iter().zip(partitions) {
            let (config, log) = self.partition_mut(topic, partition)?;
            let offset = log.append(
                Some(record.key.clone()),
                record.value.clone(),
                now,
                None,
                config.segment_records,
            );
            placed.push((partition, offset));
        }
        Ok(placed)
    }

    /// Starts a new active segment in a partition at its high watermark (no-op when the active
    /// segment is empty). Call it to make everything appended so far cleanable.
    ///
    /// # Errors
    ///
    /// Unknown topic or partition.
    pub fn roll_segment(&mut self, topic: &str, partition: i32) -> Result<(), LogError> {
        self.partition_mut(topic, partition)?.1.roll();
        Ok(())
    }

    /// Issues the newest producer of `transactional_id` (Kafka's `initTransactions`). Every
    /// older handle of the same id is fenced from now on, and its open transaction, if any, is
    /// aborted: an abort marker is written in each partition it wrote to.
    pub fn init_transactions(&mut self, transactional_id: &str) -> ProducerHandle {
        let (handle, fenced) = self.producers.init(transactional_id);
        if let Some(txn) = fenced {
            self.write_markers(txn.id, &txn.partitions, false);
        }
        handle
    }

    /// Opens a transaction of `producer`; nothing is written until it sends.
    ///
    /// # Errors
    ///
    /// [`LogError::Fenced`] for a zombie handle; [`LogError::InvalidTransactionState`] if a
    /// transaction is already open.
    pub fn begin_transaction(&mut self, producer: ProducerHandle) -> Result<(), LogError> {
        self.producers.begin(producer)
    }

    /// Appends producer records inside `producer`'s open transaction, like
    /// [`send`](Self::send). The records are invisible to `read_committed` readers (and hold
    /// back the last stable offset) until the transaction ends.
    ///
    /// # Errors
    ///
    /// [`LogError::Fenced`], [`LogError::InvalidTransactionState`] without an open transaction,
    /// unknown topic or partition; nothing is appended then.
    pub fn send_transactional(
        &mut self,
        producer: ProducerHandle,
        topic: &str,
        records: &[ProducerRecord],
    ) -> Result<Vec<(i32, i64)>, LogError> {
        let txn = self.producers.open_txn(producer)?;
        let partitions = self.partitions_for(topic, records)?;
        let now = self.now_ms;
        let mut placed = Vec::with_capacity(records.len());
        for (record, partition) in records.iter().zip(partitions) {
            self.producers.touch(producer, topic, partition)?;
            let (config, log) = self.partition_mut(topic, partition)?;
            let offset = log.append(
                Some(record.key.clone()),
                record.value.clone(),
                now,
                Some(txn),
                config.segment_records,
            );
            placed.push((partition, offset));
        }
        Ok(placed)
    }

    /// Commits `producer`'s open transaction: a commit marker (one offset) in every partition it
    /// wrote to; its records become visible to `read_committed` readers.
    ///
    /// # Errors
    ///
    /// [`LogError::Fenced`] (the zombie's transaction was already aborted by the fencing
    /// `init_transactions`); [`LogError::InvalidTransactionState`] without an open transaction.
    pub fn commit_transaction(&mut self, producer: ProducerHandle) -> Result<(), LogError> {
        let txn = self.producers.finish(producer)?;
        self.write_markers(txn.id, &txn.partitions, true);
        Ok(())
    }

    /// Aborts `producer`'s open transaction: an abort marker (one offset) in every partition it
    /// wrote to; its records are never visible to `read_committed` readers and are removed by
    /// the next cleaning pass whose horizon covers them.
    ///
    /// # Errors
    ///
    /// As [`commit_transaction`](Self::commit_transaction).
    pub fn abort_transaction(&mut self, producer: ProducerHandle) -> Result<(), LogError> {
        let txn = self.producers.finish(producer)?;
        self.write_markers(txn.id, &txn.partitions, false);
        Ok(())
    }

    fn write_markers(&mut self, txn: u64, partitions: &BTreeSet<(String, i32)>, committed: bool) {
        let now = self.now_ms;
        for (topic, partition) in partitions {
            // Topics are never deleted and the partition was validated when written to.
            if let Ok((config, log)) = self.partition_mut(topic, *partition) {
                log.end_txn(txn, committed, now, config.segment_records);
            }
        }
    }

    /// The horizon a default cleaning pass of the partition would use now: the base offset of
    /// the active segment, capped by the first record younger than `min.compaction.lag.ms` and
    /// by the last stable offset (0 for a topic whose policy is not `compact`).
    ///
    /// # Errors
    ///
    /// Unknown topic or partition.
    pub fn cleanable_horizon(&self, topic: &str, partition: i32) -> Result<i64, LogError> {
        let config = &self.topic(topic)?.config;
        Ok(self
            .partition(topic, partition)?
            .cleanable_horizon(self.now_ms, config))
    }

    /// Runs one cleaning pass over a partition (spec §1). The horizon is `horizon` if given,
    /// but never above [`cleanable_horizon`](Self::cleanable_horizon), which is the default.
    /// Below the horizon it removes every record shadowed by a later record of the same key
    /// below the horizon, aborted records and control markers, and tombstones whose
    /// `delete.retention.ms` ran out since the first pass that kept them (which starts that
    /// clock). Offsets never change; gaps appear.
    ///
    /// # Errors
    ///
    /// Unknown topic or partition.
    pub fn clean(
        &mut self,
        topic: &str,
        partition: i32,
        horizon: Option<i64>,
    ) -> Result<Cleaned, LogError> {
        let now = self.now_ms;
        let (config, log) = self.partition_mut(topic, partition)?;
        let config = config.clone();
        let (horizon, removed) = log.clean(horizon, now, &config);
        Ok(Cleaned {
            partition,
            horizon,
            removed,
        })
    }

    /// Cleans every partition of a topic at its default horizon.
    ///
    /// # Errors
    ///
    /// Unknown topic.
    pub fn clean_all(&mut self, topic: &str) -> Result<Vec<Cleaned>, LogError> {
        let count = self.topic(topic)?.config.partitions;
        (0..count).map(|p| self.clean(topic, p, None)).collect()
    }

    /// Cleans each partition of a topic with probability `probability`, at a horizon drawn
    /// uniformly from `0..=cleanable_horizon`. Draws from the seeded generator, so the result
    /// depends only on the seed and the calls made so far. Returns the passes that ran.
    ///
    /// # Errors
    ///
    /// Unknown topic.
    pub fn clean_random(
        &mut self,
        topic: &str,
        probability: f64,
    ) -> Result<Vec<Cleaned>, LogError> {
        let count = self.topic(topic)?.config.partitions;
        let mut passes = Vec::new();
        for partition in 0..count {
            if self.rng.f64() < probability {
                let limit = self.cleanable_horizon(topic, partition)?;
                let horizon = if limit > 0 {
                    self.rng.i64(0..=limit)
                } else {
                    0
                };
                passes.push(self.clean(topic, partition, Some(horizon))?);
            }
        }
        Ok(passes)
    }

    /// Reads up to `max_records` records of a partition with offset `>= from`, in offset order,
    /// as a reader of `isolation` sees them: never markers, never beyond the end offset of
    /// that isolation, and for `read_committed` never aborted or open-transaction records.
    /// `next_offset` is one past the last offset returned or skipped, so repeated fetches
    /// always progress past gaps; a `from` below everything that still exists just returns what
    /// exists from there. Changes nothing.
    ///
    /// # Errors
    ///
    /// Unknown topic or partition.
    pub fn fetch(
        &self,
        topic: &str,
        partition: i32,
        from: i64,
        max_records: usize,
        isolation: Isolation,
    ) -> Result<FetchedBatch, LogError> {
        Ok(self
            .partition(topic, partition)?
            .fetch(partition, from, max_records, isolation))
    }

    /// Every partition's end offset for a reader of `isolation`: the high watermark, or the
    /// last stable offset for `read_committed`.
    ///
    /// # Errors
    ///
    /// Unknown topic.
    pub fn end_offsets(
        &self,
        topic: &str,
        isolation: Isolation,
    ) -> Result<BTreeMap<i32, i64>, LogError> {
        let t = self.topic(topic)?;
        Ok((0..)
            .zip(&t.partitions)
            .map(|(p, log)| (p, log.end_offset(isolation)))
            .collect())
    }

    /// The offset the next append to the partition gets.
    ///
    /// # Errors
    ///
    /// Unknown topic or partition.
    pub fn high_watermark(&self, topic: &str, partition: i32) -> Result<i64, LogError> {
        Ok(self.partition(topic, partition)?.high_watermark())
    }

    /// The first offset of the partition's earliest open transaction, else its high watermark.
    ///
    /// # Errors
    ///
    /// Unknown topic or partition.
    pub fn last_stable_offset(&self, topic: &str, partition: i32) -> Result<i64, LogError> {
        Ok(self.partition(topic, partition)?.last_stable_offset())
    }

    /// Every record still present in a partition, control markers included, in offset order:
    /// for tests that inspect what cleaning left.
    ///
    /// # Errors
    ///
    /// Unknown topic or partition.
    pub fn records(&self, topic: &str, partition: i32) -> Result<Vec<LogRecord>, LogError> {
        Ok(self.partition(topic, partition)?.records())
    }

    /// The base offset of each segment of a partition, oldest first; the last one is the
    /// active segment.
    ///
    /// # Errors
    ///
    /// Unknown topic or partition.
    pub fn segment_base_offsets(&self, topic: &str, partition: i32) -> Result<Vec<i64>, LogError> {
        Ok(self.partition(topic, partition)?.segment_bases())
    }
}

fn unknown_partition(topic: &str, partition: i32) -> LogError {
    LogError::UnknownPartition {
        topic: topic.to_owned(),
        partition,
    }
}
