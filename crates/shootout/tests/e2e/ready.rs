//! The ready probe against servers that get ready wrongly (`tests/fixtures/ready-faults`): one that keeps the
//! connection open after answering `Connection: close` is ready at once (the answer is read by its framing); one
//! that never answers is told so in words, not as an OS error; one listening on a port of its own, or a url whose
//! host does not resolve, fails at once with the fact, not after the whole timeout with advice to raise it, while one
//! that opens another port seconds before its own is waited for; one answering 503 is told its status.

use std::path::Path;
use std::process::Output;
use std::time::{Duration, Instant};

use crate::support::{describe, run_suite, workdir};

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/ready-faults/server.py");

/// A suite of one server, the fixture in `mode`, given `extra` keys; run to its end, timed.
fn run_mode(dir: &Path, mode: &str, extra: &str) -> (Output, Duration) {
    let suite = format!(
        "name = \"ready\"\nrepeats = 1\nduration = \"300ms\"\nwarmup = \"100ms\"\nconnections = [1]\n\
         [load]\npath = \"/\"\n\
         [[server]]\nname = \"{mode}\"\ncommand = \"exec python3 {FIXTURE} {mode} {{port}}\"\n{extra}\n"
    );
    let started = Instant::now();
    let output = run_suite(dir, &suite);
    (output, started.elapsed())
}

#[test]
fn a_server_that_keeps_the_connection_open_after_answering_is_ready_at_once() {
    let dir = workdir("ready", "keep-open");
    let (output, took) = run_mode(&dir, "keep-open", "ready = { timeout = \"20s\" }");
    assert!(output.status.success(), "{}", describe(&output));
    // The verification request alone waited 10 s when the probe read to the end of the connection.
    assert!(took < Duration::from_secs(8), "{took:?}\n{}", describe(&output));
}

