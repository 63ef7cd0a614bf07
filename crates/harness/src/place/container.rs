//! [`Container`]: a server or service run from an image by Docker or Podman (whichever answers, Docker first,
//! or the suite's `engine`). It is started with a label naming the run (`shootout.run=MARK`), `--init` (so its
//! stop signal reaches the app), its port published on a free port of 127.0.0.1, and pinned with
//! `--cpuset-cpus`; it is sampled through its own cgroup (its processes' CPU, their PSS from `/proc`), as a
//! process here is; it is stopped with its stop signal, given its grace, then removed with its log copied into
//! `logs/`. A container is also registered among the live processes by its cgroup, so a second Ctrl-C kills it,
//! and guarded, so a runner killed without a word does not leave it running; what such a run leaves is removed by
//! the next one, found by its label ([`reap_dead_containers`]).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use crate::process::live::{self, Registration};
use crate::process::reap::{Guard, Mark};
use crate::process::{Ended, Hook, Launch, Placeholders, Stopped};

/// The label every container of a run carries, with the run's mark as its value.
pub const RUN_LABEL: &str = "shootout.run";

static NEXT: AtomicU32 = AtomicU32::new(0);

/// A running container.
#[derive(Debug)]
pub struct Container {
    /// "server" or "service".
    pub kind: &'static str,
    /// Its name in the suite.
    pub name: String,
    /// `docker` or `podman`.
    engine: String,
    /// The container's own name.
    id: String,
    /// Its placeholders as seen from outside: the published port, and the services' ports.
    pub fill: Placeholders,
    /// The PID of its first process, as this machine sees it.
    pub root: i32,
    /// Its cgroup (in the cgroup v2 hierarchy), where it can be read.
    pub cgroup: Option<PathBuf>,
    /// The CPUs it may run on.
    pub cpus: Vec<usize>,
    log: PathBuf,
    grace: Duration,
    signal: String,
    registration: Option<Registration>,
    guard: Option<Guard>,
    /// It has been removed.
    removed: bool,
}

/// Runs `engine ARGS` to its end; its standard output, or its last line of error.
fn engine(engine: &str, args: &[&str]) -> Result<String, String> {
    let output = Command::new(engine)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {engine} ({e}): install docker.io or podman from Debian's packages"))?;
    if output.status.success() {
        Ok(String::from_utf8_lossy(&output.stdout).trim().to_string())
    } else {
        let said = String::from_utf8_lossy(&output.stderr);
        Err(format!("{engine} {}: {}", args.first().unwrap_or(&""), first_error(&said)))
    }
}

/// The line of an engine's error output that says what went wrong: the first that speaks of an error (Docker
/// ends with `Run 'docker run --help' for more information`, which does not), else the first there is.
fn first_error(said: &str) -> &str {
    let lines = || said.lines().map(str::trim).filter(|l| !l.is_empty());
    lines().find(|l| l.to_ascii_lowercase().contains("error")).or_else(|| lines().next()).unwrap_or("failed")
}

/// The engine to use: the suite's, or the first of Docker and Podman that answers.
fn choose(wanted: Option<&str>) -> Result<String, String> {
    if let Some(wanted) = wanted {
        return Ok(wanted.to_string());
    }
    for candidate in ["docker", "podman"] {
        if engine(candidate, &["version", "--format", "{{.Server.Version}}"]).is_ok() {
            return Ok(candidate.to_string());
        }
    }
    Err("neither docker nor podman answers here: install docker.io (and start dockerd, or set DOCKER_HOST) or podman"
        .into())
}

