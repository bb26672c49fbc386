//! The config topic: [`ConfigLog`], the sans-IO equivalent of Java's `KafkaConfigBackingStore`.
//!
//! Feed every record of the topic to [`ConfigLog::handle_record`] in offset order; call
//! [`ConfigLog::mark_caught_up`] once the initial read to the end offset is done; after every
//! `handle_*` call drain [`ConfigLog::poll_event`]. [`ConfigLog::snapshot`] gives Java's
//! `ClusterConfigState`; [`write`](mod@write) builds the records a writer must produce.

mod diagnostics;
mod event;
mod json_view;
mod keys;
mod properties;
mod skip;
mod snapshot;
mod types;
mod values;
pub mod write;

use alloc::collections::{BTreeMap, VecDeque};
use alloc::string::String;
use alloc::vec::Vec;

use serde::{Deserialize, Serialize};

pub use diagnostics::{ConfigDiagnostics, Inconsistency, OrphanRecords, MAX_LISTED_MISSING};
pub use event::ConfigEvent;
pub use json_view::{EventJson, SnapshotJson};
pub use keys::{
    COMMIT_PREFIX, CONNECTOR_PREFIX, LOGGER_CLUSTER_PREFIX, RESTART_PREFIX, SESSION_KEY_KEY,
    TARGET_STATE_PREFIX, TASKS_FENCING_PREFIX, TASK_PREFIX,
};
pub use properties::{Properties, PropertyValue};
pub use skip::{ConfigSkip, SkipCounts, SkipKind};
pub use snapshot::{ConfigSnapshot, TaskIds, MAX_LISTED_TASKS, NO_OFFSET};
pub use types::{SessionKey, TargetState, TaskId};

use crate::checkpoint::{self, CheckpointError, TopicKind};
use crate::persistent::PMap;
use crate::position::{Position, Positions};
use crate::sync::Arc;
use crate::{Record, RecordError, RecordOutcome};
use keys::ConfigKey;
use snapshot::Tables;
use values::Body;

/// What handling a config record did.
pub type ConfigOutcome = RecordOutcome<ConfigSkip>;

/// Task configs read since the connector's previous commit (Java's `deferredTaskUpdates[c]`).
/// A connector with no entry and one with an empty entry behave differently (spec §3.4).
type Deferred = BTreeMap<i32, Properties>;

/// Everything a checkpoint restores: the tables, the deferred buffer, positions and
/// diagnostics. Not the event queue, and not the caught-up flag.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
struct MachineState {
    #[serde(with = "snapshot::applied_by_reference")]
    tables: Tables,
    deferred: BTreeMap<String, Deferred>,
    positions: Positions,
    diagnostics: ConfigDiagnostics,
}

/// The config-topic state machine. See the [module docs](self) for the drive loop.
#[derive(Debug, Clone, Default)]
pub struct ConfigLog {
    state: MachineState,
    caught_up: bool,
    events: VecDeque<ConfigEvent>,
}

impl ConfigLog {
    /// A reader at the start of the topic, not caught up.
    pub fn new() -> Self {
        Self::default()
    }

    /// Marks the initial read to the end offset as complete: from now on records produce
    /// events (Java's `started = true`, spec §3.11). Call it once, after the start-up catch-up;
    /// calling it again changes nothing.
    pub fn mark_caught_up(&mut self) {
        self.caught_up = true;
    }

    /// Whether [`mark_caught_up`](Self::mark_caught_up) was called.
    pub fn is_caught_up(&self) -> bool {
        self.caught_up
    }

