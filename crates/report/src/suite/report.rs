//! [`SuiteReport`]: what a report of a `shootout run` shows, gathered from its results directory alone (the
//! trials, `environment.json` and the outline of `suite.toml`), so it can be made on another machine, later.

use std::path::Path;

use shootout_model::result::Second;
use shootout_model::run::{Environment, Statistic, TrialRecord};
use shootout_model::search::ServerSearch;
use shootout_model::slo::Condition;
use shootout_model::units::level_unit;
use shootout_model::Pacing;
use shootout_scenario::FileError;
use shootout_suite::{MatrixServer, Outline, Sweep};

use crate::analysis::{analyze_by, Analysis};

/// A suite's results, ready to render.
#[derive(Debug, Clone)]
pub struct SuiteReport {
    /// The suite's name.
    pub name: String,
    /// What a level counts: "users" or "req/s".
    pub unit: &'static str,
    /// The servers, in the suite's order.
    pub servers: Vec<String>,
    /// The SLO conditions.
    pub slo: Vec<Condition>,
    /// The analysis of every trial.
    pub analysis: Analysis,
    /// The machine and versions, when recorded.
    pub environment: Option<Environment>,
    /// The level whose per-second timelines are shown (chosen, or the highest measured).
    pub timeline_level: f64,
    /// Per server, the timeline of its first repeat at that level.
    pub timelines: Vec<Timeline>,
    /// All trials.
    pub trials: Vec<TrialRecord>,
    /// The servers that matrices expanded to (none without a matrix).
    pub matrix: Vec<MatrixServer>,
    /// Each server's capacity search, in the servers' order, when the run searched instead of sweeping.
    pub searches: Vec<ServerSearch>,
}

impl SuiteReport {
    /// Builds the report of `trials` from the suite's outline (servers in the suite's order, then any others the
    /// trials name).
    pub fn new(outline: Outline, environment: Option<Environment>, trials: Vec<TrialRecord>) -> SuiteReport {
        let Outline { name, mut servers, slo, statistic, matrix, levels: swept, unit, .. } = outline;
        for t in &trials {
            if !servers.contains(&t.server) {
                servers.push(t.server.clone());
            }
        }
        let mut levels: Vec<f64> = trials.iter().map(|t| t.level).collect();
        levels.sort_by(f64::total_cmp);
        levels.dedup();
        let unit = trials.first().map_or(unit, |t| {
            let options = &t.result.options;
            level_unit(matches!(options.pacing, Pacing::Open { .. }), options.sessions)
        });
        // The SLO answer goes up the sweep's levels, those no trial reached included, so that it never passes one.
        let mut sweep = levels.clone();
        sweep.extend(swept.iter().filter(|l| !levels.contains(l)));
        sweep.sort_by(f64::total_cmp);
        let analysis = analyze_by(&trials, &servers, &sweep, &slo, statistic);
        let timeline_level = levels.last().copied().unwrap_or(0.0);
        let timelines = timelines(&trials, servers.iter().map(String::as_str), timeline_level);
        SuiteReport {
            name,
            unit,
            servers,
            slo,
            analysis,
            environment,
            timeline_level,
            timelines,
            trials,
            matrix,
            searches: Vec::new(),
        }
    }

    /// Shows the per-second timelines of `level` instead of the highest level.
    pub fn with_timeline_level(mut self, level: f64) -> SuiteReport {
        self.timeline_level = level;
        self.timelines = timelines(&self.trials, self.servers.iter().map(String::as_str), level);
        self
    }

    /// Reads a results directory: its trials, environment and suite, with the levels of the sweep it ran (a
    /// directory without `suite.toml` is named after itself; a `suite.toml` that does not parse is an error that
    /// names its place).
    pub fn load(dir: &Path, trials: Vec<TrialRecord>) -> Result<SuiteReport, FileError> {
        let suite_file = dir.join("suite.toml");
        let read = |path: &Path| shootout_model::reading::read_results_file(path, Some(dir));
        let sweep = Sweep::from_name(&read(&dir.join("sweep")).unwrap_or_default());
        let outline = match read(&suite_file) {
            Ok(text) => shootout_suite::outline(&text, &suite_file.display().to_string(), sweep)?,
            Err(_) => Outline {
                name: dir.file_name().map_or("shootout".into(), |n| n.to_string_lossy().into_owned()),
                servers: Vec::new(),
                slo: Vec::new(),
                statistic: Statistic::default(),
                matrix: Vec::new(),
                levels: Vec::new(),
                search: false,
                unit: "users",
            },
        };
        let environment = read(&dir.join("environment.json")).ok().and_then(|text| serde_json::from_str(&text).ok());
        Ok(SuiteReport::new(outline, environment, trials))
    }

    /// Adds the servers' capacity searches of a run that searched (as the store read them), in the servers' order.
    pub fn with_searches(mut self, mut searches: Vec<ServerSearch>) -> SuiteReport {
        searches.sort_by_key(|s| self.servers.iter().position(|name| *name == s.server).unwrap_or(usize::MAX));
        self.searches = searches;
        self
    }
}

/// One server's second-by-second timeline.
#[derive(Debug, Clone, PartialEq)]
pub struct Timeline {
    /// Server.
    pub server: String,
    /// Its seconds, from the first of the measured window.
    pub seconds: Vec<Second>,
    /// The length of the measured window, seconds: its last second may have been measured only in part.
    pub duration_s: f64,
}

impl Timeline {
    /// The timeline of `trial`.
    pub fn of(trial: &TrialRecord) -> Timeline {
        Timeline {
            server: trial.server.clone(),
            seconds: trial.result.timeline.clone(),
            duration_s: trial.result.duration_s,
        }
    }
}

/// Per server, the timeline of its first repeat at `level`.
fn timelines<'a>(trials: &[TrialRecord], servers: impl Iterator<Item = &'a str>, level: f64) -> Vec<Timeline> {
    servers
        .filter_map(|server| {
            let trial = trials.iter().filter(|t| t.server == server && t.level == level).min_by_key(|t| t.repeat)?;
            Some(Timeline::of(trial))
        })
        .collect()
}
