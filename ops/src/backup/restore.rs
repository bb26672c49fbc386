//! Restoring a backup: a first read verifies the whole document, a plan checks every
//! connector against the target's state before anything is written, and a second read turns
//! the plan into write steps (Java's records), which [`apply`] runs through the stores or a dry
//! run only lists.
//!
//! Each connector's steps are ordered so that nothing of it runs before it is whole: its
//! config with target state `STOPPED` (`putConnectorConfig` with a target state), then the old
//! offsets' tombstones (`--replace`), its source offsets with their exact key bytes on the
//! partitions Java's producer picks for the target topic, its task configs and commit
//! (`--with-task-configs`, as Java's leader writes them), and last its target state when that
//! is not `STOPPED`. A failed step stops the restore and says which steps of the connector
//! landed.

use std::collections::{BTreeMap, BTreeSet};
use std::io::BufRead;

use connect_state_store::{Store, StoreError, Transport};
use engine::config::{write, ConfigLog, ConfigSnapshot, Properties, TargetState};
use engine::offsets::{default_partition, kip875, renamed_key, OffsetLog, OffsetSnapshot};
use engine::plan::{ProducerKind, WritePlan};
use engine::ProducerRecord;
use serde_json::{Map, Value};

use super::document::{ConnectorEntry, DocumentError, DocumentReader, Header, Item, Secrets};

/// Offsets records per write.
pub const OFFSETS_BATCH: usize = 10_000;

/// The target state restored connectors get.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TargetStateChoice {
    /// The state the backup holds.
    AsBackedUp,
    /// This state.
    State(TargetState),
}

impl Default for TargetStateChoice {
    /// `STOPPED`: nothing runs until an operator resumes it (and KIP-875 changes the offsets
    /// of stopped connectors only).
    fn default() -> Self {
        Self::State(TargetState::Stopped)
    }
}

/// `--set CONNECTOR:KEY=VALUE`: a config value changed on the way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Setting {
    /// The connector, by the name it is restored as.
    pub connector: String,
    /// The config key.
    pub key: String,
    /// Its new value.
    pub value: String,
}

/// How to restore.
#[derive(Debug, Clone, Default)]
pub struct RestoreOptions {
    /// Only these connectors of the backup (`--connector`); `None` for all.
    pub connectors: Option<BTreeSet<String>>,
    /// Backed-up name to the name restored as (`--rename OLD=NEW`).
    pub renames: BTreeMap<String, String>,
    /// Config values changed (`--set`).
    pub sets: Vec<Setting>,
    /// The target state restored connectors end in.
    pub target_state: TargetStateChoice,
    /// Restore source offsets (`--offsets all`, the default) or not (`none`).
    pub skip_offsets: bool,
    /// Write the backed-up task configs and their commit too.
    pub with_task_configs: bool,
    /// Restore over connectors the target already holds (their old offsets are tombstoned
    /// first).
    pub replace: bool,
}

/// The target cluster's state, read before planning.
#[derive(Debug, Clone, Copy)]
pub struct Target<'a> {
    /// The target's config topic.
    pub config: &'a ConfigSnapshot,
    /// The target's offsets topic.
    pub offsets: &'a OffsetSnapshot,
    /// The target offsets topic's partition count (where Java's producer places a key).
    pub offsets_partitions: i32,
}

/// A backup read through once and found whole: its header and its connectors (their source
/// partitions are read again when the restore writes them).
#[derive(Debug, Clone)]
pub struct Verified {
    /// The header.
    pub header: Header,
    /// Every connector, in document order.
    pub connectors: Vec<ConnectorEntry>,
}

