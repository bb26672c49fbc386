//! `connect-state replay`: replay a topic dump through the core and print what a Java worker
//! would hold.

use std::io::{BufRead, Write};

use connect_state_ops::cut::{Cut, Point};
use connect_state_ops::replay::{replay_into, ReplayOptions};
use engine::config::ConfigLog;
use engine::offsets::OffsetLog;
use engine::status::StatusLog;
use engine::{Restore, TopicKind, TopicMachine};

use crate::common::{CliError, Format};
use crate::kcat::{DumpError, DumpReader, DumpRecord};
use crate::view::{write_pretty, EventsJson, Json, Skips, View};

/// Options of `replay`.
#[derive(Debug, Clone, clap::Args)]
pub struct ReplayArgs {
    /// Which internal topic the dump holds.
    #[arg(long, value_parser = crate::common::topic_kind())]
    pub topic: TopicKind,
    /// Output format: a readable table, or the stable JSON contract.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Also print the events (Java's listener callbacks) of the live part of the dump.
    #[arg(long)]
    pub events: bool,
    /// Records below this offset are the start-up catch-up (no events); later ones are live.
    #[arg(long, value_name = "OFFSET")]
    pub live_from: Option<i64>,
    /// The state as it was then: an offset (config topic, that record included) or an
    /// RFC 3339 time (records with that timestamp included; per partition).
    #[arg(long, value_name = "OFFSET|TIME", value_parser = crate::when::parse_point)]
    pub as_of: Option<connect_state_ops::cut::Point>,
    /// Start from this checkpoint (one `--save-checkpoint` wrote, or an embedding's
    /// `checkpoint()`) instead of an empty state: the records it already holds are dropped
    /// as redeliveries, so the dump may be the whole topic or only what came after.
    #[arg(long, value_name = "FILE", conflicts_with = "as_of")]
    pub from_checkpoint: Option<std::path::PathBuf>,
    /// Write the state at the end of the dump to this file as a checkpoint (what
    /// `--from-checkpoint` and the bindings' `restore` read).
    #[arg(long, value_name = "FILE")]
    pub save_checkpoint: Option<std::path::PathBuf>,
    /// How the dump is read.
    #[command(flatten)]
    pub dump: crate::source::DumpArgs,
    /// The dump file (`-` for standard input).
    pub file: std::path::PathBuf,
}

/// Runs `replay` as its options say: reads the checkpoint and the dump, writes the result on
/// `out` and what was skipped on `err`.
pub fn run_command(
    args: ReplayArgs,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<(), CliError> {
    let checkpoint = args
        .from_checkpoint
        .map(|path| {
            std::fs::read(&path)
                .map(|bytes| (path.display().to_string(), bytes))
                .map_err(|e| CliError::Input(format!("{}: {e}", path.display())))
        })
        .transpose()?;
    let dump = crate::source::open_dump(&args.file, args.dump.options())?;
    let name = args.file.display().to_string();
    let output = Output {
        name: &name,
        live_from: args.live_from,
        format: args.format,
        with_events: args.events,
        as_of: args.as_of,
        from_checkpoint: checkpoint.as_ref().map(|(n, b)| (n.as_str(), b.as_slice())),
        save_checkpoint: args.save_checkpoint.as_deref(),
    };
    run(args.topic, dump, &output, out, err)
}

/// A replayed machine and the events of the live part of the dump.
pub struct Replay<M: TopicMachine> {
    /// The final state.
    pub machine: M,
    /// Events of the live part (records at or after `--live-from`).
    pub events: Vec<M::Event>,
}

/// Replays a stream of dump records through a fresh machine (see
/// [`connect_state_ops::replay::replay_into`]), keeping its events.
pub fn replay<M: TopicMachine + Default>(
    records: impl IntoIterator<Item = Result<DumpRecord, DumpError>>,
    options: ReplayOptions,
) -> Result<Replay<M>, CliError> {
    let mut events = Vec::new();
    let machine = replay_into(M::default(), records, options, &mut events)?;
    Ok(Replay { machine, events })
}

/// The JSON contract of a replay: the snapshot, or `{"snapshot", "events"}`.
struct Document<'a, M: TopicMachine> {
    machine: &'a M,
    events: Option<&'a [M::Event]>,
}

impl<M: View> serde::Serialize for Document<'_, M> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        match self.events {
            None => Json(self.machine).serialize(s),
            Some(events) => {
                let mut doc = s.serialize_struct("Replay", 2)?;
                doc.serialize_field("snapshot", &Json(self.machine))?;
                doc.serialize_field("events", &EventsJson::<M>(events))?;
                doc.end()
            }
        }
    }
}

