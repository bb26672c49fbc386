//! [`Properties`]: a connector or task configuration, stored compactly.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use serde::{Deserialize, Serialize};

use crate::checkpoint::ByteString;
use crate::json::{FlatMember, FlatValue, JsonObject, JsonValue, Natural};
use crate::sync::Arc;

/// A connector or task configuration as read: property names to values, sorted by name (byte
/// order, as a `BTreeMap<String, _>` sorts), each name once.
///
/// Java's map is nominally `Map<String, String>`, but values are not type-checked on read
/// (spec §8 item 18): numbers, booleans, nested values and `null` are kept exactly as read, and
/// come back as [`PropertyValue::Other`].
///
/// Stored in one shared allocation whatever the number of properties: a small header, the end
/// position of every name and value, then the names and string values laid end to end (values
/// of other types, rare in practice, are kept beside as [`JsonValue`]s). A config topic holds
/// many superseded configurations and a checkpoint every live one, so this keeps replay, memory
/// and restores cheap; clones are a reference count. Build one from a [`JsonObject`] or from
/// `(name, value)` pairs.
#[derive(Clone, PartialEq, Eq)]
pub struct Properties {
    /// `width` (one byte: 4, or 8 when a number needs it), the property count and then `2 *
    /// count` ascending end positions in the text (each `width` bytes, little-endian), then the
    /// text: name 0, value 0 (empty when not a string), name 1, value 1, ..., valid UTF-8.
    bytes: Arc<[u8]>,
    /// The values that are not strings, by property index, ascending; never a `String`. `None`
    /// when there are none.
    others: Option<Arc<[(usize, JsonValue)]>>,
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
        Self::build(0, "", &[], Vec::new())
    }
}

impl Properties {
    /// No properties.
    pub fn new() -> Self {
        Self::default()
    }

    /// How many properties there are.
    pub fn len(&self) -> usize {
        self.number(0)
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
        (0..self.len()).map(|i| (self.name(i), self.value(i)))
    }

    /// The properties as a map of owned values.
    pub fn to_object(&self) -> JsonObject {
        self.iter()
            .map(|(name, value)| (name.into(), value.to_json_value()))
            .collect()
    }

    /// Lays out `count` properties: `text` with its `ends`, and the non-string values.
    fn build(count: usize, text: &str, ends: &[usize], others: Vec<(usize, JsonValue)>) -> Self {
        let width = Self::width_for(count, text.len());
        let mut bytes = Vec::with_capacity(1 + width * (1 + ends.len()) + text.len());
        bytes.push(width as u8);
        for number in core::iter::once(count).chain(ends.iter().copied()) {
            bytes.extend_from_slice(&(number as u64).to_le_bytes()[..width]);
        }
        bytes.extend_from_slice(text.as_bytes());
        Self {
            bytes: bytes.into(),
            others: (!others.is_empty()).then(|| others.into()),
        }
    }

    // The layout accessors below index without fallbacks: every `Properties` is built by
    // `from_pairs` or checked by `validate` when a checkpoint is decoded, so a header, an end
    // position or a span out of range, or text that is not UTF-8, is a bug in this module, and
    // panics rather than reading as empty.

    fn width(&self) -> usize {
        usize::from(self.bytes[0])
    }

    /// Header number `i`: 0 is the count, then the end positions. Only called in range.
    fn number(&self, i: usize) -> usize {
        let width = self.width();
        let at = 1 + i * width;
        match self.bytes[at..at + width] {
            [a, b, c, d] => u32::from_le_bytes([a, b, c, d]) as usize,
            [a, b, c, d, e, f, g, h] => {
                usize::try_from(u64::from_le_bytes([a, b, c, d, e, f, g, h]))
                    .expect("a validated end position fits in memory")
            }
            _ => unreachable!("a validated width is 4 or 8"),
        }
    }

    fn text(&self) -> &[u8] {
        let start = 1 + self.width() * (1 + 2 * self.len());
        &self.bytes[start..]
    }

