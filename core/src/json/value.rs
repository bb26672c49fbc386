//! The value model: what Java Connect holds after `JsonConverter` (schemas disabled) has turned
//! Jackson's tree into plain Java values.

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;

/// The deepest nesting a value may have (Jackson's default limit, shared with the reader).
pub const MAX_DEPTH: usize = 1000;

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
///
/// Its serde form (used by checkpoints) is a flat, pre-order list of tokens, written and read
/// without recursion, and refused beyond [`MAX_DEPTH`] levels: forged bytes cannot overflow the
/// stack. For ordinary JSON output wrap it in [`Natural`](super::Natural).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum JsonValue {
    /// JSON `null` (Java `null`).
    Null,
    /// JSON `true` / `false` (Java `Boolean`).
    Bool(bool),
    /// A JSON integer (Java `Long`; out-of-range integers keep their low 64 bits).
    Long(i64),
    /// A JSON number with a fraction or an exponent (Java `Double`).
    Double(JavaDouble),
    /// An integer beyond Java's `long` in a REST request body, which Jackson's default
    /// `ObjectMapper` holds as a `BigInteger` ([`crate::json::parse_rest`] only; its decimal
    /// digits, with a `-` when negative). Offsets may not hold one: `OffsetUtils.validateFormat`
    /// refuses it, in its member's turn. Records never produce it (Connect's converter keeps
    /// the low 64 bits).
    BigInteger(String),
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
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
