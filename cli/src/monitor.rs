//! What `serve`'s monitoring (`/metrics`, `/ui/`) reads besides the REST views: `doctor`'s
//! findings, each topic's read positions and skip counters, and the shared recent history,
//! computed when the tailed topics moved (or once, for dumps).

use std::collections::BTreeMap;

use connect_state_ops::doctor::{examine, ConfigMachine, OffsetsMachine, Report, StatusMachine};
use connect_state_ops::history::TopicKind;
use connect_state_ops::topics::{Layout, TopicRead, Topics};
use connect_state_ops::watch::SharedRecent;
use engine::skips::SkipKind;
use engine::TopicMachine;

/// One topic's read figures.
#[derive(Debug, Clone, Default)]
pub struct TopicFigures {
    /// The next offset to read, per partition.
    pub next_offsets: BTreeMap<i32, i64>,
    /// Records skipped as Java skips them, per reason.
    pub skipped: Vec<(&'static str, u64)>,
}

/// Everything the monitoring pages read, besides the views.
#[derive(Debug, Clone, Default)]
pub struct Monitor {
    /// `doctor`'s examination of the topics.
    pub report: Report,
    /// Read figures per topic served.
    pub topics: BTreeMap<TopicKind, TopicFigures>,
    /// The recent history (none when the source was read without one).
    pub recent: Option<SharedRecent>,
}

impl Monitor {
    /// The monitor of `topics`, with `recent` (positions from each machine; a tailing
    /// server passes its stores' positions to [`with_positions`](Self::with_positions)).
    pub fn of<C, S, O>(topics: &Topics<C, S, O>, recent: Option<SharedRecent>) -> Self
    where
        C: ConfigMachine,
        S: StatusMachine,
        O: OffsetsMachine,
    {
        let mut figures = BTreeMap::new();
        if let Some(read) = &topics.config {
            let skipped = skips(read.state.machine.diagnostics().skipped().iter());
            figures.insert(TopicKind::Config, figures_of(read, skipped));
        }
        if let Some(read) = &topics.status {
            let skipped = skips(read.state.machine.diagnostics().skipped().iter());
            figures.insert(TopicKind::Status, figures_of(read, skipped));
        }
        if let Some(read) = &topics.offsets {
            let skipped = skips(read.state.machine.diagnostics().skipped().iter());
            figures.insert(TopicKind::Offsets, figures_of(read, skipped));
        }
        Self {
            report: examine(topics),
            topics: figures,
            recent,
        }
    }

    /// The same with the read positions a store reached (past gaps the machine never saw).
    pub fn with_positions(mut self, topic: TopicKind, positions: BTreeMap<i32, i64>) -> Self {
        if let Some(figures) = self.topics.get_mut(&topic) {
            for (partition, next) in positions {
                let at = figures.next_offsets.entry(partition).or_insert(next);
                *at = (*at).max(next);
            }
        }
        self
    }

    /// Findings per check, every check listed (0 when it found nothing).
    pub fn findings_per_check(&self) -> BTreeMap<&'static str, u64> {
        let mut counts: BTreeMap<&'static str, u64> = connect_state_ops::doctor::CHECKS
            .iter()
            .map(|check| (*check, 0))
            .collect();
        for finding in &self.report.findings {
            *counts.entry(finding.check).or_insert(0) += 1;
        }
        counts
    }
}

/// A connector's tasks as Connect's REST status lists them (every task status the status topic
/// holds for it) and the committed ones without a status, ascending; a commit can claim any
/// count, so at most `limit` of those are taken.
pub fn task_ids(views: &connect_state_ops::rest::Views, connector: &str, limit: usize) -> Vec<i32> {
    let mut ids: std::collections::BTreeSet<i32> = views
        .status
        .tasks(connector)
        .map(|(task, _)| task)
        .collect();
    ids.extend(views.config.tasks(connector).take(limit).map(|id| id.task));
    ids.into_iter().collect()
}

fn skips<K: SkipKind>(counts: impl Iterator<Item = (K, u64)>) -> Vec<(&'static str, u64)> {
    counts.map(|(kind, n)| (kind.as_str(), n)).collect()
}

fn figures_of<M: TopicMachine>(
    read: &TopicRead<M>,
    skipped: Vec<(&'static str, u64)>,
) -> TopicFigures {
    let partitions: Vec<i32> = match &read.layout {
        Layout::Described { partitions, .. } => (0..*partitions).collect(),
        Layout::Dump { partitions_seen } => partitions_seen.iter().copied().collect(),
    };
    TopicFigures {
        next_offsets: partitions
            .into_iter()
            .map(|p| (p, read.state.machine.next_fetch_offset(p)))
            .collect(),
        skipped,
    }
}
