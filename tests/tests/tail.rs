//! A server's tailer over the simulator: every published value is one consistent state (its
//! views, monitor and recent history at the positions it names), and stays what it was while
//! records go on arriving.

use std::sync::{Arc, Mutex};

use connect_state_memory::{MemoryCluster, MemoryTransport};
use connect_state_ops::tail::{Published, Tail, TailTopics};
use connect_state_store::{ConfigStore, ProduceMode, Store, StoreSettings, TopicKind, Transport};
use engine::config::{write, ConfigLog};
use engine::status::StatusLog;
use engine::ProducerRecord;

use connect_state_tests::sim::runtime;

/// A status record of task 0 of connector `c`, in state `state`, at time `ts`.
fn task_status(c: &str, state: &str, ts: i64) -> ProducerRecord {
    let value =
        format!(r#"{{"state":"{state}","trace":null,"worker_id":"w:8083","generation":{ts}}}"#);
    ProducerRecord {
        key: format!("status-task-{c}-0").into_bytes(),
        value: Some(value.into_bytes()),
        partition: Some(0),
    }
}

/// What a page shows of task 0 of `c`, and what its recent history and monitor say, all from
/// one published value: the invariants a mixed page would break.
fn check_consistent(published: &Published, c: &str) {
    let status = published
        .views
        .status
        .task(c, 0)
        .map(|s| s.state.as_str().to_string());
    let history = published.recent.of_connector(c);
    let last_told = history
        .iter()
        .rev()
        .find(|e| e.kind == "task_status_changed")
        .and_then(|e| e.details.get("to"))
        .and_then(|to| to.get("state"))
        .and_then(|s| s.as_str())
        .map(str::to_string);
    assert_eq!(status, last_told, "the history's last state is the view's");
    let told_offsets: Vec<i64> = history
        .iter()
        .filter(|e| e.position.topic == TopicKind::Status)
        .map(|e| e.position.offset)
        .collect();
    // A partition not read yet is at 0.
    let next = published.positions[&TopicKind::Status]
        .get(&0)
        .copied()
        .unwrap_or(0);
    assert!(
        told_offsets.iter().all(|&o| o < next),
        "nothing told beyond the positions the value names: {told_offsets:?} vs {next}"
    );
    let figures = &published.monitor.topics[&TopicKind::Status];
    assert_eq!(
        figures.next_offsets.get(&0),
        Some(&next),
        "the monitor read as far as the views"
    );
}

#[test]
fn each_published_value_is_one_state_and_stays_as_it_was() {
    runtime().block_on(async {
        let cluster = Arc::new(Mutex::new(MemoryCluster::new(3)));
        let transport: Arc<dyn Transport> = Arc::new(MemoryTransport::new(cluster.clone()));
        // A connector, and its status topic, as workers create them.
        let mut config = ConfigStore::new(
            StoreSettings::new("cfg", TopicKind::Config),
            transport.clone(),
            ConfigLog::new(),
        );
        config.start().await.unwrap();
        let plan = write::put_connector_config("c", [("tasks.max", Some("1"))], None);
        config.execute(&plan, false).await.unwrap();
        let mut status = Store::new(
            StoreSettings::new("st", TopicKind::Status),
            transport.clone(),
            StatusLog::new(),
        );
        status.start().await.unwrap();

        let connect = || Ok(Arc::clone(&transport));
        let topics = TailTopics {
            config: "cfg".into(),
            status: Some("st".into()),
            offsets: None,
        };
        let mut tail = Tail::start(&connect, topics, 50, &|_| None).await.unwrap();
        let first = tail.publish(&[]);
        assert_eq!(first.views.config.connectors().count(), 1);
        assert!(first.views.status.task("c", 0).is_none());
        check_consistent(&first, "c");

        let mut kept: Vec<(Published, Option<String>, usize)> = Vec::new();
        let states = ["RUNNING", "PAUSED", "FAILED", "RUNNING", "UNASSIGNED"];
        for (round, state) in states.iter().enumerate() {
            // Records arrive, then the tailer reads them and publishes.
            transport
                .produce(
                    "st",
                    &[task_status("c", state, round as i64)],
                    ProduceMode::Plain,
                )
                .await
                .unwrap();
            let moved = tail.refresh().await.unwrap();
            assert_eq!(moved, [TopicKind::Status]);
            let published = tail.publish(&moved);
            check_consistent(&published, "c");
            assert_eq!(
                published
                    .views
                    .status
                    .task("c", 0)
                    .map(|s| s.state.as_str()),
                Some(*state)
            );
            let shown = published
                .views
                .status
                .task("c", 0)
                .map(|s| s.state.as_str().to_string());
            let told = published.recent.of_connector("c").len();
            kept.push((published, shown, told));
        }
        // Values published earlier still show what they showed.
        for (published, shown, told) in &kept {
            let now = published
                .views
                .status
                .task("c", 0)
                .map(|s| s.state.as_str().to_string());
            assert_eq!(&now, shown);
            assert_eq!(published.recent.of_connector("c").len(), *told);
            check_consistent(published, "c");
        }
        // Nothing moved: nothing to publish, and the tailer says so.
        assert!(tail.refresh().await.unwrap().is_empty());
    });
}
