//! `shootout target`: runs the built-in reference server until the process is stopped.

use std::io::Write as _;
use std::net::{IpAddr, SocketAddr};

use anyhow::Context as _;
use clap::Args;

use super::Failure;

/// Options of `shootout target`.
#[derive(Debug, Args)]
pub struct TargetArgs {
    /// Port to listen on; 0 picks a free one (the bound address is printed on the first line of stdout).
    #[arg(short, long, default_value_t = 8080)]
    port: u16,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1")]
    host: IpAddr,
    /// Worker threads (default: the CPUs available).
    #[arg(short, long)]
    threads: Option<usize>,
}

/// Serves until killed.
pub fn run(args: TargetArgs) -> Result<(), Failure> {
    if args.threads == Some(0) {
        return Err(Failure::Usage("--threads 0: the server needs at least 1 thread".into()));
    }
    let threads = args.threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let address = SocketAddr::new(args.host, args.port);
    shootout_target::run(address, threads, |bound| {
        println!("shootout target listening on http://{bound}/");
        let _ = std::io::stdout().flush();
    })
    .with_context(|| format!("cannot serve on {address} (is the port already in use? try --port 0)"))?;
    Ok(())
}
