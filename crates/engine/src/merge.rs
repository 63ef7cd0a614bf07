//! Merging parts of one load into its result, in one place: the threads of one process, or the agents of a load
//! split into segments ([`Segment`](shootout_model::Segment)). Free of I/O: a coordinator that holds its agents'
//! [`Totals`] and per-second [`Interval`]s merges them here into the [`LoadResult`] one process would have made.
//!
//! - [`Seconds`]: per-second intervals of several parts summed by second index, each second handed on once every
//!   part has reported it (histograms add; percentiles never do).
//! - [`Totals`]: what one process measured over its whole run, with the facts about the run that the result
//!   needs; it crosses a process boundary with serde, exactly, and adds up with [`Totals::add`].
//! - [`Merge`]: the coordinator's side: N agents' seconds and totals in, one [`LoadResult`] out, through the same
//!   [`assemble`] a local run uses.

use crate::quota::QuotaCount;
use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};
use shootout_metrics::{summarize, Interval, Recorder, StreamResets, Timeline};
use shootout_model::result::{FailedCheck, ToolInfo};
use shootout_model::{
    ClientUsage, IoBackend, LoadResult, NamedResult, Pacing, Sends, StopCondition, Throughput, SCHEMA_VERSION,
};

use crate::due_times::Ramp;
use crate::http::h2::frame::error_name;
use crate::plan::Plan;

/// A client this busy (or busy and queued for a CPU together) measures itself rather than the server.
pub use shootout_model::SATURATION;

/// Per-second intervals from several parts merged by second index, handed on in order once complete.
///
/// A second is complete when every part has reported it or a later one, or has finished. That is exact because
/// every part reports its seconds in order, each once, empty ones included (the engine's workers do, and so does
/// [`run_observed`](crate::run::run_observed) for its agent): once a part has reported second s, nothing more
/// of s or before can come from it. A part that lags holds back the seconds after its last one, never loses them.
#[derive(Debug)]
pub struct Seconds {
    /// The last second each part reported, if any.
    latest: Vec<Option<u32>>,
    /// Parts that will report nothing more.
    finished: Vec<bool>,
    /// Seconds not yet complete, as merged so far.
    pending: BTreeMap<u32, Interval>,
    /// Complete seconds.
    timeline: Timeline,
}

impl Seconds {
    /// Nothing reported yet by any of `parts` parts.
    pub fn new(parts: usize) -> Seconds {
        Seconds {
            latest: vec![None; parts],
            finished: vec![false; parts],
            pending: BTreeMap::new(),
            timeline: Timeline::new(),
        }
    }

    /// Part `part` reports `interval`.
    pub fn add(&mut self, part: usize, interval: Interval) {
        let latest = &mut self.latest[part];
        *latest = Some(latest.map_or(interval.second, |l| l.max(interval.second)));
        match self.pending.get_mut(&interval.second) {
            Some(merged) => merged.absorb(&interval),
            None => {
                self.pending.insert(interval.second, interval);
            }
        }
    }

    /// Part `part` will report nothing more (it finished, or was lost).
    pub fn finish(&mut self, part: usize) {
        self.finished[part] = true;
    }

    /// Hands every second complete by now to `on_second`, in order, and keeps it in the timeline.
    pub fn flush(&mut self, on_second: &mut dyn FnMut(&Interval)) {
        while let Some(&second) = self.pending.keys().next() {
            let complete = (0..self.latest.len())
                .all(|part| self.finished[part] || self.latest[part].is_some_and(|latest| latest >= second));
            if !complete {
                break;
            }
            let (_, merged) = self.pending.pop_first().expect("a pending second");
            on_second(&merged);
            self.timeline.add(merged);
        }
    }

    /// Every second, complete or not (once every part has finished, all are complete), as the result's timeline.
    pub fn into_timeline(mut self) -> Timeline {
        while let Some((_, merged)) = self.pending.pop_first() {
            self.timeline.add(merged);
        }
        self.timeline
    }
}

