//! Where a server or service runs, one seam for both: [`Place`] is here (this machine's processes and cgroups, or
//! a container: [`Container`]) or a host (`shootout host` through ssh, [`remote`](crate::place::remote)); [`Placed`] is a process started there, driven
//! alike wherever it is: how it ended, the end of its log, its stop, what the trial's sampler watches of it
//! ([`Watched`], [`Sampler`]), and how a profiler reaches its tree ([`Profilee`]). [`Places`] holds one link per host for the whole run, each made when the run starts
//! so that an unreachable host stops the run before anything is measured.

pub mod container;
pub mod remote;

use std::collections::{BTreeMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use shootout_model::profile::Profiler;
use shootout_model::run::ResourceSample;
use shootout_profile::Stacks;
use shootout_suite::Suite;

use crate::place::container::Container;
use crate::place::remote::link::HostLink;
use crate::place::remote::protocol::{FromHost, RemoteLaunch, ToHost};
use crate::process::{self, Ended, Hook, Launch, Placeholders, Process, Stopped};
use crate::profiles::profiler::{self, Recorded, Subject};
use crate::sampling::sockets::Backends;
use crate::sampling::tree::Tree;
use shootout_model::run::Machine;

/// How long a host may take, past a stop's grace, to kill a tree and send its log back.
const STOP_KILL: Duration = Duration::from_secs(10);

/// How long a host may take to attach a profiler, or to stop one and fold what it recorded.
const PROFILER_WORK: Duration = Duration::from_secs(120);

/// Where something is started.
#[derive(Debug, Clone)]
pub enum Place {
    /// This machine.
    Here,
    /// Another one, through its link.
    There(Arc<HostLink>),
}

/// The places of one run: a link to each host its suite names.
#[derive(Debug, Default)]
pub struct Places {
    links: BTreeMap<String, Arc<HostLink>>,
}

impl Places {
    /// Connects to every host `suite` places a server or service on, or says which one could not be reached.
    pub fn for_suite(suite: &Suite) -> Result<Places, String> {
        let mut places = Places::default();
        for place in suite.places() {
            if let shootout_suite::Place::Ssh { target } = place {
                if !places.links.contains_key(target) {
                    places.links.insert(target.clone(), HostLink::connect(target, &suite.hosts)?);
                }
            }
        }
        Ok(places)
    }

    /// Once `stop` is set (Ctrl-C, SIGTERM), a question to a host that does not answer fails within seconds
    /// rather than the link's timeout.
    pub fn stop_with(&self, stop: &Arc<std::sync::atomic::AtomicBool>) {
        for link in self.links.values() {
            link.stop_with(stop.clone());
        }
    }

    /// The place a suite names.
    pub fn of(&self, place: &shootout_suite::Place) -> Place {
        match place {
            shootout_suite::Place::Here | shootout_suite::Place::Container(_) => Place::Here,
            shootout_suite::Place::Ssh { target } => {
                Place::There(self.links.get(target).expect("every host was connected as the run started").clone())
            }
        }
    }

    /// Each host's target and machine, for `environment.json`.
    pub fn machines(&self) -> Vec<(String, Machine)> {
        self.links.iter().map(|(target, link)| (target.clone(), link.machine.clone())).collect()
    }
}

/// The runner's numbers for processes on hosts, unique in the run.
static NEXT_ID: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(1);

impl Place {
    /// Starts `launch` here or there (port, setup, spawn), its output into `log` here (a host sends it back when
    /// it stops).
    pub fn start(
        &self,
        launch: &Launch<'_>,
        services: &[(String, u16)],
        log: &Path,
        stop: &AtomicBool,
    ) -> Result<Placed, String> {
        let link = match (self, launch.container) {
            (Place::Here, Some(container)) => {
                return Container::start(launch, container, services, log, stop).map(|c| Placed::Container(Box::new(c)))
            }
            (Place::Here, None) => {
                return Process::start(launch, services, log, stop).map(|p| Placed::Here(Box::new(p)))
            }
            (Place::There(link), _) => link,
        };
        let id = NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let remote = RemoteLaunch {
            kind: launch.kind.into(),
            name: launch.name.into(),
            command: launch.command.into(),
            port: launch.port,
            setup: launch.setup.map(Into::into),
            cwd: launch.cwd.display().to_string(),
            env: launch.env.to_vec(),
            cpus: launch.cpus.map(Into::into),
            stop_signal: launch.stop_signal as i32,
            grace_ms: launch.grace.as_millis() as u64,
            stop_pidfile: launch.stop_pidfile.map(Into::into),
            hook_timeout_ms: launch.hook_timeout.as_millis() as u64,
        };
        let (kind, name) = (launch.kind, launch.name);
        let start = ToHost::Start { id, launch: remote, services: services.to_vec() };
        match link.ask_within(&start, launch.hook_timeout) {
            Ok(FromHost::Started { port, cpus }) => Ok(Placed::There(Remote {
                link: link.clone(),
                id,
                kind,
                name: name.to_string(),
                fill: Placeholders { port, services: services.to_vec() },
                cpus,
                log: log.to_path_buf(),
                grace: launch.grace,
                ended: None,
            })),
            Ok(FromHost::Failed { why, output }) => {
                append(log, &output);
                Err(format!("{kind} '{name}' on host '{}': {why}", link.target))
            }
            Ok(other) => Err(format!("{kind} '{name}': host '{}' answered {other:?}", link.target)),
            Err(why) => Err(format!("{kind} '{name}': {why}")),
        }
    }

    /// Runs a hook to its end here or there, its output into `hook.log` here; killed when `stop` is set (here) or
    /// at `deadline`.
    pub fn run_hook(&self, hook: Hook<'_>, stop: &AtomicBool, deadline: Option<Instant>) -> Result<(), String> {
        let link = match self {
            Place::Here => return process::run_hook(hook, stop, deadline),
            Place::There(link) => link,
        };
        let question = ToHost::Hook {
            command: hook.command.into(),
            cwd: hook.cwd.display().to_string(),
            env: hook.env.to_vec(),
            fill: hook.fill.clone(),
            limit_ms: deadline.map(|d| d.saturating_duration_since(Instant::now()).as_millis() as u64),
        };
        let own = deadline.map_or(Duration::ZERO, |d| d.saturating_duration_since(Instant::now()));
        match link.ask_within(&question, own)? {
            FromHost::Done { output } => {
                append(hook.log, &output);
                Ok(())
            }
            FromHost::Failed { why, output } => {
                append(hook.log, &output);
                Err(format!("{why} (on host '{}')", link.target))
            }
            other => Err(format!("host '{}' answered {other:?}", link.target)),
        }
    }

    /// The first line `command` prints where it runs (a version command), from `cwd`; empty when it fails.
    pub fn version(&self, command: &str, cwd: &Path) -> String {
        let link = match self {
            Place::Here => return process::version(command, cwd),
            Place::There(link) => link,
        };
        let question = ToHost::Hook {
            command: command.into(),
            cwd: cwd.display().to_string(),
            env: Vec::new(),
            fill: Placeholders::default(),
            limit_ms: Some(10_000),
        };
        match link.ask_within(&question, Duration::from_secs(10)) {
            Ok(FromHost::Done { output } | FromHost::Failed { output, .. }) => {
                output.lines().next().unwrap_or("").trim().to_string()
            }
            _ => String::new(),
        }
    }

    /// Whether something accepts connections on `port` where it runs.
    pub fn accepts(&self, port: u16) -> Result<(), String> {
        match self {
            Place::Here => std::net::TcpStream::connect_timeout(&([127, 0, 0, 1], port).into(), Duration::from_secs(1))
                .map(drop)
                .map_err(|e| format!("127.0.0.1:{port}: {e}")),
            Place::There(link) => match link.ask(&ToHost::Accepts { port })? {
                FromHost::Accepts { yes: true } => Ok(()),
                _ => Err(format!("nothing accepts on port {port} of host '{}'", link.target)),
            },
        }
    }
}

/// Appends `text` to a log here.
fn append(log: &Path, text: &str) {
    if text.is_empty() {
        return;
    }
    if let Ok(mut file) = crate::process::log::open_for_append(log) {
        let _ = file.write_all(text.as_bytes());
    }
}

/// A server or service started here or on a host.
#[derive(Debug)]
pub enum Placed {
    /// On this machine.
    Here(Box<Process>),
    /// On a host.
    There(Remote),
    /// In a container on this machine.
    Container(Box<Container>),
}

/// A process on a host, as the runner knows it.
#[derive(Debug)]
pub struct Remote {
    link: Arc<HostLink>,
    id: u32,
    kind: &'static str,
    name: String,
    fill: Placeholders,
    cpus: Vec<usize>,
    log: PathBuf,
    /// Its stop's grace: how long the host may take to stop it.
    grace: Duration,
    /// How it ended, once known (a lost link is an end too).
    ended: Option<Ended>,
}

impl Placed {
    /// Its name.
    pub fn name(&self) -> &str {
        match self {
            Placed::Here(p) => &p.name,
            Placed::There(r) => &r.name,
            Placed::Container(c) => &c.name,
        }
    }

    /// What its placeholders were filled with: its port, and the ports of the services beside it.
    pub fn fill(&self) -> &Placeholders {
        match self {
            Placed::Here(p) => &p.fill,
            Placed::There(r) => &r.fill,
            Placed::Container(c) => &c.fill,
        }
    }

    /// How it ended, if it has (on a host whose link is lost: that, as its end).
    pub fn exited(&mut self) -> Option<Ended> {
        let remote = match self {
            Placed::Here(p) => return p.exited(),
            Placed::Container(c) => return c.exited(),
            Placed::There(r) => r,
        };
        if remote.ended.is_none() {
            remote.ended = match remote.link.ask(&ToHost::Exited { id: remote.id }) {
                Ok(FromHost::Exited { ended }) => ended,
                Ok(other) => Some(Ended { unknown: Some(format!("host answered {other:?}")), ..Ended::default() }),
                Err(why) => Some(Ended { unknown: Some(why), ..Ended::default() }),
            };
        }
        remote.ended.clone()
    }

    /// The last lines of its log, for messages.
    pub fn log_tail(&self) -> String {
        match self {
            Placed::Here(p) => p.log_tail(),
            Placed::Container(c) => c.log_tail(),
            Placed::There(r) => match r.link.ask(&ToHost::Tail { id: r.id }) {
                Ok(FromHost::Tail { text }) => format!("  on host '{}', {}", r.link.target, text.trim_start()),
                _ => format!("  (its log on host '{}' could not be read)", r.link.target),
            },
        }
    }

    /// "server" or "service".
    pub fn kind(&self) -> &'static str {
        match self {
            Placed::Here(p) => p.kind,
            Placed::There(r) => r.kind,
            Placed::Container(c) => c.kind,
        }
    }

    /// Why it ended before it was ready (`before`), with the end of its log.
    pub fn ended_early(&self, ended: &Ended, before: &str) -> String {
        // Its last words (the shell's "not found") may still be on their way from its pipe to the log.
        if let Placed::Here(process) = self {
            process.settle_log(std::time::Duration::from_millis(500));
        }
        process::ended_early(self.kind(), self.name(), ended, before, &self.log_tail())
    }

    /// Stops it, then runs its `teardown` (to its end, interrupted or not) at `place`, from `cwd` with `env`, its
    /// output into `log`; what went wrong, in words.
    pub fn stop_and_tear_down(
        self,
        place: &Place,
        teardown: Option<&str>,
        cwd: &Path,
        env: &[(String, String)],
        log: &Path,
        hook_timeout: Duration,
    ) -> Vec<String> {
        let (who, fill) = (format!("{} '{}'", self.kind(), self.name()), self.fill().clone());
        let mut notices = Vec::new();
        let stopped = self.stop();
        if stopped.left > 0 {
            notices.push(format!("{who}: {} processes could not be killed", stopped.left));
        }
        if let Some(teardown) = teardown {
            let hook = Hook { command: teardown, cwd, env, fill: &fill, log };
            let never = AtomicBool::new(false);
            if let Err(e) = place.run_hook(hook, &never, Some(Instant::now() + hook_timeout)) {
                notices.push(crate::process::hook_failed(&who, "teardown", e));
            }
        }
        notices
    }

    /// Stops it (signal, grace, kill of the whole tree, where it runs); a host's log comes back into the log here.
    pub fn stop(self) -> Stopped {
        match self {
            Placed::Here(p) => (*p).stop(),
            Placed::Container(c) => (*c).stop(),
            Placed::There(r) => match r.link.ask_within(&ToHost::Stop { id: r.id }, r.grace + STOP_KILL) {
                Ok(FromHost::Stopped { stopped, log }) => {
                    append(&r.log, &log);
                    stopped
                }
                // The link is gone: the host has killed everything it started, by its own rule.
                _ => Stopped { status: r.ended.clone(), killed: true, left: 0 },
            },
        }
    }

    /// The addresses its tree listens on: here, in a container's own network namespace, or as its host sees them;
    /// none when its host cannot say.
    pub fn listening(&self) -> Option<Vec<std::net::SocketAddr>> {
        match self {
            Placed::Here(p) => Some(p.listening()),
            Placed::Container(c) => Some(process::listening_of(c.root, c.cgroup.clone())),
            Placed::There(r) => match r.link.ask(&ToHost::Listening { id: r.id }) {
                Ok(FromHost::Listening { addresses }) => Some(addresses),
                _ => None,
            },
        }
    }

    /// What a trial's sampler watches of it.
    pub fn watched(&self) -> Watched {
        match self {
            Placed::Here(p) => Watched::Here {
                name: p.name.clone(),
                root: p.tree_root(),
                cgroup: p.cgroup.as_ref().map(|g| g.path().to_path_buf()),
                cpus: p.cpus.clone(),
            },
            Placed::Container(c) => {
                Watched::Here { name: c.name.clone(), root: c.root, cgroup: c.cgroup.clone(), cpus: c.cpus.clone() }
            }
            Placed::There(r) => {
                Watched::There { name: r.name.clone(), link: r.link.clone(), id: r.id, cpus: r.cpus.clone() }
            }
        }
    }
}

