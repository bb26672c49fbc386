//! Tailing a cluster's internal topics for a server (`connect-state serve`, or a runtime that
//! embeds one): each topic's [`History`] machine, indexed for the findings' evidence, read to
//! its end by a store over a transport of its own; the events it tells folded into the
//! [`Recent`] history as they are drained; and after every refresh one immutable
//! [`Published`] value: the views, the monitor and the recent history, all at the same read
//! positions.
//!
//! Everything here is plain data flow: the machines are sans-IO, the stores read, the tailer
//! folds and publishes. Nothing is shared with the readers of a [`Published`] but the value
//! itself (its maps are persistent, so taking one is O(1)).

use std::collections::BTreeMap;
use std::sync::Arc;

use connect_state_store::{
    ProduceMode, ProgressObserver, Store, StoreError, StoreSettings, TopicKind, Transport,
};
use engine::config::ConfigTopic;
use engine::history::{Chronicle, History};
use engine::offsets::OffsetTopic;
use engine::status::{StatusTopic, TopicTracking, TopicTrackingError};
use engine::TopicMachine;

use crate::doctor::{Examination, Examined};
use crate::index::Indexed;
use crate::monitor::{Monitor, Moved};
use crate::recent::{Recent, RecentPart, RecentView};
use crate::rest::Views;
use crate::topics::Layout;

/// A tailed topic's machine: its history (telling every record from the first), with the key
/// index the findings cite.
pub type Tailed<T> = Indexed<History<T>>;

/// The tailed topics' names (the config topic is needed; the others are optional).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TailTopics {
    /// `config.storage.topic`.
    pub config: String,
    /// `status.storage.topic`.
    pub status: Option<String>,
    /// `offset.storage.topic`.
    pub offsets: Option<String>,
}

/// Why tailing failed.
#[derive(Debug, thiserror::Error)]
pub enum TailError {
    /// A transport could not be made.
    #[error("{0}")]
    Transport(String),
    /// A topic could not be read (or was refused as Java refuses it).
    #[error("reading topic '{topic}': {source}")]
    Read {
        /// The topic.
        topic: String,
        /// Why.
        source: StoreError,
    },
}

/// What a page or a scrape reads: the views, the monitor and the recent history, taken at the
/// same read positions after one refresh. Immutable; cheap to clone.
#[derive(Debug, Clone, Default)]
pub struct Published {
    /// The REST views.
    pub views: Views,
    /// `doctor`'s findings and the read figures.
    pub monitor: Arc<Monitor>,
    /// The recent history.
    pub recent: RecentView,
    /// The next offset to read of every partition, per topic served.
    pub positions: BTreeMap<TopicKind, BTreeMap<i32, i64>>,
}

/// One tailed topic: its store and how the broker describes it.
struct TailStore<T: Chronicle> {
    store: Store<Tailed<T>, dyn Transport>,
    layout: Layout,
}

impl<T: Chronicle> TailStore<T> {
    /// Reads the topic to its end (refusing what Java refuses, creating nothing), folding what
    /// its history tells into `part`.
    async fn start(
        transport: Arc<dyn Transport>,
        name: String,
        kind: TopicKind,
        machine: Tailed<T>,
        part: &mut RecentPart,
        progress: Option<ProgressObserver>,
    ) -> Result<Self, TailError> {
        let mut settings = StoreSettings::new(name.clone(), kind);
        settings.create_if_missing = false;
        let mut store = Store::new(settings, Arc::clone(&transport), machine);
        if let Some(progress) = progress {
            store.set_progress(progress);
        }
        store
            .start_into(part)
            .await
            .map_err(|source| TailError::Read {
                topic: name.clone(),
                source,
            })?;
        // The store's start refused what Java refuses; the description is for the findings.
        let layout = match transport.describe_topic(&name).await {
            Ok(Some(description)) => Layout::Described {
                partitions: description.partitions,
                cleanup_policy: description.cleanup_policy,
            },
            _ => Layout::Dump {
                partitions_seen: store.next_offsets().into_keys().collect(),
            },
        };
        Ok(Self { store, layout })
    }

    /// Reads the topic to its end, folding what its history tells into `part`.
    async fn read(&mut self, part: &mut RecentPart) -> Result<(), TailError> {
        let read = self.store.read_to_end_into(part).await;
        read.map_err(|source| TailError::Read {
            topic: self.store.settings().topic.clone(),
            source,
        })
    }

    fn examined(&self) -> Examined<T::Snapshot, T::Diagnostics> {
        let machine = self.store.machine();
        Examined {
            name: self.store.settings().topic.clone(),
            snapshot: machine.snapshot(),
            diagnostics: machine.diagnostics(),
            index: machine.index(),
            layout: self.layout.clone(),
            bad_lines: Default::default(),
        }
    }
}

/// The stores a tailed source keeps reading, the recent history they tell and the monitor.
pub struct Tail {
    config: TailStore<ConfigTopic>,
    status: Option<TailStore<StatusTopic>>,
    offsets: Option<TailStore<OffsetTopic>>,
    recent: Recent,
    monitor: Arc<Monitor>,
}

/// The result of `read`, if there is one to wait for.
async fn optional<T, E>(
    read: Option<impl std::future::Future<Output = Result<T, E>>>,
) -> Result<Option<T>, E> {
    match read {
        Some(read) => read.await.map(Some),
        None => Ok(None),
    }
}

