//! `shootout load URL`: checks what the user typed, runs the engine with a progress bar, prints the summary and
//! writes the JSON result.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use shootout_engine::{limits, Plan, Progress};
use shootout_model::slo::{parse_condition, Condition};
use shootout_model::{Arrival, LoadOptions, LoadResult, Pacing, Stage, StopCondition};

use super::{duration_arg, Failure};

/// How long a run lasts when neither `-d` nor `-n` is given (as wrk).
const DEFAULT_DURATION: Duration = Duration::from_secs(10);
/// Closed-model connections when `-c` is not given (and there are no stages).
const DEFAULT_CONNECTIONS: u32 = 50;
/// Open-model connection limit when `--max-connections` is not given.
const DEFAULT_MAX_CONNECTIONS: u32 = 1000;

/// Options of `shootout load`.
#[derive(Debug, Args)]
pub struct LoadArgs {
    /// The URL to load (http://host:port/path); with --scenario, the server to send it to (overrides its base).
    #[arg(required_unless_present_any = ["scenario", "urls_file"])]
    url: Option<String>,
    /// Send the requests and sessions of a scenario file (TOML; see "Scenario files" in the README).
    #[arg(short = 's', long, value_name = "FILE", conflicts_with = "urls_file")]
    scenario: Option<PathBuf>,
    /// Send the URLs of a siege urls file, each user walking them in order (siege -f).
    #[arg(short = 'f', long = "file", value_name = "URLS_FILE")]
    urls_file: Option<PathBuf>,
    /// With -f: pick each URL at random instead of in order (siege -i).
    #[arg(long, requires = "urls_file")]
    random: bool,
    /// Closed model: after every response, each user pauses a random time between 0 and this (siege -d).
    #[arg(long, value_parser = duration_arg, conflicts_with = "rate")]
    delay: Option<Duration>,
    /// Concurrent connections, each with one request in flight (closed model) [default: 50; with --stages, the
    /// starting number of users, default 0].
    #[arg(short = 'c', long, conflicts_with = "rate")]
    connections: Option<u32>,
    /// Open model: send this many requests per second whatever the server does, and measure latency from when
    /// each was due [with --stages: the starting rate].
    #[arg(short = 'R', long, allow_negative_numbers = true)]
    rate: Option<f64>,
    /// Open model: how due times are spaced: evenly, or as a Poisson process (random, independent arrivals).
    #[arg(long, value_enum, default_value = "constant", requires = "rate")]
    arrival: ArrivalArg,
    /// Open model: the most connections that may be open at once; more are opened only while all are busy.
    #[arg(long)]
    max_connections: Option<u32>,
    /// Ramp the users (closed) or the rate (with -R) linearly through stages, e.g. 30s:10,1m:100,30s:0: each
    /// stage moves from the previous level to its target over its duration. The run lasts their total.
    #[arg(long, value_parser = stages_arg, conflicts_with_all = ["duration", "requests"])]
    stages: Option<Stages>,
    /// Worker threads (default: the CPUs available).
    #[arg(short = 't', long)]
    threads: Option<u32>,
    /// How long to send, e.g. 30s or 2m (default 10s).
    #[arg(short = 'd', long, value_parser = duration_arg, conflicts_with = "requests")]
    duration: Option<Duration>,
    /// Send exactly this many requests instead of running for a duration.
    #[arg(short = 'n', long)]
    requests: Option<u64>,
    /// A request header, "Name: value"; repeatable.
    #[arg(short = 'H', long = "header", value_name = "HEADER")]
    headers: Vec<String>,
    /// HTTP method (default GET, or POST when a body is given).
    #[arg(short = 'm', long)]
    method: Option<String>,
    /// Request body.
    #[arg(long, conflicts_with = "body_file")]
    body: Option<String>,
    /// Request body, read from a file.
    #[arg(long, value_name = "FILE")]
    body_file: Option<PathBuf>,
    /// Deadline for each request, from when it was due to its last response byte.
    #[arg(long, value_parser = duration_arg, default_value = "30s")]
    timeout: Duration,
    /// Deadline for each TCP connect.
    #[arg(long, value_parser = duration_arg, default_value = "5s")]
    connect_timeout: Duration,
    /// HTTPS: accept any server certificate (for self-signed test servers).
    #[arg(short = 'k', long)]
    insecure: bool,
    /// HTTPS: also trust the CA certificates in this PEM file.
    #[arg(long, value_name = "FILE", conflicts_with = "insecure")]
    cacert: Option<PathBuf>,
    /// Open a new connection for every request (as ab without -k, or siege by default).
    #[arg(long)]
    no_keepalive: bool,
    /// Send load for this long first, without counting it.
    #[arg(long, value_parser = duration_arg, default_value = "0s")]
    warmup: Duration,
    /// Exit with code 3 when this condition holds after the run, e.g. 'p99>200ms', 'errors>1%', 'rps<1000'
    /// (repeatable; metrics: mean, p50, p90, p99, p99.9, max, errors, rps).
    #[arg(long = "fail-if", value_name = "CONDITION", value_parser = condition_arg)]
    fail_if: Vec<Condition>,
    /// Print the JSON result on stdout instead of the summary.
    #[arg(long)]
    json: bool,
    /// Also write the JSON result to this file.
    #[arg(short = 'o', long, value_name = "FILE")]
    output: Option<PathBuf>,
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

/// Runs one load test.
pub fn run(args: LoadArgs) -> Result<(), Failure> {
    let scenario = match (&args.scenario, &args.urls_file) {
        (Some(path), _) => Some(read_scenario(path, args.url.as_deref())?),
        (None, Some(path)) => Some(read_urls(path, args.url.as_deref())?),
        (None, None) => None,
    };
    let (options, body) = validate(&args, scenario.as_ref())?;
    limits::ensure_open_files(options.most_connections()).map_err(|e| Failure::Usage(e.to_string()))?;
    let plan = match scenario {
        Some(scenario) => Plan::with_scenario(options, scenario),
        None => Plan::new(options, &body),
    }
    .map_err(|e| Failure::Usage(e.to_string()))?;

    let stop = Arc::new(AtomicBool::new(false));
    let handler_flag = stop.clone();
    let _ = ctrlc::set_handler(move || {
        if handler_flag.swap(true, Ordering::Relaxed) {
            std::process::exit(130); // a second Ctrl-C: leave at once
        }
    });
    let bar = progress_bar(&plan.options);
    let result = shootout_engine::run(&plan, stop, &mut |p: &Progress| show(&bar, &plan.options, p));
    bar.finish_and_clear();
    let result = result.map_err(|e| Failure::Run(e.into()))?;
    emit(&args, &result)?;
    if result.interrupted {
        return Err(Failure::Interrupted);
    }
    let crossed = shootout_report::figures::holding(&args.fail_if, &result);
    if !crossed.is_empty() {
        let lines: Vec<String> = crossed
            .iter()
            .map(|(c, v)| format!("{} (it was {})", c.text, shootout_report::figures::show(c.metric, *v)))
            .collect();
        return Err(Failure::Threshold(format!("threshold failed: {}", lines.join("; "))));
    }
    Ok(())
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

/// Turns the typed arguments into options, or one line naming what is wrong and how to fix it.
fn validate(
    args: &LoadArgs,
    scenario: Option<&shootout_scenario::Scenario>,
) -> Result<(LoadOptions, Vec<u8>), Failure> {
    let usage = |message: String| Err(Failure::Usage(message));
    let mut stages = args.stages.clone().map(|s| s.0).unwrap_or_default();
    // A scenario's phases bring in new users per second: an open model of sessions, unless -R/--stages say else.
    let phases = scenario.map(|s| s.phases.clone()).unwrap_or_default();
    let arrivals = !phases.is_empty() && args.rate.is_none() && stages.is_empty();
    if arrivals {
        stages = phases;
    }
    if args.connections == Some(0) && stages.is_empty() {
        return usage("-c/--connections 0: at least 1 connection is needed, e.g. -c 50".into());
    }
    if args.max_connections == Some(0) {
        return usage("--max-connections 0: at least 1 connection is needed, e.g. --max-connections 1000".into());
    }
    if let Some(rate) = args.rate {
        if !rate.is_finite() || rate < 0.0 || (rate == 0.0 && stages.is_empty()) {
            return usage(format!("-R/--rate {rate}: give a positive number of requests per second, e.g. -R 1000"));
        }
    }
    let start_level = args.rate.unwrap_or(f64::from(args.connections.unwrap_or(0)));
    if !stages.is_empty() && start_level == 0.0 && stages.iter().all(|s| s.target == 0.0) {
        return usage("--stages: every level is 0, so nothing would be sent: give a stage a target above 0".into());
    }
    if args.threads == Some(0) {
        return usage("-t/--threads 0: at least 1 thread is needed, e.g. -t 2".into());
    }
    if args.requests == Some(0) {
        return usage("-n/--requests 0: send at least 1 request, or use -d for a timed run".into());
    }
    if args.duration.is_some_and(|d| d.is_zero()) {
        return usage("-d/--duration 0s: give the run some time, e.g. -d 10s".into());
    }
    if args.timeout.is_zero() || args.connect_timeout.is_zero() {
        return usage("--timeout and --connect-timeout must be longer than 0s, e.g. --timeout 30s".into());
    }
    let mut headers = Vec::with_capacity(args.headers.len());
    for header in &args.headers {
        match header.split_once(':') {
            Some((name, value)) if !name.trim().is_empty() && httparse_token(name.trim()) => {
                headers.push((name.trim().to_string(), value.trim().to_string()));
            }
            _ => {
                return usage(format!(
                    "-H '{header}': a header is written \"Name: value\", e.g. -H 'Accept: text/html'"
                ))
            }
        }
    }
    let body = match (&args.body, &args.body_file) {
        (Some(text), _) => text.clone().into_bytes(),
        (None, Some(path)) => std::fs::read(path).map_err(|e| {
            Failure::Usage(format!("--body-file {}: cannot read it ({e}); check the path", path.display()))
        })?,
        (None, None) => Vec::new(),
    };
    let method = match &args.method {
        Some(m) if !m.is_empty() && httparse_token(m) => m.to_ascii_uppercase(),
        Some(m) => return usage(format!("-m '{m}': a method is one word such as GET, POST or PUT")),
        None if args.body.is_some() || args.body_file.is_some() => "POST".into(),
        None => "GET".into(),
    };
    let (pacing, connections) = match args.rate {
        _ if arrivals => (
            Pacing::Open { rate: 0.0, arrival: Arrival::Poisson },
            args.max_connections.unwrap_or(DEFAULT_MAX_CONNECTIONS),
        ),
        Some(rate) => {
            let arrival = match args.arrival {
                ArrivalArg::Constant => Arrival::Constant,
                ArrivalArg::Poisson => Arrival::Poisson,
            };
            (Pacing::Open { rate, arrival }, args.max_connections.unwrap_or(DEFAULT_MAX_CONNECTIONS))
        }
        None if stages.is_empty() => (Pacing::Closed, args.connections.unwrap_or(DEFAULT_CONNECTIONS)),
        None => (Pacing::Closed, args.connections.unwrap_or(0)),
    };
    let stop = match (args.requests, args.duration) {
        _ if !stages.is_empty() => StopCondition::Duration(stages.iter().map(|s| s.duration).sum()),
        (Some(n), _) => StopCondition::Requests(n),
        (None, Some(d)) => StopCondition::Duration(d),
        (None, None) => StopCondition::Duration(DEFAULT_DURATION),
    };
    let mut options = LoadOptions {
        url: scenario.map_or_else(|| args.url.clone().unwrap_or_default(), |s| s.base.clone()),
        scenario: args.scenario.as_ref().or(args.urls_file.as_ref()).map(|p| p.display().to_string()),
        delay: args.delay.filter(|d| !d.is_zero()),
        sequential: args.urls_file.is_some() && !args.random,
        sessions: false,
        method,
        headers,
        body_bytes: body.len() as u64,
        connections,
        pacing,
        stages,
        threads: 1,
        stop,
        timeout: args.timeout,
        connect_timeout: args.connect_timeout,
        keepalive: !args.no_keepalive,
        insecure: args.insecure,
        cacert: args.cacert.as_ref().map(|p| p.display().to_string()),
        warmup: args.warmup,
    };
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get()) as u64;
    options.threads = args.threads.map_or(cpus, u64::from).min(options.most_connections().max(1)) as u32;
    Ok((options, body))
}

/// True when `text` is an HTTP token (method or header name).
fn httparse_token(text: &str) -> bool {
    text.bytes().all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// Prints the summary or the JSON, and writes the JSON file when asked.
fn emit(args: &LoadArgs, result: &LoadResult) -> Result<(), Failure> {
    let json = serde_json::to_string_pretty(result).context("cannot encode the result as JSON")?;
    if let Some(path) = &args.output {
        shootout_harness::store::write_atomically(path, json.as_bytes())
            .with_context(|| format!("cannot write the result to {}", path.display()))?;
    }
    if args.json {
        println!("{json}");
    } else {
        print!("{}", shootout_report::text::render_load(result));
    }
    Ok(())
}

fn progress_bar(options: &LoadOptions) -> ProgressBar {
    let (length, template) = match options.stop {
        StopCondition::Duration(d) => {
            ((options.warmup + d).as_millis() as u64, "{spinner} [{elapsed_precise}] {wide_bar} {msg}")
        }
        StopCondition::Requests(n) => (n, "{spinner} [{elapsed_precise}] {wide_bar} {pos}/{len} {msg}"),
    };
    let bar = ProgressBar::new(length);
    bar.set_style(ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_bar()));
    bar
}

fn show(bar: &ProgressBar, options: &LoadOptions, p: &Progress) {
    match options.stop {
        StopCondition::Duration(_) => bar.set_position(p.elapsed.as_millis() as u64),
        StopCondition::Requests(_) => bar.set_position(p.requests),
    }
    if p.measuring {
        bar.set_message(format!("{:.0} req/s, {} errors", p.rate, p.errors));
    } else {
        bar.set_message("warming up");
    }
}
