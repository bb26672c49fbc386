//! connect-state-memory: the in-memory compacting-log simulator.
//!
//! **Not implemented yet** (issue #4). This crate deliberately exports nothing so that no caller
//! can mistake it for a working transport.

#![forbid(unsafe_code)]
