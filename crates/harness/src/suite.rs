//! The suite file (TOML) and its validated form, [`Suite`]. Problems are reported as `file:line:column`.
//!
//! ```toml
//! name = "rack hello"
//! repeats = 3                      # default 3
//! duration = "10s"                 # per level, measured (default 10s)
//! warmup = "2s"                    # per level, not counted (default 2s)
//! connections = [1, 2, 4, 8, 16]   # closed-model sweep; or rates = [100, 200, 400] for the open model
//! order = "interleaved"            # servers alternate within each repeat (default); or "grouped"
//! statistic = "median"             # what the verdicts compare; "best" for the best repeat, as classic shootouts
//! slo = ["mean < 1s", "p99 < 200ms", "errors < 1%"]
//! client_cpus = "0"                # where the load generator runs (default: CPU 0 when there are two or more)
//! sample_every = "1s"
//! requests = 2000                  # optional: each level ends after this many measured responses (ab's -n)
//!
//! [full]                           # the long sweep, taken with `shootout run --full`: any of repeats, duration,
//! connections = [1, 2, 4, 8, 16, 32, 64, 128]   # warmup, connections, rates, requests
//! duration = "30s"
//!
//! [load]                           # what each request is (or scenario = "file.toml")
//! path = "/hello"
//!
//! [[server]]
//! name = "puma"
//! command = "puma -b tcp://127.0.0.1:{port} config.ru"   # {port}: a free port chosen by shootout (also $PORT);
//!                                                         # {shootout}: this shootout binary
//! path = "/hello"                  # optional: this server's path, instead of load.path
//! cwd = "apps/rack-hello"
//! env = { RACK_ENV = "production" }          # {port} and {shootout} are filled in here too
//! ready = { path = "/", status = 200, timeout = "30s" }
//! verify = { status = 200, body = "Hello World" }
//! stop = { signal = "INT", grace = "10s", pidfile = "tmp/server.pid" }   # pidfile: signal that PID instead
//! version_command = "puma --version"
//! cpus = "1"                       # default: every CPU but the client's
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use shootout_model::slo::{parse_condition, Slo};
use shootout_report::analysis::Statistic;
use shootout_scenario::{FileError, Locator};
use toml::Spanned;

/// A validated suite.
#[derive(Debug, Clone)]
pub struct Suite {
    /// Its name (for the results directory).
    pub name: String,
    /// Repeats of the whole sweep.
    pub repeats: u32,
    /// Measured time per level.
    pub duration: Duration,
    /// Warm-up per level.
    pub warmup: Duration,
    /// When set, each level ends after this many measured responses instead of after `duration` (ab's `-n`).
    pub requests: Option<u64>,
    /// The load levels.
    pub levels: Levels,
    /// How trials are ordered.
    pub order: Order,
    /// The repeat figure the verdicts use: the median, or the best repeat.
    pub statistic: Statistic,
    /// The service-level objectives.
    pub slo: Vec<Slo>,
    /// CPUs of the load generator (`None`: not pinned).
    pub client_cpus: Option<String>,
    /// Load generator threads.
    pub threads: u32,
    /// Time between two resource samples.
    pub sample_every: Duration,
    /// What each request is.
    pub load: LoadSpec,
    /// The servers.
    pub servers: Vec<ServerSpec>,
}

impl Suite {
    /// What a level counts: "users", "req/s", or "users/s" for arriving users that each run a session.
    pub fn unit(&self) -> &'static str {
        self.levels.unit(self.load.scenario.as_ref().is_some_and(|s| s.sessions))
    }
}

/// Which sweep of a suite to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Sweep {
    /// The suite's own keys: the short run.
    #[default]
    Short,
    /// The suite's `[full]` table over its own keys: the classic, long sweep.
    Full,
    /// A check that every server runs: the first and last level, 2 s each, one repeat.
    Smoke,
}

