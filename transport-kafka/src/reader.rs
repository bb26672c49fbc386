//! The transport's one consumer and the partitions it reads.
//!
//! A read asks for one partition at a time (the store goes round the partitions, a batch from
//! each). Each partition, once asked for, stays assigned with a queue of its own (librdkafka's
//! partition queues), so that while the store applies a batch of one partition librdkafka goes
//! on fetching all the others, and the next partition's batch is usually waiting already.
//! Assigning only the partition asked for, as this transport once did, threw away what
//! librdkafka had prefetched at every switch and waited for a fresh fetch from the broker each
//! time (a 25-partition offsets topic of 1.1 million records: about 225 such waits).
//!
//! A partition's queue is split off before the partition is assigned, so none of its records
//! can reach the consumer's common queue, which is polled only to serve librdkafka's events.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use connect_state_store::{FetchedBatch, RecordBatch, TransportError};
use engine::Record;
use rdkafka::consumer::base_consumer::PartitionQueue;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::error::KafkaError;
use rdkafka::message::Message;
use rdkafka::{Offset, TopicPartitionList};

use crate::context::Context;
use crate::transport::{broker, fatal};

/// How long one `poll` waits before the fetch loop checks its deadline again.
const POLL_SLICE: Duration = Duration::from_millis(100);

/// The consumer, with every partition it has been asked for so far.
pub(crate) struct Reader {
    consumer: Arc<BaseConsumer<Context>>,
    /// The assigned partitions by topic: each one's queue and where its next record starts.
    assigned: BTreeMap<String, BTreeMap<i32, Assigned>>,
}

/// An assigned partition.
struct Assigned {
    /// Its records (and its end-of-partition events and fetch errors), split from the
    /// consumer's common queue.
    queue: PartitionQueue<Context>,
    /// The offset its queue hands over next (or a later one, past a compacted gap or a
    /// transaction marker): where the last fetch stopped.
    next: i64,
}

impl Reader {
    pub(crate) fn new(consumer: BaseConsumer<Context>) -> Self {
        Self {
            consumer: Arc::new(consumer),
            assigned: BTreeMap::new(),
        }
    }

    /// The consumer, for the calls that do not read records (metadata, end offsets).
    pub(crate) fn consumer(&self) -> &BaseConsumer<Context> {
        &self.consumer
    }

    /// Reads one partition from `from` into `records` (empty: a batch the store handed back, or
    /// a new one): up to `max` records, stopping at the partition's end or when librdkafka
    /// holds no more. Records below `from` (a broker resending a batch) are dropped. `next_offset` is the
    /// consumer's position, which moves past transaction markers and compacted gaps.
    ///
    /// A message librdkafka already holds is taken without waiting (`poll` with no timeout),
    /// and once one is taken the fetch ends when none is left waiting: the first batch of a
    /// read is what the first fetch response brought (a default-scale config topic on the local
    /// broker: first records applied after 8-21 ms instead of 12-29). The clock, the deadline
    /// and the fatal-error flag are looked at only when none is waiting or one is dropped.
    /// Checking them for every message took a lock and a clock read per record, which profiles
    /// showed among the fetch threads' largest costs.
    pub(crate) fn fetch(
        &mut self,
        topic: &str,
        partition: i32,
        from: i64,
        max: usize,
        timeout: Duration,
        records: RecordBatch,
    ) -> Result<FetchedBatch, TransportError> {
        let consumer = Arc::clone(&self.consumer);
        let fetched = self.place(topic, partition, from).and_then(|assigned| {
            fatal(consumer.context(), topic)?;
            let batch = assigned.read(&consumer, topic, partition, max, timeout, records)?;
            assigned.next = batch.next_offset;
            Ok(batch)
        });
        if fetched.is_err() {
            // Where the queue stands is not known after a failure: start the partitions over.
            self.unassign_all();
        }
        fetched
    }

    /// Starts reading `topic`'s partitions in the background, each from its offset in
    /// `starts` (librdkafka fetches into each partition's queue), so that the
    /// [`fetch`](Self::fetch)es from there find their records on their way.
    pub(crate) fn expect(
        &mut self,
        topic: &str,
        starts: &[(i32, i64)],
    ) -> Result<(), TransportError> {
        starts
            .iter()
            .try_for_each(|&(partition, from)| self.place(topic, partition, from).map(|_| ()))
    }

