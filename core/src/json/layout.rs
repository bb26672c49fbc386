//! Matching a value against the exact compact layout Java's `JsonConverter` writes, without the
//! general reader: for the records whose shape is known (status values, offsets keys), where
//! nearly every record has that layout.
//!
//! A [`Cursor`] accepts only what reads the same as the general reader would read it: plain
//! strings (no escapes, no control characters, valid UTF-8, short) and plain integers. Anything
//! else makes a step return `None`, and the caller reads the record with the general reader.

use super::scan_plain;

/// The longest string a cursor reads: far below Jackson's limits, so that none of them applies.
const MAX_STRING: usize = 4096;
/// The most digits of an integer a cursor reads: any such number fits an `i64` as it is.
const MAX_DIGITS: usize = 18;

/// The block `simdutf8` checks at a time.
const SIMD_BLOCK: usize = 64;

/// A position in the text being matched (a copy is a bookmark to match from again).
#[derive(Clone, Copy)]
pub(crate) struct Cursor<'a> {
    /// The whole value, checked as UTF-8 once: strings are sliced from it, not each checked
    /// again.
    text: &'a str,
    at: usize,
}

impl<'a> Cursor<'a> {
    /// A cursor at the start of `bytes`, or `None` when they are not UTF-8 (the caller reads
    /// them with the general reader, which treats malformed text as Jackson does).
    ///
    /// One vectorized check of the whole value (`simdutf8`): measured on the status, offsets
    /// and config replays, it costs less than checking each string of a value on its own, even
    /// for values of a hundred bytes with two or three strings.
    ///
    /// Values shorter than one of its 64-byte blocks (most offsets keys) are checked by
    /// `core`'s validator instead, which steps over ASCII a word at a time: `simdutf8` copies
    /// a value's last partial block aside and runs its full check over it, which for a key of
    /// a few dozen bytes is the whole key.
    pub(crate) fn new(bytes: &'a [u8]) -> Option<Self> {
        let text = if bytes.len() < SIMD_BLOCK {
            core::str::from_utf8(bytes).ok()?
        } else {
            simdutf8::basic::from_utf8(bytes).ok()?
        };
        Some(Self { text, at: 0 })
    }

    fn rest(&self) -> &'a [u8] {
        self.text.as_bytes().get(self.at..).unwrap_or_default()
    }

    /// Whether every byte has been matched.
    pub(crate) fn at_end(&self) -> bool {
        self.at >= self.text.len()
    }

    /// Steps over `text` if the bytes continue with it.
    pub(crate) fn literal(&mut self, text: &[u8]) -> Option<()> {
        self.rest().starts_with(text).then(|| self.at += text.len())
    }

    /// The string whose opening quote was just matched, and its closing quote: only without
    /// escapes or control characters, valid UTF-8, and at most [`MAX_STRING`] bytes.
    pub(crate) fn string(&mut self) -> Option<&'a str> {
        let bytes = self.text.as_bytes();
        let end = scan_plain(bytes, self.at);
        if bytes.get(end) != Some(&b'"') || end - self.at > MAX_STRING {
            return None;
        }
        // Both ends are at ASCII bytes (a quote), so the slice falls on character boundaries.
        let text = self.text.get(self.at..end)?;
        self.at = end + 1;
        Some(text)
    }

    /// `null` or a string ([`string`](Self::string)).
    pub(crate) fn nullable_string(&mut self) -> Option<Option<&'a str>> {
        if self.literal(b"null").is_some() {
            return Some(None);
        }
        self.literal(b"\"")?;
        self.string().map(Some)
    }

    /// A plain integer: an optional minus, then `0` or up to [`MAX_DIGITS`] digits without a
    /// leading zero. What follows is left to the next step (a fraction or an exponent matches no
    /// literal a caller expects next).
    pub(crate) fn integer(&mut self) -> Option<i64> {
        let negative = self.literal(b"-").is_some();
        let rest = self.rest();
        let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
        if digits == 0 || digits > MAX_DIGITS || (digits > 1 && rest.first() == Some(&b'0')) {
            return None;
        }
        let magnitude = rest
            .get(..digits)?
            .iter()
            .fold(0i64, |n, &d| n * 10 + i64::from(d - b'0'));
        self.at += digits;
        Some(if negative { -magnitude } else { magnitude })
    }
}

/// One of `written` (what Java writes) three times in four, else one of `varied`: a part of a
/// generated value, for the tests that hold a layout reader to the general one.
#[cfg(test)]
pub(crate) fn part(
    written: &'static [&'static str],
    varied: &'static [&'static str],
) -> proptest::strategy::BoxedStrategy<alloc::string::String> {
    use proptest::prelude::*;
    prop_oneof![
        3 => prop::sample::select(written),
        1 => prop::sample::select(varied),
    ]
    .prop_map(alloc::string::String::from)
    .boxed()
}