/// What one process measured over its run (or several, added up), with what the result needs to know about the
/// run: all a coordinator needs from an agent at the end, besides its seconds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Totals {
    /// Everything counted.
    pub recorder: Recorder,
    /// Scenarios: the same per named request, in the workload's order (empty for a plain load).
    pub per_request: Vec<Recorder>,
    /// The measured window (added up: the longest).
    pub duration: Duration,
    /// From the window's end to the end of the last counted request (added up: the longest).
    #[serde(default)]
    pub drain: Duration,
    /// When the measured window started, by the wall clock (added up: the earliest).
    pub started: SystemTime,
    /// Stopped early (added up: any was).
    pub interrupted: bool,
    /// Worker threads (added up: summed).
    pub threads: u32,
    /// CPUs the process could run on (added up: once per host, summed over hosts).
    pub cpus_available: u32,
    /// The CPU quota over the process, in CPUs (0: none) (added up: the tightest of the parts that have one).
    #[serde(default)]
    pub quota_cpus: f64,
    /// The quota's periods in the measured window (added up: summed).
    #[serde(default)]
    pub periods: u64,
    /// Of those, the periods in which it ran out and held the threads off their CPUs (added up: summed).
    #[serde(default)]
    pub throttled_periods: u64,
    /// User CPU time of the process in the measured window (added up: summed).
    pub user: Duration,
    /// System CPU time of the process in the measured window (added up: summed).
    pub system: Duration,
    /// CPU used as a fraction of what the threads could have used, `cpu / (duration · min(threads, cpus))` (added
    /// up: on one host, of the parts' CPU time together against its CPUs, since they share them; over hosts, the
    /// busiest host's, since one saturated host is enough for the result to measure the client).
    pub busy: f64,
    /// Time the worker threads waited for a CPU in the measured window, all threads together (added up: summed).
    #[serde(default)]
    pub queued: Duration,
    /// That time as a fraction of what the threads could have used, like `busy` (added up: like `busy`).
    #[serde(default)]
    pub queued_share: f64,
    /// What the workers did their I/O with (added up: the same, or mixed when parts differ).
    #[serde(default)]
    pub io: IoBackend,
}

impl Totals {
    /// The CPUs `threads` threads on `cpus` CPUs under a quota of `quota` CPUs (0: none) can use.
    pub fn capacity(threads: u32, cpus: u32, quota: f64) -> f64 {
        let usable = f64::from(threads.min(cpus));
        if quota > 0.0 {
            usable.min(quota)
        } else {
            usable
        }
    }

    /// The fraction of `cpu` used of what `capacity` CPUs ([`Totals::capacity`]) could have given in `duration`.
    pub fn busy(cpu: Duration, duration: Duration, capacity: f64) -> f64 {
        let capacity = duration.as_secs_f64() * capacity;
        if capacity > 0.0 {
            cpu.as_secs_f64() / capacity
        } else {
            0.0
        }
    }

    /// The client's own resource use, as the result reports it.
    pub fn client_usage(&self) -> ClientUsage {
        ClientUsage {
            threads: self.threads,
            cpus_available: self.cpus_available,
            user_s: self.user.as_secs_f64(),
            sys_s: self.system.as_secs_f64(),
            cpu_s: (self.user + self.system).as_secs_f64(),
            busy: self.busy,
            queued_s: self.queued.as_secs_f64(),
            queued: self.queued_share,
            quota_cpus: self.quota_cpus,
            throttled: QuotaCount { periods: self.periods, throttled: self.throttled_periods, cpus: self.quota_cpus }
                .throttled_share(),
            saturated: self.busy >= SATURATION || self.busy + self.queued_share >= SATURATION,
            io: self.io,
        }
    }

    /// Adds `other`, a part that ran on another host, exactly (each field as its documentation says).
    pub fn add(&mut self, other: &Totals) {
        self.add_measured(other);
        self.cpus_available += other.cpus_available;
        self.busy = self.busy.max(other.busy);
        self.queued_share = self.queued_share.max(other.queued_share);
    }

    /// Adds `other`, a part that ran on the same host: its CPUs are these ones, so the parts' CPU time together
    /// is judged against them (three agents pinned to one core can each look a third busy while it is full).
    pub fn add_same_host(&mut self, other: &Totals) {
        self.add_measured(other);
        self.cpus_available = self.cpus_available.max(other.cpus_available);
        let capacity = Totals::capacity(self.threads, self.cpus_available, self.quota_cpus);
        self.busy = Totals::busy(self.user + self.system, self.duration, capacity);
        self.queued_share = Totals::busy(self.queued, self.duration, capacity);
    }

