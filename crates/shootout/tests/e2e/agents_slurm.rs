//! `--agents slurm:N` (issue 11) against a real Slurm: a slurmctld and three slurmds (nodes n1, n2 and n3, each
//! on a port of its own, `slurmd -N nX`) and a munged of their own, all on this machine, configured in a folder
//! of the test's own (nothing in /etc is touched). srun starts the agents, which dial back to the coordinator.
//!
//! Needs root and Debian's `slurmctld`, `slurmd`, `slurm-client` and `munge`; without them the test says why and
//! passes, except under CI (CI set), where they are required. Everything it starts is stopped when it ends.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::support::{
    assert_freezes_seen_as_they_are, assert_percentiles_from_merged_histogram, assert_skew_refused, describe,
    left_with, marked, processes_with, show_agents, skewed, Target, FREEZING, OPEN_MODEL_THROUGH_FREEZES,
};

const NODES: u32 = 3;

/// A one-machine Slurm cluster, stopped on drop.
struct Cluster {
    dir: PathBuf,
    conf: PathBuf,
    daemons: Vec<Child>,
}

fn skip(why: &str) -> Option<Cluster> {
    assert!(std::env::var_os("CI").is_none(), "under CI the Slurm agents test must run, but {why}");
    eprintln!("skipping the Slurm agents test: {why}");
    None
}

/// `count` consecutive ports no one listens on now (slurmd ports are given as a range), below the kernel's
/// ephemeral range (32768 and up here): a port picked with bind(0) and let go is free for the next connect() of
/// any other test to take as its own port before the daemon binds it, which is what failed a CI run. `taken`
/// holds the ports already given to this cluster.
fn free_ports(count: u16, taken: &mut Vec<u16>) -> u16 {
    let seed = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().subsec_nanos();
    let mut next = seed ^ std::process::id().wrapping_mul(2_654_435_761);
    for _ in 0..1000 {
        next = next.wrapping_mul(1_103_515_245).wrapping_add(12_345);
        let first = 20_000 + (next >> 8) as u16 % 12_000;
        let ports: Vec<u16> = (first..first + count).collect();
        if ports.iter().all(|p| !taken.contains(p) && TcpListener::bind(("0.0.0.0", *p)).is_ok()) {
            taken.extend(&ports);
            return first;
        }
    }
    panic!("no {count} consecutive free ports between 20000 and 32000");
}

