//! The status and offsets topics through the generic store and the in-memory compacting-log
//! simulator: the status and offsets properties of `spec/compaction.md` §4 (last paragraph),
//! with the rules of `status-offsets-topics.md` §3 (status, KIP-558) and §4 (offsets, KIP-875).
//!
//! Every property runs real stores (`Store<StatusLog, _>`, `Store<OffsetLog, _>`) over
//! `MemoryTransport`s sharing one `MemoryCluster`: a writer with random duplicate deliveries, and
//! an independent reader that starts at a random point, fetches in random batch sizes and has
//! the log cleaned under its feet before fetches. Two references check it:
//!
//! * the **full log**: every record the writer appended, captured from the simulator right after
//!   each write (before anything can clean it). Only conclusions that do not depend on the
//!   reader's interleaving of partitions or on what compaction removed are drawn from it;
//! * the **consumed sequence**: every record the reader's transport handed to the store, in
//!   the order the store applied them (a recording [`Transport`] wrapper). A naive fold over it
//!   must give exactly the reader's snapshot, including the cross-key rules (a connector
//!   tombstone drops the task statuses of its connector; offsets partition sets compare maps
//!   regardless of member order), which depend on the interleaving.
//!
//! Case count: `PROPTEST_CASES` (proptest's default, 256).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

use connect_state_memory::{FetchFault, MemoryCluster, MemoryTransport};
use connect_state_ops::rest::Answer;
use connect_state_store::{Store, TopicKind};
use engine::json::{JsonObject, JsonValue};
use engine::offsets::{default_partition, kip875, offset_key, OffsetLog, OrderedMap};
use engine::status::write::topic_status_record;
use engine::status::{
    Status, StatusEvent, StatusLog, StatusState, StatusUpdate, TopicStatus, TopicTracking,
    TopicTrackingError,
};
use engine::ProducerRecord;
use proptest::prelude::*;

use connect_state_tests::reference::offsets::*;
use connect_state_tests::reference::status::*;
use connect_state_tests::reference::{check_consumed, new_cluster};
use connect_state_tests::sim::{lock, reader_transport, runtime, store, write, LogCapture};

// ---------------------------------------------------------------------------------------------
// The properties.

proptest! {
    /// Property 1: status, last record per key wins except the stale-UNASSIGNED rule; a
    /// connector tombstone drops its task statuses but not its topics.
    #[test]
    fn status_last_write_wins_through_the_simulator(run in status_run()) {
        check_status(&run_status(&run))?;
    }

    /// Property 2: KIP-558 reset writes one tombstone per active topic and, read back, leaves
    /// the active set empty (but for topics touched after the reset was computed); with topic
    /// tracking or its reset disabled the 403s come back and nothing is written.
    #[test]
    fn active_topics_reset_through_the_simulator(run in topics_run()) {
        run_topics(&run)?;
    }

    /// Property 3: offsets, latest value per exact key bytes wins, tombstones remove, partition
    /// sets equal the reference fold, KIP-875 reset tombstones land where their key lives and
    /// empty the listing.
    #[test]
    fn offsets_through_the_simulator(run in offsets_run()) {
        check_offsets(&run_offsets(&run))?;
    }

    /// Property 4: the same seed and operations give the same cluster, the same consumption,
    /// the same snapshots and the same events.
    #[test]
    fn runs_are_deterministic(status in status_run(), offsets in offsets_run()) {
        let (a, b) = (run_status(&status), run_status(&status));
        prop_assert_eq!(&a.snapshot, &b.snapshot);
        prop_assert_eq!(&a.events, &b.events);
        prop_assert_eq!(&a.consumed, &b.consumed);
        prop_assert!(a.cluster == b.cluster);
        let (a, b) = (run_offsets(&offsets), run_offsets(&offsets));
        prop_assert_eq!(&a.before_reset, &b.before_reset);
        prop_assert_eq!(&a.snapshot, &b.snapshot);
        prop_assert_eq!(&a.events, &b.events);
        prop_assert_eq!(&a.consumed, &b.consumed);
        prop_assert!(a.cluster == b.cluster);
    }
}

