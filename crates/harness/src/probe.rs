//! [`get`]: one blocking HTTP/1.1 GET with `Connection: close`, for the ready probe and the verification
//! request (not for load: that is the engine's job).

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

use shootout_engine::http::response::{Capture, Progress, ResponseParser};

/// A response: status and body (the body as text, lossily).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// Status code.
    pub status: u16,
    /// Body.
    pub body: String,
}

/// GETs `url` (http or https; certificates are not checked, as for a local server under test).
pub fn get(url: &str, timeout: Duration) -> Result<Answer, String> {
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
    let socket = address.to_socket_addrs().map_err(|e| e.to_string())?.next().ok_or("no address")?;
    let tcp = TcpStream::connect_timeout(&socket, timeout).map_err(|e| e.to_string())?;
    tcp.set_read_timeout(Some(timeout)).map_err(|e| e.to_string())?;
    tcp.set_write_timeout(Some(timeout)).map_err(|e| e.to_string())?;
    let request =
        format!("GET {path} HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\nUser-Agent: shootout-probe\r\n\r\n");
    let mut raw = Vec::new();
    if scheme == "https" {
        let config = shootout_engine::tls::client_config(true, None, shootout_model::Protocol::Http1)?;
        let host = authority.rsplit_once(':').map_or(authority, |(h, _)| h).trim_matches(['[', ']']);
        let name = rustls::pki_types::ServerName::try_from(host.to_string()).map_err(|e| e.to_string())?;
        let session = rustls::ClientConnection::new(config, name).map_err(|e| e.to_string())?;
        let mut stream = rustls::StreamOwned::new(session, tcp);
        stream.write_all(request.as_bytes()).map_err(|e| e.to_string())?;
        read_all(&mut stream, &mut raw)?;
    } else {
        let mut tcp = tcp;
        tcp.write_all(request.as_bytes()).map_err(|e| e.to_string())?;
        read_all(&mut tcp, &mut raw)?;
    }
    parse(&raw)
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
