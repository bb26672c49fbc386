//! `doctor`'s examination: every check the topics allow, as findings that cite the records
//! they rest on (via the key index). The CLI renders a [`Report`]; embedders can use it as is.

use std::collections::BTreeSet;

use connect_state_store::{validate_topic, TopicDefaults, TopicDescription, TopicKind};
use engine::config::{ConfigDiagnostics, ConfigSnapshot, Inconsistency};
use engine::offsets::offset_key;
use engine::offsets::{OffsetDiagnostics, OffsetSnapshot};
use engine::status::write::{connector_key, task_key, topic_key};
use engine::status::{StatusDiagnostics, StatusSnapshot};
use engine::TopicMachine;
use serde::Serialize;

use crate::index::KeyIndex;
use crate::kcat;
use crate::topics::{Layout, TopicRead, Topics};

/// Where a finding's record lives.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Evidence {
    /// `config`, `status` or `offsets`.
    pub topic: &'static str,
    /// Partition.
    pub partition: i32,
    /// Offset.
    pub offset: i64,
    /// The record's key (as text).
    pub key: String,
}

/// One problem found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// The check that found it (stable identifiers, listed in `--help`).
    pub check: &'static str,
    /// The connector concerned, if any.
    pub connector: Option<String>,
    /// What is wrong.
    pub summary: String,
    /// Where the records are (a sample when there are many).
    pub evidence: Vec<Evidence>,
    /// How to repair it.
    pub hint: String,
}

/// The result of an examination.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Report {
    /// The topics read.
    pub topics: Vec<&'static str>,
    /// Problems found.
    pub findings: Vec<Finding>,
    /// Checks not run because a topic they need was not given.
    pub skipped_checks: Vec<String>,
}

/// Most evidence records listed per finding.
pub const MAX_EVIDENCE: usize = 8;

/// Every check `doctor` runs, by name (a [`Finding`]'s `check`).
pub const CHECKS: [&str; 11] = [
    "inconsistent-connector",
    "ghost-task-records",
    "target-state-without-connector",
    "restart-request-for-unknown-connector",
    "status-of-deleted-connector",
    "topics-of-deleted-connector",
    "orphan-task-status",
    "mismatched-topic-status",
    "offsets-of-deleted-connector",
    "topic-layout",
    "bad-dump-lines",
];

/// One topic as `doctor` examines it: values taken from its machine when it was read (all
/// O(1) to take: the snapshot and the key index are persistent maps).
#[derive(Debug, Clone)]
pub struct Examined<S, D> {
    /// The topic name (live), or the dump file.
    pub name: String,
    /// Java's state of the topic.
    pub snapshot: S,
    /// What the machine knows beyond it.
    pub diagnostics: D,
    /// Where each key's latest record lives (the findings' evidence).
    pub index: KeyIndex,
    /// How the topic is laid out.
    pub layout: Layout,
    /// Dump lines skipped with `--skip-bad-lines`.
    pub bad_lines: kcat::BadLines,
}

/// The topics an examination covers (those given).
#[derive(Debug, Clone, Default)]
pub struct Examination {
    /// The config topic.
    pub config: Option<Examined<ConfigSnapshot, ConfigDiagnostics>>,
    /// The status topic.
    pub status: Option<Examined<StatusSnapshot, StatusDiagnostics>>,
    /// The offsets topic.
    pub offsets: Option<Examined<OffsetSnapshot, OffsetDiagnostics>>,
}

impl<M: TopicMachine> TopicRead<M> {
    /// The values `doctor` examines, taken from the machine as it stands.
    pub fn examined(&self) -> Examined<M::Snapshot, M::Diagnostics> {
        Examined {
            name: self.name.clone(),
            snapshot: self.state.snapshot(),
            diagnostics: self.state.diagnostics(),
            index: self.state.index(),
            layout: self.layout.clone(),
            bad_lines: self.bad_lines.clone(),
        }
    }
}

