//! [`Verdict`]: what the 95% interval of a ratio says against a noise floor ([`verdict`]): improved or regressed
//! only when the whole interval lies beyond it on one side, within noise otherwise; and the verdicts a comparison
//! gives where there is no interval to read (too few samples, a sample that served nothing, a server missing from
//! one run). `compare` gives them to old runs against new, `analysis` to servers against each other and to
//! searches' capacities.

use std::cmp::Ordering;

use serde::Serialize;

use crate::statistics::bound;
use crate::statistics::interval::Interval;

/// The verdict on one server at one level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Faster: the whole interval above 1 + noise.
    Improved,
    /// Slower: the whole interval below 1 − noise.
    Regressed,
    /// No change the measurements can tell from noise.
    WithinNoise,
    /// Fewer than two samples on a side: no interval, no verdict.
    TooFew,
    /// A sample served nothing (a second without a response): no interval, no verdict.
    NoInterval,
    /// In the old run, but nothing of it in the new one (not run, or every trial failed). Fails the gates.
    Missing,
    /// Only in the new run.
    New,
}

impl Verdict {
    /// True when `--max-regression` fails on it whatever the figure: nothing measured is the worst regression.
    pub fn fails_the_gate(self) -> bool {
        self == Verdict::Missing
    }
}

/// The verdict for an interval with `noise` as a fraction (0.02 for 2%): a change only when the whole interval is
/// beyond the noise floor on one side.
pub fn verdict(interval: &Interval, noise: f64) -> Verdict {
    if bound::side(interval.high, 1.0 - noise) == Ordering::Less {
        Verdict::Regressed
    } else if bound::side(interval.low, 1.0 + noise) == Ordering::Greater {
        Verdict::Improved
    } else {
        Verdict::WithinNoise
    }
}
