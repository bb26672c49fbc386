//! Helpers shared by the CLI's end-to-end tests: temporary files, kcat dumps, and what the
//! real-broker tests need. Each test binary uses some of them.
#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{json, Value};

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
pub(crate) fn dump(name: &str, records: &[(i32, &str, Option<Value>)]) -> PathBuf {
    let mut next = std::collections::BTreeMap::new();
    let mut text = String::new();
    for (partition, key, value) in records {
        let offset = next.entry(*partition).or_insert(0i64);
        let line = json!({"partition": partition, "offset": *offset, "key": key,
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
