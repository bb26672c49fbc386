//! The generic store over the simulator: topic creation and Java's start-up refusals, the write
//! budget, and status and offsets stores sharing the same code path.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use connect_state_memory::{MemoryCluster, MemoryTransport, TopicConfig};
use connect_state_store::{
    ConfigStore, FetchedBatch, NewTopic, PartitionReader, ProduceMode, RecordBatch, Store,
    StoreError, StoreSettings, TopicDescription, TopicKind, Transport, TransportError,
};
use engine::config::write;
use engine::config::ConfigLog;
use engine::offsets::OffsetLog;
use engine::{ProducerRecord, Record};

use connect_state_tests::sim::{runtime, Recording};

fn memory() -> Arc<Mutex<MemoryCluster>> {
    Arc::new(Mutex::new(MemoryCluster::new(7)))
}

/// A cluster with a compacted topic `off` of `partitions` partitions.
fn memory_with_offsets_topic(partitions: i32) -> Arc<Mutex<MemoryCluster>> {
    let cluster = memory();
    cluster
        .lock()
        .unwrap()
        .create_topic("off", TopicConfig::compacted(partitions))
        .unwrap();
    cluster
}

#[test]
fn start_creates_missing_topics_as_connect_does() {
    runtime().block_on(async {
        let cluster = memory();
        let transport = Arc::new(MemoryTransport::new(cluster.clone()));
        let mut config = ConfigStore::new(
            StoreSettings::new("cfg", TopicKind::Config),
            transport.clone(),
            ConfigLog::new(),
        );
        config.start().await.unwrap();
        let mut offsets = Store::new(
            StoreSettings::new("off", TopicKind::Offsets),
            transport.clone(),
            OffsetLog::new(),
        );
        offsets.start().await.unwrap();
        let c = cluster.lock().unwrap();
        assert_eq!(c.describe_topic("cfg").unwrap().partitions, 1);
        assert_eq!(c.describe_topic("off").unwrap().partitions, 25);
        assert!(c.describe_topic("cfg").unwrap().compacts());
    });
}

#[test]
fn java_refuses_bad_topics_with_its_messages() {
    runtime().block_on(async {
        let cluster = memory();
        {
            let mut c = cluster.lock().unwrap();
            c.create_topic(
                "deleting",
                TopicConfig::compacted(1).with_cleanup_policy("delete"),
            )
            .unwrap();
            c.create_topic("wide", TopicConfig::compacted(3)).unwrap();
            c.create_topic(
                "both",
                TopicConfig::compacted(5).with_cleanup_policy("compact,delete"),
            )
            .unwrap();
        }
        let transport = Arc::new(MemoryTransport::new(cluster));
        let error = ConfigStore::new(
            StoreSettings::new("deleting", TopicKind::Config),
            transport.clone(),
            ConfigLog::new(),
        )
        .start()
        .await
        .unwrap_err();
        assert_eq!(
            error.to_string(),
            "Topic 'deleting' supplied via the 'config.storage.topic' property is required to have \
             'cleanup.policy=compact' to guarantee consistency and durability of connector \
             configurations, but found the topic currently has 'cleanup.policy=delete'. Continuing \
             would likely result in eventually losing connector configurations and problems \
             restarting this Connect cluster in the future. Change the 'config.storage.topic' \
             property in the Connect worker configurations to use a topic with \
             'cleanup.policy=compact'."
        );
        let error = ConfigStore::new(
            StoreSettings::new("wide", TopicKind::Config),
            transport.clone(),
            ConfigLog::new(),
        )
        .start()
        .await
        .unwrap_err();
        assert_eq!(
            error.to_string(),
            "Topic 'wide' supplied via the 'config.storage.topic' property is required to have a \
             single partition in order to guarantee consistency of connector configurations, but \
             found 3 partitions."
        );
        let error = Store::new(
            StoreSettings::new("both", TopicKind::Offsets),
            transport.clone(),
            OffsetLog::new(),
        )
        .start()
        .await
        .unwrap_err();
        assert!(
            error
                .to_string()
                .contains("'cleanup.policy=compact,delete'"),
            "{error}"
        );
        assert!(
            error.to_string().contains("source connector offsets"),
            "{error}"
        );
        let mut settings = StoreSettings::new("absent", TopicKind::Status);
        settings.create_if_missing = false;
        let error = Store::new(settings, transport, engine::status::StatusLog::new())
            .start()
            .await
            .unwrap_err();
        assert!(matches!(error, StoreError::MissingTopic { .. }), "{error}");
    });
}

