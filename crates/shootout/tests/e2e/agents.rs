//! Load from several agents (issue 11): `--agents local:N` starts N `shootout agent` processes, each runs its
//! exact share, and the coordinator merges what they measured into one result.

use shootout_metrics::{decode_histogram, percentile_us};

use crate::support::{describe, shootout, Target};

#[test]
fn three_local_agents_send_exactly_the_requests_asked_for() {
    let target = Target::start();
    let url = target.url("/hello");
    let output =
        shootout().args(["load", "--agents", "local:3", "-c", "12", "-n", "6000", "--json", &url]).output().unwrap();
    assert!(output.status.success(), "{}", describe(&output));
    let document: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    crate::support::assert_valid(&document);
    let result: shootout_model::LoadResult = serde_json::from_value(document).unwrap();
    assert_eq!((result.requests.total, result.requests.ok), (6000, 6000));
    assert_eq!(target.served(), 6000, "the server saw exactly what the merged result says");
    assert!(!result.interrupted);
    assert_eq!(result.connections.opened, 12, "each agent opened its share of the 12 connections");
    // The merged figures come from the merged histogram, never from the agents' percentiles.
    let merged = decode_histogram(&result.latency.histogram).unwrap();
    assert_eq!(merged.len(), 6000);
    for p in [50.0, 90.0, 99.0] {
        assert_eq!(percentile_us(&result.latency, p), shootout_metrics::value_at(&merged, p));
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.matches("clock").count(), 3, "each agent's clock check is reported: {stderr}");
    // The per-agent section: every agent's own share, clock and start.
    assert_eq!(result.agents.len(), 3);
    let shares: Vec<u64> = result.agents.iter().map(|a| a.measured.as_ref().unwrap().requests.total).collect();
    assert_eq!(shares, vec![2000, 2000, 2000], "each agent sent exactly its share");
    for agent in &result.agents {
        assert!(agent.clock_offset_ms.abs() <= agent.clock_error_ms + 5.0, "one machine's clocks agree: {agent:?}");
        assert!(agent.measured.as_ref().unwrap().start_ms < 100.0, "started together: {agent:?}");
        assert!(agent.lost.is_none());
    }
    let summary = shootout().args(["load", "--agents", "local:2", "-c", "4", "-n", "400", &url]).output().unwrap();
    assert!(String::from_utf8_lossy(&summary.stdout).contains("Agents:                   2 (starts spread over"));
    // An agent left behind has lost its coordinator and is a child of init; agents of three that another test
    // runs meanwhile still have theirs.
    let left = std::process::Command::new("pgrep")
        .args(["-P", "1", "-f", "shootout agent --index [0-9]+ --of 3"])
        .output()
        .unwrap();
    assert!(left.stdout.is_empty(), "no agent is left: {}", String::from_utf8_lossy(&left.stdout));
}

#[test]
fn two_local_agents_keep_an_open_rate() {
    let target = Target::start();
    let url = target.url("/hello");
    let output =
        shootout().args(["load", "--agents", "local:2", "-R", "400", "-d", "2s", "--json", &url]).output().unwrap();
    assert!(output.status.success(), "{}", describe(&output));
    let result: shootout_model::LoadResult = serde_json::from_slice(&output.stdout).unwrap();
    let sends = result.sends.expect("the open model reports its sends");
    assert!((792..=808).contains(&sends.due), "400/s for 2 s from two agents: {} due", sends.due);
    assert_eq!(result.requests.total, sends.sent);
    assert_eq!(target.served(), sends.sent);
    // The whole seconds of the window (a last one, measured for a moment, may follow with nothing in it).
    let per_second: Vec<u64> = result.timeline.iter().take(2).map(|s| s.requests).collect();
    assert!(
        per_second.iter().all(|&n| (380..=420).contains(&n)),
        "each merged second holds the whole rate: {per_second:?}"
    );
}

#[test]
fn agents_that_cannot_share_the_load_are_refused_with_one_line() {
    for (args, names) in [
        (vec!["--agents", "local:0"], "--agents 'local:0'"),
        (vec!["--agents", "docker:2"], "'docker' is not a launcher"),
        (vec!["--agents", "local:8", "-c", "4"], "each agent needs at least one connection"),
    ] {
        let mut all = vec!["load", "-n", "10"];
        all.extend(args);
        all.push("http://127.0.0.1:9/");
        let output = shootout().args(&all).output().unwrap();
        assert_eq!(output.status.code(), Some(2), "{all:?}: {}", describe(&output));
        assert!(String::from_utf8_lossy(&output.stderr).contains(names), "{all:?}: {}", describe(&output));
    }
}

