//! [`Sockets`]: the TCP sockets of a process's network namespace, by inode, read from `/proc/PID/net/tcp` and
//! `tcp6`, so that a thread waiting on a socket can be said to wait for its client (a socket accepted on a
//! listening port) or on a backend (one it connected to a listening port elsewhere, a database). The table is read
//! again only when a socket is not in it, and at most every [`REREAD`]: the kernel walks its whole connection
//! table to write it (about 10 ms of CPU on this project's machine however few sockets there are), so a sweep of a
//! busy server costs a lookup. A socket made since the last read is not known until the next: a wait on it counts
//! as idle.
//!
//! Unix sockets are read the same way, with their peers ([`unix_sockets`]), when the server shares shootout's
//! network namespace: a socket it connected to a path that a process outside its tree listens on is a backend,
//! named by the service of the run whose processes answer there, else by that path; one it listens on, or
//! accepted from it, waits for a client (a server behind a proxy); sockets between its own processes (a master
//! and its workers) and unnamed pairs are its own plumbing, idle.
//!
//! [`unix_sockets`]: crate::sampling::unix_sockets

use std::collections::{HashMap, HashSet};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::time::{Duration, Instant};

use crate::sampling::unix_sockets::{self, UnixSocket};

/// The least time between two reads of the table.
pub const REREAD: Duration = Duration::from_secs(1);

/// What a socket is to the thread waiting on it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Peer {
    /// A listening socket, or one accepted from it: the thread waits for a client.
    Client,
    /// A socket connected to a listening port elsewhere: the thread waits on that backend, named by the service
    /// listening there, or by its address.
    Backend(String),
}

/// The services a server's threads may wait on, to name them: by the port each listens on, and by the root of
/// its process tree (the process answering a Unix socket is found in one of them).
#[derive(Debug, Clone, Default)]
pub struct Backends {
    /// Each service's name by the port it listens on.
    pub ports: Vec<(u16, String)>,
    /// Each service's name by the root of its process tree, where it runs on this machine.
    pub roots: Vec<(i32, String)>,
}

impl Backends {
    /// Services known by their ports only.
    pub fn by_port(ports: Vec<(u16, String)>) -> Backends {
        Backends { ports, roots: Vec::new() }
    }
}

/// One TCP socket.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Socket {
    local: (IpAddr, u16),
    remote: (IpAddr, u16),
    listening: bool,
}

/// The TCP sockets of one network namespace.
#[derive(Debug)]
pub struct Sockets {
    pid: i32,
    by_inode: HashMap<u64, Socket>,
    listening_ports: HashSet<u16>,
    read_at: Option<Instant>,
    /// The services, to name a backend.
    backends: Backends,
    /// The name of each Unix socket path a backend answered on: its service's, or the path (looked for once).
    unix_names: HashMap<String, String>,
    /// CPU time spent reading the table since [`Sockets::take_read_cost`] last asked.
    read_cost: Duration,
    /// The Unix sockets, by inode (none when the server has a network namespace of its own).
    unix: HashMap<u64, UnixSocket>,
    /// The processes of the tree whose threads wait on these sockets.
    tree: Vec<i32>,
    /// Whether a Unix socket, by inode, is held by a process of the tree (its own plumbing).
    in_tree: HashMap<u64, bool>,
}

impl Sockets {
    /// The sockets of the namespace `pid` is in; `backends` names the services.
    pub fn of(pid: i32, backends: Backends) -> Sockets {
        Sockets {
            pid,
            by_inode: HashMap::new(),
            listening_ports: HashSet::new(),
            read_at: None,
            backends,
            unix_names: HashMap::new(),
            read_cost: Duration::ZERO,
            unix: HashMap::new(),
            tree: vec![pid],
            in_tree: HashMap::new(),
        }
    }

    /// Reads the tables from the namespace of the first of `pids`, the tree's processes, from now on (the tree's
    /// root may have changed, or it gained or lost a process).
    pub fn follow(&mut self, pids: &[i32]) {
        if let Some(&first) = pids.first() {
            self.pid = first;
        }
        if self.tree != pids {
            self.tree = pids.to_vec();
            self.in_tree.clear();
        }
    }

