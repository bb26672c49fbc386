//! Status-topic record keys: the formats writers use and Java's parsing on read (spec §1).

use alloc::borrow::Cow;
use alloc::string::String;

use crate::java;

/// Key prefix of connector status records.
pub const CONNECTOR_STATUS_PREFIX: &str = "status-connector-";
/// Key prefix of task status records.
pub const TASK_STATUS_PREFIX: &str = "status-task-";
/// Key prefix of KIP-558 topic status records.
pub const TOPIC_STATUS_PREFIX: &str = "status-topic-";
/// Separator between topic and connector in a topic status key.
pub const TOPIC_STATUS_SEPARATOR: &str = ":connector-";

/// `TOPIC_STATUS_PREFIX.length()` in UTF-16 code units (the prefix is ASCII).
const TOPIC_PREFIX_UNITS: usize = TOPIC_STATUS_PREFIX.len();
/// `TOPIC_STATUS_SEPARATOR.length()` in UTF-16 code units (the separator is ASCII).
const SEPARATOR_UNITS: usize = TOPIC_STATUS_SEPARATOR.len();

/// A status-topic key after Java's dispatch (spec §1.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum StatusKey<'a> {
    Connector(&'a str),
    Task {
        connector: Cow<'a, str>,
        task: i32,
    },
    Topic {
        topic: &'a str,
        connector: Cow<'a, str>,
    },
    InvalidConnector,
    InvalidTask,
    InvalidTopic(&'static str),
    Unknown,
}

/// Decodes key bytes as Java's `StringDeserializer` does: UTF-8, malformed sequences replaced by
/// U+FFFD.
pub(crate) fn key_string(bytes: &[u8]) -> Cow<'_, str> {
    java::string_deserializer(bytes)
}

/// Dispatches a key in Java's order: connector, task, topic, otherwise unknown. Every key check
/// happens here, before the value is looked at.
pub(crate) fn dispatch(key: &str) -> StatusKey<'_> {
    if let Some(c) = key.strip_prefix(CONNECTOR_STATUS_PREFIX) {
        if c.is_empty() {
            StatusKey::InvalidConnector
        } else {
            StatusKey::Connector(c)
        }
    } else if key.starts_with(TASK_STATUS_PREFIX) {
        match parse_task_key(key) {
            Some((connector, task)) => StatusKey::Task { connector, task },
            None => StatusKey::InvalidTask,
        }
    } else if key.starts_with(TOPIC_STATUS_PREFIX) {
        match parse_topic_key(key) {
            Ok((topic, connector)) => StatusKey::Topic { topic, connector },
            Err(reason) => StatusKey::InvalidTopic(reason),
        }
    } else {
        StatusKey::Unknown
    }
}

/// Java's `parseConnectorTaskId`: `key.split("-")` over the **whole** key, at least four parts,
/// the last part read by `Integer.parseInt`, the connector name = parts `2..last` joined by `-`
/// (spec §1.3).
pub(crate) fn parse_task_key(key: &str) -> Option<(Cow<'_, str>, i32)> {
    // Without a trailing dash Java's split drops no part, so the connector is the text between
    // the prefix and the last dash (borrowed), and the task what follows it.
    if !key.ends_with('-') {
        if let Some(rest) = key.strip_prefix(TASK_STATUS_PREFIX) {
            let (connector, last) = rest.rsplit_once('-')?;
            return Some((Cow::Borrowed(connector), java::parse_int(last)?));
        }
    }
    let parts = java::split_dash(key);
    if parts.len() < 4 {
        return None;
    }
    let (last, rest) = parts.split_last()?;
    let task = java::parse_int(last)?;
    let connector = rest.get(2..)?.join("-");
    Some((Cow::Owned(connector), task))
}

/// Java's `readTopicStatus` key handling (spec §1.4): the topic runs from the prefix to the first
/// `:`; the connector starts 11 UTF-16 code units after that `:`, whatever those units are.
///
/// Java counts in UTF-16 code units. The prefix and the `:` are ASCII, so the topic is the same
/// substring whichever unit is used; the 11-unit skip is counted in UTF-16 units here. If it
/// ends in the middle of a surrogate pair, Java's connector name starts with a lone low
/// surrogate, which a Rust string cannot hold: it becomes U+FFFD (as the JSON reader does with
/// lone surrogates).
pub(crate) fn parse_topic_key(key: &str) -> Result<(&str, Cow<'_, str>), &'static str> {
    let Some(delim) = key.find(':') else {
        return Err("no `:` after the topic");
    };
    // `key` starts with the 13-byte ASCII prefix, which holds no `:`, so `delim >= 13` in bytes
    // and in UTF-16 units alike: Java's `13 > delim` check can only fail for a missing colon.
    let topic = key.get(TOPIC_PREFIX_UNITS..delim).unwrap_or_default();
    if topic.is_empty() {
        return Err("empty topic");
    }
    let from_colon = key.get(delim..).unwrap_or_default();
    let connector = skip_utf16_units(from_colon, SEPARATOR_UNITS).ok_or("key ends too early")?;
    if connector.is_empty() {
        return Err("empty connector");
    }
    Ok((topic, connector))
}

/// `s.substring(n)` in Java's UTF-16 indexing, or `None` where Java's `n > length` check
/// rejects it.
fn skip_utf16_units(s: &str, n: usize) -> Option<Cow<'_, str>> {
    let mut units = 0;
    for (i, c) in s.char_indices() {
        if units == n {
            return Some(Cow::Borrowed(s.get(i..).unwrap_or_default()));
        }
        units += c.len_utf16();
        if units > n {
            // `n` falls between the two surrogates of `c`: Java keeps the lone low surrogate.
            let rest = s.get(i + c.len_utf8()..).unwrap_or_default();
            let mut connector = String::with_capacity(rest.len() + 3);
            connector.push(char::REPLACEMENT_CHARACTER);
            connector.push_str(rest);
            return Some(Cow::Owned(connector));
        }
    }
    (units == n).then_some(Cow::Borrowed(""))
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// The borrowed path reads every task key as Java's split does.
        #[test]
        fn task_keys_read_as_javas_split(tail in "[a1é-]{0,12}") {
            let key = alloc::format!("{TASK_STATUS_PREFIX}{tail}");
            let read = parse_task_key(&key).map(|(c, t)| (c.into_owned(), t));
            proptest::prop_assert_eq!(read, java::task_key_by_split(&key, 2));
        }
    }

    #[test]
    fn skip_counts_utf16_units() {
        assert_eq!(skip_utf16_units("abc", 0).as_deref(), Some("abc"));
        assert_eq!(skip_utf16_units("abc", 3).as_deref(), Some(""));
        assert_eq!(skip_utf16_units("abc", 4), None);
        assert_eq!(skip_utf16_units("é1", 1).as_deref(), Some("1"));
        assert_eq!(skip_utf16_units("😀1", 2).as_deref(), Some("1"));
        assert_eq!(skip_utf16_units("😀1", 1).as_deref(), Some("\u{fffd}1"));
        assert_eq!(skip_utf16_units("😀", 1).as_deref(), Some("\u{fffd}"));
        assert_eq!(skip_utf16_units("😀", 3), None);
    }

    #[test]
    fn task_key_parts() {
        assert_eq!(
            parse_task_key("status-task-a-b-c-12"),
            Some(("a-b-c".into(), 12))
        );
        assert_eq!(parse_task_key("status-task-"), None);
    }
}
