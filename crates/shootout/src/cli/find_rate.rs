//! `shootout load --find-rate`: the highest rate a server takes while every `--slo` objective holds, found by a
//! [`Search`] instead of by hand. Each probe is an open-model run of `-d` (after `--warmup`) at the rate the
//! search asks, judged against the objectives by the same figures as `--fail-if` and the suites' SLOs. Every probe
//! is printed as it ends; then the result at the rate found, and the search: the bracket it ended in, the probes
//! and the time it took (`--json` gives that result with the whole search as `search`).

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Instant;

use shootout_engine::{limits, Progress};
use shootout_harness::search::pause;
use shootout_model::search::{Ended, Found, ProbeRecord, Search, SearchRecord, Step};
use shootout_model::search::{
    CEILING_RATE as CEILING, FLOOR_RATE as FLOOR, MOST_PROBES, PRECISION, START_RATE as START,
};
use shootout_model::slo::{Condition, Metric};
use shootout_model::LoadResult;
use shootout_report::figures;

use super::load::{self, LoadArgs};
use super::Failure;

/// Runs the search and prints what it found.
pub fn run(args: &LoadArgs, scenario: Option<&shootout_scenario::Scenario>) -> Result<(), Failure> {
    let start = args.rate.unwrap_or(START);
    if !(FLOOR..=CEILING).contains(&start) {
        return Err(Failure::Usage(format!(
            "-R {start}: a search starts between {FLOOR} and {CEILING} requests/s; give a low rate such as -R 10"
        )));
    }
    let precision = args.precision.unwrap_or(PRECISION);
    if precision <= 0.0 {
        return Err(Failure::Usage(
            "--precision 0%: a bracket of no width is never reached; give a share such as 5%".into(),
        ));
    }
    if args.agents_given() {
        return Err(Failure::Usage(
            "--find-rate runs from this machine: drop --agents (a search from agents is not built yet)".into(),
        ));
    }
    // Everything the user typed is checked before the first probe, at the highest rate the search may try.
    let (options, _) = load::validate(args, scenario, Some(CEILING))?;
    limits::ensure_open_files(options.most_connections()).map_err(|e| Failure::Usage(e.to_string()))?;
    if let Some(path) = &args.output {
        load::writable(path)?;
    }

    let stop = Arc::new(AtomicBool::new(false));
    super::signals::watch(stop.clone(), || {});
    let began = Instant::now();
    let mut search = Search::new(start, precision, FLOOR, CEILING, false, MOST_PROBES);
    let mut probes: Vec<(ProbeRecord, LoadResult)> = Vec::new();
    let mut interrupted = false;
    let mut failed: Option<Failure> = None;
    let found = loop {
        let rate = match search.next() {
            Step::Probe(rate) => rate,
            Step::Found(found) => break found,
        };
        if !probes.is_empty() && !pause(&stop) {
            interrupted = true;
            break search.cut_short();
        }
        let result = match probe(args, scenario, rate, &stop) {
            Ok(result) => result,
            Err(failure) => {
                failed = Some(failure);
                break search.cut_short();
            }
        };
        let broke = judge(&args.slo, &result);
        let record = ProbeRecord {
            rate,
            passed: broke.is_empty() && !result.interrupted,
            requests_per_s: figures::successful_per_s(&result),
            mean_us: result.latency.mean_us,
            p99_us: figures::value(Metric::Percentile(99.0), &result),
            errors_pct: figures::errors_pct(&result),
            broke,
            client_saturated: result.client.saturated,
        };
        if result.interrupted {
            interrupted = true;
            probes.push((record, result));
            break search.cut_short();
        }
        eprintln!("{}", describe(probes.len() + 1, &record));
        search.record(rate, record.passed);
        probes.push((record, result));
    };
    let (probes, mut results): (Vec<ProbeRecord>, Vec<LoadResult>) = probes.into_iter().unzip();
    let Some(chosen) = chosen(&probes, &found) else {
        return Err(failed.unwrap_or(Failure::Interrupted));
    };
    let mut result = results.swap_remove(chosen);
    let record = SearchRecord {
        rate: found.capacity,
        failed_at: found.failed_at,
        ended: found.ended,
        objectives: args.slo.iter().map(|c| c.text.clone()).collect(),
        precision,
        client_bound: probes.iter().any(|p| !p.passed && p.client_saturated && Some(p.rate) == found.failed_at),
        probes,
        seconds: began.elapsed().as_secs_f64(),
    };
    let summary = summarize(&record, &args.slo);
    result.search = Some(record);
    load::emit(args, &result)?;
    if args.json {
        eprintln!("{summary}");
    } else {
        println!("{summary}");
    }
    if let Some(failure) = failed {
        return Err(failure);
    }
    if interrupted {
        return Err(Failure::Interrupted);
    }
    match found.capacity {
        Some(_) => Ok(()),
        None => Err(Failure::Threshold(format!("no rate down to {FLOOR} requests/s met the objectives"))),
    }
}