/// How a profiler reaches a server's whole tree: here (a container's by the PIDs this machine sees), or through
/// its host's `shootout host`, which runs the profiler there and sends back its folded stacks.
#[derive(Debug, Clone)]
pub enum Profilee {
    /// Its processes here.
    Here(Subject),
    /// Process `id` on the host of `link`, recorded there by `profiler`.
    There {
        /// The host's link.
        link: Arc<HostLink>,
        /// The runner's number for it.
        id: u32,
        /// The profiler the host chose.
        profiler: Profiler,
    },
}

impl Placed {
    /// How `profiler` (or the one that suits its tree) reaches it, checked where it runs: the profiler installed,
    /// the processes there. async-profiler is not loaded into a JVM in a container, which does not see this
    /// machine's library.
    pub fn profilee(&mut self, profiler: Option<Profiler>) -> Result<Profilee, String> {
        match self {
            Placed::Here(process) => {
                let root = process.tree_root();
                Subject::of_tree(profiler, &mut process.tree, root).map(Profilee::Here)
            }
            Placed::Container(container) => {
                let subject = Subject::of(profiler, &[container.root])?;
                if subject.profiler == Profiler::AsyncProfiler {
                    return Err("async-profiler's library is on this machine, not in the container's files".into());
                }
                Ok(Profilee::Here(subject))
            }
            Placed::There(remote) => {
                match profiler_answer(&remote.link, ToHost::ProfilerFor { id: remote.id, profiler })? {
                    FromHost::ProfilerIs { profiler } => {
                        Ok(Profilee::There { link: remote.link.clone(), id: remote.id, profiler })
                    }
                    other => Err(format!("host '{}' answered {other:?}", remote.link.target)),
                }
            }
        }
    }
}

