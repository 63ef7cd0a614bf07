//! [`bounds`]: the 95% bounds of a latency percentile (in words, [`Bounds::text`]), and [`Decision`]: whether a
//! condition on a percentile is met, broken or not yet decided by the requests measured.
//!
//! A percentile of N requests is the value at one rank of them; p99 of 28 requests is the slowest one. Were the
//! requests independent, the number of them at or under the true percentile would be binomial, and the ranks whose
//! values bound it with 95% confidence follow exactly (the order-statistic bounds, [`iid_ranks`]). They are not:
//! a pause of 50 ms at 1,000 requests/s delays the 50 requests due during it, so the tail comes in runs, and
//! bounds that assume independence are too narrow. The window's blocks (a second each, [`LatencyBlock`]) measure
//! how much: the count of requests past the percentile varies from block to block by more than a binomial
//! count would, and its variance across the blocks (batch means, with Student's t on the blocks' degrees of
//! freedom) gives ranks of its own (`block_ranks`). The bounds are the wider of the two, so they hold for
//! independent requests and for runs of them alike; `statistics::simulation` checks that they cover the true
//! percentile at least 93% of the time on a server that stalls.
//!
//! When the upper rank lies past the slowest request, the sample cannot bound the percentile from above: `high`
//! is `None`, and a condition `pN < limit` cannot be met on it, only broken (by a lower bound past the limit).
//!
//! [`LatencyBlock`]: shootout_model::result::LatencyBlock

use serde::Serialize;
use shootout_metrics::percentile::value_at_rank;
use shootout_metrics::{value_at, LatencyHistogram};
use shootout_model::slo::{Condition, Metric, Op};

use crate::statistics::bound::holds;
use crate::statistics::interval::CONFIDENCE;
use crate::statistics::student_t;

/// A percentile measured, with its 95% bounds and what they rest on.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Bounds {
    /// The percentile of every request measured (nearest rank), µs.
    pub value: u64,
    /// Its lower bound, µs (0 when the sample cannot bound it from below).
    pub low: u64,
    /// Its upper bound, µs; `None` when the sample cannot bound it from above (too few requests past it).
    pub high: Option<u64>,
    /// The requests measured.
    pub requests: u64,
    /// The blocks they came in (seconds, or a few seconds each, over every repeat).
    pub blocks: usize,
    /// How many times the variance of a binomial count the blocks showed at the percentile (1 when the requests
    /// looked independent): a stall that delays requests in a row raises it.
    pub clustering: f64,
    /// For an upper limit on the percentile, the share of requests past it, on which the limit is judged.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub past: Option<Past>,
}

impl Bounds {
    /// The bounds in words: `[24.012–?] ms on 150 requests` (`?`: the requests cannot bound it from above), and for
    /// an upper limit of `condition` the share past it that it is judged on: `; 1.62% of them took 100 ms or more
    /// [0.61%–2.63%], where the p99 allows 1%`.
    pub fn text(&self, condition: &Condition) -> String {
        let ms = |us: u64| format!("{:.3}", us as f64 / 1e3);
        let high = self.high.map_or_else(|| "?".to_string(), ms);
        let mut text = format!("[{}–{high}] ms on {} requests", ms(self.low), crate::units::count(self.requests));
        if let (Some(past), Metric::Percentile(p)) = (self.past, condition.metric) {
            let pct = |share: f64| format!("{:.2}%", share * 100.0);
            let from = crate::units::ms(past.from_us as f64);
            let took = match condition.op {
                Op::Le => format!("over {from} ms"),
                _ => format!("{from} ms or more"),
            };
            let allowed = (past.allowed * 1e6).round() / 1e4;
            text += &format!(
                "; {} of them took {took} [{}–{}], where the p{p} allows {allowed}%",
                pct(past.share),
                pct(past.low),
                pct(past.high)
            );
        }
        text
    }
}

/// Whether a condition on a percentile holds, on its bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// Both bounds are on the condition's side of its limit.
    Met,
    /// Both bounds are on the wrong side.
    Broken,
    /// The bounds straddle the limit: more requests would tell.
    Undecided,
}

