//! Status values in the exact layout a Java worker writes them, read without the general JSON
//! reader.
//!
//! Java's `KafkaStatusBackingStore` serializes a status through the `JsonConverter` with
//! schemas off: compact JSON, the members in schema order,
//! `{"state":"RUNNING","trace":null,"worker_id":"w:8083","generation":1,"version":null}`
//! (`version` since Kafka 4.1). Nearly every record of a status topic has that layout, and
//! reading it by matching the fixed text in between the values takes a fraction of the general
//! reader's walk. Anything else (whitespace, another member order, an escape, a number that is
//! not a plain integer, a long string) is declined, and [`super::values::status`] reads it in
//! full. Every value this accepts reads the same both ways (the tests check it against the
//! general path over generated variations of the layout).

use alloc::string::String;

use super::types::{Status, StatusState};
use crate::json::layout::Cursor;

/// The status `bytes` hold if they have Java's layout, or `None` to read them in full.
pub(super) fn read(bytes: &[u8]) -> Option<Status> {
    let mut text = Cursor::new(bytes)?;
    text.literal(b"{\"state\":\"")?;
    let state = StatusState::from_java_name(text.string()?)?;
    text.literal(b",\"trace\":")?;
    let trace = text.nullable_string()?;
    text.literal(b",\"worker_id\":")?;
    let worker_id = text.nullable_string()?;
    text.literal(b",\"generation\":")?;
    let generation = text.integer()?;
    let version = match text.literal(b",\"version\":") {
        Some(()) => text.nullable_string()?,
        None => None,
    };
    // The general reader stops at the object's end too: what follows is never read.
    text.literal(b"}")?;
    Some(Status {
        state,
        trace: trace.map(String::from),
        worker_id: worker_id.map(String::from),
        // Java's `Long.intValue()`: the low 32 bits.
        generation: generation as i32,
        version: version.map(String::from),
    })
}

#[cfg(test)]
mod tests {
    use alloc::format;
    use alloc::string::String;
    use alloc::vec::Vec;

    use proptest::prelude::*;

    use super::read;
    use crate::json::layout::part;
    use crate::status::values;

    /// Variations of each part of Java's layout.
    fn state() -> BoxedStrategy<String> {
        part(
            &[
                r#""RUNNING""#,
                r#""UNASSIGNED""#,
                r#""FAILED""#,
                r#""PAUSED""#,
                r#""RESTARTING""#,
                r#""STOPPED""#,
            ],
            &[
                r#""DESTROYED""#,
                r#""running""#,
                r#""RUN\u004eING""#,
                r#""""#,
                "null",
                "1",
            ],
        )
    }

    fn nullable() -> BoxedStrategy<String> {
        part(
            &["null", r#""w:8083""#, r#""é worker""#, r#""""#],
            &[
                r#""a\nb""#,
                r#""a\"b""#,
                "nul",
                "nullx",
                "7",
                "[]",
                "{}",
                "\"\u{1}\"",
            ],
        )
    }

    fn generation() -> BoxedStrategy<String> {
        part(
            &[
                "1",
                "0",
                "-5",
                "42",
                "2147483648",
                "-2147483649",
                "999999999999999999",
            ],
            &[
                "-0",
                "01",
                "-01",
                "1.0",
                "1e3",
                "1E3",
                "9999999999999999999",
                "99999999999999999999999",
                "\"1\"",
                "null",
                "-",
                "",
            ],
        )
    }

    /// Java's layout with its parts varied, a member dropped or repeated, whitespace, and
    /// bytes after the object.
    fn value() -> impl Strategy<Value = Vec<u8>> {
        (
            state(),
            nullable(),
            nullable(),
            generation(),
            prop::option::of(nullable()),
            part(&[""], &[" ", "\n"]),
            prop_oneof![6 => Just(0usize), 1 => 1usize..6],
            prop::sample::select(&["", " ", "x", "}", "\u{ff}"][..]),
        )
            .prop_map(
                |(state, trace, worker, generation, version, space, twist, after)| {
                    let mut members = Vec::from([
                        format!(r#""state":{space}{state}"#),
                        format!(r#""trace":{trace}"#),
                        format!(r#""worker_id":{worker}"#),
                        format!(r#""generation":{generation}"#),
                    ]);
                    if let Some(version) = version {
                        members.push(format!(r#""version":{version}"#));
                    }
                    match twist {
                        1 => members.swap(1, 2),
                        2 => {
                            members.remove(1);
                        }
                        3 => members.push(r#""state":"FAILED""#.into()),
                        _ => {}
                    }
                    let open = if twist == 4 { "{ " } else { "{" };
                    let mut bytes = format!("{open}{}}}{after}", members.join(",")).into_bytes();
                    if twist == 5 {
                        bytes.push(0xff);
                    }
                    bytes
                },
            )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2_000))]

        /// What the layout reader accepts, the general reader reads the same.
        #[test]
        fn the_layout_reads_as_the_general_reader(bytes in value()) {
            if let Some(status) = read(&bytes) {
                prop_assert_eq!(Ok(status), values::read_in_full(&bytes));
            }
        }
    }

    #[test]
    fn java_writes_what_the_layout_reads() {
        use crate::status::{StatusState, StatusUpdate};
        let updates = [
            StatusUpdate::for_connector("c", StatusState::Running, "w:8083", 3),
            StatusUpdate::for_task("c", 0, StatusState::Unassigned, "wörker", -7),
            StatusUpdate::for_connector("c", StatusState::Paused, "w", i32::MAX),
        ];
        for update in updates {
            let value = update.value().expect("not a tombstone");
            let status = read(value.as_bytes());
            assert!(status.is_some(), "{value}");
            assert_eq!(status.map(Ok), Some(values::read_in_full(value.as_bytes())));
        }
        // A trace has escapes: the general reader reads it.
        let failed =
            StatusUpdate::for_task("c", 1, StatusState::Failed, "w", 1).with_trace("boom\n\tat X");
        assert_eq!(read(failed.value().expect("a value").as_bytes()), None);
    }

    /// Bytes that are not UTF-8, in a string or between members, are declined whole: the
    /// general reader decides what they read as.
    #[test]
    fn text_that_is_not_utf8_is_left_to_the_general_reader() {
        let values: [&[u8]; 3] = [
            b"{\"state\":\"RUNNING\",\"trace\":null,\"worker_id\":\"w\xff\",\"generation\":1}",
            b"{\"state\":\"RUNNING\",\"trace\":null,\"worker_id\":\"w\",\"generation\":1}\xc3",
            b"{\"state\":\"RUNNING\",\"trace\":\"\xed\xa0\x80\",\"worker_id\":null,\"generation\":1}",
        ];
        for value in values {
            assert_eq!(read(value), None, "{value:?}");
            assert_eq!(values::status(value), values::read_in_full(value));
        }
    }
}
