//! `connect-state backup` and `restore` end to end on dumps: the document a backup writes (its
//! mode, its lines, its checksum), the plan a dry run prints (names, offsets on the target's
//! partitions, `--rename` and `--set`), the refusals (an inconsistent source, a conflicting
//! target, a damaged, masked, newer or enormous backup). The round trip through written
//! records is the tests crate's `backup_round_trip.rs`; the real-cluster one `backup_e2e.rs`.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::{dump, write_file};
use serde_json::{json, Value};

use common::{run as connect_state, text};

fn flag(topic: &str, path: &Path) -> String {
    format!("{topic}={}", path.display())
}

/// A config topic with a consistent source connector `src` (one task, a secret in its config)
/// and `sink`, whose commit names two tasks when one was written (inconsistent) when
/// `inconsistent`.
fn config(inconsistent: bool) -> PathBuf {
    let sink_tasks = if inconsistent { 2 } else { 1 };
    dump(
        "config.jsonl",
        &[
            (
                0,
                "connector-src",
                Some(
                    json!({"properties": {"name": "src", "connector.class": "FileStreamSource",
                    "file": "/tmp/in", "database.password": "hunter2", "tasks.max": "1"}}),
                ),
            ),
            (
                0,
                "task-src-0",
                Some(json!({"properties": {"file": "/tmp/in", "task.class": "T"}})),
            ),
            (0, "commit-src", Some(json!({"tasks": 1}))),
            (
                0,
                "target-state-src",
                Some(json!({"state": "STARTED", "state.v2": "STARTED"})),
            ),
            (
                0,
                "connector-sink",
                Some(json!({"properties": {"name": "sink", "topics": "t"}})),
            ),
            (
                0,
                "task-sink-0",
                Some(json!({"properties": {"topics": "t"}})),
            ),
            (0, "commit-sink", Some(json!({"tasks": sink_tasks}))),
        ],
    )
}

