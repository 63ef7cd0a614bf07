//! One trial on a running server: the load of one level, sent from here or shared out to the suite's agents,
//! while a sampler reads the process trees of the server and of the services beside it; the samples summed over
//! the measured window ([`usage`]); and the start warm-up, the same load with nothing kept.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use shootout_agents::coordinate::{self, Work};
use shootout_agents::launch::Launcher;
use shootout_engine::stakes::Stakes;
use shootout_engine::{Plan, Progress};
use shootout_model::pressure::Stalls;
use shootout_model::run::{ResourceSample, ServerUsage, ServiceTrial, TrialRecord};
use shootout_model::settings::LoadSettings;
use shootout_model::states::ThreadTime;
use shootout_model::LoadResult;
use shootout_suite::{Agents, Levels, ServerSpec, Suite};

use crate::lifecycle::server::RunningServer;
use crate::place::{Sampler, Watched};
use crate::run::runner::Event;
use crate::sampling::outsiders::Outsiders;
use crate::sampling::sockets::Backends;

/// How often a trial's sampler looks whether the run was told to stop, between its samples.
const STOP_CHECK: Duration = Duration::from_millis(20);

/// One trial: the load at `level` while a sampler watches the server's process tree and those of the services
/// it runs beside (`services`).
#[allow(clippy::too_many_arguments)]
pub(crate) fn trial(
    suite: &Suite,
    spec: &ServerSpec,
    running: &mut RunningServer,
    services: &[Watched],
    level: f64,
    repeat: u32,
    stop: Arc<AtomicBool>,
    on_event: &mut dyn FnMut(Event),
) -> Result<TrialRecord, String> {
    let work = Load::new(suite, spec, running, level, None)?;
    let watched: Vec<Watched> = std::iter::once(running.process.watched()).chain(services.iter().cloned()).collect();
    let cpu_counts: Vec<u32> = watched.iter().map(Watched::cpu_count).collect();
    let shared_cpus: Vec<bool> = watched.iter().skip(1).map(|w| w.shares_cpus_with(&watched[0])).collect();
    let (stop_sampling, sampled) = mpsc::channel::<()>();
    let (every, sweeps) = (suite.sample_every, suite.thread_states);
    let ports = running.process.fill().services.iter().map(|(name, port)| (*port, name.clone())).collect();
    let roots = watched.iter().skip(1).filter_map(|w| match w {
        Watched::Here { root, name, .. } => Some((*root, name.clone())),
        Watched::There { .. } => None,
    });
    let backends = Backends { ports, roots: roots.collect() };
    let measure_start = Instant::now() + suite.warmup;
    // The load stops when the run is told to, or when a host's link is lost mid-trial (the trial then fails).
    let load_stop = Arc::new(AtomicBool::new(false));
    let (run_stop, abort) = (stop.clone(), load_stop.clone());
    // The load generator's CPUs are this process's (prepare pinned it); the outsiders are looked at with the trees.
    let client_cpus = crate::process::allowed_cpus(std::process::id() as i32);
    let mut outsiders = Outsiders::start(watched[0].cpus_here(), client_cpus);
    let sampler = std::thread::spawn(move || {
        let mut trees: Vec<Sampler> = watched.into_iter().map(|w| w.sampler(&backends, sweeps)).collect();
        let mut samples: Vec<Vec<ResourceSample>> = trees.iter().map(|_| Vec::new()).collect();
        let mut lost = None;
        let mut next = Instant::now() + every;
        loop {
            let wait = next.saturating_duration_since(Instant::now()).min(STOP_CHECK);
            let ended = !matches!(sampled.recv_timeout(wait), Err(mpsc::RecvTimeoutError::Timeout));
            if run_stop.load(Ordering::Relaxed) {
                abort.store(true, Ordering::Relaxed);
            }
            if !ended && Instant::now() < next {
                continue;
            }
            next += every;
            let now = Instant::now();
            let t = if now >= measure_start {
                (now - measure_start).as_secs_f64()
            } else {
                -(measure_start - now).as_secs_f64()
            };
            // One more sample when the load ends, so the window's last part is not left out.
            for (tree, kept) in trees.iter_mut().zip(&mut samples) {
                kept.push(tree.sample(t));
            }
            outsiders.look();
            if lost.is_none() {
                lost = trees.iter().find_map(Sampler::lost);
                if lost.is_some() {
                    abort.store(true, Ordering::Relaxed);
                }
            }
            if ended {
                let seen: HashSet<(i32, u64)> = trees.iter().flat_map(Sampler::seen).collect();
                break (samples, outsiders.since(&seen), lost);
            }
        }
    });
    let result = work.run(suite, load_stop, on_event);
    let _ = stop_sampling.send(());
    let (samples, outsiders, lost) = sampler.join().unwrap_or_default();
    let mut samples = samples.into_iter();
    if let Some(lost) = lost {
        return Err(format!("server '{}' at {level}: {lost}", running.process.name()));
    }
    let result = result.map_err(|e| format!("server '{}' at {level}: {e}", running.process.name()))?;
    let responses = result.requests.ok + result.requests.http_errors;
    let sum = |samples: &[ResourceSample], cpus: u32| {
        usage(samples, responses, suite.warmup.as_secs_f64(), result.duration_s, cpus)
    };
    let server_samples = samples.next().unwrap_or_default();
    let server_usage = sum(&server_samples, cpu_counts[0]);
    let services = services
        .iter()
        .zip(samples)
        .zip(cpu_counts[1..].iter().zip(&shared_cpus))
        .map(|((service, samples), (&cpus, &shares_cpus))| ServiceTrial {
            name: service.name().to_string(),
            usage: sum(&samples, cpus),
            samples,
            shares_cpus,
        })
        .collect();
    Ok(TrialRecord {
        server: running.process.name().to_string(),
        level,
        repeat,
        result,
        samples: server_samples,
        usage: server_usage,
        services,
        outsiders,
    })
}

