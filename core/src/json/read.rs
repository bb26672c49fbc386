//! Reading: Jackson 2.16's `ObjectMapper.readTree(byte[])` as configured by Kafka's
//! `JsonConverter`, followed by the schemaless conversion to Java values.

use alloc::borrow::Cow;
use alloc::string::String;
use alloc::vec::Vec;
use arrayvec::ArrayVec;
use core::fmt;

use super::borrowed::{Members, Value};
use super::value::{JavaDouble, JsonObject, JsonValue, MAX_DEPTH};

/// Maximum number of digits of a number (Jackson `StreamReadConstraints` default).
const MAX_NUMBER_LEN: usize = 1000;
/// Maximum length of a string value in UTF-16 code units (Jackson `StreamReadConstraints` default).
const MAX_STRING_LEN: usize = 20_000_000;
/// Maximum length of a member name in bytes (Jackson `StreamReadConstraints` default).
const MAX_NAME_LEN: usize = 50_000;
/// The UTF-8 byte order mark.
const BOM: [u8; 3] = [0xEF, 0xBB, 0xBF];
/// What a lone UTF-16 surrogate becomes.
const REPLACEMENT: char = '\u{FFFD}';

/// Why some bytes are not JSON that Java Connect would accept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonError {
    /// Byte offset in the input (counting a BOM, if any) where the problem was found.
    pub position: usize,
    /// What is wrong.
    pub kind: JsonErrorKind,
}

/// The kind of a [`JsonError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum JsonErrorKind {
    /// The input ends inside a value.
    UnexpectedEnd,
    /// A byte that cannot start or continue the value here.
    UnexpectedByte(u8),
    /// A misspelled `true`, `false` or `null`, or one directly followed by a letter or digit.
    InvalidLiteral,
    /// A number that does not follow JSON's number grammar (leading zeros are allowed).
    InvalidNumber,
    /// A number with more than 1000 digits (leading zeros of the integer part not counted).
    NumberTooLong,
    /// A backslash escape other than `\" \\ \/ \b \f \n \r \t \uXXXX`.
    InvalidEscape,
    /// A raw byte below 0x20 inside a string.
    ControlCharacterInString,
    /// Bytes inside a string that even Jackson's lenient UTF-8 decoder rejects.
    InvalidUtf8,
    /// A string value longer than 20,000,000 UTF-16 code units.
    StringTooLong,
    /// A member name longer than 50,000 bytes.
    NameTooLong,
    /// Arrays and objects nested more than 1000 deep.
    TooDeep,
    /// [`parse_rest`] only: an integer with a leading zero (`007`), which Jackson's default
    /// `ObjectMapper` refuses.
    LeadingZero,
}

impl JsonError {
    fn new(position: usize, kind: JsonErrorKind) -> Self {
        Self { position, kind }
    }
}

impl fmt::Display for JsonErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::UnexpectedEnd => f.write_str("unexpected end of input"),
            Self::UnexpectedByte(b) if b == b' ' || b.is_ascii_graphic() => {
                write!(f, "unexpected character '{}'", char::from(b))
            }
            Self::UnexpectedByte(b) => write!(f, "unexpected byte 0x{b:02X}"),
            Self::InvalidLiteral => {
                f.write_str("unrecognized token (expected 'true', 'false' or 'null')")
            }
            Self::InvalidNumber => f.write_str("invalid number"),
            Self::NumberTooLong => write!(f, "number longer than {MAX_NUMBER_LEN} digits"),
            Self::InvalidEscape => f.write_str("invalid escape sequence in string"),
            Self::ControlCharacterInString => f.write_str("unescaped control character in string"),
            Self::InvalidUtf8 => f.write_str("invalid UTF-8 in string"),
            Self::StringTooLong => write!(f, "string longer than {MAX_STRING_LEN} characters"),
            Self::NameTooLong => write!(f, "member name longer than {MAX_NAME_LEN} bytes"),
            Self::TooDeep => write!(f, "arrays and objects nested more than {MAX_DEPTH} deep"),
            Self::LeadingZero => f.write_str("invalid numeric value: leading zeroes not allowed"),
        }
    }
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid JSON at byte {}: {}", self.position, self.kind)
    }
}

impl core::error::Error for JsonError {}

