//! The backup document: JSON Lines, written and read one line at a time, so that neither side
//! holds a cluster's ten million source partitions at once.
//!
//! ```text
//! {"backup":{"format":"connect-state-backup","version":1,...}}          the header
//! {"connector":{"name":"orders","config":{...},...,"source_partitions":2}}
//! {"offset":{"key":"[\"orders\",{\"file\":\"a\"}]","value":"{\"pos\":12}","partition":3}}
//! {"offset":{...}}                                                    its source partitions
//! {"connector":{...}}                                                  the next connector
//! {"end":{"connectors":2,"source_partitions":5,"sha256":"..."}}       counts and checksum
//! ```
//!
//! Every line is one JSON object with one member naming its kind. The checksum is SHA-256 over
//! the bytes of every line before the end line, newlines included, so an edited, truncated or
//! reordered document is refused; the counts let a reader tell where it was cut.

use std::collections::BTreeMap;
use std::io::{BufRead, Write};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::lines::next_line;

/// The `format` member of every backup's header.
pub const FORMAT: &str = "connect-state-backup";

/// The document version this build writes, and the newest it reads.
pub const VERSION: u32 = 1;

/// The longest line read by default (a connector with many large task configs stays well
/// under it).
pub const DEFAULT_MAX_LINE_BYTES: usize = 64 << 20;

/// How a backup holds config values whose names look secret.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Secrets {
    /// As stored in the config topic: the backup restores.
    AsStored,
    /// Masked: an audit copy, which `restore` refuses to write.
    Masked,
}

/// Where the state was read from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Source {
    /// `live` (a cluster) or `dumps` (kcat dump files).
    pub kind: String,
    /// The cluster's `bootstrap.servers`, for a live source.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bootstrap_servers: Option<String>,
    /// Each topic read (`config`, `status`, `offsets`): its name, or its dump file.
    pub topics: BTreeMap<String, String>,
}

/// The first line: what the document is, where and when it was taken, how far it read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Header {
    /// Always [`FORMAT`].
    pub format: String,
    /// The document version ([`VERSION`] when written by this build).
    pub version: u32,
    /// The program that wrote it, e.g. `connect-state 0.1.0`.
    pub tool: String,
    /// When it was taken (RFC 3339, the writer's clock).
    pub taken_at: String,
    /// Where the state was read from.
    pub source: Source,
    /// `--as-of`, when the state is a past one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub as_of: Option<String>,
    /// The next offset read of every partition, per topic: the state is the records below.
    pub read_up_to: BTreeMap<String, BTreeMap<String, i64>>,
    /// The timestamp of the newest record read (ms since the epoch), when records had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub newest_record_ms: Option<i64>,
    /// How secrets are held.
    pub secrets: Secrets,
    /// The connectors asked for (`--connector`), or `None` for all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selected: Option<Vec<String>>,
    /// Whether the connectors' KIP-558 active topics were taken.
    pub active_topics: bool,
}

impl Header {
    /// The header of a backup taken now (`taken_at`, RFC 3339) by `tool` from `source`, of
    /// this build's format and version, secrets as stored; the other members are empty, for
    /// the caller to fill in.
    pub fn new(tool: impl Into<String>, taken_at: impl Into<String>, source: Source) -> Self {
        Self {
            format: FORMAT.into(),
            version: VERSION,
            tool: tool.into(),
            taken_at: taken_at.into(),
            source,
            as_of: None,
            read_up_to: BTreeMap::new(),
            newest_record_ms: None,
            secrets: Secrets::AsStored,
            selected: None,
            active_topics: false,
        }
    }
}

