//! connect-state-store: the Connect stores, written once over any [`Transport`].
//!
//! A [`Store`] owns one topic machine of the core and drives it the way Java's `KafkaBasedLog`
//! drives its consumer:
//!
//! * [`Store::start`] makes sure the topic exists and is valid (creating it if asked, refusing a
//!   non-compacted topic or a multi-partition config topic with Java's messages), reads every
//!   partition to the end offsets sampled at that moment **without events**, then marks the
//!   machine caught up;
//! * [`Store::read_to_end`] reads on to the end offsets sampled now and returns the events;
//! * [`Store::write`] produces records and, when asked, reads to the end, under one time budget
//!   per call; [`ConfigStore::execute`] runs a config [`WritePlan`] step by step exactly as
//!   Java's `KafkaConfigBackingStore` does.
//!
//! ```text
//!   Store<M: TopicMachine, T: Transport>
//!     start ──► describe/create topic ──► fetch every partition to its end ──► mark_caught_up
//!     read_to_end ──► fetch ──► M::handle_record ──► M::poll_event ──► Vec<M::Event>
//!     write / execute(plan) ──► produce ──► read_to_end      (one deadline per call)
//! ```

mod batch;
mod partition;
mod read_ahead;
mod secrets;
mod transport;

use core::time::Duration;
use std::collections::BTreeMap;
use std::sync::Arc;

use engine::config::ConfigLog;
use engine::plan::{ProducerKind, StepAction, WritePlan};
use engine::{ProducerRecord, RecordError, TopicMachine};

pub use batch::{Iter as RecordBatchIter, RecordBatch};
pub use partition::PartitionReader;
use read_ahead::{Fetcher, Prefetch};
pub use secrets::is_secret;
pub use transport::{
    FetchedBatch, NewTopic, ProduceMode, TopicDescription, Transport, TransportError,
};

/// Java's `READ_WRITE_TOTAL_TIMEOUT_MS`: the default budget of one write call.
pub const DEFAULT_WRITE_BUDGET: Duration =
    Duration::from_millis(engine::config::write::WRITE_TIMEOUT_MS);

pub use engine::TopicKind;

/// What a worker's settings say of each internal topic: the store's creation defaults and
/// the words of Java's validation messages.
pub trait TopicDefaults {
    /// The worker setting that names the topic.
    fn setting(self) -> &'static str;
    /// What the topic holds, in Java's error messages.
    fn purpose(self) -> &'static str;
    /// Java's default partition count.
    fn default_partitions(self) -> i32;
}

impl TopicDefaults for TopicKind {
    fn setting(self) -> &'static str {
        match self {
            Self::Config => "config.storage.topic",
            Self::Status => "status.storage.topic",
            Self::Offsets => "offset.storage.topic",
        }
    }

    fn purpose(self) -> &'static str {
        match self {
            Self::Config => "connector configurations",
            Self::Status => "connector and task statuses",
            Self::Offsets => "source connector offsets",
        }
    }

    fn default_partitions(self) -> i32 {
        match self {
            Self::Config => 1,
            Self::Status => 5,
            Self::Offsets => 25,
        }
    }
}

/// A sink for events nobody reads (a start-up read's, when the caller wants none).
struct Dropped;

impl<E> Extend<E> for Dropped {
    fn extend<I: IntoIterator<Item = E>>(&mut self, events: I) {
        events.into_iter().for_each(drop);
    }
}

/// How a store reaches and checks its topic.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreSettings {
    /// The topic name.
    pub topic: String,
    /// Which of the internal topics it is.
    pub kind: TopicKind,
    /// Create the topic when it is missing (as Connect does); otherwise a missing topic is an
    /// error.
    pub create_if_missing: bool,
    /// Partitions for a created topic (ignored for the config topic, which always has 1).
    pub partitions: Option<i32>,
    /// Replication factor for a created topic (`None` = the broker's default).
    pub replication_factor: Option<i16>,
    /// Extra topic settings for a created topic (`cleanup.policy` is always `compact`).
    pub topic_configs: BTreeMap<String, String>,
    /// Most records asked for per fetch.
    pub fetch_max_records: usize,
    /// The budget of one write call.
    pub write_budget: Duration,
}

