//! History: what each record changed, told by the same machines that replay the topics.
//!
//! [`History`] wraps a [`TopicLog`] and, for every record, reports the [`Change`]s it made:
//! it looks at the state the record's key touches just before the record is applied and just
//! after, and names the difference (a connector created, a config changed with its diff, tasks
//! committed, a connector becoming inconsistent, a task's status going from RUNNING to FAILED,
//! an offset written). Nothing is parsed or folded a second time: the topic's own key dispatch
//! finds what the key touches and its own `apply` changes the state, so a history's final
//! state is exactly what `replay` computes (the wrapped log is the replay).
//!
//! Only changes of state are reported (a status record that repeats the current status, or a
//! commit that leaves an already inconsistent connector inconsistent, adds no entry), except
//! for the records that are requests rather than state: restarts, session keys, logger levels
//! and task-count records each add an entry. Offsets records are reported one per record
//! ([`ChangeKind::OffsetWritten`], [`ChangeKind::OffsetRemoved`]); grouping them into runs is
//! for the reader of the history.

use alloc::collections::VecDeque;
use alloc::string::String;
use alloc::vec::Vec;

use crate::checkpoint::CheckpointError;
use crate::config::{Inconsistency, Properties, TargetState};
use crate::json::JsonValue;
use crate::machine::{Restore, Topic, TopicLog, TopicMachine};
use crate::status::Status;
use crate::sync::Arc;
use crate::{Record, RecordError, RecordOutcome};

/// One change a record made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// The connector it concerns (`None` for cluster-wide records: session keys, logger
    /// levels, and offsets keys that name no connector).
    pub connector: Option<String>,
    /// What changed.
    pub kind: ChangeKind,
}

/// What a record changed. [`name`](Self::name) gives the JSON `kind` of each.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ChangeKind {
    /// A connector config record for a connector without one.
    ConnectorCreated {
        /// Its config.
        config: Properties,
    },
    /// A connector config record replacing the connector's config (an empty diff: the same
    /// config written again, which Java still treats as an update).
    ConnectorConfigChanged {
        /// The properties added, removed or changed, by name.
        diff: Vec<PropertyChange>,
    },
    /// A connector tombstone removed the connector's config.
    ConnectorDeleted,
    /// A commit record applied the connector's buffered task configs.
    TasksCommitted {
        /// The connector's task config generation after the commit (`None`: the commit had
        /// no buffered task configs, so Java did not count a generation).
        generation: Option<i32>,
        /// The task count the commit announced.
        tasks: i32,
        /// The task ids whose applied config is new or differs from the previous applied set.
        changed: Vec<i32>,
    },
    /// A commit record found the task set incomplete: the connector is inconsistent (as the
    /// config snapshot and `doctor` explain it).
    BecameInconsistent(Inconsistency),
    /// A commit record made an inconsistent connector consistent again.
    BecameConsistent,
    /// The connector's target state changed.
    TargetStateChanged {
        /// The state before (`None`: the connector had none).
        from: Option<TargetState>,
        /// The state after (`None`: removed with the connector).
        to: Option<TargetState>,
    },
    /// A restart request record.
    RestartRequested {
        /// Restart only failed instances.
        only_failed: bool,
        /// Restart the tasks too.
        include_tasks: bool,
    },
    /// A task-count record (KIP-618 fencing).
    TaskCountRecord {
        /// The task count recorded.
        tasks: i32,
    },
    /// A new session key (its bytes are never part of a change).
    SessionKeyRotated {
        /// Its creation time, ms since the epoch.
        creation_timestamp: i64,
        /// Its MAC algorithm.
        algorithm: String,
    },
    /// A cluster-wide logger level record.
    LoggerLevelSet {
        /// The logger namespace.
        namespace: String,
        /// The level.
        level: String,
    },
    /// The connector's status changed.
    ConnectorStatusChanged {
        /// The status before (`None`: none).
        from: Option<Arc<Status>>,
        /// The status after (`None`: removed by a tombstone).
        to: Option<Arc<Status>>,
    },
    /// A task's status changed.
    TaskStatusChanged {
        /// The task id.
        task: i32,
        /// The status before (`None`: none).
        from: Option<Arc<Status>>,
        /// The status after (`None`: removed by a tombstone).
        to: Option<Arc<Status>>,
    },
    /// A topic became active for the connector (KIP-558).
    TopicActivated {
        /// The topic.
        topic: String,
        /// The task that reported it.
        task: i32,
    },
    /// A topic stopped being active for the connector (a tombstone: KIP-558's reset).
    TopicReset {
        /// The topic.
        topic: String,
    },
    /// An offsets record stored a source offset (the record's key and value say which).
    OffsetWritten {
        /// The key held no offset before.
        new_key: bool,
    },
    /// An offsets tombstone removed a source offset.
    OffsetRemoved {
        /// The key held an offset before (a tombstone of an absent key removes nothing).
        was_live: bool,
    },
}

