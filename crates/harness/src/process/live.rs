//! The servers of this process that are running now, so that whatever ends the process can still kill them:
//! [`kill_all`] for a second signal, which leaves at once, taking their trees and cgroups with it. Each running
//! server is registered ([`register`]) from its start to the end of its stop, with its process group and its
//! cgroup, and unregisters itself when the [`Registration`] is dropped. What a hook leaves running in its process
//! group (`sleep 60 &`, a daemon its setup starts) stays registered until the run ends, which stops it with
//! [`EndOfRun`]: a setup may start what the run needs, and nothing a hook started outlives the run.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;

/// A running server: its process group, and its cgroup where it has one.
struct Entry {
    id: u64,
    group: i32,
    cgroup: Option<PathBuf>,
}

static LIVE: Mutex<Vec<Entry>> = Mutex::new(Vec::new());
static NEXT: AtomicU64 = AtomicU64::new(0);

/// A server's place in the list of running ones; dropping it takes it out.
#[derive(Debug)]
pub struct Registration {
    id: u64,
}

/// Notes a running server: the process group it leads and its cgroup.
pub fn register(group: i32, cgroup: Option<PathBuf>) -> Registration {
    let id = NEXT.fetch_add(1, Ordering::Relaxed);
    if let Ok(mut live) = LIVE.lock() {
        live.push(Entry { id, group, cgroup });
    }
    Registration { id }
}

impl Drop for Registration {
    fn drop(&mut self) {
        if let Ok(mut live) = LIVE.lock() {
            live.retain(|entry| entry.id != self.id);
        }
    }
}

/// The process groups hooks left running when they ended, each still registered.
static LEFT_BY_HOOKS: Mutex<Vec<(i32, Registration)>> = Mutex::new(Vec::new());

/// Keeps a hook's process group registered until the run ends, if anything is left in it now the hook has ended.
pub fn keep_what_a_hook_left(group: i32, registration: Registration) {
    if killpg(Pid::from_raw(group), None).is_ok() {
        if let Ok(mut left) = LEFT_BY_HOOKS.lock() {
            left.push((group, registration));
        }
    }
}

/// Stops, when dropped, what hooks left running: SIGTERM to each of their process groups, then SIGKILL to what
/// is left a second later. A run (and a host serving one) holds one from its start, so that it acts however the
/// run ends.
#[derive(Debug, Default)]
pub struct EndOfRun;

impl Drop for EndOfRun {
    fn drop(&mut self) {
        let Ok(mut left) = LEFT_BY_HOOKS.lock() else { return };
        let groups: Vec<_> = left.drain(..).collect();
        let alive = |group: i32| killpg(Pid::from_raw(group), None).is_ok();
        for &(group, _) in &groups {
            let _ = killpg(Pid::from_raw(group), Signal::SIGTERM);
        }
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(1);
        while groups.iter().any(|&(group, _)| alive(group)) && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        groups.iter().for_each(|&(group, _)| kill_group(group, None));
    }
}

/// Kills every running server of this process at once, cgroup and process group, then removes their cgroups as
/// soon as the kernel has emptied them (a second at most): the last act of a process that is leaving.
pub fn kill_all() {
    let Ok(live) = LIVE.lock() else { return };
    for entry in live.iter() {
        kill_group(entry.group, entry.cgroup.as_deref());
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(1);
    for cgroup in live.iter().filter_map(|entry| entry.cgroup.as_deref()) {
        while std::fs::remove_dir(cgroup).is_err() && cgroup.exists() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }
}

/// Kills a server's whole tree: every process of its cgroup (`cgroup.kill`), and its process group.
pub fn kill_group(group: i32, cgroup: Option<&std::path::Path>) {
    if let Some(cgroup) = cgroup {
        let _ = std::fs::write(cgroup.join("cgroup.kill"), "1");
    }
    if group > 1 {
        let _ = killpg(Pid::from_raw(group), Signal::SIGKILL);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;
    use std::process::Command;

    #[test]
    fn kill_all_ends_every_registered_group_and_a_registration_leaves_when_dropped() {
        let mut child = Command::new("sh").args(["-c", "sleep 30 & wait"]).process_group(0).spawn().unwrap();
        let group = child.id() as i32;
        let registration = register(group, None);
        kill_all();
        let status = child.wait().unwrap();
        assert!(!status.success(), "the group was killed: {status:?}");
        drop(registration);
        assert!(LIVE.lock().unwrap().iter().all(|e| e.group != group));
    }
}
