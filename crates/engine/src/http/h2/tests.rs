//! The session against a scripted server: frames written by hand (and HPACK blocks by `loona-hpack`'s encoder,
//! which uses its dynamic table as servers do), fed in pieces of every size.

use super::frame::{self, flag, kind, setting, Header, HEADER_LEN};
use super::request::Request2;
use super::session::{Event, Session, RECEIVE_WINDOW};
use crate::http::response::Capture;

const GET: &[u8] = b"GET / HTTP/1.1\r\nHost: 127.0.0.1:1\r\nUser-Agent: t\r\n\r\n";

/// A server's side of the conversation.
struct Server {
    encoder: loona_hpack::Encoder<'static>,
    out: Vec<u8>,
}

impl Server {
    fn new() -> Server {
        Server { encoder: loona_hpack::Encoder::new(), out: Vec::new() }
    }

    fn settings(&mut self, values: &[(u16, u32)]) -> &mut Self {
        frame::write_settings(&mut self.out, values);
        self
    }

    fn headers(&mut self, stream: u32, status: &str, end: bool) -> &mut Self {
        let fields: Vec<(&[u8], &[u8])> =
            vec![(b":status", status.as_bytes()), (b"server", b"scripted"), (b"set-cookie", b"a=1")];
        let block = self.encoder.encode(fields);
        frame::write_headers(&mut self.out, stream, &block, end, 16_384);
        self
    }

    fn data(&mut self, stream: u32, body: &[u8], end: bool) -> &mut Self {
        frame::write_data(&mut self.out, stream, body, end, 16_384);
        self
    }

    fn raw(&mut self, kind: u8, flags: u8, stream: u32, payload: &[u8]) -> &mut Self {
        frame::write_header(&mut self.out, payload.len(), kind, flags, stream);
        self.out.extend_from_slice(payload);
        self
    }

    fn take(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.out)
    }
}

/// Feeds `bytes` in pieces of `piece` bytes and gathers the events.
fn feed(session: &mut Session, bytes: &[u8], piece: usize) -> Vec<Event> {
    let mut events = Vec::new();
    for chunk in bytes.chunks(piece.max(1)) {
        let mut pos = 0;
        while let Some(event) = session.poll(chunk, &mut pos).expect("a valid exchange") {
            events.push(event);
        }
        assert_eq!(pos, chunk.len());
    }
    events
}

/// The frames a session queued, as (header, payload).
fn frames(bytes: &[u8]) -> Vec<(Header, Vec<u8>)> {
    let mut out = Vec::new();
    let mut rest = bytes.strip_prefix(frame::PREFACE).unwrap_or(bytes);
    while rest.len() >= HEADER_LEN {
        let header = Header::parse(rest[..HEADER_LEN].try_into().unwrap());
        let end = HEADER_LEN + header.len as usize;
        out.push((header, rest[HEADER_LEN..end].to_vec()));
        rest = &rest[end..];
    }
    out
}

fn drain(session: &mut Session) -> Vec<(Header, Vec<u8>)> {
    let queued = frames(session.pending_output());
    let n = session.pending_output().len();
    session.wrote(n);
    queued
}

#[test]
fn many_streams_answered_in_any_order_and_any_piece_size() {
    for piece in [1, 7, 9, 100, 100_000] {
        let request = Request2::new(GET, "http").unwrap();
        let mut session = Session::new();
        let hello = drain(&mut session);
        assert_eq!(hello[0].0.kind, kind::SETTINGS);
        assert_eq!(hello[1].0.kind, kind::WINDOW_UPDATE);
        assert!(!session.can_open(), "no stream before the server's SETTINGS");
        let mut server = Server::new();
        let events = feed(&mut session, &server.settings(&[(setting::MAX_CONCURRENT_STREAMS, 3)]).take(), piece);
        assert_eq!(events, [Event::Ready]);
        let ids: Vec<u32> = (0..3).map(|slot| session.open(slot, &request, b"", Capture::Nothing)).collect();
        assert_eq!(ids, [1, 3, 5]);
        assert!(!session.can_open(), "the server allows three");
        let sent = drain(&mut session);
        assert_eq!(sent[0].0.kind, kind::SETTINGS, "the ACK");
        assert!(sent[0].0.has(flag::ACK));
        assert!(sent[1].1.len() > sent[2].1.len(), "the first block fills the table, the next refer to it");
        server.headers(3, "200", false).data(3, &[b'x'; 40_000], true);
        server.headers(1, "404", true);
        server.headers(5, "200", false).data(5, b"", true);
        let events = feed(&mut session, &server.take(), piece);
        assert_eq!(events, [Event::Answered { slot: 1 }, Event::Answered { slot: 0 }, Event::Answered { slot: 2 }]);
        assert_eq!(session.open_streams(), 0);
        assert!(session.can_open());
    }
}

