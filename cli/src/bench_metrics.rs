//! The `/metrics` benchmark: a scrape of the synthetic topics' state (at full scale 10,000
//! connectors and 85,000 tasks), timed, with the resident set before and after many scrapes.

use std::sync::Arc;
use std::time::Instant;

use connect_state_ops::history::TopicKind;
use connect_state_ops::index::Indexed;
use connect_state_ops::rest::Views;
use connect_state_ops::topics::{Layout, TopicRead, Topics};
use connect_state_ops::watch::{Recent, SharedRecent, Watched, DEFAULT_RECENT_ENTRIES};
use engine::config::ConfigTopic;
use engine::history::Chronicle;
use engine::offsets::OffsetsTopic;
use engine::status::StatusTopic;
use engine::TopicMachine;
use serde::{Deserialize, Serialize};

use crate::bench::{best_of, memory};
use crate::monitor::Monitor;
use crate::synth::{self, Scale, SynthRecord};
use crate::CliError;

/// `/metrics` figures.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct MetricsFigures {
    /// Connectors with a config.
    pub metrics_connectors: u64,
    /// Series in one scrape.
    pub metrics_series: u64,
    /// Bytes of one scrape.
    pub metrics_bytes: u64,
    /// Seconds to compute and encode one scrape (best run).
    pub metrics_scrape_seconds: f64,
    /// Resident-set growth over 20 more scrapes, after 5 to warm up (0: none).
    pub metrics_scrape_memory_growth_bytes: Option<u64>,
}

/// Records stamped one millisecond apart, as a broker would stamp them.
fn feed<M: TopicMachine>(machine: &mut M, records: impl IntoIterator<Item = SynthRecord>) {
    for (i, record) in records.into_iter().enumerate() {
        let stamped = record
            .as_record()
            .with_timestamp(Some(1_700_000_000_000 + i as i64));
        let _ = machine.handle_record(stamped);
    }
}

fn read<T: Chronicle>(
    kind: TopicKind,
    recent: &SharedRecent,
    records: impl IntoIterator<Item = SynthRecord>,
    partitions: i32,
    indexed: bool,
) -> TopicRead<Watched<T>> {
    let watched = Watched::new(kind, Arc::clone(recent));
    let mut state = if indexed {
        Indexed::new(watched)
    } else {
        Indexed::unindexed(watched)
    };
    feed(&mut state, records);
    TopicRead {
        name: kind.name().into(),
        state,
        layout: Layout::Described {
            partitions,
            cleanup_policy: "compact".into(),
        },
        bad_lines: Default::default(),
    }
}

/// Measures `/metrics` over the synthetic topics of `scale`.
pub fn bench_metrics(scale: &Scale, seed: u64, runs: u32) -> Result<MetricsFigures, CliError> {
    let recent = Recent::shared(DEFAULT_RECENT_ENTRIES);
    let config = synth::config_topic(scale, seed).records;
    let status = synth::status_topic(scale, seed).records;
    let topics = Topics {
        config: Some(read::<ConfigTopic>(
            TopicKind::Config,
            &recent,
            config,
            1,
            true,
        )),
        status: Some(read::<StatusTopic>(
            TopicKind::Status,
            &recent,
            status,
            5,
            true,
        )),
        offsets: Some(read::<OffsetsTopic>(
            TopicKind::Offsets,
            &recent,
            synth::offsets_topic(scale, seed),
            25,
            false,
        )),
    };
    let monitor = Monitor::of(&topics, Some(Arc::clone(&recent)));
    fn snapshot<M: TopicMachine>(read: &Option<TopicRead<M>>) -> Option<M::Snapshot> {
        read.as_ref().map(|r| r.state.snapshot())
    }
    let views = Views {
        config: snapshot(&topics.config).unwrap_or_default(),
        status: snapshot(&topics.status).unwrap_or_default(),
        offsets: snapshot(&topics.offsets).unwrap_or_default(),
    };
    drop(topics);
    let settings = crate::metrics::Settings {
        max_connectors: usize::MAX,
    };
    let now = 1_800_000_000_000;
    let scrape = || crate::metrics::render(&views, &monitor, settings, now);
    let start = Instant::now();
    let text = scrape();
    let first = start.elapsed();
    let (best, _) = best_of(runs.saturating_sub(1), scrape);
    for _ in 0..5 {
        scrape();
    }
    let warm = memory::rss();
    for _ in 0..20 {
        scrape();
    }
    let growth = memory::rss()
        .zip(warm)
        .map(|(after, warm)| after.saturating_sub(warm));
    Ok(MetricsFigures {
        metrics_connectors: views.config.connectors().count() as u64,
        metrics_series: text.lines().filter(|l| !l.starts_with('#')).count() as u64,
        metrics_bytes: text.len() as u64,
        metrics_scrape_seconds: best.min(first).as_secs_f64(),
        metrics_scrape_memory_growth_bytes: growth,
    })
}