/// Parses `bytes` exactly as Kafka Connect's `JsonConverter` (`schemas.enable=false`) does: Jackson
/// 2.16's `ObjectMapper.readTree(bytes)` (with `ALLOW_LEADING_ZEROS_FOR_NUMBERS` and
/// `USE_BIG_DECIMAL_FOR_FLOATS`) followed by the schemaless conversion to Java values.
///
/// Returns `Ok(None)` for Jackson's "missing node" (empty input, or only whitespace, possibly after
/// a BOM) and `Ok(Some(JsonValue::Null))` for the literal `null`; callers treat both as tombstones.
///
/// The rules, all Jackson's:
///
/// * A UTF-8 BOM is skipped when the input is at least 4 bytes long (Jackson's encoding detection
///   needs 4 bytes; UTF-16/32 inputs, which Jackson would also detect, are rejected here).
/// * Only the first value is parsed; whatever follows it is neither parsed nor inspected, except
///   that a number at the top level must be followed by whitespace or the end (`12}` is an error,
///   `12 }` is 12), and `true`/`false`/`null` anywhere must not be followed directly by a letter,
///   digit, `_` or `$` (non-ASCII characters are classified approximately, see below).
/// * Whitespace is space, tab, line feed and carriage return. No comments, single quotes, unquoted
///   names, trailing commas, `NaN`, `Infinity`, leading `+` or `.`.
/// * Duplicate member names: the last one wins.
/// * Numbers: `-`? digits (leading zeros allowed) (`.` digits)? (`e`/`E` `+`/`-`? digits)?, at most
///   1000 digits (leading zeros of the integer part not counted). Without fraction and exponent:
///   [`JsonValue::Long`], keeping the low 64 bits of out-of-range values (`BigInteger.longValue`).
///   Otherwise: [`JsonValue::Double`] with the correctly rounded value of the decimal
///   (`BigDecimal.doubleValue`), overflowing to ±infinity; a decimal whose digits are all zero is
///   `+0.0` even when written `-0.0`, because `BigDecimal` has no negative zero (but a negative
///   number that underflows is `-0.0`).
/// * Strings: escapes `\" \\ \/ \b \f \n \r \t \uXXXX`; raw bytes below 0x20 are errors. Raw
///   bytes are decoded like Jackson's UTF-8 decoder, which only checks lead and continuation bytes:
///   overlong forms and encoded surrogates are accepted. Java strings are UTF-16: a high surrogate
///   followed by a low surrogate (whether escaped, like `\uD83D\uDE00`, or raw) is one
///   supplementary character. **A lone surrogate, which a Java string can hold but a Rust string
///   cannot, becomes U+FFFD.**
/// * Limits (Jackson's `StreamReadConstraints` defaults): nesting depth 1000, number length 1000
///   digits, string values 20,000,000 UTF-16 units, member names 50,000 bytes.
///
/// Approximation: after a literal, Jackson rejects a following character if
/// `Character.isJavaIdentifierPart` holds. That is exact for ASCII; for other characters it is
/// approximated with Unicode's alphanumeric property plus common currency symbols, connector
/// punctuation, format characters and combining marks.
pub fn parse(bytes: &[u8]) -> Result<Option<JsonValue>, JsonError> {
    parse_as::<Owned>(bytes, Dialect::Converter)
}

/// [`parse`] into a [`Value`] that borrows the strings without escapes from `bytes` and keeps
/// objects as their members in document order: what the topics' decoders read, since they
/// copy what they keep into their own layout.
pub(crate) fn parse_borrowed(bytes: &[u8]) -> Result<Option<Value<'_>>, JsonError> {
    parse_as::<Borrowed>(bytes, Dialect::Converter)
}

/// Parses `bytes` as Connect's REST layer reads a request body: Jackson's default
/// `ObjectMapper` into plain Java values (`Integer`/`Long`/`BigInteger`, `Double`, ...), as
/// `PATCH /connectors/{c}/offsets` reads the partitions and offsets it is given.
///
/// The rules are [`parse`]'s with three differences, all Jackson's defaults:
///
/// * an integer with a leading zero (`007`) is an error ([`JsonErrorKind::LeadingZero`]);
/// * an integer outside Java's `long` range is a [`JsonValue::BigInteger`], as Jackson reads
///   it; offsets may not hold one, and `OffsetUtils.validateFormat` refuses it in its turn;
/// * a decimal is read as a `double` directly (`Double.parseDouble`): `-0.0` keeps its sign.
pub fn parse_rest(bytes: &[u8]) -> Result<Option<JsonValue>, JsonError> {
    parse_as::<Owned>(bytes, Dialect::Rest)
}

/// Which of Java's two readers a parse follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dialect {
    /// `JsonConverter`: `readTree` with leading zeros allowed and `BigDecimal` floats, then
    /// the schemaless conversion (`BigInteger.longValue`, `BigDecimal.doubleValue`).
    Converter,
    /// The REST layer's default `ObjectMapper`.
    Rest,
}