#[test]
fn an_agent_that_dies_mid_run_ends_the_run_and_what_all_sent_is_kept() {
    let target = Target::start();
    let url = target.url("/hello");
    let child = shootout()
        .args(["load", "--agents", "local:2", "-c", "4", "-d", "4s", "--json", &url])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Let the load run a while, then kill agent 1 of this run: a child of this coordinator.
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let parent = child.id().to_string();
    let killed = std::process::Command::new("pkill")
        .args(["-KILL", "-P", &parent, "-f", "shootout agent --index 1 --of 2"])
        .status()
        .unwrap();
    assert!(killed.success(), "agent 1 was running");
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", describe(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("agent 1 (local) ended before sending its totals"), "{stderr}");
    let result: shootout_model::LoadResult = serde_json::from_slice(&output.stdout).unwrap();
    assert!(result.duration_s < 3.5, "the run ended when the agent died, not after 4 s: {}", result.duration_s);
    assert!(result.agents[1].lost.is_some() && result.agents[1].measured.is_none());
    assert!(result.agents[0].lost.is_none() && result.agents[0].measured.is_some());
    let from_seconds: u64 = result.timeline.iter().map(|s| s.requests).sum();
    assert!(from_seconds > result.agents[0].measured.as_ref().unwrap().requests.total, "agent 1's seconds count");
    assert!(target.served() >= result.requests.total, "nothing is reported that the server did not see");
}

/// Agents that share a machine share its CPUs: the run is judged against the host, not against each agent alone.
#[test]
fn agents_on_one_core_are_judged_together() {
    let target = Target::start();
    let url = target.url("/hello");
    let output = std::process::Command::new("taskset")
        .args([
            "-c",
            "0",
            env!("CARGO_BIN_EXE_shootout"),
            "load",
            "--agents",
            "local:3",
            "-c",
            "6",
            "-d",
            "2s",
            "--json",
            &url,
        ])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", describe(&output));
    let result: shootout_model::LoadResult = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(result.client.cpus_available, 1, "one host, one CPU, counted once");
    let busiest = result.agents.iter().map(|a| a.measured.as_ref().unwrap().client.busy).fold(0.0, f64::max);
    assert!(
        result.client.busy > 2.0 * busiest,
        "three agents on one core add up: {} against each at most {busiest}",
        result.client.busy
    );
}

/// A server that notes when each request arrives, by connection.
struct Arrivals {
    address: std::net::SocketAddr,
    seen: std::sync::Arc<std::sync::Mutex<Vec<(usize, std::time::Instant)>>>,
}

impl Arrivals {
    fn start() -> Arrivals {
        use std::io::{Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap();
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let notes = seen.clone();
        std::thread::spawn(move || {
            for (connection, stream) in listener.incoming().flatten().enumerate() {
                let notes = notes.clone();
                std::thread::spawn(move || {
                    let mut stream = stream;
                    let _ = stream.set_nodelay(true);
                    let mut buffer = [0u8; 4096];
                    let mut head = Vec::new();
                    while let Ok(n) = stream.read(&mut buffer) {
                        if n == 0 {
                            return;
                        }
                        head.extend_from_slice(&buffer[..n]);
                        while let Some(end) = head.windows(4).position(|w| w == b"\r\n\r\n") {
                            notes.lock().unwrap().push((connection, std::time::Instant::now()));
                            head.drain(..end + 4);
                            if stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok").is_err() {
                                return;
                            }
                        }
                    }
                });
            }
        });
        Arrivals { address, seen }
    }

    /// How far apart, in periods of `1 / rate`, the phases of the connections' arrivals are: every request of an
    /// evenly spaced stream at `rate` arrives a whole number of periods after the first, whichever agent sent it,
    /// so each connection's median phase (its arrivals' offsets from that grid) is the same when the agents'
    /// schedules interleave, and differs by an agent's misalignment when they do not. Connections with fewer than
    /// 20 arrivals are left out.
    fn phase_spread(&self, rate: f64) -> f64 {
        let seen = self.seen.lock().unwrap();
        let first = seen.iter().map(|&(_, t)| t).min().unwrap();
        let phase = |t: std::time::Instant| ((t - first).as_secs_f64() * rate).fract();
        // The phases are on a circle (0.99 of a period is next to 0.01): the reference is their circular mean,
        // and each is taken as its distance from it, -0.5 to 0.5 of a period.
        let angle = |p: f64| p * std::f64::consts::TAU;
        let (sin, cos) =
            seen.iter().fold((0.0, 0.0), |(s, c), &(_, t)| (s + angle(phase(t)).sin(), c + angle(phase(t)).cos()));
        let reference = sin.atan2(cos) / std::f64::consts::TAU;
        let mut by_connection: std::collections::BTreeMap<usize, Vec<f64>> = Default::default();
        for &(connection, t) in seen.iter() {
            let off = phase(t) - reference;
            by_connection.entry(connection).or_default().push(off - off.round());
        }
        let medians: Vec<f64> = by_connection
            .into_values()
            .filter(|phases| phases.len() >= 20)
            .map(|mut phases| {
                phases.sort_by(f64::total_cmp);
                phases[phases.len() / 2]
            })
            .collect();
        assert!(medians.len() >= 2, "the agents' connections each carried enough requests: {medians:?}");
        let (low, high) = medians.iter().fold((f64::MAX, f64::MIN), |(l, h), &m| (l.min(m), h.max(m)));
        high - low
    }

