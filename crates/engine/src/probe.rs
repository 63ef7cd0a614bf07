//! The blocking probe: what shootout asks a server outside a run, in the calling thread, every wait bounded by a
//! timeout. [`get`] sends one GET and reads its answer, for a suite's ready probe, its verification request and
//! the settling check between a search's probes (not for load: that is the run's job). Over HTTP/1.1 it asks
//! `Connection: close` and reads the response by its framing (Content-Length, chunked; to the close only when it
//! has neither), so a server that keeps the connection open after answering is read as soon as it answered; over
//! HTTP/2 it opens one stream with the engine's own session (prior knowledge on http://, ALPN h2 on https://), so
//! that a server which speaks only HTTP/2 on its port is probed in the protocol it is loaded with; over HTTP/3 one
//! request stream on a QUIC connection ([`Blocking`]). The checks made once before a run (`preflight`) send no
//! request, and shake hands through the same code: [`connect`], [`tls_handshake`], [`http2_preface`] and
//! [`quic_handshake`].

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::sync::Arc;
use std::time::Duration;

use rustls::pki_types::ServerName;
use rustls::{ClientConfig, ClientConnection, StreamOwned};
use shootout_model::Protocol;

use crate::http::h2::frame::{self, kind, Header, HEADER_LEN};
use crate::http::h2::request::encode_plain;
use crate::http::h2::session::{Event, Session};
use crate::http::response::{Capture, Progress, ResponseParser};
use crate::quic::{Blocking, QuicError, QuicPlan};
use crate::tls::TlsPlan;

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
    /// The server answered a plain request in TLS (an alert or a handshake record): its url should be https://.
    SpeaksTls,
    /// The server is up and met the request with something other than a response (over HTTP/3: a reset stream, a
    /// GOAWAY, a connection closed with its own error code).
    Rejected,
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

    /// The host, as a certificate names it: the authority without its port or an IPv6 address's brackets.
    fn host(&self) -> &str {
        self.authority.rsplit_once(':').map_or(self.authority, |(h, _)| h).trim_matches(['[', ']'])
    }
}

/// GETs `url` (http or https; certificates are not checked, as for a local server under test) over `protocol`.
pub fn get(url: &str, timeout: Duration, protocol: Protocol) -> Result<Answer, Failure> {
    let parts = Parts::of(url)?;
    let socket = parts.socket().map_err(|text| Failure { kind: FailureKind::Unresolved, text })?;
    if protocol == Protocol::Http3 {
        return get_http3(socket, &parts, timeout);
    }
    let Parts { scheme, authority, path, .. } = parts;
    let tcp = connect(socket, timeout).map_err(|e| Failure {
        kind: if e.kind() == io::ErrorKind::ConnectionRefused { FailureKind::Refused } else { FailureKind::Other },
        text: worded(&e, timeout, "to connect"),
    })?;
    let request =
        format!("GET {path} HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\nUser-Agent: shootout-probe\r\n\r\n");
    if scheme != "https" {
        let mut tcp = tcp;
        return exchange(&mut tcp, request.as_bytes(), scheme, protocol, timeout).map_err(|text| {
            let tls = text == SPOKE_TLS;
            Failure { kind: if tls { FailureKind::SpeaksTls } else { FailureKind::Other }, text }
        });
    }
    let config = crate::tls::client_config(true, None, protocol)?;
    let name = ServerName::try_from(parts.host().to_string()).map_err(|e| e.to_string())?;
    let mut stream = tls_stream(config, name, tcp)?;
    if protocol == Protocol::Http2 {
        shake(&mut stream).map_err(|e| format!("TLS handshake: {}", worded(&e, timeout, "")))?;
        if stream.conn.alpn_protocol() != Some(b"h2") {
            return Err(crate::tls::not_h2(stream.conn.alpn_protocol()).into());
        }
    }
    Ok(exchange(&mut stream, request.as_bytes(), scheme, protocol, timeout)?)
}

/// Connects to `address` within `timeout`, and gives its reads and writes the same timeout.
pub fn connect(address: SocketAddr, timeout: Duration) -> io::Result<TcpStream> {
    let tcp = TcpStream::connect_timeout(&address, timeout)?;
    tcp.set_read_timeout(Some(timeout))?;
    tcp.set_write_timeout(Some(timeout))?;
    Ok(tcp)
}

