//! [`Limit`]: what held a cell's throughput back, read from what every trial samples: the client's CPU, the
//! server's and its services' CPU, the kernel's counts (listen queues, CPU quotas), and where the server's threads
//! spent their time ([`ThreadTime`]). The first that holds, in this order, is the cell's limit:
//! 1. the client, busy (or busy and waiting for a CPU) 90% of the time or more in any repeat: its figures then
//!    measure shootout;
//! 2. nothing, in the open model, when every repeat completed the requests due within [`KEPT`], grew no queue
//!    ([`queue_growth`]) and failed under [`KEPT_ERRORS`] of them: the rate offered set the throughput;
//! 3. memory: some task of its cgroup (of the host, for a server in the root cgroup) stalled on memory (reclaim,
//!    refaults, swap) [`STALLED`] of the time or more, as the kernel's pressure figures count it;
//! 4. a CPU quota (a container's, a systemd unit's) that ran out in [`THROTTLED`] of its periods or more;
//! 5. the server's CPU, its tree keeping 90% or more of the CPUs it could run on busy (median over the repeats),
//!    named as its garbage collection when the runtime's collector threads used [`COLLECTED`] of that CPU or more,
//!    and as one thread's (an event loop's) when the server had one CPU and one thread of one process did 90% of
//!    its work;
//! 6. one core: a process of the server used a whole CPU of the two or more it could run on, because its threads
//!    take turns on a lock (a GIL, a GVL) or it has one thread that runs;
//! 7. the listen queue, when the kernel dropped connects on a full one and the load's own connects show it: some
//!    took [`SYN_RETRIED_US`] or more, the time a dropped SYN waits to be sent again (then 3 s, 7 s), while the
//!    server had CPU to spare (a server whose CPU is full drops the connects it cannot take: the CPU is the limit,
//!    the drops its consequence, counted in the kernel column);
//! 8. a service it ran beside (a database) that kept 90% or more of its CPUs busy;
//! 9. CPU taken by another (a process outside the run, a service, the kernel's network or block I/O work), when
//!    the server's CPUs were 90% busy with anything while its threads queued for them;
//! 10. the client's connections, in the open model, all busy while the server answered at its usual speed
//!     ([`Behind::Connections`]);
//! 11. what its threads waited on, when one wait took [`WAITED`] of their time or more and more than any other: a
//!     backend (`db`), the disk, a lock; else its workers, all busy with more requests in flight than they could
//!     take (named with what they did most: on a CPU, asleep, on a lock, on a backend);
//! 12. one core, for a server of one serving thread on one CPU that was on it or waiting for it 90% of its time
//!     or more while its CPU share fell a little short of that (the client's turnaround took the rest);
//! 13. the client, when the threads mostly waited for it: the load, not the server, set the pace;
//! 14. else waiting, with CPU to spare, and the largest state of the threads named (a futex wait of more threads
//!     than requests in flight less one counted idle: a pool's threads waiting for work, not for a lock).
//!
//! A server's threads queueing behind each other on a CPU that still had idle time (a thundering herd of workers
//! woken for one connection) is not a CPU limit.

use serde::Serialize;
use shootout_model::run::TrialRecord;
use shootout_model::states::{runtime, ThreadTime};

use crate::analysis::behind::{completed_share, Behind, CellLag, QUEUEING};
use crate::analysis::queue::{queue_growth, KEPT};
use crate::analysis::{median, service_cells};
use crate::statistics::bound::{at_least, figure};
use shootout_metrics::histogram::count_at_least;

/// The busy share from which the client, or the server, counts as the bottleneck.
pub use shootout_model::SATURATION as BOUND;

/// Threads waiting for each CPU, on average, from which a server on full CPUs wanted more than it got.
pub const QUEUED: f64 = 0.1;

/// A connect that took this long had its SYN sent again (Linux waits 1 s before the first retry).
pub const SYN_RETRIED_US: u64 = 950_000;

/// An open-model cell whose requests failed (or got a status of 400 or more) this often did not keep up, whatever
/// it completed.
pub const KEPT_ERRORS: f64 = 0.01;

/// The share of a quota's periods that ran out from which the quota is the limit.
pub const THROTTLED: f64 = 0.25;

/// The share of the threads' time from which one wait is named as the limit.
pub const WAITED: f64 = 0.25;

/// The threads' worth of busy workers from which a server is a pool of workers (an event loop's one thread, idle
/// between its callbacks, is not).
pub const WORKER: f64 = 0.9;

/// The share of one CPU from which another's use of the server's CPUs is named.
pub const TAKEN: f64 = 0.1;

/// The share of a CPU-bound server's CPU time its garbage collector used (or of its profile's samples) from which
/// the collector is named.
pub const COLLECTED: f64 = 0.25;

/// The share of the time with some task stalled on memory from which memory is the limit.
pub const STALLED: f64 = 0.1;

