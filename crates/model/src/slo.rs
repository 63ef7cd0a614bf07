//! Service-level objectives: [`Slo`], a latency or error metric that must stay below a limit, as a suite writes
//! it (`mean < 1s`, `p99 < 200ms`, `errors < 1%`).

use serde::{Deserialize, Serialize};

/// One objective: a metric that must stay below a limit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Slo {
    /// What is measured.
    pub metric: SloMetric,
    /// The limit (µs for latencies, percent for errors).
    pub limit: f64,
    /// As written.
    pub text: String,
}

/// Metrics an SLO can bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum SloMetric {
    /// Mean latency.
    Mean,
    /// A latency percentile, in tenths: 500, 900 or 990.
    Percentile(u16),
    /// Failed and HTTP-error responses, in percent of requests.
    Errors,
}

/// Reads `mean < 1s`, `p99 < 200ms`, `errors < 1%`.
pub fn parse_slo(text: &str) -> Result<Slo, String> {
    let bad =
        || format!("SLO '{text}': write it like \"mean < 1s\", \"p99 < 200ms\" (p50, p90, p99) or \"errors < 1%\"");
    let (metric, limit) = text.split_once('<').ok_or_else(bad)?;
    let (metric, limit) = (metric.trim(), limit.trim().trim_start_matches('='));
    let metric = match metric {
        "mean" => SloMetric::Mean,
        "errors" => SloMetric::Errors,
        "p50" => SloMetric::Percentile(500),
        "p90" => SloMetric::Percentile(900),
        "p99" => SloMetric::Percentile(990),
        _ => return Err(bad()),
    };
    let limit = match metric {
        SloMetric::Errors => limit.trim().trim_end_matches('%').trim().parse::<f64>().map_err(|_| bad())?,
        _ => crate::units::parse_duration(limit.trim()).map_err(|_| bad())?.as_secs_f64() * 1e6,
    };
    Ok(Slo { metric, limit, text: text.to_string() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_three_kinds() {
        assert_eq!(parse_slo("mean < 1s").unwrap().limit, 1e6);
        assert_eq!(parse_slo("p99 < 200ms").unwrap().metric, SloMetric::Percentile(990));
        assert_eq!(parse_slo("errors < 1%").unwrap().limit, 1.0);
        assert!(parse_slo("p95 < 1s").is_err());
        assert!(parse_slo("fast").is_err());
    }
}