#[test]
fn a_server_that_never_answers_is_told_so_in_words() {
    let dir = workdir("ready", "silent");
    let (output, _) = run_mode(&dir, "silent", "ready = { timeout = \"2s\" }");
    assert_eq!(output.status.code(), Some(1), "{}", describe(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("server 'silent' was not ready within 2s"), "{stderr}");
    assert!(stderr.contains("the server took more than 1s to answer"), "{stderr}");
    assert!(!stderr.contains("os error"), "{stderr}");
}

#[test]
fn a_server_listening_elsewhere_or_a_url_that_does_not_resolve_fails_at_once() {
    let dir = workdir("ready", "elsewhere");
    let (output, took) = run_mode(&dir, "elsewhere", "ready = { timeout = \"20s\" }");
    assert_eq!(output.status.code(), Some(1), "{}", describe(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    let line = stderr.lines().find(|l| l.contains("server 'elsewhere' listens on 127.0.0.1:")).unwrap_or_else(|| {
        panic!("where it listens is named: {stderr}");
    });
    assert!(line.contains(", not on {port} = ") && line.contains("put {port} in its command"), "{line}");
    assert!(!stderr.contains("raise ready.timeout"), "{stderr}");
    assert!(took < Duration::from_secs(15), "failed before its 20 s: {took:?}");

    let dir = workdir("ready", "unresolved");
    let url = "url = \"http://no-such-host.invalid:{port}\"\nready = { timeout = \"30s\" }";
    let (output, took) = run_mode(&dir, "keep-open", url);
    assert_eq!(output.status.code(), Some(1), "{}", describe(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("the host of its url http://no-such-host.invalid:"), "{stderr}");
    assert!(stderr.contains("does not resolve") && !stderr.contains("raise ready.timeout"), "{stderr}");
    assert!(took < Duration::from_secs(15), "failed before its 30 s: {took:?}");
}

/// Issue 64, point 7: a server that opened an admin port first and its own 4 s later was failed at 2 s, as one that
/// listens elsewhere only; with the default ready.timeout (30 s) it is waited for.
#[test]
fn a_server_that_opens_another_port_before_its_own_is_waited_for() {
    let dir = workdir("ready", "admin-first");
    let (output, took) = run_mode(&dir, "admin-first", "");
    assert!(output.status.success(), "{}", describe(&output));
    assert!(took > Duration::from_secs(4), "it was measured once its port opened: {took:?}");
}

/// Issue 64, point 11: a server that speaks TLS, probed over http://, was waited for until its ready timeout ran
/// out, and the run then said to raise it.
#[test]
fn a_server_that_answers_in_tls_to_a_plain_url_is_told_to_use_https_at_once() {
    let dir = workdir("ready", "tls-over-http");
    let suite = "name = \"tls\"\nrepeats = 1\nduration = \"300ms\"\nwarmup = \"100ms\"\nconnections = [1]\n\
                 [[server]]\nname = \"tls\"\ncommand = \"{shootout} target --port {port} --tls\"\n\
                 ready = { timeout = \"20s\" }\n";
    let started = Instant::now();
    let output = run_suite(&dir, suite);
    assert_eq!(output.status.code(), Some(1), "{}", describe(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("server 'tls' answers in TLS") && stderr.contains("https://"), "{stderr}");
    assert!(!stderr.contains("raise ready.timeout"), "{stderr}");
    assert!(started.elapsed() < Duration::from_secs(10), "before its 20 s: {:?}", started.elapsed());
}

#[test]
fn a_server_answering_503_is_told_its_status() {
    let dir = workdir("ready", "unavailable");
    let (output, _) = run_mode(&dir, "unavailable", "ready = { timeout = \"1s\" }");
    assert_eq!(output.status.code(), Some(1), "{}", describe(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("with status 503 until its ready.timeout of 1s ran out, and a ready status is below 400"),
        "{stderr}"
    );
    assert!(!stderr.contains("raise ready.timeout"), "{stderr}");
}

/// Issue 64, point 11: an HTTP/3 server whose every answer to the probe is a CONNECTION_CLOSE with an error code
/// waited out its ready timeout and was then told to raise it, as a server slow to start is.
#[test]
fn an_http3_server_that_closes_on_every_probe_is_told_what_it_answered() {
    let server = crate::h3_server::H3Server::start(crate::h3_server::Behaviour::ClosesWithExcessiveLoad);
    let dir = workdir("ready", "h3-closes");
    let suite = format!(
        "name = \"ready\"\nrepeats = 1\nduration = \"300ms\"\nwarmup = \"100ms\"\nconnections = [1]\n\
         [load]\npath = \"/\"\n[[server]]\nname = \"closes\"\nprotocol = \"http3\"\ncommand = \"exec sleep 30\"\n\
         url = \"{}\"\nready = {{ timeout = \"2s\" }}\n",
        server.url("")
    );
    let output = run_suite(&dir, &suite);
    assert_eq!(output.status.code(), Some(1), "{}", describe(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("server 'closes' met the probes of"), "{stderr}");
    assert!(stderr.contains("H3_EXCESSIVE_LOAD"), "{stderr}");
    assert!(!stderr.contains("raise ready.timeout"), "{stderr}");
}

/// Issue 65, point 1: a command that begins with an assignment failed (`exec APP=x …`: "exec: APP=x: not found")
/// and was blamed on the PATH once per level. It runs as written: the server sees APP, is the process shootout
/// started (its parent is no shell), and gets the stop signal itself.
#[test]
fn a_command_that_begins_with_an_assignment_runs_as_written() {
    let dir = workdir("ready", "as-written");
    let suite = format!(
        "name = \"ready\"\nrepeats = 1\nduration = \"300ms\"\nwarmup = \"100ms\"\nconnections = [1]\n\
         [load]\npath = \"/\"\n[[server]]\nname = \"as-written\"\n\
         command = \"APP=x python3 {FIXTURE} as-written {{port}}\"\n"
    );
    let output = run_suite(&dir, &suite);
    assert!(output.status.success(), "{}", describe(&output));
    let log = std::fs::read_to_string(crate::support::results(&dir).join("logs/as-written-r1.log")).unwrap();
    assert!(log.contains("APP=x parent=shootout"), "{log}");
    assert!(log.contains("stopped by SIGTERM"), "{log}");
}

/// Issue 65, point 1: a command that is not found was blamed on the PATH once per level and repeat (36 times in a
/// sweep of three levels and three repeats of four servers). It is said once for the server, quoting the shell's
/// own line, and its other trials are not tried.
#[test]
fn a_command_not_found_is_said_once_quoting_the_shell() {
    let dir = workdir("ready", "not-found");
    let suite = "name = \"ready\"\nrepeats = 3\nduration = \"300ms\"\nwarmup = \"100ms\"\nconnections = [1, 2]\n\
                 [load]\npath = \"/\"\n[[server]]\nname = \"ghost\"\ncommand = \"no-such-server-here {port}\"\n";
    let output = run_suite(&dir, suite);
    assert_eq!(output.status.code(), Some(1), "{}", describe(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    // Once when it happened, once in the run's closing list of what could not be measured (it was 3 and 6).
    let said = stderr.lines().filter(|l| l.contains("its command was not found")).count();
    assert_eq!(said, 2, "{stderr}");
    assert!(stderr.contains("(sh: 1: exec: no-such-server-here: not found)"), "the shell's own line: {stderr}");
    let marked = std::fs::read_dir(crate::support::results(&dir).join("trials/ghost")).unwrap().count();
    assert_eq!(marked, 6, "each trial marked failed, for the report and --resume: {stderr}");

    // A rates run that measured nothing says what its levels count all the same (its table said `users`).
    let dir = workdir("ready", "not-found-rates");
    let output = run_suite(&dir, &suite.replace("connections = [1, 2]", "rates = [50, 100]"));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let header = stdout.lines().next().unwrap_or_default();
    assert!(header.split_whitespace().nth(1) == Some("req/s"), "{stdout}");
}
