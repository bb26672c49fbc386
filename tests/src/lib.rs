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

pub mod cases;
pub mod differential;
pub mod external;
pub mod fuzzing;
pub mod judge_json;
pub mod model;
pub mod oracle;
pub mod reference;
pub mod sim;
pub mod simulation;
pub mod writes;

use std::path::{Path, PathBuf};

use engine::config::{ConfigEventJson, ConfigLog, ConfigSnapshotJson};
use engine::offsets::{OffsetEventJson, OffsetLog, OffsetSnapshotJson};
use engine::status::{StatusEventJson, StatusLog, StatusSnapshotJson};
use engine::{Record, TopicMachine};
use serde::{Deserialize, Serialize};
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
    /// The topic: `config`, `status` or `offsets`.
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
    /// The vector as an oracle case.
    pub fn case(&self) -> oracle::Case {
        let topic = oracle::Topic::parse(&self.topic)
            .unwrap_or_else(|| panic!("unknown topic {:?} in a vector", self.topic));
        let records = self
            .records
            .iter()
            .map(|r| oracle::CaseRecord {
                partition: r.partition,
                offset: r.offset,
                key: r.key.as_ref().map(|k| k.as_bytes().to_vec()),
                value: r.payload.as_ref().map(|v| v.as_bytes().to_vec()),
            })
            .collect();
        let mut case = oracle::Case::new(topic, records);
        case.live_from = self.live_from;
        case
    }

    /// The records as kcat JSON lines.
    pub fn kcat_lines(&self) -> String {
        self.records
            .iter()
            .map(|r| {
                serde_json::json!({
                    "topic": format!("connect-{}", self.topic), "partition": r.partition, "offset": r.offset,
                    "key": r.key, "payload": r.payload,
                })
                .to_string()
                    + "\n"
            })
            .collect()
    }

    /// Runs the vector through the library: `{"snapshot": ..., "events": [...]}`.
    pub fn run_library(&self) -> Value {
        match self.topic.as_str() {
            "config" => {
                let (log, events) = self.feed::<ConfigLog>();
                to_document(
                    ConfigSnapshotJson(&log.snapshot()),
                    events.iter().map(ConfigEventJson),
                )
            }
            "status" => {
                let (log, events) = self.feed::<StatusLog>();
                to_document(
                    StatusSnapshotJson(&log.snapshot()),
                    events.iter().map(StatusEventJson),
                )
            }
            "offsets" => {
                let (log, events) = self.feed::<OffsetLog>();
                to_document(
                    OffsetSnapshotJson(&log.snapshot()),
                    events.iter().map(OffsetEventJson),
                )
            }
            other => panic!("unknown topic {other:?} in a vector"),
        }
    }

    /// Feeds the records to a fresh machine, marking it caught up at `live_from`.
    fn feed<M: TopicMachine + Default>(&self) -> (M, Vec<M::Event>) {
        let mut machine = M::default();
        let mut events = Vec::new();
        for r in &self.records {
            if !machine.is_caught_up() && self.live_from.is_some_and(|from| r.offset >= from) {
                machine.mark_caught_up();
            }
            let record = Record {
                key: r.key.as_deref().map(str::as_bytes),
                value: r.payload.as_deref().map(str::as_bytes),
                offset: r.offset,
                partition: r.partition,
                timestamp: None,
            };
            machine
                .handle_record(record)
                .expect("vector records are well-formed");
            events.extend(core::iter::from_fn(|| machine.poll_event()));
        }
        machine.mark_caught_up();
        (machine, events)
    }
}

