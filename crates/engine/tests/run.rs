//! `shootout_engine::run` in this process against the reference server, also in this process, on loopback: the
//! engine's entry point, without the binary around it. Each test starts its own server on a free port, so the
//! server's count of requests is the test's alone.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::AtomicBool;
use std::sync::{mpsc, Arc};
use std::time::Duration;

use shootout_engine::stakes::Stakes;
use shootout_engine::{run, run_observed, Merge, Plan, Totals};
use shootout_metrics::{value_at, Interval};
use shootout_model::settings::LoadSettings;
use shootout_model::{LoadResult, Segment};

/// Starts the reference server on a free loopback port, with one thread. It serves until the test process ends.
fn start_target() -> SocketAddr {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let any = SocketAddr::from(([127, 0, 0, 1], 0));
        shootout_target_server::run(any, 1, None, Default::default(), |bound| tx.send(bound).unwrap())
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

/// Runs `settings` as segment `index` of `of`, as an agent would: its seconds as they complete, and its totals.
fn run_segment(settings: &LoadSettings, index: u32, of: u32) -> (Vec<Interval>, Totals) {
    let options = LoadSettings { segment: Some(Segment { index, of }), ..settings.clone() }.build(1).unwrap();
    let plan = Plan::new(options, b"").expect("a valid plan");
    let mut seconds = Vec::new();
    let (_, totals) = run_observed(&plan, Arc::new(AtomicBool::new(false)), &mut |_| {}, &mut |second| {
        seconds.push(second.clone());
    })
    .expect("the run takes place");
    // What crosses the wire to the coordinator, and back.
    let json = serde_json::to_string(&(seconds, totals)).unwrap();
    serde_json::from_str(&json).unwrap()
}

/// Issue 11: agents that each run a segment of a load add up, once merged, to the load one process would have
/// run, and every figure comes from the summed histograms.
#[test]
fn three_segments_of_a_count_merge_into_the_whole() {
    let target = start_target();
    let whole = LoadSettings {
        connections: Some(12),
        threads: Some(2),
        requests: Some(6000),
        ..settings(format!("http://{target}/hello"))
    };
    let parts: Vec<(Vec<Interval>, Totals)> = (0..3).map(|index| run_segment(&whole, index, 3)).collect();
    for (index, (seconds, totals)) in parts.iter().enumerate() {
        assert_eq!(totals.recorder.request_counts().ok, 2000, "segment {index} sends its third");
        assert_eq!(totals.threads, 2);
        let reported: u64 = seconds.iter().map(|s| s.requests).sum();
        assert_eq!(reported, 2000, "segment {index}: its seconds hold every request");
        assert!(seconds.iter().enumerate().all(|(n, s)| s.second == n as u32), "every second, in order");
    }
    assert_eq!(served(target), 6000, "the server saw the whole load");

    let mut merge = Merge::new(3);
    for (agent, (seconds, totals)) in parts.iter().enumerate() {
        seconds.iter().for_each(|second| merge.add_second(agent, second.clone()));
        merge.add_totals(agent, "this host", totals);
    }
    let plan = Plan::new(whole.clone().build(1).unwrap(), b"").unwrap();
    let result = merge.result(&plan).expect("every agent sent its totals");
    assert_eq!(result.requests.total, 6000);
    assert_eq!(result.requests.ok, 6000);
    assert_eq!(result.status_counts.get("200"), Some(&6000));
    assert_eq!(result.connections.opened, 12, "4 users per segment, one connection each");
    assert_eq!(result.client.threads, 6);
    assert_eq!(result.options.segment, None, "the result is the whole load's");
    assert_eq!(result.timeline.iter().map(|s| s.requests).sum::<u64>(), 6000);
    let longest = parts.iter().map(|(_, t)| t.duration).max().unwrap();
    assert_eq!(result.duration_s, longest.as_secs_f64(), "the longest window");

    let mut raw = parts[0].1.recorder.latency.clone();
    parts[1..].iter().for_each(|(_, t)| raw.add(&t.recorder.latency).unwrap());
    assert_eq!(raw.len(), 6000);
    for p in [50.0, 90.0, 99.0] {
        let merged = shootout_metrics::percentile_us(&result.latency, p);
        assert_eq!(merged, value_at(&raw, p), "p{p} of the merge is p{p} of the summed histograms");
    }
}

/// Issue 11: two agents at half the rate each send the whole rate between them.
#[test]
fn two_segments_of_a_rate_send_the_whole_rate() {
    let target = start_target();
    let whole = LoadSettings {
        rate: Some(400.0),
        connections: None,
        max_connections: Some(8),
        threads: Some(1),
        requests: None,
        duration: Some(Duration::from_secs(1)),
        ..settings(format!("http://{target}/hello"))
    };
    let parts: Vec<(Vec<Interval>, Totals)> = std::thread::scope(|scope| {
        let agents: Vec<_> = (0..2)
            .map(|index| {
                scope.spawn({
                    let whole = &whole;
                    move || run_segment(whole, index, 2)
                })
            })
            .collect();
        agents.into_iter().map(|agent| agent.join().unwrap()).collect()
    });
    for (_, totals) in &parts {
        let due = totals.recorder.sends().due;
        assert!((198..=202).contains(&due), "200/s each for 1 s: {due} due");
    }
    let mut merge = Merge::new(2);
    for (agent, (seconds, totals)) in parts.iter().enumerate() {
        seconds.iter().for_each(|second| merge.add_second(agent, second.clone()));
        merge.add_totals(agent, "this host", totals);
    }
    let plan = Plan::new(whole.clone().build(1).unwrap(), b"").unwrap();
    let result = merge.result(&plan).unwrap();
    let sends = result.sends.expect("the open model reports its sends");
    assert!((396..=404).contains(&sends.due), "400/s for 1 s over two agents: {} due", sends.due);
    assert_eq!(sends.sent, sends.due);
    assert_eq!(served(target), sends.sent);
    assert_eq!(sends.offered_per_s, 400.0, "the whole load's rate");
}

/// A search's probe far behind its rate does not wait for its stragglers: a server that answers each request
/// after 3 s, offered 50/s for 1 s, has answered none of them when the window ends. Given up on, the run ends with
/// its window, each request counted unanswered with its wait; waited for, it lasts until the last answer.
#[test]
fn a_run_far_behind_gives_up_on_its_stragglers_when_asked() {
    let address = start_target();
    let settings = LoadSettings {
        connections: None,
        requests: None,
        rate: Some(50.0),
        duration: Some(Duration::from_secs(1)),
        warmup: Some(Duration::ZERO),
        timeout: Some(Duration::from_secs(10)),
        ..settings(format!("http://{address}/delay/3000"))
    };
    let timed = |give_up_below: Option<f64>| {
        let mut plan = Plan::new(settings.clone().build(1).unwrap(), b"").unwrap();
        plan.stakes = Some(Stakes { give_up_below, objectives: Vec::new() });
        let began = std::time::Instant::now();
        let result = run(&plan, Arc::new(AtomicBool::new(false)), &mut |_| {}).unwrap();
        (began.elapsed(), result)
    };
    let (took, given_up) = timed(Some(0.9));
    let unanswered = given_up.errors.get(&shootout_model::ErrorKind::Unanswered).copied().unwrap_or(0);
    assert!(took < Duration::from_millis(2500), "it waited {took:?}");
    assert!((45..=51).contains(&given_up.requests.total), "every request due is counted: {:?}", given_up.requests);
    assert_eq!(unanswered, given_up.requests.total, "{:?}", given_up.errors);
    assert!(!given_up.interrupted);
    let (took, waited) = timed(None);
    assert!(took >= Duration::from_secs(3), "it waited {took:?}");
    assert_eq!(waited.requests.ok, waited.requests.total, "{:?}", waited.errors);
}

/// A server that answers every request at once but each `nth`, which it answers `slow` later (one thread per
/// connection, HTTP/1.1 kept alive): a probe's few stragglers.
fn start_with_stragglers(nth: usize, slow: Duration) -> SocketAddr {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    let count = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let count = count.clone();
            std::thread::spawn(move || {
                let mut stream = stream;
                let mut request = Vec::new();
                let mut buffer = [0u8; 4096];
                while let Ok(n) = stream.read(&mut buffer) {
                    if n == 0 {
                        return;
                    }
                    request.extend_from_slice(&buffer[..n]);
                    while let Some(end) = request.windows(4).position(|w| w == b"\r\n\r\n") {
                        request.drain(..end + 4);
                        if (count.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1).is_multiple_of(nth) {
                            std::thread::sleep(slow);
                        }
                        if stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok").is_err() {
                            return;
                        }
                    }
                }
            });
        }
    });
    address
}

