//! Loads from agents, as chosen: [`AgentSpec`], where a run's agents come from (`--agents local:3`, `ssh:a,b`,
//! `slurm:4`, `k8s:2`), and [`AgentSettings`], how they are started and reached, the same for `shootout load`'s
//! options and a suite's `[agents]` table. Plain data: the `shootout-agents` crate starts and runs them.

use std::fmt;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

/// How a run's agents are started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AgentSpec {
    /// `local:N`: N agent processes on this machine (development, tests, one agent per NUMA node).
    Local(u32),
    /// `ssh:HOST,HOST,…`: one agent per host, each started by the user's own OpenSSH (their config, keys and
    /// jump hosts apply).
    Ssh(Vec<String>),
    /// `slurm:N`: `srun` starts N agents on N nodes of the user's Slurm allocation.
    Slurm(u32),
    /// `k8s:N`: an Indexed Job of N pods, applied with kubectl, each dialling back to the coordinator.
    Kubernetes(u32),
}

/// Why an `--agents` value cannot be used; the message names it and shows the forms that work.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("--agents '{input}': {why}; write local:N, ssh:HOST,HOST,…, slurm:N or k8s:N")]
pub struct BadSpec {
    /// What was given.
    pub input: String,
    /// What is wrong with it.
    pub why: String,
}

/// The most agents one run takes: far more than any launcher here is tested with, and a guard against a typo.
pub const MOST_AGENTS: u32 = 1024;

impl AgentSpec {
    /// Reads an `--agents` value.
    pub fn parse(input: &str) -> Result<AgentSpec, BadSpec> {
        let bad = |why: &str| BadSpec { input: input.to_string(), why: why.to_string() };
        let (kind, rest) = input.trim().split_once(':').ok_or_else(|| bad("no launcher named before ':'"))?;
        let count = |rest: &str| -> Result<u32, BadSpec> {
            match rest.trim().parse::<u32>() {
                Ok(n) if (1..=MOST_AGENTS).contains(&n) => Ok(n),
                Ok(_) => Err(bad(&format!("the number of agents must be 1 to {MOST_AGENTS}"))),
                Err(_) => Err(bad("after local:, slurm: or k8s: comes a number of agents")),
            }
        };
        match kind.trim() {
            "local" => count(rest).map(AgentSpec::Local),
            "slurm" => count(rest).map(AgentSpec::Slurm),
            "k8s" | "kubernetes" => count(rest).map(AgentSpec::Kubernetes),
            "ssh" => {
                let hosts: Vec<String> = rest.split(',').map(|h| h.trim().to_string()).collect();
                if hosts.iter().any(|h| h.is_empty() || h.starts_with('-') || h.contains(char::is_whitespace)) {
                    return Err(bad("each host is a name ssh understands (host, user@host or an alias), none empty"));
                }
                if hosts.len() > MOST_AGENTS as usize {
                    return Err(bad(&format!("at most {MOST_AGENTS} hosts")));
                }
                Ok(AgentSpec::Ssh(hosts))
            }
            other => Err(bad(&format!("'{other}' is not a launcher"))),
        }
    }

    /// How many agents it starts.
    pub fn agents(&self) -> u32 {
        match self {
            AgentSpec::Local(n) | AgentSpec::Slurm(n) | AgentSpec::Kubernetes(n) => *n,
            AgentSpec::Ssh(hosts) => hosts.len() as u32,
        }
    }
}

impl fmt::Display for AgentSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AgentSpec::Local(n) => write!(f, "local:{n}"),
            AgentSpec::Ssh(hosts) => write!(f, "ssh:{}", hosts.join(",")),
            AgentSpec::Slurm(n) => write!(f, "slurm:{n}"),
            AgentSpec::Kubernetes(n) => write!(f, "k8s:{n}"),
        }
    }
}

