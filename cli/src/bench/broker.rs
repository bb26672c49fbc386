//! The broker rows of `bench` beyond the config topic's: `inspect` of the three synthetic
//! topics against raw reads of the same three, and how soon `serve` shows a status record
//! produced to the broker.

use engine::OwnedRecord;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use connect_state_kafka::{raw, KafkaSettings, KafkaTransport};
use connect_state_store::{ProduceMode, Store, StoreSettings, TopicKind, Transport};
use engine::config::ConfigLog;
use engine::offsets::OffsetLog;
use engine::status::StatusLog;
use engine::{ProducerRecord, TopicMachine};

use crate::bench::cpu::{Run, Work};
use crate::bench::measure::ratio;
use crate::bench::replay::check_config;
use crate::bench::FRESHNESS_UPDATES;
use crate::bench::{AllTopicsFigures, BrokerFigures};
use crate::common::{CliError, Format};
use crate::inspect::InspectArgs;
use crate::synth::{self, Scale};

/// How long one update may take to show in `serve` before the row fails.
const FRESHNESS_TIMEOUT: Duration = Duration::from_secs(30);

/// The three synthetic topics' names on the broker.
struct Names {
    config: String,
    status: String,
    offsets: String,
}

/// Writes the three synthetic topics at `scale` to the broker, times `inspect` against raw
/// reads of them (the best of `runs`, alternating), then times `serve`'s freshness over them,
/// and deletes the topics.
pub fn bench_all_topics(
    settings: &KafkaSettings,
    scale: &Scale,
    seed: u64,
    runs: u32,
    config: &synth::ConfigTopic,
) -> Result<AllTopicsFigures, CliError> {
    let servers = settings.bootstrap_servers.clone();
    let broker = move |what: &str, e: &dyn std::fmt::Display| {
        CliError::Input(format!("bench against {servers}: {what}: {e}"))
    };
    let millis = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    let names = Names {
        config: format!("connect-state-bench-all-configs-{seed}-{millis}"),
        status: format!("connect-state-bench-all-status-{seed}-{millis}"),
        offsets: format!("connect-state-bench-all-offsets-{seed}-{millis}"),
    };
    let status = synth::status_topic(scale, seed);
    let expected_live = synth::offsets_counts(scale.offsets_partitions, seed).live;
    let runtime = crate::common::runtime()?;
    let produced = runtime.block_on(async {
        let transport =
            Arc::new(KafkaTransport::new(settings.clone()).map_err(|e| broker("clients", &e))?);
        let mut records = 0;
        let compacted = synth::compacted(&config.records);
        records += produce::<ConfigLog>(&transport, &names.config, TopicKind::Config, compacted)
            .await
            .map_err(|e| broker("producing the config topic", &e))?;
        records += produce::<StatusLog>(&transport, &names.status, TopicKind::Status, {
            status.records.clone()
        })
        .await
        .map_err(|e| broker("producing the status topic", &e))?;
        let offsets = synth::offsets_topic(scale, seed);
        records += produce::<OffsetLog>(&transport, &names.offsets, TopicKind::Offsets, offsets)
            .await
            .map_err(|e| broker("producing the offsets topic", &e))?;
        Ok::<_, CliError>(records)
    });
    let figures = produced.and_then(|records| {
        let reads = time_reads(settings, &names, runs, records, &broker, |c, s, o| {
            check_all(c, s, o, config, &status, expected_live)
        })?;
        let (inspect, raw) = (reads.inspect, reads.raw);
        let expected = FreshRead {
            seconds: 0.0,
            connectors: status.connectors as u64,
            offsets: expected_live,
        };
        let fresh = fresh_reads(settings, &names, runs, &expected, &broker)?;
        let connector = config_connector(config)?;
        let (refresh, p50, p99) = serve_freshness(settings, &names, &connector, &broker)?;
        Ok(AllTopicsFigures {
            broker_all_records: Some(records),
            inspect_all_seconds: Some(inspect.as_secs_f64()),
            raw_read_all_seconds: Some(raw.as_secs_f64()),
            inspect_all_to_raw_ratio: Some(inspect.as_secs_f64() / raw.as_secs_f64()),
            raw_read_all_cpu_seconds: reads.raw_work.mean_seconds(),
            inspect_all_cpu_seconds: reads.inspect_work.mean_seconds(),
            inspect_all_cpu_floor_ratio: reads.inspect_work.floor_ratio(&reads.raw_work),
            inspect_all_mean_to_raw_ratio: reads.mean_ratio(),
            inspect_all_fresh_seconds: fresh.map(|f| f.as_secs_f64()),
            inspect_all_fresh_to_raw_ratio: fresh
                .map(|f| ratio(f.as_secs_f64(), raw.as_secs_f64())),
            serve_refresh_ms: Some(refresh),
            serve_freshness_p50_seconds: Some(p50),
            serve_freshness_p99_seconds: Some(p99),
        })
    });
    runtime.block_on(async {
        for name in [&names.config, &names.status, &names.offsets] {
            let _ = raw::delete_topic(settings, name).await;
        }
    });
    figures
}

