//! Two states compared: connectors only in one, config differences (secrets masked), target
//! states, task counts, and source offsets that differ per partition. For migrations between
//! Connect clusters, and for "what changed since yesterday's dump".

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};

use engine::config::{ConfigSnapshot, TargetState};
use engine::history::config_diff;
use engine::offsets::OffsetSnapshot;
use serde::ser::{SerializeMap, SerializeStruct};
use serde::{Serialize, Serializer};
use serde_json::{json, Value};

use crate::history::masked_diff;

/// One side of a comparison: a config state and, when read, an offsets state.
#[derive(Debug, Clone, Default)]
pub struct Side {
    /// The config topic's state.
    pub config: ConfigSnapshot,
    /// The offsets topic's state (`None`: not read, so offsets are not compared).
    pub offsets: Option<OffsetSnapshot>,
}

/// What differs between two sides, borrowing from them: an offsets difference is the three
/// byte strings of its key and values, parsed only when written, so comparing two topics that
/// differ in millions of partitions holds a few words per partition beside the states.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Difference<'s> {
    /// Connectors with a config only in A, sorted.
    pub only_in_a: Vec<&'s str>,
    /// Connectors with a config only in B, sorted.
    pub only_in_b: Vec<&'s str>,
    /// Per connector (in both, or with offsets on either side), what differs; connectors
    /// that are equal are left out. Sorted by name; keys that name no connector are under "".
    pub connectors: BTreeMap<String, ConnectorDifference<'s>>,
}

/// What differs for one connector.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ConnectorDifference<'s> {
    /// The config diff (`{"added", "removed", "changed"}`, masked), when the configs differ.
    pub config: Option<Value>,
    /// The target states of A and B, when they differ.
    pub target_state: Option<(Option<&'static str>, Option<&'static str>)>,
    /// The task counts of A and B, when they differ.
    pub task_count: Option<(i32, i32)>,
    /// The offsets that differ, in key order.
    pub offsets: Vec<OffsetDifference<'s>>,
}

/// One offsets key whose value differs: `a` or `b` is `None` when only the other side holds
/// the key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OffsetDifference<'s> {
    /// The key bytes (`None`: a null key).
    pub key: Option<&'s [u8]>,
    /// A's value.
    pub a: Option<&'s [u8]>,
    /// B's value.
    pub b: Option<&'s [u8]>,
}

impl OffsetDifference<'_> {
    /// `{"partition", "a", "b"}`: the key's partition and both values as JSON (their text when
    /// they are not JSON).
    pub fn to_json(&self) -> Value {
        let (_, partition) = split_key(self.key);
        json!({"partition": partition, "a": self.a.map(as_json), "b": self.b.map(as_json)})
    }
}

impl Difference<'_> {
    /// Whether the sides differ at all.
    pub fn differs(&self) -> bool {
        !(self.only_in_a.is_empty() && self.only_in_b.is_empty() && self.connectors.is_empty())
    }
}

/// The JSON contract: `{"differs", "only_in_a", "only_in_b", "connectors": {c: {"config",
/// "target_state": {"a", "b"}, "task_count": {"a", "b"}, "offsets": [{"partition", "a",
/// "b"}]}}}`, each member only when it differs. Serialized as it is written: one offsets
/// entry at a time.
impl Serialize for Difference<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut doc = s.serialize_struct("Difference", 4)?;
        doc.serialize_field("differs", &self.differs())?;
        doc.serialize_field("only_in_a", &self.only_in_a)?;
        doc.serialize_field("only_in_b", &self.only_in_b)?;
        doc.serialize_field("connectors", &self.connectors)?;
        doc.end()
    }
}

impl Serialize for ConnectorDifference<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        struct Pair<T>(T, T);
        impl<T: Serialize> Serialize for Pair<T> {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let mut pair = s.serialize_map(Some(2))?;
                pair.serialize_entry("a", &self.0)?;
                pair.serialize_entry("b", &self.1)?;
                pair.end()
            }
        }
        struct Offsets<'a, 's>(&'a [OffsetDifference<'s>]);
        impl Serialize for Offsets<'_, '_> {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_seq(self.0.iter().map(OffsetDifference::to_json))
            }
        }
        let mut found = s.serialize_map(None)?;
        if let Some(config) = &self.config {
            found.serialize_entry("config", config)?;
        }
        if let Some((a, b)) = self.target_state {
            found.serialize_entry("target_state", &Pair(a, b))?;
        }
        if let Some((a, b)) = self.task_count {
            found.serialize_entry("task_count", &Pair(a, b))?;
        }
        if !self.offsets.is_empty() {
            found.serialize_entry("offsets", &Offsets(&self.offsets))?;
        }
        found.end()
    }
}

