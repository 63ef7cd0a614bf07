//! [`Limit`]: what held a cell's throughput back, read from what every trial already samples. The client was the
//! bottleneck when it was 90% busy or more in any repeat (its figures then measure shootout); else the server was
//! CPU-bound when its process tree kept 90% or more of the CPUs it could run on busy (median over the repeats), or
//! wanted that much: busy plus the time its threads sat ready to run while other work held those CPUs (another
//! process, or the client on a shared core); else the server was waiting with CPU to spare: for a free worker, a
//! lock, the disk, the network or a sleep.

use serde::Serialize;
use shootout_model::run::TrialRecord;

use crate::analysis::median;

/// The busy share from which the client, or the server, counts as the bottleneck.
pub const BOUND: f64 = 0.9;

/// What limited one server at one level.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "by", rename_all = "snake_case")]
pub enum Limit {
    /// The load generator was 90% busy or more in some repeat: the figures measure shootout, not the server.
    Client,
    /// The server's processes used 90% or more of the CPUs they could run on (`busy`, 0 to 1), or would have,
    /// counting the time they waited for one (`queued`).
    ServerCpu {
        /// Median busy share.
        busy: f64,
        /// Median queued share.
        queued: f64,
    },
    /// The server had CPU to spare (`busy`, 0 to 1) and still went no faster: it was waiting.
    Waiting {
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
        let queued = median(&runs.iter().map(|t| t.usage.queued).collect::<Vec<_>>());
        if busy >= BOUND || busy + queued >= BOUND {
            Limit::ServerCpu { busy, queued }
        } else {
            Limit::Waiting { busy }
        }
    }

    /// How the tables write it: `client-bound`, `server CPU 97%`, `server CPU 60% + 45% queued` (it wanted more
    /// than it got), `waiting (CPU 35%)`, or `—`.
    pub fn text(&self) -> String {
        match self {
            Limit::Client => "client-bound".into(),
            Limit::ServerCpu { busy, .. } if *busy >= BOUND => format!("server CPU {:.0}%", busy * 100.0),
            Limit::ServerCpu { busy, queued } => {
                format!("server CPU {:.0}% + {:.0}% queued", busy * 100.0, queued * 100.0)
            }
            Limit::Waiting { busy } => format!("waiting (CPU {:.0}%)", busy * 100.0),
            Limit::Unknown => "—".into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trial(saturated: bool, cpus: u32, busy: f64, queued: f64) -> TrialRecord {
        let mut t: TrialRecord = serde_json::from_str(include_str!("../tests/trial.json")).unwrap();
        t.result.client.saturated = saturated;
        t.usage.cpus = cpus;
        t.usage.busy = busy;
        t.usage.queued = queued;
        t
    }

    #[test]
    fn the_client_first_then_the_servers_cpu_then_waiting() {
        let (a, b, c) = (trial(false, 1, 0.95, 0.0), trial(true, 1, 0.2, 0.0), trial(false, 1, 0.97, 0.02));
        assert_eq!(Limit::of(&[&a, &b]), Limit::Client, "one client-bound repeat is enough");
        assert_eq!(Limit::of(&[&a, &c]), Limit::ServerCpu { busy: 0.96, queued: 0.01 });
        let starved = trial(false, 1, 0.6, 0.45);
        assert_eq!(Limit::of(&[&starved]), Limit::ServerCpu { busy: 0.6, queued: 0.45 }, "it wanted its CPU");
        let idle = trial(false, 2, 0.35, 0.01);
        assert_eq!(Limit::of(&[&idle]), Limit::Waiting { busy: 0.35 });
        assert_eq!(Limit::of(&[&trial(false, 0, 0.0, 0.0)]), Limit::Unknown, "older results");
        assert_eq!(Limit::ServerCpu { busy: 0.966, queued: 0.0 }.text(), "server CPU 97%");
        assert_eq!(Limit::ServerCpu { busy: 0.6, queued: 0.45 }.text(), "server CPU 60% + 45% queued");
        assert_eq!(Limit::Waiting { busy: 0.35 }.text(), "waiting (CPU 35%)");
    }
}
