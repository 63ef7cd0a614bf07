//! One connection of the reference server: parse the requests that arrived, answer them in order (pipelining
//! allowed), write the answers in one go, read more. An HTTP/1.1 connection stays open unless the request says
//! `Connection: close`; an HTTP/1.0 one is closed after the answer unless the request asked for keep-alive, which
//! the answer then confirms (`Connection: keep-alive`), as HTTP/1.0 clients such as `ab -k` need.

use std::io::Write as _;
use std::sync::Arc;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use crate::routes::{self, exponential, reason, spin, Route, StatusAnswer, HELLO, INDEX, NOT_SIGNED_IN, SIGNED_IN};
use crate::State;

/// Bytes of body pattern written per write call for large bodies.
pub(crate) const PATTERN_LEN: usize = 64 * 1024;
/// The bytes bodies are made of: `abc…z` repeated, so a body of any length is predictable.
pub(crate) static PATTERN: [u8; PATTERN_LEN] = pattern();
/// Chunk size of `/chunked/N`.
const CHUNK: u64 = 16 * 1024;
/// Most headers accepted in a request.
const MAX_HEADERS: usize = 64;

const fn pattern() -> [u8; PATTERN_LEN] {
    let mut bytes = [0u8; PATTERN_LEN];
    let mut i = 0;
    while i < PATTERN_LEN {
        bytes[i] = b'a' + (i % 26) as u8;
        i += 1;
    }
    bytes
}

/// What the parser found at the front of the input.
struct Request {
    route: Route,
    head: bool,
    close: bool,
    /// An HTTP/1.0 request: kept alive only when it asked, which its answer must then confirm with `Connection:
    /// keep-alive`, or the client waits for the close that marks the end of an HTTP/1.0 answer (ab -k hung on
    /// this); never sent an interim (1xx) answer or a chunked body.
    http10: bool,
    body: u64,
    /// It carries the session cookie `/login` sets.
    signed_in: bool,
}

/// Serves one connection until the client closes it, asks to close, or sends something unusable.
pub async fn handle<S: AsyncRead + AsyncWrite + Unpin>(mut stream: S, state: Arc<State>) {
    let mut input: Vec<u8> = Vec::with_capacity(8192);
    let mut out: Vec<u8> = Vec::with_capacity(8192);
    let mut skip: u64 = 0; // request body bytes still to discard
    loop {
        let mut at = 0;
        loop {
            if skip > 0 {
                let take = skip.min((input.len() - at) as u64);
                at += take as usize;
                skip -= take;
                if skip > 0 {
                    break;
                }
            }
            let request = match parse(&input[at..]) {
                Ok(Some((used, request))) => {
                    at += used;
                    request
                }
                Ok(None) => break,
                Err(()) => {
                    out.extend_from_slice(
                        b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                    );
                    let _ = stream.write_all(&out).await;
                    return;
                }
            };
            skip = request.body;
            if request.route != Route::Stats {
                state.count();
            }
            let frozen = state.stalled_for(std::time::Instant::now());
            if !frozen.is_zero() {
                if stream.write_all(&out).await.is_err() {
                    return;
                }
                out.clear();
                state.clock.sleep(frozen).await;
            }
            if answer(&mut stream, &mut out, &request, &state).await.is_err() || request.close {
                let _ = stream.write_all(&out).await;
                return;
            }
        }
        input.drain(..at);
        if !out.is_empty() {
            if stream.write_all(&out).await.is_err() {
                return;
            }
            out.clear();
        }
        if input.len() > 64 * 1024 {
            return; // a head that never ends
        }
        match stream.read_buf(&mut input).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
    }
}

/// Parses one request head. `Ok(None)` means more bytes are needed.
fn parse(input: &[u8]) -> Result<Option<(usize, Request)>, ()> {
    if input.is_empty() {
        return Ok(None);
    }
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut request = httparse::Request::new(&mut headers);
    let used = match request.parse(input) {
        Ok(httparse::Status::Complete(used)) => used,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(_) => return Err(()),
    };
    let http10 = request.version == Some(0);
    let mut close = http10;
    let mut body = 0;
    let mut signed_in = false;
    for header in request.headers.iter() {
        if header.name.eq_ignore_ascii_case("cookie") {
            signed_in |= routes::signed_in(header.value);
        } else if header.name.eq_ignore_ascii_case("content-length") {
            body = std::str::from_utf8(header.value).ok().and_then(|v| v.trim().parse().ok()).ok_or(())?;
        } else if header.name.eq_ignore_ascii_case("transfer-encoding") {
            return Err(()); // chunked request bodies are not needed by any load shootout sends
        } else if header.name.eq_ignore_ascii_case("connection") {
            let value = header.value.to_ascii_lowercase();
            if value.windows(5).any(|w| w == b"close") {
                close = true;
            } else if value.windows(10).any(|w| w == b"keep-alive") {
                close = false;
            }
        }
    }
    let route = Route::of(request.path.unwrap_or("/"));
    let head = request.method == Some("HEAD");
    let close = close || route == Route::Close;
    Ok(Some((used, Request { route, head, close, http10, body, signed_in })))
}

