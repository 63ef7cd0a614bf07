//! `shootout target`: the built-in reference HTTP/1.1 server.
//!
//! It gives the quickstart something to load without installing a server, gives calibration a known fast
//! peer, and gives the tests real sockets with known answers. It is built to be quick: one tokio task per
//! connection, pipelined requests answered in one write, fixed answers pre-encoded.
//!
//! Layout:
//! - [`routes`]: [`Route`], what each path answers (`/hello`, `/bytes/N`, `/chunked/N`, `/delay/MS`,
//!   `/status/CODE`, `/close`, `/stats`).
//! - [`connection`]: reading requests off one connection and writing the answers.
//! - this file: [`serve`], the accept loop, and [`Stats`], the request counter behind `/stats`.

pub mod connection;
pub mod routes;

use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use tokio::net::TcpListener;

pub use routes::Route;

/// Counts the requests served (all but `/stats` itself).
#[derive(Debug, Default)]
pub struct Stats {
    requests: AtomicU64,
}

impl Stats {
    /// Counts one request.
    pub fn count(&self) {
        self.requests.fetch_add(1, Ordering::Relaxed);
    }

    /// Requests served so far.
    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }
}

/// Accepts connections on `listener` forever, each served by its own task.
pub async fn serve(listener: TcpListener, stats: Arc<Stats>) -> io::Result<()> {
    loop {
        let (stream, _) = match listener.accept().await {
            Ok(accepted) => accepted,
            // Out of descriptors or a connection aborted before accept: keep serving the others.
            Err(_) => {
                tokio::time::sleep(std::time::Duration::from_millis(5)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        tokio::spawn(connection::handle(stream, stats.clone()));
    }
}

/// Binds `address`, calls `on_bound` with the bound address, and serves on `threads` threads until the process
/// ends.
pub fn run(address: SocketAddr, threads: usize, on_bound: impl FnOnce(SocketAddr)) -> io::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(threads.max(1)).enable_all().build()?;
    runtime.block_on(async {
        let listener = TcpListener::bind(address).await?;
        on_bound(listener.local_addr()?);
        serve(listener, Arc::new(Stats::default())).await
    })
}
