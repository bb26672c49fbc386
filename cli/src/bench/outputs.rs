//! The outputs benchmark: what writing a large answer costs in memory beyond the states it is
//! written from. The synthetic offsets topic (1,000,000 source partitions at the default
//! scale) is replayed twice, the second time with every offset changed; then `replay
//! --format json` of one side, `diff` of the two sides (JSON and table) and of one side with
//! itself are written to a sink, each measured as the peak growth of the resident set over
//! the states; and `offsets import` of a KIP-875 document with as many entries as the topic
//! has source partitions is measured per entry. Writing `replay --format json` of one side
//! (every entry, every connector's partitions and its KIP-875 listing) is also timed against
//! that side's replay: what `inspect` and `replay` spend after the records are read.

use std::io::Write;
use std::time::Instant;

use connect_state_ops::diff::{compare, Side};
use connect_state_ops::offsets_file::parse_offsets_file;
use engine::config::ConfigSnapshot;
use engine::offsets::{kip875, OffsetLog};
use serde::{Deserialize, Serialize};

use crate::bench::measure::memory;
use crate::common::CliError;
use crate::synth::{self, Scale};
use crate::view::{write_pretty, Json};

/// Outputs figures. Memory in bytes; `None` where the resident set cannot be measured.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct OutputsFigures {
    /// Live source partitions of each side.
    pub outputs_partitions: u64,
    /// Peak growth of replaying both sides: the states the outputs are written from.
    pub outputs_states_bytes: Option<u64>,
    /// Peak growth over the states of writing `replay --format json` of one side.
    pub outputs_replay_json_peak_bytes: Option<u64>,
    /// Seconds to replay one side.
    pub outputs_replay_seconds: f64,
    /// Seconds to write `replay --format json` of that side to a sink.
    pub outputs_replay_json_seconds: f64,
    /// Writing the JSON over replaying the side.
    pub outputs_replay_json_to_replay_ratio: f64,
    /// Peak growth over the states of `diff --format json` of the two sides (every partition
    /// differs).
    pub outputs_diff_json_peak_bytes: Option<u64>,
    /// Peak growth over the states of `diff`'s table of the two sides.
    pub outputs_diff_table_peak_bytes: Option<u64>,
    /// Peak growth over the states of `diff` of one side with itself (nothing differs).
    pub outputs_diff_same_peak_bytes: Option<u64>,
    /// Entries of the KIP-875 document `offsets import` reads.
    pub outputs_import_entries: u64,
    /// Peak growth of `offsets import`'s dry run (the document read, the records built and
    /// printed), per entry.
    pub outputs_import_bytes_per_entry: Option<f64>,
}

/// A writer that counts and drops what it is given.
#[derive(Default)]
struct Sink(u64);

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len() as u64;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The peak resident-set growth while `f` runs.
fn peak_of<R>(f: impl FnOnce() -> R) -> (Option<u64>, R) {
    let base = memory::start_peak();
    let result = f();
    (memory::peak_growth(base), result)
}

/// Measures the outputs at `scale` (see the module's documentation).
pub fn bench_outputs(scale: &Scale, seed: u64) -> Result<OutputsFigures, CliError> {
    let replay_side = |changed: bool| {
        let mut log = OffsetLog::new();
        for mut record in synth::offsets_topic(scale, seed) {
            if changed {
                if let Some(value) = record.value.as_mut() {
                    value.splice(1..1, *b"\"moved\":true,");
                }
            }
            let _ = log.handle_record(record.as_record());
            while log.poll_event().is_some() {}
        }
        log
    };
    let (states, (a, b, replay_seconds)) = peak_of(|| {
        let start = Instant::now();
        let a = replay_side(false);
        let seconds = start.elapsed().as_secs_f64();
        (a, replay_side(true), seconds)
    });
    let side = |log: &OffsetLog| Side {
        config: ConfigSnapshot::default(),
        offsets: Some(log.snapshot()),
    };
    let (side_a, side_b) = (side(&a), side(&b));
    let start = Instant::now();
    let (replay_json, written) = peak_of(|| write_pretty(&mut Sink::default(), &Json(&a)));
    let replay_json_seconds = start.elapsed().as_secs_f64();
    written?;
    let (diff_json, written) = peak_of(|| {
        let difference = compare(&side_a, &side_b, false);
        write_pretty(&mut Sink::default(), &difference)
    });
    written?;
    let (diff_table, written) = peak_of(|| {
        let difference = compare(&side_a, &side_b, false);
        crate::diff::render(&difference, &mut std::io::BufWriter::new(Sink::default()))
    });
    written?;
    let (diff_same, differs) = peak_of(|| compare(&side_a, &side_a, false).differs());
    if differs {
        return Err(CliError::Input("bench: a side differs from itself".into()));
    }
    let snapshot = a.snapshot();
    let entries = usize::try_from(scale.offsets_partitions).unwrap_or(usize::MAX);
    let document = import_document(entries);
    drop((side_a, side_b, b));
    let (import, imported) = peak_of(|| -> Result<usize, CliError> {
        let parsed = parse_offsets_file(&document).map_err(CliError::Input)?;
        let plan = kip875::alter_plan(&snapshot, "bench-import", &parsed, 25)
            .map_err(|e| CliError::Input(e.to_string()))?;
        drop(parsed);
        crate::offsets::print_records(&mut Sink::default(), &plan)?;
        Ok(plan.records().count())
    });
    if imported? != entries {
        return Err(CliError::Input("bench: the import lost entries".into()));
    }
    let entries = entries as u64;
    Ok(OutputsFigures {
        outputs_partitions: snapshot.len() as u64,
        outputs_states_bytes: states,
        outputs_replay_json_peak_bytes: replay_json,
        outputs_replay_seconds: replay_seconds,
        outputs_replay_json_seconds: replay_json_seconds,
        outputs_replay_json_to_replay_ratio: replay_json_seconds / replay_seconds,
        outputs_diff_json_peak_bytes: diff_json,
        outputs_diff_table_peak_bytes: diff_table,
        outputs_diff_same_peak_bytes: diff_same,
        outputs_import_entries: entries,
        outputs_import_bytes_per_entry: import.map(|bytes| bytes as f64 / entries.max(1) as f64),
    })
}

/// A KIP-875 document of `entries` distinct partitions (shaped as an S3 source's), as text.
fn import_document(entries: usize) -> String {
    let mut text = String::with_capacity(entries * 100 + 16);
    text.push_str("{\"offsets\":[");
    for j in 0..entries {
        if j > 0 {
            text.push(',');
        }
        text.push_str(&format!(
            "{{\"partition\":{{\"bucket\":\"lake-0001\",\"key\":\"events/2024/{:03}/{j:08}.json.gz\"}},\
             \"offset\":{{\"offset\":{j},\"eof\":false}}}}",
            j % 366
        ));
    }
    text.push_str("]}");
    text
}
