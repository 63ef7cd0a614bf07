//! [`LoadResult`]: the JSON document one load run writes.
//!
//! Versioned by [`SCHEMA_VERSION`] and described by `schema/load-result.v1.json`. Figures are kept at their full
//! resolution (latencies in integer microseconds, rates as floats), and the raw HDR histograms are embedded so
//! any other percentile can be recomputed and runs from several machines merged exactly.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::{ErrorKind, LoadOptions};

/// Version of the result document's layout; bumped on any incompatible change.
pub const SCHEMA_VERSION: u32 = 1;

/// Everything one `shootout load` run measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadResult {
    /// Always [`SCHEMA_VERSION`] when written by this version.
    pub schema_version: u32,
    /// The program that measured.
    pub tool: ToolInfo,
    /// What the run was asked to do.
    pub options: LoadOptions,
    /// The socket address the URL resolved to and was loaded.
    pub address: String,
    /// Wall-clock start of the measured window (after warm-up), RFC 3339 UTC.
    pub started_at: String,
    /// Wall-clock end of the measured window, RFC 3339 UTC.
    pub ended_at: String,
    /// Length of the measured window in seconds: from the end of warm-up to the end of the sending time. The
    /// requests due in it are counted, and those still in flight when sending stops are waited for (up to their
    /// timeout) and counted too (see `drain_s`), without stretching the window: every rate is of what happened
    /// inside it (`throughput`). A run to a request count, or an interrupted one, lasts until its last counted
    /// request ended, and has no drain.
    pub duration_s: f64,
    /// The drain: how long after the window's end the last counted request ended, in seconds (0 when all ended
    /// inside it). Timeline seconds from `duration_s` on are the drain's.
    #[serde(default)]
    pub drain_s: f64,
    /// True when the run was cut short (Ctrl-C); everything measured until then is still here.
    pub interrupted: bool,
    /// How many requests ended which way.
    pub requests: RequestCounts,
    /// Responses per HTTP status code (as a decimal string key).
    pub status_counts: BTreeMap<String, u64>,
    /// Transport failures per kind; kinds that never happened are left out.
    pub errors: BTreeMap<ErrorKind, u64>,
    /// HTTP/2: the requests the server ended with RST_STREAM, per error code, named as RFC 9113 §7 names them
    /// (`INTERNAL_ERROR`, `REFUSED_STREAM`, …; a code it does not define as `0x` and its hex digits). They sum to
    /// `errors.stream_refused + errors.stream_reset`. Left out when there were none.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub stream_resets: BTreeMap<String, u64>,
    /// Connection churn.
    pub connections: ConnectionCounts,
    /// Bytes read from the server (status lines, headers and bodies).
    pub bytes_received: u64,
    /// Bytes written to the server.
    pub bytes_sent: u64,
    /// Rates over `duration_s`.
    pub throughput: Throughput,
    /// Request latency: from when a request was due (including any connect it needed, and in the open model any
    /// wait for a free connection) to its last byte. Requests that timed out, or were never sent, are included
    /// with their waiting time (at least the timeout). This is the corrected view: it has no coordinated omission.
    pub latency: LatencySummary,
    /// Service time: from when a request's first byte was written to its last response byte. This is the
    /// uncorrected view most closed-loop tools report; it leaves out time spent waiting to be sent.
    pub service_time: LatencySummary,
    /// Scenarios only: the same figures for each named request.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub by_request: Vec<NamedResult>,
    /// Scenarios only: the responses that failed a check, by request, expectation and what came instead, most
    /// first. They add up to `requests.checks_failed`. Left out when none failed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed_checks: Vec<FailedCheck>,
    /// Open model only: how well the client kept to its schedule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sends: Option<Sends>,
    /// TCP connect time of every connection opened; over HTTP/3, its QUIC handshake (TLS within it), from its first
    /// packet until the connection was open.
    pub connect: LatencySummary,
    /// HTTPS over HTTP/1.1 only: TLS handshake time of every connection opened (after its TCP connect).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls_handshake: Option<LatencySummary>,
    /// HTTP/2 only: the setup of every connection opened, from its TCP connect until the server's SETTINGS
    /// arrived (the TLS handshake included, for https://): what a connection costs before its first stream.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http2_setup: Option<LatencySummary>,
    /// HTTP/3 only: what the QUIC stack counted over the run's connections.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quic: Option<QuicCounts>,
    /// One entry per second of the measured window.
    pub timeline: Vec<Second>,
    /// The latency histogram of each block of the window, the drain's seconds included: a block is a second, or
    /// a power of two seconds in a run too long for [`MOST_BLOCKS`] of one second. Requests in a row are not
    /// independent (a pause delays every request due during it), and the spread of the tail from block to block
    /// is what the bounds of a percentile rest on. Empty in results written before they were kept.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub latency_blocks: Vec<LatencyBlock>,
    /// The load generator's own resource use.
    pub client: ClientUsage,
    /// A load run from several agents (`--agents`): each one's host, share, clock and own figures. Empty for a
    /// run from one process.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub agents: Vec<AgentResult>,
    /// `shootout load --find-rate`: the search that chose this result's rate (this result is its capacity's
    /// probe, or its last one when none met the objectives).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search: Option<crate::search::SearchRecord>,
    /// The hosts a request would have gone to, off the run's server (`errors.off_origin`), a few at most.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub off_origin: Vec<String>,
    /// `shootout load --profile-pid`: where the server's CPU went while it was loaded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<crate::profile::LoadProfile>,
}

