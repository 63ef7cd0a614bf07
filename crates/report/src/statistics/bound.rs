//! Every threshold the analysis takes, compared on the values people read rather than on their binary
//! approximations: in floating point 1.1 × 100 is 110.00000000000001, so 110 requests/s did not count as 10% more
//! than 100 while 1,100 counted as 10% more than 1,000, and 0.000123 s × 10⁶ is 123.00000000000001 µs. A value within
//! a billionth of its bound ([`TOLERANCE`], relative) is on it: [`side`] says which side of a bound a value is on,
//! [`at_least`] and [`holds`] compare with it (the knee's 10%, an open-model run keeping up with 90% of its rate, a
//! matrix's 5%, the 90% busy share, an SLO or `--fail-if` limit, compare's noise floor), and [`figure`] prints a
//! value near its bound with the digits that show which side it is on, so that a printed figure never reads as the
//! other side of the line it was judged by.

use std::cmp::Ordering;

use shootout_model::slo::{Condition, Op};

/// How close, relative to the larger of the two, a value must be to a bound to be on it.
pub const TOLERANCE: f64 = 1e-9;

/// Which side of `bound` `value` is on: `Equal` within [`TOLERANCE`].
pub fn side(value: f64, bound: f64) -> Ordering {
    if (value - bound).abs() <= TOLERANCE * value.abs().max(bound.abs()) {
        Ordering::Equal
    } else {
        value.partial_cmp(&bound).unwrap_or(Ordering::Less)
    }
}

/// True when `value` is at `bound` or above it.
pub fn at_least(value: f64, bound: f64) -> bool {
    side(value, bound) != Ordering::Less
}

/// True when `value` satisfies `condition`, a value on its limit counting as equal to it (a value that is not a
/// number satisfies none).
pub fn holds(condition: &Condition, value: f64) -> bool {
    if value.is_nan() {
        return false;
    }
    let side = side(value, condition.limit);
    match condition.op {
        Op::Lt => side == Ordering::Less,
        Op::Le => side != Ordering::Greater,
        Op::Gt => side == Ordering::Greater,
        Op::Ge => side != Ordering::Less,
    }
}

/// The most decimals [`figure`] adds to tell a value from its bound.
const MOST_DECIMALS: usize = 9;

/// `value` with `decimals` decimals, or as many more as it takes for the printed figure to be on the same side of
/// `bound` as the value itself: 4.0001 against 4 prints `4.0001`, not `4.000`, and 0.996 against 1 prints `0.996`,
/// not `1.00`. Both in the units printed.
pub fn figure(value: f64, bound: Option<f64>, decimals: usize) -> String {
    let printed = |decimals: usize| format!("{value:.decimals$}");
    let Some(bound) = bound.filter(|b| b.is_finite() && value.is_finite()) else { return printed(decimals) };
    let want = side(value, bound);
    (decimals..=MOST_DECIMALS.max(decimals))
        .map(printed)
        .find(|text| text.parse::<f64>().is_ok_and(|shown| side(shown, bound) == want))
        .unwrap_or_else(|| printed(MOST_DECIMALS.max(decimals)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use shootout_model::slo::parse_condition;

    #[test]
    fn ten_percent_more_is_ten_percent_more_at_any_magnitude() {
        for base in [1.0, 100.0, 1000.0, 12_345.0, 1e9] {
            assert!(at_least(base * 1.1, 1.1 * base) && at_least(1.1 * base, base * 1.1), "{base}");
        }
        assert!(at_least(110.0, 1.1 * 100.0), "1.1 × 100 is 110.00000000000001 in floating point");
        assert!(at_least(900.0, 0.9 * 1000.0) && !at_least(899.999, 0.9 * 1000.0));
        assert!(!at_least(109.9999, 1.1 * 100.0), "a ten-thousandth below is below");
    }

    #[test]
    fn a_value_on_an_slo_limit_is_on_it() {
        let under = parse_condition("p99 < 123us").unwrap();
        assert!(!holds(&under, 123.0), "123 µs is not under 123 µs, whatever 0.000123 × 10⁶ rounds to");
        assert!(holds(&under, 122.0) && holds(&parse_condition("p99 <= 123us").unwrap(), 123.0));
        let errors = parse_condition("errors < 1%").unwrap();
        assert!(holds(&errors, 0.996) && !holds(&errors, 1.0));
        assert!(holds(&parse_condition("rps >= 1000").unwrap(), 999.9999999999));
        assert!(!holds(&parse_condition("rps > 1000").unwrap(), 1000.0000000001));
        assert!(!holds(&under, f64::NAN) && !holds(&parse_condition("rps > 1000").unwrap(), f64::NAN));
    }

    #[test]
    fn a_figure_near_its_bound_shows_its_side() {
        assert_eq!(figure(4.0001, Some(4.0), 3), "4.0001");
        assert_eq!(figure(3.9999, Some(4.0), 3), "3.9999");
        assert_eq!(figure(4.0, Some(4.0), 3), "4.000", "on the bound");
        assert_eq!(figure(4.25, Some(4.0), 3), "4.250", "far from it: as usual");
        assert_eq!(figure(0.996, Some(1.0), 2), "0.996");
        assert_eq!(figure(1.004, Some(1.0), 2), "1.004");
        assert_eq!(figure(89.96, Some(90.0), 0), "89.96");
        assert_eq!(figure(89.6, Some(90.0), 0), "89.6");
        assert_eq!(figure(90.4, Some(90.0), 0), "90.4", "90 would read as on the bound");
        assert_eq!(figure(95.0, None, 0), "95");
    }
}
