//! QUIC for HTTP/3: [`QuicPlan`], what every HTTP/3 connection of a run is made with: the TLS client
//! configuration of the run ([`tls`](crate::tls), TLS 1.3 with ALPN `h3`) inside `quinn-proto`'s QUIC crypto, the
//! transport settings, and the name the server's certificate must carry (sent as SNI; a QUIC server such as Caddy
//! refuses a handshake without one, so an IP address in the URL is sent as it is written); and [`Blocking`], one
//! connection driven in the calling thread for what the blocking [`probe`](crate::probe) asks outside a run (the
//! handshake before it, a suite's ready probe and verification).

use std::net::{SocketAddr, UdpSocket};
use std::sync::Arc;
use std::time::{Duration, Instant};

use quinn_proto::crypto::rustls::QuicClientConfig;
use quinn_proto::{
    ClientConfig, ConnectionError, ConnectionHandle, DatagramEvent, Endpoint, EndpointConfig, IdleTimeout,
    TransportConfig, VarInt,
};

use crate::http::h3::frame::error_name;
use crate::http::h3::session::{Event as SessionEvent, Session};
use crate::http::response::Capture;
use crate::http::stream::Response;

/// How long a connection may stay silent before it is given up (the server's own limit may be lower).
const IDLE_TIMEOUT: Duration = Duration::from_secs(30);
/// How often an idle connection is kept alive with a PING, well inside the usual servers' idle limits.
const KEEP_ALIVE: Duration = Duration::from_secs(10);
/// The receive window of each stream and of the connection: wide enough that no server waits for the client.
const STREAM_WINDOW: u32 = 16 << 20;

/// What every HTTP/3 connection of a run is made with.
pub struct QuicPlan {
    /// The client's QUIC configuration.
    pub client: ClientConfig,
    /// The endpoint's (each connection has its own endpoint).
    pub endpoint: Arc<EndpointConfig>,
    /// The server name sent in the handshake and checked against the certificate.
    pub server_name: String,
}

impl std::fmt::Debug for QuicPlan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("QuicPlan").field("server_name", &self.server_name).finish()
    }
}

impl QuicPlan {
    /// A plan over `tls` (a TLS 1.3 configuration offering `h3`) for `server_name`.
    pub fn new(tls: &rustls::ClientConfig, server_name: String) -> Result<QuicPlan, String> {
        let crypto = QuicClientConfig::try_from(tls.clone())
            .map_err(|e| format!("--http3 needs TLS 1.3 with AES-128-GCM: {e}"))?;
        let mut transport = TransportConfig::default();
        transport
            .max_idle_timeout(Some(IdleTimeout::try_from(IDLE_TIMEOUT).expect("30 s fits a varint")))
            .keep_alive_interval(Some(KEEP_ALIVE))
            .stream_receive_window(VarInt::from_u32(STREAM_WINDOW))
            .receive_window(VarInt::MAX)
            // The server opens its control stream and perhaps QPACK's two; the client accepts no push.
            .max_concurrent_uni_streams(VarInt::from_u32(16))
            .max_concurrent_bidi_streams(VarInt::from_u32(0))
            .enable_segmentation_offload(false);
        let mut client = ClientConfig::new(Arc::new(crypto));
        client.transport_config(Arc::new(transport));
        Ok(QuicPlan { client, endpoint: Arc::new(EndpointConfig::default()), server_name })
    }
}

impl QuicPlan {
    /// Starts a connection to `address`: a fresh endpoint of its own and the connection's first state (nothing is
    /// sent until the caller polls it). Both the run's workers and [`Blocking`] start theirs here.
    pub fn start(
        &self,
        now: Instant,
        address: SocketAddr,
    ) -> Result<(Endpoint, ConnectionHandle, quinn_proto::Connection), quinn_proto::ConnectError> {
        let mut endpoint = Endpoint::new(self.endpoint.clone(), None, true, None);
        let (handle, connection) = endpoint.connect(now, self.client.clone(), address, &self.server_name)?;
        Ok((endpoint, handle, connection))
    }
}

