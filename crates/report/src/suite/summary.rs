//! [`SuiteSummary`]: what a suite's report says, built once from the [`Analysis`] and rendered by every
//! exporter: the table of servers × levels (throughput, latency, errors, server CPU and memory), the ratios with
//! their intervals, the SLO answers, the knees, the trials (a row each in `summary.csv`), the warnings of single
//! cells, and for the HTML report the per-second timelines and the environment. This is the data; how the servers
//! rank is [`crate::suite::ranking`]'s, the sentences every format shares are [`crate::suite::words`]'s and
//! [`crate::suite::verdicts`]'s, and the figures judged against the SLO [`crate::suite::marks`]', so that the
//! formats differ only in their markup.

use shootout_model::run::{Environment, TrialRecord};
use shootout_model::slo::Condition;

use crate::analysis::behind::CellLag;
use crate::analysis::by_parameter::{BestValue, ParameterSweep};
use crate::analysis::capacity::Capacity;
use crate::analysis::{Analysis, Cell, Ratio, ServiceCell, SloAnswer};
use crate::suite::profiles::ProfileView;
use crate::suite::report::{SuiteReport, Timeline};
use shootout_model::run::Statistic;

/// Everything a suite's report shows.
#[derive(Debug, Clone)]
pub struct SuiteSummary {
    /// The suite's name.
    pub name: String,
    /// What a level counts: "users", "users/s" or "req/s".
    pub unit: &'static str,
    /// The repeat figure servers are compared by.
    pub statistic: Statistic,
    /// The SLO conditions (empty without objectives).
    pub slo: Vec<Condition>,
    /// One row per server and level, by server then level.
    pub cells: Vec<Cell>,
    /// At every level, the fastest server against each other one.
    pub ratios: Vec<Ratio>,
    /// Each server's answer to the SLO (empty without objectives).
    pub slo_answers: Vec<SloAnswer>,
    /// Servers whose throughput stops rising, with the last level that still added 10% or more.
    pub knees: Vec<(String, f64)>,
    /// The trials, by server, repeat and level, one row each in `summary.csv` (empty unless given by
    /// [`SuiteSummary::with_trials`]).
    pub trials: Vec<TrialRecord>,
    /// Trials measured, whatever [`SuiteSummary::trials`] holds.
    pub trial_count: usize,
    /// The level of [`SuiteSummary::timelines`].
    pub timeline_level: f64,
    /// Per server, the second-by-second timeline of its first repeat at `timeline_level`.
    pub timelines: Vec<Timeline>,
    /// The machine and versions, when recorded.
    pub environment: Option<Environment>,
    /// The matrices' servers along their first parameter, when the suite has a matrix.
    pub sweep: Option<ParameterSweep>,
    /// Per matrix, the value that served the most within the SLO.
    pub best_values: Vec<BestValue>,
    /// The warnings of single cells, in words, in the table's order: an open-model cell whose repeats fell behind
    /// the offered rate ([`SuiteSummary::fell_behind`]), and a scenario's cell whose responses failed their checks
    /// ([`SuiteSummary::failed_checks`]) (empty unless given by [`SuiteSummary::with_trials`]).
    pub cell_warnings: Vec<String>,
    /// Each server's capacity under the SLO, when the run searched for it instead of sweeping levels (then no
    /// ratios, SLO answers or knees: the servers' levels differ, and the capacities answer those questions).
    pub capacities: Vec<Capacity>,
    /// The same suite's sweep against its search (the other run found beside this one), per server: empty when
    /// there is none.
    pub reconciled: Vec<crate::suite::reconcile::Reconciled>,
    /// Each profiled server's pass, beside its unprofiled figures (empty unless the run profiled).
    pub profiles: Vec<ProfileView>,
    /// Each server whose profiled pass kept no profile, with why (it ended during the pass, its profiler could
    /// not record).
    pub profiles_failed: Vec<(String, String)>,
}

