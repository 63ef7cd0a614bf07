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

/// As [`refused`], for a command that ran without end before its fix: killed at 20 s, which fails the test.
fn refused_within(args: &[&str], names: &str) {
    let mut command = crate::support::shootout();
    command.args(args);
    let output = crate::support::output_within(command, std::time::Duration::from_secs(20));
    assert_eq!(output.status.code(), Some(2), "{args:?}: {}", describe(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(names) && stderr.trim_end().lines().count() == 1,
        "{args:?} should name {names:?}: {stderr}"
    );
}

/// Issue 64, points 1 and 2: rates and streams past what a run holds. `-R 2e19` never ended (its progress read
/// 9223372036854775808 req/s) and panicked on SIGTERM; `-R 1e-9` sent nothing and read "errors 100.00%"; a million
/// streams over HTTP/3 ran 646 s for a 2 s run, and 4294967295 over HTTP/2 aborted allocating 38 GB. Each is one
/// line naming the flag and its bound, exit 2, before anything is sent.
#[test]
fn rates_and_streams_past_what_a_run_holds_are_refused() {
    let url = "http://127.0.0.1:9/";
    for (args, names) in [
        (&["-R", "2e19", "-d", "1s", url][..], "-R/--rate 2e19: 2e19 requests/s is past the 1e9"),
        (&["-R", "1e-9", "-d", "1s", url], "-R/--rate 1e-9: at 1e-9 requests/s not one request falls due in 1s"),
        (&["-R", "10", "--stages", "1s:1e12", url], "requests/s is past the 1e9"),
        (&["--http3", "-k", "-c", "1", "--streams", "1000000", "https://127.0.0.1:9/"], "--streams 1000000: more than"),
        (&["--http2", "-c", "1", "--streams", "4294967295", url], "--streams 4294967295: more than the 10000"),
    ] {
        refused_within(&[&["load"][..], args].concat(), names);
    }
}

#[test]
fn bad_urls() {
    refused(&["load", "not a url"], "'not a url'");
    refused(&["load", "ftp://127.0.0.1/x"], "'ftp'");
    refused(&["load", "localhost:37727"], "'localhost:37727' has no scheme: write http://localhost:37727");
    refused(&["load", "http://no-such-host.invalid/"], "no-such-host.invalid");
}

#[test]
fn bad_numbers_and_durations() {
    refused(&["load", "-c", "0", "http://127.0.0.1:1/"], "-c/--connections 0");
    refused(&["load", "-t", "0", "http://127.0.0.1:1/"], "-t/--threads 0");
    refused(&["load", "-n", "0", "http://127.0.0.1:1/"], "-n/--requests 0");
    refused(&["load", "-d", "5 parsecs", "http://127.0.0.1:1/"], "'5 parsecs' is not a duration");
    refused(&["load", "-d", "-5", "http://127.0.0.1:1/"], "'-5': a duration cannot be negative: give 5");
    refused(&["load", "--warmup", "-2s", "http://127.0.0.1:1/"], "'-2s': a duration cannot be negative: give 2s");
    refused(&["load", "-H", "NoColon", "http://127.0.0.1:1/"], "-H 'NoColon'");
    refused(&["load", "--body-file", "/no/such/file", "http://127.0.0.1:1/"], "/no/such/file");
}

/// Issue 64: a duration past what a clock holds panicked (exit 101) as it was read (`1e30`) or once the run had made
/// its results folder (`--duration 18446744073709551615s`, a suite's `hook_timeout` of the same). Each is refused as
/// it is read, with the bound, before anything starts.
#[test]
fn durations_past_what_a_clock_holds_are_refused_as_they_are_read() {
    let huge = "18446744073709551615s";
    refused(&["load", "-d", huge, "http://127.0.0.1:1/"], &format!("'{huge}' is longer than"));
    refused(&["load", "-d", "1e30", "http://127.0.0.1:1/"], "'1e30' is longer than");
    refused(&["load", "--timeout", "400000d", "http://127.0.0.1:1/"], "'400000d' is longer than");

    let dir = crate::support::workdir("usage", "long-durations");
    let servers = ["--server", "a={shootout} target --port {port}", "--server", "b={shootout} target --port {port}"];
    let output = shootout().current_dir(&dir).arg("run").args(servers).args(["--duration", huge]).output().unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", describe(&output));
    assert!(String::from_utf8_lossy(&output.stderr).contains("is longer than"), "{}", describe(&output));
    assert!(!dir.join("results").exists(), "refused before its results folder: {}", describe(&output));

    let suite = format!(
        "connections = [1]\n[[server]]\nname = \"a\"\nhook_timeout = \"{huge}\"\n\
         command = \"{{shootout}} target --port {{port}}\"\n"
    );
    std::fs::write(dir.join("suite.toml"), suite).unwrap();
    let output = shootout().current_dir(&dir).args(["run", "suite.toml"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", describe(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("suite.toml") && stderr.contains("is longer than"), "{}", describe(&output));
    assert!(!dir.join("results").exists(), "refused before its results folder: {}", describe(&output));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Issue 64: `generate man DIR | head -1`, and `generate reference` or `completions` to a full disk, panicked (exit
/// 101). A reader that went away ends what is printed, quietly: the command does its work and exits 0 as if it had
/// been read (the man pages are all written). A full disk is one line, and exit 1.
#[test]
fn output_to_a_reader_that_went_away_is_quiet_and_to_a_full_disk_one_line() {
    let dir = crate::support::workdir("usage", "closed-output");
    let pages = dir.join("pages");
    let man = ["generate", "man", pages.to_str().unwrap()];
    for args in [&man[..], &["generate", "reference"], &["generate", "completions", "bash"]] {
        let _ = std::fs::remove_dir_all(&pages);
        let mut child = shootout()
            .args(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take()); // gone before the first line
        let output = child.wait_with_output().unwrap();
        assert_eq!(output.status.code(), Some(0), "{args:?} to a reader gone: {}", describe(&output));
        assert!(output.stderr.is_empty(), "{args:?} to a reader gone, quietly: {}", describe(&output));
        if args == man {
            assert!(pages.join("shootout-run.1").exists(), "the pages are written all the same");
        }

        let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
        let output = shootout().args(args).stdout(full).output().unwrap();
        assert_eq!(output.status.code(), Some(1), "{args:?} to a full disk: {}", describe(&output));
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains("standard output") && stderr.lines().count() == 1, "{args:?}: {stderr}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
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

#[test]
fn headers_that_would_break_the_request_are_refused() {
    let url = "http://127.0.0.1:9/";
    refused(&["load", "-H", "X-A: b\r\nX-Injected: 1", url], "a header value cannot hold CR, LF or NUL");
    refused(&["load", "-H", "X-A: b\nX-Injected: 1", url], "a header value cannot hold CR, LF or NUL");
    refused(&["load", "-H", "Content-Length: 5", url], "shootout frames each request itself");
    refused(&["load", "-H", "transfer-encoding: chunked", url], "leave Content-Length and Transfer-Encoding out");
    refused(&["load", "--http2", "-H", "Connection: close", url], "-H 'Connection' with --http2");
    refused(&["load", "--http2", "-H", "Host: example.com", url], "takes the host from the URL");
}

#[test]
fn a_suites_headers_that_would_break_the_request_are_refused_at_their_line() {
    let dir = std::env::temp_dir().join(format!("shootout-usage-{}-headers", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("suite.toml");
    std::fs::write(
        &file,
        "connections = [1]\n[load]\nheaders = { \"Content-Length\" = \"5\" }\n[[server]]\nname = \"a\"\ncommand = \"true\"\n",
    )
    .unwrap();
    let shown = file.display().to_string();
    refused(&["run", &shown], &format!("{shown}:3:11: headers: -H 'Content-Length': shootout frames"));
}

#[test]
fn a_time_limit_without_a_unit() {
    // Issue 37: 'p99>200' was read as 200 seconds without a word.
    let target = Target::start();
    refused(
        &["load", "-n", "10", "--fail-if", "p99>200", &target.url("/hello")],
        "p99>200: give a unit, e.g. p99>200ms",
    );
    refused(&["load", "-n", "10", "--fail-if", "p1e1>2ms", &target.url("/hello")], "'p1e1>2ms' is not a condition");
    assert_eq!(target.served(), 0, "refused before anything was sent");
}

/// Issue 41: `-o` where nothing can be written ran the whole load and then failed with nothing on stdout. It is
/// refused before any request is sent.
#[test]
fn an_output_file_that_cannot_be_written_is_refused_before_the_load() {
    let target = Target::start();
    let file = std::env::temp_dir().join(format!("shootout-usage-{}-plain", std::process::id()));
    std::fs::write(&file, "a file, not a folder").unwrap();
    let under_a_file = file.join("x.json");
    for path in [under_a_file.to_str().unwrap(), "/proc/shootout.json", "/tmp"] {
        refused(&["load", "-n", "10", "-o", path, &target.url("/hello")], &format!("-o {path}: cannot write there"));
    }
    assert_eq!(target.served(), 0, "nothing was sent");
    std::fs::remove_file(&file).unwrap();
}

/// Issue 65, point 2: `shootout run` alone asked for `<SUITE>` and did not mention `--server`.
#[test]
fn run_without_a_suite_or_servers_names_both_forms() {
    refused_within(&["run"], "give a suite file (shootout run SUITE.toml");
    refused_within(&["run"], "shootout run --server NAME=COMMAND --server NAME=COMMAND");
}
