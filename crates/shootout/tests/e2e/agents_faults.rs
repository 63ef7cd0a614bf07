//! Runs with agents that go wrong (issue 11): a barrier an agent never reaches, Ctrl-C in the middle of a run, an
//! agent whose wall clock is off, and a server that freezes under an open-model load shared by agents. Each run
//! marks its processes with an environment variable of its own, so the test can prove that none is left.

use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;
use shootout_model::LoadResult;

use crate::support::{
    assert_freezes_seen_as_they_are, assert_percentiles_from_merged_histogram, assert_skew_refused, describe,
    left_with, marked, shootout, skewed, stop_with, Target, FREEZING, OPEN_MODEL_THROUGH_FREEZES,
};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");
fn unique(name: &str) -> String {
    format!("{name}-{}", std::process::id())
}

#[test]
fn a_barrier_one_agent_never_reaches_times_out_and_leaves_nothing_running() {
    let mark = unique("barrier");
    let target = Target::start();
    let command = format!("{FIXTURES}/misbehaving-agent never-ready {}", env!("CARGO_BIN_EXE_shootout"));
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
fn an_agent_of_another_version_is_refused_by_name_before_anything_is_sent() {
    let mark = unique("version");
    let target = Target::start();
    let command = format!("{FIXTURES}/misbehaving-agent other-version {}", env!("CARGO_BIN_EXE_shootout"));
    let output = marked(&mark)
        .args(["load", "--agents", "local:2", "--agent-command", &command, "-c", "2", "-n", "100"])
        .arg(target.url("/hello"))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", describe(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    let expected = format!(
        "shootout: agent 1 (local) runs shootout 0.0.1 (protocol 2), this one {} (protocol 2): install the same version there",
        env!("CARGO_PKG_VERSION")
    );
    assert_eq!(stderr.trim(), expected);
    assert_eq!(target.served(), 0, "nothing was sent");
    assert_eq!(left_with(&mark), Vec::<String>::new(), "no agent is left running");
}

/// Issue 15: a coordinator's port lets in no agent of another run. The agent dialling with another secret is
/// told why in one line and exits 1; the coordinator counts it among those turned away.
#[test]
fn an_agent_with_another_runs_secret_is_turned_away_and_says_so_in_one_line() {
    use shootout_agents::launch::dial::{DialBack, Door, SECRET_VARIABLE};
    let door = Door::open(&DialBack { listen: "127.0.0.1:0".parse().unwrap(), address: None }, "test").unwrap();
    let agent = shootout()
        .args(["agent", "--index", "0", "--of", "1", "--dial", &door.address])
        .env(SECRET_VARIABLE, "0".repeat(32))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let words = shootout_agents::launch::LastWords::default();
    let gathered = door.gather(1, "test", Duration::from_secs(3), &mut || None, &words);
    let e = gathered.unwrap_err().to_string();
    assert!(e.contains("(1 connections with another secret, index or count were turned away)"), "{e}");
    let output = agent.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", describe(&output));
    assert_eq!(
        String::from_utf8_lossy(&output.stderr).trim(),
        "shootout: agent 0: the coordinator turned it away: its secret is not this run's: $SHOOTOUT_AGENT_SECRET belongs to another run"
    );
}

#[test]
fn report_and_compare_read_a_result_from_agents_unchanged() {
    let target = Target::start();
    let dir = tempfile::tempdir().unwrap();
    let run = |name: &str| {
        let file = dir.path().join(name);
        let output = shootout()
            .args(["load", "--agents", "local:2", "-c", "4", "-d", "2s", "-o"])
            .arg(&file)
            .arg(target.url("/hello"))
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", describe(&output));
        file
    };
    let (before, after) = (run("before.json"), run("after.json"));
    let report = shootout().arg("report").arg(&after).output().unwrap();
    assert!(report.status.success(), "{}", describe(&report));
    let html =
        std::fs::read_dir(dir.path()).unwrap().flatten().any(|e| e.file_name().to_string_lossy().ends_with(".html"));
    assert!(html, "the report is written beside the result: {}", describe(&report));
    let compare = shootout().arg("compare").arg(&before).arg(&after).output().unwrap();
    assert!(compare.status.code().is_some_and(|c| c == 0 || c == 3), "{}", describe(&compare));
    let said = String::from_utf8_lossy(&compare.stdout);
    assert!(said.contains("old req/s") && said.contains(&target.url("/hello")), "{}", describe(&compare));
}

#[test]
fn ctrl_c_sigterm_and_sighup_stop_every_agent_and_keep_what_they_measured() {
    // Ctrl-C and a closed terminal (SIGHUP) signal the coordinator's whole process group, as a terminal does;
    // `timeout`, a CI job's cancel or systemd send SIGTERM to the coordinator alone, which must stop its agents.
    for (signal, group) in [(Signal::SIGINT, true), (Signal::SIGTERM, false), (Signal::SIGHUP, true)] {
        let mark = unique(&format!("stopped-{signal}"));
        let target = Target::start();
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
        let result = stop_with(signal, coordinator, Duration::from_millis(2500), Duration::from_secs(5), group);
        assert!(result.requests.total > 100, "what was measured before {signal} is kept: {}", result.requests.total);
        assert_eq!(result.requests.total, target.served(), "every answer the server gave is counted");
        assert_eq!(result.agents.len(), 2);
        assert!(result.agents.iter().all(|a| a.lost.is_none() && a.measured.is_some()), "{:?}", result.agents);
        assert_eq!(left_with(&mark), Vec::<String>::new(), "no agent is left running after {signal}");
    }
}

fn skewed_load(target: &Target, command: &str, extra: &[&str]) -> Output {
    shootout()
        .args(["load", "--agents", "local:2", "--agent-command", command, "-c", "2", "-n", "200", "--json"])
        .args(extra)
        .arg(target.url("/hello"))
        .output()
        .unwrap()
}

#[test]
fn an_agent_whose_clock_is_off_is_refused_and_a_wider_limit_reports_its_offset() {
    let Some(command) = skewed(env!("CARGO_BIN_EXE_shootout")) else { return };
    let target = Target::start();
    assert_skew_refused(&skewed_load(&target, &command, &[]), "agent 0 (local)");
    assert_eq!(target.served(), 0, "a refused run sends nothing");
    let allowed = skewed_load(&target, &command, &["--max-skew", "3s"]);
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
    let target = Target::start_with(&FREEZING);
    let output = shootout()
        .args(["load", "--agents", "local:2", "--json"])
        .args(OPEN_MODEL_THROUGH_FREEZES)
        .arg(target.url("/hello"))
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", describe(&output));
    let result: LoadResult = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(result.requests.total, target.served());
    assert_freezes_seen_as_they_are(&result);
    assert_percentiles_from_merged_histogram(&result);
}
