//! KIP-558 topic tracking (spec §3.7): the worker settings, the REST views
//! `GET /connectors/{c}/topics` and `PUT /connectors/{c}/topics/reset`, and recording a topic as
//! active.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use serde::ser::{SerializeMap, SerializeStruct};
use serde::{Serialize, Serializer};

use super::types::TopicStatus;
use super::write::{topic_status_record, topic_tombstone, ProducerRecord};
use super::{StatusLog, StatusSnapshot};

/// The worker settings of KIP-558.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TopicTracking {
    /// `topic.tracking.enable` (default `true`): record active topics and serve the endpoints.
    pub enable: bool,
    /// `topic.tracking.allow.reset` (default `true`): allow `PUT …/topics/reset`.
    pub allow_reset: bool,
}

impl Default for TopicTracking {
    fn default() -> Self {
        Self {
            enable: true,
            allow_reset: true,
        }
    }
}

/// A KIP-558 endpoint refused by the worker settings (Java's REST layer answers 403 with
/// [`message`](Self::message); the CLI's `rest` module maps it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TopicTrackingError {
    /// `topic.tracking.enable=false` (checked first, by both endpoints).
    Disabled,
    /// `topic.tracking.allow.reset=false` (the reset endpoint only).
    ResetDisabled,
}

impl TopicTrackingError {
    /// Java's exact message.
    pub fn message(self) -> &'static str {
        match self {
            Self::Disabled => "Topic tracking is disabled.",
            Self::ResetDisabled => "Topic tracking reset is disabled.",
        }
    }
}

impl fmt::Display for TopicTrackingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

impl core::error::Error for TopicTrackingError {}

/// The body of `GET /connectors/{c}/topics` (Java's `ActiveTopicsInfo` in a singleton map).
///
/// Serializes as `{"<connector>":{"topics":["t1","t2"]}}`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ActiveTopics {
    /// The connector asked about (not checked to exist, as in Java).
    pub connector: String,
    /// The `name` of each cached topic status of the connector, sorted (Java: hash order).
    /// Duplicates are kept, as Java keeps them, should two records carry the same name.
    pub topics: Vec<String>,
}

/// `{"topics":[…]}`.
struct TopicsBody<'a>(&'a [String]);

impl Serialize for TopicsBody<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("ActiveTopicsInfo", 1)?;
        st.serialize_field("topics", self.0)?;
        st.end()
    }
}

impl Serialize for ActiveTopics {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(1))?;
        map.serialize_entry(&self.connector, &TopicsBody(&self.topics))?;
        map.end()
    }
}

impl StatusSnapshot {
    /// `GET /connectors/{c}/topics`, served from the caches as read back (Java: the receiving
    /// worker's, no forwarding). There is no existence check: an unknown connector has no
    /// topics. The names are the `name` fields of the values (Java's `TopicStatus::topic`), which
    /// usually equal the key's topic.
    pub fn active_topics(
        &self,
        connector: &str,
        tracking: &TopicTracking,
    ) -> Result<ActiveTopics, TopicTrackingError> {
        if !tracking.enable {
            return Err(TopicTrackingError::Disabled);
        }
        let mut topics: Vec<String> = self
            .cached_topics(connector)
            .map(|status| status.name.clone())
            .collect();
        topics.sort_unstable();
        Ok(ActiveTopics {
            connector: connector.into(),
            topics,
        })
    }

    /// `PUT /connectors/{c}/topics/reset` (Java answers 202 with no body): the records of
    /// [`topic_reset_records`](Self::topic_reset_records), after the two 403 checks (tracking
    /// first, then reset).
    pub fn reset_active_topics(
        &self,
        connector: &str,
        tracking: &TopicTracking,
    ) -> Result<Vec<ProducerRecord>, TopicTrackingError> {
        if !tracking.enable {
            return Err(TopicTrackingError::Disabled);
        }
        if !tracking.allow_reset {
            return Err(TopicTrackingError::ResetDisabled);
        }
        Ok(self.topic_reset_records(connector))
    }

    /// Java's `resetConnectorActiveTopics(c)` without the REST checks (it also runs on
    /// revocation of a deleted connector when tracking is enabled, spec §3.6): one tombstone per
    /// topic status cached for the connector, in order of the key's topic. Like Java, each
    /// tombstone is addressed with the `connector` and `name` of the cached **value**, so a
    /// record whose value disagrees with its key is not deleted by it (see
    /// [`StatusDiagnostics::mismatched_topic_statuses`](super::StatusDiagnostics::mismatched_topic_statuses)).
    /// Topics not yet read back are missed (spec §6 item 10).
    pub fn topic_reset_records(&self, connector: &str) -> Vec<ProducerRecord> {
        self.cached_topics(connector)
            .map(|status| topic_tombstone(&status.connector, &status.name))
            .collect()
    }

    fn cached_topics(&self, connector: &str) -> impl Iterator<Item = &TopicStatus> + '_ {
        self.0
            .topics
            .get(connector)
            .into_iter()
            .flat_map(|row| row.values().map(|s| &**s))
    }
}

impl StatusLog {
    /// `WorkerTask.recordActiveTopic(topic)`: with tracking enabled and no status read back for
    /// the connector and topic, the record that marks the topic active, discovered by `task` at
    /// `now_ms` (epoch milliseconds, from the caller's clock). Until that record is read back,
    /// each call writes again, as in Java (spec §6 item 11).
    pub fn record_active_topic(
        &self,
        connector: &str,
        topic: &str,
        task: i32,
        now_ms: i64,
        tracking: &TopicTracking,
    ) -> Option<ProducerRecord> {
        let cached = self
            .topic
            .tables
            .topics
            .get(connector)
            .is_some_and(|row| row.contains_key(topic));
        if !tracking.enable || cached {
            return None;
        }
        Some(topic_status_record(&TopicStatus::new(
            topic, connector, task, now_ms,
        )))
    }
}