impl ChangeKind {
    /// The JSON `kind` (offsets records are grouped into runs by the reader, whose entries
    /// are `offsets_committed` and `offsets_reset`).
    pub fn name(&self) -> &'static str {
        match self {
            Self::ConnectorCreated { .. } => "connector_created",
            Self::ConnectorConfigChanged { .. } => "connector_config_changed",
            Self::ConnectorDeleted => "connector_deleted",
            Self::TasksCommitted { .. } => "tasks_committed",
            Self::BecameInconsistent(_) => "became_inconsistent",
            Self::BecameConsistent => "became_consistent",
            Self::TargetStateChanged { .. } => "target_state_changed",
            Self::RestartRequested { .. } => "restart_requested",
            Self::TaskCountRecord { .. } => "task_count_record",
            Self::SessionKeyRotated { .. } => "session_key_rotated",
            Self::LoggerLevelSet { .. } => "logger_level_set",
            Self::ConnectorStatusChanged { .. } => "connector_status_changed",
            Self::TaskStatusChanged { .. } => "task_status_changed",
            Self::TopicActivated { .. } => "topic_activated",
            Self::TopicReset { .. } => "topic_reset",
            Self::OffsetWritten { .. } => "offsets_committed",
            Self::OffsetRemoved { .. } => "offsets_reset",
        }
    }
}

/// One property of a config diff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PropertyChange {
    /// The property name.
    pub name: String,
    /// Its value before (`None`: added).
    pub before: Option<JsonValue>,
    /// Its value after (`None`: removed).
    pub after: Option<JsonValue>,
}

/// The properties added, removed or changed from `before` to `after`: removed and changed
/// ones in `before`'s order, then the added ones in `after`'s order.
pub fn config_diff(before: &Properties, after: &Properties) -> Vec<PropertyChange> {
    let mut diff: Vec<PropertyChange> = before
        .iter()
        .filter_map(|(name, old)| {
            let new = after.get(name);
            (new != Some(old)).then(|| PropertyChange {
                name: name.into(),
                before: Some(old.to_json_value()),
                after: new.map(|v| v.to_json_value()),
            })
        })
        .collect();
    diff.extend(
        after
            .iter()
            .filter(|(name, _)| !before.contains_key(name))
            .map(|(name, new)| PropertyChange {
                name: name.into(),
                before: None,
                after: Some(new.to_json_value()),
            }),
    );
    diff
}

/// A topic whose records can be told as changes: what the key of a record touches before it
/// is applied ([`before`](Self::before)), and what changed once it was
/// ([`changes`](Self::changes)).
pub trait Chronicle: Topic {
    /// What [`before`](Self::before) keeps of the state (cheap: shared values, no deep copy).
    type Before;

    /// Whether a [`Told`] keeps the record's key and value (for readers that group records
    /// by them).
    const KEEPS_BYTES: bool = false;

