//! The task configs read since each connector's last commit (Java's `deferredTaskUpdates`),
//! which the connector's next commit record applies or flags (spec §3.4).

use alloc::vec::Vec;

use super::{Properties, MAX_LISTED_MISSING};
use crate::name::Name;

/// Task configs read since the connector's previous commit (Java's `deferredTaskUpdates[c]`).
/// A connector with no entry and one with an empty entry behave differently (spec §3.4).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Deferred {
    pub(super) tasks: TaskBuffer,
    /// Whether the connector has a config (`connector_configs` holds it): what the orphan
    /// diagnostics ask of every task record, kept here so that a task record needn't look the
    /// connector up among all of them (`on_connector` sets it, `remove_connector` drops the
    /// entry with the config).
    pub(super) has_config: bool,
}

/// The task configs awaiting their connector's commit, by connector. Every task record looks
/// its connector up here, so a hash map rather than an ordered one (a `PMap` search was a
/// tenth of the config replay): nothing iterates it but a checkpoint, which sorts it. The seed
/// is fixed, so the order of a map's entries depends only on what was written to it.
pub(super) type Deferreds = hashbrown::HashMap<Name, Deferred, foldhash::fast::FixedState>;

/// One connector's buffered task configs: by task id, ascending, each id once (a later config
/// of an id replaces the earlier one, as in Java's map).
///
/// A sorted list rather than a `BTreeMap`: a connector's task records come in id order, so an
/// insert is nearly always a push, and the commit hands the whole list, already in order, to
/// the build of the connector's task map.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct TaskBuffer(Vec<(i32, Properties)>);

impl TaskBuffer {
    /// Buffers `props` as task `task`'s config, replacing one buffered for the same id.
    pub(super) fn insert(&mut self, task: i32, props: Properties) {
        match self.0.last() {
            Some(&(last, _)) if last >= task => {
                match self.0.binary_search_by_key(&task, |&(id, _)| id) {
                    Ok(at) => {
                        if let Some(entry) = self.0.get_mut(at) {
                            entry.1 = props;
                        }
                    }
                    Err(at) => self.0.insert(at, (task, props)),
                }
            }
            _ => self.0.push((task, props)),
        }
    }

    /// How many task ids are buffered.
    pub(super) fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether task `task` is buffered.
    fn contains(&self, task: i32) -> bool {
        self.0.binary_search_by_key(&task, |&(id, _)| id).is_ok()
    }

    /// The buffered ids, ascending.
    pub(super) fn ids(&self) -> impl Iterator<Item = i32> + '_ {
        self.0.iter().map(|&(id, _)| id)
    }

    /// The buffered configs by id, ascending.
    pub(super) fn iter(&self) -> impl Iterator<Item = (&i32, &Properties)> {
        self.0.iter().map(|(id, props)| (id, props))
    }

    /// Takes every buffered config (ascending ids, each once), leaving the buffer empty.
    pub(super) fn take(&mut self) -> Vec<(i32, Properties)> {
        core::mem::take(&mut self.0)
    }

    /// Empties the buffer.
    pub(super) fn clear(&mut self) {
        self.0.clear();
    }
}

/// Like `BTreeMap`'s: in id order, a later config of an id replacing an earlier one (a
/// checkpoint's list, which is untrusted input).
impl FromIterator<(i32, Properties)> for TaskBuffer {
    fn from_iter<I: IntoIterator<Item = (i32, Properties)>>(iter: I) -> Self {
        let mut buffer = Self::default();
        for (task, props) in iter {
            buffer.insert(task, props);
        }
        buffer
    }
}

/// Java's `completeTaskIdSet`: at least `count` ids buffered and every id in `0..count` among
/// them. Extra ids are fine; a count of 0 or less is always complete.
pub(super) fn is_complete(buffered: Option<&TaskBuffer>, count: i32) -> bool {
    if count <= 0 {
        return true;
    }
    let Some(ids) = buffered else {
        return false;
    };
    // `len >= count` first, so the loop below runs at most `len` times.
    usize::try_from(count).is_ok_and(|n| ids.len() >= n) && (0..count).all(|i| ids.contains(i))
}

/// The ids in `0..count` that are not buffered: the first [`MAX_LISTED_MISSING`] and the total.
pub(super) fn missing(buffered: Option<&TaskBuffer>, count: i32) -> (Vec<i32>, u64) {
    let count = count.max(0);
    let present = buffered.map_or(0, |ids| {
        ids.ids().filter(|id| (0..count).contains(id)).count()
    });
    let total = u64::try_from(count).unwrap_or(0) - present as u64;
    let listed = (0..count)
        .filter(|&i| buffered.is_none_or(|ids| !ids.contains(i)))
        .take(MAX_LISTED_MISSING)
        .collect();
    (listed, total)
}

#[cfg(test)]
mod tests {
    use alloc::collections::BTreeMap;
    use alloc::string::ToString;
    use alloc::vec::Vec;

    use proptest::prelude::*;

    use super::*;

    fn props(n: u8) -> Properties {
        Properties::from_iter([("n", crate::json::JsonValue::String(n.to_string()))])
    }

    proptest! {
        /// Inserts in any order, repeated ids included, hold what a `BTreeMap` holds, and the
        /// commit's questions answer as they do over the map.
        #[test]
        fn holds_what_a_map_holds(
            inserts in prop::collection::vec((-3i32..20, any::<u8>()), 0..40),
            count in -2i32..24,
        ) {
            let mut buffer = TaskBuffer::default();
            let mut map = BTreeMap::new();
            for &(task, n) in &inserts {
                buffer.insert(task, props(n));
                map.insert(task, props(n));
            }
            let held: Vec<(i32, Properties)> =
                buffer.iter().map(|(id, p)| (*id, p.clone())).collect();
            let expected: Vec<(i32, Properties)> = map.clone().into_iter().collect();
            prop_assert_eq!(&held, &expected);
            prop_assert_eq!(&inserts.iter().map(|&(t, n)| (t, props(n))).collect::<TaskBuffer>(), &buffer);
            let complete = count <= 0 || (0..count).all(|i| map.contains_key(&i));
            prop_assert_eq!(is_complete(Some(&buffer), count), complete);
            let absent: Vec<i32> = (0..count.max(0)).filter(|i| !map.contains_key(i)).collect();
            let (listed, total) = missing(Some(&buffer), count);
            prop_assert_eq!(total, absent.len() as u64);
            prop_assert_eq!(listed, absent.into_iter().take(MAX_LISTED_MISSING).collect::<Vec<_>>());
            prop_assert_eq!(buffer.take(), expected);
            prop_assert_eq!(buffer.len(), 0);
        }
    }
}
