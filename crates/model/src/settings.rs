//! [`LoadSettings`]: what a user chose for one load run, every choice optional, and the one place that checks
//! the choices and fills in the defaults to make [`LoadOptions`]. `shootout load` fills it from the command line,
//! `shootout run` from a suite's level, and anything else that starts load does the same, so a default or a rule
//! lives here once. Its messages name the command-line flags, as `shootout load` is where users meet them.

use std::time::Duration;

use crate::{Arrival, IoBackend, LoadOptions, Pacing, Protocol, Segment, Stage, StopCondition};

/// How long a run lasts when neither a duration nor a request count is given (as wrk).
pub const DEFAULT_DURATION: Duration = Duration::from_secs(10);
/// Closed-model connections when none are given (and there are no stages).
pub const DEFAULT_CONNECTIONS: u32 = 50;
/// The open model's connection limit when none is given.
pub const DEFAULT_MAX_CONNECTIONS: u32 = 1000;
/// Deadline of a request, from when it was due to its last byte, when none is given.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
/// Deadline of a TCP connect when none is given.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// Redirects followed in a row when no limit is given (as k6).
pub const DEFAULT_MAX_REDIRECTS: u32 = 10;
/// The fastest arrival rate a run may be asked for: a thousand million requests a second, some hundred times what
/// the fastest clients send from one machine (a rate past it never ends its window, and one past 2^63 cannot be
/// counted).
pub const FASTEST_RATE: f64 = 1e9;
/// The most requests a connection may carry at once (`--streams`): ten times what servers allow by default
/// (100 to 1,000), and a bound on the memory the client holds for each connection's streams.
pub const MOST_STREAMS: u32 = 10_000;

/// A rate as typed back in a message: in scientific notation when it is far from any rate people write
/// (`2e19`, `1e-9`), as it is otherwise.
pub fn rate_text(rate: f64) -> String {
    if rate.abs() >= FASTEST_RATE || (rate != 0.0 && rate.abs() < 1e-3) {
        format!("{rate:e}")
    } else {
        format!("{rate}")
    }
}

/// Why an arrival rate cannot be run for `duration` (`None`: it ends on a count of requests, or only the upper bound
/// is asked), if it cannot: past [`FASTEST_RATE`], or so slow that not one request falls due in the window. Shared
/// by `-R`, a suite's `rates` and the one-line form's `--rates`.
pub fn unrunnable_rate(rate: f64, duration: Option<Duration>) -> Option<String> {
    if rate > FASTEST_RATE {
        return Some(format!(
            "{} requests/s is past the 1e9 a run may be asked for, far beyond what any client sends",
            rate_text(rate)
        ));
    }
    let duration = duration?;
    let window = duration.as_secs_f64();
    (rate * window < 1.0).then(|| {
        format!(
            "at {} requests/s not one request falls due in {}: give at least {} requests/s, or a longer duration",
            rate_text(rate),
            humantime::format_duration(duration),
            1.0 / window
        )
    })
}

