//! How offsets records are told as changes (see [`crate::history`]): one per record, with the
//! connector its key names and whether the key was live before.

use alloc::string::String;
use alloc::vec::Vec;

use super::{classify_with_slot, KeyClass, OffsetEvent, OffsetTopic};
use crate::history::{Change, ChangeKind, Chronicle};
use crate::Record;

/// What an offsets record's key touches, before the record: the connector it names and
/// whether the key held an offset.
pub struct OffsetBefore {
    connector: Option<String>,
    live: bool,
}

impl Chronicle for OffsetTopic {
    type Before = OffsetBefore;
    const KEEPS_BYTES: bool = true;

    fn before(&self, record: &Record<'_>) -> OffsetBefore {
        let (shape, slot) = classify_with_slot(record.key);
        OffsetBefore {
            connector: match shape {
                KeyClass::Partition(connector) => Some(connector.into_owned()),
                KeyClass::NullPartition | KeyClass::Ignored => None,
            },
            live: self.tables.data.get(record.key, slot).is_some(),
        }
    }

    fn changes(
        &self,
        record: &Record<'_>,
        before: OffsetBefore,
        _events: Vec<OffsetEvent>,
        applied: bool,
        out: &mut Vec<Change>,
    ) {
        if !applied || record.key.is_none() {
            return;
        }
        let kind = match record.value {
            Some(_) => ChangeKind::OffsetWritten {
                new_key: !before.live,
            },
            None => ChangeKind::OffsetRemoved {
                was_live: before.live,
            },
        };
        out.push(Change {
            connector: before.connector,
            kind,
        });
    }
}