    /// Adds what both ways of adding share: counts, histograms, the window, threads and CPU time.
    fn add_measured(&mut self, other: &Totals) {
        self.recorder += &other.recorder;
        if self.per_request.is_empty() {
            self.per_request.clone_from(&other.per_request);
        } else {
            self.per_request.iter_mut().zip(&other.per_request).for_each(|(mine, theirs)| *mine += theirs);
        }
        self.duration = self.duration.max(other.duration);
        self.drain = self.drain.max(other.drain);
        self.started = self.started.min(other.started);
        self.interrupted |= other.interrupted;
        self.threads += other.threads;
        self.quota_cpus = match (self.quota_cpus, other.quota_cpus) {
            (0.0, theirs) => theirs,
            (mine, 0.0) => mine,
            (mine, theirs) => mine.min(theirs),
        };
        self.periods += other.periods;
        self.throttled_periods += other.throttled_periods;
        self.user += other.user;
        self.system += other.system;
        self.queued += other.queued;
        if self.io != other.io {
            self.io = IoBackend::Mixed;
        }
    }
}

/// A coordinator's merge of the agents that ran the segments of one load: their seconds as they arrive, their
/// totals at the end, and the result.
#[derive(Debug)]
pub struct Merge {
    seconds: Seconds,
    /// Per host, in the order first heard from, the totals of its agents.
    hosts: Vec<(String, Totals)>,
}

impl Merge {
    /// Nothing yet from any of `agents` agents (numbered `0..agents`, as their segments are).
    pub fn new(agents: usize) -> Merge {
        Merge { seconds: Seconds::new(agents), hosts: Vec::new() }
    }

    /// Agent `agent` reports one second (seconds since the start of the measured window, by its own clock
    /// translated to the coordinator's start).
    pub fn add_second(&mut self, agent: usize, interval: Interval) {
        self.seconds.add(agent, interval);
    }

    /// Agent `agent`, which ran on `host`, reports its totals: it is done.
    pub fn add_totals(&mut self, agent: usize, host: &str, totals: &Totals) {
        self.seconds.finish(agent);
        match self.hosts.iter_mut().find(|(name, _)| name == host) {
            Some((_, sum)) => sum.add_same_host(totals),
            None => self.hosts.push((host.to_string(), totals.clone())),
        }
    }

    /// Agent `agent` was lost: the seconds it reported count, and no later second waits for it.
    pub fn lost(&mut self, agent: usize) {
        self.seconds.finish(agent);
    }

    /// Hands every merged second complete by now to `on_second`, in order (for a live view of the whole load).
    pub fn flush(&mut self, on_second: &mut dyn FnMut(&Interval)) {
        self.seconds.flush(on_second);
    }

    /// The result of the whole load, as one process would have written it; `plan` is the whole load's (its
    /// options without a segment). `None` when no agent sent its totals.
    pub fn result(self, plan: &Plan) -> Option<LoadResult> {
        let mut hosts = self.hosts.into_iter().map(|(_, totals)| totals);
        let mut totals = hosts.next()?;
        hosts.for_each(|other| totals.add(&other));
        Some(assemble(plan, &totals, &self.seconds.into_timeline()))
    }
}

