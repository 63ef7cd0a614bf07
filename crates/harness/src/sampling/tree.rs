//! [`Tree`]: a server's whole live process tree, found in `/proc`, and its resource samples.
//!
//! A member is any process descended from the launched one (through its parent chain), any process in its
//! process group, and any process ever seen as a member that is still alive (identified by PID and start time,
//! so a reused PID is not mistaken for it). The last rule keeps daemonized helpers (which re-parent to init and
//! may leave the group, as Passenger's watchdog does) in the tree once they have been seen.
//!
//! `/proc` is read through the `procfs` crate. The sampler runs every 200 ms to 1 s during a measurement, so it was
//! timed against the hand-written parser it replaced: one sample of a 10-process tree on a machine of about 100
//! processes (optimised build, 2000 samples each, interleaved, two runs on a busy 2-core machine) took 0.98 and
//! 1.05 times as long (7.6 against 7.8 ms, 3.2 against 3.0 ms). Listing the machine's processes and reading each
//! `stat` is most of it either way; procfs counts descriptors faster (from the size of `fd/`).

use std::collections::{HashMap, HashSet};
use std::fs;
use std::path::PathBuf;

use nix::sys::signal::{kill, killpg, Signal};
use nix::unistd::Pid;
use procfs::process::Stat;
use procfs::{CurrentSI, KernelStats};
use shootout_model::pressure::Stalls;
use shootout_model::run::ResourceSample;

use crate::sampling::kernel_counts::{Net, Pressure, Quota, QuotaCount, Softirqs};
use crate::sampling::serving::{housekeeping, Runtime, Tally};
use crate::sampling::sockets::Backends;
use crate::sampling::thread_states::StateSampler;

/// One process, as `/proc/PID/stat` describes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Process {
    /// Process id.
    pub pid: i32,
    /// Parent's process id.
    pub ppid: i32,
    /// Process group.
    pub pgrp: i32,
    /// Start time since boot, in clock ticks (with the PID, a unique identity).
    pub start: u64,
    /// User + system CPU time, in clock ticks.
    pub ticks: u64,
    /// Threads.
    pub threads: u32,
}

impl Process {
    /// Reads `/proc/PID/stat`; `None` when the process is gone.
    pub fn read(pid: i32) -> Option<Process> {
        Process::from_stat(procfs::process::Process::new(pid).ok()?.stat().ok()?)
    }

    /// `None` for a process that is dead, waiting to be reaped: nothing left to stop or measure.
    fn from_stat(stat: Stat) -> Option<Process> {
        if matches!(stat.state, 'Z' | 'X') {
            return None;
        }
        Some(Process {
            pid: stat.pid,
            ppid: stat.ppid,
            pgrp: stat.pgrp,
            ticks: stat.utime + stat.stime,
            threads: stat.num_threads as u32,
            start: stat.starttime,
        })
    }

    fn identity(&self) -> (i32, u64) {
        (self.pid, self.start)
    }
}

/// Every process on the machine. Each `/proc/PID` handle is closed once its `stat` is read, so a machine with
/// many processes never holds the engine's descriptors.
pub fn all_processes() -> Vec<Process> {
    let Ok(processes) = procfs::process::all_processes() else { return Vec::new() };
    processes.filter_map(|p| Process::from_stat(p.ok()?.stat().ok()?)).collect()
}

/// (busy, total) CPU ticks, as `/proc/stat` counts them.
type Ticks = (u64, u64);

/// The process tree of one launched server.
#[derive(Debug)]
pub struct Tree {
    root: i32,
    cgroup: Option<PathBuf>,
    seen: HashSet<(i32, u64)>,
    last_ticks: HashMap<(i32, u64), u64>,
    /// Each thread's time on a CPU and in the run queue so far, ns, by thread id.
    last_thread_ns: HashMap<i32, ThreadNs>,
    /// The same at the baseline, and when it was taken: what each thread did since tells the threads that serve
    /// from those that keep house ([`housekeeping`]).
    baseline_thread_ns: HashMap<i32, ThreadNs>,
    baseline_at: Option<std::time::Instant>,
    /// When the previous sample (or the baseline) was taken.
    last_at: Option<std::time::Instant>,
    /// Each process's runtime, by PID and start time, and each thread's name, by thread id: read once.
    runtimes: HashMap<(i32, u64), Runtime>,
    thread_names: HashMap<i32, String>,
    last_cgroup_us: Option<u64>,
    last_host: Option<Ticks>,
    /// The CPUs the server may run on (empty: all), whose busy share each sample gives.
    cpus: Vec<usize>,
    last_cpus: Option<Ticks>,
    /// Softirq ticks of those CPUs so far, and the softirqs run on them by what for.
    last_softirq: Option<u64>,
    last_softirqs: Option<Softirqs>,
    /// Services by the port each listens on, to name what the threads wait on.
    backends: Backends,
    /// Whether the baseline starts sweeping where the threads are.
    sweeps: bool,
    /// Where the threads are, swept from the baseline on.
    states: Option<StateSampler>,
    quota: Option<Quota>,
    last_quota: QuotaCount,
    last_net: Net,
    pressure: Option<Pressure>,
    last_stalls: Option<Stalls>,
}