/// Connects to `address` and completes one TLS handshake as `plan` says (the check before a run: certificates
/// checked as the run will check them). Returns the protocol the server chose through ALPN, if any.
pub fn tls_handshake(plan: &TlsPlan, address: SocketAddr, timeout: Duration) -> Result<Option<Vec<u8>>, String> {
    let tcp = connect(address, timeout).map_err(|e| e.to_string())?;
    let mut stream = tls_stream(plan.config.clone(), plan.server_name.clone(), tcp)?;
    shake(&mut stream).map_err(|e| describe(&e))?;
    Ok(stream.conn.alpn_protocol().map(<[u8]>::to_vec))
}

/// Sends the HTTP/2 preface and SETTINGS on `tcp` (connected by [`connect`]), and reads the server's first frame
/// header: it must be SETTINGS. The error says what the server did instead, then `way_out` (what the caller can
/// do about a server that does not speak HTTP/2 in the clear).
pub fn http2_preface(mut tcp: TcpStream, timeout: Duration, way_out: &str) -> Result<(), String> {
    let mut hello = frame::PREFACE.to_vec();
    frame::write_settings(&mut hello, &[]);
    tcp.write_all(&hello).map_err(|e| format!("cannot send the HTTP/2 preface ({e})"))?;
    let mut first = [0u8; HEADER_LEN];
    let mut have = 0;
    while have < HEADER_LEN {
        match tcp.read(&mut first[have..]) {
            Ok(0) => break,
            Ok(n) => have += n,
            Err(e) if have == 0 => {
                return Err(format!("it did not answer the HTTP/2 preface within {timeout:?} ({e}); {way_out}"))
            }
            Err(_) => break,
        }
    }
    let answer = &first[..have];
    if answer.starts_with(b"HTTP/") {
        return Err(format!("it answered the HTTP/2 preface in HTTP/1.x; {way_out}"));
    }
    if have < HEADER_LEN {
        return Err(format!("it closed the connection on the HTTP/2 preface; {way_out}"));
    }
    let header = Header::parse(&first);
    if header.kind != kind::SETTINGS || header.stream != 0 {
        let shown: String = answer.iter().map(|&b| if b.is_ascii_graphic() { b as char } else { '.' }).collect();
        return Err(format!("its answer to the preface starts '{shown}', not with a SETTINGS frame; {way_out}"));
    }
    Ok(())
}

/// Shakes hands once with the server at `address` over QUIC, so that a server that does not speak HTTP/3 there is
/// one clear line: nothing answering on the UDP port, a refusal, a certificate that does not verify, or a server
/// that does not offer `h3`. Bounded by `timeout`.
pub fn quic_handshake(plan: &QuicPlan, address: SocketAddr, timeout: Duration) -> Result<(), QuicError> {
    let mut connection = Blocking::connect(plan, address, timeout)?;
    connection.close();
    Ok(())
}

/// A TLS client over `tcp`; nothing is sent until it is read, written or [`shake`]n.
fn tls_stream(
    config: Arc<ClientConfig>,
    name: ServerName<'static>,
    tcp: TcpStream,
) -> Result<StreamOwned<ClientConnection, TcpStream>, String> {
    let session = ClientConnection::new(config, name).map_err(|e| e.to_string())?;
    Ok(StreamOwned::new(session, tcp))
}

/// Completes the handshake of `stream`.
fn shake(stream: &mut StreamOwned<ClientConnection, TcpStream>) -> io::Result<()> {
    while stream.conn.is_handshaking() {
        stream.conn.complete_io(&mut stream.sock)?;
    }
    Ok(())
}

/// What went wrong in a handshake, with the way out for the usual certificate problems.
fn describe(error: &io::Error) -> String {
    let text = error.to_string();
    if text.contains("certificate") || text.contains("Certificate") {
        format!("{text}: pass --insecure to skip verification, or --cacert FILE to trust the server's CA")
    } else {
        text
    }
}

