//! End-to-end tests of a suite's `[[service]]`: a real PostgreSQL made and started by the suite in this test's own
//! folder (initdb, a free port, no Unix socket: nothing of the machine's own cluster), reset from a template before
//! each server, sampled beside each server, and gone after the run and after Ctrl-C; the limit column naming a
//! busy service; and the faults that stop a suite (a service that exits, never gets ready, or fails its reset)
//! or refuse it (a server naming no service, two services on one port).

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};

use crate::support::{describe, left_with, marked, results, running_with, start_run, trials, workdir};

/// The folder of the newest PostgreSQL's programs (Debian's `postgresql` package).
fn postgres_bin() -> PathBuf {
    let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .expect("PostgreSQL is installed (.ci/run installs Debian's postgresql)")
        .flatten()
        .map(|e| e.path().join("bin"))
        .filter(|bin| bin.join("postgres").is_file())
        .collect();
    found.sort_by_key(|bin| bin.parent().and_then(|v| v.file_name()?.to_str()?.parse::<u32>().ok()).unwrap_or(0));
    found.pop().expect("a PostgreSQL server in /usr/lib/postgresql/*/bin")
}

/// What runs a PostgreSQL program: as the `postgres` user when the tests run as root, which PostgreSQL refuses
/// (setpriv execs, so the postmaster is the service's own process); the folder is made theirs too.
fn as_postgres(dir: &Path) -> String {
    use std::os::unix::fs::MetadataExt;
    // /proc/self belongs to this process's effective user.
    if std::fs::metadata("/proc/self").unwrap().uid() != 0 {
        return String::new();
    }
    let id = |flag: &str| -> u32 {
        let output = std::process::Command::new("id").args([flag, "postgres"]).output().unwrap();
        assert!(output.status.success(), "Debian's postgresql makes a postgres user");
        String::from_utf8_lossy(&output.stdout).trim().parse().unwrap()
    };
    std::os::unix::fs::chown(dir, Some(id("-u")), Some(id("-g"))).unwrap();
    "setpriv --reuid=postgres --regid=postgres --clear-groups -- ".into()
}

/// A suite of `servers` beside a PostgreSQL of its own in `dir` ([`postgres_service`]).
fn postgres_suite(dir: &Path, head: &str, servers: &str) -> String {
    format!("{head}\n[load]\npath = \"/hello\"\n{}{servers}", postgres_service(dir, ""))
}

/// A `[[service]]` named `db`: a PostgreSQL of its own in `dir`, made by its setup (a template database with one
/// table, `seen`), reset to a fresh copy of the template before each server, stopped by SIGINT; `more` adds keys
/// (`host = "ssh:h2"`).
pub(crate) fn postgres_service(dir: &Path, more: &str) -> String {
    let (bin, run_as) = (postgres_bin().display().to_string(), as_postgres(dir));
    let single =
        |database: &str, sql: &str| format!("echo '{sql}' | {run_as}{bin}/postgres --single -D data {database}");
    let setup = format!(
        "rm -rf data && {run_as}{bin}/initdb -D data --auth=trust -U postgres -E UTF8 --locale=C.UTF-8 -N && {} && {}",
        single("postgres", "CREATE DATABASE bench_template"),
        single("bench_template", "CREATE TABLE seen(server text)")
    );
    let psql = format!("{bin}/psql -q -h 127.0.0.1 -p {{port}} -U postgres -d postgres -v ON_ERROR_STOP=1");
    format!(
        "[[service]]\nname = \"db\"\n{more}setup = \"{setup}\"\n\
         command = \"{run_as}{bin}/postgres -D data -p {{port}} -c listen_addresses=127.0.0.1 -c unix_socket_directories=\"\n\
         ready = {{ command = \"{bin}/pg_isready -q -h 127.0.0.1 -p {{port}} -U postgres -d postgres\" }}\n\
         reset = \"{psql} -c 'DROP DATABASE IF EXISTS bench WITH (FORCE)' -c 'CREATE DATABASE bench TEMPLATE bench_template'\"\n\
         stop = {{ signal = \"INT\" }}\nversion_command = \"{bin}/postgres --version\"\n"
    )
}

/// A server (the built-in target) whose setup writes down how many rows it finds in the database, then adds one.
fn counting_server(name: &str) -> String {
    let psql = format!("{}/psql -h 127.0.0.1 -p {{service.db.port}} -U postgres -d bench", postgres_bin().display());
    format!(
        "[[server]]\nname = \"{name}\"\ncommand = \"{{shootout}} target --port {{port}} --threads 1\"\n\
         setup = \"{psql} -tAc 'SELECT count(*) FROM seen' >> counts.txt && {psql} -c \\\"INSERT INTO seen VALUES ('{name}')\\\"\"\n"
    )
}

