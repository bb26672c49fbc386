//! Decoding of status-topic values exactly as Java's `KafkaStatusBackingStore` parses them
//! (spec §2.4).

use alloc::string::String;

use super::skip::StatusSkip;
use super::types::{Status, StatusState, TopicStatus};
use crate::json::{self, JsonObject, JsonValue};

fn unparsable(reason: &'static str) -> StatusSkip {
    StatusSkip::UnparsableStatus { reason }
}

fn unparsable_topic(reason: &'static str) -> StatusSkip {
    StatusSkip::UnparsableTopicStatus { reason }
}

/// Runs the converter: `Ok(None)` for empty input or the literal `null` (Java's converter gives
/// `null`, which is not a map and so unparsable, never a tombstone).
fn convert(bytes: &[u8]) -> Result<Option<JsonValue>, StatusSkip> {
    match json::parse(bytes) {
        Ok(Some(JsonValue::Null) | None) => Ok(None),
        Ok(Some(v)) => Ok(Some(v)),
        Err(e) => Err(StatusSkip::InvalidJson(e)),
    }
}

/// A member cast to `String` the way Java's `(String) map.get(k)` does: absent and `null` are
/// `None`, another type is the `ClassCastException`.
fn optional_string(
    map: &JsonObject,
    member: &str,
    err: &'static str,
) -> Result<Option<String>, StatusSkip> {
    match map.get(member) {
        None | Some(JsonValue::Null) => Ok(None),
        Some(JsonValue::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(unparsable(err)),
    }
}

/// Java's `parseConnectorStatus` / `parseTaskStatus` (identical).
pub(crate) fn status(bytes: &[u8]) -> Result<Status, StatusSkip> {
    let Some(JsonValue::Object(map)) = convert(bytes)? else {
        return Err(unparsable("not a JSON object"));
    };
    let state = match map.get("state") {
        Some(JsonValue::String(name)) => StatusState::from_java_name(name)
            .ok_or_else(|| unparsable("`state` is not a known state name"))?,
        _ => return Err(unparsable("`state` is missing or not a string")),
    };
    let trace = optional_string(&map, "trace", "`trace` is not a string")?;
    let worker_id = optional_string(&map, "worker_id", "`worker_id` is not a string")?;
    let generation = match map.get("generation") {
        // Java's `Long.intValue()`: the low 32 bits.
        Some(JsonValue::Long(n)) => *n as i32,
        _ => return Err(unparsable("`generation` is missing or not an integer")),
    };
    // Kafka 4.1's optional `version`, cast like the others: a non-string makes the status
    // unparsable (checked against Kafka 4.4.0; Kafka 3.9 and 4.0 ignore the member).
    let version = optional_string(&map, "version", "`version` is not a string")?;
    Ok(Status {
        state,
        trace,
        worker_id,
        generation,
        version,
    })
}

/// Java's `parseTopicStatus`.
pub(crate) fn topic_status(bytes: &[u8]) -> Result<TopicStatus, StatusSkip> {
    let Some(JsonValue::Object(map)) = convert(bytes)? else {
        return Err(unparsable_topic("not a JSON object"));
    };
    let Some(JsonValue::Object(topic)) = map.get("topic") else {
        return Err(unparsable_topic("`topic` is missing or not an object"));
    };
    let Some(JsonValue::String(name)) = topic.get("name") else {
        return Err(unparsable_topic("`name` is missing or not a string"));
    };
    let Some(JsonValue::String(connector)) = topic.get("connector") else {
        return Err(unparsable_topic("`connector` is missing or not a string"));
    };
    let Some(JsonValue::Long(task)) = topic.get("task") else {
        return Err(unparsable_topic("`task` is missing or not an integer"));
    };
    let Some(JsonValue::Long(discover_timestamp)) = topic.get("discoverTimestamp") else {
        return Err(unparsable_topic(
            "`discoverTimestamp` is missing or not an integer",
        ));
    };
    Ok(TopicStatus {
        name: name.clone(),
        connector: connector.clone(),
        // Java's `Long.intValue()`.
        task: *task as i32,
        discover_timestamp: *discover_timestamp,
    })
}
