//! Reading up to three topics at once: each read on a thread of its own (with its own runtime
//! and, for a live cluster, its own Kafka clients: a transport's one consumer serves one read
//! at a time), so that on two cores a read of the three topics takes about as long as the
//! largest of them.

use std::thread::ScopedJoinHandle;

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

#[cfg(test)]
mod tests {
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
}
