//! The write side for runtimes that embed the core: the records Java's writers produce, each
//! with the partition Java's producer sends it to, for the caller to send with its own
//! producer. Each function forwards to the core's writer of that method (`engine::config`'s
//! `put_*`, the status log's `prepare_put`, KIP-875's alter and reset); this module only names
//! states from text, places records on partitions and turns refusals into [`EmbedError`]s.
//!
//! A record needs its partition spelled out because a non-Java client partitions keys its own
//! way (librdkafka hashes with CRC32 by default); Java's producer hashes keys with murmur2 (see
//! [`engine::offsets::default_partition`]), so records are placed here as Java places them.
//! The config topic has exactly one partition (Java refuses to start otherwise).

use engine::config::write as config_write;
use engine::config::{ConfigLog, TargetState};
use engine::offsets::{default_partition, kip875, OffsetLog};
use engine::status::write::{topic_status_record, topic_tombstone};
use engine::status::{StatusLog, StatusState, StatusUpdate, TopicStatus};
use engine::ProducerRecord;

use super::{EmbedError, TopicKind};

/// A record to send: the topic it belongs to, its partition, its key and its value (`None`: a
/// tombstone).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outgoing {
    /// The topic (the caller knows its name).
    pub topic: TopicKind,
    /// The partition Java's producer would send it to.
    pub partition: i32,
    /// The key bytes.
    pub key: Vec<u8>,
    /// The value bytes (compact JSON), `None` for a tombstone.
    pub value: Option<Vec<u8>>,
}

/// A property map from a caller: names with values (`None`: a Java `null`).
pub type Properties = [(String, Option<String>)];

/// `records` placed as Java's producer places them on a topic of `partitions` partitions: a
/// record's own partition if it has one (a KIP-875 tombstone goes where its key lives), else
/// murmur2 of its key.
fn place(
    topic: TopicKind,
    records: impl IntoIterator<Item = ProducerRecord>,
    partitions: i32,
) -> Result<Vec<Outgoing>, EmbedError> {
    records
        .into_iter()
        .map(|r| {
            check_partitions(partitions)?;
            let partition = match r.partition {
                Some(p) => p,
                None => default_partition(&r.key, partitions).unwrap_or_default(),
            };
            Ok(Outgoing {
                topic,
                partition,
                key: r.key,
                value: r.value,
            })
        })
        .collect()
}

fn check_partitions(partitions: i32) -> Result<(), EmbedError> {
    if partitions <= 0 {
        return Err(EmbedError::Write(format!(
            "a topic has at least one partition, not {partitions}"
        )));
    }
    Ok(())
}

fn config_records(plan: &engine::plan::WritePlan) -> Vec<Outgoing> {
    // The config topic has one partition: every record is placed on it.
    place(TopicKind::Config, plan.records().cloned(), 1).unwrap_or_default()
}

fn pairs(properties: &Properties) -> impl Iterator<Item = (&str, Option<&str>)> {
    properties.iter().map(|(k, v)| (k.as_str(), v.as_deref()))
}

/// A target state from its Java name (`STARTED`, `PAUSED`, `STOPPED`).
pub fn target_state(name: &str) -> Result<TargetState, EmbedError> {
    TargetState::from_java_name(name).ok_or_else(|| {
        EmbedError::Write(format!(
            "{name:?} is not a target state (STARTED, PAUSED or STOPPED)"
        ))
    })
}

/// A status state from its Java name (`RUNNING`, `FAILED`, ...; `DESTROYED` writes a
/// tombstone).
pub fn status_state(name: &str) -> Result<StatusState, EmbedError> {
    StatusState::from_java_name(name).ok_or_else(|| {
        let names: Vec<&str> = StatusState::ALL.iter().map(|s| s.as_str()).collect();
        EmbedError::Write(format!(
            "{name:?} is not a status state ({})",
            names.join(", ")
        ))
    })
}