/// What limited one server at one level.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "by", rename_all = "snake_case")]
pub enum Limit {
    /// The load generator was busy, or busy and waiting for a CPU, 90% of the time or more in some repeat: the
    /// figures measure shootout, not the server.
    Client,
    /// The kernel dropped connects on a full listen queue, and `dropped` of the load's connects (median over the
    /// repeats) were sent again: each waited 1 s or more, the longest `longest_us`.
    ListenQueue {
        /// The load's connects that were dropped and sent again.
        dropped: u64,
        /// The longest connect, µs.
        longest_us: u64,
    },
    /// Open model: every repeat completed what was offered and grew no queue: the offered rate, not the server,
    /// set the throughput (`busy`, 0 to 1, the server's median busy share meanwhile).
    KeptUp {
        /// Median busy share.
        busy: f64,
    },
    /// Some task of the server's cgroup (of the host, for the root cgroup) stalled on memory `stalled` of the time
    /// (0 to 1, median): reclaim, refaults, swap.
    Memory {
        /// Share of the time stalled.
        stalled: f64,
    },
    /// The server's CPU quota ran out in `throttled` of its periods (0 to 1, median).
    Quota {
        /// Share of periods throttled.
        throttled: f64,
        /// The quota, in CPUs.
        cpus: f64,
    },
    /// The server's processes used 90% or more of the CPUs they could run on (`busy`, 0 to 1), or those CPUs
    /// were that busy (`cpus_busy`) while its threads queued for them.
    ServerCpu {
        /// Median busy share.
        busy: f64,
        /// Median busy share of its CPUs, by anything.
        cpus_busy: f64,
    },
    /// The server's CPUs were full (`busy`, as [`Limit::ServerCpu`]) and its runtime's garbage collector used
    /// `share` of that CPU time (0 to 1, median), [`COLLECTED`] or more: a larger heap, or less garbage, would
    /// serve more.
    Collector {
        /// Median share of the server's CPU time its collector threads used (or, `profiled`, the share of its
        /// profile's samples in its collector).
        share: f64,
        /// Median busy share.
        busy: f64,
        /// The share is its profile's, at this level (V8's collector, which has no threads of its own).
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        profiled: bool,
    },
    /// One process of the server used a whole CPU (`cores`) of the `cpus` it could run on: its threads took turns
    /// on a lock (`lock`: a GIL), or one thread did the work (on one CPU, only this: more CPUs would not help).
    OneCore {
        /// CPUs its busiest process used.
        cores: f64,
        /// CPUs it could run on.
        cpus: u32,
        /// Its other threads waited on a lock.
        lock: bool,
        /// Its runtime (`ruby`: the lock is its GVL; `python`: its GIL; `node`: the one thread its event loop).
        #[serde(skip_serializing_if = "String::is_empty")]
        runtime: String,
    },
    /// A service the server ran beside (`name`, a database) used 90% or more of the CPUs it could run on (`busy`,
    /// 0 to 1, its median busy share) while the server did not.
    Service {
        /// The service's name.
        name: String,
        /// Its median busy share.
        busy: f64,
    },
    /// The server's CPUs were 90% busy while its threads queued for them, and `who` used `share` of a CPU of
    /// them (a process outside the run, or a service).
    TakenBy {
        /// The process or service.
        who: String,
        /// Its share of one CPU.
        share: f64,
        /// The server's median busy share of its CPUs meanwhile.
        busy: f64,
    },
    /// Open model: a repeat fell behind because every connection the client could open was busy while the server
    /// answered each at its usual speed ([`Behind::Connections`]): the connections, not the server, set the figure
    /// (`busy`, 0 to 1, the server's median busy share meanwhile).
    Connections {
        /// Median busy share.
        busy: f64,
    },
    /// The server's threads spent `share` of their time waiting on `on`: a backend by name, `disk` or `lock`.
    Waited {
        /// What they waited on.
        on: String,
        /// Their share of the threads' time.
        share: f64,
    },
    /// Every worker was busy (`workers`, the mean number of threads not waiting for the client) while more
    /// requests were in flight than they could take: the pool was full; they spent most of their time (`share`)
    /// `on`: `on CPU`, `sleep`, `lock`, `disk` or a backend.
    Workers {
        /// The mean number of threads busy with a request.
        workers: f64,
        /// What they did most.
        on: String,
        /// Its share of the threads' time.
        share: f64,
    },
    /// The server's threads mostly waited for the client (`share` of their time): the load set the pace.
    ForClient {
        /// Their share of the threads' time.
        share: f64,
        /// Median busy share.
        busy: f64,
    },
    /// The server had CPU to spare (`busy`, 0 to 1) and still went no faster; no thread states were sampled.
    Waiting {
        /// Median busy share.
        busy: f64,
    },
    /// The server had CPU to spare (`busy`, 0 to 1) and still went no faster, and no wait of its threads stood
    /// out as the limit: the largest state (`on`: `client`, `idle`, `disk`, `lock`, `sleep`, a backend, or `on CPU`
    /// with the threads that waited for one) took `share` of their time.
    WaitingOn {
        /// Median busy share.
        busy: f64,
        /// The largest wait.
        on: String,
        /// Its share of the threads' time.
        share: f64,
    },
    /// Saved before shootout recorded the server's CPUs.
    Unknown,
}

impl Limit {
    /// The limit of the repeats of one cell.
    pub fn of(runs: &[&TrialRecord]) -> Limit {
        Limit::beside(runs, None)
    }

    /// The limit of the repeats of one cell, knowing the server's usual median service time (µs, at its lowest
    /// level): connections that were all busy are the limit only while the server answered within [`QUEUEING`]
    /// times it. Past that its requests queued inside it, and more connections would only have queued more.
    pub fn beside(runs: &[&TrialRecord], usual_service_us: Option<f64>) -> Limit {
        Limit::read(runs, usual_service_us, true)
    }

    /// What held a server at the level that broke its search's objectives: as [`Limit::of`], except that repeats
    /// which kept up with their rate are read for what the server was doing, never as `kept up`. A latency
    /// objective breaks while the rate is still met, and why it broke is there: its one thread on its CPU, its
    /// CPU full, its workers all busy.
    pub fn at_break(runs: &[&TrialRecord]) -> Limit {
        Limit::read(runs, None, false)
    }

