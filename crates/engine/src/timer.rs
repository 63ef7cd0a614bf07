//! Waking the worker loop when the open model's next request falls due, asking the kernel for that time to the
//! nanosecond, without a system call per request.
//!
//! `epoll_wait` sleeps in whole milliseconds, which would make every send up to a millisecond late and put that
//! error into the corrected latencies. A timerfd re-armed at each due time is precise but dear: every arm
//! reprograms a kernel timer, which on a virtual machine traps to the hypervisor (on this project's VM it took 44%
//! of the client's CPU at 30,000 requests/s). So the loop first collects the events already there without
//! sleeping ([`poll_now`]), and only when there are none sleeps with [`sleep_until`]: `ppoll` on the epoll
//! descriptor itself, which is readable while an event waits, with a nanosecond timeout. A kernel timer is then set
//! only for a real sleep. [`fine_slack`] makes that sleep end on time instead of up to 50 µs late (Linux's default
//! timer slack).

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::time::{Duration, Instant};

use mio::{Events, Poll};
use nix::poll::{ppoll, PollFd, PollFlags};
use nix::sys::time::TimeSpec;

/// Lets this thread's timed sleeps end within a nanosecond of their time (the kernel otherwise rounds them later
/// to batch wake-ups). Failing to is harmless: sleeps end a little late, and latencies count from the due time.
pub fn fine_slack() {
    let _ = nix::sys::prctl::set_timerslack(1);
}

/// Collects the events ready now, without sleeping.
pub fn poll_now(poll: &mut Poll, events: &mut Events) -> io::Result<()> {
    poll.poll(events, Some(Duration::ZERO))
}

/// Sleeps until an event is ready in `poll` or `until` comes, whichever is first; the events are then collected
/// with [`poll_now`].
pub fn sleep_until(poll: &Poll, until: Instant) -> io::Result<()> {
    let left = until.saturating_duration_since(Instant::now());
    if left.is_zero() {
        return Ok(());
    }
    // SAFETY: the descriptor belongs to `poll`, which outlives this call.
    let epoll = unsafe { BorrowedFd::borrow_raw(poll.as_raw_fd()) };
    match ppoll(&mut [PollFd::new(epoll, PollFlags::POLLIN)], Some(TimeSpec::from_duration(left)), None) {
        Ok(_) | Err(nix::errno::Errno::EINTR) => Ok(()),
        Err(e) => Err(e.into()),
    }
}
