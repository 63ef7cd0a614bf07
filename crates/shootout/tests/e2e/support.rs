//! Helpers for the end-to-end tests: the real `shootout` binary, a `shootout target` process, and
//! purpose-built misbehaving servers. Every server binds port 0 on 127.0.0.1.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use nix::sys::socket::{listen, setsockopt, sockopt, Backlog};
use shootout_model::LoadResult;

/// A command for the `shootout` binary under test. The tests of one binary run side by side, so every trial of a
/// suite sees another test's servers on its CPUs: a disturbed trial is not measured again unless the suite asks
/// (`disturbed_again`), or each would be measured twice.
pub fn shootout() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_shootout"));
    command.env("SHOOTOUT_DISTURBED_AGAIN", "0");
    command
}

/// Runs `command` to its end, its output captured, killed (SIGKILL) at `limit`: a command that once ran without
/// end fails its test, not the test run. The watchdog stops with the command, so no later process is killed.
pub fn output_within(mut command: Command, limit: Duration) -> Output {
    let child = command.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("shootout starts");
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    let (ended, waiting) = std::sync::mpsc::channel::<()>();
    let watchdog = std::thread::spawn(move || {
        if waiting.recv_timeout(limit) == Err(std::sync::mpsc::RecvTimeoutError::Timeout) {
            let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL);
        }
    });
    let output = child.wait_with_output().unwrap();
    drop(ended);
    watchdog.join().unwrap();
    output
}

/// A fresh folder for one test's suite and results, named after its `area` and `name`.
pub fn workdir(area: &str, name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("shootout-{area}-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A TLS server configuration with a fresh self-signed certificate for `name` (TLS 1.2 and 1.3, no ALPN yet), for
/// the purpose-built servers that speak TLS.
pub fn self_signed_tls(name: &str) -> rustls::ServerConfig {
    use rustls::pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};
    let made = rcgen::generate_simple_self_signed(vec![name.to_string()]).unwrap();
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(made.signing_key.serialize_der()));
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![made.cert.der().clone()], key)
        .unwrap()
}

/// Writes `text` to a file named `name` in the temporary folder, marked with this test process; its path.
pub fn temp_file(name: &str, text: &str) -> String {
    let path = std::env::temp_dir().join(format!("shootout-{}-{name}", std::process::id()));
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

/// Writes `suite` to `dir/suite.toml` and runs it with `shootout run`, its results under `dir/results`.
pub fn run_suite(dir: &Path, suite: &str) -> Output {
    std::fs::write(dir.join("suite.toml"), suite).unwrap();
    shootout().arg("run").arg(dir.join("suite.toml")).arg("--results").arg(dir.join("results")).output().unwrap()
}

/// [`run_suite`] with the processes of the run marked `mark` ([`marked`]).
pub fn run_marked(dir: &Path, suite: &str, mark: &str) -> Output {
    std::fs::write(dir.join("suite.toml"), suite).unwrap();
    marked(mark).arg("run").arg(dir.join("suite.toml")).arg("--results").arg(dir.join("results")).output().unwrap()
}

/// Starts `command` (a `shootout`) running `dir/suite.toml`, its results under `dir/results`, its output piped.
pub fn start_run(mut command: Command, dir: &Path) -> Child {
    command
        .arg("run")
        .arg(dir.join("suite.toml"))
        .arg("--results")
        .arg(dir.join("results"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// The one results directory under `dir/results`.
pub fn results(dir: &Path) -> PathBuf {
    std::fs::read_dir(dir.join("results")).unwrap().next().expect("a results directory").unwrap().path()
}

/// The trials saved under `dir`'s results directory.
pub fn trials(dir: &Path) -> Vec<shootout_model::run::TrialRecord> {
    let mut found = Vec::new();
    let mut folders = vec![results(dir).join("trials")];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                folders.push(path);
            } else if path.extension().is_some_and(|e| e == "json") {
                found.push(serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap());
            }
        }
    }
    found
}

/// Runs `shootout load --json ARGS` and parses its result; panics with the output if it failed.
pub fn load(args: &[&str]) -> LoadResult {
    let output = shootout().arg("load").arg("--json").args(args).output().expect("shootout runs");
    assert!(output.status.success(), "shootout load {args:?} failed: {}", describe(&output));
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| panic!("bad JSON ({e}): {}", describe(&output)))
}