#[test]
fn status_head_and_body_are_kept_when_asked() {
    let request = Request2::new(GET, "https").unwrap();
    let mut session = Session::new();
    let mut server = Server::new();
    feed(&mut session, &server.settings(&[]).take(), 1000);
    session.open(0, &request, b"", Capture::HeadAndBody);
    session.open(1, &request, b"", Capture::Nothing);
    server.headers(1, "100", false).headers(1, "201", false).data(1, b"hello ", false).data(1, b"there", true);
    server.headers(3, "503", true);
    // The response is the one of the event returned last: read it before polling on.
    let bytes = server.take();
    let mut pos = 0;
    assert_eq!(session.poll(&bytes, &mut pos).unwrap(), Some(Event::Answered { slot: 0 }));
    let response = session.response();
    assert_eq!(response.status, 201);
    assert_eq!(response.body, b"hello there");
    let head = String::from_utf8(response.head.clone()).unwrap();
    assert!(head.starts_with("HTTP/1.1 201 \r\n") && head.contains("set-cookie: a=1\r\n"), "{head}");
    let mut headers = [httparse::EMPTY_HEADER; 8];
    assert!(httparse::Response::new(&mut headers).parse(head.as_bytes()).unwrap().is_complete());
    assert_eq!(session.poll(&bytes, &mut pos).unwrap(), Some(Event::Answered { slot: 1 }));
    assert_eq!(session.response().status, 503);
    assert!(session.response().head.is_empty(), "not captured");
    assert_eq!(session.poll(&bytes, &mut pos).unwrap(), None);
}

#[test]
fn resets_goaway_and_lowered_limits() {
    let request = Request2::new(GET, "http").unwrap();
    let mut session = Session::new();
    let mut server = Server::new();
    feed(&mut session, &server.settings(&[]).take(), 64);
    for slot in 0..4 {
        session.open(slot, &request, b"", Capture::Nothing);
    }
    drain(&mut session);
    server.raw(kind::RST_STREAM, 0, 1, &frame::REFUSED_STREAM.to_be_bytes());
    server.settings(&[(setting::MAX_CONCURRENT_STREAMS, 1)]);
    let events = feed(&mut session, &server.take(), 64);
    assert_eq!(events, [Event::Reset { slot: 0, code: frame::REFUSED_STREAM }]);
    assert!(!session.can_open(), "three open, one allowed");
    let mut goaway = 3u32.to_be_bytes().to_vec();
    goaway.extend_from_slice(&0u32.to_be_bytes());
    server.raw(kind::GOAWAY, 0, 0, &goaway);
    let mut events = feed(&mut session, &server.take(), 64);
    events.sort_by_key(|e| format!("{e:?}"));
    assert_eq!(events, [Event::Refused { slot: 2 }, Event::Refused { slot: 3 }]);
    assert!(session.going_away() && !session.drained() && !session.can_open());
    let events = feed(&mut session, &server.headers(3, "200", true).take(), 64);
    assert_eq!(events, [Event::Answered { slot: 1 }]);
    assert!(session.drained());
}

