//! The status and offsets topics through the generic store and the in-memory compacting-log
//! simulator: the status and offsets properties of `spec/compaction.md` §4 (last paragraph),
//! with the rules of `status-offsets-topics.md` §3 (status, KIP-558) and §4 (offsets, KIP-875).
//!
//! Every property runs real stores (`Store<StatusLog, _>`, `Store<OffsetLog, _>`) over
//! `MemoryTransport`s sharing one `MemoryCluster`: a writer with random duplicate deliveries, and
//! an independent reader that starts at a random point, fetches in random batch sizes and has
//! the log cleaned under its feet before fetches. Two references check it:
//!
//! * the **full log**: every record the writer appended, captured from the simulator right after
//!   each write (before anything can clean it). Only conclusions that do not depend on the
//!   reader's interleaving of partitions or on what compaction removed are drawn from it;
//! * the **consumed sequence**: every record the reader's transport handed to the store, in
//!   the order the store applied them (a recording [`Transport`] wrapper). A naive fold over it
//!   must give exactly the reader's snapshot, including the cross-key rules (a connector
//!   tombstone drops the task statuses of its connector; offsets partition sets compare maps
//!   regardless of member order), which depend on the interleaving.
//!
//! Case count: `PROPTEST_CASES` (proptest's default, 256).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

use connect_state_memory::{FetchFault, MemoryCluster, MemoryTransport, TopicConfig};
use connect_state_ops::rest::Answer;
use connect_state_store::{Store, TopicKind};
use engine::json::{JsonObject, JsonValue};
use engine::offsets::{
    default_partition, kip875, offset_key, offset_value, OffsetEvent, OffsetLog, OffsetSnapshot,
    OrderedMap,
};
use engine::status::write::{topic_status_record, topic_tombstone};
use engine::status::{
    Status, StatusEvent, StatusLog, StatusSnapshot, StatusState, StatusUpdate, TopicStatus,
    TopicTracking, TopicTrackingError,
};
use engine::OwnedRecord;
use engine::ProducerRecord;
use proptest::prelude::*;

const STATUS_TOPIC: &str = "connect-status";
const OFFSETS_TOPIC: &str = "connect-offsets";
/// Java's defaults (`status.storage.partitions`, `offset.storage.partitions`).
const STATUS_PARTITIONS: i32 = 5;
const OFFSETS_PARTITIONS: i32 = 25;

/// Status connectors: one plain, one with `-` inside, one ending in `-` (its task keys contain
/// `--`, which Java's `split("-")` turns into an empty part, spec §1.3).
const CONNECTORS: [&str; 3] = ["orders", "my-jdbc-source", "edge-"];
const TASKS: i32 = 3;
const TOPICS: [&str; 3] = ["orders-topic", "payments", "t.1"];
const WORKERS: [&str; 2] = ["w1:8083", "10.0.0.2:8083"];
/// A Java stack trace with everything Jackson escapes (quote, newline, tab, a C0 control).
const TRACE: &str =
    "org.apache.kafka.connect.errors.ConnectException: \"boom\"\n\tat X.y(X.java:1)\u{1f}\n";

// ---------------------------------------------------------------------------------------------
// Plumbing: runtime, cluster, stores, the recording transport and the log capture.

use connect_state_tests::sim::{
    lock, reader_transport, runtime, store, write, Appended, LogCapture, Recording, Sim, SimSpec,
};

fn new_cluster(
    seed: u64,
    topic: &str,
    partitions: i32,
    segment_records: u64,
) -> Arc<Mutex<MemoryCluster>> {
    let config = TopicConfig::compacted(partitions).with_segment_records(segment_records);
    connect_state_tests::sim::cluster(seed, topic, config)
}

