//! [`HostLink`]: the runner's end of one host: `ssh -T -o BatchMode=yes [-F CONFIG] -- TARGET 'COMMAND host'`,
//! started once per host for the whole run, in a process group of its own (the terminal's Ctrl-C reaches the
//! runner alone, which stops what runs there itself). Questions are asked one at a time, each answered in order.
//! When the runner ends, however it ends, the ssh client's input closes and the host kills what it started; a
//! dropped link also ends the ssh client.

use std::io::{BufReader, Write};
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use shootout_agents::launch::LastWords;
use shootout_suite::Hosts;

use super::protocol::{FromHost, ToHost, VERSION};
use shootout_model::run::Machine;

/// One host's ssh session.
#[derive(Debug)]
pub struct HostLink {
    /// What ssh was given: `[user@]HOST`.
    pub target: String,
    /// The address ssh connects to for it (`ssh -G`'s `hostname`: an alias of the ssh config becomes its
    /// HostName), which a server's url there defaults to.
    pub address: String,
    /// The machine there.
    pub machine: Machine,
    talk: Mutex<Option<(ChildStdin, BufReader<ChildStdout>)>>,
    ssh: Mutex<Child>,
    words: LastWords,
}

impl HostLink {
    /// Starts `shootout host` on `target` and says hello: a host that cannot be reached, has no shootout, or runs
    /// another release of it, is one line naming the host and the fix.
    pub fn connect(target: &str, hosts: &Hosts) -> Result<HostLink, String> {
        let remote = format!("{} host", hosts.command.as_deref().unwrap_or("shootout"));
        let mut ssh = Command::new("ssh");
        ssh.args(["-T", "-o", "BatchMode=yes"]);
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
        let mut link = HostLink {
            target: target.to_string(),
            address: address_of(target, hosts),
            machine: Machine::default(),
            talk: Mutex::new(Some((input, BufReader::new(output)))),
            ssh: Mutex::new(child),
            words: LastWords::keep(stderr),
        };
        let hello = ToHost::Hello { shootout: env!("CARGO_PKG_VERSION").into(), protocol: VERSION };
        match link.ask(&hello) {
            Ok(FromHost::Hello { shootout, protocol, machine }) => {
                if protocol != VERSION || shootout != env!("CARGO_PKG_VERSION") {
                    return Err(format!(
                        "host '{target}': its shootout is {shootout} (host protocol {protocol}), this one {} (protocol {VERSION}): install the same release there",
                        env!("CARGO_PKG_VERSION")
                    ));
                }
                link.machine = machine;
                Ok(link)
            }
            Ok(other) => Err(format!("host '{target}': answered the hello with {other:?}")),
            Err(why) => Err(format!("host '{target}': cannot start `{remote}` there ({why}); check that ssh {target} works without a password and that shootout is installed there (or set [hosts] command)")),
        }
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

    /// Asks one question and reads its answer; an error says the link is lost, with ssh's last words.
    pub fn ask(&self, question: &ToHost) -> Result<FromHost, String> {
        let mut talk = self.talk.lock().map_err(|_| "the link is broken".to_string())?;
        let Some((input, output)) = talk.as_mut() else { return Err(self.lost("it was closed")) };
        let asked = shootout_agents::frame::write(input, question);
        let answer = asked.map_err(|e| e.to_string()).and_then(|()| {
            shootout_agents::frame::read::<_, FromHost>(output, &format!("host '{}'", self.target))
                .map_err(|e| e.to_string())
        });
        match answer {
            Ok(Some(answer)) => Ok(answer),
            Ok(None) => {
                *talk = None;
                Err(self.lost("it ended"))
            }
            Err(why) => {
                *talk = None;
                Err(self.lost(&why))
            }
        }
    }

    /// Why the link is gone, with what ssh last said.
    fn lost(&self, why: &str) -> String {
        match self.words.last() {
            Some(said) => format!("the link to host '{}' was lost ({why}): {said}", self.target),
            None => format!("the link to host '{}' was lost ({why})", self.target),
        }
    }
}

impl Drop for HostLink {
    /// Closes the host's input (it kills what it started and ends), then waits a moment for ssh to end, and
    /// kills it if it has not.
    fn drop(&mut self) {
        if let Ok(mut talk) = self.talk.lock() {
            if let Some((mut input, _)) = talk.take() {
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
