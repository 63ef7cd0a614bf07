//! `shootout load --find-rate`: where a search ends when no rate meets the objectives, when Ctrl-C or a server
//! gone cuts it short, and its refusals. The search against an analytic truth (an M/D/1 queue) is in
//! `tests/quiet/capacity.rs`, which runs with the machine to itself.

use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::support::{assert_valid, describe, shootout, Target};

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
    // Probe 1 runs for 2 s, then the server is back at rest at once: the signal comes during probe 2.
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
    // Probe 1 runs for 1 s; the server goes during probe 2, and settling before probe 3 finds its port closed.
    std::thread::sleep(Duration::from_millis(1500));
    drop(target);
    let gone = Instant::now();
    let output = run.wait_with_output().unwrap();
    assert!(gone.elapsed() < Duration::from_secs(10), "no settling waits on a server gone: {:?}", gone.elapsed());
    assert_eq!(output.status.code(), Some(1), "{}", describe(&output));
    let document: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_valid(&document);
    let search = &document["search"];
    assert_eq!((&search["ended"], search["rate"].as_f64()), (&"interrupted".into(), Some(50.0)), "{search}");
    let probes = search["probes"].as_array().unwrap();
    assert_eq!(probes[0]["passed"], true, "{search}");
    assert!(probes[1..].iter().all(|p| p["passed"] == false), "{search}");
}
