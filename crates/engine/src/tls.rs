//! TLS for `https://` URLs, with rustls: the client configuration (certificates verified against the Mozilla
//! roots, or a CA file, unless `--insecure`). The handshake made once before the run, so that a certificate
//! problem is one clear message instead of a run full of errors, is the blocking [`probe`](crate::probe)'s.

use std::path::Path;
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};
use shootout_model::Protocol;

/// How to speak TLS to the server.
#[derive(Debug, Clone)]
pub struct TlsPlan {
    /// The shared client configuration (session resumption state included).
    pub config: Arc<ClientConfig>,
    /// The name the certificate must carry (and the SNI sent).
    pub server_name: ServerName<'static>,
}

/// Builds the client configuration. `cacert` adds the certificates of a PEM file to the trusted roots; HTTP/2
/// and HTTP/3 are asked for through ALPN (HTTP/3 over TLS 1.3 only, as QUIC requires).
pub fn client_config(insecure: bool, cacert: Option<&Path>, protocol: Protocol) -> Result<Arc<ClientConfig>, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ClientConfig::builder_with_provider(provider.clone());
    let builder = match protocol {
        Protocol::Http3 => builder.with_protocol_versions(&[&rustls::version::TLS13]),
        _ => builder.with_safe_default_protocol_versions(),
    };
    let builder = builder.map_err(|e| e.to_string())?;
    let config = if insecure {
        builder.dangerous().with_custom_certificate_verifier(Arc::new(AcceptAnything(provider))).with_no_client_auth()
    } else {
        let mut roots = RootCertStore { roots: webpki_roots::TLS_SERVER_ROOTS.to_vec() };
        if let Some(path) = cacert {
            let certificates = CertificateDer::pem_file_iter(path)
                .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
                .map_err(|e| format!("--cacert {}: cannot read PEM certificates ({e})", path.display()))?;
            if certificates.is_empty() {
                return Err(format!("--cacert {}: no PEM certificate in it", path.display()));
            }
            for certificate in certificates {
                roots.add(certificate).map_err(|e| format!("--cacert {}: {e}", path.display()))?;
            }
        }
        builder.with_root_certificates(roots).with_no_client_auth()
    };
    let mut config = config;
    match protocol {
        Protocol::Http2 => config.alpn_protocols = vec![b"h2".to_vec()],
        Protocol::Http3 => config.alpn_protocols = vec![b"h3".to_vec()],
        Protocol::Http1 => {}
    }
    Ok(Arc::new(config))
}

/// The reason a server that was offered h2 through ALPN is not loaded over HTTP/2: what it `chose` instead, and
/// the way out on the server's side (callers add their own, such as dropping `--http2`).
pub fn not_h2(chose: Option<&[u8]>) -> String {
    let chose = chose.map_or_else(|| "no protocol".into(), String::from_utf8_lossy);
    format!("it chose {chose} through ALPN, not h2; enable HTTP/2 on the server")
}

/// `--insecure`: any certificate is accepted; signatures are still checked, so the handshake stays real.
#[derive(Debug)]
struct AcceptAnything(Arc<CryptoProvider>);

impl ServerCertVerifier for AcceptAnything {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}
