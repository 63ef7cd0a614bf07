//! The worker loop: one thread, one `epoll` instance, its own connections, its own [`Recorder`].
//!
//! Each socket is registered once, edge-triggered, for reading and writing, and never re-armed. When a response
//! completes, the next request is written at once in the same turn, so a keep-alive request costs one `write`
//! and one `read` plus a share of `epoll_wait`. A read shorter than the buffer means the socket was drained, so no
//! extra read is spent waiting for `EAGAIN`: the next arrival raises a new edge.
//!
//! The loop knows nothing of what the run is for; it is handed its connection count, its share of the request
//! quota and the run's clock, and reports per-second [`Interval`]s and its final [`Recorder`] over a channel.

use std::io::{self, Read, Write};
use std::sync::atomic::Ordering;
use std::sync::mpsc::Sender;
use std::time::{Duration, Instant};

use mio::event::Event;
use mio::net::TcpStream;
use mio::{Events, Interest, Poll};
use shootout_metrics::{Interval, Recorder};
use shootout_model::ErrorKind;

use crate::conn::{connect_error, transfer_error, untoken, Conn, Phase, MAX_BACKOFF, MIN_BACKOFF};
use crate::http::response::Progress;
use crate::run::Shared;

/// Size of the read buffer each thread shares among its connections.
const READ_BUFFER: usize = 64 * 1024;
/// How often timers (timeouts, back-offs, the second boundary, the stop flag) are checked.
const TICK: Duration = Duration::from_millis(5);
/// How long in-flight requests may finish after Ctrl-C.
const INTERRUPT_GRACE: Duration = Duration::from_secs(1);

/// What a worker sends to the coordinator.
pub enum Report {
    /// One second of measurements.
    Interval(Interval),
    /// The worker is done: its totals and when its last request ended.
    Done(Box<Recorder>, Instant),
    /// The worker could not start (no poll instance).
    Failed(io::Error),
}

/// Whether new requests may start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// Sending, not counting.
    Warmup,
    /// Sending and counting.
    Measure,
    /// Not sending; waiting for in-flight requests until the given time at the latest.
    Drain(Option<Instant>),
}

/// One worker thread's loop and state.
struct Worker<'a> {
    shared: &'a Shared,
    poll: Poll,
    conns: Vec<Conn>,
    buffer: Box<[u8]>,
    recorder: Recorder,
    stage: Stage,
    quota: Option<u64>,
    next_second: Instant,
    last_end: Instant,
    reports: Sender<Report>,
}

/// Runs one worker with `connections` connections and an optional share of the request quota.
pub fn run_worker(shared: &Shared, connections: usize, quota: Option<u64>, reports: Sender<Report>) {
    let poll = match Poll::new() {
        Ok(poll) => poll,
        Err(e) => {
            let _ = reports.send(Report::Failed(e));
            return;
        }
    };
    let now = Instant::now();
    let mut worker = Worker {
        shared,
        poll,
        conns: (0..connections).map(|_| Conn::new(now)).collect(),
        buffer: vec![0; READ_BUFFER].into_boxed_slice(),
        recorder: Recorder::new(),
        stage: if shared.measure_start > now { Stage::Warmup } else { Stage::Measure },
        quota,
        next_second: shared.measure_start + Duration::from_secs(1),
        last_end: shared.measure_start,
        reports,
    };
    worker.run(now);
}

