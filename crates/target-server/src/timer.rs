//! [`Clock`]: waits that end when they were asked to, for `/delay/MS` and stalls.
//!
//! tokio's timer counts whole milliseconds and rounds each deadline up to the next tick, and its driver then
//! sleeps in `epoll_wait`, whose timeout is whole milliseconds again: `tokio::time::sleep(2 ms)` ends after about
//! 3.2 ms. A reference server that answers `/delay/2` that late is off by more than the instrument it calibrates.
//!
//! So a server's waits share one `timerfd` (a high-resolution kernel timer, with no timer slack), registered in the
//! runtime's own reactor and always set for the earliest wait. A driver task on the same runtime wakes on it,
//! wakes every wait that has fallen due and sets the timer for the next: a worker thread runs the waiting tasks
//! with no other thread in between, and 10,000 connections waiting at once hold one descriptor, not 10,000.
//! Waking a thread still takes time after the timer fires (tens of microseconds when the CPU was idle; more on
//! a virtual machine), so each wait asks to be woken that much early, and the task yields to the others until
//! its deadline. How much is learned from the wake-ups themselves: the estimate moves a few microseconds towards
//! each observed delay, which settles it on their median. Nothing blocks a worker thread.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::future::poll_fn;
use std::io;
use std::os::fd::{AsFd, AsRawFd, RawFd};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::task::{Poll, Waker};
use std::time::{Duration, Instant};

use nix::sys::time::TimeSpec;
use nix::sys::timerfd::{ClockId, Expiration, TimerFd, TimerFlags, TimerSetTimeFlags};
use tokio::io::unix::AsyncFd;
use tokio::io::Interest;

/// How late a task runs after its timer fires, in nanoseconds: the median of recent wake-ups, for every
/// wait of the process (one machine, one answer; a lost update between threads does no harm).
static WAKE_DELAY_NS: AtomicU64 = AtomicU64::new(50_000);
/// How far the estimate moves towards one observation, at most.
const LEARNING_STEP_NS: u64 = 2_000;
/// The estimate never exceeds this: a wake-up later than that is an outlier (a busy machine), not the norm.
const MOST_WAKE_DELAY_NS: u64 = 500_000;

/// The waits of one server (one runtime), on one kernel timer made by the first wait.
#[derive(Debug, Default)]
pub struct Clock {
    timer: OnceLock<Arc<Timer>>,
}

/// The kernel timer and the waits on it.
#[derive(Debug)]
struct Timer {
    fd: AsyncFd<Fd>,
    waits: Mutex<Waits>,
}

/// The waits not yet woken, earliest first, and when the kernel timer is set to fire.
#[derive(Debug, Default)]
struct Waits {
    due: BinaryHeap<Reverse<Wait>>,
    /// Orders waits of the same instant.
    count: u64,
    set_for: Option<Instant>,
}

/// One task waiting until `at`. A wait whose task has gone (its connection closed) stays until it falls due, and
/// waking it then does nothing.
#[derive(Debug)]
struct Wait {
    at: Instant,
    order: u64,
    waker: Waker,
}

impl PartialEq for Wait {
    fn eq(&self, other: &Wait) -> bool {
        (self.at, self.order) == (other.at, other.order)
    }
}

impl Eq for Wait {}

impl PartialOrd for Wait {
    fn partial_cmp(&self, other: &Wait) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Wait {
    fn cmp(&self, other: &Wait) -> std::cmp::Ordering {
        (self.at, self.order).cmp(&(other.at, other.order))
    }
}

impl Clock {
    /// A clock with no kernel timer yet (the first wait makes it, within the server's runtime).
    pub fn new() -> Clock {
        Clock::default()
    }

    /// Waits `length`: ends within a few microseconds after it, at the median.
    pub async fn sleep(&self, length: Duration) {
        let until = Instant::now() + length;
        let early = Duration::from_nanos(WAKE_DELAY_NS.load(Ordering::Relaxed));
        if let Some(wake_at) = until.checked_sub(early).filter(|&at| at > Instant::now()) {
            match self.timer() {
                Some(timer) => {
                    timer.wait_until(wake_at).await;
                    learn(Instant::now().saturating_duration_since(wake_at));
                }
                None => tokio::time::sleep_until(until.into()).await,
            }
        }
        while Instant::now() < until {
            tokio::task::yield_now().await;
        }
    }

    /// The kernel timer, made (with its driver task) on first use. `None` while none can be had (out of
    /// descriptors): that wait uses tokio's timer, coarse but working, and the next one tries again.
    fn timer(&self) -> Option<&Arc<Timer>> {
        if let Some(timer) = self.timer.get() {
            return Some(timer);
        }
        let timer = Arc::new(Timer::new().ok()?);
        // Of two first waits at once, one timer is kept and driven; the other's is dropped unused.
        if self.timer.set(timer.clone()).is_ok() {
            tokio::spawn(timer.drive());
        }
        self.timer.get()
    }
}

impl Timer {
    fn new() -> io::Result<Timer> {
        let fd = Fd(TimerFd::new(ClockId::CLOCK_MONOTONIC, TimerFlags::TFD_NONBLOCK | TimerFlags::TFD_CLOEXEC)?);
        // SAFETY: `Fd` owns its timerfd, which stays open, and is always the same descriptor, until the `AsyncFd`
        // that owns the `Fd` is dropped.
        let fd = unsafe { AsyncFd::register_with_interest(fd, Interest::READABLE) }?;
        Ok(Timer { fd, waits: Mutex::new(Waits::default()) })
    }

