//! [`Session`]: the client side of one HTTP/2 connection, without I/O.
//!
//! The worker hands it the bytes it read ([`Session::poll`] takes them frame by frame and returns an [`Event`]
//! whenever a stream ends), asks it to open streams ([`Session::open`]) while [`Session::can_open`] allows, and
//! writes out what it queued in [`Session::out`]. The session answers SETTINGS and PING itself, keeps the
//! receive windows wide open (WINDOW_UPDATEs go out as bodies are consumed, so a server never waits on the
//! client), holds request bodies that do not fit the server's windows until it opens them, and keeps the HPACK
//! decoder in step with every header block, also those of streams the client has given up on.
//!
//! DATA payloads are counted as they stream past and never buffered; only control frames and header blocks
//! are gathered whole. Response heads and bodies are kept only for streams opened with a [`Capture`].

use std::collections::VecDeque;

use shootout_model::ErrorKind;

use super::frame::{self, flag, kind, setting, Header, HEADER_LEN};
use super::hpack::Decoder;
use super::request::{table_size_update, Request2};
use crate::http::response::Capture;
use crate::http::stream::Head;
pub use crate::http::stream::Response;

/// The receive window the client grants each stream and the connection (as h2load does by default): wide enough
/// that no server waits for the client on any body it is likely to send.
pub const RECEIVE_WINDOW: u32 = (1 << 30) - 1;
/// The largest control frame or header block the client gathers (it advertises no more than the default frame
/// size, so a larger frame breaks the protocol).
const MAX_BLOCK: usize = 1 << 20;

/// What happened to a stream, for the worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// The stream of `slot` got its whole response; [`Session::response`] has its status (and what was
    /// captured).
    Answered {
        /// The worker's slot that opened the stream.
        slot: usize,
    },
    /// The server reset the stream of `slot` with `code`.
    Reset {
        /// The slot.
        slot: usize,
        /// The RST_STREAM error code.
        code: u32,
    },
    /// The server's GOAWAY said it will not process the stream of `slot`.
    Refused {
        /// The slot.
        slot: usize,
    },
    /// The stream of `slot` ended without a usable response: `kind` is `Malformed` for one that is not valid (no
    /// status, or a second final head), `HeadTooLarge` or `TooManyHeaders` for a head past HTTP/1.1's limits.
    Broken {
        /// The slot.
        slot: usize,
        /// What was wrong.
        kind: ErrorKind,
    },
    /// The server's first SETTINGS arrived: the connection is ready for streams.
    Ready,
}

/// The connection is unusable: the server broke the protocol (or sent a GOAWAY with an error and no stream
/// left to finish). The worker fails every stream on it and closes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Broken(pub String);

/// One open stream.
#[derive(Debug, Default)]
struct Stream {
    id: u32,
    slot: usize,
    capture: Capture,
    response: Response,
    /// A final (non-1xx) head has arrived.
    answered: bool,
    /// What the server may still send before the client opens more.
    receive_left: u32,
    /// What the client may still send on it.
    send_window: i64,
    /// Request body bytes waiting for window.
    pending: Vec<u8>,
}

/// Where reading stands within the current frame.
#[derive(Debug, Clone, Copy)]
enum Reading {
    /// Between frames: `have` bytes of the next header gathered.
    Header { have: usize },
    /// Streaming a DATA payload through, `left` bytes still to come.
    Data { header: Header, left: u32 },
    /// Gathering the whole payload of any other frame.
    Whole { header: Header },
}

/// What the server said in its SETTINGS.
#[derive(Debug, Clone, Copy)]
struct Peer {
    max_streams: u32,
    initial_window: i64,
    max_frame: usize,
    table_size: usize,
}

/// How the request header blocks use the server's dynamic table on this connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Table {
    /// Nothing sent yet.
    Empty,
    /// The request's fields are in it: send `again`.
    Filled,
    /// Not used: send `plain` (after a size update when `Some`).
    Unused(Option<usize>),
}

