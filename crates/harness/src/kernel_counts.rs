//! What the kernel counts about a tree that no thread of it sees: the connects its host's listen queues dropped
//! ([`Net`], `ListenOverflows` and `TCPSynRetrans` of `/proc/PID/net/netstat`, in the root's network namespace).
//! How often its CPU quota ran out is [`Quota`]'s, which the load engine shares to judge its own.

pub use shootout_engine::quota::{Quota, QuotaCount};

/// The listen-queue counts of a network namespace so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Net {
    /// Connects dropped because a listen queue was full.
    pub listen_overflows: u64,
    /// SYNs sent again for connects not answered in time.
    pub syn_retransmits: u64,
}

impl Net {
    /// The counts of the namespace process `pid` is in; zeros where they cannot be read.
    pub fn of(pid: i32) -> Net {
        let Ok(text) = std::fs::read_to_string(format!("/proc/{pid}/net/netstat")) else { return Net::default() };
        let mut lines = text.lines();
        while let (Some(names), Some(values)) = (lines.next(), lines.next()) {
            if !names.starts_with("TcpExt:") {
                continue;
            }
            let pairs: Vec<(&str, u64)> = names
                .split_whitespace()
                .zip(values.split_whitespace())
                .filter_map(|(n, v)| Some((n, v.parse().ok()?)))
                .collect();
            let get = |name: &str| pairs.iter().find(|(n, _)| *n == name).map_or(0, |(_, v)| *v);
            return Net { listen_overflows: get("ListenOverflows"), syn_retransmits: get("TCPSynRetrans") };
        }
        Net::default()
    }

    /// What was counted since `before`.
    pub fn since(self, before: Net) -> Net {
        Net {
            listen_overflows: self.listen_overflows.saturating_sub(before.listen_overflows),
            syn_retransmits: self.syn_retransmits.saturating_sub(before.syn_retransmits),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_listen_queue_is_counted() {
        // A listener with a backlog of one that never accepts: connects beyond what its queue holds are dropped,
        // and sent again a second later. It ends by itself after 5 s.
        let listener = "import socket, time\ns = socket.socket()\ns.bind(('127.0.0.1', 0))\ns.listen(1)\n\
                        print(s.getsockname()[1], flush=True)\ntime.sleep(5)";
        let mut child = std::process::Command::new("python3")
            .args(["-c", listener])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufRead::read_line(&mut std::io::BufReader::new(child.stdout.take().unwrap()), &mut line).unwrap();
        let port: u16 = line.trim().parse().unwrap();
        let me = std::process::id() as i32;
        let before = Net::of(me);
        let connects: Vec<_> = (0..6)
            .map(|_| {
                std::thread::spawn(move || {
                    let address = std::net::SocketAddr::from(([127, 0, 0, 1], port));
                    std::net::TcpStream::connect_timeout(&address, std::time::Duration::from_millis(1500))
                })
            })
            .collect();
        let connected: Vec<_> = connects.into_iter().map(|c| c.join().unwrap()).collect();
        let counted = Net::of(me).since(before);
        let _ = child.kill();
        let _ = child.wait();
        assert!(connected.iter().any(Result::is_err), "some connects were never answered");
        assert!(counted.listen_overflows >= 1, "{counted:?}");
        assert!(counted.syn_retransmits >= 1, "{counted:?}");
    }
}
