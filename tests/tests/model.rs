//! Model-based properties of the config machine on random logs: random writer operations (built
//! by the core's write side), random crash points, random compaction, compared with the naive
//! reference fold and checked against the properties of `spec/compaction.md` §4.
//!
//! Case count: `PROPTEST_CASES` (proptest's default of 256 when unset). A soak run:
//! `PROPTEST_CASES=20000 cargo test -p connect-state-tests --release --test model`.

use connect_state_tests::model::{
    compact, contract_without_session_key, record, reference, replay, tag, write_log,
};
use connect_state_tests::ops::{op, Op};
use engine::config::ConfigLog;
use proptest::prelude::*;

fn scenario() -> impl Strategy<Value = (Vec<(Op, Option<usize>)>, f64)> {
    (
        prop::collection::vec((op(), prop::option::weighted(0.2, 0usize..8)), 0..40),
        0.0f64..=1.0,
    )
}

fn batch_of(config: &engine::config::Properties) -> Option<&str> {
    config.get_str("batch")
}

proptest! {
    /// The core equals the naive reference fold, record by record, on compacted logs too.
    #[test]
    fn core_matches_reference_fold((ops, cut) in scenario()) {
        let log = write_log(&tag(ops));
        let horizon = (log.len() as f64 * cut) as i64;
        for log in [log.clone(), compact(&log, horizon)] {
            let core = replay(&log);
            prop_assert_eq!(contract_without_session_key(&core), reference(&log).to_contract());
        }
    }

    /// No mixed task sets (§4.1): a connector that is not flagged lists configs of one batch.
    #[test]
    fn no_mixed_task_sets((ops, cut) in scenario()) {
        let log = write_log(&tag(ops));
        let horizon = (log.len() as f64 * cut) as i64;
        for log in [log.clone(), compact(&log, horizon)] {
            let snapshot = replay(&log).snapshot();
            for c in snapshot.connectors() {
                if snapshot.is_inconsistent(c) {
                    continue;
                }
                let batches: std::collections::BTreeSet<Option<&str>> = snapshot
                    .tasks(c)
                    .map(|id| snapshot.task_config(&id).and_then(batch_of))
                    .collect();
                prop_assert!(batches.len() <= 1, "{c}: {batches:?}");
                prop_assert!(!batches.contains(&None), "{c}: a listed task has no config");
            }
        }
    }

    /// Convergence (§4.2): after a complete task write for a connector that exists, every reader
    /// (of the full or any compacted log) lists exactly that batch.
    #[test]
    fn convergence_after_a_complete_write((ops, cut) in scenario(), tasks in 0usize..5) {
        let mut ops = tag(ops);
        let batch = ops.len() as u32 + 1000;
        ops.push((Op::PutConnector { connector: 0, version: batch, state: None }, None));
        ops.push((Op::PutTasks { connector: 0, tasks, batch }, None));
        let log = write_log(&ops);
        let horizon = (log.len() as f64 * cut) as i64;
        for log in [log.clone(), compact(&log, horizon), compact(&log, log.len() as i64)] {
            let snapshot = replay(&log).snapshot();
            prop_assert!(!snapshot.is_inconsistent("a"));
            let ids = snapshot.tasks("a");
            prop_assert_eq!(ids.len(), tasks);
            for id in ids {
                let b = snapshot.task_config(&id).and_then(batch_of).map(str::to_string);
                prop_assert_eq!(b, Some(batch.to_string()));
            }
        }
    }

    /// Compaction equivalence (§4.3): connector configs and target states of a compacted log
    /// equal those of the full log (no tombstone is purged here). Target states are compared for
    /// connectors that exist: a deleted connector whose removal crashed before its target-state
    /// tombstone leaves Java's implicit `STARTED` default behind only for readers that saw its
    /// (since compacted) config record — the ghost target states of spec §8 item 5.
    #[test]
    fn compaction_equivalence((ops, cut) in scenario()) {
        let log = write_log(&tag(ops));
        let compacted = compact(&log, (log.len() as f64 * cut) as i64);
        let (full, short) = (replay(&log).snapshot(), replay(&compacted).snapshot());
        prop_assert_eq!(full.connectors().collect::<Vec<_>>(), short.connectors().collect::<Vec<_>>());
        for c in full.connectors() {
            prop_assert_eq!(full.connector_config(c), short.connector_config(c));
            prop_assert_eq!(full.target_state(c), short.target_state(c));
        }
        prop_assert_eq!(full.offset(), short.offset());
    }

    /// Determinism (§4.4), restart equivalence (§4.5) and offsets that never go back (§4.6).
    #[test]
    fn determinism_restart_and_monotonic_offsets((ops, cut) in scenario(), split in 0.0f64..=1.0) {
        let log = write_log(&tag(ops));
        let log = compact(&log, (log.len() as f64 * cut) as i64);
        let at = (log.len() as f64 * split) as usize;
        let mut never_stopped = ConfigLog::new();
        never_stopped.mark_caught_up();
        let mut first = ConfigLog::new();
        let mut events = Vec::new();
        let mut last_offset = never_stopped.offset();
        for (i, r) in log.iter().enumerate() {
            if i < at {
                first.handle_record(record(r)).unwrap();
            }
            never_stopped.handle_record(record(r)).unwrap();
            events.extend(std::iter::from_fn(|| never_stopped.poll_event()));
            prop_assert!(never_stopped.offset() >= last_offset);
            last_offset = never_stopped.offset();
        }
        let mut restarted = ConfigLog::restore(&first.checkpoint()).unwrap();
        for r in &log[at..] {
            restarted.handle_record(record(r)).unwrap();
        }
        prop_assert_eq!(restarted.snapshot(), never_stopped.snapshot());
        prop_assert_eq!(restarted.diagnostics(), never_stopped.diagnostics());

        let mut again = ConfigLog::new();
        again.mark_caught_up();
        let mut events_again = Vec::new();
        for r in &log {
            again.handle_record(record(r)).unwrap();
            events_again.extend(std::iter::from_fn(|| again.poll_event()));
        }
        prop_assert_eq!(again.snapshot(), never_stopped.snapshot());
        prop_assert_eq!(events_again, events);
    }
}