/// One load run as chosen: `None` (or empty) takes the default.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LoadSettings {
    /// The URL (for a scenario, its server).
    pub url: String,
    /// The scenario or urls file sent, by name, for the record.
    pub scenario: Option<String>,
    /// The scenario's arrival phases (new users per second): an open model of sessions, unless a rate or
    /// stages are given.
    pub phases: Vec<Stage>,
    /// Closed model: users (the starting level with stages).
    pub connections: Option<u32>,
    /// Open model: requests per second (the starting rate with stages).
    pub rate: Option<f64>,
    /// Open model: how due times are spaced.
    pub arrival: Option<Arrival>,
    /// Open model: the most connections open at once.
    pub max_connections: Option<u32>,
    /// Ramps of the level; the run lasts their total.
    pub stages: Vec<Stage>,
    /// Worker threads (default: the CPUs available, never more than the connections).
    pub threads: Option<u32>,
    /// Send for this long.
    pub duration: Option<Duration>,
    /// Send exactly this many counted requests.
    pub requests: Option<u64>,
    /// HTTP method (default GET, or POST with a body).
    pub method: Option<String>,
    /// Extra request headers, `(name, value)`.
    pub headers: Vec<(String, String)>,
    /// The body's length, when a body is sent (even an empty one).
    pub body_bytes: Option<u64>,
    /// Per-request deadline.
    pub timeout: Option<Duration>,
    /// TCP connect deadline.
    pub connect_timeout: Option<Duration>,
    /// Open a new connection for every request.
    pub no_keepalive: bool,
    /// The I/O the workers must use (default: the engine chooses).
    pub io: Option<IoBackend>,
    /// The HTTP version (default HTTP/1.1).
    pub protocol: Option<Protocol>,
    /// HTTP/2: requests in flight per connection (default 1).
    pub streams: Option<u32>,
    /// HTTPS: accept any certificate.
    pub insecure: bool,
    /// HTTPS: extra trusted CA certificates (a PEM file's name).
    pub cacert: Option<String>,
    /// Closed model: each user pauses up to this after every response (siege's `-d`).
    pub delay: Option<Duration>,
    /// Redirects followed in a row (default [`DEFAULT_MAX_REDIRECTS`]; 0 follows none).
    pub max_redirects: Option<u32>,
    /// A urls file is walked in order rather than at random.
    pub sequential: bool,
    /// Load sent first and not counted.
    pub warmup: Option<Duration>,
    /// When several agents run this load together: the share this run takes (none: the whole load).
    pub segment: Option<Segment>,
}

/// A choice that cannot be run: the message names it and says how to fix it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct BadSetting(pub String);

