//! What the real-worker tests share (`connect_e2e.rs`, `backup_e2e.rs`): the local cluster
//! `scripts/local-cluster` describes, Java's REST API, polling, the `connect-state` binary,
//! and FileStream connectors' files and configs.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// What `scripts/local-cluster start` printed.
pub(crate) struct Cluster {
    values: BTreeMap<String, Vec<String>>,
}

impl Cluster {
    pub(crate) fn from_env() -> Self {
        let path = std::env::var("CONNECT_STATE_TEST_CLUSTER")
            .expect("CONNECT_STATE_TEST_CLUSTER names the cluster.env of scripts/local-cluster");
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let mut values: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for line in text.lines() {
            if let Some((k, v)) = line.split_once('=') {
                values.entry(k.to_string()).or_default().push(v.to_string());
            }
        }
        Self { values }
    }

    pub(crate) fn get(&self, key: &str) -> &str {
        self.values
            .get(key)
            .and_then(|v| v.first())
            .unwrap_or_else(|| panic!("the cluster has no {key}"))
    }

    pub(crate) fn bootstrap(&self) -> &str {
        self.get("bootstrap")
    }

    /// The Connect workers of the plain group.
    pub(crate) fn connect(&self) -> &[String] {
        &self.values["connect"]
    }

    /// The Connect workers of the exactly-once group (`eos.` topics).
    pub(crate) fn eos_connect(&self) -> &[String] {
        &self.values["connect.eos"]
    }

    /// `--bootstrap-servers .. --config-topic .. --status-topic .. --offsets-topic ..` of a group
    /// (`""` or `"eos."`).
    pub(crate) fn topic_args(&self, group: &str) -> Vec<String> {
        vec![
            "--bootstrap-servers".into(),
            self.bootstrap().into(),
            "--config-topic".into(),
            self.get(&format!("{group}config.storage.topic")).into(),
            "--status-topic".into(),
            self.get(&format!("{group}status.storage.topic")).into(),
            "--offsets-topic".into(),
            self.get(&format!("{group}offset.storage.topic")).into(),
        ]
    }
}

/// A connector name unique to this test run (so runs against one cluster never meet).
pub(crate) fn name(base: &str) -> String {
    format!("{base}-{}", std::process::id())
}

/// How many partitions `topic` has.
pub(crate) fn partition_count(cluster: &Cluster, topic: &str) -> i32 {
    use rdkafka::consumer::{BaseConsumer, Consumer};
    let consumer: BaseConsumer = rdkafka::config::ClientConfig::new()
        .set("bootstrap.servers", cluster.bootstrap())
        .create()
        .expect("a metadata client");
    let metadata = consumer
        .fetch_metadata(Some(topic), Duration::from_secs(10))
        .unwrap_or_else(|e| panic!("describing {topic}: {e}"));
    let partitions = metadata
        .topics()
        .first()
        .map_or(0, |t| t.partitions().len());
    i32::try_from(partitions).expect("a partition count")
}

/// A scratch directory for connector files, unique per test.
pub(crate) fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("connect-state-e2e-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

// ---- HTTP ------------------------------------------------------------------------------------

/// `(status, body)` of an HTTP call; a body that is not JSON comes back as a JSON string.
pub(crate) fn http(method: &str, url: &str, body: Option<&Value>) -> (u16, Value) {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(60)))
        .build()
        .into();
    let result = match (method, body) {
        ("GET", _) => agent.get(url).call(),
        ("DELETE", _) => agent.delete(url).call(),
        ("POST", None) => agent.post(url).send_empty(),
        ("PUT", None) => agent.put(url).send_empty(),
        ("PUT", Some(b)) => agent
            .put(url)
            .header("Content-Type", "application/json")
            .send(b.to_string()),
        ("PATCH", Some(b)) => agent
            .patch(url)
            .header("Content-Type", "application/json")
            .send(b.to_string()),
        (m, _) => panic!("{m}"),
    };
    let mut response = result.unwrap_or_else(|e| panic!("{method} {url}: {e}"));
    let status = response.status().as_u16();
    let text = response.body_mut().read_to_string().unwrap_or_default();
    let body = if text.is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&text).unwrap_or(Value::String(text))
    };
    (status, body)
}

