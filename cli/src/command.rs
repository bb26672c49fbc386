//! The roof: the command line's grammar ([`Cli`], [`Command`]) and the dispatch of each
//! command to its module ([`run`]).

use std::io::{self, Write};

use clap::{Parser, Subcommand};

use crate::common::{CliError, Exit};
#[cfg(feature = "kafka")]
use crate::inspect;
use crate::{backup, bench, demo, diff, doctor, history, offsets, replay, restore, serve};

/// What `--version` prints: the tool's version and that of the JSON contract its snapshots,
/// events and diagnostics are written in ([`connect_state_ops::embed::CONTRACT_VERSION`]; a
/// test keeps the two equal), so an embedder can compare a binding's with the binary's.
pub const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), " (JSON contract 1)");

/// Read Kafka Connect's internal topics exactly as a Java worker does.
#[derive(Debug, Parser)]
#[command(
    name = "connect-state",
    version = VERSION,
    about,
    long_about = None,
    after_help = "Examples:\n  \
        connect-state demo\n  \
        connect-state replay --topic config configs.jsonl\n  \
        connect-state inspect --bootstrap-servers localhost:9092 --config-topic connect-configs\n  \
        connect-state doctor --from-dump config=configs.jsonl --from-dump status=status.jsonl\n  \
        connect-state offsets export --connector src --from-dump offsets=offsets.jsonl\n\n\
        Run `connect-state <command> --help` for each command's options and examples."
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
/// The subcommands.
pub enum Command {
    /// Tell the story of a Connect cluster on the in-memory simulator (no Kafka needed): a
    /// leader crash, compaction, an inconsistent connector and its repair, statuses, topic
    /// tracking and an offsets reset, as readable tables.
    #[command(after_help = "Examples:\n  \
        connect-state demo\n  \
        connect-state demo --seed 42\n  \
        connect-state demo --format json > story.json")]
    Demo(demo::DemoArgs),
    /// Replay a topic dump in kcat's JSON-lines format and print the state a worker would hold.
    #[command(after_help = "Examples:\n  \
        kcat -C -b localhost:9092 -t connect-configs -e -J > configs.jsonl\n  \
        connect-state replay --topic config configs.jsonl\n  \
        connect-state replay --topic config --format json --events --live-from 120 configs.jsonl\n  \
        connect-state replay --topic config --as-of 2026-11-30T18:00:00Z configs.jsonl\n  \
        cat configs.jsonl | connect-state replay --topic config -")]
    Replay(replay::ReplayArgs),
    /// Read a live cluster's internal topics to their end and print what `replay` prints.
    #[cfg(feature = "kafka")]
    #[command(after_help = "Examples:\n  \
        connect-state inspect --bootstrap-servers localhost:9092 --config-topic connect-configs\n  \
        connect-state inspect --bootstrap-servers localhost:9092 --config-topic connect-configs \\\n      \
        --status-topic connect-status --as-of 2026-11-30T18:00:00Z\n  \
        connect-state inspect --bootstrap-servers broker:9093 --config-topic connect-configs \\\n      \
        --status-topic connect-status --offsets-topic connect-offsets --format json \\\n      \
        -X security.protocol=SASL_SSL -X sasl.mechanism=PLAIN -X sasl.username=u -X sasl.password=...")]
    Inspect(inspect::InspectOptions),
    /// Examine the internal topics for what makes Connect misbehave: each finding with the
    /// records that show it and a repair hint. Exits 0 when healthy, 1 with findings, 2 on error.
    #[command(after_help = "Checks: inconsistent-connector, ghost-task-records, \
        target-state-without-connector, restart-request-for-unknown-connector, \
        status-of-deleted-connector, topics-of-deleted-connector, orphan-task-status, \
        mismatched-topic-status, offsets-of-deleted-connector, topic-layout, bad-dump-lines.\n\n\
        Examples:\n  \
        connect-state doctor --from-dump config=configs.jsonl --from-dump status=status.jsonl \\\n      \
        --from-dump offsets=offsets.jsonl\n  \
        connect-state doctor --bootstrap-servers localhost:9092 --config-topic connect-configs \\\n      \
        --status-topic connect-status --offsets-topic connect-offsets --format json\n  \
        connect-state doctor --from-dump config=configs.jsonl --as-of 120")]
    Doctor(doctor::DoctorArgs),
    /// Tell what changed, when: one chronological list of the changes in the three topics
    /// (configs with diffs, task commits, inconsistencies and their repair, target states,
    /// statuses, topics, offsets), as the replay machines saw them.
    #[command(
        after_help = "Kinds: connector_created, connector_config_changed, connector_deleted, \
        tasks_committed, became_inconsistent, became_consistent, target_state_changed, \
        restart_requested, task_count_record, session_key_rotated, logger_level_set, \
        connector_status_changed, task_status_changed, topic_activated, topic_reset, \
        offsets_committed, offsets_reset.\n\n\
        Examples:\n  \
        kcat -C -b localhost:9092 -t connect-configs -e -J > configs.jsonl\n  \
        connect-state history --from-dump config=configs.jsonl --from-dump status=status.jsonl\n  \
        connect-state history --connector orders-sink --since 2026-11-30T18:00:00Z \\\n      \
        --from-dump config=configs.jsonl --from-dump status=status.jsonl --format json\n  \
        connect-state history --bootstrap-servers localhost:9092 --config-topic connect-configs \\\n      \
        --status-topic connect-status --offsets-topic connect-offsets --until 500"
    )]
    History(history::HistoryArgs),
    /// Compare two sources (dumps, live clusters, either --as-of a past point): connectors
    /// only in one, config differences (secrets masked), target states, task counts and source
    /// offsets per partition. Exits 0 when equal, 1 when they differ, 2 on error.
    #[command(
        after_help = "Each side takes the source options of doctor; --against separates them.\n\n\
        Examples:\n  \
        connect-state diff --from-dump config=yesterday.jsonl --against --from-dump config=today.jsonl\n  \
        connect-state diff --from-dump config=c.jsonl --as-of 2026-11-30T18:00:00Z \\\n      \
        --against --from-dump config=c.jsonl\n  \
        connect-state diff --format json --bootstrap-servers old:9092 --config-topic connect-configs \\\n      \
        --offsets-topic connect-offsets --against --bootstrap-servers new:9092 \\\n      \
        --config-topic connect-configs --offsets-topic connect-offsets"
    )]
    Diff(diff::DiffArgs),
    /// Export, reset or import a source connector's offsets (KIP-875), printing the exact
    /// records first; `--execute` writes them to a live cluster.
    #[command(after_help = "Examples:\n  \
        connect-state offsets export --connector jdbc-source --from-dump offsets=offsets.jsonl\n  \
        connect-state offsets reset --connector jdbc-source --from-dump config=configs.jsonl \\\n      \
        --from-dump offsets=offsets.jsonl\n  \
        connect-state offsets import --connector jdbc-source new.json --bootstrap-servers \\\n      \
        localhost:9092 --config-topic connect-configs --offsets-topic connect-offsets --execute")]
    Offsets(offsets::OffsetsArgs),
    /// Back up a Connect cluster's state without a worker: every connector's config and
    /// target state, its task configs for reference, and the exact records of its source
    /// offsets, in one versioned, checksummed document.
    #[command(after_help = "Examples:\n  \
        connect-state backup -o cluster.backup --bootstrap-servers localhost:9092 \\\n      \
        --config-topic connect-configs --offsets-topic connect-offsets\n  \
        connect-state backup -o orders.backup --connector orders-source \\\n      \
        --from-dump config=configs.jsonl --from-dump offsets=offsets.jsonl\n  \
        connect-state backup -o audit.backup --mask-secrets --from-dump config=configs.jsonl")]
    Backup(backup::BackupArgs),
    /// Restore a backup into a cluster's config and offsets topics as Java's writers write:
    /// a dry run (the plan, checked against the target) unless `--execute`. Migrates with
    /// `--connector`, `--rename OLD=NEW` and `--set CONNECTOR:KEY=VALUE`.
    #[command(after_help = "Examples:\n  \
        connect-state restore cluster.backup --bootstrap-servers new:9092 \\\n      \
        --config-topic connect-configs --offsets-topic connect-offsets\n  \
        connect-state restore cluster.backup --bootstrap-servers new:9092 \\\n      \
        --config-topic connect-configs --offsets-topic connect-offsets --execute\n  \
        connect-state restore cluster.backup --connector cdc --rename cdc=cdc-new \\\n      \
        --set cdc-new:database.hostname=db2 --bootstrap-servers new:9092 \\\n      \
        --config-topic connect-configs --offsets-topic connect-offsets --execute")]
    Restore(restore::RestoreArgs),
    /// Serve Connect's REST API (GET endpoints, KIP-558 topics and its reset, KIP-875 offsets)
    /// straight from the topics, tailing them; read-only unless `--allow-writes`.
    #[command(after_help = "Examples:\n  \
        connect-state serve --demo --listen 127.0.0.1:8083\n  \
        connect-state serve --from-dump config=configs.jsonl --from-dump status=status.jsonl\n  \
        connect-state serve --from-dump config=configs.jsonl --as-of 2026-11-30T18:00:00Z\n  \
        connect-state serve --bootstrap-servers localhost:9092 --config-topic connect-configs \\\n      \
        --status-topic connect-status --offsets-topic connect-offsets --allow-writes\n  \
        curl -s localhost:8083/connectors?expand=status\n  \
        curl -s localhost:8083/connectors/my-sink/topics\n  \
        curl -s -X PUT localhost:8083/connectors/my-sink/topics/reset")]
    Serve(serve::ServeArgs),
    /// Measure replay throughput, memory and checkpoint restarts on synthetic topics (and, with
    /// `--bootstrap-servers`, `inspect` against a raw librdkafka read of the same topic).
    #[command(after_help = "Examples:\n  \
        connect-state bench\n  \
        connect-state bench --scale tiny --format json\n  \
        connect-state bench --scale full --seed 7\n  \
        connect-state bench --bootstrap-servers localhost:9092 --format json")]
    Bench(bench::BenchArgs),
}

