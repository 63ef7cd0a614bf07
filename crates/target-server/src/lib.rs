//! `shootout target`: the built-in reference HTTP server (HTTP/1.1, HTTP/2 in the clear or through TLS, and
//! HTTP/3 over QUIC).
//!
//! It gives the quickstart something to load without installing a server, gives calibration a known fast
//! peer, and gives the tests real sockets with known answers. It is built to be quick: one tokio task per
//! connection, pipelined requests answered in one write, fixed answers pre-encoded.
//!
//! Layout:
//! - [`routes`]: [`Route`], what each path answers, and [`routes::answer`], its answer for HTTP/2 and HTTP/3
//!   (`/hello`, `/bytes/N`, `/chunked/N`, `/delay/MS`, `/spin/US`, `/spin-exp/US`, `/status/CODE`, `/close`,
//!   `/redirect/N`, `/login`, `/account`, `/stats`; what each answers, for users: docs/reference/target.md).
//! - [`connection`]: reading requests off one connection and writing the answers (plain or TLS alike).
//! - [`http2`]: the same answers over HTTP/2, for connections that open with its preface or chose it through ALPN.
//! - [`http3`]: the same answers over HTTP/3, on the UDP port of the TCP port's number.
//! - [`tls`]: HTTPS, with a self-signed certificate made at start or one from PEM files.
//! - [`timer`]: [`Clock`](timer::Clock), the waits of `/delay/MS` and of stalls, on time to a few microseconds
//!   at the median where tokio's timer rounds up to the next millisecond, all of a server's on one kernel timer.
//! - this file: [`bind`] and [`serve`], the listener and its accept loop, and [`State`], what every connection
//!   shares: the request counter behind `/stats`, the clock its waits share, and the optional [`Stall`] schedule
//!   (the whole server freezes now and then, to show what coordinated omission hides).

pub mod connection;
pub mod http2;
pub mod http3;
pub mod routes;
pub mod timer;
pub mod tls;

use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::net::{TcpListener, TcpSocket};
use tokio_rustls::TlsAcceptor;

pub use routes::Route;
use timer::Clock;

/// A server-wide freeze: for `length` at the start of every `period` (from when the server started), no answer
/// goes out; requests that arrive during a freeze are answered when it ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stall {
    /// Time from the start of one freeze to the start of the next.
    pub period: Duration,
    /// How long each freeze lasts.
    pub length: Duration,
}

/// What every connection of one server shares.
#[derive(Debug)]
pub struct State {
    requests: AtomicU64,
    stall: Option<Stall>,
    started: Instant,
    /// What every wait of this server (`/delay/MS`, stalls) sleeps on.
    pub clock: Clock,
}

impl State {
    /// A fresh server state, freezing on `stall` if given.
    pub fn new(stall: Option<Stall>) -> State {
        State { requests: AtomicU64::new(0), stall, started: Instant::now(), clock: Clock::new() }
    }

    /// Counts one request.
    pub fn count(&self) {
        self.requests.fetch_add(1, Ordering::Relaxed);
    }

    /// Requests served so far.
    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }

    /// How long an answer due now must wait for the current freeze to end (zero outside freezes).
    pub fn stalled_for(&self, now: Instant) -> Duration {
        let Some(stall) = self.stall else { return Duration::ZERO };
        let period = stall.period.as_nanos().max(1);
        let into = now.saturating_duration_since(self.started).as_nanos() % period;
        let length = stall.length.as_nanos();
        if into < length {
            Duration::from_nanos((length - into) as u64)
        } else {
            Duration::ZERO
        }
    }
}

/// How many connections may wait to be accepted. The kernel caps it at `net.core.somaxconn` (4096 on current
/// Linux); the 128 a plain bind asks for overflows when thousands of connections open at once, and each SYN it
/// drops is sent again a second later, which would read as the target being slow to connect.
const ACCEPT_BACKLOG: u32 = 65_535;

/// Binds `address` with a deep accept queue ([`ACCEPT_BACKLOG`]); within a tokio runtime.
pub fn bind(address: SocketAddr) -> io::Result<TcpListener> {
    let socket = if address.is_ipv4() { TcpSocket::new_v4()? } else { TcpSocket::new_v6()? };
    socket.set_reuseaddr(true)?;
    socket.bind(address)?;
    socket.listen(ACCEPT_BACKLOG)
}

