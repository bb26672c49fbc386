//! `connect-state serve`: Connect's REST API answered from the topics ([`crate::rest`]), so it
//! answers even when the Connect cluster is slow, rebalancing or down.
//!
//! The topics come from a live cluster (tailed: read to the end every `--refresh-ms`), from
//! dumps (fixed), or from the demo's in-memory cluster (tailed, like a live one). Every answer
//! carries the config-topic offset it reflects in the `X-Connect-State-Config-Offset` header.
//! The only write, `PUT /connectors/{c}/topics/reset`, needs `--allow-writes`. Connections,
//! their cap, timeouts and shutdown are [`crate::http1`]'s (on hyper); what a request must pass
//! before its handler runs (its `Host`, its body, the room for answers) is
//! [`crate::admission`]'s. Every routed answer, the router's own rejections included, is
//! Java's JSON error shape when it is an error, and carries the config offset header.

use std::io::Write;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, put};
use axum::{Json, Router};
use clap::{ArgAction, Args};
use connect_state_ops::doctor::Examination;
use connect_state_ops::load::Borrowed;
use connect_state_ops::monitor::Monitor;
use connect_state_ops::recent::{Recent, DEFAULT_RECENT_ENTRIES};
use connect_state_ops::tail::{Published, Tail, TailTopics};
use connect_state_store::Transport;
use engine::config::ConfigTopic;
use engine::history::History;
use engine::offsets::OffsetTopic;
use engine::status::{StatusTopic, TopicTracking};
use engine::TopicKind;

use crate::admission::{Admission, ErrorAnswer, HostRule};
use crate::common::{CliError, Exit};
use crate::rest::{self, Answer, Views};
use crate::source::{Machines, Sinks, SourceArgs};

/// The response header naming the config-topic offset an answer reflects.
pub const CONFIG_OFFSET_HEADER: &str = "x-connect-state-config-offset";

/// The header of an answer that lists less than the topics hold, saying what was left out
/// (e.g. `10000 of 2147483647 tasks listed`).
pub const TRUNCATED_HEADER: &str = "x-connect-state-truncated";

/// Options of `serve`.
#[derive(Debug, Clone, Args)]
pub struct ServeArgs {
    /// Where the topics come from (or `--demo`).
    #[command(flatten)]
    pub source: SourceArgs,
    /// Serve the demo's in-memory cluster (see `connect-state demo`) instead.
    #[arg(long)]
    pub demo: bool,
    /// The demo's seed.
    #[arg(long, default_value_t = crate::demo::DEFAULT_SEED, requires = "demo")]
    pub seed: u64,
    /// The address to listen on (port 0 picks a free port; the address is printed first).
    #[arg(long, default_value = "127.0.0.1:8083")]
    pub listen: SocketAddr,
    /// Allow the one write the view supports: `PUT /connectors/{c}/topics/reset` (tombstones
    /// through the transport). Read-only without it.
    #[arg(long)]
    pub allow_writes: bool,
    /// The worker setting `topic.tracking.enable`: `false` answers the topic endpoints with 403.
    #[arg(long, default_value_t = true, action = ArgAction::Set, value_name = "BOOL")]
    pub topic_tracking_enable: bool,
    /// The worker setting `topic.tracking.allow.reset`: `false` answers resets with 403.
    #[arg(long, default_value_t = true, action = ArgAction::Set, value_name = "BOOL")]
    pub topic_tracking_allow_reset: bool,
    /// How many recent history entries the dashboard keeps per connector.
    #[arg(long, default_value_t = DEFAULT_RECENT_ENTRIES as u64, value_name = "N",
          value_parser = clap::value_parser!(u64).range(1..=10_000))]
    pub ui_history: u64,
    /// `/metrics` lists per-connector series for at most this many connectors (by name);
    /// the others' are dropped and counted in `connect_state_metrics_dropped_connectors`.
    #[arg(long, default_value_t = crate::metrics::DEFAULT_MAX_CONNECTORS, value_name = "N")]
    pub metrics_max_connectors: usize,
    /// How often a live or demo source is read to its end, in milliseconds.
    #[arg(long, default_value_t = DEFAULT_REFRESH_MS, value_name = "MS")]
    pub refresh_ms: u64,
    /// Requests handled at once; more wait their turn.
    #[arg(long, default_value_t = 64, value_name = "N",
          value_parser = clap::value_parser!(u64).range(1..=100_000))]
    pub max_concurrent_requests: u64,
    /// Connections open at once; at the cap, the connection that has waited longest without
    /// being answered (idle, sending its request, or not reading its answer) is closed to make
    /// room. Default: 1024, or the open-file limit less 64 when that is lower.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub max_connections: Option<u64>,
    /// Seconds a client has to send a whole request head, from connecting or from the end of
    /// the previous answer (so also how long a kept-alive connection may stay idle); a slower
    /// one is disconnected.
    #[arg(long, default_value_t = 10, value_name = "SECONDS",
          value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub header_read_timeout: u64,
    /// Seconds a client has to send a whole request body, from the end of its head; a slower
    /// one gets a 408 and is disconnected.
    #[arg(long, default_value_t = 10, value_name = "SECONDS",
          value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub body_read_timeout: u64,
    /// Seconds an answer may wait for its client to take more of it before the connection is
    /// closed.
    #[arg(long, default_value_t = 30, value_name = "SECONDS",
          value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub idle_timeout: u64,
    /// MiB that answers waiting for their clients to read them may hold in all; an answer that
    /// would go over is a 503 (answers up to 64 KiB are not counted).
    #[arg(long, default_value_t = 256, value_name = "MIB",
          value_parser = clap::value_parser!(u64).range(1..=1_048_576))]
    pub max_unsent_mib: u64,
    /// A `Host` name (or `name:port`) answered besides the defaults (repeatable). On a
    /// loopback address only `localhost`, loopback addresses (with the listen port) and these
    /// are answered, against DNS rebinding; on any other address every name is, unless this
    /// narrows it. Other names get a 421.
    #[arg(long, value_name = "NAME")]
    pub allowed_host: Vec<String>,
    /// Seconds answers under way may take after Ctrl-C or SIGTERM; then every connection
    /// left is dropped.
    #[arg(long, default_value_t = 5, value_name = "SECONDS",
          value_parser = clap::value_parser!(u64).range(0..=3_600))]
    pub shutdown_grace: u64,
}

