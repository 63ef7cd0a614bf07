//! [`render_load`]: the terminal summary of one load run. A suite's is [`export::Text`](crate::export::Text).

use std::fmt::Write as _;

use shootout_metrics::percentile_us;
use shootout_model::result::Sends;
use shootout_model::{Arrival, ErrorKind, LoadResult, Pacing, Protocol, StopCondition, SATURATION};

use crate::analysis::behind::{Behind, Lag};
use crate::load::summary::LoadSummary;
use crate::units::{bytes, count, ms};

/// The summary printed after `shootout load`: the run's shape, siege's fields, ab's percentile table, status
/// codes, errors by kind, connections, and the client's own CPU with a warning when it was the bottleneck.
pub fn render_load(result: &LoadResult) -> String {
    let s = LoadSummary::of(result);
    let mut out = String::new();
    shape(&mut out, result, &s);
    let _ = writeln!(out);
    siege_fields(&mut out, &s);
    percentile_table(&mut out, result);
    by_request(&mut out, result);
    let _ = writeln!(out);
    counts(&mut out, result);
    client_cpu(&mut out, result, &s);
    agents(&mut out, result);
    warnings(&mut out, result);
    out
}

/// What was asked: method, URL and address; the model, connections, threads, stop and keep-alive; the stages,
/// the warm-up, and whether the run was interrupted.
fn shape(out: &mut String, result: &LoadResult, s: &LoadSummary) {
    let o = &result.options;
    let stop = match o.stop {
        StopCondition::Duration(d) => format!("for {}", humantime_like(d.as_secs_f64())),
        StopCondition::Requests(n) => format!("{} requests", count(n)),
    };
    let keepalive = match o.protocol {
        Protocol::Http2 | Protocol::Http3 => o.protocol.label(),
        Protocol::Http1 if o.keepalive => "keep-alive",
        Protocol::Http1 => "a new connection per request",
    };
    let connections = match o.protocol {
        Protocol::Http2 | Protocol::Http3 => format!("{} connections × {} streams", o.connections, o.streams),
        Protocol::Http1 => format!("{} connections", o.connections),
    };
    match &o.scenario {
        Some(file) => {
            let names: Vec<&str> = result.by_request.iter().map(|r| r.name.as_str()).collect();
            let _ = writeln!(
                out,
                "scenario {file}: {} request{} ({}) on {} ({})",
                names.len(),
                if names.len() == 1 { "" } else { "s" },
                names.join(", "),
                o.url,
                result.address
            );
        }
        None => {
            let _ = writeln!(out, "{} {} ({})", o.method, o.url, result.address);
        }
    }
    let threads = result.client.threads;
    match o.pacing {
        Pacing::Closed => {
            let _ = writeln!(out, "  closed model: {connections} on {threads} threads, {stop}, {keepalive}");
        }
        Pacing::Open { rate, arrival } => {
            let arrival = match arrival {
                Arrival::Constant => "evenly spaced",
                Arrival::Poisson => "Poisson arrivals",
            };
            let _ = writeln!(
                out,
                "  open model: {rate} requests/s ({arrival}), up to {connections} on {threads} threads, {stop}, {keepalive}"
            );
        }
    }
    if !o.stages.is_empty() {
        let stages: Vec<String> =
            o.stages.iter().map(|s| format!("{} to {}", humantime_like(s.duration.as_secs_f64()), s.target)).collect();
        let _ = writeln!(out, "  stages: {}", stages.join(", then "));
    }
    if !o.warmup.is_zero() {
        let _ = writeln!(
            out,
            "  after a {} warm-up ({} requests, not counted)",
            humantime_like(o.warmup.as_secs_f64()),
            count(result.requests.warmup)
        );
    }
    if result.interrupted {
        let _ = writeln!(
            out,
            "  interrupted: these figures cover the {:.3} s measured before the signal that stopped it",
            s.elapsed_s
        );
    }
}