/// A connector: its config as stored, its target state, its tasks (for reference), and how
/// many source partitions follow its line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConnectorEntry {
    /// The connector's name.
    pub name: String,
    /// Its config as stored (values as read: strings, and rarely other JSON), or `null` for a
    /// connector that has source offsets but no config (deleted, perhaps to be created again).
    pub config: Option<Map<String, Value>>,
    /// Its target state (`STARTED`, `PAUSED`, `STOPPED`), `null` without a config.
    pub target_state: Option<String>,
    /// The task count of its latest commit.
    pub task_count: i32,
    /// Its task configs below the task count, by task (an inconsistent connector's may lack
    /// some).
    pub task_configs: Vec<TaskConfig>,
    /// The topics its tasks reported active (KIP-558), when the backup took them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_topics: Option<Vec<String>>,
    /// How many `offset` lines follow this one.
    pub source_partitions: u64,
}

/// One task's config.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskConfig {
    /// The task number.
    pub task: i32,
    /// Its config as stored.
    pub config: Map<String, Value>,
}

/// One live record of the offsets topic: exact key and value bytes, as UTF-8 text when they
/// are, as Base64 otherwise.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OffsetEntry {
    /// The key, when it is UTF-8.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// The key in Base64, when it is not UTF-8.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_base64: Option<String>,
    /// The value, when it is UTF-8.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// The value in Base64, when it is not UTF-8.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_base64: Option<String>,
    /// The partition of the offsets topic it was read from (for reference: a restore places
    /// records for the target topic).
    pub partition: i32,
}

impl OffsetEntry {
    /// The entry of a record's key and value bytes.
    pub fn new(key: &[u8], value: &[u8], partition: i32) -> Self {
        let (key, key_base64) = text_or_base64(key);
        let (value, value_base64) = text_or_base64(value);
        Self {
            key,
            key_base64,
            value,
            value_base64,
            partition,
        }
    }

    /// The key's bytes; fails when the entry has neither form, both, or bad Base64.
    pub fn key_bytes(&self) -> Result<Vec<u8>, String> {
        bytes_of("key", self.key.as_deref(), self.key_base64.as_deref())
    }

    /// The value's bytes (see [`key_bytes`](Self::key_bytes)).
    pub fn value_bytes(&self) -> Result<Vec<u8>, String> {
        bytes_of("value", self.value.as_deref(), self.value_base64.as_deref())
    }
}

fn text_or_base64(bytes: &[u8]) -> (Option<String>, Option<String>) {
    match std::str::from_utf8(bytes) {
        Ok(text) => (Some(text.to_owned()), None),
        Err(_) => {
            use base64::Engine as _;
            (
                None,
                Some(base64::engine::general_purpose::STANDARD.encode(bytes)),
            )
        }
    }
}

fn bytes_of(what: &str, text: Option<&str>, base64: Option<&str>) -> Result<Vec<u8>, String> {
    use base64::Engine as _;
    match (text, base64) {
        (Some(text), None) => Ok(text.as_bytes().to_vec()),
        (None, Some(encoded)) => base64::engine::general_purpose::STANDARD
            .decode(encoded)
            .map_err(|e| format!("{what}_base64 is not Base64: {e}")),
        (None, None) => Err(format!("an offset without a {what}")),
        (Some(_), Some(_)) => Err(format!("an offset with both {what} and {what}_base64")),
    }
}

/// The last line: the counts and the checksum of everything before it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Trailer {
    /// Connector lines.
    pub connectors: u64,
    /// Offset lines.
    pub source_partitions: u64,
    /// SHA-256 of every line before this one (newlines included), in lowercase hex.
    pub sha256: String,
}

/// One line of the document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Line {
    /// The header (first).
    Backup(Header),
    /// A connector.
    Connector(ConnectorEntry),
    /// A source partition of the connector before it.
    Offset(OffsetEntry),
    /// The trailer (last).
    End(Trailer),
}

