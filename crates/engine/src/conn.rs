//! [`Conn`]: one connection's state between events, owned by exactly one worker thread.

use std::io;
use std::time::{Duration, Instant};

use mio::net::TcpStream;
use mio::Token;
use shootout_model::ErrorKind;

use crate::http::response::ResponseParser;
use crate::workload::User;

/// Where a connection is in its request cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// No request to send (sending has stopped, or the quota is used up).
    Idle,
    /// Waiting before reconnecting after a failed connect, until the given time.
    Backoff(Instant),
    /// TCP connect in progress (HTTP/2: its connection is not ready for streams yet).
    Connecting,
    /// TLS handshake in progress (https:// only).
    Handshaking,
    /// Request bytes being written.
    Writing,
    /// HTTP/2: waiting on its connection for a stream the server allows (its request not sent yet).
    Queued,
    /// Response being read.
    Reading,
    /// A scenario user pausing between two steps of its session, until the given time.
    Thinking(Instant),
}

impl Phase {
    /// True while a request is on its way: connecting, handshaking, written, queued for a stream, or read.
    pub fn in_flight(self) -> bool {
        matches!(self, Phase::Connecting | Phase::Handshaking | Phase::Writing | Phase::Queued | Phase::Reading)
    }
}

/// One connection slot. The socket is replaced on reconnect; the generation tells stale events apart.
#[derive(Debug)]
pub struct Conn {
    /// The open socket, if any.
    pub socket: Option<TcpStream>,
    /// The TLS session over it, for https:// URLs.
    pub tls: Option<Box<rustls::ClientConnection>>,
    /// Bumped whenever the socket is replaced; part of the poll token.
    pub generation: u32,
    /// Where the request cycle is.
    pub phase: Phase,
    /// HTTP/2 and HTTP/3: the id of the stream carrying the request in flight (0: none; HTTP/3's first request
    /// stream is 0 too, so its ids are kept plus one).
    pub stream: u64,
    /// The response parser, reused for every response.
    pub parser: ResponseParser,
    /// When the current request was due: latency is measured from here.
    pub due: Instant,
    /// When the current request's first byte was written: service time is measured from here.
    pub sent_at: Instant,
    /// When the current connect started (then, for TLS, when the handshake started).
    pub connect_started: Instant,
    /// Deadline of the current connect or request.
    pub deadline: Instant,
    /// Request bytes written so far.
    pub written: usize,
    /// True when the current request counts (it was due after the warm-up).
    pub counted: bool,
    /// Wait before the next reconnect after a failed connect; grows while connects keep failing.
    pub backoff: Duration,
    /// Index of the request in flight, in the workload.
    pub request: usize,
    /// The scenario user this connection plays (empty on the load path).
    pub user: User,
    /// The rendered request, for scenarios (reused from one request to the next).
    pub out: Vec<u8>,
}

/// First wait after a failed connect; it doubles up to [`MAX_BACKOFF`].
pub const MIN_BACKOFF: Duration = Duration::from_millis(10);
/// Longest wait between reconnect attempts to a server that refuses connections.
pub const MAX_BACKOFF: Duration = Duration::from_secs(1);

impl Conn {
    /// A slot with no socket.
    pub fn new(now: Instant) -> Conn {
        Conn {
            socket: None,
            tls: None,
            generation: 0,
            phase: Phase::Idle,
            stream: 0,
            parser: ResponseParser::new(),
            due: now,
            sent_at: now,
            connect_started: now,
            deadline: now,
            written: 0,
            counted: false,
            backoff: MIN_BACKOFF,
            request: 0,
            user: User::default(),
            out: Vec::new(),
        }
    }

    /// The poll token of slot `index` with its current generation.
    pub fn token(&self, index: usize) -> Token {
        Token(((self.generation as usize) << 32) | index)
    }

    /// Drops the socket (closing it) and invalidates events still queued for it.
    pub fn close(&mut self) {
        self.tls = None;
        self.socket = None;
        self.generation = self.generation.wrapping_add(1);
    }
}

/// Splits a poll token into slot index and generation.
pub fn untoken(token: Token) -> (usize, u32) {
    (token.0 & 0xffff_ffff, (token.0 >> 32) as u32)
}

/// Classifies a failed connect.
pub fn connect_error(error: &io::Error) -> ErrorKind {
    match error.kind() {
        io::ErrorKind::ConnectionRefused => ErrorKind::ConnectRefused,
        io::ErrorKind::TimedOut => ErrorKind::ConnectTimeout,
        _ => ErrorKind::ConnectOther,
    }
}

/// Classifies a failed read or write on an established connection.
pub fn transfer_error(error: &io::Error) -> ErrorKind {
    match error.kind() {
        io::ErrorKind::BrokenPipe | io::ErrorKind::UnexpectedEof => ErrorKind::Closed,
        io::ErrorKind::InvalidData => ErrorKind::Tls,
        _ => ErrorKind::Reset,
    }
}
