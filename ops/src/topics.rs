//! Topics read to their end: each replayed machine with its key index, the layout the source
//! showed, and the dump lines skipped.

use std::collections::BTreeSet;

use engine::config::ConfigLog;
use engine::offsets::OffsetLog;
use engine::status::StatusLog;

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
