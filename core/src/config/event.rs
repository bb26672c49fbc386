//! Events of the config topic: the equivalents of Java's `ConfigBackingStore.UpdateListener`.

use alloc::string::String;
use alloc::vec::Vec;

use super::types::{SessionKey, TargetState};

/// One listener callback, fired under exactly Java's conditions (spec §4) and never before
/// [`ConfigLog::mark_caught_up`](super::ConfigLog::mark_caught_up).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConfigEvent {
    /// `onConnectorConfigUpdate`: a valid connector config was read (even an identical one).
    ConnectorConfigUpdated {
        /// The connector.
        connector: String,
    },
    /// `onConnectorConfigRemove`: a connector tombstone (or empty / `null` value) was read.
    ConnectorConfigRemoved {
        /// The connector.
        connector: String,
    },
    /// `onTaskConfigUpdate`: a commit was read for a connector that has a config. `tasks` are the
    /// task numbers the commit applied, ascending; empty for an inconsistent commit.
    TaskConfigsUpdated {
        /// The connector.
        connector: String,
        /// The applied task numbers, ascending.
        tasks: Vec<i32>,
    },
    /// `onConnectorTargetStateChange`: an existing connector's target state changed.
    TargetStateChanged {
        /// The connector.
        connector: String,
        /// Its new state.
        state: TargetState,
    },
    /// `onSessionKeyUpdate`: a valid session key was read.
    SessionKeyUpdated {
        /// The new key.
        key: SessionKey,
    },
    /// `onRestartRequest`: a restart request was read (no existence check, as in Java).
    RestartRequested {
        /// The connector.
        connector: String,
        /// Restart only failed instances.
        only_failed: bool,
        /// Restart the tasks too.
        include_tasks: bool,
    },
    /// `onLoggingLevelUpdate`: a cluster-wide logger level was read (KIP-976).
    LoggerLevelUpdated {
        /// The logger namespace.
        namespace: String,
        /// The level, not validated (as in Java).
        level: String,
    },
}