impl Worker<'_> {
    fn run(&mut self, now: Instant) {
        for i in 0..self.conns.len() {
            self.begin(i, now);
        }
        let mut events = Events::with_capacity(1024);
        let mut next_tick = now + TICK;
        loop {
            let now = Instant::now();
            let wait = next_tick.saturating_duration_since(now);
            if let Err(e) = self.poll.poll(&mut events, Some(wait)) {
                if e.kind() != io::ErrorKind::Interrupted {
                    break;
                }
            }
            for event in events.iter() {
                self.on_event(event);
            }
            let now = Instant::now();
            if now >= next_tick {
                next_tick = now + TICK;
                if self.tick(now) {
                    break;
                }
            }
        }
        let final_interval = self.recorder.take_interval(0);
        if final_interval.requests > 0 {
            let _ = self.reports.send(Report::Interval(final_interval));
        }
        let recorder = std::mem::take(&mut self.recorder);
        let _ = self.reports.send(Report::Done(Box::new(recorder), self.last_end));
    }

    /// Timers: stage changes, second boundaries, timeouts and back-offs. Returns true when the worker is done.
    fn tick(&mut self, now: Instant) -> bool {
        if self.stage == Stage::Warmup && now >= self.shared.measure_start {
            self.stage = Stage::Measure;
            self.recorder.reset_after_warmup();
        }
        if self.shared.stop.load(Ordering::Relaxed) && !matches!(self.stage, Stage::Drain(Some(_))) {
            self.stage = Stage::Drain(Some(now + INTERRUPT_GRACE));
        }
        if self.stage == Stage::Measure && self.shared.send_until.is_some_and(|end| now >= end) {
            self.stage = Stage::Drain(None);
        }
        while now >= self.next_second && self.stage != Stage::Warmup {
            let next = self.recorder.current_second() + 1;
            let _ = self.reports.send(Report::Interval(self.recorder.take_interval(next)));
            self.next_second += Duration::from_secs(1);
        }
        let mut busy = false;
        for i in 0..self.conns.len() {
            let conn = &self.conns[i];
            match conn.phase {
                Phase::Connecting if now >= conn.deadline => self.fail(i, ErrorKind::ConnectTimeout, now),
                Phase::Writing | Phase::Reading if now >= conn.deadline => self.fail(i, ErrorKind::ReadTimeout, now),
                Phase::Backoff(until) if now >= until => self.begin(i, now),
                _ => {}
            }
            busy |= !matches!(self.conns[i].phase, Phase::Idle | Phase::Backoff(_));
        }
        let out_of_time = matches!(self.stage, Stage::Drain(Some(limit)) if now >= limit);
        if out_of_time && busy {
            self.last_end = now;
        }
        !busy && (matches!(self.stage, Stage::Drain(_)) || self.quota == Some(0)) || out_of_time
    }

    /// Starts the next request on slot `i`, if one may start now.
    fn begin(&mut self, i: usize, now: Instant) {
        if self.stage == Stage::Measure && self.shared.send_until.is_some_and(|end| now >= end) {
            self.stage = Stage::Drain(None);
        }
        let counted = match self.stage {
            Stage::Drain(_) => None,
            Stage::Warmup => Some(false),
            Stage::Measure => match &mut self.quota {
                Some(0) => None,
                Some(left) => {
                    *left -= 1;
                    Some(true)
                }
                None => Some(true),
            },
        };
        let conn = &mut self.conns[i];
        let Some(counted) = counted else {
            conn.phase = Phase::Idle;
            return;
        };
        conn.counted = counted;
        conn.due = now;
        conn.deadline = now + self.shared.timeout;
        if conn.socket.is_some() {
            self.write(i);
        } else {
            self.connect(i, now);
        }
    }

    fn connect(&mut self, i: usize, now: Instant) {
        let conn = &mut self.conns[i];
        conn.close();
        conn.connect_started = now;
        let mut socket = match TcpStream::connect(self.shared.address) {
            Ok(socket) => socket,
            Err(e) => return self.fail(i, connect_error(&e), now),
        };
        let token = conn.token(i);
        if let Err(e) = self.poll.registry().register(&mut socket, token, Interest::READABLE | Interest::WRITABLE) {
            return self.fail(i, connect_error(&e), now);
        }
        conn.socket = Some(socket);
        conn.phase = Phase::Connecting;
        conn.deadline = now + self.shared.connect_timeout;
    }

    fn on_event(&mut self, event: &Event) {
        let (i, generation) = untoken(event.token());
        let Some(conn) = self.conns.get(i) else { return };
        if conn.generation != generation {
            return; // an event for a socket already replaced
        }
        match conn.phase {
            Phase::Connecting => self.on_connect(i),
            Phase::Writing if event.is_writable() || event.is_error() => self.write(i),
            Phase::Reading if event.is_readable() || event.is_read_closed() || event.is_error() => {
                self.read(i, event.is_read_closed())
            }
            Phase::Idle if event.is_read_closed() || event.is_error() => {
                self.conns[i].close();
                self.recorder.closed_by_server();
            }
            _ => {}
        }
    }

    fn on_connect(&mut self, i: usize) {
        let conn = &mut self.conns[i];
        let Some(socket) = conn.socket.as_ref() else { return };
        let now = Instant::now();
        match socket.take_error() {
            Ok(Some(e)) | Err(e) => return self.fail(i, connect_error(&e), now),
            Ok(None) => {}
        }
        match socket.peer_addr() {
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::NotConnected => return, // not yet: wait for the next edge
            Err(e) => return self.fail(i, connect_error(&e), now),
        }
        let _ = socket.set_nodelay(true);
        conn.backoff = MIN_BACKOFF;
        if conn.counted {
            self.recorder.connected(micros(now - conn.connect_started));
        }
        conn.deadline = conn.due + self.shared.timeout;
        self.write(i);
    }

    fn write(&mut self, i: usize) {
        let request = &self.shared.request[..];
        let conn = &mut self.conns[i];
        let Some(socket) = conn.socket.as_mut() else { return };
        if conn.phase != Phase::Writing {
            conn.phase = Phase::Writing;
            conn.written = 0;
        }
        while conn.written < request.len() {
            match socket.write(&request[conn.written..]) {
                Ok(n) => {
                    conn.written += n;
                    if conn.counted {
                        self.recorder.bytes_sent += n as u64;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return self.fail(i, transfer_error(&e), Instant::now()),
            }
        }
        conn.phase = Phase::Reading;
        conn.parser.reset(self.shared.head_request);
    }

    /// Reads what has arrived. A read shorter than the buffer drained the socket, so the next arrival raises a new
    /// edge; but when the peer has also closed (`read_closed`), that edge was already spent, so read on to the end.
    fn read(&mut self, i: usize, read_closed: bool) {
        loop {
            let conn = &mut self.conns[i];
            let Some(socket) = conn.socket.as_mut() else { return };
            let n = match socket.read(&mut self.buffer) {
                Ok(0) => return self.on_eof(i),
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return self.fail(i, transfer_error(&e), Instant::now()),
            };
            if conn.counted {
                self.recorder.bytes_received += n as u64;
            }
            match conn.parser.feed(&self.buffer[..n]) {
                Ok(Progress::Complete { used }) if used == n => return self.complete(i),
                Ok(Progress::Complete { .. }) | Err(_) => return self.fail(i, ErrorKind::Malformed, Instant::now()),
                Ok(Progress::NeedMore) if n < self.buffer.len() && !read_closed => return,
                Ok(Progress::NeedMore) => {}
            }
        }
    }

    /// The server closed the connection: that ends a body delimited by the close, and fails anything else.
    fn on_eof(&mut self, i: usize) {
        match self.conns[i].parser.finish_at_eof() {
            Ok(()) => self.complete(i),
            Err(_) => self.fail(i, ErrorKind::Closed, Instant::now()),
        }
    }

    /// A response arrived in full: record it and start the next request at once.
    fn complete(&mut self, i: usize) {
        let now = Instant::now();
        let conn = &mut self.conns[i];
        if conn.counted {
            self.recorder.response(conn.parser.status(), micros(now - conn.due));
            self.last_end = now;
        } else {
            self.recorder.warmup_requests += 1;
        }
        conn.served += 1;
        if conn.parser.closes_connection() || !self.shared.keepalive {
            if self.shared.keepalive && conn.counted {
                self.recorder.closed_by_server();
            }
            conn.close();
        }
        self.begin(i, now);
    }

    /// A request failed: record it, drop the connection, and go on (after a pause if connecting failed).
    fn fail(&mut self, i: usize, kind: ErrorKind, now: Instant) {
        let conn = &mut self.conns[i];
        let waited = matches!(kind, ErrorKind::ReadTimeout).then(|| micros(now - conn.due));
        if conn.counted {
            self.recorder.failure(kind, waited);
            self.last_end = now;
        } else {
            self.recorder.warmup_requests += 1;
        }
        conn.close();
        if kind.is_connect() {
            conn.phase = Phase::Backoff(now + conn.backoff);
            conn.backoff = (conn.backoff * 2).min(MAX_BACKOFF);
        } else {
            self.begin(i, now);
        }
    }
}

fn micros(duration: Duration) -> u64 {
    duration.as_micros().min(u128::from(u64::MAX)) as u64
}