impl Profilee {
    /// The profiler that records it.
    pub fn profiler(&self) -> Profiler {
        match self {
            Profilee::Here(subject) => subject.profiler,
            Profilee::There { profiler, .. } => *profiler,
        }
    }

    /// Runs `work` (a load) with it recorded from `after` (the load's warm-up) until `work` returns, its files
    /// named `name` (in `dir` here, in the host's own folder there), and where its threads blocked when `off_cpu`
    /// says so (here only); returns what `work` returned and what was recorded.
    pub fn around<T>(
        &self,
        after: Duration,
        dir: &Path,
        name: &str,
        off_cpu: bool,
        stop: &AtomicBool,
        work: impl FnOnce() -> T,
    ) -> (T, Result<Recorded, String>) {
        let (link, id, profiler) = match self {
            Profilee::Here(subject) => return profiler::around(subject, after, dir, name, off_cpu, stop, work),
            Profilee::There { link, id, profiler } => (link, *id, *profiler),
        };
        let answered = |other: FromHost| format!("host '{}' answered {other:?}", link.target);
        let start = || match profiler_answer(link, ToHost::StartProfile { id, profiler, name: name.to_string() })? {
            FromHost::Done { .. } => Ok(()),
            other => Err(answered(other)),
        };
        let finish = |()| match profiler_answer(link, ToHost::EndProfile { id })? {
            FromHost::Profile { profiler, native_perf, command, folded, seconds } => {
                let stacks = Stacks::parse(&folded).map_err(|e| format!("on host '{}': {e}", link.target))?;
                let why =
                    format!("the server ran on host '{}': its off-CPU profile is recorded only here", link.target);
                let off_cpu = (shootout_model::profile::OffCpu::LeftOut { why }, Stacks::default());
                Ok(Recorded { profiler, native_perf, command, stacks, seconds, off_cpu })
            }
            other => Err(answered(other)),
        };
        profiler::around_with(after, start, finish, work)
    }
}

