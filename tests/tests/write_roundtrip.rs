//! The write side read back: the records each write plan produces, applied by a reader, give the
//! state the write intended, and a fresh reader of the same topic agrees.

use connect_state_tests::json_string;
use engine::config::write::{self, StepAction, WritePlan};
use engine::config::{ConfigEvent, ConfigLog, PropertyValue, TargetState, TaskId};
use engine::json::JsonValue;
use engine::Record;

/// A single-partition topic and the writer's own reader, executing plans step by step.
struct Cluster {
    topic: Vec<(Vec<u8>, Option<Vec<u8>>)>,
    writer: ConfigLog,
    read: usize,
    events: Vec<ConfigEvent>,
}

impl Cluster {
    fn new() -> Self {
        let mut writer = ConfigLog::new();
        writer.mark_caught_up();
        Self {
            topic: Vec::new(),
            writer,
            read: 0,
            events: Vec::new(),
        }
    }

    fn read_to_end(&mut self) {
        while self.read < self.topic.len() {
            let (key, value) = &self.topic[self.read];
            let record = Record::new(key, value.as_deref(), self.read as i64);
            assert!(self.writer.handle_record(record).unwrap().is_applied());
            self.events
                .extend(core::iter::from_fn(|| self.writer.poll_event()));
            self.read += 1;
        }
    }

    fn execute(&mut self, plan: WritePlan) -> Vec<ConfigEvent> {
        for step in plan.steps {
            match step.action {
                StepAction::Produce { records, .. } => {
                    self.topic
                        .extend(records.into_iter().map(|r| (r.key, r.value)));
                }
                StepAction::ReadToEnd => self.read_to_end(),
            }
        }
        core::mem::take(&mut self.events)
    }

    /// A worker that starts now: reads everything, no events.
    fn fresh_reader(&self) -> ConfigLog {
        let mut log = ConfigLog::new();
        for (offset, (key, value)) in self.topic.iter().enumerate() {
            log.handle_record(Record::new(key, value.as_deref(), offset as i64))
                .unwrap();
        }
        log.mark_caught_up();
        log
    }
}

fn s(v: &str) -> JsonValue {
    JsonValue::String(v.into())
}

#[test]
fn connector_lifecycle_round_trips() {
    let mut cluster = Cluster::new();
    let name = "orders \u{1F600} \"quoted\"\t/slash";
    let events = cluster.execute(write::put_connector_config(
        name,
        [
            ("tasks.max", Some("2")),
            ("weird\u{1}", Some("é\u{2028}")),
            ("nothing", None),
        ],
        Some(TargetState::Stopped),
    ));
    assert_eq!(
        events,
        vec![ConfigEvent::ConnectorConfigUpdated {
            connector: name.into()
        }],
        "the target state written with the config fires no callback"
    );
    let snap = cluster.writer.snapshot();
    assert_eq!(snap.target_state(name), Some(TargetState::Stopped));
    let config = snap.connector_config(name).unwrap();
    assert_eq!(config.get_str("tasks.max"), Some("2"));
    assert_eq!(config.get_str("weird\u{1}"), Some("é\u{2028}"));
    assert_eq!(
        config.get("nothing"),
        Some(PropertyValue::Other(&JsonValue::Null))
    );

    let events = cluster.execute(write::put_task_configs(
        name,
        [vec![("task", Some("0"))], vec![("task", Some("1"))]],
    ));
    assert_eq!(
        events,
        vec![ConfigEvent::TaskConfigsUpdated {
            connector: name.into(),
            tasks: vec![0, 1]
        }]
    );
    let snap = cluster.writer.snapshot();
    assert_eq!(snap.tasks(name).len(), 2);
    assert_eq!(
        snap.task_config(&TaskId::new(name, 1))
            .unwrap()
            .get_str("task"),
        Some("1")
    );
    assert!(snap.pending_fencing(name));

    cluster.execute(write::put_task_count_record(name, 2));
    assert!(!cluster.writer.snapshot().pending_fencing(name));

    let events = cluster.execute(write::put_target_state(name, TargetState::Paused));
    assert!(events.is_empty(), "put_target_state does not read back");
    cluster.read_to_end();
    assert_eq!(
        cluster.events,
        vec![ConfigEvent::TargetStateChanged {
            connector: name.into(),
            state: TargetState::Paused
        }]
    );
    cluster.events.clear();

    let events = cluster.execute(write::remove_connector_config(name));
    assert_eq!(
        events,
        vec![ConfigEvent::ConnectorConfigRemoved {
            connector: name.into()
        }]
    );
    let snap = cluster.writer.snapshot();
    assert!(!snap.contains(name));
    assert_eq!(snap.target_state(name), None);
    assert_eq!(
        snap.task_count_record(name),
        Some(2),
        "fencing data is kept"
    );

    let fresh = cluster.fresh_reader();
    assert_eq!(fresh.snapshot(), cluster.writer.snapshot());
}

