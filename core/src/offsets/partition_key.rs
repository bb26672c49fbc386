//! `OffsetUtils.processPartitionKey` (spec §4.4): which connector and source partition an
//! offsets-topic key names.

use alloc::borrow::Cow;
use alloc::collections::BTreeSet;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use crate::json::{self, JsonObject, JsonValue, Members, Value};

/// A key that names a connector and a source partition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PartitionKey {
    pub(crate) connector: String,
    pub(crate) partition: JsonObject,
}

/// A [`PartitionKey`] as the apply step reads it, borrowed from the record.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PartitionView<'a> {
    pub(crate) connector: Cow<'a, str>,
    /// The partition's members in document order (repeated names included: the last counts).
    pub(crate) partition: Members<'a>,
}

impl PartitionView<'_> {
    /// The owned key (the partition as the map Java holds).
    pub(crate) fn into_owned(self) -> PartitionKey {
        let partition = match Value::Object(self.partition).into_owned() {
            JsonValue::Object(map) => map,
            _ => JsonObject::new(),
        };
        PartitionKey {
            connector: self.connector.into_owned(),
            partition,
        }
    }
}

/// What `processPartitionKey` makes of a key, borrowed from the record.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum KeyView<'a> {
    /// `[connector, {partition}]`.
    Partition(PartitionView<'a>),
    /// `[connector, null]`: ignored silently (KAFKA-16392).
    NullPartition,
    /// Anything else: ignored for partition tracking with a warning.
    Ignored(KeyProblem),
}

/// What `processPartitionKey` makes of a key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum KeyShape {
    /// `[connector, {partition}]`.
    Partition(PartitionKey),
    /// `[connector, null]`: ignored silently (KAFKA-16392).
    NullPartition,
    /// Anything else: ignored for partition tracking with a warning.
    Ignored(KeyProblem),
}

/// Why a key is not tracked as a connector partition (each is one WARN in Java).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum KeyProblem {
    /// The record has no key.
    NullKey,
    /// The key is not JSON (KAFKA-15800).
    NotJson,
    /// The key is not a JSON array (this includes empty keys).
    NotAList,
    /// The array does not have exactly two elements.
    WrongLength(usize),
    /// The first element is not a string.
    FirstNotString,
    /// The second element is neither an object nor null.
    SecondNotMap,
}

impl fmt::Display for KeyProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NullKey => f.write_str("offset partition key with an unexpected null value"),
            Self::NotJson => {
                f.write_str("offset partition key with unknown serialization (expected JSON)")
            }
            Self::NotAList => {
                f.write_str("offset partition key of unexpected format (expected a list)")
            }
            Self::WrongLength(n) => {
                write!(f, "offset partition key with {n} elements (expected 2)")
            }
            Self::FirstNotString => {
                f.write_str("offset partition key whose first element is not a string")
            }
            Self::SecondNotMap => {
                f.write_str("offset partition key whose second element is not a map")
            }
        }
    }
}

/// Classifies a key exactly as `processPartitionKey` does, steps 1-6.
pub(crate) fn classify(key: Option<&[u8]>) -> KeyShape {
    match view(key) {
        KeyView::Partition(partition) => KeyShape::Partition(partition.into_owned()),
        KeyView::NullPartition => KeyShape::NullPartition,
        KeyView::Ignored(problem) => KeyShape::Ignored(problem),
    }
}

/// [`classify`], borrowing the connector and the partition's members from the key: what every
/// record's apply step reads. A key in the layout Java writes is matched directly
/// ([`key_layout`](super::key_layout)), any other read in full.
pub(crate) fn view(key: Option<&[u8]>) -> KeyView<'_> {
    let Some(bytes) = key else {
        return KeyView::Ignored(KeyProblem::NullKey);
    };
    match super::key_layout::read(bytes) {
        Some(partition) => KeyView::Partition(partition),
        None => view_in_full(bytes),
    }
}

