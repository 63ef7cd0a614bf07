//! HTTP/3 on the worker's connections: a [`Quic`] is one QUIC connection (its own UDP socket, connected to the
//! server, its own `quinn-proto` endpoint, and the HTTP/3 [`Session`] over it) whose streams carry `streams`
//! slots (slot `i` always rides connection `i / streams`), as HTTP/2's wires do.
//!
//! A slot with a request to send joins its connection's queue; the connection shakes hands if it is closed, and
//! once the handshake completes it opens a stream for each queued slot while the server allows. Datagrams are
//! read when the socket says so and handed to the endpoint, which hands them to the connection; what the
//! connection has to send goes out once per loop turn (`flush_quics`), so the requests of every stream that
//! became free in one turn share packets. QUIC's own timers (acknowledgements, loss detection, idle) are kept
//! per connection and run from the loop's tick, or sooner when one falls due before it.
//!
//! One endpoint per connection keeps a connection's whole state in one place: dropping it forgets everything,
//! and no endpoint ever demultiplexes datagrams that the kernel already sorted by socket.

use std::collections::VecDeque;
use std::io;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::BytesMut;
use mio::event::Event;
use mio::net::UdpSocket;
use mio::Interest;
use quinn_proto::{ConnectionError, ConnectionHandle, DatagramEvent, Endpoint, StreamId, VarInt};
use shootout_model::result::QuicCounts;
use shootout_model::ErrorKind;

use super::Worker;
use crate::conn::{Phase, MAX_BACKOFF, MIN_BACKOFF};
use crate::http::h3::frame::code;
use crate::http::h3::qpack::encode_plain;
use crate::http::h3::session::{Event as StreamEvent, Session};
use crate::quic::{any_local, is_crypto, QuicPlan};
use crate::tally::micros;

/// The bit that marks an HTTP/3 connection's poll token (slot tokens never reach it, nor HTTP/2's wire bit).
const QUIC_BIT: usize = 1 << 30;
/// The largest UDP payload read at once.
const MAX_DATAGRAM: usize = 65_535;
/// The room the receive buffer takes at once, when what is left of it cannot hold a datagram: datagrams are split
/// off it as they arrive, so it is renewed only every few hundred of them.
const RECEIVE_ROOM: usize = 16 * MAX_DATAGRAM;

/// The HTTP/3 connection a poll token's index names, if it names one.
pub fn quic_of(index: usize) -> Option<usize> {
    (index & QUIC_BIT != 0).then_some(index & !QUIC_BIT)
}

/// How far a connection is in setting up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// No connection.
    Closed,
    /// The QUIC handshake is under way.
    Handshaking,
    /// Streams may open.
    Open,
}

/// One HTTP/3 connection.
struct Quic {
    socket: Option<UdpSocket>,
    endpoint: Option<Endpoint>,
    handle: ConnectionHandle,
    session: Option<Session>,
    generation: u32,
    state: State,
    /// Slots waiting for a stream, oldest first.
    waiting: VecDeque<usize>,
    /// When the handshake started.
    started: Instant,
    /// When the handshake must be done.
    deadline: Instant,
    /// When QUIC's next timer falls due.
    timer: Option<Instant>,
    /// The connection may have something to send.
    dirty: bool,
    /// A datagram the socket would not take yet (sent first when it is writable again).
    unsent: Vec<u8>,
    /// Wait before the next connect after a failed one.
    backoff: Duration,
    /// Its handshake completed.
    opened: bool,
}

impl Quic {
    fn new(now: Instant) -> Quic {
        Quic {
            socket: None,
            endpoint: None,
            handle: ConnectionHandle(0),
            session: None,
            generation: 0,
            state: State::Closed,
            waiting: VecDeque::new(),
            started: now,
            deadline: now,
            timer: None,
            dirty: false,
            unsent: Vec::new(),
            backoff: MIN_BACKOFF,
            opened: false,
        }
    }

    /// Forgets the connection, adding what its QUIC stack counted to `counts`.
    fn close(&mut self, counts: &mut QuicCounts) {
        if let Some(session) = self.session.as_mut() {
            let quic = session.quic();
            let stats = quic.stats();
            counts.handshakes += u64::from(self.opened);
            counts.zero_rtt += u64::from(self.opened && quic.accepted_0rtt());
            counts.packets_sent += stats.path.sent_packets;
            counts.packets_lost += stats.path.lost_packets;
            counts.bytes_lost += stats.path.lost_bytes;
            counts.congestion_events += stats.path.congestion_events;
            counts.datagrams_sent += stats.udp_tx.datagrams;
            counts.datagrams_received += stats.udp_rx.datagrams;
        }
        self.opened = false;
        self.socket = None;
        self.endpoint = None;
        self.session = None;
        self.generation = self.generation.wrapping_add(1);
        self.state = State::Closed;
        self.timer = None;
        self.dirty = false;
        self.unsent.clear();
    }
}