/// `putConnectorConfig(connector, properties, targetState)`: the target state (if given) and
/// the config.
pub fn put_connector_config(
    connector: &str,
    properties: &Properties,
    target: Option<&str>,
) -> Result<Vec<Outgoing>, EmbedError> {
    let target = target.map(target_state).transpose()?;
    let plan = config_write::put_connector_config(connector, pairs(properties), target);
    Ok(config_records(&plan))
}

/// `removeConnectorConfig(connector)`: the connector's and its target state's tombstones.
pub fn remove_connector_config(connector: &str) -> Vec<Outgoing> {
    config_records(&config_write::remove_connector_config(connector))
}

/// `putTaskConfigs(connector, configs)`: task `i` gets `configs[i]`, then the commit.
pub fn put_task_configs(
    connector: &str,
    configs: &[Vec<(String, Option<String>)>],
) -> Vec<Outgoing> {
    let tasks = configs.iter().map(|task| pairs(task));
    config_records(&config_write::put_task_configs(connector, tasks))
}

/// `putTargetState(connector, state)`.
pub fn put_target_state(connector: &str, state: &str) -> Result<Vec<Outgoing>, EmbedError> {
    let plan = config_write::put_target_state(connector, target_state(state)?);
    Ok(config_records(&plan))
}

/// `putTaskCountRecord(connector, count)` (exactly-once source support's fencing record).
pub fn put_task_count_record(connector: &str, task_count: i32) -> Vec<Outgoing> {
    config_records(&config_write::put_task_count_record(connector, task_count))
}

/// `putSessionKey(key)`: the key bytes, its algorithm, its creation time (ms since the
/// epoch). An empty key is refused.
pub fn put_session_key(
    key: &[u8],
    algorithm: &str,
    creation_timestamp: i64,
) -> Result<Vec<Outgoing>, EmbedError> {
    let plan = config_write::put_session_key(key, algorithm, creation_timestamp)
        .map_err(|e| EmbedError::Write(e.to_string()))?;
    Ok(config_records(&plan))
}

/// `putRestartRequest(connector, onlyFailed, includeTasks)`.
pub fn put_restart_request(
    connector: &str,
    only_failed: bool,
    include_tasks: bool,
) -> Vec<Outgoing> {
    config_records(&config_write::put_restart_request(
        connector,
        only_failed,
        include_tasks,
    ))
}

/// `putLoggerLevel(namespace, level)`.
pub fn put_logger_level(namespace: &str, level: &str) -> Vec<Outgoing> {
    config_records(&config_write::put_logger_level(namespace, level))
}

/// A connector (`task: None`) or task status a worker writes: what `put` and `putSafe` take.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusWrite<'a> {
    /// The connector.
    pub connector: &'a str,
    /// The task number, `None` for the connector's own status.
    pub task: Option<i32>,
    /// The state's Java name.
    pub state: &'a str,
    /// The failure trace.
    pub trace: Option<&'a str>,
    /// The worker's id (its advertised REST `host:port`).
    pub worker_id: &'a str,
    /// The worker's group generation.
    pub generation: i32,
    /// The plugin version (KIP-891).
    pub version: Option<&'a str>,
}

/// Java's `put` (`safe == false`) or `putSafe` of a status on a status topic of `partitions`
/// partitions, with the log's write-side bookkeeping (spec §3.3): `None` when `putSafe`
/// refuses the write (a status of a newer generation is cached), as Java silently drops it.
/// The cached status changes only when the record is read back.
pub fn put_status(
    log: &mut StatusLog,
    write: &StatusWrite<'_>,
    safe: bool,
    partitions: i32,
) -> Result<Option<Outgoing>, EmbedError> {
    let state = status_state(write.state)?;
    let update = StatusUpdate {
        connector: write.connector.into(),
        task: write.task,
        state,
        trace: write.trace.map(Into::into),
        worker_id: write.worker_id.into(),
        generation: write.generation,
        version: write.version.map(Into::into),
    };
    // Checked before the bookkeeping changes.
    check_partitions(partitions)?;
    let Some(pending) = log.prepare_put(update, safe) else {
        return Ok(None);
    };
    let mut placed = place(TopicKind::Status, [pending.into_record()], partitions)?;
    Ok(placed.pop())
}

