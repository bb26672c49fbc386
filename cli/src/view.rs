//! How each topic's state is shown: the JSON contract, the readable table, the skip summary.

use core::fmt::Write as _;

use engine::config::{ConfigEventJson, ConfigLog, ConfigSnapshotJson};
use engine::offsets::{kip875, OffsetEventJson, OffsetLog, OffsetSnapshot, OffsetSnapshotJsonWith};
use engine::skips::{SkipCounts, SkipKind};
use engine::status::{StatusEventJson, StatusLog, StatusSnapshotJson};
use engine::TopicMachine;
use serde::{Serialize, Serializer};
use serde_json::Value;

use crate::parallel::Ahead;
use crate::table::{self, shown};

/// Skip counters as `(name, count)`, for the stderr summary.
pub type Skips = Vec<(&'static str, u64)>;

/// A machine's skip counters with their names.
fn named<K: SkipKind>(counts: &SkipCounts<K>) -> Skips {
    counts.iter().map(|(kind, n)| (kind.as_str(), n)).collect()
}

/// What the CLI shows of a topic machine.
pub trait View: TopicMachine + Default {
    /// The snapshot in the JSON contract, as a value (for small states; output is written
    /// through [`Json`], which holds nothing the size of the output).
    fn snapshot_json(&self) -> Result<Value, serde_json::Error>;
    /// Serializes the snapshot in the JSON contract as it goes.
    fn serialize_snapshot<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error>;
    /// Serializes one event in the JSON contract.
    fn serialize_event<S: Serializer>(
        event: &Self::Event,
        serializer: S,
    ) -> Result<S::Ok, S::Error>;
    /// One event in the JSON contract.
    fn event_json(event: &Self::Event) -> Result<Value, serde_json::Error>;
    /// Writes the readable table.
    fn write_table(&self, out: &mut dyn std::io::Write) -> std::io::Result<()>;
    /// The readable table, as text (for small states).
    fn table(&self) -> String {
        let mut out = Vec::new();
        // Writing into a vector cannot fail.
        let _ = self.write_table(&mut out);
        String::from_utf8(out).unwrap_or_default()
    }
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
            fn serialize_snapshot<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                $snapshot_json(&self.snapshot()).serialize(s)
            }
            fn serialize_event<S: Serializer>(
                event: &Self::Event,
                s: S,
            ) -> Result<S::Ok, S::Error> {
                $event_json(event).serialize(s)
            }
            fn event_json(event: &Self::Event) -> Result<Value, serde_json::Error> {
                serde_json::to_value($event_json(event))
            }
            fn write_table(&self, out: &mut dyn std::io::Write) -> std::io::Result<()> {
                $table(self, out)
            }
            fn skips(&self) -> Skips {
                let skips: fn(&Self) -> Skips = $skips;
                skips(self)
            }
        }
    };
}

view!(
    ConfigLog,
    ConfigSnapshotJson,
    ConfigEventJson,
    config_table,
    |log| { named(log.diagnostics().skipped()) }
);
view!(
    StatusLog,
    StatusSnapshotJson,
    StatusEventJson,
    status_table,
    |log| named(log.diagnostics().skipped())
);
view!(
    OffsetLog,
    OffsetsJsonAhead,
    OffsetEventJson,
    offsets_table,
    |log| named(log.diagnostics().skipped())
);

/// [`engine::offsets::OffsetSnapshotJson`], the connectors' KIP-875 listings computed on helper threads while
/// the document is written (see [`Ahead`]): they are most of the time a snapshot of many
/// source partitions takes to write.
struct OffsetsJsonAhead<'a>(&'a OffsetSnapshot);

impl Serialize for OffsetsJsonAhead<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let snap = self.0.clone();
        let connectors: Vec<String> = snap.connectors().map(str::to_string).collect();
        let listings = Ahead::new(connectors, LISTINGS_AHEAD, move |connector| {
            kip875::list(&snap, connector)
        });
        OffsetSnapshotJsonWith::new(self.0, listings).serialize(s)
    }
}

/// A machine's snapshot in the JSON contract, serialized as it is written.
pub struct Json<'a, M>(pub &'a M);

impl<M: View> Serialize for Json<'_, M> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize_snapshot(s)
    }
}

/// Events in the JSON contract, serialized as they are written.
pub struct EventsJson<'a, M: TopicMachine>(pub &'a [M::Event]);

impl<M: View> Serialize for EventsJson<'_, M> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        struct One<'a, M: TopicMachine>(&'a M::Event);
        impl<M: View> Serialize for One<'_, M> {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                M::serialize_event(self.0, s)
            }
        }
        s.collect_seq(self.0.iter().map(One::<M>))
    }
}

/// Writes `value` as pretty JSON and a newline through a buffer, holding nothing the size
/// of the output.
pub fn write_pretty(
    out: &mut dyn std::io::Write,
    value: &impl Serialize,
) -> Result<(), crate::common::CliError> {
    use std::io::Write as _;
    let mut buffered = std::io::BufWriter::with_capacity(64 * 1024, out);
    serde_json::to_writer_pretty(&mut buffered, value)?;
    buffered.write_all(b"\n")?;
    buffered.flush()?;
    Ok(())
}

pub(crate) use connect_state_ops::doctor::missing_task_ids;

