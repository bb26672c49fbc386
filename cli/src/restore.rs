//! `connect-state restore BACKUP`: a backup written into a cluster's config and offsets topics
//! as Java's writers write them. A dry run by default (the plan, checked against the target's
//! state); `--execute` writes it to a live cluster. The options migrate: a subset, renamed,
//! with config values changed.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::io::{BufReader, Write};
use std::path::PathBuf;

use clap::{Args, ValueEnum};
use connect_state_ops::backup::document::{DocumentReader, Header};
use connect_state_ops::backup::restore::{
    self, RestoreOptions, RestorePlan, Setting, StepTopic, Target, TargetStateChoice, Verified,
};
use engine::config::{ConfigSnapshot, TargetState};
use engine::offsets::OffsetSnapshot;
use engine::TopicKind;
use serde_json::json;

use crate::common::{CliError, Exit, Format};
use crate::source::{Layout, SourceArgs};

/// Which source offsets to restore.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OffsetsChoice {
    /// None: the connectors start from scratch (or from what they find elsewhere).
    None,
    /// Every source partition the backup holds.
    All,
}

/// Options of `restore`.
#[derive(Debug, Clone, Args)]
pub struct RestoreArgs {
    /// The backup file (`connect-state backup`); read twice, so not standard input.
    pub backup: PathBuf,
    /// The target: a live cluster's config and offsets topics, or dumps of them (a dry run).
    #[command(flatten)]
    pub target: SourceArgs,
    /// Write the plan (live clusters only). Without it, print the plan and write nothing.
    #[arg(long)]
    pub execute: bool,
    /// Only this connector of the backup (repeatable).
    #[arg(long = "connector", value_name = "NAME")]
    pub connectors: Vec<String>,
    /// Restore a connector under another name (repeatable): its source offsets are keyed for
    /// the new name, and a `name` in its config follows.
    #[arg(long, value_name = "OLD=NEW", value_parser = parse_rename)]
    pub rename: Vec<(String, String)>,
    /// Set a config value on the way (repeatable), by the name the connector is restored as.
    #[arg(long, value_name = "CONNECTOR:KEY=VALUE", value_parser = parse_set)]
    pub set: Vec<Setting>,
    /// The target state restored connectors end in: `STOPPED` (nothing runs until you resume
    /// it), `PAUSED`, or `as-backed-up`.
    #[arg(long, value_name = "STATE", default_value = "STOPPED", value_parser = parse_target_state)]
    pub target_state: TargetStateChoice,
    /// Which source offsets to restore.
    #[arg(long, value_enum, default_value = "all")]
    pub offsets: OffsetsChoice,
    /// Write the backed-up task configs and their commit too (otherwise the connector writes
    /// new ones when it starts).
    #[arg(long)]
    pub with_task_configs: bool,
    /// Restore over connectors the target already holds (a different config, or offsets,
    /// which are tombstoned first); they must be STOPPED with zero tasks.
    #[arg(long)]
    pub replace: bool,
    /// Create the target's config and offsets topics when missing, as Connect would
    /// (compacted; 1 and 25 partitions), with `--execute`.
    #[arg(long)]
    pub create_topics: bool,
    /// Partitions of the target offsets topic, to place keys (dumps, and a live topic that does
    /// not exist yet; an existing one is described).
    #[arg(long, default_value_t = 25, value_name = "N")]
    pub offsets_partitions: i32,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    pub format: Format,
}

/// Parses `--rename OLD=NEW`.
fn parse_rename(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((old, new)) if !old.is_empty() && !new.is_empty() => {
            Ok((old.to_owned(), new.to_owned()))
        }
        _ => Err(format!("expected OLD=NEW, got '{text}'")),
    }
}

/// Parses `--set CONNECTOR:KEY=VALUE` (the value may be empty, and may hold `=` and `:`).
fn parse_set(text: &str) -> Result<Setting, String> {
    let (connector, rest) = text
        .split_once(':')
        .ok_or_else(|| format!("expected CONNECTOR:KEY=VALUE, got '{text}'"))?;
    let (key, value) = rest
        .split_once('=')
        .ok_or_else(|| format!("expected CONNECTOR:KEY=VALUE, got '{text}'"))?;
    if connector.is_empty() || key.is_empty() {
        return Err(format!("expected CONNECTOR:KEY=VALUE, got '{text}'"));
    }
    Ok(Setting {
        connector: connector.to_owned(),
        key: key.to_owned(),
        value: value.to_owned(),
    })
}

