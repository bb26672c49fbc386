//! Differential testing: one [`Case`] through the core and through Java's own stores (the
//! [oracle](crate::oracle)), compared under the README's table of deliberate differences.
//!
//! Every rule of that table that the comparison applies is a [`Deliberate`] variant; anything
//! else that differs is a [`Difference`], i.e. a bug (Java wins).

use std::collections::BTreeSet;
use std::fmt;

use engine::config::{ConfigEventJson, ConfigLog, ConfigSkip, ConfigSnapshotJson};
use engine::offsets::{OffsetLog, OffsetSkip, OffsetSnapshotJson};
use engine::status::{StatusLog, StatusSkip, StatusSnapshotJson};
use engine::{Record, RecordOutcome};

use crate::oracle::{Case, CaseRecord, JavaAnswer, Json, Oracle, Phase, Topic};

/// A row of the README's "Where we deliberately differ from Java" table that a comparison
/// applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Deliberate {
    /// Item 1: Java throws out of its record handler (a non-integer task count, a bad session
    /// key, a null key), which drops the rest of its poll batch or fails start-up; we skip only
    /// that record. Compared with one record per poll batch, where the two agree.
    JavaThrows,
    /// Item 5: a lone UTF-16 surrogate escape (`"\uD800"`) is a lone surrogate in Java's
    /// String and U+FFFD here (a Rust string cannot hold it); the oracle writes it as U+FFFD.
    LoneSurrogate,
    /// Item 3: a redelivered record (offset below the partition's next one) is dropped; Java's
    /// consumer never redelivers, so Java is fed what a consumer hands over, computed by the
    /// judge ([`consumer_view`]), and the core must drop exactly the others.
    Redelivery,
    /// Item 9: `putSafe` over a cached status without a worker id throws Java's
    /// NullPointerException; the core counts the cached status as another worker's.
    SafeWriteOverNullWorker,
    /// Item 11: a KIP-875 record for a key the topic holds goes to the partition of the key's
    /// live record; Java's goes where murmur2 puts it.
    KeyRouting,
    /// Item 8: connect-state prints doubles as Java 19+ does; on an older JVM (outside CI,
    /// which requires Java 19+) a written record whose bytes differ is excused when both sides'
    /// bytes hold a double (JDK-4511638), and nothing else.
    OldJavaDoubles,
    /// Item 7: `ClusterConfigState.tasks` throws for a negative task count; we list no tasks.
    NegativeTaskCount,
    /// Item 14: a connector's task list longer than `MAX_LISTED_TASKS` is cut to that many in
    /// the JSON contract, with the full count under `tasks_truncated`; Java lists every id.
    LongTaskList,
    /// Item 18: after a config record at offset `i64::MAX` (which no broker can hold: its log
    /// end offset would overflow) Java's `offset + 1` wraps to `Long.MIN_VALUE`; the core's
    /// snapshot offset stays `i64::MAX`.
    OffsetAtTheEnd,
}

impl Deliberate {
    /// The item number in the README's table.
    pub fn readme_item(self) -> u32 {
        match self {
            Self::JavaThrows => 1,
            Self::Redelivery => 3,
            Self::LoneSurrogate => 5,
            Self::NegativeTaskCount => 7,
            Self::OldJavaDoubles => 8,
            Self::SafeWriteOverNullWorker => 9,
            Self::KeyRouting => 11,
            Self::LongTaskList => 14,
            Self::OffsetAtTheEnd => 18,
        }
    }
}

/// What the core made of a record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// The record's partition.
    pub partition: i32,
    /// The record's offset.
    pub offset: i64,
    /// The skip reason, if skipped.
    pub skip: Option<String>,
    /// Whether the skip is one where Java throws.
    pub java_throws: bool,
    /// Whether the record was dropped as a redelivery.
    pub redelivered: bool,
}