/// Why a restore cannot be planned or did not finish.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RestoreError {
    /// The document is damaged, newer or not a backup.
    #[error(transparent)]
    Document(#[from] DocumentError),
    /// A masked backup cannot be written.
    #[error(
        "this backup was taken with --mask-secrets: its secrets are masked, so it can be read \
         (a dry run) but not restored"
    )]
    Masked,
    /// An option names a connector the backup does not hold.
    #[error("{option} names {connector:?}, which the backup does not hold")]
    UnknownConnector {
        /// The option.
        option: &'static str,
        /// The name.
        connector: String,
    },
    /// `--set` names a connector that is not restored under that name.
    #[error("--set names {0:?}, which is not a connector this restore writes (--set takes the name a connector is restored as)")]
    UnknownSetTarget(String),
    /// Two connectors would be restored under one name.
    #[error("two connectors would be restored as {0:?}")]
    DuplicateTarget(String),
    /// Options that cannot go together.
    #[error("{0}")]
    Options(String),
    /// Something in the backup that cannot be restored as asked.
    #[error("connector {connector}: {problem}")]
    Connector {
        /// The connector (as restored).
        connector: String,
        /// What is wrong.
        problem: String,
    },
    /// Connectors the target already holds.
    #[error(
        "the target already holds {}:\n{}",
        if .0.len() == 1 { "a connector this restore writes".to_string() } else { format!("{} connectors this restore writes", .0.len()) },
        .0.iter().map(|c| format!("  {c}")).collect::<Vec<_>>().join("\n")
    )]
    Conflicts(Vec<String>),
    /// A write failed (or timed out); what landed before is said.
    #[error(
        "writing connector {connector} failed: {error}\nwritten before the failure: {}",
        if .landed.is_empty() { "nothing of this connector".to_string() } else { .landed.join("; ") }
    )]
    Write {
        /// The connector being written.
        connector: String,
        /// Its steps that landed.
        landed: Vec<String>,
        /// The store's error (boxed: it is large, and rare).
        error: Box<StoreError>,
    },
}

/// Reads a whole document once: checks it (counts, checksum, that a renamed connector's keys
/// can be renamed) and keeps its connectors, their task configs only when `options` writes
/// them (at full scale they are most of a backup's connector lines).
pub fn verify<R: BufRead>(
    mut reader: DocumentReader<R>,
    options: &RestoreOptions,
) -> Result<Verified, RestoreError> {
    let renames = &options.renames;
    let header = reader.header().clone();
    let mut connectors: Vec<ConnectorEntry> = Vec::new();
    while let Some(item) = reader.next_item()? {
        match item {
            Item::Connector(mut entry) => {
                if !options.with_task_configs {
                    entry.task_configs = Vec::new();
                }
                connectors.push(entry);
            }
            Item::Offset(offset) => {
                let Some(connector) = connectors.last() else {
                    continue;
                };
                if let Some(new) = renames.get(&connector.name) {
                    let key = offset
                        .key_bytes()
                        .map_err(|problem| RestoreError::Connector {
                            connector: connector.name.clone(),
                            problem,
                        })?;
                    if renamed_key(&key, new).is_none() {
                        return Err(RestoreError::Connector {
                            connector: connector.name.clone(),
                            problem: format!(
                                "the source offsets key {} is not [name, {{partition}}] with a \
                                 partition Java can write, so it cannot be renamed",
                                String::from_utf8_lossy(&key)
                            ),
                        });
                    }
                }
            }
        }
    }
    Ok(Verified { header, connectors })
}

/// A config as written: its keys in order, each with its value (`None`: a null).
pub type ConfigPairs = Vec<(String, Option<String>)>;

/// One connector's part of a restore.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectorPlan {
    /// Its name in the backup.
    pub from: String,
    /// The name it is restored as.
    pub name: String,
    /// The config written (`None`: a connector the backup holds offsets of only).
    pub config: Option<ConfigPairs>,
    /// Config keys changed on the way (`--set`, and `name` after `--rename`).
    pub changed: Vec<String>,
    /// The target state it ends in (with a config).
    pub target_state: Option<TargetState>,
    /// The task configs written (`--with-task-configs`).
    pub task_configs: Option<Vec<ConfigPairs>>,
    /// Source offsets records written.
    pub offsets: u64,
    /// What the target held of it, replaced (`--replace`): a description per thing.
    pub replaces: Vec<String>,
    /// Tombstones of the target's live offsets of it (`--replace`), on their partitions.
    pub tombstones: Vec<ProducerRecord>,
}