impl StoreSettings {
    /// Settings with Connect's defaults for `topic`, which is the `kind` topic.
    pub fn new(topic: impl Into<String>, kind: TopicKind) -> Self {
        Self {
            topic: topic.into(),
            kind,
            create_if_missing: true,
            partitions: None,
            replication_factor: None,
            topic_configs: BTreeMap::new(),
            fetch_max_records: 5_000,
            write_budget: DEFAULT_WRITE_BUDGET,
        }
    }
}

/// Why a store operation failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The transport failed.
    #[error(transparent)]
    Transport(#[from] TransportError),
    /// The topic is missing and creating it was not allowed.
    #[error("topic '{topic}' supplied via the '{setting}' property does not exist (create it, or allow creation)")]
    MissingTopic {
        /// The topic.
        topic: String,
        /// The worker setting naming it.
        setting: &'static str,
    },
    /// The topic exists but Java would refuse it; the message is Java's.
    #[error("{0}")]
    InvalidTopic(String),
    /// A write call ran out of its budget; the message is Java's for the step that was running.
    #[error("{message}: timed out after {budget_ms} ms")]
    Timeout {
        /// Java's message for the step.
        message: String,
        /// The budget.
        budget_ms: u128,
    },
    /// A write step failed; the message is Java's for that step.
    #[error("{message}: {cause}")]
    WriteFailed {
        /// Java's message for the step.
        message: String,
        /// What failed.
        cause: TransportError,
    },
    /// The transport returned a record the machine refused (a negative offset or partition).
    #[error("the transport returned an invalid record: {0}")]
    InvalidRecord(RecordError),
    /// A partition ends below the offset already read from it: the topic was deleted and
    /// created again (or truncated) under the reader, whose state no longer describes it.
    #[error(
        "partition {partition} of {topic} now ends at offset {end}, below offset {position} already \
         read: the topic was deleted and created again, or truncated; its state must be read anew"
    )]
    Truncated {
        /// The topic.
        topic: String,
        /// The partition.
        partition: i32,
        /// Where reading stood.
        position: i64,
        /// The partition's end offset now.
        end: i64,
    },
    /// A partition did not progress towards its end offset.
    #[error(
        "partition {partition} of {topic} stopped at offset {position} before its end offset {end}"
    )]
    Stalled {
        /// The topic.
        topic: String,
        /// The partition.
        partition: i32,
        /// Where reading stopped.
        position: i64,
        /// The end offset it should reach.
        end: i64,
    },
}

/// Where a read stands after one fetched batch, for progress displays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadProgress<'a> {
    /// The topic.
    pub topic: &'a str,
    /// The partition the batch came from.
    pub partition: i32,
    /// The next offset to fetch in that partition.
    pub position: i64,
    /// The end offset the read is heading for in that partition.
    pub end: i64,
    /// Records in the batch.
    pub records: usize,
}

