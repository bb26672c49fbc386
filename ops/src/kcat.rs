//! Reading topic dumps in kcat's JSON-lines format (`kcat -C -t TOPIC -e -J`).
//!
//! One JSON object per line with `offset` (integer), `key` (string or null) and `payload`
//! (string or null = tombstone); `partition` (integer) defaults to 0; `ts` (integer
//! milliseconds, kcat's record timestamp) is the record's timestamp, unknown when absent, null
//! or negative (kcat prints -1 for a record without one). Other members (`topic`, `tstype`,
//! `broker`, `headers`, ...) are accepted and ignored. Blank lines are ignored.

use std::io::BufRead;

use engine::OwnedRecord;
use serde_json::Value;

use crate::lines::next_line;

/// One record of a dump: the record, and the line it was read from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DumpRecord {
    /// 1-based line number in the dump (0: not read from a dump).
    pub line: usize,
    /// The record (kcat's `payload` is its value).
    pub record: OwnedRecord,
}

impl core::ops::Deref for DumpRecord {
    type Target = OwnedRecord;

    fn deref(&self) -> &OwnedRecord {
        &self.record
    }
}

impl From<OwnedRecord> for DumpRecord {
    /// A record fetched from a topic, as a dump would hold it (line 0: no line).
    fn from(record: OwnedRecord) -> Self {
        Self { line: 0, record }
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
        Some(other) => {
            return Err(err(format!(
                "`offset` must be an integer, found {}",
                kind(other)
            )))
        }
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
                "`partition` must be an integer, found {}",
                kind(other)
            )))
        }
    };
    let timestamp = match obj.get("ts") {
        None | Some(Value::Null) => None,
        Some(Value::Number(n)) => match n.as_i64() {
            Some(ts) => (ts >= 0).then_some(ts),
            None => return Err(err(format!("`ts` must be a 64-bit integer, found {n}"))),
        },
        Some(other) => {
            return Err(err(format!(
                "`ts` must be an integer, found {}",
                kind(other)
            )))
        }
    };
    let bytes = |name: &str| -> Result<Option<Vec<u8>>, LineError> {
        match obj.get(name) {
            Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone().into_bytes())),
            Some(other) => Err(err(format!(
                "`{name}` must be a string or null, found {} (kcat -J writes it as a string)",
                kind(other)
            ))),
            None => Err(err(format!("missing `{name}` (use null for none)"))),
        }
    };
    Ok(Some(DumpRecord {
        line: line_no,
        record: OwnedRecord {
            key: bytes("key")?,
            value: bytes("payload")?,
            offset,
            partition,
            timestamp,
        },
    }))
}

/// What kind of JSON value `value` is, in words. Errors name the kind, never the value: a
/// payload written as an object (what `jq '.payload|=fromjson'` makes) holds passwords.
fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// How a dump is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadOptions {
    /// Skip malformed lines (counted in [`Dump::bad_lines`]) instead of failing.
    pub skip_bad_lines: bool,
    /// The longest line read, in bytes (without its newline); a longer one is malformed, and
    /// is skipped without being held when `skip_bad_lines`.
    pub max_line_bytes: usize,
}

/// The default [`ReadOptions::max_line_bytes`]: 64 MiB, far above what kcat prints for a
/// record of Kafka's largest default message size (1 MiB, up to 6 bytes per byte escaped).
pub const DEFAULT_MAX_LINE_BYTES: usize = 64 << 20;

impl ReadOptions {
    /// Fails on the first malformed line; lines up to [`DEFAULT_MAX_LINE_BYTES`].
    pub const STRICT: Self = Self {
        skip_bad_lines: false,
        max_line_bytes: DEFAULT_MAX_LINE_BYTES,
    };
}

/// How many skipped lines [`BadLines`] keeps the error of (the rest are counted).
pub const MAX_LISTED_BAD_LINES: usize = 10;

/// Lines skipped with `--skip-bad-lines`: how many, and the errors of the first ones.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BadLines {
    /// How many lines were skipped.
    pub count: usize,
    /// The first [`MAX_LISTED_BAD_LINES`] of them.
    pub first: Vec<LineError>,
}

impl BadLines {
    fn push(&mut self, error: LineError) {
        self.count += 1;
        if self.first.len() < MAX_LISTED_BAD_LINES {
            self.first.push(error);
        }
    }

    /// Whether no line was skipped.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Tells `err` which lines of `dump` (a file name) were skipped: the first ones, then
    /// the count. Nothing when none was.
    pub fn report(&self, dump: &str, err: &mut dyn std::io::Write) -> std::io::Result<()> {
        if self.is_empty() {
            return Ok(());
        }
        for bad in &self.first {
            writeln!(err, "skipped bad {bad}")?;
        }
        if self.count > self.first.len() {
            writeln!(err, "... and {} more", self.count - self.first.len())?;
        }
        writeln!(err, "skipped {} bad line(s) of {dump}", self.count)
    }
}

