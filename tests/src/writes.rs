//! The write side, judged by Java: generated calls of every Java write method run through
//! Java's own writers (the oracle's capturing log records every send and read to the end) and
//! through the core's write side, and must produce the same records, byte for byte, in the same
//! steps.

use engine::config::write::{self, StepAction, WritePlan};
use engine::config::TargetState;
use engine::offsets::{default_partition, kip875, OffsetLog, OffsetWriter, OrderedMap};
use engine::status::write::{topic_status_record, topic_tombstone};
use engine::status::{StatusLog, StatusState, StatusUpdate, TopicStatus};
use engine::{ProducerRecord, Record, TopicMachine};
use proptest::collection::vec;
use proptest::prelude::*;
use serde_json::{json, Value};

use crate::differential::{check_redeliveries, compare, ours, Deliberate, Difference};
use crate::oracle::{Case, CaseRecord, JavaException, JavaWrite, Oracle, WrittenRecord};

/// Text for names and values: plain, JSON-hostile (quotes, backslashes, controls), non-ASCII
/// and supplementary characters, and arbitrary characters.
fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => proptest::sample::select(&[
            "a", "b", "c-1", "", "é", "😀", "say \"hi\"", "back\\slash", "tab\tnew\nline",
            "\u{0}\u{1f}\u{7f}", "\u{2028}", "</script>", "x y",
        ][..]).prop_map(String::from),
        1 => vec(any::<char>(), 0..6).prop_map(String::from_iter),
    ]
}

/// A write call, and the first of its sends (counted from 0 over the records it writes) that
/// fail, with every later one, as a producer reports failed sends: the oracle fails them in
/// Java's log, and the core's plan is run with the same sends failing (`run_plan`), so the
/// plans' failure paths and their messages are judged too.
#[derive(Debug, Clone)]
pub struct Call<W> {
    /// The write method and its arguments.
    pub write: W,
    /// The first send that fails, if one does.
    pub fail_sends_from: Option<usize>,
}

impl<W: Clone + std::fmt::Debug + WriteMethod> Call<W> {
    /// Adds failing sends to a tenth of the calls `write` generates, from send 0 up to
    /// `last_first` (a store that sends in an order the two sides do not share fails them all).
    fn of(write: impl Strategy<Value = W>, last_first: usize) -> impl Strategy<Value = Self> {
        (write, proptest::option::weighted(0.1, 0..=last_first)).prop_map(
            |(write, fail_sends_from)| Self {
                write,
                fail_sends_from,
            },
        )
    }

    /// The call in the oracle's protocol, with its failing sends.
    pub fn call(&self) -> Value {
        let mut call = self.write.call();
        if let (Some(n), Value::Object(members)) = (self.fail_sends_from, &mut call) {
            members.insert("fail_sends_from".into(), json!(n));
        }
        call
    }
}

/// A write method in the oracle's protocol.
pub trait WriteMethod {
    /// The call (`{"method": ..., ...}`).
    fn call(&self) -> Value;
}

/// Runs `plan` as Java's stores run their writes, with every send from `fail_sends_from` on
/// failing: a produce step's records are all sent, then awaited (the config store's batched
/// `sendPrivileged`, the status and offsets stores' callbacks), and a failed one ends the plan
/// with the step's message. Returns the records written, the steps in the oracle's words
/// (`send`, `send_failed`, `read_to_end`), and that message.
fn run_plan(
    plan: &WritePlan,
    fail_sends_from: Option<usize>,
) -> (Vec<ProducerRecord>, Vec<String>, Option<String>) {
    let (mut written, mut steps, mut sent) = (Vec::new(), Vec::new(), 0usize);
    for step in &plan.steps {
        match &step.action {
            StepAction::Produce { records, .. } => {
                let mut failed = false;
                for record in records {
                    if fail_sends_from.is_some_and(|from| sent >= from) {
                        steps.push("send_failed".to_string());
                        failed = true;
                    } else {
                        steps.push("send".to_string());
                        written.push(record.clone());
                    }
                    sent += 1;
                }
                if failed {
                    return (written, steps, Some(step.error_message.to_string()));
                }
            }
            StepAction::ReadToEnd => steps.push("read_to_end".to_string()),
        }
    }
    (written, steps, None)
}

/// Properties as a Java `Map` holds them (no repeated names).
fn properties() -> impl Strategy<Value = Vec<(String, Option<String>)>> {
    vec((text(), proptest::option::weighted(0.9, text())), 0..4).prop_map(|p| dedupe(&p))
}

fn target_state() -> impl Strategy<Value = TargetState> {
    proptest::sample::select(
        &[
            TargetState::Started,
            TargetState::Paused,
            TargetState::Stopped,
        ][..],
    )
}

