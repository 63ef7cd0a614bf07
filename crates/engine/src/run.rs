//! [`run`]: starts the worker threads, gathers their per-second reports, and assembles the [`LoadResult`].

use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use shootout_metrics::{summarize, Recorder, Timeline};
use shootout_model::result::ToolInfo;
use shootout_model::{
    ClientUsage, LoadOptions, LoadResult, NamedResult, Pacing, Segment, Sends, StopCondition, Throughput,
    SCHEMA_VERSION,
};
use thiserror::Error;

use crate::cpu::CpuTimes;
use crate::pacer::Pacer;
use crate::pacing::{Ramp, Schedule};
use crate::plan::Plan;
use crate::shared::{segment_share, share, Part, Shared};
use crate::tally::{Ends, Report};
use crate::tls::check_handshake;
use crate::worker::run_worker;

/// How often the progress callback is called.
const PROGRESS_EVERY: Duration = Duration::from_millis(250);
/// A client this busy measures itself rather than the server.
pub const SATURATION: f64 = 0.9;

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
    /// A worker could not start.
    #[error("cannot start a worker thread: {0}")]
    Worker(std::io::Error),
}

/// Runs the plan to its end (or until `stop` is set) and returns the result document.
pub fn run(plan: &Plan, stop: Arc<AtomicBool>, on_progress: &mut dyn FnMut(&Progress)) -> Result<LoadResult, RunError> {
    check_reachable(plan)?;
    let options = &plan.options;
    let segment = options.segment.unwrap_or(Segment::WHOLE);
    // More threads than this process's connections would leave some with nothing to do.
    let connections = segment_share(options.most_connections(), segment);
    let threads = u64::from(options.threads).clamp(1, connections.max(1)) as usize;
    let wall_start = SystemTime::now();
    let start = Instant::now();
    let measure_start = start + options.warmup;
    let ramp = level_ramp(plan);
    let shared = Shared {
        address: plan.address,
        workload: plan.workload.clone(),
        seed: wall_start.duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64),
        delay: options.delay.filter(|_| options.pacing == Pacing::Closed),
        sequential: options.sequential,
        tls: plan.tls.clone(),
        keepalive: options.keepalive,
        timeout: options.timeout,
        connect_timeout: options.connect_timeout,
        measure_start,
        send_until: match options.stop {
            StopCondition::Duration(d) => Some(measure_start + d),
            StopCondition::Requests(_) => None,
        },
        stop: stop.clone(),
    };
    let pacers = (0..threads)
        .map(|thread| pacer_for(options, &shared, &ramp, Part { segment, thread, threads }, start))
        .collect::<std::io::Result<Vec<_>>>()
        .map_err(RunError::Worker)?;

    let gathered = std::thread::scope(|scope| {
        let (tx, rx) = channel();
        for (thread, pacer) in pacers.into_iter().enumerate() {
            let tx = tx.clone();
            let shared = &shared;
            scope.spawn(move || run_worker(shared, Part { segment, thread, threads }, pacer, tx));
        }
        drop(tx);
        gather(&rx, threads, &shared, start, on_progress)
    });
    if let Some(e) = gathered.failure {
        return Err(RunError::Worker(e));
    }
    let run = Measured {
        threads,
        cpu: CpuTimes::now().since(gathered.cpu_start.unwrap_or_default()),
        duration: gathered.ended.saturating_duration_since(measure_start),
        started: wall_start + options.warmup,
        interrupted: stop.load(Ordering::Relaxed),
    };
    let mut result = assemble(plan, &ramp, &gathered.total, &gathered.timeline, &run);
    result.by_request = gathered
        .per_request
        .iter()
        .zip(&plan.workload.requests)
        .map(|(recorder, request)| NamedResult {
            name: request.name.clone(),
            requests: recorder.request_counts(),
            status_counts: recorder.status_counts(),
            errors: recorder.error_counts(),
            latency: summarize(&recorder.latency),
        })
        .collect();
    Ok(result)
}

