//! [`Capacity`]: each server's capacity under the SLO as a suite's search found it (`searches/SERVER.json`): the
//! highest level that met every objective, the bracket the search ended in and why it ended there, the probes,
//! trials and time it took, and what limited the server at its capacity and at the level that broke it (from the
//! cells of those levels, and, when that level met the SLO, how far the server fell behind the rate offered
//! there). When the load generator was the bottleneck at either end of that bracket (at the capacity, or at the
//! level that broke the SLO just above it), the client, not the server, may have set it: the capacity is then a
//! floor, and said to be one. A client-bound probe far above the bracket does not make it one: the server broke
//! the SLO below it on its own. The phrases every format
//! writes are here, so that the formats differ only in their markup.

use serde::Serialize;
use shootout_model::search::{band_words, inside_band, Ended, ServerSearch};

use shootout_model::disturbed::Disturbance;
use shootout_model::run::TrialRecord;

use crate::analysis::limit::Limit;
use crate::analysis::{completed, Cell};
use crate::statistics::verdict::Verdict;
use crate::units::level;

/// One server's capacity under the SLO: its search as saved, and what the analysis of its trials adds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Capacity {
    /// The search: server, capacity, the level that broke it, why it ended, precision, probes, time.
    #[serde(flatten)]
    pub search: ServerSearch,
    /// Trials run for them (a probe near a limit takes the suite's repeats).
    pub trials: u32,
    /// The throughput measured at the capacity, requests/s (the figure the comparison uses).
    pub rps: Option<f64>,
    /// What limited the server at its capacity.
    pub limit: Option<Limit>,
    /// What held it at the level that broke an objective, read as [`Limit::at_break`] does: why it stops there.
    pub limit_failed: Option<Limit>,
    /// The client was the bottleneck at the capacity or at the level that broke the SLO: the capacity is a floor.
    pub floor: bool,
    /// When the level that broke the search met every objective, but the server fell behind the rate offered: the
    /// median share of the requests due that it completed there.
    pub fell_behind: Option<f64>,
    /// Requests still in flight that its probes left out once their verdicts were settled (the trials'
    /// `requests.left_out`), and in how many trials.
    pub left_out: (u64, u32),
    /// The trials at the capacity and at the level that broke it that something outside the run disturbed: the
    /// answer rests on them.
    pub disturbed: Vec<Disturbance>,
}

impl Capacity {
    /// The capacity of `search`, with the limits read from `cells` (the analysis of `trials`).
    pub fn of(search: &ServerSearch, cells: &[Cell], trials: &[TrialRecord]) -> Capacity {
        let cell = |at: Option<f64>| cells.iter().find(|c| c.server == search.server && Some(c.level) == at);
        let at_failure: Vec<&TrialRecord> =
            trials.iter().filter(|t| t.server == search.server && Some(t.level) == search.failed_at).collect();
        let fell_behind =
            cell(search.failed_at).filter(|c| c.meets_slo).and_then(|_| completed(at_failure.iter().copied()));
        let floor = search.ended == Ended::Client
            || [search.capacity, search.failed_at].into_iter().any(|at| cell(at).is_some_and(Cell::client_bound));
        Capacity {
            search: search.clone(),
            trials: search.probes.iter().map(|p| p.repeats).sum(),
            rps: cell(search.capacity).map(|c| c.rps_headline),
            limit: cell(search.capacity).map(|c| c.limit.clone()),
            limit_failed: cell(search.failed_at).map(|_| Limit::at_break(&at_failure)),
            floor,
            fell_behind,
            disturbed: [search.capacity, search.failed_at]
                .into_iter()
                .filter_map(cell)
                .flat_map(|c| c.disturbed.iter().cloned())
                .collect(),
            left_out: trials
                .iter()
                .filter(|t| t.server == search.server && t.result.requests.left_out > 0)
                .fold((0, 0), |(n, runs), t| (n + t.result.requests.left_out, runs + 1)),
        }
    }

