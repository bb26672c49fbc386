//! connect-state-kafka: the [`Transport`](connect_state_store::Transport) of the generic stores
//! over a real Kafka cluster, with rdkafka (librdkafka built from its bundled source) and tokio.
//!
//! * Reading: manual assignment of each partition from the requested offset (no consumer group
//!   offsets); a partition read stays assigned with a queue of its own, so librdkafka prefetches
//!   every partition while the store applies one; reading until the partition's
//!   end-of-partition event, `read_committed` when asked
//!   (Java's rule: when exactly-once source support is `enabled`); records a broker resends below
//!   the requested offset are dropped.
//! * Writing: `acks=all` with librdkafka's `murmur2_random` partitioner, which places keys on the
//!   same partitions as Java's default partitioner; tombstones as null values; the transactional
//!   producer (`transactional.id`) for the leader's fenced writes, one transaction per batch and
//!   write privileges dropped on any failure.
//! * Admin: topic creation (compact, with the caller's settings) and description (partition count
//!   and `cleanup.policy`) for the store's start-up checks, through one admin client per distinct
//!   settings that the process's transports share (dropping one waited up to 100 ms).
//! * Any librdkafka property passes through ([`KafkaSettings::properties`]); secrets never show
//!   in `Debug` output. TLS (`security.protocol=SSL`, client certificates) and SASL (PLAIN,
//!   SCRAM-SHA-256/512) work: librdkafka is built with a vendored OpenSSL (rdkafka's
//!   `ssl-vendored` feature), so no system library is needed.
//! * A refused login or a failed TLS handshake, which librdkafka only reports through its error
//!   callback, stops the waiting call at once with that reason (secrets redacted).

mod admin;
mod context;
pub mod raw;
mod reader;
mod settings;
mod transport;

pub use connect_state_store::is_secret;
pub use settings::{redact, KafkaSettings, MAX_REQUEST_TIMEOUT};
pub use transport::KafkaTransport;