/// Judges `condition` on percentile p of `total` (with its `blocks`, and its `bounds`). An upper limit (`pN <
/// L`, `pN <= L`) is judged on the share of requests past L, which p's limit allows up to 1 − p/100: met when the
/// share's 95% upper bound is under that, broken when its lower bound is over it ([`share_past`]). That is the
/// question asked, and the clustering that counts is of the requests past the limit: a tail that comes in runs
/// near p99 says little of requests three times slower that never came. A lower limit is judged on the
/// percentile's bounds.
pub fn decide(
    condition: &Condition,
    total: &LatencyHistogram,
    blocks: &[LatencyHistogram],
    bounds: &Bounds,
) -> Decision {
    decide_on(condition, past(condition, total, blocks), bounds)
}

/// Judges `condition` on the share of requests `past` its limit, when it is an upper limit on a percentile (what
/// [`past`] found), else on the percentile's `bounds`: [`decide`] for a caller that has the share already.
pub fn decide_on(condition: &Condition, past: Option<Past>, bounds: &Bounds) -> Decision {
    let Some(past) = past else { return on_bounds(condition, bounds) };
    if past.high < past.allowed {
        Decision::Met
    } else if past.low > past.allowed {
        Decision::Broken
    } else {
        Decision::Undecided
    }
}

/// The share of requests past an upper limit on a percentile, with its 95% bounds, and the share the percentile
/// allows: what [`decide`] judges such a condition on, and what its words give.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Past {
    /// Where "past" starts, µs: the limit, to the histogram's resolution.
    pub from_us: u64,
    /// The share of the requests measured at `from_us` or slower (over it, for `<=`), 0 to 1.
    pub share: f64,
    /// Its 95% bounds.
    pub low: f64,
    /// The upper one.
    pub high: f64,
    /// The share the percentile allows past its limit: 1 − p/100.
    pub allowed: f64,
}

/// The requests past `condition`'s limit, when it is an upper limit (`pN < L`, `pN <= L`) on a percentile of a
/// sample that has requests.
pub fn past(condition: &Condition, total: &LatencyHistogram, blocks: &[LatencyHistogram]) -> Option<Past> {
    let shootout_model::slo::Metric::Percentile(p) = condition.metric else { return None };
    if !matches!(condition.op, Op::Lt | Op::Le) || total.is_empty() {
        return None;
    }
    let limit = condition.limit.max(0.0).round() as u64;
    // Past the limit: at it or over for `<`, over it for `<=` (to the histogram's resolution).
    let from_us = match condition.op {
        Op::Lt => total.lowest_equivalent(limit.max(1)),
        _ => total.next_non_equivalent(limit.max(1)),
    };
    let (low, high) = share_past(total, blocks, from_us);
    let count = if total.max() >= from_us { total.count_between(from_us, total.max()) } else { 0 };
    Some(Past { from_us, share: count as f64 / total.len() as f64, low, high, allowed: 1.0 - p / 100.0 })
}

/// The 95% bounds of the share of requests at `from_us` or slower: the wider of the exact binomial (Clopper–Pearson)
/// bounds and the blocks' (the count's variance across them, Student's t).
pub fn share_past(total: &LatencyHistogram, blocks: &[LatencyHistogram], from_us: u64) -> (f64, f64) {
    let n = total.len();
    let past = if total.max() >= from_us { total.count_between(from_us, total.max()) } else { 0 };
    let tail = (1.0 - CONFIDENCE) / 2.0;
    // The highest share under which `past` or fewer is still 2.5% likely, and the lowest under which `past` or
    // more is.
    let high = if past >= n { 1.0 } else { bisect_share(|s| binomial_cdf(n, s, past) >= tail) };
    let low = if past == 0 { 0.0 } else { 1.0 - bisect_share(|s| 1.0 - binomial_cdf(n, 1.0 - s, past - 1) >= tail) };
    match block_spread(blocks, from_us) {
        Some(spread) => {
            let t = student_t::quantile(1.0 - tail, spread.blocks as f64 - 1.0);
            let (share, half) = (past as f64 / n as f64, t * spread.variance.sqrt() / n as f64);
            (low.min(share - half).max(0.0), high.max(share + half).min(1.0))
        }
        None => (low, high),
    }
}

