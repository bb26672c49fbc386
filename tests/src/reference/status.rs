//! The status topic's reference: what each generated key names, the naive caches folded record
//! by record (spec §3.1), the KIP-558 active topics, and the generators and harnesses that run
//! real status stores over the simulator and check them against it.

use std::collections::{BTreeMap, BTreeSet};

use connect_state_memory::{FetchFault, MemoryCluster, MemoryTransport};
use connect_state_ops::rest::Answer;
use connect_state_store::{Store, TopicKind};
use engine::offsets::default_partition;
use engine::status::write::{topic_status_record, topic_tombstone};
use engine::status::{
    Status, StatusEvent, StatusLog, StatusSnapshot, StatusState, StatusUpdate, TopicStatus,
    TopicTracking, TopicTrackingError,
};
use engine::OwnedRecord;
use engine::ProducerRecord;
use proptest::prelude::*;

use crate::sim::{LogCapture, Recording, Sim, SimSpec};

use super::check_consumed;

/// The status topic's name in the simulator.
pub const STATUS_TOPIC: &str = "connect-status";
/// Java's default (`status.storage.partitions`).
pub const STATUS_PARTITIONS: i32 = 5;

/// Status connectors: one plain, one with `-` inside, one ending in `-` (its task keys contain
/// `--`, which Java's `split("-")` turns into an empty part, spec §1.3).
pub const CONNECTORS: [&str; 3] = ["orders", "my-jdbc-source", "edge-"];
/// Tasks per connector (`0..TASKS`).
pub const TASKS: i32 = 3;
/// Topics the connectors report as active (one with a dot).
pub const TOPICS: [&str; 3] = ["orders-topic", "payments", "t.1"];
/// Worker ids statuses name.
pub const WORKERS: [&str; 2] = ["w1:8083", "10.0.0.2:8083"];
/// A Java stack trace with everything Jackson escapes (quote, newline, tab, a C0 control).
pub const TRACE: &str =
    "org.apache.kafka.connect.errors.ConnectException: \"boom\"\n\tat X.y(X.java:1)\u{1f}\n";

// ---------------------------------------------------------------------------------------------
// The status reference.

/// What a status key names (built from the generated names, not parsed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Key {
    /// `status-connector-<name>`.
    Connector(String),
    /// `status-task-<connector>-<n>`.
    Task(String, i32),
    /// `status-topic-<topic>:connector-<connector>`.
    Topic {
        /// The topic's name.
        topic: String,
        /// The connector using it.
        connector: String,
    },
}

/// Every key the generators can write, formatted by hand (spec §1), to what it names.
pub fn status_keys() -> BTreeMap<Vec<u8>, Key> {
    let mut keys = BTreeMap::new();
    for c in CONNECTORS {
        keys.insert(
            format!("status-connector-{c}").into_bytes(),
            Key::Connector(c.into()),
        );
        for n in 0..TASKS {
            keys.insert(
                format!("status-task-{c}-{n}").into_bytes(),
                Key::Task(c.into(), n),
            );
        }
        for t in TOPICS {
            keys.insert(
                format!("status-topic-{t}:connector-{c}").into_bytes(),
                Key::Topic {
                    topic: t.into(),
                    connector: c.into(),
                },
            );
        }
    }
    keys
}

/// A connector or task value, parsed with serde_json (spec §2.1).
pub fn parse_status(bytes: &[u8]) -> Status {
    let v: serde_json::Value = serde_json::from_slice(bytes).expect("status JSON");
    Status {
        state: StatusState::from_java_name(v["state"].as_str().expect("state"))
            .expect("a state name"),
        trace: v["trace"].as_str().map(String::from),
        worker_id: v["worker_id"].as_str().map(String::from),
        generation: i32::try_from(v["generation"].as_i64().expect("generation"))
            .expect("an int generation"),
        version: None,
    }
}