/// Creates `name` as Connect would (with compaction held off while the bench runs, so that
/// every read counts the same records) and writes `records` to it; returns how many.
async fn produce<M: TopicMachine + Default>(
    transport: &Arc<KafkaTransport>,
    name: &str,
    kind: TopicKind,
    records: impl IntoIterator<Item = OwnedRecord>,
) -> Result<u64, CliError> {
    let mut settings = StoreSettings::new(name, kind);
    settings
        .topic_configs
        .insert("min.compaction.lag.ms".into(), "86400000".into());
    let mut store = Store::new(settings, Arc::clone(transport), M::default());
    store
        .start()
        .await
        .map_err(|e| CliError::Input(format!("creating {name}: {e}")))?;
    let mut records = records.into_iter().peekable();
    let mut written = 0;
    while records.peek().is_some() {
        let batch: Vec<ProducerRecord> = records
            .by_ref()
            .take(5_000)
            .map(OwnedRecord::into_producer_record)
            .collect();
        written += batch.len() as u64;
        transport
            .produce(name, &batch, ProduceMode::Plain)
            .await
            .map_err(|e| CliError::Input(format!("producing to {name}: {e}")))?;
    }
    Ok(written)
}

/// What [`time_reads`] and [`measure_reads`] measure: the best times of the two readers, and the
/// machine's CPU work during their timed runs.
struct Reads {
    inspect: Duration,
    raw: Duration,
    inspect_work: Work,
    raw_work: Work,
}

impl Reads {
    /// The mean `inspect` time over the mean raw read time.
    fn mean_ratio(&self) -> Option<f64> {
        Some(ratio(
            self.inspect_work.mean_wall()?,
            self.raw_work.mean_wall()?,
        ))
    }
}

impl Default for Reads {
    fn default() -> Self {
        Self {
            inspect: Duration::MAX,
            raw: Duration::MAX,
            inspect_work: Work::default(),
            raw_work: Work::default(),
        }
    }
}

/// The best of `runs` reads of the three topics by `inspect` and by three raw readers at once,
/// alternating; each `inspect` read is checked by `check`.
fn time_reads(
    settings: &KafkaSettings,
    names: &Names,
    runs: u32,
    records: u64,
    broker: &dyn Fn(&str, &dyn std::fmt::Display) -> CliError,
    check: impl Fn(&ConfigLog, &StatusLog, &OffsetLog) -> Result<(), CliError>,
) -> Result<Reads, CliError> {
    let args = inspect_args(settings, names);
    let mut reads = Reads::default();
    // A first raw read warms the broker up.
    for run in 0..=runs {
        let (start, work) = (Instant::now(), Run::start());
        let counted = raw_read_all(settings, names).map_err(|e| broker("raw read", &e))?;
        if run > 0 {
            reads.raw = reads.raw.min(start.elapsed());
            reads.raw_work.count(work);
        }
        if counted != records {
            return Err(broker(
                "raw read",
                &format!("read {counted} records of the three topics, produced {records}"),
            ));
        }
        if run == 0 {
            continue;
        }
        let (start, work) = (Instant::now(), Run::start());
        let (config, status, offsets) = crate::inspect::read_all(&args)?;
        reads.inspect = reads.inspect.min(start.elapsed());
        reads.inspect_work.count(work);
        match (config, status, offsets) {
            (Some(c), Some(s), Some(o)) => check(&c, &s, &o)?,
            _ => return Err(broker("inspect", &"a topic was not read")),
        }
    }
    Ok(reads)
}

