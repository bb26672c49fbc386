//! `connect-state replay`: replay a topic dump through the core and print what a Java worker
//! would hold.

use core::fmt::Write as _;
use std::io::Write;

use engine::config::{ConfigEvent, ConfigLog, ConfigSnapshot, EventJson, SnapshotJson};

use crate::kcat::{Dump, DumpRecord};
use crate::table;
use crate::{CliError, Format};

/// What replaying a config dump produced.
pub struct ConfigReplay {
    /// The final state.
    pub log: ConfigLog,
    /// Events of the live part (records at or after `--live-from`).
    pub events: Vec<ConfigEvent>,
}

/// Replays config records. Records below `live_from` are the start-up catch-up (no events);
/// the reader is marked caught up before the first record at or after it. Without `live_from`
/// every record is catch-up, as for a worker that starts now.
pub fn replay_config(
    records: &[DumpRecord],
    live_from: Option<i64>,
) -> Result<ConfigReplay, CliError> {
    if let Some(other) = records.iter().find(|r| r.partition != 0) {
        return Err(CliError::Input(format!(
            "line {}: the config topic is required to have a single partition in order to \
             guarantee consistency of connector configurations, but the dump has records from \
             partition {}",
            other.line, other.partition
        )));
    }
    let mut log = ConfigLog::new();
    let mut events = Vec::new();
    for record in records {
        if !log.is_caught_up() && live_from.is_some_and(|from| record.offset >= from) {
            log.mark_caught_up();
        }
        log.handle_record(record.as_record())
            .map_err(|e| CliError::Input(format!("line {}: {e}", record.line)))?;
        events.extend(core::iter::from_fn(|| log.poll_event()));
    }
    log.mark_caught_up();
    Ok(ConfigReplay { log, events })
}

/// Runs `replay --topic config` and writes the result.
pub fn run_config(
    dump: &Dump,
    live_from: Option<i64>,
    format: Format,
    with_events: bool,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<(), CliError> {
    let replay = replay_config(&dump.records, live_from)?;
    let snapshot = replay.log.snapshot();
    match format {
        Format::Json => {
            let snapshot_json = serde_json::to_value(SnapshotJson(&snapshot))?;
            let doc = if with_events {
                let events: Vec<_> = replay.events.iter().map(EventJson).collect();
                serde_json::json!({"snapshot": snapshot_json, "events": serde_json::to_value(events)?})
            } else {
                snapshot_json
            };
            writeln!(out, "{}", serde_json::to_string_pretty(&doc)?)?;
        }
        Format::Table => {
            out.write_all(config_table(&replay.log, &snapshot).as_bytes())?;
            if with_events {
                writeln!(out, "\nEvents ({}):", replay.events.len())?;
                for event in &replay.events {
                    writeln!(out, "  {}", serde_json::to_string(&EventJson(event))?)?;
                }
            }
        }
    }
    report_skips(dump, &replay.log, err)?;
    Ok(())
}

/// Bad lines and skipped records go to stderr, so stdout stays the contract.
fn report_skips(dump: &Dump, log: &ConfigLog, err: &mut dyn Write) -> Result<(), CliError> {
    for bad in &dump.bad_lines {
        writeln!(err, "skipped bad {bad}")?;
    }
    if !dump.bad_lines.is_empty() {
        writeln!(err, "skipped {} bad line(s)", dump.bad_lines.len())?;
    }
    let skipped = log.diagnostics().skipped();
    if skipped.total() > 0 {
        let parts: Vec<String> = skipped
            .iter()
            .map(|(kind, n)| format!("{}: {n}", kind.as_str()))
            .collect();
        writeln!(
            err,
            "{} record(s) skipped as Java skips them ({})",
            skipped.total(),
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
