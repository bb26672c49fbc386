//! A server's recent history of the cluster it tails: each connector's latest history entries,
//! when each task last reported, and how many source partitions each connector has.
//!
//! Each topic has its part ([`RecentPart`]), which folds in the [`Told`] events the topic's
//! [`History`](engine::history::History) machine queues, as the tailer drains them (a part is
//! an `Extend<Told>`, so a store can hand it each event of a read as it comes, and the three
//! topics are read at once, each into its own part). After each refresh the tailer publishes
//! an immutable [`RecentView`] beside the views, so a page shows the history at the positions
//! its views were read at.
//!
//! Unlike `connect-state history`, which tells the three topics in one time order, the parts
//! are told apart: a connector's offsets commits form one run until a reset, whatever else
//! happened to the connector meanwhile.

use std::collections::{BTreeSet, VecDeque};
use std::sync::Arc;

use engine::history::{ChangeKind, Told};
use engine::persistent::PMap;
use engine::TopicKind;

use crate::history::{Entry, Narrator, Options};

/// How many entries each topic's part keeps per connector by default.
pub const DEFAULT_RECENT_ENTRIES: usize = 20;

/// One topic's part of the history as it stood after a refresh: O(1) to take and to clone
/// (persistent maps; a connector's list is copied only when an entry joins it while a view
/// holds it).
#[derive(Debug, Clone, Default)]
struct PartView {
    connectors: PMap<String, Arc<VecDeque<Entry>>>,
    cluster: Arc<VecDeque<Entry>>,
    task_reports: PMap<(String, i32), i64>,
    live_offsets: PMap<String, u64>,
    /// The offsets runs still open, each as it would be told if it ended then.
    open_runs: Arc<Vec<Entry>>,
}

/// The recent history as it stood after a refresh.
#[derive(Debug, Clone, Default)]
pub struct RecentView {
    /// Config, status and offsets, in that order.
    parts: [PartView; 3],
}

impl RecentView {
    /// A connector's recent entries from every topic, oldest first (by record timestamp;
    /// ties in topic order), its open offsets run with them.
    pub fn of_connector(&self, connector: &str) -> Vec<Entry> {
        let mut entries: Vec<Entry> = Vec::new();
        for part in &self.parts {
            if let Some(list) = part.connectors.get(connector) {
                entries.extend(list.iter().cloned());
            }
            entries.extend(
                part.open_runs
                    .iter()
                    .filter(|e| e.connector.as_deref() == Some(connector))
                    .cloned(),
            );
        }
        entries.sort_by_key(|e| e.position.timestamp);
        entries
    }

    /// The recent cluster-wide entries (session keys, logger levels), oldest first.
    pub fn of_cluster(&self) -> Vec<Entry> {
        let mut entries: Vec<Entry> = self
            .parts
            .iter()
            .flat_map(|part| part.cluster.iter().cloned())
            .collect();
        entries.sort_by_key(|e| e.position.timestamp);
        entries
    }

    /// Live offsets keys per connector (its source partitions; a partition written under two
    /// byte forms of its key counts twice), kept as records are read so a scrape does not
    /// parse every key.
    pub fn source_partitions(&self) -> impl Iterator<Item = (&str, u64)> + '_ {
        self.parts[2]
            .live_offsets
            .iter()
            .map(|(c, n)| (c.as_str(), *n))
    }

    /// When each task's status was last written (record timestamps, ms), by connector and task.
    pub fn task_reports(&self) -> impl Iterator<Item = (&(String, i32), i64)> + '_ {
        self.parts[1]
            .task_reports
            .iter()
            .map(|(task, ts)| (task, *ts))
    }
}

/// One topic's fold: what its history machine told, bounded (at most `limit` entries per
/// connector and cluster-wide, one time per task).
#[derive(Debug)]
pub struct RecentPart {
    topic: TopicKind,
    narrator: Narrator,
    limit: usize,
    view: PartView,
    /// The connectors whose records changed something since [`take_touched`]
    /// (Self::take_touched).
    touched: BTreeSet<String>,
}

impl RecentPart {
    fn new(topic: TopicKind, limit: usize) -> Self {
        Self {
            topic,
            narrator: Narrator::new(Options::default()),
            limit: limit.max(1),
            view: PartView::default(),
            touched: BTreeSet::new(),
        }
    }

    /// The connectors whose records changed something since the last call (what a monitor
    /// needs to look at again).
    pub fn take_touched(&mut self) -> BTreeSet<String> {
        core::mem::take(&mut self.touched)
    }

