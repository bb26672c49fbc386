//! The config topic: [`ConfigLog`], the sans-IO equivalent of Java's `KafkaConfigBackingStore`.
//!
//! Feed every record of the topic to [`ConfigLog::handle_record`] in offset order; call
//! [`ConfigLog::mark_caught_up`] once the initial read to the end offset is done; after every
//! `handle_*` call drain [`ConfigLog::poll_event`]. [`ConfigLog::snapshot`] gives Java's
//! `ClusterConfigState`; [`write`](mod@write) builds the records a writer must produce.

mod checkpoint_form;
mod deferred;
mod diagnostics;
mod event;
mod history;
mod json_view;
mod keys;
mod properties;
mod skip;
mod snapshot;
mod types;
mod values;
pub mod write;

use alloc::borrow::Cow;
use alloc::vec::Vec;

pub use diagnostics::{ConfigDiagnostics, Inconsistency, OrphanRecords, MAX_LISTED_MISSING};
pub use event::ConfigEvent;
pub use history::ConfigBefore;
pub use json_view::{ConfigEventJson, ConfigSnapshotJson};
pub use keys::{
    COMMIT_PREFIX, CONNECTOR_PREFIX, LOGGER_CLUSTER_PREFIX, RESTART_PREFIX, SESSION_KEY_KEY,
    TARGET_STATE_PREFIX, TASKS_FENCING_PREFIX, TASK_PREFIX,
};
pub(crate) use properties::Shapes;
pub use properties::{Properties, PropertyValue};
pub use skip::{ConfigSkip, ConfigSkipKind};
pub use snapshot::{ConfigSnapshot, TaskIds, MAX_LISTED_TASKS, NO_OFFSET};
pub use types::{SessionKey, TargetState, TaskId};

use crate::machine::{Events, Topic, TopicLog};
use crate::name::Name;
use crate::persistent::PMap;
use crate::persistent::ToKey;
use crate::skips::SkipCounts;
use crate::sync::Arc;
use crate::TopicKind;
use crate::{Record, RecordOutcome};
use deferred::{Deferred, Deferreds, TaskBuffer};
use keys::ConfigKey;
use snapshot::Tables;
use values::Body;

/// What handling a config record did.
pub type ConfigOutcome = RecordOutcome<ConfigSkip>;

/// The config topic's own state, which [`ConfigLog`] drives: the tables, the deferred buffer
/// and the diagnostic records. Checkpoints hold it (with the engine's positions and skip
/// counters); the event queue and the caught-up flag are not in them.
///
/// Its checkpoint form is `checkpoint_form`'s.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConfigTopic {
    tables: Tables,
    deferred: Deferreds,
    inconsistencies: PMap<Name, Inconsistency>,
    orphans: PMap<Name, OrphanRecords>,
    /// How recent configurations listed their names: a cache, not state (never in a checkpoint,
    /// and equal in every comparison).
    shapes: Shapes,
}

/// The config-topic state machine. See the [module docs](self) for the drive loop.
pub type ConfigLog = TopicLog<ConfigTopic>;

impl Topic for ConfigTopic {
    type Event = ConfigEvent;
    type Skip = ConfigSkip;
    type Snapshot = ConfigSnapshot;
    type Diagnostics = ConfigDiagnostics;
    const KIND: TopicKind = TopicKind::Config;

    /// The per-record pipeline of spec §3.1: convert, advance the offset, dispatch. (The key
    /// is looked at first only to choose how to read the value: connector and task configs,
    /// most of the topic, are read in one pass; the errors and their order are the same.)
    fn apply(
        &mut self,
        record: &Record<'_>,
        events: &mut Events<'_, ConfigEvent>,
    ) -> Result<(), ConfigSkip> {
        let key = record.key.map(keys::key_string);
        let dispatched = key.as_deref().map(keys::dispatch);
        let offset = record.offset;
        let body = match dispatched {
            Some(ConfigKey::Connector(c)) => {
                let read = values::convert_properties(record.value, &mut self.shapes)?;
                self.tables.offset = offset.saturating_add(1);
                return self.on_connector(c, read, events);
            }
            Some(ConfigKey::Task { connector, task }) => {
                let read = values::convert_properties(record.value, &mut self.shapes)?;
                self.tables.offset = offset.saturating_add(1);
                return self.on_task(connector, task, read, offset);
            }
            _ => values::convert(record.value)?,
        };
        self.tables.offset = offset.saturating_add(1);
        match dispatched.ok_or(ConfigSkip::NullKey)? {
            ConfigKey::TargetState(c) => self.on_target_state(c, &body, events),
            // Read above.
            ConfigKey::Connector(_) | ConfigKey::Task { .. } => Ok(()),
            ConfigKey::UnparseableTask => Err(ConfigSkip::UnparseableTaskKey),
            ConfigKey::Commit(c) => self.on_commit(c, &body, record.offset, events),
            ConfigKey::Restart(c) => self.on_restart(c, &body, events),
            ConfigKey::TasksFencing(c) => self.on_tasks_fencing(c, &body),
            ConfigKey::SessionKey => self.on_session_key(&body, events),
            ConfigKey::LoggerCluster(ns) => self.on_logger_level(ns, &body, events),
            ConfigKey::Unknown => Err(ConfigSkip::UnknownKey),
        }
    }

