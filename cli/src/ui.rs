//! `/ui/`: a dashboard rendered by the server from the views and the monitor (HTML from
//! `maud`, which escapes every value; a small stylesheet; no script: the page refreshes itself
//! with a `<meta http-equiv="refresh">`). Read-only: it has no forms.
//!
//! Text from the topics shows control and invisible characters (a right-to-left override, a
//! zero-width space) as escapes, as the CLI does. Connector pages are linked as
//! `/ui/connector?name=...`, so every name is reachable (a browser resolves a path segment `.`
//! or `..` to another page). Long tables are paged ([`PAGE_ROWS`] rows, `?page=N`), and the
//! connectors can be filtered by name (`?filter=...`).

use maud::{html, Markup, PreEscaped, DOCTYPE};

use connect_state_ops::history::{masked_config, Entry};
use connect_state_ops::rest;
use engine::status::StatusState;

use crate::history::describe;
use crate::when::show_time;
use connect_state_ops::rest::task_ids;
use connect_state_ops::tail::Published;

/// The stylesheet, served at `/ui/style.css`.
pub const STYLE: &str = include_str!("ui.css");

/// How often the pages refresh themselves, in seconds.
const REFRESH_SECONDS: u32 = 5;

/// The tasks a page lists per connector at most (a commit can claim any count).
const LISTED_TASKS: usize = 200;

/// The rows a page lists of the connectors or of a connector's offsets; the rest are on the
/// next pages.
pub const PAGE_ROWS: usize = 500;

/// Which part of a long table a page shows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Paging {
    /// The page, from 1.
    pub page: usize,
    /// Only connectors whose name contains this (the overview).
    pub filter: Option<String>,
}

impl Paging {
    /// `page=N` and `filter=TEXT` of a query string (others ignored; a bad page is page 1).
    pub fn of_query(query: Option<&str>) -> Self {
        let mut paging = Self {
            page: 1,
            filter: None,
        };
        for (key, value) in form_urlencoded::parse(query.unwrap_or_default().as_bytes()) {
            match key.as_ref() {
                "page" => paging.page = value.parse().unwrap_or(1).max(1),
                "filter" if !value.is_empty() => paging.filter = Some(value.into_owned()),
                _ => {}
            }
        }
        paging
    }

    fn skip(&self) -> usize {
        self.page.saturating_sub(1).saturating_mul(PAGE_ROWS)
    }
}

/// Text from the topics as the page shows it: control and invisible characters escaped.
fn t(text: &str) -> String {
    crate::table::escaped(text).into_owned()
}

/// A trace or other multi-line text: its lines kept, everything else as [`t`].
fn lines(text: &str) -> String {
    crate::common::printable(text)
}

/// The link to a connector's page (`extra`: more of the query, `&page=2`).
fn connector_link(name: &str, extra: &str) -> PreEscaped<String> {
    PreEscaped(format!("/ui/connector?name={}{extra}", urlencode(name).0))
}

/// "Showing 501-1,000 of 20,000 connectors" with the links to the pages around, when `total`
/// does not fit one page. `link(page)` is a page's address.
fn pager(paging: &Paging, total: usize, what: &str, link: &dyn Fn(usize) -> String) -> Markup {
    let first = paging.skip().min(total);
    let last = (first + PAGE_ROWS).min(total);
    let pages = total.div_ceil(PAGE_ROWS).max(1);
    html! {
        @if total > PAGE_ROWS || paging.page > 1 {
            p.pager {
                "Showing " (first + usize::from(last > first)) "-" (last) " of " (total) " " (what) ". "
                @if paging.page > 1 {
                    a rel="prev" href=(link(paging.page - 1)) { "previous" } " "
                }
                @if paging.page < pages {
                    a rel="next" href=(link(paging.page + 1)) { "next" }
                }
            }
        }
    }
}

/// A page of `published`: the body under a header that names the positions everything on the
/// page was read at (per topic, the next offsets of its partitions added up; for the config
/// topic, its one partition's next offset).
fn page(title: &str, published: &Published, body: Markup) -> String {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta http-equiv="refresh" content=(REFRESH_SECONDS);
                title { (t(title)) " · connect-state" }
                link rel="stylesheet" href="/ui/style.css";
            }
            body {
                header {
                    a href="/ui/" { strong { "connect-state" } }
                    span.muted title="the next offset read, per topic (added up over its partitions)" {
                        " read to"
                        @for (i, (kind, partitions)) in published.positions.iter().enumerate() {
                            @if i > 0 { " ·" }
                            " " span.position data-topic=(kind.name()) data-next=(partitions.values().sum::<i64>()) {
                                (kind.name()) " " (partitions.values().sum::<i64>())
                            }
                        }
                    }
                    a.right href="/metrics" { "metrics" }
                }
                main { (body) }
            }
        }
    }
    .into_string()
}

