//! The `connect-state` command line: replay and inspect Kafka Connect's internal topics.
//!
//! The binary is a thin `main` over [`run`]; the dump reader ([`kcat`]) and the replay logic
//! ([`replay`]) are library modules so tests and fuzz targets drive the same code.

pub mod admission;
pub mod bench;
pub mod demo;
pub mod diff;
pub mod doctor;
pub mod history;
pub mod http1;
#[cfg(feature = "kafka")]
pub mod inspect;
pub mod metrics;
pub mod offsets;
mod parallel;
pub mod progress;
pub mod replay;
pub mod serve;
pub mod source;
mod table;
pub mod ui;
pub mod view;
pub mod when;

pub use connect_state_ops::{kcat, rest, synth};

use std::io::{self, Write};
use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};
use engine::TopicKind;

/// The largest `--timeout`: librdkafka takes milliseconds as a 32-bit integer, so more than
/// `i32::MAX` ms (2,147,483 s) would wrap around to a short timeout.
pub const MAX_TIMEOUT_SECONDS: u64 = i32::MAX as u64 / 1000;

/// What `--version` prints: the tool's version and that of the JSON contract its snapshots,
/// events and diagnostics are written in ([`connect_state_ops::embed::CONTRACT_VERSION`]; a
/// test keeps the two equal), so an embedder can compare a binding's with the binary's.
pub const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), " (JSON contract 1)");

