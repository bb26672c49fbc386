//! Deterministic synthetic topics for the benchmarks (`connect-state bench`, `cargo bench`) and
//! tests: a config topic with repeated reconfigurations, a status topic with churn and an offsets
//! topic with many source partitions.
//!
//! Every record is built by the core's write side ([`engine::config::write`],
//! [`engine::status::StatusUpdate`], [`engine::offsets::offset_key`] / [`offset_value`]), so the
//! bytes are exactly those a Java worker writes; status and offsets records go to the partition
//! Java's default partitioner picks. The same [`Scale`] and seed always give the same records
//! (the seeded [`Rng`]; no external randomness).

use std::collections::{BTreeMap, BTreeSet};

use engine::config::write::{
    put_connector_config, put_restart_request, put_session_key, put_target_state, put_task_configs,
    remove_connector_config, StepAction, WritePlan,
};
use engine::config::TargetState;
use engine::json::java_map::hash_map_order;
use engine::json::JsonValue;
use engine::offsets::{default_partition, offset_key, offset_value, OrderedMap};
use engine::status::write::{topic_status_record, topic_tombstone, StatusUpdate};
use engine::status::{StatusState, TopicStatus};
use engine::{OwnedRecord, ProducerRecord};

/// Partitions of the generated status topic (Connect's default for `status.storage.topic`).
pub const STATUS_PARTITIONS: i32 = 5;
/// Partitions of the generated offsets topic (Connect's default for `offset.storage.topic`).
pub const OFFSETS_PARTITIONS: i32 = 25;

/// The seeded generator every synthetic topic (and the demo, and the simulator) draws from:
/// `fastrand`'s, so the same seed gives the same records.
pub type Rng = fastrand::Rng;

/// True with probability `percent`/100.
fn chance(rng: &mut Rng, percent: u8) -> bool {
    rng.u8(0..100) < percent
}

/// SplitMix64's finalizer: a stateless 64-bit hash.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// How big the generated topics are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scale {
    /// Live connectors of the config and status topics (each with 1-16 tasks).
    pub connectors: usize,
    /// Reconfiguration rounds of the config topic after the first configuration: each rewrites
    /// every connector's tasks (and some connector configs) and commits them.
    pub config_rounds: usize,
    /// Rebalance rounds of the status topic after the first start.
    pub status_rounds: usize,
    /// Distinct source partitions (keys) of the offsets topic.
    pub offsets_partitions: u64,
}

impl Scale {
    /// For tests: a few hundred milliseconds.
    pub const TINY: Self = Self {
        connectors: 20,
        config_rounds: 3,
        status_rounds: 4,
        offsets_partitions: 2_000,
    };
    /// For `cargo bench`: criterion runs each benchmark many times.
    pub const SMALL: Self = Self {
        connectors: 100,
        config_rounds: 5,
        status_rounds: 10,
        offsets_partitions: 50_000,
    };
    /// `connect-state bench`'s default: about two minutes on 2 cores.
    pub const DEFAULT: Self = Self {
        connectors: 1_000,
        config_rounds: 5,
        status_rounds: 10,
        offsets_partitions: 1_000_000,
    };
    /// The full sizes: 10,000 connectors and 10,000,000 source partitions (several GB
    /// of memory).
    pub const FULL: Self = Self {
        connectors: 10_000,
        config_rounds: 5,
        status_rounds: 10,
        offsets_partitions: 10_000_000,
    };
}

/// Appends producer records to a topic, placing each on its partition with the next offset.
struct TopicBuilder {
    partitions: i32,
    next_offsets: Vec<i64>,
    records: Vec<OwnedRecord>,
}

impl TopicBuilder {
    fn new(partitions: i32) -> Self {
        Self {
            partitions,
            next_offsets: vec![0; partitions.max(1) as usize],
            records: Vec::new(),
        }
    }

    fn push(&mut self, record: ProducerRecord) {
        let partition = place(&record, self.partitions);
        let slot = &mut self.next_offsets[partition as usize];
        self.records.push(OwnedRecord {
            key: Some(record.key),
            value: record.value,
            partition,
            offset: *slot,
            timestamp: None,
        });
        *slot += 1;
    }

