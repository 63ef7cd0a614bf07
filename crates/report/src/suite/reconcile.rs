//! [`Reconciled`]: one answer per question. A suite can answer "how much does each server take under the SLO"
//! twice, by its sweep (`shootout run --full`: the last level that met the SLO and the first that broke it) and by
//! its search (the capacity, to its precision), in two results directories side by side. The report of either
//! finds the newest other run of the same suite, SLO and load model in the same folder ([`other_run`]) and says,
//! per server, whether the search's band (from its capacity to the level that broke it) meets the sweep's bracket
//! (from its last passing to its first failing level, within the search's precision), or that they disagree, with
//! both figures: a server whose capacity moved between the two runs (a neighbour, a warm-up, a cache) gives two
//! answers, and neither should be taken alone. A sweep of users and a search of arrival rates are not set side by
//! side: their levels count different things.

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;
use shootout_model::search::Ended;
use shootout_suite::results_folder_suite;

use crate::suite::summary::SuiteSummary;
use crate::units::level;

/// The heading of the lines every format writes.
pub const RECONCILED: &str = "The sweep and the search of this suite, side by side";

/// One server's sweep and search, side by side.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Reconciled {
    /// The server.
    pub server: String,
    /// True when the search's capacity lies between the sweep's last passing and first failing level.
    pub agree: bool,
    /// The results directory of the other run.
    pub other: PathBuf,
    /// In words.
    pub text: String,
}

/// The newest other results directory beside `dir` of the same suite (`name`, and a folder named as `dir` is up to
/// its stamp; none for a folder renamed without one), SLO and load model (`unit`, what
/// a level counts: a sweep of users and a search of arrival rates answer different questions, and a level of one
/// is no level of the other), that answered it the other way (`searched`: this run searched, so a sweep is wanted;
/// else a search), with its `analysis.json`.
pub fn other_run(dir: &Path, name: &str, slo: &[String], unit: &str, searched: bool) -> Option<(PathBuf, Value)> {
    let parent = dir.parent()?;
    let mut found: Option<(std::time::SystemTime, PathBuf, Value)> = None;
    // Another run of the same suite is named as this one, up to its stamp: the folders of other suites (in /tmp,
    // thousands, some with a suite.toml of megabytes) are not read at all. A folder renamed since (no stamp) is
    // not set beside any.
    let this = dir.file_name().and_then(|n| n.to_str()).and_then(results_folder_suite)?;
    for entry in std::fs::read_dir(parent).ok()?.flatten() {
        let sibling = entry.path();
        let ours = entry.file_name().to_str().and_then(results_folder_suite) == Some(this);
        if sibling == dir || !ours || !sibling.is_dir() {
            continue;
        }
        // The small suite file first: most siblings are other suites, whose analysis need not be read.
        let suite = shootout_model::reading::read_results_file(&sibling.join("suite.toml"), Some(&sibling));
        let Some(outline) =
            suite.ok().and_then(|text| shootout_suite::outline(&text, "suite.toml", shootout_suite::Sweep::Short).ok())
        else {
            continue;
        };
        let texts: Vec<String> = outline.slo.iter().map(|c| c.text.clone()).collect();
        if outline.name != name || texts != slo {
            continue;
        }
        let file = sibling.join("analysis.json");
        let Ok(text) = shootout_model::reading::read_results_file(&file, Some(&sibling)) else { continue };
        let Ok(analysis) = serde_json::from_str::<Value>(&text) else { continue };
        if analysis["unit"].as_str() != Some(unit) {
            continue;
        }
        let other_searched = analysis["capacities"].as_array().is_some_and(|c| !c.is_empty());
        // A search's results hold SLO answers of its probes' cells too: only a run without capacities swept.
        let swept = !other_searched && analysis["slo"].as_array().is_some_and(|s| !s.is_empty());
        if (searched && !swept) || (!searched && !other_searched) {
            continue;
        }
        let Ok(when) = std::fs::metadata(&file).and_then(|m| m.modified()) else { continue };
        if found.as_ref().is_none_or(|(newest, _, _)| when > *newest) {
            found = Some((when, sibling, analysis));
        }
    }
    found.map(|(_, dir, analysis)| (dir, analysis))
}