/// What the reader builds: owned [`JsonValue`]s ([`Owned`]) or borrowed [`Value`]s
/// ([`Borrowed`]). One reader serves both, so they accept the same inputs.
trait Build<'a> {
    /// A finished value.
    type Value;
    /// An object whose members are being added.
    type Object;
    /// `null`, a boolean or a number.
    fn scalar(value: JsonValue) -> Self::Value;
    fn string(text: Cow<'a, str>) -> Self::Value;
    fn array(items: Vec<Self::Value>) -> Self::Value;
    fn new_object() -> Self::Object;
    /// Adds a member; a repeated name is the builder's to resolve (the last one wins).
    fn member(object: &mut Self::Object, name: Cow<'a, str>, value: Self::Value);
    fn object(object: Self::Object) -> Self::Value;
}

/// Builds [`JsonValue`]s: a `String` per string, a sorted map per object.
struct Owned;

impl<'a> Build<'a> for Owned {
    type Value = JsonValue;
    type Object = JsonObject;
    fn scalar(value: JsonValue) -> JsonValue {
        value
    }
    fn string(text: Cow<'a, str>) -> JsonValue {
        JsonValue::String(text.into_owned())
    }
    fn array(items: Vec<JsonValue>) -> JsonValue {
        JsonValue::Array(items)
    }
    fn new_object() -> JsonObject {
        JsonObject::new()
    }
    fn member(object: &mut JsonObject, name: Cow<'a, str>, value: JsonValue) {
        object.insert(name.into_owned(), value);
    }
    fn object(object: JsonObject) -> JsonValue {
        JsonValue::Object(object)
    }
}

/// Builds [`Value`]s: strings borrowed where they have no escapes, members in document order.
struct Borrowed;

impl<'a> Build<'a> for Borrowed {
    type Value = Value<'a>;
    type Object = Members<'a>;
    fn scalar(value: JsonValue) -> Value<'a> {
        Value::Scalar(value)
    }
    fn string(text: Cow<'a, str>) -> Value<'a> {
        Value::String(text)
    }
    fn array(items: Vec<Value<'a>>) -> Value<'a> {
        Value::Array(items)
    }
    fn new_object() -> Members<'a> {
        // Status values have five members, config values one or a few dozen.
        Vec::with_capacity(8)
    }
    fn member(object: &mut Members<'a>, name: Cow<'a, str>, value: Value<'a>) {
        object.push((name, value));
    }
    fn object(object: Members<'a>) -> Value<'a> {
        Value::Object(object)
    }
}

fn parse_as<'a, B: Build<'a>>(
    bytes: &'a [u8],
    dialect: Dialect,
) -> Result<Option<B::Value>, JsonError> {
    match Parser::at_first_value(bytes, dialect) {
        Some(mut parser) => parser.parse_root::<B>().map(Some),
        None => Ok(None),
    }
}

/// Builds nothing: for the values a one-pass reader only has to check (the members of a config
/// value other than `properties`).
struct Skip;

impl<'a> Build<'a> for Skip {
    type Value = ();
    type Object = ();
    fn scalar(_: JsonValue) {}
    fn string(_: Cow<'a, str>) {}
    fn array(_: Vec<()>) {}
    fn new_object() {}
    fn member(_: &mut (), _: Cow<'a, str>, _: ()) {}
    fn object(_: ()) {}
}

/// A connector or task config value as [`parse_properties`] reads it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum PropertiesRead<'a> {
    /// A tombstone: [`parse`] gives `None` or `null`.
    Tombstone,
    /// A value that is not an object.
    NotAnObject,
    /// An object whose last member `properties` is missing or not an object.
    NoProperties,
    /// The members of the last `properties` object, in document order, repeated names included.
    Members(Vec<FlatMember<'a>>),
}

/// A member of a `properties` object: its name, borrowed where it has no escapes, and its value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct FlatMember<'a> {
    pub(crate) name: Cow<'a, str>,
    pub(crate) value: FlatValue<'a>,
}

/// A value of a `properties` member.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum FlatValue<'a> {
    /// A string (the usual case), borrowed where it has no escapes.
    String(Cow<'a, str>),
    /// Anything else, as [`parse`] reads it.
    Other(JsonValue),
}

/// What a document's first value is, for the one-pass readers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Top {
    /// No value: [`parse`] gives `None`.
    Missing,
    /// The literal `null`.
    Null,
    /// A value that is not an object.
    Other,
    /// An object, whose members were handed over.
    Object,
}

/// Reads the first value of `bytes` as [`parse`] does (same inputs accepted, same errors); when
/// it is an object, hands each member's name to `member` with the parser at its value, which
/// `member` must read (one level inside the document).
fn read_top<'a>(
    bytes: &'a [u8],
    mut member: impl FnMut(&mut Parser<'a>, Cow<'a, str>) -> Result<(), JsonError>,
) -> Result<Top, JsonError> {
    let Some(mut parser) = Parser::at_first_value(bytes, Dialect::Converter) else {
        return Ok(Top::Missing);
    };
    if parser.peek() != Some(b'{') {
        return Ok(match parser.parse_root::<Owned>()? {
            JsonValue::Null => Top::Null,
            _ => Top::Other,
        });
    }
    parser.pos += 1;
    parser.skip_ws();
    if parser.peek() == Some(b'}') {
        return Ok(Top::Object);
    }
    loop {
        let name = parser.parse_member_name()?;
        parser.depth = 1;
        member(&mut parser, name)?;
        parser.skip_ws();
        match parser.peek() {
            Some(b',') => {
                parser.pos += 1;
                parser.skip_ws();
            }
            Some(b'}') => return Ok(Top::Object),
            other => return Err(parser.unexpected(other)),
        }
    }
}

/// Reads a connector or task config value in one pass, as [`parse`] followed by a lookup of the
/// last member `properties` would, without building the tree: the members of that object go
/// straight into a flat list, the document's other members are only checked. Accepts and
/// refuses exactly the inputs [`parse`] does, with the same errors.
///
/// The list is `buffer`, emptied first (so that a caller can hand the same allocation to every
/// record); it comes back in [`PropertiesRead::Members`].
pub(crate) fn parse_properties<'a>(
    bytes: &'a [u8],
    mut buffer: Vec<FlatMember<'a>>,
) -> Result<PropertiesRead<'a>, JsonError> {
    let mut found = false;
    let top = read_top(bytes, |parser, name| {
        let is_properties = name == "properties";
        if is_properties && parser.peek() == Some(b'{') {
            buffer.clear();
            parser.parse_flat_object(&mut buffer)?;
            found = true;
        } else {
            parser.parse_root::<Skip>()?;
            if is_properties {
                found = false;
            }
        }
        Ok(())
    })?;
    Ok(match (top, found) {
        (Top::Missing | Top::Null, _) => PropertiesRead::Tombstone,
        (Top::Other, _) => PropertiesRead::NotAnObject,
        (Top::Object, false) => PropertiesRead::NoProperties,
        (Top::Object, true) => PropertiesRead::Members(buffer),
    })
}

