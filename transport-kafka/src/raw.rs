//! Raw librdkafka reads for benchmarks: the floor of any reader built on this client library.

use std::time::{Duration, Instant};

use rdkafka::admin::{AdminClient, AdminOptions};
use rdkafka::client::DefaultClientContext;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::message::Message;
use rdkafka::{Offset, TopicPartitionList};

use crate::settings::KafkaSettings;

/// Reads every partition of `topic` from the beginning to the end offsets sampled at the start,
/// with one consumer (manual assignment, the same client settings as
/// [`KafkaTransport`](crate::KafkaTransport)'s reader), and only counts what it reads. Returns
/// `(records, key and value bytes)`.
///
/// Fails when the topic does not exist or when `settings.request_timeout` passes without a new
/// record.
pub fn count_bytes(settings: &KafkaSettings, topic: &str) -> Result<(u64, u64), KafkaError> {
    settings.validate()?;
    let config = settings.reader_config("connect-state-raw-reader");
    let consumer: BaseConsumer = config.create()?;
    let timeout = settings.request_timeout;
    let metadata = consumer.fetch_metadata(Some(topic), timeout)?;
    let partitions = metadata
        .topics()
        .iter()
        .find(|t| t.name() == topic)
        .map(|t| t.partitions().len())
        .unwrap_or(0);
    if partitions == 0 {
        return Err(KafkaError::MetadataFetch(
            RDKafkaErrorCode::UnknownTopicOrPartition,
        ));
    }
    let mut assignment = TopicPartitionList::new();
    // The end offset of each partition still to be reached.
    let mut ends: Vec<Option<i64>> = Vec::with_capacity(partitions);
    for p in 0..partitions as i32 {
        let (low, high) = consumer.fetch_watermarks(topic, p, timeout)?;
        ends.push((high > low).then_some(high));
        assignment.add_partition_offset(topic, p, Offset::Beginning)?;
    }
    consumer.assign(&assignment)?;
    let (mut records, mut bytes) = (0u64, 0u64);
    let mut last_progress = Instant::now();
    while ends.iter().any(Option::is_some) {
        if last_progress.elapsed() > timeout {
            return Err(KafkaError::MessageConsumption(
                RDKafkaErrorCode::OperationTimedOut,
            ));
        }
        match consumer.poll(Duration::from_millis(100)) {
            None => {}
            Some(Ok(message)) => {
                last_progress = Instant::now();
                records += 1;
                bytes += (message.key().map_or(0, <[u8]>::len)
                    + message.payload().map_or(0, <[u8]>::len)) as u64;
                if let Some(end) = ends.get_mut(message.partition() as usize) {
                    if end.is_some_and(|e| message.offset() + 1 >= e) {
                        *end = None;
                    }
                }
            }
            Some(Err(KafkaError::PartitionEOF(p))) => {
                // Some brokers signal the end early: the sampled end offset decides, and the
                // position covers compacted gaps and transaction markers at the end.
                let position = consumer.position()?;
                if let (Some(end), Some(Offset::Offset(at))) = (
                    ends.get_mut(p as usize),
                    position.find_partition(topic, p).map(|e| e.offset()),
                ) {
                    if end.is_some_and(|e| at >= e) {
                        *end = None;
                    }
                }
            }
            Some(Err(e)) => return Err(e),
        }
    }
    // Closed as the transport's reader closes, so that the drop does not add 100 ms to a read
    // the bench compares with `inspect`'s.
    crate::reader::close_quickly(&consumer);
    Ok((records, bytes))
}

/// Deletes `topic` (benchmarks clean up the topics they create).
pub async fn delete_topic(settings: &KafkaSettings, topic: &str) -> Result<(), KafkaError> {
    settings.validate()?;
    let admin: AdminClient<DefaultClientContext> = settings.client_config().create()?;
    let timeout = Some(settings.request_timeout);
    let options = AdminOptions::new()
        .operation_timeout(timeout)
        .request_timeout(timeout);
    for result in admin.delete_topics(&[topic], &options).await? {
        if let Err((_, code)) = result {
            return Err(KafkaError::AdminOp(code));
        }
    }
    Ok(())
}