/// A whole restore, before anything is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RestorePlan {
    /// The connectors, in document order.
    pub connectors: Vec<ConnectorPlan>,
    /// The target offsets topic's partition count.
    pub offsets_partitions: i32,
}

/// Plans the restore of `backup` into `target`: applies the options and checks every connector
/// against the target (see the module's docs). Writes nothing.
pub fn plan(
    backup: &Verified,
    target: &Target<'_>,
    options: &RestoreOptions,
) -> Result<RestorePlan, RestoreError> {
    check_options(backup, options)?;
    let mut plans = Vec::new();
    let mut names = BTreeSet::new();
    let mut conflicts = Vec::new();
    for entry in &backup.connectors {
        if options
            .connectors
            .as_ref()
            .is_some_and(|wanted| !wanted.contains(&entry.name))
        {
            continue;
        }
        let name = options
            .renames
            .get(&entry.name)
            .cloned()
            .unwrap_or_else(|| entry.name.clone());
        if !names.insert(name.clone()) {
            return Err(RestoreError::DuplicateTarget(name));
        }
        let plan = connector_plan(entry, name, target, options, &mut conflicts)?;
        plans.push(plan);
    }
    if let Some(unknown) = options.sets.iter().find(|s| !names.contains(&s.connector)) {
        return Err(RestoreError::UnknownSetTarget(unknown.connector.clone()));
    }
    if !conflicts.is_empty() {
        return Err(RestoreError::Conflicts(conflicts));
    }
    Ok(RestorePlan {
        connectors: plans,
        offsets_partitions: target.offsets_partitions,
    })
}

fn check_options(backup: &Verified, options: &RestoreOptions) -> Result<(), RestoreError> {
    let held: BTreeSet<&str> = backup.connectors.iter().map(|c| c.name.as_str()).collect();
    let named = options
        .connectors
        .iter()
        .flatten()
        .map(|c| ("--connector", c))
        .chain(options.renames.keys().map(|c| ("--rename", c)));
    for (option, connector) in named {
        if !held.contains(connector.as_str()) {
            return Err(RestoreError::UnknownConnector {
                option,
                connector: connector.clone(),
            });
        }
    }
    if options.with_task_configs && (!options.renames.is_empty() || !options.sets.is_empty()) {
        return Err(RestoreError::Options(
            "--with-task-configs writes the task configs as backed up, so it cannot be combined \
             with --rename or --set (they would still hold the old values): leave it out and \
             the connector writes new task configs when it starts"
                .into(),
        ));
    }
    Ok(())
}

