//! From trials to answers: per server and level, the median and spread across repeats (or the best, as the
//! classic shootouts reported); each SLO objective judged on each cell's figures ([`Judged`]); ratios between
//! servers with 95% confidence intervals ([`ratios`]); the SLO answer (the highest level below the first
//! that breaks an objective, and its throughput); the knee (where throughput stops rising); and what limited each
//! cell ([`Limit`]).
//!
//! Beside the cells: [`slo`] (each condition judged on a cell, each server's answer to the SLO), [`ratios`] (the
//! verdicts between servers: requests/s, or latency at a rate every server kept to), [`limit`] (what held a cell back), [`unmeasured`](mod@unmeasured) (a repeat that measured nothing),
//! [`queue`] (an open-model queue that grew), [`behind`] (why a run fell behind its schedule), [`judge`] (the one
//! judge of a capacity search's probes), [`capacity`] (each server's capacity in words) and [`by_parameter`]
//! (matrices along their first parameter).

pub mod behind;
pub mod by_parameter;
pub mod capacity;
pub mod judge;
pub mod limit;
pub mod queue;
pub mod ratios;
pub mod slo;
pub mod unmeasured;

pub use ratios::Ratio;
pub use slo::{Judged, SloAnswer};

use crate::analysis::limit::mean_time;
use serde::Serialize;
use shootout_metrics::percentile_us;
use shootout_model::disturbed::Disturbance;
use shootout_model::pressure::Stalls;
use shootout_model::run::Statistic;
use shootout_model::run::TrialRecord;
use shootout_model::states::ThreadTime;

use shootout_model::slo::{Metric, Slo};

use crate::analysis::behind::completed_share;
use crate::analysis::limit::Limit;
use crate::analysis::queue::{queue_growth, QueueGrowth};
use crate::analysis::unmeasured::unmeasured;
use crate::statistics::bound::{at_least, holds};
use crate::statistics::figures::{errors_pct, value};
use crate::statistics::merged::Merged;
use crate::statistics::quantile::{Bounds, Decision};

/// One server at one level, over its repeats.
#[derive(Debug, Clone, Serialize)]
pub struct Cell {
    /// Server name.
    pub server: String,
    /// Level.
    pub level: f64,
    /// Requests per second of each repeat.
    pub rps: Vec<f64>,
    /// Median requests per second.
    pub rps_median: f64,
    /// The figure servers are compared by: the median, or the best repeat with [`Statistic::Best`].
    pub rps_headline: f64,
    /// Lowest and highest.
    pub rps_min: f64,
    /// Highest (the classic shootouts' "best of").
    pub rps_max: f64,
    /// Median of the repeats' mean latency, µs.
    pub mean_us: f64,
    /// Median of the repeats' latency percentiles, µs: 50, 90, 99.
    pub p50_us: f64,
    /// 90th.
    pub p90_us: f64,
    /// 99th.
    pub p99_us: f64,
    /// Median share of requests that failed or got status >= 400, percent.
    pub errors_pct: f64,
    /// Median server CPU time per response, µs.
    pub server_cpu_us: f64,
    /// Median of the mean PSS, bytes.
    pub pss_bytes: f64,
    /// The same of each service the server ran beside, in the suite's order (empty without services).
    pub services: Vec<ServiceCell>,
    /// What held it back: the client, the server's CPU, or neither (the server was waiting).
    pub limit: Limit,
    /// True when the medians across repeats meet every SLO condition.
    pub meets_slo: bool,
    /// Each SLO condition judged on the median of its figure across repeats (empty without an SLO).
    pub objectives: Vec<Judged>,
    /// The repeats that measured nothing ([`unmeasured`](fn@unmeasured)), left out of every figure above: a cell with one meets no
    /// SLO.
    pub failed: Vec<FailedRepeat>,
    /// The repeats run, measured or failed.
    pub repeats: usize,
    /// Open model: how the queue grew through the window, when it did in most repeats (the medians of theirs); then
    /// no latency objective is met.
    pub queue_grew: Option<QueueGrowth>,
    /// The lowest and highest of the repeats' figures behind the medians above, for the charts' spread.
    pub ranges: Ranges,
    /// Where the server's threads were, the mean over the repeats (no sweeps in results saved before them).
    pub time: ThreadTime,
    /// The median share of its CPU quota's periods that ran out (0 without a quota).
    pub throttled: f64,
    /// What the kernel counted about it: medians over the repeats ([`KernelCell`]).
    pub kernel: KernelCell,
    /// Open model: true when no repeat fell behind the rate offered (each completed 90% or more of the requests
    /// due) and under 1% of the requests failed; then the rate, not the server, set the requests/s, and the
    /// verdicts compare [`latencies`](Cell::latencies) instead ([`ratios`]).
    pub kept_rate: bool,
    /// Each repeat's figure of the latencies an open-model verdict compares ([`ratios::compared_latencies`]).
    pub latencies: Vec<LatencyRepeats>,
    /// The median share of the CPUs it could run on that the server's processes kept busy, 0 to 1 (kept beside
    /// the [`limit`](Cell::limit) it may not show: a client-bound cell's server can be saturated too).
    pub server_busy: f64,
    /// The repeats that something outside the run disturbed ([`shootout_model::disturbed`]), and by what.
    pub disturbed: Vec<Disturbance>,
}

