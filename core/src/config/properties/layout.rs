//! The byte layouts [`Properties`](super::Properties) are made of: texts laid end to end
//! behind their end positions ([`Layout`]), and the sorted names shared by configurations
//! ([`Names`]).

use alloc::vec::Vec;

use crate::sync::Arc;

/// What every refusal of a malformed layout says.
const MALFORMED: &str = "the property layout is malformed";

/// Texts laid end to end behind their end positions: `width` (one byte: 2, 4 or 8, the narrowest
/// that holds every number), little-endian numbers of that width (a layout of names starts with
/// their count; then one end position per text), then the texts.
///
/// Every layout is built here or checked by [`Layout::check`] when decoded, so the accessors
/// index without fallbacks: a number or a span out of range, or text that is not UTF-8, is a bug
/// in this module, and panics rather than reading as empty.
#[derive(Clone, Copy)]
pub(super) struct Layout<'a> {
    bytes: &'a [u8],
    /// How many numbers come before the text.
    numbers: usize,
    /// Which number is the first end position.
    first_end: usize,
}

impl<'a> Layout<'a> {
    /// A layout of `ends` texts, built or checked before.
    pub(super) fn of_values(bytes: &'a [u8], ends: usize) -> Self {
        Self {
            bytes,
            numbers: ends,
            first_end: 0,
        }
    }

    fn width(self) -> usize {
        usize::from(self.bytes[0])
    }

    /// Number `i`. Only called in range.
    fn number(self, i: usize) -> usize {
        let width = self.width();
        let at = 1 + i * width;
        match self.bytes[at..at + width] {
            [a, b] => usize::from(u16::from_le_bytes([a, b])),
            [a, b, c, d] => u32::from_le_bytes([a, b, c, d]) as usize,
            [a, b, c, d, e, f, g, h] => {
                usize::try_from(u64::from_le_bytes([a, b, c, d, e, f, g, h]))
                    .expect("a checked end position fits in memory")
            }
            _ => unreachable!("a checked width is 2, 4 or 8"),
        }
    }

    fn text(self) -> &'a [u8] {
        &self.bytes[1 + self.width() * self.numbers..]
    }

    /// The bytes of text `index`: from the end of the text before (0 for the first) to its
    /// own end.
    pub(super) fn bytes_of(self, index: usize) -> &'a [u8] {
        let start = index
            .checked_sub(1)
            .map_or(0, |prev| self.number(self.first_end + prev));
        let end = self.number(self.first_end + index);
        &self.text()[start..end]
    }

    /// Text `index`.
    pub(super) fn str_of(self, index: usize) -> &'a str {
        core::str::from_utf8(self.bytes_of(index)).expect("checked text is UTF-8 at every end")
    }

    /// The narrowest width that holds every number up to `largest`.
    pub(super) fn width_for(largest: usize) -> usize {
        if u16::try_from(largest).is_ok() {
            2
        } else if u32::try_from(largest).is_ok() {
            4
        } else {
            8
        }
    }

    /// Appends to `out` a layout's width and numbers (the caller appends the text): `leading`
    /// numbers, then the end positions of texts of `lengths`.
    pub(super) fn write_numbers(
        out: &mut Vec<u8>,
        width: usize,
        leading: Option<usize>,
        lengths: impl Iterator<Item = usize>,
    ) {
        out.push(width as u8);
        let ends = lengths.scan(0usize, |end, len| {
            *end += len;
            Some(*end)
        });
        for number in leading.into_iter().chain(ends) {
            out.extend_from_slice(&(number as u64).to_le_bytes()[..width]);
        }
    }

    /// Checks decoded (untrusted) bytes for the accessors: a width of 2, 4 or 8, the narrowest
    /// for the text's length and `largest_leading`; `first_end` numbers before `ends` end
    /// positions ascending on character boundaries of valid UTF-8 text, the last at its end.
    pub(super) fn check(
        bytes: &'a [u8],
        first_end: usize,
        ends: usize,
        largest_leading: usize,
    ) -> Result<Self, &'static str> {
        let width = usize::from(*bytes.first().ok_or(MALFORMED)?);
        let numbers = first_end.checked_add(ends).ok_or(MALFORMED)?;
        let header = numbers
            .checked_mul(width)
            .and_then(|n| n.checked_add(1))
            .ok_or(MALFORMED)?;
        if !matches!(width, 2 | 4 | 8) || header > bytes.len() {
            return Err(MALFORMED);
        }
        let layout = Self {
            bytes,
            numbers,
            first_end,
        };
        // One vectorized check of the whole text (`core`'s is several times slower).
        let text =
            simdutf8::basic::from_utf8(layout.text()).map_err(|_| "property text is not UTF-8")?;
        if width != Self::width_for(text.len().max(largest_leading)) {
            return Err("property positions are wider than needed");
        }
        let mut start = 0;
        for index in 0..ends {
            let end = layout.number(first_end + index);
            if end < start || end > text.len() || !text.is_char_boundary(end) {
                return Err("property positions are out of order or out of the text");
            }
            start = end;
        }
        if start != text.len() {
            return Err("property text has unused bytes");
        }
        Ok(layout)
    }
}

