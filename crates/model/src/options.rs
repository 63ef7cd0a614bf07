//! [`LoadOptions`]: what one `shootout load` run was asked to do, after validation.
//!
//! The same struct is the engine's input and the `options` section of the result document, so a result always
//! says exactly how it was measured. Durations are written to JSON as seconds (floating point).

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::IoBackend;

/// When a run stops sending new requests.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopCondition {
    /// Send for this long (after the warm-up), as `-d/--duration`.
    Duration(#[serde(with = "secs")] Duration),
    /// Send exactly this many counted requests, as `-n/--requests`.
    Requests(u64),
}

/// How requests are paced.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Pacing {
    /// Closed model (wrk, ab, siege): `connections` users, each sending its next request as soon as its previous
    /// response ends, so a slower server gets fewer requests.
    Closed,
    /// Open model (wrk2, k6's arrival rate): requests are due at a rate set in advance, whatever the server does,
    /// and latency is measured from when each was due.
    Open {
        /// Requests per second (the starting rate when there are stages).
        rate: f64,
        /// How due times are spaced.
        arrival: Arrival,
    },
}

/// How the due times of an open-model run are spaced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Arrival {
    /// Evenly: one request every 1/rate seconds.
    Constant,
    /// A Poisson process: exponentially distributed gaps with mean 1/rate, as independent users arrive.
    Poisson,
}

/// The HTTP version a run speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Protocol {
    /// HTTP/1.1: one request in flight per connection.
    #[default]
    Http1,
    /// HTTP/2: with prior knowledge on http:// (h2c), through ALPN on https://; `streams` requests in flight per
    /// connection.
    Http2,
    /// HTTP/3 over QUIC (https:// only, TLS 1.3 with ALPN h3); `streams` requests in flight per connection.
    Http3,
}

impl Protocol {
    /// The name people know it by.
    pub fn label(self) -> &'static str {
        match self {
            Protocol::Http1 => "HTTP/1.1",
            Protocol::Http2 => "HTTP/2",
            Protocol::Http3 => "HTTP/3",
        }
    }

    /// The flag that asks for it on the command line (none for HTTP/1.1, the default).
    pub fn flag(self) -> &'static str {
        match self {
            Protocol::Http1 => "",
            Protocol::Http2 => "--http2",
            Protocol::Http3 => "--http3",
        }
    }

    /// True when a connection carries several requests at once, each on a stream of its own.
    pub fn multiplexed(self) -> bool {
        self != Protocol::Http1
    }
}

/// One stage of a ramp: over `duration`, the level moves linearly from where the previous stage ended to
/// `target` (users for the closed model, requests per second for the open model).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Stage {
    /// How long the stage lasts.
    #[serde(with = "secs")]
    pub duration: Duration,
    /// The level reached at its end.
    pub target: f64,
}

/// One of `of` equal shares of a load that several agents run together (k6's execution segments): the
/// connections, the users of a ramp at every instant, a rate and a request count are split so that the shares of
/// all `of` agents add up exactly to the whole that the rest of the options describe.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Segment {
    /// This share, counted from 0.
    pub index: u32,
    /// How many shares the load is split into (at least 1).
    pub of: u32,
}

impl Segment {
    /// The whole load: share 0 of 1.
    pub const WHOLE: Segment = Segment { index: 0, of: 1 };
}

/// The validated plan of one load run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadOptions {
    /// The URL as the user gave it (for a scenario, its server).
    pub url: String,
    /// The scenario file, when the run sends one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scenario: Option<String>,
    /// HTTP method, upper case.
    pub method: String,
    /// Extra request headers, in order, as `(name, value)`.
    pub headers: Vec<(String, String)>,
    /// Length of the request body in bytes (the body itself is not recorded).
    pub body_bytes: u64,
    /// Closed model: concurrent connections (users), each with at most one request in flight; the starting level
    /// when there are stages. Open model: the most connections that may be open at once (`--max-connections`);
    /// they are opened as needed, when every open one is busy.
    pub connections: u32,
    /// HTTP/1.1 or HTTP/2 (results written before HTTP/2 was spoken read as HTTP/1.1).
    #[serde(default)]
    pub protocol: Protocol,
    /// HTTP/2 and HTTP/3: requests in flight at once on each connection (h2load's `-m`); 1 for HTTP/1.1.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub streams: u32,
    /// Closed or open model.
    pub pacing: Pacing,
    /// Ramps of the level (users or rate) over time; empty for a constant level. With stages, the run lasts
    /// their total duration.
    pub stages: Vec<Stage>,
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
    /// HTTPS: accept any server certificate (`--insecure`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub insecure: bool,
    /// HTTPS: a PEM file of extra trusted CA certificates (`--cacert`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cacert: Option<String>,
    /// Reuse connections (HTTP keep-alive). When false, every request opens a new connection.
    pub keepalive: bool,
    /// The I/O the workers must use (`--io`); `None` lets the engine choose: io_uring where it serves the run and
    /// the machine allows it, else epoll.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io: Option<IoBackend>,
    /// Closed model: each user pauses a random time between 0 and this after every response (siege's `-d`).
    #[serde(default, skip_serializing_if = "Option::is_none", with = "opt_secs")]
    pub delay: Option<Duration>,
    /// Redirects (301, 302, 303, 307, 308 with a `Location` on the run's server) followed in a row, each hop a
    /// response of the request that led to it; 0 follows none (results from before redirects were followed
    /// read as 0).
    #[serde(default)]
    pub max_redirects: u32,
    /// A urls file is walked in order by every user (siege's default) rather than picked at random.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub sequential: bool,
    /// The scenario strings requests into user sessions: in the open model the rate counts arriving users (each
    /// runs one session), not requests.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub sessions: bool,
    /// Load sent before measuring starts; its requests are not counted.
    #[serde(with = "secs")]
    pub warmup: Duration,
    /// When several agents run this load together: the share this run takes. `None` is the whole load.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub segment: Option<Segment>,
}

