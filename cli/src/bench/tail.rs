//! The tailer's rows (`bench --phase tail`): `serve`'s tailer over the three synthetic topics
//! on the in-memory log, then a stream of source offsets commits: what one refresh costs (the
//! three topics read to their ends, what their histories tell folded in) and what publishing
//! the value that follows costs (views, recent history, and the monitor brought up to date
//! with what moved).

use engine::OwnedRecord;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use connect_state_memory::{MemoryCluster, MemoryTransport, TopicConfig};
use connect_state_ops::tail::{Tail, TailTopics};
use connect_state_store::{ProduceMode, Transport};
use engine::config::write;
use engine::ProducerRecord;
use serde::{Deserialize, Serialize};

use crate::common::CliError;
use crate::synth::{self, Scale, OFFSETS_PARTITIONS, STATUS_PARTITIONS};

/// Refreshes measured after the start.
const REFRESHES: usize = 20;
/// Offsets commits written before each of them.
const COMMITS_PER_REFRESH: usize = 1_000;

/// The tailer's figures.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct TailFigures {
    /// Records on the three topics when the tailer starts.
    pub tail_records: u64,
    /// Seconds the tailer takes to read them and publish its first value.
    pub tail_start_seconds: f64,
    /// Offsets commits written before each measured refresh.
    pub tail_commits_per_refresh: u64,
    /// Seconds a refresh takes (the median of 20).
    pub tail_refresh_seconds: f64,
    /// Seconds publishing after it takes (the median of 20): the monitor re-examines the
    /// offsets topic, the one that moved.
    pub tail_publish_seconds: f64,
}

fn median(mut times: Vec<Duration>) -> f64 {
    times.sort();
    times
        .get(times.len() / 2)
        .map_or(0.0, Duration::as_secs_f64)
}

/// Writes `records` to `topic` in batches, each to its partition.
async fn produce(
    transport: &MemoryTransport,
    topic: &str,
    records: impl IntoIterator<Item = OwnedRecord>,
) -> Result<u64, CliError> {
    let mut batch: Vec<ProducerRecord> = Vec::with_capacity(10_000);
    let mut written = 0;
    let mut records = records.into_iter().peekable();
    while records.peek().is_some() {
        batch.clear();
        batch.extend(
            records
                .by_ref()
                .take(10_000)
                .map(OwnedRecord::into_producer_record),
        );
        transport
            .produce(topic, &batch, ProduceMode::Plain)
            .await
            .map_err(|e| CliError::Input(format!("writing the synthetic {topic} topic: {e}")))?;
        written += batch.len() as u64;
    }
    Ok(written)
}

/// Measures the tailer over the synthetic topics of `scale`.
pub fn bench_tail(scale: &Scale, seed: u64) -> Result<TailFigures, CliError> {
    let cluster = Arc::new(Mutex::new(MemoryCluster::new(seed)));
    {
        let mut c = cluster
            .lock()
            .map_err(|_| CliError::Input("the in-memory cluster's lock was poisoned".into()))?;
        let topics = [
            ("configs", 1),
            ("status", STATUS_PARTITIONS),
            ("offsets", OFFSETS_PARTITIONS),
        ];
        for (name, partitions) in topics {
            c.create_topic(name, TopicConfig::compacted(partitions))
                .map_err(|e| CliError::Input(format!("creating {name}: {e}")))?;
        }
    }
    let transport = Arc::new(MemoryTransport::new(cluster));
    let runtime = crate::common::runtime()?;
    runtime.block_on(async {
        let mut records = 0;
        records += produce(
            &transport,
            "configs",
            synth::config_topic(scale, seed).records,
        )
        .await?;
        records += produce(
            &transport,
            "status",
            synth::status_topic(scale, seed).records,
        )
        .await?;
        records += produce(&transport, "offsets", synth::offsets_topic(scale, seed)).await?;
        let dyn_transport: Arc<dyn Transport> = transport.clone();
        let connect = || Ok(Arc::clone(&dyn_transport));
        let topics = TailTopics {
            config: "configs".into(),
            status: Some("status".into()),
            offsets: Some("offsets".into()),
        };
        let start = Instant::now();
        let mut tail = Tail::start(&connect, topics, 20, &|_| None)
            .await
            .map_err(|e| CliError::Input(e.to_string()))?;
        let first = tail.publish(&[]);
        let started = start.elapsed();
        // The generated offsets belong to connectors the config topic never had: give them
        // configs, so that the commits below come from live connectors, as on a cluster (a
        // deleted connector commits nothing). That refresh is not measured.
        let missing: Vec<String> = first
            .views
            .offsets
            .connectors()
            .filter(|c| !first.views.config.contains(c))
            .map(str::to_string)
            .collect();
        drop(first);
        let configs: Vec<ProducerRecord> = missing
            .iter()
            .flat_map(|c| {
                let plan = write::put_connector_config(c, [("tasks.max", Some("1"))], None);
                plan.records().cloned().collect::<Vec<_>>()
            })
            .collect();
        transport
            .produce("configs", &configs, ProduceMode::Plain)
            .await
            .map_err(|e| CliError::Input(format!("writing the configs: {e}")))?;
        let moved = tail
            .refresh()
            .await
            .map_err(|e| CliError::Input(e.to_string()))?;
        drop(tail.publish(&moved));
        // New values for live keys: the topic's first records again.
        let mut commits = synth::offsets_topic(scale, seed).filter(|r| r.value.is_some());
        let (mut refreshes, mut publishes) = (Vec::new(), Vec::new());
        for _ in 0..REFRESHES {
            let batch: Vec<OwnedRecord> = commits.by_ref().take(COMMITS_PER_REFRESH).collect();
            produce(&transport, "offsets", batch).await?;
            let start = Instant::now();
            let moved = tail
                .refresh()
                .await
                .map_err(|e| CliError::Input(e.to_string()))?;
            refreshes.push(start.elapsed());
            let start = Instant::now();
            let published = tail.publish(&moved);
            publishes.push(start.elapsed());
            drop(published);
        }
        Ok(TailFigures {
            tail_records: records,
            tail_start_seconds: started.as_secs_f64(),
            tail_commits_per_refresh: COMMITS_PER_REFRESH as u64,
            tail_refresh_seconds: median(refreshes),
            tail_publish_seconds: median(publishes),
        })
    })
}