/// One call of a config-topic write method.
#[derive(Debug, Clone)]
pub enum ConfigWrite {
    /// `putConnectorConfig`.
    PutConnectorConfig(String, Vec<(String, Option<String>)>, Option<TargetState>),
    /// `removeConnectorConfig`.
    RemoveConnectorConfig(String),
    /// `putTaskConfigs`.
    PutTaskConfigs(String, Vec<Vec<(String, Option<String>)>>),
    /// `putTargetState`.
    PutTargetState(String, TargetState),
    /// `putRestartRequest`.
    PutRestartRequest(String, bool, bool),
    /// `putTaskCountRecord`.
    PutTaskCountRecord(String, i32),
    /// `putSessionKey`.
    PutSessionKey(Vec<u8>, String, i64),
    /// `putLoggerLevel`.
    PutLoggerLevel(String, String),
}

/// Any config write call (a tenth with a failing send).
pub fn config_write() -> impl Strategy<Value = Call<ConfigWrite>> {
    Call::of(config_write_method(), 4)
}

fn config_write_method() -> impl Strategy<Value = ConfigWrite> {
    prop_oneof![
        (text(), properties(), proptest::option::of(target_state()))
            .prop_map(|(c, p, s)| ConfigWrite::PutConnectorConfig(c, p, s)),
        text().prop_map(ConfigWrite::RemoveConnectorConfig),
        (text(), vec(properties(), 0..4)).prop_map(|(c, t)| ConfigWrite::PutTaskConfigs(c, t)),
        (text(), target_state()).prop_map(|(c, s)| ConfigWrite::PutTargetState(c, s)),
        (text(), any::<bool>(), any::<bool>())
            .prop_map(|(c, f, t)| ConfigWrite::PutRestartRequest(c, f, t)),
        (text(), prop_oneof![0i32..5, any::<i32>()])
            .prop_map(|(c, n)| ConfigWrite::PutTaskCountRecord(c, n)),
        // Not empty: a worker's key comes from a KeyGenerator, and javax.crypto refuses an
        // empty one before Connect's writer could see it (the core's refusal of an empty key is
        // a unit test of its own).
        (
            vec(any::<u8>(), 1..40),
            proptest::sample::select(&["HmacSHA256", "HmacSHA512", "", "x"][..]),
            any::<i64>()
        )
            .prop_map(|(k, a, t)| ConfigWrite::PutSessionKey(k, a.into(), t)),
        (text(), text()).prop_map(|(n, l)| ConfigWrite::PutLoggerLevel(n, l)),
    ]
}

/// Properties as a list of `[name, value]` pairs, so the oracle builds its `LinkedHashMap` in
/// this order (a serde_json object would sort the members).
fn props_json(props: &[(String, Option<String>)]) -> Value {
    Value::Array(props.iter().map(|(k, v)| json!([k, v])).collect())
}

fn props_iter(props: &[(String, Option<String>)]) -> impl Iterator<Item = (&str, Option<&str>)> {
    props.iter().map(|(k, v)| (k.as_str(), v.as_deref()))
}

impl WriteMethod for ConfigWrite {
    fn call(&self) -> Value {
        match self {
            Self::PutConnectorConfig(c, p, s) => json!({
                "method": "putConnectorConfig", "connector": c, "properties": props_json(p),
                "target_state": s.map(|s| s.as_str()),
            }),
            Self::RemoveConnectorConfig(c) => {
                json!({"method": "removeConnectorConfig", "connector": c})
            }
            Self::PutTaskConfigs(c, t) => json!({
                "method": "putTaskConfigs", "connector": c,
                "configs": t.iter().map(|p| props_json(p)).collect::<Vec<_>>(),
            }),
            Self::PutTargetState(c, s) => {
                json!({"method": "putTargetState", "connector": c, "state": s.as_str()})
            }
            Self::PutRestartRequest(c, f, t) => json!({
                "method": "putRestartRequest", "connector": c, "only_failed": f, "include_tasks": t,
            }),
            Self::PutTaskCountRecord(c, n) => {
                json!({"method": "putTaskCountRecord", "connector": c, "task_count": n})
            }
            Self::PutSessionKey(k, a, t) => json!({
                "method": "putSessionKey",
                "key_base64": base64::Engine::encode(&base64::engine::general_purpose::STANDARD, k),
                "algorithm": a, "creation_timestamp": t,
            }),
            Self::PutLoggerLevel(n, l) => {
                json!({"method": "putLoggerLevel", "namespace": n, "level": l})
            }
        }
    }
}

impl ConfigWrite {
    /// The core's plan for the same call (or its refusal).
    pub fn plan(&self) -> Result<WritePlan, write::WriteError> {
        Ok(match self {
            Self::PutConnectorConfig(c, p, s) => write::put_connector_config(c, props_iter(p), *s),
            Self::RemoveConnectorConfig(c) => write::remove_connector_config(c),
            Self::PutTaskConfigs(c, t) => {
                write::put_task_configs(c, t.iter().map(|p| props_iter(p)))
            }
            Self::PutTargetState(c, s) => write::put_target_state(c, *s),
            Self::PutRestartRequest(c, f, t) => write::put_restart_request(c, *f, *t),
            Self::PutTaskCountRecord(c, n) => write::put_task_count_record(c, *n),
            Self::PutSessionKey(k, a, t) => write::put_session_key(k, a, *t)?,
            Self::PutLoggerLevel(n, l) => write::put_logger_level(n, l),
        })
    }
}

