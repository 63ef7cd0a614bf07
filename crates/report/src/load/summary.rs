//! [`LoadSummary`]: the figures of one load run, each defined once here (and in docs/reference/outputs.md).

use shootout_model::LoadResult;

/// The siege-style figures of one run, derived from its result.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadSummary {
    /// Requests that got a complete response, whatever its status.
    pub transactions: u64,
    /// Percentage of requests that got a successful response: `successful / (transactions + transport failures)`;
    /// a response of 400 or more is not available, whatever came back.
    pub availability_pct: f64,
    /// Length of the measured window, seconds.
    pub elapsed_s: f64,
    /// Bytes received.
    pub data_bytes: u64,
    /// Mean latency, µs.
    pub response_time_us: f64,
    /// The latency's standard deviation, µs (population), as wrk prints it beside its mean.
    pub response_time_stdev_us: f64,
    /// The completed rate: responses that arrived inside the measured window, per second of it (the result's
    /// `throughput.requests_per_s`). Responses that came after sending stopped (the drain) are transactions but
    /// not in the rate.
    pub transaction_rate: f64,
    /// Bytes received inside the window per second of it.
    pub throughput_bytes: f64,
    /// Mean number of requests in flight inside the window (the result's `throughput.concurrency`; for results
    /// from before it was measured, total latency over elapsed time).
    pub concurrency: f64,
    /// How long after the window the last counted request ended, seconds.
    pub drain_s: f64,
    /// Requests that ended in the drain.
    pub after_window: u64,
    /// Of those, requests due in the warm-up that were still unanswered at the window's end.
    pub held_over: u64,
    /// Requests still in flight when a search's probe stopped waiting, its verdict settled: their wait so far in
    /// the latency, in no count.
    pub left_out: u64,
    /// Responses with status < 400.
    pub successful: u64,
    /// Responses with status >= 400 plus transport failures.
    pub failed: u64,
    /// Largest latency, µs.
    pub longest_us: u64,
    /// Smallest latency, µs.
    pub shortest_us: u64,
}

impl LoadSummary {
    /// Computes the figures.
    pub fn of(result: &LoadResult) -> LoadSummary {
        let r = &result.requests;
        let transactions = r.ok + r.http_errors;
        let attempts = transactions + r.failed;
        let elapsed = result.duration_s;
        let latency = &result.latency;
        LoadSummary {
            transactions,
            availability_pct: if attempts > 0 { 100.0 * r.ok as f64 / attempts as f64 } else { 0.0 },
            elapsed_s: elapsed,
            data_bytes: result.bytes_received,
            response_time_us: latency.mean_us,
            response_time_stdev_us: latency.stdev_us,
            transaction_rate: result.throughput.requests_per_s,
            throughput_bytes: result.throughput.bytes_per_s,
            concurrency: match result.throughput.concurrency {
                0.0 if elapsed > 0.0 => latency.mean_us * latency.count as f64 / 1e6 / elapsed,
                measured => measured,
            },
            drain_s: result.drain_s,
            after_window: r.after_window,
            held_over: r.held_over,
            left_out: r.left_out,
            successful: r.ok,
            failed: r.http_errors + r.failed,
            longest_us: latency.max_us,
            shortest_us: latency.min_us,
        }
    }
}
