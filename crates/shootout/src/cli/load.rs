//! `shootout load URL`: checks what the user typed, runs the engine with a progress bar, prints the summary and
//! writes the JSON result.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use shootout_agents::coordinate;
use shootout_agents::launch::Launcher;
use shootout_agents::AgentSpec;
use shootout_engine::{open_files, Plan, Progress};
use shootout_model::settings::{is_token, LoadSettings};
use shootout_model::slo::{parse_condition, Condition};
use shootout_model::{Arrival, IoBackend, LoadOptions, LoadResult, Stage, StopCondition};

use super::agents::AgentOptions;
use super::{duration_arg, Failure};

/// Options of `shootout load`.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("open").args(["rate", "find_rate"]).multiple(true)))]
pub struct LoadArgs {
    /// The URL to load (http://host:port/path); with --scenario, the server to send it to (overrides its base).
    #[arg(required_unless_present_any = ["scenario", "urls_file"])]
    url: Option<String>,
    /// Send the requests and sessions of a scenario file (TOML; every key: docs/reference/scenario.md).
    #[arg(short = 's', long, value_name = "FILE", conflicts_with = "urls_file")]
    scenario: Option<PathBuf>,
    /// Send the URLs of a siege urls file, each user walking them in order (siege -f).
    #[arg(short = 'f', long = "file", value_name = "URLS_FILE")]
    urls_file: Option<PathBuf>,
    /// With -f: pick each URL at random instead of in order (siege -i).
    #[arg(long, requires = "urls_file")]
    random: bool,
    /// Closed model: after every response, each user pauses a random time between 0 and this (siege -d).
    #[arg(long, value_parser = duration_arg, allow_hyphen_values = true, conflicts_with = "rate")]
    delay: Option<Duration>,
    /// Follow up to N redirects in a row (301, 302, 303, 307, 308 to the same server), each hop counted as a
    /// response of the request that led to it; 0 follows none [default: 10, as k6].
    #[arg(long, value_name = "N")]
    max_redirects: Option<u32>,
    /// Concurrent connections, each with one request in flight (closed model) [default: 50; with --stages, the
    /// starting number of users, default 0].
    #[arg(short = 'c', long, conflicts_with = "rate")]
    connections: Option<u32>,
    /// Open model: send this many requests per second whatever the server does, and measure latency from when
    /// each was due [with --stages: the starting rate].
    #[arg(short = 'R', long, allow_negative_numbers = true)]
    pub(super) rate: Option<f64>,
    /// Open model: how due times are spaced: evenly, or as a Poisson process (random, independent arrivals).
    #[arg(long, value_enum, default_value = "constant", requires = "open")]
    arrival: ArrivalArg,
    /// Open model: the most connections that may be open at once; more are opened only while all are busy
    /// [default: 1000].
    #[arg(long)]
    max_connections: Option<u32>,
    /// Ramp the users (closed) or the rate (with -R) linearly through stages, e.g. 30s:10,1m:100,30s:0: each
    /// stage moves from the previous level to its target over its duration. The run lasts their total.
    #[arg(long, value_parser = stages_arg, conflicts_with_all = ["duration", "requests"])]
    stages: Option<Stages>,
    /// Worker threads [default: the CPUs available].
    #[arg(short = 't', long)]
    threads: Option<u32>,
    /// How long to send, e.g. 30s or 2m [default: 10s].
    #[arg(short = 'd', long, value_parser = duration_arg, allow_hyphen_values = true, conflicts_with = "requests")]
    duration: Option<Duration>,
    /// Send exactly this many requests instead of running for a duration.
    #[arg(short = 'n', long)]
    requests: Option<u64>,
    /// A request header, "Name: value"; repeatable.
    #[arg(short = 'H', long = "header", value_name = "HEADER")]
    headers: Vec<String>,
    /// HTTP method [default: GET, or POST when a body is given].
    #[arg(short = 'm', long)]
    method: Option<String>,
    /// Request body.
    #[arg(long, conflicts_with = "body_file")]
    body: Option<String>,
    /// Request body, read from a file.
    #[arg(long, value_name = "FILE")]
    body_file: Option<PathBuf>,
    /// Deadline for each request, from when it was due to its last response byte [default: 30s].
    #[arg(long, value_parser = duration_arg, allow_hyphen_values = true)]
    timeout: Option<Duration>,
    /// Deadline for each TCP connect [default: 5s].
    #[arg(long, value_parser = duration_arg, allow_hyphen_values = true)]
    connect_timeout: Option<Duration>,
    /// HTTPS: accept any server certificate (for self-signed test servers).
    #[arg(short = 'k', long)]
    insecure: bool,
    /// HTTPS: also trust the CA certificates in this PEM file.
    #[arg(long, value_name = "FILE", conflicts_with = "insecure")]
    cacert: Option<PathBuf>,
    /// Open a new connection for every request (as ab without -k, or siege by default).
    #[arg(long)]
    no_keepalive: bool,
    /// What the worker threads do their network I/O with. auto: io_uring for plain HTTP/1.1 where the machine
    /// allows it (one system call per loop turn instead of one per read and write), else epoll; the result says
    /// which was used.
    #[arg(long, value_enum, default_value = "auto")]
    io: IoArg,
    /// Speak HTTP/2: with prior knowledge on http:// (h2c), through ALPN on https:// (the run stops with one
    /// line when the server does not speak it).
    #[arg(long, conflicts_with = "http3")]
    http2: bool,
    /// Speak HTTP/3 over QUIC (https:// only; the certificate must name the host, so use the name it carries,
    /// such as localhost, rather than an IP address).
    #[arg(long)]
    http3: bool,
    /// HTTP/2 and HTTP/3: requests in flight at once on each connection, as h2load's -m [default: 1]. Closed
    /// model: -c connections × --streams users; open model: due requests take a free stream, then a new
    /// connection.
    #[arg(long, value_name = "N")]
    streams: Option<u32>,
    /// Send load for this long first, without counting it [default: 0s].
    #[arg(long, value_parser = duration_arg, allow_hyphen_values = true)]
    warmup: Option<Duration>,
    /// Exit with code 3 when this condition holds after the run, e.g. 'p99>200ms', 'errors>1%', 'rps<1000'
    /// (repeatable; metrics: mean, max, pN for any percentile N above 0 and below 100 such as p50, p98 or p99.9,
    /// errors, checks, rps; a time needs its unit: 200ms, 1s).
    #[arg(long = "fail-if", value_name = "CONDITION", value_parser = condition_arg)]
    fail_if: Vec<Condition>,
    /// Find the highest rate at which every --slo holds: start at -R (default 10/s), double until a probe fails,
    /// then bisect until the bracket is within --precision; each probe is an open-model run of -d (after
    /// --warmup), run after the server is back at rest; the ends of the answer are each run twice, and one whose
    /// percentile stays undecided runs again, up to 12 runs and 60 s. A probe passes when every --slo holds, the
    /// server completed all but --precision of the requests due, and the client was not saturated (which ends the
    /// search: "at least"). Prints every probe and the rate found; --json adds them as `search`.
    #[arg(long, requires = "slo", conflicts_with_all = ["connections", "stages", "requests", "fail_if", "delay"])]
    pub(super) find_rate: bool,
    /// With --find-rate: an objective each probe must meet, e.g. 'mean<1s', 'p99<200ms', 'errors<1%'
    /// (repeatable; the metrics of --fail-if).
    #[arg(long = "slo", value_name = "CONDITION", value_parser = condition_arg, requires = "find_rate")]
    pub(super) slo: Vec<Condition>,
    /// With --find-rate: stop once the highest rate met and the lowest broken are this close, a share of the
    /// first [default: 5%].
    #[arg(long, value_name = "PERCENT", value_parser = super::percent_arg, requires = "find_rate")]
    pub(super) precision: Option<f64>,
    #[command(flatten)]
    agents: AgentOptions,
    #[command(flatten)]
    profile: super::profile::ProfileArgs,
    /// Print the JSON result on stdout instead of the summary.
    #[arg(long)]
    pub(super) json: bool,
    /// Also write the JSON result to this file.
    #[arg(short = 'o', long, value_name = "FILE")]
    pub(super) output: Option<PathBuf>,
}

