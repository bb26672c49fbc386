//! Serde forms: a [`PMap`] is written as a map and a [`PSet`] as a sequence, exactly as
//! `BTreeMap` and `BTreeSet` are, so checkpoints keep their bytes.
//!
//! Decoding collects the entries first and builds the tree in one pass (checkpoints write them
//! sorted), instead of one search per key; a repeated key keeps its last value, as inserting
//! would. A claimed length is not trusted beyond a modest first allocation.

use core::fmt;
use core::marker::PhantomData;

use alloc::vec::Vec;
use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{Serialize, Serializer};

use super::{PMap, PSet};

/// The first allocation a decoder makes, whatever length the input claims.
const FIRST_ALLOCATION: usize = 1 << 16;

impl<K: Serialize, V: Serialize> Serialize for PMap<K, V> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.iter())
    }
}

impl<K: Serialize> Serialize for PSet<K> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter())
    }
}

impl<'de, K, V> Deserialize<'de> for PMap<K, V>
where
    K: Deserialize<'de> + Ord + Clone,
    V: Deserialize<'de> + Clone,
{
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Entries<K, V>(PhantomData<(K, V)>);

        impl<'de, K: Deserialize<'de>, V: Deserialize<'de>> Visitor<'de> for Entries<K, V> {
            type Value = Vec<(K, V)>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a map")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let claimed = map.size_hint().unwrap_or(0);
                let mut entries = Vec::with_capacity(claimed.min(FIRST_ALLOCATION));
                while let Some(entry) = map.next_entry()? {
                    entries.push(entry);
                }
                Ok(entries)
            }
        }

        let entries = deserializer.deserialize_map(Entries(PhantomData))?;
        Ok(entries.into_iter().collect())
    }
}

impl<'de, K> Deserialize<'de> for PSet<K>
where
    K: Deserialize<'de> + Ord + Clone,
{
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Keys<K>(PhantomData<K>);

        impl<'de, K: Deserialize<'de>> Visitor<'de> for Keys<K> {
            type Value = Vec<K>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a sequence")
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let claimed = seq.size_hint().unwrap_or(0);
                let mut keys = Vec::with_capacity(claimed.min(FIRST_ALLOCATION));
                while let Some(key) = seq.next_element()? {
                    keys.push(key);
                }
                Ok(keys)
            }
        }

        let keys = deserializer.deserialize_seq(Keys(PhantomData))?;
        Ok(keys.into_iter().collect())
    }
}
