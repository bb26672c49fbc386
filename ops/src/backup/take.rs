//! Taking a backup: the connectors of a read state, written as a [`document`](super::document)
//! one line at a time (a connector's source partitions are looked up when its turn comes).

use std::collections::BTreeSet;
use std::io::Write;

use engine::config::{ConfigSnapshot, Properties, TargetState};
use engine::offsets::OffsetSnapshot;
use engine::status::StatusSnapshot;
use serde_json::{Map, Value};

use super::document::{
    ConnectorEntry, DocumentError, DocumentWriter, Header, OffsetEntry, Secrets, Written,
};
use crate::history::masked_config;

/// What to take.
#[derive(Debug, Clone, Default)]
pub struct BackupOptions {
    /// Only these connectors (`--connector`); `None` for all.
    pub connectors: Option<BTreeSet<String>>,
    /// Mask config values whose names look secret: an audit copy `restore` refuses to write.
    pub mask_secrets: bool,
    /// Take each connector's KIP-558 active topics (needs the status topic).
    pub active_topics: bool,
    /// Take connectors whose task configs are inconsistent (Connect runs none of their tasks)
    /// as they are, instead of refusing.
    pub allow_inconsistent: bool,
}

/// The state a backup is taken of: the config topic's, and the offsets and status topics' when
/// they were read.
#[derive(Debug, Clone, Copy)]
pub struct State<'a> {
    /// The config topic's snapshot.
    pub config: &'a ConfigSnapshot,
    /// The offsets topic's, if read.
    pub offsets: Option<&'a OffsetSnapshot>,
    /// The status topic's, if read.
    pub status: Option<&'a StatusSnapshot>,
}

/// Why a backup was not written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BackupError {
    /// `--connector` names a connector the topics do not know.
    #[error("no connector named {0:?} in the topics read (neither a config nor source offsets)")]
    UnknownConnector(String),
    /// Connectors `doctor` finds inconsistent, without `allow_inconsistent`.
    #[error(
        "{} connector(s) have inconsistent task configs (Connect runs none of their tasks): {}; \
         back them up anyway with --allow-inconsistent, or leave them out with --connector",
        .0.len(),
        .0.join(", ")
    )]
    Inconsistent(Vec<String>),
    /// Active topics asked for without the status topic.
    #[error("--active-topics needs the status topic")]
    NoStatusTopic,
    /// Writing the document failed.
    #[error(transparent)]
    Document(#[from] DocumentError),
}

/// The connectors a backup of `state` holds, in name order: those with a config, and those
/// with live source offsets but no config; only `options.connectors` when given. Checks the
/// selection before anything is written.
pub fn selected_connectors(
    state: &State<'_>,
    options: &BackupOptions,
) -> Result<Vec<String>, BackupError> {
    let mut all: BTreeSet<&str> = state.config.connectors().collect();
    if let Some(offsets) = state.offsets {
        all.extend(
            offsets
                .connectors()
                .filter(|c| !offsets.connector_records(c).is_empty()),
        );
    }
    let chosen: Vec<String> = match &options.connectors {
        None => all.into_iter().map(str::to_owned).collect(),
        Some(wanted) => {
            if let Some(unknown) = wanted.iter().find(|c| !all.contains(c.as_str())) {
                return Err(BackupError::UnknownConnector(unknown.clone()));
            }
            wanted.iter().cloned().collect()
        }
    };
    if options.active_topics && state.status.is_none() {
        return Err(BackupError::NoStatusTopic);
    }
    if !options.allow_inconsistent {
        let inconsistent: Vec<String> = chosen
            .iter()
            .filter(|c| state.config.is_inconsistent(c))
            .cloned()
            .collect();
        if !inconsistent.is_empty() {
            return Err(BackupError::Inconsistent(inconsistent));
        }
    }
    Ok(chosen)
}

/// Writes the backup of `state` to `out`: `header` (its `secrets` and `active_topics` follow
/// `options`), then every selected connector and its source partitions, then the end line.
/// Checks the selection first: on a refusal nothing is written.
pub fn write_backup<W: Write>(
    out: W,
    header: &Header,
    state: &State<'_>,
    options: &BackupOptions,
) -> Result<(W, Written), BackupError> {
    let connectors = selected_connectors(state, options)?;
    let mut header = header.clone();
    header.secrets = if options.mask_secrets {
        Secrets::Masked
    } else {
        Secrets::AsStored
    };
    header.active_topics = options.active_topics;
    let mut writer = DocumentWriter::new(out, &header)?;
    for name in &connectors {
        let records = state
            .offsets
            .map(|o| o.connector_records(name))
            .unwrap_or_default();
        writer.connector(&connector_entry(state, name, records.len() as u64, options))?;
        for (key, stored) in records {
            writer.offset(&OffsetEntry::new(key, stored.value(), stored.partition()))?;
        }
    }
    Ok(writer.finish()?)
}

/// A connector's line: config, target state and task configs as stored (secrets masked when
/// asked), its active topics when asked.
fn connector_entry(
    state: &State<'_>,
    name: &str,
    source_partitions: u64,
    options: &BackupOptions,
) -> ConnectorEntry {
    let config = state.config;
    let as_map = |props: &Properties| match masked_config(props, !options.mask_secrets) {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    let task_count = config.task_count(name);
    let task_configs = config
        .connector_task_configs(name)
        .filter(|(task, _)| *task < task_count)
        .map(|(task, props)| super::document::TaskConfig {
            task,
            config: as_map(props),
        })
        .collect();
    let stored = config.connector_config(name);
    let target_state = stored.map(|_| {
        config
            .target_state(name)
            .unwrap_or(TargetState::Started)
            .as_str()
            .to_owned()
    });
    let active_topics = options.active_topics.then(|| {
        state
            .status
            .map(|s| s.topics(name).map(|(t, _)| t.to_owned()).collect())
            .unwrap_or_default()
    });
    ConnectorEntry {
        name: name.to_owned(),
        config: stored.map(as_map),
        target_state,
        task_count,
        task_configs,
        active_topics,
        source_partitions,
    }
}
