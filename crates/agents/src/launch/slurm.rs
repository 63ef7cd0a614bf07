//! `--agents slurm:N`: one `srun` starts N agents, one per node, inside the user's allocation (`salloc`,
//! `sbatch`) or in an allocation of its own; Slurm's own input variables (`SLURM_PARTITION`, `SLURM_ACCOUNT`…)
//! apply as for any srun. srun merges its tasks' streams, so each agent dials back ([`super::dial`]) with its
//! task number (`SLURM_PROCID`) as its index and the run's secret from its environment. When srun ends before
//! every agent has dialled in (no such partition, too few nodes, the command not found on a node), the run stops
//! at once with srun's last line, after the last line its agents wrote (why one exited).

use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};

use super::dial::{Door, SECRET_VARIABLE};
use super::{Crew, LastWords, LaunchError, Launcher};

/// Starts `n` agents with srun and waits for them to dial back.
pub(super) fn start(launcher: &Launcher, n: u32) -> Result<Crew, LaunchError> {
    let door = Door::open(&launcher.dial_back(), &format!("--agents slurm:{n}"))?;
    let mut command = Command::new("srun");
    command
        .args([&format!("--nodes={n}"), &format!("--ntasks={n}"), "--ntasks-per-node=1"])
        .args(["--kill-on-bad-exit=1", "--input=none", "--export=ALL", "--job-name=shootout-agents", "--"])
        .args(["sh", "-c", &format!("exec {} agent --dial {} --of {n}", launcher.remote_command(), door.address)])
        .env(SECRET_VARIABLE, &door.secret)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .process_group(0);
    let mut srun = command.spawn().map_err(|e| LaunchError {
        peer: format!("--agents slurm:{n}"),
        why: format!("srun: {e}"),
        fix: "run it where Slurm's srun is on the PATH (a login node of the cluster)".into(),
    })?;
    let words = srun.stderr.take().map(|stderr| LastWords::keep_relayed(stderr, Some("srun: "))).unwrap_or_default();
    let mut ended = || match srun.try_wait() {
        Ok(Some(status)) => Some(format!("srun {status}")),
        _ => None,
    };
    let links = match door.gather(n, "slurm", launcher.timeout, &mut ended, &words) {
        Ok(links) => links,
        Err(e) => {
            drop(Crew::new(Vec::new(), vec![srun], None)); // stops srun and whatever it started
            return Err(e);
        }
    };
    let links = links.into_iter().map(|link| link.with_words(words.clone())).collect();
    Ok(Crew::new(links, vec![srun], None))
}