impl Container {
    /// Runs its setup here, then starts `launch` in `spec`'s container beside `services`; returns once the
    /// container runs (the ready probe is the server's or service's own).
    pub fn start(
        launch: &Launch<'_>,
        spec: &shootout_suite::Container,
        services: &[(String, u16)],
        log: &Path,
        stop: &std::sync::atomic::AtomicBool,
    ) -> Result<Container, String> {
        let (kind, name) = (launch.kind, launch.name);
        let failed = |why: String| format!("{kind} '{name}' (container {}): {why}", spec.image);
        // Inside, {port} is the port the image listens on; outside, the one published for it.
        let inside = Placeholders { port: spec.port, services: services.to_vec() };
        if let Some(setup) = launch.setup {
            let hook = Hook { command: setup, cwd: launch.cwd, env: launch.env, fill: &inside, log };
            let deadline = std::time::Instant::now() + launch.hook_timeout;
            crate::process::run_hook(hook, stop, Some(deadline))
                .map_err(|e| crate::process::hook_failed(&format!("{kind} '{name}'"), "setup", e))?;
        }
        let engine_name = choose(spec.engine.as_deref()).map_err(&failed)?;
        let mark = Mark::current().text();
        let safe: String = name.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect();
        let id = format!("shootout-{mark}-{}-{safe}", NEXT.fetch_add(1, Ordering::Relaxed));
        let mut args: Vec<String> = ["run", "-d", "--init", "--label", &format!("{RUN_LABEL}={mark}"), "--name", &id]
            .iter()
            .map(|s| s.to_string())
            .collect();
        args.extend(["-p".into(), format!("127.0.0.1::{}", spec.port)]);
        if let Some(cpus) = launch.cpus {
            args.extend(["--cpuset-cpus".into(), cpus.to_string()]);
        }
        for (key, value) in launch.env {
            args.extend(["-e".into(), format!("{key}={}", inside.fill(value))]);
        }
        args.extend(spec.options.iter().cloned());
        args.push(spec.image.clone());
        args.extend(inside.fill(launch.command).split_whitespace().map(String::from));
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        if let Err(why) = engine(&engine_name, &argv) {
            // A run that failed after creating the container (its command not found in the image) leaves it
            // created: it goes now, not at the next run.
            let _ = engine(&engine_name, &["rm", "-f", &id]);
            return Err(failed(why));
        }
        let mut container = Container {
            kind,
            name: name.to_string(),
            engine: engine_name,
            id,
            fill: Placeholders { port: 0, services: services.to_vec() },
            root: 0,
            cgroup: None,
            cpus: launch.cpus.and_then(crate::process::parse_cpus).unwrap_or_default(),
            log: log.to_path_buf(),
            grace: launch.grace,
            signal: format!("{}", launch.stop_signal).trim_start_matches("SIG").to_string(),
            registration: None,
            guard: None,
            removed: false,
        };
        // From here a failure drops the container, which removes it.
        if let Some(ended) = container.exited() {
            return Err(failed(format!("it exited before it was ready ({ended})\n{}", container.log_tail())));
        }
        let published = engine(&container.engine, &["port", &container.id, &format!("{}/tcp", spec.port)]);
        let published = published.map_err(|why| match container.exited() {
            Some(ended) => failed(format!("it exited before it was ready ({ended})\n{}", container.log_tail())),
            None => failed(why),
        })?;
        container.fill.port = published
            .lines()
            .find_map(|l| l.trim().rsplit_once(':').and_then(|(_, p)| p.parse().ok()))
            .ok_or_else(|| failed(format!("no published port in '{published}'")))?;
        let pid = engine(&container.engine, &["inspect", "-f", "{{.State.Pid}}", &container.id]).map_err(&failed)?;
        container.root = pid.parse().map_err(|_| failed(format!("no PID in '{pid}'")))?;
        container.cgroup = cgroup_of(container.root);
        container.registration = Some(live::register(0, container.cgroup.clone()));
        container.guard = Guard::start(0, container.cgroup.as_deref());
        Ok(container)
    }

    /// How it ended, if it has.
    pub fn exited(&mut self) -> Option<Ended> {
        let state = engine(&self.engine, &["inspect", "-f", "{{.State.Running}} {{.State.ExitCode}}", &self.id]);
        match state {
            Ok(state) if state.starts_with("true") => None,
            Ok(state) => {
                Some(Ended { code: state.split_whitespace().nth(1).and_then(|c| c.parse().ok()), ..Ended::default() })
            }
            Err(why) => Some(Ended { unknown: Some(why), ..Ended::default() }),
        }
    }

