//! HTTP/1.1 on the worker's connections: each slot owns its socket and has one request in flight. Connect, TLS
//! handshake, write the request, read the response through the slot's [`ResponseParser`]; when it completes,
//! the loop's `answered` decides what comes next. On the io_uring ([`super::ring`]) the connect is a queued poll,
//! the write a queued send, and the bytes come from the connection's standing receive into the same [`feed`].
//!
//! [`ResponseParser`]: crate::http::response::ResponseParser

use std::io;
use std::os::fd::AsRawFd;
use std::time::Instant;

use mio::net::TcpStream;
use mio::Interest;
use shootout_model::ErrorKind;

use super::Worker;
use crate::conn::{connect_error, transfer_error, Conn, Phase, MIN_BACKOFF};
use crate::http::response::{Progress, MAX_CAPTURE};
use crate::redirect::Next;
use crate::tally::{micros, Tally};
use crate::transport;
use crate::workload::Body;

impl Worker<'_> {
    pub(super) fn connect(&mut self, i: usize, now: Instant) {
        self.close(i);
        let conn = &mut self.conns[i];
        // Its own start, to the connect system call: `now` may be a loop turn's, read before other work.
        conn.connect_started = Instant::now();
        let mut socket = match TcpStream::connect(self.shared.address) {
            Ok(socket) => socket,
            Err(e) => return self.fail(i, connect_error(&e), now),
        };
        if let Some(ring) = self.ring.as_mut() {
            ring.poll_connected(socket.as_raw_fd(), i, conn.generation);
        } else {
            let token = conn.token(i);
            if let Err(e) = self.poll.registry().register(&mut socket, token, Interest::READABLE | Interest::WRITABLE) {
                return self.fail(i, connect_error(&e), now);
            }
        }
        conn.socket = Some(socket);
        conn.phase = Phase::Connecting;
        conn.deadline = now + self.shared.connect_timeout;
    }

    /// Connection `i`'s socket became writable (epoll), or the ring's poll for it ended with an error mask: asks
    /// the socket whether its connect succeeded, failed, or is still going (then waits again).
    pub(super) fn on_connect(&mut self, i: usize) {
        let conn = &mut self.conns[i];
        let Some(socket) = conn.socket.as_ref() else { return };
        let now = Instant::now();
        match socket.take_error() {
            Ok(Some(e)) | Err(e) => return self.fail(i, connect_error(&e), now),
            Ok(None) => {}
        }
        match socket.peer_addr() {
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::NotConnected => {
                // Not yet: wait for the next edge (or poll again).
                if let Some(ring) = self.ring.as_mut() {
                    ring.poll_connected(socket.as_raw_fd(), i, conn.generation);
                }
                return;
            }
            Err(e) => return self.fail(i, connect_error(&e), now),
        }
        self.connected(i, now);
    }

    /// Connection `i`'s connect has succeeded: receive on it, then shake hands (TLS) or send its request.
    pub(super) fn connected(&mut self, i: usize, now: Instant) {
        let conn = &mut self.conns[i];
        let Some(socket) = conn.socket.as_ref() else { return };
        let fd = socket.as_raw_fd();
        let _ = socket.set_nodelay(true);
        if let Some(ring) = self.ring.as_mut() {
            ring.receive(fd, i, conn.generation);
        }
        conn.backoff = MIN_BACKOFF;
        if conn.counted {
            self.tally.recorder.connected(micros(now - conn.connect_started));
        }
        if let Some(tls) = &self.shared.tls {
            match rustls::ClientConnection::new(tls.config.clone(), tls.server_name.clone()) {
                Ok(session) => conn.tls = Some(Box::new(session)),
                Err(_) => return self.fail(i, ErrorKind::Tls, now),
            }
            conn.phase = Phase::Handshaking;
            conn.connect_started = now;
            conn.deadline = now + self.shared.connect_timeout;
            return self.handshake(i);
        }
        conn.deadline = conn.due + self.shared.timeout;
        self.send(i, now);
    }

    /// Moves a TLS handshake on as far as the socket allows; sends the request once it is done.
    pub(super) fn handshake(&mut self, i: usize) {
        let conn = &mut self.conns[i];
        let (Some(socket), Some(tls)) = (conn.socket.as_mut(), conn.tls.as_deref_mut()) else { return };
        match transport::handshake(socket, tls) {
            Ok(true) => {}
            Ok(false) => return, // the next edge goes on
            Err(kind) => return self.fail(i, kind, Instant::now()),
        }
        let now = Instant::now();
        if conn.counted {
            self.tally.recorder.handshake(micros(now - conn.connect_started));
        }
        conn.deadline = conn.due + self.shared.timeout;
        self.send(i, now);
    }

    /// Notes when the request goes out, then writes it.
    pub(super) fn send(&mut self, i: usize, now: Instant) {
        let conn = &mut self.conns[i];
        conn.sent_at = now;
        self.tally.written(conn.counted, self.pacer.records_send_lag(), conn.due, now);
        conn.phase = Phase::Writing;
        conn.written = 0;
        self.write(i);
    }

    pub(super) fn write(&mut self, i: usize) {
        let workload = &*self.shared.workload;
        let conn = &mut self.conns[i];
        let request = workload.bytes(conn.request, conn.user.hop.is_some(), &conn.out);
        let Some(socket) = conn.socket.as_mut() else { return };
        if let Some(ring) = self.ring.as_mut() {
            // The kernel sends it all, or reports the failure (see `ring`).
            ring.send(socket.as_raw_fd(), request, i, conn.generation);
            conn.written = request.len();
        } else {
            match transport::write(socket, conn.tls.as_deref_mut(), request, &mut conn.written) {
                Ok(true) => {}
                Ok(false) => return, // the socket is full: the next writable edge goes on
                Err(e) => return self.fail(i, transfer_error(&e), Instant::now()),
            }
        }
        if conn.counted {
            self.tally.recorder.bytes_sent += request.len() as u64;
        }
        conn.phase = Phase::Reading;
        let head_request = workload.requests[conn.request].head_request;
        conn.parser.reset_capturing(head_request, workload.capture(conn.request));
    }

    /// Reads what has arrived. A read shorter than the buffer drained the socket, so the next arrival raises a new
    /// edge; but when the peer has also closed (`read_closed`), that edge was already spent, so read on to the end.
    /// Through TLS a short read says nothing of the socket, so it reads on until `WouldBlock`.
    pub(super) fn read(&mut self, i: usize, read_closed: bool) {
        loop {
            let conn = &mut self.conns[i];
            let Some(socket) = conn.socket.as_mut() else { return };
            let drained_when_short = conn.tls.is_none() && !read_closed;
            let n = match transport::read(socket, conn.tls.as_deref_mut(), &mut self.buffer) {
                Ok(0) => return self.on_eof(i),
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return self.fail(i, transfer_error(&e), Instant::now()),
            };
            match feed(conn, &mut self.tally, &self.buffer[..n]) {
                Fed::Complete => return self.complete(i),
                Fed::Refused(kind) => return self.fail(i, kind, Instant::now()),
                Fed::NeedMore if n < self.buffer.len() && drained_when_short => return,
                Fed::NeedMore => {}
            }
        }
    }

    /// The server closed the connection: that ends a body delimited by the close, and fails anything else.
    pub(super) fn on_eof(&mut self, i: usize) {
        match self.conns[i].parser.finish_at_eof() {
            Ok(()) => self.complete(i),
            Err(_) => self.fail(i, ErrorKind::Closed, Instant::now()),
        }
    }

    /// A response arrived in full: check it (scenarios), and hand it to the loop; the connection closes when
    /// the server said so or keep-alive is off.
    pub(super) fn complete(&mut self, i: usize) {
        let now = Instant::now();
        let workload = &*self.shared.workload;
        let conn = &mut self.conns[i];
        let status = conn.parser.status();
        let sent = workload.bytes(conn.request, conn.user.hop.is_some(), &conn.out);
        let next = workload.next_after(conn.request, &conn.user, status, conn.parser.head(), sent);
        if next != Next::Done {
            workload.take_cookies(&mut conn.user, conn.parser.head());
            self.tally.answered(conn, status, None, now);
            self.close_if_done(i);
            return self.redirected(i, next, now);
        }
        conn.user.hop = None;
        let failed = workload.has_users().then(|| {
            let body = Body { bytes: conn.parser.body(), cut: conn.parser.body_bytes() > MAX_CAPTURE as u64 };
            workload.inspect(conn.request, &mut conn.user, status, conn.parser.head(), body)
        });
        let failed = failed.flatten();
        self.tally.answered(conn, status, failed, now);
        let passed = failed.is_none();
        self.close_if_done(i);
        self.after_response(i, passed, now);
    }

    /// After a response: the connection closes when the server said so or keep-alive is off.
    fn close_if_done(&mut self, i: usize) {
        let conn = &self.conns[i];
        if conn.parser.closes_connection() || !self.shared.keepalive {
            if self.shared.keepalive && conn.counted {
                self.tally.recorder.closed_by_server();
            }
            self.close(i);
        }
    }
}

/// What bytes of a response did to the request on a connection.
pub(super) enum Fed {
    /// Its response is complete, and the bytes ended with it.
    Complete,
    /// They are not HTTP, or more came than the response (nothing was asked for yet): counted as this kind.
    Refused(ErrorKind),
    /// The response goes on.
    NeedMore,
}

/// Feeds bytes that arrived on `conn` to its response parser, counting them ([`Tally::received`]).
pub(super) fn feed(conn: &mut Conn, tally: &mut Tally, bytes: &[u8]) -> Fed {
    tally.received(conn.counted, bytes.len());
    match conn.parser.feed(bytes) {
        Ok(Progress::Complete { used }) if used == bytes.len() => Fed::Complete,
        Ok(Progress::Complete { .. }) => Fed::Refused(ErrorKind::Malformed),
        Err(malformed) => Fed::Refused(malformed.kind()),
        Ok(Progress::NeedMore) => Fed::NeedMore,
    }
}