/// A topic the store just created is looked at again until the broker shows it with the
/// policy it was created with; one that still shows another policy at the write budget's end
/// is refused as any existing topic is.
#[test]
fn a_created_topic_is_described_again_until_its_configs_show() {
    runtime().block_on(async {
        // Missing (so the store creates it), missing twice more, then three stale answers.
        let transport = Arc::new(Frozen::described(3, 3));
        let mut store = Store::new(
            StoreSettings::new("late", TopicKind::Offsets),
            transport.clone(),
            OffsetLog::new(),
        );
        store.start().await.unwrap();
        assert!(
            transport.described.lock().unwrap().is_empty(),
            "every scripted answer was read"
        );

        let mut settings = StoreSettings::new("stale", TopicKind::Offsets);
        settings.write_budget = Duration::from_millis(300);
        let error = Store::new(
            settings,
            Arc::new(Frozen::described(1, 1000)),
            OffsetLog::new(),
        )
        .start()
        .await
        .unwrap_err();
        assert!(
            matches!(&error, StoreError::InvalidTopic(m) if m.contains("'cleanup.policy=delete'")),
            "{error}"
        );
    });
}

/// A one-partition compacted topic that never yields a record: its end offset is `end` (a fetch
/// never moves from where it was asked to start), and a produce either never completes or
/// succeeds without writing. Its descriptions follow a script first (`None`: missing, else
/// the `cleanup.policy` shown), then show it compacted.
struct Frozen {
    end: i64,
    produce_hangs: bool,
    /// The scripted descriptions still to give, the next one last.
    described: Mutex<Vec<Option<&'static str>>>,
}

impl Frozen {
    fn new(end: i64, produce_hangs: bool) -> Self {
        Self {
            end,
            produce_hangs,
            described: Mutex::default(),
        }
    }

    /// An empty topic described first `missing` times as missing, then `stale` times with the default
    /// `cleanup.policy=delete` (a broker whose configs are behind a new topic).
    fn described(missing: usize, stale: usize) -> Self {
        let mut script = vec![None; missing];
        script.extend(std::iter::repeat_n(Some("delete"), stale));
        script.reverse();
        Self {
            described: Mutex::new(script),
            ..Self::new(0, false)
        }
    }
}

#[async_trait]
impl Transport for Frozen {
    async fn describe_topic(&self, _: &str) -> Result<Option<TopicDescription>, TransportError> {
        let next = self.described.lock().unwrap().pop();
        Ok(next
            .unwrap_or(Some("compact"))
            .map(|policy| TopicDescription {
                partitions: 1,
                cleanup_policy: policy.into(),
            }))
    }
    async fn create_topic(&self, topic: &NewTopic) -> Result<(), TransportError> {
        let policy = topic.configs.get("cleanup.policy").map(String::as_str);
        assert_eq!(policy, Some("compact"), "a created topic is compacted");
        Ok(())
    }
    async fn end_offsets(&self, _: &str) -> Result<BTreeMap<i32, i64>, TransportError> {
        Ok(BTreeMap::from([(0, self.end)]))
    }
    async fn fetch(
        &self,
        _: &str,
        _: i32,
        from: i64,
        _: usize,
    ) -> Result<FetchedBatch, TransportError> {
        Ok(FetchedBatch {
            records: RecordBatch::new(),
            next_offset: from,
        })
    }
    async fn produce(
        &self,
        _: &str,
        _: &[ProducerRecord],
        _: ProduceMode,
    ) -> Result<Vec<(i32, i64)>, TransportError> {
        if self.produce_hangs {
            std::future::pending::<()>().await;
        }
        Ok(Vec::new())
    }
}

