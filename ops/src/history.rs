//! A cluster's history: the three topics' records merged into one chronological list of
//! changes, told by [`engine::history::History`] (the same machines `replay` runs).
//!
//! [`tell`] pulls records from one stream per topic (or per partition), always taking the
//! stream whose next record is the oldest (by timestamp; a record without one is taken
//! first, so dumps without timestamps are told topic by topic, each in its own order; ties go
//! to the config topic, then status, then offsets). Each change becomes an [`Entry`] handed to
//! the caller's sink as soon as it is known, so memory is bounded by the state, not by the
//! number of changes:
//!
//! * offsets records are grouped per connector into runs (`offsets_committed`,
//!   `offsets_reset`): a run ends at the connector's next entry of any other kind, or at the
//!   end, and its entry stands where it ends, giving its first record's position too;
//! * config values whose names look secret ([`connect_state_store::is_secret`]) are masked
//!   unless [`Options::show_secrets`];
//! * gaps in a partition's offsets are noted ([`Compacted`]): before the last gap, the log no
//!   longer holds every record (the cleaner kept only the latest record of each key; on a
//!   transactional topic, transaction markers leave gaps too).

use std::collections::{BTreeMap, BTreeSet};

use engine::config::{Inconsistency, Properties, TargetState, MAX_LISTED_MISSING};
use engine::history::{Change, ChangeKind, Chronicle, History, PropertyChange};
use engine::json::{JsonValue, Natural};
use engine::status::Status;
use engine::{Record, TopicKind, TopicMachine};
use serde_json::{json, Map, Value};

use crate::cut::Point;
use crate::kcat::DumpRecord;

/// Records of one topic in the order they are to be applied (offset order per partition).
pub type RecordStream<'a> = Box<dyn Iterator<Item = Result<DumpRecord, String>> + 'a>;

/// What [`tell`] lists.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Only entries of these connectors (empty: every entry, cluster-wide ones too).
    pub connectors: BTreeSet<String>,
    /// Only records at or after this point (an offset: in each record's own partition; the
    /// state before it is still folded).
    pub since: Option<Point>,
    /// Only records at or before this point.
    pub until: Option<Point>,
    /// Show config values whose names look secret.
    pub show_secrets: bool,
}

/// Where in the log an entry stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Position {
    /// The topic.
    pub topic: TopicKind,
    /// The partition.
    pub partition: i32,
    /// The offset.
    pub offset: i64,
    /// The record timestamp (ms since the epoch), when known.
    pub timestamp: Option<i64>,
}

/// One entry of a history.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// The record that made the change (for an offsets run: its last record).
    pub position: Position,
    /// The connector (`None`: cluster-wide).
    pub connector: Option<String>,
    /// The JSON `kind`.
    pub kind: &'static str,
    /// The kind's members, secrets masked (see the README's history contract).
    pub details: Map<String, Value>,
}

impl Entry {
    /// The entry as its JSON object: position, connector, kind, then the details.
    pub fn to_json(&self) -> Value {
        let mut object = Map::new();
        object.insert("topic".into(), json!(self.position.topic.name()));
        object.insert("partition".into(), json!(self.position.partition));
        object.insert("offset".into(), json!(self.position.offset));
        object.insert("timestamp".into(), json!(self.position.timestamp));
        object.insert("connector".into(), json!(self.connector));
        object.insert("kind".into(), json!(self.kind));
        object.extend(self.details.clone());
        Value::Object(object)
    }
}

/// A partition whose history is incomplete before an offset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Compacted {
    /// The topic.
    pub topic: TopicKind,
    /// The partition.
    pub partition: i32,
    /// The first offset after the last gap: the log is complete from here on.
    pub before_offset: i64,
    /// How many gaps were seen.
    pub gaps: u64,
}

impl Compacted {
    /// The notice for people.
    pub fn notice(&self) -> String {
        format!(
            "history before offset {} of topic {} (partition {}) is compacted: only the latest \
             record of each key survives",
            self.before_offset,
            self.topic.name(),
            self.partition
        )
    }

    /// The notice as its JSON object.
    pub fn to_json(&self) -> Value {
        json!({
            "topic": self.topic.name(),
            "partition": self.partition,
            "before_offset": self.before_offset,
            "gaps": self.gaps,
            "notice": self.notice(),
        })
    }
}

