//! Where `doctor`, `offsets`, `diff`, `history` and `serve` read the topics from: the grammar
//! (`--from-dump TOPIC=FILE`, or a live cluster's options as `inspect` takes them, and
//! `--as-of`), the checks made before anything is read, and which topics to read from where.
//! The reading itself is `connect_state_ops::load`'s (each topic replayed through the core
//! wrapped in [`Indexed`], which remembers where the latest record of every key lives, so
//! findings can cite their evidence); live topics are read at once, each on a thread of its own.

use std::collections::BTreeSet;
use std::fs::File;
use std::io::{self, BufRead, BufReader};
use std::path::PathBuf;

use clap::Args;
use engine::config::ConfigLog;
use engine::offsets::OffsetLog;
use engine::status::StatusLog;
use engine::{TopicKind, TopicMachine};

pub use connect_state_ops::index::Indexed;
use connect_state_ops::load::{load_dump, Discard};
pub use connect_state_ops::topics::{Layout, TopicRead, Topics};

use connect_state_ops::cut::{Cut, Point};

use crate::common::CliError;
use crate::kcat;

/// Where to read the topics from: dumps, or a live cluster.
#[derive(Debug, Clone, Args)]
pub struct SourceArgs {
    /// A kcat dump of one topic (`kcat -C -t TOPIC -e -J`), as `config=FILE`, `status=FILE` or
    /// `offsets=FILE`; repeat for each topic. Instead of a live cluster.
    #[arg(long = "from-dump", value_name = "TOPIC=FILE", value_parser = parse_dump_arg)]
    pub from_dump: Vec<(TopicKind, PathBuf)>,
    /// How the dumps are read.
    #[command(flatten)]
    pub dump: DumpArgs,
    /// Read the topics as they were then: an offset (of the config topic, that record
    /// included) or an RFC 3339 time (each partition up to it, records with that timestamp
    /// included), e.g. `--as-of 2026-11-30T18:00:00Z`.
    #[arg(long, value_name = "OFFSET|TIME", value_parser = crate::when::parse_point)]
    pub as_of: Option<Point>,
    /// Live cluster settings.
    #[cfg(feature = "kafka")]
    #[command(flatten)]
    pub live: LiveArgs,
}

/// How dump files are read (`replay`, and every command that takes `--from-dump`).
#[derive(Debug, Clone, Copy, Args)]
pub struct DumpArgs {
    /// Skip malformed dump lines instead of failing: each is counted and reported on stderr
    /// (and by `doctor` as a finding).
    #[arg(long)]
    pub skip_bad_lines: bool,
    /// The longest dump line read, in bytes (and, for `restore`, the longest backup line); a
    /// longer line is malformed (an error, or skipped with `--skip-bad-lines`) and never held
    /// in memory.
    #[arg(long, value_name = "BYTES", default_value_t = kcat::DEFAULT_MAX_LINE_BYTES as u64,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub max_line_bytes: u64,
}

impl DumpArgs {
    /// The options of [`kcat::read_dump`].
    pub fn options(&self) -> kcat::ReadOptions {
        kcat::ReadOptions {
            skip_bad_lines: self.skip_bad_lines,
            max_line_bytes: usize::try_from(self.max_line_bytes).unwrap_or(usize::MAX),
        }
    }
}

/// How to reach a live cluster (the options of `inspect`).
#[cfg(feature = "kafka")]
#[derive(Debug, Clone, Args)]
pub struct LiveArgs {
    /// The cluster's `bootstrap.servers`.
    #[arg(long, value_name = "HOST:PORT")]
    pub bootstrap_servers: Option<String>,
    /// The config topic (`config.storage.topic`).
    #[arg(long, value_name = "TOPIC")]
    pub config_topic: Option<String>,
    /// The status topic (`status.storage.topic`).
    #[arg(long, value_name = "TOPIC")]
    pub status_topic: Option<String>,
    /// The offsets topic (`offset.storage.topic`).
    #[arg(long, value_name = "TOPIC")]
    pub offsets_topic: Option<String>,
    /// Read with `isolation.level=read_committed`.
    #[arg(long)]
    pub read_committed: bool,
    /// Most seconds one broker call may take (at most 2147483: librdkafka takes milliseconds
    /// as a 32-bit integer).
    #[arg(long, default_value_t = 30, value_name = "SECONDS",
          value_parser = clap::value_parser!(u64).range(1..=crate::common::MAX_TIMEOUT_SECONDS))]
    pub timeout: u64,
    /// A librdkafka property (repeatable), e.g. `-X security.protocol=SSL`. Secrets are never
    /// printed.
    #[arg(short = 'X', value_name = "KEY=VALUE", value_parser = crate::inspect::parse_property)]
    pub property: Vec<(String, String)>,
}

