//! [`Value`]: a parsed JSON value that borrows from the input, for the topics' own decoders.
//!
//! [`parse`](super::parse) builds a [`JsonValue`] with an owned `String` per string and a
//! sorted map per object. The state machines only look up a few members of most records (a
//! connector's `properties`, a status's `state`), and copy what they keep into their own
//! layout ([`Properties`](crate::config::Properties), a status), so their decoders read a
//! [`Value`] instead: a string without escapes is a slice of the record, and an object is its
//! members in document order. The accepted inputs and the values are [`parse`](super::parse)'s
//! (the same reader builds both): duplicate member names are all kept here, and a lookup
//! returns the last, as Jackson's tree does.

use alloc::borrow::Cow;
use alloc::string::String;
use alloc::vec::{self, Vec};
use arrayvec::ArrayVec;

use serde::ser::{Serialize, SerializeMap, Serializer};

use super::tokens::{push_value, scalar_token, Token};
use super::{JsonObject, JsonValue};

/// An object's members in document order, repeated names included.
pub(crate) type Members<'a> = Vec<(Cow<'a, str>, Value<'a>)>;

/// A JSON value as [`parse`](super::parse) reads it, with strings borrowed from the input
/// where they have no escapes.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value<'a> {
    /// `null`, a boolean or a number: never a string, array or object.
    Scalar(JsonValue),
    /// A string.
    String(Cow<'a, str>),
    /// An array.
    Array(Vec<Self>),
    /// An object.
    Object(Members<'a>),
}

/// The value of member `name`: the last of that name, as Jackson's `ObjectNode` keeps it.
pub(crate) fn member<'v, 'a>(members: &'v Members<'a>, name: &str) -> Option<&'v Value<'a>> {
    members
        .iter()
        .rev()
        .find(|(n, _)| n.as_ref() == name)
        .map(|(_, v)| v)
}

/// The first 16 bytes of `name`, big-endian, zero-padded: if one name's key is below another's,
/// so is the name (a name that ends early pads with the lowest byte); equal keys need the names
/// compared. Sorting by it first spares most byte comparisons of names with a common prefix.
pub(crate) fn name_order(name: &str) -> u128 {
    let mut prefix = [0u8; 16];
    let n = name.len().min(16);
    prefix[..n].copy_from_slice(&name.as_bytes()[..n]);
    u128::from_be_bytes(prefix)
}

/// How many members an object may have for [`sorted_order`] to sort them on the stack: source
/// partitions (sorted for every offsets record) have a handful.
const INLINE_MEMBERS: usize = 8;

/// The positions of an object's members in name order ([`sorted_order`]).
pub(crate) struct MemberOrder {
    /// Name keys and positions, sorted, the first `len` of them the positions kept: here while
    /// the object has at most [`INLINE_MEMBERS`] members...
    inline: ArrayVec<(u128, usize), INLINE_MEMBERS>,
    /// ...and here when it has more.
    spilled: Vec<(u128, usize)>,
    len: usize,
}

impl MemberOrder {
    /// The positions, in name order.
    pub(crate) fn positions(&self) -> impl DoubleEndedIterator<Item = usize> + '_ {
        let sorted = if self.spilled.is_empty() {
            &self.inline[..]
        } else {
            &self.spilled[..]
        };
        sorted.iter().take(self.len).map(|&(_, i)| i)
    }

    /// How many positions (distinct names) there are.
    pub(crate) fn len(&self) -> usize {
        self.len
    }
}

/// The positions of the members in name order (byte order, as a `BTreeMap<String, _>` sorts),
/// each name once at the position of its last value: the map Java holds. The members stay
/// where they are; only positions are sorted, by an integer prefix of the name first.
pub(crate) fn sorted_order(members: &Members<'_>) -> MemberOrder {
    let keyed = members
        .iter()
        .enumerate()
        .map(|(i, (n, _))| (name_order(n), i));
    let mut order = MemberOrder {
        inline: ArrayVec::new(),
        spilled: Vec::new(),
        len: 0,
    };
    let sorted = if members.len() <= INLINE_MEMBERS {
        order.inline.extend(keyed);
        &mut order.inline[..]
    } else {
        order.spilled.extend(keyed);
        &mut order.spilled[..]
    };
    order.len = sort_unique(sorted, members);
    order
}