/// What reading a whole dump gave.
#[derive(Debug, Default)]
pub struct Dump {
    /// The records, in file order.
    pub records: Vec<DumpRecord>,
    /// Lines skipped with `--skip-bad-lines`.
    pub bad_lines: BadLines,
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

/// Reads a dump one record at a time: it holds one line (at most
/// [`ReadOptions::max_line_bytes`]), whatever the size of the dump, so a replay over it needs
/// the memory of the state, not of the file.
///
/// Yields each record in file order. A malformed line (one longer than the options allow
/// included) is yielded as an error, after which the reader yields nothing more, unless
/// [`ReadOptions::skip_bad_lines`]: then it is counted in [`bad_lines`](Self::bad_lines) and
/// reading goes on. An IO error also ends the reading.
#[derive(Debug)]
pub struct DumpReader<R> {
    reader: R,
    options: ReadOptions,
    line: Vec<u8>,
    number: usize,
    bad_lines: BadLines,
    done: bool,
}

impl<R: BufRead> DumpReader<R> {
    /// A reader at the first line of `reader`.
    pub fn new(reader: R, options: ReadOptions) -> Self {
        Self {
            reader,
            options,
            line: Vec::new(),
            number: 0,
            bad_lines: BadLines::default(),
            done: false,
        }
    }

    /// The lines skipped so far (with [`ReadOptions::skip_bad_lines`]).
    pub fn bad_lines(&self) -> &BadLines {
        &self.bad_lines
    }

    /// The lines skipped, once reading is over.
    pub fn into_bad_lines(self) -> BadLines {
        self.bad_lines
    }

    /// The next line parsed: `None` at the end of the dump.
    fn next_parsed(&mut self) -> Result<Option<Result<Option<DumpRecord>, LineError>>, DumpError> {
        let max = self.options.max_line_bytes;
        let stop_at_limit = !self.options.skip_bad_lines;
        let Some(fits) = next_line(&mut self.reader, &mut self.line, max, stop_at_limit)? else {
            return Ok(None);
        };
        self.number += 1;
        let number = self.number;
        if !fits {
            return Ok(Some(Err(LineError {
                line: number,
                problem: format!(
                    "longer than {max} bytes (raise --max-line-bytes if the dump is right)"
                ),
            })));
        }
        Ok(Some(match std::str::from_utf8(&self.line) {
            Ok(text) => parse_line(number, text),
            Err(_) => Err(LineError {
                line: number,
                problem: "not valid UTF-8".into(),
            }),
        }))
    }
}

impl<R: BufRead> Iterator for DumpReader<R> {
    type Item = Result<DumpRecord, DumpError>;