impl Sweep {
    /// Its name, as stored with a results directory.
    pub fn name(self) -> &'static str {
        match self {
            Sweep::Short => "short",
            Sweep::Full => "full",
            Sweep::Smoke => "smoke",
        }
    }

    /// The sweep of a stored name (`short` for anything unknown).
    pub fn from_name(name: &str) -> Sweep {
        match name.trim() {
            "full" => Sweep::Full,
            "smoke" => Sweep::Smoke,
            _ => Sweep::Short,
        }
    }
}

/// The sweep.
#[derive(Debug, Clone, PartialEq)]
pub enum Levels {
    /// Closed model: connections (users) per level.
    Connections(Vec<u32>),
    /// Open model: requests per second per level.
    Rates(Vec<f64>),
}

impl Levels {
    /// The levels as numbers.
    pub fn values(&self) -> Vec<f64> {
        match self {
            Levels::Connections(c) => c.iter().map(|&c| f64::from(c)).collect(),
            Levels::Rates(r) => r.clone(),
        }
    }

    /// What a level counts: "users", "req/s", or with sessions in the open model "users/s" (arriving users).
    pub fn unit(&self, sessions: bool) -> &'static str {
        shootout_report::units::level_unit(matches!(self, Levels::Rates(_)), sessions)
    }
}

/// Trial order within a repeat.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// Each server runs its whole sweep, then the next server, within every repeat.
    Interleaved,
    /// All repeats of one server, then the next server.
    Grouped,
}

/// What each request is.
#[derive(Debug, Clone, Default)]
pub struct LoadSpec {
    /// Path and query.
    pub path: String,
    /// Method.
    pub method: String,
    /// Headers.
    pub headers: Vec<(String, String)>,
    /// Body.
    pub body: String,
    /// Request timeout.
    pub timeout: Duration,
    /// Keep connections alive.
    pub keepalive: bool,
    /// A scenario file instead of one request, read and validated once when the suite is (so every trial sends
    /// the same scenario, and a bad one stops the suite before any server starts).
    pub scenario: Option<ScenarioFile>,
}

/// A scenario file as the suite read it.
#[derive(Debug, Clone)]
pub struct ScenarioFile {
    /// Where it is (resolved against the suite's folder).
    pub path: PathBuf,
    /// Its text, as read when the suite was.
    pub text: String,
    /// It strings its requests into user sessions.
    pub sessions: bool,
}

impl ScenarioFile {
    /// The scenario, sent to `base` (a server's URL).
    pub fn parse(&self, base: &str) -> Result<shootout_scenario::Scenario, FileError> {
        shootout_scenario::parse(&self.text, &self.path.display().to_string(), Some(base))
    }
}

