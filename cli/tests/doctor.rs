//! `connect-state doctor` end to end on dumps: every check that dumps can trigger, the evidence
//! offsets, exit codes, and the JSON report.

mod common;

use std::path::PathBuf;
use std::process::{Command, Output};

use common::{dump, from_dumps};
use serde_json::{json, Value};

fn doctor(args: &[String]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_connect-state"))
        .arg("doctor")
        .args(args)
        .output()
        .unwrap()
}

fn status(state: &str) -> Option<Value> {
    Some(json!({"state": state, "trace": null, "worker_id": "w:8083", "generation": 1}))
}

fn sick_config() -> PathBuf {
    dump(
        "config.jsonl",
        &[
            (
                0,
                "connector-good",
                Some(json!({"properties": {"name": "good"}})),
            ),
            (0, "task-good-0", Some(json!({"properties": {"t": "0"}}))),
            (0, "commit-good", Some(json!({"tasks": 1}))),
            (
                0,
                "connector-broken",
                Some(json!({"properties": {"name": "broken"}})),
            ),
            (0, "task-broken-0", Some(json!({"properties": {"t": "0"}}))),
            (0, "commit-broken", Some(json!({"tasks": 3}))),
            (0, "task-gone-0", Some(json!({"properties": {"t": "0"}}))),
            (0, "commit-gone", Some(json!({"tasks": 1}))),
            (
                0,
                "target-state-gone",
                Some(json!({"state": "PAUSED", "state.v2": "PAUSED"})),
            ),
            (
                0,
                "restart-connector-gone",
                Some(json!({"include-tasks": false, "only-failed": false})),
            ),
        ],
    )
}

#[test]
fn every_dump_check_reports_its_evidence_and_exits_1() {
    let config = sick_config();
    let status = dump(
        "status.jsonl",
        &[
            (0, "status-connector-good", status("RUNNING")),
            (1, "status-connector-gone", status("RUNNING")),
            (1, "status-task-gone-0", status("FAILED")),
            (
                2,
                "status-topic-orders:connector-gone",
                Some(
                    json!({"topic": {"name": "orders", "connector": "gone", "task": 0, "discoverTimestamp": 5}}),
                ),
            ),
            (2, "status-task-good-0", status("RUNNING")),
            (3, "status-task-lonely-2", status("RUNNING")),
            (
                3,
                "status-topic-a:connector-good",
                Some(
                    json!({"topic": {"name": "b", "connector": "good", "task": 0, "discoverTimestamp": 5}}),
                ),
            ),
        ],
    );
    let offsets = dump(
        "offsets.jsonl",
        &[
            (3, r#"["gone",{"file":"a"}]"#, Some(json!({"pos": 3}))),
            (1, r#"["good",{"file":"b"}]"#, Some(json!({"pos": 4}))),
        ],
    );
    let mut args = from_dumps(&[
        ("config", &config),
        ("status", &status),
        ("offsets", &offsets),
    ]);
    args.extend(["--format".into(), "json".into()]);
    let output = doctor(&args);
    assert_eq!(
        output.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    let findings = report["findings"].as_array().unwrap();
    let find = |check: &str, connector: &str| -> &Value {
        findings
            .iter()
            .find(|f| f["check"] == check && f["connector"] == connector)
            .unwrap_or_else(|| panic!("no {check} for {connector}: {report:#}"))
    };
    let broken = find("inconsistent-connector", "broken");
    assert!(broken["summary"]
        .as_str()
        .unwrap()
        .contains("task id(s) 1, 2"));
    assert_eq!(
        broken["evidence"][0],
        json!({"topic": "config", "partition": 0, "offset": 5, "key": "commit-broken"})
    );
    let ghosts = find("ghost-task-records", "gone");
    let offsets_of = |f: &Value| -> Vec<i64> {
        f["evidence"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["offset"].as_i64().unwrap())
            .collect()
    };
    assert_eq!(offsets_of(ghosts), vec![6, 7]);
    assert_eq!(
        offsets_of(find("target-state-without-connector", "gone")),
        vec![8]
    );
    assert_eq!(
        offsets_of(find("restart-request-for-unknown-connector", "gone")),
        vec![9]
    );
    let deleted = find("status-of-deleted-connector", "gone");
    assert_eq!(
        deleted["evidence"],
        json!([{"topic": "status", "partition": 1, "offset": 0, "key": "status-connector-gone"},
               {"topic": "status", "partition": 1, "offset": 1, "key": "status-task-gone-0"}])
    );
    assert_eq!(
        find("topics-of-deleted-connector", "gone")["evidence"][0]["key"],
        "status-topic-orders:connector-gone"
    );
    // "lonely" has no config either, so it is reported as a deleted connector's status.
    assert_eq!(
        offsets_of(find("status-of-deleted-connector", "lonely")),
        vec![0]
    );
    assert_eq!(
        find("mismatched-topic-status", "good")["evidence"][0]["partition"],
        3
    );
    let offsets_finding = find("offsets-of-deleted-connector", "gone");
    assert_eq!(
        offsets_finding["evidence"][0],
        json!({"topic": "offsets", "partition": 3, "offset": 0, "key": "[\"gone\",{\"file\":\"a\"}]"})
    );
    assert_eq!(findings.len(), 9, "{report:#}");
    assert_eq!(report["skipped_checks"], json!([]));
}

#[test]
fn orphan_task_status_without_config_check_and_skipped_checks_are_listed() {
    let status = dump(
        "status-only.jsonl",
        &[(0, "status-task-lonely-2", status("RUNNING"))],
    );
    let mut args = from_dumps(&[("status", &status)]);
    args.extend(["--format".into(), "json".into()]);
    let output = doctor(&args);
    assert_eq!(output.status.code(), Some(1));
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["findings"][0]["check"], "orphan-task-status");
    assert_eq!(
        report["findings"][0]["evidence"][0]["key"],
        "status-task-lonely-2"
    );
    let skipped = report["skipped_checks"].to_string();
    assert!(skipped.contains("status-of-deleted-connector"), "{skipped}");
    assert!(skipped.contains("inconsistent-connector"), "{skipped}");
}

#[test]
fn a_healthy_cluster_exits_0() {
    let config = dump(
        "healthy.jsonl",
        &[
            (
                0,
                "connector-good",
                Some(json!({"properties": {"name": "good"}})),
            ),
            (0, "task-good-0", Some(json!({"properties": {"t": "0"}}))),
            (0, "commit-good", Some(json!({"tasks": 1}))),
        ],
    );
    let output = doctor(&from_dumps(&[("config", &config)]));
    assert_eq!(output.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&output.stdout).contains("Healthy: no findings"));
}

#[test]
fn a_multi_partition_config_dump_is_a_layout_finding() {
    let config = dump(
        "two-partitions.jsonl",
        &[
            (0, "connector-a", Some(json!({"properties": {"name": "a"}}))),
            (1, "connector-b", Some(json!({"properties": {"name": "b"}}))),
        ],
    );
    let output = doctor(&from_dumps(&[("config", &config)]));
    assert_eq!(output.status.code(), Some(1));
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        text.contains("[topic-layout]") && text.contains("single partition"),
        "{text}"
    );
}