/// Why a document cannot be written or read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DocumentError {
    /// Reading or writing failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// The first line is not a backup's header.
    #[error("not a connect-state backup: {0}")]
    NotABackup(String),
    /// A newer format than this build reads.
    #[error(
        "the backup is format version {found}; this connect-state reads versions up to \
         {VERSION}: use a newer connect-state"
    )]
    NewerVersion {
        /// The version found.
        found: u64,
    },
    /// A line that is not what the document allows there.
    #[error("line {line}: {problem}")]
    BadLine {
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        problem: String,
    },
    /// A line longer than the limit.
    #[error("line {line} is longer than {max} bytes")]
    LineTooLong {
        /// 1-based line number.
        line: usize,
        /// The limit.
        max: usize,
    },
    /// The document ends before its end line.
    #[error(
        "the backup is truncated: it ends after line {lines} without its end line \
         ({connectors} connector(s) and {source_partitions} source partition(s) read)"
    )]
    Truncated {
        /// Lines read.
        lines: usize,
        /// Connector lines read.
        connectors: u64,
        /// Offset lines read.
        source_partitions: u64,
    },
    /// The content does not match its checksum.
    #[error(
        "the backup's checksum does not match its content (sha256 {found}, the end line says \
         {expected}): it was changed or damaged after it was written"
    )]
    ChecksumMismatch {
        /// The checksum computed.
        found: String,
        /// The checksum the end line holds.
        expected: String,
    },
}

/// Writes a document line by line. Start with [`new`](Self::new) (the header), then for each
/// connector [`connector`](Self::connector) followed by exactly its
/// `source_partitions` [`offset`](Self::offset)s, then [`finish`](Self::finish).
pub struct DocumentWriter<W: Write> {
    out: W,
    hasher: Sha256,
    line: Vec<u8>,
    connectors: u64,
    source_partitions: u64,
    bytes: u64,
    /// Offsets the last connector line announced that are still to come.
    pending: u64,
}

/// What a finished document holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    /// Connector lines.
    pub connectors: u64,
    /// Offset lines.
    pub source_partitions: u64,
    /// The document's size in bytes.
    pub bytes: u64,
    /// The checksum in its end line.
    pub sha256: String,
}

impl<W: Write> DocumentWriter<W> {
    /// Starts a document on `out` with `header`.
    pub fn new(out: W, header: &Header) -> Result<Self, DocumentError> {
        let mut writer = Self {
            out,
            hasher: Sha256::new(),
            line: Vec::with_capacity(4096),
            connectors: 0,
            source_partitions: 0,
            bytes: 0,
            pending: 0,
        };
        writer.write(&LineRef::Backup(header), true)?;
        Ok(writer)
    }

    /// Writes a connector's line; its `source_partitions` offsets must follow.
    pub fn connector(&mut self, entry: &ConnectorEntry) -> Result<(), DocumentError> {
        self.check_pending()?;
        self.pending = entry.source_partitions;
        self.connectors += 1;
        self.write(&LineRef::Connector(entry), true)
    }

    /// Writes one source partition of the connector written last.
    pub fn offset(&mut self, entry: &OffsetEntry) -> Result<(), DocumentError> {
        if self.pending == 0 {
            return Err(DocumentError::Io(std::io::Error::other(
                "an offset beyond its connector's announced source partitions",
            )));
        }
        self.pending -= 1;
        self.source_partitions += 1;
        self.write(&LineRef::Offset(entry), true)
    }

    /// Writes the end line and flushes; returns the output and what the document holds.
    pub fn finish(mut self) -> Result<(W, Written), DocumentError> {
        self.check_pending()?;
        let sha256 = hex(&std::mem::take(&mut self.hasher).finalize());
        let trailer = Trailer {
            connectors: self.connectors,
            source_partitions: self.source_partitions,
            sha256: sha256.clone(),
        };
        self.write(&LineRef::End(&trailer), false)?;
        self.out.flush()?;
        let written = Written {
            connectors: self.connectors,
            source_partitions: self.source_partitions,
            bytes: self.bytes,
            sha256,
        };
        Ok((self.out, written))
    }

