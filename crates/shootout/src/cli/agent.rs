//! `shootout agent`: runs one share of a load for the coordinator that started it (`shootout load --agents …`),
//! speaking the agent protocol on stdin and stdout, or over a connection it dials back (`--dial`, for Slurm and
//! Kubernetes, with the run's secret from its environment). It is started by a launcher, not by hand.

use std::time::Duration;

use clap::Args;
use shootout_agents::launch::dial::{self, SECRET_VARIABLE};
use shootout_agents::protocol::Join;

use super::Failure;

/// Options of `shootout agent`.
#[derive(Debug, Args)]
pub struct AgentArgs {
    /// This agent's index among the run's agents, from 0 [default: $JOB_COMPLETION_INDEX (Kubernetes) or
    /// $SLURM_PROCID (Slurm)].
    #[arg(long)]
    index: Option<u32>,
    /// How many agents the run has [default: $SLURM_NTASKS].
    #[arg(long)]
    of: Option<u32>,
    /// Dial the coordinator at HOST:PORT instead of speaking on stdin and stdout; the run's secret comes from
    /// $SHOOTOUT_AGENT_SECRET.
    #[arg(long, value_name = "HOST:PORT")]
    dial: Option<String>,
}

/// How long a dialling agent keeps trying to reach its coordinator.
const PATIENCE: Duration = Duration::from_secs(30);

/// Serves the coordinator until the load ends or the coordinator goes away.
pub fn run(args: AgentArgs) -> Result<(), Failure> {
    let from_env = |names: &[&str]| names.iter().find_map(|name| std::env::var(name).ok()?.trim().parse().ok());
    let index = args.index.or_else(|| from_env(&["JOB_COMPLETION_INDEX", "SLURM_PROCID"]));
    let of = args.of.or_else(|| from_env(&["SLURM_NTASKS"]));
    let (Some(index), Some(of)) = (index, of) else {
        return Err(Failure::Usage(
            "shootout agent: give --index and --of (or run it under srun or as an Indexed Job, which set them)".into(),
        ));
    };
    if of == 0 || index >= of {
        return Err(Failure::Usage(format!(
            "--index {index} --of {of}: the index is from 0 to one less than the number of agents"
        )));
    }
    let failed = |e: &dyn std::fmt::Display| Failure::Run(anyhow::anyhow!("agent {index}: {e}"));
    match args.dial {
        None => {
            let input = std::io::BufReader::new(std::io::stdin());
            shootout_agents::agent::serve(input, std::io::stdout(), index, of).map_err(|e| failed(&e))
        }
        Some(address) => {
            let secret = std::env::var(SECRET_VARIABLE).map_err(|_| {
                Failure::Usage(format!("--dial {address}: ${SECRET_VARIABLE} is not set; the launcher sets it"))
            })?;
            let (input, output) =
                dial::call(&address, &Join { secret, index, of }, PATIENCE).map_err(|e| failed(&e))?;
            shootout_agents::agent::serve(input, output, index, of).map_err(|e| failed(&e))
        }
    }
}
