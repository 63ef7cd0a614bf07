//! Starting agents: each launcher turns an [`AgentSpec`] into a [`Crew`], one [`Link`] per agent and whatever
//! must be stopped or removed at the end. Two ways of talking to an agent:
//! - [`process`]: local and ssh agents are processes of ours whose stdin and stdout carry the protocol;
//! - [`dial`]: Slurm and Kubernetes agents dial back to a port the coordinator listens on and prove they belong to
//!   this run with its secret ([`slurm`] starts them with one `srun`, [`kubernetes`] with an Indexed Job applied
//!   by `kubectl`).
//!
//! An agent ends when its input ends, and a [`Crew`] that is dropped kills what it started and removes what it
//! applied, so no agent outlives the coordinator, whatever way the coordinator ends.

pub mod dial;
pub mod kubernetes;
mod link;
mod process;
pub mod slurm;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::Child;
use std::time::{Duration, Instant};

pub use link::{LastWords, Link};
use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;

use shootout_model::{AgentSettings, AgentSpec};

/// Why agents could not be started; the message names the agent and the fix.
#[derive(Debug, thiserror::Error)]
#[error("{peer}: cannot start it ({why}); {fix}")]
pub struct LaunchError {
    /// The agent (or agents).
    pub peer: String,
    /// What went wrong.
    pub why: String,
    /// What to do about it.
    pub fix: String,
}

/// How agents are started: this binary (for local agents) and the user's settings.
#[derive(Debug, Clone)]
pub struct Launcher {
    /// This shootout binary, which local agents run unless `settings.command` says otherwise.
    pub program: PathBuf,
    /// The user's choices.
    pub settings: AgentSettings,
    /// How long agents have to start, say hello and get ready.
    pub timeout: Duration,
}

impl Launcher {
    /// A launcher for the agents of `spec`, with `settings`.
    pub fn new(program: PathBuf, settings: &AgentSettings, spec: &AgentSpec) -> Launcher {
        Launcher { program, settings: settings.clone(), timeout: settings.timeout_for(spec) }
    }

    /// Starts every agent `spec` names, or none: when one cannot be started, what was started is stopped.
    pub fn start(&self, spec: &AgentSpec) -> Result<Crew, LaunchError> {
        match spec {
            AgentSpec::Local(n) => process::local(self, *n),
            AgentSpec::Ssh(hosts) => process::ssh(self, hosts),
            AgentSpec::Slurm(n) => slurm::start(self, *n),
            AgentSpec::Kubernetes(n) => kubernetes::start(self, *n),
        }
    }

    /// The command that runs shootout where agents run, `shootout` unless the user named one.
    pub(crate) fn remote_command(&self) -> &str {
        self.settings.command.as_deref().unwrap_or("shootout")
    }

    /// Where agents that dial back find the coordinator.
    pub(crate) fn dial_back(&self) -> dial::DialBack {
        dial::DialBack {
            listen: self.settings.listen.unwrap_or_else(|| SocketAddr::from(([0, 0, 0, 0], 0))),
            address: self.settings.address.clone(),
        }
    }
}

/// What must happen at the end for agents started by a command that returns at once (`kubectl delete`).
pub type Cleanup = Box<dyn FnOnce() + Send>;

/// The agents of one run, started: a link to each in index order, the processes of ours behind them, and what
/// must be undone at the end.
pub struct Crew {
    /// One link per agent, in index order.
    pub links: Vec<Link>,
    /// Processes started for them, each the leader of its own process group (out of reach of the terminal's
    /// Ctrl-C, which the coordinator passes on as a stop).
    processes: Vec<Child>,
    cleanup: Option<Cleanup>,
}

impl std::fmt::Debug for Crew {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Crew").field("links", &self.links).field("processes", &self.processes.len()).finish()
    }
}

impl Crew {
    pub(crate) fn new(links: Vec<Link>, processes: Vec<Child>, cleanup: Option<Cleanup>) -> Crew {
        Crew { links, processes, cleanup }
    }

    /// Closes every agent's input (an agent ends on that), waits up to `grace` for the processes behind them,
    /// stops those still running, and undoes what was applied.
    pub fn finish(mut self, grace: Duration) {
        for link in &mut self.links {
            link.close();
        }
        let deadline = Instant::now() + grace;
        while Instant::now() < deadline && self.processes.iter_mut().any(|p| matches!(p.try_wait(), Ok(None))) {
            std::thread::sleep(Duration::from_millis(10));
        }
        // Drop does the rest.
    }
}

impl Drop for Crew {
    fn drop(&mut self) {
        for process in &mut self.processes {
            stop_group(process);
        }
        if let Some(cleanup) = self.cleanup.take() {
            cleanup();
        }
    }
}

/// Stops a process of ours and its group: asks first (srun passes a polite end on to its tasks), then kills.
fn stop_group(process: &mut Child) {
    if !matches!(process.try_wait(), Ok(None)) {
        return;
    }
    let group = Pid::from_raw(process.id() as i32);
    let _ = killpg(group, Signal::SIGTERM);
    let deadline = Instant::now() + Duration::from_secs(2);
    while Instant::now() < deadline {
        if !matches!(process.try_wait(), Ok(None)) {
            let _ = killpg(group, Signal::SIGKILL); // whatever of its group is left
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let _ = killpg(group, Signal::SIGKILL);
    let _ = process.wait();
}