    /// Java's `ClusterConfigState`, O(1).
    fn snapshot(&self) -> ConfigSnapshot {
        ConfigSnapshot(Arc::new(self.tables.clone()))
    }

    fn diagnostics(&self, skipped: &SkipCounts<ConfigSkipKind>) -> ConfigDiagnostics {
        ConfigDiagnostics {
            inconsistencies: self.inconsistencies.clone(),
            orphans: self.orphans.clone(),
            skipped: skipped.clone(),
        }
    }
}

impl ConfigLog {
    /// The offset after the last convertible record ([`NO_OFFSET`] before any). Unlike
    /// [`next_fetch_offset`](Self::next_fetch_offset), it does not move past records whose
    /// value could not be converted.
    pub fn offset(&self) -> i64 {
        self.topic.tables.offset
    }
}

impl ConfigTopic {
    /// Java's connector removal (spec §3.2), shared with the commit guard of §3.4 step 1.
    fn remove_connector(&mut self, c: &str) {
        let t = &mut self.tables;
        t.connector_configs.remove(c);
        t.connector_task_counts.remove(c);
        t.task_configs.remove(c);
        t.applied_connector_configs.remove(c);
        self.deferred.remove(c);
    }

    fn on_connector(
        &mut self,
        c: &str,
        read: values::ConfigRead<'_>,
        events: &mut Events<'_, ConfigEvent>,
    ) -> Result<(), ConfigSkip> {
        if read.is_tombstone() {
            self.remove_connector(c);
            events.emit(|| ConfigEvent::ConnectorConfigRemoved {
                connector: c.into(),
            });
            return Ok(());
        }
        let props = values::properties(read, &mut self.shapes)?;
        let key = Name::key(c);
        let t = &mut self.tables;
        t.connector_configs.set(&key, props);
        if let Some(buffered) = self.deferred.get_mut(c) {
            buffered.has_config = true;
        }
        if !t.target_states.contains_key(&key) {
            t.target_states.insert(key.to_key(), TargetState::Started);
        }
        events.emit(|| ConfigEvent::ConnectorConfigUpdated {
            connector: c.into(),
        });
        Ok(())
    }

    fn on_task(
        &mut self,
        connector: Cow<'_, str>,
        task: i32,
        read: values::ConfigRead<'_>,
        offset: i64,
    ) -> Result<(), ConfigSkip> {
        if read.is_tombstone() {
            return Err(ConfigSkip::UnexpectedTombstone);
        }
        let props = values::properties(read, &mut self.shapes)?;
        let has_config = match self.deferred.get_mut(&*connector) {
            Some(buffered) => {
                buffered.tasks.insert(task, props);
                buffered.has_config
            }
            None => {
                let has_config = self
                    .tables
                    .connector_configs
                    .contains_key(&Name::key(&connector));
                let mut tasks = TaskBuffer::default();
                tasks.insert(task, props);
                let buffered = Deferred { tasks, has_config };
                self.deferred.insert(Name::from(&*connector), buffered);
                has_config
            }
        };
        debug_assert_eq!(
            has_config,
            self.tables.connector_configs.contains_key(&*connector)
        );
        if !has_config {
            diagnostics::note_orphan(&mut self.orphans, &connector, offset, false);
        }
        Ok(())
    }

