//! [`Ratio`]: the verdicts between servers at one level, each the fastest server against each other one with the
//! 95% interval of their ratio ([`crate::statistics::interval`]).
//!
//! What is compared depends on what the load left free to differ. In the closed model, and in the open model at a
//! rate some server fell behind, it is requests/s. In the open model at a rate every server kept to, requests/s is
//! the rate offered and says nothing: two servers that both answered 50 requests a second can differ 40× in how
//! long each took. There the verdict compares latency instead ([`Cell::kept_rate`]): the SLO's latency figures,
//! else the mean and the p99 ([`compared_latencies`]). Lower latency is better, so a latency ratio is the slower
//! server's figure over the faster one's, and its interval that of the repeats' figures, by the same rules as
//! requests/s.

use serde::Serialize;
use shootout_model::run::Statistic;
use shootout_model::slo::{Metric, Slo};

use crate::analysis::{Cell, LatencyRepeats};
use crate::statistics::interval::{ratio_interval, served, Interval, NOISE_FLOOR};

/// `faster` did better than `slower` at `level` by `ratio`, with a 95% interval: served `ratio` times its
/// requests/s, or (with a latency `figure`) took `1 / ratio` of its time.
#[derive(Debug, Clone, Serialize)]
pub struct Ratio {
    /// Level.
    pub level: f64,
    /// The latency figure compared, for an open-model level every server kept to; none (`null`) for requests/s.
    pub figure: Option<Metric>,
    /// The faster server: more requests/s, or the lower latency.
    pub faster: String,
    /// The slower one.
    pub slower: String,
    /// Requests/s: the ratio of the medians (of the best repeats with [`Statistic::Best`]); latency: the slower
    /// server's figure over the faster one's, as the table shows them. None (`null`) when the divisor is 0, which
    /// the reports say in words.
    pub ratio: Option<f64>,
    /// The 95% interval of the ratio of the repeats' geometric means (Welch's t on their logarithms); none
    /// (`null`) with fewer than two repeats that served something on a side.
    pub low: Option<f64>,
    /// Its upper bound.
    pub high: Option<f64>,
    /// True when the difference is clear: the whole interval lies above 1 by more than the noise floor
    /// ([`NOISE_FLOOR`]), and, for a percentile, the two cells' percentiles over all their requests have 95% bounds
    /// apart. A ratio whose interval reaches 1 or the floor, or that has no interval, is no clear difference,
    /// whatever its figure.
    pub clear: bool,
    /// True when a percentile's interval alone would make the difference clear, but the two percentiles over all
    /// their requests have 95% bounds that meet: the requests cannot tell them apart.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub bounds_meet: bool,
    /// The servers of the pair whose cell was client-bound (the faster first): their figures measured shootout,
    /// so the ratio is no verdict on them (or, for the faster alone and requests/s, only a lower bound).
    pub client_bound: Vec<String>,
}

impl Ratio {
    /// True when the faster server's cell alone was client-bound: a requests/s ratio is a lower bound.
    pub fn faster_client_bound(&self) -> bool {
        self.client_bound.len() == 1 && self.client_bound[0] == self.faster
    }
}

/// The latency figures an open-model verdict compares: the SLO's latency conditions' figures, each once in its
/// order, else the mean and the p99.
pub fn compared_latencies(slo: &[Slo]) -> Vec<Metric> {
    let mut metrics: Vec<Metric> = Vec::new();
    for c in slo {
        if matches!(c.metric, Metric::Mean | Metric::Percentile(_) | Metric::Max) && !metrics.contains(&c.metric) {
            metrics.push(c.metric);
        }
    }
    if metrics.is_empty() {
        metrics = vec![Metric::Mean, Metric::Percentile(99.0)];
    }
    metrics
}

/// At every level, the fastest server against each other one: by latency where every cell there kept to its rate
/// ([`Cell::kept_rate`]), each compared figure in turn, else by requests/s.
pub fn ratios(cells: &[Cell], levels: &[f64], statistic: Statistic) -> Vec<Ratio> {
    let mut ratios = Vec::new();
    for &level in levels {
        let here: Vec<&Cell> = cells.iter().filter(|c| c.level == level).collect();
        if here.len() < 2 {
            continue;
        }
        if here.iter().all(|c| c.kept_rate) {
            for latency in &here[0].latencies {
                let mut by: Vec<&Cell> = here.iter().copied().filter(|c| c.figure(latency.metric).is_some()).collect();
                by.sort_by(|a, b| a.figure(latency.metric).unwrap().total_cmp(&b.figure(latency.metric).unwrap()));
                if let Some((fastest, others)) = by.split_first() {
                    ratios
                        .extend(others.iter().filter_map(|other| latency_ratio(fastest, other, level, latency.metric)));
                }
            }
            continue;
        }
        let mut by = here;
        by.sort_by(|a, b| b.rps_headline.total_cmp(&a.rps_headline));
        if let Some((fastest, others)) = by.split_first() {
            ratios.extend(others.iter().map(|other| ratio(fastest, other, level, statistic)));
        }
    }
    ratios
}

