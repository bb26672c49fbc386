//! connect-state's core for Python: the extension module `connect_state._native`, re-exported
//! by the package `connect_state` (whose `.pyi` stub documents the API for type checkers).
//!
//! A thin adapter over [`connect_state_ops::embed`], as the transports are over the store: it
//! converts Python values to the core's (bytes, integers, names) and back (JSON text through
//! `json.loads`, records as tuples), and the core's refusals to exceptions. Nothing here decides
//! anything about Connect's topics.
//!
//! Concurrency: each object is used by one thread at a time. PyO3 checks it: a second thread
//! calling an object while another is inside `handle_records` (which releases the GIL) gets a
//! `RuntimeError` ("already borrowed"), never a data race.

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::ops::Range;

use connect_state_ops::embed::history::History as EmbedHistory;
use connect_state_ops::embed::writes::{self, Outgoing, StatusWrite};
use connect_state_ops::embed::{EmbedError, Handled, Machine, TopicKind, CONTRACT_VERSION};
use pyo3::exceptions::{PyException, PyOverflowError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyDict, PyList, PyString, PyTuple, PyType};

pyo3::create_exception!(
    _native,
    ConnectStateError,
    PyException,
    "The base of every error connect-state raises."
);
pyo3::create_exception!(
    _native,
    InvalidRecordError,
    ConnectStateError,
    "A record that cannot be a Kafka record: a negative or too large offset or partition, a key too long. (A record Java skips is not an error: it is counted in diagnostics().)"
);
pyo3::create_exception!(
    _native,
    CheckpointError,
    ConnectStateError,
    "Checkpoint bytes that are corrupt, truncated, of another version or of another topic."
);
pyo3::create_exception!(
    _native,
    WriteRefusedError,
    ConnectStateError,
    "A write Java would refuse: a connector that is not stopped, an offset that is not a map, an unknown state name, an empty session key."
);

fn error(e: EmbedError) -> PyErr {
    match e {
        EmbedError::Record(why) => InvalidRecordError::new_err(why),
        EmbedError::Checkpoint(why) => CheckpointError::new_err(why),
        EmbedError::Write(why) => WriteRefusedError::new_err(why),
    }
}

/// The connect-state binary's allocator, for this module's own allocations (Python's are its own).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// How many records `handle_records` converts before it releases the GIL to apply them: the
/// bound on the copies it holds at once.
const BATCH: usize = 4096;

/// One record's arguments, its bytes borrowed from Python's where they can be.
struct One<'a> {
    key: Option<Cow<'a, [u8]>>,
    value: Option<Cow<'a, [u8]>>,
    numbers: Numbers,
}

/// Where a record of a [`Batch`] is: its key and value as ranges of the batch's bytes.
struct Slot {
    key: Option<Range<usize>>,
    value: Option<Range<usize>>,
    offset: i64,
    partition: i32,
    timestamp: Option<i64>,
}

/// Records copied out of their Python objects to be applied without the GIL: every key and
/// value in one buffer, so a batch costs a few allocations rather than two per record.
#[derive(Default)]
struct Batch {
    bytes: Vec<u8>,
    slots: Vec<Slot>,
}

impl Batch {
    fn clear(&mut self) {
        self.bytes.clear();
        self.slots.clear();
    }

    fn len(&self) -> usize {
        self.slots.len()
    }

    fn copy(&mut self, data: Option<&[u8]>) -> Option<Range<usize>> {
        data.map(|d| {
            let start = self.bytes.len();
            self.bytes.extend_from_slice(d);
            start..self.bytes.len()
        })
    }

    fn push(&mut self, key: Option<&[u8]>, value: Option<&[u8]>, numbers: Numbers) {
        let key = self.copy(key);
        let value = self.copy(value);
        self.slots.push(Slot {
            key,
            value,
            offset: numbers.offset,
            partition: numbers.partition,
            timestamp: numbers.timestamp,
        });
    }

    /// The records, as the machine takes them.
    fn records(&self) -> impl Iterator<Item = (Option<&[u8]>, Option<&[u8]>, &Slot)> {
        self.slots.iter().map(|slot| {
            let at = |range: &Option<Range<usize>>| range.clone().map(|r| &self.bytes[r]);
            (at(&slot.key), at(&slot.value), slot)
        })
    }
}

