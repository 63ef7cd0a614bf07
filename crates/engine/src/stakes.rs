//! [`Stakes`]: what a capacity search's probe is judged on, so that its run stops waiting for requests still
//! unanswered after its window once nothing they can do changes its verdict.
//!
//! A probe past the server's capacity leaves connections the kernel retransmits SYNs for, answered up to the
//! timeout later; waiting for them costs a search seconds per probe. Two cases need not wait:
//! - **far behind**: the window answered under [`Stakes::give_up_below`] of the requests due in it; the probe has
//!   failed whatever the rest do (a window's throughput cannot grow after it);
//! - **settled**: every objective holds at both ends of what the stragglers can still do: each answered now (its
//!   wait so far its latency, no error), or each failed at its deadline (the timeout its latency, an error). Every
//!   figure an objective reads (the mean, a percentile, the maximum, the error and check shares) lies between its
//!   values at those two ends, whatever mix of them happens, so the objective holds for every outcome. Each
//!   worker decides on its own requests; a figure that holds in every worker holds for their sum (a share or a
//!   mean is a weighted average of the workers', a percentile under a limit in each is under it in all, a maximum
//!   is the workers' largest), so no worker waits on another.
//!
//! A settled run leaves out each request still in flight: its wait so far is in the latency (at least that long),
//! and it is counted apart (`left_out`), in no count of outcomes, so every figure stays within the two ends above
//! and says what was left out. A run far behind counts them `unanswered` instead, as it failed anyway. An
//! objective on the rate (`rps`) is never settled this way: it is the sum of the workers', which none knows.

use shootout_metrics::histogram::{record_us, value_at, LatencyHistogram};
use shootout_metrics::Recorder;
use shootout_model::result::RequestCounts;
use shootout_model::slo::{Condition, Metric};

/// A search's probe: the share under which it has failed, and the objectives it must meet to pass.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Stakes {
    /// Below this share of the requests due answered in the window, the requests still in flight or waiting are
    /// not waited for: the probe failed whatever they do. Each counts as unanswered (or never sent), its wait so
    /// far as its latency.
    pub give_up_below: Option<f64>,
    /// The objectives: once each holds whatever the requests still in flight do, they are not waited for.
    pub objectives: Vec<Condition>,
}

/// A counted request still unanswered after the window: how long it has waited, and the longest it can wait
/// before it fails (its deadline), both from when it fell due, µs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Straggler {
    /// Its wait so far.
    pub waited_us: u64,
    /// Its wait if it fails at its deadline.
    pub at_most_us: u64,
}

impl Stakes {
    /// The stakes of a probe of a search to `precision` (0.05 for 5%) against `objectives`: it has failed below
    /// [`give_up_below`](shootout_model::search::give_up_below) of the requests due answered in its window.
    pub fn of_probe(objectives: &[Condition], precision: f64) -> Stakes {
        Stakes {
            give_up_below: Some(shootout_model::search::give_up_below(precision)),
            objectives: objectives.to_vec(),
        }
    }

    /// True when every objective (at least one) holds whatever `stragglers` do, on this worker's `recorder`:
    /// answered now or failed at their deadlines, or anything between. A run that followed a redirect is never
    /// settled this way (a straggler's next hop would have a deadline of its own).
    pub fn settled(&self, recorder: &Recorder, stragglers: &[Straggler]) -> bool {
        let counts = recorder.request_counts();
        if self.objectives.is_empty() || counts.redirects > 0 {
            return false;
        }
        let reach = Reach::of(recorder, counts, stragglers);
        self.objectives.iter().all(|objective| {
            reach.bounds(objective.metric).is_some_and(|(low, high)| objective.holds(low) && objective.holds(high))
        })
    }
}

/// What the stragglers can still do to one worker's figures: its latencies with each of them at its wait so far
/// (`soonest`) or at its deadline (`latest`), and its counts.
struct Reach {
    soonest: LatencyHistogram,
    latest: LatencyHistogram,
    counts: RequestCounts,
    /// How many stragglers.
    k: u64,
}

impl Reach {
    /// `recorder`'s latencies with `stragglers` at each end, and its `counts`.
    fn of(recorder: &Recorder, counts: RequestCounts, stragglers: &[Straggler]) -> Reach {
        let (mut soonest, mut latest) = (recorder.latency.clone(), recorder.latency.clone());
        for straggler in stragglers {
            record_us(&mut soonest, straggler.waited_us);
            record_us(&mut latest, straggler.at_most_us);
        }
        Reach { soonest, latest, counts, k: stragglers.len() as u64 }
    }

