//! Percentiles by nearest rank, computed in integers: [`rank`] (which of N sorted values is percentile p),
//! [`value_at_rank`] (the histogram's value there) and [`distribution`] (the steps of `.hgrm` and the HTML
//! report's percentile chart).
//!
//! HdrHistogram defines percentile p of N values as the smallest value whose cumulative count reaches
//! ceil(p/100 × N). Computed in floating point, 99.9/100 is 0.9990000000000001, and ceil(0.9990000000000001 ×
//! 1000) is 1000 rather than 999: p99.9 of every multiple of 1,000 values was one rank high, often the maximum
//! (issue 39). Here p is read as an exact count of billionths of a percent, and the rank is computed from it in
//! 128-bit integers.

use crate::histogram::LatencyHistogram;

/// Billionths of a percent in one percent: percentiles are exact to nine decimal places (p99.999999999).
const SCALE: u128 = 1_000_000_000;

/// The nearest rank of `percentile` (0 to 100) among `count` sorted values: ceil(percentile/100 × count), at
/// least 1 and at most `count` (0 when `count` is 0).
pub fn rank(percentile: f64, count: u64) -> u64 {
    let parts = (percentile.clamp(0.0, 100.0) * SCALE as f64).round() as u128;
    let whole = 100 * SCALE;
    let rank = (parts * u128::from(count)).div_ceil(whole);
    (rank as u64).clamp(count.min(1), count)
}

/// The value of the `rank`-th smallest recorded value (1-based), as HdrHistogram reports it: the highest value
/// its bucket stands for (the values of one bucket are equal to 3 significant digits). 0 when the histogram is
/// empty; the maximum's when `rank` is past the count.
pub fn value_at_rank(histogram: &LatencyHistogram, rank: u64) -> u64 {
    let mut seen = 0;
    let mut last = 0;
    for step in histogram.iter_recorded() {
        seen += step.count_since_last_iteration();
        last = step.value_iterated_to();
        if seen >= rank {
            break;
        }
    }
    last
}

/// One step of a percentile distribution: the value reached at a percentile level, and how many values are at
/// or below it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Step {
    /// The value at `quantile` (µs, the highest value of its bucket).
    pub value: u64,
    /// The level, 0 to 1.
    pub quantile: f64,
    /// Values recorded at or below `value`.
    pub total_count: u64,
}

