//! connect-state-kafka: the Kafka transport over rdkafka and tokio.
//!
//! **Not implemented yet** (issue #5). This crate deliberately exports nothing so that no caller
//! can mistake it for a working transport.

#![forbid(unsafe_code)]
