//! Java is the judge of the write side: generated calls of every Java write method go through
//! Java's own writers (the oracle) and the core's, and must produce the same records, byte for
//! byte, in the same steps, and the same state once read back. Skipped, with a message, where
//! Java or Maven is missing.

use connect_state_tests::cases::{config_base, offsets_base, status_base};
use connect_state_tests::oracle::oracle;
use connect_state_tests::writes::{
    config_write, judge_config_writes, judge_offsets_writes, judge_status_writes, offsets_write,
    status_write,
};
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

fn fail(d: connect_state_tests::differential::Difference) -> TestCaseError {
    TestCaseError::fail(d.to_string())
}

proptest! {
    #[test]
    fn config_writes_agree_with_java(base in config_base(), writes in vec(config_write(), 1..6)) {
        let Some(mut oracle) = oracle() else { return Ok(()) };
        judge_config_writes(&mut oracle, &base, &writes).map_err(fail)?;
    }

    #[test]
    fn status_writes_agree_with_java(base in status_base(), writes in vec(status_write(), 1..8)) {
        let Some(mut oracle) = oracle() else { return Ok(()) };
        judge_status_writes(&mut oracle, &base, &writes, 5).map_err(fail)?;
    }

    #[test]
    fn offsets_writes_agree_with_java(base in offsets_base(), writes in vec(offsets_write(), 1..5)) {
        let Some(mut oracle) = oracle() else { return Ok(()) };
        judge_offsets_writes(&mut oracle, &base, &writes, 25).map_err(fail)?;
    }
}
