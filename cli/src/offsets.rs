//! `connect-state offsets export|reset|import`: a source connector's offsets in KIP-875's JSON,
//! and the exact records a reset or an import writes. A dry run by default; `--execute` writes
//! to a live cluster, only when the config topic shows the connector STOPPED with zero tasks
//! (Java's precondition), with tombstones routed to the partition where each key lives.

use std::io::Write;
use std::path::PathBuf;

use clap::{Args, Subcommand};
use engine::config::ConfigLog;
use engine::json::{JsonErrorKind, JsonValue};
use engine::offsets::{kip875, OffsetLog, OrderedMap};
use engine::ProducerRecord;
use serde::de::{Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;

use crate::source::{Layout, SourceArgs, TopicRead};
use crate::{CliError, Exit, Topic};

/// Options of `offsets`.
#[derive(Debug, Clone, Args)]
pub struct OffsetsArgs {
    /// What to do.
    #[command(subcommand)]
    pub action: OffsetsAction,
}

/// The `offsets` subcommands.
#[derive(Debug, Clone, Subcommand)]
pub enum OffsetsAction {
    /// Print a connector's offsets as `GET /connectors/{c}/offsets` answers (KIP-875 JSON).
    #[command(after_help = "Examples:\n  \
        connect-state offsets export --connector jdbc-source --from-dump offsets=offsets.jsonl\n  \
        connect-state offsets export --connector jdbc-source --bootstrap-servers localhost:9092 \\\n      \
        --offsets-topic connect-offsets > jdbc-source.offsets.json")]
    Export {
        /// The connector.
        #[arg(long)]
        connector: String,
        /// Where the topics come from (the config topic, when given, must know the connector).
        #[command(flatten)]
        source: SourceArgs,
    },
    /// Tombstone every offset of a connector, as `DELETE /connectors/{c}/offsets` does.
    #[command(after_help = "Examples:\n  \
        connect-state offsets reset --connector jdbc-source \\\n      \
        --from-dump config=configs.jsonl --from-dump offsets=offsets.jsonl\n  \
        connect-state offsets reset --connector jdbc-source --bootstrap-servers localhost:9092 \\\n      \
        --config-topic connect-configs --offsets-topic connect-offsets --execute")]
    Reset {
        /// The connector.
        #[arg(long)]
        connector: String,
        /// How to write.
        #[command(flatten)]
        write: WriteArgs,
    },
    /// Write offsets from a KIP-875 JSON file (`{"offsets":[{"partition":{..},"offset":{..}}]}`,
    /// a null offset deletes), as `PATCH /connectors/{c}/offsets` does.
    #[command(after_help = "Examples:\n  \
        connect-state offsets import --connector jdbc-source jdbc-source.offsets.json \\\n      \
        --from-dump config=configs.jsonl --from-dump offsets=offsets.jsonl\n  \
        connect-state offsets import --connector jdbc-source jdbc-source.offsets.json \\\n      \
        --bootstrap-servers localhost:9092 --config-topic connect-configs \\\n      \
        --offsets-topic connect-offsets --execute")]
    Import {
        /// The connector.
        #[arg(long)]
        connector: String,
        /// The KIP-875 JSON file (`-` for standard input).
        file: PathBuf,
        /// How to write.
        #[command(flatten)]
        write: WriteArgs,
    },
}

/// Options shared by `reset` and `import`.
#[derive(Debug, Clone, Args)]
pub struct WriteArgs {
    /// Where the topics come from (both the config and the offsets topic are needed).
    #[command(flatten)]
    pub source: SourceArgs,
    /// Write the records (live clusters only). Without it, print them and write nothing.
    #[arg(long)]
    pub execute: bool,
    /// Partitions of the offsets topic, to place keys it does not hold yet (dumps only; a live
    /// topic is described).
    #[arg(long, default_value_t = 25, value_name = "N")]
    pub offsets_partitions: i32,
}

/// Runs an `offsets` subcommand.
pub fn run(args: OffsetsArgs, out: &mut dyn Write) -> Result<Exit, CliError> {
    match args.action {
        OffsetsAction::Export { connector, source } => {
            let topics = source.load(&[Topic::Config, Topic::Offsets])?;
            if let Some(config) = &topics.config {
                if !config.state.machine.snapshot().contains(&connector) {
                    return Err(CliError::Input(format!("Connector {connector} not found")));
                }
            }
            let offsets = require(topics.offsets, "offsets")?;
            let listing = kip875::list(&offsets.state.machine.snapshot(), &connector);
            writeln!(out, "{}", serde_json::to_string_pretty(&listing)?)?;
        }
        OffsetsAction::Reset { connector, write } => {
            modify(&connector, &write, None, out)?;
        }
        OffsetsAction::Import {
            connector,
            file,
            write,
        } => {
            let text = if file.as_os_str() == "-" {
                std::io::read_to_string(std::io::stdin())?
            } else {
                std::fs::read_to_string(&file)
                    .map_err(|e| CliError::Input(format!("cannot read {}: {e}", file.display())))?
            };
            let entries = parse_offsets_file(&text)
                .map_err(|e| CliError::Input(format!("{}: {e}", file.display())))?;
            modify(&connector, &write, Some(entries), out)?;
        }
    }
    Ok(Exit::Success)
}

fn require<M>(read: Option<TopicRead<M>>, topic: &str) -> Result<TopicRead<M>, CliError> {
    read.ok_or_else(|| {
        CliError::Input(format!(
            "this command needs the {topic} topic: add --from-dump {topic}=FILE, or \
             --{topic}-topic NAME with --bootstrap-servers"
        ))
    })
}

/// A reset (`entries == None`) or an import: check, build the records, print them, and with
/// `--execute` write them and read the result back.
fn modify(
    connector: &str,
    args: &WriteArgs,
    entries: Option<Vec<OffsetsEntry>>,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    if args.execute && !args.source.is_live() {
        return Err(CliError::Input(
            "--execute writes to a live cluster: give --bootstrap-servers with --config-topic \
             and --offsets-topic instead of dumps"
                .into(),
        ));
    }
    let topics = args.source.load(&[Topic::Config, Topic::Offsets])?;
    let config: TopicRead<ConfigLog> = require(topics.config, "config")?;
    let offsets: TopicRead<OffsetLog> = require(topics.offsets, "offsets")?;
    let modify_error = |e: kip875::ModifyOffsetsError| CliError::Input(e.to_string());
    kip875::check_modifiable(&config.state.machine.snapshot(), connector).map_err(modify_error)?;
    let partitions = match &offsets.layout {
        Layout::Described { partitions, .. } => *partitions,
        Layout::Dump { .. } => args.offsets_partitions,
    };
    let snapshot = offsets.state.machine.snapshot();
    let records = match &entries {
        None => kip875::reset_records(&snapshot, connector, partitions),
        Some(entries) => kip875::alter_records(&snapshot, connector, entries, partitions),
    }
    .map_err(modify_error)?;
    print_records(out, &records)?;
    if !args.execute {
        writeln!(
            out,
            "Dry run: {} record(s) would be written to {}. Add --execute to write them.",
            records.len(),
            offsets.name
        )?;
        return Ok(());
    }
    execute(&args.source, &offsets.name, &records)?;
    writeln!(
        out,
        "Wrote {} record(s) to {}.",
        records.len(),
        offsets.name
    )?;
    writeln!(out, "{}", kip875::success_message(entries.is_none()))?;
    Ok(())
}

fn print_records(out: &mut dyn Write, records: &[ProducerRecord]) -> Result<(), CliError> {
    let rows: Vec<Vec<String>> = records
        .iter()
        .map(|r| {
            vec![
                r.partition.map_or("-".into(), |p| p.to_string()),
                String::from_utf8_lossy(&r.key).into_owned(),
                r.value.as_deref().map_or("(tombstone)".into(), |v| {
                    String::from_utf8_lossy(v).into_owned()
                }),
            ]
        })
        .collect();
    if rows.is_empty() {
        writeln!(out, "No records: the connector has no offsets to change.")?;
    } else {
        out.write_all(crate::table::render(&["PARTITION", "KEY", "VALUE"], &rows).as_bytes())?;
    }
    Ok(())
}

#[cfg(not(feature = "kafka"))]
fn execute(_: &SourceArgs, _: &str, _: &[ProducerRecord]) -> Result<(), CliError> {
    Err(CliError::Input(
        "this build has no Kafka support (the `kafka` feature)".into(),
    ))
}

/// Writes the records with plain sends (as Java's offset writes outside exactly-once).
#[cfg(feature = "kafka")]
fn execute(source: &SourceArgs, topic: &str, records: &[ProducerRecord]) -> Result<(), CliError> {
    use connect_state_store::{ProduceMode, Transport};

    let servers = source.live.bootstrap_servers.as_deref().unwrap_or_default();
    let transport = crate::kafka_transport(source.live.kafka_settings(servers))?;
    let runtime = crate::runtime()?;
    runtime
        .block_on(transport.produce(topic, records, ProduceMode::Plain))
        .map(|_| ())
        .map_err(|e| CliError::Input(format!("writing to '{topic}': {e}")))
}

/// A JSON object with its members in file order, each value's text as written.
struct Ordered(Vec<(String, Box<RawValue>)>);

impl<'de> Deserialize<'de> for Ordered {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Ordered;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Ordered, A::Error> {
                let mut members = Vec::new();
                while let Some((k, v)) = map.next_entry::<String, Box<RawValue>>()? {
                    members.push((k, v));
                }
                Ok(Ordered(members))
            }
        }
        d.deserialize_map(V)
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OffsetsFile {
    offsets: Option<Vec<Entry>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    #[serde(default)]
    partition: Option<Ordered>,
    #[serde(default)]
    offset: Option<Ordered>,
}

/// One entry of a KIP-875 offsets document: the partition (`None`: `null` or not given) and
/// the offset (`None`: a tombstone).
pub type OffsetsEntry = (Option<OrderedMap>, Option<OrderedMap>);

/// Reads a KIP-875 offsets document as Connect's REST layer reads a `PATCH` body: objects keep
/// their member order, values are read as Jackson's default `ObjectMapper` reads them
/// ([`engine::json::parse_rest`]), and what follows the document is ignored, as Jackson
/// ignores it. A value Java cannot hold in offsets (an integer beyond `long`, which Jackson
/// makes a `BigInteger`) is refused with Java's own message, unless it is in an offset a later
/// entry for the same partition replaces (Java collapses the request before it validates);
/// arrays and objects are refused later by the core, as Java refuses them.
pub fn parse_offsets_file(text: &str) -> Result<Vec<OffsetsEntry>, String> {
    let mut reader = serde_json::Deserializer::from_str(text);
    let file = OffsetsFile::deserialize(&mut reader).map_err(|e| {
        format!("not a KIP-875 offsets document ({{\"offsets\":[{{\"partition\":{{..}},\"offset\":{{..}}}}]}}): {e}")
    })?;
    // No entries (`[]` or `null`): the core refuses them with Java's message.
    // Each offset read, or why Java would refuse it if it is validated.
    type Read = (Option<OrderedMap>, Result<Option<OrderedMap>, String>);
    let read: Vec<Read> = file
        .offsets
        .unwrap_or_default()
        .into_iter()
        .map(|e| {
            let partition = e.partition.map(ordered_map).transpose()?;
            Ok((partition, e.offset.map(ordered_map).transpose()))
        })
        .collect::<Result<_, String>>()?;
    let last: std::collections::BTreeMap<_, usize> = read
        .iter()
        .enumerate()
        .map(|(i, (p, _))| (p.as_ref().map(OrderedMap::to_object), i))
        .collect();
    read.iter()
        .enumerate()
        .map(|(i, (partition, offset))| {
            let replaced = last.get(&partition.as_ref().map(OrderedMap::to_object)) != Some(&i);
            match offset {
                Ok(offset) => Ok((partition.clone(), offset.clone())),
                Err(_) if replaced => Ok((partition.clone(), None)),
                Err(e) => Err(e.clone()),
            }
        })
        .collect()
}

/// The object as Jackson's `LinkedHashMap`: a repeated name keeps its first position and its
/// last value, and only the values kept are read (a replaced one is never looked at).
fn ordered_map(object: Ordered) -> Result<OrderedMap, String> {
    let mut members: Vec<(String, Box<RawValue>)> = Vec::with_capacity(object.0.len());
    let mut index: std::collections::BTreeMap<String, usize> = std::collections::BTreeMap::new();
    for (name, raw) in object.0 {
        match index.get(&name) {
            Some(&at) => members[at].1 = raw,
            None => {
                index.insert(name.clone(), members.len());
                members.push((name, raw));
            }
        }
    }
    let members = members
        .into_iter()
        .map(|(name, raw)| {
            let value = java_value(&name, raw.get())?;
            Ok((name, value))
        })
        .collect::<Result<Vec<_>, String>>()?;
    Ok(OrderedMap::new(members))
}

/// The value of member `name`, as Java's REST layer reads `text`.
fn java_value(name: &str, text: &str) -> Result<JsonValue, String> {
    match engine::json::parse_rest(text.as_bytes()) {
        Ok(value) => Ok(value.unwrap_or(JsonValue::Null)),
        Err(e) if e.kind == JsonErrorKind::IntegerBeyondLong => {
            // Java's `OffsetUtils.validateFormat`, which sees a `BigInteger`, or the list or
            // map holding one.
            let held = match text.trim_start().as_bytes().first() {
                Some(b'[') => "ARRAY".to_string(),
                Some(b'{') => "MAP".to_string(),
                _ => "class java.math.BigInteger".to_string(),
            };
            Err(format!(
                "Offsets may only contain primitive types as values, but field {name} contains \
                 {held}"
            ))
        }
        Err(e) => Err(format!("the value of {name:?}: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::json::JavaDouble;

    fn first_offset_value(text: &str) -> Result<JsonValue, String> {
        let entries = parse_offsets_file(text)?;
        Ok(entries[0].1.as_ref().unwrap().members()[0].1.clone())
    }

    #[test]
    fn offsets_files_keep_member_order_and_null_offsets() {
        let entries = parse_offsets_file(
            r#"{"offsets":[{"partition":{"z":1,"a":"x"},"offset":{"pos":2.5}},
                           {"partition":{"file":"b"},"offset":null},
                           {"partition":null,"offset":{"o":1}},
                           {"offset":{"o":1}}]}"#,
        )
        .unwrap();
        let partition = entries[0].0.as_ref().unwrap();
        let names: Vec<&str> = partition
            .members()
            .iter()
            .map(|(n, _)| n.as_str())
            .collect();
        assert_eq!(names, ["z", "a"]);
        assert_eq!(partition.members()[0].1, JsonValue::Long(1));
        assert!(matches!(
            entries[0].1.as_ref().unwrap().members()[0].1,
            JsonValue::Double(_)
        ));
        assert!(entries[1].1.is_none());
        // Java keys a null or missing partition `["c",null]`.
        assert!(entries[2].0.is_none() && entries[3].0.is_none());
    }

    #[test]
    fn offsets_files_read_decimals_exactly() {
        let value = first_offset_value(
            r#"{"offsets":[{"partition":{},"offset":{"f":7864155298368167.0}}]}"#,
        );
        assert_eq!(
            value,
            Ok(JsonValue::Double(JavaDouble::new(7_864_155_298_368_167.0)))
        );
    }

    /// Issue 14: numbers as Java's REST layer reads them, checked against the Java oracle.
    #[test]
    fn numbers_are_read_as_java_reads_them_or_refused_with_javas_message() {
        let body = |value: &str| {
            format!(r#"{{"offsets":[{{"partition":{{}},"offset":{{"o":{value}}}}}]}}"#)
        };
        for beyond in [
            "18446744073709551615",
            "9223372036854775808",
            "-9223372036854775809",
            "123456789012345678901234567890",
        ] {
            assert_eq!(
                first_offset_value(&body(beyond)).unwrap_err(),
                "Offsets may only contain primitive types as values, but field o contains \
                 class java.math.BigInteger",
                "{beyond}"
            );
        }
        let err = first_offset_value(&body("[18446744073709551615]")).unwrap_err();
        assert!(err.ends_with("field o contains ARRAY"), "{err}");
        let partition = r#"{"offsets":[{"partition":{"id":18446744073709551615},"offset":null}]}"#;
        assert!(parse_offsets_file(partition)
            .unwrap_err()
            .contains("field id contains class java.math.BigInteger"));
        assert_eq!(
            first_offset_value(&body("9223372036854775807")),
            Ok(JsonValue::Long(i64::MAX))
        );
        assert_eq!(first_offset_value(&body("-0")), Ok(JsonValue::Long(0)));
        assert_eq!(
            first_offset_value(&body("1e400")),
            Ok(JsonValue::Double(JavaDouble::new(f64::INFINITY)))
        );
        assert!(first_offset_value(&body("007")).is_err());
        // An offset a later entry for the same partition replaces is never validated by Java.
        let replaced = r#"{"offsets":[{"partition":{"f":1},"offset":{"o":18446744073709551615}},
                                     {"partition":{"f":1},"offset":{"o":2}}]}"#;
        assert_eq!(
            parse_offsets_file(replaced).unwrap()[1]
                .1
                .as_ref()
                .unwrap()
                .members()[0]
                .1,
            JsonValue::Long(2)
        );
        // Jackson ignores what follows the document.
        assert_eq!(
            first_offset_value(&format!("{} trailing", body("1"))),
            Ok(JsonValue::Long(1))
        );
    }

    #[test]
    fn malformed_offsets_files_say_what_is_expected() {
        for bad in [
            "",
            "[]",
            r#"{"offsets":{}}"#,
            r#"{"offsets":[{"partition":{},"x":1}]}"#,
            r#"{"offsets":[],"extra":1}"#,
        ] {
            let err = parse_offsets_file(bad).unwrap_err();
            assert!(err.contains("KIP-875"), "{bad}: {err}");
        }
        assert_eq!(parse_offsets_file(r#"{"offsets":null}"#), Ok(vec![]));
    }
}
