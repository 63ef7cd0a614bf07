//! The counts shootout reports are the counts the server saw.

use std::process::Stdio;
use std::time::Duration;

use nix::sys::signal::Signal;
use shootout_model::{LoadResult, StopCondition};

use crate::support::{load, shootout, stop_with, Target};

#[test]
fn a_request_count_run_sends_exactly_that_many() {
    let target = Target::start();
    let result = load(&["-n", "5000", "-c", "10", "-t", "2", &target.url("/hello")]);
    assert_eq!(result.options.stop, StopCondition::Requests(5000));
    assert_eq!(result.requests.total, 5000);
    assert_eq!(result.requests.ok, 5000);
    assert_eq!(result.latency.count, 5000);
    assert_eq!(result.status_counts.get("200"), Some(&5000));
    assert_eq!(target.served(), 5000, "the server saw what shootout reported");
    assert_eq!(result.connections.opened, 10, "keep-alive: one connection per slot");
    assert!(result.bytes_received >= 5000 * 12);
}

#[test]
fn a_timed_run_reports_what_the_server_served() {
    let target = Target::start();
    let result = load(&["-d", "1s", "-c", "8", &target.url("/hello")]);
    assert!(result.requests.total > 100, "only {} requests in a second", result.requests.total);
    assert_eq!(target.served(), result.requests.total);
    assert!((0.99..1.5).contains(&result.duration_s), "duration {}", result.duration_s);
    let timeline_total: u64 = result.timeline.iter().map(|s| s.requests).sum();
    assert_eq!(timeline_total, result.requests.total, "the timeline accounts for every request");
}

#[test]
fn warmup_requests_are_sent_but_not_counted() {
    let target = Target::start();
    let result = load(&["-d", "600ms", "--warmup", "400ms", "-c", "4", &target.url("/hello")]);
    assert!(result.requests.warmup > 0);
    assert_eq!(target.served(), result.requests.total + result.requests.warmup);
    assert!(result.duration_s < 1.0, "the warm-up is not part of the measured window");
}

#[test]
fn no_keepalive_opens_a_connection_per_request() {
    let target = Target::start();
    let result = load(&["-n", "300", "-c", "3", "--no-keepalive", &target.url("/hello")]);
    assert_eq!(result.requests.ok, 300);
    assert_eq!(result.connections.opened, 300);
    assert_eq!(result.connect.count, 300);
    assert_eq!(target.served(), 300);
}

#[test]
fn a_server_closing_keepalive_connections_causes_counted_reconnects() {
    let target = Target::start();
    let result = load(&["-n", "200", "-c", "2", &target.url("/close")]);
    assert_eq!(result.requests.ok, 200);
    assert_eq!(result.requests.failed, 0, "a clean close between requests is not an error");
    assert_eq!(result.connections.closed_by_server, 200);
    assert_eq!(result.connections.opened, 200);
}

#[test]
fn http_errors_are_answers_not_transport_failures() {
    let target = Target::start();
    let result = load(&["-n", "100", "-c", "2", &target.url("/status/503")]);
    assert_eq!(result.requests.total, 100);
    assert_eq!(result.requests.http_errors, 100);
    assert_eq!(result.requests.failed, 0);
    assert!(result.errors.is_empty());
    assert_eq!(result.status_counts.get("503"), Some(&100));
}

#[test]
fn post_bodies_are_sent() {
    let target = Target::start();
    let body = "x".repeat(10_000);
    let result = load(&["-n", "50", "-c", "1", "--body", &body, &target.url("/hello")]);
    assert_eq!(result.options.method, "POST");
    assert_eq!(result.options.body_bytes, 10_000);
    assert_eq!(result.requests.ok, 50);
    assert!(result.bytes_sent >= 50 * 10_000);
    assert_eq!(target.served(), 50);
}

/// One second of 8 users on `target` sending a mix of fast `/hello` requests and, once in `one_in`, a request
/// to `slow` (a path taking longer than the second), with `timeout`: the result, and how long the run took.
fn a_second_ending_in_slow_requests(target: &Target, one_in: u32, slow: &str, timeout: &str) -> (LoadResult, f64) {
    let scenario = std::env::temp_dir().join(format!("shootout-slow-end-{}-{one_in}.toml", std::process::id()));
    let mix = format!(
        "[[request]]\nname = \"fast\"\nurl = \"/hello\"\nweight = {}\n\
         [[request]]\nname = \"slow\"\nurl = \"{slow}\"\nweight = 1\n",
        one_in - 1
    );
    std::fs::write(&scenario, mix).unwrap();
    let started = std::time::Instant::now();
    let result = load(&[
        "-d",
        "1s",
        "-c",
        "8",
        "--timeout",
        timeout,
        "--scenario",
        scenario.to_str().unwrap(),
        &target.url("/"),
    ]);
    std::fs::remove_file(&scenario).unwrap();
    (result, started.elapsed().as_secs_f64())
}

