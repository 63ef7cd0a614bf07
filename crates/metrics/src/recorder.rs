//! [`Recorder`]: one engine thread's measurements, written on every request without locks or allocation.
//!
//! Each worker thread owns one recorder. At each second boundary the thread hands its current [`Interval`] to the
//! coordinator; at the end the recorders are merged with `+=`, which is exact for every field.

use std::borrow::Borrow;
use std::collections::{BTreeMap, BTreeSet};
use std::ops::AddAssign;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use shootout_model::result::{ConnectionCounts, QuicCounts, RequestCounts, Sends};
use shootout_model::ErrorKind;

use crate::histogram::{new_histogram, record_us, record_us_n, LatencyHistogram};
use crate::resets::StreamResets;
use crate::timeline::Interval;

/// Status codes are counted in a flat array indexed by the code; codes at or past this are counted as 999.
const STATUS_SLOTS: usize = 1000;

/// Per-thread measurements of a load run. A recorder crosses a process boundary (an agent's totals) with serde,
/// exactly: every counter, and its histograms in HdrHistogram V2 base64.
#[derive(Debug, Clone, PartialEq)]
pub struct Recorder {
    /// Latency of every response and every timed-out or unsent request, in µs, from when each was due; of a
    /// request left out ([`Recorder::left_out`]), its wait so far.
    pub latency: LatencyHistogram,
    /// Service time of every request that was sent and ended, in µs, from its first byte written.
    pub service: LatencyHistogram,
    /// Connect time of every connection opened, in µs.
    pub connect: LatencyHistogram,
    /// TLS handshake time of every HTTPS connection opened, in µs.
    pub handshake: LatencyHistogram,
    status: Vec<u64>,
    errors: [u64; ErrorKind::ALL.len()],
    /// HTTP/2: the error codes of the RST_STREAMs behind the `stream_refused` and `stream_reset` failures.
    resets: StreamResets,
    ok: u64,
    http_errors: u64,
    /// Bytes read from the server.
    pub bytes_received: u64,
    /// Bytes written to the server.
    pub bytes_sent: u64,
    connections: ConnectionCounts,
    /// Requests completed during the warm-up (not counted elsewhere).
    pub warmup_requests: u64,
    /// What happened inside the measured window, the base of the rates.
    pub window: WindowCounts,
    /// Scenarios: responses that failed a check, by (request index, check, status). Touched only when a check
    /// fails, and then it finds its entry after the first time: nothing is allocated in the steady state.
    failed_checks: BTreeMap<(u32, Check, u16), u64>,
    /// Redirects followed (each hop is also one of the responses).
    redirects: u64,
    /// The hosts requests would have gone to off the run's server ([`ErrorKind::OffOrigin`]), at most
    /// [`MOST_OFF_ORIGIN`].
    off_origin: BTreeSet<String>,
    /// HTTP/3: what the QUIC stack counted over the connections that ended.
    pub quic: QuicCounts,
    sends: Sends,
    interval: Interval,
}

/// The most hosts off the run's server a recorder names: enough to say where, bounded whatever the server does.
pub const MOST_OFF_ORIGIN: usize = 8;

/// Scenarios: the check a response failed. A response that fails one is still a response (its status counts,
/// and it is a transaction); the failure is counted apart, by request, check and status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Check {
    /// Its status was not one the request expects.
    Status,
    /// Its body did not contain the text the request expects.
    Body,
    /// The value the request extracts with its extraction number `n` (in the file's order) was not in it.
    Extract(u32),
    /// As [`Check::Body`], of a body longer than the part checks read (the first MiB): the text may be past it.
    BodyPastWindow,
    /// As [`Check::Extract`], of a body longer than the part extractions read: the value may be past it.
    ExtractPastWindow(u32),
}

