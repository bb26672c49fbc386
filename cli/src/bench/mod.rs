//! `connect-state bench`: replay throughput, memory and checkpoint restarts over the synthetic
//! topics of [`crate::synth`], measured in one run; optionally `inspect` against a real broker
//! versus a raw librdkafka read of the same topic.
//!
//! Throughputs are the best of a few runs (background load only ever slows a run down). Memory
//! is the growth of the resident set (Linux `/proc/self/status`: `VmRSS`, and `VmHWM` after
//! resetting it through `/proc/self/clear_refs`); elsewhere the memory fields are `null`.

pub mod backup;
#[cfg(feature = "kafka")]
pub mod broker;
pub mod cpu;
pub mod history;
pub mod java;
pub mod measure;
pub mod metrics;
pub mod outputs;
pub mod python;
pub mod records;
pub mod replay;
mod table;
pub mod tail;

pub use replay::{parse_floor, replay, restart_config, simd_floor};
use std::io::Write;
use std::time::Instant;

use clap::{Args, ValueEnum};
use serde::{Deserialize, Serialize};

use crate::common::{CliError, Exit, Format};
use crate::synth::{self, Scale};

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
    /// Internal: one read of these three topics (`CONFIG,STATUS,OFFSETS`) on
    /// `--bootstrap-servers` as `inspect` reads them, in this process, printed as JSON (how
    /// long it took and what it read): the broker rows' reads in a fresh process.
    #[arg(
        long,
        hide = true,
        value_name = "CONFIG,STATUS,OFFSETS",
        value_delimiter = ','
    )]
    pub fresh_read: Vec<String>,
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
    pub history: crate::bench::history::HistoryFigures,
    /// `/metrics` scrapes.
    #[serde(flatten)]
    pub metrics: crate::bench::metrics::MetricsFigures,
    /// Large outputs.
    #[serde(flatten)]
    pub outputs: crate::bench::outputs::OutputsFigures,
    /// `serve`'s tailer.
    #[serde(flatten)]
    pub tail: tail::TailFigures,
    /// Backup and restore.
    #[serde(flatten)]
    pub backup: crate::bench::backup::BackupFigures,
    /// The Java stores (`--java`).
    #[serde(flatten)]
    pub java: crate::bench::java::JavaFigures,
    /// The Python package (`--python`).
    #[serde(flatten)]
    pub python: crate::bench::python::PythonFigures,
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
    /// Offsets topic replay throughput: the topic held in memory, replayed into a fresh log,
    /// the best of warm runs (as `--java` measures Java's stores).
    pub offsets_replay_records_per_sec: f64,
    /// The same topic streamed in batches into the log whose memory is measured (generation
    /// excluded): a cold run, every entry's memory touched for the first time.
    pub offsets_stream_replay_records_per_sec: f64,
    /// Resident-set growth from streaming the offsets topic into a fresh `OffsetLog`, in a
    /// process whose allocator returns freed memory at once (the `offsets-memory` phase): what
    /// the live state holds, as Java's heap is measured after a full collection. Measured in
    /// this process (as `offsets_resident_bytes`) when no such process can run.
    pub offsets_memory_bytes: Option<u64>,
    /// The resident-set growth in this process, right after the catch-up, with the allocator's
    /// defaults: the live state, and the memory the start-up read freed (its loading table)
    /// that mimalloc has not yet returned (it waits a second).
    pub offsets_resident_bytes: Option<u64>,
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
    /// The whole machine's busy CPU seconds during a raw read (the broker's included; mean of
    /// the timed runs, from `/proc/stat`: Linux only).
    pub raw_read_cpu_seconds: Option<f64>,
    /// The same during an `inspect` read.
    pub inspect_cpu_seconds: Option<f64>,
    /// `inspect_cpu_seconds` spread over every core, over the mean time of the raw reads:
    /// the lowest mean `inspect` time over mean raw read time this machine allows for that
    /// much work, however it overlaps.
    pub inspect_cpu_floor_ratio: Option<f64>,
    /// The mean `inspect` time over the mean raw read time, to set beside the floor.
    pub inspect_mean_to_raw_ratio: Option<f64>,
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
    /// The whole machine's busy CPU seconds during the three raw reads (the broker's included;
    /// mean of the timed runs, from `/proc/stat`: Linux only).
    pub raw_read_all_cpu_seconds: Option<f64>,
    /// The same during `inspect`'s read of the three topics.
    pub inspect_all_cpu_seconds: Option<f64>,
    /// `inspect_all_cpu_seconds` spread over every core, over the mean time of the raw
    /// reads: the lowest mean ratio this machine allows for that much work.
    pub inspect_all_cpu_floor_ratio: Option<f64>,
    /// The mean `inspect` time over the mean raw read time, to set beside the floor.
    pub inspect_all_mean_to_raw_ratio: Option<f64>,
    /// Seconds `inspect`'s read of the three topics takes in a fresh process of its own (the
    /// best of the runs), its state built in memory the process never used before, as a
    /// `connect-state inspect` builds it. (The reads above run one after another in this
    /// process, which may reuse the memory of the read before.)
    pub inspect_all_fresh_seconds: Option<f64>,
    /// `inspect_all_fresh_seconds` over `raw_read_all_seconds`.
    pub inspect_all_fresh_to_raw_ratio: Option<f64>,
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
    /// The offsets topic's state alone, streamed into a fresh log: its resident-set growth
    /// (the `offsets` phase runs it in a process whose allocator returns freed memory at once).
    OffsetsMemory,
    /// History against replay, over the three topics.
    History,
    /// `/metrics` scrapes of the three topics' state.
    Metrics,
    /// What writing large outputs (replay JSON, diff, offsets import) holds beyond the states.
    Outputs,
    /// `serve`'s tailer on the in-memory log: its start, then refreshes under a stream of
    /// offsets commits.
    Tail,
    /// Backup and restore of the config and offsets topics' state.
    Backup,
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
        let broker = broker::bench_kafka(
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
        let all =
            crate::bench::broker::bench_all_topics(&settings, scale, args.seed, runs, &topic)?;
        return Ok((broker, all));
    }
    let _ = (args, scale);
    Ok(Default::default())
}

