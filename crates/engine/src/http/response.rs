//! [`ResponseParser`]: an HTTP/1.x response parser fed with bytes as they arrive.
//!
//! The head (status line and headers) is parsed by `httparse`, straight from the read buffer when it arrives in
//! one piece, otherwise from a small carry buffer that keeps its capacity between responses. Bodies framed by
//! Content-Length, chunked transfer coding, or the end of the connection are counted and discarded as they stream
//! through, so a body of any size costs constant memory. Framing follows RFC 9112 section 6.3.

use thiserror::Error;

/// Largest response head accepted (docs/reference/outputs.md's "Errors" row says so).
pub const MAX_HEAD: usize = 64 * 1024;
/// Most headers accepted in one response (docs/reference/outputs.md's "Errors" row says so).
pub const MAX_HEADERS: usize = 64;
/// Most body bytes kept when a response is captured (for checks and extraction); the rest is still read.
pub const MAX_CAPTURE: usize = 1 << 20;

/// Why a response is not valid HTTP/1.x.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum Malformed {
    /// The head could not be parsed.
    #[error("bad response head: {0}")]
    Head(&'static str),
    /// The head grew past the limit without ending.
    #[error("response head longer than {MAX_HEAD} bytes")]
    HeadTooLarge,
    /// The head had more headers than the parser holds.
    #[error("more than {MAX_HEADERS} headers in the response")]
    TooManyHeaders,
    /// Content-Length was not a number, or two differed.
    #[error("bad Content-Length")]
    ContentLength,
    /// The chunked framing was broken.
    #[error("bad chunked framing")]
    Chunk,
    /// The connection ended before a framed body did.
    #[error("connection closed mid-response")]
    Truncated,
}

impl Malformed {
    /// The error a request whose response was refused so is counted as: a head too large or with too many headers
    /// apart from the rest, which is not valid HTTP/1.x.
    pub fn kind(&self) -> shootout_model::ErrorKind {
        match self {
            Malformed::HeadTooLarge => shootout_model::ErrorKind::HeadTooLarge,
            Malformed::TooManyHeaders => shootout_model::ErrorKind::TooManyHeaders,
            _ => shootout_model::ErrorKind::Malformed,
        }
    }
}

/// What a call to [`ResponseParser::feed`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// The response is not complete; all bytes were used.
    NeedMore,
    /// The response ended after `used` bytes of this input; any further bytes were not part of it.
    Complete {
        /// Bytes of the input that belonged to the response.
        used: usize,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Chunk {
    Size { value: u64, digits: bool, ext: bool },
    SizeLf { value: u64, digits: bool },
    Data(u64),
    DataCr,
    DataLf,
    Trailer { line_start: bool },
    TrailerLf { line_start: bool },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Head,
    Length(u64),
    Chunked(Chunk),
    UntilClose,
    Done,
}

/// Parses one response at a time; [`ResponseParser::reset`] readies it for the next on the same connection.
#[derive(Debug)]
pub struct ResponseParser {
    carry: Vec<u8>,
    state: State,
    status: u16,
    close: bool,
    no_body: bool,
    body_bytes: u64,
    capture: Capture,
    head: Vec<u8>,
    body: Vec<u8>,
}

/// What of a response to keep.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Capture {
    /// Nothing: count and drop (the load path).
    #[default]
    Nothing,
    /// The head (for cookies and headers).
    Head,
    /// The head and up to [`MAX_CAPTURE`] bytes of body.
    HeadAndBody,
}

impl Default for ResponseParser {
    fn default() -> Self {
        Self::new()
    }
}

impl ResponseParser {
    /// A parser waiting for a response head.
    pub fn new() -> Self {
        ResponseParser {
            carry: Vec::new(),
            state: State::Head,
            status: 0,
            close: false,
            no_body: false,
            body_bytes: 0,
            capture: Capture::Nothing,
            head: Vec::new(),
            body: Vec::new(),
        }
    }

    /// Prepares for the next response. `no_body` is true when the request was HEAD.
    pub fn reset(&mut self, no_body: bool) {
        self.reset_capturing(no_body, Capture::Nothing);
    }

