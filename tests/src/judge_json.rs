//! The judge's JSON: a value that keeps member order and each number's text, read from the
//! oracle's answers and built from the core's serializable views, so a comparison sees what the
//! JSON contract prints: `-0.0` is not `0.0`, `1.0E10` (Java's text) is the contract's
//! `10000000000.0`, and the double `Infinity` is not the string `"Infinity"`.
//!
//! Why not `serde_json::Value`: it holds numbers as `f64` (without `arbitrary_precision`, which
//! would reach the core's build through feature unification), and it cannot read the bare
//! `Infinity`, `-Infinity` and `NaN` tokens the oracle writes for Java's non-finite doubles.
//! Both readers here are small: the judge must not depend on the code it judges.

use std::fmt;

use serde::ser::{self, Serialize};

/// A JSON value that keeps member order and number texts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Json {
    /// `null`.
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// A number, as the contract prints it ([`canonical_number`]): an integer's digits, a
    /// double's shortest round-trip text (`1.5`, `-0.0`, `1e23`), or `Infinity`, `-Infinity`,
    /// `NaN` for Java's non-finite doubles.
    Number(String),
    /// A string.
    String(String),
    /// An array.
    Array(Vec<Self>),
    /// An object, members in order.
    Object(Vec<(String, Self)>),
}

impl Json {
    /// The member `name` of an object.
    pub fn get(&self, name: &str) -> Option<&Self> {
        match self {
            Self::Object(members) => members.iter().find(|(k, _)| k == name).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The member `name` of an object, mutably.
    pub fn get_mut(&mut self, name: &str) -> Option<&mut Self> {
        match self {
            Self::Object(members) => members.iter_mut().find(|(k, _)| k == name).map(|(_, v)| v),
            _ => None,
        }
    }

    /// An integer number.
    pub fn int(n: i64) -> Self {
        Self::Number(n.to_string())
    }

    /// The number as an `i64`, when it is an integer that fits.
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Self::Number(text) => text.parse().ok(),
            _ => None,
        }
    }

    /// The string, when it is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Self::String(s) => Some(s),
            _ => None,
        }
    }

    /// The value of a serializable view (the core's JSON contract), built through serde
    /// without going through text: numbers keep their kind, and a Java double the core
    /// serializes as the newtype [`engine::json::JAVA_DOUBLE`] (a non-finite one, which the
    /// contract prints as a string) is a number here.
    pub fn of<T: Serialize + ?Sized>(value: &T) -> Self {
        value
            .serialize(Builder)
            .unwrap_or_else(|e| panic!("the core's view does not serialize: {e}"))
    }

    /// Reads JSON text (no nesting limit; members in order; number texts canonical). Accepts
    /// the bare tokens `Infinity`, `-Infinity` and `NaN` as numbers.
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut reader = Reader {
            bytes: text.as_bytes(),
            at: 0,
        };
        reader.skip_space();
        let value = reader.value()?;
        reader.skip_space();
        if reader.at != reader.bytes.len() {
            return Err(reader.error("trailing text"));
        }
        Ok(value)
    }

    /// The same value with every object's members sorted by name (for comparing documents whose
    /// member order is not the point, as the vectors' files).
    pub fn sorted(&self) -> Self {
        match self {
            Self::Array(items) => Self::Array(items.iter().map(Self::sorted).collect()),
            Self::Object(members) => {
                let mut members: Vec<(String, Self)> = members
                    .iter()
                    .map(|(k, v)| (k.clone(), v.sorted()))
                    .collect();
                members.sort_by(|a, b| a.0.cmp(&b.0));
                Self::Object(members)
            }
            other => other.clone(),
        }
    }

    /// This value as a `serde_json::Value` (numbers through their text; non-finite ones as the
    /// strings Jackson writes), for deserializing the parts of an answer that are not compared.
    pub fn to_value(&self) -> serde_json::Value {
        use serde_json::Value;
        match self {
            Self::Null => Value::Null,
            Self::Bool(b) => Value::Bool(*b),
            Self::Number(text) => serde_json::from_str(text).unwrap_or(Value::String(text.clone())),
            Self::String(s) => Value::String(s.clone()),
            Self::Array(items) => Value::Array(items.iter().map(Self::to_value).collect()),
            Self::Object(members) => Value::Object(
                members
                    .iter()
                    .map(|(k, v)| (k.clone(), v.to_value()))
                    .collect(),
            ),
        }
    }
}

