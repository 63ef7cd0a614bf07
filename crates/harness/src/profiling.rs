//! [`Recording`]: a sampling profiler attached to a running process tree (a server's, or PIDs a user gave),
//! run as a process of the run like a server: in its own process group and cgroup, killed if the runner dies,
//! stopped with SIGINT (each profiler writes what it has on it), and reaped. Its output is read back as folded
//! stacks ([`Recorded`]) and its raw file removed (perf's DWARF stacks take megabytes a second).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;
use shootout_model::profile::Profiler;
use shootout_profile::{record, Stacks};

use crate::process::{Launch, Process};
use crate::tree::Tree;

/// Time a profiler gets to write what it recorded once interrupted (perf resolves no symbols then; rbspy and
/// py-spy write their folded stacks).
const WRITE_GRACE: Duration = Duration::from_secs(30);

/// Time a profiler is watched after it starts, so that one that cannot attach fails at once, with its words.
const ATTACH_WATCH: Duration = Duration::from_millis(500);

/// A profiler recording, until [`Recording::finish`].
#[derive(Debug)]
pub struct Recording {
    process: Process,
    profiler: Profiler,
    command: String,
    raw: PathBuf,
    started: Instant,
}

/// What a profiler recorded.
#[derive(Debug, Clone)]
pub struct Recorded {
    /// The profiler.
    pub profiler: Profiler,
    /// Its command line, as run.
    pub command: String,
    /// Its samples, as folded stacks.
    pub stacks: Stacks,
    /// Seconds it recorded.
    pub seconds: f64,
}

impl Recording {
    /// Starts `subject`'s profiler on its processes, recording into `dir` under `name` (its log is
    /// `dir/NAME.profiler.log`). A profiler that ends at once (it could not attach) is an error with its words.
    pub fn start(subject: &Subject, dir: &Path, name: &str, stop: &AtomicBool) -> Result<Recording, String> {
        let (profiler, pids) = (subject.profiler, &subject.pids);
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot make {} ({e})", dir.display()))?;
        // The profiler runs in `dir`: every path it is given is whole.
        let dir = &std::fs::canonicalize(dir).map_err(|e| format!("cannot find {} ({e})", dir.display()))?;
        let raw = record::raw_file(profiler, dir, name);
        let _ = std::fs::remove_file(&raw);
        let command = record::command(profiler, pids, &raw).iter().map(|w| quoted(w)).collect::<Vec<_>>().join(" ");
        let launch = Launch {
            kind: "profiler",
            name: profiler.name(),
            command: &command,
            port: 0,
            setup: None,
            cwd: dir,
            env: &[],
            cpus: None,
            stop_signal: Signal::SIGINT,
            grace: WRITE_GRACE,
            stop_pidfile: None,
            container: None,
        };
        let log = dir.join(format!("{name}.profiler.log"));
        let mut process = Process::start(&launch, &[], &log, stop)?;
        let started = Instant::now();
        while started.elapsed() < ATTACH_WATCH {
            if let Some(ended) = process.exited() {
                let tail = process.log_tail();
                process.stop();
                return Err(format!("{} could not record ({ended}):\n{tail}", profiler.name()));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(Recording { process, profiler, command, raw, started })
    }

    /// Stops the profiler, waits while it writes, and reads what it recorded.
    pub fn finish(self) -> Result<Recorded, String> {
        let seconds = self.started.elapsed().as_secs_f64();
        let tail = self.process.log_tail();
        let stopped = self.process.stop();
        let folded = record::fold(self.profiler, &self.raw);
        let _ = std::fs::remove_file(&self.raw);
        let stacks = folded.map_err(|e| {
            let how = stopped.status.map(|s| s.to_string()).unwrap_or_else(|| "an unknown status".into());
            format!("{e}; the profiler ended with {how}:\n{tail}")
        })?;
        if stacks.is_empty() {
            return Err(format!("{} recorded no sample in {seconds:.1} s:\n{tail}", self.profiler.name()));
        }
        Ok(Recorded { profiler: self.profiler, command: self.command, stacks, seconds })
    }
}

/// Runs `work` (a load) with `subject` recorded from `after` (the load's warm-up) until `work` returns, into
/// `dir` under `name`; returns what `work` returned and what was recorded.
pub fn around<T>(
    subject: &Subject,
    after: Duration,
    dir: &Path,
    name: &str,
    stop: &AtomicBool,
    work: impl FnOnce() -> T,
) -> (T, Result<Recorded, String>) {
    let done = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let recording = scope.spawn(|| {
            let measured = Instant::now() + after;
            while Instant::now() < measured && !done.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(10));
            }
            if done.load(Ordering::Relaxed) {
                return Err("the load ended before its warm-up did".to_string());
            }
            let recording = Recording::start(subject, dir, name, stop)?;
            while !done.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(10));
            }
            recording.finish()
        });
        let result = work();
        done.store(true, Ordering::Relaxed);
        (result, recording.join().unwrap_or_else(|_| Err("the profiler's thread failed".into())))
    })
}

/// What to profile, and with what: checked before any load, so that a missing profiler or a process that is not
/// there is said at once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subject {
    /// The profiler.
    pub profiler: Profiler,
    /// Every process of the trees to profile, their roots first.
    pub pids: Vec<i32>,
}

impl Subject {
    /// The whole trees of `pids` (each process and every process it started), to be profiled by `profiler`, or,
    /// given none, by the one that suits the programs they run. A PID not running, or a profiler not installed,
    /// is an error that says so.
    pub fn of(profiler: Option<Profiler>, pids: &[i32]) -> Result<Subject, String> {
        let mut tree: Vec<(i32, String)> = Vec::new();
        for pid in pids {
            let members = members(*pid);
            if !members.iter().any(|(p, _)| p == pid) {
                return Err(format!("no process {pid} is running"));
            }
            tree.extend(members.into_iter().filter(|(p, _)| !tree.iter().any(|(q, _)| q == p)).collect::<Vec<_>>());
        }
        let profiler = profiler.unwrap_or_else(|| Profiler::for_programs(tree.iter().map(|(_, p)| p.as_str())));
        if !on_path(profiler.name()) {
            return Err(format!("{} is not installed ({} installs it)", profiler.name(), profiler.install()));
        }
        Ok(Subject { profiler, pids: tree.into_iter().map(|(pid, _)| pid).collect() })
    }
}

/// The live processes of the tree rooted at `pid`, each with its program (the file name of its executable).
fn members(pid: i32) -> Vec<(i32, String)> {
    Tree::new(pid)
        .members()
        .into_iter()
        .map(|p| {
            let exe = std::fs::read_link(format!("/proc/{}/exe", p.pid)).unwrap_or_default();
            (p.pid, exe.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default())
        })
        .collect()
}

/// True when `program` is on the PATH.
fn on_path(program: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(program).is_file()))
}

/// `word` quoted for `sh`, when it needs quotes.
fn quoted(word: &str) -> String {
    if word.chars().all(|c| c.is_ascii_alphanumeric() || "-_./,:=".contains(c)) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}
