//! [`Properties`]: a connector or task configuration, stored compactly, its names shared with
//! the configurations of the same names ([`Shapes`]).

mod java_layout;
mod layout;
mod shapes;
mod table;

use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;
use core::marker::PhantomData;

use serde::de::{DeserializeSeed, SeqAccess, Visitor};
use serde::ser::SerializeTuple;
use serde::{Deserialize, Serialize};
use triomphe::ThinArc;

use crate::checkpoint::ByteString;
use crate::json::{JsonObject, JsonValue, Natural, Tokens};
use crate::sync::Arc;
use layout::{Layout, Names};
pub(crate) use shapes::Shapes;
pub(crate) use table::{ConfigTable, ConfigTableRef};

/// A connector or task configuration as read: property names to values, sorted by name (byte
/// order, as a `BTreeMap<String, _>` sorts), each name once.
///
/// Java's map is nominally `Map<String, String>`, but values are not type-checked on read
/// (spec §8 item 18): numbers, booleans, nested values and `null` are kept exactly as read, and
/// come back as [`PropertyValue::Other`].
///
/// Stored in one shared allocation whatever the number of properties: the names (a layout of
/// their own, shared by reference with every configuration read with the same names in the same
/// order: the task configs of a connector, the connectors of a kind), then the end position of
/// every value and the string values laid end to end (values of other types, rare in practice,
/// are kept beside as [`JsonValue`]s). A config topic holds many superseded configurations and
/// a checkpoint every live one, so this keeps replay, memory and restores cheap; clones are a
/// reference count. Build one from a [`JsonObject`] or from `(name, value)` pairs.
#[derive(Clone)]
pub struct Properties {
    /// The header, then the values' layout (one end position per name, then the strings).
    values: ThinArc<Shared, u8>,
}

/// What a configuration's allocation holds before its values.
struct Shared {
    /// The names, sorted and unique.
    names: Names,
    /// The values that are not strings, by property index, ascending; never a `String`, and
    /// their text in the layout is empty. `None` when there are none.
    others: Option<Box<[(usize, JsonValue)]>>,
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

impl Default for Properties {
    fn default() -> Self {
        Self::from(JsonObject::new())
    }
}

impl PartialEq for Properties {
    /// Map equality: the names are sorted and unique and the values laid out canonically.
    fn eq(&self, other: &Self) -> bool {
        let (a, b) = (self.shared(), other.shared());
        (a.names.same_allocation(&b.names) || a.names == b.names)
            && self.values.slice == other.values.slice
            && a.others == b.others
    }
}

impl Eq for Properties {}

impl Properties {
    /// No properties.
    pub fn new() -> Self {
        Self::default()
    }

    /// How many properties there are.
    pub fn len(&self) -> usize {
        self.shared().names.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
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
        (0..self.len()).map(|i| (self.shared().names.name(i), self.value(i)))
    }

    /// The properties as a map of owned values.
    pub fn to_object(&self) -> JsonObject {
        self.iter()
            .map(|(name, value)| (name.into(), value.to_json_value()))
            .collect()
    }

    fn shared(&self) -> &Shared {
        &self.values.header.header
    }

    /// The address of the allocation, which clones share.
    fn address(&self) -> usize {
        self.values.ptr() as usize
    }

    /// Builds a configuration of `names` from its values' layout (one end position per name,
    /// then the strings; see [`Layout`]) and the values that are not strings.
    fn build(names: Names, values: &[u8], others: Vec<(usize, JsonValue)>) -> Self {
        let shared = Shared {
            names,
            others: (!others.is_empty()).then(|| others.into_boxed_slice()),
        };
        Self {
            values: ThinArc::from_header_and_slice(shared, values),
        }
    }

    fn value(&self, index: usize) -> PropertyValue<'_> {
        let others = self.shared().others.as_deref().unwrap_or_default();
        match others.binary_search_by_key(&index, |(i, _)| *i) {
            Ok(at) => PropertyValue::Other(&others[at].1),
            Err(_) => PropertyValue::String(
                Layout::of_values(&self.values.slice, self.len()).str_of(index),
            ),
        }
    }

    fn index_of(&self, name: &str) -> Option<usize> {
        let names = &self.shared().names;
        let (mut low, mut high) = (0, names.len());
        while low < high {
            let mid = low + (high - low) / 2;
            match names.name_bytes(mid).cmp(name.as_bytes()) {
                core::cmp::Ordering::Less => low = mid + 1,
                core::cmp::Ordering::Greater => high = mid,
                core::cmp::Ordering::Equal => return Some(mid),
            }
        }
        None
    }

