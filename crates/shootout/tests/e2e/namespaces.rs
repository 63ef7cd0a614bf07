//! Test hosts for the tests that reach other machines through OpenSSH (`--agents ssh:`, `host = "ssh:"`): three
//! network namespaces, each with its own veth pair and its own sshd, addresses from the benchmarking range
//! 198.18.0.0/15. They share this machine's filesystem, so the hosts run this very binary.
//!
//! Needs root, `ip netns` and `/usr/sbin/sshd`; without them a test says why and passes, except under CI (CI set),
//! where they are required. Everything made is removed when the hosts are dropped, passed or failed.

use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const HOSTS: u32 = 3;

/// The test hosts: namespaces, veths, sshds and their files, all removed on drop.
pub struct TestHosts {
    pub dir: PathBuf,
    namespaces: Vec<String>,
    veths: Vec<String>,
    sshds: Vec<Option<Child>>,
    /// `ssh -F` configuration naming the hosts h1, h2, h3.
    pub ssh_config: PathBuf,
    /// The host side of the first veth, where the target listens for every agent.
    pub target_ip: Ipv4Addr,
    /// Which of a test binary's sets of hosts this is (each test that makes hosts has its own).
    slot: u32,
}

/// The /30 of test host `n` (0 is unused, 1 to 3 are hosts) of set `slot` (0 to 7): its host side `.1`, its
/// namespace side `.2`. The block is chosen by the process id and the slot, so that two runs of the tests at once,
/// and two tests of one run, do not collide: each process has 32 of them, and 1,023 processes' blocks fill
/// 198.18.0.0/15 without leaving it.
pub fn subnet(slot: u32, n: u32) -> (Ipv4Addr, Ipv4Addr) {
    assert!(slot < 8 && n < 4, "slot {slot}, host {n}");
    let base = u32::from(Ipv4Addr::new(198, 18, 0, 0)) + ((std::process::id() % 1023) * 32 + slot * 4 + n) * 4;
    (Ipv4Addr::from(base + 1), Ipv4Addr::from(base + 2))
}

pub fn run(program: &str, args: &[&str]) -> Result<(), String> {
    let output = Command::new(program).args(args).output().map_err(|e| format!("{program}: {e}"))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(format!("{program} {}: {}", args.join(" "), String::from_utf8_lossy(&output.stderr).trim()))
    }
}

/// Skips (returns None, with the reason printed) when this machine cannot make test hosts, unless under CI.
fn skip(test: &str, why: &str) -> Option<TestHosts> {
    assert!(std::env::var_os("CI").is_none(), "under CI the {test} test must run, but {why}");
    eprintln!("skipping the {test} test: {why}");
    None
}

