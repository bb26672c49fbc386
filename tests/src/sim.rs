//! The plumbing every simulator test shares: a current-thread runtime to drive the async
//! stores synchronously, seeded clusters, stores over any machine, the cluster lock, a reader
//! transport that records what it handed out, the capture of every record appended, and
//! [`Sim`], the seeded synchronous driver of one writer and one reader over a topic.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

use async_trait::async_trait;
use connect_state_memory::{
    FetchFault, MemoryCluster, MemoryTransport, ProduceFault, RecordKind, TopicConfig,
};
use connect_state_store::{
    FetchedBatch, NewTopic, ProduceMode, RecordBatch, Store, StoreSettings, TopicDescription,
    TopicKind, Transport, TransportError,
};
use engine::{OwnedRecord, ProducerRecord, TopicMachine};

/// A current-thread runtime for driving the async stores.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a current-thread runtime")
}

/// A cluster whose random decisions all come from `seed`, holding `topic`.
pub fn cluster(seed: u64, topic: &str, config: TopicConfig) -> Arc<Mutex<MemoryCluster>> {
    let mut cluster = MemoryCluster::new(seed);
    cluster.create_topic(topic, config).expect("a new topic");
    Arc::new(Mutex::new(cluster))
}

/// A store of a fresh `M` reading `topic` through `transport`.
pub fn store<M: TopicMachine + Default, T: Transport>(
    topic: &str,
    kind: TopicKind,
    transport: Arc<T>,
) -> Store<M, T> {
    Store::new(StoreSettings::new(topic, kind), transport, M::default())
}

/// The locked cluster.
pub fn lock(cluster: &Mutex<MemoryCluster>) -> MutexGuard<'_, MemoryCluster> {
    cluster.lock().expect("the cluster lock")
}

/// A reader's transport that remembers every record it hands out. The store applies each
/// fetched batch in order, so this is exactly the order the reader's machine consumed records.
pub struct Recording {
    inner: MemoryTransport,
    consumed: Mutex<Vec<OwnedRecord>>,
    /// Where each fetch is noted as it starts (`fetch PARTITION@OFFSET`), and each
    /// [`Transport::expect_fetches`] (`expect PARTITION@OFFSET ...`), if anywhere.
    starts: Option<Arc<Mutex<Vec<String>>>>,
}

impl Recording {
    /// A recording transport over `inner`.
    pub fn new(inner: MemoryTransport) -> Self {
        Self {
            inner,
            consumed: Mutex::new(Vec::new()),
            starts: None,
        }
    }

    /// Also notes each fetch as it starts (`fetch PARTITION@OFFSET`), where the store said
    /// its fetches would start (`expect PARTITION@OFFSET ...`) and each batch handed back
    /// (`recycle RECORDS`) in `log`, which a test can
    /// share with a progress observer to see fetches and applied batches in one order.
    pub fn noting_fetches_in(mut self, log: Arc<Mutex<Vec<String>>>) -> Self {
        self.starts = Some(log);
        self
    }

    /// Every record handed out so far, in order.
    pub fn consumed(&self) -> Vec<OwnedRecord> {
        self.consumed.lock().expect("recording lock").clone()
    }
}

#[async_trait]
impl Transport for Recording {
    async fn describe_topic(
        &self,
        topic: &str,
    ) -> Result<Option<TopicDescription>, TransportError> {
        self.inner.describe_topic(topic).await
    }

    async fn create_topic(&self, topic: &NewTopic) -> Result<(), TransportError> {
        self.inner.create_topic(topic).await
    }

    async fn end_offsets(&self, topic: &str) -> Result<BTreeMap<i32, i64>, TransportError> {
        self.inner.end_offsets(topic).await
    }

    async fn expect_fetches(&self, topic: &str, starts: &[(i32, i64)]) {
        if let Some(log) = &self.starts {
            let starts: Vec<String> = starts.iter().map(|(p, o)| format!("{p}@{o}")).collect();
            let note = format!("expect {}", starts.join(" "));
            log.lock().expect("fetch log lock").push(note);
        }
        self.inner.expect_fetches(topic, starts).await;
    }

