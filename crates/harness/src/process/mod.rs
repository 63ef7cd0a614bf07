//! [`Process`]: one launched command of a suite, a server's or a service's, from its spawn to its stop. It runs
//! in its own process group and cgroup, pinned to its CPUs from its first instruction, its output into a bounded
//! log, registered among the live processes and guarded against the runner's death; [`Process::stop`] sends its
//! stop signal, then SIGKILL to the whole tree after the grace period, and checks that nothing is left. A process
//! dropped without a stop (an error, a panic) is killed, tree and cgroup. What makes a server a server (the HTTP
//! ready probe and verification) is in [`server`](crate::lifecycle::server), a service's in [`service`](crate::lifecycle::service).
//!
//! Also here: the placeholders a suite's commands are filled with ([`Placeholders`]), the hooks run beside them
//! ([`run_hook`]), and CPU lists ([`parse_cpus`], [`pin`]).

pub mod cgroup;
pub mod live;
pub mod log;
pub mod reap;

use std::net::TcpListener;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use nix::sched::{sched_getaffinity, sched_setaffinity, CpuSet};
use nix::sys::signal::{kill, killpg, Signal};
use nix::unistd::Pid;
use serde::{Deserialize, Serialize};

use crate::process::cgroup::Cgroup;
use crate::process::log::BoundedLog;
use crate::process::reap::{Guard, Mark, RUN_MARK};
use crate::sampling::tree::Tree;
use live::Registration;

/// What a suite's commands are filled with: `{port}` (also `$PORT`), `{shootout}` (this binary), and
/// `{service.NAME.port}` for each service running beside.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Placeholders {
    /// The port of the server or service the command is for.
    pub port: u16,
    /// The running services' ports, by name.
    pub services: Vec<(String, u16)>,
}

impl Placeholders {
    /// Only a port.
    pub fn port(port: u16) -> Placeholders {
        Placeholders { port, services: Vec::new() }
    }

    /// `text` with every placeholder filled in.
    pub fn fill(&self, text: &str) -> String {
        let me = std::env::current_exe().map(|p| p.display().to_string()).unwrap_or_else(|_| "shootout".into());
        let mut text = text.replace("{port}", &self.port.to_string()).replace("{shootout}", &me);
        for (name, port) in &self.services {
            text = text.replace(&shootout_suite::service_port(name), &port.to_string());
        }
        text
    }
}

/// What to launch: a server's or service's command, its port and setup, where it runs, and how it stops.
#[derive(Debug, Clone)]
pub struct Launch<'a> {
    /// "server" or "service", for the messages.
    pub kind: &'static str,
    /// Its name in the suite.
    pub name: &'a str,
    /// Its command, placeholders not yet filled.
    pub command: &'a str,
    /// A fixed port, or 0 for a free one.
    pub port: u16,
    /// Run to its end before it starts, placeholders not yet filled.
    pub setup: Option<&'a str>,
    /// Working directory.
    pub cwd: &'a Path,
    /// Extra environment, placeholders not yet filled.
    pub env: &'a [(String, String)],
    /// CPUs to pin it to.
    pub cpus: Option<&'a str>,
    /// The signal that stops it.
    pub stop_signal: Signal,
    /// Time between the stop signal and SIGKILL.
    pub grace: Duration,
    /// A file (from `cwd`, placeholders not yet filled) holding the PID to signal instead, for a server that
    /// daemonizes its master.
    pub stop_pidfile: Option<&'a str>,
    /// The container it runs in, when it runs in one ([`Container`](crate::place::container::Container)).
    pub container: Option<&'a shootout_suite::Container>,
    /// How long its setup may run before it is killed and the start fails.
    pub hook_timeout: Duration,
}

