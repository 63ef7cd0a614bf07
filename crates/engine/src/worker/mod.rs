//! The worker loop: one thread, its own connections, its own [`Tally`], and its I/O through one `epoll` instance
//! or, for plain HTTP/1.1 where the machine allows it, one io_uring ([`ring`]).
//!
//! Through epoll, each socket is registered once, edge-triggered, for reading and writing, and never re-armed.
//! When a response completes, the next request is written at once in the same turn, so a keep-alive request costs
//! one `write` and one `read` plus a share of `epoll_wait`. A read shorter than the buffer means the socket was
//! drained, so no extra read is spent waiting for `EAGAIN`: the next arrival raises a new edge. Through the ring,
//! the same request is a queued send and an arrival on the connection's standing receive, and the turn's one
//! `io_uring_enter` carries all of them.
//!
//! When requests start is decided by the [`Pacer`] the loop is handed, not by a copy of the loop: the loop asks
//! it which requests are due and what a free connection does next, and the pacer holds the state of its model
//! (the closed model's active users, the open model's queue, idle connections and next due time).
//!
//! The loop knows nothing of what the run is for; it reports per-second intervals and its totals over a channel.
//!
//! A slot is one request in flight at a time. Over HTTP/1.1 ([`http1`]) each slot owns its connection; over
//! HTTP/2 ([`http2`]) and HTTP/3 ([`http3`]) the slots of a connection are its streams, and the connection is
//! shared ([`multiplexed`] is how its streams come and go, the same for both; [`streams`] is what a slot does when
//! its stream ends). Everything else (pacing, periods, users, timeouts, the tally) is the same code for all three.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use mio::event::Event;
use mio::{Events, Poll};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use shootout_model::{ErrorKind, IoBackend};

use crate::conn::{untoken, Conn, Phase, MAX_BACKOFF, MIN_BACKOFF};
use crate::pacer::{self, Pacer, Slot};
use crate::redirect::Next;
use crate::shared::{Part, Shared};
use crate::stakes::Straggler;
use crate::tally::{micros, Report, Reports, Tally};
use crate::timer;
use crate::uring::Ring;

mod http1;
mod http2;
mod http3;
mod multiplexed;
mod ring;
mod streams;

use http2::{Http2, Wires};
use http3::{Http3, Quics};
use multiplexed::{carrier_of, Multiplexed};

/// Size of the read buffer each thread shares among its connections.
const READ_BUFFER: usize = 64 * 1024;
/// How often timers (timeouts, back-offs, the second boundary, the stop flag, the ramp) are checked.
const TICK: Duration = Duration::from_millis(5);
/// How often a search's probe past its window checks whether its stragglers can still change its verdict.
const SETTLED_EVERY: Duration = Duration::from_millis(100);
/// How long in-flight requests may finish after Ctrl-C.
const INTERRUPT_GRACE: Duration = Duration::from_secs(1);
/// How long past its sending time an overdriven run (one that left requests unsent) goes on: such a server is
/// past what it can answer, and its figures say so already. Then what has not gone out never will (it counts as
/// not sent) and what was sent and not answered counts as unanswered, each with its wait as its latency (at
/// least), as after Ctrl-C. Over HTTP/3 an overdriven server's handshakes, slowed by lost packets, were waited for
/// and opened again for requests still due, and its lost packets sent again with a doubling wait: a 2 s load ran
/// 7 to 19 s.
const OVERDRIVEN_DRAIN: Duration = Duration::from_secs(2);

/// Which period of the run a worker is in, and so whether new requests may start and whether they count. (Not
/// to be confused with a [`Stage`](shootout_model::Stage) of a ramp, which moves the level of load.)
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Period {
    /// Sending, not counting.
    Warmup,
    /// Sending and counting.
    Measure,
    /// Past the end: no new requests; in the open model, requests already due still go out.
    Ended,
    /// Ctrl-C, or an overdriven run's drain over ([`OVERDRIVEN_DRAIN`]): nothing new goes out; requests in flight
    /// may finish until the given time.
    Interrupted(Instant),
}

