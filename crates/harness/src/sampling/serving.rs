//! Which of a server's threads carry its requests, and which keep house: a runtime's timer, a statistics reporter,
//! a watchdog, a pool's reaper wake a few times a second whatever the load, and their waits (a timed futex, a
//! sleep) say nothing of what held the requests back. Counted as workers, two timer threads beside two busy
//! workers read "workers: all 4 busy"; counted in the shares, they dilute every wait of the threads that serve.
//!
//! A thread is housekeeping when, since the trial's sampling began (a second at least), it woke fewer than
//! [`HOUSEKEEPING_WAKES`] times a second, and at most a tenth as often as the tree's busiest thread, and used less
//! than [`HOUSEKEEPING_CPU`] of a CPU. Wakes are the times the kernel put the thread on a CPU
//! (`/proc/PID/task/TID/schedstat`'s third field). A thread that serves wakes for each request it takes or each
//! batch of events (50 times a second for a worker of 20 ms requests); a server so lightly loaded that its workers
//! wake as rarely as its timers keeps them all.
//!
//! A runtime's own helpers are told apart by what the runtime says of them ([`Runtime::helper`]): Node.js names
//! every thread `node`, but its event loop is the thread whose id is the process's, and the others are V8's
//! platform workers (the garbage collector's, the compiler's) and libuv's pool, parked on a futex between tasks
//! that wake them with every collection; the JVM names its collector, compiler and service threads; Puma names the
//! threads of its pool apart from its acceptor, reactor and reaper. A helper's waits on a futex or asleep are left
//! out like a housekeeping thread's; its waits on the disk or a backend (libuv's pool reading a file) still count,
//! and so does its CPU.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use shootout_model::states::runtime;

/// Wakes a second under which a thread can be housekeeping.
pub const HOUSEKEEPING_WAKES: f64 = 5.0;

/// Share of one CPU under which a thread can be housekeeping.
pub const HOUSEKEEPING_CPU: f64 = 0.01;

/// The shortest time over which a thread's wakes are counted: a timer that woke once in the first 100 ms woke
/// once in a second so far, not ten times a second.
const HORIZON_S: f64 = 1.0;

/// What one thread did since the sampling began.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    /// Nanoseconds on a CPU.
    pub on_cpu_ns: u64,
    /// Times the kernel put it on a CPU.
    pub runs: u64,
}

/// The housekeeping threads among `threads` (each thread's tally since the sampling began, `elapsed_s` ago).
pub fn housekeeping(threads: &HashMap<i32, Tally>, elapsed_s: f64) -> HashSet<i32> {
    let over = elapsed_s.max(HORIZON_S);
    let wakes = |t: &Tally| t.runs as f64 / over;
    let busiest = threads.values().map(wakes).fold(0.0, f64::max);
    threads
        .iter()
        .filter(|(_, t)| {
            let woke = wakes(t);
            woke < HOUSEKEEPING_WAKES && woke <= busiest / 10.0 && (t.on_cpu_ns as f64 / 1e9) / over < HOUSEKEEPING_CPU
        })
        .map(|(&tid, _)| tid)
        .collect()
}

/// The runtimes whose own threads are known by what they say of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Runtime {
    /// Node.js (`node`, `nodejs`).
    Node,
    /// A Java virtual machine (`java`).
    Jvm,
    /// Ruby's own interpreter, MRI (`ruby`, `ruby3.1`): Puma, Unicorn, Thin, Passenger's Ruby apps.
    Ruby,
    /// CPython (`python3`, `python3.11`): gunicorn, uvicorn, Django's and Flask's servers.
    Python,
    /// Any other program: only wakes and CPU tell its threads apart.
    Other,
}