/// A launched server or service.
#[derive(Debug)]
pub struct Process {
    /// "server" or "service".
    pub kind: &'static str,
    /// Its name.
    pub name: String,
    /// What its placeholders were filled with: its port, and the ports of the services beside it.
    pub fill: Placeholders,
    /// Its process tree.
    pub tree: Tree,
    /// Its own cgroup, where the machine allows one.
    pub cgroup: Option<Arc<Cgroup>>,
    /// The CPUs its processes may run on: its affinity as it started, whether the suite pinned it or not.
    pub cpus: Vec<usize>,
    child: Child,
    signal_group: bool,
    stop_signal: Signal,
    stop_pidfile: Option<PathBuf>,
    grace: Duration,
    log: PathBuf,
    /// Its place among the running processes, until it is stopped.
    registration: Option<Registration>,
    /// Kills it if the runner dies; disarmed by the stop.
    guard: Option<Guard>,
    /// Its output, into its log, bounded.
    output: Option<BoundedLog>,
}

/// How a launched process ended: its exit code or the signal that killed it, or why that is not known (the link
/// to its host was lost).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Ended {
    /// Its exit code.
    pub code: Option<i32>,
    /// The signal that killed it.
    pub signal: Option<i32>,
    /// Why neither is known.
    pub unknown: Option<String>,
}

impl From<ExitStatus> for Ended {
    fn from(status: ExitStatus) -> Ended {
        Ended { code: status.code(), signal: status.signal(), unknown: None }
    }
}

impl std::fmt::Display for Ended {
    /// `exit status 1`, `killed by signal 9`, or why it is not known.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.code, self.signal, &self.unknown) {
            (Some(code), _, _) => write!(f, "exit status {code}"),
            (None, Some(signal), _) => write!(f, "killed by signal {signal}"),
            (None, None, Some(why)) => f.write_str(why),
            (None, None, None) => f.write_str("unknown status"),
        }
    }
}

/// How a stop went.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Stopped {
    /// How the launched process ended (`None` if it was already reaped).
    pub status: Option<Ended>,
    /// True when SIGKILL had to be sent after the grace period.
    pub killed: bool,
    /// Processes still alive after everything (should be 0).
    pub left: usize,
}

impl Process {
    /// Starts `launch` beside `services` (their names and ports): picks its port, runs its setup (ended at once
    /// when `stop` is set meanwhile), and spawns it, its output into `log`.
    pub fn start(
        launch: &Launch<'_>,
        services: &[(String, u16)],
        log: &Path,
        stop: &AtomicBool,
    ) -> Result<Process, String> {
        let (kind, name) = (launch.kind, launch.name);
        let fill = Placeholders { port: port(kind, name, launch.port)?, services: services.to_vec() };
        if let Some(setup) = launch.setup {
            let hook = Hook { command: setup, cwd: launch.cwd, env: launch.env, fill: &fill, log };
            let deadline = Instant::now() + launch.hook_timeout;
            run_hook(hook, stop, Some(deadline)).map_err(|e| hook_failed(&format!("{kind} '{name}'"), "setup", e))?;
        }
        Process::spawn(launch, fill, log)
    }

