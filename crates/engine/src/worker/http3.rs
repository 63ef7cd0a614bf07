//! HTTP/3 on the worker's connections: a [`Quic`] is one QUIC connection (its own UDP socket, connected to the
//! server, its own `quinn-proto` endpoint, and the HTTP/3 [`Session`] over it) whose streams carry `streams`
//! slots (slot `i` always rides connection `i / streams`); what a connection's slots wait for and how its
//! streams come and go is [`multiplexed`](super::multiplexed)'s, shared with HTTP/2.
//!
//! A slot with a request to send joins its connection's queue; the connection shakes hands if it is closed, and
//! once the handshake completes it opens a stream for each queued slot while the server allows. Datagrams are
//! read when the socket says so and handed to the endpoint, which hands them to the connection; what the
//! connection has to send goes out once per loop turn (`flush_carriers`), so the requests of every stream that
//! became free in one turn share packets. QUIC's own timers (acknowledgements, loss detection, idle) are kept
//! per connection and run from the loop's tick, or sooner when one falls due before it.
//!
//! One endpoint per connection keeps a connection's whole state in one place: dropping it forgets everything,
//! and no endpoint ever demultiplexes datagrams that the kernel already sorted by socket.

use std::io;
use std::sync::Arc;
use std::time::Instant;

use bytes::BytesMut;
use mio::event::Event;
use mio::net::UdpSocket;
use mio::Interest;
use quinn_proto::{ConnectionError, ConnectionHandle, DatagramEvent, Endpoint, StreamId, VarInt};
use shootout_metrics::Recorder;
use shootout_model::ErrorKind;

use super::multiplexed::{Link, Multiplexed, Opened, Outgoing, Protocol};
use super::Worker;
use crate::conn::MIN_BACKOFF;
use crate::http::h3::frame::code;
use crate::http::h3::qpack::{encode_plain, Request3};
use crate::http::h3::session::{Event as StreamEvent, Session};
use crate::http::response::Capture;
use crate::quic::{any_local, is_crypto, QuicPlan};
use crate::tally::micros;
use crate::workload::Planned;

/// The largest UDP payload read at once.
const MAX_DATAGRAM: usize = 65_535;
/// The room the receive buffer takes at once, when what is left of it cannot hold a datagram: datagrams are split
/// off it as they arrive, so it is renewed only every few hundred of them.
const RECEIVE_ROOM: usize = 16 * MAX_DATAGRAM;

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

/// One HTTP/3 connection's own part.
pub(super) struct Quic {
    socket: Option<UdpSocket>,
    endpoint: Option<Endpoint>,
    handle: ConnectionHandle,
    session: Option<Session>,
    state: State,
    /// When QUIC's next timer falls due.
    timer: Option<Instant>,
    /// A datagram the socket would not take yet (sent first when it is writable again).
    unsent: Vec<u8>,
    /// Its handshake completed.
    opened: bool,
}

impl Default for Quic {
    fn default() -> Quic {
        Quic {
            socket: None,
            endpoint: None,
            handle: ConnectionHandle(0),
            session: None,
            state: State::Closed,
            timer: None,
            unsent: Vec::new(),
            opened: false,
        }
    }
}

impl Link for Quic {
    fn closed(&self) -> bool {
        self.state == State::Closed
    }

    fn setting_up(&self) -> bool {
        self.state == State::Handshaking
    }

    fn ready(&self) -> bool {
        self.state == State::Open && self.session.as_ref().is_some_and(Session::ready)
    }

    fn drained(&self) -> bool {
        self.session.as_ref().is_some_and(Session::drained)
    }

    fn cancel(&mut self, stream: u64) -> bool {
        let (Some(session), Some(id)) = (self.session.as_mut(), stream_of(stream)) else { return false };
        session.cancel(id);
        true
    }

    /// Forgets the connection, adding what its QUIC stack counted to the recorder's QUIC counts.
    fn close(&mut self, recorder: &mut Recorder) {
        let counts = &mut recorder.quic;
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
        self.state = State::Closed;
        self.timer = None;
        self.unsent.clear();
    }
}

/// HTTP/3's part of a worker's connections: how a connection starts, and the buffers its connections share.
pub(super) struct Http3 {
    plan: Arc<QuicPlan>,
    /// The HEADERS frame of a rendered request (scenarios) and its field section, reused.
    headers: Vec<u8>,
    section: Vec<u8>,
    /// Datagrams as they are read: each one split off and handed to its endpoint, the rest read into next.
    received: BytesMut,
    /// Datagrams to send, one at a time.
    transmit: Vec<u8>,
}