    /// The capacity in words, `unit` being what a level counts: `960 req/s (1000 req/s breaks it)`, `at least 100
    /// users (the search's ceiling)`, `none (0.1 req/s, the lowest level tried, breaks it)`, with what the search's
    /// end leaves open.
    pub fn found(&self, unit: &str) -> String {
        let at = |l: Option<f64>| l.map_or_else(|| "none".to_string(), |l| level(l, unit));
        // A level whose latest probe stayed undecided did not break the SLO: the requests measured could not tell.
        let undecided = |l: f64| self.search.probes.iter().rev().find(|p| p.level == l).is_some_and(|p| p.undecided);
        let breaks = |l: Option<f64>| {
            l.map_or_else(String::new, |l| match undecided(l) {
                true => format!(" ({} undecided: too few requests to tell within the probe's cap)", level(l, unit)),
                false => format!(" ({} breaks it)", level(l, unit)),
            })
        };
        let mut found = match self.search.ended {
            Ended::Precise => format!("{}{}", at(self.search.capacity), breaks(self.search.failed_at)),
            Ended::Ceiling => format!("at least {} (the search's ceiling)", at(self.search.capacity)),
            Ended::Floor => format!("none ({}, the lowest level tried, breaks it)", at(self.search.failed_at)),
            Ended::Probes => format!(
                "{}{}, wider than {:.0}% after {} probes",
                at(self.search.capacity),
                breaks(self.search.failed_at),
                self.search.precision * 100.0,
                self.search.probes.len()
            ),
            Ended::Interrupted => format!(
                "{} so far{}: the search was cut short (finish it with shootout run --resume)",
                at(self.search.capacity),
                breaks(self.search.failed_at)
            ),
            Ended::Client => {
                let last = self.search.probes.iter().filter(|p| p.client).map(|p| p.level).reduce(f64::min);
                format!(
                    "at least {}: the client was the limit{} (give it more CPUs, or load from agents)",
                    at(self.search.capacity),
                    last.map_or_else(String::new, |l| format!(" at {}", level(l, unit)))
                )
            }
        };
        if let Some(band) = self.band(unit) {
            found += &format!("; {band}");
        }
        found
    }

    /// When the probes disagreed, what the band between the capacity and the level that broke it holds: `its
    /// probes fell both ways between the two (at 10000 req/s 1 of 2 held): …`.
    pub fn band(&self, unit: &str) -> Option<String> {
        let s = &self.search;
        if !s.moved {
            return None;
        }
        let (lo, hi) = (s.capacity.unwrap_or(0.0), s.failed_at.unwrap_or(f64::INFINITY));
        // Every probe counts as the search counted it, an undecided one as its figures leaned.
        let judged = s.probes.iter().filter(|p| !p.client);
        let inside = inside_band(judged.map(|p| (p.level, p.held())), lo, hi);
        Some(band_words(&inside, |l| level(l, unit)))
    }

    /// The line an answer resting on disturbed trials adds, by taker: `disturbed: the answer rests on trials
    /// something outside the run took CPUs from: python3 (pid 4242) took up to 26% of a CPU on the server's CPUs
    /// (4 trials at 575 and 600 req/s); …`; none when none was.
    pub fn disturbed_line(&self, unit: &str) -> Option<String> {
        // By who took which CPUs, with the most any trial saw it take.
        let mut takers: Vec<(Disturbance, Vec<f64>, usize)> = Vec::new();
        for d in &self.disturbed {
            match takers.iter_mut().find(|(k, _, _)| k.who == d.who && k.on == d.on) {
                Some((most, levels, n)) => {
                    most.share = most.share.max(d.share);
                    if !levels.contains(&d.level) {
                        levels.push(d.level);
                    }
                    *n += 1;
                }
                None => takers.push((d.clone(), vec![d.level], 1)),
            }
        }
        let each: Vec<String> = takers
            .iter()
            .map(|(most, levels, n)| {
                let levels: Vec<String> = levels.iter().map(|&l| level(l, unit)).collect();
                let trials = if *n == 1 { "1 trial".to_string() } else { format!("{n} trials") };
                format!("{} ({trials} at {})", most.taker(), levels.join(" and "))
            })
            .collect();
        (!each.is_empty()).then(|| {
            format!(
                "disturbed: the answer rests on trials something outside the run took CPUs from: {}; run it again on \
                 a quieter machine, or raise disturbed_again",
                each.join("; ")
            )
        })
    }