    /// Appends the records of a plan, moved out of it (no copies left behind to be freed).
    fn plan(&mut self, plan: WritePlan) {
        for step in plan.steps {
            if let StepAction::Produce { records, .. } = step.action {
                for record in records {
                    self.push(record);
                }
            }
        }
    }
}

/// The partition a producer record goes to: its own, or Java's default partitioner's.
fn place(record: &ProducerRecord, partitions: i32) -> i32 {
    record
        .partition
        .or_else(|| default_partition(&record.key, partitions))
        .unwrap_or(0)
}

/// Properties in the iteration order of the Java `HashMap` they were put into.
fn java_order(props: Vec<(String, String)>) -> Vec<(String, String)> {
    let names: Vec<&str> = props.iter().map(|(k, _)| k.as_str()).collect();
    let order = hash_map_order(&names);
    let mut slots: Vec<Option<(String, String)>> = props.into_iter().map(Some).collect();
    order
        .into_iter()
        .filter_map(|i| slots.get_mut(i).and_then(Option::take))
        .collect()
}

fn as_pairs(props: &[(String, String)]) -> impl Iterator<Item = (&str, Option<&str>)> + '_ {
    props.iter().map(|(k, v)| (k.as_str(), Some(v.as_str())))
}

/// The kinds of generated connectors: name stem, connector class, task class.
const KINDS: [(&str, &str, &str); 4] = [
    (
        "jdbc-source",
        "io.confluent.connect.jdbc.JdbcSourceConnector",
        "io.confluent.connect.jdbc.source.JdbcSourceTask",
    ),
    (
        "s3-sink",
        "io.confluent.connect.s3.S3SinkConnector",
        "io.confluent.connect.s3.S3SinkTask",
    ),
    (
        "file-source",
        "org.apache.kafka.connect.file.FileStreamSourceConnector",
        "org.apache.kafka.connect.file.FileStreamSourceTask",
    ),
    (
        "mirror-source",
        "org.apache.kafka.connect.mirror.MirrorSourceConnector",
        "org.apache.kafka.connect.mirror.MirrorSourceTask",
    ),
];

fn connector_name(i: usize) -> String {
    format!("{}-{i:05}", KINDS[i % KINDS.len()].0)
}

/// About 20 connector properties (in Java `HashMap` order); `version` changes some values.
fn connector_properties(i: usize, version: u64, rng: &mut Rng) -> Vec<(String, String)> {
    let (_, class, _) = KINDS[i % KINDS.len()];
    let name = connector_name(i);
    let p = |k: &str, v: String| (k.to_string(), v);
    let props = vec![
        p("name", name.clone()),
        p("connector.class", class.into()),
        p("tasks.max", "16".into()),
        p(
            "key.converter",
            "org.apache.kafka.connect.storage.StringConverter".into(),
        ),
        p(
            "value.converter",
            "io.confluent.connect.avro.AvroConverter".into(),
        ),
        p(
            "value.converter.schema.registry.url",
            "http://schema-registry.internal:8081".into(),
        ),
        p("errors.tolerance", "all".into()),
        p("errors.log.enable", "true".into()),
        p("errors.log.include.messages", "false".into()),
        p("errors.deadletterqueue.topic.name", format!("dlq-{name}")),
        p("transforms", "route,insertTs".into()),
        p(
            "transforms.route.type",
            "org.apache.kafka.connect.transforms.RegexRouter".into(),
        ),
        p("transforms.route.regex", "(.*)".into()),
        p("transforms.route.replacement", format!("{name}.$1")),
        p(
            "transforms.insertTs.type",
            "org.apache.kafka.connect.transforms.InsertField$Value".into(),
        ),
        p("transforms.insertTs.timestamp.field", "ingested_at".into()),
        p(
            "connection.url",
            format!("jdbc:postgresql://db-{:03}.internal:5432/warehouse", i % 97),
        ),
        p("connection.user", "connect".into()),
        p(
            "connection.password",
            "${file:/etc/kafka/secrets/db.properties:password}".into(),
        ),
        p("batch.max.rows", format!("{}", 100 * (1 + (version % 10)))),
        p(
            "poll.interval.ms",
            format!("{}", 1_000 + rng.u64(0..9) * 500),
        ),
        p("config.version", format!("{version}")),
    ];
    java_order(props)
}

