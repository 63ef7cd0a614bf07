//! Scenario files: sessions with a login cookie and an extracted token, mixes by weight, arrival phases, and
//! validation errors that point at the line.

use std::sync::atomic::Ordering;

use crate::session_server;
use crate::support::{describe, load, results, run_suite, shootout, temp_file, workdir, Target};

const SESSION: &str = r#"
[[request]]
name = "login"
method = "POST"
url = "/login"
body = "user=alice"
expect = { status = 200 }
extract = [{ var = "token", json = "/token" }]

[[request]]
name = "account"
url = "/account"
headers = { Authorization = "Bearer ${token}" }
expect = { status = 200, body = "alice" }

[[request]]
name = "logout"
url = "/logout"

[[session]]
name = "visit"
steps = [{ request = "login", think = "5ms" }, { request = "account" }, { request = "logout" }]
"#;

/// Every session's requests went through, carried the cookie and token, and each step's count is the server's;
/// returns each step's count of good responses.
fn assert_sessions_served<'a>(
    result: &'a shootout_model::LoadResult,
    counts: &session_server::Counts,
) -> impl Fn(&str) -> u64 + 'a {
    assert_eq!(result.requests.failed + result.requests.http_errors, 0, "{:?}", result.errors);
    assert_eq!(counts.refused.load(Ordering::Relaxed), 0, "every request carried the cookie and token");
    let step = |name: &str| result.by_request.iter().find(|r| r.name == name).unwrap().requests.ok;
    assert_eq!(step("login"), counts.login.load(Ordering::Relaxed));
    assert_eq!(step("account"), counts.account.load(Ordering::Relaxed));
    assert_eq!(step("logout"), counts.logout.load(Ordering::Relaxed));
    assert!(step("account") >= 20, "{} sessions got to their account", step("account"));
    step
}

#[test]
fn a_session_with_a_login_cookie_and_an_extracted_token() {
    let (address, counts) = session_server::start();
    let file = temp_file("session.toml", SESSION);
    let result = load(&["--scenario", &file, "-d", "1s", "-c", "4", &format!("http://{address}")]);
    let step = assert_sessions_served(&result, &counts);
    assert!(step("login") >= step("account") && step("account") >= step("logout"));
    assert!(step("login") - step("logout") <= 4, "only sessions cut by the end of the run are unfinished");
    assert_eq!(result.requests.total, step("login") + step("account") + step("logout"));

    let output = shootout()
        .args(["load", "--json", "--scenario", &file, "-n", "30", "-c", "2", &format!("http://{address}")])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", describe(&output));
    crate::support::assert_valid(&serde_json::from_slice(&output.stdout).unwrap());
}

#[test]
fn a_closed_models_user_pauses_after_its_sessions_last_step_too_and_for_as_long_as_it_says() {
    // One step with 10 ms of thought: each of two users sends one request per 10 ms and a response's time, not as
    // many as the server answers (the last step's pause was dropped, and such a user never paused), nor one per
    // 15 ms (pauses ended at the worker's next 5 ms tick).
    let target = Target::start();
    let file = temp_file(
        "think.toml",
        "[[request]]\nname = \"a\"\nurl = \"/hello\"\n\n[[session]]\nname = \"s\"\nsteps = [{ request = \"a\", think = \"10ms\" }]\n",
    );
    let result = load(&["--scenario", &file, "-d", "1s", "-c", "2", &target.url("")]);
    let cycle_s = 0.010 + result.latency.mean_us / 1e6;
    let share = result.requests.ok as f64 / (2.0 * result.duration_s / cycle_s);
    assert!(
        (0.85..=1.05).contains(&share),
        "{} requests in {} s: {share} of the paced count",
        result.requests.ok,
        result.duration_s
    );
}

#[test]
fn arrival_phases_bring_in_new_users() {
    let (address, counts) = session_server::start();
    let file = temp_file("phases.toml", &format!("{SESSION}\n[[phase]]\nduration = \"2s\"\nusers_per_second = 40\n"));
    let result = load(&["--scenario", &file, &format!("http://{address}")]);
    let sends = result.sends.expect("phases run the open model");
    // About 80 users arrive (a Poisson count: 80 ± 9); each logs in once.
    assert!((50..=110).contains(&sends.due), "{} users arrived", sends.due);
    assert_eq!(counts.login.load(Ordering::Relaxed), sends.due);
    assert_eq!(counts.refused.load(Ordering::Relaxed), 0);
    assert_eq!(result.requests.failed, 0, "{:?}", result.errors);
}