/// Runs the suite in `dir` with processes marked `mark`.
fn run_marked(dir: &Path, suite: &str, mark: &str) -> Output {
    std::fs::write(dir.join("suite.toml"), suite).unwrap();
    marked(mark).arg("run").arg(dir.join("suite.toml")).arg("--results").arg(dir.join("results")).output().unwrap()
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

/// A suite of the built-in target as three servers at 2 users, beside a stand-in database, `db`, that only burns a
/// CPU (at the idle scheduling class, so that it takes only what nothing else wants and leaves the tests running
/// beside this one alone): one server waits on `/delay/2` without it (for its two users), one spins on `/spin/1500`, one waits beside
/// it. Returns each server's limit as the report's table writes it, and the stand-in database's busy share of its
/// CPU beside it (0 where it did not run).
fn limits(dir: &Path) -> Vec<(String, String, f64)> {
    let suite = "name = \"limits\"\nrepeats = 1\nduration = \"1s\"\nwarmup = \"300ms\"\nsample_every = \"100ms\"\n\
                 connections = [2]\n[load]\npath = \"/delay/2\"\n\
                 [[service]]\nname = \"db\"\ncommand = \"exec chrt --idle 0 sh -c 'while :; do :; done'\"\nready = { command = \"true\" }\n\
                 restart = \"server\"\ncpus = \"1\"\nstop = { grace = \"1s\" }\n\
                 [[server]]\nname = \"waits\"\ncommand = \"{shootout} target --port {port} --threads 1\"\nneeds = []\n\
                 [[server]]\nname = \"spins\"\ncommand = \"{shootout} target --port {port} --threads 1\"\n\
                 path = \"/spin/1500\"\nneeds = []\n\
                 [[server]]\nname = \"beside\"\ncommand = \"{shootout} target --port {port} --threads 1\"\ncpus = \"1\"\n";
    let mark = format!("services-limits-{}", std::process::id());
    let output = run_marked(dir, suite, &mark);
    assert!(output.status.success(), "{}", describe(&output));
    assert_eq!(left_with(&mark), Vec::<String>::new(), "the stand-in database is stopped with its server");
    let analysis: serde_json::Value =
        serde_json::from_slice(&std::fs::read(results(dir).join("analysis.json")).unwrap()).unwrap();
    analysis["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let db = c["services"].as_array().into_iter().flatten().find(|s| s["name"] == "db");
            let busy = db.and_then(|s| s["busy"].as_f64()).unwrap_or(0.0);
            (c["server"].as_str().unwrap().to_string(), serde_json::to_string(&c["limit"]).unwrap(), busy)
        })
        .collect()
}

#[test]
fn the_limit_names_a_busy_service_the_servers_cpu_or_waiting() {
    // The machine is shared: the stand-in database runs at the idle scheduling class, so the other tests' work on
    // CPU 1 can take it under the 90% that names it. A run where it got 90% must name it; one where it did not
    // tries again, three times at most, and when it never got its CPU the premise is said, not judged.
    let mut seen = Vec::new();
    for attempt in 0..3 {
        let dir = workdir("services", &format!("limits-{attempt}"));
        let cells = limits(&dir);
        let by = |server: &str| cells.iter().find(|c| c.0 == server).map(|c| c.1.clone()).unwrap_or_default();
        let (waits, spins, beside) = (by("waits"), by("spins"), by("beside"));
        // Its one thread waits in its event loop for the next of the two users' requests: the load sets its pace.
        assert!(waits.contains("\"by\":\"for_client\""), "{cells:?}");
        // It fills its CPU, or queues for it behind another test's work there, which is named.
        assert!(spins.contains("\"by\":\"server_cpu\"") || spins.contains("\"by\":\"taken_by\""), "{cells:?}");
        let db_busy = cells.iter().find(|c| c.0 == "beside").map_or(0.0, |c| c.2);
        if beside.contains("\"by\":\"service\",\"name\":\"db\"") {
            let table = std::fs::read_to_string(results(&dir).join("report.md")).unwrap();
            assert!(table.contains("db CPU 9"), "{table}");
            return;
        }
        assert!(db_busy < 0.9, "the stand-in database used {db_busy} of its CPU and was not named: {cells:?}");
        seen.push(cells);
    }
    eprintln!("the stand-in database never got 90% of its CPU beside the other tests, so it was not judged: {seen:?}");
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
