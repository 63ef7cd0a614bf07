//! Pacing: the arithmetic of when requests start, free of I/O. A worker's `Pacer` (in `pacer.rs`) holds these
//! values with the rest of its model's state and is handed to the one worker loop, never a copy of the loop per
//! mode.
//!
//! - [`Ramp`]: a level (users or requests per second) that moves linearly through stages, k6-style.
//! - [`Schedule`]: one thread's due times in the open model, evenly spaced or Poisson, following a ramp.

use std::time::{Duration, Instant};

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use shootout_model::{Arrival, LoadOptions, Pacing, Stage};

/// A level over time: `start` until the first stage, then linear moves to each stage's target.
#[derive(Debug, Clone)]
pub struct Ramp {
    start: f64,
    /// (end of the stage since the ramp began, level at that end)
    points: Vec<(Duration, f64)>,
}

impl Ramp {
    /// A ramp from `start` through `stages` (constant at `start` when there are none).
    pub fn new(start: f64, stages: &[Stage]) -> Ramp {
        let mut end = Duration::ZERO;
        let points = stages
            .iter()
            .map(|stage| {
                end += stage.duration;
                (end, stage.target)
            })
            .collect();
        Ramp { start, points }
    }

    /// The level of a whole load over time: users (closed model) or requests per second (open model), from the
    /// starting level through the stages.
    pub fn level(options: &LoadOptions) -> Ramp {
        let start = match options.pacing {
            Pacing::Closed => f64::from(options.connections),
            Pacing::Open { rate, .. } => rate,
        };
        Ramp::new(start, &options.stages)
    }

    /// The level `elapsed` after the ramp began (the start level before, the last target after).
    pub fn at(&self, elapsed: Duration) -> f64 {
        let mut from = (Duration::ZERO, self.start);
        for &(end, target) in &self.points {
            if elapsed < end {
                let span = (end - from.0).as_secs_f64();
                let done = (elapsed.saturating_sub(from.0)).as_secs_f64();
                return if span > 0.0 { from.1 + (target - from.1) * done / span } else { target };
            }
            from = (end, target);
        }
        from.1
    }

    /// The same ramp with every level multiplied by `factor` (one thread's share of a rate).
    pub fn scaled(&self, factor: f64) -> Ramp {
        Ramp {
            start: self.start * factor,
            points: self.points.iter().map(|&(end, level)| (end, level * factor)).collect(),
        }
    }

    /// Total length of the stages, if there are any.
    pub fn length(&self) -> Option<Duration> {
        self.points.last().map(|&(end, _)| end)
    }

    /// Mean level over the first `length` of the ramp (the offered rate of an open-model run).
    pub fn mean_over(&self, length: Duration) -> f64 {
        const STEPS: u32 = 1000;
        if length.is_zero() {
            return self.at(Duration::ZERO);
        }
        let step = length / STEPS;
        (0..STEPS).map(|i| self.at(step * i + step / 2)).sum::<f64>() / f64::from(STEPS)
    }
}

/// Below this rate (requests per second) a thread is idle: nothing falls due until the rate rises.
const IDLE_RATE: f64 = 1e-3;

/// One thread's due times in the open model.
#[derive(Debug)]
pub struct Schedule {
    ramp: Ramp,
    arrival: Arrival,
    rng: SmallRng,
    origin: Instant,
    next: Instant,
    end: Option<Instant>,
    remaining: Option<u64>,
}

impl Schedule {
    /// A schedule of due times from `begin`, at the rate `ramp` gives (its time zero is `origin`; before it, the
    /// starting rate). It stops at `end` or after `count` requests, whichever is given.
    pub fn new(
        ramp: Ramp,
        arrival: Arrival,
        seed: u64,
        origin: Instant,
        begin: Instant,
        end: Option<Instant>,
        count: Option<u64>,
    ) -> Schedule {
        let mut schedule =
            Schedule { ramp, arrival, rng: SmallRng::seed_from_u64(seed), origin, next: begin, end, remaining: count };
        // Evenly spaced requests start at once; a Poisson process starts with a random gap like every other.
        let idle = schedule.ramp.at(begin.saturating_duration_since(origin)) < IDLE_RATE;
        if arrival == Arrival::Poisson || idle {
            schedule.next = schedule.after(begin);
        }
        schedule
    }

    /// When the next request is due, unless the schedule has ended.
    pub fn next_due(&self) -> Option<Instant> {
        let ended = self.remaining == Some(0) || self.end.is_some_and(|end| self.next >= end);
        (!ended).then_some(self.next)
    }

    /// Moves past the current due time.
    pub fn advance(&mut self) {
        if let Some(left) = &mut self.remaining {
            *left = left.saturating_sub(1);
        }
        self.next = self.after(self.next);
    }

    /// The due time after one at `at`: the moment when the rate, integrated from `at`, reaches one request (evenly
    /// spaced), or an exponentially distributed amount with mean one (Poisson). Integrating, rather than dividing
    /// by the rate at `at`, keeps ramps exact: a rate rising from zero does not push the next request far away.
    fn after(&mut self, at: Instant) -> Instant {
        let mut mass = match self.arrival {
            Arrival::Constant => 1.0,
            Arrival::Poisson => -(1.0 - self.rng.random::<f64>()).ln(),
        };
        let mut t = at;
        let rate_at = |ramp: &Ramp, t: Instant| ramp.at(t.saturating_duration_since(self.origin));
        loop {
            if self.end.is_some_and(|end| t >= end) {
                return t;
            }
            let rate = rate_at(&self.ramp, t);
            if rate >= IDLE_RATE {
                // Where the rate holds steady until the request is due, jump there directly.
                let need = Duration::from_secs_f64((mass / rate).min(MAX_GAP_S));
                let steady =
                    [t + need / 2, t + need].iter().all(|&u| (rate_at(&self.ramp, u) - rate).abs() <= rate * 1e-9);
                if steady || need <= STEP {
                    return t + need;
                }
            }
            let next_rate = rate_at(&self.ramp, t + STEP);
            mass -= (rate + next_rate) / 2.0 * STEP.as_secs_f64();
            t += STEP;
            if mass <= 0.0 {
                return t;
            }
        }
    }
}

