//! [`get`]: one blocking GET, for the ready probe and the verification request (not for load: that is the
//! engine's job). Over HTTP/1.1 it asks `Connection: close` and reads the response by its framing (Content-Length,
//! chunked; to the close only when it has neither), so a server that keeps the connection open after answering
//! is read as soon as it answered; over HTTP/2 it opens one stream
//! with the engine's own session (prior knowledge on http://, ALPN h2 on https://), so that a server which
//! speaks only HTTP/2 on its port is probed in the protocol it is loaded with.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::Duration;

use shootout_engine::http::h2::request::encode_plain;
use shootout_engine::http::h2::session::{Event, Session};
use shootout_engine::http::response::{Capture, Progress, ResponseParser};
use shootout_engine::quic::{Blocking, QuicPlan};
use shootout_model::Protocol;

/// A response: status and body (the body as text, lossily).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// Status code.
    pub status: u16,
    /// Body.
    pub body: String,
}

/// Why a probe got no answer: the kind the ready probe acts on, and the words for the message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// What kind of failure it was.
    pub kind: FailureKind,
    /// What happened, in words.
    pub text: String,
}

/// The failures the ready probe tells apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailureKind {
    /// The URL's host name does not resolve: waiting will not help.
    Unresolved,
    /// Nothing listens on the address (connection refused): not started yet, or listening elsewhere.
    Refused,
    /// Anything else: a timeout, a reset, a response that is not HTTP.
    Other,
}

impl Failure {
    fn other(text: impl Into<String>) -> Failure {
        Failure { kind: FailureKind::Other, text: text.into() }
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

impl From<Failure> for String {
    fn from(failure: Failure) -> String {
        failure.text
    }
}

impl From<String> for Failure {
    fn from(text: String) -> Failure {
        Failure::other(text)
    }
}

/// A URL's parts as a probe needs them: its scheme, its authority (`host:port` as written), its path, and the
/// `host:port` to connect to (the scheme's port when the URL gives none).
pub struct Parts<'a> {
    /// `http` or `https`.
    pub scheme: &'a str,
    /// The authority as written.
    pub authority: &'a str,
    /// The path, `/` when the URL has none.
    pub path: &'a str,
    /// Where to connect.
    pub address: String,
}

impl Parts<'_> {
    /// The parts of `url`.
    pub fn of(url: &str) -> Result<Parts<'_>, String> {
        let (scheme, rest) = url.split_once("://").ok_or("not a URL")?;
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, "/"),
        };
        let default_port = if scheme == "https" { 443 } else { 80 };
        let address = if authority.rsplit_once(':').is_some_and(|(_, p)| p.parse::<u16>().is_ok()) {
            authority.to_string()
        } else {
            format!("{authority}:{default_port}")
        };
        Ok(Parts { scheme, authority, path, address })
    }

    /// The first socket address its host resolves to.
    pub fn socket(&self) -> Result<SocketAddr, String> {
        self.address.to_socket_addrs().map_err(|e| e.to_string())?.next().ok_or_else(|| "no address".into())
    }
}

/// GETs `url` (http or https; certificates are not checked, as for a local server under test) over `protocol`.
pub fn get(url: &str, timeout: Duration, protocol: Protocol) -> Result<Answer, Failure> {
    let parts = Parts::of(url)?;
    let socket = parts.socket().map_err(|text| Failure { kind: FailureKind::Unresolved, text })?;
    let Parts { scheme, authority, path, .. } = parts;
    if protocol == Protocol::Http3 {
        return get_http3(socket, authority, path, timeout);
    }
    let tcp = TcpStream::connect_timeout(&socket, timeout).map_err(|e| Failure {
        kind: if e.kind() == io::ErrorKind::ConnectionRefused { FailureKind::Refused } else { FailureKind::Other },
        text: worded(&e, timeout, "to connect"),
    })?;
    tcp.set_read_timeout(Some(timeout)).map_err(|e| e.to_string())?;
    tcp.set_write_timeout(Some(timeout)).map_err(|e| e.to_string())?;
    let request =
        format!("GET {path} HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\nUser-Agent: shootout-probe\r\n\r\n");
    if scheme != "https" {
        return Ok(exchange(&mut { tcp }, request.as_bytes(), scheme, protocol, timeout)?);
    }
    let config = shootout_engine::tls::client_config(true, None, protocol)?;
    let host = authority.rsplit_once(':').map_or(authority, |(h, _)| h).trim_matches(['[', ']']);
    let name = rustls::pki_types::ServerName::try_from(host.to_string()).map_err(|e| e.to_string())?;
    let session = rustls::ClientConnection::new(config, name).map_err(|e| e.to_string())?;
    let mut stream = rustls::StreamOwned::new(session, tcp);
    if protocol == Protocol::Http2 {
        while stream.conn.is_handshaking() {
            stream
                .conn
                .complete_io(&mut stream.sock)
                .map_err(|e| format!("TLS handshake: {}", worded(&e, timeout, "")))?;
        }
        if stream.conn.alpn_protocol() != Some(b"h2") {
            return Err(shootout_engine::tls::not_h2(stream.conn.alpn_protocol()).into());
        }
    }
    Ok(exchange(&mut stream, request.as_bytes(), scheme, protocol, timeout)?)
}

