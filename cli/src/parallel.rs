//! Work on several threads: reading up to three topics at once, each read on a thread of its
//! own (with its own runtime and, for a live cluster, its own Kafka clients: a transport's one
//! consumer serves one read at a time), so that on two cores a read of the three topics takes
//! about as long as the largest of them; and [`Ahead`], which computes a list's results on
//! helper threads a few ahead of the caller that writes them.

use std::collections::BTreeMap;
use std::sync::{mpsc, Arc, Condvar, Mutex, PoisonError};
use std::thread::{JoinHandle, ScopedJoinHandle};

use crate::common::CliError;

/// What [`read_three`] returns: each read's result, `None` for a read not given.
pub(crate) type Three<A, B, C> = (Option<A>, Option<B>, Option<C>);

/// Runs the reads given, at once, and returns each result in its place. When several fail, the
/// error returned is the first in topic order (config, status, offsets), whichever failed
/// first in time; a read that panics panics the caller once every read has stopped.
pub(crate) fn read_three<A: Send, B: Send, C: Send>(
    config: Option<impl FnOnce() -> Result<A, CliError> + Send>,
    status: Option<impl FnOnce() -> Result<B, CliError> + Send>,
    offsets: Option<impl FnOnce() -> Result<C, CliError> + Send>,
) -> Result<Three<A, B, C>, CliError> {
    std::thread::scope(|scope| {
        let config = config.map(|read| scope.spawn(read));
        let status = status.map(|read| scope.spawn(read));
        let offsets = offsets.map(|read| scope.spawn(read));
        let config = config.map(joined).transpose();
        let status = status.map(joined).transpose();
        let offsets = offsets.map(joined).transpose();
        Ok((config?, status?, offsets?))
    })
}

/// The result of a read's thread, its panic passed on.
fn joined<R>(read: ScopedJoinHandle<'_, Result<R, CliError>>) -> Result<R, CliError> {
    read.join()
        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

/// `f` of each item, in the items' order, computed on helper threads at most `ahead` items
/// before the caller takes them: while the caller writes one connector's offsets listing, the
/// next ones are being computed (on two cores, a snapshot of a million source partitions
/// writes in about half the time). At most `ahead` results wait at once, so what is held stays
/// a few items' worth however long the list. Dropping it stops the helpers after the item each
/// one is computing (without waiting for it); a helper's panic is passed on to the caller.
pub(crate) struct Ahead<R> {
    /// `f` of the item at an index.
    compute: Arc<Compute<R>>,
    results: mpsc::Receiver<(usize, R)>,
    /// Results that came before the one the caller takes next.
    early: BTreeMap<usize, R>,
    next: usize,
    len: usize,
    window: Arc<Window>,
    helpers: Vec<JoinHandle<()>>,
}

/// `f` of the item at an index, shared by the helpers and the caller.
type Compute<R> = dyn Fn(usize) -> R + Send + Sync;

/// Which items the helpers may take: those fewer than `ahead` past the ones taken by the caller.
struct Window {
    state: Mutex<WindowState>,
    moved: Condvar,
}

struct WindowState {
    /// Items handed to helpers so far (the next one to hand out).
    started: usize,
    /// Items the caller has taken.
    taken: usize,
    /// Set when the iterator is dropped: the helpers stop.
    stopped: bool,
}

impl Window {
    /// The next item for a helper, waiting while it would be `ahead` or more past the caller;
    /// `None` once every item is handed out or the iterator was dropped.
    fn start(&self, len: usize, ahead: usize) -> Option<usize> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            if state.stopped || state.started >= len {
                return None;
            }
            if state.started < state.taken + ahead {
                state.started += 1;
                return Some(state.started - 1);
            }
            state = self
                .moved
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }

    fn update(&self, change: impl FnOnce(&mut WindowState)) {
        change(&mut self.state.lock().unwrap_or_else(PoisonError::into_inner));
        self.moved.notify_all();
    }
}

