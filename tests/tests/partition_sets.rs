//! The offsets reader's per-connector partition sets against a direct model of Java's
//! `processPartitionKey`: a list of (partition, member order) per connector, where adding a
//! partition equal (as a map) to one present changes nothing and a tombstone removes the equal
//! one, whichever key bytes added it.
//!
//! Keys are generated with equal partitions in different member orders and spellings, across
//! two connectors, so that the slot-hash grouping and the tracked flags of the storage are
//! exercised where they could go wrong. The live data (last value per exact key bytes) and a
//! checkpoint restart are checked too.

use std::collections::BTreeMap;

use engine::json::{JsonObject, JsonValue};
use engine::offsets::{OffsetLog, OffsetSnapshot, OrderedMap};
use engine::Record;
use proptest::prelude::*;

const CONNECTORS: [&str; 2] = ["c1", "c2"];
/// Partition members: each partition is a non-empty subset of these, with these values.
const MEMBERS: [(&str, i64); 3] = [("a", 1), ("b", 2), ("c", 3)];

/// One record: which connector, which members (a bit set) in which order, spaced or not, and
/// a value or a tombstone.
#[derive(Debug, Clone)]
struct Op {
    connector: usize,
    members: u8,
    rotation: usize,
    spaced: bool,
    value: Option<u8>,
}

fn op() -> impl Strategy<Value = Op> {
    (
        0..2usize,
        1..8u8,
        0..3usize,
        any::<bool>(),
        prop::option::weighted(0.7, 0..4u8),
    )
        .prop_map(|(connector, members, rotation, spaced, value)| Op {
            connector,
            members,
            rotation,
            spaced,
            value,
        })
}

impl Op {
    /// The partition's member names in the key's order.
    fn order(&self) -> Vec<&'static str> {
        let mut names: Vec<&str> = MEMBERS
            .iter()
            .enumerate()
            .filter(|(i, _)| self.members & (1 << i) != 0)
            .map(|(_, (name, _))| *name)
            .collect();
        let by = self.rotation % names.len();
        names.rotate_left(by);
        names
    }

    fn partition(&self) -> JsonObject {
        self.order()
            .into_iter()
            .map(|name| {
                let value = MEMBERS.iter().find(|(n, _)| *n == name).map_or(0, |m| m.1);
                (name.to_string(), JsonValue::Long(value))
            })
            .collect()
    }

    fn key(&self) -> Vec<u8> {
        let gap = if self.spaced { " " } else { "" };
        let members: Vec<String> = self
            .order()
            .into_iter()
            .map(|name| {
                let value = MEMBERS.iter().find(|(n, _)| *n == name).map_or(0, |m| m.1);
                format!("\"{name}\":{gap}{value}")
            })
            .collect();
        let joined = members.join(&format!(",{gap}"));
        format!("[\"{}\",{gap}{{{joined}}}]", CONNECTORS[self.connector]).into_bytes()
    }

    fn value(&self) -> Option<Vec<u8>> {
        self.value
            .map(|v| format!("{{\"offset\":{v}}}").into_bytes())
    }
}

/// Java's sets, transcribed: per connector, partitions in insertion order with the member order
/// of the key that added them.
#[derive(Default)]
struct Model {
    sets: BTreeMap<&'static str, Vec<(JsonObject, Vec<&'static str>)>>,
    data: BTreeMap<Vec<u8>, Vec<u8>>,
}

impl Model {
    fn apply(&mut self, op: &Op) {
        let set = self.sets.entry(CONNECTORS[op.connector]).or_default();
        let partition = op.partition();
        match op.value() {
            Some(value) => {
                if !set.iter().any(|(p, _)| *p == partition) {
                    set.push((partition, op.order()));
                }
                self.data.insert(op.key(), value);
            }
            None => {
                set.retain(|(p, _)| *p != partition);
                self.data.remove(&op.key());
            }
        }
    }

    /// What `connector_partitions_java_order` must answer: sorted by content.
    fn java_order(&self, connector: &str) -> Vec<OrderedMap> {
        let mut set = self.sets.get(connector).cloned().unwrap_or_default();
        set.sort_by(|a, b| a.0.cmp(&b.0));
        set.iter()
            .map(|(p, order)| OrderedMap::java_hash_map(p, order))
            .collect()
    }
}

fn check(snapshot: &OffsetSnapshot, model: &Model) -> Result<(), TestCaseError> {
    for connector in CONNECTORS {
        prop_assert_eq!(
            snapshot.connector_partitions_java_order(connector),
            model.java_order(connector),
            "connector {}",
            connector
        );
    }
    let data: BTreeMap<Vec<u8>, Vec<u8>> = snapshot
        .entries()
        .map(|(k, v)| (k.unwrap_or_default().to_vec(), v.value().to_vec()))
        .collect();
    prop_assert_eq!(&data, &model.data);
    for (key, value) in &model.data {
        prop_assert_eq!(snapshot.get(Some(key)).map(|s| s.value()), Some(&value[..]));
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn partition_sets_follow_javas_process_partition_key(
        ops in prop::collection::vec(op(), 1..60),
        cut in any::<prop::sample::Index>(),
    ) {
        let cut = cut.index(ops.len() + 1);
        // A start-up read (its records journaled, settled at the catch-up) and a log caught
        // up from its first record (each record applied to the persistent set) must hold the
        // same state, tracked flags included: their checkpoints are equal byte for byte.
        let mut log = OffsetLog::new();
        let mut applied = OffsetLog::new();
        applied.mark_caught_up();
        let mut model = Model::default();
        let mut restarted = None;
        for (offset, op) in ops.iter().enumerate() {
            if offset == cut {
                restarted = Some(OffsetLog::restore(&log.checkpoint()).expect("own checkpoint"));
            }
            let (key, value) = (op.key(), op.value());
            let record = Record::new(&key, value.as_deref(), offset as i64);
            log.handle_record(record).expect("a valid record");
            applied.handle_record(record).expect("a valid record");
            while applied.poll_event().is_some() {}
            if let Some(restarted) = restarted.as_mut() {
                restarted.handle_record(record).expect("a valid record");
            }
            model.apply(op);
            check(&log.snapshot(), &model)?;
        }
        if let Some(restarted) = restarted {
            prop_assert_eq!(restarted.snapshot(), log.snapshot());
        }
        prop_assert_eq!(log.checkpoint(), applied.checkpoint());
        log.mark_caught_up();
        prop_assert_eq!(log.checkpoint(), applied.checkpoint());
        prop_assert_eq!(log.snapshot(), applied.snapshot());
    }
}
