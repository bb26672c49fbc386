//! `connect-state history`: one chronological list of what changed in the three topics, told
//! by the replay machines ([`connect_state_ops::history`]) and printed as it is known.

use std::collections::BTreeSet;
use std::io::{self, BufRead, Write};

use clap::Args;
use connect_state_ops::cut::Point;
use connect_state_ops::history::{self, Entry, Options, RecordStream, Summary};
use serde_json::Value;

use crate::common::{CliError, Format};
use crate::kcat::{DumpReader, DumpRecord};
use crate::source::{open_dump, SourceArgs};
use crate::table::shown;
use crate::when::{parse_point, show_time};
use engine::TopicKind;

/// Options of `history`.
#[derive(Debug, Clone, Args)]
pub struct HistoryArgs {
    /// Only this connector's entries (repeatable; cluster-wide entries are then left out).
    #[arg(long = "connector", value_name = "NAME")]
    pub connectors: Vec<String>,
    /// Only records at or after this point: an offset (in each record's own partition) or an
    /// RFC 3339 time. The state before it is still read.
    #[arg(long, value_name = "OFFSET|TIME", value_parser = parse_point)]
    pub since: Option<Point>,
    /// Only records at or before this point (as `--since`).
    #[arg(long, value_name = "OFFSET|TIME", value_parser = parse_point)]
    pub until: Option<Point>,
    /// Show config values whose names look secret (password, secret, key, token,
    /// credential, jaas); masked as `[hidden]` otherwise.
    #[arg(long)]
    pub show_secrets: bool,
    /// Output format: one line per change, or the JSON contract (written as it is known).
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Where the topics come from.
    #[command(flatten)]
    pub source: SourceArgs,
}

/// Runs `history`, writing each entry to `out` as soon as it is known.
pub fn run(args: HistoryArgs, out: &mut dyn Write) -> Result<(), CliError> {
    if args.source.as_of.is_some() {
        return Err(CliError::Input(
            "history lists changes up to a point with --until, not --as-of".into(),
        ));
    }
    if let (Some(since), Some(until)) = (args.since, args.until) {
        let later = match (since, until) {
            (Point::Offset(a), Point::Offset(b)) | (Point::Time(a), Point::Time(b)) => a > b,
            // An offset and a time do not compare: each applies on its own.
            _ => false,
        };
        if later {
            return Err(CliError::Input(format!(
                "--since {} is later than --until {}: nothing could be listed",
                shown_point(since),
                shown_point(until)
            )));
        }
    }
    let options = Options {
        connectors: args.connectors.iter().cloned().collect::<BTreeSet<_>>(),
        since: args.since,
        until: args.until,
        show_secrets: args.show_secrets,
    };
    let format = args.format;
    with_streams(&args.source, &mut |streams| {
        let mut writer = EntryWriter::new(format, out)?;
        let summary = history::tell(streams, &options, &mut |entry| writer.entry(&entry)).map_err(
            |e| match e {
                history::HistoryError::Input(problem) => CliError::Input(problem),
                history::HistoryError::Output(e) => CliError::Io(e),
            },
        )?;
        writer.finish(&summary)
    })
}

/// A point as the command line gave it.
fn shown_point(point: Point) -> String {
    match point {
        Point::Offset(offset) => offset.to_string(),
        Point::Time(ms) => show_time(ms),
    }
}

/// What is done with the opened streams.
type Teller<'t> = dyn FnMut(Vec<(TopicKind, RecordStream<'_>)>) -> Result<(), CliError> + 't;