/// The client side of one HTTP/2 connection.
#[derive(Debug)]
pub struct Session {
    /// Bytes queued for the server, from [`Session::sent`] on.
    pub out: Vec<u8>,
    /// How much of `out` has been written.
    pub sent: usize,
    decoder: Decoder,
    reading: Reading,
    head: [u8; HEADER_LEN],
    payload: Vec<u8>,
    /// A header block gathered over HEADERS and CONTINUATION frames: its stream and whether it ends the stream.
    block: Option<(u32, bool)>,
    fragments: Vec<u8>,
    peer: Peer,
    ready: bool,
    send_window: i64,
    receive_left: u32,
    next_id: u32,
    /// Open streams in `streams[..open]`; the rest keep their buffers for reuse.
    streams: Vec<Stream>,
    open: usize,
    goaway: Option<u32>,
    table: Table,
    events: VecDeque<Event>,
    finished: Response,
}

impl Default for Session {
    fn default() -> Self {
        Self::new()
    }
}

impl Session {
    /// A session that has queued the preface, its SETTINGS (no push, wide windows) and the connection's
    /// WINDOW_UPDATE.
    pub fn new() -> Session {
        let mut out = Vec::with_capacity(4096);
        out.extend_from_slice(frame::PREFACE);
        frame::write_settings(&mut out, &[(setting::ENABLE_PUSH, 0), (setting::INITIAL_WINDOW_SIZE, RECEIVE_WINDOW)]);
        frame::write_window_update(&mut out, 0, RECEIVE_WINDOW - frame::DEFAULT_WINDOW);
        Session {
            out,
            sent: 0,
            decoder: Decoder::default(),
            reading: Reading::Header { have: 0 },
            head: [0; HEADER_LEN],
            payload: Vec::new(),
            block: None,
            fragments: Vec::new(),
            peer: Peer {
                max_streams: u32::MAX,
                initial_window: i64::from(frame::DEFAULT_WINDOW),
                max_frame: frame::DEFAULT_MAX_FRAME as usize,
                table_size: 4096,
            },
            ready: false,
            send_window: i64::from(frame::DEFAULT_WINDOW),
            receive_left: RECEIVE_WINDOW,
            next_id: 1,
            streams: Vec::new(),
            open: 0,
            goaway: None,
            table: Table::Empty,
            events: VecDeque::new(),
            finished: Response::default(),
        }
    }

    /// True when the server's SETTINGS arrived, no GOAWAY came, and it allows another stream.
    pub fn can_open(&self) -> bool {
        self.ready
            && self.goaway.is_none()
            && (self.open as u64) < u64::from(self.peer.max_streams)
            && self.next_id < frame::MAX_WINDOW
    }

    /// True once the server said GOAWAY and every stream it will still answer has ended: the connection is done.
    pub fn drained(&self) -> bool {
        self.goaway.is_some() && self.open == 0
    }

    /// True once the server said GOAWAY.
    pub fn going_away(&self) -> bool {
        self.goaway.is_some()
    }

    /// Streams open now.
    pub fn open_streams(&self) -> usize {
        self.open
    }

    /// The response of the stream whose end was reported last.
    pub fn response(&self) -> &Response {
        &self.finished
    }

    /// The response of the stream whose end was reported last, to swap out (its buffers come back for reuse).
    pub fn response_mut(&mut self) -> &mut Response {
        &mut self.finished
    }

    /// Opens a stream for `slot` with the request `request` (encoded once) and `body`, keeping what `capture`
    /// says of the response. Returns the stream's id. Call only when [`Session::can_open`].
    pub fn open(&mut self, slot: usize, request: &Request2, body: &[u8], capture: Capture) -> u32 {
        let block = match self.table {
            Table::Empty if request.table_size <= self.peer.table_size => {
                self.table = Table::Filled;
                &request.first[..]
            }
            Table::Empty => {
                self.table = Table::Unused(None);
                &request.plain[..]
            }
            Table::Filled => &request.again[..],
            Table::Unused(_) => &request.plain[..],
        };
        self.open_with_block(slot, block, body, capture)
    }

    /// Opens a stream as [`Session::open`] does, with a `plain` header block made for this request alone.
    pub fn open_plain(&mut self, slot: usize, block: &[u8], body: &[u8], capture: Capture) -> u32 {
        if self.table == Table::Empty {
            self.table = Table::Unused(None);
        }
        self.open_with_block(slot, block, body, capture)
    }

