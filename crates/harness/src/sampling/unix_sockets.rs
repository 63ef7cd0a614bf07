//! The Unix sockets of shootout's network namespace, each with its peer and the path it is bound to, from the
//! kernel's socket diagnostics (a `NETLINK_SOCK_DIAG` dump of `unix_diag`, what `ss -x` reads): `/proc/net/unix`
//! gives a socket's path but not its peer, and a thread waiting on a Unix socket is waiting on whoever holds the
//! other end (a backend reached over `/run/…/app.sock`, as PostgreSQL, Redis or an app server behind nginx are).
//!
//! A dump costs about what reading `/proc/net/unix` does (the kernel walks every Unix socket), so [`Sockets`]
//! reads it as seldom as the TCP table.
//!
//! [`Sockets`]: crate::sampling::sockets::Sockets

use std::collections::HashMap;
use std::io;

use nix::sys::socket::{recv, sendto, socket, AddressFamily, MsgFlags, NetlinkAddr, SockFlag, SockProtocol, SockType};

/// One Unix socket: the inode of its peer (0: none) and the path it, or the listening socket it was accepted from,
/// is bound to (none for an unnamed one, as a `socketpair`'s; an abstract name starts with `@`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnixSocket {
    /// The inode of the socket at its other end (0: none).
    pub peer: u64,
    /// The path it, or the listener it was accepted from, is bound to.
    pub name: Option<String>,
}

// The kernel's message numbers and layouts (linux/netlink.h, linux/sock_diag.h, linux/unix_diag.h).
const SOCK_DIAG_BY_FAMILY: u16 = 20;
const NLM_F_REQUEST: u16 = 0x1;
const NLM_F_DUMP: u16 = 0x300;
const NLMSG_ERROR: u16 = 2;
const NLMSG_DONE: u16 = 3;
const UDIAG_SHOW_NAME: u32 = 0x1;
const UDIAG_SHOW_PEER: u32 = 0x4;
const UNIX_DIAG_NAME: u16 = 0;
const UNIX_DIAG_PEER: u16 = 2;
/// `struct nlmsghdr`.
const HEADER: usize = 16;
/// `struct unix_diag_msg`.
const MESSAGE: usize = 16;

/// Every Unix socket of this network namespace, by inode.
pub fn table() -> io::Result<HashMap<u64, UnixSocket>> {
    let fd = socket(AddressFamily::Netlink, SockType::Datagram, SockFlag::SOCK_CLOEXEC, SockProtocol::NetlinkSockDiag)?;
    sendto(std::os::fd::AsRawFd::as_raw_fd(&fd), &request(), &NetlinkAddr::new(0, 0), MsgFlags::empty())?;
    let mut sockets = HashMap::new();
    let mut buffer = vec![0u8; 64 * 1024];
    loop {
        let n = recv(std::os::fd::AsRawFd::as_raw_fd(&fd), &mut buffer, MsgFlags::empty())?;
        if n == 0 || !parse(&buffer[..n], &mut sockets)? {
            return Ok(sockets);
        }
    }
}

/// A dump request for every Unix socket, in any state, with its name and peer.
fn request() -> Vec<u8> {
    let length = HEADER + 24;
    let mut bytes = Vec::with_capacity(length);
    bytes.extend_from_slice(&(length as u32).to_ne_bytes());
    bytes.extend_from_slice(&SOCK_DIAG_BY_FAMILY.to_ne_bytes());
    bytes.extend_from_slice(&(NLM_F_REQUEST | NLM_F_DUMP).to_ne_bytes());
    bytes.extend_from_slice(&1u32.to_ne_bytes()); // sequence
    bytes.extend_from_slice(&0u32.to_ne_bytes()); // port: the kernel's
                                                  // struct unix_diag_req: family, protocol, padding, states (all), inode (any), what to show, cookie.
    bytes.extend_from_slice(&[nix::libc::AF_UNIX as u8, 0, 0, 0]);
    bytes.extend_from_slice(&u32::MAX.to_ne_bytes());
    bytes.extend_from_slice(&0u32.to_ne_bytes());
    bytes.extend_from_slice(&(UDIAG_SHOW_NAME | UDIAG_SHOW_PEER).to_ne_bytes());
    bytes.extend_from_slice(&[0u8; 8]);
    bytes
}

