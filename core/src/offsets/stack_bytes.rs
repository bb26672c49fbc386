//! [`StackBytes`]: bytes gathered on the stack while they fit, for the short-lived buffers the
//! offsets machine fills for every record.

use alloc::vec::Vec;
use arrayvec::ArrayVec;

/// The longest piece [`StackBytes::push`] copies byte by byte.
const SHORT: usize = 8;

/// Bytes appended piece by piece, held in an inline buffer of `N` bytes while they fit and in a
/// vector once they outgrow it. Most offsets keys, values and partition encodings are a few
/// dozen bytes: a vector grown from empty cost an allocation or more per record.
#[derive(Default)]
pub(crate) struct StackBytes<const N: usize> {
    /// The bytes, while they fit.
    small: ArrayVec<u8, N>,
    /// All the bytes, once they outgrew `small`.
    large: Vec<u8>,
}

impl<const N: usize> StackBytes<N> {
    /// The bytes appended so far.
    pub(crate) fn bytes(&self) -> &[u8] {
        if self.large.is_empty() {
            &self.small
        } else {
            &self.large
        }
    }

    /// Appends `bytes`, moving everything to the heap the first time they do not fit.
    pub(crate) fn push(&mut self, bytes: &[u8]) {
        if self.large.is_empty() {
            // The slot hash's encoding arrives in pieces of a byte or two (lengths, variant
            // tags): copied in place, where a slice copy is a call to `memcpy`.
            if bytes.len() <= SHORT && bytes.len() <= self.small.remaining_capacity() {
                for &byte in bytes {
                    let _fits = self.small.try_push(byte);
                }
                return;
            }
            if self.small.try_extend_from_slice(bytes).is_ok() {
                return;
            }
        }
        if self.large.is_empty() {
            self.large.reserve(self.small.len() + bytes.len());
            self.large.extend_from_slice(&self.small);
        }
        self.large.extend_from_slice(bytes);
    }
}

impl<const N: usize> bincode::enc::write::Writer for StackBytes<N> {
    fn write(&mut self, bytes: &[u8]) -> Result<(), bincode::error::EncodeError> {
        self.push(bytes);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::StackBytes;

    #[test]
    fn pieces_are_kept_in_order_below_at_and_past_the_inline_buffer() {
        for sizes in [
            &[0usize, 3, 5][..],
            &[8],
            &[7, 1],
            &[7, 2],
            &[9],
            &[4, 4, 4, 20],
        ] {
            let mut gathered = StackBytes::<8>::default();
            let mut expected = alloc::vec::Vec::new();
            for (i, &size) in sizes.iter().enumerate() {
                let piece: alloc::vec::Vec<u8> = (0..size).map(|b| (b + 10 * i) as u8).collect();
                gathered.push(&piece);
                expected.extend_from_slice(&piece);
            }
            assert_eq!(gathered.bytes(), &expected[..], "{sizes:?}");
        }
    }
}