#[test]
fn giving_up_the_last_stream_a_goaway_kept_drains_the_session() {
    let request = Request2::new(GET, "http").unwrap();
    let mut session = Session::new();
    let mut server = Server::new();
    feed(&mut session, &server.settings(&[]).take(), 64);
    let ids: Vec<u32> = (0..2).map(|slot| session.open(slot, &request, b"", Capture::Nothing)).collect();
    drain(&mut session);
    let mut goaway = ids[1].to_be_bytes().to_vec();
    goaway.extend_from_slice(&0u32.to_be_bytes());
    assert!(feed(&mut session, &server.raw(kind::GOAWAY, 0, 0, &goaway).take(), 64).is_empty(), "both kept");
    session.cancel(ids[0]);
    assert!(!session.drained(), "one kept stream is still open");
    session.cancel(ids[1]);
    assert!(session.drained(), "nothing left that the server will answer: the connection is done");
    let resets: Vec<(u32, Vec<u8>)> = drain(&mut session).into_iter().map(|(h, payload)| (h.stream, payload)).collect();
    let cancel = frame::CANCEL.to_be_bytes().to_vec();
    assert_eq!(resets, [(ids[0], cancel.clone()), (ids[1], cancel)]);
}

#[test]
fn pings_are_answered_and_windows_kept_open() {
    let request = Request2::new(GET, "http").unwrap();
    let mut session = Session::new();
    let mut server = Server::new();
    feed(&mut session, &server.settings(&[]).take(), 64);
    drain(&mut session);
    feed(&mut session, &server.raw(kind::PING, 0, 0, b"12345678").take(), 3);
    let sent = drain(&mut session);
    assert_eq!((sent[0].0.kind, sent[0].0.flags, &sent[0].1[..]), (kind::PING, flag::ACK, &b"12345678"[..]));
    session.open(0, &request, b"", Capture::Nothing);
    drain(&mut session);
    // Past half the window, the connection's and the stream's credit are given back.
    server.headers(1, "200", false);
    let chunk = vec![0u8; 16_384];
    let frames_needed = (RECEIVE_WINDOW as usize / 2) / chunk.len() + 1;
    for _ in 0..frames_needed {
        server.data(1, &chunk, false);
    }
    let events = feed(&mut session, &server.take(), 1 << 20);
    assert!(events.is_empty());
    let updates: Vec<u32> =
        drain(&mut session).into_iter().filter(|(h, _)| h.kind == kind::WINDOW_UPDATE).map(|(h, _)| h.stream).collect();
    assert_eq!(updates, [0, 1]);
}

#[test]
fn bodies_wait_for_the_servers_window() {
    let post = b"POST /p HTTP/1.1\r\nHost: h\r\nContent-Length: 100000\r\n\r\n";
    let mut http1 = post.to_vec();
    http1.extend_from_slice(&[b'b'; 100_000]);
    let request = Request2::new(&http1, "http").unwrap();
    let mut session = Session::new();
    let mut server = Server::new();
    feed(&mut session, &server.settings(&[]).take(), 64);
    drain(&mut session);
    let id = session.open(0, &request, &http1[request.body.clone()], Capture::Nothing);
    let sent: usize =
        drain(&mut session).iter().filter(|(h, _)| h.kind == kind::DATA).map(|(h, _)| h.len as usize).sum();
    assert_eq!(sent, 65_535, "the default window");
    assert!(session.stalled(id));
    let mut increment = Vec::new();
    increment.extend_from_slice(&100_000u32.to_be_bytes());
    server.raw(kind::WINDOW_UPDATE, 0, 0, &increment).raw(kind::WINDOW_UPDATE, 0, 1, &increment);
    feed(&mut session, &server.take(), 64);
    let rest = drain(&mut session);
    let sent: usize = rest.iter().filter(|(h, _)| h.kind == kind::DATA).map(|(h, _)| h.len as usize).sum();
    assert_eq!(sent, 100_000 - 65_535);
    assert!(rest.last().unwrap().0.has(flag::END_STREAM));
    assert!(!session.stalled(id));
}

#[test]
fn an_http1_answer_is_not_http2() {
    let mut session = Session::new();
    let mut pos = 0;
    let error = session.poll(b"HTTP/1.1 400 Bad Request\r\n\r\n", &mut pos).unwrap_err();
    assert!(error.0.contains("does not speak HTTP/2"), "{}", error.0);
}
