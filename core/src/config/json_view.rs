//! The stable JSON contract of the config snapshot and events (DESIGN.md, "Output").
//!
//! Wrap a snapshot or event and hand it to any serde serializer (e.g. `serde_json`). Names are
//! snake_case and maps are sorted by key.

use serde::ser::{SerializeMap, SerializeSeq, SerializeStruct};
use serde::{Serialize, Serializer};

use super::event::ConfigEvent;
use super::properties::Properties;
use super::snapshot::{ConfigSnapshot, MAX_LISTED_TASKS};
use alloc::collections::BTreeMap;
use alloc::string::String;

/// Serializes a [`ConfigSnapshot`] in the JSON contract.
#[derive(Debug, Clone, Copy)]
pub struct ConfigSnapshotJson<'a>(pub &'a ConfigSnapshot);

/// Serializes a [`ConfigEvent`] in the JSON contract (`{"type": ..., ...}`).
#[derive(Debug, Clone, Copy)]
pub struct ConfigEventJson<'a>(pub &'a ConfigEvent);

/// A property map with values as read.
struct PropsJson<'a>(&'a Properties);

impl Serialize for PropsJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in self.0.iter() {
            map.serialize_entry(k, &v)?;
        }
        map.end()
    }
}

/// A JSON object from a function returning an already sorted iterator of entries.
struct MapOf<F>(F);

impl<K, V, I, F> Serialize for MapOf<F>
where
    K: Serialize,
    V: Serialize,
    I: Iterator<Item = (K, V)>,
    F: Fn() -> I,
{
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        for (k, v) in (self.0)() {
            map.serialize_entry(&k, &v)?;
        }
        map.end()
    }
}

/// A JSON array from a function returning an iterator.
struct ListOf<F>(F);

impl<T, I, F> Serialize for ListOf<F>
where
    T: Serialize,
    I: Iterator<Item = T>,
    F: Fn() -> I,
{
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(None)?;
        for item in (self.0)() {
            seq.serialize_element(&item)?;
        }
        seq.end()
    }
}

struct SessionKeyJson<'a>(&'a super::types::SessionKey);

impl Serialize for SessionKeyJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("SessionKey", 3)?;
        // What Java holds is the decoded key: `ClusterConfigState.sessionKey()` re-encoded with
        // `Base64.getEncoder()` (padding restored), not the text as read.
        st.serialize_field("key", &crate::java::base64_encode(&self.0.key))?;
        st.serialize_field("algorithm", &self.0.algorithm)?;
        st.serialize_field("creation_timestamp", &self.0.creation_timestamp)?;
        st.end()
    }
}

impl Serialize for ConfigSnapshotJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let snap = self.0;
        let t = &*snap.0;
        let mut st = s.serialize_struct("ConfigSnapshot", 14)?;
        st.serialize_field("offset", &t.offset)?;
        st.serialize_field("session_key", &t.session_key.as_deref().map(SessionKeyJson))?;
        st.serialize_field("connectors", &ListOf(|| snap.connectors()))?;
        st.serialize_field(
            "connector_configs",
            &MapOf(|| t.connector_configs.iter().map(|(c, p)| (c, PropsJson(p)))),
        )?;
        st.serialize_field(
            "target_states",
            &MapOf(|| t.target_states.iter().map(|(c, s)| (c, s.as_str()))),
        )?;
        st.serialize_field("connector_task_counts", &t.connector_task_counts)?;
        st.serialize_field(
            "tasks",
            &MapOf(|| {
                snap.connectors().map(|c| {
                    let listed = snap.tasks(c).take(MAX_LISTED_TASKS as usize);
                    (c, ListOf(move || listed.clone().map(|id| id.task)))
                })
            }),
        )?;
        // Only present when a list above was cut: the full count of each cut list.
        let cut = || {
            snap.connectors()
                .map(|c| (c, snap.tasks(c).len()))
                .filter(|(_, n)| *n > MAX_LISTED_TASKS as usize)
        };
        if cut().next().is_some() {
            st.serialize_field("tasks_truncated", &MapOf(cut))?;
        } else {
            st.skip_field("tasks_truncated")?;
        }
        st.serialize_field("task_configs", &TaskConfigsJson(snap))?;
        st.serialize_field(
            "applied_connector_configs",
            &MapOf(|| {
                t.applied_connector_configs
                    .iter()
                    .map(|(c, p)| (c, PropsJson(p)))
            }),
        )?;
        st.serialize_field("task_count_records", &t.task_count_records)?;
        st.serialize_field("task_config_generations", &t.generations)?;
        st.serialize_field("pending_fencing", &t.pending_fencing)?;
        st.serialize_field("inconsistent", &t.inconsistent)?;
        st.end()
    }
}

/// `{"c1": {"0": {...}, "1": {...}}}`: task configs grouped by connector; like every map of the
/// contract, sorted by key (so task "10" sorts before task "2").
struct TaskConfigsJson<'a>(&'a ConfigSnapshot);

impl Serialize for TaskConfigsJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut grouped: BTreeMap<&str, BTreeMap<String, PropsJson<'_>>> = BTreeMap::new();
        for (connector, tasks) in self.0 .0.task_configs.iter() {
            let group = grouped.entry(connector.as_str()).or_default();
            for (task, props) in tasks {
                group.insert(alloc::format!("{task}"), PropsJson(props));
            }
        }
        grouped.serialize(s)
    }
}

impl Serialize for ConfigEventJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("ConfigEvent", 4)?;
        match self.0 {
            ConfigEvent::ConnectorConfigUpdated { connector } => {
                st.serialize_field("type", "connector_config_updated")?;
                st.serialize_field("connector", connector)?;
            }
            ConfigEvent::ConnectorConfigRemoved { connector } => {
                st.serialize_field("type", "connector_config_removed")?;
                st.serialize_field("connector", connector)?;
            }
            ConfigEvent::TaskConfigsUpdated { connector, tasks } => {
                st.serialize_field("type", "task_configs_updated")?;
                st.serialize_field("connector", connector)?;
                st.serialize_field("tasks", tasks)?;
            }
            ConfigEvent::TargetStateChanged { connector, state } => {
                st.serialize_field("type", "target_state_changed")?;
                st.serialize_field("connector", connector)?;
                st.serialize_field("state", state.as_str())?;
            }
            ConfigEvent::SessionKeyUpdated { .. } => {
                st.serialize_field("type", "session_key_updated")?;
            }
            ConfigEvent::RestartRequested {
                connector,
                only_failed,
                include_tasks,
            } => {
                st.serialize_field("type", "restart_requested")?;
                st.serialize_field("connector", connector)?;
                st.serialize_field("only_failed", only_failed)?;
                st.serialize_field("include_tasks", include_tasks)?;
            }
            ConfigEvent::LoggerLevelUpdated { namespace, level } => {
                st.serialize_field("type", "logger_level_updated")?;
                st.serialize_field("namespace", namespace)?;
                st.serialize_field("level", level)?;
            }
        }
        st.end()
    }
}
