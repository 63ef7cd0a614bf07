//! `shootout_engine::run` in this process against the reference server, also in this process, on loopback: the
//! engine's entry point, without the binary around it. Each test starts its own server on a free port, so the
//! server's count of requests is the test's alone.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::AtomicBool;
use std::sync::{mpsc, Arc};
use std::time::Duration;

use shootout_engine::{run, Plan};
use shootout_model::settings::LoadSettings;
use shootout_model::LoadResult;

/// Starts the reference server on a free loopback port, with one thread. It serves until the test process ends.
fn start_target() -> SocketAddr {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let any = SocketAddr::from(([127, 0, 0, 1], 0));
        shootout_target::run(any, 1, None, None, |bound| tx.send(bound).unwrap())
    });
    rx.recv_timeout(Duration::from_secs(10)).expect("the target binds a port")
}

/// Requests the server has answered so far (its `/stats`, which does not count itself).
fn served(address: SocketAddr) -> u64 {
    let mut stream = TcpStream::connect(address).unwrap();
    stream.write_all(b"GET /stats HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n").unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let body = answer.split("\r\n\r\n").nth(1).unwrap_or_default();
    let digits: String = body.chars().filter(char::is_ascii_digit).collect();
    digits.parse().unwrap_or_else(|_| panic!("bad /stats answer {answer:?}"))
}

/// Options for `url`: one thread, one connection, closed model, one request; the tests change what they need.
/// One request on one connection, with every other choice at its default.
fn settings(url: String) -> LoadSettings {
    LoadSettings {
        url,
        connections: Some(1),
        threads: Some(1),
        requests: Some(1),
        timeout: Some(Duration::from_secs(5)),
        ..LoadSettings::default()
    }
}

fn load(settings: LoadSettings) -> LoadResult {
    let plan = Plan::new(settings.build(1).expect("valid settings"), b"").expect("a valid plan");
    run(&plan, Arc::new(AtomicBool::new(false)), &mut |_| {}).expect("the run takes place")
}

fn median_us(result: &LoadResult) -> u64 {
    shootout_metrics::percentile_us(&result.latency, 50.0)
}

#[test]
fn a_closed_run_to_a_count_sends_exactly_that_many() {
    let target = start_target();
    let result = load(LoadSettings {
        connections: Some(4),
        threads: Some(2),
        requests: Some(501),
        ..settings(format!("http://{target}/hello"))
    });
    assert_eq!(result.requests.total, 501);
    assert_eq!(result.requests.ok, 501);
    assert_eq!(result.requests.failed, 0);
    assert_eq!(result.status_counts.get("200"), Some(&501));
    assert_eq!(result.latency.count, 501);
    assert_eq!(result.connections.opened, 4, "keep-alive: one connection per user");
    assert_eq!(served(target), 501, "the server saw what the engine reported");
    assert!(result.sends.is_none(), "the closed model has no due times");
}

#[test]
fn an_open_run_sends_its_rate_for_its_duration() {
    let target = start_target();
    let result = load(LoadSettings {
        rate: Some(200.0),
        connections: None,
        max_connections: Some(8),
        threads: Some(2),
        requests: None,
        duration: Some(Duration::from_secs(1)),
        ..settings(format!("http://{target}/hello"))
    });
    let sends = result.sends.expect("the open model reports its sends");
    assert!((195..=205).contains(&sends.due), "200/s for 1 s: {} due", sends.due);
    assert_eq!(sends.sent, sends.due, "a fast server leaves nothing unsent");
    assert_eq!(result.requests.ok, sends.sent);
    assert_eq!(served(target), sends.sent);
    assert!((0.99..1.2).contains(&result.duration_s), "duration {}", result.duration_s);
    assert!((190.0..210.0).contains(&result.throughput.requests_per_s), "{}", result.throughput.requests_per_s);
}

#[test]
fn the_engine_measures_the_reference_delay() {
    let target = start_target();
    let result = load(LoadSettings { requests: Some(60), ..settings(format!("http://{target}/delay/5")) });
    assert_eq!(result.status_counts.get("200"), Some(&60));
    let median = median_us(&result);
    // The server answers on time to tens of microseconds, and the client's own wake-up adds about 0.2 ms on
    // this machine; a millisecond of room still tells it from a server that rounds up to the next one (6.2 ms).
    assert!((5_000..6_000).contains(&median), "median {median} µs for /delay/5");
}