/// The unspecified address of `address`'s family, port 0: what a connection's own UDP socket binds before it is
/// connected to `address`.
pub fn any_local(address: SocketAddr) -> SocketAddr {
    if address.is_ipv4() {
        ([0, 0, 0, 0], 0).into()
    } else {
        ([0u16; 8], 0).into()
    }
}

/// The range of QUIC's CRYPTO_ERROR codes: 0x100 plus a TLS alert.
const CRYPTO_ERRORS: std::ops::RangeInclusive<u64> = 0x100..=0x1ff;

/// True for a CRYPTO_ERROR code: the TLS handshake inside QUIC failed.
pub fn is_crypto(code: quinn_proto::TransportErrorCode) -> bool {
    CRYPTO_ERRORS.contains(&u64::from(code))
}

/// Why a [`Blocking`] connection or exchange failed, in words, and whether the server's UDP port refused it
/// (an ICMP port unreachable: nothing is bound there), which a caller may tell apart from the rest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuicError {
    /// True when the UDP port refused the datagrams.
    pub refused: bool,
    /// True when the TLS handshake within QUIC failed (a certificate, a name, an alert): the server speaks QUIC,
    /// and TLS is what to fix.
    pub tls: bool,
    /// True when the server, its handshake done, met the request with something other than a response (a reset
    /// stream, a GOAWAY, a closed connection, a response that does not parse): it is up, and answers so.
    pub rejected: bool,
    /// What happened.
    pub text: String,
}

impl std::fmt::Display for QuicError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

impl From<String> for QuicError {
    fn from(text: String) -> QuicError {
        QuicError { refused: false, tls: false, rejected: false, text }
    }
}

impl From<&str> for QuicError {
    fn from(text: &str) -> QuicError {
        QuicError::from(text.to_string())
    }
}

impl From<QuicError> for String {
    fn from(error: QuicError) -> String {
        error.text
    }
}

/// One HTTP/3 connection driven in the calling thread, for what is asked outside a run (the check before it, a
/// suite's ready probe and verification): every wait bounded.
pub struct Blocking {
    socket: UdpSocket,
    endpoint: Endpoint,
    handle: ConnectionHandle,
    session: Session,
    address: SocketAddr,
    out: Vec<u8>,
    buffer: Vec<u8>,
    timeout: Duration,
    server_name: String,
}

impl Blocking {
    /// Connects to `address` and completes the handshake within `timeout`.
    pub fn connect(plan: &QuicPlan, address: SocketAddr, timeout: Duration) -> Result<Blocking, QuicError> {
        let socket = UdpSocket::bind(any_local(address))
            .and_then(|s| s.connect(address).map(|()| s))
            .map_err(|e| e.to_string())?;
        let now = Instant::now();
        let (endpoint, handle, quic) = plan.start(now, address).map_err(|e| e.to_string())?;
        let mut blocking = Blocking {
            socket,
            endpoint,
            handle,
            session: Session::new(quic),
            address,
            out: Vec::new(),
            buffer: vec![0; 65_535],
            timeout,
            server_name: plan.server_name.clone(),
        };
        let deadline = now + timeout;
        loop {
            match blocking.turn(deadline)? {
                Some(SessionEvent::Ready) => return Ok(blocking),
                Some(SessionEvent::Lost(reason)) => return Err(blocking.why_lost(&reason)),
                Some(_) => {}
                None if Instant::now() >= deadline => {
                    return Err(QuicError::from(format!(
                        "no QUIC handshake within {}: nothing answers HTTP/3 on UDP port {} (is the server's HTTP/3 \
                         on, on this port, and UDP to it let through?)",
                        humantime::format_duration(timeout),
                        address.port()
                    )))
                }
                None => {}
            }
        }
    }

