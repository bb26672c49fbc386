//! Unit tests of the config machine: every rule of spec §1-§5 and the worked scenarios of §7.

use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;

use super::*;
use crate::json::JsonValue;
use crate::RecordError;

const CFG_S0: &str = r#"{"properties":{"k":"s0"}}"#;
const CFG_S1: &str = r#"{"properties":{"k":"s1"}}"#;
const CFG_S2: &str = r#"{"properties":{"k":"s2"}}"#;
const TS_PAUSED: &str = r#"{"state":"PAUSED","state.v2":"PAUSED"}"#;
const TS_STOPPED: &str = r#"{"state":"PAUSED","state.v2":"STOPPED"}"#;
const TS_STARTED: &str = r#"{"state":"STARTED","state.v2":"STARTED"}"#;

/// A small driver: records get consecutive offsets on partition 0.
struct Feed {
    log: ConfigLog,
}

impl Feed {
    fn new() -> Self {
        Self {
            log: ConfigLog::new(),
        }
    }

    fn started() -> Self {
        let mut feed = Self::new();
        feed.log.mark_caught_up();
        feed
    }

    fn put(&mut self, key: &str, value: Option<&str>) -> ConfigOutcome {
        let offset = self.log.next_fetch_offset(0);
        self.log
            .handle_record(Record::new(
                key.as_bytes(),
                value.map(str::as_bytes),
                offset,
            ))
            .unwrap()
    }

    fn events(&mut self) -> Vec<ConfigEvent> {
        core::iter::from_fn(|| self.log.poll_event()).collect()
    }

    fn snap(&self) -> ConfigSnapshot {
        self.log.snapshot()
    }
}

fn props(v: &str) -> Properties {
    Properties::from_iter([("k", JsonValue::String(v.into()))])
}