#[test]
fn a_weighted_mix_follows_its_weights() {
    let target = Target::start();
    let file = temp_file(
        "mix.toml",
        "[[request]]\nname = \"hello\"\nurl = \"/hello\"\nweight = 3\n\n[[request]]\nname = \"bytes\"\nurl = \"/bytes/10\"\nweight = 1\n",
    );
    let result = load(&["--scenario", &file, "-n", "4000", "-c", "4", &target.url("")]);
    let count = |name: &str| result.by_request.iter().find(|r| r.name == name).unwrap().requests.ok as f64;
    assert_eq!(count("hello") + count("bytes"), 4000.0);
    let share = count("hello") / 4000.0;
    assert!((share - 0.75).abs() < 0.03, "hello got {share} of the mix, weight 3 of 4");
    assert_eq!(target.served(), 4000);
}

#[test]
fn a_failed_check_is_counted_and_ends_the_session() {
    let target = Target::start();
    let file = temp_file(
        "check.toml",
        "[[request]]\nname = \"a\"\nurl = \"/hello\"\nexpect = { body = \"Goodbye\" }\n\n[[request]]\nname = \"b\"\nurl = \"/hello\"\n\n[[session]]\nname = \"s\"\nsteps = [{ request = \"a\" }, { request = \"b\" }]\n",
    );
    let result = load(&["--scenario", &file, "-n", "50", "-c", "1", "-t", "1", &target.url("")]);
    assert_eq!(result.requests.checks_failed, 50);
    assert_eq!((result.requests.ok, result.requests.failed), (50, 0), "each is a response all the same");
    let failed = &result.failed_checks[..];
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert_eq!(failed[0].request, "a");
    assert_eq!(failed[0].expected, "a body containing \"Goodbye\"");
    assert_eq!((failed[0].got.as_str(), failed[0].count), ("status 200 without it", 50));
    let b = result.by_request.iter().find(|r| r.name == "b").unwrap();
    assert_eq!(b.requests.total, 0, "no session got past its failed first step");
}

#[test]
fn responses_that_fail_their_checks_are_responses_counted_by_request_and_expectation() {
    // A login that expects 200 and gets 302, beside a page that answers 401: every response is in the status
    // codes and the availability; each failed check is counted under its request with what came instead.
    let target = Target::start();
    let file = temp_file(
        "redirected.toml",
        "[[request]]\nname = \"login\"\nmethod = \"POST\"\nurl = \"/status/302\"\nbody = \"u=a\"\nexpect = { status = 200 }\n\n\
         [[request]]\nname = \"secret\"\nurl = \"/status/401\"\n",
    );
    let json = std::env::temp_dir().join(format!("shootout-{}-redirected.json", std::process::id()));
    let url = target.url("");
    let args = ["load", "--scenario", &file, "-n", "40", "-c", "2", "-t", "1", &url];
    let output = shootout().args(args).arg("-o").arg(&json).output().unwrap();
    assert!(output.status.success(), "a failed check alone does not fail the run: {}", describe(&output));
    let result: shootout_model::LoadResult = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let (logins, secrets) = (result.status_counts["302"], result.status_counts["401"]);
    assert_eq!(logins + secrets, 40);
    let summary = String::from_utf8_lossy(&output.stdout);
    let line = |label: &str| summary.lines().find(|l| l.starts_with(label)).unwrap_or_default().to_string();
    assert_eq!(line("scenario "), format!("scenario {file}: 2 requests (login, secret) on {url} ({})", target.address));
    assert_eq!(line("Transactions:"), format!("{:<26}40 hits", "Transactions:"));
    let available = 100.0 * logins as f64 / 40.0;
    assert_eq!(line("Availability:"), format!("{:<26}{available:.2} %", "Availability:"), "the 401s failed");
    assert_eq!(line("Status codes:"), format!("{:<26}302: {logins}, 401: {secrets}", "Status codes:"));
    assert_eq!(line("Checks:"), format!("{:<26}40 of 40 responses failed (100.00 %)", "Checks:"));
    assert!(summary.contains(&format!("\n  login: expected status 200, got 302: {logins}\n")), "{summary}");
    assert!(summary.contains(&format!("\n  secret: expected a status below 400, got 401: {secrets}\n")), "{summary}");
    assert!(summary.contains("WARNING: 40 of 40 responses failed their checks"), "{summary}");
    let gated = shootout().args(args).args(["--fail-if", "checks>0%"]).output().unwrap();
    assert_eq!(gated.status.code(), Some(3), "{}", describe(&gated));
    assert!(String::from_utf8_lossy(&gated.stderr).contains("checks"), "{}", describe(&gated));
}

