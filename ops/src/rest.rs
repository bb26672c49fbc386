//! The answers of Connect's REST API computed from the topics: pure functions from a [`Views`]
//! to a status code and a JSON body, with Java Connect's paths, codes, shapes and messages.
//! `serve` puts them behind HTTP; tests call them directly too.

use engine::config::{ConfigSnapshot, Properties, TaskId, MAX_LISTED_TASKS};
use engine::offsets::{kip875, OffsetSnapshot};
use engine::status::{Status, StatusSnapshot, TopicTracking, TopicTrackingError};
use serde_json::{json, Map, Value};

/// What the REST view answers from: the three topics as last read.
#[derive(Debug, Clone, Default)]
pub struct Views {
    /// The config topic.
    pub config: ConfigSnapshot,
    /// The status topic (its caches answer the KIP-558 endpoints too).
    pub status: StatusSnapshot,
    /// The offsets topic.
    pub offsets: OffsetSnapshot,
}

/// An answer: the HTTP status code and the JSON body (`None`: no body, e.g. 202).
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// HTTP status code.
    pub status: u16,
    /// The body.
    pub body: Option<Value>,
    /// Set when the body lists fewer tasks than the topics claim (at most [`MAX_TASKS_PER_ANSWER`] per answer): what
    /// was left out, for the `X-Connect-State-Truncated` header.
    pub truncated: Option<String>,
}

/// The most task entries one answer lists over all its connectors (each connector lists at
/// most [`MAX_LISTED_TASKS`]). A commit record claims any task count, a forged or corrupt
/// `{"tasks":2147483647}` included, and Java lists every id below it; the answer stays bounded.
pub const MAX_TASKS_PER_ANSWER: u64 = 100_000;

/// How many task entries an answer may still list, and how many it left out.
#[derive(Debug)]
struct TaskBudget {
    left: u64,
    listed: u64,
    claimed: u64,
}

impl TaskBudget {
    fn new() -> Self {
        Self {
            left: MAX_TASKS_PER_ANSWER,
            listed: 0,
            claimed: 0,
        }
    }

    /// How many of `count` task entries to list (negative counts list none), charged to the
    /// budget.
    fn allow(&mut self, count: i32) -> i32 {
        let count = count.max(0);
        let listed = count
            .min(MAX_LISTED_TASKS)
            .min(self.left.min(i32::MAX as u64) as i32);
        self.left -= listed as u64;
        self.listed += listed as u64;
        self.claimed += count as u64;
        listed
    }

    /// Marks `answer` as truncated if anything was left out.
    fn mark(&self, mut answer: Answer) -> Answer {
        if self.listed < self.claimed {
            answer.truncated = Some(format!("{} of {} tasks listed", self.listed, self.claimed));
        }
        answer
    }
}

impl Answer {
    fn ok(body: Value) -> Self {
        Self {
            status: 200,
            body: Some(body),
            truncated: None,
        }
    }

    /// Java's error body: `{"error_code": N, "message": "..."}`.
    pub fn error(status: u16, message: impl Into<String>) -> Self {
        Self {
            status,
            body: Some(json!({"error_code": status, "message": message.into()})),
            truncated: None,
        }
    }

    fn not_found(connector: &str) -> Self {
        Self::error(404, format!("Connector {connector} not found"))
    }

    /// Java's answer to a KIP-558 request the worker settings refuse: 403 with its message.
    pub fn tracking_refused(refusal: TopicTrackingError) -> Self {
        Self::error(403, refusal.message())
    }

    /// Java's answer to a KIP-875 alter or reset that cannot be built: 404 without a connector
    /// config, 400 for a connector that is not stopped or a request without offsets, 500
    /// otherwise.
    pub fn modify_offsets_refused(refusal: &kip875::ModifyOffsetsError) -> Self {
        use kip875::ModifyOffsetsError as E;
        let status = match refusal {
            E::NotFound { .. } => 404,
            E::NotStopped { .. } | E::NoOffsets => 400,
            _ => 500,
        };
        Self::error(status, refusal.to_string())
    }
}

/// Java's `ConnectorType` as far as the topics tell: a sink connector's config must name its
/// topics (`topics` or `topics.regex`); without the connector class loaded, anything else is
/// taken for a source. (Java asks the plugin and answers `unknown` when it cannot load it.)
pub fn connector_type(config: &Properties) -> &'static str {
    if config.contains_key("topics") || config.contains_key("topics.regex") {
        "sink"
    } else {
        "source"
    }
}

fn config_json(config: &Properties) -> Value {
    Value::Object(
        config
            .iter()
            .map(|(k, v)| (k.to_owned(), serde_json::to_value(v).unwrap_or(Value::Null)))
            .collect(),
    )
}

