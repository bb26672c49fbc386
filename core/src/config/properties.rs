//! [`Properties`]: a connector or task configuration, stored compactly.

use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use serde::{Deserialize, Serialize};

use crate::json::{JsonObject, JsonValue, Natural};
use crate::sync::Arc;

/// A connector or task configuration as read: property names to values, sorted by name (byte
/// order, as a `BTreeMap<String, _>` sorts), each name once.
///
/// Java's map is nominally `Map<String, String>`, but values are not type-checked on read
/// (spec §8 item 18): numbers, booleans, nested values and `null` are kept exactly as read, and
/// come back as [`PropertyValue::Other`].
///
/// Stored in two allocations whatever the number of properties: the names and string values
/// laid end to end in one text, and their end positions in one array (values of other types,
/// rare in practice, are kept beside as [`JsonValue`]s). A config topic holds many superseded
/// configurations and a checkpoint every live one, so this keeps replay, memory and restores
/// cheap. Clones share the storage. Build one from a [`JsonObject`] or from `(name, value)`
/// pairs.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Properties(Arc<Layout>);

/// The storage of [`Properties`], shared by its clones.
#[derive(Default, PartialEq, Eq)]
struct Layout {
    /// Name 0, value 0 (empty when not a string), name 1, value 1, ...
    text: Box<str>,
    /// The end of each name and value in `text`: `2 * len()` ascending positions.
    ends: Box<[usize]>,
    /// The values that are not strings, by property index, ascending. Never a `String`.
    others: Box<[(usize, JsonValue)]>,
}

/// One value of [`Properties`], borrowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PropertyValue<'a> {
    /// A JSON string (the usual case).
    String(&'a str),
    /// Any other JSON value: a number, boolean, `null`, list or map.
    Other(&'a JsonValue),
}

impl<'a> PropertyValue<'a> {
    /// The string, if the value is one.
    pub fn as_str(self) -> Option<&'a str> {
        match self {
            Self::String(s) => Some(s),
            Self::Other(_) => None,
        }
    }

    /// The value as an owned [`JsonValue`].
    pub fn to_json_value(self) -> JsonValue {
        match self {
            Self::String(s) => JsonValue::String(s.into()),
            Self::Other(v) => v.clone(),
        }
    }
}

/// Natural JSON: a string, or the value as [`Natural`] writes it.
impl Serialize for PropertyValue<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::String(s) => serializer.serialize_str(s),
            Self::Other(v) => Natural(v).serialize(serializer),
        }
    }
}

impl Properties {
    /// No properties.
    pub fn new() -> Self {
        Self::default()
    }

    /// How many properties there are.
    pub fn len(&self) -> usize {
        self.0.ends.len() / 2
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.ends.is_empty()
    }

