//! [`run_suite`]: the loop over repeats, servers and levels. Each server is started once per repeat and loaded at
//! every level in turn; each trial is saved as soon as it ends. A server that fails to start, fails its
//! verification or dies mid-run has its remaining trials of that repeat marked failed, and the suite goes on.
//! The pieces of a server's turn ([`launch`], [`measure`], [`shut_down`]) are shared with the capacity search
//! ([`crate::run::search`]), which runs the same turn at the levels it chooses.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use shootout_engine::Progress;
use shootout_model::disturbed::disturbance;
use shootout_model::run::{ContainerEnvironment, Environment, ServiceEnvironment, TrialRecord};

use crate::lifecycle::server::{self, RunningServer};
use crate::lifecycle::services::Services;
use crate::place::Places;
use crate::process;
use crate::run::trial::{start_warmup, trial};
use crate::store::Store;
use shootout_suite::{Order, ServerSpec, Suite};

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
    /// A capacity search's probe starts a trial.
    Probe {
        /// Server.
        server: String,
        /// The level probed.
        level: f64,
        /// Its repeat.
        repeat: u32,
        /// Probes of this server before this one.
        probe: usize,
        /// Servers whose search is over.
        servers_done: usize,
    },
    /// A server's profiled pass starts.
    Profile {
        /// Server.
        server: String,
        /// The level it is loaded at.
        level: f64,
        /// The profiler's name.
        profiler: &'static str,
    },
    /// A trial was measured and saved (a sweep's level, or a search's probe).
    Measured(Box<TrialRecord>),
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
    /// Trials that could not be measured, with why: one line each, or one for all of a server that could not be
    /// started at all (its command not found).
    pub failures: Vec<String>,
    /// How many trials (or searches) those lines stand for.
    pub failed: usize,
    /// Why the suite stopped before its end, when something it could not go on without failed (a service).
    pub stopped: Option<String>,
}

/// Runs (or resumes, when `store` already holds trials) the suite's sweep, its hosts reached through `places`.
pub fn run_suite(
    suite: &Suite,
    places: &Places,
    store: Store,
    stop: Arc<AtomicBool>,
    on_event: &mut dyn FnMut(Event),
) -> Result<Outcome, String> {
    prepare(suite, places, &store, on_event)?;
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
    let mut failed = 0;
    let mut stopped = None;
    let mut services = Services::new(suite, places, &store);
    // Servers whose command is not found: said once, and their other trials not tried.
    let mut not_found: std::collections::HashMap<usize, String> = std::collections::HashMap::new();
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
        let fail_rest = |from: usize, why: &str, failures: &mut Vec<String>, failed: &mut usize| {
            for &level in &pending[from..] {
                let _ = store.write_failure(&spec.name, level, repeat, why);
                failures.push(format!("{} at {level} {} (repeat {repeat}): {why}", spec.name, suite.unit()));
                *failed += 1;
            }
        };
        if let Some(why) = not_found.get(&index) {
            pending.iter().for_each(|&level| drop(store.write_failure(&spec.name, level, repeat, why)));
            failed += pending.len();
            done += pending.len();
            continue;
        }
        let mut running =
            match launch(suite, spec, places, &mut services, &store, repeat, pending[0], done, &stop, on_event) {
                Launched::Running(running) => running,
                Launched::Failed(why) if why.contains(process::NOT_FOUND) => {
                    pending.iter().for_each(|&level| drop(store.write_failure(&spec.name, level, repeat, &why)));
                    failures.push(format!("{}, each of its trials: {why}", spec.name));
                    not_found.insert(index, why);
                    failed += pending.len();
                    done += pending.len();
                    continue;
                }
                Launched::Failed(why) => {
                    fail_rest(0, &why, &mut failures, &mut failed);
                    done += pending.len();
                    continue;
                }
                Launched::Stopped(why) => {
                    stopped = Some(why);
                    break;
                }
                Launched::Interrupted => break,
            };
        for (i, &level) in pending.iter().enumerate() {
            if stop.load(Ordering::Relaxed) {
                break;
            }
            on_event(Event::Trial { server: spec.name.clone(), level, repeat, done, total });
            match measure(suite, spec, &mut running, &mut services, &store, level, repeat, &stop, on_event)? {
                Measured::Saved(_) => {}
                Measured::Failed(why) => {
                    fail_rest(i, &why, &mut failures, &mut failed);
                    break;
                }
                Measured::Stopped(why) => {
                    stopped = Some(why);
                    break;
                }
                Measured::Interrupted => break,
            }
            done += 1;
        }
        shut_down(spec, running, &mut services, &store, repeat, on_event);
        if stopped.is_some() {
            break;
        }
    }
    services.stop_all().into_iter().for_each(|notice| on_event(Event::Notice(notice)));
    drop(services);
    Ok(Outcome { store, interrupted: stop.load(Ordering::Relaxed), failures, failed, stopped })
}