/// A search's probe whose objectives hold whatever its stragglers do stops waiting for them: offered 100/s for
/// 1 s, a server that answers each 50th request 4 s late leaves two in flight when the window ends. Under `mean <
/// 1s, errors < 5%` they cannot break it (each failing at the 10 s timeout would make a mean under 0.25 s and 2%
/// of errors): the run ends with its window, and they are left out of its figures, counted apart. Under `errors <
/// 1%` they could, and the run waits for them.
#[test]
fn a_probe_sure_of_its_objectives_stops_waiting_for_its_stragglers() {
    let address = start_with_stragglers(50, Duration::from_secs(4));
    let settings = LoadSettings {
        connections: None,
        requests: None,
        rate: Some(100.0),
        duration: Some(Duration::from_secs(1)),
        warmup: Some(Duration::ZERO),
        timeout: Some(Duration::from_secs(10)),
        ..settings(format!("http://{address}/"))
    };
    let timed = |objectives: &[&str]| {
        let mut plan = Plan::new(settings.clone().build(1).unwrap(), b"").unwrap();
        let objectives = objectives.iter().map(|o| shootout_model::slo::parse_condition(o).unwrap()).collect();
        plan.stakes = Some(Stakes { give_up_below: None, objectives });
        let began = std::time::Instant::now();
        let result = run(&plan, Arc::new(AtomicBool::new(false)), &mut |_| {}).unwrap();
        (began.elapsed(), result)
    };
    let (took, settled) = timed(&["mean < 1s", "errors < 5%"]);
    let counts = settled.requests;
    assert!(took < Duration::from_millis(2500), "it waited {took:?}");
    assert!((1..=3).contains(&counts.left_out), "{counts:?}");
    assert_eq!(counts.ok, counts.total, "{:?}", settled.errors);
    let due = settled.sends.expect("open model").due;
    assert_eq!(counts.total + counts.left_out, due, "every request due is counted or left out: {counts:?}");
    assert_eq!(settled.latency.count, counts.total + counts.left_out, "their waits are in the latency");
    let max = settled.latency.max_us;
    assert!((400_000..2_500_000).contains(&max), "a straggler's wait so far, not its answer 4 s after: {max}");
    assert!(!settled.interrupted);
    let (took, waited) = timed(&["mean < 1s", "errors < 1%"]);
    assert!(took >= Duration::from_millis(3500), "it waited {took:?}");
    assert_eq!(waited.requests.ok, waited.requests.total, "{:?}", waited.errors);
    assert_eq!(waited.requests.left_out, 0);
    assert!(waited.latency.max_us > 3_000_000, "the stragglers waited for: {}", waited.latency.max_us);
}
