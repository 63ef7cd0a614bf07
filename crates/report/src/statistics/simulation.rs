//! The interval and the verdicts checked by simulation (tests only): repeats drawn with known noise, normal and
//! lognormal, 2% and 10% spread, at 2, 3, 5 and 10 repeats a side, from fixed seeds. A/A pairs (nothing changed)
//! must be called regressed, or improved, at most as often as the interval's stated level allows (2.5% each: one
//! side of a 95% interval), and the interval must hold a known true ratio as often as it says (95%, within 1.5
//! points) from 3 repeats up. Run with `--nocapture` to see the measured rates.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::statistics::interval::{ratio_interval, CONFIDENCE};
use crate::statistics::verdict::{verdict, Verdict};

/// How the repeats scatter around the server's true throughput.
#[derive(Debug, Clone, Copy)]
enum Noise {
    /// true × (1 + spread · z), z standard normal.
    Normal(f64),
    /// true × exp(spread · z).
    Lognormal(f64),
}

impl Noise {
    fn draw(self, rng: &mut SmallRng, truth: f64) -> f64 {
        let z = standard_normal(rng);
        match self {
            Noise::Normal(spread) => truth * (1.0 + spread * z),
            Noise::Lognormal(spread) => truth * (spread * z).exp(),
        }
    }
}

/// Box–Muller.
fn standard_normal(rng: &mut SmallRng) -> f64 {
    let u: f64 = 1.0 - rng.random::<f64>(); // (0, 1]: its logarithm is finite
    let v: f64 = rng.random();
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
}

const CASES: [Noise; 4] = [Noise::Normal(0.02), Noise::Normal(0.10), Noise::Lognormal(0.02), Noise::Lognormal(0.10)];

/// What a simulation found: how often the verdict was regressed with the default 2% noise floor and with none,
/// how often it was improved with the floor, and how often the interval held the true ratio.
struct Found {
    regressed_with_floor: f64,
    improved_with_floor: f64,
    regressed_without_floor: f64,
    coverage: f64,
}

/// `pairs` comparisons of `n` new repeats against `n` old ones, the new server `ratio` times the old one's
/// throughput, the old one's noise `old` and the new one's `new`.
fn simulate(seed: u64, pairs: usize, n: usize, old: Noise, new: Noise, ratio: f64) -> Found {
    let mut rng = SmallRng::seed_from_u64(seed);
    let (mut with_floor, mut without_floor, mut improved, mut covered) = (0usize, 0usize, 0usize, 0usize);
    for _ in 0..pairs {
        let before: Vec<f64> = (0..n).map(|_| old.draw(&mut rng, 1000.0)).collect();
        let after: Vec<f64> = (0..n).map(|_| new.draw(&mut rng, 1000.0 * ratio)).collect();
        let interval = ratio_interval(&after, &before).expect("two or more positive repeats give an interval");
        with_floor += usize::from(verdict(&interval, 0.02) == Verdict::Regressed);
        without_floor += usize::from(verdict(&interval, 0.0) == Verdict::Regressed);
        improved += usize::from(verdict(&interval, 0.02) == Verdict::Improved);
        covered += usize::from(interval.low <= ratio && ratio <= interval.high);
    }
    let share = |count: usize| count as f64 / pairs as f64;
    Found {
        regressed_with_floor: share(with_floor),
        regressed_without_floor: share(without_floor),
        improved_with_floor: share(improved),
        coverage: share(covered),
    }
}

/// Three standard errors of a proportion `p` estimated from `draws`: the simulation's own error, allowed beside
/// a bound so that a method that meets it is not failed by the luck of the draw.
fn slack(p: f64, draws: usize) -> f64 {
    3.0 * (p * (1.0 - p) / draws as f64).sqrt()
}

/// The stated chance of calling an unchanged server regressed: the interval's one tail.
const STATED_ERROR: f64 = (1.0 - CONFIDENCE) / 2.0;