fn condition_arg(text: &str) -> Result<Condition, String> {
    parse_condition(text)
}

/// The `--arrival` choices.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum ArrivalArg {
    Constant,
    Poisson,
}

/// The `--io` choices.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum IoArg {
    Auto,
    Epoll,
    #[value(name = "io_uring")]
    IoUring,
}

/// The stages of `--stages`, as one value.
#[derive(Debug, Clone)]
struct Stages(Vec<Stage>);

/// Reads `30s:10,1m:100,30s:0`.
fn stages_arg(text: &str) -> Result<Stages, String> {
    let bad = |part: &str| {
        format!("stage '{part}' is not DURATION:TARGET: write stages like 30s:10,1m:100,30s:0 (TARGET is users, or requests/s with -R)")
    };
    text.split(',')
        .map(|part| {
            let (duration, target) = part.trim().split_once(':').ok_or_else(|| bad(part))?;
            let duration = duration_arg(duration).map_err(|_| bad(part))?;
            let target: f64 = target.trim().parse().map_err(|_| bad(part))?;
            if !target.is_finite() || target < 0.0 {
                return Err(bad(part));
            }
            Ok(Stage { duration, target })
        })
        .collect::<Result<_, _>>()
        .map(Stages)
}

impl LoadArgs {
    /// True when the load is to come from agents (`--agents`).
    pub(super) fn agents_given(&self) -> bool {
        self.agents.agents.is_some()
    }
}

