//! Backup, restore and backup again on the simulator: a generated cluster's config and offsets
//! topics are backed up, the backup is restored (as backed up, task configs included) into
//! empty topics of another simulated cluster through the write plans, and a backup of that
//! cluster holds the same connectors, configs, target states, task configs and offsets records
//! byte for byte (the header and the checksum over it aside). A rename moves every key to the
//! new name and nothing else.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

use connect_state_memory::{MemoryCluster, MemoryTransport};
use connect_state_ops::backup::document::{
    DocumentReader, Header, Item, Source, DEFAULT_MAX_LINE_BYTES,
};
use connect_state_ops::backup::restore::{self, RestoreOptions, Steps, Target, TargetStateChoice};
use connect_state_ops::backup::take::{write_backup, BackupOptions, State};
use connect_state_store::{Store, StoreSettings, TopicKind};
use engine::config::{write, ConfigLog, TargetState};
use engine::offsets::{default_partition, OffsetLog};
use engine::plan::{ProducerKind, WritePlan};
use engine::ProducerRecord;
use proptest::prelude::*;

use connect_state_tests::sim::runtime;

const OFFSETS_PARTITIONS: i32 = 25;

/// One generated connector: its config (or none: offsets only), target state, task configs
/// and source partitions (`file` -> position, `None` for a tombstoned one).
#[derive(Debug, Clone)]
struct Connector {
    name: String,
    config: Option<BTreeMap<String, String>>,
    state: TargetState,
    tasks: Vec<BTreeMap<String, String>>,
    offsets: BTreeMap<String, Option<u32>>,
}

fn connector() -> impl Strategy<Value = Connector> {
    let word = "[a-z.]{1,6}";
    (
        "[a-z]{1,4}",
        proptest::option::weighted(
            0.8,
            proptest::collection::btree_map(word, "[ -~é]{0,8}", 0..4),
        ),
        prop_oneof![
            Just(TargetState::Started),
            Just(TargetState::Paused),
            Just(TargetState::Stopped)
        ],
        proptest::collection::vec(
            proptest::collection::btree_map(word, "[a-z]{0,4}", 0..3),
            0..3,
        ),
        proptest::collection::btree_map(
            "[a-z/]{1,5}",
            proptest::option::weighted(0.8, 0u32..1000),
            0..6,
        ),
    )
        .prop_map(|(name, config, state, tasks, offsets)| Connector {
            name,
            config,
            state,
            tasks,
            offsets,
        })
}

fn cluster() -> Arc<Mutex<MemoryCluster>> {
    Arc::new(Mutex::new(MemoryCluster::new(7)))
}

type Stores = (
    Store<ConfigLog, MemoryTransport>,
    Store<OffsetLog, MemoryTransport>,
);

/// Started (created when missing) config and offsets stores over `cluster`, read to the end.
async fn stores(cluster: &Arc<Mutex<MemoryCluster>>) -> Stores {
    let transport = Arc::new(MemoryTransport::new(cluster.clone()));
    let mut config = Store::new(
        StoreSettings::new("cfg", TopicKind::Config),
        transport.clone(),
        ConfigLog::new(),
    );
    config.start().await.unwrap();
    let mut offsets = Store::new(
        StoreSettings::new("off", TopicKind::Offsets),
        transport,
        OffsetLog::new(),
    );
    offsets.start().await.unwrap();
    (config, offsets)
}

/// Writes `connectors` as Java's herder and source tasks would.
async fn write_cluster(stores: &mut Stores, connectors: &[Connector]) {
    let (config, offsets) = stores;
    for c in connectors {
        if let Some(props) = &c.config {
            let props = props.iter().map(|(k, v)| (k.as_str(), Some(v.as_str())));
            config
                .execute(&write::put_connector_config(&c.name, props, None), false)
                .await
                .unwrap();
            let tasks = c
                .tasks
                .iter()
                .map(|t| t.iter().map(|(k, v)| (k.as_str(), Some(v.as_str()))));
            config
                .execute(&write::put_task_configs(&c.name, tasks), false)
                .await
                .unwrap();
            config
                .execute(&write::put_target_state(&c.name, c.state), false)
                .await
                .unwrap();
        }
        let mut records = Vec::new();
        for (file, position) in &c.offsets {
            let key = serde_json::to_vec(&serde_json::json!([c.name, {"file": file}])).unwrap();
            let partition = default_partition(&key, OFFSETS_PARTITIONS);
            // A tombstoned partition had a value first.
            records.push(ProducerRecord {
                key: key.clone(),
                value: Some(format!("{{\"position\":{}}}", position.unwrap_or(0)).into_bytes()),
                partition,
            });
            if position.is_none() {
                records.push(ProducerRecord {
                    key,
                    value: None,
                    partition,
                });
            }
        }
        if !records.is_empty() {
            let plan = WritePlan::batch(ProducerKind::Privileged, records, false, "offsets");
            offsets.execute(&plan, false).await.unwrap();
        }
    }
    config.read_to_end().await.unwrap();
    offsets.read_to_end().await.unwrap();
}

