//! The offsets topic's reference: the naive fold of the data map and of each connector's
//! partition set (KIP-131, KIP-875), and the generators and harnesses that run real offsets
//! stores over the simulator and check them against it.

use std::collections::{BTreeMap, BTreeSet};

use connect_state_memory::{FetchFault, MemoryCluster};
use connect_state_store::TopicKind;
use engine::json::{JsonObject, JsonValue};
use engine::offsets::{
    default_partition, kip875, offset_key, offset_value, OffsetEvent, OffsetLog, OffsetSnapshot,
    OrderedMap,
};
use engine::OwnedRecord;
use engine::ProducerRecord;
use proptest::prelude::*;

use crate::sim::{Appended, LogCapture, Sim, SimSpec};

use super::check_consumed;
use super::status::fetch_fault;

/// The offsets topic's name in the simulator.
pub const OFFSETS_TOPIC: &str = "connect-offsets";
/// Java's default (`offset.storage.partitions`).
pub const OFFSETS_PARTITIONS: i32 = 25;

// ---------------------------------------------------------------------------------------------
// Property 3: offsets.

/// Source connectors writing offsets (one with non-ASCII letters).
pub const OFFSET_CONNECTORS: [&str; 3] = ["file-source", "jdbc", "ünï-src"];
/// Java `HashMap` order of all three: database, shard, table.
pub const MEMBERS: [&str; 3] = ["table", "shard", "database"];

/// One generated operation on the offsets topic.
#[derive(Debug, Clone)]
pub enum OffsetOp {
    /// A source offset commit (or its tombstone).
    Write {
        /// Index into [`OFFSET_CONNECTORS`].
        connector: usize,
        /// Members in the connector's own order; `None` is the null partition `[c, null]`.
        partition: Option<Vec<(usize, JsonValue)>>,
        /// `{"position": n}`, or a tombstone.
        offset: Option<i64>,
        /// An explicit partition, as a writer without Java's partitioner would pick.
        misplaced: Option<i32>,
        /// Whether the record is appended twice.
        duplicate: bool,
        /// Whether the writer reads it back before the next operation.
        read_back: bool,
    },
    /// Roll a partition's active segment.
    Roll {
        /// The partition rolled.
        partition: i32,
    },
    /// A default cleaning pass of every partition.
    Clean,
    /// The reader reads to the end (if it has started).
    ReaderCatchUp,
}

/// A generated offsets run: the operations, when the reader starts, and how the simulator
/// fetches and cleans.
#[derive(Debug, Clone)]
pub struct OffsetsRun {
    /// The simulator's seed.
    pub seed: u64,
    /// The writer's operations, in order.
    pub ops: Vec<OffsetOp>,
    /// The operation before which the reader starts.
    pub reader_start: usize,
    /// Records per fetch.
    pub fetch_size: usize,
    /// How the cleaner interferes with fetches.
    pub fetch_fault: FetchFault,
    /// Records per segment.
    pub segment_records: u64,
}

/// A partition member's value: a string or a long.
pub fn member_value() -> impl Strategy<Value = JsonValue> {
    prop_oneof![
        prop::sample::select(vec!["a", "orders.csv"]).prop_map(|s| JsonValue::String(s.into())),
        (0i64..2).prop_map(JsonValue::Long),
    ]
}

/// A source partition: one to three of [`MEMBERS`] in any order.
pub fn source_partition() -> impl Strategy<Value = Vec<(usize, JsonValue)>> {
    (
        prop::sample::subsequence(vec![0usize, 1, 2], 1..=3).prop_shuffle(),
        prop::collection::vec(member_value(), 3),
    )
        .prop_map(|(names, values)| names.into_iter().map(|n| (n, values[n].clone())).collect())
}

/// One offsets operation, writes most often.
pub fn offset_op() -> impl Strategy<Value = OffsetOp> {
    prop_oneof![
        12 => (
            0..OFFSET_CONNECTORS.len(),
            prop::option::weighted(0.95, source_partition()),
            prop::option::weighted(0.8, 0i64..100),
            prop::option::weighted(0.1, 0..OFFSETS_PARTITIONS),
            prop::bool::weighted(0.15),
            any::<bool>(),
        )
            .prop_map(|(connector, partition, offset, misplaced, duplicate, read_back)| {
                OffsetOp::Write { connector, partition, offset, misplaced, duplicate, read_back }
            }),
        1 => (0..OFFSETS_PARTITIONS).prop_map(|partition| OffsetOp::Roll { partition }),
        1 => Just(OffsetOp::Clean),
        2 => Just(OffsetOp::ReaderCatchUp),
    ]
}