    /// The part of the state `record`'s key touches, before the record is applied.
    fn before(&self, record: &Record<'_>) -> Self::Before;

    /// Appends to `out` what applying `record` changed, given what it touched before, the
    /// events the apply queued (a history is always caught up) and whether it was applied.
    fn changes(
        &self,
        record: &Record<'_>,
        before: Self::Before,
        events: Vec<Self::Event>,
        applied: bool,
        out: &mut Vec<Change>,
    );
}

/// A topic's state machine that also says what each record changed. See the
/// [module docs](self).
///
/// Drive it as any [`TopicMachine`]: its events are [`Told`], one per record it tells, with
/// what the record changed. A history made with [`new`](Self::new) tells every record from
/// the first (the `history` command, a server's recent history); one made with
/// [`starting`](Self::starting) tells nothing until [`mark_caught_up`](TopicMachine::mark_caught_up),
/// as a starting worker calls no listener while it replays.
pub struct History<T: Chronicle> {
    /// Always caught up: the events of its apply step are what the changes are told from.
    log: TopicLog<T>,
    told: VecDeque<Told>,
    /// Whether records are told (from the start, or since the catch-up).
    telling: bool,
}

/// A record's key and value bytes (`None`: no key; a tombstone).
pub type KeyValue = (Option<Vec<u8>>, Option<Vec<u8>>);

/// One record as a [`History`] driven as a [`TopicMachine`] tells it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Told {
    /// The record's partition.
    pub partition: i32,
    /// Its offset.
    pub offset: i64,
    /// Its timestamp, when known.
    pub timestamp: Option<i64>,
    /// Its key and value, kept only for the topics whose readers group records by them (the
    /// offsets topic: runs of commits); `None` otherwise.
    pub bytes: Option<KeyValue>,
    /// What it changed; `None` when it was skipped (as Java skips it) or a redelivery.
    pub changes: Option<Vec<Change>>,
}

impl Told {
    /// The record (without key and value when they were not kept).
    pub fn record(&self) -> Record<'_> {
        let (key, value) = match &self.bytes {
            Some((key, value)) => (key.as_deref(), value.as_deref()),
            None => (None, None),
        };
        Record {
            key,
            value,
            offset: self.offset,
            partition: self.partition,
            timestamp: self.timestamp,
        }
    }
}

impl<T: Chronicle> Default for History<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Chronicle> History<T> {
    /// A history at the start of the topic that tells every record from the first.
    pub fn new() -> Self {
        let mut log = TopicLog::new();
        // Telling from the first record takes the log's events; its state stays in a form
        // for loading that answers about keys record by record (the offsets topic's
        // hash-indexed list, not its journal) until the read is caught up.
        log.report_while_loading();
        Self {
            log,
            told: VecDeque::new(),
            telling: true,
        }
    }

    /// A history at the start of the topic that tells nothing until
    /// [`mark_caught_up`](TopicMachine::mark_caught_up): the records before only build the
    /// state, as a starting worker's replay does (and without the cost of telling them).
    pub fn starting() -> Self {
        Self {
            telling: false,
            ..Self::new()
        }
    }

    /// A history going on from `log`'s state (a restored checkpoint), telling every record.
    pub fn from_log(mut log: TopicLog<T>) -> Self {
        log.mark_caught_up();
        Self {
            log,
            told: VecDeque::new(),
            telling: true,
        }
    }

    /// The wrapped log: the state after the records handled so far.
    pub fn log(&self) -> &TopicLog<T> {
        &self.log
    }

    /// The wrapped log.
    pub fn into_log(self) -> TopicLog<T> {
        self.log
    }
}

impl<T: Chronicle> TopicMachine for History<T> {
    type Event = Told;
    type Skip = T::Skip;
    type Snapshot = T::Snapshot;
    type Diagnostics = T::Diagnostics;