/// Opens one record stream per topic of `source` (per partition for a live topic) and hands
/// them to `tell`.
fn with_streams(source: &SourceArgs, tell: &mut Teller<'_>) -> Result<(), CliError> {
    source.check(&[TopicKind::Config, TopicKind::Status, TopicKind::Offsets])?;
    if source.live_or_dumps()? {
        return live_streams(source, tell);
    }
    let mut streams: Vec<(TopicKind, RecordStream<'_>)> = Vec::new();
    for (topic, file) in source.dumps()? {
        let reader = open_dump(file, source.dump.options())?;
        let stream = DumpStream {
            reader: Some(reader),
            name: file.display().to_string(),
        };
        streams.push((topic, Box::new(stream)));
    }
    tell(streams)
}

/// A dump read as a stream; its skipped lines are reported on stderr when it ends.
struct DumpStream {
    reader: Option<DumpReader<Box<dyn BufRead>>>,
    name: String,
}

impl Iterator for DumpStream {
    type Item = Result<DumpRecord, String>;

    fn next(&mut self) -> Option<Self::Item> {
        let reader = self.reader.as_mut()?;
        match reader.next() {
            Some(record) => Some(record.map_err(|e| format!("{}: {e}", self.name))),
            None => {
                let reader = self.reader.take()?;
                let _ = reader
                    .into_bad_lines()
                    .report(&self.name, &mut io::stderr());
                None
            }
        }
    }
}

#[cfg(not(feature = "kafka"))]
fn live_streams(_: &SourceArgs, _: &mut Teller<'_>) -> Result<(), CliError> {
    Err(CliError::Input(
        "this build has no Kafka support (the `kafka` feature)".into(),
    ))
}

#[cfg(feature = "kafka")]
fn live_streams(source: &SourceArgs, tell: &mut Teller<'_>) -> Result<(), CliError> {
    use std::sync::Arc;

    use connect_state_store::Transport;

    let live = &source.live;
    let servers = live.bootstrap_servers.as_deref().unwrap_or_default();
    let runtime = crate::common::runtime()?;
    let transport = Arc::new(crate::common::kafka_transport(
        live.kafka_settings(servers),
    )?);
    let named = [
        (TopicKind::Config, &live.config_topic),
        (TopicKind::Status, &live.status_topic),
        (TopicKind::Offsets, &live.offsets_topic),
    ];
    let mut streams: Vec<(TopicKind, RecordStream<'_>)> = Vec::new();
    for (kind, name) in named {
        let Some(name) = name else { continue };
        let ends = runtime.block_on(async {
            match transport.describe_topic(name).await {
                Ok(Some(_)) => transport.end_offsets(name).await,
                Ok(None) => Ok(Default::default()),
                Err(e) => Err(e),
            }
        });
        let ends = ends.map_err(|e| CliError::Input(format!("reading topic '{name}': {e}")))?;
        if ends.is_empty() {
            return Err(CliError::Input(format!(
                "topic '{name}' does not exist on this cluster"
            )));
        }
        for (partition, end) in ends {
            streams.push((
                kind,
                Box::new(live::LivePartition::new(
                    &runtime,
                    Arc::clone(&transport),
                    name.clone(),
                    partition,
                    end,
                )),
            ));
        }
    }
    if streams.is_empty() {
        return Err(CliError::Input(
            "give at least one of --config-topic, --status-topic, --offsets-topic".into(),
        ));
    }
    tell(streams)
}

/// A live partition as a blocking stream of records (a [`PartitionReader`] driven on the
/// command's runtime), for `history`'s merge of the topics.
///
/// [`PartitionReader`]: connect_state_store::PartitionReader
#[cfg(feature = "kafka")]
mod live {
    use std::collections::VecDeque;
    use std::sync::Arc;

    use connect_state_kafka::KafkaTransport;
    use connect_state_store::PartitionReader;
    use engine::OwnedRecord;

    use crate::kcat::DumpRecord;

    /// Records per fetch.
    const FETCH_RECORDS: usize = 2_000;

    /// One partition of a live topic, read to the end offset it had when the history started.
    pub(super) struct LivePartition<'r> {
        runtime: &'r tokio::runtime::Runtime,
        reader: PartitionReader<KafkaTransport>,
        buffer: VecDeque<OwnedRecord>,
    }

    impl<'r> LivePartition<'r> {
        pub(super) fn new(
            runtime: &'r tokio::runtime::Runtime,
            transport: Arc<KafkaTransport>,
            topic: String,
            partition: i32,
            end: i64,
        ) -> Self {
            Self {
                runtime,
                reader: PartitionReader::new(transport, topic, partition, 0, end, FETCH_RECORDS),
                buffer: VecDeque::new(),
            }
        }
    }

    impl Iterator for LivePartition<'_> {
        type Item = Result<DumpRecord, String>;

        fn next(&mut self) -> Option<Self::Item> {
            if self.buffer.is_empty() {
                match self.runtime.block_on(self.reader.next_batch()) {
                    Ok(batch) => self.buffer.extend(batch),
                    Err(e) => {
                        return Some(Err(format!("reading topic '{}': {e}", self.reader.topic())))
                    }
                }
            }
            self.buffer
                .pop_front()
                .map(|record| Ok(DumpRecord::from(record)))
        }
    }
}

/// Writes entries as they come: table rows, or the members of the JSON document.
struct EntryWriter<'o> {
    format: Format,
    out: &'o mut dyn Write,
    first: bool,
}

impl<'o> EntryWriter<'o> {
    fn new(format: Format, out: &'o mut dyn Write) -> Result<Self, CliError> {
        match format {
            Format::Json => writeln!(out, "{{\n  \"entries\": [")?,
            Format::Table => writeln!(
                out,
                "{:<24}  {:<20}  {:<24}  {:<24}  CHANGE",
                "TIME", "RECORD", "CONNECTOR", "KIND"
            )?,
        }
        Ok(Self {
            format,
            out,
            first: true,
        })
    }

    fn entry(&mut self, entry: &Entry) -> io::Result<()> {
        match self.format {
            Format::Json => {
                let separator = if self.first { "" } else { ",\n" };
                write!(self.out, "{separator}    {}", entry.to_json())?;
            }
            Format::Table => {
                let time = entry.position.timestamp.map_or("-".into(), show_time);
                let record = format!(
                    "{}:{}@{}",
                    entry.position.topic.name(),
                    entry.position.partition,
                    entry.position.offset
                );
                let connector = entry.connector.as_deref().unwrap_or("-");
                writeln!(
                    self.out,
                    "{time:<24}  {record:<20}  {:<24}  {:<24}  {}",
                    shown(connector),
                    entry.kind,
                    shown(&describe(entry))
                )?;
            }
        }
        self.first = false;
        Ok(())
    }

