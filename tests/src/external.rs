//! Tests that need something outside Rust: the Java oracle (a JDK and Maven), a Java 17,
//! Python's `confluent-kafka` and `prometheus-client`, Chromium. Where it is absent they skip with one line on stderr, so
//! `cargo test --workspace` passes on a machine with only Rust; CI sets [`REQUIRE_ENV`], which
//! turns every such skip into a failure, so CI always runs them. (Tests that need a broker or
//! the local cluster are `#[ignore]`d instead, and CI runs them with `--ignored`.)

/// The variable that makes every missing external dependency a failure:
/// `CONNECT_STATE_REQUIRE_EXTERNAL=1`.
pub const REQUIRE_ENV: &str = "CONNECT_STATE_REQUIRE_EXTERNAL";

/// Whether [`REQUIRE_ENV`] is set (to anything but `0`).
pub fn required() -> bool {
    std::env::var_os(REQUIRE_ENV).is_some_and(|v| v != "0")
}

/// Reports that a test cannot run because `what` is missing (`why`): one `skipped:` line on
/// stderr, or a panic when [`required`]. Call it, then return from the test.
///
/// The line is written to the stderr handle itself, which the test harness does not capture
/// (it captures `eprintln!`), so it shows in a plain `cargo test` run.
pub fn skip(what: &str, why: &str) {
    use std::io::Write;
    if required() {
        panic!("{what} is required ({REQUIRE_ENV} is set) but missing: {why}");
    }
    let _ = writeln!(std::io::stderr(), "skipped: {what} is missing here ({why})");
}

/// Whether `python3` can import `module`.
pub fn python_module(module: &str) -> Result<(), String> {
    let output = std::process::Command::new("python3")
        .args(["-c", &format!("import {module}")])
        .output()
        .map_err(|e| format!("python3 does not run: {e}"))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(format!(
            "python3 cannot import {module}: pip install {}",
            module.replace('_', "-")
        ))
    }
}

/// Runs `command` with `input` as its standard input and collects its output. The input is
/// written from a thread of its own, so a program that writes while it reads cannot block on a
/// full pipe.
pub fn run_with_stdin(
    command: &mut std::process::Command,
    input: &[u8],
) -> std::io::Result<std::process::Output> {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let mut stdin = child.stdin.take().expect("stdin is piped");
    let input = input.to_vec();
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let output = child.wait_with_output()?;
    // A program that exits without reading all of its input is not an error here.
    let _ = writer.join();
    Ok(output)
}

#[cfg(test)]
mod tests {
    #[test]
    fn input_larger_than_a_pipe_reaches_the_program() {
        let input = vec![b'x'; 1 << 20];
        let output = super::run_with_stdin(&mut std::process::Command::new("cat"), &input).unwrap();
        assert!(output.status.success());
        assert_eq!(output.stdout.len(), input.len());
    }
}
