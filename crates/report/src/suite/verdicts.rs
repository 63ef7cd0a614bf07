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
