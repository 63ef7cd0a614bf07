//! The HTML report's charts of a capacity search: per server, the mean and p99 latency of each level it probed
//! against the level, the SLO's latency limit drawn across, and the probes that broke the SLO crossed out, so that
//! how the search closed in on the capacity can be seen. When its probes disagreed when run again (the capacity
//! moved), a second chart gives each probe's level in the order they ran, so that when it moved can be seen.

use crate::analysis::capacity::Capacity;
use shootout_model::slo::Metric;

use crate::export::charts::{line_chart, Chart, Series};
use crate::suite::summary::SuiteSummary;

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
        .flat_map(|capacity| {
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
            let mut charts = vec![(caption, line_chart(&chart, &series))];
            if capacity.search.moved {
                charts.push(in_order(capacity, summary.unit));
            }
            charts
        })
        .collect()
}

/// A search whose probes disagreed: the level of each probe against its place in the order they ran, the probes
/// that broke the SLO crossed out.
fn in_order(capacity: &Capacity, unit: &str) -> (String, Option<String>) {
    let search = &capacity.search;
    let points: Vec<(f64, f64)> = search.probes.iter().enumerate().map(|(i, p)| ((i + 1) as f64, p.level)).collect();
    let failed: Vec<(f64, f64)> =
        search.probes.iter().zip(&points).filter(|(p, _)| !p.passed).map(|(_, &point)| point).collect();
    let title = format!("Probes of {}, in the order they ran", search.server);
    let y_label = format!("load ({unit}, log)");
    let chart = Chart {
        title: &title,
        x_label: "probe",
        y_label: &y_label,
        log_x: false,
        log_y: true,
        limit: None,
        crosses: (!failed.is_empty()).then(|| (failed, "broke the SLO".to_string())),
    };
    let caption = format!(
        "{}: {}. Each probe's level in the order it ran; a cross marks a probe that broke the SLO.",
        search.server,
        capacity.band(unit).unwrap_or_default()
    );
    (caption, line_chart(&chart, &[Series { name: "probe".into(), points }]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use shootout_model::search::{Ended, ServerSearch, SuiteProbe};

    #[test]
    fn a_search_that_moved_is_charted_in_the_order_its_probes_ran() {
        let probe = |level: f64, passed: bool| SuiteProbe {
            level,
            passed,
            repeats: 1,
            served: Some(level),
            client: false,
            broke: Vec::new(),
            undecided: false,
            leans: false,
        };
        let search = ServerSearch {
            server: "puma".into(),
            capacity: Some(800.0),
            failed_at: Some(1000.0),
            ended: Ended::Precise,
            precision: 0.05,
            probes: vec![probe(1000.0, true), probe(2000.0, false), probe(1000.0, false), probe(800.0, true)],
            seconds: 20.0,
            moved: true,
            settling_s: 0.0,
        };
        let (caption, svg) = in_order(&Capacity::of(&search, &[], &[]), "req/s");
        let svg = svg.expect("a chart");
        assert!(caption.starts_with("puma: its probes fell both ways between the two"), "{caption}");
        assert!(svg.contains("Probes of puma, in the order they ran") && svg.contains("broke the SLO"), "{svg}");
    }
}
