//! The iteration order of a Java `java.util.HashMap<String, _>`.
//!
//! When Java code serializes a `HashMap` (for example Jackson writing a schemaless Connect map
//! such as a source partition), the members come out in the map's iteration order, which depends
//! only on the keys' hash codes, the table capacity and the insertion order. [`hash_map_order`]
//! reproduces that order for a map built by `new HashMap<>()` followed by sequential `put`s, so
//! that bytes written by Java can be reproduced exactly.
//!
//! The model (OpenJDK 8 and later):
//!
//! * the table starts with 16 buckets and load factor 0.75, and doubles (16 → 32 → 64 …) as soon
//!   as the number of entries exceeds 0.75 × capacity, i.e. on the 13th, 25th, 49th … key;
//! * a key lives in bucket `(h ^ (h >>> 16)) & (capacity - 1)` where `h` is
//!   [`String.hashCode()`](string_hash_code);
//! * iteration visits buckets in ascending index order, and each bucket's entries in insertion
//!   order (new entries are appended to the bucket's list, and a resize splits every list
//!   without reordering it);
//! * a `put` of a key that is already present only replaces the value, so the key keeps its
//!   original position;
//! * when a `put` makes a bucket hold 9 or more entries while the table has fewer than 64
//!   buckets, Java resizes the table instead of turning the bucket into a tree
//!   (`treeifyBin`); this is reproduced.
//!
//! Not modelled: treeification proper, i.e. a bucket that reaches 9 or more colliding keys in a
//! table of 64 or more buckets. Java then stores that bucket as a red-black tree whose iteration
//! order is no longer the insertion order, so for such (pathological) key sets the order returned
//! here can differ from Java's within that bucket.

use alloc::collections::BTreeSet;
use alloc::vec::Vec;
use arrayvec::ArrayVec;

use super::{JsonObject, JsonValue};

/// `HashMap.DEFAULT_INITIAL_CAPACITY`.
const INITIAL_CAPACITY: usize = 16;
/// `HashMap.MAXIMUM_CAPACITY`.
const MAXIMUM_CAPACITY: usize = 1 << 30;
/// `HashMap.TREEIFY_THRESHOLD`: a bucket longer than this after a `put` is treeified (or, in a
/// small table, makes the table resize).
const TREEIFY_THRESHOLD: usize = 8;
/// `HashMap.MIN_TREEIFY_CAPACITY`.
const MIN_TREEIFY_CAPACITY: usize = 64;

/// Java's `String.hashCode()`: `s[0]*31^(n-1) + ... + s[n-1]` over the UTF-16 code units of the
/// string (a supplementary character counts as its two surrogates), in wrapping `i32`
/// arithmetic. The empty string hashes to 0.
pub fn string_hash_code(s: &str) -> i32 {
    s.encode_utf16().fold(0i32, |hash, unit| {
        hash.wrapping_mul(31).wrapping_add(i32::from(unit))
    })
}

/// `HashMap.hash(key)`: the hash code with its high half folded into the low half.
const fn spread(hash_code: i32) -> u32 {
    // Reinterpret as unsigned so that `>>` is Java's `>>>`.
    let h = hash_code as u32;
    h ^ (h >> 16)
}

/// The iteration order of the `java.util.HashMap` built by `new HashMap<>()` and then
/// `put(key, …)` for each of `keys_in_insertion_order` in turn.
///
/// Returns the indices into `keys_in_insertion_order` of the distinct keys (the first occurrence
/// of each) in the order Java's `keySet()` / `entrySet()` iterates them. Keys are compared like
/// Java strings (a `&str` holds no lone surrogates, so equal UTF-16 is equal UTF-8). See the
/// [module documentation](self) for the model and its one limitation (treeified buckets).
///
/// ```
/// use connect_state_core::json::java_map::hash_map_order;
///
/// let keys = ["kafka_topic", "kafka_partition"];
/// assert_eq!(hash_map_order(&keys), [1, 0]);
/// ```
pub fn hash_map_order<S: AsRef<str>>(keys_in_insertion_order: &[S]) -> Vec<usize> {
    small_map_order(keys_in_insertion_order).unwrap_or_else(|| table_order(keys_in_insertion_order))
}

