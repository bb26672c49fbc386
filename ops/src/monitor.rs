//! What a server's monitoring (`/metrics`, `/ui/`) reads besides the REST views: `doctor`'s
//! findings and each topic's read positions and skip counters. A tailer keeps one [`Monitor`]
//! and brings it up to date with what moved: a topic's checks run again only when that topic,
//! or the config topic they read, moved.

use std::collections::BTreeMap;

use engine::skips::SkipKind;
use engine::TopicKind;

use std::collections::BTreeSet;

use crate::doctor::{
    examine_config, examine_offsets, examine_offsets_layout, examine_status,
    offsets_of_deleted_connector, Examination, Examined, Finding, Part, Report,
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
    /// The offsets findings per connector, kept while its offsets do not change.
    offsets_findings: BTreeMap<String, Finding>,
}

/// What moved since the monitor was last brought up to date.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Moved {
    /// The topics whose read positions moved.
    pub topics: Vec<TopicKind>,
    /// The connectors whose offsets changed, when known (`None`: any may have).
    pub offsets_connectors: Option<BTreeSet<String>>,
}

impl Moved {
    /// Everything moved (a first examination).
    pub fn everything() -> Self {
        Self {
            topics: TopicKind::ALL.to_vec(),
            offsets_connectors: None,
        }
    }
}

impl Monitor {
    /// The monitor of `examination`, each topic read up to `positions` (the next offset to
    /// read per partition; a topic without them reports the partitions its layout names).
    pub fn of(
        examination: &Examination,
        positions: &BTreeMap<TopicKind, BTreeMap<i32, i64>>,
    ) -> Self {
        let mut monitor = Self::default();
        monitor.update(examination, positions, &Moved::everything());
        monitor
    }

    /// Brings the monitor up to `examination` after what `moved` says moved: the figures of the
    /// topics that moved, and the checks that read them, are computed again; a deleted
    /// connector's offsets finding is computed again only if its offsets changed; the rest is
    /// kept.
    pub fn update(
        &mut self,
        examination: &Examination,
        positions: &BTreeMap<TopicKind, BTreeMap<i32, i64>>,
        moved: &Moved,
    ) {
        let config_moved = moved.topics.contains(&TopicKind::Config);
        let offsets_moved = moved.topics.contains(&TopicKind::Offsets);
        let config_snapshot = examination.config.as_ref().map(|c| &c.snapshot);
        let [config, status, offsets] = &mut self.parts;
        if config_moved || config.is_none() != examination.config.is_none() {
            *config = examination.config.as_ref().map(examine_config);
        }
        if config_moved || moved.topics.contains(&TopicKind::Status) || status.is_none() {
            *status = examination
                .status
                .as_ref()
                .map(|s| examine_status(s, config_snapshot));
        }
        if config_moved || offsets_moved || offsets.is_none() {
            *offsets = match (&examination.offsets, config_snapshot) {
                (Some(examined), Some(config)) => {
                    let mut part = examine_offsets_layout(examined);
                    let snapshot = &examined.snapshot;
                    let mut kept = BTreeMap::new();
                    for c in snapshot.connectors().filter(|c| !config.contains(c)) {
                        let changed = moved
                            .offsets_connectors
                            .as_ref()
                            .is_none_or(|touched| touched.contains(c));
                        let finding = match self.offsets_findings.remove(c) {
                            Some(finding) if !changed => finding,
                            _ => offsets_of_deleted_connector(snapshot, c),
                        };
                        part.findings.push(finding.clone());
                        kept.insert(c.to_string(), finding);
                    }
                    self.offsets_findings = kept;
                    Some(part)
                }
                (Some(examined), None) => Some(examine_offsets(examined, None)),
                (None, _) => None,
            };
        }
        self.report = Report::assemble(config.as_ref(), status.as_ref(), offsets.as_ref());
        let at = |kind: TopicKind| positions.get(&kind);
        for kind in &moved.topics {
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