    /// Spawns `launch` with `fill`'s placeholders, its output into `log`.
    fn spawn(launch: &Launch<'_>, fill: Placeholders, log: &Path) -> Result<Process, String> {
        let (kind, name) = (launch.kind, launch.name);
        let command = fill.fill(launch.command);
        let (script, execd) = exec_simple(&command);
        let (output, writer) = BoundedLog::open(log)
            .map_err(|e| format!("{kind} '{name}': cannot open its log {} ({e})", log.display()))?;
        let errors = writer.try_clone().map_err(|e| format!("{kind} '{name}': {e}"))?;
        let mut child = shell(&script, launch.cwd, launch.env, &fill);
        child.stdout(writer).stderr(errors).process_group(0);
        let cgroup = Cgroup::create(name).map(Arc::new);
        let cpus = launch.cpus.and_then(parse_cpus);
        let joining = cgroup.clone();
        // The one unsafe block left: std makes every `pre_exec` unsafe, since the closure runs between fork and
        // exec where only async-signal-safe work is sound. It must run there, in the child, so that the process
        // and everything it starts are in the cgroup and pinned from their first instruction (done from the parent
        // after the spawn, a fast fork could escape both).
        // SAFETY: between fork and exec only system calls run, through nix, with no allocation: open, write and
        // close of a path prepared before the fork (joining the cgroup), and sched_setaffinity with a set on the
        // stack.
        // SAFETY (continued): prctl(PR_SET_PDEATHSIG) is one more system call: the first process gets SIGKILL if
        // the runner's thread that started it ends first.
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
        let spawned = child.spawn().map_err(|e| format!("{kind} '{name}': cannot start a shell for it ({e})"));
        drop(child); // its copies of the log pipe: the log ends when the tree has closed it
        let child = spawned?;
        let root = child.id() as i32;
        let registration = live::register(root, cgroup.as_ref().map(|g| g.path().to_path_buf()));
        let guard = Guard::start(root, cgroup.as_ref().map(|g| g.path()));
        Ok(Process {
            kind,
            name: name.to_string(),
            tree: Tree::with_cgroup(root, cgroup.as_ref().map(|g| g.path().to_path_buf())),
            cgroup,
            cpus: allowed_cpus(root),
            child,
            signal_group: !execd,
            stop_signal: launch.stop_signal,
            stop_pidfile: launch.stop_pidfile.map(|f| launch.cwd.join(fill.fill(f))),
            grace: launch.grace,
            log: log.to_path_buf(),
            registration: Some(registration),
            guard,
            output: Some(output),
            fill,
        })
    }

    /// The PID of the launched process, the root (and process group) of its tree.
    pub fn tree_root(&self) -> i32 {
        self.child.id() as i32
    }

    /// The addresses its tree listens on over TCP.
    pub fn listening(&self) -> Vec<std::net::SocketAddr> {
        listening_of(self.tree_root(), self.cgroup.as_ref().map(|g| g.path().to_path_buf()))
    }

    /// How the launched process ended, if it has.
    pub fn exited(&mut self) -> Option<Ended> {
        self.child.try_wait().ok().flatten().map(Ended::from)
    }

    /// Waits, `within` at most, for what it wrote before it exited to be in its log ([`BoundedLog::settle`]).
    pub fn settle_log(&self, within: Duration) {
        if let Some(output) = &self.output {
            output.settle(within);
        }
    }

    /// The last lines of its log, indented, for error messages (from the part kept in memory, when its output
    /// outgrew the log's head).
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

    /// Stops it: its stop signal (to the PID in its pidfile, when it has one that names a process of its tree),
    /// then SIGKILL to every process of its tree once the grace period is over; waits until the tree is gone.
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
        status = status.or_else(|| self.child.wait().ok().map(Ended::from));
        self.release();
        Stopped { status, killed: true, left: self.tree.members().len() }
    }

    /// It is gone: it leaves the running ones, its guard is disarmed, and its log gets its tail.
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

