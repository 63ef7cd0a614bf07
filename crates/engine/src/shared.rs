//! What the coordinator hands every worker: [`Shared`], the settings they all read, and [`Part`], which share of
//! the run's connections, rate and request count one worker takes ([`share`]).

use std::net::SocketAddr;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use shootout_model::{IoBackend, Segment};

use crate::due_times::Share;
use crate::quic::QuicPlan;
use crate::stakes::Stakes;
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
    /// What the workers do their I/O with (decided once for the run, see [`crate::run`]).
    pub io: IoBackend,
    /// HTTP/2 and HTTP/3: the streams each connection carries at once (its slots); 0 for HTTP/1.1.
    pub streams: usize,
    /// HTTP/3: what its QUIC connections are made with (`None` for HTTP/1.1 and HTTP/2).
    pub quic: Option<Arc<QuicPlan>>,
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
    /// The plan's [`stakes`](crate::plan::Plan::stakes).
    pub stakes: Option<Stakes>,
}

/// Which worker this is: thread `thread` of `threads` in this process, which runs share `segment` of a load
/// split between agents ([`Segment::WHOLE`] when it runs the whole load). Every split of the load into workers is
/// made here, nested: the segment's share of the whole first, then the thread's share of that.
#[derive(Debug, Clone, Copy)]
pub struct Part {
    /// This process's share of the load.
    pub segment: Segment,
    /// This worker's index among this process's threads.
    pub thread: usize,
    /// How many worker threads this process runs.
    pub threads: usize,
}

impl Part {
    /// Every worker's part of the whole load, this process's first.
    #[cfg(test)]
    fn all(segments: u32, threads: impl Fn(Segment) -> usize) -> Vec<Part> {
        let mut parts = Vec::new();
        for index in 0..segments {
            let segment = Segment { index, of: segments };
            let threads = threads(segment);
            parts.extend((0..threads).map(|thread| Part { segment, thread, threads }));
        }
        parts
    }

    /// Open model: this worker's part of the whole run's arrivals. The run's evenly spaced requests are numbered
    /// in the order they fall due; agent `i` of `n` takes those numbered `i + m·n`, and its thread `j` of `threads`
    /// every `threads`-th of those from its `j`-th: numbers `i + j·n + k·n·threads` for k = 0, 1, …. So every
    /// request of the run goes to exactly one worker of one agent, whatever each agent's thread count, and the
    /// workers' requests interleave into one evenly spaced stream, ramps included. A Poisson worker runs at one
    /// stride-th of the rate, with a seed of its own (from `seed`, the run's).
    pub fn arrivals(self, seed: u64) -> Share {
        let of = u64::from(self.segment.of.max(1));
        let threads = self.threads.max(1) as u64;
        Share {
            first: u64::from(self.segment.index) + self.thread as u64 * of,
            stride: of * threads,
            seed: self.seed(seed),
        }
    }

    /// A seed for this worker's random choices, from the run's: different for every thread of every segment.
    pub fn seed(self, base: u64) -> u64 {
        let segment = u64::from(self.segment.index).wrapping_mul(0xd1b5_4a32_d192_ed03);
        base ^ segment ^ (self.thread as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)
    }
}

/// The part of `total` that `part` takes: the segment's share of the whole, then the thread's share of that; each
/// as even as possible, earlier indices taking the rest. Over every thread of every segment the parts add up to
/// `total` exactly, and for each part it never decreases as `total` grows (so a ramp never takes a user away from
/// one worker to give it to another).
pub fn share(total: u64, part: Part) -> u64 {
    let segment = split(total, u64::from(part.segment.index), u64::from(part.segment.of));
    split(segment, part.thread as u64, part.threads as u64)
}

/// The segment's share of `total`: what this process takes of the whole, before the split between its threads.
pub fn segment_share(total: u64, segment: Segment) -> u64 {
    split(total, u64::from(segment.index), u64::from(segment.of))
}

/// Share `index` of `total` split `of` ways.
fn split(total: u64, index: u64, of: u64) -> u64 {
    let of = of.max(1);
    total / of + u64::from(index < total % of)
}

#[cfg(test)]
mod tests {
    use super::{share, Part};
    use crate::due_times::Ramp;
    use shootout_model::{Segment, Stage};
    use std::time::Duration;

    fn one(thread: usize, threads: usize) -> Part {
        Part { segment: Segment::WHOLE, thread, threads }
    }

    #[test]
    fn shares_add_up() {
        for (total, of) in [(10, 3), (1, 4), (0, 2), (1000, 7)] {
            let sum: u64 = (0..of).map(|thread| share(total, one(thread, of))).sum();
            assert_eq!(sum, total);
        }
        assert_eq!(share(10, one(0, 3)), 4);
        assert_eq!(share(10, one(2, 3)), 3);
    }

    #[test]
    fn nested_shares_add_up_to_the_whole() {
        for total in [0, 1, 2, 5, 12, 13, 100, 6000, 6001, 1_000_003] {
            for segments in 1..=7 {
                for threads in 1..=5 {
                    // The same thread count everywhere, and agents with different ones.
                    let even = Part::all(segments, |_| threads);
                    let uneven = Part::all(segments, |s| 1 + (s.index as usize + threads) % 4);
                    for parts in [&even, &uneven] {
                        let sum: u64 = parts.iter().map(|&p| share(total, p)).sum();
                        assert_eq!(sum, total, "{total} over {segments} segments of {threads} threads");
                    }
                    let most = even.iter().map(|&p| share(total, p)).max().unwrap();
                    let least = even.iter().map(|&p| share(total, p)).min().unwrap();
                    assert!(most - least <= 2, "{total}: shares {least}..{most} are not even");
                }
            }
        }
    }

    #[test]
    fn a_ramp_of_users_adds_up_at_every_instant() {
        let stage = |secs, target| Stage { duration: Duration::from_secs(secs), target };
        let ramp = Ramp::new(0.0, &[stage(10, 37.0), stage(5, 37.0), stage(10, 3.0)]);
        for segments in 1..=4 {
            let parts = Part::all(segments, |s| 1 + s.index as usize % 3);
            let mut before = vec![0; parts.len()];
            for tenth in 0..=260 {
                // As the closed model's pacer reads it: the level rounded, then shared.
                let users = ramp.at(Duration::from_millis(tenth * 100)).round() as u64;
                let shares: Vec<u64> = parts.iter().map(|&p| share(users, p)).collect();
                assert_eq!(shares.iter().sum::<u64>(), users, "at {tenth}/10 s over {segments} segments");
                if tenth <= 100 {
                    assert!(shares.iter().zip(&before).all(|(now, then)| now >= then), "rising users only join");
                }
                before = shares;
            }
        }
    }

    #[test]
    fn every_request_of_the_run_goes_to_exactly_one_worker_of_one_agent() {
        for segments in 1..=4 {
            for parts in [Part::all(segments, |_| 3), Part::all(segments, |s| 1 + s.index as usize % 3)] {
                let mut taken = vec![0u32; 1000];
                for part in &parts {
                    let share = part.arrivals(7);
                    for number in (share.first..1000).step_by(share.stride as usize) {
                        taken[number as usize] += 1;
                    }
                }
                assert!(taken.iter().all(|&n| n == 1), "{segments} segments: {taken:?}");
            }
        }
    }

    #[test]
    fn seeds_differ_per_thread_and_segment() {
        let parts = Part::all(4, |_| 4);
        let mut seeds: Vec<u64> = parts.iter().map(|p| p.seed(12345)).collect();
        seeds.sort_unstable();
        seeds.dedup();
        assert_eq!(seeds.len(), parts.len());
    }
}
