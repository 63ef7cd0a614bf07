//! What the runner and `shootout host` say to each other, one JSON document a line: the runner asks
//! ([`ToHost`]), the host answers each question with one [`FromHost`], in order. The first exchange is the hello:
//! a host that speaks another [`VERSION`], or is another release of shootout, is refused with one line naming it.

use serde::{Deserialize, Serialize};
use shootout_model::profile::Profiler;
use shootout_model::run::{Machine, ResourceSample};

use crate::process::{Ended, Placeholders, Stopped};

/// The version of the host protocol.
pub const VERSION: u32 = 3;

/// What the runner asks of a host.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "ask", rename_all = "snake_case")]
pub enum ToHost {
    /// Who is asking; answered by [`FromHost::Hello`].
    Hello {
        /// The runner's shootout release.
        shootout: String,
        /// Its protocol version.
        protocol: u32,
        /// How long the host waits for the next question before it takes the link as lost, stops everything it
        /// started and ends, ms. The runner asks at least every quarter of it ([`ToHost::Ping`] when idle).
        link_timeout_ms: u64,
    },
    /// Nothing but a sign of life, when the runner has had nothing to ask for a while; answered by
    /// [`FromHost::Done`].
    Ping,
    /// Start a server or service (its setup first); answered by [`FromHost::Started`] or [`FromHost::Failed`].
    Start {
        /// The runner's number for it, from now on.
        id: u32,
        /// What to start.
        launch: RemoteLaunch,
        /// The services beside it: names and ports.
        services: Vec<(String, u16)>,
    },
    /// Run a command to its end there (a ready check, a reset, a teardown); answered by [`FromHost::Done`] or
    /// [`FromHost::Failed`], each with its output.
    Hook {
        /// The command, placeholders not yet filled.
        command: String,
        /// Its working directory there.
        cwd: String,
        /// Extra environment, placeholders not yet filled.
        env: Vec<(String, String)>,
        /// What the placeholders are filled with.
        fill: Placeholders,
        /// Killed after this long, when given.
        limit_ms: Option<u64>,
    },
    /// Does anything accept connections on this port there (`127.0.0.1`)? Answered by [`FromHost::Accepts`].
    Accepts {
        /// The port.
        port: u16,
    },
    /// Has process `id` ended? Answered by [`FromHost::Exited`].
    Exited {
        /// Which.
        id: u32,
    },
    /// The end of process `id`'s log, for a message; answered by [`FromHost::Tail`].
    Tail {
        /// Which.
        id: u32,
    },
    /// The addresses process `id`'s tree listens on (TCP), for a ready probe that is refused; answered by
    /// [`FromHost::Listening`].
    Listening {
        /// Which.
        id: u32,
    },
    /// Start counting process `id`'s CPU from now; answered by [`FromHost::Done`].
    Watch {
        /// Which.
        id: u32,
    },
    /// One sample of process `id`'s tree, timed `t_s` on the trial's clock; answered by [`FromHost::Sample`].
    Sample {
        /// Which.
        id: u32,
        /// When, on the trial's clock.
        t_s: f64,
    },
    /// Stop process `id` (signal, grace, kill of its tree); answered by [`FromHost::Stopped`] with its log.
    Stop {
        /// Which.
        id: u32,
    },
    /// Which profiler would record process `id`'s tree there (`profiler`, or the one that suits it), checked:
    /// installed, and able to read it. Answered by [`FromHost::ProfilerIs`] or [`FromHost::Failed`].
    ProfilerFor {
        /// Which.
        id: u32,
        /// The suite's profiler, or `None` for auto.
        profiler: Option<Profiler>,
    },
    /// Start `profiler` recording process `id`'s tree there, as `name`; answered by [`FromHost::Done`] or
    /// [`FromHost::Failed`].
    StartProfile {
        /// Which.
        id: u32,
        /// The profiler.
        profiler: Profiler,
        /// The profile's name, for its files there.
        name: String,
    },
    /// Stop the profiler recording process `id` and send what it recorded; answered by [`FromHost::Profile`] or
    /// [`FromHost::Failed`].
    EndProfile {
        /// Which.
        id: u32,
    },
}