/// A number's text as the JSON contract prints it: an integer literal as it is; a decimal or
/// exponent literal as the shortest text that reads back as the same double (serde_json's
/// printing, which the contract uses), so Java's `1.0E10` is `10000000000.0` and its `-0.0`
/// stays `-0.0`; a literal beyond the doubles (`1e400`) as `Infinity`, as Jackson reads it.
pub fn canonical_number(literal: &str) -> String {
    let integer = literal
        .strip_prefix('-')
        .unwrap_or(literal)
        .bytes()
        .all(|b| b.is_ascii_digit());
    if integer || matches!(literal, "Infinity" | "-Infinity" | "NaN") {
        return literal.to_string();
    }
    match literal.parse::<f64>() {
        Ok(value) => double_text(value),
        Err(_) => literal.to_string(),
    }
}

/// A double as the contract prints it (non-finite ones as Jackson's words).
fn double_text(value: f64) -> String {
    if value.is_nan() {
        "NaN".into()
    } else if value.is_infinite() {
        if value > 0.0 { "Infinity" } else { "-Infinity" }.into()
    } else {
        serde_json::Number::from_f64(value).map_or_else(|| value.to_string(), |n| n.to_string())
    }
}

impl fmt::Display for Json {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Null => f.write_str("null"),
            Self::Bool(b) => write!(f, "{b}"),
            Self::Number(n) => f.write_str(n),
            Self::String(s) => write!(f, "{}", serde_json::Value::String(s.clone())),
            Self::Array(items) => {
                f.write_str("[")?;
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{item}")?;
                }
                f.write_str("]")
            }
            Self::Object(members) => {
                f.write_str("{")?;
                for (i, (k, v)) in members.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{}:{v}", serde_json::Value::String(k.clone()))?;
                }
                f.write_str("}")
            }
        }
    }
}

