//! `/ui/`: a dashboard rendered by the server from the views and the monitor (HTML from
//! `maud`, which escapes every value; a small stylesheet; no script: the page refreshes itself
//! with a `<meta http-equiv="refresh">`). Read-only: it has no forms.

use maud::{html, Markup, PreEscaped, DOCTYPE};

use connect_state_ops::history::{masked_config, Entry};
use connect_state_ops::rest::{self, Views};
use engine::status::StatusState;

use crate::history::describe;
use crate::monitor::{task_ids, Monitor};
use crate::when::show_time;

/// The stylesheet, served at `/ui/style.css`.
pub const STYLE: &str = include_str!("ui.css");

/// How often the pages refresh themselves, in seconds.
const REFRESH_SECONDS: u32 = 5;

/// The tasks a page lists per connector at most (a commit can claim any count).
const LISTED_TASKS: usize = 200;

fn page(title: &str, views: &Views, body: Markup) -> String {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta http-equiv="refresh" content=(REFRESH_SECONDS);
                title { (title) " · connect-state" }
                link rel="stylesheet" href="/ui/style.css";
            }
            body {
                header {
                    a href="/ui/" { strong { "connect-state" } }
                    span.muted { " config offset " (views.config.offset()) }
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

/// The overview: connectors, failing tasks, inconsistent connectors, findings.
pub fn overview(views: &Views, monitor: &Monitor) -> String {
    let config = &views.config;
    let status = &views.status;
    let names: Vec<&str> = config.connectors().collect();
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
        h1 { (names.len()) " connectors" }
        table id="connectors" {
            thead { tr { th { "connector" } th { "type" } th { "target" } th { "state" } th { "tasks" } th { "workers" } } }
            tbody {
                @for c in &names {
                    @let connector_status = status.connector(c);
                    @let state = connector_status.map_or("UNKNOWN", |s| s.state.as_str());
                    @let tasks: Vec<(i32, Option<&engine::status::Status>)> = task_ids(views, c, LISTED_TASKS)
                        .into_iter()
                        .map(|task| (task, status.task(c, task)))
                        .collect();
                    @let running = tasks.iter().filter(|(_, s)| s.is_some_and(|s| s.state == StatusState::Running)).count();
                    @let workers: std::collections::BTreeSet<&str> = tasks.iter().filter_map(|(_, s)| s.and_then(|s| s.worker_id.as_deref())).collect();
                    tr data-connector=(c) {
                        td { a href={ "/ui/connectors/" (urlencode(c)) } { (c) } }
                        td { (config.connector_config(c).map_or("unknown", rest::connector_type)) }
                        td { (config.target_state(c).map_or("-", |s| s.as_str())) }
                        td.state { (state_badge(state)) }
                        td {
                            @if config.is_inconsistent(c) {
                                span.badge.failed { "inconsistent" }
                            } @else {
                                (running) " of " (config.task_count(c).max(0)) " running"
                            }
                        }
                        td.muted { (workers.into_iter().collect::<Vec<_>>().join(", ")) }
                    }
                }
            }
        }
        @if !inconsistent.is_empty() {
            h2 { "Inconsistent connectors" }
            @for f in &inconsistent {
                div.finding.inconsistent data-connector=[f.connector.as_deref()] {
                    p { (f.summary) }
                    p.hint { (f.hint) }
                }
            }
        }
        @if !failing.is_empty() {
            h2 { "Failing tasks" }
            @for (c, task, s) in &failing {
                div.failing {
                    (state_badge("FAILED")) " "
                    a href={ "/ui/connectors/" (urlencode(c)) } { (c) } " task " (task)
                    span.muted { " on " (s.worker_id.as_deref().unwrap_or("?")) }
                    @if let Some(trace) = &s.trace {
                        details {
                            summary { (trace.lines().next().unwrap_or("")) }
                            pre { (trace) }
                        }
                    }
                }
            }
        }
        @if !others.is_empty() {
            h2 { "Findings" }
            @for f in &others {
                div.finding {
                    p { code { (f.check) } " " (f.summary) }
                    p.hint { (f.hint) }
                }
            }
        }
        @if let Some(recent) = &monitor.recent {
            @let cluster = connect_state_ops::watch::lock(recent).of_cluster();
            @if !cluster.is_empty() {
                h2 { "Cluster" }
                (timeline(&cluster))
            }
        }
    };
    page("connectors", views, body)
}

/// One connector: its config (secrets masked), tasks, recent history and offsets; `None`
/// when the topics know nothing of it.
pub fn connector(views: &Views, monitor: &Monitor, c: &str) -> Option<String> {
    let config = &views.config;
    let status = &views.status;
    let entries: Vec<Entry> = monitor
        .recent
        .as_ref()
        .map(|recent| connect_state_ops::watch::lock(recent).of_connector(c))
        .unwrap_or_default();
    if !config.contains(c) && status.connector(c).is_none() && entries.is_empty() {
        return None;
    }
    let state = status.connector(c).map_or("UNKNOWN", |s| s.state.as_str());
    let finding = monitor
        .report
        .findings
        .iter()
        .find(|f| f.check == "inconsistent-connector" && f.connector.as_deref() == Some(c));
    let offsets = rest::offsets(views, c).body;
    let listed = config.tasks(c).take(LISTED_TASKS).count();
    let body = html! {
        h1 { (c) " " (state_badge(state)) }
        @if let Some(f) = finding {
            div.finding.inconsistent data-connector=(c) {
                p { (f.summary) }
                p.hint { (f.hint) }
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
                        td.muted { (s.and_then(|s| s.worker_id.as_deref()).unwrap_or("")) }
                        td {
                            @if let Some(trace) = s.and_then(|s| s.trace.as_deref()) {
                                details { summary { (trace.lines().next().unwrap_or("")) } pre { (trace) } }
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
                            tr { td { code { (name) } } td { (value_text(value)) } }
                        }
                    }
                }
            }
            None => p.muted { "No config (deleted)." }
        }
        h2 { "Offsets" }
        @match offsets.as_ref().and_then(|o| o["offsets"].as_array()) {
            Some(list) if !list.is_empty() => {
                table.offsets {
                    thead { tr { th { "partition" } th { "offset" } } }
                    tbody {
                        @for o in list {
                            tr { td { code { (o["partition"]) } } td { code { (o["offset"]) } } }
                        }
                    }
                }
            }
            _ => p.muted { "No source offsets." }
        }
    };
    Some(page(c, views, body))
}

fn timeline(entries: &[Entry]) -> Markup {
    html! {
        ol.timeline {
            @for e in entries.iter().rev() {
                li data-kind=(e.kind) {
                    span.time { (e.position.timestamp.map_or_else(|| "-".to_string(), show_time)) }
                    " " code { (e.kind) } " "
                    span { (describe(e)) }
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