/// The load right after a server's start: its `start_warmup` at the first level it will be measured at, nothing
/// kept. A warm-up that cannot run (the server refuses, an agent is lost) fails the server's repeat, as its first
/// trial would.
pub(crate) fn start_warmup(
    suite: &Suite,
    spec: &ServerSpec,
    running: &RunningServer,
    level: f64,
    stop: Arc<AtomicBool>,
    on_event: &mut dyn FnMut(Event),
) -> Result<(), String> {
    let work = Load::new(suite, spec, running, level, Some(spec.start_warmup))?;
    work.run(suite, stop, on_event)
        .map(|_| ())
        .map_err(|e| format!("server '{}': its start warm-up at {level} failed: {e}", running.process.name()))
}

/// One level's load on a running server, ready to send from here or from the suite's agents.
struct Load<'a> {
    plan: Plan,
    body: &'a [u8],
    scenario: Option<shootout_scenario::Scenario>,
}

impl<'a> Load<'a> {
    /// The load of `level` on `running`; `warmup_only` makes it a start warm-up of that length instead of a
    /// trial: no warm-up or count of its own.
    fn new(
        suite: &'a Suite,
        spec: &ServerSpec,
        running: &RunningServer,
        level: f64,
        warmup_only: Option<std::time::Duration>,
    ) -> Result<Load<'a>, String> {
        let url = format!("{}{}", running.url, spec.path);
        let mut settings = load_settings(suite, spec, &url, level);
        if let Some(length) = warmup_only {
            settings = LoadSettings {
                duration: Some(length),
                requests: None,
                warmup: Some(std::time::Duration::ZERO),
                ..settings
            };
        }
        let options = settings.build(suite.threads).map_err(|e| format!("{url} at {level}: {e}"))?;
        let scenario = match &suite.load.scenario {
            Some(file) => Some(file.parse(&running.url).map_err(|e| e.to_string())?),
            None => None,
        };
        let body = suite.load.body.as_deref().unwrap_or_default().as_bytes();
        let mut plan = match scenario.clone() {
            Some(scenario) => Plan::with_scenario(options, scenario),
            None => Plan::new(options, body),
        }
        .map_err(|e| e.to_string())?;
        // A search's probe far behind the rate, or sure of its objectives, does not wait for its stragglers.
        if warmup_only.is_none() {
            plan.stakes = suite.search.map(|search| Stakes::of_probe(&suite.slo, search.precision));
        }
        Ok(Load { plan, body, scenario })
    }

    /// Sends it, from this process or shared out to the suite's agents.
    fn run(&self, suite: &Suite, stop: Arc<AtomicBool>, on_event: &mut dyn FnMut(Event)) -> Result<LoadResult, String> {
        match &suite.agents {
            None => shootout_engine::run(&self.plan, stop, &mut |p: &Progress| on_event(Event::Load(*p)))
                .map_err(|e| e.to_string()),
            Some(agents) => {
                from_agents(agents, Work { plan: &self.plan, body: self.body, scenario: self.scenario.as_ref() }, &stop)
            }
        }
    }
}