/// Sorts `order` (name keys and positions) by name, then keeps, in its first slots, one
/// position per name: the last. Returns how many it kept.
fn sort_unique(order: &mut [(u128, usize)], members: &Members<'_>) -> usize {
    let name = |i: usize| members.get(i).map_or("", |(n, _)| n.as_ref());
    // Equal names end up by position, so the last of a run is the one that counts.
    order.sort_unstable_by(|a, b| {
        a.0.cmp(&b.0)
            .then_with(|| name(a.1).cmp(name(b.1)))
            .then(a.1.cmp(&b.1))
    });
    let mut kept = 0;
    for at in 0..order.len() {
        let position = order[at];
        if kept > 0 && name(order[kept - 1].1) == name(position.1) {
            order[kept - 1] = position;
        } else {
            order[kept] = position;
            kept += 1;
        }
    }
    kept
}

/// An object's members as the sorted map Java holds, for serde: written exactly as the
/// [`JsonObject`] that [`Value::into_owned`] would give (names in order, each once, values in
/// the checkpoint's flat token form, [`super::Tokens`]), without building it. The offsets topic hashes every key's
/// partition in this form.
pub(crate) struct SortedObject<'v, 'a>(pub(crate) &'v Members<'a>);

impl Serialize for SortedObject<'_, '_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let order = sorted_order(self.0);
        let mut map = serializer.serialize_map(Some(order.len()))?;
        for (name, value) in order.positions().filter_map(|i| self.0.get(i)) {
            map.serialize_entry(name.as_ref(), &Tokens(value))?;
        }
        map.end()
    }
}

/// A value in the checkpoint's token form ([`super::Tokens`]): its tokens in pre-order,
/// objects sorted.
struct Tokens<'v, 'a>(&'v Value<'a>);

/// A value still to write as tokens: read by the reader, or (inside a scalar, which the reader
/// never builds, but the type allows) owned.
enum Item<'v, 'a> {
    Read(&'v Value<'a>),
    Owned(&'v JsonValue),
}

impl Serialize for Tokens<'_, '_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        // A string or a scalar is one token, written without the walk's two vectors: the
        // offsets machine writes every key's partition members this way.
        let single = match self.0 {
            Value::String(s) => Some(Token::String(&**s)),
            Value::Scalar(v) => scalar_token(v),
            Value::Array(_) | Value::Object(_) => None,
        };
        if let Some(token) = single {
            return serializer.collect_seq(core::iter::once(token));
        }
        let mut tokens: Vec<Token<&str>> = Vec::new();
        let mut pending: Vec<(Option<&str>, Item<'_, '_>)> =
            alloc::vec![(None, Item::Read(self.0))];
        while let Some((name, item)) = pending.pop() {
            if let Some(name) = name {
                tokens.push(Token::String(name));
            }
            let value = match item {
                Item::Read(Value::Scalar(v)) | Item::Owned(v) => v,
                Item::Read(Value::String(s)) => {
                    tokens.push(Token::String(s));
                    continue;
                }
                Item::Read(Value::Array(items)) => {
                    tokens.push(Token::Array(items.len()));
                    pending.extend(items.iter().rev().map(|item| (None, Item::Read(item))));
                    continue;
                }
                Item::Read(Value::Object(members)) => {
                    let order = sorted_order(members);
                    tokens.push(Token::Object(order.len()));
                    let sorted = order.positions().rev().filter_map(|i| members.get(i));
                    pending.extend(sorted.map(|(n, v)| (Some(n.as_ref()), Item::Read(v))));
                    continue;
                }
            };
            push_value(value, &mut tokens, &mut pending, Item::Owned);
        }
        tokens.serialize(serializer)
    }
}

impl<'a> Value<'a> {
    /// The string, if this is one.
    pub(crate) fn as_str(&self) -> Option<&str> {
        match self {
            Self::String(s) => Some(s),
            _ => None,
        }
    }