/// The core's answer to a case.
#[derive(Debug, Clone, PartialEq)]
pub struct Ours {
    /// The snapshot in the JSON contract.
    pub snapshot: Json,
    /// Events (config only: status and offsets events have no Java counterpart, item 10).
    pub events: Vec<Json>,
    /// Status and offsets with a start-up boundary: the snapshot after each record read after
    /// it (as the oracle's `trace`).
    pub trace: Vec<Json>,
    /// One outcome per record.
    pub outcomes: Vec<Outcome>,
}

impl Ours {
    /// The trace's states after the records a consumer hands over ([`consumer_view`]): the
    /// core's state after a redelivery it dropped has no counterpart in Java's trace.
    fn trace_of_handed_over<'a>(&'a self, case: &Case) -> impl Iterator<Item = &'a Json> + 'a {
        let (_, redelivered) = consumer_view(&case.records);
        // The trace has one state per record from the first one read live.
        let first_live = self.outcomes.len() - self.trace.len();
        self.trace
            .iter()
            .enumerate()
            .filter(move |(i, _)| !redelivered.contains(&(first_live + i)))
            .map(|(_, state)| state)
    }
}

/// How a skip relates to Java.
trait SkipFacts {
    fn java_throws(&self) -> bool;
    fn redelivered(&self) -> bool;
    fn describe(&self) -> String;
}

impl SkipFacts for ConfigSkip {
    fn java_throws(&self) -> bool {
        Self::java_throws(self)
    }
    fn redelivered(&self) -> bool {
        matches!(self, Self::Duplicate { .. })
    }
    fn describe(&self) -> String {
        self.to_string()
    }
}

impl SkipFacts for StatusSkip {
    fn java_throws(&self) -> bool {
        Self::java_throws(self)
    }
    fn redelivered(&self) -> bool {
        matches!(self, Self::Duplicate { .. })
    }
    fn describe(&self) -> String {
        self.to_string()
    }
}

impl SkipFacts for OffsetSkip {
    fn java_throws(&self) -> bool {
        false
    }
    fn redelivered(&self) -> bool {
        matches!(self, Self::Duplicate { .. })
    }
    fn describe(&self) -> String {
        format!("{self:?}")
    }
}

/// Feeds a case to a fresh machine, marking it caught up at `live_from`, as the oracle starts
/// its store there; `observe` sees the machine after each record read after that. With
/// `restart_at`, the machine is checkpointed before that record and the rest of the log is
/// fed to the machine restored from the checkpoint (a restart that reads only the tail).
fn feed<M>(
    case: &Case,
    restart_at: Option<usize>,
    mut observe: impl FnMut(&M),
) -> (M, Vec<M::Event>, Vec<Outcome>)
where
    M: engine::Restore + Default,
    M::Skip: SkipFacts,
{
    let mut machine = M::default();
    let mut events = Vec::new();
    let mut outcomes = Vec::new();
    // As the oracle: started at the first record handed over at or after `live_from`.
    let (_, redelivered) = consumer_view(&case.records);
    for (i, r) in case.records.iter().enumerate() {
        if restart_at == Some(i) {
            let caught_up = machine.is_caught_up();
            machine = M::restore(&machine.checkpoint())
                .unwrap_or_else(|e| panic!("a checkpoint the core took does not restore: {e}"));
            // A restored machine starts reading its tail as a start-up read; here the restart
            // stands in for the same worker going on, so it is live again where it was.
            if caught_up && !machine.is_caught_up() {
                machine.mark_caught_up();
                events.extend(core::iter::from_fn(|| machine.poll_event()));
            }
        }
        if !machine.is_caught_up()
            && !redelivered.contains(&i)
            && case.live_from.is_some_and(|from| r.offset >= from)
        {
            machine.mark_caught_up();
        }
        let outcome = machine
            .handle_record(Record {
                key: r.key.as_deref(),
                value: r.value.as_deref(),
                offset: r.offset,
                partition: r.partition,
                timestamp: None,
            })
            .unwrap_or_else(|e| panic!("the core refused a generated record: {e}"));
        events.extend(core::iter::from_fn(|| machine.poll_event()));
        if machine.is_caught_up() {
            observe(&machine);
        }
        let skip = match &outcome {
            RecordOutcome::Skipped(s) => Some(s),
            // A bare machine withholds nothing (only layers do).
            RecordOutcome::Applied | RecordOutcome::Withheld => None,
        };
        outcomes.push(Outcome {
            partition: r.partition,
            offset: r.offset,
            skip: skip.map(SkipFacts::describe),
            java_throws: skip.is_some_and(SkipFacts::java_throws),
            redelivered: skip.is_some_and(SkipFacts::redelivered),
        });
    }
    machine.mark_caught_up();
    (machine, events, outcomes)
}