    /// Prepares for the next response, keeping what `capture` says (see [`Self::head`], [`Self::body`]).
    pub fn reset_capturing(&mut self, no_body: bool, capture: Capture) {
        self.capture = capture;
        self.head.clear();
        self.body.clear();
        self.carry.clear();
        self.state = State::Head;
        self.status = 0;
        self.close = false;
        self.no_body = no_body;
        self.body_bytes = 0;
    }

    /// Status code of the response (0 until the head has been parsed).
    pub fn status(&self) -> u16 {
        self.status
    }

    /// True when the server said the connection ends after this response (or its body runs to the close).
    pub fn closes_connection(&self) -> bool {
        self.close
    }

    /// True once any part of a response has been seen.
    pub fn started(&self) -> bool {
        self.state != State::Head || !self.carry.is_empty()
    }

    /// Body bytes seen so far.
    pub fn body_bytes(&self) -> u64 {
        self.body_bytes
    }

    /// The captured head (status line and headers), when capturing.
    pub fn head(&self) -> &[u8] {
        &self.head
    }

    /// The captured body (at most [`MAX_CAPTURE`] bytes, de-chunked), when capturing it.
    pub fn body(&self) -> &[u8] {
        &self.body
    }

    /// Counts body bytes, keeping them when capturing.
    fn take_body(&mut self, bytes: &[u8]) {
        self.body_bytes += bytes.len() as u64;
        if self.capture == Capture::HeadAndBody && self.body.len() < MAX_CAPTURE {
            let room = MAX_CAPTURE - self.body.len();
            self.body.extend_from_slice(&bytes[..bytes.len().min(room)]);
        }
    }

    /// Feeds the next bytes read from the connection.
    pub fn feed(&mut self, data: &[u8]) -> Result<Progress, Malformed> {
        let mut at = 0;
        loop {
            match self.state {
                State::Head => match self.parse_head(&data[at..])? {
                    Some(used) => at += used,
                    None => return Ok(Progress::NeedMore),
                },
                State::Length(remaining) => {
                    let take = remaining.min((data.len() - at) as u64);
                    self.take_body(&data[at..at + take as usize]);
                    at += take as usize;
                    if take == remaining {
                        self.state = State::Done;
                    } else {
                        self.state = State::Length(remaining - take);
                        return Ok(Progress::NeedMore);
                    }
                }
                State::Chunked(_) => {
                    at += self.feed_chunked(&data[at..])?;
                    if self.state != State::Done {
                        return Ok(Progress::NeedMore);
                    }
                }
                State::UntilClose => {
                    self.take_body(&data[at..]);
                    return Ok(Progress::NeedMore);
                }
                State::Done => return Ok(Progress::Complete { used: at }),
            }
        }
    }

    /// The connection reached end of file. Completes a body that runs to the close; otherwise the response was
    /// cut short.
    pub fn finish_at_eof(&mut self) -> Result<(), Malformed> {
        match self.state {
            State::UntilClose | State::Done => {
                self.state = State::Done;
                Ok(())
            }
            _ => Err(Malformed::Truncated),
        }
    }

