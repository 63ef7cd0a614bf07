//! [`judge_probe`]: the one judge of a capacity search's probe, for `load --find-rate` and a suite's search alike.
//! A probe is judged as the comparison judges a cell (its repeats at one level, on the figure across repeats the
//! comparison uses), and passes only when all of these hold:
//! - every objective is met (a latency met while the queue grew is not: it holds only for the window's length);
//! - every repeat answered requests in its window (a repeat that measured nothing is a failure with its cause);
//! - in the open model, the server completed at least `1 − precision` of the requests that fell due (the median
//!   share over the repeats): an overloaded server can meet a loose objective for a short window while its queue
//!   grows, and a rate it cannot sustain is not one it takes;
//! - the load generator was not saturated: its figures would measure the client, and the search ends there with
//!   the client's limit as a floor.
//!
//! A percentile is judged on the requests of every repeat together, with its 95% bounds
//! ([`crate::statistics::quantile`]): a probe whose bounds straddle a limit, with nothing else against it, is
//! `undecided`, and `leans` as its figures do; its caller counts it provisionally, or measures more where the
//! answer would rest on it, for as long as the requests a decision would take fit in the probe's cap
//! ([`Verdict::to_decide`]).

use shootout_model::run::{Statistic, TrialRecord};
use shootout_model::search::Verdict;
use shootout_model::slo::Slo;

use crate::analysis::{analyze_by, completed};
use crate::statistics::bound::at_least;

/// What a probe whose load generator was saturated broke, in words.
pub const CLIENT_LIMIT: &str = "the load generator was saturated: its figures measure the client";

/// Judges a probe from its `trials` (one server, one level) against `slo`, on the repeats' `statistic`, a search
/// of the given `precision` (the share of the rate due that may go uncompleted).
pub fn judge_probe(trials: &[TrialRecord], slo: &[Slo], statistic: Statistic, precision: f64) -> Verdict {
    let nothing = |why: &str| Verdict {
        passed: false,
        undecided: false,
        leans: false,
        client: false,
        floor: None,
        served: 0.0,
        broke: vec![why.into()],
        to_decide: None,
    };
    let Some(first) = trials.first() else { return nothing("no trial ran") };
    let analysis = analyze_by(trials, std::slice::from_ref(&first.server), &[first.level], slo, statistic);
    let Some(cell) = analysis.cells.first() else { return nothing("no trial ran") };
    let mut broke: Vec<String> =
        cell.failed.iter().map(|f| format!("repeat {} measured nothing ({})", f.repeat, f.cause)).collect();
    for objective in cell.objectives.iter().filter(|o| o.undecided) {
        let figure = crate::statistics::figures::show(&objective.condition, objective.value);
        broke.push(format!(
            "{} undecided (it was {figure}, 95% bounds {})",
            objective.condition.text,
            objective.bounds_text()
        ));
    }
    for objective in cell.objectives.iter().filter(|o| o.broken()) {
        let figure = crate::statistics::figures::show(&objective.condition, objective.value);
        let queue = if crate::statistics::bound::holds(&objective.condition, objective.value) {
            ", while its queue grew"
        } else {
            ""
        };
        broke.push(format!("{} (it was {figure}{queue})", objective.condition.text));
    }
    let share = completed(trials);
    let kept_up = share.is_none_or(|s| at_least(s, 1.0 - precision));
    if let Some(share) = share.filter(|_| !kept_up) {
        broke.push(format!(
            "the server completed {:.1}% of the requests due (under {:.0}%)",
            share * 100.0,
            (1.0 - precision) * 100.0
        ));
    }
    let client = cell.client_bound();
    if client {
        broke.push(CLIENT_LIMIT.into());
    }
    // The requests of an open-model probe are counted in its rate (what it completed, up to the rate asked: a few
    // held over from the warm-up can take the window's count past it); users and arriving sessions in its level.
    let floor = (client && cell.meets_slo && kept_up)
        .then(|| share.map_or(first.level, |_| cell.rps_headline.min(first.level)));
    // Undecided only when nothing else decides against it: a break, a client at its limit, a server behind.
    let undecided = cell.undecided() && cell.failed.is_empty() && kept_up && !client;
    let leans = undecided && cell.objectives.iter().all(|o| crate::statistics::bound::holds(&o.condition, o.value));
    let to_decide = undecided
        .then(|| cell.objectives.iter().filter(|o| o.undecided).map(to_decide).collect::<Option<Vec<f64>>>())
        .flatten()
        .map(|factors| factors.into_iter().fold(1.0, f64::max));
    Verdict {
        passed: cell.meets_slo && kept_up && !client,
        undecided,
        leans,
        client,
        floor,
        served: cell.rps_headline,
        broke,
        to_decide,
    }
}

/// How many times the requests measured would decide an undecided percentile ([`Verdict::to_decide`]): the share
/// past its limit staying as measured, its bounds narrowing as the square root of the requests until the nearer
/// one crosses the share the percentile allows. Infinite for a share on the limit; `None` for a percentile judged
/// without a share past its limit (a lower limit), which no projection covers.
fn to_decide(objective: &crate::analysis::slo::Judged) -> Option<f64> {
    let past = objective.bounds?.past?;
    let (share, allowed) = (past.share, past.allowed);
    // Under the allowance the upper bound must come down under it; over it, the lower bound up over it.
    let (reach, gap) = match share.partial_cmp(&allowed)? {
        std::cmp::Ordering::Less => (past.high - share, allowed - share),
        std::cmp::Ordering::Greater => (share - past.low, share - allowed),
        std::cmp::Ordering::Equal => return Some(f64::INFINITY),
    };
    Some((reach / gap).powi(2).max(1.0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::slo::Judged;
    use crate::statistics::quantile::{Bounds, Past};

    fn undecided(share: f64, low: f64, high: f64) -> Judged {
        let past = Past { from_us: 20_000, share, low, high, allowed: 0.01 };
        let bounds = Bounds {
            value: 19_000,
            low: 17_000,
            high: None,
            requests: 600,
            blocks: 3,
            clustering: 1.0,
            past: Some(past),
        };
        let condition = shootout_model::slo::parse_condition("p99<20ms").unwrap();
        Judged { condition, value: 19_000.0, met: false, bounds: Some(bounds), undecided: true }
    }

    #[test]
    fn a_decision_takes_the_requests_that_bring_the_nearer_bound_across_the_allowance() {
        // 0.5% past 20 ms, bounds up to 2%, where 1% is allowed: the bound must shrink to a third, nine times the
        // requests.
        let near = |factor: Option<f64>, expected: f64| factor.is_some_and(|f| (f - expected).abs() < 1e-9);
        assert!(near(to_decide(&undecided(0.005, 0.0, 0.02)), 9.0));
        // 1.5% past it, bounds down to 0.5%: its lower bound must come up by half its reach, four times them.
        assert!(near(to_decide(&undecided(0.015, 0.005, 0.03)), 4.0));
        assert_eq!(to_decide(&undecided(0.01, 0.002, 0.02)), Some(f64::INFINITY), "on the limit: never");
        let mut lower = undecided(0.005, 0.0, 0.02);
        lower.bounds.as_mut().unwrap().past = None;
        assert_eq!(to_decide(&lower), None, "no share past a limit to project");
    }
}
