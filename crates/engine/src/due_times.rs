//! Due times: the arithmetic of when requests start, free of I/O. A worker's `Pacer` (in `pacer.rs`) holds these
//! values with the rest of its model's state and is handed to the one worker loop, never a copy of the loop per
//! mode.
//!
//! - [`Ramp`]: a level (users or requests per second) that moves linearly through stages, k6-style.
//! - [`Schedule`]: one worker's due times in the open model, evenly spaced or Poisson, following a ramp: its
//!   [`Share`] of the whole run's requests, each due when the ramp's rate, integrated exactly, reaches it.

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

/// The integral of a ramp's rate over time: how many requests of the whole run fall due by each instant. The
/// ramp is piecewise linear, so its integral is piecewise quadratic and is inverted exactly, piece by piece.
#[derive(Debug, Clone)]
struct Integral {
    /// From the first instant on, in order; the last lasts for ever.
    pieces: Vec<Piece>,
}

/// One stretch of a ramp over which the rate moves linearly.
#[derive(Debug, Clone, Copy)]
struct Piece {
    /// Where it starts.
    at: Instant,
    /// The rate there, requests per second.
    level: f64,
    /// How fast the rate changes, requests per second per second.
    slope: f64,
    /// Requests due before `at`.
    mass: f64,
    /// Requests due before its end (infinite for a last piece whose rate is above zero).
    end_mass: f64,
}

/// How far short of a piece's end a request may be due and still be taken as due at its end, as a share of the
/// requests counted so far: floating point cannot tell 750 from 750.0000000000001, and a ramp down to zero ends
/// exactly on a whole number of requests more often than not.
const SLACK: f64 = 1e-9;

impl Integral {
    /// The integral of `ramp` (whose time zero is `origin`; before it, the starting level) from `begin` on.
    fn new(ramp: &Ramp, origin: Instant, begin: Instant) -> Integral {
        let mut pieces = Vec::new();
        let mut mass = 0.0;
        if begin < origin {
            pieces.push(Piece { at: begin, level: ramp.start, slope: 0.0, mass, end_mass: 0.0 });
            mass += ramp.start * (origin - begin).as_secs_f64();
        }
        let mut from = (Duration::ZERO, ramp.start);
        for &(end, target) in &ramp.points {
            let span = (end - from.0).as_secs_f64();
            if span > 0.0 {
                let slope = (target - from.1) / span;
                pieces.push(Piece { at: origin + from.0, level: from.1, slope, mass, end_mass: 0.0 });
                mass += (from.1 + target) / 2.0 * span;
            }
            from = (end, target);
        }
        pieces.push(Piece { at: origin + from.0, level: from.1, slope: 0.0, mass, end_mass: 0.0 });
        for i in 0..pieces.len() {
            pieces[i].end_mass = match pieces.get(i + 1) {
                Some(next) => next.mass,
                None if pieces[i].level > 0.0 => f64::INFINITY,
                None => pieces[i].mass,
            };
        }
        let mut integral = Integral { pieces };
        // Sending that begins after the ramp's time zero counts from there.
        let before = integral.mass_at(begin);
        for piece in &mut integral.pieces {
            piece.mass -= before;
            piece.end_mass -= before;
        }
        integral
    }

    /// Requests due before `t`.
    fn mass_at(&self, t: Instant) -> f64 {
        let Some(piece) = self.pieces.iter().rev().find(|p| p.at <= t) else { return 0.0 };
        let x = (t - piece.at).as_secs_f64();
        (piece.mass + piece.level * x + piece.slope / 2.0 * x * x).min(piece.end_mass)
    }

