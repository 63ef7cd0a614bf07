//! User-facing durations: `30s`, `2m`, `1h30m`, `250ms`, or a bare number of seconds as wrk accepts; percentages
//! ([`parse_percent`]); and what a load level counts ([`level_unit`]).

use std::time::Duration;

/// Why a duration could not be read: not a duration, or longer than [`LONGEST`].
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum BadDuration {
    /// Not a duration at all.
    #[error("'{0}' is not a duration: write it like 30s, 2m, 1h or 250ms")]
    Unreadable(String),
    /// A duration past what a load, a timeout or a wait of shootout's is timed to.
    #[error("'{0}' is longer than shootout times anything: write 365d or less")]
    TooLong(String),
}

/// The longest duration shootout takes: a year. A soak test of days fits; the clocks a run adds durations to
/// (`Instant`, the kernel's timers) would overflow long before `u64::MAX` seconds.
pub const LONGEST: Duration = Duration::from_secs(365 * 24 * 3600);

/// Parses a duration written the way load-testing tools accept it. A bare number means seconds.
pub fn parse_duration(input: &str) -> Result<Duration, BadDuration> {
    let text = input.trim();
    let unreadable = || BadDuration::Unreadable(input.to_string());
    if text.is_empty() {
        return Err(unreadable());
    }
    let duration = match text.parse::<f64>() {
        Ok(secs) if secs.is_finite() && secs >= 0.0 => {
            Duration::try_from_secs_f64(secs).map_err(|_| BadDuration::TooLong(input.to_string()))?
        }
        Ok(_) => return Err(unreadable()),
        Err(_) => humantime::parse_duration(text).map_err(|e| match e {
            humantime::DurationError::NumberOverflow => BadDuration::TooLong(input.to_string()),
            _ => unreadable(),
        })?,
    };
    if duration > LONGEST {
        return Err(BadDuration::TooLong(input.to_string()));
    }
    Ok(duration)
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
        for bad in ["", "ten", "-3", "5 parsecs", "NaN", "inf"] {
            assert_eq!(parse_duration(bad), Err(BadDuration::Unreadable(bad.into())), "{bad} should be rejected");
        }
    }

    #[test]
    fn rejects_what_no_clock_of_a_run_holds_and_takes_a_year() {
        for long in ["18446744073709551615s", "1e30", "400000d", "366d", "99999999999999999999999s"] {
            assert_eq!(parse_duration(long), Err(BadDuration::TooLong(long.into())), "{long} should be too long");
        }
        assert_eq!(parse_duration("365d"), Ok(LONGEST));
        assert_eq!(parse_duration("31536000"), Ok(LONGEST));
    }
}
