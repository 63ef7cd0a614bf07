//! `--agents ssh:HOST,…` (issue 11) against real OpenSSH on three test hosts ([`crate::namespaces`]). The agents
//! run this very binary (`--agent-command`), which the namespaces see since they share the filesystem.

use std::process::Output;

use crate::support::{
    assert_freezes_seen_as_they_are, assert_percentiles_from_merged_histogram, assert_skew_refused, describe, shootout,
    show_agents, skewed, Target, FREEZING, OPEN_MODEL_THROUGH_FREEZES,
};

use crate::namespaces::{sshds_running, TestHosts};

/// `shootout load --agents ssh:h1,h2,h3 …` with this binary as the hosts' shootout.
fn load(hosts: &TestHosts, args: &[&str]) -> Output {
    load_with(hosts, &hosts.remote_shootout(), args)
}

/// The same, the hosts running `command`.
fn load_with(hosts: &TestHosts, command: &str, args: &[&str]) -> Output {
    shootout()
        .args(["load", "--agents", "ssh:h1,h2,h3", "--ssh-config", hosts.ssh_config.to_str().unwrap()])
        .args(["--agent-command", command])
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn three_ssh_agents_in_namespaces_send_exactly_the_requests_asked_for() {
    let Some(mut hosts) = TestHosts::make(0, "ssh agents") else { return };
    let target = Target::start_with(&["--host", &hosts.target_ip.to_string()]);
    let url = target.url("/hello");

    let output = load(&hosts, &["-c", "6", "-n", "3000", "--json", &url]);
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
        assert_skew_refused(&load_with(&hosts, &command, &["-c", "3", "-n", "30", &url]), "agent 0 (h1)");
        assert_eq!(target.served(), 3000, "nothing more was sent");
    }

    // The open model through a server that freezes 1 s in every 5 s: the corrected percentiles show it.
    let freezing = Target::start_with(&[&["--host", &hosts.target_ip.to_string()][..], &FREEZING[..]].concat());
    let mut args = vec!["--json"];
    args.extend(OPEN_MODEL_THROUGH_FREEZES);
    let frozen_url = freezing.url("/hello");
    args.push(&frozen_url);
    let output = load(&hosts, &args);
    assert!(output.status.success(), "{}", describe(&output));
    let result: shootout_model::LoadResult = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(result.requests.total, freezing.served());
    assert_freezes_seen_as_they_are(&result);
    assert_percentiles_from_merged_histogram(&result);

    // A host whose sshd is down: one line naming it and ssh's reason; the agents started on the others end too.
    hosts.stop_sshd(3);
    let output = load(&hosts, &["-c", "6", "-n", "300", &url]);
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