/// Runs one load test.
pub fn run(args: LoadArgs) -> Result<(), Failure> {
    let scenario = match (&args.scenario, &args.urls_file) {
        (Some(path), _) => Some(read_scenario(path, args.url.as_deref())?),
        (None, Some(path)) => Some(read_urls(path, args.url.as_deref())?),
        (None, None) => None,
    };
    if args.find_rate {
        return super::find_rate::run(&args, scenario.as_ref());
    }
    // A steady rate must have a request fall due in its window (a ramp's is its stages', a count's has none).
    if let (Some(rate), None, None) = (args.rate, &args.stages, args.requests) {
        let window = args.duration.unwrap_or(shootout_model::settings::DEFAULT_DURATION);
        if let Some(why) = shootout_model::settings::unrunnable_rate(rate, Some(window)) {
            let rate = shootout_model::settings::rate_text(rate);
            return Err(Failure::Usage(format!("-R/--rate {rate}: {why}")));
        }
    }
    let (options, body) = validate(&args, scenario.as_ref(), args.rate)?;
    open_files::ensure(options.most_connections()).map_err(|e| Failure::Usage(e.to_string()))?;
    if let Some(path) = &args.output {
        writable("-o", path)?;
    }
    let plan = plan(options, &body, scenario.as_ref())?;
    if args.agents_given() && !args.profile.pids.is_empty() {
        return Err(Failure::Usage(
            "--profile-pid profiles a load sent from here: leave out --agents, or profile the server by hand".into(),
        ));
    }
    let stop = Arc::new(AtomicBool::new(false));
    super::signals::watch(stop.clone(), || {});
    let profiling = args.profile.check(&stop)?;
    let (result, recorded) = match &args.agents.agents {
        Some(spec) => {
            let launcher = args.agents.launcher(spec)?;
            let work = coordinate::Work { plan: &plan, body: &body, scenario: scenario.as_ref() };
            (with_agents(spec, &launcher, work, &stop)?, None)
        }
        None => {
            let mut shown = Shown::new(&plan.options);
            let mut load = || shootout_engine::run(&plan, stop.clone(), &mut |p: &Progress| shown.show(p));
            let (result, recorded) = match &profiling {
                Some(profiling) => {
                    let (result, recorded) = profiling.around(plan.options.warmup, &stop, load);
                    (result, Some(recorded))
                }
                None => (load(), None),
            };
            shown.finish();
            (result.map_err(|e| Failure::Run(e.into()))?, recorded)
        }
    };
    let mut result = result;
    // The profile goes into the result when it was written; the figures are emitted whatever became of it.
    let profiled = match (&profiling, recorded) {
        (Some(profiling), Some(Ok(recorded))) => Some(profiling.write(&recorded).map(|(lines, profile)| {
            result.profile = Some(profile);
            lines
        })),
        (_, Some(Err(e))) => Some(Err(anyhow::anyhow!("the load's figures stand; its profile failed: {e}").into())),
        _ => None,
    };
    emit(&args, &result)?;
    match profiled {
        // With --json, stdout holds the JSON alone (which has the profile too).
        Some(Ok(lines)) if args.json => tell_raw!("{lines}"),
        Some(Ok(lines)) => say_raw!("{lines}"),
        Some(Err(failure)) => return Err(failure),
        None => {}
    }
    finish(&args, &result)
}

