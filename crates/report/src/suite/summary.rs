//! [`SuiteSummary`]: what a suite's report says, built once from the [`Analysis`] and rendered by every
//! [exporter](crate::export): the table of servers × levels (throughput, latency, errors, server CPU and memory),
//! the ratios with their intervals, the SLO answer, the knees, the trials (a row each in `summary.csv`), and for the
//! HTML report the per-second timelines and the environment. The phrases every format shares (a ratio, an SLO
//! answer, a knee, what a ratio without a figure means, the client-bound warning) are written here too, and the
//! figures judged against the SLO in [`crate::suite::marks`], so that the formats differ only in their markup.

use shootout_model::run::{Environment, TrialRecord};
use shootout_model::slo::Condition;

use crate::analysis::behind::{Behind, CellLag};
use crate::analysis::by_parameter::{BestValue, ParameterSweep};
use crate::analysis::capacity::Capacity;
use crate::analysis::limit::BOUND as SATURATION;
use crate::analysis::{Analysis, Cell, Ratio, ServiceCell, SloAnswer};
use crate::suite::profiles::ProfileView;
use crate::suite::report::{SuiteReport, Timeline};
use crate::suite::verdicts::ratio_figures;
use crate::units::count;
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
    /// The summary of `analysis`: its table, ratios, SLO answer and knees; no trial rows, timelines or environment.
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
            warnings.extend(CellLag::of(&runs).map(|lag| self.fell_behind(cell, &lag)));
            warnings.extend(self.failed_checks(cell, &runs));
        }
        self.cell_warnings = warnings;
        self
    }

    /// A cell with repeats that measured nothing, in words: `a at 256 users: repeat 2 of 3 measured nothing (no
    /// answer in the window: its connects were not accepted): a failed trial, left out of the figures, and the cell
    /// meets no SLO`; none when every repeat measured something.
    pub fn measured_nothing(&self, cell: &Cell) -> Option<String> {
        if cell.failed.is_empty() {
            return None;
        }
        let (repeats, all) = (cell.repeats, cell.failed.len() == cell.repeats);
        let which: Vec<String> = cell.failed.iter().map(|f| format!("repeat {} ({})", f.repeat, f.cause)).collect();
        let noun = if cell.failed.len() == 1 { "a failed trial" } else { "failed trials" };
        let left = if all { "no repeat measured anything" } else { "left out of the figures" };
        Some(format!(
            "{} at {}: {} of {repeats} measured nothing: {}: {noun}, {left}, and the cell meets no SLO",
            cell.server,
            self.level(cell.level),
            plural_repeats(cell.failed.len()),
            which.join("; ")
        ))
    }

    /// A cell whose repeats' requests/s spread more than [`SPREAD`] times apart, in words, with what else used the
    /// machine meanwhile: `a at 64 users: its repeats spread from 1827.0 to 3952.0 requests/s (2.16× apart, 1.5× or
    /// more), so its median hides a change between them; during repeat 2, another process, stress (pid 4242), used
    /// 40% of a CPU`; none within the bound.
    pub fn spread(&self, cell: &Cell, runs: &[&TrialRecord]) -> Option<String> {
        let (low, high) = (cell.rps_min, cell.rps_max);
        if cell.rps.len() < 2 || low <= 0.0 || !crate::statistics::bound::at_least(high, SPREAD * low) {
            return None;
        }
        let others: Vec<String> = runs
            .iter()
            .flat_map(|t| t.outsiders.iter().map(move |o| (t.repeat, o)))
            .map(|(repeat, o)| {
                format!(
                    "during repeat {repeat}, another process, {} (pid {}), used {:.0}% of a CPU",
                    o.name,
                    o.pid,
                    o.share * 100.0
                )
            })
            .collect();
        let why = match others.is_empty() {
            true => "no process outside the run used 5% of a CPU meanwhile: the server or the machine varied".into(),
            false => others.join("; "),
        };
        Some(format!(
            "{} at {}: its repeats spread from {low:.1} to {high:.1} requests/s ({:.2}× apart, {SPREAD}× or more), so \
             its median hides a change between them; {why}",
            cell.server,
            self.level(cell.level),
            high / low
        ))
    }

    /// A cell resting on trials that something outside the run disturbed (each measured again as the suite allowed,
    /// and still disturbed), in words: `a at 400 req/s rests on a disturbed trial: stress (pid 4242) took 62% of a
    /// CPU on the server's CPUs during repeat 2`; none when no repeat was.
    pub fn disturbed(&self, cell: &Cell) -> Option<String> {
        if cell.disturbed.is_empty() {
            return None;
        }
        let noun = if cell.disturbed.len() == 1 { "a disturbed trial" } else { "disturbed trials" };
        let what: Vec<String> = cell.disturbed.iter().map(|d| d.text()).collect();
        Some(format!("{} at {} rests on {noun}: {}", cell.server, self.level(cell.level), what.join("; ")))
    }

    /// An open-model cell whose queue grew through the window, in words: `a at 115 req/s: its queue grew through
    /// the window (median latency 143.0 → 422.0 ms from its first third to its last, 95.1% of the requests due
    /// completed): no latency objective is met at a rate the server cannot sustain, however its window's figures
    /// read`; none when it did not.
    pub fn queue(&self, cell: &Cell) -> Option<String> {
        let grew = cell.queue_grew?;
        Some(format!(
            "{} at {}: its queue grew through the window (median latency {} → {} ms from its first third to its last, \
             {:.1}% of the requests due completed): no latency objective is met at a rate the server cannot sustain, \
             however its window's figures read",
            cell.server,
            self.level(cell.level),
            crate::units::ms(grew.first_us),
            crate::units::ms(grew.last_us),
            grew.completed * 100.0
        ))
    }

    /// A scenario's cell whose responses failed their checks, in words, each way they failed added up over the
    /// repeats: `a at 4 users: 5,026 of 5,026 responses failed their checks (login: expected status 200, got 302:
    /// 5,026), so its figures may not measure the pages the scenario means`; none when every one passed.
    pub fn failed_checks(&self, cell: &Cell, runs: &[&TrialRecord]) -> Option<String> {
        let failed: u64 = runs.iter().map(|t| t.result.requests.checks_failed).sum();
        if failed == 0 {
            return None;
        }
        let responses: u64 = runs.iter().map(|t| t.result.requests.ok + t.result.requests.http_errors).sum();
        let mut ways: Vec<(&str, &str, &str, u64)> = Vec::new();
        for c in runs.iter().flat_map(|t| &t.result.failed_checks) {
            match ways.iter_mut().find(|w| (w.0, w.1, w.2) == (&c.request, &c.expected, &c.got)) {
                Some(way) => way.3 += c.count,
                None => ways.push((&c.request, &c.expected, &c.got, c.count)),
            }
        }
        let ways: Vec<String> = ways
            .iter()
            .map(|(request, expected, got, n)| format!("{request}: expected {expected}, got {got}: {}", count(*n)))
            .collect();
        Some(format!(
            "{} at {}: {} of {} responses failed their checks ({}), so its figures may not measure the pages the \
             scenario means",
            cell.server,
            self.level(cell.level),
            count(failed),
            count(responses),
            ways.join("; ")
        ))
    }

    /// An open-model cell that fell behind the offered rate, in words: `a at 2000 req/s completed 970.0 of the
    /// 2000.0 requests/s offered (2 of 3 repeats fell behind): the server did not keep up, its requests queueing
    /// inside it`.
    pub fn fell_behind(&self, cell: &Cell, lag: &CellLag) -> String {
        let repeats = if lag.repeats > 1 {
            format!(" ({} of {} repeats fell behind)", lag.behind, lag.repeats)
        } else {
            String::new()
        };
        // All the connections busy, but the cell's limit is not them (its server answered far slower than at its
        // lowest level, or its CPU was full): the server's own queue, as the limit column says.
        let by = match lag.by {
            Behind::Connections { .. } if !matches!(cell.limit, crate::analysis::limit::Limit::Connections { .. }) => {
                Behind::Server
            }
            by => by,
        };
        let why = match by {
            Behind::Server => "the server did not keep up, its requests queueing inside it".to_string(),
            Behind::Connections { connections, service_p50_us } => format!(
                "every one of the client's {connections} connections was busy while the server answered each in {:.3} ms \
                 (median): the connections, not the server, set this figure",
                service_p50_us as f64 / 1000.0
            ),
            Behind::Late => "the client sent late while its connections stood free: something else held it up \
                (another process on its CPUs)"
                .to_string(),
            Behind::Client => "the client was short of CPU: this figure measures shootout".to_string(),
        };
        format!(
            "{} at {} completed {:.1} of the {:.1} requests/s offered{repeats}: {why}",
            cell.server,
            self.level(cell.level),
            cell.rps_median,
            lag.offered_per_s
        )
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

    /// The title of the capacities: `Capacity under the SLO (mean < 1s), searched to 5%`.
    pub fn capacity_title(&self) -> String {
        let precision = self.capacities.first().map_or(0.0, |c| c.search.precision * 100.0);
        format!("Capacity under the SLO ({}), searched to {precision}%", self.slo_text())
    }

    /// The repeat figure servers are compared by, as a word: `median` or `best`.
    pub fn statistic_name(&self) -> &'static str {
        match self.statistic {
            Statistic::Median => "median",
            Statistic::Best => "best",
        }
    }

    /// The SLO as written: `mean < 1s, errors < 1%`.
    pub fn slo_text(&self) -> String {
        self.slo.iter().map(|c| c.text.as_str()).collect::<Vec<_>>().join(", ")
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

    /// The capacities ranked, the highest first (none found last).
    pub fn ranked_capacities(&self) -> Vec<&Capacity> {
        let mut ranked: Vec<&Capacity> = self.capacities.iter().collect();
        let key = |c: &Capacity| c.search.capacity.unwrap_or(f64::NEG_INFINITY);
        ranked.sort_by(|a, b| key(b).total_cmp(&key(a)));
        ranked
    }

    /// The SLO answers ranked, best first: by the level answered (none last), then its requests/s.
    pub fn ranked_slo_answers(&self) -> Vec<&SloAnswer> {
        let mut ranked: Vec<&SloAnswer> = self.slo_answers.iter().collect();
        let key = |a: &SloAnswer| (a.level.unwrap_or(f64::NEG_INFINITY), a.rps.unwrap_or(0.0));
        ranked.sort_by(|a, b| {
            let (x, y) = (key(a), key(b));
            y.0.total_cmp(&x.0).then(y.1.total_cmp(&x.1))
        });
        ranked
    }

    /// Where the SLO answers do not rank two servers: each pair next in the ranking that met it up to the same level
    /// with no clear difference in requests/s there (their brackets overlap, and their interval reaches 1 or the
    /// noise floor): `no clear winner between a and b: both met it up to 16 users (a served 1.01× [0.98–1.04] the
    /// requests/s of b there)`.
    pub fn no_clear_winners(&self) -> Vec<String> {
        let ranked = self.ranked_slo_answers();
        let mut unjudged = false;
        let mut lines: Vec<String> = ranked
            .windows(2)
            .filter_map(|pair| {
                let (a, b) = (pair[0], pair[1]);
                let level = a.level.filter(|&l| b.level == Some(l))?;
                let (x, y) = (self.cell(&a.server, level)?, self.cell(&b.server, level)?);
                // The verdicts' own ratio of the two, so that "clear" means here what it means there: latency at a
                // rate both kept to, else requests/s.
                let r = crate::analysis::ratios::verdict(x, y, level, self.statistic);
                if r.low.is_none() {
                    unjudged = true; // said once, below
                    return None;
                }
                if r.clear || r.ratio.is_none() {
                    return None;
                }
                Some(format!(
                    "no clear winner between {} and {}: both met it up to {} ({} there)",
                    a.server,
                    b.server,
                    self.level(level),
                    self.ratio_clause(&r, &|n| n.to_string(), &ratio_figures(&r)),
                ))
            })
            .collect();
        if unjudged {
            lines.push(
                "where servers met it up to the same level, their order there is by the figures alone: too few \
                 repeats for an interval, so no verdict"
                    .into(),
            );
        }
        lines
    }

    /// A server's knee: `puma: throughput stops rising at 16 users (no higher level serves 10% more)`; where a cell
    /// from there up was client-bound, `…, where the client was the limit: the client's ceiling, not the server's`,
    /// unless the server was saturated there too ([`Cell::server_saturated`]): `…, where the client and the server
    /// were both at their limit (server CPU 88%, its tasks waiting for a CPU 100% of the time): the ceiling of
    /// both`.
    pub fn knee(&self, server: &str, level: f64) -> String {
        let bound: Vec<&Cell> =
            self.cells.iter().filter(|c| c.server == server && c.level >= level && c.client_bound()).collect();
        let percent = |share: f64| crate::statistics::bound::figure(share * 100.0, Some(SATURATION * 100.0), 0);
        let why = match (bound.is_empty(), bound.iter().find(|c| c.server_saturated())) {
            (true, _) => String::new(),
            (false, None) => ", where the client was the limit: the client's ceiling, not the server's".into(),
            (false, Some(both)) => format!(
                ", where the client and the server were both at their limit (server CPU {}%, its tasks waiting for a \
                 CPU {}% of the time at {}): the ceiling of both",
                percent(both.server_busy),
                percent(both.kernel.stalled.cpu),
                self.level(both.level)
            ),
        };
        format!("{server}: throughput stops rising at {} (no higher level serves 10% more){why}", self.level(level))
    }

    /// A level with its unit: `16 users`, `1 user`.
    pub fn level(&self, level: f64) -> String {
        crate::units::level(level, self.unit)
    }

    /// A matrix's answer: `puma -w {workers} -t {threads}: workers = 4, threads = 5 served the most within the SLO
    /// (mean < 1s): 4512.0 requests/s at 64 users; within 5% of it: workers = 2, threads = 5`.
    pub fn best_value(&self, best: &BestValue) -> String {
        let values = |params: &[(String, String)]| -> String {
            params.iter().map(|(k, v)| format!("{k} = {v}")).collect::<Vec<_>>().join(", ")
        };
        let within = if self.slo.is_empty() { String::new() } else { format!(" within the SLO ({})", self.slo_text()) };
        let close = match best.close.is_empty() {
            true => String::new(),
            false => format!(
                "; within {:.0}% of it: {}",
                crate::analysis::by_parameter::CLOSE * 100.0,
                best.close.iter().map(|p| values(p)).collect::<Vec<_>>().join("; ")
            ),
        };
        format!(
            "{}: {} served the most{within}: {:.1} requests/s at {}{close}",
            best.family,
            values(&best.params),
            best.rps,
            self.level(best.level)
        )
    }

    /// A server's answer to the SLO: the highest level below the first that breaks it or has no trial: `up to 4
    /// users, 820.0 requests/s (breaks it at 16 users)`, `up to 16 users, 1320.0 requests/s (every level met it)`,
    /// `up to 1 user, 110.0 requests/s (no trial measured at 4 users)`, `none: breaks it at the lowest level, 1
    /// user`, `none: no trial measured at the lowest level, 1 user`, or `not run` for a server with nothing
    /// measured (an interrupted suite).
    pub fn slo_answer(&self, answer: &SloAnswer) -> String {
        let nothing = |level: f64| {
            self.cells.iter().any(|c| {
                c.server == answer.server
                    && c.level == level
                    && !c.failed.is_empty()
                    && c.objectives.iter().all(|o| o.met)
            })
        };
        let queued = |level: f64| self.cell(&answer.server, level).is_some_and(|c| c.queue_grew.is_some());
        let undecided = |level: f64| {
            self.cell(&answer.server, level).filter(|c| c.undecided()).map(|c| {
                let which = c.objectives.iter().filter(|o| o.undecided);
                which.map(|o| format!("{} {}", o.condition.text, o.bounds_text())).collect::<Vec<_>>().join(", ")
            })
        };
        let undecided_at = answer.fails_at.and_then(undecided);
        let stop = match (answer.fails_at, answer.unmeasured_at) {
            (Some(level), _) if undecided_at.is_some() => Some(("undecided at", level)),
            (Some(level), _) if nothing(level) => Some(("a repeat measured nothing at", level)),
            (Some(level), _) if queued(level) => Some(("its queue grew at", level)),
            (Some(level), _) => Some(("breaks it at", level)),
            (None, Some(level)) => Some(("no trial measured at", level)),
            (None, None) => None,
        };
        // A cell whose figures measured the client says so: the server's own figure there is at least as good.
        let client = |level: f64| self.cell(&answer.server, level).is_some_and(Cell::client_bound);
        let at_least = answer.level.is_some_and(client);
        let cause = |level: f64| match (&undecided_at, client(level)) {
            (Some(which), _) => format!(": too few requests to tell, {which}"),
            (None, true) => ", where the client was the limit".to_string(),
            (None, false) => String::new(),
        };
        let (least, note) = match (at_least, answer.level) {
            (true, Some(level)) => ("at least ", format!("; the client was the limit at {}", self.level(level))),
            _ => ("", String::new()),
        };
        match (answer.measured, answer.level, answer.rps, stop) {
            (0, ..) => "not run".into(),
            (_, Some(level), Some(rps), Some((why, at))) => format!(
                "up to {}, {least}{rps:.1} requests/s ({why} {}{}{note})",
                self.level(level),
                self.level(at),
                cause(at)
            ),
            (_, Some(level), Some(rps), None) => {
                format!("up to {}, {least}{rps:.1} requests/s (every level met it{note})", self.level(level))
            }
            (_, _, _, Some((why, at))) => format!("none: {why} the lowest level, {}{}", self.level(at), cause(at)),
            _ => "not met at any level".into(),
        }
    }
}

