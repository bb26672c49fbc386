//! The replay rows: each topic's replay throughput and memory, the parse floors, the
//! checkpoint restart and the offsets tail with snapshots held.

use engine::OwnedRecord;
use serde::{Deserialize, Serialize};
use std::time::{Duration, Instant};

use engine::config::ConfigLog;
use engine::offsets::OffsetLog;
use engine::status::StatusLog;
use engine::TopicMachine;

use super::measure::{best_of, memory, rate, ratio};
use super::{ConfigFigures, OffsetsFigures, StatusFigures, TAIL_RECORDS};
use crate::common::CliError;
use crate::synth::{self, Scale};

/// Replays `records` through a fresh machine as a starting worker does (no events), and marks it
/// caught up.
pub fn replay<M: TopicMachine + Default>(records: &[OwnedRecord]) -> M {
    let mut machine = M::default();
    for record in records {
        // Generated records are never refused (offsets and partitions are not negative).
        let _ = machine.handle_record(record.as_record());
        while machine.poll_event().is_some() {}
    }
    machine.mark_caught_up();
    machine
}

/// The parse floor: parses every value with the core's JSON reader and drops it; no state
/// machine. Returns how many values parsed.
pub fn parse_floor(records: &[OwnedRecord]) -> usize {
    records
        .iter()
        .filter_map(|r| r.value.as_deref())
        .filter(|v| engine::json::parse(v).is_ok())
        .count()
}

/// The SIMD floor: parses every value into a `sonic-rs` DOM (validating) and drops it. Returns
/// how many values parsed. The bench's yardstick only: the core reads JSON as Jackson does.
pub fn simd_floor(records: &[OwnedRecord]) -> usize {
    records
        .iter()
        .filter_map(|r| r.value.as_deref())
        .filter(|v| sonic_rs::from_slice::<sonic_rs::Value>(v).is_ok())
        .count()
}

/// A worker's restart from a config checkpoint: restore it, then replay the tail.
pub fn restart_config(checkpoint: &[u8], tail: &[OwnedRecord]) -> Result<ConfigLog, CliError> {
    let mut log = ConfigLog::restore(checkpoint)
        .map_err(|e| CliError::Input(format!("the checkpoint was refused: {e}")))?;
    for record in tail {
        let _ = log.handle_record(record.as_record());
        while log.poll_event().is_some() {}
    }
    log.mark_caught_up();
    Ok(log)
}

/// The offsets topic streamed into a fresh log in batches of generated records (generation
/// untimed), marked caught up: the log, the records, the time applying them took, and the
/// resident-set growth (every entry in memory touched for the first time).
fn stream_offsets(scale: &Scale, seed: u64) -> (OffsetLog, u64, Duration, Option<u64>) {
    const BATCH: usize = 8_192;
    let mut stream = synth::offsets_topic(scale, seed);
    let mut batch: Vec<OwnedRecord> = Vec::with_capacity(BATCH);
    let base = memory::rss();
    let mut log = OffsetLog::new();
    let mut busy = Duration::ZERO;
    let mut records = 0u64;
    loop {
        batch.clear();
        batch.extend(stream.by_ref().take(BATCH));
        if batch.is_empty() {
            break;
        }
        let start = Instant::now();
        for record in &batch {
            let _ = log.handle_record(record.as_record());
            while log.poll_event().is_some() {}
        }
        busy += start.elapsed();
        records += batch.len() as u64;
    }
    drop(batch);
    let start = Instant::now();
    log.mark_caught_up();
    busy += start.elapsed();
    let after = memory::rss();
    let growth = after.zip(base).map(|(a, b)| a.saturating_sub(b));
    (log, records, busy, growth)
}

/// The `offsets-memory` phase's figure.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OffsetsMemory {
    /// Resident-set growth from streaming the offsets topic into a fresh log.
    pub offsets_memory_bytes: Option<u64>,
}

/// The offsets topic's state alone: its resident-set growth, streamed into a fresh log (the
/// `offsets` phase runs this in a process whose allocator returns freed memory at once).
pub fn bench_offsets_memory(scale: &Scale, seed: u64) -> Result<OffsetsMemory, CliError> {
    let (log, records, _, growth) = stream_offsets(scale, seed);
    let counts = synth::offsets_counts(scale.offsets_partitions, seed);
    if records != counts.records || log.snapshot().len() as u64 != counts.live {
        return Err(CliError::Input(
            "the offsets topic replayed to a different state".into(),
        ));
    }
    Ok(OffsetsMemory {
        offsets_memory_bytes: growth,
    })
}

