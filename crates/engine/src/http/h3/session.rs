//! [`Session`]: the client side of one HTTP/3 connection, over a `quinn-proto` QUIC connection, without I/O.
//!
//! The worker hands the QUIC connection what arrives ([`Session::quic`] is the `quinn_proto::Connection`), then
//! lets the session read what changed ([`Session::poll`] returns an [`Event`] whenever a stream ends), opens
//! requests ([`Session::open`]) while the server allows streams, and sends what the QUIC connection queues.
//!
//! Once connected the session opens its control stream with an empty SETTINGS frame (the defaults: no dynamic
//! QPACK table, so the server's field sections refer to the static table alone and no QPACK stream is needed).
//! It reads the server's control stream for SETTINGS and GOAWAY, and drains the server's other unidirectional
//! streams. A request is one bidirectional stream: its HEADERS frame, a DATA frame with its body if it has one,
//! and the end of the stream. A response's DATA is counted as it streams past, never gathered.

use std::collections::VecDeque;

use quinn_proto::{Connection, ConnectionError, Dir, ReadError, StreamEvent, StreamId, VarInt, WriteError};
use shootout_model::ErrorKind;

use super::frame::{code, kind, put_header, put_varint, stream_type, varint, Frame, Frames};
use super::qpack::Decoder;
use crate::http::response::Capture;
use crate::http::stream::{Head, Response};

/// What happened, for the worker.
#[derive(Debug)]
pub enum Event {
    /// The QUIC handshake completed: requests may go out.
    Ready,
    /// The stream of `slot` got its whole response; [`Session::response`] has it.
    Answered {
        /// The worker's slot that opened the stream.
        slot: usize,
    },
    /// The server reset the stream of `slot` with `code` (H3_REQUEST_REJECTED: it did not process it).
    Reset {
        /// The slot.
        slot: usize,
        /// The RESET_STREAM error code.
        code: u64,
    },
    /// The server's GOAWAY said it will not process the stream of `slot`.
    Refused {
        /// The slot.
        slot: usize,
    },
    /// The stream of `slot` ended without a usable response: `kind` is `Malformed` for one that is not valid (no
    /// final head, a frame cut short, a field section that does not decode), `HeadTooLarge` or `TooManyHeaders`
    /// for a head past HTTP/1.1's limits.
    Broken {
        /// The slot.
        slot: usize,
        /// What was wrong.
        kind: ErrorKind,
    },
    /// The connection ended: every stream on it is lost.
    Lost(ConnectionError),
}

/// One request stream.
#[derive(Debug, Default)]
struct Stream {
    id: Option<StreamId>,
    slot: usize,
    capture: Capture,
    frames: Frames,
    response: Response,
    /// A final (non-1xx) head has arrived.
    answered: bool,
    /// Request bytes the stream did not take yet (flow control), and whether the end follows them.
    pending: Vec<u8>,
}

/// One unidirectional stream the server opened.
#[derive(Debug)]
struct Incoming {
    id: StreamId,
    /// Its type, once read: the control stream's frames are read, any other stream's bytes dropped.
    kind: Option<u64>,
    head: Vec<u8>,
    frames: Frames,
}

/// The client side of one HTTP/3 connection.
#[derive(Debug)]
pub struct Session {
    quic: Connection,
    ready: bool,
    decoder: Decoder,
    /// Open streams in `streams[..open]`; the rest keep their buffers for reuse.
    streams: Vec<Stream>,
    open: usize,
    incoming: Vec<Incoming>,
    /// The first stream id the server's GOAWAY leaves unprocessed.
    goaway: Option<u64>,
    events: VecDeque<Event>,
    finished: Response,
    /// The reason the server or the connection broke the protocol, when it did.
    broke: Option<String>,
}

impl Session {
    /// A session over `quic`, a connection the worker's endpoint started.
    pub fn new(quic: Connection) -> Session {
        Session {
            quic,
            ready: false,
            decoder: Decoder::default(),
            streams: Vec::new(),
            open: 0,
            incoming: Vec::new(),
            goaway: None,
            events: VecDeque::new(),
            finished: Response::default(),
            broke: None,
        }
    }

    /// The QUIC connection, to hand it datagrams and timeouts and to take what it sends.
    pub fn quic(&mut self) -> &mut Connection {
        &mut self.quic
    }

    /// True once the handshake completed and no GOAWAY came.
    pub fn ready(&self) -> bool {
        self.ready && self.goaway.is_none()
    }

    /// True once the server said GOAWAY and every stream it will still answer has ended.
    pub fn drained(&self) -> bool {
        self.goaway.is_some() && self.open == 0
    }

