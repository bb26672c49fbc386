//! Write plans: what a writer produces and reads back, as steps a store runs in order under
//! one time budget. Every write side of the core returns one (the config topic's methods, the
//! status and offsets writes), so a store has one `execute` and one timeout path.

use alloc::borrow::Cow;
use alloc::vec;
use alloc::vec::Vec;

use crate::record::ProducerRecord;

/// Java's `READ_WRITE_TOTAL_TIMEOUT_MS`: one budget shared by every step of a plan.
pub const WRITE_TIMEOUT_MS: u64 = 30_000;

/// Which producer sends a batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProducerKind {
    /// The leader's privileged producer: with exactly-once source support (`preparing` or
    /// `enabled`) the whole batch is one transaction of the fencable producer, and any failure
    /// drops write privileges; otherwise the log's shared producer.
    Privileged,
    /// The log's ordinary producer, even in fencable mode; any worker may use it.
    Ordinary,
}

/// What a step does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StepAction {
    /// Produce the records as one batch, waiting for every acknowledgement (or the
    /// transaction's commit) in order.
    Produce {
        /// The producer to use.
        producer: ProducerKind,
        /// The records, in order.
        records: Vec<ProducerRecord>,
    },
    /// Read the topic to the end offsets sampled now, applying every record (and delivering its
    /// events) before going on.
    ReadToEnd,
}

/// One step of a plan and Java's message for its failure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteStep {
    /// What to do.
    pub action: StepAction,
    /// Java's `ConnectException` message if the step fails or the budget runs out.
    pub error_message: Cow<'static, str>,
}

/// The steps of one Java write method, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WritePlan {
    /// The steps.
    pub steps: Vec<WriteStep>,
}

impl WritePlan {
    /// Every record the plan produces, in order.
    pub fn records(&self) -> impl Iterator<Item = &ProducerRecord> + '_ {
        self.steps.iter().flat_map(|step| match &step.action {
            StepAction::Produce { records, .. } => records.as_slice(),
            StepAction::ReadToEnd => &[],
        })
    }
}

pub(crate) fn produce(
    producer: ProducerKind,
    records: Vec<ProducerRecord>,
    error: impl Into<Cow<'static, str>>,
) -> WriteStep {
    WriteStep {
        action: StepAction::Produce { producer, records },
        error_message: error.into(),
    }
}

pub(crate) fn read_to_end(error: impl Into<Cow<'static, str>>) -> WriteStep {
    WriteStep {
        action: StepAction::ReadToEnd,
        error_message: error.into(),
    }
}

impl WritePlan {
    /// One batch from `producer`, then (with `read_back`) a read to the end: the shape of a
    /// status or offsets write. `error` is the message a failure reports.
    pub fn batch(
        producer: ProducerKind,
        records: Vec<ProducerRecord>,
        read_back: bool,
        error: impl Into<Cow<'static, str>>,
    ) -> Self {
        let error = error.into();
        let mut steps = vec![produce(producer, records, error.clone())];
        if read_back {
            steps.push(read_to_end(error));
        }
        Self { steps }
    }

    /// [`batch`](Self::batch) from the log's ordinary producer.
    pub fn single(
        records: Vec<ProducerRecord>,
        read_back: bool,
        error: impl Into<Cow<'static, str>>,
    ) -> Self {
        Self::batch(ProducerKind::Ordinary, records, read_back, error)
    }
}
