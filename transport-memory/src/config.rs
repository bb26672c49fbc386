//! A topic's settings, as far as the log model uses them.

use std::collections::BTreeMap;

use crate::error::LogError;

/// Kafka's default `delete.retention.ms`: one day.
pub const DEFAULT_DELETE_RETENTION_MS: i64 = 86_400_000;

/// The default segment size of the model, in offsets. Kafka sizes segments in bytes (1 GiB by
/// default); the model counts offsets and uses small segments so that cleaning has something to
/// do without an explicit [`crate::MemoryCluster::roll_segment`].
pub const DEFAULT_SEGMENT_RECORDS: u64 = 16;

/// The settings of one topic. Build it with [`TopicConfig::compacted`] (or `default()`, one
/// compacted partition) and the `with_*` methods; [`crate::MemoryCluster::create_topic`]
/// validates it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicConfig {
    /// The number of partitions (at least 1).
    pub partitions: i32,
    /// Kafka's `cleanup.policy` string, reported as is. Cleaning does anything only when one of
    /// its comma-separated entries is `compact`.
    pub cleanup_policy: String,
    /// Kafka's `delete.retention.ms`: how long a tombstone that is the latest record of its key
    /// survives after the first cleaning pass that covered it.
    pub delete_retention_ms: i64,
    /// Offsets per segment (at least 1): an append rolls a new segment once the active one
    /// spans this many offsets (control markers included).
    pub segment_records: u64,
    /// Kafka's `min.compaction.lag.ms`: records younger than this (by the logical clock) are
    /// never cleaned.
    pub min_compaction_lag_ms: i64,
}

impl Default for TopicConfig {
    fn default() -> Self {
        Self::compacted(1)
    }
}

impl TopicConfig {
    /// A compacted topic of `partitions` partitions with Kafka's default retention and lag and
    /// the model's default segment size ([`DEFAULT_SEGMENT_RECORDS`]).
    pub fn compacted(partitions: i32) -> Self {
        Self {
            partitions,
            cleanup_policy: "compact".to_owned(),
            delete_retention_ms: DEFAULT_DELETE_RETENTION_MS,
            segment_records: DEFAULT_SEGMENT_RECORDS,
            min_compaction_lag_ms: 0,
        }
    }

    /// The same settings with another `cleanup.policy`.
    #[must_use]
    pub fn with_cleanup_policy(mut self, policy: &str) -> Self {
        policy.clone_into(&mut self.cleanup_policy);
        self
    }

    /// The same settings with another `delete.retention.ms`.
    #[must_use]
    pub fn with_delete_retention_ms(mut self, ms: i64) -> Self {
        self.delete_retention_ms = ms;
        self
    }

    /// The same settings with another segment size in offsets.
    #[must_use]
    pub fn with_segment_records(mut self, records: u64) -> Self {
        self.segment_records = records;
        self
    }

    /// The same settings with another `min.compaction.lag.ms`.
    #[must_use]
    pub fn with_min_compaction_lag_ms(mut self, ms: i64) -> Self {
        self.min_compaction_lag_ms = ms;
        self
    }

    /// These settings overridden by Kafka topic configs: `cleanup.policy`,
    /// `delete.retention.ms` and `min.compaction.lag.ms` are honoured, other keys ignored.
    ///
    /// # Errors
    ///
    /// [`LogError::InvalidConfig`] when a number does not parse.
    pub fn with_kafka_configs(
        mut self,
        configs: &BTreeMap<String, String>,
    ) -> Result<Self, LogError> {
        if let Some(policy) = configs.get("cleanup.policy") {
            policy.clone_into(&mut self.cleanup_policy);
        }
        if let Some(ms) = configs.get("delete.retention.ms") {
            self.delete_retention_ms = parse_ms("delete.retention.ms", ms)?;
        }
        if let Some(ms) = configs.get("min.compaction.lag.ms") {
            self.min_compaction_lag_ms = parse_ms("min.compaction.lag.ms", ms)?;
        }
        Ok(self)
    }

    /// Whether cleaning compacts this topic (`compact` is one of the policy's entries).
    pub fn compacts(&self) -> bool {
        self.cleanup_policy
            .split(',')
            .any(|entry| entry.trim() == "compact")
    }

    /// Checks the ranges `create_topic` requires.
    pub(crate) fn validate(&self) -> Result<(), LogError> {
        let reason = if self.partitions < 1 {
            format!("partitions must be at least 1, got {}", self.partitions)
        } else if self.segment_records < 1 {
            "segment_records must be at least 1".to_owned()
        } else if self.delete_retention_ms < 0 {
            format!(
                "delete.retention.ms must not be negative, got {}",
                self.delete_retention_ms
            )
        } else if self.min_compaction_lag_ms < 0 {
            format!(
                "min.compaction.lag.ms must not be negative, got {}",
                self.min_compaction_lag_ms
            )
        } else {
            return Ok(());
        };
        Err(LogError::InvalidConfig { reason })
    }
}

fn parse_ms(name: &str, text: &str) -> Result<i64, LogError> {
    text.trim().parse().map_err(|_| LogError::InvalidConfig {
        reason: format!("{name} is not a number of milliseconds: {text:?}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kafka_configs_override_and_policy_parses() {
        let mut configs = BTreeMap::new();
        configs.insert("cleanup.policy".to_owned(), "delete, compact".to_owned());
        configs.insert("delete.retention.ms".to_owned(), "5".to_owned());
        configs.insert("min.compaction.lag.ms".to_owned(), "7".to_owned());
        configs.insert("segment.bytes".to_owned(), "ignored".to_owned());
        let config = TopicConfig::compacted(3)
            .with_kafka_configs(&configs)
            .unwrap();
        assert_eq!(config.partitions, 3);
        assert_eq!(config.delete_retention_ms, 5);
        assert_eq!(config.min_compaction_lag_ms, 7);
        assert!(config.compacts());
        assert!(!TopicConfig::default()
            .with_cleanup_policy("delete")
            .compacts());

        configs.insert("delete.retention.ms".to_owned(), "soon".to_owned());
        assert!(matches!(
            TopicConfig::default().with_kafka_configs(&configs),
            Err(LogError::InvalidConfig { .. })
        ));
    }

    #[test]
    fn validation_rejects_out_of_range_values() {
        assert!(TopicConfig::default().validate().is_ok());
        assert!(TopicConfig::compacted(0).validate().is_err());
        assert!(TopicConfig::default()
            .with_segment_records(0)
            .validate()
            .is_err());
        assert!(TopicConfig::default()
            .with_delete_retention_ms(-1)
            .validate()
            .is_err());
        assert!(TopicConfig::default()
            .with_min_compaction_lag_ms(-1)
            .validate()
            .is_err());
    }
}