/// One trial's load shared out to the suite's agents and merged. An agent lost on the way fails the trial: its
/// figures would be a share short.
fn from_agents(agents: &Agents, work: Work<'_>, stop: &AtomicBool) -> Result<LoadResult, String> {
    let program =
        std::env::current_exe().map_err(|e| format!("cannot find this shootout binary for the agents: {e}"))?;
    let launcher = Launcher::new(program, &agents.settings, &agents.spec);
    let (result, _) = coordinate::load(&agents.spec, &launcher, work, stop, &mut |_| {}).map_err(|e| e.to_string())?;
    let lost: Vec<&str> = result.agents.iter().filter_map(|a| a.lost.as_deref()).collect();
    if lost.is_empty() {
        Ok(result)
    } else {
        Err(lost.join("; "))
    }
}

/// The settings of one level's trial on `server`: the suite's choices and the server's protocol, with the defaults
/// every load run shares.
fn load_settings(suite: &Suite, server: &ServerSpec, url: &str, level: f64) -> LoadSettings {
    let (connections, rate) = match suite.levels {
        Levels::Connections(_) => (Some(level as u32), None),
        Levels::Rates(_) => (None, Some(level)),
    };
    LoadSettings {
        url: url.to_string(),
        scenario: suite.load.scenario.as_ref().map(|f| f.path.display().to_string()),
        connections,
        rate,
        threads: Some(suite.threads),
        duration: Some(suite.duration),
        requests: suite.requests,
        method: suite.load.method.clone(),
        headers: suite.load.headers.clone(),
        body_bytes: suite.load.body.as_ref().map(|b| b.len() as u64),
        timeout: Some(suite.load.timeout),
        no_keepalive: !suite.load.keepalive,
        protocol: Some(server.protocol),
        streams: Some(server.streams),
        max_connections: suite.load.max_connections,
        max_redirects: suite.load.max_redirects,
        // The servers of a suite are the user's own: a self-signed certificate is expected.
        insecure: true,
        warmup: Some(suite.warmup),
        ..LoadSettings::default()
    }
}

