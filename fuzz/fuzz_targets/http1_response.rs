//! The HTTP/1.x response parser and chunked decoder, on whatever a server might send.
//!
//! Input: two control bytes (the size of the pieces the bytes arrive in; whether the request was HEAD and what
//! is captured), then the bytes of the connection. Three checks beyond "no panic":
//! - fed in one piece or in pieces of any size, the parser reaches the same outcome (status, body bytes, close,
//!   bytes used, captured head and body, or the same error);
//! - the head it reads agrees with `httparse` reading the whole input at once: same status, and an error
//!   wherever `httparse` finds one;
//! - a chunked body decodes to what a plain reference decoder, written from RFC 9112 section 7.1 over the whole
//!   input, makes of it.
#![no_main]

use libfuzzer_sys::fuzz_target;
use shootout_engine::http::response::{Capture, Malformed, Progress, ResponseParser};

fuzz_target!(|data: &[u8]| {
    let [step, options, wire @ ..] = data else { return };
    let no_body = options & 1 != 0;
    let capture = if options & 2 != 0 { Capture::HeadAndBody } else { Capture::Head };
    let whole = parse(wire, wire.len().max(1), no_body, capture);
    let split = parse(wire, usize::from(*step) + 1, no_body, capture);
    assert_eq!(whole, split, "one piece against pieces of {} bytes", usize::from(*step) + 1);
    if !no_body {
        against_reference(wire, &whole, capture == Capture::HeadAndBody);
    }
});

/// What the parser made of a connection's bytes.
#[derive(Debug, PartialEq, Eq)]
struct Outcome {
    status: u16,
    body_bytes: u64,
    close: bool,
    /// Bytes of the input that belonged to the response (all of them when it ran to the end of the input).
    used: usize,
    complete: bool,
    head: Vec<u8>,
    body: Vec<u8>,
}

fn parse(wire: &[u8], step: usize, no_body: bool, capture: Capture) -> Result<Outcome, Malformed> {
    let mut parser = ResponseParser::new();
    parser.reset_capturing(no_body, capture);
    let mut fed = 0;
    for piece in wire.chunks(step) {
        if let Progress::Complete { used } = parser.feed(piece)? {
            assert!(used <= piece.len(), "used {used} of a piece of {}", piece.len());
            return Ok(outcome(&parser, fed + used, true));
        }
        fed += piece.len();
    }
    parser.finish_at_eof()?;
    Ok(outcome(&parser, fed, false))
}

fn outcome(parser: &ResponseParser, used: usize, complete: bool) -> Outcome {
    Outcome {
        status: parser.status(),
        body_bytes: parser.body_bytes(),
        close: parser.closes_connection(),
        used,
        complete,
        head: parser.head().to_vec(),
        body: parser.body().to_vec(),
    }
}

/// Checks the parser's outcome against `httparse` on the whole input and, for a chunked body, against
/// [`dechunk`] (its bytes too when the body was captured).
fn against_reference(wire: &[u8], outcome: &Result<Outcome, Malformed>, body_captured: bool) {
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut response = httparse::Response::new(&mut headers);
    let head_len = match response.parse(wire) {
        Err(_) => {
            assert!(outcome.is_err(), "httparse refuses the head, the parser took it: {outcome:?}");
            return;
        }
        Ok(httparse::Status::Partial) => return,
        Ok(httparse::Status::Complete(n)) => n,
    };
    let status = response.code.unwrap_or(0);
    if (100..200).contains(&status) || status == 204 || status == 304 {
        return; // an interim head (another follows) or a status without a body
    }
    let chunked = response
        .headers
        .iter()
        .rfind(|h| h.name.eq_ignore_ascii_case("transfer-encoding"))
        .and_then(|h| h.value.split(|&b| b == b',').next_back())
        .is_some_and(|token| token.trim_ascii().eq_ignore_ascii_case(b"chunked"));
    let reference = if chunked { Some(dechunk(&wire[head_len..])) } else { None };
    let outcome = match outcome {
        Ok(outcome) => outcome,
        Err(e @ (Malformed::Chunk | Malformed::Truncated)) => {
            if let Some(Dechunked::Body { .. }) = reference {
                panic!("the reference decodes the chunked body the parser refused ({e})");
            }
            return;
        }
        Err(_) => return,
    };
    assert_eq!(outcome.status, status, "status");
    assert_eq!(outcome.head, wire[..head_len], "captured head");
    let Some(reference) = reference else { return };
    match reference {
        Dechunked::Body { body, used } => {
            assert!(outcome.complete, "the reference ends the body after {used} bytes");
            assert_eq!(outcome.used, head_len + used, "where the body ends");
            assert_eq!(outcome.body_bytes, body.len() as u64, "body bytes");
            if body_captured {
                assert_eq!(outcome.body, body, "captured body");
            } else {
                assert!(outcome.body.is_empty(), "a body kept when only the head was asked for");
            }
        }
        Dechunked::Invalid | Dechunked::Incomplete => {
            panic!("the reference does not decode the chunked body the parser took: {outcome:?}")
        }
    }
}