/// A topic status value (spec §2.2).
pub fn parse_topic(bytes: &[u8]) -> TopicStatus {
    let v: serde_json::Value = serde_json::from_slice(bytes).expect("topic JSON");
    let t = &v["topic"];
    TopicStatus {
        name: t["name"].as_str().expect("name").into(),
        connector: t["connector"].as_str().expect("connector").into(),
        task: i32::try_from(t["task"].as_i64().expect("task")).expect("int"),
        discover_timestamp: t["discoverTimestamp"].as_i64().expect("timestamp"),
    }
}

/// The naive status caches (spec §3.1): plain maps, folded record by record.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct StatusModel {
    /// Connector statuses by name.
    pub connectors: BTreeMap<String, Status>,
    /// Task statuses by connector and task number.
    pub tasks: BTreeMap<(String, i32), Status>,
    /// Rows stay when their last topic is tombstoned, as Java's inner maps do.
    pub topics: BTreeMap<String, BTreeMap<String, TopicStatus>>,
}

impl StatusModel {
    /// Folds one record of a generated `key` (`None` is a tombstone) as Java's store does.
    pub fn apply(&mut self, keys: &BTreeMap<Vec<u8>, Key>, key: &[u8], value: Option<&[u8]>) {
        let name = keys.get(key).expect("a generated key");
        match (name, value) {
            (Key::Connector(c), None) => {
                self.connectors.remove(c);
                self.tasks.retain(|(tc, _), _| tc != c);
            }
            (Key::Connector(c), Some(v)) => {
                self.connectors.insert(c.clone(), parse_status(v));
            }
            (Key::Task(c, n), None) => {
                self.tasks.remove(&(c.clone(), *n));
            }
            (Key::Task(c, n), Some(v)) => {
                let incoming = parse_status(v);
                let id = (c.clone(), *n);
                // KAFKA-12525: a task UNASSIGNED is stale over a cached RUNNING of a generation at
                // least as new, whatever the workers.
                let stale = incoming.state == StatusState::Unassigned
                    && self.tasks.get(&id).is_some_and(|cached| {
                        cached.state == StatusState::Running
                            && cached.generation >= incoming.generation
                    });
                if !stale {
                    self.tasks.insert(id, incoming);
                }
            }
            (Key::Topic { topic, connector }, None) => {
                if let Some(row) = self.topics.get_mut(connector) {
                    row.remove(topic);
                }
            }
            (Key::Topic { topic, connector }, Some(v)) => {
                self.topics
                    .entry(connector.clone())
                    .or_default()
                    .insert(topic.clone(), parse_topic(v));
            }
        }
    }

    /// The model a real snapshot amounts to, to compare with a fold.
    pub fn of(s: &StatusSnapshot) -> Self {
        Self {
            connectors: s
                .connectors()
                .map(|(c, st)| (c.to_owned(), st.clone()))
                .collect(),
            tasks: s
                .all_tasks()
                .map(|(c, n, st)| ((c.to_owned(), n), st.clone()))
                .collect(),
            topics: s
                .topic_connectors()
                .map(|c| {
                    let row = s.topics(c).map(|(t, ts)| (t.to_owned(), ts.clone()));
                    (c.to_owned(), row.collect())
                })
                .collect(),
        }
    }

    /// The model of `records` folded in order from empty caches.
    pub fn fold<'a>(
        keys: &BTreeMap<Vec<u8>, Key>,
        records: impl IntoIterator<Item = (&'a [u8], Option<&'a [u8]>)>,
    ) -> Self {
        let mut model = Self::default();
        for (k, v) in records {
            model.apply(keys, k, v);
        }
        model
    }
}

// ---------------------------------------------------------------------------------------------
// Property 1: status, last write wins per key except the stale-UNASSIGNED rule.

