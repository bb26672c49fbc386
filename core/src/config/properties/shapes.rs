//! [`Shapes`]: the names of recently read configurations, in the order their documents list
//! them, so that a configuration with the same names in the same order is laid out without
//! sorting and shares the names' allocation, and a document in Java's layout with those names
//! is read by matching the text Java writes between its values.

use alloc::boxed::Box;
use alloc::vec::Vec;
use core::fmt;

use super::java_layout;
use super::layout::{Layout, Names};
use super::Properties;
use crate::json::layout::Cursor;
use crate::json::{name_order, FlatMember, FlatValue, JsonValue};

/// How many shapes are kept (most recent first). A topic interleaves few kinds of
/// configuration at a time: the task configs of one connector come together, and connectors
/// of one kind share their names.
const RECENT: usize = 16;

/// The most members a kept shape may have: a larger document is laid out all the same, but
/// its shape is not kept (a shape holds two positions per member).
const MAX_KEPT_MEMBERS: usize = 4096;

/// One configuration's names as its document lists them.
#[derive(Clone)]
struct Shape {
    /// The sorted, unique names.
    names: Names,
    /// For each member of the document, in document order, the index of its name.
    slots: Box<[usize]>,
    /// For each name, the document position of its value: the last member of that name.
    sources: Box<[usize]>,
    /// The text Java writes before each value; `None` when a name has a character Java
    /// escapes.
    prefixes: Option<Prefixes>,
}

/// The text Java writes before each value of a document (see [`java_layout::prefix`]), end to
/// end, and where each ends.
#[derive(Clone)]
struct Prefixes {
    text: Box<[u8]>,
    ends: Box<[usize]>,
}

impl Shape {
    /// Whether `members` list exactly these names in this order.
    fn fits(&self, members: &impl Members) -> bool {
        self.slots.len() == members.len()
            && self
                .slots
                .iter()
                .enumerate()
                .all(|(at, &slot)| self.names.name_bytes(slot) == members.name(at).as_bytes())
    }

    /// Sorts the names of `members` (by byte order; a repeated name keeps its last value).
    fn of(members: &impl Members) -> Self {
        let keys: Vec<u128> = (0..members.len())
            .map(|at| name_order(members.name(at)))
            .collect();
        let mut order: Vec<usize> = (0..members.len()).collect();
        // Equal names stay in document order, so the last of a run is the one that counts; the
        // 16-byte key decides most comparisons.
        order.sort_by(|&a, &b| {
            keys[a]
                .cmp(&keys[b])
                .then_with(|| members.name(a).cmp(members.name(b)))
                .then(a.cmp(&b))
        });
        let mut sources: Vec<usize> = Vec::with_capacity(order.len());
        let mut slots = alloc::vec![0; members.len()];
        for position in order {
            match sources.last_mut() {
                Some(last) if members.name(*last) == members.name(position) => *last = position,
                _ => sources.push(position),
            }
            slots[position] = sources.len() - 1;
        }
        let names = Names::from_sorted(sources.iter().map(|&s| members.name(s)));
        let (mut text, mut ends) = (Vec::new(), Vec::with_capacity(members.len()));
        let prefixes = (0..members.len())
            .try_for_each(|at| {
                java_layout::prefix(&mut text, at, members.name(at))?;
                ends.push(text.len());
                Some(())
            })
            .map(|()| Prefixes {
                text: text.into_boxed_slice(),
                ends: ends.into_boxed_slice(),
            });
        Self {
            names,
            slots: slots.into_boxed_slice(),
            sources: sources.into_boxed_slice(),
            prefixes,
        }
    }

    /// Reads the values of a document in Java's layout from `text` (past its opening) if it
    /// lists exactly these names in this order: `values` gets them in document order.
    fn read_values<'a>(&self, text: Cursor<'a>, values: &mut Vec<&'a str>) -> Option<()> {
        let Prefixes { text: all, ends } = self.prefixes.as_ref()?;
        let starts = core::iter::once(0).chain(ends.iter().copied());
        let pieces = starts
            .zip(ends.iter())
            .map(|(start, &end)| &all[start..end]);
        java_layout::values(text, pieces, values)
    }
}

