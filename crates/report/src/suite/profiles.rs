//! Profiles in a suite's report: the level each server is profiled at, chosen from what its measured trials
//! found ([`level_to_profile`]), and each profiled pass set beside the unprofiled cell at its level
//! ([`ProfileView`]): what the profiler cost the server, the frames that ran the most, and where its threads
//! blocked off a CPU in the same pass.

use serde::Serialize;
use shootout_model::profile::{OffCpu, ProfileAt, ServerProfile};
use shootout_profile::{Frame, Stacks};

use crate::analysis::limit::{Limit, BOUND, COLLECTED};
use crate::statistics::bound::at_least;
use crate::suite::summary::SuiteSummary;

/// Frames each server's table lists.
pub const HOTTEST: usize = 15;

/// The level to profile `server` at: `at`'s own level, or its capacity (the search's, else the highest level that
/// met the SLO, else its knee), or its knee; either falls back to the highest level it was measured at. None when
/// it has no measured level at all.
pub fn level_to_profile(summary: &SuiteSummary, server: &str, at: ProfileAt) -> Option<f64> {
    let highest = summary.cells.iter().filter(|c| c.server == server).map(|c| c.level).reduce(f64::max);
    let knee = summary.knees.iter().find(|(s, _)| s == server).map(|(_, level)| *level);
    let capacity = || {
        let searched = summary.capacities.iter().find(|c| c.search.server == server).and_then(|c| c.search.capacity);
        let met = summary.slo_answers.iter().find(|a| a.server == server).and_then(|a| a.level);
        searched.or(met).or(knee)
    };
    match at {
        ProfileAt::Level(level) => Some(level),
        ProfileAt::Capacity => capacity().or(highest),
        ProfileAt::Knee => knee.or(highest),
    }
}

/// A server whose CPU was full at the level it was profiled at, and whose profile spent [`COLLECTED`] or more of
/// its samples in its runtime's garbage collector, is held by that collection: its cell there says so, with the
/// profile's share. A runtime whose collector has threads of its own (a JVM's) is named without a profile.
pub fn name_collectors(summary: &mut SuiteSummary) {
    let collected: Vec<(String, f64, f64)> = summary
        .profiles
        .iter()
        .filter(|view| at_least(view.collector, COLLECTED))
        .map(|view| (view.server.clone(), view.level, view.collector))
        .collect();
    for (server, level, share) in collected {
        let Some(cell) = summary.cells.iter_mut().find(|c| c.server == server && c.level == level) else { continue };
        let busy = match cell.limit {
            Limit::ServerCpu { busy, .. } if at_least(busy, BOUND) => busy,
            Limit::OneCore { cores, cpus: 1, lock: false, .. } => cores,
            _ => continue,
        };
        cell.limit = Limit::Collector { share, busy, profiled: true };
    }
}

/// One server's profiled pass, as the report shows it.
#[derive(Debug, Clone, Serialize)]
pub struct ProfileView {
    /// The server.
    pub server: String,
    /// The level it was profiled at.
    pub level: f64,
    /// The profiler's name (`rbspy + perf` when perf recorded the native processes beside it).
    pub profiler: String,
    /// The profiler's command line.
    pub command: String,
    /// Samples recorded.
    pub samples: u64,
    /// Seconds recorded.
    pub seconds: f64,
    /// Requests per second while profiled.
    pub rps: f64,
    /// Mean response time while profiled, µs.
    pub mean_us: f64,
    /// The unprofiled cell's median requests per second at that level, when it was measured there.
    pub unprofiled_rps: Option<f64>,
    /// The unprofiled cell's median mean response time, µs.
    pub unprofiled_mean_us: Option<f64>,
    /// Share of its samples in its runtime's garbage collector, as its frames tell (V8's).
    pub collector: f64,
    /// The frames that ran the most.
    #[serde(skip)]
    pub hottest: Vec<Frame>,
    /// Its stacks, for the flame graph.
    #[serde(skip)]
    pub stacks: Stacks,
    /// Where its threads blocked, in microseconds, when that was recorded.
    #[serde(skip)]
    pub off_cpu: Option<Stacks>,
    /// Seconds its threads spent blocked, added up over them, when that was recorded.
    pub blocked_s: Option<f64>,
    /// Why where its threads blocked was not recorded (none when it was, or in a profile saved before shootout
    /// recorded it).
    pub off_cpu_left_out: Option<String>,
}

impl ProfileView {
    /// The view of `profile` (its stacks `folded`, and `off_cpu`, the stacks of where its threads blocked, when
    /// it recorded them), beside `summary`'s cell at its level.
    pub fn of(
        profile: &ServerProfile,
        folded: &str,
        off_cpu: Option<&str>,
        summary: &SuiteSummary,
    ) -> Result<ProfileView, String> {
        let damaged = |e: String| format!("the profile of '{}' is damaged: {e}", profile.server);
        let stacks = Stacks::parse(folded).map_err(damaged)?;
        let off_cpu = off_cpu.map(Stacks::parse).transpose().map_err(damaged)?;
        let (blocked_s, off_cpu_left_out) = match &profile.off_cpu {
            Some(OffCpu::Recorded { blocked_s, .. }) => (Some(*blocked_s), None),
            Some(OffCpu::LeftOut { why }) => (None, Some(why.clone())),
            None => (None, None),
        };
        let cell = summary.cell(&profile.server, profile.level);
        let result = &profile.trial.result;
        Ok(ProfileView {
            server: profile.server.clone(),
            level: profile.level,
            profiler: profile.profiler.names(profile.native_perf),
            command: profile.command.clone(),
            samples: profile.samples,
            seconds: profile.seconds,
            rps: result.throughput.requests_per_s,
            mean_us: result.latency.mean_us,
            unprofiled_rps: cell.map(|c| c.rps_median),
            unprofiled_mean_us: cell.map(|c| c.mean_us),
            collector: stacks.collector_share(),
            hottest: stacks.hottest(HOTTEST),
            stacks,
            off_cpu,
            blocked_s,
            off_cpu_left_out,
        })
    }

    /// The profiler's cost in words: `throughput −3.1%, mean +4.0% against the unprofiled run at this level`, or
    /// why it is not known.
    pub fn cost(&self) -> String {
        match (self.unprofiled_rps, self.unprofiled_mean_us) {
            (Some(rps), Some(mean)) if rps > 0.0 && mean > 0.0 => format!(
                "throughput {:+.1}%, mean {:+.1}% against the unprofiled trials at this level",
                100.0 * (self.rps / rps - 1.0),
                100.0 * (self.mean_us / mean - 1.0)
            ),
            _ => "not known: the server was not measured unprofiled at this level".to_string(),
        }
    }
}