    /// How many of the `agents` turns of the shared schedule the connections' arrivals take. Agent i of n sends
    /// on every n-th instant of the 1 / `rate` grid, from the i-th: on the agents' own grid (n periods long) each
    /// connection's arrivals sit at one of n phases, i / n, so the connections of n agents that take turns take n
    /// of them, and those of agents sending on the same instants one. Each connection's phase is the circular mean
    /// of its arrivals' (a late arrival moves it a little, not to another turn); fewer than 20 arrivals are left out.
    fn turns_taken(&self, rate: f64, agents: usize) -> usize {
        let seen = self.seen.lock().unwrap();
        let first = seen.iter().map(|&(_, t)| t).min().unwrap();
        let periods = |t: std::time::Instant| (t - first).as_secs_f64() * rate;
        let circular_mean = |phases: &mut dyn Iterator<Item = f64>| {
            let (sin, cos) = phases.fold((0.0f64, 0.0f64), |(s, c), p| {
                let angle = p * std::f64::consts::TAU;
                (s + angle.sin(), c + angle.cos())
            });
            sin.atan2(cos) / std::f64::consts::TAU
        };
        // The grid's offset from the first arrival, in periods, from every arrival.
        let reference = circular_mean(&mut seen.iter().map(|&(_, t)| periods(t).fract()));
        let mut by_connection: std::collections::BTreeMap<usize, Vec<f64>> = Default::default();
        for &(connection, t) in seen.iter() {
            by_connection.entry(connection).or_default().push((periods(t) - reference) / agents as f64);
        }
        let turns: std::collections::BTreeSet<i64> = by_connection
            .into_values()
            .filter(|phases| phases.len() >= 20)
            .map(|phases| {
                let phase = circular_mean(&mut phases.into_iter());
                (phase * agents as f64).round().rem_euclid(agents as f64) as i64
            })
            .collect();
        turns.len()
    }
}

#[test]
fn agents_open_model_schedules_interleave_into_one_even_stream() {
    // At 1,000 requests/s the agents' requests fall due on one 1 ms grid from their shared start, agent i of n
    // taking every n-th: seen from the server, each connection's arrivals sit on the same grid, whichever agent
    // it belongs to, within 0.15 ms, and the agents take turns (two agents sending on the same instants would be
    // on the grid too, but take one turn of their own grid between them). A busy machine can shift one run's
    // arrivals: the best of three tries counts (a schedule that does not interleave is off by a third of a
    // period or more, or takes fewer turns, every time).
    'agents: for agents in [2, 3] {
        let mut spreads = Vec::new();
        for _ in 0..3 {
            let server = Arrivals::start();
            let url = format!("http://{}/", server.address);
            let spec = format!("local:{agents}");
            let output = shootout()
                .args(["load", "--agents", &spec, "-R", "1000", "-d", "3s", "-t", "1", "--json", &url])
                .output()
                .unwrap();
            assert!(output.status.success(), "{}", describe(&output));
            spreads.push((server.phase_spread(1000.0), server.turns_taken(1000.0, agents)));
            if spreads.last().is_some_and(|&(spread, turns)| spread <= 0.15 && turns == agents) {
                continue 'agents;
            }
        }
        panic!("{agents} agents' arrivals are (spread in periods, turns taken) {spreads:?}");
    }
}

#[test]
fn the_client_cpu_line_of_local_agents_is_a_share_of_the_machine() {
    // Issue 37: two agents on a 2-CPU machine printed "52% of 4 threads" for 52% of its 2 CPUs.
    let target = Target::start();
    let file = std::env::temp_dir().join(format!("shootout-agents-cpu-{}.json", std::process::id()));
    let output = shootout()
        .args(["load", "--agents", "local:2", "-c", "4", "-n", "2000", "-o"])
        .arg(&file)
        .arg(target.url("/hello"))
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", describe(&output));
    let result: shootout_model::LoadResult = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    std::fs::remove_file(&file).unwrap();
    let u = &result.client;
    let usable = u.threads.min(u.cpus_available);
    assert_eq!(u.cpus_available, result.agents[0].cpus, "one machine's CPUs, counted once");
    let busy = u.cpu_s / (result.duration_s * f64::from(usable));
    assert!((busy - u.busy).abs() < 1e-6, "busy {} is the CPU time over what {usable} CPUs could give: {busy}", u.busy);
    let plural = |n: u32| if n == 1 { "" } else { "s" };
    let words = format!(
        "= {:.0}% of {usable} CPU{} ({} threads of 2 agents on {} CPU{}; I/O: ",
        u.busy * 100.0,
        plural(usable),
        u.threads,
        u.cpus_available,
        plural(u.cpus_available)
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    let line = stdout.lines().find(|l| l.starts_with("Client CPU:")).unwrap();
    assert!(line.contains(&words), "{line:?} should read {words:?}");
}