    /// The rules of the module's list in order, the second (`kept up`) only when `kept_up_counts`.
    fn read(runs: &[&TrialRecord], usual_service_us: Option<f64>, kept_up_counts: bool) -> Limit {
        if runs.iter().any(|t| t.result.client.saturated) {
            return Limit::Client;
        }
        if runs.is_empty() || runs.iter().any(|t| t.usage.cpus == 0) {
            return Limit::Unknown;
        }
        let of = |f: &dyn Fn(&TrialRecord) -> f64| median(&runs.iter().map(|t| f(t)).collect::<Vec<_>>());
        let busy = of(&|t| t.usage.busy);
        let kept_up = |t: &&TrialRecord| {
            let r = &t.result.requests;
            let errors = (r.failed + r.http_errors) as f64 / r.total.max(1) as f64;
            completed_share(&t.result).is_some_and(|share| at_least(share, KEPT))
                && queue_growth(&t.result).is_none()
                && errors < KEPT_ERRORS
        };
        if kept_up_counts && runs.iter().all(kept_up) {
            return Limit::KeptUp { busy };
        }
        let stalled = of(&|t| t.usage.stalled.memory);
        if at_least(stalled, STALLED) {
            return Limit::Memory { stalled };
        }
        let throttled = of(&|t| t.usage.throttled);
        if at_least(throttled, THROTTLED) {
            return Limit::Quota { throttled, cpus: of(&|t| t.usage.quota_cpus) };
        }
        let queued = of(&|t| t.usage.queued);
        let cpus_busy = of(&|t| t.usage.cpus_busy);
        let cores = of(&|t| t.usage.busiest_cores);
        let threads = of(&|t| f64::from(t.usage.busiest_threads));
        let cpus = runs[0].usage.cpus;
        let busiest_runtime = || runs[0].usage.runtime.clone();
        if at_least(busy, BOUND) {
            let share = of(&|t| t.usage.collector);
            if at_least(share, COLLECTED) {
                return Limit::Collector { share, busy, profiled: false };
            }
            // On its one CPU, one thread that did nearly all of the server's work holds it: nginx's worker at
            // 89% of a CPU the server kept 90.02% busy with its master's and the kernel's share.
            if cpus == 1 && threads <= 1.0 && at_least(cores / busy, BOUND) {
                return Limit::OneCore { cores, cpus, lock: false, runtime: busiest_runtime() };
            }
            return Limit::ServerCpu { busy, cpus_busy };
        }
        let time = mean_time(runs);
        if cpus >= 2 && at_least(cores, BOUND) {
            return Limit::OneCore { cores, cpus, lock: threads >= 2.0 && time.lock > 0.0, runtime: busiest_runtime() };
        }
        // The kernel's count is its whole host's; the load's slow connects say the server's queue was the one.
        let overflows = of(&|t| t.usage.listen_overflows as f64);
        let dropped = of(&|t| count_at_least(&t.result.connect, SYN_RETRIED_US) as f64).round() as u64;
        if overflows >= 1.0 && dropped > 0 {
            let longest_us = runs.iter().map(|t| t.result.connect.max_us).max().unwrap_or(0);
            return Limit::ListenQueue { dropped, longest_us };
        }
        if let Some((name, busy)) = busiest_service(runs).filter(|(_, busy)| at_least(*busy, BOUND)) {
            return Limit::Service { name, busy };
        }
        if at_least(cpus_busy, BOUND) && at_least(queued, QUEUED) {
            return match taker(runs, of(&|t| t.usage.softirq), of(&|t| t.usage.softirq_block)) {
                Some((who, share)) => Limit::TakenBy { who, share, busy },
                None => Limit::ServerCpu { busy, cpus_busy },
            };
        }
        let usual_speed = |service_p50_us: u64| usual_service_us.is_none_or(|u| (service_p50_us as f64) < QUEUEING * u);
        if CellLag::of(runs).is_some_and(
            |lag| matches!(lag.by, Behind::Connections { service_p50_us, .. } if usual_speed(service_p50_us)),
        ) {
            return Limit::Connections { busy };
        }
        let in_flight = of(&|t| t.result.throughput.requests_per_s * t.result.latency.mean_us / 1e6);
        waited(&time, in_flight).unwrap_or_else(|| {
            let total = time.total();
            if total <= 0.0 {
                return Limit::Waiting { busy };
            }
            // One serving thread on its one CPU that was on it, or waiting for it, for all but a tenth of its time
            // is held by that thread though its CPU share fell short of the bound (the client's turnaround between
            // requests took the rest: a spinning thread at 88% of its CPU waited 5% for the client).
            if cpus == 1 && threads <= 1.0 && at_least((time.on_cpu + time.runnable) / total, BOUND) {
                return Limit::OneCore { cores, cpus, lock: false, runtime: busiest_runtime() };
            }
            if time.client / total >= WAITED && time.client >= largest_wait(&time) {
                return Limit::ForClient { share: time.client / total, busy };
            }
            // Threads on a futex beyond the requests waiting for a lock held none: a pool's threads waiting for work.
            let lock = time.lock.min(lock_waiters(in_flight));
            let idle = time.idle + time.lock - lock;
            let fixed = [("client", time.client), ("idle", idle), ("disk", time.disk), ("lock", lock)];
            let waits = fixed.into_iter().chain([("sleep", time.sleep), ("on CPU", time.on_cpu + time.runnable)]);
            let all = waits.chain(time.backends.iter().map(|(name, n)| (name.as_str(), *n)));
            match all.max_by(|a, b| a.1.total_cmp(&b.1)).filter(|(_, n)| *n > 0.0) {
                Some((on, n)) => Limit::WaitingOn { busy, on: on.to_string(), share: n / total },
                None => Limit::Waiting { busy },
            }
        })
    }

