//! `connect-state bench`: replay throughput, memory and checkpoint restarts over the synthetic
//! topics of [`crate::synth`], measured in one run; optionally `inspect` against a real broker
//! versus a raw librdkafka read of the same topic.
//!
//! Throughputs are the best of a few runs (background load only ever slows a run down). Memory
//! is the growth of the resident set (Linux `/proc/self/status`: `VmRSS`, and `VmHWM` after
//! resetting it through `/proc/self/clear_refs`); elsewhere the memory fields are `null`.

use std::io::Write;
use std::time::{Duration, Instant};

use clap::{Args, ValueEnum};
use engine::config::ConfigLog;
use engine::offsets::OffsetLog;
use engine::status::StatusLog;
use engine::TopicMachine;
use serde::{Deserialize, Serialize};

use crate::synth::{self, Scale, SynthRecord};
use crate::{table, CliError, Exit, Format};

/// The sizes `--scale` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ScaleArg {
    /// 20 connectors, 2,000 source partitions: a second or two (for tests).
    Tiny,
    /// 1,000 connectors, 1,000,000 source partitions: a few minutes on 2 cores.
    Default,
    /// 10,000 connectors, 10,000,000 source partitions: the sizes (about 10 GB of
    /// memory; much longer).
    Full,
}

impl ScaleArg {
    /// The generator sizes.
    pub fn scale(self) -> Scale {
        match self {
            Self::Tiny => Scale::TINY,
            Self::Default => Scale::DEFAULT,
            Self::Full => Scale::FULL,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Self::Tiny => "tiny",
            Self::Default => "default",
            Self::Full => "full",
        }
    }
}

/// `connect-state bench` arguments.
#[derive(Debug, Clone, Args)]
pub struct BenchArgs {
    /// Topic sizes: `tiny` (20 connectors, 2,000 source partitions), `default` (1,000
    /// connectors with 1-16 tasks, 5 reconfiguration rounds, 10 status rebalance rounds,
    /// 1,000,000 source partitions) or `full` (10,000 connectors, 10,000,000 source partitions).
    #[arg(long, value_enum, default_value_t = ScaleArg::Default)]
    pub scale: ScaleArg,
    /// Output format: a readable table, or one JSON object.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Seed of the synthetic topics (the same seed gives the same records).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Also produce the synthetic topics to this cluster (new topics, deleted afterwards) and
    /// time `inspect`'s read of the config topic, then of all three, against raw librdkafka
    /// reads that only count bytes, and how soon `serve` shows a status record produced.
    #[cfg(feature = "kafka")]
    #[arg(long, value_name = "HOST:PORT")]
    pub bootstrap_servers: Option<String>,
    /// With `--bootstrap-servers`: also time a real Kafka Connect worker from its start to its
    /// log line `Finished reading KafkaBasedLog for topic <the config topic>`, over the same
    /// topic, with this `scripts/local-cluster` (it starts a fresh worker of its own group and
    /// stops it), against `inspect` of the same topic.
    #[cfg(feature = "kafka")]
    #[arg(long, value_name = "LOCAL_CLUSTER", num_args = 0..=1,
          default_missing_value = "scripts/local-cluster", requires = "bootstrap_servers")]
    pub connect_worker: Option<std::path::PathBuf>,
    /// A librdkafka property for the broker comparison (repeatable).
    #[cfg(feature = "kafka")]
    #[arg(short = 'X', value_name = "KEY=VALUE", value_parser = crate::inspect::parse_property)]
    pub property: Vec<(String, String)>,
    /// Also replay the same topics through Kafka Connect's own stores with the Java oracle (the
    /// `oracle` script of the repository's `tests/java-oracle`, which needs a JDK 17+ and Maven)
    /// and report Java's throughput, its heap for the offsets state, and our ratios.
    #[arg(long, value_name = "ORACLE", num_args = 0..=1,
          default_missing_value = "tests/java-oracle/oracle")]
    pub java: Option<std::path::PathBuf>,
    /// Also replay the same topics from Python through the `connect_state` package with this
    /// script (the repository's `bindings/python/bench.py`, run as a program, so the
    /// `python3` on `PATH` with the package installed: `pip install ./bindings/python`) and
    /// report its throughput over ours.
    #[arg(long, value_name = "BENCH_PY", num_args = 0..=1,
          default_missing_value = "bindings/python/bench.py")]
    pub python: Option<std::path::PathBuf>,
    /// Internal: measure only this topic and print its figures as JSON (each topic runs in a
    /// fresh process so its memory figures start from a fresh heap).
    #[arg(long, value_enum, hide = true)]
    pub phase: Option<Phase>,
}

/// Everything one run measured. Rates are records per second; memory in bytes.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct BenchReport {
    /// `tiny`, `default` or `full`.
    pub scale: String,
    /// The generator seed.
    pub seed: u64,
    /// Runs of each throughput measurement (the best one counts).
    pub runs: u32,
    /// Whether each topic was measured in a fresh process (so memory figures do not reuse
    /// memory an earlier measurement freed).
    pub isolated: bool,
    /// The config topic.
    #[serde(flatten)]
    pub config: ConfigFigures,
    /// The status topic.
    #[serde(flatten)]
    pub status: StatusFigures,
    /// The offsets topic.
    #[serde(flatten)]
    pub offsets: OffsetsFigures,
    /// The broker comparison.
    #[serde(flatten)]
    pub broker: BrokerFigures,
    /// The three topics on the broker, and `serve` tailing them.
    #[serde(flatten)]
    pub all_topics: AllTopicsFigures,
    /// History against replay.
    #[serde(flatten)]
    pub history: crate::bench_history::HistoryFigures,
    /// `/metrics` scrapes.
    #[serde(flatten)]
    pub metrics: crate::bench_metrics::MetricsFigures,
    /// Large outputs.
    #[serde(flatten)]
    pub outputs: crate::bench_outputs::OutputsFigures,
    /// The Java stores (`--java`).
    #[serde(flatten)]
    pub java: crate::bench_java::JavaFigures,
    /// The Python package (`--python`).
    #[serde(flatten)]
    pub python: crate::bench_python::PythonFigures,
    /// Seconds the whole benchmark took (generation included).
    pub total_seconds: f64,
}