/// Checks that the server answers a connect (and a TLS handshake, for https://) before the run starts.
fn check_reachable(plan: &Plan) -> Result<(), RunError> {
    let timeout = plan.options.connect_timeout;
    TcpStream::connect_timeout(&plan.address, timeout)
        .map_err(|reason| RunError::Unreachable { address: plan.address, reason })?;
    if let Some(tls) = &plan.tls {
        check_handshake(tls, plan.address, timeout)
            .map_err(|reason| RunError::Tls { address: plan.address, reason })?;
    }
    Ok(())
}

/// The pacer of worker `part`: its share of the connections, of the users or rate on `ramp`, and of a request
/// count, all of them nested shares of the whole load ([`share`], [`Part`]). Sending starts at `start`.
fn pacer_for(
    options: &LoadOptions,
    shared: &Shared,
    ramp: &Ramp,
    part: Part,
    start: Instant,
) -> std::io::Result<Pacer> {
    let connections = share(options.most_connections().max(1), part) as usize;
    let quota = match options.stop {
        StopCondition::Requests(n) => Some(share(n, part)),
        StopCondition::Duration(_) => None,
    };
    Ok(match options.pacing {
        Pacing::Closed => Pacer::closed(ramp.clone(), quota, part, connections, shared.measure_start),
        Pacing::Open { arrival, rate } => {
            let schedule = Schedule::new(
                ramp.scaled(part.fraction()),
                arrival,
                part.seed(shared.seed).rotate_left(17),
                shared.measure_start,
                // Workers start a step apart, so their evenly spaced requests interleave into one even stream.
                start + part.offset(rate),
                shared.send_until,
                quota,
            );
            Pacer::open(schedule, connections, options.timeout)?
        }
    })
}

/// What the coordinator gathered from the workers' reports.
struct Gathered {
    timeline: Timeline,
    total: Recorder,
    per_request: Vec<Recorder>,
    /// The end of the measured window.
    ended: Instant,
    /// The client's CPU times when measuring started.
    cpu_start: Option<CpuTimes>,
    /// Why a worker could not start, if one could not.
    failure: Option<std::io::Error>,
}