/// [`hash_map_order`] for at most [`TREEIFY_THRESHOLD`] distinct keys (`None` for more): they
/// stay in the first table (no bucket grows past the threshold, and the size stays below
/// the first resize's 12), so the order is each key's bucket in that table, and insertion
/// order within a bucket. Most partitions and offsets have a member or two: this path
/// allocates only the answer.
fn small_map_order<S: AsRef<str>>(keys_in_insertion_order: &[S]) -> Option<Vec<usize>> {
    let mut distinct: ArrayVec<(u32, usize), TREEIFY_THRESHOLD> = ArrayVec::new();
    for (index, key) in keys_in_insertion_order.iter().enumerate() {
        let key = key.as_ref();
        let seen = distinct.iter().any(|&(_, earlier)| {
            keys_in_insertion_order
                .get(earlier)
                .is_some_and(|k| k.as_ref() == key)
        });
        if !seen {
            let bucket = spread(string_hash_code(key)) & (INITIAL_CAPACITY as u32 - 1);
            distinct.try_push((bucket, index)).ok()?;
        }
    }
    // Stable: keys of one bucket keep their insertion order, as in its list.
    distinct.sort_by_key(|&(bucket, _)| bucket);
    Some(distinct.iter().map(|&(_, index)| index).collect())
}

/// [`hash_map_order`] by the model of Java's table, resizes included.
fn table_order<S: AsRef<str>>(keys_in_insertion_order: &[S]) -> Vec<usize> {
    let mut seen: BTreeSet<&str> = BTreeSet::new();
    let mut table = Table::new();
    for (index, key) in keys_in_insertion_order.iter().enumerate() {
        let key = key.as_ref();
        if seen.insert(key) {
            table.put_new(spread(string_hash_code(key)), index);
        }
    }
    table.into_order()
}

/// The iteration order of a `java.util.HashMap` built by `new HashMap<>()` and `put` of
/// distinct keys with these `hashCode()`s, in turn: the indices in Java's iteration order.
pub fn hash_map_order_by_hash(distinct_key_hash_codes: &[i32]) -> Vec<usize> {
    let mut table = Table::new();
    for (index, hash) in distinct_key_hash_codes.iter().enumerate() {
        table.put_new(spread(*hash), index);
    }
    table.into_order()
}

/// `hashCode()` of the Java object Jackson reads `value` as in a `Map<String, Object>` (the
/// REST layer's reading): `Integer` for integers that fit in 32 bits, else `Long`; `Double`
/// (by `doubleToLongBits`, NaN canonical); `String`; `Boolean` (1231, 1237); `null` as 0;
/// lists as `List.hashCode` and maps as `Map.hashCode` (the sum of `key ^ value` over entries).
pub fn jackson_hash_code(value: &JsonValue) -> i32 {
    match value {
        JsonValue::Null => 0,
        JsonValue::Bool(true) => 1231,
        JsonValue::Bool(false) => 1237,
        JsonValue::Long(v) => match i32::try_from(*v) {
            Ok(int) => int,
            Err(_) => (*v ^ ((*v as u64) >> 32) as i64) as i32,
        },
        JsonValue::Double(d) => {
            let v = d.get();
            let bits = if v.is_nan() {
                0x7ff8_0000_0000_0000
            } else {
                v.to_bits()
            };
            (bits ^ (bits >> 32)) as i32
        }
        JsonValue::BigInteger(digits) => big_integer_hash_code(digits),
        JsonValue::String(s) => string_hash_code(s),
        JsonValue::Array(items) => items.iter().fold(1i32, |hash, item| {
            hash.wrapping_mul(31).wrapping_add(jackson_hash_code(item))
        }),
        JsonValue::Object(map) => map_hash_code(map),
    }
}

