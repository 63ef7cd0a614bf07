//! [`Plan`]: a validated [`LoadOptions`] turned into what the hot path needs: a socket address and the request
//! bytes, encoded once.

use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::Arc;
use std::time::Instant;

use shootout_model::{LoadOptions, Protocol};
use thiserror::Error;
use url::Url;

use crate::http::request::{encode, RequestSpec};
use crate::quic::QuicPlan;
use crate::stakes::Stakes;
use crate::tls::{client_config, TlsPlan};
use crate::workload::Workload;
use rustls::pki_types::ServerName;

/// Why a URL cannot be loaded. Each message names the input and says what to do.
#[derive(Debug, Error)]
pub enum PlanError {
    /// Not a URL at all.
    #[error("'{url}' is not a valid URL ({reason}): write it like http://127.0.0.1:8080/path")]
    BadUrl {
        /// The input.
        url: String,
        /// What the URL parser said.
        reason: url::ParseError,
    },
    /// No scheme at all: `localhost:8080` reads as the scheme `localhost`.
    #[error("'{url}' has no scheme: write http://{url} (or https://)")]
    NoScheme {
        /// The input.
        url: String,
    },
    /// A scheme other than http and https.
    #[error("'{url}' uses the scheme '{scheme}', which shootout load does not speak: use an http:// or https:// URL")]
    Scheme {
        /// The input.
        url: String,
        /// Its scheme.
        scheme: String,
    },
    /// No host in the URL.
    #[error("'{url}' has no host: write it like http://127.0.0.1:8080/path")]
    NoHost {
        /// The input.
        url: String,
    },
    /// The TLS configuration could not be made.
    #[error("{0}")]
    Tls(String),
    /// The request cannot be carried by HTTP/2 or HTTP/3 (the flag, the reason).
    #[error("{0}: {1}")]
    Multiplexed(&'static str, String),
    /// HTTP/3 asked for over plain http://.
    #[error("--http3 with '{url}': HTTP/3 runs over QUIC, which is always encrypted: use an https:// URL")]
    Http3Plain {
        /// The input.
        url: String,
    },
    /// The host name did not resolve.
    #[error("cannot resolve the host of '{url}' ({reason}): check the host name, or use an IP address")]
    Resolve {
        /// The input.
        url: String,
        /// What the resolver said.
        reason: String,
    },
}

/// Everything the engine needs to run, derived once from the options.
#[derive(Debug, Clone)]
pub struct Plan {
    /// What the user asked for; copied into the result.
    pub options: LoadOptions,
    /// Where to connect.
    pub address: SocketAddr,
    /// What is sent: one request encoded once, or a scenario.
    pub workload: Arc<Workload>,
    /// How to speak TLS, for https:// URLs.
    pub tls: Option<TlsPlan>,
    /// HTTP/3: what its QUIC connections are made with.
    pub quic: Option<Arc<QuicPlan>>,
    /// When the run's clock starts, if it must be a given instant rather than when the run gets going: the
    /// shared start of the agents of one load, so that each agent's due times are the whole run's, taken by its
    /// share, however late this process got there.
    pub start_at: Option<Instant>,
    /// A capacity search's probe: what its verdict hangs on, so that the run stops waiting for requests still
    /// unanswered after its window once they cannot change it ([`Stakes`]).
    pub stakes: Option<Stakes>,
}

impl Plan {
    /// Parses and resolves the URL and encodes the request with `body`.
    pub fn new(options: LoadOptions, body: &[u8]) -> Result<Plan, PlanError> {
        if !options.url.contains("://") && !options.url.contains(char::is_whitespace) {
            return Err(PlanError::NoScheme { url: options.url.clone() });
        }
        let url = Url::parse(&options.url).map_err(|reason| PlanError::BadUrl { url: options.url.clone(), reason })?;
        if url.scheme() != "http" && url.scheme() != "https" {
            return Err(PlanError::Scheme { url: options.url.clone(), scheme: url.scheme().to_string() });
        }
        let host = url.host_str().ok_or_else(|| PlanError::NoHost { url: options.url.clone() })?;
        let port = url.port_or_known_default().unwrap_or(80);
        let address = resolve(host, port).map_err(|reason| PlanError::Resolve { url: options.url.clone(), reason })?;
        let host_header = match url.port() {
            Some(port) => format!("{host}:{port}"),
            None => host.to_string(),
        };
        let target = match url.query() {
            Some(query) => format!("{}?{query}", url.path()),
            None => url.path().to_string(),
        };
        let request = encode(&RequestSpec {
            method: &options.method,
            target: &target,
            host: &host_header,
            headers: &options.headers,
            body,
            close: !options.keepalive,
        });
        let head_request = options.method == "HEAD";
        let mut workload = Workload::single(url.path().to_string(), request, head_request);
        workload.follow_redirects(&url, options.max_redirects);
        match options.protocol {
            Protocol::Http2 => {
                workload.speak_http2(url.scheme()).map_err(|e| PlanError::Multiplexed("--http2", e.0))?
            }
            Protocol::Http3 if url.scheme() != "https" => return Err(PlanError::Http3Plain { url: options.url }),
            Protocol::Http3 => workload.speak_http3().map_err(|e| PlanError::Multiplexed("--http3", e.0))?,
            Protocol::Http1 => {}
        }
        let tls = match url.scheme() {
            "https" => {
                let cacert = options.cacert.as_deref().map(std::path::Path::new);
                let config = client_config(options.insecure, cacert, options.protocol).map_err(PlanError::Tls)?;
                let server_name = ServerName::try_from(host.trim_start_matches('[').trim_end_matches(']').to_string())
                    .map_err(|e| PlanError::Tls(format!("'{host}' cannot be checked against a certificate: {e}")))?;
                Some(TlsPlan { config, server_name })
            }
            _ => None,
        };
        let quic = match (&tls, options.protocol) {
            (Some(tls), Protocol::Http3) => {
                let name = host.trim_start_matches('[').trim_end_matches(']').to_string();
                Some(Arc::new(QuicPlan::new(&tls.config, name).map_err(PlanError::Tls)?))
            }
            _ => None,
        };
        Ok(Plan { options, address, workload: Arc::new(workload), tls, quic, start_at: None, stakes: None })
    }