/// The values of a `properties` object's members in document order, as [`Shapes`] lays them
/// out once it knows their names.
pub(crate) trait Values {
    /// The value of member `at` when it is a string.
    fn text(&self, at: usize) -> Option<&str>;
    /// Takes the value of member `at`, which is not a string (called at most once for it).
    fn take_other(&mut self, at: usize) -> JsonValue;
}

/// The members of a `properties` object in document order, repeated names included, as a
/// reader hands them to [`Shapes::lay_out`]: the general reader's [`FlatMember`]s, or the
/// `(name, value)` strings of a value in Java's layout.
pub(crate) trait Members: Values {
    /// How many members there are.
    fn len(&self) -> usize;
    /// The name of member `at`.
    fn name(&self, at: usize) -> &str;
}

impl Values for Vec<FlatMember<'_>> {
    fn text(&self, at: usize) -> Option<&str> {
        match &self[at].value {
            FlatValue::String(s) => Some(s),
            FlatValue::Other(_) => None,
        }
    }

    fn take_other(&mut self, at: usize) -> JsonValue {
        match &mut self[at].value {
            FlatValue::Other(value) => core::mem::replace(value, JsonValue::Null),
            FlatValue::String(_) => JsonValue::Null,
        }
    }
}

impl Members for Vec<FlatMember<'_>> {
    fn len(&self) -> usize {
        self.as_slice().len()
    }

    fn name(&self, at: usize) -> &str {
        &self[at].name
    }
}

/// Values that are all strings (a document in Java's layout).
impl Values for Vec<&str> {
    fn text(&self, at: usize) -> Option<&str> {
        Some(self[at])
    }

    fn take_other(&mut self, _: usize) -> JsonValue {
        JsonValue::Null
    }
}

/// Values that are all strings, with their names.
impl Values for Vec<(&str, &str)> {
    fn text(&self, at: usize) -> Option<&str> {
        Some(self[at].1)
    }

    fn take_other(&mut self, _: usize) -> JsonValue {
        JsonValue::Null
    }
}

impl Members for Vec<(&str, &str)> {
    fn len(&self) -> usize {
        self.as_slice().len()
    }

    fn name(&self, at: usize) -> &str {
        self[at].0
    }
}

/// The shapes of recently laid out configurations and a buffer to lay out values in. Part of
/// the config machine, not of its state: it never changes what a configuration holds, only
/// how much work and memory laying one out takes (every comparison treats two caches as
/// equal, and checkpoints leave it out).
#[derive(Clone, Default)]
pub(crate) struct Shapes {
    /// Most recent first.
    recent: Vec<Shape>,
    /// Behind a pointer: the machines that embed the config machine stay small.
    buffers: Box<Buffers>,
}

/// The allocations [`Shapes`] reuses from one document to the next.
#[derive(Clone, Default)]
struct Buffers {
    /// The values' layout being written, copied into the configuration's allocation after.
    scratch: Vec<u8>,
    /// The allocation of the last document's members, for the next document's.
    spare: Vec<FlatMember<'static>>,
    /// The same for documents in Java's layout: read name by name, and read by a known shape.
    spare_pairs: Vec<(&'static str, &'static str)>,
    spare_values: Vec<&'static str>,
}

impl PartialEq for Shapes {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for Shapes {}

impl fmt::Debug for Shapes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Shapes({} kept)", self.recent.len())
    }
}

impl Shapes {
    /// An empty list for the members of the next document to read, in the allocation the
    /// last one used (allocating and freeing one per record cost a tenth of a replay).
    pub(crate) fn members_buffer<'a>(&mut self) -> Vec<FlatMember<'a>> {
        recycle(core::mem::take(&mut self.buffers.spare))
    }

    /// Lays out the members of a `properties` object as the general reader read them
    /// (borrowing from the record), keeping their list's allocation for the next record.
    pub(crate) fn lay_out(&mut self, mut members: Vec<FlatMember<'_>>) -> Properties {
        let laid_out = self.lay_out_members(&mut members);
        self.buffers.spare = recycle(members);
        laid_out
    }

