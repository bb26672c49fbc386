//! The Kafka transport against librdkafka's in-process mock cluster (nothing to install). The
//! mock has no admin API, no compaction and no aborted-record filtering: topics are created
//! through the mock, and compaction and transactions aborts are covered by the simulator and the
//! real-broker tests.

use std::sync::Arc;
use std::time::Duration;

use connect_state_kafka::{KafkaSettings, KafkaTransport};
use connect_state_store::{
    FetchedBatch, ProduceMode, Store, StoreSettings, TopicKind, Transport, TransportError,
};
use engine::config::write;
use engine::config::ConfigLog;
use engine::offsets::{default_partition, OffsetLog};
use engine::status::StatusLog;
use engine::ProducerRecord;
use rdkafka::mocking::MockCluster;
use rdkafka::types::{RDKafkaApiKey, RDKafkaRespErr};

fn transport(
    mock: &MockCluster<'_, rdkafka::producer::DefaultProducerContext>,
    transactional: bool,
) -> Arc<KafkaTransport> {
    let mut settings = KafkaSettings::new(mock.bootstrap_servers());
    settings.request_timeout = Duration::from_secs(10);
    if transactional {
        settings.transactional_id = Some("connect-cluster-test".into());
    }
    Arc::new(KafkaTransport::new(settings).expect("clients are created"))
}

fn record(key: &str, value: Option<&str>) -> ProducerRecord {
    ProducerRecord {
        key: key.as_bytes().to_vec(),
        value: value.map(|v| v.as_bytes().to_vec()),
        partition: None,
    }
}

/// A fetched batch's records as `(offset, key)`.
fn offsets_and_keys(batch: &FetchedBatch) -> Vec<(i64, Vec<u8>)> {
    batch
        .records
        .iter()
        .map(|r| (r.offset, r.key.unwrap().to_vec()))
        .collect()
}

/// `(offset, key)` of the records at `offsets` of a partition whose keys are
/// `TOPIC-PARTITION-OFFSET`.
fn keyed(topic: &str, partition: i32, offsets: &[i64]) -> Vec<(i64, Vec<u8>)> {
    offsets
        .iter()
        .map(|&o| (o, format!("{topic}-{partition}-{o}").into_bytes()))
        .collect()
}

