//! [`StateSampler`]: where each thread of a process tree is, swept every [`EVERY`] on a thread of its own while a
//! trial runs (thread-state analysis), or less often for a tree so large that a sweep takes longer than
//! [`BUDGET`] of the time between two. Each sweep reads every thread's state (`/proc/PID/task/TID/stat`) and, for
//! one asleep, the system call it waits in (`…/syscall`): a futex is a [lock](Where::Lock) or a wait for work
//! ([`settle_futexes`]), a timed sleep a [sleep](Where::Sleep); a read, a receive, an accept or a poll waits on its
//! descriptors, which are followed to their sockets ([`Sockets`]) to tell a wait for the client from a wait on a
//! backend (a database). The counts are kept per thread and taken by each resource sample for the threads that ran
//! in its interval ([`StateSampler::take`]).
//!
//! What it costs is measured by `bench/thread_states.py` and stated in docs/methodology.md: each sweep reads two
//! small files per thread and follows a descriptor or two for each asleep in a read or a poll.

use std::collections::{HashMap, HashSet};
use std::os::unix::fs::FileExt;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use nix::libc;
use shootout_model::states::StateCounts;

use crate::sampling::serving::Runtime;
use crate::sampling::sockets::{socket_inode, Backends, Peer, Sockets};

/// How often the threads are swept.
pub const EVERY: Duration = Duration::from_millis(20);

/// The most of one CPU the sweeps may take: after a sweep that took `t` of CPU time, the next starts `t / BUDGET`
/// later at least (a server of hundreds of threads, or a socket table of tens of thousands of connections, is
/// swept less often).
pub const BUDGET: f64 = 0.02;

/// An epoll set watching more descriptors than this is an event loop serving clients, and is not followed.
const EPOLL_FOLLOWED: usize = 64;

/// A thread of a runtime that sleeps on a futex ([`Runtime::sleeps_on_futex`]: the JVM, MRI) on one with no more
/// than this left of its timeout is asleep: `Thread.sleep`, `parkNanos`, a timed `wait` and Ruby's `sleep` wait
/// with a deadline, where a contended monitor, lock or GVL waits with none, and a pool's idle worker polls for work
/// with a timeout of a minute.
const NAP_S: f64 = 1.0;

/// Where one thread was at one sweep.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Where {
    /// On a CPU or ready for one.
    Running,
    /// In uninterruptible sleep.
    Disk,
    /// Waiting on a lock.
    Lock,
    /// Waiting on the futex at this address of its process: a lock, or a wait for work, told apart by
    /// [`settle_futexes`] from where the process's other threads are.
    Futex(u64),
    /// In a timed sleep.
    Sleep,
    /// Waiting for a client.
    Client,
    /// Waiting on a backend, by name.
    Backend(String),
    /// Any other wait.
    Idle,
}

/// The counts of one thread since the last [`StateSampler::take`].
type Counts = HashMap<i32, StateCounts>;

/// What the sweeping thread and the sampler share.
#[derive(Debug, Default)]
struct Shared {
    pids: Vec<i32>,
    /// The threads known to keep house ([`StateSampler::keep_house`]): none of them holds what others wait for.
    housekeeping: HashSet<i32>,
    sweeps: u32,
    by_thread: Counts,
}

/// Sweeps a tree's threads until dropped.
#[derive(Debug)]
pub struct StateSampler {
    shared: Arc<Mutex<Shared>>,
    stop: Option<mpsc::Sender<()>>,
    sweeper: Option<JoinHandle<()>>,
}

