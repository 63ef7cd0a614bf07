//! What is checked once before a run starts, so that a server that cannot be loaded as asked is one clear line
//! instead of a run full of errors: it answers a connect; for https://, a TLS handshake (certificates checked
//! unless `--insecure`); for HTTP/2, that it speaks it: through ALPN on https://, or with prior knowledge on
//! http:// (its first frame must be SETTINGS); for HTTP/3, a QUIC handshake offering h3
//! ([`check_handshake`](crate::quic::check_handshake)).
//!
//! Over TLS, a server without HTTP/2 may refuse a handshake that offers h2 alone (a `no_application_protocol`
//! alert, as rustls, Go and nginx do) rather than choose nothing: the check then shakes hands once more offering
//! http/1.1 too, so that the line says what the server speaks.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;

use shootout_model::Protocol;

use crate::http::h2::frame::{self, kind, Header, HEADER_LEN};
use crate::plan::Plan;
use crate::run::RunError;
use crate::tls::{check_handshake, not_h2, TlsPlan};

/// The way out when a server does not speak HTTP/2 in the clear.
const ONLY_TLS: &str = "use https:// if it speaks HTTP/2 only over TLS, or drop --http2";

/// Checks that the server can be loaded as `plan` says.
pub fn check(plan: &Plan) -> Result<(), RunError> {
    let timeout = plan.options.connect_timeout;
    let address = plan.address;
    if let Some(quic) = &plan.quic {
        return crate::quic::check_handshake(quic, address, timeout)
            .map_err(|reason| RunError::NoHttp3 { address, reason: reason.into() });
    }
    let tcp =
        TcpStream::connect_timeout(&address, timeout).map_err(|reason| RunError::Unreachable { address, reason })?;
    let http2 = plan.options.protocol == Protocol::Http2;
    if let Some(tls) = &plan.tls {
        let chosen = match check_handshake(tls, address, timeout) {
            Ok(chosen) => chosen,
            Err(reason) if http2 => check_handshake(&offering_http1_too(tls), address, timeout)
                .map_err(|_| RunError::Tls { address, reason })?,
            Err(reason) => return Err(RunError::Tls { address, reason }),
        };
        if http2 && chosen.as_deref() != Some(b"h2") {
            let reason = format!("{}, or drop --http2", not_h2(chosen.as_deref()));
            return Err(RunError::NoHttp2 { address, reason });
        }
    } else if http2 {
        check_prior_knowledge(tcp, plan).map_err(|reason| RunError::NoHttp2 { address, reason })?;
    }
    Ok(())
}

/// `tls` offering http/1.1 after h2 through ALPN (the run itself offers h2 alone).
fn offering_http1_too(tls: &TlsPlan) -> TlsPlan {
    let mut config = (*tls.config).clone();
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    TlsPlan { config: Arc::new(config), server_name: tls.server_name.clone() }
}

/// Sends the HTTP/2 preface and SETTINGS, and reads the server's first frame header: it must be SETTINGS.
fn check_prior_knowledge(mut tcp: TcpStream, plan: &Plan) -> Result<(), String> {
    let timeout = plan.options.connect_timeout;
    tcp.set_read_timeout(Some(timeout))
        .and_then(|()| tcp.set_write_timeout(Some(timeout)))
        .map_err(|e| e.to_string())?;
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
                return Err(format!("it did not answer the HTTP/2 preface within {timeout:?} ({e}); {ONLY_TLS}"))
            }
            Err(_) => break,
        }
    }
    let answer = &first[..have];
    if answer.starts_with(b"HTTP/") {
        return Err(format!("it answered the HTTP/2 preface in HTTP/1.x; {ONLY_TLS}"));
    }
    if have < HEADER_LEN {
        return Err(format!("it closed the connection on the HTTP/2 preface; {ONLY_TLS}"));
    }
    let header = Header::parse(&first);
    if header.kind != kind::SETTINGS || header.stream != 0 {
        let shown: String = answer.iter().map(|&b| if b.is_ascii_graphic() { b as char } else { '.' }).collect();
        return Err(format!("its answer to the preface starts '{shown}', not with a SETTINGS frame; {ONLY_TLS}"));
    }
    Ok(())
}
