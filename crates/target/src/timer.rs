//! [`Timer`]: waits that end when they were asked to, for `/delay/MS` and stalls.
//!
//! tokio's timer counts whole milliseconds and rounds each deadline up to the next tick, and its driver then
//! sleeps in `epoll_wait`, whose timeout is whole milliseconds again: `tokio::time::sleep(2 ms)` ends after about
//! 3.2 ms. A reference server that answers `/delay/2` that late is off by more than the instrument it calibrates.
//!
//! So each connection that waits gets a `timerfd` (a high-resolution kernel timer, with no timer slack), registered
//! in the runtime's own reactor: the worker thread wakes on it directly, with no other thread in between. Waking
//! a thread still takes time after the timer fires (tens of microseconds when the CPU was idle; more on a
//! virtual machine), so the timer is set that much early, and the task yields to the others until the deadline.
//! How much is learned from the wake-ups themselves: the estimate moves a few microseconds towards each observed
//! delay, which settles it on their median. Nothing blocks a worker thread. A wait costs one `timerfd_settime`
//! and one `read`; the first one on a connection also creates the timer and registers it.

use std::io;
use std::os::fd::{AsFd, AsRawFd, RawFd};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use nix::sys::time::TimeSpec;
use nix::sys::timerfd::{ClockId, Expiration, TimerFd, TimerFlags, TimerSetTimeFlags};
use tokio::io::unix::AsyncFd;
use tokio::io::Interest;

/// How late a task runs after its timer fires, in nanoseconds: the median of recent wake-ups, for every
/// connection of the process (one machine, one answer; a lost update between threads does no harm).
static WAKE_DELAY_NS: AtomicU64 = AtomicU64::new(50_000);
/// How far the estimate moves towards one observation, at most.
const LEARNING_STEP_NS: u64 = 2_000;
/// The estimate never exceeds this: a wake-up later than that is an outlier (a busy machine), not the norm.
const MOST_WAKE_DELAY_NS: u64 = 500_000;

/// One connection's timer, created by its first wait.
#[derive(Debug, Default)]
pub struct Timer {
    fd: Option<AsyncFd<Fd>>,
}

impl Timer {
    /// A timer with no kernel timer yet.
    pub fn new() -> Timer {
        Timer::default()
    }

    /// Waits `length`: ends within a few microseconds after it, at the median.
    pub async fn sleep(&mut self, length: Duration) {
        let until = Instant::now() + length;
        let early = Duration::from_nanos(WAKE_DELAY_NS.load(Ordering::Relaxed));
        if let Some(wake_at) = until.checked_sub(early).filter(|&at| at > Instant::now()) {
            match self.wait_until(wake_at).await {
                Ok(()) => learn(Instant::now().saturating_duration_since(wake_at)),
                // No timer to be had (out of descriptors): tokio's, coarse but working.
                Err(_) => tokio::time::sleep_until(until.into()).await,
            }
        }
        while Instant::now() < until {
            tokio::task::yield_now().await;
        }
    }

    /// Sleeps on the kernel timer until `at` (which is in the future).
    async fn wait_until(&mut self, at: Instant) -> io::Result<()> {
        let fd = match &mut self.fd {
            Some(fd) => fd,
            empty => {
                let timer =
                    Fd(TimerFd::new(ClockId::CLOCK_MONOTONIC, TimerFlags::TFD_NONBLOCK | TimerFlags::TFD_CLOEXEC)?);
                // SAFETY: `Fd` owns its timerfd, which stays open, and is always the same descriptor, until the
                // `AsyncFd` that owns the `Fd` is dropped.
                empty.insert(unsafe { AsyncFd::register_with_interest(timer, Interest::READABLE) }?)
            }
        };
        let left = at.saturating_duration_since(Instant::now()).max(Duration::from_nanos(1)); // zero would disarm
        fd.get_ref().0.set(Expiration::OneShot(TimeSpec::from_duration(left)), TimerSetTimeFlags::empty())?;
        loop {
            let mut ready = fd.readable().await?;
            // Reading the expiry count resets the timer's readiness for the next wait.
            match nix::unistd::read(ready.get_inner().0.as_fd(), &mut [0; 8]) {
                Ok(_) => return Ok(()),
                Err(nix::errno::Errno::EAGAIN) => ready.clear_ready(),
                Err(e) => return Err(e.into()),
            }
        }
    }
}

/// Moves the wake-up estimate towards one observed `delay`.
fn learn(delay: Duration) {
    let observed = delay.as_nanos().min(u128::from(MOST_WAKE_DELAY_NS)) as u64;
    let estimate = WAKE_DELAY_NS.load(Ordering::Relaxed);
    let moved = if observed > estimate {
        estimate + (observed - estimate).min(LEARNING_STEP_NS)
    } else {
        estimate - (estimate - observed).min(LEARNING_STEP_NS)
    };
    WAKE_DELAY_NS.store(moved, Ordering::Relaxed);
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
        let start = WAKE_DELAY_NS.load(Ordering::Relaxed);
        learn(Duration::from_secs(1));
        assert_eq!(WAKE_DELAY_NS.load(Ordering::Relaxed), start + LEARNING_STEP_NS);
        learn(Duration::ZERO);
        assert_eq!(WAKE_DELAY_NS.load(Ordering::Relaxed), start);
    }
}
