//! Helpers shared by the CLI's end-to-end tests: temporary files, kcat dumps, and what the
//! real-broker tests need. Each test binary uses some of them.
#![allow(dead_code)]

pub(crate) mod connect;

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use serde_json::{json, Value};

/// Runs the `connect-state` binary with `args` (standard input empty) and waits for it.
pub(crate) fn run(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_connect-state"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("the binary runs")
}

/// Output bytes as text (invalid UTF-8 replaced).
pub(crate) fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Writes `text` to a fresh file in this test process's temporary directory.
pub(crate) fn write_file(name: &str, text: &str) -> PathBuf {
    static FILES: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!("connect-state-tests-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{}-{name}", FILES.fetch_add(1, Ordering::Relaxed)));
    std::fs::write(&path, text).unwrap();
    path
}

/// Writes a kcat dump of `(partition, key, value)` records, numbering offsets per partition
/// from 0 in order.
pub(crate) fn dump<K: AsRef<str>>(name: &str, records: &[(i32, K, Option<Value>)]) -> PathBuf {
    let mut next = std::collections::BTreeMap::new();
    let mut text = String::new();
    for (partition, key, value) in records {
        let offset = next.entry(*partition).or_insert(0i64);
        let line = json!({"partition": partition, "offset": *offset, "key": key.as_ref(),
                          "payload": value.as_ref().map(Value::to_string)});
        text.push_str(&format!("{line}\n"));
        *offset += 1;
    }
    write_file(name, &text)
}

/// `--from-dump` arguments for `(topic, file)` pairs.
pub(crate) fn from_dumps(dumps: &[(&str, &PathBuf)]) -> Vec<String> {
    dumps
        .iter()
        .flat_map(|(topic, path)| {
            [
                "--from-dump".to_string(),
                format!("{topic}={}", path.display()),
            ]
        })
        .collect()
}

/// The broker of the real-broker tests (`CONNECT_STATE_TEST_BROKER`, set by `.ci/run`).
pub(crate) fn broker() -> String {
    std::env::var("CONNECT_STATE_TEST_BROKER").expect("CONNECT_STATE_TEST_BROKER")
}

/// A topic name no earlier run used: `prefix` and the time in nanoseconds.
pub(crate) fn unique_topic(prefix: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("{prefix}-{nanos}")
}

/// A current-thread runtime for driving the stores from a test.
pub(crate) fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap()
}

/// A running `connect-state serve`; killed on drop.
pub(crate) struct Server {
    child: Option<Child>,
    /// `http://127.0.0.1:PORT`.
    pub(crate) base: String,
}

impl Server {
    /// `connect-state serve --listen 127.0.0.1:0 ARGS`, its stderr shown; waits for its
    /// `listening on` line.
    pub(crate) fn start<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> Self {
        Self::spawn(args, Stdio::inherit())
    }

    /// [`Server::start`] with stderr going to `stderr` (piped: read it with
    /// [`Server::stop_output`]).
    pub(crate) fn spawn<S: AsRef<std::ffi::OsStr>>(args: &[S], stderr: Stdio) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_connect-state"))
            .arg("serve")
            .args(["--listen", "127.0.0.1:0"])
            .args(args)
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let base = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("serve did not start: {line:?}"))
            .to_string();
        Self {
            child: Some(child),
            base,
        }
    }

    /// The server's process id.
    #[allow(dead_code)]
    pub(crate) fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// `(status, config-offset header, body)`.
    pub(crate) fn call(&self, method: &str, path: &str) -> (u16, Option<i64>, Option<Value>) {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .build()
            .into();
        let url = format!("{}{path}", self.base);
        let mut response = match method {
            "GET" => agent.get(&url).call(),
            "PUT" => agent.put(&url).send_empty(),
            "DELETE" => agent.delete(&url).call(),
            other => panic!("{other}"),
        }
        .unwrap();
        let offset = response
            .headers()
            .get("x-connect-state-config-offset")
            .map(|v| v.to_str().unwrap().parse().unwrap());
        let text = response.body_mut().read_to_string().unwrap();
        let body = (!text.is_empty()).then(|| serde_json::from_str(&text).unwrap());
        (response.status().as_u16(), offset, body)
    }

    /// `(status, body as text)` of a `GET` (a dashboard page, the metrics).
    pub(crate) fn page(&self, path: &str) -> (u16, String) {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .build()
            .into();
        let mut response = agent.get(&format!("{}{path}", self.base)).call().unwrap();
        (
            response.status().as_u16(),
            response.body_mut().read_to_string().unwrap(),
        )
    }

    /// `(status, body)`, without the header.
    pub(crate) fn answer(&self, method: &str, path: &str) -> (u16, Option<Value>) {
        let (status, _, body) = self.call(method, path);
        (status, body)
    }

    pub(crate) fn get(&self, path: &str) -> (u16, Value) {
        let (status, offset, body) = self.call("GET", path);
        assert!(offset.is_some(), "{path}: no config offset header");
        (status, body.unwrap_or(Value::Null))
    }

    /// SIGTERM, then the exit status.
    pub(crate) fn stop(self) -> std::process::ExitStatus {
        self.stop_output().status
    }

    /// SIGTERM, then what the server wrote to a piped stderr and its exit status.
    pub(crate) fn stop_output(mut self) -> std::process::Output {
        self.terminate();
        let child = self.child.take().expect("running");
        child.wait_with_output().unwrap()
    }

    /// Sends SIGTERM (the server shuts down gracefully).
    pub(crate) fn terminate(&self) {
        let pid = self.child.as_ref().expect("running").id().to_string();
        Command::new("kill").args(["-TERM", &pid]).status().unwrap();
    }

    /// The exit status, if the server has exited.
    pub(crate) fn try_wait(&mut self) -> Option<std::process::ExitStatus> {
        self.child.as_mut().expect("running").try_wait().unwrap()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// A raw answer: status, headers (lower-case names), body.
pub(crate) struct Raw {
    pub(crate) status: u16,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: String,
}

impl Raw {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Parses one answer from the bytes a connection sent until it closed.
pub(crate) fn parse_raw(bytes: &[u8]) -> Raw {
    let text = String::from_utf8_lossy(bytes);
    let (head, body) = text.split_once("\r\n\r\n").expect("a whole answer");
    let mut lines = head.lines();
    let status = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers = lines
        .map(|l| {
            let (n, v) = l.split_once(": ").unwrap();
            (n.to_ascii_lowercase(), v.to_string())
        })
        .collect();
    Raw {
        status,
        headers,
        body: body.to_string(),
    }
}

/// Sends `bytes` on a fresh connection and reads until the server closes it (at most 20 s).
pub(crate) fn exchange(address: &str, bytes: &[u8]) -> Vec<u8> {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(20)))
        .unwrap();
    stream.write_all(bytes).unwrap();
    let mut out = Vec::new();
    stream
        .read_to_end(&mut out)
        .expect("the server closes the connection");
    out
}
