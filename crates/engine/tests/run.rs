//! `shootout_engine::run` in this process against the reference server, also in this process, on loopback: the
//! engine's entry point, without the binary around it. Each test starts its own server on a free port, so the
//! server's count of requests is the test's alone.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::AtomicBool;
use std::sync::{mpsc, Arc};
use std::time::Duration;

use shootout_engine::{run, Plan};
use shootout_model::{Arrival, LoadOptions, LoadResult, Pacing, StopCondition};

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
fn options(url: String) -> LoadOptions {
    LoadOptions {
        url,
        scenario: None,
        method: "GET".into(),
        headers: vec![],
        body_bytes: 0,
        connections: 1,
        pacing: Pacing::Closed,
        stages: vec![],
        threads: 1,
        stop: StopCondition::Requests(1),
        timeout: Duration::from_secs(5),
        connect_timeout: Duration::from_secs(5),
        keepalive: true,
        insecure: false,
        cacert: None,
        delay: None,
        sequential: false,
        sessions: false,
        warmup: Duration::ZERO,
    }
}

fn load(options: LoadOptions) -> LoadResult {
    let plan = Plan::new(options, b"").expect("a valid plan");
    run(&plan, Arc::new(AtomicBool::new(false)), &mut |_| {}).expect("the run takes place")
}

fn median_us(result: &LoadResult) -> u64 {
    result.latency.percentiles.iter().find(|p| p.percentile == 50.0).expect("a median").us
}

#[test]
fn a_closed_run_to_a_count_sends_exactly_that_many() {
    let target = start_target();
    let mut options = options(format!("http://{target}/hello"));
    options.connections = 4;
    options.threads = 2;
    options.stop = StopCondition::Requests(501);
    let result = load(options);
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
    let mut options = options(format!("http://{target}/hello"));
    options.pacing = Pacing::Open { rate: 200.0, arrival: Arrival::Constant };
    options.connections = 8;
    options.threads = 2;
    options.stop = StopCondition::Duration(Duration::from_secs(1));
    let result = load(options);
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
    let mut options = options(format!("http://{target}/delay/5"));
    options.stop = StopCondition::Requests(60);
    let result = load(options);
    assert_eq!(result.status_counts.get("200"), Some(&60));
    let median = median_us(&result);
    // The server answers on time to tens of microseconds, and the client's own wake-up adds about 0.2 ms on
    // this machine; a millisecond of room still tells it from a server that rounds up to the next one (6.2 ms).
    assert!((5_000..6_000).contains(&median), "median {median} µs for /delay/5");
}