fn offsets() -> PathBuf {
    dump(
        "offsets.jsonl",
        &[
            (
                3,
                r#"["src",{"filename":"/tmp/in"}]"#,
                Some(json!({"position": 42})),
            ),
            (
                7,
                r#"["src",{"filename":"/tmp/other"}]"#,
                Some(json!({"position": 7})),
            ),
            // A tombstoned partition is not backed up.
            (
                7,
                r#"["src",{"filename":"/tmp/gone"}]"#,
                Some(json!({"position": 1})),
            ),
            (7, r#"["src",{"filename":"/tmp/gone"}]"#, None),
        ],
    )
}

fn empty(name: &str) -> PathBuf {
    write_file(name, "")
}

fn backup_path(name: &str) -> PathBuf {
    let path = write_file(name, "");
    std::fs::remove_file(&path).unwrap();
    path
}

/// Backs up `config` and `offsets` dumps into a fresh file (with `extra` options).
fn take(config: &Path, offsets: &Path, extra: &[&str]) -> (PathBuf, Output) {
    let path = backup_path("backup.jsonl");
    let mut args = vec![
        "backup".to_string(),
        "--from-dump".into(),
        flag("config", config),
        "--from-dump".into(),
        flag("offsets", offsets),
        "-o".into(),
        path.display().to_string(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = connect_state(&args);
    (path, out)
}

fn lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// A dry run of `backup` into empty dumps (and `extra` options), as JSON.
fn dry_run(backup: &Path, config: &Path, offsets: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "restore".to_string(),
        backup.display().to_string(),
        "--from-dump".into(),
        flag("config", config),
        "--from-dump".into(),
        flag("offsets", offsets),
        "--format".into(),
        "json".into(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    connect_state(&args)
}

#[test]
fn a_backup_holds_configs_task_configs_and_live_offsets_bytes_in_a_private_file() {
    let (path, out) = take(&config(false), &offsets(), &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("2 connector(s), 2 source partition(s)"),
        "{stderr}"
    );
    assert!(
        stderr.contains("secrets included") && stderr.contains("0600"),
        "{stderr}"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "{mode:o}");
    }
    let doc = lines(&path);
    assert_eq!(doc[0]["backup"]["format"], "connect-state-backup");
    assert_eq!(doc[0]["backup"]["version"], 1);
    assert_eq!(doc[0]["backup"]["secrets"], "as-stored");
    assert_eq!(doc[0]["backup"]["read_up_to"]["config"]["0"], 7);
    let connectors: Vec<&Value> = doc.iter().filter_map(|l| l.get("connector")).collect();
    assert_eq!(connectors.len(), 2);
    let src = connectors.iter().find(|c| c["name"] == "src").unwrap();
    assert_eq!(src["config"]["database.password"], "hunter2");
    assert_eq!(src["target_state"], "STARTED");
    assert_eq!(src["task_count"], 1);
    assert_eq!(src["task_configs"][0]["config"]["task.class"], "T");
    assert_eq!(src["source_partitions"], 2);
    let offsets: Vec<&Value> = doc.iter().filter_map(|l| l.get("offset")).collect();
    let keys: Vec<&str> = offsets.iter().map(|o| o["key"].as_str().unwrap()).collect();
    assert_eq!(
        keys,
        [
            r#"["src",{"filename":"/tmp/in"}]"#,
            r#"["src",{"filename":"/tmp/other"}]"#
        ]
    );
    assert_eq!(offsets[0]["value"], r#"{"position":42}"#);
    assert_eq!(offsets[0]["partition"], 3);
    let end = &doc.last().unwrap()["end"];
    assert_eq!(
        (
            end["connectors"].as_u64(),
            end["source_partitions"].as_u64()
        ),
        (Some(2), Some(2))
    );
    assert_eq!(end["sha256"].as_str().unwrap().len(), 64);

    // An existing file is not overwritten without --force.
    let again = connect_state(&[
        "backup",
        "--from-dump",
        &flag("config", &config(false)),
        "-o",
        &path.display().to_string(),
    ]);
    assert_eq!(again.status.code(), Some(2));
    assert!(
        text(&again.stderr).contains("--force"),
        "{}",
        text(&again.stderr)
    );
}

#[test]
fn an_inconsistent_source_is_refused_by_name_unless_allowed() {
    let (path, out) = take(&config(true), &offsets(), &[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stdout));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("sink") && stderr.contains("--allow-inconsistent"),
        "{stderr}"
    );
    assert!(!path.exists(), "a refused backup leaves no file");
    let (path, out) = take(&config(true), &offsets(), &["--allow-inconsistent"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(path.exists());
}

#[test]
fn a_dry_run_places_offsets_for_the_target_and_restores_stopped() {
    let (path, out) = take(&config(false), &offsets(), &["--connector", "src"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = dry_run(
        &path,
        &empty("c"),
        &empty("o"),
        &["--offsets-partitions", "25"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let plan: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(plan["written"], false);
    let src = &plan["connectors"][0];
    assert_eq!(src["name"], "src");
    assert_eq!(src["target_state"], "STOPPED");
    assert_eq!(src["source_offsets"], 2);
    assert_eq!(src["task_configs"], Value::Null);
    // Where Java's producer puts each key on 25 partitions (murmur2), not where they were.
    let placed: u64 = src["offsets_per_partition"]
        .as_object()
        .unwrap()
        .values()
        .map(|n| n.as_u64().unwrap())
        .sum();
    assert_eq!(placed, 2);
    // The connector and its STOPPED target state; with --with-task-configs its task and the
    // commit follow the offsets, and a final STARTED when the backup's state is asked for.
    assert_eq!(src["config_records"], 2);
    let out = dry_run(
        &path,
        &empty("c"),
        &empty("o"),
        &["--with-task-configs", "--target-state", "as-backed-up"],
    );
    let plan: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(plan["connectors"][0]["config_records"], 5, "{plan}");
    assert_eq!(plan["connectors"][0]["target_state"], "STARTED");
    let out = plan_offsets_none(&path);
    assert_eq!(out["connectors"][0]["source_offsets"], 0);
}

fn plan_offsets_none(path: &Path) -> Value {
    let out = dry_run(path, &empty("c"), &empty("o"), &["--offsets", "none"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn rename_and_set_change_the_name_keys_and_values() {
    let (path, _) = take(&config(false), &offsets(), &["--connector", "src"]);
    let out = dry_run(
        &path,
        &empty("c"),
        &empty("o"),
        &["--rename", "src=dst", "--set", "dst:file=/tmp/new"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let plan: Value = serde_json::from_slice(&out.stdout).unwrap();
    let dst = &plan["connectors"][0];
    assert_eq!(
        (dst["name"].as_str(), dst["from"].as_str()),
        (Some("dst"), Some("src"))
    );
    assert_eq!(dst["changed"], json!(["name", "file"]));
    // --set by the old name, an unknown connector, and task configs with a rename are refused.
    for (extra, expect) in [
        (
            &["--rename", "src=dst", "--set", "src:file=x"][..],
            "--set names \"src\"",
        ),
        (&["--set", "nope:file=x"][..], "--set names \"nope\""),
        (
            &["--rename", "src=dst", "--with-task-configs"][..],
            "--with-task-configs",
        ),
    ] {
        let out = dry_run(&path, &empty("c"), &empty("o"), extra);
        assert_eq!(out.status.code(), Some(2), "{extra:?}");
        assert!(
            text(&out.stderr).contains(expect),
            "{extra:?}: {}",
            text(&out.stderr)
        );
    }
    // A table dry run says what it would write.
    let out = connect_state(&[
        "restore",
        &path.display().to_string(),
        "--from-dump",
        &flag("config", &empty("c")),
        "--rename",
        "src=dst",
    ]);
    let table = text(&out.stdout);
    assert!(
        table.contains("dst") && table.contains("STOPPED") && table.contains("--execute"),
        "{table}"
    );
}

#[test]
fn a_target_holding_the_connector_is_refused_unless_replaced_while_stopped() {
    let (path, _) = take(&config(false), &offsets(), &["--connector", "src"]);
    // The target runs src with another config and holds an offset of it.
    let target_config = dump(
        "target-config.jsonl",
        &[
            (
                0,
                "connector-src",
                Some(json!({"properties": {"name": "src", "file": "/elsewhere"}})),
            ),
            (0, "commit-src", Some(json!({"tasks": 0}))),
        ],
    );
    let target_offsets = dump(
        "target-offsets.jsonl",
        &[(
            11,
            r#"["src",{"filename":"/old"}]"#,
            Some(json!({"position": 1})),
        )],
    );
    let out = dry_run(&path, &target_config, &target_offsets, &[]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("already holds") && stderr.contains("src"),
        "{stderr}"
    );
    // --replace still needs it STOPPED (Java's rule for writing offsets).
    let out = dry_run(&path, &target_config, &target_offsets, &["--replace"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("STOPPED"),
        "{}",
        text(&out.stderr)
    );
    let stopped = dump(
        "target-config.jsonl",
        &[
            (
                0,
                "connector-src",
                Some(json!({"properties": {"name": "src", "file": "/elsewhere"}})),
            ),
            (0, "commit-src", Some(json!({"tasks": 0}))),
            (
                0,
                "target-state-src",
                Some(json!({"state": "PAUSED", "state.v2": "STOPPED"})),
            ),
        ],
    );
    let out = dry_run(&path, &stopped, &target_offsets, &["--replace"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let plan: Value = serde_json::from_slice(&out.stdout).unwrap();
    let src = &plan["connectors"][0];
    // The old offset is tombstoned where it lives (partition 11), before the new ones.
    assert_eq!(src["old_offsets_tombstoned"], 1, "{plan}");
    assert!(!src["replaces"].as_array().unwrap().is_empty());
}

#[test]
fn damaged_masked_newer_and_enormous_backups_are_refused_with_what_is_wrong() {
    let (path, _) = take(&config(false), &offsets(), &[]);
    let doc = std::fs::read_to_string(&path).unwrap();
    let restore = |text_of: &str, extra: &[&str]| {
        let file = write_file("damaged.jsonl", text_of);
        dry_run(&file, &empty("c"), &empty("o"), extra)
    };
    let all: Vec<&str> = doc.lines().collect();
    let cases: Vec<(String, &str)> = vec![
        (all[..all.len() - 1].join("\n") + "\n", "truncated"),
        (doc.replace("/tmp/in", "/tmp/IN"), "checksum"),
        (
            doc.replacen("\"version\":1", "\"version\":9", 1),
            "version 9",
        ),
        ("{\"connector\":{}}\n".into(), "not a connect-state backup"),
    ];
    for (damaged, expect) in &cases {
        let out = restore(damaged, &[]);
        assert_eq!(out.status.code(), Some(2), "{expect}");
        let stderr = text(&out.stderr);
        assert!(stderr.contains(expect), "{expect}: {stderr}");
        assert!(!stderr.contains("hunter2"), "{stderr}");
    }
    // A line over --max-line-bytes is refused without being read whole.
    let out = restore(&doc, &["--max-line-bytes", "300"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("longer than 300 bytes"),
        "{}",
        text(&out.stderr)
    );

    // A masked backup holds no secret, plans, and is refused for --execute.
    let (masked, out) = take(&config(false), &offsets(), &["--mask-secrets"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let body = std::fs::read_to_string(&masked).unwrap();
    assert!(!body.contains("hunter2"));
    assert!(body.contains("\"secrets\":\"masked\""));
    let out = connect_state(&[
        "restore",
        &masked.display().to_string(),
        "--bootstrap-servers",
        "127.0.0.1:1",
        "--config-topic",
        "c",
        "--offsets-topic",
        "o",
        "--execute",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("masked"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn active_topics_are_taken_from_the_status_topic_when_asked() {
    let status = dump(
        "status.jsonl",
        &[
            (
                0,
                "status-topic-orders:connector-src",
                Some(
                    json!({"topic": {"name": "orders", "connector": "src", "task": 0,
                                      "discoverTimestamp": 5}}),
                ),
            ),
            (
                1,
                "status-topic-refunds:connector-src",
                Some(
                    json!({"topic": {"name": "refunds", "connector": "src", "task": 0,
                                      "discoverTimestamp": 6}}),
                ),
            ),
        ],
    );
    let (path, out) = take(
        &config(false),
        &offsets(),
        &["--active-topics", "--from-dump", &flag("status", &status)],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let doc = lines(&path);
    assert_eq!(doc[0]["backup"]["active_topics"], true);
    let src = doc
        .iter()
        .filter_map(|l| l.get("connector"))
        .find(|c| c["name"] == "src")
        .unwrap();
    assert_eq!(src["active_topics"], json!(["orders", "refunds"]));
    // Without the option the document says nothing of them.
    let (path, _) = take(&config(false), &offsets(), &[]);
    let doc = lines(&path);
    assert_eq!(doc[0]["backup"]["active_topics"], false);
    assert!(doc
        .iter()
        .filter_map(|l| l.get("connector"))
        .all(|c| c.get("active_topics").is_none()));
    // Asked for without a status topic: a clear error.
    let (_, out) = take(&config(false), &offsets(), &["--active-topics"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("status"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn as_of_backs_up_the_state_as_it_was_then() {
    let config = config(false);
    let path = backup_path("as-of.jsonl");
    let out = connect_state(&[
        "backup",
        "--from-dump",
        &flag("config", &config),
        "--as-of",
        "2",
        "-o",
        &path.display().to_string(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let doc = lines(&path);
    assert_eq!(doc[0]["backup"]["as_of"], "2");
    assert_eq!(doc[0]["backup"]["read_up_to"]["config"]["0"], 3);
    // Up to src's commit: no target state written yet (STARTED), and no sink.
    let connectors: Vec<&Value> = doc.iter().filter_map(|l| l.get("connector")).collect();
    assert_eq!(connectors.len(), 1, "{connectors:?}");
    assert_eq!(connectors[0]["name"], "src");
    assert_eq!(connectors[0]["target_state"], "STARTED");
    assert_eq!(connectors[0]["task_count"], 1);
}
