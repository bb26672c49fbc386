//! Generated logs for the differential tests: proptest strategies that build [`Case`]s for each
//! topic from writer operations (crashed part-way or not), hand-made records of every key kind
//! and value shape (malformed JSON, numbers at the edges, Unicode, wrong types), compaction at any
//! point and a start-up boundary anywhere.

use proptest::collection::vec;
use proptest::prelude::*;

use crate::model::{compact, LogRecord};
use crate::ops::{op, Op, CONNECTORS};
use crate::oracle::{Case, CaseRecord, Topic};

/// Picks one of `items` (cloned).
fn one_of<T: Clone + std::fmt::Debug + 'static>(
    items: &'static [T],
) -> impl Strategy<Value = T> + Clone {
    proptest::sample::select(items)
}

// ---------------------------------------------------------------------------------------------
// Config topic

/// Connector names of hand-made config records: the writer's names and some harder ones.
const CONFIG_NAMES: &[&str] = &["a", "b", "c-1", "", "a-", "-", "ü", "😀", "x y"];

/// Task-key suffixes: Java's `Integer.parseInt` accepts a sign, leading zeros and non-ASCII
/// digits; `String.split` drops a trailing dash; the rest are unparsable or out of range.
const TASK_SUFFIXES: &[&str] = &[
    "0",
    "1",
    "2",
    "3",
    "+1",
    "01",
    "0-",
    "x",
    "",
    "-1",
    "2147483647",
    "2147483648",
    "１",
    "٣",
    "0x1",
    " 1",
];

