//! The writer and reader faults a [`crate::MemoryTransport`] injects (spec §2 and the
//! "cleaning while a reader is mid-log" rule of §1).

use std::collections::VecDeque;

/// A fault for one upcoming `produce` call. Queue them with
/// [`crate::MemoryTransport::push_produce_fault`]: each `produce` call of that transport takes
/// the oldest queued fault (whatever the call's outcome), so a queue of faults plays out
/// deterministically, one per call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProduceFault {
    /// The writer crashes after `k` records (`k` is clamped to the batch size `n`).
    ///
    /// * Plain produce: the first `k` records are appended, then the call fails with
    ///   `ProduceFailed { written: k, total: n }`. With `k = n` every record is in the log but
    ///   the writer never learned it (a lost acknowledgement).
    /// * Transactional produce: the first `k` records are appended inside the transaction, which
    ///   is then **aborted** (abort markers written); the call fails with `written: 0`.
    CrashAfter(usize),
    /// Like [`CrashAfter`](Self::CrashAfter), but a transactional writer dies **without**
    /// aborting: its `k` records stay in an open transaction that holds back the last stable
    /// offset of every partition it touched, until another `init_transactions` of the same
    /// transactional id fences it and aborts it. The transport forgets its producer (it died),
    /// so its own next transactional produce initializes a new one and does exactly that. For a
    /// plain produce this is the same as `CrashAfter`.
    CrashInTransactionAfter(usize),
    /// Duplicate delivery: a plain produce appends every record twice in a row
    /// (`r1 r1 r2 r2 …`, a retried send whose first attempt was in fact written) and returns the
    /// offsets of the second copies, the ones acknowledged. A transactional producer is
    /// idempotent, so for a transactional produce this fault has no effect.
    Duplicate,
}

/// Cleaning that a [`crate::MemoryTransport`] runs before each of its fetches, so readers find
/// records ahead of their position gone between two fetches. Set it with
/// [`crate::MemoryTransport::set_fetch_fault`]; it stays until replaced.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum FetchFault {
    /// Before every fetch, clean every partition of the fetched topic at its default horizon
    /// ([`crate::MemoryCluster::clean_all`]).
    CleanAll,
    /// Before every fetch, clean each partition of the fetched topic with probability
    /// `probability` at a random horizon ([`crate::MemoryCluster::clean_random`], seeded by the
    /// cluster's seed).
    CleanRandomly {
        /// Chance, per partition and fetch, of a cleaning pass (0.0 to 1.0).
        probability: f64,
    },
}

/// The faults queued on one transport.
#[derive(Debug, Default)]
pub(crate) struct Faults {
    pub(crate) produce: VecDeque<ProduceFault>,
    pub(crate) fetch: Option<FetchFault>,
}
