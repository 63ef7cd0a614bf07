//! [`run_suite`]: the loop over repeats, servers and levels. Each server is started once per repeat and loaded at
//! every level in turn; each trial is saved as soon as it ends. A server that fails to start, fails its
//! verification or dies mid-run has its remaining trials of that repeat marked failed, and the suite goes on.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Instant;

use shootout_agents::coordinate::{self, Work};
use shootout_agents::launch::Launcher;
use shootout_engine::{Plan, Progress};
use shootout_model::run::{Environment, ResourceSample, ServerUsage, ServiceEnvironment, ServiceTrial, TrialRecord};
use shootout_model::settings::LoadSettings;
use shootout_model::LoadResult;

use crate::place::{Places, Sampler, Watched};
use crate::process;
use crate::server::{self, RunningServer};
use crate::services::Services;
use crate::store::Store;
use shootout_suite::{Agents, Levels, Order, ServerSpec, Suite};

/// What the runner tells whoever draws the progress.
#[derive(Debug, Clone)]
pub enum Event {
    /// A trial starts: its place in the whole suite.
    Trial {
        /// Server.
        server: String,
        /// Level.
        level: f64,
        /// Repeat.
        repeat: u32,
        /// Trials done before this one.
        done: usize,
        /// Trials in the suite.
        total: usize,
    },
    /// A server just started is loaded for its `start_warmup`, unmeasured, before its first level.
    StartWarmup {
        /// Server.
        server: String,
        /// Repeat.
        repeat: u32,
        /// How long.
        duration: std::time::Duration,
        /// Trials done before it.
        done: usize,
    },
    /// The running trial's (or start warm-up's) progress.
    Load(Progress),
    /// Something the user should read (a server that failed, processes left behind).
    Notice(String),
}

/// How a suite run ended.
#[derive(Debug)]
pub struct Outcome {
    /// The results directory.
    pub store: Store,
    /// True when Ctrl-C stopped it.
    pub interrupted: bool,
    /// Trials that could not be measured, with why.
    pub failures: Vec<String>,
    /// Why the suite stopped before its end, when something it could not go on without failed (a service).
    pub stopped: Option<String>,
}