    /// `topic`'s `partition`, assigned with its queue at `from`: kept as it is when its last
    /// fetch stopped there, otherwise assigned afresh (every partition is, when one has to
    /// move: librdkafka moves a partition's fetch position only through a new assignment).
    fn place(
        &mut self,
        topic: &str,
        partition: i32,
        from: i64,
    ) -> Result<&mut Assigned, TransportError> {
        match self.assigned_mut(topic, partition).map(|a| a.next) {
            Some(next) if next == from => {}
            Some(_) => {
                self.unassign_all();
                self.assign(topic, partition, from)?;
            }
            None => self.assign(topic, partition, from)?,
        }
        self.assigned_mut(topic, partition)
            .ok_or_else(|| broker(topic, format!("partition {partition} is not assigned")))
    }

    /// Adds `topic`'s `partition` at `from` to the assignment, with a queue of its own.
    fn assign(&mut self, topic: &str, partition: i32, from: i64) -> Result<(), TransportError> {
        // Split before assigning: librdkafka leaves a queue the application has split alone
        // when it starts the partition's fetch, so no record goes to the common queue.
        let queue = self
            .consumer
            .split_partition_queue(topic, partition)
            .ok_or_else(|| broker(topic, format!("partition {partition} has no queue")))?;
        let mut list = TopicPartitionList::new();
        list.add_partition_offset(topic, partition, Offset::Offset(from))
            .map_err(|e| broker(topic, e))?;
        if let Err(e) = self.consumer.incremental_assign(&list) {
            // The consumer's assignment and this bookkeeping disagree: start over.
            self.unassign_all();
            return Err(broker(topic, e));
        }
        self.assigned
            .entry(topic.to_string())
            .or_default()
            .insert(partition, Assigned { queue, next: from });
        Ok(())
    }

    /// Unassigns every partition and drops their queues (the next fetch assigns its partition
    /// afresh).
    fn unassign_all(&mut self) {
        self.assigned.clear();
        // A failure here leaves partitions assigned; the next `incremental_assign` of one of
        // them then fails, with librdkafka's reason, and comes back here.
        let _ = self.consumer.unassign();
    }

    fn assigned_mut(&mut self, topic: &str, partition: i32) -> Option<&mut Assigned> {
        self.assigned.get_mut(topic)?.get_mut(&partition)
    }
}

impl Assigned {
    /// [`Reader::fetch`] from this partition's queue, which stands at `next`.
    fn read(
        &self,
        consumer: &BaseConsumer<Context>,
        topic: &str,
        partition: i32,
        max: usize,
        timeout: Duration,
        mut records: RecordBatch,
    ) -> Result<FetchedBatch, TransportError> {
        let (queue, from) = (&self.queue, self.next);
        let deadline = Instant::now() + timeout;
        let mut next = from;
        // librdkafka recovers from transient errors (a broker going away and coming back) by
        // itself: keep polling, and report the last error only if the whole timeout passes
        // without progress.
        let mut last_error = None;
        while records.len() < max {
            let polled = match queue.poll(Duration::ZERO) {
                Some(polled) => polled,
                // What librdkafka holds is handed over at once, to be applied while it fetches
                // the rest, rather than after a full batch arrived.
                None if !records.is_empty() => break,
                None => {
                    // Nothing waiting: serve librdkafka's events, check the deadline and the
                    // connection, then wait.
                    if let Some(served) = consumer.poll(Duration::ZERO) {
                        match served {
                            Ok(stray) => return Err(stray_record(topic, &stray)),
                            Err(e) => last_error = Some(e),
                        }
                    }
                    let now = Instant::now();
                    if now >= deadline {
                        break;
                    }
                    fatal(consumer.context(), topic)?;
                    match queue.poll((deadline - now).min(POLL_SLICE)) {
                        Some(polled) => polled,
                        None => continue,
                    }
                }
            };
            match polled {
                Ok(message) => {
                    if message.offset() < next {
                        // Dropped: a stream of these must not outlive the deadline.
                        if Instant::now() >= deadline {
                            break;
                        }
                        continue;
                    }
                    records.push(Record {
                        partition,
                        offset: message.offset(),
                        key: message.key(),
                        value: message.payload(),
                        timestamp: message.timestamp().to_millis().filter(|ts| *ts >= 0),
                    });
                    next = message.offset() + 1;
                }
                Err(KafkaError::PartitionEOF(p)) if p == partition => {
                    if let Ok(position) = consumer.position() {
                        if let Some(Offset::Offset(o)) = position
                            .find_partition(topic, partition)
                            .map(|e| e.offset())
                        {
                            next = next.max(o);
                        }
                    }
                    if next > from || !records.is_empty() {
                        break;
                    }
                    // Nothing readable yet (an open transaction under read_committed): wait.
                    if Instant::now() >= deadline {
                        break;
                    }
                }
                Err(e) => {
                    last_error = Some(e);
                    fatal(consumer.context(), topic)?;
                    if Instant::now() >= deadline {
                        break;
                    }
                }
            }
        }
        if let (Some(e), true) = (last_error, records.is_empty() && next == from) {
            return Err(TransportError::Fetch {
                topic: topic.to_string(),
                partition,
                offset: from,
                reason: e.to_string(),
            });
        }
        Ok(FetchedBatch {
            records,
            next_offset: next,
        })
    }
}

