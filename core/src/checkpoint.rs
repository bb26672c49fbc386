//! Checkpoints: a machine's whole state as versioned, checksummed bytes.
//!
//! Layout (little-endian):
//!
//! ```text
//! magic "CSCK" | format version u16 | topic kind u8 | taken at (ms, i64) | payload length u64
//!   | CRC-32 of (taken at, payload) u32 | payload
//! ```
//!
//! A checkpoint may carry the (caller's) time it was taken. A reader restoring one must not be
//! older than the topic's `delete.retention.ms`: past that, compaction may have removed
//! tombstones the reader never saw, and a deleted connector would come back.
//! [`check_fresh`] refuses such a checkpoint (and one of unknown age); the caller then replays
//! the topic from the start.
//!
//! The payload is the machine state encoded with bincode (standard configuration). Anything that
//! does not check out (short input, wrong magic, version or topic, length mismatch, checksum
//! mismatch, undecodable payload) is refused with a [`CheckpointError`]; the caller then falls
//! back to a full replay.

use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt;

use core::marker::PhantomData;

use serde::de::{Deserialize, DeserializeOwned, Deserializer, Visitor};
use serde::Serialize;

use crate::TopicKind;

/// The first four bytes of every checkpoint.
pub const MAGIC: [u8; 4] = *b"CSCK";
/// The checkpoint format this build writes and reads.
pub const FORMAT_VERSION: u16 = 7;
const HEADER_LEN: usize = 4 + 2 + 1 + 8 + 8 + 4;
/// The "taken at" value of a checkpoint whose time is not known.
const UNKNOWN_TIME: i64 = i64::MIN;

/// The byte a checkpoint's header names its topic with.
fn code(kind: TopicKind) -> u8 {
    match kind {
        TopicKind::Config => 1,
        TopicKind::Status => 2,
        TopicKind::Offsets => 3,
    }
}

/// Why a checkpoint was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CheckpointError {
    /// Fewer bytes than the header needs.
    Truncated {
        /// Bytes present.
        len: usize,
    },
    /// The bytes do not start with [`MAGIC`].
    NotACheckpoint,
    /// Written by another format version.
    UnsupportedVersion {
        /// The version found.
        found: u16,
        /// The version this build reads.
        supported: u16,
    },
    /// A checkpoint of another topic's machine.
    WrongTopic {
        /// The kind code found.
        found: u8,
    },
    /// The payload length does not match the header.
    LengthMismatch {
        /// Length announced by the header.
        declared: u64,
        /// Length present.
        actual: u64,
    },
    /// The payload's CRC-32 does not match the header: the bytes are corrupt.
    ChecksumMismatch,
    /// The payload passed the checksum but could not be decoded.
    Decode(String),
    /// The checkpoint is older than the topic's tombstone retention: tombstones it never saw
    /// may be gone from the topic.
    TooOld {
        /// When it was taken (ms).
        taken_at_ms: i64,
        /// Now (ms).
        now_ms: i64,
        /// The topic's `delete.retention.ms`.
        delete_retention_ms: i64,
    },
    /// The checkpoint does not say when it was taken, so its freshness cannot be checked.
    UnknownAge,
}

impl fmt::Display for CheckpointError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Truncated { len } => write!(
                f,
                "checkpoint is truncated: {len} bytes, the header alone needs {HEADER_LEN}"
            ),
            Self::NotACheckpoint => f.write_str("not a connect-state checkpoint (bad magic)"),
            Self::UnsupportedVersion { found, supported } => write!(
                f,
                "checkpoint format version {found} is not supported (this build reads {supported})"
            ),
            Self::WrongTopic { found } => {
                write!(f, "checkpoint holds another topic's state (kind {found})")
            }
            Self::LengthMismatch { declared, actual } => write!(
                f,
                "checkpoint payload is {actual} bytes but the header says {declared}"
            ),
            Self::ChecksumMismatch => f.write_str("checkpoint is corrupt (CRC-32 mismatch)"),
            Self::Decode(e) => write!(f, "checkpoint payload could not be decoded: {e}"),
            Self::TooOld {
                taken_at_ms,
                now_ms,
                delete_retention_ms,
            } => write!(
                f,
                "checkpoint taken at {taken_at_ms} ms is {} ms old, beyond the topic's \
                 delete.retention.ms of {delete_retention_ms} ms: tombstones it never saw may be \
                 gone; replay the topic from the start",
                now_ms.saturating_sub(*taken_at_ms)
            ),
            Self::UnknownAge => f.write_str(
                "checkpoint does not record when it was taken, so it cannot be checked against \
                 the topic's tombstone retention; replay the topic from the start",
            ),
        }
    }
}