/// A store over an existing mock topic (the mock cannot describe configs, so `start` is replaced
/// by its two steps).
async fn caught_up<M: engine::TopicMachine + Default>(
    transport: Arc<KafkaTransport>,
    topic: &str,
    kind: TopicKind,
) -> Store<M, KafkaTransport> {
    let mut store = Store::new(StoreSettings::new(topic, kind), transport, M::default());
    store.read_to_end().await.expect("read to end");
    store.machine_mut().mark_caught_up();
    store
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn config_writes_read_back_with_tombstones() {
    let mock = MockCluster::new(1).unwrap();
    mock.create_topic("configs", 1, 1).unwrap();
    let transport = transport(&mock, false);
    let mut writer = caught_up::<ConfigLog>(transport.clone(), "configs", TopicKind::Config).await;
    writer
        .execute(
            &write::put_connector_config("c", [("k", Some("v"))], None),
            false,
        )
        .await
        .unwrap();
    writer
        .execute(
            &write::put_task_configs("c", [vec![("t", Some("0"))], vec![("t", Some("1"))]]),
            false,
        )
        .await
        .unwrap();
    writer
        .execute(&write::remove_connector_config("gone"), false)
        .await
        .unwrap();
    let events = writer
        .execute(&write::put_connector_config("gone", [], None), false)
        .await
        .unwrap();
    assert_eq!(events.len(), 1);
    writer
        .execute(&write::remove_connector_config("gone"), false)
        .await
        .unwrap();

    let reader = caught_up::<ConfigLog>(transport, "configs", TopicKind::Config).await;
    let snapshot = reader.machine().snapshot();
    assert_eq!(snapshot, writer.machine().snapshot());
    assert_eq!(snapshot.tasks("c").len(), 2);
    assert!(!snapshot.contains("gone"));
    assert_eq!(
        snapshot.offset(),
        9,
        "every record, tombstones included, was read"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn empty_and_multi_partition_topics() {
    let mock = MockCluster::new(1).unwrap();
    mock.create_topic("empty", 3, 1).unwrap();
    mock.create_topic("offsets", 25, 1).unwrap();
    let transport = transport(&mock, false);
    let empty = caught_up::<StatusLog>(transport.clone(), "empty", TopicKind::Status).await;
    assert_eq!(empty.machine().snapshot().connectors().count(), 0);

    let records: Vec<ProducerRecord> = (0..40)
        .map(|i| {
            record(
                &format!(r#"["src",{{"file":"f{i}"}}]"#),
                Some(r#"{"pos":1}"#),
            )
        })
        .collect();
    let placed = transport
        .produce("offsets", &records, ProduceMode::Plain)
        .await
        .unwrap();
    for (r, (partition, _)) in records.iter().zip(&placed) {
        assert_eq!(
            Some(*partition),
            default_partition(&r.key, 25),
            "Java's murmur2 placement"
        );
    }
    let tombstone = record(r#"["src",{"file":"f3"}]"#, None);
    transport
        .produce("offsets", &[tombstone], ProduceMode::Plain)
        .await
        .unwrap();
    let reader = caught_up::<OffsetLog>(transport, "offsets", TopicKind::Offsets).await;
    assert_eq!(reader.machine().snapshot().len(), 39);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn transactional_leader_writes() {
    let mock = MockCluster::new(1).unwrap();
    mock.create_topic("configs", 1, 1).unwrap();
    let transport = transport(&mock, true);
    let mut leader = caught_up::<ConfigLog>(transport.clone(), "configs", TopicKind::Config).await;
    leader
        .execute(
            &write::put_connector_config("c", [("k", Some("v"))], None),
            true,
        )
        .await
        .unwrap();
    leader
        .execute(
            &write::put_task_configs("c", [vec![("t", Some("0"))]]),
            true,
        )
        .await
        .unwrap();
    let reader = caught_up::<ConfigLog>(transport, "configs", TopicKind::Config).await;
    let snapshot = reader.machine().snapshot();
    assert_eq!(snapshot.tasks("c").len(), 1);
    // Transaction markers take offsets: the reader's position moved past them.
    assert!(snapshot.offset() >= 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broker_outage_mid_read_ends_in_success_after_recovery() {
    let mock = MockCluster::new(1).unwrap();
    mock.create_topic("status", 5, 1).unwrap();
    let transport = transport(&mock, false);
    let records: Vec<ProducerRecord> = (0..200)
        .map(|i| {
            record(
                &format!("status-connector-c{i}"),
                Some(r#"{"state":"RUNNING","trace":null,"worker_id":"w:8083","generation":1}"#),
            )
        })
        .collect();
    transport
        .produce("status", &records, ProduceMode::Plain)
        .await
        .unwrap();
    let mut store = Store::new(
        StoreSettings::new("status", TopicKind::Status),
        transport,
        StatusLog::new(),
    );
    mock.broker_down(1).unwrap();
    let up = async {
        tokio::time::sleep(Duration::from_millis(500)).await;
        mock.broker_up(1).unwrap();
    };
    let (read, ()) = tokio::join!(store.read_to_end(), up);
    read.unwrap();
    assert_eq!(store.machine().snapshot().connectors().count(), 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn injected_produce_errors_are_typed_with_context() {
    let mock = MockCluster::new(1).unwrap();
    mock.create_topic("configs", 1, 1).unwrap();
    let transport = transport(&mock, false);
    mock.request_errors(
        RDKafkaApiKey::Produce,
        &[RDKafkaRespErr::RD_KAFKA_RESP_ERR_INVALID_RECORD],
    );
    let error = transport
        .produce(
            "configs",
            &[record("connector-c", Some("{}"))],
            ProduceMode::Plain,
        )
        .await
        .unwrap_err();
    match error {
        TransportError::ProduceFailed {
            topic,
            written,
            total,
            ..
        } => {
            assert_eq!((topic.as_str(), written, total), ("configs", 0, 1));
        }
        other => panic!("expected a produce failure, got {other}"),
    }
    // Once the broker stops failing, produces go through again.
    mock.clear_request_errors(RDKafkaApiKey::Produce);
    transport
        .produce(
            "configs",
            &[record("connector-c", Some("{}"))],
            ProduceMode::Plain,
        )
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_topics_are_clear_errors() {
    let mock = MockCluster::new(1).unwrap();
    let transport = transport(&mock, false);
    assert_eq!(transport.describe_topic("nope").await.unwrap(), None);
    assert!(matches!(
        transport.end_offsets("nope").await,
        Err(TransportError::UnknownTopic { .. })
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broker_outage_mid_write_ends_in_success_after_recovery() {
    let mock = MockCluster::new(1).unwrap();
    mock.create_topic("configs", 1, 1).unwrap();
    let transport = transport(&mock, false);
    let mut writer = caught_up::<ConfigLog>(transport.clone(), "configs", TopicKind::Config).await;
    mock.broker_down(1).unwrap();
    let up = async {
        tokio::time::sleep(Duration::from_millis(500)).await;
        mock.broker_up(1).unwrap();
    };
    let plan = write::put_connector_config("c", [("k", Some("v"))], None);
    let (written, ()) = tokio::join!(writer.execute(&plan, false), up);
    assert_eq!(
        written.unwrap().len(),
        1,
        "the config was written and read back once"
    );
    let reader = caught_up::<ConfigLog>(transport, "configs", TopicKind::Config).await;
    assert_eq!(
        reader.machine().snapshot().offset(),
        1,
        "no duplicate, no partial write"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_outage_longer_than_the_timeout_is_a_clear_error() {
    let mock = MockCluster::new(1).unwrap();
    mock.create_topic("configs", 1, 1).unwrap();
    let mut settings = KafkaSettings::new(mock.bootstrap_servers());
    settings.request_timeout = Duration::from_secs(2);
    let transport = Arc::new(KafkaTransport::new(settings).unwrap());
    transport
        .produce(
            "configs",
            &[record("connector-c", Some(r#"{"properties":{}}"#))],
            ProduceMode::Plain,
        )
        .await
        .unwrap();
    mock.broker_down(1).unwrap();
    let error = transport.fetch("configs", 0, 0, 10).await.unwrap_err();
    assert!(
        matches!(&error, TransportError::Fetch { topic, partition: 0, offset: 0, .. } if topic == "configs"),
        "{error}"
    );
    mock.broker_up(1).unwrap();
}

/// Issue 14 item 9: topic creation is bounded by the settings' request timeout (it once took
/// librdkafka's 60 s default whatever `--timeout` said). The mock broker answers 30 s late.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn topic_creation_gives_up_after_the_request_timeout() {
    let mock = MockCluster::new(1).unwrap();
    let mut settings = KafkaSettings::new(mock.bootstrap_servers());
    settings.request_timeout = Duration::from_secs(1);
    let transport = KafkaTransport::new(settings).expect("clients are created");
    // Connected first, so the delay hits the creation itself.
    assert!(transport.describe_topic("absent").await.is_ok());
    mock.broker_round_trip_time(1, Duration::from_secs(30))
        .unwrap();
    let topic = connect_state_store::NewTopic {
        name: "created".into(),
        partitions: 1,
        replication_factor: None,
        configs: [("cleanup.policy".to_string(), "compact".to_string())].into(),
    };
    let created =
        tokio::time::timeout(Duration::from_secs(15), transport.create_topic(&topic)).await;
    assert!(
        matches!(created, Ok(Err(_))),
        "the creation fails within its timeout: {created:?}"
    );
}

/// Issue 14 item 8: a request timeout librdkafka cannot take (it takes milliseconds as a
/// 32-bit integer) is refused when the clients are made, instead of wrapping around.
#[test]
fn a_request_timeout_beyond_librdkafkas_range_is_refused() {
    for timeout in [
        connect_state_kafka::MAX_REQUEST_TIMEOUT + Duration::from_millis(1),
        Duration::from_secs(4_294_969),
        Duration::ZERO,
    ] {
        let mut settings = KafkaSettings::new("127.0.0.1:1");
        settings.request_timeout = timeout;
        let err = KafkaTransport::new(settings).err().expect("refused");
        assert!(
            err.to_string()
                .contains("the request timeout must be between 1 ms and 2147483647 ms"),
            "{err}"
        );
    }
    let mut settings = KafkaSettings::new("127.0.0.1:1");
    settings.request_timeout = connect_state_kafka::MAX_REQUEST_TIMEOUT;
    assert!(KafkaTransport::new(settings).is_ok());
}

/// Reads move from partition to partition and topic to topic with every partition kept
/// assigned (each with a queue of its own), and a read that goes back or skips ahead in a
/// partition gets exactly the records from where it asks.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fetches_go_round_partitions_and_topics_and_move_back_or_ahead_exactly() {
    let mock = MockCluster::new(1).unwrap();
    mock.create_topic("round", 3, 1).unwrap();
    mock.create_topic("other", 1, 1).unwrap();
    let transport = transport(&mock, false);
    let placed = |topic: &'static str, partition: i32, n: i64| {
        let transport = transport.clone();
        async move {
            let records: Vec<ProducerRecord> = (0..n)
                .map(|i| ProducerRecord {
                    partition: Some(partition),
                    ..record(&format!("{topic}-{partition}-{i}"), Some("v"))
                })
                .collect();
            transport
                .produce(topic, &records, ProduceMode::Plain)
                .await
                .unwrap();
        }
    };
    for partition in 0..3 {
        placed("round", partition, 10).await;
    }
    placed("other", 0, 4).await;
    // (topic, partition, from, max) and the offsets that fetch must give.
    let steps: [(&str, i32, i64, usize, &[i64]); 9] = [
        ("round", 0, 0, 2, &[0, 1]),
        ("round", 1, 0, 3, &[0, 1, 2]),
        ("round", 2, 0, 1, &[0]),
        ("round", 0, 2, 2, &[2, 3]),
        ("other", 0, 0, 10, &[0, 1, 2, 3]),
        ("round", 1, 3, 2, &[3, 4]),
        // Back in partition 0, then ahead in partition 2.
        ("round", 0, 1, 2, &[1, 2]),
        ("round", 2, 7, 10, &[7, 8, 9]),
        ("round", 0, 3, 100, &[3, 4, 5, 6, 7, 8, 9]),
    ];
    for (topic, partition, from, max, offsets) in steps {
        let batch = transport.fetch(topic, partition, from, max).await.unwrap();
        assert_eq!(
            offsets_and_keys(&batch),
            keyed(topic, partition, offsets),
            "{topic} partition {partition} from {from}"
        );
        assert!(batch.records.iter().all(|r| r.partition == partition));
        assert_eq!(batch.next_offset, offsets.last().unwrap() + 1);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn partitions_expected_at_once_are_fetched_in_any_order_and_from_elsewhere() {
    let mock = MockCluster::new(1).unwrap();
    mock.create_topic("ahead", 3, 1).unwrap();
    let transport = transport(&mock, false);
    for partition in 0..3 {
        let records: Vec<ProducerRecord> = (0..6)
            .map(|i| ProducerRecord {
                partition: Some(partition),
                ..record(&format!("ahead-{partition}-{i}"), Some("v"))
            })
            .collect();
        transport
            .produce("ahead", &records, ProduceMode::Plain)
            .await
            .unwrap();
    }
    // Every partition started where the read will begin; then fetched in another order, one
    // of them from somewhere else than said.
    transport
        .expect_fetches("ahead", &[(0, 0), (1, 2), (2, 4)])
        .await;
    let steps: [(i32, i64, &[i64]); 4] = [
        (2, 4, &[4, 5]),
        (0, 0, &[0, 1, 2, 3, 4, 5]),
        (1, 3, &[3, 4, 5]),
        (1, 0, &[0, 1, 2, 3, 4, 5]),
    ];
    for (partition, from, offsets) in steps {
        let batch = transport
            .fetch("ahead", partition, from, 100)
            .await
            .unwrap();
        assert_eq!(
            offsets_and_keys(&batch),
            keyed("ahead", partition, offsets),
            "partition {partition} from {from}"
        );
        assert_eq!(batch.next_offset, 6);
    }
}