impl Examination {
    /// The values of the topics read.
    pub fn of<C, S, O>(topics: &Topics<C, S, O>) -> Self
    where
        C: TopicMachine<Snapshot = ConfigSnapshot, Diagnostics = ConfigDiagnostics>,
        S: TopicMachine<Snapshot = StatusSnapshot, Diagnostics = StatusDiagnostics>,
        O: TopicMachine<Snapshot = OffsetSnapshot, Diagnostics = OffsetDiagnostics>,
    {
        Self {
            config: topics.config.as_ref().map(TopicRead::examined),
            status: topics.status.as_ref().map(TopicRead::examined),
            offsets: topics.offsets.as_ref().map(TopicRead::examined),
        }
    }
}

/// What one topic's checks found, and the checks they could not run. [`examine`] assembles
/// the parts into a [`Report`]; a server that re-examines only the topics that moved keeps the
/// parts of the others ([`Report::assemble`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Part {
    /// Problems found.
    pub findings: Vec<Finding>,
    /// Checks not run because a topic they need was not given.
    pub skipped_checks: Vec<String>,
}

/// The config topic's checks: its layout, then its own.
pub fn examine_config(config: &Examined<ConfigSnapshot, ConfigDiagnostics>) -> Part {
    let mut part = Part::default();
    layout(&mut part, "config", TopicKind::Config, config);
    config_checks(&mut part, config);
    part
}

/// The status topic's checks (those about deleted connectors need the config topic).
pub fn examine_status(
    status: &Examined<StatusSnapshot, StatusDiagnostics>,
    config: Option<&ConfigSnapshot>,
) -> Part {
    let mut part = Part::default();
    layout(&mut part, "status", TopicKind::Status, status);
    status_checks(&mut part, status, config);
    part
}

/// The offsets topic's layout checks alone (the rest of [`examine_offsets`]).
pub fn examine_offsets_layout(offsets: &Examined<OffsetSnapshot, OffsetDiagnostics>) -> Part {
    let mut part = Part::default();
    layout(&mut part, "offsets", TopicKind::Offsets, offsets);
    part
}

/// The offsets topic's checks (those about deleted connectors need the config topic).
pub fn examine_offsets(
    offsets: &Examined<OffsetSnapshot, OffsetDiagnostics>,
    config: Option<&ConfigSnapshot>,
) -> Part {
    let mut part = Part::default();
    layout(&mut part, "offsets", TopicKind::Offsets, offsets);
    match config {
        Some(snapshot) => offsets_checks(&mut part, offsets, snapshot),
        None => part
            .skipped_checks
            .push("offsets-of-deleted-connector (needs the config topic)".into()),
    }
    part
}

impl Report {
    /// The report of the topics examined, from each one's part (`None`: not given).
    pub fn assemble(config: Option<&Part>, status: Option<&Part>, offsets: Option<&Part>) -> Self {
        let mut report = Self::default();
        for (name, part) in [("config", config), ("status", status), ("offsets", offsets)] {
            if let Some(part) = part {
                report.topics.push(name);
                report.findings.extend(part.findings.iter().cloned());
                report
                    .skipped_checks
                    .extend(part.skipped_checks.iter().cloned());
            }
        }
        if config.is_none() {
            report.skipped_checks.push(
                "inconsistent-connector, ghost-task-records, target-state-without-connector, \
                 restart-request-for-unknown-connector (need the config topic)"
                    .into(),
            );
        }
        report
    }
}

/// Runs every check the given topics allow.
pub fn examine(topics: &Examination) -> Report {
    let config_snapshot = topics.config.as_ref().map(|c| &c.snapshot);
    let config = topics.config.as_ref().map(examine_config);
    let status = topics
        .status
        .as_ref()
        .map(|s| examine_status(s, config_snapshot));
    let offsets = topics
        .offsets
        .as_ref()
        .map(|o| examine_offsets(o, config_snapshot));
    Report::assemble(config.as_ref(), status.as_ref(), offsets.as_ref())
}

fn at(topic: &'static str, key: String, position: (i32, i64)) -> Evidence {
    Evidence {
        topic,
        partition: position.0,
        offset: position.1,
        key,
    }
}