/// The task configs of connector `i`: its properties plus the task class and an assignment.
fn task_properties(
    i: usize,
    connector: &[(String, String)],
    tasks: usize,
) -> Vec<Vec<(String, String)>> {
    let (_, _, task_class) = KINDS[i % KINDS.len()];
    (0..tasks)
        .map(|t| {
            let mut props: Vec<(String, String)> = connector
                .iter()
                .filter(|(k, _)| k != "tasks.max" && k != "transforms" && !k.starts_with("errors."))
                .cloned()
                .collect();
            props.push(("task.class".into(), task_class.into()));
            let assigned: Vec<String> = (0..3)
                .map(|k| format!("warehouse.public.table_{:04}", t * 3 + k))
                .collect();
            props.push(("tables".into(), assigned.join(",")));
            props.push(("task.id".into(), format!("{t}")));
            java_order(props)
        })
        .collect()
}

/// A generated config topic and what replaying it must give.
#[derive(Debug, Clone)]
pub struct ConfigTopic {
    /// The records, all on partition 0, offsets from 0.
    pub records: Vec<OwnedRecord>,
    /// Each live connector and its committed task count.
    pub task_counts: BTreeMap<String, i32>,
    /// Connectors created and later removed (their task and commit records stay).
    pub removed: Vec<String>,
}

/// A config topic: `scale.connectors` connectors with 1-16 tasks of about 20 properties, then
/// `scale.config_rounds` rounds of reconfiguration (new task configs and a commit for every
/// connector, a new connector config for some), pauses and resumes, restart requests, session
/// key rotations, and 2% more connectors that are created and removed halfway.
pub fn config_topic(scale: &Scale, seed: u64) -> ConfigTopic {
    let mut rng = Rng::with_seed(seed ^ 0xC0FF_1C00);
    let mut topic = TopicBuilder::new(1);
    let extra = (scale.connectors / 50).max(1);
    let total = scale.connectors + extra;
    let removal_round = scale.config_rounds.div_ceil(2);
    let mut versions = vec![0u64; total];
    let mut configs: Vec<Vec<(String, String)>> = vec![Vec::new(); total];
    let mut task_counts = BTreeMap::new();
    let mut paused = vec![false; total];
    let mut removed = Vec::new();
    for round in 0..=scale.config_rounds {
        let mut key = [0u8; 32];
        for chunk in key.chunks_mut(8) {
            chunk.copy_from_slice(&rng.u64(..).to_le_bytes()[..chunk.len()]);
        }
        let created = 1_700_000_000_000 + 3_600_000 * round as i64;
        if let Ok(plan) = put_session_key(&key, "HmacSHA256", created) {
            topic.plan(plan);
        }
        let mut order: Vec<usize> = (0..total).collect();
        rng.shuffle(&mut order);
        for i in order {
            let name = connector_name(i);
            let is_extra = i >= scale.connectors;
            if is_extra && round > removal_round {
                continue;
            }
            if is_extra && round == removal_round {
                topic.plan(remove_connector_config(&name));
                removed.push(name);
                continue;
            }
            if round == 0 || chance(&mut rng, 40) {
                versions[i] += 1;
                configs[i] = connector_properties(i, versions[i], &mut rng);
                let initial = (round == 0 && chance(&mut rng, 5)).then_some(TargetState::Paused);
                paused[i] |= initial.is_some();
                topic.plan(put_connector_config(&name, as_pairs(&configs[i]), initial));
            }
            let tasks = 1 + rng.u64(0..16) as usize;
            let task_configs = task_properties(i, &configs[i], tasks);
            topic.plan(put_task_configs(
                &name,
                task_configs.iter().map(|t| as_pairs(t)),
            ));
            if !is_extra {
                task_counts.insert(name.clone(), tasks as i32);
            }
            if chance(&mut rng, 5) {
                paused[i] = !paused[i];
                let state = if paused[i] {
                    TargetState::Paused
                } else {
                    TargetState::Started
                };
                topic.plan(put_target_state(&name, state));
            }
            if chance(&mut rng, 2) {
                topic.plan(put_restart_request(&name, chance(&mut rng, 50), true));
            }
        }
    }
    ConfigTopic {
        records: topic.records,
        task_counts,
        removed,
    }
}

