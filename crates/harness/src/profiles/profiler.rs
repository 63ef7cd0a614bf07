//! [`Recording`]: a sampling profiler attached to a running process tree (a server's, or PIDs a user gave),
//! run as a process of the run like a server: in its own process group and cgroup, killed if the runner dies,
//! stopped with SIGINT (each profiler writes what it has on it), and reaped. Its output is read back as folded
//! stacks ([`Recorded`]) and its raw file removed (perf's DWARF stacks take megabytes a second). Beside the
//! profiler, where perf is installed, perf records where the tree's threads blocked
//! ([`shootout_profile::off_cpu`]); when it cannot, the profile goes on without it and says why.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;
use shootout_model::profile::{OffCpu, Profiler};
use shootout_profile::{off_cpu, record, Stacks};

use crate::process::{Launch, Process};
use crate::sampling::tree::Tree;

/// Time a profiler gets to write what it recorded once interrupted (perf resolves no symbols then; rbspy and
/// py-spy write their folded stacks).
const WRITE_GRACE: Duration = Duration::from_secs(30);

/// Time a profiler is watched after it starts, so that one that cannot attach fails at once, with its words
/// (jcmd, which loads async-profiler, takes longer to fail: it says so when the recording is read).
const ATTACH_WATCH: Duration = Duration::from_millis(500);

/// Time a profiler is watched when it is tried before a load ([`check_attach`]): py-spy takes over a second to
/// say a process is not Python, rbspy over two to say one is not Ruby.
const CHECK_WATCH: Duration = Duration::from_secs(3);

/// A profiler recording, until [`Recording::finish`]: one recorder, or one per tree of the runtime's processes
/// for a profiler that takes one PID (Passenger's app processes are not descendants of its first Ruby process),
/// and perf beside them on the tree's native processes when the profiler was chosen for a runtime.
#[derive(Debug)]
pub struct Recording {
    recorders: Vec<Recorder>,
    /// perf recording the tree's context switches, or why it does not.
    off_cpu: Result<OffCpuRecorder, String>,
    profiler: Profiler,
    command: String,
    started: Instant,
    /// The folder the recorders write in, whole.
    dir: PathBuf,
}

/// What a profiler recorded.
#[derive(Debug, Clone)]
pub struct Recorded {
    /// The profiler.
    pub profiler: Profiler,
    /// perf recorded the tree's native processes beside it.
    pub native_perf: bool,
    /// Its command lines, as run (side by side, joined by ` & `).
    pub command: String,
    /// Its samples, as folded stacks.
    pub stacks: Stacks,
    /// Seconds it recorded.
    pub seconds: f64,
    /// Where the tree's threads blocked, weighed in microseconds, or why that was not recorded.
    pub off_cpu: (OffCpu, Stacks),
}

/// perf recording a tree's context switches into its file.
#[derive(Debug)]
struct OffCpuRecorder {
    process: Process,
    raw: PathBuf,
    command: String,
}

/// One profiler process of a recording, the file it writes, and which profiler it is.
#[derive(Debug)]
struct Recorder {
    process: Process,
    raw: PathBuf,
    profiler: Profiler,
}

impl Recording {
    /// Starts `subject`'s profiler on its processes, recording into `dir` under `name` (its log is
    /// `dir/NAME.profiler.log`, or `NAME.N.profiler.log` for each of several recorders, and
    /// `NAME.native.profiler.log` for perf on the native processes). A recorder that ends at once (it could not
    /// attach) is an error with its words, and the others are stopped.
    pub fn start(subject: &Subject, dir: &Path, name: &str, stop: &AtomicBool) -> Result<Recording, String> {
        Recording::start_watching(subject, dir, name, stop, ATTACH_WATCH)
    }

    /// Has perf record where `subject`'s threads block beside the profiler, under `name`, where it can.
    pub fn with_off_cpu(mut self, subject: &Subject, name: &str, stop: &AtomicBool) -> Recording {
        self.off_cpu = start_off_cpu(subject, &self.dir, name, stop);
        self
    }