#[test]
fn a_write_that_outlives_its_budget_fails_with_javas_message() {
    runtime().block_on(async {
        let mut settings = StoreSettings::new("cfg", TopicKind::Config);
        settings.write_budget = Duration::from_millis(20);
        let mut store =
            ConfigStore::new(settings, Arc::new(Frozen::new(0, true)), ConfigLog::new());
        store.start().await.unwrap();
        let plan = write::put_task_configs("c", [vec![("k", Some("v"))]]);
        let error = store.execute(&plan, false).await.unwrap_err();
        assert_eq!(
            error,
            StoreError::Timeout {
                message: "Error writing task configurations to Kafka".into(),
                budget_ms: 20
            }
        );
    });
}

#[test]
fn a_partition_that_does_not_progress_is_an_error_not_a_hang() {
    runtime().block_on(async {
        let mut store = ConfigStore::new(
            StoreSettings::new("cfg", TopicKind::Config),
            Arc::new(Frozen::new(5, false)),
            ConfigLog::new(),
        );
        let error = store.start().await.unwrap_err();
        assert!(
            matches!(
                error,
                StoreError::Stalled {
                    partition: 0,
                    position: 0,
                    end: 5,
                    ..
                }
            ),
            "{error}"
        );
    });
}

#[test]
fn a_partition_reader_reads_to_its_end_past_compacted_gaps_and_stops_on_a_stall() {
    runtime().block_on(async {
        let cluster = memory();
        // A segment per record, so that cleaning reaches all but the last.
        let layout = TopicConfig::compacted(1).with_segment_records(1);
        cluster.lock().unwrap().create_topic("cfg", layout).unwrap();
        let transport = Arc::new(MemoryTransport::new(cluster.clone()));
        let record = |key: &str| ProducerRecord {
            key: key.as_bytes().to_vec(),
            value: Some(br#"{"properties":{}}"#.to_vec()),
            partition: Some(0),
        };
        let keys = [
            "connector-a",
            "connector-b",
            "connector-a",
            "connector-c",
            "connector-a",
        ];
        let records: Vec<ProducerRecord> = keys.iter().map(|k| record(k)).collect();
        transport
            .produce("cfg", &records, ProduceMode::Plain)
            .await
            .unwrap();
        cluster.lock().unwrap().clean_all("cfg").unwrap();
        // Batches of two, up to offset 4 (the last record, a, is not read).
        let mut reader = PartitionReader::new(transport.clone(), "cfg", 0, 0, 4, 2);
        let mut read = Vec::new();
        loop {
            let batch = reader.next_batch().await.unwrap();
            if batch.is_empty() {
                break;
            }
            read.extend(batch.into_iter().map(|r| r.offset));
        }
        // Cleaning below the active segment (offset 4) removed the first a, which the a at 2
        // shadows there; the end (4) leaves out the last a.
        assert_eq!(read, [1, 2, 3]);
        assert!(reader.next_batch().await.unwrap().is_empty());

        let frozen = Arc::new(Frozen::new(5, false));
        let mut stuck = PartitionReader::new(frozen, "cfg", 0, 0, 5, 100);
        let error = stuck.next_batch().await.unwrap_err();
        assert!(
            matches!(
                error,
                StoreError::Stalled {
                    position: 0,
                    end: 5,
                    ..
                }
            ),
            "{error}"
        );
    });
}

#[test]
fn offsets_written_and_read_back_through_the_same_store_code() {
    runtime().block_on(async {
        let cluster = memory();
        let transport = Arc::new(MemoryTransport::new(cluster.clone()));
        let mut writer = Store::new(
            StoreSettings::new("off", TopicKind::Offsets),
            transport.clone(),
            OffsetLog::new(),
        );
        writer.start().await.unwrap();
        let record = ProducerRecord {
            key: br#"["src",{"file":"a"}]"#.to_vec(),
            value: Some(br#"{"pos":3}"#.to_vec()),
            partition: None,
        };
        writer
            .write(
                std::slice::from_ref(&record),
                ProduceMode::Plain,
                true,
                "Failed to write offsets",
            )
            .await
            .unwrap();
        let snapshot = writer.machine().snapshot();
        let stored = snapshot.get(Some(&record.key)).unwrap();
        assert_eq!(
            Some(stored.partition()),
            engine::offsets::default_partition(&record.key, 25)
        );
        let mut reader = Store::new(
            StoreSettings::new("off", TopicKind::Offsets),
            transport,
            OffsetLog::new(),
        );
        reader.start().await.unwrap();
        assert_eq!(reader.machine().snapshot(), snapshot);
    });
}

#[test]
fn progress_observer_sees_every_batch_up_to_the_end() {
    runtime().block_on(async {
        let cluster = memory();
        let transport = Arc::new(MemoryTransport::new(cluster.clone()).with_max_fetch_records(3));
        let mut writer = Store::new(
            StoreSettings::new("off", TopicKind::Offsets),
            transport.clone(),
            OffsetLog::new(),
        );
        writer.start().await.unwrap();
        let records: Vec<ProducerRecord> = (0..20)
            .map(|i| ProducerRecord {
                key: format!(r#"["src",{{"file":"{i}"}}]"#).into_bytes(),
                value: Some(b"{\"pos\":1}".to_vec()),
                partition: Some(i % 2),
            })
            .collect();
        writer
            .write(
                &records,
                ProduceMode::Plain,
                false,
                "Failed to write offsets",
            )
            .await
            .unwrap();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let mut reader = Store::new(
            StoreSettings::new("off", TopicKind::Offsets),
            transport,
            OffsetLog::new(),
        );
        let sink = seen.clone();
        reader.set_progress(Box::new(move |p| {
            sink.lock().unwrap().push((
                p.topic.to_string(),
                p.partition,
                p.position,
                p.end,
                p.records,
            ));
        }));
        reader.start().await.unwrap();
        let seen = seen.lock().unwrap();
        let total: usize = seen.iter().map(|s| s.4).sum();
        assert_eq!(total, 20);
        for partition in [0, 1] {
            let last = seen.iter().rev().find(|s| s.1 == partition).unwrap();
            assert_eq!((last.0.as_str(), last.2), ("off", last.3), "{seen:?}");
            assert_eq!(last.3, 10);
        }
        assert!(seen.iter().all(|s| s.4 <= 3));
    });
}

/// A one-partition topic whose end offset can be moved: fetches return records with a key
/// Connect ignores, from the requested offset to the end.
struct Movable {
    end: Mutex<i64>,
}

#[async_trait]
impl Transport for Movable {
    async fn describe_topic(&self, _: &str) -> Result<Option<TopicDescription>, TransportError> {
        Ok(Some(TopicDescription {
            partitions: 1,
            cleanup_policy: "compact".into(),
        }))
    }
    async fn create_topic(&self, _: &NewTopic) -> Result<(), TransportError> {
        Ok(())
    }
    async fn end_offsets(&self, _: &str) -> Result<BTreeMap<i32, i64>, TransportError> {
        Ok(BTreeMap::from([(0, *self.end.lock().unwrap())]))
    }
    async fn fetch(
        &self,
        _: &str,
        partition: i32,
        from: i64,
        _: usize,
    ) -> Result<FetchedBatch, TransportError> {
        let end = *self.end.lock().unwrap();
        Ok(FetchedBatch {
            records: (from..end)
                .map(|offset| {
                    Record::new(b"ignored", Some(b"{}"), offset).with_partition(partition)
                })
                .collect(),
            next_offset: end.max(from),
        })
    }
    async fn produce(
        &self,
        _: &str,
        _: &[ProducerRecord],
        _: ProduceMode,
    ) -> Result<Vec<(i32, i64)>, TransportError> {
        Ok(Vec::new())
    }
}

#[test]
fn a_topic_that_now_ends_below_what_was_read_is_reported_not_read_as_new() {
    runtime().block_on(async {
        let transport = Arc::new(Movable { end: Mutex::new(5) });
        let mut store = ConfigStore::new(
            StoreSettings::new("cfg", TopicKind::Config),
            transport.clone(),
            ConfigLog::new(),
        );
        store.start().await.unwrap();
        // Deleted and created again with fewer records.
        *transport.end.lock().unwrap() = 2;
        let error = store.read_to_end().await.unwrap_err();
        assert_eq!(
            error,
            StoreError::Truncated {
                topic: "cfg".into(),
                partition: 0,
                position: 5,
                end: 2
            }
        );
        assert!(
            error.to_string().contains("deleted and created again"),
            "{error}"
        );
        // Reading on at the old end again is fine.
        *transport.end.lock().unwrap() = 6;
        store.read_to_end().await.unwrap();
    });
}

#[test]
fn the_next_batch_is_fetched_while_this_one_is_applied_and_none_is_fetched_twice() {
    runtime().block_on(async {
        let cluster = memory_with_offsets_topic(2);
        let transport = MemoryTransport::new(cluster.clone()).with_max_fetch_records(3);
        let records: Vec<ProducerRecord> = (0..10)
            .map(|i| ProducerRecord {
                key: format!(r#"["src",{{"file":"{i}"}}]"#).into_bytes(),
                value: Some(b"{\"pos\":1}".to_vec()),
                // Partition 0 gets 7 records, partition 1 gets 3.
                partition: Some(i32::from(i >= 7)),
            })
            .collect();
        transport
            .produce("off", &records, ProduceMode::Plain)
            .await
            .unwrap();
        let log = Arc::new(Mutex::new(Vec::new()));
        let logged = Arc::new(Recording::new(transport).noting_fetches_in(log.clone()));
        let mut reader = Store::new(
            StoreSettings::new("off", TopicKind::Offsets),
            logged,
            OffsetLog::new(),
        );
        let sink = log.clone();
        reader.set_progress(Box::new(move |p| {
            sink.lock()
                .unwrap()
                .push(format!("applied {}@{}", p.partition, p.position));
        }));
        reader.start().await.unwrap();
        assert_eq!(reader.machine().snapshot().len(), 10);
        // Both partitions' starts said first; then partitions in turn, each fetch started
        // before the batch ahead of it is applied, and each batch handed back to the
        // transport once applied.
        let expected = [
            "expect 0@0 1@0",
            "fetch 0@0",
            "fetch 1@0",
            "applied 0@3",
            "recycle 3",
            "fetch 0@3",
            "applied 1@3",
            "recycle 3",
            "fetch 0@6",
            "applied 0@6",
            "recycle 3",
            "applied 0@7",
            "recycle 1",
        ];
        assert_eq!(*log.lock().unwrap(), expected);
    });
}

#[test]
fn the_transport_is_told_where_each_partition_behind_its_end_starts_before_the_first_fetch() {
    runtime().block_on(async {
        let cluster = memory_with_offsets_topic(3);
        let producer = Arc::new(MemoryTransport::new(cluster.clone()));
        let produce = |round: u32, partitions: &[i32]| {
            let records: Vec<ProducerRecord> = partitions
                .iter()
                .enumerate()
                .map(|(i, &partition)| ProducerRecord {
                    key: format!(r#"["src",{{"file":"{round}-{i}"}}]"#).into_bytes(),
                    value: Some(b"{\"pos\":1}".to_vec()),
                    partition: Some(partition),
                })
                .collect();
            let producer = Arc::clone(&producer);
            async move {
                producer
                    .produce("off", &records, ProduceMode::Plain)
                    .await
                    .unwrap();
            }
        };
        // Partitions 0 and 2 have records, partition 1 none.
        produce(0, &[0, 0, 2]).await;
        let log = Arc::new(Mutex::new(Vec::new()));
        let reader_transport = MemoryTransport::new(cluster.clone());
        let logged = Arc::new(Recording::new(reader_transport).noting_fetches_in(log.clone()));
        let mut reader = Store::new(
            StoreSettings::new("off", TopicKind::Offsets),
            logged,
            OffsetLog::new(),
        );
        reader.start().await.unwrap();
        // The fetches and what was said ahead of them (batches handed back are another test's).
        let taken = |log: &Mutex<Vec<String>>| {
            let notes = core::mem::take(&mut *log.lock().unwrap());
            notes
                .into_iter()
                .filter(|note| !note.starts_with("recycle"))
                .collect::<Vec<_>>()
        };
        assert_eq!(taken(&log), ["expect 0@0 2@0", "fetch 0@0", "fetch 2@0"]);
        // One partition behind: nothing to say ahead.
        produce(1, &[1]).await;
        reader.read_to_end().await.unwrap();
        assert_eq!(taken(&log), ["fetch 1@0"]);
        // Two behind again: each from where the read stands.
        produce(2, &[0, 2, 2]).await;
        reader.read_to_end().await.unwrap();
        assert_eq!(taken(&log), ["expect 0@2 2@1", "fetch 0@2", "fetch 2@1"]);
        assert_eq!(reader.machine().snapshot().len(), 7);
    });
}