#[test]
fn bad_sources_are_clear_errors_with_exit_2() {
    let output = doctor(&[]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("--from-dump config=FILE"));
    let output = doctor(&["--from-dump".into(), "configs.jsonl".into()]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("expected TOPIC=FILE"));
    let output = doctor(&["--from-dump".into(), "config=/nonexistent/x.jsonl".into()]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("cannot open /nonexistent/x.jsonl"));
    let config = sick_config();
    let output = doctor(&[
        "--from-dump".into(),
        format!("config={}", config.display()),
        "--bootstrap-servers".into(),
        "127.0.0.1:1".into(),
    ]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("not both"));
}

/// `CONNECT_STATE_TEST_BROKER=127.0.0.1:19092 cargo test -p connect-state-cli -- --ignored`.
#[test]
#[ignore = "needs a real broker: set CONNECT_STATE_TEST_BROKER (see .ci/run)"]
fn doctor_reads_a_live_cluster_and_reports_layout_and_inconsistency() {
    use std::collections::BTreeMap;
    use std::sync::Arc;

    use connect_state_kafka::{KafkaSettings, KafkaTransport};
    use connect_state_store::{NewTopic, ProduceMode, Transport};
    use engine::ProducerRecord;

    let broker = common::broker();
    let topic = common::unique_topic("cfg-doctor");
    let runtime = common::runtime();
    runtime.block_on(async {
        let transport = Arc::new(KafkaTransport::new(KafkaSettings::new(broker.clone())).unwrap());
        // A config topic as a careless operator makes it: delete policy, two partitions.
        transport
            .create_topic(&NewTopic {
                name: topic.clone(),
                partitions: 2,
                replication_factor: None,
                configs: BTreeMap::from([("cleanup.policy".into(), "delete".into())]),
            })
            .await
            .unwrap();
        let record = |key: &str, value: Value| ProducerRecord {
            key: key.as_bytes().to_vec(),
            value: Some(value.to_string().into_bytes()),
            partition: Some(0),
        };
        let records = [
            record("connector-c", json!({"properties": {"name": "c"}})),
            record("task-c-0", json!({"properties": {"t": "0"}})),
            record("commit-c", json!({"tasks": 2})),
        ];
        transport
            .produce(&topic, &records, ProduceMode::Plain)
            .await
            .unwrap();
    });
    let output = doctor(&[
        "--bootstrap-servers".into(),
        broker,
        "--config-topic".into(),
        topic,
        "--format".into(),
        "json".into(),
    ]);
    assert_eq!(
        output.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    let checks: Vec<&str> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["check"].as_str().unwrap())
        .collect();
    assert_eq!(
        checks,
        ["topic-layout", "inconsistent-connector"],
        "{report:#}"
    );
    assert!(report["findings"][0]["summary"]
        .as_str()
        .unwrap()
        .contains("cleanup.policy=compact"));
    assert_eq!(report["findings"][1]["evidence"][0]["offset"], 2);
}