/// What happened inside the measured window, whenever the requests involved fell due: the base of every rate
/// and of the concurrency, so that a response that arrives after sending stopped (an overloaded server draining
/// its backlog) is in the latency and the counts but never inflates a rate.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WindowCounts {
    /// Responses (any status, checks passed or not) that arrived inside the window.
    pub responses: u64,
    /// Requests written inside the window.
    pub sent: u64,
    /// Bytes read inside the window.
    pub bytes_received: u64,
    /// Time requests were outstanding inside the window (from when each was due to its end, clipped to the
    /// window), added over the requests, µs: over the window's length, the mean number in flight.
    pub in_flight_us: u64,
    /// Counted requests (due in the window, or held over) that ended after it, answered or failed.
    pub ended_after: u64,
    /// Requests due in the warm-up and still unanswered when the window ended: counted from then on, with their
    /// latency from when they fell due (they waited through the whole window).
    #[serde(default)]
    pub held_over: u64,
    /// Counted requests still in flight when a search's probe stopped waiting for them, its verdict settled
    /// whatever they did: in the latency at their wait so far, in no count of outcomes.
    #[serde(default)]
    pub left_out: u64,
}

impl AddAssign<&WindowCounts> for WindowCounts {
    fn add_assign(&mut self, other: &WindowCounts) {
        self.responses += other.responses;
        self.sent += other.sent;
        self.bytes_received += other.bytes_received;
        self.in_flight_us += other.in_flight_us;
        self.ended_after += other.ended_after;
        self.held_over += other.held_over;
        self.left_out += other.left_out;
    }
}

/// A request written more than this long after it was due counts as late.
pub const LATE_US: u64 = 1000;

impl Default for Recorder {
    fn default() -> Self {
        Self::new()
    }
}

impl Recorder {
    /// An empty recorder whose timeline starts at second 0.
    pub fn new() -> Self {
        Recorder {
            latency: new_histogram(),
            service: new_histogram(),
            connect: new_histogram(),
            handshake: new_histogram(),
            status: vec![0; STATUS_SLOTS],
            errors: [0; ErrorKind::ALL.len()],
            resets: StreamResets::default(),
            ok: 0,
            http_errors: 0,
            bytes_received: 0,
            bytes_sent: 0,
            connections: ConnectionCounts::default(),
            warmup_requests: 0,
            window: WindowCounts::default(),
            failed_checks: BTreeMap::new(),
            redirects: 0,
            off_origin: BTreeSet::new(),
            quic: QuicCounts::default(),
            sends: Sends::default(),
            interval: Interval::new(0),
        }
    }

    /// A redirect was followed (its response is recorded with [`Recorder::response`]).
    pub fn redirected(&mut self) {
        self.redirects += 1;
    }

    /// A request's URL was on `host`, off the run's server: it was not sent (the failure itself is recorded with
    /// [`Recorder::failure`]); the host is kept, among the first [`MOST_OFF_ORIGIN`].
    pub fn went_off_origin(&mut self, host: &str) {
        if self.off_origin.len() < MOST_OFF_ORIGIN && !self.off_origin.contains(host) {
            self.off_origin.insert(host.to_string());
        }
    }

    /// The hosts requests would have gone to off the run's server.
    pub fn off_origin(&self) -> &BTreeSet<String> {
        &self.off_origin
    }

    /// A complete response with this status arrived `latency_us` after the request was due and `service_us` after
    /// its first byte was written.
    #[inline]
    pub fn response(&mut self, status: u16, latency_us: u64, service_us: u64) {
        self.status[(status as usize).min(STATUS_SLOTS - 1)] += 1;
        let is_error = status >= 400;
        if is_error {
            self.http_errors += 1;
        } else {
            self.ok += 1;
        }
        record_us(&mut self.latency, latency_us);
        record_us(&mut self.service, service_us);
        self.interval.record(Some(latency_us), is_error);
    }

    /// Scenarios: a response to request `request` with `status` failed `check` (the response itself is recorded
    /// with [`Recorder::response`]).
    pub fn check_failed(&mut self, request: usize, check: Check, status: u16) {
        *self.failed_checks.entry((request as u32, check, status)).or_default() += 1;
    }

    /// Scenarios: responses that failed a check, by (request index, check, status).
    pub fn failed_checks(&self) -> &BTreeMap<(u32, Check, u16), u64> {
        &self.failed_checks
    }