/// mimalloc keeps freed memory a second before it returns it to the system
/// (`MIMALLOC_PURGE_DELAY`, in milliseconds): the `offsets-memory` child returns it at once, so
/// that its resident set is the live state.
const RETURN_FREED_AT_ONCE: (&str, &str) = ("MIMALLOC_PURGE_DELAY", "0");

/// The offsets rows, the memory rows from the `offsets-memory` phase's own process when it
/// can run (see [`OffsetsFigures::offsets_memory_bytes`]).
fn offsets_figures(args: &BenchArgs, scale: &Scale, runs: u32) -> Result<OffsetsFigures, CliError> {
    let mut figures = replay::bench_offsets(scale, args.seed, runs)?;
    let live: Option<replay::OffsetsMemory> =
        isolated_with(Phase::OffsetsMemory, args, &[RETURN_FREED_AT_ONCE]);
    if let Some(live) = live {
        figures.set_memory(live.offsets_memory_bytes);
    }
    Ok(figures)
}

/// Runs one phase in a fresh `connect-state bench --phase ..` process, so that its memory
/// figures start from a fresh heap. `None` when this is not the `connect-state` binary (the
/// library used elsewhere) or the child could not run.
fn isolated<T: serde::de::DeserializeOwned>(phase: Phase, args: &BenchArgs) -> Option<T> {
    isolated_with(phase, args, &[])
}