/// The percentile distribution of `histogram`, as HdrHistogram's `outputPercentileDistribution` lists it: levels
/// from 0 in `ticks_per_half` equal steps per half of the distance left to 1 (0, 0.1, …, 0.5, 0.55, …, 0.75,
/// 0.775, …), each with the value at its nearest rank; once a level reaches the largest value, one last step at
/// level 1. The levels are exact fractions, so each step's value is exactly that of its rank. Empty for an empty
/// histogram.
pub fn distribution(histogram: &LatencyHistogram, ticks_per_half: u32) -> Vec<Step> {
    let count = histogram.len();
    let mut steps = Vec::new();
    if count == 0 {
        return steps;
    }
    let mut buckets = histogram.iter_recorded().map(|v| (v.value_iterated_to(), v.count_since_last_iteration()));
    let (mut value, mut total_count) = buckets.next().unwrap_or((0, count));
    // The level is `numerator / denominator` with denominator = ticks_per_half × 2^power: every step adds one
    // tick of the current half, 1 / (ticks_per_half × 2^(halvings + 1)), which is a whole number of these units.
    let ticks = u128::from(ticks_per_half.max(1));
    let (mut numerator, mut power) = (0u128, 1u32);
    loop {
        let denominator = ticks << power;
        let rank = numerator
            .checked_mul(u128::from(count))
            .map_or(u128::from(count), |n| n.div_ceil(denominator))
            .clamp(1, u128::from(count)) as u64;
        while total_count < rank {
            let Some((next, in_bucket)) = buckets.next() else { break };
            value = next;
            total_count += in_bucket;
        }
        steps.push(Step { value, quantile: numerator as f64 / denominator as f64, total_count });
        if total_count >= count {
            steps.push(Step { value, quantile: 1.0, total_count });
            return steps;
        }
        // Halvings so far: the largest h with 2^h × (1 − level) ≤ 1, i.e. 2^h × (denominator − numerator) ≤
        // denominator. The next tick is 1 / (ticks × 2^(h + 1)).
        let left = denominator - numerator;
        let halvings = (denominator / left).ilog2();
        if halvings + 1 > power {
            numerator <<= halvings + 1 - power;
            power = halvings + 1;
        }
        numerator += 1 << (power - (halvings + 1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::histogram::{new_histogram, record_us, value_at, AB_PERCENTILES};

    /// A small deterministic generator (SplitMix64), so that the property test needs no dependency and every run
    /// checks the same cases.
    struct SplitMix(u64);

    impl SplitMix {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        }

        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
    }

    #[test]
    fn ranks_are_exact_at_round_counts() {
        assert_eq!(rank(99.9, 1000), 999, "ceil(0.9990000000000001 × 1000) was 1000");
        assert_eq!(rank(99.9, 5000), 4995);
        assert_eq!(rank(99.99, 10_000), 9999);
        assert_eq!(rank(50.0, 1), 1);
        assert_eq!(rank(50.0, 3), 2);
        assert_eq!(rank(0.0, 10), 1, "p0 is the smallest value");
        assert_eq!(rank(100.0, 10), 10);
        assert_eq!(rank(99.0, 0), 0);
        assert_eq!(rank(99.9999, u64::MAX), u64::MAX - u64::MAX / 1_000_000, "no overflow at the largest count");
    }

    /// Percentile `p` of `sorted` by the definition: the value at rank ceil(p/100 × N), found by counting with
    /// rationals (p as thousandths, so 99.9 is 99,900 / 100,000 exactly), not by the function under test.
    fn nearest_rank(sorted: &[u64], thousandths: u64) -> u64 {
        let n = sorted.len() as u64;
        let mut rank = (thousandths * n).div_ceil(100_000).max(1);
        if rank > n {
            rank = n;
        }
        sorted[rank as usize - 1]
    }

    #[test]
    fn every_reported_percentile_is_the_value_at_its_nearest_rank() {
        let mut random = SplitMix(39);
        // Every count to 200, round counts to 100,000 (where p99.9 was wrong), and counts drawn from 1 to 100,000.
        let round = [1000, 2000, 3000, 5000, 7000, 10_000, 20_000, 50_000, 100_000];
        let sampled: Vec<u64> = (0..20).map(|_| 1 + random.below(100_000)).collect();
        let counts = (1..=200).chain(round).chain(sampled);
        let extra = [0.1, 1.0, 25.0, 42.0, 99.5, 99.95, 99.999];
        let percentiles: Vec<f64> = AB_PERCENTILES.iter().copied().chain(extra).collect();
        for count in counts {
            // Up to 2,047 every value is its own bucket (3 significant digits), so the histogram is exact there;
            // one value in four is larger, and is checked against the highest value of its bucket.
            let values: Vec<u64> = (0..count)
                .map(|_| if random.below(4) == 0 { 1 + random.below(3_600_000_000) } else { 1 + random.below(2047) })
                .collect();
            let mut histogram = new_histogram();
            for &us in &values {
                record_us(&mut histogram, us);
            }
            let mut sorted = values;
            sorted.sort_unstable();
            for &p in &percentiles {
                let thousandths = (p * 1000.0).round() as u64;
                let expected = histogram.highest_equivalent(nearest_rank(&sorted, thousandths));
                assert_eq!(value_at(&histogram, p), expected, "p{p} of {count} values");
            }
        }
    }

    #[test]
    fn the_distribution_steps_through_halving_levels_to_the_largest_value() {
        let mut histogram = new_histogram();
        for us in 1..=1000 {
            record_us(&mut histogram, us);
        }
        let steps = distribution(&histogram, 5);
        let levels: Vec<f64> = steps.iter().take(13).map(|s| s.quantile).collect();
        assert_eq!(levels, [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.775, 0.8]);
        for step in &steps[..steps.len() - 1] {
            let rank = (step.quantile * 1000.0 - 1e-6).ceil().max(1.0) as u64;
            assert_eq!(step.value, rank, "at level {}", step.quantile);
            assert_eq!(step.total_count, rank, "values up to the one at level {}", step.quantile);
        }
        let last = steps.last().unwrap();
        assert_eq!((last.value, last.quantile, last.total_count), (1000, 1.0, 1000));
        let before = steps[steps.len() - 2];
        assert_eq!(before.value, 1000, "the step that reached the largest value comes just before level 1");
        assert!(before.quantile > 0.999 && before.quantile < 1.0, "{}", before.quantile);
        assert!(steps.windows(2).all(|w| w[0].quantile < w[1].quantile));
        assert!(distribution(&new_histogram(), 5).is_empty());
    }
}
