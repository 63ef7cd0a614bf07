//! What the kernel counts about a tree that no thread of it sees: the connects its host's listen queues dropped
//! and the resets it sent ([`Net`], `ListenOverflows` and `TCPSynRetrans` of `/proc/PID/net/netstat`, `OutRsts`
//! of `/proc/PID/net/snmp`, in the root's network namespace), and the time its tasks stalled for want of a CPU,
//! I/O or memory ([`Pressure`], the pressure stall figures of its cgroup v2, or of the host), and what the kernel's
//! deferred work on its CPUs was for ([`Softirqs`], network or block I/O). How often its CPU quota ran out is
//! [`Quota`]'s, which the load engine shares to judge its own.

use std::path::{Path, PathBuf};

pub use shootout_engine::quota::{Quota, QuotaCount};
use shootout_model::pressure::Stalls;

/// The kernel's deferred work (softirqs) run on some CPUs so far, counted by what it was for, from
/// `/proc/softirqs`: the network's (`NET_RX`, `NET_TX`) and block I/O completions (`BLOCK`), a disk's. The kernel
/// counts how many ran, not how long (its per-CPU softirq time in `/proc/stat` is not split, and it keeps no IRQ
/// time of its own here); which of the two ran more says which the time was mostly for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Softirqs {
    /// Network softirqs run.
    pub net: u64,
    /// Block I/O softirqs run.
    pub block: u64,
}

impl Softirqs {
    /// The counts on `cpus` (empty: every CPU); none where `/proc/softirqs` cannot be read.
    pub fn on(cpus: &[usize]) -> Option<Softirqs> {
        let text = std::fs::read_to_string("/proc/softirqs").ok()?;
        let mut counts = Softirqs::default();
        for line in text.lines().skip(1) {
            let Some((kind, columns)) = line.trim_start().split_once(':') else { continue };
            let per_cpu = columns.split_whitespace().filter_map(|n| n.parse::<u64>().ok());
            let sum: u64 =
                per_cpu.enumerate().filter(|(cpu, _)| cpus.is_empty() || cpus.contains(cpu)).map(|(_, n)| n).sum();
            match kind {
                "NET_RX" | "NET_TX" => counts.net += sum,
                "BLOCK" => counts.block += sum,
                _ => {}
            }
        }
        Some(counts)
    }

    /// What ran since `before`.
    pub fn since(self, before: Softirqs) -> Softirqs {
        Softirqs { net: self.net.saturating_sub(before.net), block: self.block.saturating_sub(before.block) }
    }
}

/// The listen-queue counts of a network namespace so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Net {
    /// Connects dropped because a listen queue was full.
    pub listen_overflows: u64,
    /// SYNs sent again for connects not answered in time.
    pub syn_retransmits: u64,
    /// Resets sent: connects refused, connections aborted.
    pub resets: u64,
}

impl Net {
    /// The counts of the namespace process `pid` is in; zeros where they cannot be read.
    pub fn of(pid: i32) -> Net {
        let extended = counters(&format!("/proc/{pid}/net/netstat"), "TcpExt:");
        let tcp = counters(&format!("/proc/{pid}/net/snmp"), "Tcp:");
        let get = |pairs: &[(String, u64)], name: &str| pairs.iter().find(|(n, _)| n == name).map_or(0, |(_, v)| *v);
        Net {
            listen_overflows: get(&extended, "ListenOverflows"),
            syn_retransmits: get(&extended, "TCPSynRetrans"),
            resets: get(&tcp, "OutRsts"),
        }
    }

    /// What was counted since `before`.
    pub fn since(self, before: Net) -> Net {
        Net {
            listen_overflows: self.listen_overflows.saturating_sub(before.listen_overflows),
            syn_retransmits: self.syn_retransmits.saturating_sub(before.syn_retransmits),
            resets: self.resets.saturating_sub(before.resets),
        }
    }
}

/// The counters of the table `prefix` (`TcpExt:`, `Tcp:`) of a file written as pairs of lines, names then values,
/// by name; none where the file cannot be read.
fn counters(path: &str, prefix: &str) -> Vec<(String, u64)> {
    let Ok(text) = std::fs::read_to_string(path) else { return Vec::new() };
    let mut lines = text.lines();
    while let (Some(names), Some(values)) = (lines.next(), lines.next()) {
        if names.starts_with(prefix) && values.starts_with(prefix) {
            return names
                .split_whitespace()
                .zip(values.split_whitespace())
                .filter_map(|(n, v)| Some((n.to_string(), v.parse().ok()?)))
                .collect();
        }
    }
    Vec::new()
}

/// Where the kernel's pressure stall figures of a tree are: the `cpu.pressure`, `io.pressure` and
/// `memory.pressure` of its root's cgroup v2, or the host's `/proc/pressure` (the root cgroup's too).
#[derive(Debug, Clone)]
pub struct Pressure {
    /// The three files, in [`Stalls`]' order.
    files: [PathBuf; 3],
}

