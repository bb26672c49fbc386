//! Reading one topic to its end for a command (`doctor`, `offsets`, `diff`, `serve` of dumps or
//! of a past state): from a kcat dump as it is read, or from a live topic through a store. The
//! topic is replayed through the core wrapped in [`Indexed`], which remembers where the latest
//! record of every key lives, so findings can cite their evidence; `--as-of` applies as a
//! [`Cut`]. Which topics to read, and from where, is the caller's (the CLI's grammar).

use std::collections::BTreeSet;
use std::io::BufRead;
use std::sync::Arc;

use connect_state_store::{
    ProgressObserver, Store, StoreSettings, TopicDefaults, TopicKind, Transport,
};
use engine::TopicMachine;

use crate::cut::{Cut, CutMachine};
use crate::index::Indexed;
use crate::kcat::{BadLines, DumpReader};
use crate::replay::{replay_into, ReplayError, ReplayOptions};
use crate::topics::{Layout, TopicRead};

/// A sink for events nobody reads (a load whose caller wants none).
#[derive(Debug, Clone, Copy, Default)]
pub struct Discard;

impl<E> Extend<E> for Discard {
    fn extend<I: IntoIterator<Item = E>>(&mut self, events: I) {
        events.into_iter().for_each(drop);
    }
}

/// A sink borrowed for a load (`&mut` a fold that is an `Extend` itself).
#[derive(Debug)]
pub struct Borrowed<'a, T>(pub &'a mut T);

impl<E, T: Extend<E>> Extend<E> for Borrowed<'_, T> {
    fn extend<I: IntoIterator<Item = E>>(&mut self, events: I) {
        self.0.extend(events);
    }
}

/// Why a topic could not be read.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// A dump could not be replayed.
    #[error(transparent)]
    Replay(#[from] ReplayError),
    /// A live topic could not be described or read.
    #[error("{0}")]
    Live(String),
}

/// Replays the dump `name` as it is read into `machine` (behind `cut`), noting the partitions
/// it holds records of; hands what the machine queues to `events`. The dump's skipped lines are
/// in the result's `bad_lines`.
pub fn load_dump<M: TopicMachine, R: BufRead>(
    name: String,
    mut dump: DumpReader<R>,
    cut: Option<Cut>,
    machine: M,
    events: &mut impl Extend<M::Event>,
) -> Result<TopicRead<M>, LoadError> {
    let mut partitions_seen = BTreeSet::new();
    let records = dump.by_ref().inspect(|record| {
        if let Ok(record) = record {
            partitions_seen.insert(record.partition);
        }
    });
    let options = ReplayOptions {
        cut,
        ..ReplayOptions::default()
    };
    let state = replay_into(Indexed::new(machine), records, options, events)?;
    Ok(TopicRead {
        name,
        state,
        layout: Layout::Dump { partitions_seen },
        bad_lines: dump.into_bad_lines(),
    })
}

/// Describes the live topic `name` (a missing one is an error: commands that examine never
/// create topics) and reads it to the end into `machine` (behind `cut`) without Java's
/// start-up refusals, so a badly laid out topic can still be examined. Hands what the machine
/// queues to `events`; `progress` observes the read.
pub async fn load_live<M: TopicMachine>(
    transport: Arc<dyn Transport>,
    name: String,
    kind: TopicKind,
    cut: Option<Cut>,
    machine: M,
    events: &mut impl Extend<M::Event>,
    progress: Option<ProgressObserver>,
) -> Result<TopicRead<M>, LoadError> {
    let description = transport
        .describe_topic(&name)
        .await
        .map_err(|e| LoadError::Live(format!("describing topic '{name}': {e}")))?
        .ok_or_else(|| {
            LoadError::Live(format!(
                "topic '{name}' ({}) does not exist on this cluster",
                kind.setting()
            ))
        })?;
    let mut store = Store::new(
        StoreSettings::new(name.clone(), kind),
        transport,
        CutMachine::new(Indexed::new(machine), cut),
    );
    if let Some(progress) = progress {
        store.set_progress(progress);
    }
    store
        .read_to_end_into(events)
        .await
        .map_err(|e| LoadError::Live(format!("reading topic '{name}': {e}")))?;
    store.machine_mut().mark_caught_up();
    let (state, refused) = store.into_machine().into_inner();
    if let Some(problem) = refused {
        return Err(LoadError::Live(format!("topic '{name}': {problem}")));
    }
    Ok(TopicRead {
        name,
        state,
        layout: Layout::Described {
            partitions: description.partitions,
            cleanup_policy: description.cleanup_policy,
        },
        bad_lines: BadLines::default(),
    })
}