/// What the load's end means for the exit code: agents lost, an interruption, a --fail-if crossed.
fn finish(args: &LoadArgs, result: &LoadResult) -> Result<(), Failure> {
    let lost: Vec<&str> = result.agents.iter().filter_map(|a| a.lost.as_deref()).collect();
    if !lost.is_empty() {
        return Err(Failure::Run(anyhow::anyhow!(
            "{}; the others were stopped, and the result keeps what every agent sent",
            lost.join("; ")
        )));
    }
    if result.interrupted {
        return Err(Failure::Interrupted);
    }
    let unjudged: Vec<&str> =
        shootout_report::statistics::figures::unjudged(&args.fail_if, result).iter().map(|c| c.text.as_str()).collect();
    if !unjudged.is_empty() {
        return Err(Failure::Unjudged(format!(
            "--fail-if could not judge {}: no request was measured",
            unjudged.join(", ")
        )));
    }
    let crossed = shootout_report::statistics::figures::holding(&args.fail_if, result);
    if !crossed.is_empty() {
        let lines: Vec<String> = crossed
            .iter()
            .map(|(c, v)| format!("{} (it was {})", c.text, shootout_report::statistics::figures::show(c, *v)))
            .collect();
        return Err(Failure::Threshold(format!("threshold failed: {}", lines.join("; "))));
    }
    Ok(())
}

/// The engine's plan for `options`: the scenario's requests, or the one request with `body`.
pub(super) fn plan(
    options: LoadOptions,
    body: &[u8],
    scenario: Option<&shootout_scenario::Scenario>,
) -> Result<Plan, Failure> {
    match scenario.cloned() {
        Some(scenario) => Plan::with_scenario(options, scenario),
        None => Plan::new(options, body),
    }
    .map_err(|e| Failure::Usage(e.to_string()))
}

/// Runs the load from the agents `spec` names, each its exact share, and merges what they measured.
fn with_agents(
    spec: &AgentSpec,
    launcher: &Launcher,
    work: coordinate::Work<'_>,
    stop: &AtomicBool,
) -> Result<LoadResult, Failure> {
    let plan = work.plan;
    if u64::from(spec.agents()) > plan.options.most_connections() {
        return Err(Failure::Usage(format!(
            "--agents {spec}: each agent needs at least one connection of the {}: raise -c (or --max-connections)",
            plan.options.most_connections()
        )));
    }
    let (result, agents) =
        coordinate::load(spec, launcher, work, stop, &mut |_| {}).map_err(|e| Failure::Run(e.into()))?;
    for agent in &agents {
        tell!("{}", agent.describe());
    }
    Ok(result)
}

/// Reads and validates a scenario file; its problems are reported as `file:line:column: …`.
fn read_scenario(path: &std::path::Path, base: Option<&str>) -> Result<shootout_scenario::Scenario, Failure> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Failure::Usage(format!("--scenario {}: cannot read it ({e}); check the path", path.display())))?;
    shootout_scenario::parse(&text, &path.display().to_string(), base).map_err(|e| Failure::Usage(e.to_string()))
}