    /// The rest of the line: `12 probes (14 trials) in 42 s; at 960 req/s: 960.0 requests/s, kept up (CPU 98%);
    /// at 1000 req/s: server CPU 100%`, and the floor's warning when the client was the limit.
    pub fn details(&self, unit: &str) -> String {
        let mut out =
            format!("{} probes ({} trials) in {:.0} s", self.search.probes.len(), self.trials, self.search.seconds);
        if let (Some(capacity), Some(rps), Some(limit)) = (self.search.capacity, self.rps, &self.limit) {
            out += &format!("; at {}: {rps:.1} requests/s, {}", level(capacity, unit), limit.text());
        }
        if let (Some(failed), Some(limit)) = (self.search.failed_at, &self.limit_failed) {
            let behind = self.fell_behind.map_or_else(String::new, |share| {
                let asked = (1.0 - self.search.precision) * 100.0;
                format!("it met the SLO but completed {:.1}% of the requests due (under {asked:.0}%), ", share * 100.0)
            });
            out += &format!("; at {}: {behind}{}", level(failed, unit), limit.text());
        }
        if let (n @ 1.., runs) = self.left_out {
            let trials = if runs == 1 { "1 trial".to_string() } else { format!("{runs} trials") };
            out += &format!(
                "; {n} requests still in flight were left out of {trials} once nothing they did could change the \
                 verdict (their wait so far in the latency)"
            );
        }
        if self.search.moved {
            let order: Vec<String> =
                self.search.probes.iter().map(|p| format!("{} {}", level(p.level, unit), probe_mark(p))).collect();
            out += &format!("; its probes in the order they ran: {}", order.join(", "));
            if self.search.probes.iter().any(|p| !p.passed && (p.leans || p.undecided)) {
                out += " (? undecided: too few requests to tell whether a percentile met its limit; counted held \
                        while its figures met it, against its level otherwise)";
            }
        }
        if self.floor && self.search.ended != Ended::Client {
            out += "; a floor: the client was the bottleneck at the edge of the bracket, so the server may take more";
        }
        out
    }
}

/// The capacities side by side: each server's against the highest, `puma -t 16 took 1.17× the capacity of thin`
/// (none with fewer than two capacities found); a capacity that is a floor makes the ratio a bound, and says so.
pub fn against_highest(capacities: &[Capacity]) -> Vec<String> {
    let found: Vec<(&Capacity, f64)> =
        capacities.iter().filter_map(|c| Some((c, c.search.capacity.filter(|&l| l > 0.0)?))).collect();
    let Some(&(best, highest)) = found.iter().max_by(|a, b| a.1.total_cmp(&b.1)) else { return Vec::new() };
    if found.len() < 2 {
        return Vec::new();
    }
    let mut others: Vec<&(&Capacity, f64)> =
        found.iter().filter(|(c, _)| c.search.server != best.search.server).collect();
    others.sort_by(|a, b| b.1.total_cmp(&a.1));
    others
        .iter()
        .map(|(other, capacity)| {
            let (a, b) = (&best.search, &other.search);
            if b.failed_at.is_some_and(|broke| broke > highest) {
                // b broke its objectives only above a's capacity: each bracket holds the other's capacity.
                return format!(
                    "no clear winner between {} and {}: their brackets overlap ({} met {}, {} met {} and broke {})",
                    a.server,
                    b.server,
                    a.server,
                    highest,
                    b.server,
                    capacity,
                    b.failed_at.unwrap_or_default()
                );
            }
            let cut: Vec<&str> =
                [a, b].iter().filter(|s| s.ended == Ended::Interrupted).map(|s| s.server.as_str()).collect();
            if !cut.is_empty() {
                return format!(
                    "{} took {:.2}× the capacity of {} so far: the search of {} was cut short, so this is no \
                     verdict (finish it with shootout run --resume)",
                    a.server,
                    highest / capacity,
                    b.server,
                    cut.join(" and ")
                );
            }
            let bound = match (best.floor, other.floor) {
                (false, false) => String::new(),
                (true, false) => format!(" (or more: {}'s is a floor)", best.search.server),
                (false, true) => format!(" (or less: {}'s is a floor)", other.search.server),
                (true, true) => " (both are floors: the ratio is not known)".to_string(),
            };
            format!(
                "{} took {:.2}× the capacity of {}{bound}",
                best.search.server,
                highest / capacity,
                other.search.server
            )
        })
        .collect()
}