impl ServeArgs {
    fn metrics_settings(&self) -> crate::metrics::Settings {
        crate::metrics::Settings {
            max_connectors: self.metrics_max_connectors,
        }
    }

    fn limits(&self) -> crate::http1::Limits {
        crate::http1::Limits {
            header_read: Duration::from_secs(self.header_read_timeout),
            idle: Duration::from_secs(self.idle_timeout),
            grace: Duration::from_secs(self.shutdown_grace),
            max_connections: self
                .max_connections
                .map_or_else(crate::http1::default_max_connections, |n| {
                    usize::try_from(n).unwrap_or(usize::MAX)
                }),
        }
    }

    /// The admission rules for a server listening on `listen`.
    fn admission(&self, listen: SocketAddr, error: ErrorAnswer) -> Admission {
        let hosts = HostRule {
            loopback: listen.ip().is_loopback(),
            port: listen.port(),
            allowed: self.allowed_host.clone(),
        };
        Admission::new(
            hosts,
            Duration::from_secs(self.body_read_timeout),
            usize::try_from(self.max_concurrent_requests).unwrap_or(usize::MAX),
            self.max_unsent_mib.saturating_mul(1024 * 1024),
            error,
        )
    }
}

type DynTransport = dyn Transport;

/// How often `serve` reads the tailed topics to their ends unless `--refresh-ms` says.
pub const DEFAULT_REFRESH_MS: u64 = 50;

/// What the handlers share: the latest published state (a watch channel's value: the latest
/// wins, and a reader holds its own), and the tailer that publishes it.
struct App {
    published: tokio::sync::watch::Sender<Arc<Published>>,
    metrics: crate::metrics::Settings,
    tail: Option<tokio::sync::Mutex<Tail>>,
    tracking: TopicTracking,
    allow_writes: bool,
}

impl App {
    /// The state to answer from: everything in it was read at the same positions.
    fn published(&self) -> Arc<Published> {
        Arc::clone(&self.published.borrow())
    }

    fn views(&self) -> Views {
        self.published().views.clone()
    }

    fn publish(&self, published: Published) {
        self.published.send_replace(Arc::new(published));
    }
}

