//! The Java row of `connect-state bench --java`: the same synthetic topics replayed through
//! Kafka Connect's own stores by the Java oracle (`tests/java-oracle`, `oracle bench`), after
//! JIT warm-up, best of several runs, and the Java heap the offsets store holds.
//!
//! The topics go to the oracle as record files ([`crate::bench::records`]).

use std::path::Path;
use std::process::Command;

use serde::{Deserialize, Serialize};

use crate::bench::records::ratio;
use crate::common::CliError;
use crate::synth::Scale;

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
    let files = crate::bench::records::RecordFiles::write(scale, seed, "java")?;
    // The JVM's own default collector (G1 on this kind of machine), as a worker runs, with the
    // heap sized up front so that growing it is not what is measured.
    let mut oracle_bench = Command::new(oracle);
    oracle_bench
        .env("ORACLE_JAVA_OPTS", "-Xms2g -Xmx8g")
        .args(["bench", "--runs", "5", "--warmup", "3"]);
    let java: OracleBench = files.run_over(oracle_bench, "--java", "")?;
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
