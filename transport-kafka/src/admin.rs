//! The admin clients, one per distinct client settings, shared by every transport of the
//! process and never dropped.
//!
//! rdkafka's `AdminClient` takes its results from librdkafka on a thread of its own, which
//! polls in 100 ms slices and stops only when a slice ends with nothing: dropping the client
//! waits until 100 ms after its last answer. A transport that owned one took that long to drop
//! however short its reads were (an `inspect` of a default-scale config topic: its state ready
//! after about 45 ms, the command done after about 105). A shared client is created once per
//! settings and stays, idle between calls, until the process ends; the number alive is the
//! number of distinct settings used, not of transports.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

use rdkafka::admin::AdminClient;
use rdkafka::error::KafkaError;

use crate::context::Context;
use crate::settings::KafkaSettings;

/// What an admin client is created from: the bootstrap servers and the pass-through
/// properties ([`KafkaSettings::client_config`]).
type Key = (String, BTreeMap<String, String>);

/// The admin clients created so far.
static SHARED: Mutex<Vec<(Key, Arc<AdminClient<Context>>)>> = Mutex::new(Vec::new());

/// The admin client for `settings`' client configuration, created on first use. Its context
/// is its own: librdkafka's reports about it reach no transport's context (each transport's
/// consumer reports the same broker's failures to its own).
pub(crate) fn shared(settings: &KafkaSettings) -> Result<Arc<AdminClient<Context>>, KafkaError> {
    let key = (
        settings.bootstrap_servers.clone(),
        settings.properties.clone(),
    );
    let mut shared = SHARED.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some((_, admin)) = shared.iter().find(|(k, _)| *k == key) {
        return Ok(Arc::clone(admin));
    }
    let admin: Arc<AdminClient<Context>> = Arc::new(
        settings
            .client_config()
            .create_with_context(Context::new(settings))?,
    );
    shared.push((key, Arc::clone(&admin)));
    Ok(admin)
}