/// Config topic figures.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ConfigFigures {
    /// Live connectors of the config topic.
    pub config_connectors: u64,
    /// Reconfiguration rounds of the config topic.
    pub config_rounds: u64,
    /// Committed task configs at the end.
    pub config_tasks: u64,
    /// Records of the config topic.
    pub config_records: u64,
    /// Key and value bytes of the config topic.
    pub config_bytes: u64,
    /// Config topic replay throughput.
    pub config_replay_records_per_sec: f64,
    /// Config topic replay, megabytes (10^6) of key and value per second.
    pub config_replay_mb_per_sec: f64,
    /// Parsing the same values with the core's JSON reader only.
    pub parse_floor_records_per_sec: f64,
    /// Replay throughput over the parse floor (goal: at least 0.5).
    pub replay_to_floor_ratio: f64,
    /// Parsing the same values into a DOM with `sonic-rs`, a SIMD JSON parser that validates
    /// its input (built, like this binary, for the default target: SSE2 on x86-64).
    pub simd_floor_records_per_sec: f64,
    /// Replay throughput over the SIMD floor (goal: at least 0.5).
    pub replay_to_simd_floor_ratio: f64,
    /// Peak resident-set growth while replaying the config topic.
    pub config_replay_peak_memory_bytes: Option<u64>,
    /// Size of the config machine's checkpoint at 99% of the topic.
    pub checkpoint_bytes: u64,
    /// Records after the checkpoint (the 1% tail).
    pub checkpoint_tail_records: u64,
    /// Seconds of a full config replay (best run).
    pub full_replay_seconds: f64,
    /// Seconds to restore the checkpoint and replay the tail (best run).
    pub checkpoint_restart_seconds: f64,
    /// Full replay time over checkpoint restart time (goal: at least 20).
    pub checkpoint_speedup: f64,
}

/// Status topic figures.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct StatusFigures {
    /// Connectors of the status topic at the end.
    pub status_connectors: u64,
    /// Records of the status topic.
    pub status_records: u64,
    /// Status topic replay throughput.
    pub status_replay_records_per_sec: f64,
    /// Peak resident-set growth while replaying the status topic.
    pub status_replay_peak_memory_bytes: Option<u64>,
}

/// Offsets topic figures.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct OffsetsFigures {
    /// Distinct source partitions of the offsets topic.
    pub offsets_source_partitions: u64,
    /// Records of the offsets topic.
    pub offsets_records: u64,
    /// Live keys at the end.
    pub offsets_live_entries: u64,
    /// Key and value bytes of the live entries.
    pub offsets_live_raw_bytes: u64,
    /// Offsets topic replay throughput (generation excluded).
    pub offsets_replay_records_per_sec: f64,
    /// Resident-set growth from streaming the offsets topic into a fresh `OffsetLog`.
    pub offsets_memory_bytes: Option<u64>,
    /// `offsets_memory_bytes` per live entry.
    pub offsets_memory_bytes_per_entry: Option<f64>,
    /// Memory per live entry over its raw key and value bytes (goal: at most 2).
    pub offsets_memory_ratio: Option<f64>,
    /// Seconds per tail record (an update of a live key) applied to the replayed state, with
    /// no snapshot held (best of five runs of [`TAIL_RECORDS`]).
    pub tail_record_seconds: f64,
    /// The same with a snapshot taken after every record and held until the next one, as
    /// `serve` holds one between refreshes.
    pub tail_with_snapshot_record_seconds: f64,
    /// `tail_with_snapshot_record_seconds` over `tail_record_seconds` (goal: at most 3).
    pub tail_with_snapshot_ratio: f64,
}

/// Tail records per run of the snapshot measurement.
pub const TAIL_RECORDS: usize = 20_000;

/// Broker figures (`--bootstrap-servers`); `null` without a broker.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct BrokerFigures {
    /// Records both readers read (the broker may have compacted some of those produced).
    pub broker_records: Option<u64>,
    /// Seconds `inspect` (the store over `KafkaTransport`, new clients included) takes to read
    /// the config topic (best of five).
    pub inspect_seconds: Option<f64>,
    /// Seconds a raw librdkafka read of the same topic takes (best of five).
    pub raw_read_seconds: Option<f64>,
    /// `inspect_seconds` over `raw_read_seconds` (goal: at most 1.3).
    pub inspect_to_raw_ratio: Option<f64>,
    /// Seconds a real Kafka Connect worker takes from its start to having read the same config
    /// topic (`--connect-worker`).
    pub connect_worker_startup_seconds: Option<f64>,
    /// `connect_worker_startup_seconds` over `inspect_seconds`: how many times faster
    /// `inspect` has the state.
    pub worker_startup_to_inspect_ratio: Option<f64>,
}

/// Status updates the freshness row times.
pub const FRESHNESS_UPDATES: usize = 200;

/// Figures of the three topics on the broker; `null` without one.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct AllTopicsFigures {
    /// Records of the three topics on the broker.
    pub broker_all_records: Option<u64>,
    /// Seconds `inspect`'s read of the three topics takes (its threads and clients included).
    pub inspect_all_seconds: Option<f64>,
    /// Seconds three raw librdkafka reads of the three topics take, run at once.
    pub raw_read_all_seconds: Option<f64>,
    /// `inspect_all_seconds` over `raw_read_all_seconds`.
    pub inspect_all_to_raw_ratio: Option<f64>,
    /// `serve`'s refresh period in the freshness row (its default).
    pub serve_refresh_ms: Option<u64>,
    /// Median seconds from producing a status record to `serve`'s
    /// `/connectors/{c}/status` showing it (over [`FRESHNESS_UPDATES`] updates).
    pub serve_freshness_p50_seconds: Option<f64>,
    /// The 99th percentile of the same (goal: at most 0.1 s).
    pub serve_freshness_p99_seconds: Option<f64>,
}

/// One measured topic; each runs in a fresh process when possible.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Phase {
    /// The config topic.
    Config,
    /// The status topic.
    Status,
    /// The offsets topic.
    Offsets,
    /// History against replay, over the three topics.
    History,
    /// `/metrics` scrapes of the three topics' state.
    Metrics,
    /// What writing large outputs (replay JSON, diff, offsets import) holds beyond the states.
    Outputs,
    /// Only the broker rows (`--bootstrap-servers`): the config topic, the three topics and
    /// `serve`'s freshness, in this process.
    Broker,
}

