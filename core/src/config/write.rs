//! The write side of the config topic (spec §6): the exact records Java's writer produces, byte
//! for byte, and the steps a transport runs for each write method.
//!
//! Every function returns a [`WritePlan`]: a list of steps (produce a batch, read to the end)
//! with Java's error message for each. A transport executes the steps in order under one time
//! budget per plan (Java: 30 s) and stops at the first failure, reporting the step's message.

use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

use super::keys::{
    COMMIT_PREFIX, CONNECTOR_PREFIX, LOGGER_CLUSTER_PREFIX, RESTART_PREFIX, SESSION_KEY_KEY,
    TARGET_STATE_PREFIX, TASKS_FENCING_PREFIX, TASK_PREFIX,
};
use super::types::TargetState;
use crate::java;
use crate::json::write_str;
pub use crate::record::ProducerRecord;

use crate::plan::{produce, read_to_end};
pub use crate::plan::{ProducerKind, StepAction, WritePlan, WriteStep, WRITE_TIMEOUT_MS};

/// A write Java's writer could never produce.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum WriteError {
    /// An empty session key: Java's `SecretKeySpec` refuses it, and a Java worker reading such a
    /// record fails to start (spec §3.10).
    EmptySessionKey,
}

impl core::fmt::Display for WriteError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::EmptySessionKey => f.write_str("a session key must not be empty"),
        }
    }
}

impl core::error::Error for WriteError {}

/// `{"properties":{...}}` with the members in the caller's order (Java writes its map's
/// iteration order). A `None` value is written as JSON `null`.
pub fn properties_value<'a, I>(properties: I) -> String
where
    I: IntoIterator<Item = (&'a str, Option<&'a str>)>,
{
    let mut out = String::from("{\"properties\":{");
    for (i, (name, value)) in properties.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_str(&mut out, name);
        out.push(':');
        match value {
            Some(v) => write_str(&mut out, v),
            None => out.push_str("null"),
        }
    }
    out.push_str("}}");
    out
}

/// The V1 target-state value: `{"state":<legacy>,"state.v2":<state>}`.
pub fn target_state_value(state: TargetState) -> String {
    alloc::format!(
        "{{\"state\":\"{}\",\"state.v2\":\"{}\"}}",
        state.legacy().as_str(),
        state.as_str()
    )
}

/// `{"tasks":n}`.
pub fn commit_value(task_count: i32) -> String {
    alloc::format!("{{\"tasks\":{task_count}}}")
}

/// `{"task-count":n}`.
pub fn task_count_value(task_count: i32) -> String {
    alloc::format!("{{\"task-count\":{task_count}}}")
}

/// `{"key":<Base64>,"algorithm":..,"creation-timestamp":..}`.
pub fn session_key_value(key: &[u8], algorithm: &str, creation_timestamp: i64) -> String {
    let mut out = String::from("{\"key\":\"");
    out.push_str(&java::base64_encode(key));
    out.push_str("\",\"algorithm\":");
    write_str(&mut out, algorithm);
    out.push_str(",\"creation-timestamp\":");
    out.push_str(&alloc::format!("{creation_timestamp}"));
    out.push('}');
    out
}

/// `{"include-tasks":b,"only-failed":b}` (schema field order).
pub fn restart_request_value(only_failed: bool, include_tasks: bool) -> String {
    alloc::format!("{{\"include-tasks\":{include_tasks},\"only-failed\":{only_failed}}}")
}

/// `{"level":..}`.
pub fn logger_level_value(level: &str) -> String {
    let mut out = String::from("{\"level\":");
    write_str(&mut out, level);
    out.push('}');
    out
}

