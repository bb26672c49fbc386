//! JSON exactly as Java Kafka Connect reads and writes it.
//!
//! Connect's internal topics are read by `JsonConverter` with `schemas.enable=false`: Jackson's
//! `ObjectMapper.readTree(bytes)` (Jackson 2.16, with `ALLOW_LEADING_ZEROS_FOR_NUMBERS`,
//! `USE_BIG_DECIMAL_FOR_FLOATS` and exact `BigDecimal` nodes) followed by the schemaless
//! conversion of the tree to plain Java values (`Long`, `Double`, `String`, `Boolean`, `List`,
//! `Map`). [`parse`] reproduces both steps and yields a [`JsonValue`], accepting and rejecting the
//! same inputs as Java. [`write_value`] and [`write_str`] reproduce Jackson's compact UTF-8
//! generator.
//!
//! This is hand-written rather than `serde_json` because `serde_json` differs from Jackson on
//! inputs Java Connect accepts: it rejects leading zeros (`007`), turns integers beyond 64 bits
//! into floats (Java keeps their low 64 bits), rejects lone surrogate escapes (`"\uD800"`, valid in
//! a Java string), rejects the overlong and surrogate UTF-8 sequences Jackson's decoder lets
//! through, keeps the sign of `-0.0`, rejects trailing content after the first value (Jackson
//! ignores it), and applies different limits; and its writer escapes differently (Jackson writes
//! `\u001F` in uppercase and escapes supplementary characters as surrogate pairs).
//!
//! The module is `no_std` + `alloc`, never panics on any input, and is not recursive when
//! parsing (nesting beyond Jackson's limit of 1000 is an error).

mod borrowed;
pub mod java_map;
pub(crate) mod layout;
pub mod read;
mod tokens;
pub mod value;
pub mod write;

pub(crate) use borrowed::{member, name_order, Members, SortedObject, Value};
pub use read::{parse, parse_rest, JsonError, JsonErrorKind};
pub(crate) use read::{
    parse_borrowed, parse_named, parse_properties, scan_plain, FlatMember, FlatValue,
    PropertiesRead, Top,
};
pub(crate) use tokens::Tokens;
pub use value::{JavaDouble, JsonObject, JsonValue, MAX_DEPTH};
pub use write::{java_double_to_string, write_str, write_value, Natural, JAVA_DOUBLE};