/// Read Kafka Connect's internal topics exactly as a Java worker does.
#[derive(Debug, Parser)]
#[command(
    name = "connect-state",
    version = VERSION,
    about,
    long_about = None,
    after_help = "Examples:\n  \
        connect-state demo\n  \
        connect-state replay --topic config configs.jsonl\n  \
        connect-state inspect --bootstrap-servers localhost:9092 --config-topic connect-configs\n  \
        connect-state doctor --from-dump config=configs.jsonl --from-dump status=status.jsonl\n  \
        connect-state offsets export --connector src --from-dump offsets=offsets.jsonl\n\n\
        Run `connect-state <command> --help` for each command's options and examples."
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
/// The subcommands.
pub enum Command {
    /// Tell the story of a Connect cluster on the in-memory simulator (no Kafka needed): a
    /// leader crash, compaction, an inconsistent connector and its repair, statuses, topic
    /// tracking and an offsets reset, as readable tables.
    #[command(after_help = "Examples:\n  \
        connect-state demo\n  \
        connect-state demo --seed 42\n  \
        connect-state demo --format json > story.json")]
    Demo(demo::DemoArgs),
    /// Replay a topic dump in kcat's JSON-lines format and print the state a worker would hold.
    #[command(after_help = "Examples:\n  \
        kcat -C -b localhost:9092 -t connect-configs -e -J > configs.jsonl\n  \
        connect-state replay --topic config configs.jsonl\n  \
        connect-state replay --topic config --format json --events --live-from 120 configs.jsonl\n  \
        connect-state replay --topic config --as-of 2026-11-30T18:00:00Z configs.jsonl\n  \
        cat configs.jsonl | connect-state replay --topic config -")]
    Replay {
        /// Which internal topic the dump holds.
        #[arg(long, value_parser = topic_kind())]
        topic: TopicKind,
        /// Output format: a readable table, or the stable JSON contract.
        #[arg(long, value_enum, default_value_t = Format::Table)]
        format: Format,
        /// Also print the events (Java's listener callbacks) of the live part of the dump.
        #[arg(long)]
        events: bool,
        /// Records below this offset are the start-up catch-up (no events); later ones are live.
        #[arg(long, value_name = "OFFSET")]
        live_from: Option<i64>,
        /// The state as it was then: an offset (config topic, that record included) or an
        /// RFC 3339 time (records with that timestamp included; per partition).
        #[arg(long, value_name = "OFFSET|TIME", value_parser = when::parse_point)]
        as_of: Option<connect_state_ops::cut::Point>,
        /// Start from this checkpoint (one `--save-checkpoint` wrote, or an embedding's
        /// `checkpoint()`) instead of an empty state: the records it already holds are dropped
        /// as redeliveries, so the dump may be the whole topic or only what came after.
        #[arg(long, value_name = "FILE", conflicts_with = "as_of")]
        from_checkpoint: Option<PathBuf>,
        /// Write the state at the end of the dump to this file as a checkpoint (what
        /// `--from-checkpoint` and the bindings' `restore` read).
        #[arg(long, value_name = "FILE")]
        save_checkpoint: Option<PathBuf>,
        /// How the dump is read.
        #[command(flatten)]
        dump: source::DumpArgs,
        /// The dump file (`-` for standard input).
        file: PathBuf,
    },
    /// Read a live cluster's internal topics to their end and print what `replay` prints.
    #[cfg(feature = "kafka")]
    #[command(after_help = "Examples:\n  \
        connect-state inspect --bootstrap-servers localhost:9092 --config-topic connect-configs\n  \
        connect-state inspect --bootstrap-servers localhost:9092 --config-topic connect-configs \\\n      \
        --status-topic connect-status --as-of 2026-11-30T18:00:00Z\n  \
        connect-state inspect --bootstrap-servers broker:9093 --config-topic connect-configs \\\n      \
        --status-topic connect-status --offsets-topic connect-offsets --format json \\\n      \
        -X security.protocol=SASL_SSL -X sasl.mechanism=PLAIN -X sasl.username=u -X sasl.password=...")]
    Inspect {
        /// The cluster's `bootstrap.servers`.
        #[arg(long, value_name = "HOST:PORT")]
        bootstrap_servers: String,
        /// The config topic (`config.storage.topic`).
        #[arg(long, value_name = "TOPIC")]
        config_topic: Option<String>,
        /// The status topic (`status.storage.topic`).
        #[arg(long, value_name = "TOPIC")]
        status_topic: Option<String>,
        /// The offsets topic (`offset.storage.topic`).
        #[arg(long, value_name = "TOPIC")]
        offsets_topic: Option<String>,
        /// Create missing topics as Connect would (compacted; 1, 5 and 25 partitions).
        #[arg(long)]
        create_topics: bool,
        /// Read with `isolation.level=read_committed` (as workers with exactly-once source
        /// support enabled do).
        #[arg(long)]
        read_committed: bool,
        /// Most seconds one broker call may take (at most 2147483: librdkafka takes milliseconds
        /// as a 32-bit integer).
        #[arg(long, default_value_t = 30, value_name = "SECONDS",
              value_parser = clap::value_parser!(u64).range(1..=MAX_TIMEOUT_SECONDS))]
        timeout: u64,
        /// Output format: a readable table, or `{"config": .., "status": .., "offsets": ..}`.
        #[arg(long, value_enum, default_value_t = Format::Table)]
        format: Format,
        /// The topics as they were then: an offset (config topic only, that record included)
        /// or an RFC 3339 time (each partition up to it, records with that timestamp included).
        #[arg(long, value_name = "OFFSET|TIME", value_parser = when::parse_point)]
        as_of: Option<connect_state_ops::cut::Point>,
        /// A librdkafka property (repeatable), e.g. `-X security.protocol=SSL`. Secrets are
        /// never printed.
        #[arg(short = 'X', value_name = "KEY=VALUE", value_parser = inspect::parse_property)]
        property: Vec<(String, String)>,
    },
    /// Examine the internal topics for what makes Connect misbehave: each finding with the
    /// records that show it and a repair hint. Exits 0 when healthy, 1 with findings, 2 on error.
    #[command(after_help = "Checks: inconsistent-connector, ghost-task-records, \
        target-state-without-connector, restart-request-for-unknown-connector, \
        status-of-deleted-connector, topics-of-deleted-connector, orphan-task-status, \
        mismatched-topic-status, offsets-of-deleted-connector, topic-layout, bad-dump-lines.\n\n\
        Examples:\n  \
        connect-state doctor --from-dump config=configs.jsonl --from-dump status=status.jsonl \\\n      \
        --from-dump offsets=offsets.jsonl\n  \
        connect-state doctor --bootstrap-servers localhost:9092 --config-topic connect-configs \\\n      \
        --status-topic connect-status --offsets-topic connect-offsets --format json\n  \
        connect-state doctor --from-dump config=configs.jsonl --as-of 120")]
    Doctor(doctor::DoctorArgs),
    /// Tell what changed, when: one chronological list of the changes in the three topics
    /// (configs with diffs, task commits, inconsistencies and their repair, target states,
    /// statuses, topics, offsets), as the replay machines saw them.
    #[command(
        after_help = "Kinds: connector_created, connector_config_changed, connector_deleted, \
        tasks_committed, became_inconsistent, became_consistent, target_state_changed, \
        restart_requested, task_count_record, session_key_rotated, logger_level_set, \
        connector_status_changed, task_status_changed, topic_activated, topic_reset, \
        offsets_committed, offsets_reset.\n\n\
        Examples:\n  \
        kcat -C -b localhost:9092 -t connect-configs -e -J > configs.jsonl\n  \
        connect-state history --from-dump config=configs.jsonl --from-dump status=status.jsonl\n  \
        connect-state history --connector orders-sink --since 2026-11-30T18:00:00Z \\\n      \
        --from-dump config=configs.jsonl --from-dump status=status.jsonl --format json\n  \
        connect-state history --bootstrap-servers localhost:9092 --config-topic connect-configs \\\n      \
        --status-topic connect-status --offsets-topic connect-offsets --until 500"
    )]
    History(history::HistoryArgs),
    /// Compare two sources (dumps, live clusters, either --as-of a past point): connectors
    /// only in one, config differences (secrets masked), target states, task counts and source
    /// offsets per partition. Exits 0 when equal, 1 when they differ, 2 on error.
    #[command(
        after_help = "Each side takes the source options of doctor; --against separates them.\n\n\
        Examples:\n  \
        connect-state diff --from-dump config=yesterday.jsonl --against --from-dump config=today.jsonl\n  \
        connect-state diff --from-dump config=c.jsonl --as-of 2026-11-30T18:00:00Z \\\n      \
        --against --from-dump config=c.jsonl\n  \
        connect-state diff --format json --bootstrap-servers old:9092 --config-topic connect-configs \\\n      \
        --offsets-topic connect-offsets --against --bootstrap-servers new:9092 \\\n      \
        --config-topic connect-configs --offsets-topic connect-offsets"
    )]
    Diff(diff::DiffArgs),
    /// Export, reset or import a source connector's offsets (KIP-875), printing the exact
    /// records first; `--execute` writes them to a live cluster.
    #[command(after_help = "Examples:\n  \
        connect-state offsets export --connector jdbc-source --from-dump offsets=offsets.jsonl\n  \
        connect-state offsets reset --connector jdbc-source --from-dump config=configs.jsonl \\\n      \
        --from-dump offsets=offsets.jsonl\n  \
        connect-state offsets import --connector jdbc-source new.json --bootstrap-servers \\\n      \
        localhost:9092 --config-topic connect-configs --offsets-topic connect-offsets --execute")]
    Offsets(offsets::OffsetsArgs),
    /// Serve Connect's REST API (GET endpoints, KIP-558 topics and its reset, KIP-875 offsets)
    /// straight from the topics, tailing them; read-only unless `--allow-writes`.
    #[command(after_help = "Examples:\n  \
        connect-state serve --demo --listen 127.0.0.1:8083\n  \
        connect-state serve --from-dump config=configs.jsonl --from-dump status=status.jsonl\n  \
        connect-state serve --from-dump config=configs.jsonl --as-of 2026-11-30T18:00:00Z\n  \
        connect-state serve --bootstrap-servers localhost:9092 --config-topic connect-configs \\\n      \
        --status-topic connect-status --offsets-topic connect-offsets --allow-writes\n  \
        curl -s localhost:8083/connectors?expand=status\n  \
        curl -s localhost:8083/connectors/my-sink/topics\n  \
        curl -s -X PUT localhost:8083/connectors/my-sink/topics/reset")]
    Serve(serve::ServeArgs),
    /// Measure replay throughput, memory and checkpoint restarts on synthetic topics (and, with
    /// `--bootstrap-servers`, `inspect` against a raw librdkafka read of the same topic).
    #[command(after_help = "Examples:\n  \
        connect-state bench\n  \
        connect-state bench --scale tiny --format json\n  \
        connect-state bench --scale full --seed 7\n  \
        connect-state bench --bootstrap-servers localhost:9092 --format json")]
    Bench(bench::BenchArgs),
}

