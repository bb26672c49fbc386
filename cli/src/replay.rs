//! `connect-state replay`: replay a topic dump through the core and print what a Java worker
//! would hold.

use std::io::Write;

use engine::config::ConfigLog;
use engine::offsets::OffsetLog;
use engine::status::StatusLog;
use engine::TopicMachine;

use std::io::BufRead;

use connect_state_ops::cut::{Cut, Point};
use connect_state_ops::history::TopicKind;

use crate::kcat::{DumpError, DumpReader, DumpRecord};
use crate::view::{write_pretty, EventsJson, Json, Skips, View};
use crate::{CliError, Format, Topic};

/// A replayed machine and the events of the live part of the dump.
pub struct Replay<M: TopicMachine> {
    /// The final state.
    pub machine: M,
    /// Events of the live part (records at or after `--live-from`).
    pub events: Vec<M::Event>,
}

/// Replays a stream of dump records through a fresh machine, one at a time (the dump is never
/// held). Records below `live_from` are the start-up catch-up (no events); the machine is
/// marked caught up before the first record at or after it. Without `live_from` every record
/// is catch-up, as for a worker that starts now. With `single_partition` (the config topic) a
/// record outside partition 0 is refused, as Java refuses the topic (spec §3.11). With a
/// `cut` (`--as-of`), only the records before it are applied.
pub fn replay<M: TopicMachine + Default>(
    records: impl IntoIterator<Item = Result<DumpRecord, DumpError>>,
    live_from: Option<i64>,
    single_partition: bool,
    cut: Option<&mut Cut>,
) -> Result<Replay<M>, CliError> {
    replay_into(M::default(), records, live_from, single_partition, cut)
}

/// [`replay`] into `machine` (a fresh one the caller built).
pub fn replay_into<M: TopicMachine>(
    mut machine: M,
    records: impl IntoIterator<Item = Result<DumpRecord, DumpError>>,
    live_from: Option<i64>,
    single_partition: bool,
    mut cut: Option<&mut Cut>,
) -> Result<Replay<M>, CliError> {
    let mut events = Vec::new();
    for record in records {
        let record = record?;
        if let Some(cut) = cut.as_deref_mut() {
            let before = cut
                .admits(&record.as_record())
                .map_err(|e| CliError::Input(format!("line {}: {e}", record.line)))?;
            if !before {
                continue;
            }
        }
        if single_partition && record.partition != 0 {
            return Err(CliError::Input(format!(
                "line {}: the config topic is required to have a single partition in order to \
                 guarantee consistency of connector configurations, but the dump has records \
                 from partition {}",
                record.line, record.partition
            )));
        }
        if !machine.is_caught_up() && live_from.is_some_and(|from| record.offset >= from) {
            machine.mark_caught_up();
        }
        machine
            .handle_record(record.as_record())
            .map_err(|e| CliError::Input(format!("line {}: {e}", record.line)))?;
        events.extend(core::iter::from_fn(|| machine.poll_event()));
    }
    machine.mark_caught_up();
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
    topic: Topic,
    dump: DumpReader<R>,
    options: &Output<'_>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<(), CliError> {
    match topic {
        Topic::Config => run_topic::<ConfigLog, R>(dump, TopicKind::Config, options, out, err),
        Topic::Status => run_topic::<StatusLog, R>(dump, TopicKind::Status, options, out, err),
        Topic::Offsets => run_topic::<OffsetLog, R>(dump, TopicKind::Offsets, options, out, err),
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

fn run_topic<M: View, R: BufRead>(
    mut dump: DumpReader<R>,
    topic: TopicKind,
    options: &Output<'_>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<(), CliError> {
    let single_partition = topic == TopicKind::Config;
    let mut cut = options
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
    let r = replay_into(
        machine,
        dump.by_ref(),
        options.live_from,
        single_partition,
        cut.as_mut(),
    )?;
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
