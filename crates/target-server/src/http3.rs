//! HTTP/3 on the reference server, through the `h3` crate over `quinn`: the same routes answer as over HTTP/2, on
//! the UDP port of the same number as the TCP one, with the same certificate (ALPN h3, TLS 1.3). A 1xx status
//! route answers its final 200 alone (the `h3` crate sends no interim response); `/close` ends the connection
//! with GOAWAY after its answer, and the requests after it on that connection are rejected (H3_REQUEST_REJECTED),
//! uncounted. Every other request stream gets a task of its own.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use h3::server::RequestStream;
use h3_quinn::BidiStream;
use rustls::ServerConfig;

use crate::connection::{PATTERN, PATTERN_LEN};
use crate::routes::{self, Route};
use crate::State;

/// The request streams a client may open at once, as the HTTP/2 side allows.
const MAX_CONCURRENT_STREAMS: u32 = crate::http2::MAX_CONCURRENT_STREAMS;

/// How long a connection that said GOAWAY waits for the client to close it.
const LINGER: std::time::Duration = std::time::Duration::from_secs(5);

/// A QUIC endpoint on `address` (UDP) serving HTTP/3 with `tls`'s certificate.
pub fn endpoint(address: SocketAddr, tls: &ServerConfig) -> Result<quinn::Endpoint, String> {
    let mut tls = tls.clone();
    tls.alpn_protocols = vec![b"h3".to_vec()];
    tls.max_early_data_size = u32::MAX;
    let crypto = quinn::crypto::rustls::QuicServerConfig::try_from(tls).map_err(|e| format!("HTTP/3: {e}"))?;
    let mut config = quinn::ServerConfig::with_crypto(Arc::new(crypto));
    let mut transport = quinn::TransportConfig::default();
    transport.max_concurrent_bidi_streams(MAX_CONCURRENT_STREAMS.into());
    config.transport_config(Arc::new(transport));
    quinn::Endpoint::server(config, address).map_err(|e| format!("cannot listen for HTTP/3 on UDP {address}: {e}"))
}

/// Accepts QUIC connections on `endpoint` forever, each served by its own task.
pub async fn serve(endpoint: quinn::Endpoint, state: Arc<State>) {
    while let Some(incoming) = endpoint.accept().await {
        let state = state.clone();
        tokio::spawn(async move {
            let Ok(connection) = incoming.await else { return };
            let quic = connection.clone();
            let Ok(mut connection) = h3::server::builder()
                .max_field_section_size(64 * 1024)
                .build::<_, Bytes>(h3_quinn::Connection::new(connection))
                .await
            else {
                return;
            };
            let mut closing = false;
            while let Ok(Some(resolver)) = connection.accept().await {
                let Ok((request, mut stream)) = resolver.resolve_request().await else { continue };
                if closing {
                    // Past the GOAWAY's stream: not processed, and said so (the client may send it again).
                    stream.stop_stream(h3::error::Code::H3_REQUEST_REJECTED);
                    continue;
                }
                let route = Route::of(request.uri().path_and_query().map_or("/", |p| p.as_str()));
                if route != Route::Stats {
                    state.count();
                }
                let head = request.method() == http::Method::HEAD;
                let signed_in = request.headers().get_all("cookie").iter().any(|c| routes::signed_in(c.as_bytes()));
                if route == Route::Close {
                    // Answered first, then GOAWAY: the requests already taken are still answered, and accept()
                    // ends once they are.
                    let _ = answer(stream, route, head, signed_in, &state).await;
                    // GOAWAY names the first stream not processed: the one after this request.
                    let _ = connection.shutdown(1).await;
                    closing = true;
                    continue;
                }
                let state = state.clone();
                tokio::spawn(async move {
                    let frozen = state.stalled_for(Instant::now());
                    if !frozen.is_zero() {
                        state.clock.sleep(frozen).await;
                    }
                    if let Route::Delay(wait) = route {
                        state.clock.sleep(wait).await;
                    }
                    let _ = answer(stream, route, head, signed_in, &state).await;
                });
            }
            // After a GOAWAY, the client closes the connection once it has every answer: closing it here first
            // would drop answers not sent yet.
            let _ = tokio::time::timeout(LINGER, quic.closed()).await;
        });
    }
}

/// Sends the answer of `route` (no body after a HEAD request) to a client `signed_in` or not.
async fn answer(
    mut stream: RequestStream<BidiStream<Bytes>, Bytes>,
    route: Route,
    head: bool,
    signed_in: bool,
    state: &State,
) -> Result<(), h3::error::StreamError> {
    let answer = routes::answer(route, signed_in, state);
    let mut builder = http::Response::builder().status(answer.status);
    for (name, value) in &answer.headers {
        builder = builder.header(*name, value.as_str());
    }
    stream.send_response(builder.body(()).unwrap_or_default()).await?;
    if !head {
        match answer.body {
            routes::Body::Fixed(body) if !body.is_empty() => stream.send_data(body).await?,
            routes::Body::Fixed(_) => {}
            routes::Body::Pattern(size) => {
                let mut left = size;
                while left > 0 {
                    let n = left.min(PATTERN_LEN as u64) as usize;
                    stream.send_data(Bytes::from_static(&PATTERN[..n])).await?;
                    left -= n as u64;
                }
            }
        }
    }
    stream.finish().await
}