fn header() -> Header {
    let source = Source {
        kind: "live".into(),
        bootstrap_servers: None,
        topics: BTreeMap::new(),
    };
    Header::new("round-trip", "2026-12-03T00:00:00Z", source)
}

/// The backup of what `stores` hold, all connectors, consistent or not.
fn backup(stores: &Stores) -> Vec<u8> {
    let config = stores.0.machine().snapshot();
    let offsets = stores.1.machine().snapshot();
    let state = State {
        config: &config,
        offsets: Some(&offsets),
        status: None,
    };
    let options = BackupOptions {
        allow_inconsistent: true,
        ..BackupOptions::default()
    };
    write_backup(Vec::new(), &header(), &state, &options)
        .unwrap()
        .0
}

/// Restores `document` into `stores` with `options`.
async fn restore(document: &[u8], stores: &mut Stores, options: &RestoreOptions) {
    let open = || DocumentReader::open(document, DEFAULT_MAX_LINE_BYTES).unwrap();
    let verified = restore::verify(open(), options).unwrap();
    let config = stores.0.machine().snapshot();
    let offsets = stores.1.machine().snapshot();
    let target = Target {
        config: &config,
        offsets: &offsets,
        offsets_partitions: OFFSETS_PARTITIONS,
    };
    let plan = restore::plan(&verified, &target, options).unwrap();
    let steps = Steps::new(&plan, open());
    let (config, offsets) = stores;
    restore::apply(&verified.header, steps, &plan, config, offsets, |_| {})
        .await
        .unwrap();
    config.read_to_end().await.unwrap();
    offsets.read_to_end().await.unwrap();
}

/// The document's lines between the header and the end line.
fn body(document: &[u8]) -> Vec<String> {
    let text = std::str::from_utf8(document).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    lines[1..lines.len() - 1]
        .iter()
        .map(|l| l.to_string())
        .collect()
}

fn as_backed_up() -> RestoreOptions {
    RestoreOptions {
        target_state: TargetStateChoice::AsBackedUp,
        with_task_configs: true,
        ..RestoreOptions::default()
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(48),
        ..ProptestConfig::default()
    })]

    #[test]
    fn backup_restore_backup_gives_the_same_document(
        connectors in proptest::collection::vec(connector(), 0..6),
    ) {
        // One connector per name: the last generated wins, as in a topic.
        let mut by_name = BTreeMap::new();
        for c in connectors {
            by_name.insert(c.name.clone(), c);
        }
        let connectors: Vec<Connector> = by_name.into_values().collect();
        runtime().block_on(async {
            let mut source = stores(&cluster()).await;
            write_cluster(&mut source, &connectors).await;
            let first = backup(&source);

            let mut target = stores(&cluster()).await;
            restore(&first, &mut target, &as_backed_up()).await;
            let second = backup(&target);
            prop_assert_eq!(body(&first), body(&second));

            // The document reads back whole, and holds every live source partition.
            let mut reader = DocumentReader::open(&first[..], DEFAULT_MAX_LINE_BYTES).unwrap();
            let mut partitions = 0;
            while let Some(item) = reader.next_item().unwrap() {
                partitions += matches!(item, Item::Offset(_)) as usize;
            }
            let live: usize = connectors
                .iter()
                .map(|c| c.offsets.values().filter(|p| p.is_some()).count())
                .sum();
            prop_assert_eq!(partitions, live);
            Ok(())
        })?;
    }

    #[test]
    fn a_renamed_restore_moves_every_key_to_the_new_name(
        connector in connector(),
    ) {
        let live = connector.offsets.values().filter(|p| p.is_some()).count();
        // A connector with neither a config nor a live offset is not in the backup.
        prop_assume!(connector.config.is_some() || live > 0);
        let connectors = [connector.clone()];
        runtime().block_on(async {
            let mut source = stores(&cluster()).await;
            write_cluster(&mut source, &connectors).await;
            let first = backup(&source);
            let mut target = stores(&cluster()).await;
            let options = RestoreOptions {
                renames: BTreeMap::from([(connector.name.clone(), "renamed".into())]),
                ..RestoreOptions::default()
            };
            restore(&first, &mut target, &options).await;
            let config = target.0.machine().snapshot();
            let offsets = target.1.machine().snapshot();
            let names: BTreeSet<&str> = config.connectors().collect();
            if let Some(backed_up) = &connector.config {
                prop_assert_eq!(names, BTreeSet::from(["renamed"]));
                prop_assert_eq!(config.target_state("renamed"), Some(TargetState::Stopped));
                let restored = config.connector_config("renamed").unwrap();
                // Every value as backed up; `name` follows the rename only when it was there.
                for (k, v) in backed_up {
                    let expected = if k == "name" { "renamed" } else { v.as_str() };
                    prop_assert_eq!(restored.get_str(k), Some(expected));
                }
            } else {
                prop_assert!(names.is_empty());
            }
            prop_assert_eq!(offsets.connector_records("renamed").len(), live);
            prop_assert_eq!(offsets.connector_records(&connector.name).len(), 0);
            Ok(())
        })?;
    }
}