/// A produced record as the oracle reports it, placed by Java's default partitioner when the
/// core leaves the choice to it.
fn written(record: &ProducerRecord, partitions: i32) -> WrittenRecord {
    WrittenRecord {
        partition: record
            .partition
            .or_else(|| default_partition(&record.key, partitions))
            .unwrap_or(0),
        key: Some(record.key.clone()),
        value: record.value.clone(),
    }
}

fn show(records: &[WrittenRecord]) -> String {
    records
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("\n    ")
}

fn differ(case: &Case, what: String) -> Difference {
    Difference {
        what,
        case: case.clone(),
    }
}

/// How the core's refusals read in Java's words, where they differ on purpose: `(the core's
/// message starts with, Java's exception class, Java's message starts with)`. Every other
/// refusal must carry Java's class's message exactly. Kept small: each row says why.
const REFUSALS: &[(&str, &str, &str)] = &[
    // A failed flush: the writer hands the producer's exception to the flush's callback, and
    // the worker logs "Failed to flush offsets to storage" (WorkerSourceTask), the message the
    // core's plan carries.
    (
        engine::offsets::FLUSH_ERROR,
        "org.apache.kafka.common.KafkaException",
        ORACLE_SEND_FAILURE,
    ),
    // A failed alter or reset: `Worker.modifySourceConnectorOffsets` wraps the producer's
    // exception as "Failed to modify offsets for source connector C" (the core's message); the
    // oracle drives the writer without that callback, so Java's answer is the exception itself.
    (
        "Failed to modify offsets for source connector ",
        "org.apache.kafka.common.KafkaException",
        ORACLE_SEND_FAILURE,
    ),
];

/// The message of the sends the oracle fails on request (`CapturingLog.failSendsFrom`).
const ORACLE_SEND_FAILURE: &str = "the oracle failed this send on request";

/// Whether Java's exception and the core's refusal of one write call say the same thing.
fn refusals_agree(java: &JavaException, ours: &str) -> bool {
    let message = java.message.as_deref().unwrap_or("");
    message == ours
        || REFUSALS.iter().any(|(core, class, text)| {
            ours.starts_with(core) && java.class == *class && message.starts_with(text)
        })
}

/// Compares one write call's records (and, where given, steps) with Java's: the same records,
/// or the same refusal (Java's exception and the core's refusal in the same words, see
/// [`REFUSALS`]). An exception of the oracle's own code is a harness error. On a JVM older
/// than 19 (never under the require variable), a record whose bytes differ is excused only
/// when both sides' bytes hold a double (item 8); the result says whether that happened.
fn compare_write(
    case: &Case,
    call: &Value,
    java: &JavaWrite,
    ours: &[WrittenRecord],
    ours_steps: Option<&[String]>,
    refused: Option<String>,
    java_major: u32,
) -> Result<bool, Difference> {
    if let Some(e) = java.error.as_ref().filter(|e| e.harness) {
        return Err(differ(
            case,
            format!(
                "write {call}: a harness error, not a verdict: the oracle's own code threw {}: {}",
                e.class,
                e.message.as_deref().unwrap_or("")
            ),
        ));
    }
    match (&java.error, refused) {
        (None, None) => {}
        (Some(e), Some(r)) => {
            if refusals_agree(e, &r) {
                // The records each wrote before its failure, and the steps, are compared below.
            } else {
                return Err(differ(
                    case,
                    format!(
                    "write {call}: both refused, with other reasons\n  Java: {}: {}\n  core: {r}",
                    e.class,
                    e.message.as_deref().unwrap_or("")
                ),
                ));
            }
        }
        (e, r) => {
            return Err(differ(
                case,
                format!(
                    "write {call}: Java {}, the core {}",
                    e.as_ref().map_or("succeeded".into(), |e| format!(
                        "threw {}: {}",
                        e.class,
                        e.message.as_deref().unwrap_or("")
                    )),
                    r.map_or("succeeded".into(), |r| format!("refused it: {r}")),
                ),
            ))
        }
    }
    let mut excused = false;
    if java.records != ours {
        let doubles_only = java_major < 19
            && java.records.len() == ours.len()
            && java
                .records
                .iter()
                .zip(ours)
                .all(|(j, o)| j == o || (holds_double(j) && holds_double(o)));
        if !doubles_only {
            return Err(differ(
                case,
                format!(
                    "write {call}: records\n  Java:\n    {}\n  core:\n    {}",
                    show(&java.records),
                    show(ours)
                ),
            ));
        }
        excused = true;
    }
    if let Some(steps) = ours_steps {
        if java.steps != steps {
            return Err(differ(
                case,
                format!(
                    "write {call}: steps\n  Java: {:?}\n  core: {steps:?}",
                    java.steps
                ),
            ));
        }
    }
    Ok(excused)
}