/// One agent of a load run from several: where it ran, its clock, and its own figures. Its percentiles are its
/// own; the run's are computed from the merged histograms, never from these.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentResult {
    /// Its index, which is also its share: segment `index` of as many as there are agents.
    pub index: u32,
    /// The host it ran on.
    pub host: String,
    /// The CPUs it could use.
    pub cpus: u32,
    /// Its wall clock minus the coordinator's, in milliseconds (NTP-style, from the least-delayed round trip).
    pub clock_offset_ms: f64,
    /// The offset is true to within this, in milliseconds (half that round trip).
    pub clock_error_ms: f64,
    /// What it measured over its whole run; absent for an agent lost before it sent its totals (the seconds it
    /// sent still count in the run's figures).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured: Option<AgentMeasured>,
    /// Why it stopped before the others, when it did; what it sent before counts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lost: Option<String>,
}

/// One agent's own figures over its whole run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentMeasured {
    /// When its measured window started, in milliseconds after the earliest agent's, by the coordinator's clock:
    /// the spread of the agents' starts.
    pub start_ms: f64,
    /// Its requests.
    pub requests: RequestCounts,
    /// Its median latency, µs.
    pub p50_us: u64,
    /// Its 99th percentile latency, µs.
    pub p99_us: u64,
    /// Its own CPU, and whether it was the bottleneck.
    pub client: ClientUsage,
}

/// Name and version of the measuring program.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolInfo {
    /// `shootout`.
    pub name: String,
    /// The crate version.
    pub version: String,
}

/// Counts of requests by outcome. `total = ok + http_errors + failed`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequestCounts {
    /// Requests that ended with a response or a transport failure, in the measured window.
    pub total: u64,
    /// Responses with a status below 400.
    pub ok: u64,
    /// Responses with a status of 400 or more.
    pub http_errors: u64,
    /// Requests with no complete response (see `errors`).
    pub failed: u64,
    /// Requests sent during the warm-up and not counted anywhere else.
    pub warmup: u64,
    /// Of `total`, those that ended after the measured window (in the drain): they are in the latency and in
    /// these counts, but no rate counts them.
    #[serde(default)]
    pub after_window: u64,
    /// Of `total`, requests due in the warm-up that were still unanswered when the measured window ended: they
    /// waited through all of it, so they are counted (in `after_window` too), with their latency from when they
    /// fell due. Without them, users a server never answered would vanish from every figure.
    #[serde(default)]
    pub held_over: u64,
    /// Not in `total`: requests still in flight when a capacity search's probe stopped waiting for them, its
    /// verdict settled whatever they did (each answered at once or failed at its deadline, every objective held).
    /// They are in the latency at their wait so far (at least that long), in no other count.
    #[serde(default)]
    pub left_out: u64,
    /// Scenarios: of the responses (`ok + http_errors`), those that failed a check (see `failed_checks`).
    #[serde(default)]
    pub checks_failed: u64,
    /// Of the responses, the redirects followed (each hop is a response of the request that led to it, its 3xx
    /// counted in `status_counts`).
    #[serde(default)]
    pub redirects: u64,
}

/// Connections opened and closed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConnectionCounts {
    /// TCP connections successfully established in the measured window.
    pub opened: u64,
    /// Keep-alive connections the server ended cleanly between requests (`Connection: close`, or EOF while idle);
    /// each is followed by a reconnect.
    pub closed_by_server: u64,
}

