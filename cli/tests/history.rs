//! History, time travel and diff over the simulator: a scripted lifecycle in
//! which the leader crashes in the middle of a write (a connector becomes inconsistent, then
//! is repaired) and the cleaner compacts the log. Told by the library straight from the
//! simulator, and by the binary from kcat-format dumps of the same topics.

mod common;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;

use std::sync::{Arc, Mutex};

use connect_state_memory::MemoryCluster;
use connect_state_memory::MemoryTransport;
use connect_state_ops::history::{self, Entry, Options, RecordStream};
use connect_state_ops::kcat::DumpRecord;
use connect_state_store::Transport;
use engine::TopicKind;
use serde_json::{json, Value};

/// Every record of `topic`, per partition, with its timestamp.
fn partitions(cluster: &Arc<Mutex<MemoryCluster>>, topic: &str) -> BTreeMap<i32, Vec<DumpRecord>> {
    let transport = MemoryTransport::new(cluster.clone());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    runtime.block_on(async {
        let mut out = BTreeMap::new();
        for (partition, end) in transport.end_offsets(topic).await.unwrap() {
            let mut records = Vec::new();
            let mut next = 0;
            while next < end {
                let batch = transport.fetch(topic, partition, next, 1000).await.unwrap();
                records.extend(batch.records.iter().map(|r| DumpRecord::from(r.to_owned())));
                next = batch.next_offset;
            }
            out.insert(partition, records);
        }
        out
    })
}

fn topics(life: &Lifecycle) -> [(TopicKind, &str); 3] {
    [
        (TopicKind::Config, life.config.as_str()),
        (TopicKind::Status, life.status.as_str()),
        (TopicKind::Offsets, life.offsets.as_str()),
    ]
}

/// The library's history of the lifecycle: one stream per partition.
fn told(life: &Lifecycle, options: &Options) -> (Vec<Entry>, history::Summary) {
    let mut streams: Vec<(TopicKind, RecordStream<'_>)> = Vec::new();
    for (kind, topic) in topics(life) {
        for (_, records) in partitions(&life.cluster, topic) {
            streams.push((kind, Box::new(records.into_iter().map(Ok))));
        }
    }
    let mut entries = Vec::new();
    let summary = history::tell(streams, options, &mut |entry| {
        entries.push(entry);
        Ok(())
    })
    .unwrap();
    (entries, summary)
}

/// The lifecycle's topics as kcat dumps (`-J` lines with `ts`), one file per topic.
fn dumps(life: &Lifecycle, name: &str) -> Vec<(TopicKind, PathBuf)> {
    topics(life)
        .into_iter()
        .map(|(kind, topic)| {
            let mut text = String::new();
            for records in partitions(&life.cluster, topic).values() {
                for r in records {
                    let line = json!({
                        "topic": topic, "partition": r.partition, "offset": r.offset,
                        "tstype": "create", "ts": r.timestamp,
                        "key": r.key.as_deref().map(|k| String::from_utf8(k.to_vec()).unwrap()),
                        "payload": r.value.as_deref().map(|v| String::from_utf8(v.to_vec()).unwrap()),
                    });
                    text.push_str(&line.to_string());
                    text.push('\n');
                }
            }
            let name = format!("history-{name}-{}.jsonl", kind.name());
            (kind, common::write_file(&name, &text))
        })
        .collect()
}

fn dump_args(dumps: &[(TopicKind, PathBuf)], which: &[TopicKind]) -> Vec<String> {
    dumps
        .iter()
        .filter(|(kind, _)| which.contains(kind))
        .flat_map(|(kind, file)| {
            [
                "--from-dump".to_string(),
                format!("{}={}", kind.name(), file.display()),
            ]
        })
        .collect()
}

fn binary(args: &[String]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_connect-state"))
        .args(args)
        .output()
        .expect("the binary runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn args(parts: &[&str], rest: Vec<String>) -> Vec<String> {
    parts.iter().map(|s| s.to_string()).chain(rest).collect()
}

/// The first entry of `kind`, and where it is.
fn first<'a>(entries: &'a [Entry], kind: &str) -> (usize, &'a Entry) {
    entries
        .iter()
        .enumerate()
        .find(|(_, e)| e.kind == kind)
        .unwrap_or_else(|| panic!("no {kind}: {entries:#?}"))
}

/// The entry after `after` of `kind` for `connector`.
fn find<'a>(entries: &'a [Entry], kind: &str, connector: &str, after: usize) -> (usize, &'a Entry) {
    entries
        .iter()
        .enumerate()
        .skip(after)
        .find(|(_, e)| e.kind == kind && e.connector.as_deref() == Some(connector))
        .unwrap_or_else(|| panic!("no {kind} of {connector} after entry {after}"))
}

