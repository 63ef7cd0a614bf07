//! Every kind of transport failure is classified, counted and survived; none crashes or hangs a run.

use std::time::{Duration, Instant};

use shootout_model::ErrorKind;

use crate::support::{describe, fault_server, load, shootout, Fault};

fn url(address: std::net::SocketAddr) -> String {
    format!("http://{address}/")
}

fn count(result: &shootout_model::LoadResult, kind: ErrorKind) -> u64 {
    result.errors.get(&kind).copied().unwrap_or(0)
}

#[test]
fn a_silent_server_gives_read_timeouts_that_keep_their_latency() {
    let address = fault_server(Fault::Silent);
    let result = load(&["-d", "700ms", "-c", "2", "--timeout", "200ms", &url(address)]);
    assert!(count(&result, ErrorKind::ReadTimeout) >= 4, "{:?}", result.errors);
    assert_eq!(result.requests.ok, 0);
    assert_eq!(result.latency.count, result.requests.failed, "every timeout records a latency");
    // Histograms keep 3 significant digits, so a value is reported within 0.1% (the bucket's lowest equivalent).
    assert!(result.latency.min_us >= 199_800, "a timed-out request waited at least the timeout");
}

/// Issue 64, point 11: a load stopped by SIGTERM said its figures cover what was "measured before Ctrl-C".
#[test]
fn a_load_stopped_by_a_signal_says_so_without_naming_ctrl_c() {
    use nix::sys::signal::{kill, Signal};
    let target = crate::support::Target::start();
    let run = shootout()
        .args(["load", "-c", "1", "-d", "30s", &target.url("/hello")])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    kill(nix::unistd::Pid::from_raw(run.id() as i32), Signal::SIGTERM).unwrap();
    let output = run.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(143), "{}", describe(&output));
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains("interrupted: these figures cover the "), "{text}");
    assert!(!text.contains("Ctrl-C"), "no Ctrl-C was pressed: {text}");
}

/// Issue 47: requests still unanswered when the second after Ctrl-C ran out were dropped from every figure: a
/// silent server read `Transactions: 0`, `Errors: none`.
#[test]
fn requests_unanswered_when_an_interrupted_run_ends_are_counted_with_their_wait() {
    let address = fault_server(Fault::Silent);
    let run = shootout()
        .args(["load", "-c", "4", "-d", "30s", "--json", &url(address)])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let result = crate::support::ctrl_c(run, Duration::from_millis(1500), Duration::from_secs(4), false);
    assert_eq!(count(&result, ErrorKind::Unanswered), 4, "{:?}", result.errors);
    assert_eq!(result.requests.failed, 4);
    assert_eq!(result.latency.count, 4, "each keeps its wait as its latency");
    assert!(
        result.latency.min_us >= 2_000_000,
        "1.5 s to the signal and the second after it: {}",
        result.latency.min_us
    );
}

#[test]
fn a_resetting_server_gives_resets() {
    let result = load(&["-n", "20", "-c", "2", &url(fault_server(Fault::Reset))]);
    assert_eq!(count(&result, ErrorKind::Reset), 20, "{:?}", result.errors);
    assert_eq!(result.requests.failed, 20);
}

#[test]
fn a_server_closing_before_answering_gives_closed() {
    let result = load(&["-n", "20", "-c", "2", &url(fault_server(Fault::Close))]);
    assert_eq!(count(&result, ErrorKind::Closed), 20, "{:?}", result.errors);
}

#[test]
fn garbage_is_malformed() {
    let result = load(&["-n", "20", "-c", "2", &url(fault_server(Fault::Garbage))]);
    assert_eq!(count(&result, ErrorKind::Malformed), 20, "{:?}", result.errors);
    assert!(result.status_counts.is_empty());
}

#[test]
fn a_head_with_too_many_headers_or_too_long_is_counted_by_its_reason() {
    // Valid HTTP past the client's limits (64 headers, a 64 KiB head): counted apart from `malformed`, and named.
    let result = load(&["-n", "10", "-c", "2", &url(fault_server(Fault::ManyHeaders(70)))]);
    assert_eq!(count(&result, ErrorKind::TooManyHeaders), 10, "{:?}", result.errors);
    assert_eq!(count(&result, ErrorKind::Malformed), 0, "{:?}", result.errors);
    let result = load(&["-n", "10", "-c", "2", &url(fault_server(Fault::LongHead(70 * 1024)))]);
    assert_eq!(count(&result, ErrorKind::HeadTooLarge), 10, "{:?}", result.errors);
    let output = shootout().args(["load", "-n", "4", "-c", "1", &url(fault_server(Fault::ManyHeaders(70)))]).output();
    let output = output.unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("too_many_headers"), "{}", describe(&output));
}

#[test]
fn a_full_accept_queue_gives_connect_timeouts() {
    // The first connection is shootout's reachability check, the next two are served; then nothing is accepted.
    let address = fault_server(Fault::AcceptOnly(3));
    let result = load(&["-d", "1500ms", "-c", "1", "--connect-timeout", "150ms", "--timeout", "300ms", &url(address)]);
    assert_eq!(result.requests.ok, 2, "{:?}", result.errors);
    assert!(count(&result, ErrorKind::ConnectTimeout) >= 1, "{:?}", result.errors);
}

#[test]
fn a_server_that_goes_away_gives_refused_connects_with_back_off() {
    // Serves two connections then vanishes: later connects are refused, and shootout keeps trying politely.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming().take(2) {
            use std::io::{Read, Write};
            let mut stream = stream.unwrap();
            let mut buffer = [0u8; 1024];
            let _ = stream.read(&mut buffer);
            let _ = stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
        }
    });
    let result = load(&["-d", "1s", "-c", "1", &url(address)]);
    assert_eq!(result.requests.ok, 1, "the first connection was the reachability check");
    let refused = count(&result, ErrorKind::ConnectRefused);
    assert!((1..=20).contains(&refused), "{refused} refused connects: back-off should keep this small");
}

#[test]
fn a_server_that_is_down_is_a_clear_error_not_a_hang() {
    let address = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap()
    };
    let started = Instant::now();
    let output = shootout().args(["load", "-d", "30s", &url(address)]).output().unwrap();
    assert!(started.elapsed() < Duration::from_secs(5), "took {:?}", started.elapsed());
    assert_eq!(output.status.code(), Some(1), "{}", describe(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains(&format!("cannot connect to {address}")), "{stderr}");
    assert!(stderr.contains("is the server running"), "{stderr}");
}