/// Reads a document in one pass, as [`parse_borrowed`] followed by a lookup of each of `names`
/// would: the value of the last member of each name (borrowed as [`Value`]), the document's
/// other members only checked. Accepts and refuses exactly the inputs [`parse`] does, with the
/// same errors. For the small values of the status topic, read by a few names.
pub(crate) fn parse_named<'a, const N: usize>(
    bytes: &'a [u8],
    names: [&str; N],
) -> Result<(Top, [Option<Value<'a>>; N]), JsonError> {
    let mut values: [Option<Value<'a>>; N] = core::array::from_fn(|_| None);
    let top = read_top(bytes, |parser, name| {
        match names.iter().position(|wanted| *wanted == name) {
            Some(i) => values[i] = Some(parser.parse_root::<Borrowed>()?),
            None => parser.parse_root::<Skip>()?,
        }
        Ok(())
    })?;
    Ok((top, values))
}

/// An array or object whose members are still being read.
enum Frame<'a, B: Build<'a>> {
    Array(Vec<B::Value>),
    /// The members so far, and the name of the member whose value is being read.
    Object(B::Object, Cow<'a, str>),
}

/// The containers open around the value being read: the first few on the stack (an offsets
/// key is an array around an object, read for every record), any deeper in a vector.
struct Frames<F> {
    inline: ArrayVec<F, 4>,
    spilled: Vec<F>,
}

impl<F> Default for Frames<F> {
    fn default() -> Self {
        Self {
            inline: ArrayVec::new(),
            spilled: Vec::new(),
        }
    }
}

impl<F> Frames<F> {
    fn len(&self) -> usize {
        self.inline.len() + self.spilled.len()
    }

    fn is_empty(&self) -> bool {
        self.inline.is_empty()
    }

    /// Opens a container: on the stack while there is room, then in the vector (which only
    /// ever holds the innermost frames, so the two together stay in order).
    fn push(&mut self, frame: F) {
        if let Err(full) = self.inline.try_push(frame) {
            self.spilled.push(full.element());
        }
    }

    fn last_mut(&mut self) -> Option<&mut F> {
        match self.spilled.last_mut() {
            Some(frame) => Some(frame),
            None => self.inline.last_mut(),
        }
    }

    fn pop(&mut self) -> Option<F> {
        self.spilled.pop().or_else(|| self.inline.pop())
    }
}

struct Parser<'a> {
    bytes: &'a [u8],
    /// `bytes` as text, when all of it is valid UTF-8.
    text: Option<&'a str>,
    pos: usize,
    dialect: Dialect,
    /// How many containers are open around the value [`parse_root`](Self::parse_root) reads
    /// (0 at the top; the one-pass reader reads values inside members).
    depth: usize,
}

impl<'a> Parser<'a> {
    /// A parser at the first value of `bytes` (after a BOM and whitespace), or `None` when
    /// there is none (Jackson's missing node).
    fn at_first_value(bytes: &'a [u8], dialect: Dialect) -> Option<Self> {
        let start = if bytes.len() >= 4 && bytes.starts_with(&BOM) {
            BOM.len()
        } else {
            0
        };
        let mut parser = Parser {
            bytes,
            // One validation of the whole input (the usual case: valid UTF-8) lets every
            // string without escapes be a slice of it, with no validation of its own.
            text: simdutf8::basic::from_utf8(bytes).ok(),
            pos: start,
            dialect,
            depth: 0,
        };
        parser.skip_ws();
        (parser.pos < bytes.len()).then_some(parser)
    }

    /// Reads the object at the current position (`{`), one level inside the document, into
    /// `members` (a flat list, appended to).
    fn parse_flat_object(&mut self, members: &mut Vec<FlatMember<'a>>) -> Result<(), JsonError> {
        self.pos += 1;
        self.skip_ws();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(());
        }
        // About 40 bytes a member in connector configs: room for most objects at once (and
        // never more than a small amount up front, whatever the value's size).
        let rest = self.bytes.len().saturating_sub(self.pos);
        members.reserve((rest / 40 + 1).min(64));
        loop {
            let name = self.parse_member_name()?;
            let value = if self.peek() == Some(b'"') {
                self.pos += 1;
                FlatValue::String(self.parse_string(false)?)
            } else {
                self.depth = 2;
                FlatValue::Other(self.parse_root::<Owned>()?)
            };
            members.push(FlatMember { name, value });
            self.skip_ws();
            match self.peek() {
                Some(b',') => {
                    self.pos += 1;
                    self.skip_ws();
                }
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(());
                }
                other => return Err(self.unexpected(other)),
            }
        }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        let rest = self.bytes.get(self.pos..).unwrap_or_default();
        let n = rest
            .iter()
            .position(|&b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
            .unwrap_or(rest.len());
        self.pos += n;
    }

    /// The error for finding `found` (or the end) at the current position.
    fn unexpected(&self, found: Option<u8>) -> JsonError {
        match found {
            Some(b) => JsonError::new(self.pos, JsonErrorKind::UnexpectedByte(b)),
            None => JsonError::new(self.pos, JsonErrorKind::UnexpectedEnd),
        }
    }

    /// Reads one value starting at the current (non-whitespace) position; iterative, so deep
    /// nesting cannot overflow the stack.
    fn parse_root<B: Build<'a>>(&mut self) -> Result<B::Value, JsonError> {
        let mut stack: Frames<Frame<'a, B>> = Frames::default();
        'value: loop {
            let mut value = match self.peek() {
                Some(b'[') => {
                    if self.depth + stack.len() >= MAX_DEPTH {
                        return Err(JsonError::new(self.pos, JsonErrorKind::TooDeep));
                    }
                    self.pos += 1;
                    self.skip_ws();
                    if self.peek() == Some(b']') {
                        self.pos += 1;
                        B::array(Vec::new())
                    } else {
                        stack.push(Frame::Array(Vec::new()));
                        continue 'value;
                    }
                }
                Some(b'{') => {
                    if self.depth + stack.len() >= MAX_DEPTH {
                        return Err(JsonError::new(self.pos, JsonErrorKind::TooDeep));
                    }
                    self.pos += 1;
                    self.skip_ws();
                    if self.peek() == Some(b'}') {
                        self.pos += 1;
                        B::object(B::new_object())
                    } else {
                        let name = self.parse_member_name()?;
                        stack.push(Frame::Object(B::new_object(), name));
                        continue 'value;
                    }
                }
                Some(b'"') => {
                    self.pos += 1;
                    B::string(self.parse_string(false)?)
                }
                Some(b't') => {
                    self.parse_literal(b"true")?;
                    B::scalar(JsonValue::Bool(true))
                }
                Some(b'f') => {
                    self.parse_literal(b"false")?;
                    B::scalar(JsonValue::Bool(false))
                }
                Some(b'n') => {
                    self.parse_literal(b"null")?;
                    B::scalar(JsonValue::Null)
                }
                Some(b'-' | b'0'..=b'9') => {
                    B::scalar(self.parse_number(self.depth == 0 && stack.is_empty())?)
                }
                other => return Err(self.unexpected(other)),
            };
            // Hand the finished value to its container (in place: a container moves only when
            // it closes); close containers as they end.
            loop {
                let Some(frame) = stack.last_mut() else {
                    return Ok(value);
                };
                self.skip_ws();
                let next = self.peek();
                match frame {
                    Frame::Array(items) => {
                        items.push(value);
                        match next {
                            Some(b',') => {
                                self.pos += 1;
                                self.skip_ws();
                                continue 'value;
                            }
                            Some(b']') => self.pos += 1,
                            other => return Err(self.unexpected(other)),
                        }
                    }
                    Frame::Object(members, name) => {
                        B::member(members, core::mem::take(name), value);
                        match next {
                            Some(b',') => {
                                self.pos += 1;
                                self.skip_ws();
                                *name = self.parse_member_name()?;
                                continue 'value;
                            }
                            Some(b'}') => self.pos += 1,
                            other => return Err(self.unexpected(other)),
                        }
                    }
                }
                value = match stack.pop() {
                    Some(Frame::Array(items)) => B::array(items),
                    Some(Frame::Object(members, _)) => B::object(members),
                    // `last_mut` just found the frame.
                    None => return Err(self.unexpected(next)),
                };
            }
        }
    }

    /// Reads `"name"`, the colon and the whitespace after it.
    fn parse_member_name(&mut self) -> Result<Cow<'a, str>, JsonError> {
        match self.peek() {
            Some(b'"') => self.pos += 1,
            other => return Err(self.unexpected(other)),
        }
        let name = self.parse_string(true)?;
        self.skip_ws();
        match self.peek() {
            Some(b':') => self.pos += 1,
            other => return Err(self.unexpected(other)),
        }
        self.skip_ws();
        Ok(name)
    }

    /// Reads `word` (`true`, `false` or `null`) and checks what follows it like Jackson's
    /// `_matchToken`.
    fn parse_literal(&mut self, word: &[u8]) -> Result<(), JsonError> {
        let start = self.pos;
        let end = start + word.len();
        if self.bytes.get(start..end) != Some(word) {
            return Err(JsonError::new(start, JsonErrorKind::InvalidLiteral));
        }
        self.pos = end;
        match self.peek() {
            None => Ok(()),
            Some(b) if b < b'0' || b == b']' || b == b'}' => Ok(()),
            Some(_) => {
                if is_java_identifier_part(self.decode_char_for_error(end)?) {
                    Err(JsonError::new(start, JsonErrorKind::InvalidLiteral))
                } else {
                    Ok(())
                }
            }
        }
    }

    /// Decodes the character at `at` like Jackson's `_decodeCharForError` followed by a cast to
    /// `char`: lenient UTF-8, truncated to 16 bits.
    fn decode_char_for_error(&self, at: usize) -> Result<u16, JsonError> {
        let Some(&lead) = self.bytes.get(at) else {
            return Err(JsonError::new(at, JsonErrorKind::UnexpectedEnd));
        };
        if lead < 0x80 {
            return Ok(u16::from(lead));
        }
        let Some((bits, need)) = utf8_lead(lead) else {
            return Err(JsonError::new(at, JsonErrorKind::InvalidUtf8));
        };
        let c = continue_utf8(self.bytes, at, bits, need)?;
        Ok(c as u16)
    }

    /// Reads a number starting at the current position (`-` or a digit).
    fn parse_number(&mut self, at_root: bool) -> Result<JsonValue, JsonError> {
        let bytes = self.bytes;
        let start = self.pos;
        let mut i = start;
        let negative = bytes.get(i) == Some(&b'-');
        if negative {
            i += 1;
        }
        let int_start = i;
        i = skip_digits(bytes, i);
        if i == int_start {
            return Err(JsonError::new(i, JsonErrorKind::InvalidNumber));
        }
        let int_digits = sub(bytes, int_start, i);
        let mut is_float = false;
        let mut frac_digits: &[u8] = &[];
        if bytes.get(i) == Some(&b'.') {
            i += 1;
            let frac_start = i;
            i = skip_digits(bytes, i);
            if i == frac_start {
                return Err(JsonError::new(i, JsonErrorKind::InvalidNumber));
            }
            frac_digits = sub(bytes, frac_start, i);
            is_float = true;
        }
        let mut exponent: Option<(bool, &[u8])> = None;
        if matches!(bytes.get(i), Some(b'e' | b'E')) {
            i += 1;
            let exp_negative = match bytes.get(i) {
                Some(b'-') => {
                    i += 1;
                    true
                }
                Some(b'+') => {
                    i += 1;
                    false
                }
                _ => false,
            };
            let exp_start = i;
            i = skip_digits(bytes, i);
            if i == exp_start {
                return Err(JsonError::new(i, JsonErrorKind::InvalidNumber));
            }
            exponent = Some((exp_negative, sub(bytes, exp_start, i)));
            is_float = true;
        }
        // Jackson requires white space between a top-level number and anything after it.
        if at_root {
            match bytes.get(i) {
                None | Some(b' ' | b'\t' | b'\n' | b'\r') => {}
                Some(&b) => return Err(JsonError::new(i, JsonErrorKind::UnexpectedByte(b))),
            }
        }
        self.pos = i;

        // Jackson skips leading zeros of the integer part before counting (but keeps one).
        let int_len = int_digits
            .iter()
            .position(|&d| d != b'0')
            .map_or(1, |first| int_digits.len() - first);

        let rest = self.dialect == Dialect::Rest;
        if rest && int_digits.len() > 1 && int_digits[0] == b'0' {
            return Err(JsonError::new(int_start, JsonErrorKind::LeadingZero));
        }
        if !is_float {
            if int_len > MAX_NUMBER_LEN {
                return Err(JsonError::new(start, JsonErrorKind::NumberTooLong));
            }
            if rest {
                return Ok(long_value(int_digits, negative).map_or_else(
                    || {
                        let digits = core::str::from_utf8(int_digits).unwrap_or("0");
                        let sign = if negative { "-" } else { "" };
                        JsonValue::BigInteger(alloc::format!("{sign}{digits}"))
                    },
                    JsonValue::Long,
                ));
            }
            // Java's BigInteger.longValue(): the low 64 bits of the two's complement.
            let magnitude = int_digits.iter().fold(0u64, |acc, &d| {
                acc.wrapping_mul(10).wrapping_add(u64::from(d & 0x0F))
            });
            let bits = if negative {
                magnitude.wrapping_neg()
            } else {
                magnitude
            };
            return Ok(JsonValue::Long(bits as i64));
        }

        let exp_len = exponent.map_or(0, |(_, digits)| digits.len());
        if int_len + frac_digits.len() + exp_len > MAX_NUMBER_LEN {
            return Err(JsonError::new(start, JsonErrorKind::NumberTooLong));
        }
        let value: f64 = core::str::from_utf8(sub(bytes, start, i))
            .ok()
            .and_then(|text| text.parse().ok())
            .ok_or(JsonError::new(start, JsonErrorKind::InvalidNumber))?;
        // BigDecimal has no negative zero: a zero decimal becomes +0.0. Only when BigDecimal
        // rejects the exponent does Jackson fall back to Double.parseDouble, which keeps the sign.
        let all_zero = int_digits.iter().chain(frac_digits).all(|&d| d == b'0');
        let value = if !rest && all_zero && big_decimal_accepts(frac_digits.len(), exponent) {
            0.0
        } else {
            value
        };
        Ok(JsonValue::Double(JavaDouble::new(value)))
    }

    /// Reads a string whose opening quote is just before the current position.
    fn parse_string(&mut self, is_name: bool) -> Result<Cow<'a, str>, JsonError> {
        let bytes = self.bytes;
        let start = self.pos;
        let end = scan_plain(bytes, start);
        // Fast path: no escapes, valid UTF-8: borrowed. (A quote is never inside a character,
        // so the slice of valid text is on character boundaries.)
        if bytes.get(end) == Some(&b'"') {
            let text = match self.text {
                Some(all) => all.get(start..end),
                None => core::str::from_utf8(sub(bytes, start, end)).ok(),
            };
            if let Some(text) = text {
                check_string_len(text, end - start, is_name, start)?;
                self.pos = end + 1;
                return Ok(Cow::Borrowed(text));
            }
        }
        self.parse_string_slow(start, end, is_name).map(Cow::Owned)
    }

    /// The general string decoder: escapes, Jackson's lenient UTF-8, UTF-16 surrogate pairing.
    fn parse_string_slow(
        &mut self,
        start: usize,
        first_run_end: usize,
        is_name: bool,
    ) -> Result<String, JsonError> {
        let bytes = self.bytes;
        let mut sink = Utf16Sink::with_capacity(first_run_end - start + 16);
        // Length of the name as Jackson counts it: raw bytes, plus escapes re-encoded as UTF-8.
        let mut jackson_len = 0usize;
        let mut run_start = start;
        let mut run_end = first_run_end;
        loop {
            if run_end > run_start {
                decode_run(bytes, run_start, run_end, &mut sink, is_name)?;
                jackson_len += run_end - run_start;
            }
            match bytes.get(run_end) {
                None => return Err(JsonError::new(run_end, JsonErrorKind::UnexpectedEnd)),
                Some(b'"') => {
                    self.pos = run_end + 1;
                    break;
                }
                Some(b'\\') => {
                    let (unit, next) = decode_escape(bytes, run_end)?;
                    sink.push_unit(unit);
                    jackson_len += match unit {
                        0..=0x7F => 1,
                        0x80..=0x7FF => 2,
                        _ => 3,
                    };
                    run_start = next;
                    run_end = scan_plain(bytes, next);
                }
                Some(_) => {
                    return Err(JsonError::new(
                        run_end,
                        JsonErrorKind::ControlCharacterInString,
                    ))
                }
            }
        }
        let text = sink.finish();
        check_string_len(&text, jackson_len, is_name, start)?;
        Ok(text)
    }
}

