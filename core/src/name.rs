//! [`Name`]: the key of the state's maps of connector and topic names, ordered as a `String`
//! but searched mostly without following the pointer to its bytes.
//!
//! A search of a [`PMap`](crate::persistent::PMap) compares the looked-up name with about a
//! dozen stored ones. With `String` keys, each comparison follows a stored key's pointer and
//! calls `memcmp`: in the status replay that was a quarter of the time (`perf`, samples under
//! the replay). A `Name` keeps its first 16 bytes beside the pointer as two big-endian words, so
//! two names that differ there compare as two integer pairs, and only names that share their
//! first 16 bytes (and the one found) compare their bytes. Look a name up with [`Name::key`],
//! which computes the looked-up name's head once for the whole search; a `&str` also works
//! (through `Borrow<str>`), comparing whole strings.

use alloc::boxed::Box;
use alloc::string::String;
use core::borrow::Borrow;
use core::cmp::Ordering;
use core::fmt;
use core::ops::Deref;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::persistent::{Comparable, ToKey};

/// How many leading bytes a [`Name`] keeps beside its pointer.
const HEAD_LEN: usize = 16;

/// A name's first [`HEAD_LEN`] bytes as two big-endian words, zero-padded: comparing two heads
/// as integers orders them as their bytes (a shorter name's padding sorts before any byte but
/// `\0`, and a tie there is settled by comparing the whole names).
type Head = [u64; 2];

fn head_of(text: &str) -> Head {
    let mut bytes = [0u8; HEAD_LEN];
    let n = text.len().min(HEAD_LEN);
    bytes[..n].copy_from_slice(&text.as_bytes()[..n]);
    let (high, low) = bytes.split_at(HEAD_LEN / 2);
    [word(high), word(low)]
}

fn word(bytes: &[u8]) -> u64 {
    let mut word = [0u8; 8];
    word.copy_from_slice(bytes);
    u64::from_be_bytes(word)
}

/// A connector or topic name as a map key: ordered, compared and serialized exactly as the
/// `String` it holds (a checkpoint holds the same bytes as with `String` keys).
#[derive(Clone)]
pub struct Name {
    head: Head,
    text: Box<str>,
}

impl Name {
    /// The key to look `text` up by: its head computed once, for every comparison of a search.
    pub fn key(text: &str) -> NameKey<'_> {
        NameKey {
            head: head_of(text),
            text,
        }
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.text
    }
}

impl From<&str> for Name {
    fn from(text: &str) -> Self {
        Self {
            head: head_of(text),
            text: text.into(),
        }
    }
}

impl From<String> for Name {
    fn from(text: String) -> Self {
        Self {
            head: head_of(&text),
            text: text.into_boxed_str(),
        }
    }
}

impl Deref for Name {
    type Target = str;

    fn deref(&self) -> &str {
        &self.text
    }
}

impl Borrow<str> for Name {
    fn borrow(&self) -> &str {
        &self.text
    }
}

/// Hashes as the `str` it holds, so that a map of names is looked up by `&str`.
impl core::hash::Hash for Name {
    fn hash<H: core::hash::Hasher>(&self, state: &mut H) {
        self.text.hash(state);
    }
}

impl PartialEq for Name {
    fn eq(&self, other: &Self) -> bool {
        self.head == other.head && self.text == other.text
    }
}

impl Eq for Name {}

impl Ord for Name {
    fn cmp(&self, other: &Self) -> Ordering {
        self.head
            .cmp(&other.head)
            .then_with(|| self.text.cmp(&other.text))
    }
}

impl PartialOrd for Name {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Debug for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.text, f)
    }
}

impl fmt::Display for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl Serialize for Name {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.text)
    }
}

impl<'de> Deserialize<'de> for Name {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(Self::from)
    }
}

/// A name to look up in a map of [`Name`]s, made by [`Name::key`].
#[derive(Clone, Copy)]
pub struct NameKey<'a> {
    head: Head,
    text: &'a str,
}

impl Comparable<Name> for NameKey<'_> {
    fn compare(&self, stored: &Name) -> Ordering {
        self.head
            .cmp(&stored.head)
            .then_with(|| self.text.cmp(&stored.text))
    }
}

impl ToKey<Name> for NameKey<'_> {
    fn to_key(&self) -> Name {
        Name {
            head: self.head,
            text: self.text.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec::Vec;
    use proptest::prelude::*;

    fn text() -> impl Strategy<Value = String> {
        // Short and long names, shared prefixes, NULs (the head's padding) and multi-byte
        // characters.
        prop_oneof![
            "[a\\x00b-]{0,20}",
            "connector-[a-c\\x00]{0,12}",
            "\\PC{0,24}",
        ]
    }

    proptest! {
        /// A `Name` orders, and a `NameKey` compares, exactly as the `String`.
        #[test]
        fn orders_as_its_string(a in text(), b in text()) {
            let (x, y) = (Name::from(a.as_str()), Name::from(b.clone()));
            prop_assert_eq!(x.cmp(&y), a.cmp(&b));
            prop_assert_eq!(x == y, a == b);
            prop_assert_eq!(Name::key(&a).compare(&y), a.cmp(&b));
            let owned: Name = Name::key(&a).to_key();
            prop_assert_eq!(owned.as_str(), a.as_str());
        }
    }

    #[test]
    fn padding_and_ties_order_as_bytes() {
        let names = [
            "",
            "\0",
            "a",
            "a\0",
            "a\0b",
            "aa",
            "0123456789abcdef",
            "0123456789abcdef\0",
            "0123456789abcdefg",
            "0123456789abcdeg",
        ];
        let mut sorted: Vec<Name> = names.iter().rev().map(|n| Name::from(*n)).collect();
        sorted.sort();
        let order: Vec<&str> = sorted.iter().map(|n| n.as_str()).collect();
        let mut expected = names.to_vec();
        expected.sort();
        assert_eq!(order, expected);
    }

    #[test]
    fn serializes_as_its_string() {
        let name = Name::from("jdbc-sink-00042");
        let with_name = serde_json::to_string(&name).unwrap();
        assert_eq!(with_name, serde_json::to_string("jdbc-sink-00042").unwrap());
        let back: Name = serde_json::from_str(&with_name).unwrap();
        assert!(back == name);
    }
}