/// The warning under a table with a client-bound cell, the same in every format.
pub const CLIENT_BOUND: &str = "The client was the bottleneck in the cells marked client-bound (busy, or busy and \
waiting for a CPU, 90% of the time or more): those figures measure shootout, not the server.";

/// How many times its lowest repeat's requests/s a cell's highest may be before the spread is warned of.
pub const SPREAD: f64 = 1.5;

/// `1 repeat`, `2 repeats`.
fn plural_repeats(n: usize) -> String {
    if n == 1 {
        "1 repeat".into()
    } else {
        format!("{n} repeats")
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
    use crate::suite::verdicts::{ratio_figures, times};
    use shootout_model::slo::Metric;
    use shootout_model::states::ThreadTime;

    fn cell(server: &str, level: f64, rps: f64, client_bound: bool) -> Cell {
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

    /// Issue 61: the connections are named as the reason only where the cell's limit names them.
    #[test]
    fn a_run_behind_with_every_connection_busy_blames_the_connections_only_where_the_limit_does() {
        let summary = SuiteSummary::of_report(&report());
        let lag = CellLag {
            behind: 1,
            repeats: 1,
            offered_per_s: 2000.0,
            by: Behind::Connections { connections: 1000, service_p50_us: 757_759 },
        };
        let mut cell = summary.cells[0].clone();
        assert!(summary
            .fell_behind(&cell, &lag)
            .ends_with("the server did not keep up, its requests queueing inside it"));
        cell.limit = Limit::Connections { busy: 0.3 };
        assert!(summary.fell_behind(&cell, &lag).contains("every one of the client's 1000 connections was busy"));
    }

    #[test]
    fn shared_phrases() {
        let summary = SuiteSummary::of_report(&report());
        assert_eq!(summary.servers(), ["puma", "unicorn|3"]);
        assert_eq!(ratio_figures(&summary.ratios[0]), "1.32× [1.25–1.40]");
        let one_repeat = Ratio { low: None, high: None, ..summary.ratios[0].clone() };
        assert_eq!(ratio_figures(&one_repeat), "1.32× (too few repeats for an interval)");
        assert_eq!(
            summary.slo_answer(&summary.slo_answers[0]),
            "up to 16 users, 1320.0 requests/s (every level met it)"
        );
        let answer = |level, rps, fails_at, unmeasured_at, measured| SloAnswer {
            server: "x".into(),
            level,
            rps,
            fails_at,
            unmeasured_at,
            measured,
        };
        let said = |a: SloAnswer| summary.slo_answer(&a);
        assert_eq!(said(answer(None, None, None, Some(1.0), 0)), "not run");
        assert_eq!(said(answer(None, None, Some(1.0), None, 1)), "none: breaks it at the lowest level, 1 user");
        assert_eq!(said(answer(None, None, None, Some(1.0), 1)), "none: no trial measured at the lowest level, 1 user");
        let below = answer(Some(4.0), Some(820.0), Some(16.0), None, 3);
        assert_eq!(said(below), "up to 4 users, 820.0 requests/s (breaks it at 16 users)");
        let cut = answer(Some(1.0), Some(110.0), None, Some(4.0), 1);
        assert_eq!(said(cut), "up to 1 user, 110.0 requests/s (no trial measured at 4 users)");
        assert!(summary.client_bound());
        assert_eq!(summary.level(1.0), "1 user", "not 1 users");
    }

    /// Issue 47: every difference read as a win (`twin-a served 1.01× [0.99–1.02] the requests/s of twin-b`), and
    /// a verdict on client-bound cells read as one on the servers.
    #[test]
    fn the_words_of_a_ratio_match_its_interval_and_its_limits() {
        let mut summary = SuiteSummary::of_report(&report());
        summary.cells[1].limit = Limit::Waiting { busy: 0.5 };
        summary.cells[1].p99_us = 5703.7;
        let plain = |name: &str| name.to_string();
        let with = |low, high, clear, client: &[&str]| Ratio {
            low,
            high,
            clear,
            client_bound: client.iter().map(|s| s.to_string()).collect(),
            ..summary.ratios[0].clone()
        };
        let said = |r: Ratio| summary.ratio_words(&r, &plain);
        assert_eq!(
            said(with(Some(1.25), Some(1.4), true, &[])),
            "puma served 1.32× [1.25–1.40] the requests/s of unicorn|3 at 16 users"
        );
        assert_eq!(
            said(with(Some(0.99), Some(1.02), false, &[])),
            "no clear difference between puma and unicorn|3 at 16 users (puma served 1.32× [0.99–1.02] the requests/s \
             of unicorn|3)"
        );
        assert_eq!(
            said(with(None, None, false, &[])),
            "puma served 1.32× the requests/s of unicorn|3 at 16 users (too few repeats for an interval: no verdict)"
        );
        assert_eq!(
            said(with(Some(1.25), Some(1.4), true, &["puma"])),
            "puma served at least 1.32× [1.25–1.40] the requests/s of unicorn|3 at 16 users: the client was the limit \
             of puma"
        );
        assert_eq!(
            said(with(Some(0.9), Some(1.4), false, &["puma"])),
            "no verdict between puma and unicorn|3 at 16 users: the client was the limit of puma (puma served 1.32× \
             [0.90–1.40] the requests/s of unicorn|3)"
        );
        assert!(said(with(Some(1.25), Some(1.4), true, &["unicorn|3"]))
            .starts_with("no verdict between puma and unicorn|3 at 16 users: the client was the limit of unicorn|3 ("));
        assert!(said(with(Some(1.25), Some(1.4), true, &["puma", "unicorn|3"]))
            .starts_with("no verdict between puma and unicorn|3 at 16 users: the client was the limit of both ("));
        let bold = summary.ratio_words(&with(Some(1.25), Some(1.4), true, &[]), &|n| format!("**{n}**"));
        assert_eq!(bold, "**puma** served 1.32× [1.25–1.40] the requests/s of **unicorn|3** at 16 users");
        // Issue 61: a latency verdict names its figure and gives both.
        let p99 = |low, high, clear| Ratio { figure: Some(Metric::Percentile(99.0)), ..with(low, high, clear, &[]) };
        assert_eq!(
            said(p99(Some(1.25), Some(1.4), true)),
            "unicorn|3's p99 was 1.32× [1.25–1.40] puma's at 16 users (5.704 against 4.321 ms)"
        );
        assert_eq!(
            said(p99(Some(0.99), Some(1.4), false)),
            "no clear difference in p99 between puma and unicorn|3 at 16 users (unicorn|3's p99 was 1.32× [0.99–1.40] \
             puma's: 5.704 against 4.321 ms)"
        );
        assert_eq!(
            said(p99(None, None, false)),
            "unicorn|3's p99 was 1.32× puma's at 16 users (5.704 against 4.321 ms) (too few repeats for an interval: \
             no verdict)"
        );
    }

    /// Issue 47: `instant: throughput stops rising at 4 users` and its SLO answer, where every cell was client-bound.
    #[test]
    fn a_knee_or_an_slo_answer_on_a_client_bound_cell_says_so() {
        let summary = SuiteSummary::of_report(&report());
        assert_eq!(
            summary.knee("puma", 16.0),
            "puma: throughput stops rising at 16 users (no higher level serves 10% more)"
        );
        assert_eq!(
            summary.knee("unicorn|3", 16.0),
            "unicorn|3: throughput stops rising at 16 users (no higher level serves 10% more), where the client was \
             the limit: the client's ceiling, not the server's"
        );
        let answer = SloAnswer {
            server: "unicorn|3".into(),
            level: Some(16.0),
            rps: Some(1000.0),
            fails_at: None,
            unmeasured_at: None,
            measured: 1,
        };
        assert_eq!(
            summary.slo_answer(&answer),
            "up to 16 users, at least 1000.0 requests/s (every level met it; the client was the limit at 16 users)"
        );
        let broke = SloAnswer { level: None, rps: None, fails_at: Some(16.0), ..answer };
        assert_eq!(
            summary.slo_answer(&broke),
            "none: breaks it at the lowest level, 16 users, where the client was the limit"
        );
        // Issue 61: a server saturated beside its client-bound cell (CPU 88%, its tasks waiting for a CPU all the
        // window) is no ceiling of the client's alone; nor one 90% busy.
        let mut both = summary.clone();
        both.cells[1].server_busy = 0.88;
        both.cells[1].kernel.stalled.cpu = 1.0;
        assert_eq!(
            both.knee("unicorn|3", 16.0),
            "unicorn|3: throughput stops rising at 16 users (no higher level serves 10% more), where the client and the \
             server were both at their limit (server CPU 88%, its tasks waiting for a CPU 100% of the time at 16 users): \
             the ceiling of both"
        );
        both.cells[1].kernel.stalled.cpu = 0.2;
        assert!(both.knee("unicorn|3", 16.0).ends_with("the client's ceiling, not the server's"));
        both.cells[1].server_busy = 0.9;
        assert!(both.knee("unicorn|3", 16.0).ends_with("the ceiling of both"));
    }

    /// Issue 47: the answer comes first, ranked, and says where it cannot rank two servers.
    #[test]
    fn the_slo_answers_are_ranked_and_overlapping_ones_are_no_clear_winner() {
        let mut summary = SuiteSummary::of_report(&report());
        let at = |server: &str, level: f64, rps: [f64; 3]| Cell {
            rps: rps.to_vec(),
            rps_median: rps[1],
            rps_headline: rps[1],
            limit: Limit::Waiting { busy: 0.5 },
            ..cell(server, level, rps[1], false)
        };
        summary.cells = vec![
            at("c", 4.0, [500.0, 510.0, 490.0]),
            at("b", 16.0, [1090.0, 1100.0, 1080.0]),
            at("a", 16.0, [1100.0, 1110.0, 1090.0]),
        ];
        let answer = |server: &str, level: f64, rps: f64| SloAnswer {
            server: server.into(),
            level: Some(level),
            rps: Some(rps),
            fails_at: None,
            unmeasured_at: None,
            measured: 1,
        };
        summary.slo_answers = vec![answer("c", 4.0, 510.0), answer("b", 16.0, 1100.0), answer("a", 16.0, 1110.0)];
        let ranked: Vec<&str> = summary.ranked_slo_answers().iter().map(|a| a.server.as_str()).collect();
        assert_eq!(ranked, ["a", "b", "c"]);
        let lines = summary.no_clear_winners();
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(
            lines[0].starts_with("no clear winner between a and b: both met it up to 16 users (a served 1.01× ["),
            "{lines:?}"
        );
        summary.cells[1] = at("b", 16.0, [545.0, 550.0, 540.0]);
        assert!(summary.no_clear_winners().is_empty(), "twice the requests/s at the same level is clear");
        summary.cells[1].rps = vec![550.0];
        assert_eq!(
            summary.no_clear_winners(),
            ["where servers met it up to the same level, their order there is by the figures alone: too few repeats \
              for an interval, so no verdict"],
            "one repeat: said once"
        );
    }

    /// Issue 47: repeats of 1,827, 3,952 and 2,533 req/s in one cell passed without a word.
    #[test]
    fn a_cell_whose_repeats_spread_is_warned_of_with_what_else_ran() {
        let summary = SuiteSummary::of_report(&report());
        let spread = Cell {
            rps: vec![1827.0, 3952.0, 2533.0],
            rps_min: 1827.0,
            rps_max: 3952.0,
            ..cell("a", 64.0, 2533.0, false)
        };
        let mut runs: Vec<TrialRecord> = (1..=3).map(|r| trial("a", 64.0, r)).collect();
        let quiet: Vec<&TrialRecord> = runs.iter().collect();
        assert_eq!(
            summary.spread(&spread, &quiet).as_deref(),
            Some(
                "a at 64 users: its repeats spread from 1827.0 to 3952.0 requests/s (2.16× apart, 1.5× or more), so its \
                 median hides a change between them; no process outside the run used 5% of a CPU meanwhile: the server \
                 or the machine varied"
            )
        );
        runs[1].outsiders = vec![shootout_model::run::Outsider {
            pid: 4242,
            name: "stress".into(),
            cpu_s: 4.0,
            share: 0.4,
            on_server_cpus: None,
            on_client_cpus: None,
        }];
        let busy: Vec<&TrialRecord> = runs.iter().collect();
        let said = summary.spread(&spread, &busy).unwrap();
        assert!(said.ends_with("; during repeat 2, another process, stress (pid 4242), used 40% of a CPU"), "{said}");
        let close = Cell { rps_min: 2000.0, rps_max: 2900.0, ..spread.clone() };
        assert_eq!(summary.spread(&close, &busy), None, "1.45× apart");
    }

    #[test]
    fn a_ratio_without_a_figure_is_said_in_words() {
        let mut summary = SuiteSummary::of_report(&report());
        let zero = |c: &mut Cell, max: f64| (c.rps_headline, c.rps_median, c.rps_max) = (0.0, 0.0, max);
        let r = Ratio { ratio: None, low: None, high: None, ..summary.ratios[0].clone() };
        assert!(summary.served_nothing(&summary.ratios[0]).is_none(), "a ratio with a figure is a figure");
        assert_eq!(times(&r), "—");
        zero(&mut summary.cells[1], 0.0);
        let said = summary.served_nothing(&r);
        assert_eq!(said.as_deref(), Some("puma served 1320.0 requests/s and unicorn|3 none at 16 users"));
        zero(&mut summary.cells[1], 80.0);
        let said = summary.served_nothing(&r);
        let expected = "puma served 1320.0 requests/s and unicorn|3 0.0 (the median of its repeats) at 16 users";
        assert_eq!(said.as_deref(), Some(expected), "one repeat of three served something");
        zero(&mut summary.cells[0], 0.0);
        zero(&mut summary.cells[1], 0.0);
        let said = summary.served_nothing(&r);
        assert_eq!(said.as_deref(), Some("neither puma nor unicorn|3 served a successful response at 16 users"));
    }
}
