//! The readers of a results directory's trials (`shootout report DIR`, `shootout compare OLD NEW`), on any bytes
//! read as the trials of one run.
//!
//! The trials are analysed under a suite outline with objectives, summarised, and written as every report
//! (CSV, HTML, Markdown, text); they are compared with themselves and with their own first half.
#![no_main]

use libfuzzer_sys::fuzz_target;
use shootout_model::run::TrialRecord;
use shootout_report::compare::compare_trials;
use shootout_report::export::{Csv, Exporter, Html, Markdown, Text};
use shootout_report::suite::report::SuiteReport;
use shootout_report::suite::summary::SuiteSummary;

/// A suite outline with objectives on latency and errors, as `report` reads it from a results directory.
const SUITE: &str = r#"
name = "fuzz"
slo = ["p99 < 100ms", "errors < 1%"]

[[server]]
name = "a"
command = "true"
"#;

fuzz_target!(|data: &[u8]| {
    // Read as `report` reads a trial: figures past what a run measures are refused before anything is drawn.
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(trials) = shootout_model::reading::from_results_json::<Vec<TrialRecord>>(text) else { return };
    let outline =
        shootout_suite::outline(SUITE, "suite.toml", shootout_suite::Sweep::Short).expect("the fixed suite reads");
    let report = SuiteReport::new(outline, None, trials.clone());
    let summary = SuiteSummary::of_report(&report);
    for exporter in [&Csv as &dyn Exporter, &Html, &Markdown, &Text] {
        let _ = exporter.export(&summary);
    }
    let _ = compare_trials(&trials, &trials, 0.02);
    let _ = compare_trials(&trials[..trials.len() / 2], &trials, 0.02);
});