/// What a compacted topic converges to once tombstones expire: the latest record of each key
/// (per partition), in offset order, without tombstones. Offsets are kept (with gaps).
pub fn compacted(records: &[OwnedRecord]) -> Vec<OwnedRecord> {
    let mut latest: BTreeMap<(i32, Option<&[u8]>), usize> = BTreeMap::new();
    for (i, r) in records.iter().enumerate() {
        latest.insert((r.partition, r.key.as_deref()), i);
    }
    records
        .iter()
        .enumerate()
        .filter(|(i, r)| {
            r.value.is_some() && latest.get(&(r.partition, r.key.as_deref())) == Some(i)
        })
        .map(|(_, r)| r.clone())
        .collect()
}

/// A generated status topic and what replaying it must give.
#[derive(Debug, Clone)]
pub struct StatusTopic {
    /// The records, on [`STATUS_PARTITIONS`] partitions as Java's partitioner places them.
    pub records: Vec<OwnedRecord>,
    /// Connectors with a status at the end.
    pub connectors: usize,
    /// Task statuses at the end.
    pub tasks: usize,
    /// Live KIP-558 topic records at the end.
    pub topics: usize,
}

const TRACE: &str = "org.apache.kafka.connect.errors.ConnectException: \
    java.sql.SQLTransientConnectionException: Connection is not available, request timed out \
    after 30000ms.\n\tat io.confluent.connect.jdbc.source.JdbcSourceTask.poll(JdbcSourceTask.java:432)\n\t\
    at org.apache.kafka.connect.runtime.AbstractWorkerSourceTask.poll(AbstractWorkerSourceTask.java:488)\n\t\
    at org.apache.kafka.connect.runtime.AbstractWorkerSourceTask.execute(AbstractWorkerSourceTask.java:360)\n\t\
    at org.apache.kafka.connect.runtime.WorkerTask.doRun(WorkerTask.java:229)\n\t\
    at org.apache.kafka.connect.runtime.WorkerTask.run(WorkerTask.java:284)\n\t\
    at java.base/java.util.concurrent.ThreadPoolExecutor.runWorker(ThreadPoolExecutor.java:1136)\n\t\
    at java.base/java.lang.Thread.run(Thread.java:840)\n";

fn worker(n: u64) -> String {
    format!("10.0.{}.{}:8083", n / 250, 10 + n % 250)
}

