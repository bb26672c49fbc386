//! The cleaner of spec §1: horizon, active segment, latest per key, tombstones, gaps.

use super::{cluster_with, kv, read_all, single, stored_offsets};
use crate::{Isolation, RecordKind, TopicConfig};

#[test]
fn offsets_never_change_and_gaps_appear() {
    let mut c = single(100);
    let offsets = c
        .append(
            "t",
            0,
            &[
                kv("a", Some("1")),
                kv("b", Some("1")),
                kv("a", Some("2")),
                kv("c", Some("1")),
                kv("b", Some("2")),
            ],
        )
        .unwrap();
    assert_eq!(offsets, vec![0, 1, 2, 3, 4]);
    c.roll_segment("t", 0).unwrap();
    let cleaned = c.clean("t", 0, None).unwrap();
    assert_eq!((cleaned.horizon, cleaned.removed), (5, 2));
    assert_eq!(
        read_all(&c, 0, 0, Isolation::ReadUncommitted),
        vec![
            (2, "a".into(), Some("2".into())),
            (3, "c".into(), Some("1".into())),
            (4, "b".into(), Some("2".into())),
        ]
    );
    // New appends continue from the high watermark, not from the number of records left.
    assert_eq!(c.append("t", 0, &[kv("d", Some("1"))]).unwrap(), vec![5]);
    assert_eq!(c.high_watermark("t", 0).unwrap(), 6);
    // Cleaning again changes nothing that is already clean.
    assert_eq!(c.clean("t", 0, None).unwrap().removed, 0);
    assert_eq!(stored_offsets(&c, 0), vec![2, 3, 4, 5]);
}

#[test]
fn the_active_segment_is_never_cleaned() {
    let mut c = single(4);
    let batch: Vec<_> = (0..6).map(|i| kv("a", Some(&i.to_string()))).collect();
    c.append("t", 0, &batch).unwrap();
    assert_eq!(c.segment_base_offsets("t", 0).unwrap(), vec![0, 4]);
    assert_eq!(c.cleanable_horizon("t", 0).unwrap(), 4);
    let cleaned = c.clean("t", 0, None).unwrap();
    assert_eq!((cleaned.horizon, cleaned.removed), (4, 3));
    // Offset 3 is the latest "a" below the horizon; 4 and 5 are in the active segment.
    assert_eq!(stored_offsets(&c, 0), vec![3, 4, 5]);
    // An explicit horizon cannot reach into the active segment either.
    assert_eq!(c.clean("t", 0, Some(100)).unwrap().horizon, 4);
    assert_eq!(stored_offsets(&c, 0), vec![3, 4, 5]);
    // Rolling makes the whole log cleanable.
    c.roll_segment("t", 0).unwrap();
    assert_eq!(c.segment_base_offsets("t", 0).unwrap(), vec![0, 4, 6]);
    c.clean("t", 0, None).unwrap();
    assert_eq!(stored_offsets(&c, 0), vec![5]);
    // Rolling an empty active segment is a no-op.
    c.roll_segment("t", 0).unwrap();
    assert_eq!(c.segment_base_offsets("t", 0).unwrap(), vec![0, 4, 6]);
}

#[test]
fn cleaning_respects_an_explicit_lower_horizon() {
    let mut c = single(100);
    let batch: Vec<_> = (0..6).map(|i| kv("a", Some(&i.to_string()))).collect();
    c.append("t", 0, &batch).unwrap();
    c.roll_segment("t", 0).unwrap();
    let cleaned = c.clean("t", 0, Some(3)).unwrap();
    assert_eq!((cleaned.horizon, cleaned.removed), (3, 2));
    // 2 is the latest "a" below 3; the later ones at or beyond the horizon do not shadow it.
    assert_eq!(stored_offsets(&c, 0), vec![2, 3, 4, 5]);
    assert_eq!(c.clean("t", 0, Some(-5)).unwrap().horizon, 0);
    assert_eq!(c.clean("t", 0, Some(0)).unwrap().removed, 0);
}

