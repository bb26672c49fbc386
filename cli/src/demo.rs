//! `connect-state demo`: the story of a Connect cluster, told on the in-memory simulator.
//!
//! Nothing here is scripted output: every table is what the library computes at that point of a
//! real run. Workers are [`Store`]s over [`MemoryTransport`]s sharing one [`MemoryCluster`];
//! they write with the core's write side (config [`WritePlan`]s run by [`ConfigStore::execute`],
//! `StatusLog::prepare_put`, KIP-558 tracking, [`OffsetWriter`] flushes and KIP-875 reset
//! records) and read with the core's machines. The leader really crashes part-way through a
//! produce ([`ProduceFault::CrashAfter`]), the cleaner really compacts the log, the fresh worker
//! is flagged inconsistent by the core's own diagnostics, and convergence is checked by
//! comparing the readers' snapshots; a story that does not happen as told is an error.
//!
//! The seed picks the names, the task counts, where the leader crashes, which sink task fails,
//! the fresh worker's fetch size and the offsets. The shape of the story is fixed, and the same
//! seed gives byte-identical output.
//!
//! [`demo_cluster`] runs the same story silently and hands back the final cluster (for a REST
//! view over it).

use core::fmt::Write as _;
use std::collections::BTreeMap;
use std::io::Write;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use clap::Args;
use connect_state_memory::{
    LogRecord, MemoryCluster, MemoryTransport, ProduceFault, DEFAULT_DELETE_RETENTION_MS,
};
use connect_state_store::{
    ConfigStore, ProduceMode, Store, StoreError, StoreSettings, TopicDefaults, TopicKind,
};
use engine::checkpoint::check_fresh;
use engine::config::write::{self as config_write, WritePlan};
use engine::config::{
    ConfigEvent, ConfigLog, ConfigSnapshot, ConfigSnapshotJson, TargetState, MAX_LISTED_TASKS,
};
use engine::json::JsonValue;
use engine::offsets::{kip875, FlushCompletion, OffsetLog, OffsetWriter, OrderedMap};
use engine::status::{StatusLog, StatusState, StatusUpdate, TopicTracking};
use engine::ProducerRecord;
use serde_json::{json, Value};

use crate::common::{CliError, Exit, Format};
use crate::rest;
use crate::table;
use crate::view::View;

/// The seed of `connect-state demo` without `--seed`.
pub const DEFAULT_SEED: u64 = 7;
/// The demo cluster's config topic (`config.storage.topic`).
pub const CONFIG_TOPIC: &str = "connect-configs";
/// The demo cluster's status topic (`status.storage.topic`).
pub const STATUS_TOPIC: &str = "connect-status";
/// The demo cluster's offsets topic (`offset.storage.topic`).
pub const OFFSETS_TOPIC: &str = "connect-offsets";

/// Java's default partition count of the offsets topic (reset records need it).
const OFFSETS_PARTITIONS: i32 = 25;
/// Logical milliseconds between two steps of the story.
const STEP_MS: u64 = 60_000;
/// Added to the simulator's logical clock for timestamps that look like epoch milliseconds.
const EPOCH_MS: i64 = 1_717_200_000_000;
/// The group generation of the rebalance after the new leader took over.
const GENERATION: i32 = 5;
/// Tables the reconfigured source copies at first (one more appears later).
const SHARDS: usize = 6;
/// A task failure trace, as a Java worker writes it.
const TRACE: &str = "org.apache.kafka.connect.errors.ConnectException: connection refused\n\t\
    at io.confluent.connect.jdbc.sink.JdbcSinkTask.put(JdbcSinkTask.java:121)\n";

/// `connect-state demo` arguments.
#[derive(Debug, Clone, Args)]
pub struct DemoArgs {
    /// Vary the story (names, task counts, where the leader crashes, offsets, cleaning); the
    /// same seed always prints the same story.
    #[arg(long, default_value_t = DEFAULT_SEED, value_name = "SEED")]
    pub seed: u64,
    /// Output format: the readable story, or `{"seed", "steps": [..], "final": {..}}` with each
    /// step's text and the final snapshots in the JSON contract.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

/// The in-memory cluster the demo leaves behind, for views over it.
#[derive(Debug, Clone)]
pub struct DemoCluster {
    /// The seed it was built with.
    pub seed: u64,
    /// The simulated cluster; build [`MemoryTransport`]s over it to read or write.
    pub cluster: Arc<Mutex<MemoryCluster>>,
    /// The config topic's name.
    pub config_topic: String,
    /// The status topic's name.
    pub status_topic: String,
    /// The offsets topic's name.
    pub offsets_topic: String,
}

/// Runs the demo story for `seed` without printing and returns the cluster it ends with: three
/// connectors (one reconfigured after a leader crash, then stopped with its offsets reset), their
/// statuses, and the remaining offsets.
pub fn demo_cluster(seed: u64) -> Result<DemoCluster, CliError> {
    Ok(tell(seed)?.cluster)
}

/// Tells the story for `args.seed` on `out`.
pub fn run(args: DemoArgs, out: &mut dyn Write) -> Result<Exit, CliError> {
    let story = tell(args.seed)?;
    match args.format {
        Format::Table => out.write_all(story.text().as_bytes())?,
        Format::Json => writeln!(out, "{}", serde_json::to_string_pretty(&story.json())?)?,
    }
    Ok(Exit::Success)
}

// ---------------------------------------------------------------------------------------------
// The told story.

struct Step {
    part: &'static str,
    title: String,
    text: String,
    body: String,
}

struct Story {
    seed: u64,
    steps: Vec<Step>,
    final_json: Value,
    readers: usize,
    cluster: DemoCluster,
}

impl Story {
    fn text(&self) -> String {
        let mut out = format!(
            "connect-state demo (seed {}): a Kafka Connect cluster on the in-memory simulator.\n\
             Every table below is computed by the library at that point of the run.\n",
            self.seed
        );
        let mut part = "";
        for (i, step) in self.steps.iter().enumerate() {
            if step.part != part {
                part = step.part;
                let _ = write!(out, "\n== {part} ==\n");
            }
            let _ = write!(out, "\n{}. {}\n", i + 1, step.title);
            for line in wrap(&step.text, 96) {
                let _ = writeln!(out, "   {line}");
            }
            if !step.body.is_empty() {
                out.push('\n');
                for line in step.body.lines() {
                    if line.is_empty() {
                        out.push('\n');
                    } else {
                        let _ = writeln!(out, "   {line}");
                    }
                }
            }
        }
        let _ = write!(
            out,
            "\nThe end: {} readers agree on all three topics. Try another story with --seed.\n",
            self.readers
        );
        out
    }