/// The parser of a `--topic` value: `config`, `status` or `offsets`.
pub fn topic_kind() -> impl clap::builder::TypedValueParser<Value = TopicKind> {
    use clap::builder::TypedValueParser as _;
    clap::builder::PossibleValuesParser::new(TopicKind::ALL.map(TopicKind::name)).map(
        |name: String| {
            // The possible values are the names, so the name is one.
            TopicKind::from_name(&name).unwrap_or(TopicKind::Config)
        },
    )
}

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// A readable table.
    Table,
    /// The stable JSON contract.
    Json,
}

/// Why a command failed.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// Bad input (dump lines, arguments).
    #[error("{0}")]
    Input(String),
    /// A dump could not be read.
    #[error(transparent)]
    Dump(#[from] kcat::DumpError),
    /// Output could not be written.
    #[error("could not write output: {0}")]
    Io(#[from] io::Error),
    /// JSON output failed.
    #[error("could not render JSON: {0}")]
    Json(#[from] serde_json::Error),
}

impl From<connect_state_ops::replay::ReplayError> for CliError {
    fn from(e: connect_state_ops::replay::ReplayError) -> Self {
        match e {
            connect_state_ops::replay::ReplayError::Dump(e) => Self::Dump(e),
            other => Self::Input(other.to_string()),
        }
    }
}

impl From<connect_state_ops::load::LoadError> for CliError {
    fn from(e: connect_state_ops::load::LoadError) -> Self {
        match e {
            connect_state_ops::load::LoadError::Replay(e) => e.into(),
            connect_state_ops::load::LoadError::Live(text) => Self::Input(text),
        }
    }
}

impl CliError {
    /// Whether the output's reader went away (`connect-state history | head -1`): not a
    /// failure of the command, so the binary exits quietly.
    pub fn is_broken_pipe(&self) -> bool {
        match self {
            Self::Io(e) => e.kind() == io::ErrorKind::BrokenPipe,
            Self::Json(e) => e.io_error_kind() == Some(io::ErrorKind::BrokenPipe),
            _ => false,
        }
    }
}

/// How a command that ran to completion ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Done; exit status 0.
    Success,
    /// Done, and problems were found (`doctor`); exit status 1.
    Findings,
}

/// Runs a parsed command line.
pub fn run(cli: Cli) -> Result<Exit, CliError> {
    let stdout = io::stdout();
    let stderr = io::stderr();
    match cli.command {
        Command::Demo(args) => return with_stdout(|out| demo::run(args, out)),
        Command::Doctor(args) => return with_stdout(|out| doctor::run(args, out)),
        Command::Diff(args) => return with_stdout(|out| diff::run(args, out)),
        Command::History(args) => {
            return with_stdout(|out| history::run(args, out).map(|()| Exit::Success))
        }
        Command::Offsets(args) => return with_stdout(|out| offsets::run(args, out)),
        Command::Serve(args) => return with_stdout(|out| serve::run(args, out)),
        Command::Bench(args) => return with_stdout(|out| bench::run(args, out)),
        Command::Replay {
            topic,
            format,
            events,
            live_from,
            as_of,
            from_checkpoint,
            save_checkpoint,
            dump: options,
            file,
        } => {
            let checkpoint = from_checkpoint
                .map(|path| {
                    std::fs::read(&path)
                        .map(|bytes| (path.display().to_string(), bytes))
                        .map_err(|e| CliError::Input(format!("{}: {e}", path.display())))
                })
                .transpose()?;
            let dump = source::open_dump(&file, options.options())?;
            let name = file.display().to_string();
            let output = replay::Output {
                name: &name,
                live_from,
                format,
                with_events: events,
                as_of,
                from_checkpoint: checkpoint.as_ref().map(|(n, b)| (n.as_str(), b.as_slice())),
                save_checkpoint: save_checkpoint.as_deref(),
            };
            let mut out = stdout.lock();
            replay::run(topic, dump, &output, &mut out, &mut stderr.lock())?;
            out.flush()?;
        }
        #[cfg(feature = "kafka")]
        Command::Inspect {
            bootstrap_servers,
            config_topic,
            status_topic,
            offsets_topic,
            create_topics,
            read_committed,
            timeout,
            format,
            as_of,
            property,
        } => {
            let mut kafka = connect_state_kafka::KafkaSettings::new(bootstrap_servers);
            kafka.properties.extend(property);
            kafka.read_committed = read_committed;
            kafka.request_timeout = std::time::Duration::from_secs(timeout);
            let args = inspect::InspectArgs {
                kafka,
                config_topic,
                status_topic,
                offsets_topic,
                create_topics,
                format,
                as_of,
            };
            let mut out = stdout.lock();
            inspect::run(args, &mut out)?;
            out.flush()?;
        }
    }
    Ok(Exit::Success)
}

/// A current-thread runtime (timers and sockets) for one command.
pub(crate) fn runtime() -> Result<tokio::runtime::Runtime, CliError> {
    Ok(tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?)
}

/// The Kafka clients for `settings` (nothing is contacted yet).
#[cfg(feature = "kafka")]
pub(crate) fn kafka_transport(
    settings: connect_state_kafka::KafkaSettings,
) -> Result<connect_state_kafka::KafkaTransport, CliError> {
    connect_state_kafka::KafkaTransport::new(settings.clone()).map_err(|e| {
        CliError::Input(settings.redact(&format!("cannot create the Kafka clients: {e}")))
    })
}

/// The values of secret `-X` properties on the command line (see
/// [`connect_state_kafka::is_secret`]), kept out of everything the binary prints.
static SECRETS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();

/// Registers the secret `-X KEY=VALUE` values among the command-line `args` (`-X KEY=VALUE`,
/// `-XKEY=VALUE`, `-X=KEY=VALUE`, and a bare `KEY=VALUE` given by mistake without `-X`). Call
/// once, before running the command; [`redact`] then removes them from any text.
pub fn register_secrets(args: impl IntoIterator<Item = String>) {
    let args: Vec<String> = args.into_iter().collect();
    let mut secrets = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let value = if args[i] == "-X" {
            i += 1;
            args.get(i).cloned()
        } else {
            Some(
                args[i]
                    .strip_prefix("-X")
                    .map_or(args[i].as_str(), |v| v.strip_prefix('=').unwrap_or(v))
                    .to_string(),
            )
        };
        if let Some((key, secret)) = value.as_deref().and_then(|v| v.split_once('=')) {
            if is_secret_property(key.trim()) && !secret.is_empty() {
                secrets.push(secret.to_string());
            }
        }
        i += 1;
    }
    let _ = SECRETS.set(secrets);
}