    async fn fetch(
        &self,
        topic: &str,
        partition: i32,
        from: i64,
        max_records: usize,
    ) -> Result<FetchedBatch, TransportError> {
        if let Some(log) = &self.starts {
            let note = format!("fetch {partition}@{from}");
            log.lock().expect("fetch log lock").push(note);
        }
        let batch = self
            .inner
            .fetch(topic, partition, from, max_records)
            .await?;
        self.consumed
            .lock()
            .expect("recording lock")
            .extend(batch.records.iter().map(|record| record.to_owned()));
        Ok(batch)
    }

    fn recycle(&self, records: RecordBatch) {
        if let Some(log) = &self.starts {
            let note = format!("recycle {}", records.len());
            log.lock().expect("fetch log lock").push(note);
        }
        self.inner.recycle(records);
    }

    async fn produce(
        &self,
        topic: &str,
        records: &[ProducerRecord],
        mode: ProduceMode,
    ) -> Result<Vec<(i32, i64)>, TransportError> {
        self.inner.produce(topic, records, mode).await
    }
}

/// A reader over its own transport: `fetch_size` records per fetch at most, and `fault`'s
/// cleaning before every fetch.
pub fn reader_transport(
    cluster: &Arc<Mutex<MemoryCluster>>,
    fetch_size: usize,
    fault: FetchFault,
) -> Arc<Recording> {
    let inner = MemoryTransport::new(Arc::clone(cluster)).with_max_fetch_records(fetch_size);
    inner.set_fetch_fault(Some(fault));
    Arc::new(Recording::new(inner))
}

/// One record as the writer appended it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Appended {
    /// Its partition.
    pub partition: i32,
    /// Its offset.
    pub offset: i64,
    /// Its key.
    pub key: Vec<u8>,
    /// Its value (`None`: a tombstone).
    pub value: Option<Vec<u8>>,
}

/// The full log, captured from the simulator after every write.
#[derive(Debug, Default, Clone)]
pub struct LogCapture {
    next: BTreeMap<i32, i64>,
    /// Every record appended, in capture order.
    pub records: Vec<Appended>,
}

impl LogCapture {
    /// Takes every record appended since the last call, partition by partition. Must run right
    /// after each write, before any cleaning: then the new records are all still there, at
    /// consecutive offsets (checked).
    pub fn capture(
        &mut self,
        cluster: &Mutex<MemoryCluster>,
        topic: &str,
        partitions: i32,
    ) -> Vec<Appended> {
        let cluster = lock(cluster);
        let mut new = Vec::new();
        for p in 0..partitions {
            let from = self.next.get(&p).copied().unwrap_or(0);
            let end = cluster.high_watermark(topic, p).expect("partition");
            let fresh: Vec<_> = cluster
                .records(topic, p)
                .expect("partition")
                .into_iter()
                .filter(|r| r.offset >= from)
                .collect();
            let offsets: Vec<i64> = fresh.iter().map(|r| r.offset).collect();
            assert_eq!(
                offsets,
                (from..end).collect::<Vec<_>>(),
                "appended records of {p} are contiguous"
            );
            for r in fresh {
                assert_eq!(r.kind, RecordKind::Plain);
                new.push(Appended {
                    partition: p,
                    offset: r.offset,
                    key: r.key.expect("a keyed record"),
                    value: r.value,
                });
            }
            self.next.insert(p, end);
        }
        self.records.extend(new.iter().cloned());
        new
    }

    /// Every record of each key, in offset order per partition.
    pub fn by_key(&self) -> BTreeMap<&[u8], Vec<&Appended>> {
        let mut out: BTreeMap<&[u8], Vec<&Appended>> = BTreeMap::new();
        for r in &self.records {
            out.entry(r.key.as_slice()).or_default().push(r);
        }
        out
    }
}

/// Produces `records` through `store`, with a duplicate delivery if asked (every record is then
/// appended twice in a row, as a retried send whose first attempt was in fact written).
pub async fn write<M: TopicMachine>(
    store: &mut Store<M, MemoryTransport>,
    transport: &MemoryTransport,
    records: &[ProducerRecord],
    duplicate: bool,
    read_back: bool,
) {
    if duplicate {
        transport.push_produce_fault(ProduceFault::Duplicate);
    }
    store
        .write(records, ProduceMode::Plain, read_back, "Failed to write")
        .await
        .expect("the write succeeds");
}