#[cfg(feature = "kafka")]
impl LiveArgs {
    /// The client settings these options describe.
    pub fn kafka_settings(&self, bootstrap_servers: &str) -> connect_state_kafka::KafkaSettings {
        let mut kafka = connect_state_kafka::KafkaSettings::new(bootstrap_servers);
        kafka.properties.extend(self.property.iter().cloned());
        kafka.read_committed = self.read_committed;
        kafka.request_timeout = std::time::Duration::from_secs(self.timeout);
        kafka
    }

    fn topic(&self, topic: TopicKind) -> Option<&String> {
        match topic {
            TopicKind::Config => self.config_topic.as_ref(),
            TopicKind::Status => self.status_topic.as_ref(),
            TopicKind::Offsets => self.offsets_topic.as_ref(),
        }
    }
}

/// Parses one `--from-dump TOPIC=FILE` argument.
pub fn parse_dump_arg(text: &str) -> Result<(TopicKind, PathBuf), String> {
    let (topic, file) = text
        .split_once('=')
        .ok_or_else(|| format!("expected TOPIC=FILE (e.g. config=configs.jsonl), got '{text}'"))?;
    let topic = TopicKind::from_name(topic.trim()).ok_or_else(|| {
        format!(
            "unknown topic '{}' in '{text}': use config, status or offsets",
            topic.trim()
        )
    })?;
    if file.is_empty() {
        return Err(format!("no file after '=' in '{text}'"));
    }
    Ok((topic, PathBuf::from(file)))
}

impl SourceArgs {
    /// Whether the topics come from a live cluster.
    pub fn is_live(&self) -> bool {
        #[cfg(feature = "kafka")]
        {
            self.live.bootstrap_servers.is_some()
        }
        #[cfg(not(feature = "kafka"))]
        {
            false
        }
    }

    /// Whether the topics come from dumps (`Ok(false)`) or a live cluster (`Ok(true)`). Fails
    /// when neither are given, or both.
    pub fn live_or_dumps(&self) -> Result<bool, CliError> {
        match (self.from_dump.is_empty(), self.is_live()) {
            (true, false) => Err(CliError::Input(
                "give topic dumps (--from-dump config=FILE ...) or a live cluster \
                 (--bootstrap-servers HOST:PORT --config-topic ...)"
                    .into(),
            )),
            (false, true) => Err(CliError::Input(
                "give either --from-dump files or --bootstrap-servers, not both".into(),
            )),
            (false, false) => Ok(false),
            (true, true) => Ok(true),
        }
    }

    /// The `--from-dump` files by topic; fails when a topic is named twice.
    pub fn dumps(&self) -> Result<Vec<(TopicKind, &PathBuf)>, CliError> {
        let mut seen = BTreeSet::new();
        self.from_dump
            .iter()
            .map(|(topic, file)| match seen.insert(*topic) {
                true => Ok((*topic, file)),
                false => Err(CliError::Input(format!(
                    "--from-dump names the {} topic twice",
                    topic.name()
                ))),
            })
            .collect()
    }

    /// Checks everything about the source that can be checked before reading it, so a mistake
    /// is told at once and not after minutes of reading: one kind of source, each topic named
    /// once, every dump file there and readable (standard input at most once), `--as-of` valid
    /// for every topic, and a live cluster with a topic named.
    pub fn check(&self, wanted: &[TopicKind]) -> Result<(), CliError> {
        let live = self.live_or_dumps()?;
        let dumps = self.dumps()?;
        if dumps
            .iter()
            .filter(|(_, file)| file.as_os_str() == "-")
            .count()
            > 1
        {
            return Err(CliError::Input(
                "standard input (-) can hold only one of the dumps".into(),
            ));
        }
        for (topic, file) in &dumps {
            if file.as_os_str() != "-" {
                if file.is_dir() {
                    return Err(CliError::Input(format!(
                        "--from-dump {}={}: expected a kcat dump file, found a directory",
                        topic.name(),
                        file.display()
                    )));
                }
                File::open(file)
                    .map_err(|e| CliError::Input(format!("cannot open {}: {e}", file.display())))?;
            }
        }
        let given: Vec<TopicKind> = match live {
            false => dumps.iter().map(|(topic, _)| *topic).collect(),
            true => self.live_topics(),
        };
        let read: Vec<TopicKind> = given.into_iter().filter(|t| wanted.contains(t)).collect();
        if live && read.is_empty() {
            return Err(CliError::Input(
                "give at least one of --config-topic, --status-topic, --offsets-topic".into(),
            ));
        }
        for topic in read {
            self.cut(topic)?;
        }
        Ok(())
    }

