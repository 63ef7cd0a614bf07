//! [`ParameterSweep`]: the servers of a suite's matrices arranged for the question they ask ("how many workers?"):
//! the first parameter of the first matrix goes on the x axis, and every matrix with that parameter gives one
//! line per combination of its other values (`puma -w {workers} -t 5`: the placeholder left in the name is what
//! varies along the line). [`ParameterSweep::best`] answers the question per line family: the value that served the
//! most while meeting the SLO (or, without one, at any level).

use shootout_suite::MatrixServer;

use crate::analysis::{Cell, SloAnswer};
use crate::statistics::bound::at_least;

/// One line of a parameter chart: servers of one matrix that differ only in the swept parameter.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepLine {
    /// The matrix's name with every value but the swept one filled in.
    pub name: String,
    /// The matrix's name as written.
    pub family: String,
    /// The swept value of each server on the line, and the server's name, by value.
    pub points: Vec<(f64, String)>,
}

/// The matrices' servers along one parameter.
#[derive(Debug, Clone, PartialEq)]
pub struct ParameterSweep {
    /// The parameter on the x axis.
    pub parameter: String,
    /// One line per matrix and combination of its other values.
    pub lines: Vec<SweepLine>,
}

/// A family's answer: the server, among those of one matrix, that served the most within the SLO.
#[derive(Debug, Clone, PartialEq)]
pub struct BestValue {
    /// The matrix's name as written.
    pub family: String,
    /// The winning server's values, in the matrix's order.
    pub params: Vec<(String, String)>,
    /// Its name.
    pub server: String,
    /// The level of its best throughput within the SLO.
    pub level: f64,
    /// That throughput.
    pub rps: f64,
    /// The values of the family's other servers that came within [`CLOSE`] of it, within the SLO too: on a
    /// noisy machine, as good an answer.
    pub close: Vec<Vec<(String, String)>>,
}

/// How near the best another value's throughput must come to be named beside it.
pub const CLOSE: f64 = 0.05;

impl ParameterSweep {
    /// The sweep of `matrix` (none when no matrix has a numeric first parameter).
    pub fn of(matrix: &[MatrixServer]) -> Option<ParameterSweep> {
        let parameter = matrix.first()?.params.first()?.0.clone();
        let mut lines: Vec<SweepLine> = Vec::new();
        for server in matrix {
            let Some(x) = server.params.iter().find(|(k, _)| *k == parameter).and_then(|(_, v)| v.parse::<f64>().ok())
            else {
                continue;
            };
            let name = line_name(&server.family, &parameter, &server.params);
            match lines.iter_mut().find(|l| l.name == name && l.family == server.family) {
                Some(line) => line.points.push((x, server.name.clone())),
                None => lines.push(SweepLine {
                    name,
                    family: server.family.clone(),
                    points: vec![(x, server.name.clone())],
                }),
            }
        }
        lines.iter_mut().for_each(|l| l.points.sort_by(|a, b| a.0.total_cmp(&b.0)));
        (!lines.is_empty()).then_some(ParameterSweep { parameter, lines })
    }

    /// Per matrix, the server that served the most while meeting the SLO (`slo` answers; with none, the most at
    /// any level), judged by the suite's headline figure.
    pub fn best(&self, matrix: &[MatrixServer], cells: &[Cell], slo: &[SloAnswer]) -> Vec<BestValue> {
        let mut families: Vec<&str> = Vec::new();
        for line in &self.lines {
            if !families.contains(&line.family.as_str()) {
                families.push(&line.family);
            }
        }
        families
            .into_iter()
            .filter_map(|family| {
                let members = matrix.iter().filter(|m| m.family == family);
                let candidates = members.filter_map(|m| {
                    let cell = if slo.is_empty() {
                        cells
                            .iter()
                            .filter(|c| c.server == m.name)
                            .max_by(|a, b| a.rps_headline.total_cmp(&b.rps_headline))
                    } else {
                        let answer = slo.iter().find(|a| a.server == m.name)?;
                        cells.iter().find(|c| c.server == m.name && Some(c.level) == answer.level)
                    }?;
                    Some((m, cell))
                });
                let candidates: Vec<(&MatrixServer, &Cell)> = candidates.collect();
                let (winner, cell) = candidates.iter().max_by(|a, b| a.1.rps_headline.total_cmp(&b.1.rps_headline))?;
                let close = candidates
                    .iter()
                    .filter(|(m, c)| {
                        m.name != winner.name && at_least(c.rps_headline, (1.0 - CLOSE) * cell.rps_headline)
                    })
                    .map(|(m, _)| m.params.clone())
                    .collect();
                Some(BestValue {
                    family: family.to_string(),
                    params: winner.params.clone(),
                    server: winner.name.clone(),
                    level: cell.level,
                    rps: cell.rps_headline,
                    close,
                })
            })
            .collect()
    }
}