/// Called after every fetched batch (see [`Store::set_progress`]).
pub type ProgressObserver = Box<dyn FnMut(&ReadProgress<'_>) + Send>;

/// One topic's store: the core machine `M` fed from transport `T`.
pub struct Store<M, T: ?Sized> {
    settings: StoreSettings,
    transport: Arc<T>,
    machine: M,
    /// Next offset to fetch per partition; ahead of the machine's own positions when the broker
    /// skipped gaps (compaction, transaction markers).
    positions: BTreeMap<i32, i64>,
    progress: Option<ProgressObserver>,
}

/// The next offset to read of `partition`: where the store fetched past, or the machine's own
/// position, whichever is further.
fn position_of<M: TopicMachine>(
    positions: &BTreeMap<i32, i64>,
    machine: &M,
    partition: i32,
) -> i64 {
    positions
        .get(&partition)
        .copied()
        .unwrap_or(0)
        .max(machine.next_fetch_offset(partition))
}

/// The first partition after `last` (in partition order, going round) whose position is below
/// its end, with that position and end: the partition a read fetches next.
fn next_behind(
    ends: &BTreeMap<i32, i64>,
    last: Option<i32>,
    position: impl Fn(i32) -> i64,
) -> Option<(i32, i64, i64)> {
    use core::ops::Bound::{Excluded, Unbounded};
    let (after, upto) = match last {
        Some(p) => (ends.range((Excluded(p), Unbounded)), ends.range(..=p)),
        // Nothing before the first partition: the second range is empty.
        None => (ends.range(..), ends.range((Unbounded, Excluded(i32::MIN)))),
    };
    after
        .chain(upto)
        .map(|(&p, &end)| (p, position(p), end))
        .find(|&(_, at, end)| at < end)
}

impl<M: TopicMachine, T: Transport + ?Sized> Store<M, T> {
    /// A store over `machine` (a new one, or one restored from a checkpoint).
    pub fn new(settings: StoreSettings, transport: Arc<T>, machine: M) -> Self {
        Self {
            settings,
            transport,
            machine,
            positions: BTreeMap::new(),
            progress: None,
        }
    }

    /// Reports every fetched batch of later reads to `observer` (a progress bar, a log line).
    /// Replaces any observer set before.
    pub fn set_progress(&mut self, observer: ProgressObserver) {
        self.progress = Some(observer);
    }

    /// The machine, to take snapshots and diagnostics.
    pub fn machine(&self) -> &M {
        &self.machine
    }

    /// The machine, for its write-side bookkeeping (e.g. `StatusLog::prepare_put`, which
    /// records sequence numbers as Java's store does). Feed it records only through the store.
    pub fn machine_mut(&mut self) -> &mut M {
        &mut self.machine
    }

    /// Gives the machine back (e.g. after a one-off read), ending the store.
    pub fn into_machine(self) -> M {
        self.machine
    }

    /// The settings.
    pub fn settings(&self) -> &StoreSettings {
        &self.settings
    }

    /// Ensures the topic, reads it to the end and marks the machine caught up. Call once,
    /// before anything else. What the machine queued while it read (nothing, for a machine
    /// that reports only once caught up, as Java's stores do) is dropped: see
    /// [`start_into`](Self::start_into).
    pub async fn start(&mut self) -> Result<(), StoreError> {
        self.start_into(&mut Dropped).await
    }

    /// [`start`](Self::start), handing every event the machine queues while it reads to
    /// `events` as it is drained (a machine that reports from its first record, such as a
    /// history, over a large topic: its events need not be held at once).
    pub async fn start_into(
        &mut self,
        events: &mut impl Extend<M::Event>,
    ) -> Result<(), StoreError> {
        self.ensure_topic().await?;
        self.read_to_end_into(events).await?;
        self.machine.mark_caught_up();
        Ok(())
    }

    async fn ensure_topic(&self) -> Result<(), StoreError> {
        let s = &self.settings;
        let description = match self.transport.describe_topic(&s.topic).await? {
            Some(d) => d,
            None if s.create_if_missing => {
                let mut configs = s.topic_configs.clone();
                configs.insert("cleanup.policy".into(), "compact".into());
                let partitions = match s.kind {
                    TopicKind::Config => 1,
                    role => s.partitions.unwrap_or(role.default_partitions()),
                };
                self.transport
                    .create_topic(&NewTopic {
                        name: s.topic.clone(),
                        partitions,
                        replication_factor: s.replication_factor,
                        configs,
                    })
                    .await?;
                // A new topic takes a moment to show in the brokers' metadata (longer right
                // after a broker restart), and its configs may take a moment more: a broker
                // whose config cache has not caught up with the new topic describes it with the
                // defaults (`cleanup.policy=delete`; seen once in CI against Apache Kafka
                // 4.4.0). Look again until it shows as created, within the write budget; at the
                // deadline, what the broker shows is checked as any existing topic's.
                let deadline = tokio::time::Instant::now() + s.write_budget;
                loop {
                    let found = self.transport.describe_topic(&s.topic).await?;
                    let expired = tokio::time::Instant::now() >= deadline;
                    match found {
                        Some(d) if expired || validate_topic(&s.topic, s.kind, &d).is_ok() => {
                            break d
                        }
                        None if expired => {
                            return Err(StoreError::MissingTopic {
                                topic: s.topic.clone(),
                                setting: s.kind.setting(),
                            });
                        }
                        _ => tokio::time::sleep(std::time::Duration::from_millis(100)).await,
                    }
                }
            }
            None => {
                return Err(StoreError::MissingTopic {
                    topic: s.topic.clone(),
                    setting: s.kind.setting(),
                })
            }
        };
        validate_topic(&s.topic, s.kind, &description)
    }

    /// Reads every partition to the end offsets sampled now, applying each record, and returns
    /// the events (none before [`start`](Self::start) finished).
    ///
    /// While the machine applies a batch, the next batch of the same partition is already being
    /// fetched (a transport that reads on another thread, as the Kafka one does, reads it
    /// meanwhile); it is used only if the read goes on where it starts, and dropped otherwise.
    /// When several partitions are behind their ends, the transport is told where each read
    /// starts before the first fetch ([`Transport::expect_fetches`]), so that it can read them
    /// all at once.
    pub async fn read_to_end(&mut self) -> Result<Vec<M::Event>, StoreError> {
        let mut events = Vec::new();
        self.read_to_end_into(&mut events).await?;
        Ok(events)
    }

    /// [`read_to_end`](Self::read_to_end), handing each event to `events` as it is drained.
    pub async fn read_to_end_into(
        &mut self,
        events: &mut impl Extend<M::Event>,
    ) -> Result<(), StoreError> {
        let ends = self.transport.end_offsets(&self.settings.topic).await?;
        for (&partition, &end) in &ends {
            let position = self.position(partition);
            if end < position {
                return Err(StoreError::Truncated {
                    topic: self.settings.topic.clone(),
                    partition,
                    position,
                    end,
                });
            }
        }
        // Several partitions to read: the transport may start reading them all at once.
        let starts: Vec<(i32, i64)> = ends
            .iter()
            .map(|(&partition, &end)| (partition, self.position(partition), end))
            .filter(|&(_, position, end)| position < end)
            .map(|(partition, position, _)| (partition, position))
            .collect();
        if starts.len() > 1 {
            self.transport
                .expect_fetches(&self.settings.topic, &starts)
                .await;
        }
        let Self {
            settings,
            transport,
            machine,
            positions,
            progress,
        } = self;
        let topic = settings.topic.as_str();
        let fetcher = Fetcher {
            transport: &**transport,
            topic,
            max_records: settings.fetch_max_records,
        };
        let mut ahead: Option<Prefetch<'_>> = None;
        let mut last = None;
        // Partitions in turn, one batch each, from the one after the last fetched.
        while let Some((partition, position, end)) =
            next_behind(&ends, last, |p| position_of(positions, machine, p))
        {
            last = Some(partition);
            let batch = match ahead.take() {
                Some(p) if p.partition == partition && p.from == position => p.finish().await,
                _ => fetcher.fetch(partition, position, end).await,
            }?;
            // Where the read goes next if this batch moves the partition to its next offset.
            let guess = next_behind(&ends, last, |p| {
                let at = position_of(positions, machine, p);
                if p == partition {
                    at.max(batch.next_offset)
                } else {
                    at
                }
            });
            if let Some((partition, from, end)) = guess {
                ahead = Some(Prefetch::start(&fetcher, partition, from, end));
            }
            for record in &batch.records {
                machine
                    .handle_record(record)
                    .map_err(StoreError::InvalidRecord)?;
                events.extend(core::iter::from_fn(|| machine.poll_event()));
            }
            let next = batch.next_offset.max(machine.next_fetch_offset(partition));
            let next = partition::advance(topic, partition, position, end, next)?;
            positions.insert(partition, next);
            if let Some(observer) = progress.as_mut() {
                observer(&ReadProgress {
                    topic,
                    partition,
                    position: next,
                    end,
                    records: batch.records.len(),
                });
            }
            transport.recycle(batch.records);
        }
        Ok(())
    }

    /// The next offset to read of every partition read so far (what the store fetched past,
    /// or the machine's own position, whichever is further).
    pub fn next_offsets(&self) -> BTreeMap<i32, i64> {
        self.positions
            .keys()
            .map(|&partition| (partition, self.position(partition)))
            .collect()
    }

    fn position(&self, partition: i32) -> i64 {
        position_of(&self.positions, &self.machine, partition)
    }

    /// Produces `records` and, if `read_back`, reads to the end, all within the write budget:
    /// [`execute`](Self::execute) of a one-batch plan. `error_message` is what the failure
    /// reports (Java's per-method message); a transactional `mode` sends the batch as one
    /// transaction.
    pub async fn write(
        &mut self,
        records: &[ProducerRecord],
        mode: ProduceMode,
        read_back: bool,
        error_message: &str,
    ) -> Result<Vec<M::Event>, StoreError> {
        let mut plan = WritePlan::single(records.to_vec(), read_back, error_message.to_string());
        let fenced = mode == ProduceMode::Transactional;
        if fenced {
            for step in &mut plan.steps {
                if let StepAction::Produce { producer, .. } = &mut step.action {
                    *producer = ProducerKind::Privileged;
                }
            }
        }
        self.execute(&plan, fenced).await
    }

    /// Runs a write plan as Java's stores do: each step in order (privileged batches as one
    /// transaction when `fenced`, ordinary batches as plain sends, reads to the end between
    /// them), all under one budget. On failure or timeout the error carries Java's message for
    /// the step that was running. Returns the events read back.
    pub async fn execute(
        &mut self,
        plan: &WritePlan,
        fenced: bool,
    ) -> Result<Vec<M::Event>, StoreError> {
        let budget = self.settings.write_budget;
        let topic = self.settings.topic.clone();
        let transport = Arc::clone(&self.transport);
        let mut current = String::new();
        let result = {
            let current = &mut current;
            let work = async {
                let mut events = Vec::new();
                for step in &plan.steps {
                    current.clear();
                    current.push_str(&step.error_message);
                    match &step.action {
                        StepAction::Produce { producer, records } => {
                            let mode = match producer {
                                ProducerKind::Privileged if fenced => ProduceMode::Transactional,
                                _ => ProduceMode::Plain,
                            };
                            transport
                                .produce(&topic, records, mode)
                                .await
                                .map_err(|cause| StoreError::WriteFailed {
                                    message: step.error_message.to_string(),
                                    cause,
                                })?;
                        }
                        StepAction::ReadToEnd => events.extend(self.read_to_end().await?),
                    }
                }
                Ok(events)
            };
            tokio::time::timeout(budget, work).await
        };
        match result {
            Ok(result) => result,
            Err(_) => Err(StoreError::Timeout {
                message: current,
                budget_ms: budget.as_millis(),
            }),
        }
    }
}

/// Java's start-up checks of an existing topic: compact-only cleanup policy, and a single
/// partition for the config topic.
pub fn validate_topic(
    topic: &str,
    kind: TopicKind,
    description: &TopicDescription,
) -> Result<(), StoreError> {
    let policies: std::collections::BTreeSet<&str> = description
        .cleanup_policy
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect();
    if policies != std::collections::BTreeSet::from(["compact"]) {
        let found: Vec<&str> = policies.into_iter().collect();
        return Err(StoreError::InvalidTopic(format!(
            "Topic '{topic}' supplied via the '{setting}' property is required to have \
             'cleanup.policy=compact' to guarantee consistency and durability of {purpose}, but \
             found the topic currently has 'cleanup.policy={found}'. Continuing would likely \
             result in eventually losing {purpose} and problems restarting this Connect cluster \
             in the future. Change the '{setting}' property in the Connect worker configurations \
             to use a topic with 'cleanup.policy=compact'.",
            setting = kind.setting(),
            purpose = kind.purpose(),
            found = found.join(","),
        )));
    }
    if kind == TopicKind::Config && description.partitions > 1 {
        return Err(StoreError::InvalidTopic(format!(
            "Topic '{topic}' supplied via the 'config.storage.topic' property is required to have \
             a single partition in order to guarantee consistency of connector configurations, \
             but found {} partitions.",
            description.partitions
        )));
    }
    Ok(())
}

/// The config topic's store.
pub type ConfigStore<T> = Store<ConfigLog, T>;
