//! [`Settler`]: brings a server back to rest between a capacity search's probes, so that no probe inherits the
//! last one's queue. An overloaded probe leaves connections waiting in the server's accept queue, SYNs being
//! retransmitted, and requests still being worked on after the client gave up on them; a probe started at once
//! pays for them (on gunicorn, 3,000/s served 2,014/s right after 4,000/s served 3,626/s). Before each probe the
//! settler waits, for at most [`MOST`], until all of these hold:
//! - nothing waits on the server's port: its listening socket's accept queue is empty, and no connection to it is
//!   half open or closed by the client but not yet by the server (read from the kernel's socket table, when the
//!   server listens on this machine's loopback). A server that does not close such connections at all (their
//!   count has not fallen for [`KEPT_OPEN`]) keeps them as it keeps them at rest: they are not waited for;
//! - the processes that hold its listening socket use under [`IDLE_CPU`] of a CPU (when they run here);
//! - a check of [`CHECK_REQUESTS`] requests, one at a time, is answered at the server's usual latency: a median
//!   at most [`USUAL`] times that of the check before the first probe, or 1 ms more.
//!
//! It says how long that took and, when it gave up, what was still not at rest.

use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use procfs::net::TcpState;
use shootout_engine::probe::{self, Parts};
use shootout_model::Protocol;

/// The longest a server is waited for between two probes.
pub const MOST: Duration = Duration::from_secs(30);
/// Under this share of one CPU, the server's processes are idle.
pub const IDLE_CPU: f64 = 0.1;
/// Requests in one check of the server's latency.
pub const CHECK_REQUESTS: usize = 5;
/// A check's median latency within this many times the usual one (or 1 ms more) is the server's usual speed.
pub const USUAL: f64 = 3.0;
/// A settling longer than this is worth a line.
pub const LONG: Duration = Duration::from_secs(5);
/// Connections closed by the client whose count has not fallen for this long are ones the server keeps open.
pub const KEPT_OPEN: Duration = Duration::from_secs(2);
/// How long the server's CPU is watched for each look.
const CPU_WINDOW: Duration = Duration::from_millis(250);

/// How one settling went.
#[derive(Debug, Clone, PartialEq)]
pub struct Rest {
    /// The time it took.
    pub took: Duration,
    /// What was still not at rest when it gave up after [`MOST`] (`None`: the server came to rest).
    pub unsettled: Option<String>,
}

impl Rest {
    /// What a reader is told of it, when it gave up or took longer than [`LONG`]: `not back at rest after 30 s
    /// (…); probing all the same`, `took 6.2 s to come back to rest`.
    pub fn notice(&self) -> Option<String> {
        let took = self.took.as_secs_f64();
        match &self.unsettled {
            Some(why) => Some(format!("not back at rest after {took:.0} s ({why}); probing all the same")),
            None if self.took >= LONG => Some(format!("took {took:.1} s to come back to rest")),
            None => None,
        }
    }
}

/// Watches one server between the probes of its search.
#[derive(Debug)]
pub struct Settler {
    url: String,
    protocol: Protocol,
    /// The port it listens on, when it listens on this machine's loopback.
    port: Option<u16>,
    /// The processes that hold its listening socket, here.
    pids: Vec<i32>,
    /// The median latency of a check with the server at rest.
    usual: Option<Duration>,
    /// In the settling under way, the fewest connections closed by the client but not by the server seen so far,
    /// and since when there have been that few.
    closing: Option<(u64, Instant)>,
}

impl Settler {
    /// A settler for the server at `url`, checked over `protocol`. Call it once with the server at rest, before
    /// the first probe: its check then gives the usual latency.
    pub fn new(url: &str, protocol: Protocol) -> Settler {
        let port = loopback_port(url);
        let pids = port.map(listeners).unwrap_or_default();
        let mut settler = Settler { url: url.to_string(), protocol, port, pids, usual: None, closing: None };
        settler.usual = settler.check().ok();
        settler
    }

