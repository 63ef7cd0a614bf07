//! The options of a load from agents (`--agents SPEC` and the settings of each launcher), shared by `load`, and
//! `shootout agents manifest`, which prints the Kubernetes manifest that `--agents k8s:N` applies.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Subcommand};
use shootout_agents::launch::dial::{self, SECRET_VARIABLE};
use shootout_agents::launch::kubernetes::{self, JobSpec};
use shootout_agents::launch::Launcher;
use shootout_agents::AgentSpec;
use shootout_model::AgentSettings;

use super::{duration_arg, Failure};

/// Where a load's agents come from, and how they are reached.
#[derive(Debug, Clone, Args)]
pub struct AgentOptions {
    /// Run the load from agents, each with an exact share of it: local:N (processes on this machine),
    /// ssh:HOST,HOST,… (one per host, started with your own OpenSSH and keys), slurm:N (srun, one per node) or
    /// k8s:N (an Indexed Job applied with kubectl). See docs/guide/many-machines.md.
    #[arg(long, value_name = "SPEC", value_parser = agents_arg)]
    pub agents: Option<AgentSpec>,
    /// The command that runs shootout where the agents run, for when it is not `shootout` on their PATH: a path or
    /// a command line for the shell (ssh, slurm, local), or the command in the image, in words (k8s).
    #[arg(long, value_name = "CMD", requires = "agents")]
    pub agent_command: Option<String>,
    /// With ssh:…: the ssh configuration file to use instead of your own (ssh -F FILE).
    #[arg(long, value_name = "FILE", requires = "agents")]
    pub ssh_config: Option<PathBuf>,
    /// With slurm: or k8s:: where this machine listens for the agents that dial back [default: 0.0.0.0:0, every
    /// interface and a free port].
    #[arg(long, value_name = "ADDR:PORT", requires = "agents")]
    pub agent_listen: Option<SocketAddr>,
    /// With slurm: or k8s:: the HOST[:PORT] the agents dial to reach this machine [default: the address listened
    /// on, or this host's name].
    #[arg(long, value_name = "HOST:PORT", requires = "agents")]
    pub agent_address: Option<String>,
    /// With k8s:: the container image the agents run, with shootout in it.
    #[arg(long, value_name = "IMAGE", requires = "agents")]
    pub agent_image: Option<String>,
    /// How long agents have to start, check their clocks and get ready [default: 30s; 180s with k8s:].
    #[arg(long, value_parser = duration_arg, requires = "agents")]
    pub agent_timeout: Option<Duration>,
    /// With --agents: the most an agent's wall clock may be off this machine's.
    #[arg(long, value_parser = duration_arg, default_value = "50ms", requires = "agents")]
    pub max_skew: Duration,
}

fn agents_arg(text: &str) -> Result<AgentSpec, String> {
    AgentSpec::parse(text).map_err(|e| e.to_string())
}

impl AgentOptions {
    /// The launcher these options describe, for `spec`, or one line naming the option that is missing.
    pub fn launcher(&self, spec: &AgentSpec) -> Result<Launcher, Failure> {
        let settings = AgentSettings {
            command: self.agent_command.clone(),
            ssh_config: self.ssh_config.clone(),
            listen: self.agent_listen,
            address: self.agent_address.clone(),
            image: self.agent_image.clone(),
            timeout: self.agent_timeout,
            max_skew: self.max_skew,
        };
        launcher(spec, &settings, |name| format!("--agent-{name}"))
    }
}

/// The launcher of `spec` with `settings`, for `load` and `run` alike; `option` names a setting as the user
/// wrote it.
pub fn launcher(
    spec: &AgentSpec,
    settings: &AgentSettings,
    option: impl Fn(&str) -> String,
) -> Result<Launcher, Failure> {
    if let Some(refusal) = settings.refusal(spec, option) {
        return Err(Failure::Usage(refusal));
    }
    let program = std::env::current_exe()
        .map_err(|e| Failure::Run(anyhow::anyhow!("cannot find this shootout binary to start agents: {e}")))?;
    Ok(Launcher::new(program, settings, spec))
}

/// Options of `shootout agents`.
#[derive(Debug, Args)]
pub struct AgentsArgs {
    #[command(subcommand)]
    command: AgentsCommand,
}

#[derive(Debug, Subcommand)]
enum AgentsCommand {
    /// Print the Kubernetes manifest (a Secret and an Indexed Job, as JSON) that `--agents k8s:N` applies.
    Manifest(ManifestArgs),
}

/// Options of `shootout agents manifest`.
#[derive(Debug, Args)]
struct ManifestArgs {
    /// How many agents (pods).
    #[arg(long, value_name = "N")]
    count: u32,
    /// The container image with shootout in it.
    #[arg(long, value_name = "IMAGE")]
    image: String,
    /// The HOST:PORT of the coordinator, as the pods reach it.
    #[arg(long, value_name = "HOST:PORT")]
    agent_address: String,
    /// The command that runs shootout in the image, in words.
    #[arg(long, value_name = "CMD", default_value = "shootout")]
    agent_command: String,
    /// The name of the Job and its Secret [default: shootout-agents- and ten random hex digits].
    #[arg(long)]
    name: Option<String>,
}

/// Prints the manifest; its secret is $SHOOTOUT_AGENT_SECRET when set, a fresh one otherwise.
pub fn run(args: AgentsArgs) -> Result<(), Failure> {
    let AgentsCommand::Manifest(args) = args.command;
    if !(1..=shootout_model::agents::MOST_AGENTS).contains(&args.count) {
        return Err(Failure::Usage(format!(
            "--count {}: the number of agents must be 1 to {}",
            args.count,
            shootout_model::agents::MOST_AGENTS
        )));
    }
    let secret = match std::env::var(SECRET_VARIABLE) {
        Ok(secret) if !secret.is_empty() => secret,
        _ => dial::new_secret().map_err(|e| Failure::Run(e.into()))?,
    };
    let name = args.name.clone().unwrap_or_else(kubernetes::job_name);
    let spec = JobSpec {
        name: &name,
        agents: args.count,
        image: &args.image,
        command: &args.agent_command,
        address: &args.agent_address,
        secret: &secret,
    };
    let text = serde_json::to_string_pretty(&kubernetes::manifest(&spec)).map_err(|e| Failure::Run(e.into()))?;
    say!("{text}");
    Ok(())
}
