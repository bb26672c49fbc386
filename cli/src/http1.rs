//! The HTTP/1.1 connections of `serve`: reading requests with bounded time and size, handing
//! them to the [`Router`], writing the answers, and a bounded graceful shutdown.
//!
//! Why not hyper's server: hyper answers a request it cannot parse (400, 414, 431) itself, with
//! an empty body and no way to change it, and Connect's clients are owed Java's JSON error
//! shape and the config-offset header on every answer. Parsing is [`httparse`]'s (hyper's own
//! parser); the routing and the answers are axum's.
//!
//! Every wait is bounded: a request head must arrive within [`Limits::header_read`] of the
//! connection opening (or of its first byte on a kept-alive connection), an idle kept-alive
//! connection is closed after [`Limits::idle`], a body and an answer must move within
//! [`Limits::idle`] too. On shutdown no new request is read; answers under way get
//! [`Limits::grace`] to finish, then every connection left is dropped.

use std::future::Future;
use std::io;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use axum::body::Body;
use axum::http::{header, HeaderMap, HeaderName, HeaderValue, Method, Request, Version};
use axum::response::Response;
use axum::Router;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinSet;
use tokio::time::{timeout_at, Instant};
use tower::ServiceExt;

/// The largest request head (request line and headers) read; a larger one is answered 431.
pub const MAX_HEAD_BYTES: usize = 64 * 1024;
/// The longest request target; a longer one is answered 414.
pub const MAX_URI_BYTES: usize = 8 * 1024;
/// The most header fields a request may have; more are answered 431.
pub const MAX_HEADERS: usize = 100;
/// The largest request body read; a larger one is answered 413.
pub const MAX_BODY_BYTES: u64 = 1024 * 1024;

/// How long the server waits for clients.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// From a connection's opening (or the first byte of a later request) to the end of the
    /// request head; a client slower than that gets a 408 and the connection is closed.
    pub header_read: Duration,
    /// How long a kept-alive connection may wait for its next request, and a body or an answer
    /// for the next bytes to move.
    pub idle: Duration,
    /// After the shutdown signal, how long answers under way may take before every remaining
    /// connection is dropped.
    pub grace: Duration,
}

/// Builds the answer to a request the router never saw (malformed, too large, too slow):
/// status code and message, in the same shape and with the same headers as the router's.
pub type ErrorAnswer = Arc<dyn Fn(u16, String) -> Response + Send + Sync>;

/// Accepts connections on `listener` and serves each with `router` until `shutdown`
/// completes, then shuts down within [`Limits::grace`].
pub async fn serve(
    listener: TcpListener,
    router: Router,
    error: ErrorAnswer,
    limits: Limits,
    shutdown: impl Future<Output = ()>,
) {
    let (stop, stopping) = watch::channel(false);
    let mut connections = JoinSet::new();
    let mut accept_error: Option<String> = None;
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    accept_error = None;
                    let connection = Connection {
                        stream,
                        buffer: Vec::new(),
                        router: router.clone(),
                        error: Arc::clone(&error),
                        limits,
                        stopping: stopping.clone(),
                    };
                    connections.spawn(connection.run());
                }
                Err(e) => {
                    // Out of file descriptors and the like: say so once, wait, go on.
                    let text = e.to_string();
                    if accept_error.as_deref() != Some(text.as_str()) {
                        eprintln!("connect-state serve: cannot accept a connection: {text}");
                        accept_error = Some(text);
                    }
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            },
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
    drop(listener);
    let _ = stop.send(true);
    let deadline = Instant::now() + limits.grace;
    while let Ok(Some(_)) = timeout_at(deadline, connections.join_next()).await {}
    connections.shutdown().await;
}

/// One client connection.
struct Connection {
    stream: TcpStream,
    /// Bytes read and not yet used (the start of the next request, when pipelined).
    buffer: Vec<u8>,
    router: Router,
    error: ErrorAnswer,
    limits: Limits,
    stopping: watch::Receiver<bool>,
}

/// A request head read whole.
struct Head {
    request: Request<()>,
    /// Bytes of the head in the buffer.
    length: usize,
    body: BodyFraming,
    keep_alive: bool,
}

/// How the body after a head is delimited.
enum BodyFraming {
    /// `Content-Length: n` (0 without one).
    Length(u64),
    /// A body this server does not read (chunked, or waiting for `100 Continue`): the
    /// request is answered without it and the connection closed.
    Unread,
}