    /// The last lines of its log.
    pub fn log_tail(&self) -> String {
        let output = Command::new(&self.engine).args(["logs", "--tail", "15", &self.id]).output();
        let text = output.map(|o| [o.stdout, o.stderr].concat()).unwrap_or_default();
        let text = String::from_utf8_lossy(&text);
        if text.trim().is_empty() {
            format!("  (container {}'s log is empty)", self.id)
        } else {
            let lines: Vec<String> = text.lines().map(|l| format!("    {l}")).collect();
            format!("  last lines of container {}:\n{}", self.id, lines.join("\n"))
        }
    }

    /// Stops it: its stop signal, the grace period, then removal (which kills what is left); its log is copied
    /// into the log here first.
    pub fn stop(mut self) -> Stopped {
        let _ = engine(&self.engine, &["kill", "--signal", &self.signal, &self.id]);
        let deadline = Instant::now() + self.grace;
        let mut status = None;
        while Instant::now() < deadline {
            status = self.exited();
            if status.is_some() {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let killed = status.is_none();
        self.keep_log();
        self.remove();
        let left = usize::from(
            engine(&self.engine, &["ps", "-aq", "--filter", &format!("name=^{}$", self.id)])
                .is_ok_and(|found| !found.is_empty()),
        );
        Stopped { status, killed, left }
    }

    /// Appends the container's whole log to the log here.
    fn keep_log(&self) {
        if let Ok(file) = crate::process::log::open_for_append(&self.log) {
            let errors = file.try_clone();
            let mut logs = Command::new(&self.engine);
            logs.args(["logs", &self.id]).stdin(Stdio::null()).stdout(file);
            if let Ok(errors) = errors {
                logs.stderr(errors);
            }
            let _ = logs.status();
        }
    }

    /// Removes it (killing it if it still runs), once.
    fn remove(&mut self) {
        if std::mem::replace(&mut self.removed, true) {
            return;
        }
        let _ = engine(&self.engine, &["rm", "-f", &self.id]);
        self.registration = None;
        if let Some(guard) = self.guard.take() {
            guard.disarm();
        }
    }
}

impl Drop for Container {
    /// A container dropped without its stop (an error on the way) is removed, so no way out leaves it running.
    fn drop(&mut self) {
        self.remove();
    }
}

/// The cgroup v2 of process `pid` (its `0::` line), where the hierarchy is mounted.
fn cgroup_of(pid: i32) -> Option<PathBuf> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).ok()?;
    let relative = text.lines().find_map(|l| l.strip_prefix("0::"))?;
    let path = shootout_engine::cgroups::v2_mount()?.join(relative.trim_start_matches('/'));
    path.join("cgroup.procs").exists().then_some(path)
}

/// Removes the containers of runs that are gone (their label's mark names no live runner), with Docker and
/// Podman where they answer; returns what it removed, in words.
pub fn reap_dead_containers() -> Vec<String> {
    let mut removed = Vec::new();
    for candidate in ["docker", "podman"] {
        let listed = engine(
            candidate,
            &[
                "ps",
                "-a",
                "--filter",
                &format!("label={RUN_LABEL}"),
                "--format",
                &format!("{{{{.Names}}}} {{{{.Label \"{RUN_LABEL}\"}}}}"),
            ],
        );
        let Ok(listed) = listed else { continue };
        for line in listed.lines() {
            let Some((name, mark)) = line.trim().split_once(' ') else { continue };
            if Mark::parse(mark).is_some_and(|m| !m.alive()) && engine(candidate, &["rm", "-f", name]).is_ok() {
                removed.push(format!("{candidate} container {name}"));
            }
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::first_error;

    #[test]
    fn the_engines_reason_is_its_first_error_line_not_its_usage_line() {
        let missing = "Unable to find image 'local/none:1' locally\n\
                       docker: Error response from daemon: pull access denied for local/none, repository does not exist.\n\
                       See 'docker run --help'.\n";
        assert_eq!(
            first_error(missing),
            "docker: Error response from daemon: pull access denied for local/none, repository does not exist."
        );
        assert_eq!(first_error("something odd\nRun 'docker run --help' for more information\n"), "something odd");
        assert_eq!(first_error(""), "failed");
    }
}
