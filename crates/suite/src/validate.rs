//! From the file as written to a [`Suite`]: every duration, level, signal, objective and the scenario file are
//! checked before any server starts, and the first problem is reported as `file:line:column: what is wrong`.

use std::path::Path;
use std::time::Duration;

use nix::sys::signal::Signal;
use shootout_scenario::{FileError, Locator};
use toml::Spanned;

use shootout_model::profile::{ProfileAt, ProfileSpec, Profiler};
use shootout_model::settings::check_headers;
use shootout_model::{AgentSettings, AgentSpec, Protocol};

use crate::raw::{AtDef, ContainerDef, LoadDef, ServerDef, SuiteFile};
use crate::{
    refusals, services, Agents, Container, Hosts, Levels, LoadSpec, Order, Place, ScenarioFile, SearchSpec, ServerSpec,
    Suite, Sweep,
};

/// Parses and validates a suite's short sweep; relative paths are taken from `dir` (the suite file's folder).
pub fn parse(text: &str, file: &str, dir: &Path) -> Result<Suite, FileError> {
    parse_sweep(text, file, dir, Sweep::Short)
}

/// Parses and validates a suite for one of its sweeps.
pub fn parse_sweep(text: &str, file: &str, dir: &Path, sweep: Sweep) -> Result<Suite, FileError> {
    let at = Locator { text, file };
    let mut raw = SuiteFile::read(&at)?;
    sweep.lay_over(&mut raw, &at)?;
    let outline = raw.outline(&at)?;
    let search = search(&raw, &at)?;
    // A search is the short run; a smoke run of a suite that gives no levels checks its servers at its start.
    let levels = match &search {
        Some(s) if sweep == Sweep::Short || (raw.connections.is_none() && raw.rates.is_none()) => s.levels(),
        _ => levels(&raw, &at)?,
    };
    let search = search.filter(|_| sweep == Sweep::Short);
    let profile = profile(&raw, &levels, &at)?;
    if let (Some(_), true) = (&search, outline.slo.is_empty()) {
        let span = raw.search.as_ref().map(Spanned::span).unwrap_or_default();
        return Err(at.span(span, "search finds the highest level that meets the SLO, and this suite has none: add slo = [\"mean < 1s\", \"errors < 1%\"]"));
    }
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
    if raw.servers.is_empty() {
        return Err(at.at(text.len(), "no servers: add a [[server]] with a name and a command"));
    }
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let client_cpus = raw.client_cpus.clone().or_else(|| (cpus >= 2).then(|| "0".to_string()));
    let server_cpus = client_cpus.as_ref().filter(|c| c.as_str() == "0").and_then(|_| servers_cpus(cpus));
    let load = load_spec(&raw.load, &at, dir)?;
    let services =
        services::services(&raw.services, &at, dir, server_cpus.as_ref(), |v, default| duration_or(v, default, &at))?;
    let mut servers: Vec<ServerSpec> = Vec::new();
    for (i, def) in raw.servers.iter().enumerate() {
        let name = def.name.get_ref();
        if servers.iter().any(|s| &s.name == name) {
            return Err(at.span(def.name.span(), format!("server '{name}' is listed twice: give each a unique name")));
        }
        let earlier: Vec<&String> = raw.servers[..i].iter().map(|d| d.name.get_ref()).collect();
        refusals::check_name(&def.into(), &earlier, &at)?;
        refusals::check_launched(&def.into(), &at, dir)?;
        let needs = services::needs(def, &services, &at)?;
        servers.push(ServerSpec { needs, ..server_spec(def, &at, dir, &load, server_cpus.as_ref())? });
    }
    let single_cpu = client_cpus.as_deref().is_some_and(|c| !c.contains([',', '-']));
    if let Some(repeats) = raw.repeats.as_ref().filter(|r| *r.get_ref() == 0) {
        return Err(at.span(repeats.span(), "repeats = 0: give 1 or more repeats of the sweep"));
    }
    let duration = duration_or(&raw.duration, shootout_model::settings::DEFAULT_DURATION, &at)?;
    if let (Some(written), true, None) = (&raw.duration, duration.is_zero(), &raw.requests) {
        let why = format!("duration = \"{}\": give a measured time above 0, or requests = N", written.get_ref());
        return Err(at.span(written.span(), why));
    }
    if let (Levels::Rates(rates), Some(written)) = (&levels, &raw.rates) {
        let window = raw.requests.is_none().then_some(duration);
        if let Some(why) = rates.iter().find_map(|&rate| shootout_model::settings::unrunnable_rate(rate, window)) {
            return Err(at.span(written.span(), format!("rates: {why}")));
        }
    }
    let suite = Suite {
        name: outline.name,
        repeats: raw.repeats.as_ref().map_or(3, |r| *r.get_ref()),
        duration,
        warmup: duration_or(&raw.warmup, Duration::from_secs(2), &at)?,
        requests: raw.requests.as_ref().map(|n| *n.get_ref()),
        levels,
        search,
        profile,
        order,
        statistic: outline.statistic,
        slo: outline.slo,
        threads: raw.threads.unwrap_or(if single_cpu { 1 } else { 2 }).max(1),
        client_cpus,
        sample_every: duration_or(&raw.sample_every, Duration::from_secs(1), &at)?,
        thread_states: raw.thread_states.unwrap_or(true),
        disturbed_again: raw.disturbed_again.unwrap_or_else(disturbed_again_default),
        load,
        servers,
        services,
        requires: raw.requires.clone(),
        agents: None,
        hosts: match raw.hosts.as_ref() {
            Some(h) => Hosts {
                ssh_config: h.ssh_config.as_ref().map(|f| dir.join(f)),
                command: h.command.clone(),
                link_timeout: duration_or(&h.link_timeout, crate::LINK_TIMEOUT, &at)?,
            },
            None => Hosts::default(),
        },
    };
    let agents = agents(&raw, &at, dir, &suite)?;
    let suite = sweep.cut(Suite { agents, ..suite });
    let place = raw.repeats.as_ref().map_or(0, |r| r.span().start);
    refusals::check_trials(suite.servers.len(), suite.levels.values().len(), suite.repeats, place, &at)?;
    Ok(suite)
}

