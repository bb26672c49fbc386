//! The config topic's checkpoint form: every configuration once, however many tables hold it
//! (a connector's current and applied configs are one), and every set of names once (the task
//! configs of a connector share theirs); the tables refer to configurations by number.
//!
//! Decoding checks each set of names once and builds every configuration with the names it
//! shares, so a restored state holds its memory as a replayed one does.

use alloc::vec::Vec;

use serde::{Deserialize, Serialize};

use super::deferred::{Deferred, Deferreds};
use super::diagnostics::{Inconsistency, OrphanRecords};
use super::properties::{ConfigTable, ConfigTableRef, Properties};
use super::snapshot::Tables;
use super::types::{SessionKey, TargetState};
use super::ConfigTopic;
use crate::name::Name;
use crate::persistent::{PMap, PSet};
use crate::sync::Arc;

/// Connectors and their configurations' numbers.
type Refs<'a> = Vec<(&'a str, u32)>;
/// Connectors and their tasks' configurations' numbers.
type TaskRefs<'a> = Vec<(&'a str, Vec<(i32, u32)>)>;

/// The form written, borrowing the state.
#[derive(Serialize)]
struct WireRef<'a> {
    configs: ConfigTableRef<'a>,
    offset: i64,
    session_key: &'a Option<Arc<SessionKey>>,
    connector_configs: Refs<'a>,
    connector_task_counts: &'a PMap<Name, i32>,
    task_configs: TaskRefs<'a>,
    target_states: &'a PMap<Name, TargetState>,
    task_count_records: &'a PMap<Name, i32>,
    generations: &'a PMap<Name, i32>,
    applied_connector_configs: Refs<'a>,
    pending_fencing: &'a PSet<Name>,
    inconsistent: &'a PSet<Name>,
    deferred: TaskRefs<'a>,
    inconsistencies: &'a PMap<Name, Inconsistency>,
    orphans: &'a PMap<Name, OrphanRecords>,
}

/// The form read: [`WireRef`]'s fields in its order.
#[derive(Deserialize)]
struct Wire {
    configs: ConfigTable,
    offset: i64,
    session_key: Option<Arc<SessionKey>>,
    connector_configs: Vec<(Name, u32)>,
    connector_task_counts: PMap<Name, i32>,
    task_configs: Vec<(Name, Vec<(i32, u32)>)>,
    target_states: PMap<Name, TargetState>,
    task_count_records: PMap<Name, i32>,
    generations: PMap<Name, i32>,
    applied_connector_configs: Vec<(Name, u32)>,
    pending_fencing: PSet<Name>,
    inconsistent: PSet<Name>,
    deferred: Vec<(Name, Vec<(i32, u32)>)>,
    inconsistencies: PMap<Name, Inconsistency>,
    orphans: PMap<Name, OrphanRecords>,
}

impl Serialize for ConfigTopic {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let t = &self.tables;
        let mut configs = ConfigTableRef::default();
        let connector_configs = t
            .connector_configs
            .iter()
            .map(|(c, p)| (c.as_str(), configs.number(p)))
            .collect();
        let mut task_configs = Vec::with_capacity(t.task_configs.len());
        for (c, tasks) in t.task_configs.iter() {
            task_configs.push((c.as_str(), numbered(&mut configs, tasks.iter())));
        }
        let applied_connector_configs = t
            .applied_connector_configs
            .iter()
            .map(|(c, p)| (c.as_str(), configs.number(p)))
            .collect();
        let mut deferred = Vec::with_capacity(self.deferred.len());
        // In name order, as every other table (the map itself has none).
        let mut sorted: Vec<(&Name, &Deferred)> = self.deferred.iter().collect();
        sorted.sort_unstable_by(|a, b| a.0.cmp(b.0));
        for (c, buffered) in sorted {
            deferred.push((c.as_str(), numbered(&mut configs, buffered.tasks.iter())));
        }
        WireRef {
            configs,
            offset: t.offset,
            session_key: &t.session_key,
            connector_configs,
            connector_task_counts: &t.connector_task_counts,
            task_configs,
            target_states: &t.target_states,
            task_count_records: &t.task_count_records,
            generations: &t.generations,
            applied_connector_configs,
            pending_fencing: &t.pending_fencing,
            inconsistent: &t.inconsistent,
            deferred,
            inconsistencies: &self.inconsistencies,
            orphans: &self.orphans,
        }
        .serialize(serializer)
    }
}

/// A connector's tasks and their configurations' numbers.
fn numbered<'a>(
    configs: &mut ConfigTableRef<'a>,
    tasks: impl Iterator<Item = (&'a i32, &'a Properties)>,
) -> Vec<(i32, u32)> {
    tasks.map(|(t, p)| (*t, configs.number(p))).collect()
}

