//! The measured window at its edges, against the server's own count: a server that cannot keep up with an open
//! model's rate, requests still in flight when sending stops, and the first connects and requests of a run. Every
//! rate is of what happened inside the window; what ends after it is in the latency and the counts.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use shootout_model::LoadResult;

use crate::support::{describe, shootout, Target};

fn within(actual: f64, expected: f64, tolerance: f64) -> bool {
    (actual - expected).abs() <= expected * tolerance
}

/// Runs `shootout load ARGS -o FILE` and returns its terminal summary and its JSON result.
fn load_with_summary(args: &[&str]) -> (String, LoadResult) {
    let file = std::env::temp_dir().join(format!("shootout-window-{}-{:?}.json", std::process::id(), Instant::now()));
    let output = shootout().arg("load").args(args).arg("-o").arg(&file).output().unwrap();
    assert!(output.status.success(), "{}", describe(&output));
    let result = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    let _ = std::fs::remove_file(&file);
    (String::from_utf8_lossy(&output.stdout).into_owned(), result)
}

/// A server with one worker: it answers one request at a time, each `service` after it took it up, whichever
/// connection it came on, so it completes at most one per `service`; it notes when it wrote each answer.
struct OneWorker {
    address: SocketAddr,
    answered: Arc<Mutex<Vec<SystemTime>>>,
}

impl OneWorker {
    fn start(service: Duration) -> OneWorker {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap();
        let answered = Arc::new(Mutex::new(Vec::new()));
        let worker = Arc::new(Mutex::new(()));
        let notes = answered.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (worker, notes) = (worker.clone(), notes.clone());
                std::thread::spawn(move || serve(stream, service, &worker, &notes));
            }
        });
        OneWorker { address, answered }
    }

    /// How many answers it wrote between `from` and `to`, and in all.
    fn answered(&self, from: SystemTime, to: SystemTime) -> (u64, u64) {
        let answered = self.answered.lock().unwrap();
        (answered.iter().filter(|&&t| t >= from && t < to).count() as u64, answered.len() as u64)
    }
}

fn serve(mut stream: TcpStream, service: Duration, worker: &Mutex<()>, notes: &Mutex<Vec<SystemTime>>) {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while stream.read(&mut byte).is_ok_and(|n| n == 1) {
        head.push(byte[0]);
        if head.ends_with(b"\r\n\r\n") {
            head.clear();
            let _busy = worker.lock().unwrap();
            std::thread::sleep(service);
            if stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok").is_err() {
                return;
            }
            notes.lock().unwrap().push(SystemTime::now());
        }
    }
}

#[test]
fn an_overloaded_server_is_given_the_rate_it_completed_not_the_rate_offered() {
    // One worker taking 2 ms a request completes at most 500/s. Offered 1,000/s for 2 s, it builds a backlog that
    // it answers after sending stops. What it wrote inside the window, by its own clock, is the reference.
    let server = OneWorker::start(Duration::from_millis(2));
    let url = format!("http://{}/", server.address);
    let (summary, result) = load_with_summary(&["-R", "1000", "-d", "2s", "-t", "1", "--max-connections", "50", &url]);
    let started = humantime::parse_rfc3339(&result.started_at).unwrap();
    let ended = humantime::parse_rfc3339(&result.ended_at).unwrap();
    let (inside, all) = server.answered(started, ended);
    assert_eq!(all, result.requests.total, "every request due was answered: {:?}", result.errors);
    let completed = result.throughput.requests_per_s;
    let sends = result.sends.unwrap();
    let reference = inside as f64 / result.duration_s;
    assert!(completed < 0.8 * sends.offered_per_s, "completed {completed}/s of {}/s offered", sends.offered_per_s);
    assert!((completed - reference).abs() <= 2.0, "completed {completed}/s; the server wrote {reference}/s");
    assert!(sends.sent_per_s < 0.8 * sends.offered_per_s, "sent {}/s: the queue waited", sends.sent_per_s);
    assert_eq!(result.duration_s, 2.0);
    assert!((ended.duration_since(started).unwrap().as_secs_f64() - result.duration_s).abs() < 1e-5);
    assert!(result.drain_s > 0.5, "drain {} s", result.drain_s);
    // An answer written at the window's edge is stamped by the server after its write and read by the client a
    // moment later, so either side may count it inside: the two counts agree to one answer at each edge.
    let after = result.requests.after_window;
    assert!(
        after.abs_diff(all - inside) <= 1,
        "the client counted {after} after the window; the server {}",
        all - inside
    );
    let last_begins = (result.timeline.len() - 1) as f64;
    let drained = result.duration_s + result.drain_s;
    assert!(last_begins >= (drained - 1.0).floor(), "{last_begins}: the timeline runs through the drain to {drained}");
    assert_eq!(result.timeline[result.timeline.len() - 1].target, 0.0, "the drain asked for nothing");
    assert!(summary.contains(&format!("Transaction rate:         {completed:.2} trans/s")), "{summary}");
    assert!(summary.contains("Drain:"), "{summary}");
    if !result.client.saturated {
        assert!(summary.contains("the server did not keep up"), "{summary}");
        assert!(!summary.contains("raise --max-connections"), "{summary}");
    }
}