    /// The first instant by which `mass` requests have fallen due, looking from piece `from` on (due times only
    /// grow, so a schedule keeps its place); with the piece it is in. `None` when the rate never delivers that
    /// many. A mass within [`SLACK`] of a piece's end falls due at the start of the next piece that has any, so a
    /// ramp down to zero ending on 500 requests sends 500, not 501.
    fn due(&self, mass: f64, from: usize) -> Option<(Instant, usize)> {
        let slack = SLACK * mass.abs().max(1.0);
        let i = from + self.pieces[from..].iter().position(|p| p.end_mass > mass + slack)?;
        let piece = self.pieces[i];
        let left = (mass - piece.mass).max(0.0);
        if left == 0.0 {
            return Some((piece.at, i));
        }
        // level·x + slope·x²/2 = left, solved in the form that stays accurate when the slope is small or negative.
        let root = (piece.level * piece.level + 2.0 * piece.slope * left).max(0.0).sqrt();
        let x = 2.0 * left / (piece.level + root);
        // A rate so small that the request would fall due past what an instant can hold: never.
        let at = Duration::try_from_secs_f64(x).ok().and_then(|x| piece.at.checked_add(x))?;
        Some((at, i))
    }
}

/// One worker's due times in the open model.
///
/// The whole run's requests are numbered in the order they fall due: evenly spaced, request m is due when the
/// rate integrated from the start of sending reaches m (the first at once), so a run sends exactly the integral
/// of its rate, ramps down to zero included. A worker takes every `stride`-th of them from its `first`, so the
/// workers of every agent together send each request exactly once, interleaved into one evenly spaced stream. A
/// Poisson worker instead runs its own Poisson process at its share of the rate (independent Poisson processes
/// add up to one at the whole rate).
#[derive(Debug)]
pub struct Schedule {
    integral: Integral,
    arrival: Arrival,
    rng: SmallRng,
    /// Whole-run requests from one of this worker's to its next.
    stride: u64,
    /// The whole-run position of the next request: an index (evenly spaced) or a mass (Poisson).
    position: f64,
    /// Evenly spaced: the index of the next request.
    index: u64,
    /// The piece of the integral the last due time fell in.
    piece: usize,
    next: Option<Instant>,
    end: Option<Instant>,
    remaining: Option<u64>,
}

/// A worker's part of the whole run's arrivals: evenly spaced, the requests numbered `first`, `first + stride`,
/// …; Poisson, a process at one `stride`-th of the rate, drawn from `seed`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Share {
    /// Its first request's number.
    pub first: u64,
    /// Requests of the whole run from one of its requests to its next.
    pub stride: u64,
    /// The seed of its random gaps.
    pub seed: u64,
}

impl Schedule {
    /// A worker's due times for the whole run's `ramp` of rates (its time zero is `origin`; before it, the starting
    /// rate), sending from `begin` on, its `share` of the requests. It stops at `end` or after `count` requests,
    /// whichever is given.
    pub fn new(
        ramp: &Ramp,
        arrival: Arrival,
        origin: Instant,
        begin: Instant,
        share: Share,
        end: Option<Instant>,
        count: Option<u64>,
    ) -> Schedule {
        let stride = share.stride.max(1);
        let mut schedule = Schedule {
            integral: Integral::new(ramp, origin, begin),
            arrival,
            rng: SmallRng::seed_from_u64(share.seed),
            stride,
            position: 0.0,
            index: share.first,
            piece: 0,
            next: None,
            end,
            remaining: count,
        };
        schedule.position = match arrival {
            Arrival::Constant => share.first as f64,
            Arrival::Poisson => schedule.gap(),
        };
        schedule.locate();
        schedule
    }

    /// When the next request is due, unless the schedule has ended.
    pub fn next_due(&self) -> Option<Instant> {
        let ended = self.remaining == Some(0);
        self.next.filter(|&next| !ended && self.end.is_none_or(|end| next < end))
    }

    /// Moves past the current due time.
    pub fn advance(&mut self) {
        if let Some(left) = &mut self.remaining {
            *left = left.saturating_sub(1);
        }
        self.position = match self.arrival {
            Arrival::Constant => {
                self.index += self.stride;
                self.index as f64
            }
            Arrival::Poisson => self.position + self.gap(),
        };
        self.locate();
    }

