//! HTTPS for the reference server: a certificate from PEM files, or a self-signed one made at start for
//! `localhost` and `127.0.0.1` (clients then need `--insecure`, or `--cacert` with that certificate).

use std::path::Path;
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use rustls::ServerConfig;
use tokio_rustls::TlsAcceptor;

/// Where the server's certificate comes from.
#[derive(Debug, Clone)]
pub enum Certificate<'a> {
    /// Made at start, self-signed.
    SelfSigned,
    /// A PEM certificate chain and its PEM private key.
    Files {
        /// The chain.
        cert: &'a Path,
        /// The key.
        key: &'a Path,
    },
}

/// Builds the acceptor, or says what is wrong with the certificate files.
pub fn acceptor(certificate: Certificate<'_>) -> Result<TlsAcceptor, String> {
    Ok(TlsAcceptor::from(server_config(certificate)?))
}

/// The TLS configuration of the server (ALPN: h2, then http/1.1; [`http3`](crate::http3) offers h3 over the same
/// certificate), or what is wrong with the certificate files.
pub fn server_config(certificate: Certificate<'_>) -> Result<Arc<ServerConfig>, String> {
    let (chain, key) = match certificate {
        Certificate::SelfSigned => {
            let made = rcgen::generate_simple_self_signed(vec!["localhost".into(), "127.0.0.1".into(), "::1".into()])
                .map_err(|e| format!("cannot make a self-signed certificate: {e}"))?;
            let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(made.signing_key.serialize_der()));
            (vec![made.cert.der().clone()], key)
        }
        Certificate::Files { cert, key } => {
            let chain = CertificateDer::pem_file_iter(cert)
                .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
                .map_err(|e| format!("--cert {}: cannot read PEM certificates ({e})", cert.display()))?;
            let key = PrivateKeyDer::from_pem_file(key)
                .map_err(|e| format!("--key {}: cannot read a PEM private key ({e})", key.display()))?;
            (chain, key)
        }
    };
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .map_err(|e| format!("the certificate and key do not go together: {e}"))?;
    let mut config = config;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}