    /// Folds in one record as the topic's history machine told it. The status topic's
    /// records keep their key (task reports are read from it), as its machine keeps them.
    pub fn tell(&mut self, told: &Told) {
        let record = told.record();
        let view = &mut self.view;
        if self.topic == TopicKind::Status && told.changes.is_some() {
            if let (Some(key), Some(ts)) = (record.key, record.timestamp) {
                if let Some(task) = engine::status::task_of_key(key) {
                    match record.value {
                        Some(_) => {
                            view.task_reports.insert(task, ts);
                        }
                        None => {
                            view.task_reports.remove(&task);
                        }
                    }
                }
            }
        }
        for change in told.changes.iter().flatten() {
            let Some(connector) = &change.connector else {
                continue;
            };
            if !self.touched.contains(connector) {
                self.touched.insert(connector.clone());
            }
            match change.kind {
                ChangeKind::OffsetWritten { new_key: true } => {
                    *view.live_offsets.get_or_insert_with(connector, || 0) += 1;
                }
                ChangeKind::OffsetRemoved { was_live: true } => {
                    if let Some(n) = view.live_offsets.get_mut(connector) {
                        *n = n.saturating_sub(1);
                    }
                }
                _ => {}
            }
        }
        let limit = self.limit;
        let mut keep = |entry: Entry| {
            let list = match &entry.connector {
                Some(c) => Arc::make_mut(view.connectors.get_or_insert_with(c, Default::default)),
                None => Arc::make_mut(&mut view.cluster),
            };
            if list.len() == limit {
                list.pop_front();
            }
            list.push_back(entry);
            Ok(())
        };
        // Only a record without timestamp under a time bound fails, and there are no bounds.
        let _ = self
            .narrator
            .narrate(self.topic, &record, told.changes.clone(), &mut keep);
    }
}

impl Extend<Told> for RecentPart {
    fn extend<I: IntoIterator<Item = Told>>(&mut self, told: I) {
        for told in told {
            self.tell(&told);
        }
    }
}

/// The three topics' folds.
#[derive(Debug)]
pub struct Recent {
    /// Config, status and offsets, in that order.
    parts: [RecentPart; 3],
}

impl Recent {
    /// Keeps `limit` entries per connector (at least one) of each topic; secrets masked.
    pub fn new(limit: usize) -> Self {
        Self {
            parts: TopicKind::ALL.map(|topic| RecentPart::new(topic, limit)),
        }
    }

    /// The three parts (config, status, offsets), to fold into at once.
    pub fn parts_mut(&mut self) -> (&mut RecentPart, &mut RecentPart, &mut RecentPart) {
        let [config, status, offsets] = &mut self.parts;
        (config, status, offsets)
    }

    /// One topic's part.
    pub fn part_mut(&mut self, topic: TopicKind) -> &mut RecentPart {
        let (config, status, offsets) = self.parts_mut();
        match topic {
            TopicKind::Config => config,
            TopicKind::Status => status,
            TopicKind::Offsets => offsets,
        }
    }

    /// The history as it stands, to publish (O(1) but for the open offsets runs, one entry
    /// per connector whose commits are being gathered).
    pub fn view(&mut self) -> RecentView {
        let parts = self.parts.each_mut().map(|part| {
            part.view.open_runs = Arc::new(part.narrator.open_runs());
            part.view.clone()
        });
        RecentView { parts }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::config::ConfigTopic;
    use engine::history::History;
    use engine::status::StatusTopic;
    use engine::{Record, TopicMachine};

    fn feed<M: TopicMachine<Event = Told>>(
        part: &mut RecentPart,
        machine: &mut M,
        record: Record<'_>,
    ) {
        machine.handle_record(record).unwrap();
        part.extend(std::iter::from_fn(|| machine.poll_event()));
    }

    #[test]
    fn recent_keeps_the_latest_entries_per_connector_and_task_reports() {
        let mut recent = Recent::new(2);
        let mut config = History::<ConfigTopic>::new();
        let value = br#"{"properties":{"tasks.max":"1"}}"#;
        let created = Record::new(b"connector-c", Some(value), 0).with_timestamp(Some(1));
        feed(recent.part_mut(TopicKind::Config), &mut config, created);
        let before = recent.view();
        for (offset, state) in ["PAUSED", "STOPPED", "PAUSED"].iter().enumerate() {
            let value = format!(r#"{{"state":"{state}","state.v2":"{state}"}}"#);
            let record = Record::new(b"target-state-c", Some(value.as_bytes()), offset as i64 + 1)
                .with_timestamp(Some(offset as i64 + 2));
            feed(recent.part_mut(TopicKind::Config), &mut config, record);
        }
        let kinds = |view: &RecentView| -> Vec<&str> {
            view.of_connector("c").iter().map(|e| e.kind).collect()
        };
        assert_eq!(
            kinds(&recent.view()),
            ["target_state_changed", "target_state_changed"],
            "two kept"
        );
        assert_eq!(
            kinds(&before),
            ["connector_created"],
            "a view never changes"
        );

        let mut status = History::<StatusTopic>::new();
        let running = br#"{"state":"RUNNING","trace":null,"worker_id":"w","generation":1}"#;
        let record = Record::new(b"status-task-c-0", Some(running), 0).with_timestamp(Some(42));
        feed(recent.part_mut(TopicKind::Status), &mut status, record);
        let again = Record::new(b"status-task-c-0", Some(running), 1).with_timestamp(Some(50));
        feed(recent.part_mut(TopicKind::Status), &mut status, again);
        let view = recent.view();
        let reports: Vec<(&(String, i32), i64)> = view.task_reports().collect();
        assert_eq!(
            reports,
            [(&("c".to_string(), 0), 50)],
            "a status written again is a report too"
        );
        // The connector's entries of both topics, by time.
        assert_eq!(
            kinds(&view),
            [
                "target_state_changed",
                "target_state_changed",
                "task_status_changed"
            ]
        );
        let gone = Record::new(b"status-task-c-0", None, 2).with_timestamp(Some(60));
        feed(recent.part_mut(TopicKind::Status), &mut status, gone);
        assert_eq!(recent.view().task_reports().count(), 0);
    }
}