/// One worker thread's loop and state.
struct Worker<'a> {
    shared: &'a Shared,
    poll: Poll,
    conns: Vec<Conn>,
    buffer: Box<[u8]>,
    tally: Tally,
    period: Period,
    pacer: Pacer,
    /// Picks requests and sessions from their mixes, and think times.
    rng: SmallRng,
    /// HTTP/2: the connections the slots' streams share (`None` for HTTP/1.1, where each slot owns one).
    http2: Option<Wires>,
    /// HTTP/3: the QUIC connections the slots' streams share.
    http3: Option<Quics>,
    /// The response of the stream that ended last (HTTP/2, HTTP/3), swapped out of its session while it is read.
    answer: crate::http::stream::Response,
    /// The io_uring instance, when the run does its I/O through io_uring ([`ring`]) rather than epoll.
    ring: Option<Ring>,
    /// When a search's probe past its window next checks its stragglers ([`Worker::check_settled`]).
    next_settled_check: Instant,
    /// When each thinking user's pause ends, soonest first, so that the loop wakes for it to the microsecond
    /// rather than at the next [`TICK`] (a 10 ms think took 15 on average); an entry whose slot has moved on since
    /// is passed over.
    pauses: BinaryHeap<Reverse<(Instant, usize)>>,
}

/// Runs one worker, paced by `pacer`, until its part of the run is done.
pub fn run_worker(shared: &Shared, part: Part, pacer: Pacer, reports: Reports) {
    let now = Instant::now();
    timer::fine_slack();
    let poll = match Poll::new() {
        Ok(poll) => poll,
        Err(e) => {
            let _ = reports.send((part.thread, Report::Failed(e)));
            return;
        }
    };
    let ring = match shared.io {
        IoBackend::IoUring => match Ring::new() {
            Ok(ring) => Some(ring),
            Err(e) => {
                let _ = reports.send((part.thread, Report::Failed(e)));
                return;
            }
        },
        _ => None,
    };
    let named = if shared.workload.has_users() { shared.workload.requests.len() } else { 0 };
    let mut worker = Worker {
        shared,
        poll,
        conns: (0..pacer.first_connections()).map(|_| Conn::new(now)).collect(),
        buffer: vec![0; READ_BUFFER].into_boxed_slice(),
        tally: Tally::new(shared.measure_start, shared.send_until, named, part.thread, reports),
        period: if shared.measure_start > now { Period::Warmup } else { Period::Measure },
        pacer,
        rng: SmallRng::seed_from_u64(part.seed(shared.seed)),
        http2: (shared.streams > 0 && shared.quic.is_none())
            .then(|| Multiplexed::new(Http2::new(shared.tls.is_some()), shared.streams)),
        http3: shared.quic.clone().map(|plan| Multiplexed::new(Http3::new(plan), shared.streams)),
        answer: Default::default(),
        ring,
        next_settled_check: now,
        pauses: BinaryHeap::new(),
    };
    // The run starts once the worker is set up (its poll instance or ring, its buffers): no request is due, and
    // no connect timed, from before.
    worker.run(Instant::now());
    worker.close_quics();
    worker.tally.finish();
}

