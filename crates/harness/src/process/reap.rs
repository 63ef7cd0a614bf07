//! Nothing outlives the runner, even one killed without a word (SIGKILL, the OOM killer, a crash).
//!
//! Three layers, each for what the one before cannot do:
//! - the process that starts a server gets the parent-death signal (SIGKILL), set between fork and exec;
//! - a [`Guard`] per server: a tiny shell in a process group of its own, ignoring the signals a terminal sends,
//!   that waits on a pipe from the runner. When the runner stops the server it disarms the guard; when the pipe
//!   closes without that (the runner died), the guard kills the server's cgroup and process group;
//! - a [`Mark`] on each run: the runner's PID and start time, in its cgroups' names and in every server's
//!   environment (`SHOOTOUT_RUN`). The next `shootout run` on the machine kills and removes what runs whose
//!   runner is gone left ([`reap_dead_runs`]), and never anything a live run owns.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

/// The environment variable that marks every server with the run that started it.
pub const RUN_MARK: &str = "SHOOTOUT_RUN";

/// A run's identity on this machine: its runner's PID and that process's start time (clock ticks after boot),
/// which a reused PID does not share.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mark {
    /// The runner's PID.
    pub pid: i32,
    /// Its start time.
    pub start: u64,
}

impl Mark {
    /// This process's mark.
    pub fn current() -> Mark {
        static CURRENT: std::sync::OnceLock<Mark> = std::sync::OnceLock::new();
        *CURRENT.get_or_init(|| {
            let pid = std::process::id() as i32;
            Mark { pid, start: start_time(pid).unwrap_or(0) }
        })
    }

    /// `PID-START`, as cgroup names and the environment carry it.
    pub fn text(self) -> String {
        format!("{}-{}", self.pid, self.start)
    }

    /// Reads `PID-START` from the start of `text`.
    pub fn parse(text: &str) -> Option<Mark> {
        let mut parts = text.splitn(3, '-');
        let pid = parts.next()?.parse().ok()?;
        let start = parts.next()?.parse().ok()?;
        Some(Mark { pid, start })
    }

    /// Whether the run it names is still going: its runner alive, and the same process.
    pub fn alive(self) -> bool {
        start_time(self.pid) == Some(self.start)
    }
}

/// The start time of process `pid`, if it exists.
fn start_time(pid: i32) -> Option<u64> {
    procfs::process::Process::new(pid).ok()?.stat().ok().map(|s| s.starttime)
}

/// Kills and removes what runs whose runner is gone left on this machine: their servers' cgroups (named
/// `shootout-run-PID-START-…` under `cgroups`, the cgroup v2 mount; cgroups named otherwise, such as those of
/// older versions, are left alone) and any process marked with their [`RUN_MARK`]. Returns one description per
/// thing reaped.
pub fn reap_dead_runs(cgroups: Option<&Path>) -> Vec<String> {
    let mut reaped = Vec::new();
    for (path, mark) in cgroups.map(left_cgroups).unwrap_or_default() {
        if mark.alive() {
            continue;
        }
        let members: Vec<String> = std::fs::read_to_string(path.join("cgroup.procs"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim().parse::<i32>().ok())
            .map(|pid| format!("{pid} {}", command_line(pid)))
            .collect();
        let _ = std::fs::write(path.join("cgroup.kill"), "1");
        let removed = (0..50).any(|_| {
            let gone = std::fs::remove_dir(&path).is_ok();
            if !gone {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            gone
        });
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        let held = if members.is_empty() { String::new() } else { format!(", which held {}", members.join(", ")) };
        reaped.push(format!("cgroup {name}{held}{}", if removed { "" } else { " (could not be removed)" }));
    }
    let me = std::process::id() as i32;
    for process in procfs::process::all_processes().into_iter().flatten().flatten() {
        if process.pid == me {
            continue;
        }
        let Some(mark) = process
            .environ()
            .ok()
            .and_then(|env| env.get(std::ffi::OsStr::new(RUN_MARK)).and_then(|v| Mark::parse(&v.to_string_lossy())))
        else {
            continue;
        };
        if !mark.alive() {
            let command = command_line(process.pid);
            if kill(Pid::from_raw(process.pid), Signal::SIGKILL).is_ok() {
                reaped.push(format!("process {} {command} of the run of PID {}", process.pid, mark.pid));
            }
        }
    }
    reaped
}

/// Process `pid`'s command line, as `ps` shows it.
fn command_line(pid: i32) -> String {
    procfs::process::Process::new(pid).and_then(|p| p.cmdline()).map(|c| c.join(" ")).unwrap_or_default()
}

/// The cgroups of runs under `mount`, with the marks in their names.
fn left_cgroups(mount: &Path) -> Vec<(PathBuf, Mark)> {
    let Ok(entries) = std::fs::read_dir(mount) else { return Vec::new() };
    entries
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            let mark = Mark::parse(name.strip_prefix("shootout-run-")?)?;
            Some((entry.path(), mark))
        })
        .collect()
}