/// What every run does first: the load generator pinned, the environment saved (once), damaged trial files named.
pub(crate) fn prepare(
    suite: &Suite,
    places: &Places,
    store: &Store,
    on_event: &mut dyn FnMut(Event),
) -> Result<(), String> {
    if let Some(cpus) = suite.client_cpus.as_deref().and_then(process::parse_cpus) {
        process::pin(&cpus).map_err(|e| format!("cannot pin the load generator to CPUs {cpus:?}: {e}"))?;
    }
    write_environment(suite, places, store)?;
    for (file, why) in store.damaged() {
        on_event(Event::Notice(format!("{} is damaged ({why}): its trial is measured again", file.display())));
    }
    Ok(())
}

/// How a server's start ended.
pub(crate) enum Launched {
    /// It runs, ready, verified and warmed up.
    Running(RunningServer),
    /// It did not start, or failed its start warm-up (its fault: its trials fail, and the suite goes on); what
    /// did start of it is stopped.
    Failed(String),
    /// A service it needs could not be made ready: the suite stops.
    Stopped(String),
    /// Ctrl-C while it started.
    Interrupted,
}

/// Starts `spec` for `repeat` after the services it needs, then loads it for its `start_warmup` at `level` (the
/// first it will be measured at); `done` is the count of trials before it, for the progress.
#[allow(clippy::too_many_arguments)]
pub(crate) fn launch(
    suite: &Suite,
    spec: &ServerSpec,
    places: &Places,
    services: &mut Services,
    store: &Store,
    repeat: u32,
    level: f64,
    done: usize,
    stop: &Arc<AtomicBool>,
    on_event: &mut dyn FnMut(Event),
) -> Launched {
    let interrupted = || stop.load(Ordering::Relaxed);
    let ports = match services.ready_for(spec, stop) {
        Ok(ports) => ports,
        Err(_) if interrupted() => return Launched::Interrupted,
        Err(why) => return Launched::Stopped(why),
    };
    let place = places.of(&spec.place);
    let running = match server::start(spec, &place, &ports, &store.log_path(&spec.name, repeat), stop) {
        Ok(running) => running,
        // Interrupted while it was starting: no fault of the server's, and nothing to mark failed.
        Err(_) if interrupted() => return Launched::Interrupted,
        Err(why) => {
            on_event(Event::Notice(why.clone()));
            return Launched::Failed(why.lines().next().unwrap_or(&why).to_string());
        }
    };
    if spec.start_warmup.is_zero() || interrupted() {
        return Launched::Running(running);
    }
    on_event(Event::StartWarmup { server: spec.name.clone(), repeat, duration: spec.start_warmup, done });
    let warmed = start_warmup(suite, spec, &running, level, stop.clone(), on_event);
    let failed = match warmed {
        Ok(()) => return Launched::Running(running),
        // Interrupted while it warmed up: no fault of the server's.
        Err(_) if interrupted() => None,
        Err(why) => {
            on_event(Event::Notice(format!("{why}\n{}", running.process.log_tail())));
            Some(why)
        }
    };
    shut_down(spec, running, services, store, repeat, on_event);
    failed.map_or(Launched::Interrupted, Launched::Failed)
}

/// How one trial ended.
pub(crate) enum Measured {
    /// Measured and saved.
    Saved(Box<TrialRecord>),
    /// The server was gone, died during it, or the load could not run: it and the server's levels after it fail.
    Failed(String),
    /// A service the server needs ended: the suite stops.
    Stopped(String),
    /// Ctrl-C: nothing is kept, and nothing fails.
    Interrupted,
}

