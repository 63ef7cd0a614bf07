//! HTTP/2 on the worker's connections: a [`Wire`] is one connection whose [`Session`] carries the streams of
//! `streams` slots (slot `i` always rides wire `i / streams`); what a wire's slots wait for and how its streams
//! come and go is [`multiplexed`](super::multiplexed)'s, shared with HTTP/3.
//!
//! A slot with a request to send joins its wire's queue; the wire connects (and shakes hands, for TLS) if it is
//! closed, and once the server's SETTINGS have arrived it opens a stream for each queued slot while the server
//! allows. What the session queues is written once per loop turn (`flush_carriers`), so the requests of every
//! stream that became free in one read go out in one write. A timed-out stream is reset and its place freed; a
//! connection that breaks fails every request on it; one the server ends with GOAWAY finishes the streams the
//! server kept (or gives them up at their timeout), fails the rest, and once none is left is opened again for what
//! waits.

use std::io::{self, Write};
use std::time::Instant;

use mio::event::Event;
use mio::net::TcpStream;
use mio::Interest;
use shootout_metrics::Recorder;
use shootout_model::ErrorKind;

use super::multiplexed::{Link, Multiplexed, Opened, Outgoing, Protocol};
use super::Worker;
use crate::conn::{connect_error, transfer_error, Conn, Phase, MIN_BACKOFF};
use crate::http::h2::frame;
use crate::http::h2::request::{encode_plain, Request2};
use crate::http::h2::session::{Broken, Event as StreamEvent, Session};
use crate::http::response::Capture;
use crate::tally::micros;
use crate::transport;
use crate::workload::Planned;

/// How far a wire is in setting up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// No connection.
    Closed,
    /// TCP connect in progress.
    Connecting,
    /// TLS handshake in progress.
    Handshaking,
    /// Preface sent, waiting for the server's SETTINGS.
    Settling,
    /// Streams may open.
    Open,
}

/// One HTTP/2 connection's own part.
#[derive(Debug)]
pub(super) struct Wire {
    socket: Option<TcpStream>,
    tls: Option<Box<rustls::ClientConnection>>,
    state: State,
    session: Session,
}

impl Default for Wire {
    fn default() -> Wire {
        Wire { socket: None, tls: None, state: State::Closed, session: Session::new() }
    }
}

impl Link for Wire {
    fn closed(&self) -> bool {
        self.state == State::Closed
    }

    fn setting_up(&self) -> bool {
        matches!(self.state, State::Connecting | State::Handshaking | State::Settling)
    }

    fn ready(&self) -> bool {
        self.state == State::Open
    }

    fn drained(&self) -> bool {
        self.session.drained()
    }

    fn cancel(&mut self, stream: u64) -> bool {
        if stream != 0 {
            self.session.cancel(stream as u32);
        }
        stream != 0
    }

    fn close(&mut self, _: &mut Recorder) {
        self.socket = None;
        self.tls = None;
        self.state = State::Closed;
    }
}

/// HTTP/2's part of a worker's connections: the scheme its requests name, and the plain header block of a
/// rendered request (scenarios), reused.
#[derive(Debug)]
pub(super) struct Http2 {
    scheme: &'static str,
    block: Vec<u8>,
}

impl Http2 {
    /// Requests over `https` when `tls`, else over `http`.
    pub(super) fn new(tls: bool) -> Http2 {
        Http2 { scheme: if tls { "https" } else { "http" }, block: Vec::new() }
    }
}

/// A worker's HTTP/2 connections.
pub(super) type Wires = Multiplexed<Http2>;

impl Protocol for Http2 {
    type Link = Wire;
    type Encoded = Request2;
    const TOKEN_BIT: usize = 1 << 31;

    fn of<'w>(http2: &'w mut Option<Wires>, _: &'w mut Option<super::Quics>) -> Option<&'w mut Wires> {
        http2.as_mut()
    }

    fn encoded(planned: &Planned) -> Option<&Request2> {
        planned.encoded2.as_ref()
    }

    fn open(&mut self, wire: &mut Wire, slot: usize, request: Outgoing<'_, Request2>, capture: Capture) -> Opened {
        if !wire.session.can_open() {
            return Opened::Full;
        }
        let id = match request {
            Outgoing::Encoded(request, bytes) => {
                wire.session.open(slot, request, &bytes[request.body.clone()], capture)
            }
            Outgoing::Rendered(bytes) => match encode_plain(bytes, self.scheme, &mut self.block) {
                Ok(body) => wire.session.open_plain(slot, &self.block, &bytes[body], capture),
                Err(_) => return Opened::Unsendable,
            },
        };
        Opened::Stream(u64::from(id))
    }