impl StateSampler {
    /// Starts sweeping the threads of `pids`; `backends` names the services.
    pub fn start(pids: Vec<i32>, backends: Backends) -> StateSampler {
        let root = pids.first().copied().unwrap_or(0);
        let shared = Arc::new(Mutex::new(Shared { pids, ..Shared::default() }));
        let (stop, stopped) = mpsc::channel::<()>();
        let theirs = shared.clone();
        let sweeper = std::thread::Builder::new().name("thread-states".into()).spawn(move || {
            let mut sockets = Sockets::of(root, backends);
            let mut runtimes: HashMap<i32, Runtime> = HashMap::new();
            let mut wait = EVERY;
            while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(wait) {
                let (began, cpu_before) = (std::time::Instant::now(), thread_cpu());
                let (pids, housekeeping) = match theirs.lock() {
                    Ok(shared) => (shared.pids.clone(), shared.housekeeping.clone()),
                    Err(_) => return,
                };
                sockets.follow(&pids);
                let mut found = Vec::new();
                for &pid in &pids {
                    let runtime = *runtimes.entry(pid).or_insert_with(|| Runtime::of_process(pid));
                    found.extend(sweep(pid, runtime, &mut sockets, &housekeeping));
                }
                // The socket table's reads are bounded apart (one per `sockets::REREAD` at most).
                let cost = thread_cpu().saturating_sub(cpu_before).saturating_sub(sockets.take_read_cost());
                wait = EVERY.max(cost.div_f64(BUDGET)).saturating_sub(began.elapsed());
                let Ok(mut shared) = theirs.lock() else { return };
                shared.sweeps += 1;
                for (tid, at) in found {
                    count(shared.by_thread.entry(tid).or_default(), &at);
                }
            }
        });
        StateSampler { shared, stop: Some(stop), sweeper: sweeper.ok() }
    }

    /// Sweeps `pids` from now on (the tree gained or lost a process).
    pub fn follow(&self, pids: Vec<i32>) {
        if let Ok(mut shared) = self.shared.lock() {
            shared.pids = pids;
        }
    }

    /// The threads of the tree that keep house, as the sampler last told them: from the next sweep on, a lock is
    /// not read as held by one of them asleep (a timer thread of the process).
    pub fn keep_house(&self, threads: &HashSet<i32>) {
        if let Ok(mut shared) = self.shared.lock() {
            shared.housekeeping.clone_from(threads);
        }
    }

    /// The counts since the last take of the threads in `serving`, and of the waits that hold a request of those
    /// in `helpers` (a runtime's own threads: [`StateCounts::holding`]), and starts counting anew.
    pub fn take(&self, serving: &HashSet<i32>, helpers: &HashSet<i32>) -> StateCounts {
        let Ok(mut shared) = self.shared.lock() else { return StateCounts::default() };
        let mut sum = StateCounts::default();
        for (tid, counts) in std::mem::take(&mut shared.by_thread) {
            if serving.contains(&tid) {
                sum.add(&counts);
            } else if helpers.contains(&tid) {
                sum.add(&counts.holding());
            }
        }
        sum.sweeps = std::mem::take(&mut shared.sweeps);
        sum
    }
}

impl Drop for StateSampler {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(sweeper) = self.sweeper.take() {
            let _ = sweeper.join();
        }
    }
}

/// The CPU time the calling thread has used so far.
pub(crate) fn thread_cpu() -> Duration {
    nix::time::clock_gettime(nix::time::ClockId::CLOCK_THREAD_CPUTIME_ID).map_or(Duration::ZERO, Duration::from)
}

fn count(counts: &mut StateCounts, at: &Where) {
    match at {
        Where::Running => counts.running += 1,
        Where::Disk => counts.disk += 1,
        Where::Lock | Where::Futex(_) => counts.lock += 1,
        Where::Sleep => counts.sleep += 1,
        Where::Client => counts.client += 1,
        Where::Backend(name) => counts.on_backend(name),
        Where::Idle => counts.idle += 1,
    }
}

/// Where each thread of process `pid`, of `runtime`, is now.
fn sweep(pid: i32, runtime: Runtime, sockets: &mut Sockets, housekeeping: &HashSet<i32>) -> Vec<(i32, Where)> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return Vec::new() };
    let tids: Vec<i32> = tasks.flatten().filter_map(|t| t.file_name().to_str()?.parse().ok()).collect();
    let mut found: Vec<(i32, Where)> =
        tids.into_iter().filter_map(|tid| Some((tid, where_is(pid, tid, runtime, sockets)?))).collect();
    settle_futexes(&mut found, runtime, housekeeping);
    found
}

