//! Unit tests of the status machine: every rule of spec §1-§3 and the quirks of §6 items 3-11.

use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;

/// Compact JSON of a view, for byte-exact assertions.
fn to_json<T: serde::Serialize + ?Sized>(value: &T) -> alloc::string::String {
    serde_json::to_string(value).unwrap()
}
use super::write::{
    connector_key, task_key, topic_status_record, topic_status_value, topic_tombstone,
};
use super::*;
use crate::{ProducerRecord, RecordError};

const RUNNING_1: &str =
    r#"{"state":"RUNNING","trace":null,"worker_id":"localhost:8083","generation":1}"#;

/// A status value with `trace: null`.
fn status_json(state: &str, worker: &str, generation: i64) -> String {
    alloc::format!(
        r#"{{"state":"{state}","trace":null,"worker_id":"{worker}","generation":{generation}}}"#
    )
}

fn topic_json(name: &str, connector: &str, task: i64, ts: i64) -> String {
    alloc::format!(
        r#"{{"topic":{{"name":"{name}","connector":"{connector}","task":{task},"discoverTimestamp":{ts}}}}}"#
    )
}

fn status(state: StatusState, worker: &str, generation: i32) -> Status {
    Status {
        state,
        trace: None,
        worker_id: Some(worker.into()),
        generation,
        version: None,
    }
}

/// A small driver: records get consecutive offsets on their partition (0 unless told).
struct Feed {
    log: StatusLog,
}

impl Feed {
    fn new() -> Self {
        Self {
            log: StatusLog::new(),
        }
    }

    fn started() -> Self {
        let mut feed = Self::new();
        feed.log.mark_caught_up();
        feed
    }

    fn put(&mut self, key: &str, value: Option<&str>) -> StatusOutcome {
        self.put_on(0, key, value)
    }

    fn put_on(&mut self, partition: i32, key: &str, value: Option<&str>) -> StatusOutcome {
        self.put_bytes(partition, Some(key.as_bytes()), value.map(str::as_bytes))
    }

    fn put_bytes(
        &mut self,
        partition: i32,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
    ) -> StatusOutcome {
        let offset = self.log.next_fetch_offset(partition);
        self.log
            .handle_record(Record {
                key,
                value,
                offset,
                partition,
                timestamp: None,
            })
            .unwrap()
    }

    fn events(&mut self) -> Vec<StatusEvent> {
        core::iter::from_fn(|| self.log.poll_event()).collect()
    }

    fn snap(&self) -> StatusSnapshot {
        self.log.snapshot()
    }
}

fn skipped(outcome: StatusOutcome) -> StatusSkip {
    match outcome {
        RecordOutcome::Skipped(skip) => skip,
        other => panic!("expected a skip, got {other:?}"),
    }
}

fn unparsable(outcome: StatusOutcome) -> bool {
    matches!(
        outcome,
        RecordOutcome::Skipped(StatusSkip::UnparsableStatus { .. })
    )
}

fn value_str(record: &ProducerRecord) -> &str {
    core::str::from_utf8(record.value.as_deref().expect("not a tombstone")).unwrap()
}

fn key_str(record: &ProducerRecord) -> &str {
    core::str::from_utf8(&record.key).unwrap()
}

// ---- §1 keys --------------------------------------------------------------------------------

#[test]
fn connector_keys() {
    let mut feed = Feed::new();
    assert!(feed
        .put("status-connector-my-jdbc-source", Some(RUNNING_1))
        .is_applied());
    assert!(feed
        .put("status-connector-a:b-é", Some(RUNNING_1))
        .is_applied());
    let snap = feed.snap();
    assert!(snap.connector("my-jdbc-source").is_some());
    assert!(snap.connector("a:b-é").is_some());
    // The empty-name check comes before the value, so it applies to tombstones and bad JSON too.
    for value in [Some(RUNNING_1), None, Some("not json")] {
        assert_eq!(
            skipped(feed.put("status-connector-", value)),
            StatusSkip::InvalidConnectorKey
        );
    }
    assert!(feed.snap().connector("").is_none());
}

#[test]
fn task_key_table_of_spec_1_3() {
    let cases: &[(&str, Option<(&str, i32)>)] = &[
        ("status-task-", None),
        ("status-task-conn-0", Some(("conn", 0))),
        ("status-task-a-b-c-12", Some(("a-b-c", 12))),
        ("status-task-conn-0-", Some(("conn", 0))),
        ("status-task-conn-0--", Some(("conn", 0))),
        ("status-task-conn--1", Some(("conn-", 1))),
        ("status-task--0", Some(("", 0))),
        ("status-task-conn-+3", Some(("conn", 3))),
        ("status-task-foo-source-#", None),
        // Further Integer.parseInt cases.
        ("status-task-conn-\u{663}", Some(("conn", 3))),
        ("status-task-conn-007", Some(("conn", 7))),
        ("status-task-conn-2147483648", None),
        ("status-task-conn", None),
        ("status-task-conn-", None),
        ("status-task-my-jdbc-source-0", Some(("my-jdbc-source", 0))),
    ];
    for &(key, expected) in cases {
        let mut feed = Feed::new();
        let outcome = feed.put(key, Some(RUNNING_1));
        match expected {
            None => assert_eq!(skipped(outcome), StatusSkip::InvalidTaskKey, "{key}"),
            Some((c, n)) => {
                assert!(outcome.is_applied(), "{key}");
                let snap = feed.snap();
                let all: Vec<(&str, i32)> = snap.all_tasks().map(|(c, n, _)| (c, n)).collect();
                assert_eq!(all, [(c, n)], "{key}");
            }
        }
    }
}

#[test]
fn task_key_is_checked_before_the_value() {
    let mut feed = Feed::new();
    for value in [None, Some("not json"), Some("{}")] {
        assert_eq!(
            skipped(feed.put("status-task-foo-source-#", value)),
            StatusSkip::InvalidTaskKey
        );
    }
}

#[test]
fn topic_key_examples_of_spec_1_4() {
    let valid: &[(&str, &str, &str)] = &[
        (
            "status-topic-orders:connector-my-jdbc-source",
            "orders",
            "my-jdbc-source",
        ),
        // The 11 characters after the colon are skipped unchecked.
        ("status-topic-foo:XXXXXXXXXXbar", "foo", "bar"),
        // Connector names may contain `:`; the first colon is the separator.
        ("status-topic-t:connector-a:b", "t", "a:b"),
        // Non-ASCII before the colon.
        ("status-topic-tö:connector-c", "tö", "c"),
        // UTF-16 arithmetic: `é` is one unit (two bytes), so 11 units end before `c`.
        ("status-topic-t:é123456789c", "t", "c"),
        // `😀` is two units (four bytes): `:`, 😀 and 8 digits are the 11 units.
        ("status-topic-t:😀123456789c", "t", "9c"),
        // The 11th unit is the high surrogate of 😀: Java keeps a lone low surrogate.
        ("status-topic-t:123456789😀x", "t", "\u{fffd}x"),
    ];
    for &(key, topic, connector) in valid {
        let mut feed = Feed::new();
        let outcome = feed.put(key, Some(&topic_json("n", "c", 0, 1)));
        assert!(outcome.is_applied(), "{key}: {outcome:?}");
        let snap = feed.snap();
        let all: Vec<(&str, &str)> = snap.all_topics().map(|(c, t, _)| (c, t)).collect();
        assert_eq!(all, [(connector, topic)], "{key}");
    }
    let invalid: &[(&str, &str)] = &[
        ("status-topic-", "no `:` after the topic"),
        ("status-topic-:connector-", "empty topic"),
        ("status-topic-foo-topic:", "key ends too early"),
        ("status-topic-foo-topic:connector-", "empty connector"),
        ("status-topic-foo:connector", "key ends too early"),
        ("status-topic-t:😀12345678", "empty connector"),
    ];
    for &(key, reason) in invalid {
        let mut feed = Feed::new();
        // Key checks come before the value: tombstones and bad JSON get the same answer.
        for value in [Some(topic_json("n", "c", 0, 1).as_str()), None, Some("{")] {
            assert_eq!(
                skipped(feed.put(key, value)),
                StatusSkip::InvalidTopicKey { reason },
                "{key}"
            );
        }
        assert_eq!(feed.snap().all_topics().count(), 0);
        assert_eq!(feed.snap().topic_connectors().count(), 0);
    }
}

