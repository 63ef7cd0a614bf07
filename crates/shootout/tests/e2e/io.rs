//! The two ways a worker does its I/O, io_uring and epoll, measure the same thing: each run below goes through
//! both (`--io`) against the same server, which must see exactly what shootout reports, and the result names the
//! one used. Without `--io`, plain HTTP/1.1 goes through io_uring where this machine allows it, TLS and HTTP/2
//! through epoll.

use std::io::Read;
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use shootout_model::{IoBackend, LoadResult};

use crate::support::{describe, load, shootout, Target};

/// Whether this machine lets a process set up an io_uring (it can be turned off by sysctl).
fn uring_allowed() -> bool {
    std::fs::read_to_string("/proc/sys/kernel/io_uring_disabled").map_or(true, |v| v.trim() == "0")
}

/// Runs `args` against a fresh target through each backend; returns each result, checked against the server.
fn both(args: &[&str], path: &str) -> Vec<(IoBackend, LoadResult)> {
    let mut results = Vec::new();
    for (io, backend) in [("io_uring", IoBackend::IoUring), ("epoll", IoBackend::Epoll)] {
        if backend == IoBackend::IoUring && !uring_allowed() {
            eprintln!("io_uring is disabled on this machine: only epoll checked");
            continue;
        }
        let target = Target::start();
        let url = target.url(path);
        let result = load(&[args, &["--io", io, &url]].concat());
        assert_eq!(result.client.io, backend, "the result names the I/O used");
        assert_eq!(target.served(), result.requests.total, "{io}: the server saw what shootout reported");
        results.push((backend, result));
    }
    results
}

#[test]
fn keepalive_counts_and_bytes_are_the_same_through_either() {
    for (io, result) in both(&["-n", "3000", "-c", "6", "-t", "2"], "/hello") {
        assert_eq!((result.requests.ok, result.connections.opened), (3000, 6), "{io:?}");
        assert_eq!(result.bytes_received % 3000, 0, "{io:?}: every response counted whole");
    }
}

#[test]
fn large_and_chunked_bodies_arrive_whole_through_either() {
    // 200 KB spans many receive buffers (16 KiB each) per response.
    for (io, result) in both(&["-n", "40", "-c", "2"], "/bytes/200000") {
        assert_eq!(result.requests.ok, 40, "{io:?}");
        assert!(result.bytes_received > 40 * 200_000, "{io:?}: {}", result.bytes_received);
    }
    for (io, result) in both(&["-n", "40", "-c", "2"], "/chunked/100000") {
        assert_eq!((result.requests.ok, result.requests.failed), (40, 0), "{io:?}");
    }
}

#[test]
fn a_connection_per_request_and_server_closes_through_either() {
    for (io, result) in both(&["-n", "300", "-c", "3", "--no-keepalive"], "/hello") {
        assert_eq!((result.requests.ok, result.connections.opened), (300, 300), "{io:?}");
    }
    for (io, result) in both(&["-n", "200", "-c", "2"], "/close") {
        assert_eq!((result.requests.ok, result.requests.failed), (200, 0), "{io:?}");
        assert_eq!(result.connections.closed_by_server, 200, "{io:?}");
    }
}

#[test]
fn the_open_model_sends_on_schedule_through_either() {
    for (io, result) in both(&["-R", "400", "-d", "1s", "--max-connections", "4"], "/hello") {
        let sends = result.sends.expect("an open-model run reports its sends");
        assert_eq!((sends.due, sends.sent), (400, 400), "{io:?}");
        assert_eq!(result.requests.ok, 400, "{io:?}");
    }
}

#[test]
fn timeouts_fail_the_request_and_free_the_connection_through_either() {
    for (io, result) in both(&["-n", "6", "-c", "2", "--timeout", "100ms"], "/delay/400") {
        assert_eq!(result.requests.failed, 6, "{io:?}");
        assert_eq!(result.errors.values().sum::<u64>(), 6, "{io:?}: {:?}", result.errors);
    }
}

/// When the server accepted a connection, and when it saw it closed.
type Lifetime = (Instant, Option<Instant>);

#[test]
fn a_connection_shootout_drops_is_closed_at_once_through_either() {
    // A server that never answers: each request times out, and shootout drops its connection and opens the next.
    // The server notes when each connection was accepted and when it saw it closed.
    for io in ["io_uring", "epoll"] {
        if io == "io_uring" && !uring_allowed() {
            continue;
        }
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/", listener.local_addr().unwrap());
        let seen: Arc<Mutex<Vec<Lifetime>>> = Arc::default();
        let log = Arc::clone(&seen);
        std::thread::spawn(move || {
            for mut stream in listener.incoming().flatten() {
                let log = Arc::clone(&log);
                let k = {
                    let mut log = log.lock().unwrap();
                    log.push((Instant::now(), None));
                    log.len() - 1
                };
                std::thread::spawn(move || {
                    let mut chunk = [0u8; 1024];
                    while matches!(stream.read(&mut chunk), Ok(n) if n > 0) {}
                    log.lock().unwrap()[k].1 = Some(Instant::now());
                });
            }
        });
        let result = load(&["-c", "1", "-d", "1200ms", "--timeout", "150ms", "--io", io, &url]);
        assert!(result.requests.failed >= 4, "{io}: {:?}", result.requests);
        let seen = seen.lock().unwrap();
        for k in 0..seen.len().saturating_sub(2) {
            let closed = seen[k].1.unwrap_or_else(|| panic!("{io}: connection {k} never closed"));
            assert!(closed < seen[k + 2].0, "{io}: connection {k} was still open when {} came", k + 2);
        }
    }
}

#[test]
fn without_io_plain_http_takes_io_uring_where_allowed() {
    let target = Target::start();
    let result = load(&["-n", "50", "-c", "2", &target.url("/hello")]);
    let expected = if uring_allowed() { IoBackend::IoUring } else { IoBackend::Epoll };
    assert_eq!(result.client.io, expected);
}

#[test]
fn https_goes_through_epoll_however_its_url_is_written() {
    // The URL parser drops a leading space and a tab inside the scheme; what decides is the URL as parsed.
    let target = Target::start_with(&["--tls"]);
    let url = target.url("/hello");
    for written in [format!(" {url}"), url.replacen("https", "ht\ttps", 1)] {
        let result = load(&["-n", "20", "-c", "2", "--insecure", &written]);
        assert_eq!((result.requests.ok, result.client.io), (20, IoBackend::Epoll), "{written:?}");
    }
}

#[test]
fn io_uring_for_what_it_does_not_speak_is_one_line_and_exit_2() {
    for args in [&["--http2"][..], &[]] {
        let url = if args.is_empty() { "https://127.0.0.1:1/" } else { "http://127.0.0.1:1/" };
        let output = shootout().args(["load", "--io", "io_uring"]).args(args).arg(url).output().unwrap();
        assert_eq!(output.status.code(), Some(2), "{}", describe(&output));
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains("--io io_uring with "), "{stderr}");
        assert_eq!(stderr.lines().filter(|l| !l.trim().is_empty()).count(), 1, "{stderr}");
    }
}