/// A record's offset, partition and timestamp, checked.
struct Numbers {
    offset: i64,
    partition: i32,
    timestamp: Option<i64>,
}

impl Numbers {
    fn new(
        offset: &Bound<'_, PyAny>,
        partition: Option<&Bound<'_, PyAny>>,
        timestamp: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        Ok(Self {
            offset: int64_arg(offset, "offset")?,
            partition: partition_arg(partition)?,
            timestamp: optional_int_arg(timestamp, "timestamp")?,
        })
    }
}

fn type_name(value: &Bound<'_, PyAny>) -> String {
    value
        .get_type()
        .name()
        .map_or_else(|_| "?".into(), |n| n.to_string())
}

/// `value` as bytes: `bytes` (borrowed) or `bytearray` (copied: Python code may change it),
/// `None` for `None`.
fn bytes_view<'a>(value: &'a Bound<'_, PyAny>, what: &str) -> PyResult<Option<Cow<'a, [u8]>>> {
    if value.is_none() {
        Ok(None)
    } else if let Ok(bytes) = value.cast::<PyBytes>() {
        Ok(Some(Cow::Borrowed(bytes.as_bytes())))
    } else if let Ok(array) = value.cast::<PyByteArray>() {
        Ok(Some(Cow::Owned(array.to_vec())))
    } else {
        Err(PyTypeError::new_err(format!(
            "{what} must be bytes, bytearray or None, not {}",
            type_name(value)
        )))
    }
}

/// A 64-bit integer argument (a Kafka offset or timestamp): a Python integer too large is an
/// [`InvalidRecordError`] naming it, not an `OverflowError` without context.
fn int64_arg(value: &Bound<'_, PyAny>, what: &str) -> PyResult<i64> {
    match value.extract::<i64>() {
        Ok(v) => Ok(v),
        Err(e) if e.is_instance_of::<PyOverflowError>(value.py()) => Err(
            InvalidRecordError::new_err(format!("{what} {value} does not fit a 64-bit integer")),
        ),
        Err(_) => Err(PyTypeError::new_err(format!(
            "{what} must be an int, not {}",
            type_name(value)
        ))),
    }
}

/// A partition argument (`None`: partition 0).
fn partition_arg(value: Option<&Bound<'_, PyAny>>) -> PyResult<i32> {
    let Some(value) = value.filter(|v| !v.is_none()) else {
        return Ok(0);
    };
    let wide = int64_arg(value, "partition")?;
    i32::try_from(wide).map_err(|_| {
        InvalidRecordError::new_err(format!("partition {wide} does not fit a 32-bit integer"))
    })
}

fn optional_int_arg(value: Option<&Bound<'_, PyAny>>, what: &str) -> PyResult<Option<i64>> {
    match value.filter(|v| !v.is_none()) {
        None => Ok(None),
        Some(value) => int64_arg(value, what).map(Some),
    }
}

impl<'a> One<'a> {
    fn new(
        key: &'a Bound<'_, PyAny>,
        value: &'a Bound<'_, PyAny>,
        offset: &Bound<'_, PyAny>,
        partition: Option<&Bound<'_, PyAny>>,
        timestamp: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        Ok(Self {
            key: bytes_view(key, "key")?,
            value: bytes_view(value, "value")?,
            numbers: Numbers::new(offset, partition, timestamp)?,
        })
    }
}

