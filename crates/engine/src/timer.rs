//! [`DueTimer`]: wakes the worker loop when the next open-model request falls due, to the microsecond.
//!
//! `epoll_wait` only sleeps in whole milliseconds, which would make every send up to a millisecond late and put
//! that error into the corrected latencies. A `timerfd` armed at the due time (absolute, CLOCK_MONOTONIC) and
//! registered in the same poll instance wakes the loop on time. It is re-armed only when the due time changes.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::{Duration, Instant};

use mio::unix::SourceFd;
use mio::{Interest, Registry, Token};

/// A one-shot timer on CLOCK_MONOTONIC, the clock behind [`Instant`] on Linux.
#[derive(Debug)]
pub struct DueTimer {
    fd: OwnedFd,
    armed: Option<Instant>,
    base: Instant,
    base_clock: Duration,
}

impl DueTimer {
    /// A disarmed timer.
    pub fn new() -> io::Result<DueTimer> {
        // SAFETY: plain syscall; the returned descriptor is checked and then owned.
        let fd = unsafe { libc::timerfd_create(libc::CLOCK_MONOTONIC, libc::TFD_NONBLOCK | libc::TFD_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: fd is a fresh descriptor nobody else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let base = Instant::now();
        let base_clock = monotonic_now();
        Ok(DueTimer { fd, armed: None, base, base_clock })
    }

    /// Registers the timer for readability under `token`.
    pub fn register(&self, registry: &Registry, token: Token) -> io::Result<()> {
        registry.register(&mut SourceFd(&self.fd.as_raw_fd()), token, Interest::READABLE)
    }

    /// Makes the timer fire at `at` (unless it is already set for that time).
    pub fn arm(&mut self, at: Instant) {
        if self.armed == Some(at) {
            return;
        }
        let clock = self.base_clock + at.saturating_duration_since(self.base);
        let spec = libc::itimerspec {
            it_interval: libc::timespec { tv_sec: 0, tv_nsec: 0 },
            it_value: libc::timespec { tv_sec: clock.as_secs() as libc::time_t, tv_nsec: clock.subsec_nanos() as _ },
        };
        // SAFETY: our own timerfd, a valid itimerspec, no old value wanted.
        unsafe { libc::timerfd_settime(self.fd.as_raw_fd(), libc::TFD_TIMER_ABSTIME, &spec, std::ptr::null_mut()) };
        self.armed = Some(at);
    }
}

fn monotonic_now() -> Duration {
    let mut now = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes into our struct.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut now) };
    Duration::new(now.tv_sec as u64, now.tv_nsec as u32)
}
