//! What `shootout run` writes for each trial: one load result plus the resource samples of the server's process
//! tree and of each service's beside it, and the environment of the whole run. Reports read these files alone.
//! [`Statistic`] is the repeat figure a suite's verdicts use.

use serde::{Deserialize, Serialize};

use crate::pressure::Stalls;
use crate::states::{StateCounts, ThreadTime};
use crate::LoadResult;

/// Which repeat figure the verdicts of a suite use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Statistic {
    /// The median across repeats (the default: robust to one bad repeat).
    #[default]
    Median,
    /// The best repeat, as the classic shootouts reported ("best of 3").
    Best,
}

impl Statistic {
    /// Reads `median` or `best`.
    pub fn parse(text: &str) -> Option<Statistic> {
        match text {
            "median" => Some(Statistic::Median),
            "best" => Some(Statistic::Best),
            _ => None,
        }
    }
}

/// One trial: a server at one load level, in one repeat.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrialRecord {
    /// The server's name in the suite.
    pub server: String,
    /// The load level: connections (closed model) or requests per second (open model).
    pub level: f64,
    /// Repeat number, from 1.
    pub repeat: u32,
    /// The load result (the `shootout load` JSON document).
    pub result: LoadResult,
    /// Samples of the server's process tree, every `sample_every`, from the start of the warm-up.
    pub samples: Vec<ResourceSample>,
    /// What the samples add up to over the measured window.
    pub usage: ServerUsage,
    /// The same of each service the server ran beside (a database), in the suite's order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub services: Vec<ServiceTrial>,
    /// Processes outside the run (neither shootout's nor the trees it sampled) that used 5% of a CPU or more
    /// during the trial, the busiest first (three at most): what else was using the machine meanwhile.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub outsiders: Vec<Outsider>,
}

/// A process outside the run that used CPU during a trial.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Outsider {
    /// Its process id.
    pub pid: i32,
    /// Its name (`/proc/PID/comm`).
    pub name: String,
    /// CPU seconds it used during the trial (from its warm-up to the end of its drain).
    pub cpu_s: f64,
    /// That, as a share of one CPU over the trial's time.
    pub share: f64,
    /// Of that, the share of one CPU it used on the CPUs the server could run on here (0 for a server on another
    /// host): its threads' CPU time, each look charged to the CPU the thread last ran on. A process confined to
    /// other CPUs has none. None in results saved before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_server_cpus: Option<f64>,
    /// The same on the load generator's CPUs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_client_cpus: Option<f64>,
}

impl Outsider {
    /// Its share of one CPU on the server's CPUs: where it was measured, else (results saved before) the whole of
    /// its share, wherever it ran.
    pub fn on_server(&self) -> f64 {
        self.on_server_cpus.unwrap_or(self.share)
    }
}

/// One service's share of a trial: its process tree sampled as the server's was, and the sums over the same
/// measured window (its CPU per response is per response of the server's).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServiceTrial {
    /// The service's name in the suite.
    pub name: String,
    /// Samples of its process tree.
    pub samples: Vec<ResourceSample>,
    /// What they add up to over the measured window.
    pub usage: ServerUsage,
    /// Whether it could run on a CPU the server could run on (false in results saved before this was recorded).
    #[serde(default)]
    pub shares_cpus: bool,
}