/// One latency figure of each of a cell's repeats, µs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LatencyRepeats {
    /// The figure.
    pub metric: Metric,
    /// Its value in each measured repeat, µs.
    pub us: Vec<f64>,
    /// For a percentile, its 95% bounds over every repeat's requests together.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bounds: Option<Bounds>,
}

/// What the kernel counted about a server in one cell, each the median over its repeats: none of it is seen by a
/// thread of the server.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct KernelCell {
    /// Share of the window in which some task of its cgroup (of the host, for the root cgroup) stalled, by
    /// resource.
    pub stalled: Stalls,
    /// CPUs' worth of the kernel's deferred work (softirq) on its CPUs.
    pub softirq: f64,
    /// The share of the network and block I/O softirqs that were block I/O: above a half, that work was mostly a
    /// disk's.
    pub softirq_block: f64,
    /// Resets its host's TCP sent in the window.
    pub resets: f64,
    /// Connects its host dropped on a full listen queue in the window.
    pub listen_overflows: f64,
}

impl KernelCell {
    /// What the kernel's deferred work on the server's CPUs was mostly for, as the limit column and the kernel
    /// column name it: a disk's completions where block I/O softirqs outnumbered the network's.
    pub fn softirq_work(softirq_block: f64) -> &'static str {
        if softirq_block > 0.5 {
            "block I/O work"
        } else {
            "network work"
        }
    }

    /// The medians of `runs`.
    pub fn of(runs: &[&TrialRecord]) -> KernelCell {
        let of = |f: &dyn Fn(&TrialRecord) -> f64| median(&runs.iter().map(|t| f(t)).collect::<Vec<_>>());
        KernelCell {
            stalled: Stalls {
                cpu: of(&|t| t.usage.stalled.cpu),
                io: of(&|t| t.usage.stalled.io),
                memory: of(&|t| t.usage.stalled.memory),
            },
            softirq: of(&|t| t.usage.softirq),
            softirq_block: of(&|t| t.usage.softirq_block),
            resets: of(&|t| t.usage.resets as f64),
            listen_overflows: of(&|t| t.usage.listen_overflows as f64),
        }
    }
}

/// The lowest and the highest across a cell's repeats of each figure whose median it shows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Ranges {
    /// Mean latency, µs.
    pub mean_us: (f64, f64),
    /// Latency percentiles, µs: 50, 90, 99.
    pub p50_us: (f64, f64),
    /// 90th.
    pub p90_us: (f64, f64),
    /// 99th.
    pub p99_us: (f64, f64),
    /// Errors, percent.
    pub errors_pct: (f64, f64),
    /// Server CPU time per response, µs.
    pub server_cpu_us: (f64, f64),
    /// Mean PSS, bytes.
    pub pss_bytes: (f64, f64),
}

/// A repeat that measured nothing, and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FailedRepeat {
    /// Its repeat number.
    pub repeat: u32,
    /// Why, in words: `no answer in the window: its connects were not accepted`.
    pub cause: String,
}

/// One service's figures in one cell: medians across the repeats.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ServiceCell {
    /// The service's name.
    pub name: String,
    /// Its CPU time per response of the server, µs.
    pub cpu_us: f64,
    /// Its mean PSS, bytes.
    pub pss_bytes: f64,
    /// Its busy share of the CPUs it could run on, 0 to 1.
    pub busy: f64,
}

