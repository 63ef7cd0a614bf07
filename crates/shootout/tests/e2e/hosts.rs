//! Servers and services on other machines (`host = "ssh:HOST"`) against real OpenSSH on the test hosts
//! ([`crate::namespaces`]): a server on h1 and PostgreSQL on h2, started, sampled and stopped there by `shootout
//! host`, the load from here; their samples are their own processes' (CPU, PSS), their logs come back; killing
//! the link mid-trial leaves nothing on h1; a host without shootout, or with another release, is one line naming
//! it.

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use shootout_model::run::TrialRecord;

use crate::namespaces::TestHosts;
use crate::support::{describe, results, shootout, start_run, workdir};

/// A suite with its server on h1 and a PostgreSQL on h2 (made in `dir`: the hosts share this filesystem), the
/// hosts running `command` as shootout. The server's url is left to its default: `h1` is an alias of the ssh
/// config, so the url must be made of the address ssh connects to.
fn suite(hosts: &TestHosts, dir: &Path, command: &str, duration: &str) -> String {
    let database = crate::postgres::postgres_service(dir, &format!("host = \"ssh:h2\"\ncwd = \"{}\"\n", dir.display()));
    format!(
        "name = \"hosts\"\nrepeats = 1\nduration = \"{duration}\"\nwarmup = \"300ms\"\nsample_every = \"100ms\"\n\
         connections = [2]\n[load]\npath = \"/hello\"\n\
         [hosts]\nssh_config = \"{}\"\ncommand = \"{command}\"\n{database}\
         [[server]]\nname = \"app\"\nhost = \"ssh:h1\"\n\
         command = \"{{shootout}} target --host 0.0.0.0 --port {{port}} --threads 1\"\n\
         env = {{ DB_PORT = \"{{service.db.port}}\" }}\nsetup = \"echo setup on $(uname -n) beside db on $DB_PORT\"\n",
        hosts.ssh_config.display(),
    )
}

#[test]
fn a_server_on_one_host_and_a_service_on_another_are_measured_there() {
    let Some(hosts) = TestHosts::make(1, "ssh hosts") else { return };
    let dir = workdir("hosts", "two-hosts");
    // Profiled too: perf runs on h1 beside the server, driven by `shootout host`, and its stacks come back.
    let profiled = "[profile]\nduration = \"1s\"\nprofiler = \"perf\"\n";
    let suite = suite(&hosts, &dir, &hosts.remote_shootout(), "1s") + profiled;
    std::fs::write(dir.join("suite.toml"), suite).unwrap();
    let output = run(&dir);
    assert!(output.status.success(), "{}", describe(&output));
    let results = results(&dir);
    let trial: TrialRecord =
        serde_json::from_slice(&std::fs::read(results.join("trials/app/2-r1.json")).unwrap()).unwrap();
    assert!(trial.result.requests.ok > 100, "{:?}", trial.result.requests);
    // The server's own processes, sampled on h1: the target's CPU and memory, not ssh's.
    assert!(trial.usage.cpu_s > 0.0 && trial.usage.pss_max_bytes > 1 << 20, "{:?}", trial.usage);
    assert_eq!(trial.usage.processes_max, 1, "the target alone: {:?}", trial.usage);
    // PostgreSQL's own processes, sampled on h2: the postmaster and its helpers.
    let db = &trial.services[0];
    assert_eq!(db.name, "db");
    assert!(db.samples.len() >= 5 && db.usage.pss_max_bytes > 1 << 20, "{:?}", db.usage);
    assert!(db.usage.processes_max >= 3, "{:?}", db.usage);
    let markdown = std::fs::read_to_string(results.join("report.md")).unwrap();
    assert!(markdown.contains("| db CPU µs/req | db MiB |"), "{markdown}");
    let log = std::fs::read_to_string(results.join("logs/app-r1.log")).unwrap();
    assert!(log.contains("beside db on ") && log.contains("listening"), "its setup and its output came back: {log}");
    let environment: serde_json::Value =
        serde_json::from_slice(&std::fs::read(results.join("environment.json")).unwrap()).unwrap();
    assert_eq!(environment["hosts"].as_array().map(Vec::len), Some(2), "{environment}");
    assert_eq!(environment["hosts"][0][0], "h1");
    assert!(environment["hosts"][0][1]["cpus"].as_u64() >= Some(1), "{environment}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("app: perf at 2 users"), "{stdout}");
    let folded = std::fs::read_to_string(results.join("profiles/app-2.folded")).unwrap();
    let stacks = shootout_profile::Stacks::parse(&folded).unwrap();
    assert!(
        stacks.share_with(|frame| frame.starts_with("shootout_target_server::")) > 0.0,
        "the target's frames: {folded}"
    );
    assert_eq!(hosts.left_over(), Vec::<String>::new(), "nothing is left on the hosts");
}

/// Waits until the server runs on h1 and has been loaded a moment.
fn under_load(hosts: &TestHosts) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while hosts.left_over().iter().all(|p| !p.contains("target --host 0.0.0.0")) {
        assert!(Instant::now() < deadline, "the server never started on h1");
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_millis(800));
}