impl TestHosts {
    /// Makes set `slot` (each test its own) for `test`, named when it is skipped.
    pub fn make(slot: u32, test: &str) -> Option<TestHosts> {
        let uid = Command::new("id").arg("-u").output().map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
        if uid.ok().as_deref() != Some("0") {
            return skip(test, "it needs root (network namespaces)");
        }
        if !Path::new("/usr/sbin/sshd").exists() {
            return skip(test, "/usr/sbin/sshd is missing (apt-get install openssh-server)");
        }
        let pid = std::process::id();
        let dir = std::env::temp_dir().join(format!("shootout-ssh-test-{pid}-{slot}"));
        let mut hosts = TestHosts {
            dir: dir.clone(),
            namespaces: Vec::new(),
            veths: Vec::new(),
            sshds: Vec::new(),
            ssh_config: dir.join("ssh_config"),
            target_ip: subnet(slot, 1).0,
            slot,
        };
        std::fs::create_dir_all(&dir).unwrap();
        let first = format!("shootout-t-{pid}-{slot}-1");
        if let Err(why) = run("ip", &["netns", "add", &first]) {
            return skip(test, &format!("ip netns add is refused ({why})"));
        }
        hosts.namespaces.push(first);
        let key = |name: &str| {
            let path = dir.join(name);
            run("ssh-keygen", &["-q", "-t", "ed25519", "-N", "", "-f", path.to_str().unwrap()]).unwrap();
            path
        };
        let (host_key, client_key) = (key("host_key"), key("client_key"));
        std::fs::copy(dir.join("client_key.pub"), dir.join("authorized_keys")).unwrap();
        std::fs::create_dir_all("/run/sshd").unwrap(); // sshd's privilege separation directory
        let mut client = String::new();
        for n in 1..=HOSTS {
            let ns = format!("shootout-t-{pid}-{slot}-{n}");
            if n > 1 {
                run("ip", &["netns", "add", &ns]).unwrap();
                hosts.namespaces.push(ns.clone());
            }
            let (outside, inside) = subnet(slot, n);
            let (veth, peer) = (format!("so{pid}s{slot}h{n}"), format!("so{pid}s{slot}n{n}"));
            run("ip", &["link", "add", &veth, "type", "veth", "peer", "name", &peer, "netns", &ns]).unwrap();
            hosts.veths.push(veth.clone());
            for args in [
                vec!["addr", "add", &format!("{outside}/30"), "dev", &veth],
                vec!["link", "set", &veth, "up"],
                vec!["-n", &ns, "addr", "add", &format!("{inside}/30"), "dev", &peer],
                vec!["-n", &ns, "link", "set", &peer, "up"],
                vec!["-n", &ns, "link", "set", "lo", "up"],
                // The target listens on the first veth's host side; every namespace reaches it through its own.
                vec!["-n", &ns, "route", "add", "default", "via", &outside.to_string()],
            ] {
                run("ip", &args).unwrap();
            }
            let config = dir.join(format!("sshd_config_{n}"));
            std::fs::write(
                &config,
                format!(
                    "ListenAddress {inside}\nHostKey {}\nPermitRootLogin prohibit-password\nAuthorizedKeysFile {}\n\
                     PasswordAuthentication no\nKbdInteractiveAuthentication no\nStrictModes no\nUsePAM no\n\
                     PidFile {}\n",
                    host_key.display(),
                    dir.join("authorized_keys").display(),
                    dir.join(format!("sshd_{n}.pid")).display()
                ),
            )
            .unwrap();
            let log = std::fs::File::create(dir.join(format!("sshd_{n}.log"))).unwrap();
            let sshd = Command::new("ip")
                .args(["netns", "exec", &ns, "/usr/sbin/sshd", "-D", "-e", "-f", config.to_str().unwrap()])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(log)
                .spawn()
                .unwrap();
            hosts.sshds.push(Some(sshd));
            client.push_str(&format!("Host h{n}\n  HostName {inside}\n"));
        }
        client.push_str(&format!(
            "Host *\n  User root\n  IdentityFile {}\n  IdentitiesOnly yes\n  UserKnownHostsFile /dev/null\n  \
             StrictHostKeyChecking no\n  LogLevel ERROR\n  ConnectTimeout 5\n",
            client_key.display()
        ));
        std::fs::write(&hosts.ssh_config, client).unwrap();
        for n in 1..=HOSTS {
            hosts.wait_for_sshd(n);
        }
        Some(hosts)
    }

    fn wait_for_sshd(&self, n: u32) {
        let address = SocketAddr::from((subnet(self.slot, n).1, 22));
        let deadline = Instant::now() + Duration::from_secs(10);
        while TcpStream::connect_timeout(&address, Duration::from_millis(200)).is_err() {
            let log = std::fs::read_to_string(self.dir.join(format!("sshd_{n}.log"))).unwrap_or_default();
            assert!(Instant::now() < deadline, "sshd of h{n} does not listen on {address}: {log}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Stops the sshd of host `n` (1 to 3): it no longer answers.
    pub fn stop_sshd(&mut self, n: usize) {
        if let Some(mut sshd) = self.sshds[n - 1].take() {
            let _ = sshd.kill();
            let _ = sshd.wait();
        }
    }

    /// The processes left in the namespaces other than their sshds, after a moment to end.
    pub fn left_over(&self) -> Vec<String> {
        let sshds: Vec<String> = self.sshds.iter().flatten().map(|c| c.id().to_string()).collect();
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let mut left = Vec::new();
            for ns in &self.namespaces {
                let pids = Command::new("ip").args(["netns", "pids", ns]).output().unwrap();
                for pid in String::from_utf8_lossy(&pids.stdout).split_whitespace() {
                    if !sshds.iter().any(|s| s == pid) {
                        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
                        left.push(format!("{pid} {}", String::from_utf8_lossy(&cmdline).replace('\0', " ")));
                    }
                }
            }
            if left.is_empty() || Instant::now() >= deadline {
                return left;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// This binary through a link with a name of its own, so that what the hosts run is told apart from this
    /// machine's own shootout processes by other tests.
    pub fn remote_shootout(&self) -> String {
        let agent = self.dir.join("shootout-remote");
        if !agent.exists() {
            std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_shootout"), &agent).unwrap();
        }
        agent.display().to_string()
    }
}

impl Drop for TestHosts {
    fn drop(&mut self) {
        for n in 1..=self.sshds.len() {
            self.stop_sshd(n);
        }
        for veth in &self.veths {
            let _ = run("ip", &["link", "del", veth]);
        }
        for ns in &self.namespaces {
            let _ = run("ip", &["netns", "del", ns]);
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The test sshds of `dir` still running.
pub fn sshds_running(dir: &Path) -> String {
    let found = Command::new("pgrep").args(["-af", &format!("sshd .*{}", dir.display())]).output().unwrap();
    String::from_utf8_lossy(&found.stdout).into_owned()
}
