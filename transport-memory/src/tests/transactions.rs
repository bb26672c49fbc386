//! Transactions: isolation, the last stable offset, markers and fencing.

use engine::ProducerRecord;

use super::{cluster_with, kv, read_all, single, stored_offsets};
use crate::{Isolation, LogError, RecordKind, TopicConfig, TxnState};

fn rec(key: &str, value: &str) -> ProducerRecord {
    ProducerRecord {
        key: key.as_bytes().to_vec(),
        value: Some(value.as_bytes().to_vec()),
        partition: Some(0),
    }
}

fn offsets(rows: &[(i64, String, Option<String>)]) -> Vec<i64> {
    rows.iter().map(|r| r.0).collect()
}

#[test]
fn aborted_records_are_invisible_to_read_committed_and_visible_to_read_uncommitted() {
    let mut c = single(100);
    c.append("t", 0, &[kv("a", Some("plain"))]).unwrap();
    let p = c.init_transactions("tx");
    c.begin_transaction(p).unwrap();
    assert_eq!(
        c.send_transactional(p, "t", &[rec("a", "x"), rec("b", "x")])
            .unwrap(),
        vec![(0, 1), (0, 2)]
    );
    c.abort_transaction(p).unwrap();
    c.append("t", 0, &[kv("c", Some("plain"))]).unwrap();
    // The abort marker took offset 3.
    assert_eq!(stored_offsets(&c, 0), vec![0, 1, 2, 3, 4]);
    assert_eq!(
        offsets(&read_all(&c, 0, 0, Isolation::ReadCommitted)),
        vec![0, 4]
    );
    assert_eq!(
        offsets(&read_all(&c, 0, 0, Isolation::ReadUncommitted)),
        vec![0, 1, 2, 4]
    );
    // Until cleaned: then nobody sees them.
    c.roll_segment("t", 0).unwrap();
    c.clean("t", 0, None).unwrap();
    assert_eq!(
        offsets(&read_all(&c, 0, 0, Isolation::ReadUncommitted)),
        vec![0, 4]
    );
}

#[test]
fn an_open_transaction_holds_back_the_last_stable_offset() {
    let mut c = single(100);
    c.append("t", 0, &[kv("a", Some("1"))]).unwrap();
    let p = c.init_transactions("tx");
    c.begin_transaction(p).unwrap();
    c.send_transactional(p, "t", &[rec("b", "1")]).unwrap();
    c.append("t", 0, &[kv("c", Some("1"))]).unwrap();
    assert_eq!(c.high_watermark("t", 0).unwrap(), 3);
    assert_eq!(c.last_stable_offset("t", 0).unwrap(), 1);
    assert_eq!(c.end_offsets("t", Isolation::ReadCommitted).unwrap()[&0], 1);
    assert_eq!(
        c.end_offsets("t", Isolation::ReadUncommitted).unwrap()[&0],
        3
    );
    // read_committed stops at the LSO, even for the plain record after it.
    let batch = c.fetch("t", 0, 0, 10, Isolation::ReadCommitted).unwrap();
    assert_eq!(batch.records.len(), 1);
    assert_eq!(batch.next_offset, 1);
    let batch = c.fetch("t", 0, 1, 10, Isolation::ReadCommitted).unwrap();
    assert!(batch.records.is_empty());
    assert_eq!(batch.next_offset, 1);
    assert_eq!(
        offsets(&read_all(&c, 0, 0, Isolation::ReadUncommitted)),
        vec![0, 1, 2]
    );
    // Cleaning never passes the LSO.
    c.roll_segment("t", 0).unwrap();
    assert_eq!(c.clean("t", 0, None).unwrap().horizon, 1);
    c.commit_transaction(p).unwrap();
    // The commit marker is offset 3; the LSO catches up with the high watermark.
    assert_eq!(c.last_stable_offset("t", 0).unwrap(), 4);
    assert_eq!(
        offsets(&read_all(&c, 0, 0, Isolation::ReadCommitted)),
        vec![0, 1, 2]
    );
    assert_eq!(
        c.fetch("t", 0, 0, 10, Isolation::ReadCommitted)
            .unwrap()
            .next_offset,
        4
    );
}

