//! The Java oracle (`tests/java-oracle/`): the real Kafka Connect stores, driven over the same
//! records as the core, in one long-running JVM that answers JSON lines.
//!
//! [`oracle`] starts it once per test process (building it on first use, which needs Java and
//! Maven) and hands out exclusive access. Where Java is missing it returns `None` after printing
//! why, so `cargo test` passes on a machine with only Rust; CI sets
//! `CONNECT_STATE_REQUIRE_EXTERNAL=1` ([`crate::external`]), which turns a missing oracle into
//! a failure.
//!
//! Environment: `CONNECT_STATE_ORACLE` (the `oracle` script; default
//! `tests/java-oracle/oracle`), `JAVA` (the JVM the script runs), `ORACLE_KAFKA_VERSION` (another
//! Kafka version than the pom's).

use std::fmt;
use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{Mutex, MutexGuard, OnceLock};

use base64::Engine as _;
use serde::Deserialize;
use serde_json::Value;

/// The environment variable that makes a missing oracle a test failure (CI sets it).
pub use crate::external::REQUIRE_ENV;

/// A topic kind, as the oracle names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Topic {
    /// The config topic (`KafkaConfigBackingStore`).
    Config,
    /// The status topic (`KafkaStatusBackingStore`).
    Status,
    /// The offsets topic (`KafkaOffsetBackingStore`).
    Offsets,
}

impl Topic {
    /// The name in the protocol and the vectors.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Config => "config",
            Self::Status => "status",
            Self::Offsets => "offsets",
        }
    }

    /// The kind named `name`.
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "config" => Some(Self::Config),
            "status" => Some(Self::Status),
            "offsets" => Some(Self::Offsets),
            _ => None,
        }
    }
}

/// One record of a case: exact bytes.
#[derive(Clone, PartialEq, Eq)]
pub struct CaseRecord {
    /// Partition.
    pub partition: i32,
    /// Offset.
    pub offset: i64,
    /// Key bytes (`None`: a null key).
    pub key: Option<Vec<u8>>,
    /// Value bytes (`None`: a tombstone).
    pub value: Option<Vec<u8>>,
}

impl fmt::Debug for CaseRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = |b: &Option<Vec<u8>>| {
            b.as_deref()
                .map(|b| String::from_utf8_lossy(b).into_owned())
        };
        write!(
            f,
            "{}:{} {:?} = {:?}",
            self.partition,
            self.offset,
            text(&self.key),
            text(&self.value)
        )
    }
}

impl CaseRecord {
    /// A record on partition 0 from text.
    pub fn text(offset: i64, key: &str, value: Option<&str>) -> Self {
        Self {
            partition: 0,
            offset,
            key: Some(key.as_bytes().to_vec()),
            value: value.map(|v| v.as_bytes().to_vec()),
        }
    }
}

/// One case: records for one store, where the start-up read ends, and write calls after it.
#[derive(Debug, Clone, PartialEq)]
pub struct Case {
    /// Which store.
    pub topic: Topic,
    /// Records at or after this offset are read after start-up (events); `None`: all before.
    pub live_from: Option<i64>,
    /// The topic's partition count (default: the highest partition in the records + 1).
    pub partitions: Option<i32>,
    /// The records, in the order a consumer hands them over.
    pub records: Vec<CaseRecord>,
    /// Write calls run after the records (`{"method": ..., ...}`, see the oracle's README).
    pub writes: Vec<Value>,
}

impl Case {
    /// A read-only case.
    pub fn new(topic: Topic, records: Vec<CaseRecord>) -> Self {
        Self {
            topic,
            live_from: None,
            partitions: None,
            records,
            writes: Vec::new(),
        }
    }