/// The broker rows, with `--bootstrap-servers` (empty figures without): the config topic read
/// (and a worker's start-up read, with `--connect-worker`), then the three topics and `serve`'s
/// freshness (the best of five reads, two at full scale).
fn bench_broker(
    args: &BenchArgs,
    scale: &Scale,
) -> Result<(BrokerFigures, AllTopicsFigures), CliError> {
    #[cfg(feature = "kafka")]
    if let Some(servers) = &args.bootstrap_servers {
        let topic = synth::config_topic(scale, args.seed);
        let broker = bench_kafka(
            servers,
            &args.property,
            &topic,
            args.seed,
            args.connect_worker.as_deref(),
        )?;
        let mut settings = connect_state_kafka::KafkaSettings::new(servers);
        settings.properties.extend(args.property.iter().cloned());
        let runs = if scale.offsets_partitions > Scale::DEFAULT.offsets_partitions {
            2
        } else {
            5
        };
        let all = crate::bench_broker::bench_all_topics(&settings, scale, args.seed, runs, &topic)?;
        return Ok((broker, all));
    }
    let _ = (args, scale);
    Ok(Default::default())
}

/// Replays `records` through a fresh machine as a starting worker does (no events), and marks it
/// caught up.
pub fn replay<M: TopicMachine + Default>(records: &[SynthRecord]) -> M {
    let mut machine = M::default();
    for record in records {
        // Generated records are never refused (offsets and partitions are not negative).
        let _ = machine.handle_record(record.as_record());
        while machine.poll_event().is_some() {}
    }
    machine.mark_caught_up();
    machine
}

/// The parse floor: parses every value with the core's JSON reader and drops it; no state
/// machine. Returns how many values parsed.
pub fn parse_floor(records: &[SynthRecord]) -> usize {
    records
        .iter()
        .filter_map(|r| r.value.as_deref())
        .filter(|v| engine::json::parse(v).is_ok())
        .count()
}

/// The SIMD floor: parses every value into a `sonic-rs` DOM (validating) and drops it. Returns
/// how many values parsed. The bench's yardstick only: the core reads JSON as Jackson does.
pub fn simd_floor(records: &[SynthRecord]) -> usize {
    records
        .iter()
        .filter_map(|r| r.value.as_deref())
        .filter(|v| sonic_rs::from_slice::<sonic_rs::Value>(v).is_ok())
        .count()
}

/// A worker's restart from a config checkpoint: restore it, then replay the tail.
pub fn restart_config(checkpoint: &[u8], tail: &[SynthRecord]) -> Result<ConfigLog, CliError> {
    let mut log = ConfigLog::restore(checkpoint)
        .map_err(|e| CliError::Input(format!("the checkpoint was refused: {e}")))?;
    for record in tail {
        let _ = log.handle_record(record.as_record());
        while log.poll_event().is_some() {}
    }
    log.mark_caught_up();
    Ok(log)
}

/// Resident-set figures of this process, from `/proc/self/status` (Linux only).
pub(crate) mod memory {
    fn status_kb(field: &str) -> Option<u64> {
        let status = std::fs::read_to_string("/proc/self/status").ok()?;
        let line = status.lines().find(|l| l.starts_with(field))?;
        line[field.len()..]
            .trim()
            .trim_end_matches("kB")
            .trim()
            .parse::<u64>()
            .ok()
            .map(|kb| kb * 1024)
    }

    /// The resident set now.
    pub(crate) fn rss() -> Option<u64> {
        status_kb("VmRSS:")
    }

    /// Starts a peak measurement: resets the high-water mark to the current resident set and
    /// returns it. `None` when the peak cannot be reset.
    pub(crate) fn start_peak() -> Option<u64> {
        std::fs::write("/proc/self/clear_refs", "5").ok()?;
        rss()
    }

    /// The peak growth since [`start_peak`] returned `base`.
    pub(crate) fn peak_growth(base: Option<u64>) -> Option<u64> {
        Some(status_kb("VmHWM:")?.saturating_sub(base?))
    }
}

/// Runs `f` `runs` times and returns the shortest time and the last result.
///
/// Each run's result is dropped before the next run starts, outside the timed part: a run
/// then allocates in memory the process already holds, as the warm JVM's runs of `--java` do
/// (its heap is touched by the warm-up runs). A fresh process's first touch of new memory is
/// what the callers' first, separately timed run measures.
pub(crate) fn best_of<R>(runs: u32, mut f: impl FnMut() -> R) -> (Duration, R) {
    let mut best = Duration::MAX;
    let mut last = None;
    for _ in 0..runs.max(1) {
        drop(last.take());
        let start = Instant::now();
        let r = f();
        best = best.min(start.elapsed());
        last = Some(r);
    }
    (best, last.expect("at least one run"))
}

fn rate(records: u64, time: Duration) -> f64 {
    records as f64 / time.as_secs_f64().max(1e-9)
}

fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 {
        a / b
    } else {
        0.0
    }
}