/// Writes the answer to `request` into `out`, or straight to the stream for large bodies and delays.
async fn answer<S: AsyncWrite + Unpin>(
    stream: &mut S,
    out: &mut Vec<u8>,
    request: &Request,
    state: &State,
) -> std::io::Result<()> {
    let connection = match (request.close, request.http10) {
        (true, _) => "Connection: close\r\n",
        (false, true) => "Connection: keep-alive\r\n",
        (false, false) => "",
    };
    let small = |out: &mut Vec<u8>, status: u16, content_type: &str, body: &[u8]| {
        let _ = write!(
            out,
            "HTTP/1.1 {status} {}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n{connection}\r\n",
            reason(status),
            body.len()
        );
        if !request.head {
            out.extend_from_slice(body);
        }
    };
    match request.route {
        Route::Hello | Route::Close => small(out, 200, "text/plain", HELLO),
        Route::Spin(work) => {
            spin(work);
            small(out, 200, "text/plain", HELLO)
        }
        Route::SpinExp(mean) => {
            spin(exponential(mean));
            small(out, 200, "text/plain", HELLO)
        }
        Route::Index => small(out, 200, "text/plain", INDEX.as_bytes()),
        Route::Stats => {
            small(out, 200, "application/json", format!("{{\"requests\":{}}}", state.requests()).as_bytes())
        }
        Route::Status(code) => match StatusAnswer::of(code) {
            StatusAnswer::Interim => {
                if !request.http10 {
                    let _ = write!(out, "HTTP/1.1 {code} {}\r\n\r\n", reason(code));
                }
                small(out, 200, "text/plain", HELLO)
            }
            StatusAnswer::Empty => {
                let _ = write!(out, "HTTP/1.1 {code} {}\r\n{connection}\r\n", reason(code));
            }
            StatusAnswer::Body => small(out, code, "text/plain", format!("{code} {}\n", reason(code)).as_bytes()),
        },
        Route::NotFound => small(out, 404, "text/plain", b"not found: try GET / for the list of paths\n"),
        Route::Account if request.signed_in => small(out, 200, "text/plain", SIGNED_IN),
        Route::Account => small(out, 401, "text/plain", NOT_SIGNED_IN),
        Route::Redirect(_) | Route::Login => {
            let moved = request.route.moved().expect("a redirect");
            let cookie = moved.cookie.map(|c| format!("Set-Cookie: {c}\r\n")).unwrap_or_default();
            let _ = write!(
                out,
                "HTTP/1.1 {} {}\r\nLocation: {}\r\n{cookie}Content-Length: 0\r\n{connection}\r\n",
                moved.status,
                reason(moved.status),
                moved.location
            );
        }
        Route::Delay(wait) => {
            if !out.is_empty() {
                stream.write_all(out).await?;
                out.clear();
            }
            state.clock.sleep(wait).await;
            let _ = write!(
                out,
                "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n{connection}\r\n",
                HELLO.len()
            );
            if !request.head {
                out.extend_from_slice(HELLO);
            }
        }
        Route::Chunked(size) if !request.http10 => {
            let _ = write!(
                out,
                "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nTransfer-Encoding: chunked\r\n{connection}\r\n"
            );
            if !request.head {
                let mut left = size;
                while left > 0 {
                    let chunk = left.min(CHUNK);
                    let _ = write!(out, "{chunk:x}\r\n");
                    out.extend_from_slice(&PATTERN[..chunk as usize]);
                    out.extend_from_slice(b"\r\n");
                    left -= chunk;
                    if out.len() >= PATTERN_LEN {
                        stream.write_all(out).await?;
                        out.clear();
                    }
                }
                out.extend_from_slice(b"0\r\n\r\n");
            }
        }
        // HTTP/1.0 has no chunked coding (RFC 9112 §6.1): such a client gets the same bytes by Content-Length.
        Route::Bytes(size) | Route::Chunked(size) => {
            let _ = write!(
                out,
                "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: {size}\r\n{connection}\r\n"
            );
            stream.write_all(out).await?;
            out.clear();
            if !request.head {
                write_pattern(stream, size).await?;
            }
        }
    }
    Ok(())
}

/// Writes `size` bytes of the pattern.
async fn write_pattern<S: AsyncWrite + Unpin>(stream: &mut S, size: u64) -> std::io::Result<()> {
    let mut left = size;
    while left > 0 {
        let n = left.min(PATTERN_LEN as u64) as usize;
        stream.write_all(&PATTERN[..n]).await?;
        left -= n as u64;
    }
    Ok(())
}
