//! Reading topic dumps in kcat's JSON-lines format (`kcat -C -t TOPIC -e -J`).
//!
//! One JSON object per line with `offset` (integer), `key` (string or null) and `payload`
//! (string or null = tombstone); `partition` (integer) defaults to 0. Other members (`topic`,
//! `ts`, `tstype`, `broker`, `headers`, ...) are accepted and ignored. Blank lines are ignored.

use std::io::BufRead;

use serde_json::Value;

/// One record of a dump, owning its bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DumpRecord {
    /// 1-based line number in the dump.
    pub line: usize,
    /// Partition (default 0).
    pub partition: i32,
    /// Offset.
    pub offset: i64,
    /// Key bytes, `None` for a null key.
    pub key: Option<Vec<u8>>,
    /// Value bytes, `None` for a tombstone.
    pub payload: Option<Vec<u8>>,
}

impl DumpRecord {
    /// The record as the core consumes it.
    pub fn as_record(&self) -> engine::Record<'_> {
        engine::Record {
            key: self.key.as_deref(),
            value: self.payload.as_deref(),
            offset: self.offset,
            partition: self.partition,
        }
    }
}

/// A line that is not a valid dump record.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {problem}")]
pub struct LineError {
    /// 1-based line number.
    pub line: usize,
    /// What is wrong with it.
    pub problem: String,
}

/// Parses one dump line. `Ok(None)` for a blank line.
pub fn parse_line(line_no: usize, text: &str) -> Result<Option<DumpRecord>, LineError> {
    if text.trim().is_empty() {
        return Ok(None);
    }
    let err = |problem: String| LineError {
        line: line_no,
        problem,
    };
    let value: Value =
        serde_json::from_str(text).map_err(|e| err(format!("not valid JSON: {e}")))?;
    let Value::Object(obj) = value else {
        return Err(err("not a JSON object".into()));
    };
    let offset = match obj.get("offset") {
        Some(Value::Number(n)) => n.as_i64().filter(|o| *o >= 0).ok_or_else(|| {
            err(format!(
                "`offset` must be a non-negative integer, found {n}"
            ))
        })?,
        Some(other) => return Err(err(format!("`offset` must be an integer, found {other}"))),
        None => return Err(err("missing `offset`".into())),
    };
    let partition = match obj.get("partition") {
        None | Some(Value::Null) => 0,
        Some(Value::Number(n)) => n
            .as_i64()
            .and_then(|p| i32::try_from(p).ok())
            .filter(|p| *p >= 0)
            .ok_or_else(|| {
                err(format!(
                    "`partition` must be a non-negative 32-bit integer, found {n}"
                ))
            })?,
        Some(other) => {
            return Err(err(format!(
                "`partition` must be an integer, found {other}"
            )))
        }
    };
    let bytes = |name: &str| -> Result<Option<Vec<u8>>, LineError> {
        match obj.get(name) {
            Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone().into_bytes())),
            Some(other) => Err(err(format!(
                "`{name}` must be a string or null, found {other}"
            ))),
            None => Err(err(format!("missing `{name}` (use null for none)"))),
        }
    };
    Ok(Some(DumpRecord {
        line: line_no,
        partition,
        offset,
        key: bytes("key")?,
        payload: bytes("payload")?,
    }))
}

/// What reading a whole dump gave.
#[derive(Debug, Default)]
pub struct Dump {
    /// The records, in file order.
    pub records: Vec<DumpRecord>,
    /// Lines skipped with `--skip-bad-lines`.
    pub bad_lines: Vec<LineError>,
}

/// A dump could not be read.
#[derive(Debug, thiserror::Error)]
pub enum DumpError {
    /// A malformed line (without `--skip-bad-lines`).
    #[error("{0}")]
    Line(#[from] LineError),
    /// The file could not be read.
    #[error("could not read the dump: {0}")]
    Io(#[from] std::io::Error),
}

/// Reads every line of a dump. A malformed line is an error unless `skip_bad_lines`, in which
/// case it is collected in [`Dump::bad_lines`].
pub fn read_dump(reader: impl BufRead, skip_bad_lines: bool) -> Result<Dump, DumpError> {
    let mut dump = Dump::default();
    for (i, line) in reader.lines().enumerate() {
        let line = line.map_err(|e| {
            if e.kind() == std::io::ErrorKind::InvalidData {
                DumpError::Line(LineError {
                    line: i + 1,
                    problem: "not valid UTF-8".into(),
                })
            } else {
                DumpError::Io(e)
            }
        });
        let parsed = line.and_then(|text| parse_line(i + 1, &text).map_err(DumpError::Line));
        match parsed {
            Ok(Some(record)) => dump.records.push(record),
            Ok(None) => {}
            Err(DumpError::Line(e)) if skip_bad_lines => dump.bad_lines.push(e),
            Err(e) => return Err(e),
        }
    }
    Ok(dump)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_kcat_lines() {
        let line = r#"{"topic":"connect-configs","partition":0,"offset":3,"tstype":"create","ts":1,"broker":1,"headers":null,"key":"connector-a","payload":"{\"properties\":{}}"}"#;
        let record = parse_line(1, line).unwrap().unwrap();
        assert_eq!(record.offset, 3);
        assert_eq!(record.key.as_deref(), Some(&b"connector-a"[..]));
        assert_eq!(
            record.payload.as_deref(),
            Some(&br#"{"properties":{}}"#[..])
        );
        let tombstone = parse_line(2, r#"{"offset":4,"key":"connector-a","payload":null}"#)
            .unwrap()
            .unwrap();
        assert_eq!(tombstone.payload, None);
        assert_eq!(tombstone.partition, 0);
        assert_eq!(parse_line(3, "   ").unwrap(), None);
    }

    #[test]
    fn malformed_lines_name_the_problem() {
        let cases = [
            ("{", "not valid JSON"),
            ("[1]", "not a JSON object"),
            (r#"{"key":"a","payload":null}"#, "missing `offset`"),
            (r#"{"offset":-1,"key":"a","payload":null}"#, "non-negative"),
            (
                r#"{"offset":"1","key":"a","payload":null}"#,
                "`offset` must be an integer",
            ),
            (r#"{"offset":1,"payload":null}"#, "missing `key`"),
            (r#"{"offset":1,"key":"a"}"#, "missing `payload`"),
            (
                r#"{"offset":1,"key":1,"payload":null}"#,
                "`key` must be a string",
            ),
            (
                r#"{"offset":1,"key":"a","payload":null,"partition":-2}"#,
                "`partition`",
            ),
        ];
        for (text, expected) in cases {
            let e = parse_line(7, text).unwrap_err();
            assert_eq!(e.line, 7);
            assert!(e.to_string().contains(expected), "{text}: {e}");
        }
    }

    #[test]
    fn bad_lines_are_errors_or_collected() {
        let text = "{\"offset\":0,\"key\":\"a\",\"payload\":null}\nnope\n";
        let e = read_dump(text.as_bytes(), false).unwrap_err();
        assert_eq!(
            e.to_string(),
            "line 2: not valid JSON: expected ident at line 1 column 2"
        );
        let dump = read_dump(text.as_bytes(), true).unwrap();
        assert_eq!(dump.records.len(), 1);
        assert_eq!(dump.bad_lines.len(), 1);
        let invalid = read_dump(&b"\xff\xfe\n"[..], false).unwrap_err();
        assert_eq!(invalid.to_string(), "line 1: not valid UTF-8");
    }
}