/// A connector or task state as Java's `ConnectorStateInfo.AbstractState` serializes it.
fn state_json(status: &Status, id: Option<i32>) -> Value {
    let mut object = Map::new();
    if let Some(id) = id {
        object.insert("id".into(), json!(id));
    }
    object.insert("state".into(), json!(status.state.as_str()));
    if let Some(trace) = status.trace.as_deref().filter(|t| !t.is_empty()) {
        object.insert("trace".into(), json!(trace));
    }
    object.insert("worker_id".into(), json!(status.worker_id));
    if let Some(version) = &status.version {
        object.insert("version".into(), json!(version));
    }
    Value::Object(object)
}

/// `GET /connectors`: the names; with any `expand` parameter (`expand` is `None` without one),
/// an object per connector holding `status` and/or `info` as asked (other values are ignored, as
/// Java ignores them). A connector without a status is left out when `status` is asked, as Java
/// leaves it out.
pub fn connectors(views: &Views, expand: Option<&[String]>) -> Answer {
    let names: Vec<&str> = views.config.connectors().collect();
    let Some(expand) = expand else {
        return Answer::ok(json!(names));
    };
    let mut out = Map::new();
    let mut budget = TaskBudget::new();
    'connectors: for c in names {
        let mut entry = Map::new();
        for what in expand {
            let answer = match what.as_str() {
                "status" => connector_status(views, c),
                "info" => info(views, c, &mut budget),
                _ => continue,
            };
            match answer.body {
                Some(body) if answer.status == 200 => {
                    entry.insert(what.clone(), body);
                }
                _ => continue 'connectors,
            }
        }
        out.insert(c.to_string(), Value::Object(entry));
    }
    budget.mark(Answer::ok(Value::Object(out)))
}

/// `GET /connectors/{c}`: `{"name", "config", "tasks": [{"connector", "task"}], "type"}`.
pub fn connector_info(views: &Views, c: &str) -> Answer {
    let mut budget = TaskBudget::new();
    let answer = info(views, c, &mut budget);
    budget.mark(answer)
}

/// [`connector_info`] listing what `budget` allows.
fn info(views: &Views, c: &str, budget: &mut TaskBudget) -> Answer {
    let Some(config) = views.config.connector_config(c) else {
        return Answer::not_found(c);
    };
    let listed = views.config.tasks(c);
    let allowed = budget.allow(listed.len().try_into().unwrap_or(i32::MAX));
    let tasks: Vec<Value> = listed
        .take(allowed as usize)
        .map(|id| json!({"connector": id.connector, "task": id.task}))
        .collect();
    Answer::ok(json!({
        "name": c,
        "config": config_json(config),
        "tasks": tasks,
        "type": connector_type(config),
    }))
}

/// `GET /connectors/{c}/config`.
pub fn connector_config(views: &Views, c: &str) -> Answer {
    match views.config.connector_config(c) {
        Some(config) => Answer::ok(config_json(config)),
        None => Answer::not_found(c),
    }
}

/// `GET /connectors/{c}/status`: the connector's status and its tasks' from the status topic.
pub fn connector_status(views: &Views, c: &str) -> Answer {
    let snapshot = &views.status;
    let Some(status) = snapshot.connector(c) else {
        return Answer::error(404, format!("No status found for connector {c}"));
    };
    let tasks: Vec<Value> = snapshot
        .tasks(c)
        .map(|(id, s)| state_json(s, Some(id)))
        .collect();
    let kind = views
        .config
        .connector_config(c)
        .map_or("unknown", connector_type);
    Answer::ok(json!({
        "name": c,
        "connector": state_json(status, None),
        "tasks": tasks,
        "type": kind,
    }))
}

/// `GET /connectors/{c}/tasks`: `[{"id": {"connector", "task"}, "config": {..}}]` for task ids
/// below the committed task count (Java uses the count, so an inconsistent connector still lists
/// its last committed tasks; a missing task config is `null`), at most [`MAX_LISTED_TASKS`].
pub fn tasks(views: &Views, c: &str) -> Answer {
    if !views.config.contains(c) {
        return Answer::not_found(c);
    }
    let mut budget = TaskBudget::new();
    let listed = budget.allow(views.config.task_count(c));
    let tasks: Vec<Value> = (0..listed)
        .map(|task| {
            let id = TaskId::new(c, task);
            let config = views
                .config
                .task_config(&id)
                .map_or(Value::Null, config_json);
            json!({"id": {"connector": c, "task": task}, "config": config})
        })
        .collect();
    budget.mark(Answer::ok(json!(tasks)))
}

