//! [`run_profiles`]: each server's profiled pass, after every measured trial of the run (so that no measured
//! figure carries a profiler's cost). The server is started once more, warmed up, and loaded at its chosen level
//! for the profile's duration while the profiler for its runtime records its whole process tree; the pass is a
//! trial like the others (sampled, judged by the same figures), saved beside its folded stacks, so that the
//! report can set its figures beside the unprofiled ones at that level. A server on a host is profiled there (by
//! `shootout host`), one in a container by the PIDs this machine sees. A server that cannot be profiled (its
//! profiler is missing where it runs, it ended during its pass) is said once, its reason saved for the report
//! (`profiles/SERVER-LEVEL.failed`), and the run goes on unprofiled.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use shootout_model::profile::{OffCpu, ProfileSpec, ServerProfile};
use shootout_model::SATURATION;
use shootout_suite::{ServerSpec, Suite};

use crate::lifecycle::server::RunningServer;
use crate::lifecycle::services::Services;
use crate::place::Places;
use crate::run::runner::{launch, shut_down, Event, Launched};
use crate::run::trial::trial;
use crate::store::{profile_name, Store, PROFILED_PASS};

/// How the profiled passes went: the servers that could not be profiled, each with why, and whether Ctrl-C
/// cut them short.
#[derive(Debug, Default)]
pub struct Profiled {
    /// Each server not profiled, with why.
    pub skipped: Vec<String>,
    /// A service failed: the passes stopped there.
    pub stopped: Option<String>,
}

/// Profiles each server of `levels` (its name and the level to load it at) that has no saved profile yet, as
/// `spec` says.
pub fn run_profiles(
    suite: &Suite,
    spec: ProfileSpec,
    places: &Places,
    store: &Store,
    levels: &[(String, f64)],
    stop: &Arc<AtomicBool>,
    on_event: &mut dyn FnMut(Event),
) -> Profiled {
    // The pass is the suite's warm-up and then the profile's duration.
    let pass = Suite { duration: spec.duration, requests: None, ..suite.clone() };
    let mut services = Services::new(&pass, places, store);
    let mut profiled = Profiled::default();
    for (name, level) in levels {
        if stop.load(Ordering::Relaxed) || store.has_profile(name, *level) {
            continue;
        }
        let Some(server) = pass.servers.iter().find(|s| &s.name == name) else { continue };
        let launched = launch(&pass, server, places, &mut services, store, PROFILED_PASS, *level, 0, stop, on_event);
        let mut skip = |why: String| {
            let _ = store.write_profile_failure(name, *level, &why);
            profiled.skipped.push(format!("{name}: {why}"));
        };
        let mut running = match launched {
            Launched::Running(running) => running,
            Launched::Failed(why) => {
                skip(why);
                continue;
            }
            Launched::Stopped(why) => {
                profiled.stopped = Some(why);
                break;
            }
            Launched::Interrupted => break,
        };
        let outcome = profile_one(&pass, spec, server, &mut running, &mut services, store, *level, stop, on_event);
        shut_down(server, running, &mut services, store, PROFILED_PASS, on_event);
        match outcome {
            Ok(()) => {}
            Err(_) if stop.load(Ordering::Relaxed) => break,
            Err(why) => skip(why),
        }
    }
    services.stop_all().into_iter().for_each(|notice| on_event(Event::Notice(notice)));
    profiled
}

/// The median busy share of `server`'s measured trials at `level`, if it has any.
fn busy_at(store: &Store, server: &str, level: f64) -> Option<f64> {
    let mut busy: Vec<f64> = store
        .trials()
        .ok()?
        .into_iter()
        .filter(|t| t.server == server && t.level == level)
        .map(|t| t.usage.busy)
        .collect();
    busy.sort_by(f64::total_cmp);
    busy.get(busy.len() / 2).copied()
}

/// Loads `running` at `level` while its profiler records, and saves the pass.
#[allow(clippy::too_many_arguments)]
fn profile_one(
    pass: &Suite,
    spec: ProfileSpec,
    server: &ServerSpec,
    running: &mut RunningServer,
    services: &mut Services,
    store: &Store,
    level: f64,
    stop: &Arc<AtomicBool>,
    on_event: &mut dyn FnMut(Event),
) -> Result<(), String> {
    let profilee = running.process.profilee(spec.profiler).map_err(|e| format!("not profiled: {e}"))?;
    services.before_trial(server, stop)?;
    let watched = services.watched(server);
    on_event(Event::Profile { server: server.name.clone(), level, profiler: profilee.profiler().name() });
    let (dir, name) = (store.profiles_dir(), profile_name(&server.name, level));
    // Where a server's CPU was its limit, its threads blocked little, and recording every context switch would
    // weigh on its on-CPU profile (the kernel's work at each switch counted under the frame that blocked).
    let cpu_bound = busy_at(store, &server.name, level).filter(|busy| *busy >= SATURATION);
    let (measured, recorded) = profilee.around(pass.warmup, &dir, &name, cpu_bound.is_none(), stop, || {
        trial(pass, server, running, &watched, level, PROFILED_PASS, stop.clone(), on_event)
    });
    // A server that ended during its pass: what the profiler recorded is not the server under load.
    if let Some(ended) = running.process.exited() {
        let tail = running.process.log_tail();
        return Err(format!("the server ended during its profiled pass ({ended}), so no profile is kept\n{tail}"));
    }
    let (trial, recorded) = (measured?, recorded?);
    if trial.result.interrupted {
        return Err("interrupted".into());
    }
    let profile = ServerProfile {
        server: server.name.clone(),
        level,
        profiler: recorded.profiler,
        native_perf: recorded.native_perf,
        command: recorded.command.clone(),
        samples: recorded.stacks.samples(),
        seconds: recorded.seconds,
        trial,
        off_cpu: Some(match cpu_bound {
            Some(busy) => OffCpu::LeftOut {
                why: format!(
                    "its CPU was its limit at this level ({:.0}% busy), so its every context switch was not \
                     recorded: that would weigh on its on-CPU profile",
                    busy * 100.0
                ),
            },
            None => recorded.off_cpu.0,
        }),
    };
    store
        .write_profile(&profile, &recorded.stacks.text(), &recorded.off_cpu.1.text())
        .map_err(|e| format!("cannot save its profile in {}: {e}", store.dir.display()))
}
