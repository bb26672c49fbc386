//! [`MemoryTransport`]: the store's [`Transport`] over a shared [`MemoryCluster`].

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use async_trait::async_trait;
use connect_state_store::{
    FetchedBatch, NewTopic, ProduceMode, TopicDescription, Transport, TransportError,
};
use engine::ProducerRecord;

use crate::cluster::MemoryCluster;
use crate::config::TopicConfig;
use crate::error::LogError;
use crate::fault::{Faults, FetchFault, ProduceFault};
use crate::log::Isolation;
use crate::transaction::ProducerHandle;

/// One worker's connection to a shared [`MemoryCluster`]: a reader with an isolation level and
/// a fetch size cap, a plain or transactional writer, and a queue of faults to inject.
///
/// Build several over one `Arc<Mutex<MemoryCluster>>` to model several workers (a zombie leader
/// and a new leader with the same transactional id, or a writer and an independent reader).
/// Every call locks the cluster once and never holds the lock across an `.await`.
#[derive(Debug)]
pub struct MemoryTransport {
    cluster: Arc<Mutex<MemoryCluster>>,
    isolation: Isolation,
    max_fetch_records: Option<usize>,
    transactional_id: Option<String>,
    topic_defaults: TopicConfig,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    producer: Option<ProducerHandle>,
    faults: Faults,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while the lock was held (in a test assertion, say) leaves a model that is still
    // consistent: every mutation validates before it changes anything.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl MemoryTransport {
    /// A `read_uncommitted` transport without fetch cap, transactional id or faults, creating
    /// topics from [`TopicConfig::default`] settings.
    pub fn new(cluster: Arc<Mutex<MemoryCluster>>) -> Self {
        Self {
            cluster,
            isolation: Isolation::ReadUncommitted,
            max_fetch_records: None,
            transactional_id: None,
            topic_defaults: TopicConfig::default(),
            state: Mutex::new(State::default()),
        }
    }

    /// The same transport reading with `isolation`.
    #[must_use]
    pub fn with_isolation(mut self, isolation: Isolation) -> Self {
        self.isolation = isolation;
        self
    }

    /// The same transport returning at most `max` records per fetch, whatever the caller asks.
    #[must_use]
    pub fn with_max_fetch_records(mut self, max: usize) -> Self {
        self.max_fetch_records = Some(max);
        self
    }

    /// The same transport producing [`ProduceMode::Transactional`] batches as the producer of
    /// `transactional_id`. Without one, a transactional produce fails with a broker error.
    #[must_use]
    pub fn with_transactional_id(mut self, transactional_id: &str) -> Self {
        self.transactional_id = Some(transactional_id.to_owned());
        self
    }

    /// The same transport creating topics from `defaults` (segment size, retention, lag),
    /// overridden by each `NewTopic`'s partitions and configs.
    #[must_use]
    pub fn with_topic_defaults(mut self, defaults: TopicConfig) -> Self {
        self.topic_defaults = defaults;
        self
    }

    /// The shared cluster, to inspect, clean or advance its clock directly.
    pub fn cluster(&self) -> &Arc<Mutex<MemoryCluster>> {
        &self.cluster
    }

    /// The isolation level this transport reads with.
    pub fn isolation(&self) -> Isolation {
        self.isolation
    }

    /// Queues a fault for a later `produce` call of this transport (see [`ProduceFault`]).
    pub fn push_produce_fault(&self, fault: ProduceFault) {
        lock(&self.state).faults.produce.push_back(fault);
    }

    /// How many queued produce faults are still waiting for a `produce` call.
    pub fn pending_produce_faults(&self) -> usize {
        lock(&self.state).faults.produce.len()
    }

    /// Sets (or with `None` clears) the cleaning run before each fetch of this transport.
    pub fn set_fetch_fault(&self, fault: Option<FetchFault>) {
        lock(&self.state).faults.fetch = fault;
    }

    /// Initializes this transport's transactional producer now, as a new leader does when it
    /// takes over: every other producer of the same transactional id is fenced from here on
    /// and its open transaction aborted. A transactional produce does this itself (once) when
    /// it has no producer yet.
    ///
    /// # Errors
    ///
    /// [`LogError::InvalidTransactionState`] when no transactional id is configured.
    pub fn init_transactions(&self) -> Result<ProducerHandle, LogError> {
        let id =
            self.transactional_id
                .as_deref()
                .ok_or_else(|| LogError::InvalidTransactionState {
                    reason: "no transactional id configured".to_owned(),
                })?;
        let mut state = lock(&self.state);
        let handle = lock(&self.cluster).init_transactions(id);
        state.producer = Some(handle);
        Ok(handle)
    }