/// Runs the server until Ctrl-C (or SIGTERM), printing `listening on http://ADDR` first.
pub fn run(args: ServeArgs, out: &mut dyn Write) -> Result<Exit, CliError> {
    let dumps = !args.source.from_dump.is_empty();
    let sources = usize::from(args.demo) + usize::from(dumps) + usize::from(args.source.is_live());
    if sources != 1 {
        return Err(CliError::Input(
            "give exactly one source: --demo, --from-dump config=FILE ..., or \
             --bootstrap-servers HOST:PORT --config-topic T ..."
                .into(),
        ));
    }
    // A past state is read once and served as it was: nothing to tail, nothing to write.
    let past = args.source.as_of.is_some();
    if past && (args.demo || args.allow_writes) {
        return Err(CliError::Input(
            "--as-of serves a past state of dumps or a cluster, read-only: it takes neither \
             --demo nor --allow-writes"
                .into(),
        ));
    }
    if dumps && args.allow_writes {
        return Err(CliError::Input(
            "--allow-writes needs a live cluster or --demo: dumps cannot be written".into(),
        ));
    }
    // The demo runs its story on a runtime of its own, so it is built first.
    let demo = match args.demo {
        true => Some(crate::demo::demo_cluster(args.seed)?),
        false => None,
    };
    let runtime = crate::common::runtime()?;
    runtime.block_on(async {
        // The address is taken before the topics are read, so a busy port is told at once.
        let listener = tokio::net::TcpListener::bind(args.listen)
            .await
            .map_err(|e| CliError::Input(format!("cannot listen on {}: {e}", args.listen)))?;
        let recent_entries = usize::try_from(args.ui_history).unwrap_or(usize::MAX);
        let (published, tail) = if let Some(demo) = demo {
            let transport: Arc<DynTransport> =
                Arc::new(connect_state_memory::MemoryTransport::new(demo.cluster));
            let topics = TailTopics {
                config: demo.config_topic,
                status: Some(demo.status_topic),
                offsets: Some(demo.offsets_topic),
            };
            let tail = start_tail(&|| Ok(Arc::clone(&transport)), topics, recent_entries).await?;
            (None, Some(tail))
        } else if dumps || past {
            (Some(static_state(&args.source, recent_entries)?), None)
        } else {
            (None, Some(start_live(&args.source, recent_entries).await?))
        };
        let (published, tail) = match (published, tail) {
            (Some(published), _) => (published, None),
            (None, Some(mut tail)) => (tail.publish(&[]), Some(tail)),
            (None, None) => unreachable!("one source was checked above"),
        };
        let app = Arc::new(App {
            published: tokio::sync::watch::Sender::new(Arc::new(published)),
            metrics: args.metrics_settings(),
            tail: tail.map(tokio::sync::Mutex::new),
            tracking: TopicTracking {
                enable: args.topic_tracking_enable,
                allow_reset: args.topic_tracking_allow_reset,
            },
            allow_writes: args.allow_writes,
        });
        if app.tail.is_some() {
            tokio::spawn(keep_tailing(
                Arc::clone(&app),
                Duration::from_millis(args.refresh_ms.max(10)),
            ));
        }
        let listening = listener.local_addr()?;
        writeln!(out, "listening on http://{listening}")?;
        out.flush()?;
        let error: ErrorAnswer = {
            let app = Arc::clone(&app);
            Arc::new(move |status, message| reply(&app.views(), Answer::error(status, message)))
        };
        let admission = Arc::new(args.admission(listening, error));
        let router = router(Arc::clone(&app), admission);
        crate::http1::serve(listener, router, args.limits(), shutdown_signal()).await;
        Ok(Exit::Success)
    })
}