/// Adds an item of `handle_records` to `batch`: a tuple `(key, value, offset[, partition[,
/// timestamp]])`, or a message of a Kafka client (an object with `key()`, `value()`,
/// `offset()`, `partition()` and `timestamp()`, as confluent-kafka's `Message` has; its
/// timestamp is `(type, ms)`, type 0 meaning none).
fn add_item(batch: &mut Batch, item: &Bound<'_, PyAny>) -> PyResult<()> {
    if let Ok(tuple) = item.cast::<PyTuple>() {
        let n = tuple.len();
        if !(3..=5).contains(&n) {
            return Err(PyTypeError::new_err(format!(
                "a record is (key, value, offset[, partition[, timestamp]]), not a tuple of {n}"
            )));
        }
        let optional = |i: usize| (i < n).then(|| tuple.get_borrowed_item(i)).transpose();
        let (key, value) = (tuple.get_borrowed_item(0)?, tuple.get_borrowed_item(1)?);
        let (partition, timestamp) = (optional(3)?, optional(4)?);
        let numbers = Numbers::new(
            &*tuple.get_borrowed_item(2)?,
            partition.as_deref(),
            timestamp.as_deref(),
        )?;
        let (key, value) = (bytes_view(&key, "key")?, bytes_view(&value, "value")?);
        batch.push(key.as_deref(), value.as_deref(), numbers);
        return Ok(());
    }
    if item.hasattr("offset")? && item.hasattr("value")? {
        let timestamp = match item.call_method0("timestamp") {
            Ok(stamp) => match stamp.extract::<(i64, i64)>() {
                Ok((0, _)) => None,
                Ok((_, ms)) => Some(ms),
                Err(_) => optional_int_arg(Some(&stamp), "timestamp")?,
            },
            Err(_) => None,
        };
        let partition = item.call_method0("partition")?;
        let mut numbers = Numbers::new(&item.call_method0("offset")?, Some(&partition), None)?;
        numbers.timestamp = timestamp;
        let (key, value) = (item.call_method0("key")?, item.call_method0("value")?);
        let (key, value) = (bytes_view(&key, "key")?, bytes_view(&value, "value")?);
        batch.push(key.as_deref(), value.as_deref(), numbers);
        return Ok(());
    }
    Err(PyTypeError::new_err(format!(
        "a record is a tuple (key, value, offset[, partition[, timestamp]]) or a Kafka \
         message with key(), value(), offset() and partition(), not {}",
        type_name(item)
    )))
}

/// `json.loads(text)`.
fn loads<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyAny>> {
    py.import("json")?.getattr("loads")?.call1((text,))
}

fn topic_name(topic: TopicKind) -> &'static str {
    topic.name()
}

fn outgoing<'py>(py: Python<'py>, record: Outgoing) -> PyResult<Bound<'py, PyTuple>> {
    let value: Bound<'py, PyAny> = match record.value {
        Some(v) => PyBytes::new(py, &v).into_any(),
        None => py.None().into_bound(py),
    };
    PyTuple::new(
        py,
        [
            PyString::new(py, topic_name(record.topic)).into_any(),
            record.partition.into_pyobject(py)?.into_any(),
            PyBytes::new(py, &record.key).into_any(),
            value,
        ],
    )
}

fn outgoing_list<'py>(py: Python<'py>, records: Vec<Outgoing>) -> PyResult<Bound<'py, PyList>> {
    let tuples = records
        .into_iter()
        .map(|r| outgoing(py, r))
        .collect::<PyResult<Vec<_>>>()?;
    PyList::new(py, tuples)
}

/// Properties from a `dict[str, str | None]`, in the dict's order.
fn properties(dict: &Bound<'_, PyDict>) -> PyResult<Vec<(String, Option<String>)>> {
    dict.iter()
        .map(|(k, v)| {
            let name: String = k.extract().map_err(|_| {
                PyTypeError::new_err(format!("a property name is a str, not {}", type_name(&k)))
            })?;
            let value: Option<String> = v.extract().map_err(|_| {
                PyTypeError::new_err(format!(
                    "property {name:?} must be a str or None, not {}",
                    type_name(&v)
                ))
            })?;
            Ok((name, value))
        })
        .collect()
}

/// The machine of one topic and what every log class shares.
struct Log {
    machine: Machine,
}

impl Log {
    fn handle_record(&mut self, record: One<'_>) -> PyResult<bool> {
        let n = &record.numbers;
        self.machine
            .handle_record(
                record.key.as_deref(),
                record.value.as_deref(),
                n.offset,
                n.partition,
                n.timestamp,
            )
            .map(|handled| handled == Handled::Applied)
            .map_err(error)
    }