    /// The text between the end of slot `slot - 1` (0 for the first slot) and the end of
    /// `slot`.
    fn span(&self, slot: usize) -> &str {
        let start = slot.checked_sub(1).map_or(0, |prev| self.number(1 + prev));
        let end = self.number(1 + slot);
        core::str::from_utf8(&self.text()[start..end])
            .expect("validated text is UTF-8 at every end")
    }

    fn name(&self, index: usize) -> &str {
        self.span(2 * index)
    }

    fn value(&self, index: usize) -> PropertyValue<'_> {
        let others = self.others.as_deref().unwrap_or_default();
        match others.binary_search_by_key(&index, |(i, _)| *i) {
            Ok(at) => PropertyValue::Other(&others[at].1),
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

    /// Checks what decoded (untrusted) bytes must satisfy for every method to be correct and
    /// for equality to be equality of maps: the layout [`build`](Self::build) writes (the
    /// narrowest width, every position ascending on a character boundary of valid UTF-8 text
    /// and the last at its end), names strictly ascending, and `others` indices strictly
    /// ascending and in range, each with an empty text value and never a string.
    fn validate(&self) -> Result<(), &'static str> {
        // The width and the count first, so that the accessors below stay in range.
        let width = usize::from(
            *self
                .bytes
                .first()
                .ok_or("the property layout is malformed")?,
        );
        if !matches!(width, 4 | 8) || self.bytes.len() < 1 + width {
            return Err("the property layout is malformed");
        }
        let count = self.len();
        let header = count
            .checked_mul(2)
            .and_then(|n| n.checked_add(1))
            .and_then(|n| n.checked_mul(width))
            .and_then(|n| n.checked_add(1));
        if !matches!(width, 4 | 8) || header.is_none_or(|h| h > self.bytes.len()) {
            return Err("the property layout is malformed");
        }
        let text = core::str::from_utf8(self.text()).map_err(|_| "property text is not UTF-8")?;
        let narrow = u32::try_from(count).is_ok() && u32::try_from(text.len()).is_ok();
        if width == 8 && narrow {
            return Err("property positions are wider than needed");
        }
        let (mut start, mut previous_name) = (0, None);
        for index in 0..count {
            let (name_end, value_end) = (self.number(1 + 2 * index), self.number(2 + 2 * index));
            if start > name_end
                || name_end > value_end
                || value_end > text.len()
                || !text.is_char_boundary(name_end)
                || !text.is_char_boundary(value_end)
            {
                return Err("property positions are out of order or out of the text");
            }
            // Byte order of UTF-8 is the order of `str`.
            let name = &text.as_bytes()[start..name_end];
            if previous_name.is_some_and(|previous| previous >= name) {
                return Err("property names are not strictly ascending");
            }
            previous_name = Some(name);
            start = value_end;
        }
        if start != text.len() {
            return Err("property text has unused bytes");
        }
        if let Some(others) = &self.others {
            if others.is_empty() {
                return Err("non-string property values are malformed");
            }
            let mut last = None;
            for (index, value) in others.iter() {
                if last.is_some_and(|l| l >= *index)
                    || *index >= count
                    || !self.span(2 * index + 1).is_empty()
                    || matches!(value, JsonValue::String(_))
                {
                    return Err("non-string property values are malformed");
                }
                last = Some(*index);
            }
        }
        Ok(())
    }
}