/// Adds the sockets of one datagram of the dump to `sockets`; false once the dump is done.
fn parse(mut datagram: &[u8], sockets: &mut HashMap<u64, UnixSocket>) -> io::Result<bool> {
    let u16_at = |b: &[u8], at: usize| u16::from_ne_bytes([b[at], b[at + 1]]);
    let u32_at = |b: &[u8], at: usize| u32::from_ne_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]);
    while datagram.len() >= HEADER {
        let length = u32_at(datagram, 0) as usize;
        if length < HEADER || length > datagram.len() {
            return Err(io::Error::new(io::ErrorKind::InvalidData, "a truncated socket diagnostics message"));
        }
        let kind = u16_at(datagram, 4);
        let body = &datagram[HEADER..length];
        match kind {
            NLMSG_DONE => return Ok(false),
            NLMSG_ERROR => {
                let code = if body.len() >= 4 { u32_at(body, 0) as i32 } else { 0 };
                return Err(io::Error::from_raw_os_error(-code));
            }
            SOCK_DIAG_BY_FAMILY if body.len() >= MESSAGE => {
                let inode = u64::from(u32_at(body, 4));
                sockets.insert(inode, attributes(&body[MESSAGE..]));
            }
            _ => {}
        }
        datagram = &datagram[length.next_multiple_of(4).min(datagram.len())..];
    }
    Ok(true)
}

/// A socket's name and peer, from the attributes after its `unix_diag_msg`.
fn attributes(mut rest: &[u8]) -> UnixSocket {
    let mut socket = UnixSocket { peer: 0, name: None };
    while rest.len() >= 4 {
        let length = usize::from(u16::from_ne_bytes([rest[0], rest[1]]));
        let kind = u16::from_ne_bytes([rest[2], rest[3]]);
        if length < 4 || length > rest.len() {
            break;
        }
        let value = &rest[4..length];
        match kind {
            UNIX_DIAG_PEER if value.len() >= 4 => {
                socket.peer = u64::from(u32::from_ne_bytes([value[0], value[1], value[2], value[3]]));
            }
            UNIX_DIAG_NAME if !value.is_empty() => {
                // An abstract name starts with a zero byte; a path is not zero-terminated here.
                let name = match value.split_first() {
                    Some((0, abstract_name)) => format!("@{}", String::from_utf8_lossy(abstract_name)),
                    _ => String::from_utf8_lossy(value).trim_end_matches('\0').to_string(),
                };
                socket.name = Some(name);
            }
            _ => {}
        }
        rest = &rest[length.next_multiple_of(4).min(rest.len())..];
    }
    socket
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;
    use std::os::unix::net::{UnixListener, UnixStream};

    /// The inode of a socket of this process, as its descriptor links to it.
    fn inode(fd: &impl std::os::fd::AsRawFd) -> u64 {
        std::fs::metadata(format!("/proc/self/fd/{}", fd.as_raw_fd())).unwrap().ino()
    }

    #[test]
    fn a_connected_pair_is_found_with_each_others_inode_and_the_listeners_path() {
        let dir = std::env::temp_dir().join(format!("shootout-unix-diag-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("backend.sock");
        let _ = std::fs::remove_file(&path);
        let listener = UnixListener::bind(&path).unwrap();
        let client = UnixStream::connect(&path).unwrap();
        let (accepted, _) = listener.accept().unwrap();
        let (pair_a, pair_b) = UnixStream::pair().unwrap();
        let sockets = table().unwrap();
        let (client_inode, accepted_inode) = (inode(&client), inode(&accepted));
        assert_eq!(sockets[&client_inode].peer, accepted_inode);
        assert_eq!(sockets[&accepted_inode].peer, client_inode);
        assert_eq!(sockets[&accepted_inode].name.as_deref(), Some(path.to_str().unwrap()), "named by the listener");
        assert_eq!(sockets[&inode(&listener)].name.as_deref(), Some(path.to_str().unwrap()));
        assert_eq!(sockets[&inode(&pair_a)], UnixSocket { peer: inode(&pair_b), name: None }, "a pair is unnamed");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
