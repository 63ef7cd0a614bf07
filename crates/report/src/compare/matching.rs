//! [`Shape`] and [`difference`]: whether two runs measured the same thing, so that `compare` can put one against
//! the other. A run's shape is its load model (closed or open), what each request asks for (the URL's path and
//! query, or the scenario file) and its levels. Host and port are not part of it: the old and the new server
//! may run side by side, or on other machines. A suite's shape comes from its trials and the levels of its failed
//! trials (a level where everything failed is still one of its levels, and `compare` calls it missing).

use std::collections::BTreeMap;

use shootout_model::run::TrialRecord;
use shootout_model::{LoadOptions, LoadResult, Pacing};

/// What two runs must share to be compared.
#[derive(Debug, Clone, PartialEq)]
pub struct Shape {
    /// "closed" or "open" (several, joined, for a suite that mixes them).
    pub model: String,
    /// Per server (one unnamed entry for a load run), the path and query or the scenario.
    pub requests: BTreeMap<String, String>,
    /// The levels, ascending.
    pub levels: Vec<f64>,
    /// What a level counts ("users", "req/s").
    pub unit: &'static str,
}

impl Shape {
    /// The shape of one `shootout load` result.
    pub fn of_result(result: &LoadResult) -> Shape {
        let o = &result.options;
        Shape {
            model: model(o).into(),
            requests: BTreeMap::from([(String::new(), request(o))]),
            levels: vec![crate::compare::level(result)],
            unit: unit(o),
        }
    }

    /// The shape of a suite run: its trials, and the levels of the trials that could not run.
    pub fn of_trials(trials: &[TrialRecord], failed_levels: &[f64]) -> Shape {
        let mut models: Vec<&str> = trials.iter().map(|t| model(&t.result.options)).collect();
        models.sort_unstable();
        models.dedup();
        let requests = trials.iter().map(|t| (t.server.clone(), request(&t.result.options))).collect();
        let mut levels: Vec<f64> = trials.iter().map(|t| t.level).chain(failed_levels.iter().copied()).collect();
        levels.sort_by(f64::total_cmp);
        levels.dedup();
        let unit = trials.first().map_or("users", |t| unit(&t.result.options));
        Shape { model: models.join(" and "), requests, levels, unit }
    }
}

/// The first way `new` differs from `old`, in one line, or none when they match.
pub fn difference(old: &Shape, new: &Shape) -> Option<String> {
    if old.model != new.model && !old.model.is_empty() && !new.model.is_empty() {
        return Some(format!("the load model differs: OLD is {}, NEW is {}", old.model, new.model));
    }
    for (server, old_request) in &old.requests {
        match new.requests.get(server) {
            Some(new_request) if new_request != old_request => {
                let whose = if server.is_empty() { String::new() } else { format!(" of {server}") };
                return Some(format!("the request{whose} differs: OLD asks for {old_request}, NEW for {new_request}"));
            }
            _ => {}
        }
    }
    if old.levels != new.levels {
        let list = |s: &Shape| s.levels.iter().map(f64::to_string).collect::<Vec<_>>().join(", ");
        return Some(format!("the levels ({}) differ: OLD has {}; NEW has {}", new.unit, list(old), list(new)));
    }
    None
}

fn model(options: &LoadOptions) -> &'static str {
    match options.pacing {
        Pacing::Closed => "closed",
        Pacing::Open { .. } => "open",
    }
}

fn unit(options: &LoadOptions) -> &'static str {
    shootout_model::units::level_unit(matches!(options.pacing, Pacing::Open { .. }), options.sessions)
}

/// What a request asks for: `GET /hello?x=1`, or `scenario login.toml`.
fn request(options: &LoadOptions) -> String {
    if let Some(scenario) = &options.scenario {
        return format!("scenario {scenario}");
    }
    let after_scheme = options.url.split_once("://").map_or(options.url.as_str(), |(_, rest)| rest);
    let path = after_scheme.find(['/', '?']).map_or("/", |at| &after_scheme[at..]);
    format!("{} {path}", options.method)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(url: &str, open: bool, connections: u32) -> LoadResult {
        let t: TrialRecord = serde_json::from_str(include_str!("../../tests/trial.json")).unwrap();
        let mut r = t.result;
        r.options.url = url.into();
        r.options.connections = connections;
        r.options.pacing = if open {
            Pacing::Open { rate: 2000.0, arrival: shootout_model::Arrival::Constant }
        } else {
            Pacing::Closed
        };
        r
    }

    #[test]
    fn runs_of_another_model_request_or_level_do_not_match() {
        let base = Shape::of_result(&result("http://127.0.0.1:8080/hello", false, 4));
        let moved = Shape::of_result(&result("http://10.0.0.2:9000/hello", false, 4));
        assert_eq!(difference(&base, &moved), None, "host and port may differ");
        let open = Shape::of_result(&result("http://127.0.0.1:8080/hello", true, 4));
        assert_eq!(difference(&base, &open).unwrap(), "the load model differs: OLD is closed, NEW is open");
        let other = Shape::of_result(&result("http://127.0.0.1:8080/json?n=1", false, 4));
        assert_eq!(
            difference(&base, &other).unwrap(),
            "the request differs: OLD asks for GET /hello, NEW for GET /json?n=1"
        );
        let more = Shape::of_result(&result("http://127.0.0.1:8080/hello", false, 16));
        assert_eq!(difference(&base, &more).unwrap(), "the levels (users) differ: OLD has 4; NEW has 16");
        let bare = Shape::of_result(&result("http://127.0.0.1:8080", false, 4));
        assert_eq!(bare.requests[""], "GET /");
    }

    #[test]
    fn a_suite_keeps_the_levels_of_its_failed_trials() {
        let trial = |server: &str, level: f64| {
            let mut t: TrialRecord = serde_json::from_str(include_str!("../../tests/trial.json")).unwrap();
            (t.server, t.level) = (server.into(), level);
            t
        };
        let old = Shape::of_trials(&[trial("a", 1.0), trial("a", 4.0), trial("b", 1.0)], &[]);
        let new = Shape::of_trials(&[trial("a", 1.0), trial("b", 1.0)], &[4.0]);
        assert_eq!(difference(&old, &new), None, "a level where every trial failed is still run");
        let fewer = Shape::of_trials(&[trial("a", 1.0)], &[]);
        assert_eq!(difference(&old, &fewer).unwrap(), "the levels (users) differ: OLD has 1, 4; NEW has 1");
    }
}
