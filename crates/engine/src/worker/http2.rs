//! HTTP/2 on the worker's connections: a [`Wire`] is one connection whose [`Session`] carries the streams of
//! `streams` slots (slot `i` always rides wire `i / streams`).
//!
//! A slot with a request to send joins its wire's queue; the wire connects (and shakes hands, for TLS) if it is
//! closed, and once the server's SETTINGS have arrived it opens a stream for each queued slot while the server
//! allows. What the session queues is written once per loop turn (`flush_wires`), so the requests of every
//! stream that became free in one read go out in one write. A timed-out stream is reset and its place freed; a
//! connection that breaks fails every request on it; one the server ends with GOAWAY finishes the streams the
//! server kept (or gives them up at their timeout), fails the rest, and once none is left is opened again for what
//! waits.

use std::collections::VecDeque;
use std::io::{self, Write};
use std::time::{Duration, Instant};

use mio::event::Event;
use mio::net::TcpStream;
use mio::Interest;
use shootout_model::ErrorKind;

use super::Worker;
use crate::conn::{connect_error, transfer_error, Conn, Phase, MAX_BACKOFF, MIN_BACKOFF};
use crate::http::h2::frame;
use crate::http::h2::request::encode_plain;
use crate::http::h2::session::{Broken, Event as StreamEvent, Session};
use crate::tally::micros;
use crate::transport;

/// The bit that marks a wire's poll token (slot tokens never reach it).
const WIRE_BIT: usize = 1 << 31;

/// The wire a poll token's index names, if it names one.
pub fn wire_of(index: usize) -> Option<usize> {
    (index & WIRE_BIT != 0).then_some(index & !WIRE_BIT)
}

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

/// One HTTP/2 connection.
#[derive(Debug)]
struct Wire {
    socket: Option<TcpStream>,
    tls: Option<Box<rustls::ClientConnection>>,
    generation: u32,
    state: State,
    session: Session,
    /// Slots waiting for a stream, oldest first.
    waiting: VecDeque<usize>,
    /// When the connect (then the handshake and SETTINGS exchange) started.
    started: Instant,
    /// When setting up must be done.
    deadline: Instant,
    /// Bytes the session queued that are not written yet.
    dirty: bool,
    /// Wait before the next connect after a failed one.
    backoff: Duration,
}

impl Wire {
    fn new(now: Instant) -> Wire {
        Wire {
            socket: None,
            tls: None,
            generation: 0,
            state: State::Closed,
            session: Session::new(),
            waiting: VecDeque::new(),
            started: now,
            deadline: now,
            dirty: false,
            backoff: MIN_BACKOFF,
        }
    }

    fn close(&mut self) {
        self.socket = None;
        self.tls = None;
        self.generation = self.generation.wrapping_add(1);
        self.state = State::Closed;
        self.dirty = false;
    }
}

/// A worker's HTTP/2 connections.
#[derive(Debug)]
pub struct Wires {
    wires: Vec<Wire>,
    /// Slots per wire.
    streams: usize,
    /// The plain header block of a rendered request (scenarios), reused.
    block: Vec<u8>,
    /// The slots a broken wire fails, gathered before failing them (reused).
    lost: Vec<usize>,
}

impl Wires {
    /// No wires yet; each carries `streams` slots.
    pub fn new(streams: usize) -> Wires {
        Wires { wires: Vec::new(), streams: streams.max(1), block: Vec::new(), lost: Vec::new() }
    }

    /// True when the request of slot `i` (`conn`) has body bytes waiting for the server's window. Stream ids
    /// repeat from one connection to the next, so only the slot's own wire is asked.
    pub fn stalled(&self, i: usize, conn: &Conn) -> bool {
        conn.phase == Phase::Reading
            && self.wires.get(self.wire(i)).is_some_and(|w| w.session.stalled(conn.stream as u32))
    }

    fn wire(&self, slot: usize) -> usize {
        slot / self.streams
    }
}

