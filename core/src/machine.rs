//! The one engine the three topic machines share ([`TopicLog`]), and the drive surface
//! ([`TopicMachine`]) transports, stores and tools are written against.
//!
//! A topic supplies only what is its own ([`Topic`]): its key dispatch and apply step, its
//! snapshot and its diagnostics. The engine owns everything else, once: the read positions
//! that drop redelivered records, the caught-up flag, the event queue, skip counting and the
//! checkpoint framing.

use alloc::collections::VecDeque;
use alloc::vec::Vec;
use core::fmt;

use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::checkpoint::{self, CheckpointError};
use crate::position::{Position, Positions};
use crate::skips::{SkipCounts, SkipReason};
use crate::TopicKind;
use crate::{Record, RecordError, RecordOutcome};

/// A topic state machine: records in, events out, snapshots on demand.
///
/// Drive contract: feed every record with [`handle_record`](Self::handle_record) in offset order
/// per partition; call [`mark_caught_up`](Self::mark_caught_up) once the start-up read reached
/// the end offsets; after every `handle_record`, drain [`poll_event`](Self::poll_event) until
/// `None`. Machines that can be rebuilt from a checkpoint also implement [`Restore`]; machines
/// that wrap another one to add a step implement [`Layer`] instead of this trait.
pub trait TopicMachine {
    /// What the machine reports after catch-up.
    type Event;
    /// Why a record may be skipped.
    type Skip;
    /// The immutable view.
    type Snapshot: Clone;
    /// What the machine knows beyond Java's state.
    type Diagnostics;

    /// Applies one record, in offset order within its partition. It may change the snapshot
    /// and the diagnostics and queue events; on `Err` nothing changed.
    fn handle_record(
        &mut self,
        record: Record<'_>,
    ) -> Result<RecordOutcome<Self::Skip>, RecordError>;
    /// Ends the start-up catch-up: call it once the first read reached the end offsets; later
    /// records produce events.
    fn mark_caught_up(&mut self);
    /// Whether [`mark_caught_up`](Self::mark_caught_up) was called (or the machine reports
    /// from its first record).
    fn is_caught_up(&self) -> bool;
    /// The next queued event, oldest first: drain until `None` after every `handle_record`.
    #[must_use]
    fn poll_event(&mut self) -> Option<Self::Event>;
    /// The current state, O(1) once caught up (the offsets topic sorts its keys into the view
    /// before that, O(n log n)); later records do not change it.
    #[must_use]
    fn snapshot(&self) -> Self::Snapshot;
    /// The next offset to fetch from `partition` (0 when nothing was read from it).
    fn next_fetch_offset(&self, partition: i32) -> i64;
    /// Diagnostics beyond Java's state, O(1).
    #[must_use]
    fn diagnostics(&self) -> Self::Diagnostics;
    /// The whole state as checkpoint bytes (pending events are not in them: drain first).
    #[must_use]
    fn checkpoint(&self) -> Vec<u8>;
}

/// A machine that can be rebuilt from its [`checkpoint`](TopicMachine::checkpoint) bytes.
pub trait Restore: TopicMachine + Sized {
    /// The machine the checkpoint holds, not caught up: read the tail to the end offsets, then
    /// call [`mark_caught_up`](TopicMachine::mark_caught_up). A corrupt, truncated,
    /// wrong-version or other topic's checkpoint is refused.
    fn restore(bytes: &[u8]) -> Result<Self, CheckpointError>;
}

/// A machine that wraps another to add one step to how records are handled (an index of where
/// keys live, a cut in time, ...): it supplies the inner machine and its hook, and is a
/// [`TopicMachine`] through the one blanket implementation, which forwards everything else to
/// the inner machine unchanged.
pub trait Layer {
    /// The machine wrapped.
    type Inner: TopicMachine;

    /// The machine wrapped.
    fn inner(&self) -> &Self::Inner;