/// GETs `path` over HTTP/3 (certificates not checked): one QUIC connection, one request stream.
/// A UDP port that refuses the handshake is a [`FailureKind::Refused`], as a TCP port that refuses a connect.
fn get_http3(socket: SocketAddr, authority: &str, path: &str, timeout: Duration) -> Result<Answer, Failure> {
    let config = shootout_engine::tls::client_config(true, None, Protocol::Http3)?;
    let host = authority.rsplit_once(':').map_or(authority, |(h, _)| h).trim_matches(['[', ']']);
    let plan = QuicPlan::new(&config, host.to_string())?;
    let mut connection = Blocking::connect(&plan, socket, timeout).map_err(|e| Failure {
        kind: if e.refused { FailureKind::Refused } else { FailureKind::Other },
        text: format!("HTTP/3: {e}"),
    })?;
    let request =
        format!("GET {path} HTTP/1.1\r\nHost: {authority}\r\nUser-Agent: shootout-probe\r\n\r\n").into_bytes();
    let (mut section, mut headers) = (Vec::new(), Vec::new());
    shootout_engine::http::h3::qpack::encode_plain(&request, &mut section, &mut headers).map_err(|e| e.0)?;
    let response = connection.exchange(&headers, b"").map_err(|e| format!("HTTP/3: {e}"));
    connection.close();
    let response = response?;
    Ok(Answer { status: response.status, body: String::from_utf8_lossy(&response.body).into_owned() })
}

/// Sends `request` (HTTP/1.1 bytes) over `protocol` and reads its answer; `timeout` is how long each read may wait.
fn exchange(
    stream: &mut (impl Read + Write),
    request: &[u8],
    scheme: &str,
    protocol: Protocol,
    timeout: Duration,
) -> Result<Answer, String> {
    match protocol {
        Protocol::Http1 => {
            stream.write_all(request).map_err(|e| worded(&e, timeout, "to take the request"))?;
            read_response(stream, timeout)
        }
        Protocol::Http2 => exchange_http2(stream, request, scheme, timeout),
        Protocol::Http3 => Err("HTTP/3 is not carried over TCP".into()),
    }
}

/// One stream on a new HTTP/2 connection: the session queues the preface and settings, the request goes out
/// once the server's SETTINGS came, and frames are read until the stream ends.
fn exchange_http2(
    stream: &mut (impl Read + Write),
    request: &[u8],
    scheme: &str,
    timeout: Duration,
) -> Result<Answer, String> {
    let mut block = Vec::new();
    encode_plain(request, scheme, &mut block).map_err(|e| e.0)?;
    let mut session = Session::new();
    let mut opened = false;
    let (mut input, mut pos, mut chunk) = (Vec::new(), 0, [0u8; 16 * 1024]);
    loop {
        if !opened && session.can_open() {
            session.open_plain(0, &block, b"", Capture::HeadAndBody);
            opened = true;
        }
        let queued = session.pending_output().len();
        if queued > 0 {
            stream.write_all(session.pending_output()).map_err(|e| worded(&e, timeout, "to take the request"))?;
            session.wrote(queued);
        }
        match session.poll(&input, &mut pos).map_err(|e| format!("HTTP/2: {}", e.0))? {
            Some(Event::Answered { .. }) => {
                let response = session.response();
                let body = String::from_utf8_lossy(&response.body).into_owned();
                return Ok(Answer { status: response.status, body });
            }
            Some(Event::Reset { code, .. }) => {
                return Err(format!("HTTP/2: the server reset the stream (code {code})"))
            }
            Some(Event::Refused { .. }) => return Err("HTTP/2: the server went away without answering".into()),
            Some(Event::Broken { .. }) => return Err("HTTP/2: the stream ended without a valid response".into()),
            Some(Event::Ready) => continue,
            None => {}
        }
        input.clear();
        pos = 0;
        match stream.read(&mut chunk) {
            Ok(0) => return Err("HTTP/2: the server closed the connection before it answered".into()),
            Ok(n) => input.extend_from_slice(&chunk[..n]),
            Err(e) => return Err(format!("HTTP/2: {}", worded(&e, timeout, "to answer"))),
        }
    }
}

/// Reads one response by its framing, with the engine's parser: it ends at its Content-Length or last chunk,
/// or, with neither, where the server closes the connection (then an unclean TLS close after the data counts as
/// the close).
fn read_response(stream: &mut impl Read, timeout: Duration) -> Result<Answer, String> {
    let mut parser = ResponseParser::new();
    parser.reset_capturing(false, Capture::HeadAndBody);
    let mut chunk = [0u8; 8192];
    loop {
        match stream.read(&mut chunk) {
            Ok(0) if !parser.started() => return Err("the server closed the connection without answering".into()),
            Ok(0) => {
                parser.finish_at_eof().map_err(|e| format!("the server closed the connection mid-response: {e}"))?;
                break;
            }
            Ok(n) => match parser.feed(&chunk[..n]) {
                Ok(Progress::Complete { .. }) => break,
                Ok(Progress::NeedMore) => {}
                Err(e) => return Err(e.to_string()),
            },
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) if parser.started() && parser.finish_at_eof().is_ok() => break,
            Err(e) => return Err(worded(&e, timeout, "to answer")),
        }
    }
    Ok(Answer { status: parser.status(), body: String::from_utf8_lossy(parser.body()).into_owned() })
}

/// An I/O error as a sentence: a timeout (the kernel's "Resource temporarily unavailable" for a read or write
/// that waited its whole timeout) says what did not happen in how long.
fn worded(e: &io::Error, timeout: Duration, waited: &str) -> String {
    match e.kind() {
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut if waited.is_empty() => {
            format!("timed out after {}", humantime::format_duration(timeout))
        }
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => {
            format!("the server took more than {} {waited}", humantime::format_duration(timeout))
        }
        _ => e.to_string(),
    }
}