    /// Applies one record as [`TopicLog::handle_record`] does and, once telling, queues its
    /// [`Told`] (with no changes for a skipped or redelivered record). On `Err` nothing
    /// changed and nothing is told.
    fn handle_record(&mut self, record: Record<'_>) -> Result<RecordOutcome<T::Skip>, RecordError> {
        if !self.telling {
            let outcome = self.log.handle_record(record)?;
            while self.log.poll_event().is_some() {}
            return Ok(outcome);
        }
        let before = self.log.topic.before(&record);
        let outcome = self.log.handle_record(record)?;
        let events: Vec<T::Event> = core::iter::from_fn(|| self.log.poll_event()).collect();
        let mut changes = Vec::new();
        let applied = outcome.is_applied();
        self.log
            .topic
            .changes(&record, before, events, applied, &mut changes);
        let bytes = T::KEEPS_BYTES.then(|| {
            (
                record.key.map(<[u8]>::to_vec),
                record.value.map(<[u8]>::to_vec),
            )
        });
        self.told.push_back(Told {
            partition: record.partition,
            offset: record.offset,
            timestamp: record.timestamp,
            bytes,
            changes: applied.then_some(changes),
        });
        Ok(outcome)
    }
    /// From now on every record is told (a history made with [`History::new`] tells from
    /// the first already), and the state leaves its form for loading.
    fn mark_caught_up(&mut self) {
        self.telling = true;
        self.log.mark_caught_up();
    }
    fn is_caught_up(&self) -> bool {
        self.telling
    }
    fn poll_event(&mut self) -> Option<Told> {
        self.told.pop_front()
    }
    fn snapshot(&self) -> T::Snapshot {
        self.log.snapshot()
    }
    fn next_fetch_offset(&self, partition: i32) -> i64 {
        self.log.next_fetch_offset(partition)
    }
    fn diagnostics(&self) -> T::Diagnostics {
        self.log.diagnostics()
    }
    fn checkpoint(&self) -> Vec<u8> {
        self.log.checkpoint()
    }
}

impl<T: Chronicle> Restore for History<T> {
    /// A restored history tells every record read after the checkpoint.
    fn restore(bytes: &[u8]) -> Result<Self, CheckpointError> {
        TopicLog::restore(bytes).map(Self::from_log)
    }
}

#[cfg(test)]
mod tests {
    use alloc::string::ToString;
    use alloc::vec;

    use super::*;
    use crate::config::{write, ConfigTopic};
    use crate::offsets::OffsetTopic;
    use crate::status::StatusTopic;

    /// The changes the one record just handled told.
    fn told_changes<T: Chronicle>(history: &mut History<T>) -> Vec<Change> {
        let told = history.poll_event().expect("one told record");
        assert!(history.poll_event().is_none());
        told.changes.unwrap_or_default()
    }

