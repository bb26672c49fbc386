//! `serve`'s monitoring: `/metrics` read by a real Prometheus parser (Python's
//! `prometheus-client`), checked against the demo's story and a dump of known states; the
//! cardinality guard; memory across scrapes; and the dashboard loaded in headless Chromium.

mod common;

use std::collections::BTreeMap;
use std::process::Command;

use connect_state_tests::external;
use serde_json::{json, Value};

/// The families of a `/metrics` text as Python's OpenMetrics parser reads them:
/// `{family: [{"labels": {..}, "value": v, "sample": name}]}`. `None` (after a `skipped:` line)
/// when the parser is not installed.
fn parsed(text: &str) -> Option<BTreeMap<String, Vec<Value>>> {
    if let Err(why) = external::python_module("prometheus_client") {
        external::skip("Python's prometheus-client", &why);
        return None;
    }
    let script = r#"
import json, sys
from prometheus_client.openmetrics.parser import text_string_to_metric_families
out = {}
for family in text_string_to_metric_families(sys.stdin.read()):
    out[family.name] = [
        {"sample": s.name, "labels": s.labels, "value": s.value} for s in family.samples
    ]
print(json.dumps(out))
"#;
    let mut command = Command::new("python3");
    command.args(["-c", script]);
    let output = external::run_with_stdin(&mut command, text.as_bytes()).expect("python3 runs");
    assert!(
        output.status.success(),
        "the parser refused the exposition: {}\n{text}",
        String::from_utf8_lossy(&output.stderr)
    );
    Some(serde_json::from_slice(&output.stdout).unwrap())
}

/// The value of `family`'s sample with exactly these labels.
fn value(families: &BTreeMap<String, Vec<Value>>, family: &str, labels: Value) -> Option<f64> {
    families
        .get(family)?
        .iter()
        .find_map(|s| (s["labels"] == labels).then(|| s["value"].as_f64().unwrap()))
}

fn scrape(server: &common::Server) -> String {
    let agent: ureq::Agent = ureq::Agent::config_builder().build().into();
    let mut response = agent
        .get(&format!("{}/metrics", server.base))
        .call()
        .unwrap();
    let content_type = response
        .headers()
        .get("content-type")
        .unwrap()
        .to_str()
        .unwrap()
        .to_string();
    assert!(
        content_type.starts_with("application/openmetrics-text"),
        "{content_type}"
    );
    response.body_mut().read_to_string().unwrap()
}

fn page(server: &common::Server, path: &str) -> (u16, String) {
    server.page(path)
}

#[test]
fn metrics_tell_the_demo_story_as_its_rest_api_does() {
    let server = common::Server::start(&["--demo"]);
    let text = scrape(&server);
    let Some(families) = parsed(&text) else {
        return;
    };
    // The story as the REST API tells it.
    let (_, expand) = server.answer("GET", "/connectors?expand=status");
    let expand = expand.unwrap();
    let mut connectors: BTreeMap<String, f64> = BTreeMap::new();
    let mut tasks: BTreeMap<String, f64> = BTreeMap::new();
    for (name, entry) in expand.as_object().unwrap() {
        let state = entry["status"]["connector"]["state"].as_str().unwrap();
        *connectors.entry(state.into()).or_default() += 1.0;
        assert_eq!(
            value(
                &families,
                "connect_state_connector_state",
                json!({"connector": name, "state": state})
            ),
            Some(1.0)
        );
        for task in entry["status"]["tasks"].as_array().unwrap() {
            let state = task["state"].as_str().unwrap();
            *tasks.entry(state.into()).or_default() += 1.0;
            let labels = json!({"connector": name, "task": task["id"].to_string(),
                                "state": state, "worker": task["worker_id"]});
            assert_eq!(
                value(&families, "connect_state_task_state", labels.clone()),
                Some(1.0),
                "{labels}"
            );
        }
    }
    for state in [
        "RUNNING",
        "PAUSED",
        "STOPPED",
        "FAILED",
        "UNASSIGNED",
        "RESTARTING",
        "UNKNOWN",
    ] {
        let expected = connectors.get(state).copied().unwrap_or(0.0);
        let got = value(
            &families,
            "connect_state_connectors",
            json!({"state": state}),
        );
        assert_eq!(got, Some(expected), "connectors {state}");
        let expected = tasks.get(state).copied().unwrap_or(0.0);
        let got = value(&families, "connect_state_tasks", json!({"state": state}));
        assert_eq!(got, Some(expected), "tasks {state}");
    }
    assert!(tasks.contains_key("FAILED"), "the demo's sink task fails");
    // The source connectors' partitions, as their KIP-875 listings.
    for (name, _) in expand.as_object().unwrap() {
        let (_, offsets) = server.answer("GET", &format!("/connectors/{name}/offsets"));
        let listed = offsets.unwrap()["offsets"].as_array().unwrap().len() as f64;
        let got = value(
            &families,
            "connect_state_source_partitions",
            json!({"connector": name}),
        );
        assert_eq!(got.unwrap_or(0.0), listed, "{name}");
    }
    // Every check is listed; the demo ends healthy.
    let findings = &families["connect_state_findings"];
    assert_eq!(findings.len(), connect_state_ops::doctor::CHECKS.len());
    assert!(
        findings.iter().all(|f| f["value"].as_f64() == Some(0.0)),
        "{findings:?}"
    );
    // Read positions and task status ages (the simulator's clock starts at the epoch, so
    // the ages are large and positive).
    let next = &families["connect_state_topic_next_offset"];
    assert!(next.iter().any(
        |s| s["labels"] == json!({"topic": "config", "partition": "0"})
            && s["value"].as_f64().unwrap() > 0.0
    ));
    let ages = &families["connect_state_task_status_age_seconds"];
    assert_eq!(ages.len() as f64, tasks.values().sum::<f64>());
    assert!(ages.iter().all(|s| s["value"].as_f64().unwrap() > 0.0));
    assert_eq!(
        value(
            &families,
            "connect_state_metrics_dropped_connectors",
            json!({})
        ),
        Some(0.0)
    );
}

