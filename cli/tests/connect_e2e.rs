//! End to end against a real Apache Kafka and real Kafka Connect workers
//! (`scripts/local-cluster`, which `.ci/run` starts): a scripted connector lifecycle through
//! Connect's own REST API, after every step `connect-state inspect` and `connect-state serve`
//! checked against what the Java workers answer; our writes read by Java; a crashed writer's
//! inconsistency seen alike; exactly-once config topics; kcat dumps.
//!
//! ```sh
//! scripts/local-cluster start --workers 2 --exactly-once-workers 1 --secure --dir /tmp/lc
//! CONNECT_STATE_TEST_CLUSTER=/tmp/lc/cluster.env \
//!   cargo test -p connect-state-cli --test connect_e2e -- --ignored --test-threads 1
//! ```
//!
//! What cannot match, and is not compared (README, "End to end against Java Connect"): a sink
//! connector's `GET .../offsets` (its consumer group's offsets, which the topics do not hold);
//! the order of map members (connector configs, the `expand` map) and of lists Java builds from
//! hash sets (connector names, active topics, offsets entries), which are compared as maps and
//! sets.

mod common;

use common::connect::{
    connect_state, count_line, eventually, get, http, lines_file, name, partition_count, scratch,
    sink_config, source_config, wait_for_line, Cluster, Java, WAIT,
};

use std::process::Command;
use std::time::Duration;

use serde_json::{json, Value};

// ---- the cluster -------------------------------------------------------------------------------

/// A name for a sink connector the test deletes and creates again.
///
/// A reader starting from the beginning reads the status topic partition by partition. Where
/// the connector's status key lives on a later partition than its task 0's, it reads the
/// delete's connector tombstone after the re-created task's status, and the tombstone drops
/// that status, as Java's reader does too (README, "Where we deliberately differ from Java": a
/// connector tombstone read after a newer task status): a fresh `inspect` and the live worker,
/// which read the records as they came, would then disagree by design. So the name is one
/// whose connector key is read first, and the step compares what it means to.
fn recreatable_sink_name(cluster: &Cluster) -> String {
    let partitions = partition_count(cluster, cluster.get("status.storage.topic"));
    let partition = |key: String| engine::offsets::default_partition(key.as_bytes(), partitions);
    (0..)
        .map(|n| name(&format!("e2e-sink{n}")))
        .find(|c| {
            partition(format!("status-connector-{c}")) <= partition(format!("status-task-{c}-0"))
        })
        .expect("a name")
}

// ---- Java's REST and our views ---------------------------------------------------------------

fn inspect(cluster: &Cluster, group: &str, extra: &[&str]) -> Value {
    let mut args = vec!["inspect".to_string()];
    args.extend(cluster.topic_args(group));
    args.extend(["--format".into(), "json".into()]);
    args.extend(extra.iter().map(|s| s.to_string()));
    let (code, out, err) = connect_state(&args);
    assert_eq!(code, 0, "inspect failed: {err}");
    serde_json::from_str(&out).unwrap()
}

/// `connect-state serve` over the cluster's topics of `group`, tailing every 200 ms.
fn serve(cluster: &Cluster, group: &str, extra: &[&str]) -> common::Server {
    let mut args: Vec<String> = vec!["--refresh-ms".into(), "200".into()];
    args.extend(cluster.topic_args(group));
    args.extend(extra.iter().map(|a| a.to_string()));
    common::Server::start(&args)
}

// ---- comparing answers -------------------------------------------------------------------------

/// A value with the members of maps sorted by key and the elements of sets sorted, where `path`
/// says the value is a map or a set rather than an entity with a fixed member order.
/// Paths: `connectors` (the name list: a set), `expand` (connector name → `{status, info}`: a
/// map of maps), `config` (a configuration: a map), `topics` (a set), `offsets` (a set).
fn normalize(kind: &str, value: &Value) -> Value {
    fn sort_map(v: &Value) -> Value {
        match v {
            Value::Object(m) => {
                let mut pairs: Vec<(&String, &Value)> = m.iter().collect();
                pairs.sort_by(|a, b| a.0.cmp(b.0));
                Value::Object(
                    pairs
                        .into_iter()
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect(),
                )
            }
            other => other.clone(),
        }
    }
    fn sort_set(v: &Value) -> Value {
        match v {
            Value::Array(items) => {
                let mut items = items.clone();
                items.sort_by_key(Value::to_string);
                Value::Array(items)
            }
            other => other.clone(),
        }
    }
    fn with_config(v: &Value) -> Value {
        match v {
            Value::Object(m) => Value::Object(
                m.iter()
                    .map(|(k, v)| {
                        let v = if k == "config" {
                            sort_map(v)
                        } else {
                            v.clone()
                        };
                        (k.clone(), v)
                    })
                    .collect(),
            ),
            other => other.clone(),
        }
    }
    match kind {
        "connectors" => sort_set(value),
        "expand" => match sort_map(value) {
            Value::Object(m) => Value::Object(
                m.into_iter()
                    .map(|(c, entry)| {
                        let entry = match sort_map(&entry) {
                            Value::Object(e) => Value::Object(
                                e.into_iter()
                                    .map(|(k, v)| {
                                        let v = if k == "info" { with_config(&v) } else { v };
                                        (k, v)
                                    })
                                    .collect(),
                            ),
                            other => other,
                        };
                        (c, entry)
                    })
                    .collect(),
            ),
            other => other,
        },
        "info" => with_config(value),
        "config" => sort_map(value),
        "tasks" => match value {
            Value::Array(tasks) => Value::Array(tasks.iter().map(with_config).collect()),
            other => other.clone(),
        },
        "topics" => match value {
            Value::Object(m) => Value::Object(
                m.iter()
                    .map(|(c, t)| {
                        let mut t = t.clone();
                        if let Some(list) = t.get("topics").cloned() {
                            t["topics"] = sort_set(&list);
                        }
                        (c.clone(), t)
                    })
                    .collect(),
            ),
            other => other.clone(),
        },
        "offsets" => match value {
            Value::Object(m) => Value::Object(
                m.iter()
                    .map(|(k, v)| {
                        (
                            k.clone(),
                            if k == "offsets" {
                                sort_set(v)
                            } else {
                                v.clone()
                            },
                        )
                    })
                    .collect(),
            ),
            other => other.clone(),
        },
        _ => value.clone(),
    }
}