    fn open_with_block(&mut self, slot: usize, block: &[u8], body: &[u8], capture: Capture) -> u32 {
        let id = self.next_id;
        self.next_id += 2;
        if self.open == self.streams.len() {
            self.streams.push(Stream::default());
        }
        let stream = &mut self.streams[self.open];
        self.open += 1;
        stream.id = id;
        stream.slot = slot;
        stream.capture = capture;
        stream.response.clear();
        stream.answered = false;
        stream.receive_left = RECEIVE_WINDOW;
        stream.send_window = self.peer.initial_window;
        stream.pending.clear();
        let max_frame = self.peer.max_frame;
        if let Table::Unused(Some(size)) = self.table {
            // The server shrank its table below what the fields took: say so before the next block.
            let mut prefixed = Vec::with_capacity(block.len() + 4);
            table_size_update(&mut prefixed, size);
            prefixed.extend_from_slice(block);
            frame::write_headers(&mut self.out, id, &prefixed, body.is_empty(), max_frame);
            self.table = Table::Unused(None);
        } else {
            frame::write_headers(&mut self.out, id, block, body.is_empty(), max_frame);
        }
        if !body.is_empty() {
            let k = self.open - 1;
            let allowed = self.send_window.min(self.streams[k].send_window).max(0) as usize;
            let now = body.len().min(allowed);
            frame::write_data(&mut self.out, id, &body[..now], now == body.len(), max_frame);
            self.send_window -= now as i64;
            self.streams[k].send_window -= now as i64;
            self.streams[k].pending.extend_from_slice(&body[now..]);
        }
        id
    }

    /// Gives up on the stream `id` (a timeout): resets it, so its place is free. Its late frames are dropped.
    pub fn cancel(&mut self, id: u32) {
        if let Some(k) = self.find(id) {
            frame::write_rst_stream(&mut self.out, id, frame::CANCEL);
            self.close_stream(k);
        }
    }

    /// Says GOAWAY (the client is closing the connection) with `code`.
    pub fn say_goaway(&mut self, code: u32) {
        frame::write_goaway(&mut self.out, code);
    }

    /// Unsent bytes queued.
    pub fn pending_output(&self) -> &[u8] {
        &self.out[self.sent..]
    }

    /// Notes that `n` more bytes of the queue went out; forgets the queue once it is all written.
    pub fn wrote(&mut self, n: usize) {
        self.sent += n;
        if self.sent == self.out.len() {
            self.out.clear();
            self.sent = 0;
        }
    }

    /// Reads frames from `data[*pos..]` until a stream ends or the bytes run out; `*pos` moves past what was
    /// read. `Ok(None)`: nothing more to report until more bytes arrive.
    pub fn poll(&mut self, data: &[u8], pos: &mut usize) -> Result<Option<Event>, Broken> {
        loop {
            if let Some(event) = self.events.pop_front() {
                return Ok(Some(event));
            }
            if *pos >= data.len() {
                return Ok(None);
            }
            self.step(&data[*pos..], pos)?;
        }
    }

    /// Moves reading on through `data`, which starts at `*pos` of the caller's bytes.
    fn step(&mut self, data: &[u8], pos: &mut usize) -> Result<(), Broken> {
        match self.reading {
            Reading::Header { have } => {
                let take = (HEADER_LEN - have).min(data.len());
                self.head[have..have + take].copy_from_slice(&data[..take]);
                *pos += take;
                if have + take < HEADER_LEN {
                    self.reading = Reading::Header { have: have + take };
                    return Ok(());
                }
                let header = Header::parse(&self.head);
                self.begin(header)
            }
            Reading::Data { header, left } => {
                let take = (left as usize).min(data.len());
                self.data_bytes(header, &data[..take]);
                *pos += take;
                let left = left - take as u32;
                self.reading = Reading::Data { header, left };
                if left == 0 {
                    self.reading = Reading::Header { have: 0 };
                    self.end_data(header);
                }
                Ok(())
            }
            Reading::Whole { header } => {
                let take = (header.len as usize - self.payload.len()).min(data.len());
                self.payload.extend_from_slice(&data[..take]);
                *pos += take;
                if self.payload.len() == header.len as usize {
                    self.reading = Reading::Header { have: 0 };
                    let result = self.whole(header);
                    self.payload.clear();
                    return result;
                }
                Ok(())
            }
        }
    }

