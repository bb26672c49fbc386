//! The Python row of `connect-state bench --python`: the same synthetic topics replayed from
//! Python through the `connect_state` package (`bindings/python/bench.py`, `handle_records`
//! over records decoded before the clock starts), against this process's replay of them.

use std::path::Path;
use std::process::Command;

use serde::{Deserialize, Serialize};

use crate::bench::records::ratio;
use crate::common::CliError;
use crate::synth::Scale;

/// What the Python package measured, and its rates over ours. `null` without `--python`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct PythonFigures {
    /// The interpreter that ran bench.py.
    pub python_version: Option<String>,
    /// The `connect_state` package's version.
    pub python_package_version: Option<String>,
    /// Config replay throughput from Python (records per second).
    pub python_config_replay_records_per_sec: Option<f64>,
    /// Python's config replay throughput over ours.
    pub python_config_to_rust_ratio: Option<f64>,
    /// Status replay throughput from Python.
    pub python_status_replay_records_per_sec: Option<f64>,
    /// Python's status replay throughput over ours.
    pub python_status_to_rust_ratio: Option<f64>,
    /// Offsets replay throughput from Python.
    pub python_offsets_replay_records_per_sec: Option<f64>,
    /// Python's offsets replay throughput over ours.
    pub python_offsets_to_rust_ratio: Option<f64>,
}

/// Our figures the Python row is compared with, and the states the Python replay must reach.
pub struct Ours {
    /// Config replay throughput.
    pub config_rate: f64,
    /// Live connectors of the config topic.
    pub config_connectors: u64,
    /// Status replay throughput.
    pub status_rate: f64,
    /// Connectors of the status topic.
    pub status_connectors: u64,
    /// Offsets replay throughput, streamed once in batches as Python's is.
    pub offsets_rate: f64,
    /// Live offsets entries.
    pub offsets_live: u64,
}

#[derive(Deserialize)]
struct ScriptBench {
    python_version: String,
    package_version: String,
    config_records_per_sec: f64,
    config_connectors: u64,
    status_records_per_sec: f64,
    status_connectors: u64,
    offsets_records_per_sec: f64,
    offsets_live_entries: u64,
}

/// Writes the synthetic topics of `scale` and `seed`, runs `script` over them and compares
/// with `ours`; fails when the Python replay did not reach the same states.
pub fn bench_python(
    script: &Path,
    scale: &Scale,
    seed: u64,
    runs: u32,
    ours: &Ours,
) -> Result<PythonFigures, CliError> {
    let files = crate::bench::records::RecordFiles::write(scale, seed, "python")?;
    let mut bench_py = Command::new(script);
    bench_py.args(["--runs", &runs.to_string()]);
    let python: ScriptBench = files.run_over(
        bench_py,
        "--python",
        "; is the package installed? pip install ./bindings/python",
    )?;
    let reached = [
        (
            "config connectors",
            python.config_connectors,
            ours.config_connectors,
        ),
        (
            "status connectors",
            python.status_connectors,
            ours.status_connectors,
        ),
        (
            "live offsets entries",
            python.offsets_live_entries,
            ours.offsets_live,
        ),
    ];
    for (what, theirs, ours) in reached {
        if theirs != ours {
            return Err(CliError::Input(format!(
                "--python: the Python replay holds {theirs} {what}, ours {ours}"
            )));
        }
    }
    Ok(PythonFigures {
        python_version: Some(python.python_version),
        python_package_version: Some(python.package_version),
        python_config_replay_records_per_sec: Some(python.config_records_per_sec),
        python_config_to_rust_ratio: ratio(python.config_records_per_sec, ours.config_rate),
        python_status_replay_records_per_sec: Some(python.status_records_per_sec),
        python_status_to_rust_ratio: ratio(python.status_records_per_sec, ours.status_rate),
        python_offsets_replay_records_per_sec: Some(python.offsets_records_per_sec),
        python_offsets_to_rust_ratio: ratio(python.offsets_records_per_sec, ours.offsets_rate),
    })
}