/// `GET /connectors/{c}/tasks/{t}/status`.
pub fn task_status(views: &Views, c: &str, task: &str) -> Answer {
    // A task number Java cannot convert is Jersey's 404 for the path.
    let Ok(task) = task.parse::<i32>() else {
        return no_such_path();
    };
    match views.status.task(c, task) {
        Some(s) => Answer::ok(state_json(s, Some(task))),
        None => Answer::error(404, format!("No status found for task {c}-{task}")),
    }
}

/// `GET /connectors/{c}/topics` (KIP-558).
pub fn active_topics(views: &Views, c: &str, tracking: &TopicTracking) -> Answer {
    match views.status.active_topics(c, tracking) {
        Ok(topics) => Answer::ok(serde_json::to_value(topics).unwrap_or(Value::Null)),
        Err(e) => Answer::tracking_refused(e),
    }
}

/// `GET /connectors/{c}/offsets` (KIP-875), from the offsets topic.
pub fn offsets(views: &Views, c: &str) -> Answer {
    if !views.config.contains(c) {
        return Answer::not_found(c);
    }
    Answer::ok(serde_json::to_value(kip875::list(&views.offsets, c)).unwrap_or(Value::Null))
}

/// Jersey's answer to a path it has no resource for.
pub fn no_such_path() -> Answer {
    Answer::error(404, "HTTP 404 Not Found")
}

/// Jersey's answer to a method a resource does not support.
pub fn method_not_allowed() -> Answer {
    Answer::error(405, "HTTP 405 Method Not Allowed")
}

/// The expansions a raw query string asks for (`expand=status&expand=info`), percent-decoded
/// as Jersey decodes them (`expand=%73tatus` is `status`), each once, in the order first asked;
/// values Java ignores are dropped. `None` when the query has no `expand` parameter at all
/// (then `GET /connectors` lists names, while `?expand=foo` alone gives the object form).
pub fn expand_values(query: Option<&str>) -> Option<Vec<String>> {
    let mut asked = false;
    let mut values: Vec<String> = Vec::new();
    for (key, value) in form_urlencoded::parse(query.unwrap_or_default().as_bytes()) {
        if key != "expand" {
            continue;
        }
        asked = true;
        if matches!(value.as_ref(), "status" | "info") && !values.iter().any(|v| *v == value) {
            values.push(value.into_owned());
        }
    }
    asked.then_some(values)
}

/// A connector's tasks as Connect's REST status lists them (every task status the status topic
/// holds for it) and the committed ones without a status, ascending; a commit can claim any
/// count, so at most `limit` of those are taken.
pub fn task_ids(views: &Views, connector: &str, limit: usize) -> Vec<i32> {
    let mut ids: std::collections::BTreeSet<i32> = views
        .status
        .tasks(connector)
        .map(|(task, _)| task)
        .collect();
    ids.extend(views.config.tasks(connector).take(limit).map(|id| id.task));
    ids.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expand_values_are_decoded_deduplicated_and_known() {
        assert_eq!(expand_values(None), None);
        assert_eq!(expand_values(Some("other=1")), None);
        assert_eq!(expand_values(Some("expand=foo")), Some(vec![]));
        assert_eq!(
            expand_values(Some("%65xpand=%73tatus&expand=info")),
            Some(vec!["status".to_string(), "info".to_string()])
        );
        let repeated = "expand=info&expand=status&".repeat(2_250);
        assert_eq!(
            expand_values(Some(&repeated)),
            Some(vec!["info".to_string(), "status".to_string()])
        );
    }

    /// The core returns typed refusals; the HTTP codes are Java's REST layer's, mapped here.
    #[test]
    fn refusals_get_java_status_codes_and_error_bodies() {
        use kip875::ModifyOffsetsError as E;
        let cases = [
            (
                E::NotFound {
                    connector: "c".into(),
                },
                404,
            ),
            (
                E::NotStopped {
                    connector: "c".into(),
                },
                400,
            ),
            (E::NoOffsets, 400),
            (E::NoTopicPartitions, 500),
        ];
        for (refusal, status) in cases {
            let answer = Answer::modify_offsets_refused(&refusal);
            assert_eq!(answer.status, status, "{refusal:?}");
            let body = answer.body.expect("an error body");
            assert_eq!(body["error_code"], status);
            assert_eq!(body["message"], refusal.to_string());
        }
        let answer = Answer::tracking_refused(TopicTrackingError::ResetDisabled);
        assert_eq!(answer.status, 403);
        assert_eq!(
            serde_json::to_string(&answer.body).unwrap(),
            r#"{"error_code":403,"message":"Topic tracking reset is disabled."}"#
        );
    }
}