/// `BigInteger.hashCode()` of the integer with these decimal digits (a `-` first when
/// negative): over the magnitude's 32-bit words, most significant first, `31 * h + word`, times
/// the sign.
fn big_integer_hash_code(digits: &str) -> i32 {
    let (negative, digits) = match digits.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, digits),
    };
    // The magnitude in 32-bit words, least significant first.
    let mut words: Vec<u32> = Vec::new();
    for d in digits.bytes().filter(u8::is_ascii_digit) {
        let mut carry = u64::from(d - b'0');
        for word in &mut words {
            let next = u64::from(*word) * 10 + carry;
            *word = next as u32;
            carry = next >> 32;
        }
        if carry > 0 {
            words.push(carry as u32);
        }
    }
    let hash = words
        .iter()
        .rev()
        .fold(0i32, |h, &w| h.wrapping_mul(31).wrapping_add(w as i32));
    match (negative, words.is_empty()) {
        (_, true) => 0,
        (true, false) => hash.wrapping_neg(),
        (false, false) => hash,
    }
}

/// `Map.hashCode()` of a `Map<String, Object>` as Jackson reads `map` (see
/// [`jackson_hash_code`]).
pub fn map_hash_code(map: &JsonObject) -> i32 {
    members_hash_code(map.iter())
}

/// [`map_hash_code`] of the map holding `members` (distinct names, in any order: the sum does
/// not depend on it).
pub fn members_hash_code<'a>(
    members: impl Iterator<Item = (&'a alloc::string::String, &'a JsonValue)>,
) -> i32 {
    members.fold(0i32, |sum, (name, value)| {
        sum.wrapping_add(string_hash_code(name) ^ jackson_hash_code(value))
    })
}

/// The bucket structure of a Java `HashMap`: per bucket, the `(spread hash, key index)` of its
/// entries in list order.
struct Table {
    /// `table`, always `capacity` long.
    buckets: Vec<Vec<(u32, usize)>>,
    /// `size`.
    size: usize,
    /// `threshold`: the size above which the table doubles.
    threshold: usize,
}

impl Table {
    /// The table after the first `put` into `new HashMap<>()`.
    fn new() -> Self {
        let mut buckets = Vec::new();
        buckets.resize_with(INITIAL_CAPACITY, Vec::new);
        Self {
            buckets,
            size: 0,
            threshold: INITIAL_CAPACITY / 4 * 3,
        }
    }

    /// The bucket index of `hash` in the current table (`(n - 1) & hash`).
    fn index(&self, hash: u32) -> usize {
        // On targets with a `usize` narrower than 32 bits the cast keeps the low bits, which are
        // all the mask needs.
        (hash as usize) & (self.buckets.len() - 1)
    }

    /// `putVal` for a key known to be absent: append it to its bucket, then apply Java's two
    /// resize triggers in Java's order.
    fn put_new(&mut self, hash: u32, key_index: usize) {
        let index = self.index(hash);
        let bin_len = match self.buckets.get_mut(index) {
            Some(bucket) => {
                bucket.push((hash, key_index));
                bucket.len()
            }
            None => 0,
        };
        if bin_len > TREEIFY_THRESHOLD && self.buckets.len() < MIN_TREEIFY_CAPACITY {
            // `treeifyBin` on a small table resizes instead.
            self.resize();
        }
        self.size += 1;
        if self.size > self.threshold {
            self.resize();
        }
    }

    /// `resize()` of an allocated table: double the capacity and split every bucket into the
    /// new table, keeping each bucket's relative order.
    fn resize(&mut self) {
        let capacity = self.buckets.len();
        if capacity >= MAXIMUM_CAPACITY {
            self.threshold = usize::MAX;
            return;
        }
        let new_capacity = capacity * 2;
        let mut buckets: Vec<Vec<(u32, usize)>> = Vec::new();
        buckets.resize_with(new_capacity, Vec::new);
        for (hash, key_index) in self.buckets.drain(..).flatten() {
            // Same truncation note as in `index`.
            if let Some(bucket) = buckets.get_mut((hash as usize) & (new_capacity - 1)) {
                bucket.push((hash, key_index));
            }
        }
        self.buckets = buckets;
        self.threshold = if new_capacity < MAXIMUM_CAPACITY {
            self.threshold * 2
        } else {
            usize::MAX
        };
    }

