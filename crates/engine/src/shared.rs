//! What the coordinator hands every worker: [`Shared`], the settings they all read, and [`Part`], which share of
//! the run's connections, rate and request count one worker takes ([`share`]).

use std::net::SocketAddr;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::tls::TlsPlan;
use crate::workload::Workload;

/// What every worker reads and nobody writes (but the stop flag).
#[derive(Debug)]
pub struct Shared {
    /// Where to connect.
    pub address: SocketAddr,
    /// What is sent.
    pub workload: Arc<Workload>,
    /// Seeds each worker's random choices (arrivals, mixes, think times).
    pub seed: u64,
    /// Closed model: pause of 0 to this after every response.
    pub delay: Option<Duration>,
    /// Walk the requests in order rather than picking them by weight.
    pub sequential: bool,
    /// How to speak TLS, for https:// URLs.
    pub tls: Option<TlsPlan>,
    /// Reuse connections.
    pub keepalive: bool,
    /// Request deadline.
    pub timeout: Duration,
    /// Connect deadline.
    pub connect_timeout: Duration,
    /// End of warm-up: counting starts here.
    pub measure_start: Instant,
    /// When sending stops, for timed runs.
    pub send_until: Option<Instant>,
    /// Set to stop early (Ctrl-C).
    pub stop: Arc<AtomicBool>,
}

/// Which of `threads` workers this is.
#[derive(Debug, Clone, Copy)]
pub struct Part {
    /// This worker's index.
    pub index: usize,
    /// How many workers there are.
    pub of: usize,
}

/// The part of `total` that worker `part` takes: as even as possible, earlier workers take the rest.
pub fn share(total: u64, part: Part) -> u64 {
    let of = part.of as u64;
    total / of + u64::from((part.index as u64) < total % of)
}

#[cfg(test)]
mod tests {
    use super::{share, Part};

    #[test]
    fn shares_add_up() {
        for (total, of) in [(10, 3), (1, 4), (0, 2), (1000, 7)] {
            let sum: u64 = (0..of).map(|index| share(total, Part { index, of })).sum();
            assert_eq!(sum, total);
        }
        assert_eq!(share(10, Part { index: 0, of: 3 }), 4);
        assert_eq!(share(10, Part { index: 2, of: 3 }), 3);
    }
}
