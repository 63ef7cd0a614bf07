//! How a suite's servers rank, and where the ranking cannot tell two apart: the capacities, highest first
//! ([`SuiteSummary::ranked_capacities`]); the SLO answers, best first ([`SuiteSummary::ranked_slo_answers`]); and
//! the neighbours in that ranking that met the SLO up to the same level with no clear difference between them
//! there ([`SuiteSummary::ties`]), by the verdicts' own ratio ([`crate::analysis::ratios::verdict`]). Their words
//! are [`crate::suite::words`]'s.

use crate::analysis::capacity::Capacity;
use crate::analysis::{Ratio, SloAnswer};
use crate::suite::summary::SuiteSummary;

/// Two servers next to each other in the SLO ranking that met it up to the same level, with no clear difference
/// between them there.
#[derive(Debug, Clone)]
pub struct Tie<'a> {
    /// The one ranked first.
    pub first: &'a SloAnswer,
    /// The one ranked next.
    pub second: &'a SloAnswer,
    /// The level both met the SLO up to.
    pub level: f64,
    /// The verdicts' ratio of the two there, not a clear difference.
    pub ratio: Ratio,
}

/// Where the SLO answers do not rank two servers.
#[derive(Debug, Clone)]
pub struct Ties<'a> {
    /// Each pair next in the ranking with no clear difference, in the ranking's order.
    pub ties: Vec<Tie<'a>>,
    /// True when some pair next in the ranking met it up to the same level with too few repeats for an interval:
    /// their order there is by the figures alone.
    pub unjudged: bool,
}

impl SuiteSummary {
    /// The capacities ranked, the highest first (none found last).
    pub fn ranked_capacities(&self) -> Vec<&Capacity> {
        let mut ranked: Vec<&Capacity> = self.capacities.iter().collect();
        let key = |c: &Capacity| c.search.capacity.unwrap_or(f64::NEG_INFINITY);
        ranked.sort_by(|a, b| key(b).total_cmp(&key(a)));
        ranked
    }

    /// The SLO answers ranked, best first: by the level answered (none last), then its requests/s.
    pub fn ranked_slo_answers(&self) -> Vec<&SloAnswer> {
        let mut ranked: Vec<&SloAnswer> = self.slo_answers.iter().collect();
        let key = |a: &SloAnswer| (a.level.unwrap_or(f64::NEG_INFINITY), a.rps.unwrap_or(0.0));
        ranked.sort_by(|a, b| {
            let (x, y) = (key(a), key(b));
            y.0.total_cmp(&x.0).then(y.1.total_cmp(&x.1))
        });
        ranked
    }

    /// Where the SLO answers do not rank two servers: each pair next in the ranking that met it up to the same level
    /// with no clear difference there (the verdicts' own ratio of the two: their interval reaches 1 or the noise
    /// floor), and whether a pair had too few repeats for an interval.
    pub fn ties(&self) -> Ties<'_> {
        let ranked = self.ranked_slo_answers();
        let mut unjudged = false;
        let ties: Vec<Tie<'_>> = ranked
            .windows(2)
            .filter_map(|pair| {
                let (a, b) = (pair[0], pair[1]);
                let level = a.level.filter(|&l| b.level == Some(l))?;
                let (x, y) = (self.cell(&a.server, level)?, self.cell(&b.server, level)?);
                // The verdicts' own ratio of the two, so that "clear" means here what it means there: latency at a
                // rate both kept to, else requests/s.
                let r = crate::analysis::ratios::verdict(x, y, level, self.statistic);
                if r.low.is_none() {
                    unjudged = true; // said once, in words
                    return None;
                }
                if r.clear || r.ratio.is_none() {
                    return None;
                }
                Some(Tie { first: a, second: b, level, ratio: r })
            })
            .collect();
        Ties { ties, unjudged }
    }
}

#[cfg(test)]
mod tests {
    use crate::analysis::limit::Limit;
    use crate::analysis::{Cell, SloAnswer};
    use crate::suite::summary::tests::{cell, report};
    use crate::suite::summary::SuiteSummary;

    /// Issue 47: the answer comes first, ranked, and says where it cannot rank two servers.
    #[test]
    fn the_slo_answers_are_ranked_and_overlapping_ones_are_no_clear_winner() {
        let mut summary = SuiteSummary::of_report(&report());
        let at = |server: &str, level: f64, rps: [f64; 3]| Cell {
            rps: rps.to_vec(),
            rps_median: rps[1],
            rps_headline: rps[1],
            limit: Limit::Waiting { busy: 0.5 },
            ..cell(server, level, rps[1], false)
        };
        summary.cells = vec![
            at("c", 4.0, [500.0, 510.0, 490.0]),
            at("b", 16.0, [1090.0, 1100.0, 1080.0]),
            at("a", 16.0, [1100.0, 1110.0, 1090.0]),
        ];
        let answer = |server: &str, level: f64, rps: f64| SloAnswer {
            server: server.into(),
            level: Some(level),
            rps: Some(rps),
            fails_at: None,
            unmeasured_at: None,
            measured: 1,
        };
        summary.slo_answers = vec![answer("c", 4.0, 510.0), answer("b", 16.0, 1100.0), answer("a", 16.0, 1110.0)];
        let ranked: Vec<&str> = summary.ranked_slo_answers().iter().map(|a| a.server.as_str()).collect();
        assert_eq!(ranked, ["a", "b", "c"]);
        let lines = summary.no_clear_winners();
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(
            lines[0].starts_with("no clear winner between a and b: both met it up to 16 users (a served 1.01× ["),
            "{lines:?}"
        );
        summary.cells[1] = at("b", 16.0, [545.0, 550.0, 540.0]);
        assert!(summary.no_clear_winners().is_empty(), "twice the requests/s at the same level is clear");
        summary.cells[1].rps = vec![550.0];
        assert_eq!(
            summary.no_clear_winners(),
            ["where servers met it up to the same level, their order there is by the figures alone: too few repeats \
              for an interval, so no verdict"],
            "one repeat: said once"
        );
    }
}
