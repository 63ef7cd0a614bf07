//! The worker loop's turn on io_uring ([`Ring`](crate::uring::Ring)): what each completion means for its
//! HTTP/1.1 slot. A connect's poll whose mask shows no error goes straight to `connected`, else to the same
//! `on_connect` as epoll's writable edge, which asks the socket what happened; an arrival is fed to
//! the slot's parser as a `read` would be; a send reports only its failure. Everything after (the response, what
//! the slot does next, timeouts) is the loop's common code.

use std::io;
use std::os::fd::AsRawFd;
use std::time::Instant;

use nix::libc::{ENOBUFS, POLLERR, POLLHUP};

use super::http1::{feed, Fed};
use super::Worker;
use crate::conn::{transfer_error, Phase};
use crate::uring::{Completion, Op};

impl Worker<'_> {
    /// Submits what the loop queued, waits until something completes or `until`, and handles the completions.
    pub(super) fn ring_turn(&mut self, until: Instant) -> io::Result<()> {
        let ring = self.ring.as_mut().expect("a ring for a ring turn");
        let completions = ring.turn(until)?;
        self.tally.clock(Instant::now());
        for completion in &completions {
            self.on_completion(completion);
        }
        if let Some(ring) = self.ring.as_mut() {
            ring.give_back(completions);
        }
        Ok(())
    }

    fn on_completion(&mut self, done: &Completion) {
        let i = done.slot;
        let current = self.conns.get(i).is_some_and(|conn| conn.generation == done.generation && conn.socket.is_some());
        match done.op {
            Op::Received => self.received(done, current),
            // The poll's mask says whether the connect succeeded, so only a failure asks the socket why.
            Op::Connected if current && self.conns[i].phase == Phase::Connecting => match done.result {
                mask if mask > 0 && mask & (POLLERR | POLLHUP) as i32 == 0 => self.connected(i, Instant::now()),
                _ => self.on_connect(i),
            },
            // A send reports only what went wrong: an error, or a request not sent in full.
            Op::Sent if current && matches!(self.conns[i].phase, Phase::Writing | Phase::Reading) => {
                let error = if done.result < 0 {
                    io::Error::from_raw_os_error(-done.result)
                } else {
                    io::Error::from(io::ErrorKind::WriteZero)
                };
                self.fail(i, transfer_error(&error), Instant::now());
            }
            Op::Connected | Op::Sent | Op::Released => {}
        }
    }

    /// One arrival on slot `done.slot` (or the end of its multishot receive). A stale one only gives its buffer
    /// back.
    fn received(&mut self, done: &Completion, current: bool) {
        let i = done.slot;
        let Some(ring) = self.ring.as_mut() else { return };
        let Some(buffer) = done.buffer else {
            // No bytes: the server closed (0), the receive failed, or every buffer was taken.
            if current {
                self.receive_ended(i, done.result);
            }
            return;
        };
        if !current {
            ring.recycle(buffer);
            return;
        }
        let conn = &mut self.conns[i];
        let fed = (conn.phase == Phase::Reading)
            .then(|| feed(conn, &mut self.tally, ring.bytes(buffer, done.result.max(0) as usize)));
        ring.recycle(buffer);
        if !done.more {
            self.rearm(i);
        }
        match fed {
            Some(Fed::Complete) => self.complete(i),
            Some(Fed::Refused(kind)) => self.fail(i, kind, Instant::now()),
            Some(Fed::NeedMore) => {}
            // Bytes nobody asked for: the connection is out of step, so it goes (the next request reconnects).
            None => self.close(i),
        }
    }

    /// Slot `i`'s receive ended without bytes, with `result`.
    fn receive_ended(&mut self, i: usize, result: i32) {
        if result == -ENOBUFS {
            return self.rearm(i); // the buffers are back by now: go on receiving
        }
        if self.conns[i].phase == Phase::Reading {
            return match result {
                0 => self.on_eof(i),
                _ => self.fail(i, transfer_error(&io::Error::from_raw_os_error(-result)), Instant::now()),
            };
        }
        // The server closed a connection that had no request on it (a keep-alive timeout, or it went away).
        self.close(i);
        self.tally.recorder.closed_by_server();
    }

    /// Arms slot `i`'s multishot receive again.
    fn rearm(&mut self, i: usize) {
        if let (Some(ring), Some(socket)) = (self.ring.as_mut(), self.conns[i].socket.as_ref()) {
            ring.receive(socket.as_raw_fd(), i, self.conns[i].generation);
        }
    }
}
