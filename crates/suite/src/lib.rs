//! Suite files: what `shootout run SUITE.toml` runs, and what a report later reads back from the results.
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
//! search = { model = "open", precision = "5%", start = 10, ceiling = 100000 }   # optional: instead of the levels,
//!                                  # find each server's capacity under the SLO (model: "open", arrival rates, or
//!                                  # "closed", users; default: the levels' model); `--full` still sweeps
//!
//! [full]                           # the long sweep, taken with `shootout run --full`: any of repeats, duration,
//! connections = [1, 2, 4, 8, 16, 32, 64, 128]   # warmup, connections, rates, requests
//! duration = "30s"
//!
//! [requires]                       # what the machine needs, for scripts/setup-examples.sh (shootout keeps it
//! packages = ["puma"]              # with the suite): Debian's packages, build steps for what Debian lacks,
//! build = ["apps/build-jar.sh"]    # and commands that prove each piece loads, run from the suite's folder
//! check = ["ruby -e 'require \"rack\"'"]
//!
//! [hosts]                          # optional: how the hosts of `host = "ssh:…"` are reached
//! ssh_config = "ssh_config"        # ssh -F, from the suite's folder
//! command = "/opt/shootout/bin/shootout"   # shootout there (default: shootout on the PATH)
//!
//! [load]                           # what each request is (or scenario = "file.toml")
//! path = "/hello"
//! protocol = "http2"               # optional: "http1" (default) or "http2" (h2c on http://, ALPN h2 on https://)
//! streams = 10                     # optional, HTTP/2: requests in flight per connection (default 1)
//!
//! [[server]]
//! name = "puma"
//! command = "puma -b tcp://127.0.0.1:{port} config.ru"   # {port}: a free port chosen by shootout (also $PORT);
//!                                                         # {shootout}: this shootout binary
//! path = "/hello"                  # optional: this server's path, instead of load.path
//! cwd = "apps/rack-hello"
//! env = { RACK_ENV = "production" }          # {port} and {shootout} are filled in here too
//! ready = { path = "/", status = 200, timeout = "30s" }
//! verify = { status = 200, body = "Hello World" }   # also command = "…": must succeed after that request
//! stop = { signal = "INT", grace = "10s", pidfile = "tmp/server.pid" }   # pidfile: signal that PID instead
//! version_command = "puma --version"
//! cpus = "1"                       # default: every CPU but the client's
//! host = "ssh:app1"                # optional: run it on another machine, through OpenSSH (`shootout host` there);
//!                                  # cwd is then a folder there, and url defaults to http://app1:{port}
//! container = { image = "local/app:1", port = 8080 }   # optional: run it in a container (Docker or Podman); its
//!                                  # command is the container's, split on spaces ("" for the image's own), {port}
//!                                  # inside it is 8080, and outside (url, {service.NAME.port}) the published port
//! start_warmup = "60s"             # optional: after each start, load it this long at the first level, unmeasured
//!                                  # (a JVM's JIT), once per start rather than at every level
//! protocol = "http1"               # optional: this server's protocol (and streams), instead of [load]'s; it is
//!                                  # probed and verified over it too
//!
//! [[server]]                       # a parameter sweep: one server per combination, {workers} and {threads}
//! name = "puma -w {workers} -t {threads}"   # filled into name, command, env, setup, teardown, paths
//! command = "puma -w {workers} -t {threads}:{threads} -b tcp://127.0.0.1:{port} config.ru"
//! matrix = { workers = [1, 2, 4], threads = [1, 5] }
//! needs = ["db"]                   # optional: the services it runs beside (default: every one)
//!
//! [[service]]                      # what the servers depend on: started first, sampled, reset for each server
//! name = "db"                      # servers write {service.db.port} in their command, env, setup and url
//! command = "postgres -D data -p {port} -c listen_addresses=127.0.0.1"
//! ready = { command = "pg_isready -h 127.0.0.1 -p {port}", timeout = "30s" }   # default: the port accepts
//! reset = "dropdb -h 127.0.0.1 -p {port} --if-exists bench && createdb -h 127.0.0.1 -p {port} -T seed bench"
//! reset_every = "start"            # before each start of a server (default), or "trial": before every level
//! restart = "suite"                # one for the whole suite (default), or "server": a fresh one per server start
//! stop = { signal = "INT", grace = "10s" }
//! # also as a server has them: cwd, env, port, setup, teardown, version_command, cpus
//! ```
//!
//! Layout:
//! - [`raw`]: the file as written (serde types with places; unknown keys rejected), and its [`raw::Outline`]:
//!   the name, servers, objectives and statistic a report needs, read without touching the file system.
//! - [`matrix`]: servers' parameter sweeps, expanded into one server per combination as the file is read.
//! - [`sweep`]: [`Sweep`], the short, full or smoke run of a suite.
//! - [`validate`]: raw → [`Suite`], every value checked and the first problem reported as `file:line:column`.
//! - [`services`]: the `[[service]]` tables, the servers' `needs`, and the `{service.NAME.port}` placeholders.
//! - [`refusals`]: what no run can be given (names that make no file name of their own, a missing `cwd`, NUL
//!   bytes, bad `env` keys, oversized commands and plans), found by [`validate`] before anything starts; and
//!   [`refusals::file_name`], how a server's name becomes a file name, and [`refusals::results_name`], how a
//!   suite's name begins its results folder's.
//! - this file: the validated [`Suite`] and its parts, which the harness runs.
//!
//! The suite sits below both the harness (which runs it) and the report (which reads it back), so it is parsed
//! in one place.

