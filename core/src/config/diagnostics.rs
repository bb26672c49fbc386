//! Diagnostics beyond Java: why connectors are inconsistent, records of connectors that have no
//! config, and skip counters. They never influence the parity snapshot.

use alloc::vec::Vec;

use serde::{Deserialize, Serialize};

use super::skip::ConfigSkipKind;
use crate::name::Name;
use crate::persistent::PMap;
use crate::skips::SkipCounts;

/// At most this many missing task ids are listed per inconsistency (the count is always exact).
pub const MAX_LISTED_MISSING: usize = 64;

/// Why a connector is in the inconsistent set: the latest inconsistent commit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Inconsistency {
    /// Offset of the commit record that found the task set incomplete.
    pub commit_offset: i64,
    /// The task count that commit announced.
    pub task_count: i32,
    /// Task ids below the count that had no task record since the previous commit, ascending
    /// (at most [`MAX_LISTED_MISSING`]).
    pub missing_tasks: Vec<i32>,
    /// How many task ids were missing in total.
    pub missing_count: u64,
}

/// Task and commit records read for a connector that had no config when they were read: the
/// "ghosts" left behind by a deleted connector (KAFKA-16838), or a writer that died early.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OrphanRecords {
    /// Task config records read while the connector had no config.
    pub task_records: u64,
    /// Commit records read while the connector had no config.
    pub commit_records: u64,
    /// Offset of the first such record.
    pub first_offset: i64,
    /// Offset of the latest such record.
    pub last_offset: i64,
}

/// Diagnostics of a config reader. Read them with
/// [`ConfigLog::diagnostics`](super::ConfigLog::diagnostics).
/// O(1) to take: the maps are shared with the reader.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConfigDiagnostics {
    pub(crate) inconsistencies: PMap<Name, Inconsistency>,
    pub(crate) orphans: PMap<Name, OrphanRecords>,
    pub(crate) skipped: SkipCounts<ConfigSkipKind>,
}

impl ConfigDiagnostics {
    /// For every connector in the inconsistent set, the commit that put it there.
    pub fn inconsistencies(&self) -> impl Iterator<Item = (&str, &Inconsistency)> + '_ {
        self.inconsistencies.iter().map(|(c, i)| (c.as_str(), i))
    }

    /// The inconsistency report of one connector.
    pub fn inconsistency(&self, connector: &str) -> Option<&Inconsistency> {
        self.inconsistencies.get(connector)
    }

    /// Connectors whose task or commit records were read while they had no config.
    pub fn orphan_records(&self) -> impl Iterator<Item = (&str, &OrphanRecords)> + '_ {
        self.orphans.iter().map(|(c, o)| (c.as_str(), o))
    }

    /// Records skipped, per reason.
    pub fn skipped(&self) -> &SkipCounts<ConfigSkipKind> {
        &self.skipped
    }
}

/// Counts a task (or, with `is_commit`, commit) record read at `offset` for a connector that
/// has no config.
pub(crate) fn note_orphan(
    orphans: &mut PMap<Name, OrphanRecords>,
    connector: &str,
    offset: i64,
    is_commit: bool,
) {
    let entry = orphans.get_or_insert_with(&Name::key(connector), || OrphanRecords {
        task_records: 0,
        commit_records: 0,
        first_offset: offset,
        last_offset: offset,
    });
    if is_commit {
        entry.commit_records += 1;
    } else {
        entry.task_records += 1;
    }
    entry.last_offset = offset;
}
