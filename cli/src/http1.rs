//! The HTTP/1.1 connections of `serve`, on hyper: accepting within a cap on open connections,
//! the timeouts no request should outlive, and a bounded graceful shutdown.
//!
//! hyper parses requests, decodes chunked bodies, answers `Expect: 100-continue` when the body
//! is first read, applies backpressure to answers, and answers what it cannot parse itself
//! (400 or 431 with an empty body; the README's deliberate differences say so). What a routed
//! request must pass before its handler runs is [`crate::admission`]'s.
//!
//! This module adds what hyper leaves to its caller:
//! * **A cap on open connections** ([`Limits::max_connections`]). When a new client arrives and
//!   the cap is reached, the connection that has waited longest without being answered goes
//!   (idle, or still sending its request, or not reading its answer); one whose handler runs is
//!   never cut. New clients keep being answered whatever the old ones do.
//! * **Answers that do not move.** A client that stops reading its answer for
//!   [`Limits::idle`] is disconnected (hyper would wait forever).
//! * **Shutdown.** On the signal no connection is accepted, idle ones close, answers under way
//!   get [`Limits::grace`] to finish, then every connection left is dropped.
//!
//! A request head must arrive whole within [`Limits::header_read`] of the server starting to
//! wait for it (hyper's `header_read_timeout`): from the connection opening, or from the end
//! of the previous answer on a kept-alive connection.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::Body;
use axum::http::Request;
use axum::Router;
use bytes::Bytes;
use http_body::{Frame, SizeHint};
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Notify;
use tokio::task::JoinSet;
use tokio::time::Instant;
use tower::ServiceExt;

/// The largest request head (request line and headers) hyper reads; a larger one is hyper's
/// 431. hyper buffers a little more of an answer than this for a client before waiting.
pub const MAX_HEAD_BYTES: usize = 64 * 1024;
/// The most header fields a request may have; more are hyper's 431.
pub const MAX_HEADERS: usize = 100;
/// The default cap on open connections (see [`default_max_connections`]).
pub const DEFAULT_MAX_CONNECTIONS: usize = 1024;
/// File descriptors kept free of client connections under the process's limit: the listener,
/// the Kafka clients' sockets, standard streams.
const RESERVED_DESCRIPTORS: u64 = 64;

/// What the server allows its clients.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// From the server starting to wait for a request head (the connection opening, or the
    /// previous answer sent) to its end; a slower client is disconnected (by hyper).
    pub header_read: Duration,
    /// How long an answer may wait for its client to take the next bytes.
    pub idle: Duration,
    /// After the shutdown signal, how long answers under way may take before every remaining
    /// connection is dropped.
    pub grace: Duration,
    /// Connections open at once; at the cap the longest-waiting unanswered one makes room.
    pub max_connections: usize,
}

/// The default cap on open connections: [`DEFAULT_MAX_CONNECTIONS`], or the process's limit
/// on open files less a reserve for everything else, when that is lower (at least 16).
pub fn default_max_connections() -> usize {
    let room = open_file_limit().map(|limit| limit.saturating_sub(RESERVED_DESCRIPTORS));
    let cap = room.map_or(DEFAULT_MAX_CONNECTIONS as u64, |room| {
        room.min(DEFAULT_MAX_CONNECTIONS as u64)
    });
    usize::try_from(cap)
        .unwrap_or(DEFAULT_MAX_CONNECTIONS)
        .max(16)
}

/// The soft limit on open files (`RLIMIT_NOFILE`), when there is one.
#[cfg(unix)]
fn open_file_limit() -> Option<u64> {
    rustix::process::getrlimit(rustix::process::Resource::Nofile).current
}

#[cfg(not(unix))]
fn open_file_limit() -> Option<u64> {
    None
}

/// Accepts connections on `listener` and serves each with `router` until `shutdown`
/// completes, then shuts down within [`Limits::grace`].
pub async fn serve(
    listener: TcpListener,
    router: Router,
    limits: Limits,
    shutdown: impl Future<Output = ()>,
) {
    let graceful = GracefulShutdown::new();
    let registry = Arc::new(Mutex::new(Registry::default()));
    let mut tasks = JoinSet::new();
    let mut notice = Notice::default();
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    notice.clear();
                    let Some(connection) = admit(&registry, limits.max_connections) else {
                        notice.say(format!(
                            "{} connections are being answered; a new one was closed",
                            limits.max_connections
                        ));
                        continue;
                    };
                    let served = serve_connection(
                        stream,
                        router.clone(),
                        Arc::clone(&connection),
                        limits,
                        graceful.watcher(),
                    );
                    let registry = Arc::clone(&registry);
                    tasks.spawn(async move {
                        served.await;
                        lock(&registry).open.remove(&connection.id);
                    });
                }
                Err(e) => {
                    // Out of file descriptors and the like: say so once, wait, go on.
                    notice.say(format!("cannot accept a connection: {e}"));
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            },
            Some(_) = tasks.join_next(), if !tasks.is_empty() => {}
        }
    }
    drop(listener);
    let _ = tokio::time::timeout(limits.grace, graceful.shutdown()).await;
    tasks.shutdown().await;
}

