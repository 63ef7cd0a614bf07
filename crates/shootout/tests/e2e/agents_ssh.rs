//! `--agents ssh:HOST,…` (issue 11) against real OpenSSH: three test hosts, each a network namespace with its
//! own veth pair and its own sshd, addresses from the benchmarking range 198.18.0.0/15. The agents run this very
//! binary (`--agent-command`), which the namespaces see since they share the filesystem.
//!
//! Needs root, `ip netns` and `/usr/sbin/sshd`; without them the test says why and passes, except under CI
//! (CI set), where they are required. Everything it creates is removed when it ends, passed or failed.

use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::support::{
    assert_freezes_seen_as_they_are, assert_percentiles_from_merged_histogram, assert_skew_refused, describe, shootout,
    show_agents, skewed, Target, FREEZING, OPEN_MODEL_THROUGH_FREEZES,
};

const HOSTS: u32 = 3;

/// The test hosts: namespaces, veths, sshds and their files, all removed on drop.
struct TestHosts {
    dir: PathBuf,
    namespaces: Vec<String>,
    veths: Vec<String>,
    sshds: Vec<Option<Child>>,
    /// `ssh -F` configuration naming the hosts h1, h2, h3.
    ssh_config: PathBuf,
    /// The host side of the first veth, where the target listens for every agent.
    target_ip: Ipv4Addr,
}

/// The /30 of test host `n` (0 is unused, 1 to 3 are hosts): its host side `.1`, its namespace side `.2`. The
/// block is chosen by the process id so that two runs of the tests at once do not collide.
fn subnet(n: u32) -> (Ipv4Addr, Ipv4Addr) {
    let base = u32::from(Ipv4Addr::new(198, 18, 0, 0)) + ((std::process::id() % 8191) * 4 + n) * 4;
    (Ipv4Addr::from(base + 1), Ipv4Addr::from(base + 2))
}

fn run(program: &str, args: &[&str]) -> Result<(), String> {
    let output = Command::new(program).args(args).output().map_err(|e| format!("{program}: {e}"))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(format!("{program} {}: {}", args.join(" "), String::from_utf8_lossy(&output.stderr).trim()))
    }
}

/// Skips (returns None, with the reason printed) when this machine cannot make test hosts, unless under CI.
fn skip(why: &str) -> Option<TestHosts> {
    assert!(std::env::var_os("CI").is_none(), "under CI the ssh agents test must run, but {why}");
    eprintln!("skipping the ssh agents test: {why}");
    None
}