/// Where a suite puts its servers by default on a machine of `available` CPUs: on every CPU but the client's CPU 0
/// (`"1"`, `"1-3"`); none on one CPU, where nothing is pinned and the client and the servers share it.
pub fn servers_cpus(available: usize) -> Option<String> {
    match available {
        0 | 1 => None,
        2 => Some("1".to_string()),
        _ => Some(format!("1-{}", available - 1)),
    }
}

/// The `[agents]` table, checked against the rest of the suite: each agent needs a connection at every level.
fn agents(raw: &SuiteFile, at: &Locator<'_>, dir: &Path, suite: &Suite) -> Result<Option<Agents>, FileError> {
    let Some(def) = &raw.agents else { return Ok(None) };
    let from = &def.from;
    let spec = AgentSpec::parse(from.get_ref()).map_err(|e| {
        at.span(from.span(), e.why.clone() + ": write from = \"local:N\", \"ssh:HOST,HOST\", \"slurm:N\" or \"k8s:N\"")
    })?;
    let listen = match &def.listen {
        None => None,
        Some(l) => Some(l.get_ref().parse().map_err(|_| {
            at.span(l.span(), format!("listen '{}': write an address and port, like \"0.0.0.0:7070\"", l.get_ref()))
        })?),
    };
    let settings = AgentSettings {
        command: def.command.clone(),
        ssh_config: def.ssh_config.as_ref().map(|f| dir.join(f)),
        listen,
        address: def.address.clone(),
        image: def.image.clone(),
        timeout: duration(&def.timeout, at)?,
        max_skew: duration_or(&def.max_skew, shootout_model::agents::DEFAULT_MAX_SKEW, at)?,
    };
    if let Some(refusal) = settings.refusal(&spec, |name| format!("{name} =")) {
        return Err(at.span(from.span(), refusal));
    }
    if let Levels::Connections(levels) = &suite.levels {
        if let Some(level) = levels.iter().find(|&&c| c < spec.agents()) {
            return Err(at.span(from.span(), format!(
                "{spec} needs at least {} connections at every level, and one level has {level}: raise it or use fewer agents",
                spec.agents()
            )));
        }
    }
    Ok(Some(Agents { spec, settings }))
}

