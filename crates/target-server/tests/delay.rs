//! `/delay/MS` answers MS milliseconds after the request, to within 100 µs at the median (issue 10: tokio's timer
//! made `/delay/2` answer after about 3.2 ms).

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How far the median may be from the delay asked for.
const TOLERANCE: Duration = Duration::from_micros(100);

/// Starts the reference server in this process on a free loopback port, with one runtime thread. It serves until
/// the test process ends.
fn start() -> SocketAddr {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let any = SocketAddr::from(([127, 0, 0, 1], 0));
        shootout_target_server::run(any, 1, None, Default::default(), |bound| tx.send(bound).unwrap())
    });
    rx.recv_timeout(Duration::from_secs(10)).expect("the target binds a port")
}

/// Times `samples` sequential keep-alive requests for `path`, sorted. The client sleeps through the first `nap` of
/// each wait, then polls the socket without blocking: a thread woken from a blocking read after milliseconds
/// would add its own wake-up delay (tens of microseconds, more on a virtual machine) to the server's.
fn round_trips(address: SocketAddr, path: &str, nap: Duration, samples: usize) -> Vec<Duration> {
    let mut stream = TcpStream::connect(address).unwrap();
    stream.set_nodelay(true).unwrap();
    stream.set_nonblocking(true).unwrap();
    let request = format!("GET {path} HTTP/1.1\r\nHost: test\r\n\r\n");
    let mut buffer = [0u8; 1024];
    let mut times = Vec::with_capacity(samples);
    for _ in 0..samples {
        let started = Instant::now();
        stream.write_all(request.as_bytes()).unwrap();
        std::thread::sleep(nap);
        let mut got = 0;
        while !buffer[..got].ends_with(b"Hello World\n") {
            match stream.read(&mut buffer[got..]) {
                Ok(0) => panic!("the server closed the connection"),
                Ok(n) => got += n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => std::hint::spin_loop(),
                Err(e) => panic!("read failed: {e}"),
            }
            assert!(started.elapsed() < Duration::from_secs(5), "no answer to {path}");
        }
        times.push(started.elapsed());
    }
    times.sort();
    times
}

fn median(sorted: &[Duration]) -> Duration {
    sorted[sorted.len() / 2]
}

#[test]
fn a_delay_of_two_milliseconds_takes_two_milliseconds() {
    let address = start();
    let asked = Duration::from_millis(2);
    // The loopback round trip without a delay, measured the same way: the allowance on top of the delay.
    let round_trip = median(&round_trips(address, "/hello", Duration::ZERO, 200));
    // The server learns how late its wake-ups come: let it see a few first.
    let nap = asked - Duration::from_micros(500);
    round_trips(address, "/delay/2", nap, 30);
    let delays = round_trips(address, "/delay/2", nap, 100);
    let served = median(&delays).saturating_sub(round_trip);
    let off = served.max(asked) - served.min(asked);
    eprintln!("/delay/2: median {:?}, round trip {round_trip:?}, served in {served:?}", median(&delays));
    assert!(
        off <= TOLERANCE,
        "/delay/2: median {:?} minus the {round_trip:?} round trip is {served:?}, {off:?} from 2 ms \
         (p10 {:?}, p90 {:?})",
        median(&delays),
        delays[delays.len() / 10],
        delays[delays.len() * 9 / 10],
    );
}