pub mod matrix;
pub mod raw;
pub mod refusals;
pub mod services;
pub mod sweep;
pub mod validate;

use std::path::PathBuf;
use std::time::Duration;

use nix::sys::signal::Signal;
use serde::Deserialize;
use shootout_model::profile::ProfileSpec;
use shootout_model::run::Statistic;
use shootout_model::slo::Slo;
use shootout_model::Protocol;
use shootout_scenario::FileError;

pub use raw::{outline, MatrixServer, Outline};
pub use refusals::{file_name, results_folder, results_folder_suite, results_name};
pub use services::service_port;
pub use sweep::Sweep;
pub use validate::{parse, parse_sweep, servers_cpus, signal_by_name};

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
    /// The load levels (with a search, its start: what the unit and the smoke run are taken from).
    pub levels: Levels,
    /// The capacity search each server gets instead of the sweep of levels, in the short run.
    pub search: Option<SearchSpec>,
    /// Each server profiled once more after its measured trials: the `[profile]` table, or `run --profile`.
    pub profile: Option<ProfileSpec>,
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
    /// Whether the servers' threads are swept to say where they spent their time (on by default).
    pub thread_states: bool,
    /// How many times a trial that something outside the run disturbed is measured again (its disturbed
    /// measurements kept aside): the suite's `disturbed_again`, else `SHOOTOUT_DISTURBED_AGAIN`, else 1.
    pub disturbed_again: u32,
    /// What each request is.
    pub load: LoadSpec,
    /// The servers.
    pub servers: Vec<ServerSpec>,
    /// The services the servers depend on (a database), in the order they start.
    pub services: Vec<ServiceSpec>,
    /// What the machine needs for this suite.
    pub requires: Requires,
    /// Where the load comes from when not from this process: the `[agents]` table.
    pub agents: Option<Agents>,
    /// How the hosts that servers and services are placed on are reached: the `[hosts]` table.
    pub hosts: Hosts,
}

/// A suite's `[hosts]`: how shootout reaches the machines its servers and services run on (`host =
/// "ssh:HOST"`), through the user's own OpenSSH, as `[agents]` does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hosts {
    /// An ssh configuration file (`ssh -F`), from the suite's folder.
    pub ssh_config: Option<PathBuf>,
    /// The command that runs shootout there (default `shootout`).
    pub command: Option<String>,
    /// How long a link may stay silent before it is taken as lost ([`LINK_TIMEOUT`] unless `link_timeout` says):
    /// a question unanswered that long (beyond its own time, a hook's or a stop's) fails, and a host that hears
    /// nothing from the runner that long stops what it started.
    pub link_timeout: Duration,
}

impl Default for Hosts {
    fn default() -> Hosts {
        Hosts { ssh_config: None, command: None, link_timeout: LINK_TIMEOUT }
    }
}

/// How long a link to a host may stay silent by default: a minute.
pub const LINK_TIMEOUT: Duration = Duration::from_secs(60);

/// Where a server or a service runs.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Place {
    /// On this machine, in a cgroup of its own.
    #[default]
    Here,
    /// On another machine, reached by `ssh TARGET` (`[user@]HOST`), where `shootout host` starts and samples it.
    Ssh {
        /// What ssh is given: `[user@]HOST`.
        target: String,
    },
    /// On this machine, in a container of Docker or Podman.
    Container(Container),
}

/// A container a server or service runs in (`container = { image = "…", port = 8080 }`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Container {
    /// The image (made locally: there may be no registry).
    pub image: String,
    /// The port it listens on inside; published on a free port of 127.0.0.1, which is its `{port}` outside.
    pub port: u16,
    /// `docker` or `podman` (`None`: whichever answers, Docker first).
    pub engine: Option<String>,
    /// More options for `run` (`--memory 512m`).
    pub options: Vec<String>,
}

