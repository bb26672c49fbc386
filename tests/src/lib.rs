//! Shared helpers of connect-state's cross-crate tests: the JSON conformance vectors.
//!
//! A vector (`tests/vectors/*.json`) holds records in and the expected snapshot and events out:
//!
//! ```json
//! {"description": "...", "topic": "config", "live_from": 3,
//!  "records": [{"offset": 0, "key": "connector-a", "payload": "{...}"}],
//!  "expected": {"snapshot": {...}, "events": [...]}}
//! ```
//!
//! Records use kcat's `-J` member names (`offset`, `key`, `payload`, optional `partition`), so the
//! same vector feeds the library directly and the CLI through a dump file.

use std::path::{Path, PathBuf};

use engine::config::{ConfigLog, EventJson, SnapshotJson};
use engine::Record;
use serde::Deserialize;
use serde_json::Value;

/// One record of a vector, in kcat's member names.
#[derive(Debug, Clone, Deserialize)]
pub struct VectorRecord {
    /// Offset.
    pub offset: i64,
    /// Partition (default 0).
    #[serde(default)]
    pub partition: i32,
    /// Key text, or null.
    pub key: Option<String>,
    /// Value text, or null for a tombstone.
    pub payload: Option<String>,
}

/// A conformance vector.
#[derive(Debug, Clone, Deserialize)]
pub struct Vector {
    /// What it checks.
    pub description: String,
    /// The topic (`config`).
    pub topic: String,
    /// Records below this offset are catch-up; later ones produce events.
    #[serde(default)]
    pub live_from: Option<i64>,
    /// Records in.
    pub records: Vec<VectorRecord>,
    /// `{"snapshot": ..., "events": [...]}` out.
    pub expected: Value,
}

impl Vector {
    /// The records as kcat JSON lines.
    pub fn kcat_lines(&self) -> String {
        self.records
            .iter()
            .map(|r| {
                serde_json::json!({
                    "topic": "connect-configs", "partition": r.partition, "offset": r.offset,
                    "key": r.key, "payload": r.payload,
                })
                .to_string()
                    + "\n"
            })
            .collect()
    }

    /// Runs the vector through the library: `{"snapshot": ..., "events": [...]}`.
    pub fn run_library(&self) -> Value {
        assert_eq!(self.topic, "config", "only config vectors exist so far");
        let mut log = ConfigLog::new();
        let mut events = Vec::new();
        for r in &self.records {
            if !log.is_caught_up() && self.live_from.is_some_and(|from| r.offset >= from) {
                log.mark_caught_up();
            }
            let record = Record {
                key: r.key.as_deref().map(str::as_bytes),
                value: r.payload.as_deref().map(str::as_bytes),
                offset: r.offset,
                partition: r.partition,
            };
            log.handle_record(record)
                .expect("vector records are well-formed");
            events.extend(core::iter::from_fn(|| log.poll_event()));
        }
        let events: Vec<Value> = events
            .iter()
            .map(|e| serde_json::to_value(EventJson(e)).expect("events serialize"))
            .collect();
        serde_json::json!({
            "snapshot": serde_json::to_value(SnapshotJson(&log.snapshot())).expect("snapshots serialize"),
            "events": events,
        })
    }
}

/// The directory holding the vectors.
pub fn vectors_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("vectors")
}

/// Every vector, sorted by file name, with its file name.
pub fn load_vectors() -> Vec<(String, Vector)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(vectors_dir())
        .expect("tests/vectors exists")
        .map(|e| e.expect("readable directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).expect("readable vector");
            let vector: Vector = serde_json::from_str(&text)
                .unwrap_or_else(|e| panic!("{}: invalid vector: {e}", path.display()));
            let name = path
                .file_name()
                .expect("file name")
                .to_string_lossy()
                .into_owned();
            (name, vector)
        })
        .collect()
}

/// A JSON string literal as Jackson writes it, built independently of the core's writer:
/// short escapes, `\u00XX` for other controls, surrogate pairs for supplementary characters.
pub fn json_string(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\u{c}' => out.push_str("\\f"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04X}", c as u32)),
            c if (c as u32) >= 0x10000 => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{:04X}", unit));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