/// The sorted, unique names of a configuration: a [`Layout`] whose first number is their
/// count. Shared by reference among configurations with the same names (see
/// [`Shapes`](super::Shapes)).
#[derive(Clone, PartialEq, Eq)]
pub(super) struct Names(Arc<[u8]>);

impl Names {
    fn layout(&self) -> Layout<'_> {
        Layout {
            bytes: &self.0,
            numbers: 1 + self.len(),
            first_end: 1,
        }
    }

    /// How many names there are.
    pub(super) fn len(&self) -> usize {
        Layout {
            bytes: &self.0,
            numbers: 1,
            first_end: 1,
        }
        .number(0)
    }

    /// Name `index`.
    pub(super) fn name(&self, index: usize) -> &str {
        self.layout().str_of(index)
    }

    /// The bytes of name `index` (no UTF-8 check: for comparisons).
    pub(super) fn name_bytes(&self, index: usize) -> &[u8] {
        self.layout().bytes_of(index)
    }

    /// The layout's bytes, for checkpoints.
    pub(super) fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// Whether both are one allocation.
    pub(super) fn same_allocation(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    /// Lays out `names`, which must be sorted and unique.
    pub(super) fn from_sorted<'n>(names: impl ExactSizeIterator<Item = &'n str> + Clone) -> Self {
        let count = names.len();
        let size: usize = names.clone().map(str::len).sum();
        let width = Layout::width_for(size.max(count));
        let mut out = Vec::with_capacity(1 + width * (1 + count) + size);
        Layout::write_numbers(&mut out, width, Some(count), names.clone().map(str::len));
        for name in names {
            out.extend_from_slice(name.as_bytes());
        }
        Self(out.into())
    }

    /// Checks decoded (untrusted) bytes: a layout of strictly ascending names.
    pub(super) fn checked(bytes: Arc<[u8]>) -> Result<Self, &'static str> {
        // The count first, so that the layout's check knows how many ends to read.
        let count = match *bytes {
            [2, a, b, ..] => usize::from(u16::from_le_bytes([a, b])),
            [4, a, b, c, d, ..] => u32::from_le_bytes([a, b, c, d]) as usize,
            [8, a, b, c, d, e, f, g, h, ..] => {
                usize::try_from(u64::from_le_bytes([a, b, c, d, e, f, g, h]))
                    .map_err(|_| MALFORMED)?
            }
            _ => return Err(MALFORMED),
        };
        Layout::check(&bytes, 1, count, count)?;
        let names = Self(bytes);
        for index in 1..count {
            // Byte order of UTF-8 is the order of `str`.
            if names.name_bytes(index - 1) >= names.name_bytes(index) {
                return Err("property names are not strictly ascending");
            }
        }
        Ok(names)
    }
}
