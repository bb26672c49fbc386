//! The `connect-state` binary.

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;
use connect_state_cli::{printable, redact, register_secrets, run, Cli, Exit};

#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    // Secret -X values never reach the terminal, whatever error text echoes them.
    register_secrets(std::env::args());
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        // Usage errors exit 2 and --help/--version 0, as clap's own exit would; the text may
        // quote an argument, so it is redacted too.
        Err(e) => {
            let text = printable(&redact(&e.render().to_string()));
            if e.use_stderr() {
                let _ = write!(std::io::stderr(), "{text}");
                return ExitCode::from(2);
            }
            let _ = write!(std::io::stdout(), "{text}");
            return ExitCode::SUCCESS;
        }
    };
    match run(cli) {
        Ok(Exit::Success) => ExitCode::SUCCESS,
        Ok(Exit::Findings) => ExitCode::from(1),
        // The reader of the output left (`| head -1`): what it wanted, it has.
        Err(e) if e.is_broken_pipe() => ExitCode::SUCCESS,
        Err(e) => {
            let text = printable(&redact(&format!("error: {e}")));
            let _ = writeln!(std::io::stderr(), "{text}");
            ExitCode::from(2)
        }
    }
}
