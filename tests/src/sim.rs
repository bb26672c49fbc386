//! The plumbing every simulator test shares: a current-thread runtime to drive the async
//! stores synchronously, seeded clusters, stores over any machine, the cluster lock.

use std::sync::{Arc, Mutex, MutexGuard};

use connect_state_memory::{MemoryCluster, TopicConfig};
use connect_state_store::{Store, StoreSettings, TopicRole, Transport};
use engine::TopicMachine;

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
    role: TopicRole,
    transport: Arc<T>,
) -> Store<M, T> {
    Store::new(StoreSettings::new(topic, role), transport, M::default())
}

/// The locked cluster.
pub fn lock(cluster: &Mutex<MemoryCluster>) -> MutexGuard<'_, MemoryCluster> {
    cluster.lock().expect("the cluster lock")
}
