//! The client's own CPU use, from `getrusage`, so a result can say when the load generator was the bottleneck.

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
