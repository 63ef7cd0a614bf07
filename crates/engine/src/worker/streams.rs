//! What a slot does when its request rides a stream of a connection it shares with other slots (HTTP/2's
//! [`http2`](super::http2), HTTP/3's [`http3`](super::http3)): its stream answered, ended without an answer, or
//! its connection lost. The protocols differ in their connections; from a slot's side, a stream is a stream.

use std::time::{Duration, Instant};

use shootout_model::ErrorKind;

use super::Worker;
use crate::conn::Phase;
use crate::http::stream::Response;
use crate::redirect::Next;
use crate::workload::Body;

impl Worker<'_> {
    /// Slot `slot`'s stream got its whole `response`: check it (scenarios), record it, and let the slot go on.
    pub(super) fn stream_answered(&mut self, slot: usize, response: &Response, now: Instant) {
        let workload = &*self.shared.workload;
        let conn = &mut self.conns[slot];
        if conn.phase != Phase::Reading {
            return;
        }
        let sent = workload.bytes(conn.request, conn.user.hop.is_some(), &conn.out);
        let next = workload.next_after(conn.request, &conn.user, response.status, &response.head, sent);
        if next != Next::Done {
            workload.take_cookies(&mut conn.user, &response.head);
            self.tally.answered(conn, response.status, None, now);
            conn.phase = Phase::Idle;
            return self.redirected(slot, next, now);
        }
        conn.user.hop = None;
        let failed = workload.has_users().then(|| {
            let body = Body { bytes: &response.body, cut: response.cut };
            workload.inspect(conn.request, &mut conn.user, response.status, &response.head, body)
        });
        let failed = failed.flatten();
        self.tally.answered(conn, response.status, failed, now);
        let passed = failed.is_none();
        conn.phase = Phase::Idle;
        self.after_response(slot, passed, now);
    }

    /// The server ended a slot's stream without an answer: the request fails with `kind`, and the error code of
    /// the reset that ended it, if one did, is counted.
    pub(super) fn end_stream(&mut self, slot: usize, kind: ErrorKind, reset: Option<u64>, now: Instant) {
        if self.conns[slot].phase == Phase::Reading {
            if let Some(code) = reset {
                self.tally.stream_reset(&self.conns[slot], u32::try_from(code).unwrap_or(u32::MAX));
            }
            self.conns[slot].phase = Phase::Writing; // sent, and no longer on the wire: nothing to release
            self.conns[slot].stream = 0;
            self.fail(slot, kind, now);
        }
    }

    /// A connection carrying `slots` broke with `kind`: every request on it or waiting for it fails (connect
    /// failures pause the slots for `backoff` before they try again). `lost` is scratch, returned empty.
    pub(super) fn lose_slots(
        &mut self,
        slots: std::ops::Range<usize>,
        kind: ErrorKind,
        backoff: Duration,
        mut lost: Vec<usize>,
        now: Instant,
    ) -> Vec<usize> {
        lost.clear();
        let end = slots.end.min(self.conns.len());
        lost.extend((slots.start..end).filter(|&i| {
            matches!(self.conns[i].phase, Phase::Connecting | Phase::Queued | Phase::Reading | Phase::Writing)
        }));
        for &i in &lost {
            // The connection is gone with its streams: nothing to release, only to record.
            let conn = &mut self.conns[i];
            if conn.phase == Phase::Queued {
                conn.phase = Phase::Connecting;
            } else if conn.phase == Phase::Reading {
                conn.phase = Phase::Writing;
            }
            conn.stream = 0;
            self.tally.failed(&self.conns[i], kind, now);
            self.conns[i].phase = Phase::Idle;
        }
        for &i in &lost {
            if kind.is_connect() {
                self.conns[i].phase = Phase::Backoff(now + backoff);
            } else if self.shared.workload.sessions.is_empty() {
                self.next_request(i, now);
            } else {
                self.end_session(i, now);
            }
        }
        lost.clear();
        lost
    }
}