    /// The machine wrapped.
    fn inner_mut(&mut self) -> &mut Self::Inner;

    /// Handles one record: the layer's own step, usually around
    /// `self.inner_mut().handle_record(record)`. A record the layer keeps from the inner
    /// machine is [`RecordOutcome::Withheld`].
    fn on_record(
        &mut self,
        record: Record<'_>,
    ) -> Result<RecordOutcome<<Self::Inner as TopicMachine>::Skip>, RecordError>;
}

impl<L: Layer> TopicMachine for L {
    type Event = <L::Inner as TopicMachine>::Event;
    type Skip = <L::Inner as TopicMachine>::Skip;
    type Snapshot = <L::Inner as TopicMachine>::Snapshot;
    type Diagnostics = <L::Inner as TopicMachine>::Diagnostics;

    fn handle_record(
        &mut self,
        record: Record<'_>,
    ) -> Result<RecordOutcome<Self::Skip>, RecordError> {
        self.on_record(record)
    }
    fn mark_caught_up(&mut self) {
        self.inner_mut().mark_caught_up();
    }
    fn is_caught_up(&self) -> bool {
        self.inner().is_caught_up()
    }
    fn poll_event(&mut self) -> Option<Self::Event> {
        self.inner_mut().poll_event()
    }
    fn snapshot(&self) -> Self::Snapshot {
        self.inner().snapshot()
    }
    fn next_fetch_offset(&self, partition: i32) -> i64 {
        self.inner().next_fetch_offset(partition)
    }
    fn diagnostics(&self) -> Self::Diagnostics {
        self.inner().diagnostics()
    }
    fn checkpoint(&self) -> Vec<u8> {
        self.inner().checkpoint()
    }
}

/// What one topic supplies to [`TopicLog`]: its state (what checkpoints hold, beside the
/// engine's positions and skip counters), its apply step, its snapshot and diagnostics.
pub trait Topic: Default + Serialize + DeserializeOwned {
    /// What the topic reports once caught up.
    type Event;
    /// Why a record is skipped.
    type Skip: SkipReason;
    /// The immutable view of the state.
    type Snapshot: Clone;
    /// Diagnostics beyond Java's state (cheap to build: shared maps, counters).
    type Diagnostics;
    /// The topic a checkpoint of this state names.
    const KIND: TopicKind;

    /// Refuses a record before anything is looked at (positions included). The default
    /// refuses nothing.
    fn check(_record: &Record<'_>) -> Result<(), RecordError> {
        Ok(())
    }

    /// Applies a fresh record (not a redelivery: the engine dropped those). On a skip, nothing
    /// may have changed but what the topic counts itself.
    fn apply(
        &mut self,
        record: &Record<'_>,
        events: &mut Events<'_, Self::Event>,
    ) -> Result<(), Self::Skip>;

    /// The state as an immutable view, O(1) once caught up (a topic may hold its state in a
    /// form that is faster to write and slower to share while it is read from its start).
    fn snapshot(&self) -> Self::Snapshot;

    /// Called when the start-up read is caught up ([`TopicLog::mark_caught_up`]; again on a
    /// later call, which must change nothing): a topic that held its state in a form for
    /// loading moves it into the form snapshots share. The default does nothing.
    fn caught_up(&mut self) {}

    /// Called before the first record when a reader will ask about the state record by
    /// record while the start-up read goes on (a history telling every record,
    /// [`History::new`](crate::history::History::new)): a topic whose form for loading
    /// answers such questions slowly moves into one that answers them quickly. The default
    /// does nothing.
    fn asked_while_loading(&mut self) {}

    /// The diagnostics, with the engine's skip counters.
    fn diagnostics(&self, skipped: &SkipCounts<SkipKind<Self>>) -> Self::Diagnostics;
}

/// The skip kind of a topic.
pub type SkipKind<T> = <<T as Topic>::Skip as SkipReason>::Kind;

