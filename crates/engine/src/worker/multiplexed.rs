//! The connections whose streams carry the requests of many slots, kept once for HTTP/2 ([`http2`](super::http2))
//! and HTTP/3 ([`http3`](super::http3)): slot `i` always rides connection `i / streams`; a slot with a request to
//! send joins its connection's queue, which connects it if it is closed; once the connection is ready, each queued
//! slot gets a stream while the server allows; a slot that gives up resets its stream or leaves the queue; a
//! connection the server ends with GOAWAY is done once its last stream is, and opened again for what waits; a
//! connection that breaks fails every slot on it or waiting for it, one the server closes without an error fails
//! only the requests it left unanswered, and a failed connect doubles its wait before the next. A fix to any of
//! that is made here, once.
//!
//! What differs stays with each protocol, behind [`Protocol`] (the worker's part) and [`Link`] (one connection's
//! part): how a connection starts, reads and writes, what its session is, how a stream opens and is reset, and
//! what closing it counts. The worker reaches them by static dispatch (each call names its protocol), so a request
//! costs no allocation and no indirect call that its protocol's own code does not.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use shootout_metrics::Recorder;
use shootout_model::ErrorKind;

use super::http2::Wires;
use super::http3::Quics;
use super::Worker;
use crate::conn::{Phase, MAX_BACKOFF, MIN_BACKOFF};
use crate::http::response::Capture;
use crate::workload::Planned;

/// One connection's own part, as its protocol keeps it: its socket, its session, how far it is in setting up.
pub(super) trait Link: Default {
    /// No connection: the first slot to wait for it connects it.
    fn closed(&self) -> bool;
    /// Connecting or shaking hands: what must be done by the connection's deadline.
    fn setting_up(&self) -> bool;
    /// Set up, and able to take streams.
    fn ready(&self) -> bool;
    /// The server said GOAWAY and every stream it kept has ended.
    fn drained(&self) -> bool;
    /// Resets the stream a slot keeps as `stream` (its [`Conn::stream`](crate::conn::Conn)); false when there was
    /// none to reset.
    fn cancel(&mut self, stream: u64) -> bool;
    /// Forgets the connection (its socket and session), adding what it counted to `recorder`.
    fn close(&mut self, recorder: &mut Recorder);
}

/// A protocol whose connections carry many slots' streams: what its worker does its own way.
pub(super) trait Protocol: Sized {
    /// One connection's own part.
    type Link: Link;
    /// A request that never varies, encoded once for this protocol.
    type Encoded;
    /// The bit that marks the poll tokens of this protocol's connections (slot tokens never reach it).
    const TOKEN_BIT: usize;

    /// The worker's connections of this protocol, from the worker's two fields (so that its slots stay free to
    /// borrow beside them); `None` when the worker speaks another.
    fn of<'w>(http2: &'w mut Option<Wires>, http3: &'w mut Option<Quics>) -> Option<&'w mut Multiplexed<Self>>;

    /// The request in this protocol's form, when it was encoded once (the load path).
    fn encoded(planned: &Planned) -> Option<&Self::Encoded>;

    /// Opens a stream on `link` for `slot`'s request.
    fn open(
        &mut self,
        link: &mut Self::Link,
        slot: usize,
        request: Outgoing<'_, Self::Encoded>,
        capture: Capture,
    ) -> Opened;

