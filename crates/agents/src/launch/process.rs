//! Agents that are processes of ours, their stdin and stdout carrying the protocol: local ones (this binary, or
//! `--agent-command` through the shell) and ssh ones (the user's own OpenSSH, which never prompts). Each runs in
//! a process group of its own, so the terminal's Ctrl-C reaches only the coordinator, which stops the agents
//! itself and keeps what they measured.

use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};

use super::{Crew, LastWords, LaunchError, Launcher, Link};

/// `n` agent processes on this machine.
pub(super) fn local(launcher: &Launcher, n: u32) -> Result<Crew, LaunchError> {
    started(n, |index| {
        let arguments = format!("agent --index {index} --of {n}");
        let command = match &launcher.settings.command {
            Some(line) => shell(&format!("{line} {arguments}")),
            None => {
                let mut command = Command::new(&launcher.program);
                command.args(arguments.split(' '));
                command
            }
        };
        let peer = format!("agent {index} (local)");
        spawn(command, index, peer.clone()).map_err(|e| LaunchError {
            peer,
            why: format!(
                "{}: {e}",
                launcher.settings.command.as_deref().unwrap_or(&launcher.program.to_string_lossy())
            ),
            fix: "check that the shootout binary is there and can be run".into(),
        })
    })
}

/// One agent per host: `ssh -T -o BatchMode=yes [-F CONFIG] -- HOST 'AGENT_COMMAND agent --index I --of N'`.
/// ssh's refusals (unknown host, connection refused, permission denied, a host that would ask for a password)
/// show up as an agent that ends before its hello, reported with ssh's last line.
pub(super) fn ssh(launcher: &Launcher, hosts: &[String]) -> Result<Crew, LaunchError> {
    let of = hosts.len() as u32;
    started(of, |index| {
        let host = &hosts[index as usize];
        let mut command = Command::new("ssh");
        command.args(["-T", "-o", "BatchMode=yes"]);
        if let Some(config) = &launcher.settings.ssh_config {
            command.arg("-F").arg(config);
        }
        command.args(["--", host, &format!("{} agent --index {index} --of {of}", launcher.remote_command())]);
        let peer = format!("agent {index} ({host})");
        spawn(command, index, peer.clone()).map_err(|e| LaunchError {
            peer,
            why: format!("ssh: {e}"),
            fix: "install OpenSSH's client (ssh) on this machine".into(),
        })
    })
}

/// Starts agents 0 to `n - 1` with `start`; when one cannot be started, those already started are stopped.
fn started(
    n: u32,
    mut start: impl FnMut(u32) -> Result<(Link, std::process::Child), LaunchError>,
) -> Result<Crew, LaunchError> {
    let mut crew = Crew::new(Vec::new(), Vec::new(), None);
    for index in 0..n {
        let (link, child) = start(index)?; // on error, dropping `crew` stops the others
        crew.links.push(link);
        crew.processes.push(child);
    }
    Ok(crew)
}

/// `sh -c LINE`: a command line the user wrote for a shell.
pub(super) fn shell(line: &str) -> Command {
    let mut command = Command::new("sh");
    command.args(["-c", line]);
    command
}

/// Starts `command` in a process group of its own, its stdin and stdout piped for the protocol and its stderr
/// kept for its last line.
fn spawn(mut command: Command, index: u32, peer: String) -> std::io::Result<(Link, std::process::Child)> {
    let mut child =
        command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).process_group(0).spawn()?;
    let (Some(input), Some(output), Some(stderr)) = (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        unreachable!("all three were piped");
    };
    let link = Link::pipe(index, peer, input, output).with_words(LastWords::keep(stderr));
    Ok((link, child))
}