    /// Sends one request (its whole HEADERS frame, then `body`) and reads its response within the timeout.
    pub fn exchange(&mut self, headers: &[u8], body: &[u8]) -> Result<Response, QuicError> {
        let deadline = Instant::now() + self.timeout;
        self.session.open(0, headers, body, Capture::HeadAndBody).ok_or("the server allows no request stream")?;
        let rejected = |text: String| QuicError { rejected: true, ..QuicError::from(text) };
        loop {
            match self.turn(deadline)? {
                Some(SessionEvent::Answered { .. }) => return Ok(std::mem::take(self.session.response_mut())),
                Some(SessionEvent::Reset { code, .. }) => {
                    return Err(rejected(format!("the server reset the request's stream ({})", error_name(code))))
                }
                Some(SessionEvent::Broken { kind, .. }) => {
                    return Err(rejected(format!("the response is not one the client reads ({})", kind.as_str())))
                }
                Some(SessionEvent::Refused { .. }) => {
                    return Err(rejected("the server's GOAWAY left the request out".into()))
                }
                Some(SessionEvent::Lost(reason)) => {
                    // The server ended the connection, or broke HTTP/3 so that the client did; not a silence.
                    let ended = matches!(
                        reason,
                        ConnectionError::ApplicationClosed(_)
                            | ConnectionError::ConnectionClosed(_)
                            | ConnectionError::Reset
                    );
                    let rejected = ended || self.session.broke().is_some();
                    return Err(QuicError { rejected, ..self.why_lost(&reason) });
                }
                Some(SessionEvent::Ready) => {}
                None if Instant::now() >= deadline => {
                    return Err(QuicError::from(format!(
                        "the server took more than {} to answer",
                        humantime::format_duration(self.timeout)
                    )))
                }
                None => {}
            }
        }
    }

    /// Why the connection was lost: the server's breach of HTTP/3 when the session closed it for one.
    fn why_lost(&self, reason: &ConnectionError) -> QuicError {
        match self.session.broke() {
            Some(breach) => QuicError::from(format!("the server broke HTTP/3 ({breach})")),
            None => QuicError { tls: tls_failed(reason), ..QuicError::from(lost(reason, &self.server_name)) },
        }
    }

    /// Closes the connection (one CONNECTION_CLOSE, not waited on).
    pub fn close(&mut self) {
        self.session.close(Instant::now(), crate::http::h3::frame::code::NO_ERROR, "");
        self.send();
    }

    /// Sends what the connection has queued, hands the endpoint its events, then returns the session's next
    /// event, or waits for a datagram or the connection's next timer (never past `deadline`) and returns `None`.
    fn turn(&mut self, deadline: Instant) -> Result<Option<SessionEvent>, QuicError> {
        self.send();
        if let Some(event) = self.session.poll(Instant::now()) {
            return Ok(Some(event));
        }
        let now = Instant::now();
        if now >= deadline {
            return Ok(None);
        }
        let wake = self.session.quic().poll_timeout().map_or(deadline, |t| t.min(deadline));
        let wait = wake.saturating_duration_since(now).max(Duration::from_millis(1));
        self.socket.set_read_timeout(Some(wait)).map_err(|e| e.to_string())?;
        match self.socket.recv(&mut self.buffer) {
            Ok(n) => {
                let datagram = bytes::BytesMut::from(&self.buffer[..n]);
                let now = Instant::now();
                if let Some(DatagramEvent::ConnectionEvent(_, event)) =
                    self.endpoint.handle(now, self.address, None, None, datagram, &mut self.out)
                {
                    self.session.quic().handle_event(event);
                }
                self.out.clear();
            }
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {
                let now = Instant::now();
                if self.session.quic().poll_timeout().is_some_and(|t| now >= t) {
                    self.session.quic().handle_timeout(now);
                }
            }
            Err(e) => return Err(refused(&e, self.address)),
        }
        Ok(self.session.poll(Instant::now()))
    }

