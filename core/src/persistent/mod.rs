//! Persistent (structurally shared) ordered maps and sets: the collections snapshots share with
//! the machine that keeps writing.
//!
//! A [`PMap`] is a B-tree whose nodes sit behind reference counts. Cloning one is O(1) (the root
//! is shared); a write copies only the nodes on the path to the changed entry that a clone still
//! shares, so a write after a snapshot costs O(log n) in time and memory instead of a deep copy
//! of the whole map. While nothing else holds its nodes, a map is changed in place, like a
//! `BTreeMap`.
//!
//! Why our own and not a crate: the core is `no_std` + `alloc`, and the snapshot goal holds the
//! offsets state to 2x its raw bytes and its replay to the speed of a `BTreeSet`. Measured on
//! the development machine (1M live offsets-like keys of ~90 raw bytes, one write per step, a
//! clone held after every write; system allocator): `rpds`' red-black tree (no_std) 3.06x raw
//! bytes; `immutable-chunkmap` (no_std) 4-5x slower per write than `BTreeSet` with no clone
//! held; `imbl`'s B-tree needs `std`. This tree stores entries in nodes of at most
//! [`MAX_ENTRIES`] like `std`'s `BTreeMap`, so memory matches it (the bench's
//! `offsets_memory_ratio` row), and the bench's `tail_with_snapshot_ratio` row measures the
//! copying.

mod iter;
mod node;
mod serde_impls;
#[cfg(test)]
mod tests;

use core::borrow::Borrow;
use core::cmp::Ordering;
use core::fmt;
use core::ops::RangeBounds;

use alloc::borrow::ToOwned;
use alloc::vec::Vec;
use arrayvec::ArrayVec;

// triomphe's `Arc` has no weak count: `make_mut` on the unique nodes of a write path is one load,
// not std's compare-and-swap.
pub use iter::{Iter, Keys, Range, SetRange, Values};
use node::Node;
use triomphe::Arc;

/// How a lookup key compares with a map's stored keys. Every `Q: Ord` that the stored key
/// borrows as compares as that (`String` keys looked up by `&str`); a type of its own serves
/// where the stored key cannot lend one (the offsets state orders by a hash beside the entry
/// and key bytes inside it), with no dynamic dispatch in the nodes' searches.
pub trait Comparable<K: ?Sized> {
    /// How `self` orders against `stored`.
    fn compare(&self, stored: &K) -> Ordering;
}

impl<Q: Ord + ?Sized, K: Borrow<Q> + ?Sized> Comparable<K> for Q {
    fn compare(&self, stored: &K) -> Ordering {
        self.cmp(stored.borrow())
    }
}

/// How a lookup key becomes a stored key, when [`set`](PMap::set) or
/// [`get_or_insert_with`](PMap::get_or_insert_with) insert it: `to_owned` for every `Q` that
/// has an owned form (`&str` for `String` keys), or a type's own conversion (a
/// [`NameKey`](crate::name::NameKey) for [`Name`](crate::name::Name) keys).
pub trait ToKey<K> {
    /// The stored key equal to `self`.
    fn to_key(&self) -> K;
}

impl<Q: ToOwned + ?Sized> ToKey<Q::Owned> for Q {
    fn to_key(&self) -> Q::Owned {
        self.to_owned()
    }
}

/// The most entries a node holds (as in `std`'s `BTreeMap`). Larger nodes make the offsets
/// replay faster (fewer levels, each a cache miss or two) and a write after a snapshot dearer
/// (it copies, and counts a reference to, every entry of the nodes on its path): measured with
/// `bench --phase offsets`, 13 gained about 5% on the replay and 2 bytes per live entry, but
/// the tail with a snapshot held went from 2.43-2.61x to 2.55-3.13x (its goal is 3x); 17 and 21
/// passed the goal more often.
pub const MAX_ENTRIES: usize = 11;
/// The fewest entries a node other than the root holds.
const MIN_ENTRIES: usize = MAX_ENTRIES / 2;
/// Deeper than any tree can grow: below the root every node has at least `MIN_ENTRIES + 1`
/// children, and `(MIN_ENTRIES + 1)^25` exceeds `usize::MAX`.
pub(crate) const MAX_DEPTH: usize = 32;

/// Where an entry is in a tree: the child taken at each level, then its index in the node.
#[derive(Default)]
struct Path {
    children: ArrayVec<u8, MAX_DEPTH>,
    entry: usize,
}

/// A persistent ordered map: `BTreeMap`'s semantics, O(1) clones, copy-on-write nodes.
///
/// Iteration is in key order. [`insert`](Self::insert) replaces the stored key as well as the
/// value (callers whose equal keys carry other data rely on this).
pub struct PMap<K, V> {
    root: Option<Arc<Node<K, V>>>,
    len: usize,
}