/// Each server that both runs answered, reconciled: this run's `summary` against the other's `analysis`.
pub fn reconcile(summary: &SuiteSummary, other_dir: &Path, other: &Value) -> Vec<Reconciled> {
    let unit = summary.unit;
    let searched = !summary.capacities.is_empty();
    let mut out = Vec::new();
    for server in summary.servers() {
        // (last passing, first failing) of the sweep; (capacity, the level that broke it, precision, a floor only)
        // of the search.
        let (sweep, search) = if searched {
            let Some(answer) = other["slo"].as_array().and_then(|a| a.iter().find(|s| s["server"] == server)) else {
                continue;
            };
            let Some(c) = summary.capacities.iter().find(|c| c.search.server == server) else { continue };
            let floor = !matches!(c.search.ended, Ended::Precise | Ended::Floor);
            let search = (c.search.capacity, c.search.failed_at, c.search.precision, floor);
            ((answer["level"].as_f64(), answer["fails_at"].as_f64()), search)
        } else {
            let Some(c) = other["capacities"].as_array().and_then(|a| a.iter().find(|c| c["server"] == server)) else {
                continue;
            };
            let Some(answer) = summary.slo_answers.iter().find(|a| a.server == server) else { continue };
            let floor = !matches!(c["ended"].as_str(), Some("precise" | "floor"));
            let precision = c["precision"].as_f64().unwrap_or(0.05);
            ((answer.level, answer.fails_at), (c["capacity"].as_f64(), c["failed_at"].as_f64(), precision, floor))
        };
        let ((passed, failed), (capacity, broke, precision, floor)) = (sweep, search);
        // The search's band (from its capacity to the level that broke it) meets the sweep's bracket.
        let below_failure = |c: f64| failed.is_none_or(|f| c < f * (1.0 + precision));
        let above_pass = |p: f64| floor || broke.is_none_or(|b| b > p * (1.0 - precision));
        let agree = match capacity {
            Some(c) => below_failure(c) && passed.is_none_or(above_pass),
            None => passed.is_none(),
        };
        let at = |l: Option<f64>| l.map_or_else(|| "none".to_string(), |l| level(l, unit));
        let sweep_words = match (passed, failed) {
            (Some(p), Some(f)) => format!("met it up to {} and broke it at {}", level(p, unit), level(f, unit)),
            (Some(p), None) => format!("met it at every level, up to {}", level(p, unit)),
            (None, Some(f)) => format!("broke it at its lowest level, {}", level(f, unit)),
            (None, None) => "measured no level".to_string(),
        };
        let search_words = match (floor, broke) {
            (true, _) => format!("at least {}", at(capacity)),
            (false, Some(b)) => format!("{} ({} breaks it)", at(capacity), level(b, unit)),
            (false, None) => at(capacity),
        };
        let text = if agree {
            format!(
                "{server}: the search's {search_words} agrees with the sweep, which {sweep_words} ({})",
                other_dir.display()
            )
        } else {
            format!(
                "{server}: the sweep and the search disagree: the sweep {sweep_words}, the search found {search_words} \
                 ({}); the server's capacity moved between the runs (a neighbour, a warm-up), so run them again \
                 before taking either",
                other_dir.display()
            )
        };
        out.push(Reconciled { server: server.to_string(), agree, other: other_dir.to_path_buf(), text });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::summary::tests::report;

    /// Issue 61: "plain: up to 500 req/s" from the sweep and "237.5 req/s" from the search, within the hour, and
    /// neither mentioned the other.
    #[test]
    fn a_search_outside_its_sweeps_bracket_disagrees_with_both_figures() {
        let mut summary = SuiteSummary::of_report(&report());
        summary.unit = "req/s";
        summary.slo_answers.retain(|a| a.server == "puma");
        (summary.slo_answers[0].level, summary.slo_answers[0].fails_at) = (Some(500.0), Some(750.0));
        let search = |capacity: f64, ended: &str| {
            serde_json::json!({ "capacities": [
                { "server": "puma", "capacity": capacity, "failed_at": capacity * 1.04, "ended": ended,
                  "precision": 0.05 }
            ] })
        };
        let other = Path::new("results/plain-search");
        let found = reconcile(&summary, other, &search(237.5, "precise"));
        assert_eq!(found.len(), 1, "only the server both runs answered: {found:?}");
        assert!(!found[0].agree);
        assert_eq!(
            found[0].text,
            "puma: the sweep and the search disagree: the sweep met it up to 500 req/s and broke it at 750 req/s, the \
             search found 237.5 req/s (247 req/s breaks it) (results/plain-search); the server's capacity moved \
             between the runs (a neighbour, a warm-up), so run them again before taking either"
        );
        let inside = reconcile(&summary, other, &search(600.0, "precise"));
        assert!(inside[0].agree, "{inside:?}");
        assert!(inside[0]
            .text
            .starts_with("puma: the search's 600 req/s (624 req/s breaks it) agrees with the sweep, which met it up"));
        assert!(reconcile(&summary, other, &search(740.0 * 1.04, "precise"))[0].agree, "within the precision");
        assert!(!reconcile(&summary, other, &search(800.0, "precise"))[0].agree, "past the failing level");
        assert!(reconcile(&summary, other, &search(300.0, "ceiling"))[0].agree, "a floor below the failing level");
        // A band of trials that fell both ways, from under the sweep's last pass to inside its bracket, meets it.
        let band = serde_json::json!({ "capacities": [
            { "server": "puma", "capacity": 400.0, "failed_at": 520.0, "ended": "precise", "precision": 0.05 }
        ] });
        assert!(reconcile(&summary, other, &band)[0].agree);
    }
}