/// Why no request was read.
enum NoRequest {
    /// The client closed, went idle, or the server is stopping: close without an answer.
    Close,
    /// Answer with this status and message, then close.
    Refuse(u16, String),
}

impl Connection {
    async fn run(mut self) {
        let _ = self.stream.set_nodelay(true);
        let mut first = true;
        loop {
            let head = match self.read_head(first).await {
                Ok(head) => head,
                Err(NoRequest::Close) => return,
                Err(NoRequest::Refuse(status, message)) => {
                    let answer = (self.error)(status, message);
                    let _ = self.write(answer, false, false).await;
                    return;
                }
            };
            first = false;
            let Head {
                request,
                length,
                body,
                keep_alive,
            } = head;
            self.buffer.drain(..length);
            let (body, keep_alive) = match body {
                BodyFraming::Length(n) if n > MAX_BODY_BYTES => {
                    let message = format!("the request body is longer than {MAX_BODY_BYTES} bytes");
                    let answer = (self.error)(413, message);
                    let _ = self.write(answer, false, false).await;
                    return;
                }
                BodyFraming::Length(n) => match self.read_body(n as usize).await {
                    Some(body) => (body, keep_alive),
                    None => return,
                },
                BodyFraming::Unread => (Vec::new(), false),
            };
            let head_only = request.method() == Method::HEAD;
            let (parts, ()) = request.into_parts();
            let request = Request::from_parts(parts, Body::from(body));
            let answer = match self.router.clone().oneshot(request).await {
                Ok(answer) => answer,
                Err(never) => match never {},
            };
            let keep_alive = keep_alive && !*self.stopping.borrow();
            if self.write(answer, head_only, keep_alive).await.is_err() || !keep_alive {
                return;
            }
        }
    }

    /// Reads the next request head. The first request of a connection must arrive whole
    /// within `header_read`; a later one may wait `idle` for its first byte, then has
    /// `header_read` for the rest.
    async fn read_head(&mut self, first: bool) -> Result<Head, NoRequest> {
        let mut deadline = Instant::now()
            + if first {
                self.limits.header_read
            } else {
                self.limits.idle
            };
        let mut started = first;
        loop {
            if !self.buffer.is_empty() && !started {
                started = true;
                deadline = Instant::now() + self.limits.header_read;
            }
            if let Some(head) = parse_head(&self.buffer)? {
                return Ok(head);
            }
            if *self.stopping.borrow() {
                return Err(NoRequest::Close);
            }
            let mut stopping = self.stopping.clone();
            let read = tokio::select! {
                read = timeout_at(deadline, read_some(&mut self.stream, &mut self.buffer)) => read,
                _ = stopping.changed() => return Err(NoRequest::Close),
            };
            match read {
                Ok(Ok(0)) | Ok(Err(_)) => return Err(NoRequest::Close),
                Ok(Ok(_)) => {}
                Err(_) if self.buffer.is_empty() => return Err(NoRequest::Close),
                Err(_) => {
                    return Err(NoRequest::Refuse(
                        408,
                        format!(
                            "the request head did not arrive within {} ms",
                            self.limits.header_read.as_millis()
                        ),
                    ))
                }
            }
        }
    }

    /// Reads a body of `length` bytes (the buffer's first, then the stream's), each read
    /// within `idle`; `None` if the client stops sending.
    async fn read_body(&mut self, length: usize) -> Option<Vec<u8>> {
        while self.buffer.len() < length {
            let deadline = Instant::now() + self.limits.idle;
            match timeout_at(deadline, read_some(&mut self.stream, &mut self.buffer)).await {
                Ok(Ok(n)) if n > 0 => {}
                _ => return None,
            }
        }
        Some(self.buffer.drain(..length).collect())
    }