/// Java's start-up checks: compact cleanup policy; one partition for the config topic.
fn layout<S, D>(report: &mut Part, topic: &'static str, kind: TopicKind, read: &Examined<S, D>) {
    let problem = match &read.layout {
        Layout::Described {
            partitions,
            cleanup_policy,
        } => validate_topic(
            &read.name,
            kind,
            &TopicDescription {
                partitions: *partitions,
                cleanup_policy: cleanup_policy.clone(),
            },
        )
        .err()
        .map(|e| e.to_string()),
        // A record on any partition but 0 means the topic has more than one.
        Layout::Dump { partitions_seen } if kind == TopicKind::Config => {
            partitions_seen.iter().any(|&p| p != 0).then(|| {
                format!(
                    "the config topic dump {} holds records of partition(s) {:?}, so the topic \
                     has more than one partition; Connect requires a single partition",
                    read.name, partitions_seen
                )
            })
        }
        Layout::Dump { .. } => None,
    };
    dump_lines(report, topic, read);
    if let Some(summary) = problem {
        report.findings.push(Finding {
            check: "topic-layout",
            connector: None,
            summary,
            evidence: Vec::new(),
            hint: format!(
                "Workers refuse to start on this {topic} topic. Create a new compacted topic \
                 (a single partition for the config topic), copy the records over in order, and \
                 point the worker setting '{}' at it.",
                kind.setting()
            ),
        });
    }
}

/// Lines of a dump skipped with `--skip-bad-lines`: the checks saw only the rest, so a dump
/// that was partly unreadable is not healthy.
fn dump_lines<S, D>(report: &mut Part, topic: &'static str, read: &Examined<S, D>) {
    let bad = &read.bad_lines;
    let Some(first) = bad.first.first() else {
        return;
    };
    report.findings.push(Finding {
        check: "bad-dump-lines",
        connector: None,
        summary: format!(
            "{} line(s) of the {topic} dump {} could not be read and were skipped \
             (--skip-bad-lines), the first: {first}; every other finding is about the lines \
             that could be read",
            bad.count, read.name
        ),
        evidence: Vec::new(),
        hint: format!(
            "Dump the {topic} topic again with kcat -C -t TOPIC -e -J (each record one JSON \
             line) and check it is this topic's dump; without --skip-bad-lines the first bad \
             line is an error."
        ),
    });
}

fn config_checks(report: &mut Part, read: &Examined<ConfigSnapshot, ConfigDiagnostics>) {
    let (snapshot, diagnostics) = (&read.snapshot, &read.diagnostics);
    for (c, why) in diagnostics.inconsistencies() {
        if !snapshot.is_inconsistent(c) {
            continue;
        }
        report.findings.push(Finding {
            check: "inconsistent-connector",
            connector: Some(c.into()),
            summary: format!(
                "connector '{c}' is inconsistent: the commit at offset {} announced {} task(s), \
                 but task id(s) {} have no task record since the previous commit, so Connect \
                 runs none of its tasks",
                why.commit_offset,
                why.task_count,
                missing_task_ids(why),
            ),
            evidence: vec![at("config", format!("commit-{c}"), (0, why.commit_offset))],
            hint: format!(
                "The leader must write the task configs again: restart the connector \
                 (POST /connectors/{c}/restart) or submit its config again \
                 (PUT /connectors/{c}/config). A worker that crashed mid-write left this."
            ),
        });
    }
    for (c, orphans) in diagnostics.orphan_records() {
        if snapshot.contains(c) {
            continue;
        }
        let commit_key = format!("commit-{c}");
        let task_prefix = format!("task-{c}-");
        let mut evidence: Vec<Evidence> = read
            .index
            .keys_with_prefix(&task_prefix)
            .filter(|(k, _)| is_task_suffix(&k[task_prefix.len()..]))
            .chain(
                read.index
                    .latest(&commit_key)
                    .map(|p| (commit_key.clone(), p)),
            )
            .map(|(k, p)| at("config", k, p))
            .collect();
        evidence.sort_by_key(|e| e.offset);
        evidence.truncate(MAX_EVIDENCE);
        report.findings.push(Finding {
            check: "ghost-task-records",
            connector: Some(c.into()),
            summary: format!(
                "{} task record(s) and {} commit record(s) of '{c}', which has no config, at \
                 offsets {}..={} (KAFKA-16838 ghosts of a deleted connector)",
                orphans.task_records,
                orphans.commit_records,
                orphans.first_offset,
                orphans.last_offset
            ),
            evidence,
            hint: format!(
                "A connector created again as '{c}' would see these stale task configs until \
                 its first commit. Write tombstones for the keys listed (or pick a new name)."
            ),
        });
    }
    for (c, state) in snapshot.target_states_without_connector() {
        let key = format!("target-state-{c}");
        report.findings.push(Finding {
            check: "target-state-without-connector",
            connector: Some(c.into()),
            summary: format!("target state {state} is stored for '{c}', which has no config"),
            evidence: read
                .index
                .latest(&key)
                .map(|p| at("config", key.clone(), p))
                .into_iter()
                .collect(),
            hint: format!(
                "A deletion that stopped half-way left it; a connector created again as '{c}' \
                 would start {state}. Write a tombstone for '{key}'."
            ),
        });
    }
    let prefix = "restart-connector-";
    for (key, position) in read.index.keys_with_prefix(prefix) {
        let c = &key[prefix.len()..];
        if snapshot.contains(c) {
            continue;
        }
        report.findings.push(Finding {
            check: "restart-request-for-unknown-connector",
            connector: Some(c.into()),
            summary: format!("a restart request for '{c}', which has no config"),
            evidence: vec![at("config", key.clone(), position)],
            hint: format!(
                "Workers ignore it, but compaction keeps it; a connector created again as \
                 '{c}' is not restarted by it. Write a tombstone for '{key}' to drop it."
            ),
        });
    }
}

