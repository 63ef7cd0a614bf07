//! [`get`]: one blocking GET, for the ready probe and the verification request (not for load: that is the
//! engine's job). Over HTTP/1.1 it asks `Connection: close` and reads to the end; over HTTP/2 it opens one stream
//! with the engine's own session (prior knowledge on http://, ALPN h2 on https://), so that a server which
//! speaks only HTTP/2 on its port is probed in the protocol it is loaded with.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::Duration;

use shootout_engine::http::h2::request::encode_plain;
use shootout_engine::http::h2::session::{Event, Session};
use shootout_engine::http::response::{Capture, Progress, ResponseParser};
use shootout_model::Protocol;

/// A response: status and body (the body as text, lossily).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// Status code.
    pub status: u16,
    /// Body.
    pub body: String,
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
pub fn get(url: &str, timeout: Duration, protocol: Protocol) -> Result<Answer, String> {
    let parts = Parts::of(url)?;
    let socket = parts.socket()?;
    let Parts { scheme, authority, path, .. } = parts;
    let tcp = TcpStream::connect_timeout(&socket, timeout).map_err(|e| e.to_string())?;
    tcp.set_read_timeout(Some(timeout)).map_err(|e| e.to_string())?;
    tcp.set_write_timeout(Some(timeout)).map_err(|e| e.to_string())?;
    let request =
        format!("GET {path} HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\nUser-Agent: shootout-probe\r\n\r\n");
    if scheme != "https" {
        return exchange(&mut { tcp }, request.as_bytes(), scheme, protocol);
    }
    let config = shootout_engine::tls::client_config(true, None, protocol)?;
    let host = authority.rsplit_once(':').map_or(authority, |(h, _)| h).trim_matches(['[', ']']);
    let name = rustls::pki_types::ServerName::try_from(host.to_string()).map_err(|e| e.to_string())?;
    let session = rustls::ClientConnection::new(config, name).map_err(|e| e.to_string())?;
    let mut stream = rustls::StreamOwned::new(session, tcp);
    if protocol == Protocol::Http2 {
        while stream.conn.is_handshaking() {
            stream.conn.complete_io(&mut stream.sock).map_err(|e| format!("TLS handshake: {e}"))?;
        }
        if stream.conn.alpn_protocol() != Some(b"h2") {
            return Err(shootout_engine::tls::not_h2(stream.conn.alpn_protocol()));
        }
    }
    exchange(&mut stream, request.as_bytes(), scheme, protocol)
}

/// Sends `request` (HTTP/1.1 bytes) over `protocol` and reads its answer.
fn exchange(
    stream: &mut (impl Read + Write),
    request: &[u8],
    scheme: &str,
    protocol: Protocol,
) -> Result<Answer, String> {
    match protocol {
        Protocol::Http1 => {
            stream.write_all(request).map_err(|e| e.to_string())?;
            let mut raw = Vec::new();
            read_all(stream, &mut raw)?;
            parse(&raw)
        }
        Protocol::Http2 => exchange_http2(stream, request, scheme),
    }
}

/// One stream on a new HTTP/2 connection: the session queues the preface and settings, the request goes out
/// once the server's SETTINGS came, and frames are read until the stream ends.
fn exchange_http2(stream: &mut (impl Read + Write), request: &[u8], scheme: &str) -> Result<Answer, String> {
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
            stream.write_all(session.pending_output()).map_err(|e| e.to_string())?;
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
            Err(e) => return Err(e.to_string()),
        }
    }
}

/// Reads until the end of the stream (an unclean TLS close after the data is accepted).
fn read_all(stream: &mut impl Read, into: &mut Vec<u8>) -> Result<(), String> {
    let mut chunk = [0u8; 8192];
    loop {
        match stream.read(&mut chunk) {
            Ok(0) => return Ok(()),
            Ok(n) => into.extend_from_slice(&chunk[..n]),
            Err(_) if !into.is_empty() => return Ok(()),
            Err(e) => return Err(e.to_string()),
        }
    }
}

/// Status and body of a whole response, read with the engine's parser (Content-Length, chunked, or to the close).
fn parse(raw: &[u8]) -> Result<Answer, String> {
    let mut parser = ResponseParser::new();
    parser.reset_capturing(false, Capture::HeadAndBody);
    match parser.feed(raw) {
        Ok(Progress::Complete { .. }) => {}
        Ok(Progress::NeedMore) => parser.finish_at_eof().map_err(|e| format!("incomplete response: {e}"))?,
        Err(e) => return Err(e.to_string()),
    }
    Ok(Answer { status: parser.status(), body: String::from_utf8_lossy(parser.body()).into_owned() })
}
