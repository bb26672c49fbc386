//! [`KafkaTransport`]: the store's [`Transport`] over a real Kafka cluster.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use connect_state_store::{
    FetchedBatch, NewTopic, ProduceMode, RecordBatch, TopicDescription, Transport, TransportError,
};
use engine::ProducerRecord;
use rdkafka::admin::{
    AdminClient, AdminOptions, NewTopic as KafkaNewTopic, ResourceSpecifier, TopicReplication,
};
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::producer::{DeliveryFuture, FutureProducer, FutureRecord, Producer};
use rdkafka::{Offset, TopicPartitionList};

use crate::context::Context;
use crate::reader::Reader;
use crate::settings::KafkaSettings;

/// The Kafka transport: one consumer with manual assignment (no consumer group offsets are ever
/// committed), a plain producer (`acks=all`, Java's murmur2 partitioner), a transactional
/// producer for fenced leader writes, and an admin client (shared, see `crate::admin`).
pub struct KafkaTransport {
    settings: KafkaSettings,
    /// The one consumer (one call at a time) and the partitions it reads.
    reader: Arc<Mutex<Reader>>,
    /// Batches the store handed back, for the next fetches to fill (see [`Spare`]).
    spare: Spare,
    /// The plain producer, created on the first plain write (readers never pay for it).
    producer: std::sync::OnceLock<FutureProducer<Context>>,
    transactional: tokio::sync::Mutex<Option<FutureProducer<Context>>>,
    /// The admin client of these settings, shared with the process's other transports (see
    /// [`crate::admin`]).
    admin: Arc<AdminClient<Context>>,
    /// What every client of this transport reports through librdkafka's error callback.
    context: Context,
    /// The listening client of [`crate::context::watch`] (TLS and SASL connections only).
    _watch: Option<rdkafka::producer::ThreadedProducer<Context>>,
}

pub(crate) fn broker(topic: &str, error: impl std::fmt::Display) -> TransportError {
    TransportError::Broker {
        topic: topic.to_string(),
        reason: error.to_string(),
    }
}

/// Whether a metadata or offsets request failed for a reason that passes by itself: a partition
/// whose leader is being elected (right after a topic is created, or while a broker restarts),
/// a broker that is not reachable yet, a request that timed out.
fn is_retriable(error: &KafkaError) -> bool {
    matches!(
        error.rdkafka_error_code(),
        Some(
            RDKafkaErrorCode::NotLeaderForPartition
                | RDKafkaErrorCode::LeaderNotAvailable
                | RDKafkaErrorCode::BrokerNotAvailable
                | RDKafkaErrorCode::NotCoordinator
                | RDKafkaErrorCode::RequestTimedOut
                | RDKafkaErrorCode::NetworkException
                | RDKafkaErrorCode::BrokerTransportFailure
                | RDKafkaErrorCode::AllBrokersDown
                | RDKafkaErrorCode::OperationTimedOut
                | RDKafkaErrorCode::UnknownTopicOrPartition
                | RDKafkaErrorCode::NotEnoughReplicas
                // A partition's answer to ListOffsets while its leader is (re)elected, as
                // right after a broker restart.
                | RDKafkaErrorCode::UnknownLeaderEpoch
                | RDKafkaErrorCode::FencedLeaderEpoch
                | RDKafkaErrorCode::OffsetNotAvailable
                | RDKafkaErrorCode::ReplicaNotAvailable
        )
    )
}

/// How long one metadata request may wait before the caller looks again (for a fatal error
/// reported meanwhile, or its own deadline).
const METADATA_SLICE: Duration = Duration::from_secs(1);

/// Runs `call(time left)` again while it fails with a [retriable](is_retriable) error, with a
/// growing pause (50 ms up to 1 s), until `timeout` has passed or the clients reported a fatal
/// failure (see [`Context`]); then its last error.
fn retrying<R>(
    context: &Context,
    timeout: Duration,
    mut call: impl FnMut(Duration) -> Result<R, KafkaError>,
) -> Result<R, KafkaError> {
    let deadline = Instant::now() + timeout;
    let mut pause = Duration::from_millis(50);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match call(left) {
            Err(e)
                if is_retriable(&e)
                    && context.failure().is_none()
                    && Instant::now() + pause < deadline =>
            {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_secs(1));
            }
            other => return other,
        }
    }
}

