//! Unit tests of the offsets machine, the KIP-131 reader and KIP-875 (spec §4).

use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;

use super::kip875::{self, ModifyOffsetsError};
use super::*;
use crate::config::ConfigLog;

struct Feed {
    log: OffsetLog,
}

impl Feed {
    fn new() -> Self {
        Self {
            log: OffsetLog::new(),
        }
    }

    /// A record on `partition` at that partition's next offset.
    fn put(&mut self, partition: i32, key: Option<&str>, value: Option<&str>) {
        let offset = self.log.next_fetch_offset(partition);
        let record = Record {
            key: key.map(str::as_bytes),
            value: value.map(str::as_bytes),
            offset,
            partition,
            timestamp: None,
        };
        assert!(self.log.handle_record(record).unwrap().is_applied());
    }

    fn snap(&self) -> OffsetSnapshot {
        self.log.snapshot()
    }
}

fn s(v: &str) -> JsonValue {
    JsonValue::String(v.into())
}

fn obj(members: &[(&str, JsonValue)]) -> JsonObject {
    members
        .iter()
        .map(|(k, v)| ((*k).to_string(), v.clone()))
        .collect()
}

fn ordered(members: &[(&str, JsonValue)]) -> OrderedMap {
    OrderedMap::new(members.iter().map(|(k, v)| (*k, v.clone())))
}

