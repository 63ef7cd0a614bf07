//! Bad input gets one clear line naming the input and the fix, and exit code 2.

use crate::support::{describe, shootout, Target};

fn refused(args: &[&str], names: &str) {
    let output = shootout().args(args).output().unwrap();
    assert_eq!(output.status.code(), Some(2), "{args:?}: {}", describe(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains(names), "{args:?} should name {names:?}: {stderr}");
    let lines = stderr.lines().filter(|l| !l.trim().is_empty() && !l.contains("--help")).count();
    assert_eq!(lines, 1, "one line for {args:?}: {stderr}");
}

#[test]
fn bad_urls() {
    refused(&["load", "not a url"], "'not a url'");
    refused(&["load", "ftp://127.0.0.1/x"], "'ftp'");
    refused(&["load", "http://no-such-host.invalid/"], "no-such-host.invalid");
}

#[test]
fn bad_numbers_and_durations() {
    refused(&["load", "-c", "0", "http://127.0.0.1:1/"], "-c/--connections 0");
    refused(&["load", "-t", "0", "http://127.0.0.1:1/"], "-t/--threads 0");
    refused(&["load", "-n", "0", "http://127.0.0.1:1/"], "-n/--requests 0");
    refused(&["load", "-d", "5 parsecs", "http://127.0.0.1:1/"], "'5 parsecs' is not a duration");
    refused(&["load", "-H", "NoColon", "http://127.0.0.1:1/"], "-H 'NoColon'");
    refused(&["load", "--body-file", "/no/such/file", "http://127.0.0.1:1/"], "/no/such/file");
}

#[test]
fn more_connections_than_files_allowed() {
    let target = Target::start();
    refused(&["load", "-c", "4000000000", &target.url("/hello")], "ulimit -Hn");
}

#[test]
fn bad_open_model_and_stage_options() {
    refused(&["load", "-R", "0", "http://127.0.0.1:1/"], "-R/--rate 0");
    refused(&["load", "-R", "-5", "http://127.0.0.1:1/"], "-R/--rate -5");
    refused(&["load", "-R", "10", "--max-connections", "0", "http://127.0.0.1:1/"], "--max-connections 0");
    refused(&["load", "--stages", "30s-10", "http://127.0.0.1:1/"], "stage '30s-10'");
    refused(&["load", "--stages", "1s:0,1s:0", "http://127.0.0.1:1/"], "--stages: every level is 0");
}

#[test]
fn a_body_file_that_has_no_end_is_refused_before_anything_is_read() {
    // /dev/zero was read into memory without end: 6.7 GB of RSS after 20 s, no request sent.
    let started = std::time::Instant::now();
    refused(&["load", "--body-file", "/dev/zero", "http://127.0.0.1:9/"], "--body-file /dev/zero: not a regular file");
    refused(&["load", "--body-file", "/tmp", "http://127.0.0.1:9/"], "--body-file /tmp: not a regular file");
    assert!(started.elapsed() < std::time::Duration::from_secs(5), "refused at once");
}