    /// Applies the records of `iterable`, a batch at a time without the GIL; returns how many
    /// were applied. An error names the record's position; the records before it stay applied.
    fn handle_records(&mut self, py: Python<'_>, iterable: &Bound<'_, PyAny>) -> PyResult<usize> {
        let mut applied = 0;
        let mut seen = 0usize;
        let mut batch = Batch::default();
        let mut items = iterable.try_iter()?;
        loop {
            batch.clear();
            for item in items.by_ref().take(BATCH) {
                add_item(&mut batch, &item?).map_err(|e| {
                    let why = e.value(py).to_string();
                    let at = format!("record {} of the batch: {why}", seen + batch.len());
                    if e.is_instance_of::<PyTypeError>(py) {
                        PyTypeError::new_err(at)
                    } else {
                        InvalidRecordError::new_err(at)
                    }
                })?;
            }
            if batch.len() == 0 {
                return Ok(applied);
            }
            let machine = &mut self.machine;
            let records = &batch;
            let result = py.detach(move || {
                let mut done = 0usize;
                for (i, (key, value, r)) in records.records().enumerate() {
                    match machine.handle_record(key, value, r.offset, r.partition, r.timestamp) {
                        Ok(Handled::Applied) => done += 1,
                        Ok(Handled::Skipped(_)) => {}
                        Err(e) => return Err((i, e)),
                    }
                }
                Ok(done)
            });
            match result {
                Ok(done) => applied += done,
                Err((i, e)) => {
                    return Err(InvalidRecordError::new_err(format!(
                        "record {} of the batch: {e}",
                        seen + i
                    )));
                }
            }
            seen += batch.len();
        }
    }

    fn poll_events<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let list = PyList::empty(py);
        while let Some(event) = self.machine.poll_event_json() {
            list.append(loads(py, &event)?)?;
        }
        Ok(list)
    }
}

/// Declares a log class over [`Log`]: the methods every topic's log has.
macro_rules! log_class {
    ($name:ident, $topic:expr, $doc:literal, { $($methods:tt)* }) => {
        #[doc = $doc]
        #[pyclass(module = "connect_state._native")]
        pub struct $name {
            log: Log,
        }

        #[pymethods]
        impl $name {
            /// A log at the start of the topic, reading its start-up catch-up (no events until
            /// `mark_caught_up()`).
            #[new]
            fn new() -> Self {
                Self {
                    log: Log {
                        machine: Machine::new($topic),
                    },
                }
            }

            /// Applies one record (`value=None` is a tombstone, `key=None` a record without
            /// key). Returns whether it was applied; a record Java skips returns False and is
            /// counted in `diagnostics()`. Drain `poll_events()` afterwards.
            #[pyo3(signature = (key, value, offset, partition = None, timestamp = None))]
            fn handle_record(
                &mut self,
                key: &Bound<'_, PyAny>,
                value: &Bound<'_, PyAny>,
                offset: &Bound<'_, PyAny>,
                partition: Option<&Bound<'_, PyAny>>,
                timestamp: Option<&Bound<'_, PyAny>>,
            ) -> PyResult<bool> {
                let record = One::new(key, value, offset, partition, timestamp)?;
                self.log.handle_record(record)
            }

            /// Applies every record of `records` (tuples `(key, value, offset[, partition[,
            /// timestamp]])` or a Kafka client's messages), crossing into the core once per
            /// batch of 4096 with the GIL released. Returns how many were applied. The events
            /// of all of them wait for `poll_events()`.
            fn handle_records(
                &mut self,
                py: Python<'_>,
                records: &Bound<'_, PyAny>,
            ) -> PyResult<usize> {
                self.log.handle_records(py, records)
            }

            /// Ends the start-up read: from now on records produce events.
            fn mark_caught_up(&mut self) {
                self.log.machine.mark_caught_up();
            }

            /// Whether `mark_caught_up()` was called.
            #[getter]
            fn caught_up(&self) -> bool {
                self.log.machine.is_caught_up()
            }

            /// Every event waiting, oldest first, each a dict in the JSON contract
            /// (`{"type": ..., ...}`); the queue is then empty.
            fn poll_events<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
                self.log.poll_events(py)
            }

            /// The state as a dict: `json.loads` of what `connect-state replay --format json`
            /// prints for the same records.
            fn snapshot<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
                loads(py, &self.log.machine.snapshot_json())
            }

            /// The state as the JSON text of the contract, every number as written.
            fn snapshot_json(&self) -> String {
                self.log.machine.snapshot_json()
            }

            /// What Java does not keep, as a dict: `{"skipped": {reason: count}, ...}` and the
            /// topic's findings.
            fn diagnostics<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
                loads(py, &self.log.machine.diagnostics_json())
            }

            /// The whole log as bytes for `restore` (versioned and checksummed; the bytes
            /// `replay --save-checkpoint` writes and `--from-checkpoint` reads). Drain
            /// `poll_events()` first: pending events are not included.
            fn checkpoint<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
                PyBytes::new(py, &self.log.machine.checkpoint())
            }

            /// A log from `checkpoint()` bytes, not caught up (read the tail, then
            /// `mark_caught_up()`). Raises CheckpointError for corrupt, truncated or foreign
            /// bytes.
            #[classmethod]
            fn restore(_cls: &Bound<'_, PyType>, data: &Bound<'_, PyAny>) -> PyResult<Self> {
                let bytes = bytes_view(data, "a checkpoint")?.unwrap_or_default();
                let machine = Machine::restore($topic, &bytes).map_err(error)?;
                Ok(Self {
                    log: Log { machine },
                })
            }

            fn __repr__(&self) -> String {
                format!(
                    "<{} caught_up={}>",
                    stringify!($name),
                    if self.log.machine.is_caught_up() { "True" } else { "False" }
                )
            }

            $($methods)*
        }
    };
}