/// Runs (or resumes, when `store` already holds trials) the suite, its hosts reached through `places`.
pub fn run_suite(
    suite: &Suite,
    places: &Places,
    store: Store,
    stop: Arc<AtomicBool>,
    on_event: &mut dyn FnMut(Event),
) -> Result<Outcome, String> {
    if let Some(cpus) = suite.client_cpus.as_deref().and_then(process::parse_cpus) {
        process::pin(&cpus).map_err(|e| format!("cannot pin the load generator to CPUs {cpus:?}: {e}"))?;
    }
    write_environment(suite, places, &store)?;
    for (file, why) in store.damaged() {
        on_event(Event::Notice(format!("{} is damaged ({why}): its trial is measured again", file.display())));
    }
    let levels = suite.levels.values();
    let mut order: Vec<(usize, u32)> = Vec::new();
    match suite.order {
        Order::Interleaved => {
            (1..=suite.repeats).for_each(|r| (0..suite.servers.len()).for_each(|s| order.push((s, r))))
        }
        Order::Grouped => (0..suite.servers.len()).for_each(|s| (1..=suite.repeats).for_each(|r| order.push((s, r)))),
    }
    let total = order.len() * levels.len();
    let mut done = 0;
    let mut failures = Vec::new();
    let mut stopped = None;
    let mut services = Services::new(suite, places, &store);
    for (index, repeat) in order {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let spec = &suite.servers[index];
        let pending: Vec<f64> = levels.iter().copied().filter(|&l| !store.has_trial(&spec.name, l, repeat)).collect();
        done += levels.len() - pending.len();
        if pending.is_empty() {
            continue;
        }
        let fail_rest = |from: usize, why: &str, failures: &mut Vec<String>| {
            for &level in &pending[from..] {
                let _ = store.write_failure(&spec.name, level, repeat, why);
                failures.push(format!("{} at {level} {} (repeat {repeat}): {why}", spec.name, suite.unit()));
            }
        };
        let ports = match services.ready_for(spec, &stop) {
            Ok(ports) => ports,
            Err(_) if stop.load(Ordering::Relaxed) => break,
            Err(why) => {
                stopped = Some(why);
                break;
            }
        };
        let place = places.of(&spec.place);
        let mut running = match server::start(spec, &place, &ports, &store.log_path(&spec.name, repeat), &stop) {
            Ok(running) => running,
            // Interrupted while it was starting: no fault of the server's, and nothing to mark failed.
            Err(_) if stop.load(Ordering::Relaxed) => break,
            Err(why) => {
                on_event(Event::Notice(why.clone()));
                fail_rest(0, why.lines().next().unwrap_or(&why), &mut failures);
                done += pending.len();
                continue;
            }
        };
        // A start warm-up that fails leaves no level to run: the loop below then has nothing to do, and the
        // server is stopped and torn down as after any repeat.
        let mut levels_left = &pending[..];
        if !spec.start_warmup.is_zero() && !stop.load(Ordering::Relaxed) {
            on_event(Event::StartWarmup { server: spec.name.clone(), repeat, duration: spec.start_warmup, done });
            match start_warmup(suite, spec, &running, pending[0], stop.clone(), on_event) {
                Ok(()) => {}
                // Interrupted while it warmed up: no fault of the server's.
                Err(_) if stop.load(Ordering::Relaxed) => levels_left = &[],
                Err(why) => {
                    on_event(Event::Notice(format!("{why}\n{}", running.process.log_tail())));
                    fail_rest(0, &why, &mut failures);
                    done += pending.len();
                    levels_left = &[];
                }
            }
        }
        for (i, &level) in levels_left.iter().enumerate() {
            if stop.load(Ordering::Relaxed) {
                break;
            }
            if let Some(status) = running.process.exited() {
                let why = format!("server '{}' exited ({status}) during the run", spec.name);
                on_event(Event::Notice(format!("{why}\n{}", running.process.log_tail())));
                fail_rest(i, &why, &mut failures);
                break;
            }
            match services.before_trial(spec, &stop) {
                Ok(()) => {}
                Err(_) if stop.load(Ordering::Relaxed) => break,
                Err(why) => {
                    stopped = Some(why);
                    break;
                }
            }
            on_event(Event::Trial { server: spec.name.clone(), level, repeat, done, total });
            let watched = services.watched(spec);
            match trial(suite, spec, &mut running, &watched, level, repeat, stop.clone(), on_event) {
                Ok(record) => {
                    // A service that ended during the trial: it was measured without it, and is not kept.
                    if let Err(why) = services.still_running_for(spec) {
                        stopped = Some(why);
                        break;
                    }
                    // A server that ended during its trial (or whose host's link was lost): the trial measured a
                    // dying server, and is marked failed with the levels after it.
                    if let Some(status) = running.process.exited() {
                        let why = format!("server '{}' exited ({status}) during its trial", spec.name);
                        on_event(Event::Notice(format!("{why}\n{}", running.process.log_tail())));
                        fail_rest(i, &why, &mut failures);
                        break;
                    }
                    if !record.result.interrupted {
                        store
                            .write_trial(&record)
                            .map_err(|e| format!("cannot save a trial in {}: {e}", store.dir.display()))?;
                    }
                }
                // Interrupted during its warm-up or load: no fault of the server's, and nothing to mark failed.
                Err(_) if stop.load(Ordering::Relaxed) => break,
                Err(why) => {
                    on_event(Event::Notice(why.clone()));
                    fail_rest(i, &why, &mut failures);
                    break;
                }
            }
            done += 1;
        }
        let log = store.log_path(&spec.name, repeat);
        let notices = running.process.stop_and_tear_down(&place, spec.teardown.as_deref(), &spec.cwd, &spec.env, &log);
        notices.into_iter().for_each(|notice| on_event(Event::Notice(notice)));
        services.after_server(spec).into_iter().for_each(|notice| on_event(Event::Notice(notice)));
        if stopped.is_some() {
            break;
        }
    }
    services.stop_all().into_iter().for_each(|notice| on_event(Event::Notice(notice)));
    drop(services);
    Ok(Outcome { store, interrupted: stop.load(Ordering::Relaxed), failures, stopped })
}

/// One trial: the load at `level` while a sampler watches the server's process tree and those of the services
/// it runs beside (`services`).
#[allow(clippy::too_many_arguments)]
fn trial(
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
    let (stop_sampling, sampled) = mpsc::channel::<()>();
    let every = suite.sample_every;
    let measure_start = Instant::now() + suite.warmup;
    let sampler = std::thread::spawn(move || {
        let mut trees: Vec<Sampler> = watched.into_iter().map(Watched::sampler).collect();
        let mut samples: Vec<Vec<ResourceSample>> = trees.iter().map(|_| Vec::new()).collect();
        loop {
            let ended = !matches!(sampled.recv_timeout(every), Err(mpsc::RecvTimeoutError::Timeout));
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
            if ended {
                break samples;
            }
        }
    });
    let result = work.run(suite, stop, on_event);
    let _ = stop_sampling.send(());
    let mut samples = sampler.join().unwrap_or_default().into_iter();
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
        .zip(&cpu_counts[1..])
        .map(|((service, samples), &cpus)| ServiceTrial {
            name: service.name().to_string(),
            usage: sum(&samples, cpus),
            samples,
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
    })
}

