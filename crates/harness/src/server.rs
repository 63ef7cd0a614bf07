//! One server's lifecycle: [`start`] (setup, spawn in its own process group, pinned, logging to a file; wait
//! until it answers; verify one answer) and [`RunningServer::stop`] (the configured signal, then SIGKILL for the
//! whole tree after the grace period, and a check that nothing is left). A server never outlives its runner: one
//! dropped without a stop (an error, a panic) is killed, tree and cgroup; a second signal kills every running
//! one ([`live`](crate::live)).

use std::net::{TcpListener, TcpStream};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use nix::sched::{sched_getaffinity, sched_setaffinity, CpuSet};
use nix::sys::signal::{kill, killpg, Signal};
use nix::unistd::Pid;

use crate::cgroup::Cgroup;
use crate::live::{self, Registration};
use crate::log::BoundedLog;
use crate::probe;
use crate::reap::{Guard, Mark, RUN_MARK};
use crate::tree::Tree;
use shootout_suite::ServerSpec;

/// A started server.
#[derive(Debug)]
pub struct RunningServer {
    /// Its name.
    pub name: String,
    /// Its base URL, port filled in.
    pub url: String,
    /// The port it was given.
    pub port: u16,
    /// Its process tree.
    pub tree: Tree,
    /// Its own cgroup, where the machine allows one.
    pub cgroup: Option<Arc<Cgroup>>,
    /// The CPUs its processes may run on: its affinity as it started, whether the suite pinned it or not.
    pub cpus: Vec<usize>,
    child: Child,
    signal_group: bool,
    stop_signal: Signal,
    /// Where the PID to signal is written, for servers that daemonize their master.
    stop_pidfile: Option<PathBuf>,
    grace: Duration,
    log: PathBuf,
    /// Its place among the running servers, until it is stopped.
    registration: Option<Registration>,
    /// Kills it if the runner dies; disarmed by the stop.
    guard: Option<Guard>,
    /// Its output, into its log, bounded.
    output: Option<BoundedLog>,
}

/// How a stop went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stopped {
    /// The launched process's exit status (`None` if it was already reaped).
    pub status: Option<ExitStatus>,
    /// True when SIGKILL had to be sent after the grace period.
    pub killed: bool,
    /// Processes still alive after everything (should be 0).
    pub left: usize,
}

/// Starts `spec`, logging to `log`, and returns once it answers and passes verification. Every error names the
/// server and says what to look at. When `stop` is set meanwhile (Ctrl-C, SIGTERM), its setup, ready probe and
/// verification end at once: the server is stopped and an error returned, which the caller knows by `stop`.
pub fn start(spec: &ServerSpec, log: &Path, stop: &AtomicBool) -> Result<RunningServer, String> {
    let name = &spec.name;
    let port = if spec.port == 0 {
        free_port().map_err(|e| format!("server '{name}': no free port ({e})"))?
    } else {
        if TcpStream::connect(("127.0.0.1", spec.port)).is_ok() {
            return Err(format!(
                "server '{name}': port {} is already in use before it started: stop whatever listens there, or leave out port to let shootout pick one",
                spec.port
            ));
        }
        spec.port
    };
    let fill = |text: &str| fill(text, port);
    if let Some(setup) = &spec.setup {
        run_hook(&fill(setup), &spec.cwd, &spec.env, port, log, stop)
            .map_err(|e| format!("server '{name}': setup failed: {e}"))?;
    }
    let command = fill(&spec.command);
    // A simple command is exec'd by the shell, so the stop signal reaches the server itself; a pipeline or list
    // keeps its shell, and then the signal goes to the whole process group.
    let simple = !command.contains(['|', '&', ';', '<', '>', '(', ')', '`', '$', '\n']);
    let script =
        if simple && !command.trim_start().starts_with("exec ") { format!("exec {command}") } else { command.clone() };
    let (output, writer) =
        BoundedLog::open(log).map_err(|e| format!("server '{name}': cannot open its log {} ({e})", log.display()))?;
    let errors = writer.try_clone().map_err(|e| format!("server '{name}': {e}"))?;
    let mut child = shell(&script, &spec.cwd, &spec.env, port);
    child.stdout(writer).stderr(errors).process_group(0);
    let cgroup = Cgroup::create(name).map(Arc::new);
    let cpus = spec.cpus.as_deref().and_then(parse_cpus);
    let joining = cgroup.clone();
    // The one unsafe block left: std makes every `pre_exec` unsafe, since the closure runs between fork and exec
    // where only async-signal-safe work is sound. It must run there, in the child, so that the server and
    // everything it starts are in the cgroup and pinned from their first instruction (done from the parent after
    // the spawn, a fast fork could escape both).
    // SAFETY: between fork and exec only system calls run, through nix, with no allocation: open, write and close
    // of a path prepared before the fork (joining the cgroup), and sched_setaffinity with a set on the stack.
    // SAFETY (continued): prctl(PR_SET_PDEATHSIG) is one more system call: the server's first process gets
    // SIGKILL if the runner's thread that started it ends first.
    unsafe {
        child.pre_exec(move || {
            nix::sys::prctl::set_pdeathsig(Signal::SIGKILL)?;
            if let Some(group) = &joining {
                group.join_self()?;
            }
            match &cpus {
                Some(cpus) => pin(cpus),
                None => Ok(()),
            }
        })
    };
    let spawned = child.spawn().map_err(|e| format!("server '{name}': cannot start a shell for it ({e})"));
    drop(child); // its copies of the log pipe: the log ends when the server's tree has closed it
    let child = spawned?;
    let root = child.id() as i32;
    let registration = live::register(root, cgroup.as_ref().map(|g| g.path().to_path_buf()));
    let guard = Guard::start(root, cgroup.as_ref().map(|g| g.path()));
    let cpus = allowed_cpus(root);
    let mut server = RunningServer {
        name: name.clone(),
        url: fill(&spec.url).trim_end_matches('/').to_string(),
        port,
        tree: Tree::with_cgroup(root, cgroup.as_ref().map(|g| g.path().to_path_buf())),
        cgroup,
        cpus,
        child,
        signal_group: !simple,
        stop_signal: spec.stop_signal,
        stop_pidfile: spec.stop_pidfile.as_ref().map(|f| spec.cwd.join(fill(f))),
        grace: spec.stop_grace,
        log: log.to_path_buf(),
        registration: Some(registration),
        guard,
        output: Some(output),
    };
    if let Err(e) = server.wait_ready(spec, stop).and_then(|()| server.verify(spec, stop)) {
        server.stop();
        return Err(e);
    }
    Ok(server)
}