/// Where a [`Sim`] runs: its topic, and how its reader fetches.
#[derive(Debug, Clone)]
pub struct SimSpec {
    /// The cluster's seed.
    pub seed: u64,
    /// The topic, created compacted.
    pub topic: &'static str,
    /// Which topic it is (the stores' settings).
    pub kind: TopicKind,
    /// Its partitions.
    pub partitions: i32,
    /// Records per segment (smaller: more cleaning).
    pub segment_records: u64,
    /// Records per fetch of the reader.
    pub fetch_size: usize,
    /// The cleaning the reader's transport runs before every fetch.
    pub fetch_fault: FetchFault,
}

/// The seeded synchronous driver of one topic: a writer store, a reader store that starts when
/// asked (over a [`Recording`] transport with the spec's fetch size and fault), the capture of
/// every record appended, and the reader's events. Every call runs to completion on the
/// driver's own current-thread runtime, so a test reads as a sequence of steps.
pub struct Sim<M: TopicMachine> {
    runtime: tokio::runtime::Runtime,
    spec: SimSpec,
    /// The simulated cluster.
    pub cluster: Arc<Mutex<MemoryCluster>>,
    writer_transport: Arc<MemoryTransport>,
    /// The writer's store (started).
    pub writer: Store<M, MemoryTransport>,
    reader_transport: Arc<Recording>,
    /// The reader's store (started by [`start_reader`](Self::start_reader)).
    pub reader: Store<M, Recording>,
    started: bool,
    /// The events the reader delivered.
    pub events: Vec<M::Event>,
    /// Every record appended, captured after each write.
    pub log: LogCapture,
}

impl<M: TopicMachine + Default> Sim<M> {
    /// A cluster holding the spec's topic and a started writer; the reader waits.
    pub fn new(spec: SimSpec) -> Self {
        let runtime = runtime();
        let config =
            TopicConfig::compacted(spec.partitions).with_segment_records(spec.segment_records);
        let cluster = cluster(spec.seed, spec.topic, config);
        let writer_transport = Arc::new(MemoryTransport::new(Arc::clone(&cluster)));
        let mut writer = store(spec.topic, spec.kind, Arc::clone(&writer_transport));
        runtime.block_on(writer.start()).expect("the writer starts");
        let reader_transport = reader_transport(&cluster, spec.fetch_size, spec.fetch_fault);
        let reader = store(spec.topic, spec.kind, Arc::clone(&reader_transport));
        Self {
            runtime,
            spec,
            cluster,
            writer_transport,
            writer,
            reader_transport,
            reader,
            started: false,
            events: Vec::new(),
            log: LogCapture::default(),
        }
    }

    /// Starts the reader (its start-up read to the end); later calls do nothing.
    pub fn start_reader(&mut self) {
        if !self.started {
            self.runtime
                .block_on(self.reader.start())
                .expect("the reader starts");
            self.started = true;
        }
    }

    /// Writes `records` through the writer (each appended twice with `duplicate`, as a retried
    /// send whose first attempt was in fact written; read back with `read_back`) and returns
    /// the records it appended.
    pub fn write(
        &mut self,
        records: &[ProducerRecord],
        duplicate: bool,
        read_back: bool,
    ) -> Vec<Appended> {
        self.runtime.block_on(write(
            &mut self.writer,
            &self.writer_transport,
            records,
            duplicate,
            read_back,
        ));
        self.log
            .capture(&self.cluster, self.spec.topic, self.spec.partitions)
    }

    /// Lets a started reader read to the end, keeping its events.
    pub fn reader_catch_up(&mut self) {
        if self.started {
            let events = self
                .runtime
                .block_on(self.reader.read_to_end())
                .expect("the reader reads");
            self.events.extend(events);
        }
    }

    /// Starts the reader if it has not, and reads to the end.
    pub fn finish_reading(&mut self) {
        self.start_reader();
        self.reader_catch_up();
    }

    /// Rolls the active segment of `partition`.
    pub fn roll(&mut self, partition: i32) {
        lock(&self.cluster)
            .roll_segment(self.spec.topic, partition)
            .expect("roll");
    }

    /// Runs a full cleaning pass over the topic.
    pub fn clean(&mut self) {
        lock(&self.cluster)
            .clean_all(self.spec.topic)
            .expect("clean");
    }

    /// Every record the reader was handed, in order.
    pub fn consumed(&self) -> Vec<OwnedRecord> {
        self.reader_transport.consumed()
    }

    /// A copy of the cluster as it is now.
    pub fn cluster_now(&self) -> MemoryCluster {
        lock(&self.cluster).clone()
    }
}