/// Reads a siege urls file; its problems are reported as `file:line:column: …`.
fn read_urls(path: &std::path::Path, base: Option<&str>) -> Result<shootout_scenario::Scenario, Failure> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Failure::Usage(format!("-f {}: cannot read it ({e}); check the path", path.display())))?;
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(std::path::Path::new("."));
    shootout_scenario::parse_urls(&text, &path.display().to_string(), dir, base)
        .map_err(|e| Failure::Usage(e.to_string()))
}

/// Turns the typed arguments into options (through [`LoadSettings`], which holds the defaults and the rules), or
/// one line naming what is wrong and how to fix it; also returns the body read. `rate` is -R's, or the rate a
/// search probes.
pub(super) fn validate(
    args: &LoadArgs,
    scenario: Option<&shootout_scenario::Scenario>,
    rate: Option<f64>,
) -> Result<(LoadOptions, Vec<u8>), Failure> {
    let mut headers = Vec::with_capacity(args.headers.len());
    for header in &args.headers {
        match header.split_once(':') {
            Some((name, value)) if is_token(name.trim()) => {
                headers.push((name.trim().to_string(), value.trim().to_string()));
            }
            _ => {
                return Err(Failure::Usage(format!(
                    "-H '{header}': a header is written \"Name: value\", e.g. -H 'Accept: text/html'"
                )))
            }
        }
    }
    let body = match (&args.body, &args.body_file) {
        (Some(text), _) => Some(text.clone().into_bytes()),
        (None, Some(path)) => Some(read_body(path)?),
        (None, None) => None,
    };
    let settings = LoadSettings {
        url: scenario.map_or_else(|| args.url.clone().unwrap_or_default(), |s| s.base.clone()),
        scenario: args.scenario.as_ref().or(args.urls_file.as_ref()).map(|p| p.display().to_string()),
        phases: scenario.map(|s| s.phases.clone()).unwrap_or_default(),
        connections: args.connections,
        rate,
        arrival: Some(match args.arrival {
            ArrivalArg::Constant => Arrival::Constant,
            ArrivalArg::Poisson => Arrival::Poisson,
        }),
        max_connections: args.max_connections,
        stages: args.stages.clone().map(|s| s.0).unwrap_or_default(),
        threads: args.threads,
        duration: args.duration,
        requests: args.requests,
        method: args.method.clone(),
        headers,
        body_bytes: body.as_ref().map(|b| b.len() as u64),
        timeout: args.timeout,
        connect_timeout: args.connect_timeout,
        no_keepalive: args.no_keepalive,
        io: match args.io {
            IoArg::Auto => None,
            IoArg::Epoll => Some(IoBackend::Epoll),
            IoArg::IoUring => Some(IoBackend::IoUring),
        },
        protocol: match (args.http2, args.http3) {
            (true, _) => Some(shootout_model::Protocol::Http2),
            (_, true) => Some(shootout_model::Protocol::Http3),
            _ => None,
        },
        streams: args.streams,
        insecure: args.insecure,
        cacert: args.cacert.as_ref().map(|p| p.display().to_string()),
        delay: args.delay,
        max_redirects: args.max_redirects,
        sequential: args.urls_file.is_some() && !args.random,
        warmup: args.warmup,
        segment: None,
    };
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get()) as u32;
    let options = settings.build(cpus).map_err(|e| Failure::Usage(e.0))?;
    Ok((options, body.unwrap_or_default()))
}

/// Prints the result (the summary, or the JSON with --json), then writes its JSON to `-o`'s file: a file that
/// cannot be written after all (a disk filled meanwhile) still leaves the result on the terminal.
pub(super) fn emit(args: &LoadArgs, result: &LoadResult) -> Result<(), Failure> {
    let json = serde_json::to_string_pretty(result).context("cannot encode the result as JSON")?;
    if args.json {
        say!("{json}");
        tell_raw!("{}", shootout_report::load::text::render_warnings(result));
    } else {
        say_raw!("{}", shootout_report::load::text::render_load(result));
    }
    if let Some(path) = &args.output {
        shootout_harness::store::write_atomically(path, json.as_bytes())
            .with_context(|| format!("cannot write the result to {} (it is printed above)", path.display()))?;
    }
    Ok(())
}