/// `family` with every value but `parameter`'s filled in; values that have no placeholder in it are named after
/// it in brackets.
fn line_name(family: &str, parameter: &str, params: &[(String, String)]) -> String {
    let mut name = family.to_string();
    let mut unplaced = Vec::new();
    for (key, value) in params.iter().filter(|(k, _)| k != parameter) {
        let placeholder = format!("{{{key}}}");
        if name.contains(&placeholder) {
            name = name.replace(&placeholder, value);
        } else {
            unplaced.push(format!("{key}={value}"));
        }
    }
    if unplaced.is_empty() {
        name
    } else {
        format!("{name} ({})", unplaced.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(family: &str, params: &[(&str, &str)]) -> MatrixServer {
        let params: Vec<(String, String)> = params.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        let name = params.iter().fold(family.to_string(), |n, (k, v)| n.replace(&format!("{{{k}}}"), v));
        MatrixServer { name, family: family.into(), params }
    }

    fn matrix() -> Vec<MatrixServer> {
        let mut servers = Vec::new();
        for w in ["1", "2", "4"] {
            for t in ["1", "5"] {
                servers.push(server("puma -w {workers} -t {threads}", &[("workers", w), ("threads", t)]));
            }
        }
        for w in ["1", "2", "3"] {
            servers.push(server("unicorn -w {workers}", &[("workers", w)]));
        }
        servers
    }

    #[test]
    fn the_first_parameter_on_x_one_line_per_other_combination() {
        let sweep = ParameterSweep::of(&matrix()).unwrap();
        assert_eq!(sweep.parameter, "workers");
        let names: Vec<&str> = sweep.lines.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(names, ["puma -w {workers} -t 1", "puma -w {workers} -t 5", "unicorn -w {workers}"]);
        let xs: Vec<f64> = sweep.lines[1].points.iter().map(|p| p.0).collect();
        assert_eq!(xs, [1.0, 2.0, 4.0]);
        assert_eq!(sweep.lines[1].points[2].1, "puma -w 4 -t 5");
        assert_eq!(
            line_name("app", "workers", &[("workers".into(), "2".into()), ("mode".into(), "x".into())]),
            "app (mode=x)"
        );
        assert_eq!(ParameterSweep::of(&[]), None);
    }

    #[test]
    fn the_best_value_is_the_most_served_within_the_slo() {
        let matrix = matrix();
        let sweep = ParameterSweep::of(&matrix).unwrap();
        let cell = |server: &str, level: f64, rps: f64| -> Cell {
            let mut t: shootout_model::run::TrialRecord =
                serde_json::from_str(include_str!("../../tests/trial.json")).unwrap();
            t.server = server.into();
            t.level = level;
            let mut c = crate::analysis::analyze(&[t], &[server.to_string()], &[level], &[]).cells.remove(0);
            c.rps_headline = rps;
            c
        };
        let cells = vec![
            cell("puma -w 2 -t 5", 64.0, 3000.0),
            cell("puma -w 4 -t 5", 16.0, 2500.0),
            cell("puma -w 4 -t 5", 64.0, 4500.0),
            cell("unicorn -w 3", 64.0, 9000.0),
        ];
        let answers = |pairs: &[(&str, Option<f64>)]| -> Vec<SloAnswer> {
            let answer = |(s, l): &(&str, Option<f64>)| SloAnswer {
                server: s.to_string(),
                level: *l,
                rps: None,
                fails_at: None,
                unmeasured_at: None,
                measured: 1,
            };
            pairs.iter().map(answer).collect()
        };
        // Puma -w 4 -t 5 meets the SLO only up to 16 users: -w 2 -t 5 at 64 is the answer.
        let slo = answers(&[("puma -w 2 -t 5", Some(64.0)), ("puma -w 4 -t 5", Some(16.0)), ("unicorn -w 3", None)]);
        let best = sweep.best(&matrix, &cells, &slo);
        assert_eq!(best.len(), 1, "unicorn never met the SLO: {best:?}");
        assert_eq!((best[0].server.as_str(), best[0].level, best[0].rps), ("puma -w 2 -t 5", 64.0, 3000.0));
        let best = sweep.best(&matrix, &cells, &[]);
        assert_eq!(best[0].server, "puma -w 4 -t 5", "without an SLO, the most at any level");
        assert!(best[0].close.is_empty(), "3000 is not within 5% of 4500");
        assert_eq!(best[1].server, "unicorn -w 3");
        let mut near = cells.clone();
        near[0].rps_headline = 4400.0;
        let best = sweep.best(&matrix, &near, &[]);
        assert_eq!(best[0].close, [vec![("workers".to_string(), "2".to_string()), ("threads".into(), "5".into())]]);
    }
}