impl Place {
    /// The container it runs in, if it runs in one.
    pub fn container(&self) -> Option<&Container> {
        match self {
            Place::Container(container) => Some(container),
            _ => None,
        }
    }

    /// The host part of an ssh target (`HOST` of `user@HOST`); none here.
    pub fn host(&self) -> Option<&str> {
        match self {
            Place::Here | Place::Container(_) => None,
            Place::Ssh { target } => Some(target.rsplit_once('@').map_or(target.as_str(), |(_, host)| host)),
        }
    }
}

/// A suite's `[agents]`: each trial's load is shared out to these agents and merged, as with `shootout load
/// --agents`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Agents {
    /// Where they come from (`from = "local:2"`).
    pub spec: shootout_model::AgentSpec,
    /// How they are started and reached.
    pub settings: shootout_model::AgentSettings,
}

impl Suite {
    /// Where each server, then each service, runs.
    pub fn places(&self) -> impl Iterator<Item = &Place> {
        self.servers.iter().map(|s| &s.place).chain(self.services.iter().map(|s| &s.place))
    }

    /// What a level counts: "users", "req/s", or "users/s" for arriving users that each run a session.
    pub fn unit(&self) -> &'static str {
        let sessions = self.load.scenario.as_ref().is_some_and(|s| s.sessions);
        shootout_model::units::level_unit(matches!(self.levels, Levels::Rates(_)), sessions)
    }
}

/// A suite's `search`: find each server's capacity under the SLO (the highest level whose trials meet every
/// objective) by doubling from `start` until a level fails, then bisecting to `precision`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SearchSpec {
    /// Search users (closed model) instead of arrival rates (open).
    pub closed: bool,
    /// Where the bracket stops: its width as a fraction of the capacity (0.05 for 5%).
    pub precision: f64,
    /// The first level tried.
    pub start: f64,
    /// The highest level tried.
    pub ceiling: f64,
    /// No start was given to a search of rates: it climbs by the server's CPU
    /// (`shootout_model::search::Search::climbing_by_cpu`), four times a level while the CPUs stay a quarter busy.
    pub by_cpu: bool,
}

impl SearchSpec {
    /// Its start as the suite's levels: what the unit and a smoke run are taken from.
    pub fn levels(&self) -> Levels {
        if self.closed {
            Levels::Connections(vec![self.start as u32])
        } else {
            Levels::Rates(vec![self.start])
        }
    }

    /// The lowest level it tries: one user, or one request (or arrival) every ten seconds.
    pub fn floor(&self) -> f64 {
        if self.closed {
            1.0
        } else {
            shootout_model::search::FLOOR_RATE
        }
    }
}

/// The sweep's levels.
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
}

/// Trial order within a repeat.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// Each server runs its whole sweep, then the next server, within every repeat.
    Interleaved,
    /// All repeats of one server, then the next server.
    Grouped,
}

/// What a suite needs on the machine (its `[requires]` table), read by `scripts/setup-examples.sh`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Requires {
    /// Debian's packages.
    #[serde(default)]
    pub packages: Vec<String>,
    /// Commands that build what the packages lack, run from the suite's folder.
    #[serde(default)]
    pub build: Vec<String>,
    /// Commands that prove each piece loads, run from the suite's folder.
    #[serde(default)]
    pub check: Vec<String>,
}

