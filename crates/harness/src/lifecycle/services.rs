//! [`Services`]: the services of one run (`[[service]]`), each started when the first server that needs it starts,
//! in the suite's order: those with `restart = "suite"` once for the whole run, those with `restart = "server"`
//! anew for each server start and stopped with it. Before each server starts, every service it needs is reset
//! (and before each of its trials too, with `reset_every = "trial"`); a service that exits, or whose reset fails,
//! stops the suite. Their logs are `logs/services/NAME.log` (a folder of their own, so no server's log can
//! share a name with one), each start appended.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

use shootout_suite::{file_name, ResetEvery, Restart, ServerSpec, Suite};

use crate::lifecycle::service::{self, RunningService};
use crate::place::{Places, Watched};
use crate::store::Store;

/// The services of a run, running or not yet started.
#[derive(Debug)]
pub struct Services<'a> {
    suite: &'a Suite,
    places: &'a Places,
    logs: PathBuf,
    running: Vec<Option<RunningService>>,
}

impl<'a> Services<'a> {
    /// None running yet.
    pub fn new(suite: &'a Suite, places: &'a Places, store: &Store) -> Services<'a> {
        let running = suite.services.iter().map(|_| None).collect();
        Services { suite, places, logs: store.dir.join("logs").join("services"), running }
    }

    fn log(&self, index: usize) -> PathBuf {
        self.logs.join(format!("{}.log", file_name(&self.suite.services[index].name)))
    }

    /// The indexes of the services `server` needs, in the suite's order.
    fn needed(&self, server: &ServerSpec) -> Vec<usize> {
        (0..self.suite.services.len()).filter(|&i| server.needs.contains(&self.suite.services[i].name)).collect()
    }

    /// Starts (or starts anew) what `server` needs, resets it, and returns the names and ports to fill its
    /// placeholders with. An error stops the suite.
    pub fn ready_for(&mut self, server: &ServerSpec, stop: &AtomicBool) -> Result<Vec<(String, u16)>, String> {
        let mut ports = Vec::new();
        for index in self.needed(server) {
            let spec = &self.suite.services[index];
            if let Some(service) = self.running[index].as_mut() {
                still_running(service)?;
            }
            if self.running[index].is_none() {
                std::fs::create_dir_all(&self.logs).map_err(|e| format!("{}: {e}", self.logs.display()))?;
                let started = service::start(spec, &self.places.of(&spec.place), &ports, &self.log(index), stop)?;
                self.running[index] = Some(started);
            }
            let service = self.running[index].as_ref().expect("started above");
            service.reset(spec, &self.log(index), stop)?;
            ports.push((spec.name.clone(), service.process.fill().port));
        }
        Ok(ports)
    }

    /// Before each trial of `server`: the services it needs are still running, and those reset before every
    /// trial are reset.
    pub fn before_trial(&mut self, server: &ServerSpec, stop: &AtomicBool) -> Result<(), String> {
        self.still_running_for(server)?;
        for index in self.needed(server) {
            let spec = &self.suite.services[index];
            let log = self.log(index);
            match &self.running[index] {
                Some(service) if spec.reset_every == ResetEvery::Trial => service.reset(spec, &log, stop)?,
                _ => {}
            }
        }
        Ok(())
    }

    /// Nothing, while every service `server` needs runs; else why the suite cannot go on. After a trial, a
    /// service gone meanwhile means the trial was measured without it.
    pub fn still_running_for(&mut self, server: &ServerSpec) -> Result<(), String> {
        for index in self.needed(server) {
            if let Some(service) = self.running[index].as_mut() {
                still_running(service)?;
            }
        }
        Ok(())
    }

    /// The trees of the services `server` runs beside, for the trial's sampler.
    pub fn watched(&self, server: &ServerSpec) -> Vec<Watched> {
        self.needed(server).into_iter().filter_map(|i| self.running[i].as_ref()).map(|s| s.process.watched()).collect()
    }

    /// After `server` stopped: the services started for it alone are stopped; returns what went wrong.
    pub fn after_server(&mut self, server: &ServerSpec) -> Vec<String> {
        let scoped: Vec<usize> =
            self.needed(server).into_iter().filter(|&i| self.suite.services[i].restart == Restart::Server).collect();
        scoped.into_iter().rev().flat_map(|i| self.stop(i)).collect()
    }

    /// Stops every running service, the last started first; returns what went wrong.
    pub fn stop_all(&mut self) -> Vec<String> {
        (0..self.running.len()).rev().flat_map(|i| self.stop(i)).collect()
    }

    /// Stops service `index` if it runs, and runs its teardown.
    fn stop(&mut self, index: usize) -> Vec<String> {
        let Some(service) = self.running[index].take() else { return Vec::new() };
        let spec = &self.suite.services[index];
        let log = self.log(index);
        let teardown = spec.teardown.as_deref();
        service.process.stop_and_tear_down(&service.place, teardown, &spec.cwd, &spec.env, &log, spec.hook_timeout)
    }
}

/// Nothing, while `service` runs; else why the suite cannot go on, with the end of its log.
fn still_running(service: &mut RunningService) -> Result<(), String> {
    match service.process.exited() {
        None => Ok(()),
        Some(status) => Err(format!(
            "service '{}' exited ({status}) while the suite ran: the servers that need it cannot be measured\n{}",
            service.process.name(),
            service.process.log_tail()
        )),
    }
}

impl Drop for Services<'_> {
    /// However the run ends, no service is left running (each one's own drop would kill it; this stops them in
    /// order, with their stop signal and teardown).
    fn drop(&mut self) {
        self.stop_all();
    }
}
