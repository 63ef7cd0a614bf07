//! The verdicts in words: each [`Ratio`] between two servers at a level said as its interval allows ("a served
//! 1.32× [1.25–1.40] the requests/s of b", "slow's p99 was 40.12× [31.50–51.10] fast's", "no clear difference",
//! "no verdict … the client was the limit"), a ratio without a figure said in words, and the legend every format
//! prints under them. The ratios themselves are decided in [`crate::analysis::ratios`].

use shootout_model::slo::Metric;

use crate::analysis::{Cell, Ratio};
use crate::suite::summary::SuiteSummary;

impl SuiteSummary {
    /// What a ratio without a figure (the slower server's headline is 0) means, in words: `a served 1200.0
    /// requests/s and b none at 4 users`, `neither a nor b served a successful response at 4 users`, or, when some
    /// repeat served something but the median is 0, `… b 0.0 (the median of its repeats) …`; none for a ratio with a
    /// figure.
    pub fn served_nothing(&self, r: &Ratio) -> Option<String> {
        if r.ratio.is_some() {
            return None;
        }
        let (faster, slower) = (self.cell(&r.faster, r.level)?, self.cell(&r.slower, r.level)?);
        let nothing = |c: &Cell| if c.rps_max > 0.0 { "0.0 (the median of its repeats)" } else { "none" };
        let at = self.level(r.level);
        Some(match (faster.rps_headline > 0.0, faster.rps_max > 0.0 || slower.rps_max > 0.0) {
            (true, _) => format!(
                "{} served {:.1} requests/s and {} {} at {at}",
                r.faster,
                faster.rps_headline,
                r.slower,
                nothing(slower)
            ),
            (false, false) => format!("neither {} nor {} served a successful response at {at}", r.faster, r.slower),
            (false, true) => {
                format!("{} served {} and {} {} at {at}", r.faster, nothing(faster), r.slower, nothing(slower))
            }
        })
    }

    /// A ratio in words, each server's name written by `name` (bold in Markdown), the words held to the interval:
    /// `puma served 1.32× [1.25–1.40] the requests/s of unicorn at 16 users` only for a clear difference (the whole
    /// interval above 1 by more than the noise floor); `no clear difference between a and b at 1 user (a served
    /// 1.01× [0.99–1.02] the requests/s of b)` otherwise, or `a served 2.00× the requests/s of b at 4 users (too few
    /// repeats for an interval: no verdict)` from one repeat; for a client-bound cell, `a served at least …: the
    /// client was the limit of a` (the faster one alone, a clear difference) or `no verdict between a and b at 4
    /// users: the client was the limit of b (…)`; and
    /// [`SuiteSummary::served_nothing`]'s words for a ratio without a figure. A latency ratio (an open-model level
    /// every server kept to) reads the same way with its figure: `slow's p99 was 40.12× [31.50–51.10] fast's at 50
    /// req/s (20.112 against 0.501 ms)`, `no clear difference in p99 between a and b at 50 req/s (…)`, saying so
    /// when the repeats alone would have told them apart but the requests together do not.
    pub fn ratio_words(&self, r: &Ratio, name: &dyn Fn(&str) -> String) -> String {
        if let Some(words) = self.served_nothing(r) {
            return words;
        }
        let (a, b, at) = (name(&r.faster), name(&r.slower), self.level(r.level));
        let measured = self.ratio_clause(r, name, &ratio_figures(r));
        let values = self.latency_values(r);
        let (apart, inside) = match &values {
            Some(v) => (format!(" ({v})"), format!(": {v}")),
            None => (String::new(), String::new()),
        };
        if r.faster_client_bound() && r.clear && r.figure.is_none() {
            return format!(
                "{a} served at least {} the requests/s of {b} at {at}: the client was the limit of {a}",
                ratio_figures(r)
            );
        }
        if !r.client_bound.is_empty() {
            let whose = match r.client_bound.len() {
                1 => name(&r.client_bound[0]),
                _ => "both".to_string(),
            };
            return format!("no verdict between {a} and {b} at {at}: the client was the limit of {whose} ({measured})");
        }
        let what = r.figure.map_or_else(String::new, |m| format!(" in {}", latency_name(m)));
        match (r.clear, r.low.is_some()) {
            (true, _) => format!("{measured} at {at}{apart}"),
            // One repeat (a side) says nothing of the noise: the figure stands, with no verdict on it.
            (false, false) => format!(
                "{} at {at}{apart} (too few repeats for an interval: no verdict)",
                self.ratio_clause(r, name, &times(r))
            ),
            (false, true) => {
                let meet = match r.bounds_meet {
                    true => "; over all their requests, the two percentiles have 95% bounds that meet",
                    false => "",
                };
                format!("no clear difference{what} between {a} and {b} at {at} ({measured}{inside}{meet})")
            }
        }
    }