/// A persistent ordered set: a [`PMap`] without values.
pub struct PSet<K>(PMap<K, ()>);

impl<K, V> Clone for PMap<K, V> {
    /// O(1): the clone shares every node.
    fn clone(&self) -> Self {
        Self {
            root: self.root.clone(),
            len: self.len,
        }
    }
}

impl<K, V> Default for PMap<K, V> {
    fn default() -> Self {
        Self::new()
    }
}

impl<K, V> PMap<K, V> {
    /// An empty map.
    pub const fn new() -> Self {
        Self { root: None, len: 0 }
    }

    /// How many entries the map holds.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the map holds no entry.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The entries in key order.
    pub fn iter(&self) -> Iter<'_, K, V> {
        Iter::new(self.root.as_deref(), self.len)
    }

    /// The keys in order.
    pub fn keys(&self) -> Keys<'_, K, V> {
        Keys(self.iter())
    }

    /// The values in key order.
    pub fn values(&self) -> Values<'_, K, V> {
        Values(self.iter())
    }
}

impl<K: Ord, V> PMap<K, V> {
    /// The value stored under `key`.
    pub fn get<Q>(&self, key: &Q) -> Option<&V>
    where
        Q: Comparable<K> + ?Sized,
    {
        self.get_key_value(key).map(|(_, v)| v)
    }

    /// The stored key and value equal to `key`.
    pub fn get_key_value<Q>(&self, key: &Q) -> Option<(&K, &V)>
    where
        Q: Comparable<K> + ?Sized,
    {
        let mut node = self.root.as_deref()?;
        loop {
            match node.search(key) {
                Ok(i) => return node.entries.get(i).map(|(k, v)| (k, v)),
                Err(i) => node = node.children.get(i)?,
            }
        }
    }

    /// Whether `key` is stored.
    pub fn contains_key<Q>(&self, key: &Q) -> bool
    where
        Q: Comparable<K> + ?Sized,
    {
        self.get_key_value(key).is_some()
    }

    /// The entries with keys in `range`, in order.
    pub fn range<Q, R>(&self, range: R) -> Range<'_, K, V>
    where
        Q: Comparable<K> + ?Sized,
        R: RangeBounds<Q>,
    {
        Range::new(self.root.as_deref(), range)
    }
}

impl<K: Ord + Clone, V: Clone> PMap<K, V> {
    /// The value under `key`, to change in place. Copies the nodes on its path that a clone
    /// shares; nothing when the key is absent.
    pub fn get_mut<Q>(&mut self, key: &Q) -> Option<&mut V>
    where
        Q: Comparable<K> + ?Sized,
    {
        self.entry_mut(key).map(|(_, v)| v)
    }

    /// The stored entry equal to `key`, to change in place: the search compares keys once, on
    /// the shared nodes, then makes unique only the nodes of the path it found.
    fn entry_mut<Q>(&mut self, key: &Q) -> Option<&mut (K, V)>
    where
        Q: Comparable<K> + ?Sized,
    {
        let path = self.path_to(key)?;
        self.entry_at(&path)
    }

    /// Where `key` is stored: the child index at each level, then the entry's index in its
    /// node. Reads the shared nodes only.
    fn path_to<Q>(&self, key: &Q) -> Option<Path>
    where
        Q: Comparable<K> + ?Sized,
    {
        let mut path = Path::default();
        let mut node = self.root.as_deref()?;
        loop {
            match node.search(key) {
                Ok(i) => {
                    path.entry = i;
                    return Some(path);
                }
                Err(i) => {
                    node = node.children.get(i)?;
                    // A tree of `usize` entries is at most `MAX_DEPTH` deep.
                    path.children.try_push(u8::try_from(i).ok()?).ok()?;
                }
            }
        }
    }

    /// The entry at `path` (from [`path_to`](Self::path_to), with no change in between),
    /// making unique the nodes on the way.
    fn entry_at(&mut self, path: &Path) -> Option<&mut (K, V)> {
        let mut node = Arc::make_mut(self.root.as_mut()?);
        for &i in &path.children {
            node = Arc::make_mut(node.children.get_mut(usize::from(i))?);
        }
        node.entries.get_mut(path.entry)
    }

