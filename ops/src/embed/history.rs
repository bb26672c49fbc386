//! A cluster's history for runtimes that embed the core: records of the three topics in, the
//! entries of `connect-state history --format json` out, as JSON text. A thin wrapper of
//! [`crate::history::Teller`] (the same machines and narrator the command runs); the caller
//! merges the topics itself, in the order it wants them told.

use std::collections::BTreeSet;

use engine::Record;
use serde_json::{json, Value};

use super::{EmbedError, TopicKind};
use crate::history::{HistoryError, Options, Teller};

/// The history of the three topics, told one record at a time.
pub struct History {
    teller: Teller,
}

impl History {
    /// A history at the start of the topics: entries of `connectors` only (empty: every entry,
    /// cluster-wide ones too), config values whose names look secret masked unless
    /// `show_secrets`.
    pub fn new(connectors: BTreeSet<String>, show_secrets: bool) -> Self {
        let options = Options {
            connectors,
            show_secrets,
            ..Options::default()
        };
        Self {
            teller: Teller::new(options),
        }
    }

    /// Applies one record of `topic` and returns the entries it completes, each as the JSON
    /// text of one entry of `history --format json` (offsets records are gathered into runs,
    /// told when the connector's next entry of another kind comes, or by
    /// [`History::finish`]).
    pub fn handle_record(
        &mut self,
        topic: TopicKind,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
        offset: i64,
        partition: i32,
        timestamp: Option<i64>,
    ) -> Result<Vec<String>, EmbedError> {
        let record = Record {
            key,
            value,
            offset,
            partition,
            timestamp,
        };
        let mut entries = Vec::new();
        self.teller
            .tell(topic, record, &mut |entry| {
                entries.push(entry.to_json().to_string());
                Ok(())
            })
            .map_err(|e| match e {
                HistoryError::Input(why) => EmbedError::Record(why),
                // The sink above never fails.
                HistoryError::Output(why) => EmbedError::Record(why.to_string()),
            })?;
        Ok(entries)
    }

    /// Ends the history: the JSON text of `history --format json`'s document for what is left,
    /// `{"entries": [the open runs], "compacted": [..], "records": N, "skipped": N}`.
    pub fn finish(self) -> String {
        let mut entries: Vec<Value> = Vec::new();
        let summary = self.teller.finish(&mut |entry| {
            entries.push(entry.to_json());
            Ok(())
        });
        // The sink never fails, so neither does finishing.
        let summary = summary.unwrap_or_default();
        let compacted: Vec<Value> = summary.compacted.iter().map(|c| c.to_json()).collect();
        json!({
            "entries": entries,
            "compacted": compacted,
            "records": summary.records,
            "skipped": summary.skipped,
        })
        .to_string()
    }
}