impl Cluster {
    fn start() -> Option<Cluster> {
        let uid = Command::new("id").arg("-u").output().map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
        if uid.ok().as_deref() != Some("0") {
            return skip("it needs root (slurmd runs jobs as their user)");
        }
        for program in ["slurmctld", "slurmd", "srun", "sinfo", "munged"] {
            let found = ["/usr/sbin", "/usr/bin"].iter().any(|dir| Path::new(dir).join(program).exists());
            if !found {
                return skip(&format!("{program} is missing (apt-get install slurmctld slurmd slurm-client munge)"));
            }
        }
        // A folder per cluster: the tests of this file run at once, each with its own cluster.
        static CLUSTERS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let number = CLUSTERS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("shootout-slurm-test-{}-{number}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for sub in ["munge", "state", "log", "run", "spool"] {
            std::fs::create_dir_all(dir.join(sub)).unwrap();
        }
        let mut cluster = Cluster { conf: dir.join("slurm.conf"), dir: dir.clone(), daemons: Vec::new() };
        let munge = dir.join("munge");
        let mut key = vec![0u8; 1024];
        std::io::Read::read_exact(&mut std::fs::File::open("/dev/urandom").unwrap(), &mut key).unwrap();
        std::fs::write(munge.join("munge.key"), key).unwrap();
        set_mode(&munge.join("munge.key"), 0o400);
        set_mode(&munge, 0o700);
        let socket = munge.join("munge.sock");
        cluster.spawn(
            "munged",
            &[
                "--foreground",
                "--force",
                &format!("--socket={}", socket.display()),
                &format!("--key-file={}", munge.join("munge.key").display()),
                &format!("--pid-file={}", munge.join("munged.pid").display()),
                &format!("--log-file={}", munge.join("munged.log").display()),
                &format!("--seed-file={}", munge.join("munged.seed").display()),
            ],
            "munged",
        );
        let deadline = Instant::now() + Duration::from_secs(10);
        while !socket.exists() {
            assert!(Instant::now() < deadline, "munged did not open its socket: {}", cluster.log("munged"));
            std::thread::sleep(Duration::from_millis(50));
        }
        let mut taken = Vec::new();
        let (controller, slurmd) = (free_ports(1, &mut taken), free_ports(1, &mut taken));
        let nodes = free_ports(NODES as u16, &mut taken);
        let d = dir.display();
        std::fs::write(
            &cluster.conf,
            format!(
                "ClusterName=shootout\nSlurmctldHost=localhost\nSlurmctldPort={controller}\nSlurmdPort={slurmd}\n\
                 SlurmUser=root\nSlurmdUser=root\nAuthType=auth/munge\nCredType=cred/munge\n\
                 AuthInfo=socket={}\nStateSaveLocation={d}/state\nSlurmdSpoolDir={d}/spool/%n\n\
                 SlurmctldPidFile={d}/run/slurmctld.pid\nSlurmdPidFile={d}/run/slurmd-%n.pid\n\
                 SlurmctldLogFile={d}/log/slurmctld.log\nSlurmdLogFile={d}/log/slurmd-%n.log\n\
                 PlugStackConfig={d}/plugstack.conf\nProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\n\
                 JobAcctGatherType=jobacct_gather/none\nAccountingStorageType=accounting_storage/none\n\
                 JobCompType=jobcomp/none\nMpiDefault=none\nSelectType=select/cons_tres\n\
                 SelectTypeParameters=CR_Core\nReturnToService=2\nEnforcePartLimits=ALL\n\
                 NodeName=n[1-{NODES}] NodeHostname=localhost NodeAddr=127.0.0.1 Port=[{nodes}-{}] CPUs=2 \
                 State=UNKNOWN\nPartitionName=test Nodes=n[1-{NODES}] Default=YES MaxTime=INFINITE State=UP\n",
                socket.display(),
                nodes + NODES as u16 - 1,
            ),
        )
        .unwrap();
        std::fs::write(dir.join("plugstack.conf"), "").unwrap();
        let conf = cluster.conf.display().to_string();
        cluster.spawn("slurmctld", &["-D", "-f", &conf], "slurmctld");
        for n in 1..=NODES {
            let node = format!("n{n}");
            cluster.spawn("slurmd", &["-D", "-N", &node, "-f", &conf], &format!("slurmd-{node}"));
        }
        cluster.wait_until_idle();
        Some(cluster)
    }

    fn spawn(&mut self, program: &str, args: &[&str], log: &str) {
        let out = std::fs::File::create(self.dir.join("log").join(format!("{log}.out"))).unwrap();
        let child = Command::new(program)
            .args(args)
            .env("SLURM_CONF", &self.conf)
            .stdin(Stdio::null())
            .stdout(out.try_clone().unwrap())
            .stderr(out)
            .spawn()
            .unwrap_or_else(|e| panic!("{program}: {e}"));
        self.daemons.push(child);
    }

    fn log(&self, name: &str) -> String {
        let read = |file: String| std::fs::read_to_string(self.dir.join("log").join(file)).unwrap_or_default();
        format!("{}{}", read(format!("{name}.out")), read(format!("{name}.log")))
    }