/// A thread's time on a CPU and waiting for one, so far, ns, and the times it was put on a CPU
/// (`/proc/PID/task/TID/schedstat`).
#[derive(Debug, Clone, Copy, Default)]
struct ThreadNs {
    on_cpu: u64,
    queued: u64,
    runs: u64,
}

impl Tree {
    /// The tree rooted at `root` (also its process group leader).
    pub fn new(root: i32) -> Tree {
        Tree {
            root,
            cgroup: None,
            seen: HashSet::new(),
            last_ticks: HashMap::new(),
            last_thread_ns: HashMap::new(),
            baseline_thread_ns: HashMap::new(),
            baseline_at: None,
            last_at: None,
            runtimes: HashMap::new(),
            thread_names: HashMap::new(),
            last_cgroup_us: None,
            last_host: None,
            cpus: Vec::new(),
            last_cpus: None,
            last_softirq: None,
            last_softirqs: None,
            backends: Backends::default(),
            sweeps: true,
            states: None,
            quota: None,
            last_quota: QuotaCount::default(),
            last_net: Net::default(),
            pressure: None,
            last_stalls: None,
        }
    }

    /// Samples also say how busy `cpus` (the server's own, by anything) were.
    pub fn on_cpus(self, cpus: Vec<usize>) -> Tree {
        Tree { cpus, ..self }
    }

    /// Samples name the services of `backends` when its threads wait on them.
    pub fn naming(self, backends: Backends) -> Tree {
        Tree { backends, ..self }
    }

    /// Samples say where the threads were only when `sweeps` (on by default).
    pub fn sweeping(self, sweeps: bool) -> Tree {
        Tree { sweeps, ..self }
    }

    /// The tree rooted at `root`, plus every process in the cgroup at `cgroup`.
    pub fn with_cgroup(root: i32, cgroup: Option<PathBuf>) -> Tree {
        Tree { cgroup, ..Tree::new(root) }
    }

    /// Every process ever seen as a member, by PID and start time.
    pub fn seen(&self) -> &HashSet<(i32, u64)> {
        &self.seen
    }

    /// The live members now (and remembers them).
    pub fn members(&mut self) -> Vec<Process> {
        let all = all_processes();
        let in_cgroup: HashSet<i32> = self
            .cgroup
            .as_ref()
            .and_then(|dir| fs::read_to_string(dir.join("cgroup.procs")).ok())
            .map(|text| text.lines().filter_map(|l| l.trim().parse().ok()).collect())
            .unwrap_or_default();
        let mut children: HashMap<i32, Vec<usize>> = HashMap::new();
        for (i, p) in all.iter().enumerate() {
            children.entry(p.ppid).or_default().push(i);
        }
        let mut member = vec![false; all.len()];
        let mut stack: Vec<usize> = all
            .iter()
            .enumerate()
            .filter(|(_, p)| {
                p.pid == self.root
                    || p.pgrp == self.root
                    || in_cgroup.contains(&p.pid)
                    || self.seen.contains(&p.identity())
            })
            .map(|(i, _)| i)
            .collect();
        while let Some(i) = stack.pop() {
            if std::mem::replace(&mut member[i], true) {
                continue;
            }
            stack.extend(children.get(&all[i].pid).into_iter().flatten().copied());
        }
        let members: Vec<Process> = all.into_iter().zip(member).filter(|(_, m)| *m).map(|(p, _)| p).collect();
        self.seen.extend(members.iter().map(Process::identity));
        members
    }