/// What a host answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "answer", rename_all = "snake_case")]
pub enum FromHost {
    /// Who answers, and on what machine.
    Hello {
        /// Its shootout release.
        shootout: String,
        /// Its protocol version.
        protocol: u32,
        /// The machine.
        machine: Machine,
    },
    /// Started: the port it was given and the CPUs it may run on.
    Started {
        /// The port.
        port: u16,
        /// Its CPUs.
        cpus: Vec<usize>,
    },
    /// Done; a hook's output.
    Done {
        /// What a hook wrote (empty otherwise).
        output: String,
    },
    /// It could not be done.
    Failed {
        /// Why, in words.
        why: String,
        /// What a hook wrote.
        output: String,
    },
    /// Whether the port accepts.
    Accepts {
        /// It does.
        yes: bool,
    },
    /// How the process ended, if it has.
    Exited {
        /// How.
        ended: Option<Ended>,
    },
    /// The end of its log.
    Tail {
        /// The lines.
        text: String,
    },
    /// Where its tree listens, as the host sees the addresses.
    Listening {
        /// The addresses.
        addresses: Vec<std::net::SocketAddr>,
    },
    /// One sample.
    Sample {
        /// The sample.
        sample: ResourceSample,
    },
    /// Stopped, and its whole log.
    Stopped {
        /// How the stop went.
        stopped: Stopped,
        /// Its log (bounded as every log is).
        log: String,
    },
    /// The profiler that would record it.
    ProfilerIs {
        /// Which.
        profiler: Profiler,
    },
    /// What a profiler recorded there.
    Profile {
        /// The profiler.
        profiler: Profiler,
        /// perf recorded the native processes beside it.
        native_perf: bool,
        /// Its command lines, as run there.
        command: String,
        /// Its samples, as folded stacks.
        folded: String,
        /// Seconds it recorded.
        seconds: f64,
    },
}

/// A server or service to start there: [`Launch`](crate::process::Launch), owned, to be sent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RemoteLaunch {
    /// "server" or "service".
    pub kind: String,
    /// Its name.
    pub name: String,
    /// Its command.
    pub command: String,
    /// A fixed port, or 0.
    pub port: u16,
    /// Its setup.
    pub setup: Option<String>,
    /// Its working directory there.
    pub cwd: String,
    /// Extra environment.
    pub env: Vec<(String, String)>,
    /// CPUs to pin it to there.
    pub cpus: Option<String>,
    /// The stop signal's number.
    pub stop_signal: i32,
    /// Time between it and SIGKILL, ms.
    pub grace_ms: u64,
    /// A pidfile to signal instead.
    pub stop_pidfile: Option<String>,
    /// How long its setup may run, ms.
    pub hook_timeout_ms: u64,
}

/// This machine, as `environment.json` and a host's hello describe it.
pub fn this_machine() -> Machine {
    use procfs::Current as _;
    let cpuinfo = procfs::CpuInfo::current().ok();
    let uname = nix::sys::utsname::uname().ok();
    Machine {
        name: shootout_agents::host_name(),
        kernel: uname.map_or_else(String::new, |u| u.release().to_string_lossy().into()),
        cpu_model: cpuinfo.as_ref().and_then(|c| c.model_name(0)).unwrap_or("").trim().into(),
        // Online CPUs, not this process's share (the client is pinned by the time the runner asks).
        cpus: nix::unistd::sysconf(nix::unistd::SysconfVar::_NPROCESSORS_ONLN).ok().flatten().unwrap_or(1).max(1)
            as u32,
        // procfs gives bytes (the file says kB, meaning KiB).
        memory_bytes: procfs::Meminfo::current().map_or(0, |m| m.mem_total),
    }
}
