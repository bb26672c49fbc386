//! Property: for random appends, transactions, rolls, clock moves and cleaning passes (also
//! between the fetches of a reader), a reader from offset 0 sees strictly increasing offsets,
//! only records that were appended at exactly those offsets, and at least the final record of
//! every key (guarantee 4; tombstone retention never expires here).

use std::collections::BTreeMap;

use engine::OwnedRecord;
use engine::ProducerRecord;
use proptest::prelude::*;

use crate::{Isolation, MemoryCluster, TopicConfig};

const PARTITIONS: i32 = 2;

#[derive(Debug, Clone)]
enum Op {
    Append {
        partition: i32,
        key: u8,
        tombstone: bool,
    },
    Transaction {
        partition: i32,
        key: u8,
        commit: bool,
    },
    Clean {
        partition: i32,
        horizon: Option<i64>,
    },
    Roll {
        partition: i32,
    },
    Advance {
        ms: u16,
    },
}

fn op() -> impl Strategy<Value = Op> {
    let partition = 0..PARTITIONS;
    prop_oneof![
        5 => (partition.clone(), 0..4_u8, any::<bool>())
            .prop_map(|(partition, key, tombstone)| Op::Append { partition, key, tombstone }),
        2 => (partition.clone(), 0..4_u8, any::<bool>())
            .prop_map(|(partition, key, commit)| Op::Transaction { partition, key, commit }),
        2 => (partition.clone(), proptest::option::of(-2..40_i64))
            .prop_map(|(partition, horizon)| Op::Clean { partition, horizon }),
        1 => partition.prop_map(|partition| Op::Roll { partition }),
        1 => (0..30_u16).prop_map(|ms| Op::Advance { ms }),
    ]
}

/// What was appended at one offset.
#[derive(Debug, Clone)]
struct Appended {
    key: Vec<u8>,
    value: Option<Vec<u8>>,
    aborted: bool,
}

type Model = Vec<BTreeMap<i64, Appended>>;

fn apply(cluster: &mut MemoryCluster, model: &mut Model, step: usize, op: &Op) {
    let record = |partition: i32, key: u8, tombstone: bool| ProducerRecord {
        key: vec![b'k', key],
        value: (!tombstone).then(|| format!("v{step}").into_bytes()),
        partition: Some(partition),
    };
    match *op {
        Op::Append {
            partition,
            key,
            tombstone,
        } => {
            let r = record(partition, key, tombstone);
            let placed = cluster.send("t", core::slice::from_ref(&r)).unwrap();
            let entry = Appended {
                key: r.key,
                value: r.value,
                aborted: false,
            };
            model[partition as usize].insert(placed[0].1, entry);
        }
        Op::Transaction {
            partition,
            key,
            commit,
        } => {
            let producer = cluster.init_transactions("tx");
            cluster.begin_transaction(producer).unwrap();
            let r = record(partition, key, false);
            let placed = cluster
                .send_transactional(producer, "t", core::slice::from_ref(&r))
                .unwrap();
            if commit {
                cluster.commit_transaction(producer).unwrap();
            } else {
                cluster.abort_transaction(producer).unwrap();
            }
            let entry = Appended {
                key: r.key,
                value: r.value,
                aborted: !commit,
            };
            model[partition as usize].insert(placed[0].1, entry);
        }
        Op::Clean { partition, horizon } => {
            let limit = cluster.cleanable_horizon("t", partition).unwrap();
            let cleaned = cluster.clean("t", partition, horizon).unwrap();
            assert!(cleaned.horizon <= limit);
        }
        Op::Roll { partition } => cluster.roll_segment("t", partition).unwrap(),
        Op::Advance { ms } => cluster.advance_clock(u64::from(ms)),
    }
}

/// Reads partition `p` from 0 to its end, cleaning randomly before each fetch.
fn read(
    cluster: &mut MemoryCluster,
    p: i32,
    isolation: Isolation,
    max: usize,
    clean_probability: f64,
) -> Vec<OwnedRecord> {
    let end = cluster.end_offsets("t", isolation).unwrap()[&p];
    let mut position = 0;
    let mut out = Vec::new();
    while position < end {
        cluster.clean_random("t", clean_probability).unwrap();
        let batch = cluster.fetch("t", p, position, max, isolation).unwrap();
        assert!(batch.records.len() <= max);
        assert!(batch.next_offset > position, "no progress at {position}");
        assert!(batch.next_offset <= end);
        out.extend(batch.records.to_owned_records());
        position = batch.next_offset;
    }
    out
}

proptest! {
    #[test]
    fn a_reader_from_zero_sees_the_final_record_of_every_key(
        seed in any::<u64>(),
        lag in 0..20_i64,
        ops in proptest::collection::vec(op(), 0..80),
        max in 1..5_usize,
        clean_probability in 0.0..1.0_f64,
    ) {
        let mut cluster = MemoryCluster::new(seed);
        let config = TopicConfig::compacted(PARTITIONS)
            .with_segment_records(3)
            .with_min_compaction_lag_ms(lag)
            .with_delete_retention_ms(i64::MAX);
        cluster.create_topic("t", config).unwrap();
        let mut model: Model = vec![BTreeMap::new(); PARTITIONS as usize];
        for (step, op) in ops.iter().enumerate() {
            apply(&mut cluster, &mut model, step, op);
        }
        for p in 0..PARTITIONS {
            let appended = &model[p as usize];
            let mut finals = BTreeMap::new();
            for (offset, entry) in appended.iter().filter(|(_, e)| !e.aborted) {
                finals.insert(entry.key.clone(), *offset);
            }
            for isolation in [Isolation::ReadCommitted, Isolation::ReadUncommitted] {
                let seen = read(&mut cluster, p, isolation, max, clean_probability);
                let offsets: Vec<i64> = seen.iter().map(|r| r.offset).collect();
                prop_assert!(offsets.windows(2).all(|w| w[0] < w[1]), "{:?}", offsets);
                for OwnedRecord { offset, key, value, partition, .. } in &seen {
                    prop_assert_eq!(*partition, p);
                    let entry = appended.get(offset);
                    prop_assert!(entry.is_some(), "offset {} was never appended", offset);
                    let entry = entry.unwrap();
                    prop_assert_eq!(Some(&entry.key), key.as_ref());
                    prop_assert_eq!(&entry.value, value);
                    if isolation == Isolation::ReadCommitted {
                        prop_assert!(!entry.aborted, "aborted record {} seen", offset);
                    }
                }
                for (key, offset) in &finals {
                    prop_assert!(
                        offsets.contains(offset),
                        "final record {} of {:?} missing from {:?}", offset, key, offsets
                    );
                }
            }
        }
    }
}