/// Streams the offsets topic into a fresh `OffsetLog` in batches (generation untimed), measuring
/// throughput and the resident-set growth the live entries cost.
fn bench_offsets(scale: &Scale, seed: u64) -> Result<OffsetsFigures, CliError> {
    const BATCH: usize = 8_192;
    let counts = synth::offsets_counts(scale.offsets_partitions, seed);
    let mut stream = synth::offsets_topic(scale, seed);
    let mut batch: Vec<SynthRecord> = Vec::with_capacity(BATCH);
    let base = memory::rss();
    let mut log = OffsetLog::new();
    let mut busy = Duration::ZERO;
    let mut records = 0u64;
    loop {
        batch.clear();
        batch.extend(stream.by_ref().take(BATCH));
        if batch.is_empty() {
            break;
        }
        let start = Instant::now();
        for record in &batch {
            let _ = log.handle_record(record.as_record());
            while log.poll_event().is_some() {}
        }
        busy += start.elapsed();
        records += batch.len() as u64;
    }
    drop(batch);
    log.mark_caught_up();
    let after = memory::rss();
    let (live, raw) = {
        // Dropped before the tail runs: a snapshot held there would be copied from.
        let snapshot = log.snapshot();
        let raw: u64 = snapshot
            .entries()
            .map(|(k, v)| (k.map_or(0, <[u8]>::len) + v.value().len()) as u64)
            .sum();
        (snapshot.len() as u64, raw)
    };
    if records != counts.records || live != counts.live {
        return Err(CliError::Input(format!(
            "the offsets topic replayed to {live} live entries from {records} records, expected \
             {} from {}",
            counts.live, counts.records
        )));
    }
    let growth = after.zip(base).map(|(a, b)| a.saturating_sub(b));
    let (tail, tail_with_snapshot) = bench_tail(&mut log, scale, seed);
    Ok(OffsetsFigures {
        offsets_source_partitions: scale.offsets_partitions,
        offsets_records: records,
        offsets_live_entries: live,
        offsets_live_raw_bytes: raw,
        offsets_replay_records_per_sec: rate(records, busy),
        offsets_memory_bytes: growth,
        offsets_memory_bytes_per_entry: growth.map(|g| ratio(g as f64, live as f64)),
        offsets_memory_ratio: growth.map(|g| ratio(g as f64, raw as f64)),
        tail_record_seconds: tail,
        tail_with_snapshot_record_seconds: tail_with_snapshot,
        tail_with_snapshot_ratio: ratio(tail_with_snapshot, tail),
    })
}

/// Per-record seconds of tail updates applied to the replayed `log`, without and with a
/// snapshot held after every record (the best of five alternating runs each). The updates
/// are the topic's first records again (values of live keys), placed after the partitions'
/// ends.
fn bench_tail(log: &mut OffsetLog, scale: &Scale, seed: u64) -> (f64, f64) {
    let mut updates = synth::offsets_topic(scale, seed).filter(|r| r.value.is_some());
    let (mut plain, mut held) = (Duration::MAX, Duration::MAX);
    for _ in 0..5 {
        for keep_snapshots in [false, true] {
            let mut tail: Vec<SynthRecord> = updates.by_ref().take(TAIL_RECORDS).collect();
            let mut next = std::collections::BTreeMap::new();
            for record in &mut tail {
                let offset = next
                    .entry(record.partition)
                    .or_insert_with(|| log.next_fetch_offset(record.partition));
                record.offset = *offset;
                *offset += 1;
            }
            let start = Instant::now();
            let mut snapshot = keep_snapshots.then(|| log.snapshot());
            for record in &tail {
                let _ = log.handle_record(record.as_record());
                while log.poll_event().is_some() {}
                if keep_snapshots {
                    snapshot = Some(log.snapshot());
                }
            }
            drop(snapshot);
            let time = start.elapsed();
            let best = if keep_snapshots {
                &mut held
            } else {
                &mut plain
            };
            *best = (*best).min(time);
        }
    }
    let per_record = |d: Duration| d.as_secs_f64() / TAIL_RECORDS as f64;
    (per_record(plain), per_record(held))
}

fn bench_config(scale: &Scale, seed: u64, runs: u32) -> Result<ConfigFigures, CliError> {
    let topic = synth::config_topic(scale, seed);
    let records = &topic.records;
    let n = records.len() as u64;
    let mut f = ConfigFigures {
        config_connectors: topic.task_counts.len() as u64,
        config_rounds: scale.config_rounds as u64,
        config_tasks: topic.task_counts.values().map(|&c| c as u64).sum(),
        config_records: n,
        config_bytes: records.iter().map(|r| r.raw_len() as u64).sum(),
        ..ConfigFigures::default()
    };

    // The first replay also measures the peak memory.
    let base = memory::start_peak();
    let start = Instant::now();
    let log: ConfigLog = replay(records);
    let first = start.elapsed();
    f.config_replay_peak_memory_bytes = memory::peak_growth(base);
    check_config(&log, &topic)?;
    drop(log);

    let (best, log) = best_of(runs.saturating_sub(1), || replay::<ConfigLog>(records));
    drop(log);
    let full = best.min(first);
    f.config_replay_records_per_sec = rate(n, full);
    f.config_replay_mb_per_sec = f.config_bytes as f64 / 1e6 / full.as_secs_f64().max(1e-9);
    f.full_replay_seconds = full.as_secs_f64();

    let (floor, parsed) = best_of(runs, || parse_floor(records));
    if parsed == 0 {
        return Err(CliError::Input("the parse floor parsed nothing".into()));
    }
    f.parse_floor_records_per_sec = rate(n, floor);
    f.replay_to_floor_ratio = ratio(
        f.config_replay_records_per_sec,
        f.parse_floor_records_per_sec,
    );
    let (simd, simd_parsed) = best_of(runs, || simd_floor(records));
    if simd_parsed != parsed {
        return Err(CliError::Input(format!(
            "the SIMD floor parsed {simd_parsed} values, the core's reader {parsed}"
        )));
    }
    f.simd_floor_records_per_sec = rate(n, simd);
    f.replay_to_simd_floor_ratio = ratio(
        f.config_replay_records_per_sec,
        f.simd_floor_records_per_sec,
    );

    // A checkpoint at 99% of the topic, then a restart that replays the 1% tail.
    let cut = records.len() - records.len() / 100;
    let checkpoint = replay::<ConfigLog>(&records[..cut]).checkpoint();
    let tail = &records[cut..];
    let (restart, restarted) = best_of(runs, || restart_config(&checkpoint, tail));
    check_config(&restarted?, &topic)?;
    f.checkpoint_bytes = checkpoint.len() as u64;
    f.checkpoint_tail_records = tail.len() as u64;
    f.checkpoint_restart_seconds = restart.as_secs_f64();
    f.checkpoint_speedup = ratio(full.as_secs_f64(), restart.as_secs_f64());
    Ok(f)
}

/// A replayed config topic must hold what the generator committed.
pub(crate) fn check_config(log: &ConfigLog, topic: &synth::ConfigTopic) -> Result<(), CliError> {
    let snapshot = log.snapshot();
    let consistent = snapshot.inconsistent_connectors().next().is_none();
    let counts = topic
        .task_counts
        .iter()
        .all(|(c, &n)| snapshot.task_count(c) == n);
    if snapshot.connectors().count() != topic.task_counts.len() || !consistent || !counts {
        return Err(CliError::Input(
            "the synthetic config topic did not replay to the generated connectors".into(),
        ));
    }
    Ok(())
}