fn connector_plan(
    entry: &ConnectorEntry,
    name: String,
    target: &Target<'_>,
    options: &RestoreOptions,
    conflicts: &mut Vec<String>,
) -> Result<ConnectorPlan, RestoreError> {
    let problem = |problem: String| RestoreError::Connector {
        connector: name.clone(),
        problem,
    };
    let mut changed = Vec::new();
    let config = match &entry.config {
        None => None,
        Some(stored) => {
            let mut config = stored.clone();
            if name != entry.name && config.contains_key("name") {
                config.insert("name".into(), Value::String(name.clone()));
                changed.push("name".to_string());
            }
            for set in options.sets.iter().filter(|s| s.connector == name) {
                config.insert(set.key.clone(), Value::String(set.value.clone()));
                changed.push(set.key.clone());
            }
            let mut pairs = string_config(&config).map_err(problem)?;
            pairs.sort();
            Some(pairs)
        }
    };
    let target_state = match (&config, options.target_state) {
        (None, _) => None,
        (Some(_), TargetStateChoice::State(state)) => Some(state),
        (Some(_), TargetStateChoice::AsBackedUp) => {
            let stored = entry.target_state.as_deref().unwrap_or("STARTED");
            Some(TargetState::from_java_name(stored).ok_or_else(|| {
                problem(format!(
                    "the backup holds an unknown target state {stored:?}"
                ))
            })?)
        }
    };
    let task_configs = match (options.with_task_configs, &entry.config) {
        (true, Some(_)) => Some(task_configs(entry).map_err(problem)?),
        _ => None,
    };
    let offsets = if options.skip_offsets {
        0
    } else {
        entry.source_partitions
    };

    // What the target holds under that name.
    let existing = target.config.connector_config(&name);
    let old_offsets = target.offsets.connector_records(&name);
    let mut replaces = Vec::new();
    if let (Some(existing), Some(config)) = (existing, &config) {
        if &properties_pairs(existing) != config {
            replaces.push("a different config".to_string());
        }
    }
    if !old_offsets.is_empty() {
        replaces.push(format!("{} source offsets", old_offsets.len()));
    }
    let not_stopped = existing.is_some() && kip875::check_modifiable(target.config, &name).is_err();
    if not_stopped {
        conflicts.push(format!(
            "{name}: it exists and is not STOPPED with zero tasks; stop it first (PUT \
             /connectors/{name}/stop), as Connect requires before its offsets change"
        ));
    } else if !replaces.is_empty() && !options.replace {
        conflicts.push(format!(
            "{name}: it holds {}; restore over it with --replace",
            replaces.join(" and ")
        ));
    }
    let tombstones = if options.replace {
        old_offsets
            .iter()
            .map(|(key, stored)| ProducerRecord {
                key: key.to_vec(),
                value: None,
                partition: Some(stored.partition()),
            })
            .collect()
    } else {
        Vec::new()
    };
    Ok(ConnectorPlan {
        from: entry.name.clone(),
        name,
        config,
        changed,
        target_state,
        task_configs,
        offsets,
        replaces,
        tombstones,
    })
}

/// A config as the pairs Java's `putConnectorConfig` takes: strings, or null.
fn string_config(config: &Map<String, Value>) -> Result<ConfigPairs, String> {
    config
        .iter()
        .map(|(key, value)| match value {
            Value::String(s) => Ok((key.clone(), Some(s.clone()))),
            Value::Null => Ok((key.clone(), None)),
            other => Err(format!(
                "its config holds a {} at {key:?}, which Connect's REST API never writes; give \
                 it a string value with --set",
                match other {
                    Value::Bool(_) => "boolean",
                    Value::Number(_) => "number",
                    Value::Array(_) => "list",
                    _ => "map",
                }
            )),
        })
        .collect()
}

/// A stored config as the same pairs, sorted by name (other JSON values as their text, so
/// they never compare equal to a restored config).
fn properties_pairs(props: &Properties) -> ConfigPairs {
    props
        .iter()
        .map(|(name, value)| {
            let text = match value.as_str() {
                Some(s) => Some(s.to_owned()),
                None => match value.to_json_value() {
                    engine::json::JsonValue::Null => None,
                    other => Some(format!("{other:?}")),
                },
            };
            (name.to_owned(), text)
        })
        .collect()
}

/// The backed-up task configs of a connector, all of `0..task_count`.
fn task_configs(entry: &ConnectorEntry) -> Result<Vec<ConfigPairs>, String> {
    let by_task: BTreeMap<i32, &Map<String, Value>> = entry
        .task_configs
        .iter()
        .map(|t| (t.task, &t.config))
        .collect();
    (0..entry.task_count.max(0))
        .map(|task| {
            let config = by_task.get(&task).ok_or_else(|| {
                format!(
                    "the backup lacks the config of task {task} of {}, so its task configs \
                     cannot be written (leave out --with-task-configs)",
                    entry.task_count
                )
            })?;
            string_config(config)
        })
        .collect()
}

/// Which topic a step writes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepTopic {
    /// The config topic.
    Config,
    /// The offsets topic.
    Offsets,
}

/// What a step writes, for reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepKind {
    /// The config, with target state `STOPPED`.
    Config,
    /// Tombstones of the target's old offsets.
    OldOffsets,
    /// A batch of source offsets.
    Offsets,
    /// The task configs and their commit.
    TaskConfigs,
    /// The final target state.
    TargetState,
}

