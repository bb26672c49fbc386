//! `connect-state backup`: a Connect cluster's state (connector configs and target states,
//! their task configs for reference, and every source partition's exact offsets record) as one
//! versioned, checksummed document, from a live cluster or from dumps, without a worker.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use clap::Args;
use connect_state_ops::backup::document::{Header, Source, Written};
use connect_state_ops::backup::take::{write_backup, BackupOptions, State};
use connect_state_ops::cut::Point;
use connect_state_ops::topics::Topics;
use engine::TopicKind;

use crate::common::{CliError, Exit};
use crate::source::SourceArgs;

/// Options of `backup`.
#[derive(Debug, Clone, Args)]
pub struct BackupArgs {
    /// Where the topics come from: the config topic, the offsets topic for source offsets, the
    /// status topic for `--active-topics`.
    #[command(flatten)]
    pub source: SourceArgs,
    /// The backup file to write (`-`: standard output). A file is created readable by its owner
    /// only (mode 0600), written under a temporary name and renamed when complete.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: PathBuf,
    /// Overwrite the output file if it exists.
    #[arg(long)]
    pub force: bool,
    /// Only this connector (repeatable).
    #[arg(long = "connector", value_name = "NAME")]
    pub connectors: Vec<String>,
    /// Mask config values whose names look secret: an audit copy, which `restore` refuses to
    /// write.
    #[arg(long)]
    pub mask_secrets: bool,
    /// Back up connectors whose task configs are inconsistent, as they are (refused by
    /// default, naming them).
    #[arg(long)]
    pub allow_inconsistent: bool,
    /// Take each connector's KIP-558 active topics too (needs the status topic).
    #[arg(long)]
    pub active_topics: bool,
}

/// Runs `backup`: reads the topics, writes the document, and says on stderr what it holds.
pub fn run(args: BackupArgs, err: &mut dyn Write) -> Result<Exit, CliError> {
    let mut wanted = vec![TopicKind::Config, TopicKind::Offsets];
    if args.active_topics {
        wanted.push(TopicKind::Status);
    }
    if args.output.as_os_str() != "-" && args.output.exists() && !args.force {
        return Err(CliError::Input(format!(
            "{} exists: give another file, or --force to overwrite it",
            args.output.display()
        )));
    }
    let topics = args.source.load(&wanted)?;
    let config = topics.config.as_ref().ok_or_else(|| {
        CliError::Input(
            "backup needs the config topic: add --from-dump config=FILE, or --config-topic NAME \
             with --bootstrap-servers"
                .into(),
        )
    })?;
    if topics.offsets.is_none() {
        writeln!(
            err,
            "note: no offsets topic given: the backup holds no source offsets"
        )?;
    }
    let config_snapshot = config.state.machine.snapshot();
    let offsets_snapshot = topics.offsets.as_ref().map(|o| o.state.machine.snapshot());
    let status_snapshot = topics.status.as_ref().map(|s| s.state.machine.snapshot());
    let state = State {
        config: &config_snapshot,
        offsets: offsets_snapshot.as_ref(),
        status: status_snapshot.as_ref(),
    };
    let options = BackupOptions {
        connectors: (!args.connectors.is_empty())
            .then(|| args.connectors.iter().cloned().collect::<BTreeSet<_>>()),
        mask_secrets: args.mask_secrets,
        active_topics: args.active_topics,
        allow_inconsistent: args.allow_inconsistent,
    };
    let header = header(&args, &topics);
    let backup_error = |e: connect_state_ops::backup::take::BackupError| match e {
        connect_state_ops::backup::take::BackupError::Document(
            connect_state_ops::backup::document::DocumentError::Io(e),
        ) => CliError::Io(e),
        other => CliError::Input(other.to_string()),
    };
    let written = if args.output.as_os_str() == "-" {
        let stdout = io::stdout();
        let out = BufWriter::with_capacity(256 << 10, stdout.lock());
        write_backup(out, &header, &state, &options)
            .map_err(backup_error)?
            .1
    } else {
        write_file(&args.output, |file| {
            let out = BufWriter::with_capacity(256 << 10, file);
            let (out, written) =
                write_backup(out, &header, &state, &options).map_err(backup_error)?;
            let file = out.into_inner().map_err(|e| CliError::Io(e.into_error()))?;
            file.sync_all()?;
            Ok(written)
        })?
    };
    report(&args, &written, err)?;
    Ok(Exit::Success)
}

