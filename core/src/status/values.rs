//! Decoding of status-topic values exactly as Java's `KafkaStatusBackingStore` parses them
//! (spec §2.4).

use alloc::string::String;

use super::java_layout;
use super::skip::StatusSkip;
use super::types::{Status, StatusState, TopicStatus};
use crate::json::{self, JsonValue, Top, Value};

fn unparsable(reason: &'static str) -> StatusSkip {
    StatusSkip::UnparsableStatus { reason }
}

fn unparsable_topic(reason: &'static str) -> StatusSkip {
    StatusSkip::UnparsableTopicStatus { reason }
}

/// Runs the converter and reads the members `names` of the value in one pass (the last of
/// each name, as Java's map holds it); `None` when the value is not an object. Empty input and
/// the literal `null` are not objects either: Java's converter gives `null`, which is not a
/// map and so unparsable, never a tombstone.
fn members<'a, const N: usize>(
    bytes: &'a [u8],
    names: [&str; N],
) -> Result<Option<[Option<Value<'a>>; N]>, StatusSkip> {
    match json::parse_named(bytes, names) {
        Ok((Top::Object, values)) => Ok(Some(values)),
        Ok(_) => Ok(None),
        Err(e) => Err(StatusSkip::InvalidJson(e)),
    }
}

/// A member cast to `String` the way Java's `(String) map.get(k)` does: absent and `null` are
/// `None`, another type is the `ClassCastException`.
fn optional_string(
    value: Option<Value<'_>>,
    err: &'static str,
) -> Result<Option<String>, StatusSkip> {
    match value {
        None | Some(Value::Scalar(JsonValue::Null)) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.into_owned())),
        Some(_) => Err(unparsable(err)),
    }
}

/// Java's `parseConnectorStatus` / `parseTaskStatus` (identical): by the layout Java writes
/// when the value has it ([`java_layout`]), otherwise in full.
pub(crate) fn status(bytes: &[u8]) -> Result<Status, StatusSkip> {
    match java_layout::read(bytes) {
        Some(status) => Ok(status),
        None => read_in_full(bytes),
    }
}

/// [`status`] by the general JSON reader, whatever the value's layout.
pub(crate) fn read_in_full(bytes: &[u8]) -> Result<Status, StatusSkip> {
    let names = ["state", "trace", "worker_id", "generation", "version"];
    let Some([state, trace, worker_id, generation, version]) = members(bytes, names)? else {
        return Err(unparsable("not a JSON object"));
    };
    let state = match state.as_ref().and_then(Value::as_str) {
        Some(name) => StatusState::from_java_name(name)
            .ok_or_else(|| unparsable("`state` is not a known state name"))?,
        None => return Err(unparsable("`state` is missing or not a string")),
    };
    let trace = optional_string(trace, "`trace` is not a string")?;
    let worker_id = optional_string(worker_id, "`worker_id` is not a string")?;
    let generation = match generation.as_ref().and_then(Value::as_long) {
        // Java's `Long.intValue()`: the low 32 bits.
        Some(n) => n as i32,
        None => return Err(unparsable("`generation` is missing or not an integer")),
    };
    // Kafka 4.1's optional `version`, cast like the others: a non-string makes the status
    // unparsable (checked against Kafka 4.4.0; Kafka 3.9 and 4.0 ignore the member).
    let version = optional_string(version, "`version` is not a string")?;
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
    let Some([topic]) = members(bytes, ["topic"])? else {
        return Err(unparsable_topic("not a JSON object"));
    };
    let Some(topic) = topic.as_ref().and_then(Value::as_object) else {
        return Err(unparsable_topic("`topic` is missing or not an object"));
    };
    let Some(name) = json::member(topic, "name").and_then(Value::as_str) else {
        return Err(unparsable_topic("`name` is missing or not a string"));
    };
    let Some(connector) = json::member(topic, "connector").and_then(Value::as_str) else {
        return Err(unparsable_topic("`connector` is missing or not a string"));
    };
    let Some(task) = json::member(topic, "task").and_then(Value::as_long) else {
        return Err(unparsable_topic("`task` is missing or not an integer"));
    };
    let Some(discover_timestamp) =
        json::member(topic, "discoverTimestamp").and_then(Value::as_long)
    else {
        return Err(unparsable_topic(
            "`discoverTimestamp` is missing or not an integer",
        ));
    };
    Ok(TopicStatus {
        name: name.into(),
        connector: connector.into(),
        // Java's `Long.intValue()`.
        task: task as i32,
        discover_timestamp,
    })
}
