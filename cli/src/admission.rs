//! What a request must pass before `serve` runs its handler, and what its answer may hold
//! while the client reads it: axum layers over the router, in the order a request meets
//! them ([`admit`]).
//!
//! 1. `check_request`: exactly one `Host` (RFC 9112 §3.2: 400 otherwise), a `Host` the server
//!    answers for ([`HostRule`]: 421 otherwise, against DNS rebinding), a request target of
//!    at most [`MAX_URI_BYTES`] (414), no transfer coding but `chunked` (501).
//! 2. The body limit (tower-http's [`RequestBodyLimitLayer`]): a declared `Content-Length`
//!    over [`MAX_BODY_BYTES`] is 413 before a byte of the body is read (so no
//!    `100 Continue`), a longer chunked body is 413 when it gets there.
//! 3. `read_body`: the whole body must arrive within [`Admission::body_read`] of the head
//!    (408), and a malformed chunked body is 400; the handler never sees a partial body.
//! 4. `budget`: at most [`Admission::handlers`] handlers at once (more wait their turn),
//!    and the answers waiting for slow clients hold at most [`Admission::unsent`] bytes: an
//!    answer that would go over is 503 (the client may retry), so clients that never read
//!    cannot grow the server's memory.
//!
//! Every refusal is Java's JSON error shape ([`ErrorAnswer`]) and closes the connection when
//! the request's body was not read whole.

use std::net::IpAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, Version};
use axum::middleware::{from_fn_with_state, Next};
use axum::response::Response;
use axum::Router;
use bytes::Bytes;
use http_body::{Frame, SizeHint};
use http_body_util::BodyExt;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tower_http::limit::RequestBodyLimitLayer;

use crate::http1::Current;

/// The longest request target (path and query); a longer one is answered 414.
pub const MAX_URI_BYTES: usize = 8 * 1024;
/// The largest request body read; a larger one is answered 413.
pub const MAX_BODY_BYTES: usize = 1024 * 1024;
/// Answers up to this size are not counted against [`Admission::unsent`]: the connection's
/// own buffer takes them whole at once.
const SMALL_ANSWER_BYTES: u64 = 64 * 1024;
/// The largest piece of an answer handed to the connection at a time, so an answer a client
/// does not read stays counted until it is taken.
const PIECE_BYTES: usize = 64 * 1024;

/// Builds an error answer: status code and message, in Java's JSON error shape with the
/// headers every answer carries.
pub type ErrorAnswer = Arc<dyn Fn(u16, String) -> Response + Send + Sync>;

/// Which `Host` a request may name (against DNS rebinding: a page of another site whose name
/// now resolves to this server still sends its own name).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostRule {
    /// The server listens on a loopback address: only `localhost`, loopback addresses and
    /// the [`HostRule::allowed`] names are answered.
    pub loopback: bool,
    /// The port the server listens on; a loopback `Host` naming another is refused.
    pub port: u16,
    /// Names given by `--allowed-host` (`name` or `name:port`), compared without case. On a
    /// non-loopback address an empty list allows every name.
    pub allowed: Vec<String>,
}

impl HostRule {
    /// Whether a request naming `host` (without brackets for IPv6) and `port` is answered.
    pub fn allows(&self, host: &str, port: Option<u16>) -> bool {
        let named = self.allowed.iter().any(|allowed| {
            let (name, allowed_port) = split_authority(allowed);
            name.eq_ignore_ascii_case(host) && allowed_port.is_none_or(|p| Some(p) == port)
        });
        if named {
            return true;
        }
        if !self.loopback {
            return self.allowed.is_empty();
        }
        let local = host.eq_ignore_ascii_case("localhost")
            || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback());
        local && port.is_none_or(|p| p == self.port)
    }
}

/// `host[:port]` or `[v6]:port` as `(host without brackets, port)`; a port that is not a
/// number is left in the host (so it matches nothing).
fn split_authority(text: &str) -> (&str, Option<u16>) {
    if let Some(rest) = text.strip_prefix('[') {
        return match rest.split_once(']') {
            Some((host, "")) => (host, None),
            Some((host, port)) => match port.strip_prefix(':').map(str::parse) {
                Some(Ok(port)) => (host, Some(port)),
                _ => (text, None),
            },
            None => (text, None),
        };
    }
    match text.rsplit_once(':') {
        Some((host, port)) if !host.contains(':') => match port.parse() {
            Ok(port) => (host, Some(port)),
            Err(_) => (text, None),
        },
        _ => (text, None),
    }
}

/// What the layers share.
pub struct Admission {
    /// Which `Host` is answered.
    pub hosts: HostRule,
    /// From the end of the head to the end of the body.
    pub body_read: Duration,
    /// Handlers running at once.
    pub handlers: Arc<Semaphore>,
    /// Room for unsent answers, in KiB.
    pub unsent: Arc<Semaphore>,
    /// The size of [`Admission::unsent`], in KiB.
    pub unsent_kib: u32,
    /// The error answer.
    pub error: ErrorAnswer,
}