/// Applies Jackson's length limits to a decoded string.
fn check_string_len(
    text: &str,
    jackson_name_len: usize,
    is_name: bool,
    start: usize,
) -> Result<(), JsonError> {
    let quote = start.saturating_sub(1);
    if is_name {
        if jackson_name_len > MAX_NAME_LEN {
            return Err(JsonError::new(quote, JsonErrorKind::NameTooLong));
        }
    } else if text.len() > MAX_STRING_LEN && text.encode_utf16().count() > MAX_STRING_LEN {
        // (UTF-16 length never exceeds UTF-8 length, so the cheap test comes first. A lone
        // surrogate and its U+FFFD are both one UTF-16 unit, so the count is Java's.)
        return Err(JsonError::new(quote, JsonErrorKind::StringTooLong));
    }
    Ok(())
}

/// `bytes[from..to]`, or empty if out of range (never panics).
fn sub(bytes: &[u8], from: usize, to: usize) -> &[u8] {
    bytes.get(from..to).unwrap_or_default()
}

/// The index of the first non-digit at or after `i`.
/// The `long` the decimal digits (without sign) denote, if Java's `long` holds it.
fn long_value(digits: &[u8], negative: bool) -> Option<i64> {
    let magnitude = digits.iter().try_fold(0u64, |acc, &d| {
        acc.checked_mul(10)?.checked_add(u64::from(d & 0x0F))
    })?;
    if negative {
        0i64.checked_sub_unsigned(magnitude)
    } else {
        i64::try_from(magnitude).ok()
    }
}