/// The error of a [`retrying`] call on `topic` that gave up with `error`: the fatal failure the
/// clients reported if there is one, else `error` with the last thing librdkafka reported (a
/// timeout alone says nothing of why).
fn gave_up(context: &Context, topic: &str, error: KafkaError) -> TransportError {
    if let Err(refused) = fatal(context, topic) {
        return refused;
    }
    match context.last_report() {
        Some(report) if is_retriable(&error) => broker(
            topic,
            format!("{error} (librdkafka last reported: {report})"),
        ),
        _ => broker(topic, error),
    }
}

/// The fatal failure the clients reported, as a broker error of `topic`.
pub(crate) fn fatal(context: &Context, topic: &str) -> Result<(), TransportError> {
    match context.failure() {
        Some(reason) => Err(TransportError::Broker {
            topic: topic.to_string(),
            reason: format!("the broker refused the connection: {reason}"),
        }),
        None => Ok(()),
    }
}

fn is_fenced(error: &KafkaError) -> bool {
    matches!(
        error.rdkafka_error_code(),
        Some(RDKafkaErrorCode::ProducerFenced | RDKafkaErrorCode::InvalidProducerEpoch)
    ) || error.to_string().contains("fenced")
}

impl KafkaTransport {
    /// Connects the clients (lazily: nothing is contacted until the first call).
    pub fn new(settings: KafkaSettings) -> Result<Self, KafkaError> {
        settings.validate()?;
        let context = Context::new(&settings);
        let consumer = settings.reader_config("connect-state-reader");
        Ok(Self {
            reader: Arc::new(Mutex::new(Reader::new(
                consumer.create_with_context(context.clone())?,
            ))),
            spare: Spare::default(),
            producer: std::sync::OnceLock::new(),
            transactional: tokio::sync::Mutex::new(None),
            admin: crate::admin::shared(&settings)?,
            _watch: crate::context::watch(&settings, &context)?,
            context,
            settings,
        })
    }

    /// `result` with every secret value (see [`crate::is_secret`]) replaced in its error's text:
    /// librdkafka's messages can echo a property's value.
    fn redact<T>(&self, result: Result<T, TransportError>) -> Result<T, TransportError> {
        result.map_err(|e| e.map_reason(|reason| self.settings.redact(reason)))
    }

    /// The failure that stops every call (a refused login, a failed TLS handshake), if one
    /// was reported: as the error of `topic`.
    fn check_fatal(&self, topic: &str) -> Result<(), TransportError> {
        fatal(&self.context, topic)
    }

    /// The plain producer (`acks=all`, Java's murmur2 partitioner, no idempotence, one request
    /// in flight), created on first use.
    fn plain_producer(&self, topic: &str) -> Result<&FutureProducer<Context>, TransportError> {
        if let Some(producer) = self.producer.get() {
            return Ok(producer);
        }
        let mut config = self.settings.client_config();
        config
            .set("acks", "all")
            .set("partitioner", "murmur2_random")
            .set("enable.idempotence", "false")
            .set("max.in.flight.requests.per.connection", "1")
            .set(
                "message.timeout.ms",
                self.settings.request_timeout.as_millis().to_string(),
            );
        let producer: FutureProducer<Context> = config
            .create_with_context(self.context.clone())
            .map_err(|e| broker(topic, e))?;
        // A concurrent first write may have set one already; either is fine.
        Ok(self.producer.get_or_init(|| producer))
    }

    /// The settings.
    pub fn settings(&self) -> &KafkaSettings {
        &self.settings
    }