    /// A request failed at the transport level. A latency is given for failures that waited (timeouts, requests
    /// never sent), so the distribution keeps its tail; a service time for those that had been sent.
    #[inline]
    pub fn failure(&mut self, kind: ErrorKind, latency_us: Option<u64>, service_us: Option<u64>) {
        self.errors[kind.index()] += 1;
        if let Some(us) = latency_us {
            record_us(&mut self.latency, us);
        }
        if let Some(us) = service_us {
            record_us(&mut self.service, us);
        }
        self.interval.record(latency_us, true);
    }

    /// A request still in flight was left out when a search's probe stopped waiting for it (its verdict settled
    /// whatever it did): its wait so far is in the latency, at least that long; it is counted apart
    /// ([`WindowCounts::left_out`]), in no count of outcomes.
    pub fn left_out(&mut self, waited_us: u64) {
        record_us(&mut self.latency, waited_us);
        self.window.left_out += 1;
    }

    /// `n` requests that failed alike, each with a latency of `latency_us` and no service time (open model:
    /// requests a client far behind its schedule passed over, each past its timeout).
    pub fn failures(&mut self, kind: ErrorKind, latency_us: u64, n: u64) {
        self.errors[kind.index()] += n;
        record_us_n(&mut self.latency, latency_us, n);
        self.interval.record_n(Some(latency_us), true, n);
    }

    /// HTTP/2: the server ended a request's stream with RST_STREAM and `code`. Counts only the code: the
    /// failure itself is recorded with [`Recorder::failure`].
    #[inline]
    pub fn stream_reset(&mut self, code: u32) {
        self.resets.add(code, 1);
    }

    /// HTTP/2: the requests ended by RST_STREAM, per error code.
    pub fn stream_resets(&self) -> &StreamResets {
        &self.resets
    }

    /// A TCP connection was established after `connect_us`.
    #[inline]
    pub fn connected(&mut self, connect_us: u64) {
        self.connections.opened += 1;
        record_us(&mut self.connect, connect_us);
    }

    /// Open model: a request fell due.
    #[inline]
    pub fn due(&mut self) {
        self.due_n(1);
    }

    /// Open model: `n` requests fell due.
    #[inline]
    pub fn due_n(&mut self, n: u64) {
        self.sends.due += n;
    }

    /// Open model: a request was written `delay_us` after it was due.
    #[inline]
    pub fn sent(&mut self, delay_us: u64) {
        self.sends.sent += 1;
        self.sends.late += u64::from(delay_us > LATE_US);
    }

    /// Open-model send counts (the rates are left for the caller, who knows the duration).
    pub fn sends(&self) -> Sends {
        self.sends
    }

    /// A TLS handshake completed after `us`.
    #[inline]
    pub fn handshake(&mut self, us: u64) {
        record_us(&mut self.handshake, us);
    }

    /// The server ended a keep-alive connection cleanly between requests.
    #[inline]
    pub fn closed_by_server(&mut self) {
        self.connections.closed_by_server += 1;
    }

    /// Hands over the current second and starts recording into `next_second`.
    pub fn take_interval(&mut self, next_second: u32) -> Interval {
        std::mem::replace(&mut self.interval, Interval::new(next_second))
    }

    /// The second currently being recorded.
    pub fn current_second(&self) -> u32 {
        self.interval.second
    }

    /// Requests by outcome (`warmup` included).
    pub fn request_counts(&self) -> RequestCounts {
        let failed: u64 = self.errors.iter().sum();
        RequestCounts {
            total: self.ok + self.http_errors + failed,
            ok: self.ok,
            http_errors: self.http_errors,
            failed,
            warmup: self.warmup_requests,
            after_window: self.window.ended_after,
            held_over: self.window.held_over,
            left_out: self.window.left_out,
            checks_failed: self.failed_checks.values().sum(),
            redirects: self.redirects,
        }
    }

    /// Responses per status code, for codes that occurred.
    pub fn status_counts(&self) -> BTreeMap<String, u64> {
        (0..STATUS_SLOTS)
            .filter(|&code| self.status[code] > 0)
            .map(|code| (code.to_string(), self.status[code]))
            .collect()
    }

