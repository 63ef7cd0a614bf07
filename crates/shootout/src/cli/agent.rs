//! `shootout agent`: runs one share of a load for the coordinator that started it (`shootout load --agents …`),
//! speaking the agent protocol on stdin and stdout. It is started by a launcher, not by hand.

use clap::Args;

use super::Failure;

/// Options of `shootout agent`.
#[derive(Debug, Args)]
pub struct AgentArgs {
    /// This agent's index among the run's agents, from 0.
    #[arg(long)]
    index: u32,
    /// How many agents the run has.
    #[arg(long)]
    of: u32,
}

/// Serves the coordinator on stdin and stdout until the load ends or stdin closes.
pub fn run(args: AgentArgs) -> Result<(), Failure> {
    if args.of == 0 || args.index >= args.of {
        return Err(Failure::Usage(format!(
            "--index {} --of {}: the index is from 0 to one less than the number of agents",
            args.index, args.of
        )));
    }
    let input = std::io::BufReader::new(std::io::stdin());
    shootout_agents::agent::serve(input, std::io::stdout(), args.index, args.of)
        .map_err(|e| Failure::Run(anyhow::anyhow!("agent {}: {e}", args.index)))
}