    fn finish(self, summary: &Summary) -> Result<(), CliError> {
        match self.format {
            Format::Json => {
                let compacted: Vec<Value> = summary.compacted.iter().map(|c| c.to_json()).collect();
                writeln!(
                    self.out,
                    "{}  ],\n  \"compacted\": {},\n  \"records\": {},\n  \"skipped\": {}\n}}",
                    if self.first { "" } else { "\n" },
                    serde_json::to_string(&compacted)?,
                    summary.records,
                    summary.skipped
                )?;
            }
            Format::Table => {
                writeln!(
                    self.out,
                    "\n{} change(s) from {} record(s) ({} skipped as Java skips them)",
                    summary.entries, summary.records, summary.skipped
                )?;
                for compacted in &summary.compacted {
                    writeln!(self.out, "note: {}", compacted.notice())?;
                }
            }
        }
        Ok(())
    }
}

/// The CHANGE column: what an entry says, in a line.
pub(crate) fn describe(entry: &Entry) -> String {
    let d = &entry.details;
    let text = |v: &Value| match v {
        Value::String(s) => s.clone(),
        Value::Null => "none".into(),
        other => other.to_string(),
    };
    let get = |name: &str| d.get(name).map(text).unwrap_or_default();
    let status = |v: Option<&Value>| match v {
        Some(Value::Object(s)) => {
            let mut line = format!(
                "{} (worker {}, generation {})",
                s.get("state").map(text).unwrap_or_default(),
                s.get("worker_id").map(text).unwrap_or_default(),
                s.get("generation").map(text).unwrap_or_default()
            );
            if let Some(Value::String(trace)) = s.get("trace") {
                line.push_str(": ");
                line.push_str(trace);
            }
            line
        }
        _ => "none".into(),
    };
    match entry.kind {
        "connector_created" => match d.get("config") {
            Some(Value::Object(config)) => format!("config of {} properties", config.len()),
            _ => String::new(),
        },
        "connector_config_changed" => {
            let mut parts = Vec::new();
            if let Some(Value::Object(diff)) = d.get("diff") {
                for (name, change) in diff
                    .get("changed")
                    .and_then(Value::as_object)
                    .into_iter()
                    .flatten()
                {
                    parts.push(format!(
                        "{name}: {} -> {}",
                        change.get("from").map(text).unwrap_or_default(),
                        change.get("to").map(text).unwrap_or_default()
                    ));
                }
                for (name, value) in diff
                    .get("added")
                    .and_then(Value::as_object)
                    .into_iter()
                    .flatten()
                {
                    parts.push(format!("+{name} = {}", text(value)));
                }
                for name in diff
                    .get("removed")
                    .and_then(Value::as_object)
                    .into_iter()
                    .flatten()
                    .map(|(n, _)| n)
                {
                    parts.push(format!("-{name}"));
                }
            }
            if parts.is_empty() {
                "the same config written again".into()
            } else {
                parts.join("; ")
            }
        }
        "tasks_committed" => format!(
            "generation {}, {} task(s), changed {}",
            get("generation"),
            get("tasks"),
            get("changed_tasks")
        ),
        "became_inconsistent" => format!(
            "commit at offset {} announced {} task(s); missing {} ({} in all)",
            get("commit_offset"),
            get("task_count"),
            get("missing_tasks"),
            get("missing_count")
        ),
        "target_state_changed" => format!("{} -> {}", get("from"), get("to")),
        "restart_requested" => format!(
            "only failed: {}, include tasks: {}",
            get("only_failed"),
            get("include_tasks")
        ),
        "task_count_record" => format!("{} task(s)", get("tasks")),
        "session_key_rotated" => format!(
            "{} key created {}",
            get("algorithm"),
            d.get("creation_timestamp")
                .and_then(Value::as_i64)
                .map_or_else(String::new, show_time)
        ),
        "logger_level_set" => format!("{} = {}", get("namespace"), get("level")),
        "connector_status_changed" => {
            format!("{} -> {}", status(d.get("from")), status(d.get("to")))
        }
        "task_status_changed" => format!(
            "task {}: {} -> {}",
            get("task"),
            status(d.get("from")),
            status(d.get("to"))
        ),
        "topic_activated" => format!("{} (task {})", get("topic"), get("task")),
        "topic_reset" => get("topic"),
        "offsets_committed" => format!(
            "{} record(s), {} partition(s): {} .. {}",
            get("records"),
            get("partitions"),
            get("first_offset"),
            get("last_offset")
        ),
        "offsets_reset" => format!(
            "{} tombstone(s), {} partition(s)",
            get("records"),
            get("partitions")
        ),
        _ => String::new(),
    }
}
