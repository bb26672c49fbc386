//! `connect-state offsets export|reset|import`: a source connector's offsets in KIP-875's JSON,
//! and the exact records a reset or an import writes. A dry run by default; `--execute` writes
//! to a live cluster, only when the config topic shows the connector STOPPED with zero tasks
//! (Java's precondition), with tombstones routed to the partition where each key lives.

use std::io::Write;
use std::path::PathBuf;

use clap::{Args, Subcommand};
use engine::config::ConfigLog;
use engine::offsets::{kip875, OffsetLog};
use engine::plan::WritePlan;

use connect_state_ops::offsets_file::{parse_offsets_file, OffsetsEntry};

use crate::common::{CliError, Exit};
use crate::source::{Layout, SourceArgs, TopicRead};
use engine::TopicKind;

/// Options of `offsets`.
#[derive(Debug, Clone, Args)]
pub struct OffsetsArgs {
    /// What to do.
    #[command(subcommand)]
    pub action: OffsetsAction,
}

/// The `offsets` subcommands.
#[derive(Debug, Clone, Subcommand)]
pub enum OffsetsAction {
    /// Print a connector's offsets as `GET /connectors/{c}/offsets` answers (KIP-875 JSON).
    #[command(after_help = "Examples:\n  \
        connect-state offsets export --connector jdbc-source --from-dump offsets=offsets.jsonl\n  \
        connect-state offsets export --connector jdbc-source --bootstrap-servers localhost:9092 \\\n      \
        --offsets-topic connect-offsets > jdbc-source.offsets.json")]
    Export {
        /// The connector.
        #[arg(long)]
        connector: String,
        /// Where the topics come from (the config topic, when given, must know the connector).
        #[command(flatten)]
        source: SourceArgs,
    },
    /// Tombstone every offset of a connector, as `DELETE /connectors/{c}/offsets` does.
    #[command(after_help = "Examples:\n  \
        connect-state offsets reset --connector jdbc-source \\\n      \
        --from-dump config=configs.jsonl --from-dump offsets=offsets.jsonl\n  \
        connect-state offsets reset --connector jdbc-source --bootstrap-servers localhost:9092 \\\n      \
        --config-topic connect-configs --offsets-topic connect-offsets --execute")]
    Reset {
        /// The connector.
        #[arg(long)]
        connector: String,
        /// How to write.
        #[command(flatten)]
        write: WriteArgs,
    },
    /// Write offsets from a KIP-875 JSON file (`{"offsets":[{"partition":{..},"offset":{..}}]}`,
    /// a null offset deletes), as `PATCH /connectors/{c}/offsets` does.
    #[command(after_help = "Examples:\n  \
        connect-state offsets import --connector jdbc-source jdbc-source.offsets.json \\\n      \
        --from-dump config=configs.jsonl --from-dump offsets=offsets.jsonl\n  \
        connect-state offsets import --connector jdbc-source jdbc-source.offsets.json \\\n      \
        --bootstrap-servers localhost:9092 --config-topic connect-configs \\\n      \
        --offsets-topic connect-offsets --execute")]
    Import {
        /// The connector.
        #[arg(long)]
        connector: String,
        /// The KIP-875 JSON file (`-` for standard input).
        file: PathBuf,
        /// How to write.
        #[command(flatten)]
        write: WriteArgs,
    },
}

/// Options shared by `reset` and `import`.
#[derive(Debug, Clone, Args)]
pub struct WriteArgs {
    /// Where the topics come from (both the config and the offsets topic are needed).
    #[command(flatten)]
    pub source: SourceArgs,
    /// Write the records (live clusters only). Without it, print them and write nothing.
    #[arg(long)]
    pub execute: bool,
    /// Partitions of the offsets topic, to place keys it does not hold yet (dumps only; a live
    /// topic is described).
    #[arg(long, default_value_t = 25, value_name = "N")]
    pub offsets_partitions: i32,
}

/// Runs an `offsets` subcommand.
pub fn run(args: OffsetsArgs, out: &mut dyn Write) -> Result<Exit, CliError> {
    match args.action {
        OffsetsAction::Export { connector, source } => {
            let topics = source.load(&[TopicKind::Config, TopicKind::Offsets])?;
            if let Some(config) = &topics.config {
                if !config.state.machine.snapshot().contains(&connector) {
                    return Err(CliError::Input(format!("Connector {connector} not found")));
                }
            }
            let offsets = require(topics.offsets, "offsets")?;
            let listing = kip875::list(&offsets.state.machine.snapshot(), &connector);
            crate::view::write_pretty(out, &listing)?;
        }
        OffsetsAction::Reset { connector, write } => {
            modify(&connector, &write, None, out)?;
        }
        OffsetsAction::Import {
            connector,
            file,
            write,
        } => {
            let entries = {
                let text = if file.as_os_str() == "-" {
                    std::io::read_to_string(std::io::stdin())?
                } else {
                    std::fs::read_to_string(&file).map_err(|e| {
                        CliError::Input(format!("cannot read {}: {e}", file.display()))
                    })?
                };
                parse_offsets_file(&text)
                    .map_err(|e| CliError::Input(format!("{}: {e}", file.display())))?
            };
            modify(&connector, &write, Some(entries), out)?;
        }
    }
    Ok(Exit::Success)
}

