//! Diagnostics beyond Java: skip counters and statuses that Java's clean-up never reaches. They
//! never influence the snapshot.

use super::skip::StatusSkipKind;
use super::snapshot::StatusSnapshot;
use super::types::{Status, TopicStatus};
use crate::skips::SkipCounts;

/// Diagnostics of a status reader, from
/// [`StatusLog::diagnostics`](super::StatusLog::diagnostics). Cheap to take: it shares the
/// snapshot, and the lists are computed when iterated.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StatusDiagnostics {
    pub(crate) skipped: SkipCounts<StatusSkipKind>,
    pub(crate) snapshot: StatusSnapshot,
}

impl StatusDiagnostics {
    /// Records skipped, per reason.
    pub fn skipped(&self) -> &SkipCounts<StatusSkipKind> {
        &self.skipped
    }

    /// Task statuses of connectors that have no connector status (spec §6 item 9): typically
    /// left behind when a worker died between the task tombstones and the connector tombstone of
    /// a deletion, or when a connector tombstone was read before task records that it could not
    /// drop. Java's `updateDeletedTaskStatus` iterates only `connectors()`, so they are never
    /// cleaned up. As `(connector, task, status)`, sorted.
    pub fn orphan_task_statuses(&self) -> impl Iterator<Item = (&str, i32, &Status)> + '_ {
        let snap = &self.snapshot;
        snap.all_tasks()
            .filter(move |(c, _, _)| snap.connector(c).is_none())
    }

    /// Topic statuses of connectors that have no connector status, as
    /// `(connector, topic, status)` by the key's names, sorted. A connector deletion does not
    /// touch topic statuses; only a reset (by a worker that had the connector) removes them.
    pub fn orphan_topic_statuses(&self) -> impl Iterator<Item = (&str, &str, &TopicStatus)> + '_ {
        let snap = &self.snapshot;
        snap.all_topics()
            .filter(move |(c, _, _)| snap.connector(c).is_none())
    }

    /// Topic statuses whose value's `name` or `connector` differs from the key's topic or
    /// connector, as `(connector, topic, status)` by the key's names. Java indexes them by the
    /// key but resets them by the value, so a reset cannot delete them.
    pub fn mismatched_topic_statuses(
        &self,
    ) -> impl Iterator<Item = (&str, &str, &TopicStatus)> + '_ {
        self.snapshot
            .all_topics()
            .filter(|(c, t, s)| s.connector != *c || s.name != *t)
    }
}