/// What [`dechunk`] made of a chunked body.
enum Dechunked {
    /// The body, and the bytes its framing took.
    Body { body: Vec<u8>, used: usize },
    /// The framing is broken.
    Invalid,
    /// The input ends inside the body.
    Incomplete,
}

/// A reference chunked decoder over a whole input: chunk-size lines of hex digits with optional extensions (a
/// `;`, space or tab, then anything but a line end), data, then a line end; after the last chunk (size 0),
/// trailer lines until an empty one. A line end is CRLF or a bare LF; a CR must be followed by LF.
fn dechunk(input: &[u8]) -> Dechunked {
    let mut body = Vec::new();
    let mut at = 0;
    loop {
        let Some(line) = line_at(input, at) else { return Dechunked::Incomplete };
        let Some(text) = line.text else { return Dechunked::Invalid };
        at = line.next;
        let digits = text.iter().take_while(|b| b.is_ascii_hexdigit()).count();
        let (size, rest) = text.split_at(digits);
        if digits == 0 || !(rest.is_empty() || matches!(rest[0], b';' | b' ' | b'\t')) {
            return Dechunked::Invalid;
        }
        let significant = size.iter().skip_while(|&&b| b == b'0').count();
        if significant > 16 {
            return Dechunked::Invalid;
        }
        let size = size.iter().fold(0u64, |v, b| v * 16 + u64::from((*b as char).to_digit(16).unwrap()));
        if size == 0 {
            break;
        }
        if (input.len() - at) as u64 <= size {
            return Dechunked::Incomplete;
        }
        body.extend_from_slice(&input[at..at + size as usize]);
        at += size as usize;
        match line_at(input, at) {
            None => return Dechunked::Incomplete,
            Some(Line { text: Some([]), next }) => at = next,
            Some(_) => return Dechunked::Invalid,
        }
    }
    loop {
        let Some(line) = line_at(input, at) else { return Dechunked::Incomplete };
        let Some(text) = line.text else { return Dechunked::Invalid };
        at = line.next;
        if text.is_empty() {
            return Dechunked::Body { body, used: at };
        }
    }
}

/// One line of input: its text (`None` when a CR inside it is not followed by LF) and where the next starts.
struct Line<'a> {
    text: Option<&'a [u8]>,
    next: usize,
}

/// The line starting at `at`, or `None` when the input ends before its line end. A CR not followed by LF makes
/// the line invalid as soon as it is seen (as a streaming decoder finds it).
fn line_at(input: &[u8], at: usize) -> Option<Line<'_>> {
    let rest = &input[at..];
    for (i, &b) in rest.iter().enumerate() {
        match b {
            b'\n' => return Some(Line { text: Some(&rest[..i]), next: at + i + 1 }),
            b'\r' => {
                return match rest.get(i + 1) {
                    Some(b'\n') => Some(Line { text: Some(&rest[..i]), next: at + i + 2 }),
                    Some(_) => Some(Line { text: None, next: at + i + 1 }),
                    None => None,
                };
            }
            _ => {}
        }
    }
    None
}