fn is_secret_property(key: &str) -> bool {
    connect_state_store::is_secret(key)
}

/// `text` as it may reach a terminal: its lines kept, any other control or invisible
/// formatting character in them escaped (a name from a topic quoted in an error cannot drive
/// the terminal), and, unlike a table cell, never cut. For error messages; tables escape
/// their cells themselves.
pub fn printable(text: &str) -> String {
    text.split('\n')
        .map(table::escaped)
        .collect::<Vec<_>>()
        .join("\n")
}

/// `text` without any registered secret value (see [`register_secrets`]).
pub fn redact(text: &str) -> String {
    let secrets = SECRETS.get().map_or(&[][..], Vec::as_slice);
    redact_all(text, secrets)
}

#[cfg(feature = "kafka")]
fn redact_all(text: &str, secrets: &[String]) -> String {
    connect_state_kafka::redact(text, secrets)
}

/// Without Kafka support no property is secret, so nothing is registered.
#[cfg(not(feature = "kafka"))]
fn redact_all(text: &str, _: &[String]) -> String {
    text.to_string()
}

/// Runs a command that writes to stdout and may report findings.
fn with_stdout(
    command: impl FnOnce(&mut dyn Write) -> Result<Exit, CliError>,
) -> Result<Exit, CliError> {
    let stdout = io::stdout();
    let mut out = stdout.lock();
    let exit = command(&mut out)?;
    out.flush()?;
    Ok(exit)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_version_names_the_json_contract_the_bindings_expose() {
        let contract = connect_state_ops::embed::CONTRACT_VERSION;
        assert!(
            super::VERSION.ends_with(&format!(" (JSON contract {contract})")),
            "{}",
            super::VERSION
        );
    }
}
