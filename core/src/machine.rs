//! The one drive surface the three topic machines share, so transports, stores and tools are
//! written once over all of them.

use alloc::vec::Vec;

use crate::{Record, RecordError, RecordOutcome};

/// A topic state machine: records in, events out, snapshots on demand.
///
/// Drive contract: feed every record with [`handle_record`](Self::handle_record) in offset order
/// per partition; call [`mark_caught_up`](Self::mark_caught_up) once the start-up read reached
/// the end offsets; after every `handle_record`, drain [`poll_event`](Self::poll_event) until
/// `None`.
pub trait TopicMachine {
    /// What the machine reports after catch-up.
    type Event;
    /// Why a record may be skipped.
    type Skip;
    /// The immutable view.
    type Snapshot: Clone;

    /// Applies one record.
    fn handle_record(
        &mut self,
        record: Record<'_>,
    ) -> Result<RecordOutcome<Self::Skip>, RecordError>;
    /// Ends the start-up catch-up: later records produce events.
    fn mark_caught_up(&mut self);
    /// Whether the start-up catch-up ended.
    fn is_caught_up(&self) -> bool;
    /// The next queued event.
    fn poll_event(&mut self) -> Option<Self::Event>;
    /// The current state, O(1).
    fn snapshot(&self) -> Self::Snapshot;
    /// The next offset to fetch from `partition`.
    fn next_fetch_offset(&self, partition: i32) -> i64;
    /// The whole state as checkpoint bytes.
    fn checkpoint(&self) -> Vec<u8>;
}

/// Implements [`TopicMachine`] by delegating to the machine's inherent methods of the same names.
macro_rules! delegate_topic_machine {
    ($machine:ty, $event:ty, $skip:ty, $snapshot:ty) => {
        impl $crate::machine::TopicMachine for $machine {
            type Event = $event;
            type Skip = $skip;
            type Snapshot = $snapshot;

            fn handle_record(
                &mut self,
                record: $crate::Record<'_>,
            ) -> Result<$crate::RecordOutcome<$skip>, $crate::RecordError> {
                <$machine>::handle_record(self, record)
            }
            fn mark_caught_up(&mut self) {
                <$machine>::mark_caught_up(self)
            }
            fn is_caught_up(&self) -> bool {
                <$machine>::is_caught_up(self)
            }
            fn poll_event(&mut self) -> Option<$event> {
                <$machine>::poll_event(self)
            }
            fn snapshot(&self) -> $snapshot {
                <$machine>::snapshot(self)
            }
            fn next_fetch_offset(&self, partition: i32) -> i64 {
                <$machine>::next_fetch_offset(self, partition)
            }
            fn checkpoint(&self) -> alloc::vec::Vec<u8> {
                <$machine>::checkpoint(self)
            }
        }
    };
}
pub(crate) use delegate_topic_machine;
