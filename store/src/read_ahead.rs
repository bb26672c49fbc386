//! Fetching one batch ahead: the fetch of a partition's next batch starts before the machine
//! applies the current one, so a transport that reads on another thread (the Kafka one reads
//! on tokio's blocking pool) overlaps the read with the work.

use core::future::Future;
use core::pin::Pin;
use core::task::Poll;

use crate::transport::{FetchedBatch, Transport, TransportError};

/// A transport's fetch, boxed as `async_trait` returns it.
type Fetch<'a> = Pin<Box<dyn Future<Output = Result<FetchedBatch, TransportError>> + Send + 'a>>;

/// What a read of one topic fetches with: the transport, the topic and the batch size.
pub(crate) struct Fetcher<'a, T: ?Sized> {
    pub(crate) transport: &'a T,
    pub(crate) topic: &'a str,
    pub(crate) max_records: usize,
}

impl<'a, T: Transport + ?Sized> Fetcher<'a, T> {
    /// The fetch of `partition` from `from`, asking for no more than the offsets left before
    /// `end` (a transport can then stop at the end without waiting to be told it is there).
    pub(crate) fn fetch(&self, partition: i32, from: i64, end: i64) -> Fetch<'a> {
        let left = usize::try_from(end - from).unwrap_or(usize::MAX);
        self.transport
            .fetch(self.topic, partition, from, left.min(self.max_records))
    }
}

/// A fetch started ahead of need: where it reads from, and the fetch itself, polled once so
/// that it is under way.
pub(crate) struct Prefetch<'a> {
    pub(crate) partition: i32,
    pub(crate) from: i64,
    state: State<'a>,
}

enum State<'a> {
    /// Still reading.
    Running(Fetch<'a>),
    /// Answered on the first poll (a transport that answers from memory).
    Done(Result<FetchedBatch, TransportError>),
}

impl<'a> Prefetch<'a> {
    /// Starts the fetch of `partition` from `from` and polls it once. Dropping the result
    /// abandons the answer, not the transport's read of it.
    pub(crate) fn start<T: Transport + ?Sized>(
        fetcher: &Fetcher<'a, T>,
        partition: i32,
        from: i64,
        end: i64,
    ) -> Self {
        let mut fetch = fetcher.fetch(partition, from, end);
        let waker = core::task::Waker::noop();
        let mut cx = core::task::Context::from_waker(waker);
        // The first poll runs the fetch up to its first wait (the Kafka transport hands the
        // read to its blocking pool there); the later `await` polls it with the task's waker.
        let state = match fetch.as_mut().poll(&mut cx) {
            Poll::Ready(answer) => State::Done(answer),
            Poll::Pending => State::Running(fetch),
        };
        Self {
            partition,
            from,
            state,
        }
    }

    /// The fetch's answer, waiting for it if it is still under way.
    pub(crate) async fn finish(self) -> Result<FetchedBatch, TransportError> {
        match self.state {
            State::Running(fetch) => fetch.await,
            State::Done(answer) => answer,
        }
    }
}
