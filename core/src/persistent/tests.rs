use alloc::collections::{BTreeMap, BTreeSet};
use alloc::vec::Vec;
use core::ops::Bound;

use proptest::prelude::*;

use super::node::check;
use super::{PMap, PSet};

fn checked<K: Ord, V>(map: &PMap<K, V>) {
    let counted = map.root.as_deref().map_or(0, check);
    assert_eq!(counted, map.len(), "len matches the tree");
}

#[derive(Debug, Clone)]
enum Op {
    Insert(u16, u32),
    Remove(u16),
    Mutate(u16),
    /// `set`: the value replaced through a borrowed key.
    Set(u16, u32),
    /// `get_or_insert_with`, then the value incremented.
    GetOrInsert(u16, u32),
    /// Keep a clone, as a snapshot would.
    Snapshot,
}

fn op() -> impl Strategy<Value = Op> {
    // Keys from a small range so that removals and replacements hit.
    prop_oneof![
        4 => (0u16..400, any::<u32>()).prop_map(|(k, v)| Op::Insert(k, v)),
        3 => (0u16..400).prop_map(Op::Remove),
        1 => (0u16..400).prop_map(Op::Mutate),
        2 => (0u16..400, any::<u32>()).prop_map(|(k, v)| Op::Set(k, v)),
        1 => (0u16..400, any::<u32>()).prop_map(|(k, v)| Op::GetOrInsert(k, v)),
        1 => Just(Op::Snapshot),
    ]
}

proptest! {
    /// Every operation answers as `BTreeMap`'s does, the tree stays balanced, and every clone
    /// taken along the way still holds exactly what the map held when it was taken.
    #[test]
    fn behaves_as_a_btreemap_and_clones_never_change(ops in proptest::collection::vec(op(), 0..2000)) {
        let mut map = PMap::new();
        let mut model = BTreeMap::new();
        let mut snapshots: Vec<(PMap<u16, u32>, BTreeMap<u16, u32>)> = Vec::new();
        for op in ops {
            match op {
                Op::Insert(k, v) => prop_assert_eq!(map.insert(k, v), model.insert(k, v)),
                Op::Remove(k) => prop_assert_eq!(map.remove(&k), model.remove(&k)),
                Op::Mutate(k) => {
                    let ours = map.get_mut(&k).map(|v| { *v = v.wrapping_add(1); *v });
                    let theirs = model.get_mut(&k).map(|v| { *v = v.wrapping_add(1); *v });
                    prop_assert_eq!(ours, theirs);
                }
                Op::Set(k, v) => prop_assert_eq!(map.set(&k, v), model.insert(k, v)),
                Op::GetOrInsert(k, v) => {
                    let ours = map.get_or_insert_with(&k, || v);
                    *ours = ours.wrapping_add(1);
                    let ours = *ours;
                    let theirs = model.entry(k).or_insert(v);
                    *theirs = theirs.wrapping_add(1);
                    prop_assert_eq!(ours, *theirs);
                }
                Op::Snapshot => snapshots.push((map.clone(), model.clone())),
            }
            prop_assert_eq!(map.len(), model.len());
        }
        checked(&map);
        prop_assert!(map.iter().eq(model.iter()));
        for k in 0..400u16 {
            prop_assert_eq!(map.get(&k), model.get(&k));
        }
        for (snapshot, expected) in &snapshots {
            checked(snapshot);
            prop_assert!(snapshot.iter().eq(expected.iter()));
        }
    }

    /// Ranges with every kind of bound list what `BTreeMap`'s do.
    #[test]
    fn ranges_match_btreemap(
        keys in proptest::collection::vec(0u16..300, 0..600),
        low in 0u16..310,
        high in 0u16..310,
        kinds in (0u8..3, 0u8..3),
    ) {
        let map: PMap<u16, ()> = keys.iter().map(|k| (*k, ())).collect();
        let model: BTreeMap<u16, ()> = keys.iter().map(|k| (*k, ())).collect();
        checked(&map);
        let bound = |kind: u8, at: u16| match kind {
            0 => Bound::Unbounded,
            1 => Bound::Included(at),
            _ => Bound::Excluded(at),
        };
        let range = (bound(kinds.0, low), bound(kinds.1, high));
        // BTreeMap panics on a reversed range; ours is then empty.
        let reversed = match range {
            (Bound::Included(a) | Bound::Excluded(a), Bound::Included(b) | Bound::Excluded(b)) => {
                a > b || (a == b && !matches!(range, (Bound::Included(_), Bound::Included(_))))
            }
            _ => false,
        };
        let ours: Vec<u16> = map.range(range).map(|(k, ())| *k).collect();
        if reversed {
            prop_assert!(ours.is_empty());
        } else {
            let theirs: Vec<u16> = model.range(range).map(|(k, ())| *k).collect();
            prop_assert_eq!(ours, theirs);
        }
    }
}

