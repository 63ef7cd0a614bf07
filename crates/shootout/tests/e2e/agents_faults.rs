//! Runs with agents that go wrong (issue 11): a barrier an agent never reaches, Ctrl-C in the middle of a run, an
//! agent whose wall clock is off, and a server that freezes under an open-model load shared by agents. Each run
//! marks its processes with an environment variable of its own, so the test can prove that none is left.

use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use shootout_model::LoadResult;

use crate::support::{describe, shootout, Target};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");
const MARK: &str = "SHOOTOUT_TEST_RUN";

/// `shootout` with a mark of its own in its environment, which every agent it starts inherits.
fn marked(mark: &str) -> Command {
    let mut command = shootout();
    command.env(MARK, mark);
    command
}

/// The processes carrying `mark`, after waiting up to two seconds for them to end.
fn left_with(mark: &str) -> Vec<String> {
    let needle = format!("{MARK}={mark}");
    let deadline = Instant::now() + Duration::from_secs(2);
    loop {
        let mut left = Vec::new();
        for entry in std::fs::read_dir("/proc").unwrap().flatten() {
            let dir = entry.path();
            let environ = std::fs::read(dir.join("environ")).unwrap_or_default();
            let alive = std::fs::read_to_string(dir.join("stat")).is_ok_and(|s| !s.contains(") Z "));
            if alive && environ.split(|&b| b == 0).any(|v| v == needle.as_bytes()) {
                left.push(std::fs::read_to_string(dir.join("cmdline")).unwrap_or_default().replace('\0', " "));
            }
        }
        if left.is_empty() || Instant::now() >= deadline {
            return left;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn unique(name: &str) -> String {
    format!("{name}-{}", std::process::id())
}

#[test]
fn a_barrier_one_agent_never_reaches_times_out_and_leaves_nothing_running() {
    let mark = unique("barrier");
    let target = Target::start();
    let command = format!("{FIXTURES}/agent-that-never-gets-ready {}", env!("CARGO_BIN_EXE_shootout"));
    let started = Instant::now();
    let output = marked(&mark)
        .args(["load", "--agents", "local:3", "--agent-command", &command, "--agent-timeout", "2s"])
        .args(["-c", "3", "-n", "300", &target.url("/hello")])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", describe(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.trim().lines().last(), Some(
        "shootout: agent 1 (local): no ready within 2 s; every agent was stopped (raise --agent-timeout if it is slow to start)"
    ), "{stderr}");
    assert!(started.elapsed() < Duration::from_secs(10), "the timeout is kept: {:?}", started.elapsed());
    assert_eq!(target.served(), 0, "no agent started sending");
    assert_eq!(left_with(&mark), Vec::<String>::new(), "no agent is left running");
}

#[test]
fn ctrl_c_stops_every_agent_and_keeps_what_they_measured() {
    let mark = unique("ctrl-c");
    let target = Target::start();
    // As a terminal does: the coordinator leads a process group, and Ctrl-C signals the whole group.
    let coordinator = {
        use std::os::unix::process::CommandExt;
        marked(&mark)
            .args(["load", "--agents", "local:2", "-c", "4", "-d", "30s", "--json", &target.url("/delay/1")])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn()
            .unwrap()
    };
    std::thread::sleep(Duration::from_millis(2500));
    killpg(Pid::from_raw(coordinator.id() as i32), Signal::SIGINT).unwrap();
    let stopped = Instant::now();
    let output = coordinator.wait_with_output().unwrap();
    assert!(stopped.elapsed() < Duration::from_secs(5), "Ctrl-C stops the run at once: {:?}", stopped.elapsed());
    assert_eq!(output.status.code(), Some(130), "{}", describe(&output));
    let result: LoadResult =
        serde_json::from_slice(&output.stdout).unwrap_or_else(|e| panic!("{e}: {}", describe(&output)));
    assert!(result.interrupted);
    assert!(result.requests.total > 100, "what was measured before Ctrl-C is kept: {}", result.requests.total);
    assert_eq!(result.requests.total, target.served(), "every answer the server gave is counted");
    assert_eq!(result.agents.len(), 2);
    assert!(result.agents.iter().all(|a| a.lost.is_none() && a.measured.is_some()), "{:?}", result.agents);
    assert_eq!(left_with(&mark), Vec::<String>::new(), "no agent is left running");
}

/// faketime, or None (said, and allowed only outside CI).
fn faketime() -> Option<&'static str> {
    if Command::new("faketime").arg("--version").output().is_ok() {
        return Some("faketime");
    }
    assert!(std::env::var_os("CI").is_none(), "under CI the clock test must run: apt-get install faketime");
    eprintln!("skipping the skewed-clock test: faketime is missing (apt-get install faketime)");
    None
}