log_class!(
    ConfigLog,
    TopicKind::Config,
    "The config topic's state, as Java's KafkaConfigBackingStore holds it. Its static methods build the records Java's writers produce (the config topic has one partition: each is placed on partition 0).",
    {
        /// `putConnectorConfig`: the records for a connector's config (and target state, when
        /// given: "STARTED", "PAUSED" or "STOPPED").
        #[staticmethod]
        #[pyo3(signature = (connector, properties, target_state = None))]
        fn put_connector_config<'py>(
            py: Python<'py>,
            connector: &str,
            properties: &Bound<'py, PyDict>,
            target_state: Option<&str>,
        ) -> PyResult<Bound<'py, PyList>> {
            let props = self::properties(properties)?;
            let records =
                writes::put_connector_config(connector, &props, target_state).map_err(error)?;
            outgoing_list(py, records)
        }

        /// `removeConnectorConfig`: the tombstones of a connector's config and target state.
        #[staticmethod]
        fn remove_connector_config<'py>(
            py: Python<'py>,
            connector: &str,
        ) -> PyResult<Bound<'py, PyList>> {
            outgoing_list(py, writes::remove_connector_config(connector))
        }

        /// `putTaskConfigs`: task `i` gets `tasks[i]`, then the commit record.
        #[staticmethod]
        fn put_task_configs<'py>(
            py: Python<'py>,
            connector: &str,
            tasks: &Bound<'py, PyAny>,
        ) -> PyResult<Bound<'py, PyList>> {
            let configs = tasks
                .try_iter()?
                .map(|task| {
                    let task = task?;
                    let dict = task.cast::<PyDict>().map_err(|_| {
                        PyTypeError::new_err(format!(
                            "a task config is a dict, not {}",
                            type_name(&task)
                        ))
                    })?;
                    properties(dict)
                })
                .collect::<PyResult<Vec<_>>>()?;
            outgoing_list(py, writes::put_task_configs(connector, &configs))
        }

        /// `putTargetState`: "STARTED", "PAUSED" or "STOPPED".
        #[staticmethod]
        fn put_target_state<'py>(
            py: Python<'py>,
            connector: &str,
            state: &str,
        ) -> PyResult<Bound<'py, PyList>> {
            outgoing_list(py, writes::put_target_state(connector, state).map_err(error)?)
        }

        /// `putTaskCountRecord`: the task count exactly-once source support fences with.
        #[staticmethod]
        fn put_task_count_record<'py>(
            py: Python<'py>,
            connector: &str,
            task_count: i32,
        ) -> PyResult<Bound<'py, PyList>> {
            outgoing_list(py, writes::put_task_count_record(connector, task_count))
        }

        /// `putSessionKey`: the key's bytes, its algorithm (e.g. "HmacSHA256") and its creation
        /// time in ms since the epoch. An empty key is refused.
        #[staticmethod]
        fn put_session_key<'py>(
            py: Python<'py>,
            key: &Bound<'py, PyAny>,
            algorithm: &str,
            creation_timestamp: i64,
        ) -> PyResult<Bound<'py, PyList>> {
            let key = bytes_view(key, "key")?.unwrap_or_default();
            let records =
                writes::put_session_key(&key, algorithm, creation_timestamp).map_err(error)?;
            outgoing_list(py, records)
        }

        /// `putRestartRequest`.
        #[staticmethod]
        #[pyo3(signature = (connector, only_failed = false, include_tasks = false))]
        fn put_restart_request<'py>(
            py: Python<'py>,
            connector: &str,
            only_failed: bool,
            include_tasks: bool,
        ) -> PyResult<Bound<'py, PyList>> {
            outgoing_list(
                py,
                writes::put_restart_request(connector, only_failed, include_tasks),
            )
        }

        /// `putLoggerLevel` (KIP-976).
        #[staticmethod]
        fn put_logger_level<'py>(
            py: Python<'py>,
            namespace: &str,
            level: &str,
        ) -> PyResult<Bound<'py, PyList>> {
            outgoing_list(py, writes::put_logger_level(namespace, level))
        }
    }
);
log_class!(
    StatusLog,
    TopicKind::Status,
    "The status topic's state, as Java's KafkaStatusBackingStore holds it (KIP-558 topics included); put() and put_safe() build Java's status writes.",
    {
        /// Java's `put`: the record for a connector's (`task=None`) or task's status on a status
        /// topic of `partitions` partitions ("DESTROYED" is a tombstone). The status is cached only
        /// when the record is read back.
        #[pyo3(signature = (connector, state, worker_id, generation, *, partitions, task = None, trace = None, version = None))]
        #[allow(clippy::too_many_arguments)]
        fn put<'py>(
            &mut self,
            py: Python<'py>,
            connector: &str,
            state: &str,
            worker_id: &str,
            generation: i32,
            partitions: i32,
            task: Option<i32>,
            trace: Option<&str>,
            version: Option<&str>,
        ) -> PyResult<Bound<'py, PyTuple>> {
            let record = self.put_any(
                py, false, connector, state, worker_id, generation, task, trace, version, partitions,
            )?;
            record.ok_or_else(|| ConnectStateError::new_err("put always writes"))
        }

        /// Java's `putSafe`: as `put`, but None when another worker's status of a newer
        /// generation is cached (Java drops the write silently).
        #[pyo3(signature = (connector, state, worker_id, generation, *, partitions, task = None, trace = None, version = None))]
        #[allow(clippy::too_many_arguments)]
        fn put_safe<'py>(
            &mut self,
            py: Python<'py>,
            connector: &str,
            state: &str,
            worker_id: &str,
            generation: i32,
            partitions: i32,
            task: Option<i32>,
            trace: Option<&str>,
            version: Option<&str>,
        ) -> PyResult<Option<Bound<'py, PyTuple>>> {
            self.put_any(
                py, true, connector, state, worker_id, generation, task, trace, version, partitions,
            )
        }

        /// Java's `put(TopicStatus)`: a connector's active topic (KIP-558).
        #[pyo3(signature = (topic, connector, task, discover_timestamp, *, partitions))]
        fn put_topic<'py>(
            &self,
            py: Python<'py>,
            topic: &str,
            connector: &str,
            task: i32,
            discover_timestamp: i64,
            partitions: i32,
        ) -> PyResult<Bound<'py, PyTuple>> {
            let record =
                writes::put_topic_status(topic, connector, task, discover_timestamp, partitions)
                    .map_err(error)?;
            outgoing(py, record)
        }

        /// Java's `deleteTopic(connector, topic)`: the topic status's tombstone.
        #[pyo3(signature = (connector, topic, *, partitions))]
        fn delete_topic<'py>(
            &self,
            py: Python<'py>,
            connector: &str,
            topic: &str,
            partitions: i32,
        ) -> PyResult<Bound<'py, PyTuple>> {
            let record = writes::delete_topic_status(connector, topic, partitions).map_err(error)?;
            outgoing(py, record)
        }
    }
);
log_class!(
    OffsetLog,
    TopicKind::Offsets,
    "The offsets topic's state, as Java's KafkaOffsetBackingStore and the KIP-875 listing hold it; reset_offsets() and alter_offsets() build Java's KIP-875 writes.",
    {
        /// `DELETE /connectors/{connector}/offsets` on an offsets topic of `partitions`
        /// partitions: Java's precondition (in `config`, the connector exists and is stopped with
        /// no tasks; WriteRefusedError otherwise), then a tombstone for each of its partitions, on
        /// the partition where its key lives. Empty when it has no offsets.
        #[pyo3(signature = (config, connector, *, partitions))]
        fn reset_offsets<'py>(
            &self,
            py: Python<'py>,
            config: PyRef<'py, ConfigLog>,
            connector: &str,
            partitions: i32,
        ) -> PyResult<Bound<'py, PyList>> {
            let (offsets, config) = self.logs(&config)?;
            let records =
                writes::reset_offsets(offsets, config, connector, partitions).map_err(error)?;
            outgoing_list(py, records)
        }

        /// `PATCH /connectors/{connector}/offsets`: `offsets` is the request's list
        /// (`[{"partition": {...}, "offset": {...} or None}]`) or the request body as JSON text
        /// (every number exactly as written). Java's precondition and validation, then the
        /// records in Java's normalised form.
        #[pyo3(signature = (config, connector, offsets, *, partitions))]
        fn alter_offsets<'py>(
            &self,
            py: Python<'py>,
            config: PyRef<'py, ConfigLog>,
            connector: &str,
            offsets: &Bound<'py, PyAny>,
            partitions: i32,
        ) -> PyResult<Bound<'py, PyList>> {
            let body: String = if offsets.is_instance_of::<PyString>() {
                offsets.extract()?
            } else {
                let request = PyDict::new(py);
                request.set_item("offsets", offsets)?;
                py.import("json")?
                    .getattr("dumps")?
                    .call1((request,))?
                    .extract()?
            };
            let (offsets, config) = self.logs(&config)?;
            let records =
                writes::alter_offsets(offsets, config, connector, &body, partitions).map_err(error)?;
            outgoing_list(py, records)
        }
    }
);