/// Tells each futex wait among `found`, the threads of one process of `runtime`, a [lock](Where::Lock) or a
/// thread [waiting for work](Where::Idle). Where a runtime's lock is one address its waiters share
/// ([`Runtime::locks_share_an_address`]), a futex wait is a lock's only while another thread waits on the same
/// address and a thread of the process holds something (runs, sleeps, or waits on the disk or a backend; a thread
/// of `housekeeping`, a timer's, holds nothing, however it sleeps): a pool's
/// thread waiting for work on a condition of its own is idle, and so is a pool waiting together on its queue's
/// lock while nothing of the process runs. Elsewhere each waiting thread parks on a futex of its own, whatever
/// it waits for, and every futex wait is a lock's.
fn settle_futexes(found: &mut [(i32, Where)], runtime: Runtime, housekeeping: &HashSet<i32>) {
    let mut waiters: HashMap<u64, u32> = HashMap::new();
    for (_, at) in found.iter() {
        if let Where::Futex(address) = at {
            *waiters.entry(*address).or_default() += 1;
        }
    }
    if waiters.is_empty() {
        return;
    }
    let holding = found.iter().any(|(tid, at)| {
        !housekeeping.contains(tid) && matches!(at, Where::Running | Where::Sleep | Where::Disk | Where::Backend(_))
    });
    for (_, at) in found.iter_mut() {
        if let Where::Futex(address) = at {
            let shared = waiters.get(address).is_some_and(|&n| n >= 2);
            *at = if !runtime.locks_share_an_address() || shared && holding { Where::Lock } else { Where::Idle };
        }
    }
}

/// Where thread `tid` of process `pid`, of `runtime`, is; none when it is gone.
pub fn where_is(pid: i32, tid: i32, runtime: Runtime, sockets: &mut Sockets) -> Option<Where> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/stat")).ok()?;
    let state = stat.rsplit_once(')')?.1.trim_start().chars().next()?;
    Some(match state {
        'R' => Where::Running,
        'D' => Where::Disk,
        'S' => waiting_in(pid, tid, runtime, sockets),
        _ => Where::Idle,
    })
}

/// What an asleep thread waits for, from the system call it is in.
fn waiting_in(pid: i32, tid: i32, runtime: Runtime, sockets: &mut Sockets) -> Where {
    let Ok(text) = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/syscall")) else { return Where::Idle };
    let mut fields = text.split_whitespace();
    let Some(number) = fields.next().and_then(|n| n.parse::<i64>().ok()) else {
        // `running`: it woke between the two reads.
        return Where::Running;
    };
    let args: Vec<u64> =
        fields.take(6).filter_map(|a| u64::from_str_radix(a.trim_start_matches("0x"), 16).ok()).collect();
    let arg = |i: usize| args.get(i).copied().unwrap_or(0);
    match Call::of(number) {
        Call::Futex if runtime.sleeps_on_futex() && futex_left_s(pid, arg(1), arg(3)).is_some_and(|s| s <= NAP_S) => {
            Where::Sleep
        }
        Call::Futex => Where::Futex(arg(0)),
        Call::Sleep => Where::Sleep,
        Call::OnFd => on_fds(pid, &[arg(0) as i64], sockets),
        Call::Poll => on_fds(pid, &polled(pid, arg(0), arg(1)), sockets),
        Call::Select => on_fds(pid, &selected(pid, arg(0), arg(1)), sockets),
        Call::Epoll => match epoll_set(pid, arg(0) as i64) {
            Some(fds) => on_fds(pid, &fds, sockets),
            None => Where::Client,
        },
        Call::Other => Where::Idle,
    }
}

/// The system calls a sweep tells apart.
enum Call {
    Futex,
    Sleep,
    OnFd,
    Poll,
    Select,
    Epoll,
    Other,
}

impl Call {
    fn of(number: i64) -> Call {
        match number {
            libc::SYS_futex | libc::SYS_futex_waitv => Call::Futex,
            libc::SYS_nanosleep | libc::SYS_clock_nanosleep => Call::Sleep,
            libc::SYS_read
            | libc::SYS_readv
            | libc::SYS_recvfrom
            | libc::SYS_recvmsg
            | libc::SYS_recvmmsg
            | libc::SYS_accept
            | libc::SYS_accept4 => Call::OnFd,
            libc::SYS_ppoll => Call::Poll,
            libc::SYS_pselect6 => Call::Select,
            libc::SYS_epoll_pwait | libc::SYS_epoll_pwait2 => Call::Epoll,
            #[cfg(target_arch = "x86_64")]
            libc::SYS_poll => Call::Poll,
            #[cfg(target_arch = "x86_64")]
            libc::SYS_select => Call::Select,
            #[cfg(target_arch = "x86_64")]
            libc::SYS_epoll_wait => Call::Epoll,
            _ => Call::Other,
        }
    }
}