/// The load right after a server's start: its `start_warmup` at the first level it will be measured at, nothing
/// kept. A warm-up that cannot run (the server refuses, an agent is lost) fails the server's repeat, as its first
/// trial would.
fn start_warmup(
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
        let plan = match scenario.clone() {
            Some(scenario) => Plan::with_scenario(options, scenario),
            None => Plan::new(options, body),
        }
        .map_err(|e| e.to_string())?;
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
    // CPU since the window began, and within it: CPU, threads' wait for a CPU, and CPUs' busy time.
    let (mut cpu_s, mut window_cpu_s, mut window_queued_s, mut window_cpus_busy_s) = (0.0, 0.0, 0.0, 0.0);
    let mut previous = -warmup_s;
    for sample in samples {
        if sample.t_s > previous {
            let length = sample.t_s - previous;
            let after_start = (sample.t_s - previous.max(0.0)).max(0.0);
            let inside = (sample.t_s.min(window_s) - previous.max(0.0)).max(0.0);
            cpu_s += sample.cpu_s * after_start / length;
            window_cpu_s += sample.cpu_s * inside / length;
            window_queued_s += sample.cpu_queued_s * inside / length;
            window_cpus_busy_s += sample.cpus_busy * inside;
        }
        previous = sample.t_s;
    }
    let pss: Vec<u64> = measured.iter().map(|s| s.pss_bytes).collect();
    let share = |seconds: f64| if window_s > 0.0 && cpus > 0 { seconds / (window_s * f64::from(cpus)) } else { 0.0 };
    ServerUsage {
        cpu_s,
        cpu_us_per_request: if responses > 0 { cpu_s * 1e6 / responses as f64 } else { 0.0 },
        pss_mean_bytes: if pss.is_empty() { 0 } else { pss.iter().sum::<u64>() / pss.len() as u64 },
        pss_max_bytes: measured.iter().map(|s| s.pss_bytes).max().unwrap_or(0),
        rss_max_bytes: measured.iter().map(|s| s.rss_bytes).max().unwrap_or(0),
        processes_max: measured.iter().map(|s| s.processes).max().unwrap_or(0),
        threads_max: measured.iter().map(|s| s.threads).max().unwrap_or(0),
        cpus,
        busy: share(window_cpu_s),
        queued: share(window_queued_s),
        cpus_busy: if window_s > 0.0 { window_cpus_busy_s / window_s } else { 0.0 },
    }
}

/// Saves the suite's environment (machines, versions, CPU split), once.
fn write_environment(suite: &Suite, places: &Places, store: &Store) -> Result<(), String> {
    if store.dir.join("environment.json").is_file() {
        return Ok(());
    }
    let here = crate::remote::protocol::this_machine();
    let version = |command: &Option<String>, place: &shootout_suite::Place, cwd: &std::path::Path| {
        command.as_deref().map_or_else(String::new, |c| places.of(place).version(c, cwd))
    };
    let environment = Environment {
        shootout: env!("CARGO_PKG_VERSION").into(),
        kernel: here.kernel,
        cpu_model: here.cpu_model,
        cpus: here.cpus,
        memory_bytes: here.memory_bytes,
        client_cpus: suite.client_cpus.clone().unwrap_or_default(),
        server_cpus: suite.servers.iter().map(|s| (s.name.clone(), s.cpus.clone().unwrap_or_default())).collect(),
        isolation: if crate::cgroup::Cgroup::create("probe").is_some() { "cgroup v2" } else { "process group" }.into(),
        started_at: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
        versions: suite
            .servers
            .iter()
            .map(|s| (s.name.clone(), version(&s.version_command, &s.place, &s.cwd)))
            .collect(),
        services: suite
            .services
            .iter()
            .map(|s| ServiceEnvironment {
                name: s.name.clone(),
                cpus: s.cpus.clone().unwrap_or_default(),
                version: version(&s.version_command, &s.place, &s.cwd),
            })
            .collect(),
        hosts: places.machines(),
    };
    store
        .write("environment.json", serde_json::to_string_pretty(&environment).unwrap_or_default().as_bytes())
        .map_err(|e| e.to_string())
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