impl StatusLog {
    #[allow(clippy::too_many_arguments)]
    fn put_any<'py>(
        &mut self,
        py: Python<'py>,
        safe: bool,
        connector: &str,
        state: &str,
        worker_id: &str,
        generation: i32,
        task: Option<i32>,
        trace: Option<&str>,
        version: Option<&str>,
        partitions: i32,
    ) -> PyResult<Option<Bound<'py, PyTuple>>> {
        let write = StatusWrite {
            connector,
            task,
            state,
            trace,
            worker_id,
            generation,
            version,
        };
        let Some(log) = self.log.machine.as_status_mut() else {
            return Err(ConnectStateError::new_err("not a status log"));
        };
        writes::put_status(log, &write, safe, partitions)
            .map_err(error)?
            .map(|record| outgoing(py, record))
            .transpose()
    }
}

impl OffsetLog {
    fn logs<'a>(
        &'a self,
        config: &'a ConfigLog,
    ) -> PyResult<(
        &'a engine::offsets::OffsetLog,
        &'a engine::config::ConfigLog,
    )> {
        match (
            self.log.machine.as_offsets(),
            config.log.machine.as_config(),
        ) {
            (Some(offsets), Some(config)) => Ok((offsets, config)),
            _ => Err(ConnectStateError::new_err(
                "not an offsets log and a config log",
            )),
        }
    }
}

