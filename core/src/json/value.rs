//! The value model: what Java Connect holds after `JsonConverter` (schemas disabled) has turned
//! Jackson's tree into plain Java values.

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;

use serde::ser::{SerializeMap, SerializeSeq};

/// A JSON object after schemaless conversion (Java: `Map<String, Object>`).
///
/// Member order is not significant in Java (`HashMap`), so a sorted map is used.
pub type JsonObject = BTreeMap<String, JsonValue>;

/// A JSON value as Java Connect holds it after schemaless conversion.
///
/// | JSON                         | Java                 | here              |
/// |------------------------------|----------------------|-------------------|
/// | `null`                       | `null`               | [`JsonValue::Null`]   |
/// | `true` / `false`             | `Boolean`            | [`JsonValue::Bool`]   |
/// | integer (no `.` / exponent)  | `Long`               | [`JsonValue::Long`]   |
/// | number with `.` or exponent  | `Double`             | [`JsonValue::Double`] |
/// | string                       | `String`             | [`JsonValue::String`] |
/// | array                        | `List<Object>`       | [`JsonValue::Array`]  |
/// | object                       | `Map<String, Object>`| [`JsonValue::Object`] |
#[derive(
    Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub enum JsonValue {
    /// JSON `null` (Java `null`).
    Null,
    /// JSON `true` / `false` (Java `Boolean`).
    Bool(bool),
    /// A JSON integer (Java `Long`; out-of-range integers keep their low 64 bits).
    Long(i64),
    /// A JSON number with a fraction or an exponent (Java `Double`).
    Double(JavaDouble),
    /// A JSON string (Java `String`).
    String(String),
    /// A JSON array (Java `List<Object>`).
    Array(Vec<Self>),
    /// A JSON object (Java `Map<String, Object>`).
    Object(JsonObject),
}

impl JsonValue {
    /// The string, if this is a [`JsonValue::String`].
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Self::String(s) => Some(s),
            _ => None,
        }
    }

    /// The map, if this is a [`JsonValue::Object`].
    pub fn as_object(&self) -> Option<&JsonObject> {
        match self {
            Self::Object(o) => Some(o),
            _ => None,
        }
    }

    /// The integer, if this is a [`JsonValue::Long`] (a `Double` is not converted).
    pub fn as_long(&self) -> Option<i64> {
        match self {
            Self::Long(n) => Some(*n),
            _ => None,
        }
    }

    /// The boolean, if this is a [`JsonValue::Bool`].
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Self::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// Whether this is [`JsonValue::Null`].
    pub fn is_null(&self) -> bool {
        matches!(self, Self::Null)
    }
}

/// An `f64` compared, ordered and hashed by its bit pattern, like `java.lang.Double.equals`
/// (so `NaN == NaN`, and `0.0 != -0.0`).
///
/// The ordering is the ordering of the raw bits: total and consistent with equality, but not
/// numeric order.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub struct JavaDouble(u64);

impl JavaDouble {
    /// Wraps `v`, keeping its exact bit pattern.
    pub fn new(v: f64) -> Self {
        Self(v.to_bits())
    }

    /// The wrapped `f64`.
    pub fn get(self) -> f64 {
        f64::from_bits(self.0)
    }
}

impl From<f64> for JavaDouble {
    fn from(v: f64) -> Self {
        Self::new(v)
    }
}

/// Serializes a [`JsonValue`] as natural JSON, so that e.g. a `serde_json` serializer writes
/// ordinary JSON: `Null` → unit, `Bool` → bool, `Long` → `i64`, `Double` → `f64`, `String` → str,
/// `Array` → sequence, `Object` → map (in `BTreeMap` order).
///
/// (The derived `Serialize` of [`JsonValue`] instead writes the enum structure, which is what a
/// binary snapshot format wants.)
#[derive(Debug, Clone, Copy)]
pub struct Natural<'a>(pub &'a JsonValue);

impl serde::Serialize for Natural<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            JsonValue::Null => serializer.serialize_unit(),
            JsonValue::Bool(b) => serializer.serialize_bool(*b),
            JsonValue::Long(n) => serializer.serialize_i64(*n),
            JsonValue::Double(d) => serializer.serialize_f64(d.get()),
            JsonValue::String(s) => serializer.serialize_str(s),
            JsonValue::Array(items) => {
                let mut seq = serializer.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(&Natural(item))?;
                }
                seq.end()
            }
            JsonValue::Object(members) => {
                let mut map = serializer.serialize_map(Some(members.len()))?;
                for (name, value) in members {
                    map.serialize_entry(name, &Natural(value))?;
                }
                map.end()
            }
        }
    }
}
