//! [`run`]: starts the worker threads, gathers their per-second reports, and assembles the [`LoadResult`].

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use shootout_metrics::{Interval, Recorder, Timeline};
use shootout_model::{LoadOptions, LoadResult, Pacing, Protocol, Segment, StopCondition};
use thiserror::Error;

use crate::cpu::CpuTimes;
use crate::due_times::{Ramp, Schedule};
use crate::merge::{assemble, Seconds, Totals};
use crate::pacer::Pacer;
use crate::plan::Plan;
use crate::quota::{Quota, QuotaCount};
use crate::shared::{segment_share, share, Part, Shared};
use crate::tally::{Ends, Report};
use crate::worker::run_worker;

/// How often the progress callback is called.
const PROGRESS_EVERY: Duration = Duration::from_millis(250);
pub use crate::merge::SATURATION;

/// A view of the run in progress, for a progress bar.
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    /// Time since sending started.
    pub elapsed: Duration,
    /// False during the warm-up.
    pub measuring: bool,
    /// Requests ended in completed seconds of the measured window.
    pub requests: u64,
    /// Errors among them.
    pub errors: u64,
    /// Requests per second in the last completed second.
    pub rate: f64,
}

/// Why a run could not take place at all.
#[derive(Debug, Error)]
pub enum RunError {
    /// The server could not be reached before the run started.
    #[error("cannot connect to {address} ({reason}): is the server running and listening there?")]
    Unreachable {
        /// The address tried.
        address: SocketAddr,
        /// What connect said.
        reason: std::io::Error,
    },
    /// The TLS handshake failed before the run started.
    #[error("TLS handshake with {address} failed: {reason}")]
    Tls {
        /// The address tried.
        address: SocketAddr,
        /// What went wrong, with the fix.
        reason: String,
    },
    /// HTTP/2 was asked for and the server does not speak it.
    #[error("--http2: the server at {address} does not speak HTTP/2: {reason}")]
    NoHttp2 {
        /// The address tried.
        address: SocketAddr,
        /// What it did instead, with the way out.
        reason: String,
    },
    /// HTTP/3 was asked for and no QUIC handshake offering h3 completed.
    #[error("--http3: the server at {address} does not speak HTTP/3: {reason}")]
    NoHttp3 {
        /// The address tried.
        address: SocketAddr,
        /// What happened instead, with the way out.
        reason: String,
    },
    /// The I/O asked for with `--io` cannot be had.
    #[error("{0}")]
    Io(String),
    /// A worker could not start.
    #[error("cannot start a worker thread: {0}")]
    Worker(std::io::Error),
}

/// Runs the plan to its end (or until `stop` is set) and returns the result document.
pub fn run(plan: &Plan, stop: Arc<AtomicBool>, on_progress: &mut dyn FnMut(&Progress)) -> Result<LoadResult, RunError> {
    run_observed(plan, stop, on_progress, &mut |_| {}).map(|(result, _)| result)
}

