//! Entry points of the structured fuzz targets (`fuzz/fuzz_targets/simulator.rs` and
//! `differential.rs`): fuzzer bytes decoded with `arbitrary` into writer operations, crash
//! points, cleaning passes and hand-made records; a violated property panics with its reason.
//! The fuzz corpus test replays the committed seeds and reproducers through the same functions.

use arbitrary::{Result, Unstructured};
use engine::config::TargetState;

use crate::model::{compact, contract_without_session_key, reference, replay, tag, LogRecord};
use crate::ops::{Op, CONNECTORS};
use crate::simulation::{check_properties, execute, Run};

/// Most operations a decoded run holds (keeps one input under a few milliseconds).
const MAX_OPS: usize = 24;

fn target_state(u: &mut Unstructured<'_>) -> Result<TargetState> {
    Ok(*u.choose(&[
        TargetState::Started,
        TargetState::Paused,
        TargetState::Stopped,
    ])?)
}

/// One writer operation of [`crate::ops`].
fn op(u: &mut Unstructured<'_>) -> Result<Op> {
    let connector = u.choose_index(CONNECTORS.len())?;
    Ok(match u.int_in_range(0u8..=9)? {
        0..=2 => Op::PutConnector {
            connector,
            version: 0,
            state: if u.arbitrary()? {
                Some(target_state(u)?)
            } else {
                None
            },
        },
        3 => Op::RemoveConnector { connector },
        4..=7 => Op::PutTasks {
            connector,
            tasks: u.int_in_range(0..=4)?,
            batch: 0,
        },
        8 => Op::TargetState {
            connector,
            state: target_state(u)?,
        },
        _ => Op::TaskCount {
            connector,
            count: u.int_in_range(-1..=4)?,
        },
    })
}

/// An operation with, one time in five, the number of records after which its writer crashes.
fn op_with_crash(u: &mut Unstructured<'_>) -> Result<(Op, Option<usize>)> {
    let op = op(u)?;
    let crash = if u.ratio(1u8, 5)? {
        Some(u.int_in_range(0..=7)?)
    } else {
        None
    };
    Ok((op, crash))
}

/// A simulator run decoded from fuzzer bytes (see [`Run`]).
pub fn decode_run(data: &[u8]) -> Result<Run> {
    let mut u = Unstructured::new(data);
    let seed = u.arbitrary()?;
    let fetch_size = u.int_in_range(1..=8)?;
    let clean_probability = f64::from(u.int_in_range(0u8..=6)?) / 10.0;
    let final_tasks = u.int_in_range(0..=3)?;
    let late_start = u.int_in_range(0..=MAX_OPS)?;
    let mut ops = Vec::new();
    let mut clean_after_op = Vec::new();
    while ops.len() < MAX_OPS && !u.is_empty() {
        ops.push(op_with_crash(&mut u)?);
        clean_after_op.push(u.ratio(3u8, 10)?);
    }
    Ok(Run {
        seed,
        ops: tag(ops),
        late_start,
        fetch_size,
        clean_probability,
        clean_after_op,
        final_tasks,
    })
}

/// The `simulator` target: a run through the in-memory cluster (crashing writers, cleaning
/// between fetches, a late reader, a checkpoint restart, a fresh reader), then the compaction
/// properties of `spec/compaction.md` §4. Inputs too short to decode are ignored.
pub fn simulator(data: &[u8]) {
    let Ok(run) = decode_run(data) else {
        return;
    };
    let outcome = execute(&run);
    if let Err(violation) = check_properties(&run, &outcome) {
        panic!("{violation}\nrun: {run:?}");
    }
}

/// Suffixes of hand-made task keys: Java's `Integer.parseInt` accepts a plus sign and leading
/// zeros; a trailing dash is dropped by `String.split`; the rest are unparsable.
const TASK_SUFFIXES: [&str; 8] = ["0", "1", "2", "+1", "01", "0-", "x", ""];

/// Values of hand-made records: well-formed JSON of every shape the reader meets.
const VALUES: [Option<&str>; 16] = [
    None,
    Some(""),
    Some("null"),
    Some("{}"),
    Some("[]"),
    Some("5"),
    Some(r#"{"properties":{}}"#),
    Some(r#"{"properties":{"batch":"raw"}}"#),
    Some(r#"{"properties":null}"#),
    Some(r#"{"tasks":2}"#),
    Some(r#"{"tasks":-1}"#),
    Some(r#"{"tasks":"2"}"#),
    Some(r#"{"state":"PAUSED"}"#),
    Some(r#"{"state":"PAUSED","state.v2":"STOPPED"}"#),
    Some(r#"{"state":"BOGUS"}"#),
    Some(r#"{"task-count":3}"#),
];

/// A hand-made config-topic record: a key of any kind for one of the connectors, any value.
fn raw_record(u: &mut Unstructured<'_>) -> Result<(Vec<u8>, Option<Vec<u8>>)> {
    let c = CONNECTORS[u.choose_index(CONNECTORS.len())?];
    let key = match u.int_in_range(0u8..=4)? {
        0 => format!("connector-{c}"),
        1 => format!("task-{c}-{}", u.choose(&TASK_SUFFIXES)?),
        2 => format!("commit-{c}"),
        3 => format!("target-state-{c}"),
        _ => format!("tasks-fencing-{c}"),
    };
    let value = u.choose(&VALUES)?.map(|v| v.as_bytes().to_vec());
    Ok((key.into_bytes(), value))
}

/// A config log decoded from fuzzer bytes: writer operations (some crashed part-way) mixed with
/// hand-made records, and the compaction horizon.
pub fn decode_log(data: &[u8]) -> Result<(Vec<LogRecord>, i64)> {
    let mut u = Unstructured::new(data);
    let mut log: Vec<LogRecord> = Vec::new();
    let mut position = 0u32;
    while log.len() < 200 && !u.is_empty() {
        if u.ratio(1u8, 4)? {
            let (key, value) = raw_record(&mut u)?;
            log.push((log.len() as i64, key, value));
        } else {
            let (op, crash) = op_with_crash(&mut u)?;
            let op = op.tagged(position);
            let records = op.records();
            let keep = crash.map_or(records.len(), |k| k.min(records.len()));
            for r in records.into_iter().take(keep) {
                log.push((log.len() as i64, r.key, r.value));
            }
        }
        position += 1;
    }
    let horizon = i64::from(u.int_in_range(0..=u8::MAX)?);
    Ok((log, horizon))
}

/// The `differential` target: the core and the naive reference fold of `spec/config-topic.md`
/// §3 must produce the same snapshot (the JSON contract, without the session key) on the log
/// and on the log compacted up to the decoded horizon.
pub fn differential(data: &[u8]) {
    let Ok((log, horizon)) = decode_log(data) else {
        return;
    };
    for log in [compact(&log, horizon), log] {
        let core = contract_without_session_key(&replay(&log));
        let model = reference(&log).to_contract();
        if core != model {
            panic!(
                "the core and the reference fold differ\ncore:      {core}\nreference: {model}\nlog: {:?}",
                log.iter()
                    .map(|(o, k, v)| (
                        *o,
                        String::from_utf8_lossy(k).into_owned(),
                        v.as_deref().map(String::from_utf8_lossy)
                    ))
                    .collect::<Vec<_>>()
            );
        }
    }
}
