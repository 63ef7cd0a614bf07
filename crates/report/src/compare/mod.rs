//! [`compare_trials`] and [`compare_results`]: did a change make things better or worse? For every server and
//! level of either run, the new median requests/s over the old, the 95% interval of the ratio
//! ([`crate::statistics::interval`]: Welch's t on the logarithms of the samples) and a [`Verdict`]: improved or regressed only
//! when the whole interval lies beyond the noise floor on one side (`high < 1 − noise`, `low > 1 + noise`), within
//! noise otherwise; too few repeats for an interval below two samples a side; missing when the new run has nothing
//! of it (every trial failed, or none was run) and new when only the new run has it. Each change also says what
//! limited the new run ([`Limit`]). The verdicts and the reading of an interval are [`crate::statistics::verdict`]'s,
//! where analysis finds them too (between servers, between capacities).
//!
//! [`matching`]: whether two runs measured the same thing (model, requests, levels) and can be compared.

pub mod matching;

use serde::Serialize;
use shootout_model::run::TrialRecord;
use shootout_model::slo::Metric;
use shootout_model::{LoadResult, Pacing};

use crate::analysis::limit::Limit;
use crate::analysis::median;
use crate::statistics::figures::value;
use crate::statistics::interval::{is_sample, ratio_interval, Interval, NoInterval};
pub use crate::statistics::verdict::{verdict, Verdict};

/// What a sample is: a suite's repeat or a load run's second.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Sample {
    /// One trial of a suite run.
    Repeat,
    /// One whole second of a load run's timeline.
    Second,
}

/// One run's figures of a server at a level.
#[derive(Debug, Clone, Serialize)]
pub struct Side {
    /// The samples' requests/s (successful responses): the repeats that served something, or the seconds.
    pub samples: Vec<f64>,
    /// Their median.
    pub rps: f64,
    /// Median p99 latency, µs.
    pub p99_us: f64,
    /// Repeats that served nothing (failed trials), not among the samples.
    pub failed: usize,
}

/// One server at one level, old against new.
#[derive(Debug, Clone, Serialize)]
pub struct Change {
    /// Server (the URL for single results).
    pub server: String,
    /// Level.
    pub level: f64,
    /// The old run's figures (none when only the new run has it).
    pub old: Option<Side>,
    /// The new run's (none when it is missing from it).
    pub new: Option<Side>,
    /// The new median over the old (none when the old median is 0, or either is missing).
    pub ratio: Option<f64>,
    /// The 95% interval of the ratio, with at least two samples a side.
    pub interval: Option<Interval>,
    /// The verdict.
    pub verdict: Verdict,
    /// What a sample is.
    pub sample: Sample,
    /// What limited the new run: a client-bound one measured shootout, not the change.
    pub new_limit: Limit,
    /// The trials of either run that something outside it disturbed, in words (`new run: stress (pid 4242) took
    /// 62% of a CPU on the server's CPUs during repeat 2`): a gate cannot judge a change that rests on them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub disturbed: Vec<String>,
}

impl Change {
    /// The verdict as printed: `regressed`, `too few repeats for an interval`.
    pub fn verdict_text(&self) -> &'static str {
        match (self.verdict, self.sample) {
            (Verdict::Improved, _) => "improved",
            (Verdict::Regressed, _) => "regressed",
            (Verdict::WithinNoise, _) => "no clear difference",
            (Verdict::TooFew, Sample::Repeat) => "too few repeats for an interval",
            (Verdict::TooFew, Sample::Second) => "too few seconds for an interval",
            (Verdict::NoInterval, _) => "no interval: a second served nothing",
            (Verdict::Missing, _) => "missing",
            (Verdict::New, _) => "new",
        }
    }
}

