//! The rule for tests that need something outside Rust (issue 14 item 15): a one-line skip
//! notice where it is missing, a failure when `CONNECT_STATE_REQUIRE_EXTERNAL` is set.

use std::process::Command;

use connect_state_tests::external::{python_module, skip, REQUIRE_ENV};

const PROBE: &str = "CONNECT_STATE_EXTERNAL_PROBE";

/// Runs itself as a child (with [`PROBE`] set, the child only skips), once without and once
/// with the variable: the first passes and says why it skipped, the second fails.
#[test]
fn a_missing_dependency_skips_or_fails_as_the_environment_says() {
    if std::env::var_os(PROBE).is_some() {
        skip("a probe dependency", "asked for by the test");
        return;
    }
    let exe = std::env::current_exe().unwrap();
    for required in [None, Some("1")] {
        let mut child = Command::new(&exe);
        child
            .args([
                "--exact",
                "a_missing_dependency_skips_or_fails_as_the_environment_says",
            ])
            .env(PROBE, "1")
            .env_remove(REQUIRE_ENV);
        if let Some(value) = required {
            child.env(REQUIRE_ENV, value);
        }
        let out = child.output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        let stdout = String::from_utf8_lossy(&out.stdout);
        match required {
            None => {
                assert!(out.status.success(), "{stdout}{stderr}");
                assert!(
                    stderr.contains(
                        "skipped: a probe dependency is missing here (asked for by the test)"
                    ),
                    "{stderr}"
                );
            }
            Some(_) => {
                assert!(!out.status.success(), "{stdout}{stderr}");
                assert!(stdout.contains("is required"), "{stdout}");
            }
        }
    }
}

#[test]
fn a_missing_python_module_names_its_pip_package() {
    let err = python_module("surely_no_such_module_here").unwrap_err();
    assert!(
        err.contains("pip install surely-no-such-module-here") || err.contains("does not run"),
        "{err}"
    );
}