/// Runs a parsed command line.
pub fn run(cli: Cli) -> Result<Exit, CliError> {
    let stdout = io::stdout();
    let stderr = io::stderr();
    match cli.command {
        Command::Demo(args) => return with_stdout(|out| demo::run(args, out)),
        Command::Doctor(args) => return with_stdout(|out| doctor::run(args, out)),
        Command::Diff(args) => return with_stdout(|out| diff::run(args, out)),
        Command::History(args) => {
            return with_stdout(|out| history::run(args, out).map(|()| Exit::Success))
        }
        Command::Offsets(args) => return with_stdout(|out| offsets::run(args, out)),
        Command::Backup(args) => return backup::run(args, &mut stderr.lock()),
        Command::Restore(args) => {
            return with_stdout(|out| restore::run(args, out, &mut stderr.lock()))
        }
        Command::Serve(args) => return with_stdout(|out| serve::run(args, out)),
        Command::Bench(args) => return with_stdout(|out| bench::run(args, out)),
        Command::Replay(args) => {
            let mut out = stdout.lock();
            replay::run_command(args, &mut out, &mut stderr.lock())?;
            out.flush()?;
        }
        #[cfg(feature = "kafka")]
        Command::Inspect(options) => {
            let mut out = stdout.lock();
            inspect::run(options.into_args(), &mut out)?;
            out.flush()?;
        }
    }
    Ok(Exit::Success)
}

/// Runs a command that writes to stdout and may report findings.
fn with_stdout(
    command: impl FnOnce(&mut dyn Write) -> Result<Exit, CliError>,
) -> Result<Exit, CliError> {
    let stdout = io::stdout();
    let mut out = stdout.lock();
    let exit = command(&mut out)?;
    out.flush()?;
    Ok(exit)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_version_names_the_json_contract_the_bindings_expose() {
        let contract = connect_state_ops::embed::CONTRACT_VERSION;
        assert!(
            super::VERSION.ends_with(&format!(" (JSON contract {contract})")),
            "{}",
            super::VERSION
        );
    }
}
