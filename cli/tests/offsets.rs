//! `connect-state offsets export|reset|import` end to end: dry runs on dumps (the exact records,
//! routed to where each key lives), Java's precondition, and `--execute` against a real broker.

mod common;

use std::path::PathBuf;

use common::{dump, write_file};
use serde_json::{json, Value};

use common::{run as connect_state, text};

fn config(state: &str, tasks: i64) -> PathBuf {
    dump(
        "config.jsonl",
        &[
            (
                0,
                "connector-src",
                Some(json!({"properties": {"name": "src"}})),
            ),
            (
                0,
                "target-state-src",
                Some(json!({"state": "PAUSED", "state.v2": state})),
            ),
            (0, "commit-src", Some(json!({"tasks": tasks}))),
        ],
    )
}

fn offsets() -> PathBuf {
    dump(
        "offsets.jsonl",
        &[
            // Stored on partitions a murmur2 writer would not pick: tombstones must follow them.
            (3, r#"["src",{"file":"a"}]"#, Some(json!({"pos": 3}))),
            (1, r#"["src",{"file":"b"}]"#, Some(json!({"pos": 4}))),
            (1, r#"["other",{"file":"b"}]"#, Some(json!({"pos": 5}))),
        ],
    )
}

fn flag(topic: &str, path: &std::path::Path) -> String {
    format!("{topic}={}", path.display())
}

#[test]
fn export_prints_the_kip875_listing() {
    let offsets = offsets();
    let output = connect_state(&[
        "offsets",
        "export",
        "--connector",
        "src",
        "--from-dump",
        &flag("offsets", &offsets),
    ]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let listing: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(
        listing,
        json!({"offsets": [
            {"partition": {"file": "a"}, "offset": {"pos": 3}},
            {"partition": {"file": "b"}, "offset": {"pos": 4}},
        ]})
    );
    // With the config topic, an unknown connector is Java's 404 message.
    let config = config("STOPPED", 0);
    let output = connect_state(&[
        "offsets",
        "export",
        "--connector",
        "nope",
        "--from-dump",
        &flag("offsets", &offsets),
        "--from-dump",
        &flag("config", &config),
    ]);
    assert_eq!(output.status.code(), Some(2));
    assert!(text(&output.stderr).contains("Connector nope not found"));
}

#[test]
fn reset_dry_run_lists_tombstones_where_the_keys_live() {
    let (config, offsets) = (config("STOPPED", 0), offsets());
    let output = connect_state(&[
        "offsets",
        "reset",
        "--connector",
        "src",
        "--from-dump",
        &flag("config", &config),
        "--from-dump",
        &flag("offsets", &offsets),
    ]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let out = text(&output.stdout);
    let rows: Vec<Vec<&str>> = out
        .lines()
        .skip(1)
        .take(2)
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(
        rows,
        vec![
            vec!["3", r#"["src",{"file":"a"}]"#, "(tombstone)"],
            vec!["1", r#"["src",{"file":"b"}]"#, "(tombstone)"],
        ],
        "{out}"
    );
    assert!(out.contains("Dry run: 2 record(s)"), "{out}");
}

#[test]
fn import_dry_run_places_new_keys_by_murmur2_and_keeps_stored_partitions() {
    let (config, offsets) = (config("STOPPED", 0), offsets());
    let file = write_file(
        "new.json",
        r#"{"offsets":[{"partition":{"file":"a"},"offset":{"pos":10}},
                       {"partition":{"file":"c"},"offset":{"pos":1}},
                       {"partition":{"file":"b"},"offset":null}]}"#,
    );
    let output = connect_state(&[
        "offsets",
        "import",
        "--connector",
        "src",
        file.to_str().unwrap(),
        "--from-dump",
        &flag("config", &config),
        "--from-dump",
        &flag("offsets", &offsets),
        "--offsets-partitions",
        "7",
    ]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let out = text(&output.stdout);
    let new_key = br#"["src",{"file":"c"}]"#;
    let placed = engine::offsets::default_partition(new_key, 7)
        .unwrap()
        .to_string();
    let rows: Vec<Vec<&str>> = out
        .lines()
        .skip(1)
        .take(3)
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(
        rows,
        vec![
            vec!["3", r#"["src",{"file":"a"}]"#, r#"{"pos":10}"#],
            vec![placed.as_str(), r#"["src",{"file":"c"}]"#, r#"{"pos":1}"#],
            vec!["1", r#"["src",{"file":"b"}]"#, "(tombstone)"],
        ],
        "{out}"
    );
}

#[test]
fn a_connector_that_is_not_stopped_with_zero_tasks_is_refused_with_javas_message() {
    let offsets = offsets();
    for config in [config("PAUSED", 0), config("STOPPED", 2)] {
        let output = connect_state(&[
            "offsets",
            "reset",
            "--connector",
            "src",
            "--from-dump",
            &flag("config", &config),
            "--from-dump",
            &flag("offsets", &offsets),
        ]);
        assert_eq!(output.status.code(), Some(2));
        assert!(
            text(&output.stderr).contains(
                "Connectors must be in the STOPPED state before their offsets can be modified"
            ),
            "{}",
            text(&output.stderr)
        );
    }
}

#[test]
fn bad_offsets_files_and_dump_execution_are_clear_errors() {
    let (config, offsets) = (config("STOPPED", 0), offsets());
    let bad = write_file("bad.json", r#"{"offsets":[{"partition":"a","offset":{}}]}"#);
    let output = connect_state(&[
        "offsets",
        "import",
        "--connector",
        "src",
        bad.to_str().unwrap(),
        "--from-dump",
        &flag("config", &config),
        "--from-dump",
        &flag("offsets", &offsets),
    ]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        text(&output.stderr).contains("not a KIP-875 offsets document"),
        "{}",
        text(&output.stderr)
    );
    let output = connect_state(&[
        "offsets",
        "reset",
        "--connector",
        "src",
        "--from-dump",
        &flag("config", &config),
        "--from-dump",
        &flag("offsets", &offsets),
        "--execute",
    ]);
    assert_eq!(output.status.code(), Some(2));
    assert!(text(&output.stderr).contains("--execute writes to a live cluster"));
    let output = connect_state(&[
        "offsets",
        "reset",
        "--connector",
        "src",
        "--from-dump",
        &flag("offsets", &offsets),
    ]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        text(&output.stderr).contains("needs the config topic"),
        "{}",
        text(&output.stderr)
    );
}

/// `CONNECT_STATE_TEST_BROKER=127.0.0.1:19092 cargo test -p connect-state-cli -- --ignored`.
#[test]
#[ignore = "needs a real broker: set CONNECT_STATE_TEST_BROKER (see .ci/run)"]
fn reset_and_import_execute_against_a_real_broker() {
    use std::sync::Arc;

    use connect_state_kafka::{KafkaSettings, KafkaTransport};
    use connect_state_store::{ConfigStore, ProduceMode, Store, StoreSettings, TopicKind};
    use engine::config::{write, ConfigLog, TargetState};
    use engine::offsets::OffsetLog;
    use engine::ProducerRecord;

    let broker = common::broker();
    let (config_topic, offsets_topic) =
        (common::unique_topic("cfg-off"), common::unique_topic("off"));
    let runtime = common::runtime();
    let transport = Arc::new(KafkaTransport::new(KafkaSettings::new(broker.clone())).unwrap());
    let read_offsets = || {
        runtime.block_on(async {
            let mut store = Store::new(
                StoreSettings::new(&offsets_topic, TopicKind::Offsets),
                transport.clone(),
                OffsetLog::new(),
            );
            store.start().await.unwrap();
            store.into_machine().snapshot()
        })
    };
    runtime.block_on(async {
        let mut config = ConfigStore::new(
            StoreSettings::new(&config_topic, TopicKind::Config),
            transport.clone(),
            ConfigLog::new(),
        );
        config.start().await.unwrap();
        let plan =
            write::put_connector_config("src", [("name", Some("src"))], Some(TargetState::Stopped));
        config.execute(&plan, false).await.unwrap();
        let mut settings = StoreSettings::new(&offsets_topic, TopicKind::Offsets);
        settings.partitions = Some(5);
        let mut offsets = Store::new(settings, transport.clone(), OffsetLog::new());
        offsets.start().await.unwrap();
        // One key on a partition murmur2 would not choose, as a custom writer might leave it.
        let key = br#"["src",{"file":"a"}]"#.to_vec();
        let odd = (engine::offsets::default_partition(&key, 5).unwrap() + 1) % 5;
        let records = [
            ProducerRecord {
                key,
                value: Some(br#"{"pos":3}"#.to_vec()),
                partition: Some(odd),
            },
            ProducerRecord {
                key: br#"["src",{"file":"b"}]"#.to_vec(),
                value: Some(br#"{"pos":4}"#.to_vec()),
                partition: None,
            },
        ];
        offsets
            .write(&records, ProduceMode::Plain, true, "seed")
            .await
            .unwrap();
    });
    let live = |extra: &[&str]| {
        let mut args = vec!["offsets"];
        args.extend_from_slice(extra);
        args.extend([
            "--bootstrap-servers",
            &broker,
            "--config-topic",
            &config_topic,
            "--offsets-topic",
            &offsets_topic,
        ]);
        connect_state(&args)
    };
    let file = write_file(
        "import.json",
        r#"{"offsets":[{"partition":{"file":"c"},"offset":{"pos":9}}]}"#,
    );
    let imported = live(&[
        "import",
        "--connector",
        "src",
        file.to_str().unwrap(),
        "--execute",
    ]);
    assert!(imported.status.success(), "{}", text(&imported.stderr));
    assert!(text(&imported.stdout).contains("have been altered successfully"));
    let listing = |snapshot: &engine::offsets::OffsetSnapshot| {
        serde_json::to_value(engine::offsets::kip875::list(snapshot, "src")).unwrap()
    };
    assert_eq!(
        listing(&read_offsets())["offsets"]
            .as_array()
            .unwrap()
            .len(),
        3
    );
    let reset = live(&["reset", "--connector", "src", "--execute"]);
    assert!(reset.status.success(), "{}", text(&reset.stderr));
    assert!(text(&reset.stdout).contains("have been reset successfully"));
    // Every key is gone, including the one on the partition murmur2 would not pick.
    let after = read_offsets();
    assert_eq!(listing(&after), json!({"offsets": []}));
    assert_eq!(
        after
            .entries()
            .filter(|(_, stored)| !stored.value().is_empty())
            .count(),
        0
    );
}