    /// What the socket with `inode` is to a thread waiting on it; none for one that is neither TCP nor a Unix
    /// socket to a client or a backend.
    pub fn peer(&mut self, inode: u64) -> Option<Peer> {
        let known = self.by_inode.contains_key(&inode) || self.unix.contains_key(&inode);
        if !known && self.read_at.is_none_or(|at| at.elapsed() >= REREAD) {
            self.read();
        }
        let Some(socket) = self.by_inode.get(&inode) else { return self.unix_peer(inode) };
        if socket.listening || self.listening_ports.contains(&socket.local.1) {
            return Some(Peer::Client);
        }
        let (address, port) = socket.remote;
        let named = self.backends.ports.iter().find(|(p, _)| *p == port).map(|(_, name)| name.clone());
        Some(Peer::Backend(named.unwrap_or_else(|| match address {
            IpAddr::V6(v6) => format!("[{v6}]:{port}"),
            IpAddr::V4(v4) => format!("{v4}:{port}"),
        })))
    }

    /// What the Unix socket `inode` is to a thread of the tree waiting on it.
    fn unix_peer(&mut self, inode: u64) -> Option<Peer> {
        let socket = self.unix.get(&inode)?;
        if socket.name.is_some() {
            return Some(Peer::Client);
        }
        let other = socket.peer;
        let path = self.unix.get(&other)?.name.clone()?;
        if self.held_by_tree(other) {
            return None;
        }
        if let Some(name) = self.unix_names.get(&path) {
            return Some(Peer::Backend(name.clone()));
        }
        let name = service_holding(&self.backends.roots, other).unwrap_or_else(|| path.clone());
        self.unix_names.insert(path, name.clone());
        Some(Peer::Backend(name))
    }

    /// Whether a process of the tree holds the socket `inode` (looked for once per socket: they do not move).
    fn held_by_tree(&mut self, inode: u64) -> bool {
        if let Some(&held) = self.in_tree.get(&inode) {
            return held;
        }
        let held = self.tree.iter().any(|&pid| socket_inodes(pid).any(|held| held == inode));
        self.in_tree.insert(inode, held);
        held
    }

    /// The CPU time spent reading the table since the last call.
    pub fn take_read_cost(&mut self) -> Duration {
        std::mem::take(&mut self.read_cost)
    }

    fn read(&mut self) {
        let cpu_before = crate::sampling::thread_states::thread_cpu();
        self.read_at = Some(Instant::now());
        self.by_inode.clear();
        self.listening_ports.clear();
        // The dump is of shootout's own namespace: a server in another has its own Unix sockets, not read.
        let namespace = |pid: &str| std::fs::read_link(format!("/proc/{pid}/ns/net")).ok();
        self.unix = match namespace("self") == namespace(&self.pid.to_string()) {
            true => unix_sockets::table().unwrap_or_default(),
            false => HashMap::new(),
        };
        for file in ["tcp", "tcp6"] {
            let Ok(text) = std::fs::read_to_string(format!("/proc/{}/net/{file}", self.pid)) else { continue };
            for (inode, socket) in text.lines().skip(1).filter_map(parse_line) {
                if socket.listening {
                    self.listening_ports.insert(socket.local.1);
                }
                self.by_inode.insert(inode, socket);
            }
        }
        self.read_cost += crate::sampling::thread_states::thread_cpu().saturating_sub(cpu_before);
    }
}

/// The service among `roots` (each the root of a service's process tree, with its name) one of whose processes
/// holds the socket `inode`.
fn service_holding(roots: &[(i32, String)], inode: u64) -> Option<String> {
    if roots.is_empty() {
        return None;
    }
    let processes = crate::sampling::tree::all_processes();
    let holder = processes.iter().find(|p| socket_inodes(p.pid).any(|held| held == inode))?;
    // Up from the holder through its parents, to a service's root.
    let mut pid = holder.pid;
    for _ in 0..processes.len() {
        if let Some((_, name)) = roots.iter().find(|(root, _)| *root == pid) {
            return Some(name.clone());
        }
        pid = processes.iter().find(|p| p.pid == pid).map_or(0, |p| p.ppid);
        if pid <= 1 {
            break;
        }
    }
    None
}

