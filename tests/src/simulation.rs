//! One randomized run of the config topic through the in-memory simulator and the compaction
//! properties of `spec/compaction.md` §4 checked on its outcome. The simulation property test
//! generates runs with proptest; the `simulator` fuzz target decodes them from fuzzer bytes.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use connect_state_memory::{FetchFault, MemoryCluster, MemoryTransport, ProduceFault, TopicConfig};
use connect_state_store::{ConfigStore, StoreSettings, TopicKind};
use engine::config::write::{self, put_task_configs};
use engine::config::{ConfigLog, ConfigSnapshot, ConfigSnapshotJson};

use crate::ops::Op;

/// The config topic's name in simulated clusters.
pub const TOPIC: &str = "connect-configs";

/// One run: writer operations with crash points, where a late reader starts, how it fetches and
/// how often cleaning runs.
#[derive(Debug, Clone)]
pub struct Run {
    /// The cluster's seed (random cleaning decisions).
    pub seed: u64,
    /// Operations, each with the number of records after which its writer crashes.
    pub ops: Vec<(Op, Option<usize>)>,
    /// The operation before which the late reader starts.
    pub late_start: usize,
    /// Records per fetch of the late reader.
    pub fetch_size: usize,
    /// Probability that the cleaner runs between two fetches of the late reader.
    pub clean_probability: f64,
    /// Whether a full cleaning pass runs after operation `i`.
    pub clean_after_op: Vec<bool>,
    /// Tasks of the final complete write for connector `a`.
    pub final_tasks: usize,
}

/// The snapshots a run leaves behind.
#[derive(Debug)]
pub struct Outcome {
    /// The reader that reads after every operation, before any cleaning.
    pub tail: ConfigSnapshot,
    /// The reader that starts late, with small fetches and cleaning between them.
    pub late: ConfigSnapshot,
    /// A reader started after a final full cleaning pass.
    pub fresh: ConfigSnapshot,
    /// A reader restored from a checkpoint of the tail reader at the late start.
    pub restarted: ConfigSnapshot,
    /// Events the tail reader emitted.
    pub tail_events: usize,
    /// Whether the late reader's offset never went back.
    pub offsets_monotonic: bool,
}

pub use crate::sim::runtime;

/// A seeded cluster holding the config topic.
pub fn cluster(seed: u64, config: TopicConfig) -> Arc<Mutex<MemoryCluster>> {
    crate::sim::cluster(seed, TOPIC, config)
}

/// A config store reading [`TOPIC`] through `transport`.
pub fn store(transport: MemoryTransport) -> ConfigStore<MemoryTransport> {
    crate::sim::store(TOPIC, TopicKind::Config, Arc::new(transport))
}

/// Runs `f` on the locked cluster.
pub fn with_cluster<R>(
    cluster: &Arc<Mutex<MemoryCluster>>,
    f: impl FnOnce(&mut MemoryCluster) -> R,
) -> R {
    f(&mut crate::sim::lock(cluster))
}

/// The `batch` tags of the tasks a snapshot lists for `connector`, in task order (`?` for a
/// listed task without a config).
pub fn batches(snapshot: &ConfigSnapshot, connector: &str) -> Vec<String> {
    snapshot
        .tasks(connector)
        .map(|id| {
            snapshot
                .task_config(&id)
                .and_then(|p| p.get_str("batch"))
                .unwrap_or("?")
                .to_string()
        })
        .collect()
}

/// A snapshot in the JSON contract.
pub fn json(snapshot: &ConfigSnapshot) -> serde_json::Value {
    serde_json::to_value(ConfigSnapshotJson(snapshot)).expect("snapshots serialize")
}