    /// Reads a connector or task config value in the exact layout a Java worker writes (see
    /// [`java_layout`]) and lays it out, or `None` when the value has another layout (then the
    /// general reader reads it). A document that lists the names of a recent configuration in
    /// the same order (the task configs of a connector, connectors of a kind) is read by
    /// matching the text between its values, names included; any other is read name by name.
    pub(crate) fn read_java_layout(&mut self, bytes: &[u8]) -> Option<Properties> {
        let text = java_layout::open(bytes)?;
        let mut values = recycle_values(core::mem::take(&mut self.buffers.spare_values));
        let known = self
            .recent
            .iter()
            .position(|shape| shape.read_values(text, &mut values).is_some());
        let laid_out = match known {
            Some(at) => {
                self.recent[..=at].rotate_right(1);
                Some(write(
                    &mut self.buffers.scratch,
                    &self.recent[0],
                    &mut values,
                ))
            }
            None => {
                let mut members = recycle_pairs(core::mem::take(&mut self.buffers.spare_pairs));
                let laid_out = java_layout::members(text, &mut members)
                    .map(|()| self.lay_out_members(&mut members));
                self.buffers.spare_pairs = recycle_pairs(members);
                laid_out
            }
        };
        self.buffers.spare_values = recycle_values(values);
        laid_out
    }

    /// Lays out `members`: sorted by name, a repeated name keeping its last value. The names
    /// are those of a recently laid out configuration when the document lists the same names
    /// in the same order (then nothing is sorted, and the names' allocation is shared).
    fn lay_out_members(&mut self, members: &mut impl Members) -> Properties {
        let unkept;
        let shape = match self.recent.iter().position(|s| s.fits(members)) {
            Some(at) => {
                self.recent[..=at].rotate_right(1);
                &self.recent[0]
            }
            None if members.len() <= MAX_KEPT_MEMBERS => {
                if self.recent.len() == RECENT {
                    self.recent.pop();
                }
                self.recent.insert(0, Shape::of(members));
                &self.recent[0]
            }
            None => {
                unkept = Shape::of(members);
                &unkept
            }
        };
        write(&mut self.buffers.scratch, shape, members)
    }
}

/// Lays out `values` (in document order) by `shape`'s names in `out`, then copies the
/// layout into the configuration's allocation.
fn write(out: &mut Vec<u8>, shape: &Shape, values: &mut impl Values) -> Properties {
    // One pass: two-byte end positions written as the texts go (a layout's narrowest
    // width); a configuration whose text outgrows them (rare) has its numbers written again.
    let count = shape.sources.len();
    out.clear();
    out.push(2);
    out.resize(1 + 2 * count, 0);
    let (mut end, mut narrow) = (0usize, true);
    let mut others = Vec::new();
    for (index, &source) in shape.sources.iter().enumerate() {
        match values.text(source) {
            Some(s) => {
                out.extend_from_slice(s.as_bytes());
                end += s.len();
            }
            // Rare (numbers, booleans, nested values).
            None => others.push((index, values.take_other(source))),
        }
        match u16::try_from(end) {
            Ok(e) => out[1 + 2 * index..3 + 2 * index].copy_from_slice(&e.to_le_bytes()),
            Err(_) => narrow = false,
        }
    }
    if !narrow {
        let text = out.split_off(1 + 2 * count);
        out.clear();
        let lengths = shape
            .sources
            .iter()
            .map(|&source| values.text(source).map_or(0, str::len));
        Layout::write_numbers(out, Layout::width_for(end), None, lengths);
        out.extend_from_slice(&text);
    }
    Properties::build(shape.names.clone(), out, others)
}

/// The same allocation, emptied, for members of another lifetime: `FlatMember<'a>` has one
/// layout whatever `'a`, and std collects a `Vec`'s own iterator into a `Vec` of an element of
/// the same layout in place, keeping the allocation (no `unsafe` needed).
fn recycle<'b>(mut members: Vec<FlatMember<'_>>) -> Vec<FlatMember<'b>> {
    members.clear();
    // `filter_map` is what changes the element type; it never runs on an empty list.
    #[allow(clippy::unnecessary_filter_map)]
    members.into_iter().filter_map(|_| None).collect()
}

/// [`recycle`] for the members of a document in Java's layout.
fn recycle_pairs<'b>(mut members: Vec<(&str, &str)>) -> Vec<(&'b str, &'b str)> {
    members.clear();
    #[allow(clippy::unnecessary_filter_map)]
    members.into_iter().filter_map(|_| None).collect()
}

/// [`recycle`] for the values of a document of a known shape.
fn recycle_values<'b>(mut values: Vec<&str>) -> Vec<&'b str> {
    values.clear();
    #[allow(clippy::unnecessary_filter_map)]
    values.into_iter().filter_map(|_| None).collect()
}
