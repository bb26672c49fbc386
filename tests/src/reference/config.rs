//! A naive reference fold of the config topic, written straight from `spec/config-topic.md` §3
//! with plain `std` maps and `serde_json`, independent of the core. Model-based tests compare
//! the core's snapshot with it on random logs.
//!
//! It covers the values our writer produces (well-formed JSON), not Jackson's parsing quirks:
//! those are the JSON module's unit tests and the conformance vectors.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Map, Value};

/// The reference state: Java's `KafkaConfigBackingStore` fields (spec §3.0).
#[derive(Debug, Clone, Default)]
pub struct RefConfig {
    offset: Option<i64>,
    connector_configs: BTreeMap<String, Map<String, Value>>,
    task_counts: BTreeMap<String, i64>,
    task_configs: BTreeMap<(String, i32), Map<String, Value>>,
    deferred: BTreeMap<String, BTreeMap<i32, Map<String, Value>>>,
    target_states: BTreeMap<String, &'static str>,
    task_count_records: BTreeMap<String, i64>,
    generations: BTreeMap<String, i64>,
    applied: BTreeMap<String, Map<String, Value>>,
    pending_fencing: BTreeSet<String>,
    inconsistent: BTreeSet<String>,
}

fn state_name(s: &str) -> Option<&'static str> {
    match s {
        "STARTED" => Some("STARTED"),
        "PAUSED" => Some("PAUSED"),
        "STOPPED" => Some("STOPPED"),
        _ => None,
    }
}

/// Java's `(int)` of a JSON integer.
fn as_count(v: Option<&Value>) -> Option<i64> {
    v.and_then(Value::as_i64).map(|n| i64::from(n as i32))
}

impl RefConfig {
    /// Applies one record (key text, value text or `None`) at `offset`.
    pub fn apply(&mut self, key: &str, value: Option<&str>, offset: i64) {
        let body: Option<Value> = match value.map(str::trim) {
            None | Some("") => None,
            Some(text) => match serde_json::from_str::<Value>(text) {
                Ok(Value::Null) => None,
                Ok(v) => Some(v),
                Err(_) => return, // not convertible: the offset does not move
            },
        };
        self.offset = Some(offset + 1);
        let map = body.as_ref().and_then(Value::as_object);
        if let Some(c) = key.strip_prefix("target-state-") {
            self.target_state(c, body.as_ref(), map);
        } else if let Some(c) = key.strip_prefix("connector-") {
            match (
                body.as_ref(),
                map.and_then(|m| m.get("properties"))
                    .and_then(Value::as_object),
            ) {
                (None, _) => self.remove(c),
                (Some(_), Some(props)) => {
                    self.connector_configs.insert(c.into(), props.clone());
                    self.target_states.entry(c.into()).or_insert("STARTED");
                }
                _ => {}
            }
        } else if key.starts_with("task-") {
            let parts: Vec<&str> = key.split('-').collect();
            let mut parts = parts.as_slice();
            while parts.last() == Some(&"") {
                parts = &parts[..parts.len() - 1];
            }
            if parts.len() < 3 {
                return;
            }
            let Ok(task) = parts[parts.len() - 1]
                .trim_start_matches('+')
                .parse::<i32>()
            else {
                return;
            };
            let connector = parts[1..parts.len() - 1].join("-");
            if let Some(props) = map
                .and_then(|m| m.get("properties"))
                .and_then(Value::as_object)
            {
                self.deferred
                    .entry(connector)
                    .or_default()
                    .insert(task, props.clone());
            }
        } else if let Some(c) = key.strip_prefix("commit-") {
            self.commit(c, map);
        } else if let Some(c) = key.strip_prefix("tasks-fencing-") {
            if let Some(n) = as_count(map.and_then(|m| m.get("task-count"))) {
                self.task_count_records.insert(c.into(), n);
                self.pending_fencing.remove(c);
            }
        }
        // session-key, restart-connector-, logger-cluster- and unknown keys change no table
        // the comparison looks at (session keys are covered by unit tests and vectors).
    }

