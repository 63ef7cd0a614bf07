//! One server's lifecycle: [`start`] (setup and spawn, here or on a host: [`Place::start`]; wait until it answers
//! over HTTP, from here; verify one answer) and its stop ([`Placed::stop`], through [`RunningServer::process`]). A server never outlives its
//! runner: one dropped without a stop (an error, a panic) is killed, tree and cgroup; a second signal kills every
//! running one ([`live`](crate::process::live)).

use std::net::SocketAddr;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::place::{Place, Placed};
use crate::process::{Hook, Launch};
use shootout_engine::probe::{self, Failure, FailureKind};
use shootout_model::Protocol;
use shootout_suite::ServerSpec;

/// How long a server's tree must listen elsewhere, and only there, while its url is refused, before its start
/// fails for it: a quarter of its ready timeout (7.5 s of the default 30 s), and at least 2 s. Long enough for a
/// server that opens an admin or shutdown port seconds before its own; one that opens its own later than that
/// has a ready timeout too tight for it anyway.
pub fn elsewhere_for(ready_timeout: Duration) -> Duration {
    (ready_timeout / 4).max(Duration::from_secs(2))
}

/// A started server.
#[derive(Debug)]
pub struct RunningServer {
    /// Its base URL, port filled in.
    pub url: String,
    /// Its processes, here or on a host.
    pub process: Placed,
    /// Where it runs.
    pub place: Place,
}

/// Starts `spec` beside `services` (their names and ports), logging to `log`, and returns once it answers and
/// passes verification. Every error names the server and says what to look at. When `stop` is set meanwhile
/// (Ctrl-C, SIGTERM), its setup, ready probe and verification end at once: the server is stopped and an error
/// returned, which the caller knows by `stop`.
pub fn start(
    spec: &ServerSpec,
    place: &Place,
    services: &[(String, u16)],
    log: &Path,
    stop: &AtomicBool,
) -> Result<RunningServer, String> {
    let launch = Launch {
        kind: "server",
        name: &spec.name,
        command: &spec.command,
        port: spec.port,
        setup: spec.setup.as_deref(),
        cwd: &spec.cwd,
        env: &spec.env,
        cpus: spec.cpus.as_deref(),
        stop_signal: spec.stop_signal,
        grace: spec.stop_grace,
        stop_pidfile: spec.stop_pidfile.as_deref(),
        container: spec.place.container(),
        hook_timeout: spec.hook_timeout,
    };
    let process = place.start(&launch, services, log, stop)?;
    let url = process.fill().fill(&spec.url).trim_end_matches('/').to_string();
    let url = match place {
        Place::There(link) => link.reachable(&url),
        Place::Here => url,
    };
    let mut server = RunningServer { url, process, place: place.clone() };
    if let Err(e) = server.wait_ready(spec, stop).and_then(|()| server.verify(spec, log, stop)) {
        server.process.stop();
        return Err(e);
    }
    Ok(server)
}