fn bench_status(scale: &Scale, seed: u64, runs: u32) -> Result<StatusFigures, CliError> {
    let topic = synth::status_topic(scale, seed);
    let n = topic.records.len() as u64;
    let base = memory::start_peak();
    let start = Instant::now();
    let log: StatusLog = replay(&topic.records);
    let first = start.elapsed();
    let peak = memory::peak_growth(base);
    if log.snapshot().connectors().count() != topic.connectors {
        return Err(CliError::Input(
            "the synthetic status topic did not replay to the generated connectors".into(),
        ));
    }
    drop(log);
    let (best, log) = best_of(runs.saturating_sub(1), || {
        replay::<StatusLog>(&topic.records)
    });
    drop(log);
    Ok(StatusFigures {
        status_connectors: topic.connectors as u64,
        status_records: n,
        status_replay_records_per_sec: rate(n, best.min(first)),
        status_replay_peak_memory_bytes: peak,
    })
}

#[cfg(feature = "kafka")]
fn bench_kafka(
    servers: &str,
    properties: &[(String, String)],
    topic: &synth::ConfigTopic,
    seed: u64,
    connect_worker: Option<&std::path::Path>,
) -> Result<BrokerFigures, CliError> {
    use std::sync::Arc;

    use connect_state_kafka::{raw, KafkaSettings, KafkaTransport};
    use connect_state_store::{ProduceMode, Store, StoreSettings, TopicKind, Transport};
    use engine::ProducerRecord;

    let mut settings = KafkaSettings::new(servers);
    settings.properties.extend(properties.iter().cloned());
    let millis = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    let name = format!("connect-state-bench-configs-{seed}-{millis}");
    let broker = |what: &str, e: &dyn std::fmt::Display| {
        CliError::Input(format!("bench against {servers}: {what}: {e}"))
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()?;
    runtime.block_on(async {
        let transport =
            Arc::new(KafkaTransport::new(settings.clone()).map_err(|e| broker("clients", &e))?);
        // Create the topic as Connect would (one partition, compacted), then fill it.
        let mut store = Store::new(
            StoreSettings::new(name.clone(), TopicKind::Config),
            Arc::clone(&transport),
            ConfigLog::new(),
        );
        store
            .start()
            .await
            .map_err(|e| broker("creating the topic", &e))?;
        // A compacted topic, as on a live cluster: the broker's own compaction then has nothing
        // left to remove while the readers are timed.
        let records = synth::compacted(&topic.records);
        for chunk in records.chunks(5_000) {
            let batch: Vec<ProducerRecord> = chunk
                .iter()
                .map(|r| ProducerRecord {
                    key: r.key.clone(),
                    value: r.value.clone(),
                    partition: Some(0),
                })
                .collect();
            transport
                .produce(&name, &batch, ProduceMode::Plain)
                .await
                .map_err(|e| broker("producing", &e))?;
        }
        drop(store);
        drop(transport);
        let measured = measure_reads(&settings, &name, topic, records.len() as u64, &broker).await;
        let worker = match (&measured, connect_worker) {
            (Ok(_), Some(script)) => Some(worker_startup(script, servers, &name)),
            _ => None,
        };
        let _ = raw::delete_topic(&settings, &name).await;
        let (inspect, raw_read, records) = measured?;
        let worker = worker.transpose()?;
        Ok(BrokerFigures {
            broker_records: Some(records),
            inspect_seconds: Some(inspect.as_secs_f64()),
            raw_read_seconds: Some(raw_read.as_secs_f64()),
            inspect_to_raw_ratio: Some(ratio(inspect.as_secs_f64(), raw_read.as_secs_f64())),
            connect_worker_startup_seconds: worker,
            worker_startup_to_inspect_ratio: worker.map(|w| ratio(w, inspect.as_secs_f64())),
        })
    })
}

/// Seconds a fresh Kafka Connect worker takes to read `topic` from its start, as
/// `scripts/local-cluster time-worker-startup` measures it.
#[cfg(feature = "kafka")]
fn worker_startup(script: &std::path::Path, servers: &str, topic: &str) -> Result<f64, CliError> {
    let output = std::process::Command::new(script)
        .args([
            "time-worker-startup",
            "--bootstrap",
            servers,
            "--config-topic",
            topic,
        ])
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|e| {
            CliError::Input(format!(
                "--connect-worker: cannot run {}: {e}",
                script.display()
            ))
        })?;
    let text = String::from_utf8_lossy(&output.stdout);
    match (output.status.success(), text.trim().parse::<f64>()) {
        (true, Ok(seconds)) => Ok(seconds),
        _ => Err(CliError::Input(format!(
            "--connect-worker: {} time-worker-startup failed ({}): {}",
            script.display(),
            output.status,
            text.trim()
        ))),
    }
}

/// One raw read of the topic: its time and record count.
#[cfg(feature = "kafka")]
async fn raw_read(
    settings: &connect_state_kafka::KafkaSettings,
    name: &str,
    broker: &dyn Fn(&str, &dyn std::fmt::Display) -> CliError,
) -> Result<(Duration, u64), CliError> {
    let start = Instant::now();
    let (records, _) = tokio::task::spawn_blocking({
        let settings = settings.clone();
        let name = name.to_string();
        move || connect_state_kafka::raw::count_bytes(&settings, &name)
    })
    .await
    .map_err(|e| broker("raw read", &e))?
    .map_err(|e| broker("raw read", &e))?;
    Ok((start.elapsed(), records))
}