/// One server under test.
#[derive(Debug, Clone)]
pub struct ServerSpec {
    /// Its name.
    pub name: String,
    /// The start command (run by `sh -c`), `{port}` not yet substituted.
    pub command: String,
    /// Working directory.
    pub cwd: PathBuf,
    /// Extra environment.
    pub env: Vec<(String, String)>,
    /// The base URL (`{port}` not yet substituted).
    pub url: String,
    /// The path loaded on this server (the suite's `load.path` unless the server says otherwise).
    pub path: String,
    /// A fixed port, or 0 to pick a free one.
    pub port: u16,
    /// Path probed until it answers `ready_status`.
    pub ready_path: String,
    /// Status that means ready.
    pub ready_status: u16,
    /// How long to wait for ready.
    pub ready_timeout: Duration,
    /// Status the verification request must get.
    pub verify_status: Option<u16>,
    /// Text the verification response must contain.
    pub verify_body: Option<String>,
    /// Signal that stops the server.
    pub stop_signal: i32,
    /// Time between the stop signal and SIGKILL.
    pub stop_grace: Duration,
    /// A file (from `cwd`, `{port}` filled in) holding the PID to signal instead of the launched process, for
    /// servers that daemonize their master (Passenger's watchdog).
    pub stop_pidfile: Option<String>,
    /// Run before the server starts (in its working directory).
    pub setup: Option<String>,
    /// Run after it stops.
    pub teardown: Option<String>,
    /// Prints the server's version.
    pub version_command: Option<String>,
    /// CPUs to pin the server to (`None`: not pinned).
    pub cpus: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SuiteFile {
    name: Option<String>,
    repeats: Option<Spanned<u32>>,
    duration: Option<Spanned<String>>,
    warmup: Option<Spanned<String>>,
    connections: Option<Spanned<Vec<u32>>>,
    rates: Option<Spanned<Vec<f64>>>,
    order: Option<Spanned<String>>,
    statistic: Option<Spanned<String>>,
    #[serde(default)]
    slo: Vec<Spanned<String>>,
    client_cpus: Option<String>,
    threads: Option<u32>,
    sample_every: Option<Spanned<String>>,
    requests: Option<Spanned<u64>>,
    full: Option<FullDef>,
    #[serde(default)]
    load: LoadDef,
    #[serde(default, rename = "server")]
    servers: Vec<ServerDef>,
}

/// The `[full]` table: the keys of the long sweep.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FullDef {
    repeats: Option<Spanned<u32>>,
    duration: Option<Spanned<String>>,
    warmup: Option<Spanned<String>>,
    connections: Option<Spanned<Vec<u32>>>,
    rates: Option<Spanned<Vec<f64>>>,
    requests: Option<Spanned<u64>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct LoadDef {
    path: Option<String>,
    method: Option<String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    body: Option<String>,
    timeout: Option<Spanned<String>>,
    keepalive: Option<bool>,
    scenario: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ServerDef {
    name: Spanned<String>,
    command: Spanned<String>,
    cwd: Option<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    url: Option<String>,
    path: Option<String>,
    port: Option<u16>,
    ready: Option<ReadyDef>,
    verify: Option<VerifyDef>,
    stop: Option<StopDef>,
    setup: Option<String>,
    teardown: Option<String>,
    version_command: Option<String>,
    cpus: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ReadyDef {
    path: Option<String>,
    status: Option<u16>,
    timeout: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct VerifyDef {
    status: Option<u16>,
    body: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct StopDef {
    signal: Option<Spanned<String>>,
    grace: Option<Spanned<String>>,
    pidfile: Option<String>,
}

/// Parses and validates a suite's short sweep; relative paths are taken from `dir` (the suite file's folder).
pub fn parse(text: &str, file: &str, dir: &Path) -> Result<Suite, FileError> {
    parse_sweep(text, file, dir, Sweep::Short)
}

/// Parses and validates a suite for one of its sweeps.
pub fn parse_sweep(text: &str, file: &str, dir: &Path, sweep: Sweep) -> Result<Suite, FileError> {
    let at = Locator { text, file };
    let mut raw: SuiteFile = at.toml(text, "Suites")?;
    match (sweep, raw.full.take()) {
        (Sweep::Full, None) => {
            return Err(at.at(0, "--full: this suite has no [full] table; add one with the long sweep's connections (or rates), duration and repeats"))
        }
        (Sweep::Full, Some(full)) => {
            if full.connections.is_some() || full.rates.is_some() {
                raw.connections = full.connections;
                raw.rates = full.rates;
            }
            raw.repeats = full.repeats.or(raw.repeats);
            raw.duration = full.duration.or(raw.duration);
            raw.warmup = full.warmup.or(raw.warmup);
            raw.requests = full.requests.or(raw.requests);
        }
        _ => {}
    }
    let duration_of = |value: &Option<Spanned<String>>, default: Duration| match value {
        None => Ok(default),
        Some(v) => shootout_model::units::parse_duration(v.get_ref())
            .map_err(|_| at.span(v.span(), format!("'{}' is not a duration: write it like 10s or 2m", v.get_ref()))),
    };
    let levels = match (&raw.connections, &raw.rates) {
        (Some(c), None) if !c.get_ref().is_empty() && c.get_ref().iter().all(|&n| n > 0) => {
            Levels::Connections(c.get_ref().clone())
        }
        (None, Some(r)) if !r.get_ref().is_empty() && r.get_ref().iter().all(|&n| n.is_finite() && n > 0.0) => {
            Levels::Rates(r.get_ref().clone())
        }
        (Some(c), None) => return Err(at.span(c.span(), "connections needs at least one level, each 1 or more")),
        (None, Some(r)) => return Err(at.span(r.span(), "rates needs at least one level, each above 0")),
        (Some(c), Some(_)) => {
            return Err(at.span(c.span(), "give connections (closed model) or rates (open), not both"))
        }
        (None, None) => return Err(at.at(0, "no load levels: add connections = [1, 2, 4] or rates = [100, 200]")),
    };
    if let Some(n) = raw.requests.as_ref().filter(|n| *n.get_ref() == 0) {
        return Err(at.span(n.span(), "requests must be 1 or more (or left out, to run each level for its duration)"));
    }
    let order = match raw.order.as_ref().map(|o| o.get_ref().as_str()) {
        None | Some("interleaved") => Order::Interleaved,
        Some("grouped") => Order::Grouped,
        Some(other) => {
            let span = raw.order.as_ref().map(Spanned::span).unwrap_or_default();
            return Err(at.span(span, format!("order '{other}': write \"interleaved\" or \"grouped\"")));
        }
    };
    let statistic = match &raw.statistic {
        None => Statistic::Median,
        Some(s) => Statistic::parse(s.get_ref())
            .ok_or_else(|| at.span(s.span(), format!("statistic '{}': write \"median\" or \"best\"", s.get_ref())))?,
    };
    let slo = raw
        .slo
        .iter()
        .map(|s| parse_condition(s.get_ref()).map_err(|m| at.span(s.span(), m)))
        .collect::<Result<_, _>>()?;
    if raw.servers.is_empty() {
        return Err(at.at(text.len(), "no servers: add a [[server]] with a name and a command"));
    }
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let client_cpus = raw.client_cpus.clone().or_else(|| (cpus >= 2).then(|| "0".to_string()));
    let server_cpus =
        client_cpus.as_ref().filter(|c| c.as_str() == "0" && cpus >= 2).map(|_| format!("1-{}", cpus - 1));
    let load = LoadSpec {
        path: raw.load.path.clone().unwrap_or_else(|| "/".into()),
        method: raw.load.method.clone().unwrap_or_else(|| if raw.load.body.is_some() { "POST" } else { "GET" }.into()),
        headers: raw.load.headers.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
        body: raw.load.body.clone().unwrap_or_default(),
        timeout: duration_of(&raw.load.timeout, Duration::from_secs(30))?,
        keepalive: raw.load.keepalive.unwrap_or(true),
        scenario: match &raw.load.scenario {
            None => None,
            Some(name) => {
                let path = dir.join(name.get_ref());
                let text = std::fs::read_to_string(&path).map_err(|e| {
                    at.span(name.span(), format!("scenario {}: cannot read it ({e}); check the path", path.display()))
                })?;
                let mut file = ScenarioFile { path, text, sessions: false };
                // Checked now against a stand-in server; each trial binds it to the real one.
                let scenario =
                    file.parse("http://127.0.0.1:1").map_err(|e| at.span(name.span(), format!("scenario: {e}")))?;
                file.sessions = !scenario.sessions.is_empty();
                Some(file)
            }
        },
    };
    let mut servers: Vec<ServerSpec> = Vec::new();
    for def in &raw.servers {
        let name = def.name.get_ref().clone();
        if servers.iter().any(|s| s.name == name) {
            return Err(at.span(def.name.span(), format!("server '{name}' is listed twice: give each a unique name")));
        }
        if def.command.get_ref().trim().is_empty() {
            return Err(at.span(def.command.span(), format!("server '{name}' has an empty command")));
        }
        let ready = def.ready.as_ref();
        let stop = def.stop.as_ref();
        let signal = match stop.and_then(|s| s.signal.as_ref()) {
            None => nix::sys::signal::Signal::SIGTERM as i32,
            Some(s) => signal_number(s.get_ref()).ok_or_else(|| {
                at.span(s.span(), format!("'{}' is not a signal: write TERM, INT, QUIT or KILL", s.get_ref()))
            })?,
        };
        servers.push(ServerSpec {
            name,
            command: def.command.get_ref().clone(),
            cwd: def.cwd.as_ref().map_or_else(|| dir.to_path_buf(), |c| dir.join(c)),
            env: def.env.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
            url: def.url.clone().unwrap_or_else(|| "http://127.0.0.1:{port}".into()),
            path: def.path.clone().unwrap_or_else(|| load.path.clone()),
            port: def.port.unwrap_or(0),
            ready_path: ready
                .and_then(|r| r.path.clone())
                .or_else(|| def.path.clone())
                .unwrap_or_else(|| load.path.clone()),
            ready_status: ready.and_then(|r| r.status).unwrap_or(200),
            ready_timeout: duration_of(&ready.and_then(|r| r.timeout.clone()), Duration::from_secs(30))?,
            verify_status: def.verify.as_ref().and_then(|v| v.status),
            verify_body: def.verify.as_ref().and_then(|v| v.body.clone()),
            stop_signal: signal,
            stop_grace: duration_of(&stop.and_then(|s| s.grace.clone()), Duration::from_secs(10))?,
            stop_pidfile: stop.and_then(|s| s.pidfile.clone()),
            setup: def.setup.clone(),
            teardown: def.teardown.clone(),
            version_command: def.version_command.clone(),
            cpus: def.cpus.clone().or_else(|| server_cpus.clone()),
        });
    }
    let suite = Suite {
        name: raw
            .name
            .clone()
            .unwrap_or_else(|| Path::new(file).file_stem().map_or("suite".into(), |s| s.to_string_lossy().into())),
        repeats: raw.repeats.as_ref().map_or(3, |r| *r.get_ref()).max(1),
        duration: duration_of(&raw.duration, Duration::from_secs(10))?,
        warmup: duration_of(&raw.warmup, Duration::from_secs(2))?,
        requests: raw.requests.as_ref().map(|n| *n.get_ref()),
        levels,
        order,
        statistic,
        slo,
        threads: raw
            .threads
            .unwrap_or(if client_cpus.as_deref().is_some_and(|c| !c.contains([',', '-'])) { 1 } else { 2 })
            .max(1),
        client_cpus,
        sample_every: duration_of(&raw.sample_every, Duration::from_secs(1))?,
        load,
        servers,
    };
    Ok(if sweep == Sweep::Smoke { smoke(suite) } else { suite })
}

/// The smoke sweep of a suite: its first and last level, 2 s each after at most 1 s of warm-up, once.
fn smoke(suite: Suite) -> Suite {
    fn ends<T: Clone + PartialEq>(values: &[T]) -> Vec<T> {
        let mut out = vec![values[0].clone()];
        if values[values.len() - 1] != values[0] {
            out.push(values[values.len() - 1].clone());
        }
        out
    }
    let levels = match &suite.levels {
        Levels::Connections(c) => Levels::Connections(ends(c)),
        Levels::Rates(r) => Levels::Rates(ends(r)),
    };
    Suite {
        levels,
        repeats: 1,
        duration: Duration::from_secs(2),
        warmup: suite.warmup.min(Duration::from_secs(1)),
        requests: None,
        ..suite
    }
}

/// A signal by name (`TERM`, `SIGINT`, `quit`…).
pub fn signal_number(name: &str) -> Option<i32> {
    use nix::sys::signal::Signal;
    let name = name.trim().to_ascii_uppercase();
    Some(match name.trim_start_matches("SIG") {
        "TERM" => Signal::SIGTERM,
        "INT" => Signal::SIGINT,
        "QUIT" => Signal::SIGQUIT,
        "KILL" => Signal::SIGKILL,
        "HUP" => Signal::SIGHUP,
        "USR1" => Signal::SIGUSR1,
        "USR2" => Signal::SIGUSR2,
        "WINCH" => Signal::SIGWINCH,
        _ => return None,
    } as i32)
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let s = parse(text, "hello.toml", Path::new("/x")).unwrap();
        assert_eq!((s.repeats, s.duration.as_secs(), s.warmup.as_secs()), (2, 3, 1));
        assert_eq!(s.levels, Levels::Connections(vec![1, 4]));
        assert_eq!(s.slo[1].metric, shootout_model::slo::Metric::Percentile(99.0));
        assert_eq!(s.slo[1].limit, 200_000.0);
        assert_eq!(s.slo[2].limit, 1.0);
        assert_eq!(s.servers[0].stop_signal, nix::sys::signal::Signal::SIGINT as i32);
        assert_eq!(s.servers[1].cwd, Path::new("/x/sub"));
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
"#;
        let short = parse(text, "s.toml", Path::new(".")).unwrap();
        assert_eq!((short.repeats, short.duration.as_secs(), short.levels.values().len()), (2, 3, 3));
        assert_eq!(short.servers[0].stop_pidfile.as_deref(), Some("run/{port}.pid"));
        let full = parse_sweep(text, "s.toml", Path::new("."), Sweep::Full).unwrap();
        assert_eq!((full.repeats, full.duration.as_secs(), full.warmup.as_secs()), (3, 30, 2));
        assert_eq!(full.levels, Levels::Connections(vec![1, 2, 4, 8, 16, 32, 64, 128]));
        let smoke = parse_sweep(text, "s.toml", Path::new("."), Sweep::Smoke).unwrap();
        assert_eq!((smoke.repeats, smoke.duration.as_secs(), smoke.warmup.as_secs()), (1, 2, 1));
        assert_eq!(smoke.levels, Levels::Connections(vec![1, 64]));
        let no_full = "connections = [1]\nrequests = 500\n[[server]]\nname = \"a\"\ncommand = \"x\"\n";
        assert_eq!(parse(no_full, "s.toml", Path::new(".")).unwrap().requests, Some(500));
        let e = parse_sweep(no_full, "s.toml", Path::new("."), Sweep::Full).unwrap_err().to_string();
        assert!(e.starts_with("s.toml:1:1: --full: this suite has no [full] table"), "{e}");
        for name in ["short", "full", "smoke"] {
            assert_eq!(Sweep::from_name(name).name(), name);
        }
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
        assert!(e("connections = [1]\n").contains("no servers"));
        assert!(e("[[server]]\nname = \"a\"\ncommand = \"x\"\n").contains("no load levels"));
        let slo = e("connections = [1]\nslo = [\"fast < 1s\"]\n[[server]]\nname = \"a\"\ncommand = \"x\"\n");
        assert!(slo.starts_with("s.toml:2:8: 'fast < 1s' is not a condition"), "{slo}");
        let missing =
            e("connections = [1]\n[load]\nscenario = \"nowhere.toml\"\n[[server]]\nname = \"a\"\ncommand = \"x\"\n");
        assert!(missing.starts_with("s.toml:3:12: scenario ./nowhere.toml: cannot read it"), "{missing}");
        let signal = e("connections = [1]\n[[server]]\nname = \"a\"\ncommand = \"x\"\nstop = { signal = \"NOPE\" }\n");
        assert!(signal.starts_with("s.toml:5:19: 'NOPE' is not a signal"), "{signal}");
    }
}
