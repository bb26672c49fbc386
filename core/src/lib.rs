//! # connect-state-core
//!
//! Sans-IO state machines that replay Kafka Connect's internal topics exactly as Java Connect's
//! `KafkaConfigBackingStore` does, and build the exact records a writer must produce.
//!
//! ```text
//!   transport (Kafka, in-memory simulator, kcat dump)
//!        │  Record { key, value, offset, partition }
//!        ▼
//!   ┌──────────────────────────────────────┐  poll_event()  events (config: Java's
//!   │ machine::TopicLog<T: Topic>          │ ─────────────▶ UpdateListener callbacks;
//!   │   positions, caught-up flag, events, │                status, offsets: additive)
//!   │   skip counts, checkpoint framing    │  snapshot() ─▶ O(1) persistent views (config:
//!   │ T = ConfigTopic | StatusTopic |      │                Java's ClusterConfigState)
//!   │     OffsetTopic: dispatch + apply   │  checkpoint() / restore(), diagnostics()
//!   └──────────────────────────────────────┘
//!   ConfigLog, StatusLog, OffsetLog = TopicLog over each topic (all: TopicMachine)
//!   write side: config::write, StatusLog::prepare_put, offsets::kip875, offsets::OffsetWriter
//!   shared state: persistent::{PMap, PSet} (copy-on-write B-trees; snapshots share them)
//! ```
//!
//! The crate performs no IO, reads no clock and uses no randomness. It is `no_std` + `alloc`;
//! the default `std` feature only forwards to dependencies.
//!
//! ## The drive loop
//!
//! After every `handle_*` call, drain `poll_event` until it returns `None` before the next
//! `handle_*` call.
//!
//! ```
//! use connect_state_core::config::ConfigLog;
//! use connect_state_core::Record;
//!
//! let mut log = ConfigLog::new();
//! // Start-up: replay the topic to its end offset. No events are produced yet.
//! log.handle_record(Record::new(b"connector-orders", Some(br#"{"properties":{"tasks.max":"1"}}"#), 0))
//!     .unwrap();
//! log.mark_caught_up();
//! // Tail: records now produce events, like Java's UpdateListener callbacks.
//! log.handle_record(Record::new(b"target-state-orders", Some(br#"{"state":"PAUSED","state.v2":"PAUSED"}"#), 1))
//!     .unwrap();
//! while let Some(event) = log.poll_event() {
//!     println!("{event:?}");
//! }
//! let snapshot = log.snapshot();
//! assert_eq!(snapshot.offset(), 2);
//! ```
//!
//! ## Panic policy
//!
//! No record contents, checkpoint bytes or write-side input can make this crate panic. Bad input
//! is either skipped in the way Java skips it (reported through [`RecordOutcome`] and counted in
//! the diagnostics) or refused with a typed error.

#![no_std]
#![forbid(unsafe_code)]
#![warn(missing_docs)]
// The no_std discipline: only this crate needs it, so these lints live here, not workspace-wide.
#![warn(clippy::std_instead_of_core, clippy::alloc_instead_of_core)]

extern crate alloc;
#[cfg(any(feature = "std", test))]
extern crate std;

pub mod checkpoint;
pub mod config;
#[cfg(any(fuzzing, test, feature = "__fuzzing"))]
#[doc(hidden)]
pub mod fuzzing;
pub mod history;
pub(crate) mod java;
pub mod json;
mod kind;
pub mod machine;
pub mod name;
pub mod offsets;
pub mod persistent;
pub mod plan;
mod position;
mod record;
pub mod skips;
pub mod status;
mod sync;

pub use kind::TopicKind;
pub use machine::{Layer, Restore, Topic, TopicLog, TopicMachine};
pub use record::{OwnedRecord, ProducerRecord, Record, RecordError, RecordOutcome};

/// The README's code blocks, compiled and run as doctests so the README cannot drift.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
struct ReadmeDoctests;