/// Whether a record's key or value holds a JSON number with a fraction or an exponent.
fn holds_double(record: &WrittenRecord) -> bool {
    let scan = |bytes: &[u8]| {
        bytes
            .windows(2)
            .any(|w| w[0].is_ascii_digit() && matches!(w[1], b'.' | b'e' | b'E'))
    };
    record.key.as_deref().is_some_and(scan) || record.value.as_deref().is_some_and(scan)
}

/// Runs config write calls through Java and the core (each call's records read back before the
/// next, as a worker reads its writes) and compares records, steps and the final state.
pub fn judge_config_writes(
    oracle: &mut Oracle,
    base: &Case,
    writes: &[Call<ConfigWrite>],
) -> Result<std::collections::BTreeSet<Deliberate>, Difference> {
    let mut case = base.clone();
    case.writes = writes.iter().map(Call::call).collect();
    check_redeliveries(&case, &ours(&case))?;
    let java_case = crate::differential::java_case(&case);
    let java = oracle.run(&java_case);
    let mut result = config_writes_agree(&case, &java_case, writes, &java);
    if let Ok(applied) = &mut result {
        if java_case.records.len() < case.records.len() {
            applied.insert(Deliberate::Redelivery);
        }
    }
    result
}

fn config_writes_agree(
    case: &Case,
    java_case: &Case,
    writes: &[Call<ConfigWrite>],
    java: &crate::oracle::JavaAnswer,
) -> Result<std::collections::BTreeSet<Deliberate>, Difference> {
    let mut log_records = java_case.records.clone();
    let mut old_java = false;
    for (i, w) in writes.iter().enumerate() {
        let call = &case.writes[i];
        let java_write = &java.writes[i];
        match w.write.plan() {
            Ok(plan) => {
                // The config store sends a step's records, then awaits them: a failed one ends
                // the write with the step's message (Java's `ConnectException`).
                let (sent, steps, failed) = run_plan(&plan, w.fail_sends_from);
                let records: Vec<WrittenRecord> = sent.iter().map(|r| written(r, 1)).collect();
                let excused = compare_write(
                    case,
                    call,
                    java_write,
                    &records,
                    Some(&steps),
                    failed,
                    java.java_major,
                )?;
                old_java |= excused;
                // An excused write is read back as Java wrote it, so the states stay comparable.
                append(
                    &mut log_records,
                    if excused {
                        &java_write.records
                    } else {
                        &records
                    },
                );
            }
            Err(e) => {
                let refused = Some(e.to_string());
                compare_write(case, call, java_write, &[], None, refused, java.java_major)?;
            }
        }
    }
    // The final state: the log as it stands after the writes, read by both; the written
    // records are read after start-up.
    let mut after = java_case.clone();
    after.live_from = java_case
        .live_from
        .or_else(|| log_records.get(java_case.records.len()).map(|r| r.offset));
    after.records = log_records;
    let mut ours = ours(&after);
    let mut java_after = java.clone();
    java_after.writes.clear();
    // The live states of the records before the writes are the read judges' (Java traces
    // only those); here the final state is judged.
    ours.trace.clear();
    java_after.trace.clear();
    compare(&after, &java_after, &ours).map(|mut applied| {
        if old_java {
            applied.insert(Deliberate::OldJavaDoubles);
        }
        applied
    })
}

/// Appends written records at the next offsets of their partitions.
fn append(log: &mut Vec<CaseRecord>, records: &[WrittenRecord]) {
    for r in records {
        let offset = log
            .iter()
            .filter(|x| x.partition == r.partition)
            .map(|x| x.offset + 1)
            .max()
            .unwrap_or(0);
        log.push(CaseRecord {
            partition: r.partition,
            offset,
            key: r.key.clone(),
            value: r.value.clone(),
        });
    }
}

// ---------------------------------------------------------------------------------------------
// Status topic

/// One call of a status-topic write method.
#[derive(Debug, Clone)]
pub enum StatusWrite {
    /// `put` (`false`) or `putSafe` (`true`) of a connector or task status.
    Put(StatusUpdate, bool),
    /// `put(TopicStatus)`.
    PutTopic(TopicStatus),
    /// `deleteTopic(connector, topic)`.
    DeleteTopic(String, String),
}

fn status_state() -> impl Strategy<Value = StatusState> {
    proptest::sample::select(&StatusState::ALL[..])
}

/// Any status write call, for the connectors and workers of the generated status logs (a
/// tenth with a failing send).
pub fn status_write() -> impl Strategy<Value = Call<StatusWrite>> {
    Call::of(status_write_method(), 0)
}

