//! End-to-end tests of the `connect-state` binary.

mod common;

use std::process::{Command, Output};

use connect_state_tests::external::run_with_stdin;
use connect_state_tests::load_vectors;

fn connect_state(args: &[&str], stdin: &str) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_connect-state"));
    command.args(args);
    run_with_stdin(&mut command, stdin.as_bytes()).expect("the binary runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn every_vector_matches_through_the_cli() {
    for (name, vector) in load_vectors() {
        let live_from = vector.live_from.map(|o| o.to_string());
        let mut args = vec![
            "replay",
            "--topic",
            &vector.topic,
            "--format",
            "json",
            "--events",
        ];
        if let Some(from) = &live_from {
            args.extend(["--live-from", from]);
        }
        args.push("-");
        let output = connect_state(&args, &vector.kcat_lines());
        assert!(output.status.success(), "{name}: {}", text(&output.stderr));
        let actual: serde_json::Value =
            serde_json::from_slice(&output.stdout).expect("the output is JSON");
        assert_eq!(actual, vector.expected, "{name}: {}", vector.description);
    }
}

#[test]
fn snapshot_only_without_events_flag() {
    let (_, vector) = load_vectors().remove(0);
    let output = connect_state(
        &["replay", "--topic", "config", "--format", "json", "-"],
        &vector.kcat_lines(),
    );
    let actual: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(actual, vector.expected["snapshot"]);
}

#[test]
fn malformed_line_fails_with_its_number() {
    let dump = "{\"offset\":0,\"key\":\"connector-a\",\"payload\":\"{\\\"properties\\\":{}}\"}\n{\"offset\":1}\n";
    let output = connect_state(&["replay", "--topic", "config", "-"], dump);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        text(&output.stderr),
        "error: line 2: missing `key` (use null for none)\n"
    );
    assert!(output.stdout.is_empty());

    let output = connect_state(
        &[
            "replay",
            "--topic",
            "config",
            "--skip-bad-lines",
            "--format",
            "json",
            "-",
        ],
        dump,
    );
    assert!(output.status.success());
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("skipped bad line 2: missing `key`"),
        "{stderr}"
    );
    assert!(stderr.contains("skipped 1 bad line(s)"), "{stderr}");
    let snapshot: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(snapshot["connectors"], serde_json::json!(["a"]));
}

#[test]
fn skipped_records_are_reported_on_stderr() {
    let dump = "{\"offset\":0,\"key\":\"connector-a\",\"payload\":\"not json\"}\n{\"offset\":1,\"key\":\"junk\",\"payload\":null}\n";
    let output = connect_state(
        &["replay", "--topic", "config", "--format", "json", "-"],
        dump,
    );
    assert!(output.status.success());
    assert_eq!(
        text(&output.stderr),
        "2 record(s) skipped as Java skips them (invalid_json: 1, unknown_key: 1)\n"
    );
    let snapshot: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(snapshot["offset"], 2);
}

#[test]
fn multi_partition_config_dump_is_refused() {
    let dump = "{\"offset\":0,\"partition\":1,\"key\":\"connector-a\",\"payload\":null}\n";
    let output = connect_state(&["replay", "--topic", "config", "-"], dump);
    assert_eq!(output.status.code(), Some(2));
    assert!(text(&output.stderr).contains("single partition"));
}

#[test]
fn table_output_explains_inconsistency() {
    let vectors = load_vectors();
    let (_, vector) = vectors
        .iter()
        .find(|(name, _)| name.starts_with("config-03-"))
        .expect("the inconsistent vector exists");
    let output = connect_state(&["replay", "--topic", "config", "-"], &vector.kcat_lines());
    assert!(output.status.success());
    let stdout = text(&output.stdout);
    assert!(stdout.contains("CONNECTOR"), "{stdout}");
    assert!(stdout.contains("0/2 (inconsistent)"), "{stdout}");
    assert!(
        stdout.contains("foo: commit at offset 3 announced 2 task(s); missing task ids 0"),
        "{stdout}"
    );
}