    /// True once the server said GOAWAY.
    pub fn going_away(&self) -> bool {
        self.goaway.is_some()
    }

    /// The response of the stream whose end was reported last.
    pub fn response(&self) -> &Response {
        &self.finished
    }

    /// The response of the stream whose end was reported last, to swap out (its buffers come back for reuse).
    pub fn response_mut(&mut self) -> &mut Response {
        &mut self.finished
    }

    /// Why the connection was closed as broken, if the session closed it.
    pub fn broke(&self) -> Option<&str> {
        self.broke.as_deref()
    }

    /// Opens a stream for `slot` with `headers` (a whole HEADERS frame) and `body`, keeping what `capture` says
    /// of the response. Returns the stream's id, or `None` when the server allows no more streams now (the
    /// worker tries again when one ends).
    pub fn open(&mut self, slot: usize, headers: &[u8], body: &[u8], capture: Capture) -> Option<StreamId> {
        if !self.ready() {
            return None;
        }
        let id = self.quic.streams().open(Dir::Bi)?;
        if self.open == self.streams.len() {
            self.streams.push(Stream::default());
        }
        let stream = &mut self.streams[self.open];
        self.open += 1;
        stream.id = Some(id);
        stream.slot = slot;
        stream.capture = capture;
        stream.frames.reset();
        stream.response.clear();
        stream.answered = false;
        stream.pending.clear();
        stream.pending.extend_from_slice(headers);
        if !body.is_empty() {
            put_header(&mut stream.pending, kind::DATA, body.len());
            stream.pending.extend_from_slice(body);
        }
        self.send_pending(self.open - 1);
        Some(id)
    }

    /// Writes what stream `k` still holds, and ends the stream once it is all out.
    fn send_pending(&mut self, k: usize) {
        let Some(id) = self.streams[k].id else { return };
        let stream = &mut self.streams[k];
        let mut send = self.quic.send_stream(id);
        while !stream.pending.is_empty() {
            match send.write(&stream.pending) {
                Ok(n) => drop(stream.pending.drain(..n)),
                Err(WriteError::Blocked) => return,
                Err(_) => {
                    stream.pending.clear();
                    return;
                }
            }
        }
        let _ = send.finish();
    }

    /// Gives up on the stream `id` (a timeout): it is reset and its reading stopped, so its place is free.
    pub fn cancel(&mut self, id: StreamId) {
        if let Some(k) = self.find(id) {
            let cancelled = wire_code(code::REQUEST_CANCELLED);
            let _ = self.quic.send_stream(id).reset(cancelled);
            let _ = self.quic.recv_stream(id).stop(cancelled);
            self.close_stream(k);
        }
    }

    /// Closes the connection (the client is done with it, or the server broke the protocol: `reason`).
    pub fn close(&mut self, now: std::time::Instant, error: u64, reason: &str) {
        if error != code::NO_ERROR {
            self.broke = Some(reason.to_string());
        }
        let error = wire_code(error);
        self.quic.close(now, error, bytes::Bytes::copy_from_slice(reason.as_bytes()));
    }

    /// Closes the connection because the server broke the protocol, and reports it lost: QUIC reports no loss
    /// of a connection its own side closed, and every stream on it must end.
    fn close_broken(&mut self, now: std::time::Instant, error: u64, reason: &str) {
        self.close(now, error, reason);
        self.ready = false;
        self.events.push_back(Event::Lost(ConnectionError::LocallyClosed));
    }

    /// What changed since the last call, one event at a time: `None` when nothing more is to report until the
    /// connection takes in more.
    pub fn poll(&mut self, now: std::time::Instant) -> Option<Event> {
        loop {
            if let Some(event) = self.events.pop_front() {
                return Some(event);
            }
            match self.quic.poll()? {
                quinn_proto::Event::Connected => {
                    self.ready = true;
                    self.open_control();
                    self.events.push_back(Event::Ready);
                }
                quinn_proto::Event::ConnectionLost { reason } => {
                    self.ready = false;
                    self.events.push_back(Event::Lost(reason));
                }
                quinn_proto::Event::Stream(StreamEvent::Readable { id }) => self.read(id, now),
                quinn_proto::Event::Stream(StreamEvent::Opened { dir: Dir::Uni }) => {
                    while let Some(id) = self.quic.streams().accept(Dir::Uni) {
                        self.incoming.push(Incoming { id, kind: None, head: Vec::new(), frames: Frames::default() });
                        self.read(id, now);
                    }
                }
                quinn_proto::Event::Stream(StreamEvent::Writable { id }) => {
                    if let Some(k) = self.find(id) {
                        self.send_pending(k);
                    }
                }
                quinn_proto::Event::Stream(StreamEvent::Stopped { id, error_code }) => {
                    // The server will not read the rest of the request: its answer (or a reset) follows. The
                    // request's side is reset with the server's code (RFC 9000 §3.5), so the server learns its
                    // final size and frees the stream.
                    if let Some(k) = self.find(id) {
                        self.streams[k].pending.clear();
                        let _ = self.quic.send_stream(id).reset(error_code);
                    }
                }
                _ => {}
            }
        }
    }