    /// Starts CPU accounting from now (the next sample counts CPU used after this call), and the sweeps of where
    /// its threads are.
    pub fn baseline(&mut self) {
        let members = self.members();
        self.last_ticks = members.iter().map(|p| (p.identity(), p.ticks)).collect();
        self.last_thread_ns = members.iter().flat_map(|p| thread_ns(p.pid)).collect();
        self.baseline_thread_ns = self.last_thread_ns.clone();
        self.baseline_at = Some(std::time::Instant::now());
        self.last_at = self.baseline_at;
        self.last_cgroup_us = self.cgroup_usage_us();
        (self.last_host, self.last_cpus, self.last_softirq) = host_and_cpu_ticks(&self.cpus);
        self.last_softirqs = Softirqs::on(&self.cpus);
        let pressure = Pressure::of(self.root, self.cgroup.as_deref());
        self.last_stalls = pressure.count();
        self.pressure = Some(pressure);
        let quota = Quota::over(members.iter().map(|p| p.pid));
        self.last_quota = quota.count();
        self.quota = Some(quota);
        self.last_net = Net::of(self.root);
        self.states = self.sweeps.then(|| StateSampler::start(self.root_first(&members), self.backends.clone()));
    }

    /// The PIDs of `members`, the root first (the sweeps read the socket table of its network namespace).
    fn root_first(&self, members: &[Process]) -> Vec<i32> {
        std::iter::once(self.root).chain(members.iter().map(|p| p.pid).filter(|&p| p != self.root)).collect()
    }

    /// CPU time used by every process ever in the cgroup, µs (exact, and it keeps the time of processes that
    /// have exited), where there is a cgroup.
    fn cgroup_usage_us(&self) -> Option<u64> {
        let text = fs::read_to_string(self.cgroup.as_ref()?.join("cpu.stat")).ok()?;
        text.lines().find_map(|l| l.strip_prefix("usage_usec ")).and_then(|v| v.trim().parse().ok())
    }

