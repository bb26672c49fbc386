//! Java is the judge: the conformance vectors through the core and through Kafka Connect's own
//! stores (the oracle in `tests/java-oracle/`), compared under the README's deliberate
//! differences. Skipped, with a message, where Java or Maven is missing.

use connect_state_tests::differential::{judge, Deliberate};
use connect_state_tests::load_vectors;
use connect_state_tests::oracle::oracle;

#[test]
fn every_vector_agrees_with_java() {
    let Some(mut oracle) = oracle() else { return };
    let vectors = load_vectors();
    assert!(vectors.len() >= 5, "the vectors are missing");
    let mut failures = Vec::new();
    for (name, vector) in vectors {
        match judge(&mut oracle, &vector.case()) {
            Ok(rules) => eprintln!(
                "{name}: agrees with Java {} ({rules:?})",
                oracle.kafka_version
            ),
            Err(difference) => failures.push(format!("{name}: {difference}")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

// ---- The deliberate differences the generators do not reach, each shown with Java's answer ----

use connect_state_tests::differential::ours;
use connect_state_tests::oracle::{Case, CaseRecord, Json, Phase, Topic};

fn config_case(records: Vec<CaseRecord>) -> Case {
    Case::new(Topic::Config, records)
}

/// README item 1: during the start-up read, a record Java throws on with anything but a
/// `KafkaException` (here a null key's NullPointerException) fails the worker's start; the
/// core skips the record, offset advanced, as Java's store does up to the throw.
#[test]
fn a_null_key_during_start_up_would_stop_java_from_starting() {
    let Some(mut oracle) = oracle() else { return };
    let case = config_case(vec![
        CaseRecord::text(0, "connector-a", Some(r#"{"properties":{}}"#)),
        CaseRecord {
            key: None,
            ..CaseRecord::text(1, "", Some("{}"))
        },
    ]);
    let java = oracle.run(&case);
    let thrown = &java.exceptions[0];
    assert_eq!(thrown.class, "java.lang.NullPointerException");
    assert_eq!(thrown.phase, Phase::CatchUp);
    assert!(
        !thrown.kafka_exception,
        "not a KafkaException: start() fails"
    );
    let ours = ours(&case);
    assert!(ours.outcomes[1].java_throws);
    assert_eq!(java.snapshot.get("offset"), ours.snapshot.get("offset"));
    assert_eq!(ours.snapshot.get("offset"), Some(&Json::int(2)));
}

/// README item 6: Jackson detects UTF-16 and UTF-32 input; the core reads UTF-8 only, so such
/// a value is invalid JSON here (the offset does not advance, the record is skipped).
#[test]
fn java_reads_a_utf16_value_the_core_treats_as_invalid_json() {
    let Some(mut oracle) = oracle() else { return };
    let mut utf16 = vec![0xFE, 0xFF];
    for unit in r#"{"properties":{"k":"v"}}"#.encode_utf16() {
        utf16.extend(unit.to_be_bytes());
    }
    let case = config_case(vec![CaseRecord {
        value: Some(utf16),
        ..CaseRecord::text(0, "connector-a", None)
    }]);
    let java = oracle.run(&case);
    assert_eq!(java.snapshot.get("offset"), Some(&Json::int(1)));
    assert_eq!(
        java.snapshot.get("connectors"),
        Some(&Json::Array(vec![Json::String("a".into())]))
    );
    let ours = ours(&case);
    assert_eq!(ours.snapshot.get("offset"), Some(&Json::int(-1)));
    assert!(ours.outcomes[0]
        .skip
        .as_deref()
        .is_some_and(|s| s.contains("converted")));
}

/// README item 7: a commit with a negative task count makes Java's
/// `ClusterConfigState.tasks(c)` throw; the core lists no tasks.
#[test]
fn a_negative_task_count_makes_javas_task_list_throw() {
    let Some(mut oracle) = oracle() else { return };
    let case = config_case(vec![
        CaseRecord::text(0, "connector-a", Some(r#"{"properties":{}}"#)),
        CaseRecord::text(1, "commit-a", Some(r#"{"tasks":-1}"#)),
    ]);
    let java = oracle.run(&case);
    let thrown = &java.exceptions[0];
    assert_eq!(thrown.phase, Phase::Snapshot);
    assert_eq!(thrown.connector.as_deref(), Some("a"));
    assert_eq!(thrown.class, "java.lang.IllegalArgumentException");
    let ours = ours(&case);
    assert_eq!(
        ours.snapshot.get("tasks").and_then(|t| t.get("a")),
        Some(&Json::Array(Vec::new()))
    );
    judge(&mut oracle, &case).expect("agrees under item 7");
}

/// README item 14: a connector with more than `MAX_LISTED_TASKS` tasks lists every id in
/// Java; the core's JSON contract lists the first ones and the full count.
#[test]
fn a_task_list_longer_than_the_limit_is_cut_with_its_count() {
    let Some(mut oracle) = oracle() else { return };
    let count = engine::config::MAX_LISTED_TASKS + 1;
    let mut records = vec![CaseRecord::text(
        0,
        "connector-a",
        Some(r#"{"properties":{}}"#),
    )];
    for task in 0..count {
        records.push(CaseRecord::text(
            i64::from(task) + 1,
            &format!("task-a-{task}"),
            Some(r#"{"properties":{}}"#),
        ));
    }
    records.push(CaseRecord::text(
        i64::from(count) + 1,
        "commit-a",
        Some(&format!(r#"{{"tasks":{count}}}"#)),
    ));
    let case = config_case(records);
    let java = oracle.run(&case);
    let java_tasks = java.snapshot.get("tasks").and_then(|t| t.get("a"));
    assert!(matches!(java_tasks, Some(Json::Array(ids)) if ids.len() == count as usize));
    let ours = ours(&case);
    let listed = ours.snapshot.get("tasks").and_then(|t| t.get("a"));
    assert!(matches!(listed, Some(Json::Array(ids)) if ids.len() == count as usize - 1));
    assert_eq!(
        ours.snapshot
            .get("tasks_truncated")
            .and_then(|t| t.get("a")),
        Some(&Json::int(count.into()))
    );
    let applied = judge(&mut oracle, &case).expect("agrees under item 14");
    assert!(applied.contains(&Deliberate::LongTaskList));
}

/// README item 8: connect-state writes doubles as Java 19+ does. A Java 17 (when this
/// machine has one) writes some of them with more digits, so its key bytes differ.
#[test]
fn java_17_writes_some_doubles_with_more_digits() {
    let Some(java17) = std::fs::read_dir("/usr/lib/jvm")
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path().join("bin/java"))
        .find(|p| p.to_string_lossy().contains("-17-") && p.exists())
    else {
        connect_state_tests::external::skip("a Java 17", "none under /usr/lib/jvm");
        return;
    };
    if oracle().is_none() {
        return;
    }
    let case = r#"{"id":1,"topic":"offsets","partitions":1,"records":[],"writes":[{"method":"flush","namespace":"a","offsets":[{"partition":[["f",2e23]],"offset":[["p",1]]}]}]}"#;
    let out = std::process::Command::new(connect_state_tests::oracle::script())
        .arg("serve")
        .env("JAVA", &java17)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write as _;
            child.stdin.take().unwrap().write_all(case.as_bytes())?;
            child.wait_with_output()
        })
        .expect("the oracle runs on Java 17");
    let answer: serde_json::Value = serde_json::from_slice(&out.stdout).expect("an answer");
    let key = answer["writes"][0]["records"][0]["key_base64"]
        .as_str()
        .unwrap();
    let key = base64::Engine::decode(&base64::engine::general_purpose::STANDARD, key).unwrap();
    assert_eq!(key, br#"["a",{"f":1.9999999999999998E23}]"#, "Java 17");
    let ours = engine::offsets::offset_key(
        "a",
        Some(&engine::offsets::OrderedMap::new([(
            "f",
            engine::json::JsonValue::Double(engine::json::JavaDouble::new(2e23)),
        )])),
    )
    .unwrap();
    assert_eq!(ours, br#"["a",{"f":2.0E23}]"#, "connect-state, as Java 19+");
}

/// Every committed fuzz seed and reproducer of the record targets (`fuzz/corpus/*_records`,
/// `fuzz/regressions/*_records`), decoded as the targets decode it, agrees with Java (config
/// records on one partition, as a config topic has them; records at negative offsets, which the
/// core refuses as a caller error, left out).
#[test]
fn every_fuzz_seed_and_regression_agrees_with_java() {
    let Some(mut oracle) = oracle() else { return };
    let fuzz = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz");
    let mut judged = 0;
    let mut failures = Vec::new();
    for (target, topic) in [
        ("config_records", Topic::Config),
        ("status_records", Topic::Status),
        ("offsets_records", Topic::Offsets),
    ] {
        for dir in ["corpus", "regressions"] {
            let Ok(entries) = std::fs::read_dir(fuzz.join(dir).join(target)) else {
                continue;
            };
            for entry in entries.flatten() {
                let data = std::fs::read(entry.path()).expect("a readable seed");
                let records = engine::fuzzing::decoded_records(&data)
                    .into_iter()
                    .filter(|r| r.3 >= 0)
                    .map(|(key, value, partition, offset)| CaseRecord {
                        partition: if topic == Topic::Config { 0 } else { partition },
                        offset,
                        key,
                        value,
                    })
                    .collect();
                judged += 1;
                if let Err(d) = judge(&mut oracle, &Case::new(topic, records)) {
                    failures.push(format!("{}: {d}", entry.path().display()));
                }
            }
        }
    }
    assert!(judged >= 10, "the fuzz seeds are missing ({judged})");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The README's agreements about numbers, pinned by their text: Java reads decimals through
/// `BigDecimal`, so `-0.0` is `0.0`, `1e400` the double `Infinity` (not the string) and
/// `-1e-400` is `-0.0`; `1.0E10` is the contract's `10000000000.0`.
#[test]
fn javas_reading_of_zero_overflow_and_underflow_is_pinned() {
    let Some(mut oracle) = oracle() else { return };
    let case = config_case(vec![CaseRecord::text(
        0,
        "connector-c",
        Some(
            r#"{"properties":{"negzero":-0.0,"inf":1e400,"tiny":-1e-400,"ten":1.0E10,"s":"Infinity","n":-0}}"#,
        ),
    )]);
    let java = oracle.run(&case);
    let config = |snapshot: &Json, name: &str| {
        snapshot
            .get("connector_configs")
            .and_then(|c| c.get("c"))
            .and_then(|c| c.get(name))
            .cloned()
    };
    let number = |text: &str| Some(Json::Number(text.into()));
    for (name, expected) in [
        ("negzero", number("0.0")),
        ("inf", number("Infinity")),
        ("tiny", number("-0.0")),
        ("ten", number("10000000000.0")),
        ("s", Some(Json::String("Infinity".into()))),
        ("n", number("0")),
    ] {
        assert_eq!(config(&java.snapshot, name), expected, "Java's {name}");
    }
    assert_eq!(java.snapshot, ours(&case).snapshot);
}

/// Issue 23 item 8: Jackson's default read limits (nesting depth 1000, numbers of 1000
/// digits, strings of 20,000,000 characters, member names of 50,000), which Kafka 4.4.0's
/// converter reads under. A value exactly at each limit and one just past it, in each topic's
/// values (and the offsets topic's keys), read by both: the core must agree with Java on every
/// one (applied or refused, and the state).
#[test]
fn jacksons_read_limits_are_met_exactly_in_every_topic() {
    let Some(mut oracle) = oracle() else { return };
    // A JSON value for `member` that reaches `limit` (`over`: one past it), with `depth` levels
    // of nesting around it in the record.
    let hostile = |kind: &str, over: bool, depth: usize| -> String {
        let n = usize::from(over);
        match kind {
            "depth" => {
                let levels = 1000 - depth + n;
                format!("{}1{}", "[".repeat(levels), "]".repeat(levels))
            }
            "number" => "7".repeat(1000 + n),
            "string" => format!("\"{}\"", "s".repeat(20_000_000 + n)),
            _ => unreachable!(),
        }
    };
    let name = |over: bool| "n".repeat(50_000 + usize::from(over));
    let mut failures = Vec::new();
    for over in [false, true] {
        for kind in ["depth", "number", "string", "name"] {
            let value = |depth: usize| match kind {
                "name" => "1".to_string(),
                _ => hostile(kind, over, depth),
            };
            let member = |fallback: &str| match kind {
                "name" => name(over),
                _ => fallback.to_string(),
            };
            let cases = [
                (
                    Topic::Config,
                    "connector-c".to_string(),
                    // The value sits two levels deep: {"properties":{..}}.
                    format!(r#"{{"properties":{{"{}":{}}}}}"#, member("k"), value(2)),
                ),
                (
                    Topic::Status,
                    "status-connector-c".to_string(),
                    format!(
                        r#"{{"state":"RUNNING","worker_id":"w","generation":1,"{}":{}}}"#,
                        member("trace"),
                        value(1)
                    ),
                ),
                (
                    Topic::Offsets,
                    format!(r#"["c",{{"{}":{}}}]"#, member("f"), value(2)),
                    format!(r#"{{"{}":{}}}"#, member("pos"), value(1)),
                ),
            ];
            for (topic, key, value) in cases {
                let case = Case::new(
                    topic,
                    vec![
                        CaseRecord::text(0, &key, Some(&value)),
                        CaseRecord::text(1, &key, Some(&value)),
                    ],
                );
                if let Err(difference) = judge(&mut oracle, &case) {
                    let what = difference.what.chars().take(600).collect::<String>();
                    failures.push(format!(
                        "{} {kind} {}: {what}",
                        topic.as_str(),
                        if over {
                            "past the limit"
                        } else {
                            "at the limit"
                        }
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