/// Runs a case through the core.
pub fn ours(case: &Case) -> Ours {
    ours_restarted(case, None)
}

/// [`ours`], with the core checkpointed before record `restart_at` and restored from it.
pub fn ours_restarted(case: &Case, restart_at: Option<usize>) -> Ours {
    match case.topic {
        Topic::Config => {
            let (log, events, outcomes) = feed::<ConfigLog>(case, restart_at, |_| {});
            Ours {
                snapshot: Json::of(&ConfigSnapshotJson(&log.snapshot())),
                events: events
                    .iter()
                    .map(|e| Json::of(&ConfigEventJson(e)))
                    .collect(),
                trace: Vec::new(),
                outcomes,
            }
        }
        Topic::Status => {
            let mut trace = Vec::new();
            let (log, _, outcomes) = feed::<StatusLog>(case, restart_at, |log| {
                trace.push(Json::of(&StatusSnapshotJson(&log.snapshot())));
            });
            Ours {
                snapshot: Json::of(&StatusSnapshotJson(&log.snapshot())),
                events: Vec::new(),
                trace,
                outcomes,
            }
        }
        Topic::Offsets => {
            let mut trace = Vec::new();
            let (log, _, outcomes) = feed::<OffsetLog>(case, restart_at, |log| {
                trace.push(Json::of(&OffsetSnapshotJson(&log.snapshot())));
            });
            Ours {
                snapshot: Json::of(&OffsetSnapshotJson(&log.snapshot())),
                events: Vec::new(),
                trace,
                outcomes,
            }
        }
    }
}

/// The records a consumer hands over of `records`, and the indexes of the ones it does not
/// (redeliveries). The judge's own rule, computed from the records alone: per partition a
/// consumer reads on from the offset after the last record it handed over, so a record below
/// that offset is never handed over again. Offsets are counted in `i128`, so a record at
/// `i64::MAX` moves the position past every offset.
pub fn consumer_view(records: &[CaseRecord]) -> (Vec<CaseRecord>, BTreeSet<usize>) {
    let mut next: std::collections::BTreeMap<i32, i128> = std::collections::BTreeMap::new();
    let mut handed = Vec::with_capacity(records.len());
    let mut redelivered = BTreeSet::new();
    for (i, r) in records.iter().enumerate() {
        let position = next.entry(r.partition).or_insert(0);
        if i128::from(r.offset) < *position {
            redelivered.insert(i);
        } else {
            *position = i128::from(r.offset) + 1;
            handed.push(r.clone());
        }
    }
    (handed, redelivered)
}

/// The case Java is fed: the records a consumer hands over ([`consumer_view`]).
pub fn java_case(case: &Case) -> Case {
    let mut java = case.clone();
    java.records = consumer_view(&case.records).0;
    java
}

/// Checks that the core dropped as redeliveries exactly the records a consumer would not hand
/// over ([`consumer_view`]): a core that drops a fresh record, or applies a redelivery, differs.
pub fn check_redeliveries(case: &Case, ours: &Ours) -> Result<(), Difference> {
    let (_, expected) = consumer_view(&case.records);
    let dropped: BTreeSet<usize> = ours
        .outcomes
        .iter()
        .enumerate()
        .filter(|(_, o)| o.redelivered)
        .map(|(i, _)| i)
        .collect();
    if dropped == expected {
        return Ok(());
    }
    let at = |i: &usize| {
        let r = &case.records[*i];
        format!("record {i} ({}:{})", r.partition, r.offset)
    };
    let fresh: Vec<String> = dropped.difference(&expected).map(at).collect();
    let applied: Vec<String> = expected.difference(&dropped).map(at).collect();
    Err(Difference {
        what: format!(
            "redeliveries: the core dropped as duplicates the fresh {fresh:?} and applied the \
             redelivered {applied:?}"
        ),
        case: case.clone(),
    })
}