/// A pattern of `pkill -f` that finds the runner's ssh client for host `n`.
fn link_to(hosts: &TestHosts, n: u32) -> String {
    format!("ServerAliveCountMax=4 -F {} -- h{n}", hosts.ssh_config.display())
}

/// `shootout run` on `dir/suite.toml`, to its end.
fn run(dir: &std::path::Path) -> Output {
    shootout().arg("run").arg(dir.join("suite.toml")).arg("--results").arg(dir.join("results")).output().unwrap()
}

#[test]
fn a_lost_link_or_runner_leaves_nothing_on_the_hosts_and_a_host_without_shootout_is_named() {
    let Some(hosts) = TestHosts::make(2, "ssh hosts' faults") else { return };
    let dir = workdir("hosts", "lost-link");
    std::fs::write(dir.join("suite.toml"), suite(&hosts, &dir, &hosts.remote_shootout(), "8s")).unwrap();
    let run_started = start_run(shootout(), &dir);
    // Once the server is under load on h1, its ssh link is killed.
    under_load(&hosts);
    let pattern = link_to(&hosts, 1);
    let killed = Command::new("pkill").args(["-KILL", "-f", &pattern]).status().unwrap();
    assert!(killed.success(), "the ssh link to h1 was found");
    let killed_at = Instant::now();
    let left = hosts.left_over();
    assert!(
        left.iter().all(|p| !p.contains("target --host")),
        "the server on h1 ended with its link ({:?} after): {left:?}",
        killed_at.elapsed()
    );
    let output = run_started.wait_with_output().unwrap();
    assert!(!output.status.success(), "{}", describe(&output));
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("the link to host 'h1' was lost"),
        "{}",
        describe(&output)
    );
    assert_eq!(hosts.left_over(), Vec::<String>::new(), "nothing is left on any host");

    // The runner killed without a word: its links' input ends, and each host kills what it started.
    let dir = workdir("hosts", "runner-killed");
    std::fs::write(dir.join("suite.toml"), suite(&hosts, &dir, &hosts.remote_shootout(), "8s")).unwrap();
    let mut runner = start_run(shootout(), &dir);
    under_load(&hosts);
    runner.kill().unwrap();
    let _ = runner.wait();
    assert_eq!(hosts.left_over(), Vec::<String>::new(), "nothing is left on any host after the runner's SIGKILL");

    // A host without shootout, and one whose shootout is another release: one line naming it, nothing started.
    let other = hosts.dir.join("other-release");
    std::fs::write(
        &other,
        "#!/bin/sh\nread hello\necho '{\"answer\":\"hello\",\"shootout\":\"0.0.1\",\"protocol\":1,\"machine\":\
         {\"name\":\"x\",\"kernel\":\"\",\"cpu_model\":\"\",\"cpus\":1,\"memory_bytes\":0}}'\nread more\n",
    )
    .unwrap();
    std::process::Command::new("chmod").arg("+x").arg(&other).status().unwrap();
    for (command, said) in [
        ("/nonexistent/shootout", "host 'h1': cannot start `/nonexistent/shootout host` there"),
        (other.to_str().unwrap(), "host 'h1': its shootout is 0.0.1 (host protocol 1), this one"),
    ] {
        let dir = workdir("hosts", "refused");
        std::fs::write(dir.join("suite.toml"), suite(&hosts, &dir, command, "1s")).unwrap();
        let output = run(&dir);
        assert_eq!(output.status.code(), Some(1), "{}", describe(&output));
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(said), "{stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "one line: {stderr}");
    }
    assert_eq!(hosts.left_over(), Vec::<String>::new());
}