    /// As [`Recording::start`], each recorder watched for `watch` after it starts.
    fn start_watching(
        subject: &Subject,
        dir: &Path,
        name: &str,
        stop: &AtomicBool,
        watch: Duration,
    ) -> Result<Recording, String> {
        let profiler = subject.profiler;
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot make {} ({e})", dir.display()))?;
        // The profiler runs in `dir`: every path it is given is whole.
        let dir = &std::fs::canonicalize(dir).map_err(|e| format!("cannot find {} ({e})", dir.display()))?;
        let mut targets: Vec<(Profiler, Vec<i32>)> = match profiler.takes_many() {
            true => vec![(profiler, subject.pids.clone())],
            false => subject.roots.iter().map(|root| (profiler, vec![*root])).collect(),
        };
        let runtime_recorders = targets.len();
        if !subject.native.is_empty() {
            targets.push((Profiler::Perf, subject.native.clone()));
        }
        let mut recorders = Vec::new();
        let mut commands = Vec::new();
        for (i, (profiler, pids)) in targets.iter().enumerate() {
            let profiler = *profiler;
            let label = match i {
                _ if i >= runtime_recorders => format!("{name}.native"),
                _ if runtime_recorders == 1 => name.to_string(),
                _ => format!("{name}.{}", i + 1),
            };
            let raw = record::raw_file(profiler, dir, &label);
            let _ = std::fs::remove_file(&raw);
            let command = shell_line(&record::command(profiler, pids, &raw));
            let log = dir.join(format!("{label}.profiler.log"));
            let process = Process::start(&launch(profiler.name(), &command, dir), &[], &log, stop)?;
            recorders.push(Recorder { process, raw, profiler });
            commands.push(command);
        }
        let started = Instant::now();
        while started.elapsed() < watch && !stop.load(Ordering::Relaxed) {
            if let Some(i) = recorders.iter_mut().position(|r| r.process.exited().is_some()) {
                let Recorder { mut process, profiler, .. } = recorders.swap_remove(i);
                let (ended, tail) = (process.exited().unwrap_or_default(), process.log_tail());
                process.stop();
                recorders.into_iter().for_each(|r| drop(r.process.stop()));
                return Err(format!("{} could not record ({ended}):\n{tail}", profiler.name()));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let (dir, off_cpu) = (dir.clone(), Err("not recorded".into()));
        Ok(Recording { recorders, off_cpu, profiler, command: commands.join(" & "), started, dir })
    }

    /// Stops the recorders and keeps nothing of what they recorded.
    fn discard(self) {
        for Recorder { process, raw, .. } in self.recorders {
            process.stop();
            let _ = std::fs::remove_file(&raw);
        }
        if let Ok(OffCpuRecorder { process, raw, .. }) = self.off_cpu {
            process.stop();
            let _ = std::fs::remove_file(&raw);
        }
    }

    /// Stops the recorders, waits while they write, and reads what they recorded, added up. Only a recording with
    /// no sample at all is an error (a recorder of an idle process has none), unless where the tree's threads
    /// blocked was recorded: a server held by a wait is barely on a CPU, and that is what says why.
    pub fn finish(self) -> Result<Recorded, String> {
        let seconds = self.started.elapsed().as_secs_f64();
        let native_perf = self.recorders.iter().any(|r| r.profiler != self.profiler);
        let mut stacks = Stacks::default();
        let mut errors = Vec::new();
        for Recorder { process, raw, profiler } in self.recorders {
            let tail = process.log_tail();
            let stopped = process.stop();
            let folded = record::fold(profiler, &raw);
            let _ = std::fs::remove_file(&raw);
            match folded {
                Ok(folded) => folded.iter().for_each(|(stack, count)| stacks.add(stack, count)),
                Err(e) => {
                    let how = stopped.status.map(|s| s.to_string()).unwrap_or_else(|| "an unknown status".into());
                    errors.push(format!("{e}; the profiler ended with {how}:\n{tail}"));
                }
            }
        }
        let off_cpu = finish_off_cpu(self.off_cpu);
        if stacks.is_empty() && (off_cpu.1.is_empty() || !errors.is_empty()) {
            let why =
                if errors.is_empty() { "no process of the tree was on a CPU".to_string() } else { errors.join("\n") };
            return Err(format!("{} recorded no sample in {seconds:.1} s: {why}", self.profiler.name()));
        }
        Ok(Recorded { profiler: self.profiler, native_perf, command: self.command, stacks, seconds, off_cpu })
    }
}

/// How a profiler named `name` is run: `command` in `dir`, on any CPU, stopped with SIGINT and given
/// [`WRITE_GRACE`] to write what it recorded.
fn launch<'a>(name: &'a str, command: &'a str, dir: &'a Path) -> Launch<'a> {
    Launch {
        kind: "profiler",
        name,
        command,
        port: 0,
        setup: None,
        cwd: dir,
        env: &[],
        cpus: None,
        stop_signal: Signal::SIGINT,
        grace: WRITE_GRACE,
        stop_pidfile: None,
        container: None,
        hook_timeout: shootout_suite::HOOK_TIMEOUT,
    }
}