/// Sums a trial's samples over its measured window. Each sample holds the CPU time since the one before (the
/// first: since the trial started, `warmup_s` before the window); the interval that straddles the window's start
/// counts for its share after it, so that the warm-up's CPU is not charged to the measured responses. The CPU per
/// response takes everything until the load ended, the last answers included. The shares are of the load's
/// measured window, `window_s` (its sending time): the CPU time in it over its length times the `cpus` the server
/// could use; the same of the time its threads waited for a CPU; how busy those CPUs were, by anything, weighted
/// by time. Waiting for the slowest last answers after it would otherwise pass for idle time.
fn usage(samples: &[ResourceSample], responses: u64, warmup_s: f64, window_s: f64, cpus: u32) -> ServerUsage {
    let measured: Vec<&ResourceSample> = samples.iter().filter(|s| s.t_s > 0.0).collect();
    let last_s = measured.iter().map(|s| s.t_s).fold(0.0, f64::max);
    let window_s = if window_s > 0.0 { window_s.min(last_s) } else { last_s };
    // CPU since the window began, and the sums within it, each sample's share of them weighted by the part of its
    // interval inside the window.
    let mut cpu_s = 0.0;
    let mut window = WindowSums::default();
    let mut previous = -warmup_s;
    for sample in samples {
        if sample.t_s > previous {
            let length = sample.t_s - previous;
            let after_start = (sample.t_s - previous.max(0.0)).max(0.0);
            let inside = (sample.t_s.min(window_s) - previous.max(0.0)).max(0.0);
            cpu_s += sample.cpu_s * after_start / length;
            window.add(sample, inside, inside / length);
        }
        previous = sample.t_s;
    }
    let pss: Vec<u64> = measured.iter().map(|s| s.pss_bytes).collect();
    let per_second = |sum: f64| if window_s > 0.0 { sum / window_s } else { 0.0 };
    let share = |seconds: f64| if cpus > 0 { per_second(seconds) / f64::from(cpus) } else { 0.0 };
    // A tree keeps its CPUs busy all the time at most: more is the samples' clock ticks (10 ms each) and their
    // intervals cut at the window's edges, not CPU it used.
    let busy_share = |seconds: f64| share(seconds).min(1.0);
    // Thread-seconds over the window's seconds: the mean number of threads in each state.
    let mut time = ThreadTime::default();
    time.add_scaled(&window.states, per_second(1.0));
    time.backends.sort_by(|a, b| b.1.total_cmp(&a.1));
    (time.on_cpu, time.runnable) = (per_second(window.cpu_s), per_second(window.queued_s));
    ServerUsage {
        cpu_s,
        cpu_us_per_request: if responses > 0 { cpu_s * 1e6 / responses as f64 } else { 0.0 },
        pss_mean_bytes: if pss.is_empty() { 0 } else { pss.iter().sum::<u64>() / pss.len() as u64 },
        pss_max_bytes: measured.iter().map(|s| s.pss_bytes).max().unwrap_or(0),
        rss_max_bytes: measured.iter().map(|s| s.rss_bytes).max().unwrap_or(0),
        processes_max: measured.iter().map(|s| s.processes).max().unwrap_or(0),
        threads_max: measured.iter().map(|s| s.threads).max().unwrap_or(0),
        cpus,
        busy: busy_share(window.cpu_s),
        queued: share(window.queued_s),
        cpus_busy: per_second(window.cpus_busy_s).min(1.0),
        busiest_cores: per_second(window.busiest_cpu_s),
        busiest_threads: measured.iter().map(|s| s.busiest_threads).max().unwrap_or(0),
        wanting_threads: {
            let mut wanting: Vec<u32> = measured.iter().map(|s| s.wanting_threads).collect();
            wanting.sort_unstable();
            wanting.get(wanting.len() / 2).copied().unwrap_or(0)
        },
        runtime: measured
            .iter()
            .max_by(|a, b| a.busiest_cpu_s.total_cmp(&b.busiest_cpu_s))
            .map(|s| s.busiest_runtime.clone())
            .unwrap_or_default(),
        housekeeping_threads: measured.iter().map(|s| s.housekeeping_threads).max().unwrap_or(0),
        collector: if window.cpu_s > 0.0 { (window.collector_cpu_s / window.cpu_s).min(1.0) } else { 0.0 },
        quota_cpus: measured.iter().map(|s| s.quota_cpus).fold(0.0, f64::max),
        throttled: if window.periods > 0.0 { window.throttled_periods / window.periods } else { 0.0 },
        listen_overflows: window.listen_overflows.round() as u64,
        syn_retransmits: window.syn_retransmits.round() as u64,
        resets: window.resets.round() as u64,
        softirq: per_second(window.softirq_s),
        softirq_block: {
            let (net, block) = (window.net_softirqs, window.block_softirqs);
            if net + block > 0.0 {
                block / (net + block)
            } else {
                0.0
            }
        },
        stalled: window.stalls_s.scaled(per_second(1.0)),
        time,
    }
}

/// What a trial's samples add up to inside its measured window.
#[derive(Debug, Default)]
struct WindowSums {
    cpu_s: f64,
    collector_cpu_s: f64,
    queued_s: f64,
    cpus_busy_s: f64,
    busiest_cpu_s: f64,
    periods: f64,
    throttled_periods: f64,
    listen_overflows: f64,
    syn_retransmits: f64,
    resets: f64,
    softirq_s: f64,
    net_softirqs: f64,
    block_softirqs: f64,
    stalls_s: Stalls,
    /// Thread-seconds in each wait (on CPU and runnable come from `cpu_s` and `queued_s`).
    states: ThreadTime,
}