/// Compares `a` with `b`. Offsets are compared only when both sides read them.
pub fn compare<'s>(a: &'s Side, b: &'s Side, show_secrets: bool) -> Difference<'s> {
    let names_a: BTreeSet<&str> = a.config.connectors().collect();
    let names_b: BTreeSet<&str> = b.config.connectors().collect();
    let mut difference = Difference {
        only_in_a: names_a.difference(&names_b).copied().collect(),
        only_in_b: names_b.difference(&names_a).copied().collect(),
        connectors: BTreeMap::new(),
    };
    for c in names_a.intersection(&names_b) {
        let mut found = ConnectorDifference::default();
        if let (Some(old), Some(new)) = (a.config.connector_config(c), b.config.connector_config(c))
        {
            let diff = config_diff(old, new);
            if !diff.is_empty() {
                found.config = Some(masked_diff(&diff, show_secrets));
            }
        }
        let state = |side: &Side| side.config.target_state(c).map(TargetState::as_str);
        if state(a) != state(b) {
            found.target_state = Some((state(a), state(b)));
        }
        let (count_a, count_b) = (a.config.task_count(c), b.config.task_count(c));
        if count_a != count_b {
            found.task_count = Some((count_a, count_b));
        }
        if found != ConnectorDifference::default() {
            difference.connectors.insert(c.to_string(), found);
        }
    }
    if let (Some(offsets_a), Some(offsets_b)) = (&a.offsets, &b.offsets) {
        for found in offset_differences(offsets_a, offsets_b) {
            let (connector, _) = split_key(found.key);
            difference
                .connectors
                .entry(connector)
                .or_default()
                .offsets
                .push(found);
        }
    }
    difference
}

/// Offsets that differ, by key, in key order. Keys are compared as bytes (both maps are sorted
/// by them).
fn offset_differences<'s>(
    a: &'s OffsetSnapshot,
    b: &'s OffsetSnapshot,
) -> impl Iterator<Item = OffsetDifference<'s>> + 's {
    let mut left = a.entries().peekable();
    let mut right = b.entries().peekable();
    core::iter::from_fn(move || loop {
        let order = match (left.peek(), right.peek()) {
            (None, None) => return None,
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (Some((ka, _)), Some((kb, _))) => ka.cmp(kb),
        };
        return Some(match order {
            Ordering::Less => {
                let (key, v) = left.next().expect("peeked");
                OffsetDifference {
                    key,
                    a: Some(v.value()),
                    b: None,
                }
            }
            Ordering::Greater => {
                let (key, v) = right.next().expect("peeked");
                OffsetDifference {
                    key,
                    a: None,
                    b: Some(v.value()),
                }
            }
            Ordering::Equal => {
                let (key, va) = left.next().expect("peeked");
                let (_, vb) = right.next().expect("peeked");
                if va.value() == vb.value() {
                    continue;
                }
                OffsetDifference {
                    key,
                    a: Some(va.value()),
                    b: Some(vb.value()),
                }
            }
        });
    })
}

/// A Connect offsets key `[connector, partition]` as its connector name and partition; any
/// other key as "" and its text.
pub fn split_key(key: Option<&[u8]>) -> (String, Value) {
    let Some(bytes) = key else {
        return (String::new(), Value::Null);
    };
    match serde_json::from_slice::<Value>(bytes) {
        Ok(Value::Array(mut parts)) if parts.len() == 2 && parts[0].is_string() => {
            let partition = parts.pop().unwrap_or(Value::Null);
            let connector = parts.pop().and_then(|c| c.as_str().map(String::from));
            (connector.unwrap_or_default(), partition)
        }
        _ => (String::new(), as_json(bytes)),
    }
}

/// A stored value as JSON (its text when it is not JSON).
fn as_json(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes).unwrap_or_else(|_| json!(String::from_utf8_lossy(bytes)))
}
