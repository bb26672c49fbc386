//! Unit tests of the log model and the transport, one file per rule family.

mod cleaning;
mod fetch;
mod property;
mod transactions;
mod transport;

use crate::{Isolation, KeyValue, MemoryCluster, TopicConfig};

/// A key and a value (`None`: tombstone) from text.
fn kv(key: &str, value: Option<&str>) -> KeyValue {
    (
        Some(key.as_bytes().to_vec()),
        value.map(|v| v.as_bytes().to_vec()),
    )
}

/// A cluster (seed 1) with one topic `t` of the given config.
fn cluster_with(config: TopicConfig) -> MemoryCluster {
    let mut cluster = MemoryCluster::new(1);
    cluster.create_topic("t", config).unwrap();
    cluster
}

/// A single-partition compacted topic `t` with segments of `segment` offsets.
fn single(segment: u64) -> MemoryCluster {
    cluster_with(TopicConfig::compacted(1).with_segment_records(segment))
}

/// The offsets of every record still present in partition `p` of `t` (markers included).
fn stored_offsets(cluster: &MemoryCluster, p: i32) -> Vec<i64> {
    cluster
        .records("t", p)
        .unwrap()
        .iter()
        .map(|r| r.offset)
        .collect()
}

/// `(offset, key, value)` as text of everything a reader of `isolation` fetches from `from`.
fn read_all(
    cluster: &MemoryCluster,
    p: i32,
    from: i64,
    isolation: Isolation,
) -> Vec<(i64, String, Option<String>)> {
    let batch = cluster.fetch("t", p, from, usize::MAX, isolation).unwrap();
    batch
        .records
        .iter()
        .map(|r| {
            let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
            (
                r.offset,
                r.key.map(text).unwrap_or_default(),
                r.value.map(text),
            )
        })
        .collect()
}
