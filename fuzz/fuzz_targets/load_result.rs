//! The readers of a saved load result (`shootout report result.json`, `shootout compare old.json new.json`), on
//! any bytes: results are files people pass around.
//!
//! A result that reads is rendered as the terminal summary and the HTML page, its histogram is decoded and
//! written as an `.hgrm` percentile table, and it is compared with itself, which must find no change.
#![no_main]

use libfuzzer_sys::fuzz_target;
use shootout_model::result::LoadResult;
use shootout_report::compare::{compare_results, Verdict};

fuzz_target!(|data: &[u8]| {
    // Read as `report` reads a result: figures past what a run measures are refused before anything is drawn.
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(result) = shootout_model::reading::from_results_json::<LoadResult>(text) else { return };
    let _ = shootout_report::load::text::render_load(&result);
    let _ = shootout_report::load::html::render_load(&result);
    if let Ok(histogram) = shootout_metrics::decode_histogram(&result.latency.histogram) {
        let _ = shootout_metrics::hgrm(&histogram);
    }
    let change = compare_results(&result, &result, 0.02);
    assert_ne!(change.verdict, Verdict::Regressed, "a result compared with itself: {change:?}");
    assert_ne!(change.verdict, Verdict::Improved, "a result compared with itself: {change:?}");
});