    /// Samples the tree; `t_s` is the sample's time on the trial's clock.
    pub fn sample(&mut self, t_s: f64) -> ResourceSample {
        let members = self.members();
        let tick = procfs::ticks_per_second() as f64;
        let mut sample = ResourceSample {
            t_s,
            processes: members.len() as u32,
            threads: 0,
            fds: 0,
            rss_bytes: 0,
            pss_bytes: 0,
            cpu_s: 0.0,
            ..ResourceSample::default()
        };
        let mut ticks = HashMap::with_capacity(members.len());
        let mut threads = HashMap::with_capacity(self.last_thread_ns.len());
        // Each process's threads that ran in the interval, and what every thread did since the baseline.
        let mut ran: Vec<Vec<i32>> = Vec::with_capacity(members.len());
        let mut tallies = HashMap::with_capacity(self.last_thread_ns.len());
        let mut process_cpu = Vec::with_capacity(members.len());
        let mut helpers = HashSet::new();
        // Each thread's time on a CPU and waiting for one since the previous sample, ns.
        let mut wanted = HashMap::with_capacity(self.last_thread_ns.len());
        let now = std::time::Instant::now();
        let interval_ns = self.last_at.map_or(0, |at| now.saturating_duration_since(at).as_nanos() as u64);
        self.last_at = Some(now);
        for p in &members {
            let runtime = *self.runtimes.entry(p.identity()).or_insert_with(|| Runtime::of_process(p.pid));
            sample.threads += p.threads;
            let (fds, rss, pss) = descriptors_and_memory(p.pid);
            sample.fds += fds;
            sample.rss_bytes += rss;
            sample.pss_bytes += pss;
            let before = self.last_ticks.get(&p.identity()).copied().unwrap_or(0);
            // The process's own count keeps the time of its threads that have ended since.
            let process_cpu_s = p.ticks.saturating_sub(before) as f64 / tick;
            sample.cpu_s += process_cpu_s;
            ticks.insert(p.identity(), p.ticks);
            let mut process_ran = Vec::new();
            for (tid, ns) in thread_ns(p.pid) {
                // The baseline saw every thread alive then: one first seen now started since, and all its time
                // belongs to the measurement.
                let before = self.last_thread_ns.get(&tid).copied().unwrap_or_default();
                sample.cpu_queued_s += ns.queued.saturating_sub(before.queued) as f64 / 1e9;
                wanted.insert(tid, ns.on_cpu.saturating_sub(before.on_cpu) + ns.queued.saturating_sub(before.queued));
                let ran_now = ns.on_cpu > before.on_cpu;
                if ran_now {
                    process_ran.push(tid);
                }
                if ran_now && runtime != Runtime::Other {
                    let name = self.thread_names.entry(tid).or_insert_with(|| thread_name(p.pid, tid));
                    if runtime.helper(p.pid, tid, name) {
                        helpers.insert(tid);
                    }
                    if runtime.collector(name) {
                        sample.collector_cpu_s += (ns.on_cpu - before.on_cpu) as f64 / 1e9;
                    }
                }
                let first = self.baseline_thread_ns.get(&tid).copied().unwrap_or_default();
                let since = Tally {
                    on_cpu_ns: ns.on_cpu.saturating_sub(first.on_cpu),
                    runs: ns.runs.saturating_sub(first.runs),
                };
                tallies.insert(tid, since);
                threads.insert(tid, ns);
            }
            ran.push(process_ran);
            process_cpu.push((process_cpu_s, runtime));
        }
        self.last_ticks = ticks;
        self.last_thread_ns = threads;
        let elapsed_s = self.baseline_at.map_or(0.0, |at| at.elapsed().as_secs_f64());
        let mut keeping_house = housekeeping(&tallies, elapsed_s);
        keeping_house.extend(&helpers);
        let mut serving = HashSet::new();
        for (process_ran, (process_cpu_s, runtime)) in ran.iter().zip(process_cpu) {
            let (keeps, serves): (Vec<i32>, Vec<i32>) = process_ran.iter().partition(|tid| keeping_house.contains(tid));
            sample.housekeeping_threads += keeps.len() as u32;
            if process_cpu_s > sample.busiest_cpu_s {
                (sample.busiest_cpu_s, sample.busiest_threads) = (process_cpu_s, serves.len() as u32);
                sample.busiest_runtime = runtime.name().to_string();
            }
            serving.extend(serves);
        }
        // Without a previous sample there is no interval to be busy in.
        let wanting = |tid: &&i32| interval_ns > 0 && wanted.get(*tid).is_some_and(|&ns| 2 * ns >= interval_ns);
        sample.wanting_threads = serving.iter().filter(wanting).count() as u32;
        if let Some(states) = &self.states {
            states.keep_house(&keeping_house);
            sample.states = states.take(&serving, &helpers);
            states.follow(self.root_first(&members));
        }
        if let Some(quota) = &self.quota {
            let now = quota.count();
            let counted = now.since(self.last_quota);
            (sample.periods, sample.throttled_periods, sample.quota_cpus) =
                (counted.periods, counted.throttled, now.cpus);
            self.last_quota = now;
        }
        let net = Net::of(self.root);
        if net != Net::default() {
            let counted = net.since(self.last_net);
            (sample.listen_overflows, sample.syn_retransmits) = (counted.listen_overflows, counted.syn_retransmits);
            sample.resets = counted.resets;
            self.last_net = net;
        }
        if let (Some(before), Some(now)) = (self.last_cgroup_us, self.cgroup_usage_us()) {
            // The cgroup's count is exact; /proc's clock ticks are 10 ms each.
            sample.cpu_s = now.saturating_sub(before) as f64 / 1e6;
            self.last_cgroup_us = Some(now);
        }
        if let Some(now) = self.pressure.as_ref().and_then(Pressure::count) {
            sample.stalls_s = self.last_stalls.map_or_else(Stalls::default, |before| now.since(before));
            self.last_stalls = Some(now);
        }
        let (host, cpus, softirq) = host_and_cpu_ticks(&self.cpus);
        sample.host_busy = busy_between(self.last_host, host);
        sample.cpus_busy = busy_between(self.last_cpus, cpus);
        if let (Some(before), Some(now)) = (self.last_softirq, softirq) {
            sample.softirq_s = now.saturating_sub(before) as f64 / tick;
        }
        (self.last_host, self.last_cpus, self.last_softirq) = (host, cpus, softirq);
        let softirqs = Softirqs::on(&self.cpus);
        if let (Some(before), Some(now)) = (self.last_softirqs, softirqs) {
            let ran = now.since(before);
            (sample.net_softirqs, sample.block_softirqs) = (ran.net, ran.block);
        }
        self.last_softirqs = softirqs;
        sample
    }

    /// Sends `signal` to the process group and to every member.
    pub fn signal_all(&mut self, signal: Signal) {
        // Errors (no such group, a member gone meanwhile) are harmless.
        let _ = killpg(Pid::from_raw(self.root), signal);
        for p in self.members() {
            let _ = kill(Pid::from_raw(p.pid), signal);
        }
    }
}

