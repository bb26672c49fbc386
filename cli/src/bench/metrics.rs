//! The `/metrics` benchmark: a scrape of the synthetic topics' state (at full scale 10,000
//! connectors and 85,000 tasks), timed, with the resident set before and after many scrapes.

use engine::OwnedRecord;
use std::sync::Arc;
use std::time::Instant;

use connect_state_ops::doctor::Examination;
use connect_state_ops::index::Indexed;
use connect_state_ops::monitor::Monitor;
use connect_state_ops::recent::{Recent, RecentPart, DEFAULT_RECENT_ENTRIES};
use connect_state_ops::rest::Views;
use connect_state_ops::tail::Published;
use connect_state_ops::topics::{Layout, TopicRead, Topics};
use engine::config::ConfigTopic;
use engine::history::{Chronicle, History};
use engine::offsets::OffsetTopic;
use engine::status::StatusTopic;
use engine::{TopicKind, TopicMachine};
use serde::{Deserialize, Serialize};

use crate::bench::measure::{best_of, memory};
use crate::common::CliError;
use crate::synth::{self, Scale};

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

/// A topic's records, stamped one millisecond apart as a broker would stamp them, through its
/// history (indexed or not), what it tells folded into `part`.
fn read<T: Chronicle>(
    kind: TopicKind,
    part: &mut RecentPart,
    records: impl IntoIterator<Item = OwnedRecord>,
    partitions: i32,
    indexed: bool,
) -> TopicRead<History<T>> {
    let mut state = if indexed {
        Indexed::new(History::new())
    } else {
        Indexed::unindexed(History::new())
    };
    for (i, record) in records.into_iter().enumerate() {
        let stamped = record
            .as_record()
            .with_timestamp(Some(1_700_000_000_000 + i as i64));
        let _ = state.handle_record(stamped);
        part.extend(std::iter::from_fn(|| state.poll_event()));
    }
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
    let mut recent = Recent::new(DEFAULT_RECENT_ENTRIES);
    let config = synth::config_topic(scale, seed).records;
    let status = synth::status_topic(scale, seed).records;
    let offsets = synth::offsets_topic(scale, seed);
    let (config_part, status_part, offsets_part) = recent.parts_mut();
    let topics = Topics {
        config: Some(read::<ConfigTopic>(
            TopicKind::Config,
            config_part,
            config,
            1,
            true,
        )),
        status: Some(read::<StatusTopic>(
            TopicKind::Status,
            status_part,
            status,
            5,
            true,
        )),
        offsets: Some(read::<OffsetTopic>(
            TopicKind::Offsets,
            offsets_part,
            offsets,
            25,
            false,
        )),
    };
    let examination = Examination::of(&topics);
    let positions = topics.positions();
    fn snapshot<M: TopicMachine>(read: &Option<TopicRead<M>>) -> Option<M::Snapshot> {
        read.as_ref().map(|r| r.state.snapshot())
    }
    let published = Published {
        views: Views {
            config: snapshot(&topics.config).unwrap_or_default(),
            status: snapshot(&topics.status).unwrap_or_default(),
            offsets: snapshot(&topics.offsets).unwrap_or_default(),
        },
        monitor: Arc::new(Monitor::of(&examination, &positions)),
        recent: recent.view(),
        positions,
    };
    drop(topics);
    let settings = crate::metrics::Settings {
        max_connectors: usize::MAX,
    };
    let now = 1_800_000_000_000;
    let scrape = || crate::metrics::render(&published, settings, now);
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
        metrics_connectors: published.views.config.connectors().count() as u64,
        metrics_series: text.lines().filter(|l| !l.starts_with('#')).count() as u64,
        metrics_bytes: text.len() as u64,
        metrics_scrape_seconds: best.min(first).as_secs_f64(),
        metrics_scrape_memory_growth_bytes: growth,
    })
}
