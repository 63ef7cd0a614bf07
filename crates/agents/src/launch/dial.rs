//! Agents that dial back: where an engine starts agents but gives no per-agent stdin and stdout (srun merges its
//! tasks' streams; a Kubernetes pod has none worth using), each agent connects to a port the coordinator
//! listens on. Its first message, [`Join`], carries its index and the run's secret, a random token the coordinator
//! made for this run and handed to the engine in the agent's environment ([`SECRET_VARIABLE`]). A join with
//! another secret, or for a taken index, gets one [`ToAgent::Refused`] line and is closed; anything else is
//! closed unheard. So a stray agent of another run says why it was turned away, and neither it nor anyone else
//! who finds the port ever takes part. The secret keeps runs apart; it does not encrypt the exchange, which
//! carries options and figures, not credentials.

use std::io::{self, BufReader};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use rand::TryRngCore;

use super::{LastWords, LaunchError, Link};
use crate::frame;
use crate::protocol::{FromAgent, Join, ToAgent};

/// The environment variable that carries a run's secret to agents that dial back.
pub const SECRET_VARIABLE: &str = "SHOOTOUT_AGENT_SECRET";

/// How long a new connection has to say who it is.
const INTRODUCTION: Duration = Duration::from_secs(5);

/// Where agents that dial back find the coordinator.
#[derive(Debug, Clone)]
pub struct DialBack {
    /// The address the coordinator listens on (`0.0.0.0:0`: every interface, any free port).
    pub listen: SocketAddr,
    /// The `HOST:PORT` agents dial; `None`: the listening address, or this host's name when it listens on every
    /// interface.
    pub address: Option<String>,
}