/// Open descriptors, and RSS and PSS in bytes (from `smaps_rollup`), of one process; zeros for what cannot be read.
fn descriptors_and_memory(pid: i32) -> (u32, u64, u64) {
    let Ok(process) = procfs::process::Process::new(pid) else { return (0, 0, 0) };
    let fds = process.fd_count().map_or(0, |n| n as u32);
    let rollup = process.smaps_rollup().ok();
    let totals = rollup.as_ref().and_then(|r| r.memory_map_rollup.0.first()).map(|m| &m.extension.map);
    let bytes = |key: &str| totals.and_then(|t| t.get(key)).copied().unwrap_or(0);
    (fds, bytes("Rss"), bytes("Pss"))
}

/// Each thread of process `pid` with the time it has spent on a CPU and ready to run but waiting for one, ns
/// (from `/proc/PID/task/TID/schedstat`; nothing where the kernel keeps no scheduler statistics).
fn thread_ns(pid: i32) -> Vec<(i32, ThreadNs)> {
    let Ok(tasks) = procfs::process::Process::new(pid).and_then(|p| p.tasks()) else { return Vec::new() };
    let times = |task: procfs::process::Task| {
        let stat = task.schedstat().ok()?;
        Some((task.tid, ThreadNs { on_cpu: stat.sum_exec_runtime, queued: stat.run_delay, runs: stat.pcount }))
    };
    tasks.flatten().filter_map(times).collect()
}

/// The name thread `tid` of process `pid` gave itself (empty when it is gone).
fn thread_name(pid: i32, tid: i32) -> String {
    fs::read_to_string(format!("/proc/{pid}/task/{tid}/comm")).map(|n| n.trim_end().to_string()).unwrap_or_default()
}

/// The busy share between two readings of [`host_and_cpu_ticks`].
fn busy_between(before: Option<Ticks>, after: Option<Ticks>) -> f64 {
    let (Some((busy0, total0)), Some((busy1, total1))) = (before, after) else { return 0.0 };
    let total = total1.saturating_sub(total0);
    if total > 0 {
        busy1.saturating_sub(busy0) as f64 / total as f64
    } else {
        0.0
    }
}

/// (busy, total) CPU ticks of the whole host and of `cpus` (empty: the whole host again), and the softirq ticks of
/// `cpus`, from one read of `/proc/stat`: busy is all but idle and iowait.
fn host_and_cpu_ticks(cpus: &[usize]) -> (Option<Ticks>, Option<Ticks>, Option<u64>) {
    let Ok(stats) = KernelStats::current() else { return (None, None, None) };
    let host = busy_and_total(&stats.total);
    if cpus.is_empty() {
        return (Some(host), Some(host), Some(stats.total.softirq.unwrap_or(0)));
    }
    let (mut sum, mut softirq) = ((0, 0), 0);
    for cpu in cpus.iter().filter_map(|&i| stats.cpu_time.get(i)) {
        let (busy, total) = busy_and_total(cpu);
        sum = (sum.0 + busy, sum.1 + total);
        softirq += cpu.softirq.unwrap_or(0);
    }
    (Some(host), Some(sum), Some(softirq))
}

/// (busy, total) ticks of one line of `/proc/stat`.
fn busy_and_total(cpu: &procfs::CpuTime) -> (u64, u64) {
    let idle = cpu.idle + cpu.iowait.unwrap_or(0);
    let total = cpu.user
        + cpu.nice
        + cpu.system
        + idle
        + cpu.irq.unwrap_or(0)
        + cpu.softirq.unwrap_or(0)
        + cpu.steal.unwrap_or(0);
    (total - idle, total)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;
    use std::process::Command;

    #[test]
    fn finds_children_and_grandchildren_and_samples_them() {
        let mut child = Command::new("sh")
            .args(["-c", "sleep 30 & sleep 30 & (sleep 30 & wait) & wait"])
            .process_group(0)
            .spawn()
            .unwrap();
        let root = child.id() as i32;
        let mut tree = Tree::new(root);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while tree.members().len() < 5 && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        tree.baseline();
        let sample = tree.sample(0.0);
        assert_eq!(sample.processes, 5, "sh, two sleeps, a subshell and its sleep");
        assert!(sample.rss_bytes > 0 && sample.pss_bytes > 0 && sample.pss_bytes <= sample.rss_bytes);
        assert!(sample.threads >= 5 && sample.fds >= 5);
        tree.signal_all(Signal::SIGKILL);
        let _ = child.wait();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while !tree.members().is_empty() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert!(tree.members().is_empty(), "nothing of the tree is left");
    }
}