    /// The lowest and highest value the figure `metric` can take, as a result gives it; none for the rate, which
    /// no worker knows alone.
    fn bounds(&self, metric: Metric) -> Option<(f64, f64)> {
        let share = |part: u64, whole: u64| if whole == 0 { 0.0 } else { 100.0 * part as f64 / whole as f64 };
        let mean = |h: &LatencyHistogram| if h.is_empty() { 0.0 } else { h.mean() };
        let c = &self.counts;
        let (total, errors) = (c.total + self.k, c.failed + c.http_errors);
        let responses = c.ok + c.http_errors + self.k;
        Some(match metric {
            Metric::Mean => (mean(&self.soonest), mean(&self.latest)),
            Metric::Percentile(p) => (value_at(&self.soonest, p) as f64, value_at(&self.latest, p) as f64),
            Metric::Max => (self.soonest.max() as f64, self.latest.max() as f64),
            // Every straggler answered, or every one an error.
            Metric::Errors if total == 0 => (100.0, 100.0),
            Metric::Errors => (share(errors, total), share(errors + self.k, total)),
            // Every straggler answered, passing its checks or failing them (failing instead lies between).
            Metric::Checks => (share(c.checks_failed, responses), share(c.checks_failed + self.k, responses)),
            Metric::Rps => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shootout_model::slo::parse_condition;
    use shootout_model::ErrorKind;

    /// A worker that answered 98 requests in 1 ms each, with two stragglers that have waited 0.5 s and would fail
    /// at 10 s.
    fn worker() -> (Recorder, Vec<Straggler>) {
        let mut recorder = Recorder::new();
        (0..98).for_each(|_| recorder.response(200, 1000, 1000));
        (recorder, vec![Straggler { waited_us: 500_000, at_most_us: 10_000_000 }; 2])
    }

    fn stakes(objectives: &[&str]) -> Stakes {
        Stakes { give_up_below: None, objectives: objectives.iter().map(|o| parse_condition(o).unwrap()).collect() }
    }

    #[test]
    fn each_figure_is_bounded_by_the_stragglers_answered_now_and_failed_at_their_deadlines() {
        let (recorder, stragglers) = worker();
        let reach = Reach::of(&recorder, recorder.request_counts(), &stragglers);
        let (low, high) = reach.bounds(Metric::Mean).unwrap();
        assert!((low - 10_980.0).abs() < 50.0 && (high - 200_980.0).abs() < 500.0, "{low} {high}");
        assert_eq!(reach.bounds(Metric::Errors), Some((0.0, 2.0)));
        let (low, high) = reach.bounds(Metric::Max).unwrap();
        assert!((500_000.0..501_000.0).contains(&low) && (1e7..1.001e7).contains(&high), "{low} {high}");
        assert!(reach.bounds(Metric::Percentile(99.0)).is_some_and(|(low, high)| low >= 500_000.0 && high >= 1e7));
        assert_eq!(reach.bounds(Metric::Checks), Some((0.0, 2.0)));
        assert_eq!(reach.bounds(Metric::Rps), None, "a rate is the workers' sum");
    }

    #[test]
    fn a_probe_is_settled_only_when_every_objective_holds_at_both_ends() {
        let (mut recorder, stragglers) = worker();
        assert!(stakes(&["mean < 1s", "errors < 5%"]).settled(&recorder, &stragglers));
        assert!(!stakes(&["mean < 1s", "errors < 1%"]).settled(&recorder, &stragglers), "two of 100 may fail");
        assert!(!stakes(&["mean < 100ms"]).settled(&recorder, &stragglers), "failing at 10 s they make 0.2 s");
        assert!(!stakes(&["p99 < 1s"]).settled(&recorder, &stragglers));
        assert!(stakes(&["p97 < 1s"]).settled(&recorder, &stragglers));
        assert!(!stakes(&["rps >= 1"]).settled(&recorder, &stragglers), "never on a rate");
        assert!(!stakes(&[]).settled(&recorder, &stragglers), "nothing to hold");
        assert!(stakes(&["errors < 2.5%"]).settled(&recorder, &stragglers));
        recorder.failure(ErrorKind::ReadTimeout, Some(10_000_000), None);
        assert!(!stakes(&["errors < 2.5%"]).settled(&recorder, &stragglers), "3 of 101 may fail");
        recorder.redirected();
        assert!(!stakes(&["mean < 1s", "errors < 5%"]).settled(&recorder, &stragglers), "a hop has its own deadline");
    }
}
