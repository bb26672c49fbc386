//! The whole machine's CPU work while a read runs, from Linux's `/proc/stat`: what the broker,
//! librdkafka's threads and ours together keep the cores busy with. It gives the broker rows a
//! floor: a read cannot finish sooner than its CPU work spread over every core, so
//! `inspect`'s CPU seconds over the cores, over the raw read's time, is the lowest
//! `inspect / raw read` ratio that overlapping work could reach on this machine.
//!
//! `/proc/stat` counts in ticks of 1/100 s per core: a read of 20 ms spans a few ticks, so the
//! callers average several runs.

use std::time::{Duration, Instant};

/// The machine's CPU time counters at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counters {
    /// Ticks every core spent busy (everything but idle and waiting for IO).
    busy: u64,
    /// Ticks of every kind.
    total: u64,
    /// The cores counted.
    cores: u32,
}

impl Counters {
    /// The counters now; `None` where `/proc/stat` is missing (not Linux) or unreadable.
    pub fn now() -> Option<Self> {
        parse(&std::fs::read_to_string("/proc/stat").ok()?)
    }
}

/// Reads the aggregate `cpu` line (user, nice, system, idle, iowait, irq, softirq, steal, ...)
/// and counts the `cpuN` lines. `None` for text not in that form.
fn parse(stat: &str) -> Option<Counters> {
    let mut lines = stat.lines();
    let first = lines.next()?;
    let mut fields = first.split_whitespace();
    if fields.next()? != "cpu" {
        return None;
    }
    let ticks: Vec<u64> = fields.map(str::parse).collect::<Result<_, _>>().ok()?;
    // user, nice, system and idle are in every kernel's line; iowait and later ones may not be.
    if ticks.len() < 4 {
        return None;
    }
    // Guest time is counted within user time as well: the first eight fields are the total.
    let total: u64 = ticks.iter().take(8).sum();
    let idle = ticks[3] + ticks.get(4).copied().unwrap_or(0);
    let cores = lines
        .filter(|line| {
            line.strip_prefix("cpu")
                .and_then(|rest| rest.split_whitespace().next())
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        })
        .count();
    Some(Counters {
        busy: total - idle,
        total,
        cores: u32::try_from(cores).ok().filter(|&c| c > 0)?,
    })
}

/// The machine's CPU work over several timed runs of one read. The ticks of every run are
/// added up before the busy share is taken: a short run spans few ticks, and the share of one
/// run alone would be mostly rounding.
#[derive(Debug, Default)]
pub struct Work {
    busy: u64,
    total: u64,
    wall: Duration,
    runs: u32,
    cores: u32,
}

/// One timed run: the counters and the time at its start.
#[derive(Debug)]
pub struct Run {
    before: Option<Counters>,
    start: Instant,
}

impl Run {
    /// Starts a run now.
    pub fn start() -> Self {
        Self {
            before: Counters::now(),
            start: Instant::now(),
        }
    }
}

impl Work {
    /// Ends `run` now and adds its ticks and time to the runs counted (a run whose counters
    /// cannot be read is not counted).
    pub fn count(&mut self, run: Run) {
        let wall = run.start.elapsed();
        let (Some(before), Some(after)) = (run.before, Counters::now()) else {
            return;
        };
        let (Some(busy), Some(total)) = (
            after.busy.checked_sub(before.busy),
            after.total.checked_sub(before.total),
        ) else {
            return;
        };
        self.busy += busy;
        self.total += total;
        self.wall += wall;
        self.runs += 1;
        self.cores = before.cores;
    }

    /// The mean busy CPU seconds of a run (the busy share of every tick counted, times the
    /// cores, times the mean run time), if any tick was counted.
    pub fn mean_seconds(&self) -> Option<f64> {
        (self.runs > 0 && self.total > 0).then(|| {
            self.busy as f64 / self.total as f64 * f64::from(self.cores) * self.wall.as_secs_f64()
                / f64::from(self.runs)
        })
    }

    /// The mean time of a run counted.
    pub fn mean_wall(&self) -> Option<f64> {
        (self.runs > 0).then(|| self.wall.as_secs_f64() / f64::from(self.runs))
    }

    /// The floor this work sets on a read's time, relative to the runs of `reference` (mean
    /// against mean): this work's mean CPU seconds spread over every core, over the mean time
    /// of a `reference` run.
    pub fn floor_ratio(&self, reference: &Self) -> Option<f64> {
        let seconds = self.mean_seconds()?;
        let reference = reference.mean_wall().filter(|&w| w > 0.0)?;
        (self.cores > 0).then(|| seconds / f64::from(self.cores) / reference)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAT: &str = "cpu  100 5 50 800 20 3 2 0 0 0\n\
                        cpu0 50 2 25 400 10 2 1 0 0 0\n\
                        cpu1 50 3 25 400 10 1 1 0 0 0\n\
                        intr 12345\n\
                        cpufreq 1\n";

    #[test]
    fn busy_ticks_are_all_but_idle_and_iowait() {
        let counters = parse(STAT).expect("a /proc/stat text");
        assert_eq!(counters.total, 980);
        assert_eq!(counters.busy, 160);
        assert_eq!(counters.cores, 2);
    }

    #[test]
    fn text_in_another_form_is_refused() {
        for text in [
            "",
            "intr 1\n",
            "cpu 1 2 x 4\ncpu0 1 2 3 4\n",
            "cpu 1 2 3\ncpu0 1 2 3\n",
            // An aggregate line without any core line counts no core.
            "cpu 1 2 3 4\n",
        ] {
            assert_eq!(parse(text), None, "{text:?}");
        }
    }

    #[test]
    fn the_busy_share_of_every_tick_is_taken_over_the_mean_run() {
        // Two runs of 0.4 s and 0.6 s on two cores: 100 ticks, 75 busy.
        let work = Work {
            busy: 75,
            total: 100,
            wall: Duration::from_secs(1),
            runs: 2,
            cores: 2,
        };
        // 3/4 of two cores over the mean run of half a second.
        assert_eq!(work.mean_wall(), Some(0.5));
        assert_eq!(work.mean_seconds(), Some(0.75));
        // Spread over the two cores, 0.375 s: over reference runs of 0.25 s on average, 1.5.
        let reference = Work {
            wall: Duration::from_millis(750),
            runs: 3,
            ..Work::default()
        };
        assert_eq!(work.floor_ratio(&reference), Some(1.5));
        assert_eq!(work.floor_ratio(&Work::default()), None);
    }

    #[test]
    fn no_run_or_no_tick_tells_nothing() {
        assert_eq!(Work::default().mean_seconds(), None);
        assert_eq!(Work::default().floor_ratio(&Work::default()), None);
        let no_tick = Work {
            runs: 1,
            cores: 2,
            wall: Duration::from_millis(3),
            ..Work::default()
        };
        assert_eq!(no_tick.mean_seconds(), None);
    }

    #[test]
    fn a_run_counts_its_ticks_and_time_where_proc_stat_is_readable() {
        let mut work = Work::default();
        work.count(Run::start());
        match Counters::now() {
            Some(now) => {
                assert_eq!(work.runs, 1);
                assert_eq!(work.cores, now.cores);
            }
            None => assert_eq!(work.runs, 0),
        }
    }
}
