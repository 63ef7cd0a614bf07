//! Where a process tree's threads spent a trial (thread-state analysis): [`StateCounts`], what one sample of the
//! tree found them doing, and [`ThreadTime`], the same over a trial's measured window as the mean number of
//! threads in each state. A report reads the limit of a cell from these: a server whose threads wait on its
//! database is held back by the database; one whose threads wait on each other, by a lock.
//!
//! The harness sweeps the tree's threads many times a second and puts each thread in one state:
//! - **running**: on a CPU or ready for one (`R`); the split between the two comes from the kernel's exact
//!   per-thread counts, not from the sweeps;
//! - **disk**: in uninterruptible sleep (`D`), almost always waiting for a disk;
//! - **lock**: waiting on a futex: for a lock, a condition, another thread of the process (a GIL is one);
//! - **sleep**: in a timed sleep;
//! - **client**: waiting for a client: accepting, or reading or polling only sockets accepted from one;
//! - **a backend**: waiting on a socket it connected to another server (a database), named by the service that
//!   listens there, or by its address (by its path, over a Unix socket);
//! - **idle**: any other wait (a pipe, a child, a timer, an unknown socket).
//!
//! Only threads that ran since the sample before and serve are counted, so a pool's spare threads, asleep the
//! whole time, and the threads that keep house (a timer, a reporter) do not fill the figures with waits that held
//! nothing back.

use serde::{Deserialize, Serialize};

/// Thread-sweeps of one sample, by state: each sweep adds one to the state of every thread it found that ran in
/// the sample's interval.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StateCounts {
    /// Sweeps of the tree in the interval.
    pub sweeps: u32,
    /// On a CPU or ready for one.
    pub running: u32,
    /// In uninterruptible sleep: the disk, mostly.
    pub disk: u32,
    /// Waiting on a futex.
    pub lock: u32,
    /// In a timed sleep.
    pub sleep: u32,
    /// Waiting for a client.
    pub client: u32,
    /// Waiting on a backend, by its name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub backends: Vec<(String, u32)>,
    /// Any other wait.
    pub idle: u32,
}

impl StateCounts {
    /// Adds `other`'s counts into these.
    pub fn add(&mut self, other: &StateCounts) {
        self.sweeps += other.sweeps;
        self.running += other.running;
        self.disk += other.disk;
        self.lock += other.lock;
        self.sleep += other.sleep;
        self.client += other.client;
        self.idle += other.idle;
        for (name, count) in &other.backends {
            add_named(&mut self.backends, name, *count);
        }
    }

    /// Only the waits that hold a request whoever waits in them: the disk and the backends (a runtime's helper
    /// thread parked on a futex waits for work; one reading a file holds a request).
    pub fn holding(&self) -> StateCounts {
        StateCounts { disk: self.disk, backends: self.backends.clone(), ..StateCounts::default() }
    }

    /// Counts one wait on the backend `name`.
    pub fn on_backend(&mut self, name: &str) {
        add_named(&mut self.backends, name, 1);
    }
}

fn add_named(list: &mut Vec<(String, u32)>, name: &str, count: u32) {
    match list.iter_mut().find(|(n, _)| n == name) {
        Some((_, n)) => *n += count,
        None => list.push((name.to_string(), count)),
    }
}

/// Where a tree's threads were over a trial's measured window: the mean number of its threads in each state
/// (thread-seconds per second), counting only threads that ran. On a CPU and runnable come from the kernel's
/// exact per-thread times; the waits share out the rest of the sampled time as the sweeps found it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ThreadTime {
    /// Threads on a CPU.
    pub on_cpu: f64,
    /// Threads ready to run, waiting for a CPU.
    pub runnable: f64,
    /// Threads in uninterruptible sleep (the disk).
    pub disk: f64,
    /// Threads waiting on a futex (a lock, a GIL, a condition).
    pub lock: f64,
    /// Threads in a timed sleep.
    pub sleep: f64,
    /// Threads waiting for a client.
    pub client: f64,
    /// Threads waiting on each backend, by its name, the most first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub backends: Vec<(String, f64)>,
    /// Threads in any other wait.
    pub idle: f64,
    /// Sweeps the figures rest on (0: the kernel gave no thread states).
    pub sweeps: u32,
}

impl ThreadTime {
    /// All the threads counted: the sum of every state.
    pub fn total(&self) -> f64 {
        self.on_cpu
            + self.runnable
            + self.disk
            + self.lock
            + self.sleep
            + self.client
            + self.idle
            + self.backends.iter().map(|(_, n)| n).sum::<f64>()
    }

    /// Each state's share of all the threads counted, by name, in the order of [`ThreadTime::CLASSES`] and then
    /// each backend's (`db`), with none when nothing was counted.
    pub fn shares(&self) -> Vec<(String, f64)> {
        let total = self.total();
        if total <= 0.0 {
            return Vec::new();
        }
        let fixed = [self.on_cpu, self.runnable, self.disk, self.lock, self.sleep, self.client, self.idle];
        Self::CLASSES
            .iter()
            .zip(fixed)
            .map(|(name, n)| (name.to_string(), n / total))
            .chain(self.backends.iter().map(|(name, n)| (name.clone(), n / total)))
            .collect()
    }

    /// Adds `other`'s threads, each times `weight`, into these, and its sweeps whole.
    pub fn add_scaled(&mut self, other: &ThreadTime, weight: f64) {
        self.on_cpu += other.on_cpu * weight;
        self.runnable += other.runnable * weight;
        self.disk += other.disk * weight;
        self.lock += other.lock * weight;
        self.sleep += other.sleep * weight;
        self.client += other.client * weight;
        self.idle += other.idle * weight;
        self.sweeps += other.sweeps;
        for (name, threads) in &other.backends {
            self.add_backend(name, threads * weight);
        }
    }

    /// Adds `threads` to the wait on the backend `name`.
    pub fn add_backend(&mut self, name: &str, threads: f64) {
        match self.backends.iter_mut().find(|(known, _)| known == name) {
            Some((_, sum)) => *sum += threads,
            None => self.backends.push((name.to_string(), threads)),
        }
    }

    /// The names of the fixed states, as reports write them.
    pub const CLASSES: [&'static str; 7] = ["on CPU", "runnable", "disk", "lock", "sleep", "client", "idle"];
}

/// How results name the runtimes whose threads shootout tells apart (a trial's `usage.runtime`, a sample's
/// `busiest_runtime`): the harness writes them, the report reads them. Any other program is the empty name.
pub mod runtime {
    /// Node.js.
    pub const NODE: &str = "node";
    /// A Java virtual machine.
    pub const JVM: &str = "jvm";
    /// MRI, Ruby's own interpreter.
    pub const RUBY: &str = "ruby";
    /// CPython.
    pub const PYTHON: &str = "python";
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backends_count_by_name_and_shares_sum_to_one() {
        let mut counts = StateCounts::default();
        counts.on_backend("db");
        counts.on_backend("cache");
        counts.on_backend("db");
        assert_eq!(counts.backends, vec![("db".to_string(), 2), ("cache".to_string(), 1)]);
        let time = ThreadTime { on_cpu: 1.0, lock: 2.0, backends: vec![("db".into(), 1.0)], ..ThreadTime::default() };
        let shares = time.shares();
        assert!((shares.iter().map(|(_, s)| s).sum::<f64>() - 1.0).abs() < 1e-9);
        assert_eq!(shares.last(), Some(&("db".to_string(), 0.25)));
        assert!(ThreadTime::default().shares().is_empty());
    }
}
