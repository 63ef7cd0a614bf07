//! `shootout compare` on constructed results with known differences, and `--fail-if` thresholds: the verdicts
//! and exit codes a CI job gates on.

use std::path::{Path, PathBuf};

use shootout_model::run::{ServerUsage, TrialRecord};

use crate::support::{describe, load, shootout, Target};

/// A results directory whose trials of server "app" at 4 users have these requests/s.
fn results_dir(name: &str, template: &shootout_model::LoadResult, rps: &[f64]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("shootout-compare-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("trials/app")).unwrap();
    std::fs::write(dir.join("suite.toml"), "connections = [4]\n").unwrap();
    for (i, &value) in rps.iter().enumerate() {
        let mut result = template.clone();
        result.throughput.requests_per_s = value;
        let trial = TrialRecord {
            server: "app".into(),
            level: 4.0,
            repeat: i as u32 + 1,
            result,
            samples: vec![],
            usage: ServerUsage::default(),
        };
        std::fs::write(dir.join(format!("trials/app/4-r{}.json", i + 1)), serde_json::to_string(&trial).unwrap())
            .unwrap();
    }
    dir
}

fn compare(old: &Path, new: &Path, extra: &[&str]) -> std::process::Output {
    shootout().arg("compare").arg(old).arg(new).args(extra).output().unwrap()
}

#[test]
fn a_twenty_percent_regression_is_flagged_and_half_a_percent_is_noise() {
    let target = Target::start();
    let template = load(&["-n", "200", "-c", "2", &target.url("/hello")]);
    let base = [1000.0, 1012.0, 991.0, 1006.0, 996.0];
    let old = results_dir("old", &template, &base);
    let slower = results_dir("slower", &template, &base.map(|v| v * 0.8));
    let same = results_dir("same", &template, &base.map(|v| v * 0.995));

    let regressed = compare(&old, &slower, &["--max-regression", "5%"]);
    assert_eq!(regressed.status.code(), Some(3), "{}", describe(&regressed));
    let out = String::from_utf8_lossy(&regressed.stdout);
    assert!(out.contains("-20.0%") && out.contains("regressed"), "{out}");
    assert!(String::from_utf8_lossy(&regressed.stderr).contains("regression beyond --max-regression 5.0%: app at 4"));

    let noise = compare(&old, &same, &["--max-regression", "5%"]);
    assert!(noise.status.success(), "{}", describe(&noise));
    assert!(String::from_utf8_lossy(&noise.stdout).contains("within noise"));

    let improved = compare(&slower, &old, &[]);
    assert!(improved.status.success());
    assert!(String::from_utf8_lossy(&improved.stdout).contains("improved"));
}

#[test]
fn two_load_results_compare_second_by_second() {
    let target = Target::start();
    let dir = std::env::temp_dir();
    let (a, b) = (
        dir.join(format!("shootout-cmp-a-{}.json", std::process::id())),
        dir.join(format!("shootout-cmp-b-{}.json", std::process::id())),
    );
    for file in [&a, &b] {
        let output = shootout()
            .args(["load", "-R", "500", "-d", "3s", "-o"])
            .arg(file)
            .arg(target.url("/hello"))
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", describe(&output));
    }
    let output = compare(&a, &b, &["--max-regression", "5%"]);
    assert!(output.status.success(), "the same fixed rate twice: {}", describe(&output));
    assert!(String::from_utf8_lossy(&output.stdout).contains("within noise"), "{}", describe(&output));
    let said = String::from_utf8_lossy(&output.stdout).to_string();
    // 3 whole seconds at 500/s each, the partial last one left out (a response late by a few ms on a busy machine
    // moves one from a second to the next, so each rate is 500 give or take a request per second).
    let row = said.lines().find(|line| line.contains("/hello")).unwrap_or_default();
    let rates: Vec<f64> = row.split_whitespace().skip(2).take(2).filter_map(|n| n.parse().ok()).collect();
    assert!(
        rates.len() == 2 && rates.iter().all(|r| (498.0..=502.0).contains(r)),
        "3 whole seconds at 500/s each, the partial last one left out: {said}"
    );

    // A run shorter than a second is compared by its own rate, not by the responses of its one partial second.
    for file in [&a, &b] {
        let output =
            shootout().args(["load", "-c", "2", "-n", "300", "-o"]).arg(file).arg(target.url("/delay/2")).output();
        assert!(output.unwrap().status.success());
    }
    let rate = |file: &Path| -> f64 {
        let result: serde_json::Value = serde_json::from_slice(&std::fs::read(file).unwrap()).unwrap();
        result["throughput"]["requests_per_s"].as_f64().unwrap()
    };
    let output = compare(&a, &b, &[]);
    let said = String::from_utf8_lossy(&output.stdout).to_string();
    let line = said.lines().nth(1).unwrap_or_default();
    let figures: Vec<f64> = line.split_whitespace().filter_map(|w| w.parse().ok()).collect();
    assert_eq!(
        figures.get(1..3),
        Some(&[(rate(&a) * 10.0).round() / 10.0, (rate(&b) * 10.0).round() / 10.0][..]),
        "{said}"
    );
}

#[test]
fn fail_if_thresholds_gate_a_load_run() {
    let target = Target::start();
    let passing = shootout()
        .args(["load", "-n", "200", "-c", "2", "--fail-if", "errors>1%", "--fail-if", "p99>10s"])
        .arg(target.url("/hello"))
        .output()
        .unwrap();
    assert!(passing.status.success(), "{}", describe(&passing));
    let failing = shootout()
        .args(["load", "-n", "50", "-c", "2", "--fail-if", "errors>1%", "--fail-if", "p50 > 1ms"])
        .arg(target.url("/delay/20"))
        .output()
        .unwrap();
    assert_eq!(failing.status.code(), Some(3), "{}", describe(&failing));
    let stderr = String::from_utf8_lossy(&failing.stderr);
    assert!(stderr.contains("threshold failed: p50 > 1ms (it was 2") && !stderr.contains("errors>1%"), "{stderr}");
    let bad = shootout().args(["load", "--fail-if", "speed>fast", "http://127.0.0.1:1/"]).output().unwrap();
    assert_eq!(bad.status.code(), Some(2), "{}", describe(&bad));
}