fn status_write_method() -> impl Strategy<Value = StatusWrite> {
    let connector = proptest::sample::select(&["a", "b", "a-1", "ü"][..]).prop_map(String::from);
    let worker = proptest::sample::select(&["w1:8083", "w2:8083"][..]).prop_map(String::from);
    prop_oneof![
        4 => (
            connector.clone(),
            proptest::option::of(0i32..3),
            status_state(),
            proptest::option::weighted(0.3, text()),
            worker,
            -1i32..4,
            proptest::option::weighted(0.3, text()),
            any::<bool>(),
        )
            .prop_map(|(c, task, state, trace, worker, generation, version, safe)| {
                let mut update = StatusUpdate::for_connector(c, state, worker, generation);
                update.task = task;
                update.trace = trace;
                update.version = version;
                StatusWrite::Put(update, safe)
            }),
        1 => (connector.clone(), text(), 0i32..3, any::<i64>())
            .prop_map(|(c, t, task, ts)| StatusWrite::PutTopic(TopicStatus::new(t, c, task, ts))),
        1 => (connector, proptest::sample::select(&["orders", "other"][..]))
            .prop_map(|(c, t)| StatusWrite::DeleteTopic(c, t.into())),
    ]
}

impl WriteMethod for StatusWrite {
    fn call(&self) -> Value {
        match self {
            Self::Put(u, safe) => json!({
                "method": if *safe { "putSafe" } else { "put" }, "connector": u.connector,
                "task": u.task, "state": u.state.as_str(), "trace": u.trace,
                "worker_id": u.worker_id, "generation": u.generation, "version": u.version,
            }),
            Self::PutTopic(t) => json!({
                "method": "putTopic", "connector": t.connector, "topic": t.name, "task": t.task,
                "discover_timestamp": t.discover_timestamp,
            }),
            Self::DeleteTopic(c, t) => json!({"method": "deleteTopic", "connector": c, "topic": t}),
        }
    }
}

/// Runs status write calls after a status log through Java and the core, reading each write
/// back before the next, and compares the records and the final state.
pub fn judge_status_writes(
    oracle: &mut Oracle,
    base: &Case,
    writes: &[Call<StatusWrite>],
    partitions: i32,
) -> Result<std::collections::BTreeSet<Deliberate>, Difference> {
    let mut case = base.clone();
    case.partitions = Some(partitions);
    case.writes = writes.iter().map(Call::call).collect();
    check_redeliveries(&case, &ours(&case))?;
    let java_case = crate::differential::java_case(&case);
    let java = oracle.run(&java_case);
    status_writes_agree(&case, &java_case, writes, partitions, &java)
}

fn status_writes_agree(
    case: &Case,
    java_case: &Case,
    writes: &[Call<StatusWrite>],
    partitions: i32,
    java: &crate::oracle::JavaAnswer,
) -> Result<std::collections::BTreeSet<Deliberate>, Difference> {
    let mut applied = std::collections::BTreeSet::new();
    let case = case.clone();
    let mut log = StatusLog::default();
    let mut log_records = java_case.records.clone();
    for r in &java_case.records {
        feed(&mut log, r);
    }
    log.mark_caught_up();
    for (i, call) in writes.iter().enumerate() {
        let w = &call.write;
        // Item 9: `putSafe` over a cached status without a worker id is Java's
        // NullPointerException (nothing written); the core lets the generations decide.
        if let StatusWrite::Put(update, true) = w {
            let snapshot = log.snapshot();
            let cached = match update.task {
                None => snapshot.connector(&update.connector),
                Some(t) => snapshot.task(&update.connector, t),
            };
            let npe = java.writes[i]
                .error
                .as_ref()
                .is_some_and(|e| e.class == "java.lang.NullPointerException");
            if npe
                && cached.is_some_and(|c| c.worker_id.is_none())
                && java.writes[i].records.is_empty()
            {
                applied.insert(Deliberate::SafeWriteOverNullWorker);
                // Keep the machines' write-side bookkeeping in step with Java's (which took
                // the entry and the generation before throwing), then write nothing.
                let _ = log.prepare_put(update.clone(), true);
                continue;
            }
        }
        let plan = match w {
            StatusWrite::Put(update, safe) => log
                .prepare_put(update.clone(), *safe)
                .map(|pending| pending.plan()),
            StatusWrite::PutTopic(t) => Some(status_plan(topic_status_record(t))),
            StatusWrite::DeleteTopic(c, t) => Some(status_plan(topic_tombstone(c, t))),
        };
        // The status store sends without waiting; a failed send is logged ("Failed to write
        // status update") and dropped: nothing is written and the call does not throw.
        let (sent, steps) = match &plan {
            Some(plan) => {
                let (sent, steps, _dropped) = run_plan(plan, call.fail_sends_from);
                (sent, steps)
            }
            None => (Vec::new(), Vec::new()),
        };
        let records: Vec<WrittenRecord> = sent.iter().map(|r| written(r, partitions)).collect();
        compare_write(
            &case,
            &case.writes[i],
            &java.writes[i],
            &records,
            Some(&steps),
            None,
            java.java_major,
        )?;
        let start = log_records.len();
        append(&mut log_records, &records);
        for r in &log_records[start..] {
            feed(&mut log, r);
        }
    }
    let mut after = java_case.clone();
    after.records = log_records;
    let mut ours = ours(&after);
    let mut java_after = java.clone();
    java_after.writes.clear();
    // The live states of the records before the writes are the read judges' (Java traces
    // only those); here the final state is judged.
    ours.trace.clear();
    java_after.trace.clear();
    compare(&after, &java_after, &ours).map(|more| {
        applied.extend(more);
        applied
    })
}