/// What each request is.
#[derive(Debug, Clone, Default)]
pub struct LoadSpec {
    /// Path and query.
    pub path: String,
    /// Method (the default of every load run when not given: GET, or POST with a body).
    pub method: Option<String>,
    /// Headers.
    pub headers: Vec<(String, String)>,
    /// Body, when one is sent.
    pub body: Option<String>,
    /// Request timeout (the default of every load run when the suite gives none).
    pub timeout: Duration,
    /// Keep connections alive.
    pub keepalive: bool,
    /// The protocol every server is loaded over, unless it says otherwise.
    pub protocol: Protocol,
    /// Requests in flight per connection over HTTP/2 (1 over HTTP/1.1), unless a server says otherwise.
    pub streams: u32,
    /// Open model: the most connections open at once (the default of every load run when not given).
    pub max_connections: Option<u32>,
    /// Redirects followed in a row (the default of every load run when not given; 0: a 3xx is the response).
    pub max_redirects: Option<u32>,
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
    /// Status that means ready; without one, any answer under 400 (a path that redirects is ready too).
    pub ready_status: Option<u16>,
    /// How long to wait for ready.
    pub ready_timeout: Duration,
    /// Status the verification request must get.
    pub verify_status: Option<u16>,
    /// Text the verification response must contain.
    pub verify_body: Option<String>,
    /// A command that must succeed after the verification request (where the server runs, its placeholders
    /// filled): that the database really did the work, say.
    pub verify_command: Option<String>,
    /// Signal that stops the server.
    pub stop_signal: Signal,
    /// Time between the stop signal and SIGKILL.
    pub stop_grace: Duration,
    /// A file (from `cwd`, `{port}` filled in) holding the PID to signal instead of the launched process, for
    /// servers that daemonize their master (Passenger's watchdog).
    pub stop_pidfile: Option<String>,
    /// Load (at the first level, not measured) right after each start, before the first level's own warm-up:
    /// time for a JIT to compile the hot path, paid once per start rather than at every level.
    pub start_warmup: Duration,
    /// Run before the server starts (in its working directory).
    pub setup: Option<String>,
    /// Run after it stops.
    pub teardown: Option<String>,
    /// How long its setup, teardown and verify command may run before they are killed and the start fails
    /// ([`HOOK_TIMEOUT`] unless it says `hook_timeout`).
    pub hook_timeout: Duration,
    /// Prints the server's version.
    pub version_command: Option<String>,
    /// CPUs to pin the server to (`None`: not pinned).
    pub cpus: Option<String>,
    /// The protocol it is probed, verified and loaded over (the suite's `load.protocol` unless it says
    /// otherwise).
    pub protocol: Protocol,
    /// Requests in flight per connection (HTTP/2's streams; 1 over HTTP/1.1).
    pub streams: u32,
    /// The parameter values it was made with from its server's `matrix` (name, value), in the matrix's order;
    /// empty for a server without one.
    pub params: Vec<(String, String)>,
    /// The services it runs beside, by name, in the suite's order (every service unless it says `needs`).
    pub needs: Vec<String>,
    /// Where it runs.
    pub place: Place,
}

/// How long a hook (`setup`, `teardown`, a service's `reset`, a server's verify command) may run by default: a
/// minute. A hook that hangs (a database that never answers its reset) is killed then, with a line naming it.
pub const HOOK_TIMEOUT: Duration = Duration::from_secs(60);

/// One service the servers depend on (`[[service]]`): a database, a cache. It runs in a cgroup of its own like a
/// server, is sampled during every trial of a server that needs it, and is reset to the same data before each
/// server starts.
#[derive(Debug, Clone)]
pub struct ServiceSpec {
    /// Its name (`db`): servers write `{service.db.port}` for its port.
    pub name: String,
    /// The start command (run by `sh -c`), `{port}` not yet substituted.
    pub command: String,
    /// Working directory.
    pub cwd: PathBuf,
    /// Extra environment.
    pub env: Vec<(String, String)>,
    /// A fixed port, or 0 to pick a free one.
    pub port: u16,
    /// A command that succeeds once it is ready (`pg_isready -h 127.0.0.1 -p {port}`); `None`: its port accepts
    /// a connection.
    pub ready_command: Option<String>,
    /// How long to wait for ready.
    pub ready_timeout: Duration,
    /// Brings its data back to the same state (`dropdb … && createdb -T template …`), before each server's start.
    pub reset: Option<String>,
    /// When `reset` runs.
    pub reset_every: ResetEvery,
    /// When it is started anew.
    pub restart: Restart,
    /// Signal that stops it.
    pub stop_signal: Signal,
    /// Time between the stop signal and SIGKILL.
    pub stop_grace: Duration,
    /// Run before it starts (in its working directory).
    pub setup: Option<String>,
    /// Run after it stops.
    pub teardown: Option<String>,
    /// How long its setup, reset and teardown may run before they are killed and the suite stops
    /// ([`HOOK_TIMEOUT`] unless it says `hook_timeout`).
    pub hook_timeout: Duration,
    /// Prints its version.
    pub version_command: Option<String>,
    /// CPUs to pin it to (`None`: not pinned).
    pub cpus: Option<String>,
    /// Where it runs.
    pub place: Place,
}

/// When a service's `reset` runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResetEvery {
    /// Before each start of a server that needs it (once per server and repeat): the default.
    Start,
    /// Before every trial too, so that each level starts from the same data.
    Trial,
}

/// When a service is started anew.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Restart {
    /// Once for the whole suite (the default), from the first server that needs it to the end.
    Suite,
    /// A fresh one for each start of a server that needs it, stopped with that server.
    Server,
}
