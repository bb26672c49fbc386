//! The Kafka transport against a real Kafka-protocol broker process (nisshi, a Kafka-compatible
//! broker from crates.io; see `.ci/run`, which installs and starts it on 127.0.0.1). These tests
//! are ignored unless run explicitly with the broker's address:
//!
//! ```sh
//! CONNECT_STATE_TEST_BROKER=127.0.0.1:19092 cargo test -p connect-state-kafka --test real_broker -- --ignored
//! ```
//!
//! Known broker behaviours the reader must survive (not assert away): after compaction a fetch
//! can return a batch again (offsets repeat), the low watermark moves to the first surviving
//! offset, and `read_committed` does not hide aborted records.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use connect_state_kafka::{KafkaSettings, KafkaTransport};
use connect_state_store::{
    ConfigStore, NewTopic, ProduceMode, Store, StoreError, StoreSettings, TopicRole, Transport,
};
use engine::config::write;
use engine::config::ConfigLog;
use engine::offsets::OffsetLog;
use engine::status::StatusLog;
use engine::ProducerRecord;

fn broker() -> String {
    std::env::var("CONNECT_STATE_TEST_BROKER")
        .expect("CONNECT_STATE_TEST_BROKER must name the test broker (see .ci/run)")
}

fn transport() -> Arc<KafkaTransport> {
    let mut settings = KafkaSettings::new(broker());
    settings.request_timeout = Duration::from_secs(20);
    Arc::new(KafkaTransport::new(settings).unwrap())
}

/// A topic name no other test (or earlier run against the same broker) uses.
fn unique(prefix: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("{prefix}-{nanos}")
}

/// A store of `topic` in `role`, started (the topic created as Connect creates it).
async fn started<M: engine::TopicMachine + Default>(
    transport: &Arc<KafkaTransport>,
    topic: &str,
    role: TopicRole,
) -> Store<M, KafkaTransport> {
    let mut store = Store::new(
        StoreSettings::new(topic, role),
        transport.clone(),
        M::default(),
    );
    store.start().await.unwrap();
    store
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a real broker: set CONNECT_STATE_TEST_BROKER (see .ci/run)"]
async fn topics_are_created_and_validated_through_the_admin_api() {
    let transport = transport();
    let (config, status, offsets) = (unique("cfg"), unique("status"), unique("offsets"));
    started::<ConfigLog>(&transport, &config, TopicRole::Config).await;
    started::<StatusLog>(&transport, &status, TopicRole::Status).await;
    started::<OffsetLog>(&transport, &offsets, TopicRole::Offsets).await;
    for (topic, partitions) in [(&config, 1), (&status, 5), (&offsets, 25)] {
        let description = transport.describe_topic(topic).await.unwrap().unwrap();
        assert_eq!(description.partitions, partitions, "{topic}");
        assert_eq!(description.cleanup_policy, "compact", "{topic}");
    }
    // A non-compacted topic and a multi-partition config topic are refused with Java's messages.
    let deleting = unique("deleting");
    transport
        .create_topic(&NewTopic {
            name: deleting.clone(),
            partitions: 1,
            replication_factor: None,
            configs: BTreeMap::from([("cleanup.policy".to_string(), "delete".to_string())]),
        })
        .await
        .unwrap();
    let error = ConfigStore::new(
        StoreSettings::new(&deleting, TopicRole::Config),
        transport.clone(),
        ConfigLog::new(),
    )
    .start()
    .await
    .unwrap_err();
    assert!(
        error.to_string().contains("'cleanup.policy=delete'"),
        "{error}"
    );
    let error = ConfigStore::new(
        StoreSettings::new(&status, TopicRole::Config),
        transport.clone(),
        ConfigLog::new(),
    )
    .start()
    .await
    .unwrap_err();
    assert!(
        error.to_string().contains("but found 5 partitions"),
        "{error}"
    );
    let mut settings = StoreSettings::new(unique("absent"), TopicRole::Config);
    settings.create_if_missing = false;
    let error = ConfigStore::new(settings, transport, ConfigLog::new())
        .start()
        .await
        .unwrap_err();
    assert!(matches!(error, StoreError::MissingTopic { .. }), "{error}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a real broker: set CONNECT_STATE_TEST_BROKER (see .ci/run)"]
async fn a_second_independent_reader_sees_what_the_writer_holds() {
    let topic = unique("cfg");
    let mut writer = ConfigStore::new(
        StoreSettings::new(&topic, TopicRole::Config),
        transport(),
        ConfigLog::new(),
    );
    writer.start().await.unwrap();
    writer
        .execute(
            &write::put_connector_config("orders", [("tasks.max", Some("2"))], None),
            false,
        )
        .await
        .unwrap();
    writer
        .execute(
            &write::put_task_configs("orders", [vec![("t", Some("0"))], vec![("t", Some("1"))]]),
            false,
        )
        .await
        .unwrap();
    writer
        .execute(
            &write::put_target_state("orders", engine::config::TargetState::Paused),
            false,
        )
        .await
        .unwrap();
    writer.read_to_end().await.unwrap();
    writer
        .execute(&write::put_connector_config("gone", [], None), false)
        .await
        .unwrap();
    writer
        .execute(&write::remove_connector_config("gone"), false)
        .await
        .unwrap();
    // A second reader, with its own clients.
    let mut reader = ConfigStore::new(
        StoreSettings::new(&topic, TopicRole::Config),
        transport(),
        ConfigLog::new(),
    );
    reader.start().await.unwrap();
    assert_eq!(reader.machine().snapshot(), writer.machine().snapshot());
    assert_eq!(reader.machine().snapshot().tasks("orders").len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a real broker: set CONNECT_STATE_TEST_BROKER (see .ci/run)"]
async fn a_topic_compacted_by_the_broker_reads_to_the_same_state() {
    let topic = unique("offsets");
    let transport = transport();
    let mut writer = Store::new(
        StoreSettings::new(&topic, TopicRole::Offsets),
        transport.clone(),
        OffsetLog::new(),
    );
    writer.start().await.unwrap();
    for round in 0..20 {
        let records: Vec<ProducerRecord> = (0..10)
            .map(|i| ProducerRecord {
                key: format!(r#"["src",{{"file":"f{i}"}}]"#).into_bytes(),
                value: (round < 19 || i % 3 != 0)
                    .then(|| format!(r#"{{"pos":{round}}}"#).into_bytes()),
                partition: None,
            })
            .collect();
        writer
            .write(
                &records,
                ProduceMode::Plain,
                false,
                "Failed to write offsets",
            )
            .await
            .unwrap();
    }
    writer.read_to_end().await.unwrap();
    // The broker compacts in the background (its maintenance interval); give it a few passes.
    tokio::time::sleep(Duration::from_secs(4)).await;
    let mut reader = Store::new(
        StoreSettings::new(&topic, TopicRole::Offsets),
        transport,
        OffsetLog::new(),
    );
    reader.start().await.unwrap();
    let (written, read) = (writer.machine().snapshot(), reader.machine().snapshot());
    assert_eq!(read.len(), 6, "keys 0, 3, 6 and 9 were deleted last");
    let pairs = |s: &engine::offsets::OffsetSnapshot| -> Vec<(Vec<u8>, Vec<u8>)> {
        s.entries()
            .map(|(k, v)| (k.unwrap().to_vec(), v.value().to_vec()))
            .collect()
    };
    assert_eq!(pairs(&read), pairs(&written));
}