    /// A frame header has arrived: decide how its payload is read.
    fn begin(&mut self, header: Header) -> Result<(), Broken> {
        if self.block.is_some_and(|(id, _)| header.kind != kind::CONTINUATION || header.stream != id) {
            return Err(Broken("a header block was interrupted by another frame".into()));
        }
        if !self.ready && header.kind != kind::SETTINGS {
            return Err(Broken(format!(
                "the server's first frame was not SETTINGS (type 0x{:x}, length {}): it does not speak HTTP/2",
                header.kind, header.len
            )));
        }
        if header.len as usize > frame::DEFAULT_MAX_FRAME as usize {
            return Err(Broken(format!("a frame of {} bytes is larger than the client allows", header.len)));
        }
        if header.kind == kind::DATA && !header.has(flag::PADDED) {
            self.take_receive_credit(header)?;
            self.reading = Reading::Data { header, left: header.len };
            if header.len == 0 {
                self.reading = Reading::Header { have: 0 };
                self.end_data(header);
            }
            return Ok(());
        }
        self.reading = Reading::Whole { header };
        if header.len == 0 {
            self.reading = Reading::Header { have: 0 };
            return self.whole(header);
        }
        Ok(())
    }

    /// Charges a DATA frame to the receive windows, opening them again once half is used.
    fn take_receive_credit(&mut self, header: Header) -> Result<(), Broken> {
        if header.stream == 0 {
            return Err(Broken("DATA on stream 0".into()));
        }
        self.receive_left = self.receive_left.saturating_sub(header.len);
        if self.receive_left <= RECEIVE_WINDOW / 2 {
            frame::write_window_update(&mut self.out, 0, RECEIVE_WINDOW - self.receive_left);
            self.receive_left = RECEIVE_WINDOW;
        }
        if let Some(k) = self.find(header.stream) {
            let stream = &mut self.streams[k];
            stream.receive_left = stream.receive_left.saturating_sub(header.len);
            if stream.receive_left <= RECEIVE_WINDOW / 2 && !header.has(flag::END_STREAM) {
                frame::write_window_update(&mut self.out, header.stream, RECEIVE_WINDOW - stream.receive_left);
                stream.receive_left = RECEIVE_WINDOW;
            }
        }
        Ok(())
    }

    /// Body bytes of a DATA frame, as they stream past.
    fn data_bytes(&mut self, header: Header, bytes: &[u8]) {
        if let Some(k) = self.find(header.stream) {
            let stream = &mut self.streams[k];
            stream.response.body_bytes(stream.capture, bytes);
        }
    }

    /// The end of a DATA frame: the end of its stream, with END_STREAM.
    fn end_data(&mut self, header: Header) {
        if header.has(flag::END_STREAM) {
            if let Some(k) = self.find(header.stream) {
                self.finish(k);
            }
        }
    }