/// A dump of known states: a connector with a name that needs escaping, an inconsistent one,
/// one without status, offsets of two partitions and a record Java skips.
fn known_states() -> Vec<String> {
    let weird = "we\"ird\\name\nwith \u{1F600}";
    let config = common::write_file(
        "monitoring-config.jsonl",
        &[
            json!({"offset": 0, "ts": 1000, "key": format!("connector-{weird}"),
                   "payload": json!({"properties": {"connector.class": "FileStreamSink", "topics": "t"}}).to_string()}),
            json!({"offset": 1, "ts": 1000, "key": format!("task-{weird}-0"),
                   "payload": json!({"properties": {"task.class": "X"}}).to_string()}),
            json!({"offset": 2, "ts": 1000, "key": format!("commit-{weird}"), "payload": r#"{"tasks":1}"#}),
            json!({"offset": 3, "ts": 1000, "key": "connector-broken",
                   "payload": json!({"properties": {"connector.class": "FileStreamSource"}}).to_string()}),
            json!({"offset": 4, "ts": 1000, "key": "task-broken-0",
                   "payload": json!({"properties": {"task.class": "X"}}).to_string()}),
            json!({"offset": 5, "ts": 1000, "key": "commit-broken", "payload": r#"{"tasks":3}"#}),
            json!({"offset": 6, "ts": 1000, "key": "connector-src",
                   "payload": json!({"properties": {"connector.class": "FileStreamSource"}}).to_string()}),
            json!({"offset": 7, "ts": 1000, "key": "connector-src", "payload": "not json"}),
        ]
        .iter()
        .map(|l| format!("{l}\n"))
        .collect::<String>(),
    );
    let running = |worker: &str| {
        json!({"state": "RUNNING", "trace": null, "worker_id": worker, "generation": 1}).to_string()
    };
    let status = common::write_file(
        "monitoring-status.jsonl",
        &[
            json!({"partition": 0, "offset": 0, "ts": 2000, "key": format!("status-connector-{weird}"), "payload": running("w1:8083")}),
            json!({"partition": 1, "offset": 0, "ts": 3000, "key": format!("status-task-{weird}-0"), "payload": running("w\"2:8083")}),
            json!({"partition": 0, "offset": 1, "ts": 2000, "key": "status-connector-broken", "payload": running("w1:8083")}),
        ]
        .iter()
        .map(|l| format!("{l}\n"))
        .collect::<String>(),
    );
    let offsets = common::write_file(
        "monitoring-offsets.jsonl",
        &[
            json!({"partition": 3, "offset": 0, "ts": 4000, "key": r#"["src",{"file":"a"}]"#, "payload": r#"{"position":1}"#}),
            json!({"partition": 7, "offset": 0, "ts": 4000, "key": r#"["src",{"file":"b"}]"#, "payload": r#"{"position":2}"#}),
        ]
        .iter()
        .map(|l| format!("{l}\n"))
        .collect::<String>(),
    );
    common::from_dumps(&[
        ("config", &config),
        ("status", &status),
        ("offsets", &offsets),
    ])
}

#[test]
fn metrics_of_known_states_are_exact_and_escaped() {
    let weird = "we\"ird\\name\nwith \u{1F600}";
    let server = common::Server::start(&known_states());
    let text = scrape(&server);
    let Some(families) = parsed(&text) else {
        return;
    };
    let v = |family: &str, labels: Value| value(&families, family, labels);
    let expected = [
        ("connect_state_connectors", json!({"state": "RUNNING"}), 2.0),
        ("connect_state_connectors", json!({"state": "UNKNOWN"}), 1.0), // src: no status
        ("connect_state_tasks", json!({"state": "RUNNING"}), 1.0),
        // The label values survive escaping.
        (
            "connect_state_connector_state",
            json!({"connector": weird, "state": "RUNNING"}),
            1.0,
        ),
        (
            "connect_state_task_state",
            json!({"connector": weird, "task": "0", "state": "RUNNING", "worker": "w\"2:8083"}),
            1.0,
        ),
        (
            "connect_state_connector_inconsistent",
            json!({"connector": "broken"}),
            1.0,
        ),
        (
            "connect_state_connector_inconsistent",
            json!({"connector": weird}),
            0.0,
        ),
        (
            "connect_state_findings",
            json!({"check": "inconsistent-connector"}),
            1.0,
        ),
        // The family of the counter `connect_state_records_skipped_total`.
        (
            "connect_state_records_skipped",
            json!({"topic": "config", "reason": "invalid_json"}),
            1.0,
        ),
        (
            "connect_state_source_partitions",
            json!({"connector": "src"}),
            2.0,
        ),
        (
            "connect_state_topic_next_offset",
            json!({"topic": "config", "partition": "0"}),
            8.0,
        ),
        (
            "connect_state_topic_next_offset",
            json!({"topic": "offsets", "partition": "7"}),
            1.0,
        ),
    ];
    for (family, labels, want) in expected {
        assert_eq!(
            v(family, labels.clone()),
            Some(want),
            "{family} {labels}\n{text}"
        );
    }
    let age = v(
        "connect_state_task_status_age_seconds",
        json!({"connector": weird, "task": "0"}),
    )
    .expect("the task reported at ts 3000");
    // Its record is stamped 3 s after the epoch: the age is the time since then.
    let since_epoch = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    assert!((age - (since_epoch - 3.0)).abs() < 120.0, "{age}");
    drop(server);

    // The cardinality guard: one connector keeps its series, the others are counted.
    let mut args = known_states();
    args.extend(["--metrics-max-connectors".into(), "1".into()]);
    let server = common::Server::start(&args);
    let families = parsed(&scrape(&server)).unwrap();
    assert_eq!(
        value(
            &families,
            "connect_state_metrics_dropped_connectors",
            json!({})
        ),
        Some(2.0)
    );
    let names: std::collections::BTreeSet<String> = families["connect_state_connector_state"]
        .iter()
        .map(|s| s["labels"]["connector"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        names,
        ["broken".to_string()].into(),
        "the first name, in order"
    );
    assert_eq!(
        value(
            &families,
            "connect_state_connectors",
            json!({"state": "RUNNING"})
        ),
        Some(2.0),
        "totals count every connector"
    );
}

/// The resident set of a process, from `/proc` (Linux).
fn rss_kb(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line["VmRSS:".len()..]
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()
}

#[test]
fn scrapes_do_not_grow_the_server() {
    let server = common::Server::start(&["--demo"]);
    let Some(pid) = server.pid() else { return };
    for _ in 0..50 {
        scrape(&server);
    }
    let Some(warm) = rss_kb(pid) else {
        return;
    };
    for _ in 0..500 {
        scrape(&server);
        page(&server, "/ui/");
    }
    let after = rss_kb(pid).unwrap();
    assert!(
        after <= warm + 4 * 1024,
        "the resident set grew from {warm} kB to {after} kB over 500 scrapes"
    );
}

#[test]
fn the_dashboard_escapes_names_and_404s_unknown_connectors() {
    let server = common::Server::start(&known_states());
    let (status, html) = page(&server, "/ui/");
    assert_eq!(status, 200);
    assert!(html.contains("we&quot;ird\\name"), "escaped: {html}");
    assert!(
        !html.contains("we\"ird"),
        "no raw quote from a name reaches the page"
    );
    let (status, _) = page(&server, "/ui/connectors/nobody");
    assert_eq!(status, 404);
    let (status, css) = page(&server, "/ui/style.css");
    assert_eq!(status, 200);
    assert!(css.contains(".badge"));
}

/// Headless Chromium with the flags the project's machines need, a fresh profile each run.
fn chromium(args: &[&str]) -> Option<std::process::Output> {
    let binary = ["chromium", "chromium-browser"].into_iter().find(|b| {
        Command::new(b)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    });
    let Some(binary) = binary else {
        external::skip("Chromium", "apt-get install chromium");
        return None;
    };
    let profile = tempdir("chromium-profile");
    let output = Command::new(binary)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .output()
        .expect("chromium runs");
    let _ = std::fs::remove_dir_all(&profile);
    Some(output)
}

fn tempdir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("connect-state-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn the_dashboard_renders_in_headless_chromium() {
    let server = common::Server::start(&known_states());
    let url = format!("{}/ui/", server.base);
    let Some(output) = chromium(&["--dump-dom", &url]) else {
        return;
    };
    let dom = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    for name in ["broken", "src", "we&quot;ird"] {
        assert!(dom.contains(name), "{name} in the rendered DOM: {dom}");
    }
    assert!(dom.contains(r#"class="badge running">RUNNING"#), "{dom}");
    // The inconsistent connector, with doctor's explanation: its missing task ids.
    let finding = dom
        .split(r#"class="finding inconsistent""#)
        .nth(1)
        .expect("the inconsistent connector is shown");
    assert!(finding.contains("task id(s) 1, 2"), "{finding}");
    assert!(
        finding.contains("restart the connector"),
        "the repair hint: {finding}"
    );

    let connector = format!("{}/ui/connectors/src", server.base);
    let output = chromium(&["--dump-dom", &connector]).unwrap();
    let dom = String::from_utf8_lossy(&output.stdout);
    assert!(dom.contains("connector_created"), "the timeline: {dom}");
    assert!(
        dom.contains(r#"{"file":"a"}"#) || dom.contains("&quot;file&quot;"),
        "offsets: {dom}"
    );

    let shot = tempdir("screenshot").join("dashboard.png");
    let output = chromium(&[
        "--window-size=1280,800",
        &format!("--screenshot={}", shot.display()),
        &url,
    ])
    .unwrap();
    assert!(output.status.success());
    let png = std::fs::read(&shot).expect("a screenshot was written");
    assert!(png.starts_with(b"\x89PNG"), "a PNG");
}

/// Every metric the docs' scrape config, alerts and Grafana dashboard (and the README) name is
/// one the server exposes.
#[test]
fn the_docs_name_only_metrics_that_exist() {
    // The dump of known states: every family has samples (a counter without any is not
    // exposed), the skip counter included.
    let server = common::Server::start(&known_states());
    let text = scrape(&server);
    let exposed: std::collections::BTreeSet<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("# TYPE "))
        .filter_map(|l| l.split(' ').next())
        .collect();
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    for file in [
        "docs/prometheus.yml",
        "docs/connect-state-alerts.yml",
        "docs/grafana-dashboard.json",
        "README.md",
    ] {
        let doc = std::fs::read_to_string(format!("{root}/{file}")).unwrap();
        let mut named = 0;
        for (i, _) in doc.match_indices("connect_state_") {
            let name: String = doc[i..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            // Library paths (connect_state_core::...) and file names (libconnect_state_c.a)
            // are not metrics.
            let inside_a_word = doc[..i]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
            if doc[i + name.len()..].starts_with("::") || name.ends_with('_') || inside_a_word {
                continue;
            }
            let family = name.strip_suffix("_total").unwrap_or(&name);
            assert!(
                exposed.contains(family),
                "{file} names {name}, which /metrics lacks"
            );
            named += 1;
        }
        if file.starts_with("docs/connect-state") || file.ends_with(".json") {
            assert!(named > 0, "{file} names no metric");
        }
    }
}