impl RunningServer {
    /// Probes its ready path until it answers with a ready status. What waiting cannot mend ends the wait at
    /// once: a host name that does not resolve, or (where its processes can be read) a tree that listens on
    /// other addresses, and only on them, for [`elsewhere_for`] its ready timeout while the url's is refused (over HTTP/3, one that
    /// listens on the url's TCP port while its UDP port refuses QUIC).
    fn wait_ready(&mut self, spec: &ServerSpec, stop: &AtomicBool) -> Result<(), String> {
        let name = self.process.name().to_string();
        let deadline = Instant::now() + spec.ready_timeout;
        let url = format!("{}{}", self.url, spec.ready_path);
        let mut last = Failure { kind: FailureKind::Other, text: "no answer yet".into() };
        let mut last_status = None;
        let mut elsewhere: Option<(Instant, Vec<SocketAddr>)> = None;
        while Instant::now() < deadline {
            if stop.load(Ordering::Relaxed) {
                return Err(format!("server '{name}': interrupted while it was getting ready"));
            }
            if let Some(status) = self.process.exited() {
                return Err(self.process.ended_early(&status, "it answered"));
            }
            match probe::get(&url, Duration::from_secs(1), spec.protocol) {
                Ok(answer) if spec.ready_status.map_or(answer.status < 400, |s| s == answer.status) => return Ok(()),
                Ok(answer) => (last_status, elsewhere) = (Some(answer.status), None),
                Err(failure) if failure.kind == FailureKind::SpeaksTls => {
                    let https = spec.url.replacen("http://", "https://", 1);
                    return Err(format!(
                        "server '{name}' answers in TLS at {url}: give it an https:// url, e.g. url = \"{https}\""
                    ));
                }
                Err(failure) if failure.kind == FailureKind::Unresolved => {
                    return Err(format!(
                        "server '{name}': the host of its url {url} does not resolve ({failure}): give it a url \
                         whose host this machine can reach, e.g. url = \"http://ADDRESS:{{port}}\""
                    ))
                }
                Err(failure) => {
                    // A container's published port may accept and then drop what it cannot pass on.
                    let inside = spec.place.container().map(|c| c.port);
                    if failure.kind == FailureKind::Refused || inside.is_some() {
                        let http3 = spec.protocol == Protocol::Http3;
                        let patience = elsewhere_for(spec.ready_timeout);
                        if let Some(why) = self.listens_elsewhere(&url, inside, http3, patience, &mut elsewhere) {
                            return Err(format!("server '{name}' {why}\n{}", self.process.log_tail()));
                        }
                    } else {
                        elsewhere = None;
                    }
                    (last, last_status) = (failure, None);
                }
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let within = humantime::format_duration(spec.ready_timeout);
        let tail = self.process.log_tail();
        Err(match last_status {
            None if last.kind == FailureKind::Rejected => format!(
                "server '{name}' met the probes of {url} without a response until its ready.timeout of {within} ran \
                 out (the last: {last}): fix the server, or its ready settings (ready.path)\n{tail}"
            ),
            Some(status) => format!(
                "server '{name}' answered {url} with status {status} until its ready.timeout of {within} ran out, \
                 and {}: fix the server or its ready settings (ready.path, ready.status)\n{tail}",
                spec.ready_status.map_or("a ready status is below 400".to_string(), |s| format!("ready.status is {s}"))
            ),
            None => format!(
                "server '{name}' was not ready within {within} ({url}: {last}); raise ready.timeout if it is slow to \
                 start\n{tail}"
            ),
        })
    }

    /// Whether its tree, refused on the url's address, listens on other addresses only, and has for `patience`
    /// (`since` keeps when that was first seen, and where): the message then, naming where it listens. In a
    /// container (`inside`: the port its image listens on), an address its published port reaches is that port on
    /// any address but loopback. Over HTTP/3 (`http3`: its UDP port refused the handshake), a tree that listens
    /// on the url's TCP port serves HTTP/1.1 or HTTP/2 there but not HTTP/3, which the message says.
    fn listens_elsewhere(
        &self,
        url: &str,
        inside: Option<u16>,
        http3: bool,
        patience: Duration,
        since: &mut Option<(Instant, Vec<SocketAddr>)>,
    ) -> Option<String> {
        let wanted = probe::Parts::of(url).ok()?.socket().ok()?;
        let listening = self.process.listening()?;
        let reaches = |a: &SocketAddr| match inside {
            Some(port) => a.port() == port && !a.ip().is_loopback(),
            None => a.port() == wanted.port() && (a.ip().is_unspecified() || a.ip() == wanted.ip()),
        };
        // Over HTTP/3 the url's UDP port refused: its tree listening on the same TCP port is what explains it.
        let on_url = listening.iter().any(reaches);
        if listening.is_empty() || (on_url && !http3) {
            *since = None;
            return None;
        }
        match since {
            Some((at, seen)) if *seen == listening => {
                if at.elapsed() < patience {
                    return None;
                }
            }
            _ => {
                *since = Some((Instant::now(), listening));
                return None;
            }
        }
        let (_, listening) = since.as_ref()?;
        let addresses: Vec<String> = listening.iter().map(SocketAddr::to_string).collect();
        if on_url {
            return Some(format!(
                "listens on TCP {} but its UDP port refuses QUIC: it does not serve HTTP/3 there; turn HTTP/3 on \
                 in its configuration (on the same port), or give it protocol = \"http2\"",
                addresses.join(", ")
            ));
        }
        if let Some(port) = inside {
            return Some(if listening.iter().any(|a| a.port() == port) {
                format!(
                    "listens on {} inside its container, which its published port cannot reach: have it listen on \
                     0.0.0.0 (every address) inside, as a server in a container must",
                    addresses.join(", ")
                )
            } else {
                format!(
                    "listens on {} inside its container, not on its container's port {port}: make the two agree",
                    addresses.join(", ")
                )
            });
        }
        let port = self.process.fill().port;
        let on_port = listening.iter().any(|a| a.port() == wanted.port());
        Some(if on_port {
            format!(
                "listens on {}, which its url {url} does not reach: have it listen on {} (or on every address), or \
                 give the url the address it listens on",
                addresses.join(", "),
                wanted.ip()
            )
        } else if wanted.port() == port {
            format!(
                "listens on {}, not on {{port}} = {port}: put {{port}} in its command (or its configuration) \
                 where it says which port to listen on",
                addresses.join(", ")
            )
        } else {
            format!("listens on {}, not on {wanted}, the address of its url {url}", addresses.join(", "))
        })
    }

    /// Checks the server's answer on its path against its verify settings; a stop meanwhile ends the wait for the
    /// answer at once (the probe, on a thread of its own, then ends by its timeout).
    fn verify(&mut self, spec: &ServerSpec, log: &Path, stop: &AtomicBool) -> Result<(), String> {
        let url = format!("{}{}", self.url, spec.path);
        let (send, answered) = std::sync::mpsc::channel();
        let (asked, protocol) = (url.clone(), spec.protocol);
        std::thread::spawn(move || send.send(probe::get(&asked, Duration::from_secs(10), protocol)));
        let answer = loop {
            match answered.recv_timeout(Duration::from_millis(20)) {
                Ok(answer) => break answer,
                Err(_) if stop.load(Ordering::Relaxed) => {
                    return Err(format!("server '{}': interrupted", self.process.name()))
                }
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
                Err(e) => return Err(format!("server '{}': {url}: {e}", self.process.name())),
            }
        };
        let answer = answer.map_err(|e| format!("server '{}': {url}: {e}", self.process.name()))?;
        let status_ok = spec.verify_status.map_or(answer.status < 400, |s| s == answer.status);
        let body_ok = spec.verify_body.as_ref().is_none_or(|text| answer.body.contains(text.as_str()));
        if status_ok && body_ok {
            return self.verify_command(spec, log, stop);
        }
        let excerpt: String = answer.body.chars().take(120).collect();
        Err(format!(
            "server '{}' answered {url} with status {} and body {excerpt:?}, which fails its verify check: fix the server or its verify settings",
            self.process.name(), answer.status
        ))
    }

    /// Runs the server's verify command, if it has one, where the server runs, after its verification request.
    fn verify_command(&self, spec: &ServerSpec, log: &Path, stop: &AtomicBool) -> Result<(), String> {
        let Some(command) = &spec.verify_command else { return Ok(()) };
        let hook = Hook { command, cwd: &spec.cwd, env: &spec.env, fill: self.process.fill(), log };
        let deadline = Instant::now() + spec.hook_timeout;
        self.place.run_hook(hook, stop, Some(deadline)).map_err(|e| {
            let failed = crate::process::failed_hook("its verify command", e);
            format!("server '{}' answered its verification request, but {failed}", spec.name)
        })
    }
}