    /// Waits until every node is idle, so srun can run on all three.
    fn wait_until_idle(&self) {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let states = Command::new("sinfo").args(["-h", "-N", "-o", "%T"]).env("SLURM_CONF", &self.conf).output();
            let states = states.map(|o| String::from_utf8_lossy(&o.stdout).to_string()).unwrap_or_default();
            if states.lines().filter(|l| l.trim() == "idle").count() == NODES as usize {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "the nodes are not idle ({states:?}): {}\n{}",
                self.log("slurmctld"),
                self.log("slurmd-n1")
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// `shootout load --agents slurm:N …` on this cluster, the agents running this binary.
    fn load(&self, agents: u32, args: &[&str]) -> Output {
        self.load_with(agents, env!("CARGO_BIN_EXE_shootout"), args)
    }

    /// The same, the agents running `command`.
    fn load_with(&self, agents: u32, command: &str, args: &[&str]) -> Output {
        marked(&self.mark())
            .env("SLURM_CONF", &self.conf)
            .args(["load", "--agents", &format!("slurm:{agents}"), "--agent-listen", "127.0.0.1:0"])
            .args(["--agent-command", command])
            .args(args)
            .output()
            .unwrap()
    }

    /// What marks the processes of this cluster's runs (srun passes the environment on to the agents).
    fn mark(&self) -> String {
        self.dir.file_name().unwrap().to_string_lossy().into_owned()
    }

    /// This cluster's srun and agents still running.
    fn agents_left(&self) -> Vec<String> {
        left_with(&self.mark())
    }
}

fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for daemon in self.daemons.iter_mut().rev() {
            let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(daemon.id() as i32), nix::sys::signal::SIGTERM);
        }
        let deadline = Instant::now() + Duration::from_secs(5);
        for daemon in self.daemons.iter_mut().rev() {
            while matches!(daemon.try_wait(), Ok(None)) && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = daemon.kill();
            let _ = daemon.wait();
        }
        // A job step's slurmstepd outlives its slurmd (it is reparented to init): every process started with this
        // cluster's configuration goes too.
        for (pid, _) in processes_with(&format!("SLURM_CONF={}", self.conf.display())) {
            let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), nix::sys::signal::SIGKILL);
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[test]
fn three_slurm_agents_send_exactly_the_requests_asked_for() {
    let Some(cluster) = Cluster::start() else { return };
    let target = Target::start();
    let output = cluster.load(NODES, &["-c", "12", "-n", "6000", "--json", &target.url("/hello")]);
    assert!(output.status.success(), "{}", describe(&output));
    let result: shootout_model::LoadResult = serde_json::from_slice(&output.stdout).unwrap();
    show_agents("slurm", &result);
    assert_eq!((result.requests.total, result.requests.ok), (6000, 6000));
    assert_eq!(target.served(), 6000, "the server saw exactly what the merged result says");
    assert_percentiles_from_merged_histogram(&result);
    let shares: Vec<u64> = result.agents.iter().map(|a| a.measured.as_ref().unwrap().requests.total).collect();
    assert_eq!(shares, vec![2000, 2000, 2000], "each task ran its share");
    let stderr = String::from_utf8_lossy(&output.stderr);
    for agent in 0..NODES {
        assert!(stderr.contains(&format!("agent {agent} (slurm, 127.0.0.1): on ")), "{stderr}");
    }
    assert_eq!(cluster.agents_left(), Vec::<String>::new(), "no agent is left running");

    // srun cannot place five agents on three nodes: one line with srun's reason, at once, nothing sent.
    let started = Instant::now();
    let refused = cluster.load(5, &["-c", "10", "-n", "100", &target.url("/hello")]);
    assert_eq!(refused.status.code(), Some(1), "{}", describe(&refused));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.trim().starts_with("shootout: agents 0, 1, 2, 3, 4 (slurm): cannot start it (it ended first: srun"),
        "{stderr}"
    );
    assert!(started.elapsed() < Duration::from_secs(20), "srun's refusal ends the wait: {:?}", started.elapsed());
    assert_eq!(target.served(), 6000, "nothing more was sent");

    // An agent whose wall clock is 2 s off is found and refused before anything is sent.
    if let Some(command) = skewed(env!("CARGO_BIN_EXE_shootout")) {
        let refused = cluster.load_with(NODES, &command, &["-c", "3", "-n", "30", &target.url("/hello")]);
        assert_skew_refused(&refused, "agent 0 (slurm, 127.0.0.1)");
        assert_eq!(target.served(), 6000, "nothing more was sent");
    }
    assert_eq!(cluster.agents_left(), Vec::<String>::new(), "no agent is left running");
}

#[test]
fn slurm_agents_in_the_open_model_see_a_frozen_server_as_it_is() {
    let Some(cluster) = Cluster::start() else { return };
    let target = Target::start_with(&FREEZING);
    let mut args = vec!["--json"];
    args.extend(OPEN_MODEL_THROUGH_FREEZES);
    let url = target.url("/hello");
    args.push(&url);
    let output = cluster.load(NODES, &args);
    assert!(output.status.success(), "{}", describe(&output));
    let result: shootout_model::LoadResult = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(result.requests.total, target.served());
    assert_freezes_seen_as_they_are(&result);
    assert_percentiles_from_merged_histogram(&result);
}