/// A status topic with churn: `scale.connectors` connectors with 1-16 tasks on 8 workers, then
/// `scale.status_rounds` rebalances in which about half of the connectors move (the old worker
/// writes UNASSIGNED with the old generation, the new one RUNNING with the new), task failures
/// with traces and restarts, pauses, KIP-558 topic records and resets, and at the end 2% of the
/// connectors deleted (task tombstones, then the connector tombstone).
pub fn status_topic(scale: &Scale, seed: u64) -> StatusTopic {
    const WORKERS: u64 = 8;
    let mut rng = Rng::with_seed(seed ^ 0x57A7_0500);
    let mut topic = TopicBuilder::new(STATUS_PARTITIONS);
    let n = scale.connectors;
    let names: Vec<String> = (0..n).map(connector_name).collect();
    let tasks: Vec<i32> = (0..n).map(|_| 1 + rng.u64(0..16) as i32).collect();
    let mut workers: Vec<u64> = (0..n).map(|_| rng.u64(0..WORKERS)).collect();
    let mut live_topics: BTreeSet<(String, String)> = BTreeSet::new();
    let mut next_topic = vec![0u32; n];
    let mut generation = 1;
    let put = |topic: &mut TopicBuilder, update: StatusUpdate| topic.push(update.record());
    let mut add_topic = |topic: &mut TopicBuilder,
                         live: &mut BTreeSet<(String, String)>,
                         i: usize,
                         task: i32,
                         ts: i64| {
        let name = format!("{}.table_{:04}", names[i], next_topic[i]);
        next_topic[i] += 1;
        topic.push(topic_status_record(&TopicStatus::new(
            name.clone(),
            names[i].clone(),
            task,
            ts,
        )));
        live.insert((names[i].clone(), name));
    };
    // The first start.
    for i in 0..n {
        let w = worker(workers[i]);
        put(
            &mut topic,
            StatusUpdate::for_connector(&names[i], StatusState::Running, &w, generation),
        );
        for t in 0..tasks[i] {
            put(
                &mut topic,
                StatusUpdate::for_task(&names[i], t, StatusState::Running, &w, generation),
            );
        }
        for _ in 0..1 + rng.u64(0..3) {
            add_topic(&mut topic, &mut live_topics, i, 0, 1_700_000_000_000);
        }
    }
    for round in 1..=scale.status_rounds {
        let old_generation = generation;
        generation += 1;
        let ts = 1_700_000_000_000 + 60_000 * round as i64;
        let mut order: Vec<usize> = (0..n).collect();
        rng.shuffle(&mut order);
        for i in order {
            let name = &names[i];
            if chance(&mut rng, 50) {
                // Rebalance: the old worker stops everything, the new one starts it.
                let old = worker(workers[i]);
                workers[i] = rng.u64(0..WORKERS);
                let new = worker(workers[i]);
                put(
                    &mut topic,
                    StatusUpdate::for_connector(
                        name,
                        StatusState::Unassigned,
                        &old,
                        old_generation,
                    ),
                );
                for t in 0..tasks[i] {
                    put(
                        &mut topic,
                        StatusUpdate::for_task(
                            name,
                            t,
                            StatusState::Unassigned,
                            &old,
                            old_generation,
                        ),
                    );
                }
                put(
                    &mut topic,
                    StatusUpdate::for_connector(name, StatusState::Running, &new, generation),
                );
                for t in 0..tasks[i] {
                    put(
                        &mut topic,
                        StatusUpdate::for_task(name, t, StatusState::Running, &new, generation),
                    );
                }
            }
            let w = worker(workers[i]);
            if chance(&mut rng, 10) {
                // A task fails, is restarted, and runs again.
                let t = rng.u64(0..tasks[i] as u64) as i32;
                put(
                    &mut topic,
                    StatusUpdate::for_task(name, t, StatusState::Failed, &w, generation)
                        .with_trace(TRACE),
                );
                put(
                    &mut topic,
                    StatusUpdate::for_task(name, t, StatusState::Restarting, &w, generation),
                );
                put(
                    &mut topic,
                    StatusUpdate::for_task(name, t, StatusState::Running, &w, generation),
                );
            }
            if chance(&mut rng, 5) {
                // Paused and resumed.
                for state in [StatusState::Paused, StatusState::Running] {
                    put(
                        &mut topic,
                        StatusUpdate::for_connector(name, state, &w, generation),
                    );
                    for t in 0..tasks[i] {
                        put(
                            &mut topic,
                            StatusUpdate::for_task(name, t, state, &w, generation),
                        );
                    }
                }
            }
            if chance(&mut rng, 5) {
                let task = rng.u64(0..tasks[i] as u64) as i32;
                add_topic(&mut topic, &mut live_topics, i, task, ts);
            }
            if chance(&mut rng, 2) {
                // Topic tracking reset: one tombstone per active topic.
                let active: Vec<(String, String)> = live_topics
                    .range((name.clone(), String::new())..)
                    .take_while(|(c, _)| c == name)
                    .cloned()
                    .collect();
                for entry in active {
                    topic.push(topic_tombstone(&entry.0, &entry.1));
                    live_topics.remove(&entry);
                }
            }
        }
    }
    // Deleted connectors: task tombstones, then the connector tombstone (Java's order).
    let deleted = n / 50;
    let mut live_tasks = 0usize;
    for i in 0..n {
        if i < deleted {
            let w = worker(workers[i]);
            for t in 0..tasks[i] {
                put(
                    &mut topic,
                    StatusUpdate::for_task(&names[i], t, StatusState::Destroyed, &w, generation),
                );
            }
            put(
                &mut topic,
                StatusUpdate::for_connector(&names[i], StatusState::Destroyed, &w, generation),
            );
        } else {
            live_tasks += tasks[i] as usize;
        }
    }
    StatusTopic {
        records: topic.records,
        connectors: n - deleted,
        tasks: live_tasks,
        topics: live_topics.len(),
    }
}