/// [`view`] of a record's key bytes with the general JSON reader.
pub(crate) fn view_in_full(bytes: &[u8]) -> KeyView<'_> {
    let value = match json::parse_borrowed(bytes) {
        Ok(v) => v,
        Err(_) => return KeyView::Ignored(KeyProblem::NotJson),
    };
    let Some(Value::Array(mut items)) = value else {
        return KeyView::Ignored(KeyProblem::NotAList);
    };
    if items.len() != 2 {
        return KeyView::Ignored(KeyProblem::WrongLength(items.len()));
    }
    let (Some(second), Some(first)) = (items.pop(), items.pop()) else {
        return KeyView::Ignored(KeyProblem::WrongLength(0));
    };
    let Value::String(connector) = first else {
        return KeyView::Ignored(KeyProblem::FirstNotString);
    };
    match second {
        Value::Object(partition) => KeyView::Partition(PartitionView {
            connector,
            partition,
        }),
        second if second.is_null() => KeyView::NullPartition,
        _ => KeyView::Ignored(KeyProblem::SecondNotMap),
    }
}

/// The partition's member names in the order a `[connector, {partition}]` key lists them
/// (first occurrences), which is the order Java's `JsonConverter` puts them into its `HashMap`:
/// what listings re-serialize partitions in. Only listings need it, so [`classify`] (every
/// record) leaves it out. Empty when the key is not of that shape.
pub(crate) fn member_order(key: &[u8]) -> Vec<String> {
    second_element_member_names(key).unwrap_or_default()
}

/// The member names of the object that is the second element of the top-level array, in
/// document order, first occurrences only. Called only on keys the JSON reader accepted; any
/// surprise gives `None` (the names then fall back to sorted order).
fn second_element_member_names(bytes: &[u8]) -> Option<Vec<String>> {
    let mut scan = Scanner { bytes, pos: 0 };
    if bytes.starts_with(&[0xEF, 0xBB, 0xBF]) {
        scan.pos = 3;
    }
    scan.expect(b'[')?;
    scan.skip_value()?;
    scan.expect(b',')?;
    object_member_names(scan)
}

/// The member names of a top-level JSON object (a stored offset), in document order, first
/// occurrences only: the order Java's converter puts them into its `HashMap` in. Called only on
/// values the JSON reader accepted; any surprise gives `None`.
pub(crate) fn top_level_member_names(bytes: &[u8]) -> Option<Vec<String>> {
    let mut scan = Scanner { bytes, pos: 0 };
    if bytes.starts_with(&[0xEF, 0xBB, 0xBF]) {
        scan.pos = 3;
    }
    object_member_names(scan)
}

/// Up to this many names, a repeat is found by comparing with each name kept; beyond, through
/// an ordered set (an object from a topic can have any number of members).
const FEW_NAMES: usize = 16;

/// The member names of the object starting at the scanner (after white space).
fn object_member_names(mut scan: Scanner<'_>) -> Option<Vec<String>> {
    scan.expect(b'{')?;
    let mut names: Vec<String> = Vec::new();
    let mut seen: BTreeSet<String> = BTreeSet::new();
    loop {
        scan.skip_ws();
        if scan.peek()? == b'}' {
            return Some(names);
        }
        let start = scan.pos;
        scan.skip_string()?;
        let name = member_name(scan.bytes.get(start..scan.pos)?)?;
        let repeated = if names.len() < FEW_NAMES {
            names.contains(&name)
        } else {
            if seen.is_empty() {
                seen.extend(names.iter().cloned());
            }
            !seen.insert(name.clone())
        };
        if !repeated {
            names.push(name);
        }
        scan.expect(b':')?;
        scan.skip_value()?;
        scan.skip_ws();
        match scan.next()? {
            b',' => {}
            b'}' => return Some(names),
            _ => return None,
        }
    }
}

/// The text of a JSON string (`quoted`, quotes included, from text the reader accepted): its
/// bytes when it has no escape, else as the reader decodes it.
fn member_name(quoted: &[u8]) -> Option<String> {
    let inner = quoted.get(1..quoted.len().checked_sub(1)?)?;
    if !inner.contains(&b'\\') {
        return core::str::from_utf8(inner).ok().map(String::from);
    }
    match json::parse(quoted) {
        Ok(Some(JsonValue::String(name))) => Some(name),
        _ => None,
    }
}

