//! [`value`]: the one place that reads a figure out of a load result, for SLOs, `--fail-if` thresholds and
//! comparisons alike.

use shootout_metrics::decode_histogram;
use shootout_model::slo::{Condition, Metric};
use shootout_model::LoadResult;

/// `metric` in `result`: µs for latencies, percent for errors, responses per second for rps. Percentiles not in
/// the stored table are read from the raw histogram.
pub fn value(metric: Metric, result: &LoadResult) -> f64 {
    match metric {
        Metric::Mean => result.latency.mean_us,
        Metric::Max => result.latency.max_us as f64,
        Metric::Errors => errors_pct(result),
        Metric::Rps => result.throughput.requests_per_s,
        Metric::Percentile(p) => match result.latency.percentiles.iter().find(|x| x.percentile == p) {
            Some(stored) => stored.us as f64,
            None => decode_histogram(&result.latency.histogram).map_or(0.0, |h| h.value_at_percentile(p) as f64),
        },
    }
}

/// Failed requests and HTTP errors, percent of all requests (100 when nothing was sent).
pub fn errors_pct(result: &LoadResult) -> f64 {
    let r = &result.requests;
    if r.total == 0 {
        100.0
    } else {
        100.0 * (r.failed + r.http_errors) as f64 / r.total as f64
    }
}

/// A figure as people read it: milliseconds for latencies, percent, requests per second.
pub fn show(metric: Metric, value: f64) -> String {
    match metric {
        Metric::Errors => format!("{value:.2}%"),
        Metric::Rps => format!("{value:.1} req/s"),
        _ => format!("{} ms", crate::units::ms(value)),
    }
}

/// The conditions of `conditions` that hold for `result`, each with the value that made it hold.
pub fn holding<'a>(conditions: &'a [Condition], result: &LoadResult) -> Vec<(&'a Condition, f64)> {
    conditions.iter().map(|c| (c, value(c.metric, result))).filter(|(c, v)| c.holds(*v)).collect()
}