/// Java's `put(TopicStatus)`: a connector's active topic (KIP-558).
pub fn put_topic_status(
    topic: &str,
    connector: &str,
    task: i32,
    discover_timestamp: i64,
    partitions: i32,
) -> Result<Outgoing, EmbedError> {
    let status = TopicStatus::new(topic, connector, task, discover_timestamp);
    let mut placed = place(
        TopicKind::Status,
        [topic_status_record(&status)],
        partitions,
    )?;
    placed
        .pop()
        .ok_or_else(|| EmbedError::Write("no record".into()))
}

/// Java's `deleteTopic(connector, topic)`: the topic status's tombstone.
pub fn delete_topic_status(
    connector: &str,
    topic: &str,
    partitions: i32,
) -> Result<Outgoing, EmbedError> {
    let mut placed = place(
        TopicKind::Status,
        [topic_tombstone(connector, topic)],
        partitions,
    )?;
    placed
        .pop()
        .ok_or_else(|| EmbedError::Write("no record".into()))
}

/// `DELETE /connectors/{connector}/offsets` on an offsets topic of `partitions` partitions:
/// Java's precondition (the connector exists and is stopped with no tasks, from `config`), then
/// one tombstone per known partition. Empty when the connector has no offsets.
pub fn reset_offsets(
    offsets: &OffsetLog,
    config: &ConfigLog,
    connector: &str,
    partitions: i32,
) -> Result<Vec<Outgoing>, EmbedError> {
    let refused = |e: kip875::ModifyOffsetsError| EmbedError::Write(e.to_string());
    kip875::check_modifiable(&config.snapshot(), connector).map_err(refused)?;
    let records =
        kip875::reset_records(&offsets.snapshot(), connector, partitions).map_err(refused)?;
    place(TopicKind::Offsets, records, partitions)
}