/// Writes events one JSON object per line under the table.
fn write_event_lines(out: &mut dyn Write, events: &[serde_json::Value]) -> Result<(), CliError> {
    writeln!(out, "\nEvents ({}):", events.len())?;
    for event in events {
        writeln!(out, "  {}", crate::table::shown(&event.to_string()))?;
    }
    Ok(())
}

/// Runs `replay` for one topic over the dump `name` as it is read, and writes the result;
/// the lines skipped with `--skip-bad-lines` are reported on `err` before it.
pub fn run<R: BufRead>(
    topic: TopicKind,
    dump: DumpReader<R>,
    options: &Output<'_>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<(), CliError> {
    match topic {
        TopicKind::Config => run_topic::<ConfigLog, R>(dump, TopicKind::Config, options, out, err),
        TopicKind::Status => run_topic::<StatusLog, R>(dump, TopicKind::Status, options, out, err),
        TopicKind::Offsets => {
            run_topic::<OffsetLog, R>(dump, TopicKind::Offsets, options, out, err)
        }
    }
}

/// How `replay` reads and writes, besides the dump.
pub struct Output<'a> {
    /// The dump's name, for the report of skipped lines.
    pub name: &'a str,
    /// `--live-from`.
    pub live_from: Option<i64>,
    /// `--format`.
    pub format: Format,
    /// `--events`.
    pub with_events: bool,
    /// `--as-of`.
    pub as_of: Option<Point>,
    /// `--from-checkpoint`: the file's name and bytes.
    pub from_checkpoint: Option<(&'a str, &'a [u8])>,
    /// `--save-checkpoint`.
    pub save_checkpoint: Option<&'a std::path::Path>,
}

fn run_topic<M: View + Restore, R: BufRead>(
    mut dump: DumpReader<R>,
    topic: TopicKind,
    options: &Output<'_>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<(), CliError> {
    let cut = options
        .as_of
        .map(|point| Cut::new(point, topic))
        .transpose()
        .map_err(CliError::Input)?;
    let machine = match options.from_checkpoint {
        None => M::default(),
        Some((name, bytes)) => M::restore(bytes).map_err(|e| {
            CliError::Input(format!(
                "{name}: not a checkpoint of the {} topic: {e}",
                topic.name()
            ))
        })?,
    };
    let replay_options = ReplayOptions {
        live_from: options.live_from,
        single_partition: topic == TopicKind::Config,
        cut,
    };
    let mut events = Vec::new();
    let machine = replay_into(machine, dump.by_ref(), replay_options, &mut events)?;
    let r = Replay { machine, events };
    dump.bad_lines().report(options.name, err)?;
    if let Some(path) = options.save_checkpoint {
        save_checkpoint(path, &r.machine.checkpoint())?;
    }
    match options.format {
        Format::Json => {
            let document = Document {
                machine: &r.machine,
                events: options.with_events.then_some(&r.events[..]),
            };
            write_pretty(out, &document)?;
        }
        Format::Table => {
            let mut buffered = std::io::BufWriter::with_capacity(64 * 1024, &mut *out);
            r.machine.write_table(&mut buffered)?;
            buffered.flush()?;
            drop(buffered);
            if options.with_events {
                let events = r
                    .events
                    .iter()
                    .map(M::event_json)
                    .collect::<Result<Vec<_>, _>>()?;
                write_event_lines(out, &events)?;
            }
        }
    }
    report_skips(&r.machine.skips(), err)
}

/// Writes `bytes` to `path` through a temporary file beside it, so that `path` never holds half
/// a checkpoint.
fn save_checkpoint(path: &std::path::Path, bytes: &[u8]) -> Result<(), CliError> {
    let failed = |e: std::io::Error| CliError::Input(format!("{}: {e}", path.display()));
    let mut temporary = path.as_os_str().to_owned();
    temporary.push(".partial");
    let temporary = std::path::PathBuf::from(temporary);
    std::fs::write(&temporary, bytes).map_err(failed)?;
    std::fs::rename(&temporary, path).map_err(failed)
}

/// Skipped records go to stderr (as the bad lines did), so stdout stays the contract.
fn report_skips(skipped: &Skips, err: &mut dyn Write) -> Result<(), CliError> {
    let total: u64 = skipped.iter().map(|(_, n)| n).sum();
    if total > 0 {
        let parts: Vec<String> = skipped
            .iter()
            .map(|(kind, n)| format!("{kind}: {n}"))
            .collect();
        writeln!(
            err,
            "{total} record(s) skipped as Java skips them ({})",
            parts.join(", ")
        )?;
    }
    Ok(())
}