/// A disagreement between the core and Java that no deliberate difference explains.
#[derive(Debug, Clone)]
pub struct Difference {
    /// What differs.
    pub what: String,
    /// The case (as fed to the core).
    pub case: Case,
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "the core and Java differ: {}", self.what)?;
        writeln!(
            f,
            "case ({} topic, live from {:?}), as kcat lines:",
            self.case.topic.as_str(),
            self.case.live_from
        )?;
        f.write_str(&kcat_lines(&self.case.records))
    }
}

/// Records as kcat JSON lines (text keys and values; other bytes lossily), for reproducing a
/// difference with `connect-state replay` and `tests/java-oracle/oracle replay`.
pub fn kcat_lines(records: &[CaseRecord]) -> String {
    records
        .iter()
        .map(|r| {
            let text = |b: &Option<Vec<u8>>| {
                b.as_deref()
                    .map(|b| String::from_utf8_lossy(b).into_owned())
            };
            serde_json::json!({
                "partition": r.partition, "offset": r.offset,
                "key": text(&r.key), "payload": text(&r.value),
            })
            .to_string()
                + "\n"
        })
        .collect()
}

/// Compares Java's answer with ours, applying the deliberate differences. Returns the rules it
/// applied.
pub fn compare(
    case: &Case,
    java: &JavaAnswer,
    ours: &Ours,
) -> Result<BTreeSet<Deliberate>, Difference> {
    let differ = |what: String| Difference {
        what,
        case: case.clone(),
    };
    let mut applied = BTreeSet::new();
    check_redeliveries(case, ours)?;
    if ours.outcomes.iter().any(|o| o.redelivered) {
        applied.insert(Deliberate::Redelivery);
    }
    if java.lone_surrogates > 0 {
        applied.insert(Deliberate::LoneSurrogate);
    }
    // Item 1: Java throws exactly where we skip a record as one Java throws on.
    let thrown: BTreeSet<(i32, i64)> = java
        .exceptions
        .iter()
        .filter(|e| matches!(e.phase, Phase::CatchUp | Phase::Live))
        .map(|e| (e.partition.unwrap_or(-1), e.offset.unwrap_or(-1)))
        .collect();
    let expected: BTreeSet<(i32, i64)> = ours
        .outcomes
        .iter()
        .filter(|o| o.java_throws)
        .map(|o| (o.partition, o.offset))
        .collect();
    if thrown != expected {
        let java_only: Vec<String> = java
            .exceptions
            .iter()
            .filter(|e| !expected.contains(&(e.partition.unwrap_or(-1), e.offset.unwrap_or(-1))))
            .map(|e| {
                let ours = ours
                    .outcomes
                    .iter()
                    .find(|o| Some(o.partition) == e.partition && Some(o.offset) == e.offset);
                format!(
                    "Java threw {} ({}) at {:?}:{:?}, the core {}",
                    e.class,
                    e.message.as_deref().unwrap_or(""),
                    e.partition,
                    e.offset,
                    ours.and_then(|o| o.skip.clone())
                        .map_or("applied it".into(), |s| format!("skipped it: {s}"))
                )
            })
            .collect();
        let ours_only: Vec<String> = expected
            .difference(&thrown)
            .map(|(p, o)| format!("the core expects Java to throw at {p}:{o}, Java did not"))
            .collect();
        return Err(differ(
            java_only
                .into_iter()
                .chain(ours_only)
                .collect::<Vec<_>>()
                .join("; "),
        ));
    }
    if !thrown.is_empty() {
        applied.insert(Deliberate::JavaThrows);
    }
    let mut java_snapshot = java.snapshot.clone();
    for e in &java.exceptions {
        match e.phase {
            Phase::CatchUp | Phase::Live => {}
            // Item 7: the only accessor that throws is tasks(c), for a negative task count.
            Phase::Snapshot => {
                let connector = e.connector.clone().unwrap_or_default();
                let negative = ours
                    .snapshot
                    .get("connector_task_counts")
                    .and_then(|counts| counts.get(&connector))
                    .is_some_and(|n| n.as_i64().is_some_and(|n| n < 0));
                if !negative {
                    return Err(differ(format!(
                        "Java's snapshot accessor threw {} ({:?}) for {connector:?}",
                        e.class, e.message
                    )));
                }
                insert_sorted(
                    &mut java_snapshot,
                    "tasks",
                    &connector,
                    Json::Array(Vec::new()),
                );
                applied.insert(Deliberate::NegativeTaskCount);
            }
            Phase::Start => {
                return Err(differ(format!(
                    "Java's start() threw {}: {}",
                    e.class,
                    e.message.as_deref().unwrap_or("")
                )))
            }
        }
    }
    if cut_long_task_lists(&mut java_snapshot) {
        applied.insert(Deliberate::LongTaskList);
    }
    // Item 18: only Java's wrapped `i64::MAX + 1` against the core's `i64::MAX`.
    if case.topic == Topic::Config
        && java_snapshot.get("offset").and_then(Json::as_i64) == Some(i64::MIN)
        && ours.snapshot.get("offset").and_then(Json::as_i64) == Some(i64::MAX)
    {
        if let Some(offset) = java_snapshot.get_mut("offset") {
            *offset = Json::int(i64::MAX);
        }
        applied.insert(Deliberate::OffsetAtTheEnd);
    }
    if java_snapshot != ours.snapshot {
        return Err(differ(describe_snapshot_difference(
            &java_snapshot,
            &ours.snapshot,
        )));
    }
    // Live status and offsets: the state after each record read after start-up. A redelivery
    // is not handed to Java, so it leaves no state of its own in Java's trace.
    let our_trace: Vec<&Json> = ours.trace_of_handed_over(case).collect();
    let java_trace: Vec<&Json> = java.trace.iter().collect();
    if case.topic != Topic::Config && java_trace != our_trace {
        let at = java_trace
            .iter()
            .zip(&our_trace)
            .position(|(j, o)| j != o)
            .unwrap_or(java_trace.len().min(our_trace.len()));
        return Err(differ(format!(
            "the live state after live record {at} ({} states in Java, {} in the core)\n{}",
            java_trace.len(),
            our_trace.len(),
            match (java_trace.get(at), our_trace.get(at)) {
                (Some(j), Some(o)) => describe_snapshot_difference(j, o),
                _ => String::new(),
            }
        )));
    }
    if case.topic == Topic::Config && java.events != ours.events {
        let show = |events: &[Json]| {
            events
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("\n    ")
        };
        return Err(differ(format!(
            "events\n  Java:\n    {}\n  core:\n    {}",
            show(&java.events),
            show(&ours.events)
        )));
    }
    Ok(applied)
}