    /// The case as one protocol line.
    fn to_line(&self, id: u64) -> String {
        let b64 = |bytes: &Option<Vec<u8>>| {
            bytes
                .as_deref()
                .map(|b| base64::engine::general_purpose::STANDARD.encode(b))
        };
        let records: Vec<Value> = self
            .records
            .iter()
            .map(|r| {
                serde_json::json!({
                    "partition": r.partition, "offset": r.offset,
                    "key_base64": b64(&r.key), "value_base64": b64(&r.value),
                })
            })
            .collect();
        serde_json::json!({
            "id": id, "topic": self.topic.as_str(), "live_from": self.live_from,
            "partitions": self.partitions, "records": records, "writes": self.writes,
        })
        .to_string()
    }
}

/// When an exception happened in Java.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// While the store read the topic at start-up: a worker fails to start on anything but a
    /// `KafkaException` (which drops the rest of the poll batch).
    CatchUp,
    /// In `start()` itself (e.g. the config topic's partition check).
    Start,
    /// After start-up: the work thread logs it and drops the rest of the poll batch.
    Live,
    /// In a snapshot accessor (e.g. `ClusterConfigState.tasks` for a negative task count).
    Snapshot,
}

/// An exception Java threw.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct JavaException {
    /// The exception class.
    pub class: String,
    /// Its message.
    pub message: Option<String>,
    /// Whether it is a `KafkaException` (`KafkaBasedLog` treats those apart).
    pub kafka_exception: bool,
    /// When it happened.
    pub phase: Phase,
    /// The record's partition (record phases).
    pub partition: Option<i32>,
    /// The record's offset (record phases).
    pub offset: Option<i64>,
    /// The connector (snapshot phase).
    pub connector: Option<String>,
    /// Whether the oracle's own code threw it (preparing a call's arguments), not Connect's:
    /// a harness error, never a verdict.
    #[serde(default)]
    pub harness: bool,
}

/// A record a Java writer produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WrittenRecord {
    /// The partition Kafka's default partitioner picks for the key.
    pub partition: i32,
    /// Key bytes.
    pub key: Option<Vec<u8>>,
    /// Value bytes (`None`: a tombstone).
    pub value: Option<Vec<u8>>,
}

impl fmt::Display for WrittenRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = |b: &Option<Vec<u8>>| {
            b.as_deref().map_or("null".to_string(), |b| {
                format!("{:?}", String::from_utf8_lossy(b))
            })
        };
        write!(
            f,
            "p{} {} = {}",
            self.partition,
            text(&self.key),
            text(&self.value)
        )
    }
}

/// What one Java write call produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JavaWrite {
    /// What the store asked of its log, in order: `send` (one per record) and `read_to_end`.
    pub steps: Vec<String>,
    /// The records, in send order.
    pub records: Vec<WrittenRecord>,
    /// The exception the call threw, if any.
    pub error: Option<JavaException>,
}

/// Java's answer to a case.
#[derive(Debug, Clone, PartialEq)]
pub struct JavaAnswer {
    /// The store's state in the JSON contract (member order kept).
    pub snapshot: Json,
    /// Listener callbacks (config only), in order.
    pub events: Vec<Json>,
    /// Status and offsets with a start-up boundary: the state after each record read after
    /// it (those stores have no listener; their accessors are what a worker sees live).
    pub trace: Vec<Json>,
    /// Exceptions, in order.
    pub exceptions: Vec<JavaException>,
    /// One entry per write call.
    pub writes: Vec<JavaWrite>,
    /// Lone UTF-16 surrogates Java held that the answer shows as U+FFFD (README item 5).
    pub lone_surrogates: u64,
    /// The JVM's major version (Java 19 changed `Double.toString`, README item 8).
    pub java_major: u32,
}

/// The oracle process.
pub struct Oracle {
    child: Child,
    stdin: BufWriter<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
    /// The Kafka version the oracle runs.
    pub kafka_version: String,
    /// The JVM's version.
    pub java_version: String,
}

static ORACLE: OnceLock<Option<Mutex<Oracle>>> = OnceLock::new();

/// The oracle script.
pub fn script() -> PathBuf {
    std::env::var_os("CONNECT_STATE_ORACLE").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("java-oracle/oracle"),
        PathBuf::from,
    )
}