#[test]
fn unknown_and_null_keys() {
    let mut feed = Feed::started();
    for key in [
        "",
        "status-",
        "status-tasks-x-0",
        "connector-a",
        "STATUS-connector-a",
    ] {
        assert_eq!(
            skipped(feed.put(key, Some(RUNNING_1))),
            StatusSkip::UnknownKey,
            "{key}"
        );
    }
    let outcome = feed.put_bytes(0, None, Some(RUNNING_1.as_bytes()));
    assert_eq!(skipped(outcome.clone()), StatusSkip::NullKey);
    assert!(skipped(outcome).java_throws());
    assert_eq!(feed.snap(), StatusSnapshot::default());
    assert!(feed.events().is_empty());
    let d = feed.log.diagnostics();
    assert_eq!(d.skipped().get(StatusSkipKind::UnknownKey), 5);
    assert_eq!(d.skipped().get(StatusSkipKind::NullKey), 1);
    assert_eq!(d.skipped().total(), 6);
}

#[test]
fn keys_decode_like_string_deserializer() {
    let mut feed = Feed::new();
    let outcome = feed.put_bytes(
        0,
        Some(b"status-connector-\xffx"),
        Some(RUNNING_1.as_bytes()),
    );
    assert!(outcome.is_applied());
    assert!(feed.snap().connector("\u{fffd}x").is_some());
}

// ---- §2.4 values ----------------------------------------------------------------------------

#[test]
fn status_values_parse_with_java_tolerance() {
    let ok: &[(&str, Status)] = &[
        (RUNNING_1, status(StatusState::Running, "localhost:8083", 1)),
        (
            r#"{"state":"FAILED","trace":"boom\n\tat X","worker_id":"w","generation":3}"#,
            Status {
                trace: Some("boom\n\tat X".into()),
                ..status(StatusState::Failed, "w", 3)
            },
        ),
        // trace absent; unknown members ignored.
        (
            r#"{"state":"PAUSED","worker_id":"w","generation":2,"extra":[1]}"#,
            status(StatusState::Paused, "w", 2),
        ),
        // worker_id absent or null: accepted as None.
        (
            r#"{"state":"RUNNING","generation":2}"#,
            Status {
                worker_id: None,
                ..status(StatusState::Running, "", 2)
            },
        ),
        (
            r#"{"state":"RUNNING","worker_id":null,"generation":2}"#,
            Status {
                worker_id: None,
                ..status(StatusState::Running, "", 2)
            },
        ),
        // Long.intValue(): 2^32 + 1 → 1; beyond 64 bits the JSON layer keeps the low 64 bits.
        (
            r#"{"state":"RUNNING","worker_id":"w","generation":4294967297}"#,
            status(StatusState::Running, "w", 1),
        ),
        (
            r#"{"state":"RUNNING","worker_id":"w","generation":12345678901234567890}"#,
            status(
                StatusState::Running,
                "w",
                -6_101_065_172_474_983_726_i64 as i32,
            ),
        ),
        // Leading zeros, duplicate members (last wins), trailing bytes ignored.
        (
            r#"{"state":"PAUSED","state":"STOPPED","worker_id":"w","generation":007} trailing"#,
            status(StatusState::Stopped, "w", 7),
        ),
        // DESTROYED and RESTARTING are accepted on read.
        (
            &status_json("DESTROYED", "w", 1),
            status(StatusState::Destroyed, "w", 1),
        ),
        (
            &status_json("RESTARTING", "w", 1),
            status(StatusState::Restarting, "w", 1),
        ),
        (
            &status_json("UNASSIGNED", "w", 1),
            status(StatusState::Unassigned, "w", 1),
        ),
        // version: read when a string or null (a non-string is unparsable, see below).
        (
            r#"{"state":"RUNNING","trace":null,"worker_id":"w","generation":1,"version":"3.9.0"}"#,
            Status {
                version: Some("3.9.0".into()),
                ..status(StatusState::Running, "w", 1)
            },
        ),
        (
            r#"{"state":"RUNNING","worker_id":"w","generation":1,"version":null}"#,
            status(StatusState::Running, "w", 1),
        ),
    ];
    for (value, expected) in ok {
        for key in ["status-connector-c", "status-task-c-0"] {
            let mut feed = Feed::new();
            assert!(feed.put(key, Some(value)).is_applied(), "{key} {value}");
            let snap = feed.snap();
            let got = if key.contains("task") {
                snap.task("c", 0)
            } else {
                snap.connector("c")
            };
            assert_eq!(got, Some(expected), "{key} {value}");
        }
    }
}

#[test]
fn unparsable_status_values_change_nothing() {
    let bad = [
        "",
        "  ",
        "null",
        "[]",
        "\"RUNNING\"",
        "5",
        r#"{"state":"running","worker_id":"w","generation":1}"#,
        r#"{"state":"FOO","worker_id":"w","generation":1}"#,
        r#"{"worker_id":"w","generation":1}"#,
        r#"{"state":null,"worker_id":"w","generation":1}"#,
        r#"{"state":1,"worker_id":"w","generation":1}"#,
        r#"{"state":"RUNNING","trace":5,"worker_id":"w","generation":1}"#,
        r#"{"state":"RUNNING","trace":{},"worker_id":"w","generation":1}"#,
        r#"{"state":"RUNNING","worker_id":8083,"generation":1}"#,
        r#"{"state":"RUNNING","worker_id":"w","generation":1.0}"#,
        r#"{"state":"RUNNING","worker_id":"w","generation":"1"}"#,
        r#"{"state":"RUNNING","worker_id":"w"}"#,
        r#"{"state":"RUNNING","worker_id":"w","generation":null}"#,
        // Kafka 4.4.0 casts `version` to String (found by the Java oracle; 3.9 ignores it).
        r#"{"state":"RUNNING","worker_id":"w","generation":1,"version":39}"#,
        r#"{"state":"RUNNING","worker_id":"w","generation":1,"version":{}}"#,
    ];
    for key in ["status-connector-c", "status-task-c-0"] {
        let mut feed = Feed::started();
        feed.put(key, Some(&status_json("PAUSED", "w", 9)));
        feed.events();
        let before = feed.snap();
        for value in bad {
            assert!(unparsable(feed.put(key, Some(value))), "{key} {value:?}");
        }
        assert_eq!(feed.snap(), before, "{key}: the cached value stays");
        assert!(feed.events().is_empty());
        assert_eq!(
            feed.log
                .diagnostics()
                .skipped()
                .get(StatusSkipKind::UnparsableStatus),
            bad.len() as u64
        );
    }
    // No entry is created either.
    let mut feed = Feed::new();
    assert!(unparsable(feed.put("status-connector-x", Some("{}"))));
    assert!(feed.log.known_connectors().is_empty());
}

#[test]
fn invalid_json_is_its_own_skip() {
    let mut feed = Feed::new();
    for key in [
        "status-connector-c",
        "status-task-c-0",
        "status-topic-t:connector-c",
    ] {
        for value in ["{", "nope", "{\"state\":}"] {
            assert!(
                matches!(
                    skipped(feed.put(key, Some(value))),
                    StatusSkip::InvalidJson(_)
                ),
                "{key} {value}"
            );
        }
    }
    assert_eq!(
        feed.log
            .diagnostics()
            .skipped()
            .get(StatusSkipKind::InvalidJson),
        9
    );
    assert_eq!(feed.snap(), StatusSnapshot::default());
}