/// Executes a run: every operation through a writer (a dying one when it has a crash point),
/// readers following, cleaning passes, then a final complete write for `a` and a full clean.
/// Panics when a store fails, which no run should make it do.
pub fn execute(run: &Run) -> Outcome {
    runtime().block_on(async {
        let cluster = cluster(run.seed, TopicConfig::compacted(1).with_segment_records(8));
        let mut writer = store(MemoryTransport::new(cluster.clone()));
        writer.start().await.unwrap();
        let mut tail = store(MemoryTransport::new(cluster.clone()));
        tail.start().await.unwrap();
        let mut restarted: Option<ConfigStore<MemoryTransport>> = None;
        let late_transport =
            MemoryTransport::new(cluster.clone()).with_max_fetch_records(run.fetch_size.max(1));
        late_transport.set_fetch_fault(Some(FetchFault::CleanRandomly {
            probability: run.clean_probability,
        }));
        let mut late = store(late_transport);
        let mut late_started = false;
        let mut tail_events = 0;
        let mut offsets_monotonic = true;
        let mut last_late_offset = i64::MIN;
        for (i, (op, crash)) in run.ops.iter().enumerate() {
            if i == run.late_start {
                late.start().await.unwrap();
                late_started = true;
                // A restart point: a checkpoint of the tail reader, restored and reading on.
                let machine = ConfigLog::restore(&tail.machine().checkpoint()).unwrap();
                let mut r = ConfigStore::new(
                    StoreSettings::new(TOPIC, TopicKind::Config),
                    Arc::new(MemoryTransport::new(cluster.clone())),
                    machine,
                );
                r.start().await.unwrap();
                restarted = Some(r);
            }
            if let Some(k) = crash {
                // The leader dies after k records of this write; a new leader carries on.
                let dying = MemoryTransport::new(cluster.clone());
                dying.push_produce_fault(ProduceFault::CrashAfter(*k));
                let mut dying_writer = store(dying);
                dying_writer.start().await.unwrap();
                let _ = dying_writer.execute(&op.plan(), false).await;
            } else {
                writer.execute(&op.plan(), false).await.unwrap();
            }
            tail_events += tail.read_to_end().await.unwrap().len();
            if let Some(r) = restarted.as_mut() {
                r.read_to_end().await.unwrap();
            }
            if late_started {
                late.read_to_end().await.unwrap();
                offsets_monotonic &= late.machine().offset() >= last_late_offset;
                last_late_offset = late.machine().offset();
            }
            if run.clean_after_op.get(i).copied().unwrap_or(false) {
                with_cluster(&cluster, |c| c.clean_all(TOPIC).unwrap());
            }
        }
        // A final complete write for connector "a".
        writer.read_to_end().await.unwrap();
        writer
            .execute(
                &write::put_connector_config("a", [("name", Some("a"))], None),
                false,
            )
            .await
            .unwrap();
        let configs: Vec<Vec<(String, String)>> = (0..run.final_tasks)
            .map(|i| {
                vec![
                    ("batch".into(), "final".into()),
                    ("task".into(), i.to_string()),
                ]
            })
            .collect();
        writer
            .execute(
                &put_task_configs(
                    "a",
                    configs
                        .iter()
                        .map(|p| p.iter().map(|(k, v)| (k.as_str(), Some(v.as_str())))),
                ),
                false,
            )
            .await
            .unwrap();
        tail_events += tail.read_to_end().await.unwrap().len();
        if !late_started {
            late.start().await.unwrap();
        }
        late.read_to_end().await.unwrap();
        let restarted = match restarted {
            Some(mut r) => {
                r.read_to_end().await.unwrap();
                r.machine().snapshot()
            }
            None => tail.machine().snapshot(),
        };
        with_cluster(&cluster, |c| {
            c.roll_segment(TOPIC, 0).unwrap();
            c.clean_all(TOPIC).unwrap();
        });
        let mut fresh = store(
            MemoryTransport::new(cluster.clone()).with_max_fetch_records(run.fetch_size.max(1)),
        );
        fresh.start().await.unwrap();
        Outcome {
            tail: tail.machine().snapshot(),
            late: late.machine().snapshot(),
            fresh: fresh.machine().snapshot(),
            restarted,
            tail_events,
            offsets_monotonic,
        }
    })
}

/// Checks §4.1 no mixed task sets, §4.2 convergence, §4.3 compaction equivalence, §4.5 restart
/// equivalence and §4.6 offsets that never go back on a run's outcome; the first violation is
/// the error.
///
/// "No mixed task sets" is checked for readers that the cleaner does not overtake (the tail,
/// the restarted and the fresh reader): a lagging reader whose unread records are cleaned away
/// can, with Java's algorithm, apply a mixed set (the simulation test
/// `a_lagging_reader_overtaken_by_the_cleaner_can_apply_a_mixed_task_set` pins that case).
pub fn check_properties(run: &Run, outcome: &Outcome) -> Result<(), String> {
    if !outcome.offsets_monotonic {
        return Err("the late reader's offset went back".into());
    }
    for (name, snapshot) in [
        ("tail", &outcome.tail),
        ("fresh", &outcome.fresh),
        ("restarted", &outcome.restarted),
    ] {
        for c in snapshot.connectors() {
            if snapshot.is_inconsistent(c) {
                continue;
            }
            let set: BTreeSet<String> = batches(snapshot, c).into_iter().collect();
            if set.len() > 1 {
                return Err(format!("{name} reader: mixed task set for {c:?}: {set:?}"));
            }
        }
    }
    let expected = vec!["final".to_string(); run.final_tasks];
    for (name, snapshot) in [
        ("tail", &outcome.tail),
        ("late", &outcome.late),
        ("fresh", &outcome.fresh),
        ("restarted", &outcome.restarted),
    ] {
        if snapshot.is_inconsistent("a") {
            return Err(format!(
                "{name} reader: `a` is inconsistent after a complete write"
            ));
        }
        let got = batches(snapshot, "a");
        if got != expected {
            return Err(format!(
                "{name} reader: `a` lists {got:?}, expected {expected:?}"
            ));
        }
    }
    // Compaction equivalence: the fresh reader of the cleaned log and the tail reader agree on
    // connector configs, and on target states of existing connectors.
    let (tail, fresh) = (&outcome.tail, &outcome.fresh);
    let connectors: Vec<&str> = tail.connectors().collect();
    if connectors != fresh.connectors().collect::<Vec<_>>() {
        return Err(format!(
            "connectors differ after cleaning: tail {connectors:?}, fresh {:?}",
            fresh.connectors().collect::<Vec<_>>()
        ));
    }
    for c in connectors {
        if tail.connector_config(c) != fresh.connector_config(c) {
            return Err(format!("connector config of {c:?} differs after cleaning"));
        }
        if tail.target_state(c) != fresh.target_state(c) {
            return Err(format!("target state of {c:?} differs after cleaning"));
        }
    }
    if json(&outcome.restarted) != json(&outcome.tail) {
        return Err("the reader restored from a checkpoint differs from the tail reader".into());
    }
    Ok(())
}