    /// Connects connection `c` (closed) for the slots waiting on it; [`Worker::reopen`] gives its token.
    fn connect(worker: &mut Worker<'_>, c: usize, now: Instant);

    /// Says what the protocol says before a connection the server is done with closes.
    fn say_close(_worker: &mut Worker<'_>, _c: usize, _now: Instant) {}

    /// Writes what connection `c` has queued.
    fn flush(worker: &mut Worker<'_>, c: usize);

    /// Runs connection `c`'s own timers, if the protocol keeps any.
    fn tick(_worker: &mut Worker<'_>, _c: usize, _now: Instant) {}
}

/// A slot's request as its stream sends it.
pub(super) enum Outgoing<'r, E> {
    /// Encoded once for the protocol, with the HTTP/1.1 bytes its body lies in.
    Encoded(&'r E, &'r [u8]),
    /// Rendered for this slot in HTTP/1.1 (scenarios, redirects): the protocol encodes it as it goes.
    Rendered(&'r [u8]),
}

/// What came of opening a stream.
pub(super) enum Opened {
    /// The stream, as a slot keeps it ([`Conn::stream`](crate::conn::Conn): 0 is none).
    Stream(u64),
    /// The server allows no more streams for now: the slot waits on.
    Full,
    /// The request cannot be said in the protocol (never with requests shootout rendered): it fails.
    Unsendable,
}

/// One connection and the slots waiting for its streams.
pub(super) struct Carrier<L> {
    /// The protocol's own part.
    pub(super) link: L,
    /// Counts the connections this one has been, so that an event for one gone is known.
    pub(super) generation: u32,
    /// Slots waiting for a stream, oldest first.
    pub(super) waiting: VecDeque<usize>,
    /// When setting up (or its present step) started.
    pub(super) started: Instant,
    /// When setting up must be done.
    pub(super) deadline: Instant,
    /// The connection may have something to send.
    pub(super) dirty: bool,
    /// Wait before the next connect after a failed one.
    pub(super) backoff: Duration,
}

impl<L: Link> Carrier<L> {
    fn new(now: Instant) -> Carrier<L> {
        Carrier {
            link: L::default(),
            generation: 0,
            waiting: VecDeque::new(),
            started: now,
            deadline: now,
            dirty: false,
            backoff: MIN_BACKOFF,
        }
    }

    /// Forgets the connection (see [`Link::close`]): an event still on its way for it is passed over.
    pub(super) fn close(&mut self, recorder: &mut Recorder) {
        self.link.close(recorder);
        self.generation = self.generation.wrapping_add(1);
        self.dirty = false;
    }
}

/// A worker's connections of one protocol, each carrying the streams of `streams` slots.
pub(super) struct Multiplexed<P: Protocol> {
    /// The protocol's part that is the worker's, not one connection's.
    pub(super) protocol: P,
    pub(super) carriers: Vec<Carrier<P::Link>>,
    /// Slots per connection.
    pub(super) streams: usize,
    /// The slots a broken connection fails, gathered before failing them (reused).
    lost: Vec<usize>,
}

impl<P: Protocol> std::fmt::Debug for Multiplexed<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Multiplexed")
            .field("connections", &self.carriers.len())
            .field("streams", &self.streams)
            .finish()
    }
}

impl<P: Protocol> Multiplexed<P> {
    /// No connections yet; each carries `streams` slots.
    pub(super) fn new(protocol: P, streams: usize) -> Multiplexed<P> {
        Multiplexed { protocol, carriers: Vec::new(), streams: streams.max(1), lost: Vec::new() }
    }

    /// The connection slot `slot` rides.
    pub(super) fn carrier(&self, slot: usize) -> usize {
        slot / self.streams
    }
}

/// The connection of protocol `P` a poll token's index names, if it names one.
pub(super) fn carrier_of<P: Protocol>(index: usize) -> Option<usize> {
    (index & P::TOKEN_BIT != 0).then_some(index & !P::TOKEN_BIT)
}

impl Worker<'_> {
    /// The worker's connections of protocol `P`, which it speaks.
    pub(super) fn multiplexed<P: Protocol>(&mut self) -> &mut Multiplexed<P> {
        P::of(&mut self.http2, &mut self.http3).expect("a worker of the protocol it is asked about")
    }

    /// Slot `i` has a request to send: it waits on its connection, which connects if it must or opens a stream.
    pub(super) fn dispatch_stream<P: Protocol>(&mut self, i: usize, now: Instant) {
        let multiplexed = self.multiplexed::<P>();
        let c = multiplexed.carrier(i);
        while multiplexed.carriers.len() <= c {
            multiplexed.carriers.push(Carrier::new(now));
        }
        let carrier = &mut multiplexed.carriers[c];
        carrier.waiting.push_back(i);
        let closed = carrier.link.closed();
        self.conns[i].phase = Phase::Connecting;
        if closed {
            P::connect(self, c, now);
        } else {
            self.open_streams::<P>(c, now);
        }
    }

    /// Connection `c` starts anew: the one it was is forgotten, its setting up is timed from now, and it gets
    /// the poll token its new socket is registered with.
    pub(super) fn reopen<P: Protocol>(&mut self, c: usize, now: Instant) -> mio::Token {
        let timeout = self.shared.connect_timeout;
        let Worker { http2, http3, tally, .. } = self;
        let carrier = &mut P::of(http2, http3).expect("a worker of the protocol it is asked about").carriers[c];
        carrier.close(&mut tally.recorder);
        carrier.started = Instant::now(); // its own start: `now` may be a loop turn's, read before other work
        carrier.deadline = now + timeout;
        mio::Token(((carrier.generation as usize) << 32) | c | P::TOKEN_BIT)
    }

    /// Connection `c` has taken in what arrived: when the server said GOAWAY and no stream it kept is left, it
    /// is done (false); otherwise its waiting slots get the streams now free (true).
    pub(super) fn after_events<P: Protocol>(&mut self, c: usize, now: Instant) -> bool {
        if self.multiplexed::<P>().carriers[c].link.drained() {
            self.retire::<P>(c, now);
            return false;
        }
        self.open_streams::<P>(c, now);
        true
    }

    /// The server said GOAWAY and every stream it kept has ended (answered, reset, or given up by the client): the
    /// connection is done, counted as closed by the server, and what waits goes on a new one.
    fn retire<P: Protocol>(&mut self, c: usize, now: Instant) {
        if now >= self.shared.measure_start {
            self.tally.recorder.closed_by_server();
        }
        P::say_close(self, c, now);
        let Worker { http2, http3, tally, .. } = self;
        let carrier = &mut P::of(http2, http3).expect("a worker of the protocol it is asked about").carriers[c];
        carrier.close(&mut tally.recorder);
        if !carrier.waiting.is_empty() {
            P::connect(self, c, now);
        }
    }

    /// The server closed connection `c` without an error (QUIC's CONNECTION_CLOSE with no error code), as an
    /// HTTP/1.1 server closes after an answer: it counts as closed by the server, the requests it left unanswered
    /// fail as closed, and the slots still waiting for a stream go on a new connection.
    pub(super) fn closed_cleanly<P: Protocol>(&mut self, c: usize, now: Instant) {
        if now >= self.shared.measure_start {
            self.tally.recorder.closed_by_server();
        }
        let Worker { http2, http3, tally, .. } = self;
        let multiplexed = P::of(http2, http3).expect("a worker of the protocol it is asked about");
        let streams = multiplexed.streams;
        multiplexed.carriers[c].close(&mut tally.recorder);
        for i in c * streams..((c + 1) * streams).min(self.conns.len()) {
            if matches!(self.conns[i].phase, Phase::Reading | Phase::Writing) {
                self.conns[i].stream = 0; // gone with its connection: nothing to reset
                self.fail(i, ErrorKind::Closed, now);
            }
        }
        let carrier = &self.multiplexed::<P>().carriers[c];
        if carrier.link.closed() && !carrier.waiting.is_empty() {
            P::connect(self, c, now);
        }
    }

    /// Opens a stream for every slot waiting on connection `c`, while the server allows.
    pub(super) fn open_streams<P: Protocol>(&mut self, c: usize, now: Instant) {
        let workload = &*self.shared.workload;
        let records_lag = self.pacer.records_send_lag();
        let Worker { http2, http3, conns, tally, .. } = self;
        let multiplexed = P::of(http2, http3).expect("a worker of the protocol it is asked about");
        let Multiplexed { protocol, carriers, lost, .. } = multiplexed;
        let carrier = &mut carriers[c];
        if !carrier.link.ready() {
            return;
        }
        while let Some(&i) = carrier.waiting.front() {
            let conn = &conns[i];
            let planned = &workload.requests[conn.request];
            let capture = workload.capture(conn.request);
            let request = match (P::encoded(planned), &planned.encoded) {
                (Some(request), Some(bytes)) if conn.user.hop.is_none() => Outgoing::Encoded(request, bytes),
                _ => Outgoing::Rendered(&conn.out),
            };
            let stream = match protocol.open(&mut carrier.link, i, request, capture) {
                Opened::Stream(stream) => stream,
                Opened::Full => break,
                Opened::Unsendable => {
                    carrier.waiting.pop_front();
                    lost.push(i); // failed below
                    continue;
                }
            };
            carrier.waiting.pop_front();
            let conn = &mut conns[i];
            conn.stream = stream;
            conn.phase = Phase::Reading;
            conn.sent_at = now;
            tally.written(conn.counted, records_lag, conn.due, now);
            carrier.dirty = true;
        }
        carrier.waiting.iter().for_each(|&i| conns[i].phase = Phase::Queued);
        while let Some(i) = self.multiplexed::<P>().lost.pop() {
            self.conns[i].phase = Phase::Writing;
            self.fail(i, ErrorKind::Malformed, now);
        }
    }

    /// Slot `i` gives up its request (a timeout, or it failed, and is counted already): its stream is reset, or it
    /// leaves the queue. When it was the last stream a GOAWAY left on its connection, the connection is done.
    pub(super) fn release_stream<P: Protocol>(&mut self, i: usize, now: Instant) {
        let phase = self.conns[i].phase;
        let stream = std::mem::take(&mut self.conns[i].stream);
        let multiplexed = self.multiplexed::<P>();
        let c = multiplexed.carrier(i);
        let Some(carrier) = multiplexed.carriers.get_mut(c) else { return };
        match phase {
            Phase::Reading => {
                if !carrier.link.cancel(stream) {
                    return;
                }
                carrier.dirty = true;
                if carrier.link.drained() {
                    // Out of the connection's slots before it goes, so that a failed reconnect does not count it
                    // again.
                    self.conns[i].phase = Phase::Idle;
                    self.retire::<P>(c, now);
                }
            }
            Phase::Connecting | Phase::Queued => carrier.waiting.retain(|&s| s != i),
            _ => {}
        }
    }

    /// Connection `c` broke with `kind`: every request on it or waiting for it fails (connect failures pause the
    /// slots before they try again, and double the connection's next pause), and it is closed.
    pub(super) fn break_carrier<P: Protocol>(&mut self, c: usize, kind: ErrorKind, now: Instant) {
        let Worker { http2, http3, tally, .. } = self;
        let multiplexed = P::of(http2, http3).expect("a worker of the protocol it is asked about");
        let streams = multiplexed.streams;
        let carrier = &mut multiplexed.carriers[c];
        let backoff = carrier.backoff;
        if kind.is_connect() {
            carrier.backoff = (carrier.backoff * 2).min(MAX_BACKOFF);
        }
        carrier.close(&mut tally.recorder);
        carrier.waiting.clear();
        let lost = std::mem::take(&mut multiplexed.lost);
        let lost = self.lose_slots(c * streams..(c + 1) * streams, kind, backoff, lost, now);
        self.multiplexed::<P>().lost = lost;
    }

    /// Sending is over for good: a connection still setting up will carry nothing, so it is closed (an overdriven
    /// server stops getting its handshake); none, when the worker speaks another protocol.
    pub(super) fn close_setting_up<P: Protocol>(&mut self, now: Instant) {
        let Some(multiplexed) = P::of(&mut self.http2, &mut self.http3) else { return };
        for c in 0..multiplexed.carriers.len() {
            if self.multiplexed::<P>().carriers[c].link.setting_up() {
                P::say_close(self, c, now);
                let Worker { http2, http3, tally, .. } = self;
                let carrier = &mut P::of(http2, http3).expect("a worker of the protocol it is asked about").carriers[c];
                carrier.close(&mut tally.recorder);
                carrier.waiting.clear();
            }
        }
    }

    /// Writes what every connection of protocol `P` has queued (none, when the worker speaks another).
    pub(super) fn flush_carriers<P: Protocol>(&mut self) {
        let Some(multiplexed) = P::of(&mut self.http2, &mut self.http3) else { return };
        for c in 0..multiplexed.carriers.len() {
            if self.multiplexed::<P>().carriers[c].dirty {
                P::flush(self, c);
            }
        }
    }

    /// Timers of the connections of protocol `P` (none, when the worker speaks another): setting up past its
    /// deadline breaks a connection; the protocol's own timers run on the others.
    pub(super) fn tick_carriers<P: Protocol>(&mut self, now: Instant) {
        let Some(multiplexed) = P::of(&mut self.http2, &mut self.http3) else { return };
        for c in 0..multiplexed.carriers.len() {
            let carrier = &self.multiplexed::<P>().carriers[c];
            if carrier.link.setting_up() && now >= carrier.deadline {
                self.break_carrier::<P>(c, ErrorKind::ConnectTimeout, now);
            } else {
                P::tick(self, c, now);
            }
        }
    }
}