fn one() -> u32 {
    1
}

fn is_one(n: &u32) -> bool {
    *n == 1
}

impl LoadOptions {
    /// The most connections the run can hold open at once: the peak of the users ramp (closed model), or the
    /// connection limit (open model). Threads, connection slots and the open-file limit are sized from it.
    pub fn most_connections(&self) -> u64 {
        match self.pacing {
            Pacing::Closed => {
                self.stages.iter().map(|s| s.target.ceil() as u64).fold(u64::from(self.connections), u64::max)
            }
            Pacing::Open { .. } => u64::from(self.connections),
        }
    }

    /// The most requests the run can have in flight at once: a stream slot per connection and stream.
    pub fn most_in_flight(&self) -> u64 {
        self.most_connections() * u64::from(self.streams.max(1))
    }

    /// Why io_uring cannot carry this run, in the words `--io io_uring` is refused with; `None` when it can: plain
    /// HTTP/1.1 (not `tls`, which the caller knows from the parsed URL; without `--http2`) on at most
    /// [`IO_URING_MOST_CONNECTIONS`], with a body of at most [`IO_URING_LARGEST_BODY`]. The rest goes through epoll.
    pub fn io_uring_unfit(&self, tls: bool) -> Option<String> {
        let with = if tls {
            "an https:// URL".to_string()
        } else if self.protocol.multiplexed() {
            self.protocol.flag().to_string()
        } else if self.most_connections() > IO_URING_MOST_CONNECTIONS {
            format!("{} connections", self.most_connections())
        } else if self.body_bytes > IO_URING_LARGEST_BODY {
            format!("a body of {} bytes", self.body_bytes)
        } else {
            return None;
        };
        Some(format!(
            "--io io_uring with {with}: shootout speaks only plain HTTP/1.1 through io_uring, on up to \
             {IO_URING_MOST_CONNECTIONS} connections with bodies under 4 GiB; leave --io out (the run then goes \
             through epoll)"
        ))
    }
}

/// The most connections a run may hold through io_uring: each operation carries its connection's slot in 24 bits.
pub const IO_URING_MOST_CONNECTIONS: u64 = 1 << 24;
/// The largest request body a run may send through io_uring: a send's length is 32 bits, and the request's head
/// gets 1 MiB of it.
pub const IO_URING_LARGEST_BODY: u64 = u32::MAX as u64 - (1 << 20);

/// Serialises an optional [`Duration`] as floating-point seconds.
mod opt_secs {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(value: &Option<Duration>, serializer: S) -> Result<S::Ok, S::Error> {
        match value {
            Some(d) => serializer.serialize_some(&d.as_secs_f64()),
            None => serializer.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Duration>, D::Error> {
        Option::<f64>::deserialize(deserializer)?
            .map(|s| Duration::try_from_secs_f64(s).map_err(serde::de::Error::custom))
            .transpose()
    }
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

    /// Options that use every field.
    fn sample() -> LoadOptions {
        LoadOptions {
            url: "http://127.0.0.1:8080/".into(),
            scenario: None,
            method: "GET".into(),
            headers: vec![("Accept".into(), "*/*".into())],
            body_bytes: 0,
            connections: 50,
            protocol: Protocol::Http2,
            streams: 10,
            pacing: Pacing::Open { rate: 100.0, arrival: Arrival::Poisson },
            stages: vec![Stage { duration: Duration::from_secs(10), target: 500.0 }],
            threads: 2,
            stop: StopCondition::Duration(Duration::from_millis(1500)),
            timeout: Duration::from_secs(30),
            connect_timeout: Duration::from_secs(5),
            keepalive: true,
            io: None,
            insecure: false,
            cacert: None,
            delay: Some(Duration::from_millis(1500)),
            max_redirects: 10,
            sequential: true,
            sessions: false,
            warmup: Duration::ZERO,
            segment: Some(Segment { index: 1, of: 3 }),
        }
    }

    #[test]
    fn the_most_connections_of_each_model() {
        let stage = |target| Stage { duration: Duration::from_secs(1), target };
        let mut options: LoadOptions = sample();
        options.pacing = Pacing::Closed;
        options.connections = 10;
        options.stages = vec![stage(99.5), stage(0.0)];
        assert_eq!(options.most_connections(), 100, "the peak of the users ramp, rounded up");
        options.stages.clear();
        assert_eq!(options.most_connections(), 10);
        options.pacing = Pacing::Open { rate: 50.0, arrival: Arrival::Constant };
        options.stages = vec![stage(5000.0)];
        assert_eq!(options.most_connections(), 10, "open model: the connection limit, whatever the rate");
    }

    #[test]
    fn round_trips_through_json() {
        let options = sample();
        let json = serde_json::to_string(&options).unwrap();
        assert!(json.contains("\"duration\":1.5"), "{json}");
        let back: LoadOptions = serde_json::from_str(&json).unwrap();
        assert_eq!(back, options);
    }

    #[test]
    fn a_whole_load_writes_no_segment_and_old_files_still_read() {
        let options = LoadOptions { segment: None, ..sample() };
        let json = serde_json::to_string(&options).unwrap();
        assert!(!json.contains("segment"), "a local run's options are as before: {json}");
        let back: LoadOptions = serde_json::from_str(&json).unwrap();
        assert_eq!(back.segment, None);
        let share = serde_json::to_string(&sample()).unwrap();
        assert!(share.contains("\"segment\":{\"index\":1,\"of\":3}"), "{share}");
    }
}
