//! Naive references the property tests compare the core with, written from the specs with
//! plain `std` maps, independent of the core: the config topic's fold ([`config`]), and the
//! status and offsets topics' models, with the generators and harnesses that drive the real
//! stores over the simulator and check them ([`status`], [`offsets`]).

pub mod config;
pub mod offsets;
pub mod status;

pub use config::*;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

use connect_state_memory::{MemoryCluster, TopicConfig};
use engine::OwnedRecord;
use proptest::prelude::*;

use crate::sim::{Appended, LogCapture};

/// A simulated cluster holding one compacted `topic` of `partitions` partitions whose segments
/// roll every `segment_records` records, its faults drawn from `seed`.
pub fn new_cluster(
    seed: u64,
    topic: &str,
    partitions: i32,
    segment_records: u64,
) -> Arc<Mutex<MemoryCluster>> {
    let config = TopicConfig::compacted(partitions).with_segment_records(segment_records);
    crate::sim::cluster(seed, topic, config)
}

/// What every reader must satisfy whatever the faults: it consumed only records the writer
/// appended, each once, in offset order per partition; and since it read to the end, it saw the
/// last record of every key in every partition (compaction keeps the latest record of a key,
/// and tombstones survive here: the clock never reaches `delete.retention.ms`).
pub fn check_consumed(consumed: &[OwnedRecord], log: &LogCapture) -> Result<(), TestCaseError> {
    let appended: BTreeMap<(i32, i64), &Appended> = log
        .records
        .iter()
        .map(|r| ((r.partition, r.offset), r))
        .collect();
    let mut last_offset: BTreeMap<i32, i64> = BTreeMap::new();
    for r in consumed {
        let a = appended.get(&(r.partition, r.offset));
        prop_assert!(a.is_some(), "consumed a record never appended: {r:?}");
        let a = a.copied().expect("checked");
        prop_assert_eq!(r.key.as_deref(), Some(a.key.as_slice()));
        prop_assert_eq!(&r.value, &a.value);
        let prev = last_offset.insert(r.partition, r.offset);
        prop_assert!(
            prev.is_none_or(|p| p < r.offset),
            "offsets go back in {}",
            r.partition
        );
    }
    let seen: BTreeSet<(i32, i64)> = consumed.iter().map(|r| (r.partition, r.offset)).collect();
    let mut last: BTreeMap<(i32, &[u8]), i64> = BTreeMap::new();
    for r in &log.records {
        last.insert((r.partition, r.key.as_slice()), r.offset);
    }
    for ((p, key), offset) in last {
        prop_assert!(
            seen.contains(&(p, offset)),
            "the reader missed the latest record of {:?} ({p}@{offset})",
            String::from_utf8_lossy(key)
        );
    }
    Ok(())
}