impl Worker<'_> {
    fn wires(&mut self) -> &mut Wires {
        self.http2.as_mut().expect("an HTTP/2 worker")
    }

    /// Slot `i` has a request to send: it waits on its wire, which connects if it must or opens a stream now.
    pub(super) fn dispatch_stream(&mut self, i: usize, now: Instant) {
        let wires = self.wires();
        let w = wires.wire(i);
        while wires.wires.len() <= w {
            wires.wires.push(Wire::new(now));
        }
        wires.wires[w].waiting.push_back(i);
        self.conns[i].phase = Phase::Connecting;
        match self.wires().wires[w].state {
            State::Closed => self.connect_wire(w, now),
            State::Open => self.open_streams(w, now),
            _ => {}
        }
    }

    fn connect_wire(&mut self, w: usize, now: Instant) {
        let address = self.shared.address;
        let timeout = self.shared.connect_timeout;
        let wire = &mut self.http2.as_mut().expect("an HTTP/2 worker").wires[w];
        wire.close();
        wire.session = Session::new();
        wire.started = Instant::now(); // its own start: `now` may be a loop turn's, read before other work
        wire.deadline = now + timeout;
        let token = mio::Token(((wire.generation as usize) << 32) | w | WIRE_BIT);
        let mut socket = match TcpStream::connect(address) {
            Ok(socket) => socket,
            Err(e) => return self.break_wire(w, connect_error(&e), now),
        };
        if let Err(e) = self.poll.registry().register(&mut socket, token, Interest::READABLE | Interest::WRITABLE) {
            return self.break_wire(w, connect_error(&e), now);
        }
        wire.socket = Some(socket);
        wire.state = State::Connecting;
    }

    pub(super) fn on_wire_event(&mut self, w: usize, generation: u32, event: &Event) {
        let Some(wire) = self.wires().wires.get(w) else { return };
        if wire.generation != generation {
            return;
        }
        match wire.state {
            State::Connecting => self.on_wire_connect(w),
            State::Handshaking => self.wire_handshake(w),
            State::Settling | State::Open => {
                if event.is_writable() {
                    self.wires().wires[w].dirty = true;
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
        let wire = &mut self.http2.as_mut().expect("an HTTP/2 worker").wires[w];
        let Some(socket) = wire.socket.as_ref() else { return };
        match socket.take_error() {
            Ok(Some(e)) | Err(e) => return self.break_wire(w, connect_error(&e), now),
            Ok(None) => {}
        }
        match socket.peer_addr() {
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::NotConnected => return,
            Err(e) => return self.break_wire(w, connect_error(&e), now),
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
                Ok(session) => wire.tls = Some(Box::new(session)),
                Err(_) => return self.break_wire(w, ErrorKind::Tls, now),
            }
            wire.state = State::Handshaking;
            return self.wire_handshake(w);
        }
        wire.state = State::Settling;
        wire.dirty = true;
    }

    fn wire_handshake(&mut self, w: usize) {
        let wire = &mut self.http2.as_mut().expect("an HTTP/2 worker").wires[w];
        let (Some(socket), Some(tls)) = (wire.socket.as_mut(), wire.tls.as_deref_mut()) else { return };
        match transport::handshake(socket, tls) {
            Ok(true) => {}
            Ok(false) => return, // the next edge goes on
            Err(kind) => return self.break_wire(w, kind, Instant::now()),
        }
        if tls.alpn_protocol() != Some(b"h2") {
            return self.break_wire(w, ErrorKind::Tls, Instant::now());
        }
        wire.state = State::Settling;
        wire.dirty = true;
    }

    /// Reads what arrived and hands every stream that ended to the loop. The buffer is lent out for the read, so
    /// that the loop may open new streams on this wire while the rest of the bytes wait their turn.
    fn read_wire(&mut self, w: usize) {
        let mut buffer = std::mem::take(&mut self.buffer);
        loop {
            let wire = &mut self.http2.as_mut().expect("an HTTP/2 worker").wires[w];
            let Some(socket) = wire.socket.as_mut() else { break };
            let n = match transport::read(socket, wire.tls.as_deref_mut(), &mut buffer) {
                Ok(0) => {
                    let kind = if wire.session.going_away() { ErrorKind::Goaway } else { ErrorKind::Closed };
                    self.break_wire(w, kind, Instant::now());
                    break;
                }
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    self.break_wire(w, transfer_error(&e), Instant::now());
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
            let wire = &mut self.http2.as_mut().expect("an HTTP/2 worker").wires[w];
            if wire.generation != generation {
                return false;
            }
            let event = wire.session.poll(bytes, &mut pos);
            wire.dirty |= !wire.session.pending_output().is_empty();
            let now = Instant::now();
            match event {
                Ok(None) => break,
                Ok(Some(StreamEvent::Ready)) => {
                    if now >= self.shared.measure_start {
                        self.tally.recorder.handshake(micros(now - wire.started));
                    }
                    wire.state = State::Open;
                    self.open_streams(w, now);
                }
                Ok(Some(StreamEvent::Answered { slot })) => {
                    let mut response = std::mem::take(&mut self.answer);
                    std::mem::swap(&mut response, wire.session.response_mut());
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
                Ok(Some(StreamEvent::Broken { slot })) => self.end_stream(slot, ErrorKind::Malformed, None, now),
                Err(Broken(_)) => {
                    let wire = &mut self.http2.as_mut().expect("an HTTP/2 worker").wires[w];
                    wire.session.say_goaway(frame::PROTOCOL_ERROR);
                    self.flush_wire(w);
                    self.break_wire(w, ErrorKind::Malformed, now);
                    return false;
                }
            }
        }
        let now = Instant::now();
        if self.wires().wires[w].session.drained() {
            self.retire_wire(w, now);
            return false;
        }
        self.open_streams(w, now);
        true
    }

    /// The server said GOAWAY and every stream it kept has ended (answered, reset, or given up by the client): the
    /// connection is done, counted as closed by the server, and what waits goes on a new one.
    fn retire_wire(&mut self, w: usize, now: Instant) {
        if now >= self.shared.measure_start {
            self.tally.recorder.closed_by_server();
        }
        let wire = &mut self.wires().wires[w];
        wire.close();
        if !wire.waiting.is_empty() {
            self.connect_wire(w, now);
        }
    }

    /// Opens a stream for every waiting slot, while the server allows.
    fn open_streams(&mut self, w: usize, now: Instant) {
        let workload = &*self.shared.workload;
        let scheme = if self.shared.tls.is_some() { "https" } else { "http" };
        let records_lag = self.pacer.records_send_lag();
        let h2 = self.http2.as_mut().expect("an HTTP/2 worker");
        let wire = &mut h2.wires[w];
        if wire.state != State::Open {
            return;
        }
        while wire.session.can_open() {
            let Some(i) = wire.waiting.pop_front() else { break };
            let conn = &mut self.conns[i];
            let planned = &workload.requests[conn.request];
            let capture = workload.capture(conn.request);
            conn.stream = u64::from(match (&planned.encoded2, &planned.encoded) {
                (Some(request), Some(bytes)) if conn.user.hop.is_none() => {
                    wire.session.open(i, request, &bytes[request.body.clone()], capture)
                }
                _ => match encode_plain(&conn.out, scheme, &mut h2.block) {
                    Ok(body) => wire.session.open_plain(i, &h2.block, &conn.out[body], capture),
                    Err(_) => {
                        h2.lost.push(i); // cannot happen with requests shootout rendered; failed below
                        continue;
                    }
                },
            });
            conn.phase = Phase::Reading;
            conn.sent_at = now;
            self.tally.written(conn.counted, records_lag, conn.due, now);
            wire.dirty = true;
        }
        wire.waiting.iter().for_each(|&i| self.conns[i].phase = Phase::Queued);
        while let Some(i) = self.wires().lost.pop() {
            self.conns[i].phase = Phase::Writing;
            self.fail(i, ErrorKind::Malformed, now);
        }
    }

    /// Slot `i` gives up its request (a timeout, or it failed, and is counted already): its stream is reset, or it
    /// leaves the queue. When it was the last stream a GOAWAY left on its connection, the connection is done.
    pub(super) fn release_stream(&mut self, i: usize, now: Instant) {
        let phase = self.conns[i].phase;
        let stream = self.conns[i].stream;
        self.conns[i].stream = 0;
        let h2 = self.wires();
        let w = h2.wire(i);
        let Some(wire) = h2.wires.get_mut(w) else { return };
        match phase {
            Phase::Reading if stream != 0 => {
                wire.session.cancel(stream as u32);
                wire.dirty = true;
                if wire.session.drained() {
                    // Out of the wire's slots before it goes, so that a failed reconnect does not count it again.
                    self.conns[i].phase = Phase::Idle;
                    self.retire_wire(w, now);
                }
            }
            Phase::Connecting | Phase::Queued => wire.waiting.retain(|&s| s != i),
            _ => {}
        }
    }

    /// The wire broke with `kind`: every request on it or waiting for it fails (connect failures pause the
    /// slots before they try again), and the connection is closed.
    fn break_wire(&mut self, w: usize, kind: ErrorKind, now: Instant) {
        let streams = self.wires().streams;
        let wire = &mut self.wires().wires[w];
        let backoff = wire.backoff;
        if kind.is_connect() {
            wire.backoff = (wire.backoff * 2).min(MAX_BACKOFF);
        }
        wire.close();
        wire.waiting.clear();
        let lost = std::mem::take(&mut self.wires().lost);
        let lost = self.lose_slots(w * streams..(w + 1) * streams, kind, backoff, lost, now);
        self.wires().lost = lost;
    }

    /// Writes what every wire's session has queued.
    pub(super) fn flush_wires(&mut self) {
        let Some(h2) = self.http2.as_ref() else { return };
        for w in 0..h2.wires.len() {
            if self.wires().wires[w].dirty {
                self.flush_wire(w);
            }
        }
    }

    fn flush_wire(&mut self, w: usize) {
        let measuring = self.period != super::Period::Warmup;
        let wire = &mut self.wires().wires[w];
        if !matches!(wire.state, State::Settling | State::Open) {
            return;
        }
        let (Some(socket), pending) = (wire.socket.as_mut(), wire.session.pending_output()) else { return };
        let mut written = 0;
        let result = match wire.tls.as_deref_mut() {
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
        wire.session.wrote(written);
        wire.dirty = false;
        if measuring {
            self.tally.recorder.bytes_sent += written as u64;
        }
        if let Err(e) = result {
            self.break_wire(w, transfer_error(&e), Instant::now());
        }
    }

    /// Timers of the wires: a connect, handshake or SETTINGS exchange past its deadline breaks the wire.
    pub(super) fn tick_wires(&mut self, now: Instant) {
        let Some(h2) = self.http2.as_ref() else { return };
        for w in 0..h2.wires.len() {
            let wire = &self.wires().wires[w];
            if matches!(wire.state, State::Connecting | State::Handshaking | State::Settling) && now >= wire.deadline {
                self.break_wire(w, ErrorKind::ConnectTimeout, now);
            }
        }
    }
}
