//! Redirects followed as a browser, siege or k6 would: the target's `/redirect/N` chain and its sign-in form
//! (`POST /login` answers 303 to `/account`, setting a cookie `/account` asks for), over HTTP/1.1, HTTPS and
//! HTTP/2; each hop a response of its request, the last one checked; too many hops, or a place off the run's
//! server (a Location, or a URL taken from a response), counted as errors and never sent.

use crate::support::{assert_valid, describe, load, run_suite, shootout, temp_file, trials, workdir, Target};

const SIGN_IN: &str = r#"
[[request]]
name = "sign in"
method = "POST"
url = "/login"
body = "user=alice&password=secret"
headers = { Content-Type = "application/x-www-form-urlencoded" }
expect = { status = 200, body = "signed in" }

[[request]]
name = "account"
url = "/account"
expect = { status = 200, body = "signed in" }

[[session]]
name = "visit"
steps = [{ request = "sign in" }, { request = "account" }]
"#;

#[test]
fn a_form_sign_in_that_redirects_runs_through_both_pages_over_https_with_its_cookie() {
    // The sign-in's 303 is followed to /account with the cookie it set, as GET without the form; its check
    // ("signed in") is the last page's. Then the session's own /account carries the cookie too.
    let target = Target::start_with(&["--tls"]);
    let scenario = temp_file("sign-in.toml", &format!("base = \"{}\"\n{SIGN_IN}", target.url("")));
    for http2 in [false, true] {
        let mut args = vec!["-k", "--scenario", &scenario, "-d", "1s", "-c", "2"];
        if http2 {
            args.push("--http2");
        }
        let served_before = target.served();
        let result = load(&args);
        // The server's own count: every response it gave, the 303s included, is one the load counted.
        assert_eq!(target.served() - served_before, result.requests.ok, "http2 {http2}");
        let by_name = |name: &str| result.by_request.iter().find(|r| r.name == name).unwrap().requests;
        let (sign_in, account) = (by_name("sign in"), by_name("account"));
        assert!(account.ok >= 20, "{} sessions reached their account (http2 {http2})", account.ok);
        assert_eq!(result.requests.checks_failed, 0, "every page was signed in: {:?}", result.failed_checks);
        assert_eq!(result.requests.failed + result.requests.http_errors, 0, "{:?}", result.errors);
        // Each sign-in is two responses: the 303 and the account page it led to (a session cut by the end of
        // the run may have had its 303 only).
        let redirects = result.status_counts.get("303").copied().unwrap_or(0);
        assert_eq!(result.requests.redirects, redirects, "every 303 was followed");
        assert!(sign_in.ok.abs_diff(2 * redirects) <= 2, "{sign_in:?} against {redirects} redirects");
        assert!(account.ok.abs_diff(redirects) <= 2, "{account:?} against {redirects} sign-ins");
    }
}

#[test]
fn a_chain_is_followed_up_to_max_redirects_and_one_hop_more_is_an_error() {
    let target = Target::start();
    let result = load(&["-n", "100", "-c", "2", &target.url("/redirect/3")]);
    assert_eq!(result.status_counts.get("302"), Some(&300), "{:?}", result.status_counts);
    assert_eq!(result.status_counts.get("200"), Some(&100));
    assert_eq!((result.requests.redirects, result.requests.ok), (300, 400));
    assert!(result.errors.is_empty(), "{:?}", result.errors);

    let output = shootout()
        .args(["load", "--json", "-n", "50", "-c", "1", "--max-redirects", "2", &target.url("/redirect/3")])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", describe(&output));
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_valid(&json);
    assert_eq!(json["errors"]["too_many_redirects"], 50, "the third hop of each is refused: {}", json["errors"]);
    assert_eq!((json["requests"]["redirects"].as_u64(), json["status_counts"]["302"].as_u64()), (Some(100), Some(150)));
    assert_eq!(json["options"]["max_redirects"], 2);

    let text = shootout().args(["load", "-n", "10", "-c", "1", &target.url("/redirect/2")]).output().unwrap();
    let stdout = String::from_utf8_lossy(&text.stdout);
    assert!(stdout.contains("Redirects:                20 followed"), "{stdout}");
    let off = load(&["-n", "10", "-c", "1", "--max-redirects", "0", &target.url("/redirect/2")]);
    assert_eq!((off.status_counts.get("302"), off.requests.redirects), (Some(&10), 0), "0 follows none");
}

