//! A purpose-built misbehaving HTTP/3 server: QUIC from quinn on UDP 127.0.0.1:0 (a self-signed certificate for
//! localhost, ALPN h3), HTTP/3 framing by hand and no QPACK decoding (a request is whatever its stream carries;
//! an answer is `:status 404` from QPACK's static table, without a body; a long head is literal fields, its
//! integers and frame header written with shootout's own encoders). What it does wrong is chosen per test
//! ([`Behaviour`]), and it counts what it saw ([`Seen`]) so that a test compares shootout's result with the
//! server's side of the story. Its runtime, and every task of it, ends when the server is dropped.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use shootout_engine::http::fields::integer;
use shootout_engine::http::h3::frame::{kind, put_header};

/// The request streams a client may open at once.
pub const MAX_STREAMS: u32 = 4;
/// How much of one request stream the server takes before the client must wait for more credit.
const STREAM_WINDOW: u32 = 16 * 1024;

/// A control stream (type 0x00) holding an empty SETTINGS frame (type 0x04, length 0).
const CONTROL: [u8; 3] = [0x00, 0x04, 0x00];
/// A HEADERS frame (type 0x01, 3 bytes) whose field section (required insert count 0, base 0) is one indexed
/// field line of the static table: entry 27, `:status 404`.
const NOT_FOUND: [u8; 5] = [0x01, 0x03, 0x00, 0x00, 0xc0 | 27];
/// H3_NO_ERROR: the code of a STOP_SENDING that says the rest of a request is not needed (RFC 9114 §4.1).
const NO_ERROR: u32 = 0x100;
/// H3_EXCESSIVE_LOAD: the peer is generating excessive load (RFC 9114 §8.1).
const EXCESSIVE_LOAD: u32 = 0x107;

/// A HEADERS frame whose field section is `:status 200` (static entry 25) and then `fields` literal fields, each
/// named `x-N` with a value of `value_bytes` bytes: QPACK's "literal field line with literal name", no Huffman.
fn long_head(fields: usize, value_bytes: usize) -> Vec<u8> {
    let mut section = vec![0x00, 0x00, 0xc0 | 25];
    for n in 0..fields {
        let name = format!("x-{n}");
        integer(&mut section, 0x20, 3, name.len());
        section.extend_from_slice(name.as_bytes());
        integer(&mut section, 0x00, 7, value_bytes);
        section.extend(std::iter::repeat_n(b'v', value_bytes));
    }
    let mut frame = Vec::new();
    put_header(&mut frame, kind::HEADERS, section.len());
    frame.extend_from_slice(&section);
    frame
}

/// What the server does wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Behaviour {
    /// Ends its control stream once the first request of each connection arrives, and answers nothing: a
    /// connection error (H3_CLOSED_CRITICAL_STREAM) that the client must raise itself.
    ClosesControlStream,
    /// Answers each request at once, before reading its body, and asks the client to stop sending it: the stream
    /// is freed (and a new one allowed) only once the client resets its side, as RFC 9000 §3.5 requires.
    AnswersBeforeTheBody,
    /// Answers each request, then, once the client has the answer, closes the connection without an error
    /// (CONNECTION_CLOSE with H3_NO_ERROR): HTTP/3's way of a server that closes after each answer.
    ClosesAfterEachAnswer,
    /// Closes the connection at the first request with H3_EXCESSIVE_LOAD: a server shedding load, not a client
    /// that broke the protocol.
    ClosesWithExcessiveLoad,
    /// Answers `:status 200` with one header of 500,000 bytes: past the client's 64 KiB for a head.
    AnswersWithALongHead,
    /// Answers `:status 200` with 70 headers: past the client's 64.
    AnswersWithManyHeaders,
}

/// What the server saw.
#[derive(Debug, Default)]
pub struct Seen {
    /// QUIC connections that completed their handshake.
    pub connections: AtomicU64,
    /// Request streams opened by the client.
    pub requests: AtomicU64,
    /// Requests answered.
    pub answered: AtomicU64,
}

impl Seen {
    pub fn get(counter: &AtomicU64) -> u64 {
        counter.load(Ordering::SeqCst)
    }
}

/// The server, serving until dropped.
pub struct H3Server {
    pub address: SocketAddr,
    pub seen: Arc<Seen>,
    runtime: Option<tokio::runtime::Runtime>,
}