fn skewed_load(target: &Target, extra: &[&str]) -> Output {
    // Only the wall clock moves: the start instant travels on the monotonic clock, as between two real machines.
    let command = format!("env FAKETIME_DONT_FAKE_MONOTONIC=1 faketime -f +2s {}", env!("CARGO_BIN_EXE_shootout"));
    shootout()
        .args(["load", "--agents", "local:2", "--agent-command", &command, "-c", "2", "-n", "200", "--json"])
        .args(extra)
        .arg(target.url("/hello"))
        .output()
        .unwrap()
}

#[test]
fn an_agent_whose_clock_is_off_is_refused_and_a_wider_limit_reports_its_offset() {
    let Some(_) = faketime() else { return };
    let target = Target::start();
    let refused = skewed_load(&target, &[]);
    assert_eq!(refused.status.code(), Some(1), "{}", describe(&refused));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    let line = stderr.trim().lines().last().unwrap_or_default();
    assert!(line.starts_with("shootout: agent 0 (local) ("), "{stderr}");
    assert!(line.contains("its clock is 2000.") || line.contains("its clock is 1999."), "{line}");
    assert!(line.ends_with("more than the 50 ms allowed: run chrony or another NTP client there, or raise --max-skew"));
    assert_eq!(target.served(), 0, "a refused run sends nothing");
    let allowed = skewed_load(&target, &["--max-skew", "3s"]);
    assert!(allowed.status.success(), "{}", describe(&allowed));
    let result: LoadResult = serde_json::from_slice(&allowed.stdout).unwrap();
    assert_eq!(result.requests.total, 200);
    for agent in &result.agents {
        assert!((agent.clock_offset_ms - 2000.0).abs() < 5.0, "the offset is measured: {agent:?}");
        // Their timestamps are put back on this machine's clock: both started together.
        assert!(agent.measured.as_ref().unwrap().start_ms < 100.0, "{agent:?}");
    }
}

#[test]
fn agents_in_the_open_model_see_a_frozen_server_as_it_is() {
    // The server freezes 1 s in every 5 s. At a fixed rate a fifth of the requests fall due during a freeze and
    // wait for its end, uniformly 0 to 1 s: so the corrected p90 is 500 ms and p99 950 ms. Two agents share the
    // rate; the run covers two whole periods, whatever their phase.
    let target = Target::start_with(&["--stall-every", "5s", "--stall-for", "1s"]);
    let output = shootout()
        .args(["load", "--agents", "local:2", "-R", "400", "-d", "10s", "-t", "2", "--max-connections", "8"])
        .args(["--json", &target.url("/hello")])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", describe(&output));
    let result: LoadResult = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(result.requests.failed, 0, "{:?}", result.errors);
    assert_eq!(result.requests.total, target.served());
    let p90 = shootout_metrics::percentile_us(&result.latency, 90.0) as f64;
    let p99 = shootout_metrics::percentile_us(&result.latency, 99.0) as f64;
    assert!((p90 - 500_000.0).abs() <= 50_000.0, "corrected p90 {p90} µs, expected 500 ms ± 10%");
    assert!((p99 - 950_000.0).abs() <= 95_000.0, "corrected p99 {p99} µs, expected 950 ms ± 10%");
}