fn commit(n: i64) -> String {
    alloc::format!(r#"{{"tasks":{n}}}"#)
}

fn updated(c: &str) -> ConfigEvent {
    ConfigEvent::ConnectorConfigUpdated {
        connector: c.into(),
    }
}

fn tasks_updated(c: &str, tasks: &[i32]) -> ConfigEvent {
    ConfigEvent::TaskConfigsUpdated {
        connector: c.into(),
        tasks: tasks.to_vec(),
    }
}

fn task_ids(snap: &ConfigSnapshot, c: &str) -> Vec<i32> {
    snap.tasks(c).map(|id| id.task).collect()
}

/// A connector with a consistent two-task commit, then drained.
fn two_task_connector(feed: &mut Feed, c: &str) {
    feed.put(&alloc::format!("connector-{c}"), Some(CFG_S0));
    feed.put(&alloc::format!("task-{c}-0"), Some(CFG_S0));
    feed.put(&alloc::format!("task-{c}-1"), Some(CFG_S0));
    feed.put(&alloc::format!("commit-{c}"), Some(&commit(2)));
    feed.events();
}

// ---- §3.1 pipeline and offsets ------------------------------------------------------------

#[test]
fn offset_starts_at_no_offset_and_tracks_convertible_records() {
    let mut feed = Feed::new();
    assert_eq!(feed.snap().offset(), NO_OFFSET);
    feed.put("connector-a", Some(CFG_S0));
    assert_eq!(feed.snap().offset(), 1);
    // E3: bad JSON does not advance the offset, but the next fetch position moves on.
    let outcome = feed.put("connector-x", Some("not json"));
    assert!(matches!(
        outcome,
        RecordOutcome::Skipped(ConfigSkip::InvalidJson(_))
    ));
    assert_eq!(feed.snap().offset(), 1);
    assert_eq!(feed.log.next_fetch_offset(0), 2);
    assert!(!feed.snap().contains("x"));
    // Unknown keys and rejected values still advance it.
    assert_eq!(
        feed.put("garbage-key-1", None),
        RecordOutcome::Skipped(ConfigSkip::UnknownKey)
    );
    assert_eq!(feed.snap().offset(), 3);
    assert_eq!(feed.diagnostics_total(), 2);
}

impl Feed {
    fn diagnostics_total(&self) -> u64 {
        self.log.diagnostics().skipped().total()
    }
}

/// A record at the last possible offset is applied once: its redelivery is a duplicate too.
#[test]
fn a_duplicate_at_the_last_offset_is_not_applied_again() {
    let mut log = ConfigLog::new();
    log.handle_record(Record::new(
        b"connector-a",
        Some(CFG_S0.as_bytes()),
        i64::MAX,
    ))
    .unwrap();
    let dup = log
        .handle_record(Record::new(b"connector-a", None, i64::MAX))
        .unwrap();
    assert_eq!(
        dup,
        RecordOutcome::Skipped(ConfigSkip::Duplicate {
            next_expected: i64::MAX
        })
    );
    assert!(
        log.snapshot().contains("a"),
        "the tombstone was not applied"
    );
}

#[test]
fn offsets_with_gaps_and_duplicates() {
    let mut log = ConfigLog::new();
    log.handle_record(Record::new(b"connector-a", Some(CFG_S0.as_bytes()), 10))
        .unwrap();
    assert_eq!(log.offset(), 11);
    let dup = log
        .handle_record(Record::new(b"connector-a", None, 10))
        .unwrap();
    assert_eq!(
        dup,
        RecordOutcome::Skipped(ConfigSkip::Duplicate { next_expected: 11 })
    );
    assert!(log.snapshot().contains("a"), "a duplicate is not applied");
    assert_eq!(
        log.diagnostics().skipped().get(ConfigSkipKind::Duplicate),
        1
    );
    assert_eq!(
        log.handle_record(Record::new(b"x", None, -1)),
        Err(RecordError::NegativeOffset { offset: -1 })
    );
    assert_eq!(log.offset(), 11);
}

#[test]
fn null_keys_are_skipped_but_advance_the_offset() {
    let mut log = ConfigLog::new();
    let outcome = log
        .handle_record(Record {
            key: None,
            value: Some(b"{}"),
            offset: 0,
            partition: 0,
            timestamp: None,
        })
        .unwrap();
    assert_eq!(outcome, RecordOutcome::Skipped(ConfigSkip::NullKey));
    // Java's NullPointerException comes after the offset moved (found by the Java oracle).
    assert!(ConfigSkip::NullKey.java_throws());
    assert_eq!(log.offset(), 1);
}

// ---- §2 value decoding ----------------------------------------------------------------------

#[test]
fn empty_whitespace_and_null_values_are_tombstones() {
    for tombstone in [Some(""), Some("  \n"), Some("null"), None] {
        let mut feed = Feed::started();
        feed.put("connector-x", Some(CFG_S0));
        feed.events();
        assert!(feed.put("connector-x", tombstone).is_applied());
        assert_eq!(
            feed.events(),
            vec![ConfigEvent::ConnectorConfigRemoved {
                connector: "x".into()
            }],
            "{tombstone:?}"
        );
        assert!(!feed.snap().contains("x"));
    }
}

#[test]
fn values_tolerate_bom_trailing_garbage_duplicates_and_non_strings() {
    let mut feed = Feed::new();
    feed.put(
        "connector-x",
        Some("\u{feff}{\"properties\":{\"k\":\"a\",\"k\":\"b\",\"n\":5,\"z\":null}} xyz"),
    );
    let snap = feed.snap();
    let cfg = snap.connector_config("x").unwrap();
    assert_eq!(cfg.get("k"), Some(PropertyValue::String("b")));
    assert_eq!(
        cfg.get("n"),
        Some(PropertyValue::Other(&JsonValue::Long(5)))
    );
    assert_eq!(cfg.get("z"), Some(PropertyValue::Other(&JsonValue::Null)));
}

#[test]
fn schema_envelopes_are_read_as_plain_objects() {
    let mut feed = Feed::started();
    let envelope = r#"{"schema":{"type":"struct"},"payload":{"properties":{"name":"x"}}}"#;
    assert_eq!(
        feed.put("connector-x", Some(envelope)),
        RecordOutcome::Skipped(ConfigSkip::WrongFormat {
            expected: "an object member `properties`"
        })
    );
    // A restart request in envelope form is accepted with both flags false.
    feed.put("restart-connector-x", Some(envelope));
    assert_eq!(
        feed.events(),
        vec![ConfigEvent::RestartRequested {
            connector: "x".into(),
            only_failed: false,
            include_tasks: false
        }]
    );
    feed.put("connector-x", Some(CFG_S0));
    feed.events();
    assert_eq!(
        feed.put("commit-x", Some(envelope)),
        RecordOutcome::Skipped(ConfigSkip::InvalidTaskCount)
    );
}

// ---- §3.2 connector configs -----------------------------------------------------------------

#[test]
fn connector_config_sets_default_target_state_and_fires_every_time() {
    let mut feed = Feed::started();
    feed.put("connector-x", Some(CFG_S0));
    feed.put("connector-x", Some(CFG_S0));
    assert_eq!(feed.events(), vec![updated("x"), updated("x")]);
    assert_eq!(feed.snap().target_state("x"), Some(TargetState::Started));
    assert_eq!(feed.snap().connector_config("x"), Some(&props("s0")));
    assert_eq!(
        feed.put("connector-x", Some("[1]")),
        RecordOutcome::Skipped(ConfigSkip::WrongFormat {
            expected: "a JSON object"
        })
    );
    assert_eq!(
        feed.put("connector-x", Some(r#"{"properties":"no"}"#)),
        RecordOutcome::Skipped(ConfigSkip::WrongFormat {
            expected: "an object member `properties`"
        })
    );
    assert!(feed.events().is_empty());
}

#[test]
fn removal_of_absent_connector_still_fires() {
    let mut feed = Feed::started();
    feed.put("connector-ghost", None);
    assert_eq!(
        feed.events(),
        vec![ConfigEvent::ConnectorConfigRemoved {
            connector: "ghost".into()
        }]
    );
}

#[test]
fn removal_clears_configs_but_not_fencing_data_or_target_state() {
    let mut feed = Feed::started();
    two_task_connector(&mut feed, "x");
    feed.put("tasks-fencing-x", Some(r#"{"task-count":2}"#));
    feed.put("connector-x", None);
    let snap = feed.snap();
    assert!(!snap.contains("x"));
    assert_eq!(snap.task_count("x"), 0);
    assert_eq!(snap.task_configs().count(), 0);
    assert_eq!(snap.applied_connector_config("x"), None);
    assert_eq!(snap.target_state("x"), Some(TargetState::Started));
    assert_eq!(snap.task_count_record("x"), Some(2));
    assert_eq!(snap.task_config_generation("x"), Some(0));
}

// ---- §3.3 task configs ----------------------------------------------------------------------

#[test]
fn task_records_are_buffered_silently_and_bad_ones_skipped() {
    let mut feed = Feed::started();
    feed.put("connector-x", Some(CFG_S0));
    feed.events();
    assert!(feed.put("task-x-0", Some(CFG_S0)).is_applied());
    assert_eq!(
        feed.put("task-x-1", None),
        RecordOutcome::Skipped(ConfigSkip::UnexpectedTombstone)
    );
    assert_eq!(
        feed.put("task-x", Some(CFG_S0)),
        RecordOutcome::Skipped(ConfigSkip::UnparseableTaskKey)
    );
    assert!(feed.events().is_empty());
    assert_eq!(
        feed.snap().task_configs().count(),
        0,
        "nothing applied before a commit"
    );
    // A later record for the same task replaces the buffered one.
    feed.put("task-x-0", Some(CFG_S1));
    feed.put("commit-x", Some(&commit(1)));
    assert_eq!(
        feed.snap().task_config(&TaskId::new("x", 0)),
        Some(&props("s1"))
    );
}

// ---- §3.4 commits ---------------------------------------------------------------------------

#[test]
fn consistent_commit_applies_buffer_and_sets_everything() {
    let mut feed = Feed::started();
    feed.put("connector-x", Some(CFG_S0));
    feed.put("task-x-1", Some(CFG_S1));
    feed.put("task-x-0", Some(CFG_S0));
    feed.put("commit-x", Some(&commit(2)));
    assert_eq!(
        feed.events(),
        vec![updated("x"), tasks_updated("x", &[0, 1])]
    );
    let snap = feed.snap();
    assert_eq!(task_ids(&snap, "x"), [0, 1]);
    assert_eq!(snap.task_count("x"), 2);
    assert_eq!(snap.task_config_generation("x"), Some(0));
    assert_eq!(snap.applied_connector_config("x"), Some(&props("s0")));
    assert!(snap.pending_fencing("x"));
    assert!(!snap.is_inconsistent("x"));
}

#[test]
fn extra_task_ids_are_applied_but_not_listed() {
    let mut feed = Feed::new();
    feed.put("connector-x", Some(CFG_S0));
    feed.put("task-x-0", Some(CFG_S0));
    feed.put("task-x-5", Some(CFG_S0));
    feed.put("commit-x", Some(&commit(1)));
    let snap = feed.snap();
    assert_eq!(task_ids(&snap, "x"), [0]);
    assert!(snap.task_config(&TaskId::new("x", 5)).is_some());
}

#[test]
fn e11_inconsistent_commit_then_recovery() {
    let mut feed = Feed::started();
    feed.put("connector-x", Some(CFG_S0));
    feed.events();
    feed.put("task-x-1", Some(CFG_S0));
    let commit_offset = feed.log.next_fetch_offset(0);
    feed.put("commit-x", Some(&commit(2)));
    assert_eq!(feed.events(), vec![tasks_updated("x", &[])]);
    let snap = feed.snap();
    assert!(snap.is_inconsistent("x"));
    assert_eq!(snap.task_count("x"), 2);
    assert!(snap.tasks("x").is_empty());
    assert!(snap.pending_fencing("x"));
    assert_eq!(snap.task_config_generation("x"), None);
    let diagnostics = feed.log.diagnostics();
    let why = diagnostics.inconsistency("x").unwrap();
    assert_eq!(
        why,
        &Inconsistency {
            commit_offset,
            task_count: 2,
            missing_tasks: vec![0],
            missing_count: 1
        }
    );

    feed.put("task-x-0", Some(CFG_S1));
    feed.put("task-x-1", Some(CFG_S1));
    feed.put("commit-x", Some(&commit(2)));
    assert_eq!(feed.events(), vec![tasks_updated("x", &[0, 1])]);
    let snap = feed.snap();
    assert!(!snap.is_inconsistent("x"));
    assert_eq!(task_ids(&snap, "x"), [0, 1]);
    // The generation starts at 0: the deferred entry existed since the inconsistent commit.
    assert_eq!(snap.task_config_generation("x"), Some(0));
    assert!(feed.log.diagnostics().inconsistency("x").is_none());
}

#[test]
fn only_records_since_the_previous_commit_count() {
    let mut feed = Feed::new();
    two_task_connector(&mut feed, "x");
    // Task 0 rewritten, task 1 not: the earlier task 1 record no longer counts.
    feed.put("task-x-0", Some(CFG_S1));
    feed.put("commit-x", Some(&commit(2)));
    let snap = feed.snap();
    assert!(snap.is_inconsistent("x"));
    assert_eq!(
        snap.task_config(&TaskId::new("x", 0)),
        Some(&props("s0")),
        "an inconsistent commit applies nothing"
    );
    assert_eq!(
        feed.log
            .diagnostics()
            .inconsistency("x")
            .unwrap()
            .missing_tasks,
        [1]
    );
}

#[test]
fn e12_shrink_keeps_stale_task_configs() {
    let mut feed = Feed::new();
    two_task_connector(&mut feed, "x");
    feed.put("task-x-0", Some(CFG_S2));
    feed.put("commit-x", Some(&commit(1)));
    let snap = feed.snap();
    assert_eq!(task_ids(&snap, "x"), [0]);
    assert_eq!(snap.task_config(&TaskId::new("x", 0)), Some(&props("s2")));
    assert_eq!(snap.task_config(&TaskId::new("x", 1)), Some(&props("s0")));
    assert_eq!(snap.task_config_generation("x"), Some(1));
}

#[test]
fn zero_task_commits_and_the_generation_counter() {
    // No task record was ever buffered: consistent, no generation.
    let mut feed = Feed::started();
    feed.put("connector-x", Some(CFG_S0));
    feed.put("commit-x", Some(&commit(0)));
    assert_eq!(feed.events(), vec![updated("x"), tasks_updated("x", &[])]);
    assert_eq!(feed.snap().task_config_generation("x"), None);
    assert_eq!(
        feed.snap().applied_connector_config("x"),
        Some(&props("s0"))
    );
    // After a buffered record the (now empty) entry exists: the generation moves.
    two_task_connector(&mut feed, "y");
    feed.put("commit-y", Some(&commit(0)));
    assert_eq!(feed.events(), vec![tasks_updated("y", &[])]);
    assert_eq!(feed.snap().task_config_generation("y"), Some(1));
    assert!(feed.snap().tasks("y").is_empty());
}

#[test]
fn counts_are_truncated_like_java_and_negative_counts_are_consistent() {
    let mut feed = Feed::new();
    feed.put("connector-x", Some(CFG_S0));
    feed.put("task-x-0", Some(CFG_S0));
    feed.put("task-x-1", Some(CFG_S0));
    feed.put("commit-x", Some(r#"{"tasks":4294967298}"#));
    assert_eq!(feed.snap().task_count("x"), 2);
    assert!(!feed.snap().is_inconsistent("x"));
    feed.put("commit-x", Some(r#"{"tasks":-1}"#));
    assert_eq!(feed.snap().task_count("x"), -1);
    assert!(!feed.snap().is_inconsistent("x"));
    assert!(
        feed.snap().tasks("x").is_empty(),
        "no panic where Java throws"
    );
    feed.put("connector-y", Some(CFG_S0));
    feed.put("commit-y", Some(r#"{"tasks":2147483647}"#));
    assert!(feed.snap().is_inconsistent("y"));
    let diagnostics = feed.log.diagnostics();
    let why = diagnostics.inconsistency("y").unwrap();
    assert_eq!(why.missing_count, 2_147_483_647);
    assert_eq!(why.missing_tasks.len(), MAX_LISTED_MISSING);
}

#[test]
fn bad_commit_values_leave_the_buffer() {
    let mut feed = Feed::started();
    feed.put("connector-x", Some(CFG_S0));
    feed.put("task-x-0", Some(CFG_S0));
    feed.events();
    for bad in [
        r#"{"tasks":"1"}"#,
        r#"{"tasks":1.0}"#,
        r#"{"tasks":null}"#,
        "{}",
    ] {
        let outcome = feed.put("commit-x", Some(bad));
        assert_eq!(
            outcome,
            RecordOutcome::Skipped(ConfigSkip::InvalidTaskCount),
            "{bad}"
        );
        assert!(outcome_throws(&outcome));
    }
    assert_eq!(
        feed.put("commit-x", None),
        RecordOutcome::Skipped(ConfigSkip::WrongFormat {
            expected: "a JSON object"
        })
    );
    assert!(feed.events().is_empty());
    assert!(!feed.snap().pending_fencing("x"));
    feed.put("commit-x", Some(&commit(1)));
    assert_eq!(feed.events(), vec![tasks_updated("x", &[0])]);
}

fn outcome_throws(outcome: &ConfigOutcome) -> bool {
    matches!(outcome, RecordOutcome::Skipped(skip) if skip.java_throws())
}

#[test]
fn commit_for_deleted_connector_cleans_up_even_when_malformed() {
    let mut feed = Feed::started();
    two_task_connector(&mut feed, "x");
    feed.put("task-x-0", Some(CFG_S1));
    feed.put("connector-x", None);
    feed.events();
    for value in [Some("garbage-is-fine"), None, Some(&*commit(1))] {
        let outcome = feed.put("commit-x", value.filter(|v| !v.starts_with("garbage")));
        assert_eq!(
            outcome,
            RecordOutcome::Skipped(ConfigSkip::CommitForMissingConnector)
        );
    }
    assert!(feed.events().is_empty(), "no callback for the guard");
    let snap = feed.snap();
    assert!(
        snap.pending_fencing("x"),
        "neither removal nor the guard touch pending fencing"
    );
    assert_eq!(snap.task_count("x"), 0);
    assert_eq!(
        snap.task_config_generation("x"),
        Some(0),
        "generations survive"
    );
    let diagnostics = feed.log.diagnostics();
    let orphans: Vec<_> = diagnostics.orphan_records().collect();
    assert_eq!(orphans.len(), 1);
    assert_eq!(orphans[0].1.commit_records, 3);
}

#[test]
fn ghost_task_records_survive_until_re_creation_quirk() {
    // Spec §8 item 1: the compacted log of a deleted connector, then a re-creation.
    let mut feed = Feed::new();
    feed.put("task-x-0", Some(CFG_S0));
    feed.put("task-x-1", Some(CFG_S0));
    feed.put("task-x-2", Some(CFG_S0));
    feed.put("commit-x", Some(&commit(3)));
    assert!(feed.snap().task_configs().next().is_none());
    // Without a commit to trigger the guard, leftover records stay buffered:
    feed.put("task-y-0", Some(CFG_S0));
    feed.put("task-y-3", Some(CFG_S0));
    feed.put("connector-y", Some(CFG_S1));
    feed.put("task-y-0", Some(CFG_S1));
    feed.put("commit-y", Some(&commit(1)));
    let snap = feed.snap();
    assert_eq!(task_ids(&snap, "y"), [0]);
    assert_eq!(snap.task_config(&TaskId::new("y", 0)), Some(&props("s1")));
    assert_eq!(
        snap.task_config(&TaskId::new("y", 3)),
        Some(&props("s0")),
        "the old incarnation's task 3 is copied in"
    );
    let diagnostics = feed.log.diagnostics();
    let ghosts: Vec<_> = diagnostics.orphan_records().map(|(c, _)| c).collect();
    assert_eq!(ghosts, ["x", "y"]);
}

#[test]
fn e13_deletion_keeps_inconsistent_flag_and_fencing_data() {
    let mut feed = Feed::new();
    feed.put("connector-x", Some(CFG_S0));
    feed.put("task-x-1", Some(CFG_S0));
    feed.put("commit-x", Some(&commit(2)));
    feed.put("tasks-fencing-x", Some(r#"{"task-count":2}"#));
    feed.put("connector-x", None);
    let snap = feed.snap();
    assert!(snap.is_inconsistent("x"));
    assert_eq!(snap.task_count_record("x"), Some(2));
    assert!(feed.log.diagnostics().inconsistency("x").is_some());
    // A re-created connector starts out flagged.
    feed.put("connector-x", Some(CFG_S0));
    assert!(feed.snap().is_inconsistent("x"));
    assert!(feed.snap().tasks("x").is_empty());
}

#[test]
fn e15_config_update_does_not_touch_tasks() {
    let mut feed = Feed::started();
    two_task_connector(&mut feed, "x");
    feed.put("connector-x", Some(CFG_S1));
    assert_eq!(feed.events(), vec![updated("x")]);
    let snap = feed.snap();
    assert_eq!(task_ids(&snap, "x"), [0, 1]);
    assert_eq!(snap.connector_config("x"), Some(&props("s1")));
    assert_eq!(snap.applied_connector_config("x"), Some(&props("s0")));
}

// ---- §3.5 target states ---------------------------------------------------------------------

#[test]
fn e5_same_target_state_is_suppressed() {
    let mut feed = Feed::started();
    feed.put("connector-x", Some(CFG_S0));
    feed.events();
    feed.put("target-state-x", Some(TS_STARTED));
    assert!(feed.events().is_empty());
    feed.put("target-state-x", Some(TS_PAUSED));
    assert_eq!(
        feed.events(),
        vec![ConfigEvent::TargetStateChanged {
            connector: "x".into(),
            state: TargetState::Paused
        }]
    );
    feed.put("target-state-x", Some(TS_PAUSED));
    assert!(feed.events().is_empty());
}

#[test]
fn e6_target_state_parsing() {
    let mut feed = Feed::new();
    feed.put("connector-x", Some(CFG_S0));
    assert_eq!(
        feed.put(
            "target-state-x",
            Some(r#"{"state":"PAUSED","state.v2":"FOO"}"#)
        ),
        RecordOutcome::Skipped(ConfigSkip::InvalidTargetState)
    );
    assert_eq!(feed.snap().target_state("x"), Some(TargetState::Started));
    feed.put("target-state-x", Some(r#"{"state":"PAUSED","state.v2":5}"#));
    assert_eq!(feed.snap().target_state("x"), Some(TargetState::Paused));
    feed.put(
        "target-state-x",
        Some(r#"{"state":"STOPPED","state.v2":null}"#),
    );
    assert_eq!(feed.snap().target_state("x"), Some(TargetState::Stopped));
    assert_eq!(
        feed.put("target-state-x", Some(r#"{"state":"paused"}"#)),
        RecordOutcome::Skipped(ConfigSkip::InvalidTargetState)
    );
    assert_eq!(
        feed.put("target-state-x", Some(r#"{"state":1}"#)),
        RecordOutcome::Skipped(ConfigSkip::WrongFormat {
            expected: "a string member `state`"
        })
    );
    feed.put("target-state-x", Some(TS_STOPPED));
    assert_eq!(feed.snap().target_state("x"), Some(TargetState::Stopped));
}

#[test]
fn e7_target_state_tombstone_resets_silently() {
    let mut feed = Feed::started();
    feed.put("connector-x", Some(CFG_S0));
    feed.put("target-state-x", Some(TS_PAUSED));
    feed.events();
    feed.put("target-state-x", None);
    assert!(feed.events().is_empty());
    assert_eq!(feed.snap().target_state("x"), Some(TargetState::Started));
    // Without a config the state is simply removed.
    feed.put("target-state-gone", Some(TS_PAUSED));
    feed.put("target-state-gone", None);
    assert_eq!(feed.snap().target_state("gone"), None);
}

#[test]
fn e8_target_state_inherited_on_re_creation() {
    let mut feed = Feed::started();
    feed.put("target-state-y", Some(TS_STOPPED));
    assert!(feed.events().is_empty(), "no callback without a config");
    assert_eq!(
        feed.snap()
            .target_states_without_connector()
            .collect::<Vec<_>>(),
        [("y", TargetState::Stopped)]
    );
    feed.put("connector-y", Some(CFG_S0));
    assert_eq!(feed.events(), vec![updated("y")]);
    assert_eq!(feed.snap().target_state("y"), Some(TargetState::Stopped));
    assert_eq!(feed.snap().target_states_without_connector().count(), 0);
}

// ---- §3.6 - §3.9 ----------------------------------------------------------------------------

#[test]
fn e10_restart_requests() {
    let mut feed = Feed::new();
    feed.put(
        "restart-connector-z",
        Some(r#"{"include-tasks":true,"only-failed":true}"#),
    );
    assert!(
        feed.events().is_empty(),
        "never replayed from before start-up"
    );
    feed.log.mark_caught_up();
    feed.put("restart-connector-z", Some("{}"));
    feed.put(
        "restart-connector-z",
        Some(r#"{"include-tasks":true,"only-failed":"true"}"#),
    );
    assert_eq!(
        feed.put("restart-connector-z", None),
        RecordOutcome::Skipped(ConfigSkip::WrongFormat {
            expected: "a JSON object"
        })
    );
    let restart = |include_tasks| ConfigEvent::RestartRequested {
        connector: "z".into(),
        only_failed: false,
        include_tasks,
    };
    assert_eq!(feed.events(), vec![restart(false), restart(true)]);
}

#[test]
fn task_count_records_clear_pending_fencing() {
    let mut feed = Feed::new();
    two_task_connector(&mut feed, "x");
    assert!(feed.snap().pending_fencing("x"));
    feed.put("tasks-fencing-x", Some(r#"{"task-count":2}"#));
    assert!(!feed.snap().pending_fencing("x"));
    assert_eq!(feed.snap().task_count_record("x"), Some(2));
    assert_eq!(
        feed.put("tasks-fencing-x", Some(r#"{"task-count":"2"}"#)),
        RecordOutcome::Skipped(ConfigSkip::InvalidTaskCount)
    );
    assert_eq!(
        feed.put("tasks-fencing-x", None),
        RecordOutcome::Skipped(ConfigSkip::WrongFormat {
            expected: "a JSON object"
        })
    );
    // No existence check.
    feed.put("tasks-fencing-nobody", Some(r#"{"task-count":4294967297}"#));
    assert_eq!(feed.snap().task_count_record("nobody"), Some(1));
}

#[test]
fn e9_session_keys() {
    let mut feed = Feed::new();
    let valid = r#"{"key":"AQID","algorithm":"HmacSHA256","creation-timestamp":1}"#;
    feed.put("session-key", Some(valid));
    assert!(feed.events().is_empty(), "stored silently during start-up");
    let key = feed.snap().session_key().cloned().unwrap();
    assert_eq!(key.key, [1, 2, 3]);
    assert_eq!(key.encoded, "AQID");
    assert_eq!(key.algorithm, "HmacSHA256");
    assert_eq!(key.creation_timestamp, 1);
    // Unpadded Base64 is accepted; the contract shows the key as Java holds it (re-encoded,
    // padding restored), not as read (found by the Java oracle).
    feed.put(
        "session-key",
        Some(r#"{"key":"AQI","algorithm":"HmacSHA256","creation-timestamp":1}"#),
    );
    assert_eq!(feed.snap().session_key().unwrap().encoded, "AQI");
    let json = serde_json::to_value(ConfigSnapshotJson(&feed.snap())).unwrap();
    assert_eq!(json["session_key"]["key"], "AQI=");
    feed.put("session-key", Some(valid));
    feed.log.mark_caught_up();
    let rejected = [
        (
            r#"{"key":"AQID","algorithm":"HmacSHA256","creation-timestamp":1.5}"#,
            false,
        ),
        (
            r#"{"key":"AQID","algorithm":"HmacSHA256","creation-timestamp":"1"}"#,
            false,
        ),
        (
            r#"{"key":5,"algorithm":"HmacSHA256","creation-timestamp":2}"#,
            false,
        ),
        (
            r#"{"key":"AQID","algorithm":7,"creation-timestamp":2}"#,
            false,
        ),
        (
            r#"{"key":"AQ-D","algorithm":"HmacSHA256","creation-timestamp":2}"#,
            true,
        ),
        (
            r#"{"key":"","algorithm":"HmacSHA256","creation-timestamp":2}"#,
            true,
        ),
    ];
    for (value, throws) in rejected {
        let outcome = feed.put("session-key", Some(value));
        assert!(!outcome.is_applied(), "{value}");
        assert_eq!(outcome_throws(&outcome), throws, "{value}");
    }
    assert_eq!(
        feed.put("session-key", None),
        RecordOutcome::Skipped(ConfigSkip::UnexpectedTombstone)
    );
    assert_eq!(feed.snap().session_key(), Some(&key), "the key is kept");
    assert!(feed.events().is_empty());
    let newer = r#"{"key":"BAUG","algorithm":"HmacSHA512","creation-timestamp":0}"#;
    feed.put("session-key", Some(newer));
    let events = feed.events();
    assert!(
        matches!(&events[..], [ConfigEvent::SessionKeyUpdated { key }] if key.key == [4, 5, 6])
    );
    assert_eq!(
        feed.snap().session_key().unwrap().creation_timestamp,
        0,
        "no monotonicity check"
    );
}

#[test]
fn e14_logger_levels() {
    let mut feed = Feed::new();
    feed.put("logger-cluster-org.apache", Some(r#"{"level":"DEBUG"}"#));
    assert!(feed.events().is_empty());
    feed.log.mark_caught_up();
    feed.put("logger-cluster-org.apache", Some(r#"{"level":"INFO"}"#));
    feed.put("logger-cluster-org.apache", Some(r#"{"level":3}"#));
    feed.put("logger-cluster-org.apache", None);
    assert_eq!(
        feed.events(),
        vec![ConfigEvent::LoggerLevelUpdated {
            namespace: "org.apache".into(),
            level: "INFO".into()
        }]
    );
}

#[test]
fn e1_e2_unknown_and_unparseable_keys() {
    let mut feed = Feed::started();
    feed.put("garbage-key-1", None);
    feed.put("task-foo", Some(CFG_S0));
    assert!(feed.events().is_empty());
    assert_eq!(feed.snap().offset(), 2);
    feed.put("task-a--b-0", Some(CFG_S0));
    feed.put("connector-a--b", Some(CFG_S1));
    feed.put("commit-a--b", Some(&commit(1)));
    assert_eq!(task_ids(&feed.snap(), "a--b"), [0]);
    let diagnostics = feed.log.diagnostics();
    let skipped = diagnostics.skipped();
    assert_eq!(skipped.get(ConfigSkipKind::UnknownKey), 1);
    assert_eq!(skipped.get(ConfigSkipKind::UnparseableTaskKey), 1);
}

#[test]
fn e4_empty_value_deletes() {
    let mut feed = Feed::started();
    feed.put("connector-x", Some(CFG_S0));
    feed.events();
    feed.put("connector-x", Some(""));
    assert_eq!(
        feed.events(),
        vec![ConfigEvent::ConnectorConfigRemoved {
            connector: "x".into()
        }]
    );
}

// ---- §4 events only after catch-up ----------------------------------------------------------

#[test]
fn no_events_before_catch_up() {
    let mut feed = Feed::new();
    feed.put("connector-x", Some(CFG_S0));
    feed.put("task-x-0", Some(CFG_S0));
    feed.put("commit-x", Some(&commit(1)));
    feed.put("target-state-x", Some(TS_PAUSED));
    feed.put("connector-x", None);
    assert!(feed.events().is_empty());
    assert!(!feed.log.is_caught_up());
}

// ---- §5 snapshots ---------------------------------------------------------------------------

#[test]
fn snapshots_are_immutable() {
    let mut feed = Feed::new();
    two_task_connector(&mut feed, "x");
    let before = feed.snap();
    let copy = before.clone();
    feed.put("connector-x", None);
    assert!(before.contains("x"));
    assert_eq!(before, copy);
    assert_ne!(before, feed.snap());
}

// ---- §3 scenarios of spec/compaction.md -----------------------------------------------------

#[test]
fn compaction_scenario_a_shrink_then_compaction() {
    let mut feed = Feed::new();
    feed.put("connector-foo", Some(CFG_S0));
    feed.put("task-foo-1", Some(CFG_S1));
    feed.put("commit-foo", Some(&commit(2)));
    feed.put("task-foo-0", Some(CFG_S2));
    feed.put("commit-foo", Some(&commit(1)));
    let snap = feed.snap();
    assert!(!snap.is_inconsistent("foo"));
    assert_eq!(task_ids(&snap, "foo"), [0]);
    assert_eq!(snap.task_config(&TaskId::new("foo", 0)), Some(&props("s2")));
}

#[test]
fn compaction_scenario_b_crash_then_compaction_then_recovery() {
    let mut feed = Feed::started();
    feed.put("connector-foo", Some(CFG_S0));
    feed.put("task-foo-1", Some(CFG_S0));
    feed.put("commit-foo", Some(&commit(2)));
    feed.put("task-foo-0", Some(CFG_S1));
    let snap = feed.snap();
    assert!(snap.is_inconsistent("foo"));
    assert!(snap.tasks("foo").is_empty());
    feed.events();
    feed.put("task-foo-0", Some(CFG_S2));
    feed.put("task-foo-1", Some(CFG_S2));
    feed.put("commit-foo", Some(&commit(2)));
    assert_eq!(feed.events(), vec![tasks_updated("foo", &[0, 1])]);
    let snap = feed.snap();
    assert!(!snap.is_inconsistent("foo"));
    assert_eq!(snap.task_config(&TaskId::new("foo", 1)), Some(&props("s2")));
}

// ---- checkpoints ----------------------------------------------------------------------------

#[test]
fn checkpoint_round_trip_keeps_buffered_task_configs() {
    let mut feed = Feed::started();
    two_task_connector(&mut feed, "x");
    feed.put("task-x-0", Some(CFG_S1));
    feed.put("task-x-1", Some(CFG_S1));
    feed.put(
        "session-key",
        Some(r#"{"key":"AQID","algorithm":"A","creation-timestamp":1}"#),
    );
    feed.events();
    let bytes = feed.log.checkpoint();
    let mut restored = Feed {
        log: ConfigLog::restore(&bytes).unwrap(),
    };
    assert!(!restored.log.is_caught_up());
    assert_eq!(restored.snap(), feed.snap());
    assert_eq!(restored.log.diagnostics(), feed.log.diagnostics());
    for f in [&mut feed, &mut restored] {
        f.put("commit-x", Some(&commit(2)));
    }
    assert_eq!(restored.snap(), feed.snap());
    assert_eq!(
        restored.snap().task_config(&TaskId::new("x", 1)),
        Some(&props("s1"))
    );
}

#[test]
fn checkpoints_keep_applied_configs_whether_current_or_older() {
    let mut feed = Feed::started();
    two_task_connector(&mut feed, "old");
    two_task_connector(&mut feed, "same");
    // `old`'s config changes after its commit: its applied config is the older one.
    feed.put("connector-old", Some(CFG_S2));
    feed.events();
    let bytes = feed.log.checkpoint();
    let restored = ConfigLog::restore(&bytes).unwrap().snapshot();
    assert_eq!(restored, feed.snap());
    assert_eq!(restored.connector_config("old"), Some(&props("s2")));
    assert_eq!(restored.applied_connector_config("old"), Some(&props("s0")));
    assert_eq!(
        restored.applied_connector_config("same"),
        restored.connector_config("same")
    );
}

#[test]
fn a_restored_state_shares_configurations_and_names_as_a_replayed_one() {
    let mut feed = Feed::started();
    two_task_connector(&mut feed, "a");
    two_task_connector(&mut feed, "b");
    feed.events();
    let restored = ConfigLog::restore(&feed.log.checkpoint())
        .unwrap()
        .snapshot();
    assert_eq!(restored, feed.snap());
    for snap in [feed.snap(), restored] {
        let task = |c: &str, t: i32| snap.task_config(&TaskId::new(c, t)).unwrap().clone();
        // The task configs of both connectors list the same names in the same order.
        assert!(task("a", 0).shares_names_with(&task("a", 1)));
        assert!(task("a", 0).shares_names_with(&task("b", 1)));
        let current = snap.connector_config("a").unwrap();
        let applied = snap.applied_connector_config("a").unwrap();
        assert!(current.is_same_allocation(applied));
    }
}

#[test]
fn corrupt_checkpoints_are_refused() {
    use crate::checkpoint::CheckpointError;
    let mut feed = Feed::new();
    two_task_connector(&mut feed, "x");
    let bytes = feed.log.checkpoint();
    assert!(matches!(
        ConfigLog::restore(&bytes[..10]),
        Err(CheckpointError::Truncated { len: 10 })
    ));
    assert!(matches!(
        ConfigLog::restore(&bytes[..bytes.len() - 1]),
        Err(CheckpointError::LengthMismatch { .. })
    ));
    let mut flipped = bytes.clone();
    let last = flipped.len() - 1;
    flipped[last] ^= 0x40;
    assert_eq!(
        ConfigLog::restore(&flipped).unwrap_err(),
        CheckpointError::ChecksumMismatch
    );
    let mut version = bytes.clone();
    version[4] = 99;
    assert!(matches!(
        ConfigLog::restore(&version),
        Err(CheckpointError::UnsupportedVersion {
            found: 99,
            supported: crate::checkpoint::FORMAT_VERSION
        })
    ));
    let mut magic = bytes.clone();
    magic[0] = b'X';
    assert_eq!(
        ConfigLog::restore(&magic).unwrap_err(),
        CheckpointError::NotACheckpoint
    );
    let mut kind = bytes;
    kind[6] = 7;
    assert_eq!(
        ConfigLog::restore(&kind).unwrap_err(),
        CheckpointError::WrongTopic { found: 7 }
    );
    assert!(ConfigLog::restore(b"").is_err());
    let msg = CheckpointError::ChecksumMismatch.to_string();
    assert!(msg.contains("corrupt"));
}

#[test]
fn checkpoint_freshness_against_tombstone_retention() {
    use crate::checkpoint::{check_fresh, taken_at, CheckpointError};
    let mut feed = Feed::new();
    two_task_connector(&mut feed, "x");
    let stamped = feed.log.checkpoint_at(1_000);
    assert_eq!(taken_at(&stamped), Ok(Some(1_000)));
    assert_eq!(check_fresh(&stamped, 5_000, 86_400_000), Ok(()));
    assert_eq!(
        check_fresh(&stamped, 86_401_000, 86_400_000),
        Err(CheckpointError::TooOld {
            taken_at_ms: 1_000,
            now_ms: 86_401_000,
            delete_retention_ms: 86_400_000
        })
    );
    let unstamped = feed.log.checkpoint();
    assert_eq!(
        check_fresh(&unstamped, 0, 1),
        Err(CheckpointError::UnknownAge)
    );
    // The time is covered by the checksum.
    let mut forged = stamped.clone();
    forged[7] ^= 1;
    assert_eq!(
        ConfigLog::restore(&forged).unwrap_err(),
        CheckpointError::ChecksumMismatch
    );
    assert_eq!(
        ConfigLog::restore(&stamped).unwrap().snapshot(),
        feed.snap()
    );
    assert!(check_fresh(b"short", 0, 1).is_err());
}

/// A task list longer than `MAX_LISTED_TASKS`: `tasks(c)` gives every id lazily, the JSON
/// contract lists the first `MAX_LISTED_TASKS` and the full count under `tasks_truncated`
/// (absent when nothing is cut).
#[test]
fn long_task_lists_are_cut_in_the_contract_with_their_count() {
    let mut feed = Feed::new();
    feed.put("connector-a", Some(CFG_S0));
    feed.put("connector-b", Some(CFG_S0));
    let count = MAX_LISTED_TASKS + 1;
    for task in 0..count {
        feed.put(&alloc::format!("task-a-{task}"), Some(CFG_S1));
    }
    feed.put("commit-a", Some(&commit(count.into())));
    feed.put("task-b-0", Some(CFG_S1));
    feed.put("commit-b", Some(&commit(1)));
    let snap = feed.snap();
    let mut ids = snap.tasks("a");
    assert_eq!(ids.len(), count as usize);
    assert_eq!(ids.nth(10_000).map(|id| id.task), Some(10_000));
    assert!(ids.is_empty());
    let json = serde_json::to_value(ConfigSnapshotJson(&snap)).unwrap();
    assert_eq!(
        json["tasks"]["a"].as_array().unwrap().len(),
        MAX_LISTED_TASKS as usize
    );
    assert_eq!(json["tasks"]["b"], serde_json::json!([0]));
    assert_eq!(json["tasks_truncated"], serde_json::json!({"a": count}));

    feed.put("task-a-0", Some(CFG_S2));
    feed.put("task-a-1", Some(CFG_S2));
    feed.put("commit-a", Some(&commit(2)));
    let json = serde_json::to_value(ConfigSnapshotJson(&feed.snap())).unwrap();
    assert_eq!(json["tasks"]["a"], serde_json::json!([0, 1]));
    assert!(json.get("tasks_truncated").is_none());
}

/// A forged count lists nothing for an inconsistent connector and is never materialized.
#[test]
fn a_forged_task_count_is_not_materialized() {
    let mut feed = Feed::new();
    feed.put("connector-a", Some(CFG_S0));
    feed.put("commit-a", Some(&commit(i32::MAX.into())));
    let snap = feed.snap();
    assert_eq!(snap.task_count("a"), i32::MAX);
    assert!(snap.tasks("a").is_empty());
    assert_eq!(snap.tasks("a").len(), 0);
}
