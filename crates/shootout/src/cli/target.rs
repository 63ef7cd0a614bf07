//! `shootout target`: runs the built-in reference server until the process is stopped.

use std::io::Write as _;
use std::net::{IpAddr, SocketAddr};

use std::time::Duration;

use anyhow::Context as _;
use clap::Args;
use shootout_target_server::tls::Certificate;
use shootout_target_server::Stall;

use super::{duration_arg, Failure};

/// Options of `shootout target`.
#[derive(Debug, Args)]
pub struct TargetArgs {
    /// Port to listen on; 0 picks a free one (the bound address is printed on the first line of stdout).
    #[arg(short, long, default_value_t = 8080)]
    port: u16,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1")]
    host: IpAddr,
    /// Worker threads [default: the CPUs available].
    #[arg(short, long)]
    threads: Option<usize>,
    /// Freeze the whole server for --stall-for at the start of every period this long, e.g. 5s (requests that
    /// arrive meanwhile are answered when the freeze ends): a server with pauses, to see coordinated omission.
    #[arg(long, value_parser = duration_arg, requires = "stall_for")]
    stall_every: Option<Duration>,
    /// How long each freeze lasts, e.g. 1s.
    #[arg(long, value_parser = duration_arg, requires = "stall_every")]
    stall_for: Option<Duration>,
    /// Serve HTTPS (with a self-signed certificate for localhost and 127.0.0.1 unless --cert/--key are given).
    #[arg(long)]
    tls: bool,
    /// Serve HTTP/3 too, over QUIC on the UDP port of the same number (implies --tls).
    #[arg(long)]
    http3: bool,
    /// HTTPS: the PEM certificate chain to serve.
    #[arg(long, value_name = "FILE", requires_all = ["tls", "key"])]
    cert: Option<std::path::PathBuf>,
    /// HTTPS: the PEM private key of --cert.
    #[arg(long, value_name = "FILE", requires_all = ["tls", "cert"])]
    key: Option<std::path::PathBuf>,
}

/// Serves until killed.
pub fn run(args: TargetArgs) -> Result<(), Failure> {
    if args.threads == Some(0) {
        return Err(Failure::Usage("--threads 0: the server needs at least 1 thread".into()));
    }
    let threads = args.threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let stall = match (args.stall_every, args.stall_for) {
        (Some(period), Some(length)) if length >= period || period.is_zero() => {
            return Err(Failure::Usage(format!(
                "--stall-for {length:?} must be shorter than --stall-every {period:?}, e.g. --stall-every 5s --stall-for 1s"
            )));
        }
        (Some(period), Some(length)) => Some(Stall { period, length }),
        _ => None,
    };
    let tls = match (args.tls || args.http3, &args.cert, &args.key) {
        (false, _, _) => None,
        (true, Some(cert), Some(key)) => Some(Certificate::Files { cert, key }),
        (true, _, _) => Some(Certificate::SelfSigned),
    };
    let scheme = if tls.is_some() { "https" } else { "http" };
    let tls = tls.map(shootout_target_server::tls::server_config).transpose().map_err(Failure::Usage)?;
    let address = SocketAddr::new(args.host, args.port);
    let speaking = shootout_target_server::Speaking { tls, http3: args.http3 };
    shootout_target_server::run(address, threads, stall, speaking, |bound| {
        let also = if args.http3 { format!(" (and HTTP/3 on UDP port {})", bound.port()) } else { String::new() };
        say!("shootout target listening on {scheme}://{bound}/{also}");
        let _ = std::io::stdout().flush();
    })
    .with_context(|| format!("cannot serve on {address} (is the port already in use? try --port 0)"))?;
    Ok(())
}