/// A server's guard: a shell in a process group of its own that kills the server's cgroup and process group if
/// the runner goes away without disarming it.
#[derive(Debug)]
pub struct Guard {
    child: Child,
    pipe: Option<ChildStdin>,
}

impl Guard {
    /// Starts a guard over process group `group` and `cgroup`; `None` where no shell could be started.
    pub fn start(group: i32, cgroup: Option<&Path>) -> Option<Guard> {
        use std::os::unix::process::CommandExt;
        // After the kill, the emptied cgroup is removed (it takes a moment to empty).
        let cgroup_kill = cgroup.map(|c| {
            let c = c.display();
            format!(
                "echo 1 > '{c}/cgroup.kill' 2>/dev/null; \
                 for i in 1 2 3 4 5 6 7 8 9 10; do sleep 0.1; rmdir '{c}' 2>/dev/null && break; done; "
            )
        });
        // A group of 0 or 1 is no server's own (a container's processes are its engine's): only its cgroup.
        let group_kill = if group > 1 { format!("kill -9 -{group} 2>/dev/null; ") } else { String::new() };
        let script = format!(
            "trap '' INT TERM HUP; read -r word; [ \"$word\" = disarm ] && exit 0; {group_kill}{}",
            cgroup_kill.unwrap_or_default()
        );
        let mut child = Command::new("sh")
            .args(["-c", &script])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .ok()?;
        let pipe = child.stdin.take();
        Some(Guard { child, pipe })
    }

    /// The server was stopped: the guard leaves without killing anything.
    pub fn disarm(mut self) {
        if let Some(mut pipe) = self.pipe.take() {
            let _ = pipe.write_all(b"disarm\n");
        }
        let _ = self.child.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;

    #[test]
    fn a_mark_names_a_live_run_and_not_a_dead_one() {
        let me = Mark::current();
        assert!(me.alive());
        assert_eq!(Mark::parse(&format!("{}-7-rest", me.text())), Some(me));
        assert!(!Mark { start: me.start + 1, ..me }.alive(), "a reused PID is another process");
        let mut child = Command::new("true").spawn().unwrap();
        let gone = Mark { pid: child.id() as i32, start: start_time(child.id() as i32).unwrap_or(1) };
        child.wait().unwrap();
        assert!(!gone.alive());
    }

    #[test]
    fn a_guard_whose_runner_went_away_kills_the_group_and_a_disarmed_one_does_not() {
        for disarmed in [false, true] {
            let mut server = Command::new("sh").args(["-c", "sleep 30 & wait"]).process_group(0).spawn().unwrap();
            let guard = Guard::start(server.id() as i32, None).unwrap();
            if disarmed {
                guard.disarm();
                assert!(server.try_wait().unwrap().is_none(), "a disarmed guard kills nothing");
                let _ = nix::sys::signal::killpg(Pid::from_raw(server.id() as i32), Signal::SIGKILL);
            } else {
                drop(guard); // its pipe closes, as when the runner dies
            }
            let status = server.wait().unwrap();
            assert!(!status.success());
        }
    }
}