/// Issue 37: in a suite, responses that failed their checks went without a word; a suite's `checks` objective is
/// judged on them, and each cell with failed checks gets a warning that says how, in every format.
#[test]
fn a_suites_failed_checks_are_judged_by_its_slo_and_named_under_its_table() {
    let dir = workdir("scenarios", "checks");
    std::fs::write(
        dir.join("login.toml"),
        "[[request]]\nname = \"login\"\nmethod = \"POST\"\nurl = \"/status/302\"\nbody = \"u=a\"\nexpect = { status = 200 }\n",
    )
    .unwrap();
    let suite = "repeats = 1\nduration = \"500ms\"\nwarmup = \"100ms\"\nconnections = [1]\nslo = [\"checks < 1%\"]\n\
                 [load]\nscenario = \"login.toml\"\n\
                 [[server]]\nname = \"target\"\ncommand = \"{shootout} target --port {port} --threads 1\"\n";
    let output = run_suite(&dir, suite);
    assert!(output.status.success(), "{}", describe(&output));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let csv = std::fs::read_to_string(results(&dir).join("summary.csv")).unwrap();
    let trial: shootout_model::run::TrialRecord =
        serde_json::from_str(&std::fs::read_to_string(results(&dir).join("trials/target/1-r1.json")).unwrap()).unwrap();
    let logins = trial.result.status_counts["302"];
    assert!(logins > 0 && trial.result.requests.checks_failed == logins, "{csv}");
    let warning = format!(
        "target at 1 user: {0} of {0} responses failed their checks (login: expected status 200, got 302: {0}), so its \
         figures may not measure the pages the scenario means.",
        shootout_report::units::count(logins)
    );
    assert!(stdout.contains(&format!("WARNING: {warning}")), "{stdout}");
    assert!(stdout.contains("target: none: breaks it at the lowest level, 1 user"), "{stdout}");
    assert!(stdout.contains("100.00% ✗"), "the failed figure is marked: {stdout}");
    let markdown = std::fs::read_to_string(results(&dir).join("report.md")).unwrap();
    assert!(markdown.contains(&warning), "{markdown}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Issue 41: a scenario's headers went on the wire as written, a CR LF starting a header of its own.
#[test]
fn a_scenarios_headers_that_would_break_the_request_are_refused_at_their_place() {
    for (headers, said) in [
        (
            "{ X-A = \"b\\r\\nX-Injected: 1\" }",
            "4:19: header X-A: -H 'X-A: …': a header value cannot hold CR, LF or NUL",
        ),
        (
            "{ Content-Length = \"5\" }",
            "4:30: header Content-Length: -H 'Content-Length': shootout frames each request itself",
        ),
        ("{ \"X A\" = \"b\" }", "4:21: header X A: -H 'X A': a header name is one word"),
    ] {
        let file =
            temp_file("injected.toml", &format!("[[request]]\nname = \"a\"\nurl = \"/\"\nheaders = {headers}\n"));
        let output = shootout().args(["load", "--scenario", &file, "http://127.0.0.1:1"]).output().unwrap();
        assert_eq!(output.status.code(), Some(2), "{}", describe(&output));
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(&format!("{file}:{said}")), "{stderr}");
    }
}

#[test]
fn a_bad_scenario_is_refused_with_its_line_and_column() {
    let file = temp_file("bad.toml", "[[request]]\nname = \"a\"\nurl = \"/\"\nheaders = { X = \"${missing}\" }\n");
    let output = shootout().args(["load", "--scenario", &file, "http://127.0.0.1:1"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", describe(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains(&format!("{file}:4:18: unknown variable '${{missing}}'")), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}

fn urls_file(target: &Target) -> String {
    let text = format!(
        "# siege's format\nHOST=http://{}\n$(HOST)/hello\n${{HOST}}/bytes/10\n$(HOST)/hello POST user=alice&pw=x\n",
        target.address
    );
    temp_file("urls.txt", &text)
}

fn by_name(result: &shootout_model::LoadResult, name: &str) -> u64 {
    result.by_request.iter().filter(|r| r.name == name).map(|r| r.requests.ok).sum()
}

#[test]
fn urls_files_and_scenarios_speak_https_and_http2() {
    // The target over TLS (its own certificate: -k): a urls file of https:// URLs, then a scenario whose base is
    // https://, over HTTP/2 through ALPN.
    let target = Target::start_with(&["--tls"]);
    let urls = temp_file("https-urls.txt", &format!("{}\n{}\n", target.url("/hello"), target.url("/bytes/10")));
    let result = load(&["-k", "-f", &urls, "-n", "100", "-c", "2"]);
    assert_eq!((by_name(&result, "GET /hello"), by_name(&result, "GET /bytes/10")), (50, 50), "{:?}", result.errors);
    assert_eq!(result.tls_handshake.map(|h| h.count), Some(2), "over TLS, a handshake per connection");
    let scenario = temp_file(
        "https.toml",
        &format!("base = \"{}\"\n[[request]]\nname = \"hello\"\nurl = \"/hello\"\n", target.url("")),
    );
    let result = load(&["-k", "--http2", "--scenario", &scenario, "-n", "100", "-c", "2"]);
    assert_eq!(by_name(&result, "hello"), 100, "{:?}", result.errors);
    assert!(result.http2_setup.is_some(), "spoken over HTTP/2");
    assert_eq!(target.served(), 200);
}

#[test]
fn a_siege_urls_file_is_walked_in_order() {
    let target = Target::start();
    let result = load(&["-f", &urls_file(&target), "-n", "300", "-c", "1"]);
    assert_eq!(by_name(&result, "GET /hello"), 100);
    assert_eq!(by_name(&result, "GET /bytes/10"), 100);
    assert_eq!(by_name(&result, "POST /hello"), 100);
    assert!(result.bytes_sent > 300 * 60, "the POST bodies went out");
    assert_eq!(target.served(), 300);
}

#[test]
fn random_picks_urls_evenly() {
    let target = Target::start();
    let result = load(&["-f", &urls_file(&target), "--random", "-n", "3000", "-c", "2"]);
    for name in ["GET /hello", "GET /bytes/10", "POST /hello"] {
        let n = by_name(&result, name) as f64;
        assert!((n - 1000.0).abs() < 100.0, "{name} got {n} of 3000 picks");
    }
}

#[test]
fn delay_pauses_each_user_like_siege() {
    // Two users pausing 0 to 100 ms (50 ms on average) after each answer make about 40 requests a second.
    let target = Target::start();
    let result = load(&["--delay", "100ms", "-c", "2", "-d", "1s", &target.url("/hello")]);
    assert!((20..=70).contains(&result.requests.ok), "{} requests", result.requests.ok);
    assert_eq!(result.options.delay, Some(std::time::Duration::from_millis(100)));
}

#[test]
fn a_scenario_without_keepalive_asks_for_a_new_connection_each_time() {
    let target = Target::start();
    let file = temp_file("close.toml", "[[request]]\nname = \"a\"\nurl = \"/hello\"\n");
    let result = load(&["--scenario", &file, "--no-keepalive", "-n", "40", "-c", "2", &target.url("")]);
    assert_eq!(result.requests.ok, 40);
    assert_eq!(result.connections.opened, 40);
}

#[test]
fn agents_share_a_scenario_and_its_sessions_as_one_run_does() {
    // Each agent gets the scenario as checked here (the extract's pattern and the templates included) and runs
    // its share of the users; the merge keeps every request's own figures.
    let (address, counts) = session_server::start();
    let file = temp_file("agents-session.toml", SESSION);
    let output = shootout()
        .args(["load", "--json", "--agents", "local:2", "--scenario", &file, "-d", "1s", "-c", "4"])
        .arg(format!("http://{address}"))
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", describe(&output));
    let result: shootout_model::LoadResult = serde_json::from_slice(&output.stdout).unwrap();
    let _ = assert_sessions_served(&result, &counts);
    assert_eq!(result.agents.len(), 2);
    assert!(result.agents.iter().all(|a| a.measured.as_ref().is_some_and(|m| m.requests.total > 0)));
}
