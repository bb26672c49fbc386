//! The progress bar of long reads: records read against the end offsets, the slowest partition
//! and the rate, on stderr, shown only once a read has taken more than a second (and only on a
//! terminal: indicatif hides it otherwise).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use connect_state_store::ProgressObserver;
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Reads shorter than this show no bar.
const SHOW_AFTER: Duration = Duration::from_secs(1);

/// Per partition: the offset the read started from, where it is, where it ends.
#[derive(Debug, Clone, Copy)]
struct PartitionProgress {
    start: i64,
    position: i64,
    end: i64,
}

impl PartitionProgress {
    fn fraction(&self) -> f64 {
        let span = (self.end - self.start).max(1) as f64;
        ((self.position - self.start) as f64 / span).clamp(0.0, 1.0)
    }
}

#[derive(Debug)]
struct State {
    started: Instant,
    partitions: BTreeMap<i32, PartitionProgress>,
    records: u64,
}

/// A progress bar for reading one topic. Hand [`observer`](Self::observer) to the store before
/// the read, call [`finish`](Self::finish) after it.
#[derive(Debug, Clone)]
pub struct ReadBar {
    bar: ProgressBar,
    state: Arc<Mutex<State>>,
    /// The bars drawn with this one, one line each, when reads run at once.
    group: Option<MultiProgress>,
}

/// The bars of reads that run at once: each shows on its own line, all of them once one read
/// passes one second.
#[derive(Debug, Clone)]
pub struct ReadBars(MultiProgress);

impl Default for ReadBars {
    fn default() -> Self {
        Self(MultiProgress::with_draw_target(ProgressDrawTarget::hidden()))
    }
}

impl ReadBars {
    /// Removes every bar of the group (the reads are over).
    pub fn finish_all(&self) {
        let _ = self.0.clear();
    }

    /// A bar of this group for `topic`.
    pub fn bar(&self, topic: &str) -> ReadBar {
        let mut bar = ReadBar::new(topic);
        bar.bar = self.0.add(bar.bar);
        bar.group = Some(self.0.clone());
        bar
    }
}

impl ReadBar {
    /// A hidden bar for `topic`; it appears when the read passes one second.
    pub fn new(topic: &str) -> Self {
        let bar = ProgressBar::hidden();
        bar.set_style(
            ProgressStyle::with_template(
                "{prefix} [{bar:30}] {percent:>3}% {human_pos} records, {per_sec} {msg}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
        );
        bar.set_prefix(topic.to_string());
        bar.set_length(100);
        Self {
            bar,
            state: Arc::new(Mutex::new(State {
                started: Instant::now(),
                partitions: BTreeMap::new(),
                records: 0,
            })),
            group: None,
        }
    }

    /// The store observer that moves this bar.
    pub fn observer(&self) -> ProgressObserver {
        let this = self.clone();
        Box::new(move |p| {
            this.update(p.partition, p.position, p.end, p.records);
        })
    }

    fn update(&self, partition: i32, position: i64, end: i64, records: usize) {
        let Ok(mut state) = self.state.lock() else {
            return;
        };
        state.records += records as u64;
        let entry = state
            .partitions
            .entry(partition)
            .or_insert(PartitionProgress {
                start: position - records as i64,
                position,
                end,
            });
        entry.position = position;
        entry.end = end;
        let done = state
            .partitions
            .values()
            .filter(|p| p.position >= p.end)
            .count();
        let total = state.partitions.len();
        let overall = state
            .partitions
            .values()
            .map(PartitionProgress::fraction)
            .sum::<f64>()
            / total.max(1) as f64;
        let slowest = state
            .partitions
            .iter()
            .filter(|(_, p)| p.position < p.end)
            .min_by(|a, b| a.1.fraction().total_cmp(&b.1.fraction()));
        let message = match slowest {
            Some((n, p)) => format!(
                "partitions {done}/{total} done, slowest p{n} at {:.0}%",
                p.fraction() * 100.0
            ),
            None => format!("partitions {done}/{total} done"),
        };
        if self.bar.is_hidden() && state.started.elapsed() >= SHOW_AFTER {
            match &self.group {
                Some(group) => group.set_draw_target(ProgressDrawTarget::stderr()),
                None => self.bar.set_draw_target(ProgressDrawTarget::stderr()),
            }
        }
        // The bar's position counts records, its length is scaled so the percentage is the
        // mean partition progress.
        let records_read = state.records;
        let length = if overall > 0.0 {
            (records_read as f64 / overall).ceil() as u64
        } else {
            records_read.max(1) * 100
        };
        self.bar.set_length(length.max(records_read));
        self.bar.set_position(records_read);
        self.bar.set_message(message);
    }

    /// Records read so far.
    pub fn records(&self) -> u64 {
        self.state.lock().map_or(0, |s| s.records)
    }

    /// Removes the bar (the read is over).
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_records_and_reaches_the_end() {
        let bar = ReadBar::new("t");
        let mut observe = bar.observer();
        for (partition, position, records) in [(0, 3, 3), (1, 2, 2), (0, 6, 3), (1, 4, 2)] {
            observe(&connect_state_store::ReadProgress {
                topic: "t",
                partition,
                position,
                end: if partition == 0 { 6 } else { 4 },
                records,
            });
        }
        assert_eq!(bar.records(), 10);
        assert_eq!(bar.bar.position(), 10);
        assert_eq!(bar.bar.length(), Some(10));
        assert!(bar.bar.message().starts_with("partitions 2/2 done"));
    }
}