/// What a generated offsets topic holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OffsetsCounts {
    /// Records in the topic.
    pub records: u64,
    /// Keys live at the end (source partitions minus the tombstoned ones).
    pub live: u64,
}

/// The offsets topic's phases: every partition's first offset, then updates of about 10%,
/// then tombstones of about 1%.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    First,
    Update,
    Tombstone,
}

/// Source connectors of an offsets topic with `partitions` source partitions.
fn offsets_connectors(partitions: u64) -> u64 {
    (partitions / 10_000).max(4).min(partitions.max(1))
}

fn offsets_hash(seed: u64, i: u64) -> u64 {
    mix(seed.wrapping_mul(0x2545_F491_4F6C_DD1D) ^ i.wrapping_add(0x0FF5_E750))
}

fn is_updated(h: u64) -> bool {
    h % 10 == 0
}

fn is_tombstoned(h: u64) -> bool {
    (h >> 16) % 100 == 0
}

/// The record counts of [`offsets_topic`] without generating it.
pub fn offsets_counts(partitions: u64, seed: u64) -> OffsetsCounts {
    let mut counts = OffsetsCounts {
        records: partitions,
        live: partitions,
    };
    for i in 0..partitions {
        let h = offsets_hash(seed, i);
        counts.records += u64::from(is_updated(h)) + u64::from(is_tombstoned(h));
        counts.live -= u64::from(is_tombstoned(h));
    }
    counts
}

/// The offsets topic as a stream: records are generated one at a time, so the generator holds
/// almost nothing. See [`offsets_topic`].
#[derive(Debug, Clone)]
pub struct OffsetsStream {
    seed: u64,
    partitions: u64,
    connectors: u64,
    phase: Phase,
    next: u64,
    next_offsets: [i64; OFFSETS_PARTITIONS as usize],
}

/// An offsets topic with `scale.offsets_partitions` source partitions of four kinds of source
/// connectors (file names, JDBC tables, MirrorMaker topic partitions, object-store keys), about
/// one connector per 10,000 partitions: each partition's offset once, then updates of about 10%
/// of them, then tombstones (KIP-875 resets) of about 1%.
pub fn offsets_topic(scale: &Scale, seed: u64) -> OffsetsStream {
    OffsetsStream {
        seed,
        partitions: scale.offsets_partitions,
        connectors: offsets_connectors(scale.offsets_partitions),
        phase: Phase::First,
        next: 0,
        next_offsets: [0; OFFSETS_PARTITIONS as usize],
    }
}