    /// Every record of `records` (key, value) through a history from offset 0; each record's
    /// change kinds.
    fn told<T: Chronicle>(records: &[(String, Option<String>)]) -> Vec<Vec<&'static str>> {
        let mut history = History::<T>::new();
        records
            .iter()
            .enumerate()
            .map(|(offset, (key, value))| {
                let record = Record::new(
                    key.as_bytes(),
                    value.as_deref().map(str::as_bytes),
                    offset as i64,
                );
                history.handle_record(record).unwrap();
                told_changes(&mut history)
                    .iter()
                    .map(|c| c.kind.name())
                    .collect()
            })
            .collect()
    }

    fn plan_records(plan: crate::plan::WritePlan) -> Vec<(String, Option<String>)> {
        plan.records()
            .map(|r| {
                let text = |b: &[u8]| String::from_utf8(b.to_vec()).unwrap();
                (text(&r.key), r.value.as_deref().map(text))
            })
            .collect()
    }

    #[test]
    fn config_records_tell_their_kinds() {
        let mut records = plan_records(write::put_connector_config(
            "c",
            [("tasks.max", Some("1"))],
            None,
        ));
        records.extend(plan_records(write::put_task_configs(
            "c",
            [[("k", Some("v"))]],
        )));
        records.extend(plan_records(write::put_target_state(
            "c",
            TargetState::Paused,
        )));
        records.extend(plan_records(write::put_restart_request("c", true, false)));
        records.extend(plan_records(write::put_task_count_record("c", 1)));
        records.extend(plan_records(
            write::put_session_key(b"k3y", "HmacSHA256", 7).unwrap(),
        ));
        records.extend(plan_records(write::put_logger_level("org.apache", "DEBUG")));
        records.extend(plan_records(write::put_connector_config(
            "c",
            [("tasks.max", Some("2"))],
            None,
        )));
        records.extend(plan_records(write::remove_connector_config("c")));
        records.push(("unknown-key".to_string(), Some("{}".to_string())));
        let told: Vec<&str> = told::<ConfigTopic>(&records).concat();
        assert_eq!(
            told,
            [
                "connector_created",
                "tasks_committed",
                "target_state_changed",
                "restart_requested",
                "task_count_record",
                "session_key_rotated",
                "logger_level_set",
                "connector_config_changed",
                "connector_deleted",
                "target_state_changed",
            ]
        );
    }

    #[test]
    fn a_config_diff_lists_added_removed_and_changed_properties() {
        let config = |props: &str| {
            let mut log = crate::config::ConfigLog::new();
            let value = alloc::format!(r#"{{"properties":{props}}}"#);
            log.handle_record(Record::new(b"connector-x", Some(value.as_bytes()), 0))
                .unwrap();
            log.snapshot().connector_config("x").unwrap().clone()
        };
        let diff = config_diff(
            &config(r#"{"a":"1","b":"2","d":"5"}"#),
            &config(r#"{"b":"3","c":"4","d":"5"}"#),
        );
        let names: Vec<(&str, bool, bool)> = diff
            .iter()
            .map(|d| (d.name.as_str(), d.before.is_some(), d.after.is_some()))
            .collect();
        assert_eq!(
            names,
            [("a", true, false), ("b", true, true), ("c", false, true)]
        );
    }

    #[test]
    fn status_records_tell_changes_only() {
        let running = r#"{"state":"RUNNING","trace":null,"worker_id":"w","generation":1}"#;
        let topic = r#"{"topic":{"name":"t","connector":"c","task":0,"discoverTimestamp":1}}"#;
        let record = |k: &str, v: Option<&str>| (k.to_string(), v.map(str::to_string));
        let told = told::<StatusTopic>(&[
            record("status-connector-c", Some(running)),
            record("status-connector-c", Some(running)),
            record("status-task-c-0", Some(running)),
            record("status-topic-t:connector-c", Some(topic)),
            record("status-topic-t:connector-c", Some(topic)),
            record("status-topic-t:connector-c", None),
            record("status-task-c-0", None),
        ]);
        assert_eq!(
            told,
            [
                vec!["connector_status_changed"],
                vec![],
                vec!["task_status_changed"],
                vec!["topic_activated"],
                vec![],
                vec!["topic_reset"],
                vec!["task_status_changed"],
            ]
        );
    }

    #[test]
    fn offsets_records_name_their_connector() {
        let mut history = History::<OffsetTopic>::new();
        let key = br#"["src",{"file":"a"}]"#;
        history
            .handle_record(Record::new(key, Some(br#"{"pos":1}"#), 0))
            .unwrap();
        let changes = told_changes(&mut history);
        assert_eq!(changes[0].connector.as_deref(), Some("src"));
        assert_eq!(changes[0].kind.name(), "offsets_committed");
        history
            .handle_record(Record::new(b"junk", None, 1))
            .unwrap();
        let changes = told_changes(&mut history);
        assert_eq!(changes[0].connector, None);
        assert_eq!(changes[0].kind.name(), "offsets_reset");
        // A redelivery changes nothing and tells nothing.
        history
            .handle_record(Record::new(key, Some(br#"{"pos":9}"#), 0))
            .unwrap();
        assert!(told_changes(&mut history).is_empty());
    }

    /// A history from the topic's start tells the same while its offsets state is loading
    /// (until its catch-up) as one over the shared form from the first record, and both end in
    /// the same state.
    #[test]
    fn an_offsets_history_tells_alike_while_loading_and_shared() {
        let mut loading = History::<OffsetTopic>::new();
        let mut shared = History::from_log(TopicLog::<OffsetTopic>::new());
        let records: [(&[u8], Option<&[u8]>); 7] = [
            (br#"["src",{"file":"a"}]"#, Some(br#"{"pos":1}"#)),
            // The same partition, its members spelled in another order: not tracked again.
            (br#"["src",{"file":"a","n":1}]"#, Some(br#"{"pos":2}"#)),
            (br#"["src",{"n":1,"file":"a"}]"#, Some(br#"{"pos":3}"#)),
            (br#"["src",{"file":"a","n":1}]"#, None),
            (br#"["src",{"n":1,"file":"a"}]"#, Some(br#"{"pos":4}"#)),
            (b"junk", Some(b"x")),
            (br#"["src",{"file":"a"}]"#, None),
        ];
        for (offset, (key, value)) in records.into_iter().enumerate() {
            for history in [&mut loading, &mut shared] {
                history
                    .handle_record(Record::new(key, value, offset as i64))
                    .unwrap();
            }
            let kinds =
                |history: &mut History<OffsetTopic>| -> Vec<(&'static str, Option<String>)> {
                    told_changes(history)
                        .iter()
                        .map(|c| (c.kind.name(), c.connector.clone()))
                        .collect()
                };
            assert_eq!(kinds(&mut loading), kinds(&mut shared), "record {offset}");
        }
        assert!(loading.log().topic.is_loading() && !shared.log().topic.is_loading());
        assert_eq!(loading.snapshot(), shared.snapshot());
        assert_eq!(loading.log().topic, shared.log().topic);
        loading.mark_caught_up();
        assert!(!loading.log().topic.is_loading());
        assert_eq!(loading.checkpoint(), shared.checkpoint());
    }

    #[test]
    fn a_history_restores_its_own_topics_checkpoints_only() {
        let mut status = History::<StatusTopic>::new();
        let running = br#"{"state":"RUNNING","trace":null,"worker_id":"w","generation":1}"#;
        status
            .handle_record(Record::new(b"status-connector-c", Some(running), 0))
            .unwrap();
        let checkpoint = status.checkpoint();
        let restored = History::<StatusTopic>::restore(&checkpoint).unwrap();
        assert_eq!(restored.snapshot(), status.snapshot());
        assert!(
            restored.is_caught_up(),
            "a restored history tells what it reads next"
        );
        assert!(History::<ConfigTopic>::restore(&checkpoint).is_err());
        assert!(History::<OffsetTopic>::restore(&checkpoint).is_err());
    }

    #[test]
    fn a_starting_history_tells_only_the_records_after_its_catch_up() {
        let mut history = History::<OffsetTopic>::starting();
        let key = br#"["src",{"file":"a"}]"#;
        history
            .handle_record(Record::new(key, Some(br#"{"pos":1}"#), 0))
            .unwrap();
        assert!(!history.is_caught_up() && history.poll_event().is_none());
        history.mark_caught_up();
        history
            .handle_record(Record::new(key, Some(br#"{"pos":2}"#), 1))
            .unwrap();
        let changes = told_changes(&mut history);
        assert_eq!(changes.len(), 1);
        // The state is the same as a history's that told both.
        let mut telling = History::<OffsetTopic>::new();
        for (offset, pos) in [(0, b"{\"pos\":1}"), (1, b"{\"pos\":2}")] {
            telling
                .handle_record(Record::new(key, Some(pos), offset))
                .unwrap();
        }
        assert_eq!(history.snapshot(), telling.snapshot());
    }
}