/// The largest share in [0, 1] that `ok` accepts, `ok` accepting every share up to some point.
fn bisect_share(ok: impl Fn(f64) -> bool) -> f64 {
    let (mut yes, mut no) = (0.0, 1.0);
    for _ in 0..60 {
        let mid = (yes + no) / 2.0;
        if ok(mid) {
            yes = mid;
        } else {
            no = mid;
        }
    }
    yes
}

/// Judges `condition` (on a percentile) on `bounds`.
fn on_bounds(condition: &Condition, bounds: &Bounds) -> Decision {
    let low = bounds.low as f64;
    let high = bounds.high.map_or(f64::INFINITY, |h| h as f64);
    // For `<` and `<=` the high bound must hold for a pass and the low one must fail for a break; for `>` and `>=`
    // the other way round.
    let (pass_at, break_at) = match condition.op {
        Op::Lt | Op::Le => (high, low),
        Op::Gt | Op::Ge => (low, high),
    };
    if holds(condition, pass_at) {
        Decision::Met
    } else if !holds(condition, break_at) {
        Decision::Broken
    } else {
        Decision::Undecided
    }
}

/// The `percentile` (0 to 100, exclusive) of `total`, with its 95% bounds from `blocks` (the same requests, by
/// when they ended; `total` may hold a few more, such as requests left out of a probe); none when `total` is
/// empty.
pub fn bounds(total: &LatencyHistogram, blocks: &[LatencyHistogram], percentile: f64) -> Option<Bounds> {
    let n = total.len();
    if n == 0 {
        return None;
    }
    let q = (percentile / 100.0).clamp(0.0, 1.0);
    let value = value_at(total, percentile);
    let (mut low, mut high) = iid_ranks(n, q);
    // The spread of the count past the percentile (past its bucket; in it, when it is the slowest bucket), and
    // past the values at the independent bounds' ranks: the widest of them, since where the true percentile lies
    // the tail may come in longer runs than at the sample's.
    let past = |us: u64| {
        let next = total.next_non_equivalent(us);
        if total.max() >= next {
            next
        } else {
            total.lowest_equivalent(us)
        }
    };
    let at = [value, value_at_rank(total, low.max(1)), value_at_rank(total, high.min(n))];
    let spread =
        at.iter().filter_map(|&us| block_spread(blocks, past(us))).max_by(|a, b| a.variance.total_cmp(&b.variance));
    if let Some(spread) = spread {
        let (block_low, block_high) = block_ranks(n, q, &spread);
        low = low.min(block_low);
        high = high.max(block_high);
    }
    Some(Bounds {
        value,
        low: if low >= 1 { value_at_rank(total, low) } else { 0 },
        high: (high <= n).then(|| value_at_rank(total, high.max(1))),
        requests: n,
        blocks: blocks.iter().filter(|b| !b.is_empty()).count(),
        clustering: spread.map_or(1.0, |s| s.clustering()),
        past: None,
    })
}

/// The ranks (1-based, among `n` sorted values) of the order-statistic bounds of the `q` quantile of independent
/// draws: the highest rank l with P(X < l) ≤ 2.5% and the lowest u with P(X ≥ u) ≤ 2.5%, X ~ Binomial(n, q)
/// counting the draws at or under the quantile. l is 0 and u is n + 1 when no rank of `n` qualifies.
pub fn iid_ranks(n: u64, q: f64) -> (u64, u64) {
    let tail = (1.0 - CONFIDENCE) / 2.0;
    // P(X < l) = F(l − 1) rises with l: the highest l with F(l − 1) ≤ tail.
    let low = last_rank(n, |l| l == 0 || binomial_cdf(n, q, l - 1) <= tail);
    // P(X ≥ u) = 1 − F(u − 1) falls with u: the lowest u with 1 − F(u − 1) ≤ tail.
    let high = first_rank(n + 1, |u| u > 0 && 1.0 - binomial_cdf(n, q, u - 1) <= tail);
    (low, high)
}

