//! `shootout host`: serves a suite's runner on another machine (a server or service with `host = "ssh:HOST"`),
//! speaking the host protocol on stdin and stdout: it starts, samples and stops processes there, and kills every
//! one of them when its input ends, or when the runner has said nothing for the link's timeout (a stalled link).
//! It is started by `shootout run` through ssh, not by hand.

use clap::Args;

use super::Failure;

/// Options of `shootout host` (none: everything comes from the runner).
#[derive(Debug, Args)]
pub struct HostArgs {}

/// Serves the runner until it goes away.
pub fn run(_: HostArgs) -> Result<(), Failure> {
    let input = std::io::BufReader::new(std::io::stdin());
    let output = std::io::stdout().lock();
    shootout_harness::place::remote::host::serve(input, output).map_err(|e| Failure::Run(anyhow::anyhow!(e)))
}