/// The host's answer to a question about profiling; its refusal (`Failed`) or a lost link as an error naming the
/// host.
fn profiler_answer(link: &HostLink, question: ToHost) -> Result<FromHost, String> {
    match link.ask_within(&question, PROFILER_WORK)? {
        FromHost::Failed { why, .. } => Err(format!("on host '{}': {why}", link.target)),
        answer => Ok(answer),
    }
}

/// A process tree a trial samples, a server's or a service's, here or on a host.
#[derive(Debug, Clone)]
pub enum Watched {
    /// Here: read in `/proc` and its cgroup.
    Here {
        /// Its name.
        name: String,
        /// The root of its tree.
        root: i32,
        /// Its cgroup, where it has one.
        cgroup: Option<PathBuf>,
        /// The CPUs it may run on.
        cpus: Vec<usize>,
    },
    /// On a host: read there, asked for from here.
    There {
        /// Its name.
        name: String,
        /// The host's link.
        link: Arc<HostLink>,
        /// The runner's number for it.
        id: u32,
        /// The CPUs it may run on there.
        cpus: Vec<usize>,
    },
}

impl Watched {
    /// Its name.
    pub fn name(&self) -> &str {
        match self {
            Watched::Here { name, .. } | Watched::There { name, .. } => name,
        }
    }