    /// The members, if this is an object.
    pub(crate) fn as_object(&self) -> Option<&Members<'a>> {
        match self {
            Self::Object(members) => Some(members),
            _ => None,
        }
    }

    /// The integer, if this is a `Long`.
    pub(crate) fn as_long(&self) -> Option<i64> {
        match self {
            Self::Scalar(JsonValue::Long(n)) => Some(*n),
            _ => None,
        }
    }

    /// Whether this is `null`.
    pub(crate) fn is_null(&self) -> bool {
        matches!(self, Self::Scalar(JsonValue::Null))
    }

    /// The owned value [`parse`](super::parse) gives for the same input. Iterative: nesting
    /// cannot overflow the stack.
    pub(crate) fn into_owned(self) -> JsonValue {
        /// A container whose members are being converted.
        enum Open<'a> {
            Array(Vec<JsonValue>, vec::IntoIter<Value<'a>>),
            /// The members so far, the rest, and the name of the member being converted.
            Object(JsonObject, vec::IntoIter<(Cow<'a, str>, Value<'a>)>, String),
        }
        let mut stack: Vec<Open<'a>> = Vec::new();
        let mut next = self;
        loop {
            // Down: open containers until a value that is complete by itself.
            let mut done = loop {
                match next {
                    Value::Scalar(v) => break v,
                    Value::String(s) => break JsonValue::String(s.into_owned()),
                    Value::Array(items) => {
                        let mut rest = items.into_iter();
                        let Some(first) = rest.next() else {
                            break JsonValue::Array(Vec::new());
                        };
                        stack.push(Open::Array(Vec::with_capacity(rest.len() + 1), rest));
                        next = first;
                    }
                    Value::Object(members) => {
                        let mut rest = members.into_iter();
                        let Some((name, first)) = rest.next() else {
                            break JsonValue::Object(JsonObject::new());
                        };
                        stack.push(Open::Object(JsonObject::new(), rest, name.into_owned()));
                        next = first;
                    }
                }
            };
            // Up: hand the value to its container, closing the containers it completes.
            loop {
                let Some(mut top) = stack.pop() else {
                    return done;
                };
                let following = match &mut top {
                    Open::Array(items, rest) => {
                        items.push(done);
                        rest.next()
                    }
                    Open::Object(map, rest, name) => {
                        // A repeated name replaces the earlier value, as in `parse`.
                        map.insert(core::mem::take(name), done);
                        rest.next().map(|(n, v)| {
                            *name = n.into_owned();
                            v
                        })
                    }
                };
                if let Some(value) = following {
                    stack.push(top);
                    next = value;
                    break;
                }
                done = match top {
                    Open::Array(items, _) => JsonValue::Array(items),
                    Open::Object(map, _, _) => JsonValue::Object(map),
                };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{parse, parse_borrowed, JsonError};
    use alloc::string::ToString;
    use alloc::{format, vec};
    use proptest::prelude::*;

    /// JSON text with what the two readers could treat differently: repeated names, escapes,
    /// raw non-ASCII and lone surrogates, nesting, numbers of both kinds.
    fn json_text() -> impl Strategy<Value = String> {
        let name = prop::sample::select(vec!["a", "b", "a\\u0062", "\\u00e9", "é", "\\uD800", ""]);
        let leaf = prop_oneof![
            Just("null".to_string()),
            Just("true".to_string()),
            any::<i64>().prop_map(|n| n.to_string()),
            Just("-0.0".to_string()),
            Just("1e400".to_string()),
            Just("007".to_string()),
            name.clone().prop_map(|n| format!("\"{n}\"")),
            Just("\"tab\\there \\\" \\\\ \\/\"".to_string()),
        ];
        leaf.prop_recursive(4, 48, 6, move |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6)
                    .prop_map(|items| format!("[{}]", items.join(","))),
                prop::collection::vec((name.clone(), inner), 0..6).prop_map(|members| {
                    let members: Vec<String> = members
                        .into_iter()
                        .map(|(n, v)| format!("\"{n}\" : {v}"))
                        .collect();
                    format!("{{{}}}", members.join(" , "))
                }),
            ]
        })
    }

    /// `text` read both ways when the borrowed reader sees an object (`None` otherwise); the
    /// owned reader must then see one too.
    fn both_objects(text: &str) -> Result<Option<(Members<'_>, JsonObject)>, TestCaseError> {
        let Ok(Some(Value::Object(members))) = parse_borrowed(text.as_bytes()) else {
            return Ok(None);
        };
        match parse(text.as_bytes()) {
            Ok(Some(JsonValue::Object(map))) => Ok(Some((members, map))),
            _ => Err(TestCaseError::fail("owned did not read an object")),
        }
    }

    /// What the one-pass reader must give for `bytes`: [`parse`], then the last member
    /// `properties`, as the map Java holds.
    fn properties_as_parsed(bytes: &[u8]) -> Result<Option<JsonObject>, Option<JsonError>> {
        match parse(bytes) {
            Err(e) => Err(Some(e)),
            Ok(None | Some(JsonValue::Null)) => Ok(None),
            Ok(Some(JsonValue::Object(mut map))) => match map.remove("properties") {
                Some(JsonValue::Object(props)) => Ok(Some(props)),
                _ => Err(None),
            },
            Ok(Some(_)) => Err(None),
        }
    }

    /// The one-pass reader's answer in the same form (a value that is not an object and an
    /// object without `properties` both as `Err(None)`).
    fn properties_in_one_pass(bytes: &[u8]) -> Result<Option<JsonObject>, Option<JsonError>> {
        use crate::json::PropertiesRead;
        match crate::json::parse_properties(bytes, Vec::new()) {
            Err(e) => Err(Some(e)),
            Ok(PropertiesRead::Tombstone) => Ok(None),
            Ok(PropertiesRead::NotAnObject | PropertiesRead::NoProperties) => Err(None),
            Ok(PropertiesRead::Members(members)) => Ok(Some(
                crate::config::Shapes::default()
                    .lay_out(members)
                    .to_object(),
            )),
        }
    }

    /// Documents around generated values: as the whole value, as `properties`, beside it,
    /// repeated, and cut short.
    fn config_document() -> impl Strategy<Value = String> {
        let name = prop::sample::select(vec!["properties", "prop\\u0065rties", "other", "p"]);
        prop_oneof![
            json_text(),
            json_text().prop_map(|v| format!("{{\"properties\": {v}}}")),
            (prop::collection::vec((name, json_text()), 0..4), 0usize..8).prop_map(
                |(members, cut)| {
                    let members: Vec<String> = members
                        .into_iter()
                        .map(|(n, v)| format!("\"{n}\":{v}"))
                        .collect();
                    let text = format!(" {{ {} }} 12", members.join(", "));
                    let mut keep = text.len().saturating_sub(cut * (cut % 2));
                    // Cut on a character boundary (a generated string may hold `é`).
                    while !text.is_char_boundary(keep) {
                        keep -= 1;
                    }
                    text[..keep].to_string()
                }
            ),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn one_pass_properties_read_what_parse_reads(text in config_document()) {
            prop_assert_eq!(
                properties_in_one_pass(text.as_bytes()),
                properties_as_parsed(text.as_bytes())
            );
        }

        #[test]
        fn named_members_read_what_the_tree_holds(text in config_document()) {
            use crate::json::{parse_named, Top};
            let names = ["properties", "other", "p"];
            let expected = parse_borrowed(text.as_bytes()).map(|value| match value {
                None => (Top::Missing, [None, None, None]),
                Some(Value::Object(members)) => {
                    (Top::Object, names.map(|n| member(&members, n).cloned()))
                }
                Some(v) if v.is_null() => (Top::Null, [None, None, None]),
                Some(_) => (Top::Other, [None, None, None]),
            });
            prop_assert_eq!(parse_named(text.as_bytes(), names), expected);
        }

        #[test]
        fn one_pass_properties_refuse_the_same_bytes(bytes in prop::collection::vec(any::<u8>(), 0..64)) {
            let mut document = b"{\"properties\":{\"a\":".to_vec();
            document.extend_from_slice(&bytes);
            for input in [&bytes[..], &document[..]] {
                prop_assert_eq!(properties_in_one_pass(input), properties_as_parsed(input));
            }
        }

        #[test]
        fn borrowed_reads_what_owned_reads(text in json_text()) {
            let owned = parse(text.as_bytes());
            let borrowed = parse_borrowed(text.as_bytes()).map(|v| v.map(Value::into_owned));
            prop_assert_eq!(borrowed, owned);
        }

        #[test]
        fn borrowed_accepts_and_refuses_the_same_bytes(bytes in prop::collection::vec(any::<u8>(), 0..64)) {
            let owned = parse(&bytes);
            let borrowed = parse_borrowed(&bytes).map(|v| v.map(Value::into_owned));
            prop_assert_eq!(borrowed, owned);
        }

        #[test]
        fn sorted_members_are_the_owned_map(text in json_text()) {
            let Some((members, map)) = both_objects(&text)? else {
                return Ok(());
            };
            let sorted: Vec<(String, JsonValue)> = sorted_order(&members)
                .positions()
                .map(|i| (members[i].0.to_string(), members[i].1.clone().into_owned()))
                .collect();
            let expected: Vec<(String, JsonValue)> = map.into_iter().collect();
            prop_assert_eq!(sorted, expected);
        }

        /// The offsets topic's slot hashes (and so its checkpoints) depend on these bytes.
        #[test]
        fn sorted_objects_encode_as_the_owned_map(text in json_text()) {
            let Some((members, map)) = both_objects(&text)? else {
                return Ok(());
            };
            let config = bincode::config::standard();
            let borrowed = bincode::serde::encode_to_vec(SortedObject(&members), config).unwrap();
            let map: alloc::collections::BTreeMap<&str, crate::json::Tokens<&JsonValue>> =
                map.iter().map(|(k, v)| (k.as_str(), crate::json::Tokens(v))).collect();
            let owned = bincode::serde::encode_to_vec(&map, config).unwrap();
            prop_assert_eq!(borrowed, owned);
        }
    }

    #[test]
    fn unescaped_strings_are_borrowed_and_the_last_member_wins() {
        let text = br#"{"a": "x", "b": "y\n", "a": "z"}"#;
        let Ok(Some(Value::Object(members))) = parse_borrowed(text) else {
            panic!("not an object");
        };
        assert!(matches!(&members[0].1, Value::String(Cow::Borrowed("x"))));
        assert!(matches!(&members[1].1, Value::String(Cow::Owned(s)) if s == "y\n"));
        assert_eq!(member(&members, "a").and_then(Value::as_str), Some("z"));
        assert_eq!(member(&members, "c"), None);
    }

    #[test]
    fn one_pass_properties_keep_the_depth_limit_and_the_number_rule() {
        let depth = crate::json::MAX_DEPTH;
        for nested in [depth - 2, depth - 1] {
            let value = format!("{}{}", "[".repeat(nested), "]".repeat(nested));
            for text in [
                format!(r#"{{"properties": {{"a": {value}}}}}"#),
                format!(r#"{{"other": {{"a": {value}}}, "properties": {{}}}}"#),
            ] {
                let one_pass = properties_in_one_pass(text.as_bytes());
                assert_eq!(one_pass, properties_as_parsed(text.as_bytes()), "{nested}");
                // Two containers open around the value: the limit falls between the two.
                assert_eq!(one_pass.is_ok(), nested == depth - 2, "{nested}");
            }
        }
        // A number is followed by anything inside a document, only at its top by whitespace.
        for text in [r#"{"properties": {"a": 12}}"#, r#"{"x": 1}"#, "12}", "12 }"] {
            let bytes = text.as_bytes();
            assert_eq!(
                properties_in_one_pass(bytes),
                properties_as_parsed(bytes),
                "{text}"
            );
        }
    }

    #[test]
    fn deep_nesting_converts_without_recursion() {
        let depth = crate::json::MAX_DEPTH;
        let text = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        let value = parse_borrowed(text.as_bytes()).unwrap().unwrap();
        assert_eq!(Some(value.into_owned()), parse(text.as_bytes()).unwrap());
    }
}
