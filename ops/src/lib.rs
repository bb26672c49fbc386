//! # connect-state-ops
//!
//! The operator logic built on [`connect_state_core`](engine), shared by the `connect-state`
//! binary, the fuzz targets, the tests and embedders. No command-line grammar, no rendering.
//!
//! * Reading: kcat dumps as a stream ([`kcat`]), a dump's drive loop ([`replay`]), one topic
//!   read to its end from a dump or a live cluster ([`load`]) into [`topics`], `--as-of`
//!   ([`cut`]), the key index findings cite ([`index`]).
//! * Examining: `doctor`'s checks over values taken from the machines ([`doctor`]), the
//!   changes each record made ([`history`]), two states compared ([`diff`]).
//! * Serving: tailing the topics and publishing one consistent value per refresh ([`tail`]),
//!   with the recent history ([`recent`]) and the monitor ([`monitor`]); Connect's REST
//!   answers from snapshots ([`rest`]).
//! * Backing up and restoring a cluster's state ([`backup`]).
//! * Writing and more: KIP-875 offsets documents as Java reads them ([`offsets_file`]), the
//!   embedding API the bindings wrap ([`embed`]), deterministic synthetic topics for
//!   benchmarks and tests ([`synth`]).

pub mod backup;
pub mod cut;
pub mod diff;
pub mod doctor;
pub mod embed;
pub mod history;
pub mod index;
pub mod kcat;
mod lines;
pub mod load;
pub mod monitor;
pub mod offsets_file;
pub mod recent;
pub mod replay;
pub mod rest;
pub mod synth;
pub mod tail;
pub mod topics;
