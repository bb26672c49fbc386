//! How each topic's state is shown: the JSON contract, the readable table, the skip summary.

use core::fmt::Write as _;

use engine::config::{ConfigLog, EventJson, SnapshotJson};
use engine::offsets::{kip875, OffsetEventJson, OffsetLog, OffsetSnapshotJson};
use engine::skips::{SkipCounts, SkipKind};
use engine::status::{StatusEventJson, StatusLog, StatusSnapshotJson};
use engine::TopicMachine;
use serde_json::Value;

use crate::table::{self, shown};

/// Skip counters as `(name, count)`, for the stderr summary.
pub type Skips = Vec<(&'static str, u64)>;

/// A machine's skip counters with their names.
fn named<K: SkipKind>(counts: &SkipCounts<K>) -> Skips {
    counts.iter().map(|(kind, n)| (kind.as_str(), n)).collect()
}

/// What the CLI shows of a topic machine.
pub trait View: TopicMachine + Default {
    /// The snapshot in the JSON contract.
    fn snapshot_json(&self) -> Result<Value, serde_json::Error>;
    /// One event in the JSON contract.
    fn event_json(event: &Self::Event) -> Result<Value, serde_json::Error>;
    /// The readable table.
    fn table(&self) -> String;
    /// Non-zero skip counters.
    fn skips(&self) -> Skips;
}

/// Implements [`View`] for a machine from its snapshot and event JSON views, its table and how
/// its skip counters read.
macro_rules! view {
    ($machine:ty, $snapshot_json:ident, $event_json:ident, $table:path, $skips:expr) => {
        impl View for $machine {
            fn snapshot_json(&self) -> Result<Value, serde_json::Error> {
                serde_json::to_value($snapshot_json(&self.snapshot()))
            }
            fn event_json(event: &Self::Event) -> Result<Value, serde_json::Error> {
                serde_json::to_value($event_json(event))
            }
            fn table(&self) -> String {
                $table(self)
            }
            fn skips(&self) -> Skips {
                let skips: fn(&Self) -> Skips = $skips;
                skips(self)
            }
        }
    };
}

view!(ConfigLog, SnapshotJson, EventJson, config_table, |log| {
    named(log.diagnostics().skipped())
});
view!(
    StatusLog,
    StatusSnapshotJson,
    StatusEventJson,
    status_table,
    |log| named(log.diagnostics().skipped())
);
view!(
    OffsetLog,
    OffsetSnapshotJson,
    OffsetEventJson,
    offsets_table,
    |log| named(log.diagnostics().skipped())
);

pub(crate) use connect_state_ops::doctor::missing_task_ids;

/// The human view of a config snapshot and its diagnostics.
fn config_table(log: &ConfigLog) -> String {
    let snap = &log.snapshot();
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
            let _ = writeln!(
                out,
                "  {}: commit at offset {} announced {} task(s); missing task ids {}{}",
                shown(c),
                why.commit_offset,
                why.task_count,
                missing_task_ids(why),
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
            let _ = writeln!(out, "  {}: {state}", shown(c));
        }
    }
    let orphans: Vec<_> = diagnostics.orphan_records().collect();
    if !orphans.is_empty() {
        out.push_str("\nTask/commit records read while their connector had no config:\n");
        for (c, o) in orphans {
            let _ = writeln!(
                out,
                "  {}: {} task record(s), {} commit(s), offsets {}..={}",
                shown(c),
                o.task_records,
                o.commit_records,
                o.first_offset,
                o.last_offset
            );
        }
    }
    if let Some(key) = snap.session_key() {
        let _ = writeln!(
            out,
            "\nSession key: {} ({} bytes), created at {} ms",
            shown(&key.algorithm),
            key.key.len(),
            key.creation_timestamp
        );
    }
    out
}

/// The human view of an offsets snapshot: each connector's KIP-875 listing.
fn offsets_table(log: &OffsetLog) -> String {
    let snap = &log.snapshot();
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
fn status_table(log: &StatusLog) -> String {
    let snap = &log.snapshot();
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
        .map(|(c, n, _)| format!("{}-{n}", shown(c)))
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