pub(crate) fn get(url: &str) -> (u16, Value) {
    http("GET", url, None)
}

/// Polls `f` until it returns `Ok`, for up to `timeout`; panics with its last error.
pub(crate) fn eventually<T>(
    what: &str,
    timeout: Duration,
    mut f: impl FnMut() -> Result<T, String>,
) -> T {
    let deadline = Instant::now() + timeout;
    loop {
        match f() {
            Ok(t) => return t,
            Err(e) if Instant::now() > deadline => panic!("{what}: {e}"),
            Err(_) => std::thread::sleep(Duration::from_millis(300)),
        }
    }
}

pub(crate) const WAIT: Duration = Duration::from_secs(90);

/// The REST API of one Java worker.
pub(crate) struct Java<'a> {
    pub(crate) url: &'a str,
}

impl Java<'_> {
    pub(crate) fn connector(&self, c: &str) -> String {
        format!("{}/connectors/{c}", self.url)
    }

    pub(crate) fn put_config(&self, c: &str, config: &Value) {
        let (status, body) = http(
            "PUT",
            &format!("{}/config", self.connector(c)),
            Some(config),
        );
        assert!(
            matches!(status, 200 | 201),
            "PUT config {c}: {status} {body}"
        );
    }

    pub(crate) fn action(&self, method: &str, c: &str, path: &str) -> u16 {
        http(method, &format!("{}{path}", self.connector(c)), None).0
    }

    pub(crate) fn status(&self, c: &str) -> Value {
        get(&format!("{}/status", self.connector(c))).1
    }

    /// Waits until the connector is in `state` with `tasks` tasks, all in `task_state`.
    pub(crate) fn wait_state(&self, c: &str, state: &str, tasks: usize, task_state: &str) {
        eventually(
            &format!("{c} reaching {state} with {tasks} tasks"),
            WAIT,
            || {
                let s = self.status(c);
                let states: Vec<&str> = s["tasks"]
                    .as_array()
                    .map(|t| t.iter().filter_map(|t| t["state"].as_str()).collect())
                    .unwrap_or_default();
                if s["connector"]["state"] == state
                    && states.len() == tasks
                    && states.iter().all(|t| *t == task_state)
                {
                    Ok(())
                } else {
                    Err(format!("status {s}"))
                }
            },
        );
    }
}

/// Runs the `connect-state` binary; `(exit code, stdout, stderr)`.
pub(crate) fn connect_state(args: &[String]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_connect-state"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Writes `line-1` .. `line-N`, one per line, to `path`.
pub(crate) fn lines_file(path: &Path, n: usize) {
    let text: String = (1..=n).map(|i| format!("line-{i}\n")).collect();
    std::fs::write(path, text).unwrap();
}

/// How many lines of `path` are exactly `line`.
pub(crate) fn count_line(path: &Path, line: &str) -> usize {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter(|l| *l == line)
        .count()
}

/// Waits until `line` is in `path` exactly `copies` times (a sink's file, as it writes).
pub(crate) fn wait_for_line(path: &Path, line: &str, copies: usize) {
    eventually(
        &format!("{line} written {copies} time(s) to {}", path.display()),
        WAIT,
        || {
            let n = count_line(path, line);
            (n == copies).then_some(()).ok_or(format!("{n} copies"))
        },
    );
}

/// A FileStreamSource connector's config: `file`'s lines to `topic`.
pub(crate) fn source_config(file: &Path, topic: &str) -> Value {
    json!({
        "connector.class": "FileStreamSource", "file": file.display().to_string(),
        "topic": topic, "tasks.max": "1",
        "topic.creation.default.replication.factor": "1", "topic.creation.default.partitions": "1",
    })
}

/// A FileStreamSink connector's config: `topic`'s records to `file`, with `tasks` tasks.
pub(crate) fn sink_config(file: &Path, topic: &str, tasks: u32) -> Value {
    json!({
        "connector.class": "FileStreamSink", "file": file.display().to_string(),
        "topics": topic, "tasks.max": tasks.to_string(),
    })
}