/// `{"snapshot": ..., "events": [...]}` from serializable parts.
fn to_document<S: Serialize, E: Serialize>(snapshot: S, events: impl Iterator<Item = E>) -> Value {
    let events: Vec<Value> = events
        .map(|e| serde_json::to_value(e).expect("events serialize"))
        .collect();
    serde_json::json!({
        "snapshot": serde_json::to_value(snapshot).expect("snapshots serialize"),
        "events": events,
    })
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

/// Writer operations on the config topic, turned into the exact records Java's writer produces
/// (through the core's write side), for property tests.
pub mod ops {
    use engine::config::write;
    use engine::config::TargetState;
    use engine::ProducerRecord;
    use proptest::prelude::*;

    /// Connector names used by generated operations (one has a dash, one is empty).
    pub const CONNECTORS: [&str; 4] = ["a", "b", "c-1", ""];

    /// One writer operation.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub enum Op {
        /// `putConnectorConfig` with a config tagged `version`, optionally with a target state.
        PutConnector {
            /// Index into [`CONNECTORS`].
            connector: usize,
            /// Tag stored in the config.
            version: u32,
            /// Target state written with it.
            state: Option<TargetState>,
        },
        /// `removeConnectorConfig`.
        RemoveConnector {
            /// Index into [`CONNECTORS`].
            connector: usize,
        },
        /// `putTaskConfigs` with `tasks` configs tagged with `batch`.
        PutTasks {
            /// Index into [`CONNECTORS`].
            connector: usize,
            /// Number of tasks.
            tasks: usize,
            /// Batch tag stored in every task config.
            batch: u32,
        },
        /// `putTargetState`.
        TargetState {
            /// Index into [`CONNECTORS`].
            connector: usize,
            /// The state.
            state: TargetState,
        },
        /// `putTaskCountRecord`.
        TaskCount {
            /// Index into [`CONNECTORS`].
            connector: usize,
            /// The count.
            count: i32,
        },
    }

    fn target_state() -> impl Strategy<Value = TargetState> {
        prop_oneof![
            Just(TargetState::Started),
            Just(TargetState::Paused),
            Just(TargetState::Stopped)
        ]
    }

    /// Any operation; `batch`/`version` tags come from the generator and need not be unique
    /// (the tests make them unique by position).
    pub fn op() -> impl Strategy<Value = Op> {
        let c = 0..CONNECTORS.len();
        prop_oneof![
            3 => (c.clone(), any::<u32>(), proptest::option::of(target_state()))
                .prop_map(|(connector, version, state)| Op::PutConnector { connector, version, state }),
            1 => c.clone().prop_map(|connector| Op::RemoveConnector { connector }),
            4 => (c.clone(), 0usize..5, any::<u32>())
                .prop_map(|(connector, tasks, batch)| Op::PutTasks { connector, tasks, batch }),
            1 => (c.clone(), target_state()).prop_map(|(connector, state)| Op::TargetState { connector, state }),
            1 => (c, 0i32..5).prop_map(|(connector, count)| Op::TaskCount { connector, count }),
        ]
    }

    impl Op {
        /// The connector this operation writes for.
        pub fn connector(&self) -> &'static str {
            let i = match self {
                Self::PutConnector { connector, .. }
                | Self::RemoveConnector { connector }
                | Self::PutTasks { connector, .. }
                | Self::TargetState { connector, .. }
                | Self::TaskCount { connector, .. } => *connector,
            };
            CONNECTORS[i % CONNECTORS.len()]
        }

        /// The operation with its batch (task writes) or version (connector writes) tag set to
        /// `tag`; other operations are returned unchanged.
        pub fn tagged(mut self, tag: u32) -> Self {
            match &mut self {
                Self::PutTasks { batch, .. } => *batch = tag,
                Self::PutConnector { version, .. } => *version = tag,
                _ => {}
            }
            self
        }

        /// The operation's write plan.
        pub fn plan(&self) -> write::WritePlan {
            let c = self.connector();
            match self {
                Self::PutConnector { version, state, .. } => {
                    let v = version.to_string();
                    write::put_connector_config(
                        c,
                        [("name", Some(c)), ("version", Some(v.as_str()))],
                        *state,
                    )
                }
                Self::RemoveConnector { .. } => write::remove_connector_config(c),
                Self::PutTasks { tasks, batch, .. } => {
                    let configs: Vec<Vec<(String, String)>> = (0..*tasks)
                        .map(|i| {
                            vec![
                                ("batch".to_string(), batch.to_string()),
                                ("task".to_string(), i.to_string()),
                            ]
                        })
                        .collect();
                    write::put_task_configs(
                        c,
                        configs
                            .iter()
                            .map(|props| props.iter().map(|(k, v)| (k.as_str(), Some(v.as_str())))),
                    )
                }
                Self::TargetState { state, .. } => write::put_target_state(c, *state),
                Self::TaskCount { count, .. } => write::put_task_count_record(c, *count),
            }
        }

        /// Every record the operation writes, in order.
        pub fn records(&self) -> Vec<ProducerRecord> {
            self.plan().records().cloned().collect()
        }
    }
}