    /// How the tables write it: `client-bound`, `server CPU 97%`, `db CPU 97%` (a service), `server CPU 60% (CPUs
    /// 98% busy)` (it wanted more than it got), `one core: its GIL (1 of 2 CPUs used; threads wait on its lock)`
    /// (its GVL under Ruby, a lock elsewhere; `one core: its event loop` for Node, `one thread` elsewhere; on one
    /// CPU, `one core: one thread, its event loop (98% of its one CPU)`),
    /// `db: waited on it 71% of the time`, `waiting (CPU 35%)`, `kept up (CPU 20%)`, or `—`. A share the class
    /// was judged on is written on its side of its bound ([`figure`]): `waiting (CPU 89.96%)`, never `waiting (CPU
    /// 90%)`.
    pub fn text(&self) -> String {
        let judged = |share: f64| figure(share * 100.0, Some(BOUND * 100.0), 0);
        let percent = |share: f64| format!("{:.0}%", share * 100.0);
        match self {
            Limit::Client => "client-bound".into(),
            Limit::ListenQueue { dropped, longest_us } => {
                let longest_s = (*longest_us as f64 / 1e6).round();
                let after = if longest_s > 1.0 { format!("1–{longest_s} s") } else { "1 s".into() };
                format!("listen queue: {} connects dropped, retried after {after}", crate::units::count(*dropped))
            }
            Limit::Memory { stalled } => {
                format!(
                    "memory: tasks stalled on it {}% of the time",
                    figure(stalled * 100.0, Some(STALLED * 100.0), 0)
                )
            }
            Limit::Quota { throttled, cpus } => format!(
                "CPU quota of {} CPUs: throttled in {}% of periods",
                cores_text(*cpus),
                figure(throttled * 100.0, Some(THROTTLED * 100.0), 0)
            ),
            Limit::ServerCpu { busy, .. } if at_least(*busy, BOUND) => format!("server CPU {}%", judged(*busy)),
            Limit::Collector { share, busy, profiled } => {
                let share = figure(share * 100.0, Some(COLLECTED * 100.0), 0);
                let whose = if *profiled { "in its profile" } else { "of the server's CPU" };
                format!("garbage collection: {share}% {whose} (server CPU {}%)", judged(*busy))
            }
            Limit::ServerCpu { busy, cpus_busy } => {
                format!("server CPU {}% (CPUs {}% busy)", judged(*busy), judged(*cpus_busy))
            }
            Limit::OneCore { cores, cpus, lock: true, runtime: name } => {
                let lock = match name.as_str() {
                    runtime::RUBY => "its GVL",
                    runtime::PYTHON => "its GIL",
                    _ => "a lock",
                };
                format!("one core: {lock} ({} of {cpus} CPUs used; threads wait on its lock)", cores_text(*cores))
            }
            Limit::OneCore { cores, cpus: 1, lock: false, runtime: name } => {
                let thread = if name == runtime::NODE { "one thread, its event loop" } else { "one thread" };
                format!("one core: {thread} ({}% of its one CPU)", judged(*cores))
            }
            Limit::OneCore { cores, cpus, lock: false, runtime: name } => {
                let thread = if name == runtime::NODE { "its event loop" } else { "one thread" };
                format!("one core: {thread} ({} of {cpus} CPUs used)", cores_text(*cores))
            }
            Limit::Service { name, busy } => format!("{name} CPU {}%", judged(*busy)),
            Limit::TakenBy { who, share, busy } => {
                format!("CPU taken by {who}: {} of a CPU (server CPU {}%)", percent(*share), judged(*busy))
            }
            Limit::Connections { busy } => format!("connections (CPU {})", percent(*busy)),
            Limit::Waited { on, share } => match on.as_str() {
                "lock" => format!("a lock: threads waited on one another {} of the time", percent(*share)),
                "disk" => format!("disk: threads waited on it {} of the time", percent(*share)),
                backend => format!("{backend}: waited on it {} of the time", percent(*share)),
            },
            Limit::Workers { workers, on, share } => {
                format!("workers: all {workers:.0} busy, {} {} of the time", doing(on), percent(*share))
            }
            Limit::ForClient { share, busy } => {
                format!("waiting for the client {} of the time (CPU {})", percent(*share), percent(*busy))
            }
            Limit::Waiting { busy } => format!("waiting (CPU {}%)", judged(*busy)),
            Limit::WaitingOn { busy, on, share } => {
                format!(
                    "waiting (CPU {}%), threads mostly {} ({} of the time)",
                    judged(*busy),
                    doing(on),
                    percent(*share)
                )
            }
            Limit::KeptUp { busy } => format!("kept up (CPU {})", percent(*busy)),
            Limit::Unknown => "—".into(),
        }
    }
}

/// A state of the threads in words: `on a CPU`, `asleep`, `on a lock`, `on the disk`, `waiting for the client`,
/// `idle`, `on db` (a backend).
fn doing(state: &str) -> String {
    match state {
        "on CPU" => "on a CPU".into(),
        "sleep" => "asleep".into(),
        "lock" => "on a lock".into(),
        "disk" => "on the disk".into(),
        "client" => "waiting for the client".into(),
        "idle" => "idle".into(),
        backend => format!("on {backend}"),
    }
}

/// CPUs to a tenth, `1` for one: `0.9`, `1`, `1.1`.
fn cores_text(cores: f64) -> String {
    format!("{}", (cores * 10.0).round() / 10.0)
}

/// The mean over `runs` of where the server's threads were.
pub(crate) fn mean_time(runs: &[&TrialRecord]) -> ThreadTime {
    let mut mean = ThreadTime::default();
    let n = runs.len().max(1) as f64;
    for t in runs {
        mean.add_scaled(&t.usage.time, 1.0 / n);
    }
    mean
}