/// What a probe's result broke: each objective with its value, and a window without a response, which meets
/// nothing (its mean would read 0).
fn judge(slo: &[Condition], result: &LoadResult) -> Vec<String> {
    let mut broke: Vec<String> = figures::breaking(slo, result)
        .into_iter()
        .map(|(c, v)| format!("{} (it was {})", c.text, figures::show(c, v)))
        .collect();
    if result.requests.ok + result.requests.http_errors == 0 {
        broke.push("no response came in its window".into());
    }
    broke
}

/// One probe: the load at `rate`, with the progress bar of a load run.
fn probe(
    args: &LoadArgs,
    scenario: Option<&shootout_scenario::Scenario>,
    rate: f64,
    stop: &Arc<AtomicBool>,
) -> Result<LoadResult, Failure> {
    let (options, body) = load::validate(args, scenario, Some(rate))?;
    let plan = load::plan(options, &body, scenario)?;
    let mut shown = load::Shown::new(&plan.options);
    let result = shootout_engine::run(&plan, stop.clone(), &mut |p: &Progress| shown.show(p));
    shown.finish();
    result.map_err(|e| Failure::Run(e.into()))
}

/// Which probe's result to print: the last at the rate found, else the last run (none when none ran).
fn chosen(probes: &[ProbeRecord], found: &Found) -> Option<usize> {
    let at_capacity = probes.iter().rposition(|p| p.passed && Some(p.rate) == found.capacity);
    at_capacity.or(probes.len().checked_sub(1))
}

/// `probe 4: 800.0 req/s: met (...)`, or what it broke.
fn describe(nth: usize, probe: &ProbeRecord) -> String {
    let figures = format!(
        "{:.1} req/s served, mean {} ms, p99 {} ms, errors {:.2}%",
        probe.requests_per_s,
        figures::number(Metric::Mean, probe.mean_us, None),
        figures::number(Metric::Mean, probe.p99_us, None),
        probe.errors_pct
    );
    let verdict =
        if probe.passed { "met every objective".to_string() } else { format!("broke {}", probe.broke.join(", ")) };
    let saturated = if probe.client_saturated { "; the load generator was saturated" } else { "" };
    format!("probe {nth}: {:.1} req/s: {verdict} ({figures}){saturated}", probe.rate)
}

/// The search's answer in one paragraph.
fn summarize(record: &SearchRecord, slo: &[Condition]) -> String {
    let objectives = slo.iter().map(|c| c.text.as_str()).collect::<Vec<_>>().join(", ");
    let took = format!("{} probes in {:.0} s", record.probes.len(), record.seconds);
    let mut lines = vec![match (record.rate, record.failed_at, record.ended) {
        (Some(rate), Some(failed), Ended::Precise) => format!(
            "Rate found: {rate:.1} requests/s met {objectives}; {failed:.1} requests/s did not (within {:.0}%); {took}",
            record.precision * 100.0
        ),
        (Some(rate), None, _) => {
            format!("Rate found: at least {rate:.1} requests/s: every rate tried met {objectives}; {took}")
        }
        (Some(rate), Some(failed), _) => format!(
            "Rate found: {rate:.1} requests/s met {objectives}; {failed:.1} requests/s did not; the search stopped \
             ({}) before the bracket was within {:.0}%; {took}",
            stopped(record.ended),
            record.precision * 100.0
        ),
        (None, _, Ended::Floor) => format!("No rate met {objectives}, down to {FLOOR} requests/s; {took}"),
        (None, _, ended) => format!("No rate met {objectives} before the search stopped ({}); {took}", stopped(ended)),
    }];
    if record.client_bound {
        lines.push(
            "warning: the load generator was saturated at the rate that broke the objectives: the rate found may be \
             its limit, not the server's (a floor); give it more CPUs (-t) or load from agents"
                .into(),
        );
    }
    lines.join("\n")
}

/// Why a search stopped, as a reader is told.
fn stopped(ended: Ended) -> &'static str {
    match ended {
        Ended::Precise => "the bracket was precise",
        Ended::Ceiling => "the ceiling was met",
        Ended::Floor => "the floor was broken",
        Ended::Probes => "out of probes",
        Ended::Interrupted => "interrupted",
    }
}