#[test]
fn compaction_keeps_the_latest_record_per_key_below_the_horizon() {
    // Segments of 3: the horizon is 3 after four appends.
    let mut c = single(3);
    c.append(
        "t",
        0,
        &[
            kv("a", Some("1")),
            kv("b", Some("1")),
            kv("a", Some("2")),
            kv("a", Some("3")),
        ],
    )
    .unwrap();
    c.clean("t", 0, None).unwrap();
    // "a"@2 survives: the later "a"@3 is beyond the horizon.
    assert_eq!(stored_offsets(&c, 0), vec![1, 2, 3]);
    // Keys compare as raw bytes: "A" and "a" are different keys.
    c.append("t", 0, &[kv("A", Some("x")), kv("b", Some("2"))])
        .unwrap();
    c.roll_segment("t", 0).unwrap();
    c.clean("t", 0, None).unwrap();
    assert_eq!(
        read_all(&c, 0, 0, Isolation::ReadUncommitted),
        vec![
            (3, "a".into(), Some("3".into())),
            (4, "A".into(), Some("x".into())),
            (5, "b".into(), Some("2".into())),
        ]
    );
}

#[test]
fn min_compaction_lag_holds_back_the_horizon() {
    let mut c = cluster_with(
        TopicConfig::compacted(1)
            .with_segment_records(100)
            .with_min_compaction_lag_ms(100),
    );
    c.append("t", 0, &[kv("a", Some("1"))]).unwrap();
    c.advance_clock(50);
    c.append("t", 0, &[kv("a", Some("2"))]).unwrap();
    c.roll_segment("t", 0).unwrap();
    // Both records are younger than 100 ms.
    assert_eq!(c.clean("t", 0, None).unwrap().horizon, 0);
    c.advance_clock(60);
    // Only the first is old enough: it is the latest "a" below the horizon, so it stays.
    let cleaned = c.clean("t", 0, None).unwrap();
    assert_eq!((cleaned.horizon, cleaned.removed), (1, 0));
    c.advance_clock(50);
    let cleaned = c.clean("t", 0, None).unwrap();
    assert_eq!((cleaned.horizon, cleaned.removed), (2, 1));
    assert_eq!(stored_offsets(&c, 0), vec![1]);
    assert_eq!(c.records("t", 0).unwrap()[0].timestamp_ms, 50);
}

#[test]
fn a_tombstone_is_kept_for_delete_retention_after_the_first_pass_that_covers_it() {
    let mut c = cluster_with(
        TopicConfig::compacted(1)
            .with_segment_records(100)
            .with_delete_retention_ms(100),
    );
    c.append(
        "t",
        0,
        &[kv("a", Some("1")), kv("b", Some("1")), kv("a", None)],
    )
    .unwrap();
    // Not yet covered by any pass: time passing alone removes nothing.
    c.advance_clock(1_000);
    c.roll_segment("t", 0).unwrap();
    assert_eq!(c.clean("t", 0, None).unwrap().removed, 1);
    assert_eq!(stored_offsets(&c, 0), vec![1, 2]);
    c.advance_clock(99);
    assert_eq!(c.clean("t", 0, None).unwrap().removed, 0);
    assert_eq!(
        read_all(&c, 0, 0, Isolation::ReadUncommitted)[1],
        (2, "a".into(), None)
    );
    c.advance_clock(1);
    assert_eq!(c.clean("t", 0, None).unwrap().removed, 1);
    // Nothing of "a" remains; "b" is untouched.
    assert_eq!(stored_offsets(&c, 0), vec![1]);
}

#[test]
fn zero_delete_retention_still_needs_a_later_pass() {
    let mut c = cluster_with(
        TopicConfig::compacted(1)
            .with_segment_records(100)
            .with_delete_retention_ms(0),
    );
    c.append("t", 0, &[kv("a", None)]).unwrap();
    c.roll_segment("t", 0).unwrap();
    assert_eq!(c.clean("t", 0, None).unwrap().removed, 0);
    assert_eq!(c.clean("t", 0, None).unwrap().removed, 1);
    assert!(c.records("t", 0).unwrap().is_empty());
}