/// A wait on `fds`: on a backend when any is one, else for the client when any socket is the client's, else idle
/// (pipes, files, the tree's own Unix sockets). An epoll instance among them stands for what it watches: an event
/// loop that polls its epoll descriptor (EventMachine, under Thin, selects on it) waits on the set (for the client
/// when the set is too large to follow, as [`Call::Epoll`] is read).
fn on_fds(pid: i32, fds: &[i64], sockets: &mut Sockets) -> Where {
    let mut watched = Vec::with_capacity(fds.len());
    for &fd in fds {
        if !is_epoll(pid, fd) {
            watched.push(fd);
            continue;
        }
        match epoll_set(pid, fd) {
            Some(set) => watched.extend(set),
            None => return Where::Client,
        }
    }
    let peers: Vec<Peer> = watched.iter().filter_map(|&fd| sockets.peer(socket_inode(pid, fd)?)).collect();
    if let Some(Peer::Backend(name)) = peers.iter().find(|p| matches!(p, Peer::Backend(_))) {
        Where::Backend(name.clone())
    } else if peers.contains(&Peer::Client) {
        Where::Client
    } else {
        Where::Idle
    }
}

/// What is left of the timeout of a futex wait (operation `op`, timeout at `address` in `pid`'s memory), seconds;
/// none for a wait without one. `FUTEX_WAIT` gives it from now; `FUTEX_WAIT_BITSET`, what `pthread_cond_timedwait`
/// uses, as a deadline on the monotonic clock, or on the real-time clock with `FUTEX_CLOCK_REALTIME`.
fn futex_left_s(pid: i32, op: u64, address: u64) -> Option<f64> {
    const WAIT: u64 = 0;
    const WAIT_BITSET: u64 = 9;
    const CLOCK_REALTIME: u64 = 256;
    if address == 0 {
        return None;
    }
    let bytes = read_memory(pid, address, 16);
    let field = |at: usize| bytes.get(at..at + 8).and_then(|b| Some(i64::from_ne_bytes(b.try_into().ok()?)));
    let timeout = field(0)? as f64 + field(8)? as f64 / 1e9;
    match op & 127 {
        WAIT => Some(timeout),
        WAIT_BITSET => {
            let clock = if op & CLOCK_REALTIME != 0 {
                nix::time::ClockId::CLOCK_REALTIME
            } else {
                nix::time::ClockId::CLOCK_MONOTONIC
            };
            let now = nix::time::clock_gettime(clock).ok()?;
            Some(timeout - (now.tv_sec() as f64 + now.tv_nsec() as f64 / 1e9))
        }
        _ => None,
    }
}

/// The descriptors of a `poll` array of `count` entries at `address` in `pid`'s memory (the first 16).
fn polled(pid: i32, address: u64, count: u64) -> Vec<i64> {
    let entries = count.min(16) as usize;
    // struct pollfd { int fd; short events; short revents; }
    let bytes = read_memory(pid, address, entries * 8);
    bytes
        .chunks_exact(8)
        .map(|e| i64::from(i32::from_ne_bytes([e[0], e[1], e[2], e[3]])))
        .filter(|&fd| fd >= 0)
        .collect()
}

/// The descriptors of a `select` read set of `count` bits at `address` in `pid`'s memory.
fn selected(pid: i32, count: u64, address: u64) -> Vec<i64> {
    let bytes = read_memory(pid, address, (count.min(1024) as usize).div_ceil(8));
    let bits = bytes
        .iter()
        .enumerate()
        .flat_map(|(i, byte)| (0..8).filter(move |b| byte & (1 << b) != 0).map(move |b| i * 8 + b));
    bits.map(|fd| fd as i64).collect()
}

/// Whether descriptor `fd` of `pid` is an epoll instance.
fn is_epoll(pid: i32, fd: i64) -> bool {
    std::fs::read_link(format!("/proc/{pid}/fd/{fd}"))
        .is_ok_and(|target| target.as_os_str() == "anon_inode:[eventpoll]")
}

/// The descriptors an epoll instance `epfd` of `pid` watches; none when there are more than [`EPOLL_FOLLOWED`].
fn epoll_set(pid: i32, epfd: i64) -> Option<Vec<i64>> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/fdinfo/{epfd}")).ok()?;
    let fds: Vec<i64> =
        text.lines().filter_map(|l| l.strip_prefix("tfd:")?.split_whitespace().next()?.parse().ok()).collect();
    (fds.len() <= EPOLL_FOLLOWED).then_some(fds)
}

