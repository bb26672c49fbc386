//! The status snapshot: everything Java's `KafkaStatusBackingStore` caches from the topic
//! (spec §3.1), without the write-side bookkeeping.

use serde::{Deserialize, Serialize};

use super::types::{Status, TopicStatus};
use crate::name::Name;
use crate::persistent::PMap;
use crate::sync::Arc;

/// The task statuses of one connector, by task number. Never empty in the tables: Java removes a
/// row when its last cell goes.
pub(crate) type TaskRow = PMap<i32, Arc<Status>>;
/// The topic statuses of one connector, by the topic of the key. May be empty: Java keeps the
/// inner map after its last topic is tombstoned (spec §3.5).
pub(crate) type TopicRow = PMap<Name, Arc<TopicStatus>>;

/// The store's read-back caches, persistent maps (rows too), so a snapshot shares them and a
/// later change copies only the path to what it changes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Tables {
    /// Non-null connector statuses (Java's `connectors` map, values only).
    pub(crate) connectors: PMap<Name, Arc<Status>>,
    /// Non-null task statuses (Java's `tasks` table, values only).
    pub(crate) tasks: PMap<Name, TaskRow>,
    /// Java's `topics` map.
    pub(crate) topics: PMap<Name, TopicRow>,
}

/// An immutable view of the status topic as read back: Java's `get(c)`, `get(id)`, `getAll(c)`,
/// `getTopic(c, t)` and `getAllTopics(c)`.
///
/// Cloning is O(1), and so is taking one with
/// [`StatusLog::snapshot`](super::StatusLog::snapshot); the caches are persistent maps the
/// machine shares with it, so a later record copies only the path to what it changes. Every
/// iterator is sorted (connectors and topics by name, tasks by number); Java uses hash order.
///
/// Writes are not visible here until they are read back, as in Java (spec §3.1). Names that only
/// exist because this worker wrote for them are in
/// [`StatusLog::known_connectors`](super::StatusLog::known_connectors), not here.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StatusSnapshot(pub(crate) Arc<Tables>);

impl StatusSnapshot {
    /// Java's `get(connector)`: the last connector status read.
    pub fn connector(&self, connector: &str) -> Option<&Status> {
        self.0.connectors.get(connector).map(|s| &**s)
    }

    /// Every connector that has a status, with it.
    pub fn connectors(&self) -> impl Iterator<Item = (&str, &Status)> + '_ {
        self.0.connectors.iter().map(|(c, s)| (c.as_str(), &**s))
    }

    /// Java's `get(ConnectorTaskId)`: the last accepted status of a task.
    pub fn task(&self, connector: &str, task: i32) -> Option<&Status> {
        self.0
            .tasks
            .get(connector)
            .and_then(|row| row.get(&task))
            .map(|s| &**s)
    }

    /// Java's `getAll(connector)`: the task statuses of a connector, ascending by task number;
    /// empty for an unknown connector.
    pub fn tasks(&self, connector: &str) -> impl Iterator<Item = (i32, &Status)> + '_ {
        self.0
            .tasks
            .get(connector)
            .into_iter()
            .flat_map(|row| row.iter().map(|(n, s)| (*n, &**s)))
    }

    /// Every task status, by connector then task number, whether or not the connector has a
    /// status.
    pub fn all_tasks(&self) -> impl Iterator<Item = (&str, i32, &Status)> + '_ {
        self.0
            .tasks
            .iter()
            .flat_map(|(c, row)| row.iter().map(move |(n, s)| (c.as_str(), *n, &**s)))
    }

    /// Java's `getTopic(connector, topic)`, by the connector and topic of the key.
    pub fn topic(&self, connector: &str, topic: &str) -> Option<&TopicStatus> {
        self.0
            .topics
            .get(connector)
            .and_then(|row| row.get(topic))
            .map(|s| &**s)
    }

    /// Java's `getAllTopics(connector)`, keyed by the topic of the key, sorted; empty for an
    /// unknown connector.
    pub fn topics(&self, connector: &str) -> impl Iterator<Item = (&str, &TopicStatus)> + '_ {
        self.0
            .topics
            .get(connector)
            .into_iter()
            .flat_map(|row| row.iter().map(|(t, s)| (t.as_str(), &**s)))
    }

    /// Every topic status as `(connector, topic, status)`, sorted by connector then topic.
    pub fn all_topics(&self) -> impl Iterator<Item = (&str, &str, &TopicStatus)> + '_ {
        self.0
            .topics
            .iter()
            .flat_map(|(c, row)| row.iter().map(move |(t, s)| (c.as_str(), t.as_str(), &**s)))
    }

    /// Connectors with an entry in Java's `topics` map, including those whose every topic was
    /// tombstoned (Java keeps the empty inner map).
    pub fn topic_connectors(&self) -> impl Iterator<Item = &str> + '_ {
        self.0.topics.keys().map(Name::as_str)
    }
}
