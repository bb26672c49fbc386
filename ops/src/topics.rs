//! Topics read to their end: each replayed machine with its key index, the layout the source
//! showed, and the dump lines skipped.

use std::collections::{BTreeMap, BTreeSet};

use engine::config::ConfigLog;
use engine::offsets::OffsetLog;
use engine::status::StatusLog;
use engine::{TopicKind, TopicMachine};

use crate::index::Indexed;
use crate::kcat;

/// How a topic is laid out, as far as the source can tell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Layout {
    /// A live topic as the broker describes it.
    Described {
        /// Partition count.
        partitions: i32,
        /// `cleanup.policy`.
        cleanup_policy: String,
    },
    /// A dump: only the partitions that hold records are known.
    Dump {
        /// Partitions seen in the dump.
        partitions_seen: BTreeSet<i32>,
    },
}

/// One topic read to its end.
#[derive(Debug)]
pub struct TopicRead<M> {
    /// The topic name (live), or the dump file.
    pub name: String,
    /// The replayed machine with its key index.
    pub state: Indexed<M>,
    /// The layout.
    pub layout: Layout,
    /// Dump lines skipped with `--skip-bad-lines`.
    pub bad_lines: kcat::BadLines,
}

/// The topics a command read (those it was given), each with its machine: the replay logs
/// by default, or any machine with their snapshots and diagnostics (a server's watched ones).
#[derive(Debug)]
pub struct Topics<C = ConfigLog, S = StatusLog, O = OffsetLog> {
    /// The config topic.
    pub config: Option<TopicRead<C>>,
    /// The status topic.
    pub status: Option<TopicRead<S>>,
    /// The offsets topic.
    pub offsets: Option<TopicRead<O>>,
}

impl<C, S, O> Default for Topics<C, S, O> {
    fn default() -> Self {
        Self {
            config: None,
            status: None,
            offsets: None,
        }
    }
}

impl<M: TopicMachine> TopicRead<M> {
    /// The next offset to read of every partition the layout names (the machine's position).
    pub fn positions(&self) -> BTreeMap<i32, i64> {
        let partitions: Vec<i32> = match &self.layout {
            Layout::Described { partitions, .. } => (0..*partitions).collect(),
            Layout::Dump { partitions_seen } => partitions_seen.iter().copied().collect(),
        };
        partitions
            .into_iter()
            .map(|p| (p, self.state.next_fetch_offset(p)))
            .collect()
    }
}

impl<C: TopicMachine, S: TopicMachine, O: TopicMachine> Topics<C, S, O> {
    /// The next offset to read of every partition, per topic read.
    pub fn positions(&self) -> BTreeMap<TopicKind, BTreeMap<i32, i64>> {
        let mut positions = BTreeMap::new();
        if let Some(read) = &self.config {
            positions.insert(TopicKind::Config, read.positions());
        }
        if let Some(read) = &self.status {
            positions.insert(TopicKind::Status, read.positions());
        }
        if let Some(read) = &self.offsets {
            positions.insert(TopicKind::Offsets, read.positions());
        }
        positions
    }
}