impl TestHosts {
    fn make() -> Option<TestHosts> {
        let uid = Command::new("id").arg("-u").output().map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
        if uid.ok().as_deref() != Some("0") {
            return skip("it needs root (network namespaces)");
        }
        if !Path::new("/usr/sbin/sshd").exists() {
            return skip("/usr/sbin/sshd is missing (apt-get install openssh-server)");
        }
        let pid = std::process::id();
        let dir = std::env::temp_dir().join(format!("shootout-ssh-test-{pid}"));
        let mut hosts = TestHosts {
            dir: dir.clone(),
            namespaces: Vec::new(),
            veths: Vec::new(),
            sshds: Vec::new(),
            ssh_config: dir.join("ssh_config"),
            target_ip: subnet(1).0,
        };
        std::fs::create_dir_all(&dir).unwrap();
        let first = format!("shootout-t-{pid}-1");
        if let Err(why) = run("ip", &["netns", "add", &first]) {
            return skip(&format!("ip netns add is refused ({why})"));
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
            let ns = format!("shootout-t-{pid}-{n}");
            if n > 1 {
                run("ip", &["netns", "add", &ns]).unwrap();
                hosts.namespaces.push(ns.clone());
            }
            let (outside, inside) = subnet(n);
            let (veth, peer) = (format!("so{pid}h{n}"), format!("so{pid}n{n}"));
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
        let address = SocketAddr::from((subnet(n).1, 22));
        let deadline = Instant::now() + Duration::from_secs(10);
        while TcpStream::connect_timeout(&address, Duration::from_millis(200)).is_err() {
            let log = std::fs::read_to_string(self.dir.join(format!("sshd_{n}.log"))).unwrap_or_default();
            assert!(Instant::now() < deadline, "sshd of h{n} does not listen on {address}: {log}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Stops the sshd of host `n` (1 to 3): it no longer answers.
    fn stop_sshd(&mut self, n: usize) {
        if let Some(mut sshd) = self.sshds[n - 1].take() {
            let _ = sshd.kill();
            let _ = sshd.wait();
        }
    }

    /// The processes left in the namespaces other than their sshds, after a moment to end.
    fn left_over(&self) -> Vec<String> {
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

    /// `shootout load --agents ssh:h1,h2,h3 …` with this binary as the hosts' shootout.
    fn load(&self, args: &[&str]) -> Output {
        self.load_with(&self.remote_shootout(), args)
    }

    /// This binary through a link with a name of its own, so that these agents are told apart from local ones by
    /// other tests.
    fn remote_shootout(&self) -> String {
        let agent = self.dir.join("shootout-remote");
        if !agent.exists() {
            std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_shootout"), &agent).unwrap();
        }
        agent.display().to_string()
    }

    /// The same, the hosts running `command`.
    fn load_with(&self, command: &str, args: &[&str]) -> Output {
        shootout()
            .args(["load", "--agents", "ssh:h1,h2,h3", "--ssh-config", self.ssh_config.to_str().unwrap()])
            .args(["--agent-command", command])
            .args(args)
            .output()
            .unwrap()
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

fn sshds_running(dir: &Path) -> String {
    let found = Command::new("pgrep").args(["-af", &format!("sshd .*{}", dir.display())]).output().unwrap();
    String::from_utf8_lossy(&found.stdout).into_owned()
}

#[test]
fn three_ssh_agents_in_namespaces_send_exactly_the_requests_asked_for() {
    let Some(mut hosts) = TestHosts::make() else { return };
    let target = Target::start_with(&["--host", &hosts.target_ip.to_string()]);
    let url = target.url("/hello");

    let output = hosts.load(&["-c", "6", "-n", "3000", "--json", &url]);
    assert!(output.status.success(), "{}", describe(&output));
    let result: shootout_model::LoadResult = serde_json::from_slice(&output.stdout).unwrap();
    show_agents("ssh", &result);
    assert_eq!((result.requests.total, result.requests.ok), (3000, 3000), "{}", describe(&output));
    assert_eq!(target.served(), 3000, "the server saw exactly what the merged result says");
    assert_percentiles_from_merged_histogram(&result);
    let stderr = String::from_utf8_lossy(&output.stderr);
    for (i, host) in ["h1", "h2", "h3"].iter().enumerate() {
        let line = format!("agent {i} ({host}): on ");
        assert_eq!(stderr.matches(&line).count(), 1, "agent {i}'s clock line names {host}: {stderr}");
    }
    assert_eq!(stderr.matches(", clock ").count(), 3, "{stderr}");
    eprintln!("ssh agents' clock lines:\n{stderr}");
    assert_eq!(hosts.left_over(), Vec::<String>::new(), "no agent or ssh session is left on the hosts");

    // An agent whose wall clock is 2 s off is found and refused before anything is sent.
    if let Some(command) = skewed(&hosts.remote_shootout()) {
        assert_skew_refused(&hosts.load_with(&command, &["-c", "3", "-n", "30", &url]), "agent 0 (h1)");
        assert_eq!(target.served(), 3000, "nothing more was sent");
    }

    // The open model through a server that freezes 1 s in every 5 s: the corrected percentiles show it.
    let freezing = Target::start_with(&[&["--host", &hosts.target_ip.to_string()][..], &FREEZING[..]].concat());
    let mut args = vec!["--json"];
    args.extend(OPEN_MODEL_THROUGH_FREEZES);
    let frozen_url = freezing.url("/hello");
    args.push(&frozen_url);
    let output = hosts.load(&args);
    assert!(output.status.success(), "{}", describe(&output));
    let result: shootout_model::LoadResult = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(result.requests.total, freezing.served());
    assert_freezes_seen_as_they_are(&result);
    assert_percentiles_from_merged_histogram(&result);

    // A host whose sshd is down: one line naming it and ssh's reason; the agents started on the others end too.
    hosts.stop_sshd(3);
    let output = hosts.load(&["-c", "6", "-n", "300", &url]);
    assert_eq!(output.status.code(), Some(1), "{}", describe(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    eprintln!("with h3 down: {stderr}");
    assert_eq!(lines.len(), 1, "one line: {stderr}");
    assert!(lines[0].contains("agent 2 (h3)") && lines[0].contains("Connection refused"), "{stderr}");
    assert_eq!(hosts.left_over(), Vec::<String>::new(), "the agents started on h1 and h2 ended");

    let dir = hosts.dir.clone();
    drop(hosts);
    assert_eq!(sshds_running(&dir), "", "no test sshd is left");
}
