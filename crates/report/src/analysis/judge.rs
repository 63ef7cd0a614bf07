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
//! answer would rest on it.

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
    Verdict {
        passed: cell.meets_slo && kept_up && !client,
        undecided,
        leans,
        client,
        floor,
        served: cell.rps_headline,
        broke,
    }
}