/// The largest of the waits a server's threads can be held by: a backend, the disk, a lock, a sleep.
fn largest_wait(time: &ThreadTime) -> f64 {
    time.backends.iter().map(|(_, n)| *n).chain([time.disk, time.lock, time.sleep]).fold(0.0, f64::max)
}

/// What held the threads: a wait on a backend, the disk or a lock that took [`WAITED`] of their time or more, more
/// than any other and than the wait for the client, with no more threads in it than requests in flight
/// (`in_flight`: a thread waits on a backend for a request it holds, on a lock for one while another request holds
/// the lock, so one fewer; more than that are a pool's spare threads waiting for work); else every worker busy,
/// [`WORKER`] of a thread or more of them, with half again as many requests in flight as workers to take them (and
/// one more at least), named with what the workers did most.
fn waited(time: &ThreadTime, in_flight: f64) -> Option<Limit> {
    let total = time.total();
    if total <= 0.0 {
        return None;
    }
    let workers = total - time.client - time.idle;
    let backends = || time.backends.iter().map(|(name, n)| (name.as_str(), *n));
    fn largest(waits: Vec<(&str, f64)>) -> Option<(&str, f64)> {
        waits.into_iter().max_by(|a, b| a.1.total_cmp(&b.1))
    }
    let mut holding = backends().collect::<Vec<_>>();
    holding.extend([("disk", time.disk), ("lock", time.lock)]);
    if let Some((on, threads)) = largest(holding) {
        let share = threads / total;
        // A backend or the disk can hold every request in flight; a lock holds one while the others wait on it.
        let most = if on == "lock" { lock_waiters(in_flight) } else { in_flight };
        let contended = on != "lock" || most >= 0.5;
        if share >= WAITED && threads >= time.client && threads <= most + 0.5 && contended {
            return Some(Limit::Waited { on: on.to_string(), share });
        }
    }
    let queued = workers >= WORKER && in_flight >= 1.5 * workers && in_flight - workers >= 1.0;
    let mut doing = vec![("on CPU", time.on_cpu + time.runnable), ("sleep", time.sleep)];
    doing.extend([("lock", time.lock), ("disk", time.disk)]);
    doing.extend(backends());
    let (on, threads) = largest(doing).filter(|_| queued)?;
    Some(Limit::Workers { workers, on: on.to_string(), share: threads / total })
}

/// The most threads that can wait on a lock for a request with `in_flight` requests in flight: all but the one
/// that holds it (none with one request in flight: one user's requests never contend).
fn lock_waiters(in_flight: f64) -> f64 {
    (in_flight - 1.0).max(0.0)
}

/// Who took the server's CPUs: the busiest process outside the run, service that could run on them, or the
/// kernel's deferred work on them (`softirq`, CPUs' worth, median; named as a disk's where block I/O softirqs
/// outnumbered the network's, `softirq_block` over a half), over the repeats, with its share of one CPU;
/// none under [`TAKEN`].
fn taker(runs: &[&TrialRecord], softirq: f64, softirq_block: f64) -> Option<(String, f64)> {
    // On the server's CPUs only: a process confined to the client's took none of them.
    let outsiders =
        runs.iter().flat_map(|t| &t.outsiders).map(|o| (format!("{} (pid {})", o.name, o.pid), o.on_server()));
    let services = runs
        .iter()
        .flat_map(|t| &t.services)
        .filter(|s| s.shares_cpus)
        .map(|s| (s.name.clone(), s.usage.busy * f64::from(s.usage.cpus)));
    let work = crate::analysis::KernelCell::softirq_work(softirq_block);
    let kernel = std::iter::once((format!("the kernel's {work}"), softirq));
    outsiders.chain(services).chain(kernel).filter(|(_, share)| *share >= TAKEN).max_by(|a, b| a.1.total_cmp(&b.1))
}