impl Cell {
    /// The figure of `metric`, in its unit (µs, percent, requests/s): the value an SLO condition was judged on, else
    /// the median across repeats of the mean, p50, p90, p99 or errors, or the median requests/s; none for another
    /// figure, which no table shows unless a condition judges it.
    pub fn figure(&self, metric: Metric) -> Option<f64> {
        if let Some(judged) = self.objectives.iter().find(|o| o.condition.metric == metric) {
            return Some(judged.value);
        }
        match metric {
            Metric::Mean => Some(self.mean_us),
            Metric::Percentile(50.0) => Some(self.p50_us),
            Metric::Percentile(90.0) => Some(self.p90_us),
            Metric::Percentile(99.0) => Some(self.p99_us),
            Metric::Errors => Some(self.errors_pct),
            Metric::Rps => Some(self.rps_median),
            _ => None,
        }
    }

    /// True when no objective is broken but one is undecided: the requests measured cannot tell whether the
    /// cell meets the SLO.
    pub fn undecided(&self) -> bool {
        self.objectives.iter().any(|o| o.undecided) && !self.objectives.iter().any(Judged::broken)
    }

    /// True when the client was the bottleneck in any repeat.
    pub fn client_bound(&self) -> bool {
        self.limit == Limit::Client
    }

    /// True when the server's CPUs were its limit whatever else was: its processes kept 90% or more of them busy,
    /// or half or more while some task of its cgroup waited for a CPU half the window or more (it wanted more
    /// than it got). A client-bound cell whose server was saturated too shows no ceiling of the client's alone.
    pub fn server_saturated(&self) -> bool {
        at_least(self.server_busy, limit::BOUND)
            || (at_least(self.server_busy, SATURATED_STALL) && at_least(self.kernel.stalled.cpu, SATURATED_STALL))
    }
}

/// The busy share, and the share of the window its tasks waited for a CPU, from which a server wanted more CPU than
/// it got ([`Cell::server_saturated`]).
pub const SATURATED_STALL: f64 = 0.5;

/// Everything the summary says.
#[derive(Debug, Clone, Serialize)]
pub struct Analysis {
    /// Cells, by server then level.
    pub cells: Vec<Cell>,
    /// At every level, the fastest server against each other one.
    pub ratios: Vec<Ratio>,
    /// The SLO answer per server (empty without objectives).
    pub slo: Vec<SloAnswer>,
    /// Per server: the first level that no higher one beats by 10% or more (none while the last still adds).
    pub knees: Vec<(String, Option<f64>)>,
    /// The repeat figure the verdicts use.
    pub statistic: Statistic,
}

/// The repeat figure `statistic` names, out of the repeats' `values`.
pub(crate) fn pick(statistic: Statistic, values: &[f64]) -> f64 {
    match statistic {
        Statistic::Median => median(values),
        Statistic::Best => values.iter().copied().fold(0.0, f64::max),
    }
}

/// Analyses `trials` for `servers` (in suite order) at `levels`, comparing by `statistic`.
pub fn analyze_by(
    trials: &[TrialRecord],
    servers: &[String],
    levels: &[f64],
    slo: &[Slo],
    statistic: Statistic,
) -> Analysis {
    let mut analysis = analyze(trials, servers, levels, slo);
    if statistic == Statistic::Best {
        for cell in &mut analysis.cells {
            cell.rps_headline = cell.rps_max;
        }
        analysis.ratios = ratios::ratios(&analysis.cells, levels, statistic);
        analysis.slo.iter_mut().for_each(|answer| {
            answer.rps = answer.level.and_then(|level| {
                analysis.cells.iter().find(|c| c.server == answer.server && c.level == level).map(|c| c.rps_headline)
            });
        });
        analysis.knees = knees(&analysis.cells, servers);
    }
    analysis.statistic = statistic;
    analysis
}

/// The median share of the requests due that open-model `trials` completed ([`completed_share`]); none for the
/// closed model and for arriving users.
pub fn completed<'a>(trials: impl IntoIterator<Item = &'a TrialRecord>) -> Option<f64> {
    let shares: Vec<f64> = trials.into_iter().filter_map(|t| completed_share(&t.result)).collect();
    (!shares.is_empty()).then(|| median(&shares))
}

