//! End-to-end tests of a suite's `[[service]]`: a real PostgreSQL made and started by the suite in this test's own
//! folder (initdb, a free port, no Unix socket: nothing of the machine's own cluster), reset from a template before
//! each server, sampled beside each server, and gone after the run and after Ctrl-C; and the faults that stop a suite (a service that exits, never gets ready, or fails its reset)
//! or refuse it (a server naming no service, two services on one port).

use std::path::Path;
use std::time::{Duration, Instant};

use crate::postgres::{postgres_bin, postgres_service};
use crate::support::{describe, left_with, marked, results, run_marked, running_with, start_run, trials, workdir};

/// A suite of `servers` beside a PostgreSQL of its own in `dir` ([`postgres_service`]).
fn postgres_suite(dir: &Path, head: &str, servers: &str) -> String {
    format!("{head}\n[load]\npath = \"/hello\"\n{}{servers}", postgres_service(dir, ""))
}

/// A server (the built-in target) whose setup writes down how many rows it finds in the database, then adds one.
fn counting_server(name: &str) -> String {
    let psql = format!("{}/psql -h 127.0.0.1 -p {{service.db.port}} -U postgres -d bench", postgres_bin().display());
    format!(
        "[[server]]\nname = \"{name}\"\ncommand = \"{{shootout}} target --port {{port}} --threads 1\"\n\
         setup = \"{psql} -tAc 'SELECT count(*) FROM seen' >> counts.txt && {psql} -c \\\"INSERT INTO seen VALUES ('{name}')\\\"\"\n"
    )
}

#[test]
fn a_database_is_reset_for_each_server_sampled_beside_it_and_gone_after_the_run() {
    let dir = workdir("services", "postgres");
    let head = "name = \"pg\"\nrepeats = 1\nduration = \"600ms\"\nwarmup = \"200ms\"\nsample_every = \"100ms\"\nconnections = [1, 2]";
    let suite = postgres_suite(&dir, head, &(counting_server("first") + &counting_server("second")));
    let mark = format!("services-postgres-{}", std::process::id());
    let output = run_marked(&dir, &suite, &mark);
    assert!(output.status.success(), "{}", describe(&output));
    assert_eq!(left_with(&mark), Vec::<String>::new(), "nothing of the database is left");
    // Each server found the table empty: the row the first one wrote was gone for the second.
    assert_eq!(std::fs::read_to_string(dir.join("counts.txt")).unwrap(), "0\n0\n", "{}", describe(&output));
    let trials = trials(&dir);
    assert_eq!(trials.len(), 4);
    for trial in &trials {
        let db = &trial.services.iter().find(|s| s.name == "db").expect("the database sampled in every trial");
        assert!(db.samples.len() >= 3, "sampled every 100 ms: {:?}", db.samples.len());
        // A postmaster and its helpers hold megabytes of their own, shared memory split between them.
        assert!(db.usage.pss_mean_bytes > 1 << 20, "{:?}", db.usage);
        assert!(db.usage.processes_max >= 3, "the postmaster and its helpers: {:?}", db.usage);
    }
    let report = results(&dir);
    let markdown = std::fs::read_to_string(report.join("report.md")).unwrap();
    assert!(markdown.contains("| db CPU µs/req | db MiB |"), "{markdown}");
    let html = std::fs::read_to_string(report.join("report.html")).unwrap();
    assert!(html.contains("Where the CPU went: first") && html.contains("Service memory"));
    let csv = std::fs::read_to_string(report.join("summary.csv")).unwrap();
    assert!(csv.lines().next().unwrap().ends_with(",service_db_cpu_us_per_request,service_db_pss_mean_bytes"));
    let environment: serde_json::Value =
        serde_json::from_slice(&std::fs::read(report.join("environment.json")).unwrap()).unwrap();
    assert_eq!(environment["services"][0]["name"], "db", "{environment}");
    assert!(environment["services"][0]["version"].as_str().unwrap().contains("PostgreSQL"), "{environment}");
    assert_eq!(environment["server_cpus"].as_array().unwrap().len(), 2, "the servers alone: {environment}");
}

