//! `shootout load --find-rate`: the highest rate a server takes while every `--slo` objective holds, found by a
//! [`Search`] instead of by hand. Each probe is an open-model run of `-d` (after `--warmup`) at the rate the
//! search asks, started once the server is back at rest ([`Settler`]), and judged by the one judge of every
//! search ([`judge_probe`]), as a suite's probes are: its objectives, the share of the requests due the server
//! completed, and whether the client was the limit. A probe is one run, but one the answer rests on whose
//! percentile's bounds straddle a limit runs on up to a cap ([`measures_more`]); it is judged on its runs together
//! (medians, and percentiles of all their requests). Every run is printed as it ends; then the result at the rate found, and the search:
//! the bracket it ended in, the spread of the runs at the answer, the probes and the time they took (`--json`
//! gives that result with the whole search as `search`).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use shootout_engine::stakes::Stakes;
use shootout_engine::{open_files, Progress};
use shootout_harness::run::settle::Settler;
use shootout_model::run::{Statistic, TrialRecord};
use shootout_model::search::measures_more;
use shootout_model::search::{band_words, inside_band, Ended, Found, ProbeRecord, Search, SearchRecord, Step, Verdict};
use shootout_model::search::{
    CEILING_RATE as CEILING, FLOOR_RATE as FLOOR, MOST_PROBES, PRECISION, START_RATE as START,
};
use shootout_model::slo::{Condition, Metric};
use shootout_model::LoadResult;
use shootout_report::analysis::judge::{judge_probe, CLIENT_LIMIT};
use shootout_report::statistics::figures;

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
    open_files::ensure(options.most_connections()).map_err(|e| Failure::Usage(e.to_string()))?;
    if let Some(path) = &args.output {
        load::writable("-o", path)?;
    }

    let stop = Arc::new(AtomicBool::new(false));
    super::signals::watch(stop.clone(), || {});
    let began = Instant::now();
    let mut search = Search::new(start, precision, FLOOR, CEILING, false, MOST_PROBES);
    let mut runs: Vec<(ProbeRecord, LoadResult)> = Vec::new();
    let mut settler: Option<Settler> = None;
    let mut interrupted = false;
    let mut failed: Option<Failure> = None;
    let mut nth = 0;
    let found = 'search: loop {
        let (rate, decide) = match search.next() {
            Step::Probe(rate) => (rate, false),
            Step::Decide(rate) | Step::Confirm(rate) => (rate, true),
            Step::Found(found) => break found,
        };
        nth += 1;
        let mut these: Vec<LoadResult> = Vec::new();
        let verdict = loop {
            let settle_s = match settler.as_mut() {
                None => {
                    settler = Some(Settler::new(&options.url, options.protocol));
                    0.0
                }
                Some(settler) => settle(settler, &stop, nth),
            };
            if stop.load(Ordering::Relaxed) {
                interrupted = true;
                break 'search search.cut_short();
            }
            let result = match probe(args, scenario, rate, precision, &stop) {
                Ok(result) => result,
                Err(failure) => {
                    failed = Some(failure);
                    break 'search search.cut_short();
                }
            };
            let record = record(rate, &result, settle_s, these.len() + 1);
            if result.interrupted {
                interrupted = true;
                runs.push((record, result));
                break 'search search.cut_short();
            }
            these.push(result);
            let verdict = judge(&args.slo, &these, rate, precision);
            let measured: f64 = these.iter().map(|r| r.duration_s).sum();
            let done = !measures_more(&verdict, decide, these.len() as u32, measured);
            tell!("{}", describe(nth, &record, &verdict, done, these.len(), decide));
            runs.push((record, these.last().cloned().expect("pushed above")));
            if done {
                break verdict;
            }
        };
        // The probe's verdict stands for each of its runs.
        for (record, _) in runs.iter_mut().rev().take(these.len()) {
            record.passed = verdict.passed;
            record.undecided = verdict.undecided;
            record.broke.clone_from(&verdict.broke);
        }
        if verdict.client {
            search.record_client(rate, verdict.floor);
        } else if verdict.undecided && !decide {
            search.record_provisional(rate, verdict.leans, Some(verdict.served));
        } else {
            search.record(rate, verdict.passed, Some(verdict.served));
        }
    };
    let (probes, mut results): (Vec<ProbeRecord>, Vec<LoadResult>) = runs.into_iter().unzip();
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
        client_bound: found.ended == Ended::Client,
        moved: search.moved(),
        settling_s: probes.iter().map(|p| p.settle_s).sum(),
        probes,
        seconds: began.elapsed().as_secs_f64(),
    };
    let summary = summarize(&record, &args.slo, band(&search, &found));
    result.search = Some(record);
    load::emit(args, &result)?;
    if args.json {
        tell!("{summary}");
    } else {
        say!("{summary}");
    }
    if let Some(failure) = failed {
        return Err(failure);
    }
    if interrupted {
        return Err(Failure::Interrupted);
    }
    match found.capacity {
        Some(_) => Ok(()),
        None if found.ended == Ended::Client => {
            Err(Failure::Threshold("the load generator was saturated before any rate met the objectives".into()))
        }
        None => Err(Failure::Threshold(format!("no rate down to {FLOOR} requests/s met the objectives"))),
    }
}