#[test]
fn missing_file_and_bad_arguments_are_clear() {
    let output = connect_state(
        &["replay", "--topic", "config", "/nonexistent/dump.jsonl"],
        "",
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(text(&output.stderr).starts_with("error: cannot open /nonexistent/dump.jsonl"));
    let output = connect_state(&["replay", "--topic", "nope", "-"], "");
    assert_eq!(output.status.code(), Some(2));
    assert!(text(&output.stderr).contains("invalid value 'nope'"));
}

#[test]
fn example_dump_replays() {
    let example = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../examples/config-topic.jsonl"
    );
    let output = Command::new(env!("CARGO_BIN_EXE_connect-state"))
        .args(["replay", "--topic", "config", example])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output.stderr));
    let stdout = text(&output.stdout);
    assert!(stdout.contains("inventory-sink"), "{stdout}");
}

#[test]
fn inspect_needs_a_topic_and_valid_properties() {
    let output = connect_state(&["inspect", "--bootstrap-servers", "127.0.0.1:1"], "");
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        text(&output.stderr),
        "error: give at least one of --config-topic, --status-topic, --offsets-topic\n"
    );
    let output = connect_state(
        &[
            "inspect",
            "--bootstrap-servers",
            "127.0.0.1:1",
            "--config-topic",
            "c",
            "-X",
            "novalue",
        ],
        "",
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(
        text(&output.stderr).contains("expected KEY=VALUE"),
        "{}",
        text(&output.stderr)
    );
}

#[test]
fn inspect_of_an_unreachable_cluster_fails_clearly_without_leaking_secrets() {
    let output = connect_state(
        &[
            "inspect",
            "--bootstrap-servers",
            "127.0.0.1:1",
            "--config-topic",
            "connect-configs",
            "--timeout",
            "2",
            "-X",
            "sasl.password=hunter2",
            "-X",
            "sasl.username=someone",
        ],
        "",
    );
    assert_eq!(output.status.code(), Some(2));
    let stderr = text(&output.stderr);
    assert!(
        stderr.starts_with("error: reading topic 'connect-configs': "),
        "{stderr}"
    );
    assert!(!stderr.contains("hunter2") && !text(&output.stdout).contains("hunter2"));
}

