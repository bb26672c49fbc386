//! Entry points for the fuzz targets in `fuzz/` (private: the `__fuzzing` feature). Each takes
//! raw fuzzer bytes, drives the public API and panics only when an invariant breaks.

use alloc::vec::Vec;

use crate::config::ConfigLog;
use crate::history::{Chronicle, History};
use crate::machine::TopicLog;
use crate::offsets::OffsetLog;
use crate::status::StatusLog;
use crate::{Record, Restore, TopicMachine};

/// A record decoded from fuzzer bytes.
#[derive(Debug, Clone)]
pub struct FuzzRecord {
    key: Option<Vec<u8>>,
    value: Option<Vec<u8>>,
    partition: i32,
    offset_step: i64,
}

/// Key prefixes the decoder favours, so most inputs reach the per-type handlers.
const PREFIXES: [&[u8]; 16] = [
    b"connector-",
    b"task-",
    b"commit-",
    b"target-state-",
    b"session-key",
    b"restart-connector-",
    b"tasks-fencing-",
    b"logger-cluster-",
    b"status-connector-",
    b"status-task-",
    b"status-topic-",
    b"[\"c\",",
    b"",
    b"",
    b"",
    b"",
];

/// Reads records as `[control][step][key len][key bytes][value len / 2][value bytes]...`.
/// Control bits 0-3 pick a key prefix (12-15: none), bits 4-5 the partition, bit 6 a null value,
/// bit 7 a null key; the step byte moves the offset by +1 (0), 0 (1), -1 (2), +7 (3) or +1.
/// Never panics.
pub fn decode(mut data: &[u8]) -> Vec<FuzzRecord> {
    fn take(n: usize, data: &mut &[u8]) -> Vec<u8> {
        let n = n.min(data.len());
        let (head, tail) = data.split_at(n);
        *data = tail;
        head.to_vec()
    }
    fn byte(data: &mut &[u8]) -> u8 {
        take(1, data).first().copied().unwrap_or(0)
    }
    let mut records = Vec::new();
    while let Some((&control, rest)) = data.split_first() {
        data = rest;
        let step = byte(&mut data);
        let key_len = byte(&mut data) as usize;
        let mut key = PREFIXES[(control & 0x0f) as usize].to_vec();
        key.extend(take(key_len, &mut data));
        let value_len = byte(&mut data) as usize * 2;
        let value = take(value_len, &mut data);
        records.push(FuzzRecord {
            key: (control & 0x80 == 0).then_some(key),
            value: (control & 0x40 == 0).then_some(value),
            partition: i32::from((control >> 4) & 0x3),
            offset_step: match step {
                1 => 0,
                2 => -1,
                3 => 7,
                _ => 1,
            },
        });
    }
    records
}

/// A decoded record, owned: key, value, partition, offset.
pub type DecodedRecord = (Option<Vec<u8>>, Option<Vec<u8>>, i32, i64);

/// The records `drive` feeds for `data`, owned: key, value, partition and offset (offsets per
/// partition move by each record's step, so they can repeat or go back: redeliveries). The
/// differential tests replay the fuzz seeds through Java with these.
pub fn decoded_records(data: &[u8]) -> Vec<DecodedRecord> {
    let mut offsets = [0i64; 4];
    decode(data)
        .into_iter()
        .map(|record| {
            let p = record.partition as usize;
            let offset = offsets[p].saturating_add(record.offset_step);
            offsets[p] = offset.max(offsets[p]);
            (record.key, record.value, record.partition, offset)
        })
        .collect()
}

/// Feeds records to a machine checking the invariants every machine keeps: no panic, the next
/// fetch offset of a partition never goes back, errors leave the state untouched, and a
/// checkpoint restores to an equal snapshot.
fn drive<M>(data: &[u8], mut machine: M)
where
    M: Restore,
    M::Snapshot: PartialEq + core::fmt::Debug,
{
    let mut offsets = [0i64; 4];
    for (i, record) in decode(data).iter().enumerate() {
        let p = record.partition as usize;
        let offset = offsets[p].saturating_add(record.offset_step);
        offsets[p] = offset.max(offsets[p]);
        let before = machine.next_fetch_offset(record.partition);
        let snapshot_before = machine.snapshot();
        let result = machine.handle_record(Record {
            key: record.key.as_deref(),
            value: record.value.as_deref(),
            offset,
            partition: record.partition,
            timestamp: None,
        });
        while machine.poll_event().is_some() {}
        let after = machine.next_fetch_offset(record.partition);
        assert!(
            after >= before,
            "the next fetch offset went back: {before} -> {after}"
        );
        if result.is_err() {
            assert_eq!(
                machine.snapshot(),
                snapshot_before,
                "an error changed the state"
            );
        }
        if i % 8 == 0 {
            machine.mark_caught_up();
        }
    }
    let restored = M::restore(&machine.checkpoint()).expect("a fresh checkpoint restores");
    assert_eq!(restored.snapshot(), machine.snapshot());
}