/// A whole offsets run of 1 to 39 operations.
pub fn offsets_run() -> impl Strategy<Value = OffsetsRun> {
    (
        any::<u64>(),
        prop::collection::vec(offset_op(), 1..40),
        0.0f64..=1.0,
        1usize..10,
        fetch_fault(),
        1u64..6,
    )
        .prop_map(
            |(seed, ops, start, fetch_size, fetch_fault, segment_records)| OffsetsRun {
                reader_start: (ops.len() as f64 * start) as usize,
                seed,
                ops,
                fetch_size,
                fetch_fault,
                segment_records,
            },
        )
}

/// The key Java writes for `[connector, partition]`, formatted by hand: compact JSON, members
/// in the map's own order (spec §4.1).
pub fn expected_key(connector: &str, partition: Option<&[(usize, JsonValue)]>) -> Vec<u8> {
    let c = serde_json::to_string(connector).expect("a string");
    let p = match partition {
        None => "null".to_owned(),
        Some(members) => {
            let members: Vec<String> = members
                .iter()
                .map(|(n, v)| {
                    let v = match v {
                        JsonValue::String(s) => serde_json::to_string(s).expect("a string"),
                        JsonValue::Long(n) => n.to_string(),
                        other => unreachable!("generated {other:?}"),
                    };
                    format!("\"{}\":{v}", MEMBERS[*n])
                })
                .collect();
            format!("{{{}}}", members.join(","))
        }
    };
    format!("[{c},{p}]").into_bytes()
}

/// Parses an offsets key with serde_json: its connector and partition content (`None` for a
/// null partition).
pub fn parse_offset_key(bytes: &[u8]) -> (String, Option<JsonObject>) {
    let v: serde_json::Value = serde_json::from_slice(bytes).expect("key JSON");
    let items = v.as_array().expect("a list");
    assert_eq!(items.len(), 2);
    let connector = items[0].as_str().expect("a name").to_owned();
    let partition = items[1].as_object().map(|m| {
        m.iter()
            .map(|(k, v)| {
                let v = match v {
                    serde_json::Value::String(s) => JsonValue::String(s.clone()),
                    serde_json::Value::Number(n) => JsonValue::Long(n.as_i64().expect("a long")),
                    other => unreachable!("generated {other:?}"),
                };
                (k.clone(), v)
            })
            .collect()
    });
    (connector, partition)
}

/// Java's `KafkaOffsetBackingStore` state, naively: raw key bytes to `(partition, offset,
/// value)`, and per connector the set of partition maps (`Map.equals`: member order ignored).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct OffsetsModel {
    /// Key bytes to the partition, offset and value of its latest record.
    pub data: BTreeMap<Vec<u8>, (i32, i64, Vec<u8>)>,
    /// Each connector's source partitions.
    pub sets: BTreeMap<String, BTreeSet<JsonObject>>,
}

impl OffsetsModel {
    /// Folds one record (`None` is a tombstone) as Java's store and offset reader do.
    pub fn apply(&mut self, partition: i32, offset: i64, key: &[u8], value: Option<&[u8]>) {
        if let (c, Some(content)) = parse_offset_key(key) {
            // The set is created even by a tombstone (`computeIfAbsent`, spec §4.4).
            let set = self.sets.entry(c).or_default();
            if value.is_some() {
                set.insert(content);
            } else {
                set.remove(&content);
            }
        }
        match value {
            Some(v) => {
                self.data
                    .insert(key.to_vec(), (partition, offset, v.to_vec()));
            }
            None => {
                self.data.remove(key);
            }
        }
    }

    /// The model a real snapshot amounts to, to compare with a fold.
    pub fn of(s: &OffsetSnapshot) -> Self {
        Self {
            data: s
                .entries()
                .map(|(k, v)| {
                    let k = k.expect("keyed").to_vec();
                    (k, (v.partition(), v.offset(), v.value().to_vec()))
                })
                .collect(),
            sets: s
                .connectors()
                .map(|c| (c.to_owned(), s.connector_partitions(c).collect()))
                .collect(),
        }
    }

    /// The model of `consumed` folded in order from an empty store.
    pub fn fold(consumed: &[OwnedRecord]) -> Self {
        let mut model = Self::default();
        for r in consumed {
            let key = r.key.as_deref().expect("keyed");
            model.apply(r.partition, r.offset, key, r.value.as_deref());
        }
        model
    }
}