/// What every reader must satisfy whatever the faults: it consumed only records the writer
/// appended, each once, in offset order per partition; and since it read to the end, it saw the
/// last record of every key in every partition (compaction keeps the latest record of a key,
/// and tombstones survive here: the clock never reaches `delete.retention.ms`).
fn check_consumed(consumed: &[OwnedRecord], log: &LogCapture) -> Result<(), TestCaseError> {
    let appended: BTreeMap<(i32, i64), &Appended> = log
        .records
        .iter()
        .map(|r| ((r.partition, r.offset), r))
        .collect();
    let mut last_offset: BTreeMap<i32, i64> = BTreeMap::new();
    for r in consumed {
        let a = appended.get(&(r.partition, r.offset));
        prop_assert!(a.is_some(), "consumed a record never appended: {r:?}");
        let a = a.copied().expect("checked");
        prop_assert_eq!(r.key.as_deref(), Some(a.key.as_slice()));
        prop_assert_eq!(&r.value, &a.value);
        let prev = last_offset.insert(r.partition, r.offset);
        prop_assert!(
            prev.is_none_or(|p| p < r.offset),
            "offsets go back in {}",
            r.partition
        );
    }
    let seen: BTreeSet<(i32, i64)> = consumed.iter().map(|r| (r.partition, r.offset)).collect();
    let mut last: BTreeMap<(i32, &[u8]), i64> = BTreeMap::new();
    for r in &log.records {
        last.insert((r.partition, r.key.as_slice()), r.offset);
    }
    for ((p, key), offset) in last {
        prop_assert!(
            seen.contains(&(p, offset)),
            "the reader missed the latest record of {:?} ({p}@{offset})",
            String::from_utf8_lossy(key)
        );
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// The status reference.

/// What a status key names (built from the generated names, not parsed).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Key {
    Connector(String),
    Task(String, i32),
    Topic { topic: String, connector: String },
}

/// Every key the generators can write, formatted by hand (spec §1), to what it names.
fn status_keys() -> BTreeMap<Vec<u8>, Key> {
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
fn parse_status(bytes: &[u8]) -> Status {
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
fn parse_topic(bytes: &[u8]) -> TopicStatus {
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
struct StatusModel {
    connectors: BTreeMap<String, Status>,
    tasks: BTreeMap<(String, i32), Status>,
    /// Rows stay when their last topic is tombstoned, as Java's inner maps do.
    topics: BTreeMap<String, BTreeMap<String, TopicStatus>>,
}

impl StatusModel {
    fn apply(&mut self, keys: &BTreeMap<Vec<u8>, Key>, key: &[u8], value: Option<&[u8]>) {
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

    fn of(s: &StatusSnapshot) -> Self {
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

    fn fold<'a>(
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

#[derive(Debug, Clone)]
enum StatusOp {
    /// A connector (`task: None`) or task status; `Destroyed` writes a tombstone. UNASSIGNED and
    /// FAILED go through `putSafe`, the rest through `put` (the herder's table, spec §3.4).
    Put {
        connector: usize,
        task: Option<i32>,
        state: StatusState,
        worker: usize,
        generation: i32,
    },
    /// A KIP-558 topic status.
    Topic {
        connector: usize,
        topic: usize,
        task: i32,
    },
    /// A topic status tombstone.
    TopicTombstone { connector: usize, topic: usize },
    /// Java's `onDeletion(c)` from the writer's caches: task tombstones, then the connector's.
    DeleteConnector { connector: usize },
    /// Roll a partition's active segment (makes it cleanable).
    Roll { partition: i32 },
    /// A default cleaning pass of every partition.
    Clean,
    /// The reader reads to the end (if it has started).
    ReaderCatchUp,
}

#[derive(Debug, Clone)]
struct StatusStep {
    op: StatusOp,
    duplicate: bool,
    read_back: bool,
}

#[derive(Debug, Clone)]
struct StatusRun {
    seed: u64,
    steps: Vec<StatusStep>,
    reader_start: usize,
    fetch_size: usize,
    fetch_fault: FetchFault,
    segment_records: u64,
}

fn fetch_fault() -> impl Strategy<Value = FetchFault> {
    prop_oneof![
        4 => (0.0f64..1.0).prop_map(|probability| FetchFault::CleanRandomly { probability }),
        1 => Just(FetchFault::CleanAll),
    ]
}

fn status_state() -> impl Strategy<Value = StatusState> {
    let live: Vec<StatusState> = StatusState::ALL
        .into_iter()
        .filter(|s| *s != StatusState::Destroyed)
        .collect();
    prop_oneof![
        10 => prop::sample::select(live),
        1 => Just(StatusState::Destroyed),
    ]
}

fn status_op() -> impl Strategy<Value = StatusOp> {
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

fn status_run() -> impl Strategy<Value = StatusRun> {
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

fn status_update(
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
fn prepared(
    writer: &Store<StatusLog, MemoryTransport>,
    update: StatusUpdate,
    safe: bool,
) -> Option<ProducerRecord> {
    let mut machine = writer.machine().clone();
    machine.prepare_put(update, safe).map(|p| p.into_record())
}

struct StatusOutcome {
    snapshot: StatusSnapshot,
    events: Vec<StatusEvent>,
    consumed: Vec<OwnedRecord>,
    log: LogCapture,
    cluster: MemoryCluster,
}

/// The status topic's simulation: a writer and a reader fetching `fetch_size` records at a time
/// with `fetch_fault`'s cleaning.
fn status_sim(
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

fn run_status(run: &StatusRun) -> StatusOutcome {
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
fn check_status(out: &StatusOutcome) -> Result<(), TestCaseError> {
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

const SINK: &str = "my-sink";
const OTHER: &str = "other-src";
const KIP558_TOPICS: [&str; 5] = ["orders", "payments", "t-1", "t-2", "logs"];

#[derive(Debug, Clone)]
enum TopicStep {
    /// Mark a topic active for `SINK` (connector 0) or `OTHER` (1): through
    /// `record_active_topic` from the writer's caches (which writes again until read back) or
    /// through `topic_status_record` directly.
    Record {
        connector: usize,
        topic: usize,
        task: i32,
        via_tracking: bool,
        duplicate: bool,
        read_back: bool,
    },
    Tombstone {
        connector: usize,
        topic: usize,
    },
    Roll {
        partition: i32,
    },
    Clean,
}

#[derive(Debug, Clone)]
struct TopicsRun {
    seed: u64,
    early: Vec<TopicStep>,
    /// Topics marked active for `SINK` after the reset was computed, before it is produced.
    late: Vec<usize>,
    reader_start: usize,
    fetch_size: usize,
    fetch_fault: FetchFault,
    segment_records: u64,
}

fn topic_step() -> impl Strategy<Value = TopicStep> {
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

fn topics_run() -> impl Strategy<Value = TopicsRun> {
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
fn live_topics(log: &LogCapture, connector: &str) -> BTreeMap<String, TopicStatus> {
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
fn status_keys_for(connector: &str) -> BTreeMap<Vec<u8>, String> {
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

fn reader_topics(
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

fn run_topics(run: &TopicsRun) -> Result<(), TestCaseError> {
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

// ---------------------------------------------------------------------------------------------
// Property 3: offsets.

const OFFSET_CONNECTORS: [&str; 3] = ["file-source", "jdbc", "ünï-src"];
/// Java `HashMap` order of all three: database, shard, table.
const MEMBERS: [&str; 3] = ["table", "shard", "database"];

#[derive(Debug, Clone)]
enum OffsetOp {
    Write {
        connector: usize,
        /// Members in the connector's own order; `None` is the null partition `[c, null]`.
        partition: Option<Vec<(usize, JsonValue)>>,
        /// `{"position": n}`, or a tombstone.
        offset: Option<i64>,
        /// An explicit partition, as a writer without Java's partitioner would pick.
        misplaced: Option<i32>,
        duplicate: bool,
        read_back: bool,
    },
    Roll {
        partition: i32,
    },
    Clean,
    ReaderCatchUp,
}

#[derive(Debug, Clone)]
struct OffsetsRun {
    seed: u64,
    ops: Vec<OffsetOp>,
    reader_start: usize,
    fetch_size: usize,
    fetch_fault: FetchFault,
    segment_records: u64,
}

fn member_value() -> impl Strategy<Value = JsonValue> {
    prop_oneof![
        prop::sample::select(vec!["a", "orders.csv"]).prop_map(|s| JsonValue::String(s.into())),
        (0i64..2).prop_map(JsonValue::Long),
    ]
}

fn source_partition() -> impl Strategy<Value = Vec<(usize, JsonValue)>> {
    (
        prop::sample::subsequence(vec![0usize, 1, 2], 1..=3).prop_shuffle(),
        prop::collection::vec(member_value(), 3),
    )
        .prop_map(|(names, values)| names.into_iter().map(|n| (n, values[n].clone())).collect())
}

fn offset_op() -> impl Strategy<Value = OffsetOp> {
    prop_oneof![
        12 => (
            0..OFFSET_CONNECTORS.len(),
            prop::option::weighted(0.95, source_partition()),
            prop::option::weighted(0.8, 0i64..100),
            prop::option::weighted(0.1, 0..OFFSETS_PARTITIONS),
            prop::bool::weighted(0.15),
            any::<bool>(),
        )
            .prop_map(|(connector, partition, offset, misplaced, duplicate, read_back)| {
                OffsetOp::Write { connector, partition, offset, misplaced, duplicate, read_back }
            }),
        1 => (0..OFFSETS_PARTITIONS).prop_map(|partition| OffsetOp::Roll { partition }),
        1 => Just(OffsetOp::Clean),
        2 => Just(OffsetOp::ReaderCatchUp),
    ]
}

fn offsets_run() -> impl Strategy<Value = OffsetsRun> {
    (
        any::<u64>(),
        prop::collection::vec(offset_op(), 1..40),
        0.0f64..=1.0,
        1usize..10,
        fetch_fault(),
        1u64..6,
    )
        .prop_map(
            |(seed, ops, start, fetch_size, fetch_fault, segment_records)| OffsetsRun {
                reader_start: (ops.len() as f64 * start) as usize,
                seed,
                ops,
                fetch_size,
                fetch_fault,
                segment_records,
            },
        )
}

/// The key Java writes for `[connector, partition]`, formatted by hand: compact JSON, members
/// in the map's own order (spec §4.1).
fn expected_key(connector: &str, partition: Option<&[(usize, JsonValue)]>) -> Vec<u8> {
    let c = serde_json::to_string(connector).expect("a string");
    let p = match partition {
        None => "null".to_owned(),
        Some(members) => {
            let members: Vec<String> = members
                .iter()
                .map(|(n, v)| {
                    let v = match v {
                        JsonValue::String(s) => serde_json::to_string(s).expect("a string"),
                        JsonValue::Long(n) => n.to_string(),
                        other => unreachable!("generated {other:?}"),
                    };
                    format!("\"{}\":{v}", MEMBERS[*n])
                })
                .collect();
            format!("{{{}}}", members.join(","))
        }
    };
    format!("[{c},{p}]").into_bytes()
}

/// Parses an offsets key with serde_json: its connector and partition content (`None` for a
/// null partition).
fn parse_offset_key(bytes: &[u8]) -> (String, Option<JsonObject>) {
    let v: serde_json::Value = serde_json::from_slice(bytes).expect("key JSON");
    let items = v.as_array().expect("a list");
    assert_eq!(items.len(), 2);
    let connector = items[0].as_str().expect("a name").to_owned();
    let partition = items[1].as_object().map(|m| {
        m.iter()
            .map(|(k, v)| {
                let v = match v {
                    serde_json::Value::String(s) => JsonValue::String(s.clone()),
                    serde_json::Value::Number(n) => JsonValue::Long(n.as_i64().expect("a long")),
                    other => unreachable!("generated {other:?}"),
                };
                (k.clone(), v)
            })
            .collect()
    });
    (connector, partition)
}

/// Java's `KafkaOffsetBackingStore` state, naively: raw key bytes to `(partition, offset,
/// value)`, and per connector the set of partition maps (`Map.equals`: member order ignored).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
struct OffsetsModel {
    data: BTreeMap<Vec<u8>, (i32, i64, Vec<u8>)>,
    sets: BTreeMap<String, BTreeSet<JsonObject>>,
}

impl OffsetsModel {
    fn apply(&mut self, partition: i32, offset: i64, key: &[u8], value: Option<&[u8]>) {
        if let (c, Some(content)) = parse_offset_key(key) {
            // The set is created even by a tombstone (`computeIfAbsent`, spec §4.4).
            let set = self.sets.entry(c).or_default();
            if value.is_some() {
                set.insert(content);
            } else {
                set.remove(&content);
            }
        }
        match value {
            Some(v) => {
                self.data
                    .insert(key.to_vec(), (partition, offset, v.to_vec()));
            }
            None => {
                self.data.remove(key);
            }
        }
    }

    fn of(s: &OffsetSnapshot) -> Self {
        Self {
            data: s
                .entries()
                .map(|(k, v)| {
                    let k = k.expect("keyed").to_vec();
                    (k, (v.partition(), v.offset(), v.value().to_vec()))
                })
                .collect(),
            sets: s
                .connectors()
                .map(|c| (c.to_owned(), s.connector_partitions(c).collect()))
                .collect(),
        }
    }

    fn fold(consumed: &[OwnedRecord]) -> Self {
        let mut model = Self::default();
        for r in consumed {
            let key = r.key.as_deref().expect("keyed");
            model.apply(r.partition, r.offset, key, r.value.as_deref());
        }
        model
    }
}

struct OffsetsOutcome {
    /// Before the KIP-875 resets.
    before_reset: OffsetSnapshot,
    /// After producing every connector's reset and reading it back.
    snapshot: OffsetSnapshot,
    events: Vec<OffsetEvent>,
    consumed_before_reset: Vec<OwnedRecord>,
    consumed: Vec<OwnedRecord>,
    log_before_reset: LogCapture,
    log: LogCapture,
    resets: Vec<(String, Vec<ProducerRecord>)>,
    cluster_before_reset: MemoryCluster,
    cluster: MemoryCluster,
}

fn run_offsets(run: &OffsetsRun) -> OffsetsOutcome {
    let mut sim: Sim<OffsetLog> = Sim::new(SimSpec {
        seed: run.seed,
        topic: OFFSETS_TOPIC,
        kind: TopicKind::Offsets,
        partitions: OFFSETS_PARTITIONS,
        segment_records: run.segment_records,
        fetch_size: run.fetch_size,
        fetch_fault: run.fetch_fault,
    });
    for (i, op) in run.ops.iter().enumerate() {
        if i == run.reader_start {
            sim.start_reader();
        }
        match op {
            OffsetOp::Write {
                connector,
                partition,
                offset,
                misplaced,
                duplicate,
                read_back,
            } => {
                let c = OFFSET_CONNECTORS[*connector];
                let map = partition.as_ref().map(|members| {
                    OrderedMap::new(members.iter().map(|(n, v)| (MEMBERS[*n], v.clone())))
                });
                let key = offset_key(c, map.as_ref()).expect("a valid partition");
                assert_eq!(key, expected_key(c, partition.as_deref()));
                let offset = offset.map(|n| OrderedMap::new([("position", JsonValue::Long(n))]));
                let value = offset_value(offset.as_ref()).expect("a valid offset");
                if let Some(n) = offset_to_position(offset.as_ref()) {
                    assert_eq!(
                        value.as_deref(),
                        Some(format!("{{\"position\":{n}}}").as_bytes())
                    );
                }
                let record = ProducerRecord {
                    key,
                    value,
                    partition: *misplaced,
                };
                sim.write(&[record], *duplicate, *read_back);
            }
            OffsetOp::Roll { partition } => sim.roll(*partition),
            OffsetOp::Clean => sim.clean(),
            OffsetOp::ReaderCatchUp => sim.reader_catch_up(),
        }
    }
    sim.finish_reading();
    let before_reset = sim.reader.machine().snapshot();
    let consumed_before_reset = sim.consumed();
    let log_before_reset = sim.log.clone();
    let cluster_before_reset = sim.cluster_now();

    // KIP-875 reset of every connector, computed from the caught-up reader.
    let resets: Vec<(String, Vec<ProducerRecord>)> = OFFSET_CONNECTORS
        .iter()
        .map(|c| {
            let records =
                kip875::reset_records(&before_reset, c, OFFSETS_PARTITIONS).expect("reset records");
            ((*c).to_owned(), records)
        })
        .collect();
    let all: Vec<ProducerRecord> = resets.iter().flat_map(|(_, r)| r.iter().cloned()).collect();
    if !all.is_empty() {
        sim.write(&all, false, true);
    }
    sim.reader_catch_up();
    OffsetsOutcome {
        before_reset,
        snapshot: sim.reader.machine().snapshot(),
        consumed_before_reset,
        consumed: sim.consumed(),
        log_before_reset,
        resets,
        cluster_before_reset,
        cluster: sim.cluster_now(),
        events: std::mem::take(&mut sim.events),
        log: std::mem::take(&mut sim.log),
    }
}

fn offset_to_position(offset: Option<&OrderedMap>) -> Option<i64> {
    offset?.members().first()?.1.as_long()
}

/// Property 3 on one reader state (before or after the reset):
///
/// * exact: the data map and the partition sets equal the naive fold over the records in the
///   order the reader consumed them (partition sets compare maps regardless of member order, so
///   the same source partition written with two member orders lives under two keys, possibly
///   in two partitions, and its membership depends on the interleaving);
/// * order-independent, from the full log: for every key all of whose records lie in one
///   partition, the latest value wins and a tombstone removes it (a naive
///   `BTreeMap<Vec<u8>, Vec<u8>>` fold); for every source partition written under one key only,
///   membership in its connector's set is "the last record of that key is a value".
fn check_offsets_state(
    snapshot: &OffsetSnapshot,
    consumed: &[OwnedRecord],
    log: &LogCapture,
) -> Result<(), TestCaseError> {
    check_consumed(consumed, log)?;
    let actual = OffsetsModel::of(snapshot);
    prop_assert_eq!(&actual, &OffsetsModel::fold(consumed));

    let history = log.by_key();
    let mut naive: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
    for r in &log.records {
        match &r.value {
            Some(v) => naive.insert(r.key.clone(), v.clone()),
            None => naive.remove(&r.key),
        };
    }
    let one_partition = |recs: &[&Appended]| recs.iter().all(|r| r.partition == recs[0].partition);
    for (key, recs) in &history {
        if !one_partition(recs) {
            continue;
        }
        let last = recs.last().expect("records");
        prop_assert_eq!(naive.get(*key), last.value.as_ref());
        let got = snapshot.get(Some(key));
        prop_assert_eq!(got.map(|s| s.value()), naive.get(*key).map(Vec::as_slice));
        if let Some(stored) = got {
            prop_assert_eq!(
                (stored.partition(), stored.offset()),
                (last.partition, last.offset)
            );
        }
    }
    // Source partitions written under exactly one key, in one partition.
    let mut keys_of: BTreeMap<(String, JsonObject), BTreeSet<&[u8]>> = BTreeMap::new();
    for key in history.keys() {
        if let (c, Some(content)) = parse_offset_key(key) {
            keys_of.entry((c, content)).or_default().insert(key);
        }
    }
    for ((c, content), keys) in &keys_of {
        let [key] = keys.iter().copied().collect::<Vec<_>>()[..] else {
            continue;
        };
        let recs = &history[key];
        if !one_partition(recs) {
            continue;
        }
        let live = recs.last().expect("records").value.is_some();
        let member = actual.sets.get(c).is_some_and(|set| set.contains(content));
        prop_assert_eq!(member, live, "{} {:?}", c, content);
    }
    Ok(())
}

/// Property 3, the KIP-875 part: the reset tombstones cover the connector's partition set, each
/// lands on the partition where the live record of its key is (checked in the simulator), and
/// once read back the listing is empty.
fn check_offsets(out: &OffsetsOutcome) -> Result<(), TestCaseError> {
    check_offsets_state(
        &out.before_reset,
        &out.consumed_before_reset,
        &out.log_before_reset,
    )?;
    for (c, records) in &out.resets {
        let set: BTreeSet<JsonObject> = out.before_reset.connector_partitions(c).collect();
        let contents: BTreeSet<JsonObject> = records
            .iter()
            .map(|r| parse_offset_key(&r.key).1.expect("a partition"))
            .collect();
        prop_assert_eq!(records.len(), set.len());
        prop_assert_eq!(&contents, &set);
        let listed: BTreeSet<JsonObject> = kip875::list(&out.before_reset, c)
            .offsets
            .iter()
            .map(|e| e.partition.to_object())
            .collect();
        prop_assert_eq!(&listed, &set);
        for r in records {
            prop_assert_eq!(parse_offset_key(&r.key).0, c.clone());
            prop_assert!(r.value.is_none(), "a reset writes tombstones");
            let p = r.partition;
            prop_assert!(p.is_some(), "a reset names its partition");
            let p = p.expect("checked");
            match out.before_reset.get(Some(&r.key)) {
                Some(stored) => {
                    prop_assert_eq!(p, stored.partition());
                    let there = out
                        .cluster_before_reset
                        .records(OFFSETS_TOPIC, p)
                        .expect("partition")
                        .into_iter()
                        .rfind(|l| l.key.as_deref() == Some(r.key.as_slice()));
                    prop_assert!(there.is_some(), "no record of the key in {p}");
                    let there = there.expect("checked");
                    prop_assert_eq!(there.offset, stored.offset());
                    prop_assert_eq!(there.value.as_deref(), Some(stored.value()));
                }
                None => prop_assert_eq!(Some(p), default_partition(&r.key, OFFSETS_PARTITIONS)),
            }
        }
    }
    check_offsets_state(&out.snapshot, &out.consumed, &out.log)?;
    for c in OFFSET_CONNECTORS {
        prop_assert!(
            kip875::list(&out.snapshot, c).offsets.is_empty(),
            "{c} still lists offsets"
        );
        prop_assert_eq!(out.snapshot.connector_partitions(c).count(), 0);
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// The properties.

proptest! {
    /// Property 1: status, last record per key wins except the stale-UNASSIGNED rule; a
    /// connector tombstone drops its task statuses but not its topics.
    #[test]
    fn status_last_write_wins_through_the_simulator(run in status_run()) {
        check_status(&run_status(&run))?;
    }

    /// Property 2: KIP-558 reset writes one tombstone per active topic and, read back, leaves
    /// the active set empty (but for topics touched after the reset was computed); with topic
    /// tracking or its reset disabled the 403s come back and nothing is written.
    #[test]
    fn active_topics_reset_through_the_simulator(run in topics_run()) {
        run_topics(&run)?;
    }

    /// Property 3: offsets, latest value per exact key bytes wins, tombstones remove, partition
    /// sets equal the reference fold, KIP-875 reset tombstones land where their key lives and
    /// empty the listing.
    #[test]
    fn offsets_through_the_simulator(run in offsets_run()) {
        check_offsets(&run_offsets(&run))?;
    }

    /// Property 4: the same seed and operations give the same cluster, the same consumption,
    /// the same snapshots and the same events.
    #[test]
    fn runs_are_deterministic(status in status_run(), offsets in offsets_run()) {
        let (a, b) = (run_status(&status), run_status(&status));
        prop_assert_eq!(&a.snapshot, &b.snapshot);
        prop_assert_eq!(&a.events, &b.events);
        prop_assert_eq!(&a.consumed, &b.consumed);
        prop_assert!(a.cluster == b.cluster);
        let (a, b) = (run_offsets(&offsets), run_offsets(&offsets));
        prop_assert_eq!(&a.before_reset, &b.before_reset);
        prop_assert_eq!(&a.snapshot, &b.snapshot);
        prop_assert_eq!(&a.events, &b.events);
        prop_assert_eq!(&a.consumed, &b.consumed);
        prop_assert!(a.cluster == b.cluster);
    }
}

// ---------------------------------------------------------------------------------------------
// Hand-written scenarios, one per property, with exact values.

fn running(worker: &str, generation: i32) -> Status {
    status(StatusState::Running, worker, generation)
}

fn status(state: StatusState, worker: &str, generation: i32) -> Status {
    Status {
        state,
        trace: None,
        worker_id: Some(worker.into()),
        generation,
        version: None,
    }
}

fn roll_and_clean(cluster: &Mutex<MemoryCluster>, topic: &str, partitions: i32) {
    let mut cluster = lock(cluster);
    for p in 0..partitions {
        cluster.roll_segment(topic, p).expect("roll");
    }
    cluster.clean_all(topic).expect("clean");
}

/// Property 1 by hand: exact records, the safe-write refusal, the stale-UNASSIGNED filter (and
/// how compaction can undo it), a connector deletion that drops task statuses but keeps topics.
#[test]
fn status_hand_written_scenario() {
    use StatusState::{Failed, Running, Unassigned};
    let c = "my-jdbc-source";
    let (w1, w2) = ("w1:8083", "10.0.0.2:8083");
    runtime().block_on(async {
        let cluster = new_cluster(7, STATUS_TOPIC, STATUS_PARTITIONS, 16);
        let wt = Arc::new(MemoryTransport::new(Arc::clone(&cluster)));
        let mut writer: Store<StatusLog, _> =
            store(STATUS_TOPIC, TopicKind::Status, Arc::clone(&wt));
        writer.start().await.unwrap();
        let mut log = LogCapture::default();

        let r = prepared(&writer, StatusUpdate::for_connector(c, Running, w1, 1), false).unwrap();
        assert_eq!(
            r,
            ProducerRecord {
                key: b"status-connector-my-jdbc-source".to_vec(),
                value: Some(
                    br#"{"state":"RUNNING","trace":null,"worker_id":"w1:8083","generation":1,"version":null}"#
                        .to_vec()
                ),
                partition: None,
            }
        );
        write(&mut writer, &wt, &[r], false, true).await;
        log.capture(&cluster, STATUS_TOPIC, STATUS_PARTITIONS);
        let t0 = prepared(&writer, StatusUpdate::for_task(c, 0, Running, w1, 2), false).unwrap();
        let t1 = prepared(&writer, StatusUpdate::for_task(c, 1, Running, w1, 2), false).unwrap();
        assert_eq!(t0.key, b"status-task-my-jdbc-source-0");
        assert_eq!(t1.key, b"status-task-my-jdbc-source-1");
        write(&mut writer, &wt, &[t0, t1], false, true).await;
        log.capture(&cluster, STATUS_TOPIC, STATUS_PARTITIONS);

        // putSafe of an older UNASSIGNED from another worker is refused; a plain put writes it
        // (delivered twice), and the KAFKA-12525 filter hides it from readers.
        let stale = StatusUpdate::for_task(c, 0, Unassigned, w2, 1);
        assert_eq!(prepared(&writer, stale.clone(), true), None);
        let r = prepared(&writer, stale, false).unwrap();
        write(&mut writer, &wt, &[r], true, true).await;
        log.capture(&cluster, STATUS_TOPIC, STATUS_PARTITIONS);
        assert_eq!(log.records.len(), 5);
        assert_eq!(writer.machine().snapshot().task(c, 0), Some(&running(w1, 2)));

        let rt = reader_transport(&cluster, 1, FetchFault::CleanRandomly { probability: 0.0 });
        let mut reader: Store<StatusLog, _> =
            store(STATUS_TOPIC, TopicKind::Status, Arc::clone(&rt));
        reader.start().await.unwrap();
        assert_eq!(reader.machine().snapshot().task(c, 0), Some(&running(w1, 2)));
        let skipped = reader.machine().diagnostics();
        assert_eq!(
            skipped
                .skipped()
                .get(engine::status::StatusSkipKind::StaleUnassigned),
            2
        );

        // Compaction removes the RUNNING the filter relied on: a reader of the cleaned log sees
        // the stale UNASSIGNED (Java behaves the same; the filter is not compaction-stable).
        roll_and_clean(&cluster, STATUS_TOPIC, STATUS_PARTITIONS);
        let fresh_t = reader_transport(&cluster, 1, FetchFault::CleanAll);
        let mut fresh: Store<StatusLog, _> = store(STATUS_TOPIC, TopicKind::Status, fresh_t);
        fresh.start().await.unwrap();
        assert_eq!(fresh.machine().snapshot().task(c, 0), Some(&status(Unassigned, w2, 1)));

        // A newer UNASSIGNED passes putSafe (cached generation 2 <= 3) and is applied; a FAILED
        // with a trace; a KIP-558 topic.
        let r = prepared(&writer, StatusUpdate::for_task(c, 0, Unassigned, w2, 3), true).unwrap();
        let failed = StatusUpdate::for_task(c, 1, Failed, w1, 3).with_trace(TRACE);
        let f = prepared(&writer, failed, true).unwrap();
        assert_eq!(
            f.value.as_deref(),
            Some(
                br#"{"state":"FAILED","trace":"org.apache.kafka.connect.errors.ConnectException: \"boom\"\n\tat X.y(X.java:1)\u001F\n","worker_id":"w1:8083","generation":3,"version":null}"#
                    .as_slice()
            )
        );
        let topic = topic_status_record(&TopicStatus::new("orders-topic", c, 0, 1_589_972_451_234));
        assert_eq!(topic.key, b"status-topic-orders-topic:connector-my-jdbc-source");
        assert_eq!(
            topic.value.as_deref(),
            Some(br#"{"topic":{"name":"orders-topic","connector":"my-jdbc-source","task":0,"discoverTimestamp":1589972451234}}"#.as_slice())
        );
        write(&mut writer, &wt, &[r, f, topic], false, true).await;
        log.capture(&cluster, STATUS_TOPIC, STATUS_PARTITIONS);
        reader.read_to_end().await.unwrap();
        let snap = reader.machine().snapshot();
        assert_eq!(snap.connector(c), Some(&running(w1, 1)));
        let tasks: Vec<(i32, Status)> = snap.tasks(c).map(|(n, s)| (n, s.clone())).collect();
        let mut failed = status(Failed, w1, 3);
        failed.trace = Some(TRACE.into());
        assert_eq!(tasks, vec![(0, status(Unassigned, w2, 3)), (1, failed)]);
        let topic_status = TopicStatus::new("orders-topic", c, 0, 1_589_972_451_234);
        assert_eq!(snap.topic(c, "orders-topic"), Some(&topic_status));

        // Java's onDeletion: task tombstones (ascending), then the connector's.
        let deletion = writer.machine().deletion_records(c);
        let keys: Vec<&[u8]> = deletion.iter().map(|r| r.key.as_slice()).collect();
        assert_eq!(
            keys,
            [
                b"status-task-my-jdbc-source-0".as_slice(),
                b"status-task-my-jdbc-source-1",
                b"status-connector-my-jdbc-source"
            ]
        );
        assert!(deletion.iter().all(|r| r.value.is_none() && r.partition.is_none()));
        write(&mut writer, &wt, &deletion, false, true).await;
        log.capture(&cluster, STATUS_TOPIC, STATUS_PARTITIONS);
        let events = reader.read_to_end().await.unwrap();
        let removed = events
            .iter()
            .filter(|e| matches!(e, StatusEvent::ConnectorRemoved { connector } if connector == c))
            .count();
        assert_eq!(removed, 1);
        let snap = reader.machine().snapshot();
        assert_eq!(snap.connector(c), None);
        assert_eq!(snap.all_tasks().count(), 0);
        let topics: Vec<(&str, &TopicStatus)> = snap.topics(c).collect();
        assert_eq!(topics, vec![("orders-topic", &topic_status)]);

        // A connector tombstone alone also drops task statuses it was never told about.
        let t2 = prepared(&writer, StatusUpdate::for_task(c, 2, Running, w1, 4), false).unwrap();
        write(&mut writer, &wt, &[t2], false, true).await;
        log.capture(&cluster, STATUS_TOPIC, STATUS_PARTITIONS);
        reader.read_to_end().await.unwrap();
        assert_eq!(reader.machine().snapshot().task(c, 2), Some(&running(w1, 4)));
        let tomb = StatusUpdate::for_connector(c, StatusState::Destroyed, w1, 4).record();
        assert_eq!(tomb.value, None);
        write(&mut writer, &wt, &[tomb], false, true).await;
        log.capture(&cluster, STATUS_TOPIC, STATUS_PARTITIONS);
        reader.read_to_end().await.unwrap();
        assert_eq!(reader.machine().snapshot().all_tasks().count(), 0);
        // ...and the topic row stays.
        assert_eq!(reader.machine().snapshot().topic(c, "orders-topic"), Some(&topic_status));

        // After compaction a fresh reader agrees (tombstones are retained: the clock is 0).
        roll_and_clean(&cluster, STATUS_TOPIC, STATUS_PARTITIONS);
        let mut late: Store<StatusLog, _> = store(
            STATUS_TOPIC,
            TopicKind::Status,
            reader_transport(&cluster, 3, FetchFault::CleanAll),
        );
        late.start().await.unwrap();
        assert_eq!(late.machine().snapshot(), reader.machine().snapshot());
        log.capture(&cluster, STATUS_TOPIC, STATUS_PARTITIONS);
        check_consumed(&rt.consumed(), &log).unwrap();
    });
}

/// Property 2 by hand: exact records and bodies, duplicate recordActiveTopic writes, the 403s,
/// a reset that writes one tombstone per topic, and a reset from a lagging cache missing a topic
/// (spec §6 item 10).
#[test]
fn active_topics_hand_written_scenario() {
    let tracking = TopicTracking::default();
    runtime().block_on(async {
        let cluster = new_cluster(11, STATUS_TOPIC, STATUS_PARTITIONS, 4);
        let wt = Arc::new(MemoryTransport::new(Arc::clone(&cluster)));
        let mut writer: Store<StatusLog, _> =
            store(STATUS_TOPIC, TopicKind::Status, Arc::clone(&wt));
        writer.start().await.unwrap();
        let mut log = LogCapture::default();

        let first = writer
            .machine()
            .record_active_topic(SINK, "orders", 0, 1_000, &tracking)
            .unwrap();
        assert_eq!(first.key, b"status-topic-orders:connector-my-sink");
        assert_eq!(
            first.value.as_deref(),
            Some(br#"{"topic":{"name":"orders","connector":"my-sink","task":0,"discoverTimestamp":1000}}"#.as_slice())
        );
        assert_eq!(first.partition, None);
        write(&mut writer, &wt, &[first], false, false).await;
        // Not read back yet: Java writes again (spec §6 item 11).
        let again = writer
            .machine()
            .record_active_topic(SINK, "orders", 1, 1_001, &tracking)
            .unwrap();
        write(&mut writer, &wt, &[again], false, true).await;
        assert_eq!(
            writer.machine().record_active_topic(SINK, "orders", 0, 1_002, &tracking),
            None
        );
        let off = TopicTracking {
            enable: false,
            allow_reset: true,
        };
        assert_eq!(writer.machine().record_active_topic(SINK, "x", 0, 0, &off), None);
        let payments = topic_status_record(&TopicStatus::new("payments", SINK, 1, 2_000));
        let other = topic_status_record(&TopicStatus::new("orders", OTHER, 0, 3_000));
        write(&mut writer, &wt, &[payments, other], false, true).await;
        log.capture(&cluster, STATUS_TOPIC, STATUS_PARTITIONS);
        assert_eq!(log.records.len(), 4);

        let rt = reader_transport(&cluster, 2, FetchFault::CleanAll);
        let mut reader: Store<StatusLog, _> =
            store(STATUS_TOPIC, TopicKind::Status, Arc::clone(&rt));
        reader.start().await.unwrap();
        let active = reader.machine().snapshot().active_topics(SINK, &tracking).unwrap();
        assert_eq!(
            serde_json::to_string(&active).unwrap(),
            r#"{"my-sink":{"topics":["orders","payments"]}}"#
        );
        // The second recordActiveTopic won: task 1 at 1001.
        assert_eq!(
            reader.machine().snapshot().topic(SINK, "orders"),
            Some(&TopicStatus::new("orders", SINK, 1, 1_001))
        );

        // 403s, tracking checked first; nothing written.
        let before = lock(&cluster).clone();
        let reset_off = TopicTracking {
            enable: true,
            allow_reset: false,
        };
        let both_off = TopicTracking {
            enable: false,
            allow_reset: false,
        };
        let e = reader.machine().snapshot().reset_active_topics(SINK, &both_off).unwrap_err();
        assert_eq!(e, TopicTrackingError::Disabled);
        assert_eq!(
            serde_json::to_string(&Answer::tracking_refused(e).body).unwrap(),
            r#"{"error_code":403,"message":"Topic tracking is disabled."}"#
        );
        let e = reader.machine().snapshot().reset_active_topics(SINK, &reset_off).unwrap_err();
        let answer = Answer::tracking_refused(e);
        assert_eq!(answer.status, 403);
        assert_eq!(e.message(), "Topic tracking reset is disabled.");
        assert_eq!(
            reader.machine().snapshot().active_topics(SINK, &off),
            Err(TopicTrackingError::Disabled)
        );
        assert!(*lock(&cluster) == before);

        // The reset: one tombstone per active topic.
        let reset = reader.machine().snapshot().reset_active_topics(SINK, &tracking).unwrap();
        assert_eq!(
            reset,
            vec![
                ProducerRecord {
                    key: b"status-topic-orders:connector-my-sink".to_vec(),
                    value: None,
                    partition: None
                },
                ProducerRecord {
                    key: b"status-topic-payments:connector-my-sink".to_vec(),
                    value: None,
                    partition: None
                },
            ]
        );
        write(&mut writer, &wt, &reset, false, true).await;
        let appended = log.capture(&cluster, STATUS_TOPIC, STATUS_PARTITIONS);
        let keys: BTreeSet<Vec<u8>> = appended.iter().map(|a| a.key.clone()).collect();
        assert_eq!(appended.len(), 2);
        assert_eq!(keys, reset.iter().map(|r| r.key.clone()).collect());
        reader.read_to_end().await.unwrap();
        let active = reader.machine().snapshot().active_topics(SINK, &tracking).unwrap();
        assert_eq!(serde_json::to_string(&active).unwrap(), r#"{"my-sink":{"topics":[]}}"#);
        let snap = reader.machine().snapshot();
        assert!(snap.topic_connectors().any(|c| c == SINK));
        assert_eq!(
            snap.topic(OTHER, "orders"),
            Some(&TopicStatus::new("orders", OTHER, 0, 3_000))
        );
        // A repeated reset writes nothing.
        assert_eq!(reader.machine().snapshot().reset_active_topics(SINK, &tracking), Ok(Vec::new()));

        // A reset from a cache that has not read "logs" yet misses it.
        let logs = topic_status_record(&TopicStatus::new("logs", SINK, 0, 4_000));
        write(&mut writer, &wt, &[logs], false, false).await;
        assert_eq!(reader.machine().snapshot().reset_active_topics(SINK, &tracking), Ok(Vec::new()));
        reader.read_to_end().await.unwrap();
        let active = reader.machine().snapshot().active_topics(SINK, &tracking).unwrap();
        assert_eq!(active.topics, vec!["logs".to_owned()]);
        log.capture(&cluster, STATUS_TOPIC, STATUS_PARTITIONS);
        check_consumed(&rt.consumed(), &log).unwrap();
    });
}

fn s(v: &str) -> JsonValue {
    JsonValue::String(v.into())
}

fn position(n: i64) -> Option<Vec<u8>> {
    Some(format!("{{\"position\":{n}}}").into_bytes())
}

/// Property 3 by hand: exact keys and values, Map.equals partition sets, the KIP-875 listing
/// and reset, with a key written in non-`HashMap` member order (spec §6 item 2: its record
/// survives the reset) and a record on a non-default partition (its tombstone follows it).
#[test]
fn offsets_hand_written_scenario() {
    runtime().block_on(async {
        let cluster = new_cluster(3, OFFSETS_TOPIC, OFFSETS_PARTITIONS, 2);
        let wt = Arc::new(MemoryTransport::new(Arc::clone(&cluster)));
        let mut writer: Store<OffsetLog, _> =
            store(OFFSETS_TOPIC, TopicKind::Offsets, Arc::clone(&wt));
        writer.start().await.unwrap();
        let mut log = LogCapture::default();
        let key = |c: &str, members: &[(&str, JsonValue)]| {
            offset_key(c, Some(&OrderedMap::new(members.iter().cloned()))).unwrap()
        };
        // `table` before `database`: not Java's HashMap order (database, table).
        let orders = key("jdbc", &[("table", s("orders")), ("database", s("db"))]);
        assert_eq!(orders, br#"["jdbc",{"table":"orders","database":"db"}]"#);
        let items = key("jdbc", &[("database", s("db")), ("table", s("items"))]);
        let csv = key("file-source", &[("filename", s("orders.csv"))]);
        let gone = key("file-source", &[("filename", s("gone.csv"))]);
        let default = |k: &[u8]| default_partition(k, OFFSETS_PARTITIONS).unwrap();
        let elsewhere = (default(&items) + 1) % OFFSETS_PARTITIONS;
        let rec = |key: &[u8], value: Option<Vec<u8>>, partition: Option<i32>| ProducerRecord {
            key: key.to_vec(),
            value,
            partition,
        };
        let writes = [
            rec(&orders, position(1), None),
            rec(&orders, position(2), None),
            rec(&csv, position(20), None),
            rec(&gone, position(5), None),
            rec(&gone, None, None),
            rec(&items, position(7), Some(elsewhere)),
        ];
        for (i, r) in writes.iter().enumerate() {
            write(&mut writer, &wt, std::slice::from_ref(r), i == 1, false).await;
        }
        log.capture(&cluster, OFFSETS_TOPIC, OFFSETS_PARTITIONS);
        assert_eq!(log.records.len(), 7);

        let rt = reader_transport(&cluster, 1, FetchFault::CleanRandomly { probability: 0.5 });
        let mut reader: Store<OffsetLog, _> =
            store(OFFSETS_TOPIC, TopicKind::Offsets, Arc::clone(&rt));
        reader.start().await.unwrap();
        let snap = reader.machine().snapshot();
        let data: BTreeMap<Vec<u8>, (i32, Vec<u8>)> = snap
            .entries()
            .map(|(k, v)| (k.unwrap().to_vec(), (v.partition(), v.value().to_vec())))
            .collect();
        let want: BTreeMap<Vec<u8>, (i32, Vec<u8>)> = [
            (orders.clone(), (default(&orders), position(2).unwrap())),
            (csv.clone(), (default(&csv), position(20).unwrap())),
            (items.clone(), (elsewhere, position(7).unwrap())),
        ]
        .into_iter()
        .collect();
        assert_eq!(data, want);
        let object = |members: &[(&str, JsonValue)]| -> JsonObject {
            members.iter().map(|(k, v)| ((*k).to_owned(), v.clone())).collect()
        };
        let jdbc: Vec<JsonObject> = snap.connector_partitions("jdbc").collect();
        let items_p = object(&[("database", s("db")), ("table", s("items"))]);
        let orders_p = object(&[("database", s("db")), ("table", s("orders"))]);
        assert_eq!(jdbc, vec![items_p.clone(), orders_p.clone()]);
        let files: Vec<JsonObject> = snap.connector_partitions("file-source").collect();
        assert_eq!(files, vec![object(&[("filename", s("orders.csv"))])]);

        // The listing re-serializes in HashMap order: the `orders` key is not found.
        let listing = serde_json::to_string(&kip875::list(&snap, "jdbc")).unwrap();
        assert_eq!(
            listing,
            r#"{"offsets":[{"partition":{"database":"db","table":"items"},"offset":{"position":7}},{"partition":{"database":"db","table":"orders"},"offset":null}]}"#
        );

        // The reset: HashMap-ordered keys; the live one follows its record to `elsewhere`.
        let reset = kip875::reset_records(&snap, "jdbc", OFFSETS_PARTITIONS).unwrap();
        let hash_ordered = br#"["jdbc",{"database":"db","table":"orders"}]"#.to_vec();
        assert_eq!(
            reset,
            vec![
                rec(&items, None, Some(elsewhere)),
                rec(&hash_ordered, None, Some(default(&hash_ordered))),
            ]
        );
        let files = kip875::reset_records(&snap, "file-source", OFFSETS_PARTITIONS).unwrap();
        assert_eq!(files, vec![rec(&csv, None, Some(default(&csv)))]);
        assert_eq!(kip875::reset_records(&snap, "nobody", OFFSETS_PARTITIONS), Ok(Vec::new()));
        write(&mut writer, &wt, &[reset, files].concat(), false, true).await;
        log.capture(&cluster, OFFSETS_TOPIC, OFFSETS_PARTITIONS);
        reader.read_to_end().await.unwrap();
        let snap = reader.machine().snapshot();
        assert!(kip875::list(&snap, "jdbc").offsets.is_empty());
        assert!(kip875::list(&snap, "file-source").offsets.is_empty());
        // The record written in the connector's own member order survives (spec §6 item 2).
        let left: Vec<(Vec<u8>, Vec<u8>)> = snap
            .entries()
            .map(|(k, v)| (k.unwrap().to_vec(), v.value().to_vec()))
            .collect();
        assert_eq!(left, vec![(orders.clone(), position(2).unwrap())]);
        check_offsets_state(&snap, &rt.consumed(), &log).unwrap();
    });
}

/// Property 4 by hand: one fixed run of each kind, twice.
#[test]
fn determinism_hand_written_scenario() {
    let step = |op, duplicate| StatusStep {
        op,
        duplicate,
        read_back: true,
    };
    let put = |connector, task, state, worker, generation| StatusOp::Put {
        connector,
        task,
        state,
        worker,
        generation,
    };
    let status = StatusRun {
        seed: 42,
        steps: vec![
            step(put(1, None, StatusState::Running, 0, 1), false),
            step(put(1, Some(0), StatusState::Running, 0, 2), true),
            step(put(1, Some(0), StatusState::Unassigned, 1, 1), false),
            step(StatusOp::Roll { partition: 0 }, false),
            step(StatusOp::ReaderCatchUp, false),
            step(put(2, Some(1), StatusState::Failed, 1, 3), false),
            step(
                StatusOp::Topic {
                    connector: 1,
                    topic: 0,
                    task: 0,
                },
                false,
            ),
            step(StatusOp::DeleteConnector { connector: 1 }, true),
            step(StatusOp::Clean, false),
            step(put(0, Some(2), StatusState::Paused, 0, 4), false),
        ],
        reader_start: 2,
        fetch_size: 1,
        fetch_fault: FetchFault::CleanRandomly { probability: 0.5 },
        segment_records: 1,
    };
    let (a, b) = (run_status(&status), run_status(&status));
    check_status(&a).unwrap();
    assert_eq!(a.snapshot, b.snapshot);
    assert_eq!(a.events, b.events);
    assert_eq!(a.consumed, b.consumed);
    assert!(a.cluster == b.cluster);
    let snap = &a.snapshot;
    assert_eq!(snap.connector("my-jdbc-source"), None);
    assert_eq!(
        snap.task("edge-", 1).map(|s| s.state),
        Some(StatusState::Failed)
    );
    assert_eq!(
        snap.task("orders", 2),
        Some(&status_of(StatusState::Paused, 0, 4))
    );
    assert_eq!(snap.topics("my-jdbc-source").count(), 1);

    let write_op =
        |connector, partition: Vec<(usize, JsonValue)>, offset, duplicate| OffsetOp::Write {
            connector,
            partition: Some(partition),
            offset,
            misplaced: None,
            duplicate,
            read_back: false,
        };
    let offsets = OffsetsRun {
        seed: 42,
        ops: vec![
            write_op(
                0,
                vec![(0, s("a")), (1, JsonValue::Long(1))],
                Some(1),
                false,
            ),
            write_op(0, vec![(1, JsonValue::Long(1)), (0, s("a"))], Some(2), true),
            OffsetOp::Roll { partition: 3 },
            OffsetOp::ReaderCatchUp,
            write_op(1, vec![(2, s("orders.csv"))], None, false),
            write_op(2, vec![(2, s("a"))], Some(9), false),
            OffsetOp::Clean,
        ],
        reader_start: 1,
        fetch_size: 2,
        fetch_fault: FetchFault::CleanAll,
        segment_records: 1,
    };
    let (a, b) = (run_offsets(&offsets), run_offsets(&offsets));
    check_offsets(&a).unwrap();
    assert_eq!(a.before_reset, b.before_reset);
    assert_eq!(a.snapshot, b.snapshot);
    assert_eq!(a.events, b.events);
    assert_eq!(a.consumed, b.consumed);
    assert!(a.cluster == b.cluster);
    assert_eq!(a.before_reset.len(), 3);
    let sets: Vec<usize> = OFFSET_CONNECTORS
        .iter()
        .map(|c| a.before_reset.connector_partitions(c).count())
        .collect();
    // file-source's two keys are one partition map; jdbc's only write was a tombstone.
    assert_eq!(sets, vec![1, 0, 1]);
}

fn status_of(state: StatusState, worker: usize, generation: i32) -> Status {
    status(state, WORKERS[worker], generation)
}

/// The cross-key rule depends on the reader's interleaving of partitions (why property 1
/// follows the consumed order): a connector deleted and re-created, its task status written
/// again after the connector tombstone. The task's key lives on a lower partition than the
/// connector's, and the store reads partitions in ascending order, so a reader of the whole
/// log applies the connector tombstone *after* the new task status and drops it, while the
/// writer, which read each write back, keeps it. Compacting the connector's partition removes
/// the tombstone and brings the task status back. Java's consumer interleaves partitions
/// arbitrarily too, so its readers can disagree the same way.
#[test]
fn connector_tombstone_on_a_later_partition_drops_a_newer_task_status() {
    use StatusState::Running;
    let c = "orders";
    let (conn_p, task_p) = (
        default_partition(b"status-connector-orders", STATUS_PARTITIONS).unwrap(),
        default_partition(b"status-task-orders-0", STATUS_PARTITIONS).unwrap(),
    );
    assert!(task_p < conn_p, "the scenario needs the task key first");
    runtime().block_on(async {
        let cluster = new_cluster(5, STATUS_TOPIC, STATUS_PARTITIONS, 16);
        let wt = Arc::new(MemoryTransport::new(Arc::clone(&cluster)));
        let mut writer: Store<StatusLog, _> =
            store(STATUS_TOPIC, TopicKind::Status, Arc::clone(&wt));
        writer.start().await.unwrap();
        let put = |connector: Option<i32>, generation| match connector {
            None => StatusUpdate::for_connector(c, Running, "w1:8083", generation).record(),
            Some(n) => StatusUpdate::for_task(c, n, Running, "w1:8083", generation).record(),
        };
        write(
            &mut writer,
            &wt,
            &[put(None, 1), put(Some(0), 1)],
            false,
            true,
        )
        .await;
        let deletion = writer.machine().deletion_records(c);
        assert_eq!(deletion.len(), 2);
        write(&mut writer, &wt, &deletion, false, true).await;
        write(&mut writer, &wt, &[put(None, 2)], false, true).await;
        write(&mut writer, &wt, &[put(Some(0), 2)], false, true).await;
        assert_eq!(
            writer.machine().snapshot().task(c, 0),
            Some(&running("w1:8083", 2))
        );

        let mut reader: Store<StatusLog, _> = store(
            STATUS_TOPIC,
            TopicKind::Status,
            Arc::new(MemoryTransport::new(Arc::clone(&cluster))),
        );
        reader.start().await.unwrap();
        let snap = reader.machine().snapshot();
        assert_eq!(snap.connector(c), Some(&running("w1:8083", 2)));
        assert_eq!(snap.task(c, 0), None);

        roll_and_clean(&cluster, STATUS_TOPIC, STATUS_PARTITIONS);
        let mut fresh: Store<StatusLog, _> = store(
            STATUS_TOPIC,
            TopicKind::Status,
            Arc::new(MemoryTransport::new(Arc::clone(&cluster))),
        );
        fresh.start().await.unwrap();
        assert_eq!(
            fresh.machine().snapshot().task(c, 0),
            Some(&running("w1:8083", 2))
        );
    });
}