/// A duration key, or its default.
fn duration_or(value: &Option<Spanned<String>>, default: Duration, at: &Locator<'_>) -> Result<Duration, FileError> {
    Ok(duration(value, at)?.unwrap_or(default))
}

/// A duration key, if given.
fn duration(value: &Option<Spanned<String>>, at: &Locator<'_>) -> Result<Option<Duration>, FileError> {
    value
        .as_ref()
        .map(|v| shootout_model::units::parse_duration(v.get_ref()).map_err(|e| at.span(v.span(), e.to_string())))
        .transpose()
}

/// The `search` table, checked: its model (by default the levels' own: closed for `connections`), a precision
/// below 100%, and a start and ceiling within the search's bounds (whole users in the closed model).
pub(crate) fn search(raw: &SuiteFile, at: &Locator<'_>) -> Result<Option<SearchSpec>, FileError> {
    use shootout_model::search::{CEILING_RATE, CEILING_USERS, FLOOR_RATE, PRECISION, START_RATE};
    let Some(def) = &raw.search else { return Ok(None) };
    let closed = match def.get_ref().model.as_ref() {
        None => raw.connections.is_some(),
        Some(m) if m.get_ref() == "open" => false,
        Some(m) if m.get_ref() == "closed" => true,
        Some(m) => {
            let why = format!("search model '{}': write \"open\" (arrival rates) or \"closed\" (users)", m.get_ref());
            return Err(at.span(m.span(), why));
        }
    };
    let def = def.get_ref();
    let precision = match &def.precision {
        None => PRECISION,
        Some(p) => match shootout_model::units::parse_percent(p.get_ref()) {
            Ok(share) if share > 0.0 => share,
            Ok(_) => {
                return Err(at.span(p.span(), "search precision 0%: a bracket of no width is never reached; write 5%"))
            }
            Err(why) => return Err(at.span(p.span(), format!("search precision {why}"))),
        },
    };
    let (floor, highest, unit) =
        if closed { (1.0, CEILING_USERS, "users") } else { (FLOOR_RATE, CEILING_RATE, "per second") };
    let level = |key: &Option<Spanned<f64>>, default: f64, name: &str| match key {
        None => Ok(default),
        Some(v) if (floor..=highest).contains(v.get_ref()) && (!closed || v.get_ref().fract() == 0.0) => {
            Ok(*v.get_ref())
        }
        Some(v) => {
            let whole = if closed { "a whole number " } else { "" };
            let why = format!("search {name} {}: write {whole}from {floor} to {highest} ({unit})", v.get_ref());
            Err(at.span(v.span(), why))
        }
    };
    let start = level(&def.start, if closed { 1.0 } else { START_RATE }, "start")?;
    let ceiling = level(&def.ceiling, highest, "ceiling")?;
    if ceiling < start {
        let span = def.ceiling.as_ref().map(Spanned::span).unwrap_or_default();
        return Err(at.span(span, format!("search ceiling {ceiling} is under its start {start}: raise it")));
    }
    Ok(Some(SearchSpec { closed, precision, start, ceiling, by_cpu: !closed && def.start.is_none() }))
}