/// `length` bytes at `address` of `pid`'s memory; empty where it cannot be read.
fn read_memory(pid: i32, address: u64, length: usize) -> Vec<u8> {
    let mut bytes = vec![0u8; length];
    let Ok(memory) = std::fs::File::open(format!("/proc/{pid}/mem")) else { return Vec::new() };
    match memory.read_at(&mut bytes, address) {
        Ok(n) if n == length => bytes,
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::net::{TcpListener, TcpStream};
    use std::sync::atomic::{AtomicBool, Ordering};

    /// Runs `body` on a thread of its own, and returns its thread id once it has started.
    fn spawn(body: impl FnOnce() + Send + 'static) -> i32 {
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            tx.send(nix::unistd::gettid().as_raw()).unwrap();
            body();
        });
        rx.recv().unwrap()
    }

    #[test]
    fn each_thread_is_found_where_it_waits() {
        let me = std::process::id() as i32;
        let done = Arc::new(AtomicBool::new(false));
        let lock = Arc::new(Mutex::new(()));
        let held = lock.lock().unwrap();
        let (theirs, also_theirs) = (lock.clone(), lock.clone());
        let on_lock = spawn(move || drop(theirs.lock()));
        let also_on_lock = spawn(move || drop(also_theirs.lock()));
        let sleeping = spawn(|| std::thread::sleep(Duration::from_secs(3)));
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let accepting = spawn(move || drop(listener.accept()));
        let backend = TcpListener::bind("127.0.0.1:0").unwrap();
        let backend_port = backend.local_addr().unwrap().port();
        let mut to_backend = TcpStream::connect(("127.0.0.1", backend_port)).unwrap();
        let on_backend = spawn(move || drop(to_backend.read(&mut [0u8; 1])));
        let spin = done.clone();
        let spinning = spawn(move || while !spin.load(Ordering::Relaxed) {});
        std::thread::sleep(Duration::from_millis(300));
        let mut sockets = Sockets::of(me, Backends::by_port(vec![(backend_port, "db".into())]));
        let mut at = |tid| where_is(me, tid, Runtime::Other, &mut sockets);
        assert!(matches!(at(on_lock), Some(Where::Futex(_))));
        assert_eq!(at(sleeping), Some(Where::Sleep));
        assert_eq!(at(accepting), Some(Where::Client));
        assert_eq!(at(on_backend), Some(Where::Backend("db".into())));
        assert!(matches!(at(spinning), Some(Where::Running)), "a spinning thread runs or waits for a CPU");
        assert_eq!(at(i32::MAX), None, "no such thread");
        // The sampler counts them too, keeping only the threads that ran.
        let sampler = StateSampler::start(vec![me], Backends::default());
        std::thread::sleep(EVERY * 20);
        let counts = sampler.take(&HashSet::from([on_lock, spinning]), &HashSet::new());
        assert!(also_on_lock > 0);
        assert!(counts.sweeps >= 3, "{counts:?}");
        assert_eq!(counts.lock, counts.sweeps, "two threads on one lock while another runs: {counts:?}");
        assert!(counts.running >= counts.sweeps - 1, "{counts:?}");
        assert_eq!((counts.sleep, counts.client), (0, 0), "threads that did not run are left out: {counts:?}");
        done.store(true, Ordering::Relaxed);
        drop(held);
        drop(TcpStream::connect(("127.0.0.1", port)));
        drop(backend);
    }

    #[test]
    fn a_jvm_thread_on_a_futex_with_a_short_deadline_sleeps_and_one_without_waits_on_a_lock() {
        // Rust's timed condition waits, as the JVM's, put a deadline on the futex (FUTEX_WAIT_BITSET, monotonic).
        let me = std::process::id() as i32;
        let pair = Arc::new((Mutex::new(false), std::sync::Condvar::new()));
        let waiter = |timeout: Option<Duration>| {
            let pair = pair.clone();
            spawn(move || {
                let (flag, woken) = &*pair;
                let guard = flag.lock().unwrap();
                match timeout {
                    Some(t) => drop(woken.wait_timeout_while(guard, t, |done| !*done)),
                    None => drop(woken.wait_while(guard, |done| !*done)),
                }
            })
        };
        let (napping, polling, parked) =
            (waiter(Some(Duration::from_secs(5))), waiter(Some(Duration::from_secs(60))), waiter(None));
        std::thread::sleep(Duration::from_millis(300));
        let mut sockets = Sockets::of(me, Backends::default());
        let mut at = |tid, runtime| where_is(me, tid, runtime, &mut sockets);
        // Five seconds is no nap; what is left of it is read, so a thread 4.7 s from its deadline waits on a lock.
        let on_futex = |at: Option<Where>| matches!(at, Some(Where::Futex(_)));
        assert!(on_futex(at(napping, Runtime::Jvm)));
        assert!(on_futex(at(polling, Runtime::Jvm)), "a pool's idle poll for work");
        assert!(on_futex(at(parked, Runtime::Jvm)), "no deadline");
        let short = waiter(Some(Duration::from_millis(900)));
        std::thread::sleep(Duration::from_millis(100));
        assert_eq!(at(short, Runtime::Jvm), Some(Where::Sleep), "Thread.sleep's way");
        assert!(on_futex(at(short, Runtime::Other)), "elsewhere a timed wait is a condition's (a GIL's)");
        *pair.0.lock().unwrap() = true;
        pair.1.notify_all();
    }

    #[test]
    fn a_futex_wait_is_a_locks_where_it_shares_its_address_while_the_process_holds_a_request() {
        let settled = |found: &[Where], runtime| {
            let mut found: Vec<(i32, Where)> = found.iter().cloned().enumerate().map(|(i, w)| (i as i32, w)).collect();
            settle_futexes(&mut found, runtime, &HashSet::new());
            found.into_iter().map(|(_, at)| at).collect::<Vec<_>>()
        };
        let (lock, own, other) = (Where::Futex(0x10), Where::Futex(0x20), Where::Futex(0x30));
        // Seven threads on one lock while its holder sleeps; a spare thread waits for work on a condition of its own.
        let mut pool = vec![Where::Sleep, own.clone(), other];
        pool.extend(std::iter::repeat_n(lock.clone(), 7));
        let read = settled(&pool, Runtime::Python);
        assert_eq!(read.iter().filter(|at| **at == Where::Lock).count(), 7, "{read:?}");
        assert_eq!(read.iter().filter(|at| **at == Where::Idle).count(), 2, "{read:?}");
        // A pool waiting together on its queue's lock, nothing of the process running: waiting for work.
        let idle = settled(&[Where::Client, lock.clone(), lock.clone(), lock.clone()], Runtime::Python);
        assert!(idle[1..].iter().all(|at| *at == Where::Idle), "{idle:?}");
        // The same pool beside a timer thread asleep between its ticks (thread 0, known to keep house): still idle.
        let mut beside_a_timer: Vec<(i32, Where)> = [Where::Sleep, lock.clone(), lock.clone(), lock.clone()]
            .into_iter()
            .enumerate()
            .map(|(i, w)| (i as i32, w))
            .collect();
        settle_futexes(&mut beside_a_timer, Runtime::Python, &HashSet::from([0]));
        assert!(beside_a_timer[1..].iter().all(|(_, at)| *at == Where::Idle), "{beside_a_timer:?}");
        // The JVM parks each thread on a futex of its own: every wait is a lock's, as far as the sweep can tell.
        let jvm = settled(&[Where::Client, own.clone()], Runtime::Jvm);
        assert_eq!(jvm[1], Where::Lock);
    }

    #[test]
    fn an_event_loop_polling_its_epoll_descriptor_waits_on_what_it_watches() {
        use std::os::fd::AsRawFd;
        let me = std::process::id() as i32;
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap();
        // SAFETY: plain system calls on descriptors this test owns; the poll's array lives on its thread's stack.
        let epfd = unsafe { libc::epoll_create1(0) };
        assert!(epfd >= 0);
        let mut event = libc::epoll_event { events: libc::EPOLLIN as u32, u64: 0 };
        assert_eq!(unsafe { libc::epoll_ctl(epfd, libc::EPOLL_CTL_ADD, listener.as_raw_fd(), &mut event) }, 0);
        // As EventMachine does: wait for the epoll descriptor to be readable (3 s at most), then ask it what is.
        let polling = spawn(move || {
            let mut fds = [libc::pollfd { fd: epfd, events: libc::POLLIN, revents: 0 }];
            unsafe { libc::poll(fds.as_mut_ptr(), 1, 3000) };
        });
        std::thread::sleep(Duration::from_millis(300));
        let mut sockets = Sockets::of(me, Backends::default());
        let found = where_is(me, polling, Runtime::Other, &mut sockets);
        assert_eq!(found, Some(Where::Client), "the set holds a listening socket");
        drop(TcpStream::connect(address));
        std::thread::sleep(Duration::from_millis(100));
        unsafe { libc::close(epfd) };
    }
}
