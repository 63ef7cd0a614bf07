//! [`Merged`]: a cell's latencies as one sample, every repeat's requests together (their histograms summed, never a
//! median of their percentiles), with each second's block kept for the bounds of [`crate::statistics::quantile`].

use shootout_model::run::TrialRecord;
use shootout_model::slo::Slo;

use crate::statistics::quantile::{bounds, decide_on, past, Bounds, Decision};

/// The latencies of a cell's repeats together: every request's histogram, and the blocks' (each repeat's seconds).
/// Empty when a repeat's histogram cannot be read (then the figures are the medians of the repeats' own).
pub struct Merged {
    total: Option<shootout_metrics::LatencyHistogram>,
    blocks: Vec<shootout_metrics::LatencyHistogram>,
}

impl Merged {
    /// The latencies of `runs`, one cell's repeats.
    pub fn of(runs: &[&TrialRecord]) -> Merged {
        let mut total = shootout_metrics::histogram::new_histogram();
        let mut blocks = Vec::new();
        for t in runs {
            let Ok(h) = shootout_metrics::decode_histogram(&t.result.latency.histogram) else {
                return Merged { total: None, blocks: Vec::new() };
            };
            if total.add(&h).is_err() {
                return Merged { total: None, blocks: Vec::new() };
            }
            blocks.extend(
                t.result.latency_blocks.iter().filter_map(|b| shootout_metrics::decode_histogram(&b.histogram).ok()),
            );
        }
        Merged { total: Some(total).filter(|t| !t.is_empty()), blocks }
    }

    /// Percentile `p` of every request, with the range of the repeats' own; the median of theirs (and its range)
    /// when the histograms cannot be read.
    pub fn percentile_beside(&self, p: f64, repeats: (f64, (f64, f64))) -> (f64, (f64, f64)) {
        match &self.total {
            Some(total) => (shootout_metrics::value_at(total, p) as f64, repeats.1),
            None => repeats,
        }
    }

    /// Percentile `p` of every request, with its 95% bounds.
    pub fn bounds(&self, p: f64) -> Option<Bounds> {
        bounds(self.total.as_ref()?, &self.blocks, p)
    }

    /// Percentile `p` with its bounds, and `condition` (on it) judged.
    pub fn judge(&self, condition: &Slo, p: f64) -> Option<(Bounds, Decision)> {
        let total = self.total.as_ref()?;
        let mut bounds = bounds(total, &self.blocks, p)?;
        bounds.past = past(condition, total, &self.blocks);
        Some((bounds, decide_on(condition, bounds.past, &bounds)))
    }
}