/// Analyses `trials` for `servers` (in suite order) at `levels`, comparing medians.
pub fn analyze(trials: &[TrialRecord], servers: &[String], levels: &[f64], slo: &[Slo]) -> Analysis {
    let mut cells = Vec::new();
    for server in servers {
        let usual = usual_service_us(trials, server);
        for &level in levels {
            let runs: Vec<&TrialRecord> = trials.iter().filter(|t| &t.server == server && t.level == level).collect();
            if runs.is_empty() {
                continue;
            }
            // A repeat that measured nothing is a failure with its cause, not a zero in the figures.
            let mut measured: Vec<&TrialRecord> = Vec::new();
            let mut failed: Vec<FailedRepeat> = Vec::new();
            for &t in &runs {
                match unmeasured(&t.result) {
                    Some(cause) => failed.push(FailedRepeat { repeat: t.repeat, cause }),
                    None => measured.push(t),
                }
            }
            let mut cell = cell(server, level, if measured.is_empty() { &runs } else { &measured }, slo, usual);
            cell.failed = failed;
            cell.meets_slo &= cell.failed.is_empty();
            cell.repeats = runs.len();
            cells.push(cell);
        }
    }
    let ratios = ratios::ratios(&cells, levels, Statistic::Median);
    let slo_answers = if slo.is_empty() {
        Vec::new()
    } else {
        servers.iter().map(|server| SloAnswer::of(server, &cells, levels)).collect()
    };
    let knees = knees(&cells, servers);
    Analysis { cells, ratios, slo: slo_answers, knees, statistic: Statistic::Median }
}

/// How much more a higher level must serve for the throughput to be still rising: 10% ([`at_least`], so that 110
/// against 100 counts as much as 1,100 against 1,000).
pub const KNEE_GAIN: f64 = 1.1;

/// Per server, the first level that no higher one beats by 10% or more.
fn knees(cells: &[Cell], servers: &[String]) -> Vec<(String, Option<f64>)> {
    servers
        .iter()
        .map(|server| {
            let mine: Vec<&Cell> = cells.iter().filter(|c| &c.server == server).collect();
            // The first level that no higher one beats by 10%: a dip and a later climb (a JVM server that keeps
            // rising after a flat step) is not where throughput stopped. None while the last level still adds.
            let knee = (0..mine.len().saturating_sub(1))
                .find(|&i| mine[i + 1..].iter().all(|c| !at_least(c.rps_headline, KNEE_GAIN * mine[i].rps_headline)))
                .map(|i| mine[i].level);
            (server.clone(), knee)
        })
        .collect()
}

/// The median of `server`'s repeats' median service time at its lowest level measured, µs: how fast it answers
/// when not loaded, against which a higher level's shows requests queued inside it.
fn usual_service_us(trials: &[TrialRecord], server: &str) -> Option<f64> {
    let mine = || trials.iter().filter(|t| t.server == server && unmeasured(&t.result).is_none());
    let lowest = mine().map(|t| t.level).min_by(f64::total_cmp)?;
    let at: Vec<f64> =
        mine().filter(|t| t.level == lowest).map(|t| percentile_us(&t.result.service_time, 50.0) as f64).collect();
    Some(median(&at)).filter(|&us| us > 0.0)
}