    /// Whether it and `other` may run on a CPU in common (on one machine: a host's tree shares none with one here).
    pub fn shares_cpus_with(&self, other: &Watched) -> bool {
        match (self, other) {
            (Watched::Here { cpus: a, .. }, Watched::Here { cpus: b, .. })
            | (Watched::There { cpus: a, .. }, Watched::There { cpus: b, .. }) => {
                a.is_empty() || b.is_empty() || a.iter().any(|cpu| b.contains(cpu))
            }
            _ => false,
        }
    }

    /// The CPUs of this machine it may run on (every one when its affinity was not read; none for a tree on a
    /// host).
    pub fn cpus_here(&self) -> Vec<usize> {
        match self {
            Watched::Here { cpus, .. } if cpus.is_empty() => {
                (0..std::thread::available_parallelism().map_or(1, |n| n.get())).collect()
            }
            Watched::Here { cpus, .. } => cpus.clone(),
            Watched::There { .. } => Vec::new(),
        }
    }

    /// The CPUs it may run on, counted (every CPU of this machine when its affinity was not read).
    pub fn cpu_count(&self) -> u32 {
        let cpus = match self {
            Watched::Here { cpus, .. } | Watched::There { cpus, .. } => cpus,
        };
        let count =
            if cpus.is_empty() { std::thread::available_parallelism().map_or(1, |n| n.get()) } else { cpus.len() };
        count as u32
    }

    /// Starts sampling it: its CPU counted from now, and where its threads are unless `sweeps` is false;
    /// `backends` names the services when its threads wait on them, by their ports (on a host, by the ports the
    /// host knows) and, here, by their process trees for a Unix socket.
    pub fn sampler(self, backends: &Backends, sweeps: bool) -> Sampler {
        match self {
            Watched::Here { root, cgroup, cpus, .. } => {
                let tree = Tree::with_cgroup(root, cgroup).on_cpus(cpus).naming(backends.clone());
                let mut tree = tree.sweeping(sweeps);
                tree.baseline();
                Sampler::Here(Box::new(tree))
            }
            Watched::There { link, id, .. } => {
                let _ = link.ask(&ToHost::Watch { id });
                Sampler::There(link, id)
            }
        }
    }
}

/// What takes one process tree's samples during a trial.
#[derive(Debug)]
pub enum Sampler {
    /// A tree here.
    Here(Box<Tree>),
    /// A tree on a host.
    There(Arc<HostLink>, u32),
}

impl Sampler {
    /// The processes seen in the tree on this machine, by PID and start time (none for a tree on a host).
    pub fn seen(&self) -> HashSet<(i32, u64)> {
        match self {
            Sampler::Here(tree) => tree.seen().clone(),
            Sampler::There(..) => HashSet::new(),
        }
    }

    /// Why the link to its host was lost, when it was (then its samples are empty).
    pub fn lost(&self) -> Option<String> {
        match self {
            Sampler::Here(_) => None,
            Sampler::There(link, _) => link.lost_why(),
        }
    }

    /// One sample, timed `t_s` on the trial's clock (a host's lost link gives an empty one).
    pub fn sample(&mut self, t_s: f64) -> ResourceSample {
        match self {
            Sampler::Here(tree) => tree.sample(t_s),
            Sampler::There(link, id) => match link.ask(&ToHost::Sample { id: *id, t_s }) {
                Ok(FromHost::Sample { sample }) => sample,
                _ => ResourceSample { t_s, ..ResourceSample::default() },
            },
        }
    }
}
