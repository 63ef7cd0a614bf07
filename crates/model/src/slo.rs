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

/// The metrics a condition can name, for help texts and errors.
pub const METRICS: &str =
    "mean, max, pN for any percentile N above 0 and below 100, in digits (p50, p98, p99.9), errors, checks, rps";

/// Reads `mean < 1s`, `p99>200ms`, `p99.9 <= 1s`, `max < 2s`, `errors < 1%`, `checks < 1%`, `rps >= 1000`. A time
/// needs its unit: `p99>200` is refused rather than read as 200 seconds (k6 reads it as milliseconds).
pub fn parse_condition(text: &str) -> Result<Condition, String> {
    let bad = || {
        format!(
            "'{text}' is not a condition: write METRIC OP LIMIT, like \"p99 < 200ms\", \"mean < 1s\", \"errors < 1%\" \
             or \"rps >= 1000\" (metrics: {METRICS})"
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
        p => Metric::Percentile(percentile(p).ok_or_else(bad)?),
    };
    let limit = match metric {
        Metric::Errors | Metric::Checks => limit.trim_end_matches('%').trim().parse::<f64>().map_err(|_| bad())?,
        Metric::Rps => limit.parse::<f64>().map_err(|_| bad())?,
        _ if limit.parse::<f64>().is_ok() => {
            let text = text.trim();
            return Err(format!("{text}: give a unit, e.g. {text}ms"));
        }
        _ => crate::units::parse_duration(limit).map_err(|_| bad())?.as_secs_f64() * 1e6,
    };
    Ok(Condition { metric, op, limit, text: text.to_string() })
}

/// The percentile `pN` names: N written in decimal digits (`p98`, `p99.9`), above 0 and below 100.
fn percentile(metric: &str) -> Option<f64> {
    let digits = metric.strip_prefix('p')?;
    let decimal = !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit() || c == '.');
    decimal.then(|| digits.parse::<f64>().ok()).flatten().filter(|&p| p > 0.0 && p < 100.0)
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
        for bad in
            ["fast", "p200 < 1s", "p0 < 1s", "p1e1 < 1s", "p+5 < 1s", "pinf < 1s", "mean < soon", "errors > lots"]
        {
            assert!(parse_condition(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn any_percentile_written_in_digits_is_a_metric() {
        for (text, p) in [("p98 < 1s", 98.0), ("p42>5ms", 42.0), ("p99.99 <= 2ms", 99.99), ("p0.1 < 1ms", 0.1)] {
            assert_eq!(parse_condition(text).unwrap().metric, Metric::Percentile(p), "{text}");
        }
    }

    #[test]
    fn a_time_without_a_unit_is_refused_with_the_fix() {
        assert_eq!(parse_condition("p99>200").unwrap_err(), "p99>200: give a unit, e.g. p99>200ms");
        assert_eq!(parse_condition("p99 < 5").unwrap_err(), "p99 < 5: give a unit, e.g. p99 < 5ms");
        for text in ["mean < 0.5", "max<2", "p99.9 >= 1"] {
            assert_eq!(parse_condition(text).unwrap_err(), format!("{text}: give a unit, e.g. {text}ms"));
        }
        assert_eq!(parse_condition("p99 < 5ms").unwrap().limit, 5_000.0);
        assert_eq!(parse_condition("rps > 100").unwrap().limit, 100.0, "a rate needs no unit");
    }
}
