//! [`Behind`]: why an open-model run did not keep to its schedule, and who to blame, from its result alone.
//!
//! An open-model run falls behind when the responses completed inside the window come to less than 90% of the
//! offered rate, when requests went out late, or when some were never sent. Three things can cause it, and the
//! fix differs for each, so the summary names one:
//! - the client, when it was short of CPU (`client.saturated`): its figures measure shootout;
//! - its connections, when requests waited for one while the server answered at its usual speed (the median
//!   service time under [`QUEUEING`] times the fastest, and the mean under [`QUEUEING`] times the median: no tail
//!   of requests held inside the server, as Puma holds some for seconds while the rest go through fast) and the
//!   requests in flight came to half the connections or more: more connections would have carried more;
//! - its own loop, when requests went out late while the server answered at its usual speed and most
//!   connections stood free: something else held the client up (another process on its CPUs, a busy machine);
//! - else the server: its service times grew because requests queued inside it, so the rate is past what it can
//!   complete, and the completed rate is its throughput at this load.

use shootout_model::run::TrialRecord;
use shootout_model::{ErrorKind, LoadResult};

use crate::statistics::bound::at_least;
use shootout_metrics::percentile_us;

/// Completed below this share of the offered rate, a run fell behind.
pub const COMPLETED_SHARE: f64 = 0.9;

/// A median service time this many times the fastest one, or a mean this many times the median, means requests
/// queued inside the server.
pub const QUEUEING: f64 = 4.0;

/// Who held an open-model run back, with the figures that show it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Behind {
    /// The client was short of CPU.
    Client,
    /// Every connection was busy while the server answered each in `service_p50_us`: `connections` of them carry
    /// at most `connections / service time` requests per second.
    Connections {
        /// The most connections the run could open.
        connections: u64,
        /// The median service time, µs.
        service_p50_us: u64,
    },
    /// Requests went out late while most connections were free and the server answered at its usual speed: the
    /// client's loop was held up by something else on its CPUs.
    Late,
    /// The server completed less than was offered, its requests queueing inside it.
    Server,
}

/// The facts of a run that fell behind: the rates, and who held it back.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Lag {
    /// Requests due per second, as configured.
    pub offered_per_s: f64,
    /// Requests written inside the window, per second.
    pub sent_per_s: f64,
    /// Responses inside the window, per second.
    pub completed_per_s: f64,
    /// Who held it back.
    pub by: Behind,
    /// True when only the sends' timing slipped: the run completed 90% of the offered rate or more and sent every
    /// request, some of them more than 1 ms late.
    pub kept_pace: bool,
}

impl Lag {
    /// Whether `result`, an open-model run, fell behind its schedule, and why. `None` for the closed model and for
    /// a run that kept up.
    pub fn of(result: &LoadResult) -> Option<Lag> {
        let sends = result.sends.as_ref()?;
        let completed_per_s = result.throughput.requests_per_s;
        let not_sent = result.errors.get(&ErrorKind::NotSent).copied().unwrap_or(0);
        let late = sends.sent > 0 && sends.late * 100 > sends.sent;
        let short = result.duration_s > 0.0 && !at_least(completed_per_s, COMPLETED_SHARE * sends.offered_per_s);
        if !(short || late || not_sent > 0) {
            return None;
        }
        let waited_for_connections = late || not_sent > 0;
        let service_p50_us = percentile_us(&result.service_time, 50.0);
        let fastest = result.service_time.min_us.max(1) as f64;
        let usual_speed = (service_p50_us as f64) < QUEUEING * fastest
            && result.service_time.mean_us < QUEUEING * service_p50_us.max(1) as f64;
        let connections = result.options.most_connections();
        let by = if result.client.saturated {
            Behind::Client
        } else if waited_for_connections && usual_speed {
            if result.throughput.concurrency * 2.0 >= connections as f64 {
                Behind::Connections { connections, service_p50_us }
            } else {
                Behind::Late
            }
        } else {
            Behind::Server
        };
        let kept_pace = !short && not_sent == 0;
        Some(Lag { offered_per_s: sends.offered_per_s, sent_per_s: sends.sent_per_s, completed_per_s, by, kept_pace })
    }
}

