//! Client settings: bootstrap servers plus any librdkafka property, with secrets kept out of
//! `Debug` output and logs.

use connect_state_store::is_secret;
use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use rdkafka::error::KafkaError;
use rdkafka::types::RDKafkaConfRes;
use rdkafka::ClientConfig;

/// How the Kafka transport connects and reads.
#[derive(Clone)]
pub struct KafkaSettings {
    /// `bootstrap.servers`.
    pub bootstrap_servers: String,
    /// Any other librdkafka property (`security.protocol`, `sasl.*`, `ssl.*`, ...), passed
    /// through to every client.
    pub properties: BTreeMap<String, String>,
    /// Read with `isolation.level=read_committed` (Java forces it when exactly-once source
    /// support is `enabled`).
    pub read_committed: bool,
    /// The transactional id of the leader's fenced producer (Java:
    /// `connect-cluster-<group.id>`); `None` when writes are not transactional.
    pub transactional_id: Option<String>,
    /// The most one broker call (metadata, a fetch, a delivery) may take before it is an error.
    pub request_timeout: Duration,
}

/// The longest [`KafkaSettings::request_timeout`]: `i32::MAX` milliseconds (24.8 days).
pub const MAX_REQUEST_TIMEOUT: Duration = Duration::from_millis(i32::MAX as u64);

impl KafkaSettings {
    /// Settings for `bootstrap_servers` with no extra properties.
    pub fn new(bootstrap_servers: impl Into<String>) -> Self {
        Self {
            bootstrap_servers: bootstrap_servers.into(),
            properties: BTreeMap::new(),
            read_committed: false,
            transactional_id: None,
            request_timeout: Duration::from_secs(30),
        }
    }

    /// Java's settings for a worker with `exactly.once.source.support=enabled` in the Connect
    /// cluster `group_id`: reads are `read_committed`, and the leader's fenced writes use the
    /// transactional id `connect-cluster-<group.id>`.
    #[must_use]
    pub fn with_exactly_once(mut self, group_id: &str) -> Self {
        self.read_committed = true;
        self.transactional_id = Some(format!("connect-cluster-{group_id}"));
        self
    }

    /// Adds a librdkafka property.
    #[must_use]
    pub fn with_property(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.properties.insert(key.into(), value.into());
        self
    }

    /// Refuses settings librdkafka cannot take: a [`request_timeout`](Self::request_timeout)
    /// of zero or above [`MAX_REQUEST_TIMEOUT`] (librdkafka takes milliseconds as a 32-bit
    /// integer, so a longer one would wrap around to a short or negative timeout). Every
    /// client this crate creates is checked first.
    pub fn validate(&self) -> Result<(), KafkaError> {
        let timeout = self.request_timeout;
        if timeout.is_zero() || timeout > MAX_REQUEST_TIMEOUT {
            return Err(KafkaError::ClientConfig(
                RDKafkaConfRes::RD_KAFKA_CONF_INVALID,
                format!(
                    "the request timeout must be between 1 ms and {} ms (librdkafka takes \
                     milliseconds as a 32-bit integer)",
                    MAX_REQUEST_TIMEOUT.as_millis()
                ),
                "request_timeout".into(),
                format!("{} ms", timeout.as_millis()),
            ));
        }
        Ok(())
    }

    /// The base client configuration: the pass-through properties, then the bootstrap servers.
    pub(crate) fn client_config(&self) -> ClientConfig {
        let mut config = ClientConfig::new();
        for (key, value) in &self.properties {
            config.set(key, value);
        }
        config.set("bootstrap.servers", &self.bootstrap_servers);
        // Each client connects to every broker as soon as it knows them. With librdkafka's
        // sparse connections (its default) the connection to a partition's leader started only
        // when a request needed it and came up about 50 ms later, before every read's first
        // offsets or records (a local broker: a default-scale config topic read raw in 84-86 ms,
        // 26-56 ms without). A `-X enable.sparse.connections` still wins.
        if !self.properties.contains_key("enable.sparse.connections") {
            config.set("enable.sparse.connections", "false");
        }
        config
    }