/// How the count of requests at or above a value varied across the blocks.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spread {
    /// The blocks that held requests.
    blocks: usize,
    /// The variance of the total count across blocks (batch means), in requests².
    variance: f64,
    /// The variance a binomial count with the same share would have.
    binomial: f64,
}

impl Spread {
    /// The block variance over the binomial one, at least 1.
    fn clustering(&self) -> f64 {
        if self.binomial > 0.0 {
            (self.variance / self.binomial).max(1.0)
        } else {
            1.0
        }
    }
}

/// The spread across `blocks` (two or more that hold requests) of the count at or above `at_least_us`.
fn block_spread(blocks: &[LatencyHistogram], at_least_us: u64) -> Option<Spread> {
    let counts: Vec<(f64, f64)> = blocks
        .iter()
        .filter(|b| !b.is_empty())
        .map(|b| {
            let above = if b.max() >= at_least_us { b.count_between(at_least_us, b.max()) } else { 0 };
            (b.len() as f64, above as f64)
        })
        .collect();
    let k = counts.len();
    if k < 2 {
        return None;
    }
    let (n, e) = counts.iter().fold((0.0, 0.0), |(n, e), (bn, be)| (n + bn, e + be));
    let share = e / n;
    let squares: f64 = counts.iter().map(|(bn, be)| (be - share * bn).powi(2)).sum();
    Some(Spread { blocks: k, variance: squares * k as f64 / (k as f64 - 1.0), binomial: n * share * (1.0 - share) })
}

/// The ranks that bound the `q` quantile of `n` values whose count above it varies across blocks as `spread`
/// says: n·q ∓ t · its standard deviation, t on the blocks' degrees of freedom.
fn block_ranks(n: u64, q: f64, spread: &Spread) -> (u64, u64) {
    let t = student_t::quantile(1.0 - (1.0 - CONFIDENCE) / 2.0, spread.blocks as f64 - 1.0);
    let half = t * spread.variance.sqrt();
    let centre = n as f64 * q;
    let low = (centre - half).floor().max(0.0) as u64;
    let high = (centre + half).ceil().min(n as f64 + 1.0) as u64;
    (low, high)
}

/// The highest rank in 0..=n that `ok` accepts, `ok` accepting every rank up to some point (0 always).
fn last_rank(n: u64, ok: impl Fn(u64) -> bool) -> u64 {
    let (mut yes, mut no) = (0u64, n + 1);
    while no - yes > 1 {
        let mid = yes + (no - yes) / 2;
        if ok(mid) {
            yes = mid;
        } else {
            no = mid;
        }
    }
    yes
}

/// The lowest rank in 0..=most that `ok` accepts, `ok` accepting every rank from some point on (`most` always):
/// one past the highest it refuses, found by [`last_rank`].
fn first_rank(most: u64, ok: impl Fn(u64) -> bool) -> u64 {
    if ok(0) {
        return 0;
    }
    last_rank(most - 1, |r| r == 0 || !ok(r)) + 1
}

/// A binomial count whose mean (on the nearer side) is under this is summed exactly; above it, the normal
/// approximation with continuity correction is within a few thousandths.
const EXACT_BELOW: f64 = 400.0;

/// P(X ≤ k) for X ~ Binomial(n, p).
pub fn binomial_cdf(n: u64, p: f64, k: u64) -> f64 {
    if k >= n {
        return 1.0;
    }
    let nf = n as f64;
    if nf * p <= EXACT_BELOW {
        lower_tail(n, p, k)
    } else if nf * (1.0 - p) <= EXACT_BELOW {
        // X ≤ k is n − X ≥ n − k, with n − X ~ Binomial(n, 1 − p).
        1.0 - lower_tail(n, 1.0 - p, n - k - 1)
    } else {
        let sd = (nf * p * (1.0 - p)).sqrt();
        normal_cdf((k as f64 + 0.5 - nf * p) / sd)
    }
}