fn require<M>(read: Option<TopicRead<M>>, topic: &str) -> Result<TopicRead<M>, CliError> {
    read.ok_or_else(|| {
        CliError::Input(format!(
            "this command needs the {topic} topic: add --from-dump {topic}=FILE, or \
             --{topic}-topic NAME with --bootstrap-servers"
        ))
    })
}

/// A reset (`entries == None`) or an import: check, build the records, print them, and with
/// `--execute` write them and read the result back.
fn modify(
    connector: &str,
    args: &WriteArgs,
    entries: Option<Vec<OffsetsEntry>>,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    if args.execute && args.source.as_of.is_some() {
        return Err(CliError::Input(
            "--execute writes against the current state: it cannot be combined with --as-of".into(),
        ));
    }
    if args.execute && !args.source.is_live() {
        return Err(CliError::Input(
            "--execute writes to a live cluster: give --bootstrap-servers with --config-topic \
             and --offsets-topic instead of dumps"
                .into(),
        ));
    }
    let topics = args.source.load(&[TopicKind::Config, TopicKind::Offsets])?;
    let config: TopicRead<ConfigLog> = require(topics.config, "config")?;
    let offsets: TopicRead<OffsetLog> = require(topics.offsets, "offsets")?;
    let modify_error = |e: kip875::ModifyOffsetsError| CliError::Input(e.to_string());
    kip875::check_modifiable(&config.state.machine.snapshot(), connector).map_err(modify_error)?;
    let partitions = match &offsets.layout {
        Layout::Described { partitions, .. } => *partitions,
        Layout::Dump { .. } => args.offsets_partitions,
    };
    let snapshot = offsets.state.machine.snapshot();
    let reset = entries.is_none();
    let plan = match entries {
        None => kip875::reset_plan(&snapshot, connector, partitions),
        // The request is let go once its records are built.
        Some(entries) => kip875::alter_plan(&snapshot, connector, &entries, partitions),
    }
    .map_err(modify_error)?;
    let count = plan.records().count();
    print_records(out, &plan)?;
    if !args.execute {
        writeln!(
            out,
            "Dry run: {count} record(s) would be written to {}. Add --execute to write them.",
            offsets.name
        )?;
        return Ok(());
    }
    execute(&args.source, &offsets.name, &plan)?;
    writeln!(out, "Wrote {count} record(s) to {}.", offsets.name)?;
    writeln!(out, "{}", kip875::success_message(reset))?;
    Ok(())
}

/// Prints the records of `plan` as a table, a row at a time.
pub(crate) fn print_records(out: &mut dyn Write, plan: &WritePlan) -> Result<(), CliError> {
    if plan.records().next().is_none() {
        writeln!(out, "No records: the connector has no offsets to change.")?;
        return Ok(());
    }
    let rows = || {
        plan.records().map(|r| {
            vec![
                r.partition.map_or("-".into(), |p| p.to_string()),
                String::from_utf8_lossy(&r.key).into_owned(),
                r.value.as_deref().map_or("(tombstone)".into(), |v| {
                    String::from_utf8_lossy(v).into_owned()
                }),
            ]
        })
    };
    let mut buffered = std::io::BufWriter::with_capacity(64 * 1024, out);
    crate::table::write(&mut buffered, &["PARTITION", "KEY", "VALUE"], rows)?;
    buffered.flush()?;
    Ok(())
}

#[cfg(not(feature = "kafka"))]
fn execute(_: &SourceArgs, _: &str, _: &WritePlan) -> Result<(), CliError> {
    Err(CliError::Input(
        "this build has no Kafka support (the `kafka` feature)".into(),
    ))
}

/// Runs the plan's batches with plain sends (as Java's offset writes outside exactly-once);
/// a failure reports Java's message for the write.
#[cfg(feature = "kafka")]
fn execute(source: &SourceArgs, topic: &str, plan: &WritePlan) -> Result<(), CliError> {
    use connect_state_store::{ProduceMode, Transport};
    use engine::plan::StepAction;

    let servers = source.live.bootstrap_servers.as_deref().unwrap_or_default();
    let transport = crate::common::kafka_transport(source.live.kafka_settings(servers))?;
    let runtime = crate::common::runtime()?;
    for step in &plan.steps {
        if let StepAction::Produce { records, .. } = &step.action {
            runtime
                .block_on(transport.produce(topic, records, ProduceMode::Plain))
                .map_err(|e| {
                    CliError::Input(format!("{}: writing to '{topic}': {e}", step.error_message))
                })?;
        }
    }
    Ok(())
}