impl Admission {
    /// Room for `handlers` handlers at once and `unsent_bytes` of unsent answers.
    pub fn new(
        hosts: HostRule,
        body_read: Duration,
        handlers: usize,
        unsent_bytes: u64,
        error: ErrorAnswer,
    ) -> Self {
        let unsent_kib = u32::try_from(unsent_bytes / 1024)
            .unwrap_or(u32::MAX)
            .clamp(1, Semaphore::MAX_PERMITS as u32);
        Self {
            hosts,
            body_read,
            handlers: Arc::new(Semaphore::new(handlers.max(1))),
            unsent: Arc::new(Semaphore::new(unsent_kib as usize)),
            unsent_kib,
            error,
        }
    }

    /// An error answer that also closes the connection (its request was not read whole).
    fn refuse(&self, status: u16, message: String) -> Response {
        let mut answer = (self.error)(status, message);
        answer
            .headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
        answer
    }
}

/// `router` behind the admission layers (see the module's documentation).
pub fn admit(router: Router, admission: Arc<Admission>) -> Router {
    router
        .layer(from_fn_with_state(Arc::clone(&admission), budget))
        .layer(from_fn_with_state(Arc::clone(&admission), read_body))
        .layer(RequestBodyLimitLayer::new(MAX_BODY_BYTES))
        .layer(from_fn_with_state(admission, check_request))
}

/// The `Host` rules, the target's length and the transfer codings.
async fn check_request(
    State(admission): State<Arc<Admission>>,
    request: Request,
    next: Next,
) -> Response {
    match refusal(&admission.hosts, &request) {
        Some((status, message)) => admission.refuse(status, message),
        None => next.run(request).await,
    }
}

/// Why `request` is refused before its body is read, if it is.
fn refusal(hosts: &HostRule, request: &Request) -> Option<(u16, String)> {
    let fields: Vec<&HeaderValue> = request.headers().get_all(header::HOST).iter().collect();
    let host = match fields.as_slice() {
        [] if request.version() == Version::HTTP_11 => {
            return Some((400, "the request has no Host header".into()))
        }
        [] => None,
        [one] => Some(*one),
        more => {
            return Some((
                400,
                format!(
                    "the request has {} Host headers; one is allowed",
                    more.len()
                ),
            ))
        }
    };
    // An absolute target's authority is the one that counts (RFC 9112 §3.2.2).
    let authority = match request.uri().authority() {
        Some(authority) => Some(authority.as_str().to_string()),
        None => match host.map(HeaderValue::to_str) {
            Some(Ok(text)) => Some(text.to_string()),
            Some(Err(_)) => return Some((400, "the Host header is not ASCII".into())),
            None => None,
        },
    };
    if let Some(authority) = authority {
        let (name, port) = split_authority(&authority);
        if !hosts.allows(name, port) {
            return Some((
                421,
                format!(
                    "this server does not answer for Host '{authority}': it answers for {}",
                    answered_hosts(hosts)
                ),
            ));
        }
    }
    let target = request
        .uri()
        .path_and_query()
        .map_or(0, |target| target.as_str().len());
    if target > MAX_URI_BYTES {
        return Some((
            414,
            format!("the request target is longer than {MAX_URI_BYTES} bytes"),
        ));
    }
    for field in request.headers().get_all(header::TRANSFER_ENCODING) {
        let codings = field.to_str().unwrap_or("?");
        if let Some(other) = codings
            .split(',')
            .map(str::trim)
            .find(|coding| !coding.eq_ignore_ascii_case("chunked"))
        {
            return Some((
                501,
                format!("the transfer coding '{other}' is not supported; send the body as is or chunked"),
            ));
        }
    }
    None
}

/// The names a [`HostRule`] answers for, in words.
fn answered_hosts(hosts: &HostRule) -> String {
    let mut names: Vec<String> = Vec::new();
    if hosts.loopback {
        names.push(format!(
            "localhost and loopback addresses (port {})",
            hosts.port
        ));
    }
    names.extend(hosts.allowed.iter().map(|name| format!("'{name}'")));
    if names.is_empty() {
        "no name".into()
    } else {
        format!("{} (--allowed-host adds names)", names.join(", "))
    }
}

/// Reads the whole body within [`Admission::body_read`], then runs the handler with it.
async fn read_body(
    State(admission): State<Arc<Admission>>,
    request: Request,
    next: Next,
) -> Response {
    let (parts, body) = request.into_parts();
    let body = match tokio::time::timeout(admission.body_read, body.collect()).await {
        Ok(Ok(collected)) => collected.to_bytes(),
        Ok(Err(e)) if too_long(&e) => {
            return admission.refuse(
                413,
                format!("the request body is longer than {MAX_BODY_BYTES} bytes"),
            )
        }
        Ok(Err(e)) => return admission.refuse(400, format!("malformed request body: {e}")),
        Err(_) => {
            return admission.refuse(
                408,
                format!(
                    "the request body did not arrive within {} s",
                    admission.body_read.as_secs()
                ),
            )
        }
    };
    if let Some(Current(connection)) = parts.extensions.get::<Current>() {
        connection.handling();
    }
    next.run(Request::from_parts(parts, Body::from(body))).await
}