/// The result document of `plan`'s run, from its totals and its timeline: the one place a [`LoadResult`] is made,
/// for a local run and for a merge of agents alike.
pub fn assemble(plan: &Plan, totals: &Totals, timeline: &Timeline) -> LoadResult {
    let options = &plan.options;
    // One segment's result shows its share of the level asked for (the users' share only on average).
    let of = options.segment.map_or(1, |segment| segment.of.max(1));
    let ramp = Ramp::level(options).scaled(1.0 / f64::from(of));
    let total = &totals.recorder;
    let seconds = totals.duration.as_secs_f64();
    let requests = total.request_counts();
    let per_second = |count: u64| if seconds > 0.0 { count as f64 / seconds } else { 0.0 };
    let http2 = options.protocol == shootout_model::Protocol::Http2;
    LoadResult {
        schema_version: SCHEMA_VERSION,
        tool: ToolInfo { name: "shootout".into(), version: env!("CARGO_PKG_VERSION").into() },
        options: options.clone(),
        address: plan.address.to_string(),
        started_at: humantime::format_rfc3339_micros(totals.started).to_string(),
        ended_at: humantime::format_rfc3339_micros(totals.started + totals.duration).to_string(),
        duration_s: seconds,
        drain_s: totals.drain.as_secs_f64(),
        interrupted: totals.interrupted,
        requests,
        status_counts: total.status_counts(),
        errors: total.error_counts(),
        stream_resets: named_codes(total.stream_resets()),
        connections: total.connection_counts(),
        bytes_received: total.bytes_received,
        bytes_sent: total.bytes_sent,
        throughput: Throughput {
            requests_per_s: per_second(total.window.responses),
            bytes_per_s: per_second(total.window.bytes_received),
            concurrency: per_second(total.window.in_flight_us) / 1e6,
        },
        latency: summarize(&total.latency),
        service_time: summarize(&total.service),
        by_request: totals
            .per_request
            .iter()
            .zip(&plan.workload.requests)
            .map(|(recorder, request)| NamedResult {
                name: request.name.clone(),
                requests: recorder.request_counts(),
                status_counts: recorder.status_counts(),
                errors: recorder.error_counts(),
                stream_resets: named_codes(recorder.stream_resets()),
                latency: summarize(&recorder.latency),
            })
            .collect(),
        failed_checks: failed_checks(plan, total),
        sends: match options.pacing {
            Pacing::Closed => None,
            Pacing::Open { rate, .. } => {
                let sends = total.sends();
                let offered_per_s = match options.stop {
                    StopCondition::Duration(window) => ramp.mean_over(window),
                    StopCondition::Requests(_) => rate,
                };
                Some(Sends { offered_per_s, sent_per_s: per_second(total.window.sent), ..sends })
            }
        },
        connect: summarize(&total.connect),
        tls_handshake: (plan.tls.is_some() && options.protocol == shootout_model::Protocol::Http1)
            .then(|| summarize(&total.handshake)),
        http2_setup: http2.then(|| summarize(&total.handshake)),
        quic: (options.protocol == shootout_model::Protocol::Http3).then_some(total.quic),
        // The drain's seconds asked for nothing.
        timeline: timeline.to_seconds(seconds.ceil() as u32, |second| {
            let middle = Duration::from_secs(u64::from(second)) + Duration::from_millis(500);
            if middle.as_secs_f64() < seconds || seconds == 0.0 {
                ramp.at(middle)
            } else {
                0.0
            }
        }),
        latency_blocks: timeline.to_blocks(),
        client: totals.client_usage(),
        agents: Vec::new(),
        search: None,
        off_origin: total.off_origin().iter().cloned().collect(),
        profile: None,
    }
}

/// Scenarios: the failed checks of `total`, described from `plan`'s requests, most first.
fn failed_checks(plan: &Plan, total: &Recorder) -> Vec<FailedCheck> {
    let workload = &plan.workload;
    let mut checks: Vec<FailedCheck> = total
        .failed_checks()
        .iter()
        .map(|(&(request, check, status), &count)| {
            let (expected, got) = workload.describe_check(request as usize, check, status);
            let request =
                workload.requests.get(request as usize).map_or_else(|| request.to_string(), |r| r.name.clone());
            FailedCheck { request, expected, got, count }
        })
        .collect();
    checks.sort_by_key(|c| std::cmp::Reverse(c.count));
    checks
}

/// RST_STREAM counts keyed by the names of their error codes, as results show them.
fn named_codes(resets: &StreamResets) -> BTreeMap<String, u64> {
    resets.by_code().into_iter().map(|(code, n)| (reset_name(code), n)).collect()
}