    /// Parses a head from the carry buffer plus `data`. Returns the bytes of `data` used once a final (non-1xx)
    /// head is complete, or `None` when more is needed.
    fn parse_head(&mut self, data: &[u8]) -> Result<Option<usize>, Malformed> {
        let carried = self.carry.len();
        let input: &[u8] = if carried == 0 {
            data
        } else {
            self.carry.extend_from_slice(data);
            &self.carry
        };
        let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
        let mut response = httparse::Response::new(&mut headers);
        let head_len = match response.parse(input) {
            // The limit holds however the head arrived: in one read or in many.
            Ok(httparse::Status::Complete(n)) if n > MAX_HEAD => return Err(Malformed::HeadTooLarge),
            Ok(httparse::Status::Complete(n)) => n,
            Ok(httparse::Status::Partial) => {
                if input.len() > MAX_HEAD {
                    return Err(Malformed::HeadTooLarge);
                }
                if carried == 0 {
                    self.carry.extend_from_slice(data);
                }
                return Ok(None);
            }
            Err(httparse::Error::TooManyHeaders) => return Err(Malformed::TooManyHeaders),
            Err(e) => return Err(Malformed::Head(head_error(e))),
        };
        let status = response.code.unwrap_or(0);
        let http10 = response.version == Some(0);
        let framing = Framing::of(response.headers, http10)?;
        // A redirect's head is kept whatever was asked: its Location and cookies decide what comes next.
        if self.capture != Capture::Nothing || (300..400).contains(&status) {
            self.head.clear();
            self.head.extend_from_slice(&input[..head_len]);
        }
        let used = head_len - carried;
        self.carry.clear();
        if (100..200).contains(&status) && status != 101 {
            return Ok(Some(used)); // interim response: the final head follows
        }
        self.status = status;
        self.close = framing.close;
        self.state = if self.no_body || status == 204 || status == 304 || (100..200).contains(&status) {
            State::Done
        } else if framing.chunked {
            State::Chunked(Chunk::Size { value: 0, digits: false, ext: false })
        } else if let Some(length) = framing.length {
            if length == 0 {
                State::Done
            } else {
                State::Length(length)
            }
        } else {
            self.close = true;
            State::UntilClose
        };
        Ok(Some(used))
    }

    /// Runs the chunked decoder over `data`; returns the bytes used (all of them unless the body ended).
    fn feed_chunked(&mut self, data: &[u8]) -> Result<usize, Malformed> {
        let State::Chunked(mut chunk) = self.state else { unreachable!("only called in chunked state") };
        let mut at = 0;
        while at < data.len() {
            if let Chunk::Data(remaining) = chunk {
                let take = remaining.min((data.len() - at) as u64);
                self.take_body(&data[at..at + take as usize]);
                at += take as usize;
                chunk = if take == remaining { Chunk::DataCr } else { Chunk::Data(remaining - take) };
                continue;
            }
            let byte = data[at];
            at += 1;
            chunk = match chunk {
                Chunk::Size { value, digits, ext } => match (byte, ext) {
                    (b'\r', _) => Chunk::SizeLf { value, digits },
                    (b'\n', _) => end_of_size_line(value, digits)?,
                    (b';' | b' ' | b'\t', _) => Chunk::Size { value, digits, ext: true },
                    (_, true) => Chunk::Size { value, digits, ext },
                    (_, false) => {
                        let digit = (byte as char).to_digit(16).ok_or(Malformed::Chunk)?;
                        let value = value.checked_mul(16).ok_or(Malformed::Chunk)? + u64::from(digit);
                        Chunk::Size { value, digits: true, ext }
                    }
                },
                Chunk::SizeLf { value, digits } if byte == b'\n' => end_of_size_line(value, digits)?,
                Chunk::DataCr if byte == b'\r' => Chunk::DataLf,
                Chunk::DataCr | Chunk::DataLf if byte == b'\n' => Chunk::Size { value: 0, digits: false, ext: false },
                Chunk::Trailer { line_start } => match byte {
                    b'\r' => Chunk::TrailerLf { line_start },
                    b'\n' if line_start => return Ok(self.chunked_done(at)),
                    b'\n' => Chunk::Trailer { line_start: true },
                    _ => Chunk::Trailer { line_start: false },
                },
                Chunk::TrailerLf { line_start: true } if byte == b'\n' => return Ok(self.chunked_done(at)),
                Chunk::TrailerLf { line_start: false } if byte == b'\n' => Chunk::Trailer { line_start: true },
                _ => return Err(Malformed::Chunk),
            };
        }
        self.state = State::Chunked(chunk);
        Ok(at)
    }

    fn chunked_done(&mut self, used: usize) -> usize {
        self.state = State::Done;
        used
    }
}

/// After a chunk-size line: the last chunk (size 0) leads to the trailer section, others to their data.
fn end_of_size_line(value: u64, digits: bool) -> Result<Chunk, Malformed> {
    if !digits {
        return Err(Malformed::Chunk);
    }
    Ok(if value == 0 { Chunk::Trailer { line_start: true } } else { Chunk::Data(value) })
}