/// Values of hand-made config records.
const CONFIG_VALUES: &[Option<&str>] = &[
    None,
    Some(""),
    Some(" "),
    Some("null"),
    Some("{}"),
    Some("[]"),
    Some("5"),
    Some("\"text\""),
    Some("not json"),
    Some("{"),
    Some("{\"tasks\":"),
    Some("{} trailing"),
    Some("{\"tasks\":1}}"),
    Some("\u{feff}{\"tasks\":1}"),
    Some("nul"),
    Some(r#"{"properties":{}}"#),
    Some(r#"{"properties":{"batch":"raw"}}"#),
    Some(r#"{"properties":null}"#),
    Some(r#"{"properties":"x"}"#),
    Some(r#"{"properties":[]}"#),
    Some(
        r#"{"properties":{"n":1,"b":true,"d":1.5,"l":[1,"x"],"o":{"z":null,"a":2},"s":"s","z":null}}"#,
    ),
    Some(r#"{"properties":{"k":"\ud800"}}"#),
    Some(r#"{"properties":{"k":"\ud83d\ude00","é":"\u00e9","c":"\u0001\u001f"}}"#),
    Some("{\"properties\":{\"raw\":\"😀é\"}}"),
    Some(r#"{"properties":{"a":"1","a":"2"}}"#),
    Some(r#"{"properties":{"big":123456789012345678901234567890,"e":1e2,"neg":-0,"z":0.0}}"#),
    Some(r#"{"properties":{"inf":1e400}}"#),
    Some(r#"{"properties":{"negzero":-0.0,"tiny":-1e-400,"p":2e23}}"#),
    Some(r#"{"properties":{"lead":007}}"#),
    Some("{\"properties\":{\"ctl\":\"a\u{1}b\"}}"),
    Some(r#"{"tasks":0}"#),
    Some(r#"{"tasks":1}"#),
    Some(r#"{"tasks":2}"#),
    Some(r#"{"tasks":3}"#),
    Some(r#"{"tasks":-1}"#),
    Some(r#"{"tasks":"2"}"#),
    Some(r#"{"tasks":null}"#),
    Some(r#"{"tasks":true}"#),
    Some(r#"{"tasks":1.0}"#),
    Some(r#"{"tasks":1e0}"#),
    Some(r#"{"tasks":01}"#),
    Some(r#"{"tasks":2147483647}"#),
    Some(r#"{"tasks":2147483648}"#),
    Some(r#"{"tasks":4294967297}"#),
    Some(r#"{"tasks":9223372036854775807}"#),
    Some(r#"{"tasks":9223372036854775808}"#),
    Some(r#"{"tasks":-9223372036854775809}"#),
    Some(r#"{"tasks":1,"tasks":2}"#),
    Some(r#"{"task-count":0}"#),
    Some(r#"{"task-count":3}"#),
    Some(r#"{"task-count":-1}"#),
    Some(r#"{"task-count":"3"}"#),
    Some(r#"{"task-count":4294967299}"#),
    Some(r#"{"state":"STARTED"}"#),
    Some(r#"{"state":"PAUSED"}"#),
    Some(r#"{"state":"STOPPED"}"#),
    Some(r#"{"state":"PAUSED","state.v2":"STOPPED"}"#),
    Some(r#"{"state":"PAUSED","state.v2":"STARTED"}"#),
    Some(r#"{"state":"PAUSED","state.v2":5}"#),
    Some(r#"{"state":"PAUSED","state.v2":null}"#),
    Some(r#"{"state.v2":"STOPPED"}"#),
    Some(r#"{"state":"BOGUS"}"#),
    Some(r#"{"state":"started"}"#),
    Some(r#"{"state":1}"#),
    Some(r#"{"key":"AQID","algorithm":"HmacSHA256","creation-timestamp":1}"#),
    Some(r#"{"key":"AQI","algorithm":"HmacSHA256","creation-timestamp":2}"#),
    Some(r#"{"key":"AQ-D","algorithm":"HmacSHA256","creation-timestamp":3}"#),
    Some(r#"{"key":"","algorithm":"HmacSHA256","creation-timestamp":4}"#),
    Some(r#"{"key":"AQID","algorithm":"","creation-timestamp":5}"#),
    Some(r#"{"key":"AQID","algorithm":7,"creation-timestamp":6}"#),
    Some(r#"{"key":"AQID","algorithm":"HmacSHA512","creation-timestamp":"7"}"#),
    Some(r#"{"key":"AQID","algorithm":"HmacSHA512","creation-timestamp":8.0}"#),
    Some(r#"{"key":"AQ==","algorithm":"HmacSHA512"}"#),
    Some(r#"{"key":" AQID","algorithm":"HmacSHA256","creation-timestamp":9}"#),
    Some(r#"{"include-tasks":true,"only-failed":true}"#),
    Some(r#"{"include-tasks":"yes","only-failed":1}"#),
    Some(r#"{"level":"DEBUG"}"#),
    Some(r#"{"level":"INFO"}"#),
    Some(r#"{"level":5}"#),
    Some(r#"{"level":null}"#),
    Some(r#"{"level":"TRACE","extra":[1]}"#),
];

/// A hand-made config-topic key: any kind, for any name, or a key Connect does not know.
fn config_key() -> impl Strategy<Value = Option<Vec<u8>>> {
    let name = one_of(CONFIG_NAMES);
    prop_oneof![
        8 => (one_of(&["connector-", "commit-", "target-state-", "tasks-fencing-", "restart-connector-"]), name.clone())
            .prop_map(|(prefix, name)| Some(format!("{prefix}{name}").into_bytes())),
        4 => (name.clone(), one_of(TASK_SUFFIXES))
            .prop_map(|(name, suffix)| Some(format!("task-{name}-{suffix}").into_bytes())),
        2 => Just(Some(b"session-key".to_vec())),
        2 => one_of(&["org.apache.kafka", "root", "", "a-b"])
            .prop_map(|ns| Some(format!("logger-cluster-{ns}").into_bytes())),
        2 => one_of(&["garbage", "connector", "task-", "task-a", "Session-key", "session-key-x", "target-state"])
            .prop_map(|k| Some(k.as_bytes().to_vec())),
        1 => Just(Some(b"connector-\xffbad".to_vec())),
        1 => Just(None),
    ]
}

/// A piece of a config log: a writer operation (with the record count it crashed after, if it
/// did) or one hand-made record.
#[derive(Debug, Clone)]
enum ConfigPiece {
    Op(Op, Option<usize>),
    Raw(Option<Vec<u8>>, Option<Vec<u8>>),
}

fn config_piece() -> impl Strategy<Value = ConfigPiece> {
    prop_oneof![
        3 => (op(), proptest::option::weighted(0.2, 0usize..8))
            .prop_map(|(op, crash)| ConfigPiece::Op(op, crash)),
        2 => (config_key(), one_of(CONFIG_VALUES))
            .prop_map(|(key, value)| ConfigPiece::Raw(key, value.map(|v| v.as_bytes().to_vec()))),
    ]
}

/// Where a consumer hands records over again: each entry is a run of records starting at `.0`
/// (a fraction of the records) of `.2` records, handed over `.3` more times after the record at
/// `.1` (a fraction, at least the run's end). Several entries may touch the same records, on
/// any partition.
type Redeliveries = Vec<(f64, f64, usize, usize)>;

fn redeliveries() -> impl Strategy<Value = Redeliveries> {
    let one = (0.0..1.0f64, 0.0..1.0f64, 1usize..4, 1usize..4);
    prop_oneof![
        16 => Just(Vec::new()),
        2 => vec(one.clone(), 1..2),
        2 => vec(one, 2..5),
    ]
}

/// How a case's offsets are placed: from 0, or shifted so that the last record of every
/// partition is at `i64::MAX` (the offsets at and near the end of the range).
fn near_the_end() -> impl Strategy<Value = bool> {
    proptest::bool::weighted(0.1)
}

/// Turns records into a case: offsets optionally moved to the end of the range, optional
/// compaction below a horizon, redeliveries, and the start-up boundary at `live_at` (as a
/// fraction of the records).
fn finish(
    topic: Topic,
    records: Vec<CaseRecord>,
    horizon: Option<f64>,
    redelivered: Redeliveries,
    at_the_end: bool,
    live_at: Option<f64>,
) -> Case {
    let mut records = records;
    if at_the_end {
        move_to_the_end(&mut records);
    }
    if let Some(fraction) = horizon {
        records = compact_records(&records, fraction);
    }
    for (from, after, run, times) in redelivered {
        if records.is_empty() {
            break;
        }
        let n = records.len();
        let from = ((n as f64 * from) as usize).min(n - 1);
        let end = (from + run).min(n);
        let after = ((n as f64 * after) as usize).clamp(end - 1, n - 1);
        let again: Vec<CaseRecord> = records[from..end].to_vec();
        for _ in 0..times {
            let at = after + 1;
            records.splice(at..at, again.iter().cloned());
        }
    }
    let live_from = live_at.and_then(|fraction| {
        let at = (records.len() as f64 * fraction) as usize;
        records.get(at).map(|r| r.offset)
    });
    let mut case = Case::new(topic, records);
    case.live_from = live_from;
    case
}

/// Shifts each partition's offsets so that its last record is at `i64::MAX`.
fn move_to_the_end(records: &mut [CaseRecord]) {
    let mut last: std::collections::BTreeMap<i32, i64> = std::collections::BTreeMap::new();
    for r in records.iter() {
        let at = last.entry(r.partition).or_insert(r.offset);
        *at = (*at).max(r.offset);
    }
    for r in records.iter_mut() {
        let shift = i64::MAX - last[&r.partition];
        r.offset += shift;
    }
}

/// Compacts each partition below a horizon at `fraction` of its records (keys compared as bytes,
/// a null key as its own key), as the broker's cleaner would.
fn compact_records(records: &[CaseRecord], fraction: f64) -> Vec<CaseRecord> {
    let mut out = Vec::new();
    let partitions: std::collections::BTreeSet<i32> = records.iter().map(|r| r.partition).collect();
    let mut kept: std::collections::BTreeSet<(i32, i64)> = std::collections::BTreeSet::new();
    for p in partitions {
        let log: Vec<LogRecord> = records
            .iter()
            .filter(|r| r.partition == p)
            .map(|r| {
                // A null key compacts as a key of its own (the broker refuses them on compacted
                // topics; the oracle is fed them anyway).
                let key = r.key.clone().unwrap_or_else(|| b"\0null".to_vec());
                (r.offset, key, r.value.clone())
            })
            .collect();
        let horizon = log
            .get((log.len() as f64 * fraction) as usize)
            .map_or(i64::MAX, |r| r.0);
        for (offset, _, _) in compact(&log, horizon) {
            kept.insert((p, offset));
        }
    }
    for r in records {
        if kept.contains(&(r.partition, r.offset)) {
            out.push(r.clone());
        }
    }
    out
}

/// A config-topic case: up to 40 pieces on partition 0, offsets in order (in a tenth of the
/// cases ending at `i64::MAX`).
pub fn config_case() -> impl Strategy<Value = Case> {
    config_case_placed(near_the_end().boxed())
}

/// A config-topic case a writer can append to (its offsets do not reach the end of the range).
pub fn config_base() -> impl Strategy<Value = Case> {
    config_case_placed(Just(false).boxed())
}

fn config_case_placed(at_the_end: BoxedStrategy<bool>) -> impl Strategy<Value = Case> {
    (
        vec(config_piece(), 0..40),
        proptest::option::weighted(0.3, 0.0..1.0f64),
        redeliveries(),
        at_the_end,
        proptest::option::weighted(0.7, 0.0..1.0f64),
    )
        .prop_map(|(pieces, horizon, redelivered, at_the_end, live_at)| {
            let mut records = Vec::new();
            for (i, piece) in pieces.into_iter().enumerate() {
                match piece {
                    ConfigPiece::Op(op, crash) => {
                        let written = op.tagged(i as u32).records();
                        let keep = crash.map_or(written.len(), |k| k.min(written.len()));
                        for r in written.into_iter().take(keep) {
                            records.push((Some(r.key), r.value));
                        }
                    }
                    ConfigPiece::Raw(key, value) => records.push((key, value)),
                }
            }
            let records = records
                .into_iter()
                .enumerate()
                .map(|(offset, (key, value))| CaseRecord {
                    partition: 0,
                    offset: offset as i64,
                    key,
                    value,
                })
                .collect();
            finish(
                Topic::Config,
                records,
                horizon,
                redelivered,
                at_the_end,
                live_at,
            )
        })
}

/// Only the connector names the writer operations use (so tests can name them).
pub fn writer_connectors() -> &'static [&'static str] {
    &CONNECTORS
}

// ---------------------------------------------------------------------------------------------
// Status topic

const STATUS_NAMES: &[&str] = &["a", "b", "a-1", "", "ü"];
const STATUS_TASKS: &[&str] = &["0", "1", "2", "+1", "01", "x", "", "0-", "-1"];
const STATES: &[&str] = &[
    "\"RUNNING\"",
    "\"PAUSED\"",
    "\"UNASSIGNED\"",
    "\"FAILED\"",
    "\"DESTROYED\"",
    "\"RESTARTING\"",
    "\"STOPPED\"",
    "\"running\"",
    "1",
    "null",
];
const TRACES: &[Option<&str>] = &[
    None,
    Some("null"),
    Some("\"org.apache.kafka.connect.errors.ConnectException: boom\\n\\tat X.y(X.java:1)\\n\""),
    Some("\"\""),
    Some("5"),
];
const WORKERS: &[Option<&str>] = &[
    None,
    Some("null"),
    Some("\"w1:8083\""),
    Some("\"w2:8083\""),
    Some("7"),
];
const GENERATIONS: &[Option<&str>] = &[
    None,
    Some("0"),
    Some("1"),
    Some("2"),
    Some("3"),
    Some("-1"),
    Some("2147483648"),
    Some("\"1\""),
    Some("1.5"),
    Some("null"),
];
const VERSIONS: &[Option<&str>] = &[None, Some("null"), Some("\"4.4.0\""), Some("3")];

/// A status value built member by member (in a random member order), or a malformed one.
fn status_value() -> impl Strategy<Value = Option<Vec<u8>>> {
    let members = (
        one_of(STATES),
        one_of(TRACES),
        one_of(WORKERS),
        one_of(GENERATIONS),
        one_of(VERSIONS),
        any::<bool>(),
    )
        .prop_map(|(state, trace, worker, generation, version, reverse)| {
            let mut parts = vec![format!("\"state\":{state}")];
            for (name, value) in [
                ("trace", trace),
                ("worker_id", worker),
                ("generation", generation),
                ("version", version),
            ] {
                if let Some(v) = value {
                    parts.push(format!("\"{name}\":{v}"));
                }
            }
            if reverse {
                parts.reverse();
            }
            Some(format!("{{{}}}", parts.join(",")).into_bytes())
        });
    prop_oneof![
        8 => members,
        1 => Just(None),
        1 => one_of(&["", "null", "[]", "{}", "not json", "{\"state\":", "\"RUNNING\""])
            .prop_map(|v| Some(v.as_bytes().to_vec())),
    ]
}

/// A KIP-558 topic value (`{"topic": {...}}`), sometimes with wrong or missing members.
fn topic_value() -> impl Strategy<Value = Option<Vec<u8>>> {
    let members = (
        one_of(&[
            Some("\"orders\""),
            Some("\"other\""),
            None,
            Some("null"),
            Some("1"),
        ]),
        one_of(&[Some("\"a\""), Some("\"b\""), None, Some("null")]),
        one_of(&[
            Some("0"),
            Some("1"),
            Some("\"0\""),
            Some("1.5"),
            None,
            Some("2147483648"),
        ]),
        one_of(&[
            Some("1589972451234"),
            None,
            Some("null"),
            Some("\"1\""),
            Some("1.0"),
        ]),
    )
        .prop_map(|(name, connector, task, ts)| {
            let parts: Vec<String> = [
                ("name", name),
                ("connector", connector),
                ("task", task),
                ("discoverTimestamp", ts),
            ]
            .into_iter()
            .filter_map(|(n, v)| v.map(|v| format!("\"{n}\":{v}")))
            .collect();
            Some(format!("{{\"topic\":{{{}}}}}", parts.join(",")).into_bytes())
        });
    prop_oneof![
        6 => members,
        2 => Just(None),
        1 => one_of(&["{\"topic\":5}", "{}", "[]", "not json", "{\"topic\":null}"])
            .prop_map(|v| Some(v.as_bytes().to_vec())),
    ]
}

/// A status-topic record: connector, task and topic statuses (with Java's key quirks), unknown
/// keys and a rare null key.
fn status_record() -> impl Strategy<Value = (Option<Vec<u8>>, Option<Vec<u8>>)> {
    let name = one_of(STATUS_NAMES);
    let topic_keys = one_of(&[
        "status-topic-orders:connector-a",
        "status-topic-orders:connector-b",
        "status-topic-other:connector-a",
        "status-topic-orders:connector-",
        "status-topic-:connector-a",
        "status-topic-orders",
        "status-topic-orders:XXXXXXXXXXa",
        "status-topic-orders:c",
        "status-topic-a:b:connector-c",
        "status-topic-orders:connector-a:x",
    ]);
    prop_oneof![
        4 => (name.clone(), status_value())
            .prop_map(|(c, v)| (Some(format!("status-connector-{c}").into_bytes()), v)),
        6 => (name, one_of(STATUS_TASKS), status_value())
            .prop_map(|(c, t, v)| (Some(format!("status-task-{c}-{t}").into_bytes()), v)),
        3 => (topic_keys, topic_value()).prop_map(|(k, v)| (Some(k.as_bytes().to_vec()), v)),
        1 => (one_of(&["garbage", "status-connector", "status-task-a", "status-"]), status_value())
            .prop_map(|(k, v)| (Some(k.as_bytes().to_vec()), v)),
        1 => status_value().prop_map(|v| (None, v)),
    ]
}

/// Records spread over `partitions` partitions with increasing offsets per partition (gaps
/// included), in an interleaved consumer order.
/// A key and a value (`None`: null key, tombstone).
type KeyValue = (Option<Vec<u8>>, Option<Vec<u8>>);

fn spread(records: Vec<(KeyValue, (i32, i64))>) -> Vec<CaseRecord> {
    let mut next = std::collections::BTreeMap::new();
    records
        .into_iter()
        .map(|((key, value), (partition, gap))| {
            let offset = next.entry(partition).or_insert(0i64);
            *offset += gap;
            let r = CaseRecord {
                partition,
                offset: *offset,
                key,
                value,
            };
            *offset += 1;
            r
        })
        .collect()
}

/// A status-topic case: up to 40 records on up to three partitions.
pub fn status_case() -> impl Strategy<Value = Case> {
    status_case_placed(near_the_end().boxed())
}

/// A status-topic case a writer can append to (its offsets do not reach the end of the range).
pub fn status_base() -> impl Strategy<Value = Case> {
    status_case_placed(Just(false).boxed())
}

fn status_case_placed(at_the_end: BoxedStrategy<bool>) -> impl Strategy<Value = Case> {
    (
        vec(
            (
                status_record(),
                (0i32..3, prop_oneof![4 => Just(0i64), 1 => 1i64..5]),
            ),
            0..40,
        ),
        proptest::option::weighted(0.3, 0.0..1.0f64),
        redeliveries(),
        at_the_end,
        proptest::option::weighted(0.5, 0.0..1.0f64),
    )
        .prop_map(|(records, horizon, again, at_the_end, live_at)| {
            finish(
                Topic::Status,
                spread(records),
                horizon,
                again,
                at_the_end,
                live_at,
            )
        })
}

// ---------------------------------------------------------------------------------------------
// Offsets topic

/// Member values of generated source partitions and offsets.
const MEMBER_VALUES: &[&str] = &[
    "\"a\"",
    "\"b\"",
    "\"\\u0061\"",
    "1",
    "2",
    "-7",
    "9223372036854775807",
    "1.5",
    "2.0E10",
    "true",
    "null",
    "\"é\"",
    "\"😀\"",
    "\"\\ud83d\\ude00\"",
];

/// Member names of generated partitions and offsets. Some land in Java's `HashMap` buckets
/// in alphabetical order (`f`, `g`, `h`), others do not (`filename`, `kafka_topic`, `server`,
/// non-ASCII names), `Aa` and `BB` have the same `String.hashCode`, and `\u0066` is `f`
/// spelled as an escape.
const MEMBER_NAMES: &[&str] = &[
    "f",
    "g",
    "h",
    "\\u0066",
    "filename",
    "kafka_topic",
    "server",
    "é",
    "ü",
    "Aa",
    "BB",
    "x",
    "pos",
];

/// Members of a generated map: a few of [`MEMBER_NAMES`] (some twice), or 13 to 24 distinct
/// ones, enough to make Java's `HashMap` resize (its table grows past 12 entries).
fn members_of(
    values: &'static [&'static str],
) -> impl Strategy<Value = Vec<(String, &'static str)>> {
    let few = vec((one_of(MEMBER_NAMES), one_of(values)), 0..4).prop_map(|m| {
        m.into_iter()
            .map(|(n, v)| (n.to_string(), v))
            .collect::<Vec<_>>()
    });
    let many = (13usize..25, vec(one_of(values), 25)).prop_map(|(n, values)| {
        (0..n)
            .map(|i| (format!("member_{i:02}"), values[i]))
            .collect::<Vec<_>>()
    });
    prop_oneof![9 => few, 1 => many]
}

/// A source partition as JSON text: members of [`members_of`] (in any order, some twice),
/// with or without spaces.
fn partition_text() -> impl Strategy<Value = String> {
    (members_of(MEMBER_VALUES), any::<bool>()).prop_map(|(members, spaced)| {
        let sep = if spaced { ", " } else { "," };
        let colon = if spaced { ": " } else { ":" };
        let parts: Vec<String> = members
            .iter()
            .map(|(name, value)| format!("\"{name}\"{colon}{value}"))
            .collect();
        format!("{{{}}}", parts.join(sep))
    })
}

/// An offsets-topic key: `[connector, partition]` in several spellings, or another shape.
fn offsets_key() -> impl Strategy<Value = Option<Vec<u8>>> {
    prop_oneof![
        10 => (one_of(&["\"a\"", "\"b\"", "\"\"", "\"\\u0061\""]), partition_text(), any::<bool>())
            .prop_map(|(c, p, spaced)| {
                let sep = if spaced { ", " } else { "," };
                Some(format!("[{c}{sep}{p}]").into_bytes())
            }),
        2 => one_of(&[
            "[\"a\"]", "[\"a\",null]", "[\"a\",{},1]", "[1,{\"f\":\"x\"}]", "{\"a\":1}", "\"a\"",
            "5", "not json", "[]", "[\"a\",{\"f\":{\"g\":1}}]", "[\"a\",{\"f\":[1]}]", "",
        ])
        .prop_map(|k| Some(k.as_bytes().to_vec())),
        1 => Just(None),
    ]
}

/// An offsets-topic value: `{"pos": n}` and friends, tombstones, and wrong shapes.
fn offsets_value() -> impl Strategy<Value = Option<Vec<u8>>> {
    prop_oneof![
        6 => (0i64..100, one_of(&["", ",\"x\":\"y\"", ",\"x\":1.5", ",\"x\":true"]), any::<bool>())
            .prop_map(|(n, extra, first)| {
                let text = if first {
                    format!("{{\"pos\":{n}{extra}}}")
                } else {
                    format!("{{{}\"pos\":{n}}}", extra.trim_start_matches(',').to_string() + if extra.is_empty() { "" } else { "," })
                };
                Some(text.into_bytes())
            }),
        // Offsets with member names whose HashMap order is not sorted order, and big maps.
        3 => members_of(MEMBER_VALUES).prop_map(|members| {
            let parts: Vec<String> = members
                .iter()
                .map(|(name, value)| format!("\"{name}\":{value}"))
                .collect();
            Some(format!("{{{}}}", parts.join(",")).into_bytes())
        }),
        3 => Just(None),
        2 => one_of(&[
            "", "null", "5", "\"x\"", "[]", "{}", "not json", "{\"a\":{\"b\":1}}",
            "{\"a\":[1]}", "{\"big\":123456789012345678901234567890}", "{\"f\":1e400}",
        ])
        .prop_map(|v| Some(v.as_bytes().to_vec())),
    ]
}

/// An offsets-topic case: up to 40 records on up to three partitions.
pub fn offsets_case() -> impl Strategy<Value = Case> {
    offsets_case_placed(near_the_end().boxed())
}

/// A offsets-topic case a writer can append to (its offsets do not reach the end of the range).
pub fn offsets_base() -> impl Strategy<Value = Case> {
    offsets_case_placed(Just(false).boxed())
}

fn offsets_case_placed(at_the_end: BoxedStrategy<bool>) -> impl Strategy<Value = Case> {
    (
        vec(
            (
                (offsets_key(), offsets_value()),
                (0i32..3, prop_oneof![4 => Just(0i64), 1 => 1i64..5]),
            ),
            0..40,
        ),
        proptest::option::weighted(0.3, 0.0..1.0f64),
        redeliveries(),
        at_the_end,
        proptest::option::weighted(0.5, 0.0..1.0f64),
    )
        .prop_map(|(records, horizon, again, at_the_end, live_at)| {
            finish(
                Topic::Offsets,
                spread(records),
                horizon,
                again,
                at_the_end,
                live_at,
            )
        })
}
