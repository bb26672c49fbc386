//! Logs written by generated writer operations, naive compaction, and replays through the core
//! and the reference fold: the pieces the model-based tests and the differential fuzz target share.

use std::collections::BTreeMap;

use engine::config::{ConfigLog, ConfigSnapshotJson};
use engine::Record;

use crate::ops::Op;
use crate::reference::RefConfig;

/// A log record: offset, key, value (`None`: a tombstone).
pub type LogRecord = (i64, Vec<u8>, Option<Vec<u8>>);

/// The log the operations write, each op cut after `crash` records when given (the writer died
/// there; the next operation is a new leader's).
pub fn write_log(ops: &[(Op, Option<usize>)]) -> Vec<LogRecord> {
    let mut log = Vec::new();
    for (op, crash) in ops {
        let records = op.records();
        let keep = crash.map_or(records.len(), |k| k.min(records.len()));
        for r in records.into_iter().take(keep) {
            log.push((log.len() as i64, r.key, r.value));
        }
    }
    log
}

/// Naive compaction up to `horizon`: a record below the horizon goes when a later record with
/// the same key exists below the horizon. Offsets are kept; tombstones are not purged.
pub fn compact(log: &[LogRecord], horizon: i64) -> Vec<LogRecord> {
    let mut last_below: BTreeMap<&[u8], i64> = BTreeMap::new();
    for (offset, key, _) in log.iter().filter(|(o, _, _)| *o < horizon) {
        last_below.insert(key, *offset);
    }
    log.iter()
        .filter(|(offset, key, _)| {
            *offset >= horizon || last_below.get(key.as_slice()) == Some(offset)
        })
        .cloned()
        .collect()
}

/// The core's view of one log record.
pub fn record(r: &LogRecord) -> Record<'_> {
    Record::new(&r.1, r.2.as_deref(), r.0)
}

/// A fresh config machine fed the whole log. Panics if the core refuses a record (generated
/// logs hold only records Connect can read).
pub fn replay(log: &[LogRecord]) -> ConfigLog {
    let mut machine = ConfigLog::new();
    for r in log {
        machine
            .handle_record(record(r))
            .expect("a generated record is accepted");
    }
    machine
}

/// The core's snapshot in the JSON contract, without the session key (the reference does not
/// model it).
pub fn contract_without_session_key(machine: &ConfigLog) -> serde_json::Value {
    let mut value =
        serde_json::to_value(ConfigSnapshotJson(&machine.snapshot())).expect("snapshots serialize");
    if let Some(object) = value.as_object_mut() {
        object.remove("session_key");
    }
    value
}

/// The reference fold of the log. Keys and values that are not UTF-8 are read lossily (the
/// generators only write UTF-8).
pub fn reference(log: &[LogRecord]) -> RefConfig {
    let mut model = RefConfig::default();
    for (offset, key, value) in log {
        let value = value.as_deref().map(String::from_utf8_lossy);
        model.apply(&String::from_utf8_lossy(key), value.as_deref(), *offset);
    }
    model
}

/// Makes batch and version tags unique by position, so "one batch" is checkable.
pub fn tag(ops: Vec<(Op, Option<usize>)>) -> Vec<(Op, Option<usize>)> {
    ops.into_iter()
        .enumerate()
        .map(|(i, (op, crash))| (op.tagged(i as u32), crash))
        .collect()
}
