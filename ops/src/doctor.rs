//! `doctor`'s examination: every check the topics allow, as findings that cite the records
//! they rest on (via the key index). The CLI renders a [`Report`]; embedders can use it as is.

use std::collections::BTreeSet;

use connect_state_store::{validate_topic, TopicDescription, TopicRole};
use engine::config::{ConfigDiagnostics, ConfigSnapshot, Inconsistency};
use engine::offsets::offset_key;
use engine::offsets::{OffsetDiagnostics, OffsetSnapshot};
use engine::status::write::{connector_key, task_key, topic_key};
use engine::status::{StatusDiagnostics, StatusSnapshot};
use engine::TopicMachine;
use serde::Serialize;

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

/// A topic machine with the snapshot `S` and diagnostics `D` of one topic: what `doctor`
/// examines (the replay log, or a server's watched machine).
pub trait MachineOf<S, D>: TopicMachine<Snapshot = S, Diagnostics = D> {}

impl<M, S, D> MachineOf<S, D> for M where M: TopicMachine<Snapshot = S, Diagnostics = D> {}

/// A config-topic machine.
pub trait ConfigMachine: MachineOf<ConfigSnapshot, ConfigDiagnostics> {}
impl<M: MachineOf<ConfigSnapshot, ConfigDiagnostics>> ConfigMachine for M {}

/// A status-topic machine.
pub trait StatusMachine: MachineOf<StatusSnapshot, StatusDiagnostics> {}
impl<M: MachineOf<StatusSnapshot, StatusDiagnostics>> StatusMachine for M {}

/// An offsets-topic machine.
pub trait OffsetsMachine: MachineOf<OffsetSnapshot, OffsetDiagnostics> {}
impl<M: MachineOf<OffsetSnapshot, OffsetDiagnostics>> OffsetsMachine for M {}

/// Runs every check the given topics allow.
pub fn examine<C, S, O>(topics: &Topics<C, S, O>) -> Report
where
    C: ConfigMachine,
    S: StatusMachine,
    O: OffsetsMachine,
{
    let mut report = Report::default();
    let config = topics.config.as_ref();
    let config_snapshot = config.map(|c| c.state.machine.snapshot());
    if let Some(config) = config {
        report.topics.push("config");
        layout(&mut report, "config", TopicRole::Config, config);
        config_checks(&mut report, config);
    }
    if let Some(status) = &topics.status {
        report.topics.push("status");
        layout(&mut report, "status", TopicRole::Status, status);
        status_checks(&mut report, status, config_snapshot.as_ref());
    }
    if let Some(offsets) = &topics.offsets {
        report.topics.push("offsets");
        layout(&mut report, "offsets", TopicRole::Offsets, offsets);
        match &config_snapshot {
            Some(snapshot) => offsets_checks(&mut report, offsets, snapshot),
            None => report
                .skipped_checks
                .push("offsets-of-deleted-connector (needs the config topic)".into()),
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

fn at(topic: &'static str, key: String, position: (i32, i64)) -> Evidence {
    Evidence {
        topic,
        partition: position.0,
        offset: position.1,
        key,
    }
}

/// Java's start-up checks: compact cleanup policy; one partition for the config topic.
fn layout<M>(report: &mut Report, topic: &'static str, role: TopicRole, read: &TopicRead<M>) {
    let problem = match &read.layout {
        Layout::Described {
            partitions,
            cleanup_policy,
        } => validate_topic(
            &read.name,
            role,
            &TopicDescription {
                partitions: *partitions,
                cleanup_policy: cleanup_policy.clone(),
            },
        )
        .err()
        .map(|e| e.to_string()),
        // A record on any partition but 0 means the topic has more than one.
        Layout::Dump { partitions_seen } if role == TopicRole::Config => {
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
                role.setting()
            ),
        });
    }
}

/// Lines of a dump skipped with `--skip-bad-lines`: the checks saw only the rest, so a dump
/// that was partly unreadable is not healthy.
fn dump_lines<M>(report: &mut Report, topic: &'static str, read: &TopicRead<M>) {
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

fn config_checks<C: ConfigMachine>(report: &mut Report, read: &TopicRead<C>) {
    let log = &read.state.machine;
    let snapshot = log.snapshot();
    let diagnostics = log.diagnostics();
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
            .state
            .keys_with_prefix(&task_prefix)
            .filter(|(k, _)| is_task_suffix(&k[task_prefix.len()..]))
            .chain(
                read.state
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
                .state
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
    for (key, position) in read.state.keys_with_prefix(prefix) {
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

fn status_checks<S: StatusMachine>(
    report: &mut Report,
    read: &TopicRead<S>,
    config: Option<&ConfigSnapshot>,
) {
    let log = &read.state.machine;
    let snapshot = log.snapshot();
    let diagnostics = log.diagnostics();
    let evidence_of = |key: String| read.state.latest(&key).map(|p| at("status", key, p));
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

fn offsets_checks<O: OffsetsMachine>(
    report: &mut Report,
    read: &TopicRead<O>,
    config: &ConfigSnapshot,
) {
    let snapshot = read.state.machine.snapshot();
    for c in snapshot.connectors().filter(|c| !config.contains(c)) {
        let partitions = snapshot.connector_partitions_java_order(c);
        let evidence: Vec<Evidence> = partitions
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
            .take(MAX_EVIDENCE)
            .collect();
        report.findings.push(Finding {
            check: "offsets-of-deleted-connector",
            connector: Some(c.into()),
            summary: format!(
                "{} source partition(s) hold offsets of '{c}', which has no config",
                partitions.len()
            ),
            evidence,
            hint: format!(
                "A connector created again as '{c}' resumes from these offsets. To start fresh, \
                 create it STOPPED and reset them (`connect-state offsets reset --connector {c} \
                 --execute`, or DELETE /connectors/{c}/offsets) before resuming it."
            ),
        });
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