/// Whether a task key's suffix is a task number (Java's `Integer.parseInt` after the last dash).
fn is_task_suffix(suffix: &str) -> bool {
    !suffix.is_empty() && !suffix.contains('-')
}

fn status_checks(
    report: &mut Part,
    read: &Examined<StatusSnapshot, StatusDiagnostics>,
    config: Option<&ConfigSnapshot>,
) {
    let (snapshot, diagnostics) = (&read.snapshot, &read.diagnostics);
    let evidence_of = |key: String| read.index.latest(&key).map(|p| at("status", key, p));
    let mut deleted: BTreeSet<&str> = BTreeSet::new();
    match config {
        Some(config) => {
            let mut names: BTreeSet<&str> = snapshot.connectors().map(|(c, _)| c).collect();
            names.extend(snapshot.all_tasks().map(|(c, _, _)| c));
            for c in names.into_iter().filter(|c| !config.contains(c)) {
                deleted.insert(c);
                let tasks: Vec<i32> = snapshot.tasks(c).map(|(t, _)| t).collect();
                let mut evidence: Vec<Evidence> = core::iter::once(connector_key(c))
                    .chain(tasks.iter().map(|t| task_key(c, *t)))
                    .filter_map(&evidence_of)
                    .collect();
                evidence.truncate(MAX_EVIDENCE);
                report.findings.push(Finding {
                    check: "status-of-deleted-connector",
                    connector: Some(c.into()),
                    summary: format!(
                        "statuses of '{c}', which has no config: {} connector status, {} task \
                         status(es)",
                        usize::from(snapshot.connector(c).is_some()),
                        tasks.len()
                    ),
                    evidence,
                    hint: format!(
                        "Only a worker running '{c}' tombstones its statuses, and it is gone. \
                         Write tombstones for the keys listed; a connector created again as \
                         '{c}' would otherwise show stale states until its workers report."
                    ),
                });
            }
            let mut topics_by_connector: std::collections::BTreeMap<&str, Vec<Evidence>> =
                Default::default();
            for (c, topic, _) in snapshot.all_topics() {
                if !config.contains(c) {
                    let entry = topics_by_connector.entry(c).or_default();
                    if let Some(e) = evidence_of(topic_key(topic, c)) {
                        entry.push(e);
                    }
                }
            }
            for (c, mut evidence) in topics_by_connector {
                let count = evidence.len();
                evidence.truncate(MAX_EVIDENCE);
                report.findings.push(Finding {
                    check: "topics-of-deleted-connector",
                    connector: Some(c.into()),
                    summary: format!(
                        "{count} active-topic record(s) (KIP-558) of '{c}', which has no config"
                    ),
                    evidence,
                    hint: format!(
                        "Deleting a connector does not clear its active topics; a connector \
                         created again as '{c}' reports them. After creating it, reset them \
                         (PUT /connectors/{c}/topics/reset), or tombstone the keys listed now."
                    ),
                });
            }
        }
        None => report.skipped_checks.push(
            "status-of-deleted-connector, topics-of-deleted-connector (need the config topic)"
                .into(),
        ),
    }
    let mut orphans: std::collections::BTreeMap<&str, Vec<i32>> = Default::default();
    for (c, task, _) in diagnostics.orphan_task_statuses() {
        if !deleted.contains(c) {
            orphans.entry(c).or_default().push(task);
        }
    }
    for (c, tasks) in orphans {
        let mut evidence: Vec<Evidence> = tasks
            .iter()
            .filter_map(|t| evidence_of(task_key(c, *t)))
            .collect();
        evidence.truncate(MAX_EVIDENCE);
        report.findings.push(Finding {
            check: "orphan-task-status",
            connector: Some(c.into()),
            summary: format!(
                "task status(es) {:?} of '{c}' without a connector status; Connect never \
                 cleans these up",
                tasks
            ),
            evidence,
            hint: format!(
                "Left when a worker died between the task and connector tombstones of a \
                 deletion. Restarting '{c}' rewrites its statuses; otherwise tombstone the keys \
                 listed."
            ),
        });
    }
    for (c, topic, status) in diagnostics.mismatched_topic_statuses() {
        let key = topic_key(topic, c);
        report.findings.push(Finding {
            check: "mismatched-topic-status",
            connector: Some(c.into()),
            summary: format!(
                "the active-topic record '{key}' holds topic '{}' of connector '{}'; a topic \
                 reset deletes by the value's names, so it can never remove this record",
                status.name, status.connector
            ),
            evidence: evidence_of(key.clone()).into_iter().collect(),
            hint: format!("Write a tombstone for '{key}'."),
        });
    }
}