/// One line of `/proc/net/tcp`: `sl local rem st tx:rx tr:when retrnsmt uid timeout inode …`.
fn parse_line(line: &str) -> Option<(u64, Socket)> {
    let fields: Vec<&str> = line.split_whitespace().collect();
    let local = endpoint(fields.get(1)?)?;
    let remote = endpoint(fields.get(2)?)?;
    let listening = *fields.get(3)? == "0A";
    let inode = fields.get(9)?.parse().ok()?;
    Some((inode, Socket { local, remote, listening }))
}

/// `0100007F:1F90` (IPv4) or 32 hex digits and a port (IPv6): each 32-bit word as the kernel holds it, in the
/// machine's byte order.
fn endpoint(text: &str) -> Option<(IpAddr, u16)> {
    let (address, port) = text.split_once(':')?;
    let port = u16::from_str_radix(port, 16).ok()?;
    let word = |i: usize| u32::from_str_radix(address.get(i * 8..i * 8 + 8)?, 16).ok().map(u32::to_ne_bytes);
    let address = match address.len() {
        8 => IpAddr::V4(Ipv4Addr::from(word(0)?)),
        32 => {
            let mut bytes = [0u8; 16];
            for i in 0..4 {
                bytes[i * 4..i * 4 + 4].copy_from_slice(&word(i)?);
            }
            IpAddr::V6(Ipv6Addr::from(bytes))
        }
        _ => return None,
    };
    Some((address, port))
}

/// The addresses the processes `pids` listen on over TCP (their network namespace is the first one's), sorted:
/// what a server that refuses connections on its port listens on instead.
pub fn listening(pids: &[i32]) -> Vec<SocketAddr> {
    let Some(first) = pids.first() else { return Vec::new() };
    let inodes: HashSet<u64> = pids.iter().flat_map(|&pid| socket_inodes(pid)).collect();
    let mut found = Vec::new();
    for file in ["tcp", "tcp6"] {
        let Ok(text) = std::fs::read_to_string(format!("/proc/{first}/net/{file}")) else { continue };
        found.extend(
            text.lines()
                .skip(1)
                .filter_map(parse_line)
                .filter(|(inode, socket)| socket.listening && inodes.contains(inode))
                .map(|(_, socket)| SocketAddr::from(socket.local)),
        );
    }
    found.sort();
    found.dedup();
    found
}

/// The inodes of the sockets process `pid` holds open, one descriptor at a time (none where it cannot be read).
fn socket_inodes(pid: i32) -> impl Iterator<Item = u64> {
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).into_iter().flatten().flatten();
    fds.filter_map(move |fd| socket_inode(pid, fd.file_name().to_str()?.parse().ok()?))
}