/// The JVM's own threads, by the start of the name it gives them (a thread's name is cut to 15 bytes): HotSpot's
/// collectors (G1, parallel, serial), compilers and service threads.
const JVM_HELPERS: [&str; 15] = [
    "GC Thread#",
    "G1 ",
    "VM Thread",
    "VM Periodic",
    "C1 CompilerThre",
    "C2 CompilerThre",
    "Signal Dispatch",
    "Finalizer",
    "Reference Handl",
    "Common-Cleaner",
    "Notification Th",
    "Service Thread",
    "Monitor Deflati",
    "Attach Listener",
    "Sweeper thread",
];

/// The JVM's threads that collect its garbage, by the start of their names.
const JVM_COLLECTORS: [&str; 3] = ["GC Thread#", "G1 ", "VM Thread"];

impl Runtime {
    /// The runtime of a process whose executable is `exe`.
    pub fn of(exe: &Path) -> Runtime {
        match exe.file_name().and_then(|n| n.to_str()) {
            Some("node" | "nodejs") => Runtime::Node,
            Some("java") => Runtime::Jvm,
            Some(name) if versioned(name, "ruby") => Runtime::Ruby,
            Some(name) if versioned(name, "python") => Runtime::Python,
            _ => Runtime::Other,
        }
    }

    /// The runtime of process `pid`, from its executable (`/proc/PID/exe`); [`Runtime::Other`] where it cannot be
    /// read.
    pub fn of_process(pid: i32) -> Runtime {
        std::fs::read_link(format!("/proc/{pid}/exe")).map_or(Runtime::Other, |exe| Runtime::of(&exe))
    }

    /// Whether a thread named `name` collects the runtime's garbage: the JVM's collector threads (G1's and the
    /// parallel collector's), and its VM thread, where the serial collector a JVM picks on one CPU does its work.
    /// Node's collector works on its event loop as much as on V8's workers, and is told only by a profile.
    pub fn collector(self, name: &str) -> bool {
        self == Runtime::Jvm && JVM_COLLECTORS.iter().any(|prefix| name.starts_with(prefix))
    }

    /// Whether thread `tid` of process `pid`, named `name`, is one of the runtime's own helpers.
    pub fn helper(self, pid: i32, tid: i32, name: &str) -> bool {
        match self {
            Runtime::Node => tid != pid,
            Runtime::Jvm => JVM_HELPERS.iter().any(|prefix| name.starts_with(prefix)),
            // Puma names its pool's threads `puma srv tp 001`…; its acceptor (`puma srv`, which waits for a free
            // thread of the pool when all are busy), reactor and reaper are its own.
            Runtime::Ruby => name.starts_with("puma") && !name.starts_with("puma srv tp"),
            Runtime::Python | Runtime::Other => false,
        }
    }

    /// How reports name it (`node`, `jvm`, `ruby`, `python`; empty for any other program).
    pub fn name(self) -> &'static str {
        match self {
            Runtime::Node => runtime::NODE,
            Runtime::Jvm => runtime::JVM,
            Runtime::Ruby => runtime::RUBY,
            Runtime::Python => runtime::PYTHON,
            Runtime::Other => "",
        }
    }

    /// Whether the threads that wait for one of its locks wait on one address, the lock's own futex (CPython's
    /// locks and GIL, glibc's mutexes and conditions), where a thread waiting for work waits on one of its own (a
    /// `threading.Condition`'s waiter lock, a Rust or C pool's parking). The JVM and MRI park each waiting thread on
    /// a futex of its own, whatever it waits for.
    pub fn locks_share_an_address(self) -> bool {
        matches!(self, Runtime::Python | Runtime::Other)
    }

    /// Whether its threads sleep on a futex with a deadline: the JVM's `Thread.sleep` and `parkNanos`, MRI's
    /// `sleep` (a condition wait with a timeout), where a contended lock, a monitor or Ruby's GVL waits with none.
    /// Elsewhere a deadline is a condition's as often (CPython's GIL waits 5 ms at a time).
    pub fn sleeps_on_futex(self) -> bool {
        matches!(self, Runtime::Jvm | Runtime::Ruby)
    }
}