impl Drop for Reader {
    /// Drops the partition queues, then closes the consumer quickly (see [`close_quickly`]).
    fn drop(&mut self) {
        self.assigned.clear();
        close_quickly(&self.consumer);
    }
}

/// The longest [`close_quickly`] polls for the close before leaving it to rdkafka's drop.
const CLOSE_WAIT: Duration = Duration::from_secs(1);

/// Closes a consumer that has a group id, so that dropping it does not wait.
///
/// rdkafka's `BaseConsumer`, dropped with a group id, closes its queue and then polls it in
/// 100 ms slices until librdkafka reports the consumer closed, which takes one whole slice:
/// every reader dropped (each `inspect`, and the raw reads the bench compares with) waited
/// 100 ms. Polling in 1 ms slices sees the close in about a millisecond, and the drop then finds
/// the consumer closed. A consumer still not closed after [`CLOSE_WAIT`] is left to the drop.
pub(crate) fn close_quickly<C: rdkafka::consumer::ConsumerContext>(consumer: &BaseConsumer<C>) {
    if consumer.close_queue().is_err() {
        return;
    }
    let deadline = Instant::now() + CLOSE_WAIT;
    while !consumer.closed() && Instant::now() < deadline {
        // Whatever the closing consumer still hands out (a rebalance event) is dropped.
        let _ = consumer.poll(Duration::from_millis(1));
    }
}

/// The error for a record that reached the consumer's common queue: every partition's queue is
/// split before the partition is assigned, so this does not happen; if it did, the record's
/// partition would skip it, and the read fails rather than lose it.
fn stray_record(topic: &str, stray: &impl Message) -> TransportError {
    broker(
        topic,
        format!(
            "librdkafka handed over a record of topic '{}' partition {} at offset {} outside \
             that partition's queue",
            stray.topic(),
            stray.partition(),
            stray.offset()
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::KafkaSettings;
    use rdkafka::mocking::MockCluster;

    #[test]
    fn expected_partitions_are_assigned_at_their_starts_and_kept_for_their_fetches() {
        let mock = MockCluster::new(1).expect("librdkafka's mock cluster");
        mock.create_topic("t", 3, 1).expect("a mock topic");
        let settings = KafkaSettings::new(mock.bootstrap_servers());
        let consumer = settings
            .reader_config("connect-state-test")
            .create_with_context(Context::new(&settings))
            .expect("a consumer");
        let mut reader = Reader::new(consumer);
        reader.expect("t", &[(0, 0), (2, 5)]).expect("assigned");
        let placed = |reader: &Reader| -> Vec<(i32, i64)> {
            reader.assigned["t"]
                .iter()
                .map(|(&partition, assigned)| (partition, assigned.next))
                .collect()
        };
        assert_eq!(placed(&reader), [(0, 0), (2, 5)]);
        let mut listed: Vec<i32> = reader
            .consumer
            .assignment()
            .expect("the assignment")
            .elements()
            .iter()
            .map(|e| e.partition())
            .collect();
        listed.sort_unstable();
        assert_eq!(listed, [0, 2]);
        // Where a fetch starts as expected, the partition stays as it is; elsewhere, the
        // partitions start over.
        reader.place("t", 2, 5).expect("kept");
        assert_eq!(placed(&reader), [(0, 0), (2, 5)]);
        reader.place("t", 2, 1).expect("moved");
        assert_eq!(placed(&reader), [(2, 1)]);
    }
}