/// Siege's twelve fields, one a line, and the drain when there was one.
fn siege_fields(out: &mut String, s: &LoadSummary) {
    let rows: [(&str, String); 12] = [
        ("Transactions:", format!("{} hits", count(s.transactions))),
        ("Availability:", format!("{:.2} %", s.availability_pct)),
        ("Elapsed time:", format!("{:.3} s", s.elapsed_s)),
        ("Data transferred:", format!("{} ({} bytes)", bytes(s.data_bytes as f64), count(s.data_bytes))),
        (
            "Response time:",
            format!("{} ms (mean), {} ms (stdev)", ms(s.response_time_us), ms(s.response_time_stdev_us)),
        ),
        ("Transaction rate:", format!("{:.2} trans/s", s.transaction_rate)),
        ("Throughput:", format!("{}/s", bytes(s.throughput_bytes))),
        ("Concurrency:", format!("{:.2}", s.concurrency)),
        ("Successful transactions:", count(s.successful)),
        ("Failed transactions:", count(s.failed)),
        ("Longest transaction:", format!("{} ms", ms(s.longest_us as f64))),
        ("Shortest transaction:", format!("{} ms", ms(s.shortest_us as f64))),
    ];
    for (label, value) in rows {
        let _ = writeln!(out, "{label:<26}{value}");
        if label == "Elapsed time:" && s.after_window > 0 {
            let _ = writeln!(
                out,
                "{:<26}{} requests ended in the {:.3} s after sending stopped (in the latency, not in the rates)",
                "Drain:",
                count(s.after_window),
                s.drain_s
            );
        }
        if label == "Elapsed time:" && s.left_out > 0 {
            let _ = writeln!(
                out,
                "{:<26}{} requests still in flight when the probe's verdict was settled whatever they did: their \
                 wait so far in the latency, in no count",
                "Left out:",
                count(s.left_out)
            );
        }
        if label == "Elapsed time:" && s.held_over > 0 {
            let _ = writeln!(
                out,
                "{:<26}{} requests due in the warm-up were still unanswered when the window ended: counted, \
                 their latency from when they fell due",
                "Held over:",
                count(s.held_over)
            );
        }
    }
}

/// ab's percentile table; in the open model with the service time beside the latency.
fn percentile_table(out: &mut String, result: &LoadResult) {
    let open = result.sends.is_some();
    let _ = writeln!(out, "\nPercentage of the requests served within a certain time (ms)");
    if open {
        let _ = writeln!(out, "  {:>7} {:>12} {:>14}", "", "latency", "service time");
    }
    for (p, service) in result.latency.percentiles.iter().zip(&result.service_time.percentiles) {
        let label = format!("{}%", p.percentile);
        let tail = if p.percentile >= 100.0 { " (longest request)" } else { "" };
        if open {
            let _ = writeln!(out, "  {label:>7} {:>12} {:>14}{tail}", ms(p.us as f64), ms(service.us as f64));
        } else {
            let _ = writeln!(out, "  {label:>7} {:>12}{tail}", ms(p.us as f64));
        }
    }
    if open {
        let _ = writeln!(
            out,
            "  latency is from when each request was due (corrected); service time from when it was sent (uncorrected)"
        );
    }
}

/// Scenarios: the counts and latency of each named request.
fn by_request(out: &mut String, result: &LoadResult) {
    if result.by_request.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "\n{:<28} {:>10} {:>10} {:>10} {:>12} {:>12} {:>12}",
        "By request:", "requests", "ok", "failed", "mean ms", "p50 ms", "p99 ms"
    );
    for named in &result.by_request {
        let at = |p: f64| percentile_us(&named.latency, p);
        let _ = writeln!(
            out,
            "  {:<26} {:>10} {:>10} {:>10} {:>12} {:>12} {:>12}",
            named.name,
            count(named.requests.total),
            count(named.requests.ok),
            count(named.requests.failed + named.requests.http_errors),
            ms(named.latency.mean_us),
            ms(at(50.0) as f64),
            ms(at(99.0) as f64)
        );
    }
}

