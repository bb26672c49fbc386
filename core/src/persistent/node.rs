//! The B-tree nodes of [`PMap`](super::PMap) and the algorithms that keep them balanced.
//!
//! Invariants (checked by `check` in the tests): every leaf is at the same depth; a node holds
//! at most [`MAX_ENTRIES`] entries, and at least [`MIN_ENTRIES`] unless it is the root; an
//! internal node has one child more than it has entries; entries are ascending, and the entries
//! of child `i` lie between entries `i - 1` and `i`.
//!
//! Every change takes `&mut Node`: the caller has made the node unique with `Arc::make_mut`,
//! and each child the change descends into is made unique the same way, so a write copies only
//! the shared nodes on its path.

use core::cmp::Ordering;

use alloc::vec::Vec;
use arrayvec::ArrayVec;
use thin_vec::ThinVec;

use super::{Comparable, MAX_ENTRIES, MIN_ENTRIES};
// triomphe's `Arc` has no weak count: `make_mut` on the unique nodes of a write path is one load,
// not std's compare-and-swap.
use triomphe::Arc;

/// A node's entries, held in the node itself (one pointer to follow per level, as in `std`'s
/// `BTreeMap`), with room for the one extra entry an insert adds before the node splits.
pub(super) type Entries<K, V> = ArrayVec<(K, V), { MAX_ENTRIES + 1 }>;

/// One node: its entries and, unless it is a leaf, one child more.
#[derive(Clone)]
pub(super) struct Node<K, V> {
    pub(super) entries: Entries<K, V>,
    /// One word wide, and no allocation in a leaf: a leaf of sixteen-byte entries (the
    /// offsets state's) then takes mimalloc's 224-byte class instead of its 256-byte one.
    pub(super) children: ThinVec<Arc<Self>>,
}

// A leaf of sixteen-byte entries (the offsets state's) with its reference count fits mimalloc's
// 224-byte class (`offsets_memory_bytes_per_entry`).
const _: () = assert!(core::mem::size_of::<Node<[u64; 2], ()>>() + 8 <= 224);

/// What a node that overflowed hands its parent: the median entry and the new right sibling.
type Split<K, V> = ((K, V), Arc<Node<K, V>>);

impl<K, V> Node<K, V> {
    pub(super) const fn empty() -> Self {
        Self {
            entries: ArrayVec::new_const(),
            children: ThinVec::new(),
        }
    }

    pub(super) fn leaf(key: K, value: V) -> Self {
        let mut entries = Entries::new();
        entries.push((key, value));
        Self {
            entries,
            children: ThinVec::new(),
        }
    }

    /// A new root over the two halves of a split.
    pub(super) fn parent(left: Self, median: (K, V), right: Arc<Self>) -> Self {
        let mut entries = Entries::new();
        entries.push(median);
        let mut children = ThinVec::with_capacity(5);
        children.push(Arc::new(left));
        children.push(right);
        Self { entries, children }
    }

    pub(super) fn is_leaf(&self) -> bool {
        self.children.is_empty()
    }

    /// Where `key` is (`Ok`) or would go (`Err`: also the child to descend into).
    ///
    /// A linear scan, as in `std`'s `BTreeMap`: over at most [`MAX_ENTRIES`] entries it reads
    /// the node front to back, which the processor prefetches, where a binary search jumps
    /// between its cache lines (measured: the scan made the offsets replay faster).
    pub(super) fn search<Q>(&self, key: &Q) -> Result<usize, usize>
    where
        Q: Comparable<K> + ?Sized,
    {
        for (i, (k, _)) in self.entries.iter().enumerate() {
            match key.compare(k) {
                Ordering::Greater => {}
                Ordering::Equal => return Ok(i),
                Ordering::Less => return Err(i),
            }
        }
        Err(self.entries.len())
    }
}

/// Grows a node's `children` towards one past the most a node has in few steps (4, 8, 13), so
/// a node never holds much more room than a full one needs.
fn reserve_one<T>(children: &mut ThinVec<T>) {
    if children.len() == children.capacity() {
        let target = (children.capacity() * 2).clamp(4, MAX_ENTRIES + 2);
        children.reserve_exact(target.saturating_sub(children.len()).max(1));
    }
}

impl<K: Ord + Clone, V: Clone> Node<K, V> {
    /// Inserts into this subtree; returns the replaced value. This node may be left with one
    /// entry too many (`MAX_ENTRIES + 1`): its parent relieves it ([`relieve`](Self::relieve)),
    /// or the map splits it when it is the root.
    pub(super) fn insert(&mut self, key: K, value: V) -> Option<V> {
        let index = match self.search(&key) {
            Ok(i) => {
                let old = core::mem::replace(&mut self.entries[i], (key, value));
                return Some(old.1);
            }
            Err(i) => i,
        };
        if self.is_leaf() {
            self.entries.insert(index, (key, value));
            return None;
        }
        let old = Arc::make_mut(&mut self.children[index]).insert(key, value);
        if self.children[index].entries.len() > MAX_ENTRIES {
            self.relieve(index);
        }
        old
    }