/// A problem of the accept loop, said on stderr once until it changes or goes away.
#[derive(Default)]
struct Notice(Option<String>);

impl Notice {
    fn say(&mut self, text: String) {
        if self.0.as_deref() != Some(text.as_str()) {
            eprintln!("connect-state serve: {text}");
            self.0 = Some(text);
        }
    }

    fn clear(&mut self) {
        self.0 = None;
    }
}

/// The open connections.
#[derive(Default)]
struct Registry {
    next_id: u64,
    open: BTreeMap<u64, Arc<Connection>>,
}

fn lock(registry: &Mutex<Registry>) -> std::sync::MutexGuard<'_, Registry> {
    registry
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Registers a new connection, making room at the cap: the longest-waiting connection whose
/// handler is not running is told to close. `None` when every open connection is being
/// answered.
fn admit(registry: &Mutex<Registry>, max: usize) -> Option<Arc<Connection>> {
    let mut registry = lock(registry);
    let staying = registry.open.values().filter(|c| !c.is_evicted()).count();
    if staying >= max {
        let victim = registry
            .open
            .values()
            .filter(|c| !c.is_evicted())
            .filter_map(|c| c.waiting_since().map(|since| (since, c)))
            .min_by_key(|(since, _)| *since)
            .map(|(_, c)| Arc::clone(c))?;
        victim.evict();
    }
    let id = registry.next_id;
    registry.next_id += 1;
    let connection = Arc::new(Connection::new(id));
    registry.open.insert(id, Arc::clone(&connection));
    Some(connection)
}

/// Where a connection is in its current exchange.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Waiting for a request head (a new or kept-alive connection, or one sending its head).
    Waiting,
    /// The request's body is being read ([`crate::admission`] bounds it).
    ReadingBody,
    /// The handler runs.
    Handling,
    /// The answer is being written.
    Sending,
}

/// One client connection, as the accept loop, the watchdog and the request guards see it.
pub(crate) struct Connection {
    id: u64,
    /// The phase and when it began.
    phase: Mutex<(Phase, Instant)>,
    /// When the client last took bytes of an answer.
    last_write: Mutex<Instant>,
    /// Wakes the watchdog when the phase changes.
    changed: Notify,
    /// Told once to close (to make room under the cap).
    close: Notify,
    evicted: AtomicBool,
}

impl Connection {
    fn new(id: u64) -> Self {
        let now = Instant::now();
        Self {
            id,
            phase: Mutex::new((Phase::Waiting, now)),
            last_write: Mutex::new(now),
            changed: Notify::new(),
            close: Notify::new(),
            evicted: AtomicBool::new(false),
        }
    }

    fn enter(&self, phase: Phase) {
        *self
            .phase
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = (phase, Instant::now());
        self.changed.notify_waiters();
    }