#[test]
fn unchanged_servers_are_called_regressed_no_more_than_the_stated_rate() {
    const PAIRS: usize = 10_000;
    for (c, noise) in CASES.into_iter().enumerate() {
        for n in [2, 3, 5, 10] {
            let found = simulate(1_000 + 10 * c as u64 + n as u64, PAIRS, n, noise, noise, 1.0);
            let (with_floor, without_floor) = (found.regressed_with_floor, found.regressed_without_floor);
            eprintln!(
                "A/A {noise:?} n={n}: regressed {:.2}% and improved {:.2}% with --noise 2%, regressed {:.2}% with --noise 0",
                with_floor * 100.0,
                found.improved_with_floor * 100.0,
                without_floor * 100.0
            );
            assert!(
                found.improved_with_floor <= STATED_ERROR,
                "{noise:?}, {n} repeats: an unchanged server improved in {:.2}% with the 2% floor",
                found.improved_with_floor * 100.0
            );
            assert!(
                with_floor <= STATED_ERROR,
                "{noise:?}, {n} repeats: an unchanged server regressed in {:.2}% with the 2% floor",
                with_floor * 100.0
            );
            // Without a floor the rate is the interval's own lower tail: 2.5% where its coverage is exact.
            assert!(
                without_floor <= STATED_ERROR + slack(STATED_ERROR, PAIRS),
                "{noise:?}, {n} repeats: an unchanged server regressed in {:.2}% without a floor",
                without_floor * 100.0
            );
        }
    }
}

#[test]
fn the_interval_holds_the_true_ratio_as_often_as_it_says() {
    // Welch's interval is cautious at few repeats: its real coverage with equal spreads is 96.4% at 3 repeats,
    // 95.6% at 5 and 95.1% at 10 (400,000 draws each), inside the 1.5 points asked; each case here is measured
    // from 20,000 draws, give or take the simulation's own error.
    const PAIRS: usize = 20_000;
    let mut cases: Vec<(Noise, Noise)> = CASES.iter().map(|&c| (c, c)).collect();
    // A noisy new run against a quiet old one: Welch's degrees of freedom are for this.
    cases.push((Noise::Lognormal(0.02), Noise::Lognormal(0.10)));
    for (c, (old, new)) in cases.into_iter().enumerate() {
        for n in [3, 5, 10] {
            let coverage = simulate(2_000 + 10 * c as u64 + n as u64, PAIRS, n, old, new, 1.1).coverage;
            eprintln!("coverage {old:?} → {new:?} n={n}: {:.2}%", coverage * 100.0);
            assert!(
                (coverage - CONFIDENCE).abs() <= 0.015 + slack(1.0 - CONFIDENCE, PAIRS),
                "{old:?} → {new:?}, {n} repeats: the 95% interval held the true ratio in {:.2}%",
                coverage * 100.0
            );
        }
    }
}

#[test]
fn a_real_change_is_found() {
    // 10% slower at 2% noise: found about 9 times in 10 at 3 repeats (91% measured), always at 5; at 2 repeats the
    // interval is wide (t with 1 to 2 degrees of freedom) and finds it a third of the time, the price of two
    // repeats.
    let found = |n: usize| simulate(3_000 + n as u64, 2_000, n, Noise::Normal(0.02), Noise::Normal(0.02), 0.9);
    let (two, three, five) = (found(2), found(3), found(5));
    let rates = [two.regressed_with_floor, three.regressed_with_floor, five.regressed_with_floor];
    eprintln!("a 10% regression at 2% noise called regressed: {rates:.3?} at 2, 3 and 5 repeats");
    assert!(rates[1] > 0.85 && rates[2] > 0.99, "{rates:?}");
}

/// A server that answers in about a millisecond and now and then stalls: requests arrive every `1/rate` s, each
/// takes a lognormal time (median 1 ms) plus, when it arrives during a stall, the rest of the stall. Stalls start
/// as a Poisson process (`stalls_per_s`), each `stall_ms` long. Latencies are recorded by the second the request
/// arrived in, so a window's blocks are its seconds.
struct Stalling {
    rate: f64,
    stalls_per_s: f64,
    stall_ms: f64,
}