    /// The value of property `name` (a binary search).
    pub fn get(&self, name: &str) -> Option<PropertyValue<'_>> {
        let index = self.index_of(name)?;
        Some(self.value(index))
    }

    /// The value of property `name` when it is a string.
    pub fn get_str(&self, name: &str) -> Option<&str> {
        self.get(name).and_then(PropertyValue::as_str)
    }

    /// Whether property `name` is present.
    pub fn contains_key(&self, name: &str) -> bool {
        self.index_of(name).is_some()
    }

    /// The properties in name order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&str, PropertyValue<'_>)> + '_ {
        (0..self.len()).map(|i| (self.name(i), self.value(i)))
    }

    /// The properties as a map of owned values.
    pub fn to_object(&self) -> JsonObject {
        self.iter()
            .map(|(name, value)| (name.into(), value.to_json_value()))
            .collect()
    }

    /// The text between `ends[slot - 1]` (0 for the first slot) and `ends[slot]`.
    fn span(&self, slot: usize) -> &str {
        let start = slot.checked_sub(1).map_or(0, |prev| self.0.ends[prev]);
        &self.0.text[start..self.0.ends[slot]]
    }

    fn name(&self, index: usize) -> &str {
        self.span(2 * index)
    }

    fn value(&self, index: usize) -> PropertyValue<'_> {
        match self.0.others.binary_search_by_key(&index, |(i, _)| *i) {
            Ok(at) => PropertyValue::Other(&self.0.others[at].1),
            Err(_) => PropertyValue::String(self.span(2 * index + 1)),
        }
    }

    fn index_of(&self, name: &str) -> Option<usize> {
        let (mut low, mut high) = (0, self.len());
        while low < high {
            let mid = low + (high - low) / 2;
            match self.name(mid).cmp(name) {
                core::cmp::Ordering::Less => low = mid + 1,
                core::cmp::Ordering::Greater => high = mid,
                core::cmp::Ordering::Equal => return Some(mid),
            }
        }
        None
    }

    /// Checks what a decoded (untrusted) value must satisfy for every method to be correct and
    /// panic-free, and for equality to be equality of maps: ascending positions inside the text
    /// on character boundaries, names strictly ascending, `others` indices strictly ascending
    /// and in range, with an empty text value and never a string.
    fn validate(&self) -> Result<(), &'static str> {
        if self.0.ends.len() % 2 != 0 {
            return Err("property positions do not pair up");
        }
        let mut previous = 0;
        for &end in self.0.ends.iter() {
            if end < previous || end > self.0.text.len() || !self.0.text.is_char_boundary(end) {
                return Err("property positions are out of order or out of the text");
            }
            previous = end;
        }
        if previous != self.0.text.len() {
            return Err("property text has unused bytes");
        }
        if (1..self.len()).any(|i| self.name(i - 1) >= self.name(i)) {
            return Err("property names are not strictly ascending");
        }
        let mut last = None;
        for (index, value) in self.0.others.iter() {
            if last.is_some_and(|l| l >= *index)
                || *index >= self.len()
                || !self.span(2 * index + 1).is_empty()
                || matches!(value, JsonValue::String(_))
            {
                return Err("non-string property values are malformed");
            }
            last = Some(*index);
        }
        Ok(())
    }
}

impl From<JsonObject> for Properties {
    /// Moves a parsed map into the compact form.
    fn from(map: JsonObject) -> Self {
        let size: usize = map
            .iter()
            .map(|(name, value)| name.len() + value.as_str().map_or(0, str::len))
            .sum();
        let mut text = String::with_capacity(size);
        let mut ends = Vec::with_capacity(2 * map.len());
        let mut others = Vec::new();
        for (index, (name, value)) in map.into_iter().enumerate() {
            text.push_str(&name);
            ends.push(text.len());
            match value {
                JsonValue::String(s) => text.push_str(&s),
                other => others.push((index, other)),
            }
            ends.push(text.len());
        }
        Self(Arc::new(Layout {
            text: text.into_boxed_str(),
            ends: ends.into_boxed_slice(),
            others: others.into_boxed_slice(),
        }))
    }
}

impl<N: Into<String>> FromIterator<(N, JsonValue)> for Properties {
    /// Collects `(name, value)` pairs; a repeated name keeps its last value, as a map would.
    fn from_iter<I: IntoIterator<Item = (N, JsonValue)>>(pairs: I) -> Self {
        pairs
            .into_iter()
            .map(|(name, value)| (name.into(), value))
            .collect::<JsonObject>()
            .into()
    }
}

impl fmt::Debug for Properties {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

/// The serde form (checkpoints): the text as it is, the positions as one byte string and the
/// other values, so that decoding is a copy of the text and positions, not a rebuild of every
/// property.
#[derive(Serialize)]
struct WireRef<'a> {
    text: &'a str,
    ends: Ends<&'a [usize]>,
    others: &'a [(usize, JsonValue)],
}

#[derive(Deserialize)]
struct Wire {
    text: String,
    ends: Ends<Vec<usize>>,
    others: Vec<(usize, JsonValue)>,
}

/// Positions as a byte string: their width in bytes (4, or 8 when the text is 4 GiB or more),
/// then each position little-endian.
struct Ends<T>(T);

