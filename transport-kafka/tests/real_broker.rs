//! The Kafka transport against a real Apache Kafka broker (`scripts/local-cluster`, which
//! `.ci/run` starts on 127.0.0.1). These tests are ignored unless run explicitly with the
//! broker's address:
//!
//! ```sh
//! eval "$(scripts/local-cluster start | sed -n 's/^bootstrap=/export CONNECT_STATE_TEST_BROKER=/p')"
//! cargo test -p connect-state-kafka --test real_broker -- --ignored
//! ```

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use connect_state_kafka::{KafkaSettings, KafkaTransport};
use connect_state_store::{
    ConfigStore, NewTopic, ProduceMode, Store, StoreError, StoreSettings, TopicKind, Transport,
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

/// A store of `topic` of kind `kind`, started (the topic created as Connect creates it).
async fn started<M: engine::TopicMachine + Default>(
    transport: &Arc<KafkaTransport>,
    topic: &str,
    kind: TopicKind,
) -> Store<M, KafkaTransport> {
    let mut store = Store::new(
        StoreSettings::new(topic, kind),
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
    started::<ConfigLog>(&transport, &config, TopicKind::Config).await;
    started::<StatusLog>(&transport, &status, TopicKind::Status).await;
    started::<OffsetLog>(&transport, &offsets, TopicKind::Offsets).await;
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
        StoreSettings::new(&deleting, TopicKind::Config),
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
        StoreSettings::new(&status, TopicKind::Config),
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
    let mut settings = StoreSettings::new(unique("absent"), TopicKind::Config);
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
        StoreSettings::new(&topic, TopicKind::Config),
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
        StoreSettings::new(&topic, TopicKind::Config),
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
    // Segments roll after 100 ms and the cleaner takes any dirty segment, so the broker's own
    // LogCleaner compacts the topic within seconds.
    let mut settings = StoreSettings::new(&topic, TopicKind::Offsets);
    settings.partitions = Some(1);
    for (k, v) in [
        ("segment.ms", "100"),
        ("min.cleanable.dirty.ratio", "0.01"),
        ("delete.retention.ms", "100"),
        ("max.compaction.lag.ms", "1000"),
    ] {
        settings.topic_configs.insert(k.into(), v.into());
    }
    let mut writer = Store::new(settings, transport.clone(), OffsetLog::new());
    writer.start().await.unwrap();
    let mut written = 0u64;
    for round in 0..20 {
        let records: Vec<ProducerRecord> = (0..10)
            .map(|i| ProducerRecord {
                key: format!(r#"["src",{{"file":"f{i}"}}]"#).into_bytes(),
                value: (round < 19 || i % 3 != 0)
                    .then(|| format!(r#"{{"pos":{round}}}"#).into_bytes()),
                partition: None,
            })
            .collect();
        written += records.len() as u64;
        writer
            .write(
                &records,
                ProduceMode::Plain,
                false,
                "Failed to write offsets",
            )
            .await
            .unwrap();
        // Records in several segments: a segment rolls when a record comes after segment.ms.
        tokio::time::sleep(Duration::from_millis(120)).await;
    }
    // A last record rolls the active segment, which the cleaner never touches.
    let roll = ProducerRecord {
        key: br#"["roll",{"r":0}]"#.to_vec(),
        value: Some(br#"{"pos":0}"#.to_vec()),
        partition: None,
    };
    writer
        .write(&[roll], ProduceMode::Plain, true, "Failed to write offsets")
        .await
        .unwrap();
    written += 1;
    // Wait until the broker has compacted (fewer records survive than were written).
    let mut raw_settings = KafkaSettings::new(broker());
    raw_settings.request_timeout = Duration::from_secs(10);
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let surviving = loop {
        let (records, _) = tokio::task::spawn_blocking({
            let (s, t) = (raw_settings.clone(), topic.clone());
            move || connect_state_kafka::raw::count_bytes(&s, &t)
        })
        .await
        .unwrap()
        .unwrap();
        if records < written || std::time::Instant::now() > deadline {
            break records;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    assert!(
        surviving < written,
        "the broker did not compact within a minute ({surviving} of {written} records left)"
    );
    let mut reader = Store::new(
        StoreSettings::new(&topic, TopicKind::Offsets),
        transport,
        OffsetLog::new(),
    );
    reader.start().await.unwrap();
    let (written, read) = (writer.machine().snapshot(), reader.machine().snapshot());
    assert_eq!(
        read.len(),
        7,
        "keys 0, 3, 6 and 9 were deleted last; the roll key stays"
    );
    let pairs = |s: &engine::offsets::OffsetSnapshot| -> Vec<(Vec<u8>, Vec<u8>)> {
        s.entries()
            .map(|(k, v)| (k.unwrap().to_vec(), v.value().to_vec()))
            .collect()
    };
    assert_eq!(pairs(&read), pairs(&written));
}
