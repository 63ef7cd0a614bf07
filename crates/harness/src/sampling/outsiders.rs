//! [`Outsiders`]: the CPU time that processes outside the run spent during one trial, and on which CPUs, so that a
//! trial another process disturbed can be told and the process named (`stress (pid 4242) took 62% of a CPU on the
//! server's CPUs`).
//!
//! Every process on the machine is read from `/proc` when the trial starts, at every look the trial's sampler
//! takes, and when it ends. Between two looks, the CPU time a process gained is charged to the CPU it last ran on
//! (field 39 of its `stat`), thread by thread for a process of several threads (their own `stat` under `task/`):
//! a process confined to other CPUs is never charged to the server's or the client's, and one that ran on them is,
//! to within the CPU time of one look's interval. A process that is neither shootout nor one of its descendants
//! (the servers, services and local agents it started), nor a member of a tree the trial sampled (a container's
//! processes, a daemonized helper), nor a kernel thread (whose work, the network's among it, is done for the run),
//! is an outsider; those that used [`NOTED_SHARE`] of a CPU or more anywhere, or on the run's CPUs, are kept, the
//! largest share on the run's CPUs first.

use std::collections::{HashMap, HashSet};
use std::time::Instant;

use shootout_model::run::Outsider;

/// The share of one CPU over a trial from which an outsider is noted.
pub const NOTED_SHARE: f64 = 0.05;

/// The most outsiders a trial keeps.
const KEPT: usize = 3;

/// A process by its PID and start time (a PID used again is another process).
type Key = (i32, u64);

/// One process as a look sees it: its parent, CPU ticks, name, threads, and the CPU it last ran on.
#[derive(Debug, Clone)]
struct Seen {
    ppid: i32,
    ticks: u64,
    name: String,
    threads: i64,
    cpu: Option<usize>,
}

/// The machine's processes through one trial.
#[derive(Debug)]
pub struct Outsiders {
    began: Instant,
    /// Each process at the trial's start.
    before: HashMap<Key, Seen>,
    /// Each process at the last look.
    last: HashMap<Key, Seen>,
    /// Each thread's ticks at the last look, by process and thread id, for the processes of several threads.
    last_threads: HashMap<(Key, i32), u64>,
    /// The ticks charged to each CPU, by process.
    charged: HashMap<Key, HashMap<usize, u64>>,
    server_cpus: Vec<usize>,
    client_cpus: Vec<usize>,
}

impl Outsiders {
    /// Reads every process now; `server_cpus` and `client_cpus` are the CPUs of this machine the server and the
    /// load generator may run on (empty for a server on another host).
    pub fn start(server_cpus: Vec<usize>, client_cpus: Vec<usize>) -> Outsiders {
        let before = scan();
        Outsiders {
            began: Instant::now(),
            last: before.clone(),
            before,
            last_threads: HashMap::new(),
            charged: HashMap::new(),
            server_cpus,
            client_cpus,
        }
    }

    /// One look: each process's CPU time since the last one charged to the CPUs its threads last ran on.
    pub fn look(&mut self) {
        let now = scan();
        for (key, seen) in &now {
            let earlier = self.last.get(key).or_else(|| self.before.get(key)).map_or(0, |s| s.ticks);
            let gained = seen.ticks.saturating_sub(earlier);
            if gained == 0 {
                continue;
            }
            let charged = self.charged.entry(*key).or_default();
            let mut left = gained;
            if seen.threads > 1 {
                for (tid, ticks, cpu) in threads(key.0) {
                    let known = self.last_threads.insert((*key, tid), ticks);
                    // A thread first seen now: its ticks before this look are the process's remainder below.
                    let Some(known) = known else { continue };
                    let part = ticks.saturating_sub(known).min(left);
                    if let (Some(cpu), true) = (cpu, part > 0) {
                        *charged.entry(cpu).or_default() += part;
                        left -= part;
                    }
                }
            }
            if let (Some(cpu), true) = (seen.cpu, left > 0) {
                *charged.entry(cpu).or_default() += left;
            }
        }
        self.last = now;
    }