/// A forward-only scanner over JSON text that is already known to be valid.
struct Scanner<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Scanner<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn next(&mut self) -> Option<u8> {
        let b = self.peek()?;
        self.pos += 1;
        Some(b)
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    fn expect(&mut self, byte: u8) -> Option<()> {
        self.skip_ws();
        (self.next()? == byte).then_some(())
    }

    /// Skips a string token starting at the current `"`.
    fn skip_string(&mut self) -> Option<()> {
        if self.next()? != b'"' {
            return None;
        }
        loop {
            match self.next()? {
                b'\\' => {
                    self.next()?;
                }
                b'"' => return Some(()),
                _ => {}
            }
        }
    }

    /// Skips one value of any kind, nested containers included (iteratively).
    fn skip_value(&mut self) -> Option<()> {
        self.skip_ws();
        match self.peek()? {
            b'"' => self.skip_string(),
            b'[' | b'{' => {
                let mut depth = 0usize;
                loop {
                    match self.peek()? {
                        b'"' => {
                            self.skip_string()?;
                            continue;
                        }
                        b'[' | b'{' => depth += 1,
                        b']' | b'}' => {
                            depth = depth.checked_sub(1)?;
                            if depth == 0 {
                                self.pos += 1;
                                return Some(());
                            }
                        }
                        _ => {}
                    }
                    self.pos += 1;
                }
            }
            _ => {
                while !matches!(
                    self.peek(),
                    None | Some(b',' | b']' | b'}' | b' ' | b'\t' | b'\n' | b'\r')
                ) {
                    self.pos += 1;
                }
                Some(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn partition(key: &str) -> (PartitionKey, Vec<String>) {
        match classify(Some(key.as_bytes())) {
            KeyShape::Partition(p) => (p, member_order(key.as_bytes())),
            other => panic!("{key}: {other:?}"),
        }
    }

    #[test]
    fn partitions_and_their_member_order() {
        let (p, order) = partition(r#"["c",{"table":"t","shard":1,"database":"d"}]"#);
        assert_eq!(p.connector, "c");
        assert_eq!(order, ["table", "shard", "database"]);
        assert_eq!(p.partition.len(), 3);
        let (p, order) = partition(
            " [ \"c\" , { \"a\\\"\" : [1,{\"x\":[]}] , \"b\" : \"}\" , \"a\\\"\" : 2 } ] trailing",
        );
        assert_eq!(order, ["a\"", "b"]);
        assert_eq!(p.partition.get("a\""), Some(&JsonValue::Long(2)));
        let (_, order) = partition(r#"["c",{}]"#);
        assert!(order.is_empty());
    }

    #[test]
    fn every_rejection_of_process_partition_key() {
        let shape = |k: &[u8]| classify(Some(k));
        assert_eq!(classify(None), KeyShape::Ignored(KeyProblem::NullKey));
        assert_eq!(
            shape(b"i-am-not-json"),
            KeyShape::Ignored(KeyProblem::NotJson)
        );
        assert_eq!(shape(&[0]), KeyShape::Ignored(KeyProblem::NotJson));
        assert_eq!(shape(b""), KeyShape::Ignored(KeyProblem::NotAList));
        assert_eq!(shape(b"{}"), KeyShape::Ignored(KeyProblem::NotAList));
        assert_eq!(
            shape(br#"["c"]"#),
            KeyShape::Ignored(KeyProblem::WrongLength(1))
        );
        assert_eq!(
            shape(br#"[1,{}]"#),
            KeyShape::Ignored(KeyProblem::FirstNotString)
        );
        assert_eq!(
            shape(br#"["c",[1]]"#),
            KeyShape::Ignored(KeyProblem::SecondNotMap)
        );
        assert_eq!(shape(br#"["c",null]"#), KeyShape::NullPartition);
        assert_eq!(
            shape(br#"["c",{"a":1},3]"#),
            KeyShape::Ignored(KeyProblem::WrongLength(3))
        );
    }
}