    /// The value under `key`, inserting `make()` first when the key is absent. One search
    /// when the key is present, and an owned key is made only when it is absent.
    pub fn get_or_insert_with<Q>(&mut self, key: &Q, make: impl FnOnce() -> V) -> &mut V
    where
        Q: Comparable<K> + ToKey<K> + ?Sized,
    {
        let path = match self.path_to(key) {
            Some(path) => path,
            None => {
                self.insert(key.to_key(), make());
                match self.path_to(key) {
                    Some(path) => path,
                    // The key was just inserted; a map that lost it would be a broken tree.
                    None => unreachable!("PMap lost a key it had just inserted"),
                }
            }
        };
        match self.entry_at(&path) {
            Some((_, value)) => value,
            None => unreachable!("PMap lost the entry it had just found"),
        }
    }

    /// Stores `value` under `key`; returns the old value. Unlike [`insert`](Self::insert), a
    /// present key keeps its stored key and costs one search, no owned key: for the maps whose
    /// keys are mostly present (a connector's entries, set again on every commit).
    pub fn set<Q>(&mut self, key: &Q, value: V) -> Option<V>
    where
        Q: Comparable<K> + ToKey<K> + ?Sized,
    {
        match self.get_mut(key) {
            Some(stored) => Some(core::mem::replace(stored, value)),
            None => self.insert(key.to_key(), value),
        }
    }

    /// Stores `value` under `key`, replacing the stored key and value; returns the old value.
    pub fn insert(&mut self, key: K, value: V) -> Option<V> {
        let Some(root) = self.root.as_mut() else {
            self.root = Some(Arc::new(Node::leaf(key, value)));
            self.len = 1;
            return None;
        };
        let root = Arc::make_mut(root);
        let old = root.insert(key, value);
        root.split_if_overfull();
        if old.is_none() {
            self.len += 1;
        }
        old
    }

    /// [`insert`](Self::insert) in one descent, when no stored key other than one equal to
    /// `key` is `near`; otherwise changes nothing and gives `key` and `value` back (nodes on
    /// the path a clone shares may have been copied). `near` must hold on one contiguous run
    /// of keys that `key`'s place is in or beside (a hash prefix, say): the in-order
    /// neighbours of that place then stand for all of them. Also gives the entry back when a
    /// neighbour is not on the path (an equal key stored in an internal node); the caller
    /// then decides with a lookup, at the cost of another descent.
    pub fn insert_if_alone(
        &mut self,
        key: K,
        value: V,
        near: impl Fn(&K) -> bool,
    ) -> Result<Option<V>, (K, V)> {
        let Some(root) = self.root.as_mut() else {
            return Ok(self.insert(key, value));
        };
        let root = Arc::make_mut(root);
        let old = root.insert_if_alone((key, value), &near, (false, false))?;
        root.split_if_overfull();
        if old.is_none() {
            self.len += 1;
        }
        Ok(old)
    }

    /// Removes `key`; returns its stored key and value. Copies nothing when the key is absent.
    pub fn remove_entry<Q>(&mut self, key: &Q) -> Option<(K, V)>
    where
        Q: Comparable<K> + ?Sized,
    {
        if !self.contains_key(key) {
            return None;
        }
        let root_slot = self.root.as_mut()?;
        let root = Arc::make_mut(root_slot);
        let removed = root.remove(key);
        if root.entries.is_empty() {
            self.root = root.children.pop();
        }
        if removed.is_some() {
            self.len -= 1;
        }
        removed
    }

    /// Removes `key`; returns its value.
    pub fn remove<Q>(&mut self, key: &Q) -> Option<V>
    where
        Q: Comparable<K> + ?Sized,
    {
        self.remove_entry(key).map(|(_, v)| v)
    }

    /// A map of `entries` that are already sorted by key and free of repeats, built bottom-up
    /// in O(n) (checkpoint restores). Unsorted input is sorted first (see `FromIterator`).
    fn from_sorted(entries: Vec<(K, V)>) -> Self {
        let len = entries.len();
        let root = (len > 0).then(|| Arc::new(Node::build(entries)));
        Self { root, len }
    }
}

impl<K: Ord + Clone, V: Clone> FromIterator<(K, V)> for PMap<K, V> {
    /// Like `BTreeMap`'s: a later entry replaces an earlier one with an equal key.
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        let mut entries: Vec<(K, V)> = iter.into_iter().collect();
        if !entries.windows(2).all(|w| w[0].0 < w[1].0) {
            // Stable, so that among equal keys the last one read is the last one kept.
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            let mut kept: Vec<(K, V)> = Vec::with_capacity(entries.len());
            for entry in entries {
                match kept.last_mut() {
                    Some(last) if last.0 == entry.0 => *last = entry,
                    _ => kept.push(entry),
                }
            }
            entries = kept;
        }
        Self::from_sorted(entries)
    }
}

