//! The JSON result follows the schema in `schema/load-result.v1.json`, and `-o` writes the same document.

use crate::support::{assert_valid, describe, fault_server, schema, shootout, Fault, Target};

#[test]
fn a_result_with_responses_and_errors_matches_the_schema() {
    let target = Target::start();
    let file = std::env::temp_dir().join(format!("shootout-result-{}.json", std::process::id()));
    let output = shootout()
        .args(["load", "--json", "-d", "1200ms", "-c", "4", "-o"])
        .arg(&file)
        .arg(target.url("/status/404"))
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", describe(&output));
    let printed: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let written: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    std::fs::remove_file(&file).unwrap();
    assert_eq!(printed, written, "-o writes the document --json prints");
    assert_valid(&printed);
    assert_eq!(printed["schema_version"], 1);
    assert!(printed["timeline"].as_array().unwrap().len() >= 2);
    let histogram = printed["latency"]["histogram"].as_str().unwrap();
    let decoded = shootout_metrics::decode_histogram(histogram).unwrap();
    assert_eq!(decoded.len(), printed["latency"]["count"].as_u64().unwrap(), "the raw histogram is complete");

    let failing = shootout()
        .args(["load", "--json", "-n", "5", "-c", "1"])
        .arg(format!("http://{}/", fault_server(Fault::Reset)))
        .output()
        .unwrap();
    assert!(failing.status.success(), "{}", describe(&failing));
    assert_valid(&serde_json::from_slice(&failing.stdout).unwrap());

    let open = shootout()
        .args(["load", "--json", "-R", "100", "--arrival", "poisson", "--stages", "500ms:200,500ms:0"])
        .arg(target.url("/hello"))
        .output()
        .unwrap();
    assert!(open.status.success(), "{}", describe(&open));
    let open: serde_json::Value = serde_json::from_slice(&open.stdout).unwrap();
    assert_valid(&open);
    assert!(open["sends"]["due"].as_u64().unwrap() > 0);
    assert_eq!(open["options"]["pacing"]["open"]["arrival"], "poisson");
}

#[test]
fn the_schema_rejects_a_broken_document() {
    let validator = schema();
    let broken = serde_json::json!({"schema_version": 1, "requests": {"total": -1}});
    assert!(!validator.is_valid(&broken));
}

#[test]
fn every_percentile_of_a_round_count_is_the_value_at_its_nearest_rank() {
    // Issue 39: with 1,000 or 5,000 requests p99.9 was the value one rank up, often the largest.
    let target = Target::start();
    for count in [1000u64, 5000] {
        let result = crate::support::load(&["-n", &count.to_string(), "-c", "4", &target.url("/hello")]);
        let histogram = shootout_metrics::decode_histogram(&result.latency.histogram).unwrap();
        // Every request's latency as the histogram holds it, in order: the reference the table must agree with.
        let sorted: Vec<u64> = histogram
            .iter_recorded()
            .flat_map(|v| std::iter::repeat_n(v.value_iterated_to(), v.count_at_value() as usize))
            .collect();
        assert_eq!(sorted.len() as u64, count);
        for stored in &result.latency.percentiles {
            // ceil(p/100 × N) with p in thousandths of a percent, so 99.9 is exactly 99,900 / 100,000.
            let thousandths = (stored.percentile * 1000.0).round() as u64;
            let rank = (thousandths * count).div_ceil(100_000).max(1);
            assert_eq!(stored.us, sorted[rank as usize - 1], "p{} of {count} requests: rank {rank}", stored.percentile);
        }
    }
}