impl Stalling {
    /// `seconds` of requests: every latency, and each second's.
    fn window(
        &self,
        rng: &mut SmallRng,
        seconds: u32,
    ) -> (shootout_metrics::LatencyHistogram, Vec<shootout_metrics::LatencyHistogram>) {
        use shootout_metrics::histogram::{new_histogram, record_us};
        let mut total = new_histogram();
        let mut blocks = Vec::new();
        let (step, mut stall_end) = (1.0 / self.rate, -1.0);
        let mut next_stall = exponential(rng, self.stalls_per_s);
        for second in 0..seconds {
            let mut block = new_histogram();
            for i in 0..self.rate as u32 {
                let at = f64::from(second) + f64::from(i) * step;
                while next_stall <= at {
                    stall_end = next_stall + self.stall_ms / 1e3;
                    next_stall += exponential(rng, self.stalls_per_s);
                }
                let wait = if at < stall_end { stall_end - at } else { 0.0 };
                let us = (wait * 1e6 + 1_000.0 * (0.3 * standard_normal(rng)).exp()) as u64;
                record_us(&mut total, us);
                record_us(&mut block, us);
            }
            blocks.push(block);
        }
        (total, blocks)
    }
}

/// An exponential draw of rate `per_s` (infinite for a rate of 0).
fn exponential(rng: &mut SmallRng, per_s: f64) -> f64 {
    if per_s <= 0.0 {
        return f64::INFINITY;
    }
    -(1.0 - rng.random::<f64>()).ln() / per_s
}

#[test]
fn percentile_bounds_cover_the_true_percentile_on_a_stalling_server() {
    use crate::statistics::quantile::bounds;
    // Each case: its server, the percentile, and the windows' length. The true percentile comes from a run of
    // 4,000 s; the bounds of 300 windows must hold it at least 93% of the time (the floor set for a 95% bound).
    // Measured: 99.3, 95.0, 96.0, 96.0, 98.3 and 97.7%. Each stalling server stalls a few times a window: a stall
    // rarer than once a window cannot be seen in most windows (one stall in 10 s at 500/s, 50 ms long, moves the
    // true p99 from 2.01 to 2.16 ms, and a window without one has nothing to tell it by; its bounds held 70%), which
    // docs/methodology.md says.
    let cases = [
        (Stalling { rate: 500.0, stalls_per_s: 0.0, stall_ms: 0.0 }, 99.0, 10),
        (Stalling { rate: 500.0, stalls_per_s: 0.4, stall_ms: 40.0 }, 99.0, 10),
        (Stalling { rate: 500.0, stalls_per_s: 0.5, stall_ms: 15.0 }, 99.0, 10),
        (Stalling { rate: 1000.0, stalls_per_s: 1.0, stall_ms: 30.0 }, 99.0, 10),
        (Stalling { rate: 200.0, stalls_per_s: 1.0, stall_ms: 20.0 }, 99.0, 5),
        (Stalling { rate: 500.0, stalls_per_s: 0.4, stall_ms: 40.0 }, 50.0, 4),
    ];
    for (c, (server, percentile, seconds)) in cases.iter().enumerate() {
        let mut rng = SmallRng::seed_from_u64(4_000 + c as u64);
        let (long, _) = server.window(&mut rng, 4_000);
        let truth = shootout_metrics::value_at(&long, *percentile);
        let windows = 300;
        let (mut covered, mut decided_width) = (0, Vec::new());
        for _ in 0..windows {
            let (total, blocks) = server.window(&mut rng, *seconds);
            let b = bounds(&total, &blocks, *percentile).expect("requests were measured");
            let holds = long.equivalent(b.low, truth) || b.low <= truth;
            let under = b.high.is_none_or(|h| long.equivalent(h, truth) || truth <= h);
            covered += usize::from(holds && under);
            if let Some(high) = b.high {
                decided_width.push(high as f64 / b.low.max(1) as f64);
            }
        }
        let coverage = covered as f64 / windows as f64;
        eprintln!(
            "p{percentile} of {:.0}/s, {}/s stalls of {} ms, {seconds} s windows: true {truth} µs, covered {:.1}%, \
             bounded above in {} of {windows}",
            server.rate,
            server.stalls_per_s,
            server.stall_ms,
            coverage * 100.0,
            decided_width.len()
        );
        assert!(coverage >= 0.93, "case {c}: the 95% bounds held the true percentile in {:.1}%", coverage * 100.0);
    }
}