impl LoadSettings {
    /// Checks the choices and fills in the defaults. `cpus` is how many CPUs the run may use (the default
    /// thread count).
    pub fn build(self, cpus: u32) -> Result<LoadOptions, BadSetting> {
        let bad = |message: String| Err(BadSetting(message));
        // A scenario's phases bring in new users per second: an open model of sessions, unless -R/--stages say else.
        let arrivals = !self.phases.is_empty() && self.rate.is_none() && self.stages.is_empty();
        let stages = if arrivals { self.phases.clone() } else { self.stages.clone() };
        if self.connections == Some(0) && stages.is_empty() {
            return bad("-c/--connections 0: at least 1 connection is needed, e.g. -c 50".into());
        }
        if self.max_connections == Some(0) {
            return bad("--max-connections 0: at least 1 connection is needed, e.g. --max-connections 1000".into());
        }
        if let Some(rate) = self.rate {
            if !rate.is_finite() || rate < 0.0 || (rate == 0.0 && stages.is_empty()) {
                return bad(format!("-R/--rate {rate}: give a positive number of requests per second, e.g. -R 1000"));
            }
            // A ramp's levels are its stages' targets. (Too slow a rate is the typed -R's fault only: a search's
            // probe or a start warm-up may ask for less than one request in its window, and measures nothing.)
            let fastest = stages.iter().map(|s| s.target).fold(rate, f64::max);
            if let Some(why) = unrunnable_rate(fastest, None) {
                return bad(format!("-R/--rate {}: {why}", rate_text(rate)));
            }
        }
        let start_level = self.rate.unwrap_or(f64::from(self.connections.unwrap_or(0)));
        if !stages.is_empty() && start_level == 0.0 && stages.iter().all(|s| s.target == 0.0) {
            return bad("--stages: every level is 0, so nothing would be sent: give a stage a target above 0".into());
        }
        if self.threads == Some(0) {
            return bad("-t/--threads 0: at least 1 thread is needed, e.g. -t 2".into());
        }
        if self.requests == Some(0) {
            return bad("-n/--requests 0: send at least 1 request, or use -d for a timed run".into());
        }
        if self.duration.is_some_and(|d| d.is_zero()) {
            return bad("-d/--duration 0s: give the run some time, e.g. -d 10s".into());
        }
        let protocol = self.protocol.unwrap_or_default();
        let streams = self.streams.unwrap_or(1);
        if streams == 0 {
            return bad("--streams 0: at least 1 stream per connection is needed, e.g. --streams 10".into());
        }
        if streams > MOST_STREAMS {
            return bad(format!(
                "--streams {streams}: more than the {MOST_STREAMS} requests a connection may carry at once (servers \
                 allow 100 to 1,000 by default): open more connections (-c) instead"
            ));
        }
        if streams > 1 && !protocol.multiplexed() {
            return bad(format!(
                "--streams {streams}: only HTTP/2 and HTTP/3 carry several requests at once on a connection: add \
                 --http2 or --http3"
            ));
        }
        if protocol.multiplexed() && self.no_keepalive {
            let (flag, label) = (protocol.flag(), protocol.label());
            return bad(format!("{flag} with --no-keepalive: {label} keeps its connections open; drop --no-keepalive"));
        }
        let timeout = self.timeout.unwrap_or(DEFAULT_TIMEOUT);
        let connect_timeout = self.connect_timeout.unwrap_or(DEFAULT_CONNECT_TIMEOUT);
        if timeout.is_zero() || connect_timeout.is_zero() {
            return bad("--timeout and --connect-timeout must be longer than 0s, e.g. --timeout 30s".into());
        }
        let method = match &self.method {
            Some(m) if is_token(m) => m.to_ascii_uppercase(),
            Some(m) => return bad(format!("-m '{m}': a method is one word such as GET, POST or PUT")),
            None if self.body_bytes.is_some() => "POST".into(),
            None => "GET".into(),
        };
        check_headers(&self.headers, protocol).map_err(BadSetting)?;
        let max_connections = self.max_connections.unwrap_or(DEFAULT_MAX_CONNECTIONS);
        let (pacing, connections) = match self.rate {
            _ if arrivals => (Pacing::Open { rate: 0.0, arrival: Arrival::Poisson }, max_connections),
            Some(rate) => (Pacing::Open { rate, arrival: self.arrival.unwrap_or(Arrival::Constant) }, max_connections),
            None if stages.is_empty() => (Pacing::Closed, self.connections.unwrap_or(DEFAULT_CONNECTIONS)),
            None => (Pacing::Closed, self.connections.unwrap_or(0)),
        };
        let stop = match (self.requests, self.duration) {
            _ if !stages.is_empty() => StopCondition::Duration(stages.iter().map(|s| s.duration).sum()),
            (Some(n), _) => StopCondition::Requests(n),
            (None, Some(d)) => StopCondition::Duration(d),
            (None, None) => StopCondition::Duration(DEFAULT_DURATION),
        };
        let mut options = LoadOptions {
            url: self.url,
            scenario: self.scenario,
            method,
            headers: self.headers,
            body_bytes: self.body_bytes.unwrap_or(0),
            connections,
            protocol,
            streams,
            pacing,
            stages,
            threads: 1,
            stop,
            timeout,
            connect_timeout,
            insecure: self.insecure,
            cacert: self.cacert,
            keepalive: !self.no_keepalive,
            io: self.io,
            delay: self.delay.filter(|d| !d.is_zero()),
            max_redirects: self.max_redirects.unwrap_or(DEFAULT_MAX_REDIRECTS),
            sequential: self.sequential,
            sessions: false,
            warmup: self.warmup.unwrap_or(Duration::ZERO),
            segment: self.segment,
        };
        // The engine asks again with the parsed URL; the settings catch the plain case early, with exit 2.
        let https = options.url.trim_start().get(..8).is_some_and(|scheme| scheme.eq_ignore_ascii_case("https://"));
        if let Some(unfit) = options.io_uring_unfit(https).filter(|_| options.io == Some(IoBackend::IoUring)) {
            return bad(unfit);
        }
        if let Some(Segment { index, of }) = self.segment {
            if of == 0 {
                return bad(format!("segment {index}/0: a load is split into at least 1 share, e.g. 0/1"));
            }
            if index >= of {
                return bad(format!(
                    "segment {index}/{of}: shares are counted from 0, so the index must be below {of}, e.g. {}/{of}",
                    of - 1
                ));
            }
            if u64::from(of) > options.most_connections() {
                return bad(format!(
                    "segment {index}/{of}: {of} shares of {} connections would leave some with none: split into at \
                     most {} shares, or allow more connections",
                    options.most_connections(),
                    options.most_connections()
                ));
            }
        }
        // More threads than connections would leave some with nothing to do.
        let threads = u64::from(self.threads.unwrap_or(cpus.max(1)));
        options.threads = threads.min(options.most_connections().max(1)) as u32;
        Ok(options)
    }
}