/// A worker's HTTP/3 connections.
pub struct Quics {
    plan: Arc<QuicPlan>,
    quics: Vec<Quic>,
    /// Slots per connection.
    streams: usize,
    /// The HEADERS frame of a rendered request (scenarios) and its field section, reused.
    headers: Vec<u8>,
    section: Vec<u8>,
    /// Datagrams as they are read: each one split off and handed to its endpoint, the rest read into next.
    received: BytesMut,
    /// Datagrams to send, one at a time.
    transmit: Vec<u8>,
    /// The slots a broken connection fails, gathered before failing them (reused).
    lost: Vec<usize>,
}

impl std::fmt::Debug for Quics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Quics").field("connections", &self.quics.len()).field("streams", &self.streams).finish()
    }
}

impl Quics {
    /// No connections yet; each carries `streams` slots.
    pub fn new(plan: Arc<QuicPlan>, streams: usize) -> Quics {
        Quics {
            plan,
            quics: Vec::new(),
            streams: streams.max(1),
            headers: Vec::new(),
            section: Vec::new(),
            received: BytesMut::new(),
            transmit: Vec::new(),
            lost: Vec::new(),
        }
    }

    fn quic(&self, slot: usize) -> usize {
        slot / self.streams
    }

    /// The earliest QUIC timer of any connection.
    pub fn next_timer(&self) -> Option<Instant> {
        self.quics.iter().filter_map(|q| q.timer).min()
    }
}

/// The stream id kept in a [`Conn`] (plus one: 0 means none) and back.
fn kept(id: StreamId) -> u64 {
    VarInt::from(id).into_inner() + 1
}

fn stream_of(kept: u64) -> Option<StreamId> {
    kept.checked_sub(1).and_then(|id| VarInt::from_u64(id).ok()).map(StreamId::from)
}

/// The error a lost connection fails its requests with.
fn lost_kind(reason: &ConnectionError, handshaking: bool) -> ErrorKind {
    match reason {
        ConnectionError::TimedOut if handshaking => ErrorKind::ConnectTimeout,
        ConnectionError::TimedOut => ErrorKind::ReadTimeout,
        ConnectionError::Reset => ErrorKind::Reset,
        ConnectionError::TransportError(e) if is_crypto(e.code) => ErrorKind::Tls,
        ConnectionError::ConnectionClosed(close) if is_crypto(close.error_code) => ErrorKind::Tls,
        ConnectionError::VersionMismatch => ErrorKind::ConnectOther,
        ConnectionError::ApplicationClosed(close) if close.error_code.into_inner() != code::NO_ERROR => {
            ErrorKind::Malformed
        }
        _ => ErrorKind::Closed,
    }
}