/// One generated operation on the status topic.
#[derive(Debug, Clone)]
pub enum StatusOp {
    /// A connector (`task: None`) or task status; `Destroyed` writes a tombstone. UNASSIGNED and
    /// FAILED go through `putSafe`, the rest through `put` (the herder's table, spec §3.4).
    Put {
        /// Index into [`CONNECTORS`].
        connector: usize,
        /// The task number, or `None` for the connector itself.
        task: Option<i32>,
        /// The state written.
        state: StatusState,
        /// Index into [`WORKERS`].
        worker: usize,
        /// The worker's generation.
        generation: i32,
    },
    /// A KIP-558 topic status.
    Topic {
        /// Index into [`CONNECTORS`].
        connector: usize,
        /// Index into [`TOPICS`].
        topic: usize,
        /// The task that saw the topic.
        task: i32,
    },
    /// A topic status tombstone.
    TopicTombstone {
        /// Index into [`CONNECTORS`].
        connector: usize,
        /// Index into [`TOPICS`].
        topic: usize,
    },
    /// Java's `onDeletion(c)` from the writer's caches: task tombstones, then the connector's.
    DeleteConnector {
        /// Index into [`CONNECTORS`].
        connector: usize,
    },
    /// Roll a partition's active segment (makes it cleanable).
    Roll {
        /// The partition rolled.
        partition: i32,
    },
    /// A default cleaning pass of every partition.
    Clean,
    /// The reader reads to the end (if it has started).
    ReaderCatchUp,
}

/// A status operation and how its records are produced.
#[derive(Debug, Clone)]
pub struct StatusStep {
    /// What is written.
    pub op: StatusOp,
    /// Whether every record is appended twice (a producer retry).
    pub duplicate: bool,
    /// Whether the writer reads its own records back before the next step.
    pub read_back: bool,
}

/// A generated status run: the steps, when the reader starts, and how the simulator fetches
/// and cleans.
#[derive(Debug, Clone)]
pub struct StatusRun {
    /// The simulator's seed.
    pub seed: u64,
    /// The writer's steps, in order.
    pub steps: Vec<StatusStep>,
    /// The step before which the reader starts.
    pub reader_start: usize,
    /// Records per fetch.
    pub fetch_size: usize,
    /// How the cleaner interferes with fetches.
    pub fetch_fault: FetchFault,
    /// Records per segment.
    pub segment_records: u64,
}

/// How the cleaner interferes with a fetch: mostly at random, sometimes cleaning everything.
pub fn fetch_fault() -> impl Strategy<Value = FetchFault> {
    prop_oneof![
        4 => (0.0f64..1.0).prop_map(|probability| FetchFault::CleanRandomly { probability }),
        1 => Just(FetchFault::CleanAll),
    ]
}

/// A state to write, `DESTROYED` (a tombstone) rarely.
pub fn status_state() -> impl Strategy<Value = StatusState> {
    let live: Vec<StatusState> = StatusState::ALL
        .into_iter()
        .filter(|s| *s != StatusState::Destroyed)
        .collect();
    prop_oneof![
        10 => prop::sample::select(live),
        1 => Just(StatusState::Destroyed),
    ]
}

/// One status operation, puts most often.
pub fn status_op() -> impl Strategy<Value = StatusOp> {
    let c = 0..CONNECTORS.len();
    let t = 0..TOPICS.len();
    prop_oneof![
        14 => (
            c.clone(),
            prop::option::weighted(0.75, 0..TASKS),
            status_state(),
            0..WORKERS.len(),
            0i32..=4,
        )
            .prop_map(|(connector, task, state, worker, generation)| StatusOp::Put {
                connector,
                task,
                state,
                worker,
                generation,
            }),
        2 => (c.clone(), t.clone(), 0..TASKS)
            .prop_map(|(connector, topic, task)| StatusOp::Topic { connector, topic, task }),
        1 => (c.clone(), t).prop_map(|(connector, topic)| StatusOp::TopicTombstone { connector, topic }),
        1 => c.prop_map(|connector| StatusOp::DeleteConnector { connector }),
        1 => (0..STATUS_PARTITIONS).prop_map(|partition| StatusOp::Roll { partition }),
        1 => Just(StatusOp::Clean),
        2 => Just(StatusOp::ReaderCatchUp),
    ]
}

