//! [`Outsiders`]: the CPU time that processes outside the run spent during one trial, so that a cell whose repeats
//! disagree can say what disturbed one (`another process, stress (pid 4242), used 40% of a CPU during repeat 2`).
//!
//! Every process on the machine is read from `/proc` when the trial starts and when it ends; a process that is
//! neither shootout nor one of its descendants (the servers, services and local agents it started), nor a member
//! of a tree the trial sampled (a container's processes, a daemonized helper), nor a kernel thread (whose work, the
//! network's among it, is done for the run), is an outsider; those that used [`NOTED_SHARE`] of a CPU or more are
//! kept, the busiest first.

use std::collections::{HashMap, HashSet};
use std::time::Instant;

use shootout_model::run::Outsider;

/// The share of one CPU over a trial from which an outsider is noted.
pub const NOTED_SHARE: f64 = 0.05;

/// The most outsiders a trial keeps.
const KEPT: usize = 3;

/// One process as the scan sees it: its parent, CPU ticks and name.
#[derive(Debug, Clone)]
struct Seen {
    ppid: i32,
    ticks: u64,
    name: String,
}

/// The machine's processes at a trial's start.
#[derive(Debug)]
pub struct Outsiders {
    began: Instant,
    before: HashMap<(i32, u64), Seen>,
}

impl Outsiders {
    /// Reads every process now.
    pub fn start() -> Outsiders {
        Outsiders { began: Instant::now(), before: scan() }
    }

    /// The outsiders since the start, the busiest first, leaving out `members` (the sampled trees' processes, by
    /// PID and start time).
    pub fn since(&self, members: &HashSet<(i32, u64)>) -> Vec<Outsider> {
        let seconds = self.began.elapsed().as_secs_f64();
        let after = scan();
        let ours = descendants_of(std::process::id() as i32, &after);
        let tick = procfs::ticks_per_second() as f64;
        let mut found: Vec<Outsider> = after
            .iter()
            .filter(|((pid, start), seen)| {
                !ours.contains(pid) && !members.contains(&(*pid, *start)) && !kernel_thread(*pid, seen.ppid)
            })
            .map(|(key, seen)| {
                let earlier = self.before.get(key).map_or(0, |b| b.ticks);
                let cpu_s = seen.ticks.saturating_sub(earlier) as f64 / tick;
                Outsider {
                    pid: key.0,
                    name: seen.name.clone(),
                    cpu_s,
                    share: if seconds > 0.0 { cpu_s / seconds } else { 0.0 },
                }
            })
            .filter(|o| o.share >= NOTED_SHARE)
            .collect();
        found.sort_by(|a, b| b.cpu_s.total_cmp(&a.cpu_s));
        found.truncate(KEPT);
        found
    }
}

/// Every live process, by PID and start time.
fn scan() -> HashMap<(i32, u64), Seen> {
    let Ok(processes) = procfs::process::all_processes() else { return HashMap::new() };
    processes
        .filter_map(|p| p.ok()?.stat().ok())
        .map(|s| ((s.pid, s.starttime), Seen { ppid: s.ppid, ticks: s.utime + s.stime, name: s.comm }))
        .collect()
}

/// `root` and every process descended from it.
fn descendants_of(root: i32, processes: &HashMap<(i32, u64), Seen>) -> HashSet<i32> {
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

    #[test]
    fn a_busy_process_outside_the_run_is_named_and_ours_are_not() {
        // A busy loop left behind by a shell that exits belongs to init, not to us: an outsider. One of our own
        // children, as busy, is not. Each ends by itself after 3 s.
        let burn = "import time\nend = time.time() + 3\nwhile time.time() < end: pass";
        Command::new("sh").args(["-c", &format!("python3 -c '{burn}' >/dev/null 2>&1 &")]).status().unwrap();
        let mut ours = Command::new("python3").args(["-c", burn]).spawn().unwrap();
        let outsiders = Outsiders::start();
        std::thread::sleep(std::time::Duration::from_millis(1500));
        let found = outsiders.since(&HashSet::new());
        let _ = ours.kill();
        let _ = ours.wait();
        assert!(found.iter().any(|o| o.name == "python3" && o.share > 0.3), "the loop left to init: {found:?}");
        let ours = ours.id() as i32;
        assert!(found.iter().all(|o| o.pid != ours && o.pid != std::process::id() as i32), "{found:?}");
        assert!(found.len() <= KEPT);
    }
}