/// GETs the path of `parts` over HTTP/3 (certificates not checked): one QUIC connection, one request stream.
/// A UDP port that refuses the handshake is a [`FailureKind::Refused`], as a TCP port that refuses a connect.
fn get_http3(socket: SocketAddr, parts: &Parts, timeout: Duration) -> Result<Answer, Failure> {
    let config = crate::tls::client_config(true, None, Protocol::Http3)?;
    let plan = QuicPlan::new(&config, parts.host().to_string())?;
    let mut connection = Blocking::connect(&plan, socket, timeout).map_err(|e| Failure {
        kind: if e.refused { FailureKind::Refused } else { FailureKind::Other },
        text: format!("HTTP/3: {e}"),
    })?;
    let Parts { authority, path, .. } = parts;
    let request =
        format!("GET {path} HTTP/1.1\r\nHost: {authority}\r\nUser-Agent: shootout-probe\r\n\r\n").into_bytes();
    let (mut section, mut headers) = (Vec::new(), Vec::new());
    crate::http::h3::qpack::encode_plain(&request, &mut section, &mut headers).map_err(|e| e.0)?;
    let response = connection.exchange(&headers, b"").map_err(|e| Failure {
        kind: if e.rejected { FailureKind::Rejected } else { FailureKind::Other },
        text: format!("HTTP/3: {e}"),
    });
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
            // A TLS record (an alert or a handshake: 0x15 or 0x16, then version 3.x) where an answer begins.
            Ok(n) if !parser.started() && n >= 2 && matches!(chunk[..2], [0x15 | 0x16, 0x03]) => {
                return Err(SPOKE_TLS.into())
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

/// What a plain probe answered in TLS says (and how [`get`] knows it for a [`FailureKind::SpeaksTls`]).
const SPOKE_TLS: &str = "the server answered in TLS: it speaks HTTPS on this port";

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

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    /// A server on a port of its own that reads what comes and writes `answer`, then holds the connection open.
    fn answering(answer: &'static [u8]) -> SocketAddr {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap();
        std::thread::spawn(move || {
            let (mut tcp, _) = listener.accept().unwrap();
            let _ = tcp.read(&mut [0u8; 4096]);
            tcp.write_all(answer).unwrap();
            std::thread::sleep(Duration::from_secs(5));
        });
        address
    }

    #[test]
    fn a_url_gives_its_parts_and_the_schemes_port() {
        let parts = Parts::of("https://[::1]:8443/ready?now").unwrap();
        assert_eq!((parts.scheme, parts.authority, parts.path), ("https", "[::1]:8443", "/ready?now"));
        assert_eq!((parts.address.as_str(), parts.host()), ("[::1]:8443", "::1"));
        let parts = Parts::of("https://localhost").unwrap();
        assert_eq!((parts.path, parts.address.as_str(), parts.host()), ("/", "localhost:443", "localhost"));
        assert!(Parts::of("localhost:8080").is_err());
    }

    #[test]
    fn an_answer_is_read_by_its_framing_while_the_server_keeps_the_connection() {
        let address = answering(b"HTTP/1.1 201 Created\r\nContent-Length: 5\r\n\r\nready");
        let started = std::time::Instant::now();
        let answer = get(&format!("http://{address}/"), Duration::from_secs(3), Protocol::Http1).unwrap();
        assert_eq!(answer, Answer { status: 201, body: "ready".into() });
        assert!(started.elapsed() < Duration::from_secs(2), "read as soon as it answered: {:?}", started.elapsed());
    }

    #[test]
    fn a_refused_connect_and_a_silent_server_are_told_apart_in_words() {
        let free = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
        let refused = get(&format!("http://{free}/"), Duration::from_secs(1), Protocol::Http1).unwrap_err();
        assert_eq!(refused.kind, FailureKind::Refused, "{refused}");
        let silent = answering(b"");
        let failure = get(&format!("http://{silent}/"), Duration::from_millis(200), Protocol::Http1).unwrap_err();
        assert_eq!(failure.kind, FailureKind::Other);
        assert_eq!(failure.text, "the server took more than 200ms to answer");
    }

    #[test]
    fn a_server_answering_the_http2_preface_in_http1_is_said_so() {
        let address = answering(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n");
        let tcp = connect(address, Duration::from_secs(1)).unwrap();
        let said = http2_preface(tcp, Duration::from_secs(1), "the way out").unwrap_err();
        assert_eq!(said, "it answered the HTTP/2 preface in HTTP/1.x; the way out");
    }
}