/// What a history read, besides its entries.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    /// Records read.
    pub records: u64,
    /// Records the machines skipped (as Java skips them).
    pub skipped: u64,
    /// Entries handed to the sink.
    pub entries: u64,
    /// Partitions with gaps, by topic and partition.
    pub compacted: Vec<Compacted>,
}

/// Why a history could not be told.
#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    /// A stream could not be read, or a record is unusable.
    #[error("{0}")]
    Input(String),
    /// The sink refused an entry.
    #[error("could not write output: {0}")]
    Output(#[from] std::io::Error),
}

/// Where entries go as they are known.
pub type Sink<'s> = dyn FnMut(Entry) -> std::io::Result<()> + 's;

/// Tells the history of `streams` (each tagged with its topic; one or more per topic, a
/// partition's records all in one stream), handing each entry to `sink` as soon as it is
/// known. Streams of one topic are applied to one machine.
pub fn tell(
    streams: Vec<(TopicKind, RecordStream<'_>)>,
    options: &Options,
    sink: &mut Sink<'_>,
) -> Result<Summary, HistoryError> {
    let mut teller = Teller::new(options.clone());
    let mut heads: Vec<(TopicKind, Option<DumpRecord>, RecordStream<'_>)> = Vec::new();
    for (topic, mut stream) in streams {
        let head = stream.next().transpose().map_err(HistoryError::Input)?;
        heads.push((topic, head, stream));
    }
    loop {
        // The oldest head: no timestamp first, then the earliest, ties by topic then stream.
        let next = heads
            .iter()
            .enumerate()
            .filter_map(|(i, (topic, head, _))| {
                head.as_ref()
                    .map(|r| ((r.timestamp.unwrap_or(i64::MIN), *topic, i), i))
            })
            .min()
            .map(|(_, i)| i);
        let Some(i) = next else { break };
        let (topic, head, stream) = &mut heads[i];
        let record = head.take().expect("the chosen head holds a record");
        *head = stream.next().transpose().map_err(HistoryError::Input)?;
        teller.tell(*topic, record.as_record(), sink)?;
    }
    teller.finish(sink)
}

/// The three topics' history machines and a [`Narrator`]: what [`tell`] runs, for a caller
/// that reads the topics and merges them itself (a runtime embedding the core with its own
/// Kafka client).
pub struct Teller {
    config: History<engine::config::ConfigTopic>,
    status: History<engine::status::StatusTopic>,
    offsets: History<engine::offsets::OffsetTopic>,
    narrator: Narrator,
}

impl Teller {
    /// A teller at the start of the three topics, listing what `options` selects.
    pub fn new(options: Options) -> Self {
        Self {
            config: History::new(),
            status: History::new(),
            offsets: History::new(),
            narrator: Narrator::new(options),
        }
    }

    /// Applies one record of `topic` (records of a partition in offset order) and hands the
    /// entries it completes to `sink`; an offsets record joins its connector's run instead.
    /// Fails for a record that cannot be a Kafka record.
    pub fn tell(
        &mut self,
        topic: TopicKind,
        record: Record<'_>,
        sink: &mut Sink<'_>,
    ) -> Result<(), HistoryError> {
        let changes = match topic {
            TopicKind::Config => handle(&mut self.config, record)?,
            TopicKind::Status => handle(&mut self.status, record)?,
            TopicKind::Offsets => handle(&mut self.offsets, record)?,
        };
        self.narrator.narrate(topic, &record, changes, sink)
    }

    /// What was read so far (see [`Narrator::summary`]).
    pub fn summary(&self) -> &Summary {
        self.narrator.summary()
    }

    /// Ends the telling (see [`Narrator::finish`]).
    pub fn finish(self, sink: &mut Sink<'_>) -> Result<Summary, HistoryError> {
        self.narrator.finish(sink)
    }
}

/// An offsets run being gathered.
#[derive(Debug, Clone)]
struct Run {
    reset: bool,
    records: u64,
    /// Hashes of the run's keys: a run holds 8 bytes per distinct partition, not its key.
    partitions: BTreeSet<u64>,
    first: Position,
    first_value: Option<Vec<u8>>,
    last: Position,
    last_value: Option<Vec<u8>>,
}

/// Turns the changes records made into entries: filters them, groups offsets records into
/// runs, notes the gaps of each partition. Whoever applies the records (a [`History`] per
/// topic) hands it each record with its changes, in the order they are to be told.
#[derive(Debug)]
pub struct Narrator {
    options: Options,
    runs: BTreeMap<Option<String>, Run>,
    gaps: BTreeMap<(TopicKind, i32), (i64, Compacted)>,
    summary: Summary,
}

impl Narrator {
    /// A narrator listing what `options` selects.
    pub fn new(options: Options) -> Self {
        Self {
            options,
            runs: BTreeMap::new(),
            gaps: BTreeMap::new(),
            summary: Summary::default(),
        }
    }

    /// Tells one record of `topic`: `changes` is what applying it changed (`None`: the machine
    /// skipped it). Entries that are complete go to `sink`; an offsets record joins its
    /// connector's run. Fails for a record without timestamp when a bound is a time.
    pub fn narrate(
        &mut self,
        topic: TopicKind,
        record: &Record<'_>,
        changes: Option<Vec<Change>>,
        sink: &mut Sink<'_>,
    ) -> Result<(), HistoryError> {
        self.summary.records += 1;
        self.note_gap(topic, record);
        let Some(changes) = changes else {
            self.summary.skipped += 1;
            return Ok(());
        };
        let timed = |b: &Option<Point>| matches!(b, Some(Point::Time(_)));
        if record.timestamp.is_none() && (timed(&self.options.since) || timed(&self.options.until))
        {
            return Err(HistoryError::Input(format!(
                "the {} record at offset {} (partition {}) has no timestamp, so it cannot be \
                 placed in time: bound the history by offset instead",
                topic.name(),
                record.offset,
                record.partition
            )));
        }
        if !self.within(record) {
            return Ok(());
        }
        let position = Position {
            topic,
            partition: record.partition,
            offset: record.offset,
            timestamp: record.timestamp,
        };
        for change in changes {
            if !self.wanted(change.connector.as_deref()) {
                continue;
            }
            match change.kind {
                ChangeKind::OffsetWritten { .. } => {
                    self.extend_run(change.connector, false, record, position, sink)?
                }
                ChangeKind::OffsetRemoved { .. } => {
                    self.extend_run(change.connector, true, record, position, sink)?
                }
                kind => {
                    self.close_run(&change.connector, sink)?;
                    let entry = Entry {
                        position,
                        kind: kind.name(),
                        details: details(&kind, self.options.show_secrets),
                        connector: change.connector,
                    };
                    self.emit(entry, sink)?;
                }
            }
        }
        Ok(())
    }

    /// The entries of the runs still open (each as it would be told if it ended now), in the
    /// order of their last records.
    pub fn open_runs(&self) -> Vec<Entry> {
        let mut open: Vec<(&Option<String>, &Run)> = self.runs.iter().collect();
        open.sort_by_key(|(_, run)| {
            (
                run.last.timestamp.unwrap_or(i64::MIN),
                run.last.partition,
                run.last.offset,
            )
        });
        open.into_iter()
            .map(|(connector, run)| run_entry(connector.clone(), run.clone()))
            .collect()
    }

    /// What was read so far (entries, records, skips; the compaction notices of
    /// [`finish`](Self::finish) are not gathered yet).
    pub fn summary(&self) -> &Summary {
        &self.summary
    }

    /// Ends the telling: the open runs go to `sink`, in the order of their last records; the
    /// summary lists the partitions with gaps.
    pub fn finish(mut self, sink: &mut Sink<'_>) -> Result<Summary, HistoryError> {
        for entry in self.open_runs() {
            self.emit(entry, sink)?;
        }
        self.runs.clear();
        self.summary.compacted = self.compacted();
        Ok(self.summary)
    }

    /// The partitions whose offsets had gaps so far.
    pub fn compacted(&self) -> Vec<Compacted> {
        self.gaps
            .values()
            .map(|(_, compacted)| compacted.clone())
            .filter(|compacted| compacted.gaps > 0)
            .collect()
    }

    fn within(&self, record: &Record<'_>) -> bool {
        let after = |bound: Point| match bound {
            Point::Offset(offset) => record.offset >= offset,
            Point::Time(time) => record.timestamp.is_some_and(|ts| ts >= time),
        };
        let before = |bound: Point| match bound {
            Point::Offset(offset) => record.offset <= offset,
            Point::Time(time) => record.timestamp.is_some_and(|ts| ts <= time),
        };
        self.options.since.is_none_or(after) && self.options.until.is_none_or(before)
    }

    fn wanted(&self, connector: Option<&str>) -> bool {
        self.options.connectors.is_empty()
            || connector.is_some_and(|c| self.options.connectors.contains(c))
    }

    fn note_gap(&mut self, topic: TopicKind, record: &Record<'_>) {
        let (next, compacted) = self
            .gaps
            .entry((topic, record.partition))
            .or_insert_with(|| {
                (
                    0,
                    Compacted {
                        topic,
                        partition: record.partition,
                        before_offset: 0,
                        gaps: 0,
                    },
                )
            });
        if record.offset > *next {
            compacted.gaps += 1;
            compacted.before_offset = record.offset;
        }
        *next = (*next).max(record.offset.saturating_add(1));
    }

    fn extend_run(
        &mut self,
        connector: Option<String>,
        reset: bool,
        record: &Record<'_>,
        position: Position,
        sink: &mut Sink<'_>,
    ) -> Result<(), HistoryError> {
        if self
            .runs
            .get(&connector)
            .is_some_and(|run| run.reset != reset)
        {
            self.close_run(&connector, sink)?;
        }
        let run = self.runs.entry(connector).or_insert_with(|| Run {
            reset,
            records: 0,
            partitions: BTreeSet::new(),
            first: position,
            first_value: record.value.map(<[u8]>::to_vec),
            last: position,
            last_value: None,
        });
        run.records += 1;
        run.partitions
            .insert(key_hash(record.key.unwrap_or_default()));
        run.last = position;
        // Reuses the buffer of the value before: no allocation per record of a run.
        match (&mut run.last_value, record.value) {
            (Some(last), Some(value)) => {
                last.clear();
                last.extend_from_slice(value);
            }
            (last, value) => *last = value.map(<[u8]>::to_vec),
        }
        Ok(())
    }

    fn close_run(
        &mut self,
        connector: &Option<String>,
        sink: &mut Sink<'_>,
    ) -> Result<(), HistoryError> {
        let Some(run) = self.runs.remove(connector) else {
            return Ok(());
        };
        let entry = run_entry(connector.clone(), run);
        self.emit(entry, sink)
    }

    fn emit(&mut self, entry: Entry, sink: &mut Sink<'_>) -> Result<(), HistoryError> {
        self.summary.entries += 1;
        sink(entry)?;
        Ok(())
    }
}

fn key_hash(key: &[u8]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    key.hash(&mut hasher);
    hasher.finish()
}

/// Applies one record; what it changed (`None` when the machine skipped it).
fn handle<T: Chronicle>(
    history: &mut History<T>,
    record: engine::Record<'_>,
) -> Result<Option<Vec<Change>>, HistoryError> {
    history
        .handle_record(record)
        .map_err(|e| HistoryError::Input(e.to_string()))?;
    Ok(history.poll_event().and_then(|told| told.changes))
}

fn run_entry(connector: Option<String>, run: Run) -> Entry {
    let text = |bytes: &Option<Vec<u8>>| -> Value {
        bytes.as_deref().map_or(Value::Null, |b| {
            serde_json::from_slice(b).unwrap_or_else(|_| json!(String::from_utf8_lossy(b)))
        })
    };
    let mut details = Map::new();
    details.insert("records".into(), json!(run.records));
    details.insert("partitions".into(), json!(run.partitions.len()));
    details.insert(
        "first_record".into(),
        json!({
            "partition": run.first.partition,
            "offset": run.first.offset,
            "timestamp": run.first.timestamp,
        }),
    );
    if !run.reset {
        details.insert("first_offset".into(), text(&run.first_value));
        details.insert("last_offset".into(), text(&run.last_value));
    }
    Entry {
        position: run.last,
        connector,
        kind: if run.reset {
            "offsets_reset"
        } else {
            "offsets_committed"
        },
        details,
    }
}

/// The masked form of a secret value.
pub const MASK: &str = "[hidden]";

fn property_value(name: &str, value: JsonValue, show_secrets: bool) -> Value {
    if !show_secrets && connect_state_store::is_secret(name) {
        return json!(MASK);
    }
    serde_json::to_value(Natural(&value)).unwrap_or(Value::Null)
}

/// A config as a JSON object, secrets masked unless `show_secrets`.
pub fn masked_config(config: &Properties, show_secrets: bool) -> Value {
    Value::Object(
        config
            .iter()
            .map(|(name, value)| {
                let shown = property_value(name, value.to_json_value(), show_secrets);
                (name.to_string(), shown)
            })
            .collect(),
    )
}

/// A config diff as JSON: `{"added": {..}, "removed": {..}, "changed": {name: {"from", "to"}}}`.
pub fn masked_diff(diff: &[PropertyChange], show_secrets: bool) -> Value {
    let (mut added, mut removed, mut changed) = (Map::new(), Map::new(), Map::new());
    for change in diff {
        let shown = |v: &Option<JsonValue>| {
            v.clone()
                .map(|v| property_value(&change.name, v, show_secrets))
        };
        match (shown(&change.before), shown(&change.after)) {
            (None, Some(new)) => {
                added.insert(change.name.clone(), new);
            }
            (Some(old), None) => {
                removed.insert(change.name.clone(), old);
            }
            (Some(old), Some(new)) => {
                changed.insert(change.name.clone(), json!({"from": old, "to": new}));
            }
            (None, None) => {}
        }
    }
    json!({"added": added, "removed": removed, "changed": changed})
}

fn status_json(status: &Option<std::sync::Arc<Status>>) -> Value {
    match status {
        None => Value::Null,
        Some(s) => json!({
            "state": s.state.as_str(),
            "worker_id": s.worker_id,
            "generation": s.generation,
            "trace": s.trace.as_deref().and_then(|t| t.lines().next()),
        }),
    }
}

fn target_json(state: Option<TargetState>) -> Value {
    json!(state.map(TargetState::as_str))
}

fn inconsistency_json(found: &Inconsistency) -> Value {
    json!({
        "commit_offset": found.commit_offset,
        "task_count": found.task_count,
        "missing_tasks": found.missing_tasks,
        "missing_count": found.missing_count,
        "missing_listed_at_most": MAX_LISTED_MISSING,
    })
}

fn details(kind: &ChangeKind, show_secrets: bool) -> Map<String, Value> {
    let value = match kind {
        ChangeKind::ConnectorCreated { config } => {
            json!({"config": masked_config(config, show_secrets)})
        }
        ChangeKind::ConnectorConfigChanged { diff } => {
            json!({"diff": masked_diff(diff, show_secrets)})
        }
        ChangeKind::TasksCommitted {
            generation,
            tasks,
            changed,
        } => json!({"generation": generation, "tasks": tasks, "changed_tasks": changed}),
        ChangeKind::BecameInconsistent(found) => inconsistency_json(found),
        ChangeKind::TargetStateChanged { from, to } => {
            json!({"from": target_json(*from), "to": target_json(*to)})
        }
        ChangeKind::RestartRequested {
            only_failed,
            include_tasks,
        } => json!({"only_failed": only_failed, "include_tasks": include_tasks}),
        ChangeKind::TaskCountRecord { tasks } => json!({"tasks": tasks}),
        ChangeKind::SessionKeyRotated {
            creation_timestamp,
            algorithm,
        } => json!({"creation_timestamp": creation_timestamp, "algorithm": algorithm}),
        ChangeKind::LoggerLevelSet { namespace, level } => {
            json!({"namespace": namespace, "level": level})
        }
        ChangeKind::ConnectorStatusChanged { from, to } => {
            json!({"from": status_json(from), "to": status_json(to)})
        }
        ChangeKind::TaskStatusChanged { task, from, to } => {
            json!({"task": task, "from": status_json(from), "to": status_json(to)})
        }
        ChangeKind::TopicActivated { topic, task } => json!({"topic": topic, "task": task}),
        ChangeKind::TopicReset { topic } => json!({"topic": topic}),
        _ => json!({}),
    };
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}