fn offsets_checks(
    report: &mut Part,
    read: &Examined<OffsetSnapshot, OffsetDiagnostics>,
    config: &ConfigSnapshot,
) {
    let snapshot = &read.snapshot;
    for c in snapshot.connectors().filter(|c| !config.contains(c)) {
        report
            .findings
            .push(offsets_of_deleted_connector(snapshot, c));
    }
}

/// The `offsets-of-deleted-connector` finding of connector `c` (whose config is gone): it
/// depends on the offsets topic alone, so a caller that knows which connectors' offsets
/// changed can keep the others' findings.
pub fn offsets_of_deleted_connector(snapshot: &OffsetSnapshot, c: &str) -> Finding {
    // The first partitions in Java's order are the evidence; only those are re-serialized.
    let (page, partitions) = snapshot.connector_partitions_page(c, 0, MAX_EVIDENCE);
    let evidence: Vec<Evidence> = page
        .iter()
        .filter_map(|p| {
            let key = offset_key(c, Some(p)).ok()?;
            let stored = snapshot.get(Some(&key))?;
            Some(at(
                "offsets",
                String::from_utf8_lossy(&key).into_owned(),
                (stored.partition(), stored.offset()),
            ))
        })
        .collect();
    Finding {
        check: "offsets-of-deleted-connector",
        connector: Some(c.into()),
        summary: format!(
            "{partitions} source partition(s) hold offsets of '{c}', which has no config"
        ),
        evidence,
        hint: format!(
            "A connector created again as '{c}' resumes from these offsets. To start fresh, \
             create it STOPPED and reset them (`connect-state offsets reset --connector {c} \
             --execute`, or DELETE /connectors/{c}/offsets) before resuming it."
        ),
    }
}

/// The missing task ids of an inconsistency, as text: `1, 2` or `1, 2, ... and 36 more` when
/// the diagnostics list only the first ones.
pub fn missing_task_ids(why: &Inconsistency) -> String {
    let listed: Vec<String> = why.missing_tasks.iter().map(i32::to_string).collect();
    let more = why
        .missing_count
        .saturating_sub(why.missing_tasks.len() as u64);
    if more > 0 {
        format!("{} and {more} more", listed.join(", "))
    } else {
        listed.join(", ")
    }
}