#[test]
fn a_url_taken_from_a_response_is_sent_on_the_server_and_refused_elsewhere_by_name() {
    // `find` keeps its 302 and takes its Location; `next` goes there. `away` holds a URL on another host: it is
    // never sent, and the host is named.
    let target = Target::start();
    let scenario = temp_file(
        "taken-url.toml",
        &format!(
            "base = \"{}\"\n[vars]\naway = \"http://elsewhere.test:81/x\"\n\
             [[request]]\nname = \"find\"\nurl = \"/redirect/1\"\nfollow_redirects = false\nexpect = {{ status = 302 }}\n\
             extract = [{{ var = \"next\", header = \"Location\" }}]\n\
             [[request]]\nname = \"next\"\nurl = \"${{next}}\"\nexpect = {{ status = 200, body = \"Hello\" }}\n\
             [[request]]\nname = \"away\"\nurl = \"${{away}}\"\n\
             [[session]]\nname = \"s\"\nsteps = [{{ request = \"find\" }}, {{ request = \"next\" }}, {{ request = \"away\" }}]\n",
            target.url("")
        ),
    );
    let output = shootout().args(["load", "--json", "--scenario", &scenario, "-d", "1s", "-c", "1"]).output().unwrap();
    assert!(output.status.success(), "{}", describe(&output));
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_valid(&json);
    let ok = |name: &str| {
        json["by_request"].as_array().unwrap().iter().find(|r| r["name"] == name).unwrap()["requests"]["ok"]
            .as_u64()
            .unwrap()
    };
    assert!(ok("next") >= 10 && ok("next").abs_diff(ok("find")) <= 1, "{}", json["by_request"]);
    assert_eq!(json["requests"]["checks_failed"], 0, "{}", json["failed_checks"]);
    assert_eq!(json["requests"]["redirects"], 0, "find does not follow its 302");
    assert!(json["errors"]["off_origin"].as_u64() >= Some(10), "{}", json["errors"]);
    assert_eq!(json["off_origin"], serde_json::json!(["http://elsewhere.test:81"]));
    let served = target.served();
    assert_eq!(served, ok("find") + ok("next"), "nothing went to elsewhere.test: the target had every request");
}

/// A server whose `/start` redirects to `/gone`, which closes the connection without answering; it counts the
/// requests for `/start`.
fn dead_end_server() -> (std::net::SocketAddr, std::sync::Arc<std::sync::atomic::AtomicU64>) {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    let starts = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let counted = starts.clone();
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            let counted = counted.clone();
            std::thread::spawn(move || {
                let mut buffer = Vec::new();
                let mut chunk = [0u8; 4096];
                loop {
                    let mut headers = [httparse::EMPTY_HEADER; 32];
                    let mut request = httparse::Request::new(&mut headers);
                    let Ok(httparse::Status::Complete(n)) = request.parse(&buffer) else {
                        match stream.read(&mut chunk) {
                            Ok(0) | Err(_) => return,
                            Ok(read) => buffer.extend_from_slice(&chunk[..read]),
                        }
                        continue;
                    };
                    if request.path != Some("/start") {
                        return; // the dead end: closed unanswered
                    }
                    counted.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    buffer.drain(..n);
                    let moved = "HTTP/1.1 302 Found\r\nLocation: /gone\r\nContent-Length: 0\r\n\r\n";
                    if stream.write_all(moved.as_bytes()).is_err() {
                        return;
                    }
                }
            });
        }
    });
    (address, starts)
}

#[test]
fn a_hop_that_fails_ends_its_redirect_and_the_next_request_starts_over() {
    let (address, starts) = dead_end_server();
    let result = load(&["-n", "10", "-c", "1", &format!("http://{address}/start")]);
    assert_eq!(result.status_counts.get("302"), Some(&10), "{:?} {:?}", result.status_counts, result.errors);
    assert_eq!(result.errors.get(&shootout_model::ErrorKind::Closed), Some(&10), "{:?}", result.errors);
    assert_eq!(starts.load(std::sync::atomic::Ordering::Relaxed), 10, "each request began at /start again");
}

#[test]
fn a_suites_load_table_sets_the_redirects_followed_and_the_open_models_connections() {
    // max_redirects = 0: each 302 is the answer, never followed; max_connections caps the open model's connections.
    let dir = workdir("redirects", "suite");
    let suite = "name = \"no-follow\"\nrepeats = 1\nduration = \"1s\"\nwarmup = \"200ms\"\nrates = [200]\n\
                 [load]\npath = \"/redirect/1\"\nmax_redirects = 0\nmax_connections = 3\n\
                 [[server]]\nname = \"target\"\ncommand = \"{shootout} target --port {port}\"\n";
    let output = run_suite(&dir, suite);
    assert!(output.status.success(), "{}", describe(&output));
    let trials = trials(&dir);
    assert_eq!(trials.len(), 1);
    let result = &trials[0].result;
    assert_eq!((result.options.max_redirects, result.options.most_connections()), (0, 3));
    assert_eq!(result.requests.redirects, 0);
    assert_eq!(result.status_counts.keys().collect::<Vec<_>>(), ["302"], "nothing was followed to /hello");
    assert!(result.requests.ok >= 150, "{:?}", result.requests);
}
