//! The floor every command stands on: the error type and how a command ends, output formats,
//! the `--topic` parser, the runtime and Kafka clients a command makes, and keeping secret
//! `-X` values out of everything printed.

use std::io;

use clap::ValueEnum;
use engine::TopicKind;

/// The largest `--timeout`: librdkafka takes milliseconds as a 32-bit integer, so more than
/// `i32::MAX` ms (2,147,483 s) would wrap around to a short timeout.
pub const MAX_TIMEOUT_SECONDS: u64 = i32::MAX as u64 / 1000;

/// The parser of a `--topic` value: `config`, `status` or `offsets`.
pub fn topic_kind() -> impl clap::builder::TypedValueParser<Value = TopicKind> {
    use clap::builder::TypedValueParser as _;
    clap::builder::PossibleValuesParser::new(TopicKind::ALL.map(TopicKind::name)).map(
        |name: String| {
            // The possible values are the names, so the name is one.
            TopicKind::from_name(&name).unwrap_or(TopicKind::Config)
        },
    )
}

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// A readable table.
    Table,
    /// The stable JSON contract.
    Json,
}

/// Why a command failed.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// Bad input (dump lines, arguments).
    #[error("{0}")]
    Input(String),
    /// A dump could not be read.
    #[error(transparent)]
    Dump(#[from] connect_state_ops::kcat::DumpError),
    /// Output could not be written.
    #[error("could not write output: {0}")]
    Io(#[from] io::Error),
    /// JSON output failed.
    #[error("could not render JSON: {0}")]
    Json(#[from] serde_json::Error),
}

impl From<connect_state_ops::replay::ReplayError> for CliError {
    fn from(e: connect_state_ops::replay::ReplayError) -> Self {
        match e {
            connect_state_ops::replay::ReplayError::Dump(e) => Self::Dump(e),
            other => Self::Input(other.to_string()),
        }
    }
}

impl From<connect_state_ops::load::LoadError> for CliError {
    fn from(e: connect_state_ops::load::LoadError) -> Self {
        match e {
            connect_state_ops::load::LoadError::Replay(e) => e.into(),
            connect_state_ops::load::LoadError::Live(text) => Self::Input(text),
        }
    }
}

impl CliError {
    /// Whether the output's reader went away (`connect-state history | head -1`): not a
    /// failure of the command, so the binary exits quietly.
    pub fn is_broken_pipe(&self) -> bool {
        match self {
            Self::Io(e) => e.kind() == io::ErrorKind::BrokenPipe,
            Self::Json(e) => e.io_error_kind() == Some(io::ErrorKind::BrokenPipe),
            _ => false,
        }
    }
}

/// How a command that ran to completion ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Done; exit status 0.
    Success,
    /// Done, and problems were found (`doctor`); exit status 1.
    Findings,
}

/// A current-thread runtime (timers and sockets) for one command.
pub(crate) fn runtime() -> Result<tokio::runtime::Runtime, CliError> {
    Ok(tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?)
}

/// The Kafka clients for `settings` (nothing is contacted yet).
#[cfg(feature = "kafka")]
pub(crate) fn kafka_transport(
    settings: connect_state_kafka::KafkaSettings,
) -> Result<connect_state_kafka::KafkaTransport, CliError> {
    connect_state_kafka::KafkaTransport::new(settings.clone()).map_err(|e| {
        CliError::Input(settings.redact(&format!("cannot create the Kafka clients: {e}")))
    })
}

/// The values of secret `-X` properties on the command line (see
/// [`connect_state_kafka::is_secret`]), kept out of everything the binary prints.
static SECRETS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();

/// Registers the secret `-X KEY=VALUE` values among the command-line `args` (`-X KEY=VALUE`,
/// `-XKEY=VALUE`, `-X=KEY=VALUE`, and a bare `KEY=VALUE` given by mistake without `-X`). Call
/// once, before running the command; [`redact`] then removes them from any text.
pub fn register_secrets(args: impl IntoIterator<Item = String>) {
    let args: Vec<String> = args.into_iter().collect();
    let mut secrets = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let value = if args[i] == "-X" {
            i += 1;
            args.get(i).cloned()
        } else {
            Some(
                args[i]
                    .strip_prefix("-X")
                    .map_or(args[i].as_str(), |v| v.strip_prefix('=').unwrap_or(v))
                    .to_string(),
            )
        };
        if let Some((key, secret)) = value.as_deref().and_then(|v| v.split_once('=')) {
            if is_secret_property(key.trim()) && !secret.is_empty() {
                secrets.push(secret.to_string());
            }
        }
        i += 1;
    }
    let _ = SECRETS.set(secrets);
}

fn is_secret_property(key: &str) -> bool {
    connect_state_store::is_secret(key)
}

/// `text` as it may reach a terminal: its lines kept, any other control or invisible
/// formatting character in them escaped (a name from a topic quoted in an error cannot drive
/// the terminal), and, unlike a table cell, never cut. For error messages; tables escape
/// their cells themselves.
pub fn printable(text: &str) -> String {
    text.split('\n')
        .map(crate::table::escaped)
        .collect::<Vec<_>>()
        .join("\n")
}

/// `text` without any registered secret value (see [`register_secrets`]).
pub fn redact(text: &str) -> String {
    let secrets = SECRETS.get().map_or(&[][..], Vec::as_slice);
    redact_all(text, secrets)
}

#[cfg(feature = "kafka")]
fn redact_all(text: &str, secrets: &[String]) -> String {
    connect_state_kafka::redact(text, secrets)
}

/// Without Kafka support no property is secret, so nothing is registered.
#[cfg(not(feature = "kafka"))]
fn redact_all(text: &str, _: &[String]) -> String {
    text.to_string()
}
