//! [`RecordBatch`]: the records of one fetch, their keys and values side by side in one buffer.

use core::fmt;

use engine::{OwnedRecord, Record};

/// The records of one fetch, in the order they were pushed, with every key and value in one
/// byte buffer.
///
/// A transport copies each record it reads into the batch ([`push`](Self::push): one copy into
/// the buffer, no allocation of its own), the store applies the records as borrowed
/// [`Record`]s and then hands the batch back ([`Transport::recycle`](crate::Transport::recycle))
/// for the transport to [`clear`](Self::clear) and fill again. A read of a whole topic then
/// reuses a few buffers instead of allocating every key and value afresh: against a broker on
/// the development machine, the two allocations per record, their frees on the applying thread
/// and the kernel zeroing the fresh pages they took were about a tenth of `inspect`'s CPU.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct RecordBatch {
    /// Every record's key, then its value, in push order.
    bytes: Vec<u8>,
    entries: Vec<Entry>,
}

/// One record of a [`RecordBatch`]: where its key and value are in the buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Entry {
    offset: i64,
    timestamp: Option<i64>,
    partition: i32,
    key: Option<Span>,
    value: Option<Span>,
}

/// A range of the buffer (`Range` is not `Copy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Span {
    start: usize,
    end: usize,
}

impl RecordBatch {
    /// An empty batch.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends a copy of `record`.
    #[inline]
    pub fn push(&mut self, record: Record<'_>) {
        let key = record.key.map(|key| self.copy(key));
        let value = record.value.map(|value| self.copy(value));
        self.entries.push(Entry {
            offset: record.offset,
            timestamp: record.timestamp,
            partition: record.partition,
            key,
            value,
        });
    }

    #[inline]
    fn copy(&mut self, bytes: &[u8]) -> Span {
        let start = self.bytes.len();
        self.bytes.extend_from_slice(bytes);
        Span {
            start,
            end: self.bytes.len(),
        }
    }

    /// How many records the batch holds.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the batch holds no record.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The `index`th record pushed.
    pub fn get(&self, index: usize) -> Option<Record<'_>> {
        self.entries.get(index).map(|entry| self.record(entry))
    }

    /// The records, in push order.
    #[inline]
    pub fn iter(&self) -> Iter<'_> {
        Iter {
            batch: self,
            entries: self.entries.iter(),
        }
    }

    #[inline]
    fn record(&self, entry: &Entry) -> Record<'_> {
        let bytes = |span: Span| self.bytes.get(span.start..span.end).unwrap_or_default();
        Record {
            key: entry.key.map(bytes),
            value: entry.value.map(bytes),
            offset: entry.offset,
            partition: entry.partition,
            timestamp: entry.timestamp,
        }
    }

    /// Drops every record and keeps the memory, for the batch to be filled again.
    pub fn clear(&mut self) {
        self.bytes.clear();
        self.entries.clear();
    }

    /// The key and value bytes the buffer holds room for: what keeping the batch for another
    /// fetch keeps allocated.
    pub fn byte_capacity(&self) -> usize {
        self.bytes.capacity()
    }

    /// The records, each with its own copies of its key and value.
    pub fn to_owned_records(&self) -> Vec<OwnedRecord> {
        self.iter().map(|record| record.to_owned()).collect()
    }
}

/// The records of a [`RecordBatch`], in push order. (The per-record methods here and above are
/// `#[inline]`: the store and the transports call them from other crates for every record.)
#[derive(Debug, Clone)]
pub struct Iter<'a> {
    batch: &'a RecordBatch,
    entries: core::slice::Iter<'a, Entry>,
}

impl<'a> Iterator for Iter<'a> {
    type Item = Record<'a>;

    #[inline]
    fn next(&mut self) -> Option<Record<'a>> {
        self.entries.next().map(|entry| self.batch.record(entry))
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.entries.size_hint()
    }
}

impl DoubleEndedIterator for Iter<'_> {
    #[inline]
    fn next_back(&mut self) -> Option<Self::Item> {
        self.entries
            .next_back()
            .map(|entry| self.batch.record(entry))
    }
}

impl ExactSizeIterator for Iter<'_> {}

impl<'a> IntoIterator for &'a RecordBatch {
    type Item = Record<'a>;
    type IntoIter = Iter<'a>;

    #[inline]
    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

impl<'a> Extend<Record<'a>> for RecordBatch {
    fn extend<I: IntoIterator<Item = Record<'a>>>(&mut self, records: I) {
        for record in records {
            self.push(record);
        }
    }
}

impl<'a> FromIterator<Record<'a>> for RecordBatch {
    fn from_iter<I: IntoIterator<Item = Record<'a>>>(records: I) -> Self {
        let mut batch = Self::new();
        batch.extend(records);
        batch
    }
}

impl fmt::Debug for RecordBatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(
        offset: i64,
        key: Option<&'static [u8]>,
        value: Option<&'static [u8]>,
    ) -> Record<'static> {
        Record {
            key,
            value,
            offset,
            partition: 2,
            timestamp: (offset % 2 == 0).then_some(offset * 10),
        }
    }

    fn sample() -> Vec<Record<'static>> {
        vec![
            record(3, Some(b"k1"), Some(b"value one")),
            record(4, Some(b""), None),
            record(5, None, Some(b"")),
            record(7, None, None),
            record(8, Some(b"k2"), Some(b"v2")),
        ]
    }

    #[test]
    fn records_read_back_as_they_were_pushed() {
        let batch: RecordBatch = sample().into_iter().collect();
        assert_eq!(batch.len(), 5);
        assert_eq!(batch.iter().collect::<Vec<_>>(), sample());
        assert_eq!(batch.iter().next_back(), sample().last().copied());
        assert_eq!(batch.get(1), Some(sample()[1]));
        assert_eq!(batch.get(5), None);
        let owned = batch.to_owned_records();
        let again: RecordBatch = owned.iter().map(OwnedRecord::as_record).collect();
        assert_eq!(again, batch);
        assert_eq!(format!("{again:?}"), format!("{:?}", sample()));
    }

    #[test]
    fn a_cleared_batch_keeps_its_memory_and_fills_again() {
        let mut batch: RecordBatch = sample().into_iter().collect();
        let room = batch.byte_capacity();
        batch.clear();
        assert!(batch.is_empty());
        assert_eq!(batch.byte_capacity(), room);
        batch.push(record(1, Some(b"k"), Some(b"v")));
        assert_eq!(
            batch.iter().collect::<Vec<_>>(),
            [record(1, Some(b"k"), Some(b"v"))]
        );
    }
}
