//! In-order iteration over a [`PMap`](super::PMap), whole or over a key range.

use core::ops::{Bound, RangeBounds};

use arrayvec::ArrayVec;

use super::node::Node;
use super::Comparable;
use super::MAX_DEPTH;

/// The path of an in-order walk: each frame is a node and the index of the next entry it
/// yields, once the child before that entry (the frame above it, if any) is done.
///
/// Held inline, with no allocation per walk (the offsets machine makes a range lookup for
/// every record): a tree is never deeper than [`MAX_DEPTH`].
struct Walk<'a, K, V> {
    stack: ArrayVec<(&'a Node<K, V>, usize), MAX_DEPTH>,
}

impl<'a, K, V> Walk<'a, K, V> {
    /// Pushes `node` and its leftmost descendants.
    fn descend_leftmost(&mut self, mut node: &'a Node<K, V>) {
        loop {
            self.stack.push((node, 0));
            match node.children.first() {
                Some(child) => node = child,
                None => return,
            }
        }
    }

    fn next(&mut self) -> Option<(&'a K, &'a V)> {
        self.next_entry().map(|(k, v)| (k, v))
    }

    fn next_entry(&mut self) -> Option<&'a (K, V)> {
        loop {
            let (node, index) = self.stack.last_mut()?;
            let node: &'a Node<K, V> = node;
            if let Some(entry) = node.entries.get(*index) {
                *index += 1;
                if let Some(child) = node.children.get(*index) {
                    self.descend_leftmost(child);
                }
                return Some(entry);
            }
            self.stack.pop();
        }
    }
}

/// The entries of a [`PMap`](super::PMap) in key order.
pub struct Iter<'a, K, V> {
    walk: Walk<'a, K, V>,
    remaining: usize,
}

impl<'a, K, V> Iter<'a, K, V> {
    pub(super) fn new(root: Option<&'a Node<K, V>>, len: usize) -> Self {
        let mut walk = Walk {
            stack: ArrayVec::new(),
        };
        if let Some(root) = root {
            walk.descend_leftmost(root);
        }
        Self {
            walk,
            remaining: len,
        }
    }
}

impl<'a, K, V> Iterator for Iter<'a, K, V> {
    type Item = (&'a K, &'a V);

    fn next(&mut self) -> Option<Self::Item> {
        let next = self.walk.next()?;
        self.remaining = self.remaining.saturating_sub(1);
        Some(next)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining, Some(self.remaining))
    }
}

impl<K, V> ExactSizeIterator for Iter<'_, K, V> {}

/// The keys of a [`PMap`](super::PMap) in order.
pub struct Keys<'a, K, V>(pub(super) Iter<'a, K, V>);

impl<'a, K, V> Iterator for Keys<'a, K, V> {
    type Item = &'a K;

    fn next(&mut self) -> Option<&'a K> {
        self.0.next().map(|(k, _)| k)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.size_hint()
    }
}

impl<K, V> ExactSizeIterator for Keys<'_, K, V> {}

/// The values of a [`PMap`](super::PMap) in key order.
pub struct Values<'a, K, V>(pub(super) Iter<'a, K, V>);

impl<'a, K, V> Iterator for Values<'a, K, V> {
    type Item = &'a V;

    fn next(&mut self) -> Option<&'a V> {
        self.0.next().map(|(_, v)| v)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.size_hint()
    }
}

impl<K, V> ExactSizeIterator for Values<'_, K, V> {}

/// The entries of a [`PMap`](super::PMap) with keys in a range, in order.
pub struct Range<'a, K, V> {
    walk: Walk<'a, K, V>,
    /// The first entry past the range (`None`: the range runs to the end): the walk stops
    /// there. Found when the range is made, so the range's bounds are not kept.
    end: Option<&'a (K, V)>,
}

impl<'a, K, V> Range<'a, K, V> {
    /// Starts the walk at the first entry not below the range's start.
    pub(super) fn new<Q, R>(root: Option<&'a Node<K, V>>, range: R) -> Self
    where
        Q: Comparable<K> + ?Sized,
        R: RangeBounds<Q>,
    {
        let mut walk = Walk {
            stack: ArrayVec::new(),
        };
        let mut node = root;
        while let Some(current) = node {
            let index = position(current, range.start_bound());
            walk.stack.push((current, index));
            // An exact hit needs nothing from the child before it.
            let exact = matches!(range.start_bound(), Bound::Included(s)
                if current.entries.get(index).is_some_and(|(k, _)| s.compare(k).is_eq()));
            node = if exact {
                None
            } else {
                current.children.get(index).map(|c| &**c)
            };
        }
        let end = match range.end_bound() {
            Bound::Unbounded => None,
            Bound::Included(end) => first_from(root, Bound::Excluded(end)),
            Bound::Excluded(end) => first_from(root, Bound::Included(end)),
        };
        // A range that ends before it starts is empty.
        let empty = match (end, range.start_bound()) {
            (Some((k, _)), Bound::Included(start)) => start.compare(k).is_gt(),
            (Some((k, _)), Bound::Excluded(start)) => start.compare(k).is_ge(),
            _ => false,
        };
        if empty {
            walk.stack.clear();
        }
        Self { walk, end }
    }
}

/// The index of the first entry of `node` at or after `bound` (a start bound).
fn position<K, V, Q>(node: &Node<K, V>, bound: Bound<&Q>) -> usize
where
    Q: Comparable<K> + ?Sized,
{
    match bound {
        Bound::Unbounded => 0,
        Bound::Included(at) => node.search(at).unwrap_or_else(|i| i),
        Bound::Excluded(at) => match node.search(at) {
            Ok(i) => i + 1,
            Err(i) => i,
        },
    }
}

/// The first entry of the tree at or after `bound` (a start bound).
fn first_from<'a, K, V, Q>(root: Option<&'a Node<K, V>>, bound: Bound<&Q>) -> Option<&'a (K, V)>
where
    Q: Comparable<K> + ?Sized,
{
    let mut best = None;
    let mut node = root;
    while let Some(current) = node {
        let index = position(current, bound);
        // Entries of child `index` lie below entry `index`: any of them in range is better.
        if let Some(entry) = current.entries.get(index) {
            best = Some(entry);
        }
        node = current.children.get(index).map(|c| &**c);
    }
    best
}

impl<'a, K, V> Iterator for Range<'a, K, V> {
    type Item = (&'a K, &'a V);

    fn next(&mut self) -> Option<Self::Item> {
        let entry = self.walk.next_entry()?;
        if self.end.is_some_and(|end| core::ptr::eq(end, entry)) {
            self.walk.stack.clear();
            return None;
        }
        Some((&entry.0, &entry.1))
    }
}

/// The keys of a [`PSet`](super::PSet) in a range, in order.
pub struct SetRange<'a, K>(pub(super) Range<'a, K, ()>);

impl<'a, K> Iterator for SetRange<'a, K> {
    type Item = &'a K;

    fn next(&mut self) -> Option<&'a K> {
        self.0.next().map(|(k, ())| k)
    }
}
