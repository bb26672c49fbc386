//! The config snapshot: everything Java's `ClusterConfigState` exposes (spec §5).

use super::properties::Properties;
use super::types::{SessionKey, TargetState, TaskId};
use crate::name::Name;
use crate::persistent::{PMap, PSet};
use crate::sync::Arc;

/// The most task ids a view of a snapshot lists for one connector (the JSON contract, the
/// CLI's tables and REST answers), each saying when it left ids out. No real connector has this
/// many tasks; a forged or corrupt commit record can claim 2,147,483,647.
pub const MAX_LISTED_TASKS: i32 = 10_000;

/// The task ids [`ConfigSnapshot::tasks`] lists, made one at a time, ascending.
#[derive(Debug, Clone)]
pub struct TaskIds<'a> {
    connector: &'a str,
    next: i32,
    end: i32,
}

impl TaskIds<'_> {
    /// Whether no task is listed (an inconsistent connector, or a count of 0 or less).
    pub fn is_empty(&self) -> bool {
        self.next >= self.end
    }
}

impl Iterator for TaskIds<'_> {
    type Item = TaskId;

    fn next(&mut self) -> Option<TaskId> {
        if self.next >= self.end {
            return None;
        }
        let id = TaskId::new(self.connector, self.next);
        self.next += 1;
        Some(id)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = usize::try_from(self.end.saturating_sub(self.next)).unwrap_or(0);
        (n, Some(n))
    }

    fn nth(&mut self, n: usize) -> Option<TaskId> {
        let skip = i32::try_from(n).unwrap_or(i32::MAX);
        self.next = self.next.saturating_add(skip).min(self.end);
        self.next()
    }
}

impl ExactSizeIterator for TaskIds<'_> {}

impl core::iter::FusedIterator for TaskIds<'_> {}

/// Applied task configs by connector, then task number (Java's `taskConfigs`, keyed by
/// `ConnectorTaskId`): a commit finds its connector once, not once per task.
pub(crate) type TaskConfigs = PMap<Name, PMap<i32, Properties>>;

/// The store's collections (spec §3.0 without the deferred buffer), each a persistent map, so
/// a snapshot shares them and a later change copies only the path to what it changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Tables {
    pub(crate) offset: i64,
    pub(crate) session_key: Option<Arc<SessionKey>>,
    pub(crate) connector_configs: PMap<Name, Properties>,
    pub(crate) connector_task_counts: PMap<Name, i32>,
    pub(crate) task_configs: TaskConfigs,
    pub(crate) target_states: PMap<Name, TargetState>,
    pub(crate) task_count_records: PMap<Name, i32>,
    pub(crate) generations: PMap<Name, i32>,
    pub(crate) applied_connector_configs: PMap<Name, Properties>,
    pub(crate) pending_fencing: PSet<Name>,
    pub(crate) inconsistent: PSet<Name>,
}

impl Default for Tables {
    fn default() -> Self {
        Self {
            offset: NO_OFFSET,
            session_key: None,
            connector_configs: PMap::new(),
            connector_task_counts: PMap::new(),
            task_configs: PMap::new(),
            target_states: PMap::new(),
            task_count_records: PMap::new(),
            generations: PMap::new(),
            applied_connector_configs: PMap::new(),
            pending_fencing: PSet::new(),
            inconsistent: PSet::new(),
        }
    }
}

/// Java's `ClusterConfigState.NO_OFFSET`: the offset before any record was read.
pub const NO_OFFSET: i64 = -1;

/// An immutable view of the config topic, with the content of Java's `ClusterConfigState`.
///
/// Cloning is O(1). Taking one with [`ConfigLog::snapshot`](super::ConfigLog::snapshot) is O(1)
/// too; the tables are persistent maps the machine shares with it, so a later record copies
/// only the path to what it changes, and the snapshot never changes. Every iterator is sorted
/// by connector name (Java uses HashMap order).
///
/// Equality compares every field, which is stricter than Java's `ClusterConfigState.equals`
/// (that one ignores task-count records, generations, applied configs and pending fencing).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigSnapshot(pub(crate) Arc<Tables>);

impl Default for ConfigSnapshot {
    fn default() -> Self {
        Self(Arc::new(Tables::default()))
    }
}

impl ConfigSnapshot {
    /// The offset after the last convertible record (spec §3.1); [`NO_OFFSET`] before any.
    pub fn offset(&self) -> i64 {
        self.0.offset
    }

    /// The latest valid session key.
    pub fn session_key(&self) -> Option<&SessionKey> {
        self.0.session_key.as_deref()
    }

    /// Whether the connector has a config.
    pub fn contains(&self, connector: &str) -> bool {
        self.0.connector_configs.contains_key(connector)
    }