/// The name of a stream reset's error code: HTTP/2's codes run from 0 to 0xd and HTTP/3's from 0x100, so one
/// number names one code whichever protocol the run spoke.
fn reset_name(code: u32) -> String {
    if code >= 0x100 {
        crate::http::h3::frame::error_name(u64::from(code))
    } else {
        error_name(code)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn interval(second: u32, latencies: &[u64]) -> Interval {
        let mut interval = Interval::new(second);
        latencies.iter().for_each(|&us| interval.record(Some(us), false));
        interval
    }

    #[test]
    fn a_second_is_handed_on_once_every_part_has_reported_it() {
        let mut seconds = Seconds::new(2);
        let mut out = Vec::new();
        seconds.add(0, interval(0, &[100]));
        seconds.add(0, interval(1, &[100]));
        seconds.flush(&mut |i| out.push((i.second, i.requests)));
        assert!(out.is_empty(), "part 1 has reported nothing yet");
        seconds.add(1, interval(0, &[300, 300]));
        seconds.flush(&mut |i| out.push((i.second, i.requests)));
        assert_eq!(out, [(0, 3)], "second 1 still waits for part 1");
        seconds.finish(1);
        seconds.flush(&mut |i| out.push((i.second, i.requests)));
        assert_eq!(out, [(0, 3), (1, 1)], "a finished part holds nothing back");
        let timeline = seconds.into_timeline().to_seconds(2, |_| 0.0);
        assert_eq!((timeline[0].requests, timeline[0].p50_us, timeline[0].p99_us), (3, Some(300), Some(300)));
    }

    #[test]
    fn totals_cross_a_process_boundary_and_add_up() {
        let mut recorder = Recorder::new();
        recorder.response(200, 1_000, 900);
        recorder.failure(shootout_model::ErrorKind::StreamReset, None, None);
        recorder.stream_reset(0x2);
        let part = |busy, duration| Totals {
            recorder: recorder.clone(),
            per_request: Vec::new(),
            duration: Duration::from_millis(duration),
            drain: Duration::ZERO,
            started: SystemTime::UNIX_EPOCH + Duration::from_secs(duration),
            io: IoBackend::IoUring,
            interrupted: false,
            threads: 2,
            cpus_available: 4,
            quota_cpus: 0.0,
            periods: 0,
            throttled_periods: 0,
            user: Duration::from_millis(300),
            system: Duration::from_millis(200),
            busy,
            queued: Duration::from_millis(100),
            queued_share: 0.025,
        };
        let a = part(0.5, 2_000);
        let back: Totals = serde_json::from_str(&serde_json::to_string(&a).unwrap()).unwrap();
        assert_eq!(back, a);
        let mut sum = a.clone();
        sum.add(&part(0.95, 2_100));
        assert_eq!(sum.recorder.request_counts().total, 4);
        assert_eq!(named_codes(sum.recorder.stream_resets()), [("INTERNAL_ERROR".to_string(), 2)].into());
        assert_eq!((sum.duration, sum.started), (Duration::from_millis(2_100), a.started), "the longest, the earliest");
        assert_eq!((sum.threads, sum.cpus_available, sum.user), (4, 8, Duration::from_millis(600)));
        assert_eq!(sum.busy, 0.95, "one saturated agent is enough");
        let mut shared = a.clone();
        shared.add_same_host(&part(0.5, 2_000));
        assert_eq!((shared.threads, shared.cpus_available), (4, 4), "one host's CPUs, counted once");
        assert_eq!(shared.busy, 1.0 / (2.0 * 4.0), "1 s of CPU over 2 s on 4 CPUs, both parts together");
        assert_eq!(shared.queued_share, 0.2 / (2.0 * 4.0), "0.2 s queued over 2 s on 4 CPUs");
        let starved = Totals { busy: 0.6, queued_share: 0.35, ..a.clone() };
        assert!(starved.client_usage().saturated, "a client that wanted its CPUs and waited for them is the limit");
        // Under a quota of a quarter of a CPU, its 2 threads on 4 CPUs could use a quarter of a CPU: 0.5 s of CPU in
        // 2 s is all of it; the same part with a quota of its own adds its periods and keeps the tighter quota.
        let held = Totals { quota_cpus: 0.25, periods: 20, throttled_periods: 18, ..a.clone() };
        let mut both = held.clone();
        both.add_same_host(&Totals { quota_cpus: 0.5, periods: 20, throttled_periods: 2, ..a });
        assert_eq!((both.quota_cpus, both.periods, both.throttled_periods), (0.25, 40, 20));
        assert_eq!(both.busy, 1.0 / (2.0 * 0.25), "1 s of CPU over 2 s on a quarter of a CPU");
        assert_eq!((held.client_usage().quota_cpus, held.client_usage().throttled), (0.25, 0.9));
        assert_eq!(Totals::capacity(2, 4, 0.0), 2.0);
        assert_eq!(Totals::capacity(2, 4, 3.0), 2.0, "a quota above what the threads can use holds nothing");
    }
}