/// Runs the plan as [`run`] does, and also hands each second of the measured window to `on_second` as soon as
/// it is complete (every worker thread has reported it or a later second, or has finished; see [`Seconds`]), in
/// order, every second from 0 (empty ones too), merged over the threads. Returns the result and the run's
/// [`Totals`]. An agent that runs one segment of a load sends its coordinator exactly these seconds and totals,
/// and the coordinator merges them with [`Merge`](crate::merge::Merge).
pub fn run_observed(
    plan: &Plan,
    stop: Arc<AtomicBool>,
    on_progress: &mut dyn FnMut(&Progress),
    on_second: &mut dyn FnMut(&Interval),
) -> Result<(LoadResult, Totals), RunError> {
    crate::preflight::check(plan)?;
    let options = &plan.options;
    let segment = options.segment.unwrap_or(Segment::WHOLE);
    // More threads than this process's connections would leave some with nothing to do.
    let connections = segment_share(options.most_connections(), segment);
    let threads = u64::from(options.threads).clamp(1, connections.max(1)) as usize;
    // A run given its start (an agent of several) keeps to it, however long this process took to get there: its
    // due times are the whole run's, from the shared instant.
    let start = match plan.start_at {
        Some(at) => {
            std::thread::sleep(at.saturating_duration_since(Instant::now()));
            at
        }
        None => Instant::now(),
    };
    let wall_start = SystemTime::now() - Instant::now().saturating_duration_since(start);
    let measure_start = start + options.warmup;
    let ramp = Ramp::level(options);
    let shared = Shared {
        address: plan.address,
        workload: plan.workload.clone(),
        seed: wall_start.duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64),
        delay: options.delay.filter(|_| options.pacing == Pacing::Closed),
        sequential: options.sequential,
        tls: plan.tls.clone(),
        keepalive: options.keepalive,
        io: crate::uring::choose(options, plan.tls.is_some(), crate::uring::available).map_err(RunError::Io)?,
        streams: match options.protocol {
            Protocol::Http1 => 0,
            Protocol::Http2 | Protocol::Http3 => options.streams.max(1) as usize,
        },
        quic: plan.quic.clone(),
        timeout: options.timeout,
        connect_timeout: options.connect_timeout,
        measure_start,
        send_until: match options.stop {
            StopCondition::Duration(d) => Some(measure_start + d),
            StopCondition::Requests(_) => None,
        },
        stop: stop.clone(),
        stakes: plan.stakes.clone(),
    };
    let pacers = (0..threads)
        .map(|thread| pacer_for(options, &shared, &ramp, Part { segment, thread, threads }, start))
        .collect::<Vec<_>>();

    let quota = Quota::of(std::process::id() as i32);
    let gathered = std::thread::scope(|scope| {
        let (tx, rx) = channel();
        for (thread, pacer) in pacers.into_iter().enumerate() {
            let tx = tx.clone();
            let shared = &shared;
            scope.spawn(move || run_worker(shared, Part { segment, thread, threads }, pacer, tx));
        }
        drop(tx);
        gather(&rx, threads, &shared, &quota, start, on_progress, on_second)
    });
    if let Some(e) = gathered.failure {
        return Err(RunError::Worker(e));
    }
    let cpu = gathered.cpu_end.unwrap_or_else(CpuTimes::now).since(gathered.cpu_start.unwrap_or_default());
    let throttling = quota.count().since(gathered.quota_start);
    let duration = gathered.ended.saturating_duration_since(measure_start);
    let drain = gathered.last_end.saturating_duration_since(gathered.ended);
    let cpus_available = std::thread::available_parallelism().map_or(1, |n| n.get()) as u32;
    let capacity = Totals::capacity(threads as u32, cpus_available, throttling.cpus);
    let totals = Totals {
        recorder: gathered.total,
        per_request: gathered.per_request,
        duration,
        drain,
        started: wall_start + options.warmup,
        interrupted: stop.load(Ordering::Relaxed),
        threads: threads as u32,
        cpus_available,
        quota_cpus: throttling.cpus,
        periods: throttling.periods,
        throttled_periods: throttling.throttled,
        user: cpu.user,
        system: cpu.system,
        busy: Totals::busy(cpu.user + cpu.system, duration, capacity),
        queued: gathered.queued,
        queued_share: Totals::busy(gathered.queued, duration, capacity),
        io: shared.io,
    };
    let result = assemble(plan, &totals, &gathered.timeline);
    Ok((result, totals))
}

/// The pacer of worker `part`: its share of the connections, of the users or rate on `ramp`, and of a request
/// count, all of them nested shares of the whole load ([`share`], [`Part`]). Sending starts at `start`.
fn pacer_for(options: &LoadOptions, shared: &Shared, ramp: &Ramp, part: Part, start: Instant) -> Pacer {
    // A slot is one request in flight: a connection over HTTP/1.1, a stream of one over HTTP/2.
    let streams = shared.streams.max(1);
    let slots = share(options.most_connections().max(1), part) as usize * streams;
    let quota = match options.stop {
        StopCondition::Requests(n) => Some(share(n, part)),
        StopCondition::Duration(_) => None,
    };
    match options.pacing {
        Pacing::Closed => Pacer::closed(ramp.scaled(streams as f64), quota, part, slots, shared.measure_start),
        Pacing::Open { arrival, .. } => {
            let schedule = Schedule::new(
                ramp,
                arrival,
                shared.measure_start,
                start,
                part.arrivals(shared.seed.rotate_left(17)),
                shared.send_until,
                quota,
            );
            Pacer::open(schedule, slots, options.timeout)
        }
    }
}

/// What the coordinator gathered from the workers' reports.
struct Gathered {
    timeline: Timeline,
    total: Recorder,
    per_request: Vec<Recorder>,
    /// The end of the measured window.
    ended: Instant,
    /// When the last counted request ended (after `ended` when the run drained).
    last_end: Instant,
    /// The client's CPU times when measuring started.
    cpu_start: Option<CpuTimes>,
    /// And when the window ended, if it ended at its sending time: its busy share is the window's, not the drain's
    /// (an overdriven HTTP/3 load that drained 8 s after a 3 s window read "203% of 1 CPU").
    cpu_end: Option<CpuTimes>,
    /// Its CPU quota's counts then.
    quota_start: QuotaCount,
    /// How long the workers waited for a CPU while measuring, added up.
    queued: Duration,
    /// Why a worker could not start, if one could not.
    failure: Option<std::io::Error>,
}