/// Headers that would make the request invalid HTTP, or contradict its framing, refused with the fix: a name
/// that is not one word; a value holding CR, LF or NUL (it would end the header and start another on the wire);
/// `Content-Length` or `Transfer-Encoding`, which shootout sets from the body; and over HTTP/2 the headers of a
/// connection (`Connection`, `Keep-Alive`, `Proxy-Connection`, `Transfer-Encoding`, `Upgrade`, RFC 9113 §8.2.2)
/// and `Host`, which HTTP/2 takes from the URL (`:authority`).
pub fn check_headers(headers: &[(String, String)], protocol: Protocol) -> Result<(), String> {
    for (name, value) in headers {
        if !is_token(name) {
            return Err(format!("-H '{name}': a header name is one word, e.g. -H 'Accept: text/html'"));
        }
        if value.contains(['\r', '\n', '\0']) {
            return Err(format!(
                "-H '{name}: …': a header value cannot hold CR, LF or NUL (on the wire they would end the header and \
                 start another): remove them"
            ));
        }
        let lower = name.to_ascii_lowercase();
        if lower == "content-length" || lower == "transfer-encoding" {
            return Err(format!(
                "-H '{name}': shootout frames each request itself, from its body (--body, --body-file): leave \
                 Content-Length and Transfer-Encoding out"
            ));
        }
        let connection_specific = ["connection", "keep-alive", "proxy-connection", "upgrade", "host"];
        if protocol.multiplexed() && connection_specific.contains(&lower.as_str()) {
            let (flag, label) = (protocol.flag(), protocol.label());
            return Err(format!(
                "-H '{name}' with {flag}: {label} has no connection headers and takes the host from the URL; leave \
                 it out"
            ));
        }
    }
    Ok(())
}