#[test]
fn stopping_writes_an_empty_commit_first() {
    let mut cluster = Cluster::new();
    cluster.execute(write::put_connector_config("c", [("k", Some("v"))], None));
    cluster.execute(write::put_task_configs("c", [vec![("t", Some("0"))]]));
    let events = cluster.execute(write::put_task_configs::<_, Vec<(&str, Option<&str>)>>(
        "c",
        [],
    ));
    assert_eq!(
        events,
        vec![ConfigEvent::TaskConfigsUpdated {
            connector: "c".into(),
            tasks: vec![]
        }]
    );
    cluster.execute(write::put_target_state("c", TargetState::Stopped));
    cluster.read_to_end();
    let snap = cluster.writer.snapshot();
    assert_eq!(snap.target_state("c"), Some(TargetState::Stopped));
    assert!(snap.tasks("c").is_empty());
    assert_eq!(snap.task_config_generation("c"), Some(1));
    assert_eq!(cluster.fresh_reader().snapshot(), snap);
}

#[test]
fn session_keys_restarts_and_logger_levels_round_trip() {
    let mut cluster = Cluster::new();
    let key: Vec<u8> = (0..=255).collect();
    let events =
        cluster.execute(write::put_session_key(&key, "HmacSHA256", 1_732_870_000_000).unwrap());
    let [ConfigEvent::SessionKeyUpdated { key: read }] = &events[..] else {
        panic!("expected one session key event, got {events:?}");
    };
    assert_eq!(read.key, key);
    assert_eq!(read.algorithm, "HmacSHA256");
    assert_eq!(read.creation_timestamp, 1_732_870_000_000);

    let events = cluster.execute(write::put_restart_request("c-1", true, false));
    assert_eq!(
        events,
        vec![ConfigEvent::RestartRequested {
            connector: "c-1".into(),
            only_failed: true,
            include_tasks: false
        }]
    );
    cluster.execute(write::put_logger_level("org.apache.kafka", "TRACE"));
    cluster.read_to_end();
    assert_eq!(
        cluster.events,
        vec![ConfigEvent::LoggerLevelUpdated {
            namespace: "org.apache.kafka".into(),
            level: "TRACE".into()
        }]
    );
    assert_eq!(cluster.fresh_reader().snapshot(), cluster.writer.snapshot());
}

#[test]
fn written_bytes_parse_back_to_the_same_strings() {
    for text in [
        "",
        "a\"b\\c",
        "\u{0}\u{1f}\u{7f}",
        "\u{10FFFF}\u{1F600}",
        "line\nbreak\r\t\u{8}\u{c}",
    ] {
        let value = write::properties_value([(text, Some(text))]);
        let parsed = engine::json::parse(value.as_bytes()).unwrap().unwrap();
        let expected = format!(
            r#"{{"properties":{{{}:{}}}}}"#,
            json_string(text),
            json_string(text)
        );
        assert_eq!(value, expected);
        let JsonValue::Object(outer) = parsed else {
            panic!("an object")
        };
        let Some(JsonValue::Object(props)) = outer.get("properties") else {
            panic!("properties")
        };
        assert_eq!(props.get(text), Some(&s(text)));
    }
}
