//! `connect-state replay`: replay a topic dump through the core and print what a Java worker
//! would hold.

use core::fmt::Write as _;
use std::io::Write;

use engine::config::{ConfigLog, ConfigSnapshot, EventJson, SnapshotJson};
use engine::offsets::{kip875, OffsetEventJson, OffsetLog, OffsetSnapshot, OffsetSnapshotJson};
use engine::status::{StatusEventJson, StatusLog, StatusSnapshot, StatusSnapshotJson};
use engine::TopicMachine;

use crate::kcat::{Dump, DumpRecord};
use crate::table;
use crate::{CliError, Format, Topic};

/// A replayed machine and the events of the live part of the dump.
pub struct Replay<M: TopicMachine> {
    /// The final state.
    pub machine: M,
    /// Events of the live part (records at or after `--live-from`).
    pub events: Vec<M::Event>,
}

/// Replays records through a fresh machine. Records below `live_from` are the start-up catch-up
/// (no events); the machine is marked caught up before the first record at or after it. Without
/// `live_from` every record is catch-up, as for a worker that starts now.
pub fn replay<M: TopicMachine + Default>(
    records: &[DumpRecord],
    live_from: Option<i64>,
) -> Result<Replay<M>, CliError> {
    let mut machine = M::default();
    let mut events = Vec::new();
    for record in records {
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

/// Java refuses a config topic with more than one partition (spec §3.11).
fn require_single_partition(records: &[DumpRecord]) -> Result<(), CliError> {
    match records.iter().find(|r| r.partition != 0) {
        Some(other) => Err(CliError::Input(format!(
            "line {}: the config topic is required to have a single partition in order to \
             guarantee consistency of connector configurations, but the dump has records from \
             partition {}",
            other.line, other.partition
        ))),
        None => Ok(()),
    }
}

/// Writes a snapshot (and events) as the JSON contract.
fn write_json(
    out: &mut dyn Write,
    snapshot: serde_json::Value,
    events: Option<Vec<serde_json::Value>>,
) -> Result<(), CliError> {
    let doc = match events {
        Some(events) => serde_json::json!({"snapshot": snapshot, "events": events}),
        None => snapshot,
    };
    writeln!(out, "{}", serde_json::to_string_pretty(&doc)?)?;
    Ok(())
}

/// Writes events one JSON object per line under the table.
fn write_event_lines(out: &mut dyn Write, events: &[serde_json::Value]) -> Result<(), CliError> {
    writeln!(out, "\nEvents ({}):", events.len())?;
    for event in events {
        writeln!(out, "  {event}")?;
    }
    Ok(())
}

/// Runs `replay` for one topic and writes the result.
pub fn run(
    topic: Topic,
    dump: &Dump,
    live_from: Option<i64>,
    format: Format,
    with_events: bool,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<(), CliError> {
    let (snapshot, events, table, skipped) = match topic {
        Topic::Config => {
            require_single_partition(&dump.records)?;
            let r = replay::<ConfigLog>(&dump.records, live_from)?;
            let snap = r.machine.snapshot();
            let events = to_values(r.events.iter().map(EventJson))?;
            let skipped = config_skips(&r.machine);
            (
                serde_json::to_value(SnapshotJson(&snap))?,
                events,
                config_table(&r.machine, &snap),
                skipped,
            )
        }
        Topic::Status => {
            let r = replay::<StatusLog>(&dump.records, live_from)?;
            let snap = r.machine.snapshot();
            let events = to_values(r.events.iter().map(StatusEventJson))?;
            let skipped = status_skips(&r.machine);
            (
                serde_json::to_value(StatusSnapshotJson(&snap))?,
                events,
                status_table(&r.machine, &snap),
                skipped,
            )
        }
        Topic::Offsets => {
            let r = replay::<OffsetLog>(&dump.records, live_from)?;
            let snap = r.machine.snapshot();
            let events = to_values(r.events.iter().map(OffsetEventJson))?;
            let skipped = offsets_skips(&r.machine);
            (
                serde_json::to_value(OffsetSnapshotJson(&snap))?,
                events,
                offsets_table(&r.machine, &snap),
                skipped,
            )
        }
    };
    match format {
        Format::Json => write_json(out, snapshot, with_events.then_some(events))?,
        Format::Table => {
            out.write_all(table.as_bytes())?;
            if with_events {
                write_event_lines(out, &events)?;
            }
        }
    }
    report_skips(dump, &skipped, err)
}

fn to_values<T: serde::Serialize>(
    items: impl Iterator<Item = T>,
) -> Result<Vec<serde_json::Value>, CliError> {
    items
        .map(|e| serde_json::to_value(e).map_err(CliError::from))
        .collect()
}

/// Skip counters as `(name, count)`, for the stderr summary.
type Skips = Vec<(&'static str, u64)>;

fn config_skips(log: &ConfigLog) -> Skips {
    log.diagnostics()
        .skipped()
        .iter()
        .map(|(k, n)| (k.as_str(), n))
        .collect()
}

fn status_skips(log: &StatusLog) -> Skips {
    log.diagnostics()
        .skipped()
        .iter()
        .map(|(k, n)| (k.as_str(), n))
        .collect()
}

fn offsets_skips(log: &OffsetLog) -> Skips {
    let d = log.diagnostics();
    [("duplicate", d.duplicates())]
        .into_iter()
        .filter(|(_, n)| *n > 0)
        .collect()
}

/// Bad lines and skipped records go to stderr, so stdout stays the contract.
fn report_skips(dump: &Dump, skipped: &Skips, err: &mut dyn Write) -> Result<(), CliError> {
    for bad in &dump.bad_lines {
        writeln!(err, "skipped bad {bad}")?;
    }
    if !dump.bad_lines.is_empty() {
        writeln!(err, "skipped {} bad line(s)", dump.bad_lines.len())?;
    }
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

/// The human view of a config snapshot and its diagnostics.
pub fn config_table(log: &ConfigLog, snap: &ConfigSnapshot) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "Config topic, next offset {}", snap.offset());
    let rows: Vec<Vec<String>> = snap
        .connectors()
        .map(|c| {
            let tasks = if snap.is_inconsistent(c) {
                format!("0/{} (inconsistent)", snap.task_count(c))
            } else {
                format!("{}", snap.tasks(c).len())
            };
            let mut flags = Vec::new();
            if snap.pending_fencing(c) {
                flags.push("pending-fencing");
            }
            if snap.applied_connector_config(c) != snap.connector_config(c) {
                flags.push("config-not-applied");
            }
            vec![
                c.to_string(),
                snap.target_state(c).map_or("-".into(), |s| s.to_string()),
                tasks,
                snap.task_config_generation(c)
                    .map_or("-".into(), |g| g.to_string()),
                snap.task_count_record(c)
                    .map_or("-".into(), |n| n.to_string()),
                if flags.is_empty() {
                    "-".into()
                } else {
                    flags.join(",")
                },
            ]
        })
        .collect();
    if rows.is_empty() {
        out.push_str("No connectors.\n");
    } else {
        out.push_str(&table::render(
            &[
                "CONNECTOR",
                "STATE",
                "TASKS",
                "GENERATION",
                "TASK-COUNT-RECORD",
                "FLAGS",
            ],
            &rows,
        ));
    }
    let diagnostics = log.diagnostics();
    let inconsistencies: Vec<_> = diagnostics.inconsistencies().collect();
    if !inconsistencies.is_empty() {
        out.push_str("\nInconsistent connectors (task configs must be rewritten by the leader):\n");
        for (c, why) in inconsistencies {
            let listed: Vec<String> = why.missing_tasks.iter().map(i32::to_string).collect();
            let more = why
                .missing_count
                .saturating_sub(why.missing_tasks.len() as u64);
            let _ = writeln!(
                out,
                "  {c}: commit at offset {} announced {} task(s); missing task ids {}{}{}",
                why.commit_offset,
                why.task_count,
                listed.join(", "),
                if more > 0 {
                    format!(" and {more} more")
                } else {
                    String::new()
                },
                if snap.contains(c) {
                    ""
                } else {
                    " (connector deleted)"
                },
            );
        }
    }
    let ghosts: Vec<_> = snap.target_states_without_connector().collect();
    if !ghosts.is_empty() {
        out.push_str("\nTarget states without a connector:\n");
        for (c, state) in ghosts {
            let _ = writeln!(out, "  {c}: {state}");
        }
    }
    let orphans: Vec<_> = diagnostics.orphan_records().collect();
    if !orphans.is_empty() {
        out.push_str("\nTask/commit records read while their connector had no config:\n");
        for (c, o) in orphans {
            let _ = writeln!(
                out,
                "  {c}: {} task record(s), {} commit(s), offsets {}..={}",
                o.task_records, o.commit_records, o.first_offset, o.last_offset
            );
        }
    }
    if let Some(key) = snap.session_key() {
        let _ = writeln!(
            out,
            "\nSession key: {} ({} bytes), created at {} ms",
            key.algorithm,
            key.key.len(),
            key.creation_timestamp
        );
    }
    out
}

/// The human view of an offsets snapshot: each connector's KIP-875 listing.
pub fn offsets_table(log: &OffsetLog, snap: &OffsetSnapshot) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "Offsets topic: {} live key(s)", snap.len());
    let mut rows = Vec::new();
    for connector in snap.connectors() {
        for entry in kip875::list(snap, connector).offsets {
            let json = serde_json::to_value(&entry).unwrap_or_default();
            let partition = json["partition"].to_string();
            let offset = match &json["offset"] {
                serde_json::Value::Null => "null (no record under the Java-ordered key)".into(),
                other => other.to_string(),
            };
            rows.push(vec![connector.to_string(), partition, offset]);
        }
    }
    if rows.is_empty() {
        out.push_str("No connector partitions.\n");
    } else {
        out.push_str(&table::render(&["CONNECTOR", "PARTITION", "OFFSET"], &rows));
    }
    let d = log.diagnostics();
    if d.untracked_keys() > 0 {
        let _ = writeln!(
            out,
            "\n{} record(s) have keys that are not [connector, partition] lists (stored, not tracked)",
            d.untracked_keys()
        );
    }
    out
}

/// The human view of a status snapshot: connectors with their tasks, then active topics.
pub fn status_table(log: &StatusLog, snap: &StatusSnapshot) -> String {
    let mut out = String::from("Status topic\n");
    let mut rows = Vec::new();
    for (connector, status) in snap.connectors() {
        rows.push(status_row(connector.to_string(), status));
        for (task, status) in snap.tasks(connector) {
            rows.push(status_row(format!("  {connector}-{task}"), status));
        }
    }
    if rows.is_empty() {
        out.push_str("No connector statuses.\n");
    } else {
        out.push_str(&table::render(
            &["CONNECTOR/TASK", "STATE", "WORKER", "GENERATION", "TRACE"],
            &rows,
        ));
    }
    let topics: Vec<Vec<String>> = snap
        .all_topics()
        .map(|(c, t, status)| {
            vec![
                c.to_string(),
                t.to_string(),
                status.task.to_string(),
                status.discover_timestamp.to_string(),
            ]
        })
        .collect();
    if !topics.is_empty() {
        out.push_str("\nActive topics (KIP-558):\n");
        out.push_str(&table::render(
            &["CONNECTOR", "TOPIC", "TASK", "DISCOVERED-MS"],
            &topics,
        ));
    }
    let d = log.diagnostics();
    let orphans: Vec<String> = d
        .orphan_task_statuses()
        .map(|(c, n, _)| format!("{c}-{n}"))
        .collect();
    if !orphans.is_empty() {
        let _ = writeln!(
            out,
            "\nTask statuses without a connector status: {}",
            orphans.join(", ")
        );
    }
    out
}

fn status_row(name: String, status: &engine::status::Status) -> Vec<String> {
    let trace = status
        .trace
        .as_deref()
        .and_then(|t| t.lines().next())
        .unwrap_or("-")
        .to_string();
    vec![
        name,
        status.state.as_str().to_string(),
        status.worker_id.clone().unwrap_or_else(|| "-".into()),
        status.generation.to_string(),
        trace,
    ]
}