    /// [`insert`](Self::insert), when neither in-order neighbour of the key's place (an equal
    /// stored key aside) is `near`; otherwise, or when a neighbour is not on the descent path
    /// (an equal key in an internal node), gives the entry back unchanged. `left` and `right`
    /// say whether the nearest entries bounding this subtree, in its ancestors, are `near`.
    pub(super) fn insert_if_alone(
        &mut self,
        (key, value): (K, V),
        near: &impl Fn(&K) -> bool,
        (left, right): (bool, bool),
    ) -> Result<Option<V>, (K, V)> {
        let near_at = |entries: &Entries<K, V>, i: usize, outside: bool| {
            entries.get(i).map_or(outside, |(k, _)| near(k))
        };
        // Read before the search: the load of the children's header then overlaps the scan's.
        let leaf = self.is_leaf();
        match self.search(&key) {
            Ok(i) if leaf => {
                let before = i.checked_sub(1).map_or(left, |b| near(&self.entries[b].0));
                if before || near_at(&self.entries, i + 1, right) {
                    return Err((key, value));
                }
                let old = core::mem::replace(&mut self.entries[i], (key, value));
                Ok(Some(old.1))
            }
            // The neighbours are the last and first entries of the subtrees around it.
            Ok(_) => Err((key, value)),
            Err(i) if leaf => {
                let before = i.checked_sub(1).map_or(left, |b| near(&self.entries[b].0));
                if before || near_at(&self.entries, i, right) {
                    return Err((key, value));
                }
                self.entries.insert(i, (key, value));
                Ok(None)
            }
            Err(i) => {
                let bounds = (
                    i.checked_sub(1).map_or(left, |b| near(&self.entries[b].0)),
                    near_at(&self.entries, i, right),
                );
                let child = Arc::make_mut(&mut self.children[i]);
                let old = child.insert_if_alone((key, value), near, bounds)?;
                if self.children[i].entries.len() > MAX_ENTRIES {
                    self.relieve(i);
                }
                Ok(old)
            }
        }
    }

    /// Child `i` holds one entry too many: moves one through this node into a sibling that has
    /// room, or else splits the child. Moving before splitting keeps nodes fuller (random
    /// inserts left them about 69% full, sibling moves about 80%): the offsets state holds a
    /// million entries in its nodes (`offsets_memory_bytes_per_entry`).
    fn relieve(&mut self, i: usize) {
        if i > 0 && self.children[i - 1].entries.len() < MAX_ENTRIES {
            self.rotate_left(i - 1);
        } else if i + 1 < self.children.len() && self.children[i + 1].entries.len() < MAX_ENTRIES {
            self.rotate_right(i);
        } else {
            let (median, right) = Arc::make_mut(&mut self.children[i]).split();
            reserve_one(&mut self.children);
            self.entries.insert(i, median);
            self.children.insert(i + 1, right);
        }
    }

    /// After an insert into the tree under this root: splits the root, if it was left with
    /// one entry too many, under a new root.
    pub(super) fn split_if_overfull(&mut self) {
        if self.entries.len() > MAX_ENTRIES {
            let (median, right) = self.split();
            let left = core::mem::replace(self, Self::empty());
            *self = Self::parent(left, median, right);
        }
    }

    /// Splits an overflowing node (`MAX_ENTRIES + 1` entries) into itself and a right sibling
    /// around the median.
    pub(super) fn split(&mut self) -> Split<K, V> {
        let right_entries: Entries<K, V> = self.entries.drain(MIN_ENTRIES + 1..).collect();
        let right_children = if self.is_leaf() {
            ThinVec::new()
        } else {
            self.children.split_off(MIN_ENTRIES + 1)
        };
        // `split_off` left `MIN_ENTRIES + 1` entries here: the last one is the median.
        let median = match self.entries.pop() {
            Some(median) => median,
            None => unreachable!("a split node keeps its median"),
        };
        let right = Self {
            entries: right_entries,
            children: right_children,
        };
        (median, Arc::new(right))
    }