fn cell(server: &str, level: f64, runs: &[&TrialRecord], slo: &[Slo], usual_service_us: Option<f64>) -> Cell {
    let of = |f: &dyn Fn(&TrialRecord) -> f64| median(&runs.iter().map(|t| f(t)).collect::<Vec<_>>());
    let percentile = |t: &TrialRecord, p: f64| percentile_us(&t.result.latency, p) as f64;
    let rps: Vec<f64> = runs.iter().map(|t| crate::statistics::figures::successful_per_s(&t.result)).collect();
    let queue_grew = grew(runs);
    // Each figure's median across the repeats, and its lowest and highest.
    let spread = |f: &dyn Fn(&TrialRecord) -> f64| {
        let values: Vec<f64> = runs.iter().map(|t| f(t)).collect();
        let range = values.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| (lo.min(v), hi.max(v)));
        (median(&values), range)
    };
    let (mean_us, mean_range) = spread(&|t| t.result.latency.mean_us);
    // Percentiles of every repeat's requests together, never a median of the repeats' percentiles (the median of
    // two p99s is a p99 neither repeat had); the repeats' own for the spread.
    let merged = Merged::of(runs);
    let (p50_us, p50_range) = merged.percentile_beside(50.0, spread(&|t| percentile(t, 50.0)));
    let (p90_us, p90_range) = merged.percentile_beside(90.0, spread(&|t| percentile(t, 90.0)));
    let (p99_us, p99_range) = merged.percentile_beside(99.0, spread(&|t| percentile(t, 99.0)));
    let (errors, errors_range) = spread(&|t| errors_pct(&t.result));
    let (server_cpu_us, cpu_range) = spread(&|t| t.usage.cpu_us_per_request);
    let (pss_bytes, pss_range) = spread(&|t| t.usage.pss_mean_bytes as f64);
    let ranges = Ranges {
        mean_us: mean_range,
        p50_us: p50_range,
        p90_us: p90_range,
        p99_us: p99_range,
        errors_pct: errors_range,
        server_cpu_us: cpu_range,
        pss_bytes: pss_range,
    };
    let objectives: Vec<Judged> = slo
        .iter()
        .map(|c| {
            // A latency met while the queue grew is met only for the window's length.
            let latency = matches!(c.metric, Metric::Mean | Metric::Percentile(_) | Metric::Max);
            let grew = latency && queue_grew.is_some();
            if let Metric::Percentile(p) = c.metric {
                if let Some((bounds, decision)) = merged.judge(c, p) {
                    return Judged {
                        condition: c.clone(),
                        value: bounds.value as f64,
                        met: decision == Decision::Met && !grew,
                        bounds: Some(bounds),
                        undecided: decision == Decision::Undecided && !grew,
                    };
                }
            }
            let value = of(&|t| value(c.metric, &t.result));
            Judged { condition: c.clone(), value, met: holds(c, value) && !grew, bounds: None, undecided: false }
        })
        .collect();
    Cell {
        server: server.to_string(),
        level,
        rps_median: median(&rps),
        rps_headline: median(&rps),
        rps_min: rps.iter().copied().fold(f64::INFINITY, f64::min),
        rps_max: rps.iter().copied().fold(0.0, f64::max),
        rps,
        mean_us,
        p50_us,
        p90_us,
        p99_us,
        errors_pct: errors,
        server_cpu_us,
        pss_bytes,
        services: service_cells(runs),
        limit: Limit::beside(runs, usual_service_us),
        meets_slo: objectives.iter().all(|o| o.met),
        objectives,
        failed: Vec::new(),
        repeats: runs.len(),
        queue_grew,
        ranges,
        time: mean_time(runs),
        throttled: median(&runs.iter().map(|t| t.usage.throttled).collect::<Vec<_>>()),
        kernel: KernelCell::of(runs),
        server_busy: median(&runs.iter().map(|t| t.usage.busy).collect::<Vec<_>>()),
        disturbed: shootout_model::disturbed::disturbed(runs),
        kept_rate: completed(runs.iter().copied()).is_some()
            && crate::analysis::behind::CellLag::of(runs).is_none()
            && errors < 100.0 * crate::analysis::limit::KEPT_ERRORS,
        latencies: ratios::compared_latencies(slo)
            .into_iter()
            .map(|metric| LatencyRepeats {
                metric,
                us: runs.iter().map(|t| value(metric, &t.result)).collect(),
                bounds: match metric {
                    Metric::Percentile(p) => merged.bounds(p),
                    _ => None,
                },
            })
            .collect(),
    }
}

/// How the queue grew in most of `runs` ([`queue_growth`]): the medians of their figures; none when most kept
/// their latency (or the model is closed).
fn grew(runs: &[&TrialRecord]) -> Option<QueueGrowth> {
    let grown: Vec<QueueGrowth> = runs.iter().filter_map(|t| queue_growth(&t.result)).collect();
    (grown.len() * 2 > runs.len()).then(|| {
        let of = |f: fn(&QueueGrowth) -> f64| median(&grown.iter().map(f).collect::<Vec<_>>());
        QueueGrowth { first_us: of(|g| g.first_us), last_us: of(|g| g.last_us), completed: of(|g| g.completed) }
    })
}

