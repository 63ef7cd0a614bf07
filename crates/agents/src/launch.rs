//! Starting agents: each launcher turns an [`AgentSpec`] into processes whose stdin and stdout carry the
//! protocol. An agent ends when its stdin closes, and a [`Started`] agent that is dropped is killed, so no agent
//! outlives the coordinator that started it, whatever way the coordinator ends.

use std::io::{self, BufReader};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
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

/// How agents are started: the shootout binary to run, for the local launcher.
#[derive(Debug, Clone)]
pub struct Launcher {
    /// This shootout binary, which local agents run.
    pub program: PathBuf,
}

impl Launcher {
    /// Starts every agent `spec` names, or none: when one cannot be started, those already started are killed.
    pub fn start(&self, spec: &AgentSpec) -> Result<Vec<Started>, LaunchError> {
        match spec {
            AgentSpec::Local(n) => (0..*n).map(|index| self.local(index, *n)).collect(),
            other => Err(LaunchError {
                peer: format!("--agents {other}"),
                why: "this launcher is not built yet".into(),
                fix: "use local:N for now".into(),
            }),
        }
    }

    fn local(&self, index: u32, of: u32) -> Result<Started, LaunchError> {
        let peer = format!("agent {index} (local)");
        let mut child = Command::new(&self.program)
            .args(["agent", "--index", &index.to_string(), "--of", &of.to_string()])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| LaunchError {
                peer: peer.clone(),
                why: format!("{} agent: {e}", self.program.display()),
                fix: "check that the shootout binary is there and can be run".into(),
            })?;
        let input = child.stdin.take();
        let output = child.stdout.take().map(BufReader::new);
        Ok(Started { index, peer, input, output, child })
    }
}
