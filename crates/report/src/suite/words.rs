//! The sentences every format shares, so that the formats differ only in their markup: a level with its unit,
//! the SLO as written, each server's answer to the SLO, its knee, a matrix's best value, the title of the
//! capacities, where the SLO ranking cannot tell two servers apart ([`crate::suite::ranking`]), the warnings of
//! single cells (repeats that measured nothing or spread apart, a disturbed trial, a queue that grew, failed
//! checks, a run that fell behind) and the client-bound warning under a table. A ratio's words are
//! [`crate::suite::verdicts`]'.

use shootout_model::run::{Statistic, TrialRecord};

use crate::analysis::behind::{Behind, CellLag};
use crate::analysis::by_parameter::BestValue;
use crate::analysis::limit::BOUND as SATURATION;
use crate::analysis::{Cell, SloAnswer};
use crate::suite::summary::SuiteSummary;
use crate::suite::verdicts::ratio_figures;
use crate::units::count;

impl SuiteSummary {
    /// A level with its unit: `16 users`, `1 user`.
    pub fn level(&self, level: f64) -> String {
        crate::units::level(level, self.unit)
    }

    /// The SLO as written: `mean < 1s, errors < 1%`.
    pub fn slo_text(&self) -> String {
        self.slo.iter().map(|c| c.text.as_str()).collect::<Vec<_>>().join(", ")
    }

    /// The repeat figure servers are compared by, as a word: `median` or `best`.
    pub fn statistic_name(&self) -> &'static str {
        match self.statistic {
            Statistic::Median => "median",
            Statistic::Best => "best",
        }
    }

    /// The title of the capacities: `Capacity under the SLO (mean < 1s), searched to 5%`.
    pub fn capacity_title(&self) -> String {
        let precision = self.capacities.first().map_or(0.0, |c| c.search.precision * 100.0);
        format!("Capacity under the SLO ({}), searched to {precision}%", self.slo_text())
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

    /// Where the SLO answers do not rank two servers ([`SuiteSummary::ties`]), in words: `no clear winner between a
    /// and b: both met it up to 16 users (a served 1.01× [0.98–1.04] the requests/s of b there)`; and once, when a
    /// pair had too few repeats for an interval, that their order there is by the figures alone.
    pub fn no_clear_winners(&self) -> Vec<String> {
        let ties = self.ties();
        let mut lines: Vec<String> = ties
            .ties
            .iter()
            .map(|t| {
                format!(
                    "no clear winner between {} and {}: both met it up to {} ({} there)",
                    t.first.server,
                    t.second.server,
                    self.level(t.level),
                    self.ratio_clause(&t.ratio, &|n| n.to_string(), &ratio_figures(&t.ratio)),
                )
            })
            .collect();
        if ties.unjudged {
            lines.push(
                "where servers met it up to the same level, their order there is by the figures alone: too few \
                 repeats for an interval, so no verdict"
                    .into(),
            );
        }
        lines
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

    /// A CPU-bound cell whose server had more threads wanting a CPU than it had CPUs (the median of its repeats,
    /// each the median of its samples), in words: `cluster at 64 users: 2 of its threads each wanted a CPU and it
    /// had 1 (server CPU 98%): they took turns, so its figures are those of 1 CPU; give it more with cpus in the
    /// suite (--cpus on the command line)`; none when it had CPUs enough or was not held by them.
    pub fn crowded(&self, cell: &Cell, runs: &[&TrialRecord]) -> Option<String> {
        let cpus = runs.first()?.usage.cpus;
        let of =
            |f: &dyn Fn(&TrialRecord) -> f64| crate::analysis::median(&runs.iter().map(|t| f(t)).collect::<Vec<_>>());
        let (wanting, busy) = (of(&|t| f64::from(t.usage.wanting_threads)), of(&|t| t.usage.busy));
        if cpus == 0 || wanting <= f64::from(cpus) || !crate::statistics::bound::at_least(busy, SATURATION) {
            return None;
        }
        let noun = if cpus == 1 { "CPU" } else { "CPUs" };
        Some(format!(
            "{} at {}: {wanting} of its threads each wanted a CPU and it had {cpus} (server CPU {:.0}%): they took \
             turns, so its figures are those of {cpus} {noun}; give it more with cpus in the suite (--cpus on the \
             command line)",
            cell.server,
            self.level(cell.level),
            busy * 100.0
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::limit::Limit;
    use crate::analysis::Ratio;
    use crate::suite::summary::tests::{cell, report, trial};

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
}