/// The two values as text: equal text means equal values with the same member order.
fn same(kind: &str, java: &Value, ours: &Value) -> bool {
    // As text: `Value`'s equality ignores member order (serde_json's `preserve_order` map).
    let text = |v: &Value| serde_json::to_string(&normalize(kind, v)).unwrap_or_default();
    text(java) == text(ours)
}

/// `serve` answers every endpoint it implements as the Java worker does, for `connectors`
/// (and only sources' offsets).
fn serve_agrees(java: &str, serve: &str, connectors: &[(&str, bool)]) -> Result<(), String> {
    let mut paths: Vec<(String, &str)> = vec![
        ("/connectors".into(), "connectors"),
        ("/connectors?expand=status&expand=info".into(), "expand"),
        ("/connectors?expand=info".into(), "expand"),
    ];
    for (c, source) in connectors {
        paths.push((format!("/connectors/{c}"), "info"));
        paths.push((format!("/connectors/{c}/config"), "config"));
        paths.push((format!("/connectors/{c}/status"), "status"));
        paths.push((format!("/connectors/{c}/tasks"), "tasks"));
        paths.push((format!("/connectors/{c}/topics"), "topics"));
        for t in 0..3 {
            paths.push((format!("/connectors/{c}/tasks/{t}/status"), "status"));
        }
        if *source {
            paths.push((format!("/connectors/{c}/offsets"), "offsets"));
        }
    }
    paths.push(("/connectors/no-such-connector".into(), "error"));
    paths.push(("/connectors/no-such-connector/status".into(), "error"));
    // Other tests' connectors may live on the same cluster: the expanded maps are compared
    // for this test's connectors only.
    let ours = |v: Value, kind: &str| match (kind, v) {
        ("expand", Value::Object(m)) => Value::Object(
            m.into_iter()
                .filter(|(c, _)| connectors.iter().any(|(name, _)| name == c))
                .collect(),
        ),
        (_, v) => v,
    };
    for (path, kind) in paths {
        let (js, jb) = get(&format!("{java}{path}"));
        let (ss, sb) = get(&format!("{serve}{path}"));
        let (jb, sb) = (ours(jb, kind), ours(sb, kind));
        if js != ss || !same(kind, &jb, &sb) {
            return Err(format!(
                "GET {path}\n  Java  {js} {}\n  serve {ss} {}",
                normalize(kind, &jb),
                normalize(kind, &sb)
            ));
        }
    }
    Ok(())
}