    /// The connectors that have a config, inconsistent ones included.
    pub fn connectors(&self) -> impl Iterator<Item = &str> + '_ {
        self.0.connector_configs.keys().map(Name::as_str)
    }

    /// The connector's raw config (config-provider references are not resolved).
    pub fn connector_config(&self, connector: &str) -> Option<&Properties> {
        self.0.connector_configs.get(connector)
    }

    /// The connector config as it was at the last consistent commit (KAFKA-9228).
    pub fn applied_connector_config(&self, connector: &str) -> Option<&Properties> {
        self.0.applied_connector_configs.get(connector)
    }

    /// Every applied connector config.
    pub fn applied_connector_configs(&self) -> impl Iterator<Item = (&str, &Properties)> + '_ {
        self.0
            .applied_connector_configs
            .iter()
            .map(|(c, p)| (c.as_str(), p))
    }

    /// The stored target state; may exist for a connector without a config.
    pub fn target_state(&self, connector: &str) -> Option<TargetState> {
        self.0.target_states.get(connector).copied()
    }

    /// Every stored target state, with or without a config.
    pub fn target_states(&self) -> impl Iterator<Item = (&str, TargetState)> + '_ {
        self.0.target_states.iter().map(|(c, s)| (c.as_str(), *s))
    }

    /// Target states stored for names that have no connector config (diagnostic).
    pub fn target_states_without_connector(&self) -> impl Iterator<Item = (&str, TargetState)> {
        self.target_states().filter(|(c, _)| !self.contains(c))
    }

    /// The applied config of a task, stale ones included (spec §3.4 notes).
    pub fn task_config(&self, id: &TaskId) -> Option<&Properties> {
        self.0
            .task_configs
            .get(id.connector.as_str())?
            .get(&id.task)
    }

    /// The applied task configs of one connector, stale ones included, ordered by task.
    pub fn connector_task_configs(
        &self,
        connector: &str,
    ) -> impl Iterator<Item = (i32, &Properties)> + '_ {
        self.0
            .task_configs
            .get(connector)
            .into_iter()
            .flat_map(|tasks| tasks.iter().map(|(task, props)| (*task, props)))
    }

    /// Every applied task config, stale ones included, ordered by task id.
    pub fn task_configs(&self) -> impl Iterator<Item = (TaskId, &Properties)> + '_ {
        self.0.task_configs.iter().flat_map(|(connector, tasks)| {
            tasks
                .iter()
                .map(|(task, props)| (TaskId::new(connector.as_str(), *task), props))
        })
    }

    /// The task count of the latest commit, even an inconsistent one; 0 if none.
    pub fn task_count(&self, connector: &str) -> i32 {
        self.0
            .connector_task_counts
            .get(connector)
            .copied()
            .unwrap_or(0)
    }

    /// Every stored task count.
    pub fn connector_task_counts(&self) -> impl Iterator<Item = (&str, i32)> + '_ {
        self.0
            .connector_task_counts
            .iter()
            .map(|(c, n)| (c.as_str(), *n))
    }

    /// Java's `tasks(c)`: empty for an inconsistent connector or one without a count, otherwise
    /// tasks `0..count` ascending. A negative count (where Java throws) gives an empty list.
    ///
    /// The ids are made as they are iterated: a commit record can claim any count (a forged
    /// `{"tasks":2147483647}` too), so a caller that collects or prints them bounds how many it
    /// takes (views list at most [`MAX_LISTED_TASKS`]).
    pub fn tasks<'a>(&self, connector: &'a str) -> TaskIds<'a> {
        let end = if self.0.inconsistent.contains(connector) {
            0
        } else {
            self.task_count(connector).max(0)
        };
        TaskIds {
            connector,
            next: 0,
            end,
        }
    }

    /// Whether a fencing round is pending for the connector (KIP-618).
    pub fn pending_fencing(&self, connector: &str) -> bool {
        self.0.pending_fencing.contains(connector)
    }

    /// Every connector with a pending fencing round.
    pub fn connectors_pending_fencing(&self) -> impl Iterator<Item = &str> + '_ {
        self.0.pending_fencing.iter().map(Name::as_str)
    }

    /// The latest task count record (`tasks-fencing-`).
    pub fn task_count_record(&self, connector: &str) -> Option<i32> {
        self.0.task_count_records.get(connector).copied()
    }

    /// Every task count record.
    pub fn task_count_records(&self) -> impl Iterator<Item = (&str, i32)> + '_ {
        self.0
            .task_count_records
            .iter()
            .map(|(c, n)| (c.as_str(), *n))
    }

    /// The task config generation: 0 at the first consistent commit with buffered records, then
    /// incremented by each such commit.
    pub fn task_config_generation(&self, connector: &str) -> Option<i32> {
        self.0.generations.get(connector).copied()
    }

    /// Every task config generation.
    pub fn task_config_generations(&self) -> impl Iterator<Item = (&str, i32)> + '_ {
        self.0.generations.iter().map(|(c, n)| (c.as_str(), *n))
    }

    /// Whether the connector is flagged inconsistent (it may no longer exist, spec §8 item 3).
    pub fn is_inconsistent(&self, connector: &str) -> bool {
        self.0.inconsistent.contains(connector)
    }

    /// Java's `inconsistentConnectors()`.
    pub fn inconsistent_connectors(&self) -> impl Iterator<Item = &str> + '_ {
        self.0.inconsistent.iter().map(Name::as_str)
    }
}
