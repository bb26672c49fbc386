//! Offsets keys in the exact layout a Java worker writes them, read without the general JSON
//! reader.
//!
//! A source task's offsets are keyed by `[connector, partition]`, serialized through the
//! `JsonConverter` with schemas off: compact JSON, the partition's members in its map's order,
//! `["jdbc-source",{"protocol":"1","table":"public.orders"}]`. Nearly every key of an offsets
//! topic has that layout with string and integer members, and matching it directly takes a
//! fraction of the general reader's walk (the key is read for every record). Anything else
//! (whitespace, a BOM, an escape, a number that is not a plain integer, a nested value, a
//! `null` partition, bytes after the array) is declined, and [`super::partition_key::view`]
//! reads the key in full. Every key this accepts reads the same both ways (the tests check it
//! against the general path over generated variations of the layout).

use alloc::borrow::Cow;
use alloc::vec::Vec;

use arrayvec::ArrayVec;

use super::partition_key::PartitionView;
use super::stack_bytes::StackBytes;
use crate::json::layout::Cursor;
use crate::json::{JsonValue, Members, Value};

/// A partition member's value in Java's layout: a string without escapes or a plain integer.
#[derive(Clone, Copy)]
enum Scalar<'a> {
    String(&'a str),
    Long(i64),
}

/// Reads a key in Java's layout, handing each partition member to `member` in document order;
/// returns the connector, or `None` when the key is not in the layout (or `member` refused).
fn scan<'a>(
    bytes: &'a [u8],
    mut member: impl FnMut(&'a str, Scalar<'a>) -> Option<()>,
) -> Option<&'a str> {
    let mut text = Cursor::new(bytes)?;
    text.literal(b"[\"")?;
    let connector = text.string()?;
    text.literal(b",{")?;
    if text.literal(b"}").is_none() {
        loop {
            text.literal(b"\"")?;
            let name = text.string()?;
            text.literal(b":")?;
            let value = if text.literal(b"\"").is_some() {
                Scalar::String(text.string()?)
            } else {
                Scalar::Long(text.integer()?)
            };
            member(name, value)?;
            if text.literal(b"}").is_some() {
                break;
            }
            text.literal(b",")?;
        }
    }
    text.literal(b"]")?;
    // The general reader ignores what follows the array; declining it keeps this reader's
    // promise simple (the whole key is Java's layout).
    text.at_end().then_some(connector)
}

/// The connector and partition a key in Java's layout names, or `None` to read it in full.
pub(super) fn read(bytes: &[u8]) -> Option<PartitionView<'_>> {
    let mut partition: Members<'_> = Vec::new();
    let connector = scan(bytes, |name, value| {
        let value = match value {
            Scalar::String(s) => Value::String(Cow::Borrowed(s)),
            Scalar::Long(n) => Value::Scalar(JsonValue::Long(n)),
        };
        // Repeated names are kept in document order, as the general reader keeps them.
        partition.push((Cow::Borrowed(name), value));
        Some(())
    })?;
    Some(PartitionView {
        connector: Cow::Borrowed(connector),
        partition,
    })
}

/// The most members a partition may have for [`read_encoded`]; a key with more is read by
/// [`read`]. Source partitions have a handful.
const MAX_MEMBERS: usize = 8;

