//! Starting agents: each launcher turns an [`AgentSpec`] into processes whose stdin and stdout carry the
//! protocol. An agent ends when its stdin closes, and a [`Started`] agent that is dropped is killed, so no agent
//! outlives the coordinator that started it, whatever way the coordinator ends. An agent's stderr is read by a
//! thread of its own and its last line kept, so that an agent that ends early (ssh refused, a wrong version, a
//! crash) is reported in one line with what it last said.

use std::io::{self, BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::spec::AgentSpec;

/// One agent process and its pipes.
#[derive(Debug)]
pub struct Started {
    /// Its index among the run's agents, from 0.
    pub index: u32,
    /// How errors name it: `agent 1 (local)`, `agent 0 (load1)`.
    pub peer: String,
    input: Option<ChildStdin>,
    output: Option<BufReader<ChildStdout>>,
    child: Child,
    /// The last non-empty line it wrote on stderr.
    last_line: Arc<Mutex<Option<String>>>,
    /// Says when its stderr has closed.
    stderr_closed: Receiver<()>,
}

impl Started {
    /// Sends it one message.
    pub fn send<T: Serialize>(&mut self, message: &T) -> io::Result<()> {
        match &mut self.input {
            Some(input) => crate::frame::write(input, message),
            None => Err(io::Error::new(io::ErrorKind::BrokenPipe, "its input is closed")),
        }
    }

    /// Its messages, for a reader of their own (taken once).
    pub fn take_output(&mut self) -> Option<BufReader<ChildStdout>> {
        self.output.take()
    }

    /// The last line it wrote on stderr (ssh's reason, when ssh could not start it), waiting a moment for its
    /// stderr to close so that a line written just before it ended is not missed.
    pub fn last_words(&self) -> Option<String> {
        let _ = self.stderr_closed.recv_timeout(Duration::from_secs(1));
        self.last_line.lock().ok()?.clone()
    }

    /// Closes its input (an agent ends on that) and waits for it; kills it if it has not ended after `grace`.
    pub fn finish(mut self, grace: Duration) -> io::Result<ExitStatus> {
        drop(self.input.take());
        let deadline = Instant::now() + grace;
        loop {
            if let Some(status) = self.child.try_wait()? {
                return Ok(status);
            }
            if Instant::now() >= deadline {
                let _ = self.child.kill();
                return self.child.wait();
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Started {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Why agents could not be started; the message names the agent and the fix.
#[derive(Debug, thiserror::Error)]
#[error("{peer}: cannot start it ({why}); {fix}")]
pub struct LaunchError {
    /// The agent.
    pub peer: String,
    /// What went wrong.
    pub why: String,
    /// What to do about it.
    pub fix: String,
}

/// How agents are started.
#[derive(Debug, Clone)]
pub struct Launcher {
    /// This shootout binary, which local agents run.
    pub program: PathBuf,
    /// The command that runs shootout on a remote host (ssh), given to the host's shell: `shootout` when it is
    /// on the PATH there, or a path.
    pub agent_command: String,
    /// An ssh configuration file to use instead of the user's own (`ssh -F FILE`).
    pub ssh_config: Option<PathBuf>,
}

impl Launcher {
    /// Starts every agent `spec` names, or none: when one cannot be started, those already started are killed.
    pub fn start(&self, spec: &AgentSpec) -> Result<Vec<Started>, LaunchError> {
        match spec {
            AgentSpec::Local(n) => (0..*n).map(|index| self.local(index, *n)).collect(),
            AgentSpec::Ssh(hosts) => {
                let of = hosts.len() as u32;
                hosts.iter().zip(0..).map(|(host, index)| self.ssh(host, index, of)).collect()
            }
            other => Err(LaunchError {
                peer: format!("--agents {other}"),
                why: "this launcher is not built yet".into(),
                fix: "use local:N or ssh:HOST,HOST,… for now".into(),
            }),
        }
    }

    fn local(&self, index: u32, of: u32) -> Result<Started, LaunchError> {
        let mut command = Command::new(&self.program);
        command.args(["agent", "--index", &index.to_string(), "--of", &of.to_string()]);
        spawn(command, index, format!("agent {index} (local)")).map_err(|(peer, e)| LaunchError {
            peer,
            why: format!("{} agent: {e}", self.program.display()),
            fix: "check that the shootout binary is there and can be run".into(),
        })
    }

    /// `ssh -T -o BatchMode=yes [-F CONFIG] -- HOST 'AGENT_COMMAND agent --index I --of N'`: the user's own
    /// OpenSSH, which never prompts (a host that asks for a password fails at once, with ssh's reason). ssh's
    /// refusals (unknown host, connection refused, permission denied) show up as an agent that ends before its
    /// hello, reported with ssh's last line.
    fn ssh(&self, host: &str, index: u32, of: u32) -> Result<Started, LaunchError> {
        let mut command = Command::new("ssh");
        command.args(["-T", "-o", "BatchMode=yes"]);
        if let Some(config) = &self.ssh_config {
            command.arg("-F").arg(config);
        }
        command.args(["--", host, &format!("{} agent --index {index} --of {of}", self.agent_command)]);
        spawn(command, index, format!("agent {index} ({host})")).map_err(|(peer, e)| LaunchError {
            peer,
            why: format!("ssh: {e}"),
            fix: "install OpenSSH's client (ssh) on this machine".into(),
        })
    }
}

/// Starts `command` with its stdin and stdout piped for the protocol and its stderr read by a thread that keeps
/// the last line.
fn spawn(mut command: Command, index: u32, peer: String) -> Result<Started, (String, io::Error)> {
    let mut child = match command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn() {
        Ok(child) => child,
        Err(e) => return Err((peer, e)),
    };
    let input = child.stdin.take();
    let output = child.stdout.take().map(BufReader::new);
    let last_line = Arc::new(Mutex::new(None));
    let (closed, stderr_closed) = mpsc::channel();
    if let Some(stderr) = child.stderr.take() {
        keep_last_line(stderr, last_line.clone(), closed);
    }
    Ok(Started { index, peer, input, output, child, last_line, stderr_closed })
}

/// Reads `stderr` to its end, keeping its last non-empty line; says so on `closed` at the end.
fn keep_last_line(stderr: ChildStderr, last_line: Arc<Mutex<Option<String>>>, closed: mpsc::Sender<()>) {
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).split(b'\n') {
            let Ok(line) = line else { break };
            let line = String::from_utf8_lossy(&line).trim().to_string();
            if !line.is_empty() {
                if let Ok(mut last) = last_line.lock() {
                    *last = Some(line.chars().take(500).collect());
                }
            }
        }
        let _ = closed.send(());
    });
}
