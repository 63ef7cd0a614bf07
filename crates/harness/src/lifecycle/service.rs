//! One service's lifecycle (a database beside the servers): [`start`] (setup and spawn, here or on a host:
//! [`Place::start`]; wait until its ready command succeeds or its port accepts, where it runs), [`RunningService::reset`] (its data back to the same state
//! before a server's trials) and its stop ([`Placed::stop`]). A service that never gets ready, exits, or whose
//! reset fails stops the suite: a server measured without its database would be measured wrong.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::place::{Place, Placed};
use crate::process::{Hook, Launch};
use shootout_suite::ServiceSpec;

/// The longest one try of a ready command may take.
const READY_TRY: Duration = Duration::from_secs(5);

/// A started service.
#[derive(Debug)]
pub struct RunningService {
    /// Its processes, here or on a host.
    pub process: Placed,
    /// Where it runs (its hooks run there too).
    pub place: Place,
}

/// Starts `spec` beside `earlier` services (names and ports), logging to `log`, and returns once it is ready.
/// When `stop` is set meanwhile, it is stopped and an error returned, which the caller knows by `stop`.
pub fn start(
    spec: &ServiceSpec,
    place: &Place,
    earlier: &[(String, u16)],
    log: &Path,
    stop: &AtomicBool,
) -> Result<RunningService, String> {
    let launch = Launch {
        kind: "service",
        name: &spec.name,
        command: &spec.command,
        port: spec.port,
        setup: spec.setup.as_deref(),
        cwd: &spec.cwd,
        env: &spec.env,
        cpus: spec.cpus.as_deref(),
        stop_signal: spec.stop_signal,
        grace: spec.stop_grace,
        stop_pidfile: None,
        container: spec.place.container(),
        hook_timeout: spec.hook_timeout,
    };
    let mut service = RunningService { process: place.start(&launch, earlier, log, stop)?, place: place.clone() };
    if let Err(e) = service.wait_ready(spec, log, stop) {
        service.process.stop();
        return Err(e);
    }
    Ok(service)
}

impl RunningService {
    /// Waits until the ready command succeeds (its output into the log), or the port accepts a connection.
    fn wait_ready(&mut self, spec: &ServiceSpec, log: &Path, stop: &AtomicBool) -> Result<(), String> {
        let deadline = Instant::now() + spec.ready_timeout;
        let name = &spec.name;
        let mut last = String::from("not tried yet");
        while Instant::now() < deadline {
            if stop.load(Ordering::Relaxed) {
                return Err(format!("service '{name}': interrupted while it was getting ready"));
            }
            if let Some(status) = self.process.exited() {
                return Err(self.process.ended_early(&status, "it was ready"));
            }
            let ready = match &spec.ready_command {
                Some(command) => {
                    let hook = Hook { command, cwd: &spec.cwd, env: &spec.env, fill: self.process.fill(), log };
                    self.place.run_hook(hook, stop, Some(deadline.min(Instant::now() + READY_TRY)))
                }
                None => self.place.accepts(self.process.fill().port),
            };
            match ready {
                Ok(()) => return Ok(()),
                Err(why) => last = why,
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let what =
            if spec.ready_command.is_some() { "its ready command never succeeded" } else { "its port never accepted" };
        Err(format!(
            "service '{name}' was not ready within {:?} ({what}: {last}); raise ready.timeout if it is slow to start\n{}",
            spec.ready_timeout,
            self.process.log_tail()
        ))
    }

    /// Runs the service's reset, if it has one: its data back to the same state.
    pub fn reset(&self, spec: &ServiceSpec, log: &Path, stop: &AtomicBool) -> Result<(), String> {
        let Some(reset) = &spec.reset else { return Ok(()) };
        let hook = Hook { command: reset, cwd: &spec.cwd, env: &spec.env, fill: self.process.fill(), log };
        let deadline = Instant::now() + spec.hook_timeout;
        let ran = self.place.run_hook(hook, stop, Some(deadline));
        ran.map_err(|e| crate::process::hook_failed(&format!("service '{}'", spec.name), "its reset", e))
    }
}
