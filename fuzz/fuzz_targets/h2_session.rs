//! The client side of an HTTP/2 connection (framing, flow control, HPACK, stream bookkeeping) on whatever a
//! server might send after the client's preface.
//!
//! Input: one control byte (the size of the pieces the server's bytes arrive in), then the server's bytes. The
//! client opens streams when the connection becomes ready and again whenever one ends, as the worker does, so
//! that every response has a stream to land on. Beyond "no panic": fed in one piece or in pieces of any size,
//! the session reports the same events, responses and breakage.
#![no_main]

use libfuzzer_sys::fuzz_target;
use shootout_engine::http::h2::session::{Event, Session};
use shootout_engine::http::response::Capture;

/// `:method GET`, `:scheme http`, `:path /`, `:authority localhost`: a request header block.
const REQUEST: &[u8] = b"\x82\x86\x84\x41\x09localhost";
/// Streams the client opens in all.
const MOST_STREAMS: usize = 8;

fuzz_target!(|data: &[u8]| {
    let [step, wire @ ..] = data else { return };
    let whole = drive(wire, wire.len().max(1));
    let split = drive(wire, usize::from(*step) + 1);
    assert_eq!(whole, split, "one piece against pieces of {} bytes", usize::from(*step) + 1);
});

/// Feeds `wire` in pieces of `step` bytes; returns what the session reported, in order.
fn drive(wire: &[u8], step: usize) -> Vec<String> {
    let mut session = Session::new();
    let mut log = Vec::new();
    let mut opened = 0;
    for piece in wire.chunks(step) {
        let mut pos = 0;
        loop {
            match session.poll(piece, &mut pos) {
                Ok(Some(event)) => {
                    let response = session.response();
                    log.push(format!("{event:?} {} {:?} {:?}", response.status, response.head, response.body));
                    if !matches!(event, Event::Ready) {
                        assert!(opened > 0, "an event for a stream before any was opened: {event:?}");
                    }
                    while session.can_open() && opened < MOST_STREAMS {
                        let capture = if opened % 2 == 0 { Capture::HeadAndBody } else { Capture::Nothing };
                        let body: &[u8] = if opened % 3 == 0 { b"a request body" } else { b"" };
                        session.open_plain(opened, REQUEST, body, capture);
                        opened += 1;
                    }
                }
                Ok(None) => break,
                Err(broken) => {
                    log.push(format!("broken: {broken:?}"));
                    return log;
                }
            }
            let pending = session.pending_output().len();
            session.wrote(pending);
        }
        assert_eq!(pos, piece.len(), "the session leaves no byte of a piece unread");
    }
    log.push(format!("open {} drained {}", session.open_streams(), session.drained()));
    log
}