/// `inspect`'s view agrees with the Java worker's REST answers for `connectors`.
fn inspect_agrees(java: &str, doc: &Value, connectors: &[(&str, bool)]) -> Result<(), String> {
    let mut names: Vec<String> = get(&format!("{java}/connectors"))
        .1
        .as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .filter_map(|v| v.as_str().map(String::from))
        .collect();
    names.sort();
    let ours: Vec<String> = doc["config"]["connectors"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .filter_map(|v| v.as_str().map(String::from))
        .collect();
    if names != ours {
        return Err(format!("connectors: Java {names:?}, inspect {ours:?}"));
    }
    for (c, source) in connectors {
        let differ = |what: &str, j: &dyn std::fmt::Display, o: &dyn std::fmt::Display| {
            Err(format!("{c} {what}\n  Java    {j}\n  inspect {o}"))
        };
        let (code, info) = get(&format!("{java}/connectors/{c}"));
        if code == 404 {
            if doc["config"]["connector_configs"].get(*c).is_some() {
                return differ("exists", &"no", &"yes");
            }
            continue;
        }
        let config = &doc["config"]["connector_configs"][*c];
        if !same("config", &info["config"], config) {
            return differ("config", &info["config"], config);
        }
        let java_tasks: Vec<i64> = info["tasks"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| t["task"].as_i64())
            .collect();
        let our_tasks: Vec<i64> = doc["config"]["tasks"][*c]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_i64)
            .collect();
        if java_tasks != our_tasks {
            return differ(
                "tasks",
                &format!("{java_tasks:?}"),
                &format!("{our_tasks:?}"),
            );
        }
        // Task configs, for the committed count.
        let (_, task_infos) = get(&format!("{java}/connectors/{c}/tasks"));
        for t in task_infos.as_array().into_iter().flatten() {
            let n = t["id"]["task"].as_i64().unwrap_or(-1).to_string();
            let ours = &doc["config"]["task_configs"][*c][&n];
            if !same("config", &t["config"], ours) {
                return differ(&format!("task {n} config"), &t["config"], ours);
            }
        }
        // Statuses.
        let (code, status) = get(&format!("{java}/connectors/{c}/status"));
        let ours = &doc["status"]["connectors"][*c];
        if code == 200 {
            for member in ["state", "worker_id"] {
                if status["connector"][member] != ours[member] {
                    return differ(member, &status["connector"], ours);
                }
            }
            for t in status["tasks"].as_array().into_iter().flatten() {
                let n = t["id"].as_i64().unwrap_or(-1).to_string();
                let ours = &doc["status"]["tasks"][*c][&n];
                if t["state"] != ours["state"] || t["worker_id"] != ours["worker_id"] {
                    return differ(&format!("task {n} status"), t, ours);
                }
            }
        }
        // KIP-558 active topics.
        let (_, topics) = get(&format!("{java}/connectors/{c}/topics"));
        let mut java_topics: Vec<String> = topics[*c]["topics"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| t.as_str().map(String::from))
            .collect();
        java_topics.sort();
        let our_topics: Vec<String> = doc["status"]["topics"][*c]
            .as_object()
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default();
        if java_topics != our_topics {
            return differ(
                "topics",
                &format!("{java_topics:?}"),
                &format!("{our_topics:?}"),
            );
        }
        // KIP-875 offsets of a source connector.
        if *source {
            let (_, offsets) = get(&format!("{java}/connectors/{c}/offsets"));
            let ours = &doc["offsets"]["connectors"][*c];
            let ours = if ours.is_null() {
                json!({"offsets": []})
            } else {
                ours.clone()
            };
            if !same("offsets", &offsets, &ours) {
                return differ("offsets", &offsets, &ours);
            }
        }
    }
    Ok(())
}

/// Both `inspect` and `serve` agree with the Java worker, eventually (the worker's herder and
/// our readers catch up with the topics at their own pace).
fn all_agree(step: &str, cluster: &Cluster, serve: &common::Server, connectors: &[(&str, bool)]) {
    let java = &cluster.connect()[0];
    eventually(
        &format!("after {step}: inspect agrees with Java"),
        WAIT,
        || inspect_agrees(java, &inspect(cluster, "", &[]), connectors),
    );
    eventually(
        &format!("after {step}: serve agrees with Java"),
        WAIT,
        || serve_agrees(java, &serve.base, connectors),
    );
}

/// A file of `n` lines `line-1` ... `line-n`.
/// Appends a record with a key Connect ignores to `topic` (it rolls the active segment).
fn roll(cluster: &Cluster, topic: &str) {
    use connect_state_kafka::{KafkaSettings, KafkaTransport};
    use connect_state_store::{ProduceMode, Transport};
    let runtime = common::runtime();
    runtime.block_on(async {
        let transport = KafkaTransport::new(KafkaSettings::new(cluster.bootstrap())).unwrap();
        let record = engine::ProducerRecord::from_strings(
            "connect-state-e2e-roll".into(),
            Some("{}".into()),
        );
        transport
            .produce(topic, &[record], ProduceMode::Plain)
            .await
            .unwrap();
    });
}

/// Records of a topic as the broker holds them now (after any compaction).
fn record_count(cluster: &Cluster, topic: &str) -> u64 {
    let mut settings = connect_state_kafka::KafkaSettings::new(cluster.bootstrap());
    settings.request_timeout = Duration::from_secs(10);
    connect_state_kafka::raw::count_bytes(&settings, topic)
        .map(|(n, _)| n)
        .unwrap_or_else(|e| panic!("counting {topic}: {e}"))
}

// ---- the tests ---------------------------------------------------------------------------------