    /// Whether both hold one allocation of names (the shapes at work).
    #[cfg(test)]
    pub(crate) fn shares_names_with(&self, other: &Self) -> bool {
        self.shared().names.same_allocation(&other.shared().names)
    }

    /// Whether both are one allocation.
    #[cfg(test)]
    pub(crate) fn is_same_allocation(&self, other: &Self) -> bool {
        self.address() == other.address()
    }

    /// Checks the values' layout and the other values of decoded (untrusted) bytes against
    /// `names`: one end position per name, and `others` indices strictly ascending and in
    /// range, each with an empty text and never a string.
    fn check_values(
        names: &Names,
        values: &[u8],
        others: &[(usize, JsonValue)],
    ) -> Result<(), &'static str> {
        let layout = Layout::check(values, 0, names.len(), 0)?;
        let mut last = None;
        for (index, value) in others {
            if last.is_some_and(|l| l >= *index)
                || *index >= names.len()
                || !layout.bytes_of(*index).is_empty()
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
        let names = Names::from_sorted(map.keys().map(String::as_str));
        let text_len = |value: &JsonValue| value.as_str().map_or(0, str::len);
        let size: usize = map.values().map(text_len).sum();
        let mut values = Vec::with_capacity(1 + 8 * map.len() + size);
        Layout::write_numbers(
            &mut values,
            Layout::width_for(size),
            None,
            map.values().map(text_len),
        );
        let mut others = Vec::new();
        for (index, value) in map.into_values().enumerate() {
            match value {
                JsonValue::String(s) => values.extend_from_slice(s.as_bytes()),
                other => others.push((index, other)),
            }
        }
        Self::build(names, &values, others)
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

/// The serde form (checkpoints): the names' layout, the other values, then the values' layout,
/// so that decoding copies each layout once instead of rebuilding every property.
impl Serialize for Properties {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let shared = self.shared();
        let mut wire = serializer.serialize_tuple(3)?;
        wire.serialize_element(&ByteString(shared.names.as_bytes()))?;
        wire.serialize_element(&OthersRef(shared.others.as_deref().unwrap_or_default()))?;
        wire.serialize_element(&ByteString(&self.values.slice))?;
        wire.end()
    }
}

impl<'de> Deserialize<'de> for Properties {
    /// Refuses anything [`Properties`] could not have written.
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Wire;

        impl<'de> Visitor<'de> for Wire {
            type Value = Properties;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a configuration: names, other values and values")
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Properties, A::Error> {
                let missing = || serde::de::Error::custom("the property layout is malformed");
                let names: ByteString<Arc<[u8]>> = seq.next_element()?.ok_or_else(missing)?;
                let names = Names::checked(names.0).map_err(serde::de::Error::custom)?;
                let others = decode_others(&mut seq)?.ok_or_else(missing)?;
                seq.next_element_seed(Values { names, others })?
                    .ok_or_else(missing)
            }
        }

        deserializer.deserialize_tuple(3, Wire)
    }
}

/// The other values of a configuration in their checkpoint form.
struct OthersRef<'a>(&'a [(usize, JsonValue)]);

impl Serialize for OthersRef<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.iter().map(|(index, value)| (index, Tokens(value))))
    }
}

/// Decodes the other values of a configuration from their checkpoint form.
fn decode_others<'de, A: SeqAccess<'de>>(
    seq: &mut A,
) -> Result<Option<Vec<(usize, JsonValue)>>, A::Error> {
    let others: Option<Vec<(usize, Tokens<JsonValue>)>> = seq.next_element()?;
    Ok(others.map(|others| {
        others
            .into_iter()
            .map(|(index, value)| (index, value.0))
            .collect()
    }))
}

/// Decodes the values' layout straight into the configuration's allocation, once the names and
/// the other values before it are known and checked.
struct Values {
    names: Names,
    others: Vec<(usize, JsonValue)>,
}

impl<'de> DeserializeSeed<'de> for Values {
    type Value = Properties;

    fn deserialize<D: serde::Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> Result<Properties, D::Error> {
        struct Bytes(Values, PhantomData<()>);

        impl Visitor<'_> for Bytes {
            type Value = Properties;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a byte string")
            }

            fn visit_bytes<E: serde::de::Error>(self, bytes: &[u8]) -> Result<Properties, E> {
                let Values { names, others } = self.0;
                Properties::check_values(&names, bytes, &others).map_err(E::custom)?;
                Ok(Properties::build(names, bytes, others))
            }
        }

        deserializer.deserialize_bytes(Bytes(self, PhantomData))
    }
}

#[cfg(test)]
mod tests;
