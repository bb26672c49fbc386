//! The `connect-state` command line: the grammar ([`command`]), one module per command that
//! renders what the operator logic (`connect_state_ops`) computes, `serve`'s HTTP layers, and
//! the floor they share ([`common`]). The binary is a thin `main` over [`run`].

pub mod admission;
pub mod backup;
pub mod bench;
pub mod command;
pub mod common;
pub mod demo;
pub mod diff;
pub mod doctor;
pub mod history;
pub mod http1;
#[cfg(feature = "kafka")]
pub mod inspect;
pub mod metrics;
pub mod offsets;
mod parallel;
pub mod progress;
pub mod replay;
pub mod restore;
pub mod serve;
pub mod source;
mod table;
pub mod ui;
pub mod view;
pub mod when;

pub use command::{run, Cli, Command, VERSION};
pub use common::{printable, redact, register_secrets, CliError, Exit, Format};
pub use connect_state_ops::{kcat, rest, synth};