impl SuiteSummary {
    /// The summary of `analysis`: its table, ratios, SLO answer and knees; no trials, timelines or environment.
    pub fn new(name: &str, unit: &'static str, slo: &[Condition], analysis: &Analysis) -> SuiteSummary {
        SuiteSummary {
            name: name.to_string(),
            unit,
            statistic: analysis.statistic,
            slo: slo.to_vec(),
            cells: analysis.cells.clone(),
            ratios: analysis.ratios.clone(),
            slo_answers: analysis.slo.clone(),
            knees: analysis.knees.iter().filter_map(|(server, knee)| Some((server.clone(), (*knee)?))).collect(),
            trials: Vec::new(),
            trial_count: 0,
            timeline_level: 0.0,
            timelines: Vec::new(),
            environment: None,
            sweep: None,
            best_values: Vec::new(),
            cell_warnings: Vec::new(),
            capacities: Vec::new(),
            reconciled: Vec::new(),
            profiles: Vec::new(),
            profiles_failed: Vec::new(),
        }
    }

    /// Adds the trials, by server name, then repeat, then level, and the warnings of their cells.
    pub fn with_trials(mut self, trials: &[TrialRecord]) -> SuiteSummary {
        let mut sorted: Vec<&TrialRecord> = trials.iter().collect();
        sorted.sort_by(|a, b| (&a.server, a.repeat).cmp(&(&b.server, b.repeat)).then(a.level.total_cmp(&b.level)));
        self.trials = sorted.into_iter().cloned().collect();
        self.trial_count = trials.len();
        let mut warnings = Vec::new();
        for cell in &self.cells {
            let runs: Vec<&TrialRecord> =
                trials.iter().filter(|t| t.server == cell.server && t.level == cell.level).collect();
            warnings.extend(self.measured_nothing(cell));
            warnings.extend(self.queue(cell));
            warnings.extend(self.spread(cell, &runs));
            warnings.extend(self.disturbed(cell));
            warnings.extend(self.crowded(cell, &runs));
            warnings.extend(CellLag::of(&runs).map(|lag| self.fell_behind(cell, &lag)));
            warnings.extend(self.failed_checks(cell, &runs));
        }
        self.cell_warnings = warnings;
        self
    }

    /// Everything the report of a results directory shows.
    pub fn of_report(report: &SuiteReport) -> SuiteSummary {
        let mut summary =
            SuiteSummary::new(&report.name, report.unit, &report.slo, &report.analysis).with_trials(&report.trials);
        summary.timeline_level = report.timeline_level;
        summary.timelines = report.timelines.clone();
        summary.environment = report.environment.clone();
        summary.sweep = ParameterSweep::of(&report.matrix);
        if let Some(sweep) = &summary.sweep {
            summary.best_values = sweep.best(&report.matrix, &summary.cells, &summary.slo_answers);
        }
        if !report.searches.is_empty() {
            summary.capacities =
                report.searches.iter().map(|s| Capacity::of(s, &summary.cells, &report.trials)).collect();
            summary.ratios.clear();
            summary.slo_answers.clear();
            summary.knees.clear();
            summary.best_values.clear();
        }
        summary
    }

    /// True when the client was the bottleneck in any cell.
    pub fn client_bound(&self) -> bool {
        self.cells.iter().any(Cell::client_bound)
    }

    /// The services any server ran beside, in the order of their first cell.
    pub fn services(&self) -> Vec<&str> {
        first_seen(self.cells.iter().flat_map(|c| &c.services).map(|s| s.name.as_str()))
    }

    /// A cell's figures of service `name` (none when its server did not run beside it).
    pub fn service<'a>(&self, cell: &'a Cell, name: &str) -> Option<&'a ServiceCell> {
        cell.services.iter().find(|s| s.name == name)
    }

    /// The servers, in the order of the table.
    pub fn servers(&self) -> Vec<&str> {
        first_seen(self.cells.iter().map(|c| c.server.as_str()))
    }

    /// The cell of `server` at `level`, if it was measured.
    pub fn cell(&self, server: &str, level: f64) -> Option<&Cell> {
        self.cells.iter().find(|c| c.server == server && c.level == level)
    }
}

