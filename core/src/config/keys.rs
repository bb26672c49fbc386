//! Config-topic record keys: the formats writers use and Java's dispatch order on read (spec §1).

use alloc::borrow::Cow;

use crate::java;

/// Key prefix of connector config records.
pub const CONNECTOR_PREFIX: &str = "connector-";
/// Key prefix of task config records.
pub const TASK_PREFIX: &str = "task-";
/// Key prefix of task commit records.
pub const COMMIT_PREFIX: &str = "commit-";
/// Key prefix of target-state records.
pub const TARGET_STATE_PREFIX: &str = "target-state-";
/// The session key record's key.
pub const SESSION_KEY_KEY: &str = "session-key";
/// Key prefix of restart requests (KIP-745).
pub const RESTART_PREFIX: &str = "restart-connector-";
/// Key prefix of task count records (KIP-618).
pub const TASKS_FENCING_PREFIX: &str = "tasks-fencing-";
/// Key prefix of cluster-wide logger levels (KIP-976).
pub const LOGGER_CLUSTER_PREFIX: &str = "logger-cluster-";

/// A config-topic key after Java's dispatch (spec §1.2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ConfigKey<'a> {
    TargetState(&'a str),
    Connector(&'a str),
    Task { connector: Cow<'a, str>, task: i32 },
    UnparseableTask,
    Commit(&'a str),
    Restart(&'a str),
    TasksFencing(&'a str),
    SessionKey,
    LoggerCluster(&'a str),
    Unknown,
}

/// Decodes key bytes as Java's `StringDeserializer` does: UTF-8, malformed sequences replaced by
/// U+FFFD.
pub(crate) fn key_string(bytes: &[u8]) -> Cow<'_, str> {
    java::string_deserializer(bytes)
}

/// Dispatches a key in Java's order: the first matching prefix wins.
pub(crate) fn dispatch(key: &str) -> ConfigKey<'_> {
    if let Some(c) = key.strip_prefix(TARGET_STATE_PREFIX) {
        ConfigKey::TargetState(c)
    } else if let Some(c) = key.strip_prefix(CONNECTOR_PREFIX) {
        ConfigKey::Connector(c)
    } else if key.starts_with(TASK_PREFIX) {
        match parse_task_key(key) {
            Some((connector, task)) => ConfigKey::Task { connector, task },
            None => ConfigKey::UnparseableTask,
        }
    } else if let Some(c) = key.strip_prefix(COMMIT_PREFIX) {
        ConfigKey::Commit(c)
    } else if let Some(c) = key.strip_prefix(RESTART_PREFIX) {
        ConfigKey::Restart(c)
    } else if let Some(c) = key.strip_prefix(TASKS_FENCING_PREFIX) {
        ConfigKey::TasksFencing(c)
    } else if key == SESSION_KEY_KEY {
        ConfigKey::SessionKey
    } else if let Some(ns) = key.strip_prefix(LOGGER_CLUSTER_PREFIX) {
        ConfigKey::LoggerCluster(ns)
    } else {
        ConfigKey::Unknown
    }
}

/// Parses `task-<connector>-<id>` with Java's `String.split("-")` semantics (spec §1.3): trailing
/// empty parts are dropped, at least three parts are needed, the last part is the task id as
/// `Integer.parseInt` reads it and the parts in between, joined by `-`, are the connector name.
pub(crate) fn parse_task_key(key: &str) -> Option<(Cow<'_, str>, i32)> {
    // Without a trailing dash Java's split drops no part, so the connector is the text between
    // the prefix and the last dash (borrowed), and the task what follows it.
    if !key.ends_with('-') {
        if let Some(rest) = key.strip_prefix(TASK_PREFIX) {
            let (connector, last) = rest.rsplit_once('-')?;
            return Some((Cow::Borrowed(connector), java::parse_int(last)?));
        }
    }
    let parts = java::split_dash(key);
    if parts.len() < 3 {
        return None;
    }
    let (last, rest) = parts.split_last()?;
    let task = java::parse_int(last)?;
    let connector = rest.get(1..)?.join("-");
    Some((Cow::Owned(connector), task))
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::{String, ToString};

    fn task(key: &str) -> Option<(String, i32)> {
        parse_task_key(key).map(|(c, t)| (c.into_owned(), t))
    }

    proptest::proptest! {
        /// The borrowed path reads every task key as Java's split does.
        #[test]
        fn task_keys_read_as_javas_split(tail in "[a1é-]{0,12}") {
            let key = alloc::format!("{TASK_PREFIX}{tail}");
            proptest::prop_assert_eq!(task(&key), java::task_key_by_split(&key, 1));
        }
    }

    #[test]
    fn task_keys_parse_like_java_split() {
        let ok = |k: &str, c: &str, i: i32| assert_eq!(task(k), Some((c.to_string(), i)), "{k}");
        ok("task-foo-1", "foo", 1);
        ok("task-my-conn-12", "my-conn", 12);
        ok("task-a--b-0", "a--b", 0);
        ok("task-foo--1", "foo-", 1);
        ok("task--1", "", 1);
        ok("task-foo-1-", "foo", 1);
        ok("task-foo-+3", "foo", 3);
        ok("task-foo-01", "foo", 1);
        ok("task-foo-\u{661}", "foo", 1);
        for bad in [
            "task-foo-",
            "task-foo",
            "task-",
            "task-0",
            "task-foo-2147483648",
            "task-foo-bar",
        ] {
            assert_eq!(task(bad), None, "{bad}");
        }
    }

    #[test]
    fn dispatch_follows_java_order() {
        assert_eq!(dispatch("target-state-x"), ConfigKey::TargetState("x"));
        assert_eq!(dispatch("connector-x"), ConfigKey::Connector("x"));
        assert_eq!(dispatch("connector-"), ConfigKey::Connector(""));
        assert_eq!(
            dispatch("task-x-0"),
            ConfigKey::Task {
                connector: "x".into(),
                task: 0
            }
        );
        assert_eq!(dispatch("task-x"), ConfigKey::UnparseableTask);
        assert_eq!(dispatch("commit-x"), ConfigKey::Commit("x"));
        assert_eq!(dispatch("restart-connector-x"), ConfigKey::Restart("x"));
        assert_eq!(dispatch("tasks-fencing-x"), ConfigKey::TasksFencing("x"));
        assert_eq!(dispatch("session-key"), ConfigKey::SessionKey);
        assert_eq!(dispatch("session-key-foo"), ConfigKey::Unknown);
        assert_eq!(
            dispatch("logger-cluster-org.a"),
            ConfigKey::LoggerCluster("org.a")
        );
        assert_eq!(dispatch("garbage-key-1"), ConfigKey::Unknown);
        assert_eq!(dispatch(""), ConfigKey::Unknown);
    }

    #[test]
    fn keys_decode_like_string_deserializer() {
        assert_eq!(key_string(b"connector-\xff"), "connector-\u{fffd}");
    }
}