/// What QUIC's own stack (`quinn-proto`) counted over an HTTP/3 run's connections, each over its whole life (the
/// warm-up included): what is new to QUIC beside the figures every protocol has.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct QuicCounts {
    /// Connections whose handshake completed.
    pub handshakes: u64,
    /// Of them, those that sent requests as 0-RTT data the server accepted (none: the client does not resume
    /// sessions with early data, so every handshake takes its full round trip).
    pub zero_rtt: u64,
    /// QUIC packets the client sent.
    pub packets_sent: u64,
    /// Of them, those declared lost (their frames were sent again in new packets).
    pub packets_lost: u64,
    /// The bytes of the packets declared lost.
    pub bytes_lost: u64,
    /// Times the congestion controller cut its window on a loss.
    pub congestion_events: u64,
    /// UDP datagrams sent.
    pub datagrams_sent: u64,
    /// UDP datagrams received.
    pub datagrams_received: u64,
}

impl QuicCounts {
    /// True when nothing was counted (no HTTP/3 connection).
    pub fn is_empty(&self) -> bool {
        *self == QuicCounts::default()
    }
}

impl std::ops::AddAssign<&QuicCounts> for QuicCounts {
    fn add_assign(&mut self, other: &QuicCounts) {
        self.handshakes += other.handshakes;
        self.zero_rtt += other.zero_rtt;
        self.packets_sent += other.packets_sent;
        self.packets_lost += other.packets_lost;
        self.bytes_lost += other.bytes_lost;
        self.congestion_events += other.congestion_events;
        self.datagrams_sent += other.datagrams_sent;
        self.datagrams_received += other.datagrams_received;
    }
}

/// Rates over the measured window, each of what happened inside it: a response that arrived after sending
/// stopped is in the latency and the counts, never in a rate.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Throughput {
    /// The completed rate: responses (any status) that arrived inside the window, per second of it, whenever
    /// their request fell due (so a warm-up's requests answered inside the window count, and a backlog answered
    /// after it does not).
    pub requests_per_s: f64,
    /// Bytes read inside the window, per second of it.
    pub bytes_per_s: f64,
    /// Mean number of requests in flight inside the window: the time each request was outstanding there (from
    /// when it was due to its end), added up, over the window's length. In the closed model it is at most the
    /// connections (streams, for HTTP/2).
    #[serde(default)]
    pub concurrency: f64,
}

/// The results of one named request of a scenario.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NamedResult {
    /// The request's name.
    pub name: String,
    /// Outcomes.
    pub requests: RequestCounts,
    /// Responses per status.
    pub status_counts: BTreeMap<String, u64>,
    /// Failures per kind.
    pub errors: BTreeMap<ErrorKind, u64>,
    /// HTTP/2: requests ended by RST_STREAM, per error code (as in [`LoadResult::stream_resets`]).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub stream_resets: BTreeMap<String, u64>,
    /// Latency, from when each was due.
    pub latency: LatencySummary,
}

/// Responses to one request that failed one check the same way.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FailedCheck {
    /// The request's name.
    pub request: String,
    /// What it expects (`status 200`, `a body containing "Welcome"`, `a value from header Location`).
    pub expected: String,
    /// What came instead (`302`, `status 200 without it`).
    pub got: String,
    /// How many responses.
    pub count: u64,
}

/// How well an open-model run kept to its schedule.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Sends {
    /// Requests that fell due in the measured window.
    pub due: u64,
    /// Requests actually written.
    pub sent: u64,
    /// Of those, written more than 1 ms after they were due (no free connection, or a busy client).
    pub late: u64,
    /// The offered rate: requests due per second, on average, as configured.
    pub offered_per_s: f64,
    /// The sent rate: requests written inside the window, per second of it (results before it was named so:
    /// `achieved_per_s`, then `sent / duration_s`).
    #[serde(alias = "achieved_per_s")]
    pub sent_per_s: f64,
}

/// One percentile of a distribution.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Percentile {
    /// The percentile, 0 to 100 (for example 99.9).
    pub percentile: f64,
    /// The value at that percentile, in microseconds (HDR histogram, 3 significant digits).
    pub us: u64,
}

