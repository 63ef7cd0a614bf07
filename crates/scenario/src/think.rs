//! [`Think`]: how long a user pauses between two steps of a session.

use std::time::Duration;

/// A think time.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Think {
    /// No pause.
    None,
    /// Always this long.
    Fixed(Duration),
    /// Uniformly between the two.
    Uniform(Duration, Duration),
    /// Exponentially distributed with this mean (memoryless, like independent users).
    Exponential(Duration),
}

impl Think {
    /// Reads `2s`, `uniform(1s, 3s)` or `exponential(2s)`.
    pub fn parse(text: &str) -> Result<Think, String> {
        let text = text.trim();
        let duration = |t: &str| shootout_model::units::parse_duration(t.trim()).map_err(|e| e.to_string());
        let inner = |prefix: &str| text.strip_prefix(prefix).and_then(|rest| rest.strip_suffix(')'));
        if let Some(args) = inner("uniform(") {
            let (low, high) = args.split_once(',').ok_or("uniform needs two durations: uniform(1s, 3s)")?;
            let (low, high) = (duration(low)?, duration(high)?);
            if low > high {
                return Err("uniform(low, high) needs low <= high".into());
            }
            return Ok(Think::Uniform(low, high));
        }
        if let Some(mean) = inner("exponential(") {
            return Ok(Think::Exponential(duration(mean)?));
        }
        let fixed = duration(text)?;
        Ok(if fixed.is_zero() { Think::None } else { Think::Fixed(fixed) })
    }

    /// A pause drawn from this think time; `unit` is a uniform random number in [0, 1).
    pub fn draw(self, unit: f64) -> Duration {
        match self {
            Think::None => Duration::ZERO,
            Think::Fixed(d) => d,
            Think::Uniform(low, high) => low + (high - low).mul_f64(unit),
            Think::Exponential(mean) => mean.mul_f64(-(1.0 - unit).ln()).min(mean * 50),
        }
    }

    /// The longest pause this can give (capped at 50 means for the exponential).
    pub fn longest(self) -> Duration {
        match self {
            Think::None => Duration::ZERO,
            Think::Fixed(d) => d,
            Think::Uniform(_, high) => high,
            Think::Exponential(mean) => mean * 50,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_three_forms() {
        assert_eq!(Think::parse("2s"), Ok(Think::Fixed(Duration::from_secs(2))));
        assert_eq!(Think::parse("0s"), Ok(Think::None));
        assert_eq!(Think::parse("uniform(1s, 3s)"), Ok(Think::Uniform(Duration::from_secs(1), Duration::from_secs(3))));
        assert_eq!(Think::parse("exponential(500ms)"), Ok(Think::Exponential(Duration::from_millis(500))));
        assert!(Think::parse("uniform(3s, 1s)").is_err());
        assert!(Think::parse("soon").is_err());
    }

    #[test]
    fn draws_stay_in_range() {
        let uniform = Think::Uniform(Duration::from_secs(1), Duration::from_secs(3));
        assert_eq!(uniform.draw(0.0), Duration::from_secs(1));
        assert_eq!(uniform.draw(0.5), Duration::from_secs(2));
        let exponential = Think::Exponential(Duration::from_secs(1));
        assert!((exponential.draw(1.0 - (-1.0f64).exp()).as_secs_f64() - 1.0).abs() < 1e-9);
    }
}