    /// The client's control stream, with its SETTINGS (empty: every default stands).
    fn open_control(&mut self) {
        if let Some(id) = self.quic.streams().open(Dir::Uni) {
            let mut out = Vec::with_capacity(3);
            put_varint(&mut out, stream_type::CONTROL);
            put_header(&mut out, kind::SETTINGS, 0);
            let _ = self.quic.send_stream(id).write(&out);
        }
    }

    /// Reads what stream `id` has.
    fn read(&mut self, id: StreamId, now: std::time::Instant) {
        if let Some(k) = self.find(id) {
            return self.read_request(k);
        }
        if let Some(u) = self.incoming.iter().position(|s| s.id == id) {
            if let Err(reason) = self.read_incoming(u) {
                self.close_broken(now, reason.0, reason.1);
            }
        }
    }

    /// Reads the response on request stream `k`.
    fn read_request(&mut self, k: usize) {
        let Some(id) = self.streams[k].id else { return };
        let Session { quic, streams, decoder, .. } = self;
        let stream = &mut streams[k];
        let mut recv = quic.recv_stream(id);
        let Ok(mut chunks) = recv.read(true) else { return };
        let mut end = None;
        loop {
            match chunks.next(usize::MAX) {
                Ok(Some(chunk)) => {
                    if let Err(kind) = take_response(stream, decoder, &chunk.bytes) {
                        end = Some(End::Broken(kind));
                        break;
                    }
                }
                Ok(None) => {
                    let whole = stream.answered && stream.frames.between();
                    end = Some(if whole { End::Answered } else { End::Broken(ErrorKind::Malformed) });
                    break;
                }
                Err(ReadError::Blocked) => break,
                Err(ReadError::Reset(code)) => {
                    end = Some(End::Reset(code.into_inner()));
                    break;
                }
            }
        }
        let _ = chunks.finalize();
        let Some(end) = end else { return };
        let slot = stream.slot;
        match end {
            End::Answered => {
                if !self.streams[k].pending.is_empty() {
                    // Answered before the request was all sent: what is left will never be read.
                    let _ = self.quic.send_stream(id).reset(wire_code(code::NO_ERROR));
                }
                std::mem::swap(&mut self.finished, &mut self.streams[k].response);
                self.events.push_back(Event::Answered { slot });
            }
            End::Broken(kind) => {
                // A head past the client's limits is valid HTTP/3: the client only declines to read it.
                let refused = if kind == ErrorKind::Malformed { code::MESSAGE_ERROR } else { code::REQUEST_CANCELLED };
                let error = wire_code(refused);
                let _ = self.quic.recv_stream(id).stop(error);
                let _ = self.quic.send_stream(id).reset(error);
                self.events.push_back(Event::Broken { slot, kind });
            }
            End::Reset(code) => {
                let _ = self.quic.send_stream(id).reset(wire_code(code));
                self.events.push_back(Event::Reset { slot, code });
            }
        }
        self.close_stream(k);
    }

