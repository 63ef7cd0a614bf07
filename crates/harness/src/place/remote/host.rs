//! `shootout host`: the far side of a placement. It reads the runner's questions on its input and answers each
//! on its output, starting, sampling and stopping processes with the same code the runner uses on its own
//! machine. Logs are kept in a folder of its own under the temporary directory and sent back when each process
//! stops. When its input ends (the runner stopped, crashed or lost the link), every process it started is killed,
//! tree and cgroup, and its folder removed: nothing it started outlives the run.

use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;

use super::protocol::{this_machine, FromHost, RemoteLaunch, ToHost, VERSION};
use crate::process::{self, Hook, Launch, Process};
use crate::profiles::profiler::{Recording, Subject};
use crate::sampling::sockets::Backends;
use crate::sampling::tree::Tree;

/// The most of a log sent back at a stop: its head and tail as [`BoundedLog`](crate::process::log::BoundedLog) keeps them.
const MOST_LOG: u64 = 9 << 20;

/// Serves the runner on `input` and `output` until `input` ends, or until no question has come for the link's
/// timeout (a link that stalled: a network that drops everything, an ssh client stopped); either way everything
/// started here is stopped when it returns. `Err` names what went wrong with the exchange.
pub fn serve(input: impl BufRead + Send + 'static, mut output: impl Write) -> Result<(), String> {
    let peer = "the runner";
    let _end = crate::process::live::EndOfRun; // what hooks left here ends with the session
    let questions = read_in_turn(input, peer);
    let first = questions.recv().unwrap_or(Ok(None))?;
    let hello =
        FromHost::Hello { shootout: env!("CARGO_PKG_VERSION").into(), protocol: VERSION, machine: this_machine() };
    let send = |output: &mut dyn Write, answer: &FromHost| {
        shootout_agents::frame::write(&mut &mut *output, answer).map_err(|e| format!("cannot answer the runner: {e}"))
    };
    let link_timeout = match first {
        None => return Ok(()),
        Some(ToHost::Hello { link_timeout_ms, .. }) => {
            send(&mut output, &hello)?;
            Duration::from_millis(link_timeout_ms.max(1000))
        }
        Some(other) => return Err(format!("the runner began with {other:?}, not a hello")),
    };
    let mut host = Host::new()?;
    loop {
        let question = match questions.recv_timeout(link_timeout) {
            Ok(question) => question?,
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => None,
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                return Err(format!(
                    "no word from the runner in {}: the link is taken as lost, and everything started here is stopped",
                    humantime::format_duration(link_timeout)
                ))
            }
        };
        let Some(question) = question else { return Ok(()) };
        let answer = host.answer(question);
        send(&mut output, &answer)?;
    }
}

/// The questions read from `input` on a thread of its own, in order, so that waiting for the next one can have a
/// deadline; the last item is `Ok(None)` at the input's end, or the error that ended it.
pub(crate) fn read_in_turn<T: serde::de::DeserializeOwned + Send + 'static>(
    mut input: impl BufRead + Send + 'static,
    peer: &'static str,
) -> std::sync::mpsc::Receiver<Result<Option<T>, String>> {
    let (send, receive) = std::sync::mpsc::channel();
    std::thread::spawn(move || loop {
        let read = shootout_agents::frame::read(&mut input, peer).map_err(|e| e.to_string());
        let last = !matches!(read, Ok(Some(_)));
        if send.send(read).is_err() || last {
            return;
        }
    });
    receive
}

/// What one `shootout host` holds: its processes, the trees being sampled or profiled, and its folder.
struct Host {
    dir: PathBuf,
    processes: HashMap<u32, Process>,
    trees: HashMap<u32, Tree>,
    recordings: HashMap<u32, Recording>,
    hooks: u64,
}