/// The history of the three topics, one record at a time: what `connect-state history
/// --format json` tells, for records the caller reads and merges itself.
#[pyclass(module = "connect_state._native")]
pub struct History {
    history: Option<EmbedHistory>,
}

fn topic_arg(name: &str) -> PyResult<TopicKind> {
    match name {
        "config" => Ok(TopicKind::Config),
        "status" => Ok(TopicKind::Status),
        "offsets" => Ok(TopicKind::Offsets),
        other => Err(pyo3::exceptions::PyValueError::new_err(format!(
            "{other:?} is not a topic: \"config\", \"status\" or \"offsets\""
        ))),
    }
}

impl History {
    fn open(&mut self) -> PyResult<&mut EmbedHistory> {
        self.history
            .as_mut()
            .ok_or_else(|| ConnectStateError::new_err("this history is finished"))
    }

    fn entries<'py>(py: Python<'py>, entries: Vec<String>) -> PyResult<Bound<'py, PyList>> {
        let list = PyList::empty(py);
        for entry in entries {
            list.append(loads(py, &entry)?)?;
        }
        Ok(list)
    }
}

#[pymethods]
impl History {
    /// A history at the start of the topics: entries of `connectors` only (empty: every
    /// entry, cluster-wide ones too); config values whose names look secret are masked as
    /// "[hidden]" unless `show_secrets`.
    #[new]
    #[pyo3(signature = (connectors = Vec::new(), show_secrets = false))]
    fn new(connectors: Vec<String>, show_secrets: bool) -> Self {
        let connectors: BTreeSet<String> = connectors.into_iter().collect();
        Self {
            history: Some(EmbedHistory::new(connectors, show_secrets)),
        }
    }

