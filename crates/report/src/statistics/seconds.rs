//! [`whole_seconds`]: the seconds of a timeline that were measured whole. A measured window seldom ends on a
//! second: its last second holds only the requests of its first part (0.2 s of a 1.2 s window, or the few
//! milliseconds of answers waited for after sending stopped), and drawn beside the others as requests per second
//! it would look like a fall to zero. The per-second charts leave it out, and say so; a growing queue and a load
//! run's samples are read from the whole seconds alone.

use shootout_model::result::Second;

/// A second counts as whole when at most this much of it was not measured (the window's end is itself measured).
const SLACK_S: f64 = 0.001;

/// The whole seconds at the start of `seconds`, a timeline of a window `duration_s` long, and how much of the
/// next second was measured when some were left out (0 for a second after the window).
pub fn whole_seconds(seconds: &[Second], duration_s: f64) -> (&[Second], Option<f64>) {
    let whole = seconds.iter().take_while(|s| f64::from(s.second) + 1.0 <= duration_s + SLACK_S).count();
    let left_out = (whole < seconds.len()).then(|| (duration_s - whole as f64).clamp(0.0, 1.0));
    (&seconds[..whole], left_out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timeline(n: u32) -> Vec<Second> {
        (0..n)
            .map(|second| Second { second, requests: 100, errors: 0, p50_us: None, p99_us: None, target: 1.0 })
            .collect()
    }

    #[test]
    fn the_partial_last_second_is_left_out() {
        let t = timeline(3);
        let (whole, left_out) = whole_seconds(&t, 2.2);
        assert_eq!((whole.len(), left_out.map(|s| (s * 10.0).round())), (2, Some(2.0)), "0.2 s of the third second");
        assert_eq!(whole_seconds(&t, 3.0).0.len(), 3, "a window of whole seconds keeps them all");
        assert_eq!(whole_seconds(&t, 2.9995).0.len(), 3, "half a millisecond short is whole");
        assert_eq!(whole_seconds(&t, 2.0), (&t[..2], Some(0.0)), "a second after the window");
        assert_eq!(whole_seconds(&t, 0.5).0.len(), 0, "a window shorter than a second has no whole one");
    }
}