    /// Passes over every request due before `t` (and before the schedule's end) without sending it, and says how
    /// many there were: for a client so far behind that they could only wait past their timeout. Evenly spaced,
    /// the count is exact; Poisson, it is the process's mean over the stretch skipped (the process has no memory,
    /// so it goes on from `t` as it would have).
    pub fn skip_before(&mut self, t: Instant) -> u64 {
        let Some(next) = self.next_due() else { return 0 };
        let until = self.end.map_or(t, |end| t.min(end));
        if next >= until {
            return 0;
        }
        let mass = self.integral.mass_at(until);
        let stride = self.stride as f64;
        let mut skipped = match self.arrival {
            Arrival::Constant => ((mass - self.position) / stride).ceil().max(1.0) as u64,
            Arrival::Poisson => (((mass - self.position) / stride).round() as u64).max(1),
        };
        if let Some(left) = self.remaining {
            skipped = skipped.min(left);
        }
        match self.arrival {
            Arrival::Constant => {
                self.index += skipped * self.stride;
                self.position = self.index as f64;
            }
            Arrival::Poisson => self.position = mass.max(self.position) + self.gap(),
        }
        if let Some(left) = &mut self.remaining {
            *left -= skipped;
        }
        self.locate();
        skipped
    }

    /// A Poisson worker's distance to its next request, in whole-run requests: exponential, with a mean of its
    /// stride.
    fn gap(&mut self) -> f64 {
        -(1.0 - self.rng.random::<f64>()).ln() * self.stride as f64
    }