impl Host {
    /// A folder of its own: named by this process and a count, since one process may hold several hosts (tests).
    fn new() -> Result<Host, String> {
        static HOSTS: AtomicU64 = AtomicU64::new(0);
        let nth = HOSTS.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("shootout-host-{}-{nth}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|e| format!("cannot make {}: {e}", dir.display()))?;
        Ok(Host { dir, processes: HashMap::new(), trees: HashMap::new(), recordings: HashMap::new(), hooks: 0 })
    }

    fn log(&self, id: u32) -> PathBuf {
        self.dir.join(format!("{id}.log"))
    }

    fn answer(&mut self, question: ToHost) -> FromHost {
        let failed = |why: String| FromHost::Failed { why, output: String::new() };
        let never = AtomicBool::new(false);
        match question {
            ToHost::Hello { .. } => failed("hello twice".into()),
            ToHost::Ping => FromHost::Done { output: String::new() },
            ToHost::Start { id, launch, services } => {
                let log = self.log(id);
                match start(&launch, &services, &log, &never) {
                    Ok(process) => {
                        let answer = FromHost::Started { port: process.fill.port, cpus: process.cpus.clone() };
                        self.processes.insert(id, process);
                        answer
                    }
                    Err(why) => FromHost::Failed { why, output: read_log(&log) },
                }
            }
            ToHost::Hook { command, cwd, env, fill, limit_ms } => {
                self.hooks += 1;
                let log = self.dir.join(format!("hook-{}.log", self.hooks));
                let deadline = limit_ms.map(|ms| Instant::now() + Duration::from_millis(ms));
                let hook = Hook { command: &command, cwd: Path::new(&cwd), env: &env, fill: &fill, log: &log };
                let ran = process::run_hook(hook, &never, deadline);
                let output = read_log(&log);
                let _ = std::fs::remove_file(&log);
                match ran {
                    Ok(()) => FromHost::Done { output },
                    Err(why) => FromHost::Failed { why, output },
                }
            }
            ToHost::Accepts { port } => FromHost::Accepts {
                yes: TcpStream::connect_timeout(&([127, 0, 0, 1], port).into(), Duration::from_secs(1)).is_ok(),
            },
            ToHost::Exited { id } => match self.processes.get_mut(&id) {
                Some(process) => FromHost::Exited { ended: process.exited() },
                None => failed(format!("no process {id}")),
            },
            ToHost::Listening { id } => match self.processes.get(&id) {
                Some(process) => FromHost::Listening { addresses: process.listening() },
                None => failed(format!("no process {id}")),
            },
            ToHost::Tail { id } => match self.processes.get(&id) {
                Some(process) => FromHost::Tail { text: process.log_tail() },
                None => failed(format!("no process {id}")),
            },
            ToHost::Watch { id } => match self.processes.get(&id) {
                Some(process) => {
                    let cgroup = process.cgroup.as_ref().map(|g| g.path().to_path_buf());
                    let backends = process.fill.services.iter().map(|(name, port)| (*port, name.clone())).collect();
                    let tree = Tree::with_cgroup(process.tree_root(), cgroup).on_cpus(process.cpus.clone());
                    let mut tree = tree.naming(Backends::by_port(backends));
                    tree.baseline();
                    self.trees.insert(id, tree);
                    FromHost::Done { output: String::new() }
                }
                None => failed(format!("no process {id}")),
            },
            ToHost::Sample { id, t_s } => match self.trees.get_mut(&id) {
                Some(tree) => FromHost::Sample { sample: tree.sample(t_s) },
                None => failed(format!("process {id} is not watched")),
            },
            ToHost::ProfilerFor { id, profiler } => match self.subject(id, profiler) {
                Ok(subject) => FromHost::ProfilerIs { profiler: subject.profiler },
                Err(why) => failed(why),
            },
            ToHost::StartProfile { id, profiler, name } => {
                let started = self
                    .subject(id, Some(profiler))
                    .and_then(|subject| Recording::start(&subject, &self.dir.join("profiles"), &name, &never));
                match started {
                    Ok(recording) => {
                        self.recordings.insert(id, recording);
                        FromHost::Done { output: String::new() }
                    }
                    Err(why) => failed(why),
                }
            }
            ToHost::EndProfile { id } => match self.recordings.remove(&id).map(Recording::finish) {
                Some(Ok(recorded)) => FromHost::Profile {
                    profiler: recorded.profiler,
                    native_perf: recorded.native_perf,
                    command: recorded.command,
                    folded: recorded.stacks.text(),
                    seconds: recorded.seconds,
                },
                Some(Err(why)) => failed(why),
                None => failed(format!("process {id} is not being profiled")),
            },
            ToHost::Stop { id } => match self.processes.remove(&id) {
                Some(process) => {
                    self.trees.remove(&id);
                    self.recordings.remove(&id);
                    let stopped = process.stop();
                    let log = self.log(id);
                    let text = read_log(&log);
                    let _ = std::fs::remove_file(&log);
                    FromHost::Stopped { stopped, log: text }
                }
                None => failed(format!("no process {id}")),
            },
        }
    }
}

impl Host {
    /// What profiling process `id`'s whole tree with `profiler` (or the one that suits it) means, checked.
    fn subject(&mut self, id: u32, profiler: Option<shootout_model::profile::Profiler>) -> Result<Subject, String> {
        let process = self.processes.get_mut(&id).ok_or_else(|| format!("no process {id}"))?;
        let root = process.tree_root();
        Subject::of_tree(profiler, &mut process.tree, root)
    }
}

impl Drop for Host {
    /// The runner is gone: every profiler and process still running is killed (each one's own drop), and the
    /// folder removed.
    fn drop(&mut self) {
        self.recordings.clear();
        self.trees.clear();
        self.processes.clear();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Starts `launch` here.
fn start(launch: &RemoteLaunch, services: &[(String, u16)], log: &Path, stop: &AtomicBool) -> Result<Process, String> {
    let kind = if launch.kind == "service" { "service" } else { "server" };
    let signal =
        Signal::try_from(launch.stop_signal).map_err(|e| format!("stop signal {}: {e}", launch.stop_signal))?;
    let here = Launch {
        kind,
        name: &launch.name,
        command: &launch.command,
        port: launch.port,
        setup: launch.setup.as_deref(),
        cwd: Path::new(&launch.cwd),
        env: &launch.env,
        cpus: launch.cpus.as_deref(),
        stop_signal: signal,
        grace: Duration::from_millis(launch.grace_ms),
        stop_pidfile: launch.stop_pidfile.as_deref(),
        container: None,
        hook_timeout: Duration::from_millis(launch.hook_timeout_ms),
    };
    Process::start(&here, services, log, stop)
}

/// A log's text, its first [`MOST_LOG`] bytes (a log keeps at most 8 MiB and a line).
fn read_log(path: &Path) -> String {
    use std::io::Read;
    let mut text = Vec::new();
    if let Ok(file) = std::fs::File::open(path) {
        let _ = file.take(MOST_LOG).read_to_end(&mut text);
    }
    String::from_utf8_lossy(&text).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::process::Placeholders;
    use std::io::Cursor;

    /// What the runner asks a host to start: `command`, from `/`, on a free port, stopped with SIGTERM and 100 ms
    /// of grace.
    fn launched(kind: &str, name: &str, command: &str) -> RemoteLaunch {
        RemoteLaunch {
            kind: kind.into(),
            name: name.into(),
            command: command.into(),
            port: 0,
            setup: None,
            cwd: "/".into(),
            env: vec![],
            cpus: None,
            stop_signal: Signal::SIGTERM as i32,
            grace_ms: 100,
            stop_pidfile: None,
            hook_timeout_ms: 60_000,
        }
    }

    fn exchange(questions: &[ToHost]) -> Vec<FromHost> {
        let mut input = Vec::new();
        for q in questions {
            shootout_agents::frame::write(&mut input, q).unwrap();
        }
        let mut output = Vec::new();
        serve(Cursor::new(input), &mut output).unwrap();
        let mut answers = Vec::new();
        let mut reader = Cursor::new(output);
        while let Some(answer) = shootout_agents::frame::read(&mut reader, "host").unwrap() {
            answers.push(answer);
        }
        answers
    }

    #[test]
    fn a_process_is_started_sampled_and_stopped_with_its_log_sent_back() {
        let hello = ToHost::Hello { shootout: "test".into(), protocol: VERSION, link_timeout_ms: 60_000 };
        let launch = RemoteLaunch {
            setup: Some("echo setup".into()),
            grace_ms: 2000,
            ..launched("server", "sleeper", "echo started on {port}; exec sleep 30")
        };
        let answers = exchange(&[
            hello,
            ToHost::Start { id: 1, launch, services: vec![] },
            ToHost::Watch { id: 1 },
            ToHost::Sample { id: 1, t_s: 0.5 },
            ToHost::Hook {
                command: "echo {port} {service.db.port}".into(),
                cwd: "/".into(),
                env: vec![],
                fill: Placeholders { port: 7, services: vec![("db".into(), 8)] },
                limit_ms: None,
            },
            ToHost::Hook {
                command: "exit 4".into(),
                cwd: "/".into(),
                env: vec![],
                fill: Placeholders::port(1),
                limit_ms: None,
            },
            ToHost::Exited { id: 1 },
            ToHost::Stop { id: 1 },
            ToHost::Exited { id: 1 },
        ]);
        assert!(matches!(&answers[0], FromHost::Hello { protocol: VERSION, .. }), "{answers:?}");
        let FromHost::Started { port, .. } = answers[1] else { panic!("{answers:?}") };
        assert!(port > 0);
        assert_eq!(answers[2], FromHost::Done { output: String::new() });
        let FromHost::Sample { sample } = &answers[3] else { panic!("{answers:?}") };
        assert_eq!((sample.t_s, sample.processes), (0.5, 1), "{sample:?}");
        assert_eq!(answers[4], FromHost::Done { output: "7 8\n".into() });
        assert!(matches!(&answers[5], FromHost::Failed { why, .. } if why.contains("exit status 4")), "{answers:?}");
        assert_eq!(answers[6], FromHost::Exited { ended: None }, "still running");
        let FromHost::Stopped { stopped, log } = &answers[7] else { panic!("{answers:?}") };
        assert_eq!((stopped.killed, stopped.left), (false, 0), "{stopped:?}");
        assert_eq!(log, &format!("setup\nstarted on {port}\n"));
        assert!(matches!(&answers[8], FromHost::Failed { .. }), "gone once stopped");
    }

    #[test]
    fn when_the_runner_goes_every_process_is_killed() {
        let hello = ToHost::Hello { shootout: "test".into(), protocol: VERSION, link_timeout_ms: 60_000 };
        let launch = launched("service", "left", "sleep 3613 & sleep 3614");
        exchange(&[hello, ToHost::Start { id: 1, launch, services: vec![] }]);
        let deadline = Instant::now() + Duration::from_secs(3);
        let alive = || {
            crate::sampling::tree::all_processes().iter().any(|p| {
                std::fs::read_to_string(format!("/proc/{}/cmdline", p.pid)).is_ok_and(|c| c.starts_with("sleep\x00361"))
            })
        };
        while alive() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(!alive(), "the input ended: its tree was killed");
    }

    #[test]
    fn a_runner_that_goes_quiet_is_taken_as_lost_and_every_process_is_killed() {
        let (reader, mut writer) = std::io::pipe().unwrap();
        let hello = ToHost::Hello { shootout: "test".into(), protocol: VERSION, link_timeout_ms: 1000 };
        let launch = launched("server", "quiet", "exec sleep 3615");
        for question in [hello, ToHost::Start { id: 1, launch, services: vec![] }, ToHost::Ping] {
            shootout_agents::frame::write(&mut writer, &question).unwrap();
        }
        // The input stays open and says nothing more: a link that stalled.
        let started = Instant::now();
        let ended = serve(std::io::BufReader::new(reader), &mut Vec::new());
        let why = ended.expect_err("a quiet runner is an error");
        assert!(why.contains("no word from the runner in 1s"), "{why}");
        assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
        let alive = crate::sampling::tree::all_processes().iter().any(|p| {
            std::fs::read_to_string(format!("/proc/{}/cmdline", p.pid)).is_ok_and(|c| c.starts_with("sleep\x003615"))
        });
        assert!(!alive, "what it started was killed");
        drop(writer);
    }
}