impl Drop for Process {
    /// A process dropped without its stop (an error or a panic on the way) is killed, its whole tree, so that no
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

/// `command` as the shell runs it: a simple command is exec'd by the shell, so that the stop signal reaches the
/// process itself; after its leading assignments (`APP=x node app.js` runs as `APP=x exec node app.js`, which
/// gives APP to node, where `exec APP=x …` would run a program named `APP=x`). A pipeline, a list, an expansion,
/// an assignment with quotes, or a command that begins with a word of the shell's own (`if`, `cd`, `{`…) keeps
/// its shell, and then the stop signal goes to the whole process group. True when the program replaces the shell
/// (the command's own `exec` too).
fn exec_simple(command: &str) -> (String, bool) {
    const SHELLS_OWN: [&str; 10] = ["if", "for", "while", "until", "case", "{", "!", "cd", "export", "set"];
    if command.contains(['|', '&', ';', '<', '>', '(', ')', '`', '$', '\n']) {
        return (command.to_string(), false);
    }
    let assignment = |word: &str| {
        word.split_once('=').is_some_and(|(name, value)| {
            name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !value.contains(['\'', '"', '\\'])
        })
    };
    // The byte offset of each word, to put `exec` before the first that assigns nothing.
    let mut rest = command;
    loop {
        let trimmed = rest.trim_start();
        let word = trimmed.split_whitespace().next().unwrap_or_default();
        if !assignment(word) {
            if word == "exec" {
                return (command.to_string(), true);
            }
            if word.is_empty() || SHELLS_OWN.contains(&word) || word.contains('=') {
                return (command.to_string(), false);
            }
            let at = command.len() - trimmed.len();
            return (format!("{}exec {}", &command[..at], &command[at..]), true);
        }
        rest = &trimmed[word.len()..];
    }
}

/// A `sh -c script` for a server, a service or their hooks: in `cwd`, with the suite's environment (placeholders
/// filled in), `$PORT` and the run's mark, and no input.
fn shell(script: &str, cwd: &Path, env: &[(String, String)], fill: &Placeholders) -> Command {
    let mut command = Command::new("sh");
    command
        .args(["-c", script])
        .current_dir(cwd)
        .envs(env.iter().map(|(k, v)| (k, fill.fill(v))))
        .env("PORT", fill.port.to_string())
        .env(RUN_MARK, Mark::current().text())
        .stdin(Stdio::null());
    command
}

/// A hook: a setup, teardown, reset or ready command, run to its end beside a server or service.
#[derive(Debug, Clone, Copy)]
pub struct Hook<'a> {
    /// The command, placeholders not yet filled.
    pub command: &'a str,
    /// Working directory.
    pub cwd: &'a Path,
    /// Extra environment, placeholders not yet filled.
    pub env: &'a [(String, String)],
    /// What its placeholders are filled with.
    pub fill: &'a Placeholders,
    /// Where its output is appended.
    pub log: &'a Path,
}

/// Runs a hook to its end, its output appended to the log (bounded as a server's is, [`BoundedLog`]), in a
/// process group of its own that is killed when `stop` is set meanwhile or, when there is one, at `deadline`.
pub fn run_hook(hook: Hook<'_>, stop: &AtomicBool, deadline: Option<Instant>) -> Result<(), String> {
    let started = Instant::now();
    let (command, log) = (hook.fill.fill(hook.command), hook.log);
    let (output, writer) = BoundedLog::open(log).map_err(|e| format!("cannot open {}: {e}", log.display()))?;
    let errors = writer.try_clone().map_err(|e| e.to_string())?;
    let mut shell = shell(&command, hook.cwd, hook.env, hook.fill);
    let spawned = shell.stdout(writer).stderr(errors).process_group(0).spawn();
    drop(shell); // the pipe's write ends go with the command, so that the log sees its end
    let mut child = spawned.map_err(|e| e.to_string())?;
    let running = live::register(child.id() as i32, None); // a second signal kills it too
    let status = loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            break status;
        }
        let late = deadline.filter(|&d| Instant::now() >= d);
        if stop.load(Ordering::Relaxed) || late.is_some() {
            let _ = killpg(Pid::from_raw(child.id() as i32), Signal::SIGKILL);
            let _ = child.wait();
            output.finish(Duration::from_secs(1));
            if let Some(deadline) = late {
                // The limit it was given, to the millisecond (a hook_timeout of 300ms is said as such).
                let limit = deadline.saturating_duration_since(started).as_micros().div_ceil(1000);
                let limit = humantime::format_duration(Duration::from_millis(limit as u64));
                return Err(format!("'{command}' was still running after {limit}, {KILLED_LATE}"));
            }
            return Err(format!("'{command}' was interrupted"));
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    // What it left running in the background may hold the pipe: its output is not waited for past a second. What
    // it left is stopped when the run ends.
    output.finish(Duration::from_secs(1));
    live::keep_what_a_hook_left(child.id() as i32, running);
    if status.success() {
        Ok(())
    } else {
        Err(format!("'{command}' exited ({}); its output is in {}", Ended::from(status), log.display()))
    }
}