impl OffsetsStream {
    /// The key and value of source partition `i` in `phase`.
    fn build(&self, i: u64, h: u64, phase: Phase) -> (Vec<u8>, Option<Vec<u8>>) {
        let c = i % self.connectors;
        let j = i / self.connectors;
        let s = |v: String| JsonValue::String(v);
        let position = (h >> 20) % 1_000_000_000 + if phase == Phase::Update { 5_000 } else { 0 };
        let (connector, partition, offset) = match c % 4 {
            0 => (
                format!("file-source-{c:04}"),
                OrderedMap::new([(
                    "filename",
                    s(format!("/var/spool/ingest/{c:04}/part-{j:08}.csv")),
                )]),
                OrderedMap::new([("position", JsonValue::Long(position as i64))]),
            ),
            1 => (
                format!("jdbc-source-{c:04}"),
                OrderedMap::new([
                    ("protocol", s("1".into())),
                    ("table", s(format!("warehouse.public.table_{j:07}"))),
                ]),
                OrderedMap::new([
                    (
                        "timestamp_nanos",
                        JsonValue::Long((position % 1_000_000) as i64 * 1000),
                    ),
                    ("incrementing", JsonValue::Long(position as i64)),
                    (
                        "timestamp",
                        JsonValue::Long(1_700_000_000_000 + position as i64),
                    ),
                ]),
            ),
            2 => (
                format!("mirror-source-{c:04}"),
                OrderedMap::new([
                    ("cluster", s("us-east-1".into())),
                    ("partition", JsonValue::Long((j % 64) as i64)),
                    ("topic", s(format!("orders-{:06}", j / 64))),
                ]),
                OrderedMap::new([("offset", JsonValue::Long(position as i64))]),
            ),
            _ => (
                format!("s3-source-{c:04}"),
                OrderedMap::new([
                    ("bucket", s(format!("lake-{c:04}"))),
                    (
                        "key",
                        s(format!("events/2024/{:03}/{j:08}.json.gz", j % 366)),
                    ),
                ]),
                OrderedMap::new([
                    ("offset", JsonValue::Long(position as i64)),
                    ("eof", JsonValue::Bool(position % 2 == 0)),
                ]),
            ),
        };
        // Both maps hold only primitives, which is all validation checks.
        let key = offset_key(&connector, Some(&partition)).unwrap_or_default();
        let value = match phase {
            Phase::Tombstone => None,
            _ => offset_value(Some(&offset)).unwrap_or_default(),
        };
        (key, value)
    }
}

impl Iterator for OffsetsStream {
    type Item = OwnedRecord;