impl Properties {
    /// Lays out the members of a `properties` object as read (borrowing from the record): once
    /// sorted, the header from their lengths, then the text, straight into the one buffer. A
    /// repeated name keeps its last value.
    pub(crate) fn from_flat(mut members: Vec<FlatMember<'_>>) -> Self {
        // Stable, so equal names stay in document order and the last of a run is the one
        // that counts; the name's 16-byte key decides most comparisons.
        members.sort_by(|a, b| a.order.cmp(&b.order).then_with(|| a.name.cmp(&b.name)));
        members.dedup_by(|later, kept| {
            let same = later.order == kept.order && later.name == kept.name;
            if same {
                core::mem::swap(later, kept);
            }
            same
        });
        let value_len = |value: &FlatValue<'_>| match value {
            FlatValue::String(s) => s.len(),
            FlatValue::Other(_) => 0,
        };
        let size: usize = members
            .iter()
            .map(|m| m.name.len() + value_len(&m.value))
            .sum();
        let count = members.len();
        let width = Self::width_for(count, size);
        let header = 1 + width * (1 + 2 * count);
        // Written in place: a zeroed shared buffer (one allocation; a `Vec` would be copied
        // into the `Arc` after), filled through a cursor.
        let mut bytes: Arc<[u8]> = core::iter::repeat_n(0, header + size).collect();
        let mut others = Vec::new();
        if let Some(buffer) = Arc::get_mut(&mut bytes) {
            let (head, mut text) = buffer.split_at_mut(header);
            let (first, numbers) = head.split_at_mut(1);
            first[0] = width as u8;
            let mut numbers = numbers.chunks_exact_mut(width);
            let mut put = |number: usize| {
                if let Some(slot) = numbers.next() {
                    slot.copy_from_slice(&(number as u64).to_le_bytes()[..width]);
                }
            };
            put(count);
            let mut end = 0;
            for member in &members {
                end += member.name.len();
                put(end);
                end += value_len(&member.value);
                put(end);
            }
            let mut write = |part: &str| {
                let (slot, rest) = core::mem::take(&mut text).split_at_mut(part.len());
                slot.copy_from_slice(part.as_bytes());
                text = rest;
            };
            // By reference: moving each member out costs more than the copy of its text.
            for (index, member) in members.iter_mut().enumerate() {
                write(&member.name);
                match &mut member.value {
                    FlatValue::String(s) => write(s),
                    // Rare (numbers, booleans, nested values).
                    FlatValue::Other(value) => {
                        others.push((index, core::mem::replace(value, JsonValue::Null)));
                    }
                }
            }
        }
        Self {
            bytes,
            others: (!others.is_empty()).then(|| others.into()),
        }
    }

    /// The width of the header's numbers: 4 bytes, or 8 when a count or a position needs it.
    fn width_for(count: usize, text_len: usize) -> usize {
        let wide = u32::try_from(count).is_err() || u32::try_from(text_len).is_err();
        if wide {
            8
        } else {
            4
        }
    }
}

