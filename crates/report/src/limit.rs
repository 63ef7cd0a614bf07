//! [`Limit`]: what held a cell's throughput back, read from what every trial already samples. The client was the
//! bottleneck when it was busy, or busy and waiting for a CPU, 90% of the time or more in any repeat (its figures
//! then measure shootout); else, in the open model, nothing held it back when every repeat completed 90% of the
//! offered rate or more ([`COMPLETED_SHARE`]): the rate offered set the throughput, whatever the server's CPU; else
//! the server was CPU-bound when its process tree kept 90% or more of the CPUs it could run on busy (median over
//! the repeats); else a service it ran beside (a database) was the limit when its tree kept 90% or more of the
//! CPUs it could run on busy (the busiest such service is named); else the server was CPU-bound when those CPUs were 90% busy with anything (the kernel's network work, another process, the
//! client on a shared core) while its threads queued for them; else, in the open model, the client's connections
//! when a repeat fell behind because every one was busy while the server answered at its usual speed
//! ([`Behind::Connections`]); else the server was waiting with CPU to spare: for a free worker, a lock, the disk,
//! the network or a sleep. A server's threads queueing behind each other on a CPU that still had idle time (a
//! thundering herd of workers woken for one connection) is not a CPU limit.

use serde::Serialize;
use shootout_model::run::TrialRecord;

use crate::analysis::{median, service_cells};
use crate::behind::{Behind, CellLag, COMPLETED_SHARE};
use crate::bound::{at_least, figure};

/// The busy share from which the client, or the server, counts as the bottleneck.
pub use shootout_model::SATURATION as BOUND;

/// Threads waiting for each CPU, on average, from which a server on full CPUs wanted more than it got.
pub const QUEUED: f64 = 0.1;

/// What limited one server at one level.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "by", rename_all = "snake_case")]
pub enum Limit {
    /// The load generator was busy, or busy and waiting for a CPU, 90% of the time or more in some repeat: the
    /// figures measure shootout, not the server.
    Client,
    /// The server's processes used 90% or more of the CPUs they could run on (`busy`, 0 to 1), or those CPUs
    /// were that busy (`cpus_busy`) while its threads queued for them.
    ServerCpu {
        /// Median busy share.
        busy: f64,
        /// Median busy share of its CPUs, by anything.
        cpus_busy: f64,
    },
    /// A service the server ran beside (`name`, a database) used 90% or more of the CPUs it could run on (`busy`,
    /// 0 to 1, its median busy share) while the server did not.
    Service {
        /// The service's name.
        name: String,
        /// Its median busy share.
        busy: f64,
    },
    /// The server had CPU to spare (`busy`, 0 to 1) and still went no faster: it was waiting.
    Waiting {
        /// Median busy share.
        busy: f64,
    },
    /// Open model: a repeat fell behind because every connection the client could open was busy while the server
    /// answered each at its usual speed ([`Behind::Connections`]): the connections, not the server, set the figure
    /// (`busy`, 0 to 1, the server's median busy share meanwhile).
    Connections {
        /// Median busy share.
        busy: f64,
    },
    /// Open model: every repeat completed what was offered (90% of it or more): the offered rate, not the server,
    /// set the throughput (`busy`, 0 to 1, the server's median busy share meanwhile).
    KeptUp {
        /// Median busy share.
        busy: f64,
    },
    /// Saved before shootout recorded the server's CPUs.
    Unknown,
}

impl Limit {
    /// The limit of the repeats of one cell.
    pub fn of(runs: &[&TrialRecord]) -> Limit {
        if runs.iter().any(|t| t.result.client.saturated) {
            return Limit::Client;
        }
        if runs.is_empty() || runs.iter().any(|t| t.usage.cpus == 0) {
            return Limit::Unknown;
        }
        let busy = median(&runs.iter().map(|t| t.usage.busy).collect::<Vec<_>>());
        let kept_up = |t: &&TrialRecord| {
            let completed = t.result.throughput.requests_per_s;
            t.result.sends.is_some_and(|sends| at_least(completed, COMPLETED_SHARE * sends.offered_per_s))
        };
        if runs.iter().all(kept_up) {
            return Limit::KeptUp { busy };
        }
        let queued = median(&runs.iter().map(|t| t.usage.queued).collect::<Vec<_>>());
        let cpus_busy = median(&runs.iter().map(|t| t.usage.cpus_busy).collect::<Vec<_>>());
        if at_least(busy, BOUND) {
            Limit::ServerCpu { busy, cpus_busy }
        } else if let Some((name, busy)) = busiest_service(runs).filter(|(_, busy)| at_least(*busy, BOUND)) {
            Limit::Service { name, busy }
        } else if at_least(cpus_busy, BOUND) && at_least(queued, QUEUED) {
            Limit::ServerCpu { busy, cpus_busy }
        } else if CellLag::of(runs).is_some_and(|lag| matches!(lag.by, Behind::Connections { .. })) {
            Limit::Connections { busy }
        } else {
            Limit::Waiting { busy }
        }
    }