#[test]
fn a_tombstone_shadowed_by_a_later_record_goes_in_the_same_pass() {
    let mut c = single(100);
    c.append(
        "t",
        0,
        &[kv("a", Some("1")), kv("a", None), kv("a", Some("2"))],
    )
    .unwrap();
    c.roll_segment("t", 0).unwrap();
    assert_eq!(c.clean("t", 0, None).unwrap().removed, 2);
    assert_eq!(stored_offsets(&c, 0), vec![2]);
}

#[test]
fn keyless_records_are_never_compacted_away() {
    let mut c = single(100);
    c.append(
        "t",
        0,
        &[
            (None, Some(b"x".to_vec())),
            (None, None),
            (None, Some(b"y".to_vec())),
        ],
    )
    .unwrap();
    c.roll_segment("t", 0).unwrap();
    c.advance_clock(u64::MAX);
    c.clean("t", 0, None).unwrap();
    c.clean("t", 0, None).unwrap();
    assert_eq!(stored_offsets(&c, 0), vec![0, 1, 2]);
}

#[test]
fn a_topic_without_compact_policy_is_never_cleaned() {
    let mut c = cluster_with(
        TopicConfig::compacted(1)
            .with_segment_records(1)
            .with_cleanup_policy("delete"),
    );
    c.append("t", 0, &[kv("a", Some("1")), kv("a", Some("2"))])
        .unwrap();
    c.roll_segment("t", 0).unwrap();
    assert_eq!(c.clean("t", 0, None).unwrap().horizon, 0);
    assert_eq!(stored_offsets(&c, 0), vec![0, 1]);
}

#[test]
fn clean_all_cleans_every_partition() {
    let mut c = cluster_with(TopicConfig::compacted(2).with_segment_records(2));
    for p in 0..2 {
        c.append(
            "t",
            p,
            &[kv("a", Some("1")), kv("a", Some("2")), kv("z", Some("1"))],
        )
        .unwrap();
    }
    let passes = c.clean_all("t").unwrap();
    assert_eq!(passes.len(), 2);
    assert!(passes.iter().all(|p| p.removed == 1 && p.horizon == 2));
    assert_eq!(stored_offsets(&c, 1), vec![1, 2]);
    assert!(c.clean_all("missing").is_err());
}

#[test]
fn aborted_records_and_markers_are_removed_below_the_horizon() {
    let mut c = single(100);
    let producer = c.init_transactions("tx");
    c.begin_transaction(producer).unwrap();
    let records = [engine::ProducerRecord {
        key: b"a".to_vec(),
        value: Some(b"aborted".to_vec()),
        partition: Some(0),
    }];
    c.send_transactional(producer, "t", &records).unwrap();
    c.abort_transaction(producer).unwrap();
    c.begin_transaction(producer).unwrap();
    c.send_transactional(producer, "t", &records).unwrap();
    c.commit_transaction(producer).unwrap();
    let kinds: Vec<_> = c.records("t", 0).unwrap().iter().map(|r| r.kind).collect();
    assert_eq!(
        kinds,
        vec![
            RecordKind::Transactional(crate::TxnState::Aborted),
            RecordKind::Marker { committed: false },
            RecordKind::Transactional(crate::TxnState::Committed),
            RecordKind::Marker { committed: true },
        ]
    );
    c.roll_segment("t", 0).unwrap();
    assert_eq!(c.clean("t", 0, None).unwrap().removed, 3);
    assert_eq!(stored_offsets(&c, 0), vec![2]);
    // The committed record stays committed after its marker is gone.
    assert_eq!(
        c.records("t", 0).unwrap()[0].kind,
        RecordKind::Transactional(crate::TxnState::Committed)
    );
    assert_eq!(read_all(&c, 0, 0, Isolation::ReadCommitted).len(), 1);
}