/// How a load's agents are started and reached: every choice that is not the spec itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentSettings {
    /// The command that runs shootout where the agents run, for when it is not `shootout` on their PATH: a
    /// command line for the shell (ssh, Slurm, and local agents when set), or the command in the image, in words
    /// (Kubernetes).
    pub command: Option<String>,
    /// An ssh configuration file to use instead of the user's own (`ssh -F FILE`).
    pub ssh_config: Option<PathBuf>,
    /// Where the coordinator listens for agents that dial back (Slurm, Kubernetes); `None`: every interface,
    /// a free port.
    pub listen: Option<SocketAddr>,
    /// The `HOST[:PORT]` agents dial; `None`: the address listened on, or this host's name.
    pub address: Option<String>,
    /// The container image Kubernetes agents run.
    pub image: Option<String>,
    /// How long agents have to start, check their clocks and get ready; `None`: [`AgentSettings::timeout_for`].
    pub timeout: Option<Duration>,
    /// The most an agent's wall clock may be off the coordinator's.
    pub max_skew: Duration,
}

/// The most an agent's wall clock may be off the coordinator's, unless the user says otherwise.
pub const DEFAULT_MAX_SKEW: Duration = Duration::from_millis(50);

impl Default for AgentSettings {
    fn default() -> AgentSettings {
        AgentSettings {
            command: None,
            ssh_config: None,
            listen: None,
            address: None,
            image: None,
            timeout: None,
            max_skew: DEFAULT_MAX_SKEW,
        }
    }
}

impl AgentSettings {
    /// How long the agents of `spec` have to get ready: the user's choice, or 30 s (180 s for Kubernetes, whose
    /// pods may first pull their image).
    pub fn timeout_for(&self, spec: &AgentSpec) -> Duration {
        match (self.timeout, spec) {
            (Some(timeout), _) => timeout,
            (None, AgentSpec::Kubernetes(_)) => Duration::from_secs(180),
            (None, _) => Duration::from_secs(30),
        }
    }

    /// Why these settings cannot start the agents of `spec`, in one line naming the option (`option` turns a
    /// setting's name into how the user wrote it: `--agent-image` or `image`).
    pub fn refusal(&self, spec: &AgentSpec, option: impl Fn(&str) -> String) -> Option<String> {
        match spec {
            AgentSpec::Kubernetes(_) if self.image.is_none() => Some(format!(
                "--agents {spec}: add {} IMAGE, the container image the agents run (with shootout in it)",
                option("image")
            )),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_launcher_reads_and_writes_back() {
        for (text, spec) in [
            ("local:3", AgentSpec::Local(3)),
            ("slurm:4", AgentSpec::Slurm(4)),
            ("k8s:2", AgentSpec::Kubernetes(2)),
            (
                "ssh:load1,me@load2,bastion-alias",
                AgentSpec::Ssh(vec!["load1".into(), "me@load2".into(), "bastion-alias".into()]),
            ),
        ] {
            let parsed = AgentSpec::parse(text).unwrap();
            assert_eq!(parsed, spec);
            assert_eq!(parsed.to_string(), text);
        }
        assert_eq!(AgentSpec::parse("ssh:a,b").unwrap().agents(), 2);
    }

    #[test]
    fn a_bad_value_names_itself_and_the_forms_that_work() {
        let e = |text: &str| AgentSpec::parse(text).unwrap_err().to_string();
        assert!(
            e("local:0").starts_with("--agents 'local:0': the number of agents must be 1 to 1024"),
            "{}",
            e("local:0")
        );
        assert!(e("local").contains("no launcher named"));
        assert!(e("docker:2").contains("'docker' is not a launcher"));
        assert!(e("ssh:a,,b").contains("none empty"));
        assert!(e("ssh:-oProxyCommand=x").contains("none empty"), "an option smuggled in as a host is refused");
        assert!(e("slurm:many").ends_with("write local:N, ssh:HOST,HOST,…, slurm:N or k8s:N"));
    }
}
