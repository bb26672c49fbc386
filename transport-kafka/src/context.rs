//! The client context of every connect-state client: it keeps the first failure librdkafka
//! reports through its error callback that retrying cannot cure (a refused login, a TLS
//! handshake that fails), so that calls waiting for a broker stop with that reason at once
//! instead of timing out with "broker transport failure". It also keeps the last of the other
//! reports, so that a call that does time out can say what librdkafka last saw.

use std::sync::{Arc, Mutex};

use rdkafka::client::ClientContext;
use rdkafka::consumer::ConsumerContext;
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::producer::{DeliveryResult, ProducerContext, ThreadedProducer};

use crate::settings::KafkaSettings;

/// Shared by the clients of one transport.
#[derive(Clone, Default)]
pub(crate) struct Context {
    failure: Arc<Mutex<Option<String>>>,
    /// The last report that was not fatal ("Disconnected", ...; "1/1 brokers are down" only when
    /// nothing more telling came before it).
    last_report: Arc<Mutex<Option<String>>>,
    /// Values of secret properties, never to appear in a reported reason.
    secrets: Arc<Vec<String>>,
}

impl Context {
    /// A context for clients configured with `settings`.
    pub(crate) fn new(settings: &KafkaSettings) -> Self {
        Self {
            failure: Arc::default(),
            last_report: Arc::default(),
            secrets: Arc::new(settings.secret_values()),
        }
    }

    /// The failure that stops every call, once one was reported.
    pub(crate) fn failure(&self) -> Option<String> {
        self.failure
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// The last report of librdkafka's error callback that was not fatal (secrets redacted), if
    /// any: what a call that timed out can add to its error.
    pub(crate) fn last_report(&self) -> Option<String> {
        self.last_report
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }
}

/// Whether an error from librdkafka's error callback is one that waiting does not cure.
fn is_fatal(error: &KafkaError, reason: &str) -> bool {
    matches!(
        error.rdkafka_error_code(),
        Some(
            RDKafkaErrorCode::Authentication
                | RDKafkaErrorCode::SSL
                | RDKafkaErrorCode::SaslAuthenticationFailed
        )
    ) || [
        "SASL authentication error",
        "SSL handshake failed",
        "certificate verify failed",
        // The broker refusing our certificate (or its absence) ends the handshake with a TLS
        // alert ("ssl/tls alert bad certificate", "... certificate required", ...).
        "ssl/tls alert",
        // A plaintext client at a TLS listener (or the other way round).
        "incorrect security.protocol configuration",
    ]
    .iter()
    .any(|needle| reason.contains(needle))
}

impl ClientContext for Context {
    fn error(&self, error: KafkaError, reason: &str) {
        let text = crate::settings::redact(reason, &self.secrets);
        if !is_fatal(&error, reason) {
            let mut last = self
                .last_report
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            // "1/1 brokers are down" follows the report that says why; it does not replace it.
            let summary = error.rdkafka_error_code() == Some(RDKafkaErrorCode::AllBrokersDown);
            if !(summary && last.is_some()) {
                *last = Some(text);
            }
            return;
        }
        let mut slot = self
            .failure
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        slot.get_or_insert(text);
    }
}

impl ConsumerContext for Context {}

impl ProducerContext for Context {
    type DeliveryOpaque = ();

    fn delivery(&self, _: &DeliveryResult<'_>, (): Self::DeliveryOpaque) {}
}

/// A client that only listens: an idle producer whose background thread polls librdkafka's
/// event queue, so that the error callback of [`Context`] runs while the other clients block in
/// metadata or offset requests (their queues are polled only by their own calls). Created only
/// for connections that can be refused (TLS or SASL).
pub(crate) fn watch(
    settings: &KafkaSettings,
    context: &Context,
) -> Result<Option<ThreadedProducer<Context>>, KafkaError> {
    let protocol = settings
        .properties
        .get("security.protocol")
        .map(|p| p.to_ascii_lowercase());
    if matches!(protocol.as_deref(), None | Some("plaintext")) {
        return Ok(None);
    }
    settings
        .client_config()
        .create_with_context(context.clone())
        .map(Some)
}