/// What an offsets run left, before and after every connector's KIP-875 reset.
pub struct OffsetsOutcome {
    /// Before the KIP-875 resets.
    pub before_reset: OffsetSnapshot,
    /// After producing every connector's reset and reading it back.
    pub snapshot: OffsetSnapshot,
    /// The reader's events.
    pub events: Vec<OffsetEvent>,
    /// What the reader consumed before the resets.
    pub consumed_before_reset: Vec<OwnedRecord>,
    /// Everything the reader consumed.
    pub consumed: Vec<OwnedRecord>,
    /// What the writer appended before the resets.
    pub log_before_reset: LogCapture,
    /// Everything the writer appended.
    pub log: LogCapture,
    /// Each connector's reset records.
    pub resets: Vec<(String, Vec<ProducerRecord>)>,
    /// The cluster before the resets.
    pub cluster_before_reset: MemoryCluster,
    /// The cluster at the end.
    pub cluster: MemoryCluster,
}

/// Runs `run` over the simulator, then computes every connector's reset from the caught-up
/// reader, produces it and reads it back.
pub fn run_offsets(run: &OffsetsRun) -> OffsetsOutcome {
    let mut sim: Sim<OffsetLog> = Sim::new(SimSpec {
        seed: run.seed,
        topic: OFFSETS_TOPIC,
        kind: TopicKind::Offsets,
        partitions: OFFSETS_PARTITIONS,
        segment_records: run.segment_records,
        fetch_size: run.fetch_size,
        fetch_fault: run.fetch_fault,
    });
    for (i, op) in run.ops.iter().enumerate() {
        if i == run.reader_start {
            sim.start_reader();
        }
        match op {
            OffsetOp::Write {
                connector,
                partition,
                offset,
                misplaced,
                duplicate,
                read_back,
            } => {
                let c = OFFSET_CONNECTORS[*connector];
                let map = partition.as_ref().map(|members| {
                    OrderedMap::new(members.iter().map(|(n, v)| (MEMBERS[*n], v.clone())))
                });
                let key = offset_key(c, map.as_ref()).expect("a valid partition");
                assert_eq!(key, expected_key(c, partition.as_deref()));
                let offset = offset.map(|n| OrderedMap::new([("position", JsonValue::Long(n))]));
                let value = offset_value(offset.as_ref()).expect("a valid offset");
                if let Some(n) = offset_to_position(offset.as_ref()) {
                    assert_eq!(
                        value.as_deref(),
                        Some(format!("{{\"position\":{n}}}").as_bytes())
                    );
                }
                let record = ProducerRecord {
                    key,
                    value,
                    partition: *misplaced,
                };
                sim.write(&[record], *duplicate, *read_back);
            }
            OffsetOp::Roll { partition } => sim.roll(*partition),
            OffsetOp::Clean => sim.clean(),
            OffsetOp::ReaderCatchUp => sim.reader_catch_up(),
        }
    }
    sim.finish_reading();
    let before_reset = sim.reader.machine().snapshot();
    let consumed_before_reset = sim.consumed();
    let log_before_reset = sim.log.clone();
    let cluster_before_reset = sim.cluster_now();

    // KIP-875 reset of every connector, computed from the caught-up reader.
    let resets: Vec<(String, Vec<ProducerRecord>)> = OFFSET_CONNECTORS
        .iter()
        .map(|c| {
            let records =
                kip875::reset_records(&before_reset, c, OFFSETS_PARTITIONS).expect("reset records");
            ((*c).to_owned(), records)
        })
        .collect();
    let all: Vec<ProducerRecord> = resets.iter().flat_map(|(_, r)| r.iter().cloned()).collect();
    if !all.is_empty() {
        sim.write(&all, false, true);
    }
    sim.reader_catch_up();
    OffsetsOutcome {
        before_reset,
        snapshot: sim.reader.machine().snapshot(),
        consumed_before_reset,
        consumed: sim.consumed(),
        log_before_reset,
        resets,
        cluster_before_reset,
        cluster: sim.cluster_now(),
        events: std::mem::take(&mut sim.events),
        log: std::mem::take(&mut sim.log),
    }
}

/// The `position` a generated offset holds.
pub fn offset_to_position(offset: Option<&OrderedMap>) -> Option<i64> {
    offset?.members().first()?.1.as_long()
}

