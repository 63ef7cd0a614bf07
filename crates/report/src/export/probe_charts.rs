//! The HTML report's charts of a capacity search: per server, the mean and p99 latency of each level it probed
//! against the level, the SLO's latency limit drawn across, and the probes that broke the SLO crossed out, so that
//! how the search closed in on the capacity can be seen.

use shootout_model::slo::Metric;

use crate::charts::{line_chart, Chart, Series};
use crate::suite_summary::SuiteSummary;

/// One chart per server that searched (none for a sweep), each with its caption.
pub fn probe_charts(summary: &SuiteSummary) -> Vec<(String, Option<String>)> {
    // A linear axis: the bisection near the capacity spreads out, where a log axis would stack it in one spot.
    let x_label = format!("load ({})", summary.unit);
    let limit = summary
        .slo
        .iter()
        .find(|c| matches!(c.metric, Metric::Mean | Metric::Percentile(_) | Metric::Max))
        .map(|c| (c.limit / 1000.0, format!("SLO: {}", c.text)));
    summary
        .capacities
        .iter()
        .map(|capacity| {
            let cells: Vec<_> = summary.cells.iter().filter(|c| c.server == capacity.search.server).collect();
            let line = |name: &str, pick: fn(&crate::analysis::Cell) -> f64| Series {
                name: name.to_string(),
                points: cells.iter().map(|c| (c.level, pick(c) / 1000.0)).collect(),
            };
            let series = [line("mean", |c| c.mean_us), line("p99", |c| c.p99_us)];
            let failed: Vec<(f64, f64)> = capacity
                .search
                .probes
                .iter()
                .filter(|p| !p.passed)
                .filter_map(|p| cells.iter().find(|c| c.level == p.level).map(|c| (c.level, c.mean_us / 1000.0)))
                .collect();
            let title = format!("Probes of {}", capacity.search.server);
            let chart = Chart {
                title: &title,
                x_label: &x_label,
                y_label: "latency (ms, log)",
                log_x: false,
                log_y: true,
                limit: limit.clone(),
                crosses: (!failed.is_empty()).then(|| (failed, "broke the SLO".to_string())),
            };
            let caption = format!(
                "{}: {}. Each probe's mean and p99 (the median across its repeats); a cross marks a probe that broke the SLO.",
                capacity.search.server,
                capacity.found(summary.unit)
            );
            (caption, line_chart(&chart, &series))
        })
        .collect()
}