/// Compares two suite runs: every (server, level) of either, the repeats that served something as the samples.
pub fn compare_trials(old: &[TrialRecord], new: &[TrialRecord], noise: f64) -> Vec<Change> {
    let mut keys: Vec<(String, f64)> = old.iter().chain(new).map(|t| (t.server.clone(), t.level)).collect();
    keys.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
    keys.dedup();
    keys.into_iter()
        .map(|(server, level)| {
            let pick = |trials: &[TrialRecord]| -> Vec<TrialRecord> {
                trials.iter().filter(|t| t.server == server && t.level == level).cloned().collect()
            };
            let (before, after) = (pick(old), pick(new));
            let new_limit = Limit::of(&after.iter().collect::<Vec<_>>());
            let disturbed = [("old", &before), ("new", &after)]
                .into_iter()
                .flat_map(|(run, trials)| {
                    shootout_model::disturbed::disturbed(&trials.iter().collect::<Vec<_>>())
                        .into_iter()
                        .map(move |d| format!("{run} run: {}", d.text()))
                })
                .collect();
            Change { new_limit, disturbed, ..change(server, level, side(&before), side(&after), noise, Sample::Repeat) }
        })
        .collect()
}

/// A suite run's figures of one server at one level; none when no repeat served anything.
fn side(trials: &[TrialRecord]) -> Option<Side> {
    let rps = |t: &TrialRecord| crate::statistics::figures::successful_per_s(&t.result);
    let serving: Vec<&TrialRecord> = trials
        .iter()
        .filter(|t| is_sample(rps(t)) && crate::analysis::unmeasured::unmeasured(&t.result).is_none())
        .collect();
    let samples: Vec<f64> = serving.iter().map(|t| rps(t)).collect();
    let p99: Vec<f64> = serving.iter().map(|t| value(Metric::Percentile(99.0), &t.result)).collect();
    (!samples.is_empty()).then(|| Side {
        rps: median(&samples),
        p99_us: median(&p99),
        failed: trials.len() - samples.len(),
        samples,
    })
}

/// Compares two single load results, each whole second of their timelines as a sample (a last, partial second
/// would count a fraction of a second's responses as a whole second's); a run shorter than a second is one
/// sample, its own rate. The level is the connections (closed model) or the rate (open).
pub fn compare_results(old: &LoadResult, new: &LoadResult, noise: f64) -> Change {
    let side = |r: &LoadResult| {
        let (whole, _) = crate::statistics::seconds::whole_seconds(&r.timeline, r.duration_s);
        let samples = match whole.len() {
            0 => vec![r.throughput.requests_per_s],
            _ => whole.iter().map(|s| s.requests as f64).collect::<Vec<f64>>(),
        };
        Some(Side { rps: median(&samples), p99_us: value(Metric::Percentile(99.0), r), failed: 0, samples })
    };
    let change = change(new.options.url.clone(), level(new), side(old), side(new), noise, Sample::Second);
    // A single load run samples no server: only the client's side of the limit is known.
    Change { new_limit: if new.client.saturated { Limit::Client } else { Limit::Unknown }, ..change }
}

/// A load run's level: its connections (closed model) or its rate (open).
pub fn level(result: &LoadResult) -> f64 {
    match result.options.pacing {
        Pacing::Closed => f64::from(result.options.connections),
        Pacing::Open { rate, .. } => rate,
    }
}