impl<'de> Deserialize<'de> for ConfigTopic {
    /// Refuses a configuration number beyond the table.
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let wire = Wire::deserialize(deserializer)?;
        let configs = wire.configs.into_configs();
        let config = |number: u32| -> Result<Properties, D::Error> {
            usize::try_from(number)
                .ok()
                .and_then(|n| configs.get(n))
                .cloned()
                .ok_or_else(|| serde::de::Error::custom("a configuration number beyond the table"))
        };
        let by_connector = |refs: Vec<(Name, u32)>| -> Result<PMap<Name, Properties>, D::Error> {
            refs.into_iter().map(|(c, n)| Ok((c, config(n)?))).collect()
        };
        let tasks = |refs: Vec<(i32, u32)>| -> Result<Vec<(i32, Properties)>, D::Error> {
            refs.into_iter().map(|(t, n)| Ok((t, config(n)?))).collect()
        };
        let mut task_configs = Vec::with_capacity(wire.task_configs.len());
        for (c, refs) in wire.task_configs {
            task_configs.push((c, tasks(refs)?.into_iter().collect::<PMap<_, _>>()));
        }
        let connector_configs = by_connector(wire.connector_configs)?;
        let mut deferred = Deferreds::default();
        for (c, refs) in wire.deferred {
            let buffered = Deferred {
                tasks: tasks(refs)?.into_iter().collect(),
                has_config: connector_configs.contains_key(c.as_str()),
            };
            deferred.insert(c, buffered);
        }
        Ok(Self {
            tables: Tables {
                offset: wire.offset,
                session_key: wire.session_key,
                connector_configs,
                connector_task_counts: wire.connector_task_counts,
                task_configs: task_configs.into_iter().collect(),
                target_states: wire.target_states,
                task_count_records: wire.task_count_records,
                generations: wire.generations,
                applied_connector_configs: by_connector(wire.applied_connector_configs)?,
                pending_fencing: wire.pending_fencing,
                inconsistent: wire.inconsistent,
            },
            deferred,
            inconsistencies: wire.inconsistencies,
            orphans: wire.orphans,
            shapes: Default::default(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Decodes a state whose tables refer to configurations `connector` and `applied` of a
    /// table of `properties`.
    fn decoded(
        properties: &[Properties],
        connector: u32,
        applied: u32,
    ) -> Result<ConfigTopic, bincode::error::DecodeError> {
        let mut configs = ConfigTableRef::default();
        for p in properties {
            configs.number(p);
        }
        let (empty_counts, empty_states, empty_set) = (PMap::new(), PMap::new(), PSet::new());
        let (inconsistencies, orphans) = (PMap::new(), PMap::new());
        let wire = WireRef {
            configs,
            offset: 3,
            session_key: &None,
            connector_configs: alloc::vec![("c", connector)],
            connector_task_counts: &empty_counts,
            task_configs: Vec::new(),
            target_states: &empty_states,
            task_count_records: &empty_counts,
            generations: &empty_counts,
            applied_connector_configs: alloc::vec![("c", applied)],
            pending_fencing: &empty_set,
            inconsistent: &empty_set,
            deferred: Vec::new(),
            inconsistencies: &inconsistencies,
            orphans: &orphans,
        };
        let bytes = bincode::serde::encode_to_vec(&wire, bincode::config::standard()).unwrap();
        bincode::serde::decode_from_slice(&bytes, bincode::config::standard()).map(|(t, _)| t)
    }

    #[test]
    fn tables_refer_to_configurations_by_number() {
        let first: Properties = [("k", crate::json::JsonValue::String("1".into()))]
            .into_iter()
            .collect();
        let second: Properties = [("k", crate::json::JsonValue::String("2".into()))]
            .into_iter()
            .collect();
        let both = [first.clone(), second.clone()];
        let topic = decoded(&both, 1, 0).unwrap();
        assert_eq!(topic.tables.offset, 3);
        assert_eq!(topic.tables.connector_configs.get("c"), Some(&second));
        assert_eq!(
            topic.tables.applied_connector_configs.get("c"),
            Some(&first)
        );
        // The two were built from one set of names, and share it again.
        let (current, applied) = (
            topic.tables.connector_configs.get("c").unwrap(),
            topic.tables.applied_connector_configs.get("c").unwrap(),
        );
        assert!(current.shares_names_with(applied));
        assert!(decoded(&both, 2, 0).is_err());
        assert!(decoded(&both, 0, u32::MAX).is_err());
        assert!(decoded(&[], 0, 0).is_err());
    }
}