#[test]
fn topic_values_parse_with_java_tolerance() {
    let mut feed = Feed::new();
    let key = "status-topic-foo-topic:connector-foo-source";
    let literal = r#"{"topic":{"name":"foo-topic","connector":"foo-source","task":0,"discoverTimestamp":1589972451234}}"#;
    assert!(feed.put(key, Some(literal)).is_applied());
    assert_eq!(
        feed.snap().topic("foo-source", "foo-topic"),
        Some(&TopicStatus::new(
            "foo-topic",
            "foo-source",
            0,
            1_589_972_451_234
        ))
    );
    // Extra members are ignored; `task` is truncated like Long.intValue().
    let wide = r#"{"topic":{"name":"t","connector":"c","task":4294967298,"discoverTimestamp":5,"x":1},"y":2}"#;
    assert!(feed.put(key, Some(wide)).is_applied());
    assert_eq!(
        feed.snap().topic("foo-source", "foo-topic"),
        Some(&TopicStatus::new("t", "c", 2, 5)),
        "indexed by the key, carrying the value's fields"
    );
    let bad = [
        "",
        "null",
        "[]",
        r#"{"name":"t","connector":"c","task":0,"discoverTimestamp":1}"#,
        r#"{"topic":null}"#,
        r#"{"topic":"t"}"#,
        r#"{"topic":{"connector":"c","task":0,"discoverTimestamp":1}}"#,
        r#"{"topic":{"name":null,"connector":"c","task":0,"discoverTimestamp":1}}"#,
        r#"{"topic":{"name":1,"connector":"c","task":0,"discoverTimestamp":1}}"#,
        r#"{"topic":{"name":"t","task":0,"discoverTimestamp":1}}"#,
        r#"{"topic":{"name":"t","connector":null,"task":0,"discoverTimestamp":1}}"#,
        r#"{"topic":{"name":"t","connector":"c","discoverTimestamp":1}}"#,
        r#"{"topic":{"name":"t","connector":"c","task":1.5,"discoverTimestamp":1}}"#,
        r#"{"topic":{"name":"t","connector":"c","task":"0","discoverTimestamp":1}}"#,
        r#"{"topic":{"name":"t","connector":"c","task":0}}"#,
        r#"{"topic":{"name":"t","connector":"c","task":0,"discoverTimestamp":1.0}}"#,
        r#"{"topic":{"name":"t","connector":"c","task":0,"discoverTimestamp":"1"}}"#,
    ];
    let before = feed.snap();
    for value in bad {
        assert!(
            matches!(
                skipped(feed.put(key, Some(value))),
                StatusSkip::UnparsableTopicStatus { .. }
            ),
            "{value}"
        );
    }
    assert_eq!(feed.snap(), before);
}

// ---- §3.2 read rules ------------------------------------------------------------------------

#[test]
fn connector_statuses_last_wins_without_staleness_check() {
    let mut feed = Feed::new();
    feed.put("status-connector-c", Some(&status_json("RUNNING", "w1", 5)));
    feed.put(
        "status-connector-c",
        Some(&status_json("UNASSIGNED", "w2", 1)),
    );
    assert_eq!(
        feed.snap().connector("c"),
        Some(&status(StatusState::Unassigned, "w2", 1))
    );
}

#[test]
fn stale_unassigned_task_statuses_are_ignored() {
    // (cached, incoming, applied?)
    let cases: &[(&str, &str, bool)] = &[
        // Filtered: incoming UNASSIGNED, cached RUNNING, cached generation >= incoming.
        (
            &status_json("RUNNING", "w1", 5),
            &status_json("UNASSIGNED", "w2", 5),
            false,
        ),
        (
            &status_json("RUNNING", "w1", 5),
            &status_json("UNASSIGNED", "w2", 4),
            false,
        ),
        // Worker ids are not compared: the same worker is filtered too.
        (
            &status_json("RUNNING", "w1", 5),
            &status_json("UNASSIGNED", "w1", 5),
            false,
        ),
        // A newer generation goes through.
        (
            &status_json("RUNNING", "w1", 5),
            &status_json("UNASSIGNED", "w2", 6),
            true,
        ),
        // Only RUNNING is protected.
        (
            &status_json("PAUSED", "w1", 5),
            &status_json("UNASSIGNED", "w2", 3),
            true,
        ),
        (
            &status_json("FAILED", "w1", 5),
            &status_json("UNASSIGNED", "w2", 3),
            true,
        ),
        // Only UNASSIGNED is filtered: a RUNNING with a lower generation from another worker
        // does replace (readTaskStateShouldIgnoreStaleStatusesFromOtherWorkers).
        (
            &status_json("RUNNING", "w1", 5),
            &status_json("RUNNING", "w2", 1),
            true,
        ),
        (
            &status_json("RUNNING", "w1", 5),
            &status_json("FAILED", "w2", 1),
            true,
        ),
    ];
    for (cached, incoming, applied) in cases {
        let mut feed = Feed::started();
        feed.put("status-task-c-0", Some(cached));
        feed.events();
        let outcome = feed.put("status-task-c-0", Some(incoming));
        let expected = values::status(if *applied { incoming } else { cached }.as_bytes()).unwrap();
        assert_eq!(
            feed.snap().task("c", 0),
            Some(&expected),
            "{cached} then {incoming}"
        );
        if *applied {
            assert!(outcome.is_applied());
            assert_eq!(feed.events().len(), 1);
        } else {
            assert_eq!(skipped(outcome), StatusSkip::StaleUnassigned);
            assert!(feed.events().is_empty());
        }
    }
    // With nothing cached, an UNASSIGNED is stored.
    let mut feed = Feed::new();
    assert!(feed
        .put("status-task-c-0", Some(&status_json("UNASSIGNED", "w", 0)))
        .is_applied());
    // Connectors are never filtered.
    feed.put("status-connector-c", Some(&status_json("RUNNING", "w1", 5)));
    assert!(feed
        .put(
            "status-connector-c",
            Some(&status_json("UNASSIGNED", "w2", 1))
        )
        .is_applied());
    assert_eq!(
        feed.log
            .diagnostics()
            .skipped()
            .get(StatusSkipKind::StaleUnassigned),
        0
    );
}

#[test]
fn topic_statuses_last_wins() {
    let mut feed = Feed::new();
    feed.put(
        "status-topic-t:connector-c",
        Some(&topic_json("t", "c", 0, 1)),
    );
    feed.put(
        "status-topic-t:connector-c",
        Some(&topic_json("t", "c", 3, 2)),
    );
    assert_eq!(
        feed.snap().topic("c", "t"),
        Some(&TopicStatus::new("t", "c", 3, 2))
    );
}

// ---- §3.5 tombstones ------------------------------------------------------------------------

fn populated() -> Feed {
    let mut feed = Feed::new();
    feed.put("status-connector-c", Some(RUNNING_1));
    feed.put("status-task-c-0", Some(RUNNING_1));
    feed.put("status-task-c-1", Some(RUNNING_1));
    feed.put("status-connector-d", Some(RUNNING_1));
    feed.put("status-task-d-0", Some(RUNNING_1));
    feed.put(
        "status-topic-t1:connector-c",
        Some(&topic_json("t1", "c", 0, 1)),
    );
    feed.put(
        "status-topic-t2:connector-c",
        Some(&topic_json("t2", "c", 1, 2)),
    );
    feed
}

