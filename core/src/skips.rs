//! Why records are skipped, and the per-reason counters the topic machines keep of them.

use alloc::collections::BTreeMap;
use core::fmt;

use serde::{Deserialize, Serialize};

/// Why a topic skipped a record: each topic's skip enum (`ConfigSkip`, `StatusSkip`,
/// `OffsetSkip`), with the field-less kind it is counted under.
pub trait SkipReason: fmt::Display {
    /// The kind a skip is counted under (`ConfigSkipKind`, ...).
    type Kind: SkipKind;

    /// The kind of this skip.
    fn kind(&self) -> Self::Kind;

    /// The skip of a redelivered record below its partition's next expected offset.
    fn duplicate(next_expected: i64) -> Self;
}

/// A field-less skip reason, counted and named in views.
pub trait SkipKind:
    Copy + Ord + fmt::Debug + Serialize + serde::de::DeserializeOwned + 'static
{
    /// The reason's snake-case name (the JSON views' keys).
    fn as_str(self) -> &'static str;
}

/// Implements [`SkipReason`] and [`SkipKind`] for a topic's skip enum and its kind enum by
/// forwarding to their inherent `kind`, `as_str` and the `Duplicate { next_expected }` variant.
macro_rules! skip_reason {
    ($skip:ident, $kind:ident) => {
        impl $crate::skips::SkipReason for $skip {
            type Kind = $kind;

            fn kind(&self) -> $kind {
                Self::kind(self)
            }

            fn duplicate(next_expected: i64) -> Self {
                Self::Duplicate { next_expected }
            }
        }

        impl $crate::skips::SkipKind for $kind {
            fn as_str(self) -> &'static str {
                Self::as_str(self)
            }
        }
    };
}
pub(crate) use skip_reason;

/// How many records were skipped, per reason `K` (a machine's skip-kind enum).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(bound(
    serialize = "K: Serialize + Ord",
    deserialize = "K: Deserialize<'de> + Ord"
))]
pub struct SkipCounts<K>(BTreeMap<K, u64>);

impl<K> Default for SkipCounts<K> {
    fn default() -> Self {
        Self(BTreeMap::new())
    }
}

impl<K: Ord + Copy> SkipCounts<K> {
    /// Counts one skip.
    pub(crate) fn count(&mut self, kind: K) {
        let n = self.0.entry(kind).or_insert(0);
        *n = n.saturating_add(1);
    }

    /// The number of records skipped for `kind`.
    pub fn get(&self, kind: K) -> u64 {
        self.0.get(&kind).copied().unwrap_or(0)
    }

    /// All records skipped.
    pub fn total(&self) -> u64 {
        self.0.values().fold(0, |sum, n| sum.saturating_add(*n))
    }

    /// The non-zero counters, in a stable order.
    pub fn iter(&self) -> impl Iterator<Item = (K, u64)> + '_ {
        self.0.iter().map(|(k, v)| (*k, *v))
    }
}
