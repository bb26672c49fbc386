//! Java is the judge, on generated logs: every case goes through the core and through Kafka
//! Connect's own stores (the oracle), and must agree under the README's deliberate
//! differences. Skipped, with a message, where Java or Maven is missing.
//!
//! The case count is proptest's (`PROPTEST_CASES`, 256 by default); the soak run is
//! `cargo run --release -p connect-state-tests --bin differential-soak`.

use connect_state_tests::cases::{config_case, offsets_case, status_case};
use connect_state_tests::differential::{judge, judge_restarted};
use connect_state_tests::oracle::{oracle, Case};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

fn agrees(case: &Case) -> Result<(), TestCaseError> {
    let Some(mut oracle) = oracle() else {
        return Ok(());
    };
    judge(&mut oracle, case)
        .map(|_| ())
        .map_err(|d| TestCaseError::fail(d.to_string()))
}

/// A log cut at `at`, checkpointed and restored there, must still give Java's state.
fn agrees_restarted(case: &Case, at: f64) -> Result<(), TestCaseError> {
    let Some(mut oracle) = oracle() else {
        return Ok(());
    };
    judge_restarted(&mut oracle, case, at)
        .map(|_| ())
        .map_err(|d| TestCaseError::fail(d.to_string()))
}

proptest! {
    #[test]
    fn config_logs_restored_from_a_checkpoint_agree_with_java(case in config_case(), at in 0.0..1.0f64) {
        agrees_restarted(&case, at)?;
    }

    #[test]
    fn status_logs_restored_from_a_checkpoint_agree_with_java(case in status_case(), at in 0.0..1.0f64) {
        agrees_restarted(&case, at)?;
    }

    #[test]
    fn offsets_logs_restored_from_a_checkpoint_agree_with_java(case in offsets_case(), at in 0.0..1.0f64) {
        agrees_restarted(&case, at)?;
    }

    #[test]
    fn config_logs_agree_with_java(case in config_case()) {
        agrees(&case)?;
    }

    #[test]
    fn status_logs_agree_with_java(case in status_case()) {
        agrees(&case)?;
    }

    #[test]
    fn offsets_logs_agree_with_java(case in offsets_case()) {
        agrees(&case)?;
    }
}