/// Refuses, before any load, a file given to `flag` (`-o`, `--profile-file`) that cannot be written: its folder made if missing, and the file's
/// temporary twin created and removed, as the write at the end will do.
pub(super) fn writable(flag: &str, path: &Path) -> Result<(), Failure> {
    let refuse = |e: std::io::Error| {
        Failure::Usage(format!(
            "{flag} {}: cannot write there ({e}); choose a file in a folder you can write",
            path.display()
        ))
    };
    if path.is_dir() {
        return Err(refuse(std::io::Error::other("it is a folder")));
    }
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(refuse)?;
    }
    let mut twin = path.as_os_str().to_owned();
    twin.push(".partial");
    std::fs::File::create(&twin).map_err(refuse)?;
    let _ = std::fs::remove_file(&twin);
    Ok(())
}

/// A load's progress: a bar on a terminal; where stderr is not one (a CI log), a plain line every
/// [`PLAIN_EVERY`], so that a log shows a long load going on.
pub(super) struct Shown {
    bar: ProgressBar,
    stop: StopCondition,
    /// Plain lines printed so far.
    lines: u32,
}

/// Time between two plain progress lines.
const PLAIN_EVERY: Duration = Duration::from_secs(10);

impl Shown {
    /// The progress of a load run with `options`.
    pub(super) fn new(options: &LoadOptions) -> Shown {
        let (length, template) = match options.stop {
            StopCondition::Duration(d) => {
                ((options.warmup + d).as_millis() as u64, "{spinner} [{elapsed_precise}] {wide_bar} {msg}")
            }
            StopCondition::Requests(n) => (n, "{spinner} [{elapsed_precise}] {wide_bar} {pos}/{len} {msg}"),
        };
        let bar = ProgressBar::new(length);
        bar.set_style(ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_bar()));
        Shown { bar, stop: options.stop, lines: 0 }
    }

    /// Shows `p`.
    pub(super) fn show(&mut self, p: &Progress) {
        match self.stop {
            StopCondition::Duration(_) => self.bar.set_position(p.elapsed.as_millis() as u64),
            StopCondition::Requests(_) => self.bar.set_position(p.requests),
        }
        let what = if p.measuring {
            format!("{} responses measured, {:.0} req/s in the last second, {} errors", p.requests, p.rate, p.errors)
        } else {
            "warming up".to_string()
        };
        if self.bar.is_hidden() && p.elapsed >= PLAIN_EVERY * (self.lines + 1) {
            self.lines = (p.elapsed.as_secs() / PLAIN_EVERY.as_secs()) as u32;
            tell!("shootout: load: {} s: {what}", p.elapsed.as_secs());
        }
        self.bar.set_message(if p.measuring { format!("{:.0} req/s, {} errors", p.rate, p.errors) } else { what });
    }

    /// Clears the bar.
    pub(super) fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

/// Reads `--body-file`: a regular file (a device such as /dev/zero, or a pipe, would be read without end), that
/// fits in half the memory available, since every byte of a body is held in memory to be sent again and again.
fn read_body(path: &std::path::Path) -> Result<Vec<u8>, Failure> {
    let shown = path.display();
    let metadata = std::fs::metadata(path)
        .map_err(|e| Failure::Usage(format!("--body-file {shown}: cannot read it ({e}); check the path")))?;
    if !metadata.is_file() {
        return Err(Failure::Usage(format!(
            "--body-file {shown}: not a regular file (a device, a pipe or a folder has no end to read to); give a file"
        )));
    }
    let available =
        <procfs::Meminfo as procfs::Current>::current().ok().and_then(|m| m.mem_available).unwrap_or(u64::MAX);
    if metadata.len() > available / 2 {
        return Err(Failure::Usage(format!(
            "--body-file {shown}: {} bytes is more than half the memory available ({available} bytes), and a body is \
             held in memory: give a smaller file",
            metadata.len()
        )));
    }
    std::fs::read(path)
        .map_err(|e| Failure::Usage(format!("--body-file {shown}: cannot read it ({e}); check the path")))
}