/// The JSON Schema of the result document, from the repository.
pub fn schema() -> jsonschema::Validator {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../schema/load-result.v1.json"))
        .expect("the schema file is in the repository");
    let schema: serde_json::Value = serde_json::from_str(&text).expect("the schema is JSON");
    jsonschema::validator_for(&schema).expect("the schema is a valid JSON Schema")
}

/// Panics with every violation when `document` does not follow the schema.
pub fn assert_valid(document: &serde_json::Value) {
    let validator = schema();
    let problems: Vec<String> =
        validator.iter_errors(document).map(|e| format!("{e} at {}", e.instance_path)).collect();
    assert!(problems.is_empty(), "schema violations: {problems:#?}");
}

/// Exit status, stdout and stderr of a finished command, for assertion messages.
pub fn describe(output: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        output.status.code(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// A `shootout target` process on a free port, killed when dropped.
pub struct Target {
    child: Child,
    /// Where it listens.
    pub address: SocketAddr,
    scheme: String,
}

impl Target {
    /// Starts `shootout target --port 0` with one thread and waits for its first line.
    pub fn start() -> Target {
        Target::start_with(&[])
    }

    /// Starts `shootout target --port 0 --threads 1 EXTRA…` and waits for its first line.
    pub fn start_with(extra: &[&str]) -> Target {
        let mut child = shootout()
            .args(["target", "--port", "0", "--threads", "1"])
            .args(extra)
            .stdout(Stdio::piped())
            .spawn()
            .expect("shootout target starts");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        let rest = line.trim().strip_prefix("shootout target listening on ").unwrap_or_default();
        let (scheme, address) = rest.split_once("://").unwrap_or_else(|| panic!("unexpected first line: {line:?}"));
        let address = address
            .split_whitespace()
            .next()
            .unwrap_or_default()
            .trim_end_matches('/')
            .parse()
            .unwrap_or_else(|_| panic!("bad address in {line:?}"));
        Target { child, address, scheme: scheme.to_string() }
    }

    /// Its process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The URL of `path` on this server.
    pub fn url(&self, path: &str) -> String {
        format!("{}://{}{path}", self.scheme, self.address)
    }

    /// Requests the server has answered so far (`/stats`).
    pub fn served(&self) -> u64 {
        let body = if self.scheme == "https" { get_tls(self.address, "/stats") } else { get(self.address, "/stats") };
        let digits: String = body.chars().filter(char::is_ascii_digit).collect();
        digits.parse().unwrap_or_else(|_| panic!("bad /stats body {body:?}"))
    }
}

impl Drop for Target {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A one-shot GET with `Connection: close`, returning the body.
pub fn get(address: SocketAddr, path: &str) -> String {
    let mut stream = TcpStream::connect(address).unwrap();
    write!(stream, "GET {path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n").unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    response.split_once("\r\n\r\n").map(|(_, body)| body.to_string()).unwrap_or_default()
}

/// [`get`] over TLS, accepting any certificate.
pub fn get_tls(address: SocketAddr, path: &str) -> String {
    let config = shootout_engine::tls::client_config(true, None, shootout_model::Protocol::Http1).unwrap();
    let name = rustls::pki_types::ServerName::from(address.ip());
    let session = rustls::ClientConnection::new(config, name).unwrap();
    let mut stream = rustls::StreamOwned::new(session, TcpStream::connect(address).unwrap());
    write!(stream, "GET {path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n").unwrap();
    let mut response = Vec::new();
    let mut chunk = [0u8; 4096];
    // The server may close without close_notify, which rustls reports as an error after the data.
    while let Ok(n) = stream.read(&mut chunk) {
        if n == 0 {
            break;
        }
        response.extend_from_slice(&chunk[..n]);
    }
    let response = String::from_utf8_lossy(&response).into_owned();
    response.split_once("\r\n\r\n").map(|(_, body)| body.to_string()).unwrap_or_default()
}

/// What a misbehaving server does with each connection.
#[derive(Clone, Copy, Debug)]
pub enum Fault {
    /// Reads the request and never answers.
    Silent,
    /// Reads the request, then resets the connection (RST).
    Reset,
    /// Reads the request, then closes the connection (FIN) without answering.
    Close,
    /// Answers with something that is not HTTP.
    Garbage,
    /// Answers 200 with a body delimited by closing the connection (no Content-Length, no chunking).
    CloseDelimited(usize),
    /// Answers a valid 200 carrying this many `Set-Cookie` headers, then closes.
    ManyHeaders(usize),
    /// Answers a valid 302 whose `Location` is this many bytes long, then closes.
    LongHead(usize),
    /// Serves the first N connections (one `Connection: close` answer each), then stops accepting with a full
    /// accept queue, so later connects time out.
    AcceptOnly(usize),
    /// Answers every request on the first N connections that send one (keep-alive), and never answers on any
    /// other: users it holds for good.
    AnswersOnly(usize),
    /// One request at a time, each answered the given time after it was accepted and then closed, from an accept
    /// queue of one: connects beyond it wait out the kernel's SYN retransmits (1 s, 3 s, 7 s).
    OneAtATime(Duration),
}

/// Starts a server with the given fault on a free port; it lives until the test process ends.
pub fn fault_server(fault: Fault) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    if matches!(fault, Fault::AcceptOnly(_) | Fault::OneAtATime(_)) {
        // Re-listening on our own listening socket only shrinks its accept queue.
        listen(&listener, Backlog::new(0).unwrap()).unwrap();
    }
    let served = Arc::new(AtomicUsize::new(0));
    std::thread::spawn(move || {
        let mut accepted = 0;
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            accepted += 1;
            if let Fault::OneAtATime(service) = fault {
                if read_head(&mut stream) {
                    std::thread::sleep(service);
                    serve_answer(&mut stream);
                }
                continue;
            }
            if let Fault::AnswersOnly(n) = fault {
                let served = served.clone();
                std::thread::spawn(move || {
                    // The first request decides: one of the first n connections to send one is answered for good.
                    if read_head(&mut stream) && served.fetch_add(1, Ordering::SeqCst) < n {
                        while serve_answer(&mut stream) && read_head(&mut stream) {}
                    } else {
                        std::thread::sleep(Duration::from_secs(3600));
                    }
                });
                continue;
            }
            if let Fault::AcceptOnly(n) = fault {
                serve_once(stream);
                if accepted >= n {
                    std::thread::sleep(Duration::from_secs(3600));
                }
                continue;
            }
            std::thread::spawn(move || misbehave(stream, fault));
        }
    });
    address
}

/// Reads one request head (up to the blank line); false if the client went away first.
fn read_head(stream: &mut TcpStream) -> bool {
    let mut seen = Vec::new();
    let mut byte = [0u8; 1];
    while !seen.ends_with(b"\r\n\r\n") {
        match stream.read(&mut byte) {
            Ok(1) => seen.push(byte[0]),
            _ => return false,
        }
    }
    true
}

fn serve_once(mut stream: TcpStream) {
    if read_head(&mut stream) {
        let _ = stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok");
    }
}

/// Writes a keep-alive answer; false if the client went away.
fn serve_answer(stream: &mut TcpStream) -> bool {
    stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok").is_ok()
}

fn misbehave(mut stream: TcpStream, fault: Fault) {
    while read_head(&mut stream) {
        match fault {
            Fault::Silent => std::thread::sleep(Duration::from_secs(3600)),
            Fault::Reset => {
                // A zero linger time makes the close send RST.
                let _ = setsockopt(&stream, sockopt::Linger, &nix::libc::linger { l_onoff: 1, l_linger: 0 });
                return;
            }
            Fault::Close => return,
            Fault::Garbage => {
                let _ = stream.write_all(b"HTTP/1.1 abc Nope\r\n\r\n");
                return;
            }
            Fault::CloseDelimited(size) => {
                let _ = stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n");
                let _ = stream.write_all(&vec![b'x'; size]);
                return;
            }
            Fault::ManyHeaders(n) => {
                let cookies: String = (0..n).map(|i| format!("Set-Cookie: c{i}=v{i}; Path=/\r\n")).collect();
                let head = format!("HTTP/1.1 200 OK\r\n{cookies}Content-Length: 2\r\nConnection: close\r\n\r\nok");
                let _ = stream.write_all(head.as_bytes());
                return;
            }
            Fault::LongHead(size) => {
                let location = format!("/{}", "x".repeat(size));
                let head = format!(
                    "HTTP/1.1 302 Found\r\nLocation: {location}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                );
                let _ = stream.write_all(head.as_bytes());
                return;
            }
            Fault::AcceptOnly(_) | Fault::AnswersOnly(_) | Fault::OneAtATime(_) => {
                unreachable!("served by the accept loop")
            }
        }
    }
}

/// Prints each agent's start after the earliest and its clock offset and error (shown with `--nocapture`: the
/// figures the closing notes quote for each launcher).
pub fn show_agents(launcher: &str, result: &shootout_model::LoadResult) {
    for agent in &result.agents {
        let start = agent.measured.as_ref().map_or(f64::NAN, |m| m.start_ms);
        eprintln!(
            "{launcher} agent {} on {}: started {start:.3} ms after the first, clock {:+.3} ms ± {:.3} ms",
            agent.index, agent.host, agent.clock_offset_ms, agent.clock_error_ms
        );
    }
}

/// The merged p50, p90 and p99 are those of the one histogram the result carries, built from every agent's raw
/// histograms, never figures added or averaged.
pub fn assert_percentiles_from_merged_histogram(result: &LoadResult) {
    let merged = shootout_metrics::decode_histogram(&result.latency.histogram).unwrap();
    assert_eq!(merged.len(), result.requests.total, "the histogram holds every request");
    for p in [50.0, 90.0, 99.0] {
        assert_eq!(shootout_metrics::percentile_us(&result.latency, p), shootout_metrics::value_at(&merged, p));
    }
}

/// The arguments of an open-model load against a target started with [`FREEZING`]: 400 requests/s for two
/// whole periods of its freezes, whatever their phase.
pub const OPEN_MODEL_THROUGH_FREEZES: [&str; 8] = ["-R", "400", "-d", "10s", "-t", "2", "--max-connections", "8"];

/// A target that freezes 1 s in every 5 s.
pub const FREEZING: [&str; 4] = ["--stall-every", "5s", "--stall-for", "1s"];

/// At a fixed rate a fifth of the requests fall due during a freeze of [`FREEZING`] and wait for its end,
/// uniformly 0 to 1 s: so the corrected p90 is 500 ms and p99 950 ms, each within 10%.
pub fn assert_freezes_seen_as_they_are(result: &LoadResult) {
    assert_eq!(result.requests.failed, 0, "{:?}", result.errors);
    let p90 = shootout_metrics::percentile_us(&result.latency, 90.0) as f64;
    let p99 = shootout_metrics::percentile_us(&result.latency, 99.0) as f64;
    assert!((p90 - 500_000.0).abs() <= 50_000.0, "corrected p90 {p90} µs, expected 500 ms ± 10%");
    assert!((p99 - 950_000.0).abs() <= 95_000.0, "corrected p99 {p99} µs, expected 950 ms ± 10%");
}

/// The command that runs `shootout` (at `program`) with its wall clock 2 s ahead (libfaketime, with the
/// monotonic clock left alone, as between two real machines), or None when faketime is missing (said, and allowed
/// only outside CI). The library is preloaded by hand rather than through the `faketime` wrapper: the wrapper
/// keeps a semaphore named by its PID in /dev/shm, which outlives an agent stopped with SIGKILL and makes a later
/// wrapper given the same PID exit 1 before the agent starts.
pub fn skewed(program: &str) -> Option<String> {
    let library = std::fs::read_dir("/usr/lib")
        .into_iter()
        .flatten()
        .flatten()
        .map(|dir| dir.path().join("faketime/libfaketime.so.1"))
        .find(|library| library.exists());
    let Some(library) = library else {
        assert!(std::env::var_os("CI").is_none(), "under CI the clock test must run: apt-get install faketime");
        eprintln!("skipping a skewed-clock check: libfaketime is missing (apt-get install faketime)");
        return None;
    };
    Some(format!("env LD_PRELOAD={} FAKETIME=+2s FAKETIME_DONT_FAKE_MONOTONIC=1 {program}", library.display()))
}

/// A run refused for an agent 2 s off: one line naming `agent` and the fix, and nothing sent.
pub fn assert_skew_refused(output: &Output, agent: &str) {
    assert_eq!(output.status.code(), Some(1), "{}", describe(output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    let line = stderr.trim().lines().last().unwrap_or_default();
    assert!(line.starts_with(&format!("shootout: {agent} (")), "{stderr}");
    assert!(line.contains("its clock is 2000.") || line.contains("its clock is 1999."), "{line}");
    assert!(line.ends_with("more than the 50 ms allowed: run chrony or another NTP client there, or raise --max-skew"));
}

/// The environment variable that marks the processes of one test's run.
const MARK: &str = "SHOOTOUT_TEST_RUN";

/// `shootout` with a mark of its own in its environment, which every agent it starts inherits.
pub fn marked(mark: &str) -> Command {
    let mut command = shootout();
    command.env(MARK, mark);
    command
}

/// The processes carrying `mark`, after waiting up to two seconds for them to end.
pub fn left_with(mark: &str) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(2);
    loop {
        let left = running_with(mark);
        if left.is_empty() || Instant::now() >= deadline {
            return left;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The command lines of the live processes carrying `mark` now.
pub fn running_with(mark: &str) -> Vec<String> {
    processes_with(&format!("{MARK}={mark}")).into_iter().map(|(_, command)| command).collect()
}

/// The live processes whose environment holds `entry` (`NAME=value`) now: their pids and command lines.
pub fn processes_with(entry: &str) -> Vec<(i32, String)> {
    let mut found = Vec::new();
    for entry_dir in std::fs::read_dir("/proc").unwrap().flatten() {
        let dir = entry_dir.path();
        let Some(pid) = dir.file_name().and_then(|n| n.to_str()).and_then(|n| n.parse::<i32>().ok()) else { continue };
        let environ = std::fs::read(dir.join("environ")).unwrap_or_default();
        let alive = std::fs::read_to_string(dir.join("stat")).is_ok_and(|s| !s.contains(") Z "));
        if alive && environ.split(|&b| b == 0).any(|v| v == entry.as_bytes()) {
            found.push((pid, std::fs::read_to_string(dir.join("cmdline")).unwrap_or_default().replace('\0', " ")));
        }
    }
    found
}

/// Ctrl-C after `after`: SIGINT to `run`'s process group when it leads one (as a terminal sends it), else to
/// `run` alone. Checks that the run stopped within `within` with exit code 130 and printed a result marked
/// interrupted, and returns that result.
pub fn ctrl_c(run: Child, after: Duration, within: Duration, group: bool) -> LoadResult {
    stop_with(nix::sys::signal::Signal::SIGINT, run, after, within, group)
}

/// `signal` after `after`, to `run`'s process group when `group`, else to `run` alone. Checks that the run
/// stopped within `within` with exit code 128 + the signal's number and printed a result marked interrupted, and
/// returns that result.
pub fn stop_with(
    signal: nix::sys::signal::Signal,
    run: Child,
    after: Duration,
    within: Duration,
    group: bool,
) -> LoadResult {
    use nix::sys::signal::{kill, killpg};
    use nix::unistd::Pid;
    std::thread::sleep(after);
    let pid = Pid::from_raw(run.id() as i32);
    if group { killpg(pid, signal) } else { kill(pid, signal) }.unwrap();
    let stopped = Instant::now();
    let output = run.wait_with_output().unwrap();
    assert!(stopped.elapsed() < within, "{signal} stops the run at once: {:?}", stopped.elapsed());
    assert_eq!(output.status.code(), Some(128 + signal as i32), "{}", describe(&output));
    let result: LoadResult =
        serde_json::from_slice(&output.stdout).unwrap_or_else(|e| panic!("{e}: {}", describe(&output)));
    assert!(result.interrupted);
    result
}

/// True when every one of `programs` is on the PATH; outside CI, a test that needs them is skipped without them.
pub fn installed(programs: &[&str]) -> bool {
    let missing: Vec<&str> = programs.iter().copied().filter(|p| !on_path(p)).collect();
    if !missing.is_empty() {
        assert!(
            std::env::var_os("CI").is_none(),
            "under CI every test must run: scripts/setup-examples.sh or scripts/test.sh installs {missing:?}"
        );
        eprintln!("skipped: {missing:?} not installed (scripts/setup-examples.sh installs them)");
    }
    missing.is_empty()
}

/// True when `program` is on the PATH.
pub fn on_path(program: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(program).is_file()))
}