/// Starts perf on the context switches of `subject`'s tree, into `dir` under `name`, watched as the profilers are;
/// why not, in one line, when perf is missing or cannot record the tree's kernel stacks.
fn start_off_cpu(subject: &Subject, dir: &Path, name: &str, stop: &AtomicBool) -> Result<OffCpuRecorder, String> {
    if let Some(missing) = record::missing(Profiler::Perf) {
        return Err(format!("{missing} ({} installs it)", Profiler::Perf.install()));
    }
    let raw = off_cpu::raw_file(dir, name);
    let _ = std::fs::remove_file(&raw);
    let command = shell_line(&off_cpu::command(&subject.pids, &raw));
    let log = dir.join(format!("{name}.offcpu.profiler.log"));
    let mut process = Process::start(&launch("perf", &command, dir), &[], &log, stop)?;
    let started = Instant::now();
    while started.elapsed() < ATTACH_WATCH && !stop.load(Ordering::Relaxed) {
        if let Some(ended) = process.exited() {
            let tail = process.log_tail();
            process.stop();
            let said = first_said(tail.lines()).unwrap_or_default();
            return Err(format!("perf could not record its context switches ({ended}): {said}"));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(OffCpuRecorder { process, raw, command })
}

/// Stops the off-CPU recorder and reads what it recorded, or says why there is nothing.
fn finish_off_cpu(recorder: Result<OffCpuRecorder, String>) -> (OffCpu, Stacks) {
    let left_out = |why: String| (OffCpu::LeftOut { why }, Stacks::default());
    let OffCpuRecorder { process, raw, command } = match recorder {
        Ok(recorder) => recorder,
        Err(why) => return left_out(why),
    };
    let tail = process.log_tail();
    process.stop();
    let folded = off_cpu::fold(&raw);
    let _ = std::fs::remove_file(&raw);
    match folded {
        Ok(stacks) if !stacks.is_empty() => {
            let blocked_s = stacks.samples() as f64 / 1e6;
            (OffCpu::Recorded { command, blocked_s }, stacks)
        }
        Ok(_) => left_out("no thread of the tree blocked while perf recorded".into()),
        Err(e) => left_out(format!("{e}: {}", tail.lines().last().unwrap_or_default().trim())),
    }
}

/// A profiler's command words as one line for `sh`, each quoted where it needs it.
fn shell_line(words: &[String]) -> String {
    words.iter().map(|w| record::quoted(w)).collect::<Vec<_>>().join(" ")
}

/// The first line a profiler said among `lines` of its log's tail (past the heading that names the log).
fn first_said<'a>(lines: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    lines.map(str::trim).find(|l| !l.is_empty() && !l.starts_with("last lines of "))
}

/// Attaches `subject`'s profiler for a moment and stops it, keeping nothing, so that one that cannot attach (a
/// process of a runtime it does not read, no right to read it) is found before any load, with its words. What
/// it writes goes to a folder of its own, removed after.
pub fn check_attach(subject: &Subject, stop: &AtomicBool) -> Result<(), String> {
    let dir = std::env::temp_dir().join(format!("shootout-profile-check-{}", std::process::id()));
    let checked = Recording::start_watching(subject, &dir, "check", stop, CHECK_WATCH).map(Recording::discard);
    let _ = std::fs::remove_dir_all(&dir);
    // One line: the profiler's first words, its log being gone with the folder.
    checked.map_err(|why| {
        let mut lines = why.lines();
        let head = lines.next().unwrap_or_default().trim_end_matches(':').to_string();
        first_said(lines).map_or(head.clone(), |said| format!("{head}: {said}"))
    })
}

/// Runs `work` (a load) with `subject` recorded from `after` (the load's warm-up) until `work` returns, into
/// `dir` under `name`, and where its threads blocked too when `off_cpu` says so (recording every context switch
/// adds kernel work to each, which the on-CPU profile then counts under the frame that blocked); returns what
/// `work` returned and what was recorded.
pub fn around<T>(
    subject: &Subject,
    after: Duration,
    dir: &Path,
    name: &str,
    off_cpu: bool,
    stop: &AtomicBool,
    work: impl FnOnce() -> T,
) -> (T, Result<Recorded, String>) {
    let start = || {
        let recording = Recording::start(subject, dir, name, stop)?;
        Ok(if off_cpu { recording.with_off_cpu(subject, name, stop) } else { recording })
    };
    around_with(after, start, Recording::finish, work)
}

/// Runs `work` (a load), with a recording started by `start` once `after` (the load's warm-up) has passed and
/// ended by `finish` when `work` returns, wherever the profiler runs (here, or on a server's host); returns what
/// `work` returned and what was recorded.
pub fn around_with<T, R>(
    after: Duration,
    start: impl FnOnce() -> Result<R, String> + Send,
    finish: impl FnOnce(R) -> Result<Recorded, String> + Send,
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
            let recording = start()?;
            while !done.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(10));
            }
            finish(recording)
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
    /// The processes a profiler that takes one PID is given: each process it reads whose parent it does not read
    /// (the first of the trees when there is none).
    pub roots: Vec<i32>,
    /// The native processes of a tree whose profiler was chosen for its runtime (Passenger's C++ core beside its
    /// Ruby apps, Apache's workers): perf records them beside it, where perf is installed.
    pub native: Vec<i32>,
}