/// What the header says of this backup (its secrets and active topics follow the options).
fn header<C, S, O>(args: &BackupArgs, topics: &Topics<C, S, O>) -> Header
where
    C: engine::TopicMachine,
    S: engine::TopicMachine,
    O: engine::TopicMachine,
{
    let mut names = BTreeMap::new();
    let mut newest: Option<i64> = None;
    let mut note = |kind: TopicKind, name: &str, ts: Option<i64>| {
        names.insert(kind.name().to_owned(), name.to_owned());
        newest = newest.max(ts);
    };
    if let Some(t) = &topics.config {
        note(TopicKind::Config, &t.name, t.state.newest_timestamp());
    }
    if let Some(t) = &topics.status {
        note(TopicKind::Status, &t.name, t.state.newest_timestamp());
    }
    if let Some(t) = &topics.offsets {
        note(TopicKind::Offsets, &t.name, t.state.newest_timestamp());
    }
    let read_up_to = topics
        .positions()
        .into_iter()
        .map(|(kind, partitions)| {
            let partitions = partitions
                .into_iter()
                .map(|(p, next)| (p.to_string(), next))
                .collect();
            (kind.name().to_owned(), partitions)
        })
        .collect();
    let live = args.source.is_live();
    let source = Source {
        kind: if live { "live" } else { "dumps" }.into(),
        bootstrap_servers: live.then(|| bootstrap_servers(&args.source)).flatten(),
        topics: names,
    };
    Header {
        as_of: args.source.as_of.map(|point| match point {
            Point::Offset(offset) => offset.to_string(),
            Point::Time(ms) => crate::when::show_time(ms),
        }),
        read_up_to,
        newest_record_ms: newest,
        selected: (!args.connectors.is_empty()).then(|| {
            let set: BTreeSet<&String> = args.connectors.iter().collect();
            set.into_iter().cloned().collect()
        }),
        active_topics: args.active_topics,
        ..Header::new(tool(), jiff::Timestamp::now().to_string(), source)
    }
}

/// The `tool` member of the backups this build writes.
pub(crate) fn tool() -> String {
    format!("connect-state {}", env!("CARGO_PKG_VERSION"))
}

fn bootstrap_servers(source: &SourceArgs) -> Option<String> {
    #[cfg(feature = "kafka")]
    {
        source.live.bootstrap_servers.clone()
    }
    #[cfg(not(feature = "kafka"))]
    {
        let _ = source;
        None
    }
}

/// Writes `path` through `write` on a file readable by its owner only, created under a
/// temporary name beside it and renamed over `path` once complete (a failed backup leaves no
/// file behind, and never half of one under its name).
fn write_file(
    path: &Path,
    write: impl FnOnce(File) -> Result<Written, CliError>,
) -> Result<Written, CliError> {
    let file_name = path
        .file_name()
        .ok_or_else(|| CliError::Input(format!("{} is not a file name", path.display())))?;
    let mut partial_name = std::ffi::OsString::from(".");
    partial_name.push(file_name);
    partial_name.push(format!(".partial-{}", std::process::id()));
    let partial = path.with_file_name(partial_name);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let file = options
        .open(&partial)
        .map_err(|e| CliError::Input(format!("cannot create {}: {e}", partial.display())))?;
    let result = write(file).and_then(|written| {
        std::fs::rename(&partial, path).map_err(|e| {
            CliError::Input(format!(
                "cannot rename {} to {}: {e}",
                partial.display(),
                path.display()
            ))
        })?;
        Ok(written)
    });
    if result.is_err() {
        let _ = std::fs::remove_file(&partial);
    }
    result
}

/// Says on stderr what the backup holds, and how it holds secrets.
fn report(args: &BackupArgs, written: &Written, err: &mut dyn Write) -> io::Result<()> {
    let target = if args.output.as_os_str() == "-" {
        "standard output".to_string()
    } else {
        args.output.display().to_string()
    };
    writeln!(
        err,
        "backup written to {target}: {} connector(s), {} source partition(s), {} bytes, \
         sha256 {}",
        written.connectors, written.source_partitions, written.bytes, written.sha256
    )?;
    if args.mask_secrets {
        writeln!(
            err,
            "secrets are masked: this is an audit copy, and `restore` refuses to write it"
        )
    } else if args.output.as_os_str() == "-" {
        writeln!(
            err,
            "the backup holds the connectors' configs as stored, secrets included: keep it \
             where only you can read it"
        )
    } else {
        writeln!(
            err,
            "the backup holds the connectors' configs as stored, secrets included: the file is \
             readable by its owner only (mode 0600)"
        )
    }
}