    /// Waits until the server is at rest, for at most [`MOST`], or until `stop` is set.
    pub fn settle(&mut self, stop: &AtomicBool) -> Rest {
        let began = Instant::now();
        self.closing = None;
        loop {
            let (unsettled, gone) = match self.not_at_rest() {
                Ok(unsettled) => (unsettled, false),
                Err(gone) => (Some(gone), true),
            };
            if unsettled.is_none() || gone || began.elapsed() >= MOST || stop.load(Ordering::Relaxed) {
                return Rest { took: began.elapsed(), unsettled };
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// What is not at rest yet, in words (`None` when everything is); an error when the server is gone (its port
    /// refuses connections), which no waiting mends.
    fn not_at_rest(&mut self) -> Result<Option<String>, String> {
        if let Some(port) = self.port {
            let waiting = waiting_on(port);
            if waiting.queued > 0 {
                return Ok(Some(format!("{} connections still waited on port {port}", waiting.queued)));
            }
            if !self.kept_open(waiting.closing, Instant::now()) {
                return Ok(Some(format!(
                    "{} connections closed by the client were not yet closed by the server",
                    waiting.closing
                )));
            }
        }
        if !self.pids.is_empty() {
            let share = cpu_share(&self.pids, CPU_WINDOW);
            if share >= IDLE_CPU {
                return Ok(Some(format!("its processes still used {:.0}% of a CPU", share * 100.0)));
            }
        }
        let Some(usual) = self.usual else { return Ok(None) };
        match self.check() {
            Ok(now) if now.as_secs_f64() <= (usual.as_secs_f64() * USUAL).max(usual.as_secs_f64() + 0.001) => Ok(None),
            Ok(now) => Ok(Some(format!(
                "it answered a check in {:.3} ms (usually {:.3} ms)",
                now.as_secs_f64() * 1e3,
                usual.as_secs_f64() * 1e3
            ))),
            Err(why) if why.contains("refused") => Err(format!("it refused a connection ({why})")),
            Err(why) => Ok(Some(format!("it did not answer a check ({why})"))),
        }
    }

    /// Whether `closing` connections closed by the client but not by the server, seen `now`, are at rest: none,
    /// or as many as the server has kept for [`KEPT_OPEN`] without closing one (it does not close them).
    fn kept_open(&mut self, closing: u64, now: Instant) -> bool {
        if closing == 0 {
            return true;
        }
        let since = match self.closing {
            Some((fewest, since)) if closing >= fewest => since,
            _ => now,
        };
        self.closing = Some((closing.min(self.closing.map_or(closing, |(fewest, _)| fewest)), since));
        now.duration_since(since) >= KEPT_OPEN
    }

    /// The median latency of [`CHECK_REQUESTS`] requests one at a time; what went wrong when one went unanswered.
    fn check(&self) -> Result<Duration, String> {
        let mut times = Vec::with_capacity(CHECK_REQUESTS);
        for _ in 0..CHECK_REQUESTS {
            let sent = Instant::now();
            probe::get(&self.url, Duration::from_secs(2), self.protocol)?;
            times.push(sent.elapsed());
        }
        times.sort();
        Ok(times[times.len() / 2])
    }
}

/// The port of `url` when its host is on this machine's loopback (127.0.0.0/8, ::1, or a name for one).
fn loopback_port(url: &str) -> Option<u16> {
    let address = Parts::of(url).ok()?.socket().ok()?;
    address.ip().is_loopback().then_some(address.port())
}

/// Every TCP socket of this network namespace, IPv4 and IPv6.
fn sockets() -> Vec<procfs::net::TcpNetEntry> {
    let mut all = procfs::net::tcp().unwrap_or_default();
    all.extend(procfs::net::tcp6().unwrap_or_default());
    all
}

/// Connections waiting on a server's port.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Waiting {
    /// In its listening sockets' accept queues, or half open (the server's SYN-ACK not yet acknowledged).
    pub queued: u64,
    /// Closed by the client while the server has not closed its end.
    pub closing: u64,
}

/// Connections waiting on the server at `port`.
pub fn waiting_on(port: u16) -> Waiting {
    let mut waiting = Waiting::default();
    for s in sockets().iter().filter(|s| s.local_address.port() == port) {
        match s.state {
            TcpState::Listen => waiting.queued += u64::from(s.rx_queue),
            TcpState::SynRecv | TcpState::NewSynRecv => waiting.queued += 1,
            TcpState::CloseWait => waiting.closing += 1,
            _ => {}
        }
    }
    waiting
}

/// The processes that hold a socket listening on `port` (a pre-forking server's workers all do).
pub fn listeners(port: u16) -> Vec<i32> {
    let inodes: Vec<u64> = sockets()
        .iter()
        .filter(|s| s.state == TcpState::Listen && s.local_address.port() == port)
        .filter(|s| listening_here(s.local_address.ip()))
        .map(|s| s.inode)
        .collect();
    if inodes.is_empty() {
        return Vec::new();
    }
    let Ok(processes) = procfs::process::all_processes() else { return Vec::new() };
    processes
        .filter_map(|p| {
            let p = p.ok()?;
            let holds = p.fd().ok()?.filter_map(|fd| fd.ok()).any(|fd| match fd.target {
                procfs::process::FDTarget::Socket(inode) => inodes.contains(&inode),
                _ => false,
            });
            holds.then_some(p.pid)
        })
        .collect()
}

/// A listening address that a loopback connection reaches: loopback itself, or every address.
fn listening_here(ip: IpAddr) -> bool {
    ip.is_loopback() || ip.is_unspecified()
}

/// The share of one CPU that `pids` used over `window` (their threads included).
pub fn cpu_share(pids: &[i32], window: Duration) -> f64 {
    let ticks =
        || pids.iter().filter_map(|&pid| crate::sampling::tree::Process::read(pid)).map(|p| p.ticks).sum::<u64>();
    let before = ticks();
    let began = Instant::now();
    std::thread::sleep(window);
    let used = ticks().saturating_sub(before) as f64 / procfs::ticks_per_second() as f64;
    used / began.elapsed().as_secs_f64()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_loopback_url_gives_its_port_and_another_host_none() {
        assert_eq!(loopback_port("http://127.0.0.1:8080/x"), Some(8080));
        assert_eq!(loopback_port("https://[::1]/"), Some(443));
        assert_eq!(loopback_port("http://127.0.0.2:81"), Some(81));
        assert_eq!(loopback_port("http://192.0.2.1:81/"), None);
    }

    #[test]
    fn a_listening_socket_is_found_with_its_process_and_its_accept_queue() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        assert_eq!(listeners(port), [std::process::id() as i32]);
        assert_eq!(waiting_on(port), Waiting::default());
        let waiting: Vec<_> = (0..3).map(|_| std::net::TcpStream::connect(("127.0.0.1", port)).unwrap()).collect();
        assert_eq!(waiting_on(port), Waiting { queued: 3, closing: 0 }, "three connections not accepted yet");
        drop(waiting);
        let accepted: Vec<_> = (0..3).map(|_| listener.accept().unwrap()).collect();
        let closing = Waiting { queued: 0, closing: 3 };
        assert_eq!(waiting_on(port), closing, "accepted, closed by the client, not yet by the server");
        drop(accepted);
        assert_eq!(waiting_on(port), Waiting::default());
    }

    #[test]
    fn connections_the_server_keeps_open_are_waited_for_only_while_their_count_falls() {
        let mut settler = Settler {
            url: "http://127.0.0.1:1/".into(),
            protocol: Protocol::Http1,
            port: None,
            pids: Vec::new(),
            usual: None,
            closing: None,
        };
        let t0 = Instant::now();
        let at = |s: f64| t0 + Duration::from_secs_f64(s);
        assert!(settler.kept_open(0, at(0.0)), "none");
        assert!(!settler.kept_open(9, at(0.0)));
        assert!(!settler.kept_open(5, at(1.0)), "the server is closing them");
        assert!(!settler.kept_open(5, at(2.5)), "five for 1.5 s");
        assert!(!settler.kept_open(6, at(2.9)), "a new one does not restart the wait");
        assert!(settler.kept_open(5, at(3.0)), "five for 2 s: the server keeps them");
        assert!(!settler.kept_open(4, at(3.1)), "it closed one after all");
    }
}
