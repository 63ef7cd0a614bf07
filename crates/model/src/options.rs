//! [`LoadOptions`]: what one `shootout load` run was asked to do, after validation.
//!
//! The same struct is the engine's input and the `options` section of the result document, so a result always
//! says exactly how it was measured. Durations are written to JSON as seconds (floating point).

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// When a run stops sending new requests.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopCondition {
    /// Send for this long (after the warm-up), as `-d/--duration`.
    Duration(#[serde(with = "secs")] Duration),
    /// Send exactly this many counted requests, as `-n/--requests`.
    Requests(u64),
}

/// The validated plan of one load run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadOptions {
    /// The URL as the user gave it.
    pub url: String,
    /// HTTP method, upper case.
    pub method: String,
    /// Extra request headers, in order, as `(name, value)`.
    pub headers: Vec<(String, String)>,
    /// Length of the request body in bytes (the body itself is not recorded).
    pub body_bytes: u64,
    /// Concurrent connections (closed model: each has at most one request in flight).
    pub connections: u32,
    /// Worker threads, each owning its share of the connections.
    pub threads: u32,
    /// When to stop sending.
    pub stop: StopCondition,
    /// Deadline for a whole request, from when it was due until its last response byte.
    #[serde(with = "secs")]
    pub timeout: Duration,
    /// Deadline for establishing a TCP connection.
    #[serde(with = "secs")]
    pub connect_timeout: Duration,
    /// Reuse connections (HTTP keep-alive). When false, every request opens a new connection.
    pub keepalive: bool,
    /// Load sent before measuring starts; its requests are not counted.
    #[serde(with = "secs")]
    pub warmup: Duration,
}

/// Serialises a [`Duration`] as floating-point seconds.
pub mod secs {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    /// Writes seconds.
    pub fn serialize<S: Serializer>(value: &Duration, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_f64(value.as_secs_f64())
    }

    /// Reads seconds.
    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Duration, D::Error> {
        let secs = f64::deserialize(deserializer)?;
        Duration::try_from_secs_f64(secs).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_through_json() {
        let options = LoadOptions {
            url: "http://127.0.0.1:8080/".into(),
            method: "GET".into(),
            headers: vec![("Accept".into(), "*/*".into())],
            body_bytes: 0,
            connections: 50,
            threads: 2,
            stop: StopCondition::Duration(Duration::from_millis(1500)),
            timeout: Duration::from_secs(30),
            connect_timeout: Duration::from_secs(5),
            keepalive: true,
            warmup: Duration::ZERO,
        };
        let json = serde_json::to_string(&options).unwrap();
        assert!(json.contains("\"duration\":1.5"), "{json}");
        let back: LoadOptions = serde_json::from_str(&json).unwrap();
        assert_eq!(back, options);
    }
}
