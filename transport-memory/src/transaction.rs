//! Transactional producers: one producer id per transactional id, an epoch bumped by every
//! `init_transactions`, and at most one open transaction per producer.

use std::collections::{BTreeMap, BTreeSet};

use crate::error::LogError;

/// A transactional producer as [`crate::MemoryCluster::init_transactions`] issued it. The
/// handle is only valid while its epoch is the newest of its transactional id; after a later
/// `init_transactions` of the same id every call with it fails with [`LogError::Fenced`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ProducerHandle {
    producer_id: u64,
    epoch: u32,
}

impl ProducerHandle {
    /// The producer id, the same for every epoch of one transactional id.
    pub fn producer_id(&self) -> u64 {
        self.producer_id
    }

    /// The epoch: 0 for the first `init_transactions` of a transactional id, one more for each
    /// later one.
    pub fn epoch(&self) -> u32 {
        self.epoch
    }
}

/// An open transaction: its id and every partition it wrote to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct OpenTxn {
    pub(crate) id: u64,
    pub(crate) partitions: BTreeSet<(String, i32)>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct ProducerState {
    transactional_id: String,
    epoch: u32,
    open: Option<OpenTxn>,
}

/// Every transactional producer the cluster issued.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Producers {
    ids: BTreeMap<String, u64>,
    states: BTreeMap<u64, ProducerState>,
    next_txn: u64,
}

impl Producers {
    /// Issues the newest handle of `transactional_id`, fencing older ones. Returns the fenced
    /// epoch's open transaction, which the caller must abort.
    pub(crate) fn init(&mut self, transactional_id: &str) -> (ProducerHandle, Option<OpenTxn>) {
        if let Some(&producer_id) = self.ids.get(transactional_id) {
            // Every issued id has a state: both maps are only ever filled together below.
            let state = self
                .states
                .get_mut(&producer_id)
                .expect("every producer id has a state");
            state.epoch = state.epoch.saturating_add(1);
            let handle = ProducerHandle {
                producer_id,
                epoch: state.epoch,
            };
            return (handle, state.open.take());
        }
        let producer_id = u64::try_from(self.ids.len()).unwrap_or(u64::MAX);
        self.ids.insert(transactional_id.to_owned(), producer_id);
        self.states.insert(
            producer_id,
            ProducerState {
                transactional_id: transactional_id.to_owned(),
                epoch: 0,
                open: None,
            },
        );
        let handle = ProducerHandle {
            producer_id,
            epoch: 0,
        };
        (handle, None)
    }

    fn state(&self, handle: ProducerHandle) -> Result<&ProducerState, LogError> {
        let state = self.states.get(&handle.producer_id).ok_or_else(|| {
            LogError::InvalidTransactionState {
                reason: format!("unknown producer id {}", handle.producer_id),
            }
        })?;
        if state.epoch != handle.epoch {
            return Err(LogError::Fenced {
                transactional_id: state.transactional_id.clone(),
            });
        }
        Ok(state)
    }

    fn state_mut(&mut self, handle: ProducerHandle) -> Result<&mut ProducerState, LogError> {
        self.state(handle)?;
        // `state` just found this producer id.
        Ok(self
            .states
            .get_mut(&handle.producer_id)
            .expect("checked by state()"))
    }

    /// Opens a transaction.
    pub(crate) fn begin(&mut self, handle: ProducerHandle) -> Result<(), LogError> {
        let id = self.next_txn;
        let state = self.state_mut(handle)?;
        if state.open.is_some() {
            return Err(LogError::InvalidTransactionState {
                reason: "a transaction is already open".to_owned(),
            });
        }
        state.open = Some(OpenTxn {
            id,
            partitions: BTreeSet::new(),
        });
        self.next_txn += 1;
        Ok(())
    }

    /// The id of the producer's open transaction.
    pub(crate) fn open_txn(&self, handle: ProducerHandle) -> Result<u64, LogError> {
        self.state(handle)?
            .open
            .as_ref()
            .map(|t| t.id)
            .ok_or_else(no_open_txn)
    }

    /// Records that the open transaction wrote to `partition` of `topic`.
    pub(crate) fn touch(
        &mut self,
        handle: ProducerHandle,
        topic: &str,
        partition: i32,
    ) -> Result<(), LogError> {
        let open = self
            .state_mut(handle)?
            .open
            .as_mut()
            .ok_or_else(no_open_txn)?;
        open.partitions.insert((topic.to_owned(), partition));
        Ok(())
    }

    /// Closes the producer's open transaction and returns it for the caller to write markers.
    pub(crate) fn finish(&mut self, handle: ProducerHandle) -> Result<OpenTxn, LogError> {
        self.state_mut(handle)?.open.take().ok_or_else(no_open_txn)
    }
}

fn no_open_txn() -> LogError {
    LogError::InvalidTransactionState {
        reason: "no transaction is open (call begin_transaction first)".to_owned(),
    }
}
