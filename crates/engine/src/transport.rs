//! Reading and writing a connection, in the clear or through TLS, with the same meaning either way: a read gives
//! response bytes (decrypted for TLS; 0 at the end of the stream, `WouldBlock` when nothing is left), and a TLS
//! protocol error comes back as `InvalidData`. The worker calls these and does not care which it has.

use std::io::{self, Read, Write};

use mio::net::TcpStream;
use rustls::ClientConnection;
use shootout_model::ErrorKind;

use crate::conn::transfer_error;

/// Reads response bytes into `buffer`: the count, 0 at the end of the stream, or `WouldBlock`.
pub fn read(socket: &mut TcpStream, tls: Option<&mut ClientConnection>, buffer: &mut [u8]) -> io::Result<usize> {
    let Some(tls) = tls else { return socket.read(buffer) };
    loop {
        match tls.reader().read(buffer) {
            Ok(n) => return Ok(n),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            // The peer closed without close_notify: for HTTP/1.1 framing that is the end of the stream.
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(0),
            Err(e) => return Err(e),
        }
        if tls.read_tls(socket)? == 0 {
            return Ok(0);
        }
        tls.process_new_packets().map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
    }
}

/// Writes `bytes` from `*taken` on. Returns true once the request is fully out (for TLS: encrypted and flushed);
/// false when the socket is full and a writable event must be awaited.
pub fn write(
    socket: &mut TcpStream,
    tls: Option<&mut ClientConnection>,
    bytes: &[u8],
    taken: &mut usize,
) -> io::Result<bool> {
    let Some(tls) = tls else {
        while *taken < bytes.len() {
            match socket.write(&bytes[*taken..]) {
                Ok(n) => *taken += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        return Ok(true);
    };
    if *taken < bytes.len() {
        tls.writer().write_all(&bytes[*taken..])?;
        *taken = bytes.len();
    }
    flush(socket, tls)
}

/// Moves a TLS handshake on as far as the socket allows: true once it is done, false when it waits for the
/// socket; a failure comes back classified (an alert, if any, has been sent).
pub fn handshake(socket: &mut TcpStream, tls: &mut ClientConnection) -> Result<bool, ErrorKind> {
    loop {
        flush(socket, tls).map_err(|e| transfer_error(&e))?;
        if !tls.is_handshaking() {
            return Ok(true);
        }
        match tls.read_tls(socket) {
            Ok(0) => return Err(ErrorKind::Closed),
            Ok(_) => {
                if tls.process_new_packets().is_err() {
                    let _ = flush(socket, tls); // send the alert
                    return Err(ErrorKind::Tls);
                }
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(transfer_error(&e)),
        }
    }
}

/// Sends what TLS has queued (records, handshake messages). Returns true when all of it went out.
pub fn flush(socket: &mut TcpStream, tls: &mut ClientConnection) -> io::Result<bool> {
    while tls.wants_write() {
        match tls.write_tls(socket) {
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(true)
}