    fn produce_transactional(
        &self,
        state: &mut State,
        cluster: &mut MemoryCluster,
        topic: &str,
        records: &[ProducerRecord],
        fault: Option<ProduceFault>,
    ) -> Result<Vec<(i32, i64)>, TransportError> {
        let Some(id) = self.transactional_id.as_deref() else {
            return Err(TransportError::Broker {
                topic: topic.to_owned(),
                reason: "transactional produce without a transactional id".to_owned(),
            });
        };
        let producer = *state
            .producer
            .get_or_insert_with(|| cluster.init_transactions(id));
        let err = |e| to_transport(topic, e);
        cluster.begin_transaction(producer).map_err(err)?;
        let total = records.len();
        let (prefix, crash) = match fault {
            Some(ProduceFault::CrashAfter(k)) => (k.min(total), Some(false)),
            Some(ProduceFault::CrashInTransactionAfter(k)) => (k.min(total), Some(true)),
            Some(ProduceFault::Duplicate) | None => (total, None),
        };
        let placed = match cluster.send_transactional(producer, topic, &records[..prefix]) {
            Ok(placed) => placed,
            Err(e) => {
                // Nothing was appended; close the empty transaction so the next call can begin.
                let _ = cluster.abort_transaction(producer);
                return Err(err(e));
            }
        };
        match crash {
            None => {
                cluster.commit_transaction(producer).map_err(err)?;
                Ok(placed)
            }
            Some(leave_open) => {
                let reason = if leave_open {
                    // The producer died with its transaction open.
                    state.producer = None;
                    format!("injected crash after {prefix} records; transaction left open")
                } else {
                    cluster.abort_transaction(producer).map_err(err)?;
                    format!("injected crash after {prefix} records; transaction aborted")
                };
                Err(TransportError::ProduceFailed {
                    topic: topic.to_owned(),
                    written: 0,
                    total,
                    reason,
                })
            }
        }
    }
}

fn produce_plain(
    cluster: &mut MemoryCluster,
    topic: &str,
    records: &[ProducerRecord],
    fault: Option<ProduceFault>,
) -> Result<Vec<(i32, i64)>, TransportError> {
    let err = |e| to_transport(topic, e);
    match fault {
        None => cluster.send(topic, records).map_err(err),
        Some(ProduceFault::CrashAfter(k) | ProduceFault::CrashInTransactionAfter(k)) => {
            let written = k.min(records.len());
            cluster.send(topic, &records[..written]).map_err(err)?;
            Err(TransportError::ProduceFailed {
                topic: topic.to_owned(),
                written,
                total: records.len(),
                reason: format!("injected crash after {written} records"),
            })
        }
        Some(ProduceFault::Duplicate) => {
            let doubled: Vec<ProducerRecord> = records
                .iter()
                .flat_map(|r| [r.clone(), r.clone()])
                .collect();
            let placed = cluster.send(topic, &doubled).map_err(err)?;
            Ok(placed.into_iter().skip(1).step_by(2).collect())
        }
    }
}

/// The transport error for a refused cluster operation on `topic`.
fn to_transport(topic: &str, error: LogError) -> TransportError {
    match error {
        LogError::UnknownTopic { topic } => TransportError::UnknownTopic { topic },
        LogError::UnknownPartition { topic, partition } => {
            TransportError::UnknownPartition { topic, partition }
        }
        LogError::Fenced { .. } => TransportError::Fenced {
            topic: topic.to_owned(),
        },
        other => TransportError::Broker {
            topic: topic.to_owned(),
            reason: other.to_string(),
        },
    }
}

#[async_trait]
impl Transport for MemoryTransport {
    async fn describe_topic(
        &self,
        topic: &str,
    ) -> Result<Option<TopicDescription>, TransportError> {
        Ok(lock(&self.cluster)
            .describe_topic(topic)
            .map(|config| TopicDescription {
                partitions: config.partitions,
                cleanup_policy: config.cleanup_policy.clone(),
            }))
    }

    /// Creates the topic from this transport's topic defaults, `NewTopic.partitions` and the
    /// `cleanup.policy`, `delete.retention.ms` and `min.compaction.lag.ms` configs. An existing
    /// topic is left unchanged and reported as success, as Java's `TopicAdmin` treats
    /// `TopicExistsException`.
    async fn create_topic(&self, topic: &NewTopic) -> Result<(), TransportError> {
        let mut config = self.topic_defaults.clone();
        config.partitions = topic.partitions;
        let created = config
            .with_kafka_configs(&topic.configs)
            .and_then(|config| lock(&self.cluster).create_topic(&topic.name, config));
        match created {
            Ok(()) | Err(LogError::TopicExists { .. }) => Ok(()),
            Err(e) => Err(to_transport(&topic.name, e)),
        }
    }

    async fn end_offsets(&self, topic: &str) -> Result<BTreeMap<i32, i64>, TransportError> {
        lock(&self.cluster)
            .end_offsets(topic, self.isolation)
            .map_err(|e| to_transport(topic, e))
    }

    /// Runs the fetch fault's cleaning first, then fetches at most
    /// `min(max_records, max_fetch_records)` records with this transport's isolation level.
    async fn fetch(
        &self,
        topic: &str,
        partition: i32,
        from: i64,
        max_records: usize,
    ) -> Result<FetchedBatch, TransportError> {
        let fault = lock(&self.state).faults.fetch;
        let mut cluster = lock(&self.cluster);
        // An unknown topic is reported by the fetch itself just below.
        let _ = match fault {
            Some(FetchFault::CleanAll) => cluster.clean_all(topic),
            Some(FetchFault::CleanRandomly { probability }) => {
                cluster.clean_random(topic, probability)
            }
            None => Ok(Vec::new()),
        };
        let max = self
            .max_fetch_records
            .map_or(max_records, |cap| cap.min(max_records));
        cluster
            .fetch(topic, partition, from, max, self.isolation)
            .map_err(|e| to_transport(topic, e))
    }

    async fn produce(
        &self,
        topic: &str,
        records: &[ProducerRecord],
        mode: ProduceMode,
    ) -> Result<Vec<(i32, i64)>, TransportError> {
        let mut state = lock(&self.state);
        let fault = state.faults.produce.pop_front();
        let mut cluster = lock(&self.cluster);
        match mode {
            ProduceMode::Plain => produce_plain(&mut cluster, topic, records, fault),
            ProduceMode::Transactional => {
                self.produce_transactional(&mut state, &mut cluster, topic, records, fault)
            }
        }
    }
}