impl Subject {
    /// The whole trees of `pids` (each process and every process it started), to be profiled by `profiler`, or,
    /// given none, by the one that suits the programs they run. A PID not running, or a profiler not installed,
    /// is an error that says so.
    pub fn of(profiler: Option<Profiler>, pids: &[i32]) -> Result<Subject, String> {
        let mut tree: Vec<Member> = Vec::new();
        for pid in pids {
            let members = members(&mut Tree::new(*pid), *pid);
            if !members.iter().any(|m| m.pid == *pid) {
                return Err(format!("no process {pid} is running"));
            }
            tree.extend(members.into_iter().filter(|m| !tree.iter().any(|t| t.pid == m.pid)).collect::<Vec<_>>());
        }
        Subject::of_members(profiler, tree)
    }

    /// A launched server's whole tree as the runner knows it (with the daemonized helpers it has seen, and what
    /// is in its cgroup), rooted at `root`.
    pub fn of_tree(profiler: Option<Profiler>, tree: &mut Tree, root: i32) -> Result<Subject, String> {
        Subject::of_members(profiler, members(tree, root))
    }

    fn of_members(chosen: Option<Profiler>, tree: Vec<Member>) -> Result<Subject, String> {
        let profiler = chosen.unwrap_or_else(|| Profiler::for_programs(tree.iter().map(|m| m.program.as_str())));
        if let Some(missing) = record::missing(profiler) {
            return Err(format!("{missing} ({} installs it)", profiler.install()));
        }
        // jcmd attaches by sending SIGQUIT, which ends a process that is not a JVM: it is never aimed at one.
        if profiler == Profiler::AsyncProfiler && !tree.iter().any(|m| profiler.reads(&m.program)) {
            let pid = tree.first().map(|m| m.pid).unwrap_or_default();
            return Err(format!("async-profiler reads JVMs, and no process of {pid}'s tree is one (java)"));
        }
        let roots = roots(profiler, &tree);
        let native = match chosen {
            None if profiler != Profiler::Perf && record::missing(Profiler::Perf).is_none() => native(profiler, &tree),
            _ => Vec::new(),
        };
        Ok(Subject { profiler, pids: tree.into_iter().map(|m| m.pid).collect(), roots, native })
    }
}

