//! [`LiveKeys`]: the offsets topic's data map (raw key bytes to the latest record), stored with
//! one allocation per key.

use alloc::boxed::Box;
use alloc::collections::BTreeSet;
use alloc::vec::Vec;
use core::borrow::Borrow;
use core::cmp::Ordering;
use core::fmt;

use serde::{Deserialize, Serialize};

/// The record of one live key: where it lives, and its key and raw value bytes (kept in one
/// buffer, since a topic can hold millions).
#[derive(Clone, PartialEq, Eq)]
pub struct StoredOffset {
    partition: i32,
    key_len: u32,
    offset: i64,
    /// The key bytes, then the value bytes.
    bytes: Box<[u8]>,
}

impl StoredOffset {
    /// A record of `key` (empty for a record without key) and `value`. `None` when the key is
    /// longer than Kafka allows (2 GiB); no Kafka record has such a key.
    pub(crate) fn new(key: &[u8], value: &[u8], partition: i32, offset: i64) -> Option<Self> {
        let key_len = u32::try_from(key.len()).ok()?;
        let mut bytes = Vec::with_capacity(key.len() + value.len());
        bytes.extend_from_slice(key);
        bytes.extend_from_slice(value);
        Some(Self {
            partition,
            key_len,
            offset,
            bytes: bytes.into_boxed_slice(),
        })
    }

    /// The topic partition the latest record of the key was read from.
    pub fn partition(&self) -> i32 {
        self.partition
    }

    /// That record's offset in its partition.
    pub fn offset(&self) -> i64 {
        self.offset
    }

    /// The raw value bytes.
    pub fn value(&self) -> &[u8] {
        self.bytes.get(self.key_len as usize..).unwrap_or_default()
    }

    fn key(&self) -> &[u8] {
        self.bytes.get(..self.key_len as usize).unwrap_or_default()
    }
}

impl fmt::Debug for StoredOffset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StoredOffset")
            .field("partition", &self.partition)
            .field("offset", &self.offset)
            .field("value", &self.value())
            .finish()
    }
}

/// A [`StoredOffset`] ordered and found by its key bytes alone, for the set.
#[derive(Clone)]
struct ByKey(StoredOffset);

impl PartialEq for ByKey {
    fn eq(&self, other: &Self) -> bool {
        self.0.key() == other.0.key()
    }
}

impl Eq for ByKey {}

impl PartialOrd for ByKey {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for ByKey {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.key().cmp(other.0.key())
    }
}

impl Borrow<[u8]> for ByKey {
    fn borrow(&self) -> &[u8] {
        self.0.key()
    }
}

/// Raw key bytes (`None`: a record without key) to the latest record, sorted by key bytes with
/// the null key first. Equality compares keys and records.
#[derive(Clone, Default)]
pub(crate) struct LiveKeys {
    null_key: Option<StoredOffset>,
    keyed: BTreeSet<ByKey>,
}

impl LiveKeys {
    /// The latest record of `key`.
    pub(crate) fn get(&self, key: Option<&[u8]>) -> Option<&StoredOffset> {
        match key {
            None => self.null_key.as_ref(),
            Some(key) => self.keyed.get(key).map(|entry| &entry.0),
        }
    }

    /// Stores `record` as the latest of `key` (`record`'s own key bytes must be `key`'s).
    pub(crate) fn insert(&mut self, key: Option<&[u8]>, record: StoredOffset) {
        match key {
            None => self.null_key = Some(record),
            Some(_) => {
                self.keyed.replace(ByKey(record));
            }
        }
    }

    /// Removes `key` (a tombstone).
    pub(crate) fn remove(&mut self, key: Option<&[u8]>) {
        match key {
            None => self.null_key = None,
            Some(key) => {
                self.keyed.remove(key);
            }
        }
    }

    /// Every live key and its record, the null key first, then by key bytes.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (Option<&[u8]>, &StoredOffset)> + '_ {
        let null = self.null_key.iter().map(|record| (None, record));
        null.chain(self.keyed.iter().map(|e| (Some(e.0.key()), &e.0)))
    }

    /// How many keys are live.
    pub(crate) fn len(&self) -> usize {
        self.keyed.len() + usize::from(self.null_key.is_some())
    }
}

impl PartialEq for LiveKeys {
    fn eq(&self, other: &Self) -> bool {
        self.null_key == other.null_key
            && self.keyed.len() == other.keyed.len()
            && self.keyed.iter().zip(&other.keyed).all(|(a, b)| a.0 == b.0)
    }
}

impl Eq for LiveKeys {}

impl fmt::Debug for LiveKeys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

/// One live key in a checkpoint.
#[derive(Serialize, Deserialize)]
struct Wire<B> {
    keyed: bool,
    partition: i32,
    key_len: u32,
    offset: i64,
    bytes: B,
}

/// Bytes as a serde byte string (one copy on decode).
struct Bytes<'a>(&'a [u8]);

impl Serialize for Bytes<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_bytes(self.0)
    }
}

struct OwnedBytes(Box<[u8]>);

