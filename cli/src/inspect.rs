//! `connect-state inspect`: read a live cluster's internal topics to their end and print what
//! `replay` prints.

use std::io::Write;
use std::sync::Arc;

use connect_state_kafka::{KafkaSettings, KafkaTransport};
use connect_state_store::{Store, StoreError, StoreSettings};
use engine::config::ConfigLog;
use engine::offsets::OffsetLog;
use engine::status::StatusLog;

use connect_state_ops::cut::{Cut, CutMachine, Point};
use engine::TopicKind;

use crate::common::{CliError, Format};
use crate::view::{write_pretty, Json, View};

/// Options of `inspect`.
#[derive(Debug, Clone, clap::Args)]
pub struct InspectOptions {
    /// The cluster's `bootstrap.servers`.
    #[arg(long, value_name = "HOST:PORT")]
    pub bootstrap_servers: String,
    /// The config topic (`config.storage.topic`).
    #[arg(long, value_name = "TOPIC")]
    pub config_topic: Option<String>,
    /// The status topic (`status.storage.topic`).
    #[arg(long, value_name = "TOPIC")]
    pub status_topic: Option<String>,
    /// The offsets topic (`offset.storage.topic`).
    #[arg(long, value_name = "TOPIC")]
    pub offsets_topic: Option<String>,
    /// Create missing topics as Connect would (compacted; 1, 5 and 25 partitions).
    #[arg(long)]
    pub create_topics: bool,
    /// Read with `isolation.level=read_committed` (as workers with exactly-once source
    /// support enabled do).
    #[arg(long)]
    pub read_committed: bool,
    /// Most seconds one broker call may take (at most 2147483: librdkafka takes milliseconds
    /// as a 32-bit integer).
    #[arg(long, default_value_t = 30, value_name = "SECONDS",
          value_parser = clap::value_parser!(u64).range(1..=crate::common::MAX_TIMEOUT_SECONDS))]
    pub timeout: u64,
    /// Output format: a readable table, or `{"config": .., "status": .., "offsets": ..}`.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// The topics as they were then: an offset (config topic only, that record included)
    /// or an RFC 3339 time (each partition up to it, records with that timestamp included).
    #[arg(long, value_name = "OFFSET|TIME", value_parser = crate::when::parse_point)]
    pub as_of: Option<connect_state_ops::cut::Point>,
    /// A librdkafka property (repeatable), e.g. `-X security.protocol=SSL`. Secrets are
    /// never printed.
    #[arg(short = 'X', value_name = "KEY=VALUE", value_parser = parse_property)]
    pub property: Vec<(String, String)>,
}

impl InspectOptions {
    /// What to read and how, as the options say.
    pub fn into_args(self) -> InspectArgs {
        let mut kafka = KafkaSettings::new(self.bootstrap_servers);
        kafka.properties.extend(self.property);
        kafka.read_committed = self.read_committed;
        kafka.request_timeout = std::time::Duration::from_secs(self.timeout);
        InspectArgs {
            kafka,
            config_topic: self.config_topic,
            status_topic: self.status_topic,
            offsets_topic: self.offsets_topic,
            create_topics: self.create_topics,
            format: self.format,
            as_of: self.as_of,
        }
    }
}

/// What to read and how.
#[derive(Debug, Clone)]
pub struct InspectArgs {
    /// Connection settings (bootstrap servers, `-X` properties).
    pub kafka: KafkaSettings,
    /// The config topic, if it is to be read.
    pub config_topic: Option<String>,
    /// The status topic, if it is to be read.
    pub status_topic: Option<String>,
    /// The offsets topic, if it is to be read.
    pub offsets_topic: Option<String>,
    /// Create missing topics as Connect would.
    pub create_topics: bool,
    /// Output format.
    pub format: Format,
    /// `--as-of`: the topics as they were then.
    pub as_of: Option<Point>,
}

/// Parses one `-X key=value` argument.
pub fn parse_property(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((key, value)) if !key.trim().is_empty() => {
            Ok((key.trim().to_string(), value.to_string()))
        }
        _ => Err(format!(
            "expected KEY=VALUE (a librdkafka property), got '{text}'"
        )),
    }
}