    /// The key indices in iteration order: buckets ascending, each in list order.
    fn into_order(self) -> Vec<usize> {
        let mut order = Vec::with_capacity(self.size);
        order.extend(self.buckets.into_iter().flatten().map(|(_, index)| index));
        order
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The keys of `hash_map_order(keys)` in order.
    fn ordered<'a>(keys: &[&'a str]) -> Vec<&'a str> {
        hash_map_order(keys).into_iter().map(|i| keys[i]).collect()
    }

    #[test]
    fn string_hash_code_matches_java() {
        assert_eq!(string_hash_code(""), 0);
        assert_eq!(string_hash_code("a"), 97);
        // Values computed with Python over the UTF-16 code units.
        assert_eq!(string_hash_code("connector-foo"), -340_588_730);
        assert_eq!(string_hash_code("task-my-conn-12"), 1_739_269_769);
        // U+1F600 is the surrogate pair D83D DE00: 0xD83D * 31 + 0xDE00.
        assert_eq!(string_hash_code("😀"), 1_772_899);
        assert_eq!(string_hash_code("a😀b"), 57_849_694);
        assert_eq!(string_hash_code("Aa"), 2_112);
        assert_eq!(string_hash_code("BB"), 2_112);
        assert_eq!(string_hash_code("kafka_topic"), -37_997_866);
        assert_eq!(string_hash_code("kafka_partition"), 164_973_841);
    }

    #[test]
    fn spec_examples() {
        assert_eq!(
            ordered(&["kafka_topic", "kafka_partition"]),
            ["kafka_partition", "kafka_topic"]
        );
        assert_eq!(
            ordered(&["database", "table", "shard"]),
            ["database", "shard", "table"]
        );
        assert_eq!(ordered(&["b", "a", "c"]), ["a", "b", "c"]);
        assert_eq!(ordered(&["filename", "position"]), ["filename", "position"]);
    }

    #[test]
    fn empty_and_single() {
        let none: [&str; 0] = [];
        assert_eq!(hash_map_order(&none), Vec::<usize>::new());
        assert_eq!(hash_map_order(&["only"]), [0]);
        assert_eq!(hash_map_order(&[""]), [0]);
    }

    #[test]
    fn accepts_owned_strings() {
        let keys: Vec<alloc::string::String> = ["b", "a"].iter().map(|&k| k.into()).collect();
        assert_eq!(hash_map_order(&keys), [1, 0]);
    }

    /// 14 Connect config keys. Hash codes and buckets computed with Python
    /// (`h ^ (h >>> 16)` masked with 15 and with 31); every expected order in this module was
    /// also checked against `java.util.HashMap` on JDK 25.
    ///
    /// | # | key                      | hashCode    | @16 | @32 |
    /// |---|--------------------------|-------------|-----|-----|
    /// | 0 | connector.class          | -862495593  | 0   | 0   |
    /// | 1 | tasks.max                | 197300996   | 6   | 6   |
    /// | 2 | topics                   | -868034268  | 6   | 6   |
    /// | 3 | key.converter            | -364097327  | 13  | 29  |
    /// | 4 | value.converter          | -1304947357 | 11  | 27  |
    /// | 5 | name                     | 3373707     | 8   | 24  |
    /// | 6 | errors.tolerance         | 1953704266  | 9   | 25  |
    /// | 7 | transforms               | -1727069561 | 8   | 8   |
    /// | 8 | topic.prefix             | 786638897   | 2   | 18  |
    /// | 9 | batch.size               | -313346507  | 7   | 7   |
    /// | 10| poll.interval.ms         | -2108191808 | 7   | 23  |
    /// | 11| file                     | 3143036     | 3   | 19  |
    /// | 12| header.converter         | -28134529   | 13  | 13  |
    /// | 13| offset.flush.interval.ms | -1432709398 | 0   | 16  |
    const CONFIG_KEYS: [&str; 14] = [
        "connector.class",
        "tasks.max",
        "topics",
        "key.converter",
        "value.converter",
        "name",
        "errors.tolerance",
        "transforms",
        "topic.prefix",
        "batch.size",
        "poll.interval.ms",
        "file",
        "header.converter",
        "offset.flush.interval.ms",
    ];

    #[test]
    fn config_key_hash_codes() {
        let expected = [
            -862_495_593,
            197_300_996,
            -868_034_268,
            -364_097_327,
            -1_304_947_357,
            3_373_707,
            1_953_704_266,
            -1_727_069_561,
            786_638_897,
            -313_346_507,
            -2_108_191_808,
            3_143_036,
            -28_134_529,
            -1_432_709_398,
        ];
        for (key, hash) in CONFIG_KEYS.iter().zip(expected) {
            assert_eq!(string_hash_code(key), hash, "{key}");
        }
    }

    #[test]
    fn twelve_keys_stay_in_sixteen_buckets() {
        // Sorted by (bucket @16, insertion): 0:[0] 2:[8] 3:[11] 6:[1,2] 7:[9,10] 8:[5,7] 9:[6]
        // 11:[4] 13:[3].
        assert_eq!(
            hash_map_order(&CONFIG_KEYS[..12]),
            [0, 8, 11, 1, 2, 9, 10, 5, 7, 6, 4, 3]
        );
    }

    #[test]
    fn thirteenth_key_resizes_to_thirty_two_buckets() {
        // Sorted by (bucket @32, insertion): 0:[0] 6:[1,2] 7:[9] 8:[7] 13:[12] 18:[8] 19:[11]
        // 23:[10] 24:[5] 25:[6] 27:[4] 29:[3].
        assert_eq!(
            hash_map_order(&CONFIG_KEYS[..13]),
            [0, 1, 2, 9, 7, 12, 8, 11, 10, 5, 6, 4, 3]
        );
        // ... plus 16:[13].
        assert_eq!(
            hash_map_order(&CONFIG_KEYS),
            [0, 1, 2, 9, 7, 12, 13, 8, 11, 10, 5, 6, 4, 3]
        );
        // Bucket 6 (`tasks.max`, `topics`) kept its insertion order through the resize; so did
        // `batch.size` before `poll.interval.ms`, which were split apart.
    }

    #[test]
    fn colliding_keys_keep_insertion_order() {
        // "Aa" and "BB" both hash to 2112 (checked with Python), so they share a bucket.
        assert_eq!(ordered(&["BB", "Aa"]), ["BB", "Aa"]);
        assert_eq!(ordered(&["Aa", "BB"]), ["Aa", "BB"]);
        assert_eq!(ordered(&["BB", "x", "Aa"]), ["BB", "Aa", "x"]);
    }

    /// Sixteen strings with the same hash code, -540425984 (checked with Python), which is in
    /// bucket 9 at capacities 16, 32 and 64.
    const COLLIDING: [&str; 16] = [
        "AaAaAaAa", "AaAaAaBB", "AaAaBBAa", "AaAaBBBB", "AaBBAaAa", "AaBBAaBB", "AaBBBBAa",
        "AaBBBBBB", "BBAaAaAa", "BBAaAaBB", "BBAaBBAa", "BBAaBBBB", "BBBBAaAa", "BBBBAaBB",
        "BBBBBBAa", "BBBBBBBB",
    ];

    #[test]
    fn long_bucket_in_small_table_resizes() {
        assert!(COLLIDING
            .iter()
            .all(|k| string_hash_code(k) == -540_425_984));
        // name: bucket 8 @16, 24 @32, 56 @64; transforms: 8 everywhere; file: 3 @16, 19 @32.
        let mut keys = alloc::vec!["name", "transforms", "file"];
        keys.extend_from_slice(&COLLIDING[..8]);
        // 11 keys, bucket 9 holds 8: still 16 buckets.
        assert_eq!(hash_map_order(&keys), [2, 0, 1, 3, 4, 5, 6, 7, 8, 9, 10]);
        // The 9th colliding key makes `treeifyBin` resize to 32 although size 12 <= 12.
        keys.push(COLLIDING[8]);
        assert_eq!(
            hash_map_order(&keys),
            [1, 3, 4, 5, 6, 7, 8, 9, 10, 11, 2, 0]
        );

        // key90: hashCode 101943734, bucket 5 @32 but 37 @64. The 10th colliding key makes
        // `treeifyBin` resize again, to 64.
        let mut keys = alloc::vec!["key90", "transforms"];
        keys.extend_from_slice(&COLLIDING[..9]);
        assert_eq!(hash_map_order(&keys), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
        keys.push(COLLIDING[9]);
        assert_eq!(
            hash_map_order(&keys),
            [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 0]
        );
    }

    #[test]
    fn duplicate_keys_keep_their_first_position() {
        assert_eq!(hash_map_order(&["b", "a", "b", "c", "a"]), [1, 0, 3]);
        assert_eq!(hash_map_order(&["x", "x", "x"]), [0]);
        assert_eq!(hash_map_order(&["BB", "Aa", "BB"]), [0, 1]);
        // Re-putting existing keys never counts towards the resize threshold: 12 distinct keys
        // plus repeats stay in 16 buckets.
        let mut keys: Vec<&str> = CONFIG_KEYS[..12].to_vec();
        keys.extend_from_slice(&CONFIG_KEYS[..12]);
        assert_eq!(
            hash_map_order(&keys),
            [0, 8, 11, 1, 2, 9, 10, 5, 7, 6, 4, 3]
        );
    }

    /// Java's `hashCode()` of what Jackson reads: `Integer`, `Long`, `Double`, `Boolean`,
    /// `String`, `null`, `List`, `Map` (values computed by Java's formulas).
    #[test]
    fn jackson_hash_codes_follow_javas_formulas() {
        use super::super::{JavaDouble, JsonObject, JsonValue};
        assert_eq!(jackson_hash_code(&JsonValue::Long(5)), 5);
        assert_eq!(jackson_hash_code(&JsonValue::Long(-7)), -7, "an Integer");
        // Long.hashCode(1 << 40) = (int)(v ^ (v >>> 32)) = 256.
        assert_eq!(jackson_hash_code(&JsonValue::Long(1 << 40)), 256);
        assert_eq!(
            jackson_hash_code(&JsonValue::Double(JavaDouble::new(1.5))),
            0x3FF8_0000
        );
        assert_eq!(
            jackson_hash_code(&JsonValue::Double(JavaDouble::new(0.0))),
            0
        );
        assert_eq!(
            jackson_hash_code(&JsonValue::Double(JavaDouble::new(-0.0))),
            i32::MIN,
            "-0.0 has the sign bit"
        );
        assert_eq!(jackson_hash_code(&JsonValue::Bool(true)), 1231);
        assert_eq!(jackson_hash_code(&JsonValue::Null), 0);
        assert_eq!(jackson_hash_code(&JsonValue::String("a".into())), 97);
        // List.hashCode([1, 2]) = 31 * (31 * 1 + 1) + 2.
        let list = JsonValue::Array(alloc::vec![JsonValue::Long(1), JsonValue::Long(2)]);
        assert_eq!(jackson_hash_code(&list), 994);
        let mut map = JsonObject::new();
        map.insert("a".into(), JsonValue::Long(1));
        assert_eq!(map_hash_code(&map), 97 ^ 1);
        // Buckets 2 and 1 of 16: the second key is iterated first; 1 and 17 share bucket 1.
        assert_eq!(hash_map_order_by_hash(&[2, 17]), [1, 0]);
        assert_eq!(hash_map_order_by_hash(&[17, 1]), [0, 1]);
    }

    /// `BigInteger.hashCode()` as Java computes it (values worked out from its definition:
    /// `mag` words most significant first, `31 * h + word`, times the sign).
    #[test]
    fn big_integers_hash_as_java_hashes_them() {
        assert_eq!(big_integer_hash_code("18446744073709551615"), -32);
        assert_eq!(big_integer_hash_code("9223372036854775808"), i32::MIN);
        assert_eq!(big_integer_hash_code("-9223372036854775809"), i32::MAX);
        assert_eq!(big_integer_hash_code("0"), 0);
        assert_eq!(big_integer_hash_code("5"), 5);
    }

    proptest::proptest! {
        /// The first table's shortcut gives the table model's order, repeats (one letter)
        /// and shared buckets (16 of them) included, and declines only beyond eight distinct
        /// names.
        #[test]
        fn the_small_map_order_is_the_tables(
            keys in proptest::collection::vec(
                proptest::prop_oneof!["[a-p]", "[a-z]{2,4}"],
                0..12,
            ),
        ) {
            let distinct = keys.iter().collect::<BTreeSet<_>>().len();
            match small_map_order(&keys) {
                Some(order) => proptest::prop_assert_eq!(order, table_order(&keys)),
                None => proptest::prop_assert!(distinct > TREEIFY_THRESHOLD),
            }
            proptest::prop_assert_eq!(hash_map_order(&keys), table_order(&keys));
        }
    }
}