/// A fresh secret for one run: 128 random bits from the operating system, in hex.
pub fn new_secret() -> io::Result<String> {
    let mut bytes = [0u8; 16];
    rand::rngs::OsRng.try_fill_bytes(&mut bytes).map_err(io::Error::other)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// The coordinator's listening port for one run, its address as agents dial it, and the run's secret.
#[derive(Debug)]
pub struct Door {
    listener: TcpListener,
    /// What agents dial: `HOST:PORT`.
    pub address: String,
    /// The run's secret.
    pub secret: String,
}

impl Door {
    /// Listens where `dial` says, with a fresh secret.
    pub fn open(dial: &DialBack, who: &str) -> Result<Door, LaunchError> {
        let failed = |why: String, fix: &str| LaunchError { peer: who.to_string(), why, fix: fix.to_string() };
        let listener = TcpListener::bind(dial.listen)
            .map_err(|e| failed(format!("cannot listen on {} ({e})", dial.listen), "choose a free --agent-listen"))?;
        let bound = listener.local_addr().map_err(|e| failed(e.to_string(), "try again"))?;
        let address = match &dial.address {
            Some(address) if address.ends_with(":0") || !address.contains(':') => {
                format!("{}:{}", address.trim_end_matches(":0"), bound.port())
            }
            Some(address) => address.clone(),
            None if bound.ip().is_unspecified() => format!("{}:{}", crate::host_name(), bound.port()),
            None => bound.to_string(),
        };
        let secret = new_secret().map_err(|e| failed(format!("no random secret ({e})"), "check /dev/urandom"))?;
        listener.set_nonblocking(true).map_err(|e| failed(e.to_string(), "try again"))?;
        Ok(Door { listener, address, secret })
    }

    /// Waits until agents 0 to `n - 1` have dialled in with this run's secret, for up to `timeout`. `ended`
    /// says how whatever was starting them ended, when it has given up (srun ended), so that the wait ends at
    /// once; `words` is what it last wrote, which either failure quotes. `kind` names the launcher in each
    /// agent's name: `agent 2 (slurm, 10.0.0.7)`.
    pub fn gather(
        &self,
        n: u32,
        kind: &str,
        timeout: Duration,
        ended: &mut dyn FnMut() -> Option<String>,
        words: &LastWords,
    ) -> Result<Vec<Link>, LaunchError> {
        let deadline = Instant::now() + timeout;
        let (introduced, introductions) = mpsc::channel();
        let mut links: Vec<Option<Link>> = (0..n).map(|_| None).collect();
        let mut turned_away = 0;
        while links.iter().any(Option::is_none) {
            match self.listener.accept() {
                Ok((stream, from)) => introduce(stream, from, self.secret.clone(), introduced.clone()),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => std::thread::sleep(Duration::from_millis(10)),
                Err(e) => return Err(self.missing(&links, kind, format!("cannot accept agents ({e})"))),
            }
            while let Ok(introduction) = introductions.try_recv() {
                let Some((join, stream, reader, from)) = introduction else {
                    turned_away += 1; // another run's secret, or not an agent at all
                    continue;
                };
                let Join { index, of, .. } = join;
                let slot = links.get_mut(index as usize).filter(|slot| slot.is_none() && of == n);
                match slot {
                    Some(slot) => {
                        let _ = stream.set_read_timeout(None);
                        let peer = format!("agent {index} ({kind}, {})", from.ip());
                        *slot = Some(Link::socket(index, peer, stream, Box::new(reader)));
                    }
                    None => {
                        turned_away += 1; // a second agent with one index, or one that counts the agents otherwise
                        let why = if of != n || index >= n {
                            format!("this run has agents 0 to {} of {n}, not agent {index} of {of}", n - 1)
                        } else {
                            format!("another agent already joined as agent {index}")
                        };
                        std::thread::spawn(move || turn_away(stream, reader, why));
                    }
                }
            }
            if links.iter().all(Option::is_some) {
                break;
            }
            if let Some(how) = ended() {
                let said = words.last().unwrap_or(how);
                return Err(self.missing(&links, kind, format!("it ended first: {said}")));
            }
            if Instant::now() >= deadline {
                let mut why = format!("they did not dial back to {} within {} s", self.address, timeout.as_secs());
                if turned_away > 0 {
                    why +=
                        &format!(" ({turned_away} connections with another secret, index or count were turned away)");
                }
                if let Some(said) = words.last() {
                    why += &format!("; its starter's last words: {said}"); // "queued and waiting for resources"
                }
                return Err(self.missing(&links, kind, why));
            }
        }
        Ok(links.into_iter().flatten().collect())
    }

    fn missing(&self, links: &[Option<Link>], kind: &str, why: String) -> LaunchError {
        let missing: Vec<String> =
            links.iter().enumerate().filter(|(_, l)| l.is_none()).map(|(i, _)| i.to_string()).collect();
        LaunchError {
            peer: format!("agents {} ({kind})", missing.join(", ")),
            why,
            fix: format!(
                "check that the agents can reach {} (--agent-address, --agent-listen) and run the same shootout",
                self.address
            ),
        }
    }
}

/// A connection that joined with this run's secret; `None` on the channel stands for one turned away.
type Introduction = (Join, TcpStream, BufReader<TcpStream>, SocketAddr);

/// Reads a new connection's first message on a thread of its own (a silent one cannot hold up the others) and
/// passes it on when it is a [`Join`] with this run's secret; a join with another secret is refused with its
/// reason, anything else closed unheard.
fn introduce(stream: TcpStream, from: SocketAddr, secret: String, introduced: mpsc::Sender<Option<Introduction>>) {
    std::thread::spawn(move || {
        let _ = stream.set_nonblocking(false);
        let _ = stream.set_read_timeout(Some(INTRODUCTION));
        let _ = stream.set_nodelay(true);
        let Ok(reading) = stream.try_clone() else { return };
        let mut reader = BufReader::new(reading);
        match frame::read::<_, FromAgent>(&mut reader, "a new connection") {
            Ok(Some(FromAgent::Join(join))) if same(join.secret.as_bytes(), secret.as_bytes()) => {
                let _ = introduced.send(Some((join, stream, reader, from)));
            }
            Ok(Some(FromAgent::Join(_))) => {
                let _ = introduced.send(None);
                let why = format!("its secret is not this run's: ${SECRET_VARIABLE} belongs to another run");
                turn_away(stream, reader, why);
            }
            _ => {
                let _ = introduced.send(None);
            }
        }
    });
}

/// Sends a joining agent its [`ToAgent::Refused`] line and closes its connection once the agent has read it
/// (reading what it still sends, for up to [`INTRODUCTION`], so that closing does not reset the line away).
/// It can take that long: call it on a thread that may wait.
fn turn_away(mut stream: TcpStream, reader: BufReader<TcpStream>, why: String) {
    let _ = stream.set_read_timeout(Some(INTRODUCTION));
    if frame::write(&mut stream, &ToAgent::Refused { why }).is_ok() && stream.shutdown(Shutdown::Write).is_ok() {
        let _ = io::copy(&mut io::Read::take(reader, 1 << 20), &mut io::sink());
    }
}

/// Compares two secrets in a time that does not depend on where they differ.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |diff, (x, y)| diff | (x ^ y)) == 0
}