/// One sample of the server's whole live process tree.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ResourceSample {
    /// Seconds since the start of the measured window (negative during the warm-up).
    pub t_s: f64,
    /// Processes in the tree.
    pub processes: u32,
    /// Threads, all processes together.
    pub threads: u32,
    /// Open file descriptors, all processes together.
    pub fds: u32,
    /// Resident set size, summed (counts shared pages once per process).
    pub rss_bytes: u64,
    /// Proportional set size, summed (shared pages split between their users): the honest memory figure for
    /// pre-forking servers.
    pub pss_bytes: u64,
    /// User + system CPU seconds used by the tree since the previous sample (from the server's cgroup, exact to the
    /// microsecond, where it has one; else from /proc in clock ticks of 10 ms).
    pub cpu_s: f64,
    /// Seconds the tree's threads spent ready to run but waiting for a CPU since the previous sample, added over
    /// the threads (from each thread's `/proc` schedstat): CPU the server wanted and did not get.
    #[serde(default)]
    pub cpu_queued_s: f64,
    /// Busy share of the CPUs the server may run on, by anything, since the previous sample (0 to 1).
    #[serde(default)]
    pub cpus_busy: f64,
    /// Busy share of the whole host's CPUs since the previous sample (0 to 1).
    pub host_busy: f64,
    /// CPU seconds used by the tree's busiest process since the previous sample: a process that used one CPU
    /// while it could have used more was held to one core (by a GIL, or by having one thread).
    #[serde(default)]
    pub busiest_cpu_s: f64,
    /// The runtime of that process (`node`, `jvm`, `ruby`, `python`; empty for any other program).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub busiest_runtime: String,
    /// Threads of that process that ran since the previous sample and serve (housekeeping threads left out).
    #[serde(default)]
    pub busiest_threads: u32,
    /// Threads of the whole tree that serve and were on a CPU or waiting for one half the time or more since the
    /// previous sample: the workers that wanted a CPU each.
    #[serde(default)]
    pub wanting_threads: u32,
    /// CPU seconds the runtime's garbage collector threads used since the previous sample (the JVM's; 0 where
    /// none is told apart).
    #[serde(default)]
    pub collector_cpu_s: f64,
    /// Threads of the tree that ran since the previous sample but keep house (a timer, a reporter: they woke a few
    /// times a second at most, and used next to no CPU): left out of [`ResourceSample::states`].
    #[serde(default)]
    pub housekeeping_threads: u32,
    /// CPU-quota periods of the tree's cgroup since the previous sample (none without a quota).
    #[serde(default)]
    pub periods: u64,
    /// Of those, the periods in which the quota ran out and its threads were held off the CPU.
    #[serde(default)]
    pub throttled_periods: u64,
    /// The quota, in CPUs (0: none).
    #[serde(default)]
    pub quota_cpus: f64,
    /// Connects the kernel dropped since the previous sample because a listen queue was full
    /// (`ListenOverflows` of /proc/net/netstat, on the tree's host).
    #[serde(default)]
    pub listen_overflows: u64,
    /// SYNs the kernel sent again since the previous sample, for connects not answered in time (`TCPSynRetrans`).
    #[serde(default)]
    pub syn_retransmits: u64,
    /// Resets its host's TCP sent since the previous sample (`OutRsts` of /proc/net/snmp): connections refused or
    /// aborted.
    #[serde(default)]
    pub resets: u64,
    /// Seconds the CPUs the server may run on spent in the kernel's deferred work (softirq: the network's, a
    /// disk's completions, timers) since the previous sample, added over those CPUs.
    #[serde(default)]
    pub softirq_s: f64,
    /// Network softirqs (`NET_RX`, `NET_TX`) run on those CPUs since the previous sample.
    #[serde(default)]
    pub net_softirqs: u64,
    /// Block I/O softirqs (`BLOCK`: a disk's completions) run on those CPUs since the previous sample.
    #[serde(default)]
    pub block_softirqs: u64,
    /// Seconds in which some task of the tree's cgroup (of the host, for the root cgroup) stalled, by resource,
    /// since the previous sample.
    #[serde(default)]
    pub stalls_s: Stalls,
    /// Where the threads were since the previous sample.
    #[serde(default)]
    pub states: StateCounts,
}

