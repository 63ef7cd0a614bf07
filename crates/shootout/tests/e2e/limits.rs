//! What limited each cell, as `shootout run` prints it and `report.md` and `summary.csv` keep it, with the built-in
//! target in the three situations a suite meets: an app that burns CPU (the server's CPU is the limit), an app
//! that sleeps (the server is waiting, its CPU nearly idle), and uploads bigger than one client core can send (the
//! client is the limit, and so the figures measure shootout).

use crate::support::{describe, results, run_suite, workdir};

/// Runs a one-server suite of target instances (`server` holds the server's keys) under `connections` users and
/// returns the limit the summary table gives the server, after checking report.md and summary.csv agree with it.
fn limit_of(name: &str, connections: u32, load: &str, server: &str) -> String {
    let dir = workdir("limits", name);
    let suite = format!(
        "name = \"{name}\"\nrepeats = 1\nduration = \"1500ms\"\nwarmup = \"300ms\"\nsample_every = \"250ms\"\n\
         connections = [{connections}]\nclient_cpus = \"0\"\n[load]\n{load}\n\
         [[server]]\nname = \"target\"\n{server}\n",
    );
    let output = run_suite(&dir, &suite);
    assert!(output.status.success(), "{}", describe(&output));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let header = stdout.lines().next().unwrap_or_default();
    assert!(header.ends_with("  limit"), "the table has a limit column: {stdout}");
    let row = stdout.lines().find(|l| l.starts_with("target ")).unwrap_or_else(|| panic!("a row: {stdout}"));
    let limit = row.split("  ").map(str::trim).filter(|s| !s.is_empty()).last().unwrap().to_string();
    let results = results(&dir);
    let markdown = std::fs::read_to_string(results.join("report.md")).unwrap();
    assert!(markdown.contains(&format!(" {limit} |")), "report.md says {limit} too: {markdown}");
    let csv = std::fs::read_to_string(results.join("summary.csv")).unwrap();
    assert!(csv.lines().next().unwrap().contains("server_cpus,server_busy,client_busy"), "{csv}");
    limit
}

/// A percentage in a limit such as `server CPU 97%` or `waiting (CPU 3%)`.
fn percent(limit: &str) -> f64 {
    let digits: String = limit.split('%').next().unwrap().chars().rev().take_while(char::is_ascii_digit).collect();
    digits.chars().rev().collect::<String>().parse().unwrap()
}

#[test]
fn an_app_burning_cpu_is_limited_by_the_servers_cpu() {
    // Each request costs the target 2 ms of CPU on its one thread, pinned to CPU 1, at a few hundred requests per
    // second that cost the client next to nothing. Whether a neighbour takes part of CPU 1 or not, the server
    // either used it or queued for it. Sixteen users keep 30 ms of work waiting in its sockets: with four (6 ms),
    // a client held off CPU 0 by other tests for longer left the server idle 10% of a CI run ("waiting (CPU 89.9%)").
    let server = "command = \"{shootout} target --port {port} --threads 1\"\ncpus = \"1\"\npath = \"/spin/2000\"";
    let limit = limit_of("cpu", 16, "", server);
    assert!(limit.starts_with("server CPU"), "{limit}");
}

#[test]
fn an_app_that_sleeps_is_waiting() {
    // 20 ms asleep per request, four users: 200 requests per second, a few percent of one CPU.
    let server = "command = \"{shootout} target --port {port} --threads 1\"\ncpus = \"1\"\npath = \"/delay/20\"";
    let limit = limit_of("waiting", 4, "", server);
    assert!(limit.starts_with("waiting (CPU "), "{limit}");
    assert!(percent(&limit) < 50.0, "{limit}");
}

#[test]
fn uploads_bigger_than_one_client_core_can_send_are_client_bound() {
    // 256 KiB bodies from one client thread on CPU 0 to a two-thread target on both CPUs: on loopback the sender
    // pays for the copy and the TCP work of both ends, the receiver one copy, so the client runs out first (and
    // the server's thread on CPU 0 only makes it wait for its core).
    // Other tests running at the same time can take CPU 0 from the client and the server alike, which reads, rightly,
    // as the server's CPUs being full; so the suite runs up to three times, and one run must find the client.
    let load = format!("method = \"POST\"\npath = \"/hello\"\nbody = \"{}\"", "x".repeat(256 * 1024));
    let server = "command = \"{shootout} target --port {port} --threads 2\"\ncpus = \"0-1\"";
    let limits: Vec<String> =
        (0..3).map(|_| limit_of("client", 8, &load, server)).take_while(|l| l != "client-bound").collect();
    assert!(limits.len() < 3, "never client-bound: {limits:?}");
}

#[test]
fn an_open_model_cell_gets_the_rate_its_server_completed_and_says_when_it_kept_up() {
    // 2 ms of CPU a request on one thread completes at most 500 requests/s: 50/s it keeps up with, 1,000/s it
    // cannot, and the cell must say what it completed (not the 1,000 offered), and not that it kept up.
    let dir = workdir("limits", "open");
    let suite = "name = \"open\"\nrepeats = 1\nduration = \"1500ms\"\nwarmup = \"300ms\"\nsample_every = \"250ms\"\n\
         rates = [50, 1000]\nclient_cpus = \"0\"\n[[server]]\nname = \"target\"\n\
         command = \"{shootout} target --port {port} --threads 1\"\ncpus = \"1\"\npath = \"/spin/2000\"\n";
    let output = run_suite(&dir, suite);
    assert!(output.status.success(), "{}", describe(&output));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let rows: Vec<Vec<&str>> = stdout
        .lines()
        .filter(|l| l.starts_with("target "))
        .map(|l| l.split("  ").map(str::trim).filter(|s| !s.is_empty()).collect())
        .collect();
    assert_eq!(rows.len(), 2, "{stdout}");
    let (kept, behind) = (&rows[0], &rows[1]);
    assert!(kept.last().unwrap().starts_with("kept up (CPU "), "{stdout}");
    let csv = std::fs::read_to_string(results(&dir).join("summary.csv")).unwrap();
    let rps: Vec<f64> = csv.lines().skip(1).map(|l| l.split(',').nth(7).unwrap().parse().unwrap()).collect();
    assert!((45.0..=51.0).contains(&rps[0]), "{csv}");
    assert!(rps[1] < 600.0, "the cell at 1,000/s completed {} requests/s: {csv}", rps[1]);
    assert!(!behind.last().unwrap().starts_with("kept up"), "{stdout}");
    // One warning, for the cell that fell behind: what it completed against what was offered, and who held it back.
    let warnings: Vec<&str> = stdout.lines().filter(|l| l.starts_with("WARNING: target at ")).collect();
    assert_eq!(warnings.len(), 1, "{stdout}");
    let completed = format!("completed {:.1} of the 1000.0 requests/s offered: ", rps[1]);
    assert!(warnings[0].contains(&completed), "{stdout}");
    let client_bound = behind.last() == Some(&"client-bound");
    assert!(
        client_bound || warnings[0].ends_with("the server did not keep up, its requests queueing inside it."),
        "{stdout}"
    );
    let markdown = std::fs::read_to_string(results(&dir).join("report.md")).unwrap();
    assert!(markdown.contains(&completed), "report.md: {markdown}");
}
