//! Decoding of config-topic values into what each handler needs (spec §2, §3).

use alloc::string::String;
use alloc::vec::Vec;

use super::properties::Properties;
use super::skip::ConfigSkip;
use super::types::TargetState;
use crate::java;
use crate::json::{self, JsonObject, JsonValue};

/// A converted value: `None` is a tombstone (null, empty, whitespace-only or the literal `null`).
pub(crate) type Body = Option<JsonValue>;

/// Runs the converter (spec §2.1). An error means the record is skipped without advancing the
/// offset.
pub(crate) fn convert(value: Option<&[u8]>) -> Result<Body, ConfigSkip> {
    let Some(bytes) = value else {
        return Ok(None);
    };
    match json::parse(bytes) {
        Ok(Some(JsonValue::Null) | None) => Ok(None),
        Ok(Some(v)) => Ok(Some(v)),
        Err(e) => Err(ConfigSkip::InvalidJson(e)),
    }
}

fn wrong(expected: &'static str) -> ConfigSkip {
    ConfigSkip::WrongFormat { expected }
}

/// The value as a JSON object, or the "not a Map" skip (tombstones included).
pub(crate) fn object(body: &Body) -> Result<&JsonObject, ConfigSkip> {
    body.as_ref()
        .and_then(JsonValue::as_object)
        .ok_or_else(|| wrong("a JSON object"))
}

/// The `properties` map of a connector or task config record, moved out of the value.
pub(crate) fn properties(body: Body) -> Result<Properties, ConfigSkip> {
    let Some(JsonValue::Object(mut map)) = body else {
        return Err(wrong("a JSON object"));
    };
    match map.remove("properties") {
        Some(JsonValue::Object(props)) => Ok(props.into()),
        _ => Err(wrong("an object member `properties`")),
    }
}

/// An integer member read as Java reads `tasks` and `task-count`: a Long truncated to 32 bits;
/// anything else is where Java throws (spec §3.4 step 4).
pub(crate) fn count(map: &JsonObject, member: &str) -> Result<i32, ConfigSkip> {
    match map.get(member) {
        // Truncation to the low 32 bits is Java's `Long.intValue()`.
        Some(JsonValue::Long(n)) => Ok(*n as i32),
        _ => Err(ConfigSkip::InvalidTaskCount),
    }
}

/// The target state of a V0 or V1 record (spec §3.5).
pub(crate) fn target_state(map: &JsonObject) -> Result<TargetState, ConfigSkip> {
    let chosen = match map.get("state.v2") {
        Some(JsonValue::String(s)) => Some(s),
        // A non-string `state.v2` is logged and falls back to `state`, as does an absent one.
        _ => None,
    };
    let name = match chosen {
        Some(s) => s,
        None => match map.get("state") {
            Some(JsonValue::String(s)) => s,
            _ => return Err(wrong("a string member `state`")),
        },
    };
    TargetState::from_java_name(name).ok_or(ConfigSkip::InvalidTargetState)
}

/// The decoded parts of a session-key record, checked in Java's order (spec §3.8).
pub(crate) struct SessionKeyParts {
    pub(crate) encoded: String,
    pub(crate) key: Vec<u8>,
    pub(crate) algorithm: String,
    pub(crate) creation_timestamp: i64,
}

pub(crate) fn session_key(body: &Body) -> Result<SessionKeyParts, ConfigSkip> {
    if body.is_none() {
        return Err(ConfigSkip::UnexpectedTombstone);
    }
    let map = object(body)?;
    let Some(JsonValue::String(encoded)) = map.get("key") else {
        return Err(wrong("a string member `key`"));
    };
    let key = java::base64_decode(encoded).map_err(|_| ConfigSkip::InvalidSessionKey)?;
    let Some(JsonValue::String(algorithm)) = map.get("algorithm") else {
        return Err(wrong("a string member `algorithm`"));
    };
    let Some(JsonValue::Long(creation_timestamp)) = map.get("creation-timestamp") else {
        return Err(wrong("an integer member `creation-timestamp`"));
    };
    if key.is_empty() {
        return Err(ConfigSkip::InvalidSessionKey);
    }
    Ok(SessionKeyParts {
        encoded: encoded.clone(),
        key,
        algorithm: algorithm.clone(),
        creation_timestamp: *creation_timestamp,
    })
}

/// A boolean member of a restart request: anything but a JSON boolean reads as `false`.
pub(crate) fn flag(map: &JsonObject, member: &str) -> bool {
    matches!(map.get(member), Some(JsonValue::Bool(true)))
}

/// The `level` of a logger record.
pub(crate) fn logger_level(body: &Body) -> Result<String, ConfigSkip> {
    if body.is_none() {
        return Err(ConfigSkip::UnexpectedTombstone);
    }
    match object(body)?.get("level") {
        Some(JsonValue::String(level)) => Ok(level.clone()),
        _ => Err(wrong("a string member `level`")),
    }
}
