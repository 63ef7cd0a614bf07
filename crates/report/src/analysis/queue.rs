//! [`queue_growth`]: an open-model run whose queue grew through its window. A server offered more than it can
//! complete answers each request later than the one before: its latency rises for as long as the rate lasts, so
//! any latency objective it meets in a short window it breaks in a longer one. A run whose server completed under
//! [`KEPT`] of the requests due, and whose median latency in the last third of its whole seconds was at least
//! [`RISE`] times the first third's (and more than a millisecond above it), grew a queue; a cell most of whose
//! repeats did meets no latency objective ([`crate::analysis`]).

use serde::Serialize;
use shootout_model::LoadResult;

use crate::analysis::behind::completed_share;
use crate::statistics::bound::at_least;
use crate::statistics::seconds::whole_seconds;

/// Completing at least this share of the requests due, a server kept up, whatever its latency did.
pub const KEPT: f64 = 0.97;

/// How many times the first third's latency the last third's must be for the queue to have grown.
pub const RISE: f64 = 1.5;

/// How a run's queue grew: its median latency early and late in the window, and the share of the requests due
/// it completed.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct QueueGrowth {
    /// The mean of the per-second median latencies over the first third of the window's whole seconds, µs.
    pub first_us: f64,
    /// The same over the last third, µs.
    pub last_us: f64,
    /// The share of the requests due that it completed, 0 to 1.
    pub completed: f64,
}

/// Whether `result`, an open-model run, grew a queue through its window; none for the closed model, a run that
/// completed what was offered, or one with fewer than three whole seconds.
pub fn queue_growth(result: &LoadResult) -> Option<QueueGrowth> {
    let completed = completed_share(result)?;
    if at_least(completed, KEPT) {
        return None;
    }
    let (whole, _) = whole_seconds(&result.timeline, result.duration_s);
    let p50: Vec<f64> = whole.iter().filter_map(|s| s.p50_us).map(|us| us as f64).collect();
    if p50.len() < 3 {
        return None;
    }
    let third = p50.len() / 3;
    let mean = |values: &[f64]| values.iter().sum::<f64>() / values.len() as f64;
    let (first_us, last_us) = (mean(&p50[..third]), mean(&p50[p50.len() - third..]));
    (at_least(last_us, RISE * first_us) && last_us - first_us > 1000.0).then_some(QueueGrowth {
        first_us,
        last_us,
        completed,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use shootout_model::result::{Second, Sends};
    use shootout_model::{Arrival, Pacing};

    /// A 6 s open-model run at 104/s that completed `completed`/s, its seconds' median latencies `p50_ms`.
    fn run(completed: f64, p50_ms: &[u64]) -> LoadResult {
        let trial: shootout_model::run::TrialRecord =
            serde_json::from_str(include_str!("../../tests/trial.json")).unwrap();
        let mut r = trial.result;
        r.options.pacing = Pacing::Open { rate: 104.0, arrival: Arrival::Constant };
        r.duration_s = p50_ms.len() as f64;
        r.sends =
            Some(Sends { due: 104 * p50_ms.len() as u64, sent: 600, late: 0, offered_per_s: 104.0, sent_per_s: 100.0 });
        r.throughput.requests_per_s = completed;
        r.timeline = p50_ms
            .iter()
            .enumerate()
            .map(|(i, ms)| Second {
                second: i as u32,
                requests: completed as u64,
                errors: 0,
                p50_us: Some(ms * 1000),
                p99_us: Some(ms * 1000),
                target: 104.0,
            })
            .collect();
        r
    }

    #[test]
    fn a_queue_grows_when_the_server_falls_short_and_its_latency_rises() {
        // Issue 47: a server that completes 99/s, offered 104/s: 143 ms and rising.
        let grew = queue_growth(&run(99.0, &[100, 130, 160, 190, 220, 250])).unwrap();
        assert_eq!((grew.first_us, grew.last_us), (115_000.0, 235_000.0));
        assert!((grew.completed - 99.0 / 104.0).abs() < 1e-9);
        assert_eq!(queue_growth(&run(103.0, &[100, 130, 160, 190, 220, 250])), None, "it kept up");
        assert_eq!(queue_growth(&run(99.0, &[100, 101, 99, 102, 100, 101])), None, "short, but not queueing");
        assert_eq!(queue_growth(&run(99.0, &[1, 1, 1, 2, 2, 2])), None, "a rise of a millisecond is noise");
        assert_eq!(queue_growth(&run(99.0, &[100, 250])), None, "too few seconds to tell");
    }
}