// ---------------------------------------------------------------------------------------------
// Hand-written scenarios, one per property, with exact values.

fn running(worker: &str, generation: i32) -> Status {
    status(StatusState::Running, worker, generation)
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

fn roll_and_clean(cluster: &Mutex<MemoryCluster>, topic: &str, partitions: i32) {
    let mut cluster = lock(cluster);
    for p in 0..partitions {
        cluster.roll_segment(topic, p).expect("roll");
    }
    cluster.clean_all(topic).expect("clean");
}

/// Property 1 by hand: exact records, the safe-write refusal, the stale-UNASSIGNED filter (and
/// how compaction can undo it), a connector deletion that drops task statuses but keeps topics.
#[test]
fn status_hand_written_scenario() {
    use StatusState::{Failed, Running, Unassigned};
    let c = "my-jdbc-source";
    let (w1, w2) = ("w1:8083", "10.0.0.2:8083");
    runtime().block_on(async {
        let cluster = new_cluster(7, STATUS_TOPIC, STATUS_PARTITIONS, 16);
        let wt = Arc::new(MemoryTransport::new(Arc::clone(&cluster)));
        let mut writer: Store<StatusLog, _> =
            store(STATUS_TOPIC, TopicKind::Status, Arc::clone(&wt));
        writer.start().await.unwrap();
        let mut log = LogCapture::default();

        let r = prepared(&writer, StatusUpdate::for_connector(c, Running, w1, 1), false).unwrap();
        assert_eq!(
            r,
            ProducerRecord {
                key: b"status-connector-my-jdbc-source".to_vec(),
                value: Some(
                    br#"{"state":"RUNNING","trace":null,"worker_id":"w1:8083","generation":1,"version":null}"#
                        .to_vec()
                ),
                partition: None,
            }
        );
        write(&mut writer, &wt, &[r], false, true).await;
        log.capture(&cluster, STATUS_TOPIC, STATUS_PARTITIONS);
        let t0 = prepared(&writer, StatusUpdate::for_task(c, 0, Running, w1, 2), false).unwrap();
        let t1 = prepared(&writer, StatusUpdate::for_task(c, 1, Running, w1, 2), false).unwrap();
        assert_eq!(t0.key, b"status-task-my-jdbc-source-0");
        assert_eq!(t1.key, b"status-task-my-jdbc-source-1");
        write(&mut writer, &wt, &[t0, t1], false, true).await;
        log.capture(&cluster, STATUS_TOPIC, STATUS_PARTITIONS);

        // putSafe of an older UNASSIGNED from another worker is refused; a plain put writes it
        // (delivered twice), and the KAFKA-12525 filter hides it from readers.
        let stale = StatusUpdate::for_task(c, 0, Unassigned, w2, 1);
        assert_eq!(prepared(&writer, stale.clone(), true), None);
        let r = prepared(&writer, stale, false).unwrap();
        write(&mut writer, &wt, &[r], true, true).await;
        log.capture(&cluster, STATUS_TOPIC, STATUS_PARTITIONS);
        assert_eq!(log.records.len(), 5);
        assert_eq!(writer.machine().snapshot().task(c, 0), Some(&running(w1, 2)));

        let rt = reader_transport(&cluster, 1, FetchFault::CleanRandomly { probability: 0.0 });
        let mut reader: Store<StatusLog, _> =
            store(STATUS_TOPIC, TopicKind::Status, Arc::clone(&rt));
        reader.start().await.unwrap();
        assert_eq!(reader.machine().snapshot().task(c, 0), Some(&running(w1, 2)));
        let skipped = reader.machine().diagnostics();
        assert_eq!(
            skipped
                .skipped()
                .get(engine::status::StatusSkipKind::StaleUnassigned),
            2
        );

        // Compaction removes the RUNNING the filter relied on: a reader of the cleaned log sees
        // the stale UNASSIGNED (Java behaves the same; the filter is not compaction-stable).
        roll_and_clean(&cluster, STATUS_TOPIC, STATUS_PARTITIONS);
        let fresh_t = reader_transport(&cluster, 1, FetchFault::CleanAll);
        let mut fresh: Store<StatusLog, _> = store(STATUS_TOPIC, TopicKind::Status, fresh_t);
        fresh.start().await.unwrap();
        assert_eq!(fresh.machine().snapshot().task(c, 0), Some(&status(Unassigned, w2, 1)));

        // A newer UNASSIGNED passes putSafe (cached generation 2 <= 3) and is applied; a FAILED
        // with a trace; a KIP-558 topic.
        let r = prepared(&writer, StatusUpdate::for_task(c, 0, Unassigned, w2, 3), true).unwrap();
        let failed = StatusUpdate::for_task(c, 1, Failed, w1, 3).with_trace(TRACE);
        let f = prepared(&writer, failed, true).unwrap();
        assert_eq!(
            f.value.as_deref(),
            Some(
                br#"{"state":"FAILED","trace":"org.apache.kafka.connect.errors.ConnectException: \"boom\"\n\tat X.y(X.java:1)\u001F\n","worker_id":"w1:8083","generation":3,"version":null}"#
                    .as_slice()
            )
        );
        let topic = topic_status_record(&TopicStatus::new("orders-topic", c, 0, 1_589_972_451_234));
        assert_eq!(topic.key, b"status-topic-orders-topic:connector-my-jdbc-source");
        assert_eq!(
            topic.value.as_deref(),
            Some(br#"{"topic":{"name":"orders-topic","connector":"my-jdbc-source","task":0,"discoverTimestamp":1589972451234}}"#.as_slice())
        );
        write(&mut writer, &wt, &[r, f, topic], false, true).await;
        log.capture(&cluster, STATUS_TOPIC, STATUS_PARTITIONS);
        reader.read_to_end().await.unwrap();
        let snap = reader.machine().snapshot();
        assert_eq!(snap.connector(c), Some(&running(w1, 1)));
        let tasks: Vec<(i32, Status)> = snap.tasks(c).map(|(n, s)| (n, s.clone())).collect();
        let mut failed = status(Failed, w1, 3);
        failed.trace = Some(TRACE.into());
        assert_eq!(tasks, vec![(0, status(Unassigned, w2, 3)), (1, failed)]);
        let topic_status = TopicStatus::new("orders-topic", c, 0, 1_589_972_451_234);
        assert_eq!(snap.topic(c, "orders-topic"), Some(&topic_status));

        // Java's onDeletion: task tombstones (ascending), then the connector's.
        let deletion = writer.machine().deletion_records(c);
        let keys: Vec<&[u8]> = deletion.iter().map(|r| r.key.as_slice()).collect();
        assert_eq!(
            keys,
            [
                b"status-task-my-jdbc-source-0".as_slice(),
                b"status-task-my-jdbc-source-1",
                b"status-connector-my-jdbc-source"
            ]
        );
        assert!(deletion.iter().all(|r| r.value.is_none() && r.partition.is_none()));
        write(&mut writer, &wt, &deletion, false, true).await;
        log.capture(&cluster, STATUS_TOPIC, STATUS_PARTITIONS);
        let events = reader.read_to_end().await.unwrap();
        let removed = events
            .iter()
            .filter(|e| matches!(e, StatusEvent::ConnectorRemoved { connector } if connector == c))
            .count();
        assert_eq!(removed, 1);
        let snap = reader.machine().snapshot();
        assert_eq!(snap.connector(c), None);
        assert_eq!(snap.all_tasks().count(), 0);
        let topics: Vec<(&str, &TopicStatus)> = snap.topics(c).collect();
        assert_eq!(topics, vec![("orders-topic", &topic_status)]);

        // A connector tombstone alone also drops task statuses it was never told about.
        let t2 = prepared(&writer, StatusUpdate::for_task(c, 2, Running, w1, 4), false).unwrap();
        write(&mut writer, &wt, &[t2], false, true).await;
        log.capture(&cluster, STATUS_TOPIC, STATUS_PARTITIONS);
        reader.read_to_end().await.unwrap();
        assert_eq!(reader.machine().snapshot().task(c, 2), Some(&running(w1, 4)));
        let tomb = StatusUpdate::for_connector(c, StatusState::Destroyed, w1, 4).record();
        assert_eq!(tomb.value, None);
        write(&mut writer, &wt, &[tomb], false, true).await;
        log.capture(&cluster, STATUS_TOPIC, STATUS_PARTITIONS);
        reader.read_to_end().await.unwrap();
        assert_eq!(reader.machine().snapshot().all_tasks().count(), 0);
        // ...and the topic row stays.
        assert_eq!(reader.machine().snapshot().topic(c, "orders-topic"), Some(&topic_status));

        // After compaction a fresh reader agrees (tombstones are retained: the clock is 0).
        roll_and_clean(&cluster, STATUS_TOPIC, STATUS_PARTITIONS);
        let mut late: Store<StatusLog, _> = store(
            STATUS_TOPIC,
            TopicKind::Status,
            reader_transport(&cluster, 3, FetchFault::CleanAll),
        );
        late.start().await.unwrap();
        assert_eq!(late.machine().snapshot(), reader.machine().snapshot());
        log.capture(&cluster, STATUS_TOPIC, STATUS_PARTITIONS);
        check_consumed(&rt.consumed(), &log).unwrap();
    });
}

/// Property 2 by hand: exact records and bodies, duplicate recordActiveTopic writes, the 403s,
/// a reset that writes one tombstone per topic, and a reset from a lagging cache missing a topic
/// (spec §6 item 10).
#[test]
fn active_topics_hand_written_scenario() {
    let tracking = TopicTracking::default();
    runtime().block_on(async {
        let cluster = new_cluster(11, STATUS_TOPIC, STATUS_PARTITIONS, 4);
        let wt = Arc::new(MemoryTransport::new(Arc::clone(&cluster)));
        let mut writer: Store<StatusLog, _> =
            store(STATUS_TOPIC, TopicKind::Status, Arc::clone(&wt));
        writer.start().await.unwrap();
        let mut log = LogCapture::default();

        let first = writer
            .machine()
            .record_active_topic(SINK, "orders", 0, 1_000, &tracking)
            .unwrap();
        assert_eq!(first.key, b"status-topic-orders:connector-my-sink");
        assert_eq!(
            first.value.as_deref(),
            Some(br#"{"topic":{"name":"orders","connector":"my-sink","task":0,"discoverTimestamp":1000}}"#.as_slice())
        );
        assert_eq!(first.partition, None);
        write(&mut writer, &wt, &[first], false, false).await;
        // Not read back yet: Java writes again (spec §6 item 11).
        let again = writer
            .machine()
            .record_active_topic(SINK, "orders", 1, 1_001, &tracking)
            .unwrap();
        write(&mut writer, &wt, &[again], false, true).await;
        assert_eq!(
            writer.machine().record_active_topic(SINK, "orders", 0, 1_002, &tracking),
            None
        );
        let off = TopicTracking {
            enable: false,
            allow_reset: true,
        };
        assert_eq!(writer.machine().record_active_topic(SINK, "x", 0, 0, &off), None);
        let payments = topic_status_record(&TopicStatus::new("payments", SINK, 1, 2_000));
        let other = topic_status_record(&TopicStatus::new("orders", OTHER, 0, 3_000));
        write(&mut writer, &wt, &[payments, other], false, true).await;
        log.capture(&cluster, STATUS_TOPIC, STATUS_PARTITIONS);
        assert_eq!(log.records.len(), 4);

        let rt = reader_transport(&cluster, 2, FetchFault::CleanAll);
        let mut reader: Store<StatusLog, _> =
            store(STATUS_TOPIC, TopicKind::Status, Arc::clone(&rt));
        reader.start().await.unwrap();
        let active = reader.machine().snapshot().active_topics(SINK, &tracking).unwrap();
        assert_eq!(
            serde_json::to_string(&active).unwrap(),
            r#"{"my-sink":{"topics":["orders","payments"]}}"#
        );
        // The second recordActiveTopic won: task 1 at 1001.
        assert_eq!(
            reader.machine().snapshot().topic(SINK, "orders"),
            Some(&TopicStatus::new("orders", SINK, 1, 1_001))
        );

        // 403s, tracking checked first; nothing written.
        let before = lock(&cluster).clone();
        let reset_off = TopicTracking {
            enable: true,
            allow_reset: false,
        };
        let both_off = TopicTracking {
            enable: false,
            allow_reset: false,
        };
        let e = reader.machine().snapshot().reset_active_topics(SINK, &both_off).unwrap_err();
        assert_eq!(e, TopicTrackingError::Disabled);
        assert_eq!(
            serde_json::to_string(&Answer::tracking_refused(e).body).unwrap(),
            r#"{"error_code":403,"message":"Topic tracking is disabled."}"#
        );
        let e = reader.machine().snapshot().reset_active_topics(SINK, &reset_off).unwrap_err();
        let answer = Answer::tracking_refused(e);
        assert_eq!(answer.status, 403);
        assert_eq!(e.message(), "Topic tracking reset is disabled.");
        assert_eq!(
            reader.machine().snapshot().active_topics(SINK, &off),
            Err(TopicTrackingError::Disabled)
        );
        assert!(*lock(&cluster) == before);

        // The reset: one tombstone per active topic.
        let reset = reader.machine().snapshot().reset_active_topics(SINK, &tracking).unwrap();
        assert_eq!(
            reset,
            vec![
                ProducerRecord {
                    key: b"status-topic-orders:connector-my-sink".to_vec(),
                    value: None,
                    partition: None
                },
                ProducerRecord {
                    key: b"status-topic-payments:connector-my-sink".to_vec(),
                    value: None,
                    partition: None
                },
            ]
        );
        write(&mut writer, &wt, &reset, false, true).await;
        let appended = log.capture(&cluster, STATUS_TOPIC, STATUS_PARTITIONS);
        let keys: BTreeSet<Vec<u8>> = appended.iter().map(|a| a.key.clone()).collect();
        assert_eq!(appended.len(), 2);
        assert_eq!(keys, reset.iter().map(|r| r.key.clone()).collect());
        reader.read_to_end().await.unwrap();
        let active = reader.machine().snapshot().active_topics(SINK, &tracking).unwrap();
        assert_eq!(serde_json::to_string(&active).unwrap(), r#"{"my-sink":{"topics":[]}}"#);
        let snap = reader.machine().snapshot();
        assert!(snap.topic_connectors().any(|c| c == SINK));
        assert_eq!(
            snap.topic(OTHER, "orders"),
            Some(&TopicStatus::new("orders", OTHER, 0, 3_000))
        );
        // A repeated reset writes nothing.
        assert_eq!(reader.machine().snapshot().reset_active_topics(SINK, &tracking), Ok(Vec::new()));

        // A reset from a cache that has not read "logs" yet misses it.
        let logs = topic_status_record(&TopicStatus::new("logs", SINK, 0, 4_000));
        write(&mut writer, &wt, &[logs], false, false).await;
        assert_eq!(reader.machine().snapshot().reset_active_topics(SINK, &tracking), Ok(Vec::new()));
        reader.read_to_end().await.unwrap();
        let active = reader.machine().snapshot().active_topics(SINK, &tracking).unwrap();
        assert_eq!(active.topics, vec!["logs".to_owned()]);
        log.capture(&cluster, STATUS_TOPIC, STATUS_PARTITIONS);
        check_consumed(&rt.consumed(), &log).unwrap();
    });
}

fn s(v: &str) -> JsonValue {
    JsonValue::String(v.into())
}

fn position(n: i64) -> Option<Vec<u8>> {
    Some(format!("{{\"position\":{n}}}").into_bytes())
}

/// Property 3 by hand: exact keys and values, Map.equals partition sets, the KIP-875 listing
/// and reset, with a key written in non-`HashMap` member order (spec §6 item 2: its record
/// survives the reset) and a record on a non-default partition (its tombstone follows it).
#[test]
fn offsets_hand_written_scenario() {
    runtime().block_on(async {
        let cluster = new_cluster(3, OFFSETS_TOPIC, OFFSETS_PARTITIONS, 2);
        let wt = Arc::new(MemoryTransport::new(Arc::clone(&cluster)));
        let mut writer: Store<OffsetLog, _> =
            store(OFFSETS_TOPIC, TopicKind::Offsets, Arc::clone(&wt));
        writer.start().await.unwrap();
        let mut log = LogCapture::default();
        let key = |c: &str, members: &[(&str, JsonValue)]| {
            offset_key(c, Some(&OrderedMap::new(members.iter().cloned()))).unwrap()
        };
        // `table` before `database`: not Java's HashMap order (database, table).
        let orders = key("jdbc", &[("table", s("orders")), ("database", s("db"))]);
        assert_eq!(orders, br#"["jdbc",{"table":"orders","database":"db"}]"#);
        let items = key("jdbc", &[("database", s("db")), ("table", s("items"))]);
        let csv = key("file-source", &[("filename", s("orders.csv"))]);
        let gone = key("file-source", &[("filename", s("gone.csv"))]);
        let default = |k: &[u8]| default_partition(k, OFFSETS_PARTITIONS).unwrap();
        let elsewhere = (default(&items) + 1) % OFFSETS_PARTITIONS;
        let rec = |key: &[u8], value: Option<Vec<u8>>, partition: Option<i32>| ProducerRecord {
            key: key.to_vec(),
            value,
            partition,
        };
        let writes = [
            rec(&orders, position(1), None),
            rec(&orders, position(2), None),
            rec(&csv, position(20), None),
            rec(&gone, position(5), None),
            rec(&gone, None, None),
            rec(&items, position(7), Some(elsewhere)),
        ];
        for (i, r) in writes.iter().enumerate() {
            write(&mut writer, &wt, std::slice::from_ref(r), i == 1, false).await;
        }
        log.capture(&cluster, OFFSETS_TOPIC, OFFSETS_PARTITIONS);
        assert_eq!(log.records.len(), 7);

        let rt = reader_transport(&cluster, 1, FetchFault::CleanRandomly { probability: 0.5 });
        let mut reader: Store<OffsetLog, _> =
            store(OFFSETS_TOPIC, TopicKind::Offsets, Arc::clone(&rt));
        reader.start().await.unwrap();
        let snap = reader.machine().snapshot();
        let data: BTreeMap<Vec<u8>, (i32, Vec<u8>)> = snap
            .entries()
            .map(|(k, v)| (k.unwrap().to_vec(), (v.partition(), v.value().to_vec())))
            .collect();
        let want: BTreeMap<Vec<u8>, (i32, Vec<u8>)> = [
            (orders.clone(), (default(&orders), position(2).unwrap())),
            (csv.clone(), (default(&csv), position(20).unwrap())),
            (items.clone(), (elsewhere, position(7).unwrap())),
        ]
        .into_iter()
        .collect();
        assert_eq!(data, want);
        let object = |members: &[(&str, JsonValue)]| -> JsonObject {
            members.iter().map(|(k, v)| ((*k).to_owned(), v.clone())).collect()
        };
        let jdbc: Vec<JsonObject> = snap.connector_partitions("jdbc").collect();
        let items_p = object(&[("database", s("db")), ("table", s("items"))]);
        let orders_p = object(&[("database", s("db")), ("table", s("orders"))]);
        assert_eq!(jdbc, vec![items_p.clone(), orders_p.clone()]);
        let files: Vec<JsonObject> = snap.connector_partitions("file-source").collect();
        assert_eq!(files, vec![object(&[("filename", s("orders.csv"))])]);

        // The listing re-serializes in HashMap order: the `orders` key is not found.
        let listing = serde_json::to_string(&kip875::list(&snap, "jdbc")).unwrap();
        assert_eq!(
            listing,
            r#"{"offsets":[{"partition":{"database":"db","table":"items"},"offset":{"position":7}},{"partition":{"database":"db","table":"orders"},"offset":null}]}"#
        );

        // The reset: HashMap-ordered keys; the live one follows its record to `elsewhere`.
        let reset = kip875::reset_records(&snap, "jdbc", OFFSETS_PARTITIONS).unwrap();
        let hash_ordered = br#"["jdbc",{"database":"db","table":"orders"}]"#.to_vec();
        assert_eq!(
            reset,
            vec![
                rec(&items, None, Some(elsewhere)),
                rec(&hash_ordered, None, Some(default(&hash_ordered))),
            ]
        );
        let files = kip875::reset_records(&snap, "file-source", OFFSETS_PARTITIONS).unwrap();
        assert_eq!(files, vec![rec(&csv, None, Some(default(&csv)))]);
        assert_eq!(kip875::reset_records(&snap, "nobody", OFFSETS_PARTITIONS), Ok(Vec::new()));
        write(&mut writer, &wt, &[reset, files].concat(), false, true).await;
        log.capture(&cluster, OFFSETS_TOPIC, OFFSETS_PARTITIONS);
        reader.read_to_end().await.unwrap();
        let snap = reader.machine().snapshot();
        assert!(kip875::list(&snap, "jdbc").offsets.is_empty());
        assert!(kip875::list(&snap, "file-source").offsets.is_empty());
        // The record written in the connector's own member order survives (spec §6 item 2).
        let left: Vec<(Vec<u8>, Vec<u8>)> = snap
            .entries()
            .map(|(k, v)| (k.unwrap().to_vec(), v.value().to_vec()))
            .collect();
        assert_eq!(left, vec![(orders.clone(), position(2).unwrap())]);
        check_offsets_state(&snap, &rt.consumed(), &log).unwrap();
    });
}

/// Property 4 by hand: one fixed run of each kind, twice.
#[test]
fn determinism_hand_written_scenario() {
    let step = |op, duplicate| StatusStep {
        op,
        duplicate,
        read_back: true,
    };
    let put = |connector, task, state, worker, generation| StatusOp::Put {
        connector,
        task,
        state,
        worker,
        generation,
    };
    let status = StatusRun {
        seed: 42,
        steps: vec![
            step(put(1, None, StatusState::Running, 0, 1), false),
            step(put(1, Some(0), StatusState::Running, 0, 2), true),
            step(put(1, Some(0), StatusState::Unassigned, 1, 1), false),
            step(StatusOp::Roll { partition: 0 }, false),
            step(StatusOp::ReaderCatchUp, false),
            step(put(2, Some(1), StatusState::Failed, 1, 3), false),
            step(
                StatusOp::Topic {
                    connector: 1,
                    topic: 0,
                    task: 0,
                },
                false,
            ),
            step(StatusOp::DeleteConnector { connector: 1 }, true),
            step(StatusOp::Clean, false),
            step(put(0, Some(2), StatusState::Paused, 0, 4), false),
        ],
        reader_start: 2,
        fetch_size: 1,
        fetch_fault: FetchFault::CleanRandomly { probability: 0.5 },
        segment_records: 1,
    };
    let (a, b) = (run_status(&status), run_status(&status));
    check_status(&a).unwrap();
    assert_eq!(a.snapshot, b.snapshot);
    assert_eq!(a.events, b.events);
    assert_eq!(a.consumed, b.consumed);
    assert!(a.cluster == b.cluster);
    let snap = &a.snapshot;
    assert_eq!(snap.connector("my-jdbc-source"), None);
    assert_eq!(
        snap.task("edge-", 1).map(|s| s.state),
        Some(StatusState::Failed)
    );
    assert_eq!(
        snap.task("orders", 2),
        Some(&status_of(StatusState::Paused, 0, 4))
    );
    assert_eq!(snap.topics("my-jdbc-source").count(), 1);

    let write_op =
        |connector, partition: Vec<(usize, JsonValue)>, offset, duplicate| OffsetOp::Write {
            connector,
            partition: Some(partition),
            offset,
            misplaced: None,
            duplicate,
            read_back: false,
        };
    let offsets = OffsetsRun {
        seed: 42,
        ops: vec![
            write_op(
                0,
                vec![(0, s("a")), (1, JsonValue::Long(1))],
                Some(1),
                false,
            ),
            write_op(0, vec![(1, JsonValue::Long(1)), (0, s("a"))], Some(2), true),
            OffsetOp::Roll { partition: 3 },
            OffsetOp::ReaderCatchUp,
            write_op(1, vec![(2, s("orders.csv"))], None, false),
            write_op(2, vec![(2, s("a"))], Some(9), false),
            OffsetOp::Clean,
        ],
        reader_start: 1,
        fetch_size: 2,
        fetch_fault: FetchFault::CleanAll,
        segment_records: 1,
    };
    let (a, b) = (run_offsets(&offsets), run_offsets(&offsets));
    check_offsets(&a).unwrap();
    assert_eq!(a.before_reset, b.before_reset);
    assert_eq!(a.snapshot, b.snapshot);
    assert_eq!(a.events, b.events);
    assert_eq!(a.consumed, b.consumed);
    assert!(a.cluster == b.cluster);
    assert_eq!(a.before_reset.len(), 3);
    let sets: Vec<usize> = OFFSET_CONNECTORS
        .iter()
        .map(|c| a.before_reset.connector_partitions(c).count())
        .collect();
    // file-source's two keys are one partition map; jdbc's only write was a tombstone.
    assert_eq!(sets, vec![1, 0, 1]);
}

fn status_of(state: StatusState, worker: usize, generation: i32) -> Status {
    status(state, WORKERS[worker], generation)
}

/// The cross-key rule depends on the reader's interleaving of partitions (why property 1
/// follows the consumed order): a connector deleted and re-created, its task status written
/// again after the connector tombstone. The task's key lives on a lower partition than the
/// connector's, and the store reads partitions in ascending order, so a reader of the whole
/// log applies the connector tombstone *after* the new task status and drops it, while the
/// writer, which read each write back, keeps it. Compacting the connector's partition removes
/// the tombstone and brings the task status back. Java's consumer interleaves partitions
/// arbitrarily too, so its readers can disagree the same way.
#[test]
fn connector_tombstone_on_a_later_partition_drops_a_newer_task_status() {
    use StatusState::Running;
    let c = "orders";
    let (conn_p, task_p) = (
        default_partition(b"status-connector-orders", STATUS_PARTITIONS).unwrap(),
        default_partition(b"status-task-orders-0", STATUS_PARTITIONS).unwrap(),
    );
    assert!(task_p < conn_p, "the scenario needs the task key first");
    runtime().block_on(async {
        let cluster = new_cluster(5, STATUS_TOPIC, STATUS_PARTITIONS, 16);
        let wt = Arc::new(MemoryTransport::new(Arc::clone(&cluster)));
        let mut writer: Store<StatusLog, _> =
            store(STATUS_TOPIC, TopicKind::Status, Arc::clone(&wt));
        writer.start().await.unwrap();
        let put = |connector: Option<i32>, generation| match connector {
            None => StatusUpdate::for_connector(c, Running, "w1:8083", generation).record(),
            Some(n) => StatusUpdate::for_task(c, n, Running, "w1:8083", generation).record(),
        };
        write(
            &mut writer,
            &wt,
            &[put(None, 1), put(Some(0), 1)],
            false,
            true,
        )
        .await;
        let deletion = writer.machine().deletion_records(c);
        assert_eq!(deletion.len(), 2);
        write(&mut writer, &wt, &deletion, false, true).await;
        write(&mut writer, &wt, &[put(None, 2)], false, true).await;
        write(&mut writer, &wt, &[put(Some(0), 2)], false, true).await;
        assert_eq!(
            writer.machine().snapshot().task(c, 0),
            Some(&running("w1:8083", 2))
        );

        let mut reader: Store<StatusLog, _> = store(
            STATUS_TOPIC,
            TopicKind::Status,
            Arc::new(MemoryTransport::new(Arc::clone(&cluster))),
        );
        reader.start().await.unwrap();
        let snap = reader.machine().snapshot();
        assert_eq!(snap.connector(c), Some(&running("w1:8083", 2)));
        assert_eq!(snap.task(c, 0), None);

        roll_and_clean(&cluster, STATUS_TOPIC, STATUS_PARTITIONS);
        let mut fresh: Store<StatusLog, _> = store(
            STATUS_TOPIC,
            TopicKind::Status,
            Arc::new(MemoryTransport::new(Arc::clone(&cluster))),
        );
        fresh.start().await.unwrap();
        assert_eq!(
            fresh.machine().snapshot().task(c, 0),
            Some(&running("w1:8083", 2))
        );
    });
}