    /// Reads a stream the server opened: its type, then, on the control stream, its frames. Returns the error to
    /// close the connection with when the server broke the protocol.
    fn read_incoming(&mut self, u: usize) -> Result<(), (u64, &'static str)> {
        let id = self.incoming[u].id;
        let mut recv = self.quic.recv_stream(id);
        let Ok(mut chunks) = recv.read(true) else { return Ok(()) };
        let mut result = Ok(());
        let mut ended = false;
        loop {
            let chunk = match chunks.next(usize::MAX) {
                Ok(Some(chunk)) => chunk,
                Ok(None) | Err(ReadError::Reset(_)) => {
                    ended = true;
                    break;
                }
                Err(ReadError::Blocked) => break,
            };
            let incoming = &mut self.incoming[u];
            let mut bytes = &chunk.bytes[..];
            if incoming.kind.is_none() {
                // The stream's type, a varint of at most 8 bytes, may come in pieces.
                let had = incoming.head.len();
                incoming.head.extend_from_slice(&bytes[..bytes.len().min(8 - had)]);
                let Some((kind, len)) = varint(&incoming.head) else { continue };
                bytes = &bytes[len - had..];
                incoming.kind = Some(kind);
            }
            if incoming.kind == Some(stream_type::CONTROL) {
                if let Err(reason) = control_frames(incoming, bytes, &mut self.goaway) {
                    result = Err(reason);
                    break;
                }
            }
        }
        let _ = chunks.finalize();
        if ended && result.is_ok() && self.incoming[u].kind == Some(stream_type::CONTROL) {
            result = Err((code::CLOSED_CRITICAL_STREAM, "the server closed its control stream"));
        }
        if ended {
            self.incoming.swap_remove(u);
        }
        if let Some(first_unprocessed) = self.goaway {
            self.refuse_from(first_unprocessed);
        }
        result
    }

    /// The server's GOAWAY left every stream from `first` on unprocessed.
    fn refuse_from(&mut self, first: u64) {
        let mut k = 0;
        while k < self.open {
            match self.streams[k].id {
                Some(id) if VarInt::from(id).into_inner() >= first => {
                    let slot = self.streams[k].slot;
                    self.events.push_back(Event::Refused { slot });
                    self.close_stream(k);
                }
                _ => k += 1,
            }
        }
    }

    fn find(&self, id: StreamId) -> Option<usize> {
        self.streams[..self.open].iter().position(|s| s.id == Some(id))
    }

    /// Frees stream `k`'s place (its buffers kept for the next).
    fn close_stream(&mut self, k: usize) {
        self.streams[k].id = None;
        self.open -= 1;
        self.streams.swap(k, self.open);
    }
}

/// An HTTP/3 error code as QUIC carries it (a code past a varint's range, which none is, as the largest).
fn wire_code(code: u64) -> VarInt {
    VarInt::from_u64(code).unwrap_or(VarInt::MAX)
}

/// How a request stream ended.
enum End {
    Answered,
    Broken(ErrorKind),
    Reset(u64),
}

/// Takes `bytes` of a response: its heads decoded, its body counted (kept when captured). `Err` with what the
/// request counts as when the stream breaks the protocol or its head is past HTTP/1.1's limits.
fn take_response(stream: &mut Stream, decoder: &mut Decoder, bytes: &[u8]) -> Result<(), ErrorKind> {
    const BROKEN: ErrorKind = ErrorKind::Malformed;
    let mut pos = 0;
    let Stream { frames, response, answered, capture, .. } = stream;
    while let Some(frame) = frames.next(bytes, &mut pos).map_err(|_| BROKEN)? {
        match frame {
            Frame::Data(data) if *answered => response.body_bytes(*capture, data),
            Frame::Data(_) => return Err(BROKEN), // a body before its head
            Frame::Whole(kind::HEADERS, section) => {
                let mut head = Head::new((!*answered).then_some(&mut response.head), *capture);
                decoder.decode(section, |name, value| head.field(name, value)).map_err(|_| BROKEN)?;
                let status = head.finish()?;
                if *answered {
                    continue; // trailers
                }
                match status {
                    0 => return Err(BROKEN),
                    100..=199 => response.head.clear(), // an interim answer: the final one follows
                    _ => {
                        *answered = true;
                        response.status = status;
                    }
                }
            }
            Frame::Whole(_, _) => return Err(BROKEN), // SETTINGS or GOAWAY on a request stream, or a push promise
        }
    }
    Ok(())
}

/// Reads the frames of the server's control stream: its SETTINGS first, then GOAWAY (which lowers `goaway`).
fn control_frames(incoming: &mut Incoming, bytes: &[u8], goaway: &mut Option<u64>) -> Result<(), (u64, &'static str)> {
    let mut pos = 0;
    loop {
        let frame = incoming
            .frames
            .next(bytes, &mut pos)
            .map_err(|_| (code::FRAME_ERROR, "a control frame that does not parse"))?;
        match frame {
            None => return Ok(()),
            Some(Frame::Whole(kind::GOAWAY, payload)) => {
                let (id, _) = varint(payload).ok_or((code::FRAME_ERROR, "a GOAWAY without its stream id"))?;
                *goaway = Some(goaway.map_or(id, |was| was.min(id)));
            }
            Some(Frame::Whole(kind::SETTINGS, _)) => {}
            Some(_) => return Err((code::FRAME_UNEXPECTED, "a frame the control stream may not carry")),
        }
    }
}
