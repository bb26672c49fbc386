//! `MemoryTransport`: the trait over the model, and every fault knob.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use connect_state_store::{NewTopic, ProduceMode, Transport, TransportError};
use engine::OwnedRecord;
use engine::ProducerRecord;

use crate::{
    FetchFault, Isolation, MemoryCluster, MemoryTransport, ProduceFault, RecordKind, TopicConfig,
    TxnState,
};

type Shared = Arc<Mutex<MemoryCluster>>;

fn rec(key: &str, value: &str) -> ProducerRecord {
    ProducerRecord::from_strings(key.into(), Some(value.into()))
}

fn new_topic(partitions: i32, configs: &[(&str, &str)]) -> NewTopic {
    NewTopic {
        name: "t".into(),
        partitions,
        replication_factor: None,
        configs: configs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect(),
    }
}

/// A cluster of `seed` with a one-partition topic `t` of `segment`-offset segments.
async fn setup(seed: u64, segment: u64) -> Shared {
    let cluster = Arc::new(Mutex::new(MemoryCluster::new(seed)));
    let transport = MemoryTransport::new(Arc::clone(&cluster))
        .with_topic_defaults(TopicConfig::default().with_segment_records(segment));
    transport
        .create_topic(&new_topic(1, &[("cleanup.policy", "compact")]))
        .await
        .unwrap();
    cluster
}

/// Reads every partition of `t` from 0 to the end offsets sampled first.
async fn read_to_end(transport: &MemoryTransport, max: usize) -> Vec<OwnedRecord> {
    let mut out = Vec::new();
    for (partition, end) in transport.end_offsets("t").await.unwrap() {
        let mut position = 0;
        while position < end {
            let batch = transport
                .fetch("t", partition, position, max)
                .await
                .unwrap();
            assert!(batch.records.len() <= max);
            assert!(
                batch.next_offset > position,
                "a fetch below the end must progress"
            );
            out.extend(batch.records.to_owned_records());
            position = batch.next_offset;
        }
    }
    out
}

fn offsets(records: &[OwnedRecord]) -> Vec<i64> {
    records.iter().map(|r| r.offset).collect()
}

/// The last value read per key.
fn fold(records: &[OwnedRecord]) -> BTreeMap<Vec<u8>, Option<Vec<u8>>> {
    records
        .iter()
        .map(|r| (r.key.clone().unwrap_or_default(), r.value.clone()))
        .collect()
}

#[tokio::test]
async fn create_and_describe_honour_partitions_and_configs() {
    let cluster = Arc::new(Mutex::new(MemoryCluster::new(0)));
    let t = MemoryTransport::new(Arc::clone(&cluster));
    assert_eq!(t.describe_topic("t").await.unwrap(), None);
    let configs = [("cleanup.policy", "compact"), ("delete.retention.ms", "10")];
    t.create_topic(&new_topic(5, &configs)).await.unwrap();
    let description = t.describe_topic("t").await.unwrap().unwrap();
    assert_eq!(
        (description.partitions, description.cleanup_policy.as_str()),
        (5, "compact")
    );
    assert_eq!(
        cluster
            .lock()
            .unwrap()
            .describe_topic("t")
            .unwrap()
            .delete_retention_ms,
        10
    );
    // Creating an existing topic succeeds and changes nothing, as Java's TopicAdmin does.
    t.create_topic(&new_topic(3, &[("cleanup.policy", "delete")]))
        .await
        .unwrap();
    assert_eq!(t.describe_topic("t").await.unwrap().unwrap(), description);
    assert_eq!(t.end_offsets("t").await.unwrap().len(), 5);
    let mut bad = new_topic(0, &[]);
    bad.name = "u".into();
    assert!(matches!(
        t.create_topic(&bad).await,
        Err(TransportError::Broker { .. })
    ));
    bad = new_topic(1, &[("delete.retention.ms", "soon")]);
    bad.name = "u".into();
    assert!(matches!(
        t.create_topic(&bad).await,
        Err(TransportError::Broker { .. })
    ));
    assert!(matches!(
        t.end_offsets("u").await,
        Err(TransportError::UnknownTopic { .. })
    ));
    assert!(matches!(
        t.fetch("t", 9, 0, 1).await,
        Err(TransportError::UnknownPartition { .. })
    ));
    assert!(matches!(
        t.produce("u", &[rec("a", "1")], ProduceMode::Plain).await,
        Err(TransportError::UnknownTopic { .. })
    ));
}