/// Property 3 on one reader state (before or after the reset):
///
/// * exact: the data map and the partition sets equal the naive fold over the records in the
///   order the reader consumed them (partition sets compare maps regardless of member order, so
///   the same source partition written with two member orders lives under two keys, possibly
///   in two partitions, and its membership depends on the interleaving);
/// * order-independent, from the full log: for every key all of whose records lie in one
///   partition, the latest value wins and a tombstone removes it (a naive
///   `BTreeMap<Vec<u8>, Vec<u8>>` fold); for every source partition written under one key only,
///   membership in its connector's set is "the last record of that key is a value".
pub fn check_offsets_state(
    snapshot: &OffsetSnapshot,
    consumed: &[OwnedRecord],
    log: &LogCapture,
) -> Result<(), TestCaseError> {
    check_consumed(consumed, log)?;
    let actual = OffsetsModel::of(snapshot);
    prop_assert_eq!(&actual, &OffsetsModel::fold(consumed));

    let history = log.by_key();
    let mut naive: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
    for r in &log.records {
        match &r.value {
            Some(v) => naive.insert(r.key.clone(), v.clone()),
            None => naive.remove(&r.key),
        };
    }
    let one_partition = |recs: &[&Appended]| recs.iter().all(|r| r.partition == recs[0].partition);
    for (key, recs) in &history {
        if !one_partition(recs) {
            continue;
        }
        let last = recs.last().expect("records");
        prop_assert_eq!(naive.get(*key), last.value.as_ref());
        let got = snapshot.get(Some(key));
        prop_assert_eq!(got.map(|s| s.value()), naive.get(*key).map(Vec::as_slice));
        if let Some(stored) = got {
            prop_assert_eq!(
                (stored.partition(), stored.offset()),
                (last.partition, last.offset)
            );
        }
    }
    // Source partitions written under exactly one key, in one partition.
    let mut keys_of: BTreeMap<(String, JsonObject), BTreeSet<&[u8]>> = BTreeMap::new();
    for key in history.keys() {
        if let (c, Some(content)) = parse_offset_key(key) {
            keys_of.entry((c, content)).or_default().insert(key);
        }
    }
    for ((c, content), keys) in &keys_of {
        let [key] = keys.iter().copied().collect::<Vec<_>>()[..] else {
            continue;
        };
        let recs = &history[key];
        if !one_partition(recs) {
            continue;
        }
        let live = recs.last().expect("records").value.is_some();
        let member = actual.sets.get(c).is_some_and(|set| set.contains(content));
        prop_assert_eq!(member, live, "{} {:?}", c, content);
    }
    Ok(())
}

/// Property 3, the KIP-875 part: the reset tombstones cover the connector's partition set, each
/// lands on the partition where the live record of its key is (checked in the simulator), and
/// once read back the listing is empty.
pub fn check_offsets(out: &OffsetsOutcome) -> Result<(), TestCaseError> {
    check_offsets_state(
        &out.before_reset,
        &out.consumed_before_reset,
        &out.log_before_reset,
    )?;
    for (c, records) in &out.resets {
        let set: BTreeSet<JsonObject> = out.before_reset.connector_partitions(c).collect();
        let contents: BTreeSet<JsonObject> = records
            .iter()
            .map(|r| parse_offset_key(&r.key).1.expect("a partition"))
            .collect();
        prop_assert_eq!(records.len(), set.len());
        prop_assert_eq!(&contents, &set);
        let listed: BTreeSet<JsonObject> = kip875::list(&out.before_reset, c)
            .offsets
            .iter()
            .map(|e| e.partition.to_object())
            .collect();
        prop_assert_eq!(&listed, &set);
        for r in records {
            prop_assert_eq!(parse_offset_key(&r.key).0, c.clone());
            prop_assert!(r.value.is_none(), "a reset writes tombstones");
            let p = r.partition;
            prop_assert!(p.is_some(), "a reset names its partition");
            let p = p.expect("checked");
            match out.before_reset.get(Some(&r.key)) {
                Some(stored) => {
                    prop_assert_eq!(p, stored.partition());
                    let there = out
                        .cluster_before_reset
                        .records(OFFSETS_TOPIC, p)
                        .expect("partition")
                        .into_iter()
                        .rfind(|l| l.key.as_deref() == Some(r.key.as_slice()));
                    prop_assert!(there.is_some(), "no record of the key in {p}");
                    let there = there.expect("checked");
                    prop_assert_eq!(there.offset, stored.offset());
                    prop_assert_eq!(there.value.as_deref(), Some(stored.value()));
                }
                None => prop_assert_eq!(Some(p), default_partition(&r.key, OFFSETS_PARTITIONS)),
            }
        }
    }
    check_offsets_state(&out.snapshot, &out.consumed, &out.log)?;
    for c in OFFSET_CONNECTORS {
        prop_assert!(
            kip875::list(&out.snapshot, c).offsets.is_empty(),
            "{c} still lists offsets"
        );
        prop_assert_eq!(out.snapshot.connector_partitions(c).count(), 0);
    }
    Ok(())
}