/// Writes the human view of a config snapshot and its diagnostics.
fn config_table(log: &ConfigLog, to: &mut dyn std::io::Write) -> std::io::Result<()> {
    to.write_all(config_text(log).as_bytes())
}

/// The human view of a config snapshot and its diagnostics (bounded by the connectors).
fn config_text(log: &ConfigLog) -> String {
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

/// Writes the human view of an offsets snapshot: each connector's KIP-875 listing, one
/// connector's listing at a time (a topic of millions of partitions is never held as text), the
/// next connectors' rows computed on helper threads meanwhile (see [`Ahead`]).
fn offsets_table(log: &OffsetLog, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    let snap = log.snapshot();
    writeln!(out, "Offsets topic: {} live key(s)", snap.len())?;
    let connectors: Vec<String> = snap.connectors().map(str::to_string).collect();
    // The table's two passes (the first measures the columns) each compute the listings.
    let rows = || {
        let snap = snap.clone();
        Ahead::new(connectors.clone(), LISTINGS_AHEAD, move |connector| {
            connector_rows(&snap, connector)
        })
        .flatten()
    };
    let headers = ["CONNECTOR", "PARTITION", "OFFSET"];
    let widths = table::measure(&headers, rows());
    if widths.rows == 0 {
        writeln!(out, "No connector partitions.")?;
    } else {
        table::write_measured(out, &headers, &widths, rows())?;
    }
    let d = log.diagnostics();
    if d.untracked_keys() > 0 {
        writeln!(
            out,
            "\n{} record(s) have keys that are not [connector, partition] lists (stored, not tracked)",
            d.untracked_keys()
        )?;
    }
    Ok(())
}

/// How many connectors' listings are computed ahead of the one being written: enough to keep
/// the helpers busy while a large one is written, few enough to hold little.
const LISTINGS_AHEAD: usize = 2;

/// The table rows of `connector`'s KIP-875 listing.
fn connector_rows(snap: &OffsetSnapshot, connector: &str) -> Vec<Vec<String>> {
    kip875::list(snap, connector)
        .offsets
        .into_iter()
        .map(|entry| {
            let json = serde_json::to_value(&entry).unwrap_or_default();
            let partition = json["partition"].to_string();
            let offset = match &json["offset"] {
                serde_json::Value::Null => "null (no record under the Java-ordered key)".into(),
                other => other.to_string(),
            };
            vec![connector.to_string(), partition, offset]
        })
        .collect()
}

/// Writes the human view of a status snapshot.
fn status_table(log: &StatusLog, to: &mut dyn std::io::Write) -> std::io::Result<()> {
    to.write_all(status_text(log).as_bytes())
}

/// The human view of a status snapshot: connectors with their tasks, then active topics
/// (bounded by the connectors and tasks).
fn status_text(log: &StatusLog) -> String {
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

#[cfg(test)]
mod tests {
    use engine::Record;

    use super::*;

    fn offsets(records: &[(&str, &str)]) -> OffsetLog {
        let mut log = OffsetLog::new();
        for (offset, (key, value)) in (0..).zip(records) {
            let record = Record {
                key: Some(key.as_bytes()),
                value: Some(value.as_bytes()),
                offset,
                partition: 0,
                timestamp: None,
            };
            assert!(log.handle_record(record).unwrap().is_applied());
        }
        log
    }

    #[test]
    fn offsets_listings_come_in_connector_order_whoever_computed_them() {
        // More connectors than the helpers work ahead, each with partitions out of order.
        let keys: Vec<(String, String)> = (0..3 * LISTINGS_AHEAD)
            .rev()
            .flat_map(|c| {
                (0..3).rev().map(move |p| {
                    (
                        format!(r#"["c{c:02}",{{"file":"f{p}"}}]"#),
                        format!(r#"{{"pos":{}}}"#, c * 10 + p),
                    )
                })
            })
            .collect();
        let records: Vec<(&str, &str)> = keys.iter().map(|(k, v)| (&**k, &**v)).collect();
        let log = offsets(&records);
        // The JSON document, its listings computed by the helpers, is the core's.
        assert_eq!(
            serde_json::to_string(&Json(&log)).unwrap(),
            serde_json::to_string(&engine::offsets::OffsetSnapshotJson(&log.snapshot())).unwrap()
        );
        let table = log.table();
        let rows: Vec<&str> = table.lines().skip(2).collect();
        assert_eq!(rows.len(), 3 * 3 * LISTINGS_AHEAD);
        let mut expected = Vec::new();
        for c in 0..3 * LISTINGS_AHEAD {
            for p in 0..3 {
                expected.push(format!(
                    r#"c{c:02}  {{"file":"f{p}"}}  {{"pos":{}}}"#,
                    c * 10 + p
                ));
            }
        }
        let squeezed: Vec<String> = rows
            .iter()
            .map(|r| r.split_whitespace().collect::<Vec<_>>().join("  "))
            .collect();
        assert_eq!(squeezed, expected);
    }

    #[test]
    fn an_offsets_topic_without_connector_partitions_says_so() {
        let table = offsets(&[("not a list", r#"{"pos":1}"#)]).table();
        assert!(table.contains("No connector partitions."), "{table}");
        assert!(
            table.contains("1 record(s) have keys that are not"),
            "{table}"
        );
    }
}