/// Status codes, errors by kind (and HTTP/2 stream resets by error code, when there were any), the redirects
/// followed and the hosts refused, connections, and in the open model how well the client kept to its schedule.
fn counts(out: &mut String, result: &LoadResult) {
    let statuses: Vec<String> = result.status_counts.iter().map(|(code, n)| format!("{code}: {}", count(*n))).collect();
    let statuses = if statuses.is_empty() { "no responses".to_string() } else { statuses.join(", ") };
    let _ = writeln!(out, "{:<26}{statuses}", "Status codes:");
    let mut errors: Vec<String> = http_failures(result).map(|(code, n)| format!("HTTP {code}: {}", count(n))).collect();
    errors.extend(result.errors.iter().map(|(kind, n)| format!("{}: {}", kind.as_str(), count(*n))));
    let errors = if errors.is_empty() { "none".to_string() } else { errors.join(", ") };
    let _ = writeln!(out, "{:<26}{errors}", "Errors:");
    if !result.off_origin.is_empty() {
        let _ = writeln!(
            out,
            "{:<26}{} (off the run's server: not sent)",
            "Refused to go to:",
            result.off_origin.join(", ")
        );
    }
    if result.requests.redirects > 0 || result.errors.contains_key(&shootout_model::ErrorKind::TooManyRedirects) {
        let _ = writeln!(
            out,
            "{:<26}{} followed (each hop a response of its request; at most {} in a row)",
            "Redirects:",
            count(result.requests.redirects),
            result.options.max_redirects
        );
    }
    checks(out, result);
    if !result.stream_resets.is_empty() {
        let codes: Vec<String> =
            result.stream_resets.iter().map(|(code, n)| format!("{code}: {}", count(*n))).collect();
        let _ = writeln!(out, "{:<26}{}", "Stream resets:", codes.join(", "));
    }
    let c = &result.connections;
    let connect = if result.connect.count > 0 {
        format!(", connect mean {} ms, max {} ms", ms(result.connect.mean_us), ms(result.connect.max_us as f64))
    } else {
        String::new()
    };
    let _ = writeln!(
        out,
        "{:<26}{} opened{connect}, {} closed by the server",
        "Connections:",
        count(c.opened),
        count(c.closed_by_server)
    );
    if let Some(quic) = &result.quic {
        let lost =
            if quic.packets_sent > 0 { 100.0 * quic.packets_lost as f64 / quic.packets_sent as f64 } else { 0.0 };
        let zero_rtt = match quic.zero_rtt {
            0 => "none with 0-RTT".to_string(),
            n => format!("{} with 0-RTT", count(n)),
        };
        let _ = writeln!(
            out,
            "{:<26}{} handshakes ({zero_rtt}); {} packets sent, {} lost ({lost:.3} %) and sent again; {} \
             congestion events",
            "QUIC:",
            count(quic.handshakes),
            count(quic.packets_sent),
            count(quic.packets_lost),
            count(quic.congestion_events)
        );
    }
    if let Some(sends) = &result.sends {
        let _ = writeln!(
            out,
            "{:<26}{} due, {} sent ({} more than 1 ms late); offered {:.2}/s, sent {:.2}/s, completed {:.2}/s",
            "Sends:",
            count(sends.due),
            count(sends.sent),
            count(sends.late),
            sends.offered_per_s,
            sends.sent_per_s,
            result.throughput.requests_per_s
        );
    }
}

/// Scenarios: how many responses failed their checks, and each way they failed.
fn checks(out: &mut String, result: &LoadResult) {
    if result.by_request.is_empty() {
        return;
    }
    let r = &result.requests;
    let responses = r.ok + r.http_errors;
    if r.checks_failed == 0 {
        let _ = writeln!(out, "{:<26}every one of {} responses passed", "Checks:", count(responses));
        return;
    }
    let _ = writeln!(
        out,
        "{:<26}{} of {} responses failed ({:.2} %)",
        "Checks:",
        count(r.checks_failed),
        count(responses),
        100.0 * r.checks_failed as f64 / responses.max(1) as f64
    );
    for c in &result.failed_checks {
        let _ = writeln!(out, "  {}: expected {}, got {}: {}", c.request, c.expected, c.got, count(c.count));
    }
}