    /// Applies one record exactly as Java's consume callback does (spec §3).
    ///
    /// Call it for every record of the topic, in offset order per partition. It may change the
    /// snapshot, the diagnostics and (once caught up) queue events; drain
    /// [`poll_event`](Self::poll_event) afterwards. A record below its partition's next expected
    /// offset is a duplicate and changes nothing. On `Err` nothing changed.
    pub fn handle_record(&mut self, record: Record<'_>) -> Result<ConfigOutcome, RecordError> {
        let outcome = match self.state.positions.advance(&record)? {
            Position::Duplicate { next_expected } => Err(ConfigSkip::Duplicate { next_expected }),
            Position::Fresh => self.apply(&record),
        };
        Ok(match outcome {
            Ok(()) => RecordOutcome::Applied,
            Err(skip) => {
                self.state.diagnostics.skipped.count(skip.kind());
                RecordOutcome::Skipped(skip)
            }
        })
    }

    /// The next event, oldest first. Drain until `None` after every `handle_*` call.
    #[must_use]
    pub fn poll_event(&mut self) -> Option<ConfigEvent> {
        self.events.pop_front()
    }

    /// An immutable view of the current state, O(1).
    pub fn snapshot(&self) -> ConfigSnapshot {
        ConfigSnapshot(Arc::new(self.state.tables.clone()))
    }

    /// The offset after the last convertible record ([`NO_OFFSET`] before any).
    pub fn offset(&self) -> i64 {
        self.state.tables.offset
    }

    /// The next offset to fetch from `partition` (0 when nothing was read from it). Unlike
    /// [`offset`](Self::offset) it also moves past records whose value could not be converted.
    pub fn next_fetch_offset(&self, partition: i32) -> i64 {
        self.state.positions.next_offset(partition)
    }

    /// Diagnostics beyond Java's snapshot.
    pub fn diagnostics(&self) -> &ConfigDiagnostics {
        &self.state.diagnostics
    }

    /// Serializes the whole machine (buffered task configs included) into a versioned,
    /// checksummed checkpoint. Pending events are not included: drain them first.
    pub fn checkpoint(&self) -> Vec<u8> {
        checkpoint::encode(TopicKind::Config, &self.state, None)
    }

    /// [`checkpoint`](Self::checkpoint) stamped with the caller's time (ms), so that
    /// [`checkpoint::check_fresh`] can refuse it once it is older
    /// than the topic's tombstone retention.
    pub fn checkpoint_at(&self, taken_at_ms: i64) -> Vec<u8> {
        checkpoint::encode(TopicKind::Config, &self.state, Some(taken_at_ms))
    }

    /// Restores a reader from [`checkpoint`](Self::checkpoint) bytes. The reader is not caught
    /// up: read the tail to the end offset, then call [`mark_caught_up`](Self::mark_caught_up).
    pub fn restore(bytes: &[u8]) -> Result<Self, CheckpointError> {
        let state = checkpoint::decode(TopicKind::Config, bytes)?;
        Ok(Self {
            state,
            caught_up: false,
            events: VecDeque::new(),
        })
    }

    fn emit(&mut self, event: ConfigEvent) {
        if self.caught_up {
            self.events.push_back(event);
        }
    }

    /// The per-record pipeline of spec §3.1: convert, advance the offset, dispatch.
    fn apply(&mut self, record: &Record<'_>) -> Result<(), ConfigSkip> {
        let body = values::convert(record.value)?;
        self.state.tables.offset = record.offset.saturating_add(1);
        let key_bytes = record.key.ok_or(ConfigSkip::NullKey)?;
        let key = keys::key_string(key_bytes);
        match keys::dispatch(&key) {
            ConfigKey::TargetState(c) => self.on_target_state(c, &body),
            ConfigKey::Connector(c) => self.on_connector(c, body),
            ConfigKey::Task { connector, task } => {
                self.on_task(connector, task, body, record.offset)
            }
            ConfigKey::UnparseableTask => Err(ConfigSkip::UnparseableTaskKey),
            ConfigKey::Commit(c) => self.on_commit(c, &body, record.offset),
            ConfigKey::Restart(c) => self.on_restart(c, &body),
            ConfigKey::TasksFencing(c) => self.on_tasks_fencing(c, &body),
            ConfigKey::SessionKey => self.on_session_key(&body),
            ConfigKey::LoggerCluster(ns) => self.on_logger_level(ns, &body),
            ConfigKey::Unknown => Err(ConfigSkip::UnknownKey),
        }
    }