/// Receives the reports of `threads` workers until all are done, adding them up; hands each complete second to
/// `on_second`, and calls `on_progress` every [`PROGRESS_EVERY`] (sending started at `start`). Notes the
/// client's CPU times, and its CPU quota's counts, when the warm-up ends, and its CPU times when sending ends.
fn gather(
    reports: &Receiver<(usize, Report)>,
    threads: usize,
    shared: &Shared,
    quota: &Quota,
    start: Instant,
    on_progress: &mut dyn FnMut(&Progress),
    on_second: &mut dyn FnMut(&Interval),
) -> Gathered {
    let measure_start = shared.measure_start;
    let mut seconds = Seconds::new(threads);
    let mut total = Recorder::new();
    let mut per_request: Vec<Recorder> = Vec::new();
    let mut ended = measure_start;
    let mut last_end = measure_start;
    let mut cpu_start = None;
    let mut cpu_end = None;
    let mut quota_start = QuotaCount::default();
    let mut queued = Duration::ZERO;
    let mut failure = None;
    let mut done = 0;
    let mut next_progress = start + PROGRESS_EVERY;
    let mut seen = Progress { elapsed: Duration::ZERO, measuring: false, requests: 0, errors: 0, rate: 0.0 };
    while done < threads {
        let now = Instant::now();
        if cpu_start.is_none() && now >= measure_start {
            cpu_start = Some(CpuTimes::now());
            quota_start = quota.count();
        }
        if let Some(until) = shared.send_until.filter(|_| cpu_end.is_none()) {
            if now >= until {
                cpu_end = Some(CpuTimes::now());
            }
        }
        let mut wait = next_progress.saturating_duration_since(now);
        if cpu_start.is_none() {
            wait = wait.min(measure_start.saturating_duration_since(now));
        } else if let Some(until) = shared.send_until.filter(|_| cpu_end.is_none()) {
            wait = wait.min(until.saturating_duration_since(now));
        }
        match reports.recv_timeout(wait) {
            Ok((thread, Report::Interval(interval))) => {
                seen.requests += interval.requests;
                seen.errors += interval.errors;
                seconds.add(thread, interval);
            }
            Ok((thread, Report::Done(recorder, named, ends))) => {
                total += &recorder;
                if per_request.is_empty() {
                    per_request = named;
                } else {
                    per_request.iter_mut().zip(&named).for_each(|(mine, theirs)| *mine += theirs);
                }
                let interrupted = shared.stop.load(Ordering::Relaxed);
                ended = ended.max(window_end(ends, shared.send_until, interrupted));
                last_end = last_end.max(ends.any);
                queued += ends.queued;
                seconds.finish(thread);
                done += 1;
            }
            Ok((thread, Report::Failed(e))) => {
                failure = Some(e);
                shared.stop.store(true, Ordering::Relaxed);
                seconds.finish(thread);
                done += 1;
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => break,
        }
        seconds.flush(&mut |second| {
            seen.rate = second.requests as f64;
            on_second(second);
        });
        let now = Instant::now();
        if now >= next_progress {
            next_progress = now + PROGRESS_EVERY;
            seen.elapsed = now - start;
            seen.measuring = now >= measure_start;
            on_progress(&seen);
        }
    }
    // Every thread has finished (or the channel closed): what is left is complete.
    (0..threads).for_each(|thread| seconds.finish(thread));
    seconds.flush(on_second);
    Gathered {
        timeline: seconds.into_timeline(),
        total,
        per_request,
        ended,
        last_end,
        cpu_start,
        cpu_end,
        quota_start,
        queued,
        failure,
    }
}

/// Where a worker's measured window ends. A timed run's window is its sending time: the requests counted are
/// those due in it, and the ones still in flight when it ends are waited for and counted in the latency (the
/// drain), while every rate counts only what happened inside the window (see [`Tally`](crate::tally::Tally)).
/// Stretching the window to the last response instead would cut the throughput of a server with a long tail by
/// the drain time over the window (Puma at 128 users drained for 1.4 s after a 10 s window: 12% lost); dividing
/// everything answered by the sending time would give an overloaded server the offered rate. A server that stopped
/// answering early does not shorten the window. A run to a request count, or one interrupted before its sending
/// time was over, lasts until its last request ended, answered or not (as ab's total time).
fn window_end(ends: Ends, send_until: Option<Instant>, interrupted: bool) -> Instant {
    match send_until {
        Some(until) if !interrupted || ends.any >= until => until,
        _ => ends.any,
    }
}