    fn next(&mut self) -> Option<Self::Item> {
        while !self.done {
            match self.next_parsed() {
                Ok(None) => self.done = true,
                Ok(Some(Ok(Some(record)))) => return Some(Ok(record)),
                Ok(Some(Ok(None))) => {}
                Ok(Some(Err(e))) if self.options.skip_bad_lines => self.bad_lines.push(e),
                Ok(Some(Err(e))) => {
                    self.done = true;
                    return Some(Err(e.into()));
                }
                Err(e) => {
                    self.done = true;
                    return Some(Err(e));
                }
            }
        }
        None
    }
}

impl<R: BufRead> std::iter::FusedIterator for DumpReader<R> {}

/// Reads every line of a dump into memory (see [`DumpReader`] to stream instead). A malformed
/// line is an error unless [`ReadOptions::skip_bad_lines`], in which case it is counted in
/// [`Dump::bad_lines`].
pub fn read_dump(reader: impl BufRead, options: ReadOptions) -> Result<Dump, DumpError> {
    let mut lines = DumpReader::new(reader, options);
    let records = lines.by_ref().collect::<Result<Vec<_>, _>>()?;
    Ok(Dump {
        records,
        bad_lines: lines.into_bad_lines(),
    })
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
        assert_eq!(record.value.as_deref(), Some(&br#"{"properties":{}}"#[..]));
        let tombstone = parse_line(2, r#"{"offset":4,"key":"connector-a","payload":null}"#)
            .unwrap()
            .unwrap();
        assert_eq!(tombstone.value, None);
        assert_eq!(tombstone.partition, 0);
        assert_eq!(parse_line(3, "   ").unwrap(), None);
        assert_eq!(record.timestamp, Some(1));
        assert_eq!(record.as_record().timestamp, Some(1));
        assert_eq!(tombstone.timestamp, None, "no `ts`: unknown");
        let untimed = r#"{"offset":5,"ts":-1,"key":"k","payload":null}"#;
        assert_eq!(parse_line(4, untimed).unwrap().unwrap().timestamp, None);
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
            (
                r#"{"offset":1,"ts":"x","key":"a","payload":null}"#,
                "`ts` must be an integer",
            ),
            (
                r#"{"offset":1,"ts":1.5,"key":"a","payload":null}"#,
                "`ts` must be a 64-bit integer",
            ),
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

    const SKIP: ReadOptions = ReadOptions {
        skip_bad_lines: true,
        max_line_bytes: DEFAULT_MAX_LINE_BYTES,
    };

    #[test]
    fn bad_lines_are_errors_or_collected() {
        let text = "{\"offset\":0,\"key\":\"a\",\"payload\":null}\nnope\n";
        let e = read_dump(text.as_bytes(), ReadOptions::STRICT).unwrap_err();
        assert_eq!(
            e.to_string(),
            "line 2: not valid JSON: expected ident at line 1 column 2"
        );
        let dump = read_dump(text.as_bytes(), SKIP).unwrap();
        assert_eq!(dump.records.len(), 1);
        assert_eq!(dump.bad_lines.count, 1);
        let invalid = read_dump(&b"\xff\xfe\n"[..], ReadOptions::STRICT).unwrap_err();
        assert_eq!(invalid.to_string(), "line 1: not valid UTF-8");
    }

    #[test]
    fn skipped_lines_are_counted_and_the_first_kept() {
        let text = "nope\n".repeat(25);
        let dump = read_dump(text.as_bytes(), SKIP).unwrap();
        assert_eq!(dump.bad_lines.count, 25);
        assert_eq!(dump.bad_lines.first.len(), MAX_LISTED_BAD_LINES);
        let mut report = Vec::new();
        dump.bad_lines.report("d.jsonl", &mut report).unwrap();
        let report = String::from_utf8(report).unwrap();
        assert!(
            report.starts_with("skipped bad line 1: not valid JSON"),
            "{report}"
        );
        assert!(
            report.ends_with("... and 15 more\nskipped 25 bad line(s) of d.jsonl\n"),
            "{report}"
        );
    }

    #[test]
    fn a_line_over_the_limit_fails_or_is_skipped_without_being_held() {
        let record = r#"{"offset":0,"key":"a","payload":null}"#;
        let options = |skip_bad_lines| ReadOptions {
            skip_bad_lines,
            max_line_bytes: record.len(),
        };
        // Exactly at the limit, with either line end, and without one at the end.
        for text in [
            format!("{record}\n"),
            format!("{record}\r\n"),
            record.to_string(),
        ] {
            let dump = read_dump(text.as_bytes(), options(false)).unwrap();
            assert_eq!(dump.records.len(), 1, "{text:?}");
        }
        let long = format!("{record} \n{record}\n");
        let e = read_dump(long.as_bytes(), options(false)).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "line 1: longer than {} bytes (raise --max-line-bytes if the dump is right)",
                record.len()
            )
        );
        let dump = read_dump(long.as_bytes(), options(true)).unwrap();
        assert_eq!((dump.records.len(), dump.bad_lines.count), (1, 1));
        assert_eq!(dump.records[0].line, 2);
        // An endless line (like /dev/zero) through a small buffer: refused, never held.
        let endless = std::io::BufReader::with_capacity(64, std::io::repeat(0));
        let e = read_dump(
            endless,
            ReadOptions {
                skip_bad_lines: false,
                max_line_bytes: 1 << 20,
            },
        )
        .unwrap_err();
        assert!(
            e.to_string()
                .starts_with("line 1: longer than 1048576 bytes"),
            "{e}"
        );
    }

    /// The reader holds one line, not the dump: it yields records from an endless input.
    #[test]
    fn the_reader_streams_an_endless_dump() {
        struct Endless(&'static [u8], usize);
        impl std::io::Read for Endless {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                let mut n = 0;
                while n < buf.len() {
                    buf[n] = self.0[self.1 % self.0.len()];
                    self.1 += 1;
                    n += 1;
                }
                Ok(n)
            }
        }
        let line = b"{\"offset\":1,\"key\":\"k\",\"payload\":\"v\"}\n";
        let reader = DumpReader::new(
            std::io::BufReader::new(Endless(line, 0)),
            ReadOptions::STRICT,
        );
        let records: Vec<DumpRecord> = reader.take(10_000).map(Result::unwrap).collect();
        assert_eq!(records.len(), 10_000);
        assert_eq!(records[9_999].line, 10_000);
    }

    /// Records before a malformed line are yielded, then its error, then nothing more.
    #[test]
    fn the_reader_stops_at_the_first_malformed_line() {
        let dump = "{\"offset\":0,\"key\":\"a\",\"payload\":null}\nnot json\n{\"offset\":1,\"key\":\"b\",\"payload\":null}\n";
        let mut reader = DumpReader::new(dump.as_bytes(), ReadOptions::STRICT);
        assert_eq!(reader.next().unwrap().unwrap().offset, 0);
        assert!(matches!(reader.next(), Some(Err(DumpError::Line(e))) if e.line == 2));
        assert!(reader.next().is_none());
        let skipping = ReadOptions {
            skip_bad_lines: true,
            ..ReadOptions::STRICT
        };
        let mut reader = DumpReader::new(dump.as_bytes(), skipping);
        let offsets: Vec<i64> = reader.by_ref().map(|r| r.unwrap().offset).collect();
        assert_eq!(offsets, [0, 1]);
        assert_eq!(reader.bad_lines().count, 1);
    }
}