    /// How many requests failed with `kind`.
    pub fn errors_of(&self, kind: ErrorKind) -> u64 {
        self.errors[kind.index()]
    }

    /// Transport failures per kind, for kinds that occurred.
    pub fn error_counts(&self) -> BTreeMap<ErrorKind, u64> {
        ErrorKind::ALL.iter().filter(|k| self.errors[k.index()] > 0).map(|&k| (k, self.errors[k.index()])).collect()
    }

    /// Connection churn.
    pub fn connection_counts(&self) -> ConnectionCounts {
        self.connections
    }

    /// Forgets everything measured so far (the end of a warm-up), keeping the count of requests it saw and what
    /// already happened inside the window (the worker turns its period a loop turn after the window opened).
    pub fn reset_after_warmup(&mut self) {
        let warmup = self.request_counts().total + self.warmup_requests;
        let window = self.window;
        *self = Recorder::new();
        self.warmup_requests = warmup;
        self.window = window;
    }
}

impl AddAssign<&Recorder> for Recorder {
    fn add_assign(&mut self, other: &Recorder) {
        self.latency.add(&other.latency).expect("histograms share bounds");
        self.connect.add(&other.connect).expect("histograms share bounds");
        self.service.add(&other.service).expect("histograms share bounds");
        self.handshake.add(&other.handshake).expect("histograms share bounds");
        self.sends.due += other.sends.due;
        self.sends.sent += other.sends.sent;
        self.sends.late += other.sends.late;
        for (mine, theirs) in self.status.iter_mut().zip(&other.status) {
            *mine += theirs;
        }
        for (mine, theirs) in self.errors.iter_mut().zip(&other.errors) {
            *mine += theirs;
        }
        self.resets += &other.resets;
        self.ok += other.ok;
        self.http_errors += other.http_errors;
        self.bytes_received += other.bytes_received;
        self.bytes_sent += other.bytes_sent;
        self.connections.opened += other.connections.opened;
        self.connections.closed_by_server += other.connections.closed_by_server;
        self.warmup_requests += other.warmup_requests;
        self.window += &other.window;
        for (key, count) in &other.failed_checks {
            *self.failed_checks.entry(*key).or_default() += count;
        }
        self.redirects += other.redirects;
        self.quic += &other.quic;
        for host in &other.off_origin {
            self.went_off_origin(host);
        }
    }
}