/// `PATCH /connectors/{connector}/offsets` with `request`, the body Java's REST layer reads
/// (`{"offsets":[{"partition":{..},"offset":{..}}]}`; an offset of `null` is a tombstone):
/// Java's precondition, then the records in Java's normalised form.
pub fn alter_offsets(
    offsets: &OffsetLog,
    config: &ConfigLog,
    connector: &str,
    request: &str,
    partitions: i32,
) -> Result<Vec<Outgoing>, EmbedError> {
    let refused = |e: kip875::ModifyOffsetsError| EmbedError::Write(e.to_string());
    kip875::check_modifiable(&config.snapshot(), connector).map_err(refused)?;
    let entries = crate::offsets_file::parse_offsets_file(request).map_err(EmbedError::Write)?;
    let records = kip875::alter_records(&offsets.snapshot(), connector, &entries, partitions)
        .map_err(refused)?;
    place(TopicKind::Offsets, records, partitions)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embed::Machine;

    fn text(bytes: &Option<Vec<u8>>) -> Option<&str> {
        bytes.as_deref().map(|b| std::str::from_utf8(b).unwrap())
    }

    #[test]
    fn config_writes_are_java_records_on_partition_0() {
        let props = vec![("tasks.max".to_string(), Some("1".to_string()))];
        let records = put_connector_config("a", &props, Some("STOPPED")).unwrap();
        let keys: Vec<&[u8]> = records.iter().map(|r| r.key.as_slice()).collect();
        assert_eq!(keys, [&b"target-state-a"[..], b"connector-a"]);
        assert!(records
            .iter()
            .all(|r| r.partition == 0 && r.topic == TopicKind::Config));
        assert_eq!(
            text(&records[0].value),
            Some(r#"{"state":"PAUSED","state.v2":"STOPPED"}"#)
        );
        let tasks = put_task_configs("a", &[props.clone(), props]);
        let keys: Vec<&[u8]> = tasks.iter().map(|r| r.key.as_slice()).collect();
        assert_eq!(keys, [&b"task-a-0"[..], b"task-a-1", b"commit-a"]);
        assert_eq!(text(&tasks[2].value), Some(r#"{"tasks":2}"#));
        assert!(put_target_state("a", "paused").is_err());
        assert!(put_session_key(b"", "HmacSHA256", 0).is_err());
        assert_eq!(remove_connector_config("a")[0].value, None);
    }

    #[test]
    fn status_writes_go_where_javas_partitioner_puts_them() {
        let mut m = Machine::new(TopicKind::Status);
        let log = m.as_status_mut().unwrap();
        let write = StatusWrite {
            connector: "a",
            task: Some(3),
            state: "RUNNING",
            trace: None,
            worker_id: "w:8083",
            generation: 2,
            version: None,
        };
        let record = put_status(log, &write, false, 5).unwrap().unwrap();
        assert_eq!(record.key, b"status-task-a-3");
        assert_eq!(
            Some(record.partition),
            default_partition(b"status-task-a-3", 5)
        );
        assert_eq!(
            text(&record.value),
            Some(
                r#"{"state":"RUNNING","trace":null,"worker_id":"w:8083","generation":2,"version":null}"#
            )
        );
        // Another worker's status of a newer generation read back: putSafe is dropped, put is
        // not.
        let newer = br#"{"state":"RUNNING","trace":null,"worker_id":"v:8083","generation":3}"#;
        m.handle_record(Some(b"status-task-a-3"), Some(newer), 0, 0, None)
            .unwrap();
        let log = m.as_status_mut().unwrap();
        assert_eq!(put_status(log, &write, true, 5), Ok(None));
        assert!(put_status(log, &write, false, 5).unwrap().is_some());
        assert!(put_status(
            log,
            &StatusWrite {
                state: "running",
                ..write.clone()
            },
            false,
            5
        )
        .is_err());
        assert!(put_status(log, &write, false, 0).is_err());
        let gone = put_status(
            log,
            &StatusWrite {
                state: "DESTROYED",
                ..write
            },
            false,
            5,
        );
        assert_eq!(gone.unwrap().unwrap().value, None);
    }

    #[test]
    fn offsets_writes_keep_javas_precondition() {
        let mut config = Machine::new(TopicKind::Config);
        let mut offsets = Machine::new(TopicKind::Offsets);
        let body = r#"{"offsets":[{"partition":{"f":"x"},"offset":{"n":1}}]}"#;
        let refused = alter_offsets(
            offsets.as_offsets().unwrap(),
            config.as_config().unwrap(),
            "a",
            body,
            25,
        );
        assert!(matches!(refused, Err(EmbedError::Write(why)) if why.contains("not found")));
        for (offset, key, value) in [
            (
                0,
                "connector-a",
                r#"{"properties":{"connector.class":"S"}}"#,
            ),
            (
                1,
                "target-state-a",
                r#"{"state":"PAUSED","state.v2":"STOPPED"}"#,
            ),
            (2, "commit-a", r#"{"tasks":0}"#),
        ] {
            config
                .handle_record(
                    Some(key.as_bytes()),
                    Some(value.as_bytes()),
                    offset,
                    0,
                    None,
                )
                .unwrap();
        }
        let altered = alter_offsets(
            offsets.as_offsets().unwrap(),
            config.as_config().unwrap(),
            "a",
            body,
            25,
        )
        .unwrap();
        assert_eq!(altered.len(), 1);
        assert_eq!(altered[0].key, br#"["a",{"f":"x"}]"#);
        assert_eq!(text(&altered[0].value), Some(r#"{"n":1}"#));
        let stored = &altered[0];
        offsets
            .handle_record(
                Some(&stored.key),
                stored.value.as_deref(),
                0,
                stored.partition,
                None,
            )
            .unwrap();
        let reset = reset_offsets(
            offsets.as_offsets().unwrap(),
            config.as_config().unwrap(),
            "a",
            25,
        )
        .unwrap();
        assert_eq!(reset.len(), 1);
        assert_eq!(
            (reset[0].partition, reset[0].value.as_ref()),
            (stored.partition, None)
        );
        assert!(alter_offsets(
            offsets.as_offsets().unwrap(),
            config.as_config().unwrap(),
            "a",
            "{",
            25
        )
        .is_err());
    }
}