    /// How the tables write it: `client-bound`, `server CPU 97%`, `db CPU 97%` (a service), `server CPU 60% (CPUs 98% busy)` (it wanted more
    /// than it got), `waiting (CPU 35%)`, `connections (CPU 35%)`, `kept up (CPU 20%)`, or `—`. A share the class
    /// was judged on is written on its side of 90% ([`figure`]): `waiting (CPU 89.96%)`, never `waiting (CPU 90%)`.
    pub fn text(&self) -> String {
        let judged = |share: f64| figure(share * 100.0, Some(BOUND * 100.0), 0);
        match self {
            Limit::Client => "client-bound".into(),
            Limit::ServerCpu { busy, .. } if at_least(*busy, BOUND) => format!("server CPU {}%", judged(*busy)),
            Limit::ServerCpu { busy, cpus_busy } => {
                format!("server CPU {}% (CPUs {}% busy)", judged(*busy), judged(*cpus_busy))
            }
            Limit::Service { name, busy } => format!("{name} CPU {}%", judged(*busy)),
            Limit::Waiting { busy } => format!("waiting (CPU {}%)", judged(*busy)),
            Limit::Connections { busy } => format!("connections (CPU {:.0}%)", busy * 100.0),
            Limit::KeptUp { busy } => format!("kept up (CPU {:.0}%)", busy * 100.0),
            Limit::Unknown => "—".into(),
        }
    }
}