/// The agent's side: connects to `address` (trying again for up to `patience`, for a coordinator still being
/// reached through a slow network or DNS) and introduces itself; returns the two ends of the connection.
pub fn call(address: &str, join: &Join, patience: Duration) -> io::Result<(BufReader<TcpStream>, TcpStream)> {
    let deadline = Instant::now() + patience;
    let stream = loop {
        let attempt = address.to_socket_addrs().and_then(|mut addresses| {
            let first = addresses.next().ok_or_else(|| io::Error::other("the name has no address"))?;
            TcpStream::connect_timeout(&first, Duration::from_secs(5))
        });
        match attempt {
            Ok(stream) => break stream,
            Err(e) if Instant::now() >= deadline => {
                return Err(io::Error::new(e.kind(), format!("cannot reach the coordinator at {address}: {e}")))
            }
            Err(_) => std::thread::sleep(Duration::from_millis(250)),
        }
    };
    stream.set_nodelay(true)?;
    let mut writer = stream.try_clone()?;
    frame::write(&mut writer, &FromAgent::Join(join.clone()))?;
    Ok((BufReader::new(stream), writer))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn door() -> Door {
        Door::open(&DialBack { listen: "127.0.0.1:0".parse().unwrap(), address: None }, "test").unwrap()
    }

    #[test]
    fn agents_with_the_secret_join_in_index_order_and_strangers_are_turned_away() {
        let door = door();
        let address = door.address.clone();
        let join = |index, secret: &str| Join { secret: secret.into(), index, of: 2 };
        // A stranger with a wrong secret, and the two agents in reverse order.
        let stranger = call(&address, &join(0, "not the secret"), Duration::from_secs(2)).unwrap();
        let second = call(&address, &join(1, &door.secret), Duration::from_secs(2)).unwrap();
        let first = call(&address, &join(0, &door.secret), Duration::from_secs(2)).unwrap();
        let links = door.gather(2, "test", Duration::from_secs(5), &mut || None, &LastWords::default()).unwrap();
        assert_eq!(links.iter().map(|l| l.index).collect::<Vec<_>>(), vec![0, 1]);
        assert!(links[0].peer.starts_with("agent 0 (test, 127.0.0.1"), "{}", links[0].peer);
        let why = refusal(stranger);
        assert_eq!(why, "its secret is not this run's: $SHOOTOUT_AGENT_SECRET belongs to another run");
        drop((second, first));
    }

    /// What the coordinator said to an agent it turned away.
    fn refusal((mut reader, writer): (BufReader<TcpStream>, TcpStream)) -> String {
        writer.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        match frame::read::<_, ToAgent>(&mut reader, "the coordinator") {
            Ok(Some(ToAgent::Refused { why })) => why,
            other => panic!("not a refusal: {other:?}"),
        }
    }

    #[test]
    fn an_agent_of_another_count_is_refused_and_counted() {
        let door = door();
        let wrong = call(&door.address, &Join { secret: door.secret.clone(), index: 0, of: 2 }, Duration::from_secs(2));
        let e = door.gather(1, "test", Duration::from_millis(500), &mut || None, &LastWords::default());
        let e = e.unwrap_err().to_string();
        assert!(e.contains("(1 connections with another secret, index or count were turned away)"), "{e}");
        assert_eq!(refusal(wrong.unwrap()), "this run has agents 0 to 0 of 1, not agent 0 of 2");
    }

    #[test]
    fn a_missing_agent_is_named_when_time_runs_out_or_its_starter_ends() {
        let door = door();
        let _only = call(&door.address, &Join { secret: door.secret.clone(), index: 0, of: 2 }, Duration::from_secs(2));
        let e = door
            .gather(2, "slurm", Duration::from_millis(300), &mut || None, &LastWords::default())
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("agents 1 (slurm): cannot start it (they did not dial back to 127.0.0.1:"), "{e}");
        let door = self::door();
        let e = door.gather(
            1,
            "slurm",
            Duration::from_secs(10),
            &mut || Some("srun: error: no nodes".into()),
            &LastWords::default(),
        );
        assert!(e.unwrap_err().to_string().contains("(it ended first: srun: error: no nodes)"));
    }

    #[test]
    fn secrets_are_fresh_and_compared_whole() {
        let (a, b) = (new_secret().unwrap(), new_secret().unwrap());
        assert_eq!(a.len(), 32);
        assert_ne!(a, b);
        assert!(same(a.as_bytes(), a.clone().as_bytes()));
        assert!(!same(a.as_bytes(), b.as_bytes()) && !same(a.as_bytes(), &a.as_bytes()[..31]));
    }
}
