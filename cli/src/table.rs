//! Human output: a minimal aligned-columns table, and [`shown`], which makes text from the
//! topics safe to print.

use std::borrow::Cow;
use std::fmt::Write as _;

/// `text` as it may reach a terminal: control characters (C0, DEL, C1: an escape sequence, a
/// bell, a newline that would forge a table row) and the invisible characters that reorder or
/// hide text (bidirectional overrides and isolates such as U+202E, zero-width characters, line
/// and paragraph separators) are shown as escapes (`\n`, `\t`, `\r`, `\u{1b}`, `\u{202e}`),
/// and text longer than [`MAX_CELL_CHARS`] is cut, saying how much it left out. Everything
/// from a topic goes through it in tables, findings and readable lines; JSON output is exact.
pub(crate) fn shown(text: &str) -> Cow<'_, str> {
    let escaped = escaped(text);
    // Fewer bytes than the limit: fewer characters too.
    if escaped.len() <= MAX_CELL_CHARS {
        return escaped;
    }
    match fitted(&escaped) {
        Some(cut) => Cow::Owned(cut),
        None => escaped,
    }
}

/// `text` with the characters [`hidden`] finds shown as escapes.
pub(crate) fn escaped(text: &str) -> Cow<'_, str> {
    if !text.chars().any(hidden) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if hidden(c) => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// The most characters a cell or a name shows. A wider one (a 70 KB source partition, a
/// connector name of any length) is cut to this and says how much it left out; the JSON
/// output holds every value whole.
pub(crate) const MAX_CELL_CHARS: usize = 200;

/// Room kept at the end of a cut cell for the note of what it left out.
const CUT_NOTE_CHARS: usize = 24;

/// `text` cut to [`MAX_CELL_CHARS`] characters with the cut said at its end
/// (`…[+69,812 characters]`), or `None` when it fits.
fn fitted(text: &str) -> Option<String> {
    let count = text.chars().count();
    if count <= MAX_CELL_CHARS {
        return None;
    }
    let kept = MAX_CELL_CHARS - CUT_NOTE_CHARS;
    let head: String = text.chars().take(kept).collect();
    Some(format!("{head}…[+{} characters]", count - kept))
}

/// Whether `c` would act on a terminal or hide or reorder text instead of showing itself.
fn hidden(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061c}'
                | '\u{200b}'..='\u{200f}'
                | '\u{2028}'..='\u{202e}'
                | '\u{2060}'..='\u{2064}'
                | '\u{2066}'..='\u{2069}'
                | '\u{feff}'
        )
}

/// Renders rows under headers, columns padded to their widest cell, two spaces apart. Every
/// cell is [`shown`] (so cut to [`MAX_CELL_CHARS`]: no line grows without bound).
pub(crate) fn render(headers: &[&str], rows: &[Vec<String>]) -> String {
    let mut out = Vec::new();
    // Writing into a vector cannot fail.
    let _ = write(&mut out, headers, || rows.iter().cloned());
    String::from_utf8(out).unwrap_or_default()
}

/// Writes what [`render`] renders without holding the rows: `rows` is called twice, once to
/// measure the columns and once to write them, so a table of millions of source partitions
/// holds one row at a time.
pub(crate) fn write<I: Iterator<Item = Vec<String>>>(
    out: &mut dyn std::io::Write,
    headers: &[&str],
    rows: impl Fn() -> I,
) -> std::io::Result<()> {
    let widths = measure(headers, rows());
    write_measured(out, headers, &widths, rows())
}

/// The columns' widths for `headers` and `rows` (each cell as [`shown`]), and how many rows
/// there were: the first pass of [`write`].
pub(crate) fn measure(headers: &[&str], rows: impl Iterator<Item = Vec<String>>) -> Widths {
    let mut widths = Widths {
        columns: headers.iter().map(|h| h.chars().count()).collect(),
        rows: 0,
    };
    for row in rows {
        widths.rows += 1;
        for (i, cell) in row.iter().enumerate() {
            if let Some(w) = widths.columns.get_mut(i) {
                *w = (*w).max(shown(cell).chars().count());
            }
        }
    }
    widths
}

