//! Decoding of config-topic values into what each handler needs (spec §2, §3).

use alloc::string::String;
use alloc::vec::Vec;

use super::properties::{Properties, Shapes};
use super::skip::ConfigSkip;
use super::types::TargetState;
use crate::java;
use crate::json::{self, JsonValue, Members, PropertiesRead, Value};

/// A converted value, borrowing from the record: `None` is a tombstone (null, empty,
/// whitespace-only or the literal `null`).
pub(crate) type Body<'a> = Option<Value<'a>>;

/// Runs the converter (spec §2.1). An error means the record is skipped without advancing the
/// offset.
pub(crate) fn convert(value: Option<&[u8]>) -> Result<Body<'_>, ConfigSkip> {
    let Some(bytes) = value else {
        return Ok(None);
    };
    match json::parse_borrowed(bytes) {
        Ok(Some(v)) if v.is_null() => Ok(None),
        Ok(v) => Ok(v),
        Err(e) => Err(ConfigSkip::InvalidJson(e)),
    }
}

fn wrong(expected: &'static str) -> ConfigSkip {
    ConfigSkip::WrongFormat { expected }
}

/// The value as a JSON object's members, or the "not a Map" skip (tombstones included).
pub(crate) fn object<'v, 'a>(body: &'v Body<'a>) -> Result<&'v Members<'a>, ConfigSkip> {
    body.as_ref()
        .and_then(Value::as_object)
        .ok_or_else(|| wrong("a JSON object"))
}

/// A connector or task config value, read as far as the config handlers look.
pub(crate) enum ConfigRead<'a> {
    /// A value in Java's layout, laid out as it was read.
    LaidOut(Properties),
    /// Any other value, as the general reader read it.
    Read(PropertiesRead<'a>),
}

impl ConfigRead<'_> {
    /// Whether the value is a tombstone.
    pub(crate) fn is_tombstone(&self) -> bool {
        matches!(self, Self::Read(PropertiesRead::Tombstone))
    }
}

/// Runs the converter on a connector or task config value (spec §2.1), reading it in one pass
/// as far as the config handlers look: [`convert`] followed by [`properties`] gives the same
/// answers and errors. A value in the layout Java writes is laid out as it is read; any other
/// is read by the general reader, into the members buffer of `shapes`.
pub(crate) fn convert_properties<'a>(
    value: Option<&'a [u8]>,
    shapes: &mut Shapes,
) -> Result<ConfigRead<'a>, ConfigSkip> {
    let Some(bytes) = value else {
        return Ok(ConfigRead::Read(PropertiesRead::Tombstone));
    };
    if let Some(laid_out) = shapes.read_java_layout(bytes) {
        return Ok(ConfigRead::LaidOut(laid_out));
    }
    json::parse_properties(bytes, shapes.members_buffer())
        .map(ConfigRead::Read)
        .map_err(ConfigSkip::InvalidJson)
}

/// The `properties` map of a connector or task config record (not a tombstone), laid out
/// from the value (with the names of a recent configuration where they are the same).
pub(crate) fn properties(
    read: ConfigRead<'_>,
    shapes: &mut Shapes,
) -> Result<Properties, ConfigSkip> {
    match read {
        ConfigRead::LaidOut(properties) => Ok(properties),
        ConfigRead::Read(PropertiesRead::Members(members)) => Ok(shapes.lay_out(members)),
        ConfigRead::Read(PropertiesRead::NoProperties) => {
            Err(wrong("an object member `properties`"))
        }
        ConfigRead::Read(PropertiesRead::Tombstone | PropertiesRead::NotAnObject) => {
            Err(wrong("a JSON object"))
        }
    }
}

/// Member `name` of `map` (the last of that name, as Java's map holds it).
fn get<'v, 'a>(map: &'v Members<'a>, name: &str) -> Option<&'v Value<'a>> {
    json::member(map, name)
}

/// An integer member read as Java reads `tasks` and `task-count`: a Long truncated to 32 bits;
/// anything else is where Java throws (spec §3.4 step 4).
pub(crate) fn count(map: &Members<'_>, member: &str) -> Result<i32, ConfigSkip> {
    match get(map, member).and_then(Value::as_long) {
        // Truncation to the low 32 bits is Java's `Long.intValue()`.
        Some(n) => Ok(n as i32),
        None => Err(ConfigSkip::InvalidTaskCount),
    }
}

/// The target state of a V0 or V1 record (spec §3.5).
pub(crate) fn target_state(map: &Members<'_>) -> Result<TargetState, ConfigSkip> {
    // A non-string `state.v2` is logged and falls back to `state`, as does an absent one.
    let chosen = get(map, "state.v2").and_then(Value::as_str);
    let name = match chosen {
        Some(s) => s,
        None => match get(map, "state").and_then(Value::as_str) {
            Some(s) => s,
            None => return Err(wrong("a string member `state`")),
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

pub(crate) fn session_key(body: &Body<'_>) -> Result<SessionKeyParts, ConfigSkip> {
    if body.is_none() {
        return Err(ConfigSkip::UnexpectedTombstone);
    }
    let map = object(body)?;
    let Some(encoded) = get(map, "key").and_then(Value::as_str) else {
        return Err(wrong("a string member `key`"));
    };
    let key = java::base64_decode(encoded).map_err(|_| ConfigSkip::InvalidSessionKey)?;
    let Some(algorithm) = get(map, "algorithm").and_then(Value::as_str) else {
        return Err(wrong("a string member `algorithm`"));
    };
    let Some(creation_timestamp) = get(map, "creation-timestamp").and_then(Value::as_long) else {
        return Err(wrong("an integer member `creation-timestamp`"));
    };
    if key.is_empty() {
        return Err(ConfigSkip::InvalidSessionKey);
    }
    Ok(SessionKeyParts {
        encoded: encoded.into(),
        key,
        algorithm: algorithm.into(),
        creation_timestamp,
    })
}

/// A boolean member of a restart request: anything but a JSON boolean reads as `false`.
pub(crate) fn flag(map: &Members<'_>, member: &str) -> bool {
    matches!(get(map, member), Some(Value::Scalar(JsonValue::Bool(true))))
}

/// The `level` of a logger record.
pub(crate) fn logger_level(body: &Body<'_>) -> Result<String, ConfigSkip> {
    if body.is_none() {
        return Err(ConfigSkip::UnexpectedTombstone);
    }
    match get(object(body)?, "level").and_then(Value::as_str) {
        Some(level) => Ok(level.into()),
        None => Err(wrong("a string member `level`")),
    }
}