/// The services' figures of one cell, by the names of its first repeat's services.
pub(crate) fn service_cells(runs: &[&TrialRecord]) -> Vec<ServiceCell> {
    let Some(first) = runs.first() else { return Vec::new() };
    first
        .services
        .iter()
        .map(|service| {
            let of = |f: &dyn Fn(&shootout_model::run::ServerUsage) -> f64| {
                let name = &service.name;
                median(
                    &runs
                        .iter()
                        .filter_map(|t| t.services.iter().find(|s| &s.name == name))
                        .map(|s| f(&s.usage))
                        .collect::<Vec<_>>(),
                )
            };
            ServiceCell {
                name: service.name.clone(),
                cpu_us: of(&|u| u.cpu_us_per_request),
                pss_bytes: of(&|u| u.pss_mean_bytes as f64),
                busy: of(&|u| u.busy),
            }
        })
        .collect()
}

/// The median (the mean of the middle two for an even count; 0 for none).
pub fn median(values: &[f64]) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mid = sorted.len() / 2;
    if sorted.len() % 2 == 1 {
        sorted[mid]
    } else {
        (sorted[mid - 1] + sorted[mid]) / 2.0
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::ratios::ratio;
    use super::*;

    /// A cell of `server` at `level` with these repeats' requests/s and a mean (p99 twice it).
    pub(crate) fn cell(server: &str, level: f64, rps: &[f64], mean_us: f64) -> Cell {
        Cell {
            server: server.into(),
            level,
            rps: rps.to_vec(),
            rps_median: median(rps),
            rps_headline: median(rps),
            rps_min: 0.0,
            rps_max: 0.0,
            mean_us,
            p50_us: mean_us,
            p90_us: mean_us,
            p99_us: mean_us * 2.0,
            errors_pct: 0.0,
            server_cpu_us: 0.0,
            pss_bytes: 0.0,
            services: Vec::new(),
            limit: Limit::Unknown,
            meets_slo: true,
            objectives: vec![],
            failed: vec![],
            repeats: rps.len(),
            queue_grew: None,
            ranges: Ranges::default(),
            time: ThreadTime::default(),
            throttled: 0.0,
            kernel: KernelCell::default(),
            kept_rate: false,
            latencies: Vec::new(),
            server_busy: 0.0,
            disturbed: Vec::new(),
        }
    }

    #[test]
    fn medians() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert_eq!(median(&[]), 0.0);
    }

    #[test]
    fn best_of_compares_the_best_repeats() {
        let trial = |server: &str, rps: f64| -> TrialRecord {
            let mut t: TrialRecord = serde_json::from_str(include_str!("../../tests/trial.json")).unwrap();
            t.server = server.into();
            t.result.throughput.requests_per_s = rps;
            t
        };
        let trials = vec![
            trial("a", 100.0),
            trial("a", 300.0),
            trial("a", 110.0),
            trial("b", 150.0),
            trial("b", 160.0),
            trial("b", 155.0),
        ];
        let servers = vec!["a".to_string(), "b".to_string()];
        let by_median = analyze_by(&trials, &servers, &[4.0], &[], Statistic::Median);
        assert_eq!(by_median.ratios[0].faster, "b", "the median says b");
        let by_best = analyze_by(&trials, &servers, &[4.0], &[], Statistic::Best);
        assert_eq!(by_best.ratios[0].faster, "a", "the best repeat says a");
        assert!((by_best.ratios[0].ratio.unwrap() - 300.0 / 160.0).abs() < 1e-9);
    }

    /// Issue 61: one repeat's p99 passed (20 ms) and the other's failed (120 ms), and the probe was judged on
    /// their median, 70 ms, a p99 neither had. A percentile is of both repeats' requests together, with bounds.
    #[test]
    fn a_percentile_is_of_every_repeats_requests_never_a_median_of_theirs() {
        use shootout_metrics::histogram::{new_histogram, record_us_n};
        let trial = |repeat: u32, slow: u64| -> TrialRecord {
            let mut t: TrialRecord = serde_json::from_str(include_str!("../../tests/trial.json")).unwrap();
            let mut h = new_histogram();
            record_us_n(&mut h, 20_000, 1_000 - slow);
            record_us_n(&mut h, 120_000, slow);
            t.repeat = repeat;
            t.result.latency = shootout_metrics::summarize(&h);
            t.result.latency_blocks.clear();
            t
        };
        let trials = [trial(1, 5), trial(2, 15)];
        let slo = [shootout_model::slo::parse_condition("p99 < 30ms").unwrap()];
        let servers = [trials[0].server.clone()];
        let analysis = analyze(&trials, &servers, &[trials[0].level], &slo);
        let cell = &analysis.cells[0];
        let (p99_of_each, p99_of_all) = (
            [percentile_us(&trials[0].result.latency, 99.0), percentile_us(&trials[1].result.latency, 99.0)],
            cell.p99_us,
        );
        assert!(p99_of_each[0] < 21_000 && p99_of_each[1] > 119_000, "{p99_of_each:?}");
        assert!(p99_of_all < 21_000.0, "2,000 requests, 20 of them slow: p99 is 20 ms, not {p99_of_all}");
        let judged = &cell.objectives[0];
        assert_eq!(judged.value, p99_of_all);
        let bounds = judged.bounds.expect("a percentile has bounds");
        assert_eq!(bounds.requests, 2_000);
        // 1% slow exactly: the limit lies within the bounds, so neither met nor broken.
        assert!(judged.undecided && !judged.met && !judged.broken(), "{judged:?}");
        assert!(cell.undecided() && !cell.meets_slo);
    }

    #[test]
    fn the_knee_is_where_no_higher_level_adds_ten_percent() {
        let server = |rps: &[f64]| -> Vec<Cell> {
            rps.iter().enumerate().map(|(i, &r)| cell("s", f64::from(1 << i), &[r], 1.0)).collect()
        };
        let knee = |rps: &[f64]| knees(&server(rps), &["s".to_string()])[0].1;
        // Flat from 2 to 4 users, then rising again to 16: it stops rising at 16, not at 2.
        assert_eq!(knee(&[2470.0, 3678.0, 3037.0, 4264.0, 6932.0, 6618.0, 6848.0]), Some(16.0));
        assert_eq!(knee(&[100.0, 200.0, 205.0, 190.0]), Some(2.0));
        assert_eq!(knee(&[100.0, 200.0, 400.0]), None, "still rising at the last level");
    }

    /// Issue 40: 1.1 × 100 is 110.00000000000001 in floating point, so 110 did not beat 100 by 10% while 1,100
    /// beat 1,000: the knee depended on the magnitude of the figures.
    #[test]
    fn exactly_ten_percent_more_is_still_rising_at_any_magnitude() {
        let knee = |rps: [f64; 3]| {
            let cells: Vec<Cell> = [1.0, 4.0, 16.0].iter().zip(rps).map(|(&l, r)| cell("s", l, &[r], 1.0)).collect();
            knees(&cells, &["s".to_string()])[0].1
        };
        assert_eq!(knee([100.0, 110.0, 105.0]), Some(4.0));
        assert_eq!(knee([1000.0, 1100.0, 1050.0]), Some(4.0));
        assert_eq!(knee([0.1, 0.11, 0.105]), Some(4.0));
        assert_eq!(knee([100.0, 109.99, 105.0]), Some(1.0), "short of 10% by a hundredth");
    }

    #[test]
    fn a_ratio_and_its_interval() {
        let a = cell("a", 8.0, &[200.0, 210.0, 190.0, 205.0, 195.0], 1.0);
        let b = cell("b", 8.0, &[100.0, 104.0, 96.0, 102.0, 98.0], 1.0);
        let r = ratio(&a, &b, 8.0, Statistic::Median);
        assert_eq!(r.ratio, Some(2.0));
        let (low, high) = (r.low.unwrap(), r.high.unwrap());
        assert!(low <= 2.0 && high >= 2.0 && low > 1.85 && high < 2.15, "{r:?}");
        let one = cell("c", 8.0, &[100.0], 1.0);
        let r = ratio(&a, &one, 8.0, Statistic::Median);
        assert_eq!((r.ratio, r.low, r.high), (Some(2.0), None, None), "one repeat: no interval");
        let none = cell("d", 8.0, &[0.0, 0.0], 1.0);
        let r = ratio(&a, &none, 8.0, Statistic::Median);
        assert_eq!((r.ratio, r.low, r.high), (None, None, None), "no ratio to a server that served nothing");
        let r = ratio(&none, &none.clone(), 8.0, Statistic::Median);
        assert_eq!((r.ratio, r.low, r.high), (None, None, None), "nor between two");
    }
}