    /// Writes `answer` (its head only for a HEAD request), with `Connection: close` unless
    /// the connection is kept alive; the whole answer must be taken within `idle`.
    async fn write(
        &mut self,
        answer: Response,
        head_only: bool,
        keep_alive: bool,
    ) -> io::Result<()> {
        let (parts, body) = answer.into_parts();
        let body = axum::body::to_bytes(body, usize::MAX)
            .await
            .map_err(io::Error::other)?;
        let mut out = Vec::with_capacity(256 + body.len());
        let reason = parts.status.canonical_reason().unwrap_or("");
        out.extend_from_slice(
            format!("HTTP/1.1 {} {reason}\r\n", parts.status.as_u16()).as_bytes(),
        );
        let length = match parts.headers.get(header::CONTENT_LENGTH) {
            Some(declared) if head_only => declared.as_bytes().to_vec(),
            _ => body.len().to_string().into_bytes(),
        };
        write_header(&mut out, header::CONTENT_LENGTH.as_str(), &length);
        write_header(
            &mut out,
            header::DATE.as_str(),
            httpdate::fmt_http_date(SystemTime::now()).as_bytes(),
        );
        let connection: &[u8] = if keep_alive { b"keep-alive" } else { b"close" };
        write_header(&mut out, header::CONNECTION.as_str(), connection);
        for (name, value) in &parts.headers {
            if ![
                header::CONTENT_LENGTH,
                header::CONNECTION,
                header::DATE,
                header::TRANSFER_ENCODING,
            ]
            .contains(name)
            {
                write_header(&mut out, name.as_str(), value.as_bytes());
            }
        }
        out.extend_from_slice(b"\r\n");
        if !head_only {
            out.extend_from_slice(&body);
        }
        let deadline = Instant::now() + self.limits.idle;
        match timeout_at(deadline, self.stream.write_all(&out)).await {
            Ok(written) => written,
            Err(_) => Err(io::ErrorKind::TimedOut.into()),
        }
    }
}

fn write_header(out: &mut Vec<u8>, name: &str, value: &[u8]) {
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b": ");
    out.extend_from_slice(value);
    out.extend_from_slice(b"\r\n");
}

/// Reads what the stream has (at most 16 KiB) onto the end of `buffer`.
async fn read_some(stream: &mut TcpStream, buffer: &mut Vec<u8>) -> io::Result<usize> {
    let mut chunk = [0u8; 16 * 1024];
    let n = stream.read(&mut chunk).await?;
    buffer.extend_from_slice(&chunk[..n]);
    Ok(n)
}

/// The request head at the start of `buffer`: `Ok(None)` while incomplete, a refusal when
/// it is malformed or over a limit.
fn parse_head(buffer: &[u8]) -> Result<Option<Head>, NoRequest> {
    let refuse = |status: u16, message: &str| NoRequest::Refuse(status, message.to_string());
    // The request line alone can tell the target is too long before the head is complete.
    let line_end = buffer.iter().position(|&b| b == b'\n');
    if line_end.map_or(buffer.len(), |end| end) > MAX_URI_BYTES + 64 {
        return Err(refuse(414, "the request target is too long"));
    }
    let mut fields = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut parsed = httparse::Request::new(&mut fields);
    let length = match parsed.parse(buffer) {
        Ok(httparse::Status::Complete(length)) => length,
        Ok(httparse::Status::Partial) if buffer.len() > MAX_HEAD_BYTES => {
            return Err(refuse(431, "the request head is too large"))
        }
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(httparse::Error::TooManyHeaders) => {
            return Err(refuse(431, "the request has too many header fields"))
        }
        Err(e) => return Err(NoRequest::Refuse(400, format!("malformed request: {e}"))),
    };
    if length > MAX_HEAD_BYTES {
        return Err(refuse(431, "the request head is too large"));
    }
    let (Some(method), Some(target), Some(minor)) = (parsed.method, parsed.path, parsed.version)
    else {
        return Err(refuse(400, "malformed request"));
    };
    if target.len() > MAX_URI_BYTES {
        return Err(refuse(414, "the request target is too long"));
    }
    let method = Method::from_bytes(method.as_bytes())
        .map_err(|_| refuse(400, "malformed request: invalid method"))?;
    let version = if minor == 0 {
        Version::HTTP_10
    } else {
        Version::HTTP_11
    };
    let mut headers = HeaderMap::with_capacity(parsed.headers.len());
    for field in parsed.headers.iter() {
        let name = HeaderName::from_bytes(field.name.as_bytes())
            .map_err(|_| refuse(400, "malformed request: invalid header name"))?;
        let value = HeaderValue::from_bytes(field.value)
            .map_err(|_| refuse(400, "malformed request: invalid header value"))?;
        headers.append(name, value);
    }
    let body = body_framing(&headers)?;
    let keep_alive = keep_alive(version, &headers);
    let mut request = Request::builder()
        .method(method)
        .uri(target)
        .version(version)
        .body(())
        .map_err(|_| refuse(400, "malformed request: invalid request target"))?;
    *request.headers_mut() = headers;
    Ok(Some(Head {
        request,
        length,
        body,
        keep_alive,
    }))
}