    /// The topics a live cluster's options name.
    fn live_topics(&self) -> Vec<TopicKind> {
        #[cfg(feature = "kafka")]
        {
            [TopicKind::Config, TopicKind::Status, TopicKind::Offsets]
                .into_iter()
                .filter(|t| self.live.topic(*t).is_some())
                .collect()
        }
        #[cfg(not(feature = "kafka"))]
        {
            Vec::new()
        }
    }

    /// Reads the topics `wanted` that this source has (a topic not given is left out). Fails
    /// when neither dumps nor a cluster are given, or both, and before reading anything when
    /// [`check`](Self::check) finds a mistake.
    pub fn load(&self, wanted: &[TopicKind]) -> Result<Topics, CliError> {
        let machines = Machines {
            config: &ConfigLog::default,
            status: &StatusLog::default,
            offsets: &OffsetLog::default,
        };
        self.load_into(wanted, &machines, Sinks::discard())
    }

    /// [`load`](Self::load) into the machines `machines` makes (e.g. histories), handing
    /// what each queues to its sink in `sinks` as it is drained.
    pub fn load_into<C, S, O, A, B, D>(
        &self,
        wanted: &[TopicKind],
        machines: &Machines<'_, C, S, O>,
        sinks: Sinks<A, B, D>,
    ) -> Result<Topics<C, S, O>, CliError>
    where
        C: TopicMachine + Send,
        S: TopicMachine + Send,
        O: TopicMachine + Send,
        A: Extend<C::Event> + Send,
        B: Extend<S::Event> + Send,
        D: Extend<O::Event> + Send,
    {
        self.check(wanted)?;
        match self.live_or_dumps()? {
            false => self.load_dumps(wanted, machines, sinks),
            true => self.load_live(wanted, machines, sinks),
        }
    }

    fn load_dumps<C, S, O, A, B, D>(
        &self,
        wanted: &[TopicKind],
        machines: &Machines<'_, C, S, O>,
        mut sinks: Sinks<A, B, D>,
    ) -> Result<Topics<C, S, O>, CliError>
    where
        C: TopicMachine,
        S: TopicMachine,
        O: TopicMachine,
        A: Extend<C::Event>,
        B: Extend<S::Event>,
        D: Extend<O::Event>,
    {
        let mut topics = Topics::default();
        for (topic, file) in self.dumps()? {
            if !wanted.contains(&topic) {
                continue;
            }
            let dump = open_dump(file, self.dump.options())?;
            let name = file.display().to_string();
            let cut = self.cut(topic)?;
            match topic {
                TopicKind::Config => {
                    let read = load_dump(name, dump, cut, (machines.config)(), &mut sinks.config)?;
                    topics.config = Some(reported(read)?);
                }
                TopicKind::Status => {
                    let read = load_dump(name, dump, cut, (machines.status)(), &mut sinks.status)?;
                    topics.status = Some(reported(read)?);
                }
                TopicKind::Offsets => {
                    let read =
                        load_dump(name, dump, cut, (machines.offsets)(), &mut sinks.offsets)?;
                    topics.offsets = Some(reported(read)?);
                }
            }
        }
        Ok(topics)
    }

    /// The `--as-of` cut of `topic`, if one was given.
    pub fn cut(&self, topic: TopicKind) -> Result<Option<Cut>, CliError> {
        self.as_of
            .map(|point| Cut::new(point, topic))
            .transpose()
            .map_err(CliError::Input)
    }

    #[cfg(not(feature = "kafka"))]
    fn load_live<C, S, O, A, B, D>(
        &self,
        _wanted: &[TopicKind],
        _machines: &Machines<'_, C, S, O>,
        _sinks: Sinks<A, B, D>,
    ) -> Result<Topics<C, S, O>, CliError>
    where
        C: TopicMachine + Send,
        S: TopicMachine + Send,
        O: TopicMachine + Send,
        A: Extend<C::Event> + Send,
        B: Extend<S::Event> + Send,
        D: Extend<O::Event> + Send,
    {
        Err(CliError::Input(
            "this build has no Kafka support (the `kafka` feature)".into(),
        ))
    }

