//! The per-second timeline: [`Interval`]s from every thread merged into one series, and the latency blocks of
//! the result ([`LatencyBlock`]: each second's latencies, or each few seconds' in a long run), kept as the sorted
//! buckets they hold rather than as whole histograms, so a run of any length holds a bounded amount.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use shootout_model::result::{LatencyBlock, Second, MOST_BLOCKS};

use crate::histogram::{encode_histogram, new_histogram, record_us_n, value_at, LatencyHistogram};

/// One thread's measurements for one second of the run (or several threads' merged, or several agents'). It
/// crosses a process boundary as JSON with its histogram in HdrHistogram V2 base64, exactly.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    /// Seconds since the start of the measured window.
    pub second: u32,
    /// Requests that ended in this second.
    pub requests: u64,
    /// Of those, failures and HTTP errors.
    pub errors: u64,
    /// Latencies recorded in this second.
    #[serde(with = "crate::histogram::base64_v2")]
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
        self.record_n(latency_us, is_error, 1);
    }

    /// `n` requests that ended alike in this second.
    pub fn record_n(&mut self, latency_us: Option<u64>, is_error: bool, n: u64) {
        self.requests += n;
        self.errors += if is_error { n } else { 0 };
        if let Some(us) = latency_us {
            record_us_n(&mut self.latency, us, n);
        }
    }

    /// Adds `other`, a report of the same second from another thread or agent: counts add, histograms add.
    pub fn absorb(&mut self, other: &Interval) {
        self.requests += other.requests;
        self.errors += other.errors;
        self.latency.add(&other.latency).expect("histograms share bounds");
    }
}

/// Seconds whose histograms are kept open for late reports; older ones are reduced to their summary, so a run
/// of any length holds a fixed number of histograms. (Threads report a second within one tick of its end.)
const OPEN_SECONDS: usize = 4;

/// The figures of one finished second.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Closed {
    requests: u64,
    errors: u64,
    p50_us: Option<u64>,
    p99_us: Option<u64>,
}

impl Closed {
    fn of(interval: &Interval) -> Closed {
        let empty = interval.latency.is_empty();
        Closed {
            requests: interval.requests,
            errors: interval.errors,
            p50_us: (!empty).then(|| value_at(&interval.latency, 50.0)),
            p99_us: (!empty).then(|| value_at(&interval.latency, 99.0)),
        }
    }
}

/// Intervals from all threads, merged by second: the latest few whole, the older ones as summaries.
#[derive(Debug, Default)]
pub struct Timeline {
    open: BTreeMap<u32, Interval>,
    closed: BTreeMap<u32, Closed>,
    blocks: Blocks,
}

/// The buckets of a histogram that hold values: (the highest value of the bucket, its count), by value.
type Buckets = Vec<(u64, u64)>;

/// The closed seconds' latencies, in blocks of `span` seconds (1, doubled whenever the blocks would be more than
/// [`MOST_BLOCKS`]).
#[derive(Debug, Default)]
struct Blocks {
    span: u32,
    by_index: BTreeMap<u32, Buckets>,
}

impl Blocks {
    /// Adds the latencies of `histogram`, recorded in `second`.
    fn add(&mut self, second: u32, histogram: &LatencyHistogram) {
        if histogram.is_empty() {
            return;
        }
        self.span = self.span.max(1);
        while second / self.span >= MOST_BLOCKS as u32 {
            self.span *= 2;
            let halved = std::mem::take(&mut self.by_index);
            for (index, buckets) in halved {
                merge(self.by_index.entry(index / 2).or_default(), &buckets);
            }
        }
        let buckets: Buckets = histogram.iter_recorded().map(|v| (v.value_iterated_to(), v.count_at_value())).collect();
        merge(self.by_index.entry(second / self.span).or_default(), &buckets);
    }
}

/// Adds `more` into `into`, both sorted by value.
fn merge(into: &mut Buckets, more: &[(u64, u64)]) {
    let mut merged = Vec::with_capacity(into.len() + more.len());
    let (mut a, mut b) = (into.iter().peekable(), more.iter().peekable());
    loop {
        let next = match (a.peek(), b.peek()) {
            (Some(x), Some(y)) if x.0 == y.0 => {
                let sum = (x.0, x.1 + y.1);
                a.next();
                b.next();
                sum
            }
            (Some(x), Some(y)) if x.0 < y.0 => *a.next().expect("peeked"),
            (Some(_), Some(_)) | (None, Some(_)) => *b.next().expect("peeked"),
            (Some(_), None) => *a.next().expect("peeked"),
            (None, None) => break,
        };
        merged.push(next);
    }
    *into = merged;
}

impl Timeline {
    /// An empty timeline.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds one thread's interval into the matching second.
    pub fn add(&mut self, interval: Interval) {
        if let Some(closed) = self.closed.get_mut(&interval.second) {
            // A very late report: its counts and latencies still count; the second's percentiles are already fixed.
            closed.requests += interval.requests;
            closed.errors += interval.errors;
            self.blocks.add(interval.second, &interval.latency);
            return;
        }
        match self.open.get_mut(&interval.second) {
            Some(merged) => merged.absorb(&interval),
            None => {
                self.open.insert(interval.second, interval);
            }
        }
        while self.open.len() > OPEN_SECONDS {
            let (second, oldest) = self.open.pop_first().expect("more than zero open");
            self.closed.insert(second, Closed::of(&oldest));
            self.blocks.add(second, &oldest.latency);
        }
    }

    /// Requests that ended in `second`, as far as reported.
    pub fn requests_in(&self, second: u32) -> u64 {
        self.open.get(&second).map(|i| i.requests).or_else(|| self.closed.get(&second).map(|c| c.requests)).unwrap_or(0)
    }