/// Whether a body error is the body limit's.
fn too_long(error: &axum::Error) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(e) = source {
        if e.is::<http_body_util::LengthLimitError>() {
            return true;
        }
        source = e.source();
    }
    false
}

/// Runs the handler under the handler limit, then lets its answer out only within the room
/// for unsent answers.
async fn budget(State(admission): State<Arc<Admission>>, request: Request, next: Next) -> Response {
    let answer = {
        let Ok(_turn) = Arc::clone(&admission.handlers).acquire_owned().await else {
            return (admission.error)(503, "the server is stopping".into());
        };
        next.run(request).await
    };
    let size = http_body::Body::size_hint(answer.body());
    let size = size.exact().or(size.upper()).unwrap_or(u64::MAX);
    if size <= SMALL_ANSWER_BYTES {
        return answer;
    }
    let kib = u32::try_from(size.div_ceil(1024))
        .unwrap_or(u32::MAX)
        .min(admission.unsent_kib);
    match Arc::clone(&admission.unsent).try_acquire_many_owned(kib) {
        Ok(room) => answer.map(|body| {
            Body::new(Paced {
                body,
                piece: Bytes::new(),
                _room: room,
            })
        }),
        Err(_) => (admission.error)(
            503,
            format!(
                "answers waiting for their clients to read them hold the server's {} MiB for \
                 unsent answers; try again when they are taken",
                admission.unsent_kib / 1024
            ),
        ),
    }
}

/// An answer handed to the connection [`PIECE_BYTES`] at a time, holding its room for unsent
/// answers until the last piece is taken.
struct Paced {
    body: Body,
    /// What is left of the frame being handed out.
    piece: Bytes,
    _room: OwnedSemaphorePermit,
}

impl http_body::Body for Paced {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        loop {
            if !self.piece.is_empty() {
                let n = self.piece.len().min(PIECE_BYTES);
                let piece = self.piece.split_to(n);
                return Poll::Ready(Some(Ok(Frame::data(piece))));
            }
            match Pin::new(&mut self.body).poll_frame(cx) {
                Poll::Ready(Some(Ok(frame))) => match frame.into_data() {
                    Ok(data) => self.piece = data,
                    Err(frame) => return Poll::Ready(Some(Ok(frame))),
                },
                other => return other,
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.piece.is_empty() && self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        let mut hint = self.body.size_hint();
        let left = self.piece.len() as u64;
        hint.set_lower(hint.lower() + left);
        if let Some(upper) = hint.upper() {
            hint.set_upper(upper + left);
        }
        hint
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_servers_answer_their_own_names_only() {
        let rule = HostRule {
            loopback: true,
            port: 8083,
            allowed: vec!["connect-state.internal".into(), "ops.example:9000".into()],
        };
        for (authority, allowed) in [
            ("localhost:8083", true),
            ("LOCALHOST", true),
            ("127.0.0.1:8083", true),
            ("127.9.9.9:8083", true),
            ("[::1]:8083", true),
            ("127.0.0.1:9999", false),
            ("evil.example:8083", false),
            ("localhost.evil.example:8083", false),
            ("connect-state.internal:8083", true),
            ("Connect-State.Internal", true),
            ("ops.example:9000", true),
            ("ops.example:8083", false),
            ("", false),
            ("localhost:port", false),
        ] {
            let (host, port) = split_authority(authority);
            assert_eq!(rule.allows(host, port), allowed, "{authority}");
        }
    }

    #[test]
    fn other_servers_answer_any_name_unless_narrowed() {
        let open = HostRule {
            loopback: false,
            port: 8083,
            allowed: vec![],
        };
        assert!(open.allows("connect-state.ops.svc", None));
        let narrowed = HostRule {
            allowed: vec!["connect-state.ops.svc".into()],
            ..open
        };
        assert!(narrowed.allows("connect-state.ops.svc", Some(8083)));
        assert!(!narrowed.allows("evil.example", None));
        assert!(!narrowed.allows("localhost", None));
    }

    #[test]
    fn authorities_split_into_host_and_port() {
        assert_eq!(split_authority("a:1"), ("a", Some(1)));
        assert_eq!(split_authority("a"), ("a", None));
        assert_eq!(split_authority("[::1]:80"), ("::1", Some(80)));
        assert_eq!(split_authority("[::1]"), ("::1", None));
        assert_eq!(split_authority("a:99999"), ("a:99999", None));
    }
}
