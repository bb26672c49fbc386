//! The `connect-state` binary.

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;
use connect_state_cli::{run, Cli, Exit};

#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(Exit::Success) => ExitCode::SUCCESS,
        Ok(Exit::Findings) => ExitCode::from(1),
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "error: {e}");
            ExitCode::from(2)
        }
    }
}
