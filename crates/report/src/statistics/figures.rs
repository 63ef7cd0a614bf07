//! [`value`]: the one place that reads a figure out of a load result, for SLOs, `--fail-if` thresholds and
//! comparisons alike; [`number`] and [`show`], the one place that writes one (ms with three decimals, percent with
//! two, requests/s with one), near a limit with the digits that show which side of it the figure is on.

use shootout_metrics::percentile_us;
use shootout_model::slo::{Condition, Metric};
use shootout_model::LoadResult;

/// `metric` in `result`: µs for latencies, percent for errors, successful responses per second for rps.
/// Percentiles are read by [`percentile_us`]: from the stored table, or else from the raw histogram.
pub fn value(metric: Metric, result: &LoadResult) -> f64 {
    match metric {
        Metric::Mean => result.latency.mean_us,
        Metric::Max => result.latency.max_us as f64,
        Metric::Errors => errors_pct(result),
        Metric::Checks => checks_failed_pct(result),
        Metric::Rps => successful_per_s(result),
        Metric::Percentile(p) => percentile_us(&result.latency, p) as f64,
    }
}

/// Responses with a status below 400 per second: the throughput servers are compared on, so that a server
/// answering 503 quickly does not pass for a fast one (`throughput.requests_per_s` counts every response).
pub fn successful_per_s(result: &LoadResult) -> f64 {
    let r = &result.requests;
    match r.ok + r.http_errors {
        0 => 0.0,
        answered => result.throughput.requests_per_s * r.ok as f64 / answered as f64,
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

/// Scenarios: responses that failed a check, percent of all responses (0 when nothing was answered or checked).
pub fn checks_failed_pct(result: &LoadResult) -> f64 {
    let r = &result.requests;
    match r.ok + r.http_errors {
        0 => 0.0,
        responses => 100.0 * r.checks_failed as f64 / responses as f64,
    }
}

/// A figure of `metric` as the tables write it: latencies in ms with three decimals, percentages with two and a
/// `%`, requests per second with one; near `bound` (in the stored unit, as `value` is), with the digits that show
/// which side of it the figure is on ([`crate::statistics::bound::figure`]): `4.0001` against 4 ms, `0.996%` against 1%.
pub fn number(metric: Metric, value: f64, bound: Option<f64>) -> String {
    let (scale, decimals, suffix) = match metric {
        Metric::Mean | Metric::Percentile(_) | Metric::Max => (1e-3, 3, ""),
        Metric::Errors | Metric::Checks => (1.0, 2, "%"),
        Metric::Rps => (1.0, 1, ""),
    };
    format!("{}{suffix}", crate::statistics::bound::figure(value * scale, bound.map(|b| b * scale), decimals))
}

/// A figure as people read it beside the condition that judged it: `4.0001 ms`, `0.996%`, `1200.0 req/s`.
pub fn show(condition: &Condition, value: f64) -> String {
    let number = number(condition.metric, value, Some(condition.limit));
    match condition.metric {
        Metric::Errors | Metric::Checks => number,
        Metric::Rps => format!("{number} req/s"),
        _ => format!("{number} ms"),
    }
}

/// The conditions of `conditions` that hold for `result`, each with the value that made it hold (`--fail-if`).
pub fn holding<'a>(conditions: &'a [Condition], result: &LoadResult) -> Vec<(&'a Condition, f64)> {
    judged(conditions, result, true)
}

/// The conditions no figure of `result` can judge: a latency, a rate or a share of checks of a run that measured
/// no request (its errors are 100%, a figure). A gate over them says so rather than pass.
pub fn unjudged<'a>(conditions: &'a [Condition], result: &LoadResult) -> Vec<&'a Condition> {
    conditions.iter().filter(|c| result.requests.total == 0 && c.metric != Metric::Errors).collect()
}

/// The objectives of `objectives` that `result` breaks, each with the value that broke it (`--slo`).
pub fn breaking<'a>(objectives: &'a [Condition], result: &LoadResult) -> Vec<(&'a Condition, f64)> {
    judged(objectives, result, false)
}

/// The conditions that hold for `result` (or, with `holds` false, those that do not), each with its figure.
fn judged<'a>(conditions: &'a [Condition], result: &LoadResult, holds: bool) -> Vec<(&'a Condition, f64)> {
    conditions
        .iter()
        .map(|c| (c, value(c.metric, result)))
        .filter(|(c, v)| crate::statistics::bound::holds(c, *v) == holds)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 47: `--fail-if 'p99>200ms'` over a run that measured nothing passed, its p99 read as 0.
    #[test]
    fn a_gate_over_a_run_that_measured_nothing_cannot_judge_its_latency() {
        let trial: shootout_model::run::TrialRecord =
            serde_json::from_str(include_str!("../../tests/trial.json")).unwrap();
        let mut r = trial.result;
        let conditions: Vec<Condition> = ["p99>200ms", "errors>1%", "rps<10", "checks>0%"]
            .iter()
            .map(|c| shootout_model::slo::parse_condition(c).unwrap())
            .collect();
        assert!(unjudged(&conditions, &r).is_empty(), "a run with requests is judged");
        r.requests = Default::default();
        let texts: Vec<&str> = unjudged(&conditions, &r).iter().map(|c| c.text.as_str()).collect();
        assert_eq!(texts, ["p99>200ms", "rps<10", "checks>0%"], "its errors are 100%: a figure");
    }

    #[test]
    fn a_server_answering_errors_fast_is_not_counted_fast() {
        let trial: shootout_model::run::TrialRecord =
            serde_json::from_str(include_str!("../../tests/trial.json")).unwrap();
        let mut result = trial.result;
        let all = result.throughput.requests_per_s;
        assert_eq!(successful_per_s(&result), all, "every response was a success");
        result.requests.http_errors = result.requests.ok * 9;
        result.throughput.requests_per_s = all * 10.0;
        assert!((value(Metric::Rps, &result) - all).abs() < 1e-6, "nine 503s for every 200 count for nothing");
    }

    #[test]
    fn a_figure_beside_its_condition_shows_its_side() {
        let condition = |text: &str| shootout_model::slo::parse_condition(text).unwrap();
        assert_eq!(show(&condition("mean > 200ms"), 200_000.4), "200.0004 ms", "not 200.000 ms");
        assert_eq!(show(&condition("errors > 1%"), 1.004), "1.004%", "not 1.00%");
        assert_eq!(show(&condition("p99 > 200ms"), 250_000.0), "250.000 ms");
        assert_eq!(show(&condition("rps < 1000"), 999.96), "999.96 req/s");
    }
}
