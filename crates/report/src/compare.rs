//! [`compare_trials`] and [`compare_results`]: did a change make things better or worse? For each server and
//! level present in both, the new median requests/s over the old, with a bootstrap 95% interval, and a verdict:
//! improved or regressed when the whole interval lies past the noise threshold's side of 1 and the change itself
//! passes the threshold, otherwise within noise (criterion's way of not crying wolf). Each change also says what
//! limited the new run ([`Limit`]).

use serde::Serialize;
use shootout_model::run::TrialRecord;
use shootout_model::slo::Metric;
use shootout_model::LoadResult;

use crate::analysis::{bootstrap_ratio, median};
use crate::figures::value;
use crate::limit::Limit;

/// The verdict on one change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Faster, beyond the noise.
    Improved,
    /// Slower, beyond the noise.
    Regressed,
    /// No change the measurements can tell from noise.
    WithinNoise,
}

impl Verdict {
    /// As printed.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Improved => "improved",
            Verdict::Regressed => "regressed",
            Verdict::WithinNoise => "within noise",
        }
    }
}

/// One server at one level, old against new.
#[derive(Debug, Clone, Serialize)]
pub struct Change {
    /// Server (the URL for single results).
    pub server: String,
    /// Level.
    pub level: f64,
    /// Old median requests/s.
    pub old_rps: f64,
    /// New median requests/s.
    pub new_rps: f64,
    /// New over old.
    pub ratio: f64,
    /// Its bootstrap 2.5th percentile.
    pub low: f64,
    /// Its bootstrap 97.5th percentile.
    pub high: f64,
    /// Old median p99 latency, µs.
    pub old_p99_us: f64,
    /// New median p99 latency, µs.
    pub new_p99_us: f64,
    /// The verdict.
    pub verdict: Verdict,
    /// What limited the new run: a client-bound one measured shootout, not the change.
    pub new_limit: Limit,
}

/// The verdict for a ratio and its interval, with `noise` as a fraction (0.02 for 2%).
pub fn verdict(ratio: f64, low: f64, high: f64, noise: f64) -> Verdict {
    if high < 1.0 && ratio < 1.0 - noise {
        Verdict::Regressed
    } else if low > 1.0 && ratio > 1.0 + noise {
        Verdict::Improved
    } else {
        Verdict::WithinNoise
    }
}

/// Compares two suite runs: every (server, level) measured in both, repeats as the samples.
pub fn compare_trials<'a>(old: &'a [TrialRecord], new: &'a [TrialRecord], noise: f64) -> Vec<Change> {
    let mut keys: Vec<(String, f64)> = new.iter().map(|t| (t.server.clone(), t.level)).collect();
    keys.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
    keys.dedup();
    keys.into_iter()
        .filter_map(|(server, level)| {
            let pick = |trials: &'a [TrialRecord]| -> Vec<&'a TrialRecord> {
                trials.iter().filter(|t| t.server == server && t.level == level).collect()
            };
            let (before, after) = (pick(old), pick(new));
            if before.is_empty() {
                return None;
            }
            let rps = |runs: &[&TrialRecord]| {
                runs.iter().map(|t| crate::figures::successful_per_s(&t.result)).collect::<Vec<_>>()
            };
            let p99 = |runs: &[&TrialRecord]| {
                median(&runs.iter().map(|t| value(Metric::Percentile(99.0), &t.result)).collect::<Vec<_>>())
            };
            Some(Change {
                new_limit: Limit::of(&after),
                ..change(server, level, &rps(&before), &rps(&after), p99(&before), p99(&after), noise)
            })
        })
        .collect()
}

/// Compares two single load results, each whole second of their timelines as a sample (a last, partial second
/// would count a fraction of a second's responses as a whole second's); a run shorter than a second is one
/// sample, its own rate.
pub fn compare_results(old: &LoadResult, new: &LoadResult, noise: f64) -> Change {
    let per_second = |r: &LoadResult| {
        let (whole, _) = crate::seconds::whole_seconds(&r.timeline, r.duration_s);
        match whole.len() {
            0 => vec![r.throughput.requests_per_s],
            _ => whole.iter().map(|s| s.requests as f64).collect::<Vec<f64>>(),
        }
    };
    let p99 = |r: &LoadResult| value(Metric::Percentile(99.0), r);
    let level = f64::from(new.options.connections);
    let change = change(new.options.url.clone(), level, &per_second(old), &per_second(new), p99(old), p99(new), noise);
    // A single load run samples no server: only the client's side of the limit is known.
    Change { new_limit: if new.client.saturated { Limit::Client } else { Limit::Unknown }, ..change }
}

fn change(server: String, level: f64, old: &[f64], new: &[f64], old_p99: f64, new_p99: f64, noise: f64) -> Change {
    let (ratio, low, high) = bootstrap_ratio(new, old);
    Change {
        server,
        level,
        old_rps: median(old),
        new_rps: median(new),
        ratio,
        low,
        high,
        old_p99_us: old_p99,
        new_p99_us: new_p99,
        verdict: verdict(ratio, low, high, noise),
        new_limit: Limit::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts() {
        assert_eq!(verdict(0.80, 0.78, 0.82, 0.02), Verdict::Regressed);
        assert_eq!(verdict(0.995, 0.99, 1.0, 0.02), Verdict::WithinNoise, "0.5% is noise");
        assert_eq!(verdict(1.10, 1.05, 1.15, 0.02), Verdict::Improved);
        assert_eq!(verdict(0.90, 0.70, 1.10, 0.02), Verdict::WithinNoise, "an interval across 1 proves nothing");
    }
}