impl<K: PartialEq, V: PartialEq> PartialEq for PMap<K, V> {
    fn eq(&self, other: &Self) -> bool {
        let same_root = match (&self.root, &other.root) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            (None, None) => true,
            _ => false,
        };
        same_root || (self.len == other.len && self.iter().eq(other.iter()))
    }
}

impl<K: Eq, V: Eq> Eq for PMap<K, V> {}

impl<K: fmt::Debug, V: fmt::Debug> fmt::Debug for PMap<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl<'a, K, V> IntoIterator for &'a PMap<K, V> {
    type Item = (&'a K, &'a V);
    type IntoIter = Iter<'a, K, V>;

    fn into_iter(self) -> Iter<'a, K, V> {
        self.iter()
    }
}

impl<K> Clone for PSet<K> {
    /// O(1): the clone shares every node.
    fn clone(&self) -> Self {
        Self(self.0.clone())
    }
}

impl<K> Default for PSet<K> {
    fn default() -> Self {
        Self(PMap::new())
    }
}

impl<K> PSet<K> {
    /// An empty set.
    pub const fn new() -> Self {
        Self(PMap::new())
    }

    /// How many keys the set holds.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether the set holds no key.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The keys in order.
    pub fn iter(&self) -> Keys<'_, K, ()> {
        self.0.keys()
    }
}

impl<K: Ord> PSet<K> {
    /// Whether `key` is in the set.
    pub fn contains<Q>(&self, key: &Q) -> bool
    where
        Q: Comparable<K> + ?Sized,
    {
        self.0.contains_key(key)
    }

    /// The stored key equal to `key`.
    pub fn get<Q>(&self, key: &Q) -> Option<&K>
    where
        Q: Comparable<K> + ?Sized,
    {
        self.0.get_key_value(key).map(|(k, ())| k)
    }

    /// The keys in `range`, in order.
    pub fn range<Q, R>(&self, range: R) -> SetRange<'_, K>
    where
        Q: Comparable<K> + ?Sized,
        R: RangeBounds<Q>,
    {
        SetRange(self.0.range(range))
    }
}

impl<K: Ord + Clone> PSet<K> {
    /// Adds `key`, replacing an equal stored key; returns whether none was stored.
    pub fn insert(&mut self, key: K) -> bool {
        self.0.insert(key, ()).is_none()
    }

    /// [`PMap::insert_if_alone`] for a set: adds `key` in one descent, replacing an equal
    /// stored key, when no other stored key is `near`; otherwise gives `key` back. Returns
    /// whether none was stored.
    pub fn insert_if_alone(&mut self, key: K, near: impl Fn(&K) -> bool) -> Result<bool, K> {
        match self.0.insert_if_alone(key, (), near) {
            Ok(old) => Ok(old.is_none()),
            Err((key, ())) => Err(key),
        }
    }

    /// Removes `key`; returns whether it was stored.
    pub fn remove<Q>(&mut self, key: &Q) -> bool
    where
        Q: Comparable<K> + ?Sized,
    {
        self.0.remove_entry(key).is_some()
    }

    /// Changes the stored key equal to `key` in place with `change`; returns whether one was
    /// stored. `change` must leave the key equal to `key` (the part that orders it unchanged):
    /// for keys that carry data beside what orders them.
    pub fn update<Q>(&mut self, key: &Q, change: impl FnOnce(&mut K)) -> bool
    where
        Q: Comparable<K> + ?Sized,
    {
        let Some((stored, ())) = self.0.entry_mut(key) else {
            return false;
        };
        change(stored);
        debug_assert!(
            key.compare(stored).is_eq(),
            "PSet::update changed a key's order"
        );
        true
    }

    /// Removes and returns the stored key equal to `key`.
    pub fn take<Q>(&mut self, key: &Q) -> Option<K>
    where
        Q: Comparable<K> + ?Sized,
    {
        self.0.remove_entry(key).map(|(k, ())| k)
    }
}

impl<K: Ord + Clone> FromIterator<K> for PSet<K> {
    fn from_iter<I: IntoIterator<Item = K>>(iter: I) -> Self {
        Self(iter.into_iter().map(|k| (k, ())).collect())
    }
}

impl<K: PartialEq> PartialEq for PSet<K> {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0
    }
}

impl<K: Eq> Eq for PSet<K> {}

impl<K: fmt::Debug> fmt::Debug for PSet<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

impl<'a, K> IntoIterator for &'a PSet<K> {
    type Item = &'a K;
    type IntoIter = Keys<'a, K, ()>;

    fn into_iter(self) -> Keys<'a, K, ()> {
        self.iter()
    }
}