/// What `inspect`'s read of the three topics in a fresh process read, and how long it took:
/// what `bench --fresh-read` prints.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FreshRead {
    /// Seconds the read took (from the start of the three reads to their end; the process's
    /// start and exit are not in it).
    pub seconds: f64,
    /// Connectors with a status.
    pub connectors: u64,
    /// Live offsets entries.
    pub offsets: u64,
}

/// `bench --fresh-read CONFIG,STATUS,OFFSETS`: one read of the three topics by `inspect`, in
/// this process.
pub fn fresh_read(settings: &KafkaSettings, topics: &[String]) -> Result<FreshRead, CliError> {
    let [config, status, offsets] = topics else {
        return Err(CliError::Input(format!(
            "--fresh-read takes three topics, CONFIG,STATUS,OFFSETS; got {}",
            topics.len()
        )));
    };
    let names = Names {
        config: config.clone(),
        status: status.clone(),
        offsets: offsets.clone(),
    };
    let start = Instant::now();
    let (_, status, offsets) = crate::inspect::read_all(&inspect_args(settings, &names))?;
    let seconds = start.elapsed().as_secs_f64();
    Ok(FreshRead {
        seconds,
        connectors: status.map_or(0, |s| s.snapshot().connectors().count() as u64),
        offsets: offsets.map_or(0, |o| o.snapshot().len() as u64),
    })
}

/// The best of `runs` reads of the three topics by `inspect`, each in a fresh `connect-state
/// bench --fresh-read` process, each checked against what `expected` holds. `None` when this
/// is not the `connect-state` binary (the library used elsewhere).
fn fresh_reads(
    settings: &KafkaSettings,
    names: &Names,
    runs: u32,
    expected: &FreshRead,
    broker: &dyn Fn(&str, &dyn std::fmt::Display) -> CliError,
) -> Result<Option<Duration>, CliError> {
    let exe = std::env::current_exe()?;
    if exe.file_stem().is_none_or(|stem| stem != "connect-state") {
        return Ok(None);
    }
    let topics = format!("{},{},{}", names.config, names.status, names.offsets);
    let mut best = Duration::MAX;
    for _ in 0..runs {
        let mut command = Command::new(&exe);
        command.args(["bench", "--bootstrap-servers", &settings.bootstrap_servers]);
        for (key, value) in &settings.properties {
            command.arg("-X").arg(format!("{key}={value}"));
        }
        let output = command
            .args(["--fresh-read", &topics, "--format", "json"])
            .stdin(Stdio::null())
            .output()
            .map_err(|e| broker("starting a fresh read", &e))?;
        if !output.status.success() {
            let why = String::from_utf8_lossy(&output.stderr);
            return Err(broker("a fresh read", &crate::common::redact(why.trim())));
        }
        let read: FreshRead = serde_json::from_slice(&output.stdout)
            .map_err(|e| broker("a fresh read's answer", &e))?;
        if (read.connectors, read.offsets) != (expected.connectors, expected.offsets) {
            return Err(broker(
                "a fresh read",
                &format!(
                    "read {} connector statuses and {} live offsets, expected {} and {}",
                    read.connectors, read.offsets, expected.connectors, expected.offsets
                ),
            ));
        }
        best = best.min(Duration::from_secs_f64(read.seconds));
    }
    Ok(Some(best))
}

/// `inspect`'s arguments for a read of the three topics.
fn inspect_args(settings: &KafkaSettings, names: &Names) -> InspectArgs {
    InspectArgs {
        kafka: settings.clone(),
        config_topic: Some(names.config.clone()),
        status_topic: Some(names.status.clone()),
        offsets_topic: Some(names.offsets.clone()),
        create_topics: false,
        format: Format::Json,
        as_of: None,
    }
}

