//! Load from several agents (issue 11): `--agents local:N` starts N `shootout agent` processes, each runs its
//! exact share, and the coordinator merges what they measured into one result.

use shootout_metrics::{decode_histogram, percentile_us};

use crate::support::{describe, shootout, Target};

#[test]
fn three_local_agents_send_exactly_the_requests_asked_for() {
    let target = Target::start();
    let url = target.url("/hello");
    let output =
        shootout().args(["load", "--agents", "local:3", "-c", "12", "-n", "6000", "--json", &url]).output().unwrap();
    assert!(output.status.success(), "{}", describe(&output));
    let result: shootout_model::LoadResult = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!((result.requests.total, result.requests.ok), (6000, 6000));
    assert_eq!(target.served(), 6000, "the server saw exactly what the merged result says");
    assert!(!result.interrupted);
    assert_eq!(result.connections.opened, 12, "each agent opened its share of the 12 connections");
    // The merged figures come from the merged histogram, never from the agents' percentiles.
    let merged = decode_histogram(&result.latency.histogram).unwrap();
    assert_eq!(merged.len(), 6000);
    for p in [50.0, 90.0, 99.0] {
        assert_eq!(percentile_us(&result.latency, p), shootout_metrics::value_at(&merged, p));
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.matches("clock").count(), 3, "each agent's clock check is reported: {stderr}");
    // This test's agents are the only ones of three (the other tests here start two, or none).
    let left =
        std::process::Command::new("pgrep").args(["-f", "shootout agent --index [0-9]+ --of 3"]).output().unwrap();
    assert!(left.stdout.is_empty(), "no agent is left: {}", String::from_utf8_lossy(&left.stdout));
}

#[test]
fn two_local_agents_keep_an_open_rate() {
    let target = Target::start();
    let url = target.url("/hello");
    let output =
        shootout().args(["load", "--agents", "local:2", "-R", "400", "-d", "2s", "--json", &url]).output().unwrap();
    assert!(output.status.success(), "{}", describe(&output));
    let result: shootout_model::LoadResult = serde_json::from_slice(&output.stdout).unwrap();
    let sends = result.sends.expect("the open model reports its sends");
    assert!((792..=808).contains(&sends.due), "400/s for 2 s from two agents: {} due", sends.due);
    assert_eq!(result.requests.total, sends.sent);
    assert_eq!(target.served(), sends.sent);
    let per_second: Vec<u64> = result.timeline.iter().map(|s| s.requests).collect();
    assert!(
        per_second.iter().all(|&n| (380..=420).contains(&n)),
        "each merged second holds the whole rate: {per_second:?}"
    );
}

#[test]
fn agents_that_cannot_share_the_load_are_refused_with_one_line() {
    for (args, names) in [
        (vec!["--agents", "local:0"], "--agents 'local:0'"),
        (vec!["--agents", "docker:2"], "'docker' is not a launcher"),
        (vec!["--agents", "local:8", "-c", "4"], "each agent needs at least one connection"),
    ] {
        let mut all = vec!["load", "-n", "10"];
        all.extend(args);
        all.push("http://127.0.0.1:9/");
        let output = shootout().args(&all).output().unwrap();
        assert_eq!(output.status.code(), Some(2), "{all:?}: {}", describe(&output));
        assert!(String::from_utf8_lossy(&output.stderr).contains(names), "{all:?}: {}", describe(&output));
    }
}