    fn connect(worker: &mut Worker<'_>, w: usize, now: Instant) {
        worker.connect_wire(w, now);
    }

    fn flush(worker: &mut Worker<'_>, w: usize) {
        worker.flush_wire(w);
    }
}

impl Wires {
    /// True when the request of slot `i` (`conn`) has body bytes waiting for the server's window. Stream ids
    /// repeat from one connection to the next, so only the slot's own wire is asked.
    pub fn stalled(&self, i: usize, conn: &Conn) -> bool {
        conn.phase == Phase::Reading
            && self.carriers.get(self.carrier(i)).is_some_and(|w| w.link.session.stalled(conn.stream as u32))
    }
}

impl Worker<'_> {
    fn connect_wire(&mut self, w: usize, now: Instant) {
        let address = self.shared.address;
        self.multiplexed::<Http2>().carriers[w].link.session = Session::new();
        let token = self.reopen::<Http2>(w, now);
        let mut socket = match TcpStream::connect(address) {
            Ok(socket) => socket,
            Err(e) => return self.break_carrier::<Http2>(w, connect_error(&e), now),
        };
        if let Err(e) = self.poll.registry().register(&mut socket, token, Interest::READABLE | Interest::WRITABLE) {
            return self.break_carrier::<Http2>(w, connect_error(&e), now);
        }
        let wire = &mut self.multiplexed::<Http2>().carriers[w].link;
        wire.socket = Some(socket);
        wire.state = State::Connecting;
    }

    pub(super) fn on_wire_event(&mut self, w: usize, generation: u32, event: &Event) {
        let Some(wire) = self.multiplexed::<Http2>().carriers.get(w) else { return };
        if wire.generation != generation {
            return;
        }
        match wire.link.state {
            State::Connecting => self.on_wire_connect(w),
            State::Handshaking => self.wire_handshake(w),
            State::Settling | State::Open => {
                if event.is_writable() {
                    self.multiplexed::<Http2>().carriers[w].dirty = true;
                }
                if event.is_readable() || event.is_read_closed() || event.is_error() {
                    self.read_wire(w);
                }
            }
            State::Closed => {}
        }
    }

    fn on_wire_connect(&mut self, w: usize) {
        let now = Instant::now();
        let wire = &mut self.http2.as_mut().expect("an HTTP/2 worker").carriers[w];
        let Some(socket) = wire.link.socket.as_ref() else { return };
        match socket.take_error() {
            Ok(Some(e)) | Err(e) => return self.break_carrier::<Http2>(w, connect_error(&e), now),
            Ok(None) => {}
        }
        match socket.peer_addr() {
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::NotConnected => return,
            Err(e) => return self.break_carrier::<Http2>(w, connect_error(&e), now),
        }
        let _ = socket.set_nodelay(true);
        wire.backoff = MIN_BACKOFF;
        if now >= self.shared.measure_start {
            self.tally.recorder.connected(micros(now - wire.started));
        }
        wire.started = now;
        wire.deadline = now + self.shared.connect_timeout;
        if let Some(tls) = &self.shared.tls {
            match rustls::ClientConnection::new(tls.config.clone(), tls.server_name.clone()) {
                Ok(session) => wire.link.tls = Some(Box::new(session)),
                Err(_) => return self.break_carrier::<Http2>(w, ErrorKind::Tls, now),
            }
            wire.link.state = State::Handshaking;
            return self.wire_handshake(w);
        }
        wire.link.state = State::Settling;
        wire.dirty = true;
    }

    fn wire_handshake(&mut self, w: usize) {
        let wire = &mut self.http2.as_mut().expect("an HTTP/2 worker").carriers[w];
        let (Some(socket), Some(tls)) = (wire.link.socket.as_mut(), wire.link.tls.as_deref_mut()) else { return };
        match transport::handshake(socket, tls) {
            Ok(true) => {}
            Ok(false) => return, // the next edge goes on
            Err(kind) => return self.break_carrier::<Http2>(w, kind, Instant::now()),
        }
        if tls.alpn_protocol() != Some(b"h2") {
            return self.break_carrier::<Http2>(w, ErrorKind::Tls, Instant::now());
        }
        wire.link.state = State::Settling;
        wire.dirty = true;
    }

    /// Reads what arrived and hands every stream that ended to the loop. The buffer is lent out for the read, so
    /// that the loop may open new streams on this wire while the rest of the bytes wait their turn.
    fn read_wire(&mut self, w: usize) {
        let mut buffer = std::mem::take(&mut self.buffer);
        loop {
            let wire = &mut self.http2.as_mut().expect("an HTTP/2 worker").carriers[w];
            let Some(socket) = wire.link.socket.as_mut() else { break };
            let n = match transport::read(socket, wire.link.tls.as_deref_mut(), &mut buffer) {
                Ok(0) => {
                    let kind = if wire.link.session.going_away() { ErrorKind::Goaway } else { ErrorKind::Closed };
                    self.break_carrier::<Http2>(w, kind, Instant::now());
                    break;
                }
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    self.break_carrier::<Http2>(w, transfer_error(&e), Instant::now());
                    break;
                }
            };
            self.tally.received(self.period != super::Period::Warmup, n);
            let generation = wire.generation;
            if !self.take_frames(w, generation, &buffer[..n]) {
                break;
            }
        }
        self.buffer = buffer;
    }

    /// Hands the events in `bytes` to the loop. Returns false when the wire broke (or was replaced) meanwhile.
    fn take_frames(&mut self, w: usize, generation: u32, bytes: &[u8]) -> bool {
        let mut pos = 0;
        loop {
            let wire = &mut self.http2.as_mut().expect("an HTTP/2 worker").carriers[w];
            if wire.generation != generation {
                return false;
            }
            let event = wire.link.session.poll(bytes, &mut pos);
            wire.dirty |= !wire.link.session.pending_output().is_empty();
            let now = Instant::now();
            match event {
                Ok(None) => break,
                Ok(Some(StreamEvent::Ready)) => {
                    if now >= self.shared.measure_start {
                        self.tally.recorder.handshake(micros(now - wire.started));
                    }
                    wire.link.state = State::Open;
                    self.open_streams::<Http2>(w, now);
                }
                Ok(Some(StreamEvent::Answered { slot })) => {
                    let mut response = std::mem::take(&mut self.answer);
                    std::mem::swap(&mut response, wire.link.session.response_mut());
                    self.stream_answered(slot, &response, now);
                    self.answer = response;
                }
                Ok(Some(StreamEvent::Reset { slot, code })) => {
                    // REFUSED_STREAM: the server did not process the request at all.
                    let kind =
                        if code == frame::REFUSED_STREAM { ErrorKind::StreamRefused } else { ErrorKind::StreamReset };
                    self.end_stream(slot, kind, Some(u64::from(code)), now);
                }
                Ok(Some(StreamEvent::Refused { slot })) => self.end_stream(slot, ErrorKind::Goaway, None, now),
                Ok(Some(StreamEvent::Broken { slot, kind })) => self.end_stream(slot, kind, None, now),
                Err(Broken(_)) => {
                    wire.link.session.say_goaway(frame::PROTOCOL_ERROR);
                    self.flush_wire(w);
                    self.break_carrier::<Http2>(w, ErrorKind::Malformed, now);
                    return false;
                }
            }
        }
        self.after_events::<Http2>(w, Instant::now())
    }

    fn flush_wire(&mut self, w: usize) {
        let measuring = self.period != super::Period::Warmup;
        let wire = &mut self.multiplexed::<Http2>().carriers[w];
        if !matches!(wire.link.state, State::Settling | State::Open) {
            return;
        }
        let (Some(socket), pending) = (wire.link.socket.as_mut(), wire.link.session.pending_output()) else { return };
        let mut written = 0;
        let result = match wire.link.tls.as_deref_mut() {
            Some(tls) => tls
                .writer()
                .write_all(pending)
                .map(|()| written = pending.len())
                .and_then(|()| transport::flush(socket, tls).map(|_| ())),
            None => loop {
                match socket.write(&pending[written..]) {
                    Ok(n) => {
                        written += n;
                        if written == pending.len() {
                            break Ok(());
                        }
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break Ok(()),
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => break Err(e),
                }
            },
        };
        wire.link.session.wrote(written);
        wire.dirty = false;
        if measuring {
            self.tally.recorder.bytes_sent += written as u64;
        }
        if let Err(e) = result {
            self.break_carrier::<Http2>(w, transfer_error(&e), Instant::now());
        }
    }
}