/// The body's framing from `Content-Length`, `Transfer-Encoding` and `Expect`.
fn body_framing(headers: &HeaderMap) -> Result<BodyFraming, NoRequest> {
    if headers.contains_key(header::TRANSFER_ENCODING) || headers.contains_key(header::EXPECT) {
        return Ok(BodyFraming::Unread);
    }
    let mut length: Option<u64> = None;
    for value in headers.get_all(header::CONTENT_LENGTH) {
        let n = value
            .to_str()
            .ok()
            .filter(|text| !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|text| text.parse::<u64>().ok());
        match (n, length) {
            (Some(n), None) => length = Some(n),
            (Some(n), Some(seen)) if n == seen => {}
            _ => {
                return Err(NoRequest::Refuse(
                    400,
                    "malformed request: invalid Content-Length".into(),
                ))
            }
        }
    }
    Ok(BodyFraming::Length(length.unwrap_or(0)))
}

/// Whether the connection stays open after the answer: HTTP/1.1 unless `Connection: close`,
/// HTTP/1.0 only with `Connection: keep-alive`.
fn keep_alive(version: Version, headers: &HeaderMap) -> bool {
    let has = |token: &str| {
        headers.get_all(header::CONNECTION).iter().any(|value| {
            value
                .to_str()
                .is_ok_and(|v| v.split(',').any(|t| t.trim().eq_ignore_ascii_case(token)))
        })
    };
    match version {
        Version::HTTP_10 => has("keep-alive"),
        _ => !has("close"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(bytes: &[u8]) -> (u16, String) {
        match parse_head(bytes) {
            Err(NoRequest::Refuse(status, message)) => (status, message),
            Err(NoRequest::Close) => panic!("closed"),
            Ok(Some(_)) => panic!("parsed"),
            Ok(None) => panic!("incomplete"),
        }
    }

    #[test]
    fn a_complete_head_is_parsed_with_its_framing() {
        let bytes = b"PUT /connectors/a/topics/reset HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabcGET";
        let head = parse_head(bytes).ok().flatten().unwrap();
        assert_eq!(head.request.method(), Method::PUT);
        assert_eq!(head.request.uri().path(), "/connectors/a/topics/reset");
        assert_eq!(&bytes[head.length..], b"abcGET");
        assert!(matches!(head.body, BodyFraming::Length(3)));
        assert!(head.keep_alive);
        assert!(parse_head(b"GET / HTTP/1.1\r\nHost: x\r\n")
            .ok()
            .unwrap()
            .is_none());
    }

    #[test]
    fn connection_rules_follow_the_version() {
        let head = |text: &str| parse_head(text.as_bytes()).ok().flatten().unwrap();
        assert!(!head("GET / HTTP/1.1\r\nConnection: close\r\n\r\n").keep_alive);
        assert!(!head("GET / HTTP/1.0\r\n\r\n").keep_alive);
        assert!(head("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n").keep_alive);
        let chunked = head("PUT / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n");
        assert!(matches!(chunked.body, BodyFraming::Unread));
    }

    #[test]
    fn malformed_and_oversized_heads_are_refused_with_their_status() {
        assert_eq!(refusal(b"\x01\x02 garbage\r\n\r\n").0, 400);
        assert_eq!(
            refusal(b"GET / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n").0,
            400
        );
        assert_eq!(
            refusal(b"GET / HTTP/1.1\r\nContent-Length: -1\r\n\r\n").0,
            400
        );
        let long_target = format!("GET /{} HTTP/1.1\r\n\r\n", "a".repeat(MAX_URI_BYTES));
        assert_eq!(refusal(long_target.as_bytes()).0, 414);
        // Still without its line end.
        let long_line = format!("GET /{}", "a".repeat(MAX_URI_BYTES + 100));
        assert_eq!(refusal(long_line.as_bytes()).0, 414);
        let many: String = (0..=MAX_HEADERS).map(|i| format!("X-{i}: v\r\n")).collect();
        let many = format!("GET / HTTP/1.1\r\n{many}\r\n");
        assert_eq!(refusal(many.as_bytes()).0, 431);
        let huge = format!("GET / HTTP/1.1\r\nX: {}", "v".repeat(MAX_HEAD_BYTES));
        assert_eq!(refusal(huge.as_bytes()).0, 431);
    }
}