/// Raw reads of the three topics at once, each on its own thread; the records counted.
fn raw_read_all(settings: &KafkaSettings, names: &Names) -> Result<u64, String> {
    let count = |name: &str| {
        raw::count_bytes(settings, name)
            .map(|(records, _)| records)
            .map_err(|e| format!("{name}: {e}"))
    };
    std::thread::scope(|scope| {
        let reads: Vec<_> = [&names.config, &names.status, &names.offsets]
            .into_iter()
            .map(|name| scope.spawn(move || count(name)))
            .collect();
        let mut total = 0;
        for read in reads {
            total += read
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))?;
        }
        Ok(total)
    })
}

/// Whether `inspect` read what replaying the synthetic topics gives.
fn check_all(
    config: &ConfigLog,
    status: &StatusLog,
    offsets: &OffsetLog,
    config_topic: &synth::ConfigTopic,
    status_topic: &synth::StatusTopic,
    live: u64,
) -> Result<(), CliError> {
    crate::bench::replay::check_config(config, config_topic)?;
    let connectors = status.snapshot().connectors().count();
    let entries = offsets.snapshot().len() as u64;
    if connectors != status_topic.connectors || entries != live {
        return Err(CliError::Input(format!(
            "inspect read {connectors} connector statuses and {entries} live offsets, expected \
             {} and {live}",
            status_topic.connectors
        )));
    }
    Ok(())
}

/// A connector the config topic holds at its end.
fn config_connector(topic: &synth::ConfigTopic) -> Result<String, CliError> {
    let log: ConfigLog = crate::bench::replay::replay(&topic.records);
    let snapshot = log.snapshot();
    let first = snapshot.connectors().next().map(str::to_string);
    first.ok_or_else(|| CliError::Input("the synthetic config topic has no connector".into()))
}

/// A `serve` child process, stopped when dropped.
struct Served(Child);

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `connect-state serve` (this binary) on the config and status topics with its default
/// refresh, produces [`FRESHNESS_UPDATES`] status records of `connector` one after another and
/// times each until `/connectors/{connector}/status` shows it: the refresh period, p50, p99.
fn serve_freshness(
    settings: &KafkaSettings,
    names: &Names,
    connector: &str,
    broker: &dyn Fn(&str, &dyn std::fmt::Display) -> CliError,
) -> Result<(u64, f64, f64), CliError> {
    let exe = std::env::current_exe()?;
    let mut command = Command::new(exe);
    command.args([
        "serve",
        "--bootstrap-servers",
        &settings.bootstrap_servers,
        "--config-topic",
        &names.config,
        "--status-topic",
        &names.status,
        "--listen",
        "127.0.0.1:0",
    ]);
    for (key, value) in &settings.properties {
        command.arg("-X").arg(format!("{key}={value}"));
    }
    let mut child = Served(
        command
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| broker("starting serve", &e))?,
    );
    let stdout = child
        .0
        .stdout
        .take()
        .ok_or_else(|| broker("serve", &"no stdout"))?;
    let mut line = String::new();
    BufReader::new(stdout)
        .read_line(&mut line)
        .map_err(|e| broker("serve", &e))?;
    let address: SocketAddr = line
        .trim()
        .strip_prefix("listening on http://")
        .and_then(|a| a.parse().ok())
        .ok_or_else(|| broker("serve", &format!("unexpected first line {line:?}")))?;
    let runtime = crate::common::runtime()?;
    let transport = KafkaTransport::new(settings.clone()).map_err(|e| broker("clients", &e))?;
    // The synthetic names need no escaping in a path.
    let path = format!("/connectors/{connector}/status");
    let mut times = Vec::with_capacity(FRESHNESS_UPDATES);
    for update in 0..FRESHNESS_UPDATES {
        let worker = format!("bench-freshness-{update}");
        let value = format!(
            r#"{{"state":"RUNNING","trace":null,"worker_id":"{worker}","generation":{}}}"#,
            1_000_000 + update
        );
        let record = ProducerRecord {
            key: format!("status-connector-{connector}").into_bytes(),
            value: Some(value.into_bytes()),
            partition: None,
        };
        let start = Instant::now();
        runtime
            .block_on(transport.produce(&names.status, &[record], ProduceMode::Plain))
            .map_err(|e| broker("producing a status record", &e))?;
        let needle = format!(r#""worker_id":"{worker}""#);
        loop {
            if get(address, &path).is_ok_and(|body| body.contains(&needle)) {
                break;
            }
            if start.elapsed() > FRESHNESS_TIMEOUT {
                return Err(broker(
                    "serve freshness",
                    &format!("update {update} did not show within {FRESHNESS_TIMEOUT:?}"),
                ));
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        times.push(start.elapsed().as_secs_f64());
    }
    times.sort_by(f64::total_cmp);
    let at = |q: f64| times[((times.len() - 1) as f64 * q).round() as usize];
    Ok((crate::serve::DEFAULT_REFRESH_MS, at(0.5), at(0.99)))
}

/// The body of `GET path` on `address` (one connection per request).
fn get(address: SocketAddr, path: &str) -> std::io::Result<String> {
    let mut stream = TcpStream::connect_timeout(&address, Duration::from_secs(2))?;
    stream.set_read_timeout(Some(Duration::from_secs(2)))?;
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n"
    )?;
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer)?;
    Ok(String::from_utf8_lossy(&answer).into_owned())
}