impl From<JsonObject> for Properties {
    /// Moves a parsed map into the compact form.
    fn from(map: JsonObject) -> Self {
        let size: usize = map
            .iter()
            .map(|(name, value)| name.len() + value.as_str().map_or(0, str::len))
            .sum();
        let count = map.len();
        let mut text = String::with_capacity(size);
        let mut ends = Vec::with_capacity(2 * count);
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
        Self::build(count, &text, &ends, others)
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

/// The serde form (checkpoints): the layout as one byte string, then the other values, so
/// that decoding is one copy, not a rebuild of every property.
#[derive(Serialize)]
struct WireRef<'a> {
    layout: ByteString<&'a [u8]>,
    others: &'a [(usize, JsonValue)],
}

#[derive(Deserialize)]
struct Wire {
    layout: ByteString<Arc<[u8]>>,
    others: Vec<(usize, JsonValue)>,
}

impl Serialize for Properties {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        WireRef {
            layout: ByteString(&self.bytes),
            others: self.others.as_deref().unwrap_or_default(),
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Properties {
    /// Refuses anything [`Properties`] could not have written (see `validate`).
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let wire = Wire::deserialize(deserializer)?;
        let properties = Self {
            bytes: wire.layout.0,
            others: (!wire.others.is_empty()).then(|| wire.others.into()),
        };
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

    #[test]
    fn members_as_read_lay_out_as_the_parsed_map() {
        let texts: [&[u8]; 4] = [
            br#"{"tasks.max": "2", "b": 5, "a": "", "\u00e9": null, "a": "last", "list": [true, {"x": "y"}]}"#,
            br#"{}"#,
            br#"{"only": "one"}"#,
            br#"{"z": "1", "y": "2\n", "x": 3.5, "z": {"nested": ["a"]}}"#,
        ];
        for text in texts {
            let mut document = b"{\"properties\": ".to_vec();
            document.extend_from_slice(text);
            document.push(b'}');
            let Ok(crate::json::PropertiesRead::Members(members)) =
                crate::json::parse_properties(&document)
            else {
                panic!("no properties");
            };
            let Ok(Some(JsonValue::Object(map))) = crate::json::parse(text) else {
                panic!("not an object");
            };
            let laid_out = Properties::from_flat(members);
            assert_eq!(laid_out, Properties::from(map.clone()));
            assert_eq!(laid_out.to_object(), map);
            assert_eq!(laid_out.validate(), Ok(()));
        }
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

    /// Decodes a hand-made layout: `width`, `count`, `ends` and `text`.
    fn forged(
        width: u8,
        count: u64,
        ends: &[u64],
        text: &[u8],
        others: &[(usize, JsonValue)],
    ) -> Result<Properties, bincode::error::DecodeError> {
        let mut layout = vec![width];
        for n in core::iter::once(count).chain(ends.iter().copied()) {
            layout.extend_from_slice(&n.to_le_bytes()[..usize::from(width).min(8)]);
        }
        layout.extend_from_slice(text);
        let wire = WireRef {
            layout: ByteString(&layout),
            others,
        };
        let bytes = bincode::serde::encode_to_vec(&wire, bincode::config::standard()).unwrap();
        bincode::serde::decode_from_slice(&bytes, bincode::config::standard()).map(|(p, _)| p)
    }

    #[test]
    fn forged_checkpoint_forms_are_refused() {
        let expected: Properties = [("a", JsonValue::String("b".into()))].into_iter().collect();
        assert_eq!(forged(4, 1, &[1, 2], b"ab", &[]).unwrap(), expected);
        let null = (0, JsonValue::Null);
        assert_eq!(
            forged(4, 1, &[1, 1], b"a", core::slice::from_ref(&null)).unwrap(),
            [("a", JsonValue::Null)].into_iter().collect()
        );
        let refused = [
            forged(3, 1, &[1, 2], b"ab", &[]),
            forged(8, 1, &[1, 2], b"ab", &[]),
            forged(4, 2, &[1, 2], b"ab", &[]),
            forged(4, u64::from(u32::MAX), &[], b"", &[]),
            forged(4, 1, &[2, 1], b"ab", &[]),
            forged(4, 1, &[1, 3], b"ab", &[]),
            forged(4, 1, &[1, 2], b"abc", &[]),
            forged(4, 1, &[1, 2], "é".as_bytes(), &[]),
            forged(4, 1, &[1, 2], b"a\xff", &[]),
            forged(4, 2, &[1, 2, 3, 4], b"bbaa", &[]),
            forged(4, 2, &[1, 2, 3, 4], b"aaaa", &[]),
            forged(4, 1, &[1, 1], b"a", &[(1, JsonValue::Null)]),
            forged(4, 1, &[1, 2], b"ab", core::slice::from_ref(&null)),
            forged(4, 1, &[1, 1], b"a", &[(0, JsonValue::String("s".into()))]),
            forged(4, 2, &[1, 1, 2, 2], b"ab", &[(1, JsonValue::Null), null]),
        ];
        for (i, result) in refused.into_iter().enumerate() {
            assert!(result.is_err(), "case {i} was accepted");
        }
        let empty = bincode::serde::encode_to_vec(
            WireRef {
                layout: ByteString(&[]),
                others: &[],
            },
            bincode::config::standard(),
        )
        .unwrap();
        let decoded: Result<(Properties, usize), _> =
            bincode::serde::decode_from_slice(&empty, bincode::config::standard());
        assert!(decoded.is_err());
    }
}