    /// A plan that runs a scenario against its base URL (`options.url`).
    pub fn with_scenario(options: LoadOptions, scenario: shootout_scenario::Scenario) -> Result<Plan, PlanError> {
        let sessions = !scenario.sessions.is_empty();
        let mut plan = Plan::new(LoadOptions { url: scenario.base.clone(), sessions, ..options }, b"")?;
        let host = plan.options.url.split_once("://").map_or("", |(_, rest)| rest).to_string();
        let close = !plan.options.keepalive;
        let mut workload = Workload::scenario(scenario, host, close);
        if let Ok(server) = Url::parse(&plan.options.url) {
            workload.follow_redirects(&server, plan.options.max_redirects);
        }
        plan.workload = Arc::new(workload);
        Ok(plan)
    }
}

fn resolve(host: &str, port: u16) -> Result<SocketAddr, String> {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let mut addresses = (host, port).to_socket_addrs().map_err(|e| e.to_string())?;
    addresses.next().ok_or_else(|| "no address found".to_string())
}

#[cfg(test)]
mod tests {
    use shootout_model::settings::LoadSettings;

    use super::*;

    fn options(url: &str) -> LoadOptions {
        LoadSettings { url: url.into(), connections: Some(1), requests: Some(1), ..LoadSettings::default() }
            .build(1)
            .expect("valid settings")
    }

    #[test]
    fn resolves_and_encodes() {
        let plan = Plan::new(options("http://127.0.0.1:9999/x?y=1"), b"").unwrap();
        assert_eq!(plan.address, "127.0.0.1:9999".parse().unwrap());
        let request = plan.workload.requests[0].encoded.clone().unwrap();
        assert!(request.starts_with(b"GET /x?y=1 HTTP/1.1\r\nHost: 127.0.0.1:9999\r\n"));
        let v6 = Plan::new(options("http://[::1]:8080/"), b"").unwrap();
        assert_eq!(v6.address, "[::1]:8080".parse().unwrap());
    }

    #[test]
    fn rejects_bad_urls_with_a_fix() {
        let bad = Plan::new(options("not a url"), b"").unwrap_err().to_string();
        assert!(bad.contains("'not a url'") && bad.contains("http://"), "{bad}");
        let scheme = Plan::new(options("ftp://127.0.0.1/"), b"").unwrap_err().to_string();
        assert!(scheme.contains("'ftp'"), "{scheme}");
    }
}
