//! [`SuiteReport`]: what a report of a `shootout run` shows, gathered from its results directory alone (the
//! trials, `environment.json` and `suite.toml`), so it can be made on another machine, later.

use std::path::Path;

use shootout_model::result::Second;
use shootout_model::run::{Environment, TrialRecord};
use shootout_model::slo::{parse_condition, Condition};
use shootout_model::Pacing;

use crate::analysis::{analyze_by, Analysis, Statistic};

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
    pub timelines: Vec<(String, Vec<Second>)>,
    /// All trials.
    pub trials: Vec<TrialRecord>,
}

impl SuiteReport {
    /// Builds the report from a results directory's contents (servers in the suite's order when known).
    pub fn new(
        name: &str,
        suite_toml: &str,
        environment: Option<Environment>,
        trials: Vec<TrialRecord>,
    ) -> SuiteReport {
        let suite: toml::Value = toml::from_str(suite_toml).unwrap_or(toml::Value::Table(Default::default()));
        let slo: Vec<Condition> = suite
            .get("slo")
            .and_then(|v| v.as_array())
            .map(|items| items.iter().filter_map(|i| i.as_str()).filter_map(|t| parse_condition(t).ok()).collect())
            .unwrap_or_default();
        let mut servers: Vec<String> = suite
            .get("server")
            .and_then(|v| v.as_array())
            .map(|list| list.iter().filter_map(|s| s.get("name")?.as_str().map(String::from)).collect())
            .unwrap_or_default();
        for t in &trials {
            if !servers.contains(&t.server) {
                servers.push(t.server.clone());
            }
        }
        let mut levels: Vec<f64> = trials.iter().map(|t| t.level).collect();
        levels.sort_by(f64::total_cmp);
        levels.dedup();
        let unit = trials.first().map_or("users", |t| {
            let options = &t.result.options;
            crate::units::level_unit(matches!(options.pacing, Pacing::Open { .. }), options.sessions)
        });
        let statistic = suite.get("statistic").and_then(|s| s.as_str()).and_then(Statistic::parse).unwrap_or_default();
        let analysis = analyze_by(&trials, &servers, &levels, &slo, statistic);
        let timeline_level = levels.last().copied().unwrap_or(0.0);
        let timelines = timelines(&trials, servers.iter().map(String::as_str), timeline_level);
        SuiteReport {
            name: name.to_string(),
            unit,
            servers,
            slo,
            analysis,
            environment,
            timeline_level,
            timelines,
            trials,
        }
    }

    /// Shows the per-second timelines of `level` instead of the highest level.
    pub fn with_timeline_level(mut self, level: f64) -> SuiteReport {
        self.timeline_level = level;
        self.timelines = timelines(&self.trials, self.servers.iter().map(String::as_str), level);
        self
    }

    /// Reads a results directory: its trials, environment and suite.
    pub fn load(dir: &Path, trials: Vec<TrialRecord>) -> SuiteReport {
        let suite = std::fs::read_to_string(dir.join("suite.toml")).unwrap_or_default();
        let environment = std::fs::read_to_string(dir.join("environment.json"))
            .ok()
            .and_then(|text| serde_json::from_str(&text).ok());
        let name = toml::from_str::<toml::Value>(&suite)
            .ok()
            .and_then(|v| v.get("name")?.as_str().map(String::from))
            .unwrap_or_else(|| dir.file_name().map_or("shootout".into(), |n| n.to_string_lossy().into_owned()));
        SuiteReport::new(&name, &suite, environment, trials)
    }
}

/// Per server, the timeline of its first repeat at `level`.
fn timelines<'a>(
    trials: &[TrialRecord],
    servers: impl Iterator<Item = &'a str>,
    level: f64,
) -> Vec<(String, Vec<Second>)> {
    servers
        .filter_map(|server| {
            let trial = trials.iter().filter(|t| t.server == server && t.level == level).min_by_key(|t| t.repeat)?;
            Some((server.to_string(), trial.result.timeline.clone()))
        })
        .collect()
}