/// Exclusive access to the oracle, started on first use; `None` (after saying why on stderr)
/// where it cannot run and [`REQUIRE_ENV`] is not set.
pub fn oracle() -> Option<MutexGuard<'static, Oracle>> {
    let slot = ORACLE.get_or_init(|| match Oracle::start() {
        Ok(oracle) => Some(Mutex::new(oracle)),
        Err(why) => {
            crate::external::skip(
                "the Java oracle",
                &format!(
                    "{why}; install a JDK 17+ and Maven to run the differential tests against \
                     Kafka Connect's own stores"
                ),
            );
            None
        }
    });
    // Under the require variable the judge runs on Java 19+ only: older JVMs print some
    // doubles with more digits (JDK-4511638), so written bytes could differ (item 8).
    if let Some(oracle) = slot.as_ref() {
        let oracle = oracle
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let major = oracle.java_major();
        assert!(
            major >= 19 || std::env::var_os(REQUIRE_ENV).is_none(),
            "the Java oracle runs on Java {} ({}); {REQUIRE_ENV} needs Java 19 or newer: set JAVA \
             to a JDK 19+ (see .ci/run)",
            oracle.java_version,
            major
        );
    }
    // A test that panicked while holding the oracle leaves it usable: answers are per line.
    slot.as_ref()
        .map(|m| m.lock().unwrap_or_else(std::sync::PoisonError::into_inner))
}

impl Oracle {
    fn start() -> Result<Self, String> {
        Self::start_with(None)
    }

    /// Starts an oracle of its own (not the shared one of [`oracle`]), with the Kafka version
    /// `kafka_version` instead of the pom's when given (built on first use).
    pub fn start_with(kafka_version: Option<&str>) -> Result<Self, String> {
        let script = script();
        if !script.exists() {
            return Err(format!("{} does not exist", script.display()));
        }
        let java = std::env::var("JAVA").unwrap_or_else(|_| "java".into());
        if Command::new(&java)
            .arg("-version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_err()
        {
            return Err(format!("no JVM ({java} -version failed)"));
        }
        let mut command = Command::new(&script);
        if let Some(version) = kafka_version {
            command.env("ORACLE_KAFKA_VERSION", version);
        }
        let mut child = command
            .arg("serve")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot run {}: {e}", script.display()))?;
        let stdin = BufWriter::new(child.stdin.take().expect("piped stdin"));
        let stdout = BufReader::new(child.stdout.take().expect("piped stdout"));
        let mut stderr = child.stderr.take().expect("piped stderr");
        // Drain stderr (build output, SLF4J's notice) so the JVM never blocks on it; keep the
        // tail for error messages.
        let tail = std::sync::Arc::new(Mutex::new(String::new()));
        let sink = tail.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = stderr.read(&mut buf) {
                if n == 0 {
                    break;
                }
                let mut t = sink
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                t.push_str(&String::from_utf8_lossy(&buf[..n]));
                if t.len() > 8192 {
                    let cut = t.len() - 4096;
                    let cut = (cut..t.len()).find(|&i| t.is_char_boundary(i)).unwrap_or(0);
                    t.drain(..cut);
                }
            }
        });
        let mut oracle = Self {
            child,
            stdin,
            stdout,
            next_id: 0,
            kafka_version: String::new(),
            java_version: String::new(),
        };
        let answer = oracle.request(r#"{"id":0,"op":"version"}"#).map_err(|e| {
            let tail = tail
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            format!("the oracle did not start: {e}\n{tail}")
        })?;
        oracle.kafka_version = answer["kafka_version"].as_str().unwrap_or("?").into();
        oracle.java_version = answer["java_version"].as_str().unwrap_or("?").into();
        Ok(oracle)
    }

    /// Sends one line, reads one answer line.
    fn request_line(&mut self, line: &str) -> Result<String, String> {
        self.stdin
            .write_all(line.as_bytes())
            .and_then(|()| self.stdin.write_all(b"\n"))
            .and_then(|()| self.stdin.flush())
            .map_err(|e| format!("writing to the oracle: {e}"))?;
        let mut answer = String::new();
        match self.stdout.read_line(&mut answer) {
            Ok(0) => Err(format!(
                "the oracle exited ({:?})",
                self.child.try_wait().ok().flatten()
            )),
            Ok(_) => Ok(answer),
            Err(e) => Err(format!("reading from the oracle: {e}")),
        }
    }

    /// Sends one line, reads one answer.
    fn request(&mut self, line: &str) -> Result<Value, String> {
        let answer = self.request_line(line)?;
        parse::<Value>(&answer).map_err(|e| format!("unreadable answer: {e}"))
    }

    /// Runs a case through Java. Panics if the oracle fails (a broken oracle is a test failure).
    pub fn run(&mut self, case: &Case) -> JavaAnswer {
        self.next_id += 1;
        let line = case.to_line(self.next_id);
        let text = self
            .request_line(&line)
            .unwrap_or_else(|e| panic!("oracle: {e}"));
        let ordered = Json::parse(text.trim_end())
            .unwrap_or_else(|e| panic!("the oracle's answer is not JSON ({e}): {text}"));
        let raw: Value = ordered.to_value();
        if let Some(error) = raw.get("error") {
            panic!("the oracle refused the case: {error}\ncase: {line}");
        }
        assert_eq!(raw["id"], self.next_id, "answers come back in order");
        let member = |name: &str| ordered.get(name).cloned().unwrap_or(Json::Null);
        let exceptions = serde_json::from_value(raw["exceptions"].clone())
            .unwrap_or_else(|e| panic!("oracle exceptions: {e}: {}", raw["exceptions"]));
        let writes = raw["writes"]
            .as_array()
            .map(|ws| ws.iter().map(java_write).collect())
            .unwrap_or_default();
        JavaAnswer {
            snapshot: member("snapshot"),
            events: match member("events") {
                Json::Array(items) => items,
                _ => Vec::new(),
            },
            trace: match member("trace") {
                Json::Array(items) => items,
                _ => Vec::new(),
            },
            exceptions,
            writes,
            lone_surrogates: raw["lone_surrogates"].as_u64().unwrap_or(0),
            java_major: self.java_major(),
        }
    }

    /// The JVM's major version (`17` of `17.0.15`).
    pub fn java_major(&self) -> u32 {
        self.java_version
            .split(['.', '-', '+'])
            .next()
            .and_then(|m| m.parse().ok())
            .unwrap_or(0)
    }
}