    /// Runs a blocking consumer call off the async threads.
    async fn with_consumer<R: Send + 'static>(
        &self,
        topic: &str,
        f: impl FnOnce(&BaseConsumer<Context>) -> Result<R, TransportError> + Send + 'static,
    ) -> Result<R, TransportError> {
        self.with_reader(topic, move |reader| f(reader.consumer()))
            .await
    }

    /// Runs a blocking call on the reader off the async threads.
    async fn with_reader<R: Send + 'static>(
        &self,
        topic: &str,
        f: impl FnOnce(&mut Reader) -> Result<R, TransportError> + Send + 'static,
    ) -> Result<R, TransportError> {
        let reader = Arc::clone(&self.reader);
        tokio::task::spawn_blocking(move || {
            let mut guard = reader.lock().map_err(|_| TransportError::Broker {
                topic: String::new(),
                reason: "the consumer lock was poisoned by a panic".into(),
            })?;
            f(&mut guard)
        })
        .await
        .map_err(|e| broker(topic, e))?
    }

    fn partition_count(
        consumer: &BaseConsumer<Context>,
        topic: &str,
        timeout: Duration,
    ) -> Result<Option<i32>, TransportError> {
        let context = consumer.context().clone();
        let metadata = retrying(&context, timeout, |left| {
            consumer.fetch_metadata(Some(topic), left.min(METADATA_SLICE))
        })
        .map_err(|e| gave_up(&context, topic, e))?;
        let Some(t) = metadata.topics().iter().find(|t| t.name() == topic) else {
            return Ok(None);
        };
        match t.error() {
            Some(code)
                if RDKafkaErrorCode::from(code) == RDKafkaErrorCode::UnknownTopicOrPartition =>
            {
                Ok(None)
            }
            Some(code) => Err(broker(topic, RDKafkaErrorCode::from(code))),
            None if t.partitions().is_empty() => Ok(None),
            None => Ok(Some(t.partitions().len() as i32)),
        }
    }

    /// The transactional producer, initialized on first use (claiming write privileges).
    async fn transactional_producer(
        &self,
        topic: &str,
    ) -> Result<FutureProducer<Context>, TransportError> {
        let mut slot = self.transactional.lock().await;
        if let Some(p) = slot.as_ref() {
            return Ok(p.clone());
        }
        let id = self
            .settings
            .transactional_id
            .clone()
            .ok_or_else(|| TransportError::Broker {
                topic: topic.to_string(),
                reason: "a transactional write needs a transactional id".into(),
            })?;
        let mut config = self.settings.client_config();
        config
            .set("transactional.id", &id)
            .set("enable.idempotence", "true")
            .set("acks", "all")
            .set("partitioner", "murmur2_random");
        let producer: FutureProducer<Context> = config
            .create_with_context(self.context.clone())
            .map_err(|e| broker(topic, e))?;
        let timeout = self.settings.request_timeout;
        let init = producer.clone();
        tokio::task::spawn_blocking(move || init.init_transactions(timeout))
            .await
            .map_err(|e| broker(topic, e))?
            .map_err(|e| {
                if is_fenced(&e) {
                    TransportError::Fenced {
                        topic: topic.to_string(),
                    }
                } else {
                    broker(topic, e)
                }
            })?;
        *slot = Some(producer.clone());
        Ok(producer)
    }

    /// Queues every record, then waits for each delivery in order (Java's privileged send).
    async fn send_all(
        producer: &FutureProducer<Context>,
        topic: &str,
        records: &[ProducerRecord],
        timeout: Duration,
    ) -> Result<Vec<(i32, i64)>, (usize, KafkaError)> {
        let mut pending: Vec<DeliveryFuture> = Vec::with_capacity(records.len());
        for (i, r) in records.iter().enumerate() {
            let mut record = FutureRecord::<[u8], [u8]>::to(topic).key(r.key.as_slice());
            if let Some(value) = &r.value {
                record = record.payload(value.as_slice());
            }
            if let Some(p) = r.partition {
                record = record.partition(p);
            }
            match producer.send_result(record) {
                Ok(future) => pending.push(future),
                Err((e, _)) => return Err((i, e)),
            }
        }
        let mut offsets = Vec::with_capacity(records.len());
        for (i, future) in pending.into_iter().enumerate() {
            match tokio::time::timeout(timeout, future).await {
                Ok(Ok(Ok(delivery))) => offsets.push((delivery.partition, delivery.offset)),
                Ok(Ok(Err((e, _)))) => return Err((i, e)),
                Ok(Err(_)) => return Err((i, KafkaError::Canceled)),
                Err(_) => {
                    return Err((
                        i,
                        KafkaError::MessageProduction(RDKafkaErrorCode::MessageTimedOut),
                    ))
                }
            }
        }
        Ok(offsets)
    }

    async fn produce_transactional(
        &self,
        topic: &str,
        records: &[ProducerRecord],
    ) -> Result<Vec<(i32, i64)>, TransportError> {
        let producer = self.transactional_producer(topic).await?;
        let timeout = self.settings.request_timeout;
        let failed = |e: KafkaError| {
            if is_fenced(&e) {
                TransportError::Fenced {
                    topic: topic.to_string(),
                }
            } else {
                TransportError::ProduceFailed {
                    topic: topic.to_string(),
                    written: 0,
                    total: records.len(),
                    reason: e.to_string(),
                }
            }
        };
        let result = async {
            producer.begin_transaction().map_err(failed)?;
            let offsets = Self::send_all(&producer, topic, records, timeout)
                .await
                .map_err(|(_, e)| failed(e))?;
            let commit = producer.clone();
            tokio::task::spawn_blocking(move || commit.commit_transaction(timeout))
                .await
                .map_err(|e| broker(topic, e))?
                .map_err(failed)?;
            Ok(offsets)
        }
        .await;
        if result.is_err() {
            // Java drops the fenced producer on any failure: write privileges are gone until the
            // next transactional write initializes a new one.
            let abort = producer.clone();
            let _ = tokio::task::spawn_blocking(move || abort.abort_transaction(timeout)).await;
            *self.transactional.lock().await = None;
        }
        result
    }
}