#[test]
fn a_new_init_fences_the_zombie_and_aborts_its_open_transaction() {
    let mut c = cluster_with(TopicConfig::compacted(2).with_segment_records(100));
    let zombie = c.init_transactions("leader");
    c.begin_transaction(zombie).unwrap();
    let to = |p: i32| ProducerRecord {
        partition: Some(p),
        ..rec("k", "zombie")
    };
    c.send_transactional(zombie, "t", &[to(0), to(1)]).unwrap();
    let leader = c.init_transactions("leader");
    assert_eq!(leader.producer_id(), zombie.producer_id());
    assert_eq!((zombie.epoch(), leader.epoch()), (0, 1));
    // Its transaction was aborted in both partitions it touched.
    for p in 0..2 {
        let kinds: Vec<_> = c.records("t", p).unwrap().iter().map(|r| r.kind).collect();
        assert_eq!(
            kinds,
            vec![
                RecordKind::Transactional(TxnState::Aborted),
                RecordKind::Marker { committed: false }
            ]
        );
        assert_eq!(c.last_stable_offset("t", p).unwrap(), 2);
    }
    // Every further call of the zombie fails and writes nothing.
    let fenced = LogError::Fenced {
        transactional_id: "leader".into(),
    };
    assert_eq!(c.begin_transaction(zombie), Err(fenced.clone()));
    assert_eq!(
        c.send_transactional(zombie, "t", &[to(0)]),
        Err(fenced.clone())
    );
    assert_eq!(c.commit_transaction(zombie), Err(fenced.clone()));
    assert_eq!(c.abort_transaction(zombie), Err(fenced));
    assert_eq!(c.high_watermark("t", 0).unwrap(), 2);
    // The new leader writes normally.
    c.begin_transaction(leader).unwrap();
    c.send_transactional(leader, "t", &[rec("k", "leader")])
        .unwrap();
    c.commit_transaction(leader).unwrap();
    assert_eq!(
        read_all(&c, 0, 0, Isolation::ReadCommitted),
        vec![(2, "k".into(), Some("leader".into()))]
    );
    // Other transactional ids are independent.
    assert_ne!(
        c.init_transactions("other").producer_id(),
        leader.producer_id()
    );
    c.begin_transaction(leader).unwrap();
}

#[test]
fn transaction_calls_out_of_order_are_refused_without_effect() {
    let mut c = single(100);
    let p = c.init_transactions("tx");
    assert!(matches!(
        c.send_transactional(p, "t", &[rec("a", "1")]),
        Err(LogError::InvalidTransactionState { .. })
    ));
    assert!(c.commit_transaction(p).is_err());
    assert!(c.abort_transaction(p).is_err());
    c.begin_transaction(p).unwrap();
    assert!(c.begin_transaction(p).is_err());
    // A bad partition refuses the whole batch.
    let bad = ProducerRecord {
        partition: Some(3),
        ..rec("b", "1")
    };
    assert!(matches!(
        c.send_transactional(p, "t", &[rec("a", "1"), bad]),
        Err(LogError::UnknownPartition { .. })
    ));
    assert_eq!(c.high_watermark("t", 0).unwrap(), 0);
    // An empty transaction writes no marker.
    c.commit_transaction(p).unwrap();
    assert_eq!(c.high_watermark("t", 0).unwrap(), 0);
}

#[test]
fn a_transaction_marks_only_the_partitions_it_wrote_to() {
    let mut c = cluster_with(TopicConfig::compacted(3).with_segment_records(100));
    let p = c.init_transactions("tx");
    c.begin_transaction(p).unwrap();
    let to = |part: i32| ProducerRecord {
        partition: Some(part),
        ..rec("k", "v")
    };
    c.send_transactional(p, "t", &[to(0), to(2), to(2)])
        .unwrap();
    c.commit_transaction(p).unwrap();
    let hw: Vec<i64> = (0..3).map(|q| c.high_watermark("t", q).unwrap()).collect();
    assert_eq!(hw, vec![2, 0, 3]);
}