/// The client's own CPU, in total and per response.
fn client_cpu(out: &mut String, result: &LoadResult, s: &LoadSummary) {
    let u = &result.client;
    let _ = writeln!(
        out,
        "{:<26}{:.2} s user + {:.2} s system = {:.0}% of {}; I/O: {})",
        "Client CPU:",
        u.user_s,
        u.sys_s,
        u.busy * 100.0,
        busy_of(result),
        u.io.name()
    );
    if u.quota_cpus > 0.0 {
        let _ = writeln!(
            out,
            "{:<26}{} CPUs, ran out in {:.0}% of its periods",
            "Client CPU quota:",
            (u.quota_cpus * 100.0).round() / 100.0,
            u.throttled * 100.0
        );
    }
    // Time queued for a CPU is worth a line once it is more than a wake-up's worth: the client was starved, by its
    // quota when that ran out in a quarter of its periods or more, else by other work.
    if u.queued >= 0.05 && u.throttled >= crate::analysis::limit::THROTTLED {
        let _ = writeln!(
            out,
            "{:<26}{:.2} s ({:.0}% of the time): its CPU quota held the client back",
            "Client waited for CPU:",
            u.queued_s,
            u.queued * 100.0
        );
    } else if u.queued >= 0.05 {
        let _ = writeln!(
            out,
            "{:<26}{:.2} s ({:.0}% of the time): other work held the client's CPUs",
            "Client waited for CPU:",
            u.queued_s,
            u.queued * 100.0
        );
    }
    if s.transactions > 0 {
        let _ = writeln!(
            out,
            "{:<26}{:.2} µs per response",
            "Client CPU per request:",
            u.cpu_s * 1e6 / s.transactions as f64
        );
    }
}

/// What the client's busy share is of, in words, with an open parenthesis for the line to close: the CPUs its
/// threads could use, min(threads, CPUs), then the threads and CPUs behind that. Agents on one host share its
/// CPUs and are judged together; on several hosts the share is the busiest host's, so the words name that host.
fn busy_of(result: &LoadResult) -> String {
    let u = &result.client;
    let plural = |n: u32, one: &str| format!("{n} {one}{}", if n == 1 { "" } else { "s" });
    // Each host's agents that sent their totals: its name, their threads and CPU seconds, and its CPUs.
    let mut hosts: Vec<(&str, u32, f64, u32)> = Vec::new();
    for agent in &result.agents {
        let Some(measured) = &agent.measured else { continue };
        let client = &measured.client;
        match hosts.iter_mut().find(|h| h.0 == agent.host) {
            Some(host) => {
                (host.1, host.2, host.3) = (host.1 + client.threads, host.2 + client.cpu_s, host.3.max(agent.cpus))
            }
            None => hosts.push((&agent.host, client.threads, client.cpu_s, agent.cpus)),
        }
    }
    let agents = if result.agents.len() > 1 { format!(" of {} agents", result.agents.len()) } else { String::new() };
    let overall = format!("{}{agents} on {}", plural(u.threads, "thread"), plural(u.cpus_available, "CPU"));
    if hosts.len() <= 1 && u.quota_cpus > 0.0 && u.quota_cpus < f64::from(u.threads.min(u.cpus_available)) {
        return format!("its quota of {} CPUs ({overall}", (u.quota_cpus * 100.0).round() / 100.0);
    }
    if hosts.len() <= 1 {
        return format!("{} ({overall}", plural(u.threads.min(u.cpus_available), "CPU"));
    }
    // The busiest host: the most CPU seconds for the CPUs its threads could use (over the same window).
    let usable = |host: &(&str, u32, f64, u32)| host.1.min(host.3).max(1);
    let load = |host: &(&str, u32, f64, u32)| host.2 / f64::from(usable(host));
    let busiest = hosts.iter().fold(hosts[0], |most, &host| if load(&host) > load(&most) { host } else { most });
    format!("{} on {}, the busiest of {} hosts ({overall}", plural(usable(&busiest), "CPU"), busiest.0, hosts.len())
}

/// A run from several agents: one line each, with its host, clock, start, own figures and CPU.
fn agents(out: &mut String, result: &LoadResult) {
    if result.agents.is_empty() {
        return;
    }
    let spread = result.agents.iter().filter_map(|a| a.measured.as_ref()).map(|m| m.start_ms).fold(0.0, f64::max);
    let _ = writeln!(out, "{:<26}{} (starts spread over {spread:.3} ms)", "Agents:", result.agents.len());
    for a in &result.agents {
        let clock = format!("clock {:+.3} ms ± {:.3}", a.clock_offset_ms, a.clock_error_ms);
        match &a.measured {
            Some(m) => {
                let _ = writeln!(
                    out,
                    "  {} {} ({} CPUs): {} requests, p50 {} ms, p99 {} ms, CPU {:.0}%{}, {clock}, started +{:.3} ms",
                    a.index,
                    a.host,
                    a.cpus,
                    m.requests.total,
                    ms(m.p50_us as f64),
                    ms(m.p99_us as f64),
                    m.client.busy * 100.0,
                    if m.client.saturated { " (client-bound)" } else { "" },
                    m.start_ms
                );
            }
            None => {
                let _ = writeln!(out, "  {} {} ({} CPUs): {clock}, lost before its totals", a.index, a.host, a.cpus);
            }
        }
        if let Some(why) = &a.lost {
            let _ = writeln!(out, "    stopped: {why}");
        }
    }
}