#[test]
#[ignore = "needs the local cluster: set CONNECT_STATE_TEST_CLUSTER (see .ci/run)"]
fn a_connector_lifecycle_reads_the_same_through_inspect_serve_and_java() {
    let cluster = Cluster::from_env();
    let java = Java {
        url: &cluster.connect()[0],
    };
    let dir = scratch("lifecycle");
    let (input, output) = (dir.join("in.txt"), dir.join("out.txt"));
    lines_file(&input, 20);
    let topic = common::unique_topic("e2e-lines");
    let (src, sink) = (name("e2e-src"), recreatable_sink_name(&cluster));
    let (src, sink) = (src.as_str(), sink.as_str());
    let both = [(src, true), (sink, false)];
    let serve = serve(
        &cluster,
        "",
        &["--allow-writes", "--topic-tracking-allow-reset", "true"],
    );

    java.put_config(src, &source_config(&input, &topic));
    java.wait_state(src, "RUNNING", 1, "RUNNING");
    java.put_config(sink, &sink_config(&output, &topic, 1));
    java.wait_state(sink, "RUNNING", 1, "RUNNING");
    wait_for_line(&output, "line-20", 1);
    all_agree("create", &cluster, &serve, &both);

    for tasks in [3, 2] {
        java.put_config(sink, &sink_config(&output, &topic, tasks));
        java.wait_state(sink, "RUNNING", tasks as usize, "RUNNING");
        all_agree(&format!("tasks.max={tasks}"), &cluster, &serve, &both);
    }

    assert_eq!(java.action("PUT", sink, "/pause"), 202);
    java.wait_state(sink, "PAUSED", 2, "PAUSED");
    all_agree("pause", &cluster, &serve, &both);
    assert_eq!(java.action("PUT", sink, "/resume"), 202);
    java.wait_state(sink, "RUNNING", 2, "RUNNING");
    all_agree("resume", &cluster, &serve, &both);

    assert_eq!(java.action("PUT", src, "/stop"), 204);
    java.wait_state(src, "STOPPED", 0, "");
    all_agree("stop", &cluster, &serve, &both);

    // KIP-875 through Java: alter, then reset.
    let alter = json!({"offsets": [{"partition": {"filename": input.display().to_string()},
                                    "offset": {"position": 0}}]});
    let (code, body) = http(
        "PATCH",
        &format!("{}/offsets", java.connector(src)),
        Some(&alter),
    );
    assert_eq!(code, 200, "{body}");
    all_agree("offsets alter", &cluster, &serve, &both);
    let (code, body) = http("DELETE", &format!("{}/offsets", java.connector(src)), None);
    assert_eq!(code, 200, "{body}");
    all_agree("offsets reset", &cluster, &serve, &both);

    // Resumed after the reset, the source reads its file again from the start.
    assert_eq!(java.action("PUT", src, "/resume"), 202);
    java.wait_state(src, "RUNNING", 1, "RUNNING");
    wait_for_line(&output, "line-20", 2);
    all_agree("resume after reset", &cluster, &serve, &both);

    let code = java.action("POST", sink, "/restart?includeTasks=true");
    assert!(matches!(code, 202 | 204), "restart: {code}");
    java.wait_state(sink, "RUNNING", 2, "RUNNING");
    all_agree("restart", &cluster, &serve, &both);

    // KIP-558: both connectors track the topic; Java resets the sink's.
    assert_eq!(java.action("PUT", sink, "/stop"), 204);
    java.wait_state(sink, "STOPPED", 0, "");
    assert_eq!(java.action("PUT", sink, "/topics/reset"), 202);
    all_agree("topics reset", &cluster, &serve, &both);

    assert_eq!(java.action("DELETE", sink, ""), 204);
    all_agree("delete", &cluster, &serve, &both);
    java.put_config(sink, &sink_config(&output, &topic, 1));
    java.wait_state(sink, "RUNNING", 1, "RUNNING");
    all_agree("re-create", &cluster, &serve, &both);

    // After the broker's cleaner compacted the config topic, a fresh read still agrees.
    let configs = cluster.get("config.storage.topic").to_string();
    let before = record_count(&cluster, &configs);
    eventually("the broker compacting the config topic", WAIT, || {
        // A record after segment.ms rolls the active segment, which the cleaner never touches.
        // Its key is one Connect ignores (a connector config written again instead would come
        // after the connector's commit once compacted, and any fresh reader, Java's included,
        // would then drop the connector's tasks: README, "A fresh reader after compaction").
        roll(&cluster, &configs);
        std::thread::sleep(Duration::from_secs(3));
        let now = record_count(&cluster, &configs);
        (now < before)
            .then_some(())
            .ok_or(format!("{now} records, {before} before"))
    });
    all_agree("compaction", &cluster, &serve, &both);
    for c in [src, sink] {
        assert_eq!(java.action("DELETE", c, ""), 204);
    }
}