/// The best of five raw reads and five `inspect` reads of the topic, alternating (a first raw
/// read warms the broker up), and the records the raw reads counted. Reads through a broker
/// vary more than in-memory replays, hence more runs.
#[cfg(feature = "kafka")]
async fn measure_reads(
    settings: &connect_state_kafka::KafkaSettings,
    name: &str,
    topic: &synth::ConfigTopic,
    produced: u64,
    broker: &dyn Fn(&str, &dyn std::fmt::Display) -> CliError,
) -> Result<(Duration, Duration, u64), CliError> {
    use std::sync::Arc;

    use connect_state_kafka::KafkaTransport;
    use connect_state_store::{Store, StoreSettings, TopicKind};

    let (_, records) = raw_read(settings, name, broker).await?;
    if records != produced {
        return Err(broker(
            "raw read",
            &format!("read {records} records, produced {produced}"),
        ));
    }
    let (mut inspect, mut raw) = (Duration::MAX, Duration::MAX);
    for _ in 0..5 {
        let (time, read) = raw_read(settings, name, broker).await?;
        raw = raw.min(time);
        if read != records {
            return Err(broker(
                "raw read",
                &format!("read {records} records, then {read}"),
            ));
        }
        // What `inspect` does: new clients, a store, a read to the end.
        let start = Instant::now();
        let transport =
            Arc::new(KafkaTransport::new(settings.clone()).map_err(|e| broker("clients", &e))?);
        let mut store_settings = StoreSettings::new(name, TopicKind::Config);
        store_settings.create_if_missing = false;
        let mut store = Store::new(store_settings, transport, ConfigLog::new());
        store.start().await.map_err(|e| broker("inspect", &e))?;
        inspect = inspect.min(start.elapsed());
        check_config(store.machine(), topic)?;
    }
    Ok((inspect, raw, records))
}

/// Runs one phase in a fresh `connect-state bench --phase ..` process, so that its memory
/// figures start from a fresh heap. `None` when this is not the `connect-state` binary (the
/// library used elsewhere) or the child could not run.
fn isolated<T: serde::de::DeserializeOwned>(phase: Phase, args: &BenchArgs) -> Option<T> {
    let exe = std::env::current_exe().ok()?;
    if exe.file_stem()? != "connect-state" {
        return None;
    }
    let phase = phase.to_possible_value()?.get_name().to_string();
    let output = std::process::Command::new(exe)
        .args(["bench", "--phase", &phase, "--scale", args.scale.name()])
        .args(["--seed", &args.seed.to_string(), "--format", "json"])
        .stderr(std::process::Stdio::inherit())
        .output()
        .ok()?;
    if !output.status.success() {
        return None;
    }
    serde_json::from_slice(&output.stdout).ok()
}

/// Measures one phase, in a fresh process when possible.
fn phase<T: serde::de::DeserializeOwned>(
    phase: Phase,
    args: &BenchArgs,
    isolated_ok: &mut bool,
    here: impl FnOnce() -> Result<T, CliError>,
) -> Result<T, CliError> {
    match isolated(phase, args) {
        Some(figures) => Ok(figures),
        None => {
            *isolated_ok = false;
            here()
        }
    }
}

/// Checks the programs the options name before anything is measured (a wrong path would
/// otherwise fail after minutes of generating and replaying).
fn check_programs(args: &BenchArgs) -> Result<(), CliError> {
    #[cfg(feature = "kafka")]
    if let Some(script) = &args.connect_worker {
        check_program(
            script,
            "--connect-worker",
            "the scripts/local-cluster script",
        )?;
    }
    if let Some(oracle) = &args.java {
        check_program(oracle, "--java", "the tests/java-oracle/oracle script")?;
    }
    if let Some(script) = &args.python {
        check_program(script, "--python", "the bindings/python/bench.py script")?;
    }
    Ok(())
}

/// Fails unless `path` is a file this process can run, saying what `option` expected.
fn check_program(path: &std::path::Path, option: &str, expected: &str) -> Result<(), CliError> {
    let problem = match std::fs::metadata(path) {
        Err(e) => Some(e.to_string()),
        Ok(meta) if meta.is_dir() => Some("it is a directory".to_string()),
        Ok(meta) if !runnable(&meta) => Some("it is not executable".to_string()),
        Ok(_) => None,
    };
    match problem {
        Some(problem) => Err(CliError::Input(format!(
            "{option} takes {expected} (a program to run), but {}: {problem}",
            path.display()
        ))),
        None => Ok(()),
    }
}

#[cfg(unix)]
fn runnable(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt;
    meta.is_file() && meta.permissions().mode() & 0o111 != 0
}

#[cfg(not(unix))]
fn runnable(meta: &std::fs::Metadata) -> bool {
    meta.is_file()
}

/// Runs the benchmark and writes the report.
pub fn run(args: BenchArgs, out: &mut dyn Write) -> Result<Exit, CliError> {
    let started = Instant::now();
    let scale = args.scale.scale();
    let runs = 5;
    if let Some(only) = args.phase {
        // A child of an isolated run: one phase's figures as JSON.
        let figures = match only {
            Phase::Config => serde_json::to_value(bench_config(&scale, args.seed, runs)?)?,
            Phase::Status => serde_json::to_value(bench_status(&scale, args.seed, runs)?)?,
            Phase::Offsets => serde_json::to_value(bench_offsets(&scale, args.seed)?)?,
            Phase::History => serde_json::to_value(crate::bench_history::bench_history(
                &scale, args.seed, runs,
            )?)?,
            Phase::Metrics => serde_json::to_value(crate::bench_metrics::bench_metrics(
                &scale, args.seed, runs,
            )?)?,
            Phase::Outputs => {
                serde_json::to_value(crate::bench_outputs::bench_outputs(&scale, args.seed)?)?
            }
            Phase::Broker => {
                let (broker, all) = bench_broker(&args, &scale)?;
                let mut figures = serde_json::to_value(broker)?;
                if let (Some(figures), serde_json::Value::Object(all)) =
                    (figures.as_object_mut(), serde_json::to_value(all)?)
                {
                    figures.extend(all);
                }
                figures
            }
        };
        writeln!(out, "{figures}")?;
        return Ok(Exit::Success);
    }
    check_programs(&args)?;
    let mut isolated_ok = true;
    let config = phase(Phase::Config, &args, &mut isolated_ok, || {
        bench_config(&scale, args.seed, runs)
    })?;
    let status = phase(Phase::Status, &args, &mut isolated_ok, || {
        bench_status(&scale, args.seed, runs)
    })?;
    let offsets = phase(Phase::Offsets, &args, &mut isolated_ok, || {
        bench_offsets(&scale, args.seed)
    })?;
    let history = phase(Phase::History, &args, &mut isolated_ok, || {
        crate::bench_history::bench_history(&scale, args.seed, runs)
    })?;
    let metrics = phase(Phase::Metrics, &args, &mut isolated_ok, || {
        crate::bench_metrics::bench_metrics(&scale, args.seed, runs)
    })?;
    let outputs = phase(Phase::Outputs, &args, &mut isolated_ok, || {
        crate::bench_outputs::bench_outputs(&scale, args.seed)
    })?;
    let (broker, all_topics) = bench_broker(&args, &scale)?;
    let java = match &args.java {
        Some(oracle) => crate::bench_java::bench_java(
            oracle,
            &scale,
            args.seed,
            &crate::bench_java::Ours {
                config_rate: config.config_replay_records_per_sec,
                status_rate: status.status_replay_records_per_sec,
                offsets_rate: offsets.offsets_replay_records_per_sec,
                offsets_memory: offsets.offsets_memory_bytes,
                offsets_live: offsets.offsets_live_entries,
            },
        )?,
        None => crate::bench_java::JavaFigures::default(),
    };
    let python = match &args.python {
        Some(script) => crate::bench_python::bench_python(
            script,
            &scale,
            args.seed,
            runs,
            &crate::bench_python::Ours {
                config_rate: config.config_replay_records_per_sec,
                config_connectors: config.config_connectors,
                status_rate: status.status_replay_records_per_sec,
                status_connectors: status.status_connectors,
                offsets_rate: offsets.offsets_replay_records_per_sec,
                offsets_live: offsets.offsets_live_entries,
            },
        )?,
        None => crate::bench_python::PythonFigures::default(),
    };
    let report = BenchReport {
        scale: args.scale.name().into(),
        seed: args.seed,
        runs,
        isolated: isolated_ok,
        config,
        status,
        offsets,
        broker,
        all_topics,
        history,
        metrics,
        outputs,
        java,
        python,
        total_seconds: started.elapsed().as_secs_f64(),
    };
    match args.format {
        Format::Json => writeln!(out, "{}", serde_json::to_string_pretty(&report)?)?,
        Format::Table => out.write_all(render_table(&report).as_bytes())?,
    }
    Ok(Exit::Success)
}