/// Accepts connections on `listener` forever, each served by its own task (through TLS when `tls` is given).
pub async fn serve(listener: TcpListener, state: Arc<State>, tls: Option<TlsAcceptor>) -> io::Result<()> {
    loop {
        let (stream, _) = match listener.accept().await {
            Ok(accepted) => accepted,
            // Out of descriptors or a connection aborted before accept: keep serving the others.
            Err(_) => {
                tokio::time::sleep(std::time::Duration::from_millis(5)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let state = state.clone();
        match &tls {
            None => {
                tokio::spawn(async move {
                    if opens_with_preface(&stream).await {
                        http2::handle(stream, state).await;
                    } else {
                        connection::handle(stream, state).await;
                    }
                });
            }
            Some(acceptor) => {
                let accepting = acceptor.accept(stream);
                tokio::spawn(async move {
                    let Ok(stream) = accepting.await else { return };
                    if stream.get_ref().1.alpn_protocol() == Some(b"h2") {
                        http2::handle(stream, state).await;
                    } else {
                        connection::handle(stream, state).await;
                    }
                });
            }
        }
    }
}

/// True when a plain connection starts with the HTTP/2 preface (`PRI * HTTP/2.0…`, which no HTTP/1.1 request
/// starts with): the client speaks HTTP/2 with prior knowledge.
async fn opens_with_preface(stream: &tokio::net::TcpStream) -> bool {
    const START: &[u8] = b"PRI ";
    let mut first = [0u8; 4];
    for _ in 0..100 {
        match stream.peek(&mut first).await {
            Ok(n) if n >= START.len() => return first == START,
            Ok(n) if n > 0 && first[..n] != START[..n] => return false,
            Ok(0) | Err(_) => return false,
            Ok(_) => tokio::time::sleep(Duration::from_millis(1)).await,
        }
    }
    false
}

/// How the server speaks: in the clear, or through TLS with this configuration, and then over HTTP/3 too.
#[derive(Debug, Clone, Default)]
pub struct Speaking {
    /// TLS (HTTPS, HTTP/2 through ALPN), when given.
    pub tls: Option<Arc<rustls::ServerConfig>>,
    /// HTTP/3 on the UDP port of the TCP port's number (TLS needed).
    pub http3: bool,
}

/// Binds `address`, calls `on_bound` with the bound address, and serves on `threads` threads until the process
/// ends.
pub fn run(
    address: SocketAddr,
    threads: usize,
    stall: Option<Stall>,
    speaking: Speaking,
    on_bound: impl FnOnce(SocketAddr),
) -> io::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(threads.max(1)).enable_all().build()?;
    runtime.block_on(async {
        let listener = bind(address)?;
        let bound = listener.local_addr()?;
        let state = Arc::new(State::new(stall));
        if let (true, Some(tls)) = (speaking.http3, &speaking.tls) {
            let endpoint = http3::endpoint(bound, tls).map_err(io::Error::other)?;
            tokio::spawn(http3::serve(endpoint, state.clone()));
        }
        on_bound(bound);
        serve(listener, state, speaking.tls.map(TlsAcceptor::from)).await
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connections_opened_at_once_wait_in_the_queue_rather_than_being_dropped() {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let listener = runtime.block_on(async { bind("127.0.0.1:0".parse().unwrap()) }).unwrap();
        let address = listener.local_addr().unwrap();
        // Nothing is accepted: each connect completes only if the queue has room for it (a SYN dropped on a full
        // queue is sent again after a second, to the same full queue, so 2 s is margin, not a second chance).
        let opened: Vec<_> = (0..500)
            .map(|i| {
                std::net::TcpStream::connect_timeout(&address, Duration::from_secs(2)).unwrap_or_else(|e| {
                    panic!("connection {i} was dropped ({e}): the accept queue is too short (net.core.somaxconn?)")
                })
            })
            .collect();
        assert_eq!(opened.len(), 500);
    }

    #[test]
    fn freezes_come_back_every_period() {
        let stall = Stall { period: Duration::from_secs(5), length: Duration::from_secs(1) };
        let state = State::new(Some(stall));
        let at = |ms| state.started + Duration::from_millis(ms);
        assert_eq!(state.stalled_for(at(250)), Duration::from_millis(750));
        assert_eq!(state.stalled_for(at(1000)), Duration::ZERO);
        assert_eq!(state.stalled_for(at(4999)), Duration::ZERO);
        assert_eq!(state.stalled_for(at(5400)), Duration::from_millis(600));
        assert_eq!(State::new(None).stalled_for(at(10)), Duration::ZERO);
    }
}