#[tokio::test]
async fn a_plain_crash_after_k_writes_exactly_the_first_k_records() {
    let batch = [rec("a", "1"), rec("b", "1"), rec("c", "1")];
    for k in 0..=4 {
        let cluster = setup(0, 100).await;
        let t = MemoryTransport::new(Arc::clone(&cluster));
        t.push_produce_fault(ProduceFault::CrashAfter(k));
        let written = k.min(3);
        match t.produce("t", &batch, ProduceMode::Plain).await {
            Err(TransportError::ProduceFailed {
                written: w,
                total: 3,
                ..
            }) => assert_eq!(w, written),
            other => panic!("unexpected {other:?}"),
        }
        let read = read_to_end(&t, 10).await;
        let keys: Vec<_> = read.iter().map(|r| r.key.clone().unwrap()).collect();
        let expected: Vec<Vec<u8>> = batch[..written].iter().map(|r| r.key.clone()).collect();
        assert_eq!(keys, expected);
        // The fault was used up: the next produce is whole.
        assert_eq!(
            t.produce("t", &batch, ProduceMode::Plain)
                .await
                .unwrap()
                .len(),
            3
        );
    }
}

#[tokio::test]
async fn a_transactional_crash_aborts_the_transaction() {
    let cluster = setup(0, 100).await;
    let writer = MemoryTransport::new(Arc::clone(&cluster))
        .with_transactional_id("leader")
        .with_isolation(Isolation::ReadCommitted);
    let uncommitted = MemoryTransport::new(Arc::clone(&cluster));
    writer.push_produce_fault(ProduceFault::CrashAfter(2));
    let batch = [rec("a", "1"), rec("b", "1"), rec("c", "1")];
    assert!(matches!(
        writer
            .produce("t", &batch, ProduceMode::Transactional)
            .await,
        Err(TransportError::ProduceFailed {
            written: 0,
            total: 3,
            ..
        })
    ));
    assert!(read_to_end(&writer, 10).await.is_empty());
    assert_eq!(offsets(&read_to_end(&uncommitted, 10).await), vec![0, 1]);
    // The same producer goes on (it was not fenced) and its next batch commits.
    let placed = writer
        .produce("t", &batch, ProduceMode::Transactional)
        .await
        .unwrap();
    assert_eq!(placed, vec![(0, 3), (0, 4), (0, 5)]);
    assert_eq!(offsets(&read_to_end(&writer, 10).await), vec![3, 4, 5]);
    assert_eq!(writer.end_offsets("t").await.unwrap()[&0], 7);
}

#[tokio::test]
async fn a_writer_dying_inside_a_transaction_holds_back_read_committed_readers() {
    let cluster = setup(0, 100).await;
    let writer = MemoryTransport::new(Arc::clone(&cluster))
        .with_transactional_id("leader")
        .with_isolation(Isolation::ReadCommitted);
    writer.push_produce_fault(ProduceFault::CrashInTransactionAfter(1));
    let batch = [rec("a", "1"), rec("b", "1")];
    assert!(writer
        .produce("t", &batch, ProduceMode::Transactional)
        .await
        .is_err());
    assert_eq!(writer.end_offsets("t").await.unwrap()[&0], 0);
    writer
        .produce("t", &[rec("p", "1")], ProduceMode::Plain)
        .await
        .unwrap();
    assert_eq!(writer.end_offsets("t").await.unwrap()[&0], 0);
    // The restarted producer re-initializes: the dangling transaction is aborted.
    let placed = writer
        .produce("t", &batch, ProduceMode::Transactional)
        .await
        .unwrap();
    assert_eq!(placed, vec![(0, 3), (0, 4)]);
    let kinds: Vec<_> = cluster.lock().unwrap().records("t", 0).unwrap()[..3]
        .iter()
        .map(|r| r.kind)
        .collect();
    assert_eq!(
        kinds,
        vec![
            RecordKind::Transactional(TxnState::Aborted),
            RecordKind::Plain,
            RecordKind::Marker { committed: false }
        ]
    );
    assert_eq!(offsets(&read_to_end(&writer, 10).await), vec![1, 3, 4]);
}