/// The `[profile]` table, checked: where (`capacity`, `knee`, or a level of the suite's model: whole users in the
/// closed one), for how long, with which profiler.
fn profile(raw: &SuiteFile, levels: &Levels, at: &Locator<'_>) -> Result<Option<ProfileSpec>, FileError> {
    let Some(def) = &raw.profile else { return Ok(None) };
    let def = def.get_ref();
    let default = ProfileSpec::default();
    let closed = matches!(levels, Levels::Connections(_));
    let place = match &def.at {
        None => default.at,
        Some(a) => match a.get_ref() {
            AtDef::Name(name) if name == "capacity" => ProfileAt::Capacity,
            AtDef::Name(name) if name == "knee" => ProfileAt::Knee,
            AtDef::Level(level) if *level > 0.0 && level.is_finite() && (!closed || level.fract() == 0.0) => {
                ProfileAt::Level(*level)
            }
            other => {
                let given = match other {
                    AtDef::Name(name) => format!("'{name}'"),
                    AtDef::Level(level) => level.to_string(),
                };
                let unit = if closed { "a whole number of users" } else { "a rate above 0" };
                return Err(at.span(a.span(), format!("profile at {given}: write \"capacity\", \"knee\" or {unit}")));
            }
        },
    };
    let duration = duration_or(&def.duration, default.duration, at)?;
    if duration.is_zero() {
        let span = def.duration.as_ref().map(Spanned::span).unwrap_or_default();
        return Err(at.span(span, "profile duration 0s records nothing: write 10s"));
    }
    let profiler = match &def.profiler {
        None => None,
        Some(p) => Profiler::parse(p.get_ref()).map_err(|why| at.span(p.span(), why))?,
    };
    Ok(Some(ProfileSpec { at: place, duration, profiler }))
}

/// The sweep: connections (closed model) or rates (open), never both, each level positive.
fn levels(raw: &SuiteFile, at: &Locator<'_>) -> Result<Levels, FileError> {
    match (&raw.connections, &raw.rates) {
        (Some(c), None) if !c.get_ref().is_empty() && c.get_ref().iter().all(|&n| n > 0) => {
            Ok(Levels::Connections(c.get_ref().clone()))
        }
        (None, Some(r)) if !r.get_ref().is_empty() && r.get_ref().iter().all(|&n| n.is_finite() && n > 0.0) => {
            Ok(Levels::Rates(r.get_ref().clone()))
        }
        (Some(c), None) => Err(at.span(c.span(), "connections needs at least one level, each 1 or more")),
        (None, Some(r)) => Err(at.span(r.span(), "rates needs at least one level, each above 0")),
        (Some(c), Some(_)) => Err(at.span(c.span(), "give connections (closed model) or rates (open), not both")),
        (None, None) => Err(at.at(0, "no load levels: add connections = [1, 2, 4] or rates = [100, 200]")),
    }
}

/// The `[load]` table, with its scenario file read and checked now.
fn load_spec(def: &LoadDef, at: &Locator<'_>, dir: &Path) -> Result<LoadSpec, FileError> {
    let scenario = match &def.scenario {
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
    };
    let keepalive = def.keepalive.unwrap_or(true);
    let (protocol, streams) = protocol(&def.protocol, &def.streams, (Protocol::Http1, 1), keepalive, "", at)?;
    let headers: Vec<(String, String)> = def
        .headers
        .as_ref()
        .map(|h| h.get_ref().iter().map(|(k, v)| (k.clone(), v.clone())).collect())
        .unwrap_or_default();
    if let Some(spanned) = &def.headers {
        check_headers(&headers, protocol).map_err(|e| at.span(spanned.span(), format!("headers: {e}")))?;
    }
    if let Some(zero) = def.max_connections.as_ref().filter(|n| *n.get_ref() == 0) {
        let default = shootout_model::settings::DEFAULT_MAX_CONNECTIONS;
        let why =
            format!("max_connections must be 1 or more (the open model's most connections at once; default {default})");
        return Err(at.span(zero.span(), why));
    }
    Ok(LoadSpec {
        path: def.path.clone().unwrap_or_else(|| "/".into()),
        method: def.method.clone(),
        headers,
        body: def.body.clone(),
        timeout: duration_or(&def.timeout, shootout_model::settings::DEFAULT_TIMEOUT, at)?,
        keepalive,
        protocol,
        streams,
        max_connections: def.max_connections.as_ref().map(|n| *n.get_ref()),
        max_redirects: def.max_redirects,
        scenario,
    })
}