#[test]
fn connections_busy_at_the_servers_usual_speed_are_named_as_the_limit() {
    // Two connections to a server that answers each request in 100 ms carry 20 requests/s, whatever is offered.
    let target = Target::start();
    let (summary, result) =
        load_with_summary(&["-R", "100", "-d", "2s", "-t", "1", "--max-connections", "2", &target.url("/delay/100")]);
    assert!(result.throughput.requests_per_s <= 20.5, "{}", result.throughput.requests_per_s);
    assert!(!summary.contains("the server did not keep up"), "{summary}");
    if !result.client.saturated {
        assert!(summary.contains("raise --max-connections"), "{summary}");
    }
}

#[test]
fn requests_in_flight_when_sending_stops_count_but_not_in_the_rate() {
    // Ten users on a server that answers after 1 s, for 1.05 s: ten answers inside the window, ten more sent at
    // 1.0 s and answered at 2.0 s, after it. The rate is of the first ten; no more than ten are ever in flight.
    let target = Target::start();
    let (summary, result) = load_with_summary(&["-t", "1", "-c", "10", "-d", "1.05s", &target.url("/delay/1000")]);
    assert_eq!(target.served(), 20);
    assert_eq!((result.requests.total, result.requests.after_window), (20, 10));
    let rate = result.throughput.requests_per_s;
    assert!(within(rate, 10.0 / 1.05, 0.03), "{rate}");
    let concurrency = result.throughput.concurrency;
    assert!(concurrency <= 10.0 && concurrency > 9.5, "concurrency {concurrency} with 10 connections");
    assert!(within(result.drain_s, 0.95, 0.1), "drain {} s", result.drain_s);
    // The summary, the JSON's times and the timeline tell the same window: 1.05 s of it, then the drain, whose
    // answers the timeline keeps (every request ended in one of its seconds) but no rate does.
    let line = |label: &str| summary.lines().find(|l| l.starts_with(label)).unwrap_or_default().to_string();
    assert_eq!(line("Elapsed time:"), format!("{:<26}1.050 s", "Elapsed time:"));
    assert!(line("Drain:").starts_with(&format!("{:<26}10 requests ended in the ", "Drain:")), "{summary}");
    assert_eq!(line("Transaction rate:"), format!("{:<26}{rate:.2} trans/s", "Transaction rate:"));
    assert_eq!(line("Concurrency:"), format!("{:<26}{concurrency:.2}", "Concurrency:"));
    let started = humantime::parse_rfc3339(&result.started_at).unwrap();
    let ended = humantime::parse_rfc3339(&result.ended_at).unwrap();
    assert!((ended.duration_since(started).unwrap().as_secs_f64() - 1.05).abs() < 1e-5, "{started:?} to {ended:?}");
    assert_eq!(result.timeline.iter().map(|s| s.requests).sum::<u64>(), 20, "{:?}", result.timeline);
    // Its last second is the one in which the drain ended (the answers at 2.0 s may fall either side of it).
    let last_begins = (result.timeline.len() - 1) as f64;
    assert!(last_begins < result.duration_s + result.drain_s + 0.01, "{:?}", result.timeline);
    assert!(last_begins >= (result.duration_s + result.drain_s - 1.0).floor(), "{:?}", result.timeline);
}

#[test]
fn concurrency_never_exceeds_the_connections() {
    // Fifty users on answers of 100 ms for 2 s: fifty in flight all along, and the last fifty answered after the
    // window; once read as 50.18.
    let target = Target::start();
    let (_, result) = load_with_summary(&["-t", "1", "-c", "50", "-d", "2s", &target.url("/delay/100")]);
    let concurrency = result.throughput.concurrency;
    assert!(concurrency <= 50.0 && concurrency > 45.0, "concurrency {concurrency} with 50 connections");
    let rate = result.throughput.requests_per_s;
    assert!(rate <= 500.0 && rate > 400.0, "{rate}/s of fifty users waiting 100 ms each");
    assert_eq!(result.requests.total, target.served(), "every request sent was counted");
}

#[test]
fn connects_and_first_requests_are_timed_from_their_own_start() {
    // A loopback connect takes tens of microseconds; the worker's own setup (its poll instance, its ring and
    // buffers) once read as a millisecond on every first connect, and on every first request's latency beside a
    // service time of tens of microseconds. Best of three, on a busy machine.
    let target = Target::start();
    let best = (0..3)
        .map(|_| {
            let (_, result) = load_with_summary(&["-t", "1", "-c", "4", "-n", "8", &target.url("/hello")]);
            assert_eq!(result.connect.count, 4);
            let unexplained = result.latency.max_us.saturating_sub(result.connect.max_us + result.service_time.max_us);
            (result.connect.mean_us, unexplained)
        })
        .fold((f64::MAX, u64::MAX), |(c, u), (connect, unexplained)| (c.min(connect), u.min(unexplained)));
    assert!(best.0 < 300.0, "connect mean {} µs", best.0);
    assert!(best.1 < 300, "the slowest request waited {} µs beyond its connect and its service", best.1);
}
