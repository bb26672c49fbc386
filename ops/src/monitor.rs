//! What a server's monitoring (`/metrics`, `/ui/`) reads besides the REST views: `doctor`'s
//! findings and each topic's read positions and skip counters. A tailer keeps one [`Monitor`]
//! and brings it up to date with what moved: a topic's checks run again only when that topic,
//! or the config topic they read, moved.

use std::collections::BTreeMap;

use engine::skips::SkipKind;
use engine::TopicKind;

use crate::doctor::{
    examine_config, examine_offsets, examine_status, Examination, Examined, Part, Report,
};
use crate::topics::Layout;

/// One topic's read figures.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TopicFigures {
    /// The next offset to read, per partition.
    pub next_offsets: BTreeMap<i32, i64>,
    /// Records skipped as Java skips them, per reason.
    pub skipped: Vec<(&'static str, u64)>,
}

/// `doctor`'s report and the read figures of the topics served.
#[derive(Debug, Clone, Default)]
pub struct Monitor {
    /// `doctor`'s examination of the topics.
    pub report: Report,
    /// Read figures per topic served.
    pub topics: BTreeMap<TopicKind, TopicFigures>,
    /// Each topic's part of the report, kept to assemble it again when others move.
    parts: [Option<Part>; 3],
}

impl Monitor {
    /// The monitor of `examination`, each topic read up to `positions` (the next offset to
    /// read per partition; a topic without them reports the partitions its layout names).
    pub fn of(
        examination: &Examination,
        positions: &BTreeMap<TopicKind, BTreeMap<i32, i64>>,
    ) -> Self {
        let mut monitor = Self::default();
        monitor.update(examination, positions, &TopicKind::ALL);
        monitor
    }

    /// Brings the monitor up to `examination` after the topics in `moved` moved: their
    /// figures, and the checks that read them, are computed again; the others are kept.
    pub fn update(
        &mut self,
        examination: &Examination,
        positions: &BTreeMap<TopicKind, BTreeMap<i32, i64>>,
        moved: &[TopicKind],
    ) {
        let config_moved = moved.contains(&TopicKind::Config);
        let config_snapshot = examination.config.as_ref().map(|c| &c.snapshot);
        let [config, status, offsets] = &mut self.parts;
        if config_moved || config.is_none() != examination.config.is_none() {
            *config = examination.config.as_ref().map(examine_config);
        }
        if config_moved || moved.contains(&TopicKind::Status) || status.is_none() {
            *status = examination
                .status
                .as_ref()
                .map(|s| examine_status(s, config_snapshot));
        }
        if config_moved || moved.contains(&TopicKind::Offsets) || offsets.is_none() {
            *offsets = examination
                .offsets
                .as_ref()
                .map(|o| examine_offsets(o, config_snapshot));
        }
        self.report = Report::assemble(config.as_ref(), status.as_ref(), offsets.as_ref());
        let at = |kind: TopicKind| positions.get(&kind);
        for kind in moved {
            let figures = match kind {
                TopicKind::Config => examination
                    .config
                    .as_ref()
                    .map(|e| figures_of(e, skips(e.diagnostics.skipped().iter()), at(*kind))),
                TopicKind::Status => examination
                    .status
                    .as_ref()
                    .map(|e| figures_of(e, skips(e.diagnostics.skipped().iter()), at(*kind))),
                TopicKind::Offsets => examination
                    .offsets
                    .as_ref()
                    .map(|e| figures_of(e, skips(e.diagnostics.skipped().iter()), at(*kind))),
            };
            match figures {
                Some(figures) => self.topics.insert(*kind, figures),
                None => self.topics.remove(kind),
            };
        }
    }

    /// Findings per check, every check listed (0 when it found nothing).
    pub fn findings_per_check(&self) -> BTreeMap<&'static str, u64> {
        let mut counts: BTreeMap<&'static str, u64> = crate::doctor::CHECKS
            .iter()
            .map(|check| (*check, 0))
            .collect();
        for finding in &self.report.findings {
            *counts.entry(finding.check).or_insert(0) += 1;
        }
        counts
    }
}

fn skips<K: SkipKind>(counts: impl Iterator<Item = (K, u64)>) -> Vec<(&'static str, u64)> {
    counts.map(|(kind, n)| (kind.as_str(), n)).collect()
}

/// A topic's figures: the positions given, or else 0 for each partition its layout names.
fn figures_of<S, D>(
    examined: &Examined<S, D>,
    skipped: Vec<(&'static str, u64)>,
    positions: Option<&BTreeMap<i32, i64>>,
) -> TopicFigures {
    let partitions: Vec<i32> = match &examined.layout {
        Layout::Described { partitions, .. } => (0..*partitions).collect(),
        Layout::Dump { partitions_seen } => partitions_seen.iter().copied().collect(),
    };
    let mut next_offsets: BTreeMap<i32, i64> = partitions.into_iter().map(|p| (p, 0)).collect();
    for (partition, next) in positions.into_iter().flatten() {
        next_offsets.insert(*partition, *next);
    }
    TopicFigures {
        next_offsets,
        skipped,
    }
}