/// `putConnectorConfig(c, props, targetState)`: the optional target state and the config in one
/// privileged batch, then a read to the end.
pub fn put_connector_config<'a, I>(
    connector: &str,
    properties: I,
    target_state: Option<TargetState>,
) -> WritePlan
where
    I: IntoIterator<Item = (&'a str, Option<&'a str>)>,
{
    const ERR: &str = "Error writing connector configuration to Kafka";
    let mut records = Vec::with_capacity(2);
    if let Some(state) = target_state {
        records.push(ProducerRecord::from_strings(
            alloc::format!("{TARGET_STATE_PREFIX}{connector}"),
            Some(target_state_value(state)),
        ));
    }
    records.push(ProducerRecord::from_strings(
        alloc::format!("{CONNECTOR_PREFIX}{connector}"),
        Some(properties_value(properties)),
    ));
    WritePlan {
        steps: vec![
            produce(ProducerKind::Privileged, records, ERR),
            read_to_end(ERR),
        ],
    }
}

/// `removeConnectorConfig(c)`: the connector tombstone, then the target-state tombstone, in one
/// privileged batch, then a read to the end. Task, commit, fencing and restart records are left
/// in place, as Java leaves them.
pub fn remove_connector_config(connector: &str) -> WritePlan {
    const ERR: &str = "Error removing connector configuration from Kafka";
    let records = vec![
        ProducerRecord::from_strings(alloc::format!("{CONNECTOR_PREFIX}{connector}"), None),
        ProducerRecord::from_strings(alloc::format!("{TARGET_STATE_PREFIX}{connector}"), None),
    ];
    WritePlan {
        steps: vec![
            produce(ProducerKind::Privileged, records, ERR),
            read_to_end(ERR),
        ],
    }
}

/// `putTaskConfigs(c, configs)`: read to end; the task configs `task-c-0..n-1` as one privileged
/// batch; read to end if `n > 0`; the commit `{"tasks":n}` as a second privileged batch; read to
/// end.
pub fn put_task_configs<'a, T, I>(connector: &str, task_configs: T) -> WritePlan
where
    T: IntoIterator<Item = I>,
    I: IntoIterator<Item = (&'a str, Option<&'a str>)>,
{
    const ROOT_ERR: &str = "Error writing root configuration to Kafka";
    const TASKS_ERR: &str = "Error writing task configurations to Kafka";
    let tasks: Vec<ProducerRecord> = task_configs
        .into_iter()
        .enumerate()
        .map(|(i, props)| {
            ProducerRecord::from_strings(
                alloc::format!("{TASK_PREFIX}{connector}-{i}"),
                Some(properties_value(props)),
            )
        })
        .collect();
    let count = i32::try_from(tasks.len()).unwrap_or(i32::MAX);
    let mut steps = vec![read_to_end(ROOT_ERR)];
    let any = !tasks.is_empty();
    steps.push(produce(ProducerKind::Privileged, tasks, TASKS_ERR));
    if any {
        steps.push(read_to_end(ROOT_ERR));
    }
    steps.push(produce(
        ProducerKind::Privileged,
        vec![ProducerRecord::from_strings(
            alloc::format!("{COMMIT_PREFIX}{connector}"),
            Some(commit_value(count)),
        )],
        ROOT_ERR,
    ));
    steps.push(read_to_end(ROOT_ERR));
    WritePlan { steps }
}

/// `putTargetState(c, state)`: one record through the ordinary producer, waiting for the
/// acknowledgement only (no read to end).
pub fn put_target_state(connector: &str, state: TargetState) -> WritePlan {
    let record = ProducerRecord::from_strings(
        alloc::format!("{TARGET_STATE_PREFIX}{connector}"),
        Some(target_state_value(state)),
    );
    WritePlan {
        steps: vec![produce(
            ProducerKind::Ordinary,
            vec![record],
            "Error writing target state to Kafka",
        )],
    }
}