impl<'de> Deserialize<'de> for OwnedBytes {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = OwnedBytes;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("key and value bytes")
            }
            fn visit_bytes<E: serde::de::Error>(self, bytes: &[u8]) -> Result<OwnedBytes, E> {
                Ok(OwnedBytes(bytes.into()))
            }
        }
        deserializer.deserialize_bytes(Visitor)
    }
}

impl Serialize for LiveKeys {
    /// A sequence of live keys, in [`iter`](Self::iter) order.
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter().map(|(key, record)| Wire {
            keyed: key.is_some(),
            partition: record.partition,
            key_len: record.key_len,
            offset: record.offset,
            bytes: Bytes(&record.bytes),
        }))
    }
}

impl<'de> Deserialize<'de> for LiveKeys {
    /// Refuses a key length beyond its bytes, a null key with key bytes, and a repeated key.
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let wires = Vec::<Wire<OwnedBytes>>::deserialize(deserializer)?;
        let mut live = Self::default();
        let mut keyed = Vec::with_capacity(wires.len());
        for wire in wires {
            let record = StoredOffset {
                partition: wire.partition,
                key_len: wire.key_len,
                offset: wire.offset,
                bytes: wire.bytes.0,
            };
            if record.key_len as usize > record.bytes.len() {
                return Err(D::Error::custom("a live key is longer than its bytes"));
            }
            if !wire.keyed {
                if record.key_len != 0 || live.null_key.is_some() {
                    return Err(D::Error::custom("the null key is malformed or repeated"));
                }
                live.null_key = Some(record);
            } else {
                keyed.push(ByKey(record));
            }
        }
        let count = keyed.len();
        // Checkpoints list keys sorted: the set is built in bulk.
        live.keyed = keyed.into_iter().collect();
        if live.keyed.len() != count {
            return Err(D::Error::custom("a live key is repeated"));
        }
        Ok(live)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    fn record(key: &[u8], value: &[u8], offset: i64) -> StoredOffset {
        StoredOffset::new(key, value, 0, offset).unwrap()
    }

    #[test]
    fn keeps_the_latest_record_per_key_in_key_order() {
        let mut live = LiveKeys::default();
        live.insert(Some(b"b"), record(b"b", b"1", 0));
        live.insert(Some(b"a"), record(b"a", b"2", 1));
        live.insert(None, record(b"", b"3", 2));
        live.insert(Some(b"b"), record(b"b", b"4", 3));
        assert_eq!(live.len(), 3);
        let seen: Vec<_> = live
            .iter()
            .map(|(k, r)| (k.map(<[u8]>::to_vec), r.value().to_vec(), r.offset()))
            .collect();
        let expected =
            [(None, "3", 2), (Some("a"), "2", 1), (Some("b"), "4", 3)].map(|(k, v, o)| {
                (
                    k.map(|k: &str| k.as_bytes().to_vec()),
                    v.as_bytes().to_vec(),
                    o,
                )
            });
        assert_eq!(seen, expected);
        live.remove(Some(b"a"));
        live.remove(None);
        assert_eq!(live.len(), 1);
        assert_eq!(
            live.get(Some(b"b")).map(StoredOffset::value),
            Some(&b"4"[..])
        );
        assert!(live.get(Some(b"a")).is_none() && live.get(None).is_none());
    }

    #[test]
    fn equality_compares_records_not_only_keys() {
        let mut one = LiveKeys::default();
        let mut two = LiveKeys::default();
        one.insert(Some(b"k"), record(b"k", b"1", 0));
        two.insert(Some(b"k"), record(b"k", b"2", 0));
        assert_ne!(one, two);
        two.insert(Some(b"k"), record(b"k", b"1", 0));
        assert_eq!(one, two);
    }

    #[test]
    fn checkpoint_form_round_trips_and_refuses_malformed_keys() {
        let mut live = LiveKeys::default();
        live.insert(None, record(b"", b"n", 0));
        live.insert(Some(b"key"), record(b"key", b"value", 1));
        let config = bincode::config::standard();
        let bytes = bincode::serde::encode_to_vec(&live, config).unwrap();
        let (back, _): (LiveKeys, usize) =
            bincode::serde::decode_from_slice(&bytes, config).unwrap();
        assert_eq!(back, live);

        let wire = |keyed: bool, key_len: u32, bytes: &'static [u8]| Wire {
            keyed,
            partition: 0,
            key_len,
            offset: 0,
            bytes: Bytes(bytes),
        };
        let decode = |wires: Vec<Wire<Bytes<'static>>>| {
            let bytes = bincode::serde::encode_to_vec(&wires, config).unwrap();
            bincode::serde::decode_from_slice::<LiveKeys, _>(&bytes, config)
        };
        assert!(decode(vec![wire(true, 1, b"kv"), wire(false, 0, b"v")]).is_ok());
        for bad in [
            vec![wire(true, 3, b"kv")],
            vec![wire(false, 1, b"kv")],
            vec![wire(false, 0, b"v"), wire(false, 0, b"w")],
            vec![wire(true, 1, b"kv"), wire(true, 1, b"kw")],
        ] {
            assert!(decode(bad).is_err());
        }
    }
}
