//! [`Cgroup`]: a cgroup v2 of its own for each server, where the machine allows one. Every process the server
//! starts stays in it, whatever it does (daemonize, change its process group), so the tree is complete and
//! `cgroup.kill` ends all of it at once. Where cgroup v2 is missing or not writable, [`Cgroup::create`] gives
//! `None` and the process group with the `/proc` walk of [`Tree`](crate::sampling::tree::Tree) do the job alone.

use std::ffi::CString;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use nix::fcntl::{open, OFlag};
use nix::sys::stat::Mode;
use nix::unistd::write;

use crate::process::reap::Mark;

/// A cgroup made for one server.
#[derive(Debug)]
pub struct Cgroup {
    path: PathBuf,
    procs: CString,
}

static NEXT: AtomicU32 = AtomicU32::new(0);

impl Cgroup {
    /// Makes a new cgroup under the cgroup v2 hierarchy, or `None` when that is not possible here.
    /// Its name carries the run's [`Mark`], so that a later run can tell whether the run that made it is gone.
    pub fn create(label: &str) -> Option<Cgroup> {
        let safe: String = label.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect();
        let name = format!("shootout-run-{}-{}-{safe}", Mark::current().text(), NEXT.fetch_add(1, Ordering::Relaxed));
        let path = shootout_engine::cgroups::make(&name, None)?;
        let procs = CString::new(path.join("cgroup.procs").into_os_string().into_encoded_bytes()).ok()?;
        Some(Cgroup { path, procs })
    }

    /// Moves the calling process into the cgroup. Meant for between fork and exec: it only opens, writes and
    /// closes, on a C path prepared before the fork, and allocates nothing (errors are plain error numbers).
    pub fn join_self(&self) -> io::Result<()> {
        let fd = open(self.procs.as_c_str(), OFlag::O_WRONLY | OFlag::O_CLOEXEC, Mode::empty())?;
        match write(&fd, b"0")? {
            1 => Ok(()),
            _ => Err(io::ErrorKind::WriteZero.into()),
        }
    }

    /// The processes in it now.
    pub fn pids(&self) -> Vec<i32> {
        fs::read_to_string(self.path.join("cgroup.procs"))
            .map(|text| text.lines().filter_map(|l| l.trim().parse().ok()).collect())
            .unwrap_or_default()
    }

    /// Kills every process in it (`cgroup.kill`); false where the kernel has no such file.
    pub fn kill(&self) -> bool {
        fs::write(self.path.join("cgroup.kill"), "1").is_ok()
    }

    /// Where it is.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        // Emptied by the stop; a cgroup with processes left cannot be removed, which is the right outcome.
        for _ in 0..50 {
            if fs::remove_dir(&self.path).is_ok() || !self.path.exists() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;
    use std::process::Command;

    #[test]
    fn holds_and_kills_a_whole_tree_where_available() {
        let Some(group) = Cgroup::create("test") else {
            let why = "no writable cgroup v2 here: the process-group fallback is what runs";
            assert!(std::env::var_os("CI").is_none(), "under CI this test must run, but {why}");
            eprintln!("{why}");
            return;
        };
        let group = std::sync::Arc::new(group);
        let joiner = group.clone();
        let mut command = Command::new("sh");
        command.args(["-c", "sleep 30 & setsid sleep 30 & wait"]);
        // SAFETY: join_self only opens and writes a prepared path.
        let mut child = unsafe { command.pre_exec(move || joiner.join_self()) }.spawn().unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while group.pids().len() < 3 && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert_eq!(group.pids().len(), 3, "sh and both sleeps, the one in a new session too");
        assert!(group.kill());
        let _ = child.wait();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while !group.pids().is_empty() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert!(group.pids().is_empty());
    }
}
