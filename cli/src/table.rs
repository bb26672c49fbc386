//! Human output: a minimal aligned-columns table, and [`shown`], which makes text from the
//! topics safe to print.

use std::borrow::Cow;
use std::fmt::Write as _;

/// `text` as it may reach a terminal: control characters (C0, DEL, C1: an escape sequence, a
/// bell, a newline that would forge a table row) and the invisible characters that reorder or
/// hide text (bidirectional overrides and isolates such as U+202E, zero-width characters, line
/// and paragraph separators) are shown as escapes (`\n`, `\t`, `\r`, `\u{1b}`, `\u{202e}`).
/// Everything from a topic goes through it in tables and findings; JSON output is exact.
pub(crate) fn shown(text: &str) -> Cow<'_, str> {
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
/// cell is [`shown`].
pub(crate) fn render(headers: &[&str], rows: &[Vec<String>]) -> String {
    let rows: Vec<Vec<String>> = rows
        .iter()
        .map(|row| row.iter().map(|cell| shown(cell).into_owned()).collect())
        .collect();
    let rows = &rows;
    let mut widths: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (i, cell) in row.iter().enumerate() {
            if let Some(w) = widths.get_mut(i) {
                *w = (*w).max(cell.chars().count());
            }
        }
    }
    let mut out = String::new();
    let header_cells: Vec<String> = headers.iter().map(|h| (*h).to_string()).collect();
    for row in core::iter::once(&header_cells).chain(rows) {
        let mut line = String::new();
        for (i, cell) in row.iter().enumerate() {
            let width = widths.get(i).copied().unwrap_or(0);
            if i + 1 == row.len() {
                line.push_str(cell);
            } else {
                line.push_str(&format!("{cell:<width$}  "));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
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
}
