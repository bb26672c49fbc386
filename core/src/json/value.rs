//! The value model: what Java Connect holds after `JsonConverter` (schemas disabled) has turned
//! Jackson's tree into plain Java values.

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;

use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Deserialize, Serialize};

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
/// stack. For ordinary JSON output wrap it in [`Natural`].
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

/// The newtype name [`Natural`] serializes a non-finite double under (its text inside), so a
/// serializer other than a JSON writer can tell it from a string.
pub const JAVA_DOUBLE: &str = "JavaDouble";

/// Serializes a [`JsonValue`] as natural JSON, so that e.g. a `serde_json` serializer writes
/// ordinary JSON: `Null` → unit, `Bool` → bool, `Long` → `i64`, `Double` → `f64` (a non-finite
/// one as the string Jackson writes, `"NaN"`, `"Infinity"`, `"-Infinity"`, wrapped in the
/// newtype [`JAVA_DOUBLE`], which JSON writers print as the string), `String` → str,
/// `Array` → sequence, `Object` → map (in `BTreeMap` order).
///
/// (The `Serialize` of [`JsonValue`] itself writes a flat token list, which is what a binary
/// checkpoint format wants.)
#[derive(Debug, Clone, Copy)]
pub struct Natural<'a>(pub &'a JsonValue);

impl serde::Serialize for Natural<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            JsonValue::Null => serializer.serialize_unit(),
            JsonValue::Bool(b) => serializer.serialize_bool(*b),
            JsonValue::Long(n) => serializer.serialize_i64(*n),
            JsonValue::Double(d) if d.get().is_finite() => serializer.serialize_f64(d.get()),
            // JSON has no non-finite numbers: Jackson (so Java's REST answers) writes them as
            // the strings `"NaN"`, `"Infinity"` and `"-Infinity"`.
            // As the newtype `JAVA_DOUBLE` around the text: JSON writers print the text, and a
            // serializer that builds values can still tell the double from a string.
            JsonValue::Double(d) => serializer.serialize_newtype_struct(
                JAVA_DOUBLE,
                &crate::json::write::java_double_to_string(d.get()),
            ),
            // Never in a state (only in a request, which validation refuses): its digits.
            JsonValue::BigInteger(digits) => serializer.serialize_str(digits),
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

/// One token of a value's flat serde form: containers announce their length, object members
/// are a name token followed by the member's value.
#[derive(Serialize, Deserialize)]
pub(super) enum Token<S> {
    Null,
    Bool(bool),
    Long(i64),
    Double(u64),
    String(S),
    Array(usize),
    Object(usize),
    /// Last, so the tokens before it keep their numbers (checkpoints never hold one).
    BigInteger(S),
}

impl Serialize for JsonValue {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut tokens: Vec<Token<&str>> = Vec::new();
        let mut pending: Vec<&Self> = alloc::vec![self];
        let mut names: Vec<Option<&str>> = alloc::vec![None];
        while let (Some(value), Some(name)) = (pending.pop(), names.pop()) {
            if let Some(name) = name {
                tokens.push(Token::String(name));
            }
            match value {
                Self::Null => tokens.push(Token::Null),
                Self::Bool(b) => tokens.push(Token::Bool(*b)),
                Self::Long(n) => tokens.push(Token::Long(*n)),
                Self::Double(d) => tokens.push(Token::Double(d.0)),
                Self::BigInteger(digits) => tokens.push(Token::BigInteger(digits)),
                Self::String(s) => tokens.push(Token::String(s)),
                Self::Array(items) => {
                    tokens.push(Token::Array(items.len()));
                    pending.extend(items.iter().rev());
                    names.extend(items.iter().map(|_| None));
                }
                Self::Object(members) => {
                    tokens.push(Token::Object(members.len()));
                    pending.extend(members.values().rev());
                    names.extend(members.keys().rev().map(|k| Some(k.as_str())));
                }
            }
        }
        tokens.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for JsonValue {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let tokens = Vec::<Token<String>>::deserialize(deserializer)?;
        from_tokens(tokens).map_err(serde::de::Error::custom)
    }
}

/// A container being rebuilt: its items so far, how many remain, and (for objects) the name
/// waiting for its value.
enum Open {
    Array(Vec<JsonValue>, usize),
    Object(JsonObject, usize, Option<String>),
}