/// A write that fails in the middle of a restore stops it, and the error says which connector
/// and which of its steps landed; the connectors before it are whole, and the one that failed
/// is left `STOPPED` (its config landed first), so nothing of it runs half-restored.
#[test]
fn a_failed_write_stops_the_restore_and_says_what_landed() {
    use connect_state_memory::ProduceFault;
    use connect_state_ops::backup::restore::RestoreError;
    let connectors = [
        Connector {
            name: "a".into(),
            config: Some(BTreeMap::from([("k".into(), "v".into())])),
            state: TargetState::Started,
            tasks: Vec::new(),
            offsets: BTreeMap::from([("f".into(), Some(1))]),
        },
        Connector {
            name: "b".into(),
            config: Some(BTreeMap::from([("k".into(), "w".into())])),
            state: TargetState::Started,
            tasks: Vec::new(),
            offsets: BTreeMap::from([("g".into(), Some(2))]),
        },
    ];
    runtime().block_on(async {
        let mut source = stores(&cluster()).await;
        write_cluster(&mut source, &connectors).await;
        let document = backup(&source);

        // The target's offsets writes go through their own transport: its second produce
        // (connector b's offsets) fails with nothing written.
        let target_cluster = cluster();
        let offsets_transport = Arc::new(MemoryTransport::new(target_cluster.clone()));
        let (mut config, _) = stores(&target_cluster).await;
        let mut offsets = Store::new(
            StoreSettings::new("off", TopicKind::Offsets),
            offsets_transport.clone(),
            OffsetLog::new(),
        );
        offsets.start().await.unwrap();
        offsets_transport.push_produce_fault(ProduceFault::Duplicate);
        offsets_transport.push_produce_fault(ProduceFault::CrashAfter(0));

        let options = as_backed_up();
        let open = || DocumentReader::open(&document[..], DEFAULT_MAX_LINE_BYTES).unwrap();
        let verified = restore::verify(open(), &options).unwrap();
        let (empty_config, empty_offsets) =
            (config.machine().snapshot(), offsets.machine().snapshot());
        let target = Target {
            config: &empty_config,
            offsets: &empty_offsets,
            offsets_partitions: OFFSETS_PARTITIONS,
        };
        let plan = restore::plan(&verified, &target, &options).unwrap();
        let result = restore::apply(
            &verified.header,
            Steps::new(&plan, open()),
            &plan,
            &mut config,
            &mut offsets,
            |_| {},
        )
        .await;
        let error = result.expect_err("the second offsets write fails");
        let message = error.to_string();
        let RestoreError::Write {
            connector, landed, ..
        } = &error
        else {
            panic!("{error:?}")
        };
        assert_eq!(connector, "b");
        assert_eq!(landed, &["config (STOPPED) (2 records)"]);
        assert!(
            message.contains("writing connector b failed")
                && message.contains("written before the failure: config (STOPPED) (2 records)"),
            "{message}"
        );

        config.read_to_end().await.unwrap();
        offsets.read_to_end().await.unwrap();
        let config = config.machine().snapshot();
        let offsets = offsets.machine().snapshot();
        // a is whole, as backed up; b is STOPPED, without its offsets.
        assert_eq!(config.target_state("a"), Some(TargetState::Started));
        assert_eq!(offsets.connector_records("a").len(), 1);
        assert_eq!(config.target_state("b"), Some(TargetState::Stopped));
        assert_eq!(offsets.connector_records("b").len(), 0);
    });
}