/// The state of dumps, or of a cluster's topics `--as-of` a past point, read once: its views,
/// monitor and recent history.
fn static_state(source: &SourceArgs, recent_entries: usize) -> Result<Published, CliError> {
    let machines = Machines {
        config: &History::<ConfigTopic>::new,
        status: &History::<StatusTopic>::new,
        offsets: &History::<OffsetTopic>::new,
    };
    let mut recent = Recent::new(recent_entries);
    let (config_part, status_part, offsets_part) = recent.parts_mut();
    let sinks = Sinks {
        config: Borrowed(config_part),
        status: Borrowed(status_part),
        offsets: Borrowed(offsets_part),
    };
    let topics = source.load_into(&TopicKind::ALL, &machines, sinks)?;
    if topics.config.is_none() {
        return Err(CliError::Input(
            "serve needs the config topic: add --from-dump config=FILE (or --config-topic NAME)"
                .into(),
        ));
    }
    let examination = Examination::of(&topics);
    let positions = topics.positions();
    let views = Views {
        config: examination
            .config
            .as_ref()
            .map(|c| c.snapshot.clone())
            .unwrap_or_default(),
        status: examination
            .status
            .as_ref()
            .map(|s| s.snapshot.clone())
            .unwrap_or_default(),
        offsets: examination
            .offsets
            .as_ref()
            .map(|o| o.snapshot.clone())
            .unwrap_or_default(),
    };
    Ok(Published {
        views,
        monitor: Arc::new(Monitor::of(&examination, &positions)),
        recent: recent.view(),
        positions,
    })
}

/// Starts tailing `topics` over transports `connect` makes, with a progress bar per topic
/// while they are first read.
async fn start_tail(
    connect: &dyn Fn() -> Result<Arc<DynTransport>, String>,
    topics: TailTopics,
    recent_entries: usize,
) -> Result<Tail, CliError> {
    let bars = crate::progress::ReadBars::default();
    let progress = |name: &str| Some(bars.bar(name).observer());
    let tail = Tail::start(connect, topics, recent_entries, &progress).await;
    bars.finish_all();
    tail.map_err(|e| CliError::Input(e.to_string()))
}

#[cfg(feature = "kafka")]
async fn start_live(source: &SourceArgs, recent_entries: usize) -> Result<Tail, CliError> {
    let live = &source.live;
    let servers = live.bootstrap_servers.as_deref().unwrap_or_default();
    let config = live.config_topic.clone().ok_or_else(|| {
        CliError::Input("serve needs the config topic: add --config-topic NAME".into())
    })?;
    let settings = live.kafka_settings(servers);
    let connect = || -> Result<Arc<DynTransport>, String> {
        crate::common::kafka_transport(settings.clone())
            .map(|t| Arc::new(t) as Arc<DynTransport>)
            .map_err(|e| e.to_string())
    };
    let topics = TailTopics {
        config,
        status: live.status_topic.clone(),
        offsets: live.offsets_topic.clone(),
    };
    start_tail(&connect, topics, recent_entries).await
}

#[cfg(not(feature = "kafka"))]
async fn start_live(_: &SourceArgs, _: usize) -> Result<Tail, CliError> {
    Err(CliError::Input(
        "this build has no Kafka support (the `kafka` feature)".into(),
    ))
}

/// Reads the tailed source to its end every `period` and publishes the result. A failed read
/// is reported on stderr (once, until it changes or reading works again) and retried; the last
/// good state stays served.
async fn keep_tailing(app: Arc<App>, period: Duration) {
    let mut failing: Option<String> = None;
    loop {
        tokio::time::sleep(period).await;
        let Some(tail) = app.tail.as_ref() else {
            return;
        };
        let mut tail = tail.lock().await;
        match tail.refresh().await {
            Ok(moved) => {
                if !moved.is_empty() {
                    app.publish(tail.publish(&moved));
                }
                if failing.take().is_some() {
                    eprintln!("connect-state serve: tailing again");
                }
            }
            Err(e) => {
                let text = crate::common::redact(&e.to_string());
                if failing.as_deref() != Some(text.as_str()) {
                    eprintln!("connect-state serve: {text} (serving the last state read)");
                    failing = Some(text);
                }
            }
        }
    }
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = terminate => {},
    }
}