/// A status store's write of one record (topic statuses are sent as statuses are).
fn status_plan(record: ProducerRecord) -> WritePlan {
    WritePlan::single(
        vec![record],
        false,
        engine::status::write::STATUS_WRITE_ERROR,
    )
}

fn feed<M: TopicMachine>(machine: &mut M, r: &CaseRecord) {
    machine
        .handle_record(Record {
            key: r.key.as_deref(),
            value: r.value.as_deref(),
            offset: r.offset,
            partition: r.partition,
            timestamp: None,
        })
        .expect("generated records are accepted");
    while machine.poll_event().is_some() {}
}

// ---------------------------------------------------------------------------------------------
// Offsets topic

/// A source partition or offset: members in a given order (what a connector's `Map` iterates).
pub type Members = Vec<(String, Value)>;

/// Members of a request body: names and each value's JSON text.
pub type RawMembers = Vec<(String, String)>;

/// One offsets write call.
#[derive(Debug, Clone)]
pub enum OffsetsWrite {
    /// A task's flush through `OffsetStorageWriter`: the namespace, then partitions and offsets
    /// (`None`: delete).
    Flush(String, Vec<(Members, Option<Members>)>),
    /// `PATCH /connectors/{c}/offsets` with these entries (a `None` partition is written
    /// `null`), each value's JSON text as the request has it.
    Alter(String, Vec<(Option<RawMembers>, Option<RawMembers>)>),
    /// `DELETE /connectors/{c}/offsets`.
    Reset(String),
}

fn member_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        text().prop_map(Value::String),
        any::<i64>().prop_map(Value::from),
        (-3i64..3).prop_map(Value::from),
        proptest::sample::select(
            &[0.5f64, 1.0, -2.5, 1e7, 1e21, 1e-7, 3.25e-300, 2e23, 1e23, 8.41e21, 5e-324, -0.0][..]
        )
        .prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |d| d.is_finite())
            .prop_map(Value::from),
        any::<bool>().prop_map(Value::from),
        Just(Value::Null),
    ]
}

/// A value's text in a request body: any generated value, or one that Java reads in a way of
/// its own (beyond `long`: a `BigInteger` Java refuses; overflowing doubles; `-0`; exponents;
/// arrays and maps Java refuses).
fn raw_value() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => member_value().prop_map(|v| v.to_string()),
        1 => proptest::sample::select(
            &[
                "18446744073709551615",
                "9223372036854775808",
                "-9223372036854775809",
                "123456789012345678901234567890",
                "9223372036854775807",
                "-9223372036854775808",
                "1e400",
                "-1e400",
                "1e-400",
                "-0",
                "-0.0",
                "1E3",
                "0.1000000000000000000000000001",
                "[1]",
                "{\"x\":1}",
            ][..]
        )
        .prop_map(String::from),
    ]
}

/// Member names of written partitions and offsets: some in Java's `HashMap` buckets in
/// alphabetical order, some not, two with the same `String.hashCode` (`Aa`, `BB`).
const MEMBER_NAMES: &[&str] = &[
    "f",
    "g",
    "h",
    "filename",
    "é",
    "kafka_topic",
    "server",
    "ü",
    "Aa",
    "BB",
];

/// A few members, or 13 to 24 (Java's `HashMap` resizes past 12).
fn members_with<V: Clone + std::fmt::Debug + 'static>(
    value: impl Strategy<Value = V> + 'static,
) -> impl Strategy<Value = Vec<(String, V)>> {
    let value = value.boxed();
    let name = proptest::sample::select(MEMBER_NAMES).prop_map(String::from);
    let few = vec((name, value.clone()), 0..4);
    let many = vec(value, 13..25).prop_map(|values| {
        values
            .into_iter()
            .enumerate()
            .map(|(i, v)| (format!("member_{i:02}"), v))
            .collect::<Vec<_>>()
    });
    prop_oneof![9 => few, 1 => many]
}

fn raw_members() -> impl Strategy<Value = RawMembers> {
    members_with(raw_value())
}

fn members() -> impl Strategy<Value = Members> {
    members_with(member_value())
}

/// Any offsets write call for the connectors of the generated offsets logs (a tenth with a
/// failing send).
pub fn offsets_write() -> impl Strategy<Value = Call<OffsetsWrite>> {
    // Java sends a flush's records in its HashMap's order: only "all of them fail" is shared.
    Call::of(offsets_write_method(), 0)
}