/// Open model: a run that fell behind its schedule, and who held it back ([`Lag`]); any model: a client that
/// was the bottleneck.
/// The warnings of one load run alone (falling behind, failed checks, a client out of CPU), as the summary ends
/// with them: what `load --json` prints on stderr, since its stdout holds the JSON.
pub fn render_warnings(result: &LoadResult) -> String {
    let mut out = String::new();
    warnings(&mut out, result);
    out.trim_start().to_string()
}

/// The responses of 400 and above, by status, most first: failures, whatever the transport did.
fn http_failures(result: &LoadResult) -> impl Iterator<Item = (u16, u64)> {
    let mut failed: Vec<(u16, u64)> =
        result.status_counts.iter().filter_map(|(code, n)| Some((code.parse::<u16>().ok()?, *n))).collect();
    failed.retain(|(code, _)| *code >= 400);
    failed.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    failed.into_iter()
}

fn warnings(out: &mut String, result: &LoadResult) {
    if let (Some(lag), Some(sends)) = (Lag::of(result), &result.sends) {
        behind(out, result, &lag, sends);
    }
    let r = &result.requests;
    let attempts = r.ok + r.http_errors + r.failed;
    if r.http_errors * 2 > attempts {
        let statuses: Vec<String> = http_failures(result)
            .map(|(code, n)| format!("{code}: {} ({:.1}%)", count(n), 100.0 * n as f64 / attempts as f64))
            .collect();
        let _ = writeln!(
            out,
            "\nWARNING: most requests failed: {} of {} got an HTTP error status ({}), so these figures measure the \
             server's error page, not the page asked for: check the URL and the request. The exit code is 0 all \
             the same; gate on it with --fail-if 'errors>1%'.",
            count(r.http_errors),
            count(attempts),
            statuses.join(", ")
        );
    }
    if r.checks_failed > 0 {
        let _ = writeln!(
            out,
            "\nWARNING: {} of {} responses failed their checks (see Checks above): the server did not answer as the \
             scenario expects, so these figures may not measure the pages it means. Gate on it with --fail-if \
             'checks>0%'.",
            count(r.checks_failed),
            count(r.ok + r.http_errors)
        );
    }
    let u = &result.client;
    if u.saturated && u.throttled >= crate::analysis::limit::THROTTLED {
        let _ = writeln!(
            out,
            "\nWARNING: the client was held by its CPU quota of {} CPUs ({:.0}% busy, the quota ran out in {:.0}% of \
             its periods): this measures the quota, not the server. Raise the quota of the client's cgroup, or run \
             it outside it.",
            (u.quota_cpus * 100.0).round() / 100.0,
            u.busy * 100.0,
            u.throttled * 100.0
        );
    } else if u.saturated && u.busy < SATURATION && u.busy + u.queued >= SATURATION {
        let _ = writeln!(
            out,
            "\nWARNING: the client was starved of CPU ({:.0}% busy, {:.0}% more waiting for a CPU): this measures \
             the machine's contention, not the server. Pin the client and the server to CPUs of their own.",
            u.busy * 100.0,
            u.queued * 100.0
        );
    } else if u.saturated {
        let _ = writeln!(
            out,
            "\nWARNING: the client was the bottleneck ({:.0}% busy): this measures shootout, not the server. \
             Give the client more cores (-t), or pin the server elsewhere.",
            u.busy * 100.0
        );
    }
}

