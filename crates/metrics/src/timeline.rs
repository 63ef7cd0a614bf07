//! The per-second timeline: [`Interval`]s from every thread merged into one series.

use std::collections::BTreeMap;

use shootout_model::result::Second;

use crate::histogram::{new_histogram, record_us, LatencyHistogram};

/// One thread's measurements for one second of the run.
#[derive(Debug, Clone)]
pub struct Interval {
    /// Seconds since the start of the measured window.
    pub second: u32,
    /// Requests that ended in this second.
    pub requests: u64,
    /// Of those, failures and HTTP errors.
    pub errors: u64,
    /// Latencies recorded in this second.
    pub latency: LatencyHistogram,
}

impl Interval {
    /// An empty interval for `second`.
    pub fn new(second: u32) -> Self {
        Interval { second, requests: 0, errors: 0, latency: new_histogram() }
    }

    /// Counts one request that ended now.
    #[inline]
    pub fn record(&mut self, latency_us: Option<u64>, is_error: bool) {
        self.requests += 1;
        self.errors += u64::from(is_error);
        if let Some(us) = latency_us {
            record_us(&mut self.latency, us);
        }
    }
}

/// Intervals from all threads, merged by second.
#[derive(Debug, Default)]
pub struct Timeline {
    seconds: BTreeMap<u32, Interval>,
}

impl Timeline {
    /// An empty timeline.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds one thread's interval into the matching second.
    pub fn add(&mut self, interval: Interval) {
        match self.seconds.get_mut(&interval.second) {
            Some(merged) => {
                merged.requests += interval.requests;
                merged.errors += interval.errors;
                merged.latency.add(&interval.latency).expect("histograms share bounds");
            }
            None => {
                self.seconds.insert(interval.second, interval);
            }
        }
    }

    /// The merged interval of one second, if any thread reported it.
    pub fn get(&self, second: u32) -> Option<&Interval> {
        self.seconds.get(&second)
    }

    /// The series for the result: one entry for every second from 0 to `seconds - 1` (empty seconds included,
    /// so a stall shows as a gap), plus any later second that recorded requests. `target` gives the level asked
    /// for in each second.
    pub fn to_seconds(&self, seconds: u32, target: impl Fn(u32) -> f64) -> Vec<Second> {
        let last = self.seconds.keys().next_back().map_or(0, |&s| s + 1).max(seconds);
        (0..last)
            .map(|second| match self.seconds.get(&second) {
                Some(i) => Second {
                    second,
                    requests: i.requests,
                    errors: i.errors,
                    p50_us: (!i.latency.is_empty()).then(|| i.latency.value_at_quantile(0.5)),
                    p99_us: (!i.latency.is_empty()).then(|| i.latency.value_at_quantile(0.99)),
                    target: target(second),
                },
                None => Second { second, requests: 0, errors: 0, p50_us: None, p99_us: None, target: target(second) },
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merges_threads_and_fills_gaps() {
        let mut t = Timeline::new();
        let mut a = Interval::new(0);
        a.record(Some(100), false);
        let mut b = Interval::new(0);
        b.record(Some(300), true);
        let mut c = Interval::new(2);
        c.record(Some(50), false);
        t.add(a);
        t.add(b);
        t.add(c);
        let s = t.to_seconds(3, |second| f64::from(second) * 10.0);
        assert_eq!(s[2].target, 20.0);
        assert_eq!(s.len(), 3);
        assert_eq!((s[0].requests, s[0].errors), (2, 1));
        assert_eq!(s[0].p99_us, Some(300));
        assert_eq!((s[1].requests, s[1].p50_us), (0, None));
        assert_eq!(s[2].p50_us, Some(50));
    }
}
