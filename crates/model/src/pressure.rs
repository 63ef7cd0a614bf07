//! [`Stalls`]: the time in which some task stalled for want of a CPU, of I/O or of memory, as the kernel's
//! pressure stall information counts it (the `some` line of a cgroup's `cpu.pressure`, `io.pressure` and
//! `memory.pressure`, or of `/proc/pressure/*` for a tree in the root cgroup, where the figures are the host's).
//! A server's thread states say where its threads waited; these say when the kernel held them back: memory
//! stalls (reclaim, refaults, swap) show nowhere else.

use serde::{Deserialize, Serialize};

/// Stalled time by resource: seconds in a sample (since the one before), or the share of a window (0 to 1) in a
/// trial's usage.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Stalls {
    /// Some task was ready to run and waited for a CPU.
    pub cpu: f64,
    /// Some task waited for I/O.
    pub io: f64,
    /// Some task waited for memory: reclaim, refaults, swap.
    pub memory: f64,
}

impl Stalls {
    /// What was counted since `before` (none where a count went back).
    pub fn since(self, before: Stalls) -> Stalls {
        Stalls {
            cpu: (self.cpu - before.cpu).max(0.0),
            io: (self.io - before.io).max(0.0),
            memory: (self.memory - before.memory).max(0.0),
        }
    }

    /// Adds `other` times `weight` into these.
    pub fn add_scaled(&mut self, other: Stalls, weight: f64) {
        self.cpu += other.cpu * weight;
        self.io += other.io * weight;
        self.memory += other.memory * weight;
    }

    /// Each figure times `factor`.
    pub fn scaled(self, factor: f64) -> Stalls {
        let mut out = Stalls::default();
        out.add_scaled(self, factor);
        out
    }

    /// The figures as the reports name them: `cpu`, `io`, `memory`.
    pub fn named(&self) -> [(&'static str, f64); 3] {
        [("cpu", self.cpu), ("io", self.io), ("memory", self.memory)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_since_a_reading_never_go_below_zero_and_scale() {
        let before = Stalls { cpu: 1.0, io: 2.0, memory: 3.0 };
        let now = Stalls { cpu: 1.5, io: 2.0, memory: 0.0 };
        assert_eq!(now.since(before), Stalls { cpu: 0.5, io: 0.0, memory: 0.0 });
        assert_eq!(before.scaled(0.5), Stalls { cpu: 0.5, io: 1.0, memory: 1.5 });
        assert_eq!(before.named()[2], ("memory", 3.0));
    }
}