/// `putTaskCountRecord(c, n)`: privileged, then read to end.
pub fn put_task_count_record(connector: &str, task_count: i32) -> WritePlan {
    const ERR: &str = "Error writing task count record to Kafka";
    let record = ProducerRecord::from_strings(
        alloc::format!("{TASKS_FENCING_PREFIX}{connector}"),
        Some(task_count_value(task_count)),
    );
    WritePlan {
        steps: vec![
            produce(ProducerKind::Privileged, vec![record], ERR),
            read_to_end(ERR),
        ],
    }
}

/// `putSessionKey(key)`: privileged, then read to end. An empty key is refused.
pub fn put_session_key(
    key: &[u8],
    algorithm: &str,
    creation_timestamp: i64,
) -> Result<WritePlan, WriteError> {
    const ERR: &str = "Error writing session key to Kafka";
    if key.is_empty() {
        return Err(WriteError::EmptySessionKey);
    }
    let record = ProducerRecord::from_strings(
        String::from(SESSION_KEY_KEY),
        Some(session_key_value(key, algorithm, creation_timestamp)),
    );
    Ok(WritePlan {
        steps: vec![
            produce(ProducerKind::Privileged, vec![record], ERR),
            read_to_end(ERR),
        ],
    })
}

/// `putRestartRequest(req)`: privileged, then read to end.
pub fn put_restart_request(connector: &str, only_failed: bool, include_tasks: bool) -> WritePlan {
    // Java embeds `RestartRequest.toString()` in the message.
    let err = alloc::format!(
        "Error writing restart request for {{connectorName='{connector}', onlyFailed={only_failed}, includeTasks={include_tasks}}} to Kafka"
    );
    let record = ProducerRecord::from_strings(
        alloc::format!("{RESTART_PREFIX}{connector}"),
        Some(restart_request_value(only_failed, include_tasks)),
    );
    WritePlan {
        steps: vec![
            produce(ProducerKind::Privileged, vec![record], err.clone()),
            read_to_end(err),
        ],
    }
}