/// One server's capacity, old search against new (`shootout compare` of two searches).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CapacityChange {
    /// The server.
    pub server: String,
    /// The old search's capacity and the level that broke it (none when it has no search of the server).
    pub old: Option<(Option<f64>, Option<f64>)>,
    /// The new search's.
    pub new: Option<(Option<f64>, Option<f64>)>,
    /// New capacity over old.
    pub ratio: Option<f64>,
    /// Improved when the new search met the SLO at a level that broke the old one's, regressed when it broke it
    /// at a level the old one met; within the searches' precision when their brackets meet.
    pub verdict: Verdict,
}

/// Each server's capacity in `old` against `new`, in the order of `new`, then what only `old` has.
pub fn compare_capacities(old: &[ServerSearch], new: &[ServerSearch]) -> Vec<CapacityChange> {
    let mut servers: Vec<&str> = new.iter().map(|s| s.server.as_str()).collect();
    servers.extend(old.iter().map(|s| s.server.as_str()).filter(|s| !new.iter().any(|n| n.server == *s)));
    let find = |searches: &[ServerSearch], server: &str| {
        searches.iter().find(|s| s.server == server).map(|s| (s.capacity, s.failed_at))
    };
    servers
        .into_iter()
        .map(|server| {
            let (old, new) = (find(old, server), find(new, server));
            let verdict = match (old, new) {
                (Some(_), None) => Verdict::Missing,
                (None, _) => Verdict::New,
                (Some((old_met, old_broke)), Some((new_met, new_broke))) => {
                    let above = |met: Option<f64>, broke: Option<f64>| met.zip(broke).is_some_and(|(m, b)| m >= b);
                    if above(new_met, old_broke) || (old_met.is_none() && new_met.is_some()) {
                        Verdict::Improved
                    } else if above(old_met, new_broke) || (new_met.is_none() && old_met.is_some()) {
                        Verdict::Regressed
                    } else {
                        Verdict::WithinNoise
                    }
                }
            };
            let ratio = match (old, new) {
                (Some((Some(o), _)), Some((Some(n), _))) if o > 0.0 => Some(n / o),
                _ => None,
            };
            CapacityChange { server: server.to_string(), old, new, ratio, verdict }
        })
        .collect()
}