/// The one verdict between two cells of one level, the better first: their latency on the first compared
/// figure where both kept to their rate, else their requests/s.
pub fn verdict(a: &Cell, b: &Cell, level: f64, statistic: Statistic) -> Ratio {
    if a.kept_rate && b.kept_rate {
        if let Some(metric) = a.latencies.first().map(|l| l.metric) {
            let (fa, fb) = (a.figure(metric).unwrap_or(0.0), b.figure(metric).unwrap_or(0.0));
            let (faster, slower) = if fa <= fb { (a, b) } else { (b, a) };
            if let Some(r) = latency_ratio(faster, slower, level, metric) {
                return r;
            }
        }
    }
    ratio(a, b, level, statistic)
}

/// The fastest cell's headline requests/s against another's, with the 95% interval of their ratio.
pub fn ratio(faster: &Cell, slower: &Cell, level: f64, statistic: Statistic) -> Ratio {
    let (f, s) = (crate::analysis::pick(statistic, &faster.rps), crate::analysis::pick(statistic, &slower.rps));
    let interval = ratio_interval(&served(&faster.rps), &served(&slower.rps)).ok();
    between(faster, slower, level, None, (s > 0.0).then(|| f / s), interval)
}

/// `slower`'s figure of `metric` over `faster`'s, with the interval of their repeats' figures; none when a cell
/// has no such figure (its repeats were measured before it was kept). A percentile's difference is clear only
/// where the requests can tell it too: the two cells' percentiles, each over its repeats' requests together, have
/// 95% bounds apart (three p99s of 150 requests each are their second-slowest requests, and an interval on three
/// of them is no better than they are).
fn latency_ratio(faster: &Cell, slower: &Cell, level: f64, metric: Metric) -> Option<Ratio> {
    let (fast, slow) = (repeats(faster, metric)?, repeats(slower, metric)?);
    let (f, s) = (faster.figure(metric)?, slower.figure(metric)?);
    let interval = ratio_interval(&served(&slow.us), &served(&fast.us)).ok();
    let mut ratio = between(faster, slower, level, Some(metric), (f > 0.0).then(|| s / f), interval);
    if let (Some(fast), Some(slow)) = (fast.bounds, slow.bounds) {
        ratio.bounds_meet = ratio.clear && fast.high.is_none_or(|high| slow.low <= high);
        ratio.clear &= !ratio.bounds_meet;
    }
    Some(ratio)
}

/// A cell's repeats' figures of `metric`.
fn repeats(cell: &Cell, metric: Metric) -> Option<&LatencyRepeats> {
    cell.latencies.iter().find(|l| l.metric == metric)
}