/// The transport's operations before [`redact`](KafkaTransport::redact); the trait forwards to
/// them.
impl KafkaTransport {
    async fn describe_topic_unredacted(
        &self,
        topic: &str,
    ) -> Result<Option<TopicDescription>, TransportError> {
        let timeout = self.settings.request_timeout;
        let name = topic.to_string();
        let options = AdminOptions::new().request_timeout(Some(timeout));
        let resources = [ResourceSpecifier::Topic(topic)];
        // The configs are asked for now (the admin client sends the request at once, on its
        // own connection) and awaited after the partition count: on a fresh transport both
        // clients connect at the same time. A topic that does not exist, or a failure of the
        // consumer's request (which stops at a refused login, where the admin client's would
        // wait out its timeout), ends the call without the configs.
        let configs = self.admin.describe_configs(&resources, &options);
        let Some(partitions) = self
            .with_consumer(topic, move |c| Self::partition_count(c, &name, timeout))
            .await?
        else {
            return Ok(None);
        };
        let results = configs.await.map_err(|e| broker(topic, e))?;
        let mut cleanup_policy = String::from("delete");
        for result in results {
            let resource = result.map_err(|e| broker(topic, e))?;
            if let Some(entry) = resource.get("cleanup.policy") {
                cleanup_policy = entry.value.clone().unwrap_or_default();
            }
        }
        Ok(Some(TopicDescription {
            partitions,
            cleanup_policy,
        }))
    }

    async fn create_topic_unredacted(&self, topic: &NewTopic) -> Result<(), TransportError> {
        let replication = TopicReplication::Fixed(topic.replication_factor.map_or(-1, i32::from));
        let mut new_topic = KafkaNewTopic::new(&topic.name, topic.partitions, replication);
        for (key, value) in &topic.configs {
            new_topic = new_topic.set(key, value);
        }
        // Both timeouts: the operation's at the broker, and the request's (librdkafka's
        // default is `socket.timeout.ms`, 60 s, whatever the settings say).
        let timeout = Some(self.settings.request_timeout);
        let options = AdminOptions::new()
            .operation_timeout(timeout)
            .request_timeout(timeout);
        let results = self
            .admin
            .create_topics(&[new_topic], &options)
            .await
            .map_err(|e| broker(&topic.name, e))?;
        for result in results {
            match result {
                Ok(_) | Err((_, RDKafkaErrorCode::TopicAlreadyExists)) => {}
                Err((_, code)) => return Err(broker(&topic.name, code)),
            }
        }
        Ok(())
    }

