//! How the benchmarks measure: the best of several runs, rates and ratios, and the resident
//! set of this process.

use std::time::{Duration, Instant};

/// Resident-set figures of this process, from `/proc/self/status` (Linux only).
pub mod memory {
    fn status_kb(field: &str) -> Option<u64> {
        let status = std::fs::read_to_string("/proc/self/status").ok()?;
        let line = status.lines().find(|l| l.starts_with(field))?;
        line[field.len()..]
            .trim()
            .trim_end_matches("kB")
            .trim()
            .parse::<u64>()
            .ok()
            .map(|kb| kb * 1024)
    }

    /// The resident set now.
    pub fn rss() -> Option<u64> {
        status_kb("VmRSS:")
    }

    /// Starts a peak measurement: resets the high-water mark to the current resident set and
    /// returns it. `None` when the peak cannot be reset.
    pub fn start_peak() -> Option<u64> {
        std::fs::write("/proc/self/clear_refs", "5").ok()?;
        rss()
    }

    /// The peak growth since [`start_peak`] returned `base`.
    pub fn peak_growth(base: Option<u64>) -> Option<u64> {
        Some(status_kb("VmHWM:")?.saturating_sub(base?))
    }
}

/// Runs `f` `runs` times and returns the shortest time and the last result.
///
/// Each run's result is dropped before the next run starts, outside the timed part: a run
/// then allocates in memory the process already holds, as the warm JVM's runs of `--java` do
/// (its heap is touched by the warm-up runs). A fresh process's first touch of new memory is
/// what the callers' first, separately timed run measures.
pub fn best_of<R>(runs: u32, mut f: impl FnMut() -> R) -> (Duration, R) {
    let mut best = Duration::MAX;
    let mut last = None;
    for _ in 0..runs.max(1) {
        drop(last.take());
        let start = Instant::now();
        let r = f();
        best = best.min(start.elapsed());
        last = Some(r);
    }
    (best, last.expect("at least one run"))
}

/// Records per second.
pub fn rate(records: u64, time: Duration) -> f64 {
    records as f64 / time.as_secs_f64().max(1e-9)
}

/// `a / b`, or 0 when `b` is not positive.
pub fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 {
        a / b
    } else {
        0.0
    }
}