#[test]
fn ctrl_c_leaves_nothing_of_the_database() {
    let dir = workdir("services", "postgres-ctrl-c");
    let head = "name = \"pg\"\nrepeats = 1\nduration = \"20s\"\nwarmup = \"200ms\"\nconnections = [1]";
    let suite = postgres_suite(&dir, head, &counting_server("only"));
    std::fs::write(dir.join("suite.toml"), suite).unwrap();
    let mark = format!("services-ctrl-c-{}", std::process::id());
    let run = start_run(marked(&mark), &dir);
    // Interrupted once the trial is under way: the server's setup has counted the rows.
    let deadline = Instant::now() + Duration::from_secs(60);
    while !dir.join("counts.txt").exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(800));
    assert!(!running_with(&mark).is_empty(), "the database runs meanwhile");
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(run.id() as i32), nix::sys::signal::Signal::SIGINT).unwrap();
    let output = run.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(130), "{}", describe(&output));
    assert_eq!(left_with(&mark), Vec::<String>::new(), "nothing of the database is left");
}

#[test]
fn a_service_that_exits_stops_the_suite_and_the_trials_before_are_kept() {
    let dir = workdir("services", "exits");
    // The service ends once the first server's teardown asks it to; the second server needs it too.
    let suite = "name = \"exits\"\nrepeats = 1\nduration = \"300ms\"\nwarmup = \"100ms\"\nconnections = [1, 2]\n\
                 [load]\npath = \"/hello\"\n\
                 [[service]]\nname = \"flaky\"\ncommand = \"while [ ! -e stop-now ]; do sleep 0.02; done\"\n\
                 ready = { command = \"true\" }\n\
                 [[server]]\nname = \"first\"\ncommand = \"{shootout} target --port {port}\"\n\
                 teardown = \"touch stop-now; sleep 0.5\"\n\
                 [[server]]\nname = \"second\"\ncommand = \"{shootout} target --port {port}\"\n";
    let mark = format!("services-exits-{}", std::process::id());
    let output = run_marked(&dir, suite, &mark);
    assert_eq!(output.status.code(), Some(1), "{}", describe(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("service 'flaky' exited (exit status 0) while the suite ran"), "{stderr}");
    assert!(stderr.contains("finish it with: shootout run --resume"), "{stderr}");
    let kept: Vec<String> = trials(&dir).iter().map(|t| t.server.clone()).collect();
    assert_eq!(kept, ["first", "first"], "the first server's trials are kept, the second is not measured");
    assert_eq!(left_with(&mark), Vec::<String>::new());
}

#[test]
fn a_trial_during_which_a_service_ended_is_not_kept() {
    let dir = workdir("services", "ends-mid-trial");
    // The service lives a second; the one level lasts three (or the server's start outlasts it: stopped too).
    let suite = "name = \"ends\"\nrepeats = 1\nduration = \"3s\"\nwarmup = \"100ms\"\nconnections = [1]\n\
                 [load]\npath = \"/hello\"\n\
                 [[service]]\nname = \"short\"\ncommand = \"sleep 1\"\nready = { command = \"true\" }\n\
                 [[server]]\nname = \"app\"\ncommand = \"{shootout} target --port {port}\"\n";
    let mark = format!("services-ends-{}", std::process::id());
    let output = run_marked(&dir, suite, &mark);
    assert_eq!(output.status.code(), Some(1), "{}", describe(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("service 'short' exited (exit status 0) while the suite ran"), "{stderr}");
    assert!(trials(&dir).is_empty(), "the trial measured without its service is not kept");
    assert_eq!(left_with(&mark), Vec::<String>::new());
}

#[test]
fn a_service_never_ready_or_whose_reset_fails_stops_the_suite_with_nothing_left() {
    let cases = [
        (
            "ready = { command = \"false\", timeout = \"1s\" }",
            "service 'db' was not ready within 1s (its ready command never succeeded: 'false' exited (exit status 1)",
        ),
        ("reset = \"exit 3\"", "service 'db': its reset failed: 'exit 3' exited (exit status 3)"),
    ];
    for (i, (key, said)) in cases.into_iter().enumerate() {
        let dir = workdir("services", &format!("faults-{i}"));
        let suite = format!(
            "name = \"faults\"\nrepeats = 1\nduration = \"300ms\"\nconnections = [1]\n[load]\npath = \"/hello\"\n\
             [[service]]\nname = \"db\"\ncommand = \"{{shootout}} target --port {{port}}\"\n{key}\n\
             [[server]]\nname = \"app\"\ncommand = \"{{shootout}} target --port {{port}}\"\n"
        );
        let mark = format!("services-faults-{i}-{}", std::process::id());
        let output = run_marked(&dir, &suite, &mark);
        assert_eq!(output.status.code(), Some(1), "{}", describe(&output));
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(said), "{stderr}");
        assert!(trials(&dir).is_empty(), "no server was measured without its service");
        assert_eq!(left_with(&mark), Vec::<String>::new());
    }
}

#[test]
fn a_verify_command_runs_after_the_verification_request_and_fails_its_server_when_it_fails() {
    let dir = workdir("services", "verify-command");
    // It sees the server's placeholders, and the verification request came first: /stats counts it.
    let suite = "name = \"verify\"\nrepeats = 1\nduration = \"300ms\"\nwarmup = \"100ms\"\nconnections = [1]\n\
                 [load]\npath = \"/hello\"\n\
                 [[server]]\nname = \"checked\"\ncommand = \"{shootout} target --port {port}\"\n\
                 verify = { command = \"curl -sf http://127.0.0.1:{port}/stats | grep -q requests\" }\n\
                 [[server]]\nname = \"refused\"\ncommand = \"{shootout} target --port {port}\"\n\
                 verify = { status = 200, command = \"echo counted none; exit 5\" }\n";
    let output = crate::support::run_suite(&dir, suite);
    assert_eq!(output.status.code(), Some(1), "{}", describe(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("server 'refused' answered its verification request, but its verify command failed: 'echo counted none; exit 5' exited (exit status 5)"),
        "{stderr}"
    );
    let kept: Vec<String> = trials(&dir).iter().map(|t| t.server.clone()).collect();
    assert_eq!(kept, ["checked"], "the server whose verify command passed was measured");
    let log = std::fs::read_to_string(results(&dir).join("logs/refused-r1.log")).unwrap();
    assert!(log.contains("counted none"), "its output is in the server's log: {log}");
}

#[test]
fn a_server_naming_no_service_and_two_services_on_one_port_are_refused() {
    let dir = workdir("services", "refused");
    let server = "[[server]]\nname = \"app\"\ncommand = \"{shootout} target --port {port}\"\n";
    let service = |name: &str, port: &str| format!("[[service]]\nname = \"{name}\"\ncommand = \"sleep 9\"\n{port}");
    let cases = [
        (
            format!("{}{server}needs = [\"dbb\"]\n", service("db", "")),
            "server 'app' needs service 'dbb', which the suite does not have (it has: db)",
        ),
        (
            format!("{}{server}env = {{ DB = \"{{service.cache.port}}\" }}\n", service("db", "")),
            "server 'app': {service.cache.port} names no service of the suite",
        ),
        (
            format!("{}{}{server}", service("a", "port = 7431\n"), service("b", "port = 7431\n")),
            "service 'b': port 7431 is service 'a''s too",
        ),
    ];
    for (body, said) in cases {
        let suite = format!("connections = [1]\n{body}");
        std::fs::write(dir.join("suite.toml"), &suite).unwrap();
        let output = crate::support::shootout().arg("run").arg(dir.join("suite.toml")).output().unwrap();
        assert_eq!(output.status.code(), Some(2), "{suite}\n{}", describe(&output));
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(said), "{stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "one line: {stderr}");
    }
}

#[test]
fn a_services_log_and_a_servers_log_never_share_a_file() {
    let dir = workdir("services", "log-names");
    // Named so that flat names would meet: server "service-db", repeat 1, and service "db-r1".
    let suite = "name = \"logs\"\nrepeats = 1\nduration = \"300ms\"\nconnections = [1]\n[load]\npath = \"/hello\"\n\
                 [[service]]\nname = \"db-r1\"\ncommand = \"echo said by the service; exec {shootout} target --port {port}\"\n\
                 [[server]]\nname = \"service-db\"\nneeds = [\"db-r1\"]\n\
                 command = \"echo said by the server; exec {shootout} target --port {port}\"\n";
    let output = crate::support::run_suite(&dir, suite);
    assert!(output.status.success(), "{}", describe(&output));
    let logs = results(&dir).join("logs");
    let server = std::fs::read_to_string(logs.join("service-db-r1.log")).unwrap();
    let service = std::fs::read_to_string(logs.join("services/db-r1.log")).unwrap();
    assert!(server.contains("said by the server") && !server.contains("said by the service"), "{server}");
    assert!(service.contains("said by the service") && !service.contains("said by the server"), "{service}");
}

/// Issue 50: a service whose reset hung held the suite, silent, for as long as it hung.
#[test]
fn a_hook_that_hangs_is_killed_at_its_hook_timeout_naming_it() {
    let service = "[[service]]\nname = \"db\"\ncommand = \"{shootout} target --port {port}\"\n";
    let server = "[[server]]\nname = \"app\"\ncommand = \"{shootout} target --port {port}\"\n";
    let cases = [
        (
            format!("{service}reset = \"sleep 31\"\nhook_timeout = \"1s\"\n{server}"),
            "service 'db': its reset failed: 'sleep 31' was still running after 1s, its time limit, and was killed \
             (raise its hook_timeout if it needs longer)",
        ),
        (
            format!("{server}setup = \"sleep 32\"\nhook_timeout = \"1s\"\n"),
            "server 'app': setup failed: 'sleep 32' was still running after 1s, its time limit, and was killed",
        ),
        // Issue 64, point 11: a limit under a second was said as "after 1s".
        (
            format!("{server}setup = \"sleep 34\"\nhook_timeout = \"300ms\"\n"),
            "server 'app': setup failed: 'sleep 34' was still running after 300ms, its time limit, and was killed",
        ),
    ];
    for (i, (body, said)) in cases.into_iter().enumerate() {
        let dir = workdir("services", &format!("hook-timeout-{i}"));
        let suite = format!(
            "name = \"hooks\"\nrepeats = 1\nduration = \"300ms\"\nconnections = [1]\n[load]\npath = \"/hello\"\n{body}"
        );
        let mark = format!("services-hooks-{i}-{}", std::process::id());
        let started = Instant::now();
        let output = run_marked(&dir, &suite, &mark);
        assert!(started.elapsed() < Duration::from_secs(20), "{:?}", started.elapsed());
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(said), "{}", describe(&output));
        assert!(trials(&dir).is_empty(), "nothing was measured");
        assert_eq!(left_with(&mark), Vec::<String>::new());
    }

    // A teardown that hangs is killed too, and said; the trial before it is kept.
    let dir = workdir("services", "hook-timeout-teardown");
    let suite = format!(
        "name = \"hooks\"\nrepeats = 1\nduration = \"300ms\"\nconnections = [1]\n[load]\npath = \"/hello\"\n\
         {server}teardown = \"sleep 33\"\nhook_timeout = \"1s\"\n"
    );
    let mark = format!("services-hooks-teardown-{}", std::process::id());
    let output = run_marked(&dir, &suite, &mark);
    assert!(output.status.success(), "what was measured is whole: {}", describe(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("server 'app': teardown failed: 'sleep 33' was still running after 1s"),
        "{}",
        describe(&output)
    );
    assert_eq!(trials(&dir).len(), 1, "{}", describe(&output));
    assert_eq!(left_with(&mark), Vec::<String>::new());
}

/// Issue 64, point 5: what a hook left running in the background (`sleep … &` in a server's setup, teardown and
/// verify command, and in a service's reset) outlived the run, which exited 0; the next run reaped it as left by
/// "runs that died".
#[test]
fn what_hooks_leave_running_ends_with_the_run() {
    let dir = workdir("services", "hooks-left");
    let suite = "name = \"left\"\nrepeats = 1\nduration = \"300ms\"\nwarmup = \"100ms\"\nconnections = [1]\n\
                 [load]\npath = \"/hello\"\n\
                 [[service]]\nname = \"db\"\ncommand = \"{shootout} target --port {port}\"\nreset = \"sleep 300 &\"\n\
                 [[server]]\nname = \"app\"\ncommand = \"{shootout} target --port {port}\"\n\
                 setup = \"sleep 301 &\"\nteardown = \"sleep 302 &\"\nverify = { command = \"sleep 303 &\" }\n";
    let mark = format!("services-hooks-left-{}", std::process::id());
    let output = run_marked(&dir, suite, &mark);
    assert!(output.status.success(), "{}", describe(&output));
    assert_eq!(trials(&dir).len(), 1, "{}", describe(&output));
    assert_eq!(left_with(&mark), Vec::<String>::new(), "what the hooks left in the background");
}