impl Serialize for Ends<&[usize]> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let wide = self.0.iter().any(|&end| u32::try_from(end).is_err());
        let width: u8 = if wide { 8 } else { 4 };
        let mut bytes = Vec::with_capacity(1 + self.0.len() * usize::from(width));
        bytes.push(width);
        for &end in self.0 {
            if wide {
                bytes.extend_from_slice(&(end as u64).to_le_bytes());
            } else {
                bytes.extend_from_slice(&(end as u32).to_le_bytes());
            }
        }
        serializer.serialize_bytes(&bytes)
    }
}

impl<'de> Deserialize<'de> for Ends<Vec<usize>> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = Vec<usize>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("property positions as bytes")
            }
            fn visit_bytes<E: serde::de::Error>(self, bytes: &[u8]) -> Result<Vec<usize>, E> {
                let (width, positions) = bytes
                    .split_first()
                    .ok_or_else(|| E::custom("property positions without a width"))?;
                let width = usize::from(*width);
                if !matches!(width, 4 | 8) || positions.len() % width != 0 {
                    return Err(E::custom("property positions have a bad width"));
                }
                let overflow = |_| E::custom("a property position overflows");
                let mut ends = Vec::with_capacity(positions.len() / width);
                if width == 4 {
                    for chunk in positions.chunks_exact(4) {
                        let end = u32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
                        ends.push(usize::try_from(end).map_err(overflow)?);
                    }
                } else {
                    for chunk in positions.chunks_exact(8) {
                        let mut le = [0u8; 8];
                        le.copy_from_slice(chunk);
                        ends.push(usize::try_from(u64::from_le_bytes(le)).map_err(overflow)?);
                    }
                }
                Ok(ends)
            }
        }
        deserializer.deserialize_bytes(Visitor).map(Ends)
    }
}