#[tokio::test]
async fn duplicate_delivery_appends_every_record_twice() {
    let cluster = setup(0, 100).await;
    let t = MemoryTransport::new(Arc::clone(&cluster)).with_transactional_id("tx");
    t.push_produce_fault(ProduceFault::Duplicate);
    t.push_produce_fault(ProduceFault::Duplicate);
    assert_eq!(t.pending_produce_faults(), 2);
    let placed = t
        .produce("t", &[rec("a", "1"), rec("b", "1")], ProduceMode::Plain)
        .await
        .unwrap();
    assert_eq!(placed, vec![(0, 1), (0, 3)]);
    let keys: Vec<_> = read_to_end(&t, 10)
        .await
        .iter()
        .map(|r| r.key.clone().unwrap())
        .collect();
    assert_eq!(
        keys,
        vec![b"a".to_vec(), b"a".to_vec(), b"b".to_vec(), b"b".to_vec()]
    );
    // Transactional producers are idempotent: no duplicate.
    let placed = t
        .produce("t", &[rec("c", "1")], ProduceMode::Transactional)
        .await
        .unwrap();
    assert_eq!(placed, vec![(0, 4)]);
    assert_eq!(t.pending_produce_faults(), 0);
}

#[tokio::test]
async fn a_zombie_leader_is_fenced_by_the_new_one() {
    let cluster = setup(0, 100).await;
    let zombie = MemoryTransport::new(Arc::clone(&cluster)).with_transactional_id("leader");
    let leader = MemoryTransport::new(Arc::clone(&cluster))
        .with_transactional_id("leader")
        .with_isolation(Isolation::ReadCommitted);
    zombie
        .produce("t", &[rec("a", "zombie")], ProduceMode::Transactional)
        .await
        .unwrap();
    // The new leader takes over before it writes anything.
    assert_eq!(leader.init_transactions().unwrap().epoch(), 1);
    for _ in 0..2 {
        assert_eq!(
            zombie
                .produce("t", &[rec("a", "late")], ProduceMode::Transactional)
                .await,
            Err(TransportError::Fenced { topic: "t".into() })
        );
    }
    leader
        .produce("t", &[rec("a", "leader")], ProduceMode::Transactional)
        .await
        .unwrap();
    let values: Vec<_> = read_to_end(&leader, 10)
        .await
        .iter()
        .map(|r| r.value.clone().unwrap())
        .collect();
    assert_eq!(values, vec![b"zombie".to_vec(), b"leader".to_vec()]);
    // Without transactions, two writers simply interleave.
    zombie
        .produce("t", &[rec("b", "z")], ProduceMode::Plain)
        .await
        .unwrap();
    leader
        .produce("t", &[rec("b", "l")], ProduceMode::Plain)
        .await
        .unwrap();
    assert_eq!(read_to_end(&leader, 10).await.len(), 4);
    // A transport without a transactional id cannot produce transactionally.
    let plain = MemoryTransport::new(Arc::clone(&cluster));
    assert!(plain.init_transactions().is_err());
    assert!(matches!(
        plain
            .produce("t", &[rec("a", "1")], ProduceMode::Transactional)
            .await,
        Err(TransportError::Broker { .. })
    ));
}

#[tokio::test]
async fn fetch_size_is_capped_per_transport() {
    let cluster = setup(0, 100).await;
    let t = MemoryTransport::new(Arc::clone(&cluster)).with_max_fetch_records(2);
    let batch: Vec<_> = (0..5).map(|i| rec(&format!("k{i}"), "v")).collect();
    t.produce("t", &batch, ProduceMode::Plain).await.unwrap();
    let first = t.fetch("t", 0, 0, 100).await.unwrap();
    assert_eq!((first.records.len(), first.next_offset), (2, 2));
    assert_eq!(t.fetch("t", 0, 0, 1).await.unwrap().records.len(), 1);
    assert_eq!(read_to_end(&t, 100).await.len(), 5);
}