/// The server's resource use over one trial's measured window.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerUsage {
    /// CPU seconds used by the server tree in the measured window.
    pub cpu_s: f64,
    /// CPU time per response, µs.
    pub cpu_us_per_request: f64,
    /// Mean PSS over the measured window.
    pub pss_mean_bytes: u64,
    /// Largest PSS seen.
    pub pss_max_bytes: u64,
    /// Largest RSS seen.
    pub rss_max_bytes: u64,
    /// Most processes seen at once.
    pub processes_max: u32,
    /// Most threads seen at once.
    pub threads_max: u32,
    /// CPUs the server's processes could run on (its affinity when it started); 0 in results saved before this was
    /// recorded.
    #[serde(default)]
    pub cpus: u32,
    /// Share of those CPUs the server's tree kept busy over the measured window (0 to 1): at 0.9 or more the
    /// server was CPU-bound.
    #[serde(default)]
    pub busy: f64,
    /// Time its threads waited for one of those CPUs, over the window's length times their number: the mean
    /// number of its threads waiting for each CPU (0 up).
    #[serde(default)]
    pub queued: f64,
    /// Busy share of those CPUs, by anything (the server, the kernel's network work, other processes), over the
    /// measured window: at 0.9 or more, with threads queued, the server wanted more CPU than it got.
    #[serde(default)]
    pub cpus_busy: f64,
    /// CPUs used by the tree's busiest process, on average over the window.
    #[serde(default)]
    pub busiest_cores: f64,
    /// The runtime of that process in the sample where it used the most CPU (`node`, `jvm`, `ruby`, `python`;
    /// empty for any other program, and in results saved before this was recorded).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub runtime: String,
    /// The most threads of that process that ran in one sample's interval and serve.
    #[serde(default)]
    pub busiest_threads: u32,
    /// The median over the window's samples of the threads of the tree that serve and wanted a CPU each (on one
    /// or waiting for one half the time or more): more of them than [`ServerUsage::cpus`] take turns on the CPUs.
    #[serde(default)]
    pub wanting_threads: u32,
    /// Share of its CPU time over the window that the runtime's garbage collector threads used (0 to 1; 0 where
    /// none is told apart).
    #[serde(default)]
    pub collector: f64,
    /// The most threads of the tree that ran in one sample's interval and keep house, left out of [`time`].
    ///
    /// [`time`]: ServerUsage::time
    #[serde(default)]
    pub housekeeping_threads: u32,
    /// Its cgroup's CPU quota, in CPUs (0: none).
    #[serde(default)]
    pub quota_cpus: f64,
    /// Share of the quota's periods in the window in which it ran out (0 to 1; 0 without a quota).
    #[serde(default)]
    pub throttled: f64,
    /// Connects dropped on a full listen queue on its host during the window.
    #[serde(default)]
    pub listen_overflows: u64,
    /// SYNs sent again on its host during the window, for connects not answered in time.
    #[serde(default)]
    pub syn_retransmits: u64,
    /// Resets its host's TCP sent during the window: connections refused or aborted.
    #[serde(default)]
    pub resets: u64,
    /// CPUs' worth of the kernel's deferred work (softirq) on the CPUs it could run on, on average over the
    /// window.
    #[serde(default)]
    pub softirq: f64,
    /// Of the network and block I/O softirqs run on those CPUs in the window, the share that were block I/O (0 to
    /// 1): above a half, the deferred work was mostly a disk's, not the network's.
    #[serde(default)]
    pub softirq_block: f64,
    /// Share of the window in which some task of its cgroup (of the host, for the root cgroup) stalled, by
    /// resource (0 to 1 each; zeros where the kernel keeps no pressure figures).
    #[serde(default)]
    pub stalled: Stalls,
    /// Where its threads were.
    #[serde(default)]
    pub time: ThreadTime,
}

/// The machine and the software a suite ran on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Environment {
    /// shootout's version.
    pub shootout: String,
    /// `uname -r`.
    pub kernel: String,
    /// CPU model name.
    pub cpu_model: String,
    /// CPUs online.
    pub cpus: u32,
    /// Total memory.
    pub memory_bytes: u64,
    /// CPUs the load generator was pinned to (empty: not pinned).
    pub client_cpus: String,
    /// CPUs each server was pinned to, by name (empty: not pinned).
    pub server_cpus: Vec<(String, String)>,
    /// How each server's processes were kept together: "cgroup v2" (its own cgroup), or "process group" (its
    /// process group and every descendant seen in /proc).
    pub isolation: String,
    /// When the suite started, RFC 3339.
    pub started_at: String,
    /// Each server's `version_command` output (first line).
    pub versions: Vec<(String, String)>,
    /// The services beside the servers (a database), each with its CPUs and version, in the suite's order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub services: Vec<ServiceEnvironment>,
    /// The other machines servers and services ran on (`host = "ssh:…"`), by the ssh target that reached each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<(String, Machine)>,
    /// The servers and services that ran in containers, each with its image and the options it was given (so a
    /// `--privileged` or a `-v /:/host` is on the record, not only in the copied suite).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub containers: Vec<ContainerEnvironment>,
}

/// A server or service that ran in a container.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContainerEnvironment {
    /// Its name in the suite.
    pub name: String,
    /// Its image.
    pub image: String,
    /// `docker` or `podman`, when the suite chose (else whichever answered).
    pub engine: String,
    /// The options added to `docker run`, as given.
    pub options: Vec<String>,
}

/// A machine a suite ran on.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Machine {
    /// Its name (the kernel's node name).
    pub name: String,
    /// `uname -r`.
    pub kernel: String,
    /// CPU model name.
    pub cpu_model: String,
    /// CPUs online.
    pub cpus: u32,
    /// Total memory.
    pub memory_bytes: u64,
}

/// A service of a suite as it ran: where, and which version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServiceEnvironment {
    /// Its name in the suite.
    pub name: String,
    /// The CPUs it was pinned to (empty: not pinned).
    pub cpus: String,
    /// Its `version_command` output (first line; empty without one).
    pub version: String,
}