proptest! {
    /// `insert_if_alone` with `near` as "same group of eight keys" (a contiguous run): it
    /// inserts exactly when no other key of the group is stored, always decides a key not yet
    /// stored, changes nothing when it gives the key back, and leaves clones as they were.
    #[test]
    fn insert_if_alone_inserts_exactly_when_no_other_key_is_near(
        setup in proptest::collection::vec(0u16..400, 0..600),
        inserts in proptest::collection::vec((0u16..400, any::<bool>()), 0..300),
    ) {
        let group = |k: u16| k / 8;
        let mut set: PSet<u16> = setup.iter().copied().collect();
        let mut model: BTreeSet<u16> = setup.iter().copied().collect();
        let mut snapshots = Vec::new();
        for (key, snapshot) in inserts {
            if snapshot {
                snapshots.push((set.clone(), model.clone()));
            }
            let others = model.iter().any(|&k| k != key && group(k) == group(key));
            match set.insert_if_alone(key, |&k| group(k) == group(key)) {
                Ok(added) => {
                    prop_assert!(!others, "{} inserted beside another key of its group", key);
                    prop_assert_eq!(added, model.insert(key));
                }
                Err(back) => {
                    prop_assert_eq!(back, key);
                    prop_assert!(others || model.contains(&key), "{} alone but refused", key);
                }
            }
            checked(&set.0);
            prop_assert!(set.iter().eq(model.iter()));
        }
        for (snapshot, expected) in &snapshots {
            checked(&snapshot.0);
            prop_assert!(snapshot.iter().eq(expected.iter()));
        }
    }
}

/// Bulk building makes a balanced tree at every size, including around the capacity steps.
#[test]
fn bulk_built_trees_are_balanced_at_every_size() {
    let sizes = (0..2000).chain([1727, 1728, 1729, 20735, 20736, 20737, 100_000]);
    for n in sizes {
        let map: PMap<u32, u32> = (0..n).map(|k| (k, k * 2)).collect();
        checked(&map);
        assert_eq!(map.len(), n as usize);
        assert!(map.iter().map(|(k, _)| *k).eq(0..n));
    }
}

/// Nodes (count, entries) of the tree under `node`.
fn node_fill<K, V>(node: &super::node::Node<K, V>) -> (usize, usize) {
    node.children
        .iter()
        .map(|child| node_fill(child))
        .fold((1, node.entries.len()), |(n, e), (cn, ce)| (n + cn, e + ce))
}

/// A bulk build fills its nodes about as inserts in random order do, not to the brim: the
/// first writes after it split few nodes.
#[test]
fn bulk_built_nodes_are_as_full_as_grown_ones() {
    for n in [5_000u32, 100_000, 990_000] {
        let map: PMap<u32, ()> = (0..n).map(|k| (k, ())).collect();
        let (nodes, entries) = node_fill(map.root.as_deref().unwrap());
        let mean = entries as f64 / nodes as f64;
        assert!((8.0..=9.5).contains(&mean), "{n} entries: {mean} per node");
        // The same keys inserted in a shuffled order (xorshift, Fisher-Yates).
        let mut keys: Vec<u32> = (0..n).collect();
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for i in (1..keys.len()).rev() {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            keys.swap(i, (x % (i as u64 + 1)) as usize);
        }
        let mut grown = PMap::new();
        for k in keys {
            grown.insert(k, ());
        }
        let (grown_nodes, _) = node_fill(grown.root.as_deref().unwrap());
        assert!(
            nodes.abs_diff(grown_nodes) * 10 <= grown_nodes,
            "{nodes} nodes built, {grown_nodes} grown"
        );
    }
}

/// Unsorted input with repeats: the last value of a key wins, as in `BTreeMap`.
#[test]
fn collecting_unsorted_input_keeps_the_last_value() {
    let input = [(3, 'a'), (1, 'b'), (3, 'c'), (2, 'd'), (1, 'e')];
    let map: PMap<i32, char> = input.into_iter().collect();
    let model: BTreeMap<i32, char> = input.into_iter().collect();
    checked(&map);
    assert!(map.iter().eq(model.iter()));
}

/// A write after a clone copies only the path to the entry: most nodes stay shared.
#[test]
fn a_write_after_a_clone_copies_one_path() {
    let mut map: PMap<u32, u32> = (0..100_000).map(|k| (k, k)).collect();
    let snapshot = map.clone();
    map.insert(50_000, 0);
    map.insert(200_000, 1);
    map.remove(&10);
    let (Some(a), Some(b)) = (map.root.as_deref(), snapshot.root.as_deref()) else {
        panic!("both maps have roots");
    };
    let shared = a
        .children
        .iter()
        .zip(&b.children)
        .filter(|(x, y)| triomphe::Arc::ptr_eq(x, y))
        .count();
    assert!(
        shared + 3 >= a.children.len(),
        "at most three top-level subtrees were copied"
    );
    assert_eq!(snapshot.get(&50_000), Some(&50_000));
    assert_eq!(snapshot.get(&10), Some(&10));
    assert_eq!(map.get(&10), None);
}