    /// The ratio `figures` between the two servers of `r`: `a served 1.32× [1.25–1.40] the requests/s of b`, or
    /// for latency `b's p99 was 40.12× [31.50–51.10] a's`.
    pub(crate) fn ratio_clause(&self, r: &Ratio, name: &dyn Fn(&str) -> String, figures: &str) -> String {
        let (a, b) = (name(&r.faster), name(&r.slower));
        match r.figure {
            None => format!("{a} served {figures} the requests/s of {b}"),
            Some(metric) => format!("{b}'s {} was {figures} {a}'s", latency_name(metric)),
        }
    }

    /// A latency ratio's two figures, the slower first: `20.112 against 0.501 ms`; none for requests/s.
    fn latency_values(&self, r: &Ratio) -> Option<String> {
        let metric = r.figure?;
        let figure = |server: &str| self.cell(server, r.level).and_then(|c| c.figure(metric));
        let (slow, fast) = (figure(&r.slower)?, figure(&r.faster)?);
        Some(format!("{:.3} against {:.3} ms", slow / 1e3, fast / 1e3))
    }
}

/// What the brackets of a ratio hold and when a difference is clear, under the verdicts of every format.
pub const RATIO_LEGEND: &str = "[low–high]: the 95% interval of a ratio across repeats; a difference is clear only \
when the whole interval lies more than 2% above 1.";

/// A ratio: `1.32×` (`—` without one: [`SuiteSummary::served_nothing`] says why in words).
pub fn times(r: &Ratio) -> String {
    r.ratio.map_or_else(|| "—".into(), |ratio| format!("{ratio:.2}×"))
}

/// A ratio's 95% interval: `[1.25–1.40]`, or `(too few repeats for an interval)`.
pub fn interval(r: &Ratio) -> String {
    match (r.low, r.high) {
        (Some(low), Some(high)) => format!("[{low:.2}–{high:.2}]"),
        _ => "(too few repeats for an interval)".into(),
    }
}

/// A ratio and its interval: `1.32× [1.25–1.40]`.
pub fn ratio_figures(r: &Ratio) -> String {
    format!("{} {}", times(r), interval(r))
}