/// The service with the highest median busy share over `runs`, with that share (none without services): from the
/// same medians the table shows for each service ([`service_cells`]).
fn busiest_service(runs: &[&TrialRecord]) -> Option<(String, f64)> {
    service_cells(runs).into_iter().map(|c| (c.name, c.busy)).max_by(|a, b| a.1.total_cmp(&b.1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trial(saturated: bool, cpus: u32, busy: f64, queued: f64, cpus_busy: f64) -> TrialRecord {
        let mut t: TrialRecord = serde_json::from_str(include_str!("../../tests/trial.json")).unwrap();
        t.result.client.saturated = saturated;
        t.usage.cpus = cpus;
        t.usage.busy = busy;
        t.usage.queued = queued;
        t.usage.cpus_busy = cpus_busy;
        t
    }

    #[test]
    fn the_client_first_then_the_servers_cpu_then_waiting() {
        let a = trial(false, 1, 0.95, 0.0, 0.97);
        let (b, c) = (trial(true, 1, 0.2, 0.0, 0.3), trial(false, 1, 0.97, 0.02, 0.99));
        assert_eq!(Limit::of(&[&a, &b]), Limit::Client, "one client-bound repeat is enough");
        assert_eq!(Limit::of(&[&a, &c]), Limit::ServerCpu { busy: 0.96, cpus_busy: 0.98 });
        let starved = trial(false, 1, 0.6, 0.45, 0.99);
        assert_eq!(Limit::of(&[&starved]), Limit::ServerCpu { busy: 0.6, cpus_busy: 0.99 }, "it wanted its CPU");
        let herd = trial(false, 1, 0.6, 0.6, 0.65);
        assert_eq!(Limit::of(&[&herd]), Limit::Waiting { busy: 0.6 }, "workers queued behind each other, CPU to spare");
        let idle = trial(false, 2, 0.35, 0.01, 0.4);
        assert_eq!(Limit::of(&[&idle]), Limit::Waiting { busy: 0.35 });
        assert_eq!(Limit::of(&[&trial(false, 0, 0.0, 0.0, 0.0)]), Limit::Unknown, "older results");
        assert_eq!(Limit::ServerCpu { busy: 0.966, cpus_busy: 0.97 }.text(), "server CPU 97%");
        assert_eq!(Limit::ServerCpu { busy: 0.6, cpus_busy: 0.99 }.text(), "server CPU 60% (CPUs 99% busy)");
        assert_eq!(Limit::Waiting { busy: 0.35 }.text(), "waiting (CPU 35%)");
    }

    #[test]
    fn a_busy_service_is_named_when_the_server_was_not_cpu_bound() {
        let with_db = |server: f64, cpus_busy: f64, db: f64| {
            let mut t = trial(false, 1, server, 0.5, cpus_busy);
            let usage = shootout_model::run::ServerUsage { cpus: 1, busy: db, ..Default::default() };
            t.services = vec![
                shootout_model::run::ServiceTrial {
                    name: "cache".into(),
                    samples: Vec::new(),
                    usage: Default::default(),
                    shares_cpus: true,
                },
                shootout_model::run::ServiceTrial { name: "db".into(), samples: Vec::new(), usage, shares_cpus: true },
            ];
            t
        };
        let db_bound = with_db(0.05, 0.99, 0.94);
        assert_eq!(Limit::of(&[&db_bound]), Limit::Service { name: "db".into(), busy: 0.94 });
        assert_eq!(Limit::of(&[&db_bound]).text(), "db CPU 94%");
        assert_eq!(Limit::of(&[&with_db(0.95, 0.99, 0.04)]), Limit::ServerCpu { busy: 0.95, cpus_busy: 0.99 });
        let idle_db = with_db(0.3, 0.99, 0.5);
        let taken = Limit::TakenBy { who: "db".into(), share: 0.5, busy: 0.3 };
        assert_eq!(Limit::of(&[&idle_db]), taken, "its CPUs busy, queued, half of one taken by the db");
        assert_eq!(taken.text(), "CPU taken by db: 50% of a CPU (server CPU 30%)");
        let mut network = idle_db.clone();
        network.usage.softirq = 0.62;
        let by_kernel = Limit::TakenBy { who: "the kernel's network work".into(), share: 0.62, busy: 0.3 };
        assert_eq!(Limit::of(&[&network]), by_kernel, "the kernel's softirq took more of the CPU than the db");
        network.usage.softirq_block = 0.96;
        let by_disk = Limit::TakenBy { who: "the kernel's block I/O work".into(), share: 0.62, busy: 0.3 };
        assert_eq!(Limit::of(&[&network]), by_disk, "51,540 block softirqs against 2,415 network ones");
        let near = Limit::TakenBy { who: "the kernel's network work".into(), share: 0.15, busy: 0.8996 };
        assert_eq!(near.text(), "CPU taken by the kernel's network work: 15% of a CPU (server CPU 89.96%)");
        let mut elsewhere = idle_db.clone();
        elsewhere.services[1].shares_cpus = false;
        let full = Limit::ServerCpu { busy: 0.3, cpus_busy: 0.99 };
        assert_eq!(Limit::of(&[&elsewhere]), full, "a db on other CPUs took none of the server's");
        assert_eq!(Limit::of(&[&with_db(0.3, 0.35, 0.5)]), Limit::Waiting { busy: 0.3 });
        assert_eq!(Limit::of(&[&db_bound, &with_db(0.05, 0.99, 0.97), &idle_db]).text(), "db CPU 94%", "median");
    }

    #[test]
    fn a_share_on_the_bound_is_on_it() {
        let at_bound = trial(false, 3, 0.3 * 3.0, 0.0, 0.95);
        // 0.3 × 3 is 0.8999999999999999 in floating point.
        assert!(matches!(Limit::of(&[&at_bound]), Limit::ServerCpu { .. }), "three CPUs 30% busy are 90% busy");
        assert_eq!(Limit::of(&[&at_bound]).text(), "server CPU 90%");
    }

    /// Issue 40: a server busy 0.8996 of its CPUs printed `waiting (CPU 90%)`, where 90% is the server's CPU.
    #[test]
    fn the_printed_share_is_on_the_side_of_90_percent_its_class_is() {
        let of = |busy: f64| Limit::of(&[&trial(false, 1, busy, 0.0, busy)]).text();
        assert_eq!(of(0.8996), "waiting (CPU 89.96%)");
        assert_eq!(of(0.896), "waiting (CPU 89.6%)");
        assert_eq!(of(0.8949), "waiting (CPU 89%)", "89% cannot be read as 90%");
        assert_eq!(of(0.9004), "server CPU 90.04%", "not 90%, which a value just under would round to");
        assert_eq!(of(0.9), "server CPU 90%");
        assert_eq!(of(0.97), "server CPU 97%");
        let starved = Limit::of(&[&trial(false, 1, 0.8996, 0.5, 0.9)]);
        assert_eq!(starved.text(), "server CPU 89.96% (CPUs 90% busy)");
    }

    #[test]
    fn an_open_model_cell_that_kept_up_was_held_back_by_nothing_but_the_rate() {
        let open = |completed: f64| {
            let mut t = trial(false, 1, 0.97, 0.0, 0.98);
            t.result.options.pacing =
                shootout_model::Pacing::Open { rate: 1000.0, arrival: shootout_model::Arrival::Constant };
            t.result.sends = Some(shootout_model::result::Sends {
                due: 1000,
                sent: 1000,
                late: 0,
                offered_per_s: 1000.0,
                sent_per_s: 1000.0,
            });
            t.result.throughput.requests_per_s = completed;
            t
        };
        let (kept, behind) = (open(999.0), open(480.0));
        assert_eq!(Limit::of(&[&kept, &kept]), Limit::KeptUp { busy: 0.97 });
        // Where a search's latency objective broke though the rate was met, why is what the server was doing.
        let full = Limit::ServerCpu { busy: 0.97, cpus_busy: 0.98 };
        assert_eq!(Limit::at_break(&[&kept, &kept]), full, "its CPU full, requests queued for it");
        assert_eq!(Limit::of(&[&kept, &behind]), Limit::ServerCpu { busy: 0.97, cpus_busy: 0.98 }, "one fell behind");
        assert_eq!(Limit::KeptUp { busy: 0.2 }.text(), "kept up (CPU 20%)");
        let due = |t: &TrialRecord| t.result.sends.unwrap().due as f64 / t.result.duration_s;
        let mut at_share = open(0.0);
        at_share.result.throughput.requests_per_s = KEPT * due(&at_share);
        assert_eq!(Limit::of(&[&at_share]), Limit::KeptUp { busy: 0.97 }, "97% of what was due is kept up");
        let mut short = open(0.0);
        short.result.throughput.requests_per_s = 0.94 * due(&short);
        assert!(!matches!(Limit::of(&[&short]), Limit::KeptUp { .. }), "94% of it is not");
        let mut failing = open(999.0);
        (failing.result.requests.total, failing.result.requests.http_errors) = (1000, 30);
        assert!(!matches!(Limit::of(&[&failing]), Limit::KeptUp { .. }), "3% of its requests failed");
    }

    #[test]
    fn an_open_model_cell_whose_connections_were_all_busy_names_them() {
        let with = |result: shootout_model::LoadResult| TrialRecord { result, ..trial(false, 1, 0.3, 0.0, 0.35) };
        let busy = with(crate::analysis::behind::tests::open(100.0, 100_500, 100_000, 2500));
        assert_eq!(Limit::of(&[&busy]), Limit::Connections { busy: 0.3 });
        assert_eq!(Limit::of(&[&busy]).text(), "connections (CPU 30%)");
        let queued = with(crate::analysis::behind::tests::open(970.0, 900_000, 1_000, 2500));
        assert_eq!(Limit::of(&[&queued]), Limit::Waiting { busy: 0.3 }, "the server's requests queued");
        // Issue 61: every connection busy while the server answered each in 100.5 ms, its fastest 100 ms: its usual
        // speed within the window, but 100 times what it took at its lowest level (1 ms) is a queue inside it.
        assert_eq!(Limit::beside(&[&busy], Some(25_200.0)), Limit::Connections { busy: 0.3 }, "within 4 times");
        assert_eq!(Limit::beside(&[&busy], Some(1_000.0)), Limit::Waiting { busy: 0.3 }, "100 times its usual");
    }

    #[test]
    fn the_kernels_counts_and_where_the_threads_waited_name_the_limit() {
        let base = || trial(false, 2, 0.5, 0.0, 0.55);
        let mut dropped = base();
        dropped.usage.listen_overflows = 1500;
        assert!(!matches!(Limit::of(&[&dropped]), Limit::ListenQueue { .. }), "another server's queue: none slow here");
        let mut connects = shootout_metrics::histogram::new_histogram();
        shootout_metrics::histogram::record_us_n(&mut connects, 80, 5000);
        shootout_metrics::histogram::record_us_n(&mut connects, 1_030_000, 1200);
        shootout_metrics::histogram::record_us_n(&mut connects, 7_100_000, 34);
        dropped.result.connect = shootout_metrics::histogram::summarize(&connects);
        assert_eq!(Limit::of(&[&dropped]).text(), "listen queue: 1,234 connects dropped, retried after 1–7 s");
        let mut collecting = base();
        (collecting.usage.busy, collecting.usage.collector) = (0.98, 0.41);
        assert_eq!(Limit::of(&[&collecting]).text(), "garbage collection: 41% of the server's CPU (server CPU 98%)");
        collecting.usage.collector = 0.1;
        assert_eq!(Limit::of(&[&collecting]).text(), "server CPU 98%", "a collector that took little is not named");
        let mut saturated = dropped.clone();
        saturated.usage.busy = 0.97;
        assert_eq!(Limit::of(&[&saturated]).text(), "server CPU 97%", "full CPUs drop what they cannot take");
        dropped.usage.listen_overflows = 0;
        assert!(!matches!(Limit::of(&[&dropped]), Limit::ListenQueue { .. }), "slow connects, but no queue overflowed");
        let mut throttled = base();
        (throttled.usage.throttled, throttled.usage.quota_cpus) = (80.0 / 88.0, 0.5);
        assert_eq!(Limit::of(&[&throttled]).text(), "CPU quota of 0.5 CPUs: throttled in 91% of periods");
        let mut reclaiming = throttled.clone();
        reclaiming.usage.stalled.memory = 0.34;
        assert_eq!(Limit::of(&[&reclaiming]).text(), "memory: tasks stalled on it 34% of the time", "before the quota");
        reclaiming.usage.stalled = shootout_model::pressure::Stalls { cpu: 0.9, io: 0.9, memory: 0.09 };
        assert!(matches!(Limit::of(&[&reclaiming]), Limit::Quota { .. }), "9% of the time is not the limit");
        let mut gil = base();
        (gil.usage.busiest_cores, gil.usage.busiest_threads) = (0.99, 9);
        gil.usage.time = ThreadTime { on_cpu: 1.0, lock: 7.0, client: 1.0, ..ThreadTime::default() };
        assert_eq!(Limit::of(&[&gil]).text(), "one core: a lock (1 of 2 CPUs used; threads wait on its lock)");
        gil.usage.runtime = runtime::PYTHON.into();
        assert_eq!(Limit::of(&[&gil]).text(), "one core: its GIL (1 of 2 CPUs used; threads wait on its lock)");
        gil.usage.runtime = runtime::RUBY.into();
        assert_eq!(Limit::of(&[&gil]).text(), "one core: its GVL (1 of 2 CPUs used; threads wait on its lock)");
        let mut one_thread = base();
        (one_thread.usage.busiest_cores, one_thread.usage.busiest_threads) = (0.93, 1);
        assert_eq!(Limit::of(&[&one_thread]).text(), "one core: one thread (0.9 of 2 CPUs used)");
        one_thread.usage.runtime = runtime::NODE.into();
        assert_eq!(Limit::of(&[&one_thread]).text(), "one core: its event loop (0.9 of 2 CPUs used)");
        // On one CPU, a full CPU is one thread's when one thread of one process used it: more CPUs would not help.
        (one_thread.usage.cpus, one_thread.usage.busy) = (1, 0.97);
        assert_eq!(Limit::of(&[&one_thread]).text(), "one core: one thread, its event loop (93% of its one CPU)");
        one_thread.usage.busiest_cores = 0.89;
        assert!(matches!(Limit::of(&[&one_thread]), Limit::OneCore { .. }), "its one thread did nearly all the work");
        one_thread.usage.busiest_threads = 4;
        assert_eq!(Limit::of(&[&one_thread]).text(), "server CPU 97%", "four threads share the CPU");
        (one_thread.usage.busiest_threads, one_thread.usage.busiest_cores) = (1, 0.6);
        assert_eq!(Limit::of(&[&one_thread]).text(), "server CPU 97%", "its processes share the CPU");
        let with_time = |time: ThreadTime, connections: f64| {
            let mut t = base();
            t.usage.time = time;
            // Little's law: requests in flight are the rate times the mean latency.
            t.result.throughput.requests_per_s = 1000.0;
            t.result.latency.mean_us = connections * 1000.0;
            t
        };
        let db = ThreadTime { on_cpu: 0.5, backends: vec![("db".into(), 7.1)], client: 2.4, ..ThreadTime::default() };
        assert_eq!(Limit::of(&[&with_time(db, 8.0)]).text(), "db: waited on it 71% of the time");
        let lock = ThreadTime { on_cpu: 0.1, sleep: 1.0, lock: 6.9, client: 2.0, ..ThreadTime::default() };
        assert_eq!(
            Limit::of(&[&with_time(lock.clone(), 8.0)]).text(),
            "a lock: threads waited on one another 69% of the time"
        );
        // Seven threads on futexes with three requests in flight: at least four of them were a pool's spares,
        // waiting for work, not for a lock.
        let spares = Limit::of(&[&with_time(lock, 3.0)]);
        assert_eq!(spares.text(), "waiting (CPU 50%), threads mostly idle (49% of the time)");
        // One request in flight at a time: a thread on a futex between requests waits for the next, not a lock.
        let one_user = ThreadTime { on_cpu: 0.25, lock: 0.44, client: 0.31, ..ThreadTime::default() };
        assert_eq!(
            Limit::of(&[&with_time(one_user, 1.0)]).text(),
            "waiting (CPU 50%), threads mostly idle (44% of the time)",
            "one user's requests never wait for each other"
        );
        let asleep = ThreadTime { on_cpu: 0.05, sleep: 1.9, client: 0.05, ..ThreadTime::default() };
        assert_eq!(Limit::of(&[&with_time(asleep.clone(), 8.0)]).text(), "workers: all 2 busy, asleep 95% of the time");
        // Three workers' worth of threads, none waiting on one thing most of the time, sixteen requests in flight.
        let mixed = ThreadTime {
            on_cpu: 0.5,
            runnable: 0.1,
            sleep: 1.2,
            backends: vec![("db".into(), 0.9)],
            client: 1.5,
            ..ThreadTime::default()
        };
        assert_eq!(Limit::of(&[&with_time(mixed, 16.0)]).text(), "workers: all 3 busy, asleep 29% of the time");
        // As many threads asleep as requests in flight: a thread for each, none queued for one.
        let each = Limit::of(&[&with_time(asleep, 2.0)]);
        assert_eq!(
            each.text(),
            "waiting (CPU 50%), threads mostly asleep (95% of the time)",
            "a sleep with a thread for every request held nothing back"
        );
        // One thread spinning for two users, at 88% of its one CPU: the other 5% of its time it waited for the
        // client's next request, which does not make the client its limit.
        let mut spinning =
            with_time(ThreadTime { on_cpu: 0.879, runnable: 0.013, client: 0.045, ..ThreadTime::default() }, 2.0);
        (spinning.usage.cpus, spinning.usage.busy, spinning.usage.busiest_cores) = (1, 0.879, 0.879);
        spinning.usage.busiest_threads = 1;
        assert_eq!(Limit::of(&[&spinning]).text(), "one core: one thread (88% of its one CPU)");
        spinning.usage.busiest_threads = 2;
        assert_eq!(
            Limit::of(&[&spinning]).text(),
            "waiting (CPU 88%), threads mostly on a CPU (95% of the time)",
            "two threads that shared the CPU: the largest state is named, never a wait of 5%"
        );
        let idle = ThreadTime { on_cpu: 0.2, client: 3.6, sleep: 0.2, ..ThreadTime::default() };
        assert_eq!(Limit::of(&[&with_time(idle, 4.0)]).text(), "waiting for the client 90% of the time (CPU 50%)");
    }
}
