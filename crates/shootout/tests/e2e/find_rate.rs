//! `shootout load --find-rate` against an analytic truth, and its refusals. The built-in target's `/spin/US` on
//! one thread is a single server with a fixed service time S, so under Poisson arrivals the time a request waits
//! and is served is an M/D/1 queue's, S + ρS/(2(1−ρ)), plus a fixed delay d outside the queue (the client's and
//! the kernel's part of every request). S is measured as the inverse of the rate the target serves when it never
//! idles (4 users), d as the mean at a low rate less S; the rate at which the mean reaches W is then ρ*/S, with
//! ρ* = k/(1+k) and k = 2(W−d−S)/S.
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::result_json::assert_valid;
use crate::support::{describe, load, shootout, Target};

/// The rate at which an M/D/1 queue of service time `service_ms`, behind a fixed delay of `delay_ms`, has a mean
/// response of `limit_ms`.
fn md1_rate(service_ms: f64, delay_ms: f64, limit_ms: f64) -> f64 {
    let k = 2.0 * (limit_ms - delay_ms - service_ms) / service_ms;
    k / (1.0 + k) / (service_ms / 1000.0)
}

#[test]
fn the_rate_found_is_a_single_server_queues() {
    let target = Target::start();
    let url = target.url("/spin/1000");
    let busy = load(&["-c", "4", "-t", "1", "-d", "2s", &url]);
    let service_ms = 1000.0 / busy.throughput.requests_per_s;
    let low = load(&["-R", "50", "--arrival", "poisson", "-t", "1", "-d", "3s", &url]);
    let delay_ms = (low.latency.mean_us / 1000.0 - service_ms).max(0.0);
    assert!((0.9..2.0).contains(&service_ms) && delay_ms < 1.0, "S = {service_ms} ms, d = {delay_ms} ms");
    let expected = md1_rate(service_ms, delay_ms, 5.0);

    let output = shootout()
        .args(["load", "--json", "--find-rate", "--slo", "mean<5ms", "--slo", "errors<1%"])
        .args(["--arrival", "poisson", "-R", "100", "-t", "1", "-d", "3s", &url])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", describe(&output));
    let document: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_valid(&document);
    let search = &document["search"];
    let found = search["rate"].as_f64().unwrap_or_else(|| panic!("no rate: {}", describe(&output)));
    eprintln!("find-rate: found {found}/s; M/D/1 says {expected:.0}/s (S = {service_ms:.3} ms, d = {delay_ms:.3} ms)");
    assert!(
        (found - expected).abs() <= 0.10 * expected,
        "found {found}/s, M/D/1 says {expected:.0}/s at S = {service_ms:.3} ms, d = {delay_ms:.3} ms: {search}"
    );

    // The search climbed by doubling from -R, then bisected to within 5%, and kept every probe.
    let probes = search["probes"].as_array().unwrap();
    let rates: Vec<f64> = probes.iter().map(|p| p["rate"].as_f64().unwrap()).collect();
    assert_eq!(&rates[..3], &[100.0, 200.0, 400.0], "{search}");
    let failed_at = search["failed_at"].as_f64().unwrap();
    assert!(failed_at > found && failed_at - found <= 0.05 * found, "{search}");
    assert_eq!(search["ended"], "precise");
    assert!(probes.iter().any(|p| p["passed"] == false && p["broke"][0].as_str().unwrap().starts_with("mean<5ms")));
    // The result printed is the probe at the rate found.
    assert_eq!(document["options"]["pacing"]["open"]["rate"].as_f64(), Some(found), "{}", document["options"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.matches("probe ").count(), probes.len(), "{stderr}");
    assert!(stderr.contains("Rate found: "), "{stderr}");
}

#[test]
fn a_server_that_meets_nothing_gets_no_rate_and_exit_code_3() {
    let target = Target::start();
    let output = shootout()
        .args(["load", "--json", "--find-rate", "--slo", "errors<1%", "-R", "1", "-d", "1s"])
        .arg(target.url("/status/500"))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(3), "{}", describe(&output));
    let document: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_valid(&document);
    let search = &document["search"];
    assert_eq!(search["rate"], serde_json::Value::Null);
    assert_eq!(search["ended"], "floor", "{search}");
    let rates: Vec<f64> = search["probes"].as_array().unwrap().iter().map(|p| p["rate"].as_f64().unwrap()).collect();
    assert_eq!(rates, [1.0, 0.5, 0.25, 0.125, 0.1], "halved from -R down to the floor");
    assert!(String::from_utf8_lossy(&output.stderr).contains("No rate met errors<1%"), "{}", describe(&output));
}

#[test]
fn a_search_is_refused_without_objectives_or_with_a_closed_model() {
    for (args, says) in [
        (vec!["--find-rate"], "--slo"),
        (vec!["--find-rate", "--slo", "mean<1s", "-c", "10"], "--connections"),
        (vec!["--find-rate", "--slo", "mean<1s", "--precision", "0%"], "--precision 0%"),
        (vec!["--find-rate", "--slo", "mean<1s", "-R", "0"], "-R 0"),
        (vec!["--slo", "mean<1s"], "--find-rate"),
    ] {
        let output = shootout().arg("load").args(&args).arg("http://127.0.0.1:9/").output().unwrap();
        assert_eq!(output.status.code(), Some(2), "{args:?}: {}", describe(&output));
        assert!(String::from_utf8_lossy(&output.stderr).contains(says), "{args:?}: {}", describe(&output));
    }
}

#[test]
fn ctrl_c_keeps_the_probes_run_and_the_rate_found_so_far() {
    let target = Target::start();
    let run = shootout()
        .args(["load", "--json", "--find-rate", "--slo", "mean<1s", "-R", "100", "-t", "1", "-d", "2s"])
        .arg(target.url("/hello"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Probe 1 runs for 2 s, then a pause of 1 s: the signal comes during probe 2.
    std::thread::sleep(Duration::from_millis(3500));
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(run.id() as i32), nix::sys::signal::Signal::SIGINT).unwrap();
    let stopped = Instant::now();
    let output = run.wait_with_output().unwrap();
    assert!(stopped.elapsed() < Duration::from_secs(3), "Ctrl-C stops the search at once: {:?}", stopped.elapsed());
    assert_eq!(output.status.code(), Some(130), "{}", describe(&output));
    let document: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_valid(&document);
    let search = &document["search"];
    assert_eq!(search["ended"], "interrupted", "{search}");
    assert_eq!(search["rate"].as_f64(), Some(100.0), "probe 1 met the objective: {search}");
    let probes = search["probes"].as_array().unwrap();
    assert_eq!(probes.len(), 2, "the probe cut short is kept too: {search}");
    assert_eq!((probes[1]["rate"].as_f64(), &probes[1]["passed"]), (Some(200.0), &serde_json::Value::Bool(false)));
}

#[test]
fn a_server_gone_between_probes_ends_the_search_with_what_was_measured() {
    let target = Target::start();
    let run = shootout()
        .args(["load", "--json", "--find-rate", "--slo", "mean<1s", "-R", "50", "-t", "1", "-d", "1s"])
        .arg(target.url("/hello"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Probe 1 runs for 1 s, then a pause of 1 s, in which the server goes.
    std::thread::sleep(Duration::from_millis(1500));
    drop(target);
    let output = run.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", describe(&output));
    let document: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_valid(&document);
    let search = &document["search"];
    assert_eq!((&search["ended"], search["rate"].as_f64()), (&"interrupted".into(), Some(50.0)), "{search}");
    assert_eq!(search["probes"].as_array().unwrap().len(), 1, "{search}");
}