/// Item 14: cuts each of Java's `tasks` lists longer than `MAX_LISTED_TASKS` to that many and
/// records its length under `tasks_truncated` (after `tasks`), as the core's JSON contract
/// does. Whether anything was cut.
fn cut_long_task_lists(snapshot: &mut Json) -> bool {
    let limit = engine::config::MAX_LISTED_TASKS as usize;
    let mut cut = Vec::new();
    if let Some(Json::Object(lists)) = snapshot.get_mut("tasks") {
        for (connector, list) in lists {
            if let Json::Array(ids) = list {
                if ids.len() > limit {
                    cut.push((connector.clone(), Json::int(ids.len() as i64)));
                    ids.truncate(limit);
                }
            }
        }
    }
    if cut.is_empty() {
        return false;
    }
    if let Json::Object(members) = snapshot {
        let at = members
            .iter()
            .position(|(k, _)| k == "tasks")
            .map_or(members.len(), |i| i + 1);
        members.insert(at, ("tasks_truncated".to_string(), Json::Object(cut)));
    }
    true
}

/// Inserts `key: value` into the object `member` of `doc`, keeping it sorted.
fn insert_sorted(doc: &mut Json, member: &str, key: &str, value: Json) {
    if let Some(Json::Object(members)) = doc.get_mut(member) {
        let at = members
            .iter()
            .position(|(k, _)| k.as_str() > key)
            .unwrap_or(members.len());
        members.insert(at, (key.to_string(), value));
    }
}