#[test]
fn connector_tombstone_drops_connector_and_task_row_but_not_topics() {
    let mut feed = populated();
    feed.log.mark_caught_up();
    assert!(feed.put("status-connector-c", None).is_applied());
    let snap = feed.snap();
    assert!(snap.connector("c").is_none());
    assert_eq!(snap.tasks("c").count(), 0);
    assert!(!snap.0.tasks.contains_key("c"));
    assert_eq!(snap.topics("c").count(), 2, "topics are not touched");
    assert!(snap.connector("d").is_some());
    assert_eq!(snap.tasks("d").count(), 1);
    assert_eq!(
        feed.events(),
        [
            StatusEvent::TaskRemoved {
                id: TaskId::new("c", 0)
            },
            StatusEvent::TaskRemoved {
                id: TaskId::new("c", 1)
            },
            StatusEvent::ConnectorRemoved {
                connector: "c".into()
            },
        ]
    );
    // A tombstone for something never cached is applied as a no-op.
    assert!(feed.put("status-connector-zzz", None).is_applied());
    assert_eq!(feed.snap(), snap);
}

#[test]
fn task_tombstone_removes_the_cell_then_the_row() {
    let mut feed = populated();
    feed.put("status-task-c-0", None);
    let snap = feed.snap();
    assert!(snap.task("c", 0).is_none());
    assert!(snap.task("c", 1).is_some());
    feed.put("status-task-c-1", None);
    let snap = feed.snap();
    assert!(!snap.0.tasks.contains_key("c"), "the empty row is removed");
    assert!(snap.connector("c").is_some(), "the connector stays");
}