/// Step of the numerical integration of a changing rate.
const STEP: Duration = Duration::from_millis(1);
/// Longest gap between two due times, whatever the rate.
const MAX_GAP_S: f64 = 3600.0;

#[cfg(test)]
mod tests {
    use super::*;

    fn stage(secs: u64, target: f64) -> Stage {
        Stage { duration: Duration::from_secs(secs), target }
    }

    #[test]
    fn ramps_are_piecewise_linear() {
        let ramp = Ramp::new(10.0, &[stage(10, 110.0), stage(5, 110.0), stage(5, 0.0)]);
        assert_eq!(ramp.at(Duration::ZERO), 10.0);
        assert_eq!(ramp.at(Duration::from_secs(5)), 60.0);
        assert_eq!(ramp.at(Duration::from_secs(12)), 110.0);
        assert_eq!(ramp.at(Duration::from_millis(17_500)), 55.0);
        assert_eq!(ramp.at(Duration::from_secs(30)), 0.0);
        assert_eq!(ramp.length(), Some(Duration::from_secs(20)));
        assert!((ramp.mean_over(Duration::from_secs(10)) - 60.0).abs() < 0.01);
        let steps = Ramp::new(0.0, &[stage(0, 5.0), stage(2, 5.0), stage(0, 9.0), stage(1, 9.0)]);
        assert_eq!(steps.at(Duration::ZERO), 5.0, "a stage of no length is a jump");
        assert_eq!(steps.at(Duration::from_millis(1999)), 5.0);
        assert_eq!(steps.at(Duration::from_secs(2)), 9.0);
    }

    #[test]
    fn a_constant_schedule_is_exact() {
        let origin = Instant::now();
        let end = origin + Duration::from_secs(2);
        let mut s =
            Schedule::new(Ramp::new(1000.0, &[]).scaled(0.5), Arrival::Constant, 1, origin, origin, Some(end), None);
        let mut count = 0;
        while let Some(due) = s.next_due() {
            assert!(due < end);
            count += 1;
            s.advance();
        }
        assert_eq!(count, 1000, "due in 2 s at 500/s");
    }

    #[test]
    fn poisson_gaps_are_exponential() {
        let origin = Instant::now();
        let rate = 2000.0;
        let mut s = Schedule::new(Ramp::new(rate, &[]), Arrival::Poisson, 7, origin, origin, None, Some(100_001));
        let mut gaps = Vec::with_capacity(100_000);
        let mut last = s.next_due().unwrap();
        s.advance();
        while let Some(due) = s.next_due() {
            gaps.push((due - last).as_secs_f64());
            last = due;
            s.advance();
        }
        let n = gaps.len() as f64;
        let mean = gaps.iter().sum::<f64>() / n;
        let sd = (gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / n).sqrt();
        assert!((mean * rate - 1.0).abs() < 0.02, "mean gap {mean}");
        assert!((sd / mean - 1.0).abs() < 0.03, "an exponential's stdev equals its mean: cv {}", sd / mean);
        // Kolmogorov-Smirnov against the exponential CDF at a few points (n = 100,000: 1% is far past noise).
        for q in [0.1, 0.5, 1.0, 2.0, 3.0] {
            let x = q / rate;
            let empirical = gaps.iter().filter(|&&g| g <= x).count() as f64 / n;
            let expected = 1.0 - (-q).exp();
            assert!((empirical - expected).abs() < 0.01, "P(gap <= {q}/rate) = {empirical}, expected {expected}");
        }
    }

    #[test]
    fn a_count_limited_schedule_stops() {
        let origin = Instant::now();
        let mut s = Schedule::new(Ramp::new(10.0, &[]), Arrival::Constant, 1, origin, origin, None, Some(3));
        for _ in 0..3 {
            assert!(s.next_due().is_some());
            s.advance();
        }
        assert_eq!(s.next_due(), None);
    }

    #[test]
    fn a_ramp_from_zero_delivers_its_integral() {
        // Idle for 1 s, then 0 → 100/s over 1 s (50 requests), then 100/s for 1 s (100 requests).
        let origin = Instant::now();
        let ramp = Ramp::new(0.0, &[stage(1, 0.0), stage(1, 100.0), stage(1, 100.0)]);
        let end = origin + Duration::from_secs(3);
        let mut s = Schedule::new(ramp, Arrival::Constant, 1, origin, origin, Some(end), None);
        let first = s.next_due().unwrap() - origin;
        // The first request is due once the ramp has delivered one: 0.5 * 100 * t^2 = 1 at t = 0.141 s.
        assert!(first >= Duration::from_millis(1130) && first < Duration::from_millis(1150), "{first:?}");
        let mut per_second = [0; 3];
        while let Some(due) = s.next_due() {
            per_second[(due - origin).as_secs() as usize] += 1;
            s.advance();
        }
        assert_eq!(per_second[0], 0);
        assert!((49..=51).contains(&per_second[1]), "{per_second:?}");
        assert!((99..=101).contains(&per_second[2]), "{per_second:?}");
    }
}