    /// Applies one record of `topic` ("config", "status" or "offsets") and returns the entries
    /// it completes (dicts of `history --format json`'s entries). Offsets records gather into
    /// runs, told at the connector's next entry of another kind or by `finish()`.
    #[pyo3(signature = (topic, key, value, offset, partition = None, timestamp = None))]
    #[allow(clippy::too_many_arguments)]
    fn handle_record<'py>(
        &mut self,
        py: Python<'py>,
        topic: &str,
        key: &Bound<'py, PyAny>,
        value: &Bound<'py, PyAny>,
        offset: &Bound<'py, PyAny>,
        partition: Option<&Bound<'py, PyAny>>,
        timestamp: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyList>> {
        let topic = topic_arg(topic)?;
        let r = One::new(key, value, offset, partition, timestamp)?;
        let n = &r.numbers;
        let entries = self
            .open()?
            .handle_record(
                topic,
                r.key.as_deref(),
                r.value.as_deref(),
                n.offset,
                n.partition,
                n.timestamp,
            )
            .map_err(error)?;
        Self::entries(py, entries)
    }

    /// Applies every record of `records` (as `ConfigLog.handle_records` takes them), all of
    /// `topic`, and returns the entries they complete.
    fn handle_records<'py>(
        &mut self,
        py: Python<'py>,
        topic: &str,
        records: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        let topic = topic_arg(topic)?;
        let mut entries = Vec::new();
        let mut one = Batch::default();
        for (i, item) in records.try_iter()?.enumerate() {
            one.clear();
            add_item(&mut one, &item?)?;
            for (key, value, r) in one.records() {
                let told = self
                    .open()?
                    .handle_record(topic, key, value, r.offset, r.partition, r.timestamp)
                    .map_err(|e| InvalidRecordError::new_err(format!("record {i}: {e}")))?;
                entries.extend(told);
            }
        }
        Self::entries(py, entries)
    }

    /// Ends the history: `{"entries": [the runs still open], "compacted": [...], "records": N,
    /// "skipped": N}`, the rest of `history --format json`'s document. The history cannot be
    /// used afterwards.
    fn finish<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let history = self
            .history
            .take()
            .ok_or_else(|| ConnectStateError::new_err("this history is finished"))?;
        loads(py, &history.finish())
    }
}

/// connect-state's core: Kafka Connect's internal topics read and written as Java does.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_class::<ConfigLog>()?;
    m.add_class::<StatusLog>()?;
    m.add_class::<OffsetLog>()?;
    m.add_class::<History>()?;
    m.add("ConnectStateError", py.get_type::<ConnectStateError>())?;
    m.add("InvalidRecordError", py.get_type::<InvalidRecordError>())?;
    m.add("CheckpointError", py.get_type::<CheckpointError>())?;
    m.add("WriteRefusedError", py.get_type::<WriteRefusedError>())?;
    m.add("CONTRACT_VERSION", CONTRACT_VERSION)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