    fn next(&mut self) -> Option<OwnedRecord> {
        loop {
            if self.next >= self.partitions {
                self.phase = match self.phase {
                    Phase::First => Phase::Update,
                    Phase::Update => Phase::Tombstone,
                    Phase::Tombstone => return None,
                };
                self.next = 0;
                continue;
            }
            let i = self.next;
            self.next += 1;
            let h = offsets_hash(self.seed, i);
            let wanted = match self.phase {
                Phase::First => true,
                Phase::Update => is_updated(h),
                Phase::Tombstone => is_tombstoned(h),
            };
            if !wanted {
                continue;
            }
            let (key, value) = self.build(i, h, self.phase);
            let partition = default_partition(&key, OFFSETS_PARTITIONS).unwrap_or(0);
            let slot = &mut self.next_offsets[partition as usize];
            let offset = *slot;
            *slot += 1;
            return Some(OwnedRecord {
                key: Some(key),
                value,
                partition,
                offset,
                timestamp: None,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::config::ConfigLog;
    use engine::offsets::OffsetLog;
    use engine::status::{StatusLog, StatusSkip};
    use engine::RecordOutcome;

    #[test]
    fn config_topic_replays_to_the_expected_snapshot() {
        let scale = Scale::TINY;
        let topic = config_topic(&scale, 7);
        let mut log = ConfigLog::new();
        for r in &topic.records {
            assert!(log.handle_record(r.as_record()).unwrap().is_applied());
        }
        let snapshot = log.snapshot();
        let connectors: Vec<&str> = snapshot.connectors().collect();
        assert_eq!(connectors.len(), scale.connectors);
        assert_eq!(topic.task_counts.len(), scale.connectors);
        assert_eq!(snapshot.inconsistent_connectors().count(), 0);
        for (name, &count) in &topic.task_counts {
            assert!(snapshot.contains(name), "{name}");
            assert_eq!(snapshot.task_count(name), count, "{name}");
            assert_eq!(snapshot.tasks(name).len(), count as usize, "{name}");
            let props = snapshot.connector_config(name).unwrap();
            assert!(props.len() >= 20, "{name}: {} properties", props.len());
        }
        for name in &topic.removed {
            assert!(!snapshot.contains(name));
        }
        assert!(!topic.removed.is_empty());
        assert!(snapshot.session_key().is_some());
        // Compacted, it still holds every connector, consistent.
        let compacted = compacted(&topic.records);
        assert!(compacted.len() * 2 < topic.records.len());
        let mut log = ConfigLog::new();
        for r in &compacted {
            let outcome = log.handle_record(r.as_record()).unwrap();
            // Only the leftovers of removed connectors (KAFKA-16838 ghosts) are skipped.
            let key = String::from_utf8_lossy(r.key.as_deref().unwrap_or_default());
            let ghost = topic.removed.iter().any(|c| key.ends_with(c.as_str()));
            assert!(outcome.is_applied() || ghost, "{outcome:?} {key}");
        }
        let after = log.snapshot();
        assert_eq!(after.connectors().count(), scale.connectors);
        assert_eq!(after.inconsistent_connectors().count(), 0);
        for (name, &count) in &topic.task_counts {
            assert_eq!(after.task_count(name), count, "{name}");
            assert_eq!(
                after.connector_config(name),
                snapshot.connector_config(name)
            );
        }
        // Deterministic, and the seed matters.
        assert_eq!(config_topic(&scale, 7).records, topic.records);
        assert_ne!(config_topic(&scale, 8).records, topic.records);
    }

    #[test]
    fn config_values_are_javas_bytes() {
        let topic = config_topic(&Scale::TINY, 1);
        let commit = topic
            .records
            .iter()
            .find(|r| r.key.as_deref().unwrap_or_default().starts_with(b"commit-"))
            .unwrap();
        let text = std::str::from_utf8(commit.value.as_deref().unwrap()).unwrap();
        assert!(text.starts_with("{\"tasks\":"), "{text}");
        let config = topic
            .records
            .iter()
            .find(|r| {
                r.key
                    .as_deref()
                    .unwrap_or_default()
                    .starts_with(b"connector-")
            })
            .unwrap();
        let text = std::str::from_utf8(config.value.as_deref().unwrap()).unwrap();
        assert!(text.starts_with("{\"properties\":{"), "{text}");
        let offsets: Vec<i64> = topic.records.iter().map(|r| r.offset).collect();
        assert!(offsets.iter().enumerate().all(|(i, &o)| o == i as i64));
    }

    #[test]
    fn status_topic_replays_to_the_expected_snapshot() {
        let scale = Scale::TINY;
        let topic = status_topic(&scale, 7);
        let mut log = StatusLog::new();
        let mut stale = 0;
        for r in &topic.records {
            assert!(r.partition < STATUS_PARTITIONS);
            match log.handle_record(r.as_record()).unwrap() {
                RecordOutcome::Applied => {}
                // The old worker's UNASSIGNED after the rebalance (KAFKA-12525).
                RecordOutcome::Skipped(StatusSkip::StaleUnassigned) => stale += 1,
                other => panic!("{other:?}"),
            }
        }
        assert!(stale > 0);
        let snapshot = log.snapshot();
        assert_eq!(snapshot.connectors().count(), topic.connectors);
        assert_eq!(topic.connectors, scale.connectors - scale.connectors / 50);
        assert_eq!(snapshot.all_tasks().count(), topic.tasks);
        assert_eq!(snapshot.all_topics().count(), topic.topics);
        assert!(topic.topics > 0);
        assert!(topic.records.iter().any(|r| r.value.is_none()));
        assert!(snapshot
            .connectors()
            .all(|(_, s)| s.state == StatusState::Running));
    }

    #[test]
    fn offsets_stream_replays_to_the_expected_entries() {
        let scale = Scale::TINY;
        let counts = offsets_counts(scale.offsets_partitions, 3);
        let mut log = OffsetLog::new();
        let mut records = 0u64;
        for r in offsets_topic(&scale, 3) {
            records += 1;
            assert!(log.handle_record(r.as_record()).unwrap().is_applied());
        }
        assert_eq!(records, counts.records);
        assert!(counts.records > scale.offsets_partitions);
        assert!(counts.live < scale.offsets_partitions);
        let snapshot = log.snapshot();
        assert_eq!(snapshot.len() as u64, counts.live);
        assert_eq!(log.diagnostics().untracked_keys(), 0);
        let partitions: usize = snapshot
            .connectors()
            .map(|c| snapshot.connector_partitions(c).count())
            .sum();
        assert_eq!(partitions as u64, counts.live);
        assert_eq!(
            offsets_topic(&scale, 3).take(50).collect::<Vec<_>>(),
            offsets_topic(&scale, 3).take(50).collect::<Vec<_>>()
        );
    }
}