/// How the list of a search's probes marks one: `✓` it met the SLO, `?` a percentile stayed undecided (however the
/// search counted it: a probe of 100 requests meeting `p99 < 20ms` at 7.7 ms cannot tell, and printed `✗` it read
/// as broken), `✗` it broke it.
fn probe_mark(probe: &shootout_model::search::SuiteProbe) -> &'static str {
    match (probe.passed, probe.leans || probe.undecided) {
        (true, _) => "✓",
        (false, true) => "?",
        (false, false) => "✗",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shootout_model::search::SuiteProbe;

    fn search(server: &str, capacity: Option<f64>, failed_at: Option<f64>, ended: Ended) -> ServerSearch {
        let probes = vec![
            SuiteProbe {
                level: 10.0,
                passed: true,
                repeats: 1,
                served: Some(10.0),
                client: false,
                broke: vec![],
                undecided: false,
                leans: false,
            },
            SuiteProbe {
                level: 20.0,
                passed: false,
                repeats: 3,
                served: Some(14.0),
                client: ended == Ended::Client,
                broke: vec![],
                undecided: false,
                leans: false,
            },
        ];
        ServerSearch {
            server: server.into(),
            capacity,
            failed_at,
            ended,
            precision: 0.05,
            probes,
            seconds: 41.6,
            moved: false,
            settling_s: 0.0,
        }
    }

    #[test]
    fn each_end_of_a_search_in_words() {
        let c = |ended, capacity, failed| Capacity::of(&search("a", capacity, failed, ended), &[], &[]);
        let precise = c(Ended::Precise, Some(960.0), Some(1000.0));
        assert_eq!(precise.found("req/s"), "960 req/s (1000 req/s breaks it)");
        assert_eq!(precise.details("req/s"), "2 probes (4 trials) in 42 s");
        assert_eq!(c(Ended::Ceiling, Some(100.0), None).found("users"), "at least 100 users (the search's ceiling)");
        assert_eq!(c(Ended::Floor, None, Some(1.0)).found("users"), "none (1 user, the lowest level tried, breaks it)");
        let client = c(Ended::Client, Some(10.0), None);
        assert_eq!(
            client.found("req/s"),
            "at least 10 req/s: the client was the limit at 20 req/s (give it more CPUs, or load from agents)"
        );
        assert!(client.floor);
        let mut moved = search("a", Some(10.0), Some(20.0), Ended::Precise);
        moved.moved = true;
        let moved = Capacity::of(&moved, &[], &[]);
        assert!(
            moved.found("req/s").contains("; its probes fell both ways between the two"),
            "{}",
            moved.found("req/s")
        );
        assert!(moved.details("req/s").ends_with("; its probes in the order they ran: 10 req/s ✓, 20 req/s ✗"));
        let mut undecided = search("a", Some(10.0), Some(20.0), Ended::Precise);
        (undecided.moved, undecided.probes[0].passed, undecided.probes[0].leans) = (true, false, true);
        let details = Capacity::of(&undecided, &[], &[]).details("req/s");
        assert!(details.contains("in the order they ran: 10 req/s ?, 20 req/s ✗ (? undecided: "), "{details}");
        let mut trial: TrialRecord = serde_json::from_str(include_str!("../../tests/trial.json")).unwrap();
        (trial.server, trial.level, trial.result.requests.left_out) = ("a".into(), 10.0, 759);
        let left_out = Capacity::of(&search("a", Some(10.0), Some(20.0), Ended::Precise), &[], &[trial.clone(), trial]);
        assert!(
            left_out.details("req/s").ends_with("; 1518 requests still in flight were left out of 2 trials once nothing they did could change the verdict (their wait so far in the latency)"),
            "{}",
            left_out.details("req/s")
        );
        assert_eq!(
            c(Ended::Interrupted, Some(20.0), None).found("req/s"),
            "20 req/s so far: the search was cut short (finish it with shootout run --resume)"
        );
    }

    /// Issue 61: an answer resting on disturbed trials says so on a line of its own, one phrase per taker.
    #[test]
    fn an_answer_resting_on_disturbed_trials_names_the_taker_once() {
        use shootout_model::disturbed::Whose;
        let mut c = Capacity::of(&search("a", Some(575.0), Some(600.0), Ended::Precise), &[], &[]);
        assert_eq!(c.disturbed_line("req/s"), None);
        let by = |level: f64, repeat: u32, share: f64| Disturbance {
            repeat,
            level,
            on: Whose::Server,
            who: Some("python3 (pid 4242)".into()),
            share,
            pressure: None,
        };
        c.disturbed = vec![by(575.0, 1, 0.25), by(575.0, 2, 0.26), by(600.0, 1, 0.2)];
        assert_eq!(
            c.disturbed_line("req/s").unwrap(),
            "disturbed: the answer rests on trials something outside the run took CPUs from: python3 (pid 4242) took \
             up to 26% of a CPU on the server's CPUs (3 trials at 575 req/s and 600 req/s); run it again on a quieter \
             machine, or raise disturbed_again"
        );
    }

    #[test]
    fn the_highest_capacity_against_each_other() {
        let capacities = [
            Capacity::of(&search("a", Some(500.0), Some(520.0), Ended::Precise), &[], &[]),
            Capacity::of(&search("b", Some(1000.0), Some(1040.0), Ended::Precise), &[], &[]),
            Capacity::of(&search("c", None, Some(0.1), Ended::Floor), &[], &[]),
        ];
        assert_eq!(against_highest(&capacities), ["b took 2.00× the capacity of a"]);
        assert!(against_highest(&capacities[..1]).is_empty());
        let mut floors = capacities.clone();
        floors[0].floor = true;
        assert_eq!(against_highest(&floors), ["b took 2.00× the capacity of a (or less: a's is a floor)"]);
        floors[1].floor = true;
        assert_eq!(
            against_highest(&floors),
            ["b took 2.00× the capacity of a (both are floors: the ratio is not known)"]
        );
    }

    /// Issue 47: `after took 232.00× the capacity of d` against a search cut short, and a ratio between brackets
    /// that hold each other's capacity.
    #[test]
    fn a_ratio_against_a_search_cut_short_or_an_overlapping_bracket_is_no_verdict() {
        let cut = [
            Capacity::of(&search("after", Some(2320.0), Some(2400.0), Ended::Precise), &[], &[]),
            Capacity::of(&search("d", Some(10.0), None, Ended::Interrupted), &[], &[]),
        ];
        assert_eq!(
            against_highest(&cut),
            ["after took 232.00× the capacity of d so far: the search of d was cut short, so this is no verdict \
              (finish it with shootout run --resume)"]
        );
        let close = [
            Capacity::of(&search("a", Some(960.0), Some(1000.0), Ended::Precise), &[], &[]),
            Capacity::of(&search("b", Some(940.0), Some(980.0), Ended::Precise), &[], &[]),
        ];
        assert_eq!(
            against_highest(&close),
            ["no clear winner between a and b: their brackets overlap (a met 960, b met 940 and broke 980)"]
        );
    }

    #[test]
    fn two_searches_differ_only_when_their_brackets_do_not_meet() {
        let old = [
            search("a", Some(960.0), Some(1000.0), Ended::Precise),
            search("b", Some(500.0), Some(520.0), Ended::Precise),
        ];
        let new = [
            search("a", Some(1000.0), Some(1040.0), Ended::Precise),
            search("b", Some(510.0), Some(530.0), Ended::Precise),
            search("c", Some(10.0), Some(11.0), Ended::Precise),
        ];
        let changes = compare_capacities(&old, &new);
        let verdicts: Vec<(&str, Verdict)> = changes.iter().map(|c| (c.server.as_str(), c.verdict)).collect();
        assert_eq!(verdicts, [("a", Verdict::Improved), ("b", Verdict::WithinNoise), ("c", Verdict::New)]);
        assert!((changes[0].ratio.unwrap() - 1000.0 / 960.0).abs() < 1e-12);
        let changes = compare_capacities(&new, &old);
        let verdicts: Vec<(&str, Verdict)> = changes.iter().map(|c| (c.server.as_str(), c.verdict)).collect();
        assert_eq!(verdicts, [("a", Verdict::Regressed), ("b", Verdict::WithinNoise), ("c", Verdict::Missing)]);
        // A search that met the SLO nowhere against one that did.
        let none = [search("a", None, Some(0.1), Ended::Floor)];
        assert_eq!(compare_capacities(&old[..1], &none)[0].verdict, Verdict::Regressed);
        assert_eq!(compare_capacities(&none, &old[..1])[0].verdict, Verdict::Improved);
    }
}