/// A whole status run of 1 to 39 steps.
pub fn status_run() -> impl Strategy<Value = StatusRun> {
    let step = (status_op(), prop::bool::weighted(0.15), any::<bool>()).prop_map(
        |(op, duplicate, read_back)| StatusStep {
            op,
            duplicate,
            read_back,
        },
    );
    (
        any::<u64>(),
        prop::collection::vec(step, 1..40),
        0.0f64..=1.0,
        1usize..10,
        fetch_fault(),
        1u64..8,
    )
        .prop_map(
            |(seed, steps, start, fetch_size, fetch_fault, segment_records)| StatusRun {
                reader_start: (steps.len() as f64 * start) as usize,
                seed,
                steps,
                fetch_size,
                fetch_fault,
                segment_records,
            },
        )
}

/// The update a [`StatusOp::Put`] names, with a trace when it fails.
pub fn status_update(
    connector: usize,
    task: Option<i32>,
    state: StatusState,
    worker: usize,
    generation: i32,
) -> StatusUpdate {
    let c = CONNECTORS[connector];
    let w = WORKERS[worker];
    let update = match task {
        None => StatusUpdate::for_connector(c, state, w, generation),
        Some(n) => StatusUpdate::for_task(c, n, state, w, generation),
    };
    if state == StatusState::Failed {
        update.with_trace(TRACE)
    } else {
        update
    }
}

/// The record of Java's `put` / `putSafe` from the store's read-back caches (the store owns its
/// machine, so a clone does the send bookkeeping), or `None` when `putSafe` refuses.
pub fn prepared(
    writer: &Store<StatusLog, MemoryTransport>,
    update: StatusUpdate,
    safe: bool,
) -> Option<ProducerRecord> {
    let mut machine = writer.machine().clone();
    machine.prepare_put(update, safe).map(|p| p.into_record())
}

/// What a status run left: the reader's state and what it consumed, the writer's log and the
/// cluster.
pub struct StatusOutcome {
    /// The reader's snapshot once caught up.
    pub snapshot: StatusSnapshot,
    /// The reader's events.
    pub events: Vec<StatusEvent>,
    /// Every record the reader consumed, in order.
    pub consumed: Vec<OwnedRecord>,
    /// Every record the writer appended.
    pub log: LogCapture,
    /// The cluster at the end.
    pub cluster: MemoryCluster,
}

/// The status topic's simulation: a writer and a reader fetching `fetch_size` records at a time
/// with `fetch_fault`'s cleaning.
pub fn status_sim(
    seed: u64,
    segment_records: u64,
    fetch_size: usize,
    fetch_fault: FetchFault,
) -> Sim<StatusLog> {
    Sim::new(SimSpec {
        seed,
        topic: STATUS_TOPIC,
        kind: TopicKind::Status,
        partitions: STATUS_PARTITIONS,
        segment_records,
        fetch_size,
        fetch_fault,
    })
}

/// Runs `run`'s steps through the status store's writer (Java's `put`, `putSafe` and
/// `onDeletion` from its read-back caches) while a reader follows, then reads to the end.
pub fn run_status(run: &StatusRun) -> StatusOutcome {
    let mut sim = status_sim(
        run.seed,
        run.segment_records,
        run.fetch_size,
        run.fetch_fault,
    );
    for (i, step) in run.steps.iter().enumerate() {
        if i == run.reader_start {
            sim.start_reader();
        }
        let records: Vec<ProducerRecord> = match step.op {
            StatusOp::Put {
                connector,
                task,
                state,
                worker,
                generation,
            } => {
                let update = status_update(connector, task, state, worker, generation);
                let safe = matches!(state, StatusState::Unassigned | StatusState::Failed);
                let record = prepared(&sim.writer, update.clone(), safe);
                if let Some(r) = &record {
                    // Java's exact record, for the default partitioner.
                    assert_eq!(r.partition, None);
                    assert_eq!(r.key, update.key().into_bytes());
                    assert_eq!(r.value, update.value().map(String::into_bytes));
                } else {
                    assert!(safe, "only putSafe refuses");
                }
                record.into_iter().collect()
            }
            StatusOp::Topic {
                connector,
                topic,
                task,
            } => vec![topic_status_record(&TopicStatus::new(
                TOPICS[topic],
                CONNECTORS[connector],
                task,
                1_000 * i as i64,
            ))],
            StatusOp::TopicTombstone { connector, topic } => {
                vec![topic_tombstone(CONNECTORS[connector], TOPICS[topic])]
            }
            StatusOp::DeleteConnector { connector } => {
                sim.writer.machine().deletion_records(CONNECTORS[connector])
            }
            StatusOp::Roll { partition } => {
                sim.roll(partition);
                Vec::new()
            }
            StatusOp::Clean => {
                sim.clean();
                Vec::new()
            }
            StatusOp::ReaderCatchUp => {
                sim.reader_catch_up();
                Vec::new()
            }
        };
        if !records.is_empty() {
            let appended = sim.write(&records, step.duplicate, step.read_back);
            let copies = if step.duplicate { 2 } else { 1 };
            assert_eq!(appended.len(), copies * records.len());
            for a in &appended {
                assert_eq!(
                    Some(a.partition),
                    default_partition(&a.key, STATUS_PARTITIONS)
                );
            }
        }
    }
    sim.finish_reading();
    StatusOutcome {
        snapshot: sim.reader.machine().snapshot(),
        consumed: sim.consumed(),
        cluster: sim.cluster_now(),
        events: std::mem::take(&mut sim.events),
        log: std::mem::take(&mut sim.log),
    }
}