/// A recorder as it is written: status codes and error kinds that occurred, by name, rather than their arrays;
/// histograms as base64 text. `H` is a histogram when reading and a reference to one when writing, so that
/// writing copies nothing.
#[derive(Serialize, Deserialize)]
#[serde(bound(serialize = "H: Borrow<LatencyHistogram>, I: Serialize"))]
#[serde(bound(deserialize = "H: From<LatencyHistogram>, I: Deserialize<'de>"))]
struct Wire<H, I> {
    #[serde(with = "crate::histogram::base64_v2")]
    latency: H,
    #[serde(with = "crate::histogram::base64_v2")]
    service: H,
    #[serde(with = "crate::histogram::base64_v2")]
    connect: H,
    #[serde(with = "crate::histogram::base64_v2")]
    handshake: H,
    status: BTreeMap<u16, u64>,
    errors: BTreeMap<ErrorKind, u64>,
    /// RST_STREAM error codes (HTTP/2 only; left out when none).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    stream_resets: BTreeMap<u32, u64>,
    ok: u64,
    http_errors: u64,
    bytes_received: u64,
    bytes_sent: u64,
    connections: ConnectionCounts,
    warmup_requests: u64,
    #[serde(default)]
    window: WindowCounts,
    /// Scenarios: failed checks as (request, check, status, count), left out when none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    failed_checks: Vec<(u32, Check, u16, u64)>,
    /// Redirects followed, left out when none.
    #[serde(default, skip_serializing_if = "is_zero")]
    redirects: u64,
    /// Hosts off the run's server, left out when none.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    off_origin: BTreeSet<String>,
    /// HTTP/3's QUIC counts, left out when none.
    #[serde(default, skip_serializing_if = "QuicCounts::is_empty")]
    quic: QuicCounts,
    due: u64,
    sent: u64,
    late: u64,
    /// The second being recorded (empty in a worker's totals, whose last second has been handed over).
    interval: I,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Serialize for Recorder {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        Wire {
            latency: &self.latency,
            service: &self.service,
            connect: &self.connect,
            handshake: &self.handshake,
            status: (0..STATUS_SLOTS).filter(|&c| self.status[c] > 0).map(|c| (c as u16, self.status[c])).collect(),
            errors: self.error_counts(),
            stream_resets: self.resets.by_code(),
            ok: self.ok,
            http_errors: self.http_errors,
            bytes_received: self.bytes_received,
            bytes_sent: self.bytes_sent,
            connections: self.connections,
            warmup_requests: self.warmup_requests,
            window: self.window,
            failed_checks: self.failed_checks.iter().map(|(&(r, c, s), &n)| (r, c, s, n)).collect(),
            redirects: self.redirects,
            off_origin: self.off_origin.clone(),
            quic: self.quic,
            due: self.sends.due,
            sent: self.sends.sent,
            late: self.sends.late,
            interval: &self.interval,
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Recorder {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Recorder, D::Error> {
        let wire = Wire::<LatencyHistogram, Interval>::deserialize(deserializer)?;
        let mut status = vec![0; STATUS_SLOTS];
        for (code, count) in wire.status {
            status[(code as usize).min(STATUS_SLOTS - 1)] += count;
        }
        let mut errors = [0; ErrorKind::ALL.len()];
        for (kind, count) in wire.errors {
            errors[kind.index()] += count;
        }
        let mut resets = StreamResets::default();
        for (code, count) in wire.stream_resets {
            resets.add(code, count);
        }
        Ok(Recorder {
            latency: wire.latency,
            service: wire.service,
            connect: wire.connect,
            handshake: wire.handshake,
            status,
            errors,
            resets,
            ok: wire.ok,
            http_errors: wire.http_errors,
            bytes_received: wire.bytes_received,
            bytes_sent: wire.bytes_sent,
            connections: wire.connections,
            warmup_requests: wire.warmup_requests,
            window: wire.window,
            failed_checks: wire.failed_checks.into_iter().map(|(r, c, s, n)| ((r, c, s), n)).collect(),
            redirects: wire.redirects,
            off_origin: wire.off_origin,
            quic: wire.quic,
            sends: Sends { due: wire.due, sent: wire.sent, late: wire.late, ..Sends::default() },
            interval: wire.interval,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_by_outcome() {
        let mut r = Recorder::new();
        r.response(200, 100, 90);
        r.response(404, 200, 190);
        r.response(503, 300, 290);
        r.failure(ErrorKind::ReadTimeout, Some(5_000_000), Some(4_000_000));
        r.failure(ErrorKind::ConnectRefused, None, None);
        let c = r.request_counts();
        assert_eq!((c.total, c.ok, c.http_errors, c.failed), (5, 1, 2, 2));
        assert_eq!(r.latency.len(), 4, "the timeout keeps its latency, the refused connect has none");
        assert_eq!(r.latency.max(), r.latency.highest_equivalent(5_000_000));
        assert_eq!(r.service.len(), 4);
        assert_eq!(r.status_counts().get("404"), Some(&1));
        assert_eq!(r.error_counts().get(&ErrorKind::ReadTimeout), Some(&1));
    }

    #[test]
    fn merging_adds_everything() {
        let mut a = Recorder::new();
        let mut b = Recorder::new();
        a.response(200, 10, 10);
        b.response(200, 20, 20);
        b.failure(ErrorKind::Reset, None, None);
        b.failure(ErrorKind::StreamRefused, None, None);
        b.stream_reset(7);
        a.stream_reset(7);
        b.due();
        b.sent(5000);
        b.connected(50);
        b.bytes_received = 100;
        b.window.responses = 3;
        a.window.responses = 2;
        a.check_failed(1, Check::Body, 200);
        b.check_failed(1, Check::Body, 200);
        b.check_failed(0, Check::Status, 404);
        a += &b;
        assert_eq!(a.window.responses, 5);
        assert_eq!(a.failed_checks().get(&(1, Check::Body, 200)), Some(&2));
        assert_eq!(a.request_counts().checks_failed, 3);
        assert_eq!(a.request_counts().total, 4);
        assert_eq!(a.stream_resets().by_code().get(&7), Some(&2));
        assert_eq!(a.latency.len(), 2);
        assert_eq!(a.connection_counts().opened, 1);
        assert_eq!(a.bytes_received, 100);
        assert_eq!((a.sends().due, a.sends().sent, a.sends().late), (1, 1, 1));
        assert_eq!(a.status_counts().get("200"), Some(&2));
    }

    #[test]
    fn a_recorder_crosses_a_process_boundary_exactly() {
        let mut r = Recorder::new();
        for (i, us) in [3, 80, 80, 999, 1_000, 1_001, 65_432, 9_000_000].into_iter().enumerate() {
            r.response([200, 204, 301, 404, 500, 503, 200, 1234][i], us, us / 2);
        }
        r.failure(ErrorKind::ReadTimeout, Some(30_000_000), Some(29_000_000));
        r.failure(ErrorKind::NotSent, Some(5_000), None);
        r.failure(ErrorKind::ConnectRefused, None, None);
        for code in [2, 7, 0x1f] {
            r.failure(ErrorKind::StreamReset, None, None);
            r.stream_reset(code);
        }
        r.connected(120);
        r.connected(95);
        r.handshake(2_500);
        r.closed_by_server();
        r.due();
        r.due();
        r.sent(10);
        r.sent(2_000);
        r.bytes_received = 123_456_789;
        r.bytes_sent = 4_321;
        r.warmup_requests = 17;
        r.window = WindowCounts {
            responses: 7,
            sent: 8,
            bytes_received: 900,
            in_flight_us: 12_345,
            ended_after: 2,
            held_over: 1,
            left_out: 3,
        };
        r.check_failed(1, Check::Status, 302);
        r.check_failed(1, Check::Status, 302);
        r.check_failed(0, Check::Extract(2), 200);
        let json = serde_json::to_string(&r).unwrap();
        let back: Recorder = serde_json::from_str(&json).unwrap();
        assert_eq!(back, r, "every counter, every histogram bucket, and the second being recorded");
        assert_eq!(back.request_counts(), r.request_counts());
        assert_eq!(back.status_counts(), r.status_counts());
        assert_eq!(back.status_counts().get("999"), Some(&1), "codes past 999 stay counted as 999");
        assert_eq!(back.error_counts(), r.error_counts());
        assert_eq!(back.stream_resets().by_code(), r.stream_resets().by_code());
        assert!(json.contains("\"stream_resets\":{\"2\":1,\"7\":1,\"31\":1}"), "{json}");
        assert!(!serde_json::to_string(&Recorder::new()).unwrap().contains("stream_resets"), "left out when none");
        assert_eq!((back.sends().due, back.sends().sent, back.sends().late), (2, 2, 1));
        for (mine, theirs) in [(&back.latency, &r.latency), (&back.service, &r.service), (&back.connect, &r.connect)] {
            let buckets = |h: &LatencyHistogram| -> Vec<(u64, u64)> {
                h.iter_recorded().map(|v| (v.value_iterated_to(), v.count_at_value())).collect()
            };
            assert_eq!(buckets(mine), buckets(theirs));
        }
        assert!(json.contains("\"status\":{\"200\":2,"), "{json}");
        let mut merged = Recorder::new();
        merged += &back;
        assert_eq!(merged.latency, r.latency, "a recorder read back adds like any other");
    }

    #[test]
    fn warmup_reset_keeps_only_the_count() {
        let mut r = Recorder::new();
        r.response(200, 10, 10);
        r.response(200, 10, 10);
        r.window.responses = 1;
        r.reset_after_warmup();
        assert_eq!(r.window.responses, 1, "what happened inside the window stays");
        assert_eq!(r.request_counts().total, 0);
        assert_eq!(r.request_counts().warmup, 2);
        assert!(r.latency.is_empty());
    }
}
