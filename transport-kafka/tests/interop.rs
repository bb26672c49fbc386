//! Interoperability with an independent client, Python's `confluent-kafka` (PyPI), through
//! librdkafka's mock cluster (which other processes can reach on loopback): records it produces
//! are read correctly by us, and its kcat-format dump of a topic we wrote replays to the state
//! we hold. Needs `python3` with `confluent-kafka` (`pip install confluent-kafka`; CI installs
//! it): without it they skip with a notice, unless `CONNECT_STATE_REQUIRE_EXTERNAL=1`.

use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use connect_state_kafka::{KafkaSettings, KafkaTransport};
use connect_state_store::{Store, StoreSettings, TopicKind};
use engine::config::write;
use engine::config::{ConfigLog, TargetState};
use engine::Record;
use rdkafka::mocking::MockCluster;

const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/interop.py");

/// Whether the interop tests can run here: `python3` with `confluent-kafka` (a skip notice,
/// or a failure under `CONNECT_STATE_REQUIRE_EXTERNAL=1`, when not).
fn confluent_kafka() -> bool {
    match connect_state_tests::external::python_module("confluent_kafka") {
        Ok(()) => true,
        Err(why) => {
            connect_state_tests::external::skip("Python's confluent-kafka", &why);
            false
        }
    }
}

fn python(args: &[&str], stdin: &str) -> String {
    let mut command = Command::new("python3");
    command.arg(SCRIPT).args(args);
    let output = connect_state_tests::external::run_with_stdin(&mut command, stdin.as_bytes())
        .expect("python3 runs (the interop tests need python3 with confluent-kafka)");
    assert!(
        output.status.success(),
        "interop.py {args:?} failed (is confluent-kafka installed? pip install confluent-kafka): {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

fn transport(bootstrap: &str) -> Arc<KafkaTransport> {
    let mut settings = KafkaSettings::new(bootstrap);
    settings.request_timeout = Duration::from_secs(10);
    Arc::new(KafkaTransport::new(settings).unwrap())
}

async fn read_config(transport: Arc<KafkaTransport>, topic: &str) -> ConfigLog {
    let mut store = Store::new(
        StoreSettings::new(topic, TopicKind::Config),
        transport,
        ConfigLog::new(),
    );
    store.read_to_end().await.unwrap();
    store.into_machine()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn records_produced_by_confluent_kafka_are_read_correctly() {
    if !confluent_kafka() {
        return;
    }
    let mock = MockCluster::new(1).unwrap();
    mock.create_topic("configs", 1, 1).unwrap();
    let records = [
        (
            "connector-orders",
            Some(r#"{"properties":{"connector.class":"X","tasks.max":"2"}}"#),
        ),
        ("task-orders-0", Some(r#"{"properties":{"t":"0"}}"#)),
        ("task-orders-1", Some(r#"{"properties":{"t":"1"}}"#)),
        ("commit-orders", Some(r#"{"tasks":2}"#)),
        (
            "target-state-orders",
            Some(r#"{"state":"PAUSED","state.v2":"STOPPED"}"#),
        ),
        ("connector-gone", Some(r#"{"properties":{}}"#)),
        ("connector-gone", None),
    ];
    let lines: String = records
        .iter()
        .map(|(k, v)| serde_json::json!({"key": k, "value": v}).to_string() + "\n")
        .collect();
    python(&["produce", &mock.bootstrap_servers(), "configs"], &lines);

    let read = read_config(transport(&mock.bootstrap_servers()), "configs").await;
    let mut expected = ConfigLog::new();
    for (offset, (key, value)) in records.iter().enumerate() {
        expected
            .handle_record(Record::new(
                key.as_bytes(),
                value.map(str::as_bytes),
                offset as i64,
            ))
            .unwrap();
    }
    assert_eq!(read.snapshot(), expected.snapshot());
    let snapshot = read.snapshot();
    assert_eq!(snapshot.tasks("orders").len(), 2);
    assert_eq!(snapshot.target_state("orders"), Some(TargetState::Stopped));
    assert!(!snapshot.contains("gone"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_confluent_kafka_dump_of_our_writes_replays_to_our_state() {
    if !confluent_kafka() {
        return;
    }
    let mock = MockCluster::new(1).unwrap();
    mock.create_topic("configs", 1, 1).unwrap();
    let transport = transport(&mock.bootstrap_servers());
    let mut writer = Store::new(
        StoreSettings::new("configs", TopicKind::Config),
        transport,
        ConfigLog::new(),
    );
    writer.read_to_end().await.unwrap();
    writer.machine_mut().mark_caught_up();
    writer
        .execute(
            &write::put_connector_config(
                "s\u{e9}ance \u{1F600}",
                [("k", Some("v\"q\u{1}"))],
                Some(TargetState::Paused),
            ),
            false,
        )
        .await
        .unwrap();
    writer
        .execute(
            &write::put_task_configs("s\u{e9}ance \u{1F600}", [vec![("t", Some("0"))]]),
            false,
        )
        .await
        .unwrap();
    writer
        .execute(&write::remove_connector_config("nobody"), false)
        .await
        .unwrap();

    let dump = python(&["dump", &mock.bootstrap_servers(), "configs"], "");
    let records = dump_records(&dump);
    let mut replayed = ConfigLog::new();
    for (offset, key, value) in &records {
        replayed
            .handle_record(Record::new(
                key.as_bytes(),
                value.as_deref().map(str::as_bytes),
                *offset,
            ))
            .unwrap();
    }
    assert_eq!(replayed.snapshot(), writer.machine().snapshot());
    assert_eq!(records.len(), 6);
}

/// The dump's `offset`, `key` and `payload` members (the CLI's full kcat parser is tested in the
/// CLI crate; this keeps the transport crate free of a CLI dependency).
fn dump_records(dump: &str) -> Vec<(i64, String, Option<String>)> {
    dump.lines()
        .map(|line| {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            (
                v["offset"].as_i64().unwrap(),
                v["key"].as_str().unwrap().to_string(),
                v["payload"].as_str().map(str::to_string),
            )
        })
        .collect()
}