/// [`isolated`], with `env` set in the child's environment.
fn isolated_with<T: serde::de::DeserializeOwned>(
    phase: Phase,
    args: &BenchArgs,
    env: &[(&str, &str)],
) -> Option<T> {
    let exe = std::env::current_exe().ok()?;
    if exe.file_stem()? != "connect-state" {
        return None;
    }
    let phase = phase.to_possible_value()?.get_name().to_string();
    let output = std::process::Command::new(exe)
        .args(["bench", "--phase", &phase, "--scale", args.scale.name()])
        .args(["--seed", &args.seed.to_string(), "--format", "json"])
        .envs(env.iter().copied())
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
    #[cfg(feature = "kafka")]
    if !args.fresh_read.is_empty() {
        let servers = args
            .bootstrap_servers
            .as_deref()
            .ok_or_else(|| CliError::Input("--fresh-read reads from --bootstrap-servers".into()))?;
        let mut settings = connect_state_kafka::KafkaSettings::new(servers);
        settings.properties.extend(args.property.iter().cloned());
        let read = broker::fresh_read(&settings, &args.fresh_read)?;
        writeln!(out, "{}", serde_json::to_value(read)?)?;
        return Ok(Exit::Success);
    }
    if let Some(only) = args.phase {
        // A child of an isolated run: one phase's figures as JSON.
        let figures = match only {
            Phase::Config => serde_json::to_value(replay::bench_config(&scale, args.seed, runs)?)?,
            Phase::Status => serde_json::to_value(replay::bench_status(&scale, args.seed, runs)?)?,
            Phase::Offsets => serde_json::to_value(offsets_figures(&args, &scale, runs)?)?,
            Phase::OffsetsMemory => {
                serde_json::to_value(replay::bench_offsets_memory(&scale, args.seed)?)?
            }
            Phase::History => serde_json::to_value(crate::bench::history::bench_history(
                &scale, args.seed, runs,
            )?)?,
            Phase::Metrics => serde_json::to_value(crate::bench::metrics::bench_metrics(
                &scale, args.seed, runs,
            )?)?,
            Phase::Outputs => {
                serde_json::to_value(crate::bench::outputs::bench_outputs(&scale, args.seed)?)?
            }
            Phase::Tail => serde_json::to_value(tail::bench_tail(&scale, args.seed)?)?,
            Phase::Backup => {
                serde_json::to_value(crate::bench::backup::bench_backup(&scale, args.seed)?)?
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
        replay::bench_config(&scale, args.seed, runs)
    })?;
    let status = phase(Phase::Status, &args, &mut isolated_ok, || {
        replay::bench_status(&scale, args.seed, runs)
    })?;
    let offsets = phase(Phase::Offsets, &args, &mut isolated_ok, || {
        offsets_figures(&args, &scale, runs)
    })?;
    let history = phase(Phase::History, &args, &mut isolated_ok, || {
        crate::bench::history::bench_history(&scale, args.seed, runs)
    })?;
    let metrics = phase(Phase::Metrics, &args, &mut isolated_ok, || {
        crate::bench::metrics::bench_metrics(&scale, args.seed, runs)
    })?;
    let outputs = phase(Phase::Outputs, &args, &mut isolated_ok, || {
        crate::bench::outputs::bench_outputs(&scale, args.seed)
    })?;
    let tail = phase(Phase::Tail, &args, &mut isolated_ok, || {
        tail::bench_tail(&scale, args.seed)
    })?;
    let backup = phase(Phase::Backup, &args, &mut isolated_ok, || {
        crate::bench::backup::bench_backup(&scale, args.seed)
    })?;
    let (broker, all_topics) = bench_broker(&args, &scale)?;
    let java = match &args.java {
        Some(oracle) => crate::bench::java::bench_java(
            oracle,
            &scale,
            args.seed,
            &crate::bench::java::Ours {
                config_rate: config.config_replay_records_per_sec,
                status_rate: status.status_replay_records_per_sec,
                offsets_rate: offsets.offsets_replay_records_per_sec,
                offsets_memory: offsets.offsets_memory_bytes,
                offsets_live: offsets.offsets_live_entries,
            },
        )?,
        None => crate::bench::java::JavaFigures::default(),
    };
    let python = match &args.python {
        Some(script) => crate::bench::python::bench_python(
            script,
            &scale,
            args.seed,
            runs,
            &crate::bench::python::Ours {
                config_rate: config.config_replay_records_per_sec,
                config_connectors: config.config_connectors,
                status_rate: status.status_replay_records_per_sec,
                status_connectors: status.status_connectors,
                // Python streams the offsets topic once in batches: its Rust counterpart.
                offsets_rate: offsets.offsets_stream_replay_records_per_sec,
                offsets_live: offsets.offsets_live_entries,
            },
        )?,
        None => crate::bench::python::PythonFigures::default(),
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
        tail,
        backup,
        java,
        python,
        total_seconds: started.elapsed().as_secs_f64(),
    };
    match args.format {
        Format::Json => writeln!(out, "{}", serde_json::to_string_pretty(&report)?)?,
        Format::Table => out.write_all(table::render_table(&report).as_bytes())?,
    }
    Ok(Exit::Success)
}