impl RunningServer {
    fn wait_ready(&mut self, spec: &ServerSpec, stop: &AtomicBool) -> Result<(), String> {
        let deadline = Instant::now() + spec.ready_timeout;
        let url = format!("{}{}", self.url, spec.ready_path);
        let mut last = String::from("no answer yet");
        while Instant::now() < deadline {
            if stop.load(Ordering::Relaxed) {
                return Err(format!("server '{}': interrupted while it was getting ready", self.name));
            }
            if let Some(status) = self.exited() {
                let hint = if status.code() == Some(127) {
                    ": the command was not found; is it installed and on PATH?".to_string()
                } else {
                    String::new()
                };
                return Err(format!(
                    "server '{}' exited ({}) before it answered{hint}\n{}",
                    self.name,
                    describe(status),
                    self.log_tail()
                ));
            }
            match probe::get(&url, Duration::from_secs(1), spec.protocol) {
                Ok(answer) if answer.status == spec.ready_status => return Ok(()),
                Ok(answer) => last = format!("status {}", answer.status),
                Err(e) => last = e,
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Err(format!(
            "server '{}' was not ready within {:?} ({url}: {last}); raise ready.timeout if it is slow to start\n{}",
            self.name,
            spec.ready_timeout,
            self.log_tail()
        ))
    }

    /// Checks the server's answer on its path against its verify settings; a stop meanwhile ends the wait for the
    /// answer at once (the probe, on a thread of its own, then ends by its timeout).
    fn verify(&mut self, spec: &ServerSpec, stop: &AtomicBool) -> Result<(), String> {
        let url = format!("{}{}", self.url, spec.path);
        let (send, answered) = std::sync::mpsc::channel();
        let (asked, protocol) = (url.clone(), spec.protocol);
        std::thread::spawn(move || send.send(probe::get(&asked, Duration::from_secs(10), protocol)));
        let answer = loop {
            match answered.recv_timeout(Duration::from_millis(20)) {
                Ok(answer) => break answer,
                Err(_) if stop.load(Ordering::Relaxed) => return Err(format!("server '{}': interrupted", self.name)),
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
                Err(e) => return Err(format!("server '{}': {url}: {e}", self.name)),
            }
        };
        let answer = answer.map_err(|e| format!("server '{}': {url}: {e}", self.name))?;
        let status_ok = spec.verify_status.map_or(answer.status < 400, |s| s == answer.status);
        let body_ok = spec.verify_body.as_ref().is_none_or(|text| answer.body.contains(text.as_str()));
        if status_ok && body_ok {
            return Ok(());
        }
        let excerpt: String = answer.body.chars().take(120).collect();
        Err(format!(
            "server '{}' answered {url} with status {} and body {excerpt:?}, which fails its verify check: fix the server or its verify settings",
            self.name, answer.status
        ))
    }

    /// The PID of the launched process, the root (and process group) of the server's tree.
    pub fn tree_root(&self) -> i32 {
        self.child.id() as i32
    }

    /// The launched process's exit status, if it has ended.
    pub fn exited(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// The last lines of the server's log, indented, for error messages (from the part kept in memory, when its
    /// output outgrew the log's head).
    pub fn log_tail(&self) -> String {
        let kept = self.output.as_ref().and_then(BoundedLog::tail_text);
        let text = kept.unwrap_or_else(|| std::fs::read_to_string(&self.log).unwrap_or_default());
        let lines: Vec<&str> = text.lines().collect();
        let tail = &lines[lines.len().saturating_sub(15)..];
        if tail.is_empty() {
            format!("  (its log, {}, is empty)", self.log.display())
        } else {
            format!(
                "  last lines of {}:\n{}",
                self.log.display(),
                tail.iter().map(|l| format!("    {l}")).collect::<Vec<_>>().join("\n")
            )
        }
    }

    /// Stops the server: its stop signal (to the PID in its pidfile, when it has one that names a process of its
    /// tree), then SIGKILL to every process of its tree once the grace period is over; waits until the tree is gone.
    pub fn stop(mut self) -> Stopped {
        let root = self.child.id() as i32;
        let daemon = self
            .stop_pidfile
            .as_ref()
            .and_then(|f| std::fs::read_to_string(f).ok())
            .and_then(|text| text.trim().parse::<i32>().ok())
            .filter(|pid| *pid > 1 && self.tree.members().iter().any(|p| p.pid == *pid));
        let signal = self.stop_signal;
        // Errors (the process or group already gone) are what the wait below finds out.
        let _ = match daemon {
            Some(pid) => kill(Pid::from_raw(pid), signal),
            None if self.signal_group => killpg(Pid::from_raw(root), signal),
            None => kill(Pid::from_raw(root), signal),
        };
        let deadline = Instant::now() + self.grace;
        let mut status = None;
        while Instant::now() < deadline {
            status = status.or_else(|| self.exited());
            if status.is_some() && self.tree.members().is_empty() {
                self.release();
                return Stopped { status, killed: false, left: 0 };
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        if let Some(group) = &self.cgroup {
            group.kill();
        }
        self.tree.signal_all(Signal::SIGKILL);
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline && !self.tree.members().is_empty() {
            std::thread::sleep(Duration::from_millis(20));
            self.tree.signal_all(Signal::SIGKILL);
        }
        status = status.or_else(|| self.child.wait().ok());
        self.release();
        Stopped { status, killed: true, left: self.tree.members().len() }
    }

    /// The server is gone: it leaves the running ones, its guard is disarmed, and its log gets its tail.
    fn release(&mut self) {
        self.registration = None;
        if let Some(guard) = self.guard.take() {
            guard.disarm();
        }
        if let Some(output) = self.output.take() {
            output.finish(Duration::from_secs(1));
        }
    }
}

impl Drop for RunningServer {
    /// A server dropped without its stop (an error or a panic on the way) is killed, its whole tree, so that no
    /// way out of the runner leaves it running; it is waited for briefly, so that its cgroup can go too.
    fn drop(&mut self) {
        if self.registration.take().is_none() {
            return; // stopped already
        }
        live::kill_group(self.child.id() as i32, self.cgroup.as_ref().map(|g| g.path()));
        self.tree.signal_all(Signal::SIGKILL);
        let deadline = Instant::now() + Duration::from_secs(2);
        while Instant::now() < deadline && (self.exited().is_none() || !self.tree.members().is_empty()) {
            std::thread::sleep(Duration::from_millis(20));
        }
        self.release();
    }
}

/// Fills `{port}` and `{shootout}` (this binary) into a command, URL or hook of a suite.
pub fn fill(text: &str, port: u16) -> String {
    let me = std::env::current_exe().map(|p| p.display().to_string()).unwrap_or_else(|_| "shootout".into());
    text.replace("{port}", &port.to_string()).replace("{shootout}", &me)
}

/// A `sh -c script` for a server or its hooks: in `cwd`, with the suite's environment (`{port}` filled in),
/// `$PORT` and the run's mark, and no input.
fn shell(script: &str, cwd: &Path, env: &[(String, String)], port: u16) -> Command {
    let mut command = Command::new("sh");
    command
        .args(["-c", script])
        .current_dir(cwd)
        .envs(env.iter().map(|(k, v)| (k, fill(v, port))))
        .env("PORT", port.to_string())
        .env(RUN_MARK, Mark::current().text())
        .stdin(Stdio::null());
    command
}

/// Runs a setup or teardown command to its end, its output appended to the server's log (bounded as the server's
/// is, [`BoundedLog`]), in a process group of its own that is killed when `stop` is set meanwhile.
pub fn run_hook(
    command: &str,
    cwd: &Path,
    env: &[(String, String)],
    port: u16,
    log: &Path,
    stop: &AtomicBool,
) -> Result<(), String> {
    let (output, writer) = BoundedLog::open(log).map_err(|e| format!("cannot open {}: {e}", log.display()))?;
    let errors = writer.try_clone().map_err(|e| e.to_string())?;
    let mut hook = shell(command, cwd, env, port);
    let spawned = hook.stdout(writer).stderr(errors).process_group(0).spawn();
    drop(hook); // the pipe's write ends go with the command, so that the log sees its end
    let mut child = spawned.map_err(|e| e.to_string())?;
    let _running = live::register(child.id() as i32, None); // a second signal kills it too
    let status = loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            break status;
        }
        if stop.load(Ordering::Relaxed) {
            let _ = killpg(Pid::from_raw(child.id() as i32), Signal::SIGKILL);
            let _ = child.wait();
            output.finish(Duration::from_secs(1));
            return Err(format!("'{command}' was interrupted"));
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    // What it left running in the background may hold the pipe: its output is not waited for past a second.
    output.finish(Duration::from_secs(1));
    if status.success() {
        Ok(())
    } else {
        Err(format!("'{command}' exited ({}); its output is in {}", describe(status), log.display()))
    }
}

/// The first line a version command prints.
pub fn version(command: &str, cwd: &Path) -> String {
    let output = Command::new("sh").args(["-c", command]).current_dir(cwd).stdin(Stdio::null()).output();
    output
        .ok()
        .map(|o| {
            let text = if o.stdout.is_empty() { o.stderr } else { o.stdout };
            String::from_utf8_lossy(&text).lines().next().unwrap_or("").trim().to_string()
        })
        .unwrap_or_default()
}

fn describe(status: ExitStatus) -> String {
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit status {code}"),
        (None, Some(signal)) => format!("killed by signal {signal}"),
        _ => "unknown status".into(),
    }
}

/// A port nothing listens on now.
fn free_port() -> std::io::Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// Reads a CPU list such as `1`, `0,2` or `1-3`.
pub fn parse_cpus(text: &str) -> Option<Vec<usize>> {
    let mut cpus = Vec::new();
    for part in text.split(',') {
        match part.trim().split_once('-') {
            Some((a, b)) => cpus.extend(a.trim().parse::<usize>().ok()?..=b.trim().parse::<usize>().ok()?),
            None => cpus.push(part.trim().parse().ok()?),
        }
    }
    (!cpus.is_empty()).then_some(cpus)
}

/// The CPUs process `pid` may run on (none when its affinity cannot be read: the sampler then watches all).
fn allowed_cpus(pid: i32) -> Vec<usize> {
    match sched_getaffinity(Pid::from_raw(pid)) {
        Ok(set) => (0..CpuSet::count()).filter(|&cpu| set.is_set(cpu).unwrap_or(false)).collect(),
        Err(_) => Vec::new(),
    }
}

/// Pins the calling thread (and the threads it starts later) to `cpus`.
/// Safe between fork and exec: the set lives on the stack and errors are plain error numbers.
pub fn pin(cpus: &[usize]) -> std::io::Result<()> {
    let mut set = CpuSet::new();
    for &cpu in cpus {
        set.set(cpu)?; // EINVAL past the largest CPU number a set holds
    }
    sched_setaffinity(Pid::from_raw(0), &set)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists() {
        assert_eq!(parse_cpus("1"), Some(vec![1]));
        assert_eq!(parse_cpus("0,2-4"), Some(vec![0, 2, 3, 4]));
        assert_eq!(parse_cpus("x"), None);
    }
}
