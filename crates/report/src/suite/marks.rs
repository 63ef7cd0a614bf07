//! How the tables write a cell's figures against the SLO, the same in the terminal, `report.md` and `report.html`:
//! [`figure`] writes one ([`crate::statistics::figures::number`]: near a condition's limit, with the digits that show which side
//! of it the figure is on, `4.0001` against `mean < 4ms`) and says whether the cell breaks a condition on it, which
//! the tables mark [`BROKEN`] (`✗`); [`more_columns`] gives a column to each figure the SLO judges that a table lacks
//! (`max`, `p99.9`, `checks`), so every mark has a place; [`legend`] is the line under the table that says what the
//! mark means.

use shootout_model::run::Statistic;
use shootout_model::slo::Metric;

use crate::analysis::{Cell, Judged};
use crate::suite::summary::SuiteSummary;

/// A figure of a cell as the tables write it, judged against the SLO.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    /// The figure in its unit: `4.0001`, `0.996%`.
    pub text: String,
    /// True when an SLO condition judges this figure.
    pub judged: bool,
    /// True when the cell breaks a condition on it: the tables mark it `✗`.
    pub broken: bool,
    /// True when a condition on it is undecided (its bounds straddle the limit): the tables mark it `?`.
    pub undecided: bool,
}

/// The mark beside a figure that breaks the SLO.
pub const BROKEN: &str = "✗";

/// The mark beside a percentile whose 95% bounds straddle its limit: too few requests to tell.
pub const UNDECIDED: &str = "?";

impl Figure {
    /// Its mark: [`BROKEN`], [`UNDECIDED`], or none.
    pub fn mark(&self) -> Option<&'static str> {
        if self.broken {
            Some(BROKEN)
        } else if self.undecided {
            Some(UNDECIDED)
        } else {
            None
        }
    }
}

/// The heading of a figure's column: `mean ms`, `p99.9 ms`, `errors`, `req/s median`.
pub fn heading(metric: Metric) -> String {
    match metric {
        Metric::Mean => "mean ms".into(),
        Metric::Percentile(p) => format!("p{p} ms"),
        Metric::Max => "max ms".into(),
        Metric::Errors => "errors".into(),
        Metric::Checks => "checks".into(),
        Metric::Rps => "req/s median".into(),
    }
}

/// `metric`'s figure of `cell` as every table writes it ([`crate::statistics::figures::number`]): near an SLO condition's limit,
/// with the digits that show which side of it the figure is on (`4.0001` against `mean < 4ms`, `0.996%` against
/// `errors < 1%`), and marked broken when the cell's median breaks a condition on it.
pub fn figure(cell: &Cell, metric: Metric) -> Figure {
    let on_it: Vec<&Judged> = cell.objectives.iter().filter(|o| o.condition.metric == metric).collect();
    let Some(value) = cell.figure(metric) else {
        return Figure { text: "—".into(), judged: false, broken: false, undecided: false };
    };
    let nearest =
        on_it.iter().map(|o| o.condition.limit).min_by(|a, b| (a - value).abs().total_cmp(&(b - value).abs()));
    Figure {
        text: crate::statistics::figures::number(metric, value, nearest),
        judged: !on_it.is_empty(),
        broken: on_it.iter().any(|o| o.broken()),
        undecided: on_it.iter().any(|o| o.undecided),
    }
}

/// The headline requests/s of `cell`, judged when the SLO bounds it and the headline is the median it is
/// judged on (with `statistic = "best"`, the median has a column of its own: [`more_columns`]).
pub fn headline(summary: &SuiteSummary, cell: &Cell) -> Figure {
    match summary.statistic {
        Statistic::Median => figure(cell, Metric::Rps),
        Statistic::Best => {
            Figure { text: format!("{:.1}", cell.rps_headline), judged: false, broken: false, undecided: false }
        }
    }
}

/// The figures the SLO judges that a table showing `shown` (and the headline requests/s) lacks, each once, in
/// the SLO's order: every judged figure is in every table, so that its mark has a place.
pub fn more_columns(summary: &SuiteSummary, shown: &[Metric]) -> Vec<Metric> {
    let mut more: Vec<Metric> = Vec::new();
    for c in &summary.slo {
        let in_table = shown.contains(&c.metric) || (c.metric == Metric::Rps && summary.statistic == Statistic::Median);
        if !in_table && !more.contains(&c.metric) {
            more.push(c.metric);
        }
    }
    more
}

/// The line that explains the marks, when a cell breaks the SLO: `✗ breaks the SLO (mean < 4ms, errors < 1%) …`.
/// A suite without an SLO marks no figure, and has no legend.
pub fn legend(summary: &SuiteSummary) -> Option<String> {
    if summary.slo.is_empty() {
        return None;
    }
    let undecided = summary.cells.iter().any(|c| c.objectives.iter().any(|o| o.undecided));
    let undecided = if undecided {
        format!(
            " {UNDECIDED}: a percentile whose 95% bounds, from the requests of every repeat, straddle its limit: too \
             few requests to tell which side it is on."
        )
    } else {
        String::new()
    };
    summary.cells.iter().any(|c| !c.meets_slo).then(|| {
        format!(
            "{BROKEN} breaks the SLO ({}): the figure marked is on the wrong side of its limit (a percentile, of the \
             requests of every repeat together, with its 95% bounds; any other figure, the median across repeats). \
             A figure near a limit is written with the digits that show which side it is on.{undecided}",
            summary.slo_text()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::summary::tests::{report, slo_report};

    #[test]
    fn a_figure_near_its_limit_shows_its_side_and_a_broken_one_is_marked() {
        let summary = SuiteSummary::of_report(&slo_report());
        let (puma, unicorn) = (&summary.cells[0], &summary.cells[1]);
        let mark = |f: Figure| (f.text, f.broken);
        assert_eq!(mark(figure(puma, Metric::Mean)), ("3.9999".into(), false));
        assert_eq!(mark(figure(unicorn, Metric::Mean)), ("4.0001".into(), true));
        assert_eq!(mark(figure(puma, Metric::Errors)), ("0.996%".into(), false), "not 1.00%");
        assert_eq!(mark(figure(unicorn, Metric::Errors)), ("0.50%".into(), false));
        assert_eq!(mark(figure(unicorn, Metric::Max)), ("12.000".into(), true));
        assert_eq!(mark(figure(puma, Metric::Percentile(99.0))), ("4.321".into(), false), "not judged");
        assert!(!figure(puma, Metric::Percentile(99.0)).judged && figure(puma, Metric::Mean).judged);
        assert_eq!(figure(puma, Metric::Percentile(99.9)).text, "—", "a figure the cell does not hold");
        let shown = [Metric::Mean, Metric::Percentile(99.0), Metric::Errors];
        assert_eq!(more_columns(&summary, &shown), [Metric::Max], "max is judged, and no table has a column for it");
        let mut best = slo_report();
        best.analysis.statistic = Statistic::Best;
        best.slo.push(shootout_model::slo::parse_condition("rps >= 1000").unwrap());
        let columns = more_columns(&SuiteSummary::of_report(&best), &shown);
        assert_eq!(
            columns,
            [Metric::Max, Metric::Rps],
            "the headline is the best repeat: the median judged gets a column"
        );
        assert!(legend(&summary).unwrap().starts_with("✗ breaks the SLO (mean < 4ms, errors < 1%, max < 10ms)"));
        assert_eq!(legend(&SuiteSummary::of_report(&report())), None, "no cell breaks it");
    }
}