/// True when `text` is an HTTP token (a method or a header name).
pub fn is_token(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> LoadSettings {
        LoadSettings { url: "http://127.0.0.1:1/".into(), ..LoadSettings::default() }
    }

    #[test]
    fn the_defaults_are_filled_in() {
        let options = settings().build(8).unwrap();
        assert_eq!((options.pacing, options.connections, options.threads), (Pacing::Closed, DEFAULT_CONNECTIONS, 8));
        assert_eq!(options.stop, StopCondition::Duration(DEFAULT_DURATION));
        assert_eq!((options.timeout, options.connect_timeout), (DEFAULT_TIMEOUT, DEFAULT_CONNECT_TIMEOUT));
        assert_eq!((options.method.as_str(), options.keepalive, options.warmup), ("GET", true, Duration::ZERO));
        let open = LoadSettings { rate: Some(100.0), ..settings() }.build(2).unwrap();
        assert_eq!(open.pacing, Pacing::Open { rate: 100.0, arrival: Arrival::Constant });
        assert_eq!(open.connections, DEFAULT_MAX_CONNECTIONS);
        let post = LoadSettings { body_bytes: Some(0), connections: Some(1), ..settings() }.build(4).unwrap();
        assert_eq!((post.method.as_str(), post.threads), ("POST", 1), "a body means POST; no idle threads");
    }

    #[test]
    fn phases_make_an_open_model_of_arriving_users() {
        let phase = Stage { duration: Duration::from_secs(2), target: 5.0 };
        let options = LoadSettings { phases: vec![phase], ..settings() }.build(1).unwrap();
        assert_eq!(options.pacing, Pacing::Open { rate: 0.0, arrival: Arrival::Poisson });
        assert_eq!((options.stages.clone(), options.stop), (vec![phase], StopCondition::Duration(phase.duration)));
        let paced = LoadSettings { phases: vec![phase], rate: Some(10.0), ..settings() }.build(1).unwrap();
        assert!(paced.stages.is_empty(), "a rate given overrides the phases");
    }

    #[test]
    fn bad_choices_name_the_flag() {
        let e = |s: LoadSettings| s.build(1).unwrap_err().0;
        assert!(e(LoadSettings { connections: Some(0), ..settings() }).starts_with("-c/--connections 0"));
        assert!(e(LoadSettings { rate: Some(-1.0), ..settings() }).starts_with("-R/--rate -1"));
        let why = e(LoadSettings { rate: Some(2e19), ..settings() });
        assert!(why.starts_with("-R/--rate 2e19: 2e19 requests/s is past the 1e9"), "{why}");
        let why = unrunnable_rate(1e-9, Some(Duration::from_secs(1))).unwrap();
        assert!(why.contains("not one request falls due in 1s: give at least 1 requests/s"), "{why}");
        assert_eq!(unrunnable_rate(1e-9, None), None, "a count ends it");
        let ramp = vec![Stage { duration: Duration::from_secs(1), target: 1e12 }];
        assert!(e(LoadSettings { rate: Some(10.0), stages: ramp, ..settings() }).contains("is past the 1e9"));
        let why = e(LoadSettings { streams: Some(1_000_000), protocol: Some(Protocol::Http3), ..settings() });
        assert!(why.starts_with("--streams 1000000: more than the 10000"), "{why}");
        assert!(e(LoadSettings { threads: Some(0), ..settings() }).starts_with("-t/--threads 0"));
        assert!(e(LoadSettings { method: Some("GE T".into()), ..settings() }).starts_with("-m 'GE T'"));
        assert!(e(LoadSettings { timeout: Some(Duration::ZERO), ..settings() }).starts_with("--timeout"));
        let ramp = vec![Stage { duration: Duration::from_secs(1), target: 0.0 }];
        assert!(e(LoadSettings { stages: ramp, ..settings() }).starts_with("--stages: every level is 0"));
        let segment = |index, of| LoadSettings { segment: Some(Segment { index, of }), ..settings() };
        assert!(e(segment(0, 0)).starts_with("segment 0/0"));
        assert!(e(segment(3, 3)).starts_with("segment 3/3"));
        let few = LoadSettings { connections: Some(2), ..segment(0, 3) };
        assert!(e(few).starts_with("segment 0/3: 3 shares of 2 connections"));
        assert_eq!(segment(2, 3).build(1).unwrap().segment, Some(Segment { index: 2, of: 3 }));
        let uring = Some(IoBackend::IoUring);
        let tls = LoadSettings { url: "HTTPS://127.0.0.1:1/".into(), io: uring, ..settings() };
        assert!(e(tls).starts_with("--io io_uring with an https:// URL"));
        let h2 = LoadSettings { protocol: Some(Protocol::Http2), io: uring, ..settings() };
        assert!(e(h2).starts_with("--io io_uring with --http2"));
        let many = LoadSettings { connections: Some(20_000_000), io: uring, ..settings() };
        assert!(e(many).starts_with("--io io_uring with 20000000 connections"));
        let big = LoadSettings { body_bytes: Some(5 << 30), io: uring, ..settings() };
        assert!(e(big).starts_with("--io io_uring with a body of 5368709120 bytes"));
        assert_eq!(LoadSettings { io: uring, ..settings() }.build(1).unwrap().io, uring);
    }
}