/// Our KIP-875 writes (`offsets import` and `offsets reset --execute`) land as Java reads them:
/// Java's `GET /offsets` shows exactly them and the resumed source task starts from them; a
/// KIP-558 reset through `serve --allow-writes` empties Java's `/topics`.
#[test]
#[ignore = "needs the local cluster: set CONNECT_STATE_TEST_CLUSTER (see .ci/run)"]
fn our_writes_land_as_java_reads_them() {
    let cluster = Cluster::from_env();
    let java = Java {
        url: &cluster.connect()[0],
    };
    let dir = scratch("writes");
    let (input, output) = (dir.join("in.txt"), dir.join("out.txt"));
    lines_file(&input, 30);
    let topic = common::unique_topic("e2e-writes");
    let (src, sink) = (name("e2e-w-src"), name("e2e-w-sink"));
    let (src, sink) = (src.as_str(), sink.as_str());
    java.put_config(src, &source_config(&input, &topic));
    java.put_config(sink, &sink_config(&output, &topic, 1));
    java.wait_state(sink, "RUNNING", 1, "RUNNING");
    wait_for_line(&output, "line-30", 1);
    assert_eq!(java.action("PUT", src, "/stop"), 204);
    java.wait_state(src, "STOPPED", 0, "");

    // `offsets import --execute`: the byte position where line 21 starts.
    let position: usize = (1..=20).map(|i| format!("line-{i}\n").len()).sum();
    let file = dir.join("offsets.json");
    let document = json!({"offsets": [{"partition": {"filename": input.display().to_string()},
                                       "offset": {"position": position}}]});
    std::fs::write(&file, document.to_string()).unwrap();
    let mut args = vec![
        "offsets".to_string(),
        "import".into(),
        "--connector".into(),
        src.into(),
        file.display().to_string(),
    ];
    args.extend(cluster.topic_args(""));
    args.push("--execute".into());
    let (code, out, err) = connect_state(&args);
    assert_eq!(code, 0, "offsets import: {out}{err}");
    eventually("Java reading our offsets", WAIT, || {
        let (_, offsets) = get(&format!("{}/offsets", java.connector(src)));
        (offsets == document)
            .then_some(())
            .ok_or(format!("{offsets}"))
    });
    assert_eq!(java.action("PUT", src, "/resume"), 202);
    eventually("the source starting from our offset", WAIT, || {
        let (again, once) = (
            count_line(&output, "line-21"),
            count_line(&output, "line-20"),
        );
        (again == 2 && once == 1 && count_line(&output, "line-30") == 2)
            .then_some(())
            .ok_or(format!("line-21 x{again}, line-20 x{once}"))
    });

    // `offsets reset --execute`, then a resume reads the whole file again.
    assert_eq!(java.action("PUT", src, "/stop"), 204);
    java.wait_state(src, "STOPPED", 0, "");
    let mut args = vec![
        "offsets".to_string(),
        "reset".into(),
        "--connector".into(),
        src.into(),
    ];
    args.extend(cluster.topic_args(""));
    args.push("--execute".into());
    let (code, out, err) = connect_state(&args);
    assert_eq!(code, 0, "offsets reset: {out}{err}");
    eventually("Java reading our reset", WAIT, || {
        let (_, offsets) = get(&format!("{}/offsets", java.connector(src)));
        (offsets == json!({"offsets": []}))
            .then_some(())
            .ok_or(format!("{offsets}"))
    });
    assert_eq!(java.action("PUT", src, "/resume"), 202);
    eventually("the source starting from the beginning", WAIT, || {
        let n = count_line(&output, "line-1");
        (n == 2).then_some(()).ok_or(format!("line-1 x{n}"))
    });

    // KIP-558 reset through our serve.
    let serve = serve(
        &cluster,
        "",
        &["--allow-writes", "--topic-tracking-allow-reset", "true"],
    );
    eventually("Java tracking the topic", WAIT, || {
        let (_, topics) = get(&format!("{}/topics", java.connector(sink)));
        (topics[sink]["topics"] == json!([topic]))
            .then_some(())
            .ok_or(format!("{topics}"))
    });
    assert_eq!(java.action("PUT", sink, "/stop"), 204);
    java.wait_state(sink, "STOPPED", 0, "");
    eventually("serve seeing the stopped sink", WAIT, || {
        let (code, body) = http(
            "PUT",
            &format!("{}/connectors/{sink}/topics/reset", serve.base),
            None,
        );
        (code == 202).then_some(()).ok_or(format!("{code} {body}"))
    });
    eventually("Java reading our topic reset", WAIT, || {
        let (_, topics) = get(&format!("{}/topics", java.connector(sink)));
        (topics == json!({sink: {"topics": []}}))
            .then_some(())
            .ok_or(format!("{topics}"))
    });
    for c in [src, sink] {
        assert_eq!(java.action("DELETE", c, ""), 204);
    }
}