/// A latency figure in a verdict's words: `mean latency`, `p99`, `longest request`.
fn latency_name(metric: Metric) -> String {
    match metric {
        Metric::Mean => "mean latency".into(),
        Metric::Percentile(p) => format!("p{p}"),
        Metric::Max => "longest request".into(),
        other => crate::suite::marks::heading(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::limit::Limit;
    use crate::suite::summary::tests::report;

    /// Issue 47: every difference read as a win (`twin-a served 1.01× [0.99–1.02] the requests/s of twin-b`), and
    /// a verdict on client-bound cells read as one on the servers.
    #[test]
    fn the_words_of_a_ratio_match_its_interval_and_its_limits() {
        let mut summary = SuiteSummary::of_report(&report());
        summary.cells[1].limit = Limit::Waiting { busy: 0.5 };
        summary.cells[1].p99_us = 5703.7;
        let plain = |name: &str| name.to_string();
        let with = |low, high, clear, client: &[&str]| Ratio {
            low,
            high,
            clear,
            client_bound: client.iter().map(|s| s.to_string()).collect(),
            ..summary.ratios[0].clone()
        };
        let said = |r: Ratio| summary.ratio_words(&r, &plain);
        assert_eq!(
            said(with(Some(1.25), Some(1.4), true, &[])),
            "puma served 1.32× [1.25–1.40] the requests/s of unicorn|3 at 16 users"
        );
        assert_eq!(
            said(with(Some(0.99), Some(1.02), false, &[])),
            "no clear difference between puma and unicorn|3 at 16 users (puma served 1.32× [0.99–1.02] the requests/s \
             of unicorn|3)"
        );
        assert_eq!(
            said(with(None, None, false, &[])),
            "puma served 1.32× the requests/s of unicorn|3 at 16 users (too few repeats for an interval: no verdict)"
        );
        assert_eq!(
            said(with(Some(1.25), Some(1.4), true, &["puma"])),
            "puma served at least 1.32× [1.25–1.40] the requests/s of unicorn|3 at 16 users: the client was the limit \
             of puma"
        );
        assert_eq!(
            said(with(Some(0.9), Some(1.4), false, &["puma"])),
            "no verdict between puma and unicorn|3 at 16 users: the client was the limit of puma (puma served 1.32× \
             [0.90–1.40] the requests/s of unicorn|3)"
        );
        assert!(said(with(Some(1.25), Some(1.4), true, &["unicorn|3"]))
            .starts_with("no verdict between puma and unicorn|3 at 16 users: the client was the limit of unicorn|3 ("));
        assert!(said(with(Some(1.25), Some(1.4), true, &["puma", "unicorn|3"]))
            .starts_with("no verdict between puma and unicorn|3 at 16 users: the client was the limit of both ("));
        let bold = summary.ratio_words(&with(Some(1.25), Some(1.4), true, &[]), &|n| format!("**{n}**"));
        assert_eq!(bold, "**puma** served 1.32× [1.25–1.40] the requests/s of **unicorn|3** at 16 users");
        // Issue 61: a latency verdict names its figure and gives both.
        let p99 = |low, high, clear| Ratio { figure: Some(Metric::Percentile(99.0)), ..with(low, high, clear, &[]) };
        assert_eq!(
            said(p99(Some(1.25), Some(1.4), true)),
            "unicorn|3's p99 was 1.32× [1.25–1.40] puma's at 16 users (5.704 against 4.321 ms)"
        );
        assert_eq!(
            said(p99(Some(0.99), Some(1.4), false)),
            "no clear difference in p99 between puma and unicorn|3 at 16 users (unicorn|3's p99 was 1.32× [0.99–1.40] \
             puma's: 5.704 against 4.321 ms)"
        );
        assert_eq!(
            said(p99(None, None, false)),
            "unicorn|3's p99 was 1.32× puma's at 16 users (5.704 against 4.321 ms) (too few repeats for an interval: \
             no verdict)"
        );
    }

    #[test]
    fn a_ratio_without_a_figure_is_said_in_words() {
        let mut summary = SuiteSummary::of_report(&report());
        let zero = |c: &mut Cell, max: f64| (c.rps_headline, c.rps_median, c.rps_max) = (0.0, 0.0, max);
        let r = Ratio { ratio: None, low: None, high: None, ..summary.ratios[0].clone() };
        assert!(summary.served_nothing(&summary.ratios[0]).is_none(), "a ratio with a figure is a figure");
        assert_eq!(times(&r), "—");
        zero(&mut summary.cells[1], 0.0);
        let said = summary.served_nothing(&r);
        assert_eq!(said.as_deref(), Some("puma served 1320.0 requests/s and unicorn|3 none at 16 users"));
        zero(&mut summary.cells[1], 80.0);
        let said = summary.served_nothing(&r);
        let expected = "puma served 1320.0 requests/s and unicorn|3 0.0 (the median of its repeats) at 16 users";
        assert_eq!(said.as_deref(), Some(expected), "one repeat of three served something");
        zero(&mut summary.cells[0], 0.0);
        zero(&mut summary.cells[1], 0.0);
        let said = summary.served_nothing(&r);
        assert_eq!(said.as_deref(), Some("neither puma nor unicorn|3 served a successful response at 16 users"));
    }
}