/// Each name once, in the order it first comes.
fn first_seen<'a>(names: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let mut seen: Vec<&str> = Vec::new();
    for name in names {
        if !seen.contains(&name) {
            seen.push(name);
        }
    }
    seen
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::analysis::limit::Limit;
    use shootout_model::states::ThreadTime;

    /// A cell of `server` at `level` serving `rps`, client-bound or server-CPU-bound.
    pub(crate) fn cell(server: &str, level: f64, rps: f64, client_bound: bool) -> Cell {
        Cell {
            server: server.into(),
            level,
            rps: vec![rps],
            rps_median: rps,
            rps_headline: rps,
            rps_min: rps - 10.0,
            rps_max: rps + 10.0,
            mean_us: 1500.0,
            p50_us: 1200.0,
            p90_us: 2000.0,
            p99_us: 4321.0,
            errors_pct: 0.5,
            server_cpu_us: 42.25,
            pss_bytes: 50.0 * 1_048_576.0,
            services: Vec::new(),
            limit: if client_bound { Limit::Client } else { Limit::ServerCpu { busy: 0.966, cpus_busy: 0.97 } },
            meets_slo: true,
            objectives: vec![],
            failed: vec![],
            repeats: 1,
            queue_grew: None,
            ranges: Default::default(),
            time: ThreadTime::default(),
            throttled: 0.0,
            kernel: Default::default(),
            kept_rate: false,
            latencies: Vec::new(),
            server_busy: if client_bound { 0.3 } else { 0.966 },
            disturbed: Vec::new(),
        }
    }

    /// Two servers at one level, one of them client-bound and with a `|` in its name; a ratio and an SLO answer.
    pub(crate) fn report() -> SuiteReport {
        SuiteReport {
            name: "rack hello".into(),
            unit: "users",
            servers: vec!["puma".into(), "unicorn|3".into()],
            slo: vec![shootout_model::slo::parse_condition("mean < 1s").unwrap()],
            analysis: Analysis {
                cells: vec![cell("puma", 16.0, 1320.0, false), cell("unicorn|3", 16.0, 1000.0, true)],
                ratios: vec![Ratio {
                    level: 16.0,
                    figure: None,
                    faster: "puma".into(),
                    slower: "unicorn|3".into(),
                    ratio: Some(1.32),
                    low: Some(1.25),
                    high: Some(1.4),
                    clear: true,
                    bounds_meet: false,
                    client_bound: vec!["unicorn|3".into()],
                }],
                slo: vec![SloAnswer {
                    server: "puma".into(),
                    level: Some(16.0),
                    rps: Some(1320.0),
                    fails_at: None,
                    unmeasured_at: None,
                    measured: 1,
                }],
                knees: vec![],
                statistic: Statistic::Median,
            },
            environment: None,
            timeline_level: 16.0,
            timelines: vec![],
            trials: vec![],
            matrix: vec![],
            searches: vec![],
        }
    }

    /// The SLO `mean < 4ms, errors < 1%, max < 10ms` judged on [`report`]'s two cells: puma's mean of 3.9999 ms,
    /// errors of 0.996% and max of 9 ms meet it; unicorn's mean of 4.0001 ms and max of 12 ms break it.
    pub(crate) fn slo_report() -> SuiteReport {
        let mut report = report();
        let slo: Vec<Condition> = ["mean < 4ms", "errors < 1%", "max < 10ms"]
            .iter()
            .map(|c| shootout_model::slo::parse_condition(c).unwrap())
            .collect();
        let judge = |cell: &mut Cell, values: [f64; 3]| {
            cell.objectives = slo
                .iter()
                .zip(values)
                .map(|(c, value)| crate::analysis::Judged {
                    condition: c.clone(),
                    value,
                    met: crate::statistics::bound::holds(c, value),
                    bounds: None,
                    undecided: false,
                })
                .collect();
            (cell.mean_us, cell.errors_pct) = (values[0], values[1]);
            cell.meets_slo = cell.objectives.iter().all(|o| o.met);
        };
        judge(&mut report.analysis.cells[0], [3999.9, 0.996, 9000.0]);
        judge(&mut report.analysis.cells[1], [4000.1, 0.5, 12000.0]);
        report.slo = slo;
        report.analysis.slo[0].fails_at = None;
        report
    }

    /// A trial of `server` at `level`, repeat `repeat`, from the stored one.
    pub(crate) fn trial(server: &str, level: f64, repeat: u32) -> TrialRecord {
        let mut t: TrialRecord = serde_json::from_str(include_str!("../../tests/trial.json")).unwrap();
        (t.server, t.level, t.repeat) = (server.into(), level, repeat);
        t
    }
}