fn offsets_write_method() -> impl Strategy<Value = OffsetsWrite> {
    let connector = proptest::sample::select(&["a", "b", ""][..]).prop_map(String::from);
    let entries = || {
        vec(
            (members(), proptest::option::weighted(0.8, members())),
            1..4,
        )
    };
    prop_oneof![
        2 => (connector.clone(), entries()).prop_map(|(c, e)| OffsetsWrite::Flush(c, e)),
        2 => (
            connector.clone(),
            vec(
                (
                    proptest::option::weighted(0.95, raw_members()),
                    proptest::option::weighted(0.8, raw_members()),
                ),
                1..4,
            ),
        )
            .prop_map(|(c, e)| OffsetsWrite::Alter(c, e)),
        1 => connector.prop_map(OffsetsWrite::Reset),
    ]
}

fn members_json(m: &Members) -> Value {
    Value::Array(dedupe(m).iter().map(|(k, v)| json!([k, v])).collect())
}

/// The KIP-875 request body as text, members in the given order.
fn request_body(entries: &[(Option<RawMembers>, Option<RawMembers>)]) -> String {
    let object = |m: &Option<RawMembers>| match m {
        None => "null".to_string(),
        Some(m) => {
            let parts: Vec<String> = m
                .iter()
                .map(|(k, v)| format!("{}:{v}", Value::String(k.clone())))
                .collect();
            format!("{{{}}}", parts.join(","))
        }
    };
    let items: Vec<String> = entries
        .iter()
        .map(|(p, o)| format!("{{\"partition\":{},\"offset\":{}}}", object(p), object(o)))
        .collect();
    format!("{{\"offsets\":[{}]}}", items.join(","))
}

impl WriteMethod for OffsetsWrite {
    fn call(&self) -> Value {
        let entries = |e: &[(Members, Option<Members>)]| -> Value {
            e.iter()
                .map(|(p, o)| json!({"partition": members_json(p), "offset": o.as_ref().map(members_json)}))
                .collect()
        };
        match self {
            Self::Flush(ns, e) => {
                json!({"method": "flush", "namespace": ns, "offsets": entries(e)})
            }
            Self::Alter(c, e) => {
                json!({"method": "alterOffsets", "connector": c, "body": request_body(e)})
            }
            Self::Reset(c) => json!({"method": "resetOffsets", "connector": c}),
        }
    }
}

/// A generated member list as a Java `Map` holds it: a repeated name keeps its first position
/// and takes the last value (`LinkedHashMap.put`).
fn dedupe<V: Clone>(members: &[(String, V)]) -> Vec<(String, V)> {
    let mut out: Vec<(String, V)> = Vec::new();
    for (k, v) in members {
        match out.iter_mut().find(|(name, _)| name == k) {
            Some(slot) => slot.1 = v.clone(),
            None => out.push((k.clone(), v.clone())),
        }
    }
    out
}

/// A JSON value as Java's Jackson reads it: integers as `Long`, other numbers as `Double`.
fn java_value(value: &Value) -> engine::json::JsonValue {
    use engine::json::{JavaDouble, JsonValue};
    match value {
        Value::Null => JsonValue::Null,
        Value::Bool(b) => JsonValue::Bool(*b),
        Value::Number(n) => match n.as_i64() {
            Some(i) => JsonValue::Long(i),
            None => JsonValue::Double(JavaDouble::new(n.as_f64().unwrap_or(f64::NAN))),
        },
        Value::String(s) => JsonValue::String(s.clone()),
        Value::Array(items) => JsonValue::Array(items.iter().map(java_value).collect()),
        Value::Object(members) => JsonValue::Object(
            members
                .iter()
                .map(|(k, v)| (k.clone(), java_value(v)))
                .collect(),
        ),
    }
}

fn ordered(m: &Members) -> OrderedMap {
    OrderedMap::new(dedupe(m).iter().map(|(k, v)| (k.clone(), java_value(v))))
}

/// The core's plan for one offsets call, or why it refuses.
fn offsets_plan(
    snapshot: &engine::offsets::OffsetSnapshot,
    write: &OffsetsWrite,
    partitions: i32,
) -> Result<WritePlan, String> {
    let entries = |e: &[(Members, Option<Members>)]| -> Vec<(OrderedMap, Option<OrderedMap>)> {
        e.iter()
            .map(|(p, o)| (ordered(p), o.as_ref().map(ordered)))
            .collect()
    };
    match write {
        OffsetsWrite::Flush(ns, e) => {
            let mut writer = OffsetWriter::new(ns.clone());
            for (p, o) in entries(e) {
                writer.offset(p, o);
            }
            if !writer.begin_flush().map_err(|e| e.to_string())? {
                return Ok(WritePlan { steps: Vec::new() });
            }
            writer
                .do_flush()
                .map(|batch| batch.plan())
                .map_err(|e| e.to_string())
        }
        // The body goes through the CLI's own reader, so the oracle judges `offsets import`.
        OffsetsWrite::Alter(c, e) => {
            let entries = connect_state_ops::offsets_file::parse_offsets_file(&request_body(e))?;
            kip875::alter_plan(snapshot, c, &entries, partitions).map_err(|e| e.to_string())
        }
        OffsetsWrite::Reset(c) => {
            kip875::reset_plan(snapshot, c, partitions).map_err(|e| e.to_string())
        }
    }
}