impl Drop for Oracle {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn decode_b64(v: &Value) -> Option<Vec<u8>> {
    v.as_str().map(|s| {
        base64::engine::general_purpose::STANDARD
            .decode(s)
            .expect("the oracle writes valid Base64")
    })
}

fn java_write(w: &Value) -> JavaWrite {
    JavaWrite {
        steps: w["steps"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|s| s.as_str().map(String::from))
            .collect(),
        records: w["records"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|r| WrittenRecord {
                partition: r["partition"].as_i64().unwrap_or(0) as i32,
                key: decode_b64(&r["key_base64"]),
                value: decode_b64(&r["value_base64"]),
            })
            .collect(),
        error: if w["error"].is_null() {
            None
        } else {
            Some(JavaException {
                class: w["error"]["class"].as_str().unwrap_or("?").into(),
                message: w["error"]["message"].as_str().map(Into::into),
                kafka_exception: w["error"]["kafka_exception"].as_bool().unwrap_or(false),
                phase: Phase::Live,
                partition: None,
                offset: None,
                connector: None,
                harness: w["error"]["harness"].as_bool().unwrap_or(false),
            })
        },
    }
}

/// Parses JSON text without serde_json's nesting limit (values may nest as deep as Jackson
/// allows, 1,000 levels).
pub fn parse<T: serde::de::DeserializeOwned>(text: &str) -> serde_json::Result<T> {
    let mut de = serde_json::Deserializer::from_str(text);
    de.disable_recursion_limit();
    let value = T::deserialize(&mut de)?;
    de.end()?;
    Ok(value)
}

pub use crate::judge_json::Json;