    async fn end_offsets_unredacted(
        &self,
        topic: &str,
    ) -> Result<BTreeMap<i32, i64>, TransportError> {
        let timeout = self.settings.request_timeout;
        let name = topic.to_string();
        self.with_consumer(topic, move |c| {
            let partitions = Self::partition_count(c, &name, timeout)?.ok_or_else(|| {
                TransportError::UnknownTopic {
                    topic: name.clone(),
                }
            })?;
            // One ListOffsets request for every partition (the latest offset under the
            // consumer's isolation level: the high watermark, or the last stable offset).
            let mut latest = TopicPartitionList::new();
            for p in 0..partitions {
                latest
                    .add_partition_offset(&name, p, Offset::End)
                    .map_err(|e| broker(&name, e))?;
            }
            let context = c.context().clone();
            let answer = retrying(&context, timeout, |left| {
                let answer = c.offsets_for_times(latest.clone(), left.min(METADATA_SLICE))?;
                // A partition whose leader is moving answers with an error: ask again.
                match answer.elements().iter().find_map(|e| e.error().err()) {
                    Some(e) => Err(e),
                    None => Ok(answer),
                }
            })
            .map_err(|e| gave_up(&context, &name, e))?;
            let mut ends = BTreeMap::new();
            for element in answer.elements_for_topic(&name) {
                match element.offset() {
                    Offset::Offset(end) => ends.insert(element.partition(), end),
                    other => {
                        return Err(broker(
                            &name,
                            format!(
                                "partition {} has no end offset ({other:?})",
                                element.partition()
                            ),
                        ))
                    }
                };
            }
            Ok(ends)
        })
        .await
    }

    async fn fetch_unredacted(
        &self,
        topic: &str,
        partition: i32,
        from: i64,
        max_records: usize,
    ) -> Result<FetchedBatch, TransportError> {
        self.check_fatal(topic)?;
        let timeout = self.settings.request_timeout;
        let name = topic.to_string();
        let records = self.spare.take();
        self.with_reader(topic, move |reader| {
            reader.fetch(&name, partition, from, max_records.max(1), timeout, records)
        })
        .await
    }

    async fn produce_unredacted(
        &self,
        topic: &str,
        records: &[ProducerRecord],
        mode: ProduceMode,
    ) -> Result<Vec<(i32, i64)>, TransportError> {
        self.check_fatal(topic)?;
        match mode {
            ProduceMode::Transactional => self.produce_transactional(topic, records).await,
            ProduceMode::Plain => Self::send_all(
                self.plain_producer(topic)?,
                topic,
                records,
                self.settings.request_timeout,
            )
            .await
            .map_err(|(written, e)| TransportError::ProduceFailed {
                topic: topic.to_string(),
                written,
                total: records.len(),
                reason: e.to_string(),
            }),
        }
    }
}

#[async_trait]
impl Transport for KafkaTransport {
    async fn describe_topic(
        &self,
        topic: &str,
    ) -> Result<Option<TopicDescription>, TransportError> {
        self.redact(self.describe_topic_unredacted(topic).await)
    }

    async fn create_topic(&self, topic: &NewTopic) -> Result<(), TransportError> {
        self.redact(self.create_topic_unredacted(topic).await)
    }

    async fn end_offsets(&self, topic: &str) -> Result<BTreeMap<i32, i64>, TransportError> {
        self.redact(self.end_offsets_unredacted(topic).await)
    }

    async fn expect_fetches(&self, topic: &str, starts: &[(i32, i64)]) {
        let (name, starts) = (topic.to_string(), starts.to_vec());
        // A failure is the fetches' to report (they start the partitions over).
        let _ = self
            .with_reader(topic, move |reader| reader.expect(&name, &starts))
            .await;
    }

    async fn fetch(
        &self,
        topic: &str,
        partition: i32,
        from: i64,
        max_records: usize,
    ) -> Result<FetchedBatch, TransportError> {
        self.redact(
            self.fetch_unredacted(topic, partition, from, max_records)
                .await,
        )
    }