    /// Removes `key` from this subtree (the caller checked that it is there). Children left
    /// with too few entries are refilled; this node may be left with too few for its parent to
    /// fix.
    pub(super) fn remove<Q>(&mut self, key: &Q) -> Option<(K, V)>
    where
        Q: Comparable<K> + ?Sized,
    {
        match self.search(key) {
            Ok(i) if self.is_leaf() => Some(self.entries.remove(i)),
            Ok(i) => {
                // Replace the entry by its predecessor, the last entry of the left subtree.
                let predecessor = Arc::make_mut(&mut self.children[i]).pop_last()?;
                let removed = core::mem::replace(&mut self.entries[i], predecessor);
                self.refill(i);
                Some(removed)
            }
            Err(_) if self.is_leaf() => None,
            Err(i) => {
                let removed = Arc::make_mut(&mut self.children[i]).remove(key);
                self.refill(i);
                removed
            }
        }
    }

    /// Removes the last entry of this subtree.
    fn pop_last(&mut self) -> Option<(K, V)> {
        if self.is_leaf() {
            return self.entries.pop();
        }
        let last = self.children.len() - 1;
        let popped = Arc::make_mut(&mut self.children[last]).pop_last();
        self.refill(last);
        popped
    }

    /// Gives child `i` at least [`MIN_ENTRIES`] again after a removal: by rotating an entry
    /// through this node from a sibling that can spare one, or by merging it with a sibling.
    fn refill(&mut self, i: usize) {
        if self.children[i].entries.len() >= MIN_ENTRIES {
            return;
        }
        if i > 0 && self.children[i - 1].entries.len() > MIN_ENTRIES {
            self.rotate_right(i - 1);
        } else if i + 1 < self.children.len() && self.children[i + 1].entries.len() > MIN_ENTRIES {
            self.rotate_left(i);
        } else if i > 0 {
            self.merge(i - 1);
        } else if self.children.len() > 1 {
            self.merge(i);
        }
    }

    /// Moves the last entry of child `i` up to entry `i` and entry `i` down to the front of
    /// child `i + 1` (with child `i`'s last child).
    fn rotate_right(&mut self, i: usize) {
        let (left, right) = self.children.split_at_mut(i + 1);
        let left = Arc::make_mut(&mut left[i]);
        let right = Arc::make_mut(&mut right[0]);
        let (Some(up), moved_child) = (left.entries.pop(), left.children.pop()) else {
            return;
        };
        let down = core::mem::replace(&mut self.entries[i], up);
        right.entries.insert(0, down);
        if let Some(child) = moved_child {
            reserve_one(&mut right.children);
            right.children.insert(0, child);
        }
    }

    /// Moves the first entry of child `i + 1` up to entry `i` and entry `i` down to the end of
    /// child `i` (with child `i + 1`'s first child).
    fn rotate_left(&mut self, i: usize) {
        let (left, right) = self.children.split_at_mut(i + 1);
        let left = Arc::make_mut(&mut left[i]);
        let right = Arc::make_mut(&mut right[0]);
        if right.entries.is_empty() {
            return;
        }
        let up = right.entries.remove(0);
        let down = core::mem::replace(&mut self.entries[i], up);
        left.entries.push(down);
        if !right.children.is_empty() {
            reserve_one(&mut left.children);
            left.children.push(right.children.remove(0));
        }
    }

    /// Merges child `i + 1` and entry `i` into child `i`.
    fn merge(&mut self, i: usize) {
        let right = Arc::unwrap_or_clone(self.children.remove(i + 1));
        let separator = self.entries.remove(i);
        let left = Arc::make_mut(&mut self.children[i]);
        left.entries.push(separator);
        left.entries.extend(right.entries);
        left.children.extend(right.children);
    }

    /// A balanced tree of sorted, repeat-free `entries` (at least one), every node as full as
    /// the count allows.
    pub(super) fn build(entries: Vec<(K, V)>) -> Self {
        let mut height = 0;
        while capacity(height) < entries.len() {
            height += 1;
        }
        let mut entries = entries.into_iter();
        let len = entries.len();
        Self::build_level(&mut entries, len, height)
    }