/// The inode of the socket `fd` of process `pid` refers to; none for anything else.
pub fn socket_inode(pid: i32, fd: i64) -> Option<u64> {
    let target = std::fs::read_link(format!("/proc/{pid}/fd/{fd}")).ok()?;
    let text = target.to_str()?;
    text.strip_prefix("socket:[")?.strip_suffix(']')?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{TcpListener, TcpStream};
    use std::os::fd::AsRawFd;

    #[test]
    fn a_listener_and_its_accepted_socket_are_the_client_side_and_a_connect_is_a_backend() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let connected = TcpStream::connect(("127.0.0.1", port)).unwrap();
        let (accepted, _) = listener.accept().unwrap();
        let me = std::process::id() as i32;
        let inode = |fd: i64| socket_inode(me, fd).unwrap();
        let mut named = Sockets::of(me, Backends::by_port(vec![(port, "db".into())]));
        assert_eq!(named.peer(inode(listener.as_raw_fd().into())), Some(Peer::Client));
        assert_eq!(named.peer(inode(accepted.as_raw_fd().into())), Some(Peer::Client));
        assert_eq!(named.peer(inode(connected.as_raw_fd().into())), Some(Peer::Backend("db".into())));
        let mut unnamed = Sockets::of(me, Backends::default());
        let address = format!("127.0.0.1:{port}");
        assert_eq!(unnamed.peer(inode(connected.as_raw_fd().into())), Some(Peer::Backend(address)));
        let (unix, _other) = std::os::unix::net::UnixStream::pair().unwrap();
        assert_eq!(unnamed.peer(inode(unix.as_raw_fd().into())), None, "a pair of its own");
        let file = std::fs::File::open("/proc/self/stat").unwrap();
        assert_eq!(socket_inode(me, file.as_raw_fd().into()), None, "not a socket");
    }

    #[test]
    fn a_unix_socket_to_a_path_another_process_listens_on_is_a_backend_and_its_own_are_not() {
        use std::os::unix::net::{UnixListener, UnixStream};
        let dir = std::env::temp_dir().join(format!("shootout-unix-peer-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("backend.sock");
        let _ = std::fs::remove_file(&path);
        // The backend: another process, listening on a path; this process connects to it.
        let script = format!(
            "import socket,time\ns=socket.socket(socket.AF_UNIX)\ns.bind({:?})\ns.listen()\nc,_=s.accept()\nc.send(b'!')\ntime.sleep(5)",
            path.display().to_string()
        );
        let mut backend = std::process::Command::new("python3").args(["-c", &script]).spawn().unwrap();
        let deadline = Instant::now() + Duration::from_secs(5);
        while !path.exists() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        let mut connected = UnixStream::connect(&path).unwrap();
        // Accepted: a connection still in the listener's queue has no socket of its own to dump yet.
        std::io::Read::read_exact(&mut connected, &mut [0u8; 1]).unwrap();
        let me = std::process::id() as i32;
        let inode = |fd: i64| socket_inode(me, fd).unwrap();
        let mut sockets = Sockets::of(me, Backends::default());
        let backend_name = Some(Peer::Backend(path.display().to_string()));
        assert_eq!(sockets.peer(inode(connected.as_raw_fd().into())), backend_name);
        // Its own listener, the socket it accepted, and its own connection to itself.
        let own = dir.join("own.sock");
        let listener = UnixListener::bind(&own).unwrap();
        let to_itself = UnixStream::connect(&own).unwrap();
        let (accepted, _) = listener.accept().unwrap();
        let mut sockets = Sockets::of(me, Backends::default());
        assert_eq!(sockets.peer(inode(listener.as_raw_fd().into())), Some(Peer::Client));
        assert_eq!(sockets.peer(inode(accepted.as_raw_fd().into())), Some(Peer::Client));
        assert_eq!(sockets.peer(inode(to_itself.as_raw_fd().into())), None, "the tree talking to itself");
        let _ = backend.kill();
        let _ = backend.wait();
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_process_listening_is_found_at_its_address() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap();
        let found = listening(&[std::process::id() as i32]);
        assert!(found.contains(&address), "{found:?} holds {address}");
        assert_eq!(listening(&[]), Vec::new());
    }

    #[test]
    fn addresses_read_as_the_kernel_writes_them() {
        let v4 = u32::from_ne_bytes([127, 0, 0, 1]);
        assert_eq!(endpoint(&format!("{v4:08X}:1F90")), Some((IpAddr::V4(Ipv4Addr::LOCALHOST), 8080)));
        let one = u32::from_ne_bytes([0, 0, 0, 1]);
        let v6 = format!("{:08X}{:08X}{:08X}{one:08X}:0050", 0, 0, 0);
        assert_eq!(endpoint(&v6), Some((IpAddr::V6(Ipv6Addr::LOCALHOST), 80)));
        assert_eq!(endpoint("zz:1"), None);
    }
}
