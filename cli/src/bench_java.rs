//! The Java row of `connect-state bench --java`: the same synthetic topics replayed through
//! Kafka Connect's own stores by the Java oracle (`tests/java-oracle`, `oracle bench`), after
//! JIT warm-up, best of several runs, and the Java heap the offsets store holds.
//!
//! The topics go to the oracle as record files (big-endian frames: `i32 partition`,
//! `i64 offset`, `i32 key length` or -1, the key, `i32 value length` or -1, the value).

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::Command;

use serde::{Deserialize, Serialize};

use crate::synth::{self, Scale, SynthRecord};
use crate::CliError;

/// What the Java stores measured, and our figures over theirs. `null` without `--java`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct JavaFigures {
    /// The JVM that ran the oracle.
    pub java_version: Option<String>,
    /// The Kafka version of the stores.
    pub java_kafka_version: Option<String>,
    /// Java's config topic replay throughput (records per second).
    pub java_config_replay_records_per_sec: Option<f64>,
    /// Our config replay throughput over Java's.
    pub config_replay_to_java_ratio: Option<f64>,
    /// Java's status topic replay throughput.
    pub java_status_replay_records_per_sec: Option<f64>,
    /// Our status replay throughput over Java's.
    pub status_replay_to_java_ratio: Option<f64>,
    /// Java's offsets topic replay throughput.
    pub java_offsets_replay_records_per_sec: Option<f64>,
    /// Our offsets replay throughput over Java's.
    pub offsets_replay_to_java_ratio: Option<f64>,
    /// Java heap the offsets store holds after the whole topic (after a full collection).
    pub java_offsets_heap_bytes: Option<u64>,
    /// `java_offsets_heap_bytes` per live entry.
    pub java_offsets_heap_bytes_per_entry: Option<f64>,
    /// Our offsets memory over Java's heap for the same state.
    pub offsets_memory_to_java_ratio: Option<f64>,
}

/// Our figures the Java row is compared with.
pub struct Ours {
    /// Config replay throughput.
    pub config_rate: f64,
    /// Status replay throughput.
    pub status_rate: f64,
    /// Offsets replay throughput.
    pub offsets_rate: f64,
    /// Offsets memory, if measured.
    pub offsets_memory: Option<u64>,
    /// Live offsets entries.
    pub offsets_live: u64,
}

fn frame(out: &mut impl Write, r: &SynthRecord) -> std::io::Result<()> {
    out.write_all(&r.partition.to_be_bytes())?;
    out.write_all(&r.offset.to_be_bytes())?;
    let len = |b: &[u8]| i32::try_from(b.len()).unwrap_or(i32::MAX);
    out.write_all(&len(&r.key).to_be_bytes())?;
    out.write_all(&r.key)?;
    match &r.value {
        Some(v) => {
            out.write_all(&len(v).to_be_bytes())?;
            out.write_all(v)?;
        }
        None => out.write_all(&(-1i32).to_be_bytes())?,
    }
    Ok(())
}

fn write_file<'a>(
    path: &Path,
    records: impl IntoIterator<Item = &'a SynthRecord>,
) -> Result<(), CliError> {
    let mut out = BufWriter::new(std::fs::File::create(path)?);
    for r in records {
        frame(&mut out, r)?;
    }
    out.flush()?;
    Ok(())
}

/// A scratch directory removed when dropped.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[derive(Deserialize)]
struct OracleBench {
    java_version: String,
    kafka_version: String,
    config_records_per_sec: f64,
    status_records_per_sec: f64,
    offsets_records_per_sec: f64,
    offsets_heap_bytes: u64,
    offsets_live_entries: u64,
}

fn ratio(a: f64, b: f64) -> Option<f64> {
    (b > 0.0).then(|| a / b)
}

/// Writes the synthetic topics of `scale` and `seed`, runs `oracle bench` over them and
/// compares with `ours`.
pub fn bench_java(
    oracle: &Path,
    scale: &Scale,
    seed: u64,
    ours: &Ours,
) -> Result<JavaFigures, CliError> {
    if !oracle.exists() {
        return Err(CliError::Input(format!(
            "--java: {} does not exist (the oracle is tests/java-oracle/oracle in the \
             connect-state repository; it needs a JDK 17+ and Maven)",
            oracle.display()
        )));
    }
    let millis = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    let dir = std::env::temp_dir().join(format!(
        "connect-state-bench-java-{}-{millis}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir)?;
    let scratch = Scratch(dir);
    let file = |name: &str| scratch.0.join(name);
    write_file(&file("config"), &synth::config_topic(scale, seed).records)?;
    write_file(&file("status"), &synth::status_topic(scale, seed).records)?;
    {
        let mut out = BufWriter::new(std::fs::File::create(file("offsets"))?);
        for r in synth::offsets_topic(scale, seed) {
            frame(&mut out, &r)?;
        }
        out.flush()?;
    }
    let arg = |name: &str| format!("{name}={}", file(name).display());
    // The JVM's own default collector (G1 on this kind of machine), as a worker runs, with the
    // heap sized up front so that growing it is not what is measured.
    let output = Command::new(oracle)
        .env("ORACLE_JAVA_OPTS", "-Xms2g -Xmx8g")
        .args(["bench", "--runs", "5", "--warmup", "3"])
        .args([arg("config"), arg("status"), arg("offsets")])
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|e| CliError::Input(format!("--java: cannot run {}: {e}", oracle.display())))?;
    if !output.status.success() {
        return Err(CliError::Input(format!(
            "--java: {} bench failed ({})",
            oracle.display(),
            output.status
        )));
    }
    let java: OracleBench = serde_json::from_slice(&output.stdout)
        .map_err(|e| CliError::Input(format!("--java: unreadable oracle output: {e}")))?;
    if java.offsets_live_entries != ours.offsets_live {
        return Err(CliError::Input(format!(
            "--java: Java's offsets store holds {} live entries, ours {}",
            java.offsets_live_entries, ours.offsets_live
        )));
    }
    let per_entry = ratio(
        java.offsets_heap_bytes as f64,
        java.offsets_live_entries as f64,
    );
    Ok(JavaFigures {
        java_version: Some(java.java_version),
        java_kafka_version: Some(java.kafka_version),
        java_config_replay_records_per_sec: Some(java.config_records_per_sec),
        config_replay_to_java_ratio: ratio(ours.config_rate, java.config_records_per_sec),
        java_status_replay_records_per_sec: Some(java.status_records_per_sec),
        status_replay_to_java_ratio: ratio(ours.status_rate, java.status_records_per_sec),
        java_offsets_replay_records_per_sec: Some(java.offsets_records_per_sec),
        offsets_replay_to_java_ratio: ratio(ours.offsets_rate, java.offsets_records_per_sec),
        java_offsets_heap_bytes: Some(java.offsets_heap_bytes),
        java_offsets_heap_bytes_per_entry: per_entry,
        offsets_memory_to_java_ratio: ours
            .offsets_memory
            .and_then(|m| ratio(m as f64, java.offsets_heap_bytes as f64)),
    })
}