/// Stops every helper when the one holding it panics: the others would otherwise wait for the
/// caller, who waits for the item that will never come.
struct StopOnPanic<'a>(&'a Window);

impl Drop for StopOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.update(|state| state.stopped = true);
        }
    }
}

impl<R: Send + 'static> Ahead<R> {
    /// Starts computing `f` of `items` on as many helpers as the machine has cores (fewer for a
    /// shorter list), each result at most `ahead` (at least 1) items before the caller.
    pub(crate) fn new<T: Send + Sync + 'static>(
        items: Vec<T>,
        ahead: usize,
        f: impl Fn(&T) -> R + Send + Sync + 'static,
    ) -> Self {
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        Self::with_helpers(items, cores, ahead, f)
    }

    /// [`new`](Self::new) with up to `helpers` threads (no more than items). With none (none
    /// asked for, or none the system would start), the caller computes each item as it takes it.
    fn with_helpers<T: Send + Sync + 'static>(
        items: Vec<T>,
        helpers: usize,
        ahead: usize,
        f: impl Fn(&T) -> R + Send + Sync + 'static,
    ) -> Self {
        let (len, ahead) = (items.len(), ahead.max(1));
        let window = Arc::new(Window {
            state: Mutex::new(WindowState {
                started: 0,
                taken: 0,
                stopped: false,
            }),
            moved: Condvar::new(),
        });
        let (send, results) = mpsc::channel();
        let compute: Arc<Compute<R>> = Arc::new(move |i: usize| f(&items[i]));
        let mut started = Vec::new();
        for _ in 0..helpers.min(len) {
            let (compute, window, send) = (Arc::clone(&compute), Arc::clone(&window), send.clone());
            let helper = std::thread::Builder::new()
                .name("connect-state-ahead".into())
                .spawn(move || {
                    let _stop = StopOnPanic(&window);
                    while let Some(i) = window.start(len, ahead) {
                        if send.send((i, compute(i))).is_err() {
                            return;
                        }
                    }
                });
            match helper {
                Ok(helper) => started.push(helper),
                // The system starts no more threads: those started do the work (or the caller).
                Err(_) => break,
            }
        }
        Self {
            compute,
            results,
            early: BTreeMap::new(),
            next: 0,
            len,
            window,
            helpers: started,
        }
    }
}

impl<R> Iterator for Ahead<R> {
    type Item = R;

    fn next(&mut self) -> Option<R> {
        if self.next >= self.len {
            return None;
        }
        loop {
            if let Some(result) = self.early.remove(&self.next) {
                self.next += 1;
                self.window.update(|state| state.taken += 1);
                return Some(result);
            }
            if self.helpers.is_empty() {
                let result = (self.compute)(self.next);
                self.next += 1;
                return Some(result);
            }
            match self.results.recv() {
                Ok((i, result)) => {
                    self.early.insert(i, result);
                }
                // Every helper stopped without computing the next item: one panicked. Pass the
                // panic on (with none, the caller would compute the rest itself).
                Err(_) => {
                    for helper in self.helpers.drain(..) {
                        if let Err(panic) = helper.join() {
                            std::panic::resume_unwind(panic);
                        }
                    }
                }
            }
        }
    }
}