impl Http3 {
    /// Connections started by `plan`.
    pub(super) fn new(plan: Arc<QuicPlan>) -> Http3 {
        Http3 { plan, headers: Vec::new(), section: Vec::new(), received: BytesMut::new(), transmit: Vec::new() }
    }
}

/// A worker's HTTP/3 connections.
pub(super) type Quics = Multiplexed<Http3>;

impl Protocol for Http3 {
    type Link = Quic;
    type Encoded = Request3;
    /// Below HTTP/2's bit: no slot's index reaches it, nor any connection's.
    const TOKEN_BIT: usize = 1 << 30;

    fn of<'w>(_: &'w mut Option<super::Wires>, http3: &'w mut Option<Quics>) -> Option<&'w mut Quics> {
        http3.as_mut()
    }

    fn encoded(planned: &Planned) -> Option<&Request3> {
        planned.encoded3.as_ref()
    }

    fn open(&mut self, quic: &mut Quic, slot: usize, request: Outgoing<'_, Request3>, capture: Capture) -> Opened {
        let Some(session) = quic.session.as_mut() else { return Opened::Full };
        let (headers, body) = match request {
            Outgoing::Encoded(request, bytes) => (&request.headers[..], &bytes[request.body.clone()]),
            Outgoing::Rendered(bytes) => match encode_plain(bytes, &mut self.section, &mut self.headers) {
                Ok(body) => (&self.headers[..], &bytes[body]),
                Err(_) => return Opened::Unsendable,
            },
        };
        session.open(slot, headers, body, capture).map_or(Opened::Full, |id| Opened::Stream(kept(id)))
    }

    fn connect(worker: &mut Worker<'_>, q: usize, now: Instant) {
        worker.connect_quic(q, now);
    }

    fn say_close(worker: &mut Worker<'_>, q: usize, now: Instant) {
        worker.say_close(q, now);
    }

    fn flush(worker: &mut Worker<'_>, q: usize) {
        worker.flush_quic(q);
    }

    fn tick(worker: &mut Worker<'_>, q: usize, now: Instant) {
        worker.quic_timers(q, now);
    }
}

impl Quics {
    /// The earliest QUIC timer of any connection.
    pub fn next_timer(&self) -> Option<Instant> {
        self.carriers.iter().filter_map(|q| q.link.timer).min()
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
        // The server's own reason (H3_EXCESSIVE_LOAD, H3_INTERNAL_ERROR…): the connection reset, not a response
        // the client found broken (those close with the client's reason: `Session::broke`).
        ConnectionError::ApplicationClosed(close) if close.error_code.into_inner() != code::NO_ERROR => {
            ErrorKind::Reset
        }
        _ => ErrorKind::Closed,
    }
}

/// Whether the server closed the connection saying nothing went wrong (H3_NO_ERROR, or QUIC's NO_ERROR).
fn closed_without_error(reason: &ConnectionError) -> bool {
    match reason {
        ConnectionError::ApplicationClosed(close) => close.error_code.into_inner() == code::NO_ERROR,
        ConnectionError::ConnectionClosed(close) => close.error_code == quinn_proto::TransportErrorCode::NO_ERROR,
        _ => false,
    }
}