    /// Finds when the request at the current position is due.
    fn locate(&mut self) {
        self.next = self.integral.due(self.position, self.piece).map(|(at, piece)| {
            self.piece = piece;
            at
        });
    }
}

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

    /// The due times of a run split between `workers` workers (sending from `begin`, the ramp's time zero at
    /// `origin`), until `end` or `count` requests each, merged and sorted, from `origin`'s point of view.
    fn due_times(
        ramp: &Ramp,
        arrival: Arrival,
        workers: u64,
        (origin, begin): (Instant, Instant),
        end: Option<Instant>,
        count: Option<u64>,
    ) -> Vec<Instant> {
        let mut all = Vec::new();
        for first in 0..workers {
            let share = Share { first, stride: workers, seed: first };
            let mut s = Schedule::new(ramp, arrival, origin, begin, share, end, count);
            while let Some(due) = s.next_due() {
                all.push(due);
                s.advance();
            }
        }
        all.sort();
        all
    }

    /// How many of `due` fall in each of `stages` (lengths in ms from `origin`), and after them.
    fn per_stage(due: &[Instant], origin: Instant, stages: &[u64]) -> Vec<usize> {
        let mut ends: Vec<Duration> = Vec::new();
        for &ms in stages {
            ends.push(ends.last().copied().unwrap_or_default() + Duration::from_millis(ms));
        }
        let mut counts = vec![0; stages.len() + 1];
        for &t in due {
            counts[ends.iter().position(|&end| t - origin < end).unwrap_or(stages.len())] += 1;
        }
        counts
    }

    #[test]
    fn a_constant_schedule_is_exact() {
        let origin = Instant::now();
        let end = origin + Duration::from_secs(2);
        for workers in [1, 2, 3] {
            let due = due_times(&Ramp::new(1000.0, &[]), Arrival::Constant, workers, (origin, origin), Some(end), None);
            assert_eq!(due.len(), 2000, "due in 2 s at 1000/s over {workers} workers");
            for (k, t) in due.iter().enumerate() {
                assert_eq!(*t - origin, Duration::from_millis(k as u64), "{workers} workers interleave evenly");
            }
        }
    }

    #[test]
    fn stages_send_the_integral_of_their_rate_down_ramps_included() {
        // Issue 39: each of these sent one request more than its integral, the extra one at the very end.
        let origin = Instant::now();
        // (starting rate, stages as (ms, target), requests due in each stage)
        type Case = (f64, &'static [(u64, f64)], &'static [usize]);
        let cases: [Case; 4] = [
            (1000.0, &[(1000, 0.0)], &[500]),
            (1000.0, &[(1000, 500.0)], &[750]),
            (200.0, &[(2000, 1000.0), (2000, 1000.0), (1000, 0.0)], &[1200, 2000, 500]),
            (0.0, &[(1000, 0.0), (1000, 100.0), (1000, 100.0)], &[0, 50, 100]),
        ];
        for (start, stages, expected) in cases {
            let stages: Vec<Stage> =
                stages.iter().map(|&(ms, target)| Stage { duration: Duration::from_millis(ms), target }).collect();
            let ramp = Ramp::new(start, &stages);
            let end = origin + ramp.length().unwrap();
            let lengths: Vec<u64> = stages.iter().map(|s| s.duration.as_millis() as u64).collect();
            for workers in [1, 2, 3, 7] {
                let due = due_times(&ramp, Arrival::Constant, workers, (origin, origin), Some(end), None);
                let mut counts = per_stage(&due, origin, &lengths);
                assert_eq!(counts.pop(), Some(0), "nothing due after the stages");
                assert_eq!(counts, expected, "-R {start} --stages {stages:?} over {workers} workers");
            }
        }
    }

    #[test]
    fn workers_share_the_due_times_of_one_schedule() {
        let origin = Instant::now();
        let ramp = Ramp::new(50.0, &[stage(1, 450.0), stage(1, 0.0)]);
        let one = due_times(&ramp, Arrival::Constant, 1, (origin, origin), None, None);
        assert_eq!(one.len(), 475, "the integral, 250 + 225, with the ramp over");
        for workers in [2, 3, 5] {
            let many = due_times(&ramp, Arrival::Constant, workers, (origin, origin), None, None);
            assert_eq!(many, one, "{workers} workers send the one schedule's requests, each once");
        }
    }

    #[test]
    fn a_warmup_sends_at_the_starting_rate_before_the_ramp() {
        let origin = Instant::now() + Duration::from_secs(1);
        let begin = origin - Duration::from_secs(1);
        let ramp = Ramp::new(100.0, &[stage(1, 0.0)]);
        let due = due_times(&ramp, Arrival::Constant, 2, (origin, begin), Some(origin + Duration::from_secs(1)), None);
        let warmup = due.iter().filter(|&&t| t < origin).count();
        assert_eq!((warmup, due.len() - warmup), (100, 50), "a second at 100/s, then 100 → 0 over a second");
        assert_eq!(due[0], begin);
    }

    #[test]
    fn poisson_gaps_are_exponential() {
        let origin = Instant::now();
        let rate = 2000.0;
        let share = Share { first: 0, stride: 1, seed: 7 };
        let mut s = Schedule::new(&Ramp::new(rate, &[]), Arrival::Poisson, origin, origin, share, None, Some(100_001));
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
    fn poisson_workers_add_up_to_the_whole_rate() {
        let origin = Instant::now();
        let end = origin + Duration::from_secs(20);
        let due = due_times(&Ramp::new(1000.0, &[]), Arrival::Poisson, 4, (origin, origin), Some(end), None);
        // 20,000 expected; a Poisson count's standard deviation is about 141.
        assert!((due.len() as f64 - 20_000.0).abs() < 600.0, "{}", due.len());
    }

    #[test]
    fn a_count_limited_schedule_stops() {
        let origin = Instant::now();
        let share = Share { first: 0, stride: 1, seed: 1 };
        let mut s = Schedule::new(&Ramp::new(10.0, &[]), Arrival::Constant, origin, origin, share, None, Some(3));
        for _ in 0..3 {
            assert!(s.next_due().is_some());
            s.advance();
        }
        assert_eq!(s.next_due(), None);
    }

    #[test]
    fn a_rate_too_small_to_send_again_ends_the_schedule() {
        let origin = Instant::now();
        let due = due_times(&Ramp::new(1e-300, &[]), Arrival::Constant, 1, (origin, origin), None, Some(3));
        assert_eq!(due, [origin], "the first at once, the next 10^300 s later: never");
    }

    #[test]
    fn a_ramp_from_zero_starts_when_the_rate_does() {
        // Idle for 1 s, then 0 → 100/s over 1 s: the first request goes when the rate starts to rise, the next
        // once the ramp has delivered one more (0.5 × 100 × t² = 1 at t = 0.141 s).
        let origin = Instant::now();
        let ramp = Ramp::new(0.0, &[stage(1, 0.0), stage(1, 100.0)]);
        let due = due_times(&ramp, Arrival::Constant, 1, (origin, origin), None, Some(2));
        assert_eq!(due[0] - origin, Duration::from_secs(1));
        let second = (due[1] - origin).as_secs_f64();
        assert!((second - (1.0 + 0.02f64.sqrt())).abs() < 1e-6, "{second}");
    }
}
