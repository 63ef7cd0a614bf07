//! The suite parser through its public API: every key, the sweeps, errors with their places, the outline a
//! report reads, and every example suite of the repository.

use std::path::Path;
use std::time::Duration;

use shootout_suite::{outline, parse, parse_sweep, Levels, Requires, Sweep};

#[test]
fn a_full_suite() {
    let text = r#"
name = "hello"
repeats = 2
duration = "3s"
warmup = "1s"
connections = [1, 4]
slo = ["mean < 1s", "p99 < 200ms", "errors < 1%"]
[load]
path = "/hello"
[[server]]
name = "a"
command = "shootout target --port {port}"
stop = { signal = "INT", grace = "2s" }
[[server]]
name = "b"
command = "shootout target --port {port}"
cwd = "sub"
"#;
    let dir = std::env::temp_dir().join(format!("shootout-suite-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    let s = parse(text, "hello.toml", &dir).unwrap();
    assert_eq!((s.repeats, s.duration.as_secs(), s.warmup.as_secs()), (2, 3, 1));
    assert_eq!(s.levels, Levels::Connections(vec![1, 4]));
    assert_eq!(s.slo[1].metric, shootout_model::slo::Metric::Percentile(99.0));
    assert_eq!(s.slo[1].limit, 200_000.0);
    assert_eq!(s.slo[2].limit, 1.0);
    assert_eq!(s.servers[0].stop_signal, nix::sys::signal::Signal::SIGINT);
    assert_eq!(s.servers[1].cwd, dir.join("sub"));
    assert_eq!(s.servers[0].ready_path, "/hello");
}

#[test]
fn the_full_and_smoke_sweeps() {
    let text = r#"
repeats = 2
duration = "3s"
warmup = "2s"
connections = [1, 8, 64]
[full]
connections = [1, 2, 4, 8, 16, 32, 64, 128]
duration = "30s"
repeats = 3
[[server]]
name = "a"
command = "x"
stop = { signal = "TERM", pidfile = "run/{port}.pid" }
start_warmup = "60s"
"#;
    let short = parse(text, "s.toml", Path::new(".")).unwrap();
    assert_eq!(short.requires, Requires::default());
    assert_eq!((short.repeats, short.duration.as_secs(), short.levels.values().len()), (2, 3, 3));
    assert_eq!(short.servers[0].stop_pidfile.as_deref(), Some("run/{port}.pid"));
    let full = parse_sweep(text, "s.toml", Path::new("."), Sweep::Full).unwrap();
    assert_eq!((full.repeats, full.duration.as_secs(), full.warmup.as_secs()), (3, 30, 2));
    assert_eq!(full.levels, Levels::Connections(vec![1, 2, 4, 8, 16, 32, 64, 128]));
    let smoke = parse_sweep(text, "s.toml", Path::new("."), Sweep::Smoke).unwrap();
    assert_eq!((smoke.repeats, smoke.duration.as_millis(), smoke.warmup.as_millis()), (1, 1000, 250));
    assert_eq!(smoke.levels, Levels::Connections(vec![1, 64]));
    assert_eq!((short.servers[0].start_warmup.as_secs(), smoke.servers[0].start_warmup.as_secs()), (60, 5));
    let no_full = "connections = [1]\nrequests = 500\n[[server]]\nname = \"a\"\ncommand = \"x\"\n";
    assert_eq!(parse(no_full, "s.toml", Path::new(".")).unwrap().requests, Some(500));
    let e = parse_sweep(no_full, "s.toml", Path::new("."), Sweep::Full).unwrap_err().to_string();
    assert!(e.starts_with("s.toml:1:1: --full: this suite has no [full] table"), "{e}");
    for name in ["short", "full", "smoke"] {
        assert_eq!(Sweep::from_name(name).name(), name);
    }
}

/// Issue 10: a suite whose servers were never installed by setup (ruby-sinatra) failed only on a fresh machine.
#[test]
fn every_example_suite_parses_and_names_what_it_needs() {
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let mut read = 0;
    // The suites of examples/hosts/ place servers on other machines: not smoke-run here, but read all the same.
    let placed = std::fs::read_dir(examples.join("hosts")).unwrap();
    for entry in std::fs::read_dir(&examples).unwrap().chain(placed) {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "toml") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let file = path.display().to_string();
        let suite = parse(&text, &file, &examples).unwrap_or_else(|e| panic!("{e}"));
        let full = text.contains("\n[full]").then_some(Sweep::Full);
        for sweep in full.into_iter().chain([Sweep::Smoke]) {
            parse_sweep(&text, &file, &examples, sweep).unwrap_or_else(|e| panic!("{e}"));
        }
        let only_shootout = suite.servers.iter().all(|s| s.command.starts_with("{shootout}"));
        let r = &suite.requires;
        assert!(
            only_shootout || (!r.packages.is_empty() && !r.check.is_empty()),
            "{file}: its servers need packages: list them, with checks, in [requires]"
        );
        read += 1;
    }
    assert!(read >= 8, "only {read} example suites found in {}", examples.display());
}

#[test]
fn a_scenario_is_read_and_checked_with_the_suite() {
    let dir = std::env::temp_dir().join(format!("shootout-suite-scenario-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("good.toml"), "[[request]]\nname = \"a\"\nurl = \"/a\"\n").unwrap();
    std::fs::write(dir.join("bad.toml"), "[[request]]\nname = \"a\"\nurl = \"/${nope}\"\n").unwrap();
    let suite = |file: &str| {
        format!("connections = [1]\n[load]\nscenario = \"{file}\"\n[[server]]\nname = \"s\"\ncommand = \"x\"\n")
    };
    let good = parse(&suite("good.toml"), "s.toml", &dir).unwrap();
    assert_eq!(good.unit(), "users");
    let scenario = good.load.scenario.expect("the scenario is kept with the suite");
    assert_eq!(scenario.parse("http://127.0.0.1:8080").unwrap().base, "http://127.0.0.1:8080");
    std::fs::write(
        dir.join("visit.toml"),
        "[[request]]\nname = \"a\"\nurl = \"/a\"\n[[session]]\nname = \"v\"\nsteps = [{ request = \"a\" }]\n",
    )
    .unwrap();
    let arrivals = suite("visit.toml").replace("connections = [1]", "rates = [5]");
    assert_eq!(parse(&arrivals, "s.toml", &dir).unwrap().unit(), "users/s", "arriving users, not requests");
    let rates = suite("good.toml").replace("connections = [1]", "rates = [5]");
    assert_eq!(parse(&rates, "s.toml", &dir).unwrap().unit(), "req/s");
    let bad = parse(&suite("bad.toml"), "s.toml", &dir).unwrap_err().to_string();
    assert!(
        bad.starts_with("s.toml:3:12: scenario: ") && bad.contains("bad.toml:3:9: unknown variable '${nope}'"),
        "{bad}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn errors_point_at_the_line() {
    let e = |text: &str| parse(text, "s.toml", Path::new(".")).unwrap_err().to_string();
    assert!(e("connections = [1]\ncolour = 1\n").starts_with("s.toml:2:1: unknown field `colour`"));
    // Issue 65: `rate =` for `rates =` got the list of every key, not the one meant.
    assert!(e("rate = [100]\n").starts_with("s.toml:1:1: unknown key `rate`: did you mean `rates`?"));
    assert!(e("connections = [1]\n").contains("no servers"));
    assert!(e("[[server]]\nname = \"a\"\ncommand = \"x\"\n").contains("no load levels"));
    let slo = e("connections = [1]\nslo = [\"fast < 1s\"]\n[[server]]\nname = \"a\"\ncommand = \"x\"\n");
    assert!(slo.starts_with("s.toml:2:8: 'fast < 1s' is not a condition"), "{slo}");
    let missing =
        e("connections = [1]\n[load]\nscenario = \"nowhere.toml\"\n[[server]]\nname = \"a\"\ncommand = \"x\"\n");
    assert!(missing.starts_with("s.toml:3:12: scenario ./nowhere.toml: cannot read it"), "{missing}");
    let signal = e("connections = [1]\n[[server]]\nname = \"a\"\ncommand = \"x\"\nstop = { signal = \"NOPE\" }\n");
    assert!(signal.starts_with("s.toml:5:19: 'NOPE' is not a signal"), "{signal}");
    // A command may be left out only in a container, which runs its image's own.
    let none = e("connections = [1]\n[[server]]\nname = \"a\"\n");
    assert!(none.starts_with("s.toml:3:8: server 'a' has no command: give the one that starts it"), "{none}");
    let boxed = "connections = [1]\n[[server]]\nname = \"a\"\ncontainer = { image = \"local/a:1\", port = 80 }\nhook_timeout = \"5m\"\n";
    let boxed = parse(boxed, "s.toml", Path::new(".")).unwrap();
    assert_eq!(boxed.servers[0].command, "", "the image's own command");
    assert_eq!(boxed.servers[0].hook_timeout, Duration::from_secs(300));
    let hosts = "connections = [1]\n[hosts]\nlink_timeout = \"5s\"\n[[server]]\nname = \"a\"\ncommand = \"x\"\n";
    assert_eq!(parse(hosts, "s.toml", Path::new(".")).unwrap().hosts.link_timeout, Duration::from_secs(5));
}

#[test]
fn the_outline_a_report_reads_is_checked_and_needs_no_files() {
    let text = "name = \"web\"\nconnections = [1]\nstatistic = \"best\"\nslo = [\"p99 < 5ms\"]\n[load]\nscenario = \"elsewhere.toml\"\n[[server]]\nname = \"b\"\ncommand = \"x\"\n[[server]]\nname = \"a\"\ncommand = \"y\"\n";
    let o = outline(text, "results/suite.toml", Sweep::Short).unwrap();
    assert_eq!((o.name.as_str(), o.servers.clone()), ("web", vec!["b".to_string(), "a".to_string()]));
    assert_eq!(o.statistic, shootout_model::run::Statistic::Best);
    assert_eq!(o.slo[0].limit, 5_000.0);
    assert_eq!(outline("connections = [1]\n", "dir/nightly.toml", Sweep::Short).unwrap().name, "nightly");
    let e = outline("slo = [\"p99 < soon\"]\n", "results/suite.toml", Sweep::Short).unwrap_err().to_string();
    assert!(e.starts_with("results/suite.toml:1:8: 'p99 < soon' is not a condition"), "{e}");
    let e = outline("statistic = \"mean\"\n", "s.toml", Sweep::Short).unwrap_err().to_string();
    assert!(e.starts_with("s.toml:1:13: statistic 'mean'"), "{e}");
}

#[test]
fn the_outline_gives_the_levels_of_the_sweep_that_was_run() {
    let text =
        "connections = [1, 4, 16]\n[full]\nconnections = [1, 2, 8, 32]\n[[server]]\nname = \"a\"\ncommand = \"x\"\n";
    let levels = |sweep| outline(text, "s.toml", sweep).unwrap().levels;
    assert_eq!(levels(Sweep::Short), [1.0, 4.0, 16.0]);
    assert_eq!(levels(Sweep::Full), [1.0, 2.0, 8.0, 32.0]);
    assert_eq!(levels(Sweep::Smoke), [1.0, 16.0]);
    let rates = outline("rates = [2.5, 10]\n", "s.toml", Sweep::Short).unwrap().levels;
    assert_eq!(rates, [2.5, 10.0]);
}

#[test]
fn the_protocol_comes_from_load_or_from_the_server() {
    let text = r#"
connections = [1]
[load]
protocol = "http2"
streams = 8
[[server]]
name = "h2"
command = "x"
[[server]]
name = "h1"
command = "x"
protocol = "http1"
[[server]]
name = "h2 more streams"
command = "x"
streams = 32
"#;
    let s = parse(text, "p.toml", Path::new("/x")).unwrap();
    let chosen: Vec<_> = s.servers.iter().map(|s| (s.protocol, s.streams)).collect();
    use shootout_model::Protocol::{Http1, Http2};
    assert_eq!(chosen, [(Http2, 8), (Http1, 1), (Http2, 32)]);
    let plain =
        parse("connections = [1]\n[[server]]\nname = \"a\"\ncommand = \"x\"\n", "p.toml", Path::new("/x")).unwrap();
    assert_eq!((plain.servers[0].protocol, plain.servers[0].streams), (Http1, 1));
}

#[test]
fn protocol_mistakes_point_at_the_key() {
    let error = |text: &str| parse(text, "p.toml", Path::new("/x")).unwrap_err().to_string();
    let servers = "[[server]]\nname = \"a\"\ncommand = \"x\"\n";
    let unknown = error(&format!("connections = [1]\n[load]\nprotocol = \"h3\"\n{servers}"));
    assert!(unknown.starts_with("p.toml:3:12: protocol 'h3': write \"http1\", \"http2\" or \"http3\""), "{unknown}");
    let streams = error(&format!("connections = [1]\n[load]\nstreams = 4\n{servers}"));
    assert!(streams.starts_with("p.toml:3:11: streams = 4: only HTTP/2 and HTTP/3"), "{streams}");
    let zero = error(&format!("connections = [1]\n[load]\nprotocol = \"http2\"\nstreams = 0\n{servers}"));
    assert!(zero.starts_with("p.toml:4:11: streams must be 1 or more"), "{zero}");
    let closing = error(&format!("connections = [1]\n[load]\nkeepalive = false\n{servers}protocol = \"http2\"\n"));
    assert!(closing.starts_with("p.toml:7:12: server 'a': HTTP/2 keeps its connections open"), "{closing}");
}

#[test]
fn the_load_table_caps_connections_and_redirects_and_refuses_zero_connections() {
    let servers = "[[server]]\nname = \"a\"\ncommand = \"x\"\n";
    let text = format!("rates = [100]\n[load]\nmax_connections = 5000\nmax_redirects = 0\n{servers}");
    let suite = parse(&text, "p.toml", Path::new("/x")).unwrap();
    assert_eq!((suite.load.max_connections, suite.load.max_redirects), (Some(5000), Some(0)));
    let plain = parse(&format!("rates = [100]\n{servers}"), "p.toml", Path::new("/x")).unwrap();
    assert_eq!((plain.load.max_connections, plain.load.max_redirects), (None, None));
    let zero = parse(&format!("rates = [100]\n[load]\nmax_connections = 0\n{servers}"), "p.toml", Path::new("/x"));
    let zero = zero.unwrap_err().to_string();
    assert!(zero.starts_with("p.toml:3:19: max_connections must be 1 or more"), "{zero}");
}

#[test]
fn a_matrix_expands_into_one_server_per_combination() {
    let text = r#"
connections = [1]
[[server]]
name = "puma -w {workers} -t {threads}"
command = "puma -w {workers} -t {threads}:{threads} -b tcp://127.0.0.1:{port}"
env = { WEB_CONCURRENCY = "{workers}" }
setup = "mkdir -p run/{workers}"
ready = { path = "/w{workers}" }
matrix = { workers = [1, 2, 4], threads = [1, "5"] }
[[server]]
name = "unicorn"
command = "unicorn -c unicorn.rb -E production --port {port} -N {workers}"
matrix = { workers = [3] }
"#;
    let s = parse(text, "m.toml", Path::new("/x")).unwrap();
    let names: Vec<&str> = s.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "puma -w 1 -t 1",
            "puma -w 1 -t 5",
            "puma -w 2 -t 1",
            "puma -w 2 -t 5",
            "puma -w 4 -t 1",
            "puma -w 4 -t 5",
            "unicorn (workers=3)"
        ]
    );
    let third = &s.servers[2];
    assert_eq!(third.command, "puma -w 2 -t 1:1 -b tcp://127.0.0.1:{port}", "{{port}} is left for the harness");
    assert_eq!(third.env, [("WEB_CONCURRENCY".to_string(), "2".to_string())]);
    assert_eq!((third.setup.as_deref(), third.ready_path.as_str()), (Some("mkdir -p run/2"), "/w2"));
    assert_eq!(third.params, [("workers".to_string(), "2".to_string()), ("threads".to_string(), "1".to_string())]);
    assert_eq!(s.servers[6].command, "unicorn -c unicorn.rb -E production --port {port} -N 3");
    let outline = outline(text, "m.toml", Sweep::Short).unwrap();
    assert_eq!(outline.servers.len(), 7, "a report's outline sees the same servers");
    assert_eq!(outline.servers[6], "unicorn (workers=3)");
}

#[test]
fn matrix_mistakes_point_at_the_matrix() {
    let error = |matrix: &str, command: &str| {
        let text = format!("connections = [1]\n[[server]]\nname = \"a\"\ncommand = \"{command}\"\nmatrix = {matrix}\n");
        parse(&text, "m.toml", Path::new("/x")).unwrap_err().to_string()
    };
    let unused = error("{ workers = [1, 2] }", "puma");
    assert!(unused.starts_with("m.toml:5:10: server 'a': matrix: 'workers' is not used: write {workers}"), "{unused}");
    let empty = error("{ workers = [] }", "puma -w {workers}");
    assert!(empty.contains("'workers' has no values"), "{empty}");
    let reserved = error("{ port = [1] }", "x {port}");
    assert!(reserved.contains("'port' is filled by shootout itself"), "{reserved}");
    let table = error("{ workers = [{ a = 1 }] }", "puma -w {workers}");
    assert!(table.contains("use numbers or strings"), "{table}");
    let twice = parse(
        "connections = [1]\n[[server]]\nname = \"a {w}\"\ncommand = \"x {w}\"\nmatrix = { w = [1, 1] }\n",
        "m.toml",
        Path::new("/x"),
    )
    .unwrap_err()
    .to_string();
    assert!(twice.contains("server 'a 1' is listed twice"), "{twice}");
}

/// Issue 41: what no run can be given is refused as the suite is read, at its place, before anything starts.
#[test]
fn what_no_run_can_be_given_is_refused_at_its_place() {
    let server = |name: &str, extra: &str| format!("[[server]]\nname = {name:?}\ncommand = \"x\"\n{extra}");
    let e = |text: String| {
        parse(&format!("connections = [1]\n{text}"), "s.toml", Path::new("/tmp")).unwrap_err().to_string()
    };
    for (name, why) in [
        ("", "give each server a name of its own"),
        (".", "give each server a name of its own"),
        ("..", "give each server a name of its own"),
        ("a\tb", "control characters cannot be in a name"),
    ] {
        let said = e(server(name, ""));
        assert!(said.starts_with(&format!("s.toml:3:8: server name {name:?}: {why}")), "{said}");
    }
    let long = "x".repeat(201);
    assert!(e(server(&long, "")).contains("it is 201 bytes as a file name: shorten it to 200"));
    let said = e(server("a/b", "") + &server("a-b", ""));
    assert!(said.starts_with("s.toml:6:8: server name \"a-b\": its trials would go to the folder of server \"a/b\" (both make 'a-b'): rename one"), "{said}");
    let said = e(server("a", "cwd = \"no-such-folder\"\n"));
    assert!(said.starts_with("s.toml:3:8: server 'a': cwd /tmp/no-such-folder: there is no such folder"), "{said}");
    let said = e(server("a", "setup = \"echo a\\u0000b\"\n"));
    assert!(said.contains("server 'a': setup holds a NUL byte, which no process can be given"), "{said}");
    let said = e(server("a", "env = { \"A=B\" = \"1\" }\n"));
    assert!(
        said.contains("server 'a': env key \"A=B\": a variable's name is not empty and holds no '=' or NUL"),
        "{said}"
    );
    assert!(e(server("a", "env = { \"\" = \"1\" }\n")).contains("env key \"\""));
    let huge = format!("teardown = \"{}\"\n", "y".repeat(200_000));
    assert!(e(server("a", &huge))
        .contains("teardown is 200000 bytes, and a shell takes at most 131071: put it in a script"));
    let said = parse(
        "repeats = 4000000000\nconnections = [1, 2]\n[[server]]\nname = \"a\"\ncommand = \"x\"\n",
        "s.toml",
        Path::new("/tmp"),
    )
    .unwrap_err()
    .to_string();
    assert!(
        said.starts_with(
            "s.toml:1:11: 1 servers × 2 levels × 4000000000 repeats make 8000000000 trials, more than the 100000"
        ),
        "{said}"
    );
    let values = (0..1000).map(|n| n.to_string()).collect::<Vec<_>>().join(", ");
    let matrix = format!("connections = [1]\n[[server]]\nname = \"a {{x}} {{y}}\"\ncommand = \"x {{x}} {{y}}\"\nmatrix = {{ x = [{values}], y = [{values}] }}\n");
    let said = parse(&matrix, "s.toml", Path::new("/tmp")).unwrap_err().to_string();
    assert!(
        said.contains("matrix: 1000000 combinations, and a suite runs at most 10000 servers: give fewer values"),
        "{said}"
    );
}

#[test]
fn a_search_replaces_the_short_sweep_and_keeps_the_others() {
    let text = r#"
connections = [1, 8]
slo = ["mean < 1s"]
search = { precision = "2%", ceiling = 500 }
[full]
connections = [1, 2, 4]
[[server]]
name = "a"
command = "x"
"#;
    let short = parse(text, "s.toml", Path::new(".")).unwrap();
    let search = short.search.unwrap();
    // The model follows the levels (closed for connections); users start at 1.
    assert_eq!((search.closed, search.precision, search.start, search.ceiling), (true, 0.02, 1.0, 500.0));
    assert_eq!(short.levels, Levels::Connections(vec![1]));
    let full = parse_sweep(text, "s.toml", Path::new("."), Sweep::Full).unwrap();
    assert_eq!((full.search, full.levels), (None, Levels::Connections(vec![1, 2, 4])));
    let smoke = parse_sweep(text, "s.toml", Path::new("."), Sweep::Smoke).unwrap();
    assert_eq!((smoke.search, smoke.levels), (None, Levels::Connections(vec![1, 8])));
    assert!(outline(text, "s.toml", Sweep::Short).unwrap().search);
    assert!(outline(text, "s.toml", Sweep::Short).unwrap().levels.is_empty());
    // Without levels: an open search from 10 requests/s, which a smoke run checks the servers at.
    let open = "slo = [\"p99 < 10ms\"]\nsearch = {}\n[[server]]\nname = \"a\"\ncommand = \"x\"\n";
    let search = parse(open, "s.toml", Path::new(".")).unwrap().search.unwrap();
    assert_eq!((search.closed, search.precision, search.start), (false, 0.05, 10.0));
    let smoke = parse_sweep(open, "s.toml", Path::new("."), Sweep::Smoke).unwrap();
    assert_eq!((smoke.search, smoke.levels), (None, Levels::Rates(vec![10.0])));
    // An arrival rate's window is 2 s: at 1/s, the first arrival may come a second late.
    assert_eq!(smoke.duration.as_secs(), 2);
    assert_eq!(outline(open, "s.toml", Sweep::Smoke).unwrap().levels, [10.0]);
}

#[test]
fn search_mistakes_point_at_the_key() {
    let error = |search: &str, slo: &str| {
        let text = format!("{slo}rates = [10]\nsearch = {search}\n[[server]]\nname = \"a\"\ncommand = \"x\"\n");
        parse(&text, "s.toml", Path::new(".")).unwrap_err().to_string()
    };
    let slo = "slo = [\"mean < 1s\"]\n";
    let e = error("{}", "");
    assert!(e.starts_with("s.toml:2:10: search finds the highest level that meets the SLO"), "{e}");
    let e = error("{ model = \"ramp\" }", slo);
    assert!(e.starts_with("s.toml:3:20: search model 'ramp': write \"open\""), "{e}");
    let e = error("{ precision = \"0%\" }", slo);
    assert!(e.contains("search precision 0%: a bracket of no width"), "{e}");
    let e = error("{ precision = \"fine\" }", slo);
    assert!(e.contains("search precision 'fine' is not a percentage below 100"), "{e}");
    let e = error("{ model = \"closed\", start = 2.5 }", slo);
    assert!(e.contains("search start 2.5: write a whole number from 1 to 10000 (users)"), "{e}");
    let e = error("{ start = 100, ceiling = 50 }", slo);
    assert!(e.contains("search ceiling 50 is under its start 100: raise it"), "{e}");
}

#[test]
fn a_profile_table_is_read_checked_and_cut_short_in_a_smoke_run() {
    use shootout_model::profile::{ProfileAt, Profiler};
    let suite = |profile: &str| format!("connections = [1, 8]\n{profile}\n[[server]]\nname = \"a\"\ncommand = \"x\"\n");
    let read = |profile: &str, sweep: Sweep| parse_sweep(&suite(profile), "s.toml", Path::new("."), sweep);
    assert_eq!(read("", Sweep::Short).unwrap().profile, None);
    let defaults = read("[profile]", Sweep::Short).unwrap().profile.unwrap();
    assert_eq!(
        (defaults.at, defaults.duration, defaults.profiler),
        (ProfileAt::Capacity, Duration::from_secs(10), None)
    );
    let given = read("[profile]\nat = 8\nduration = \"30s\"\nprofiler = \"rbspy\"", Sweep::Short).unwrap().profile;
    let given = given.unwrap();
    assert_eq!(
        (given.at, given.duration, given.profiler),
        (ProfileAt::Level(8.0), Duration::from_secs(30), Some(Profiler::Rbspy))
    );
    let smoke = read("[profile]\nat = \"knee\"\nduration = \"30s\"", Sweep::Smoke).unwrap().profile.unwrap();
    assert_eq!((smoke.at, smoke.duration), (ProfileAt::Knee, Duration::from_secs(2)));
    let e = |profile: &str| read(profile, Sweep::Short).unwrap_err().to_string();
    let at = e("[profile]\nat = \"peak\"");
    assert!(
        at.starts_with("s.toml:3:6: profile at 'peak': write \"capacity\", \"knee\" or a whole number of users"),
        "{at}"
    );
    assert!(e("[profile]\nat = 2.5").contains("profile at 2.5: write"), "users are whole");
    assert!(e("[profile]\nduration = \"0s\"").contains("profile duration 0s records nothing"));
    let profiler = e("[profile]\nprofiler = \"gprof\"");
    assert!(profiler.starts_with("s.toml:3:12: profiler 'gprof' is not one shootout drives"), "{profiler}");
    assert!(e("[profile]\nevery = 1").contains("unknown field `every`"));
}