/// Where [`Topic::apply`] sends events: queued once the reader is caught up, dropped before
/// (a starting Java worker calls no listener while it replays).
pub struct Events<'a, E> {
    queue: &'a mut VecDeque<E>,
    enabled: bool,
}

impl<E> Events<'_, E> {
    /// Queues the event `make` builds if the reader is caught up; before that (a start-up
    /// replay) nothing is built.
    pub fn emit(&mut self, make: impl FnOnce() -> E) {
        if self.enabled {
            self.queue.push_back(make());
        }
    }

    /// Whether events are queued: a topic may skip building one that would be dropped.
    pub fn enabled(&self) -> bool {
        self.enabled
    }
}

/// A topic's state machine. See the crate docs for the drive loop; `ConfigLog`, `StatusLog`
/// and `OffsetLog` are this engine over each topic.
pub struct TopicLog<T: Topic> {
    pub(crate) topic: T,
    positions: Positions,
    skipped: SkipCounts<SkipKind<T>>,
    caught_up: bool,
    events: VecDeque<T::Event>,
}

impl<T: Topic + Clone> Clone for TopicLog<T>
where
    T::Event: Clone,
{
    fn clone(&self) -> Self {
        Self {
            topic: self.topic.clone(),
            positions: self.positions.clone(),
            skipped: self.skipped.clone(),
            caught_up: self.caught_up,
            events: self.events.clone(),
        }
    }
}

impl<T: Topic + fmt::Debug> fmt::Debug for TopicLog<T>
where
    T::Event: fmt::Debug,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TopicLog")
            .field("topic", &self.topic)
            .field("positions", &self.positions)
            .field("skipped", &self.skipped)
            .field("caught_up", &self.caught_up)
            .field("events", &self.events)
            .finish()
    }
}

impl<T: Topic> Default for TopicLog<T> {
    fn default() -> Self {
        Self::from_parts(T::default(), Positions::default(), SkipCounts::default())
    }
}

impl<T: Topic> TopicLog<T> {
    /// A reader at the start of every partition, not caught up.
    pub fn new() -> Self {
        Self::default()
    }

    fn from_parts(topic: T, positions: Positions, skipped: SkipCounts<SkipKind<T>>) -> Self {
        Self {
            topic,
            positions,
            skipped,
            caught_up: false,
            events: VecDeque::new(),
        }
    }

    /// Marks the start-up read to the end offsets as complete: from now on records produce
    /// events (Java's `started = true`). Call it once, after the start-up catch-up; calling it
    /// again changes nothing.
    pub fn mark_caught_up(&mut self) {
        self.topic.caught_up();
        self.caught_up = true;
    }

    /// Queues events from now on, as [`mark_caught_up`](Self::mark_caught_up) does, but
    /// leaves the topic's state in its form for loading: for a history that tells every
    /// record of a topic it reads from the start
    /// ([`History::new`](crate::history::History::new)), whose own `mark_caught_up` ends the
    /// loading.
    pub(crate) fn report_while_loading(&mut self) {
        self.topic.asked_while_loading();
        self.caught_up = true;
    }

    /// Whether [`mark_caught_up`](Self::mark_caught_up) was called.
    pub fn is_caught_up(&self) -> bool {
        self.caught_up
    }

    /// Applies one record exactly as Java's consume callback does.
    ///
    /// Call it for every record of the topic, in offset order within each partition (the
    /// status and offsets topics' partitions may interleave in any order). It may change the
    /// snapshot, the diagnostics and (once caught up) queue events; drain
    /// [`poll_event`](Self::poll_event) afterwards. A record below its partition's next
    /// expected offset is a duplicate and changes nothing but the skip counters. On `Err`
    /// nothing changed.
    pub fn handle_record(
        &mut self,
        record: Record<'_>,
    ) -> Result<RecordOutcome<T::Skip>, RecordError> {
        T::check(&record)?;
        let outcome = match self.positions.advance(&record)? {
            Position::Duplicate { next_expected } => Err(T::Skip::duplicate(next_expected)),
            Position::Fresh => {
                let mut events = Events {
                    queue: &mut self.events,
                    enabled: self.caught_up,
                };
                self.topic.apply(&record, &mut events)
            }
        };
        Ok(match outcome {
            Ok(()) => RecordOutcome::Applied,
            Err(skip) => {
                self.skipped.count(skip.kind());
                RecordOutcome::Skipped(skip)
            }
        })
    }