/// One `[[server]]`, with the suite's defaults filled in.
fn server_spec(
    def: &ServerDef,
    at: &Locator<'_>,
    dir: &Path,
    load: &LoadSpec,
    server_cpus: Option<&String>,
) -> Result<ServerSpec, FileError> {
    let name = def.name.get_ref().clone();
    let place = place(&def.host, &def.container, &def.command, &def.name, &format!("server '{name}'"), at)?;
    let ready = def.ready.as_ref();
    let stop = def.stop.as_ref();
    let (protocol, streams) = protocol(
        &def.protocol,
        &def.streams,
        (load.protocol, load.streams),
        load.keepalive,
        &format!("server '{name}': "),
        at,
    )?;
    check_headers(&load.headers, protocol)
        .map_err(|e| at.span(def.name.span(), format!("server '{name}' ([load] headers): {e}")))?;
    let stop_signal = match stop.and_then(|s| s.signal.as_ref()) {
        None => Signal::SIGTERM,
        Some(s) => signal_by_name(s.get_ref()).ok_or_else(|| {
            at.span(s.span(), format!("'{}' is not a signal: write TERM, INT, QUIT or KILL", s.get_ref()))
        })?,
    };
    Ok(ServerSpec {
        name,
        command: def.command.get_ref().clone(),
        cwd: cwd(&def.cwd, &place, dir),
        env: def.env.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
        url: def.url.clone().unwrap_or_else(|| format!("http://{}:{{port}}", place.host().unwrap_or("127.0.0.1"))),
        path: def.path.clone().unwrap_or_else(|| load.path.clone()),
        port: def.port.unwrap_or(0),
        ready_path: ready
            .and_then(|r| r.path.clone())
            .or_else(|| def.path.clone())
            .unwrap_or_else(|| load.path.clone()),
        ready_status: ready.and_then(|r| r.status),
        ready_timeout: duration_or(&ready.and_then(|r| r.timeout.clone()), Duration::from_secs(30), at)?,
        verify_status: def.verify.as_ref().and_then(|v| v.status),
        verify_body: def.verify.as_ref().and_then(|v| v.body.clone()),
        verify_command: def.verify.as_ref().and_then(|v| v.command.clone()),
        stop_signal,
        stop_grace: duration_or(&stop.and_then(|s| s.grace.clone()), Duration::from_secs(10), at)?,
        stop_pidfile: stop.and_then(|s| s.pidfile.clone()),
        start_warmup: duration_or(&def.start_warmup, Duration::ZERO, at)?,
        setup: def.setup.clone(),
        teardown: def.teardown.clone(),
        hook_timeout: duration_or(&def.hook_timeout, crate::HOOK_TIMEOUT, at)?,
        version_command: def.version_command.clone(),
        // Another host's CPUs are its own: the split of this machine's between client and servers is not theirs.
        cpus: def.cpus.clone().or_else(|| server_cpus.filter(|_| !matches!(place, Place::Ssh { .. })).cloned()),
        protocol,
        streams,
        params: def.params.clone(),
        needs: Vec::new(),
        place,
    })
}

/// A `protocol` and `streams` pair (of `[load]`, or of a server that `whose` names), each falling back on
/// `inherited`: streams are inherited only along with the protocol they were given for. HTTP/2 needs `keepalive`.
fn protocol(
    protocol: &Option<Spanned<String>>,
    streams: &Option<Spanned<u32>>,
    inherited: (Protocol, u32),
    keepalive: bool,
    whose: &str,
    at: &Locator<'_>,
) -> Result<(Protocol, u32), FileError> {
    let chosen = match protocol {
        None => inherited.0,
        Some(p) => match p.get_ref().as_str() {
            "http1" => Protocol::Http1,
            "http2" => Protocol::Http2,
            "http3" => Protocol::Http3,
            other => {
                return Err(at.span(p.span(), format!("protocol '{other}': write \"http1\", \"http2\" or \"http3\"")));
            }
        },
    };
    let count = match streams {
        None if chosen == inherited.0 => inherited.1,
        None => 1,
        Some(n) if *n.get_ref() == 0 => {
            return Err(at.span(n.span(), "streams must be 1 or more (the requests in flight per connection)"));
        }
        Some(n) if *n.get_ref() > 1 && !chosen.multiplexed() => {
            return Err(at.span(
                n.span(),
                format!(
                    "streams = {}: only HTTP/2 and HTTP/3 carry several requests at once on a connection: add \
                     protocol = \"http2\" or \"http3\"",
                    n.get_ref()
                ),
            ));
        }
        Some(n) => *n.get_ref(),
    };
    if chosen.multiplexed() && !keepalive {
        let span = protocol.as_ref().map(Spanned::span).unwrap_or_default();
        let label = chosen.label();
        return Err(at.span(
            span,
            format!("{whose}{label} keeps its connections open, and [load] says keepalive = false: drop one of them"),
        ));
    }
    Ok((chosen, count))
}