    /// The latency blocks for the result ([`LatencyBlock`]), the seconds still open folded in; only blocks that
    /// recorded a latency are listed.
    pub fn to_blocks(&self) -> Vec<LatencyBlock> {
        let mut blocks = Blocks { span: self.blocks.span, by_index: self.blocks.by_index.clone() };
        for (&second, interval) in &self.open {
            blocks.add(second, &interval.latency);
        }
        let span = blocks.span.max(1);
        blocks
            .by_index
            .iter()
            .map(|(&index, buckets)| {
                let mut histogram = new_histogram();
                buckets.iter().for_each(|&(value, count)| record_us_n(&mut histogram, value, count));
                LatencyBlock { second: index * span, seconds: span, histogram: encode_histogram(&histogram) }
            })
            .collect()
    }

    /// The series for the result: one entry for every second from 0 to `seconds - 1` (empty seconds included,
    /// so a stall shows as a gap), plus any later second that recorded requests. `target` gives the level asked
    /// for in each second.
    pub fn to_seconds(&self, seconds: u32, target: impl Fn(u32) -> f64) -> Vec<Second> {
        let last_open = self.open.keys().next_back().copied();
        let last_closed = self.closed.keys().next_back().copied();
        let last = last_open.max(last_closed).map_or(0, |s| s + 1).max(seconds);
        (0..last)
            .map(|second| {
                let figures = self.open.get(&second).map(Closed::of).or_else(|| self.closed.get(&second).copied());
                let figures = figures.unwrap_or(Closed { requests: 0, errors: 0, p50_us: None, p99_us: None });
                Second {
                    second,
                    requests: figures.requests,
                    errors: figures.errors,
                    p50_us: figures.p50_us,
                    p99_us: figures.p99_us,
                    target: target(second),
                }
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

    #[test]
    fn an_interval_crosses_a_process_boundary_exactly() {
        let mut interval = Interval::new(41);
        for us in [1, 2, 999, 1000, 1001, 123_456, 3_599_999_999] {
            interval.record(Some(us), us > 1000);
        }
        interval.record(None, true);
        let json = serde_json::to_string(&interval).unwrap();
        let back: Interval = serde_json::from_str(&json).unwrap();
        assert_eq!((back.second, back.requests, back.errors), (41, 8, 4));
        assert_eq!(back.latency, interval.latency);
        fn buckets(i: &Interval) -> Vec<(u64, u64)> {
            i.latency.iter_recorded().map(|v| (v.value_iterated_to(), v.count_at_value())).collect()
        }
        assert_eq!(buckets(&back), buckets(&interval), "every bucket and its count");
        assert_eq!(buckets(&back).len(), 7);
        assert_eq!(back, interval);
        assert!(serde_json::from_str::<Interval>(&json.replace("\"latency\":\"", "\"latency\":\"x")).is_err());
    }

    /// Every latency of every block, decoded, as (value, count) buckets summed.
    fn total_of(blocks: &[LatencyBlock]) -> LatencyHistogram {
        let mut total = new_histogram();
        for block in blocks {
            total.add(crate::histogram::decode_histogram(&block.histogram).unwrap()).unwrap();
        }
        total
    }

    #[test]
    fn blocks_hold_every_latency_once_and_stay_few() {
        let mut t = Timeline::new();
        let mut all = new_histogram();
        for second in 0..1000u32 {
            for thread in 0..2u64 {
                let mut i = Interval::new(second);
                let us = 100 + u64::from(second % 7) * 1000 + thread;
                i.record(Some(us), false);
                record_us_n(&mut all, us, 1);
                t.add(i);
            }
        }
        let mut late = Interval::new(3);
        late.record(Some(5_000_000), false);
        record_us_n(&mut all, 5_000_000, 1);
        t.add(late);
        let blocks = t.to_blocks();
        assert!(blocks.len() <= MOST_BLOCKS, "{}", blocks.len());
        assert_eq!(blocks[0].seconds, 16, "1000 s in blocks of a power of two seconds");
        assert!(blocks.windows(2).all(|w| w[1].second == w[0].second + 16));
        assert_eq!(total_of(&blocks), all, "every latency, the late one too, in exactly one block");
        // A short run: one block a second, the open seconds included, empty seconds left out.
        let mut t = Timeline::new();
        for second in [0, 1, 3] {
            let mut i = Interval::new(second);
            i.record(Some(10 + u64::from(second)), false);
            t.add(i);
        }
        let blocks = t.to_blocks();
        assert_eq!(blocks.iter().map(|b| (b.second, b.seconds)).collect::<Vec<_>>(), [(0, 1), (1, 1), (3, 1)]);
        assert_eq!(total_of(&blocks).len(), 3);
    }

    #[test]
    fn a_long_run_keeps_few_histograms_and_every_figure() {
        let mut t = Timeline::new();
        for second in 0..1000 {
            for thread in 0..2u64 {
                let mut i = Interval::new(second);
                i.record(Some(100 + thread * 100), thread == 1);
                t.add(i);
            }
        }
        assert!(t.open.len() <= OPEN_SECONDS, "histograms are not kept for every second");
        let s = t.to_seconds(1000, |_| 0.0);
        assert_eq!(s.len(), 1000);
        assert!(s.iter().all(|x| x.requests == 2 && x.errors == 1 && x.p50_us == Some(100) && x.p99_us == Some(200)));
        let mut late = Interval::new(3);
        late.record(Some(1), false);
        t.add(late);
        assert_eq!(t.requests_in(3), 3, "a late report still counts");
    }
}