impl Pressure {
    /// The figures of the cgroup v2 at `cgroup` (a server's own), else of process `pid`'s.
    pub fn of(pid: i32, cgroup: Option<&Path>) -> Pressure {
        let cgroup = cgroup.map(Path::to_path_buf).or_else(|| shootout_engine::cgroups::v2_dir(pid));
        let cgroup = cgroup.filter(|dir| dir.join("cpu.pressure").exists());
        let files = match cgroup {
            Some(dir) => ["cpu", "io", "memory"].map(|r| dir.join(format!("{r}.pressure"))),
            None => ["cpu", "io", "memory"].map(|r| PathBuf::from("/proc/pressure").join(r)),
        };
        Pressure { files }
    }

    /// The seconds stalled so far, by resource (`some total=`, µs); none where the kernel keeps no such figures.
    pub fn count(&self) -> Option<Stalls> {
        let seconds = |file: &PathBuf| -> Option<f64> {
            let text = std::fs::read_to_string(file).ok()?;
            let some = text.lines().find_map(|l| l.strip_prefix("some "))?;
            let total = some.split_whitespace().find_map(|field| field.strip_prefix("total="))?;
            Some(total.parse::<u64>().ok()? as f64 / 1e6)
        };
        let [cpu, io, memory] = &self.files;
        Some(Stalls { cpu: seconds(cpu)?, io: seconds(io)?, memory: seconds(memory).unwrap_or(0.0) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_made_to_reach_the_disk_run_block_softirqs_and_loopback_traffic_network_ones() {
        use std::io::{Read, Write};
        let before = Softirqs::on(&[]).expect("/proc/softirqs");
        // Each fsync waits for the disk's completion, which the kernel finishes in a block softirq: a file in the
        // build's folder, on the disk the build reads and writes (a temporary folder may be a tmpfs).
        let target = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target");
        let path = target.join(format!("shootout-softirqs-{}", std::process::id()));
        let mut file = std::fs::File::create(&path).unwrap();
        for _ in 0..20 {
            file.write_all(&[7u8; 64 * 1024]).unwrap();
            file.sync_all().unwrap();
        }
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let mut client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (mut server, _) = listener.accept().unwrap();
        for _ in 0..100 {
            client.write_all(b"ping").unwrap();
            server.read_exact(&mut [0u8; 4]).unwrap();
        }
        let ran = Softirqs::on(&[]).unwrap().since(before);
        std::fs::remove_file(&path).unwrap();
        assert!(ran.block >= 1, "{ran:?}");
        assert!(ran.net >= 1, "{ran:?}");
        assert_eq!(Softirqs::on(&[usize::MAX]), Some(Softirqs::default()), "no such CPU: nothing counted");
    }

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

    #[test]
    fn a_refused_connect_is_a_reset_sent() {
        // A port bound and never listened on: a connect to it is answered by a reset.
        let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
        let me = std::process::id() as i32;
        let before = Net::of(me);
        for _ in 0..3 {
            assert!(std::net::TcpStream::connect(closed).is_err(), "nothing listens on {closed}");
        }
        let counted = Net::of(me).since(before);
        assert!(counted.resets >= 3, "{counted:?}");
    }

    #[test]
    fn a_task_waiting_for_a_cpu_is_a_cpu_stall() {
        let pressure = Pressure::of(std::process::id() as i32, None);
        let Some(before) = pressure.count() else {
            let why = "no pressure figures on this kernel: nothing to check";
            assert!(std::env::var_os("CI").is_none(), "under CI this test must run, but {why}");
            eprintln!("{why}");
            return;
        };
        // Three spinning threads on one CPU: two of them wait for it all the time.
        let me = nix::unistd::Pid::from_raw(0);
        let allowed = nix::sched::sched_getaffinity(me).unwrap();
        let first = (0..nix::sched::CpuSet::count()).find(|&i| allowed.is_set(i).unwrap_or(false)).unwrap();
        let mut one = nix::sched::CpuSet::new();
        one.set(first).unwrap();
        let spinners: Vec<_> = (0..3)
            .map(|_| {
                std::thread::spawn(move || {
                    let _ = nix::sched::sched_setaffinity(me, &one);
                    let end = std::time::Instant::now() + std::time::Duration::from_millis(300);
                    while std::time::Instant::now() < end {
                        std::hint::black_box(0u64);
                    }
                })
            })
            .collect();
        spinners.into_iter().for_each(|s| s.join().unwrap());
        let stalled = pressure.count().unwrap().since(before);
        assert!(stalled.cpu >= 0.1, "two threads queued for 0.3 s: {stalled:?}");
    }
}
