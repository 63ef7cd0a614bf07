//! What HTTP/2 and HTTP/3 share in reading a response that arrives on a stream: [`Response`], what the worker
//! reads of the stream that ended last, and [`Head`], which builds it from the decoded fields of a header block
//! or field section. The head is written as `HTTP/1.1 STATUS` and `name: value` lines, so that checks, cookies and
//! redirects read it as they read an HTTP/1.1 head; and it is held to HTTP/1.1's limits (its size so written, and
//! its number of fields), so that a head too long or with too many headers counts alike over every protocol.

use shootout_model::ErrorKind;

use crate::http::response::{Capture, MAX_CAPTURE, MAX_HEAD, MAX_HEADERS};

/// The response of a stream.
#[derive(Debug, Default)]
pub struct Response {
    /// Its `:status`.
    pub status: u16,
    /// Its head as `HTTP/1.1 STATUS` and `name: value` lines (when captured, and always for a redirect).
    pub head: Vec<u8>,
    /// Its body, up to [`MAX_CAPTURE`] bytes (when captured).
    pub body: Vec<u8>,
    /// The body went on past [`MAX_CAPTURE`] bytes: `body` holds only its start.
    pub cut: bool,
}

impl Response {
    /// Empty, for the next stream (its buffers kept).
    pub fn clear(&mut self) {
        self.status = 0;
        self.head.clear();
        self.body.clear();
        self.cut = false;
    }

    /// Keeps what `capture` asks of `bytes`, the next piece of the body.
    pub fn body_bytes(&mut self, capture: Capture, bytes: &[u8]) {
        if capture != Capture::HeadAndBody {
            return;
        }
        let room = MAX_CAPTURE.saturating_sub(self.body.len());
        self.body.extend_from_slice(&bytes[..bytes.len().min(room)]);
        self.cut |= bytes.len() > room;
    }
}

/// A head being built from its fields, in the order they were decoded.
#[derive(Debug)]
pub struct Head<'a> {
    /// The `:status` read so far (0: none yet).
    pub status: u16,
    capture: bool,
    head: Option<&'a mut Vec<u8>>,
    /// Its fields other than pseudo-fields, and its size as HTTP/1.1 lines, so far.
    fields: usize,
    size: usize,
}

impl<'a> Head<'a> {
    /// Writes into `head` (cleared) when given one; keeps the fields when `capture` says so or the status is a
    /// redirect's (its Location and cookies decide what comes next).
    pub fn new(mut head: Option<&'a mut Vec<u8>>, capture: Capture) -> Head<'a> {
        if let Some(h) = head.as_mut() {
            h.clear();
        }
        Head { status: 0, capture: capture != Capture::Nothing, head, fields: 0, size: 0 }
    }

    /// One decoded field.
    pub fn field(&mut self, name: &[u8], value: &[u8]) {
        // As written below: `HTTP/1.1 STATUS \r\n`, or `name: value\r\n`.
        self.size += name.len() + value.len() + 4;
        if !name.starts_with(b":") {
            self.fields += 1;
        }
        if name == b":status" {
            self.status = std::str::from_utf8(value).ok().and_then(|s| s.parse().ok()).unwrap_or(0);
            self.capture |= (300..400).contains(&self.status);
            if !self.capture {
                self.head = None;
            }
            if let Some(head) = self.head.as_mut() {
                head.extend_from_slice(b"HTTP/1.1 ");
                head.extend_from_slice(value);
                head.extend_from_slice(b" \r\n");
            }
        } else if let Some(head) = self.head.as_mut().filter(|_| self.capture) {
            head.extend_from_slice(name);
            head.extend_from_slice(b": ");
            head.extend_from_slice(value);
            head.extend_from_slice(b"\r\n");
        }
    }

    /// Ends the head; returns its status, or the error of a head past HTTP/1.1's limits: more than
    /// [`MAX_HEADERS`] fields, or more than [`MAX_HEAD`] bytes as HTTP/1.1 lines.
    pub fn finish(self) -> Result<u16, ErrorKind> {
        if self.fields > MAX_HEADERS {
            return Err(ErrorKind::TooManyHeaders);
        }
        if self.size + 2 > MAX_HEAD {
            return Err(ErrorKind::HeadTooLarge);
        }
        if let Some(head) = self.head.filter(|_| self.capture) {
            head.extend_from_slice(b"\r\n");
        }
        Ok(self.status)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_head_is_kept_when_asked_and_for_every_redirect() {
        let mut kept = Vec::new();
        let mut head = Head::new(Some(&mut kept), Capture::Head);
        head.field(b":status", b"200");
        head.field(b"set-cookie", b"a=1");
        assert_eq!(head.finish().unwrap(), 200);
        assert_eq!(kept, b"HTTP/1.1 200 \r\nset-cookie: a=1\r\n\r\n");
        let mut head = Head::new(Some(&mut kept), Capture::Nothing);
        head.field(b":status", b"302");
        head.field(b"location", b"/next");
        assert_eq!(head.finish().unwrap(), 302);
        assert_eq!(kept, b"HTTP/1.1 302 \r\nlocation: /next\r\n\r\n");
        let mut head = Head::new(Some(&mut kept), Capture::Nothing);
        head.field(b":status", b"200");
        head.field(b"server", b"x");
        assert_eq!(head.finish().unwrap(), 200);
        assert!(kept.is_empty(), "nothing kept: {kept:?}");
    }

    #[test]
    fn a_head_past_http1s_limits_is_refused_as_http1_refuses_it() {
        let mut head = Head::new(None, Capture::Nothing);
        head.field(b":status", b"200");
        (0..MAX_HEADERS).for_each(|n| head.field(format!("x-{n}").as_bytes(), b"v"));
        assert_eq!(head.finish(), Ok(200), "as many fields as HTTP/1.1 reads");
        let mut head = Head::new(None, Capture::Nothing);
        head.field(b":status", b"200");
        (0..=MAX_HEADERS).for_each(|n| head.field(format!("x-{n}").as_bytes(), b"v"));
        assert_eq!(head.finish(), Err(ErrorKind::TooManyHeaders));
        let mut head = Head::new(None, Capture::Nothing);
        head.field(b":status", b"200");
        head.field(b"x-long", &vec![b'v'; MAX_HEAD]);
        assert_eq!(head.finish(), Err(ErrorKind::HeadTooLarge));
    }

    #[test]
    fn a_body_is_kept_up_to_its_cap() {
        let mut response = Response::default();
        response.body_bytes(Capture::Head, b"abc");
        assert!(response.body.is_empty());
        response.body_bytes(Capture::HeadAndBody, &vec![1; MAX_CAPTURE - 1]);
        response.body_bytes(Capture::HeadAndBody, b"xy");
        assert_eq!((response.body.len(), response.cut), (MAX_CAPTURE, true));
    }
}