    /// A whole frame other than an unpadded DATA frame.
    fn whole(&mut self, header: Header) -> Result<(), Broken> {
        match header.kind {
            kind::DATA => {
                self.take_receive_credit(header)?;
                let payload = std::mem::take(&mut self.payload);
                let body = unpad(header, &payload)?;
                self.data_bytes(header, body);
                self.payload = payload;
                self.end_data(header);
            }
            kind::HEADERS => {
                let payload = std::mem::take(&mut self.payload);
                let mut fragment = unpad(header, &payload)?;
                if header.has(flag::PRIORITY) {
                    fragment = fragment.get(5..).ok_or_else(|| Broken("a HEADERS frame too short".into()))?;
                }
                self.fragments.clear();
                self.fragments.extend_from_slice(fragment);
                self.payload = payload;
                self.block = Some((header.stream, header.has(flag::END_STREAM)));
                if header.has(flag::END_HEADERS) {
                    self.end_block()?;
                }
            }
            kind::CONTINUATION => {
                if self.block.is_none() {
                    return Err(Broken("CONTINUATION without a header block".into()));
                }
                if self.fragments.len() + self.payload.len() > MAX_BLOCK {
                    return Err(Broken("a header block larger than 1 MiB".into()));
                }
                self.fragments.extend_from_slice(&self.payload);
                if header.has(flag::END_HEADERS) {
                    self.end_block()?;
                }
            }
            kind::SETTINGS => self.settings(header)?,
            kind::PING if !header.has(flag::ACK) => {
                frame::write_header(&mut self.out, self.payload.len(), kind::PING, flag::ACK, 0);
                self.out.extend_from_slice(&self.payload);
            }
            kind::RST_STREAM => {
                let code = word(&self.payload, 0)?;
                if let Some(k) = self.find(header.stream) {
                    let slot = self.streams[k].slot;
                    self.close_stream(k);
                    self.events.push_back(Event::Reset { slot, code });
                }
            }
            kind::GOAWAY => {
                let last = word(&self.payload, 0)? & frame::MAX_WINDOW;
                self.goaway = Some(self.goaway.map_or(last, |before| before.min(last)));
                let mut k = 0;
                while k < self.open {
                    if self.streams[k].id > last {
                        let slot = self.streams[k].slot;
                        self.close_stream(k);
                        self.events.push_back(Event::Refused { slot });
                    } else {
                        k += 1;
                    }
                }
            }
            kind::WINDOW_UPDATE => {
                let increment = i64::from(word(&self.payload, 0)? & frame::MAX_WINDOW);
                if header.stream == 0 {
                    self.send_window += increment;
                } else if let Some(k) = self.find(header.stream) {
                    self.streams[k].send_window += increment;
                }
                self.send_pending();
            }
            kind::PUSH_PROMISE => return Err(Broken("a PUSH_PROMISE although the client disabled push".into())),
            _ => {} // PRIORITY, a PING's ACK, and unknown types are ignored
        }
        Ok(())
    }

    /// A complete header block: decode it (always, to keep the decoder's table in step) and apply it.
    fn end_block(&mut self) -> Result<(), Broken> {
        let Some((id, end_stream)) = self.block.take() else { return Ok(()) };
        let found = self.find(id);
        let Session { decoder, fragments, streams, .. } = self;
        let stream = found.map(|k| &mut streams[k]);
        let capture = stream.as_ref().map_or(Capture::Nothing, |s| s.capture);
        let mut head = Head::new(stream.filter(|s| !s.answered).map(|s| &mut s.response.head), capture);
        decoder
            .decode(fragments, |name, value| head.field(name, value))
            .map_err(|e| Broken(format!("a header block does not decode ({})", e.0)))?;
        let status = head.finish();
        let Some(k) = found else { return Ok(()) };
        let stream = &mut self.streams[k];
        if let Err(kind) = status {
            // A head past the client's limits is valid HTTP/2: the client only declines to read it.
            let slot = stream.slot;
            frame::write_rst_stream(&mut self.out, id, frame::CANCEL);
            self.close_stream(k);
            self.events.push_back(Event::Broken { slot, kind });
            return Ok(());
        }
        let status = status.unwrap_or_default();
        if !stream.answered {
            if (100..200).contains(&status) && !end_stream {
                stream.response.head.clear(); // an interim answer: the final one follows
            } else if status == 0 {
                let slot = stream.slot;
                frame::write_rst_stream(&mut self.out, id, frame::PROTOCOL_ERROR);
                self.close_stream(k);
                self.events.push_back(Event::Broken { slot, kind: ErrorKind::Malformed });
                return Ok(());
            } else {
                stream.answered = true;
                stream.response.status = status;
            }
        }
        if end_stream {
            self.finish(k);
        }
        Ok(())
    }