impl core::error::Error for CheckpointError {}

/// Encodes a machine state, stamped with `taken_at_ms` when known. Encoding plain in-memory
/// data cannot fail.
pub(crate) fn encode<T: Serialize>(
    kind: TopicKind,
    state: &T,
    taken_at_ms: Option<i64>,
) -> Vec<u8> {
    let payload = bincode::serde::encode_to_vec(state, bincode::config::standard())
        // The states are maps, strings, integers and enums: bincode has no failure mode for them.
        .expect("in-memory machine state always encodes");
    frame(kind, taken_at_ms, &payload)
}

/// Wraps payload bytes in a valid header (also used by the fuzz targets to reach the decoder).
pub(crate) fn frame(kind: TopicKind, taken_at_ms: Option<i64>, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER_LEN + payload.len());
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    out.push(code(kind));
    let taken_at = taken_at_ms.unwrap_or(UNKNOWN_TIME).to_le_bytes();
    out.extend_from_slice(&taken_at);
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    out.extend_from_slice(&checksum(&taken_at, payload).to_le_bytes());
    out.extend_from_slice(payload);
    out
}

fn checksum(taken_at: &[u8], payload: &[u8]) -> u32 {
    let mut hasher = crc32fast::Hasher::new();
    hasher.update(taken_at);
    hasher.update(payload);
    hasher.finalize()
}

/// Refuses a checkpoint older than the topic's tombstone retention, or of unknown age. Call it
/// before `restore` whenever the topic may have been compacted since the checkpoint was taken.
pub fn check_fresh(
    bytes: &[u8],
    now_ms: i64,
    delete_retention_ms: i64,
) -> Result<(), CheckpointError> {
    let taken_at_ms = taken_at(bytes)?.ok_or(CheckpointError::UnknownAge)?;
    if now_ms.saturating_sub(taken_at_ms) >= delete_retention_ms {
        return Err(CheckpointError::TooOld {
            taken_at_ms,
            now_ms,
            delete_retention_ms,
        });
    }
    Ok(())
}

/// When the checkpoint was taken, if it says (the header is checked, not the payload).
pub fn taken_at(bytes: &[u8]) -> Result<Option<i64>, CheckpointError> {
    let header = bytes
        .get(..HEADER_LEN)
        .ok_or(CheckpointError::Truncated { len: bytes.len() })?;
    if header.get(..4) != Some(&MAGIC[..]) {
        return Err(CheckpointError::NotACheckpoint);
    }
    let mut raw = [0u8; 8];
    raw.copy_from_slice(
        header
            .get(7..15)
            .ok_or(CheckpointError::Truncated { len: bytes.len() })?,
    );
    let value = i64::from_le_bytes(raw);
    Ok((value != UNKNOWN_TIME).then_some(value))
}

