//! The SLO on a suite's cells: each condition judged on one cell ([`Judged`]: met, broken, or undecided for a
//! percentile whose bounds straddle its limit), and each server's answer to the SLO ([`SloAnswer`]: the highest
//! level below the first that breaks it or has no trial).

use serde::Serialize;
use shootout_model::slo::Slo;

use crate::analysis::Cell;
use crate::statistics::quantile::Bounds;

/// One SLO condition judged on one cell.
#[derive(Debug, Clone, Serialize)]
pub struct Judged {
    /// The condition.
    #[serde(flatten)]
    pub condition: Slo,
    /// Its figure, in its unit (µs, percent, requests/s): for a percentile, of every repeat's requests together
    /// (their histograms merged); for any other, the median across repeats.
    pub value: f64,
    /// True when it is met: for a percentile, when its 95% bounds are both on the right side of the limit; for
    /// any other figure, when the value is ([`holds`](crate::statistics::bound::holds): a value on the limit is on
    /// it).
    pub met: bool,
    /// A percentile: its 95% bounds and the requests behind it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bounds: Option<Bounds>,
    /// True when a percentile's bounds straddle the limit: neither met nor broken, the requests measured cannot
    /// tell (more would).
    #[serde(default)]
    pub undecided: bool,
}

impl Judged {
    /// True when the cell breaks the condition: not met, and not for want of requests.
    pub fn broken(&self) -> bool {
        !self.met && !self.undecided
    }

    /// A percentile's bounds in words ([`Bounds::text`]): `[24.012–?] ms on 150 requests; 1.62% of them took 100 ms
    /// or more [0.61%–2.63%], where the p99 allows 1%`. Empty for any other figure.
    pub fn bounds_text(&self) -> String {
        self.bounds.map_or_else(String::new, |b| b.text(&self.condition))
    }
}

/// A server's answer to the SLO.
#[derive(Debug, Clone, Serialize)]
pub struct SloAnswer {
    /// Server.
    pub server: String,
    /// The highest level below the first that breaks an objective or was not measured, going up the suite's
    /// levels (none when the lowest breaks one or was not measured). A level that passes above a failing or
    /// missing one does not count: the question is how far the server goes before it fails, and a level with no
    /// trial says nothing of that.
    pub level: Option<f64>,
    /// Median requests per second at that level.
    pub rps: Option<f64>,
    /// The first level that breaks an objective, if one does below any level not measured.
    #[serde(default)]
    pub fails_at: Option<f64>,
    /// The first of the suite's levels with no trial of this server (its trials failed, or the run never got
    /// there), if it comes before any level that breaks an objective: the answer stops below it.
    #[serde(default)]
    pub unmeasured_at: Option<f64>,
    /// How many of the suite's levels were measured for this server (0: it never ran, as in an interrupted
    /// suite).
    #[serde(default)]
    pub measured: usize,
}

impl SloAnswer {
    /// The answer of `server` from its cells at the suite's `levels` (the suite's order, lowest first).
    pub(super) fn of(server: &str, cells: &[Cell], levels: &[f64]) -> SloAnswer {
        let mut sorted = levels.to_vec();
        sorted.sort_by(f64::total_cmp);
        sorted.dedup();
        let at: Vec<(f64, Option<&Cell>)> = sorted
            .iter()
            .map(|&level| (level, cells.iter().find(|c| c.server == server && c.level == level)))
            .collect();
        let stop = at.iter().position(|(_, cell)| cell.is_none_or(|c| !c.meets_slo));
        let best = at[..stop.unwrap_or(at.len())].last().and_then(|(_, cell)| *cell);
        let stopped = stop.map(|i| at[i]);
        SloAnswer {
            server: server.to_string(),
            level: best.map(|c| c.level),
            rps: best.map(|c| c.rps_headline),
            fails_at: stopped.filter(|(_, cell)| cell.is_some()).map(|(level, _)| level),
            unmeasured_at: stopped.filter(|(_, cell)| cell.is_none()).map(|(level, _)| level),
            measured: at.iter().filter(|(_, cell)| cell.is_some()).count(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::tests::cell;

    #[test]
    fn the_slo_answer_is_the_last_level_before_the_first_failure() {
        // Means of 3.9999, 4.0001 and 0.1 ms at 1, 4 and 16 users under `mean < 4ms`: 16 passes, but only after 4
        // failed, so the server holds the SLO up to 1 user.
        let mut cells = vec![cell("a", 16.0, &[900.0], 100.0), cell("a", 1.0, &[100.0], 3999.9)];
        cells.push(Cell { meets_slo: false, ..cell("a", 4.0, &[400.0], 4000.1) });
        cells[0].meets_slo = true;
        let answer = SloAnswer::of("a", &cells, &[1.0, 4.0, 16.0]);
        assert_eq!(
            (answer.level, answer.rps, answer.fails_at, answer.measured),
            (Some(1.0), Some(100.0), Some(4.0), 3)
        );
        let first = SloAnswer::of("a", &[Cell { meets_slo: false, ..cell("a", 1.0, &[1.0], 1.0) }], &[1.0, 4.0]);
        assert_eq!((first.level, first.fails_at, first.measured), (None, Some(1.0), 1));
        let never = SloAnswer::of("b", &cells, &[1.0, 4.0, 16.0]);
        assert_eq!((never.level, never.fails_at, never.measured), (None, None, 0), "a server that never ran");
    }

    #[test]
    fn the_slo_answer_stops_below_a_level_with_no_trial() {
        // The trials at 4 users failed (or the run never got there): 16 passes, but says nothing of 4.
        let cells = vec![cell("a", 1.0, &[100.0], 100.0), cell("a", 16.0, &[900.0], 100.0)];
        let gap = SloAnswer::of("a", &cells, &[1.0, 4.0, 16.0]);
        assert_eq!((gap.level, gap.fails_at, gap.unmeasured_at, gap.measured), (Some(1.0), None, Some(4.0), 2));
        // An interrupted suite: only the lowest level ran.
        let cut = SloAnswer::of("a", &cells[..1], &[1.0, 4.0, 16.0]);
        assert_eq!((cut.level, cut.fails_at, cut.unmeasured_at, cut.measured), (Some(1.0), None, Some(4.0), 1));
        // Nothing at the lowest level, something above it: no level is answered for.
        let low = SloAnswer::of("a", &cells[1..], &[1.0, 4.0, 16.0]);
        assert_eq!((low.level, low.fails_at, low.unmeasured_at, low.measured), (None, None, Some(1.0), 1));
        // Every level met it.
        let all = SloAnswer::of("a", &cells, &[1.0, 16.0]);
        assert_eq!((all.level, all.fails_at, all.unmeasured_at), (Some(16.0), None, None));
    }
}