impl Worker<'_> {
    fn run(&mut self, now: Instant) {
        self.pacer.update(now, &mut self.tally);
        // Each first request falls due when its own connection starts, not when the first one did.
        for i in 0..self.conns.len() {
            self.next_request(i, Instant::now());
        }
        let mut events = Events::with_capacity(1024);
        let mut next_tick = now + TICK;
        loop {
            let now = Instant::now();
            self.start_due(now);
            self.flush_carriers::<Http2>();
            self.flush_carriers::<Http3>();
            if let Err(e) = self.turn(&mut events, now, next_tick) {
                if e.kind() != io::ErrorKind::Interrupted {
                    break;
                }
            }
            self.end_pauses(Instant::now());
            self.flush_carriers::<Http2>();
            self.flush_carriers::<Http3>();
            let now = Instant::now();
            if self.period == Period::Warmup && now >= self.shared.measure_start {
                self.period = Period::Measure;
                self.tally.start_measuring();
            }
            if now >= next_tick {
                next_tick = now + TICK;
                if self.tick(now) {
                    break;
                }
            }
        }
    }

    /// Waits for what happens next (see [`Worker::wait`]) and handles it: readiness events from epoll, or the
    /// completions of the ring's operations.
    fn turn(&mut self, events: &mut Events, now: Instant, next_tick: Instant) -> io::Result<()> {
        let quic_timer = self.http3.as_ref().and_then(Quics::next_timer);
        let pause_end = self.pauses.peek().map(|Reverse((until, _))| *until);
        let due = [self.pacer.next_wake(), quic_timer, pause_end].into_iter().flatten().min();
        let due = due.filter(|&due| due < next_tick);
        if self.ring.is_some() {
            return self.ring_turn(due.unwrap_or(next_tick));
        }
        self.wait(events, now, next_tick, due)?;
        self.tally.clock(Instant::now());
        for event in events.iter() {
            self.on_event(event);
        }
        if quic_timer.is_some_and(|t| t <= Instant::now()) {
            self.tick_carriers::<Http3>(Instant::now());
        }
        Ok(())
    }

    /// Waits for epoll's events until the next tick, or, when a request falls `due` before it (open model), until
    /// that request is due, to the microsecond (see [`timer`]).
    fn wait(&mut self, events: &mut Events, now: Instant, next_tick: Instant, due: Option<Instant>) -> io::Result<()> {
        match due {
            Some(due) => {
                timer::poll_now(&mut self.poll, events)?;
                if events.is_empty() {
                    timer::sleep_until(&self.poll, due)?;
                    timer::poll_now(&mut self.poll, events)?;
                }
                Ok(())
            }
            None => self.poll.poll(events, Some(next_tick.saturating_duration_since(now))),
        }
    }

    /// Slot `i`'s user thinks until `until`.
    fn think(&mut self, i: usize, until: Instant) {
        self.conns[i].phase = Phase::Thinking(until);
        self.pauses.push(Reverse((until, i)));
    }

    /// The users whose pause is over by `now` go on.
    fn end_pauses(&mut self, now: Instant) {
        while let Some(&Reverse((until, i))) = self.pauses.peek().filter(|Reverse((until, _))| *until <= now) {
            self.pauses.pop();
            if self.conns[i].phase == Phase::Thinking(until) {
                self.next_request(i, now);
            }
        }
    }

    /// Timers: period changes, second boundaries, the pacer's clock, timeouts and back-offs. Returns true when
    /// done.
    fn tick(&mut self, now: Instant) -> bool {
        if self.shared.stop.load(Ordering::Relaxed) && !matches!(self.period, Period::Interrupted(_)) {
            self.period = Period::Interrupted(now + INTERRUPT_GRACE);
            self.pacer.interrupt();
        }
        self.check_end(now);
        self.check_overdriven(now);
        if self.period != Period::Warmup {
            self.tally.report_seconds(now);
        }
        if self.check_settled(now) {
            return true;
        }
        self.pacer.update(now, &mut self.tally);
        let mut busy = false;
        for i in 0..self.conns.len() {
            let conn = &self.conns[i];
            match conn.phase {
                Phase::Connecting | Phase::Handshaking if now >= conn.deadline => {
                    self.fail(i, ErrorKind::ConnectTimeout, now)
                }
                Phase::Writing | Phase::Queued | Phase::Reading if now >= conn.deadline => {
                    let stalled = self.http2.as_ref().is_some_and(|h2| h2.stalled(i, conn));
                    self.fail(i, if stalled { ErrorKind::FlowStalled } else { ErrorKind::ReadTimeout }, now)
                }
                Phase::Backoff(until) if now >= until => self.next_request(i, now),
                Phase::Thinking(until) if now >= until || !self.sending() => self.next_request(i, now),
                Phase::Idle if self.pacer.wants(i) => self.next_request(i, now),
                _ => {}
            }
            busy |= !matches!(self.conns[i].phase, Phase::Idle | Phase::Backoff(_) | Phase::Thinking(_));
        }
        self.tick_carriers::<Http2>(now);
        self.tick_carriers::<Http3>(now);
        let finished_sending = match self.period {
            Period::Interrupted(_) => true,
            period => self.pacer.done_sending(period == Period::Ended),
        };
        let out_of_time = matches!(self.period, Period::Interrupted(limit) if now >= limit);
        if out_of_time && busy {
            // Each request still in flight waited this long at least: counted, never dropped.
            for i in 0..self.conns.len() {
                if self.conns[i].phase.in_flight() {
                    self.tally.failed(&self.conns[i], ErrorKind::Unanswered, now);
                }
            }
            self.tally.cut_off(now);
        }
        (finished_sending && !busy) || out_of_time
    }

    /// Moves to the end period once sending time is over. A request due in the warm-up and still unanswered then
    /// waited through the whole window: it counts from here on (held over), with its latency from when it fell due,
    /// so that users a server never answered do not vanish from every figure. A search's probe that answered too
    /// few of the requests due in its window gives up on the rest
    /// ([`Stakes::give_up_below`](crate::stakes::Stakes::give_up_below)).
    fn check_end(&mut self, now: Instant) {
        if !matches!(self.period, Period::Measure | Period::Warmup)
            || self.shared.send_until.is_none_or(|end| now < end)
        {
            return;
        }
        let measured = self.period == Period::Measure;
        self.period = Period::Ended;
        if !measured {
            return;
        }
        for conn in self.conns.iter_mut().filter(|c| !c.counted && c.phase.in_flight()) {
            conn.counted = true;
            self.tally.held_over();
        }
        let least = self.shared.stakes.as_ref().and_then(|stakes| stakes.give_up_below);
        if least.zip(self.tally.answered_share()).is_some_and(|(least, share)| share < least) {
            self.pacer.give_up(now, &mut self.tally);
            self.period = Period::Interrupted(now);
        }
    }

    /// An overdriven run (one that left requests unsent) [`OVERDRIVEN_DRAIN`] past its sending time stops: the
    /// requests waiting for a connection, and those on a connection still connecting, shaking hands or waiting
    /// for a stream, count as not sent; connections still setting up are closed; what is still in flight is cut
    /// off as unanswered by the caller ([`Period::Interrupted`] now). A run to a request count has no such end.
    fn check_overdriven(&mut self, now: Instant) {
        let past_drain = self.shared.send_until.is_some_and(|end| now >= end + OVERDRIVEN_DRAIN);
        if self.period != Period::Ended || !past_drain || self.tally.recorder.errors_of(ErrorKind::NotSent) == 0 {
            return;
        }
        self.period = Period::Interrupted(now);
        self.pacer.give_up(now, &mut self.tally);
        for i in 0..self.conns.len() {
            if matches!(self.conns[i].phase, Phase::Connecting | Phase::Handshaking | Phase::Queued) {
                self.fail(i, ErrorKind::NotSent, now);
            }
        }
        self.close_setting_up::<Http2>(now);
        self.close_setting_up::<Http3>(now);
    }

    /// A search's probe past its window, with nothing left to send: once its objectives hold whatever its
    /// requests still in flight do ([`Stakes::settled`](crate::stakes::Stakes::settled)), it stops waiting for
    /// them (checked every [`SETTLED_EVERY`]) and leaves them out. Returns true when it did: the worker is done.
    fn check_settled(&mut self, now: Instant) -> bool {
        let Some(stakes) = self.shared.stakes.as_ref().filter(|s| !s.objectives.is_empty()) else { return false };
        if self.period != Period::Ended || now < self.next_settled_check || !self.pacer.done_sending(true) {
            return false;
        }
        self.next_settled_check = now + SETTLED_EVERY;
        let timeout = self.shared.timeout;
        // Past the window every request in flight is counted (those due in the warm-up are held over).
        let straggling = |c: &&Conn| c.counted && c.phase.in_flight();
        let stragglers: Vec<Straggler> = self
            .conns
            .iter()
            .filter(straggling)
            .map(|c| {
                // A connect's deadline may pass the request's own (its due time and the timeout); then it fails
                // at once when connected. A tick more for the loop to see it.
                let deadline = c.deadline.max(c.due + timeout) + TICK;
                Straggler { waited_us: micros(now - c.due), at_most_us: micros(deadline - c.due) }
            })
            .collect();
        if stragglers.is_empty() || !stakes.settled(&self.tally.recorder, &stragglers) {
            return false;
        }
        for conn in self.conns.iter().filter(straggling) {
            self.tally.left_out(conn, now);
        }
        true
    }

    /// Starts every request the pacer has due by now (open model), on the connection it chooses.
    fn start_due(&mut self, now: Instant) {
        if matches!(self.period, Period::Interrupted(_)) {
            return;
        }
        while let Some((due, slot)) = self.pacer.next_due(now, self.conns.len(), &mut self.tally) {
            let i = match slot {
                Slot::Idle(i) => i,
                Slot::New => {
                    self.conns.push(Conn::new(now));
                    self.conns.len() - 1
                }
            };
            self.start(i, now, due);
        }
    }

    /// True while new requests may still start (for scenario users, also their next steps).
    fn sending(&self) -> bool {
        matches!(self.period, Period::Warmup | Period::Measure)
    }

    /// Decides what connection `i` does next, now that it is free.
    fn next_request(&mut self, i: usize, now: Instant) {
        self.check_end(now);
        if self.conns[i].user.step > 0 {
            return self.next_step(i, now);
        }
        let next = match self.period {
            Period::Interrupted(_) => pacer::Next::Wait,
            period => self.pacer.on_free(i, now, period == Period::Ended, &mut self.tally),
        };
        match next {
            pacer::Next::Send(due) => self.start(i, now, due),
            pacer::Next::Wait => self.conns[i].phase = Phase::Idle,
            pacer::Next::Leave => {
                self.close(i);
                self.conns[i].phase = Phase::Idle;
            }
        }
    }

    /// A scenario user in the middle of its session goes on with its next step, unless sending is over.
    fn next_step(&mut self, i: usize, now: Instant) {
        if self.sending() && self.pacer.allows_step(now) {
            self.start(i, now, now);
        } else {
            self.end_session(i, now);
        }
    }

    /// The user of connection `i` is done (or gave up): a new user takes its place, on a new connection.
    fn end_session(&mut self, i: usize, now: Instant) {
        self.replace_user(i);
        self.next_request(i, now);
    }

    /// A new user takes connection `i`'s place, on a new connection.
    fn replace_user(&mut self, i: usize) {
        self.conns[i].user = self.shared.workload.new_user();
        self.close(i);
    }

    /// Starts a request that fell due at `due` on connection `i`: the next step of its user's session, or a
    /// request from the mix.
    fn start(&mut self, i: usize, now: Instant, due: Instant) {
        let workload = &*self.shared.workload;
        let conn = &mut self.conns[i];
        if conn.user.values.len() != workload.initial.len() {
            conn.user = workload.new_user(); // a connection's first user
        }
        let hop = conn.user.hop.is_some();
        if hop {
            // A redirect's hop: the same request again, somewhere else.
        } else if !workload.sessions.is_empty() {
            if conn.user.step == 0 {
                conn.user.session = workload.pick_session(self.rng.random());
            }
            conn.request = workload.step_request(&conn.user);
        } else if workload.requests.len() > 1 && self.shared.sequential {
            conn.request = conn.user.cursor % workload.requests.len();
            conn.user.cursor += 1;
        } else if workload.requests.len() > 1 {
            conn.request = workload.pick_request(self.rng.random());
        }
        // A redirect's hop goes on counting as its request did (a held-over one too).
        conn.counted = due >= self.shared.measure_start || (hop && conn.counted);
        conn.due = due;
        conn.deadline = due + self.shared.timeout;
        if workload.has_users() || hop {
            if let Some(ring) = &mut self.ring {
                ring.submit_pending(); // a queued send may still point at the last request's bytes
            }
            let rendered = match &conn.user.hop {
                Some(hop) => {
                    workload.render_hop(conn.request, &conn.user, hop, &mut conn.out);
                    Ok(())
                }
                None => workload.render(conn.request, &conn.user, &mut conn.out),
            };
            if let Err(host) = rendered {
                // Its URL, taken from a response, is off the run's server: not sent. The user gives up, and the
                // next one starts after a pause (it may well meet the same value).
                self.tally.refused(&self.conns[i], ErrorKind::OffOrigin, Some(&host), now);
                let conn = &mut self.conns[i];
                conn.user = workload.new_user();
                conn.phase = Phase::Backoff(now + MIN_BACKOFF);
                return;
            }
        }
        if self.http2.is_some() {
            self.dispatch_stream::<Http2>(i, now);
        } else if self.http3.is_some() {
            self.dispatch_stream::<Http3>(i, now);
        } else if conn.socket.is_some() {
            self.send(i, now);
        } else {
            self.connect(i, now);
        }
    }

    fn on_event(&mut self, event: &Event) {
        let (i, generation) = untoken(event.token());
        if let Some(wire) = carrier_of::<Http2>(i) {
            return self.on_wire_event(wire, generation, event);
        }
        if let Some(quic) = carrier_of::<Http3>(i) {
            return self.on_quic_event(quic, generation, event);
        }
        let Some(conn) = self.conns.get(i) else { return };
        if conn.generation != generation {
            return; // an event for a socket already replaced
        }
        match conn.phase {
            Phase::Connecting => self.on_connect(i),
            Phase::Handshaking => self.handshake(i),
            Phase::Writing if event.is_writable() || event.is_error() => self.write(i),
            Phase::Reading if event.is_readable() || event.is_read_closed() || event.is_error() => {
                self.read(i, event.is_read_closed())
            }
            Phase::Idle if event.is_read_closed() || event.is_error() => {
                self.close(i);
                self.tally.recorder.closed_by_server();
            }
            _ => {}
        }
    }

    /// Slot `i` has its response (recorded already; `passed` its checks): its user pauses, goes on with its
    /// session, or the slot starts its next request at once.
    fn after_response(&mut self, i: usize, passed: bool, now: Instant) {
        let workload = &*self.shared.workload;
        let conn = &mut self.conns[i];
        if workload.sessions.is_empty() {
            return match self.shared.delay {
                Some(most) => {
                    let pause = most.mul_f64(self.rng.random());
                    self.think(i, now + pause)
                }
                None => self.next_request(i, now),
            };
        }
        if !passed {
            return self.end_session(i, now);
        }
        match workload.after_step(&mut conn.user, self.rng.random()) {
            (think, true) if think.is_zero() => self.next_request(i, now),
            (think, true) => self.think(i, now + think),
            // A closed model's user pauses after its session's last step too, before its next session; an open
            // model's leaves, its slot free for the next arrival.
            (think, false) if think.is_zero() || matches!(self.pacer, Pacer::Open(_)) => self.end_session(i, now),
            (think, false) => {
                self.replace_user(i);
                self.think(i, now + think);
            }
        }
    }

    /// Slot `i`'s response (recorded already) was a redirect, its cookies taken: the user follows the hop at
    /// once, on the same connection, unless sending is over; or the hop was refused, which counts as a failed
    /// request and ends a session as a failed check does.
    fn redirected(&mut self, i: usize, next: Next, now: Instant) {
        self.conns[i].user.hop = None;
        match next {
            Next::Follow(hop) => {
                self.tally.redirected(&self.conns[i]);
                if self.sending() {
                    self.conns[i].user.hop = Some(hop);
                    self.start(i, now, now);
                } else if self.shared.workload.sessions.is_empty() {
                    self.next_request(i, now);
                } else {
                    self.end_session(i, now);
                }
            }
            Next::Refused(kind, host) => {
                self.tally.refused(&self.conns[i], kind, host.as_deref(), now);
                self.after_response(i, false, now);
            }
            Next::Done => self.after_response(i, true, now),
        }
    }

    /// Closes connection `i`'s socket (HTTP/1.1); on the ring, by the ring's own operations (see
    /// [`Ring::release`](crate::uring::Ring::release)).
    fn close(&mut self, i: usize) {
        let conn = &mut self.conns[i];
        if let Some(ring) = self.ring.as_mut() {
            if let Some(socket) = conn.socket.take() {
                ring.release(socket, i, conn.generation);
            }
        }
        conn.close();
    }

    /// A request failed: record it, drop the connection (HTTP/2: the stream), and go on (after a pause if
    /// connecting failed).
    fn fail(&mut self, i: usize, kind: ErrorKind, now: Instant) {
        self.tally.failed(&self.conns[i], kind, now);
        if self.http2.is_some() {
            self.release_stream::<Http2>(i, now);
        }
        if self.http3.is_some() {
            self.release_stream::<Http3>(i, now);
        }
        self.close(i);
        let conn = &mut self.conns[i];
        conn.user.hop = None; // a redirect being followed ends with its failed hop
        if kind.is_connect() {
            conn.phase = Phase::Backoff(now + conn.backoff);
            conn.backoff = (conn.backoff * 2).min(MAX_BACKOFF);
        } else if self.shared.workload.sessions.is_empty() {
            self.next_request(i, now);
        } else {
            self.end_session(i, now); // later steps depend on this one: the user gives up
        }
    }
}