fn skip_digits(bytes: &[u8], i: usize) -> usize {
    let rest = bytes.get(i..).unwrap_or_default();
    i + rest
        .iter()
        .position(|b| !b.is_ascii_digit())
        .unwrap_or(rest.len())
}

/// The index of the first `"`, `\` or control byte at or after `i` (or the end).
///
/// Eight bytes at a time (SWAR): for each test, `(x - ONES * n) & !x & HIGHS` flags a byte
/// below `n` (with `n = 1` after XOR-ing the byte sought, a byte equal to it). A flag can be
/// wrong only above a byte truly flagged (the borrow runs upwards), so the lowest flag of the
/// three tests, in little-endian order, is the first byte sought.
pub(crate) fn scan_plain(bytes: &[u8], i: usize) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let below = |x: u64, n: u8| x.wrapping_sub(ONES * u64::from(n)) & !x & HIGHS;
    let rest = bytes.get(i..).unwrap_or_default();
    let mut chunks = rest.chunks_exact(8);
    let mut at = i;
    for chunk in &mut chunks {
        let Ok(word) = <[u8; 8]>::try_from(chunk) else {
            break;
        };
        let word = u64::from_le_bytes(word);
        let found = below(word ^ (ONES * u64::from(b'"')), 1)
            | below(word ^ (ONES * u64::from(b'\\')), 1)
            | below(word, 0x20);
        if found != 0 {
            return at + (found.trailing_zeros() / 8) as usize;
        }
        at += 8;
    }
    let tail = chunks.remainder();
    at + tail
        .iter()
        .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
        .unwrap_or(tail.len())
}