/// Where a server or service (`whose`: "server 'puma'") runs: here, `host = "ssh:[user@]HOST"`, or in a
/// `container`; its `command` may be empty only in a container (which then runs its image's own).
pub(crate) fn place(
    host: &Option<Spanned<String>>,
    container: &Option<Spanned<ContainerDef>>,
    command: &Spanned<String>,
    name: &Spanned<String>,
    whose: &str,
    at: &Locator<'_>,
) -> Result<Place, FileError> {
    if container.is_none() && command.get_ref().trim().is_empty() {
        if command.span().is_empty() {
            return Err(at.span(
                name.span(),
                format!("{whose} has no command: give the one that starts it, like command = \"puma -b tcp://127.0.0.1:{{port}}\""),
            ));
        }
        return Err(at.span(command.span(), format!("{whose} has an empty command")));
    }
    if let Some(container) = container {
        let def = container.get_ref();
        if host.is_some() {
            return Err(at.span(container.span(), "give host or container, not both: a container runs on this machine"));
        }
        if def.image.trim().is_empty() || def.port == 0 {
            return Err(at.span(container.span(), "container needs an image and the port it listens on inside, like { image = \"local/app:1\", port = 8080 }"));
        }
        if let Some(engine) = def.engine.as_deref().filter(|e| !matches!(*e, "docker" | "podman")) {
            return Err(
                at.span(container.span(), format!("container engine '{engine}': write \"docker\" or \"podman\""))
            );
        }
        return Ok(Place::Container(Container {
            image: def.image.clone(),
            port: def.port,
            engine: def.engine.clone(),
            options: def.options.clone(),
        }));
    }
    let Some(host) = host else { return Ok(Place::Here) };
    let text = host.get_ref();
    match text.strip_prefix("ssh:") {
        Some(target) if !target.is_empty() && !target.starts_with('-') && !target.contains(char::is_whitespace) => {
            Ok(Place::Ssh { target: target.to_string() })
        }
        _ => Err(at.span(
            host.span(),
            format!(
                "host '{text}': write \"ssh:HOST\" or \"ssh:user@HOST\" (a host your ssh reaches without a password)"
            ),
        )),
    }
}

/// The working directory of a server or service: from the suite's folder here; as written on another host
/// (from the login folder there when relative).
pub(crate) fn cwd(cwd: &Option<String>, place: &Place, dir: &Path) -> std::path::PathBuf {
    match (cwd, place) {
        (None, Place::Here | Place::Container(_)) => dir.to_path_buf(),
        (Some(c), Place::Here | Place::Container(_)) => dir.join(c),
        (None, Place::Ssh { .. }) => std::path::PathBuf::from("."),
        (Some(c), Place::Ssh { .. }) => std::path::PathBuf::from(c),
    }
}

/// A signal by name (`TERM`, `SIGINT`, `quit`…).
pub fn signal_by_name(name: &str) -> Option<Signal> {
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
    })
}

/// How many times a disturbed trial is measured again when the suite does not say: `SHOOTOUT_DISTURBED_AGAIN` (a
/// machine whose own tests run side by side, where every trial sees the others', sets it to 0), else once.
fn disturbed_again_default() -> u32 {
    std::env::var("SHOOTOUT_DISTURBED_AGAIN").ok().and_then(|v| v.trim().parse().ok()).unwrap_or(1)
}