/// A distribution of durations in microseconds, with its raw histogram.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatencySummary {
    /// Number of recorded values.
    pub count: u64,
    /// Arithmetic mean (0 when empty).
    pub mean_us: f64,
    /// Population standard deviation (0 when empty).
    pub stdev_us: f64,
    /// Smallest value (0 when empty).
    pub min_us: u64,
    /// Largest value (0 when empty).
    pub max_us: u64,
    /// The percentiles of ab's table: 50 66 75 80 90 95 98 99 99.9 99.99 100.
    pub percentiles: Vec<Percentile>,
    /// The full HDR histogram, V2 deflate-compressed and base64-encoded (the HdrHistogram log format), so
    /// histograms can be merged exactly and any percentile recomputed.
    pub histogram: String,
}

/// The most latency blocks a result keeps ([`LoadResult::latency_blocks`]): a longer run's blocks are longer.
pub const MOST_BLOCKS: usize = 64;

/// The latencies recorded in a few consecutive seconds of a run (by when each request ended).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatencyBlock {
    /// Its first second, counted from the start of the measured window.
    pub second: u32,
    /// How many seconds it spans: 1, or a power of two.
    pub seconds: u32,
    /// Its HDR histogram, as [`LatencySummary::histogram`] is written.
    pub histogram: String,
}

/// One second of the measured window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Second {
    /// Seconds since the start of the measured window (0 is the first second).
    pub second: u32,
    /// Requests that ended in this second.
    pub requests: u64,
    /// Of those, transport failures plus HTTP errors (status >= 400).
    pub errors: u64,
    /// Median latency of the requests that ended in this second (absent when none recorded a latency).
    pub p50_us: Option<u64>,
    /// 99th percentile latency of the requests that ended in this second.
    pub p99_us: Option<u64>,
    /// The level asked for in the middle of this second: users (closed model) or requests per second (open).
    pub target: f64,
}

/// The busy share of its CPUs from which a process (the load generator, or a server) is the bottleneck.
pub const SATURATION: f64 = 0.9;

/// What the load generator's worker threads did their network I/O with.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IoBackend {
    /// Readiness events from `epoll`, and a `read` or `write` system call for each transfer.
    #[default]
    Epoll,
    /// io_uring: sends and receives queued in shared rings, one `io_uring_enter` per loop turn.
    IoUring,
    /// Agents of one load used different ones (a result merged from agents only).
    Mixed,
}

impl IoBackend {
    /// Its name, as the result and `--io` spell it.
    pub fn name(self) -> &'static str {
        match self {
            IoBackend::Epoll => "epoll",
            IoBackend::IoUring => "io_uring",
            IoBackend::Mixed => "mixed",
        }
    }
}

/// The load generator's own CPU use, to tell when the client rather than the server was the limit.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ClientUsage {
    /// Worker threads that generated load.
    pub threads: u32,
    /// CPUs this process was allowed to run on.
    pub cpus_available: u32,
    /// User CPU seconds of the whole process during the measured window.
    pub user_s: f64,
    /// System (kernel) CPU seconds of the whole process during the measured window.
    pub sys_s: f64,
    /// `user_s + sys_s`.
    pub cpu_s: f64,
    /// CPU used as a fraction of what the worker threads could have used:
    /// `cpu_s / (duration_s * min(threads, cpus_available))`. For a load run by several agents, the busiest
    /// host's: the agents on one host are judged together against its CPUs (threads and CPU seconds are summed
    /// over the agents, CPUs counted once per host).
    pub busy: f64,
    /// Seconds the worker threads spent ready to run but waiting for a CPU (another process, or the server on a
    /// shared core, had it), added over the threads.
    #[serde(default)]
    pub queued_s: f64,
    /// `queued_s` as a fraction of the same capacity as `busy`.
    #[serde(default)]
    pub queued: f64,
    /// The CPU quota over the client's process, in CPUs (0: none): `busy` and `queued` are of min(threads, CPUs,
    /// quota).
    #[serde(default)]
    pub quota_cpus: f64,
    /// The share of the quota's periods in the measured window in which it ran out (0 to 1; 0 without a quota).
    #[serde(default)]
    pub throttled: f64,
    /// True when `busy >= 0.9`, or `busy + queued >= 0.9` (the client wanted its CPUs and did not get them): the
    /// result then measures the client, not the server.
    pub saturated: bool,
    /// What the worker threads did their I/O with (results older than this field: epoll).
    #[serde(default)]
    pub io: IoBackend,
}
