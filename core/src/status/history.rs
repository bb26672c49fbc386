//! How status records are told as changes (see [`crate::history`]).

use alloc::string::String;
use alloc::vec::Vec;

use super::keys::{self, StatusKey};
use super::{Status, StatusEvent, StatusTopic};
use crate::history::{Change, ChangeKind, Chronicle};
use crate::sync::Arc;
use crate::Record;

/// What a status record's key touches, before the record.
pub enum StatusBefore {
    /// A connector's status.
    Connector(String, Option<Arc<Status>>),
    /// A task's status.
    Task(String, i32, Option<Arc<Status>>),
    /// Whether a topic was active for a connector.
    Topic {
        /// The connector.
        connector: String,
        /// The topic.
        topic: String,
        /// Whether it was active.
        active: bool,
    },
    /// A key the topic skips.
    Other,
}

impl Chronicle for StatusTopic {
    type Before = StatusBefore;
    /// A server's recent history reads when each task last reported from the key (a status
    /// written again changes nothing, yet is a report).
    const KEEPS_BYTES: bool = true;

    fn before(&self, record: &Record<'_>) -> StatusBefore {
        let Some(key) = record.key else {
            return StatusBefore::Other;
        };
        let key = keys::key_string(key);
        let t = &self.tables;
        match keys::dispatch(&key) {
            StatusKey::Connector(c) => {
                StatusBefore::Connector(c.into(), t.connectors.get(c).cloned())
            }
            StatusKey::Task { connector, task } => {
                let old = t
                    .tasks
                    .get(connector.as_ref())
                    .and_then(|row| row.get(&task))
                    .cloned();
                StatusBefore::Task(connector.into_owned(), task, old)
            }
            StatusKey::Topic { topic, connector } => StatusBefore::Topic {
                active: t
                    .topics
                    .get(connector.as_ref())
                    .is_some_and(|row| row.contains_key(topic)),
                connector: connector.into_owned(),
                topic: topic.into(),
            },
            _ => StatusBefore::Other,
        }
    }

    fn changes(
        &self,
        _record: &Record<'_>,
        before: StatusBefore,
        _events: Vec<StatusEvent>,
        applied: bool,
        out: &mut Vec<Change>,
    ) {
        if !applied {
            return;
        }
        let t = &self.tables;
        let (connector, kind) = match before {
            StatusBefore::Connector(c, from) => {
                let to = t.connectors.get(c.as_str()).cloned();
                if from == to {
                    return;
                }
                (c, ChangeKind::ConnectorStatusChanged { from, to })
            }
            StatusBefore::Task(c, task, from) => {
                let to = t
                    .tasks
                    .get(c.as_str())
                    .and_then(|row| row.get(&task))
                    .cloned();
                if from == to {
                    return;
                }
                (c, ChangeKind::TaskStatusChanged { task, from, to })
            }
            StatusBefore::Topic {
                connector,
                topic,
                active,
            } => {
                let now = t
                    .topics
                    .get(connector.as_str())
                    .and_then(|row| row.get(topic.as_str()));
                match (active, now) {
                    (false, Some(status)) => {
                        let task = status.task;
                        (connector, ChangeKind::TopicActivated { topic, task })
                    }
                    (true, None) => (connector, ChangeKind::TopicReset { topic }),
                    _ => return,
                }
            }
            StatusBefore::Other => return,
        };
        out.push(Change {
            connector: Some(connector),
            kind,
        });
    }
}