/// A process of a tree to profile.
struct Member {
    pid: i32,
    ppid: i32,
    /// The file name of its executable (`ruby3.1`).
    program: String,
}

/// The processes a profiler that takes one PID is given: each it reads whose parent it does not read, for one
/// that follows the processes it is given start, else each it reads (the first process when there is none), so
/// that every process it reads is one of theirs or a descendant.
fn roots(profiler: Profiler, tree: &[Member]) -> Vec<i32> {
    let read = |pid: i32| tree.iter().any(|m| m.pid == pid && profiler.reads(&m.program));
    // Only a recorder loaded into one process (async-profiler) needs one for each process it reads.
    let each = !profiler.takes_many() && !profiler.follows_children();
    let is_root = |m: &&Member| read(m.pid) && (each || !read(m.ppid));
    let roots: Vec<i32> = tree.iter().filter(is_root).map(|m| m.pid).collect();
    if roots.is_empty() {
        tree.first().map(|m| m.pid).into_iter().collect()
    } else {
        roots
    }
}

/// The processes of `tree` that `profiler` does not read and that do more than start others: not a shell or an
/// init (a server's own `sh -c`, a container's `docker-init`).
fn native(profiler: Profiler, tree: &[Member]) -> Vec<i32> {
    const STARTERS: [&str; 6] = ["sh", "dash", "bash", "env", "docker-init", "tini"];
    let native = |m: &&Member| !profiler.reads(&m.program) && !STARTERS.contains(&m.program.as_str());
    tree.iter().filter(native).map(|m| m.pid).collect()
}

/// The live processes of `tree`, its root `pid` first.
fn members(tree: &mut Tree, pid: i32) -> Vec<Member> {
    let mut members: Vec<Member> = tree
        .members()
        .into_iter()
        .map(|p| {
            let exe = std::fs::read_link(format!("/proc/{}/exe", p.pid)).unwrap_or_default();
            let program = exe.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            Member { pid: p.pid, ppid: p.ppid, program }
        })
        .collect();
    members.sort_by_key(|m| (m.pid != pid, m.pid));
    members
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_one_pid_profiler_gets_each_tree_of_its_runtime_and_perf_the_whole() {
        // Passenger standalone: its Ruby launcher, the C++ core it starts, the Ruby app processes the core
        // spawns, and a worker one of them forked.
        let member = |pid, ppid, program: &str| Member { pid, ppid, program: program.to_string() };
        let tree = [
            member(1, 0, "ruby3.1"),
            member(2, 1, "PassengerAgent"),
            member(3, 2, "ruby3.1"),
            member(4, 2, "ruby3.1"),
            member(5, 3, "ruby3.1"),
        ];
        assert_eq!(roots(Profiler::Rbspy, &tree), [1, 3, 4]);
        assert_eq!(native(Profiler::Rbspy, &tree), [2], "perf records the C++ core beside rbspy");
        assert_eq!(roots(Profiler::Perf, &tree), [1]);
        assert_eq!(roots(Profiler::PySpy, &tree), [1], "none it reads: the first, which will say so");
        // A shell that started a JVM, which started another: async-profiler is loaded into each.
        let jvms = [member(1, 0, "bash"), member(2, 1, "java"), member(3, 2, "java")];
        assert_eq!(roots(Profiler::AsyncProfiler, &jvms), [2, 3]);
        assert_eq!(native(Profiler::AsyncProfiler, &jvms), Vec::<i32>::new(), "a shell that started them is not");
    }
}