/// `inspect` end to end against a real broker (see `.ci/run`, which starts one):
/// `CONNECT_STATE_TEST_BROKER=127.0.0.1:19092 cargo test -p connect-state-cli -- --ignored`.
#[test]
#[ignore = "needs a real broker: set CONNECT_STATE_TEST_BROKER (see .ci/run)"]
fn inspect_end_to_end_against_a_real_broker() {
    use std::sync::Arc;

    use connect_state_kafka::{KafkaSettings, KafkaTransport};
    use connect_state_store::{ConfigStore, StoreSettings, TopicKind};
    use engine::config::{write, ConfigLog, ConfigSnapshotJson};

    let broker = common::broker();
    let (config, status, offsets) = (
        common::unique_topic("cfg"),
        common::unique_topic("st"),
        common::unique_topic("off"),
    );
    let inspect = |extra: &[&str]| {
        let mut args = vec![
            "inspect",
            "--bootstrap-servers",
            &broker,
            "--config-topic",
            &config,
            "--status-topic",
            &status,
            "--offsets-topic",
            &offsets,
            "--format",
            "json",
        ];
        args.extend_from_slice(extra);
        connect_state(&args, "")
    };
    let missing = inspect(&[]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(
        text(&missing.stderr).contains("pass --create-topics"),
        "{}",
        text(&missing.stderr)
    );
    let created = inspect(&["--create-topics"]);
    assert!(created.status.success(), "{}", text(&created.stderr));
    let empty: serde_json::Value = serde_json::from_slice(&created.stdout).unwrap();
    assert_eq!(empty["config"]["connectors"], serde_json::json!([]));
    assert_eq!(empty["status"]["connectors"], serde_json::json!({}));
    assert_eq!(empty["offsets"]["entries"], serde_json::json!([]));

    let runtime = common::runtime();
    let expected = runtime.block_on(async {
        let transport = Arc::new(KafkaTransport::new(KafkaSettings::new(broker.clone())).unwrap());
        let mut writer = ConfigStore::new(
            StoreSettings::new(&config, TopicKind::Config),
            transport,
            ConfigLog::new(),
        );
        writer.start().await.unwrap();
        writer
            .execute(
                &write::put_connector_config("orders", [("tasks.max", Some("1"))], None),
                false,
            )
            .await
            .unwrap();
        writer
            .execute(
                &write::put_task_configs("orders", [vec![("t", Some("0"))]]),
                false,
            )
            .await
            .unwrap();
        serde_json::to_value(ConfigSnapshotJson(&writer.machine().snapshot())).unwrap()
    });
    let read = inspect(&[]);
    assert!(read.status.success(), "{}", text(&read.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&read.stdout).unwrap();
    assert_eq!(doc["config"], expected);
    let table = connect_state(
        &[
            "inspect",
            "--bootstrap-servers",
            &broker,
            "--config-topic",
            &config,
        ],
        "",
    );
    assert!(
        text(&table.stdout).contains("orders"),
        "{}",
        text(&table.stdout)
    );
}

#[test]
fn every_command_help_ends_with_examples() {
    for command in [
        &[][..],
        &["demo"],
        &["replay"],
        &["inspect"],
        &["doctor"],
        &["offsets", "export"],
        &["offsets", "reset"],
        &["offsets", "import"],
        &["bench"],
    ] {
        let mut args: Vec<&str> = command.to_vec();
        args.push("--help");
        let output = connect_state(&args, "");
        assert!(output.status.success(), "{args:?}");
        let help = text(&output.stdout);
        let examples = help
            .split("Examples:")
            .nth(1)
            .unwrap_or_else(|| panic!("{args:?} has no examples:\n{help}"));
        let first = command.first().copied().unwrap_or("demo");
        assert!(
            examples.contains(&format!("connect-state {first}")),
            "{args:?}: {examples}"
        );
    }
}

/// `--save-checkpoint` writes the state at the end of a dump; `--from-checkpoint` goes on from
/// it (records it holds are dropped as redeliveries, so the whole dump or only its tail both
/// give the full replay's snapshot); a corrupt checkpoint or one of another topic is refused.
#[test]
fn a_replay_saves_a_checkpoint_and_goes_on_from_it() {
    for (name, vector) in load_vectors() {
        let lines: Vec<String> = vector.kcat_lines().lines().map(str::to_string).collect();
        let half = lines.len() / 2;
        let head = common::write_file("head.jsonl", &(lines[..half].join("\n") + "\n"));
        let tail = common::write_file("tail.jsonl", &(lines[half..].join("\n") + "\n"));
        let checkpoint = common::write_file("state.checkpoint", "");
        let topic = vector.topic.as_str();
        let saved = connect_state(
            &[
                "replay",
                "--topic",
                topic,
                "--save-checkpoint",
                checkpoint.to_str().unwrap(),
                head.to_str().unwrap(),
            ],
            "",
        );
        assert!(saved.status.success(), "{name}: {}", text(&saved.stderr));
        let full = connect_state(
            &["replay", "--topic", topic, "--format", "json", "-"],
            &vector.kcat_lines(),
        );
        for rest in ["-", tail.to_str().unwrap()] {
            let resumed = connect_state(
                &[
                    "replay",
                    "--topic",
                    topic,
                    "--format",
                    "json",
                    "--from-checkpoint",
                    checkpoint.to_str().unwrap(),
                    rest,
                ],
                &vector.kcat_lines(),
            );
            assert!(
                resumed.status.success(),
                "{name}: {}",
                text(&resumed.stderr)
            );
            assert_eq!(
                text(&resumed.stdout),
                text(&full.stdout),
                "{name}, rest {rest}"
            );
        }
        let other = if topic == "config" {
            "status"
        } else {
            "config"
        };
        let refused = connect_state(
            &[
                "replay",
                "--topic",
                other,
                "--from-checkpoint",
                checkpoint.to_str().unwrap(),
                "-",
            ],
            "",
        );
        assert_eq!(refused.status.code(), Some(2), "{name}");
        assert!(
            text(&refused.stderr).contains(&format!("not a checkpoint of the {other} topic")),
            "{name}: {}",
            text(&refused.stderr)
        );
    }
    let corrupt = common::write_file("corrupt.checkpoint", "not a checkpoint");
    let refused = connect_state(
        &[
            "replay",
            "--topic",
            "config",
            "--from-checkpoint",
            corrupt.to_str().unwrap(),
            "-",
        ],
        "",
    );
    assert_eq!(refused.status.code(), Some(2));
    let conflicting = connect_state(
        &[
            "replay",
            "--topic",
            "config",
            "--as-of",
            "3",
            "--from-checkpoint",
            corrupt.to_str().unwrap(),
            "-",
        ],
        "",
    );
    assert_eq!(conflicting.status.code(), Some(2));
}