/// The service with the highest median busy share over `runs`, with that share (none without services): from the
/// same medians the table shows for each service ([`service_cells`]).
fn busiest_service(runs: &[&TrialRecord]) -> Option<(String, f64)> {
    service_cells(runs).into_iter().map(|c| (c.name, c.busy)).max_by(|a, b| a.1.total_cmp(&b.1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trial(saturated: bool, cpus: u32, busy: f64, queued: f64, cpus_busy: f64) -> TrialRecord {
        let mut t: TrialRecord = serde_json::from_str(include_str!("../tests/trial.json")).unwrap();
        t.result.client.saturated = saturated;
        t.usage.cpus = cpus;
        t.usage.busy = busy;
        t.usage.queued = queued;
        t.usage.cpus_busy = cpus_busy;
        t
    }

    #[test]
    fn the_client_first_then_the_servers_cpu_then_waiting() {
        let a = trial(false, 1, 0.95, 0.0, 0.97);
        let (b, c) = (trial(true, 1, 0.2, 0.0, 0.3), trial(false, 1, 0.97, 0.02, 0.99));
        assert_eq!(Limit::of(&[&a, &b]), Limit::Client, "one client-bound repeat is enough");
        assert_eq!(Limit::of(&[&a, &c]), Limit::ServerCpu { busy: 0.96, cpus_busy: 0.98 });
        let starved = trial(false, 1, 0.6, 0.45, 0.99);
        assert_eq!(Limit::of(&[&starved]), Limit::ServerCpu { busy: 0.6, cpus_busy: 0.99 }, "it wanted its CPU");
        let herd = trial(false, 1, 0.6, 0.6, 0.65);
        assert_eq!(Limit::of(&[&herd]), Limit::Waiting { busy: 0.6 }, "workers queued behind each other, CPU to spare");
        let idle = trial(false, 2, 0.35, 0.01, 0.4);
        assert_eq!(Limit::of(&[&idle]), Limit::Waiting { busy: 0.35 });
        assert_eq!(Limit::of(&[&trial(false, 0, 0.0, 0.0, 0.0)]), Limit::Unknown, "older results");
        assert_eq!(Limit::ServerCpu { busy: 0.966, cpus_busy: 0.97 }.text(), "server CPU 97%");
        assert_eq!(Limit::ServerCpu { busy: 0.6, cpus_busy: 0.99 }.text(), "server CPU 60% (CPUs 99% busy)");
        assert_eq!(Limit::Waiting { busy: 0.35 }.text(), "waiting (CPU 35%)");
    }

    #[test]
    fn a_busy_service_is_named_when_the_server_was_not_cpu_bound() {
        let with_db = |server: f64, cpus_busy: f64, db: f64| {
            let mut t = trial(false, 1, server, 0.5, cpus_busy);
            let usage = shootout_model::run::ServerUsage { cpus: 1, busy: db, ..Default::default() };
            t.services = vec![
                shootout_model::run::ServiceTrial {
                    name: "cache".into(),
                    samples: Vec::new(),
                    usage: Default::default(),
                },
                shootout_model::run::ServiceTrial { name: "db".into(), samples: Vec::new(), usage },
            ];
            t
        };
        let db_bound = with_db(0.05, 0.99, 0.94);
        assert_eq!(Limit::of(&[&db_bound]), Limit::Service { name: "db".into(), busy: 0.94 });
        assert_eq!(Limit::of(&[&db_bound]).text(), "db CPU 94%");
        assert_eq!(Limit::of(&[&with_db(0.95, 0.99, 0.04)]), Limit::ServerCpu { busy: 0.95, cpus_busy: 0.99 });
        let idle_db = with_db(0.3, 0.99, 0.5);
        assert_eq!(Limit::of(&[&idle_db]), Limit::ServerCpu { busy: 0.3, cpus_busy: 0.99 }, "its CPUs busy, queued");
        assert_eq!(Limit::of(&[&with_db(0.3, 0.35, 0.5)]), Limit::Waiting { busy: 0.3 });
        assert_eq!(Limit::of(&[&db_bound, &with_db(0.05, 0.99, 0.97), &idle_db]).text(), "db CPU 94%", "median");
    }

    #[test]
    fn a_share_on_the_bound_is_on_it() {
        let at_bound = trial(false, 3, 0.3 * 3.0, 0.0, 0.95);
        // 0.3 × 3 is 0.8999999999999999 in floating point.
        assert!(matches!(Limit::of(&[&at_bound]), Limit::ServerCpu { .. }), "three CPUs 30% busy are 90% busy");
        assert_eq!(Limit::of(&[&at_bound]).text(), "server CPU 90%");
    }

    /// Issue 40: a server busy 0.8996 of its CPUs printed `waiting (CPU 90%)`, where 90% is the server's CPU.
    #[test]
    fn the_printed_share_is_on_the_side_of_90_percent_its_class_is() {
        let of = |busy: f64| Limit::of(&[&trial(false, 1, busy, 0.0, busy)]).text();
        assert_eq!(of(0.8996), "waiting (CPU 89.96%)");
        assert_eq!(of(0.896), "waiting (CPU 89.6%)");
        assert_eq!(of(0.8949), "waiting (CPU 89%)", "89% cannot be read as 90%");
        assert_eq!(of(0.9004), "server CPU 90.04%", "not 90%, which a value just under would round to");
        assert_eq!(of(0.9), "server CPU 90%");
        assert_eq!(of(0.97), "server CPU 97%");
        let starved = Limit::of(&[&trial(false, 1, 0.8996, 0.5, 0.9)]);
        assert_eq!(starved.text(), "server CPU 89.96% (CPUs 90% busy)");
    }

    #[test]
    fn an_open_model_cell_that_kept_up_was_held_back_by_nothing_but_the_rate() {
        let open = |completed: f64| {
            let mut t = trial(false, 1, 0.97, 0.0, 0.98);
            t.result.options.pacing =
                shootout_model::Pacing::Open { rate: 1000.0, arrival: shootout_model::Arrival::Constant };
            t.result.sends = Some(shootout_model::result::Sends {
                due: 1000,
                sent: 1000,
                late: 0,
                offered_per_s: 1000.0,
                sent_per_s: 1000.0,
            });
            t.result.throughput.requests_per_s = completed;
            t
        };
        let (kept, behind) = (open(999.0), open(480.0));
        assert_eq!(Limit::of(&[&kept, &kept]), Limit::KeptUp { busy: 0.97 });
        assert_eq!(Limit::of(&[&kept, &behind]), Limit::ServerCpu { busy: 0.97, cpus_busy: 0.98 }, "one fell behind");
        assert_eq!(Limit::KeptUp { busy: 0.2 }.text(), "kept up (CPU 20%)");
        let mut at_share = open(11.7);
        at_share.result.sends.as_mut().unwrap().offered_per_s = 13.0;
        // 0.9 × 13 is 11.700000000000001 in floating point.
        assert_eq!(Limit::of(&[&at_share]), Limit::KeptUp { busy: 0.97 }, "11.7 of 13 is 90% of it");
    }

    #[test]
    fn an_open_model_cell_whose_connections_were_all_busy_names_them() {
        let with = |result: shootout_model::LoadResult| TrialRecord { result, ..trial(false, 1, 0.3, 0.0, 0.35) };
        let busy = with(crate::behind::tests::open(100.0, 100_500, 100_000, 2500));
        assert_eq!(Limit::of(&[&busy]), Limit::Connections { busy: 0.3 });
        assert_eq!(Limit::of(&[&busy]).text(), "connections (CPU 30%)");
        let queued = with(crate::behind::tests::open(970.0, 900_000, 1_000, 2500));
        assert_eq!(Limit::of(&[&queued]), Limit::Waiting { busy: 0.3 }, "the server's requests queued");
    }
}
