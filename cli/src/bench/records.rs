//! The synthetic topics written as record files, for the benchmarks that replay them outside
//! this process (`bench --java`, `bench --python`), so that every side replays the very same
//! records.
//!
//! A record file is a sequence of big-endian frames: `i32 partition`, `i64 offset`,
//! `i32 key length`, the key, `i32 value length` or -1 for a tombstone, the value.

use engine::OwnedRecord;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde::de::DeserializeOwned;

use crate::common::CliError;
use crate::synth::{self, Scale};

/// The three topics' record files in a scratch directory, removed when dropped.
pub struct RecordFiles {
    dir: PathBuf,
}

impl RecordFiles {
    /// Writes the synthetic topics of `scale` and `seed` (the offsets topic streamed, never all
    /// in memory) into a fresh directory named after `purpose`.
    pub fn write(scale: &Scale, seed: u64, purpose: &str) -> Result<Self, CliError> {
        let millis = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis());
        let dir = std::env::temp_dir().join(format!(
            "connect-state-bench-{purpose}-{}-{millis}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir)?;
        let files = Self { dir };
        write_file(
            &files.path("config"),
            &synth::config_topic(scale, seed).records,
        )?;
        write_file(
            &files.path("status"),
            &synth::status_topic(scale, seed).records,
        )?;
        write_file(&files.path("offsets"), synth::offsets_topic(scale, seed))?;
        Ok(files)
    }

    /// The file of `topic` (`config`, `status` or `offsets`).
    pub fn path(&self, topic: &str) -> PathBuf {
        self.dir.join(topic)
    }

    /// The three files as `topic=path` arguments, as the oracle and bench.py take them.
    pub fn args(&self) -> [String; 3] {
        ["config", "status", "offsets"].map(|t| format!("{t}={}", self.path(t).display()))
    }

    /// Runs `command` (an outside replay: the oracle, bench.py) with the three files as its
    /// last arguments and reads its standard output as one JSON object; its standard error
    /// goes to ours. Errors start with `option` (the bench option) and a failure adds `hint`.
    pub fn run_over<T: DeserializeOwned>(
        &self,
        mut command: Command,
        option: &str,
        hint: &str,
    ) -> Result<T, CliError> {
        let program = command.get_program().to_string_lossy().into_owned();
        let output = command
            .args(self.args())
            .stderr(Stdio::inherit())
            .output()
            .map_err(|e| CliError::Input(format!("{option}: cannot run {program}: {e}")))?;
        if !output.status.success() {
            return Err(CliError::Input(format!(
                "{option}: {program} failed ({}{hint})",
                output.status
            )));
        }
        serde_json::from_slice(&output.stdout)
            .map_err(|e| CliError::Input(format!("{option}: unreadable output of {program}: {e}")))
    }
}

/// `a / b`, none when `b` is not positive: a ratio of an outside replay's figure and ours.
pub fn ratio(a: f64, b: f64) -> Option<f64> {
    (b > 0.0).then(|| a / b)
}

impl Drop for RecordFiles {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn frame(out: &mut impl Write, r: &OwnedRecord) -> std::io::Result<()> {
    out.write_all(&r.partition.to_be_bytes())?;
    out.write_all(&r.offset.to_be_bytes())?;
    let len = |b: &[u8]| i32::try_from(b.len()).unwrap_or(i32::MAX);
    for part in [&r.key, &r.value] {
        match part {
            Some(bytes) => {
                out.write_all(&len(bytes).to_be_bytes())?;
                out.write_all(bytes)?;
            }
            None => out.write_all(&(-1i32).to_be_bytes())?,
        }
    }
    Ok(())
}

fn write_file<R: std::borrow::Borrow<OwnedRecord>>(
    path: &Path,
    records: impl IntoIterator<Item = R>,
) -> Result<(), CliError> {
    let mut out = BufWriter::new(std::fs::File::create(path)?);
    for r in records {
        frame(&mut out, r.borrow())?;
    }
    out.flush()?;
    Ok(())
}
