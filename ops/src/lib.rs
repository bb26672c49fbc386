//! # connect-state-ops
//!
//! The operator logic built on [`connect_state_core`](engine), shared by the `connect-state`
//! binary, the fuzz targets, the tests and embedders: reading kcat dumps as a stream
//! ([`kcat`]), the key index that lets findings cite records ([`index`]), Connect's REST
//! answers from snapshots ([`rest`]), `doctor`'s examination ([`doctor`]) of topics read to
//! their end ([`topics`]), KIP-875 offsets documents as Java reads them
//! ([`offsets_file`]) and deterministic synthetic topics for benchmarks and tests
//! ([`synth`]). No command-line grammar, no rendering, no network.

pub mod cut;
pub mod diff;
pub mod doctor;
pub mod embed;
pub mod history;
pub mod index;
pub mod kcat;
pub mod offsets_file;
pub mod rest;
pub mod synth;
pub mod topics;
pub mod watch;