/// Runs offsets write calls after an offsets log through Java and the core, reading each write
/// back before the next, and compares the records (as sets: both sides write a flush's records
/// in hash order, Java its `HashMap`'s) and the final state. Returns the deliberate differences
/// applied.
pub fn judge_offsets_writes(
    oracle: &mut Oracle,
    base: &Case,
    writes: &[Call<OffsetsWrite>],
    partitions: i32,
) -> Result<std::collections::BTreeSet<Deliberate>, Difference> {
    let mut case = base.clone();
    case.partitions = Some(partitions);
    case.writes = writes.iter().map(Call::call).collect();
    check_redeliveries(&case, &ours(&case))?;
    let java_case = crate::differential::java_case(&case);
    let java = oracle.run(&java_case);
    offsets_writes_agree(&case, &java_case, writes, partitions, &java)
}

fn offsets_writes_agree(
    case: &Case,
    java_case: &Case,
    writes: &[Call<OffsetsWrite>],
    partitions: i32,
    java: &crate::oracle::JavaAnswer,
) -> Result<std::collections::BTreeSet<Deliberate>, Difference> {
    let case = case.clone();
    let mut applied = std::collections::BTreeSet::new();
    let mut routed_keys: Vec<Vec<u8>> = Vec::new();
    let mut log = OffsetLog::default();
    let mut log_records = java_case.records.clone();
    for r in &java_case.records {
        feed(&mut log, r);
    }
    log.mark_caught_up();
    for (i, call) in writes.iter().enumerate() {
        let snapshot = log.snapshot();
        // The offsets store sends the whole flush, then reports a failure to its callback.
        let (records, steps, refused) = match offsets_plan(&snapshot, &call.write, partitions) {
            Ok(plan) => run_plan(&plan, call.fail_sends_from),
            Err(e) => (Vec::new(), Vec::new(), Some(e)),
        };
        let mut ours_written: Vec<WrittenRecord> =
            records.iter().map(|r| written(r, partitions)).collect();
        let mut java_write = java.writes[i].clone();
        // Item 11: a record for a key the topic already holds goes to the partition where the
        // key's live record is; Java's goes where murmur2 puts it.
        for r in &mut ours_written {
            let murmur = r
                .key
                .as_deref()
                .and_then(|k| default_partition(k, partitions))
                .unwrap_or(0);
            let live = r
                .key
                .as_deref()
                .and_then(|k| snapshot.get(Some(k)))
                .map(|stored| stored.partition());
            if r.partition != murmur && live == Some(r.partition) {
                r.partition = murmur;
                applied.insert(Deliberate::KeyRouting);
                routed_keys.extend(r.key.clone());
            }
        }
        let key = |r: &WrittenRecord| (r.key.clone(), r.partition, r.value.clone());
        ours_written.sort_by_key(key);
        java_write.records.sort_by_key(key);
        let excused = compare_write(
            &case,
            &case.writes[i],
            &java_write,
            &ours_written,
            Some(&steps),
            refused,
            java.java_major,
        )?;
        if excused {
            applied.insert(Deliberate::OldJavaDoubles);
        }
        // Read back what the core wrote (where it routed it), or, excused, what Java wrote.
        let routed: Vec<WrittenRecord> = match excused {
            true => java.writes[i].records.clone(),
            false => records.iter().map(|r| written(r, partitions)).collect(),
        };
        let start = log_records.len();
        append(&mut log_records, &routed);
        for r in &log_records[start..] {
            feed(&mut log, r);
        }
    }
    let mut after = java_case.clone();
    after.records = log_records;
    let mut ours = ours(&after);
    let mut java_after = java.clone();
    java_after.writes.clear();
    ours.trace.clear();
    java_after.trace.clear();
    // Java read its records back where murmur2 put them; the contract's `entries` show the
    // partition of each key's latest record, which differs exactly where item 11 routed ours.
    for snapshot in [&mut ours.snapshot, &mut java_after.snapshot] {
        mask_entry_partitions(snapshot, &routed_keys);
    }
    compare(&after, &java_after, &ours).map(|more| {
        applied.extend(more);
        applied
    })
}

/// Replaces the `partition` of the snapshot's entries for `keys` by `-1`.
fn mask_entry_partitions(snapshot: &mut crate::oracle::Json, keys: &[Vec<u8>]) {
    use crate::oracle::Json;
    let texts: Vec<String> = keys
        .iter()
        .map(|k| String::from_utf8_lossy(k).into_owned())
        .collect();
    if let Some(Json::Array(entries)) = snapshot.get_mut("entries") {
        for entry in entries {
            let routed = matches!(entry.get("key"), Some(Json::String(k)) if texts.contains(k));
            if routed {
                if let Some(p) = entry.get_mut("partition") {
                    *p = Json::int(-1);
                }
            }
        }
    }
}