/// P(X ≤ k), X ~ Binomial(n, p), summed term by term (n·p small: the terms past a few hundred are negligible).
fn lower_tail(n: u64, p: f64, k: u64) -> f64 {
    if p <= 0.0 {
        return 1.0;
    }
    if p >= 1.0 {
        return if k >= n { 1.0 } else { 0.0 };
    }
    let ratio = p / (1.0 - p);
    let mut term = (n as f64 * (1.0 - p).ln()).exp();
    let mut sum = term;
    for j in 0..k.min(n) {
        term *= (n - j) as f64 / (j + 1) as f64 * ratio;
        sum += term;
        if sum >= 1.0 || (term < 1e-18 * sum && j as f64 > n as f64 * p) {
            break;
        }
    }
    sum.min(1.0)
}

/// The standard normal distribution function, from erfc (Numerical Recipes' Chebyshev fit, 1.2e-7).
fn normal_cdf(z: f64) -> f64 {
    0.5 * erfc(-z / std::f64::consts::SQRT_2)
}

fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98 + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let r = t * poly.exp();
    if x >= 0.0 {
        r
    } else {
        2.0 - r
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shootout_metrics::histogram::{new_histogram, record_us_n};
    use shootout_model::slo::parse_condition;

    fn histogram(values: &[(u64, u64)]) -> LatencyHistogram {
        let mut h = new_histogram();
        values.iter().for_each(|&(us, n)| record_us_n(&mut h, us, n));
        h
    }

    #[test]
    fn the_binomial_distribution_function_is_exact_where_it_matters() {
        // Binomial(5, 0.99): P(X ≤ 3) = 1 − 0.99⁵ − 5·0.99⁴·0.01.
        let exact = 1.0 - 0.99f64.powi(5) - 5.0 * 0.99f64.powi(4) * 0.01;
        assert!((binomial_cdf(5, 0.99, 3) - exact).abs() < 1e-12);
        assert!((binomial_cdf(10, 0.5, 4) - 386.0 / 1024.0).abs() < 1e-12);
        assert_eq!(binomial_cdf(10, 0.5, 10), 1.0);
        // Large counts, by the normal approximation: the median of Binomial(10⁶, 0.5) and a two-sigma point.
        assert!((binomial_cdf(1_000_000, 0.5, 500_000) - 0.5).abs() < 1e-3);
        assert!((binomial_cdf(1_000_000, 0.5, 501_000) - 0.97725).abs() < 1e-3);
        // The normal function itself.
        assert!((normal_cdf(1.959_964) - 0.975).abs() < 1e-6);
        assert!((normal_cdf(-1.0) - 0.158_655_25).abs() < 1e-6);
    }

    #[test]
    fn a_few_requests_cannot_bound_a_high_percentile_from_above() {
        // p99 of 28 requests: the upper rank lies past the slowest, so a condition `p99 < 30ms` cannot be met on
        // them, however fast they were.
        let fast = bounds(&histogram(&[(1_000, 28)]), &[], 99.0).unwrap();
        assert_eq!((fast.value, fast.high), (1_000, None));
        assert_eq!(on_bounds(&parse_condition("p99 < 30ms").unwrap(), &fast), Decision::Undecided);
        let fast_total = histogram(&[(1_000, 28)]);
        assert_eq!(decide(&parse_condition("p99 < 30ms").unwrap(), &fast_total, &[], &fast), Decision::Undecided);
        // Five requests of 120 ms break it: even the lower bound is past the limit.
        let slow = bounds(&histogram(&[(120_000, 5)]), &[], 99.0).unwrap();
        assert!(slow.low >= 119_000, "{slow:?}");
        let slow_total = histogram(&[(120_000, 5)]);
        assert_eq!(decide(&parse_condition("p99 < 30ms").unwrap(), &slow_total, &[], &slow), Decision::Broken);
        assert_eq!(iid_ranks(5, 0.99), (4, 6), "rank 4 of 5 bounds p99 from below; nothing from above");
    }

    #[test]
    fn enough_independent_requests_decide_either_way() {
        // 10,000 requests, 0.5% of them at 120 ms: p99 is 20 ms, well bounded under 30 ms.
        let total = histogram(&[(20_000, 9_950), (120_000, 50)]);
        let b = bounds(&total, &[], 99.0).unwrap();
        assert_eq!(b.value, value_at(&total, 99.0));
        assert!(b.high.unwrap() < 30_000, "{b:?}");
        assert_eq!(decide(&parse_condition("p99 < 30ms").unwrap(), &total, &[], &b), Decision::Met);
        // 2% at 120 ms: broken, also from below.
        let total = histogram(&[(20_000, 9_800), (120_000, 200)]);
        let b = bounds(&total, &[], 99.0).unwrap();
        assert_eq!(decide(&parse_condition("p99 < 30ms").unwrap(), &total, &[], &b), Decision::Broken);
        // 1% exactly: the limit lies inside the bounds.
        let total = histogram(&[(20_000, 9_900), (120_000, 100)]);
        let b = bounds(&total, &[], 99.0).unwrap();
        assert_eq!(decide(&parse_condition("p99 < 30ms").unwrap(), &total, &[], &b), Decision::Undecided);
        assert_eq!(decide(&parse_condition("p99 > 30ms").unwrap(), &total, &[], &b), Decision::Undecided);
        // Its words give the share it was judged on, whose bounds straddle the 1% p99 allows, beside p99's own.
        let slo = parse_condition("p99 < 30ms").unwrap();
        let mut judged = b;
        judged.past = past(&slo, &total, &[]);
        let shared = judged.past.unwrap();
        assert!((shared.share - 0.01).abs() < 1e-12 && shared.low < 0.01 && shared.high > 0.01, "{shared:?}");
        let words = judged.text(&slo);
        assert!(words.contains("ms on 10,000 requests; 1.00% of them took 30.000 ms or more ["), "{words}");
        assert!(words.ends_with("], where the p99 allows 1%"), "{words}");
        // 400 requests, none near 150 ms: the share past it is under 1% with 95% confidence (at most 0.92%), though
        // p99's own upper bound is the slowest request or past it.
        let total = histogram(&[(20_000, 380), (42_000, 20)]);
        let b = bounds(&total, &[], 99.0).unwrap();
        assert_eq!(decide(&parse_condition("p99 < 150ms").unwrap(), &total, &[], &b), Decision::Met);
        assert!((share_past(&total, &[], 150_000).1 - 0.0092).abs() < 0.0003, "{:?}", share_past(&total, &[], 150_000));
    }

    #[test]
    fn a_tail_that_comes_in_runs_widens_the_bounds() {
        // The same 10,000 requests, 0.5% slow: spread evenly over 10 blocks, or all in one block (a stall).
        let even: Vec<LatencyHistogram> = (0..10).map(|_| histogram(&[(20_000, 995), (120_000, 5)])).collect();
        let mut stalled: Vec<LatencyHistogram> = (0..9).map(|_| histogram(&[(20_000, 1_000)])).collect();
        stalled.push(histogram(&[(20_000, 950), (120_000, 50)]));
        let total = histogram(&[(20_000, 9_950), (120_000, 50)]);
        let spread_evenly = bounds(&total, &even, 99.0).unwrap();
        let in_one_stall = bounds(&total, &stalled, 99.0).unwrap();
        assert!(spread_evenly.clustering < 1.5, "{spread_evenly:?}");
        assert!(in_one_stall.clustering > 10.0, "{in_one_stall:?}");
        let slo = parse_condition("p99 < 30ms").unwrap();
        assert_eq!(decide(&slo, &total, &even, &spread_evenly), Decision::Met);
        assert_eq!(
            decide(&slo, &total, &stalled, &in_one_stall),
            Decision::Undecided,
            "one stall in ten seconds says little of how often stalls come: {in_one_stall:?}"
        );
    }
}