    #[cfg(feature = "kafka")]
    fn load_live<C, S, O, A, B, D>(
        &self,
        wanted: &[TopicKind],
        machines: &Machines<'_, C, S, O>,
        sinks: Sinks<A, B, D>,
    ) -> Result<Topics<C, S, O>, CliError>
    where
        C: TopicMachine + Send,
        S: TopicMachine + Send,
        O: TopicMachine + Send,
        A: Extend<C::Event> + Send,
        B: Extend<S::Event> + Send,
        D: Extend<O::Event> + Send,
    {
        let live = &self.live;
        let named: Vec<TopicKind> = wanted
            .iter()
            .copied()
            .filter(|t| live.topic(*t).is_some())
            .collect();
        if named.is_empty() {
            return Err(CliError::Input(
                "give at least one of --config-topic, --status-topic, --offsets-topic".into(),
            ));
        }
        let bars = crate::progress::ReadBars::default();
        let wants = |topic: TopicKind| named.contains(&topic);
        let Sinks {
            config: config_sink,
            status: status_sink,
            offsets: offsets_sink,
        } = sinks;
        let config = wants(TopicKind::Config)
            .then(|| self.live_read(TopicKind::Config, machines.config, config_sink, &bars))
            .flatten();
        let status = wants(TopicKind::Status)
            .then(|| self.live_read(TopicKind::Status, machines.status, status_sink, &bars))
            .flatten();
        let offsets = wants(TopicKind::Offsets)
            .then(|| self.live_read(TopicKind::Offsets, machines.offsets, offsets_sink, &bars))
            .flatten();
        let (config, status, offsets) = crate::parallel::read_three(config, status, offsets)?;
        Ok(Topics {
            config,
            status,
            offsets,
        })
    }

    /// The read of `topic` into a machine `machine` makes now, to run on a thread of its own
    /// with Kafka clients of its own; `None` if no name was given for the topic.
    #[cfg(feature = "kafka")]
    fn live_read<M: TopicMachine + Send, X: Extend<M::Event> + Send>(
        &self,
        topic: TopicKind,
        machine: &dyn Fn() -> M,
        mut events: X,
        bars: &crate::progress::ReadBars,
    ) -> Option<impl FnOnce() -> Result<TopicRead<M>, CliError> + Send> {
        let live = &self.live;
        let name = live.topic(topic)?.clone();
        let settings = live.kafka_settings(live.bootstrap_servers.as_deref().unwrap_or_default());
        let cut = self.cut(topic);
        let machine = machine();
        let bars = bars.clone();
        Some(move || {
            crate::common::runtime()?.block_on(async {
                let transport = std::sync::Arc::new(crate::common::kafka_transport(settings)?);
                let bar = bars.bar(&name);
                let read = connect_state_ops::load::load_live(
                    transport,
                    name,
                    topic,
                    cut?,
                    machine,
                    &mut events,
                    Some(bar.observer()),
                )
                .await;
                bar.finish();
                Ok(read?)
            })
        })
    }
}

/// How [`SourceArgs::load_into`] makes each topic's machine.
pub struct Machines<'a, C, S, O> {
    /// The config topic's.
    pub config: &'a dyn Fn() -> C,
    /// The status topic's.
    pub status: &'a dyn Fn() -> S,
    /// The offsets topic's.
    pub offsets: &'a dyn Fn() -> O,
}

/// Where [`SourceArgs::load_into`] hands each topic's events, as they are drained.
pub struct Sinks<A, B, D> {
    /// The config topic's.
    pub config: A,
    /// The status topic's.
    pub status: B,
    /// The offsets topic's.
    pub offsets: D,
}

impl Sinks<Discard, Discard, Discard> {
    /// Sinks that drop every event.
    pub fn discard() -> Self {
        Self {
            config: Discard,
            status: Discard,
            offsets: Discard,
        }
    }
}

/// A dump's skipped lines reported on stderr, as they are read past.
fn reported<M>(read: TopicRead<M>) -> Result<TopicRead<M>, CliError> {
    read.bad_lines.report(&read.name, &mut io::stderr())?;
    Ok(read)
}

/// Opens a dump file (`-`: standard input) to be read as a stream.
pub(crate) fn open_dump(
    file: &PathBuf,
    options: kcat::ReadOptions,
) -> Result<kcat::DumpReader<Box<dyn BufRead>>, CliError> {
    let reader: Box<dyn BufRead> = if file.as_os_str() == "-" {
        Box::new(io::stdin().lock())
    } else {
        let f = File::open(file)
            .map_err(|e| CliError::Input(format!("cannot open {}: {e}", file.display())))?;
        Box::new(BufReader::new(f))
    };
    Ok(kcat::DumpReader::new(reader, options))
}
