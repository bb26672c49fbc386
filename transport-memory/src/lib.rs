//! # connect-state-memory
//!
//! An in-memory, seeded, deterministic model of Kafka's compacted topics (the log model of
//! `spec/compaction.md` §1 and the writer faults of §2), and [`MemoryTransport`], the
//! store's [`Transport`](connect_state_store::Transport) over it.
//!
//! ```text
//!  MemoryTransport (worker A) ─┐
//!  MemoryTransport (worker B) ─┼─▶ Arc<Mutex<MemoryCluster>>
//!  test code (clean, clock)  ──┘     ├─ logical clock, seeded generator
//!                                    ├─ producers: transactional id → producer id, epoch
//!                                    └─ topic ─ partition 0: [segment][segment][active segment]
//!                                             └ partition 1: [segment][active segment]
//! ```
//!
//! [`MemoryCluster`] is a pure synchronous state machine: no wall clock (a logical clock moved
//! by [`MemoryCluster::advance_clock`]), no IO, and randomness only from the seed given to
//! [`MemoryCluster::new`]. Nothing happens on its own: the caller appends, cleans, fetches and
//! moves time. The same seed and the same calls give equal clusters.
//!
//! ## The log model
//!
//! Each partition is a list of segments of records; the last segment is the **active** one and
//! a new one is rolled once it spans [`TopicConfig::segment_records`] offsets (or on
//! [`MemoryCluster::roll_segment`]). A record keeps the offset it got at append time, its key and
//! value bytes, its logical timestamp and its transaction state. Transactions end with a control
//! marker that occupies one offset, as in Kafka. A cleaning pass
//! ([`MemoryCluster::clean`]) works up to a **horizon**: the start of the active segment,
//! capped by the first record younger than `min.compaction.lag.ms` and by the last stable
//! offset (a lower explicit horizon may be given). Below the horizon it removes every record
//! that has a later record of the same key (raw bytes) below the horizon, every aborted record
//! and every control marker, and tombstones whose `delete.retention.ms` has run out since the
//! first pass that kept them. Keyless records are never compacted away.
//!
//! ## The guarantees, as invariants this model keeps
//!
//! These are Kafka's log-compaction guarantees (spec §1); every test layer may rely on them.
//!
//! 1. **Caught-up readers see everything.** Nothing at or beyond the horizon is ever removed,
//!    and the horizon never passes the active segment, a record younger than
//!    `min.compaction.lag.ms`, or the last stable offset. A reader that keeps up with the head
//!    therefore gets every record visible to its isolation level, with sequential offsets
//!    (apart from the offsets of control markers, and of aborted records for `read_committed`).
//! 2. **No reordering.** Records are stored and returned in offset order; cleaning only removes.
//! 3. **Offsets never change.** An offset is assigned once, from the high watermark, at append;
//!    cleaning leaves gaps. A fetch's `next_offset` moves past every gap it skipped, so readers
//!    always progress.
//! 4. **The final state survives.** A reader starting from offset 0 sees at least the last
//!    record of every key (a record is only removed when a later one of the same key exists),
//!    in the order those records were written. It also sees every tombstone, provided it
//!    reaches the head within `delete.retention.ms` of the first cleaning pass that kept that
//!    tombstone; a reader lagging longer can miss deletes. Aborted records never count as
//!    state: `read_committed` readers never see them, `read_uncommitted` readers see them until
//!    a pass removes them.
//!
//! ## Faults
//!
//! Per [`MemoryTransport`], deterministically:
//!
//! * [`ProduceFault::CrashAfter`]`(k)`, queued with [`MemoryTransport::push_produce_fault`]: the
//!   next produce appends only its first `k` records, then fails with
//!   `ProduceFailed { written: k }`; a transactional produce aborts its transaction instead
//!   (`written: 0`).
//! * [`ProduceFault::CrashInTransactionAfter`]`(k)`: a transactional writer dies with its
//!   transaction open (the last stable offset stays behind it until the id is re-initialized).
//! * [`ProduceFault::Duplicate`]: the next plain produce appends every record twice.
//! * Zombie writers: two transports with the same transactional id; the later
//!   `init_transactions` (explicit, or on its first transactional produce) fences the older,
//!   whose open transaction is aborted and whose produces then fail with `Fenced`. Without
//!   transactions two writers simply interleave.
//! * [`FetchFault::CleanAll`] and [`FetchFault::CleanRandomly`], set with
//!   [`MemoryTransport::set_fetch_fault`]: cleaning before every fetch, at the default horizon
//!   or (seeded) at random horizons with a given probability, so records ahead of a reader
//!   disappear while it is mid-log.
//! * [`MemoryTransport::with_max_fetch_records`]: readers that fetch in batches of any size.
//!
//! ## Example
//!
//! ```
//! use std::collections::BTreeMap;
//! use std::sync::{Arc, Mutex};
//!
//! use connect_state_memory::{MemoryCluster, MemoryTransport, ProducerRecord};
//! use connect_state_store::{NewTopic, ProduceMode, Transport};
//!
//! let cluster = Arc::new(Mutex::new(MemoryCluster::new(7)));
//! let transport = MemoryTransport::new(Arc::clone(&cluster));
//! let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
//! runtime.block_on(async {
//!     let mut configs = BTreeMap::new();
//!     configs.insert("cleanup.policy".to_owned(), "compact".to_owned());
//!     let topic = NewTopic { name: "configs".into(), partitions: 1, replication_factor: None, configs };
//!     transport.create_topic(&topic).await.unwrap();
//!
//!     let record = |k: &str, v: &str| ProducerRecord::from_strings(k.into(), Some(v.into()));
//!     let batch = [record("a", "1"), record("b", "1"), record("a", "2")];
//!     let placed = transport.produce("configs", &batch, ProduceMode::Plain).await.unwrap();
//!     assert_eq!(placed, vec![(0, 0), (0, 1), (0, 2)]);
//!
//!     // Make everything cleanable, then clean: the first "a" goes, offsets stay.
//!     {
//!         let mut cluster = cluster.lock().unwrap();
//!         cluster.roll_segment("configs", 0).unwrap();
//!         assert_eq!(cluster.clean("configs", 0, None).unwrap().removed, 1);
//!     }
//!
//!     let batch = transport.fetch("configs", 0, 0, 100).await.unwrap();
//!     let offsets: Vec<i64> = batch.records.iter().map(|r| r.offset).collect();
//!     assert_eq!(offsets, vec![1, 2]);
//!     assert_eq!(batch.next_offset, 3);
//! });
//! ```

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod cluster;
mod config;
mod error;
mod fault;
mod log;
mod transaction;
mod transport;

#[cfg(test)]
mod tests;

/// The core's record to produce (`connect_state_core::ProducerRecord`), re-exported because
/// [`MemoryCluster::send`] takes it.
pub use engine::ProducerRecord;

pub use cluster::{Cleaned, KeyValue, MemoryCluster};
pub use config::{TopicConfig, DEFAULT_DELETE_RETENTION_MS, DEFAULT_SEGMENT_RECORDS};
pub use error::LogError;
pub use fault::{FetchFault, ProduceFault};
pub use log::{Isolation, LogRecord, RecordKind, TxnState};
pub use transaction::ProducerHandle;
pub use transport::MemoryTransport;