impl WindowSums {
    /// Adds `sample`, of which `inside` seconds, a `part` of its interval, lie inside the window.
    fn add(&mut self, sample: &ResourceSample, inside: f64, part: f64) {
        self.cpu_s += sample.cpu_s * part;
        self.collector_cpu_s += sample.collector_cpu_s * part;
        self.queued_s += sample.cpu_queued_s * part;
        self.cpus_busy_s += sample.cpus_busy * inside;
        self.busiest_cpu_s += sample.busiest_cpu_s * part;
        self.periods += sample.periods as f64 * part;
        self.throttled_periods += sample.throttled_periods as f64 * part;
        self.listen_overflows += sample.listen_overflows as f64 * part;
        self.syn_retransmits += sample.syn_retransmits as f64 * part;
        self.resets += sample.resets as f64 * part;
        self.softirq_s += sample.softirq_s * part;
        self.net_softirqs += sample.net_softirqs as f64 * part;
        self.block_softirqs += sample.block_softirqs as f64 * part;
        self.stalls_s.add_scaled(sample.stalls_s, part);
        let counts = &sample.states;
        if counts.sweeps == 0 || inside <= 0.0 {
            return;
        }
        // Each count over the sweeps is the mean number of threads in that state over the interval.
        let seconds = |n: u32| f64::from(n) / f64::from(counts.sweeps) * inside;
        let time = &mut self.states;
        time.sweeps += (f64::from(counts.sweeps) * part).round() as u32;
        time.disk += seconds(counts.disk);
        time.lock += seconds(counts.lock);
        time.sleep += seconds(counts.sleep);
        time.client += seconds(counts.client);
        time.idle += seconds(counts.idle);
        for (name, n) in &counts.backends {
            time.add_backend(name, seconds(*n));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(t_s: f64, cpu_s: f64) -> ResourceSample {
        ResourceSample { t_s, cpu_s, pss_bytes: 1, ..ResourceSample::default() }
    }

    #[test]
    fn the_warm_up_is_not_charged_to_the_measured_responses() {
        // 1 s of warm-up, samples every 0.8 s at a steady 0.5 CPU-seconds per second, the load ending at 2 s.
        let samples = [sample(-0.2, 0.4), sample(0.6, 0.4), sample(1.4, 0.4), sample(2.0, 0.3)];
        let usage = usage(&samples, 1000, 1.0, 2.0, 2);
        assert!((usage.cpu_s - 1.0).abs() < 1e-9, "2 s at 0.5 CPU: {}", usage.cpu_s);
        assert!((usage.cpu_us_per_request - 1000.0).abs() < 1e-6);
        assert!((usage.busy - 0.25).abs() < 1e-9, "half a CPU of two: {}", usage.busy);
        // How busy the server's CPUs were, weighted by time: 0.6 s at 100%, 0.8 s at 50%, 0.6 s at 0%.
        let mut busy = samples;
        (busy[1].cpus_busy, busy[2].cpus_busy, busy[3].cpus_busy) = (1.0, 0.5, 0.0);
        assert!((super::usage(&busy, 1000, 1.0, 2.0, 2).cpus_busy - 0.5).abs() < 1e-9, "(0.6 + 0.4) / 2 s");
        // No warm-up: the first sample covers the window from its start.
        let usage = super::usage(&[sample(0.5, 0.25), sample(1.0, 0.25)], 10, 0.0, 1.0, 1);
        assert!((usage.cpu_s - 0.5).abs() < 1e-9);
    }

    #[test]
    fn the_wait_for_the_last_answers_is_not_idle_time_in_the_window() {
        // A 2 s window at a full CPU, then 1 s of waiting for the slowest answers with the server nearly idle:
        // all of the CPU is charged to the responses, but the busy share is of the 2 s of sending.
        let mut samples = [sample(1.0, 1.0), sample(2.0, 1.0), sample(3.0, 0.1)];
        samples[2].cpus_busy = 0.1;
        (samples[0].cpus_busy, samples[1].cpus_busy) = (1.0, 1.0);
        let usage = super::usage(&samples, 2100, 0.0, 2.0, 1);
        assert!((usage.cpu_s - 2.1).abs() < 1e-9);
        assert!((usage.cpu_us_per_request - 1000.0).abs() < 1e-6);
        assert!((usage.busy - 1.0).abs() < 1e-9, "{}", usage.busy);
        assert!((usage.cpus_busy - 1.0).abs() < 1e-9, "{}", usage.cpus_busy);
    }
}