/// Parses `--target-state`.
fn parse_target_state(text: &str) -> Result<TargetStateChoice, String> {
    if text.eq_ignore_ascii_case("as-backed-up") {
        return Ok(TargetStateChoice::AsBackedUp);
    }
    TargetState::from_java_name(&text.to_ascii_uppercase())
        .map(TargetStateChoice::State)
        .ok_or_else(|| format!("expected STOPPED, PAUSED, STARTED or as-backed-up, got '{text}'"))
}

/// Runs `restore`.
pub fn run(args: RestoreArgs, out: &mut dyn Write, err: &mut dyn Write) -> Result<Exit, CliError> {
    if args.execute && args.target.as_of.is_some() {
        return Err(CliError::Input(
            "--execute writes against the target's current state: it cannot be combined with \
             --as-of"
                .into(),
        ));
    }
    if args.execute && !args.target.is_live() {
        return Err(CliError::Input(
            "--execute writes to a live cluster: give --bootstrap-servers with --config-topic \
             and --offsets-topic instead of dumps"
                .into(),
        ));
    }
    let options = RestoreOptions {
        connectors: (!args.connectors.is_empty())
            .then(|| args.connectors.iter().cloned().collect::<BTreeSet<_>>()),
        renames: rename_map(&args.rename)?,
        sets: args.set.clone(),
        target_state: args.target_state,
        skip_offsets: args.offsets == OffsetsChoice::None,
        with_task_configs: args.with_task_configs,
        replace: args.replace,
    };
    let verified = restore::verify(open(&args)?, &options).map_err(input)?;
    if args.execute
        && verified.header.secrets == connect_state_ops::backup::document::Secrets::Masked
    {
        return Err(input(restore::RestoreError::Masked));
    }
    if args.execute {
        execute(&args, &verified, &options, out, err)
    } else {
        dry_run(&args, &verified, &options, out, err)
    }
}

fn input(e: restore::RestoreError) -> CliError {
    CliError::Input(e.to_string())
}

fn rename_map(renames: &[(String, String)]) -> Result<BTreeMap<String, String>, CliError> {
    let mut map = BTreeMap::new();
    for (old, new) in renames {
        if map.insert(old.clone(), new.clone()).is_some() {
            return Err(CliError::Input(format!("--rename names {old:?} twice")));
        }
    }
    Ok(map)
}

/// Opens the backup for one read through.
fn open(args: &RestoreArgs) -> Result<DocumentReader<BufReader<File>>, CliError> {
    if args.backup.as_os_str() == "-" {
        return Err(CliError::Input(
            "restore reads the backup twice (to verify it, then to write it): give a file, not \
             standard input"
                .into(),
        ));
    }
    let file = File::open(&args.backup)
        .map_err(|e| CliError::Input(format!("cannot open {}: {e}", args.backup.display())))?;
    let max = usize::try_from(args.target.dump.max_line_bytes).unwrap_or(usize::MAX);
    DocumentReader::open(BufReader::with_capacity(256 << 10, file), max)
        .map_err(|e| CliError::Input(format!("{}: {e}", args.backup.display())))
}

