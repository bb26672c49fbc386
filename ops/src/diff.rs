//! Two states compared: connectors only in one, config differences (secrets masked), target
//! states, task counts, and source offsets that differ per partition. For migrations between
//! Connect clusters, and for "what changed since yesterday's dump".

use std::cmp::Ordering;
use std::collections::BTreeSet;

use engine::config::{ConfigSnapshot, TargetState};
use engine::history::config_diff;
use engine::offsets::OffsetSnapshot;
use serde_json::{json, Map, Value};

use crate::history::masked_diff;

/// One side of a comparison: a config state and, when read, an offsets state.
#[derive(Debug, Clone, Default)]
pub struct Side {
    /// The config topic's state.
    pub config: ConfigSnapshot,
    /// The offsets topic's state (`None`: not read, so offsets are not compared).
    pub offsets: Option<OffsetSnapshot>,
}

/// What differs between two sides.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Difference {
    /// Connectors with a config only in A.
    pub only_in_a: Vec<String>,
    /// Connectors with a config only in B.
    pub only_in_b: Vec<String>,
    /// Per connector (in both, or with offsets on either side), what differs; connectors
    /// that are equal are left out.
    pub connectors: Map<String, Value>,
}

impl Difference {
    /// Whether the sides differ at all.
    pub fn differs(&self) -> bool {
        !(self.only_in_a.is_empty() && self.only_in_b.is_empty() && self.connectors.is_empty())
    }

    /// The JSON contract: `{"differs", "only_in_a", "only_in_b", "connectors"}`.
    pub fn to_json(&self) -> Value {
        json!({
            "differs": self.differs(),
            "only_in_a": self.only_in_a,
            "only_in_b": self.only_in_b,
            "connectors": self.connectors,
        })
    }
}

/// Compares `a` with `b`. Offsets are compared only when both sides read them.
pub fn compare(a: &Side, b: &Side, show_secrets: bool) -> Difference {
    let names_a: BTreeSet<&str> = a.config.connectors().collect();
    let names_b: BTreeSet<&str> = b.config.connectors().collect();
    let mut difference = Difference {
        only_in_a: names_a
            .difference(&names_b)
            .map(|c| c.to_string())
            .collect(),
        only_in_b: names_b
            .difference(&names_a)
            .map(|c| c.to_string())
            .collect(),
        connectors: Map::new(),
    };
    for c in names_a.intersection(&names_b) {
        let mut found = Map::new();
        if let (Some(old), Some(new)) = (a.config.connector_config(c), b.config.connector_config(c))
        {
            let diff = config_diff(old, new);
            if !diff.is_empty() {
                found.insert("config".into(), masked_diff(&diff, show_secrets));
            }
        }
        let state = |side: &Side| side.config.target_state(c).map(TargetState::as_str);
        if state(a) != state(b) {
            found.insert("target_state".into(), json!({"a": state(a), "b": state(b)}));
        }
        let (count_a, count_b) = (a.config.task_count(c), b.config.task_count(c));
        if count_a != count_b {
            found.insert("task_count".into(), json!({"a": count_a, "b": count_b}));
        }
        if !found.is_empty() {
            difference
                .connectors
                .insert(c.to_string(), Value::Object(found));
        }
    }
    if let (Some(offsets_a), Some(offsets_b)) = (&a.offsets, &b.offsets) {
        for (connector, partition) in offset_differences(offsets_a, offsets_b) {
            let entry = difference
                .connectors
                .entry(connector)
                .or_insert_with(|| json!({}));
            if let Value::Object(found) = entry {
                if let Value::Array(list) = found.entry("offsets").or_insert_with(|| json!([])) {
                    list.push(partition);
                }
            }
        }
    }
    difference
}

/// Offsets that differ, by key: `(connector, {"partition", "a", "b"})`, `a` or `b` null when
/// only the other side holds the key. Keys are compared as bytes (both maps are sorted by
/// them); a key that names no connector is listed under "".
fn offset_differences(a: &OffsetSnapshot, b: &OffsetSnapshot) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    let mut left = a.entries().peekable();
    let mut right = b.entries().peekable();
    loop {
        let order = match (left.peek(), right.peek()) {
            (None, None) => break,
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (Some((ka, _)), Some((kb, _))) => ka.cmp(kb),
        };
        let (key, va, vb) = match order {
            Ordering::Less => {
                let (k, v) = left.next().expect("peeked");
                (k, Some(v.value()), None)
            }
            Ordering::Greater => {
                let (k, v) = right.next().expect("peeked");
                (k, None, Some(v.value()))
            }
            Ordering::Equal => {
                let (k, va) = left.next().expect("peeked");
                let (_, vb) = right.next().expect("peeked");
                if va.value() == vb.value() {
                    continue;
                }
                (k, Some(va.value()), Some(vb.value()))
            }
        };
        let (connector, partition) = split_key(key);
        out.push((
            connector,
            json!({"partition": partition, "a": va.map(as_json), "b": vb.map(as_json)}),
        ));
    }
    out
}

/// A Connect offsets key `[connector, partition]` as its connector name and partition; any
/// other key as "" and its text.
fn split_key(key: Option<&[u8]>) -> (String, Value) {
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
