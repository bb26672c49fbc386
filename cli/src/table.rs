//! A minimal aligned-columns table for human output.

/// Renders rows under headers, columns padded to their widest cell, two spaces apart.
pub(crate) fn render(headers: &[&str], rows: &[Vec<String>]) -> String {
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
}