/// A scripted lifecycle on the simulator: `orders` is created with two tasks; its tasks are
/// regenerated and the leader crashes after writing the first task config of three (no
/// commit); the cleaner compacts the config topic, which removes the task-0 record the first
/// commit needed; a new leader repairs the connector; its config changes, it is paused and a
/// task fails.
struct Lifecycle {
    cluster: Arc<Mutex<MemoryCluster>>,
    config: String,
    status: String,
    offsets: String,
}

fn lifecycle() -> Lifecycle {
    use connect_state_memory::{ProduceFault, TopicConfig};
    use connect_state_store::ProduceMode;
    use engine::config::{write, TargetState};
    use engine::ProducerRecord;

    let cluster = Arc::new(Mutex::new(MemoryCluster::new(11)));
    let (config, status, offsets) = (
        "connect-configs".to_string(),
        "connect-status".to_string(),
        "connect-offsets".to_string(),
    );
    {
        let mut c = cluster.lock().unwrap();
        c.create_topic(&config, TopicConfig::compacted(1)).unwrap();
        c.create_topic(&status, TopicConfig::compacted(5)).unwrap();
        c.create_topic(&offsets, TopicConfig::compacted(3)).unwrap();
    }
    let transport = MemoryTransport::new(cluster.clone());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let produce = |topic: &str, records: Vec<ProducerRecord>| {
        cluster.lock().unwrap().advance_clock(1_000);
        runtime.block_on(transport.produce(topic, &records, ProduceMode::Plain))
    };
    let records = |plan: engine::plan::WritePlan| plan.records().cloned().collect::<Vec<_>>();
    let props = |tasks: &'static str| {
        [
            ("connector.class", Some("FileStreamSink")),
            ("tasks.max", Some(tasks)),
            ("topics", Some("orders")),
            ("connection.password", Some("hunter2")),
        ]
    };
    let task = |n: &'static str| [("task.class", Some("FileStreamSinkTask")), ("n", Some(n))];
    produce(
        &config,
        records(write::put_connector_config("orders", props("2"), None)),
    )
    .unwrap();
    produce(
        &config,
        records(write::put_task_configs("orders", [task("0"), task("1")])),
    )
    .unwrap();
    let status_value = |state: &str, worker: &str| {
        Some(format!(
            r#"{{"state":"{state}","trace":null,"worker_id":"{worker}","generation":3}}"#
        ))
    };
    for key in ["status-connector-orders", "status-task-orders-0"] {
        let record = ProducerRecord::from_strings(key.into(), status_value("RUNNING", "w1:8083"));
        produce(&status, vec![record]).unwrap();
    }
    // The task regeneration: the leader crashes after the first of four records.
    transport.push_produce_fault(ProduceFault::CrashAfter(1));
    let crashed = produce(
        &config,
        records(write::put_task_configs(
            "orders",
            [task("0'"), task("1'"), task("2'")],
        )),
    );
    assert!(crashed.is_err(), "the fault crashes the write");
    // The cleaner: task-0's first record is superseded by the crashed write's.
    {
        let mut c = cluster.lock().unwrap();
        c.roll_segment(&config, 0).unwrap();
        let removed: usize = c
            .clean_all(&config)
            .unwrap()
            .iter()
            .map(|p| p.removed)
            .sum();
        assert!(removed > 0);
    }
    // The new leader repairs the connector, its config changes, it is paused; task 0 fails.
    produce(
        &config,
        records(write::put_task_configs(
            "orders",
            [task("0'"), task("1'"), task("2'")],
        )),
    )
    .unwrap();
    produce(
        &config,
        records(write::put_connector_config("orders", props("3"), None)),
    )
    .unwrap();
    produce(
        &config,
        records(write::put_target_state("orders", TargetState::Paused)),
    )
    .unwrap();
    produce(&status, vec![ProducerRecord::from_strings(
        "status-task-orders-0".into(),
        Some(r#"{"state":"FAILED","trace":"java.io.IOException: disk full\n\tat Sink.put","worker_id":"w2:8083","generation":4}"#.into()),
    )]).unwrap();
    // The source side of the story: two commits of two partitions, then a reset of one.
    let offset = |file: &str, position: Option<i32>| {
        ProducerRecord::from_strings(
            format!(r#"["orders",{{"file":"{file}"}}]"#),
            position.map(|p| format!(r#"{{"position":{p}}}"#)),
        )
    };
    produce(&offsets, vec![offset("a", Some(10))]).unwrap();
    produce(&offsets, vec![offset("b", Some(20))]).unwrap();
    produce(&offsets, vec![offset("a", Some(15))]).unwrap();
    produce(&offsets, vec![offset("b", None)]).unwrap();
    Lifecycle {
        cluster,
        config,
        status,
        offsets,
    }
}

#[test]
fn the_crash_its_repair_and_the_compaction_are_told_in_order() {
    let life = lifecycle();
    let (entries, summary) = told(&life, &Options::default());
    let kinds: Vec<&str> = entries.iter().map(|e| e.kind).collect();
    assert_eq!(
        kinds,
        [
            "connector_created",
            "became_inconsistent",
            "connector_status_changed",
            "task_status_changed",
            "tasks_committed",
            "became_consistent",
            "connector_config_changed",
            "target_state_changed",
            "task_status_changed",
            "offsets_committed",
            "offsets_reset",
        ],
        "{entries:#?}"
    );
    // The first commit lost its task-0 record to the cleaner: the compacted log shows the
    // connector inconsistent from the start, missing task 0, until the repair.
    let inconsistent = &entries[1];
    assert_eq!(inconsistent.details["missing_tasks"], json!([0]));
    assert_eq!(inconsistent.details["task_count"], json!(2));
    assert_eq!(entries[4].details["changed_tasks"], json!([0, 1, 2]));
    assert_eq!(entries[4].details["tasks"], json!(3));
    assert_eq!(
        entries[6].details["diff"]["changed"],
        json!({"tasks.max": {"from": "2", "to": "3"}}),
        "the password did not change, so it is not in the diff"
    );
    assert_eq!(entries[7].details["from"], json!("STARTED"));
    assert_eq!(entries[7].details["to"], json!("PAUSED"));
    let failed = &entries[8].details;
    assert_eq!(failed["from"]["state"], json!("RUNNING"));
    assert_eq!(failed["to"]["state"], json!("FAILED"));
    assert_eq!(failed["to"]["worker_id"], json!("w2:8083"));
    assert_eq!(
        failed["to"]["trace"],
        json!("java.io.IOException: disk full")
    );
    // The cleaner's gap is noticed.
    let [config] = &summary.compacted[..] else {
        panic!("one compaction notice: {:?}", summary.compacted)
    };
    assert_eq!(config.topic, TopicKind::Config);
    assert!(config
        .notice()
        .contains("of topic config (partition 0) is compacted"));
    let committed = &entries[9].details;
    assert_eq!(
        (&committed["records"], &committed["partitions"]),
        (&json!(3), &json!(2))
    );
    assert_eq!(committed["first_offset"], json!({"position": 10}));
    assert_eq!(committed["last_offset"], json!({"position": 15}));
    assert_eq!(entries[10].details["records"], json!(1));
    let times: Vec<i64> = entries
        .iter()
        .map(|e| e.position.timestamp.unwrap())
        .collect();
    assert!(
        times.windows(2).all(|w| w[0] <= w[1]),
        "chronological: {times:?}"
    );
}

#[test]
fn the_binary_tells_the_same_history_from_dumps() {
    let life = lifecycle();
    let (entries, summary) = told(&life, &Options::default());
    let dumps = dumps(&life, "binary");
    let all = [TopicKind::Config, TopicKind::Status, TopicKind::Offsets];
    let (code, out, err) = binary(&args(
        &["history", "--format", "json"],
        dump_args(&dumps, &all),
    ));
    assert_eq!(code, 0, "{err}");
    let doc: Value = serde_json::from_str(&out).unwrap();
    // A dump holds its partitions one after another, so the order within the status and
    // offsets topics differs; the entries are the same.
    let mut ours: Vec<String> = entries.iter().map(|e| e.to_json().to_string()).collect();
    let mut theirs: Vec<String> = doc["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(Value::to_string)
        .collect();
    ours.sort();
    theirs.sort();
    if ours != theirs {
        // Offsets runs group consecutive records per connector, so they may be cut
        // differently in another order: compare everything else exactly.
        let runs = |list: &[String]| -> Vec<String> {
            list.iter()
                .filter(|e| !e.contains("\"kind\":\"offsets_"))
                .cloned()
                .collect()
        };
        assert_eq!(runs(&ours), runs(&theirs));
    }
    assert_eq!(doc["records"], json!(summary.records));
    assert_eq!(
        doc["compacted"].as_array().unwrap().len(),
        summary.compacted.len()
    );

    // The table: one line per entry, the notice at the end, names escaped.
    let (code, table, err) = binary(&args(&["history"], dump_args(&dumps, &all)));
    assert_eq!(code, 0, "{err}");
    assert!(table.contains("became_inconsistent"), "{table}");
    assert!(table.contains("is compacted: only the latest record of each key survives"));
    assert_eq!(
        table.lines().filter(|l| l.contains("  config:0@")).count(),
        entries
            .iter()
            .filter(|e| e.position.topic == TopicKind::Config)
            .count()
    );
}

#[test]
fn filters_pick_a_connector_and_a_window() {
    let life = lifecycle();
    let (entries, _) = told(&life, &Options::default());
    let (_, inconsistent) = first(&entries, "became_inconsistent");
    let connector = inconsistent.connector.clone().unwrap();
    let at = inconsistent.position.timestamp.unwrap();
    let options = Options {
        connectors: [connector.clone()].into(),
        since: Some(connect_state_ops::cut::Point::Time(at)),
        ..Options::default()
    };
    let (picked, _) = told(&life, &options);
    assert!(!picked.is_empty());
    assert!(picked
        .iter()
        .all(|e| e.connector.as_deref() == Some(connector.as_str())
            && e.position.timestamp.unwrap() >= at));
    assert_eq!(picked[0].kind, "became_inconsistent");
    let expected: Vec<&Entry> = entries
        .iter()
        .filter(|e| {
            e.connector.as_deref() == Some(connector.as_str())
                && e.position.timestamp.unwrap() >= at
                && !e.kind.starts_with("offsets_")
        })
        .collect();
    let picked_non_runs: Vec<&Entry> = picked
        .iter()
        .filter(|e| !e.kind.starts_with("offsets_"))
        .collect();
    assert_eq!(picked_non_runs, expected);
}

#[test]
fn as_of_the_crash_the_connector_is_inconsistent_and_diff_says_what_changed() {
    let life = lifecycle();
    let (entries, _) = told(&life, &Options::default());
    let (at, inconsistent) = first(&entries, "became_inconsistent");
    let connector = inconsistent.connector.clone().unwrap();
    let offset = inconsistent.position.offset;
    let (_, repaired) = find(&entries, "became_consistent", &connector, at + 1);
    let dumps = dumps(&life, "as-of");
    let config = dump_args(&dumps, &[TopicKind::Config]);
    let inspect = |as_of: &str| -> Value {
        let (code, out, err) = binary(&args(
            &[
                "replay", "--topic", "config", "--format", "json", "--as-of", as_of,
            ],
            vec![dumps[0].1.display().to_string()],
        ));
        assert_eq!(code, 0, "{err}");
        serde_json::from_str(&out).unwrap()
    };
    let inconsistent_names = |doc: &Value| doc["inconsistent"].clone();
    // By offset: the commit record itself is included.
    assert!(inconsistent_names(&inspect(&offset.to_string()))
        .as_array()
        .unwrap()
        .contains(&json!(connector)));
    assert!(!inconsistent_names(&inspect(&(offset - 1).to_string()))
        .as_array()
        .unwrap()
        .contains(&json!(connector)));
    // By time: the repair's timestamp includes the repair.
    let time = |ms: i64| connect_state_cli::when::show_time(ms);
    let after_repair = inspect(&time(repaired.position.timestamp.unwrap()));
    assert!(!inconsistent_names(&after_repair)
        .as_array()
        .unwrap()
        .contains(&json!(connector)));

    // serve answers Connect's REST API as of then: no tasks while the connector is
    // inconsistent (as Java answers); now its three. Writes are refused with it.
    let then = common::Server::start(&{
        let mut a = config.clone();
        a.extend(["--as-of".into(), offset.to_string()]);
        a
    });
    let (status, info) = then.answer("GET", &format!("/connectors/{connector}"));
    assert_eq!((status, &info.unwrap()["tasks"]), (200, &json!([])));
    let (status, past_offset, _) = then.call("GET", "/connectors");
    assert_eq!((status, past_offset), (200, Some(offset + 1)));
    drop(then);
    let now = common::Server::start(&config);
    let (_, info) = now.answer("GET", &format!("/connectors/{connector}"));
    assert_eq!(info.unwrap()["tasks"].as_array().unwrap().len(), 3);
    drop(now);
    let mut writable = args(&["serve"], config.clone());
    writable.extend([
        "--as-of".into(),
        offset.to_string(),
        "--allow-writes".into(),
    ]);
    let (code, _, err) = binary(&writable);
    assert_eq!(code, 2);
    assert!(err.contains("read-only"), "{err}");

    // doctor as of the crash finds the inconsistency; now it does not.
    let doctor = |extra: &[&str]| {
        let mut a = args(&["doctor", "--format", "json"], config.clone());
        a.extend(extra.iter().map(|s| s.to_string()));
        let (code, out, err) = binary(&a);
        assert!(code == 0 || code == 1, "{err}");
        let report: Value = serde_json::from_str(&out).unwrap();
        report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["check"] == "inconsistent-connector")
    };
    assert!(doctor(&["--as-of", &offset.to_string()]));
    assert!(!doctor(&[]));

    // diff: then against now differs (exit 1) in the connector's task count or config;
    // now against now does not (exit 0).
    let mut then_vs_now = args(&["diff", "--format", "json"], config.clone());
    then_vs_now.extend(["--as-of".into(), offset.to_string(), "--against".into()]);
    then_vs_now.extend(config.clone());
    let (code, out, err) = binary(&then_vs_now);
    assert_eq!(code, 1, "{err}");
    let difference: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(difference["differs"], json!(true));
    let mut same = args(&["diff"], config.clone());
    same.push("--against".into());
    same.extend(config.clone());
    let (code, out, err) = binary(&same);
    assert_eq!((code, out.trim()), (0, "No differences."), "{err}");

    // Status and offsets topics are cut by time only.
    let mut status_by_offset = args(&["doctor"], dump_args(&dumps, &[TopicKind::Status]));
    status_by_offset.extend(["--as-of".into(), "3".into()]);
    let (code, _, err) = binary(&status_by_offset);
    assert_eq!(code, 2);
    assert!(err.contains("give a time"), "{err}");
}

#[test]
fn secrets_are_masked_unless_asked_for() {
    let config = common::dump(
        "history-secrets.jsonl",
        &[
            (
                0,
                "connector-db",
                Some(json!({"properties": {
                "connector.class": "JdbcSource", "connection.password": "hunter2", "tasks.max": "1"}})),
            ),
            (
                0,
                "connector-db",
                Some(json!({"properties": {
                "connector.class": "JdbcSource", "connection.password": "hunter3", "tasks.max": "2"}})),
            ),
        ],
    );
    let base = args(
        &["history", "--format", "json"],
        vec!["--from-dump".into(), format!("config={}", config.display())],
    );
    let (code, out, err) = binary(&base);
    assert_eq!(code, 0, "{err}");
    assert!(!out.contains("hunter"), "{out}");
    let doc: Value = serde_json::from_str(&out).unwrap();
    let entries = doc["entries"].as_array().unwrap();
    assert_eq!(entries[0]["kind"], "connector_created");
    assert_eq!(entries[0]["config"]["connection.password"], "[hidden]");
    assert_eq!(
        entries[0]["timestamp"],
        Value::Null,
        "a dump without ts: by offset"
    );
    assert_eq!(
        entries[1]["diff"]["changed"],
        json!({"connection.password": {"from": "[hidden]", "to": "[hidden]"},
               "tasks.max": {"from": "1", "to": "2"}})
    );
    let (_, table, _) = binary(&args(&["history"], base[3..].to_vec()));
    assert!(!table.contains("hunter"), "{table}");
    let mut shown = base.clone();
    shown.push("--show-secrets".into());
    let (_, out, _) = binary(&shown);
    assert!(out.contains("hunter3"));
    // A time bound needs timestamps.
    let mut timed = base;
    timed.extend(["--since".into(), "2026-12-01T00:00:00Z".into()]);
    let (code, _, err) = binary(&timed);
    assert_eq!(code, 2);
    assert!(err.contains("has no timestamp"), "{err}");
}