/// Brings the server back to rest before run `nth`, saying so when it took long or did not happen; the seconds
/// it took.
fn settle(settler: &mut Settler, stop: &AtomicBool, nth: usize) -> f64 {
    let rest = settler.settle(stop);
    if let Some(notice) = rest.notice() {
        tell!("shootout: the server, before probe {nth}: {notice}");
    }
    rest.took.as_secs_f64()
}

/// The figures of one run at `rate`, its verdict to be filled in once its probe is judged.
fn record(rate: f64, result: &LoadResult, settle_s: f64, run: usize) -> ProbeRecord {
    ProbeRecord {
        rate,
        passed: false,
        requests_per_s: figures::successful_per_s(result),
        mean_us: result.latency.mean_us,
        p99_us: figures::value(Metric::Percentile(99.0), result),
        errors_pct: figures::errors_pct(result),
        broke: Vec::new(),
        client_saturated: result.client.saturated,
        settle_s,
        run: run as u32,
        left_out: result.requests.left_out,
        undecided: false,
    }
}

/// The probe at `rate` judged from its runs so far, by the judge every search uses.
fn judge(slo: &[Condition], runs: &[LoadResult], rate: f64, precision: f64) -> Verdict {
    let trials: Vec<TrialRecord> = runs
        .iter()
        .enumerate()
        .map(|(i, result)| TrialRecord {
            server: "target".into(),
            level: rate,
            repeat: i as u32 + 1,
            result: result.clone(),
            samples: Vec::new(),
            usage: Default::default(),
            services: Vec::new(),
            outsiders: Vec::new(),
        })
        .collect();
    judge_probe(&trials, slo, Statistic::Median, precision)
}

