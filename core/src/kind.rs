//! [`TopicKind`]: which of Connect's three internal topics, the one vocabulary every crate of
//! the workspace uses for it (checkpoints name it, stores derive their settings from it, the
//! CLI parses it, history tells it).

use core::fmt;

/// One of Kafka Connect's internal topics. Ordered as ties between topics are told (config,
/// status, offsets).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TopicKind {
    /// The config topic (`config.storage.topic`).
    Config,
    /// The status topic (`status.storage.topic`).
    Status,
    /// The offsets topic (`offset.storage.topic`).
    Offsets,
}

impl TopicKind {
    /// The three, in order.
    pub const ALL: [Self; 3] = [Self::Config, Self::Status, Self::Offsets];

    /// `config`, `status` or `offsets`: the name in the CLI, the JSON contract and the Java
    /// oracle's protocol.
    pub fn name(self) -> &'static str {
        match self {
            Self::Config => "config",
            Self::Status => "status",
            Self::Offsets => "offsets",
        }
    }

    /// The kind named `name` ([`name`](Self::name)'s inverse).
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|kind| kind.name() == name)
    }
}

impl fmt::Display for TopicKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_in_order() {
        for kind in TopicKind::ALL {
            assert_eq!(TopicKind::from_name(kind.name()), Some(kind));
        }
        assert_eq!(TopicKind::from_name("Config"), None);
        assert!(TopicKind::Config < TopicKind::Status && TopicKind::Status < TopicKind::Offsets);
    }
}
