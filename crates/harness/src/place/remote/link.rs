//! [`HostLink`]: the runner's end of one host: `ssh -T -o BatchMode=yes -o ServerAliveInterval=… [-F CONFIG] --
//! TARGET 'COMMAND host'`, started once per host for the whole run, in a process group of its own (the
//! terminal's Ctrl-C reaches the runner alone, which stops what runs there itself). Questions are asked one at a
//! time, each answered in order, each within the link's timeout (a minute by default) beyond its own time (a
//! hook's limit, a stop's grace): a link that stops answering (a network that drops everything, an ssh client
//! stopped) fails its question then, and at once once the runner has been told to stop (Ctrl-C, SIGTERM). An idle
//! link is pinged every quarter of the timeout, so the host, which stops everything it started when it hears
//! nothing for the timeout, keeps going; ssh's own keep-alive (`ServerAliveInterval`, `ServerAliveCountMax`) ends
//! a connection whose far end went quiet. When the runner ends, however it ends, the ssh client's input closes
//! and the host kills what it started; a dropped link also ends the ssh client.

use std::io::{BufReader, Write};
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, Weak};
use std::time::{Duration, Instant};

use shootout_agents::launch::LastWords;
use shootout_suite::Hosts;

use super::protocol::{FromHost, ToHost, VERSION};
use shootout_model::run::Machine;

/// How long a question may still wait once the runner has been told to stop, beyond its own time.
const STOPPING: Duration = Duration::from_secs(3);

/// The asking end: the host's input, and its answers as a thread reads them.
struct Talk {
    input: ChildStdin,
    answers: Receiver<Result<Option<FromHost>, String>>,
}

/// One host's ssh session.
pub struct HostLink {
    /// What ssh was given: `[user@]HOST`.
    pub target: String,
    /// The address ssh connects to for it (`ssh -G`'s `hostname`: an alias of the ssh config becomes its
    /// HostName), which a server's url there defaults to.
    pub address: String,
    /// The machine there.
    pub machine: Machine,
    /// How long it may stay silent ([`Hosts::link_timeout`]).
    pub timeout: Duration,
    talk: Mutex<Option<Talk>>,
    ssh: Mutex<Child>,
    words: LastWords,
    last_asked: Mutex<Instant>,
    stop: OnceLock<Arc<AtomicBool>>,
    /// Why it was lost, once it was.
    lost_why: OnceLock<String>,
}

impl std::fmt::Debug for HostLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostLink").field("target", &self.target).field("address", &self.address).finish()
    }
}

impl HostLink {
    /// Starts `shootout host` on `target` and says hello: a host that cannot be reached, has no shootout, or runs
    /// another release of it, is one line naming the host and the fix. The link is pinged while it is idle.
    pub fn connect(target: &str, hosts: &Hosts) -> Result<Arc<HostLink>, String> {
        let remote = format!("{} host", hosts.command.as_deref().unwrap_or("shootout"));
        let alive = (hosts.link_timeout / 4).as_secs().max(1);
        let mut ssh = Command::new("ssh");
        ssh.args(["-T", "-o", "BatchMode=yes"]);
        ssh.arg("-o").arg(format!("ServerAliveInterval={alive}")).args(["-o", "ServerAliveCountMax=4"]);
        if let Some(config) = &hosts.ssh_config {
            ssh.arg("-F").arg(config);
        }
        ssh.args(["--", target, &remote]);
        let mut child = ssh
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn()
            .map_err(|e| format!("host '{target}': cannot start ssh ({e}); install OpenSSH's client"))?;
        let (Some(input), Some(output), Some(stderr)) = (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            unreachable!("all three were piped");
        };
        let answers = super::host::read_in_turn(BufReader::new(output), "a host");
        let mut link = HostLink {
            target: target.to_string(),
            address: address_of(target, hosts),
            machine: Machine::default(),
            timeout: hosts.link_timeout,
            talk: Mutex::new(Some(Talk { input, answers })),
            ssh: Mutex::new(child),
            words: LastWords::keep(stderr),
            last_asked: Mutex::new(Instant::now()),
            stop: OnceLock::new(),
            lost_why: OnceLock::new(),
        };
        let hello = ToHost::Hello {
            shootout: env!("CARGO_PKG_VERSION").into(),
            protocol: VERSION,
            link_timeout_ms: hosts.link_timeout.as_millis() as u64,
        };
        match link.ask(&hello) {
            Ok(FromHost::Hello { shootout, protocol, machine }) => {
                if protocol != VERSION || shootout != env!("CARGO_PKG_VERSION") {
                    return Err(format!(
                        "host '{target}': its shootout is {shootout} (host protocol {protocol}), this one {} (protocol {VERSION}): install the same release there",
                        env!("CARGO_PKG_VERSION")
                    ));
                }
                link.machine = machine;
                let link = Arc::new(link);
                keep_alive(Arc::downgrade(&link));
                Ok(link)
            }
            Ok(other) => Err(format!("host '{target}': answered the hello with {other:?}")),
            Err(why) => Err(format!("host '{target}': cannot start `{remote}` there ({why}); check that ssh {target} works without a password and that shootout is installed there (or set [hosts] command)")),
        }
    }

    /// From now on, a question still unanswered [`STOPPING`] after `stop` is set (beyond its own time) fails: the
    /// first Ctrl-C or SIGTERM is not held up by a stalled link.
    pub fn stop_with(&self, stop: Arc<AtomicBool>) {
        let _ = self.stop.set(stop);
    }

