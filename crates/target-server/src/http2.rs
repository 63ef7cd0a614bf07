//! HTTP/2 on the reference server, through the `h2` crate: with prior knowledge on a plain connection (h2c) or
//! chosen through ALPN on TLS. The same routes answer as over HTTP/1.1 (`/chunked/N` is plain DATA, HTTP/2 having
//! no chunked coding; `/close` ends the connection with GOAWAY after its answer). Quick answers go out from the
//! connection's own task; bodies that wait for flow control, delays and freezes get a task per stream.

use std::future::poll_fn;
use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use h2::server::SendResponse;
use tokio::io::{AsyncRead, AsyncWrite};

use crate::connection::{PATTERN, PATTERN_LEN};
use crate::routes::{self, Body, Route};
use crate::State;

/// The streams a client may open at once, as nginx allows by default.
pub const MAX_CONCURRENT_STREAMS: u32 = 128;

/// Serves one HTTP/2 connection until the client goes away.
pub async fn handle<S: AsyncRead + AsyncWrite + Unpin>(stream: S, state: Arc<State>) {
    let handshake = h2::server::Builder::new().max_concurrent_streams(MAX_CONCURRENT_STREAMS).handshake(stream);
    let Ok(mut connection) = handshake.await else { return };
    while let Some(accepted) = connection.accept().await {
        let Ok((request, respond)) = accepted else { break };
        let route = Route::of(request.uri().path_and_query().map_or("/", |p| p.as_str()));
        let head = request.method() == http::Method::HEAD;
        let signed_in = request.headers().get_all("cookie").iter().any(|c| routes::signed_in(c.as_bytes()));
        if route != Route::Stats {
            state.count();
        }
        let frozen = state.stalled_for(Instant::now());
        let quick = frozen.is_zero() && !matches!(route, Route::Delay(_) | Route::Bytes(_) | Route::Chunked(_));
        if quick {
            let _ = answer(respond, route, head, signed_in, &state).await;
            if route == Route::Close {
                connection.graceful_shutdown();
            }
            continue;
        }
        let state = state.clone();
        tokio::spawn(async move {
            if !frozen.is_zero() {
                state.clock.sleep(frozen).await;
            }
            if let Route::Delay(wait) = route {
                state.clock.sleep(wait).await;
            }
            let _ = answer(respond, route, head, signed_in, &state).await;
        });
    }
}

/// Sends the answer of `route` (no body after a HEAD request) to a client `signed_in` or not.
async fn answer(
    mut respond: SendResponse<Bytes>,
    route: Route,
    head: bool,
    signed_in: bool,
    state: &State,
) -> Result<(), h2::Error> {
    let answer = routes::answer(route, signed_in, state);
    if let Some(code) = answer.interim {
        respond.send_informational(http::Response::builder().status(code).body(()).unwrap_or_default())?;
    }
    let mut builder = http::Response::builder().status(answer.status);
    for (name, value) in &answer.headers {
        builder = builder.header(*name, value.as_str());
    }
    let response = builder.body(()).unwrap_or_default();
    match answer.body {
        Body::Fixed(body) => {
            let mut send = respond.send_response(response, head || body.is_empty())?;
            if !head && !body.is_empty() {
                send.send_data(body, true)?;
            }
        }
        Body::Pattern(size) => {
            let mut send = respond.send_response(response, head || size == 0)?;
            if !head {
                send_pattern(&mut send, size).await?;
            }
        }
    }
    Ok(())
}

/// Sends `size` bytes of the pattern as the client's window allows.
async fn send_pattern(send: &mut h2::SendStream<Bytes>, size: u64) -> Result<(), h2::Error> {
    let mut left = size;
    while left > 0 {
        let want = left.min(PATTERN_LEN as u64) as usize;
        send.reserve_capacity(want);
        let Some(capacity) = poll_fn(|cx| send.poll_capacity(cx)).await else { return Ok(()) };
        let n = capacity?.min(want);
        if n == 0 {
            continue;
        }
        left -= n as u64;
        send.send_data(Bytes::from_static(&PATTERN[..n]), left == 0)?;
    }
    Ok(())
}