    /// Sends every datagram the connection has queued and hands the endpoint what the connection tells it.
    fn send(&mut self) {
        let now = Instant::now();
        loop {
            self.out.clear();
            let Some(datagram) = self.session.quic().poll_transmit(now, 1, &mut self.out) else { break };
            let _ = self.socket.send(&self.out[..datagram.size]);
        }
        while let Some(event) = self.session.quic().poll_endpoint_events() {
            if let Some(back) = self.endpoint.handle_event(self.handle, event) {
                self.session.quic().handle_event(back);
            }
        }
    }
}

/// A socket error during the handshake, worded, a refusal told apart.
fn refused(error: &std::io::Error, address: SocketAddr) -> QuicError {
    match error.kind() {
        std::io::ErrorKind::ConnectionRefused => QuicError {
            refused: true,
            tls: false,
            rejected: false,
            text: format!("UDP port {} refused the handshake (nothing listens there for HTTP/3)", address.port()),
        },
        _ => QuicError::from(error.to_string()),
    }
}

/// Whether a connection ended in its TLS handshake: a CRYPTO_ERROR, on either side, other than the server's
/// no_application_protocol (which says it offers no HTTP/3 there).
fn tls_failed(reason: &ConnectionError) -> bool {
    let code = match reason {
        ConnectionError::TransportError(e) => u64::from(e.code),
        ConnectionError::ConnectionClosed(close) => u64::from(close.error_code),
        _ => return false,
    };
    CRYPTO_ERRORS.contains(&code) && code != 0x178
}

/// Why the handshake with `server_name` ended, with the way out for the usual problems.
fn lost(reason: &ConnectionError, server_name: &str) -> String {
    let text = reason.to_string();
    let (code, by_server) = match reason {
        ConnectionError::TransportError(e) => (Some(u64::from(e.code)), false),
        ConnectionError::ConnectionClosed(close) => (Some(u64::from(close.error_code)), true),
        ConnectionError::ApplicationClosed(close) => {
            let reason = String::from_utf8_lossy(&close.reason);
            let said = if reason.is_empty() { String::new() } else { format!(": {reason}") };
            return format!(
                "the server closed the connection with {}{said}",
                error_name(close.error_code.into_inner())
            );
        }
        _ => (None, false),
    };
    match code {
        // TLS alert 120, no_application_protocol.
        Some(0x178) => "the server does not offer HTTP/3 (h3) on this port".into(),
        Some(code) if by_server && CRYPTO_ERRORS.contains(&code) => {
            let alert = alert_name((code - 0x100) as u8);
            if server_name.parse::<std::net::IpAddr>().is_ok() {
                format!(
                    "the server ended the handshake with TLS alert {alert}: a QUIC server may serve only the names it \
                     has certificates for, so name the host as its certificate does (such as \
                     https://localhost:PORT/), not by its address"
                )
            } else {
                format!("the server ended the handshake with TLS alert {alert}")
            }
        }
        Some(code)
            if CRYPTO_ERRORS.contains(&code) && (text.contains("certificate") || text.contains("Certificate")) =>
        {
            format!(
            "{text}: pass --insecure to skip verification, or --cacert FILE to trust the server's CA (and name the \
             host as its certificate does, such as localhost)"
            )
        }
        _ => text,
    }
}

/// A TLS alert by its RFC 8446 name (the ones a handshake meets), or its number.
fn alert_name(alert: u8) -> String {
    let name = match alert {
        40 => "handshake_failure",
        42 => "bad_certificate",
        46 => "certificate_unknown",
        48 => "unknown_ca",
        70 => "protocol_version",
        80 => "internal_error",
        112 => "unrecognized_name",
        116 => "certificate_required",
        120 => "no_application_protocol",
        _ => return alert.to_string(),
    };
    format!("{alert} ({name})")
}