/// What [`measure`] found: each column's width and how many rows it measured.
pub(crate) struct Widths {
    columns: Vec<usize>,
    /// The rows measured.
    pub(crate) rows: usize,
}

/// Writes `headers` and `rows` in columns of `widths` (from [`measure`] of the same rows): the
/// second pass of [`write`].
pub(crate) fn write_measured(
    out: &mut dyn std::io::Write,
    headers: &[&str],
    widths: &Widths,
    rows: impl Iterator<Item = Vec<String>>,
) -> std::io::Result<()> {
    let header_cells: Vec<String> = headers.iter().map(|h| (*h).to_string()).collect();
    let mut line = String::new();
    for row in core::iter::once(header_cells).chain(rows) {
        line.clear();
        for (i, cell) in row.iter().enumerate() {
            let cell = shown(cell);
            line.push_str(&cell);
            if i + 1 < row.len() {
                let column = widths.columns.get(i).copied().unwrap_or(0);
                let pad = column.saturating_sub(cell.chars().count()) + 2;
                line.extend(core::iter::repeat_n(' ', pad));
            }
        }
        out.write_all(line.trim_end().as_bytes())?;
        out.write_all(b"\n")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn aligns_columns() {
        let rows = vec![
            vec!["orders".to_string(), "RUNNING".to_string()],
            vec!["x".to_string(), "-".to_string()],
        ];
        assert_eq!(
            super::render(&["NAME", "STATE"], &rows),
            "NAME    STATE\norders  RUNNING\nx       -\n"
        );
    }

    #[test]
    fn text_that_would_act_on_a_terminal_is_escaped() {
        use super::shown;
        assert_eq!(shown("orders-é"), "orders-é");
        assert_eq!(shown("a\u{1b}[2Jb"), "a\\u{1b}[2Jb");
        assert_eq!(shown("x\ny\tz\r\u{7}"), "x\\ny\\tz\\r\\u{7}");
        assert_eq!(shown("abc\u{202e}cba"), "abc\\u{202e}cba");
        assert_eq!(shown("\u{9b}\u{200b}\u{2028}"), "\\u{9b}\\u{200b}\\u{2028}");
        // A forged row stays in its cell.
        let rows = vec![vec!["a\nb  RUNNING".to_string(), "ok".to_string()]];
        assert_eq!(
            super::render(&["NAME", "STATE"], &rows),
            "NAME           STATE\na\\nb  RUNNING  ok\n"
        );
    }

    #[test]
    fn a_cell_wider_than_the_limit_is_cut_and_says_so() {
        let wide = "q".repeat(70_000);
        let rows = vec![
            vec![wide.clone(), "ok".to_string()],
            vec!["x".into(), "y".into()],
        ];
        let table = super::render(&["PARTITION", "STATE"], &rows);
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines.len(), 3);
        let kept = super::MAX_CELL_CHARS - super::CUT_NOTE_CHARS;
        let expected = format!("{}…[+{} characters]", "q".repeat(kept), 70_000 - kept);
        assert_eq!(lines[1], format!("{expected}  ok"));
        assert!(lines[1].chars().count() <= super::MAX_CELL_CHARS + 4);
        assert_eq!(
            lines[2],
            format!("x{}y", " ".repeat(expected.chars().count() + 1))
        );
        // Exactly at the limit: shown whole.
        let at = "a".repeat(super::MAX_CELL_CHARS);
        assert_eq!(super::shown(&at), at);
        // Escapes count: a cell of newlines is cut after they are shown as `\\n`.
        let newlines = "\n".repeat(150);
        let cut = super::shown(&newlines);
        assert!(
            cut.starts_with("\\n\\n") && cut.ends_with("…[+124 characters]"),
            "{cut}"
        );
    }
}