/// Issue 50: a link that stalls (its ssh client stopped, as in a network that drops everything) left the runner
/// silent for minutes while the server there kept serving, and the first SIGTERM was not honoured.
#[test]
fn a_stalled_link_fails_within_its_timeout_and_the_first_sigterm_is_honoured() {
    let Some(hosts) = TestHosts::make(3, "ssh hosts' stalled links") else { return };
    let stall = |dir: &Path, link_timeout: &str| {
        // A light load (100 requests/s), so that the other tests' CPU truths are not disturbed meanwhile.
        let text = suite(&hosts, dir, &hosts.remote_shootout(), "20s")
            .replace("[hosts]\n", &format!("[hosts]\nlink_timeout = \"{link_timeout}\"\n"))
            .replace("connections = [2]\n", "rates = [100]\n");
        std::fs::write(dir.join("suite.toml"), text).unwrap();
        let runner = start_run(shootout(), dir);
        under_load(&hosts);
        let stopped = Command::new("pkill").args(["-STOP", "-f", &link_to(&hosts, 1)]).status().unwrap();
        assert!(stopped.success(), "the ssh link to h1 was found");
        (runner, Instant::now())
    };
    let resume = || {
        let _ = Command::new("pkill").args(["-CONT", "-f", &link_to(&hosts, 1)]).status();
    };

    // The link answers nothing: the question fails at its timeout, 3 s, and the host stops what it started.
    let dir = workdir("hosts", "stalled");
    let (runner, stalled_at) = stall(&dir, "3s");
    let output = runner.wait_with_output().unwrap();
    let took = stalled_at.elapsed();
    resume();
    assert!(!output.status.success(), "{}", describe(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("the link to host 'h1' was lost (it answered nothing in 3s"), "{}", describe(&output));
    eprintln!("stalled link, link_timeout 3s: the runner ended {took:?} after the stall");
    assert!(took < Duration::from_secs(15), "the runner ended {took:?} after the link stalled");
    assert_eq!(hosts.left_over(), Vec::<String>::new(), "nothing is left on any host");

    // With a minute's timeout, the first SIGTERM ends the run within seconds, keeping what was measured.
    let dir = workdir("hosts", "stalled-sigterm");
    let (runner, _) = stall(&dir, "60s");
    let signalled = Instant::now();
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(runner.id() as i32), nix::sys::signal::Signal::SIGTERM).unwrap();
    let output = runner.wait_with_output().unwrap();
    let took = signalled.elapsed();
    resume();
    assert_eq!(output.status.code(), Some(143), "{}", describe(&output));
    eprintln!("stalled link, link_timeout 60s: the run ended {took:?} after SIGTERM");
    assert!(took < Duration::from_secs(20), "the run ended {took:?} after SIGTERM");
    assert_eq!(hosts.left_over(), Vec::<String>::new(), "nothing is left on any host");
}

/// Issue 50: a server on a host listening on a port of its own waited out its whole ready timeout; now its host
/// says where its tree listens.
#[test]
fn a_server_on_a_host_listening_elsewhere_is_told_where() {
    let Some(hosts) = TestHosts::make(4, "ssh hosts' ready probe") else { return };
    let dir = workdir("hosts", "elsewhere");
    let suite = format!(
        "name = \"elsewhere\"\nrepeats = 1\nduration = \"300ms\"\nconnections = [1]\n[load]\npath = \"/hello\"\n\
         [hosts]\nssh_config = \"{}\"\ncommand = \"{}\"\n\
         [[server]]\nname = \"app\"\nhost = \"ssh:h1\"\nready = {{ timeout = \"30s\" }}\n\
         command = \"{{shootout}} target --host 0.0.0.0 --port 0 --threads 1\"\n",
        hosts.ssh_config.display(),
        hosts.remote_shootout(),
    );
    std::fs::write(dir.join("suite.toml"), suite).unwrap();
    let started = Instant::now();
    let output = run(&dir);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("server 'app' listens on 0.0.0.0:"), "{}", describe(&output));
    assert!(stderr.contains(", not on {port} = ") && stderr.contains("put {port} in its command"), "{stderr}");
    assert!(started.elapsed() < Duration::from_secs(20), "before its 30 s ready timeout: {:?}", started.elapsed());
    assert_eq!(hosts.left_over(), Vec::<String>::new(), "nothing is left on any host");
}