impl StepKind {
    /// What it is, in a report.
    pub fn describe(self) -> &'static str {
        match self {
            Self::Config => "config (STOPPED)",
            Self::OldOffsets => "old offsets tombstoned",
            Self::Offsets => "source offsets",
            Self::TaskConfigs => "task configs",
            Self::TargetState => "target state",
        }
    }
}

/// One write of a restore: a plan for one topic.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// The connector's index in the plan.
    pub connector: usize,
    /// What it writes.
    pub kind: StepKind,
    /// Where.
    pub topic: StepTopic,
    /// The records, as a write plan (config writes read back; offsets writes do not, as
    /// Java's KIP-875 writes do not).
    pub plan: WritePlan,
}

impl Step {
    /// How many records it writes.
    pub fn records(&self) -> usize {
        self.plan.records().count()
    }
}

/// The steps of `plan`, read from a second pass over the same document (`reader`, opened
/// again). A step is built only when the previous one was taken, so offsets are held one batch
/// at a time.
pub struct Steps<'p, R> {
    plan: &'p RestorePlan,
    reader: DocumentReader<R>,
    by_name: BTreeMap<&'p str, usize>,
    queue: std::collections::VecDeque<Step>,
    current: Option<usize>,
    batch: Vec<ProducerRecord>,
    done: bool,
}

impl<'p, R: BufRead> Steps<'p, R> {
    /// The steps of `plan` over the document `reader` reads.
    pub fn new(plan: &'p RestorePlan, reader: DocumentReader<R>) -> Self {
        let by_name = plan
            .connectors
            .iter()
            .enumerate()
            .map(|(i, c)| (c.from.as_str(), i))
            .collect();
        Self {
            plan,
            reader,
            by_name,
            queue: Default::default(),
            current: None,
            batch: Vec::new(),
            done: false,
        }
    }

    fn connector_starts(&mut self, index: usize) {
        let c = &self.plan.connectors[index];
        if let Some(config) = &c.config {
            let pairs = config.iter().map(|(k, v)| (k.as_str(), v.as_deref()));
            self.push(
                index,
                StepKind::Config,
                StepTopic::Config,
                write::put_connector_config(&c.name, pairs, Some(TargetState::Stopped)),
            );
        }
        if !c.tombstones.is_empty() {
            self.push(
                index,
                StepKind::OldOffsets,
                StepTopic::Offsets,
                offsets_plan(&c.name, c.tombstones.clone()),
            );
        }
    }

    fn connector_ends(&mut self, index: usize) {
        self.flush_offsets(index);
        let c = &self.plan.connectors[index];
        if let Some(tasks) = &c.task_configs {
            let configs = tasks
                .iter()
                .map(|t| t.iter().map(|(k, v)| (k.as_str(), v.as_deref())));
            self.push(
                index,
                StepKind::TaskConfigs,
                StepTopic::Config,
                write::put_task_configs(&c.name, configs),
            );
        }
        if let Some(state) = c.target_state.filter(|s| *s != TargetState::Stopped) {
            self.push(
                index,
                StepKind::TargetState,
                StepTopic::Config,
                write::put_target_state(&c.name, state),
            );
        }
    }

    fn flush_offsets(&mut self, index: usize) {
        if !self.batch.is_empty() {
            let records = std::mem::take(&mut self.batch);
            let name = self.plan.connectors[index].name.clone();
            self.push(
                index,
                StepKind::Offsets,
                StepTopic::Offsets,
                offsets_plan(&name, records),
            );
        }
    }

    fn push(&mut self, connector: usize, kind: StepKind, topic: StepTopic, plan: WritePlan) {
        self.queue.push_back(Step {
            connector,
            kind,
            topic,
            plan,
        });
    }