/// Whether `new BigDecimal(text)` accepts the exponent: at most 10 significant exponent digits,
/// the exponent within `int`, and the resulting scale (fraction digits minus exponent) within
/// `int`.
fn big_decimal_accepts(fraction_digits: usize, exponent: Option<(bool, &[u8])>) -> bool {
    let Some((negative, digits)) = exponent else {
        return true;
    };
    let significant = digits
        .iter()
        .position(|&d| d != b'0')
        .map_or(&[][..], |first| sub(digits, first, digits.len()));
    if significant.len() > 10 {
        return false;
    }
    let magnitude = significant
        .iter()
        .fold(0i64, |acc, &d| acc * 10 + i64::from(d & 0x0F));
    let exp = if negative { -magnitude } else { magnitude };
    let int_range = i64::from(i32::MIN)..=i64::from(i32::MAX);
    if !int_range.contains(&exp) {
        return false;
    }
    exp == 0 || i64::try_from(fraction_digits).is_ok_and(|scale| int_range.contains(&(scale - exp)))
}

/// Classifies a UTF-8 lead byte (>= 0x80) like Jackson: payload bits and continuation count.
fn utf8_lead(lead: u8) -> Option<(u32, usize)> {
    if lead & 0xE0 == 0xC0 {
        Some((u32::from(lead & 0x1F), 1))
    } else if lead & 0xF0 == 0xE0 {
        Some((u32::from(lead & 0x0F), 2))
    } else if lead & 0xF8 == 0xF0 {
        Some((u32::from(lead & 0x07), 3))
    } else {
        None
    }
}

/// Reads `need` continuation bytes after the lead byte at `at`, accumulating the code point.
/// Like Jackson, only checks that they are continuation bytes (no overlong/range checks).
fn continue_utf8(bytes: &[u8], at: usize, bits: u32, need: usize) -> Result<u32, JsonError> {
    let mut c = bits;
    for k in 1..=need {
        match bytes.get(at + k) {
            None => return Err(JsonError::new(at + k, JsonErrorKind::UnexpectedEnd)),
            Some(&d) if d & 0xC0 == 0x80 => c = (c << 6) | u32::from(d & 0x3F),
            Some(_) => return Err(JsonError::new(at + k, JsonErrorKind::InvalidUtf8)),
        }
    }
    Ok(c)
}

/// Decodes `bytes[from..to]` (no quotes, backslashes or control bytes) into `sink`: valid UTF-8
/// in bulk, anything else one sequence at a time like Jackson.
fn decode_run(
    bytes: &[u8],
    from: usize,
    to: usize,
    sink: &mut Utf16Sink,
    is_name: bool,
) -> Result<(), JsonError> {
    let mut pos = from;
    while pos < to {
        match core::str::from_utf8(sub(bytes, pos, to)) {
            Ok(text) => {
                sink.push_str(text);
                return Ok(());
            }
            Err(e) => {
                let valid = e.valid_up_to();
                if let Ok(text) = core::str::from_utf8(sub(bytes, pos, pos + valid)) {
                    sink.push_str(text);
                }
                pos = decode_lenient(bytes, pos + valid, sink, is_name)?;
            }
        }
    }
    Ok(())
}

/// Decodes one sequence that standard UTF-8 rejects, as Jackson does; returns the next index.
///
/// Jackson accepts overlong forms, encoded surrogates and 4-byte sequences above U+10FFFF. A
/// 4-byte sequence becomes `0xD800 | (c >> 10)` (string values) or `0xD800 + (c >> 10)` (member
/// names), then `0xDC00 | (c & 0x3FF)`, with `c = codepoint - 0x10000` and Java `char` truncation.
fn decode_lenient(
    bytes: &[u8],
    at: usize,
    sink: &mut Utf16Sink,
    is_name: bool,
) -> Result<usize, JsonError> {
    let Some(&lead) = bytes.get(at) else {
        return Err(JsonError::new(at, JsonErrorKind::UnexpectedEnd));
    };
    if lead < 0x80 {
        sink.push_unit(u16::from(lead));
        return Ok(at + 1);
    }
    let Some((bits, need)) = utf8_lead(lead) else {
        return Err(JsonError::new(at, JsonErrorKind::InvalidUtf8));
    };
    let c = continue_utf8(bytes, at, bits, need)?;
    if need < 3 {
        sink.push_unit(c as u16);
    } else {
        let c = c as i32 - 0x10000;
        let high = if is_name {
            0xD800 + (c >> 10)
        } else {
            0xD800 | (c >> 10)
        };
        sink.push_unit(high as u16);
        sink.push_unit((0xDC00 | (c & 0x3FF)) as u16);
    }
    Ok(at + 1 + need)
}