    fn recycle(&self, records: RecordBatch) {
        self.spare.keep(records);
    }

    async fn produce(
        &self,
        topic: &str,
        records: &[ProducerRecord],
        mode: ProduceMode,
    ) -> Result<Vec<(i32, i64)>, TransportError> {
        self.redact(self.produce_unredacted(topic, records, mode).await)
    }
}

/// The most batches [`Spare`] keeps: the one being applied, the one fetched ahead and the one
/// filling, with one to spare.
const SPARE_BATCHES: usize = 4;

/// The most key and value bytes the buffers [`Spare`] keeps may hold in all: batches that held
/// huge records are freed rather than kept for the transport's life (`serve` keeps its
/// transports). A default-size batch of the largest records the synthetic topics have (config
/// values of about 1 KB) holds about 5 MB.
const SPARE_BYTES: usize = 64 << 20;

/// The batches the store handed back ([`Transport::recycle`]), which the next fetches fill
/// again. Copying each record out of librdkafka into allocations of its own, freed on the
/// thread that applied it, cost two allocations and two frees per record and fresh pages for
/// the topic's whole size (the kernel zeroing them was a tenth of `inspect`'s CPU against a
/// broker); a read now goes round a few buffers.
#[derive(Default)]
struct Spare(Mutex<Vec<RecordBatch>>);

impl Spare {
    /// A batch to fill: a kept one, emptied, or a new one.
    fn take(&self) -> RecordBatch {
        let kept = self.0.lock().ok().and_then(|mut kept| kept.pop());
        let mut records = kept.unwrap_or_default();
        records.clear();
        records
    }

    /// Keeps `records` for a later fetch, unless [`SPARE_BATCHES`] are kept or its buffer
    /// would take the kept buffers past [`SPARE_BYTES`].
    fn keep(&self, records: RecordBatch) {
        if let Ok(mut kept) = self.0.lock() {
            let held: usize = kept.iter().map(RecordBatch::byte_capacity).sum();
            if kept.len() < SPARE_BATCHES && held + records.byte_capacity() <= SPARE_BYTES {
                kept.push(records);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::Record;

    fn batch(records: usize, value_len: usize) -> RecordBatch {
        let value = vec![b'v'; value_len];
        (0..records)
            .map(|offset| Record::new(b"key", Some(&value), offset as i64))
            .collect()
    }

    #[test]
    fn kept_batches_come_back_empty_with_their_memory() {
        let spare = Spare::default();
        assert!(spare.take().is_empty());
        let returned = batch(10, 100);
        let room = returned.byte_capacity();
        spare.keep(returned);
        let taken = spare.take();
        assert!(taken.is_empty());
        assert_eq!(taken.byte_capacity(), room);
        // Nothing else was kept.
        assert_eq!(spare.take().byte_capacity(), 0);
    }

    /// The batches `spare` gives back before it makes new ones, by their buffers' sizes.
    fn kept(spare: &Spare) -> Vec<usize> {
        std::iter::from_fn(|| Some(spare.take().byte_capacity()))
            .take_while(|&room| room > 0)
            .collect()
    }

    #[test]
    fn a_few_batches_are_kept() {
        let spare = Spare::default();
        for _ in 0..SPARE_BATCHES + 2 {
            spare.keep(batch(1, 10));
        }
        assert_eq!(kept(&spare).len(), SPARE_BATCHES);
    }

    #[test]
    fn the_kept_buffers_stay_within_their_bound_in_all() {
        let spare = Spare::default();
        let half = batch(1, SPARE_BYTES / 2);
        let room = half.byte_capacity();
        spare.keep(half.clone());
        // A second half-size buffer would pass the bound (with the key's bytes): freed.
        spare.keep(half);
        spare.keep(batch(1, SPARE_BYTES + 1));
        // A small one still fits.
        spare.keep(batch(1, 10));
        let mut rooms = kept(&spare);
        rooms.sort_unstable();
        assert_eq!(rooms.len(), 2, "{rooms:?}");
        assert_eq!(rooms[1], room);
    }
}