/// The offsets topic's rows. First it is streamed into a fresh `OffsetLog` in batches
/// (generation untimed), measuring the resident-set growth and the cold throughput (every
/// entry in memory touched for the first time); the tail rows use that state. Then the whole
/// topic, held in memory, is replayed into fresh logs `runs` times and the best counts: the
/// replay throughput, measured as `--java` measures Java's stores (the records in memory, the
/// best of warm runs). The memory rows are this process's resident-set growth; the bench
/// replaces them with the `offsets-memory` phase's when it can run that
/// ([`OffsetsFigures::set_memory`]).
pub fn bench_offsets(scale: &Scale, seed: u64, runs: u32) -> Result<OffsetsFigures, CliError> {
    let counts = synth::offsets_counts(scale.offsets_partitions, seed);
    let (mut log, records, busy, growth) = stream_offsets(scale, seed);
    let (live, raw) = {
        // Dropped before the tail runs: a snapshot held there would be copied from.
        let snapshot = log.snapshot();
        let raw: u64 = snapshot
            .entries()
            .map(|(k, v)| (k.map_or(0, <[u8]>::len) + v.value().len()) as u64)
            .sum();
        (snapshot.len() as u64, raw)
    };
    if records != counts.records || live != counts.live {
        return Err(CliError::Input(format!(
            "the offsets topic replayed to {live} live entries from {records} records, expected \
             {} from {}",
            counts.live, counts.records
        )));
    }
    let (tail, tail_with_snapshot) = bench_tail(&mut log, scale, seed);
    drop(log);

    let records_held: Vec<OwnedRecord> = synth::offsets_topic(scale, seed).collect();
    let (best, warm) = best_of(runs, || replay::<OffsetLog>(&records_held));
    if warm.snapshot().len() as u64 != counts.live {
        return Err(CliError::Input(
            "the offsets topic held in memory replayed to a different state".into(),
        ));
    }
    drop(warm);
    let mut figures = OffsetsFigures {
        offsets_source_partitions: scale.offsets_partitions,
        offsets_records: records,
        offsets_live_entries: live,
        offsets_live_raw_bytes: raw,
        offsets_replay_records_per_sec: rate(records, best),
        offsets_stream_replay_records_per_sec: rate(records, busy),
        offsets_memory_bytes: None,
        offsets_resident_bytes: growth,
        offsets_memory_bytes_per_entry: None,
        offsets_memory_ratio: None,
        tail_record_seconds: tail,
        tail_with_snapshot_record_seconds: tail_with_snapshot,
        tail_with_snapshot_ratio: ratio(tail_with_snapshot, tail),
    };
    figures.set_memory(growth);
    Ok(figures)
}

impl OffsetsFigures {
    /// Sets the memory rows from `bytes`, the live state's resident-set growth.
    pub fn set_memory(&mut self, bytes: Option<u64>) {
        let live = self.offsets_live_entries as f64;
        let raw = self.offsets_live_raw_bytes as f64;
        self.offsets_memory_bytes = bytes;
        self.offsets_memory_bytes_per_entry = bytes.map(|g| ratio(g as f64, live));
        self.offsets_memory_ratio = bytes.map(|g| ratio(g as f64, raw));
    }
}

/// Per-record seconds of tail updates applied to the replayed `log`, without and with a
/// snapshot held after every record (the best of five alternating runs each). The updates
/// are the topic's first records again (values of live keys), placed after the partitions'
/// ends.
fn bench_tail(log: &mut OffsetLog, scale: &Scale, seed: u64) -> (f64, f64) {
    let mut updates = synth::offsets_topic(scale, seed).filter(|r| r.value.is_some());
    let (mut plain, mut held) = (Duration::MAX, Duration::MAX);
    for _ in 0..5 {
        for keep_snapshots in [false, true] {
            let mut tail: Vec<OwnedRecord> = updates.by_ref().take(TAIL_RECORDS).collect();
            let mut next = std::collections::BTreeMap::new();
            for record in &mut tail {
                let offset = next
                    .entry(record.partition)
                    .or_insert_with(|| log.next_fetch_offset(record.partition));
                record.offset = *offset;
                *offset += 1;
            }
            let start = Instant::now();
            let mut snapshot = keep_snapshots.then(|| log.snapshot());
            for record in &tail {
                let _ = log.handle_record(record.as_record());
                while log.poll_event().is_some() {}
                if keep_snapshots {
                    snapshot = Some(log.snapshot());
                }
            }
            drop(snapshot);
            let time = start.elapsed();
            let best = if keep_snapshots {
                &mut held
            } else {
                &mut plain
            };
            *best = (*best).min(time);
        }
    }
    let per_record = |d: Duration| d.as_secs_f64() / TAIL_RECORDS as f64;
    (per_record(plain), per_record(held))
}