impl H3Server {
    pub fn start(behaviour: Behaviour) -> H3Server {
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
        let mut tls = crate::support::self_signed_tls("localhost");
        tls.alpn_protocols = vec![b"h3".to_vec()];
        let crypto = quinn::crypto::rustls::QuicServerConfig::try_from(tls).unwrap();
        let mut config = quinn::ServerConfig::with_crypto(Arc::new(crypto));
        let mut transport = quinn::TransportConfig::default();
        transport.max_concurrent_bidi_streams(MAX_STREAMS.into());
        transport.stream_receive_window(STREAM_WINDOW.into());
        config.transport_config(Arc::new(transport));
        let endpoint = {
            let _inside = runtime.enter();
            quinn::Endpoint::server(config, "127.0.0.1:0".parse().unwrap()).unwrap()
        };
        let address = endpoint.local_addr().unwrap();
        let seen = Arc::new(Seen::default());
        let counts = seen.clone();
        runtime.spawn(async move {
            while let Some(incoming) = endpoint.accept().await {
                let counts = counts.clone();
                tokio::spawn(async move {
                    if let Ok(connection) = incoming.await {
                        counts.connections.fetch_add(1, Ordering::SeqCst);
                        serve(connection, behaviour, counts).await;
                    }
                });
            }
        });
        H3Server { address, seen, runtime: Some(runtime) }
    }

    /// The url of `path`, by the name the certificate carries.
    pub fn url(&self, path: &str) -> String {
        format!("https://localhost:{}{path}", self.address.port())
    }
}

impl Drop for H3Server {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// One connection: the control stream first, then each request stream as `behaviour` says.
async fn serve(connection: quinn::Connection, behaviour: Behaviour, seen: Arc<Seen>) {
    let Ok(mut control) = connection.open_uni().await else { return };
    if control.write_all(&CONTROL).await.is_err() {
        return;
    }
    let mut control = Some(control);
    while let Ok((mut send, mut recv)) = connection.accept_bi().await {
        seen.requests.fetch_add(1, Ordering::SeqCst);
        match behaviour {
            Behaviour::ClosesControlStream => {
                if let Some(mut control) = control.take() {
                    let _ = control.finish();
                }
                // The request is held, unanswered, until the client gives up on the connection.
                tokio::spawn(async move {
                    let _ = recv.read_to_end(usize::MAX).await;
                    drop(send);
                });
            }
            Behaviour::AnswersBeforeTheBody => {
                let seen = seen.clone();
                tokio::spawn(async move {
                    if send.write_all(&NOT_FOUND).await.is_err() || send.finish().is_err() {
                        return;
                    }
                    seen.answered.fetch_add(1, Ordering::SeqCst);
                    // The stream's credit comes back to the client only once its side is reset.
                    let _ = recv.stop(NO_ERROR.into());
                });
            }
            Behaviour::ClosesAfterEachAnswer => {
                let (seen, connection) = (seen.clone(), connection.clone());
                tokio::spawn(async move {
                    let _ = recv.read_to_end(64 * 1024).await;
                    if send.write_all(&NOT_FOUND).await.is_err() || send.finish().is_err() {
                        return;
                    }
                    seen.answered.fetch_add(1, Ordering::SeqCst);
                    // Closing at once would drop the answer unsent: the client acknowledges it first.
                    let _ = send.stopped().await;
                    connection.close(NO_ERROR.into(), b"");
                });
            }
            Behaviour::ClosesWithExcessiveLoad => connection.close(EXCESSIVE_LOAD.into(), b"excessive load"),
            Behaviour::AnswersWithALongHead | Behaviour::AnswersWithManyHeaders => {
                let seen = seen.clone();
                tokio::spawn(async move {
                    let _ = recv.read_to_end(64 * 1024).await;
                    let head = match behaviour {
                        Behaviour::AnswersWithALongHead => long_head(1, 500_000),
                        _ => long_head(70, 8),
                    };
                    if send.write_all(&head).await.is_ok() && send.finish().is_ok() {
                        seen.answered.fetch_add(1, Ordering::SeqCst);
                    }
                    let _ = send.stopped().await;
                });
            }
        }
    }
}