/// The ratio of `faster` over `slower` on `figure` (requests/s for none): its interval, its verdict, and the cells
/// of the pair that were client-bound.
fn between(
    faster: &Cell,
    slower: &Cell,
    level: f64,
    figure: Option<Metric>,
    ratio: Option<f64>,
    interval: Option<Interval>,
) -> Ratio {
    Ratio {
        level,
        figure,
        faster: faster.server.clone(),
        slower: slower.server.clone(),
        ratio,
        low: interval.map(|i| i.low),
        high: interval.map(|i| i.high),
        clear: interval.is_some_and(|i| {
            crate::statistics::verdict::verdict(&i, NOISE_FLOOR) == crate::statistics::verdict::Verdict::Improved
        }),
        bounds_meet: false,
        client_bound: [faster, slower].iter().filter(|c| c.client_bound()).map(|c| c.server.clone()).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::tests::cell;

    /// A cell at 50/s that kept to it, whose repeats' means are `means` (µs; its p99 twice each).
    fn kept(server: &str, means: &[f64]) -> Cell {
        let mean = crate::analysis::median(means);
        Cell {
            kept_rate: true,
            latencies: vec![
                LatencyRepeats { metric: Metric::Mean, us: means.to_vec(), bounds: None },
                LatencyRepeats {
                    metric: Metric::Percentile(99.0),
                    us: means.iter().map(|m| 2.0 * m).collect(),
                    bounds: None,
                },
            ],
            ..cell(server, 50.0, &[50.0, 50.0, 50.0], mean)
        }
    }

    #[test]
    fn at_a_rate_every_server_kept_to_the_verdict_is_on_latency_the_slower_over_the_faster() {
        let cells = [kept("fast", &[1000.0, 1100.0, 1200.0]), kept("slow", &[20_000.0, 20_500.0, 21_000.0])];
        let found = ratios(&cells, &[50.0], Statistic::Median);
        assert_eq!(found.len(), 2, "the mean and the p99: {found:?}");
        for (r, figure) in found.iter().zip([Metric::Mean, Metric::Percentile(99.0)]) {
            assert_eq!((r.figure, r.faster.as_str(), r.slower.as_str()), (Some(figure), "fast", "slow"));
            let (low, high) = (r.low.unwrap(), r.high.unwrap());
            assert!((r.ratio.unwrap() - 20_500.0 / 1100.0).abs() < 1e-9, "{r:?}");
            assert!(r.clear && low < r.ratio.unwrap() && r.ratio.unwrap() < high && low > 15.0 && high < 24.0, "{r:?}");
        }
        // An A/A pair: no clear difference, whichever is first.
        let twins = [kept("a", &[1000.0, 1100.0, 1200.0]), kept("b", &[1050.0, 1150.0, 1100.0])];
        assert!(ratios(&twins, &[50.0], Statistic::Median).iter().all(|r| !r.clear && r.figure.is_some()));
        // The one verdict of a pair (the SLO answers' no clear winner) is the first figure, the better first.
        let v = verdict(&cells[1], &cells[0], 50.0, Statistic::Median);
        assert_eq!((v.figure, v.faster.as_str()), (Some(Metric::Mean), "fast"));
    }

    /// An A/A pair whose three p99s each (of 150 requests) happened to lie apart: Welch's interval on them alone
    /// would call it clear; the percentiles over their requests together have bounds that meet, and it is not.
    #[test]
    fn a_percentile_difference_is_clear_only_where_the_requests_tell_it_too() {
        let bounds = |low: u64, high: Option<u64>| crate::statistics::quantile::Bounds {
            value: low,
            low,
            high,
            requests: 450,
            blocks: 9,
            clustering: 1.0,
            past: None,
        };
        let with = |mut cell: Cell, p99: crate::statistics::quantile::Bounds| {
            cell.latencies[1].bounds = Some(p99);
            cell
        };
        let a = with(kept("a", &[1000.0, 1010.0, 1020.0]), bounds(1_500, Some(2_600)));
        let b = with(kept("b", &[1300.0, 1310.0, 1320.0]), bounds(2_100, Some(3_400)));
        let p99 = |cells: &[Cell]| {
            ratios(cells, &[50.0], Statistic::Median).into_iter().find(|r| r.figure == Some(Metric::Percentile(99.0)))
        };
        let told = p99(&[a.clone(), b.clone()]).unwrap();
        assert!(!told.clear && told.low.unwrap() > 1.02, "{told:?}");
        assert!(told.bounds_meet, "{told:?}");
        // Bounds apart: clear.
        let c = with(kept("c", &[13_000.0, 13_100.0, 13_200.0]), bounds(20_000, Some(31_000)));
        assert!(p99(&[a, c]).unwrap().clear);
    }

    #[test]
    fn where_a_server_fell_behind_the_verdict_is_on_requests_per_second() {
        let behind = Cell { rps: vec![30.0, 31.0, 29.0], rps_headline: 30.0, ..kept("slow", &[20_000.0; 3]) };
        let cells = [kept("fast", &[1000.0; 3]), Cell { kept_rate: false, ..behind }];
        let found = ratios(&cells, &[50.0], Statistic::Median);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!((found[0].figure, found[0].faster.as_str()), (None, "fast"));
        assert!(found[0].clear, "{:?}", found[0]);
    }

    #[test]
    fn the_figures_compared_are_the_slos_latencies_else_the_mean_and_the_p99() {
        let slo =
            |texts: &[&str]| texts.iter().map(|t| shootout_model::slo::parse_condition(t).unwrap()).collect::<Vec<_>>();
        assert_eq!(compared_latencies(&slo(&["errors < 1%"])), [Metric::Mean, Metric::Percentile(99.0)]);
        assert_eq!(
            compared_latencies(&slo(&["p99.9 < 10ms", "errors < 1%", "mean < 2ms", "p99.9 <= 20ms"])),
            [Metric::Percentile(99.9), Metric::Mean]
        );
    }
}
