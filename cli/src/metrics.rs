//! `GET /metrics`: the cluster's state as Prometheus metrics (OpenMetrics text, encoded by
//! the `prometheus-client` crate), computed from the served views and monitor at each scrape,
//! so nothing accumulates between scrapes.

use std::collections::BTreeSet;
use std::sync::atomic::AtomicU64;

use prometheus_client::encoding::text::encode;
use prometheus_client::encoding::{EncodeLabelValue, LabelValueEncoder};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

use engine::config::MAX_LISTED_TASKS;
use engine::status::StatusState;

use connect_state_ops::tail::Published;

/// The content type of the answer.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// The default of `--metrics-max-connectors`.
pub const DEFAULT_MAX_CONNECTORS: usize = 10_000;

/// The state of a connector with a config and no status.
pub const UNKNOWN: &str = "UNKNOWN";

/// How `/metrics` is bounded.
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    /// Connectors that get per-connector series (the first ones by name).
    pub max_connectors: usize,
}

/// A label value, escaped as the exposition formats require (`\\`, `\"`, `\n`): the crate
/// (0.24) writes label values as given, and connector names and worker ids are arbitrary
/// strings from the topics.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct LabelText(String);

impl EncodeLabelValue for LabelText {
    fn encode(&self, encoder: &mut LabelValueEncoder) -> std::fmt::Result {
        use std::fmt::Write as _;
        for c in self.0.chars() {
            match c {
                '\\' => encoder.write_str("\\\\")?,
                '"' => encoder.write_str("\\\"")?,
                '\n' => encoder.write_str("\\n")?,
                other => encoder.write_char(other)?,
            }
        }
        Ok(())
    }
}

type Labels = Vec<(String, LabelText)>;

fn labels<const N: usize>(pairs: [(&str, &str); N]) -> Labels {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), LabelText(v.to_string())))
        .collect()
}

/// A gauge family registered under `name`.
fn gauges(registry: &mut Registry, name: &str, help: &str) -> Family<Labels, Gauge> {
    let family = Family::<Labels, Gauge>::default();
    registry.register(name, help, family.clone());
    family
}

/// The metrics of a published state at `now_ms` (for ages), as OpenMetrics text.
pub fn render(published: &Published, settings: Settings, now_ms: i64) -> String {
    let (views, monitor) = (&published.views, &published.monitor);
    let mut registry = Registry::default();
    let config = &views.config;
    let status = &views.status;

    let connectors = gauges(
        &mut registry,
        "connect_state_connectors",
        "Connectors with a config, per state (UNKNOWN: no status record)",
    );
    let tasks = gauges(
        &mut registry,
        "connect_state_tasks",
        "Tasks of connectors with a config, per state (UNKNOWN: no status record)",
    );
    let connector_state = gauges(
        &mut registry,
        "connect_state_connector_state",
        "1 for each connector's current state",
    );
    let task_state = gauges(
        &mut registry,
        "connect_state_task_state",
        "1 for each task's current state, with the worker running it",
    );
    let inconsistent = gauges(
        &mut registry,
        "connect_state_connector_inconsistent",
        "1 while a connector's task configs are inconsistent (no tasks run), else 0",
    );
    let findings = gauges(
        &mut registry,
        "connect_state_findings",
        "doctor's findings per check",
    );
    let next_offset = gauges(
        &mut registry,
        "connect_state_topic_next_offset",
        "The next offset read, per topic and partition",
    );
    let skipped = Family::<Labels, Counter>::default();
    registry.register(
        "connect_state_records_skipped",
        "Records skipped as Java skips them, per topic and reason",
        skipped.clone(),
    );
    let age = Family::<Labels, Gauge<f64, AtomicU64>>::default();
    registry.register(
        "connect_state_task_status_age_seconds",
        "Seconds since the task's last status record (record timestamps)",
        age.clone(),
    );
    let source_partitions = gauges(
        &mut registry,
        "connect_state_source_partitions",
        "Source partitions with a live offset, per connector",
    );
    let dropped = Gauge::<i64>::default();
    registry.register(
        "connect_state_metrics_dropped_connectors",
        "Connectors whose per-connector series were left out (--metrics-max-connectors)",
        dropped.clone(),
    );

    let mut state_names: Vec<&str> = StatusState::ALL.iter().map(|s| s.as_str()).collect();
    state_names.push(UNKNOWN);
    for state in &state_names {
        // Every state is listed, 0 when none is in it.
        connectors.get_or_create(&labels([("state", state)])).set(0);
        tasks.get_or_create(&labels([("state", state)])).set(0);
    }

    // The cardinality guard: per-connector series for the first connectors by name.
    let mut names: BTreeSet<&str> = config.connectors().collect();
    names.extend(views.offsets.connectors());
    let dropped_count = names.len().saturating_sub(settings.max_connectors);
    dropped.set(dropped_count as i64);
    let listed: BTreeSet<&str> = names.into_iter().take(settings.max_connectors).collect();

    for c in config.connectors() {
        let state = status.connector(c).map_or(UNKNOWN, |s| s.state.as_str());
        connectors.get_or_create(&labels([("state", state)])).inc();
        let per_connector = listed.contains(c);
        if per_connector {
            connector_state
                .get_or_create(&labels([("connector", c), ("state", state)]))
                .set(1);
            inconsistent
                .get_or_create(&labels([("connector", c)]))
                .set(i64::from(config.is_inconsistent(c)));
        }
        // The tasks Connect's REST status lists, and the committed ones without a status.
        for id in connect_state_ops::rest::task_ids(views, c, MAX_LISTED_TASKS as usize) {
            let task = status.task(c, id);
            let state = task.map_or(UNKNOWN, |s| s.state.as_str());
            tasks.get_or_create(&labels([("state", state)])).inc();
            if per_connector {
                let worker = task.and_then(|s| s.worker_id.as_deref()).unwrap_or("");
                let number = id.to_string();
                task_state
                    .get_or_create(&labels([
                        ("connector", c),
                        ("task", &number),
                        ("state", state),
                        ("worker", worker),
                    ]))
                    .set(1);
            }
        }
    }
    for (check, count) in monitor.findings_per_check() {
        findings
            .get_or_create(&labels([("check", check)]))
            .set(count as i64);
    }
    for (topic, figures) in &monitor.topics {
        for (partition, next) in &figures.next_offsets {
            next_offset
                .get_or_create(&labels([
                    ("topic", topic.name()),
                    ("partition", &partition.to_string()),
                ]))
                .set(*next);
        }
        for (reason, count) in &figures.skipped {
            skipped
                .get_or_create(&labels([("topic", topic.name()), ("reason", reason)]))
                .inc_by(*count);
        }
    }
    let recent = &published.recent;
    for ((c, task), ts) in recent.task_reports() {
        if !listed.contains(c.as_str()) || !config.contains(c) {
            continue;
        }
        let seconds = (now_ms.saturating_sub(ts)).max(0) as f64 / 1000.0;
        age.get_or_create(&labels([("connector", c), ("task", &task.to_string())]))
            .set(seconds);
    }
    for (c, count) in recent.source_partitions() {
        if count > 0 && listed.contains(c) {
            source_partitions
                .get_or_create(&labels([("connector", c)]))
                .set(count as i64);
        }
    }

    let mut text = String::new();
    // Writing to a String cannot fail.
    let _ = encode(&mut text, &registry);
    text
}
