//! [`whole_seconds`]: the seconds of a timeline that were measured whole. A measured window seldom ends on a
//! second: its last second holds only the requests of its first part (0.2 s of a 1.2 s window, or the few
//! milliseconds of answers waited for after sending stopped), and drawn beside the others as requests per second
//! it would look like a fall to zero. The per-second charts ([`per_second_charts`]) leave it out, and say so.

use shootout_model::result::Second;

use crate::export::charts::{line_chart, Chart, Series};

/// A second counts as whole when at most this much of it was not measured (the window's end is itself measured).
const SLACK_S: f64 = 0.001;

/// The whole seconds at the start of `seconds`, a timeline of a window `duration_s` long, and how much of the
/// next second was measured when some were left out (0 for a second after the window).
pub fn whole_seconds(seconds: &[Second], duration_s: f64) -> (&[Second], Option<f64>) {
    let whole = seconds.iter().take_while(|s| f64::from(s.second) + 1.0 <= duration_s + SLACK_S).count();
    let left_out = (whole < seconds.len()).then(|| (duration_s - whole as f64).clamp(0.0, 1.0));
    (&seconds[..whole], left_out)
}

/// The two second-by-second charts, throughput and p99 latency, of named timelines (already cut to whole
/// seconds), with `x_label` under them: each chart's SVG, or `None` when there is nothing to draw.
pub fn per_second_charts(timelines: &[(&str, &[Second])], x_label: &str) -> [Option<String>; 2] {
    let series = |f: &dyn Fn(&Second) -> Option<f64>| -> Vec<Series> {
        timelines
            .iter()
            .map(|(name, seconds)| Series {
                name: name.to_string(),
                points: seconds.iter().filter_map(|s| f(s).map(|v| (f64::from(s.second), v))).collect(),
            })
            .collect()
    };
    let chart =
        |title, y_label, log_y| Chart { title, x_label, y_label, log_x: false, log_y, limit: None, crosses: None };
    [
        line_chart(
            &chart("Throughput, second by second", "responses per second", false),
            &series(&|s| Some(s.requests as f64)),
        ),
        line_chart(
            &chart("p99 latency, second by second", "p99 latency (ms, log)", true),
            &series(&|s| s.p99_us.map(|v| v as f64 / 1000.0)),
        ),
    ]
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