impl Tail {
    /// Reads every topic named to its end, the three at once, each over a transport `connect`
    /// makes for it (one Kafka consumer serves one read at a time); `progress` may observe
    /// each topic's read. The recent history keeps `recent_entries` entries per connector and
    /// topic. The offsets topic is not indexed (a large one's keys are too many to keep twice).
    pub async fn start(
        connect: &dyn Fn() -> Result<Arc<dyn Transport>, String>,
        topics: TailTopics,
        recent_entries: usize,
        progress: &dyn Fn(&str) -> Option<ProgressObserver>,
    ) -> Result<Self, TailError> {
        let mut recent = Recent::new(recent_entries);
        let transport = || connect().map_err(TailError::Transport);
        let (config_part, status_part, offsets_part) = recent.parts_mut();
        let config = TailStore::start(
            transport()?,
            topics.config.clone(),
            TopicKind::Config,
            Indexed::new(History::new()),
            config_part,
            progress(&topics.config),
        );
        let status = match &topics.status {
            Some(name) => Some(TailStore::start(
                transport()?,
                name.clone(),
                TopicKind::Status,
                Indexed::new(History::new()),
                status_part,
                progress(name),
            )),
            None => None,
        };
        let offsets = match &topics.offsets {
            Some(name) => Some(TailStore::start(
                transport()?,
                name.clone(),
                TopicKind::Offsets,
                Indexed::unindexed(History::new()),
                offsets_part,
                progress(name),
            )),
            None => None,
        };
        let (config, status, offsets) =
            tokio::try_join!(config, optional(status), optional(offsets))?;
        let mut tail = Self {
            config,
            status,
            offsets,
            recent,
            monitor: Arc::default(),
        };
        // The first examination covers everything the start read.
        tail.recent.part_mut(TopicKind::Offsets).take_touched();
        let examination = tail.examination();
        tail.monitor = Arc::new(Monitor::of(&examination, &tail.positions()));
        Ok(tail)
    }

    /// Reads every topic to its end (the three at once), folding what their histories tell
    /// into the recent history. Returns the topics whose read positions moved.
    pub async fn refresh(&mut self) -> Result<Vec<TopicKind>, TailError> {
        let before = self.positions();
        let (config_part, status_part, offsets_part) = self.recent.parts_mut();
        let status = self.status.as_mut().map(|s| s.read(status_part));
        let offsets = self.offsets.as_mut().map(|o| o.read(offsets_part));
        tokio::try_join!(
            self.config.read(config_part),
            optional(status),
            optional(offsets)
        )?;
        let after = self.positions();
        Ok(TopicKind::ALL
            .into_iter()
            .filter(|kind| before.get(kind) != after.get(kind))
            .collect())
    }

    /// The value to publish after a refresh in which the topics in `moved` moved (none, for the
    /// first value after [`start`](Self::start)): the monitor's checks run again only for what
    /// those topics, and the connectors whose offsets changed, affect.
    pub fn publish(&mut self, moved: &[TopicKind]) -> Published {
        let positions = self.positions();
        // Which connectors' offsets changed since the last value (the start's records
        // included, which the first examination covered already).
        let touched = self.recent.part_mut(TopicKind::Offsets).take_touched();
        if !moved.is_empty() {
            let examination = self.examination();
            let moved = Moved {
                topics: moved.to_vec(),
                offsets_connectors: Some(touched),
            };
            Arc::make_mut(&mut self.monitor).update(&examination, &positions, &moved);
        }
        Published {
            views: self.views(),
            monitor: Arc::clone(&self.monitor),
            recent: self.recent.view(),
            positions,
        }
    }

    /// Java's `PUT /connectors/{c}/topics/reset`: the tombstones of the connector's active
    /// topics written through the status store and read back (so the next
    /// [`publish`](Self::publish) shows them gone). `Ok(None)` when the status topic is not tailed.
    pub async fn reset_active_topics(
        &mut self,
        connector: &str,
        tracking: &TopicTracking,
    ) -> Result<Option<Result<(), StoreError>>, TopicTrackingError> {
        let Some(status) = self.status.as_mut() else {
            return Ok(None);
        };
        let records = status
            .store
            .machine()
            .snapshot()
            .reset_active_topics(connector, tracking)?;
        let written = status
            .store
            .write(
                &records,
                ProduceMode::Plain,
                true,
                "Failed to reset the connector's active topics",
            )
            .await;
        Ok(Some(written.map(|told| {
            self.recent.part_mut(TopicKind::Status).extend(told);
        })))
    }

    /// The REST views now.
    pub fn views(&self) -> Views {
        Views {
            config: self.config.store.machine().snapshot(),
            status: self
                .status
                .as_ref()
                .map(|s| s.store.machine().snapshot())
                .unwrap_or_default(),
            offsets: self
                .offsets
                .as_ref()
                .map(|o| o.store.machine().snapshot())
                .unwrap_or_default(),
        }
    }

    /// What `doctor` examines of the tailed topics now (O(1)).
    pub fn examination(&self) -> Examination {
        Examination {
            config: Some(self.config.examined()),
            status: self.status.as_ref().map(TailStore::examined),
            offsets: self.offsets.as_ref().map(TailStore::examined),
        }
    }

    /// The next offset to read of every partition, per topic tailed.
    pub fn positions(&self) -> BTreeMap<TopicKind, BTreeMap<i32, i64>> {
        let mut positions = BTreeMap::new();
        positions.insert(TopicKind::Config, self.config.store.next_offsets());
        if let Some(s) = &self.status {
            positions.insert(TopicKind::Status, s.store.next_offsets());
        }
        if let Some(o) = &self.offsets {
            positions.insert(TopicKind::Offsets, o.store.next_offsets());
        }
        positions
    }
}
