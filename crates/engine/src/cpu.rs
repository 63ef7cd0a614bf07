//! The client's own CPU use, from `getrusage`, and the time its worker threads sat ready to run while other work
//! held the CPUs (from each thread's `/proc` schedstat), so a result can say when the load generator was the
//! bottleneck, including when it was starved of CPU rather than busy.

use std::time::Duration;

use nix::sys::resource::{getrusage, UsageWho};
use nix::sys::time::TimeVal;

/// User and system CPU time of the whole process at one moment.
#[derive(Debug, Clone, Copy, Default)]
pub struct CpuTimes {
    /// Time in user mode.
    pub user: Duration,
    /// Time in the kernel on the process's behalf.
    pub system: Duration,
}

impl CpuTimes {
    /// The process's CPU times so far.
    pub fn now() -> CpuTimes {
        // RUSAGE_SELF cannot fail; were it to, zero times say "unknown" rather than stopping a run.
        let Ok(usage) = getrusage(UsageWho::RUSAGE_SELF) else { return CpuTimes::default() };
        let time = |tv: TimeVal| Duration::new(tv.tv_sec() as u64, tv.tv_usec() as u32 * 1000);
        CpuTimes { user: time(usage.user_time()), system: time(usage.system_time()) }
    }

    /// Time used between `earlier` and `self`.
    pub fn since(self, earlier: CpuTimes) -> CpuTimes {
        CpuTimes { user: self.user.saturating_sub(earlier.user), system: self.system.saturating_sub(earlier.system) }
    }
}

/// How long the calling thread has been ready to run but waiting for a CPU, so far (zero where the kernel keeps
/// no scheduler statistics).
pub fn queued_now() -> Duration {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").unwrap_or_default();
    let run_delay_ns = text.split_whitespace().nth(1).and_then(|n| n.parse().ok()).unwrap_or(0);
    Duration::from_nanos(run_delay_ns)
}
