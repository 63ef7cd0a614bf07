//! [`Condition`]: a bound on one figure of a result, such as `p99 < 200ms`, `errors < 1%` or `rps >= 1000`.
//! A suite's SLO is a list of conditions that must hold; `shootout load --fail-if` takes conditions that must
//! not. One parser and one meaning for both.

use serde::{Deserialize, Serialize};

/// A service-level objective: a condition that must hold.
pub type Slo = Condition;

/// `METRIC OP LIMIT`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Condition {
    /// What is measured.
    pub metric: Metric,
    /// How it is compared.
    pub op: Op,
    /// The limit: µs for latencies, percent for errors, requests per second for rps.
    pub limit: f64,
    /// As written.
    pub text: String,
}

/// A figure of a result a condition can bound.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    /// Mean latency.
    Mean,
    /// A latency percentile, 0 to 100 (`p99`, `p99.9`, `p50`).
    Percentile(f64),
    /// Largest latency.
    Max,
    /// Failed requests and HTTP errors, percent of all requests.
    Errors,
    /// Scenarios: responses that failed a check, percent of all responses (0 for a run without checks).
    Checks,
    /// Responses per second.
    Rps,
}

/// A comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
}

impl Condition {
    /// True when `value` satisfies the condition.
    pub fn holds(&self, value: f64) -> bool {
        match self.op {
            Op::Lt => value < self.limit,
            Op::Le => value <= self.limit,
            Op::Gt => value > self.limit,
            Op::Ge => value >= self.limit,
        }
    }
}

/// Reads `mean < 1s`, `p99>200ms`, `p99.9 <= 1s`, `max < 2s`, `errors < 1%`, `checks < 1%`, `rps >= 1000`.
pub fn parse_condition(text: &str) -> Result<Condition, String> {
    let bad = || {
        format!(
            "'{text}' is not a condition: write METRIC OP LIMIT, like \"p99 < 200ms\", \"mean < 1s\", \"errors < 1%\" \
             or \"rps >= 1000\" (metrics: mean, p50, p90, p99, p99.9, max, errors, checks, rps)"
        )
    };
    let at = text.find(['<', '>']).ok_or_else(bad)?;
    let (metric, rest) = (text[..at].trim(), &text[at..]);
    let (op, limit) = if let Some(limit) = rest.strip_prefix("<=") {
        (Op::Le, limit)
    } else if let Some(limit) = rest.strip_prefix(">=") {
        (Op::Ge, limit)
    } else if let Some(limit) = rest.strip_prefix('<') {
        (Op::Lt, limit)
    } else {
        (Op::Gt, &rest[1..])
    };
    let limit = limit.trim();
    let metric = match metric {
        "mean" => Metric::Mean,
        "max" => Metric::Max,
        "errors" => Metric::Errors,
        "checks" => Metric::Checks,
        "rps" => Metric::Rps,
        p => match p.strip_prefix('p').map(str::parse::<f64>) {
            Some(Ok(v)) if v > 0.0 && v < 100.0 => Metric::Percentile(v),
            _ => return Err(bad()),
        },
    };
    let limit = match metric {
        Metric::Errors | Metric::Checks => limit.trim_end_matches('%').trim().parse::<f64>().map_err(|_| bad())?,
        Metric::Rps => limit.parse::<f64>().map_err(|_| bad())?,
        _ => crate::units::parse_duration(limit).map_err(|_| bad())?.as_secs_f64() * 1e6,
    };
    Ok(Condition { metric, op, limit, text: text.to_string() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_every_form() {
        let c = parse_condition("p99>200ms").unwrap();
        assert_eq!((c.metric, c.op, c.limit), (Metric::Percentile(99.0), Op::Gt, 200_000.0));
        assert_eq!(parse_condition("mean < 1s").unwrap().limit, 1e6);
        assert_eq!(parse_condition("p99.9 <= 1s").unwrap().metric, Metric::Percentile(99.9));
        assert_eq!(parse_condition("errors < 1%").unwrap().limit, 1.0);
        let checks = parse_condition("checks < 0.5%").unwrap();
        assert_eq!((checks.metric, checks.limit), (Metric::Checks, 0.5));
        let rps = parse_condition("rps >= 1000").unwrap();
        assert_eq!((rps.metric, rps.op, rps.limit), (Metric::Rps, Op::Ge, 1000.0));
        assert!(rps.holds(1000.0) && !rps.holds(999.0));
        for bad in ["fast", "p200 < 1s", "mean < soon", "errors > lots"] {
            assert!(parse_condition(bad).is_err(), "{bad}");
        }
    }
}