/// A writer that crashed half-way (half a task-config set, then a commit announcing them all,
/// written by our store): the Java workers and `connect-state` both see the connector
/// inconsistent with the same tasks missing; `doctor` explains it; a reconfiguration through
/// Java settles it and both agree again.
#[test]
#[ignore = "needs the local cluster: set CONNECT_STATE_TEST_CLUSTER (see .ci/run)"]
fn a_crashed_writer_leaves_the_same_inconsistency_for_java_and_for_us() {
    use connect_state_kafka::{KafkaSettings, KafkaTransport};
    use connect_state_store::{ConfigStore, StoreSettings, TopicKind};
    use engine::config::{write, ConfigLog};
    use std::sync::Arc;

    let cluster = Cluster::from_env();
    let java = Java {
        url: &cluster.connect()[0],
    };
    let dir = scratch("crash");
    let topic = common::unique_topic("e2e-crash");
    let c = name("e2e-crash");
    let c = c.as_str();
    let config = sink_config(&dir.join("out.txt"), &topic, 3);
    java.put_config(c, &config);
    java.wait_state(c, "RUNNING", 3, "RUNNING");

    // The crashed writer: tasks 0 and 1 of a new three-task set, then the commit.
    let configs = cluster.get("config.storage.topic").to_string();
    let runtime = common::runtime();
    runtime.block_on(async {
        let transport =
            Arc::new(KafkaTransport::new(KafkaSettings::new(cluster.bootstrap())).unwrap());
        let mut settings = StoreSettings::new(&configs, TopicKind::Config);
        settings.create_if_missing = false;
        let mut store = ConfigStore::new(settings, transport, ConfigLog::new());
        store.start().await.unwrap();
        let plan = write::put_task_configs(
            c,
            (0..3).map(|t| {
                vec![
                    ("task.class", Some("crashed")),
                    ("task", Some(["0", "1", "2"][t])),
                ]
            }),
        );
        // All records of the plan but task 2: a writer that died after two sends and a
        // commit that still went out (or whose task 2 the cleaner removed).
        let records: Vec<_> = plan
            .records()
            .filter(|r| r.key != format!("task-{c}-2").into_bytes())
            .cloned()
            .collect();
        store
            .write(
                &records,
                connect_state_store::ProduceMode::Plain,
                true,
                "crashed writer",
            )
            .await
            .unwrap();
    });

    // Java: no tasks for the connector (ClusterConfigState.tasks is empty when inconsistent).
    eventually("Java seeing the connector inconsistent", WAIT, || {
        let (_, info) = get(&java.connector(c));
        (info["tasks"] == json!([]))
            .then_some(())
            .ok_or(format!("{info}"))
    });
    let doc = inspect(&cluster, "", &[]);
    assert_eq!(
        doc["config"]["inconsistent"],
        json!([c]),
        "{}",
        doc["config"]
    );
    assert_eq!(doc["config"]["tasks"][c], json!([]));
    assert_eq!(doc["config"]["connector_task_counts"][c], json!(3));
    inspect_agrees(&cluster.connect()[0], &doc, &[(c, false)]).unwrap();
    let mut args = vec!["doctor".to_string()];
    args.extend(cluster.topic_args(""));
    args.extend(["--format".into(), "json".into()]);
    let (code, out, err) = connect_state(&args);
    assert_eq!(code, 1, "doctor reports findings: {err}");
    let report: Value = serde_json::from_str(&out).unwrap();
    let finding = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["check"] == "inconsistent-connector" && f["connector"] == c)
        .unwrap_or_else(|| panic!("no inconsistency finding for {c}: {out}"));
    assert!(
        finding["summary"].as_str().unwrap().contains('2'),
        "the missing task id is named: {finding}"
    );

    // A reconfiguration through Java writes a complete set again.
    let mut reconfigured = config.clone();
    reconfigured["tasks.max"] = json!("2");
    java.put_config(c, &reconfigured);
    java.wait_state(c, "RUNNING", 2, "RUNNING");
    eventually("both agreeing again", WAIT, || {
        let doc = inspect(&cluster, "", &[]);
        if doc["config"]["inconsistent"] != json!([]) {
            return Err(format!(
                "still inconsistent: {}",
                doc["config"]["inconsistent"]
            ));
        }
        inspect_agrees(&cluster.connect()[0], &doc, &[(c, false)])
    });
    assert_eq!(java.action("DELETE", c, ""), 204);
}