/// `putLoggerLevel(ns, level)`: the ordinary producer, acknowledgement only (no read to end).
pub fn put_logger_level(namespace: &str, level: &str) -> WritePlan {
    let record = ProducerRecord::from_strings(
        alloc::format!("{LOGGER_CLUSTER_PREFIX}{namespace}"),
        Some(logger_level_value(level)),
    );
    WritePlan {
        steps: vec![produce(
            ProducerKind::Ordinary,
            vec![record],
            "Error writing logger level to Kafka",
        )],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    fn value(record: &ProducerRecord) -> &str {
        core::str::from_utf8(record.value.as_deref().unwrap()).unwrap()
    }

    #[test]
    fn values_match_java_bytes() {
        assert_eq!(
            properties_value([
                (
                    "connector.class",
                    Some("org.apache.kafka.connect.file.FileStreamSourceConnector")
                ),
                ("tasks.max", Some("1")),
                ("name", Some("my-conn")),
            ]),
            r#"{"properties":{"connector.class":"org.apache.kafka.connect.file.FileStreamSourceConnector","tasks.max":"1","name":"my-conn"}}"#
        );
        assert_eq!(properties_value([]), r#"{"properties":{}}"#);
        assert_eq!(
            properties_value([("k", None)]),
            r#"{"properties":{"k":null}}"#
        );
        assert_eq!(
            properties_value([("q\"/\\", Some("\u{1F600}\u{1f}\u{e9}\u{7f}\n"))]),
            "{\"properties\":{\"q\\\"/\\\\\":\"\\uD83D\\uDE00\\u001F\u{e9}\u{7f}\\n\"}}"
        );
        assert_eq!(
            target_state_value(TargetState::Stopped),
            r#"{"state":"PAUSED","state.v2":"STOPPED"}"#
        );
        assert_eq!(
            target_state_value(TargetState::Paused),
            r#"{"state":"PAUSED","state.v2":"PAUSED"}"#
        );
        assert_eq!(
            target_state_value(TargetState::Started),
            r#"{"state":"STARTED","state.v2":"STARTED"}"#
        );
        assert_eq!(commit_value(2), r#"{"tasks":2}"#);
        assert_eq!(task_count_value(4), r#"{"task-count":4}"#);
        let key: Vec<u8> = (1..=32).collect();
        assert_eq!(
            session_key_value(&key, "HmacSHA256", 1_700_000_000_000),
            r#"{"key":"AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA=","algorithm":"HmacSHA256","creation-timestamp":1700000000000}"#
        );
        assert_eq!(
            restart_request_value(false, true),
            r#"{"include-tasks":true,"only-failed":false}"#
        );
        assert_eq!(logger_level_value("DEBUG"), r#"{"level":"DEBUG"}"#);
    }

    #[test]
    fn put_task_configs_plan_has_java_steps() {
        let plan = put_task_configs("c", [vec![("a", Some("1"))], vec![("b", Some("2"))]]);
        let kinds: Vec<_> = plan
            .steps
            .iter()
            .map(|s| match &s.action {
                StepAction::ReadToEnd => "read".to_string(),
                StepAction::Produce { records, .. } => alloc::format!("produce{}", records.len()),
            })
            .collect();
        assert_eq!(kinds, ["read", "produce2", "read", "produce1", "read"]);
        assert_eq!(
            plan.steps[1].error_message,
            "Error writing task configurations to Kafka"
        );
        assert_eq!(
            plan.steps[3].error_message,
            "Error writing root configuration to Kafka"
        );
        let keys: Vec<_> = plan.records().map(|r| r.key.clone()).collect();
        assert_eq!(
            keys,
            [
                b"task-c-0".to_vec(),
                b"task-c-1".to_vec(),
                b"commit-c".to_vec()
            ]
        );
        assert_eq!(value(plan.records().last().unwrap()), r#"{"tasks":2}"#);

        let empty = put_task_configs::<_, Vec<(&str, Option<&str>)>>("c", []);
        assert_eq!(
            empty.steps.len(),
            4,
            "no read between an empty batch and the commit"
        );
        assert_eq!(value(empty.records().next().unwrap()), r#"{"tasks":0}"#);
    }

    #[test]
    fn connector_writes_and_removals() {
        let plan = put_connector_config("c", [("k", Some("v"))], Some(TargetState::Stopped));
        let records: Vec<_> = plan.records().collect();
        assert_eq!(records[0].key, b"target-state-c");
        assert_eq!(records[1].key, b"connector-c");
        assert!(matches!(
            plan.steps[0].action,
            StepAction::Produce {
                producer: ProducerKind::Privileged,
                ..
            }
        ));
        let removal = remove_connector_config("c");
        let records: Vec<_> = removal.records().collect();
        assert_eq!(records[0].key, b"connector-c");
        assert_eq!(records[0].value, None);
        assert_eq!(records[1].key, b"target-state-c");
        assert_eq!(records[1].value, None);
        let pause = put_target_state("c", TargetState::Paused);
        assert_eq!(pause.steps.len(), 1, "no read to end after a target state");
        assert!(matches!(
            pause.steps[0].action,
            StepAction::Produce {
                producer: ProducerKind::Ordinary,
                ..
            }
        ));
        assert_eq!(put_logger_level("org", "INFO").steps.len(), 1);
        assert_eq!(put_task_count_record("c", 3).steps.len(), 2);
        let restart = put_restart_request("c", true, false);
        assert_eq!(restart.steps.len(), 2);
        assert_eq!(
            restart.steps[0].error_message,
            "Error writing restart request for {connectorName='c', onlyFailed=true, includeTasks=false} to Kafka"
        );
        assert_eq!(
            put_session_key(&[1], "HmacSHA256", 1).unwrap().steps.len(),
            2
        );
        assert_eq!(
            put_session_key(&[], "HmacSHA256", 1),
            Err(WriteError::EmptySessionKey)
        );
    }
}