    /// The outsiders since the start, after one last look, leaving out `members` (the sampled trees' processes, by
    /// PID and start time): the largest share on the run's CPUs first, then the busiest.
    pub fn since(&mut self, members: &HashSet<Key>) -> Vec<Outsider> {
        self.look();
        let seconds = self.began.elapsed().as_secs_f64();
        let ours = descendants_of(std::process::id() as i32, &self.last);
        let tick = procfs::ticks_per_second() as f64;
        let share = |ticks: u64| if seconds > 0.0 { ticks as f64 / tick / seconds } else { 0.0 };
        let mut found: Vec<Outsider> = self
            .last
            .iter()
            .filter(|((pid, start), seen)| {
                !ours.contains(pid) && !members.contains(&(*pid, *start)) && !kernel_thread(*pid, seen.ppid)
            })
            .map(|(key, seen)| {
                let earlier = self.before.get(key).map_or(0, |b| b.ticks);
                let ticks = seen.ticks.saturating_sub(earlier);
                let on = |cpus: &[usize]| {
                    let charged = self.charged.get(key);
                    share(charged.map_or(0, |c| c.iter().filter(|(cpu, _)| cpus.contains(cpu)).map(|(_, t)| t).sum()))
                };
                Outsider {
                    pid: key.0,
                    name: seen.name.clone(),
                    cpu_s: ticks as f64 / tick,
                    share: share(ticks),
                    on_server_cpus: Some(on(&self.server_cpus)),
                    on_client_cpus: Some(on(&self.client_cpus)),
                }
            })
            .filter(|o| o.share >= NOTED_SHARE)
            .collect();
        let on_run = |o: &Outsider| o.on_server_cpus.unwrap_or(0.0).max(o.on_client_cpus.unwrap_or(0.0));
        found.sort_by(|a, b| on_run(b).total_cmp(&on_run(a)).then(b.cpu_s.total_cmp(&a.cpu_s)));
        found.truncate(KEPT);
        found
    }
}

/// Every live process, by PID and start time.
fn scan() -> HashMap<Key, Seen> {
    let Ok(processes) = procfs::process::all_processes() else { return HashMap::new() };
    processes
        .filter_map(|p| p.ok()?.stat().ok())
        .map(|s| {
            let seen = Seen {
                ppid: s.ppid,
                ticks: s.utime + s.stime,
                threads: s.num_threads,
                cpu: s.processor.and_then(|c| usize::try_from(c).ok()),
                name: s.comm,
            };
            ((s.pid, s.starttime), seen)
        })
        .collect()
}

/// The threads of process `pid`: each one's id, CPU ticks and the CPU it last ran on.
fn threads(pid: i32) -> Vec<(i32, u64, Option<usize>)> {
    let Ok(process) = procfs::process::Process::new(pid) else { return Vec::new() };
    let Ok(tasks) = process.tasks() else { return Vec::new() };
    tasks
        .filter_map(|t| t.ok()?.stat().ok())
        .map(|s| (s.pid, s.utime + s.stime, s.processor.and_then(|c| usize::try_from(c).ok())))
        .collect()
}

/// `root` and every process descended from it.
fn descendants_of(root: i32, processes: &HashMap<Key, Seen>) -> HashSet<i32> {
    let parents: HashMap<i32, i32> = processes.iter().map(|((pid, _), s)| (*pid, s.ppid)).collect();
    parents
        .keys()
        .copied()
        .filter(|&pid| {
            let mut at = pid;
            for _ in 0..64 {
                if at == root {
                    return true;
                }
                match parents.get(&at) {
                    Some(&parent) if parent > 0 => at = parent,
                    _ => return false,
                }
            }
            false
        })
        .collect()
}

/// Kernel threads: kthreadd (PID 2) and its children.
fn kernel_thread(pid: i32, ppid: i32) -> bool {
    pid == 2 || ppid == 2
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;
    use std::time::Duration;

    /// A busy loop for 3 s, left to init by a shell that exits (an outsider), pinned with taskset to `cpu`.
    fn orphan_burner(cpu: usize) {
        let burn = "import time\nend = time.time() + 3\nwhile time.time() < end: pass";
        let line = format!("taskset -c {cpu} python3 -c '{burn}' >/dev/null 2>&1 &");
        Command::new("sh").args(["-c", &line]).status().unwrap();
    }

    #[test]
    fn a_busy_process_outside_the_run_is_named_with_the_cpus_it_took_and_ours_are_not() {
        // One of our own children, as busy, is not an outsider.
        let burn = "import time\nend = time.time() + 3\nwhile time.time() < end: pass";
        let mut ours = Command::new("python3").args(["-c", burn]).spawn().unwrap();
        orphan_burner(1);
        // The server on CPU 1, the client on CPU 0: the burner is on the server's CPUs only.
        let mut outsiders = Outsiders::start(vec![1], vec![0]);
        for _ in 0..6 {
            std::thread::sleep(Duration::from_millis(250));
            outsiders.look();
        }
        let found = outsiders.since(&HashSet::new());
        let _ = ours.kill();
        let _ = ours.wait();
        let burner = found.iter().find(|o| o.name == "python3").unwrap_or_else(|| panic!("{found:?}"));
        assert!(burner.share > 0.3 && burner.on_server_cpus.unwrap() > 0.3, "{burner:?}");
        assert_eq!(burner.on_client_cpus, Some(0.0), "confined to CPU 1, never charged to CPU 0: {burner:?}");
        let ours = ours.id() as i32;
        assert!(found.iter().all(|o| o.pid != ours && o.pid != std::process::id() as i32), "{found:?}");
        assert!(found.len() <= KEPT);
    }
}
