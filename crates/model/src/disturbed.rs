//! [`Disturbance`]: a trial that something outside the run disturbed, so that an answer resting on it can say so
//! and a run can measure it again.
//!
//! A trial is disturbed when a process outside the run took [`TAKING`] of a CPU or more on the CPUs the server or
//! the load generator ran on (counted per CPU, [`Outsider::on_server_cpus`]: a process confined to other CPUs is
//! never the taker), or when the server's CPU pressure (the share of the window in which some task of its cgroup
//! waited for a CPU) rose [`PRESSURE_RISE`] or more above its quiet level, the lowest of its cell's other
//! repeats: something took its CPUs that no look saw (short-lived processes, a busy host under a container). The
//! kernel's own network work is not a disturbance: the load causes it.

use serde::{Deserialize, Serialize};

use crate::run::{Outsider, TrialRecord};

/// The share of one CPU on the run's CPUs from which another process disturbs a trial.
pub const TAKING: f64 = 0.10;

/// The rise of the server's CPU pressure above its quiet level from which a trial is disturbed.
pub const PRESSURE_RISE: f64 = 0.10;

/// What disturbed one trial.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Disturbance {
    /// The trial's repeat.
    pub repeat: u32,
    /// Its level.
    pub level: f64,
    /// Whose CPUs were taken.
    pub on: Whose,
    /// The process that took them, `stress (pid 4242)`; none when only the pressure showed it.
    pub who: Option<String>,
    /// Its share of one CPU on them.
    pub share: f64,
    /// The server's CPU pressure in the trial and in its quietest other repeat, when it rose.
    pub pressure: Option<(f64, f64)>,
}

/// Whose CPUs a disturbance took.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Whose {
    /// The server's.
    Server,
    /// The load generator's.
    Client,
}

impl Disturbance {
    /// Who took what, without the repeat: `stress (pid 4242) took up to 62% of a CPU on the server's CPUs`, or
    /// `the server's CPU pressure rose 10 points or more above its quietest repeat`.
    pub fn taker(&self) -> String {
        match &self.who {
            Some(who) => format!("{who} took up to {:.0}% of a CPU on {} CPUs", self.share * 100.0, self.whose()),
            None => "the server's CPU pressure rose 10 points or more above its quietest repeat".into(),
        }
    }

    fn whose(&self) -> &'static str {
        match self.on {
            Whose::Server => "the server's",
            Whose::Client => "the load generator's",
        }
    }

    /// In words: `stress (pid 4242) took 62% of a CPU on the server's CPUs during repeat 2`, or `the server's
    /// tasks waited for a CPU 35% of the window in repeat 2 against 12% in its quietest repeat`.
    pub fn text(&self) -> String {
        let whose = self.whose();
        match (&self.who, self.pressure) {
            (Some(who), _) => {
                format!("{who} took {:.0}% of a CPU on {whose} CPUs during repeat {}", self.share * 100.0, self.repeat)
            }
            (None, Some((now, quiet))) => format!(
                "the server's tasks waited for a CPU {:.0}% of the window in repeat {} against {:.0}% in its quietest \
                 repeat: something outside the run took its CPUs",
                now * 100.0,
                self.repeat,
                quiet * 100.0
            ),
            (None, None) => format!("{whose} CPUs were taken during repeat {}", self.repeat),
        }
    }
}

/// What disturbed `trial`, if anything, beside `others` (its cell's other repeats, whose lowest CPU pressure is
/// its quiet level; none: the pressure is not judged).
pub fn disturbance(trial: &TrialRecord, others: &[&TrialRecord]) -> Option<Disturbance> {
    let at = |on: Whose, who: Option<String>, share: f64, pressure: Option<(f64, f64)>| Disturbance {
        repeat: trial.repeat,
        level: trial.level,
        on,
        who,
        share,
        pressure,
    };
    let name = |o: &Outsider| format!("{} (pid {})", o.name, o.pid);
    // Only outsiders counted per CPU: before that, a process anywhere on the machine would read as a taker.
    let taking = |share: Option<f64>| share.filter(|&s| s >= TAKING);
    let server = trial.outsiders.iter().filter_map(|o| Some((o, taking(o.on_server_cpus)?, Whose::Server)));
    let client = trial.outsiders.iter().filter_map(|o| Some((o, taking(o.on_client_cpus)?, Whose::Client)));
    if let Some((o, share, on)) = server.chain(client).max_by(|a, b| a.1.total_cmp(&b.1)) {
        return Some(at(on, Some(name(o)), share, None));
    }
    let quiet = others.iter().filter(|t| t.repeat != trial.repeat).map(|t| t.usage.stalled.cpu).reduce(f64::min)?;
    let now = trial.usage.stalled.cpu;
    // A rise of ten points as the pressure figures write it (a billionth under is on it).
    (now >= quiet + PRESSURE_RISE - 1e-9).then(|| at(Whose::Server, None, 0.0, Some((now, quiet))))
}

/// The disturbed trials among `runs`, one cell's repeats.
pub fn disturbed(runs: &[&TrialRecord]) -> Vec<Disturbance> {
    runs.iter().filter_map(|t| disturbance(t, runs)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trial(repeat: u32, pressure: f64, outsiders: Vec<Outsider>) -> TrialRecord {
        let mut t: TrialRecord = serde_json::from_str(include_str!("../../report/tests/trial.json")).unwrap();
        t.repeat = repeat;
        t.usage.stalled.cpu = pressure;
        t.outsiders = outsiders;
        t
    }

    fn outsider(name: &str, share: f64, server: Option<f64>, client: Option<f64>) -> Outsider {
        Outsider {
            pid: 4242,
            name: name.into(),
            cpu_s: share * 3.0,
            share,
            on_server_cpus: server,
            on_client_cpus: client,
        }
    }

    #[test]
    fn a_process_on_the_runs_cpus_disturbs_a_trial_and_one_on_other_cpus_does_not() {
        let on_server = trial(2, 0.0, vec![outsider("stress", 0.62, Some(0.62), Some(0.0))]);
        let d = disturbance(&on_server, &[]).unwrap();
        assert_eq!((d.on, d.who.as_deref()), (Whose::Server, Some("stress (pid 4242)")));
        assert_eq!(d.text(), "stress (pid 4242) took 62% of a CPU on the server's CPUs during repeat 2");
        let on_client = trial(1, 0.0, vec![outsider("yes", 0.9, Some(0.0), Some(0.9))]);
        assert_eq!(disturbance(&on_client, &[]).unwrap().on, Whose::Client);
        let elsewhere = trial(1, 0.0, vec![outsider("yes", 0.9, Some(0.0), Some(0.05))]);
        assert_eq!(disturbance(&elsewhere, &[]), None, "confined to a CPU the run did not use");
        let unknown = trial(1, 0.0, vec![outsider("yes", 0.9, None, None)]);
        assert_eq!(disturbance(&unknown, &[]), None, "saved before outsiders were counted per CPU");
    }

    #[test]
    fn a_pressure_risen_ten_points_over_the_quietest_repeat_disturbs_a_trial() {
        let runs = [trial(1, 0.12, vec![]), trial(2, 0.35, vec![]), trial(3, 0.2, vec![])];
        let refs: Vec<&TrialRecord> = runs.iter().collect();
        let found = disturbed(&refs);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].pressure, Some((0.35, 0.12)));
        assert!(found[0].text().starts_with("the server's tasks waited for a CPU 35% of the window in repeat 2"));
        assert_eq!(disturbance(&runs[1], &[]), None, "no other repeat: no quiet level");
    }
}