    /// The server's SETTINGS: apply them and acknowledge.
    fn settings(&mut self, header: Header) -> Result<(), Broken> {
        if header.has(flag::ACK) {
            return Ok(());
        }
        if header.stream != 0 || !self.payload.len().is_multiple_of(6) {
            return Err(Broken("a malformed SETTINGS frame".into()));
        }
        for entry in self.payload.chunks_exact(6) {
            let id = u16::from_be_bytes([entry[0], entry[1]]);
            let value = u32::from_be_bytes([entry[2], entry[3], entry[4], entry[5]]);
            match id {
                setting::MAX_CONCURRENT_STREAMS => self.peer.max_streams = value,
                setting::INITIAL_WINDOW_SIZE => {
                    if value > frame::MAX_WINDOW {
                        return Err(Broken("an initial window larger than 2^31-1".into()));
                    }
                    let delta = i64::from(value) - self.peer.initial_window;
                    self.peer.initial_window = i64::from(value);
                    self.streams[..self.open].iter_mut().for_each(|s| s.send_window += delta);
                }
                setting::MAX_FRAME_SIZE => {
                    if !(frame::DEFAULT_MAX_FRAME..=(1 << 24) - 1).contains(&value) {
                        return Err(Broken(format!("a max frame size of {value} is out of range")));
                    }
                    self.peer.max_frame = value as usize;
                }
                setting::HEADER_TABLE_SIZE => {
                    self.peer.table_size = value as usize;
                    if self.table == Table::Filled {
                        self.table = Table::Unused(Some(value as usize));
                    }
                }
                _ => {}
            }
        }
        frame::write_header(&mut self.out, 0, kind::SETTINGS, flag::ACK, 0);
        if !self.ready {
            self.ready = true;
            self.events.push_back(Event::Ready);
        }
        self.send_pending();
        Ok(())
    }

    /// Sends what request bodies the windows now allow.
    fn send_pending(&mut self) {
        let max_frame = self.peer.max_frame;
        for stream in &mut self.streams[..self.open] {
            if stream.pending.is_empty() {
                continue;
            }
            let allowed = self.send_window.min(stream.send_window).max(0) as usize;
            let now = stream.pending.len().min(allowed);
            if now == 0 {
                continue;
            }
            frame::write_data(&mut self.out, stream.id, &stream.pending[..now], now == stream.pending.len(), max_frame);
            stream.pending.drain(..now);
            self.send_window -= now as i64;
            stream.send_window -= now as i64;
        }
    }

    /// True when the stream of `slot` still has request body bytes waiting for the server's window.
    pub fn stalled(&self, id: u32) -> bool {
        self.find(id).is_some_and(|k| !self.streams[k].pending.is_empty())
    }

    /// Stream `k` got its whole response.
    fn finish(&mut self, k: usize) {
        let slot = self.streams[k].slot;
        if !self.streams[k].answered {
            frame::write_rst_stream(&mut self.out, self.streams[k].id, frame::PROTOCOL_ERROR);
            self.close_stream(k);
            self.events.push_back(Event::Broken { slot, kind: ErrorKind::Malformed });
            return;
        }
        std::mem::swap(&mut self.finished, &mut self.streams[k].response);
        self.close_stream(k);
        self.events.push_back(Event::Answered { slot });
    }

    fn find(&self, id: u32) -> Option<usize> {
        self.streams[..self.open].iter().position(|s| s.id == id)
    }

    /// Forgets stream `k`, keeping its buffers for the next stream.
    fn close_stream(&mut self, k: usize) {
        self.open -= 1;
        self.streams.swap(k, self.open);
    }
}

/// The payload of a frame without its padding.
fn unpad(header: Header, payload: &[u8]) -> Result<&[u8], Broken> {
    if !header.has(flag::PADDED) {
        return Ok(payload);
    }
    let pad = usize::from(*payload.first().ok_or_else(|| Broken("a padded frame without its pad length".into()))?);
    payload
        .get(1..payload.len().saturating_sub(pad))
        .filter(|_| pad < payload.len())
        .ok_or_else(|| Broken("padding longer than the frame".into()))
}

/// The big-endian 32-bit word at `at`.
fn word(payload: &[u8], at: usize) -> Result<u32, Broken> {
    payload
        .get(at..at + 4)
        .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
        .ok_or_else(|| Broken("a frame too short for its type".into()))
}
