//! User-facing durations: `30s`, `2m`, `1h30m`, `250ms`, or a bare number of seconds as wrk accepts; percentages
//! ([`parse_percent`]); and what a load level counts ([`level_unit`]).

use std::time::Duration;

/// Why a duration could not be read.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("'{input}' is not a duration: write it like 30s, 2m, 1h or 250ms")]
pub struct BadDuration {
    /// What the user wrote.
    pub input: String,
}

/// Parses a duration written the way load-testing tools accept it. A bare number means seconds.
pub fn parse_duration(input: &str) -> Result<Duration, BadDuration> {
    let text = input.trim();
    let bad = || BadDuration { input: input.to_string() };
    if text.is_empty() {
        return Err(bad());
    }
    if let Ok(secs) = text.parse::<f64>() {
        return if secs.is_finite() && secs >= 0.0 { Ok(Duration::from_secs_f64(secs)) } else { Err(bad()) };
    }
    humantime::parse_duration(text).map_err(|_| bad())
}

/// Reads a percentage below 100 (`5%`, or `5`) as a fraction (0.05).
pub fn parse_percent(text: &str) -> Result<f64, String> {
    let number = text.trim().trim_end_matches('%').trim();
    match number.parse::<f64>() {
        Ok(v) if v.is_finite() && (0.0..100.0).contains(&v) => Ok(v / 100.0),
        _ => Err(format!("'{text}' is not a percentage below 100: write it like 5%")),
    }
}

/// What a load level counts: users (closed model), requests per second (open model), or arriving users per
/// second (open model of a scenario with sessions: each arrival runs one session).
pub fn level_unit(open: bool, sessions: bool) -> &'static str {
    match (open, sessions) {
        (false, _) => "users",
        (true, true) => "users/s",
        (true, false) => "req/s",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_usual_forms() {
        assert_eq!(parse_duration("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("1h30m"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse_duration("10"), Ok(Duration::from_secs(10)));
        assert_eq!(parse_duration("0.5"), Ok(Duration::from_millis(500)));
    }

    #[test]
    fn rejects_nonsense() {
        for bad in ["", "ten", "-3", "5 parsecs", "NaN"] {
            assert!(parse_duration(bad).is_err(), "{bad} should be rejected");
        }
    }
}