impl Worker<'_> {
    fn quics(&mut self) -> &mut Quics {
        self.http3.as_mut().expect("an HTTP/3 worker")
    }

    /// Slot `i` has a request to send: it waits on its connection, which connects if it must or opens a stream.
    pub(super) fn dispatch_quic(&mut self, i: usize, now: Instant) {
        let quics = self.quics();
        let q = quics.quic(i);
        while quics.quics.len() <= q {
            quics.quics.push(Quic::new(now));
        }
        quics.quics[q].waiting.push_back(i);
        self.conns[i].phase = Phase::Connecting;
        match self.quics().quics[q].state {
            State::Closed => self.connect_quic(q, now),
            State::Open => self.open_quic_streams(q, now),
            State::Handshaking => {}
        }
    }

    fn connect_quic(&mut self, q: usize, now: Instant) {
        let address = self.shared.address;
        let timeout = self.shared.connect_timeout;
        let registry = self.poll.registry();
        let quics = self.http3.as_mut().expect("an HTTP/3 worker");
        let plan = quics.plan.clone();
        let quic = &mut quics.quics[q];
        quic.close(&mut self.tally.recorder.quic);
        quic.started = Instant::now();
        quic.deadline = now + timeout;
        let token = mio::Token(((quic.generation as usize) << 32) | q | QUIC_BIT);
        let socket = UdpSocket::bind(any_local(address)).and_then(|socket| socket.connect(address).map(|()| socket));
        let mut socket = match socket {
            Ok(socket) => socket,
            Err(e) => return self.break_quic(q, crate::conn::connect_error(&e), now),
        };
        if let Err(e) = registry.register(&mut socket, token, Interest::READABLE | Interest::WRITABLE) {
            return self.break_quic(q, crate::conn::connect_error(&e), now);
        }
        let (endpoint, handle, connection) = match plan.start(now, address) {
            Ok(started) => started,
            Err(_) => return self.break_quic(q, ErrorKind::ConnectOther, now),
        };
        let quic = &mut self.quics().quics[q];
        quic.socket = Some(socket);
        quic.endpoint = Some(endpoint);
        quic.handle = handle;
        quic.session = Some(Session::new(connection));
        quic.state = State::Handshaking;
        quic.dirty = true;
    }

    pub(super) fn on_quic_event(&mut self, q: usize, generation: u32, event: &Event) {
        let Some(quic) = self.quics().quics.get(q) else { return };
        if quic.generation != generation || quic.state == State::Closed {
            return;
        }
        if event.is_writable() {
            self.quics().quics[q].dirty = true;
        }
        if event.is_readable() || event.is_error() {
            self.read_quic(q);
        }
    }

    /// Reads every datagram waiting on connection `q`'s socket and hands it to the connection, then takes what
    /// happened: a response ends when the last datagram read has been taken in, the instant its latency ends at.
    fn read_quic(&mut self, q: usize) {
        let measuring = self.period != super::Period::Warmup;
        let quics = self.http3.as_mut().expect("an HTTP/3 worker");
        let Quics { quics, received, transmit, .. } = quics;
        let quic = &mut quics[q];
        let (Some(socket), Some(endpoint), Some(session)) =
            (quic.socket.as_ref(), quic.endpoint.as_mut(), quic.session.as_mut())
        else {
            return;
        };
        let mut failed = None;
        let mut bytes = 0;
        loop {
            // The bytes past the last datagram split off are initialized already: only what a split took is
            // zeroed again, not the whole 64 KiB for every datagram.
            if received.capacity() < MAX_DATAGRAM {
                received.reserve(RECEIVE_ROOM);
            }
            received.resize(MAX_DATAGRAM, 0);
            let n = match socket.recv(&mut received[..]) {
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            };
            bytes += n;
            let datagram = received.split_to(n);
            match endpoint.handle(Instant::now(), self.shared.address, None, None, datagram, transmit) {
                Some(DatagramEvent::ConnectionEvent(_, event)) => session.quic().handle_event(event),
                Some(DatagramEvent::Response(_)) | Some(DatagramEvent::NewConnection(_)) | None => {}
            }
        }
        if bytes > 0 {
            self.tally.received(measuring, bytes);
        }
        let now = Instant::now();
        if let Some(e) = failed {
            return self.socket_failed(q, &e, now);
        }
        self.quics().quics[q].dirty = true;
        self.take_quic_events(q, now);
    }

    /// Hands what connection `q`'s session has to tell to the loop.
    fn take_quic_events(&mut self, q: usize, now: Instant) {
        let generation = self.quics().quics[q].generation;
        loop {
            let quic = &mut self.http3.as_mut().expect("an HTTP/3 worker").quics[q];
            if quic.generation != generation {
                return;
            }
            let Some(session) = quic.session.as_mut() else { return };
            let Some(event) = session.poll(now) else { break };
            match event {
                StreamEvent::Ready => {
                    // A QUIC connection is open once its handshake (TLS within it) completes: its connect time.
                    if now >= self.shared.measure_start {
                        self.tally.recorder.connected(micros(now - quic.started));
                    }
                    quic.state = State::Open;
                    quic.opened = true;
                    quic.backoff = MIN_BACKOFF;
                    self.open_quic_streams(q, now);
                }
                StreamEvent::Answered { slot } => {
                    let mut response = std::mem::take(&mut self.answer);
                    std::mem::swap(&mut response, session.response_mut());
                    self.stream_answered(slot, &response, now);
                    self.answer = response;
                }
                StreamEvent::Reset { slot, code: reset } => {
                    let kind =
                        if reset == code::REQUEST_REJECTED { ErrorKind::StreamRefused } else { ErrorKind::StreamReset };
                    self.end_stream(slot, kind, Some(reset), now);
                }
                StreamEvent::Refused { slot } => self.end_stream(slot, ErrorKind::Goaway, None, now),
                StreamEvent::Broken { slot } => self.end_stream(slot, ErrorKind::Malformed, None, now),
                StreamEvent::Lost(reason) => {
                    let quic = &self.quics().quics[q];
                    let handshaking = quic.state == State::Handshaking;
                    let broke = quic.session.as_ref().and_then(Session::broke).is_some();
                    let kind = if broke { ErrorKind::Malformed } else { lost_kind(&reason, handshaking) };
                    let kind = match kind {
                        ErrorKind::Closed if quic.session.as_ref().is_some_and(Session::going_away) => {
                            ErrorKind::Goaway
                        }
                        kind => kind,
                    };
                    return self.break_quic(q, kind, now);
                }
            }
        }
        let quic = &self.quics().quics[q];
        if quic.session.as_ref().is_some_and(Session::drained) {
            return self.retire_quic(q, now);
        }
        self.open_quic_streams(q, now);
    }

    /// The server said GOAWAY and every stream it kept has ended: the connection is done, counted as closed by
    /// the server, and what waits goes on a new one.
    fn retire_quic(&mut self, q: usize, now: Instant) {
        if now >= self.shared.measure_start {
            self.tally.recorder.closed_by_server();
        }
        self.say_close(q, now);
        let quic = &mut self.http3.as_mut().expect("an HTTP/3 worker").quics[q];
        quic.close(&mut self.tally.recorder.quic);
        if !quic.waiting.is_empty() {
            self.connect_quic(q, now);
        }
    }

    /// Tells the server the client is done with connection `q` (one CONNECTION_CLOSE, not waited on).
    fn say_close(&mut self, q: usize, now: Instant) {
        let quic = &mut self.quics().quics[q];
        if let Some(session) = quic.session.as_mut() {
            session.close(now, code::NO_ERROR, "");
        }
        self.flush_quic(q);
    }

    /// Opens a stream for every waiting slot, while the server allows.
    fn open_quic_streams(&mut self, q: usize, now: Instant) {
        let workload = &*self.shared.workload;
        let records_lag = self.pacer.records_send_lag();
        let quics = self.http3.as_mut().expect("an HTTP/3 worker");
        let Quics { quics, headers, section, lost, .. } = quics;
        let quic = &mut quics[q];
        let Some(session) = quic.session.as_mut().filter(|s| quic.state == State::Open && s.ready()) else { return };
        while let Some(&i) = quic.waiting.front() {
            let conn = &mut self.conns[i];
            let planned = &workload.requests[conn.request];
            let capture = workload.capture(conn.request);
            let opened = match (&planned.encoded3, &planned.encoded) {
                (Some(request), Some(bytes)) if conn.user.hop.is_none() => {
                    session.open(i, &request.headers, &bytes[request.body.clone()], capture)
                }
                _ => match encode_plain(&conn.out, section, headers) {
                    Ok(body) => session.open(i, headers, &conn.out[body], capture),
                    Err(_) => {
                        quic.waiting.pop_front();
                        lost.push(i); // cannot happen with requests shootout rendered; failed below
                        continue;
                    }
                },
            };
            let Some(id) = opened else { break };
            quic.waiting.pop_front();
            conn.stream = kept(id);
            conn.phase = Phase::Reading;
            conn.sent_at = now;
            self.tally.written(conn.counted, records_lag, conn.due, now);
            quic.dirty = true;
        }
        quic.waiting.iter().for_each(|&i| self.conns[i].phase = Phase::Queued);
        while let Some(i) = self.quics().lost.pop() {
            self.conns[i].phase = Phase::Writing;
            self.fail(i, ErrorKind::Malformed, now);
        }
    }

    /// Slot `i` gives up its request (a timeout, or it failed, and is counted already): its stream is reset, or
    /// it leaves the queue.
    pub(super) fn release_quic_stream(&mut self, i: usize, now: Instant) {
        let phase = self.conns[i].phase;
        let stream = std::mem::take(&mut self.conns[i].stream);
        let quics = self.quics();
        let q = quics.quic(i);
        let Some(quic) = quics.quics.get_mut(q) else { return };
        match phase {
            Phase::Reading => {
                if let (Some(session), Some(id)) = (quic.session.as_mut(), stream_of(stream)) {
                    session.cancel(id);
                    quic.dirty = true;
                    if session.drained() {
                        self.conns[i].phase = Phase::Idle;
                        self.retire_quic(q, now);
                    }
                }
            }
            Phase::Connecting | Phase::Queued => quic.waiting.retain(|&s| s != i),
            _ => {}
        }
    }

    /// Connection `q` broke with `kind`: every request on it or waiting for it fails, and it is closed.
    fn break_quic(&mut self, q: usize, kind: ErrorKind, now: Instant) {
        let streams = self.quics().streams;
        let quic = &mut self.http3.as_mut().expect("an HTTP/3 worker").quics[q];
        let backoff = quic.backoff;
        if kind.is_connect() {
            quic.backoff = (quic.backoff * 2).min(MAX_BACKOFF);
        }
        quic.close(&mut self.tally.recorder.quic);
        quic.waiting.clear();
        let lost = std::mem::take(&mut self.quics().lost);
        let lost = self.lose_slots(q * streams..(q + 1) * streams, kind, backoff, lost, now);
        self.quics().lost = lost;
    }

    /// The run is over: every connection still open is closed (one CONNECTION_CLOSE each) and its counts kept.
    pub(super) fn close_quics(&mut self) {
        let Some(quics) = self.http3.as_ref() else { return };
        let now = Instant::now();
        for q in 0..quics.quics.len() {
            self.say_close(q, now);
            let quic = &mut self.http3.as_mut().expect("an HTTP/3 worker").quics[q];
            quic.close(&mut self.tally.recorder.quic);
        }
    }

    /// Sends what every connection has queued.
    pub(super) fn flush_quics(&mut self) {
        let Some(quics) = self.http3.as_ref() else { return };
        for q in 0..quics.quics.len() {
            if self.quics().quics[q].dirty {
                self.flush_quic(q);
            }
        }
    }

    /// Sends connection `q`'s datagrams until it has none or the socket is full, hands the endpoint what the
    /// connection tells it, and notes when its next timer falls due.
    fn flush_quic(&mut self, q: usize) {
        let measuring = self.period != super::Period::Warmup;
        let now = Instant::now();
        let Quics { quics, transmit, .. } = self.http3.as_mut().expect("an HTTP/3 worker");
        let quic = &mut quics[q];
        let (Some(socket), Some(endpoint), Some(session)) =
            (quic.socket.as_ref(), quic.endpoint.as_mut(), quic.session.as_mut())
        else {
            return;
        };
        quic.dirty = false;
        let mut sent = 0;
        let mut failed = None;
        if !quic.unsent.is_empty() {
            match socket.send(&quic.unsent) {
                Ok(n) => {
                    sent += n;
                    quic.unsent.clear();
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    // The socket is full: what is queued waits for it to drain, the timers do not.
                    quic.timer = session.quic().poll_timeout();
                    return;
                }
                Err(e) => failed = Some(e),
            }
        }
        while failed.is_none() {
            transmit.clear();
            let Some(datagram) = session.quic().poll_transmit(now, 1, transmit) else { break };
            match socket.send(&transmit[..datagram.size]) {
                Ok(n) => sent += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    quic.unsent.extend_from_slice(&transmit[..datagram.size]);
                    break;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => failed = Some(e),
            }
        }
        let handle = quic.handle;
        while let Some(event) = session.quic().poll_endpoint_events() {
            if let Some(back) = endpoint.handle_event(handle, event) {
                session.quic().handle_event(back);
            }
        }
        quic.timer = session.quic().poll_timeout();
        if measuring {
            self.tally.recorder.bytes_sent += sent as u64;
        }
        if let Some(e) = failed {
            self.socket_failed(q, &e, now);
        }
    }

    /// Connection `q`'s socket failed with `error` (a refusal arrives as ECONNREFUSED on a connected UDP socket,
    /// from the ICMP port unreachable its datagram met): a connect error while it shakes hands, a transfer error
    /// after.
    fn socket_failed(&mut self, q: usize, error: &io::Error, now: Instant) {
        let handshaking = self.quics().quics[q].state == State::Handshaking;
        let kind = match error.kind() {
            io::ErrorKind::ConnectionRefused if handshaking => ErrorKind::ConnectRefused,
            _ if handshaking => crate::conn::connect_error(error),
            _ => crate::conn::transfer_error(error),
        };
        self.break_quic(q, kind, now);
    }

    /// Timers of the connections: QUIC's own as they fall due, and a handshake past its deadline breaks its
    /// connection.
    pub(super) fn tick_quics(&mut self, now: Instant) {
        let Some(quics) = self.http3.as_ref() else { return };
        for q in 0..quics.quics.len() {
            let quic = &mut self.quics().quics[q];
            if quic.state == State::Handshaking && now >= quic.deadline {
                self.break_quic(q, ErrorKind::ConnectTimeout, now);
                continue;
            }
            if quic.timer.is_some_and(|t| now >= t) {
                quic.timer = None;
                if let Some(session) = quic.session.as_mut() {
                    session.quic().handle_timeout(now);
                    quic.dirty = true;
                    self.take_quic_events(q, now);
                }
            }
        }
    }
}