fn state_badge(state: &str) -> Markup {
    html! { span class={ "badge " (state.to_ascii_lowercase()) } { (state) } }
}

/// The overview: connectors (a page of them, `paging`), failing tasks, inconsistent
/// connectors, findings.
pub fn overview(published: &Published, paging: &Paging) -> String {
    let (views, monitor) = (&published.views, &published.monitor);
    let config = &views.config;
    let status = &views.status;
    let all = config.connectors().count();
    let matching: Vec<&str> = config
        .connectors()
        .filter(|c| paging.filter.as_deref().is_none_or(|f| c.contains(f)))
        .collect();
    let names: Vec<&str> = matching
        .iter()
        .copied()
        .skip(paging.skip())
        .take(PAGE_ROWS)
        .collect();
    let filter_query = paging
        .filter
        .as_deref()
        .map_or(String::new(), |f| format!("&filter={}", urlencode(f).0));
    let page_link = |page: usize| format!("/ui/?page={page}{filter_query}");
    let failing: Vec<(&str, i32, &engine::status::Status)> = status
        .all_tasks()
        .filter(|(c, _, s)| s.state == StatusState::Failed && config.contains(c))
        .collect();
    let inconsistent: Vec<&connect_state_ops::doctor::Finding> = monitor
        .report
        .findings
        .iter()
        .filter(|f| f.check == "inconsistent-connector")
        .collect();
    let others: Vec<&connect_state_ops::doctor::Finding> = monitor
        .report
        .findings
        .iter()
        .filter(|f| f.check != "inconsistent-connector")
        .collect();
    let body = html! {
        h1 { (all) " connectors" }
        form.filter method="get" action="/ui/" {
            input type="search" name="filter" placeholder="filter by name" value=[paging.filter.as_deref()];
        }
        @if let Some(f) = &paging.filter {
            p.muted { (matching.len()) " of " (all) " connectors have names containing “" (t(f)) "”." }
        }
        (pager(paging, matching.len(), "connectors", &page_link))
        table id="connectors" {
            thead { tr { th { "connector" } th { "type" } th { "target" } th { "state" } th { "tasks" } th { "workers" } } }
            tbody {
                @for c in &names {
                    @let connector_status = status.connector(c);
                    @let state = connector_status.map_or("UNKNOWN", |s| s.state.as_str());
                    @let committed: Vec<i32> = config.tasks(c).take(LISTED_TASKS).map(|id| id.task).collect();
                    @let running = committed.iter().filter(|&&task| status.task(c, task).is_some_and(|s| s.state == StatusState::Running)).count();
                    @let stale = status.tasks(c).filter(|(task, _)| !committed.contains(task)).count();
                    @let workers: std::collections::BTreeSet<&str> = committed.iter().filter_map(|&task| status.task(c, task).and_then(|s| s.worker_id.as_deref())).collect();
                    tr data-connector=(t(c)) {
                        td { a href=(connector_link(c, "")) { (t(c)) } }
                        td { (config.connector_config(c).map_or("unknown", rest::connector_type)) }
                        td { (config.target_state(c).map_or("-", |s| s.as_str())) }
                        td.state { (state_badge(state)) }
                        td {
                            @if config.is_inconsistent(c) {
                                span.badge.failed { "inconsistent" }
                            } @else if config.task_count(c) <= 0 {
                                "no tasks"
                            } @else {
                                (running) " of " (config.task_count(c)) " running"
                            }
                            @if stale > 0 {
                                span.muted title="statuses of tasks the connector no longer has" {
                                    " (" (stale) " stale task status" @if stale > 1 { "es" } ")"
                                }
                            }
                        }
                        td.muted { (t(&workers.into_iter().collect::<Vec<_>>().join(", "))) }
                    }
                }
            }
        }
        (pager(paging, matching.len(), "connectors", &page_link))
        @if !inconsistent.is_empty() {
            h2 { "Inconsistent connectors" }
            @for f in &inconsistent {
                div.finding.inconsistent data-connector=[f.connector.as_deref().map(t)] {
                    p { (t(&f.summary)) }
                    p.hint { (t(&f.hint)) }
                }
            }
        }
        @if !failing.is_empty() {
            h2 { "Failing tasks" }
            @for (c, task, s) in &failing {
                div.failing {
                    (state_badge("FAILED")) " "
                    a href=(connector_link(c, "")) { (t(c)) } " task " (task)
                    span.muted { " on " (t(s.worker_id.as_deref().unwrap_or("?"))) }
                    @if let Some(trace) = &s.trace {
                        details {
                            summary { (t(trace.lines().next().unwrap_or(""))) }
                            pre { (lines(trace)) }
                        }
                    }
                }
            }
        }
        @if !others.is_empty() {
            h2 { "Findings" }
            @for f in &others {
                div.finding {
                    p { code { (f.check) } " " (t(&f.summary)) }
                    p.hint { (t(&f.hint)) }
                }
            }
        }
        @let cluster = published.recent.of_cluster();
        @if !cluster.is_empty() {
            h2 { "Cluster" }
            (timeline(&cluster))
        }
    };
    page("connectors", published, body)
}

