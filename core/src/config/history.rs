//! How config records are told as changes (see [`crate::history`]).

use alloc::string::String;
use alloc::vec::Vec;

use super::keys::{self, ConfigKey};
use super::{ConfigEvent, ConfigTopic, Properties, TargetState};
use crate::history::{config_diff, Change, ChangeKind, Chronicle};
use crate::persistent::PMap;
use crate::Record;

/// What a config record's key touches, before the record.
pub enum ConfigBefore {
    /// A connector config record: the connector's config.
    Connector(String, Option<Properties>),
    /// A commit record: the connector's applied task configs and whether it was inconsistent.
    Commit {
        /// The connector.
        connector: String,
        /// Its applied task configs.
        tasks: Option<PMap<i32, Properties>>,
        /// Whether it was inconsistent.
        inconsistent: bool,
    },
    /// A target-state record: the connector's target state.
    TargetState(String, Option<TargetState>),
    /// A task-count record's connector.
    TasksFencing(String),
    /// Anything else (told from its events, or not at all).
    Other,
}

impl Chronicle for ConfigTopic {
    type Before = ConfigBefore;

    fn before(&self, record: &Record<'_>) -> ConfigBefore {
        let Some(key) = record.key else {
            return ConfigBefore::Other;
        };
        let key = keys::key_string(key);
        let t = &self.tables;
        match keys::dispatch(&key) {
            ConfigKey::Connector(c) => {
                ConfigBefore::Connector(c.into(), t.connector_configs.get(c).cloned())
            }
            ConfigKey::Commit(c) => ConfigBefore::Commit {
                connector: c.into(),
                tasks: t.task_configs.get(c).cloned(),
                inconsistent: t.inconsistent.contains(c),
            },
            ConfigKey::TargetState(c) => {
                ConfigBefore::TargetState(c.into(), t.target_states.get(c).copied())
            }
            ConfigKey::TasksFencing(c) => ConfigBefore::TasksFencing(c.into()),
            _ => ConfigBefore::Other,
        }
    }

    fn changes(
        &self,
        _record: &Record<'_>,
        before: ConfigBefore,
        events: Vec<ConfigEvent>,
        applied: bool,
        out: &mut Vec<Change>,
    ) {
        if !applied {
            return;
        }
        let t = &self.tables;
        let change = |connector: &str, kind| Change {
            connector: Some(connector.into()),
            kind,
        };
        match before {
            ConfigBefore::Connector(c, old) => {
                let new = t.connector_configs.get(c.as_str());
                let kind = match (old, new) {
                    (None, Some(config)) => ChangeKind::ConnectorCreated {
                        config: config.clone(),
                    },
                    (Some(old), Some(new)) => ChangeKind::ConnectorConfigChanged {
                        diff: config_diff(&old, new),
                    },
                    (Some(_), None) => ChangeKind::ConnectorDeleted,
                    (None, None) => return,
                };
                out.push(change(&c, kind));
            }
            ConfigBefore::Commit {
                connector: c,
                tasks: old,
                inconsistent: was_inconsistent,
            } => {
                if t.inconsistent.contains(c.as_str()) {
                    if !was_inconsistent {
                        if let Some(found) = self.inconsistencies.get(c.as_str()) {
                            out.push(change(&c, ChangeKind::BecameInconsistent(found.clone())));
                        }
                    }
                    return;
                }
                let empty = PMap::new();
                let old = old.as_ref().unwrap_or(&empty);
                let new = t.task_configs.get(c.as_str()).unwrap_or(&empty);
                let changed = new
                    .iter()
                    .filter(|(task, config)| old.get(*task) != Some(config))
                    .map(|(task, _)| *task)
                    .collect();
                out.push(change(
                    &c,
                    ChangeKind::TasksCommitted {
                        generation: t.generations.get(c.as_str()).copied(),
                        tasks: t
                            .connector_task_counts
                            .get(c.as_str())
                            .copied()
                            .unwrap_or(0),
                        changed,
                    },
                ));
                if was_inconsistent {
                    out.push(change(&c, ChangeKind::BecameConsistent));
                }
            }
            ConfigBefore::TargetState(c, from) => {
                let to = t.target_states.get(c.as_str()).copied();
                if from != to {
                    out.push(change(&c, ChangeKind::TargetStateChanged { from, to }));
                }
            }
            ConfigBefore::TasksFencing(c) => {
                if let Some(tasks) = t.task_count_records.get(c.as_str()).copied() {
                    out.push(change(&c, ChangeKind::TaskCountRecord { tasks }));
                }
            }
            ConfigBefore::Other => {
                out.extend(events.into_iter().filter_map(|event| match event {
                    ConfigEvent::RestartRequested {
                        connector,
                        only_failed,
                        include_tasks,
                    } => Some(Change {
                        connector: Some(connector),
                        kind: ChangeKind::RestartRequested {
                            only_failed,
                            include_tasks,
                        },
                    }),
                    ConfigEvent::SessionKeyUpdated { key } => Some(Change {
                        connector: None,
                        kind: ChangeKind::SessionKeyRotated {
                            creation_timestamp: key.creation_timestamp,
                            algorithm: key.algorithm,
                        },
                    }),
                    ConfigEvent::LoggerLevelUpdated { namespace, level } => Some(Change {
                        connector: None,
                        kind: ChangeKind::LoggerLevelSet { namespace, level },
                    }),
                    _ => None,
                }));
            }
        }
    }
}
