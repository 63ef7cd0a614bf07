//! [`DueTimer`]: wakes the worker loop when the next open-model request falls due, to the microsecond.
//!
//! `epoll_wait` only sleeps in whole milliseconds, which would make every send up to a millisecond late and put
//! that error into the corrected latencies. A `timerfd` armed at the due time (absolute, CLOCK_MONOTONIC) and
//! registered in the same poll instance wakes the loop on time. It is re-armed only when the due time changes.

use std::io;
use std::os::fd::{AsFd, AsRawFd};
use std::time::{Duration, Instant};

use mio::unix::SourceFd;
use mio::{Interest, Registry, Token};
use nix::sys::time::TimeSpec;
use nix::sys::timerfd::{ClockId, Expiration, TimerFd, TimerFlags, TimerSetTimeFlags};
use nix::time::clock_gettime;

/// A one-shot timer on CLOCK_MONOTONIC, the clock behind [`Instant`] on Linux.
#[derive(Debug)]
pub struct DueTimer {
    fd: TimerFd,
    armed: Option<Instant>,
    base: Instant,
    base_clock: Duration,
}

impl DueTimer {
    /// A disarmed timer.
    pub fn new() -> io::Result<DueTimer> {
        let fd = TimerFd::new(ClockId::CLOCK_MONOTONIC, TimerFlags::TFD_NONBLOCK | TimerFlags::TFD_CLOEXEC)?;
        let base = Instant::now();
        let base_clock = monotonic_now();
        Ok(DueTimer { fd, armed: None, base, base_clock })
    }

    /// Registers the timer for readability under `token`.
    pub fn register(&self, registry: &Registry, token: Token) -> io::Result<()> {
        registry.register(&mut SourceFd(&self.fd.as_fd().as_raw_fd()), token, Interest::READABLE)
    }

    /// Makes the timer fire at `at` (unless it is already set for that time).
    pub fn arm(&mut self, at: Instant) {
        if self.armed == Some(at) {
            return;
        }
        let clock = self.base_clock + at.saturating_duration_since(self.base);
        let _ = self.fd.set(Expiration::OneShot(TimeSpec::from_duration(clock)), TimerSetTimeFlags::TFD_TIMER_ABSTIME);
        self.armed = Some(at);
    }
}

fn monotonic_now() -> Duration {
    // CLOCK_MONOTONIC is always there; the fallback is never taken.
    clock_gettime(nix::time::ClockId::CLOCK_MONOTONIC).map_or(Duration::ZERO, Duration::from)
}