    /// Java's connector removal (spec §3.2), shared with the commit guard of §3.4 step 1.
    fn remove_connector(&mut self, c: &str) {
        let t = &mut self.state.tables;
        t.connector_configs.remove(c);
        t.connector_task_counts.remove(c);
        t.task_configs.remove(c);
        t.applied_connector_configs.remove(c);
        self.state.deferred.remove(c);
    }

    fn on_connector(&mut self, c: &str, body: Body) -> Result<(), ConfigSkip> {
        if body.is_none() {
            self.remove_connector(c);
            self.emit(ConfigEvent::ConnectorConfigRemoved {
                connector: c.into(),
            });
            return Ok(());
        }
        let props = values::properties(body)?;
        let t = &mut self.state.tables;
        t.connector_configs.insert(c.into(), props);
        if !t.target_states.contains_key(c) {
            t.target_states.insert(c.into(), TargetState::Started);
        }
        self.emit(ConfigEvent::ConnectorConfigUpdated {
            connector: c.into(),
        });
        Ok(())
    }

    fn on_task(
        &mut self,
        connector: String,
        task: i32,
        body: Body,
        offset: i64,
    ) -> Result<(), ConfigSkip> {
        if body.is_none() {
            return Err(ConfigSkip::UnexpectedTombstone);
        }
        let props = values::properties(body)?;
        if !self.state.tables.connector_configs.contains_key(&connector) {
            self.state
                .diagnostics
                .note_orphan(&connector, offset, false);
        }
        self.state
            .deferred
            .entry(connector)
            .or_default()
            .insert(task, props);
        Ok(())
    }

    /// The commit algorithm of spec §3.4, step by step.
    fn on_commit(&mut self, c: &str, body: &Body, offset: i64) -> Result<(), ConfigSkip> {
        // Step 1: the deleted-connector guard runs before the value is looked at.
        if !self.state.tables.connector_configs.contains_key(c) {
            self.remove_connector(c);
            self.state.diagnostics.note_orphan(c, offset, true);
            return Err(ConfigSkip::CommitForMissingConnector);
        }
        // Steps 2 and 4: a non-map value or a non-integer count leaves everything untouched.
        let count = values::count(values::object(body)?, "tasks")?;
        // Steps 3 and 5.
        let deferred = self.state.deferred.get_mut(c);
        let buffered = deferred.as_deref();
        let consistent = is_complete(buffered, count);
        let mut applied_ids = Vec::new();
        let t = &mut self.state.tables;
        if consistent {
            // Step 7: apply everything buffered, indices beyond the count included.
            if let Some(entries) = buffered {
                if !entries.is_empty() {
                    let applied = t.task_configs.get_or_insert_with(c.into(), PMap::new);
                    for (task, props) in entries {
                        applied.insert(*task, props.clone());
                        applied_ids.push(*task);
                    }
                }
                match t.generations.get_mut(c) {
                    Some(generation) => *generation = generation.wrapping_add(1),
                    None => {
                        t.generations.insert(c.into(), 0);
                    }
                }
            }
            t.inconsistent.remove(c);
            if let Some(config) = t.connector_configs.get(c).cloned() {
                t.applied_connector_configs.insert(c.into(), config);
            }
            self.state.diagnostics.inconsistencies.remove(c);
        } else {
            // Step 6: flag it and apply nothing.
            if !t.inconsistent.contains(c) {
                t.inconsistent.insert(c.into());
            }
            let (missing_tasks, missing_count) = missing(buffered, count);
            self.state.diagnostics.inconsistencies.insert(
                c.into(),
                Inconsistency {
                    commit_offset: offset,
                    task_count: count,
                    missing_tasks,
                    missing_count,
                },
            );
        }
        // Step 8: the buffer is cleared, but its entry stays.
        if let Some(entries) = deferred {
            entries.clear();
        }
        // Steps 9 and 10: the count is stored even when inconsistent, and fencing is pending.
        let t = &mut self.state.tables;
        t.connector_task_counts.insert(c.into(), count);
        if !t.pending_fencing.contains(c) {
            t.pending_fencing.insert(c.into());
        }
        // Step 11.
        self.emit(ConfigEvent::TaskConfigsUpdated {
            connector: c.into(),
            tasks: applied_ids,
        });
        Ok(())
    }