#[test]
fn requests_left_to_time_out_do_not_stretch_the_measured_window() {
    let target = Target::start();
    // One request in fifty never gets its answer in time: those users wait out the 2 s timeout, long after
    // the 1 s of sending. The throughput is still per second of that 1 s window, not of the 3 s run.
    let (result, took) = a_second_ending_in_slow_requests(&target, 50, "/delay/10000", "2s");
    assert!(took > 2.0, "the stuck requests were waited for");
    assert!(
        result.errors.get(&shootout_model::ErrorKind::ReadTimeout).copied().unwrap_or(0) > 0,
        "{:?}",
        result.errors
    );
    assert!((0.99..1.5).contains(&result.duration_s), "measured window {} s", result.duration_s);
    // The rate is of the answers inside the window: every answer but those that came after it.
    let answered = (result.requests.ok + result.requests.http_errors) as f64;
    let inside = result.throughput.requests_per_s * result.duration_s;
    assert!(inside <= answered + 0.5 && inside >= answered - result.requests.after_window as f64 - 0.5, "{inside}");
}

#[test]
fn slow_last_responses_are_counted_without_stretching_the_measured_window() {
    let target = Target::start();
    // One request in a hundred takes 700 ms, so when sending stops after 1 s most users are waiting for one:
    // they are waited for and counted, but the rate is of the answers inside the 1 s of sending. Divided by the
    // time until the last answer (up to 1.7 s), it would lose what a server with a long tail served in its window.
    let (result, took) = a_second_ending_in_slow_requests(&target, 100, "/delay/700", "5s");
    assert!(took > 1.2, "the slow last requests were waited for");
    assert_eq!(result.requests.failed, 0, "every request was answered: {:?}", result.errors);
    assert_eq!(target.served(), result.requests.total, "the late answers are counted");
    assert!((0.99..1.1).contains(&result.duration_s), "measured window {} s", result.duration_s);
    // The answers that came after the window are counted, but the rate is of those inside it.
    assert!(result.requests.after_window > 0, "users were waiting when sending stopped");
    let inside = (result.requests.ok + result.requests.http_errors - result.requests.after_window) as f64;
    assert!((result.throughput.requests_per_s * result.duration_s - inside).abs() < 0.5);
}

#[test]
fn ctrl_c_sigterm_and_sighup_stop_the_run_and_keep_every_answer_counted() {
    // Ctrl-C, and what `timeout`, a CI job's cancel or a closed terminal send: the same end, with 128 + the signal.
    for signal in [Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP] {
        let target = Target::start();
        let run = shootout()
            .args(["load", "-c", "4", "-d", "30s", "--json", &target.url("/delay/20")])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let result = stop_with(signal, run, Duration::from_millis(1500), Duration::from_secs(3), false);
        // Four users at 20 ms a request for about a second and a half: some 300 answers, every one of them
        // counted, the requests in flight at the signal included (they finish well within the second they are
        // given).
        assert!(result.requests.total > 100, "{signal}: what was measured is kept: {}", result.requests.total);
        assert_eq!(result.requests.total, target.served(), "{signal}: every answer the server gave is counted");
        assert_eq!(result.requests.failed, 0, "{signal}: {:?}", result.errors);
        assert!(
            (1.0..2.5).contains(&result.duration_s),
            "{signal}: the window ends at the signal: {} s",
            result.duration_s
        );
    }
}

/// Issue 47: every response a 404 read `Availability: 100.00 %`, `Errors: none`, exit 0 with no warning.
#[test]
fn a_run_whose_every_response_is_a_404_says_so() {
    let target = Target::start();
    let output = shootout().args(["load", "-n", "200", "-c", "2", &target.url("/status/404")]).output().unwrap();
    assert!(output.status.success(), "the exit code rule stays: --fail-if gates on it");
    let summary = String::from_utf8_lossy(&output.stdout);
    assert!(summary.contains("Availability:             0.00 %"), "{summary}");
    assert!(summary.contains("Errors:                   HTTP 404: 200\n"), "{summary}");
    assert!(
        summary.contains(
            "WARNING: most requests failed: 200 of 200 got an HTTP error status (404: 200 (100.0%)), so these figures \
             measure the server's error page, not the page asked for: check the URL and the request."
        ),
        "{summary}"
    );
    let gated = shootout()
        .args(["load", "-n", "200", "-c", "2", "--fail-if", "errors>1%", &target.url("/status/404")])
        .output()
        .unwrap();
    assert_eq!(gated.status.code(), Some(3), "{}", String::from_utf8_lossy(&gated.stderr));
}
