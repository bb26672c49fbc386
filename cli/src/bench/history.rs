//! The history benchmark: `history` over the three synthetic topics against a replay of the
//! same topics (goal: at most 2x), and the peak memory of each (history streams: its memory
//! is the state's, not the number of changes').

use engine::OwnedRecord;
use std::time::Instant;

use connect_state_ops::history::{self, Options, RecordStream};
use connect_state_ops::replay::ReplayOptions;
use engine::config::ConfigLog;
use engine::offsets::OffsetLog;
use engine::status::StatusLog;
use engine::TopicKind;
use serde::{Deserialize, Serialize};

use crate::bench::measure::{best_of, memory};
use crate::common::CliError;
use crate::kcat::DumpRecord;
use crate::synth::{self, Scale};

/// History figures.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct HistoryFigures {
    /// Records of the three topics.
    pub history_records: u64,
    /// Entries the history told.
    pub history_entries: u64,
    /// Seconds to replay the three topics (best run): records read as dump records, as
    /// `replay` reads a dump.
    pub history_replay_seconds: f64,
    /// Seconds to tell their history (best run), each entry written as JSON to a sink.
    pub history_seconds: f64,
    /// `history_seconds` over `history_replay_seconds` (goal: at most 2).
    pub history_to_replay_ratio: f64,
    /// Peak resident-set growth of the history (in a fresh process, as each topic's replay
    /// is measured).
    pub history_peak_memory_bytes: Option<u64>,
}

/// The topics' records as a dump reader yields them (owned), the offsets topic generated as
/// it is read (it is not held: at full scale it has 11 million records).
fn streams<'a>(
    config: &'a [OwnedRecord],
    status: &'a [OwnedRecord],
    scale: &Scale,
    seed: u64,
) -> [(TopicKind, RecordStream<'a>); 3] {
    let owned = DumpRecord::from;
    [
        (
            TopicKind::Config,
            Box::new(config.iter().cloned().map(owned).map(Ok)),
        ),
        (
            TopicKind::Status,
            Box::new(status.iter().cloned().map(owned).map(Ok)),
        ),
        (
            TopicKind::Offsets,
            Box::new(synth::offsets_topic(scale, seed).map(owned).map(Ok)),
        ),
    ]
}

fn replay_all(
    config: &[OwnedRecord],
    status: &[OwnedRecord],
    scale: &Scale,
    seed: u64,
) -> Result<u64, CliError> {
    let [(_, c), (_, s), (_, o)] = streams(config, status, scale, seed);
    let single = ReplayOptions {
        single_partition: true,
        ..ReplayOptions::default()
    };
    let config = crate::replay::replay::<ConfigLog>(as_dump(c), single)?;
    let status = crate::replay::replay::<StatusLog>(as_dump(s), ReplayOptions::default())?;
    let offsets = crate::replay::replay::<OffsetLog>(as_dump(o), ReplayOptions::default())?;
    Ok(config.machine.snapshot().connectors().count() as u64
        + status.machine.snapshot().connectors().count() as u64
        + offsets.machine.snapshot().len() as u64)
}

/// A stream as `replay` takes it (generated records never fail; a dump error stands in for
/// the impossible case).
fn as_dump(
    stream: RecordStream<'_>,
) -> impl Iterator<Item = Result<DumpRecord, crate::kcat::DumpError>> + '_ {
    stream.map(|r| r.map_err(|_| unreachable_error()))
}

/// Generated records never fail.
fn unreachable_error() -> crate::kcat::DumpError {
    crate::kcat::DumpError::Io(std::io::Error::other("generated records do not fail"))
}

fn tell_all(
    config: &[OwnedRecord],
    status: &[OwnedRecord],
    scale: &Scale,
    seed: u64,
) -> Result<history::Summary, CliError> {
    let mut sink = std::io::sink();
    history::tell(
        streams(config, status, scale, seed).into(),
        &Options::default(),
        &mut |entry| {
            serde_json::to_writer(&mut sink, &entry.to_json()).map_err(std::io::Error::other)
        },
    )
    .map_err(|e| CliError::Input(e.to_string()))
}

/// Measures history against replay over the synthetic topics of `scale`.
pub fn bench_history(scale: &Scale, seed: u64, runs: u32) -> Result<HistoryFigures, CliError> {
    let config = synth::config_topic(scale, seed).records;
    let status = synth::status_topic(scale, seed).records;
    // History first, on the fresh heap of this phase's process: its peak is its own. (The
    // replays' peaks are the config, status and offsets phases', each in a fresh process.)
    let base = memory::start_peak();
    let start = Instant::now();
    let summary = tell_all(&config, &status, scale, seed)?;
    let history_first = start.elapsed();
    let history_peak = memory::peak_growth(base);
    let start = Instant::now();
    replay_all(&config, &status, scale, seed)?;
    let replay_first = start.elapsed();
    let (replay_best, replayed) = best_of(runs.saturating_sub(1), || {
        replay_all(&config, &status, scale, seed)
    });
    replayed?;
    let (history_best, told) = best_of(runs.saturating_sub(1), || {
        tell_all(&config, &status, scale, seed)
    });
    told?;
    let replay = replay_best.min(replay_first).as_secs_f64();
    let history = history_best.min(history_first).as_secs_f64();
    Ok(HistoryFigures {
        history_records: summary.records,
        history_entries: summary.entries,
        history_replay_seconds: replay,
        history_seconds: history,
        history_to_replay_ratio: history / replay.max(f64::MIN_POSITIVE),
        history_peak_memory_bytes: history_peak,
    })
}