    /// Returns once `at` has come and the driver has woken this task (or at once when `at` has passed).
    async fn wait_until(&self, at: Instant) {
        let mut added = false;
        poll_fn(|cx| {
            if Instant::now() >= at {
                return Poll::Ready(());
            }
            if !added {
                self.add(at, cx.waker().clone());
                added = true;
            }
            Poll::Pending
        })
        .await;
    }

    /// Adds a wait, setting the kernel timer earlier when it is the first to fall due.
    fn add(&self, at: Instant, waker: Waker) {
        let mut waits = self.waits.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        waits.count += 1;
        let order = waits.count;
        waits.due.push(Reverse(Wait { at, order, waker }));
        if waits.set_for.is_none_or(|set| at < set) {
            self.set(at);
            waits.set_for = Some(at);
        }
    }

    /// Sets the kernel timer to fire at `at`.
    fn set(&self, at: Instant) {
        let left = at.saturating_duration_since(Instant::now()).max(Duration::from_nanos(1)); // zero would disarm
                                                                                              // Setting an open timerfd to a valid time does not fail.
        let _ = self.fd.get_ref().0.set(Expiration::OneShot(TimeSpec::from_duration(left)), TimerSetTimeFlags::empty());
    }

    /// The driver: each time the kernel timer fires, wakes the waits that have fallen due and sets the timer for
    /// the next. Runs as long as the runtime.
    async fn drive(self: Arc<Timer>) {
        let mut woken = Vec::new();
        loop {
            let Ok(mut ready) = self.fd.readable().await else { return };
            // Reading the expiry count resets the timer's readiness for the next firing.
            match nix::unistd::read(ready.get_inner().0.as_fd(), &mut [0; 8]) {
                Ok(_) => {}
                Err(nix::errno::Errno::EAGAIN) => {
                    ready.clear_ready();
                    continue;
                }
                Err(_) => return,
            }
            {
                let mut waits = self.waits.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
                let now = Instant::now();
                while waits.due.peek().is_some_and(|Reverse(wait)| wait.at <= now) {
                    woken.extend(waits.due.pop().map(|Reverse(wait)| wait.waker));
                }
                waits.set_for = waits.due.peek().map(|Reverse(wait)| wait.at);
                if let Some(next) = waits.set_for {
                    self.set(next);
                }
            }
            woken.drain(..).for_each(Waker::wake);
        }
    }
}

/// Moves the wake-up estimate towards one observed `delay`.
fn learn(delay: Duration) {
    let estimate = WAKE_DELAY_NS.load(Ordering::Relaxed);
    WAKE_DELAY_NS.store(moved(estimate, delay), Ordering::Relaxed);
}

/// The wake-up `estimate` (ns) moved towards one observed `delay` by at most a step.
fn moved(estimate: u64, delay: Duration) -> u64 {
    let observed = delay.as_nanos().min(u128::from(MOST_WAKE_DELAY_NS)) as u64;
    if observed > estimate {
        estimate + (observed - estimate).min(LEARNING_STEP_NS)
    } else {
        estimate - (estimate - observed).min(LEARNING_STEP_NS)
    }
}

/// A `timerfd` as tokio's reactor takes it.
#[derive(Debug)]
struct Fd(TimerFd);

impl AsRawFd for Fd {
    fn as_raw_fd(&self) -> RawFd {
        self.0.as_fd().as_raw_fd()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_estimate_moves_a_step_at_a_time() {
        // The estimate itself, not the process-wide one, which the other tests' waits move meanwhile.
        let start = 50_000;
        let up = moved(start, Duration::from_secs(1));
        assert_eq!(up, start + LEARNING_STEP_NS);
        assert_eq!(moved(up, Duration::ZERO), start);
        assert_eq!(moved(start, Duration::from_nanos(50_500)), 50_500, "less than a step: all the way");
        assert_eq!(moved(MOST_WAKE_DELAY_NS, Duration::from_secs(5)), MOST_WAKE_DELAY_NS, "never past the most");
    }

    #[test]
    fn many_waits_share_one_descriptor_and_each_ends_on_time() {
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        // Kernel timers open in this process (other tests in it open sockets meanwhile).
        let timers = || {
            let open =
                std::fs::read_dir("/proc/self/fd").unwrap().filter_map(|fd| std::fs::read_link(fd.ok()?.path()).ok());
            open.filter(|target| target.to_string_lossy().contains("timerfd")).count()
        };
        runtime.block_on(async {
            let clock = Arc::new(Clock::new());
            let before = timers();
            // Waits added out of order, some of them earlier than the one the timer is set for.
            let lengths = (0..2000u64).map(|i| Duration::from_micros(20_000 + (i * 7919) % 30_000));
            let waits: Vec<_> = lengths
                .map(|length| {
                    let clock = clock.clone();
                    tokio::spawn(async move {
                        let started = Instant::now();
                        clock.sleep(length).await;
                        (started.elapsed(), length)
                    })
                })
                .collect();
            tokio::time::sleep(Duration::from_millis(10)).await; // every task is waiting by now (the first ends at 20 ms)
            let during = timers();
            for wait in waits {
                let (took, length) = wait.await.unwrap();
                assert!(took >= length, "a wait of {length:?} ended after {took:?}");
                assert!(took < length + Duration::from_millis(500), "a wait of {length:?} took {took:?}");
            }
            assert_eq!(during, before + 1, "2,000 waits at once hold one kernel timer");
        });
    }
}