/// How a response's body is delimited and whether its connection stays open.
struct Framing {
    length: Option<u64>,
    chunked: bool,
    close: bool,
}

impl Framing {
    fn of(headers: &[httparse::Header<'_>], http10: bool) -> Result<Framing, Malformed> {
        let mut framing = Framing { length: None, chunked: false, close: http10 };
        for header in headers {
            let name = header.name;
            if name.eq_ignore_ascii_case("content-length") {
                let value = std::str::from_utf8(header.value).map_err(|_| Malformed::ContentLength)?;
                let length: u64 = value.trim().parse().map_err(|_| Malformed::ContentLength)?;
                if framing.length.is_some_and(|seen| seen != length) {
                    return Err(Malformed::ContentLength);
                }
                framing.length = Some(length);
            } else if name.eq_ignore_ascii_case("transfer-encoding") {
                framing.chunked = last_token(header.value).is_some_and(|t| t.eq_ignore_ascii_case(b"chunked"));
            } else if name.eq_ignore_ascii_case("connection") {
                for token in header.value.split(|&b| b == b',') {
                    let token = token.trim_ascii();
                    if token.eq_ignore_ascii_case(b"close") {
                        framing.close = true;
                    } else if token.eq_ignore_ascii_case(b"keep-alive") && http10 {
                        framing.close = false;
                    }
                }
            }
        }
        Ok(framing)
    }
}

fn last_token(value: &[u8]) -> Option<&[u8]> {
    value.split(|&b| b == b',').next_back().map(<[u8]>::trim_ascii)
}

fn head_error(e: httparse::Error) -> &'static str {
    match e {
        httparse::Error::HeaderName => "invalid header name",
        httparse::Error::HeaderValue => "invalid header value",
        httparse::Error::NewLine => "invalid line ending",
        httparse::Error::Status => "invalid status code",
        httparse::Error::Token => "invalid token",
        httparse::Error::TooManyHeaders => "too many headers", // counted apart: Malformed::TooManyHeaders
        httparse::Error::Version => "not HTTP/1.x",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `wire` in pieces of `step` bytes and returns (status, body bytes, close, used of the last piece).
    fn parse_in_steps(wire: &[u8], step: usize) -> Result<(u16, u64, bool, usize), Malformed> {
        let mut p = ResponseParser::new();
        let mut fed = 0;
        for piece in wire.chunks(step) {
            fed += piece.len();
            if let Progress::Complete { used } = p.feed(piece)? {
                return Ok((p.status(), p.body_bytes(), p.closes_connection(), fed - piece.len() + used));
            }
        }
        p.finish_at_eof()?;
        Ok((p.status(), p.body_bytes(), p.closes_connection(), fed))
    }

    fn every_step(wire: &[u8]) -> (u16, u64, bool, usize) {
        let whole = parse_in_steps(wire, wire.len()).unwrap();
        for step in 1..wire.len() {
            assert_eq!(parse_in_steps(wire, step).unwrap(), whole, "split every {step} bytes");
        }
        whole
    }

    #[test]
    fn content_length() {
        let wire = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";
        assert_eq!(every_step(wire), (200, 5, false, wire.len()));
    }

    #[test]
    fn chunked_with_extensions_and_trailers() {
        let wire = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;x=y\r\nhello\r\nA\r\n0123456789\r\n0\r\nX-T: 1\r\n\r\n";
        assert_eq!(every_step(wire), (200, 15, false, wire.len()));
    }

    #[test]
    fn chunked_without_trailers_stops_at_its_end() {
        let mut wire = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n".to_vec();
        let len = wire.len();
        wire.extend_from_slice(b"extra");
        let (_, body, _, used) = parse_in_steps(&wire, wire.len()).unwrap();
        assert_eq!((body, used), (3, len));
    }

    #[test]
    fn close_delimited_body_ends_at_eof() {
        let wire = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nsome bytes";
        assert_eq!(every_step(wire), (200, 10, true, wire.len()));
    }

    #[test]
    fn interim_responses_are_skipped_and_no_body_statuses_have_none() {
        let wire = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n";
        assert_eq!(every_step(wire), (204, 0, false, wire.len()));
    }

    #[test]
    fn head_request_has_no_body() {
        let mut p = ResponseParser::new();
        p.reset(true);
        let wire = b"HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\n";
        assert_eq!(p.feed(wire), Ok(Progress::Complete { used: wire.len() }));
    }

    #[test]
    fn connection_semantics() {
        let close = b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n";
        assert!(every_step(close).2);
        let http10 = b"HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n";
        assert!(every_step(http10).2);
        let http10_ka = b"HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 0\r\n\r\n";
        assert!(!every_step(http10_ka).2);
    }

    #[test]
    fn parser_is_reusable() {
        let mut p = ResponseParser::new();
        for _ in 0..3 {
            p.reset(false);
            let wire = b"HTTP/1.1 404 Not Found\r\nContent-Length: 2\r\n\r\nno";
            assert_eq!(p.feed(wire), Ok(Progress::Complete { used: wire.len() }));
            assert_eq!(p.status(), 404);
        }
    }

    #[test]
    fn a_head_past_the_header_count_is_refused_for_it() {
        let cookies: String = (0..MAX_HEADERS).map(|i| format!("Set-Cookie: c{i}=v\r\n")).collect();
        let wire = format!("HTTP/1.1 200 OK\r\n{cookies}Content-Length: 0\r\n\r\n");
        let refused = parse_in_steps(wire.as_bytes(), wire.len());
        assert_eq!(refused, Err(Malformed::TooManyHeaders));
        assert_eq!(Malformed::TooManyHeaders.kind(), shootout_model::ErrorKind::TooManyHeaders);
        assert_eq!(Malformed::HeadTooLarge.kind(), shootout_model::ErrorKind::HeadTooLarge);
        assert_eq!(Malformed::Chunk.kind(), shootout_model::ErrorKind::Malformed);
    }

    #[test]
    fn malformed_inputs() {
        let cases: [&[u8]; 5] = [
            b"HTTP/1.1 abc OK\r\n\r\n",
            b"SSH-2.0-OpenSSH\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        ];
        for wire in cases {
            assert!(parse_in_steps(wire, wire.len()).is_err(), "{}", String::from_utf8_lossy(wire));
        }
    }

    #[test]
    fn truncated_body_is_an_error_at_eof() {
        let wire = b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort";
        assert_eq!(parse_in_steps(wire, wire.len()), Err(Malformed::Truncated));
    }

    #[test]
    fn captures_head_and_dechunked_body_when_asked() {
        let wire =
            b"HTTP/1.1 200 OK\r\nSet-Cookie: a=1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n";
        let mut p = ResponseParser::new();
        for step in [wire.len(), 1, 7] {
            p.reset_capturing(false, Capture::HeadAndBody);
            for piece in wire.chunks(step) {
                let _ = p.feed(piece).unwrap();
            }
            assert!(p.head().starts_with(b"HTTP/1.1 200 OK\r\nSet-Cookie: a=1"));
            assert_eq!(p.body(), b"abcde");
        }
        p.reset(false);
        p.feed(wire).unwrap();
        assert!(p.head().is_empty() && p.body().is_empty(), "nothing kept on the load path");
    }

    #[test]
    fn huge_head_is_rejected() {
        let mut p = ResponseParser::new();
        let mut wire = b"HTTP/1.1 200 OK\r\nX-Pad: ".to_vec();
        wire.resize(wire.len() + 100_000, b'a');
        let result = wire.chunks(1000).map(|piece| p.feed(piece)).find(Result::is_err);
        assert_eq!(result, Some(Err(Malformed::HeadTooLarge)));
    }

    #[test]
    fn a_huge_head_is_rejected_also_when_it_arrives_whole() {
        let mut wire = b"HTTP/1.1 200 OK\r\nX-Pad: ".to_vec();
        wire.resize(wire.len() + 70_000, b'a');
        wire.extend_from_slice(b"\r\nContent-Length: 0\r\n\r\n");
        for step in [wire.len(), 4096] {
            assert_eq!(parse_in_steps(&wire, step), Err(Malformed::HeadTooLarge), "in pieces of {step}");
        }
    }
}