impl Serialize for Properties {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        WireRef {
            text: &self.0.text,
            ends: Ends(&self.0.ends),
            others: &self.0.others,
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Properties {
    /// Refuses anything [`Properties`] could not have written (see `validate`).
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let wire = Wire::deserialize(deserializer)?;
        let properties = Self(Arc::new(Layout {
            text: wire.text.into_boxed_str(),
            ends: wire.ends.0.into_boxed_slice(),
            others: wire.others.into_boxed_slice(),
        }));
        properties.validate().map_err(serde::de::Error::custom)?;
        Ok(properties)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    fn sample() -> Properties {
        [
            ("tasks.max", JsonValue::String("2".into())),
            ("b", JsonValue::Long(5)),
            ("a", JsonValue::String(String::new())),
            ("é", JsonValue::Null),
            ("a", JsonValue::String("last".into())),
            ("list", JsonValue::Array(vec![JsonValue::Bool(true)])),
        ]
        .into_iter()
        .collect()
    }

    fn round_trip(p: &Properties) -> Result<Properties, bincode::error::DecodeError> {
        let bytes = bincode::serde::encode_to_vec(p, bincode::config::standard()).unwrap();
        bincode::serde::decode_from_slice(&bytes, bincode::config::standard()).map(|(v, _)| v)
    }

    #[test]
    fn behaves_like_the_map_it_was_built_from() {
        let p = sample();
        assert_eq!(p.len(), 5);
        assert!(!p.is_empty() && Properties::new().is_empty());
        let names: Vec<&str> = p.iter().map(|(n, _)| n).collect();
        assert_eq!(names, ["a", "b", "list", "tasks.max", "é"]);
        assert_eq!(p.get("a"), Some(PropertyValue::String("last")));
        assert_eq!(p.get_str("tasks.max"), Some("2"));
        assert_eq!(p.get("b"), Some(PropertyValue::Other(&JsonValue::Long(5))));
        assert_eq!(p.get_str("b"), None);
        assert_eq!(p.get("é"), Some(PropertyValue::Other(&JsonValue::Null)));
        assert_eq!(p.get("c"), None);
        assert!(p.contains_key("list") && !p.contains_key(""));
        let back: Properties = p.to_object().into();
        assert_eq!(back, p);
        assert_eq!(
            alloc::format!("{:?}", Properties::from_iter([("k", JsonValue::Long(1))])),
            r#"{"k": Other(Long(1))}"#
        );
    }

    #[test]
    fn equality_is_map_equality() {
        let one: Properties = [("x", JsonValue::String("1".into()))].into_iter().collect();
        let other: Properties = [("x", JsonValue::Long(1))].into_iter().collect();
        let empty_string: Properties = [("x", JsonValue::String(String::new()))]
            .into_iter()
            .collect();
        let null: Properties = [("x", JsonValue::Null)].into_iter().collect();
        assert_ne!(one, other);
        assert_ne!(empty_string, null);
        assert_eq!(sample(), sample().to_object().into_iter().collect());
    }

    #[test]
    fn checkpoint_form_round_trips() {
        for p in [sample(), Properties::new()] {
            assert_eq!(round_trip(&p).unwrap(), p);
        }
    }

    #[test]
    fn forged_checkpoint_forms_are_refused() {
        let forged = |text: &str, ends: Vec<usize>, others: Vec<(usize, JsonValue)>| {
            let wire = WireRef {
                text,
                ends: Ends(&ends),
                others: &others,
            };
            let bytes = bincode::serde::encode_to_vec(&wire, bincode::config::standard()).unwrap();
            bincode::serde::decode_from_slice::<Properties, _>(&bytes, bincode::config::standard())
        };
        assert!(forged("ab", vec![1, 2], vec![]).is_ok());
        let refused = [
            forged("ab", vec![1], vec![]),
            forged("ab", vec![2, 1], vec![]),
            forged("ab", vec![1, 3], vec![]),
            forged("abc", vec![1, 2], vec![]),
            forged("é", vec![1, 2], vec![]),
            forged("bbaa", vec![1, 2, 3, 4], vec![]),
            forged("aa", vec![1, 2, 2, 2], vec![]),
            forged("a", vec![1, 1], vec![(1, JsonValue::Null)]),
            forged("ab", vec![1, 2], vec![(0, JsonValue::Null)]),
            forged("a", vec![1, 1], vec![(0, JsonValue::String("s".into()))]),
            forged(
                "ab",
                vec![1, 1, 2, 2],
                vec![(1, JsonValue::Null), (0, JsonValue::Null)],
            ),
        ];
        for (i, result) in refused.into_iter().enumerate() {
            assert!(result.is_err(), "case {i} was accepted");
        }
    }

    #[test]
    fn positions_of_either_width_decode_and_bad_widths_are_refused() {
        struct Bytes<'a>(&'a [u8]);
        impl Serialize for Bytes<'_> {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_bytes(self.0)
            }
        }
        #[derive(Serialize)]
        struct Raw<'a> {
            text: &'a str,
            ends: Bytes<'a>,
            others: &'a [(usize, JsonValue)],
        }
        let decode = |ends: &[u8]| {
            let raw = Raw {
                text: "ab",
                ends: Bytes(ends),
                others: &[],
            };
            let bytes = bincode::serde::encode_to_vec(&raw, bincode::config::standard()).unwrap();
            bincode::serde::decode_from_slice::<Properties, _>(&bytes, bincode::config::standard())
                .map(|(p, _)| p)
        };
        let expected: Properties = [("a", JsonValue::String("b".into()))].into_iter().collect();
        assert_eq!(decode(&[4, 1, 0, 0, 0, 2, 0, 0, 0]).unwrap(), expected);
        let wide = [8, 1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0];
        assert_eq!(decode(&wide).unwrap(), expected);
        for bad in [
            &[][..],
            &[3, 1, 2, 3],
            &[4, 1, 0, 0, 0, 2],
            &[8, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff],
        ] {
            assert!(decode(bad).is_err(), "{bad:?} was accepted");
        }
    }
}