    /// A reader's configuration: manual assignment under `group` (nothing is committed under
    /// it), positions from the start, end-of-partition events, no topic auto-creation, and the
    /// isolation level of [`read_committed`](Self::read_committed).
    pub(crate) fn reader_config(&self, group: &str) -> ClientConfig {
        let mut config = self.client_config();
        config
            .set("group.id", group)
            .set("enable.auto.commit", "false")
            .set("enable.auto.offset.store", "false")
            .set("enable.partition.eof", "true")
            .set("auto.offset.reset", "earliest")
            .set("allow.auto.create.topics", "false");
        // A fetch request waits at the broker up to this long for more data of partitions at
        // their end, and a partition newly assigned in the middle of a read waits for the request
        // in flight (librdkafka's default, 500 ms, made a 25-partition read take seconds against
        // Apache Kafka when partitions were assigned one at a time). A `-X fetch.wait.max.ms`
        // still wins.
        if !self.properties.contains_key("fetch.wait.max.ms") {
            config.set("fetch.wait.max.ms", "10");
        }
        // When the prefetched messages pass librdkafka's queue limits (64 MB by default, which a
        // large config topic does while the machine applies the batches before them), the next
        // fetch waits this long (librdkafka's default, 1000 ms: one stall of 0.8-0.9 s in four
        // of five full-scale reads of 162 MB, `inspect` 1.3-1.5 s instead of 0.4 s). A
        // `-X fetch.queue.backoff.ms` still wins.
        if !self.properties.contains_key("fetch.queue.backoff.ms") {
            config.set("fetch.queue.backoff.ms", "10");
        }
        // Every partition read stays assigned with a queue of its own (see `reader`), and
        // librdkafka's prefetch limits then hold per partition: its default of 100,000 messages
        // each had a 25-partition offsets topic of 1.1 million records buffered whole while the
        // machine applied it (RSS 650 MB instead of 310 MB, and slower). 10,000 keeps two of the
        // store's batches ahead (RSS 380 MB; 5,000 and 100,000 read more slowly). A
        // `-X queued.min.messages` still wins.
        if !self.properties.contains_key("queued.min.messages") {
            config.set("queued.min.messages", "10000");
        }
        config.set(
            "isolation.level",
            if self.read_committed {
                "read_committed"
            } else {
                "read_uncommitted"
            },
        );
        config
    }
}

impl KafkaSettings {
    /// The values of the secret properties (see [`is_secret`]), to keep out of any message.
    pub fn secret_values(&self) -> Vec<String> {
        self.properties
            .iter()
            .filter(|(k, _)| is_secret(k))
            .map(|(_, v)| v.clone())
            .collect()
    }

    /// `text` with every secret value replaced by `[redacted]` (librdkafka's messages can echo
    /// a property's value, e.g. "Configuration property ... not supported ... NAME VALUE").
    pub fn redact(&self, text: &str) -> String {
        redact(text, &self.secret_values())
    }
}

/// `text` with every one of `secrets` (longest first, empty ones ignored) replaced by
/// `[redacted]`.
pub fn redact(text: &str, secrets: &[String]) -> String {
    let mut secrets: Vec<&String> = secrets.iter().filter(|s| !s.is_empty()).collect();
    secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
    let mut out = text.to_string();
    for secret in secrets {
        out = out.replace(secret.as_str(), "[redacted]");
    }
    out
}

impl fmt::Debug for KafkaSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shown: BTreeMap<&str, &str> = self
            .properties
            .iter()
            .map(|(k, v)| {
                (
                    k.as_str(),
                    if is_secret(k) {
                        "<redacted>"
                    } else {
                        v.as_str()
                    },
                )
            })
            .collect();
        f.debug_struct("KafkaSettings")
            .field("bootstrap_servers", &self.bootstrap_servers)
            .field("properties", &shown)
            .field("read_committed", &self.read_committed)
            .field("transactional_id", &self.transactional_id)
            .field("request_timeout", &self.request_timeout)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readers_do_not_wait_at_partition_switches_or_full_queues_unless_told_to() {
        let get = |config: &ClientConfig, key: &str| config.get(key).map(str::to_string);
        let defaults = KafkaSettings::new("b:9092").reader_config("g");
        assert_eq!(get(&defaults, "fetch.wait.max.ms").as_deref(), Some("10"));
        assert_eq!(
            get(&defaults, "fetch.queue.backoff.ms").as_deref(),
            Some("10")
        );
        assert_eq!(
            get(&defaults, "queued.min.messages").as_deref(),
            Some("10000")
        );
        let told = KafkaSettings::new("b:9092")
            .with_property("fetch.wait.max.ms", "500")
            .with_property("fetch.queue.backoff.ms", "1000")
            .with_property("queued.min.messages", "100000")
            .reader_config("g");
        assert_eq!(get(&told, "queued.min.messages").as_deref(), Some("100000"));
        assert_eq!(get(&told, "fetch.wait.max.ms").as_deref(), Some("500"));
        assert_eq!(
            get(&told, "fetch.queue.backoff.ms").as_deref(),
            Some("1000")
        );
    }

    #[test]
    fn exactly_once_follows_javas_rules() {
        let settings = KafkaSettings::new("b:9092").with_exactly_once("connect-prod");
        assert!(settings.read_committed);
        assert_eq!(
            settings.transactional_id.as_deref(),
            Some("connect-cluster-connect-prod")
        );
    }

    #[test]
    fn secrets_never_show_in_debug_output() {
        let settings = KafkaSettings::new("127.0.0.1:9092")
            .with_property("sasl.password", "hunter2")
            .with_property("ssl.key.password", "s3cret")
            .with_property("sasl.oauthbearer.client.secret", "abc")
            .with_property("security.protocol", "SASL_SSL");
        let shown = format!("{settings:?}");
        for secret in ["hunter2", "s3cret", "abc"] {
            assert!(!shown.contains(secret), "{shown}");
        }
        assert!(shown.contains("SASL_SSL"));
        assert!(is_secret("SSL.KEYSTORE.PASSWORD"));
        assert!(!is_secret("bootstrap.servers"));
    }
}