    fn phase(&self) -> (Phase, Instant) {
        *self
            .phase
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn wrote(&self) {
        *self
            .last_write
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Instant::now();
    }

    fn last_write(&self) -> Instant {
        *self
            .last_write
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Since when the connection has waited on its client (`None` while its handler runs):
    /// the start of its phase, or for an answer the client last took bytes of.
    fn waiting_since(&self) -> Option<Instant> {
        match self.phase() {
            (Phase::Handling, _) => None,
            (Phase::Sending, since) => Some(since.max(self.last_write())),
            (Phase::Waiting | Phase::ReadingBody, since) => Some(since),
        }
    }

    /// When the answer being written is given up if the client takes nothing more.
    fn send_deadline(&self, idle: Duration) -> Option<Instant> {
        match self.phase() {
            (Phase::Sending, since) => Some(since.max(self.last_write()) + idle),
            _ => None,
        }
    }

    fn evict(&self) {
        self.evicted.store(true, Ordering::Relaxed);
        self.close.notify_one();
    }

    fn is_evicted(&self) -> bool {
        self.evicted.load(Ordering::Relaxed)
    }

    /// Says the request's body has been read and its handler starts (called by
    /// [`crate::admission`] through the request's extensions).
    pub(crate) fn handling(&self) {
        self.enter(Phase::Handling);
    }
}

/// The connection a request came on, in the request's extensions.
#[derive(Clone)]
pub(crate) struct Current(pub(crate) Arc<Connection>);

/// Serves one connection until it closes, is told to close, or stalls an answer.
async fn serve_connection(
    stream: TcpStream,
    router: Router,
    connection: Arc<Connection>,
    limits: Limits,
    graceful: hyper_util::server::graceful::Watcher,
) {
    let _ = stream.set_nodelay(true);
    let io = TokioIo::new(Counted {
        stream,
        connection: Arc::clone(&connection),
    });
    let service = {
        let connection = Arc::clone(&connection);
        hyper::service::service_fn(move |request: Request<Incoming>| {
            let (router, connection) = (router.clone(), Arc::clone(&connection));
            async move {
                connection.enter(Phase::ReadingBody);
                let mut request = request.map(Body::new);
                request
                    .extensions_mut()
                    .insert(Current(Arc::clone(&connection)));
                let answer = match router.oneshot(request).await {
                    Ok(answer) => answer,
                    Err(never) => match never {},
                };
                connection.enter(Phase::Sending);
                Ok::<_, Infallible>(answer.map(|body| Sent { body, connection }))
            }
        })
    };
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_read)
        .max_header_size(MAX_HEAD_BYTES)
        .max_buf_size(MAX_HEAD_BYTES + 16 * 1024)
        .max_headers(MAX_HEADERS);
    let served = graceful.watch(builder.serve_connection(io, service));
    tokio::select! {
        _ = served => {}
        () = connection.close.notified() => {}
        () = stalled(&connection, limits.idle) => {}
    }
}

/// Completes when an answer has waited [`Limits::idle`] for its client to take more bytes.
async fn stalled(connection: &Connection, idle: Duration) {
    loop {
        let changed = connection.changed.notified();
        tokio::pin!(changed);
        changed.as_mut().enable();
        match connection.send_deadline(idle) {
            None => changed.await,
            Some(deadline) => {
                tokio::select! {
                    () = changed => {}
                    () = tokio::time::sleep_until(deadline) => {
                        if connection.send_deadline(idle).is_some_and(|d| d <= Instant::now()) {
                            return;
                        }
                    }
                }
            }
        }
    }
}

/// An answer's body on its way out: when hyper is done with it (sent, or the connection
/// closed), the connection waits for its next request.
struct Sent {
    body: Body,
    connection: Arc<Connection>,
}

impl Drop for Sent {
    fn drop(&mut self) {
        self.connection.enter(Phase::Waiting);
    }
}

impl http_body::Body for Sent {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// The client's socket, noting when the client takes answer bytes.
struct Counted {
    stream: TcpStream,
    connection: Arc<Connection>,
}

impl AsyncRead for Counted {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for Counted {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let written = Pin::new(&mut self.stream).poll_write(cx, buf);
        if matches!(written, Poll::Ready(Ok(n)) if n > 0) {
            self.connection.wrote();
        }
        written
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let written = Pin::new(&mut self.stream).poll_write_vectored(cx, bufs);
        if matches!(written, Poll::Ready(Ok(n)) if n > 0) {
            self.connection.wrote();
        }
        written
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn at_the_cap_the_longest_waiting_unanswered_connection_makes_room() {
        let registry = Mutex::new(Registry::default());
        let first = admit(&registry, 2).unwrap();
        tokio::time::advance(Duration::from_secs(1)).await;
        let second = admit(&registry, 2).unwrap();
        // The oldest is being answered: the second goes.
        first.handling();
        let third = admit(&registry, 2).unwrap();
        assert!(!first.is_evicted() && second.is_evicted() && !third.is_evicted());
        // Every staying connection answered: a new one is refused.
        third.handling();
        assert!(admit(&registry, 2).is_none());
        // An answer its client stopped reading counts from the last bytes it took.
        third.enter(Phase::Sending);
        tokio::time::advance(Duration::from_secs(5)).await;
        first.enter(Phase::Waiting);
        let _fourth = admit(&registry, 2).unwrap();
        assert!(third.is_evicted() && !first.is_evicted());
    }

    #[tokio::test(start_paused = true)]
    async fn an_answer_not_taken_for_the_idle_time_stalls_the_connection() {
        let connection = Connection::new(0);
        let idle = Duration::from_secs(3);
        connection.enter(Phase::Sending);
        let started = Instant::now();
        tokio::time::advance(Duration::from_secs(2)).await;
        connection.wrote();
        stalled(&connection, idle).await;
        assert_eq!(Instant::now() - started, Duration::from_secs(5));
        // Not while the handler runs.
        connection.handling();
        let waited = tokio::time::timeout(Duration::from_secs(60), stalled(&connection, idle));
        assert!(waited.await.is_err());
    }

    #[test]
    fn the_default_cap_stays_below_the_file_limit() {
        let cap = default_max_connections();
        assert!((16..=DEFAULT_MAX_CONNECTIONS).contains(&cap));
        if let Some(limit) = open_file_limit() {
            assert!(cap as u64 <= limit.saturating_sub(RESERVED_DESCRIPTORS).max(16));
        }
    }
}
