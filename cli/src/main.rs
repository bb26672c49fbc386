//! The `connect-state` binary.

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;
use connect_state_cli::{run, Cli};

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "error: {e}");
            ExitCode::FAILURE
        }
    }
}
