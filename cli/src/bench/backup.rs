//! The backup benchmark: the synthetic config and offsets topics (10,000 connectors and
//! 10,000,000 source partitions at full scale) replayed into their states, then backed up to a
//! temporary file, and that document restored into an empty target: read and checked once
//! (`verify`), planned, and read again into every record the restore writes (the write steps
//! built and dropped: the writes themselves are the transport's). Each part's time and peak
//! resident-set growth over the states is measured, beside the states' own size and the
//! document's.

use std::fs::File;
use std::io::{BufReader, BufWriter};
use std::path::PathBuf;
use std::time::Instant;

use connect_state_ops::backup::document::{DocumentReader, Header, Source, DEFAULT_MAX_LINE_BYTES};
use connect_state_ops::backup::restore::{self, RestoreOptions, Steps, Target};
use connect_state_ops::backup::take::{write_backup, BackupOptions, State};
use engine::config::{ConfigLog, ConfigSnapshot};
use engine::offsets::{OffsetLog, OffsetSnapshot};
use serde::{Deserialize, Serialize};

use crate::bench::measure::memory;
use crate::common::CliError;
use crate::synth::{self, Scale};

/// Backup figures. Memory in bytes; `None` where the resident set cannot be measured.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct BackupFigures {
    /// Connectors in the document (with a config, or with source offsets only).
    pub backup_connectors: u64,
    /// Source partitions in the document.
    pub backup_source_partitions: u64,
    /// Resident-set growth of the states backed up (the config and offsets topics replayed,
    /// their records dropped).
    pub backup_state_bytes: Option<u64>,
    /// Writing the document from the states.
    pub backup_seconds: f64,
    /// Peak growth over the states while writing it.
    pub backup_peak_bytes: Option<u64>,
    /// The document's size.
    pub backup_document_bytes: u64,
    /// Restoring it into an empty target: checked, planned, and every record built.
    pub restore_seconds: f64,
    /// Peak growth over the states while restoring.
    pub restore_peak_bytes: Option<u64>,
    /// Records the restore writes (config and offsets topics).
    pub restore_records: u64,
}

/// A temporary file removed when dropped.
struct TempFile(PathBuf);

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Measures backup and restore at `scale` (see the module's documentation).
pub fn bench_backup(scale: &Scale, seed: u64) -> Result<BackupFigures, CliError> {
    let base = memory::rss();
    let (config, offsets) = states(scale, seed);
    let state_bytes = memory::rss()
        .zip(base)
        .map(|(after, before)| after.saturating_sub(before));
    let file = TempFile(std::env::temp_dir().join(format!(
        "connect-state-bench-backup-{}.jsonl",
        std::process::id()
    )));

    let base = memory::start_peak();
    let started = Instant::now();
    let state = State {
        config: &config,
        offsets: Some(&offsets),
        status: None,
    };
    let options = BackupOptions {
        allow_inconsistent: true,
        ..BackupOptions::default()
    };
    let out = BufWriter::with_capacity(1 << 20, File::create(&file.0)?);
    let (_, written) = write_backup(out, &header(), &state, &options)
        .map_err(|e| CliError::Input(format!("bench: the backup failed: {e}")))?;
    let backup_seconds = started.elapsed().as_secs_f64();
    let backup_peak = memory::peak_growth(base);

    let empty_config = ConfigSnapshot::default();
    let empty_offsets = OffsetSnapshot::default();
    let base = memory::start_peak();
    let started = Instant::now();
    let open = || -> Result<_, CliError> {
        let reader = BufReader::with_capacity(1 << 20, File::open(&file.0)?);
        DocumentReader::open(reader, DEFAULT_MAX_LINE_BYTES)
            .map_err(|e| CliError::Input(format!("bench: the backup reads back wrong: {e}")))
    };
    let failed = |e: restore::RestoreError| CliError::Input(format!("bench: the restore: {e}"));
    let options = RestoreOptions::default();
    let verified = restore::verify(open()?, &options).map_err(failed)?;
    let target = Target {
        config: &empty_config,
        offsets: &empty_offsets,
        offsets_partitions: 25,
    };
    let plan = restore::plan(&verified, &target, &options).map_err(failed)?;
    let mut records = 0u64;
    for step in Steps::new(&plan, open()?) {
        records += step.map_err(failed)?.records() as u64;
    }
    let restore_seconds = started.elapsed().as_secs_f64();
    let restore_peak = memory::peak_growth(base);

    if written.source_partitions != offsets.len() as u64 {
        return Err(CliError::Input(format!(
            "bench: the backup holds {} source partitions of {}",
            written.source_partitions,
            offsets.len()
        )));
    }
    Ok(BackupFigures {
        backup_connectors: written.connectors,
        backup_source_partitions: written.source_partitions,
        backup_state_bytes: state_bytes,
        backup_seconds,
        backup_peak_bytes: backup_peak,
        backup_document_bytes: written.bytes,
        restore_seconds,
        restore_peak_bytes: restore_peak,
        restore_records: records,
    })
}

/// The config and offsets states of the synthetic topics.
fn states(scale: &Scale, seed: u64) -> (ConfigSnapshot, OffsetSnapshot) {
    let mut config = ConfigLog::new();
    for record in &synth::config_topic(scale, seed).records {
        let _ = config.handle_record(record.as_record());
        while config.poll_event().is_some() {}
    }
    let mut offsets = OffsetLog::new();
    for record in synth::offsets_topic(scale, seed) {
        let _ = offsets.handle_record(record.as_record());
        while offsets.poll_event().is_some() {}
    }
    (config.snapshot(), offsets.snapshot())
}

fn header() -> Header {
    let source = Source {
        kind: "bench".into(),
        bootstrap_servers: None,
        topics: Default::default(),
    };
    Header::new(
        crate::backup::tool(),
        jiff::Timestamp::now().to_string(),
        source,
    )
}