/// The connector of a key in Java's layout and its partition's encoding (the bytes the slot
/// hash is taken of: [`super::compact_partition`]'s), or `None` to read the key otherwise.
///
/// The offsets machine needs no more of most records' keys than this, so the members are
/// gathered on the stack and written straight into the encoding: building them
/// ([`read`]) and encoding them through serde took about as long as reading the key.
/// The bytes are bincode's standard encoding of the sorted map, written here by hand for
/// the two kinds of member this layout has; the tests check them against bincode's over
/// generated keys.
///
/// The encoding is appended to `encoding` (empty when called, and left so when the key is not
/// in the layout), which the caller holds: returned by value, its inline buffer was copied at
/// each move, a tenth of the key's reading.
pub(super) fn read_encoded<'a>(bytes: &'a [u8], encoding: &mut StackBytes<256>) -> Option<&'a str> {
    let mut members: ArrayVec<(&str, Scalar<'_>), MAX_MEMBERS> = ArrayVec::new();
    let connector = scan(bytes, |name, value| members.try_push((name, value)).ok())?;
    // Stable: among repeated names, the last one read (the one Java's map keeps) ends its run.
    members.sort_by(|a, b| a.0.cmp(b.0));
    let mut kept: ArrayVec<(&str, Scalar<'_>), MAX_MEMBERS> = ArrayVec::new();
    for &member in &members {
        match kept.last_mut() {
            Some(last) if last.0 == member.0 => *last = member,
            _ => kept.push(member),
        }
    }
    varint(encoding, kept.len() as u64);
    for &(name, value) in &kept {
        text(encoding, name);
        // A member's value is a sequence of one token (`json::Tokens`): the token's variant
        // number, then its content.
        varint(encoding, 1);
        match value {
            Scalar::String(s) => {
                varint(encoding, TOKEN_STRING);
                text(encoding, s);
            }
            Scalar::Long(n) => {
                varint(encoding, TOKEN_LONG);
                // Zigzag, as bincode writes a signed integer.
                varint(encoding, ((n << 1) ^ (n >> 63)) as u64);
            }
        }
    }
    Some(connector)
}

/// The variant numbers of `json::Tokens`' `Long` and `String` tokens.
const TOKEN_LONG: u64 = 2;
const TOKEN_STRING: u64 = 4;

/// bincode's variable-length unsigned integer: one byte below 251, else a marker byte and the
/// integer in the fewest of 2, 4 or 8 little-endian bytes.
fn varint(out: &mut StackBytes<256>, n: u64) {
    match n {
        0..=250 => out.push(&[n as u8]),
        251..=0xFFFF => {
            out.push(&[251]);
            out.push(&(n as u16).to_le_bytes());
        }
        0x1_0000..=0xFFFF_FFFF => {
            out.push(&[252]);
            out.push(&(n as u32).to_le_bytes());
        }
        _ => {
            out.push(&[253]);
            out.push(&n.to_le_bytes());
        }
    }
}

/// bincode's string: its length, then its bytes.
fn text(out: &mut StackBytes<256>, s: &str) {
    varint(out, s.len() as u64);
    out.push(s.as_bytes());
}

#[cfg(test)]
mod tests {
    use alloc::format;
    use alloc::string::String;
    use alloc::vec::Vec;

    use proptest::prelude::*;

    use super::{read, MAX_MEMBERS};
    use crate::offsets::stack_bytes::StackBytes;

    /// [`super::read_encoded`] into a buffer of its own.
    fn read_encoded(bytes: &[u8]) -> Option<(&str, StackBytes<256>)> {
        let mut encoding = StackBytes::default();
        let connector = super::read_encoded(bytes, &mut encoding)?;
        Some((connector, encoding))
    }
    use crate::json::layout::part;
    use crate::offsets::partition_key::{view_in_full, KeyView};

    fn name() -> BoxedStrategy<String> {
        part(
            &[r#""filename""#, r#""table""#, r#""é""#, r#""""#, r#""a b""#],
            &[
                r#""a\nb""#,
                r#""\u0061""#,
                r#""a\"b""#,
                "\"\u{1}\"",
                "null",
                "1",
                r#""unterminated"#,
            ],
        )
    }

    fn member_value() -> BoxedStrategy<String> {
        part(
            &[
                r#""/var/spool/a.csv""#,
                r#""1""#,
                r#""wörk""#,
                r#""""#,
                "0",
                "7",
                "-5",
                "125",
                "-126",
                "40000",
                "-3000000000",
                "999999999999999999",
                "-999999999999999999",
            ],
            &[
                "-0",
                "01",
                "-01",
                "1.0",
                "1e3",
                "9999999999999999999",
                "99999999999999999999999",
                "true",
                "null",
                "[]",
                r#"{"a":1}"#,
                r#""x\u00e9""#,
                "-",
                "",
            ],
        )
    }

    fn connector() -> BoxedStrategy<String> {
        part(
            &[
                r#""file-source-0001""#,
                r#""c""#,
                r#""""#,
                r#""connecteur é""#,
            ],
            &[r#""a\\b""#, "null", "7", r#"{"a":1}"#],
        )
    }

    /// Java's layout with its parts varied, members repeated, whitespace, a null or missing
    /// partition, another length, and bytes before or after the array.
    fn key() -> impl Strategy<Value = Vec<u8>> {
        (
            connector(),
            prop::collection::vec((name(), member_value()), 0..4),
            prop_oneof![6 => Just(0usize), 1 => 1usize..8],
            prop::sample::select(&["", " ", "x", "]", "\u{ff}"][..]),
        )
            .prop_map(|(connector, members, twist, after)| {
                let mut members: Vec<String> =
                    members.iter().map(|(n, v)| format!("{n}:{v}")).collect();
                if twist == 1 && !members.is_empty() {
                    members.push(members[0].clone());
                }
                let space = if twist == 2 { " " } else { "" };
                let partition = match twist {
                    3 => String::from("null"),
                    4 => String::from("[]"),
                    _ => format!("{{{}}}", members.join(&format!(",{space}"))),
                };
                let elements = match twist {
                    5 => format!("{connector},{partition},1"),
                    6 => connector.clone(),
                    _ => format!("{connector},{space}{partition}"),
                };
                let mut bytes = format!("[{elements}]{after}").into_bytes();
                if twist == 7 {
                    bytes.splice(0..0, [0xEF, 0xBB, 0xBF]);
                }
                bytes
            })
    }

    /// The bytes the slot hash is taken of, for a key the general reader reads as a
    /// partition key: bincode's encoding of the sorted map.
    fn encoded_in_full(bytes: &[u8]) -> Option<(String, Vec<u8>)> {
        let KeyView::Partition(view) = view_in_full(bytes) else {
            return None;
        };
        let encoding = bincode::serde::encode_to_vec(
            crate::json::SortedObject(&view.partition),
            bincode::config::standard(),
        )
        .expect("bincode encodes a JSON map");
        Some((view.connector.into_owned(), encoding))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2_000))]

        /// What the layout reader accepts, the general reader reads the same.
        #[test]
        fn the_layout_reads_as_the_general_reader(bytes in key()) {
            if let Some(partition) = read(&bytes) {
                prop_assert_eq!(KeyView::Partition(partition), view_in_full(&bytes));
            }
        }

        /// What the encoding reader accepts, bincode encodes to the same bytes from the general
        /// reader's view; and it accepts every key the layout reader does (up to its member
        /// count).
        #[test]
        fn the_encoding_is_bincodes(bytes in key()) {
            match read_encoded(&bytes) {
                Some((connector, encoding)) => prop_assert_eq!(
                    Some((String::from(connector), encoding.bytes().to_vec())),
                    encoded_in_full(&bytes)
                ),
                None => prop_assert!(
                    read(&bytes).is_none_or(|view| view.partition.len() > MAX_MEMBERS)
                ),
            }
        }
    }

    /// Lengths and integers across bincode's varint widths (1, 3, 5 and 9 bytes), repeated
    /// names, and more members than the encoding reader takes.
    #[test]
    fn the_encoding_is_bincodes_across_widths() {
        let long = "x".repeat(300);
        let longer = "y".repeat(4_000);
        let mut keys: Vec<String> = [
            0i64,
            125,
            -125,
            126,
            -126,
            32_767,
            32_768,
            -32_769,
            2_147_483_647,
            -2_147_483_649,
            i64::MAX / 10,
            -(i64::MAX / 10),
        ]
        .iter()
        .map(|n| format!(r#"["c",{{"n":{n}}}]"#))
        .collect();
        keys.push(format!(r#"["{long}",{{"{long}":"{long}"}}]"#));
        keys.push(format!(r#"["c",{{"f":"{longer}","a":1}}]"#));
        keys.push(String::from(r#"["c",{"b":1,"a":"x","b":"y","a":2}]"#));
        keys.push(String::from(r#"["c",{}]"#));
        for key in &keys {
            let (connector, encoding) = read_encoded(key.as_bytes()).expect("Java's layout");
            assert_eq!(
                Some((String::from(connector), encoding.bytes().to_vec())),
                encoded_in_full(key.as_bytes()),
                "{}",
                &key[..key.len().min(80)]
            );
        }
        let many = (0..=MAX_MEMBERS)
            .map(|i| format!(r#""m{i}":{i}"#))
            .collect::<Vec<_>>()
            .join(",");
        let key = format!(r#"["c",{{{many}}}]"#);
        assert!(read_encoded(key.as_bytes()).is_none());
        assert!(read(key.as_bytes()).is_some());
        // Longer strings than the cursor reads: both readers decline, the key is read in full.
        let key = format!(r#"["c",{{"f":"{}"}}]"#, "z".repeat(70_000));
        assert!(read_encoded(key.as_bytes()).is_none() && read(key.as_bytes()).is_none());
    }

    /// Bytes that are not UTF-8 anywhere in a key are declined whole: the general reader
    /// decides what the key reads as.
    #[test]
    fn text_that_is_not_utf8_is_left_to_the_general_reader() {
        let keys: [&[u8]; 3] = [
            b"[\"c\xff\",{\"file\":\"a\"}]",
            b"[\"c\",{\"file\":\"\xed\xa0\x80\"}]",
            b"[\"c\",{\"file\":\"a\"}]\xc3",
        ];
        for key in keys {
            assert!(
                read_encoded(key).is_none() && read(key).is_none(),
                "{key:?}"
            );
        }
    }

    #[test]
    fn java_writes_what_the_layout_reads() {
        use crate::json::JsonValue;
        use crate::offsets::{offset_key, OrderedMap};
        let partitions = [
            OrderedMap::new([("filename", JsonValue::String("/data/é.csv".into()))]),
            OrderedMap::new([
                ("protocol", JsonValue::String("1".into())),
                ("table", JsonValue::String("public.orders".into())),
            ]),
            OrderedMap::new([
                ("topic", JsonValue::String("orders".into())),
                ("partition", JsonValue::Long(-3)),
            ]),
            OrderedMap::new([("offset", JsonValue::Long(i64::MAX / 10))]),
            OrderedMap::new::<&str>([]),
        ];
        for partition in partitions {
            let key = offset_key("file-source", Some(&partition)).expect("a valid partition");
            let read_here = read(&key).map(KeyView::Partition);
            assert_eq!(read_here, Some(view_in_full(&key)), "{partition:?}");
        }
        // An escape, a double, a boolean or a null partition: the general reader reads them.
        for key in [
            &br#"["a\tb",{"x":1}]"#[..],
            br#"["c",{"x":1.5}]"#,
            br#"["c",{"x":true}]"#,
            br#"["c",null]"#,
        ] {
            assert_eq!(read(key), None, "{}", String::from_utf8_lossy(key));
        }
    }
}