/// The share of the requests due in an open-model run's window that it completed (its responses per second over
/// the rate of requests that fell due): about 1 when the server kept to the schedule. `None` for the closed model,
/// for arriving users (whose sessions, not requests, fall due) and for a run with nothing due.
pub fn completed_share(result: &LoadResult) -> Option<f64> {
    let sends = result.sends.as_ref().filter(|s| s.due > 0 && !result.options.sessions)?;
    Some(result.throughput.requests_per_s * result.duration_s / sends.due as f64)
}

/// The repeats of one suite cell (a server at a rate) that fell behind, completing under [`COMPLETED_SHARE`] of
/// the rate offered (the share by which [`Limit`](crate::analysis::limit::Limit) says a cell kept up): how many of how many,
/// the rate offered, and who held them back (the client if it did in any repeat, else the connections if they did
/// in any, else who held back the first).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CellLag {
    /// Repeats that fell behind.
    pub behind: usize,
    /// Repeats measured.
    pub repeats: usize,
    /// Requests due per second, as configured (the median over the repeats that fell behind).
    pub offered_per_s: f64,
    /// Who held them back.
    pub by: Behind,
}

impl CellLag {
    /// Whether any of `runs`, one cell's repeats, fell behind its schedule; `None` when every one kept up (or the
    /// model is closed).
    pub fn of(runs: &[&TrialRecord]) -> Option<CellLag> {
        let short = |l: &Lag| !at_least(l.completed_per_s, COMPLETED_SHARE * l.offered_per_s);
        let lags: Vec<Lag> = runs.iter().filter_map(|t| Lag::of(&t.result)).filter(short).collect();
        let first = lags.first()?;
        let by = if lags.iter().any(|l| l.by == Behind::Client) {
            Behind::Client
        } else {
            lags.iter().map(|l| l.by).find(|by| matches!(by, Behind::Connections { .. })).unwrap_or(first.by)
        };
        let offered = crate::analysis::median(&lags.iter().map(|l| l.offered_per_s).collect::<Vec<_>>());
        Some(CellLag { behind: lags.len(), repeats: runs.len(), offered_per_s: offered, by })
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use shootout_model::result::Sends;
    use shootout_model::{Arrival, Pacing};

    use super::*;

    /// `result` as a suite's trial of server `a` at 2,000/s.
    fn record(result: LoadResult) -> TrialRecord {
        TrialRecord {
            server: "a".into(),
            level: 2000.0,
            repeat: 1,
            result,
            samples: vec![],
            usage: Default::default(),
            services: vec![],
            outsiders: vec![],
        }
    }

    /// An open-model run at 2,000/s whose server completed `completed`/s, with the service times' median and
    /// minimum and the late sends given.
    pub(crate) fn open(completed: f64, p50_us: u64, min_us: u64, late: u64) -> LoadResult {
        let trial: shootout_model::run::TrialRecord =
            serde_json::from_str(include_str!("../../tests/trial.json")).unwrap();
        let mut r = trial.result;
        r.options.pacing = Pacing::Open { rate: 2000.0, arrival: Arrival::Constant };
        r.options.connections = 10;
        r.sends = Some(Sends { due: 6000, sent: 3000, late, offered_per_s: 2000.0, sent_per_s: 1000.0 });
        r.throughput.requests_per_s = completed;
        r.throughput.concurrency = completed * p50_us as f64 / 1e6;
        r.service_time.min_us = min_us;
        r.service_time.mean_us = p50_us as f64;
        for p in &mut r.service_time.percentiles {
            p.us = p50_us;
        }
        r.client.saturated = false;
        r
    }

    #[test]
    fn the_share_of_the_requests_due_that_a_run_completed() {
        // 2,000 due per second over 3 s is 6,000 due; a 3 s window completing 1,900/s did 95% of them.
        let mut run = open(1900.0, 1000, 900, 0);
        run.duration_s = 3.0;
        assert!((completed_share(&run).unwrap() - 0.95).abs() < 1e-12);
        // A search at 5% takes 95% as keeping up, and not 94%.
        let judge = |run: &LoadResult| {
            crate::analysis::judge::judge_probe(&[record(run.clone())], &[], Default::default(), 0.05)
        };
        assert!(judge(&run).passed);
        run.throughput.requests_per_s = 1880.0;
        let behind = judge(&run);
        assert!(!behind.passed && !behind.undecided, "{behind:?}");
        assert_eq!(behind.broke, ["the server completed 94.0% of the requests due (under 95%)"]);
        run.throughput.requests_per_s = 1900.0;
        run.client.saturated = true;
        let client = judge(&run);
        assert!(!client.passed && client.client, "{client:?}");
        // Arriving users: their sessions fall due, not requests; the closed model has no schedule.
        run.options.sessions = true;
        assert_eq!(completed_share(&run), None);
        run.sends = None;
        assert_eq!(crate::analysis::completed(&[record(run)]), None);
    }

    #[test]
    fn a_run_that_kept_up_is_not_behind() {
        assert_eq!(Lag::of(&open(1990.0, 100, 90, 0)), None);
        let trial: shootout_model::run::TrialRecord =
            serde_json::from_str(include_str!("../../tests/trial.json")).unwrap();
        assert_eq!(Lag::of(&trial.result), None, "the closed model has no schedule");
    }

    #[test]
    fn a_server_whose_requests_queued_is_the_limit() {
        let lag = Lag::of(&open(970.0, 900_000, 1_000, 2500)).unwrap();
        assert_eq!(lag.by, Behind::Server);
        assert_eq!((lag.offered_per_s, lag.sent_per_s, lag.completed_per_s), (2000.0, 1000.0, 970.0));
        assert_eq!(Lag::of(&open(970.0, 1_100, 1_000, 0)).unwrap().by, Behind::Server, "short, nothing late");
    }

    #[test]
    fn connections_busy_at_the_servers_usual_speed_are_the_limit() {
        let lag = Lag::of(&open(100.0, 100_500, 100_000, 2500)).unwrap();
        assert_eq!(lag.by, Behind::Connections { connections: 10, service_p50_us: 100_500 });
    }

    #[test]
    fn a_cell_names_who_held_back_the_repeats_that_fell_behind() {
        let (kept, queued) = (record(open(1990.0, 100, 90, 0)), record(open(970.0, 900_000, 1_000, 2500)));
        let busy = record(open(100.0, 100_500, 100_000, 2500));
        assert_eq!(CellLag::of(&[&kept, &kept]), None);
        let lag = CellLag::of(&[&kept, &queued, &queued]).unwrap();
        assert_eq!((lag.behind, lag.repeats, lag.offered_per_s, lag.by), (2, 3, 2000.0, Behind::Server));
        let by = CellLag::of(&[&queued, &busy]).unwrap().by;
        assert_eq!(by, Behind::Connections { connections: 10, service_p50_us: 100_500 }, "the connections, in any");
    }

    #[test]
    fn late_sends_while_connections_stood_free_are_the_clients_loop() {
        // 2,000/s at 0.1 ms: 0.2 requests in flight of 10 connections, yet 2,500 went out late.
        let lag = Lag::of(&open(1990.0, 100, 90, 2500)).unwrap();
        assert_eq!(lag.by, Behind::Late);
    }

    #[test]
    fn late_sends_beside_a_tail_held_in_the_server_are_the_servers() {
        // Most answers as fast as ever, a tenth held for seconds (Puma at 12,800/s: median 0.067 ms, mean 86 ms):
        // the requests went out late waiting for connections the server held, not for the client's loop.
        let mut r = open(1990.0, 100, 90, 2500);
        r.service_time.mean_us = 86_000.0;
        assert_eq!(Lag::of(&r).unwrap().by, Behind::Server);
        r.service_time.mean_us = 300.0; // a tail that moves the mean under 4× the median is noise
        assert_eq!(Lag::of(&r).unwrap().by, Behind::Late);
    }

    #[test]
    fn a_client_short_of_cpu_is_named_first() {
        let mut r = open(970.0, 1_100, 1_000, 2500);
        r.client.saturated = true;
        assert_eq!(Lag::of(&r).unwrap().by, Behind::Client);
    }
}
