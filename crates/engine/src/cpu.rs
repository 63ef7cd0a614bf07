//! The client's own CPU use, from `getrusage`, so a result can say when the load generator was the bottleneck.

use std::time::Duration;

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
        // SAFETY: an all-zero rusage is valid and getrusage fills it.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: RUSAGE_SELF with a valid pointer to our struct.
        unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
        let time = |tv: libc::timeval| Duration::new(tv.tv_sec as u64, tv.tv_usec as u32 * 1000);
        CpuTimes { user: time(usage.ru_utime), system: time(usage.ru_stime) }
    }

    /// Time used between `earlier` and `self`.
    pub fn since(self, earlier: CpuTimes) -> CpuTimes {
        CpuTimes { user: self.user.saturating_sub(earlier.user), system: self.system.saturating_sub(earlier.system) }
    }
}