/// One warning for an open-model run that fell behind: the three rates, what was late or never sent, and who to
/// blame, with the fix.
fn behind(out: &mut String, result: &LoadResult, lag: &Lag, sends: &Sends) {
    let not_sent = result.errors.get(&ErrorKind::NotSent).copied().unwrap_or(0);
    let mut facts = format!(
        "offered {:.2}/s, sent {:.2}/s, completed {:.2}/s",
        lag.offered_per_s, lag.sent_per_s, lag.completed_per_s
    );
    if lag.kept_pace {
        // Late sends alone: the rates held, so the run did not fall behind; only the sends' timing slipped.
        let _ = writeln!(
            out,
            "\nWARNING: {} of {} requests went out more than 1 ms late; the rate kept pace ({facts}): {}. Latency \
             still counts from when each request was due.",
            count(sends.late),
            count(sends.sent),
            late_cause(result, lag)
        );
        return;
    }
    if sends.late > 0 {
        let _ = write!(facts, "; {} requests went out more than 1 ms late", count(sends.late));
    }
    if not_sent > 0 {
        let _ = write!(
            facts,
            "; {} were never sent (no connection was ready for them within --timeout, or 2 s after sending stopped)",
            count(not_sent)
        );
    }
    let why = late_cause(result, lag);
    let _ = writeln!(
        out,
        "\nWARNING: the run fell behind its schedule ({facts}): {why}. Latency still counts from when each request \
         was due."
    );
}

/// Who held an open-model run back, in words, with the fix.
fn late_cause(result: &LoadResult, lag: &Lag) -> String {
    match lag.by {
        Behind::Server => format!(
            "the server did not keep up: its requests queued (service time median {} ms, mean {} ms, the fastest {} \
             ms), so this rate is past what it can complete, and {:.2}/s is its throughput here",
            ms(percentile_us(&result.service_time, 50.0) as f64),
            ms(result.service_time.mean_us),
            ms(result.service_time.min_us as f64),
            lag.completed_per_s
        ),
        Behind::Connections { connections, service_p50_us } => format!(
            "every one of the {} connections was busy while the server answered each in {} ms (median), so they \
             carry at most {:.2}/s: raise --max-connections",
            count(connections),
            ms(service_p50_us as f64),
            connections as f64 * 1e6 / service_p50_us.max(1) as f64
        ),
        Behind::Late => "requests went out late while most connections stood free and the server answered at its \
            usual speed: something else held the client up (another process on its CPUs, or a busy machine)"
            .to_string(),
        Behind::Client => "the client was short of CPU (below)".to_string(),
    }
}

