//! [`ratio_interval`]: how many times the throughput of one set of measurements another's is, with a 95% interval
//! valid for the few repeats a run has. Welch's t interval on the logarithms of the samples: the ratio of the
//! geometric means is exp of the difference of the mean logarithms, the interval is that difference ± the t
//! quantile (with the Welch–Satterthwaite degrees of freedom, [`crate::statistics::student_t`]) times its standard error,
//! brought back by exp. Throughput noise is multiplicative (a slower machine slows everything by a share), so its
//! logarithm is close to normal and the two sides may be as noisy as they like. At least [`FEWEST`] samples a side;
//! fewer give no interval, and nothing is called faster or slower on them. Simulated in `crate::statistics::simulation`: its
//! real coverage is 95–96.5% from 3 samples a side up (97.5% at 2, where Welch's degrees of freedom are cautious).

use serde::Serialize;

use crate::statistics::student_t;

/// The interval's stated level.
pub const CONFIDENCE: f64 = 0.95;

/// The fewest samples on each side that give an interval: a variance needs two.
pub const FEWEST: usize = 2;

/// The noise floor of a ratio, as a share: a difference is clear only when its whole interval lies beyond 1 by
/// more than this (`compare`'s `--noise` default, and the suite's verdicts). Below it, repeats on this kind of
/// machine move by as much on an unchanged server.
pub const NOISE_FLOOR: f64 = 0.02;

/// A ratio's interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Interval {
    /// The ratio of the geometric means, the interval's centre.
    pub centre: f64,
    /// The lower bound of the 95% interval.
    pub low: f64,
    /// Its upper bound.
    pub high: f64,
}

/// Why there is no interval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NoInterval {
    /// Fewer than [`FEWEST`] samples on a side.
    TooFew,
    /// A sample of zero (nothing served in it) has no logarithm.
    NotPositive,
}

/// The ratio of `a` over `b` and its 95% interval (Welch's t on the logarithms).
pub fn ratio_interval(a: &[f64], b: &[f64]) -> Result<Interval, NoInterval> {
    if a.len() < FEWEST || b.len() < FEWEST {
        return Err(NoInterval::TooFew);
    }
    if a.iter().chain(b).any(|&v| v.is_nan() || v <= 0.0) {
        return Err(NoInterval::NotPositive);
    }
    let (mean_a, var_a) = mean_and_variance(a);
    let (mean_b, var_b) = mean_and_variance(b);
    let (n_a, n_b) = (a.len() as f64, b.len() as f64);
    let (share_a, share_b) = (var_a / n_a, var_b / n_b);
    let error = (share_a + share_b).sqrt();
    let difference = mean_a - mean_b;
    if error == 0.0 {
        // Every sample on each side the same: nothing varies, the interval is its centre.
        let centre = difference.exp();
        return Ok(Interval { centre, low: centre, high: centre });
    }
    let df = (share_a + share_b).powi(2) / (share_a.powi(2) / (n_a - 1.0) + share_b.powi(2) / (n_b - 1.0));
    let half = student_t::quantile(1.0 - (1.0 - CONFIDENCE) / 2.0, df) * error;
    Ok(Interval { centre: difference.exp(), low: (difference - half).exp(), high: (difference + half).exp() })
}

/// True when a repeat's requests/s is a sample: it served something. A repeat that served nothing is a failed
/// trial, not a measurement of how fast the server is (its zero has no logarithm either).
pub fn is_sample(rps: f64) -> bool {
    rps > 0.0
}

/// The samples among the repeats' requests/s ([`is_sample`]).
pub fn served(values: &[f64]) -> Vec<f64> {
    values.iter().copied().filter(|&v| is_sample(v)).collect()
}

/// The mean and the sample variance (n − 1) of the logarithms.
fn mean_and_variance(values: &[f64]) -> (f64, f64) {
    let n = values.len() as f64;
    let mean = values.iter().map(|v| v.ln()).sum::<f64>() / n;
    let variance = values.iter().map(|v| (v.ln() - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, variance)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_welch_interval_worked_by_hand() {
        // ln of a: 0, ln 2 / 2, ln 2 (mean ln 2 / 2); of b: ln 2 / 2 ± ln 2 / 2 around ln 0.5: the same spread.
        let a = [1.0, 2f64.sqrt(), 2.0];
        let b = [0.5, 0.5 * 2f64.sqrt(), 1.0];
        let i = ratio_interval(&a, &b).unwrap();
        // Difference of means ln 2; each variance (ln 2 / 2)² · 2 / 2 = (ln 2)² / 4; error √(2 · (ln 2)² / 12);
        // equal variances and sizes: df = 4, t = 2.776445.
        let error = (2.0 * 2f64.ln().powi(2) / 12.0).sqrt();
        let half = 2.776_445_105 * error;
        assert!((i.centre - 2.0).abs() < 1e-12);
        assert!((i.low - (2f64.ln() - half).exp()).abs() < 1e-6, "{i:?}");
        assert!((i.high - (2f64.ln() + half).exp()).abs() < 1e-6, "{i:?}");
    }

    #[test]
    fn unequal_spreads_take_the_welch_satterthwaite_degrees_of_freedom() {
        // One side without spread: the degrees of freedom are the other side's n − 1 = 2, t = 4.302653.
        let a = [2.0, 2.0, 2.0];
        let b = [0.5, 1.0, 2.0];
        let i = ratio_interval(&a, &b).unwrap();
        let error = (2f64.ln().powi(2) / 3.0).sqrt();
        assert!((i.centre - 2.0).abs() < 1e-12);
        assert!((i.high.ln() - (2f64.ln() + 4.302_652_73 * error)).abs() < 1e-6, "{i:?}");
    }

    #[test]
    fn no_interval_below_two_samples_a_side_or_with_a_zero() {
        assert_eq!(ratio_interval(&[1.0], &[1.0, 2.0]), Err(NoInterval::TooFew));
        assert_eq!(ratio_interval(&[1.0, 2.0], &[]), Err(NoInterval::TooFew));
        assert_eq!(ratio_interval(&[1.0, 0.0], &[1.0, 2.0]), Err(NoInterval::NotPositive));
        let same = ratio_interval(&[3.0, 3.0], &[1.5, 1.5]).unwrap();
        assert_eq!((same.low, same.high), (2.0, 2.0));
        assert_eq!(served(&[0.0, 5.0, 7.0]), [5.0, 7.0]);
    }
}