/// Writes records `range` over 4 keys (every 7th a tombstone), noting the last value per key.
async fn write_history(
    t: &MemoryTransport,
    range: core::ops::Range<i32>,
    last: &mut BTreeMap<Vec<u8>, Option<Vec<u8>>>,
) {
    for i in range {
        let key = format!("k{}", i % 4);
        let value = (i % 7 != 6).then(|| format!("v{i}"));
        let record = ProducerRecord::from_strings(key.clone(), value.clone());
        t.produce("t", &[record], ProduceMode::Plain).await.unwrap();
        last.insert(key.into_bytes(), value.map(String::into_bytes));
    }
}

#[tokio::test]
async fn cleaning_before_every_fetch_keeps_the_final_state_visible() {
    let cluster = setup(0, 3).await;
    let writer = MemoryTransport::new(Arc::clone(&cluster));
    let mut last = BTreeMap::new();
    write_history(&writer, 0..30, &mut last).await;
    // A reader gets half-way through the log before any cleaning.
    let reader = MemoryTransport::new(Arc::clone(&cluster));
    let mut read = Vec::new();
    let mut position = 0;
    while position < 15 {
        let batch = reader.fetch("t", 0, position, 1).await.unwrap();
        read.extend(batch.records.to_owned_records());
        position = batch.next_offset;
    }
    write_history(&writer, 30..60, &mut last).await;
    // From now on the log is cleaned before each of its fetches: records ahead disappear.
    reader.set_fetch_fault(Some(FetchFault::CleanAll));
    let end = reader.end_offsets("t").await.unwrap()[&0];
    while position < end {
        let batch = reader.fetch("t", 0, position, 1).await.unwrap();
        assert!(batch.next_offset > position);
        read.extend(batch.records.to_owned_records());
        position = batch.next_offset;
    }
    assert_eq!(position, 60);
    assert!(
        read.len() < 40,
        "cleaning ran between fetches: {} read",
        read.len()
    );
    assert!(offsets(&read).windows(2).all(|w| w[0] < w[1]));
    assert_eq!(fold(&read), last);
    // Gaps stay where the cleaner made them.
    assert!(cluster.lock().unwrap().records("t", 0).unwrap().len() < 10);
    reader.set_fetch_fault(None);
}

#[tokio::test]
async fn random_cleaning_between_fetches_is_seeded_and_keeps_the_final_state() {
    let mut outcomes = Vec::new();
    for seed in 0..8 {
        let cluster = setup(seed, 4).await;
        let writer = MemoryTransport::new(Arc::clone(&cluster));
        let mut last = BTreeMap::new();
        write_history(&writer, 0..60, &mut last).await;
        let reader = MemoryTransport::new(Arc::clone(&cluster));
        reader.set_fetch_fault(Some(FetchFault::CleanRandomly { probability: 0.5 }));
        let read = read_to_end(&reader, 2).await;
        assert!(offsets(&read).windows(2).all(|w| w[0] < w[1]));
        assert_eq!(fold(&read), last, "seed {seed}");
        outcomes.push(offsets(&read));
    }
    // Different seeds clean at different points.
    assert!(outcomes.iter().any(|o| *o != outcomes[0]));
}

#[tokio::test]
async fn end_offsets_follow_the_isolation_level() {
    let cluster = setup(0, 100).await;
    let committed =
        MemoryTransport::new(Arc::clone(&cluster)).with_isolation(Isolation::ReadCommitted);
    let uncommitted = MemoryTransport::new(Arc::clone(&cluster));
    assert_eq!(committed.isolation(), Isolation::ReadCommitted);
    uncommitted
        .produce("t", &[rec("a", "1")], ProduceMode::Plain)
        .await
        .unwrap();
    {
        let mut c = cluster.lock().unwrap();
        let p = c.init_transactions("tx");
        c.begin_transaction(p).unwrap();
        c.send_transactional(p, "t", &[rec("b", "1")]).unwrap();
    }
    assert_eq!(committed.end_offsets("t").await.unwrap()[&0], 1);
    assert_eq!(uncommitted.end_offsets("t").await.unwrap()[&0], 2);
    assert!(Arc::ptr_eq(committed.cluster(), uncommitted.cluster()));
}