/// One connector: its config (secrets masked), tasks, recent history and offsets (a page of
/// them, `paging`); `None` when the topics know nothing of it.
pub fn connector(published: &Published, c: &str, paging: &Paging) -> Option<String> {
    let (views, monitor) = (&published.views, &published.monitor);
    let config = &views.config;
    let status = &views.status;
    let entries: Vec<Entry> = published.recent.of_connector(c);
    if !config.contains(c) && status.connector(c).is_none() && entries.is_empty() {
        return None;
    }
    let state = status.connector(c).map_or("UNKNOWN", |s| s.state.as_str());
    let finding = monitor
        .report
        .findings
        .iter()
        .find(|f| f.check == "inconsistent-connector" && f.connector.as_deref() == Some(c));
    let (offsets, partitions) =
        engine::offsets::kip875::list_page(&views.offsets, c, paging.skip(), PAGE_ROWS);
    let offsets = serde_json::to_value(offsets).unwrap_or_default();
    let page_link = |page: usize| connector_link(c, &format!("&page={page}")).0;
    let listed = config.tasks(c).take(LISTED_TASKS).count();
    let body = html! {
        h1 { (t(c)) " " (state_badge(state)) }
        @if let Some(f) = finding {
            div.finding.inconsistent data-connector=(t(c)) {
                p { (t(&f.summary)) }
                p.hint { (t(&f.hint)) }
            }
        }
        h2 { "Tasks" }
        table id="tasks" {
            thead { tr { th { "task" } th { "state" } th { "worker" } th { "trace" } } }
            tbody {
                @for task in task_ids(views, c, LISTED_TASKS) {
                    @let s = status.task(c, task);
                    tr {
                        td { (task) }
                        td { (state_badge(s.map_or("UNKNOWN", |s| s.state.as_str()))) }
                        td.muted { (t(s.and_then(|s| s.worker_id.as_deref()).unwrap_or(""))) }
                        td {
                            @if let Some(trace) = s.and_then(|s| s.trace.as_deref()) {
                                details { summary { (t(trace.lines().next().unwrap_or(""))) } pre { (lines(trace)) } }
                            }
                        }
                    }
                }
            }
        }
        @if listed == LISTED_TASKS && config.task_count(c) > LISTED_TASKS as i32 {
            p.muted { "The first " (LISTED_TASKS) " of " (config.task_count(c)) " tasks are listed." }
        }
        h2 { "Recent history" }
        @if entries.is_empty() {
            p.muted { "Nothing recorded." }
        } @else {
            (timeline(&entries))
        }
        h2 { "Config" }
        @match config.connector_config(c) {
            Some(props) => {
                table.config {
                    @if let serde_json::Value::Object(map) = masked_config(props, false) {
                        @for (name, value) in &map {
                            tr { td { code { (t(name)) } } td { (t(&value_text(value))) } }
                        }
                    }
                }
            }
            None => p.muted { "No config (deleted)." }
        }
        h2 { "Offsets" }
        @match offsets["offsets"].as_array() {
            Some(list) if partitions > 0 => {
                (pager(paging, partitions, "source partitions", &page_link))
                table.offsets {
                    thead { tr { th { "partition" } th { "offset" } } }
                    tbody {
                        @for o in list {
                            tr { td { code { (t(&o["partition"].to_string())) } } td { code { (t(&o["offset"].to_string())) } } }
                        }
                    }
                }
                (pager(paging, partitions, "source partitions", &page_link))
            }
            _ => p.muted { "No source offsets." }
        }
    };
    Some(page(c, published, body))
}

fn timeline(entries: &[Entry]) -> Markup {
    html! {
        ol.timeline {
            @for e in entries.iter().rev() {
                li data-kind=(e.kind) {
                    span.time { (e.position.timestamp.map_or_else(|| "-".to_string(), show_time)) }
                    " " code { (e.kind) } " "
                    span { (t(&describe(e))) }
                    span.muted { " " (e.position.topic.name()) ":" (e.position.partition) "@" (e.position.offset) }
                }
            }
        }
    }
}

fn value_text(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A connector name as a path segment.
fn urlencode(name: &str) -> PreEscaped<String> {
    let encoded: String = form_urlencoded::byte_serialize(name.as_bytes())
        .collect::<String>()
        .replace('+', "%20");
    // Percent-encoded text holds no HTML specials.
    PreEscaped(encoded)
}