#[test]
fn topic_tombstone_leaves_the_inner_map() {
    let mut feed = populated();
    feed.put("status-topic-t1:connector-c", None);
    feed.put("status-topic-t2:connector-c", None);
    // Tombstones for unknown connectors do not create inner maps.
    feed.put("status-topic-t9:connector-nobody", None);
    let snap = feed.snap();
    assert_eq!(snap.topics("c").count(), 0);
    assert_eq!(snap.topic_connectors().collect::<Vec<_>>(), ["c"]);
    assert!(to_json(&StatusSnapshotJson(&snap)).ends_with(r#""topics":{"c":{}}}"#));
}

// ---- events ---------------------------------------------------------------------------------

#[test]
fn events_only_after_catch_up() {
    let mut feed = populated();
    assert!(feed.events().is_empty());
    feed.log.mark_caught_up();
    feed.log.mark_caught_up();
    assert!(feed.log.is_caught_up());
    feed.put("status-connector-c", Some(RUNNING_1));
    feed.put("status-task-c-0", Some(&status_json("FAILED", "w", 2)));
    feed.put("status-task-c-3", None);
    feed.put(
        "status-topic-t:connector-c",
        Some(&topic_json("t", "c", 0, 1)),
    );
    feed.put("status-topic-t:connector-c", None);
    feed.put("status-connector-c", Some("{}"));
    let running = Arc::new(status(StatusState::Running, "localhost:8083", 1));
    assert_eq!(
        feed.events(),
        [
            StatusEvent::ConnectorStatusChanged {
                connector: "c".into(),
                status: running,
            },
            StatusEvent::TaskStatusChanged {
                id: TaskId::new("c", 0),
                status: Arc::new(status(StatusState::Failed, "w", 2)),
            },
            StatusEvent::TaskRemoved {
                id: TaskId::new("c", 3)
            },
            StatusEvent::TopicActive {
                connector: "c".into(),
                topic: "t".into()
            },
            StatusEvent::TopicRemoved {
                connector: "c".into(),
                topic: "t".into()
            },
        ]
    );
}

#[test]
fn event_json_shapes() {
    let cases: Vec<(StatusEvent, &str)> = vec![
        (
            StatusEvent::ConnectorStatusChanged {
                connector: "c".into(),
                status: Arc::new(status(StatusState::Running, "w:8083", 1)),
            },
            r#"{"type":"connector_status_changed","connector":"c","status":{"state":"RUNNING","trace":null,"worker_id":"w:8083","generation":1}}"#,
        ),
        (
            StatusEvent::ConnectorRemoved {
                connector: "c".into(),
            },
            r#"{"type":"connector_removed","connector":"c"}"#,
        ),
        (
            StatusEvent::TaskStatusChanged {
                id: TaskId::new("c", 2),
                status: Arc::new(Status {
                    trace: Some("x".into()),
                    worker_id: None,
                    version: Some("1.0".into()),
                    ..status(StatusState::Failed, "", 3)
                }),
            },
            r#"{"type":"task_status_changed","connector":"c","task":2,"status":{"state":"FAILED","trace":"x","worker_id":null,"generation":3,"version":"1.0"}}"#,
        ),
        (
            StatusEvent::TaskRemoved {
                id: TaskId::new("c", -1),
            },
            r#"{"type":"task_removed","connector":"c","task":-1}"#,
        ),
        (
            StatusEvent::TopicActive {
                connector: "c".into(),
                topic: "t".into(),
            },
            r#"{"type":"topic_active","connector":"c","topic":"t"}"#,
        ),
        (
            StatusEvent::TopicRemoved {
                connector: "c".into(),
                topic: "t".into(),
            },
            r#"{"type":"topic_removed","connector":"c","topic":"t"}"#,
        ),
    ];
    for (event, json) in cases {
        assert_eq!(to_json(&StatusEventJson(&event)), json);
    }
}

// ---- snapshot -------------------------------------------------------------------------------

#[test]
fn snapshot_accessors_and_json() {
    let mut feed = Feed::new();
    feed.put(
        "status-connector-c1",
        Some(&status_json("RUNNING", "w:8083", 1)),
    );
    feed.put(
        "status-task-c1-10",
        Some(&status_json("RUNNING", "w:8083", 1)),
    );
    feed.put(
        "status-task-c1-2",
        Some(r#"{"state":"FAILED","trace":"t\u001f","generation":1,"version":"v"}"#),
    );
    feed.put("status-task-orphan-0", Some(&status_json("PAUSED", "w", 4)));
    feed.put(
        "status-topic-orders:connector-c1",
        Some(&topic_json("orders", "c1", 0, 1_589_972_451_234)),
    );
    let snap = feed.snap();
    assert_eq!(
        snap.connectors().map(|(c, _)| c).collect::<Vec<_>>(),
        ["c1"]
    );
    assert_eq!(
        snap.tasks("c1").map(|(n, _)| n).collect::<Vec<_>>(),
        [2, 10]
    );
    assert_eq!(snap.tasks("nobody").count(), 0);
    assert_eq!(
        snap.all_tasks().map(|(c, n, _)| (c, n)).collect::<Vec<_>>(),
        [("c1", 2), ("c1", 10), ("orphan", 0)]
    );
    assert_eq!(
        snap.task("c1", 2).unwrap().trace.as_deref(),
        Some("t\u{1f}")
    );
    assert_eq!(
        snap.topics("c1").map(|(t, _)| t).collect::<Vec<_>>(),
        ["orders"]
    );
    assert!(snap.topic("c1", "nope").is_none());
    assert!(snap.topic("nobody", "orders").is_none());
    assert_eq!(
        to_json(&StatusSnapshotJson(&snap)),
        concat!(
            r#"{"connectors":{"c1":{"state":"RUNNING","trace":null,"worker_id":"w:8083","generation":1}},"#,
            r#""tasks":{"c1":{"10":{"state":"RUNNING","trace":null,"worker_id":"w:8083","generation":1},"#,
            r#""2":{"state":"FAILED","trace":"t\u001f","worker_id":null,"generation":1,"version":"v"}},"#,
            r#""orphan":{"0":{"state":"PAUSED","trace":null,"worker_id":"w","generation":4}}},"#,
            r#""topics":{"c1":{"orders":{"name":"orders","connector":"c1","task":0,"discover_timestamp":1589972451234}}}}"#
        )
    );
    assert_eq!(
        to_json(&StatusSnapshotJson(&StatusSnapshot::default())),
        r#"{"connectors":{},"tasks":{},"topics":{}}"#
    );
}

#[test]
fn snapshots_are_immutable() {
    let mut feed = populated();
    let before = feed.snap();
    let copy = before.clone();
    feed.put("status-connector-c", None);
    feed.put("status-task-d-0", Some(&status_json("FAILED", "w", 9)));
    feed.put("status-topic-t1:connector-c", None);
    assert_eq!(before, copy);
    assert!(before.connector("c").is_some());
    assert_eq!(before.task("d", 0).unwrap().state, StatusState::Running);
    assert!(before.topic("c", "t1").is_some());
    assert_ne!(feed.snap(), before);
}

// ---- positions and partitions ---------------------------------------------------------------

#[test]
fn partitions_interleave_and_duplicates_are_per_partition() {
    let mut log = StatusLog::new();
    let rec = |key: &'static str, value: &'static str, offset: i64, partition: i32| Record {
        key: Some(key.as_bytes()),
        value: Some(value.as_bytes()),
        offset,
        partition,
        timestamp: None,
    };
    let paused = r#"{"state":"PAUSED","trace":null,"worker_id":"w","generation":2}"#;
    assert!(log
        .handle_record(rec("status-connector-a", RUNNING_1, 5, 2))
        .unwrap()
        .is_applied());
    assert!(log
        .handle_record(rec("status-task-a-0", RUNNING_1, 0, 0))
        .unwrap()
        .is_applied());
    // A lower offset on another partition is fresh.
    assert!(log
        .handle_record(rec("status-connector-b", RUNNING_1, 3, 1))
        .unwrap()
        .is_applied());
    assert!(log
        .handle_record(rec("status-connector-a", paused, 6, 2))
        .unwrap()
        .is_applied());
    // Redeliveries on partition 2 are dropped without being applied.
    assert_eq!(
        log.handle_record(rec("status-connector-a", RUNNING_1, 5, 2))
            .unwrap(),
        RecordOutcome::Skipped(StatusSkip::Duplicate { next_expected: 7 })
    );
    assert_eq!(
        log.snapshot().connector("a").unwrap().state,
        StatusState::Paused
    );
    // Gaps are normal.
    assert!(log
        .handle_record(rec("status-task-a-0", paused, 40, 0))
        .unwrap()
        .is_applied());
    assert_eq!(log.next_fetch_offset(0), 41);
    assert_eq!(log.next_fetch_offset(1), 4);
    assert_eq!(log.next_fetch_offset(2), 7);
    assert_eq!(log.next_fetch_offset(3), 0);
    assert_eq!(
        log.diagnostics().skipped().get(StatusSkipKind::Duplicate),
        1
    );
    // Caller errors change nothing.
    let before = log.snapshot();
    assert_eq!(
        log.handle_record(rec("status-connector-z", RUNNING_1, -1, 0)),
        Err(RecordError::NegativeOffset { offset: -1 })
    );
    assert_eq!(
        log.handle_record(rec("status-connector-z", RUNNING_1, 0, -2)),
        Err(RecordError::NegativePartition { partition: -2 })
    );
    assert_eq!(log.snapshot(), before);
    assert_eq!(log.diagnostics().skipped().total(), 1);
}

// ---- §2.1 / §2.2 write bytes ----------------------------------------------------------------

#[test]
fn status_values_match_java_bytes() {
    // Kafka 4.4.0 always writes `version` (null without one), as the Java oracle shows.
    let cases: Vec<(StatusUpdate, &str)> = vec![
        (
            StatusUpdate::for_connector("c", StatusState::Running, "localhost:8083", 1),
            r#"{"state":"RUNNING","trace":null,"worker_id":"localhost:8083","generation":1,"version":null}"#,
        ),
        (
            StatusUpdate::for_task("c", 0, StatusState::Unassigned, "192.168.1.10:8083", 7),
            r#"{"state":"UNASSIGNED","trace":null,"worker_id":"192.168.1.10:8083","generation":7,"version":null}"#,
        ),
        (
            StatusUpdate::for_task("c", 0, StatusState::Failed, "w:8083", 3).with_trace(
                "org.apache.kafka.connect.errors.ConnectException: boom\n\tat X.y(X.java:1)\n",
            ),
            r#"{"state":"FAILED","trace":"org.apache.kafka.connect.errors.ConnectException: boom\n\tat X.y(X.java:1)\n","worker_id":"w:8083","generation":3,"version":null}"#,
        ),
        // Jackson escaping: uppercase \u00XX, `/` raw, quotes and backslashes escaped.
        (
            StatusUpdate::for_connector("c", StatusState::Stopped, "h/\"x\"\\", -2)
                .with_trace("\u{1f}\u{7f}é"),
            "{\"state\":\"STOPPED\",\"trace\":\"\\u001F\u{7f}é\",\"worker_id\":\"h/\\\"x\\\"\\\\\",\"generation\":-2,\"version\":null}",
        ),
        (
            StatusUpdate::for_connector("c", StatusState::Paused, "w", 1).with_version("3.9.0"),
            r#"{"state":"PAUSED","trace":null,"worker_id":"w","generation":1,"version":"3.9.0"}"#,
        ),
        (
            StatusUpdate::for_connector("c", StatusState::Restarting, "w", i32::MAX),
            r#"{"state":"RESTARTING","trace":null,"worker_id":"w","generation":2147483647,"version":null}"#,
        ),
    ];
    for (update, bytes) in cases {
        let record = update.record();
        assert_eq!(value_str(&record), bytes);
        assert_eq!(record.partition, None);
        // What we write reads back as the same status.
        let read = values::status(bytes.as_bytes()).unwrap();
        assert_eq!(read.state, update.state);
        assert_eq!(read.trace, update.trace);
        assert_eq!(read.worker_id.as_deref(), Some(update.worker_id.as_str()));
        assert_eq!(read.generation, update.generation);
        assert_eq!(read.version, update.version);
    }
    let destroyed = StatusUpdate::for_task("c", 1, StatusState::Destroyed, "w", 1).record();
    assert_eq!(destroyed.value, None);
    assert_eq!(key_str(&destroyed), "status-task-c-1");
}

#[test]
fn keys_match_java() {
    assert_eq!(
        connector_key("my-jdbc-source"),
        "status-connector-my-jdbc-source"
    );
    assert_eq!(
        task_key("my-jdbc-source", 0),
        "status-task-my-jdbc-source-0"
    );
    assert_eq!(task_key("conn", 12), "status-task-conn-12");
    assert_eq!(
        write::topic_key("orders", "my-jdbc-source"),
        "status-topic-orders:connector-my-jdbc-source"
    );
    // A negative task id reads back as connector `conn-`, task 1 (spec §1.3).
    assert_eq!(task_key("conn", -1), "status-task-conn--1");
    assert_eq!(
        keys::parse_task_key(&task_key("conn", -1)),
        Some(("conn-".into(), 1))
    );
    let update = StatusUpdate::for_task("a-b", 3, StatusState::Running, "w", 1);
    assert_eq!(update.key(), "status-task-a-b-3");
    assert_eq!(
        StatusUpdate::for_connector("a", StatusState::Running, "w", 1).key(),
        "status-connector-a"
    );
}

#[test]
fn topic_records_match_java_bytes() {
    let status = TopicStatus::new("foo-topic", "foo-source", 0, 1_589_972_451_234);
    assert_eq!(
        topic_status_value(&status),
        r#"{"topic":{"name":"foo-topic","connector":"foo-source","task":0,"discoverTimestamp":1589972451234}}"#
    );
    let record = topic_status_record(&status);
    assert_eq!(
        key_str(&record),
        "status-topic-foo-topic:connector-foo-source"
    );
    assert_eq!(record.partition, None);
    let tombstone = topic_tombstone("foo-source", "foo-topic");
    assert_eq!(
        key_str(&tombstone),
        "status-topic-foo-topic:connector-foo-source"
    );
    assert_eq!(tombstone.value, None);
    // Round trip through the reader.
    let mut feed = Feed::new();
    feed.put(key_str(&record), Some(value_str(&record)));
    assert_eq!(feed.snap().topic("foo-source", "foo-topic"), Some(&status));
    let escaped = TopicStatus::new("t\"", "c\n", -1, -5);
    assert_eq!(
        topic_status_value(&escaped),
        r#"{"topic":{"name":"t\"","connector":"c\n","task":-1,"discoverTimestamp":-5}}"#
    );
}

// ---- §3.3 send bookkeeping ------------------------------------------------------------------

#[test]
fn put_safe_decision_table() {
    let update = StatusUpdate::for_task("c", 0, StatusState::Unassigned, "me", 5);
    let other = |generation: i32| status(StatusState::Running, "other", generation);
    let mine = |generation: i32| status(StatusState::Running, "me", generation);
    let no_worker = |generation: i32| Status {
        worker_id: None,
        ..other(generation)
    };
    let cases: &[(Option<Status>, bool)] = &[
        (None, true),
        (Some(mine(9)), true),
        (Some(mine(1)), true),
        (Some(other(4)), true),
        (Some(other(5)), true),
        (Some(other(6)), false),
        // Java throws an NPE here; we treat a missing worker id as another worker.
        (Some(no_worker(6)), false),
        (Some(no_worker(5)), true),
    ];
    for (cached, expected) in cases {
        assert_eq!(
            can_write_safely(cached.as_ref(), &update),
            *expected,
            "{cached:?}"
        );
    }
}

#[test]
fn prepare_put_follows_java_send() {
    let mut feed = Feed::new();
    feed.put("status-task-c-0", Some(&status_json("RUNNING", "other", 6)));
    let log = &mut feed.log;
    // A put is never refused; the sequence counts from 1.
    let first = log
        .prepare_put(
            StatusUpdate::for_task("c", 0, StatusState::Running, "me", 5),
            false,
        )
        .unwrap();
    assert_eq!(first.sequence(), 1);
    assert!(!first.is_safe());
    assert_eq!(first.generation(), 5);
    assert_eq!(key_str(first.record()), "status-task-c-0");
    // Writes are not visible until read back.
    assert_eq!(
        log.snapshot().task("c", 0).unwrap().worker_id.as_deref(),
        Some("other")
    );
    // A putSafe against another worker's newer generation is silently refused...
    assert_eq!(
        log.prepare_put(
            StatusUpdate::for_task("c", 0, StatusState::Unassigned, "me", 5),
            true
        ),
        None
    );
    // ...without taking a sequence number.
    let third = log
        .prepare_put(
            StatusUpdate::for_task("c", 0, StatusState::Failed, "me", 6),
            true,
        )
        .unwrap();
    assert_eq!(third.sequence(), 2);
    assert!(third.is_safe());
    // Connectors and tasks count sequences separately, per key.
    let conn = log
        .prepare_put(
            StatusUpdate::for_connector("c", StatusState::Running, "me", 6),
            false,
        )
        .unwrap();
    assert_eq!(conn.sequence(), 1);
    assert_eq!(conn.into_record().key, b"status-connector-c".to_vec());
}

#[test]
fn writes_create_entries_for_known_connectors() {
    let mut feed = Feed::new();
    feed.put("status-connector-b", Some(RUNNING_1));
    feed.put(
        "status-connector-c",
        Some(&status_json("RUNNING", "other", 9)),
    );
    let log = &mut feed.log;
    assert_eq!(log.known_connectors(), ["b", "c"]);
    log.prepare_put(
        StatusUpdate::for_connector("a", StatusState::Running, "me", 1),
        false,
    );
    // Even a refused putSafe creates the entry (Java's getOrAdd runs first).
    assert_eq!(
        log.prepare_put(
            StatusUpdate::for_connector("c", StatusState::Unassigned, "me", 1),
            true
        ),
        None
    );
    // A task write creates no connector entry.
    log.prepare_put(
        StatusUpdate::for_task("t", 0, StatusState::Running, "me", 1),
        false,
    );
    assert_eq!(log.known_connectors(), ["a", "b", "c"]);
    // The snapshot only has what was read back.
    assert!(log.snapshot().connector("a").is_none());
    // A tombstone read removes the entry, whoever created it.
    feed.put("status-connector-a", None);
    feed.put("status-connector-b", None);
    assert_eq!(feed.log.known_connectors(), ["c"]);
}

#[test]
fn store_generation_is_set_before_the_safe_check() {
    let mut feed = Feed::new();
    feed.put(
        "status-connector-x",
        Some(&status_json("RUNNING", "other", 9)),
    );
    let log = &mut feed.log;
    let pending = log
        .prepare_put(
            StatusUpdate::for_connector("a", StatusState::Running, "me", 3),
            false,
        )
        .unwrap();
    assert!(log.should_retry(&pending));
    // Refused, but the store generation becomes 4 anyway.
    assert_eq!(
        log.prepare_put(
            StatusUpdate::for_connector("x", StatusState::Unassigned, "me", 4),
            true
        ),
        None
    );
    assert!(
        !log.should_retry(&pending),
        "a newer generation was used since"
    );
    // Back to generation 3: the first write may be retried again.
    log.prepare_put(
        StatusUpdate::for_connector("b", StatusState::Running, "me", 3),
        false,
    );
    assert!(log.should_retry(&pending));
}

#[test]
fn retry_abandonment_rules() {
    let running = |gen: i32| StatusUpdate::for_task("c", 0, StatusState::Running, "me", gen);
    let unassigned = |gen: i32| StatusUpdate::for_task("c", 0, StatusState::Unassigned, "me", gen);

    // Nothing changed: retry, put or putSafe.
    let mut feed = Feed::new();
    let put = feed.log.prepare_put(running(1), false).unwrap();
    assert!(feed.log.should_retry(&put));
    let safe = feed.log.prepare_put(unassigned(1), true).unwrap();
    assert!(feed.log.should_retry(&safe));
    // A newer write to the same key: the safe write is abandoned, the plain put is not.
    assert!(feed.log.should_retry(&put));
    let newer = feed.log.prepare_put(running(1), false).unwrap();
    assert!(!feed.log.should_retry(&safe));
    assert!(feed.log.should_retry(&put));
    assert!(feed.log.should_retry(&newer));

    // A newer write to another key does not matter (same generation).
    let mut feed = Feed::new();
    let safe = feed.log.prepare_put(unassigned(1), true).unwrap();
    feed.log
        .prepare_put(
            StatusUpdate::for_task("c", 1, StatusState::Running, "me", 1),
            false,
        )
        .unwrap();
    assert!(feed.log.should_retry(&safe));

    // Another worker's newer status read back: the safe write is abandoned, the put is not.
    let mut feed = Feed::new();
    let put = feed.log.prepare_put(running(2), false).unwrap();
    let safe = feed.log.prepare_put(unassigned(2), true).unwrap();
    feed.put("status-task-c-0", Some(&status_json("RUNNING", "other", 3)));
    assert!(feed.log.should_retry(&put));
    assert!(!feed.log.should_retry(&safe));
    // The same worker's own status read back keeps it alive.
    let mut feed = Feed::new();
    let safe = feed.log.prepare_put(unassigned(2), true).unwrap();
    feed.put("status-task-c-0", Some(&status_json("RUNNING", "me", 3)));
    assert!(feed.log.should_retry(&safe));

    // Task tombstone: the entry is deleted.
    let mut feed = Feed::new();
    let put = feed.log.prepare_put(running(1), false).unwrap();
    feed.put("status-task-c-0", None);
    assert!(!feed.log.should_retry(&put));
    // A fresh entry for the same key does not revive the old write.
    let again = feed.log.prepare_put(running(1), false).unwrap();
    assert_eq!(again.sequence(), 1);
    assert!(!feed.log.should_retry(&put));
    assert!(feed.log.should_retry(&again));

    // Connector tombstone: the connector entry and every task entry of the row are deleted.
    let mut feed = Feed::new();
    let task = feed.log.prepare_put(running(1), false).unwrap();
    let conn = feed
        .log
        .prepare_put(
            StatusUpdate::for_connector("c", StatusState::Running, "me", 1),
            false,
        )
        .unwrap();
    let other = feed
        .log
        .prepare_put(
            StatusUpdate::for_task("d", 0, StatusState::Running, "me", 1),
            false,
        )
        .unwrap();
    feed.put("status-connector-c", None);
    assert!(!feed.log.should_retry(&task));
    assert!(!feed.log.should_retry(&conn));
    assert!(feed.log.should_retry(&other));

    // A tombstone of another task leaves the entry alone.
    let mut feed = Feed::new();
    let put = feed.log.prepare_put(running(1), false).unwrap();
    feed.put("status-task-c-1", None);
    assert!(feed.log.should_retry(&put));
}

#[test]
fn sequences_wrap_like_java_int() {
    let mut log = StatusLog::new();
    let update = StatusUpdate::for_connector("c", StatusState::Running, "me", 1);
    log.prepare_put(update.clone(), false);
    if let Some(entry) = log.topic.book.connectors.get_mut("c") {
        entry.sequence = i32::MAX;
    }
    assert_eq!(log.prepare_put(update, false).unwrap().sequence(), i32::MIN);
}

// ---- §3.4 / §3.6 deletion -------------------------------------------------------------------

#[test]
fn deletion_records_are_task_tombstones_then_the_connector() {
    let mut feed = Feed::new();
    for key in [
        "status-task-c-10",
        "status-task-c-2",
        "status-task-c-0",
        "status-task-cc-0",
    ] {
        feed.put(key, Some(RUNNING_1));
    }
    // A task entry only written for is not in getAll(c).
    feed.log.prepare_put(
        StatusUpdate::for_task("c", 7, StatusState::Running, "me", 1),
        false,
    );
    let keys: Vec<String> = feed
        .log
        .deletion_records("c")
        .iter()
        .map(|r| {
            assert_eq!(r.value, None);
            assert_eq!(r.partition, None);
            key_str(r).to_string()
        })
        .collect();
    assert_eq!(
        keys,
        [
            "status-task-c-0",
            "status-task-c-2",
            "status-task-c-10",
            "status-connector-c"
        ]
    );
    let only_connector: Vec<ProducerRecord> = feed.log.deletion_records("nobody");
    assert_eq!(
        only_connector,
        [ProducerRecord::from_strings(
            "status-connector-nobody".into(),
            None
        )]
    );

    // The bookkept variant writes the same records through put(DESTROYED).
    let pending_task = feed
        .log
        .prepare_put(
            StatusUpdate::for_task("c", 2, StatusState::Unassigned, "me", 1),
            true,
        )
        .unwrap();
    let expected = feed.log.deletion_records("c");
    let writes = feed.log.prepare_deletion("c", "me", 4);
    let records: Vec<ProducerRecord> = writes.iter().map(|w| w.record().clone()).collect();
    assert_eq!(records, expected);
    assert!(writes
        .iter()
        .all(|w| w.update().state == StatusState::Destroyed && !w.is_safe()));
    assert_eq!(writes[1].sequence(), 2, "task 2 had a write before");
    assert!(!feed.log.should_retry(&pending_task));
    assert!(writes.iter().all(|w| feed.log.should_retry(w)));
    // Reading the tombstones back removes everything but the untouched cc row.
    for record in &records {
        feed.put(key_str(record), None);
    }
    assert_eq!(
        feed.snap()
            .all_tasks()
            .map(|(c, _, _)| c)
            .collect::<Vec<_>>(),
        ["cc"]
    );
    assert!(writes.iter().all(|w| !feed.log.should_retry(w)));
}

// ---- §3.7 KIP-558 ---------------------------------------------------------------------------

#[test]
fn active_topics_view() {
    let mut feed = Feed::new();
    feed.put(
        "status-topic-zeta:connector-c",
        Some(&topic_json("zeta", "c", 0, 1)),
    );
    feed.put(
        "status-topic-alpha:connector-c",
        Some(&topic_json("alpha", "c", 1, 2)),
    );
    feed.put(
        "status-topic-other:connector-d",
        Some(&topic_json("other", "d", 0, 3)),
    );
    let on = TopicTracking::default();
    assert_eq!(
        on,
        TopicTracking {
            enable: true,
            allow_reset: true
        }
    );
    let topics = feed.log.snapshot().active_topics("c", &on).unwrap();
    assert_eq!(topics.topics, ["alpha", "zeta"]);
    assert_eq!(to_json(&topics), r#"{"c":{"topics":["alpha","zeta"]}}"#);
    // No existence check.
    let unknown = feed.log.snapshot().active_topics("x", &on).unwrap();
    assert_eq!(to_json(&unknown), r#"{"x":{"topics":[]}}"#);
    let off = TopicTracking {
        enable: false,
        allow_reset: true,
    };
    let err = feed.log.snapshot().active_topics("c", &off).unwrap_err();
    assert_eq!(err, TopicTrackingError::Disabled);
    assert_eq!(err.to_string(), "Topic tracking is disabled.");
    // allow_reset does not matter for the GET.
    let no_reset = TopicTracking {
        enable: true,
        allow_reset: false,
    };
    assert!(feed.log.snapshot().active_topics("c", &no_reset).is_ok());
}

#[test]
fn reset_active_topics() {
    let mut feed = Feed::new();
    feed.put(
        "status-topic-zeta:connector-c",
        Some(&topic_json("zeta", "c", 0, 1)),
    );
    feed.put(
        "status-topic-alpha:connector-c",
        Some(&topic_json("alpha", "c", 1, 2)),
    );
    feed.put(
        "status-topic-other:connector-d",
        Some(&topic_json("other", "d", 0, 3)),
    );
    let records = feed
        .log
        .snapshot()
        .reset_active_topics("c", &TopicTracking::default())
        .unwrap();
    assert_eq!(
        records,
        [topic_tombstone("c", "alpha"), topic_tombstone("c", "zeta"),]
    );
    assert_eq!(key_str(&records[0]), "status-topic-alpha:connector-c");
    assert!(feed
        .log
        .snapshot()
        .reset_active_topics("x", &TopicTracking::default())
        .unwrap()
        .is_empty());
    // Disabled tracking is checked first.
    let off = TopicTracking {
        enable: false,
        allow_reset: false,
    };
    assert_eq!(
        feed.log.snapshot().reset_active_topics("c", &off),
        Err(TopicTrackingError::Disabled)
    );
    let no_reset = TopicTracking {
        enable: true,
        allow_reset: false,
    };
    let err = feed
        .log
        .snapshot()
        .reset_active_topics("c", &no_reset)
        .unwrap_err();
    assert_eq!(err, TopicTrackingError::ResetDisabled);
    assert_eq!(err.message(), "Topic tracking reset is disabled.");
    assert_eq!(err.to_string(), "Topic tracking reset is disabled.");
    // The unchecked variant (revocation of a deleted connector) gives the same records.
    assert_eq!(feed.log.snapshot().topic_reset_records("c"), records);
    // Reading the tombstones back empties the connector's topics.
    for record in &records {
        feed.put(key_str(record), None);
    }
    assert!(feed
        .log
        .snapshot()
        .active_topics("c", &TopicTracking::default())
        .unwrap()
        .topics
        .is_empty());
}

#[test]
fn topic_views_use_the_value_fields_like_java() {
    let mut feed = Feed::new();
    // A record whose value disagrees with its key.
    feed.put(
        "status-topic-k:connector-c",
        Some(&topic_json("v", "other", 0, 1)),
    );
    assert!(feed.snap().topic("c", "k").is_some());
    let on = TopicTracking::default();
    assert_eq!(
        feed.log.snapshot().active_topics("c", &on).unwrap().topics,
        ["v"]
    );
    // Java's reset tombstones `status-topic-<value.topic>:connector-<value.connector>`.
    assert_eq!(
        feed.log.snapshot().reset_active_topics("c", &on).unwrap(),
        [topic_tombstone("other", "v")]
    );
    let diagnostics = feed.log.diagnostics();
    assert_eq!(
        diagnostics
            .mismatched_topic_statuses()
            .map(|(c, t, _)| (c, t))
            .collect::<Vec<_>>(),
        [("c", "k")]
    );
}

#[test]
fn record_active_topic() {
    let mut feed = Feed::new();
    let on = TopicTracking::default();
    let record = feed
        .log
        .record_active_topic("c", "orders", 2, 1_700_000_000_000, &on)
        .unwrap();
    assert_eq!(key_str(&record), "status-topic-orders:connector-c");
    assert_eq!(
        value_str(&record),
        r#"{"topic":{"name":"orders","connector":"c","task":2,"discoverTimestamp":1700000000000}}"#
    );
    // Until read back, each call writes again.
    assert_eq!(
        feed.log
            .record_active_topic("c", "orders", 2, 1_700_000_000_001, &on)
            .map(|r| r.key),
        Some(record.key.clone())
    );
    feed.put(key_str(&record), Some(value_str(&record)));
    assert_eq!(feed.log.record_active_topic("c", "orders", 2, 5, &on), None);
    let off = TopicTracking {
        enable: false,
        allow_reset: true,
    };
    assert_eq!(feed.log.record_active_topic("c", "new", 0, 5, &off), None);
}

// ---- diagnostics ----------------------------------------------------------------------------

#[test]
fn diagnostics_report_orphans() {
    let mut feed = populated();
    // A connector tombstone read before the task records of a crashed deletion leaves orphans.
    feed.put("status-connector-c", None);
    feed.put("status-task-c-3", Some(RUNNING_1));
    feed.put("status-task-gone-0", Some(RUNNING_1));
    feed.put(
        "status-topic-x:connector-gone",
        Some(&topic_json("x", "gone", 0, 1)),
    );
    feed.put("garbage", None);
    let d = feed.log.diagnostics();
    assert_eq!(
        d.orphan_task_statuses()
            .map(|(c, n, _)| (c, n))
            .collect::<Vec<_>>(),
        [("c", 3), ("gone", 0)]
    );
    assert_eq!(
        d.orphan_topic_statuses()
            .map(|(c, t, _)| (c, t))
            .collect::<Vec<_>>(),
        [("c", "t1"), ("c", "t2"), ("gone", "x")]
    );
    assert_eq!(d.mismatched_topic_statuses().count(), 0);
    assert_eq!(
        d.skipped().iter().collect::<Vec<_>>(),
        [(StatusSkipKind::UnknownKey, 1)]
    );
    assert_eq!(StatusSkipKind::UnknownKey.as_str(), "unknown_key");
}

// ---- checkpoints ----------------------------------------------------------------------------

#[test]
fn checkpoint_round_trip() {
    let mut feed = populated();
    feed.put_on(3, "status-task-d-1", Some(RUNNING_1));
    feed.put("status-topic-t1:connector-c", None);
    feed.put("garbage", None);
    feed.log.prepare_put(
        StatusUpdate::for_connector("written", StatusState::Running, "me", 1),
        false,
    );
    let bytes = feed.log.checkpoint();
    let mut restored = Feed {
        log: StatusLog::restore(&bytes).unwrap(),
    };
    assert!(!restored.log.is_caught_up());
    assert_eq!(restored.snap(), feed.snap());
    assert_eq!(restored.log.diagnostics(), feed.log.diagnostics());
    assert_eq!(
        restored.log.next_fetch_offset(0),
        feed.log.next_fetch_offset(0)
    );
    assert_eq!(restored.log.next_fetch_offset(3), 1);
    // The write-side bookkeeping is not carried over, as for a restarted Java worker.
    assert_eq!(restored.log.known_connectors(), ["c", "d"]);
    assert_eq!(feed.log.known_connectors(), ["c", "d", "written"]);
    // Both continue identically, duplicates included.
    for f in [&mut feed, &mut restored] {
        f.log.mark_caught_up();
        f.put("status-connector-c", None);
        let dup = f
            .log
            .handle_record(Record::new(b"status-connector-d", None, 0))
            .unwrap();
        assert_eq!(
            dup,
            RecordOutcome::Skipped(StatusSkip::Duplicate { next_expected: 10 })
        );
    }
    assert_eq!(restored.snap(), feed.snap());
    assert_eq!(restored.events(), feed.events());
}

#[test]
fn corrupt_checkpoints_are_refused() {
    use crate::checkpoint::CheckpointError;
    let bytes = populated().log.checkpoint();
    assert!(matches!(
        StatusLog::restore(&bytes[..10]),
        Err(CheckpointError::Truncated { len: 10 })
    ));
    assert!(matches!(
        StatusLog::restore(&bytes[..bytes.len() - 1]),
        Err(CheckpointError::LengthMismatch { .. })
    ));
    let mut flipped = bytes.clone();
    let last = flipped.len() - 1;
    flipped[last] ^= 0x40;
    assert_eq!(
        StatusLog::restore(&flipped).unwrap_err(),
        CheckpointError::ChecksumMismatch
    );
    let mut magic = bytes.clone();
    magic[0] = b'X';
    assert_eq!(
        StatusLog::restore(&magic).unwrap_err(),
        CheckpointError::NotACheckpoint
    );
    // A config checkpoint is another topic's.
    let config = crate::config::ConfigLog::new().checkpoint();
    assert_eq!(
        StatusLog::restore(&config).unwrap_err(),
        CheckpointError::WrongTopic { found: 1 }
    );
    assert!(crate::config::ConfigLog::restore(&bytes).is_err());
    assert!(StatusLog::restore(b"").is_err());
    // An empty machine round-trips too.
    let empty = StatusLog::new().checkpoint();
    assert_eq!(
        StatusLog::restore(&empty).unwrap().snapshot(),
        StatusSnapshot::default()
    );
}

// ---- misc -----------------------------------------------------------------------------------

#[test]
fn state_names_are_exact() {
    for state in StatusState::ALL {
        assert_eq!(StatusState::from_java_name(state.as_str()), Some(state));
        assert_eq!(state.to_string(), state.as_str());
    }
    assert_eq!(StatusState::from_java_name("Running"), None);
    assert_eq!(StatusState::from_java_name("RUNNING "), None);
    assert_eq!(StatusState::from_java_name(""), None);
}

#[test]
fn skip_display_is_readable() {
    let skips = [
        StatusSkip::Duplicate { next_expected: 3 },
        StatusSkip::NullKey,
        StatusSkip::UnknownKey,
        StatusSkip::InvalidConnectorKey,
        StatusSkip::InvalidTaskKey,
        StatusSkip::InvalidTopicKey {
            reason: "empty topic",
        },
        StatusSkip::UnparsableStatus { reason: "x" },
        StatusSkip::UnparsableTopicStatus { reason: "y" },
        StatusSkip::StaleUnassigned,
    ];
    for skip in skips {
        assert!(!skip.to_string().is_empty());
        assert!(!skip.kind().as_str().is_empty());
    }
}

/// A status write as a plan: the one record from the log's ordinary producer, not read back.
#[test]
fn a_status_write_is_a_plan_of_its_one_record() {
    use crate::plan::{ProducerKind, StepAction};
    let mut log = StatusLog::new();
    let pending = log
        .prepare_put(
            StatusUpdate::for_task("c", 0, StatusState::Running, "me", 5),
            false,
        )
        .unwrap();
    let plan = pending.plan();
    assert_eq!(plan.steps.len(), 1);
    assert_eq!(plan.steps[0].error_message, write::STATUS_WRITE_ERROR);
    match &plan.steps[0].action {
        StepAction::Produce { producer, records } => {
            assert_eq!(*producer, ProducerKind::Ordinary);
            assert_eq!(records.as_slice(), core::slice::from_ref(pending.record()));
        }
        StepAction::ReadToEnd => panic!("a read-back step"),
    }
}