/// The config topic's broker rows: the compacted topic written to the broker, then `inspect`'s
/// read against a raw read (and a worker's start-up read, with `connect_worker`).
pub fn bench_kafka(
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
                    partition: Some(0),
                    ..r.clone().into_producer_record()
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
        let (reads, records) = measured?;
        let worker = worker.transpose()?;
        let (inspect, raw_read) = (reads.inspect.as_secs_f64(), reads.raw.as_secs_f64());
        Ok(BrokerFigures {
            broker_records: Some(records),
            inspect_seconds: Some(inspect),
            raw_read_seconds: Some(raw_read),
            inspect_to_raw_ratio: Some(ratio(inspect, raw_read)),
            raw_read_cpu_seconds: reads.raw_work.mean_seconds(),
            inspect_cpu_seconds: reads.inspect_work.mean_seconds(),
            inspect_cpu_floor_ratio: reads.inspect_work.floor_ratio(&reads.raw_work),
            inspect_mean_to_raw_ratio: reads.mean_ratio(),
            connect_worker_startup_seconds: worker,
            worker_startup_to_inspect_ratio: worker.map(|w| ratio(w, inspect)),
        })
    })
}

/// Seconds a fresh Kafka Connect worker takes to read `topic` from its start, as
/// `scripts/local-cluster time-worker-startup` measures it.
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
/// read warms the broker up), the machine's CPU work during them, and the records the raw
/// reads counted. Reads through a broker vary more than in-memory replays, hence more runs.
async fn measure_reads(
    settings: &connect_state_kafka::KafkaSettings,
    name: &str,
    topic: &synth::ConfigTopic,
    produced: u64,
    broker: &dyn Fn(&str, &dyn std::fmt::Display) -> CliError,
) -> Result<(Reads, u64), CliError> {
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
    let mut reads = Reads::default();
    for _ in 0..5 {
        let work = Run::start();
        let (time, read) = raw_read(settings, name, broker).await?;
        reads.raw_work.count(work);
        reads.raw = reads.raw.min(time);
        if read != records {
            return Err(broker(
                "raw read",
                &format!("read {records} records, then {read}"),
            ));
        }
        // What `inspect` does: new clients, a store, a read to the end.
        let (start, work) = (Instant::now(), Run::start());
        let transport =
            Arc::new(KafkaTransport::new(settings.clone()).map_err(|e| broker("clients", &e))?);
        let mut store_settings = StoreSettings::new(name, TopicKind::Config);
        store_settings.create_if_missing = false;
        let mut store = Store::new(store_settings, transport, ConfigLog::new());
        store.start().await.map_err(|e| broker("inspect", &e))?;
        reads.inspect = reads.inspect.min(start.elapsed());
        reads.inspect_work.count(work);
        check_config(store.machine(), topic)?;
    }
    Ok((reads, records))
}
