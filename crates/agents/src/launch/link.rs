//! [`Link`]: the coordinator's end of one agent's byte stream, whichever way the agent was started: the pipes
//! of a process it started (local, ssh) or the TCP connection the agent dialled back (Slurm, Kubernetes). It
//! also keeps the last line the agent's starter wrote on stderr ([`LastWords`]), so an agent that ends early is
//! reported with its reason.

use std::io::{self, BufRead, BufReader, Read};
use std::net::{Shutdown, TcpStream};
use std::process::ChildStdin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Serialize;

/// One agent's stream, as the coordinator holds it.
pub struct Link {
    /// Its index among the run's agents, from 0.
    pub index: u32,
    /// How errors name it: `agent 1 (local)`, `agent 0 (load1)`, `agent 2 (slurm)`.
    pub peer: String,
    input: Option<Input>,
    output: Option<Box<dyn BufRead + Send>>,
    words: LastWords,
}

impl std::fmt::Debug for Link {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Link").field("index", &self.index).field("peer", &self.peer).finish_non_exhaustive()
    }
}

/// Where the coordinator writes to an agent.
enum Input {
    /// The stdin of a process it started.
    Pipe(ChildStdin),
    /// The connection the agent dialled.
    Socket(TcpStream),
}

impl Link {
    /// The link over the pipes of a started process.
    pub(crate) fn pipe(index: u32, peer: String, input: ChildStdin, output: impl Read + Send + 'static) -> Link {
        Link {
            index,
            peer,
            input: Some(Input::Pipe(input)),
            output: Some(Box::new(BufReader::new(output))),
            words: LastWords::default(),
        }
    }

    /// The link over a connection an agent dialled; `output` reads the same connection (it may hold bytes
    /// already buffered).
    pub(crate) fn socket(index: u32, peer: String, stream: TcpStream, output: Box<dyn BufRead + Send>) -> Link {
        Link { index, peer, input: Some(Input::Socket(stream)), output: Some(output), words: LastWords::default() }
    }

    /// Keeps `words` as what its starter last said.
    pub(crate) fn with_words(mut self, words: LastWords) -> Link {
        self.words = words;
        self
    }

    /// Sends it one message.
    pub fn send<T: Serialize>(&mut self, message: &T) -> io::Result<()> {
        match &mut self.input {
            Some(Input::Pipe(pipe)) => crate::frame::write(pipe, message),
            Some(Input::Socket(stream)) => crate::frame::write(stream, message),
            None => Err(io::Error::new(io::ErrorKind::BrokenPipe, "its input is closed")),
        }
    }

    /// Its messages, for a reader of their own (taken once).
    pub fn take_output(&mut self) -> Option<Box<dyn BufRead + Send>> {
        self.output.take()
    }

    /// The last line its starter wrote on stderr (ssh's or srun's reason, when they could not start it).
    pub fn last_words(&self) -> Option<String> {
        self.words.last()
    }

    /// Closes the way to it: an agent ends when its input ends.
    pub(crate) fn close(&mut self) {
        if let Some(Input::Socket(stream)) = self.input.take() {
            let _ = stream.shutdown(Shutdown::Write);
        }
    }
}

/// The last non-empty line a process wrote on stderr, filled by a thread that reads it to its end; shared by
/// every agent one process started (srun starts them all).
#[derive(Debug, Clone)]
pub struct LastWords(Arc<Mutex<Said>>);

/// What a process said so far: its last line, and, where it relays what the agents it started say, the last line
/// one of them said.
#[derive(Debug, Clone, Default)]
struct Said {
    last: Option<String>,
    agents_last: Option<String>,
    closed: bool,
}

impl Default for LastWords {
    /// Nothing said, and nothing more to come (an agent no process of ours started).
    fn default() -> LastWords {
        LastWords(Arc::new(Mutex::new(Said { closed: true, ..Said::default() })))
    }
}

impl LastWords {
    /// Reads `stderr` on a thread of its own, keeping its last line.
    pub fn keep(stderr: impl Read + Send + 'static) -> LastWords {
        LastWords::keep_relayed(stderr, None)
    }

    /// The same for a starter that relays its agents' stderr with its own, its own lines starting with `own`
    /// (`srun: `): when it ends with a line of its own (`srun: Force Terminated StepId=2.0`), the agents' last
    /// line, which says why, is quoted before it.
    pub fn keep_relayed(stderr: impl Read + Send + 'static, own: Option<&'static str>) -> LastWords {
        let words = LastWords(Arc::new(Mutex::new(Said::default())));
        let kept = words.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).split(b'\n') {
                let Ok(line) = line else { break };
                let line: String = String::from_utf8_lossy(&line).trim().chars().take(500).collect();
                if line.is_empty() {
                    continue;
                }
                if let Ok(mut said) = kept.0.lock() {
                    if own.is_some_and(|own| !line.starts_with(own)) {
                        said.agents_last = Some(line.clone());
                    }
                    said.last = Some(line);
                }
            }
            if let Ok(mut said) = kept.0.lock() {
                said.closed = true;
            }
        });
        words
    }

    /// The last line (after the agents' last line, when the starter's own ends it), waiting up to a second for
    /// the stream to close so that a line written just before the process ended is not missed.
    pub fn last(&self) -> Option<String> {
        let deadline = Instant::now() + Duration::from_secs(1);
        loop {
            let said = self.0.lock().map(|said| said.clone()).unwrap_or(Said { closed: true, ..Said::default() });
            if said.closed || Instant::now() >= deadline {
                return match (said.agents_last, said.last) {
                    (Some(agents), Some(last)) if agents != last => Some(format!("{agents}; {last}")),
                    (_, last) => last,
                };
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::LastWords;

    #[test]
    fn a_starter_ending_with_its_own_line_is_quoted_after_what_its_agents_said_last() {
        let srun = "shootout: cannot reach the coordinator\nsrun: error: n2: task 1: Exited with exit code 1\n\
                    srun: Force Terminated StepId=2.0\n";
        let words = LastWords::keep_relayed(std::io::Cursor::new(srun), Some("srun: "));
        assert_eq!(
            words.last().as_deref(),
            Some("shootout: cannot reach the coordinator; srun: Force Terminated StepId=2.0")
        );
        let alone = LastWords::keep_relayed(std::io::Cursor::new("srun: error: no nodes\n"), Some("srun: "));
        assert_eq!(alone.last().as_deref(), Some("srun: error: no nodes"));
        let agent = LastWords::keep(std::io::Cursor::new("warming\n\nshootout: gone\n"));
        assert_eq!(agent.last().as_deref(), Some("shootout: gone"));
    }
}