/// Rebuilds a value from its tokens with an explicit stack.
fn from_tokens(tokens: Vec<Token<String>>) -> Result<JsonValue, &'static str> {
    let mut stack: Vec<Open> = Vec::new();
    let mut tokens = tokens.into_iter();
    loop {
        let value = match close_if_complete(&mut stack) {
            Some(done) => done,
            None => {
                if let Some(Open::Object(_, _, name)) = stack.last_mut() {
                    match tokens.next() {
                        Some(Token::String(n)) => *name = Some(n),
                        _ => return Err("object member without a name"),
                    }
                }
                match tokens.next().ok_or("value tokens end early")? {
                    Token::Null => JsonValue::Null,
                    Token::Bool(b) => JsonValue::Bool(b),
                    Token::Long(n) => JsonValue::Long(n),
                    Token::Double(bits) => JsonValue::Double(JavaDouble(bits)),
                    Token::BigInteger(digits) => JsonValue::BigInteger(digits),
                    Token::String(s) => JsonValue::String(s),
                    Token::Array(_) | Token::Object(_) if stack.len() >= MAX_DEPTH => {
                        return Err("value nested deeper than 1000 levels");
                    }
                    Token::Array(len) => {
                        stack.push(Open::Array(Vec::new(), len));
                        continue;
                    }
                    Token::Object(len) => {
                        stack.push(Open::Object(JsonObject::new(), len, None));
                        continue;
                    }
                }
            }
        };
        match stack.last_mut() {
            None if tokens.next().is_none() => return Ok(value),
            None => return Err("trailing tokens after the value"),
            Some(Open::Array(items, remaining)) => {
                items.push(value);
                *remaining -= 1;
            }
            Some(Open::Object(members, remaining, name)) => {
                members.insert(name.take().ok_or("object member without a name")?, value);
                *remaining -= 1;
            }
        }
    }
}

/// Pops the innermost container if it has all its items, as a finished value.
fn close_if_complete(stack: &mut Vec<Open>) -> Option<JsonValue> {
    match stack.last() {
        Some(Open::Array(_, 0) | Open::Object(_, 0, _)) => match stack.pop()? {
            Open::Array(items, _) => Some(JsonValue::Array(items)),
            Open::Object(members, _, _) => Some(JsonValue::Object(members)),
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    fn round_trip(value: &JsonValue) -> Result<JsonValue, bincode::error::DecodeError> {
        let bytes = bincode::serde::encode_to_vec(value, bincode::config::standard()).unwrap();
        bincode::serde::decode_from_slice(&bytes, bincode::config::standard()).map(|(v, _)| v)
    }

    #[test]
    fn natural_json_writes_non_finite_doubles_as_jackson_does() {
        let value = JsonValue::Array(vec![
            JsonValue::Double(JavaDouble::new(f64::INFINITY)),
            JsonValue::Double(JavaDouble::new(f64::NEG_INFINITY)),
            JsonValue::Double(JavaDouble::new(f64::NAN)),
            JsonValue::Double(JavaDouble::new(1.5)),
        ]);
        let text = serde_json::to_string(&Natural(&value)).unwrap();
        assert_eq!(text, r#"["Infinity","-Infinity","NaN",1.5]"#);
    }

    #[test]
    fn flat_form_round_trips_exactly() {
        let mut inner = JsonObject::new();
        inner.insert("z".into(), JsonValue::Array(vec![]));
        inner.insert("a".into(), JsonValue::Double(JavaDouble::new(-0.0)));
        let value = JsonValue::Array(vec![
            JsonValue::Null,
            JsonValue::Bool(true),
            JsonValue::Long(i64::MIN),
            JsonValue::Double(JavaDouble::new(f64::INFINITY)),
            JsonValue::String("\u{1F600}".into()),
            JsonValue::Object(inner),
            JsonValue::Object(JsonObject::new()),
        ]);
        assert_eq!(round_trip(&value).unwrap(), value);
        assert_eq!(round_trip(&JsonValue::Long(5)).unwrap(), JsonValue::Long(5));
    }

    #[test]
    fn deep_values_round_trip_and_forged_depth_is_refused() {
        let mut deep = JsonValue::Null;
        for _ in 0..MAX_DEPTH {
            deep = JsonValue::Array(vec![deep]);
        }
        assert_eq!(round_trip(&deep).unwrap(), deep);
        // A forged token list one level deeper than allowed, then 100,000 levels deeper.
        for depth in [MAX_DEPTH + 1, 100_000] {
            let mut tokens: Vec<Token<&str>> = (0..depth).map(|_| Token::Array(1)).collect();
            tokens.push(Token::Null);
            let bytes =
                bincode::serde::encode_to_vec(&tokens, bincode::config::standard()).unwrap();
            let decoded: Result<(JsonValue, usize), _> =
                bincode::serde::decode_from_slice(&bytes, bincode::config::standard());
            assert!(decoded.is_err(), "depth {depth}");
        }
    }

    #[test]
    fn malformed_token_lists_are_refused() {
        let cases: Vec<Vec<Token<&str>>> = vec![
            vec![],
            vec![Token::Array(2), Token::Null],
            vec![Token::Object(1), Token::Null, Token::Null],
            vec![Token::Null, Token::Null],
            vec![Token::Array(usize::MAX)],
        ];
        for tokens in cases {
            let bytes =
                bincode::serde::encode_to_vec(&tokens, bincode::config::standard()).unwrap();
            let decoded: Result<(JsonValue, usize), _> =
                bincode::serde::decode_from_slice(&bytes, bincode::config::standard());
            assert!(decoded.is_err());
        }
    }
}