#[test]
fn latest_value_per_exact_key_bytes_and_tombstones_remove() {
    let mut feed = Feed::new();
    feed.put(3, Some(r#"["c1",{"f":"a"}]"#), Some(r#"{"pos":10}"#));
    feed.put(3, Some(r#"["c1",{"f":"a"}]"#), Some(r#"{"pos":20}"#));
    feed.put(1, Some(r#"["c1",{"f":"b"}]"#), Some(r#"{"pos":5}"#));
    feed.put(1, Some(r#"["c1",{"f":"b"}]"#), None);
    let snap = feed.snap();
    assert_eq!(snap.len(), 1);
    let stored = snap.get(Some(br#"["c1",{"f":"a"}]"#)).unwrap();
    assert_eq!((stored.partition(), stored.offset()), (3, 1));
    assert_eq!(stored.value(), br#"{"pos":20}"#);
    assert_eq!(snap.get(Some(br#"["c1",{"f":"b"}]"#)), None);
    let partitions: Vec<_> = snap.connector_partitions("c1").collect();
    assert_eq!(partitions, [obj(&[("f", s("a"))])]);
}

#[test]
fn any_key_is_stored_byte_wise_but_only_lists_are_tracked() {
    let mut feed = Feed::new();
    feed.put(0, None, Some("{}"));
    feed.put(0, Some("i-am-not-json"), Some("{}"));
    feed.put(0, Some(""), Some("x"));
    feed.put(0, Some(r#"["c",null]"#), Some(r#"{"a":1}"#));
    feed.put(0, Some(r#"["c"]"#), Some("{}"));
    let snap = feed.snap();
    assert_eq!(snap.len(), 5);
    assert!(snap.get(None).is_some());
    assert_eq!(snap.connectors().count(), 0);
    assert_eq!(feed.log.diagnostics().untracked_keys(), 4);
    assert_eq!(feed.log.diagnostics().null_partition_keys(), 1);
}

#[test]
fn partition_sets_compare_like_java_map_equals() {
    let mut feed = Feed::new();
    // Same map, two member orders: two keys in the data, one partition in the set.
    feed.put(0, Some(r#"["c",{"a":1,"b":2}]"#), Some(r#"{"o":1}"#));
    feed.put(0, Some(r#"["c",{"b":2,"a":1}]"#), Some(r#"{"o":2}"#));
    assert_eq!(feed.snap().len(), 2);
    assert_eq!(feed.snap().connector_partitions("c").count(), 1);
    // A tombstone on one order drops the partition from the set, the other key stays (§6.2).
    feed.put(0, Some(r#"["c",{"b":2,"a":1}]"#), None);
    assert_eq!(feed.snap().connector_partitions("c").count(), 0);
    assert_eq!(feed.snap().len(), 1);
    assert!(
        feed.snap().connectors().any(|c| c == "c"),
        "the set stays, empty"
    );
    // Longs and doubles are different values in Java (1 != 1.0).
    feed.put(0, Some(r#"["d",{"a":1}]"#), Some("{}"));
    feed.put(0, Some(r#"["d",{"a":1.0}]"#), Some("{}"));
    assert_eq!(feed.snap().connector_partitions("d").count(), 2);
    // A first record that is a tombstone still creates the (empty) set.
    feed.put(0, Some(r#"["e",{"a":1}]"#), None);
    assert_eq!(feed.snap().connector_partitions("e").count(), 0);
    assert!(feed.snap().connectors().any(|c| c == "e"));
}

#[test]
fn kip131_reader_matches_exact_key_bytes() {
    let mut feed = Feed::new();
    feed.put(
        0,
        Some(r#"["src",{"file":"a","line":1}]"#),
        Some(r#"{"pos":7}"#),
    );
    feed.put(1, Some(r#"["src",{"file":"n"}]"#), Some("null"));
    feed.put(
        2,
        Some(r#"["src",{"file":"bad"}]"#),
        Some(r#"{"nested":{"x":1}}"#),
    );
    feed.put(2, Some(r#"["src",{"file":"junk"}]"#), Some("not json"));
    let snap = feed.snap();
    let hit = ordered(&[("file", s("a")), ("line", JsonValue::Long(1))]);
    let other_order = ordered(&[("line", JsonValue::Long(1)), ("file", s("a"))]);
    assert_eq!(
        snap.offset("src", &hit),
        Some(obj(&[("pos", JsonValue::Long(7))]))
    );
    assert_eq!(
        snap.offset("src", &other_order),
        None,
        "byte-exact: other order misses"
    );
    assert_eq!(
        snap.offset("other", &hit),
        None,
        "the namespace is the connector"
    );
    let requested = vec![
        hit.clone(),
        hit.clone(),
        ordered(&[("file", s("n"))]),
        ordered(&[("file", s("missing"))]),
        ordered(&[("file", s("bad"))]),
        ordered(&[("file", s("junk"))]),
        ordered(&[("x", JsonValue::Array(vec![]))]),
    ];
    let lookup = snap.offsets("src", &requested);
    let found: Vec<_> = lookup
        .offsets
        .iter()
        .map(|(p, o)| (p.clone(), o.is_some()))
        .collect();
    assert_eq!(
        found,
        vec![
            (hit, true),
            (ordered(&[("file", s("n"))]), false),
            (ordered(&[("file", s("missing"))]), false)
        ],
        "duplicates collapse; stored null and missing both read as None"
    );
    let why: Vec<_> = lookup.omitted.iter().map(|(_, w)| w.clone()).collect();
    assert!(matches!(why[0], Omitted::InvalidValue(_)));
    assert_eq!(why[1], Omitted::ValueNotJson);
    assert!(matches!(why[2], Omitted::InvalidPartition(_)));
}

#[test]
fn kip875_listing_uses_java_hash_map_order() {
    let mut feed = Feed::new();
    // Written in HashMap order (kafka_partition before kafka_topic): found.
    feed.put(
        0,
        Some(r#"["sink",{"kafka_partition":3,"kafka_topic":"t"}]"#),
        Some(r#"{"kafka_offset":1000}"#),
    );
    // Written in another order: listed with a null offset, as Java does.
    feed.put(
        1,
        Some(r#"["src",{"kafka_topic":"t","kafka_partition":1}]"#),
        Some(r#"{"o":1}"#),
    );
    let snap = feed.snap();
    let listing = kip875::list(&snap, "sink");
    assert_eq!(listing.offsets.len(), 1);
    assert_eq!(
        listing.offsets[0].offset,
        Some(ordered(&[("kafka_offset", JsonValue::Long(1000))]))
    );
    let listing = kip875::list(&snap, "src");
    assert_eq!(listing.offsets[0].offset, None);
    assert_eq!(kip875::list(&snap, "nobody").offsets, vec![]);
}

#[test]
fn reset_tombstones_land_where_the_records_live() {
    let mut feed = Feed::new();
    feed.put(
        7,
        Some(r#"["c",{"database":"d","table":"t","shard":1}]"#),
        Some(r#"{"o":1}"#),
    );
    feed.put(2, Some(r#"["c",{"f":"x"}]"#), Some(r#"{"o":2}"#));
    feed.put(4, Some(r#"["other",{"f":"x"}]"#), Some(r#"{"o":3}"#));
    let snap = feed.snap();
    let records = kip875::reset_records(&snap, "c", 25).unwrap();
    let got: Vec<_> = records
        .iter()
        .map(|r| {
            (
                core::str::from_utf8(&r.key).unwrap().to_string(),
                r.value.clone(),
                r.partition,
            )
        })
        .collect();
    // The first key was not in HashMap order (database, shard, table), so its tombstone goes to
    // a different key, placed by the default partitioner; the second lands on partition 2.
    let reordered = r#"["c",{"database":"d","shard":1,"table":"t"}]"#;
    assert_eq!(
        got,
        vec![
            (
                reordered.to_string(),
                None,
                default_partition(reordered.as_bytes(), 25)
            ),
            (r#"["c",{"f":"x"}]"#.to_string(), None, Some(2)),
        ]
    );
    // Applied, the reset leaves the set empty, but the mis-ordered original record survives.
    for r in &records {
        let offset = feed.log.next_fetch_offset(r.partition.unwrap());
        feed.log
            .handle_record(Record {
                key: Some(&r.key),
                value: None,
                offset,
                partition: r.partition.unwrap(),
                timestamp: None,
            })
            .unwrap();
    }
    let after = feed.snap();
    assert_eq!(after.connector_partitions("c").count(), 0);
    assert_eq!(kip875::list(&after, "c").offsets, vec![]);
    assert!(after
        .get(Some(br#"["c",{"database":"d","table":"t","shard":1}]"#))
        .is_some());
    assert!(after.get(Some(br#"["c",{"f":"x"}]"#)).is_none());
    assert_eq!(
        kip875::reset_records(&after, "c", 25).unwrap(),
        vec![],
        "a repeated reset writes nothing"
    );
}

#[test]
fn alter_normalises_to_hash_map_order() {
    let snap = Feed::new().snap();
    let entries = vec![
        (
            Some(ordered(&[
                ("kafka_topic", s("t")),
                ("kafka_partition", JsonValue::Long(3)),
            ])),
            Some(ordered(&[
                ("b", JsonValue::Long(1)),
                ("a", JsonValue::Long(2)),
            ])),
        ),
        (Some(ordered(&[("f", s("gone"))])), None),
    ];
    let records = kip875::alter_records(&snap, "c", &entries, 25).unwrap();
    assert_eq!(
        records[0].key,
        br#"["c",{"kafka_partition":3,"kafka_topic":"t"}]"#
    );
    assert_eq!(records[0].value.as_deref(), Some(&br#"{"a":2,"b":1}"#[..]));
    assert_eq!(records[0].partition, default_partition(&records[0].key, 25));
    assert_eq!(records[1].value, None);
    assert_eq!(
        kip875::alter_records(&snap, "c", &[], 25),
        Err(ModifyOffsetsError::NoOffsets)
    );
    assert_eq!(
        kip875::alter_records(&snap, "c", &entries, 0),
        Err(ModifyOffsetsError::NoTopicPartitions)
    );
}

#[test]
fn modifications_require_a_stopped_connector_with_no_tasks() {
    let mut config = ConfigLog::new();
    let put = |config: &mut ConfigLog, key: &str, value: &str| {
        let offset = config.next_fetch_offset(0);
        config
            .handle_record(Record::new(key.as_bytes(), Some(value.as_bytes()), offset))
            .unwrap();
    };
    put(&mut config, "connector-c", r#"{"properties":{}}"#);
    put(&mut config, "task-c-0", r#"{"properties":{}}"#);
    put(&mut config, "commit-c", r#"{"tasks":1}"#);
    let snap = config.snapshot();
    let not_found = kip875::check_modifiable(&snap, "x").unwrap_err();
    assert_eq!(not_found.to_string(), "Connector x not found");
    assert!(matches!(not_found, ModifyOffsetsError::NotFound { .. }));
    let running = kip875::check_modifiable(&snap, "c").unwrap_err();
    assert!(matches!(running, ModifyOffsetsError::NotStopped { .. }));
    assert!(running.to_string().starts_with(
        "Connectors must be in the STOPPED state before their offsets can be modified."
    ));
    put(
        &mut config,
        "target-state-c",
        r#"{"state":"PAUSED","state.v2":"STOPPED"}"#,
    );
    assert!(
        kip875::check_modifiable(&config.snapshot(), "c").is_err(),
        "still one task"
    );
    put(&mut config, "commit-c", r#"{"tasks":0}"#);
    assert_eq!(kip875::check_modifiable(&config.snapshot(), "c"), Ok(()));
    assert!(kip875::success_message(true).contains("have been reset successfully"));
}

#[test]
fn events_after_catch_up_and_duplicates_skipped() {
    let mut log = OffsetLog::new();
    let key = br#"["c",{"f":"a"}]"#;
    log.handle_record(Record::new(key, Some(b"{}"), 0)).unwrap();
    assert_eq!(log.poll_event(), None);
    log.mark_caught_up();
    log.handle_record(Record::new(key, None, 1)).unwrap();
    assert_eq!(
        log.poll_event(),
        Some(OffsetEvent::Removed {
            key: Some(key.to_vec()),
            partition: 0
        })
    );
    assert_eq!(
        log.handle_record(Record::new(key, Some(b"{}"), 1)).unwrap(),
        RecordOutcome::Skipped(OffsetSkip::Duplicate { next_expected: 2 })
    );
    assert!(log.snapshot().is_empty());
    assert_eq!(log.diagnostics().duplicates(), 1);
}

#[test]
fn checkpoints_round_trip() {
    let mut feed = Feed::new();
    feed.put(3, Some(r#"["c",{"b":1,"a":2}]"#), Some(r#"{"o":1}"#));
    feed.put(0, None, Some("x"));
    let bytes = feed.log.checkpoint();
    let restored = OffsetLog::restore(&bytes).unwrap();
    assert_eq!(restored.snapshot(), feed.snap());
    assert_eq!(restored.next_fetch_offset(3), 1);
    assert_eq!(
        kip875::reset_records(&restored.snapshot(), "c", 5),
        kip875::reset_records(&feed.snap(), "c", 5)
    );
    assert!(OffsetLog::restore(&bytes[..bytes.len() - 1]).is_err());
    assert!(
        ConfigLog::restore(&bytes).is_err(),
        "another topic's checkpoint is refused"
    );
}

#[test]
fn combined_listing_takes_the_connector_topics_answer() {
    let mut worker = Feed::new();
    worker.put(0, Some(r#"["c",{"f":"w"}]"#), Some(r#"{"o":1}"#));
    worker.put(0, Some(r#"["c",{"f":"both"}]"#), Some(r#"{"o":2}"#));
    let mut own = Feed::new();
    own.put(0, Some(r#"["c",{"f":"both"}]"#), Some(r#"{"o":3}"#));
    let listing = kip875::list_combined(&own.snap(), &worker.snap(), "c");
    let got: Vec<_> = listing
        .offsets
        .iter()
        .map(|e| {
            (
                e.partition.to_object(),
                e.offset.as_ref().map(OrderedMap::to_object),
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            (
                obj(&[("f", s("both"))]),
                Some(obj(&[("o", JsonValue::Long(3))]))
            ),
            (obj(&[("f", s("w"))]), None),
        ],
        "the worker topic's value never shows through (Java's overlay)"
    );
}

#[test]
fn reader_collapses_partitions_equal_as_maps() {
    let mut feed = Feed::new();
    feed.put(0, Some(r#"["c",{"a":1,"b":2}]"#), Some(r#"{"o":1}"#));
    feed.put(0, Some(r#"["c",{"b":2,"a":1}]"#), Some(r#"{"o":2}"#));
    let ab = ordered(&[("a", JsonValue::Long(1)), ("b", JsonValue::Long(2))]);
    let ba = ordered(&[("b", JsonValue::Long(2)), ("a", JsonValue::Long(1))]);
    let lookup = feed.snap().offsets("c", &[ab.clone(), ba]);
    assert_eq!(
        lookup.offsets,
        vec![(ab, Some(obj(&[("o", JsonValue::Long(2))])))]
    );
}

#[test]
fn alter_merges_equal_partitions_then_validates_what_is_left() {
    let snap = Feed::new().snap();
    let x = ordered(&[("x", JsonValue::Long(1))]);
    let records = kip875::alter_records(
        &snap,
        "c",
        &[
            (Some(x.clone()), Some(ordered(&[("o", JsonValue::Long(1))]))),
            (Some(x), Some(ordered(&[("o", JsonValue::Long(2))]))),
            (None, Some(ordered(&[("o", JsonValue::Long(3))]))),
            (None, Some(ordered(&[("o", JsonValue::Long(4))]))),
        ],
        25,
    )
    .unwrap();
    assert_eq!(records.len(), 2);
    assert_eq!(records[0].value.as_deref(), Some(&br#"{"o":2}"#[..]));
    // No partition: Java's `["c",null]` key (checked against the Java oracle), merged too.
    assert_eq!(records[1].key, br#"["c",null]"#);
    assert_eq!(records[1].value.as_deref(), Some(&br#"{"o":4}"#[..]));
    let bad = ordered(&[
        ("a", JsonValue::Array(vec![])),
        ("p", JsonValue::Object(JsonObject::new())),
    ]);
    // An invalid offset replaced by a later entry for the same partition is never validated.
    let replaced = kip875::alter_records(
        &snap,
        "c",
        &[
            (Some(bad.clone()), Some(bad.clone())),
            (Some(bad.clone()), None),
        ],
        25,
    );
    assert!(replaced.is_err(), "the partition itself is still validated");
    let x = ordered(&[("x", JsonValue::Long(1))]);
    let records = kip875::alter_records(
        &snap,
        "c",
        &[(Some(x.clone()), Some(bad.clone())), (Some(x), None)],
        25,
    )
    .unwrap();
    assert_eq!(records[0].value, None);
    let err = kip875::alter_records(&snap, "c", &[(Some(bad), None)], 25).unwrap_err();
    assert_eq!(
        err.to_string(),
        "Offsets may only contain primitive types as values, but field a contains ARRAY"
    );
}

#[test]
fn alter_normalises_values_as_the_converter_reads_them_back() {
    // Java writes the request with JsonConverter and reads it back: decimals go through
    // BigDecimal, so -0.0 becomes 0.0 (found by the Java oracle).
    let snap = Feed::new().snap();
    let negative_zero = JsonValue::Double(crate::json::JavaDouble::new(-0.0));
    let records = kip875::alter_records(
        &snap,
        "c",
        &[(
            Some(ordered(&[("f", negative_zero.clone())])),
            Some(ordered(&[("o", negative_zero)])),
        )],
        25,
    )
    .unwrap();
    assert_eq!(records[0].key, br#"["c",{"f":0.0}]"#);
    assert_eq!(records[0].value.as_deref(), Some(&br#"{"o":0.0}"#[..]));
}

#[test]
fn listing_offsets_use_java_hash_map_order() {
    let mut feed = Feed::new();
    feed.put(0, Some(r#"["c",{"f":"a"}]"#), Some(r#"{"z":1,"p":2.5E7}"#));
    let listing = kip875::list(&feed.snap(), "c");
    let offset = listing.offsets[0].offset.clone().unwrap();
    let names: Vec<&str> = offset.members().iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["p", "z"]);
}

#[test]
fn large_keys_and_listings() {
    // One key with 50,000 members and a connector with 20,000 partitions (the code paths are
    // linear; quadratic ones took tens of seconds here).
    let members: Vec<String> = (0..50_000)
        .map(|i| alloc::format!("\"m{i}\":{i}"))
        .collect();
    let key = alloc::format!("[\"c\",{{{}}}]", members.join(","));
    let mut log = OffsetLog::new();
    log.handle_record(Record::new(key.as_bytes(), Some(b"{}"), 0))
        .unwrap();
    for i in 0..20_000 {
        let key = alloc::format!("[\"d\",{{\"file\":\"f-{i:08}.csv\"}}]");
        log.handle_record(Record::new(key.as_bytes(), Some(b"{\"pos\":1}"), i + 1))
            .unwrap();
    }
    let snap = log.snapshot();
    assert_eq!(kip875::list(&snap, "d").offsets.len(), 20_000);
    assert_eq!(kip875::list(&snap, "c").offsets.len(), 1);
}

/// bincode claims every integer's full width, so a checkpoint of many small offsets claims more
/// bytes than it holds; it must still restore at every size (it once failed just below 64 KiB).
#[test]
fn checkpoints_whose_claims_exceed_their_size_restore() {
    let mut log = OffsetLog::new();
    let mut tested = 0;
    for i in 0..6000i64 {
        let key = alloc::format!("[\"c\",{{\"p\":{i}}}]");
        log.handle_record(Record {
            key: Some(key.as_bytes()),
            value: Some(b"{\"o\":1}"),
            offset: i,
            partition: (i % 3) as i32,
            timestamp: None,
        })
        .unwrap();
        if i % 50 == 0 {
            let bytes = log.checkpoint();
            if (40_000..=70_000).contains(&bytes.len()) {
                let restored = OffsetLog::restore(&bytes).unwrap();
                assert_eq!(restored.snapshot(), log.snapshot(), "{} bytes", bytes.len());
                tested += 1;
            }
        }
    }
    assert!(tested > 5, "the sizes around 64 KiB were not reached");
}

/// KIP-875 writes as plans: one batch from the privileged producer (one transaction on an
/// exactly-once worker), not read back, with Java's message for a failed write.
#[test]
fn alter_and_reset_plans_are_one_privileged_batch_with_javas_message() {
    use crate::plan::{ProducerKind, StepAction};
    let mut feed = Feed::new();
    feed.put(2, Some(r#"["c",{"f":"x"}]"#), Some(r#"{"o":2}"#));
    let snap = feed.snap();
    let reset = kip875::reset_plan(&snap, "c", 25).unwrap();
    let alter = kip875::alter_plan(
        &snap,
        "c",
        &[(
            Some(OrderedMap::new([("f", JsonValue::String("y".into()))])),
            Some(OrderedMap::new([("o", JsonValue::Long(3))])),
        )],
        25,
    )
    .unwrap();
    for (plan, records) in [
        (&reset, kip875::reset_records(&snap, "c", 25).unwrap()),
        (
            &alter,
            alter.records().cloned().collect::<alloc::vec::Vec<_>>(),
        ),
    ] {
        assert_eq!(plan.steps.len(), 1, "no read-back");
        let step = &plan.steps[0];
        assert_eq!(
            step.error_message,
            "Failed to modify offsets for source connector c"
        );
        match &step.action {
            StepAction::Produce {
                producer,
                records: produced,
            } => {
                assert_eq!(*producer, ProducerKind::Privileged);
                assert_eq!(produced, &records);
            }
            StepAction::ReadToEnd => panic!("a read-back step"),
        }
    }
}

/// Partitions that differ as Jackson reads them but are equal once normalised collapse again
/// (Java's second `HashMap`): the differential soak's case 1283 of seed 15, where Java writes one
/// record for `{"filename":-0.0}` and `{"filename":1e-400}` with the second entry's offset.
#[test]
fn alter_collapses_partitions_equal_once_normalised_as_java_does() {
    use crate::json::JavaDouble;
    let snap = Feed::new().snap();
    let filename = |v: f64| ordered(&[("filename", JsonValue::Double(JavaDouble::new(v)))]);
    let records = kip875::alter_records(
        &snap,
        "b",
        &[
            (
                Some(filename(-0.0)),
                Some(ordered(&[("g", JsonValue::Bool(true))])),
            ),
            (Some(filename(0.0)), Some(ordered(&[]))),
        ],
        25,
    )
    .unwrap();
    assert_eq!(records.len(), 1, "{records:?}");
    assert_eq!(records[0].key, br#"["b",{"filename":0.0}]"#);
    assert_eq!(records[0].value.as_deref(), Some(&b"{}"[..]));
}

#[test]
fn a_connectors_records_are_its_tracked_keys_live_records_by_key_bytes() {
    let mut f = Feed::new();
    f.put(3, Some(r#"["b",{"f":"2"}]"#), Some(r#"{"pos":2}"#));
    f.put(1, Some(r#"["a",{"f":"9"}]"#), Some(r#"{"pos":9}"#));
    f.put(0, Some(r#"["b",{"f":"1"}]"#), Some(r#"{"pos":1}"#));
    f.put(0, Some(r#"["b",null]"#), Some(r#"{"pos":0}"#));
    f.put(2, Some(r#"["b",{"f":"3"}]"#), Some(r#"{"pos":3}"#));
    f.put(2, Some(r#"["b",{"f":"3"}]"#), None);
    f.put(4, Some("not json"), Some("{}"));
    let snapshot = f.snap();
    let records: Vec<(&[u8], i32, &[u8])> = snapshot
        .connector_records("b")
        .into_iter()
        .map(|(key, stored)| (key, stored.partition(), stored.value()))
        .collect();
    assert_eq!(
        records,
        [
            (&br#"["b",{"f":"1"}]"#[..], 0, &br#"{"pos":1}"#[..]),
            (&br#"["b",{"f":"2"}]"#[..], 3, &br#"{"pos":2}"#[..]),
        ]
    );
    assert_eq!(snapshot.connector_records("a").len(), 1);
    assert!(snapshot.connector_records("c").is_empty());
}

#[test]
fn a_renamed_key_keeps_the_partitions_member_order() {
    assert_eq!(
        renamed_key(br#"["old",{"z":1,"a":"x","z":2}]"#, "new-name").as_deref(),
        Some(&br#"["new-name",{"z":2,"a":"x"}]"#[..])
    );
    assert_eq!(
        renamed_key(br#"[ "old" , { "file" : "a\u0041" } ]"#, "n").as_deref(),
        Some(&br#"["n",{"file":"aA"}]"#[..])
    );
    assert_eq!(renamed_key(br#"["old",null]"#, "n"), None);
    assert_eq!(renamed_key(br#"["old",{"nested":{"a":1}}]"#, "n"), None);
    assert_eq!(renamed_key(b"not json", "n"), None);
}

/// The slot hash's encoding is bincode's, whether it fits the stack buffer or spills past it.
#[test]
fn partition_encoding_is_bincodes_below_and_above_the_stack_buffer() {
    for filler_len in [0usize, 10, 200, 250, 300, 5_000] {
        let key = alloc::format!(
            r#"["c",{{"b":1.5,"a":"{}","c":[true,null,{{"x":-7}}]}}]"#,
            "é".repeat(filler_len)
        );
        let KeyView::Partition(view) = partition_key::view(Some(key.as_bytes())) else {
            panic!("{key} is a partition key");
        };
        let expected = bincode::serde::encode_to_vec(
            json::SortedObject(&view.partition),
            bincode::config::standard(),
        )
        .expect("encodes");
        assert_eq!(
            compact_partition(&view.partition).bytes(),
            &expected[..],
            "{filler_len}"
        );
    }
}

#[test]
fn the_snapshot_document_with_listings_given_is_the_document_computed_as_written() {
    let mut feed = Feed::new();
    feed.put(0, Some(r#"["b",{"f":"x","g":"y"}]"#), Some(r#"{"pos":1}"#));
    feed.put(1, Some(r#"["a",{"f":"z"}]"#), Some(r#"{"pos":2,"at":"t"}"#));
    feed.put(2, Some(r#"["a",{"g":"w","f":"v"}]"#), Some("null"));
    feed.put(3, Some("not a list"), Some(r#"{"pos":3}"#));
    let snap = feed.snap();
    let connectors: Vec<&str> = snap.connectors().collect();
    assert_eq!(connectors, ["a", "b"]);
    let computed = serde_json::to_string(&OffsetSnapshotJson(&snap)).unwrap();
    let listings = connectors.iter().map(|c| kip875::list(&snap, c));
    let given = serde_json::to_string(&OffsetSnapshotJsonWith::new(&snap, listings)).unwrap();
    assert_eq!(given, computed);
    assert!(computed.contains(r#""connectors":{"a":{"offsets":["#));
    // Listings that end before the connectors do are an error, not a shorter document.
    let short = OffsetSnapshotJsonWith::new(
        &snap,
        connectors[..1].iter().map(|c| kip875::list(&snap, c)),
    );
    let error = serde_json::to_string(&short).unwrap_err();
    assert!(error
        .to_string()
        .contains("listings ended before the connectors"));
}