/// Decodes the escape whose backslash is at `at`; returns the UTF-16 unit and the next index.
fn decode_escape(bytes: &[u8], at: usize) -> Result<(u16, usize), JsonError> {
    let unit = match bytes.get(at + 1) {
        None => return Err(JsonError::new(at + 1, JsonErrorKind::UnexpectedEnd)),
        Some(b'"') => 0x22,
        Some(b'\\') => 0x5C,
        Some(b'/') => 0x2F,
        Some(b'b') => 0x08,
        Some(b'f') => 0x0C,
        Some(b'n') => 0x0A,
        Some(b'r') => 0x0D,
        Some(b't') => 0x09,
        Some(b'u') => {
            let mut unit = 0u16;
            for k in 2..6 {
                let digit = match bytes.get(at + k) {
                    None => return Err(JsonError::new(at + k, JsonErrorKind::UnexpectedEnd)),
                    Some(&h) => match h {
                        b'0'..=b'9' => h - b'0',
                        b'a'..=b'f' => h - b'a' + 10,
                        b'A'..=b'F' => h - b'A' + 10,
                        _ => return Err(JsonError::new(at + k, JsonErrorKind::InvalidEscape)),
                    },
                };
                unit = (unit << 4) | u16::from(digit);
            }
            return Ok((unit, at + 6));
        }
        Some(_) => return Err(JsonError::new(at + 1, JsonErrorKind::InvalidEscape)),
    };
    Ok((unit, at + 2))
}

/// Builds a Rust string from Java's view of it (UTF-16 units), pairing surrogates and replacing
/// lone ones with U+FFFD.
struct Utf16Sink {
    out: String,
    pending_high: Option<u16>,
}

impl Utf16Sink {
    fn with_capacity(capacity: usize) -> Self {
        Self {
            out: String::with_capacity(capacity),
            pending_high: None,
        }
    }

    /// Emits U+FFFD for a high surrogate that turned out to be lone.
    fn flush(&mut self) {
        if self.pending_high.take().is_some() {
            self.out.push(REPLACEMENT);
        }
    }

    fn push_str(&mut self, text: &str) {
        if !text.is_empty() {
            self.flush();
            self.out.push_str(text);
        }
    }

    fn push_unit(&mut self, unit: u16) {
        match unit {
            0xD800..=0xDBFF => {
                self.flush();
                self.pending_high = Some(unit);
            }
            0xDC00..=0xDFFF => match self.pending_high.take() {
                Some(high) => {
                    let c =
                        0x10000 + ((u32::from(high) - 0xD800) << 10) + (u32::from(unit) - 0xDC00);
                    self.out.push(char::from_u32(c).unwrap_or(REPLACEMENT));
                }
                None => self.out.push(REPLACEMENT),
            },
            _ => {
                self.flush();
                self.out
                    .push(char::from_u32(u32::from(unit)).unwrap_or(REPLACEMENT));
            }
        }
    }

    fn finish(mut self) -> String {
        self.flush();
        self.out
    }
}

/// Java's `Character.isJavaIdentifierPart(char)`: exact for ASCII and Latin-1 controls,
/// approximate for the rest of the BMP (no Unicode category tables in `core`).
fn is_java_identifier_part(unit: u16) -> bool {
    match unit {
        // Identifier-ignorable control characters.
        0x00..=0x08 | 0x0E..=0x1B | 0x7F..=0x9F => true,
        0x24 | 0x5F | 0x30..=0x39 | 0x41..=0x5A | 0x61..=0x7A => true,
        0x00..=0x7E | 0xD800..=0xDFFF => false,
        // Currency symbols (Sc).
        0xA2..=0xA5
        | 0x058F
        | 0x060B
        | 0x07FE..=0x07FF
        | 0x09F2..=0x09F3
        | 0x09FB
        | 0x0AF1
        | 0x0BF9
        | 0x0E3F
        | 0x17DB
        | 0x20A0..=0x20C0
        | 0xA838
        | 0xFDFC
        | 0xFE69
        | 0xFF04
        | 0xFFE0..=0xFFE1
        | 0xFFE5..=0xFFE6 => true,
        // Connector punctuation (Pc).
        0x203F..=0x2040 | 0x2054 | 0xFE33..=0xFE34 | 0xFE4D..=0xFE4F | 0xFF3F => true,
        // Format characters (Cf), which Java treats as identifier-ignorable.
        0xAD
        | 0x0600..=0x0605
        | 0x061C
        | 0x06DD
        | 0x070F
        | 0x0890..=0x0891
        | 0x08E2
        | 0x180E
        | 0x200B..=0x200F
        | 0x202A..=0x202E
        | 0x2060..=0x2064
        | 0x2066..=0x206F
        | 0xFEFF
        | 0xFFF9..=0xFFFB => true,
        // Common combining marks (Mn).
        0x0300..=0x036F
        | 0x0483..=0x0487
        | 0x1AB0..=0x1ABD
        | 0x1DC0..=0x1DFF
        | 0x20D0..=0x20DC
        | 0x20E1
        | 0x20E5..=0x20F0
        | 0xFE00..=0xFE0F
        | 0xFE20..=0xFE2F => true,
        _ => char::from_u32(u32::from(unit)).is_some_and(char::is_alphanumeric),
    }
}

#[cfg(test)]
#[path = "read_tests.rs"]
mod tests;