/// The routes, Java Connect's paths, behind the admission layers; every answer carries the
/// config offset header and every error is Java's JSON shape.
fn router(app: Arc<App>, admission: Arc<Admission>) -> Router {
    // The GETs answered from the views and the connector's name alone.
    let by_name: [(&str, ByConnector); 4] = [
        ("/connectors/{c}", rest::connector_info),
        ("/connectors/{c}/config", rest::connector_config),
        ("/connectors/{c}/status", rest::connector_status),
        ("/connectors/{c}/tasks", rest::tasks),
    ];
    let routes = by_name
        .into_iter()
        .fold(Router::new(), |routes, (path, answer)| {
            routes.route(path, get(move |s, p| by_connector(s, p, answer)))
        });
    let routes = routes
        .route("/connectors", get(list_connectors))
        .route("/metrics", get(metrics))
        .route(
            "/ui",
            get(|| async { axum::response::Redirect::permanent("/ui/") }),
        )
        .route("/ui/", get(ui_overview))
        .route("/ui/style.css", get(ui_style))
        .route("/ui/connectors/{c}", get(ui_connector))
        .route("/ui/connector", get(ui_connector_named))
        .route("/connectors/{c}/tasks/{t}/status", get(task_status))
        .route("/connectors/{c}/topics", get(topics))
        .route("/connectors/{c}/topics/reset", put(reset_topics))
        .route(
            "/connectors/{c}/offsets",
            get(|s, p| by_connector(s, p, rest::offsets)),
        )
        .fallback(
            |State(app): State<Arc<App>>| async move { reply(&app.views(), rest::no_such_path()) },
        )
        .method_not_allowed_fallback(|State(app): State<Arc<App>>| async move {
            reply(&app.views(), rest::method_not_allowed())
        })
        .with_state(Arc::clone(&app));
    crate::admission::admit(routes, admission)
        .layer(axum::middleware::map_response_with_state(
            Arc::clone(&app),
            json_errors,
        ))
        .layer(axum::middleware::map_response_with_state(
            app,
            with_offset_header,
        ))
}

/// Adds the config offset header to an answer made without it (a redirect, the stylesheet).
async fn with_offset_header(State(app): State<Arc<App>>, mut response: Response) -> Response {
    if !response.headers().contains_key(CONFIG_OFFSET_HEADER) {
        let offset = HeaderValue::from(app.views().config.offset());
        response.headers_mut().insert(CONFIG_OFFSET_HEADER, offset);
    }
    response
}