/// Reads every topic given and writes the result.
pub fn run(args: InspectArgs, out: &mut dyn Write) -> Result<(), CliError> {
    if args.config_topic.is_none() && args.status_topic.is_none() && args.offsets_topic.is_none() {
        return Err(CliError::Input(
            "give at least one of --config-topic, --status-topic, --offsets-topic".into(),
        ));
    }
    let (config, status, offsets) = read_all(&args)?;
    let args = &args;
    {
        match args.format {
            Format::Json => {
                let document = Inspected {
                    config: config.as_ref().map(Json),
                    status: status.as_ref().map(Json),
                    offsets: offsets.as_ref().map(Json),
                };
                write_pretty(out, &document)?;
            }
            Format::Table => {
                let mut buffered = std::io::BufWriter::with_capacity(64 * 1024, &mut *out);
                let mut first = true;
                let mut separate = |o: &mut dyn Write| -> std::io::Result<()> {
                    if !std::mem::take(&mut first) {
                        o.write_all(b"\n")?;
                    }
                    Ok(())
                };
                if let Some(log) = &config {
                    separate(&mut buffered)?;
                    log.write_table(&mut buffered)?;
                }
                if let Some(log) = &status {
                    separate(&mut buffered)?;
                    log.write_table(&mut buffered)?;
                }
                if let Some(log) = &offsets {
                    separate(&mut buffered)?;
                    log.write_table(&mut buffered)?;
                }
                buffered.flush()?;
            }
        }
        Ok(())
    }
}

/// Reads every topic `args` names, at once: each on its own thread with Kafka clients of its
/// own.
pub(crate) fn read_all(
    args: &InspectArgs,
) -> Result<crate::parallel::Three<ConfigLog, StatusLog, OffsetLog>, CliError> {
    let bars = crate::progress::ReadBars::default();
    let bars = &bars;
    crate::parallel::read_three(
        args.config_topic
            .as_deref()
            .map(|topic| move || read::<ConfigLog>(topic, TopicKind::Config, args, bars)),
        args.status_topic
            .as_deref()
            .map(|topic| move || read::<StatusLog>(topic, TopicKind::Status, args, bars)),
        args.offsets_topic
            .as_deref()
            .map(|topic| move || read::<OffsetLog>(topic, TopicKind::Offsets, args, bars)),
    )
}

/// `inspect`'s JSON contract: `{"config": .., "status": .., "offsets": ..}` for the topics read.
#[derive(serde::Serialize)]
struct Inspected<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    config: Option<Json<'a, ConfigLog>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    status: Option<Json<'a, StatusLog>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    offsets: Option<Json<'a, OffsetLog>>,
}

/// Reads `topic` to its end with a runtime and Kafka clients of its own.
fn read<M: View>(
    topic: &str,
    kind: TopicKind,
    args: &InspectArgs,
    bars: &crate::progress::ReadBars,
) -> Result<M, CliError> {
    crate::common::runtime()?.block_on(async {
        let transport = Arc::new(crate::common::kafka_transport(args.kafka.clone())?);
        read_with(&transport, topic, kind, args, bars).await
    })
}

async fn read_with<M: View>(
    transport: &Arc<KafkaTransport>,
    topic: &str,
    kind: TopicKind,
    args: &InspectArgs,
    bars: &crate::progress::ReadBars,
) -> Result<M, CliError> {
    let cut = args
        .as_of
        .map(|point| Cut::new(point, kind))
        .transpose()
        .map_err(CliError::Input)?;
    let mut settings = StoreSettings::new(topic, kind);
    settings.create_if_missing = args.create_topics;
    let machine = CutMachine::new(M::default(), cut);
    let mut store = Store::new(settings, Arc::clone(transport), machine);
    let bar = bars.bar(topic);
    store.set_progress(bar.observer());
    let started = store.start().await;
    bar.finish();
    started.map_err(|e| match e {
        StoreError::MissingTopic { topic, setting } => CliError::Input(format!(
            "topic '{topic}' ({setting}) does not exist; pass --create-topics to create it as Connect would"
        )),
        other => CliError::Input(format!("reading topic '{topic}': {other}")),
    })?;
    let (machine, refused) = store.into_machine().into_inner();
    match refused {
        Some(problem) => Err(CliError::Input(format!("topic '{topic}': {problem}"))),
        None => Ok(machine),
    }
}