/// One trial of `running` at `level`: the services reset, the load run while both are sampled, and the trial
/// saved; one that something outside the run disturbed is kept aside in `disturbed/` and measured again, up to the
/// suite's `disturbed_again` times. An error is a trial that could not be saved, which stops the run.
#[allow(clippy::too_many_arguments)]
pub(crate) fn measure(
    suite: &Suite,
    spec: &ServerSpec,
    running: &mut RunningServer,
    services: &mut Services,
    store: &Store,
    level: f64,
    repeat: u32,
    stop: &Arc<AtomicBool>,
    on_event: &mut dyn FnMut(Event),
) -> Result<Measured, String> {
    let interrupted = || stop.load(Ordering::Relaxed);
    let gone = |running: &mut RunningServer, when: &str, on_event: &mut dyn FnMut(Event)| {
        let status = running.process.exited()?;
        let why = format!("server '{}' exited ({status}) {when}", spec.name);
        on_event(Event::Notice(format!("{why}\n{}", running.process.log_tail())));
        Some(Measured::Failed(why))
    };
    // The cell's earlier repeats, whose quietest CPU pressure is this trial's quiet level.
    let earlier: Vec<TrialRecord> = (1..repeat).filter_map(|r| store.trial(&spec.name, level, r)).collect();
    let earlier: Vec<&TrialRecord> = earlier.iter().collect();
    // Measured again, each time as the first, while something outside the run disturbs it and the suite allows.
    for nth in 1.. {
        if let Some(failed) = gone(running, "during the run", on_event) {
            return Ok(failed);
        }
        match services.before_trial(spec, stop) {
            Ok(()) => {}
            Err(_) if interrupted() => return Ok(Measured::Interrupted),
            Err(why) => return Ok(Measured::Stopped(why)),
        }
        let watched = services.watched(spec);
        let record = match trial(suite, spec, running, &watched, level, repeat, stop.clone(), on_event) {
            Ok(record) => record,
            // Interrupted during its warm-up or load: no fault of the server's, and nothing to mark failed.
            Err(_) if interrupted() => return Ok(Measured::Interrupted),
            Err(why) => {
                on_event(Event::Notice(why.clone()));
                return Ok(Measured::Failed(why));
            }
        };
        // A service that ended during the trial: it was measured without it, and is not kept.
        if let Err(why) = services.still_running_for(spec) {
            return Ok(Measured::Stopped(why));
        }
        // A server that ended during its trial (or whose host's link was lost): the trial measured a dying server.
        if let Some(failed) = gone(running, "during its trial", on_event) {
            return Ok(failed);
        }
        if record.result.interrupted {
            return Ok(Measured::Interrupted);
        }
        let again = disturbance(&record, &earlier).filter(|_| nth <= suite.disturbed_again && !interrupted());
        let Some(disturbance) = again else {
            store.write_trial(&record).map_err(|e| format!("cannot save a trial in {}: {e}", store.dir.display()))?;
            on_event(Event::Measured(Box::new(record.clone())));
            return Ok(Measured::Saved(Box::new(record)));
        };
        store
            .write_disturbed(&record, nth)
            .map_err(|e| format!("cannot keep a trial in {}: {e}", store.dir.display()))?;
        on_event(Event::Notice(format!(
            "{} at {level} {} (repeat {repeat}) was disturbed: {}; measuring it again ({nth} of {})",
            spec.name,
            suite.unit(),
            disturbance.text(),
            suite.disturbed_again
        )));
    }
    unreachable!("the loop returns once a measurement is kept")
}

/// Stops `running` and tears it down, then lets the services it ran beside go (those restarted per server).
pub(crate) fn shut_down(
    spec: &ServerSpec,
    running: RunningServer,
    services: &mut Services,
    store: &Store,
    repeat: u32,
    on_event: &mut dyn FnMut(Event),
) {
    let log = store.log_path(&spec.name, repeat);
    let place = running.place.clone();
    let teardown = spec.teardown.as_deref();
    let notices = running.process.stop_and_tear_down(&place, teardown, &spec.cwd, &spec.env, &log, spec.hook_timeout);
    notices.into_iter().for_each(|notice| on_event(Event::Notice(notice)));
    services.after_server(spec).into_iter().for_each(|notice| on_event(Event::Notice(notice)));
}

/// Saves the suite's environment (machines, versions, CPU split), once.
fn write_environment(suite: &Suite, places: &Places, store: &Store) -> Result<(), String> {
    if store.dir.join("environment.json").is_file() {
        return Ok(());
    }
    let here = crate::place::remote::protocol::this_machine();
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
        isolation: if crate::process::cgroup::Cgroup::create("probe").is_some() {
            "cgroup v2"
        } else {
            "process group"
        }
        .into(),
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
        containers: suite
            .servers
            .iter()
            .map(|s| (&s.name, &s.place))
            .chain(suite.services.iter().map(|s| (&s.name, &s.place)))
            .filter_map(|(name, place)| {
                let container = place.container()?;
                Some(ContainerEnvironment {
                    name: name.clone(),
                    image: container.image.clone(),
                    engine: container.engine.clone().unwrap_or_default(),
                    options: container.options.clone(),
                })
            })
            .collect(),
    };
    store
        .write("environment.json", serde_json::to_string_pretty(&environment).unwrap_or_default().as_bytes())
        .map_err(|e| e.to_string())
}