    /// `url` with its host written as ssh connects to it, when it names this host's target (the suite's default
    /// url, `http://ALIAS:{port}`): a name only ssh's config knows cannot be reached over HTTP.
    pub fn reachable(&self, url: &str) -> String {
        let host = self.target.rsplit_once('@').map_or(self.target.as_str(), |(_, host)| host);
        let Some((scheme, rest)) = url.split_once("://") else { return url.to_string() };
        let authority = rest.split(['/', '?']).next().unwrap_or("");
        let named = authority.rsplit_once(':').filter(|(_, p)| p.parse::<u16>().is_ok()).map_or(authority, |(h, _)| h);
        if named != host || self.address == host {
            return url.to_string();
        }
        let address = if self.address.contains(':') { format!("[{}]", self.address) } else { self.address.clone() };
        format!("{scheme}://{address}{}", &rest[named.len()..])
    }

    /// Asks one question and reads its answer within the link's timeout; an error says the link is lost, with
    /// ssh's last words.
    pub fn ask(&self, question: &ToHost) -> Result<FromHost, String> {
        self.ask_within(question, Duration::ZERO)
    }

    /// As [`HostLink::ask`], for a question that takes up to `own` itself (a hook's limit, a stop's grace).
    pub fn ask_within(&self, question: &ToHost, own: Duration) -> Result<FromHost, String> {
        let mut talk = self.talk.lock().map_err(|_| "the link is broken".to_string())?;
        self.ask_holding(&mut talk, question, own)
    }

    fn ask_holding(
        &self,
        talk: &mut MutexGuard<'_, Option<Talk>>,
        question: &ToHost,
        own: Duration,
    ) -> Result<FromHost, String> {
        let Some(Talk { input, answers }) = talk.as_mut() else {
            return Err(self.lost(self.lost_why.get().map_or("it was closed", String::as_str)));
        };
        let asked = Instant::now();
        if let Ok(mut last) = self.last_asked.lock() {
            *last = asked;
        }
        let failed = match shootout_agents::frame::write(input, question) {
            Err(e) => e.to_string(),
            Ok(()) => loop {
                match answers.recv_timeout(Duration::from_millis(100)) {
                    Ok(Ok(Some(answer))) => return Ok(answer),
                    Ok(Ok(None)) | Err(RecvTimeoutError::Disconnected) => break "it ended".to_string(),
                    Ok(Err(why)) => break why,
                    Err(RecvTimeoutError::Timeout) => {}
                }
                let stopping = self.stop.get().is_some_and(|stop| stop.load(Ordering::Relaxed));
                let allowed = if stopping { STOPPING } else { self.timeout } + own;
                if asked.elapsed() >= allowed {
                    self.end_ssh();
                    let waited = humantime::format_duration(Duration::from_secs(asked.elapsed().as_secs()));
                    break if stopping {
                        format!("it answered nothing in {waited}, and the run is stopping")
                    } else {
                        format!("it answered nothing in {waited}, its link_timeout beyond the question's own time")
                    };
                }
            },
        };
        **talk = None;
        let _ = self.lost_why.set(failed.clone());
        Err(self.lost(&failed))
    }

    /// Kills the ssh client (the host then stops what it started: at once when its input ends, or when it has
    /// heard nothing for the link's timeout).
    fn end_ssh(&self) {
        if let Ok(mut ssh) = self.ssh.lock() {
            let _ = ssh.kill();
            let _ = ssh.wait();
        }
    }

    /// Why the link was lost, with what ssh last said, once it was.
    pub fn lost_why(&self) -> Option<String> {
        self.lost_why.get().map(|why| self.lost(why))
    }

    /// Why the link is gone, with what ssh last said.
    fn lost(&self, why: &str) -> String {
        match self.words.last() {
            Some(said) => format!("the link to host '{}' was lost ({why}): {said}", self.target),
            None => format!("the link to host '{}' was lost ({why})", self.target),
        }
    }
}

/// Pings the link each time it has been idle for a quarter of its timeout, until it is dropped or lost; a
/// question being asked meanwhile is sign enough.
fn keep_alive(link: Weak<HostLink>) {
    std::thread::spawn(move || loop {
        std::thread::sleep(Duration::from_millis(200));
        let Some(link) = link.upgrade() else { return };
        let idle = link.last_asked.lock().map_or(Duration::ZERO, |last| last.elapsed());
        if idle < link.timeout / 4 {
            continue;
        }
        let Ok(mut talk) = link.talk.try_lock() else { continue };
        if talk.is_none() || link.ask_holding(&mut talk, &ToHost::Ping, Duration::ZERO).is_err() {
            return;
        }
    });
}

impl Drop for HostLink {
    /// Closes the host's input (it kills what it started and ends), then waits a moment for ssh to end, and
    /// kills it if it has not.
    fn drop(&mut self) {
        if let Ok(mut talk) = self.talk.lock() {
            if let Some(Talk { mut input, .. }) = talk.take() {
                let _ = input.flush();
            }
        }
        let Ok(mut ssh) = self.ssh.lock() else { return };
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if ssh.try_wait().ok().flatten().is_some() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = ssh.kill();
        let _ = ssh.wait();
    }
}

/// The address ssh connects to for `target` under `hosts`' config: the `hostname` line of `ssh -G`; the target's
/// host itself when ssh cannot say.
fn address_of(target: &str, hosts: &Hosts) -> String {
    let host = target.rsplit_once('@').map_or(target, |(_, host)| host).to_string();
    let mut ssh = Command::new("ssh");
    ssh.arg("-G");
    if let Some(config) = &hosts.ssh_config {
        ssh.arg("-F").arg(config);
    }
    let Ok(output) = ssh.args(["--", target]).stdin(Stdio::null()).stderr(Stdio::null()).output() else { return host };
    let text = String::from_utf8_lossy(&output.stdout);
    let named = text.lines().find_map(|line| line.strip_prefix("hostname ")).map(str::trim);
    named.filter(|name| output.status.success() && !name.is_empty()).map_or(host, str::to_string)
}