/// Checks and decodes a checkpoint of `kind`.
pub(crate) fn decode<T: DeserializeOwned>(
    kind: TopicKind,
    bytes: &[u8],
) -> Result<T, CheckpointError> {
    let (header, payload) = bytes
        .split_at_checked(HEADER_LEN)
        .ok_or(CheckpointError::Truncated { len: bytes.len() })?;
    let (magic, rest) = header.split_at(4);
    if magic != MAGIC {
        return Err(CheckpointError::NotACheckpoint);
    }
    let (version, rest) = rest.split_at(2);
    let version = u16::from_le_bytes([version[0], version[1]]);
    if version != FORMAT_VERSION {
        return Err(CheckpointError::UnsupportedVersion {
            found: version,
            supported: FORMAT_VERSION,
        });
    }
    let (code, rest) = rest.split_at(1);
    if code[0] != self::code(kind) {
        return Err(CheckpointError::WrongTopic { found: code[0] });
    }
    let (taken_at, rest) = rest.split_at(8);
    let (len, crc) = rest.split_at(8);
    let mut len_bytes = [0u8; 8];
    len_bytes.copy_from_slice(len);
    let declared = u64::from_le_bytes(len_bytes);
    if declared != payload.len() as u64 {
        return Err(CheckpointError::LengthMismatch {
            declared,
            actual: payload.len() as u64,
        });
    }
    let mut crc_bytes = [0u8; 4];
    crc_bytes.copy_from_slice(crc);
    if checksum(taken_at, payload) != u32::from_le_bytes(crc_bytes) {
        return Err(CheckpointError::ChecksumMismatch);
    }
    let (state, used) = decode_bounded(payload)?;
    if used != payload.len() {
        return Err(CheckpointError::Decode(alloc::format!(
            "{} trailing bytes after the state",
            payload.len() - used
        )));
    }
    Ok(state)
}

/// How many bytes bincode may claim per payload byte. bincode claims a string's or byte
/// buffer's length (never more than the payload holds) and every integer's full width, however
/// short its varint: at most 16 bytes (an `i128`) per encoded byte.
const CLAIMS_PER_BYTE: usize = 16;

/// Decodes with an allocation limit tied to the payload size.
///
/// bincode allocates a string's buffer from its length prefix before reading it; the limit makes
/// it refuse a prefix larger than the limit, so forged lengths cannot allocate more than a small
/// multiple of the input. The limit is [`CLAIMS_PER_BYTE`] times the smallest of 2^10, 2^12, ...,
/// 2^34 at least as large as the payload, which every valid checkpoint fits.
fn decode_bounded<T: DeserializeOwned>(payload: &[u8]) -> Result<(T, usize), CheckpointError> {
    use bincode::config::standard;
    let len = payload.len();
    macro_rules! buckets {
        ($($bits:literal)*) => {
            $(
                if len <= 1usize << $bits {
                    return bincode::serde::decode_from_slice(
                        payload,
                        standard().with_limit::<{ CLAIMS_PER_BYTE << $bits }>(),
                    )
                    .map_err(|e| CheckpointError::Decode(e.to_string()));
                }
            )*
        };
    }
    buckets!(10 12 14 16 18 20 22 24 26 28 30 32 34);
    Err(CheckpointError::Decode(alloc::format!(
        "payload of {len} bytes is larger than any checkpoint this build writes"
    )))
}
/// Bytes in a checkpoint as one serde byte string: written from a borrowed slice
/// (`ByteString<&[u8]>`), decoded with one copy into the owner it names (`ByteString<Box<[u8]>>`,
/// `ByteString<Arc<[u8]>>`).
pub(crate) struct ByteString<T>(pub(crate) T);

impl Serialize for ByteString<&[u8]> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_bytes(self.0)
    }
}

impl<'de, T: for<'a> From<&'a [u8]>> Deserialize<'de> for ByteString<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Bytes<T>(PhantomData<T>);
        impl<T: for<'a> From<&'a [u8]>> Visitor<'_> for Bytes<T> {
            type Value = ByteString<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a byte string")
            }
            fn visit_bytes<E: serde::de::Error>(self, bytes: &[u8]) -> Result<Self::Value, E> {
                Ok(ByteString(T::from(bytes)))
            }
        }
        deserializer.deserialize_bytes(Bytes(PhantomData))
    }
}