/// A recursive-descent reader over JSON text.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn error(&self, what: &str) -> String {
        format!("{what} at byte {}", self.at)
    }

    fn skip_space(&mut self) {
        while self
            .bytes
            .get(self.at)
            .is_some_and(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
        {
            self.at += 1;
        }
    }

    fn eat(&mut self, word: &str) -> bool {
        if self.bytes[self.at..].starts_with(word.as_bytes()) {
            self.at += word.len();
            true
        } else {
            false
        }
    }

    fn value(&mut self) -> Result<Json, String> {
        match self.bytes.get(self.at) {
            None => Err(self.error("unexpected end")),
            Some(b'{') => self.object(),
            Some(b'[') => self.array(),
            Some(b'"') => self.string().map(Json::String),
            Some(_) if self.eat("true") => Ok(Json::Bool(true)),
            Some(_) if self.eat("false") => Ok(Json::Bool(false)),
            Some(_) if self.eat("null") => Ok(Json::Null),
            Some(_) if self.eat("Infinity") => Ok(Json::Number("Infinity".into())),
            Some(_) if self.eat("-Infinity") => Ok(Json::Number("-Infinity".into())),
            Some(_) if self.eat("NaN") => Ok(Json::Number("NaN".into())),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(_) => Err(self.error("unexpected character")),
        }
    }

    fn object(&mut self) -> Result<Json, String> {
        self.at += 1;
        let mut members = Vec::new();
        self.skip_space();
        if self.eat("}") {
            return Ok(Json::Object(members));
        }
        loop {
            self.skip_space();
            if self.bytes.get(self.at) != Some(&b'"') {
                return Err(self.error("expected a member name"));
            }
            let name = self.string()?;
            self.skip_space();
            if !self.eat(":") {
                return Err(self.error("expected ':'"));
            }
            self.skip_space();
            members.push((name, self.value()?));
            self.skip_space();
            if self.eat("}") {
                return Ok(Json::Object(members));
            }
            if !self.eat(",") {
                return Err(self.error("expected ',' or '}'"));
            }
        }
    }

    fn array(&mut self) -> Result<Json, String> {
        self.at += 1;
        let mut items = Vec::new();
        self.skip_space();
        if self.eat("]") {
            return Ok(Json::Array(items));
        }
        loop {
            self.skip_space();
            items.push(self.value()?);
            self.skip_space();
            if self.eat("]") {
                return Ok(Json::Array(items));
            }
            if !self.eat(",") {
                return Err(self.error("expected ',' or ']'"));
            }
        }
    }

    fn number(&mut self) -> Result<Json, String> {
        let start = self.at;
        while self
            .bytes
            .get(self.at)
            .is_some_and(|b| matches!(b, b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9'))
        {
            self.at += 1;
        }
        let literal =
            std::str::from_utf8(&self.bytes[start..self.at]).map_err(|_| self.error("a number"))?;
        if literal.parse::<f64>().is_err() {
            return Err(self.error("a malformed number"));
        }
        Ok(Json::Number(canonical_number(literal)))
    }

    /// A string, its escapes decoded (a surrogate pair to its character, a lone surrogate to
    /// U+FFFD: the oracle already writes those as U+FFFD, README item 5).
    fn string(&mut self) -> Result<String, String> {
        self.at += 1;
        let mut out = String::new();
        loop {
            let rest = &self.bytes[self.at..];
            let plain = rest
                .iter()
                .position(|&b| b == b'"' || b == b'\\')
                .ok_or_else(|| self.error("an unterminated string"))?;
            out.push_str(
                std::str::from_utf8(&rest[..plain]).map_err(|_| self.error("invalid UTF-8"))?,
            );
            self.at += plain;
            if self.eat("\"") {
                return Ok(out);
            }
            self.at += 1;
            let escape = *self
                .bytes
                .get(self.at)
                .ok_or_else(|| self.error("an unterminated escape"))?;
            self.at += 1;
            match escape {
                b'"' => out.push('"'),
                b'\\' => out.push('\\'),
                b'/' => out.push('/'),
                b'b' => out.push('\u{8}'),
                b'f' => out.push('\u{c}'),
                b'n' => out.push('\n'),
                b'r' => out.push('\r'),
                b't' => out.push('\t'),
                b'u' => {
                    let high = self.hex4()?;
                    let c = if (0xd800..0xdc00).contains(&high) && self.eat("\\u") {
                        let low = self.hex4()?;
                        if (0xdc00..0xe000).contains(&low) {
                            char::from_u32(0x10000 + ((high - 0xd800) << 10) + (low - 0xdc00))
                        } else {
                            out.push('\u{fffd}');
                            char::from_u32(low)
                        }
                    } else {
                        char::from_u32(high)
                    };
                    out.push(c.unwrap_or('\u{fffd}'));
                }
                _ => return Err(self.error("an unknown escape")),
            }
        }
    }

    fn hex4(&mut self) -> Result<u32, String> {
        let digits = self
            .bytes
            .get(self.at..self.at + 4)
            .and_then(|d| std::str::from_utf8(d).ok())
            .and_then(|d| u32::from_str_radix(d, 16).ok())
            .ok_or_else(|| self.error("a bad \\u escape"))?;
        self.at += 4;
        Ok(digits)
    }
}

/// Builds a [`Json`] from a serializable value (serde's data model, no text in between).
struct Builder;

/// Why a value could not be built (a map key that is not a string).
#[derive(Debug)]
pub struct BuildError(String);

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BuildError {}

impl ser::Error for BuildError {
    fn custom<T: fmt::Display>(message: T) -> Self {
        Self(message.to_string())
    }
}

/// A sequence or map under construction.
struct Collect {
    items: Vec<Json>,
    members: Vec<(String, Json)>,
    key: Option<String>,
}

impl Collect {
    fn new() -> Self {
        Self {
            items: Vec::new(),
            members: Vec::new(),
            key: None,
        }
    }
}

impl ser::Serializer for Builder {
    type Ok = Json;
    type Error = BuildError;
    type SerializeSeq = Collect;
    type SerializeTuple = Collect;
    type SerializeTupleStruct = Collect;
    type SerializeTupleVariant = Collect;
    type SerializeMap = Collect;
    type SerializeStruct = Collect;
    type SerializeStructVariant = Collect;

    fn serialize_bool(self, v: bool) -> Result<Json, BuildError> {
        Ok(Json::Bool(v))
    }
    fn serialize_i8(self, v: i8) -> Result<Json, BuildError> {
        Ok(Json::int(v.into()))
    }
    fn serialize_i16(self, v: i16) -> Result<Json, BuildError> {
        Ok(Json::int(v.into()))
    }
    fn serialize_i32(self, v: i32) -> Result<Json, BuildError> {
        Ok(Json::int(v.into()))
    }
    fn serialize_i64(self, v: i64) -> Result<Json, BuildError> {
        Ok(Json::int(v))
    }
    fn serialize_u8(self, v: u8) -> Result<Json, BuildError> {
        Ok(Json::Number(v.to_string()))
    }
    fn serialize_u16(self, v: u16) -> Result<Json, BuildError> {
        Ok(Json::Number(v.to_string()))
    }
    fn serialize_u32(self, v: u32) -> Result<Json, BuildError> {
        Ok(Json::Number(v.to_string()))
    }
    fn serialize_u64(self, v: u64) -> Result<Json, BuildError> {
        Ok(Json::Number(v.to_string()))
    }
    fn serialize_f32(self, v: f32) -> Result<Json, BuildError> {
        Ok(Json::Number(double_text(v.into())))
    }
    fn serialize_f64(self, v: f64) -> Result<Json, BuildError> {
        Ok(Json::Number(double_text(v)))
    }
    fn serialize_char(self, v: char) -> Result<Json, BuildError> {
        Ok(Json::String(v.to_string()))
    }
    fn serialize_str(self, v: &str) -> Result<Json, BuildError> {
        Ok(Json::String(v.to_string()))
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<Json, BuildError> {
        Ok(Json::Array(
            v.iter().map(|b| Json::int((*b).into())).collect(),
        ))
    }
    fn serialize_none(self) -> Result<Json, BuildError> {
        Ok(Json::Null)
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<Json, BuildError> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<Json, BuildError> {
        Ok(Json::Null)
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<Json, BuildError> {
        Ok(Json::Null)
    }
    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
    ) -> Result<Json, BuildError> {
        Ok(Json::String(variant.into()))
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        name: &'static str,
        value: &T,
    ) -> Result<Json, BuildError> {
        match value.serialize(Self)? {
            // A Java double the contract prints as a string (a non-finite one).
            Json::String(text) if name == engine::json::JAVA_DOUBLE => Ok(Json::Number(text)),
            other => Ok(other),
        }
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<Json, BuildError> {
        Ok(Json::Object(vec![(variant.into(), value.serialize(Self)?)]))
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Collect, BuildError> {
        Ok(Collect::new())
    }
    fn serialize_tuple(self, _: usize) -> Result<Collect, BuildError> {
        Ok(Collect::new())
    }
    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Collect, BuildError> {
        Ok(Collect::new())
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Collect, BuildError> {
        Ok(Collect::new())
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Collect, BuildError> {
        Ok(Collect::new())
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Collect, BuildError> {
        Ok(Collect::new())
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Collect, BuildError> {
        Ok(Collect::new())
    }
}

impl ser::SerializeSeq for Collect {
    type Ok = Json;
    type Error = BuildError;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), BuildError> {
        self.items.push(value.serialize(Builder)?);
        Ok(())
    }
    fn end(self) -> Result<Json, BuildError> {
        Ok(Json::Array(self.items))
    }
}

impl ser::SerializeTuple for Collect {
    type Ok = Json;
    type Error = BuildError;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), BuildError> {
        ser::SerializeSeq::serialize_element(self, value)
    }
    fn end(self) -> Result<Json, BuildError> {
        ser::SerializeSeq::end(self)
    }
}

impl ser::SerializeTupleStruct for Collect {
    type Ok = Json;
    type Error = BuildError;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), BuildError> {
        ser::SerializeSeq::serialize_element(self, value)
    }
    fn end(self) -> Result<Json, BuildError> {
        ser::SerializeSeq::end(self)
    }
}

impl ser::SerializeTupleVariant for Collect {
    type Ok = Json;
    type Error = BuildError;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), BuildError> {
        ser::SerializeSeq::serialize_element(self, value)
    }
    fn end(self) -> Result<Json, BuildError> {
        ser::SerializeSeq::end(self)
    }
}

impl ser::SerializeMap for Collect {
    type Ok = Json;
    type Error = BuildError;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), BuildError> {
        match key.serialize(Builder)? {
            Json::String(k) => self.key = Some(k),
            // serde_json writes integer keys as their text.
            Json::Number(n) => self.key = Some(n),
            other => {
                return Err(BuildError(format!(
                    "a map key that is not a string: {other}"
                )))
            }
        }
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), BuildError> {
        let key = self
            .key
            .take()
            .ok_or_else(|| BuildError("a map value without its key".into()))?;
        self.members.push((key, value.serialize(Builder)?));
        Ok(())
    }
    fn end(self) -> Result<Json, BuildError> {
        Ok(Json::Object(self.members))
    }
}

impl ser::SerializeStruct for Collect {
    type Ok = Json;
    type Error = BuildError;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        name: &'static str,
        value: &T,
    ) -> Result<(), BuildError> {
        self.members.push((name.into(), value.serialize(Builder)?));
        Ok(())
    }
    fn end(self) -> Result<Json, BuildError> {
        Ok(Json::Object(self.members))
    }
}

impl ser::SerializeStructVariant for Collect {
    type Ok = Json;
    type Error = BuildError;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        name: &'static str,
        value: &T,
    ) -> Result<(), BuildError> {
        ser::SerializeStruct::serialize_field(self, name, value)
    }
    fn end(self) -> Result<Json, BuildError> {
        Ok(Json::Object(self.members))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_keep_their_text_as_the_contract_prints_it() {
        let java = Json::parse(r#"{"a":1.0E10,"b":-0.0,"c":0.0,"d":5,"e":Infinity,"f":"Infinity","g":2.0E23,"h":-Infinity,"i":NaN}"#)
            .unwrap();
        let number = |name: &str| java.get(name).cloned();
        assert_eq!(number("a"), Some(Json::Number("10000000000.0".into())));
        assert_eq!(number("b"), Some(Json::Number("-0.0".into())));
        assert_ne!(number("b"), number("c"), "-0.0 is not 0.0");
        assert_eq!(number("d"), Some(Json::int(5)));
        assert_eq!(number("e"), Some(Json::Number("Infinity".into())));
        assert_eq!(
            number("f"),
            Some(Json::String("Infinity".into())),
            "a string stays one"
        );
        assert_eq!(number("g"), Some(Json::Number("2e+23".into())));
        assert_eq!(number("h"), Some(Json::Number("-Infinity".into())));
        assert_eq!(number("i"), Some(Json::Number("NaN".into())));
        // The same values built from Rust: the same texts.
        assert_eq!(Json::of(&1e10), Json::Number("10000000000.0".into()));
        assert_eq!(Json::of(&-0.0f64), Json::Number("-0.0".into()));
        assert_eq!(Json::of(&2e23), Json::Number("2e+23".into()));
        assert_eq!(Json::of(&5i64), Json::int(5));
        assert_ne!(
            Json::of(&5.0f64),
            Json::int(5),
            "a double is not an integer"
        );
    }

    #[test]
    fn text_is_read_with_member_order_escapes_and_depth() {
        let value =
            Json::parse(r#" {"z":[1,{"y":"\u00e9\ud83d\ude00\n"}],"a":null,"b":true} "#).unwrap();
        let Json::Object(members) = &value else {
            panic!("{value}")
        };
        let names: Vec<&str> = members.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(names, ["z", "a", "b"]);
        assert_eq!(
            value.get("z"),
            Some(&Json::Array(vec![
                Json::int(1),
                Json::Object(vec![("y".into(), Json::String("é😀\n".into()))])
            ]))
        );
        let deep = format!("{}1{}", "[".repeat(1000), "]".repeat(1000));
        assert!(Json::parse(&deep).is_ok());
        for bad in ["{", "[1,]", "01x", "\"a", "{\"a\" 1}", "1 2", "tru"] {
            assert!(Json::parse(bad).is_err(), "{bad}");
        }
    }
}
