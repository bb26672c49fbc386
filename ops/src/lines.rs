//! Reading text one bounded line at a time: what the kcat dump reader and the backup reader
//! share, so that a line longer than the caller's limit is refused without being held.

use std::io::BufRead;

/// Reads the next line into `line` (without `\n` or `\r\n`): `Some(true)` when it fit in
/// `max` bytes, `Some(false)` when it was longer, `None` at the end. The bytes of a longer
/// line are never held: with `stop_at_limit` reading stops at the limit (the caller fails),
/// otherwise the rest of the line is read and dropped.
pub(crate) fn next_line(
    reader: &mut impl BufRead,
    line: &mut Vec<u8>,
    max: usize,
    stop_at_limit: bool,
) -> std::io::Result<Option<bool>> {
    line.clear();
    let mut fits = true;
    let mut read_any = false;
    loop {
        let available = match reader.fill_buf() {
            Ok(available) => available,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if available.is_empty() {
            break;
        }
        read_any = true;
        let (chunk, done) = match available.iter().position(|&b| b == b'\n') {
            Some(end) => (&available[..end], Some(end + 1)),
            None => (available, None),
        };
        if fits && line.len() + chunk.len() <= max.saturating_add(1) {
            line.extend_from_slice(chunk);
        } else {
            fits = false;
            line.clear();
            if stop_at_limit {
                return Ok(Some(false));
            }
        }
        let used = done.unwrap_or(available.len());
        reader.consume(used);
        if done.is_some() {
            break;
        }
    }
    if !read_any {
        return Ok(None);
    }
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    Ok(Some(fits && line.len() <= max))
}
