//! Replaying a stream of dump records through a machine, one at a time (the dump is never
//! held), with `--live-from` and `--as-of` applied: the drive loop of `replay` and of every
//! command that reads dumps.

use engine::{RecordOutcome, TopicMachine};

use crate::cut::{Cut, CutMachine};
use crate::kcat::{DumpError, DumpRecord};

/// How a replay reads its records.
#[derive(Debug, Clone, Default)]
pub struct ReplayOptions {
    /// Records below this offset are the start-up catch-up (no events); the machine is marked
    /// caught up before the first record at or after it. `None`: every record is catch-up,
    /// as for a worker that starts now.
    pub live_from: Option<i64>,
    /// The config topic's rule: a record outside partition 0 is refused, as Java refuses the
    /// topic (spec §3.11).
    pub single_partition: bool,
    /// `--as-of`: only the records before the cut are applied.
    pub cut: Option<Cut>,
}

/// Why a replay stopped.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// The dump could not be read.
    #[error(transparent)]
    Dump(#[from] DumpError),
    /// A record the replay cannot take, at a line of the dump.
    #[error("line {line}: {problem}")]
    Record {
        /// The dump line.
        line: usize,
        /// What is wrong.
        problem: String,
    },
}

/// Replays `records` into `machine`, handing every event it queues to `events` as it is
/// drained, and marks it caught up at the end. Returns the machine.
pub fn replay_into<M: TopicMachine>(
    machine: M,
    records: impl IntoIterator<Item = Result<DumpRecord, DumpError>>,
    options: ReplayOptions,
    events: &mut impl Extend<M::Event>,
) -> Result<M, ReplayError> {
    let mut machine = CutMachine::new(machine, options.cut);
    for record in records {
        let record = record?;
        let refused = |problem: String| ReplayError::Record {
            line: record.line,
            problem,
        };
        if options.single_partition && record.partition != 0 {
            return Err(refused(format!(
                "the config topic is required to have a single partition in order to \
                 guarantee consistency of connector configurations, but the dump has records \
                 from partition {}",
                record.partition
            )));
        }
        if !machine.is_caught_up() && options.live_from.is_some_and(|from| record.offset >= from) {
            machine.mark_caught_up();
        }
        let outcome = machine
            .handle_record(record.as_record())
            .map_err(|e| refused(e.to_string()))?;
        if matches!(outcome, RecordOutcome::Withheld) {
            if let Some(problem) = machine.refused() {
                return Err(refused(problem.to_string()));
            }
        }
        events.extend(core::iter::from_fn(|| machine.poll_event()));
    }
    machine.mark_caught_up();
    Ok(machine.into_inner().0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cut::Point;
    use engine::config::{ConfigEvent, ConfigLog};
    use engine::{OwnedRecord, TopicKind};

    fn record(line: usize, offset: i64, key: &str, value: &str, ts: Option<i64>) -> DumpRecord {
        DumpRecord {
            line,
            record: OwnedRecord {
                key: Some(key.as_bytes().to_vec()),
                value: Some(value.as_bytes().to_vec()),
                offset,
                partition: 0,
                timestamp: ts,
            },
        }
    }

    #[test]
    fn live_records_queue_events_and_a_cut_withholds_what_is_after_it() {
        let connector = r#"{"properties":{"tasks.max":"1"}}"#;
        let records = [
            record(1, 0, "connector-a", connector, Some(10)),
            record(2, 1, "connector-b", connector, Some(20)),
            record(3, 2, "connector-c", connector, Some(30)),
        ];
        let mut events: Vec<ConfigEvent> = Vec::new();
        let options = ReplayOptions {
            live_from: Some(1),
            single_partition: true,
            cut: None,
        };
        let log = replay_into(
            ConfigLog::new(),
            records.clone().map(Ok),
            options,
            &mut events,
        )
        .unwrap();
        assert_eq!(log.snapshot().connectors().count(), 3);
        assert_eq!(events.len(), 2, "{events:?}");

        let cut = Cut::new(Point::Time(20), TopicKind::Config).unwrap();
        let options = ReplayOptions {
            cut: Some(cut),
            ..ReplayOptions::default()
        };
        let log = replay_into(
            ConfigLog::new(),
            records.clone().map(Ok),
            options,
            &mut events,
        )
        .unwrap();
        assert_eq!(log.snapshot().connectors().collect::<Vec<_>>(), ["a", "b"]);

        let mut untimed = records.clone();
        untimed[1].record.timestamp = None;
        let cut = Cut::new(Point::Time(20), TopicKind::Config).unwrap();
        let options = ReplayOptions {
            cut: Some(cut),
            ..ReplayOptions::default()
        };
        let refused = replay_into(ConfigLog::new(), untimed.map(Ok), options, &mut events);
        let text = refused.unwrap_err().to_string();
        assert!(
            text.starts_with("line 2: ") && text.contains("no timestamp"),
            "{text}"
        );

        let mut elsewhere = records;
        elsewhere[2].record.partition = 1;
        let options = ReplayOptions {
            single_partition: true,
            ..ReplayOptions::default()
        };
        let refused = replay_into(ConfigLog::new(), elsewhere.map(Ok), options, &mut events);
        assert!(refused.unwrap_err().to_string().starts_with("line 3: "));
    }
}