    /// The next event, oldest first. Drain until `None` after every `handle_*` call.
    #[must_use]
    pub fn poll_event(&mut self) -> Option<T::Event> {
        self.events.pop_front()
    }

    /// An immutable view of the current state, O(1) once caught up (the offsets topic sorts
    /// its keys into the view before that, O(n log n)); later records do not change it.
    #[must_use]
    pub fn snapshot(&self) -> T::Snapshot {
        self.topic.snapshot()
    }

    /// The next offset to fetch from `partition` (0 when nothing was read from it).
    pub fn next_fetch_offset(&self, partition: i32) -> i64 {
        self.positions.next_offset(partition)
    }

    /// Diagnostics beyond Java's state, O(1).
    #[must_use]
    pub fn diagnostics(&self) -> T::Diagnostics {
        self.topic.diagnostics(&self.skipped)
    }

    /// Serializes the whole state (with the positions and skip counters) into a versioned,
    /// checksummed checkpoint. Pending events are not included: drain them first.
    #[must_use]
    pub fn checkpoint(&self) -> Vec<u8> {
        self.encode(None)
    }

    /// [`checkpoint`](Self::checkpoint) stamped with the caller's time (ms), so that
    /// [`checkpoint::check_fresh`] can refuse it once it is older than the topic's tombstone
    /// retention.
    #[must_use]
    pub fn checkpoint_at(&self, taken_at_ms: i64) -> Vec<u8> {
        self.encode(Some(taken_at_ms))
    }

    fn encode(&self, taken_at_ms: Option<i64>) -> Vec<u8> {
        let state = (&self.topic, &self.positions, &self.skipped);
        checkpoint::encode(T::KIND, &state, taken_at_ms)
    }

    /// Restores a reader from [`checkpoint`](Self::checkpoint) bytes. The reader is not caught
    /// up: read the tail to the end offsets, then call [`mark_caught_up`](Self::mark_caught_up).
    pub fn restore(bytes: &[u8]) -> Result<Self, CheckpointError> {
        let (topic, positions, skipped) = checkpoint::decode(T::KIND, bytes)?;
        Ok(Self::from_parts(topic, positions, skipped))
    }
}

impl<T: Topic> TopicMachine for TopicLog<T> {
    type Event = T::Event;
    type Skip = T::Skip;
    type Snapshot = T::Snapshot;
    type Diagnostics = T::Diagnostics;

    fn handle_record(&mut self, record: Record<'_>) -> Result<RecordOutcome<T::Skip>, RecordError> {
        Self::handle_record(self, record)
    }
    fn mark_caught_up(&mut self) {
        Self::mark_caught_up(self);
    }
    fn is_caught_up(&self) -> bool {
        Self::is_caught_up(self)
    }
    fn poll_event(&mut self) -> Option<T::Event> {
        Self::poll_event(self)
    }
    fn snapshot(&self) -> T::Snapshot {
        Self::snapshot(self)
    }
    fn next_fetch_offset(&self, partition: i32) -> i64 {
        Self::next_fetch_offset(self, partition)
    }
    fn diagnostics(&self) -> T::Diagnostics {
        Self::diagnostics(self)
    }
    fn checkpoint(&self) -> Vec<u8> {
        Self::checkpoint(self)
    }
}

impl<T: Topic> Restore for TopicLog<T> {
    fn restore(bytes: &[u8]) -> Result<Self, CheckpointError> {
        Self::restore(bytes)
    }
}