/// What the three topics' replays held at their peaks, each measured in a fresh process.
fn replays_memory(r: &BenchReport) -> Option<u64> {
    Some(
        r.config.config_replay_peak_memory_bytes?
            + r.status.status_replay_peak_memory_bytes?
            + r.offsets.offsets_memory_bytes?,
    )
}

fn render_table(r: &BenchReport) -> String {
    let count = |n: u64| {
        let digits = n.to_string();
        let mut out = String::new();
        for (i, c) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i) % 3 == 0 {
                out.push(',');
            }
            out.push(c);
        }
        out
    };
    let per_sec = |x: f64| format!("{} records/s", count(x.round() as u64));
    let mib = |b: Option<u64>| {
        b.map_or("n/a".to_string(), |b| {
            format!("{:.1} MiB", b as f64 / 1048576.0)
        })
    };
    let opt = |x: Option<f64>, unit: &str| x.map_or("n/a".to_string(), |x| format!("{x:.2}{unit}"));
    let row =
        |what: &str, value: String, goal: &str| vec![what.to_string(), value, goal.to_string()];
    let rows = vec![
        row(
            "config topic",
            format!(
                "{} connectors, {} tasks, {} records, {:.1} MB",
                count(r.config.config_connectors),
                count(r.config.config_tasks),
                count(r.config.config_records),
                r.config.config_bytes as f64 / 1e6
            ),
            "",
        ),
        row(
            "config replay",
            format!(
                "{} ({:.0} MB/s)",
                per_sec(r.config.config_replay_records_per_sec),
                r.config.config_replay_mb_per_sec
            ),
            "",
        ),
        row(
            "parse floor",
            per_sec(r.config.parse_floor_records_per_sec),
            "",
        ),
        row(
            "replay / floor",
            format!("{:.2}", r.config.replay_to_floor_ratio),
            ">= 0.5",
        ),
        row(
            "SIMD floor (sonic-rs DOM)",
            per_sec(r.config.simd_floor_records_per_sec),
            "",
        ),
        row(
            "replay / SIMD floor",
            format!("{:.2}", r.config.replay_to_simd_floor_ratio),
            ">= 0.5",
        ),
        row(
            "config replay peak memory",
            mib(r.config.config_replay_peak_memory_bytes),
            "",
        ),
        row(
            "checkpoint restart",
            format!(
                "{:.4} s (checkpoint {:.1} MiB + {} tail records) vs full replay {:.3} s",
                r.config.checkpoint_restart_seconds,
                r.config.checkpoint_bytes as f64 / 1048576.0,
                count(r.config.checkpoint_tail_records),
                r.config.full_replay_seconds
            ),
            "",
        ),
        row(
            "checkpoint speedup",
            format!("{:.1}x", r.config.checkpoint_speedup),
            ">= 20x",
        ),
        row(
            "status topic",
            format!(
                "{} connectors, {} records",
                count(r.status.status_connectors),
                count(r.status.status_records)
            ),
            "",
        ),
        row(
            "status replay",
            per_sec(r.status.status_replay_records_per_sec),
            "",
        ),
        row(
            "status replay peak memory",
            mib(r.status.status_replay_peak_memory_bytes),
            "",
        ),
        row(
            "offsets topic",
            format!(
                "{} source partitions, {} records, {} live ({:.1} MB raw)",
                count(r.offsets.offsets_source_partitions),
                count(r.offsets.offsets_records),
                count(r.offsets.offsets_live_entries),
                r.offsets.offsets_live_raw_bytes as f64 / 1e6
            ),
            "",
        ),
        row(
            "offsets replay",
            per_sec(r.offsets.offsets_replay_records_per_sec),
            "",
        ),
        row(
            "offsets memory",
            format!(
                "{} ({} bytes per live entry)",
                mib(r.offsets.offsets_memory_bytes),
                opt(r.offsets.offsets_memory_bytes_per_entry, "")
            ),
            "",
        ),
        row(
            "offsets memory / raw bytes",
            opt(r.offsets.offsets_memory_ratio, "x"),
            "<= 2x",
        ),
        row(
            "offsets tail per record, no snapshot held",
            format!("{:.2} us", r.offsets.tail_record_seconds * 1e6),
            "",
        ),
        row(
            "offsets tail per record, a snapshot held after each",
            format!(
                "{:.2} us",
                r.offsets.tail_with_snapshot_record_seconds * 1e6
            ),
            "",
        ),
        row(
            "tail with snapshot / without",
            format!("{:.2}x", r.offsets.tail_with_snapshot_ratio),
            "<= 3x",
        ),
        row(
            "history of the three topics",
            format!(
                "{:.3} s for {} changes from {} records, vs replay {:.3} s",
                r.history.history_seconds,
                count(r.history.history_entries),
                count(r.history.history_records),
                r.history.history_replay_seconds
            ),
            "",
        ),
        row(
            "/metrics scrape",
            format!(
                "{:.3} s for {} series ({:.1} MB) of {} connectors; memory growth over 20 scrapes {}",
                r.metrics.metrics_scrape_seconds,
                count(r.metrics.metrics_series),
                r.metrics.metrics_bytes as f64 / 1e6,
                count(r.metrics.metrics_connectors),
                mib(r.metrics.metrics_scrape_memory_growth_bytes)
            ),
            "",
        ),
        row(
            "history / replay",
            format!("{:.2}x", r.history.history_to_replay_ratio),
            "<= 2x",
        ),
        row(
            "history peak memory (the three replays')",
            format!(
                "{} ({})",
                mib(r.history.history_peak_memory_bytes),
                mib(replays_memory(r))
            ),
            "",
        ),
        row(
            "outputs: two offsets states (every partition differs)",
            format!(
                "{} ({} partitions each)",
                mib(r.outputs.outputs_states_bytes),
                count(r.outputs.outputs_partitions)
            ),
            "",
        ),
        row(
            "outputs: replay --format json peak over the states",
            mib(r.outputs.outputs_replay_json_peak_bytes),
            "bounded by the state",
        ),
        row(
            "outputs: diff json / table / same sides, peak over the states",
            format!(
                "{} / {} / {}",
                mib(r.outputs.outputs_diff_json_peak_bytes),
                mib(r.outputs.outputs_diff_table_peak_bytes),
                mib(r.outputs.outputs_diff_same_peak_bytes)
            ),
            "bounded by the states",
        ),
        row(
            "outputs: offsets import, memory per entry",
            format!(
                "{} bytes ({} entries)",
                r.outputs
                    .outputs_import_bytes_per_entry
                    .map_or("n/a".into(), |b| format!("{b:.0}")),
                count(r.outputs.outputs_import_entries)
            ),
            "< 1 KB",
        ),
        row("inspect (broker)", opt(r.broker.inspect_seconds, " s"), ""),
        row(
            "raw librdkafka read",
            opt(r.broker.raw_read_seconds, " s"),
            "",
        ),
        row(
            "inspect / raw read",
            opt(r.broker.inspect_to_raw_ratio, "x"),
            "<= 1.3x",
        ),
        row(
            "Java Connect worker start to config read",
            opt(r.broker.connect_worker_startup_seconds, " s"),
            "",
        ),
        row(
            "worker start-up / inspect",
            opt(r.broker.worker_startup_to_inspect_ratio, "x"),
            ">= 20x",
        ),
        row(
            "inspect of the three topics (broker)",
            opt(r.all_topics.inspect_all_seconds, " s"),
            "",
        ),
        row(
            "raw reads of the three topics at once",
            opt(r.all_topics.raw_read_all_seconds, " s"),
            "",
        ),
        row(
            "inspect / raw read, three topics",
            opt(r.all_topics.inspect_all_to_raw_ratio, "x"),
            "<= 1.3x",
        ),
        row(
            "serve freshness, p50 (status record produced to shown)",
            opt(r.all_topics.serve_freshness_p50_seconds, " s"),
            "",
        ),
        row(
            "serve freshness, p99",
            opt(r.all_topics.serve_freshness_p99_seconds, " s"),
            "<= 0.1 s",
        ),
    ];
    let mut rows = rows;
    if let Some(version) = &r.java.java_version {
        let j = &r.java;
        let vs = |rate: Option<f64>, ours_over: Option<f64>| {
            format!(
                "{} (ours {} faster)",
                rate.map_or("n/a".into(), per_sec),
                opt(ours_over, "x")
            )
        };
        rows.push(row(
            &format!(
                "Java {} stores on Java {version}: config replay",
                j.java_kafka_version.as_deref().unwrap_or("?")
            ),
            vs(
                j.java_config_replay_records_per_sec,
                j.config_replay_to_java_ratio,
            ),
            "",
        ));
        rows.push(row(
            "Java: status replay",
            vs(
                j.java_status_replay_records_per_sec,
                j.status_replay_to_java_ratio,
            ),
            "",
        ));
        rows.push(row(
            "Java: offsets replay",
            vs(
                j.java_offsets_replay_records_per_sec,
                j.offsets_replay_to_java_ratio,
            ),
            "",
        ));
        rows.push(row(
            "Java: offsets heap",
            format!(
                "{} ({} bytes per live entry); ours / Java {}",
                mib(j.java_offsets_heap_bytes),
                opt(j.java_offsets_heap_bytes_per_entry, ""),
                opt(j.offsets_memory_to_java_ratio, "x")
            ),
            "",
        ));
    }
    if let Some(version) = &r.python.python_version {
        let p = &r.python;
        let vs = |rate: Option<f64>, over_ours: Option<f64>| {
            format!(
                "{} ({} of ours)",
                rate.map_or("n/a".into(), per_sec),
                opt(over_ours, "x")
            )
        };
        rows.push(row(
            &format!("Python {version} (handle_records): config replay"),
            vs(
                p.python_config_replay_records_per_sec,
                p.python_config_to_rust_ratio,
            ),
            ">= 0.7x",
        ));
        rows.push(row(
            "Python: status replay",
            vs(
                p.python_status_replay_records_per_sec,
                p.python_status_to_rust_ratio,
            ),
            ">= 0.7x",
        ));
        rows.push(row(
            "Python: offsets replay",
            vs(
                p.python_offsets_replay_records_per_sec,
                p.python_offsets_to_rust_ratio,
            ),
            ">= 0.7x",
        ));
    }
    let mut out = format!(
        "connect-state bench: scale {}, seed {}, best of {} runs, {:.1} s in all\n\n",
        r.scale, r.seed, r.runs, r.total_seconds
    );
    out.push_str(&table::render(&["MEASURE", "RESULT", "GOAL"], &rows));
    out
}