    fn check_pending(&self) -> Result<(), DocumentError> {
        match self.pending {
            0 => Ok(()),
            n => Err(DocumentError::Io(std::io::Error::other(format!(
                "{n} source partition(s) of the last connector were announced but not written"
            )))),
        }
    }

    fn write(&mut self, line: &LineRef<'_>, hashed: bool) -> Result<(), DocumentError> {
        self.line.clear();
        serde_json::to_writer(&mut self.line, line).map_err(std::io::Error::from)?;
        self.line.push(b'\n');
        if hashed {
            self.hasher.update(&self.line);
        }
        self.out.write_all(&self.line)?;
        self.bytes += self.line.len() as u64;
        Ok(())
    }
}

/// [`Line`] borrowed, for writing without copying.
#[derive(Serialize)]
#[serde(rename_all = "snake_case")]
enum LineRef<'a> {
    Backup(&'a Header),
    Connector(&'a ConnectorEntry),
    Offset(&'a OffsetEntry),
    End(&'a Trailer),
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// An item of a document after its header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Item {
    /// A connector; its source partitions follow.
    Connector(ConnectorEntry),
    /// A source partition of the connector read last.
    Offset(OffsetEntry),
}

/// Reads a document line by line, checking as it goes: the header first (format and version),
/// offsets only after their connector and as many as it announced, and at the end line the
/// counts and the checksum. Nothing read is to be trusted until
/// [`next_item`](Self::next_item) has returned `Ok(None)`: read a document through once to verify it
/// before acting on any of it.
pub struct DocumentReader<R> {
    reader: R,
    max_line_bytes: usize,
    header: Header,
    hasher: Sha256,
    line: Vec<u8>,
    line_no: usize,
    connectors: u64,
    source_partitions: u64,
    pending: u64,
    ended: bool,
}

impl<R: BufRead> DocumentReader<R> {
    /// Opens a document: reads and checks its header. Lines longer than `max_line_bytes` are
    /// refused without being held.
    pub fn open(mut reader: R, max_line_bytes: usize) -> Result<Self, DocumentError> {
        let mut line = Vec::new();
        let first = next_line(&mut reader, &mut line, max_line_bytes, true)?;
        match first {
            None => return Err(DocumentError::NotABackup("the file is empty".into())),
            Some(false) => {
                return Err(DocumentError::NotABackup(format!(
                    "its first line is longer than {max_line_bytes} bytes"
                )))
            }
            Some(true) => {}
        }
        let header = parse_header(&line)?;
        let mut hasher = Sha256::new();
        hasher.update(&line);
        hasher.update(b"\n");
        Ok(Self {
            reader,
            max_line_bytes,
            header,
            hasher,
            line,
            line_no: 1,
            connectors: 0,
            source_partitions: 0,
            pending: 0,
            ended: false,
        })
    }

    /// The header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The next connector or source partition; `Ok(None)` after the end line, once the
    /// counts and the checksum are checked and nothing follows it.
    pub fn next_item(&mut self) -> Result<Option<Item>, DocumentError> {
        if self.ended {
            return Ok(None);
        }
        let fits = next_line(&mut self.reader, &mut self.line, self.max_line_bytes, true)?;
        self.line_no += 1;
        let line_no = self.line_no;
        match fits {
            None => {
                return Err(DocumentError::Truncated {
                    lines: line_no - 1,
                    connectors: self.connectors,
                    source_partitions: self.source_partitions,
                })
            }
            Some(false) => {
                return Err(DocumentError::LineTooLong {
                    line: line_no,
                    max: self.max_line_bytes,
                })
            }
            Some(true) => {}
        }
        let bad = |problem: String| DocumentError::BadLine {
            line: line_no,
            problem,
        };
        let parsed: Line = serde_json::from_slice(&self.line).map_err(|e| bad(e.to_string()))?;
        match parsed {
            Line::Backup(_) => Err(bad("a second header".into())),
            Line::Connector(entry) => {
                self.expect_no_pending(line_no)?;
                self.hash_line();
                self.connectors += 1;
                self.pending = entry.source_partitions;
                Ok(Some(Item::Connector(entry)))
            }
            Line::Offset(entry) => {
                if self.pending == 0 {
                    return Err(bad(if self.connectors == 0 {
                        "a source partition before any connector".into()
                    } else {
                        "more source partitions than their connector announced".into()
                    }));
                }
                entry.key_bytes().map_err(bad)?;
                entry.value_bytes().map_err(bad)?;
                self.hash_line();
                self.pending -= 1;
                self.source_partitions += 1;
                Ok(Some(Item::Offset(entry)))
            }
            Line::End(trailer) => {
                self.expect_no_pending(line_no)?;
                self.finish(trailer, line_no)?;
                Ok(None)
            }
        }
    }

    fn hash_line(&mut self) {
        self.hasher.update(&self.line);
        self.hasher.update(b"\n");
    }

    fn expect_no_pending(&self, line: usize) -> Result<(), DocumentError> {
        match self.pending {
            0 => Ok(()),
            n => Err(DocumentError::BadLine {
                line,
                problem: format!(
                    "the connector before it announced {n} more source partition(s) than follow it"
                ),
            }),
        }
    }

    fn finish(&mut self, trailer: Trailer, line: usize) -> Result<(), DocumentError> {
        let found = hex(&std::mem::take(&mut self.hasher).finalize());
        if found != trailer.sha256 {
            return Err(DocumentError::ChecksumMismatch {
                found,
                expected: trailer.sha256,
            });
        }
        if (trailer.connectors, trailer.source_partitions)
            != (self.connectors, self.source_partitions)
        {
            return Err(DocumentError::BadLine {
                line,
                problem: format!(
                    "the end line counts {} connector(s) and {} source partition(s), the \
                     document holds {} and {}",
                    trailer.connectors,
                    trailer.source_partitions,
                    self.connectors,
                    self.source_partitions
                ),
            });
        }
        // Nothing but blank lines may follow.
        loop {
            match next_line(&mut self.reader, &mut self.line, self.max_line_bytes, true)? {
                None => break,
                Some(true) if self.line.iter().all(u8::is_ascii_whitespace) => {}
                Some(_) => {
                    return Err(DocumentError::BadLine {
                        line: line + 1,
                        problem: "content after the end line".into(),
                    })
                }
            }
        }
        self.ended = true;
        Ok(())
    }
}

/// The header of a first line: checks the format and the version before anything else, so a
/// newer document is refused for its version and not for a member this build does not know.
fn parse_header(line: &[u8]) -> Result<Header, DocumentError> {
    let value: Value = serde_json::from_slice(line)
        .map_err(|e| DocumentError::NotABackup(format!("its first line is not JSON ({e})")))?;
    let header = value
        .get("backup")
        .filter(|h| h.get("format").and_then(Value::as_str) == Some(FORMAT))
        .ok_or_else(|| {
            DocumentError::NotABackup(format!(
                "its first line is not {{\"backup\":{{\"format\":\"{FORMAT}\",...}}}}"
            ))
        })?;
    let version = header
        .get("version")
        .and_then(Value::as_u64)
        .ok_or_else(|| DocumentError::NotABackup("its header has no version".into()))?;
    if version > u64::from(VERSION) {
        return Err(DocumentError::NewerVersion { found: version });
    }
    serde_json::from_value(header.clone())
        .map_err(|e| DocumentError::NotABackup(format!("its header is malformed: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header() -> Header {
        let source = Source {
            kind: "dumps".into(),
            bootstrap_servers: None,
            topics: BTreeMap::from([("config".into(), "configs.jsonl".into())]),
        };
        Header {
            newest_record_ms: Some(1),
            ..Header::new("connect-state test", "2026-12-03T10:00:00Z", source)
        }
    }

    fn connector(name: &str, partitions: u64) -> ConnectorEntry {
        ConnectorEntry {
            name: name.into(),
            config: Some(Map::from_iter([("tasks.max".into(), Value::from("1"))])),
            target_state: Some("STARTED".into()),
            task_count: 0,
            task_configs: Vec::new(),
            active_topics: None,
            source_partitions: partitions,
        }
    }

    fn document() -> Vec<u8> {
        let mut w = DocumentWriter::new(Vec::new(), &header()).unwrap();
        w.connector(&connector("a", 2)).unwrap();
        w.offset(&OffsetEntry::new(br#"["a",{"f":1}]"#, b"{}", 0))
            .unwrap();
        w.offset(&OffsetEntry::new(b"\xff\x00", b"\xfe", 3))
            .unwrap();
        w.connector(&connector("b", 0)).unwrap();
        let (bytes, written) = w.finish().unwrap();
        assert_eq!(
            (written.connectors, written.source_partitions),
            (2, 2),
            "{written:?}"
        );
        assert_eq!(written.bytes, bytes.len() as u64);
        bytes
    }

    fn read_all(bytes: &[u8]) -> Result<Vec<Item>, DocumentError> {
        let mut r = DocumentReader::open(bytes, DEFAULT_MAX_LINE_BYTES)?;
        let mut items = Vec::new();
        while let Some(item) = r.next_item()? {
            items.push(item);
        }
        Ok(items)
    }

    #[test]
    fn a_document_reads_back_as_written_bytes_included() {
        let items = read_all(&document()).unwrap();
        assert_eq!(items.len(), 4);
        let Item::Offset(binary) = &items[2] else {
            panic!("{items:?}")
        };
        assert_eq!(binary.key_bytes().unwrap(), b"\xff\x00");
        assert_eq!(binary.value_bytes().unwrap(), b"\xfe");
        assert!(binary.key.is_none() && binary.key_base64.is_some());
    }

    #[test]
    fn damage_is_refused_with_what_is_wrong() {
        let doc = String::from_utf8(document()).unwrap();
        let lines: Vec<&str> = doc.lines().collect();
        // Truncated: the end line missing, or a line cut.
        let cut = lines[..4].join("\n") + "\n";
        assert!(matches!(
            read_all(cut.as_bytes()),
            Err(DocumentError::Truncated { lines: 4, .. })
        ));
        // Edited: a value changed.
        let edited = doc.replace(r#"\"f\":1"#, r#"\"f\":2"#);
        assert!(matches!(
            read_all(edited.as_bytes()),
            Err(DocumentError::ChecksumMismatch { .. })
        ));
        // A newer version.
        let newer = doc.replacen("\"version\":1", "\"version\":2", 1);
        assert!(matches!(
            read_all(newer.as_bytes()),
            Err(DocumentError::NewerVersion { found: 2 })
        ));
        // Not a backup at all.
        assert!(matches!(
            read_all(b"{\"offset\":1}\n"),
            Err(DocumentError::NotABackup(_))
        ));
        assert!(matches!(read_all(b""), Err(DocumentError::NotABackup(_))));
        // An offset line moved after the next connector.
        let moved = [lines[0], lines[1], lines[2], lines[4], lines[3], lines[5]].join("\n");
        assert!(matches!(
            read_all(moved.as_bytes()),
            Err(DocumentError::BadLine { line: 4, .. })
        ));
        // Content after the end.
        let extra = doc.clone() + "{\"offset\":{}}\n";
        assert!(matches!(
            read_all(extra.as_bytes()),
            Err(DocumentError::BadLine { .. })
        ));
        // A line over the limit is refused without being held.
        let long = format!("{}\n{}\n", lines[0], " ".repeat(lines[0].len() + 1));
        let mut r = DocumentReader::open(long.as_bytes(), lines[0].len()).unwrap();
        assert!(matches!(
            r.next_item(),
            Err(DocumentError::LineTooLong { line: 2, .. })
        ));
    }
}