    fn on_target_state(&mut self, c: &str, body: &Body) -> Result<(), ConfigSkip> {
        let t = &mut self.state.tables;
        if body.is_none() {
            t.target_states.remove(c);
            if t.connector_configs.contains_key(c) {
                t.target_states.insert(c.into(), TargetState::Started);
            }
            return Ok(());
        }
        let state = values::target_state(values::object(body)?)?;
        let previous = t.target_states.insert(c.into(), state);
        if previous != Some(state) && t.connector_configs.contains_key(c) {
            self.emit(ConfigEvent::TargetStateChanged {
                connector: c.into(),
                state,
            });
        }
        Ok(())
    }

    fn on_restart(&mut self, c: &str, body: &Body) -> Result<(), ConfigSkip> {
        let map = values::object(body)?;
        let event = ConfigEvent::RestartRequested {
            connector: c.into(),
            only_failed: values::flag(map, "only-failed"),
            include_tasks: values::flag(map, "include-tasks"),
        };
        self.emit(event);
        Ok(())
    }

    fn on_tasks_fencing(&mut self, c: &str, body: &Body) -> Result<(), ConfigSkip> {
        let count = values::count(values::object(body)?, "task-count")?;
        let t = &mut self.state.tables;
        t.task_count_records.insert(c.into(), count);
        t.pending_fencing.remove(c);
        Ok(())
    }

    fn on_session_key(&mut self, body: &Body) -> Result<(), ConfigSkip> {
        let parts = values::session_key(body)?;
        let key = SessionKey {
            encoded: parts.encoded,
            key: parts.key,
            algorithm: parts.algorithm,
            creation_timestamp: parts.creation_timestamp,
        };
        self.state.tables.session_key = Some(Arc::new(key.clone()));
        self.emit(ConfigEvent::SessionKeyUpdated { key });
        Ok(())
    }

    fn on_logger_level(&mut self, namespace: &str, body: &Body) -> Result<(), ConfigSkip> {
        let level = values::logger_level(body)?;
        self.emit(ConfigEvent::LoggerLevelUpdated {
            namespace: namespace.into(),
            level,
        });
        Ok(())
    }
}

/// Java's `completeTaskIdSet`: at least `count` ids buffered and every id in `0..count` among
/// them. Extra ids are fine; a count of 0 or less is always complete.
fn is_complete(buffered: Option<&Deferred>, count: i32) -> bool {
    if count <= 0 {
        return true;
    }
    let Some(ids) = buffered else {
        return false;
    };
    // `len >= count` first, so the loop below runs at most `len` times.
    usize::try_from(count).is_ok_and(|n| ids.len() >= n) && (0..count).all(|i| ids.contains_key(&i))
}

/// The ids in `0..count` that are not buffered: the first [`MAX_LISTED_MISSING`] and the total.
fn missing(buffered: Option<&Deferred>, count: i32) -> (Vec<i32>, u64) {
    let present = buffered.map_or(0, |ids| ids.range(0..count.max(0)).count());
    let total = u64::try_from(count.max(0)).unwrap_or(0) - present as u64;
    let listed = (0..count.max(0))
        .filter(|i| buffered.is_none_or(|ids| !ids.contains_key(i)))
        .take(MAX_LISTED_MISSING)
        .collect();
    (listed, total)
}

crate::machine::delegate_topic_machine!(ConfigLog, ConfigEvent, ConfigSkip, ConfigSnapshot);

#[cfg(test)]
mod tests;