/// Puts an error the router made itself (an extractor's rejection, such as a path that is not
/// UTF-8 once percent-decoded) in Java's JSON error shape, with the config offset header.
async fn json_errors(State(app): State<Arc<App>>, response: Response) -> Response {
    let json = response
        .headers()
        .get(axum::http::header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
    let status = response.status().as_u16();
    if status < 400 || json {
        return response;
    }
    let text = axum::body::to_bytes(response.into_body(), 64 * 1024)
        .await
        .unwrap_or_default();
    let message = String::from_utf8_lossy(&text).into_owned();
    reply(&app.views(), Answer::error(status, message))
}

/// An answer as an HTTP response, with the config offset header.
fn reply(views: &Views, answer: Answer) -> Response {
    let status = StatusCode::from_u16(answer.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut response = match answer.body {
        Some(body) => (status, Json(body)).into_response(),
        None => status.into_response(),
    };
    response.headers_mut().insert(
        CONFIG_OFFSET_HEADER,
        HeaderValue::from(views.config.offset()),
    );
    if let Some(what) = answer
        .truncated
        .and_then(|t| HeaderValue::from_str(&t).ok())
    {
        response.headers_mut().insert(TRUNCATED_HEADER, what);
    }
    response
}

/// `GET /metrics`: Prometheus metrics of the state served.
async fn metrics(State(app): State<Arc<App>>) -> Response {
    let published = app.published();
    let views = &published.views;
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
    let text = crate::metrics::render(&published, app.metrics, now_ms);
    let mut response = (StatusCode::OK, text).into_response();
    response.headers_mut().insert(
        axum::http::header::CONTENT_TYPE,
        HeaderValue::from_static(crate::metrics::CONTENT_TYPE),
    );
    response.headers_mut().insert(
        CONFIG_OFFSET_HEADER,
        HeaderValue::from(views.config.offset()),
    );
    response
}

/// `GET /ui/`: the dashboard's overview (`?page=N`, `?filter=TEXT`).
async fn ui_overview(State(app): State<Arc<App>>, RawQuery(query): RawQuery) -> Response {
    let published = app.published();
    let paging = crate::ui::Paging::of_query(query.as_deref());
    html(&published.views, crate::ui::overview(&published, &paging))
}

/// `GET /ui/connectors/{c}`: one connector's page (`?page=N` of its offsets).
async fn ui_connector(
    State(app): State<Arc<App>>,
    Path(c): Path<String>,
    RawQuery(query): RawQuery,
) -> Response {
    connector_page(&app, &c, query.as_deref())
}

/// `GET /ui/connector?name=C`: the same page, for every name (the dashboard links this way:
/// a browser resolves a path segment `.` or `..`).
async fn ui_connector_named(State(app): State<Arc<App>>, RawQuery(query): RawQuery) -> Response {
    let name = form_urlencoded::parse(query.as_deref().unwrap_or_default().as_bytes())
        .find(|(key, _)| key == "name")
        .map(|(_, value)| value.into_owned());
    match name {
        Some(c) => connector_page(&app, &c, query.as_deref()),
        None => reply(
            &app.views(),
            Answer::error(400, "give the connector as ?name=NAME"),
        ),
    }
}

fn connector_page(app: &App, c: &str, query: Option<&str>) -> Response {
    let published = app.published();
    let views = &published.views;
    let paging = crate::ui::Paging::of_query(query);
    match crate::ui::connector(&published, c, &paging) {
        Some(page) => html(views, page),
        None => reply(
            views,
            Answer::error(404, format!("Connector {c} not found")),
        ),
    }
}

async fn ui_style() -> Response {
    let mut response = (StatusCode::OK, crate::ui::STYLE).into_response();
    response.headers_mut().insert(
        axum::http::header::CONTENT_TYPE,
        HeaderValue::from_static("text/css; charset=utf-8"),
    );
    response
}

/// A page, with the config offset header.
fn html(views: &Views, page: String) -> Response {
    let mut response = axum::response::Html(page).into_response();
    response.headers_mut().insert(
        CONFIG_OFFSET_HEADER,
        HeaderValue::from(views.config.offset()),
    );
    response
}

async fn list_connectors(State(app): State<Arc<App>>, RawQuery(query): RawQuery) -> Response {
    let views = app.views();
    let expand = rest::expand_values(query.as_deref());
    let answer = rest::connectors(&views, expand.as_deref());
    reply(&views, answer)
}

/// A REST answer computed from the views and a connector's name.
type ByConnector = fn(&Views, &str) -> Answer;

async fn by_connector(
    State(app): State<Arc<App>>,
    Path(c): Path<String>,
    answer: ByConnector,
) -> Response {
    let views = app.views();
    let answer = answer(&views, &c);
    reply(&views, answer)
}

async fn task_status(
    State(app): State<Arc<App>>,
    Path((c, t)): Path<(String, String)>,
) -> Response {
    let views = app.views();
    let answer = rest::task_status(&views, &c, &t);
    reply(&views, answer)
}

async fn topics(State(app): State<Arc<App>>, Path(c): Path<String>) -> Response {
    let views = app.views();
    let answer = rest::active_topics(&views, &c, &app.tracking);
    reply(&views, answer)
}

/// `PUT /connectors/{c}/topics/reset`: Java's 403 checks, then (with `--allow-writes`) the
/// tombstones through the status store, read back before answering 202.
async fn reset_topics(State(app): State<Arc<App>>, Path(c): Path<String>) -> Response {
    let views = app.views();
    // Java's refusals first, from the state served.
    if let Err(e) = views.status.reset_active_topics(&c, &app.tracking) {
        return reply(&views, Answer::tracking_refused(e));
    }
    if !app.allow_writes {
        return reply(
            &views,
            Answer::error(
                403,
                "connect-state serve is read-only; start it with --allow-writes to reset topics",
            ),
        );
    }
    let Some(tail) = app.tail.as_ref() else {
        return reply(&views, Answer::error(500, "no writable source"));
    };
    let mut tail = tail.lock().await;
    // Computed again from the tailer's own state, which may be ahead of the published one.
    let written = match tail.reset_active_topics(&c, &app.tracking).await {
        Ok(written) => written,
        Err(e) => return reply(&views, Answer::tracking_refused(e)),
    };
    let published = tail.publish(&[TopicKind::Status]);
    let views = published.views.clone();
    app.publish(published);
    match written {
        None => reply(
            &views,
            Answer::error(500, "the status topic is not served (give --status-topic)"),
        ),
        Some(Ok(())) => reply(
            &views,
            Answer {
                status: 202,
                body: None,
                truncated: None,
            },
        ),
        Some(Err(e)) => reply(&views, Answer::error(500, e.to_string())),
    }
}