    /// Reads on until a step is queued or the document ends.
    fn advance(&mut self) -> Result<(), RestoreError> {
        while self.queue.is_empty() && !self.done {
            match self.reader.next_item()? {
                None => {
                    if let Some(index) = self.current.take() {
                        self.connector_ends(index);
                    }
                    self.done = true;
                }
                Some(Item::Connector(entry)) => {
                    if let Some(index) = self.current.take() {
                        self.connector_ends(index);
                    }
                    self.current = self.by_name.get(entry.name.as_str()).copied();
                    if let Some(index) = self.current {
                        self.connector_starts(index);
                    }
                }
                Some(Item::Offset(offset)) => {
                    let Some(index) = self.current else { continue };
                    let c = &self.plan.connectors[index];
                    if c.offsets == 0 {
                        continue;
                    }
                    let bad = |problem: String| RestoreError::Connector {
                        connector: c.name.clone(),
                        problem,
                    };
                    let key = offset.key_bytes().map_err(bad)?;
                    let key = if c.name == c.from {
                        key
                    } else {
                        renamed_key(&key, &c.name)
                            .ok_or_else(|| bad("a source offsets key cannot be renamed".into()))?
                    };
                    let value = offset.value_bytes().map_err(bad)?;
                    let partition = default_partition(&key, self.plan.offsets_partitions);
                    self.batch.push(ProducerRecord {
                        key,
                        value: Some(value),
                        partition,
                    });
                    if self.batch.len() >= OFFSETS_BATCH {
                        self.flush_offsets(index);
                    }
                }
            }
        }
        Ok(())
    }
}

impl<R: BufRead> Iterator for Steps<'_, R> {
    type Item = Result<Step, RestoreError>;

    fn next(&mut self) -> Option<Self::Item> {
        if let Err(e) = self.advance() {
            self.done = true;
            self.queue.clear();
            return Some(Err(e));
        }
        self.queue.pop_front().map(Ok)
    }
}

/// Offsets records as Java's KIP-875 writes them: one privileged batch, not read back.
fn offsets_plan(connector: &str, records: Vec<ProducerRecord>) -> WritePlan {
    WritePlan::batch(
        ProducerKind::Privileged,
        records,
        false,
        kip875::modify_error(connector),
    )
}

/// What a restore wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Applied {
    /// Connectors written whole.
    pub connectors: u64,
    /// Records written to the config topic.
    pub config_records: u64,
    /// Records written to the offsets topic.
    pub offsets_records: u64,
}

/// Runs `steps` through the target's stores, in order, refusing a masked backup; `on_step` is
/// told of each step once it landed. Stops at the first failure with what of that connector
/// had landed.
pub async fn apply<C, O>(
    header: &Header,
    steps: impl Iterator<Item = Result<Step, RestoreError>>,
    plan: &RestorePlan,
    config: &mut Store<ConfigLog, C>,
    offsets: &mut Store<OffsetLog, O>,
    mut on_step: impl FnMut(&Step),
) -> Result<Applied, RestoreError>
where
    C: Transport + ?Sized,
    O: Transport + ?Sized,
{
    if header.secrets == Secrets::Masked {
        return Err(RestoreError::Masked);
    }
    let mut applied = Applied::default();
    // The kinds of step that landed of the current connector, with their records.
    let mut landed: Vec<(StepKind, u64)> = Vec::new();
    let mut current: Option<usize> = None;
    for step in steps {
        let step = step?;
        if current != Some(step.connector) {
            if current.is_some() {
                applied.connectors += 1;
            }
            current = Some(step.connector);
            landed.clear();
        }
        let result = match step.topic {
            StepTopic::Config => config.execute(&step.plan, false).await.map(drop),
            StepTopic::Offsets => offsets.execute(&step.plan, false).await.map(drop),
        };
        if let Err(error) = result {
            return Err(RestoreError::Write {
                connector: plan.connectors[step.connector].name.clone(),
                landed: landed
                    .iter()
                    .map(|(kind, records)| format!("{} ({records} records)", kind.describe()))
                    .collect(),
                error: Box::new(error),
            });
        }
        let records = step.records() as u64;
        match step.topic {
            StepTopic::Config => applied.config_records += records,
            StepTopic::Offsets => applied.offsets_records += records,
        }
        match landed.last_mut() {
            Some((kind, n)) if *kind == step.kind => *n += records,
            _ => landed.push((step.kind, records)),
        }
        on_step(&step);
    }
    if current.is_some() {
        applied.connectors += 1;
    }
    Ok(applied)
}