/// Whether `name` is `program` or `program` and a version (`ruby3.1`, `python3`).
fn versioned(name: &str, program: &str) -> bool {
    name.strip_prefix(program).is_some_and(|version| version.chars().all(|c| c.is_ascii_digit() || c == '.'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tally(runs: u64, on_cpu_ms: u64) -> Tally {
        Tally { on_cpu_ns: on_cpu_ms * 1_000_000, runs }
    }

    #[test]
    fn timers_beside_busy_workers_keep_house_and_the_workers_serve() {
        // Two workers of 20 ms requests over 4 s (50 wakes a second each), a timer of 0.5 s, one of 1 s.
        let threads = HashMap::from([(1, tally(200, 40)), (2, tally(196, 38)), (3, tally(8, 1)), (4, tally(4, 0))]);
        assert_eq!(housekeeping(&threads, 4.0), HashSet::from([3, 4]));
    }

    #[test]
    fn a_quiet_server_keeps_every_thread_and_a_busy_rare_thread_serves() {
        // One request a second: its worker wakes as rarely as the timer beside it, and neither is left out.
        let quiet = HashMap::from([(1, tally(6, 5)), (2, tally(3, 0))]);
        assert!(housekeeping(&quiet, 3.0).is_empty());
        // A collector that wakes twice a second but runs 100 ms each time is work, not housekeeping.
        let collector = HashMap::from([(1, tally(400, 900)), (2, tally(8, 800))]);
        assert!(housekeeping(&collector, 4.0).is_empty());
    }

    #[test]
    fn node_serves_on_its_event_loop_and_the_jvm_names_its_own_threads() {
        let node = Runtime::of(Path::new("/usr/bin/node"));
        assert_eq!(node, Runtime::Node);
        assert!(!node.helper(100, 100, "node"), "the event loop");
        assert!(node.helper(100, 101, "node"), "a V8 worker");
        let jvm = Runtime::of(Path::new("/usr/lib/jvm/java-17-openjdk-amd64/bin/java"));
        assert_eq!(jvm, Runtime::Jvm);
        assert!(jvm.helper(7, 9, "GC Thread#0") && jvm.helper(7, 10, "C2 CompilerThre"));
        assert!(!jvm.helper(7, 20, "qtp1234-17") && !jvm.helper(7, 21, "http-nio-8080-e"), "Jetty's, Tomcat's workers");
        assert!(jvm.collector("GC Thread#3") && jvm.collector("VM Thread") && !jvm.collector("C2 CompilerThre"));
        assert!(!node.collector("node"), "Node's collector is not told by its threads");
        assert_eq!(Runtime::of(Path::new("/usr/bin/ruby3.1")), Runtime::Ruby);
        assert_eq!(Runtime::of(Path::new("/usr/bin/rubyish")), Runtime::Other);
        assert_eq!(Runtime::of(Path::new("/usr/bin/python3.11")), Runtime::Python);
        assert_eq!(Runtime::Python.name(), "python");
        assert!(Runtime::Ruby.sleeps_on_futex() && !Runtime::Other.sleeps_on_futex());
        assert!(Runtime::Python.locks_share_an_address() && !Runtime::Jvm.locks_share_an_address());
        assert!(Runtime::Ruby.helper(5, 9, "puma srv") && Runtime::Ruby.helper(5, 10, "puma reactor"));
        assert!(!Runtime::Ruby.helper(5, 11, "puma srv tp 001"), "a thread of Puma's pool");
        assert!(!Runtime::Ruby.helper(5, 12, "ruby"), "an app's thread");
        assert!(!Runtime::Other.helper(5, 6, "GC Thread#0"));
    }

    #[test]
    fn a_wake_early_in_the_sampling_is_counted_over_a_second() {
        // 100 ms in: the worker has run 12 times, the timer once (ten a second, were it counted over 100 ms).
        let early = HashMap::from([(1, tally(12, 2)), (2, tally(1, 0))]);
        assert_eq!(housekeeping(&early, 0.1), HashSet::from([2]));
    }
}