/// Receives the reports of `threads` workers until all are done, adding them up, and calls `on_progress` every
/// [`PROGRESS_EVERY`] (sending started at `start`). Notes the client's CPU times when the warm-up ends.
fn gather(
    reports: &Receiver<Report>,
    threads: usize,
    shared: &Shared,
    start: Instant,
    on_progress: &mut dyn FnMut(&Progress),
) -> Gathered {
    let measure_start = shared.measure_start;
    let mut gathered = Gathered {
        timeline: Timeline::new(),
        total: Recorder::new(),
        per_request: Vec::new(),
        ended: measure_start,
        cpu_start: None,
        failure: None,
    };
    let mut done = 0;
    let mut next_progress = start + PROGRESS_EVERY;
    let mut seen = Progress { elapsed: Duration::ZERO, measuring: false, requests: 0, errors: 0, rate: 0.0 };
    while done < threads {
        let now = Instant::now();
        if gathered.cpu_start.is_none() && now >= measure_start {
            gathered.cpu_start = Some(CpuTimes::now());
        }
        let mut wait = next_progress.saturating_duration_since(now);
        if gathered.cpu_start.is_none() {
            wait = wait.min(measure_start.saturating_duration_since(now));
        }
        match reports.recv_timeout(wait) {
            Ok(Report::Interval(interval)) => {
                seen.requests += interval.requests;
                seen.errors += interval.errors;
                let second = interval.second;
                gathered.timeline.add(interval);
                seen.rate = gathered.timeline.requests_in(second) as f64;
            }
            Ok(Report::Done(recorder, named, ends)) => {
                gathered.total += &recorder;
                if gathered.per_request.is_empty() {
                    gathered.per_request = named;
                } else {
                    gathered.per_request.iter_mut().zip(&named).for_each(|(mine, theirs)| *mine += theirs);
                }
                let interrupted = shared.stop.load(Ordering::Relaxed);
                gathered.ended = gathered.ended.max(window_end(ends, shared.send_until, interrupted));
                done += 1;
            }
            Ok(Report::Failed(e)) => {
                gathered.failure = Some(e);
                shared.stop.store(true, Ordering::Relaxed);
                done += 1;
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => break,
        }
        let now = Instant::now();
        if now >= next_progress {
            next_progress = now + PROGRESS_EVERY;
            seen.elapsed = now - start;
            seen.measuring = now >= measure_start;
            on_progress(&seen);
        }
    }
    gathered
}

/// The level over time: users (closed model) or requests per second (open model), through the stages.
fn level_ramp(plan: &Plan) -> Ramp {
    let start = match plan.options.pacing {
        Pacing::Closed => f64::from(plan.options.connections),
        Pacing::Open { rate, .. } => rate,
    };
    Ramp::new(start, &plan.options.stages)
}

/// Facts about the run itself, gathered by the coordinator.
struct Measured {
    threads: usize,
    cpu: CpuTimes,
    duration: Duration,
    started: SystemTime,
    interrupted: bool,
}

fn assemble(plan: &Plan, ramp: &Ramp, total: &Recorder, timeline: &Timeline, run: &Measured) -> LoadResult {
    let Measured { threads, cpu, duration, started, interrupted } = *run;
    let seconds = duration.as_secs_f64();
    let requests = total.request_counts();
    let per_second = |count: u64| if seconds > 0.0 { count as f64 / seconds } else { 0.0 };
    let cpus_available = std::thread::available_parallelism().map_or(1, |n| n.get()) as u32;
    let cpu_s = (cpu.user + cpu.system).as_secs_f64();
    let capacity = seconds * threads.min(cpus_available as usize) as f64;
    let busy = if capacity > 0.0 { cpu_s / capacity } else { 0.0 };
    LoadResult {
        schema_version: SCHEMA_VERSION,
        tool: ToolInfo { name: "shootout".into(), version: env!("CARGO_PKG_VERSION").into() },
        options: plan.options.clone(),
        address: plan.address.to_string(),
        started_at: humantime::format_rfc3339_micros(started).to_string(),
        ended_at: humantime::format_rfc3339_micros(started + duration).to_string(),
        duration_s: seconds,
        interrupted,
        requests,
        status_counts: total.status_counts(),
        errors: total.error_counts(),
        connections: total.connection_counts(),
        bytes_received: total.bytes_received,
        bytes_sent: total.bytes_sent,
        throughput: Throughput {
            requests_per_s: per_second(requests.ok + requests.http_errors),
            bytes_per_s: per_second(total.bytes_received),
        },
        latency: summarize(&total.latency),
        service_time: summarize(&total.service),
        by_request: Vec::new(),
        sends: match plan.options.pacing {
            Pacing::Closed => None,
            Pacing::Open { rate, .. } => {
                let sends = total.sends();
                let offered_per_s = match plan.options.stop {
                    StopCondition::Duration(window) => ramp.mean_over(window),
                    StopCondition::Requests(_) => rate,
                };
                Some(Sends { offered_per_s, achieved_per_s: per_second(sends.sent), ..sends })
            }
        },
        connect: summarize(&total.connect),
        tls_handshake: plan.tls.as_ref().map(|_| summarize(&total.handshake)),
        timeline: timeline.to_seconds(seconds.ceil() as u32, |second| {
            ramp.at(Duration::from_secs(u64::from(second)) + Duration::from_millis(500))
        }),
        client: ClientUsage {
            threads: threads as u32,
            cpus_available,
            user_s: cpu.user.as_secs_f64(),
            sys_s: cpu.system.as_secs_f64(),
            cpu_s,
            busy,
            saturated: busy >= SATURATION,
        },
    }
}

/// Where a worker's measured window ends. A timed run's window is its sending time, stretched by responses that
/// came after it, but not by requests that only failed later (a request left to time out 30 s after the others
/// would otherwise dilute the throughput), nor shortened when the server stopped answering early. A run to a
/// request count, or an interrupted one, lasts until its last request ended, answered or not (as ab's total time).
fn window_end(ends: Ends, send_until: Option<Instant>, interrupted: bool) -> Instant {
    match (send_until, interrupted) {
        (Some(until), false) => ends.response.map_or(until, |r| r.max(until)),
        _ => ends.any,
    }
}