    fn remove(&mut self, c: &str) {
        self.connector_configs.remove(c);
        self.task_counts.remove(c);
        self.task_configs.retain(|(conn, _), _| conn != c);
        self.deferred.remove(c);
        self.applied.remove(c);
    }

    fn target_state(&mut self, c: &str, body: Option<&Value>, map: Option<&Map<String, Value>>) {
        if body.is_none() {
            self.target_states.remove(c);
            if self.connector_configs.contains_key(c) {
                self.target_states.insert(c.into(), "STARTED");
            }
            return;
        }
        let Some(map) = map else { return };
        let chosen = match map.get("state.v2") {
            Some(Value::String(s)) => Some(s.as_str()),
            _ => map.get("state").and_then(Value::as_str),
        };
        if let Some(state) = chosen.and_then(state_name) {
            self.target_states.insert(c.into(), state);
        }
    }

    fn commit(&mut self, c: &str, map: Option<&Map<String, Value>>) {
        if !self.connector_configs.contains_key(c) {
            self.remove(c);
            return;
        }
        let Some(map) = map else { return };
        let Some(count) = as_count(map.get("tasks")) else {
            return;
        };
        let deferred = self.deferred.get(c);
        let consistent =
            count <= 0 || deferred.is_some_and(|d| (0..count).all(|i| d.contains_key(&(i as i32))));
        if consistent {
            if let Some(d) = deferred {
                for (task, props) in d {
                    self.task_configs.insert((c.into(), *task), props.clone());
                }
                let next = self.generations.get(c).map_or(0, |g| g + 1);
                self.generations.insert(c.into(), next);
            }
            self.inconsistent.remove(c);
            let config = self.connector_configs[c].clone();
            self.applied.insert(c.into(), config);
        } else {
            self.inconsistent.insert(c.into());
        }
        if let Some(d) = self.deferred.get_mut(c) {
            d.clear();
        }
        self.task_counts.insert(c.into(), count);
        self.pending_fencing.insert(c.into());
    }

    /// `tasks(c)`: empty when inconsistent, else `0..count`.
    pub fn tasks(&self, c: &str) -> Vec<i32> {
        if self.inconsistent.contains(c) {
            return Vec::new();
        }
        (0..self.task_counts.get(c).copied().unwrap_or(0).max(0) as i32).collect()
    }

    /// The applied config of task `(c, i)`.
    pub fn task_config(&self, c: &str, i: i32) -> Option<&Map<String, Value>> {
        self.task_configs.get(&(c.to_string(), i))
    }

    /// Whether `c` is flagged inconsistent.
    pub fn is_inconsistent(&self, c: &str) -> bool {
        self.inconsistent.contains(c)
    }

    /// The connectors with a config.
    pub fn connectors(&self) -> impl Iterator<Item = &str> {
        self.connector_configs.keys().map(String::as_str)
    }

    /// The state in the JSON contract of DESIGN.md, without `session_key` (not modelled).
    pub fn to_contract(&self) -> Value {
        let mut task_configs: BTreeMap<String, Map<String, Value>> = BTreeMap::new();
        for ((c, i), props) in &self.task_configs {
            task_configs
                .entry(c.clone())
                .or_default()
                .insert(i.to_string(), Value::Object(props.clone()));
        }
        let tasks: BTreeMap<&str, Vec<i32>> =
            self.connectors().map(|c| (c, self.tasks(c))).collect();
        json!({
            "offset": self.offset.unwrap_or(-1),
            "connectors": self.connectors().collect::<Vec<_>>(),
            "connector_configs": self.connector_configs,
            "target_states": self.target_states,
            "connector_task_counts": self.task_counts,
            "tasks": tasks,
            "task_configs": task_configs,
            "applied_connector_configs": self.applied,
            "task_count_records": self.task_count_records,
            "task_config_generations": self.generations,
            "pending_fencing": self.pending_fencing,
            "inconsistent": self.inconsistent,
        })
    }
}
