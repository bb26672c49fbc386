//! Which property names may hold secrets: one rule for client settings and Connect configs.

/// Whether a property (a client setting, or a connector or task config) may hold a secret that
/// must never be shown. Conservative: any name that
/// contains `password`, `secret`, `key`, `token`, `jaas`, `credential` or `.pem` (so key and
/// certificate locations count too), case-insensitively.
pub fn is_secret(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    [
        "password",
        "secret",
        "key",
        "token",
        "jaas",
        "credential",
        ".pem",
    ]
    .iter()
    .any(|marker| key.contains(marker))
}

#[cfg(test)]
mod tests {
    use super::is_secret;

    #[test]
    fn secret_names() {
        assert!(is_secret("SSL.KEYSTORE.PASSWORD"));
        assert!(is_secret("connection.password"));
        assert!(is_secret("sasl.jaas.config"));
        assert!(is_secret("aws.access.key.id"));
        assert!(!is_secret("bootstrap.servers"));
        assert!(!is_secret("tasks.max"));
    }
}