/// The first members where two snapshots differ, for the failure message.
fn describe_snapshot_difference(java: &Json, ours: &Json) -> String {
    let (Json::Object(j), Json::Object(o)) = (java, ours) else {
        return format!("snapshot\n  Java: {java}\n  core: {ours}");
    };
    let mut lines = Vec::new();
    let names: Vec<&String> = j
        .iter()
        .map(|(k, _)| k)
        .chain(o.iter().map(|(k, _)| k))
        .collect();
    let mut seen = BTreeSet::new();
    for name in names {
        if !seen.insert(name.clone()) {
            continue;
        }
        let jv = java.get(name);
        let ov = ours.get(name);
        if jv != ov {
            let show = |v: Option<&Json>| v.map_or("(absent)".into(), |v| truncate(&v.to_string()));
            lines.push(format!(
                "snapshot.{name}\n  Java: {}\n  core: {}",
                show(jv),
                show(ov)
            ));
        }
    }
    if lines.is_empty() {
        lines.push(format!(
            "snapshot member order\n  Java: {java}\n  core: {ours}"
        ));
    }
    lines.join("\n")
}

fn truncate(text: &str) -> String {
    const MAX: usize = 2000;
    if text.len() <= MAX {
        return text.to_string();
    }
    let cut = (0..=MAX)
        .rev()
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(0);
    format!("{}... ({} bytes)", &text[..cut], text.len())
}

/// Runs a case through Java, and through the core checkpointed and restored at `at` (a
/// fraction of the records): the restored machine and the rest of the log must give Java's
/// state for the whole log.
pub fn judge_restarted(
    oracle: &mut Oracle,
    case: &Case,
    at: f64,
) -> Result<BTreeSet<Deliberate>, Difference> {
    let restart_at = ((case.records.len() as f64) * at) as usize;
    let ours = ours_restarted(case, Some(restart_at));
    let java = oracle.run(&java_case(case));
    compare(case, &java, &ours).map_err(|mut d| {
        d.what = format!(
            "restored from a checkpoint before record {restart_at}: {}",
            d.what
        );
        d
    })
}

/// Runs a case through both and compares them.
pub fn judge(oracle: &mut Oracle, case: &Case) -> Result<BTreeSet<Deliberate>, Difference> {
    let ours = ours(case);
    let java = oracle.run(&java_case(case));
    compare(case, &java, &ours)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(partition: i32, offset: i64) -> CaseRecord {
        CaseRecord {
            partition,
            ..CaseRecord::text(offset, "k", Some("{}"))
        }
    }

    #[test]
    fn a_consumer_hands_each_offset_over_once_per_partition() {
        let records = vec![
            at(0, 5),
            at(1, 0),
            at(0, 5), // again
            at(0, 6),
            at(1, 0), // again, another partition
            at(0, 4), // below the position
            at(0, i64::MAX - 1),
            at(0, i64::MAX),
            at(0, i64::MAX), // again, at the end of the range
            at(0, 7),        // below it
        ];
        let (handed, redelivered) = consumer_view(&records);
        assert_eq!(redelivered, BTreeSet::from([2, 4, 5, 8, 9]));
        let offsets: Vec<(i32, i64)> = handed.iter().map(|r| (r.partition, r.offset)).collect();
        assert_eq!(
            offsets,
            [(0, 5), (1, 0), (0, 6), (0, i64::MAX - 1), (0, i64::MAX)]
        );
    }
}