/// Property 1. Two references:
///
/// * **exact**: the naive fold over the records in the order the reader consumed them. The
///   cross-key rule (a connector tombstone drops that connector's task statuses, not its
///   topics) depends on how the reader interleaved the 5 partitions, and the stale-UNASSIGNED
///   rule depends on which earlier records compaction left it: following the reader's own
///   order is the only reference that is exact for both, so that is the one compared whole;
/// * **order-independent**, from the full log, per key: connector and topic statuses are the
///   last record appended for their key (or absent after a tombstone); a task status is absent
///   if its last record is a tombstone, and otherwise, for connectors never tombstoned, is its
///   last record, except that a last UNASSIGNED may still be hidden by an earlier RUNNING of a
///   generation at least as new.
pub fn check_status(out: &StatusOutcome) -> Result<(), TestCaseError> {
    let keys = status_keys();
    check_consumed(&out.consumed, &out.log)?;
    let actual = StatusModel::of(&out.snapshot);
    let exact = StatusModel::fold(
        &keys,
        out.consumed
            .iter()
            .map(|r| (r.key.as_deref().expect("keyed"), r.value.as_deref())),
    );
    prop_assert_eq!(&actual, &exact);

    let history = out.log.by_key();
    let tombstoned: BTreeSet<&str> = history
        .iter()
        .filter_map(|(k, recs)| match keys.get(*k) {
            Some(Key::Connector(c)) if recs.iter().any(|r| r.value.is_none()) => Some(c.as_str()),
            _ => None,
        })
        .collect();
    for (key, recs) in &history {
        let last = recs.last().expect("a key has records");
        match keys.get(*key).expect("a generated key") {
            Key::Connector(c) => {
                let want = last.value.as_deref().map(parse_status);
                prop_assert_eq!(actual.connectors.get(c), want.as_ref(), "connector {}", c);
            }
            Key::Topic { topic, connector } => {
                let want = last.value.as_deref().map(parse_topic);
                let got = actual.topics.get(connector).and_then(|row| row.get(topic));
                prop_assert_eq!(got, want.as_ref(), "topic {} of {}", topic, connector);
            }
            Key::Task(c, n) => {
                let got = actual.tasks.get(&(c.clone(), *n));
                match last.value.as_deref() {
                    None => prop_assert!(got.is_none(), "task {c}-{n} survived its tombstone"),
                    Some(_) if tombstoned.contains(c.as_str()) => {}
                    Some(v) => {
                        let want = parse_status(v);
                        let hidden_by = |s: &Status| {
                            want.state == StatusState::Unassigned
                                && s.state == StatusState::Running
                                && s.generation >= want.generation
                                && recs.iter().any(|r| {
                                    r.value.as_deref().map(parse_status).as_ref() == Some(s)
                                })
                        };
                        prop_assert!(
                            got == Some(&want) || got.is_some_and(hidden_by),
                            "task {}-{}: got {:?}, last written {:?}",
                            c,
                            n,
                            got,
                            want
                        );
                    }
                }
            }
        }
    }
    // Nothing that was never written.
    for c in actual.connectors.keys() {
        let key = format!("status-connector-{c}");
        prop_assert!(
            history.contains_key(key.as_bytes()),
            "{} was never written",
            key
        );
    }
    for (c, n) in actual.tasks.keys() {
        let key = format!("status-task-{c}-{n}");
        prop_assert!(
            history.contains_key(key.as_bytes()),
            "{} was never written",
            key
        );
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Property 2: KIP-558 active topics and their reset.

/// The sink connector whose active topics are reset.
pub const SINK: &str = "my-sink";
/// Another connector, whose topics a reset of [`SINK`] must leave.
pub const OTHER: &str = "other-src";
/// The topics the KIP-558 property marks active.
pub const KIP558_TOPICS: [&str; 5] = ["orders", "payments", "t-1", "t-2", "logs"];

/// One generated step of the KIP-558 property, before the reset.
#[derive(Debug, Clone)]
pub enum TopicStep {
    /// Mark a topic active for `SINK` (connector 0) or `OTHER` (1): through
    /// `record_active_topic` from the writer's caches (which writes again until read back) or
    /// through `topic_status_record` directly.
    Record {
        /// 0 for [`SINK`], 1 for [`OTHER`].
        connector: usize,
        /// Index into [`KIP558_TOPICS`].
        topic: usize,
        /// The task that saw the topic.
        task: i32,
        /// Through `record_active_topic` rather than the record directly.
        via_tracking: bool,
        /// Whether the record is appended twice.
        duplicate: bool,
        /// Whether the writer reads it back before the next step.
        read_back: bool,
    },
    /// A topic status tombstone.
    Tombstone {
        /// 0 for [`SINK`], 1 for [`OTHER`].
        connector: usize,
        /// Index into [`KIP558_TOPICS`].
        topic: usize,
    },
    /// Roll a partition's active segment.
    Roll {
        /// The partition rolled.
        partition: i32,
    },
    /// A default cleaning pass of every partition.
    Clean,
}

/// A generated KIP-558 run: the early steps, the late topics and the simulator's settings.
#[derive(Debug, Clone)]
pub struct TopicsRun {
    /// The simulator's seed.
    pub seed: u64,
    /// The steps before the reset is computed.
    pub early: Vec<TopicStep>,
    /// Topics marked active for `SINK` after the reset was computed, before it is produced.
    pub late: Vec<usize>,
    /// The early step before which the reader starts.
    pub reader_start: usize,
    /// Records per fetch.
    pub fetch_size: usize,
    /// How the cleaner interferes with fetches.
    pub fetch_fault: FetchFault,
    /// Records per segment.
    pub segment_records: u64,
}

/// One early step, records most often, for [`SINK`] more than [`OTHER`].
pub fn topic_step() -> impl Strategy<Value = TopicStep> {
    let t = 0..KIP558_TOPICS.len();
    prop_oneof![
        8 => (
            prop::bool::weighted(0.7).prop_map(|sink| usize::from(!sink)),
            t.clone(),
            0i32..3,
            any::<bool>(),
            prop::bool::weighted(0.15),
            any::<bool>(),
        )
            .prop_map(|(connector, topic, task, via_tracking, duplicate, read_back)| {
                TopicStep::Record { connector, topic, task, via_tracking, duplicate, read_back }
            }),
        1 => (0usize..2, t).prop_map(|(connector, topic)| TopicStep::Tombstone { connector, topic }),
        1 => (0..STATUS_PARTITIONS).prop_map(|partition| TopicStep::Roll { partition }),
        1 => Just(TopicStep::Clean),
    ]
}

/// A whole KIP-558 run of up to 24 early steps.
pub fn topics_run() -> impl Strategy<Value = TopicsRun> {
    (
        any::<u64>(),
        prop::collection::vec(topic_step(), 0..25),
        prop_oneof![3 => Just(Vec::new()), 1 => prop::collection::vec(0..KIP558_TOPICS.len(), 1..4)],
        0.0f64..=1.0,
        1usize..10,
        fetch_fault(),
        1u64..8,
    )
        .prop_map(
            |(seed, early, late, start, fetch_size, fetch_fault, segment_records)| TopicsRun {
                reader_start: (early.len() as f64 * start) as usize,
                seed,
                early,
                late,
                fetch_size,
                fetch_fault,
                segment_records,
            },
        )
}

/// The topic statuses of `connector` the full log leaves: the last record of each key is a
/// value (order-independent: only the key's own history matters for topic keys).
pub fn live_topics(log: &LogCapture, connector: &str) -> BTreeMap<String, TopicStatus> {
    let keys = status_keys_for(connector);
    log.by_key()
        .into_iter()
        .filter_map(|(k, recs)| {
            let topic = keys.get(k)?;
            let v = recs.last()?.value.as_deref()?;
            Some((topic.clone(), parse_topic(v)))
        })
        .collect()
}

/// `status-topic-<t>:connector-<connector>` for every KIP-558 topic, to the topic.
pub fn status_keys_for(connector: &str) -> BTreeMap<Vec<u8>, String> {
    KIP558_TOPICS
        .iter()
        .map(|t| {
            (
                format!("status-topic-{t}:connector-{connector}").into_bytes(),
                (*t).to_owned(),
            )
        })
        .collect()
}

/// The topic statuses of `connector` in the reader's snapshot.
pub fn reader_topics(
    reader: &Store<StatusLog, Recording>,
    connector: &str,
) -> BTreeMap<String, TopicStatus> {
    reader
        .machine()
        .snapshot()
        .topics(connector)
        .map(|(t, s)| (t.to_owned(), s.clone()))
        .collect()
}

/// Property 2: runs `run` and checks the active topics, the 403s of a refused reset, the
/// reset's tombstones (one per active topic) and what stays active after reading them back.
pub fn run_topics(run: &TopicsRun) -> Result<(), TestCaseError> {
    let mut sim = status_sim(
        run.seed,
        run.segment_records,
        run.fetch_size,
        run.fetch_fault,
    );
    let tracking = TopicTracking::default();
    for (i, step) in run.early.iter().enumerate() {
        if i == run.reader_start {
            sim.start_reader();
        }
        match *step {
            TopicStep::Record {
                connector,
                topic,
                task,
                via_tracking,
                duplicate,
                read_back,
            } => {
                let (c, t) = ([SINK, OTHER][connector], KIP558_TOPICS[topic]);
                let now = 1_000 * i as i64;
                let record = if via_tracking {
                    let r = sim
                        .writer
                        .machine()
                        .record_active_topic(c, t, task, now, &tracking);
                    let known = sim.writer.machine().snapshot().topic(c, t).is_some();
                    prop_assert_eq!(
                        r.is_none(),
                        known,
                        "recordActiveTopic writes iff not read back"
                    );
                    r
                } else {
                    Some(topic_status_record(&TopicStatus::new(t, c, task, now)))
                };
                if let Some(record) = record {
                    sim.write(&[record], duplicate, read_back);
                }
            }
            TopicStep::Tombstone { connector, topic } => {
                let record = topic_tombstone([SINK, OTHER][connector], KIP558_TOPICS[topic]);
                sim.write(&[record], false, false);
            }
            TopicStep::Roll { partition } => {
                sim.roll(partition);
            }
            TopicStep::Clean => {
                sim.clean();
            }
        }
    }
    if run.reader_start >= run.early.len() {
        sim.start_reader();
    }
    sim.reader_catch_up();
    check_consumed(&sim.consumed(), &sim.log)?;
    let active = live_topics(&sim.log, SINK);
    let other = live_topics(&sim.log, OTHER);
    prop_assert_eq!(&reader_topics(&sim.reader, SINK), &active);
    prop_assert_eq!(&reader_topics(&sim.reader, OTHER), &other);
    let names: Vec<String> = active.keys().cloned().collect();
    prop_assert_eq!(
        &sim.reader
            .machine()
            .snapshot()
            .active_topics(SINK, &tracking)
            .expect("enabled")
            .topics,
        &names
    );

    // The 403s come back, and nothing is written.
    let before = sim.cluster_now();
    for (enable, allow_reset, want) in [
        (false, true, TopicTrackingError::Disabled),
        (false, false, TopicTrackingError::Disabled),
        (true, false, TopicTrackingError::ResetDisabled),
    ] {
        let t = TopicTracking {
            enable,
            allow_reset,
        };
        match sim
            .reader
            .machine()
            .snapshot()
            .reset_active_topics(SINK, &t)
        {
            Ok(records) => {
                sim.write(&records, false, false);
                prop_assert!(false, "reset allowed with {t:?}");
            }
            Err(e) => {
                prop_assert_eq!(e, want);
                prop_assert_eq!(Answer::tracking_refused(e).status, 403);
            }
        }
        if !enable {
            prop_assert_eq!(
                sim.reader.machine().snapshot().active_topics(SINK, &t),
                Err(TopicTrackingError::Disabled)
            );
            prop_assert_eq!(
                sim.reader
                    .machine()
                    .record_active_topic(SINK, "new", 0, 0, &t),
                None
            );
        }
    }
    prop_assert!(
        sim.cluster_now() == before,
        "a refused reset wrote something"
    );

    // The reset: exactly one tombstone per active topic, for the default partitioner.
    let reset = sim
        .reader
        .machine()
        .snapshot()
        .reset_active_topics(SINK, &tracking)
        .expect("allowed");
    let want_keys: BTreeSet<Vec<u8>> = active
        .keys()
        .map(|t| format!("status-topic-{t}:connector-{SINK}").into_bytes())
        .collect();
    let got_keys: BTreeSet<Vec<u8>> = reset.iter().map(|r| r.key.clone()).collect();
    prop_assert_eq!(reset.len(), active.len());
    prop_assert_eq!(&got_keys, &want_keys);
    prop_assert!(reset
        .iter()
        .all(|r| r.value.is_none() && r.partition.is_none()));

    // Topics touched again after the reset was computed, then the reset itself.
    let late: BTreeSet<&str> = run.late.iter().map(|&t| KIP558_TOPICS[t]).collect();
    for t in &late {
        let record = topic_status_record(&TopicStatus::new(*t, SINK, 0, 99_000));
        sim.write(&[record], false, false);
    }
    let appended = if reset.is_empty() {
        Vec::new()
    } else {
        sim.write(&reset, false, true)
    };
    let mut tombstones: BTreeMap<Vec<u8>, usize> = BTreeMap::new();
    for a in &appended {
        prop_assert!(a.value.is_none());
        *tombstones.entry(a.key.clone()).or_default() += 1;
    }
    prop_assert!(tombstones.values().all(|&n| n == 1));
    prop_assert_eq!(
        tombstones.keys().cloned().collect::<BTreeSet<_>>(),
        want_keys
    );

    // Read back: only the late topics the reset did not cover are active.
    sim.reader_catch_up();
    check_consumed(&sim.consumed(), &sim.log)?;
    let after: BTreeSet<String> = reader_topics(&sim.reader, SINK).into_keys().collect();
    let want: BTreeSet<String> = late
        .iter()
        .filter(|t| !active.contains_key(**t))
        .map(|t| (*t).to_owned())
        .collect();
    prop_assert_eq!(&after, &want);
    if late.is_empty() {
        prop_assert!(sim
            .reader
            .machine()
            .snapshot()
            .active_topics(SINK, &tracking)
            .expect("enabled")
            .topics
            .is_empty());
    }
    if !active.is_empty() {
        // Java keeps the connector's (now possibly empty) inner map.
        prop_assert!(sim
            .reader
            .machine()
            .snapshot()
            .topic_connectors()
            .any(|c| c == SINK));
    }
    prop_assert_eq!(&reader_topics(&sim.reader, OTHER), &other);
    // Recording again writes only for topics not active any more.
    for t in KIP558_TOPICS {
        let r = sim
            .reader
            .machine()
            .record_active_topic(SINK, t, 0, 0, &tracking);
        prop_assert_eq!(r.is_some(), !after.contains(t));
    }
    Ok(())
}