/// A history over the records reaches the state a plain log reaches (telling changes never
/// changes the state), and a record that is not applied tells nothing.
fn chronicle<T: Chronicle>(data: &[u8])
where
    T::Snapshot: PartialEq + core::fmt::Debug,
    T::Skip: core::fmt::Debug,
{
    let mut plain = TopicLog::<T>::new();
    let mut history = History::<T>::new();
    let mut offsets = [0i64; 4];
    for record in decode(data) {
        let p = record.partition as usize;
        offsets[p] = offsets[p].saturating_add(record.offset_step);
        let record = Record {
            key: record.key.as_deref(),
            value: record.value.as_deref(),
            offset: offsets[p],
            partition: record.partition,
            timestamp: None,
        };
        let expected = plain.handle_record(record);
        while plain.poll_event().is_some() {}
        match history.handle_record(record) {
            Ok(outcome) => {
                assert_eq!(Ok(outcome.is_applied()), expected.map(|o| o.is_applied()));
                let told = history.poll_event().expect("a record told");
                assert!(history.poll_event().is_none());
                assert_eq!(told.changes.is_some(), outcome.is_applied());
            }
            Err(e) => {
                assert_eq!(Err(e), expected.map(|_| ()));
                assert!(
                    history.poll_event().is_none(),
                    "a refused record is not told"
                );
            }
        }
    }
    assert_eq!(history.log().snapshot(), plain.snapshot());
    // Driven as a machine (in a store), with its checkpoint.
    drive(data, History::<T>::new());
}

/// The config machine's invariants, plus its snapshot's internal consistency.
pub fn config_records(data: &[u8]) {
    drive(data, ConfigLog::new());
    chronicle::<crate::config::ConfigTopic>(data);
    let mut log = ConfigLog::new();
    for (offset, r) in decode(data).iter().enumerate() {
        let _ = log.handle_record(Record {
            key: r.key.as_deref(),
            value: r.value.as_deref(),
            offset: offset as i64,
            partition: 0,
            timestamp: None,
        });
    }
    let snapshot = log.snapshot();
    for c in snapshot.connectors() {
        assert!(
            snapshot.target_state(c).is_some(),
            "{c} has a config but no target state"
        );
        if snapshot.is_inconsistent(c) {
            assert!(snapshot.tasks(c).is_empty());
        }
        assert!(snapshot.tasks(c).len() <= snapshot.task_count(c).max(0) as usize);
    }
    for c in snapshot.inconsistent_connectors() {
        assert!(
            log.diagnostics().inconsistency(c).is_some(),
            "{c} is flagged without a reason"
        );
    }
}

/// The status machine's invariants.
pub fn status_records(data: &[u8]) {
    drive(data, StatusLog::new());
    chronicle::<crate::status::StatusTopic>(data);
}

/// The offsets machine's invariants, plus KIP-875 listings that cover every tracked partition.
pub fn offsets_records(data: &[u8]) {
    drive(data, OffsetLog::new());
    chronicle::<crate::offsets::OffsetTopic>(data);
    let mut log = OffsetLog::new();
    for (offset, r) in decode(data).iter().enumerate() {
        let _ = log.handle_record(Record {
            key: r.key.as_deref(),
            value: r.value.as_deref(),
            offset: offset as i64,
            partition: r.partition,
            timestamp: None,
        });
    }
    let snapshot = log.snapshot();
    let connectors: Vec<_> = snapshot
        .connectors()
        .map(alloc::string::String::from)
        .collect();
    for c in &connectors {
        let listing = crate::offsets::kip875::list(&snapshot, c);
        assert!(listing.offsets.len() <= snapshot.connector_partitions(c).count());
        let _ = crate::offsets::kip875::reset_records(&snapshot, c, 25);
    }
}

/// Checkpoint decoding from arbitrary bytes: refused or restored, never a panic; a restored
/// machine checkpoints back to bytes that restore to the same snapshot.
pub fn checkpoint_bytes(data: &[u8]) {
    use crate::checkpoint::frame;
    use crate::TopicKind;
    // The raw bytes, and the same bytes as the payload of a valid header, so the fuzzer reaches
    // the payload decoder instead of stopping at the checksum.
    restore_all(data);
    for kind in [TopicKind::Config, TopicKind::Status, TopicKind::Offsets] {
        restore_all(&frame(kind, Some(0), data));
    }
}

fn restore_all(data: &[u8]) {
    let _ = crate::checkpoint::check_fresh(data, 0, 1);
    if let Ok(log) = ConfigLog::restore(data) {
        let again = ConfigLog::restore(&log.checkpoint()).expect("re-encoded checkpoint");
        assert_eq!(again.snapshot(), log.snapshot());
    }
    if let Ok(log) = StatusLog::restore(data) {
        let again = StatusLog::restore(&log.checkpoint()).expect("re-encoded checkpoint");
        assert_eq!(again.snapshot(), log.snapshot());
    }
    if let Ok(log) = OffsetLog::restore(data) {
        let again = OffsetLog::restore(&log.checkpoint()).expect("re-encoded checkpoint");
        assert_eq!(again.snapshot(), log.snapshot());
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn entry_points_survive_simple_inputs() {
        for data in [
            &b""[..],
            b"\x00\x05hello\x03{}{}{}",
            b"\xff\xff\xff",
            b"\x0c\x00\x00\x0c\x00\x00",
        ] {
            super::config_records(data);
            super::status_records(data);
            super::offsets_records(data);
            super::checkpoint_bytes(data);
        }
    }
}