/// Serde forms are those of `BTreeMap` and `BTreeSet`, byte for byte.
#[test]
fn serde_forms_match_the_std_collections() {
    let config = bincode::config::standard();
    let model: BTreeMap<u32, alloc::string::String> = (0..500)
        .map(|k| (k * 7 % 500, alloc::format!("v{k}")))
        .collect();
    let map: PMap<u32, alloc::string::String> = model.clone().into_iter().collect();
    let ours = bincode::serde::encode_to_vec(&map, config).unwrap();
    assert_eq!(ours, bincode::serde::encode_to_vec(&model, config).unwrap());
    let (back, _): (PMap<u32, alloc::string::String>, usize) =
        bincode::serde::decode_from_slice(&ours, config).unwrap();
    assert_eq!(back, map);

    let set_model: BTreeSet<u16> = (0..300).map(|k| k * 3).collect();
    let set: PSet<u16> = set_model.iter().copied().collect();
    let ours = bincode::serde::encode_to_vec(&set, config).unwrap();
    assert_eq!(
        ours,
        bincode::serde::encode_to_vec(&set_model, config).unwrap()
    );
    let (back, _): (PSet<u16>, usize) = bincode::serde::decode_from_slice(&ours, config).unwrap();
    assert_eq!(back, set);
}

#[test]
fn sets_insert_replace_take_and_range() {
    let mut set: PSet<u32> = PSet::new();
    assert!(set.insert(5) && set.insert(1) && !set.insert(5));
    assert!(set.contains(&5) && !set.contains(&2));
    assert_eq!(set.take(&5), Some(5));
    assert!(!set.remove(&5) && set.remove(&1) && set.is_empty());
    let set: PSet<u32> = (0..100).collect();
    assert!(set.range(10..20).copied().eq(10..20));
}

/// A checkpoint map as a writer might have produced it (unsorted, a repeated key) decodes as
/// inserting would: sorted, the last value kept.
#[test]
fn decoding_an_unsorted_map_keeps_the_last_value_of_a_repeated_key() {
    use serde::ser::{SerializeMap, Serializer};
    struct Unsorted;
    impl serde::Serialize for Unsorted {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            let mut map = s.serialize_map(Some(3))?;
            map.serialize_entry(&2u32, "b")?;
            map.serialize_entry(&1u32, "a")?;
            map.serialize_entry(&2u32, "c")?;
            map.end()
        }
    }
    let config = bincode::config::standard();
    let bytes = bincode::serde::encode_to_vec(Unsorted, config).unwrap();
    let (map, _): (PMap<u32, alloc::string::String>, usize) =
        bincode::serde::decode_from_slice(&bytes, config).unwrap();
    checked(&map);
    let expected: BTreeMap<u32, alloc::string::String> = [(1, "a".into()), (2, "c".into())].into();
    assert!(map.iter().eq(expected.iter()));
}

/// A key ordered by its number only, so that equal keys can differ in their tag.
#[derive(Debug, Clone, Copy)]
struct Tagged(u16, &'static str);

impl PartialEq for Tagged {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0
    }
}
impl Eq for Tagged {}
impl PartialOrd for Tagged {
    fn partial_cmp(&self, other: &Self) -> Option<core::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Tagged {
    fn cmp(&self, other: &Self) -> core::cmp::Ordering {
        self.0.cmp(&other.0)
    }
}

#[test]
fn set_keeps_a_present_key_and_insert_replaces_it() {
    let mut map: PMap<Tagged, u32> = (0..100).map(|k| (Tagged(k, "first"), 0)).collect();
    assert_eq!(map.set(&Tagged(7, "second"), 1), Some(0));
    assert_eq!(
        map.get_key_value(&Tagged(7, "")),
        Some((&Tagged(7, "first"), &1))
    );
    assert_eq!(
        map.get_key_value(&Tagged(7, "")).map(|(k, _)| k.1),
        Some("first")
    );
    assert_eq!(map.set(&Tagged(500, "new"), 2), None);
    assert_eq!(
        map.get_key_value(&Tagged(500, "")).map(|(k, _)| k.1),
        Some("new")
    );
    assert_eq!(map.insert(Tagged(7, "third"), 3), Some(1));
    assert_eq!(
        map.get_key_value(&Tagged(7, "")).map(|(k, _)| k.1),
        Some("third")
    );
    checked(&map);
}
