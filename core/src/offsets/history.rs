//! How offsets records are told as changes (see [`crate::history`]): one per record, with the
//! connector its key names.

use alloc::vec::Vec;

use super::partition_key::{classify, KeyShape};
use super::{OffsetEvent, OffsetsTopic};
use crate::history::{Change, ChangeKind, Chronicle};
use crate::Record;

impl Chronicle for OffsetsTopic {
    type Before = ();
    const KEEPS_BYTES: bool = true;

    fn before(&self, _record: &Record<'_>) {}

    fn changes(
        &self,
        record: &Record<'_>,
        _before: (),
        _events: Vec<OffsetEvent>,
        applied: bool,
        out: &mut Vec<Change>,
    ) {
        let (true, Some(key)) = (applied, record.key) else {
            return;
        };
        let connector = match classify(Some(key)) {
            KeyShape::Partition(partition) => Some(partition.connector),
            KeyShape::NullPartition | KeyShape::Ignored(_) => None,
        };
        let kind = match record.value {
            Some(_) => ChangeKind::OffsetWritten,
            None => ChangeKind::OffsetRemoved,
        };
        out.push(Change { connector, kind });
    }
}