impl Worker<'_> {
    fn connect_quic(&mut self, q: usize, now: Instant) {
        let address = self.shared.address;
        let plan = self.multiplexed::<Http3>().protocol.plan.clone();
        let token = self.reopen::<Http3>(q, now);
        let socket = UdpSocket::bind(any_local(address)).and_then(|socket| socket.connect(address).map(|()| socket));
        let mut socket = match socket {
            Ok(socket) => socket,
            Err(e) => return self.break_carrier::<Http3>(q, crate::conn::connect_error(&e), now),
        };
        if let Err(e) = self.poll.registry().register(&mut socket, token, Interest::READABLE | Interest::WRITABLE) {
            return self.break_carrier::<Http3>(q, crate::conn::connect_error(&e), now);
        }
        let (endpoint, handle, connection) = match plan.start(now, address) {
            Ok(started) => started,
            Err(_) => return self.break_carrier::<Http3>(q, ErrorKind::ConnectOther, now),
        };
        let quic = &mut self.multiplexed::<Http3>().carriers[q];
        quic.link.socket = Some(socket);
        quic.link.endpoint = Some(endpoint);
        quic.link.handle = handle;
        quic.link.session = Some(Session::new(connection));
        quic.link.state = State::Handshaking;
        quic.dirty = true;
    }

    pub(super) fn on_quic_event(&mut self, q: usize, generation: u32, event: &Event) {
        let Some(quic) = self.multiplexed::<Http3>().carriers.get(q) else { return };
        if quic.generation != generation || quic.link.state == State::Closed {
            return;
        }
        if event.is_writable() {
            self.multiplexed::<Http3>().carriers[q].dirty = true;
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
        let Multiplexed { carriers, protocol: Http3 { received, transmit, .. }, .. } = quics;
        let quic = &mut carriers[q].link;
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
        self.multiplexed::<Http3>().carriers[q].dirty = true;
        self.take_quic_events(q, now);
    }

    /// Hands what connection `q`'s session has to tell to the loop.
    fn take_quic_events(&mut self, q: usize, now: Instant) {
        let generation = self.multiplexed::<Http3>().carriers[q].generation;
        loop {
            let quic = &mut self.http3.as_mut().expect("an HTTP/3 worker").carriers[q];
            if quic.generation != generation {
                return;
            }
            let Some(session) = quic.link.session.as_mut() else { return };
            let Some(event) = session.poll(now) else { break };
            match event {
                StreamEvent::Ready => {
                    // A QUIC connection is open once its handshake (TLS within it) completes: its connect time.
                    if now >= self.shared.measure_start {
                        self.tally.recorder.connected(micros(now - quic.started));
                    }
                    quic.link.state = State::Open;
                    quic.link.opened = true;
                    quic.backoff = MIN_BACKOFF;
                    self.open_streams::<Http3>(q, now);
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
                StreamEvent::Broken { slot, kind } => self.end_stream(slot, kind, None, now),
                StreamEvent::Lost(reason) => {
                    let quic = &self.multiplexed::<Http3>().carriers[q].link;
                    let handshaking = quic.state == State::Handshaking;
                    if !handshaking && closed_without_error(&reason) {
                        return self.closed_cleanly::<Http3>(q, now);
                    }
                    let broke = quic.session.as_ref().and_then(Session::broke).is_some();
                    let kind = if broke { ErrorKind::Malformed } else { lost_kind(&reason, handshaking) };
                    let kind = match kind {
                        ErrorKind::Closed if quic.session.as_ref().is_some_and(Session::going_away) => {
                            ErrorKind::Goaway
                        }
                        kind => kind,
                    };
                    return self.break_carrier::<Http3>(q, kind, now);
                }
            }
        }
        self.after_events::<Http3>(q, now);
    }

    /// Tells the server the client is done with connection `q` (one CONNECTION_CLOSE, not waited on).
    fn say_close(&mut self, q: usize, now: Instant) {
        let quic = &mut self.multiplexed::<Http3>().carriers[q].link;
        if let Some(session) = quic.session.as_mut() {
            session.close(now, code::NO_ERROR, "");
        }
        self.flush_quic(q);
    }

    /// The run is over: every connection still open is closed (one CONNECTION_CLOSE each) and its counts kept.
    pub(super) fn close_quics(&mut self) {
        let Some(quics) = self.http3.as_ref() else { return };
        let now = Instant::now();
        for q in 0..quics.carriers.len() {
            self.say_close(q, now);
            let quic = &mut self.http3.as_mut().expect("an HTTP/3 worker").carriers[q];
            quic.close(&mut self.tally.recorder);
        }
    }

    /// Sends connection `q`'s datagrams until it has none or the socket is full, hands the endpoint what the
    /// connection tells it, and notes when its next timer falls due.
    fn flush_quic(&mut self, q: usize) {
        let measuring = self.period != super::Period::Warmup;
        let now = Instant::now();
        let quics = self.http3.as_mut().expect("an HTTP/3 worker");
        let Multiplexed { carriers, protocol: Http3 { transmit, .. }, .. } = quics;
        let carrier = &mut carriers[q];
        let quic = &mut carrier.link;
        let (Some(socket), Some(endpoint), Some(session)) =
            (quic.socket.as_ref(), quic.endpoint.as_mut(), quic.session.as_mut())
        else {
            return;
        };
        carrier.dirty = false;
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
        let handshaking = self.multiplexed::<Http3>().carriers[q].link.state == State::Handshaking;
        let kind = match error.kind() {
            io::ErrorKind::ConnectionRefused if handshaking => ErrorKind::ConnectRefused,
            _ if handshaking => crate::conn::connect_error(error),
            _ => crate::conn::transfer_error(error),
        };
        self.break_carrier::<Http3>(q, kind, now);
    }

    /// QUIC's own timers of connection `q` (not shaking hands past its deadline), as they fall due.
    fn quic_timers(&mut self, q: usize, now: Instant) {
        let quic = &mut self.multiplexed::<Http3>().carriers[q];
        if quic.link.timer.is_some_and(|t| now >= t) {
            quic.link.timer = None;
            if let Some(session) = quic.link.session.as_mut() {
                session.quic().handle_timeout(now);
                quic.dirty = true;
                self.take_quic_events(q, now);
            }
        }
    }
}