    fn json(&self) -> Value {
        let steps: Vec<Value> = self
            .steps
            .iter()
            .enumerate()
            .map(|(i, s)| {
                json!({
                    "step": i + 1,
                    "part": s.part,
                    "title": s.title,
                    "text": s.text,
                    "output": s.body,
                })
            })
            .collect();
        json!({
            "seed": self.seed,
            "steps": steps,
            "readers_agree": self.readers,
            "final": self.final_json,
        })
    }
}

/// `text` wrapped at 96 columns, as lines of a step's output.
fn para(text: &str) -> String {
    let mut out = String::new();
    for line in wrap(text, 96) {
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// Greedy word wrap.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            lines.push(core::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

// ---------------------------------------------------------------------------------------------
// What the seed varies.

struct Choices {
    /// The source connector that is reconfigured, hit by the crash, stopped and reset.
    source: String,
    /// The source connector that is paused (and later resumed).
    paused: String,
    /// The sink connector whose active topics are tracked and reset.
    sink: String,
    /// Tables of the sources (`source`'s shard prefix, `paused`'s).
    source_table: String,
    paused_table: String,
    first_tasks: usize,
    reconfigured_tasks: usize,
    crash_after: usize,
    failed_task: i32,
    fresh_fetch: usize,
    positions: Vec<i64>,
}

impl Choices {
    fn new(seed: u64) -> Self {
        const SOURCES: [&str; 6] = [
            "orders",
            "payments",
            "inventory",
            "invoices",
            "shipments",
            "customers",
        ];
        const SINKS: [&str; 4] = ["warehouse", "search", "audit", "lake"];
        let mut rng = connect_state_ops::synth::Rng::with_seed(seed);
        let a = rng.usize(0..SOURCES.len());
        let b = (a + rng.usize(1..SOURCES.len())) % SOURCES.len();
        let sink = SINKS[rng.usize(0..SINKS.len())];
        let first_tasks = rng.usize(2..=3);
        let reconfigured_tasks = first_tasks + rng.usize(1..=2);
        let crash_after = rng.usize(1..reconfigured_tasks);
        let failed_task = i32::from(rng.bool());
        let fresh_fetch = rng.usize(1..=4);
        let positions = (0..=SHARDS + 1).map(|_| rng.i64(1_000..=99_999)).collect();
        Self {
            source: format!("{}-source", SOURCES[a]),
            paused: format!("{}-source", SOURCES[b]),
            sink: format!("{sink}-sink"),
            source_table: SOURCES[a].to_string(),
            paused_table: SOURCES[b].to_string(),
            first_tasks,
            reconfigured_tasks,
            crash_after,
            failed_task,
            fresh_fetch,
            positions,
        }
    }

    /// The tables of the reconfigured source: `SHARDS` of them, and one more once the new
    /// table appears.
    fn shards(&self, new_table: bool) -> Vec<String> {
        (0..SHARDS + usize::from(new_table))
            .map(|i| format!("{}_p{i}", self.source_table))
            .collect()
    }

    /// The topics the sink consumes.
    fn sink_topics(&self) -> [String; 3] {
        [
            format!("shop.{}_p0", self.source_table),
            format!("shop.{}_p1", self.source_table),
            format!("shop.{}_main", self.paused_table),
        ]
    }
}

// ---------------------------------------------------------------------------------------------
// Workers.

type Transport = MemoryTransport;

/// One Connect worker: a transport to the cluster and a store per internal topic.
struct Worker {
    id: String,
    transport: Arc<Transport>,
    config: ConfigStore<Transport>,
    status: Store<StatusLog, Transport>,
    offsets: Store<OffsetLog, Transport>,
}

fn failed(what: &str) -> impl FnOnce(StoreError) -> CliError + '_ {
    move |e| CliError::Input(format!("demo: {what}: {e}"))
}

fn broken(message: String) -> CliError {
    CliError::Input(format!("demo: the story did not happen as told: {message}"))
}

fn lock(cluster: &Mutex<MemoryCluster>) -> MutexGuard<'_, MemoryCluster> {
    cluster.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Worker {
    /// A worker that starts (creating missing topics as Connect does) and reads every topic.
    async fn join(
        cluster: &Arc<Mutex<MemoryCluster>>,
        id: &str,
        config: ConfigLog,
        fetch: Option<usize>,
    ) -> Result<Self, CliError> {
        let mut transport = MemoryTransport::new(Arc::clone(cluster));
        if let Some(max) = fetch {
            transport = transport.with_max_fetch_records(max);
        }
        let transport = Arc::new(transport);
        let mut worker = Self {
            id: id.to_string(),
            config: Store::new(
                StoreSettings::new(CONFIG_TOPIC, TopicKind::Config),
                Arc::clone(&transport),
                config,
            ),
            status: Store::new(
                StoreSettings::new(STATUS_TOPIC, TopicKind::Status),
                Arc::clone(&transport),
                StatusLog::new(),
            ),
            offsets: Store::new(
                StoreSettings::new(OFFSETS_TOPIC, TopicKind::Offsets),
                Arc::clone(&transport),
                OffsetLog::new(),
            ),
            transport,
        };
        let what = format!("{id} starting");
        worker.config.start().await.map_err(failed(&what))?;
        worker.status.start().await.map_err(failed(&what))?;
        worker.offsets.start().await.map_err(failed(&what))?;
        Ok(worker)
    }

    /// Reads every topic to its end; returns the config events.
    async fn catch_up(&mut self) -> Result<Vec<ConfigEvent>, CliError> {
        let what = format!("{} reading", self.id);
        let events = self.config.read_to_end().await.map_err(failed(&what))?;
        self.status.read_to_end().await.map_err(failed(&what))?;
        self.offsets.read_to_end().await.map_err(failed(&what))?;
        Ok(events)
    }

    async fn execute(&mut self, plan: &WritePlan) -> Result<Vec<ConfigEvent>, CliError> {
        let what = format!("{} writing to the config topic", self.id);
        self.config
            .execute(plan, false)
            .await
            .map_err(failed(&what))
    }

    /// `put` (or `putSafe`) of a status; `false` when `putSafe` refused it.
    async fn put_status(&mut self, update: StatusUpdate, safe: bool) -> Result<bool, CliError> {
        let Some(pending) = self.status.machine_mut().prepare_put(update, safe) else {
            return Ok(false);
        };
        self.write_status(&[pending.into_record()]).await?;
        Ok(true)
    }

    async fn write_status(&mut self, records: &[ProducerRecord]) -> Result<(), CliError> {
        let what = format!("{} writing to the status topic", self.id);
        self.status
            .write(
                records,
                ProduceMode::Plain,
                true,
                "Failed to write status update",
            )
            .await
            .map_err(failed(&what))?;
        Ok(())
    }

    async fn write_offsets(&mut self, records: &[ProducerRecord]) -> Result<(), CliError> {
        let what = format!("{} writing to the offsets topic", self.id);
        self.offsets
            .write(records, ProduceMode::Plain, true, "Failed to write offsets")
            .await
            .map_err(failed(&what))?;
        Ok(())
    }

    fn config_snapshot(&self) -> ConfigSnapshot {
        self.config.machine().snapshot()
    }
}

// ---------------------------------------------------------------------------------------------
// Small views of the state, computed from the snapshots.

/// The `demo.batch` tag of each task a snapshot lists for `connector`.
fn batches(snapshot: &ConfigSnapshot, connector: &str) -> Vec<String> {
    snapshot
        .tasks(connector)
        .take(MAX_LISTED_TASKS as usize)
        .map(|id| {
            snapshot
                .task_config(&id)
                .and_then(|p| p.get_str("demo.batch"))
                .unwrap_or("?")
                .to_string()
        })
        .collect()
}

/// One row per worker: what it believes about `connector`.
fn readers_table(workers: &[&Worker], connector: &str) -> String {
    let rows: Vec<Vec<String>> = workers
        .iter()
        .map(|w| {
            let snap = w.config_snapshot();
            let tags = batches(&snap, connector);
            let mut distinct = tags.clone();
            distinct.dedup();
            let (tasks, from) = if snap.is_inconsistent(connector) {
                let missing = w
                    .config
                    .machine()
                    .diagnostics()
                    .inconsistency(connector)
                    .map(|why| ids(&why.missing_tasks))
                    .unwrap_or_default();
                (
                    "none (inconsistent)".to_string(),
                    format!("missing task ids {missing}"),
                )
            } else {
                (tags.len().to_string(), distinct.join(","))
            };
            vec![
                w.id.clone(),
                snap.offset().to_string(),
                snap.target_state(connector)
                    .map_or("-".into(), |s| s.to_string()),
                tasks,
                from,
            ]
        })
        .collect();
    table::render(
        &["WORKER", "NEXT-OFFSET", "STATE", "TASKS", "FROM WRITE"],
        &rows,
    )
}

fn ids(ids: &[i32]) -> String {
    ids.iter()
        .map(i32::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

fn event_lines(worker: &str, events: &[ConfigEvent]) -> String {
    let mut out = String::new();
    for e in events {
        let line = match e {
            ConfigEvent::ConnectorConfigUpdated { connector } => {
                format!("onConnectorConfigUpdate({connector})")
            }
            ConfigEvent::ConnectorConfigRemoved { connector } => {
                format!("onConnectorConfigRemove({connector})")
            }
            ConfigEvent::TaskConfigsUpdated { connector, tasks } => {
                format!("onTaskConfigUpdate({connector}: tasks [{}])", ids(tasks))
            }
            ConfigEvent::TargetStateChanged { connector, state } => {
                format!("onConnectorTargetStateChange({connector} -> {state})")
            }
            other => format!("{other:?}"),
        };
        let _ = writeln!(out, "{worker} heard: {line}");
    }
    out
}

/// What a worker acts on, for the convergence check: per connector its config, target state,
/// inconsistency and the listed tasks with their configs, plus the offset read to. (Generations
/// count the commits a reader happened to read, and stale configs of tasks beyond the count stay
/// in readers that saw them, so both legitimately differ between readers of a compacted log.)
fn config_view(snapshot: &ConfigSnapshot) -> Result<Value, CliError> {
    let full = serde_json::to_value(ConfigSnapshotJson(snapshot))?;
    let mut connectors = serde_json::Map::new();
    for c in snapshot.connectors() {
        let tasks: Vec<Value> = snapshot
            .tasks(c)
            .take(MAX_LISTED_TASKS as usize)
            .map(|id| {
                json!({
                    "task": id.task,
                    "config": full["task_configs"][c][id.task.to_string()],
                })
            })
            .collect();
        connectors.insert(
            c.to_string(),
            json!({
                "config": full["connector_configs"][c],
                "target_state": full["target_states"][c],
                "inconsistent": snapshot.is_inconsistent(c),
                "tasks": tasks,
            }),
        );
    }
    Ok(json!({ "offset": snapshot.offset(), "connectors": connectors }))
}

/// The status snapshot in the JSON contract, without connectors whose every active topic was
/// tombstoned: Java keeps such an empty row in a reader that saw the topics, while a reader that
/// only read the tombstones never creates it; both answer `GET …/topics` with `[]`.
fn status_view(log: &StatusLog) -> Result<Value, CliError> {
    let mut json = log.snapshot_json()?;
    if let Some(topics) = json.get_mut("topics").and_then(Value::as_object_mut) {
        topics.retain(|_, row| row.as_object().is_none_or(|r| !r.is_empty()));
    }
    Ok(json)
}

/// Checks that every worker agrees on every topic; returns how many do.
fn check_agreement(workers: &[&Worker]) -> Result<usize, CliError> {
    let Some(first) = workers.first() else {
        return Ok(0);
    };
    let config = config_view(&first.config_snapshot())?;
    let status = status_view(first.status.machine())?;
    let offsets = first.offsets.machine().snapshot_json()?;
    for w in &workers[1..] {
        if config_view(&w.config_snapshot())? != config {
            return Err(broken(format!(
                "{} and {} disagree on the config topic",
                first.id, w.id
            )));
        }
        if status_view(w.status.machine())? != status {
            return Err(broken(format!(
                "{} and {} disagree on the status topic",
                first.id, w.id
            )));
        }
        if w.offsets.machine().snapshot_json()? != offsets {
            return Err(broken(format!(
                "{} and {} disagree on the offsets topic",
                first.id, w.id
            )));
        }
    }
    Ok(workers.len())
}

fn names(workers: &[&Worker]) -> String {
    workers
        .iter()
        .map(|w| w.id.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// A short, printable form of a record value.
fn short(value: Option<&[u8]>, width: usize) -> String {
    let Some(bytes) = value else {
        return "(tombstone)".into();
    };
    let text = String::from_utf8_lossy(bytes);
    if text.chars().count() <= width {
        text.into_owned()
    } else {
        let cut: String = text.chars().take(width.saturating_sub(1)).collect();
        format!("{cut}…")
    }
}

fn key_text(record: &LogRecord) -> String {
    record
        .key
        .as_deref()
        .map_or("(none)".into(), |k| String::from_utf8_lossy(k).into_owned())
}

/// The `demo.batch` of a task record's value, or the value itself.
fn record_summary(record: &LogRecord) -> String {
    let parsed: Option<Value> = record
        .value
        .as_deref()
        .and_then(|v| serde_json::from_slice(v).ok());
    match parsed
        .as_ref()
        .and_then(|v| v["properties"]["demo.batch"].as_str())
    {
        Some(batch) => format!("task config of write {batch}"),
        None => short(record.value.as_deref(), 48),
    }
}

fn source_config(
    name: &str,
    table: &str,
    tasks: usize,
    topic_prefix: &str,
) -> Vec<(&'static str, String)> {
    vec![
        (
            "connector.class",
            "io.confluent.connect.jdbc.JdbcSourceConnector".into(),
        ),
        ("name", name.into()),
        ("tasks.max", tasks.to_string()),
        ("connection.url", "jdbc:postgresql://db:5432/shop".into()),
        ("mode", "incrementing".into()),
        ("incrementing.column.name", "id".into()),
        ("table.whitelist", format!("{table}_*")),
        ("topic.prefix", topic_prefix.into()),
    ]
}

fn put_config(name: &str, props: &[(&'static str, String)]) -> WritePlan {
    config_write::put_connector_config(
        name,
        props.iter().map(|(k, v)| (*k, Some(v.as_str()))),
        None,
    )
}

/// Task configs of a source: the tables dealt round-robin over `tasks` tasks, each tagged with
/// the write (`demo.batch`) that produced it.
fn source_tasks(connector: &str, tables: &[String], tasks: usize, batch: &str) -> WritePlan {
    let configs: Vec<Vec<(&'static str, String)>> = (0..tasks)
        .map(|t| {
            let mine: Vec<&str> = tables
                .iter()
                .enumerate()
                .filter(|(i, _)| i % tasks == t)
                .map(|(_, name)| name.as_str())
                .collect();
            vec![
                (
                    "task.class",
                    "io.confluent.connect.jdbc.source.JdbcSourceTask".into(),
                ),
                ("tables", mine.join(",")),
                ("demo.batch", batch.into()),
            ]
        })
        .collect();
    task_plan(connector, &configs)
}

fn task_plan(connector: &str, configs: &[Vec<(&'static str, String)>]) -> WritePlan {
    config_write::put_task_configs(
        connector,
        configs
            .iter()
            .map(|c| c.iter().map(|(k, v)| (*k, Some(v.as_str())))),
    )
}

/// Adds a step; runs of blank lines in its output become one, and it ends with one newline.
fn push(steps: &mut Vec<Step>, part: &'static str, title: String, text: String, body: String) {
    let mut tidy = String::new();
    let mut blank = true;
    for line in body.lines() {
        let empty = line.trim().is_empty();
        if !(empty && blank) {
            tidy.push_str(if empty { "" } else { line });
            tidy.push('\n');
        }
        blank = empty;
    }
    while tidy.ends_with("\n\n") {
        tidy.pop();
    }
    steps.push(Step {
        part,
        title,
        text,
        body: tidy,
    });
}

fn tick(cluster: &Mutex<MemoryCluster>) -> i64 {
    let mut c = lock(cluster);
    c.advance_clock(STEP_MS);
    c.now_ms()
}

/// Rolls every partition of `topic` (so everything is cleanable) and cleans it at the default
/// horizon; returns how many records were removed.
fn compact(cluster: &Mutex<MemoryCluster>, topic: &str) -> Result<usize, CliError> {
    let mut c = lock(cluster);
    let partitions = c.describe_topic(topic).map_or(0, |t| t.partitions);
    let mut removed = 0;
    for p in 0..partitions {
        c.roll_segment(topic, p)
            .map_err(|e| broken(format!("rolling {topic}: {e}")))?;
    }
    for pass in c
        .clean_all(topic)
        .map_err(|e| broken(format!("cleaning {topic}: {e}")))?
    {
        removed += pass.removed;
    }
    Ok(removed)
}

/// Tombstones still in a topic.
fn count_tombstones(cluster: &Mutex<MemoryCluster>, topic: &str) -> usize {
    let c = lock(cluster);
    let partitions = c.describe_topic(topic).map_or(0, |t| t.partitions);
    (0..partitions)
        .flat_map(|p| c.records(topic, p).unwrap_or_default())
        .filter(|r| r.key.is_some() && r.value.is_none())
        .count()
}

/// Records still in a topic and records ever written (the sum of the high watermarks).
fn record_counts(cluster: &Mutex<MemoryCluster>, topic: &str) -> (usize, i64, i32) {
    let c = lock(cluster);
    let partitions = c.describe_topic(topic).map_or(0, |t| t.partitions);
    let mut left = 0;
    let mut written = 0;
    for p in 0..partitions {
        left += c.records(topic, p).map_or(0, |r| r.len());
        written += c.high_watermark(topic, p).unwrap_or(0);
    }
    (left, written, partitions)
}

fn tell(seed: u64) -> Result<Story, CliError> {
    let runtime = crate::common::runtime()?;
    runtime.block_on(story(seed))
}

/// One task's offsets flush: its worker, its connector and the position reached per table.
type Flush<'a> = (usize, &'a str, Vec<(String, i64)>);

/// Who runs what after the rebalance that follows the new leader's rewrite (indexes into the
/// workers `connect-1..4`).
const LEADER: usize = 1;

/// The demo's shared, seeded driver: what the seed chose, the simulated cluster, and the story
/// told so far. Each step of the story is one function over it, in order.
struct Demo {
    ch: Choices,
    cluster: Arc<Mutex<MemoryCluster>>,
    steps: Vec<Step>,
    part: &'static str,
}

impl Demo {
    fn new(seed: u64) -> Self {
        Self {
            ch: Choices::new(seed),
            cluster: Arc::new(Mutex::new(MemoryCluster::new(seed))),
            steps: Vec::new(),
            part: "Part 1: the config topic",
        }
    }

    /// The source, paused and sink connectors' names.
    fn names(&self) -> (String, String, String) {
        (
            self.ch.source.clone(),
            self.ch.paused.clone(),
            self.ch.sink.clone(),
        )
    }

    /// Tells one step of the current part.
    fn push(&mut self, title: String, text: String, body: String) {
        push(&mut self.steps, self.part, title, text, body);
    }
}

/// The config reader's checkpoint saved in step 4, and when and where it was taken.
struct Saved {
    checkpoint: Vec<u8>,
    checkpoint_ms: i64,
    checkpoint_offset: i64,
}

/// What the crash of step 5 leaves: the dead leader's id and the grown table list.
struct Crash {
    dead: String,
    grown: Vec<String>,
}

/// The worker that runs the source connector's task `task` after the rebalance.
fn owner(task: usize) -> usize {
    task % 4
}

/// The worker that runs the sink connector's task `task`.
fn sink_owner(task: usize) -> usize {
    1 + task % 2
}

async fn story(seed: u64) -> Result<Story, CliError> {
    let mut d = Demo::new(seed);
    let (w1, w2) = workers_start(&mut d).await?;
    let (w1, w2) = connectors_created(&mut d, w1, w2).await?;
    let (w1, w2) = connector_paused(&mut d, w1, w2).await?;
    let (w1, w2, saved) = tasks_reconfigured(&mut d, w1, w2).await?;
    let (w2, crash) = leader_crashes(&mut d, w1, w2).await?;
    config_compacted(&mut d)?;
    let (w2, w3) = fresh_worker_flags_inconsistency(&mut d, w2).await?;
    let mut ws = readers_converge(&mut d, w2, w3, &saved, &crash).await?;

    d.part = "Part 2: the status topic and topic tracking";
    statuses_reported(&mut d, &mut ws).await?;
    topics_recorded(&mut d, &mut ws).await?;
    topics_reset(&mut d, &mut ws).await?;
    status_compacted(&mut d, &mut ws).await?;

    d.part = "Part 3: the offsets topic";
    let source_partitions = offsets_committed(&mut d, &mut ws, &crash.grown).await?;
    offsets_reset(&mut d, &mut ws, source_partitions).await?;
    let readers = everyone_agrees(&mut d, &mut ws).await?;

    let leader = &ws[LEADER];
    let final_json = json!({
        "config": leader.config.machine().snapshot_json()?,
        "status": leader.status.machine().snapshot_json()?,
        "offsets": leader.offsets.machine().snapshot_json()?,
    });
    drop(ws);
    Ok(Story {
        seed,
        steps: d.steps,
        final_json,
        readers,
        cluster: DemoCluster {
            seed,
            cluster: d.cluster,
            config_topic: CONFIG_TOPIC.into(),
            status_topic: STATUS_TOPIC.into(),
            offsets_topic: OFFSETS_TOPIC.into(),
        },
    })
}

/// Step 1: two workers start and create the internal topics.
async fn workers_start(d: &mut Demo) -> Result<(Worker, Worker), CliError> {
    let w1 = Worker::join(&d.cluster, "connect-1:8083", ConfigLog::new(), None).await?;
    let w2 = Worker::join(&d.cluster, "connect-2:8083", ConfigLog::new(), None).await?;
    let rows: Vec<Vec<String>> = {
        let cl = lock(&d.cluster);
        [
            (CONFIG_TOPIC, TopicKind::Config),
            (STATUS_TOPIC, TopicKind::Status),
            (OFFSETS_TOPIC, TopicKind::Offsets),
        ]
        .into_iter()
        .map(|(topic, kind)| {
            let d = cl.describe_topic(topic);
            vec![
                topic.to_string(),
                kind.setting().to_string(),
                d.map_or("-".into(), |d| d.partitions.to_string()),
                d.map_or("-".into(), |d| d.cleanup_policy.clone()),
            ]
        })
        .collect()
    };
    d.push(
        "Two workers start".into(),
        format!(
            "{} and {} start. Finding no internal topics, the first creates them as Connect \
             does (compacted; 1, 5 and 25 partitions). A worker reads every topic to its end \
             before it takes part.",
            w1.id, w2.id
        ),
        table::render(
            &["TOPIC", "WORKER SETTING", "PARTITIONS", "CLEANUP.POLICY"],
            &rows,
        ),
    );
    Ok((w1, w2))
}

/// Step 2: the leader creates three connectors.
async fn connectors_created(
    d: &mut Demo,
    mut w1: Worker,
    mut w2: Worker,
) -> Result<(Worker, Worker), CliError> {
    let names = d.names();
    let (a, b, c) = (names.0.as_str(), names.1.as_str(), names.2.as_str());
    let shards = d.ch.shards(false);

    tick(&d.cluster);
    let sink_topics = d.ch.sink_topics();
    w1.execute(&put_config(
        a,
        &source_config(a, &d.ch.source_table, d.ch.first_tasks, "shop."),
    ))
    .await?;
    w1.execute(&source_tasks(a, &shards, d.ch.first_tasks, "b1"))
        .await?;
    w1.execute(&put_config(
        b,
        &source_config(b, &d.ch.paused_table, 1, "shop."),
    ))
    .await?;
    w1.execute(&source_tasks(
        b,
        &[format!("{}_main", d.ch.paused_table)],
        1,
        "b1",
    ))
    .await?;
    let sink_config: Vec<(&'static str, String)> = vec![
        (
            "connector.class",
            "io.confluent.connect.jdbc.JdbcSinkConnector".into(),
        ),
        ("name", c.into()),
        ("tasks.max", "2".into()),
        ("connection.url", "jdbc:postgresql://dw:5432/dw".into()),
        ("topics", sink_topics.join(",")),
    ];
    w1.execute(&put_config(c, &sink_config)).await?;
    let sink_task = |_: usize| -> Vec<(&'static str, String)> {
        vec![
            (
                "task.class",
                "io.confluent.connect.jdbc.sink.JdbcSinkTask".into(),
            ),
            ("topics", sink_topics.join(",")),
            ("demo.batch", "b1".into()),
        ]
    };
    w1.execute(&task_plan(c, &[sink_task(0), sink_task(1)]))
        .await?;
    let events = w2.catch_up().await?;
    d.push(
        "The leader creates three connectors".into(),
        format!(
            "{} is the leader. It writes each connector's config, then its task configs and a \
             commit record that makes them visible together: {a} ({} tasks), {b} (1 task) and \
             {c} (2 tasks). Every task config carries a demo.batch tag naming the write it \
             came from (b1 here). {} hears the listener callbacks Java's herder gets. (FLAGS: \
             every commit leaves a connector pending fencing until a task-count record follows; \
             only workers with exactly-once source support write one.)",
            w1.id, d.ch.first_tasks, w2.id
        ),
        format!(
            "{}\n{}",
            event_lines(&w2.id, &events),
            w2.config.machine().table()
        ),
    );
    Ok((w1, w2))
}

/// Step 3: an operator pauses a connector.
async fn connector_paused(
    d: &mut Demo,
    mut w1: Worker,
    mut w2: Worker,
) -> Result<(Worker, Worker), CliError> {
    let names = d.names();
    let b = names.1.as_str();

    tick(&d.cluster);
    w2.execute(&config_write::put_target_state(b, TargetState::Paused))
        .await?;
    let events = w1.catch_up().await?;
    w2.catch_up().await?;
    if w1.config_snapshot().target_state(b) != Some(TargetState::Paused) {
        return Err(broken(format!("{b} is not paused")));
    }
    d.push(
        format!("An operator pauses {b}"),
        format!(
            "PUT /connectors/{b}/pause reaches {}. Any worker may write a target state: one \
             record, target-state-{b} = {}.",
            w2.id,
            config_write::target_state_value(TargetState::Paused)
        ),
        format!(
            "{}\n{}",
            event_lines(&w1.id, &events),
            w1.config.machine().table()
        ),
    );
    Ok((w1, w2))
}

/// Step 4: a connector is reconfigured; the leader saves a checkpoint.
async fn tasks_reconfigured(
    d: &mut Demo,
    mut w1: Worker,
    mut w2: Worker,
) -> Result<(Worker, Worker, Saved), CliError> {
    let names = d.names();
    let (a, _, _) = (names.0.as_str(), names.1.as_str(), names.2.as_str());
    let shards = d.ch.shards(false);

    tick(&d.cluster);
    w1.execute(&put_config(
        a,
        &source_config(a, &d.ch.source_table, d.ch.reconfigured_tasks, "shop."),
    ))
    .await?;
    w1.execute(&source_tasks(a, &shards, d.ch.reconfigured_tasks, "b2"))
        .await?;
    let events = w2.catch_up().await?;
    let now = lock(&d.cluster).now_ms();
    let checkpoint = w1.config.machine().checkpoint_at(now);
    let checkpoint_ms = now;
    let checkpoint_offset = w1.config_snapshot().offset();
    d.push(
        format!(
            "{a} is reconfigured from {} to {} tasks",
            d.ch.first_tasks, d.ch.reconfigured_tasks
        ),
        format!(
            "The operator raises tasks.max. The leader writes the new connector config, then \
             the {n} task configs of write b2 and the commit {}. {} saves a checkpoint of its \
             config reader (next offset {checkpoint_offset}, {} bytes).",
            config_write::commit_value(i32::try_from(d.ch.reconfigured_tasks).unwrap_or(0)),
            w1.id,
            checkpoint.len(),
            n = d.ch.reconfigured_tasks,
        ),
        format!(
            "{}\n{}",
            event_lines(&w2.id, &events),
            readers_table(&[&w1, &w2], a)
        ),
    );
    let saved = Saved {
        checkpoint,
        checkpoint_ms,
        checkpoint_offset,
    };
    Ok((w1, w2, saved))
}

/// Step 5: the leader crashes in the middle of a write.
async fn leader_crashes(
    d: &mut Demo,
    mut w1: Worker,
    mut w2: Worker,
) -> Result<(Worker, Crash), CliError> {
    let names = d.names();
    let (a, _, _) = (names.0.as_str(), names.1.as_str(), names.2.as_str());

    tick(&d.cluster);
    let grown = d.ch.shards(true);
    let new_table = grown.last().cloned().unwrap_or_default();
    w1.transport
        .push_produce_fault(ProduceFault::CrashAfter(d.ch.crash_after));
    let error = match w1
        .config
        .execute(
            &source_tasks(a, &grown, d.ch.reconfigured_tasks, "b3"),
            false,
        )
        .await
    {
        Ok(_) => return Err(broken("the leader's write did not fail".into())),
        Err(e) => e,
    };
    let dead = w1.id.clone();
    drop(w1);
    let events = w2.catch_up().await?;
    if batches(&w2.config_snapshot(), a) != vec!["b2".to_string(); d.ch.reconfigured_tasks] {
        return Err(broken(format!("{} does not run write b2", w2.id)));
    }
    d.push(
        "The leader crashes in the middle of a write".into(),
        format!(
            "A new table, {new_table}, appears in the database. {a}'s table monitor asks for \
             new task configs, and the leader starts producing the {n} task configs of write b3 \
             (the new table goes to task {t}). It dies after {k} of them, before the commit. \
             {w} reads the {k} task record(s) but, without a commit, keeps running the {n} \
             tasks of write b2: task configs only ever change a whole set at a time.",
            t = SHARDS % d.ch.reconfigured_tasks,
            k = d.ch.crash_after,
            n = d.ch.reconfigured_tasks,
            w = w2.id,
        ),
        format!(
            "{}\n{}\n{}",
            para(&format!("{dead} crashed; its write failed with: {error}")),
            event_lines(&w2.id, &events),
            readers_table(&[&w2], a)
        ),
    );
    Ok((w2, Crash { dead, grown }))
}

/// Step 6: the log cleaner compacts the config topic.
fn config_compacted(d: &mut Demo) -> Result<(), CliError> {
    let names = d.names();
    let (a, _, _) = (names.0.as_str(), names.1.as_str(), names.2.as_str());

    tick(&d.cluster);
    let before = lock(&d.cluster)
        .records(CONFIG_TOPIC, 0)
        .map_err(|e| broken(e.to_string()))?;
    let removed = compact(&d.cluster, CONFIG_TOPIC)?;
    let after: Vec<i64> = lock(&d.cluster)
        .records(CONFIG_TOPIC, 0)
        .map_err(|e| broken(e.to_string()))?
        .iter()
        .map(|r| r.offset)
        .collect();
    let mut newest: BTreeMap<String, i64> = BTreeMap::new();
    for r in &before {
        newest.insert(key_text(r), r.offset);
    }
    let (task_prefix, commit_key) = (format!("task-{a}-"), format!("commit-{a}"));
    let rows: Vec<Vec<String>> = before
        .iter()
        .filter(|r| {
            let k = key_text(r);
            k.starts_with(&task_prefix) || k == commit_key
        })
        .map(|r| {
            let key = key_text(r);
            let fate = if after.contains(&r.offset) {
                "kept".to_string()
            } else {
                format!(
                    "removed (newer at {})",
                    newest.get(&key).copied().unwrap_or(-1)
                )
            };
            vec![r.offset.to_string(), key, record_summary(r), fate]
        })
        .collect();
    d.push(
        "The log cleaner compacts the config topic".into(),
        format!(
            "Compaction keeps only the newest record of each key. This pass removed {removed} of \
             {} records; offsets never change, so the log now has gaps. The crashed write's \
             task records are the newest of their keys, so they stay, and the b2 records they \
             shadow go. The records of {a}'s tasks:",
            before.len()
        ),
        table::render(&["OFFSET", "KEY", "VALUE", "AFTER CLEANING"], &rows),
    );
    Ok(())
}

/// Step 7: a fresh worker flags the connector inconsistent.
async fn fresh_worker_flags_inconsistency(
    d: &mut Demo,
    w2: Worker,
) -> Result<(Worker, Worker), CliError> {
    let names = d.names();
    let (a, _, _) = (names.0.as_str(), names.1.as_str(), names.2.as_str());

    tick(&d.cluster);
    let w3 = Worker::join(
        &d.cluster,
        "connect-3:8083",
        ConfigLog::new(),
        Some(d.ch.fresh_fetch),
    )
    .await?;
    let snapshot = w3.config_snapshot();
    let why = w3
        .config
        .machine()
        .diagnostics()
        .inconsistency(a)
        .cloned()
        .filter(|_| snapshot.is_inconsistent(a) && snapshot.tasks(a).is_empty())
        .ok_or_else(|| broken(format!("{} did not flag {a} inconsistent", w3.id)))?;
    let expected: Vec<i32> = (0..d.ch.crash_after.min(d.ch.reconfigured_tasks))
        .map(|t| i32::try_from(t).unwrap_or(0))
        .collect();
    if why.missing_tasks != expected {
        return Err(broken(format!(
            "{} misses tasks [{}], expected [{}]",
            w3.id,
            ids(&why.missing_tasks),
            ids(&expected)
        )));
    }
    d.push(
        format!("A fresh worker flags {a} inconsistent"),
        format!(
            "{w} starts and reads the compacted log from the beginning, {f} record(s) per \
             fetch. The commit at offset {o} announces {n} tasks, but task id(s) {missing} have \
             no record since the previous commit: they were compacted away. Like Java's \
             KafkaConfigBackingStore, the core puts {a} in the inconsistent set and lists no \
             tasks for it. {w2} read the log before compaction and still runs {n} tasks. Both \
             are right; only a rewrite by the leader settles it.",
            w = w3.id,
            f = d.ch.fresh_fetch,
            o = why.commit_offset,
            n = why.task_count,
            missing = ids(&why.missing_tasks),
            w2 = w2.id,
        ),
        format!(
            "{}\n{}",
            w3.config.machine().table(),
            readers_table(&[&w2, &w3], a)
        ),
    );
    Ok((w2, w3))
}

/// Step 8: a new leader rewrites the tasks and every reader converges.
async fn readers_converge(
    d: &mut Demo,
    mut w2: Worker,
    w3: Worker,
    saved: &Saved,
    crash: &Crash,
) -> Result<Vec<Worker>, CliError> {
    let names = d.names();
    let (a, _, _) = (names.0.as_str(), names.1.as_str(), names.2.as_str());
    let Saved {
        checkpoint,
        checkpoint_ms,
        checkpoint_offset,
    } = saved;
    let (checkpoint_ms, checkpoint_offset) = (*checkpoint_ms, *checkpoint_offset);
    let Crash { dead, grown } = crash;

    tick(&d.cluster);
    w2.execute(&source_tasks(a, grown, d.ch.reconfigured_tasks, "b4"))
        .await?;
    let mut w3 = w3;
    let events = w3.catch_up().await?;
    let now = lock(&d.cluster).now_ms();
    check_fresh(checkpoint, now, DEFAULT_DELETE_RETENTION_MS)
        .map_err(|e| broken(format!("the checkpoint is refused: {e}")))?;
    let restored = ConfigLog::restore(checkpoint)
        .map_err(|e| broken(format!("the checkpoint does not restore: {e}")))?;
    let w1 = Worker::join(&d.cluster, dead, restored, None).await?;
    let removed_again = compact(&d.cluster, CONFIG_TOPIC)?;
    let w4 = Worker::join(&d.cluster, "connect-4:8083", ConfigLog::new(), None).await?;
    w2.catch_up().await?;
    let ws = vec![w1, w2, w3, w4];
    let refs: Vec<&Worker> = ws.iter().collect();
    let agree = check_agreement(&refs)?;
    let final_tasks = vec!["b4".to_string(); d.ch.reconfigured_tasks];
    for w in &refs {
        if batches(&w.config_snapshot(), a) != final_tasks {
            return Err(broken(format!("{} does not run write b4", w.id)));
        }
    }
    d.push(
        "A new leader rewrites the tasks and every reader converges".into(),
        format!(
            "{l} becomes the leader and regenerates the {m} task configs of {a} (write b4) with \
             a new commit. {w3} hears the update and clears the inconsistency. {w1} comes back \
             from the checkpoint it saved in step 4 ({age} ms old, within delete.retention.ms, \
             so safe to use) and reads on from offset {checkpoint_offset}. After another \
             cleaning pass ({removed_again} more records removed) {w4} starts from scratch.",
            l = ws[LEADER].id,
            m = d.ch.reconfigured_tasks,
            w3 = ws[2].id,
            w1 = ws[0].id,
            w4 = ws[3].id,
            age = now - checkpoint_ms,
        ),
        format!(
            "{}\n{}\n{}\n{}",
            event_lines(&ws[2].id, &events),
            readers_table(&refs, a),
            para(&format!(
                "All {agree} readers agree: the same connectors, connector configs, target \
                 states, task configs and next offset."
            )),
            ws[LEADER].config.machine().table()
        ),
    );
    drop(refs);
    Ok(ws)
}

/// Step 9: workers report statuses; a stale putSafe is refused.
async fn statuses_reported(d: &mut Demo, ws: &mut [Worker]) -> Result<(), CliError> {
    let names = d.names();
    let (a, b, c) = (names.0.as_str(), names.1.as_str(), names.2.as_str());

    tick(&d.cluster);
    let owner = |task: usize| task % 4;
    let sink_owner = |task: usize| 1 + task % 2;
    let mut writes: Vec<(usize, StatusUpdate, bool)> = Vec::new();
    let id = |i: usize| ws[i].id.clone();
    writes.push((
        LEADER,
        StatusUpdate::for_connector(a, StatusState::Running, id(LEADER), GENERATION),
        false,
    ));
    for t in 0..d.ch.reconfigured_tasks {
        let n = i32::try_from(t).unwrap_or(0);
        writes.push((
            owner(t),
            StatusUpdate::for_task(a, n, StatusState::Running, id(owner(t)), GENERATION),
            false,
        ));
    }
    writes.push((
        2,
        StatusUpdate::for_connector(b, StatusState::Paused, id(2), GENERATION),
        false,
    ));
    writes.push((
        0,
        StatusUpdate::for_task(b, 0, StatusState::Paused, id(0), GENERATION),
        false,
    ));
    writes.push((
        3,
        StatusUpdate::for_connector(c, StatusState::Running, id(3), GENERATION),
        false,
    ));
    for t in 0..2 {
        let n = i32::try_from(t).unwrap_or(0);
        let w = sink_owner(t);
        writes.push(if n == d.ch.failed_task {
            (
                w,
                StatusUpdate::for_task(c, n, StatusState::Failed, id(w), GENERATION)
                    .with_trace(TRACE),
                true,
            )
        } else {
            (
                w,
                StatusUpdate::for_task(c, n, StatusState::Running, id(w), GENERATION),
                false,
            )
        });
    }
    for (w, update, safe) in writes {
        if !ws[w].put_status(update, safe).await? {
            return Err(broken("a status write was refused".into()));
        }
    }
    for w in ws.iter_mut() {
        w.catch_up().await?;
    }
    let stale_task = 1;
    let stale = StatusUpdate::for_task(
        a,
        stale_task,
        StatusState::Unassigned,
        ws[0].id.clone(),
        GENERATION - 1,
    );
    if ws[0].put_status(stale, true).await? {
        return Err(broken("a stale putSafe was written".into()));
    }
    d.push(
        "Workers report statuses".into(),
        format!(
            "After the rebalance (generation {GENERATION}) each worker reports the connectors \
             and tasks it runs: RUNNING, PAUSED for {b}, FAILED with a stack trace for \
             {c}-{f}. Status records go to the 5 partitions of the status topic by Java's \
             murmur2 partitioner, and every worker reads them back.",
            f = d.ch.failed_task
        ),
        format!(
            "{}\n{}",
            ws[LEADER].status.machine().table(),
            para(&format!(
                "{} still believes it runs {a}-{stale_task} and sends putSafe(UNASSIGNED) at \
                 generation {}: refused, because {} wrote RUNNING at generation {GENERATION}. \
                 Nothing is written.",
                ws[0].id,
                GENERATION - 1,
                ws[owner(1)].id,
            )),
        ),
    );
    Ok(())
}

/// Step 10: the sink's tasks record the topics they consume (KIP-558).
async fn topics_recorded(d: &mut Demo, ws: &mut [Worker]) -> Result<(), CliError> {
    let names = d.names();
    let c = names.2.as_str();
    let sink_topics = d.ch.sink_topics();

    tick(&d.cluster);
    let tracking = TopicTracking::default();
    let now = lock(&d.cluster).now_ms() + EPOCH_MS;
    let mut recorded = 0;
    for (task, topics) in [
        (0usize, vec![&sink_topics[0], &sink_topics[1]]),
        (1, vec![&sink_topics[2], &sink_topics[0]]),
    ] {
        let w = sink_owner(task);
        ws[w].catch_up().await?;
        for topic in topics {
            let n = i32::try_from(task).unwrap_or(0);
            if let Some(record) = ws[w]
                .status
                .machine()
                .record_active_topic(c, topic, n, now, &tracking)
            {
                ws[w].write_status(&[record]).await?;
                recorded += 1;
            }
        }
    }
    for w in ws.iter_mut() {
        w.catch_up().await?;
    }
    if recorded != 3 {
        return Err(broken(format!(
            "{recorded} topic records written, expected 3"
        )));
    }
    let active = ws[0]
        .status
        .machine()
        .snapshot()
        .active_topics(c, &tracking)
        .map_err(|e| broken(e.to_string()))?;
    let topic_rows: Vec<Vec<String>> = ws[0]
        .status
        .machine()
        .snapshot()
        .all_topics()
        .map(|(conn, t, s)| {
            vec![
                conn.to_string(),
                t.to_string(),
                s.task.to_string(),
                s.discover_timestamp.to_string(),
            ]
        })
        .collect();
    d.push(
        format!("{c}'s tasks record the topics they consume (KIP-558)"),
        format!(
            "With topic.tracking.enable (the default) a task marks a topic active the first \
             time it uses it: one record status-topic-<topic>:connector-{c}. Task 1 also \
             consumes {}, which task 0 already recorded, so nothing more is written.",
            sink_topics[0]
        ),
        format!(
            "{}\n{}",
            para(&format!(
                "GET /connectors/{c}/topics (on {}) -> {}",
                ws[0].id,
                serde_json::to_string(&active)?
            )),
            table::render(
                &["CONNECTOR", "TOPIC", "TASK", "DISCOVERED-MS"],
                &topic_rows
            )
        ),
    );
    Ok(())
}

/// Step 11: the sink's active topics are reset.
async fn topics_reset(d: &mut Demo, ws: &mut [Worker]) -> Result<(), CliError> {
    let names = d.names();
    let (_, _, c) = (names.0.as_str(), names.1.as_str(), names.2.as_str());
    let tracking = TopicTracking::default();

    tick(&d.cluster);
    let no_reset = TopicTracking {
        enable: true,
        allow_reset: false,
    };
    let refused = match ws[LEADER]
        .status
        .machine()
        .snapshot()
        .reset_active_topics(c, &no_reset)
    {
        Ok(_) => return Err(broken("a disabled reset was allowed".into())),
        Err(e) => {
            let answer = rest::Answer::tracking_refused(e);
            let body = serde_json::to_string(&answer.body)?;
            format!("HTTP {} {body}", answer.status)
        }
    };
    let tombstones = ws[LEADER]
        .status
        .machine()
        .snapshot()
        .reset_active_topics(c, &tracking)
        .map_err(|e| broken(e.to_string()))?;
    let rows: Vec<Vec<String>> = tombstones
        .iter()
        .map(|r| {
            vec![
                String::from_utf8_lossy(&r.key).into_owned(),
                engine::offsets::default_partition(&r.key, TopicKind::Status.default_partitions())
                    .map_or("-".into(), |p| p.to_string()),
                short(r.value.as_deref(), 20),
            ]
        })
        .collect();
    ws[LEADER].write_status(&tombstones).await?;
    for w in ws.iter_mut() {
        w.catch_up().await?;
    }
    let active = ws[2]
        .status
        .machine()
        .snapshot()
        .active_topics(c, &tracking)
        .map_err(|e| broken(e.to_string()))?;
    if !active.topics.is_empty() {
        return Err(broken(format!("{c} still has active topics")));
    }
    d.push(
        format!("{c}'s active topics are reset"),
        format!(
            "PUT /connectors/{c}/topics/reset. A worker with topic.tracking.allow.reset=false \
             refuses it with Java's 403; with the default, the worker writes one tombstone per \
             active topic and every worker forgets them."
        ),
        format!(
            "{}\n{}\n{}",
            para(&format!("With topic.tracking.allow.reset=false: {refused}")),
            table::render(&["TOMBSTONE KEY", "PARTITION", "VALUE"], &rows),
            para(&format!(
                "GET /connectors/{c}/topics (on {}) -> {}",
                ws[2].id,
                serde_json::to_string(&active)?
            )),
        ),
    );
    Ok(())
}

/// Step 12: the status topic is compacted, then its tombstones expire; a fresh reader agrees.
async fn status_compacted(d: &mut Demo, ws: &mut [Worker]) -> Result<(), CliError> {
    let names = d.names();
    let (_, _, c) = (names.0.as_str(), names.1.as_str(), names.2.as_str());

    tick(&d.cluster);
    let first_pass = compact(&d.cluster, STATUS_TOPIC)?;
    let tombstones_left = count_tombstones(&d.cluster, STATUS_TOPIC);
    let retention_ms = lock(&d.cluster)
        .describe_topic(STATUS_TOPIC)
        .map_or(DEFAULT_DELETE_RETENTION_MS, |t| t.delete_retention_ms);
    lock(&d.cluster).advance_clock(u64::try_from(retention_ms).unwrap_or(0) + 1);
    let second_pass = compact(&d.cluster, STATUS_TOPIC)?;
    let mut fresh: Store<StatusLog, Transport> = Store::new(
        StoreSettings::new(STATUS_TOPIC, TopicKind::Status),
        Arc::new(MemoryTransport::new(Arc::clone(&d.cluster))),
        StatusLog::new(),
    );
    fresh
        .start()
        .await
        .map_err(failed("a fresh status reader starting"))?;
    let expected = status_view(ws[LEADER].status.machine())?;
    if status_view(fresh.machine())? != expected {
        return Err(broken(
            "a fresh status reader disagrees after compaction".into(),
        ));
    }
    for w in ws.iter_mut() {
        w.catch_up().await?;
    }
    let refs: Vec<&Worker> = ws.iter().collect();
    let agree = check_agreement(&refs)?;
    d.push(
        "The cleaner compacts the status topic; later its tombstones expire".into(),
        format!(
            "A first pass removes the {first_pass} topic record(s) the reset's tombstones \
             shadow and keeps the {tombstones_left} tombstone(s), so that readers still catching \
             up see the deletes. Once delete.retention.ms ({retention_ms} ms) has passed, the \
             next pass removes the tombstones too ({second_pass} record(s)). A reader starting \
             now never hears of {c}'s topics, and sees what the workers that read everything \
             see (Java keeps an empty topic row for {c} in those workers; both answer \
             GET /connectors/{c}/topics with [])."
        ),
        format!(
            "A fresh status reader and all {agree} workers agree on the status topic: {} \
             connector and {} task statuses.\n",
            fresh.machine().snapshot().connectors().count(),
            fresh.machine().snapshot().all_tasks().count(),
        ),
    );
    drop(refs);
    Ok(())
}

/// Step 13: the paused connector resumes and the source tasks commit offsets; returns how
/// many source partitions the reconfigured connector has.
async fn offsets_committed(
    d: &mut Demo,
    ws: &mut [Worker],
    grown: &[String],
) -> Result<usize, CliError> {
    let names = d.names();
    let (a, b) = (names.0.as_str(), names.1.as_str());

    tick(&d.cluster);
    ws[2]
        .execute(&config_write::put_target_state(b, TargetState::Started))
        .await?;
    for w in ws.iter_mut() {
        w.catch_up().await?;
    }
    for (w, update) in [
        (
            2,
            StatusUpdate::for_connector(b, StatusState::Running, ws[2].id.clone(), GENERATION),
        ),
        (
            0,
            StatusUpdate::for_task(b, 0, StatusState::Running, ws[0].id.clone(), GENERATION),
        ),
    ] {
        ws[w].put_status(update, false).await?;
    }
    let partition = |table: &str| {
        OrderedMap::new([
            ("protocol", JsonValue::String("1".into())),
            ("table", JsonValue::String(format!("shop.{table}"))),
        ])
    };
    let offset = |position: i64| OrderedMap::new([("incrementing", JsonValue::Long(position))]);
    // (worker, connector, [(table, position)]) of each task's flush.
    let mut flushes: Vec<Flush<'_>> = Vec::new();
    for t in 0..d.ch.reconfigured_tasks {
        let mine: Vec<(String, i64)> = grown
            .iter()
            .enumerate()
            .filter(|(i, _)| i % d.ch.reconfigured_tasks == t)
            .map(|(i, s)| (s.clone(), d.ch.positions[i]))
            .collect();
        flushes.push((owner(t), a, mine));
    }
    flushes.push((
        0,
        b,
        vec![(
            format!("{}_main", d.ch.paused_table),
            d.ch.positions[SHARDS + 1],
        )],
    ));
    for (w, connector, tables) in flushes {
        let mut writer = OffsetWriter::new(connector);
        for (table, position) in &tables {
            writer.offset(partition(table), Some(offset(*position)));
        }
        if !writer.begin_flush().map_err(|e| broken(e.to_string()))? {
            return Err(broken("an offsets flush had nothing to write".into()));
        }
        let batch = writer.do_flush().map_err(|e| broken(e.to_string()))?;
        ws[w].write_offsets(&batch.records).await?;
        if writer.complete_flush(batch.flush_id, true) != FlushCompletion::Committed {
            return Err(broken("an offsets flush did not commit".into()));
        }
    }
    for w in ws.iter_mut() {
        w.catch_up().await?;
    }
    let source_partitions = kip875::list(&ws[LEADER].offsets.machine().snapshot(), a)
        .offsets
        .len();
    d.push(
        format!("{b} resumes and the source tasks commit offsets"),
        format!(
            "{b} resumes (target state STARTED). Each source task remembers how far it read \
             every table, and its OffsetStorageWriter flushes those positions as records keyed \
             [\"<connector>\",{{<partition>}}], placed by Java's partitioner over the 25 \
             partitions. A worker answers GET /connectors/<c>/offsets (KIP-875) from them:"
        ),
        ws[LEADER].offsets.machine().table(),
    );
    Ok(source_partitions)
}

/// Step 14: a connector is stopped and its offsets are reset.
async fn offsets_reset(
    d: &mut Demo,
    ws: &mut [Worker],
    source_partitions: usize,
) -> Result<(), CliError> {
    let names = d.names();
    let (a, b, _) = (names.0.as_str(), names.1.as_str(), names.2.as_str());

    tick(&d.cluster);
    let not_stopped = match kip875::check_modifiable(&ws[LEADER].config_snapshot(), a) {
        Ok(()) => return Err(broken(format!("{a} could be reset while running"))),
        Err(e) => format!(
            "HTTP {} {e}",
            rest::Answer::modify_offsets_refused(&e).status
        ),
    };
    let empty: [Vec<(&'static str, String)>; 0] = [];
    ws[LEADER].execute(&task_plan(a, &empty)).await?;
    ws[LEADER]
        .execute(&config_write::put_target_state(a, TargetState::Stopped))
        .await?;
    for w in ws.iter_mut() {
        w.catch_up().await?;
    }
    let stopped =
        StatusUpdate::for_connector(a, StatusState::Stopped, ws[LEADER].id.clone(), GENERATION);
    ws[LEADER].put_status(stopped, false).await?;
    kip875::check_modifiable(&ws[LEADER].config_snapshot(), a)
        .map_err(|e| broken(format!("{a} cannot be reset after stopping: {e}")))?;
    let records = kip875::reset_records(
        &ws[LEADER].offsets.machine().snapshot(),
        a,
        OFFSETS_PARTITIONS,
    )
    .map_err(|e| broken(e.to_string()))?;
    let rows: Vec<Vec<String>> = records
        .iter()
        .map(|r| {
            vec![
                String::from_utf8_lossy(&r.key).into_owned(),
                r.partition.map_or("-".into(), |p| p.to_string()),
                short(r.value.as_deref(), 20),
            ]
        })
        .collect();
    ws[LEADER].write_offsets(&records).await?;
    for w in ws.iter_mut() {
        w.catch_up().await?;
    }
    let left = kip875::list(&ws[LEADER].offsets.machine().snapshot(), a)
        .offsets
        .len();
    if left != 0 || records.len() != source_partitions {
        return Err(broken(format!("{a} still has {left} partition(s)")));
    }
    d.push(
        format!("{a} is stopped and its offsets are reset"),
        format!(
            "The operator wants {a} to copy every table again. DELETE /connectors/{a}/offsets is \
             refused while it runs. Stopping it writes an empty set of task configs first, then \
             target state STOPPED (Java's order). Now the reset is allowed: one tombstone per \
             partition, sent to the partition where the live record was read, so it really \
             deletes it."
        ),
        format!(
            "{}\n{}\n{}\n{}\n{}",
            para(&format!("Before stopping: {not_stopped}")),
            ws[LEADER].config.machine().table(),
            table::render(&["TOMBSTONE KEY", "PARTITION", "VALUE"], &rows),
            para(&format!(
                "{a}: {source_partitions} partition(s) before the reset, {left} after; {b}'s \
                 are untouched. {}",
                kip875::success_message(true)
            )),
            ws[LEADER].offsets.machine().table(),
        ),
    );
    Ok(())
}

/// Step 15: every topic is compacted, a last worker starts, every reader agrees; returns
/// how many agree.
async fn everyone_agrees(d: &mut Demo, ws: &mut Vec<Worker>) -> Result<usize, CliError> {
    tick(&d.cluster);
    let mut cleaned = Vec::new();
    for topic in [CONFIG_TOPIC, STATUS_TOPIC, OFFSETS_TOPIC] {
        cleaned.push(compact(&d.cluster, topic)?);
    }
    let w5 = Worker::join(&d.cluster, "connect-5:8083", ConfigLog::new(), None).await?;
    ws.push(w5);
    for w in ws.iter_mut() {
        w.catch_up().await?;
    }
    let refs: Vec<&Worker> = ws.iter().collect();
    let readers = check_agreement(&refs)?;
    let rows: Vec<Vec<String>> = [CONFIG_TOPIC, STATUS_TOPIC, OFFSETS_TOPIC]
        .iter()
        .zip(&cleaned)
        .map(|(topic, removed)| {
            let (left, written, partitions) = record_counts(&d.cluster, topic);
            vec![
                (*topic).to_string(),
                partitions.to_string(),
                written.to_string(),
                removed.to_string(),
                left.to_string(),
            ]
        })
        .collect();
    d.push(
        "Every topic is compacted and every reader agrees".into(),
        format!(
            "A last cleaning pass over all three topics, then {} starts from scratch. Every \
             worker's config, status and offsets snapshots are compared.",
            ws[4].id
        ),
        format!(
            "{}\n{}",
            table::render(
                &["TOPIC", "PARTITIONS", "WRITTEN", "REMOVED NOW", "LEFT"],
                &rows
            ),
            para(&format!(
                "All {readers} readers agree on all three topics: {}.",
                names(&refs)
            )),
        ),
    );

    drop(refs);
    Ok(readers)
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::TopicMachine;

    /// Reads one topic of the demo cluster from the beginning with a fresh store.
    fn read<M: TopicMachine + Default>(demo: &DemoCluster, topic: &str, kind: TopicKind) -> M {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        runtime.block_on(async {
            let mut store = Store::new(
                StoreSettings::new(topic, kind),
                Arc::new(MemoryTransport::new(Arc::clone(&demo.cluster))),
                M::default(),
            );
            store.start().await.unwrap();
            store.into_machine()
        })
    }

    #[test]
    fn the_demo_cluster_holds_the_end_of_the_story() {
        let demo = demo_cluster(DEFAULT_SEED).unwrap();
        let ch = Choices::new(DEFAULT_SEED);
        assert_eq!(demo.config_topic, CONFIG_TOPIC);
        let config: ConfigLog = read(&demo, &demo.config_topic, TopicKind::Config);
        let snap = config.snapshot();
        let connectors: Vec<&str> = snap.connectors().collect();
        let mut expected = vec![ch.source.as_str(), ch.paused.as_str(), ch.sink.as_str()];
        expected.sort_unstable();
        assert_eq!(connectors, expected);
        assert_eq!(snap.target_state(&ch.source), Some(TargetState::Stopped));
        assert!(snap.tasks(&ch.source).is_empty());
        assert!(snap.inconsistent_connectors().next().is_none());
        assert_eq!(snap.target_state(&ch.paused), Some(TargetState::Started));
        assert_eq!(snap.tasks(&ch.sink).len(), 2);

        let status: StatusLog = read(&demo, &demo.status_topic, TopicKind::Status);
        let status = status.snapshot();
        assert_eq!(
            status.connector(&ch.source).map(|s| s.state),
            Some(StatusState::Stopped)
        );
        assert_eq!(
            status.task(&ch.sink, ch.failed_task).map(|s| s.state),
            Some(StatusState::Failed)
        );
        assert_eq!(
            status.all_topics().count(),
            0,
            "the active topics were reset"
        );

        let offsets: OffsetLog = read(&demo, &demo.offsets_topic, TopicKind::Offsets);
        let offsets = offsets.snapshot();
        assert!(kip875::list(&offsets, &ch.source).offsets.is_empty());
        assert_eq!(kip875::list(&offsets, &ch.paused).offsets.len(), 1);
    }

    #[test]
    fn the_same_seed_builds_the_same_cluster() {
        let a = demo_cluster(3).unwrap();
        let b = demo_cluster(3).unwrap();
        let c = demo_cluster(4).unwrap();
        let (a, b, c) = (lock(&a.cluster), lock(&b.cluster), lock(&c.cluster));
        assert!(*a == *b);
        assert!(*a != *c);
    }

    #[test]
    fn every_seed_crashes_the_leader_part_way() {
        for seed in 0..500 {
            let ch = Choices::new(seed);
            assert!(ch.source != ch.paused);
            assert!((2..=3).contains(&ch.first_tasks));
            assert!(ch.reconfigured_tasks > ch.first_tasks);
            assert!(ch.reconfigured_tasks <= SHARDS);
            assert!((1..ch.reconfigured_tasks).contains(&ch.crash_after));
        }
    }

    #[test]
    fn wraps_words() {
        assert_eq!(wrap("aa bb cc", 5), ["aa bb", "cc"]);
        assert_eq!(wrap("", 5), Vec::<String>::new());
        assert_eq!(para("x y"), "x y\n");
    }

    #[test]
    fn json_output_is_the_same_story() {
        let mut out = Vec::new();
        run(
            DemoArgs {
                seed: 11,
                format: Format::Json,
            },
            &mut out,
        )
        .unwrap();
        let json: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(json["seed"], 11);
        assert_eq!(json["readers_agree"], 5);
        let steps = json["steps"].as_array().unwrap();
        assert_eq!(steps.len(), 15);
        assert!(steps[6]["output"]
            .as_str()
            .unwrap()
            .contains("missing task ids"));
        assert!(json["final"]["offsets"].is_object());
    }
}