/// One run of a probe: the load at `rate`, with the progress bar of a load run; far behind the rate when its
/// window ends, or sure to meet every objective whatever its stragglers do, it stops waiting for them ([`Stakes`]).
fn probe(
    args: &LoadArgs,
    scenario: Option<&shootout_scenario::Scenario>,
    rate: f64,
    precision: f64,
    stop: &Arc<AtomicBool>,
) -> Result<LoadResult, Failure> {
    let (options, body) = load::validate(args, scenario, Some(rate))?;
    let mut plan = load::plan(options, &body, scenario)?;
    plan.stakes = Some(Stakes::of_probe(&args.slo, precision));
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

/// `probe 4: 800.0 req/s: met every objective (...)`, or what it broke; for a run of a probe that must decide an
/// undecided percentile, `probe 4, run 1: 800.0 req/s: p99 < 30ms undecided (...); measuring more (...)`.
fn describe(nth: usize, run: &ProbeRecord, verdict: &Verdict, done: bool, runs: usize, decide: bool) -> String {
    let mut figures = format!(
        "{:.1} req/s served, mean {} ms, p99 {} ms, errors {:.2}%",
        run.requests_per_s,
        figures::number(Metric::Mean, run.mean_us, None),
        figures::number(Metric::Mean, run.p99_us, None),
        run.errors_pct
    );
    if run.left_out > 0 {
        figures +=
            &format!(", {} left out (still in flight once nothing they did could change the verdict)", run.left_out);
    }
    let over = if runs > 1 { format!(" over {runs} runs") } else { String::new() };
    let others: Vec<&str> = verdict.broke.iter().map(String::as_str).filter(|b| *b != CLIENT_LIMIT).collect();
    let verdict = match (done, verdict.passed) {
        // Only a percentile still undecided runs a probe again.
        (false, _) => {
            format!("{}; measuring more", verdict.broke.iter().find(|b| b.contains("undecided")).map_or("", |b| b))
        }
        (true, true) => format!("met every objective{over}"),
        (true, false) if verdict.client && others.is_empty() => {
            format!("{CLIENT_LIMIT}{over}, while every objective held: the server took at least what it completed")
        }
        (true, false) if verdict.client => {
            format!("{CLIENT_LIMIT}{over}; the search goes on under it (it also broke {})", others.join(", "))
        }
        (true, _) if verdict.undecided && !decide => {
            let leans = if verdict.leans { "a pass" } else { "a failure" };
            format!("{}{over}; counted as {leans} for now, decided if the answer rests on it", verdict.broke.join(", "))
        }
        (true, false) if verdict.undecided => {
            format!("{}{over}, not decided within the probe's cap: counted against the rate", verdict.broke.join(", "))
        }
        (true, false) => format!("broke {}{over}", verdict.broke.join(", ")),
    };
    let which = if runs > 1 || !done { format!("probe {nth}, run {runs}") } else { format!("probe {nth}") };
    format!("{which}: {:.1} req/s: {verdict} (this run: {figures})", run.rate)
}

/// When the probes disagreed, what the band between the rate found and the rate that broke it holds.
fn band(search: &Search, found: &Found) -> Option<String> {
    let (lo, hi) = (found.capacity.unwrap_or(0.0), found.failed_at.unwrap_or(f64::INFINITY));
    // Every probe counts, an undecided one as its figures lean, as the search counted it.
    let judged = search.probes().iter().filter(|p| !p.client);
    let inside = inside_band(judged.map(|p| (p.level, p.passed)), lo, hi);
    search.moved().then(|| band_words(&inside, |rate| format!("{rate:.1} requests/s")))
}

/// The search's answer in one paragraph: the rate found and the bracket, the spread of the runs at the answer
/// when it ran more than once, and what the reader must know (the client's limit, the `band` when the probes
/// disagreed).
fn summarize(record: &SearchRecord, slo: &[Condition], band: Option<String>) -> String {
    let objectives = slo.iter().map(|c| c.text.as_str()).collect::<Vec<_>>().join(", ");
    let probes = record.probes.iter().filter(|p| p.run == 1).count();
    let settling = match record.settling_s {
        s if s >= 1.0 => format!(", {s:.0} s of it bringing the server back to rest"),
        _ => String::new(),
    };
    let took = format!("{probes} probes ({} runs) in {:.0} s{settling}", record.probes.len(), record.seconds);
    // The lowest rate at which the load generator was saturated: the client's limit.
    let limit =
        record.probes.iter().filter(|p| p.client_saturated && !p.passed).map(|p| p.rate).fold(f64::NAN, f64::min);
    let mut lines = vec![match (record.rate, record.failed_at, record.ended) {
        (Some(rate), _, Ended::Client) => format!(
            "Rate found: at least {rate:.1} requests/s met {objectives}: the load generator was saturated at \
             {limit:.1} requests/s, so the server's limit was not reached (give it more CPUs with -t, or load from \
             agents); {took}"
        ),
        (None, _, Ended::Client) => format!(
            "No rate found: the load generator was saturated at {limit:.1} requests/s before any rate met \
             {objectives}; {took}"
        ),
        (Some(rate), Some(failed), Ended::Precise) => format!(
            "Rate found: {rate:.1} requests/s met {objectives}; {failed:.1} requests/s {} (a bracket within \
             {:.0}%){}; {took}",
            did_not(record, failed),
            record.precision * 100.0,
            spread(record, rate)
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
    if let Some(band) = band {
        lines.push(format!("warning: {band} (the probes above are in the order they ran)"));
    }
    lines.join("\n")
}

/// What the level above the rate found did: `did not`, or `stayed undecided (too few requests to tell whether a
/// percentile met its limit)` when its latest probe's bounds straddled a limit at the cap.
fn did_not(record: &SearchRecord, failed: f64) -> &'static str {
    match record.probes.iter().rev().find(|p| p.rate == failed).is_some_and(|p| p.undecided) {
        true => "stayed undecided (too few requests to tell whether a percentile met its limit)",
        false => "did not",
    }
}

/// `; at 640.0 requests/s it served 630.2–639.9 req/s over 3 runs`, when the rate found ran more than once.
fn spread(record: &SearchRecord, rate: f64) -> String {
    let served: Vec<f64> = record.probes.iter().filter(|p| p.rate == rate).map(|p| p.requests_per_s).collect();
    if served.len() < 2 {
        return String::new();
    }
    let (low, high) = served.iter().fold((f64::INFINITY, 0.0f64), |(l, h), &s| (l.min(s), h.max(s)));
    format!("; at {rate:.1} requests/s it served {low:.1}–{high:.1} req/s over {} runs", served.len())
}

/// Why a search stopped, as a reader is told.
fn stopped(ended: Ended) -> &'static str {
    match ended {
        Ended::Precise => "the bracket was precise",
        Ended::Ceiling => "the ceiling was met",
        Ended::Floor => "the floor was broken",
        Ended::Probes => "out of probes",
        Ended::Interrupted => "interrupted",
        Ended::Client => "the load generator was saturated",
    }
}