/// The addresses the tree rooted at `root` (with every process of `cgroup`) listens on over TCP, read in the
/// root's network namespace.
pub fn listening_of(root: i32, cgroup: Option<std::path::PathBuf>) -> Vec<std::net::SocketAddr> {
    let mut pids: Vec<i32> = Tree::with_cgroup(root, cgroup).members().iter().map(|p| p.pid).collect();
    pids.sort_by_key(|&pid| pid != root);
    crate::sampling::sockets::listening(&pids)
}

/// How a hook that ran past its deadline ends its error.
const KILLED_LATE: &str = "its time limit, and was killed";

/// A hook's failure as the suite's messages say it: `who` (`service 'db'`), `what` (`setup`, `its reset`), why,
/// and for one killed at its deadline, the key that sets it.
pub fn hook_failed(who: &str, what: &str, why: String) -> String {
    format!("{who}: {}", failed_hook(what, why))
}

/// `what failed: why`, and for a hook killed at its deadline, the key that sets it.
pub fn failed_hook(what: &str, why: String) -> String {
    if why.ends_with(KILLED_LATE) {
        format!("{what} failed: {why} (raise its hook_timeout if it needs longer)")
    } else {
        format!("{what} failed: {why}")
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

/// What [`ended_early`] says of a command the shell did not find (exit status 127).
pub const NOT_FOUND: &str = "its command was not found";

/// Why a server or service ended before it was ready, with the end of its log (`tail`): "server 'x' exited (exit
/// status 1) before it answered", and when its command was not found, the shell's own line and a hint.
pub fn ended_early(kind: &str, name: &str, ended: &Ended, before: &str, tail: &str) -> String {
    let hint = match ended.code {
        Some(127) => {
            let said = tail.lines().rev().map(str::trim).find(|l| l.ends_with("not found"));
            let said = said.map(|line| format!(" ({line})")).unwrap_or_default();
            format!(": {NOT_FOUND}{said}; is it installed and on PATH?")
        }
        _ => String::new(),
    };
    format!("{kind} '{name}' exited ({ended}) before {before}{hint}\n{tail}")
}

/// The port a server or service listens on: its fixed one, which must be free, or one nothing listens on now.
fn port(kind: &str, name: &str, fixed: u16) -> Result<u16, String> {
    if fixed == 0 {
        let free = TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr());
        return free.map(|a| a.port()).map_err(|e| format!("{kind} '{name}': no free port ({e})"));
    }
    if std::net::TcpStream::connect(("127.0.0.1", fixed)).is_ok() {
        return Err(format!(
            "{kind} '{name}': port {fixed} is already in use before it started: stop whatever listens there, or leave out port to let shootout pick one"
        ));
    }
    Ok(fixed)
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
pub(crate) fn allowed_cpus(pid: i32) -> Vec<usize> {
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
    fn a_simple_command_is_execd_after_its_assignments() {
        let execd = |script: &str| (script.to_string(), true);
        assert_eq!(exec_simple("node app.js 8080"), execd("exec node app.js 8080"));
        assert_eq!(exec_simple("APP=x  DEBUG= node app.js"), execd("APP=x  DEBUG= exec node app.js"));
        assert_eq!(exec_simple("python3 -c 'pass'  8080"), execd("exec python3 -c 'pass'  8080"));
        assert_eq!(exec_simple("exec node app.js"), execd("exec node app.js"), "exec'd by its own word");
        for kept in
            ["cd app && node app.js", "APP='a b' node app.js", "if true; then x; fi", "{ node app.js; }", "APP=x"]
        {
            assert_eq!(exec_simple(kept), (kept.to_string(), false));
        }
    }

    #[test]
    fn cpu_lists() {
        assert_eq!(parse_cpus("1"), Some(vec![1]));
        assert_eq!(parse_cpus("0,2-4"), Some(vec![0, 2, 3, 4]));
        assert_eq!(parse_cpus("x"), None);
    }

    #[test]
    fn placeholders_fill_the_port_and_each_services_port() {
        let fill = Placeholders { port: 8080, services: vec![("db".into(), 5432), ("cache".into(), 11211)] };
        assert_eq!(fill.fill("-p {port} --db {service.db.port} -m {service.cache.port}"), "-p 8080 --db 5432 -m 11211");
    }
}
