//! What is checked once before a run starts, so that a server that cannot be loaded as asked is one clear line
//! instead of a run full of errors: it answers a connect; for https://, a TLS handshake (certificates checked
//! unless `--insecure`); for HTTP/2, that it speaks it: through ALPN on https://, or with prior knowledge on
//! http:// (its first frame must be SETTINGS); for HTTP/3, a QUIC handshake offering h3. Each is made by the
//! blocking [`probe`](crate::probe), and sends no request; what is here is which checks a plan needs and the
//! run's error for each.
//!
//! Over TLS, a server without HTTP/2 may refuse a handshake that offers h2 alone (a `no_application_protocol`
//! alert, as rustls, Go and nginx do) rather than choose nothing: the check then shakes hands once more offering
//! http/1.1 too, so that the line says what the server speaks.

use std::sync::Arc;

use shootout_model::Protocol;

use crate::plan::Plan;
use crate::probe::{self, tls_handshake};
use crate::run::RunError;
use crate::tls::{not_h2, TlsPlan};

/// The way out when a server does not speak HTTP/2 in the clear.
const ONLY_TLS: &str = "use https:// if it speaks HTTP/2 only over TLS, or drop --http2";

/// Checks that the server can be loaded as `plan` says.
pub fn check(plan: &Plan) -> Result<(), RunError> {
    let timeout = plan.options.connect_timeout;
    let address = plan.address;
    if let Some(quic) = &plan.quic {
        // A certificate or name that does not verify is said as the TLS problem it is, not as a server without
        // HTTP/3.
        return probe::quic_handshake(quic, address, timeout).map_err(|reason| {
            if reason.tls {
                RunError::Tls { address, reason: reason.text }
            } else {
                RunError::NoHttp3 { address, reason: reason.into() }
            }
        });
    }
    let tcp = probe::connect(address, timeout).map_err(|reason| RunError::Unreachable { address, reason })?;
    let http2 = plan.options.protocol == Protocol::Http2;
    if let Some(tls) = &plan.tls {
        let chosen = match tls_handshake(tls, address, timeout) {
            Ok(chosen) => chosen,
            Err(reason) if http2 => tls_handshake(&offering_http1_too(tls), address, timeout)
                .map_err(|_| RunError::Tls { address, reason })?,
            Err(reason) => return Err(RunError::Tls { address, reason }),
        };
        if http2 && chosen.as_deref() != Some(b"h2") {
            let reason = format!("{}, or drop --http2", not_h2(chosen.as_deref()));
            return Err(RunError::NoHttp2 { address, reason });
        }
    } else if http2 {
        probe::http2_preface(tcp, timeout, ONLY_TLS).map_err(|reason| RunError::NoHttp2 { address, reason })?;
    }
    Ok(())
}

/// `tls` offering http/1.1 after h2 through ALPN (the run itself offers h2 alone).
fn offering_http1_too(tls: &TlsPlan) -> TlsPlan {
    let mut config = (*tls.config).clone();
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    TlsPlan { config: Arc::new(config), server_name: tls.server_name.clone() }
}