/// Seconds as `10s`, `1.5s` or `2m30s`.
fn humantime_like(seconds: f64) -> String {
    if seconds >= 60.0 && seconds.fract() == 0.0 {
        let whole = seconds as u64;
        match (whole / 60, whole % 60) {
            (m, 0) => format!("{m}m"),
            (m, s) => format!("{m}m{s}s"),
        }
    } else {
        format!("{seconds}s")
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use shootout_model::result::{NamedResult, Sends};
    use shootout_model::{Stage, StopCondition};

    use super::*;

    fn closed() -> LoadResult {
        let trial: shootout_model::run::TrialRecord =
            serde_json::from_str(include_str!("../../tests/trial.json")).unwrap();
        let mut r = trial.result;
        (r.connect.count, r.connect.mean_us, r.connect.max_us) = (4, 120.5, 300);
        (r.connections.opened, r.connections.closed_by_server) = (4, 1);
        r.client.threads = 2;
        r
    }

    /// Every optional part at once: the open model with its sends and warnings, stages, a request count, named
    /// requests, no connect time, an interrupted and client-bound run.
    fn open() -> LoadResult {
        let mut r = closed();
        let o = &mut r.options;
        o.pacing = Pacing::Open { rate: 100.0, arrival: Arrival::Poisson };
        o.stop = StopCondition::Requests(5000);
        o.keepalive = false;
        o.warmup = Duration::ZERO;
        o.stages = vec![
            Stage { duration: Duration::from_secs(90), target: 200.0 },
            Stage { duration: Duration::from_millis(1500), target: 50.0 },
        ];
        r.sends = Some(Sends { due: 1000, sent: 990, late: 50, offered_per_s: 100.0, sent_per_s: 99.0 });
        r.errors = [(ErrorKind::NotSent, 10), (ErrorKind::ReadTimeout, 2)].into_iter().collect();
        r.status_counts.insert("503".into(), 7);
        r.by_request = vec![
            NamedResult {
                name: "login".into(),
                requests: r.requests,
                status_counts: r.status_counts.clone(),
                errors: r.errors.clone(),
                stream_resets: Default::default(),
                latency: r.latency.clone(),
            },
            NamedResult {
                name: "home".into(),
                requests: Default::default(),
                status_counts: Default::default(),
                errors: Default::default(),
                stream_resets: Default::default(),
                latency: r.service_time.clone(),
            },
        ];
        r.connect.count = 0;
        r.interrupted = true;
        r.client.saturated = true;
        r.client.threads = 1;
        r
    }

    /// Nothing answered.
    fn empty() -> LoadResult {
        let mut r = closed();
        r.requests = Default::default();
        r.status_counts.clear();
        r.options.stop = StopCondition::Duration(Duration::from_secs(150));
        r
    }

    #[test]
    fn the_load_summary_reads_as_it_always_has() {
        assert_eq!(render_load(&closed()), include_str!("../../tests/text/closed.txt"));
        assert_eq!(render_load(&open()), include_str!("../../tests/text/open.txt"));
        assert_eq!(render_load(&empty()), include_str!("../../tests/text/empty.txt"));
    }

    #[test]
    fn stream_resets_are_one_line_under_the_errors_only_when_there_were_any() {
        let mut r = closed();
        r.errors = [(ErrorKind::StreamRefused, 3), (ErrorKind::StreamReset, 1_234)].into_iter().collect();
        r.stream_resets =
            [("INTERNAL_ERROR".into(), 1_233), ("REFUSED_STREAM".into(), 3), ("0x1f".into(), 1)].into_iter().collect();
        let text = render_load(&r);
        let errors = text.lines().position(|l| l.starts_with("Errors:")).unwrap();
        let next = text.lines().nth(errors + 1).unwrap();
        assert_eq!(
            next,
            format!("{:<26}0x1f: 1, INTERNAL_ERROR: {}, REFUSED_STREAM: 3", "Stream resets:", count(1_233))
        );
        assert!(!render_load(&closed()).contains("Stream resets"));
    }

    /// Issue 47: every response a 404 read `Availability: 100.00 %`, `Errors: none`, with no warning.
    #[test]
    fn responses_of_400_and_above_are_failures_in_the_availability_the_errors_and_a_warning() {
        let mut r = closed();
        let total = r.requests.ok;
        (r.requests.ok, r.requests.http_errors) = (0, total);
        r.status_counts = [("404".to_string(), total)].into_iter().collect();
        let text = render_load(&r);
        assert!(text.contains("Availability:             0.00 %"), "{text}");
        assert!(text.contains(&format!("Errors:                   HTTP 404: {}\n", count(total))), "{text}");
        let warning = format!(
            "WARNING: most requests failed: {0} of {0} got an HTTP error status (404: {0} (100.0%)), so these \
             figures measure the server's error page",
            count(total)
        );
        assert!(text.contains(&warning), "{text}");
        let (ok, failed) = (total - total / 4, total / 4);
        (r.requests.ok, r.requests.http_errors) = (ok, failed);
        r.status_counts = [("200".to_string(), ok), ("500".to_string(), failed)].into_iter().collect();
        let text = render_load(&r);
        assert!(text.contains(&format!("Errors:                   HTTP 500: {}\n", count(failed))), "{text}");
        assert!(!text.contains("most requests failed"), "a quarter failed: no warning\n{text}");
    }

    /// Issue 47: a run that kept its rate but sent some requests late read "the run fell behind its schedule
    /// (offered 1000.00/s, sent 1000.00/s, completed 1000.00/s; 87 requests went out more than 1 ms late)".
    #[test]
    fn late_sends_at_a_rate_kept_are_not_falling_behind() {
        let mut r = crate::analysis::behind::tests::open(2000.0, 100, 90, 87);
        r.sends = Some(Sends { due: 6000, sent: 6000, late: 87, offered_per_s: 2000.0, sent_per_s: 2000.0 });
        r.service_time.mean_us = 100.0;
        let text = render_load(&r);
        assert!(!text.contains("fell behind"), "{text}");
        assert!(
            text.contains(
                "WARNING: 87 of 6,000 requests went out more than 1 ms late; the rate kept pace (offered 2000.00/s, \
                 sent 2000.00/s, completed 2000.00/s): requests went out late while most connections stood free"
            ),
            "{text}"
        );
        r.throughput.requests_per_s = 1500.0;
        assert!(render_load(&r).contains("WARNING: the run fell behind its schedule (offered 2000.00/s"));
    }

    /// The Client CPU line of `result`'s summary.
    fn cpu_line(result: &LoadResult) -> String {
        let text = render_load(result);
        text.lines().find(|l| l.starts_with("Client CPU:")).unwrap().trim_start_matches("Client CPU:").trim().into()
    }

    /// A host of agents: its name, its CPUs, and each agent's threads and CPU seconds.
    type Host<'a> = (&'a str, u32, &'a [(u32, f64)]);

    /// `result` as run by agents on `hosts` (name, CPUs, each agent's threads and CPU seconds) over one second,
    /// its client figures those of their merge, as the coordinator adds them up.
    fn by_agents(hosts: &[Host]) -> LoadResult {
        use shootout_model::result::{AgentMeasured, AgentResult};
        let mut r = closed();
        let (mut threads, mut cpus, mut cpu_s, mut busy) = (0, 0, 0.0, 0.0f64);
        for &(host, host_cpus, agents) in hosts {
            let host_threads: u32 = agents.iter().map(|a| a.0).sum();
            let host_cpu_s: f64 = agents.iter().map(|a| a.1).sum();
            (threads, cpus, cpu_s) = (threads + host_threads, cpus + host_cpus, cpu_s + host_cpu_s);
            busy = busy.max(host_cpu_s / f64::from(host_threads.min(host_cpus)));
            for &(agent_threads, agent_cpu_s) in agents {
                let mut client = r.client;
                (client.threads, client.cpus_available, client.cpu_s) = (agent_threads, host_cpus, agent_cpu_s);
                client.busy = agent_cpu_s / f64::from(agent_threads.min(host_cpus));
                let measured = AgentMeasured { start_ms: 0.0, requests: r.requests, p50_us: 1, p99_us: 2, client };
                r.agents.push(AgentResult {
                    index: r.agents.len() as u32,
                    host: host.into(),
                    cpus: host_cpus,
                    clock_offset_ms: 0.0,
                    clock_error_ms: 0.0,
                    measured: Some(measured),
                    lost: None,
                });
            }
        }
        (r.client.threads, r.client.cpus_available, r.client.cpu_s, r.client.busy) = (threads, cpus, cpu_s, busy);
        r
    }

    #[test]
    fn the_client_cpu_line_says_what_its_share_is_of() {
        // Issue 37: two agents on a 2-CPU machine read "52% of 4 threads" for 52% of its 2 CPUs.
        let mut one = closed();
        (one.client.threads, one.client.cpus_available, one.client.busy) = (2, 4, 0.52);
        assert!(cpu_line(&one).ends_with("= 52% of 2 CPUs (2 threads on 4 CPUs; I/O: epoll)"), "{}", cpu_line(&one));
        (one.client.threads, one.client.cpus_available) = (4, 2);
        assert!(cpu_line(&one).ends_with("= 52% of 2 CPUs (4 threads on 2 CPUs; I/O: epoll)"), "{}", cpu_line(&one));
        (one.client.threads, one.client.cpus_available) = (1, 1);
        assert!(cpu_line(&one).ends_with("= 52% of 1 CPU (1 thread on 1 CPU; I/O: epoll)"), "{}", cpu_line(&one));

        let local = by_agents(&[("lab", 2, &[(2, 0.52), (2, 0.52)])]);
        assert!(cpu_line(&local).ends_with("= 52% of 2 CPUs (4 threads of 2 agents on 2 CPUs; I/O: epoll)"));

        // 1.8 CPU-seconds on the 2 CPUs of "a" is 90%; 2 on the 8 usable of "b" (two agents of 4 threads) is 25%.
        let hosts = by_agents(&[("b", 8, &[(4, 1.0), (4, 1.0)]), ("a", 2, &[(2, 1.8)])]);
        let line = cpu_line(&hosts);
        assert!(
            line.ends_with(
                "= 90% of 2 CPUs on a, the busiest of 2 hosts (10 threads of 3 agents on 10 CPUs; I/O: epoll)"
            ),
            "{line}"
        );
    }

    #[test]
    #[ignore = "writes the expected files"]
    fn bless() {
        for (name, result) in [("closed", closed()), ("open", open()), ("empty", empty())] {
            std::fs::write(format!("tests/text/{name}.txt"), render_load(&result)).unwrap();
        }
    }
}