fn change(server: String, level: f64, old: Option<Side>, new: Option<Side>, noise: f64, sample: Sample) -> Change {
    let (ratio, interval, verdict) = match (&old, &new) {
        (_, None) => (None, None, Verdict::Missing),
        (None, Some(_)) => (None, None, Verdict::New),
        (Some(old), Some(new)) => {
            // A load run whose seconds served nothing has no ratio to give: the verdict says why.
            let ratio = (old.rps > 0.0).then(|| new.rps / old.rps);
            match ratio_interval(&new.samples, &old.samples) {
                Ok(interval) => (ratio, Some(interval), verdict(&interval, noise)),
                Err(NoInterval::TooFew) => (ratio, None, Verdict::TooFew),
                Err(NoInterval::NotPositive) => (ratio, None, Verdict::NoInterval),
            }
        }
    };
    Change {
        server,
        level,
        old,
        new,
        ratio,
        interval,
        verdict,
        sample,
        new_limit: Limit::Unknown,
        disturbed: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn interval(low: f64, high: f64) -> Interval {
        Interval { centre: (low * high).sqrt(), low, high }
    }

    #[test]
    fn a_change_only_when_the_whole_interval_is_beyond_the_noise_floor() {
        assert_eq!(verdict(&interval(0.78, 0.82), 0.02), Verdict::Regressed);
        assert_eq!(verdict(&interval(0.97, 0.99), 0.02), Verdict::WithinNoise, "below 1, not below 0.98");
        assert_eq!(verdict(&interval(0.97, 0.99), 0.0), Verdict::Regressed, "no floor: below 1 is slower");
        assert_eq!(verdict(&interval(0.96, 0.981), 0.02), Verdict::WithinNoise, "its top is within 2%");
        assert_eq!(verdict(&interval(1.05, 1.15), 0.02), Verdict::Improved);
        assert_eq!(verdict(&interval(1.01, 1.15), 0.02), Verdict::WithinNoise, "its bottom is within 2%");
        assert_eq!(verdict(&interval(0.70, 1.10), 0.02), Verdict::WithinNoise, "across 1 proves nothing");
    }

    fn trial(server: &str, level: f64, rps: f64) -> TrialRecord {
        let mut t: TrialRecord = serde_json::from_str(include_str!("../../tests/trial.json")).unwrap();
        (t.server, t.level) = (server.into(), level);
        t.result.throughput.requests_per_s = rps;
        t.result.requests.http_errors = 0;
        t.result.requests.failed = 0;
        t.result.requests.ok = t.result.requests.total;
        t
    }

    #[test]
    fn every_server_and_level_of_either_run_is_listed() {
        let old = [
            trial("a", 1.0, 100.0),
            trial("a", 1.0, 102.0),
            trial("a", 4.0, 300.0),
            trial("a", 4.0, 310.0),
            trial("gone", 1.0, 50.0),
            trial("gone", 1.0, 51.0),
        ];
        let new = [
            trial("a", 1.0, 101.0),
            trial("a", 1.0, 99.0),
            trial("a", 8.0, 500.0),
            trial("fresh", 1.0, 70.0),
            trial("dead", 1.0, 0.0),
        ];
        let changes = compare_trials(&old, &new, 0.02);
        let said: Vec<(&str, f64, Verdict)> = changes.iter().map(|c| (c.server.as_str(), c.level, c.verdict)).collect();
        assert_eq!(
            said,
            [
                ("a", 1.0, Verdict::WithinNoise),
                ("a", 4.0, Verdict::Missing),
                ("a", 8.0, Verdict::New),
                ("dead", 1.0, Verdict::Missing),
                ("fresh", 1.0, Verdict::New),
                ("gone", 1.0, Verdict::Missing),
            ]
        );
        assert_eq!(changes[3].old.as_ref().map(|s| s.rps), None, "dead was not in the old run either");
        assert_eq!(changes[5].old.as_ref().map(|s| s.rps), Some(50.5));
    }

    #[test]
    fn a_failed_repeat_is_not_a_sample_and_one_sample_gives_no_verdict() {
        let old = [trial("a", 1.0, 100.0), trial("a", 1.0, 101.0), trial("a", 1.0, 99.0)];
        let new = [trial("a", 1.0, 50.0), trial("a", 1.0, 0.0), trial("a", 1.0, 0.0)];
        let change = &compare_trials(&old, &new, 0.02)[0];
        assert_eq!(change.verdict, Verdict::TooFew, "halved, but from one repeat: {change:?}");
        assert_eq!(change.verdict_text(), "too few repeats for an interval");
        let side = change.new.as_ref().unwrap();
        assert_eq!((side.samples.len(), side.failed, change.ratio), (1, 2, Some(0.5)));
    }

    /// Issue 40: a load run whose every second served nothing gave a change of +inf% against one that served, and
    /// NaN against another that did not.
    #[test]
    fn a_load_run_that_served_nothing_has_no_ratio() {
        let served = |requests: u64| {
            let mut r = trial("a", 1.0, requests as f64).result;
            r.duration_s = 3.0;
            r.timeline = (0..3)
                .map(|second| shootout_model::result::Second {
                    second,
                    requests,
                    errors: 0,
                    p50_us: None,
                    p99_us: None,
                    target: 1.0,
                })
                .collect();
            r
        };
        for (old, new) in [(served(0), served(100)), (served(0), served(0)), (served(100), served(0))] {
            let change = compare_results(&old, &new, 0.02);
            assert!(change.ratio.is_none_or(f64::is_finite), "{:?}", change.ratio);
            assert_eq!(change.verdict_text(), "no interval: a second served nothing");
        }
        assert_eq!(compare_results(&served(100), &served(0), 0.02).ratio, Some(0.0), "a fall to nothing is -100%");
    }
}