impl<R> Drop for Ahead<R> {
    /// Stops the helpers without waiting for them: each ends after the item it is computing,
    /// whose result nobody takes. A writer that fails (a reader gone: `inspect | head`) returns
    /// at once instead of after the next connectors' listings, however large.
    fn drop(&mut self) {
        self.window.update(|state| state.stopped = true);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Barrier;

    use super::*;

    #[test]
    fn the_reads_run_at_the_same_time_and_keep_their_places() {
        // Each read waits for the other two: this returns only if all three run at once.
        let barrier = Barrier::new(3);
        let read = |n: u32| {
            let barrier = &barrier;
            Some(move || {
                barrier.wait();
                Ok(n)
            })
        };
        let (a, b, c) = read_three(read(1), read(2), read(3)).unwrap();
        assert_eq!((a, b, c), (Some(1), Some(2), Some(3)));
    }

    #[test]
    fn reads_not_given_are_none_and_the_first_failure_in_topic_order_wins() {
        let none = None::<fn() -> Result<u8, CliError>>;
        let fail = |m: &'static str| Some(move || Err::<u8, _>(CliError::Input(m.into())));
        let (a, b, c) = read_three(none, Some(|| Ok(2)), none).unwrap();
        assert_eq!((a, b, c), (None, Some(2), None));
        let error = read_three(Some(|| Ok(1)), fail("status"), fail("offsets")).unwrap_err();
        assert!(matches!(error, CliError::Input(m) if m == "status"));
    }

    #[test]
    fn ahead_computes_on_several_threads_and_hands_results_over_in_order() {
        // Items 0 and 1 each wait for the other: the list completes only if two helpers run at
        // once, and item 1 then finishes first whatever the scheduling.
        let barrier = Arc::new(Barrier::new(2));
        let ahead = Ahead::with_helpers((0..40).collect(), 2, 4, move |&i: &u32| {
            if i < 2 {
                barrier.wait();
            }
            i * 10
        });
        assert_eq!(
            ahead.collect::<Vec<_>>(),
            (0..40).map(|i| i * 10).collect::<Vec<_>>()
        );
    }

    /// An `Ahead` over `0..len` on two helpers handing each item back, and how many items its
    /// helpers have computed so far (the count is shared with `f`: it drops when they end).
    fn counting(len: usize, ahead: usize) -> (Arc<AtomicUsize>, Ahead<usize>) {
        let computed = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&computed);
        let ahead = Ahead::with_helpers((0..len).collect(), 2, ahead, move |&i: &usize| {
            counter.fetch_add(1, Ordering::SeqCst);
            i
        });
        (computed, ahead)
    }

    #[test]
    fn ahead_holds_at_most_its_window_past_what_the_caller_took() {
        let (computed, mut ahead) = counting(200, 3);
        assert_eq!(Ahead::<u8>::new(Vec::<u8>::new(), 3, |&b| b).next(), None);
        for taken in 1..=200 {
            assert_eq!(ahead.next(), Some(taken - 1));
            assert!(computed.load(Ordering::SeqCst) <= taken + 3);
        }
        assert_eq!(ahead.next(), None);
        assert_eq!(computed.load(Ordering::SeqCst), 200);
    }

    #[test]
    fn dropping_ahead_stops_its_helpers() {
        let (computed, mut ahead) = counting(100_000, 2);
        assert_eq!(ahead.next(), Some(0));
        drop(ahead);
        // The helpers end (each held a count of `computed` through `f`) having computed no more
        // than the window allowed: the one taken and two ahead of it.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while Arc::strong_count(&computed) > 1 {
            assert!(
                std::time::Instant::now() < deadline,
                "the helpers did not stop"
            );
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        let stopped_at = computed.load(Ordering::SeqCst);
        assert!((1..=3).contains(&stopped_at), "{stopped_at} computed");
    }

    #[test]
    fn a_helpers_panic_reaches_the_caller_instead_of_hanging() {
        let ahead = Ahead::with_helpers((0..50).collect(), 2, 4, |&i: &u32| {
            assert!(i != 7, "item seven cannot be computed");
            i
        });
        let panic =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| ahead.collect::<Vec<_>>()))
                .unwrap_err();
        let message = panic
            .downcast_ref::<&str>()
            .copied()
            .or_else(|| panic.downcast_ref::<String>().map(String::as_str));
        assert_eq!(message, Some("item seven cannot be computed"));
    }

    #[test]
    fn without_helpers_the_caller_computes_each_item_as_it_takes_it() {
        let caller = std::thread::current().id();
        let ahead = Ahead::with_helpers((0..10).collect(), 0, 2, move |&i: &u32| {
            assert_eq!(std::thread::current().id(), caller);
            i + 1
        });
        assert_eq!(ahead.collect::<Vec<_>>(), (1..=10).collect::<Vec<_>>());
    }
}
