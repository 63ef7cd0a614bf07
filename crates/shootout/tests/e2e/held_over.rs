//! Requests a server holds past the window: users it never answers, and connects that wait out the kernel's SYN
//! retransmits. A request due in the warm-up and still unanswered when the window ends waited through all of it:
//! it is counted (held over), with its latency from when it fell due, so that no figure forgets those users, and a
//! closed-model run keeps Little's law (users ≈ throughput × mean latency).

use std::time::Duration;

use shootout_model::ErrorKind;

use crate::support::{describe, fault_server, shootout, Fault};

/// Runs `shootout load ARGS -o FILE` and returns its terminal summary and its JSON result.
fn summary_and_result(name: &str, args: &[&str]) -> (String, shootout_model::LoadResult) {
    let file = std::env::temp_dir().join(format!("shootout-held-{}-{name}.json", std::process::id()));
    let output = shootout().arg("load").args(args).arg("-o").arg(&file).output().unwrap();
    assert!(output.status.success(), "{}", describe(&output));
    let result = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    let _ = std::fs::remove_file(&file);
    (String::from_utf8_lossy(&output.stdout).into_owned(), result)
}

/// Issue 47: a server that holds 6 of 8 users' first requests for good read `Errors: none` and a mean of 0.05 ms
/// after a warm-up: the requests it held were due in the warm-up, so nothing counted them.
#[test]
fn users_a_server_never_answers_are_counted_when_the_window_ends() {
    let address = fault_server(Fault::AnswersOnly(2));
    let url = format!("http://{address}/");
    let args = ["-c", "8", "-t", "1", "--warmup", "1s", "-d", "2s", "--timeout", "4s", &url];
    let (summary, result) = summary_and_result("never", &args);
    assert_eq!(result.requests.held_over, 6, "{summary}");
    assert_eq!(result.errors.get(&ErrorKind::ReadTimeout), Some(&6), "{summary}");
    assert!(result.requests.after_window >= 6, "they ended in the drain: {summary}");
    assert!(result.latency.max_us >= 3_900_000, "each waited out its 4 s timeout from its due time: {summary}");
    assert!(
        summary.contains(
            "Held over:                6 requests due in the warm-up were still unanswered when the window ended"
        ),
        "{summary}"
    );
    assert!(summary.contains("Errors:                   read_timeout: 6"), "{summary}");
}

/// Issue 47: 32 users opening a connection per request to a server that accepts one at a time from a queue of one:
/// most connects wait out SYN retransmits for seconds. With a warm-up, the users stuck since it vanished and the
/// mean read a sixth of what Little's law gives; counting them brings the two together.
#[test]
fn a_closed_model_run_keeps_littles_law_where_connects_wait_out_syn_retransmits() {
    let address = fault_server(Fault::OneAtATime(Duration::from_millis(5)));
    let url = format!("http://{address}/");
    let args = ["-c", "32", "-t", "1", "--no-keepalive", "--warmup", "2s", "-d", "6s", "--timeout", "10s", &url];
    let (summary, result) = summary_and_result("syn", &args);
    let mean_s = result.latency.mean_us / 1e6;
    let by_little = result.throughput.concurrency / result.throughput.requests_per_s;
    let ratio = mean_s / by_little;
    eprintln!(
        "mean {mean_s:.3} s, users over throughput {by_little:.3} s: {ratio:.2}×; held over {}",
        result.requests.held_over
    );
    assert!((result.throughput.concurrency - 32.0).abs() < 0.5, "{summary}");
    assert!(
        (1.0 / 3.0..=3.0).contains(&ratio),
        "the mean latency ({mean_s:.3} s) is far from users / throughput ({by_little:.3} s): {summary}"
    );
}