    /// The commit algorithm of spec §3.4, step by step.
    fn on_commit(
        &mut self,
        c: &str,
        body: &Body<'_>,
        offset: i64,
        events: &mut Events<'_, ConfigEvent>,
    ) -> Result<(), ConfigSkip> {
        // Step 1: the deleted-connector guard runs before the value is looked at.
        // (The config, which step 7 applies, is looked up once here.)
        let key = Name::key(c);
        let Some(config) = self.tables.connector_configs.get(&key).cloned() else {
            self.remove_connector(c);
            diagnostics::note_orphan(&mut self.orphans, c, offset, true);
            return Err(ConfigSkip::CommitForMissingConnector);
        };
        // Steps 2 and 4: a non-map value or a non-integer count leaves everything untouched.
        let count = values::count(values::object(body)?, "tasks")?;
        // Steps 3 and 5.
        let mut deferred = self.deferred.get_mut(c);
        let consistent = deferred::is_complete(deferred.as_deref().map(|d| &d.tasks), count);
        let mut applied_ids = Vec::new();
        let t = &mut self.tables;
        if consistent {
            // Step 7: apply everything buffered, indices beyond the count included. The
            // configurations move out of the buffer, which step 8 would clear anyway.
            if let Some(entries) = deferred.as_deref_mut().map(|d| d.tasks.take()) {
                if !entries.is_empty() {
                    applied_ids.extend(entries.iter().map(|&(id, _)| id));
                    let applied = t.task_configs.get_or_insert_with(&key, PMap::new);
                    if applied.is_empty() {
                        // The usual case (a connector's first commit, or the first after its
                        // removal): the ids come sorted, and the map is built in one pass.
                        *applied = entries.into_iter().collect();
                    } else {
                        for (task, props) in entries {
                            applied.insert(task, props);
                        }
                    }
                }
                match t.generations.get_mut(&key) {
                    Some(generation) => *generation = generation.wrapping_add(1),
                    None => {
                        t.generations.insert(key.to_key(), 0);
                    }
                }
            }
            t.inconsistent.remove(&key);
            t.applied_connector_configs.set(&key, config);
            self.inconsistencies.remove(&key);
        } else {
            // Step 6: flag it and apply nothing.
            if !t.inconsistent.contains(&key) {
                t.inconsistent.insert(key.to_key());
            }
            let (missing_tasks, missing_count) =
                deferred::missing(deferred.as_deref().map(|d| &d.tasks), count);
            self.inconsistencies.insert(
                key.to_key(),
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
            entries.tasks.clear();
        }
        // Steps 9 and 10: the count is stored even when inconsistent, and fencing is pending.
        let t = &mut self.tables;
        t.connector_task_counts.set(&key, count);
        if !t.pending_fencing.contains(&key) {
            t.pending_fencing.insert(key.to_key());
        }
        // Step 11.
        events.emit(|| ConfigEvent::TaskConfigsUpdated {
            connector: c.into(),
            tasks: applied_ids,
        });
        Ok(())
    }

    fn on_target_state(
        &mut self,
        c: &str,
        body: &Body<'_>,
        events: &mut Events<'_, ConfigEvent>,
    ) -> Result<(), ConfigSkip> {
        let t = &mut self.tables;
        if body.is_none() {
            t.target_states.remove(c);
            if t.connector_configs.contains_key(c) {
                t.target_states.insert(c.into(), TargetState::Started);
            }
            return Ok(());
        }
        let state = values::target_state(values::object(body)?)?;
        let previous = t.target_states.set(&Name::key(c), state);
        if previous != Some(state) && t.connector_configs.contains_key(c) {
            events.emit(|| ConfigEvent::TargetStateChanged {
                connector: c.into(),
                state,
            });
        }
        Ok(())
    }

    fn on_restart(
        &mut self,
        c: &str,
        body: &Body<'_>,
        events: &mut Events<'_, ConfigEvent>,
    ) -> Result<(), ConfigSkip> {
        let map = values::object(body)?;
        let event = ConfigEvent::RestartRequested {
            connector: c.into(),
            only_failed: values::flag(map, "only-failed"),
            include_tasks: values::flag(map, "include-tasks"),
        };
        events.emit(|| event);
        Ok(())
    }

    fn on_tasks_fencing(&mut self, c: &str, body: &Body<'_>) -> Result<(), ConfigSkip> {
        let count = values::count(values::object(body)?, "task-count")?;
        let t = &mut self.tables;
        t.task_count_records.set(&Name::key(c), count);
        t.pending_fencing.remove(c);
        Ok(())
    }

    fn on_session_key(
        &mut self,
        body: &Body<'_>,
        events: &mut Events<'_, ConfigEvent>,
    ) -> Result<(), ConfigSkip> {
        let parts = values::session_key(body)?;
        let key = SessionKey {
            encoded: parts.encoded,
            key: parts.key,
            algorithm: parts.algorithm,
            creation_timestamp: parts.creation_timestamp,
        };
        self.tables.session_key = Some(Arc::new(key.clone()));
        events.emit(|| ConfigEvent::SessionKeyUpdated { key });
        Ok(())
    }

    fn on_logger_level(
        &mut self,
        namespace: &str,
        body: &Body<'_>,
        events: &mut Events<'_, ConfigEvent>,
    ) -> Result<(), ConfigSkip> {
        let level = values::logger_level(body)?;
        events.emit(|| ConfigEvent::LoggerLevelUpdated {
            namespace: namespace.into(),
            level,
        });
        Ok(())
    }
}

#[cfg(test)]
mod tests;