/// The dry run: the target's state read (dumps or a live cluster, nothing created), the plan
/// checked against it and printed with where every record would go.
fn dry_run(
    args: &RestoreArgs,
    verified: &Verified,
    options: &RestoreOptions,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Exit, CliError> {
    let (config, offsets, partitions) = target_state(args, err)?;
    let target = Target {
        config: &config,
        offsets: &offsets,
        offsets_partitions: partitions,
    };
    let plan = restore::plan(verified, &target, options).map_err(input)?;
    let mut counts = Counts::new(&plan);
    for step in restore::Steps::new(&plan, open(args)?) {
        counts.add(&step.map_err(input)?);
    }
    print_plan(args, &verified.header, &plan, &counts, false, out)?;
    Ok(Exit::Success)
}

/// What the target holds, for a dry run.
fn target_state(
    args: &RestoreArgs,
    err: &mut dyn Write,
) -> Result<(ConfigSnapshot, OffsetSnapshot, i32), CliError> {
    let wanted = [TopicKind::Config, TopicKind::Offsets];
    if args.target.is_live() {
        return live_target_state(args, err);
    }
    let topics = args.target.load(&wanted)?;
    let config = topics
        .config
        .map(|t| t.state.machine.snapshot())
        .unwrap_or_default();
    let partitions = match topics.offsets.as_ref().map(|t| &t.layout) {
        Some(Layout::Described { partitions, .. }) => *partitions,
        _ => args.offsets_partitions,
    };
    let offsets = topics
        .offsets
        .map(|t| t.state.machine.snapshot())
        .unwrap_or_default();
    Ok((config, offsets, partitions))
}

#[cfg(feature = "kafka")]
fn live_target_state(
    args: &RestoreArgs,
    err: &mut dyn Write,
) -> Result<(ConfigSnapshot, OffsetSnapshot, i32), CliError> {
    crate::common::runtime()?.block_on(async {
        let stores = live::Stores::open(args, false).await?;
        for missing in &stores.missing {
            writeln!(
                err,
                "note: topic '{missing}' does not exist: planned as empty (--execute creates it \
                 only with --create-topics)"
            )?;
        }
        let partitions = stores.offsets_partitions;
        Ok((
            stores.config_snapshot(),
            stores.offsets_snapshot(),
            partitions,
        ))
    })
}

#[cfg(not(feature = "kafka"))]
fn live_target_state(
    _: &RestoreArgs,
    _: &mut dyn Write,
) -> Result<(ConfigSnapshot, OffsetSnapshot, i32), CliError> {
    Err(CliError::Input(
        "this build has no Kafka support (the `kafka` feature)".into(),
    ))
}

#[cfg(not(feature = "kafka"))]
fn execute(
    _: &RestoreArgs,
    _: &Verified,
    _: &RestoreOptions,
    _: &mut dyn Write,
    _: &mut dyn Write,
) -> Result<Exit, CliError> {
    Err(CliError::Input(
        "this build has no Kafka support (the `kafka` feature)".into(),
    ))
}

/// The restore: the target's topics started as Java's stores start them (refusing what Java
/// refuses), the plan checked against them, then every step written in order.
#[cfg(feature = "kafka")]
fn execute(
    args: &RestoreArgs,
    verified: &Verified,
    options: &RestoreOptions,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Exit, CliError> {
    crate::common::runtime()?.block_on(async {
        let mut stores = live::Stores::open(args, true).await?;
        let config = stores.config_snapshot();
        let offsets = stores.offsets_snapshot();
        let target = Target {
            config: &config,
            offsets: &offsets,
            offsets_partitions: stores.offsets_partitions,
        };
        let plan = restore::plan(verified, &target, options).map_err(input)?;
        let mut counts = Counts::new(&plan);
        let steps = restore::Steps::new(&plan, open(args)?);
        let mut last: Option<usize> = None;
        let applied = restore::apply(
            &verified.header,
            steps,
            &plan,
            &mut stores.config,
            &mut stores.offsets,
            |step| {
                counts.add(step);
                if last != Some(step.connector) {
                    last = Some(step.connector);
                    let _ = writeln!(err, "restoring {}", plan.connectors[step.connector].name);
                }
            },
        )
        .await
        .map_err(input)?;
        print_plan(args, &verified.header, &plan, &counts, true, out)?;
        if args.format == Format::Table {
            writeln!(
                out,
                "Restored {} connector(s): {} record(s) to {}, {} to {}.",
                applied.connectors,
                applied.config_records,
                stores.config_topic,
                applied.offsets_records,
                stores.offsets_topic
            )?;
            let stopped: Vec<&str> = plan
                .connectors
                .iter()
                .filter(|c| c.target_state == Some(TargetState::Stopped))
                .map(|c| c.name.as_str())
                .collect();
            if !stopped.is_empty() {
                writeln!(
                    out,
                    "{} connector(s) are STOPPED: resume each with PUT /connectors/NAME/resume \
                     when the workers should run it.",
                    stopped.len()
                )?;
            }
        }
        Ok(Exit::Success)
    })
}

#[cfg(feature = "kafka")]
mod live {
    use std::sync::Arc;

    use connect_state_kafka::KafkaTransport;
    use connect_state_store::{Store, StoreSettings, TopicDefaults, Transport};
    use engine::config::{ConfigLog, ConfigSnapshot};
    use engine::offsets::{OffsetLog, OffsetSnapshot};
    use engine::TopicKind;

    use super::RestoreArgs;
    use crate::common::CliError;

    /// The target's config and offsets topics, started as Java's stores start.
    pub(super) struct Stores {
        pub(super) config: Store<ConfigLog, KafkaTransport>,
        pub(super) offsets: Store<engine::offsets::OffsetLog, KafkaTransport>,
        pub(super) config_topic: String,
        pub(super) offsets_topic: String,
        pub(super) offsets_partitions: i32,
        /// Topics that do not exist (a dry run plans them as empty).
        pub(super) missing: Vec<String>,
    }

    impl Stores {
        /// Opens both topics. `writing`: a missing topic is created only with
        /// `--create-topics` (as Connect creates it), otherwise it is an error; a dry run
        /// creates nothing and plans a missing topic as empty.
        pub(super) async fn open(args: &RestoreArgs, writing: bool) -> Result<Self, CliError> {
            let live = &args.target.live;
            let servers = live.bootstrap_servers.as_deref().unwrap_or_default();
            let (Some(config_topic), Some(offsets_topic)) =
                (live.config_topic.clone(), live.offsets_topic.clone())
            else {
                return Err(CliError::Input(
                    "restore needs the target's --config-topic and --offsets-topic".into(),
                ));
            };
            let transport = Arc::new(crate::common::kafka_transport(
                live.kafka_settings(servers),
            )?);
            let mut missing = Vec::new();
            let mut offsets_partitions = args.offsets_partitions;
            for (kind, name) in [
                (TopicKind::Config, &config_topic),
                (TopicKind::Offsets, &offsets_topic),
            ] {
                match transport.describe_topic(name).await {
                    Ok(Some(description)) => {
                        if kind == TopicKind::Offsets {
                            offsets_partitions = description.partitions;
                        }
                    }
                    Ok(None) if writing && !args.create_topics => {
                        return Err(CliError::Input(format!(
                            "topic '{name}' ({}) does not exist: start the workers once, or \
                             give --create-topics to create it as Connect would",
                            kind.setting()
                        )))
                    }
                    Ok(None) => missing.push(name.clone()),
                    Err(e) => {
                        return Err(CliError::Input(format!("describing topic '{name}': {e}")))
                    }
                }
            }
            let settings = |name: &str, kind: TopicKind| {
                let mut settings = StoreSettings::new(name, kind);
                settings.create_if_missing = writing && args.create_topics;
                settings
            };
            let mut config = Store::new(
                settings(&config_topic, TopicKind::Config),
                Arc::clone(&transport),
                ConfigLog::new(),
            );
            let mut offsets = Store::new(
                settings(&offsets_topic, TopicKind::Offsets),
                Arc::clone(&transport),
                OffsetLog::new(),
            );
            let start = |name: &str, e: connect_state_store::StoreError| {
                CliError::Input(format!("topic '{name}': {e}"))
            };
            if !missing.contains(&config_topic) {
                config.start().await.map_err(|e| start(&config_topic, e))?;
            }
            if !missing.contains(&offsets_topic) {
                offsets
                    .start()
                    .await
                    .map_err(|e| start(&offsets_topic, e))?;
                if writing {
                    let described = transport
                        .describe_topic(&offsets_topic)
                        .await
                        .ok()
                        .flatten();
                    if let Some(d) = described {
                        offsets_partitions = d.partitions;
                    }
                }
            }
            Ok(Self {
                config,
                offsets,
                config_topic,
                offsets_topic,
                offsets_partitions,
                missing,
            })
        }

        pub(super) fn config_snapshot(&self) -> ConfigSnapshot {
            self.config.machine().snapshot()
        }

        pub(super) fn offsets_snapshot(&self) -> OffsetSnapshot {
            self.offsets.machine().snapshot()
        }
    }
}

/// Records per connector and per offsets-topic partition, as the steps are listed or written.
struct Counts {
    config: Vec<u64>,
    offsets: Vec<BTreeMap<i32, u64>>,
}

impl Counts {
    fn new(plan: &RestorePlan) -> Self {
        Self {
            config: vec![0; plan.connectors.len()],
            offsets: vec![BTreeMap::new(); plan.connectors.len()],
        }
    }

    fn add(&mut self, step: &restore::Step) {
        match step.topic {
            StepTopic::Config => self.config[step.connector] += step.records() as u64,
            StepTopic::Offsets => {
                for record in step.plan.records().filter(|r| r.value.is_some()) {
                    *self.offsets[step.connector]
                        .entry(record.partition.unwrap_or(-1))
                        .or_default() += 1;
                }
            }
        }
    }
}

/// Prints the plan (and, after `--execute`, what was written) as a table or as JSON.
fn print_plan(
    args: &RestoreArgs,
    header: &Header,
    plan: &RestorePlan,
    counts: &Counts,
    written: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let config_records: u64 = counts.config.iter().sum();
    let offsets_records: u64 = counts.offsets.iter().flat_map(|m| m.values()).sum();
    let tombstones: u64 = plan
        .connectors
        .iter()
        .map(|c| c.tombstones.len() as u64)
        .sum();
    match args.format {
        Format::Json => {
            let connectors: Vec<serde_json::Value> = plan
                .connectors
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    json!({
                        "name": c.name,
                        "from": c.from,
                        "config_properties": c.config.as_ref().map(Vec::len),
                        "changed": c.changed,
                        "target_state": c.target_state.map(TargetState::as_str),
                        "task_configs": c.task_configs.as_ref().map(Vec::len),
                        "source_offsets": c.offsets,
                        "offsets_per_partition": counts.offsets[i],
                        "replaces": c.replaces,
                        "old_offsets_tombstoned": c.tombstones.len(),
                        "config_records": counts.config[i],
                    })
                })
                .collect();
            let doc = json!({
                "written": written,
                "backup": {
                    "taken_at": header.taken_at,
                    "source": header.source,
                    "secrets": header.secrets,
                },
                "connectors": connectors,
                "config_records": config_records,
                "offsets_records": offsets_records + tombstones,
            });
            crate::view::write_pretty(out, &doc)?;
        }
        Format::Table => {
            writeln!(
                out,
                "Backup taken {} from {} ({} connector(s) in this restore).",
                header.taken_at,
                source_text(header),
                plan.connectors.len()
            )?;
            let rows = || {
                plan.connectors.iter().enumerate().map(|(i, c)| {
                    let from = if c.from == c.name {
                        "-".to_string()
                    } else {
                        c.from.clone()
                    };
                    let config = match &c.config {
                        None => "(none: offsets only)".to_string(),
                        Some(pairs) if c.changed.is_empty() => {
                            format!("{} properties", pairs.len())
                        }
                        Some(pairs) => {
                            format!("{} properties, set: {}", pairs.len(), c.changed.join(", "))
                        }
                    };
                    let offsets = &counts.offsets[i];
                    let offsets_text = if offsets.is_empty() {
                        "-".to_string()
                    } else {
                        format!(
                            "{} on {} partition(s)",
                            offsets.values().sum::<u64>(),
                            offsets.len()
                        )
                    };
                    vec![
                        crate::common::printable(&c.name),
                        crate::common::printable(&from),
                        config,
                        c.target_state.map_or("-", TargetState::as_str).to_string(),
                        c.task_configs
                            .as_ref()
                            .map_or("-".to_string(), |t| t.len().to_string()),
                        offsets_text,
                        if c.replaces.is_empty() {
                            "-".to_string()
                        } else {
                            c.replaces.join(", ")
                        },
                    ]
                })
            };
            crate::table::write(
                out,
                &[
                    "CONNECTOR",
                    "FROM",
                    "CONFIG",
                    "TARGET STATE",
                    "TASK CONFIGS",
                    "SOURCE OFFSETS",
                    "REPLACES",
                ],
                rows,
            )?;
            if !written {
                writeln!(
                    out,
                    "Dry run: {config_records} record(s) would be written to the config topic \
                     and {} to the offsets topic. Add --execute to write them.",
                    offsets_records + tombstones
                )?;
            }
        }
    }
    Ok(())
}

fn source_text(header: &Header) -> String {
    let topics: Vec<String> = header
        .source
        .topics
        .iter()
        .map(|(kind, name)| format!("{kind}={name}"))
        .collect();
    match &header.source.bootstrap_servers {
        Some(servers) => format!("{servers} ({})", topics.join(", ")),
        None => format!("dumps ({})", topics.join(", ")),
    }
}