/// The config topic's rows: replay (its first run in a fresh heap, then the best of `runs`),
/// the two parse floors and the restart from a checkpoint at 99% of the topic.
pub fn bench_config(scale: &Scale, seed: u64, runs: u32) -> Result<ConfigFigures, CliError> {
    let topic = synth::config_topic(scale, seed);
    let records = &topic.records;
    let n = records.len() as u64;
    let mut f = ConfigFigures {
        config_connectors: topic.task_counts.len() as u64,
        config_rounds: scale.config_rounds as u64,
        config_tasks: topic.task_counts.values().map(|&c| c as u64).sum(),
        config_records: n,
        config_bytes: records.iter().map(|r| r.raw_len() as u64).sum(),
        ..ConfigFigures::default()
    };

    // The first replay also measures the peak memory.
    let base = memory::start_peak();
    let start = Instant::now();
    let log: ConfigLog = replay(records);
    let first = start.elapsed();
    f.config_replay_peak_memory_bytes = memory::peak_growth(base);
    check_config(&log, &topic)?;
    drop(log);

    let (best, log) = best_of(runs.saturating_sub(1), || replay::<ConfigLog>(records));
    drop(log);
    let full = best.min(first);
    f.config_replay_records_per_sec = rate(n, full);
    f.config_replay_mb_per_sec = f.config_bytes as f64 / 1e6 / full.as_secs_f64().max(1e-9);
    f.full_replay_seconds = full.as_secs_f64();

    let (floor, parsed) = best_of(runs, || parse_floor(records));
    if parsed == 0 {
        return Err(CliError::Input("the parse floor parsed nothing".into()));
    }
    f.parse_floor_records_per_sec = rate(n, floor);
    f.replay_to_floor_ratio = ratio(
        f.config_replay_records_per_sec,
        f.parse_floor_records_per_sec,
    );
    let (simd, simd_parsed) = best_of(runs, || simd_floor(records));
    if simd_parsed != parsed {
        return Err(CliError::Input(format!(
            "the SIMD floor parsed {simd_parsed} values, the core's reader {parsed}"
        )));
    }
    f.simd_floor_records_per_sec = rate(n, simd);
    f.replay_to_simd_floor_ratio = ratio(
        f.config_replay_records_per_sec,
        f.simd_floor_records_per_sec,
    );

    // A checkpoint at 99% of the topic, then a restart that replays the 1% tail.
    let cut = records.len() - records.len() / 100;
    let checkpoint = replay::<ConfigLog>(&records[..cut]).checkpoint();
    let tail = &records[cut..];
    let (restart, restarted) = best_of(runs, || restart_config(&checkpoint, tail));
    check_config(&restarted?, &topic)?;
    f.checkpoint_bytes = checkpoint.len() as u64;
    f.checkpoint_tail_records = tail.len() as u64;
    f.checkpoint_restart_seconds = restart.as_secs_f64();
    f.checkpoint_speedup = ratio(full.as_secs_f64(), restart.as_secs_f64());
    Ok(f)
}

/// A replayed config topic must hold what the generator committed.
pub(crate) fn check_config(log: &ConfigLog, topic: &synth::ConfigTopic) -> Result<(), CliError> {
    let snapshot = log.snapshot();
    let consistent = snapshot.inconsistent_connectors().next().is_none();
    let counts = topic
        .task_counts
        .iter()
        .all(|(c, &n)| snapshot.task_count(c) == n);
    if snapshot.connectors().count() != topic.task_counts.len() || !consistent || !counts {
        return Err(CliError::Input(
            "the synthetic config topic did not replay to the generated connectors".into(),
        ));
    }
    Ok(())
}

/// The status topic's rows: replay throughput and its peak memory.
pub fn bench_status(scale: &Scale, seed: u64, runs: u32) -> Result<StatusFigures, CliError> {
    let topic = synth::status_topic(scale, seed);
    let n = topic.records.len() as u64;
    let base = memory::start_peak();
    let start = Instant::now();
    let log: StatusLog = replay(&topic.records);
    let first = start.elapsed();
    let peak = memory::peak_growth(base);
    if log.snapshot().connectors().count() != topic.connectors {
        return Err(CliError::Input(
            "the synthetic status topic did not replay to the generated connectors".into(),
        ));
    }
    drop(log);
    let (best, log) = best_of(runs.saturating_sub(1), || {
        replay::<StatusLog>(&topic.records)
    });
    drop(log);
    Ok(StatusFigures {
        status_connectors: topic.connectors as u64,
        status_records: n,
        status_replay_records_per_sec: rate(n, best.min(first)),
        status_replay_peak_memory_bytes: peak,
    })
}