    /// A subtree of height `height` (0: a leaf) over the next `len` entries.
    ///
    /// `len` fits (`capacity(height)` at most) and, below the root, is at least
    /// `min_size(height)`. Each child gets an even share of what is left after the
    /// separators, as many children as make the shares near `build_capacity` (nodes about
    /// [`BUILD_LEAF_ENTRIES`] and [`BUILD_ENTRIES`] full), within what keeps every share between `min_size` and
    /// `capacity` of the child's height.
    fn build_level(entries: &mut impl Iterator<Item = (K, V)>, len: usize, height: u32) -> Self {
        if height == 0 {
            return Self {
                entries: entries.take(len).collect(),
                children: ThinVec::new(),
            };
        }
        let below = height - 1;
        // Fewest children that fit, most that keep every share at its minimum size.
        let fewest = (len + 1).div_ceil(capacity(below) + 1).max(2);
        let most = ((len + 1) / (min_size(below) + 1)).min(MAX_ENTRIES + 1);
        let aimed = (len + 1).div_ceil(build_capacity(below) + 1);
        let children_count = aimed.clamp(fewest, most.max(fewest));
        let in_children = len - (children_count - 1);
        let (share, extra) = (in_children / children_count, in_children % children_count);
        let mut node = Self {
            entries: Entries::new(),
            children: ThinVec::with_capacity(children_count),
        };
        for c in 0..children_count {
            let size = share + usize::from(c < extra);
            node.children
                .push(Arc::new(Self::build_level(entries, size, below)));
            if c + 1 < children_count {
                if let Some(separator) = entries.next() {
                    node.entries.push(separator);
                }
            }
        }
        node
    }
}

/// The entries a bulk build puts in a leaf: about what inserts in random order leave (9 of
/// [`MAX_ENTRIES`]), so that the writes after a build (a start-up read's tail) split few
/// nodes.
const BUILD_LEAF_ENTRIES: usize = 9;

/// The entries a bulk build puts in an internal node: one fewer. A write after a snapshot
/// copies the nodes on its path, each entry of a copy a count to raise in a record elsewhere
/// in memory; the internal nodes are most of a path and a ninth of the nodes (the bench's
/// `tail_with_snapshot_ratio`: 3.05-3.28x with 9 everywhere, 2.70-2.88x with 8 here, 2.76-2.89x
/// with 8 in the leaves too, which held 4 MB more at a million entries).
const BUILD_ENTRIES: usize = 8;

/// The most entries a subtree of `height` holds: `(MAX_ENTRIES + 1)^(height + 1) - 1`,
/// saturating.
fn capacity(height: u32) -> usize {
    size_with(MAX_ENTRIES, height)
}

/// The entries of a subtree of `height` whose leaves hold [`BUILD_LEAF_ENTRIES`] and whose
/// internal nodes [`BUILD_ENTRIES`], saturating.
fn build_capacity(height: u32) -> usize {
    (BUILD_ENTRIES + 1)
        .checked_pow(height)
        .and_then(|internal| internal.checked_mul(BUILD_LEAF_ENTRIES + 1))
        .map_or(usize::MAX, |c| c - 1)
}

/// The fewest entries a subtree of `height` below the root holds: every node at
/// [`MIN_ENTRIES`].
fn min_size(height: u32) -> usize {
    size_with(MIN_ENTRIES, height)
}

/// The entries of a subtree of `height` whose nodes all hold `per_node`, saturating.
fn size_with(per_node: usize, height: u32) -> usize {
    (per_node + 1)
        .checked_pow(height + 1)
        .map_or(usize::MAX, |c| c - 1)
}

/// Checks every invariant of the module docs over the tree under `root`; returns its entry
/// count. For the tests.
#[cfg(test)]
pub(super) fn check<K: Ord, V>(root: &Node<K, V>) -> usize {
    fn walk<K: Ord, V>(
        node: &Node<K, V>,
        is_root: bool,
        depth: usize,
        leaf_depth: &mut Option<usize>,
        bounds: (Option<&K>, Option<&K>),
    ) -> usize {
        assert!(node.entries.len() <= MAX_ENTRIES, "node overflows");
        assert!(
            is_root || node.entries.len() >= MIN_ENTRIES,
            "node underflows"
        );
        assert!(!node.entries.is_empty(), "empty node");
        for pair in node.entries.windows(2) {
            assert_eq!(pair[0].0.cmp(&pair[1].0), Ordering::Less, "unsorted node");
        }
        if let Some(low) = bounds.0 {
            assert!(node.entries[0].0 > *low, "entry below its separator");
        }
        if let Some(high) = bounds.1 {
            assert!(
                node.entries[node.entries.len() - 1].0 < *high,
                "entry above"
            );
        }
        if node.is_leaf() {
            match leaf_depth {
                Some(d) => assert_eq!(*d, depth, "leaves at different depths"),
                None => *leaf_depth = Some(depth),
            }
            return node.entries.len();
        }
        assert_eq!(node.children.len(), node.entries.len() + 1, "child count");
        let mut count = node.entries.len();
        for (i, child) in node.children.iter().enumerate() {
            let low = if i == 0 {
                bounds.0
            } else {
                Some(&node.entries[i - 1].0)
            };
            let high = node.entries.get(i).map(|(k, _)| k).or(bounds.1);
            count += walk(child, false, depth + 1, leaf_depth, (low, high));
        }
        count
    }
    walk(root, true, 0, &mut None, (None, None))
}