/// Exactly-once source support: the leader writes the config topic in transactions; `inspect
/// --read-committed` agrees with the Java workers, and an aborted transaction of another
/// transactional writer stays invisible to both (while a read_uncommitted `inspect` sees it).
#[test]
#[ignore = "needs the local cluster: set CONNECT_STATE_TEST_CLUSTER (see .ci/run)"]
fn exactly_once_config_topics_read_committed_as_java_reads_them() {
    use rdkafka::config::ClientConfig;
    use rdkafka::producer::{BaseProducer, BaseRecord, Producer};

    let cluster = Cluster::from_env();
    let eos = cluster.eos_connect()[0].clone();
    let java = Java { url: &eos };
    let dir = scratch("eos");
    let input = dir.join("in.txt");
    lines_file(&input, 10);
    let topic = common::unique_topic("e2e-eos");
    let c = name("e2e-eos-src");
    let c = c.as_str();
    java.put_config(c, &source_config(&input, &topic));
    java.wait_state(c, "RUNNING", 1, "RUNNING");

    // Another transactional writer's aborted transaction on the config topic.
    let configs = cluster.get("eos.config.storage.topic").to_string();
    let producer: BaseProducer = ClientConfig::new()
        .set("bootstrap.servers", cluster.bootstrap())
        .set(
            "transactional.id",
            common::unique_topic("connect-state-e2e-abort"),
        )
        .create()
        .unwrap();
    producer.init_transactions(Duration::from_secs(30)).unwrap();
    producer.begin_transaction().unwrap();
    producer
        .send(
            BaseRecord::to(&configs)
                .key(format!("connector-{}", name("e2e-aborted")).as_str())
                .payload(r#"{"properties":{"connector.class":"FileStreamSource"}}"#),
        )
        .map_err(|(e, _)| e)
        .unwrap();
    producer.flush(Duration::from_secs(30)).unwrap();
    producer.abort_transaction(Duration::from_secs(30)).unwrap();

    // Read uncommitted at once: the cluster's cleaner runs every 100 ms with 500 ms segments,
    // and a compaction removes aborted transactional records. So when our read misses the
    // record, a raw read_uncommitted read made after ours tells a miss from a compaction.
    let aborted_key = format!("connector-{}", name("e2e-aborted"));
    let uncommitted = inspect(&cluster, "eos.", &[]);
    let seen = uncommitted["config"]["connectors"]
        .as_array()
        .unwrap()
        .contains(&json!(name("e2e-aborted")));
    if !seen {
        let out = Command::new("kcat")
            .args(["-C", "-b", cluster.bootstrap(), "-t", &configs, "-e", "-q"])
            .args(["-X", "isolation.level=read_uncommitted", "-f", "%k\\n"])
            .output()
            .expect("kcat (Debian's package) is installed");
        assert!(
            out.status.success(),
            "kcat: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let still_there = String::from_utf8_lossy(&out.stdout)
            .lines()
            .any(|key| key == aborted_key);
        assert!(
            !still_there,
            "read_uncommitted sees the aborted record, as a Java worker without exactly-once does"
        );
        eprintln!("note: the cleaner removed the aborted record before the uncommitted read");
    }

    let committed = eventually("inspect --read-committed agreeing with Java", WAIT, || {
        let doc = inspect(&cluster, "eos.", &["--read-committed"]);
        inspect_agrees(&eos, &doc, &[(c, true)]).map(|()| doc)
    });
    let aborted = json!(name("e2e-aborted"));
    assert!(!committed["config"]["connectors"]
        .as_array()
        .unwrap()
        .contains(&aborted));
    let (_, names) = get(&format!("{eos}/connectors"));
    assert!(
        !names.as_array().unwrap().contains(&aborted),
        "Java ignores the aborted record: {names}"
    );
    assert_eq!(java.action("DELETE", c, ""), 204);
}

/// Debian's kcat dumps the three topics in the format `replay` reads; the replay of the dump
/// equals what `inspect` reads live. (The broker's cleaner may compact between the two reads,
/// and compaction changes what Java computes, e.g. task config generations; so both reads are
/// repeated until they see the same log.)
#[test]
#[ignore = "needs the local cluster: set CONNECT_STATE_TEST_CLUSTER (see .ci/run)"]
fn a_kcat_dump_replays_to_what_inspect_reads() {
    let cluster = Cluster::from_env();
    for (kind, key) in [
        ("config", "config.storage.topic"),
        ("status", "status.storage.topic"),
        ("offsets", "offset.storage.topic"),
    ] {
        eventually(
            &format!("{kind}: a kcat dump replaying to the live state"),
            WAIT,
            || {
                let out = Command::new("kcat")
                    .args([
                        "-C",
                        "-b",
                        cluster.bootstrap(),
                        "-t",
                        cluster.get(key),
                        "-e",
                        "-J",
                        "-q",
                    ])
                    .output()
                    .expect("kcat (Debian's package) is installed");
                if !out.status.success() {
                    return Err(String::from_utf8_lossy(&out.stderr).into_owned());
                }
                let dump = common::write_file(
                    &format!("kcat-{kind}.jsonl"),
                    &String::from_utf8_lossy(&out.stdout),
                );
                let (code, replayed, err) = connect_state(&[
                    "replay".into(),
                    "--topic".into(),
                    kind.into(),
                    "--format".into(),
                    "json".into(),
                    dump.display().to_string(),
                ]);
                if code != 0 {
                    return Err(err);
                }
                let replayed: Value = serde_json::from_str(&replayed).unwrap();
                let live = inspect(&cluster, "", &[]);
                (replayed == live[kind])
                    .then_some(())
                    .ok_or(format!("replayed {replayed}\nlive {}", live[kind]))
            },
        );
    }
}

/// `history` over the live cluster tells a connector's life as Java's workers wrote it, with
/// the broker's timestamps, one stream per partition; `inspect --as-of` a time before the
/// connector existed does not list it, and `diff` between then and now names it.
#[test]
#[ignore = "needs the local cluster: set CONNECT_STATE_TEST_CLUSTER (see .ci/run)"]
fn history_tells_what_java_wrote() {
    let cluster = Cluster::from_env();
    let java = Java {
        url: &cluster.connect()[0],
    };
    let dir = scratch("history");
    let input = dir.join("in.txt");
    lines_file(&input, 5);
    let topic = common::unique_topic("e2e-history");
    let c = name("e2e-history-src");
    let c = c.as_str();
    let now_ms = || {
        let since = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
        since.unwrap().as_millis() as i64
    };
    // The broker stamps records with the producers' clocks, on this machine.
    let before = now_ms() - 1;
    java.put_config(c, &source_config(&input, &topic));
    java.wait_state(c, "RUNNING", 1, "RUNNING");
    assert_eq!(java.action("PUT", c, "/pause"), 202);
    java.wait_state(c, "PAUSED", 1, "PAUSED");
    let entries = eventually("history telling the pause", WAIT, || {
        let mut args: Vec<String> = ["history", "--format", "json", "--connector", c]
            .map(String::from)
            .into();
        args.extend(cluster.topic_args(""));
        let (code, out, err) = connect_state(&args);
        if code != 0 {
            return Err(err);
        }
        let doc: Value = serde_json::from_str(&out).map_err(|e| e.to_string())?;
        let entries = doc["entries"].as_array().cloned().unwrap_or_default();
        let kinds: Vec<&str> = entries.iter().filter_map(|e| e["kind"].as_str()).collect();
        let paused = entries
            .iter()
            .any(|e| e["kind"] == "target_state_changed" && e["to"] == "PAUSED");
        let status_paused = entries
            .iter()
            .any(|e| e["kind"] == "connector_status_changed" && e["to"]["state"] == "PAUSED");
        let committed = kinds.contains(&"offsets_committed");
        (paused && status_paused && committed)
            .then_some(entries.clone())
            .ok_or(format!("{kinds:?}"))
    });
    let kinds: Vec<&str> = entries.iter().filter_map(|e| e["kind"].as_str()).collect();
    for kind in [
        "connector_created",
        "tasks_committed",
        "connector_status_changed",
        "task_status_changed",
        "target_state_changed",
        "offsets_committed",
    ] {
        assert!(kinds.contains(&kind), "{kind} missing from {kinds:?}");
    }
    for entry in &entries {
        assert_eq!(entry["connector"], json!(c));
        let ts = entry["timestamp"]
            .as_i64()
            .expect("the broker stamps every record");
        assert!(ts >= before, "{entry}");
    }
    let first = |kind: &str| kinds.iter().position(|k| *k == kind).unwrap();
    assert!(first("connector_created") < first("tasks_committed"));
    assert!(first("tasks_committed") < first("target_state_changed"));
    let running = entries
        .iter()
        .find(|e| e["kind"] == "task_status_changed")
        .unwrap();
    assert_eq!(running["to"]["state"], "RUNNING");
    assert!(running["to"]["worker_id"].is_string());

    // serve's monitoring over the live topics: the pause in /metrics, the name on /ui/.
    let server = serve(&cluster, "", &[]);
    let wanted = format!("connect_state_connector_state{{connector=\"{c}\",state=\"PAUSED\"}} 1");
    eventually("/metrics showing the pause", WAIT, || {
        let agent: ureq::Agent = ureq::Agent::config_builder().build().into();
        let text = agent
            .get(&format!("{}/metrics", server.base))
            .call()
            .map_err(|e| e.to_string())?
            .body_mut()
            .read_to_string()
            .map_err(|e| e.to_string())?;
        text.contains(&wanted).then_some(()).ok_or(text)
    });
    let agent: ureq::Agent = ureq::Agent::config_builder().build().into();
    let page = agent
        .get(&format!("{}/ui/connectors/{c}", server.base))
        .call()
        .unwrap()
        .body_mut()
        .read_to_string()
        .unwrap();
    assert!(
        page.contains("target_state_changed"),
        "the timeline: {page}"
    );
    drop(server);

    // As of before the connector existed: not there; diff names it.
    let then = show_time(before);
    let past = inspect(&cluster, "", &["--as-of", &then]);
    assert!(!past["config"]["connectors"]
        .as_array()
        .unwrap()
        .contains(&json!(c)));
    let mut args: Vec<String> = ["diff", "--format", "json"].map(String::from).into();
    args.extend(cluster.topic_args(""));
    args.extend(["--as-of".into(), then, "--against".into()]);
    args.extend(cluster.topic_args(""));
    let (code, out, err) = connect_state(&args);
    assert_eq!(code, 1, "{err}");
    let difference: Value = serde_json::from_str(&out).unwrap();
    assert!(difference["only_in_b"]
        .as_array()
        .unwrap()
        .contains(&json!(c)));
    assert_eq!(java.action("DELETE", c, ""), 204);
}

/// A time as `--as-of` takes it.
fn show_time(ms: i64) -> String {
    connect_state_cli::when::show_time(ms)
}
