//! The stable JSON contract of the status snapshot and events (DESIGN.md, "Output").
//!
//! Wrap a snapshot or event and hand it to any serde serializer (e.g. `serde_json`). Names are
//! snake_case and maps are sorted by key (as strings, so task `"10"` sorts before `"2"`).

use alloc::collections::BTreeMap;
use alloc::string::String;

use serde::ser::SerializeStruct;
use serde::{Serialize, Serializer};

use super::event::StatusEvent;
use super::snapshot::StatusSnapshot;
use super::types::{Status, TopicStatus};

/// Serializes a [`StatusSnapshot`] in the JSON contract:
///
/// ```text
/// {"connectors": {"c1": {"state": "RUNNING", "trace": null, "worker_id": "w:8083", "generation": 1}},
///  "tasks": {"c1": {"0": {"state": ..., "trace": ..., "worker_id": ..., "generation": ...}}},
///  "topics": {"c1": {"orders": {"name": "orders", "connector": "c1", "task": 0, "discover_timestamp": 1589972451234}}}}
/// ```
///
/// A status carries `"version"` only when the record had one. `worker_id` is `null` when the
/// record had none. Topics are keyed by the key's connector and topic, and the objects carry the
/// value's fields; a connector whose every topic was tombstoned shows as `{}`, as Java keeps
/// the empty map.
#[derive(Debug, Clone, Copy)]
pub struct StatusSnapshotJson<'a>(pub &'a StatusSnapshot);

/// Serializes a [`StatusEvent`] in the JSON contract (`{"type": ..., ...}`):
///
/// ```text
/// {"type":"connector_status_changed","connector":C,"status":{...}}
/// {"type":"connector_removed","connector":C}
/// {"type":"task_status_changed","connector":C,"task":N,"status":{...}}
/// {"type":"task_removed","connector":C,"task":N}
/// {"type":"topic_active","connector":C,"topic":T}
/// {"type":"topic_removed","connector":C,"topic":T}
/// ```
///
/// `status` has the shape of the snapshot's statuses.
#[derive(Debug, Clone, Copy)]
pub struct StatusEventJson<'a>(pub &'a StatusEvent);

/// A connector or task status: `{"state","trace","worker_id","generation"[,"version"]}`.
struct StatusJson<'a>(&'a Status);

impl Serialize for StatusJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let status = self.0;
        let len = if status.version.is_some() { 5 } else { 4 };
        let mut st = s.serialize_struct("Status", len)?;
        st.serialize_field("state", status.state.as_str())?;
        st.serialize_field("trace", &status.trace)?;
        st.serialize_field("worker_id", &status.worker_id)?;
        st.serialize_field("generation", &status.generation)?;
        if let Some(version) = &status.version {
            st.serialize_field("version", version)?;
        }
        st.end()
    }
}

/// A topic status: `{"name","connector","task","discover_timestamp"}`.
struct TopicJson<'a>(&'a TopicStatus);

impl Serialize for TopicJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let topic = self.0;
        let mut st = s.serialize_struct("TopicStatus", 4)?;
        st.serialize_field("name", &topic.name)?;
        st.serialize_field("connector", &topic.connector)?;
        st.serialize_field("task", &topic.task)?;
        st.serialize_field("discover_timestamp", &topic.discover_timestamp)?;
        st.end()
    }
}

impl Serialize for StatusSnapshotJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let t = &*self.0 .0;
        let connectors: BTreeMap<&str, StatusJson<'_>> = t
            .connectors
            .iter()
            .map(|(c, status)| (c.as_str(), StatusJson(status)))
            .collect();
        let tasks: BTreeMap<&str, BTreeMap<String, StatusJson<'_>>> = t
            .tasks
            .iter()
            .map(|(c, row)| {
                let row = row
                    .iter()
                    .map(|(n, status)| (alloc::format!("{n}"), StatusJson(status)))
                    .collect();
                (c.as_str(), row)
            })
            .collect();
        let topics: BTreeMap<&str, BTreeMap<&str, TopicJson<'_>>> = t
            .topics
            .iter()
            .map(|(c, row)| {
                let row = row
                    .iter()
                    .map(|(topic, status)| (topic.as_str(), TopicJson(status)))
                    .collect();
                (c.as_str(), row)
            })
            .collect();
        let mut st = s.serialize_struct("StatusSnapshot", 3)?;
        st.serialize_field("connectors", &connectors)?;
        st.serialize_field("tasks", &tasks)?;
        st.serialize_field("topics", &topics)?;
        st.end()
    }
}

impl Serialize for StatusEventJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("StatusEvent", 4)?;
        match self.0 {
            StatusEvent::ConnectorStatusChanged { connector, status } => {
                st.serialize_field("type", "connector_status_changed")?;
                st.serialize_field("connector", connector)?;
                st.serialize_field("status", &StatusJson(status))?;
            }
            StatusEvent::ConnectorRemoved { connector } => {
                st.serialize_field("type", "connector_removed")?;
                st.serialize_field("connector", connector)?;
            }
            StatusEvent::TaskStatusChanged { id, status } => {
                st.serialize_field("type", "task_status_changed")?;
                st.serialize_field("connector", &id.connector)?;
                st.serialize_field("task", &id.task)?;
                st.serialize_field("status", &StatusJson(status))?;
            }
            StatusEvent::TaskRemoved { id } => {
                st.serialize_field("type", "task_removed")?;
                st.serialize_field("connector", &id.connector)?;
                st.serialize_field("task", &id.task)?;
            }
            StatusEvent::TopicActive { connector, topic } => {
                st.serialize_field("type", "topic_active")?;
                st.serialize_field("connector", connector)?;
                st.serialize_field("topic", topic)?;
            }
            StatusEvent::TopicRemoved { connector, topic } => {
                st.serialize_field("type", "topic_removed")?;
                st.serialize_field("connector", connector)?;
                st.serialize_field("topic", topic)?;
            }
        }
        st.end()
    }
}
